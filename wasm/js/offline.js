// snowdrift/browser: a generator for pages and workers that create IDs offline. Its node
// id and a reservation (IDs up to this Unix ms may have been issued) persist in the
// origin's storage, so a reload, even with the clock set back, never repeats an ID.
//
// - Storage: IndexedDB (database "snowdrift", store "nodes", key [name, node]); where
//   IndexedDB is missing or refuses to open, localStorage ("snowdrift:<name>:<node>").
// - Persisting ahead: before IDs reach a time, a reservation past it is written (now +
//   `reserveMs`), renewed in the background when IDs come within half of it; `next()`
//   never waits for storage. On open, the generator resumes after the reservation.
// - Tabs and workers: each holds its own node id, claimed with a Web Lock
//   ("snowdrift:<name>:<node>") for as long as it runs; the browser releases the lock when
//   the tab or worker goes away, and the next one to open reuses that node id.
//
// Built on the package's public API only (Snowdrift, decode, maxIdAt).
import { Snowdrift, decode, maxIdAt } from "./browser.js";

export * from "./browser.js";

const MAX_ID = 0xffffffffffffffffn;
const MAX_U32 = 4294967295;
const DB = "snowdrift";
const STORE = "nodes";
const OPTIONS = ["name", "layout", "node", "maxNodes", "reserveMs", "maxAheadMs", "storage"];

/**
 * A layout for many devices that pick node ids at random: 41-bit milliseconds since
 * 2024-01-01 (until 2093), a 16-bit node (65,536 ids), a 6-bit sequence (64 IDs per ms,
 * 64,000 per second per tab). 63 bits: fits a signed 64-bit integer.
 */
export const BROWSER_LAYOUT = Object.freeze({
  timeBits: 41, nodeBits: 16, sequenceBits: 6, unitMs: 1, epochMs: 1704067200000,
});

const describe = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

