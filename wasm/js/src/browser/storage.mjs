// Where a generator's node ids and reservations persist: one record per (name, node),
// `{ node, until }`, in IndexedDB (database "snowdrift", store "nodes", key [name, node]),
// with a window's newest reservation in localStorage ("snowdrift:<name>:<node>"), written
// synchronously; localStorage alone where IndexedDB is missing or refuses to open.
import { describe } from "../check.mjs";
import { request, upgradedError, within } from "./idb.mjs";
import { iso, named } from "./layout.mjs";

const DB = "snowdrift";
const DB_VERSION = 1;
const STORE = "nodes";

/**
 * A stored reservation, checked: `{ until }` (whole Unix ms; one before the layout's epoch
 * reserves nothing), or `{ problem }`, a message saying why this node id cannot be trusted
 * and what to do. Never a value that would silently mean "no limit" or "nothing follows".
 */
function checkRecord(raw, name, node, facts) {
  if (raw === undefined || raw === null) return { until: 0 };
  const what = `the stored reservation of node ${node} (${named(name)})`;
  if (raw === LOCAL_LOST) {
    return {
      problem: `node ${node} (${named(name)}) was last held by a window, and its newest reservation in localStorage is gone (localStorage or site data cleared): this device cannot tell which IDs node ${node} issued; use another node id`,
    };
  }
  if (typeof raw !== "number" || !Number.isFinite(raw) || raw < 0) {
    return {
      problem: `${what} is ${describe(raw)}, not a time in milliseconds: this device cannot tell which IDs node ${node} issued; use another node id`,
    };
  }
  const until = Math.ceil(raw);
  if (until >= facts.lastTickMs) {
    return {
      problem: `${what} is ${iso(until)}, at or past the end of the layout's time (${iso(facts.lastMs)}): this node id may have issued the layout's last IDs and cannot issue more; use another node id`,
    };
  }
  return { until };
}

/** What a window's node id reads when IndexedDB marks it but localStorage lost its value. */
const LOCAL_LOST = Symbol("localStorage lost");

const lsKey = (name, node) => `snowdrift:${name}:${node}`;

/** localStorage if this context has a working one (windows only; not in workers). */
function localStore() {
  try {
    const ls = globalThis.localStorage;
    if (!ls) return undefined;
    const probe = "snowdrift:probe";
    ls.setItem(probe, "1");
    ls.removeItem(probe);
    return ls;
  } catch {
    return undefined; // no storage, or storage refused (quota 0, blocked)
  }
}

/** The raw `until` of a localStorage record (undefined: none; NaN: unreadable). */
function lsUntil(ls, name, node) {
  const text = ls.getItem(lsKey(name, node));
  if (text === null) return undefined;
  try {
    return JSON.parse(text)?.until ?? NaN;
  } catch {
    return NaN;
  }
}

function lsNodes(ls, name) {
  const prefix = `snowdrift:${name}:`;
  const out = [];
  for (let i = 0; i < ls.length; i++) {
    const key = ls.key(i);
    if (key?.startsWith(prefix) && /^\d{1,9}$/.test(key.slice(prefix.length)))
      out.push(Number(key.slice(prefix.length)));
  }
  return out;
}

/**
 * The database, or undefined where IndexedDB is missing or refuses to open (some private
 * modes). A database a newer version of snowdrift upgraded is an error, not a reason to
 * fall back to another store (that would split the origin's reservations in two).
 */
async function openDb(timeoutMs) {
  if (typeof indexedDB === "undefined" || indexedDB === null) return undefined;
  let open;
  try {
    open = indexedDB.open(DB, DB_VERSION);
  } catch {
    return undefined;
  }
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  let db;
  try {
    db = await within(request(open), timeoutMs, "opening its database", (late) => late.close());
  } catch (e) {
    if (e?.timedOut) throw e; // not a refusal: falling back would split the origin's storage
    if (e?.name !== "VersionError") return undefined;
    const newer = await within(request(indexedDB.open(DB)), timeoutMs, "opening its database", (late) =>
      late.close(),
    ).then(
      (db) => {
        db.close();
        return db.version;
      },
      () => "unknown",
    );
    throw new Error(
      `IndexedDB database "snowdrift" is at version ${newer}, made by a newer version of snowdrift than this page's (${DB_VERSION}); reload the page to get the newer version`,
    );
  }
  if (!db.objectStoreNames.contains(STORE)) {
    db.close();
    throw new Error(
      `IndexedDB database "snowdrift" has no "${STORE}" store: another script of this origin made a database of that name`,
    );
  }
  return db;
}

/**
 * The storage a generator uses. `list` and `read` give checked records (`checkRecord`)
 * with `window`: whether a window held the node id last without handing it back (its
 * newest reservation may then be in localStorage only). `window` is true where this
 * context has localStorage: its reservations are written there, synchronously
 * (`write`), and IndexedDB gets the node id marked as a window's (`hold`) until
 * `handBack` copies the final reservation there. Without localStorage (workers),
 * `write` goes to IndexedDB and is confirmed when its promise resolves (the transaction
 * is durable).
 */
