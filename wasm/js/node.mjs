// Node, Deno and Bun, ES modules: one file, bundled with the API and the wasm (node-wasm.mjs
// says why), sharing its instance with require("snowdrift").
import { create } from "./api.mjs";
import { compileBase64, shared } from "./node-wasm.mjs";
import wasm from "./snowdrift.wasm.mjs";

export const { Snowdrift, ObjectId, decode, compose, toBase32, fromBase32, parseId, minIdAt, maxIdAt, layoutInfo } =
  shared("main", () => create(compileBase64(wasm)));
