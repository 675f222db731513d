import type { Layout, Snowdrift, SnowdriftOptions } from "./index.js";

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
  /** Stops the generator and hands the id on to the next holder. Idempotent. */
  release(): Promise<void>;
}
