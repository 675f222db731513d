// Node, Deno and Bun, ES modules: one file, bundled with the API and the wasm (src/node-wasm.mjs
// says why), sharing its instance with require("snowdrift").
import { create } from "../src/api.mjs";
import { compileBase64, shared } from "../src/node-wasm.mjs";
import wasm from "../src/snowdrift.wasm.mjs";

export const {
  Snowdrift,
  ObjectId,
  decode,
  compose,
  toBase32,
  fromBase32,
  parseId,
  minIdAt,
  maxIdAt,
  layoutInfo,
  errorCodes,
} = shared("main", () => create(compileBase64(wasm)));
