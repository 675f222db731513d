// `snowdrift/browser`: a generator for pages and workers that create IDs offline, its node
// id and reservation kept in the origin's storage (src/browser/), with the core's API over
// the browser entry's wasm instance (`index.js`).
import { useCore } from "../src/browser/core.mjs";
import { workerEvents } from "../src/browser/worker-events.mjs";

// In a worker, events that arrive while the package loads are kept for the handlers the
// worker's module sets (worker-events.mjs): the core is imported after.
const early = workerEvents();
const core = await import("./index.js");
useCore(core);
early?.release();
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
} = core;
export { BrowserSnowdrift, openSnowdrift } from "../src/browser/generator.mjs";
export { BROWSER_LAYOUT, collisionOdds } from "../src/browser/layout.mjs";