export async function openStorage(which, facts, timeoutMs) {
  const ls = localStore();
  const db = await openDb(timeoutMs);
  const check = (name, node, raw, window = false) => ({ node, window, ...checkRecord(raw, name, node, facts) });
  const lsWrite = (name, node, until) => ls.setItem(lsKey(name, node), JSON.stringify({ until }));
  if (db) {
    let upgraded = false;
    let current = db; // undefined once the database was deleted under this generator
    let last; // the newest record this generator put: put again into a re-made database
    // A newer version asks for the database: let go of it (nothing issued depends on a
    // write still to come), and say why where a later write fails. A deletion (site data
    // cleared, or deleteDatabase): let go too, and make it again at the next write.
    const watch = (d) => {
      const lost = () => {
        if (current !== d || closed) return;
        current = undefined;
        // Make the database again at once with this generator's record, so a reload or
        // another tab finds this node id (a failure here is retried by the next write).
        setTimeout(() => connection().catch(() => {}), 0);
      };
      d.onversionchange = (e) => {
        d.close();
        if (e.newVersion === null) lost();
        else upgraded = true;
      };
      d.onclose = lost; // closed by the browser (site data cleared)
    };
    watch(db);
    let closed = false;
    let opening; // the database being opened again, if it is
    const reopen = async () => {
      const d = await openDb(timeoutMs);
      if (!d) throw new Error("IndexedDB no longer opens (site data cleared?)");
      if (closed) {
        d.close();
        throw new Error("this snowdrift/browser generator is closed");
      }
      watch(d);
      current = d;
      // The record this generator holds goes back in first: whoever reads the re-made
      // database finds this node id and a reservation at or past every ID it issued.
      if (last) await within(putOnce(d, last), timeoutMs, "writing a reservation");
      return d;
    };
    const connection = () => {
      if (upgraded) return Promise.reject(upgradedError());
      if (current) return Promise.resolve(current);
      opening ??= reopen().finally(() => {
        opening = undefined;
      });
      return opening;
    };
    const tx = async (mode) => {
      for (let attempt = 0; ; attempt++) {
        const d = await connection();
        try {
          return d.transaction(STORE, mode, { durability: "strict" }).objectStore(STORE);
        } catch (e) {
          // "The database connection is closing": deleted or closed under us; open again once.
          if (e?.name !== "InvalidStateError" || attempt > 0 || upgraded) throw upgraded ? upgradedError() : e;
          if (current === d) current = undefined;
        }
      }
    };
    const range = (name) => IDBKeyRange.bound([name, -Infinity], [name, Infinity]);
    // A window's newest reservation is in localStorage while IndexedDB marks its node id; a
    // mark with no localStorage value means localStorage was cleared after the window
    // wrote it: what that window issued last is unknown, so the node id is not trusted.
    // Otherwise the larger valid time wins.
    const both = (name, node, r) => {
      const local = ls && lsUntil(ls, name, node);
      if (ls && local === undefined && r?.window === true) return LOCAL_LOST;
      const raw = r?.until;
      return local === undefined || (typeof raw === "number" && raw >= local) ? raw : local;
    };
    const putOnce = (d, rec) =>
      new Promise((ok, fail) => {
        const store = d.transaction(STORE, "readwrite", { durability: "strict" }).objectStore(STORE);
        store.transaction.oncomplete = () => ok();
        store.transaction.onerror = store.transaction.onabort = () =>
          fail(upgraded ? upgradedError() : store.transaction.error);
        store.put({ node: rec.node, until: rec.until, window: rec.window }, [rec.name, rec.node]);
      });
    const put = async (name, node, until, window) => {
      const rec = { name, node, until, window };
      for (let attempt = 0; ; attempt++) {
        const d = await connection();
        try {
          await within(putOnce(d, rec), timeoutMs, "writing a reservation");
          last = rec;
          return;
        } catch (e) {
          // Closed under the write (deleted, site data cleared): once more on a new
          // connection. Anything else (quota, an upgrade) as it is.
          const closed = current !== d || ["InvalidStateError", "AbortError", "UnknownError"].includes(e?.name);
          if (upgraded || attempt > 0 || !closed) throw e;
          if (current === d) {
            current = undefined;
            d.close();
          }
        }
      }
    };
    return {
      kind: "indexeddb",
      window: Boolean(ls),
      list: async (name) => {
        const all = within(request((await tx("readonly")).getAll(range(name))), timeoutMs, "reading node ids");
        const rows = new Map((await all).map((r) => [r.node, r]));
        const nodes = new Set([...rows.keys(), ...(ls ? lsNodes(ls, name) : [])]);
        return [...nodes]
          .filter(Number.isSafeInteger)
          .map((n) => check(name, n, both(name, n, rows.get(n)), rows.get(n)?.window === true));
      },
      read: async (name, node) => {
        const r = await within(request((await tx("readonly")).get([name, node])), timeoutMs, "reading a reservation");
        return check(name, node, both(name, node, r), r?.window === true);
      },
      hold: async (name, node, until) => {
        // localStorage first: a mark in IndexedDB never stands without its value.
        if (ls) lsWrite(name, node, until);
        await put(name, node, until, Boolean(ls));
      },
      write: ls ? lsWrite : (name, node, until) => put(name, node, until, false),
      handBack: ls
        ? async (name, node, until) => {
            await put(name, node, until, false);
            // IndexedDB holds it now: a stale copy in localStorage must not outlive a
            // later holder's (a worker's) progress if IndexedDB is cleared alone.
            ls.removeItem(lsKey(name, node));
          }
        : async () => {},
      close: () => {
        closed = true;
        current?.close();
      },
    };
  }
  if (which === "indexeddb") throw new Error('IndexedDB is not available in this context (storage: "indexeddb")');
  if (!ls) {
    throw new Error(
      "snowdrift/browser needs IndexedDB (or, in a window, localStorage) to remember its node id and reservation; neither is available in this context",
    );
  }
  // Only localStorage: workers cannot open a generator at all, so every context that can
  // hold a node id reads this one store.
  return {
    kind: "localstorage",
    window: true,
    list: async (name) => lsNodes(ls, name).map((n) => check(name, n, lsUntil(ls, name, n))),
    read: async (name, node) => check(name, node, lsUntil(ls, name, node)),
    hold: async (name, node, until) => lsWrite(name, node, until),
    write: lsWrite,
    handBack: async () => {},
    close() {},
  };
}
