// The package's core API that snowdrift/browser builds on (`Snowdrift`, `decode`,
// `layoutInfo`, `maxIdAt`), set once by the entry (`useCore`) after it imports the browser
// entry: a worker's early events are held before the core loads (worker-events.mjs).
export let Snowdrift, decode, layoutInfo, maxIdAt;

/** Sets the core this folder's modules use: the browser entry's exports. */
export function useCore(api) {
  ({ Snowdrift, decode, layoutInfo, maxIdAt } = api);
}
