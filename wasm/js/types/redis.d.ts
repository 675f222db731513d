import type { Lease, LeaseOptions } from "./lease.js";

import type { LeaseStore, Listing } from "./lease-store.js";

export type {
  Lease,
  LeaseEventData,
  LeaseHealth,
  LeaseHealthState,
  LeaseOptions,
  LeaseState,
  Region,
} from "./lease.js";
export type { LeaseStore, ListedLease, Listing } from "./lease-store.js";

// biome-ignore-start lint/suspicious/noExplicitAny: each client's own eval signature must fit
/** A node-redis client or cluster (`createClient`, `createCluster`), or an ioredis one
 * (`new Redis`, `new Redis.Cluster`): anything with `evalSha`/`eval` or `evalsha`/`eval`. */
export type RedisClient =
  | { evalSha(...args: any[]): Promise<unknown>; eval(...args: any[]): Promise<unknown> }
  | { evalsha(...args: any[]): Promise<unknown>; eval(...args: any[]): Promise<unknown> };
// biome-ignore-end lint/suspicious/noExplicitAny: each client's own eval signature must fit

/**
 * Leases a node id of the space `options.key` (Redis keys `{<key>}:meta` and so on; the
 * key must not contain `{` or `}`); resolves once the lease is usable. Live leases are
 * released on SIGINT, SIGTERM and `beforeExit`.
 * @throws {TypeError | RangeError} bad options, before any call to Redis.
 * @throws {RangeError} every node id is leased, or the space has other settings.
 */
export declare function leaseNode(client: RedisClient, options: LeaseOptions): Promise<Lease>;

/** The lease protocol's calls on `client`, for `snowdrift/http`'s `leaseHandler`. */
export declare function redisStore(client: RedisClient): LeaseStore;

/** The space `key` as Redis lists it (list.lua), for operators (read-only). */
export declare function list(client: RedisClient, key: string): Promise<Listing>;
