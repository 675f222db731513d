// snowdrift/seal in Node, Deno and Bun (ES modules): one file, bundled with the seal API and
// its wasm (node-wasm.mjs says why), sharing its instance with require("snowdrift/seal").
import { createSeal } from "./seal-api.mjs";
import { compileBase64, shared } from "./node-wasm.mjs";
import wasm from "./seal.wasm.mjs";

export const { Sealer } = shared("seal", () => createSeal(compileBase64(wasm)));
