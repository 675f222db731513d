// snowdrift/seal in Node, Deno and Bun (CommonJS): the seal module, read and compiled
// synchronously on load.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createSeal } = require("./seal-api.cjs");

module.exports = createSeal(new WebAssembly.Module(readFileSync(join(__dirname, "seal.wasm"))));
