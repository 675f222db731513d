// `snowdrift/postgres` against real PostgreSQL servers, beyond the store-independent
// tests of lease.test.mjs: setup (idempotent, concurrent, a schema the user names, no
// superuser), the caller's session left as it was, errors before any call, a restore from
// an older base backup under a live holder, Node and Rust holders on one space, and
// `snowdrift lease --postgres`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { leaseNode, list, setup } from "snowdrift/postgres";
import { decode } from "snowdrift";
import { freePort, sleep } from "./redis-server.mjs";
import { assertDisjoint, issueFor, runChild, until } from "./holders.mjs";
import { ROLE } from "./pg-server.mjs";
import { connectPostgres, startStore, withStore } from "./stores.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, "../../wasm/pkg/bin/snowdrift.cjs");
const RUST_WORKER = join(here, "../../target/release/examples/fleet_worker");
const layout = (nodeBits) => ({ timeBits: 41, nodeBits, sequenceBits: 12, epochMs: 1704067200000 });
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;

let server;
before(async () => {
  server = await startStore("pg-pool");
});
after(async () => {
  await server?.stop();
});

const child = runChild;

test("setup is idempotent and safe to run concurrently, in a schema the user names, as a role that is no superuser", () =>
  withStore("pg-pool", server, async (pool) => {
    const { rows } = await pool.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user");
    assert.equal(rows[0].rolsuper, false);
    const schema = "Lease Space";
    await Promise.all([setup(pool, { schema }), setup(pool, { schema }), setup(pool, { schema })]);
    await setup(pool, { schema });
    const tables = await pool.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
      [schema],
    );
    assert.deepEqual(
      tables.rows.map((r) => r.table_name),
      ["snowdrift_alive", "snowdrift_leases", "snowdrift_spaces"],
    );
    const key = space("schema");
    const lease = await leaseNode(pool, { key, layout: layout(2), ttlMs: 1000, skewMs: 100, schema });
    assert.equal((await list(pool, key, { schema })).leases.length, 1);
    assert.equal((await list(pool, key)).capacity, null, "the default schema has no such space");
    await lease.release();
  }));

test("the caller's session is left as it was: search_path and default isolation after setup, acquire, renewals and release", () =>
  withStore("pg-client", server, async (client) => {
    await client.query("SET search_path TO public, pg_catalog");
    await client.query("SET default_transaction_isolation TO 'repeatable read'");
    const path = async () =>
      (
        await client.query(
          "SELECT current_setting('search_path') || ' ' || current_setting('default_transaction_isolation') AS p",
        )
      ).rows[0].p;
    const before = await path();
    await setup(client);
    assert.equal(await path(), before);
    const lease = await leaseNode(client, {
      key: space("session"),
      layout: layout(2),
      ttlMs: 600,
      skewMs: 100,
      renewEveryMs: 50,
    });
    await sleep(300); // several renewals
    assert.equal(lease.state, "live");
    assert.equal(await path(), before);
    await lease.release();
    assert.equal(await path(), before);
    // The client is usable for its own queries all along, in its own transaction too.
    await client.query("BEGIN");
    assert.equal((await client.query("SELECT 1 AS one")).rows[0].one, 1);
    await client.query("COMMIT");
  }));

