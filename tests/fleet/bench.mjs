// The cost of node id leases in Node, against a redis-server and a PostgreSQL server
// this script starts on 127.0.0.1 (part of `cargo xtask bench`): an acquire (with its
// release), a renewal (the heartbeat's call), and `next()` of a lease-bound generator
// against an unbound one with the same options, measured in turns in this one process;
// for PostgreSQL also a `SELECT 1` and a one-row UPDATE on the renewal's connection, the
// floors of a call. Medians; no thresholds.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Snowdrift } from "snowdrift";
import { leaseNode, redisStore } from "snowdrift/redis";
import { keysOf } from "../../wasm/js/src/lease/redis-space.mjs";
import { KINDS, connect } from "./clients.mjs";
import { startServer } from "./redis-server.mjs";
import { leaseNode as leasePostgres } from "snowdrift/postgres";
import { connectPostgres, startStore } from "./stores.mjs";

const require = createRequire(import.meta.url);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};
const BURST = 1000;
const ROUNDS = 301;
const ROUND_TRIPS = 300;

/** ns per call of `fn` (async), median of `n` calls. */
async function perCall(fn, n = ROUND_TRIPS) {
  for (let i = 0; i < 20; i++) await fn(i); // warm-up
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    samples.push(Number(process.hrtime.bigint() - t0));
  }
  return median(samples);
}

/** ns per `next()` of each generator, bursts taken in turns, each on a fresh millisecond. */
function nextInTurns(gens) {
  const samples = gens.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    gens.forEach((gen, i) => {
      const t = Date.now();
      while (Date.now() === t);
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < BURST; k++) gen.next();
      if (round > 20) samples[i].push(Number(process.hrtime.bigint() - t0) / BURST);
    });
  }
  return samples.map(median);
}

const redis = await startServer();
const rows = [];
try {
  for (const kind of KINDS) {
    const { client, close } = await connect(kind, redis.port);
    try {
      const key = `bench:${kind}`;
      const options = { key, layout: "twitter", ttlMs: 3000, skewMs: 500 };
      // Create the space and wait out its first ttl + skew ms (while new leases are fenced
      // ahead of the clock, see PROTOCOL.md), so what is timed is the steady state.
      await (await leaseNode(client, options)).release();
      await new Promise((r) => setTimeout(r, 3600));
      const acquire = await perCall(async () => (await leaseNode(client, options)).release());
      const lease = await leaseNode(client, options);
      const keys = keysOf(key);
      // The heartbeat's call (the store's renew: EVALSHA of renew.lua, loaded by the
      // acquires above) with the lease's own token, read from Redis: a real renewal of
      // the live lease.
      const token = await (kind === "redis"
        ? client.hGet(keys[2], String(lease.node))
        : client.hget(keys[2], String(lease.node)));
      const store = redisStore(client);
      const renew = await perCall(() => store.renew({ space: key, node: lease.node, token }, 3000));
      const [bound, unbound] = nextInTurns([lease.generator(), new Snowdrift({ layout: "twitter", node: lease.node })]);
      await lease.release();
      rows.push({ kind, acquire, renew, bound, unbound });
    } finally {
      await close();
    }
  }
} finally {
  await redis.stop();
}

// PostgreSQL, through a pg Pool: the renewal is timed as the client sends it (connect.sql
// for the transaction and renew.sql in one query of the simple protocol).
const pgRows = [];
const postgres = await startStore("pg-pool");
try {
  const { client: pool, close } = await connectPostgres("pg-pool", postgres.url);
  try {
    const options = { key: "bench:pg", layout: "twitter", ttlMs: 3000, skewMs: 500 };
    await (await leasePostgres(pool, options)).release();
    await new Promise((r) => setTimeout(r, 3600));
    const acquire = await perCall(async () => (await leasePostgres(pool, options)).release());
    const lease = await leasePostgres(pool, options);
    const sql = (name) =>
      readFileSync(join(dirname(require.resolve("snowdrift/package.json")), `postgres/${name}.sql`), "utf8");
    const c = await pool.connect();
    try {
      await c.query(sql("connect"), ["snowdrift", false]);
      const { rows } = await c.query("SELECT token FROM snowdrift_leases WHERE space = $1 AND node = $2", [
        options.key,
        lease.node,
      ]);
      await c.query("CREATE TABLE IF NOT EXISTS bench_floor (id int PRIMARY KEY, x bigint)");
      await c.query("INSERT INTO bench_floor VALUES (1, 0) ON CONFLICT DO NOTHING");
      // As the client sends it: connect.sql and renew.sql, parameters written in, one query.
      const inline = (name, params) =>
        sql(name)
          .split("\n")
          .filter((line) => !line.startsWith("--"))
          .join("\n")
          .replace(/\$(\d+)/g, (_, i) => {
            const v = params[Number(i) - 1];
            return typeof v === "string" ? c.escapeLiteral(v) : String(v);
          });
      const text = `${inline("connect", ["snowdrift", true])};\n${inline("renew", [options.key, lease.node, rows[0].token, 3000])}`;
      const renew = await perCall(() => c.query(text));
      const select1 = await perCall(() => c.query("SELECT 1"));
      const update = await perCall(() => c.query("UPDATE bench_floor SET x = x + 1 WHERE id = 1"));
      const [bound, unbound] = nextInTurns([lease.generator(), new Snowdrift({ layout: "twitter", node: lease.node })]);
      pgRows.push({ kind: "pg Pool", acquire, renew, select1, update, bound, unbound });
    } finally {
      await c.query("SELECT set_config('search_path', '\"$user\", public', false)");
      c.release();
    }
    await lease.release();
  } finally {
    await close();
  }
} finally {
  await postgres.stop();
}

const us = (ns) => `${(ns / 1000).toFixed(1)} µs`;
console.log(`\nnode id leases, Node ${process.version}, redis-server on 127.0.0.1 (medians)\n`);
console.log(
  "| client | acquire + release | renewal (script call) | `next()`, lease-bound | `next()`, unbound | bound ÷ unbound |",
);
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.kind} | ${us(r.acquire)} | ${us(r.renew)} | ${r.bound.toFixed(1)} ns | ${r.unbound.toFixed(1)} ns | ${(r.bound / r.unbound).toFixed(2)}× |`,
  );
}
console.log(`\nnode id leases, Node ${process.version}, PostgreSQL on 127.0.0.1 (fsync off; medians)\n`);
console.log(
  "| client | acquire + release | renewal (one query) | `SELECT 1`, same connection | one-row UPDATE, same connection | renewal ÷ `SELECT 1` | `next()`, lease-bound | `next()`, unbound | bound ÷ unbound |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of pgRows) {
  console.log(
    `| ${r.kind} | ${us(r.acquire)} | ${us(r.renew)} | ${us(r.select1)} | ${us(r.update)} | ${(r.renew / r.select1).toFixed(1)}× | ${r.bound.toFixed(1)} ns | ${r.unbound.toFixed(1)} ns | ${(r.bound / r.unbound).toFixed(2)}× |`,
  );
}
