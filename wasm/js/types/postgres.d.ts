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

// biome-ignore-start lint/suspicious/noExplicitAny: pg's own query signature must fit
/** A node-postgres (`pg`) `Pool` (a connection is checked out for each call) or `Client`
 * (a `new Client()` after `connect()`, or a client checked out of a pool) that the leases
 * use alone: on a `Client` inside the application's transaction, calls are refused. A
 * no-op `'error'` listener is added to it, so that an idle connection dying (a server
 * restart) does not end the process. */
export type PostgresClient = { query(...args: any[]): Promise<any> };
// biome-ignore-end lint/suspicious/noExplicitAny: pg's own query signature must fit

export interface SchemaOptions {
  /** The schema of the lease tables, 1 to 63 characters (default "snowdrift"). */
  schema?: string;
}

export interface PostgresLeaseOptions extends LeaseOptions, SchemaOptions {}

/**
 * Leases a node id of the space `options.key`; resolves once the lease is usable. Live
 * leases are released on SIGINT, SIGTERM and `beforeExit`. Each call is one transaction
 * of its own (READ COMMITTED, read-write) on one connection, bounded by the TTL (an
 * acquire by `ttlMs - skewMs`); the
 * connection's session settings are left as they were.
 * @throws {TypeError | RangeError} bad options, before any call to PostgreSQL.
 * @throws {RangeError} every node id is leased, or the space has other settings.
 * @throws {Error} no answer in time; a `Client` inside a transaction; the schema
 * not set up or out of the role's reach (the message says what to run); the database's
 * error.
 */
export declare function leaseNode(client: PostgresClient, options: PostgresLeaseOptions): Promise<Lease>;

/**
 * Creates the schema, the lease tables and functions where missing, and replaces the
 * functions: idempotent (run it at deploy or start; concurrent runs wait for each other).
 * Needs CREATE on the database, not a superuser.
 */
export declare function setup(client: PostgresClient, options?: SchemaOptions): Promise<void>;

/** The space `key` as the database lists it, for operators (read-only). */
export declare function list(client: PostgresClient, key: string, options?: SchemaOptions): Promise<Listing>;

/** The lease protocol's calls on PostgreSQL (the tables of `options.schema`), for
 * `snowdrift/http`'s `leaseHandler`. */
export declare function postgresStore(client: PostgresClient, options?: SchemaOptions): LeaseStore;
