// The stores the lease tests run against, by client kind: Redis through node-redis or
// ioredis (`snowdrift/redis`), PostgreSQL through a pg Pool or a pg Client
// (`snowdrift/postgres`). Each kind starts its server, connects, leases and reads the
// fences the store recorded, so one test runs against every store.
import pg from "pg";
import { leaseNode as redisLease } from "snowdrift/redis";
import { leaseNode as postgresLease, list, setup } from "snowdrift/postgres";
import { connect } from "./clients.mjs";
import { startPostgres } from "./pg-server.mjs";
import { startServer } from "./redis-server.mjs";

export const STORE_KINDS = ["redis", "ioredis", "pg-pool", "pg-client"];
export const isPostgres = (kind) => kind.startsWith("pg-");

/** `leaseNode` of the kind's store. */
export const leaseFor = (kind) => (isPostgres(kind) ? postgresLease : redisLease);

/** A connected pg Pool or Client (errors while the server is down are expected here: the
 * lease sees them as failed calls). */
export async function connectPostgres(kind, url) {
  if (kind === "pg-pool") {
    const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 2000 });
    pool.on("error", () => {});
    return { client: pool, close: () => pool.end().catch(() => {}) };
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on("error", () => {});
  await client.connect();
  return { client, close: () => client.end().catch(() => {}) };
}

/** A server for the kind's store, ready for leases (PostgreSQL: the tables set up in the
 * schema "snowdrift", as the unprivileged role). */
export async function startStore(kind) {
  if (!isPostgres(kind)) return startServer();
  const server = await startPostgres();
  const { client, close } = await connectPostgres("pg-client", server.url);
  try {
    await setup(client);
  } finally {
    await close();
  }
  return server;
}

/** A client of `kind` to `server`. */
export const connectTo = (kind, server) =>
  isPostgres(kind) ? connectPostgres(kind, server.url) : connect(kind, server.port);

/** Runs `f(client)` with a fresh client of `kind`, closing it after. */
export async function withStore(kind, server, f) {
  const { client, close } = await connectTo(kind, server);
  try {
    return await f(client);
  } finally {
    await close();
  }
}

/** The fences the store recorded for the space `key`: [{ node, fence }], oldest first. */
export async function fencesOf(kind, server, key) {
  if (isPostgres(kind)) {
    const listing = await withStore(kind, server, (client) => list(client, key));
    return listing.leases.map((l) => ({ node: l.node, fence: l.untilMs }));
  }
  const ends = (await server.cli("ZRANGE", `{${key}}:ends`, "0", "-1", "WITHSCORES")).split("\n");
  const fences = [];
  for (let i = 0; i < ends.length; i += 2) fences.push({ node: Number(ends[i]), fence: Number(ends[i + 1]) });
  return fences;
}
