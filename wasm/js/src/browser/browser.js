// snowdrift/browser: a generator for pages and workers that create IDs offline. Its node
// id and a reservation (IDs up to this Unix ms may have been issued) persist in the
// origin's storage, so a reload, even with the clock set back, never repeats an ID.
//
// - Storage: IndexedDB (database "snowdrift", store "nodes", key [name, node]) keeps
//   each node id and its reservation; windows also keep the reservation in localStorage
//   ("snowdrift:<name>:<node>"), which they write synchronously. Where IndexedDB is
//   missing or refuses to open, localStorage alone (workers, which have no localStorage,
//   then cannot open a generator at all).
// - Never past what storage holds: a generator issues no ID past the reservation its
//   storage has confirmed (the reservation is the core's fence, `setFenceMs`). It is
//   renewed (now + `reserveMs`) when IDs come within half of it: in a window at once, in
//   localStorage; in a worker in the background, in IndexedDB, also ahead of the clock
//   between calls, and a call that reaches the fence before a write lands throws.
// - Handing on: whoever takes a node id next reads a reservation at or above every ID
//   issued under it, even after a crash or a closed tab. IndexedDB marks a node id a
//   window holds; workers (which cannot read localStorage) skip it until a window's
//   close() copies the final reservation to IndexedDB and clears the mark.
// - Tabs and workers: each holds its own node id, claimed with a Web Lock
//   ("snowdrift:<name>:<node>") for as long as it runs; the browser releases the lock when
//   the tab or worker goes away, and the next one to open reuses that node id.
//
// Built on the package's public API only (Snowdrift, decode, layoutInfo, maxIdAt).
import {
  boolArg,
  describe,
  intArg,
  numberRefused,
  oneOf,
  optInt,
  options as checkOptions,
  strArg,
  wrongType,
  pastFence,
} from "../check.mjs";
import { request, upgradedError, within } from "./idb.mjs";
import { persistence } from "./persist.mjs";
import { workerEvents } from "./worker-events.mjs";

// In a worker, events that arrive while the package loads are kept for the handlers the
// worker's module sets (worker-events.mjs): the core is imported after.
const early = workerEvents();
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
} = await import("./index.js");
early?.release();

const MAX_U32 = 4294967295;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const DB = "snowdrift";
const DB_VERSION = 1;
const STORE = "nodes";
// How long a caller may take between a refused call, `await generator.ready` and the call again.
const RETRY_MARGIN_MS = 1000;
const OPTIONS = [
  "name",
  "layout",
  "node",
  "maxNodes",
  "reserveMs",
  "maxAheadMs",
  "storage",
  "persist",
  "storageTimeoutMs",
];

/**
 * A layout for many devices that pick node ids at random: 41-bit milliseconds since
 * 2024-01-01 (until 2093), a 16-bit node (65,536 ids), a 6-bit sequence (64 IDs per ms,
 * 64,000 per second per tab). 63 bits: fits a signed 64-bit integer.
 */
export const BROWSER_LAYOUT = Object.freeze({
  timeBits: 41,
  nodeBits: 16,
  sequenceBits: 6,
  unitMs: 1,
  epochMs: 1704067200000,
});

const named = (name) => `name ${describe(name)}`;

