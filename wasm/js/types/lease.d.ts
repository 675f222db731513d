import type { ClockStats, Layout, Snowdrift, SnowdriftOptions } from "./index.js";

/**
 * A space's fixed region: the top `bits` of the layout's node field hold `id` in every ID
 * of the space, and the store leases only the worker bits below. Give each store (one per
 * data centre) its own region of one layout and their IDs never collide. With `bits` equal
 * to a split layout's datacenter bits, the region is the IDs' datacenter field.
 */
export interface Region {
  /** How many of the node field's top bits the region takes: 1 to the node bits less one. */
  bits: number;
  /** The region's id, 0 to 2^bits - 1. */
  id: number;
}

/** The options of `leaseNode`, whatever the store. */
export interface LeaseOptions {
  /** The space's name (`"ids:orders"`, 1 to 1024 characters): the ids every client of the space shares. */
  key: string;
  /** The generator's layout (default "default"); the space has 2^(node bits) node ids,
   * 2^(node bits - region bits) with a `region`. */
  layout?: Layout;
  /** The space's region (none by default); every client of a space gives the same. */
  region?: Region;
  /** Lease length, 100 to 31,536,000,000 ms (a year; default 10,000). Every client of a space uses the same. */
  ttlMs?: number;
  /** Allowance for clock differences and store failover, below `ttlMs / 2` (default 1000). */
  skewMs?: number;
  /** Renew this often, 10 ms to below `ttlMs - skewMs` (default `ttlMs / 3`). */
  renewEveryMs?: number;
  /** Who holds the id, shown by `snowdrift lease` (default `node pid <pid> on <host>`; at most 1024 characters). */
  holder?: string;
  /** The generator's clock (Unix ms); for tests. */
  clock?: () => number;
  /** Hears the lease's events (`acquire`, `renew`, `renew-failed`, `lost`, `lapse`,
   * `release`) with their data; errors it throws are dropped. */
  onEvent?: (event: import("./metrics.js").LeaseEvent, data: LeaseEventData) => void;
}

/** What an event carries: always the space and node; times in ms. */
export interface LeaseEventData {
  space: string;
  node: number;
  /** `acquire`: the grant's. */
  notBefore?: number;
  /** `acquire`, `renew`: the fence granted (Unix ms, the store's clock). */
  until?: number;
  /** `acquire`, `renew`, `renew-failed`: from sending the call to its answer. */
  latencyMs?: number;
  /** `renew-failed`: the store's error; `lost`, `lapse`, `release`: why the lease stopped. */
  error?: Error;
}

/** A lease's health (see `Lease.health`). */
export type LeaseHealthState = "ok" | "renewing late" | "lapsed" | "lost" | "released";

/** What `Lease.health()` reports. Times are Unix ms (the fence and notBefore of the
 * store's clock, the rest of this host's); durations ms. */
export interface LeaseHealth {
  state: LeaseHealthState;
  space: string;
  node: number;
  /** The fence: IDs are timed before it. */
  fenceMs: number;
  notBeforeMs: number;
  /** When the newest successful call (the acquire or a renewal) was sent. */
  lastRenewalMs: number;
  /** How long ago that was. */
  sinceRenewalMs: number;
  /** When the lease turns `renewing late` if no renewal succeeds first. */
  lateAtMs: number;
  /** When it lapses if no renewal succeeds first. */
  lapseAtMs: number;
  /** The generator's newest ID time; null before the generator exists. */
  issuedThroughMs: number | null;
  /** ID time from the newest ID to the fence; null before the generator exists. */
  fenceDistanceMs: number | null;
  /** How far the newest ID is timed ahead of the generator's clock (time borrowed); null before the generator exists. */
  aheadMs: number | null;
  /** The generator's clock trouble (`Snowdrift.stats()`); null before the generator exists. */
  clock: ClockStats | null;
  /** Renewals the store accepted, and those that failed. */
  renewals: number;
  renewalFailures: number;
  /** How long the newest answered renewal took; null before the first. */
  lastRenewalLatencyMs: number | null;
  /** Why the lease stopped; undefined while live. */
  error: Error | undefined;
}

export type LeaseState = "live" | "lapsed" | "lost" | "released";

/** A node id leased from a store, renewed in the background until released. */
export declare class Lease {
  /** The node id the lease's IDs carry: with a `region`, the region above the leased id. */
  readonly node: number;
  /** The ID time (Unix ms) the lease never issues at or before. */
  readonly notBefore: number;
  /** The fence: the lease's current end (Unix ms, the store's clock); IDs are timed before it. */
  readonly until: number;
  /** "live" until the lease lapses (no renewal for `ttlMs - skewMs`), is lost (the store
   * gave the id to another holder or lost its data) or is released. */
  readonly state: LeaseState;
  /** Why the lease stopped; undefined while live. */
  readonly error: Error | undefined;
  /** Aborted when the lease stops, with `error` as its reason. */
  readonly signal: AbortSignal;
  /**
   * The generator of the lease, fenced to it: once the lease stops, its calls throw.
   * @throws {Error} on a second call (one generator per lease), or when the lease stopped.
   */
  generator(options?: Omit<SnowdriftOptions, "layout" | "node" | "datacenter" | "worker" | "resumeAfter">): Snowdrift;
  /**
   * The lease's health by the holder's rules: `ok`; `renewing late` once half of `ttlMs -
   * skewMs` passed since the newest successful call was sent (callers then await the
   * renewal); `lapsed` at `ttlMs - skewMs` (the lease stops: a lease found lapsed here
   * stops now); `lost` when the store answered LOST; `released`.
   */
  health(): LeaseHealth;
  /** Stops the generator and hands the id on to the next holder. Idempotent. */
  release(): Promise<void>;
}
