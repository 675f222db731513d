// `snowdrift/redis` and `snowdrift/postgres` against real redis-server and PostgreSQL
// processes, with node-redis, ioredis, pg pools and pg clients: distinct node ids,
// reclaiming, handing on, lapsing, settings conflicts (every store); data loss, option
// errors, a cluster, process exit and signals, and the `snowdrift lease` command (Redis).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { leaseNode } from "snowdrift/redis";
import { decode } from "snowdrift";
import { prometheusText } from "snowdrift/metrics";
import { startServer, startCluster, freePort, sleep } from "./redis-server.mjs";
import { KINDS, connect, connectCluster } from "./clients.mjs";
import { leaseWhenFree, runChild, until, withClient as withClientAt } from "./holders.mjs";
import { STORE_KINDS, connectTo, fencesOf, leaseFor, startStore, withStore } from "./stores.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, "../../wasm/pkg/bin/snowdrift.cjs");
const layout = (nodeBits) => ({ timeBits: 41, nodeBits, sequenceBits: 12, epochMs: 1704067200000 });
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;
const timeOf = (id, l) => decode(id, l).timeMs;

let server;
let postgres;
before(async () => {
  server = await startServer();
  postgres = await startStore("pg-pool");
});
after(async () => {
  await server?.stop();
  await postgres?.stop();
});
/** This file's server for the kind's store. */
const serverOf = (kind) => (kind.startsWith("pg-") ? postgres : server);

/** Runs `f(client)` with a fresh client of `kind` (on this file's server unless `port`). */
const withClient = (kind, f, port = server.port) => withClientAt(kind, port, f);

/** Makes the space `opts.key` and waits out a new space's guard (its first leases are
 * fenced after `ttlMs + skewMs`), so that the next lease issues at the clock's time. */
async function warm(opts, kind = "redis") {
  await withStore(kind, serverOf(kind), async (client) => (await leaseFor(kind)(client, opts)).release());
  await sleep(opts.ttlMs + opts.skewMs + 50);
}

/** Runs a node child process; resolves with its exit code, signal and output. */
const child = (args, options) => runChild(process.execPath, args, options);