/** A Unix ms as a date, or as a number where Date cannot show it. */
const iso = (ms) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`);

/** The clock in whole milliseconds, rounded up (a reservation from it is never short). */
function clockMs() {
  const t = Date.now();
  return Number.isFinite(t) ? Math.min(Math.max(Math.ceil(t), 0), MAX_SAFE) : 0;
}

/** Facts of a layout, from the core (`layoutInfo`): epoch, tick length, IDs per tick,
 * largest node id, the start of its last tick and `lastMs`, that tick's last millisecond. */
function layoutFacts(layout) {
  const info = layoutInfo(layout); // also validates the layout
  return {
    epochMs: info.epochMs,
    unitMs: info.unitMs,
    perTick: info.maxSequence + 1,
    maxNode: info.maxNode,
    lastTickMs: info.lastTickMs,
    bits: info.totalBits,
    lastMs: Math.min(info.exhaustsAtMs - 1, MAX_SAFE),
  };
}

/**
 * The chance that at least two of `devices` node ids drawn at random for `layout` are the
 * same (the birthday problem over the layout's node ids). Two devices that share a node id
 * make the same ID only when both issue one in the same tick with the same sequence number,
 * so this is the chance that duplicates are possible at all.
 */
export function collisionOdds(devices, layout = "default") {
  intArg("devices", devices, 0, Number.MAX_SAFE_INTEGER);
  const ids = layoutFacts(layout).maxNode + 1;
  if (devices > ids) return 1;
  if (devices > 1e7) return 1 - Math.exp((-devices * (devices - 1)) / (2 * ids));
  let logNone = 0; // log of the chance that all are distinct
  for (let i = 1; i < devices; i++) logNone += Math.log1p(-i / ids);
  return 0 - Math.expm1(logNone); // 0, not -0, for one device
}

/** A uniform random integer in 0..n-1 (n <= 2^53), from crypto.getRandomValues. */
function randomBelow(n) {
  const words = new Uint32Array(2);
  const limit = 2 ** 53 - (2 ** 53 % n);
  for (let i = 0; i < 64; i++) {
    crypto.getRandomValues(words);
    const x = (words[0] & 0x1fffff) * 2 ** 32 + words[1];
    if (x < limit) return x % n;
  }
  throw new Error("crypto.getRandomValues gave no usable number in 64 draws");
}

// ---- stored reservations: one record per (name, node): { node, until } ----

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
async function openStorage(which, facts, timeoutMs) {
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

// ---- node ids: one Web Lock per node id in use ----

/** Takes the lock if no one holds it: its release function, or null. */
function tryLock(name) {
  return new Promise((resolve, reject) => {
    navigator.locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (!lock) return resolve(null);
        return new Promise((release) => resolve(release));
      })
      .catch(reject);
  });
}

/** What the app's node function returned: a node id, or `{ node, resumeAfter }`. */
function nodeResult(r, maxNode) {
  if (typeof r === "object" && r !== null) {
    checkOptions("node function's result", r, ["node", "resumeAfter"]);
    const resumeAfter = r.resumeAfter;
    if (resumeAfter !== undefined && !["bigint", "string", "number"].includes(typeof resumeAfter)) {
      throw wrongType("the node function's resumeAfter", "an ID (a bigint, a decimal string or a number)", resumeAfter);
    }
    return { node: intArg("the node function's node", r.node, 0, maxNode), resumeAfter };
  }
  return { node: intArg("the node function's result", r, 0, maxNode) };
}

/** Why a context without localStorage (a worker) cannot take node `node`, if it cannot. */
const windowsOnly = (storage, record, name) =>
  !storage.window && record.window
    ? `node ${record.node} (${named(name)}) was last held by a window, which keeps its newest reservation in localStorage, where workers cannot read it: open it in a window (close() there hands it back to workers), or give this worker another node id`
    : undefined;

async function claimNode(storage, name, node, facts, maxNodes) {
  const lockName = (n) => `snowdrift:${name}:${n}`;
  if (typeof node === "number") {
    const release = await tryLock(lockName(node));
    if (!release) {
      throw new Error(
        `node ${node} is in use by another tab or worker of this origin (${named(name)}); give each its own node id, or leave node out to have them chosen`,
      );
    }
    return { node, release };
  }
  // This device's node ids: reuse one no other tab or worker holds. A record that cannot
  // be trusted (see checkRecord), or that a worker cannot read in full, is skipped, and
  // its node id never drawn again.
  const records = (await storage.list(name)).filter((r) => r.node <= facts.maxNode);
  const usable = records
    .filter((r) => r.problem === undefined && !windowsOnly(storage, r, name))
    .sort((a, b) => a.node - b.node);
  for (const r of usable) {
    const release = await tryLock(lockName(r.node));
    if (release) return { node: r.node, release };
  }
  if (usable.length >= maxNodes) {
    throw new Error(
      `all ${maxNodes} node ids of this origin (${named(name)}) are in use by other tabs or workers (maxNodes ${maxNodes})`,
    );
  }
  const known = records.map((r) => r.node);
  for (let attempt = 0; attempt < 16; attempt++) {
    let claim;
    if (node === undefined) {
      if (known.length > facts.maxNode) break;
      let n;
      do n = randomBelow(facts.maxNode + 1);
      while (known.includes(n));
      claim = { node: n };
    } else {
      claim = nodeResult(await node(), facts.maxNode);
      if (known.includes(claim.node)) {
        throw new RangeError(`the node function returned ${claim.node}, a node id this device already has`);
      }
    }
    const release = await tryLock(lockName(claim.node));
    if (release) return { ...claim, release };
    // Another tab of this device drew the same one a moment ago: draw again.
    known.push(claim.node);
  }
  throw new Error(`no free node id found for ${named(name)}`);
}

/**
 * `await openSnowdrift({ name, layout, node, maxNodes, reserveMs, maxAheadMs, storage, persist })`:
 * a generator whose IDs stay above every ID this origin issued under `name`, across
 * reloads, clock steps back, tabs and workers.
 */
export async function openSnowdrift(options) {
  options = checkOptions("openSnowdrift", options, OPTIONS);
  const { name = "snowdrift", layout = "default", node, storage: which = "auto", persist = true } = options;
  if (strArg("name", name) === "") throw new RangeError("name must not be empty");
  oneOf("storage", which, ["auto", "indexeddb"]);
  boolArg("persist", persist);
  const facts = layoutFacts(layout);
  if (node !== undefined && typeof node !== "function") intArg("node", node, 0, facts.maxNode);
  const maxNodes = optInt(options, "maxNodes", 1, 1024, 16);
  const reserveMs = Math.max(optInt(options, "reserveMs", 1, 86_400_000, 2000), 2 * facts.unitMs);
  const maxAheadMs = optInt(options, "maxAheadMs", 0, MAX_U32, MAX_U32);
  const storageTimeoutMs = optInt(options, "storageTimeoutMs", 1, 600_000, 10_000);
  if (!globalThis.navigator?.locks) {
    throw new Error(
      "snowdrift/browser needs the Web Locks API (navigator.locks) to give each tab and worker its own node id; browsers offer it on https:// pages and on http://localhost, not on other plain http:// pages",
    );
  }
  const now = clockMs();
  if (now > facts.lastMs) {
    throw new RangeError(
      `the clock reads ${iso(now)}, past the end of the layout's time (${iso(facts.lastMs)}): no ID can be made; set the clock right`,
    );
  }

  const storage = await openStorage(which, facts, storageTimeoutMs);
  let claimed;
  try {
    claimed = await claimNode(storage, name, node, facts, maxNodes);
    const record = await storage.read(name, claimed.node);
    const refused = record.problem ?? windowsOnly(storage, record, name);
    if (refused) throw new Error(refused);
    // Never below the reservation of the last run on this node id (a time before the
    // epoch reserves nothing), nor below the ID the app says this node id reached.
    let reserved = record.until >= facts.epochMs ? record.until : -1;
    let resumeAfter = reserved >= 0 ? maxIdAt(reserved, layout) : undefined;
    if (claimed.resumeAfter !== undefined) {
      const parts = decode(claimed.resumeAfter, layout);
      const id = BigInt(claimed.resumeAfter);
      if (resumeAfter === undefined || id > resumeAfter) resumeAfter = id;
      reserved = Math.max(reserved, parts.timeMs + facts.unitMs - 1);
    }
    if (reserved >= facts.lastTickMs) {
      throw new Error(
        `node ${claimed.node} (${named(name)}) has issued IDs up to the layout's last tick (${iso(facts.lastMs)}): it cannot issue more; use another node id`,
      );
    }
    if (options.maxAheadMs !== undefined && reserved - now > maxAheadMs) {
      const ahead = Math.ceil((reserved - now) / 1000).toLocaleString("en-US");
      throw new Error(
        `node ${claimed.node} (${named(name)}) has IDs reserved up to ${iso(reserved)}, ${ahead} s ahead of the clock (maxAheadMs ${maxAheadMs}): it can issue again from ${iso(reserved - maxAheadMs)}, or use another node id`,
      );
    }
    const first = Math.min(Math.max(now, reserved + facts.unitMs) + reserveMs, facts.lastMs);
    await storage.hold(name, claimed.node, first);
    const gen = new Snowdrift({ layout, node: claimed.node, onClockBackwards: "borrow", maxAheadMs, resumeAfter });
    return new BrowserSnowdrift(gen, {
      storage,
      name,
      layout,
      facts,
      reserveMs,
      release: claimed.release,
      until: first,
      persisted: persistence(persist),
    });
  } catch (e) {
    claimed?.release();
    storage.close();
    throw e;
  }
}

