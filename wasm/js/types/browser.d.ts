// snowdrift/browser: everything "snowdrift" exports, plus a generator whose node id and
// reservation persist in the origin's storage.
import type { IdInput, Layout, LayoutSpec, Parts } from "./index.js";

export * from "./index.js";

/** What an app's node function may return: a node id, or a node id with the newest ID
 * the app's server has from it, so a device whose storage was cleared goes on above it. */
export type NodeGrant = number | { node: number; resumeAfter?: IdInput };

export interface OpenOptions {
  /** An ID space (default "snowdrift"): its own node ids, reservations and locks. IDs of
   * two names can be equal; use one name per set of IDs that must not repeat. */
  name?: string;
  /** Default "default". For many devices that pick node ids at random, see `BROWSER_LAYOUT`. */
  layout?: Layout;
  /**
   * Where the node id comes from (default: drawn at random, once per node id, and stored).
   * - a number: this node id. Only one tab or worker of the origin can hold it at a time:
   *   a second `openSnowdrift` with it rejects. **Not safe after storage loss** (site data
   *   cleared, Safari's seven-day cap, eviction) with the clock set back: the device no
   *   longer knows which IDs the node id issued. Prefer a function that returns
   *   `{ node, resumeAfter }`.
   * - a function: called when this device needs a new node id (the first run, after
   *   storage loss, or when every node id it has is held by another open tab or worker);
   *   may ask a server (async). Return `{ node, resumeAfter }` with the newest ID your server
   *   has from that node id, and the generator resumes above it.
   */
  node?: number | (() => NodeGrant | Promise<NodeGrant>);
  /** How many node ids one device may hold for tabs and workers open at once (default 16). */
  maxNodes?: number;
  /** How far past the newest ID (and the clock) the stored reservation runs (default
   * 2000 ms, at least two ticks). After a reload with the clock set back, the first IDs
   * carry a time up to this much ahead of it. A worker writes one renewal per
   * `reserveMs / 2` while open. */
  reserveMs?: number;
  /** How far IDs may run ahead of the clock (default 4,294,967,295 ms, about 49.7 days).
   * While running, `next()` throws instead of running further ahead of a clock set back.
   * When given, `openSnowdrift` rejects a node id whose stored reservation is further ahead
   * of the clock than this (a clock that was ahead on an earlier visit), naming the
   * reserved time and when it can issue again. Without it, IDs go on above the reservation,
   * ahead of the clock, until the clock catches up. */
  maxAheadMs?: number;
  /** Default "auto": IndexedDB, or localStorage alone where IndexedDB is missing or refuses
   * to open. "indexeddb": reject rather than use localStorage alone. */
  storage?: "auto" | "indexeddb";
  /** Ask the browser to keep the origin's storage (`navigator.storage.persist()`; Firefox
   * may ask the user). Default true; the answer is `generator.persisted`. */
  persist?: boolean;
  /** How long to wait for IndexedDB to answer an open, a read or a write (default 10,000 ms,
   * 1 to 600,000). Opening then rejects, and a worker's renewal fails (its calls stop at the
   * reservation, saying why), instead of waiting for ever. */
  storageTimeoutMs?: number;
}

