// `snowdrift/redis` under the attacks an independent review made that the protocol held:
// kept as tests so it goes on holding. Acquires racing from many connections, a holder
// stopped (SIGSTOP) past its TTL and resumed while the next holder runs, Redis paused
// (CLIENT PAUSE) past the lapse, renewal replies lost, SCRIPT FLUSH under a holder, and
// ticks longer than 1 ms handed on without overlap.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { leaseNode } from "snowdrift/redis";
import { decode } from "snowdrift";
import { startServer, sleep } from "./redis-server.mjs";
import { assertDisjoint, issueFor, leaseWhenFree, until, withClient } from "./holders.mjs";
import { connect } from "./clients.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const layout = (nodeBits, extra = {}) => ({
  timeBits: 41,
  nodeBits,
  sequenceBits: 12,
  epochMs: 1704067200000,
  ...extra,
});
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

test("64 connections racing acquires on a 5-bit space: 32 distinct ids, 32 refusals", async () => {
  const conns = await Promise.all(Array.from({ length: 64 }, () => connect("redis", server.port)));
  try {
    const key = space("race");
    const opts = { key, layout: layout(5), ttlMs: 2000, skewMs: 100 };
    const results = await Promise.allSettled(conns.map(({ client }) => leaseNode(client, opts)));
    const leases = results.filter((r) => r.status === "fulfilled").map((r) => r.value);
    const refused = results.filter((r) => r.status === "rejected");
    assert.deepEqual(
      leases.map((l) => l.node).sort((a, b) => a - b),
      Array.from({ length: 32 }, (_, i) => i),
    );
    assert.equal(refused.length, 32);
    for (const r of refused) assert.equal(r.reason.message, `all 32 node ids of '${key}' are leased`);
    await Promise.all(leases.map((l) => l.release()));
  } finally {
    for (const c of conns) c.close();
  }
});

