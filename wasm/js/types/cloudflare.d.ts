import { DurableObject } from "cloudflare:workers";
import type { Snowdrift, SnowdriftOptions } from "./index.js";
import type { Lease as NodeLease, LeaseOptions } from "./lease.js";
import type { LeaseStore, StoreAcquire } from "./lease-store.js";

/** What `acquire` takes: the settings every client of the space shares, and the lease's
 * own. The object bounds them: `space`, `holder` and `layout` up to 1024 characters,
 * `token` 1 to 256, `capacity` 1 to 2^32, `ttl` 1 to 31,536,000,000 ms (a year), `skew`
 * below `ttl / 2`. */
export type AcquireRequest = StoreAcquire;

/** A grant. Times are Unix ms of the object's clock. */
export interface Grant {
  /** The node id. */
  node: number;
  /** The ID time the holder never issues at or before. */
  notBefore: number;
  /** The lease's end and fence: the holder issues only IDs timed before it. */
  until: number;
  /** The object's clock at the grant. */
  now: number;
}

export interface RenewRequest {
  space: string;
  node: number;
  token: string;
  /** The space's TTL in ms. */
  ttl: number;
}

export interface ReleaseRequest {
  space: string;
  node: number;
  token: string;
  /** A time at or after every ID the lease's generator issued (Unix ms). */
  issued: number;
}

/** What `ids` takes: the space's settings (as `acquire`), the description of the object's
 * own holding for operators, and how many IDs (1 to 100,000). */
export interface IdsRequest extends Omit<StoreAcquire, "token"> {
  count: number;
}

/** IDs issued by the object itself, as decimal strings, increasing; or, while a new
 * space's guard window leaves no tick to issue in, none: try again in `wait` ms. */
export type IdsReply = { node: number; ids: string[] } | { node: null; ids: []; wait: number };

/** A space's settings (null when it does not exist) and every id ever leased. */
export interface Listing {
  now: number;
  capacity: number | null;
  ttl: number | null;
  skew: number | null;
  created: number | null;
  /** The lowest id never leased. */
  next: number | null;
  /** Oldest fence first; `holder` is `""` for a released id. */
  ids: { node: number; until: number; holder: string }[];
}

/**
 * The node id leases of one space, in the object's SQLite storage (bind the class with a
 * `new_sqlite_classes` migration; get the object with `namespace.idFromName(space)`).
 * Errors of the protocol are `Error`s whose message starts with its code word: `LEASED`,
 * `CONFIG`, `LOST`; bad arguments are `TypeError`s and `RangeError`s.
 */
export declare class SnowdriftLeases extends DurableObject {
  /** The lowest id never leased, else the one whose fence passed longest ago.
   * @throws {Error} `LEASED ...` (every id is leased), `CONFIG ...` (the space has other settings). */
  acquire(request: AcquireRequest): Grant;
  /** Moves the lease's fence forward (never back).
   * @throws {Error} `LOST ...`: the id is no longer this lease's. */
  renew(request: RenewRequest): { until: number; now: number };
  /** Hands the id on from `issued + 1`; false when it was no longer this lease's. */
  release(request: ReleaseRequest): boolean;
  /** IDs issued by the object from a node id it takes for the call alone and hands on at
   * once from the newest ID issued: no id stays held between calls.
   * @throws {Error} `LEASED ...` (every id is leased by others), `CONFIG ...`. */
  ids(request: IdsRequest): IdsReply;
  /** The space's settings and leases, read-only. */
  list(space: string): Listing;
}

export type { LeaseEventData, LeaseHealth, LeaseHealthState, LeaseOptions, LeaseState, Region } from "./lease.js";

/** A binding of the `SnowdriftLeases` class (`env.LEASES`). */
export interface LeasesNamespace {
  idFromName(name: string): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: the binding's stub type is the runtime's
  get(id: any): any;
}

/** What a Worker does with its `ctx`: run a promise past the response. */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** A node id leased from a `SnowdriftLeases` object for one isolate; kept by `keep(ctx)`. */
export declare class Lease extends NodeLease {
  /**
   * The per-request check (lease/PROTOCOL.md, "What a holder does"): lapses the lease when
   * no renewal succeeded for `ttl - skew` ms, renews when due (in the background through
   * `ctx.waitUntil` while more than half of the lease's time is left, else awaited), and
   * never waits for the store past the lapse.
   * @throws {Error} the lease's error once it lapsed, was lost or released.
   */
  keep(ctx?: WaitUntil): Promise<void>;
}

/**
 * Leases a node id of the space `options.key` (TTL up to a year) from the objects bound as
 * `namespace`; resolves once the lease is usable. An evicted isolate never releases: its
 * lease ends by its TTL.
 * @throws {TypeError | RangeError} bad options, before any call to the object.
 * @throws {RangeError} every node id is leased, or the space has other settings.
 */
export declare function leaseNode(namespace: LeasesNamespace, options: LeaseOptions): Promise<Lease>;

/**
 * One fenced generator per isolate: call it at module level, then `await ids(env, ctx)` in
 * each request. It leases on first use, keeps the lease on every call, and leases again
 * after the lease lapsed or was lost.
 */
export declare function leased(
  binding: string,
  options: LeaseOptions,
  generatorOptions?: Omit<SnowdriftOptions, "layout" | "node" | "datacenter" | "worker" | "resumeAfter">,
): (env: Record<string, unknown>, ctx?: WaitUntil) => Promise<Snowdrift>;

/** The protocol's calls on a `SnowdriftLeases` namespace, as every holder takes them, and
 * `ids`, which the HTTP handler's `ids` call uses: the space's object issues the IDs. */
export declare function durableObjectStore(namespace: LeasesNamespace): LeaseStore & Required<Pick<LeaseStore, "ids">>;
