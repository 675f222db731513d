// snowdrift/seal in Node, Deno and Bun (ES modules): one file, bundled with the seal API and
// its wasm (src/node-wasm.mjs says why), sharing its instance with require("snowdrift/seal").
import { createSeal } from "../src/seal/api.mjs";
import { compileBase64, shared } from "../src/node-wasm.mjs";
import wasm from "../src/seal.wasm.mjs";

export const { Sealer } = shared("seal", () => createSeal(compileBase64(wasm)));