function intOption(what, v, min, max) {
  if (typeof v !== "number") throw new TypeError(`${what} must be a number, got ${typeof v} ${describe(v)}`);
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${what} ${describe(v)} is outside the allowed range ${min}..=${max}`);
  }
  return v;
}

/** Facts of a layout, read through the core: epoch, tick length, largest node id. */
function layoutFacts(layout) {
  const epochMs = decode(0n, layout).timestampMs; // also validates the layout
  const top = maxIdAt(epochMs, layout); // the last ID of the first tick
  return { epochMs, unitMs: decode(top + 1n, layout).timestampMs - epochMs, maxNode: decode(top, layout).node };
}

/**
 * The chance that at least two of `devices` node ids drawn at random for `layout` are the
 * same (the birthday problem over the layout's node ids). Two devices that share a node id
 * make the same ID only when both issue one in the same tick with the same sequence number,
 * so this is the chance that duplicates are possible at all.
 */
export function collisionOdds(devices, layout = "default") {
  intOption("devices", devices, 0, Number.MAX_SAFE_INTEGER);
  const ids = layoutFacts(layout).maxNode + 1;
  if (devices > ids) return 1;
  if (devices > 1e7) return 1 - Math.exp(-devices * (devices - 1) / (2 * ids));
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

// ---- storage: one record per (name, node): { node, until } ----

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

function lsRecords(ls, name) {
  const prefix = `snowdrift:${name}:`;
  const out = [];
  for (let i = 0; i < ls.length; i++) {
    const key = ls.key(i);
    if (key?.startsWith(prefix) && /^\d+$/.test(key.slice(prefix.length))) {
      const r = lsRead(ls, name, Number(key.slice(prefix.length)));
      if (r) out.push(r);
    }
  }
  return out;
}

function lsRead(ls, name, node) {
  try {
    const r = JSON.parse(ls.getItem(lsKey(name, node)));
    return r && Number.isFinite(r.until) ? { node, until: r.until } : undefined;
  } catch {
    return undefined;
  }
}

const lsWrite = (ls, name, node, until) => ls.setItem(lsKey(name, node), JSON.stringify({ until }));

const request = (r) => new Promise((ok, fail) => {
  r.onsuccess = () => ok(r.result);
  r.onerror = () => fail(r.error);
});

async function openDb() {
  if (typeof indexedDB === "undefined") return undefined;
  try {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    return await request(open);
  } catch {
    return undefined; // some private modes refuse IndexedDB
  }
}

/** The storage a generator uses: IndexedDB or localStorage, with the same four calls. */
async function openStorage(which) {
  const ls = localStore();
  const db = which === "localstorage" ? undefined : await openDb();
  if (db) {
    const range = (name) => IDBKeyRange.bound([name, -Infinity], [name, Infinity]);
    const tx = (mode) => db.transaction(STORE, mode, { durability: "strict" }).objectStore(STORE);
    return {
      kind: "indexeddb",
      sync: ls, // for a synchronous write when IDs outrun a pending IndexedDB write
      list: async (name) => (await request(tx("readonly").getAll(range(name)))).map(({ node, until }) => ({ node, until })),
      read: async (name, node) => {
        const r = await request(tx("readonly").get([name, node]));
        const l = ls && lsRead(ls, name, node);
        return Math.max(r?.until ?? 0, l?.until ?? 0);
      },
      write: (name, node, until) => new Promise((ok, fail) => {
        const store = tx("readwrite");
        store.put({ node, until }, [name, node]);
        store.transaction.oncomplete = () => ok();
        store.transaction.onerror = store.transaction.onabort = () => fail(store.transaction.error);
      }),
      close: () => db.close(),
    };
  }
  if (which === "indexeddb") throw new Error("IndexedDB is not available in this context");
  if (!ls) {
    throw new Error("snowdrift/browser needs IndexedDB or localStorage to remember its node id and reservation; neither is available in this context");
  }
  return {
    kind: "localstorage",
    sync: ls,
    list: async (name) => lsRecords(ls, name),
    read: async (name, node) => lsRead(ls, name, node)?.until ?? 0,
    write: async (name, node, until) => lsWrite(ls, name, node, until),
    close() {},
  };
}

// ---- node ids: one Web Lock per node id in use ----

/** Takes the lock if no one holds it: its release function, or null. */
function tryLock(name) {
  return new Promise((resolve, reject) => {
    navigator.locks.request(name, { ifAvailable: true }, (lock) => {
      if (!lock) return resolve(null);
      return new Promise((release) => resolve(release));
    }).catch(reject);
  });
}

async function claimNode(storage, name, node, maxNode, maxNodes) {
  const lockName = (n) => `snowdrift:${name}:${n}`;
  if (typeof node === "number") {
    const release = await tryLock(lockName(node));
    if (!release) {
      throw new Error(`node ${node} is in use by another tab or worker of this origin (name ${describe(name)}); give each its own node id, or leave node out to have them chosen`);
    }
    return { node, release };
  }
  // This device's node ids, oldest first: reuse one no other tab or worker holds.
  const known = (await storage.list(name)).map((r) => r.node).filter((n) => n <= maxNode);
  for (const n of known) {
    const release = await tryLock(lockName(n));
    if (release) return { node: n, release };
  }
  if (known.length >= maxNodes) {
    throw new Error(`all ${maxNodes} node ids of this origin (name ${describe(name)}) are in use by other tabs or workers (maxNodes ${maxNodes})`);
  }
  for (let attempt = 0; attempt < 16; attempt++) {
    let n;
    if (node === undefined) {
      if (known.length > maxNode) break;
      do n = randomBelow(maxNode + 1); while (known.includes(n));
    } else {
      n = await node();
      intOption("the node function's result", n, 0, maxNode);
      if (known.includes(n)) throw new RangeError(`the node function returned ${n}, a node id this device already has`);
    }
    const release = await tryLock(lockName(n));
    if (release) return { node: n, release };
    // Another tab of this device drew the same one a moment ago: draw again.
    known.push(n);
  }
  throw new Error(`no free node id found for name ${describe(name)}`);
}

/**
 * `await openSnowdrift({ name, layout, node, maxNodes, reserveMs, maxAheadMs, storage })`:
 * a generator whose IDs stay above every ID this origin issued under `name`, across
 * reloads, clock steps back, tabs and workers.
 */
export async function openSnowdrift(options = {}) {
  if (typeof options !== "object" || options === null) throw new TypeError(`options must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw new RangeError(`unknown openSnowdrift option ${describe(key)} (allowed: ${OPTIONS.join(", ")})`);
  }
  const { name = "snowdrift", layout = "default", node, storage: which = "auto" } = options;
  if (typeof name !== "string" || name === "") throw new TypeError(`name must be a non-empty string, got ${describe(name)}`);
  if (!["auto", "indexeddb", "localstorage"].includes(which)) {
    throw new RangeError(`storage ${describe(which)} is not one of "auto", "indexeddb", "localstorage"`);
  }
  const facts = layoutFacts(layout);
  if (node !== undefined && typeof node !== "function") intOption("node", node, 0, facts.maxNode);
  const maxNodes = options.maxNodes === undefined ? 16 : intOption("maxNodes", options.maxNodes, 1, 1024);
  const reserveMs = Math.max(
    options.reserveMs === undefined ? 2000 : intOption("reserveMs", options.reserveMs, 1, 86_400_000),
    2 * facts.unitMs,
  );
  const maxAheadMs = options.maxAheadMs === undefined ? MAX_U32 : intOption("maxAheadMs", options.maxAheadMs, 0, MAX_U32);
  if (!globalThis.navigator?.locks) {
    throw new Error("snowdrift/browser needs the Web Locks API (navigator.locks) to give each tab and worker its own node id");
  }

  const storage = await openStorage(which);
  let claimed;
  try {
    claimed = await claimNode(storage, name, node, facts.maxNode, maxNodes);
    const until = await storage.read(name, claimed.node);
    // Never below the reservation of the last run on this node id, whatever the clock says.
    const notBefore = until >= facts.epochMs ? ceilingAt(until, layout) : undefined;
    const gen = new Snowdrift({ layout, node: claimed.node, onClockBackwards: "borrow", maxAheadMs, notBefore });
    const first = Math.max(Date.now(), until + facts.unitMs) + reserveMs;
    await storage.write(name, claimed.node, first);
    return new BrowserSnowdrift(gen, { storage, name, layout, reserveMs, release: claimed.release, until: first });
  } catch (e) {
    claimed?.release();
    storage.close();
    throw e;
  }
}

