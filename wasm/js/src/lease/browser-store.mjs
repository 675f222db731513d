// Where snowdrift/browser-lease keeps its lease: one IndexedDB record per name (database
// "snowdrift-lease", store "leases", key: the name), shared by the origin's tabs and
// workers, read and written under one Web Lock ("snowdrift-lease:<name>").
import { request, upgradedError, within } from "../browser/idb.mjs";

const DB = "snowdrift-lease";
const STORE = "leases";

const closedError = () => new Error("this snowdrift/browser-lease generator is closed");

/** The lease database, opened (an error where IndexedDB is missing). */
export async function openDb(timeoutMs) {
  if (typeof indexedDB === "undefined" || indexedDB === null) {
    throw new Error("snowdrift/browser-lease needs IndexedDB to keep its lease; it is not available in this context");
  }
  const open = indexedDB.open(DB, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  return within(request(open), timeoutMs, "opening its database", (late) => late.close());
}

/** `body()` under the Web Lock `lock`; once more from the start if the database was lost
 * under it (its next read then finds no lease). */
export function locked(lock, body) {
  return navigator.locks.request(lock, async () => {
    try {
      return await body();
    } catch (e) {
      if (!e?.lost) throw e;
      return body();
    }
  });
}

/**
 * The lease database of one generator, opened with `db`. `store(mode, call, what)` runs
 * one transaction on the store (writes are durable when it resolves), bounded by
 * `timeoutMs`. A deletion (site data cleared, `deleteDatabase` elsewhere) closes the
 * connection at once, so it never blocks; the next call opens the database again, and
 * finds no lease in it. A call the loss cut short rejects with `lost` set: the caller
 * starts over from its read (`locked`), not from a write of what it read before.
 */
export function leaseDb(db, timeoutMs) {
  let current = db; // undefined once the database was deleted or closed under this generator
  let opening; // the database being opened again, if it is
  let upgraded = false;
  let closed = false;
  const watch = (d) => {
    const lost = () => {
      if (current === d) current = undefined;
    };
    d.onversionchange = (e) => {
      d.close();
      lost();
      if (e.newVersion !== null) upgraded = true;
    };
    d.onclose = lost; // closed by the browser (site data cleared)
  };
  watch(db);
  const connection = () => {
    if (upgraded) return Promise.reject(upgradedError());
    if (closed) return Promise.reject(closedError());
    if (current) return Promise.resolve(current);
    opening ??= openDb(timeoutMs)
      .then((d) => {
        if (closed) {
          d.close();
          throw closedError();
        }
        watch(d);
        current = d;
        return d;
      })
      .finally(() => {
        opening = undefined;
      });
    return opening;
  };
  const once = (d, mode, call) =>
    new Promise((ok, fail) => {
      const tx = d.transaction(STORE, mode, { durability: "strict" });
      const r = call(tx.objectStore(STORE));
      tx.oncomplete = () => ok(r.result);
      tx.onerror = tx.onabort = () => fail(tx.error);
    });
  return {
    async store(mode, call, what) {
      const d = await connection();
      try {
        return await within(once(d, mode, call), timeoutMs, what);
      } catch (e) {
        // "The database connection is closing", or the transaction aborted by the loss.
        // Anything else (quota, a timeout) as it is.
        const cut = current !== d || ["InvalidStateError", "AbortError", "UnknownError"].includes(e?.name);
        if (e?.timedOut || upgraded || closed || !cut) throw e;
        if (current === d) {
          current = undefined;
          d.close();
        }
        throw Object.assign(new Error(`IndexedDB was closed under this generator ${what} (${e?.message})`), {
          lost: true,
        });
      }
    },
    close() {
      closed = true;
      current?.close();
      current = undefined;
    },
  };
}
