// Workers that import a browser entry statically: shared by `snowdrift/browser` and
// `snowdrift/browser-lease` (`cargo xtask npm` bundles it into each).
//
// The package's wasm compiles at top level, so a worker's own module runs (and sets its
// `onmessage` / `onconnect`) only once the package has loaded; a message posted right
// after `new Worker()`, or a shared worker's first connect, arrives before that. An entry
// calls `workerEvents()` before it imports the core (dynamically: a static import would
// load the core first) and `release()` after.

/**
 * In a dedicated or shared worker: keeps the `message` / `connect` events that arrive
 * before the worker's handlers are set; `release()` dispatches them again after the
 * importing module has run (a turn of the event loop later), in order, and stops keeping.
 */
export function workerEvents() {
  const scope = globalThis;
  const { SharedWorkerGlobalScope: Shared, DedicatedWorkerGlobalScope: Dedicated } = scope;
  const shared = typeof Shared === "function" && scope instanceof Shared;
  const dedicated = typeof Dedicated === "function" && scope instanceof Dedicated;
  if (!shared && !dedicated) return undefined;
  const type = shared ? "connect" : "message";
  const handler = () => scope[`on${type}`];
  const kept = [];
  let replaying = false;
  const again = (e) =>
    new MessageEvent(type, {
      data: e.data,
      origin: e.origin,
      lastEventId: e.lastEventId,
      source: e.source,
      ports: [...e.ports],
    });
  const replay = () => {
    replaying = true;
    for (const e of kept.splice(0)) scope.dispatchEvent(again(e));
    replaying = false;
  };
  const keep = (e) => {
    if (replaying) return;
    if (!handler()) {
      kept.push(e);
      return;
    }
    // A handler is set: what was kept goes first, then this event goes on to it.
    replay();
  };
  scope.addEventListener(type, keep);
  return {
    release: () =>
      setTimeout(() => {
        scope.removeEventListener(type, keep);
        replay();
      }, 0),
  };
}