for (const kind of STORE_KINDS) {
  const leaseNode = leaseFor(kind);
  const withClient = (_, f) => withStore(kind, serverOf(kind), f);
  test(`${kind}: 32 concurrent acquirers of a 5-bit space get 32 distinct ids; the 33rd is refused`, () =>
    withClient(kind, async (client) => {
      const key = space("full");
      const opts = { key, layout: layout(5), ttlMs: 1000, skewMs: 100 };
      const leases = await Promise.all(Array.from({ length: 32 }, () => leaseNode(client, opts)));
      assert.deepEqual(
        leases.map((l) => l.node).sort((a, b) => a - b),
        Array.from({ length: 32 }, (_, i) => i),
      );
      await assert.rejects(leaseNode(client, opts), {
        name: "RangeError",
        message: `all 32 node ids of '${key}' are leased`,
      });
      // Each generator issues IDs of its own node.
      for (const l of leases.slice(0, 3)) assert.equal(decode(l.generator().next(), layout(5)).node, l.node);
      await Promise.all(leases.map((l) => l.release()));
      assert.ok(leases.every((l) => l.state === "released"));
    }));

  test(`${kind}: expired leases are reclaimed oldest first, after their fences`, async () => {
    const key = space("reclaim");
    const l = layout(2);
    // A TTL long enough that an acquire's bound (ttl - skew) holds on a busy machine.
    const opts = { key, layout: l, ttlMs: 1500, skewMs: 100, renewEveryMs: 300 };
    // Four leases whose client goes away: they are never released, so they expire.
    const gone = await connectTo(kind, serverOf(kind));
    const old = [];
    for (let i = 0; i < 4; i++) {
      old.push(await leaseNode(gone.client, opts));
      await sleep(30);
    }
    gone.close();
    await until("old leases lapse", () => old.every((x) => x.state === "lapsed"), 5000);
    const fences = await fencesOf(kind, serverOf(kind), key);
    assert.equal(fences.length, 4);
    await sleep(Math.max(0, Math.max(...fences.map((f) => f.fence)) - Date.now()) + 50);
    await withClient(kind, async (client) => {
      for (const { node, fence } of fences) {
        const lease = await leaseNode(client, opts);
        assert.equal(lease.node, node, "the id whose lease ended longest ago comes first");
        assert.ok(
          lease.notBefore >= fence - 1,
          `notBefore ${lease.notBefore} is at or after the old fence ${fence} - 1`,
        );
        const first = lease.generator().next();
        assert.ok(timeOf(first, l) > lease.notBefore, `first ID at ${timeOf(first, l)} after ${lease.notBefore}`);
      }
      await assert.rejects(leaseNode(client, opts), /are leased/);
    });
  });

  test(`${kind}: a release hands the id on at once, and the next holder's IDs are higher`, () =>
    withClient(kind, async (client) => {
      const key = space("handoff");
      const l = layout(0); // one node id
      const opts = { key, layout: l, ttlMs: 1000, skewMs: 100 };
      await warm(opts, kind);
      const a = await leaseNode(client, opts);
      const genA = a.generator({ onClockBackwards: "borrow" });
      let last;
      for (let i = 0; i < 5000; i++) last = genA.next();
      await a.release();
      assert.throws(() => genA.next(), /fence/);
      const t0 = performance.now();
      const b = await leaseWhenFree(client, opts, 500, leaseNode);
      assert.ok(performance.now() - t0 < 500, "no waiting for the TTL");
      assert.equal(b.node, a.node);
      assert.ok(b.notBefore >= timeOf(last, l), `notBefore ${b.notBefore} covers the last ID at ${timeOf(last, l)}`);
      const first = b.generator().next();
      assert.ok(first > last, `${first} > ${last}`);
      await b.release();
    }));

  test(`${kind}: a new space's first lease renews early while its generator is near the fence`, () =>
    withClient(kind, async (client) => {
      // Fenced a TTL ahead of the store's clock, the first lease of a new space gets ID time
      // only from renewals: 2,000,000 IDs (about 490 ms of ID time) need several, long
      // before the regular one every ttl / 3 (10 s).
      const opts = { key: space("ahead"), layout: layout(3), ttlMs: 30_000, skewMs: 100 };
      const lease = await leaseNode(client, opts);
      const gen = lease.generator();
      let last = 0n;
      let issued = 0;
      let refused = 0;
      const deadline = performance.now() + 5000;
      while (issued < 2_000_000 && performance.now() < deadline) {
        try {
          const batch = gen.nextBatch(50_000);
          assert.ok(batch[0] > last, "IDs go up");
          last = batch[batch.length - 1];
          issued += batch.length;
        } catch (e) {
          assert.match(e.message, /is not before the fence at/);
          refused++;
          await sleep(20);
        }
      }
      assert.equal(issued, 2_000_000, `issued ${issued} in 5 s (${refused} calls refused at the fence)`);
      assert.ok(timeOf(last, opts.layout) < lease.until);
      await lease.release();
    }));

  test(`${kind}: renewals keep a lease; when they fail it lapses by ttl - skew and its generator stops`, async () => {
    const own = await startStore(kind);
    const { client, close } = await connectTo(kind, own);
    try {
      const opts = { key: space("lapse"), layout: layout(3), ttlMs: 2000, skewMs: 500, renewEveryMs: 500 };
      const lease = await leaseNode(client, opts);
      const gen = lease.generator();
      const until0 = lease.until;
      await sleep(4200); // more than two TTLs
      assert.equal(lease.state, "live");
      assert.ok(lease.until > until0 + 2000, "the fence moved forward");
      const renewing = lease.health();
      assert.equal(renewing.state, "ok");
      assert.ok(renewing.renewals >= 1 && renewing.renewalFailures === 0, JSON.stringify(renewing));
      gen.next();
      await own.stop();
      const stopped = performance.now();
      // The last successful renewal was sent before the stop: by ttl - skew after it
      // (plus up to 400 ms for timers on a busy machine: still before the lease's end)
      // the generator refuses.
      await until(
        "the generator stops",
        () => {
          try {
            gen.next();
            return false;
          } catch (e) {
            assert.match(e.message, /is not before the fence at/);
            return true;
          }
        },
        1500 + 400,
      );
      assert.ok(performance.now() - stopped <= 1500 + 400);
      assert.equal(lease.state, "lapsed");
      assert.equal(
        lease.error.message,
        `lease of node ${lease.node} of '${opts.key}' lapsed: no renewal succeeded for 1500 ms (ttl 2000 ms, skew 500 ms)`,
      );
      // (node-redis queues a renewal while Redis is away: it gets no answer, which is no
      // failure, and the lease turns late, then lapses.)
      assert.equal(lease.health().state, "lapsed");
      assert.match(prometheusText(), new RegExp(`\nsnowdrift_lease_lapses_total\\{space="${opts.key}"\\} 1\n`));
      assert.ok(lease.signal.aborted);
      assert.equal(lease.signal.reason, lease.error);
      await sleep(100);
      assert.throws(() => gen.next(), /fence/);
      await lease.release().catch(() => {}); // the store is down: the release cannot reach it
      assert.throws(() => gen.next(), /fence/);
    } finally {
      await close();
      await own.stop();
    }
  });
}

