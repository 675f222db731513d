// Node CommonJS: `require("snowdrift")` is synchronous.
const snowdrift = require("snowdrift");
import("./smoke.mjs").then(({ smoke }) => {
  console.log(JSON.stringify(smoke(snowdrift, "node-cjs")));
});