/**
 * Opens a generator whose IDs stay above every ID the origin issued under `name`, as long
 * as the origin's storage lasts:
 *
 * - **No ID past what storage holds.** An ID is issued only once storage holds a
 *   reservation at or past its time, renewed (`reserveMs` past the newest ID and the
 *   clock) when IDs come within half of it. Whoever takes the node id next (a reload, a
 *   tab, a worker, after a crash or a closed tab) resumes after it, even with the clock
 *   set back.
 * - **Windows** write the reservation to localStorage synchronously, so `next()` never
 *   throws for storage there; IndexedDB marks the node id as a window's, and workers skip
 *   it until the window's `close()` hands it back. **Workers** write to IndexedDB in the
 *   background, ahead of their IDs and of the clock; a burst that outruns the reservation
 *   throws (await `ready`, then call again).
 * - **Tabs and workers**: each holds its own node id through a Web Lock
 *   (`snowdrift:<name>:<node>`), released when it closes or goes away; node ids are reused.
 * - **Storage loss**: a window's node id whose localStorage value is gone (localStorage
 *   cleared alone) is not used again; IndexedDB deleted under a running generator is made
 *   again with its record. After everything is lost, a node id drawn at random is a new
 *   device; a node function can return `{ node, resumeAfter }` to go on above what a
 *   server saw.
 * - **Devices**: node ids drawn at random can coincide across devices; `collisionOdds`
 *   says how likely. Node ids drawn at random for the layouts, chance that any two
 *   devices (count each device once per node id it holds) share one:
 *
 * | devices | default, twitter, discord (1,024 ids) | instagram (8,192) | sonyflake, BROWSER_LAYOUT (65,536) |
 * |---|---|---|---|
 * | 2 | 0.098% | 0.012% | 0.0015% |
 * | 10 | 4.3% | 0.55% | 0.069% |
 * | 100 | 99.3% | 45.5% | 7.3% |
 * | 1,000 | 100% | 100% | 99.95% |
 *
 *   For more than a few devices, give each a node id from your server (`node`).
 *
 * Runs in windows (tabs), dedicated and shared workers (a worker may import this module
 * statically and set `onmessage` / `onconnect` after: events that arrive while it loads
 * are dispatched again then); not in service workers
 * (a module there may not use top-level `await`, which the package's browser build uses to
 * compile its wasm). Needs Web Locks (https:// pages and http://localhost) and IndexedDB
 * or, in a window, localStorage.
 *
 * @throws {TypeError} an option of the wrong type. @throws {RangeError} an option out of
 * range, or a clock past the end of the layout's time.
 * @throws {Error} the node id is held by another tab, all `maxNodes` are, no storage, a
 * stored reservation that cannot be trusted or is further ahead than `maxAheadMs`, a
 * worker asking for a node id a window holds, IndexedDB upgraded by a newer version, or
 * IndexedDB not answering within `storageTimeoutMs`.
 */
export declare function openSnowdrift(options?: OpenOptions): Promise<BrowserSnowdrift>;

/** A generator from `openSnowdrift`. IDs are unique across the origin's tabs, workers and
 * reloads, and strictly increasing. */
export declare class BrowserSnowdrift {
  private constructor();
  /** The next ID. Throws when IDs would run more than `maxAheadMs` ahead of the clock; in a
   * worker, also when a synchronous burst outruns the reservation before the background
   * write lands (await `ready` and call again) or storage refuses the renewal (the error
   * names why). */
  next(): bigint;
  /** The next ID as a decimal string (safe in JSON). */
  nextString(): string;
  /** The next ID as a Number, on a layout of at most 53 bits (such as "js53", whose IDs
   * are all at most 2^53 - 1). @throws {RangeError} on a wider layout, naming its width;
   * no ID is issued then. */
  nextNumber(): number;
  /** `n` (1 to 1,048,576) increasing IDs; throws as `next()` does. */
  nextBatch(n: number): BigUint64Array;
  /** The parts of an ID of this generator's layout. */
  decode(id: IdInput): Parts;
  /** This generator's node id: no other open tab or worker of the origin uses it. */
  readonly node: number;
  /** The name given to `openSnowdrift`. */
  readonly name: string;
  /** Where node ids are kept: IndexedDB (windows also keep reservations in localStorage),
   * or localStorage alone. */
  readonly storage: "indexeddb" | "localstorage";
  /** Unix ms up to which storage holds the reservation: no ID issued has a later time. */
  readonly reservedUntil: number;
  /** Resolves when no reservation write is in progress. */
  readonly ready: Promise<void>;
  /** Whether the browser keeps the origin's storage until the user clears it. */
  readonly persisted: Promise<boolean>;
  /** Finishes the pending write, frees the generator and hands its node id on (a window
   * copies its reservation to IndexedDB first, so workers can take it). */
  close(): Promise<void>;
}

/** 41-bit milliseconds since 2024-01-01 (until 2093), a 16-bit node (65,536 node ids), a
 * 6-bit sequence (64 IDs per ms per tab); 63 bits, so it fits a signed 64-bit integer. */
export declare const BROWSER_LAYOUT: Readonly<LayoutSpec>;

/** The chance that some two of `devices` node ids drawn at random for `layout` (default
 * "default") are equal. Duplicates then need both to issue an ID in the same tick with the
 * same sequence number, so this bounds the chance that they are possible at all. */
export declare function collisionOdds(devices: number, layout?: Layout): number;
