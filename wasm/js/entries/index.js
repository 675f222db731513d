// Browsers and bundlers. Browsers compile wasm asynchronously (they refuse synchronous
// compiles of more than a few KB on the main thread), so this module awaits it once at
// top level: `import { Snowdrift } from "snowdrift"` needs no await of its own.
import { create } from "../src/api.mjs";

const url = new URL("./snowdrift.wasm", import.meta.url);
const wasm = await WebAssembly.compile(await (await fetch(url)).arrayBuffer());
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