for (const kind of KINDS) {
  test(`${kind}: after Redis loses its data the old holder is lost and a new lease is fenced after it`, async () => {
    const own = await startServer();
    const { client, close } = await connect(kind, own.port);
    try {
      const l = layout(3);
      // A TTL long enough that the restart and the reconnect (slow on a loaded machine) end
      // well before the lapse: the holder is stopped by the LOST reply, not by its lapse.
      const opts = { key: space("loss"), layout: l, ttlMs: 4000, skewMs: 200, renewEveryMs: 150 };
      const a = await leaseNode(client, opts);
      const genA = a.generator();
      const issued = [];
      for (let i = 0; i < 1000; i++) issued.push(genA.next());
      await own.restart();
      await until("the old holder sees it is lost", () => a.state !== "live", 6000);
      assert.equal(a.state, "lost", "stopped by the LOST reply, before its lapse");
      assert.equal(a.health().state, "lost");
      assert.match(prometheusText(), new RegExp(`\nsnowdrift_lease_lost_total\\{space="${opts.key}"\\} 1\n`));
      assert.match(a.error.message, /is no longer held by this lease/);
      assert.throws(() => genA.next(), /fence/);
      const b = await leaseNode(client, opts);
      assert.ok(b.notBefore >= a.until - 1, `notBefore ${b.notBefore} >= old fence ${a.until} - 1`);
      const genB = b.generator();
      const seen = new Set(issued);
      for (let i = 0; i < 1000; i++) {
        const id = genB.next();
        assert.ok(!seen.has(id));
        assert.ok(timeOf(id, l) > b.notBefore);
      }
      await a.release(); // never throws for a lost lease
      await b.release();
    } finally {
      close();
      await own.stop();
    }
  });
}

test("a lease whose generator was freed: release still hands the id on from its newest ID, and the freed generator answers with a clear error", () =>
  withClient("redis", async (client) => {
    const key = space("freed");
    const l = layout(0);
    const opts = { key, layout: l, ttlMs: 1000, skewMs: 100 };
    await warm(opts);
    const a = await leaseNode(client, opts);
    const gen = a.generator({ onClockBackwards: "borrow" });
    const last = gen.nextBatch(5000).at(-1);
    gen.free();
    await a.release();
    assert.equal(a.state, "released");
    assert.throws(() => gen.next(), /this generator was freed/);
    assert.throws(() => a.generator(), /was released/);
    const b = await leaseWhenFree(client, opts, 500);
    assert.ok(b.notBefore >= timeOf(last, l), `notBefore ${b.notBefore} covers the last ID at ${timeOf(last, l)}`);
    assert.ok(b.generator().next() > last);
    await b.release();
  }));

