// Node, Deno and Bun, CommonJS: the wasm is read and compiled synchronously on load. One
// instance per version of the package, shared with the ES module entry (src/node-wasm.mjs).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { create } = require("./api.cjs");

module.exports = globalThis[Symbol.for("snowdrift @VERSION main")] ??= create(
  new WebAssembly.Module(readFileSync(join(__dirname, "snowdrift.wasm"))),
);