const closedError = () => new Error("this snowdrift/browser generator is closed");
const CLOSED = {
  next: () => {
    throw closedError();
  },
  nextBatch: () => {
    throw closedError();
  },
  decode: () => {
    throw closedError();
  },
  free() {},
  issuedThroughMs: 0,
};

/** A generator from `openSnowdrift`: `next()` and `nextBatch()` are synchronous. */
export class BrowserSnowdrift {
  #gen;
  #s;
  #node;
  #until; // the reservation storage has confirmed: every ID issued has a time at or below it
  #soft; // past this ID, renew the reservation in the background
  #pending; // the renewal being written, if any
  #again = -1; // a renewal asked for while one was written: the extra span it needs (ms)
  #failure; // why the last renewal failed
  #timer; // in a worker: keeps the reservation ahead of the clock between calls

  constructor(gen, state) {
    this.#gen = gen;
    this.#s = state;
    this.#node = gen.node;
    this.#reserved(state.until);
    if (!state.storage.window) {
      // A write takes a turn of the event loop, so a worker renews ahead of the clock, not
      // only ahead of its IDs: a call after a pause then finds its time reserved. Each
      // check renews if less than half the reservation would be left at the next one, so
      // a write always has at least that half to land, whenever the timer fires.
      const half = Math.floor(state.reserveMs / 2);
      const every = Math.max(half, 50);
      this.#timer = setInterval(() => {
        if (clockMs() + every + half >= this.#until) this.#renew(0);
      }, every);
    }
  }

  /** Storage confirmed a reservation up to `until`: IDs may now reach it, and no further. */
  #reserved(until) {
    const { layout, facts, reserveMs } = this.#s;
    this.#until = until;
    this.#gen.setFenceMs(until + 1);
    const soft = Math.min(until - Math.floor(reserveMs / 2), facts.lastMs);
    this.#soft = soft >= facts.epochMs ? maxIdAt(soft, layout) : -1n;
  }

  /** The next ID. */
  next() {
    let id;
    try {
      id = this.#gen.next();
    } catch (e) {
      id = this.#retry(e, 1, () => this.#gen.next());
    }
    if (id > this.#soft) this.#renew(0);
    return id;
  }

  /** The next ID as a decimal string (safe in JSON). */
  nextString() {
    return String(this.next());
  }

  /** The next ID as a Number, on a layout of at most 53 bits; on a wider one a
   * RangeError, and no ID is issued. */
  nextNumber() {
    const { bits } = this.#s.facts;
    if (bits > 53) throw numberRefused(bits);
    return Number(this.next());
  }

  /** `n` (1 to 1,048,576) increasing IDs. */
  nextBatch(n) {
    let ids;
    try {
      ids = this.#gen.nextBatch(n);
    } catch (e) {
      ids = this.#retry(e, n, () => this.#gen.nextBatch(n));
    }
    if (ids[ids.length - 1] > this.#soft) this.#renew(0);
    return ids;
  }

  /**
   * A call of `n` IDs failed with `e`. At the reservation's end: renew it (far enough for
   * the call) and, in a window (localStorage is synchronous), call again; else an error
   * saying why and what to do. Any other error as it is.
   */
  #retry(e, n, call) {
    if (this.#gen === CLOSED || !pastFence(e)) throw e;
    const { facts, storage } = this.#s;
    // Far enough for the call, and (in a worker) for a second more while the caller awaits
    // `ready` and calls again: the clock goes on meanwhile.
    const span = Math.ceil(n / facts.perTick) * facts.unitMs;
    this.#renew(storage.window ? span : span + RETRY_MARGIN_MS);
    if (storage.window && !this.#failure) {
      try {
        return call();
      } catch (again) {
        if (!pastFence(again)) throw again;
        // Still past it: the reservation cannot grow (the layout's end).
      }
    }
    const where = storage.window ? "localStorage" : "IndexedDB";
    throw new Error(
      this.#failure
        ? `IDs reached the end of the reservation stored in ${where} (${iso(this.#until)}): it could not be renewed (${this.#failure}); no ID is issued past what storage holds`
        : `IDs reached the end of the reservation stored in ${where} (${iso(this.#until)}) before it could be renewed; await generator.ready, then call again`,
    );
  }

  /**
   * Writes a reservation `span` ms beyond the newest ID (and the clock) plus `reserveMs`;
   * one write at a time, the next one right after if IDs went on meanwhile.
   */
  #renew(span) {
    if (this.#pending) {
      this.#again = Math.max(this.#again, span);
      return;
    }
    const { storage, name, reserveMs, facts } = this.#s;
    const newest = Math.max(clockMs(), this.#gen.issuedThroughMs);
    const until = Math.min(newest + span + reserveMs, facts.lastMs);
    if (until <= this.#until) return;
    const done = () => {
      this.#failure = undefined;
      if (this.#gen !== CLOSED && until > this.#until) this.#reserved(until);
    };
    const failed = (e) => {
      this.#failure = e?.name && e?.message ? `${e.name}: ${e.message}` : String(e?.message ?? e);
    };
    if (storage.window) {
      try {
        storage.write(name, this.#node, until);
        done();
      } catch (e) {
        failed(e);
      }
      return;
    }
    this.#pending = storage
      .write(name, this.#node, until)
      .then(done, failed)
      .finally(() => {
        this.#pending = undefined;
        const again = this.#again;
        this.#again = -1;
        if (this.#gen === CLOSED || this.#failure) return;
        // IDs went on while it was written: keep ahead of them.
        const soft = this.#until - Math.floor(reserveMs / 2);
        if (again >= 0 || this.#gen.issuedThroughMs > soft) this.#renew(Math.max(again, 0));
      });
  }

  /** Resolves when no reservation write is in progress. */
  get ready() {
    return this.#pending ? this.#pending.then(() => this.ready) : Promise.resolve();
  }

  /** Resolves to whether the browser keeps this origin's storage until the user clears it
   * (`navigator.storage.persist()`, asked on open unless `persist: false`). */
  get persisted() {
    return this.#s.persisted;
  }

  /** The parts of an ID of this generator's layout. */
  decode(id) {
    return this.#gen.decode(id);
  }

  /** This generator's node id (its own: no other tab or worker of the origin uses it now). */
  get node() {
    return this.#node;
  }

  /** The name given to openSnowdrift. */
  get name() {
    return this.#s.name;
  }

  /** "indexeddb" or "localstorage". */
  get storage() {
    return this.#s.storage.kind;
  }

  /** Unix ms up to which storage holds the reservation: no ID issued has a later time. */
  get reservedUntil() {
    return this.#until;
  }

  /**
   * Finishes the pending write, frees the generator and releases its node id for other
   * tabs and workers. A window first copies its reservation from localStorage to
   * IndexedDB, so workers can take the node id too.
   */
  async close() {
    if (this.#gen === CLOSED) return;
    const gen = this.#gen;
    this.#gen = CLOSED;
    gen.free();
    clearInterval(this.#timer);
    await this.ready;
    const { storage, name, release } = this.#s;
    // If it fails, the node id stays marked as a window's: workers skip it, windows read
    // localStorage, so nothing can repeat.
    await storage.handBack(name, this.#node, this.#until).catch(() => {});
    release();
    storage.close();
  }
}
Object.defineProperty(BrowserSnowdrift, "name", { value: "BrowserSnowdrift" });