test("a holder stopped (SIGSTOP) past its TTL and resumed while the next holder of its id runs: no ID twice", async () => {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-sigstop-"));
  const out = join(dir, "ids.txt");
  const key = space("sigstop");
  const opts = { key, layout: layout(0), ttlMs: 600, skewMs: 100 };
  const worker = spawn(
    process.execPath,
    [
      join(here, "worker.mjs"),
      "--redis",
      `127.0.0.1:${server.port}`,
      "--space",
      key,
      "--node-bits",
      "0",
      "--ttl-ms",
      "600",
      "--skew-ms",
      "100",
      "--seconds",
      "5",
      "--out",
      out,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise((resolve) => worker.once("exit", resolve));
  const { client, close } = await connect("redis", server.port);
  try {
    await until(
      "the worker issues",
      () => {
        try {
          return readFileSync(out, "utf8").length > 0;
        } catch {
          return false;
        }
      },
      5000,
    );
    worker.kill("SIGSTOP");
    await sleep(100);
    const next = await leaseWhenFree(client, opts, 3000);
    worker.kill("SIGCONT"); // it wakes with a stale lease while the next holder issues
    const ours = await issueFor(next.generator({ onClockBackwards: "borrow" }), 1000);
    await next.release();
    await exited;
    const theirs = readFileSync(out, "utf8").split("\n").filter(Boolean).map(BigInt);
    assert.ok(ours.length > 1000 && theirs.length > 1000, `${ours.length} and ${theirs.length} IDs`);
    assertDisjoint([theirs, ours], "the resumed holder and the next one");
  } finally {
    if (worker.exitCode === null) worker.kill("SIGKILL");
    close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Redis paused (CLIENT PAUSE) past the lapse: the holder stops, the next holder takes over after its fence, no ID twice", async () => {
  const { client, close } = await connect("redis", server.port);
  const other = await connect("redis", server.port);
  try {
    const key = space("pause");
    const opts = { key, layout: layout(0), ttlMs: 600, skewMs: 100, renewEveryMs: 150 };
    const a = await leaseNode(client, opts);
    const genA = a.generator({ onClockBackwards: "borrow" });
    const before = await issueFor(genA, 100);
    await server.cli("CLIENT", "PAUSE", "900", "ALL");
    const during = await issueFor(genA, 900);
    assert.equal(a.state, "lapsed", "no renewal for ttl - skew: the holder stopped");
    const b = await leaseWhenFree(other.client, opts, 3000);
    assert.ok(
      b.notBefore >= a.until - 1,
      `the next holder starts after the old fence (${b.notBefore} >= ${a.until} - 1)`,
    );
    const after = await issueFor(b.generator(), 300);
    assert.ok(after.length > 1000);
    assertDisjoint([[...before, ...during], after], "before and after the pause");
    await b.release();
    await a.release();
  } finally {
    close();
    other.close();
  }
});

test("renewal replies lost on the way back: the holder lapses by its own count, and the next holder waits for the fence Redis recorded", async () => {
  await withClient("redis", server.port, async (client) => {
    // The renewals run on Redis, but their replies never reach the holder.
    // (Renew and release take five arguments, acquire seven.)
    let drop = false;
    const lossy = (call) => async (body, o) => {
      const reply = await call(body, o);
      if (drop && o.arguments.length === 5) throw new Error("connection reset");
      return reply;
    };
    const lossyClient = { evalSha: lossy((b, o) => client.evalSha(b, o)), eval: lossy((b, o) => client.eval(b, o)) };
    const key = space("lostreply");
    const opts = { key, layout: layout(0), ttlMs: 600, skewMs: 100, renewEveryMs: 150 };
    const a = await leaseNode(lossyClient, opts);
    const genA = a.generator({ onClockBackwards: "borrow" });
    drop = true;
    const idsA = await issueFor(genA, 700);
    assert.equal(a.state, "lapsed");
    const fence = Number(await server.cli("ZSCORE", `{${key}}:ends`, "0"));
    assert.ok(fence > a.until, "Redis moved the fence the holder never heard of");
    const b = await leaseWhenFree(client, opts, 3000);
    assert.ok(b.notBefore >= fence - 1);
    const idsB = await issueFor(b.generator(), 200);
    assertDisjoint([idsA, idsB], "the holder whose replies were lost and the next one");
    await b.release();
  });
});

test("SCRIPT FLUSH under a holder: its renewals load the script again and it stays live", async () => {
  await withClient("redis", server.port, async (client) => {
    const a = await leaseNode(client, {
      key: space("flush"),
      layout: layout(3),
      ttlMs: 600,
      skewMs: 100,
      renewEveryMs: 150,
    });
    const gen = a.generator();
    await server.cli("SCRIPT", "FLUSH");
    const until0 = a.until;
    await sleep(500);
    assert.equal(a.state, "live");
    assert.ok(a.until > until0, "renewals went on");
    assert.ok(gen.next() > 0n);
    await a.release();
  });
});

test("10 ms ticks: a release and a reclaim hand the id on without a shared tick", async () => {
  await withClient("redis", server.port, async (client) => {
    const l = layout(0, { unitMs: 10 });
    const opts = { key: space("ticks"), layout: l, ttlMs: 600, skewMs: 100, renewEveryMs: 150 };
    const a = await leaseNode(client, opts);
    const idsA = await issueFor(a.generator({ onClockBackwards: "borrow" }), 200);
    await a.release();
    const b = await leaseWhenFree(client, opts, 2000);
    const idsB = await issueFor(b.generator({ onClockBackwards: "borrow" }), 200);
    const tick = (id) => decode(id, l).timeMs;
    const lastA = idsA.reduce((m, id) => (id > m ? id : m), 0n);
    assert.ok(
      idsB.every((id) => tick(id) > tick(lastA)),
      "the next holder's ticks all come after the last one released",
    );
    // Not released: the next holder waits for the fence, and starts in a later tick.
    await b.release();
    const gone = await connect("redis", server.port);
    const c = await leaseWhenFree(gone.client, opts, 2000);
    const idsC = await issueFor(c.generator({ onClockBackwards: "borrow" }), 100);
    gone.close();
    await until("the unreleased lease lapses", () => c.state === "lapsed", 2000);
    const d = await leaseWhenFree(client, opts, 3000);
    const idsD = await issueFor(d.generator({ onClockBackwards: "borrow" }), 200);
    const lastC = idsC.reduce((m, id) => (id > m ? id : m), 0n);
    assert.ok(
      idsD.every((id) => tick(id) > tick(lastC)),
      "after a reclaim too",
    );
    assertDisjoint([idsA, idsB, idsC, idsD], "four holders of one id");
    await d.release();
  });
});
