// snowdrift/browser's generator, for pages and workers that create IDs offline. Its node
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
// Storage is storage.mjs, node ids node-ids.mjs; the core is the package's public API
// only (Snowdrift, decode, layoutInfo, maxIdAt: core.mjs).
import {
  boolArg,
  intArg,
  MAX_U32,
  numberRefused,
  oneOf,
  optInt,
  options as checkOptions,
  pastFence,
  strArg,
} from "../check.mjs";
import { decode, maxIdAt, Snowdrift } from "./core.mjs";
import { clockMs, iso, layoutFacts, named } from "./layout.mjs";
import { claimNode, windowsOnly } from "./node-ids.mjs";
import { persistence } from "./persist.mjs";
import { openStorage } from "./storage.mjs";

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
