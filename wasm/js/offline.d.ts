// snowdrift/browser: everything "snowdrift" exports, plus a generator whose node id and
// reservation persist in the origin's storage.
import type { Layout, LayoutSpec, Parts } from "./index.js";

export * from "./index.js";

export interface OpenOptions {
  /** An ID space (default "snowdrift"): its own node ids, reservations and locks. IDs of
   * two names can be equal; use one name per set of IDs that must not repeat. */
  name?: string;
  /** Default "default". For many devices that pick node ids at random, see `BROWSER_LAYOUT`. */
  layout?: Layout;
  /**
   * Where the node id comes from (default: drawn at random, once per node id, and stored).
   * - a number: this node id, e.g. one the app got from its server. Only one tab or worker
   *   of the origin can hold it at a time: a second `openSnowdrift` with it rejects.
   * - a function: called when this device needs a new node id (the first run, or every
   *   node id it has is held by another open tab or worker); may ask a server (async).
   */
  node?: number | (() => number | Promise<number>);
  /** How many node ids one device may hold for tabs and workers open at once (default 16). */
  maxNodes?: number;
  /** How far ahead of the newest ID the stored reservation runs (default 2000 ms, at least
   * two ticks). After a reload, the first IDs can carry a time up to this much ahead. */
  reserveMs?: number;
  /** How far IDs may run ahead of a clock that was set back (default 4,294,967,295 ms,
   * about 49.7 days). Beyond it `next()` throws instead of issuing. */
  maxAheadMs?: number;
  /** Default "auto": IndexedDB, or localStorage where IndexedDB is missing or refuses to open. */
  storage?: "auto" | "indexeddb" | "localstorage";
}

/**
 * Opens a generator whose IDs stay above every ID the origin issued under `name`:
 *
 * - **Reloads and clocks set back**: a reservation (Unix ms up to which IDs may have been
 *   issued) is stored before IDs reach it and renewed in the background when IDs come
 *   within half of `reserveMs`; on open the generator resumes after it. With the clock set
 *   back, IDs go on from the reservation (borrowing ticks, as `onClockBackwards: "borrow"`)
 *   until the clock catches up.
 * - **Tabs and workers**: each holds its own node id through a Web Lock
 *   (`snowdrift:<name>:<node>`), released when it closes or goes away; node ids are reused.
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
 * Needs Web Locks and IndexedDB or localStorage (every current browser, in windows and
 * workers). `next()` and `nextBatch()` never wait for storage.
 *
 * @throws {TypeError} an option of the wrong type. @throws {RangeError} an option out of range.
 * @throws {Error} the node id is held by another tab, all `maxNodes` are, or no storage.
 */
export declare function openSnowdrift(options?: OpenOptions): Promise<BrowserSnowdrift>;

/** A generator from `openSnowdrift`. IDs are unique across the origin's tabs, workers and
 * reloads, and strictly increasing. */
export declare class BrowserSnowdrift {
  private constructor();
  /** The next ID. In a worker (no localStorage), a synchronous burst that outruns the
   * reservation before the background write finishes throws: await `ready` and retry. */
  next(): bigint;
  /** The next ID as a decimal string (safe in JSON). */
  nextString(): string;
  /** `n` (1 to 1,048,576) increasing IDs. */
  nextBatch(n: number): BigUint64Array;
  /** The parts of an ID of this generator's layout. */
  decode(id: bigint | string): Parts;
  /** This generator's node id: no other open tab or worker of the origin uses it. */
  readonly node: number;
  /** The name given to `openSnowdrift`. */
  readonly name: string;
  /** Where the reservation is stored. */
  readonly storage: "indexeddb" | "localstorage";
  /** Unix ms up to which IDs are covered by the stored reservation. */
  readonly reservedUntil: number;
  /** Resolves when no reservation write is in progress. */
  readonly ready: Promise<void>;
  /** Finishes the pending write, frees the generator and releases its node id. */
  close(): Promise<void>;
}

/** 41-bit milliseconds since 2024-01-01 (until 2093), a 16-bit node (65,536 node ids), a
 * 6-bit sequence (64 IDs per ms per tab); 63 bits, so it fits a signed 64-bit integer. */
export declare const BROWSER_LAYOUT: Readonly<LayoutSpec>;

/** The chance that some two of `devices` node ids drawn at random for `layout` (default
 * "default") are equal. Duplicates then need both to issue an ID in the same tick with the
 * same sequence number, so this bounds the chance that they are possible at all. */
export declare function collisionOdds(devices: number, layout?: Layout): number;
