// Node, Deno and Bun, CommonJS: the wasm is read and compiled synchronously on load.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { create } = require("./api.cjs");

const wasm = new WebAssembly.Module(readFileSync(join(__dirname, "snowdrift.wasm")));
module.exports = create(wasm);