test("option errors name the value and the allowed range, before any call to Redis", async () => {
  let calls = 0;
  const fake = { evalSha: async () => calls++, eval: async () => calls++ };
  const cases = [
    [{}, TypeError, "key must be a string, got undefined undefined"],
    [{ key: "" }, RangeError, "key must not be empty"],
    [{ key: "ids:{a}" }, RangeError, "key \"ids:{a}\" must not contain '{' or '}' (the keys' hash tag)"],
    [{ key: "é".repeat(1025) }, RangeError, "key has 1025 characters (allowed 1..=1024)"],
    [{ key: "k", ttlMs: 50 }, RangeError, "ttlMs 50 is outside the allowed range 100..=31536000000"],
    [
      { key: "k", ttlMs: 31_536_000_001 },
      RangeError,
      "ttlMs 31536000001 is outside the allowed range 100..=31536000000",
    ],
    [{ key: "k", ttlMs: 1000, skewMs: 500 }, RangeError, "skewMs 500 is outside the allowed range 0..=499"],
    [
      { key: "k", ttlMs: 1000 },
      RangeError,
      "skewMs 1000 (the default) is outside the allowed range 0..=499 (below ttlMs / 2): give skewMs",
    ],
    [
      { key: "k", ttlMs: 1000, skewMs: 100, renewEveryMs: 900 },
      RangeError,
      "renewEveryMs 900 is outside the allowed range 10..=899",
    ],
    [
      { key: "k", ttlMs: 1000, skewMs: 100, renewEveryMs: 9 },
      RangeError,
      "renewEveryMs 9 is outside the allowed range 10..=899",
    ],
    [{ key: "k", ttlMs: 1.5 }, RangeError, "ttlMs 1.5 is not an integer (allowed 100..=31536000000)"],
    [{ key: "k", layout: "nope" }, RangeError, /unknown layout "nope"/],
    [{ key: "k", holder: 3 }, TypeError, "holder must be a string, got number 3"],
    [{ key: "k", holder: "h".repeat(1025) }, RangeError, "holder has 1025 characters (allowed 0..=1024)"],
    [{ key: "k", ttl: 3 }, RangeError, /unknown leaseNode option "ttl"/],
  ];
  for (const [opts, name, message] of cases) {
    await assert.rejects(leaseNode(fake, opts), (e) => {
      assert.ok(e instanceof name, `${e} is a ${name.name}`);
      if (typeof message === "string") assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    });
  }
  await assert.rejects(leaseNode({}, { key: "k" }), { name: "TypeError", message: /node-redis or ioredis client/ });
  assert.equal(calls, 0);
});

for (const kind of STORE_KINDS) {
  const leaseNode = leaseFor(kind);
  test(`${kind}: a space leased with other settings is refused; one generator per lease`, () =>
    withStore(kind, serverOf(kind), async (client) => {
      const key = space("config");
      const lease = await leaseNode(client, { key, layout: layout(5), ttlMs: 1000, skewMs: 100 });
      await assert.rejects(leaseNode(client, { key, layout: layout(4), ttlMs: 2000, skewMs: 100 }), {
        name: "RangeError",
        message: `space '${key}' leases 32 node ids of layout "time 41 bits of 1 ms from 1704067200000, node 5 bits, sequence 12 bits, node above sequence" for 1000 ms (skew 100 ms); this client asked for 16 node ids of layout "time 41 bits of 1 ms from 1704067200000, node 4 bits, sequence 12 bits, node above sequence" for 2000 ms (skew 100 ms)`,
      });
      assert.throws(() => lease.generator({ node: 1 }), {
        name: "RangeError",
        message: `option "node" is the lease's to set`,
      });
      lease.generator();
      assert.throws(() => lease.generator(), {
        message: `lease of node ${lease.node} of '${key}' already has its generator (one per lease: a second would repeat IDs)`,
      });
      await lease.release();
      await lease.release(); // idempotent
    }));
}

