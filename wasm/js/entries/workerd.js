// Cloudflare Workers (workerd): the wasm arrives as a compiled WebAssembly.Module import,
// so loading is synchronous, with no fs and no compiling from bytes.
import wasm from "./snowdrift.wasm";
import { create } from "./api.mjs";

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
} = create(wasm);
