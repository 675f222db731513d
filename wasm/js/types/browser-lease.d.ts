// snowdrift/browser-lease: a browser generator on a node id leased over HTTP.
import type { IdInput, Layout, Parts } from "./index.js";

export interface LeasedOptions {
  /** The URL of `snowdrift/http`'s handler (calls go to `<lease>/acquire` and so on). */
  lease: string;
  /** The space to lease from; the server decides its layout and TTL. */
  space: string;
  /** The name of this origin's lease (default: the space). */
  name?: string;
  /** The layout the app expects; opening fails if the server's space has another. */
  layout?: Layout;
  /** How far ahead of the clock a tab reserves ID time, 10 to 3,600,000 ms (default 2000). */
  reserveMs?: number;
  /** Headers sent with every call (an Authorization header, say). */
  headers?: Record<string, string>;
  /** The fetch to call the handler with (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** How long a call may take, 100 to 600,000 ms (default 10,000). */
  timeoutMs?: number;
  /** Ask the browser to keep this origin's storage (default true). */
  persist?: boolean;
  /** How long to wait for IndexedDB to answer an open, a read or a write (default 10,000 ms,
   * 1 to 600,000). Opening then rejects, and a window's reservation fails (calls stop at the
   * window's end, `ready` rejecting with why), instead of waiting for ever. */
  storageTimeoutMs?: number;
}

export interface LeaseInfo {
  space: string;
  node: number;
  /** IDs of the lease are timed after this (Unix ms, the server's clock). */
  notBefore: number;
  /** The fence: IDs of the lease are timed before it. */
  until: number;
  layout: Layout;
  ttlMs: number;
  skewMs: number;
}

/**
 * A generator on a node id leased from `options.lease`, shared by this origin's tabs and
 * workers; it issues offline until the lease's end.
 * @throws {Error} no lease is stored and the handler cannot be reached ("reconnect to go on"), the handler refused, or IndexedDB did not answer within `storageTimeoutMs`.
 */
export declare function openLeased(options: LeasedOptions): Promise<LeasedSnowdrift>;

export declare class LeasedSnowdrift {
  /** @throws {Error} at the end of the tab's reservation (await `ready`), or when the lease ended offline ("reconnect to go on"). */
  next(): bigint;
  nextString(): string;
  /** The next ID as a Number, on a layout of at most 53 bits (such as "js53", whose IDs
   * are all at most 2^53 - 1). @throws {RangeError} on a wider layout, naming its width;
   * no ID is issued then. */
  nextNumber(): number;
  nextBatch(n: number): BigUint64Array;
  /** Resolves when no reservation is in progress; rejects with why the last one failed. */
  readonly ready: Promise<void>;
  decode(id: IdInput): Parts;
  readonly node: number;
  readonly lease: LeaseInfo;
  readonly persisted: Promise<boolean>;
  /** Stops this tab's generator; the lease stays with the origin. */
  close(): void;
  /** Hands the lease back to the server for every tab of the origin. */
  release(): Promise<void>;
}
