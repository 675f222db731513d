// `snowdrift/browser`: a generator for pages and workers that create IDs offline, its node
// id and reservation kept in the origin's storage (src/browser/), with the core's API over
// the browser entry's wasm instance (`index.js`).
export * from "../src/browser/browser.js";
