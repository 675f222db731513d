// snowdrift/seal for browsers and bundlers: the seal module is compiled asynchronously
// once at top level (see index.js), apart from the default entry's module.
import { createSeal } from "../src/seal/api.mjs";

const url = new URL("./seal.wasm", import.meta.url);
const wasm = await WebAssembly.compile(await (await fetch(url)).arrayBuffer());
export const { Sealer } = createSeal(wasm);