test("errors name the value before any call to PostgreSQL; a space may use any name", async () => {
  let calls = 0;
  const fake = { query: async () => calls++ };
  await assert.rejects(leaseNode(fake, { key: "k", schema: "" }), {
    name: "RangeError",
    message: 'schema "" is not a PostgreSQL name (1 to 63 characters, no NUL)',
  });
  await assert.rejects(leaseNode(fake, { key: "k", schema: 3 }), {
    name: "TypeError",
    message: "schema must be a string, got number 3",
  });
  await assert.rejects(leaseNode(fake, { key: "k", ttlMs: 50 }), {
    message: "ttlMs 50 is outside the allowed range 100..=31536000000",
  });
  await assert.rejects(leaseNode(fake, { key: "k", table: "x" }), /unknown leaseNode option "table"/);
  await assert.rejects(setup(fake, { schemas: "x" }), /unknown setup option "schemas" \(allowed: schema\)/);
  await assert.rejects(leaseNode({}, { key: "k" }), { name: "TypeError", message: /a pg Pool or Client/ });
  assert.equal(calls, 0);
  await withStore("pg-pool", server, async (pool) => {
    // Names and holders reach the database as they are, whatever they hold.
    const key = `ids:{braces} 'quotes' \\ $1 '); DROP TABLE snowdrift_leases; -- ${process.pid}`;
    const holder = "a \\'holder'\n-- $2 \\\\ é";
    const lease = await leaseNode(pool, { key, holder, ttlMs: 1000, skewMs: 100 });
    const listing = await list(pool, key);
    assert.deepEqual(
      listing.leases.map((l) => [l.node, l.holder]),
      [[lease.node, holder]],
    );
    await lease.release();
    await assert.rejects(leaseNode(pool, { key: "nul\0", ttlMs: 1000, skewMs: 100 }), {
      name: "RangeError",
      message: '"nul\\u0000" holds a NUL character, which PostgreSQL text cannot',
    });
  });
});

test("a restore from an older base backup under a live holder: the next holder is fenced after it, no ID twice", async () => {
  const own = await startStore("pg-pool");
  const a = await connectPostgres("pg-pool", own.url);
  const b = await connectPostgres("pg-pool", own.url);
  try {
    const l = layout(0); // one node id: the next holder must get the restored holder's id
    const opts = { key: space("restore"), layout: l, ttlMs: 1500, skewMs: 200, renewEveryMs: 100 };
    (await leaseNode(a.client, opts)).release();
    await sleep(opts.ttlMs + opts.skewMs + 50); // the new space's guard has passed
    // The backup knows the space and its released id, not the next lease.
    const backup = own.baseBackup();
    const old = await leaseNode(a.client, opts);
    const oldIds = issueFor(old.generator(), 2500);
    await sleep(300);
    await own.restore(backup);
    const fence = old.until;
    const next = await until(
      "a lease of the restored id",
      // Refused while the id is held; a pooled connection the restart cut fails once.
      () =>
        leaseNode(b.client, opts).catch((e) =>
          /are leased|terminated/.test(e.message) ? undefined : Promise.reject(e),
        ),
      5000,
    );
    assert.ok(next.notBefore >= fence, `notBefore ${next.notBefore} is after the old holder's fence ${fence}`);
    const newIds = await issueFor(next.generator(), 1500);
    await until("the old holder stops", () => old.state !== "live", 3000);
    assert.equal(old.state, "lost");
    const ids = await oldIds;
    assert.ok(ids.length > 1000 && newIds.length > 1000, `${ids.length} and ${newIds.length} IDs`);
    assertDisjoint([ids, newIds], "restored holder and next holder");
    assert.ok(decode(newIds[0], l).timeMs > next.notBefore);
    await next.release();
  } finally {
    await a.close();
    await b.close();
    await own.stop();
  }
});

