// Browsers and bundlers. Compiling wasm is asynchronous here (browsers refuse large
// synchronous compiles on the main thread), so this module awaits it once at top level:
// `import { Snowdrift } from "snowdrift"` needs no await of its own.
import init from "./web/snowdrift.js";
await init({ module_or_path: new URL("./web/snowdrift_bg.wasm", import.meta.url) });
export { Snowdrift, ObjectId, decode, compose, toBase32, fromBase32, minIdAt, maxIdAt } from "./web/snowdrift.js";
