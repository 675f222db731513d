// snowdrift/seal in Node, Deno and Bun (CommonJS): the seal module, read and compiled
// synchronously on load. One instance per version of the package, shared with the ES module entry
// (src/node-wasm.mjs).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createSeal } = require("./seal-api.cjs");

module.exports = globalThis[Symbol.for("snowdrift @VERSION seal")] ??= createSeal(
  new WebAssembly.Module(readFileSync(join(__dirname, "seal.wasm"))),
);
