// `snowdrift/browser-lease`: a browser's generator under a node id leased from an HTTP
// lease store (src/lease/browser.js), over the browser entry's wasm instance (`index.js`).
export { openLeased, LeasedSnowdrift } from "../src/lease/browser.js";
