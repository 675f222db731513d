// IndexedDB calls as promises, each bounded in time: shared by `snowdrift/browser` and
// `snowdrift/browser-lease` (`cargo xtask npm` bundles it into each).

/** The result of an IndexedDB request, or its error. */
export const request = (r) =>
  new Promise((ok, fail) => {
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });

/** `promise`, or after `ms` an error saying IndexedDB did not answer `what`; `late` gets
 * what the promise gives if it settles after that (to close a connection nobody uses). */
export function within(promise, ms, what, late) {
  let timer;
  let timedOut = false;
  const timeout = new Promise((_, fail) => {
    timer = setTimeout(() => {
      timedOut = true;
      const e = new Error(
        `IndexedDB did not answer within ${ms} ms (storageTimeoutMs) ${what}; no ID is issued past what storage holds`,
      );
      fail(Object.assign(e, { timedOut: true }));
    }, ms);
  });
  promise.then(
    (v) => timedOut && late?.(v),
    () => {},
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A database a newer version of snowdrift upgraded in another tab or worker. */
export const upgradedError = () =>
  new Error(
    "IndexedDB was upgraded by a newer version of snowdrift in another tab or worker; reload this page to go on",
  );