for (const kind of KINDS) {
  test(`${kind} cluster: 8 acquirers of a 3-bit space, renewals, release; snowdrift lease follows MOVED`, async () => {
    const cluster = await startCluster();
    const { client, close } = await connectCluster(kind, cluster.nodes);
    try {
      const key = space("cluster");
      const opts = { key, layout: layout(3), ttlMs: 500, skewMs: 100 };
      const leases = await Promise.all(Array.from({ length: 8 }, () => leaseNode(client, opts)));
      assert.deepEqual(leases.map((l) => l.node).sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
      await assert.rejects(leaseNode(client, opts), { message: `all 8 node ids of '${key}' are leased` });
      const gens = leases.map((l) => l.generator());
      await sleep(1200);
      assert.ok(leases.every((l) => l.state === "live"));
      for (const g of gens) g.next();
      // The command asks each node in turn: two of three answer with MOVED.
      for (const n of cluster.nodes) {
        const r = await child([BIN, "lease", key, "--redis", `redis://127.0.0.1:${n.port}`, "--json"]);
        assert.equal(r.code, 0, r.err);
        assert.equal(JSON.parse(r.out).leases.filter((x) => x.state === "live").length, 8);
      }
      await Promise.all(leases.map((l) => l.release()));
      await sleep(20);
      const again = await leaseNode(client, opts);
      assert.ok(again.node >= 0 && again.node < 8);
      await again.release();
    } finally {
      close();
      await cluster.stop();
    }
  });
}

test("a process that leases and does not release still exits on its own, releasing at exit", async () => {
  const key = space("exit");
  await warm({ key, layout: layout(0), ttlMs: 1500, skewMs: 100 });
  const script = `
    import { createClient } from "redis";
    import { leaseNode } from "snowdrift/redis";
    const client = createClient({ url: "${server.url}" });
    await client.connect();
    const lease = await leaseNode(client, { key: "${key}", layout: { timeBits: 41, nodeBits: 0, sequenceBits: 12, epochMs: 1704067200000 }, ttlMs: 1500, skewMs: 100 });
    lease.generator().next();
    client.unref();
    console.log(lease.node);`;
  const r = await child(["--input-type=module", "-e", script]);
  assert.equal(r.code, 0, r.err);
  // Released at exit: its holder is gone, and the id is leased again at once.
  assert.equal(await server.cli("HGET", `{${key}}:holder`, "0"), "");
  await withClient("redis", async (client) => {
    const lease = await leaseWhenFree(client, { key, layout: layout(0), ttlMs: 1500, skewMs: 100 }, 500);
    await lease.release();
  });
});

test("SIGTERM releases the lease, then ends the process as SIGTERM does", async () => {
  const key = space("sigterm");
  await warm({ key, layout: layout(0), ttlMs: 1500, skewMs: 100 });
  const script = `
    const { createClient } = require("redis");
    const { leaseNode } = require("snowdrift/redis");
    (async () => {
      const client = createClient({ url: "${server.url}" });
      await client.connect();
      const lease = await leaseNode(client, { key: "${key}", layout: { timeBits: 41, nodeBits: 0, sequenceBits: 12, epochMs: 1704067200000 }, ttlMs: 1500, skewMs: 100 });
      lease.generator().next();
      console.log("leased", lease.node);
    })();`;
  const r = await child(["-e", script], { onLine: (line, c) => line.startsWith("leased") && c.kill("SIGTERM") });
  assert.equal(r.signal, "SIGTERM", r.err);
  assert.match(r.out, /leased 0/);
  await withClient("ioredis", async (client) => {
    const t0 = performance.now();
    const lease = await leaseWhenFree(client, { key, layout: layout(0), ttlMs: 1500, skewMs: 100 }, 500);
    assert.equal(lease.node, 0);
    assert.ok(performance.now() - t0 < 500);
    await lease.release();
  });
});

test("snowdrift lease lists a space's leases, as text and JSON", async () => {
  const key = space("cli");
  await withClient("redis", async (client) => {
    const opts = { key, layout: layout(3), ttlMs: 5000, skewMs: 100, holder: "test holder" };
    const a = await leaseNode(client, opts);
    const b = await leaseNode(client, opts);
    await b.release();
    const text = await child([BIN, "lease", key, "--redis", server.url]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`space '${key}': 8 node ids, ttl 5000 ms, skew 100 ms`));
    assert.match(text.out, new RegExp(`^\\s*${a.node}\\s+test holder\\s+ends in \\d+\\.\\d s$`, "m"));
    assert.match(text.out, new RegExp(`^\\s*${b.node}\\s+released$`, "m"));
    const json = await child([BIN, "lease", key, "--redis", server.url, "--json"]);
    const o = JSON.parse(json.out);
    assert.equal(o.capacity, 8);
    const byNode = (x, y) => x[0] - y[0];
    assert.deepEqual(
      o.leases.map((x) => [x.node, x.state, x.holder]).sort(byNode),
      [
        [a.node, "live", "test holder"],
        [b.node, "released", null],
      ].sort(byNode),
    );
    await a.release();
  });
  const empty = await child([BIN, "lease", space("none"), "--redis", server.url]);
  assert.match(empty.out, /has no leases/);
  const port = await freePort();
  const down = await child([BIN, "lease", key, "--redis", `redis://127.0.0.1:${port}`]);
  assert.notEqual(down.code, 0);
  assert.match(down.err, new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
});
