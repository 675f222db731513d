// Node, Deno and Bun, CommonJS: the wasm is read and compiled synchronously on load.
module.exports = require("./node/snowdrift.js");
