// Cloudflare Workers (workerd): the wasm arrives as a compiled WebAssembly.Module import,
// so loading is synchronous, with no fs and no compiling from bytes.
import wasm from "./web/snowdrift_bg.wasm";
import { initSync } from "./web/snowdrift.js";
initSync({ module: wasm });
export { Snowdrift, ObjectId, decode, compose, toBase32, fromBase32, minIdAt, maxIdAt } from "./web/snowdrift.js";