test("Node and Rust holders share one space: one layout text, distinct ids, no ID twice", async (t) => {
  if (!existsSync(RUST_WORKER)) {
    assert.fail(
      `${RUST_WORKER} is missing: cargo build -p snowdrift-lease --release --example fleet_worker --features postgres`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-mixed-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const key = space("mixed");
  const out = join(dir, "rust.ids");
  await withStore("pg-pool", server, async (pool) => {
    const opts = { key, layout: layout(1), ttlMs: 1000, skewMs: 200 };
    const node = await leaseNode(pool, opts);
    const rust = child(RUST_WORKER, [
      "--postgres",
      server.url,
      "--space",
      key,
      "--node-bits",
      "1",
      "--ttl-ms",
      "1000",
      "--skew-ms",
      "200",
      "--seconds",
      "2",
      "--out",
      out,
    ]);
    const nodeIds = await issueFor(node.generator(), 2000);
    const r = await rust;
    assert.equal(r.code, 0, r.err);
    const listing = await list(pool, key);
    await node.release();
    const rustIds = readFileSync(out, "utf8").split("\n").filter(Boolean).map(BigInt);
    assert.ok(rustIds.length > 1000, `${rustIds.length} Rust IDs`);
    assert.deepEqual(new Set(rustIds.map((id) => decode(id, layout(1)).node)), new Set([1 - node.node]));
    assertDisjoint([nodeIds, rustIds], "Node and Rust holders");
    assert.equal(listing.leases.length, 2);
  });
});

test("snowdrift lease --postgres lists a space's leases, as text and JSON", () =>
  withStore("pg-pool", server, async (pool) => {
    const key = space("cli");
    const opts = { key, layout: layout(3), ttlMs: 5000, skewMs: 100, holder: "test holder" };
    const a = await leaseNode(pool, opts);
    const b = await leaseNode(pool, opts);
    await b.release();
    const text = await child(process.execPath, [BIN, "lease", key, "--postgres", server.url]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`space '${key}': 8 node ids, ttl 5000 ms, skew 100 ms`));
    assert.match(text.out, new RegExp(`^\\s*${a.node}\\s+test holder\\s+ends in \\d+\\.\\d s$`, "m"));
    assert.match(text.out, new RegExp(`^\\s*${b.node}\\s+released$`, "m"));
    const json = await child(process.execPath, [BIN, "lease", key, "--postgres", server.url, "--json"]);
    const o = JSON.parse(json.out);
    assert.equal(o.capacity, 8);
    assert.deepEqual(
      o.leases.map((x) => [x.node, x.state, x.holder]),
      [
        [a.node, "live", "test holder"],
        [b.node, "released", null],
      ].sort((x, y) => x[0] - y[0]),
    );
    await a.release();
    const other = await child(process.execPath, [BIN, "lease", key, "--postgres", server.url, "--schema", "other"]);
    assert.equal(other.code, 2);
    assert.match(other.err, /relation "snowdrift_spaces" does not exist|function snowdrift_list\(.*\) does not exist/);
    const port = await freePort();
    const down = await child(process.execPath, [BIN, "lease", key, "--postgres", `postgres://app@127.0.0.1:${port}/x`]);
    assert.equal(down.code, 2);
    assert.match(down.err, new RegExp(`cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    const both = await child(process.execPath, [BIN, "lease", key, "--postgres", server.url, "--redis", "x"]);
    assert.match(both.err, /lease takes --redis or --postgres, not both/);
  }));

test("a pg Client the application also uses: no call of the lease runs inside the application's transaction", () =>
  withStore("pg-client", server, async (client) => {
    const opts = { key: space("shared"), layout: layout(0), ttlMs: 1000, skewMs: 100 };
    const held = await leaseNode(client, opts);
    const theirs = issueFor(held.generator(), 3000);
    const path = async () => (await client.query("SHOW search_path")).rows[0].search_path;
    const appPath = await path();
    // The application's transaction outlasts the lease's TTL, then rolls back.
    await client.query("BEGIN");
    const refused = {
      message:
        "the pg Client is inside a transaction (BEGIN without COMMIT or ROLLBACK): a lease runs each call as a transaction of its own; pass a pg Pool, or a Client the lease uses alone",
    };
    await assert.rejects(leaseNode(client, { ...opts, key: space("in-transaction") }), refused);
    await assert.rejects(list(client, opts.key), refused);
    await assert.rejects(setup(client), refused); // setup.sql would commit the application's transaction
    await client.query("ROLLBACK");
    // A transaction at another isolation that already ran a query: refused too.
    await client.query("BEGIN ISOLATION LEVEL SERIALIZABLE");
    await client.query("SELECT 1");
    await assert.rejects(leaseNode(client, { ...opts, key: space("serializable") }), refused);
    await client.query("ROLLBACK");
    await client.query("BEGIN");
    for (let i = 0; i < 3; i++) {
      await sleep(500);
      assert.equal(await path(), appPath, "the application's transaction keeps its search_path");
    }
    const next = await withStore("pg-pool", server, async (pool) => {
      await pool.query("SELECT 1"); // a connection ready
      await client.query("ROLLBACK");
      // At once, as a service starting just then would.
      const next = await until(
        "a lease of the id",
        () => leaseNode(pool, opts).catch((e) => (/are leased/.test(e.message) ? undefined : Promise.reject(e))),
        3000,
      );
      const ours = await issueFor(next.generator(), 1000);
      await next.release();
      return ours;
    });
    assert.equal(held.state, "lapsed");
    assertDisjoint([await theirs, next], "the shared Client's holder and the next holder");
  }));

test("a pg Pool without an 'error' listener: idle connections dying do not end the process, and the lease renews on", async () => {
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  try {
    const held = await leaseNode(pool, {
      key: space("idle"),
      layout: layout(2),
      ttlMs: 1500,
      skewMs: 100,
      renewEveryMs: 100,
    });
    await until("an idle pooled connection", () => pool.idleCount > 0, 2000);
    server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'");
    const until0 = held.until;
    await until("a renewal after the connections died", () => held.until > until0, 3000);
    assert.equal(held.state, "live");
    await held.release();
  } finally {
    await pool.end();
  }
});

test("a server that accepts and never answers: leaseNode rejects by ttl - skew, saying so", async () => {
  const sockets = new Set();
  const silent = createServer((s) => sockets.add(s));
  await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const pool = new pg.Pool({ host: "127.0.0.1", port: silent.address().port, user: "app", database: "app" });
  try {
    const key = space("silent");
    await assert.rejects(leaseNode(pool, { key, ttlMs: 1000, skewMs: 100 }), {
      message: `acquire of a node id of '${key}' got no reply within 900 ms (ttl - skew)`,
    });
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
    await pool.end();
  }
});

test("a schema never set up, or a role without rights on it: the error names the schema and what to run", async () => {
  /** Rejects with the message naming `schema`, ending with what PostgreSQL said (`said`). */
  const notSetUp = (p, schema, said) =>
    assert.rejects(p, (e) => {
      const start = `the snowdrift lease functions are not in schema "${schema}", or this role may not use them: run setup (setup() of snowdrift/postgres, or lease/postgres/setup.sql) for that schema, or grant this role USAGE on the schema and the rights on its tables (PostgreSQL: `;
      assert.ok(e.message.startsWith(start), e.message);
      assert.match(e.message.slice(start.length), said);
      return true;
    });
  const missing = /^function snowdrift_acquire\(.*\) does not exist\)$/;
  const opts = { key: space("unset"), layout: layout(2), ttlMs: 1000, skewMs: 100 };
  await withStore("pg-pool", server, (pool) =>
    notSetUp(leaseNode(pool, { ...opts, schema: "nowhere" }), "nowhere", missing),
  );
  server.psql("CREATE ROLE other LOGIN");
  const other = await connectPostgres("pg-pool", server.url.replace(`${ROLE}@`, "other@"));
  try {
    await notSetUp(leaseNode(other.client, opts), "snowdrift", missing);
    server.psql("GRANT USAGE ON SCHEMA snowdrift TO other");
    await notSetUp(leaseNode(other.client, opts), "snowdrift", /^permission denied for table snowdrift_spaces\)$/);
  } finally {
    await other.close();
  }
});

test("a database whose defaults are serializable and read-only: 64 racers share 32 ids, the rest are told all are leased", async () => {
  server.psql(`CREATE DATABASE strict OWNER ${ROLE}`);
  server.psql("ALTER DATABASE strict SET default_transaction_isolation = 'serializable'");
  server.psql("ALTER DATABASE strict SET default_transaction_read_only = on");
  const { client: pool, close } = await connectPostgres("pg-pool", server.url.replace(/postgres$/, "strict"));
  try {
    await setup(pool);
    const opts = { key: space("racers"), layout: layout(5), ttlMs: 2000, skewMs: 100 };
    const results = await Promise.allSettled(Array.from({ length: 64 }, () => leaseNode(pool, opts)));
    const won = results.filter((r) => r.status === "fulfilled").map((r) => r.value);
    const refused = results.filter((r) => r.status === "rejected").map((r) => r.reason.message);
    assert.deepEqual(new Set(refused), new Set([`all 32 node ids of '${opts.key}' are leased`]));
    assert.equal(new Set(won.map((l) => l.node)).size, 32);
    await Promise.all(won.map((l) => l.release()));
  } finally {
    await close();
  }
});