/** The largest ID of the tick holding `ms` (every ID at or below it has a time <= ms). */
function ceilingAt(ms, layout) {
  try {
    return maxIdAt(ms, layout);
  } catch {
    return MAX_ID; // past the layout's end: no ID lies above
  }
}

const closedError = () => new Error("this snowdrift/browser generator is closed");
const CLOSED = { next: () => { throw closedError(); }, nextBatch: () => { throw closedError(); }, decode: () => { throw closedError(); }, free() {} };

/** A generator from `openSnowdrift`: `next()` and `nextBatch()` are synchronous. */
export class BrowserSnowdrift {
  #gen;
  #s;
  #until; // the reservation written to storage: every ID issued has a time at or below it
  #hard; // the largest ID the reservation covers
  #soft; // past this ID, renew the reservation in the background
  #pending; // the renewal being written, if any
  #last = 0n; // the newest ID issued
  #node;
  #failure; // why the last renewal failed

  constructor(gen, state) {
    this.#gen = gen;
    this.#s = state;
    this.#node = gen.node;
    this.#reserved(state.until);
  }

  #reserved(until) {
    const { layout, reserveMs } = this.#s;
    this.#until = until;
    this.#hard = ceilingAt(until, layout);
    this.#soft = ceilingAt(until - reserveMs / 2, layout);
  }

  /** The next ID. */
  next() {
    const id = this.#gen.next();
    if (id > this.#soft) this.#ahead(id);
    this.#last = id;
    return id;
  }

  /** The next ID as a decimal string (safe in JSON). */
  nextString() {
    return String(this.next());
  }

  /** `n` (1 to 1,048,576) increasing IDs. */
  nextBatch(n) {
    const ids = this.#gen.nextBatch(n);
    const last = ids[ids.length - 1];
    if (last > this.#soft) this.#ahead(last);
    this.#last = last;
    return ids;
  }

  /** The parts of an ID of this generator's layout. */
  decode(id) {
    return this.#gen.decode(id);
  }

  /** IDs near the end of the reservation: make sure `id` is covered, renew in the background. */
  #ahead(id) {
    const { reserveMs, storage, name } = this.#s;
    const time = this.#gen.decode(id).timestampMs;
    const until = Math.max(Date.now(), time) + reserveMs;
    if (!this.#pending) this.#renew(until);
    if (id > this.#hard) {
      // The IDs outran the reservation before a background write could finish (a long
      // synchronous burst): write one synchronously where there is a synchronous store.
      // Without one, `id` is dropped (never issued) and the renewal just started covers it.
      if (!storage.sync) {
        throw new Error(`IDs reached the end of the reservation (${new Date(this.#until).toISOString()}) before it could be renewed${this.#failure ? ` (${this.#failure})` : ""}; await gen.ready, then call again`);
      }
      lsWrite(storage.sync, name, this.#node, until);
      this.#reserved(until);
    }
  }

  #renew(until) {
    const { storage, name } = this.#s;
    this.#pending = storage.write(name, this.#node, until).then(
      () => {
        this.#failure = undefined;
        if (until > this.#until) this.#reserved(until);
      },
      (e) => {
        this.#failure = String(e?.message ?? e);
      },
    ).finally(() => {
      this.#pending = undefined;
      // IDs went on while it was written: keep ahead of them (after a failure, the next
      // ID past the soft limit tries again).
      if (!this.#failure && this.#last > this.#soft && this.#gen !== CLOSED) {
        const time = this.#gen.decode(this.#last).timestampMs;
        this.#renew(Math.max(Date.now(), time) + this.#s.reserveMs);
      }
    });
  }

  /** Resolves when no reservation write is in progress. */
  get ready() {
    return this.#pending ? this.#pending.then(() => this.ready) : Promise.resolve();
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

  /** Unix ms up to which IDs are covered by the stored reservation. */
  get reservedUntil() {
    return this.#until;
  }

  /** Finishes the pending write, frees the generator and releases its node id for other tabs. */
  async close() {
    if (this.#gen === CLOSED) return;
    const gen = this.#gen;
    this.#gen = CLOSED;
    gen.free();
    await this.ready;
    this.#s.release();
    this.#s.storage.close();
  }
}
Object.defineProperty(BrowserSnowdrift, "name", { value: "BrowserSnowdrift" });
