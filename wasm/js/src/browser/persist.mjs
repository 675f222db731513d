// Browser storage that lasts: shared by `snowdrift/browser` and `snowdrift/browser-lease`
// (`cargo xtask npm` bundles it into each).

/** Asks the browser to keep this origin's storage (unless `ask` is false): whether it will. */
export function persistence(ask) {
  const s = globalThis.navigator?.storage;
  const call = ask && typeof s?.persist === "function" ? () => s.persist() : () => s?.persisted?.() ?? false;
  try {
    return Promise.resolve(call()).then(Boolean, () => false);
  } catch {
    return Promise.resolve(false);
  }
}
