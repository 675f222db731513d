// `snowdrift/redis` when the store itself misbehaves: two live holders of one node id must
// never issue the same ID, whatever Redis loses. Each test reproduces a way an earlier
// version of the protocol issued duplicates: a space mixing layouts, a late grant to a
// host whose clock is behind after data loss, a key evicted on its own, a restart from an
// older snapshot, a failover to a replica that had not caught up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leaseNode } from "snowdrift/redis";
import { startServer, sleep } from "./redis-server.mjs";
import { KINDS, connect } from "./clients.mjs";
import { assertDisjoint, later } from "./holders.mjs";

const layout = (nodeBits, epochMs = 1704067200000) => ({ timeBits: 41, nodeBits, sequenceBits: 12, epochMs });
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;
const OPTS = { ttlMs: 600, skewMs: 100, renewEveryMs: 150 };

let shared; // a server for the tests that need no server of their own
before(async () => {
  shared = await startServer();
});
after(async () => {
  await shared?.stop();
});

/** A server of its own and a client; `f(server, client)`; both closed after. */
async function withServer(f, { extra = [], dir } = {}) {
  const server = await startServer({ extra, dir });
  const { client, close } = await connect("redis", server.port);
  try {
    return await f(server, client);
  } finally {
    close();
    await server.stop();
  }
}

/**
 * Issues from each generator every 2 ms (batches of 64; a refusal, such as a fence, is
 * counted, not thrown) while `during()` runs, and then for `tailMs` more. Returns the IDs
 * of each generator.
 */
async function issueWhile(gens, during, tailMs = 300) {
  const ids = gens.map(() => []);
  let done = false;
  const loop = (async () => {
    for (let i = 0; i < 100_000 && !done; i++) {
      gens.forEach((g, k) => {
        try {
          ids[k].push(...g.nextBatch(64));
        } catch {
          // stopped by its fence (lapsed, lost) or not yet usable
        }
      });
      await sleep(2);
    }
  })();
  try {
    await during();
    await sleep(tailMs);
  } finally {
    done = true;
    await loop;
  }
  return ids;
}

for (const kind of KINDS) {
  test(`${kind}: a space is leased with one whole layout: another epoch, tick or field order of the same node width is refused, naming both`, async () => {
    const { client, close } = await connect(kind, shared.port);
    try {
      const key = space("layouts");
      const lease = await leaseNode(client, { key, layout: layout(5), ttlMs: 1000, skewMs: 100 });
      const mine = "time 41 bits of 1 ms from 1704067200000, node 5 bits, sequence 12 bits, node above sequence";
      const others = [
        [
          layout(5, 1288834974657),
          "time 41 bits of 1 ms from 1288834974657, node 5 bits, sequence 12 bits, node above sequence",
        ],
        [
          { ...layout(5), unitMs: 10 },
          "time 41 bits of 10 ms from 1704067200000, node 5 bits, sequence 12 bits, node above sequence",
        ],
        [
          { ...layout(5), order: "sequence-node" },
          "time 41 bits of 1 ms from 1704067200000, node 5 bits, sequence 12 bits, sequence above node",
        ],
        [
          { ...layout(5), timeBits: 40 },
          "time 40 bits of 1 ms from 1704067200000, node 5 bits, sequence 12 bits, node above sequence",
        ],
      ];
      for (const [other, text] of others) {
        await assert.rejects(leaseNode(client, { key, layout: other, ttlMs: 1000, skewMs: 100 }), {
          name: "RangeError",
          message: `space '${key}' leases 32 node ids of layout "${mine}" for 1000 ms (skew 100 ms); this client asked for 32 node ids of layout "${text}" for 1000 ms (skew 100 ms)`,
        });
      }
      await lease.release();
    } finally {
      close();
    }
  });
}

test("after Redis restarts empty, a host whose clock is 2.5 s behind, leasing once the new space's guard has passed, repeats none of the old holder's IDs", async () => {
  await withServer(async (server, client) => {
    const key = space("late");
    const opts = { key, layout: layout(3), ...OPTS };
    const first = await leaseNode(client, opts); // id 0; the old holder gets id 1
    const a = await leaseNode(client, opts);
    const genA = a.generator({ onClockBackwards: "borrow" });
    const genB = later();
    const [idsA, idsB] = await issueWhile([genA, genB], async () => {
      await sleep(2700); // the old holder issues for longer than the new host's clock is behind
      await server.restart();
      const other = await leaseNode(client, opts); // makes the new space (id 0)
      await sleep(OPTS.ttlMs + OPTS.skewMs + 100); // the new space's guard passes
      const b = await leaseNode(client, { ...opts, clock: () => Date.now() - 2500 });
      assert.equal(b.node, a.node, "the lost data had given this id to the old holder");
      genB.set(b.generator({ onClockBackwards: "borrow" }));
      await other.release();
    });
    await first.release();
    assert.ok(idsA.length > 10_000 && idsB.length > 1000, `${idsA.length} and ${idsB.length} IDs`);
    assertDisjoint([idsA, idsB], "old holder and late host");
  });
});

test("a space key removed on its own (as allkeys-lru eviction does with the meta hash) stops the holders; new leases of their ids repeat nothing", async () => {
  await withServer(async (server, client) => {
    const key = space("evicted");
    const opts = { key, layout: layout(3), ...OPTS };
    const first = await leaseNode(client, opts); // id 0; the holder watched gets id 1
    const a = await leaseNode(client, opts);
    const genA = a.generator({ onClockBackwards: "borrow" });
    const genB = later();
    const [idsA, idsB] = await issueWhile([genA, genB], async () => {
      await sleep(200);
      await server.cli("DEL", `{${key}}:meta`);
      const other = await leaseNode(client, opts); // makes the space again (id 0)
      await sleep(OPTS.ttlMs + OPTS.skewMs + 100); // past its guard
      const b = await leaseNode(client, opts);
      assert.equal(b.node, a.node);
      genB.set(b.generator({ onClockBackwards: "borrow" }));
      await other.release();
    });
    await first.release();
    assert.equal(a.state, "lost", "the old holder stopped");
    assert.ok(idsB.length > 1000, `${idsB.length} IDs from the new holder`);
    assertDisjoint([idsA, idsB], "holders before and after the eviction");
  });
});

test("a restart from an older RDB snapshot: holders whose newest renewals it lacks are stopped, and the ids go to no one else meanwhile", async () => {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-rdb-"));
  try {
    await withServer(
      async (server, client) => {
        const key = space("snapshot");
        const opts = { key, layout: layout(1), ...OPTS };
        const held = [await leaseNode(client, opts), await leaseNode(client, opts)];
        const gens = held.map((l) => l.generator({ onClockBackwards: "borrow" }));
        const genB = later();
        const lists = await issueWhile([...gens, genB], async () => {
          await server.cli("SAVE");
          await sleep(OPTS.ttlMs + 200); // renewals go on; the snapshot's fences pass
          await server.restart(); // loads the snapshot
          const b = await leaseNode(client, opts);
          genB.set(b.generator({ onClockBackwards: "borrow" }));
          await sleep(OPTS.ttlMs + OPTS.skewMs + 300);
        });
        assert.ok(lists[2].length > 1000, `${lists[2].length} IDs from the new holder`);
        assertDisjoint(lists, "holders before and after the restore");
      },
      { dir, extra: ["--dbfilename", "snap.rdb"] },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a failover to a replica that had not caught up: the ids its copy shows as ended go to no one while their holders may still issue", async () => {
  const master = await startServer();
  const replica = await startServer({ extra: ["--replicaof", "127.0.0.1", String(master.port)] });
  const m = await connect("redis", master.port);
  const r = await connect("redis", replica.port);
  try {
    for (let i = 0; i < 100 && !(await replica.cli("INFO", "replication")).includes("master_link_status:up"); i++)
      await sleep(50);
    const key = space("failover");
    const opts = { key, layout: layout(1), ...OPTS };
    const held = [await leaseNode(m.client, opts), await leaseNode(m.client, opts)];
    const gens = held.map((l) => l.generator({ onClockBackwards: "borrow" }));
    const genB = later();
    const lists = await issueWhile([...gens, genB], async () => {
      await master.cli("WAIT", "1", "1000");
      await replica.cli("REPLICAOF", "NO", "ONE"); // the replica stops following: it lags from here
      await sleep(OPTS.ttlMs + 200); // renewals go on at the master; the replica's fences pass
      await master.stop(); // the failover: clients move to the replica
      const b = await leaseNode(r.client, opts);
      genB.set(b.generator({ onClockBackwards: "borrow" }));
      await sleep(OPTS.ttlMs + OPTS.skewMs + 300);
    });
    assert.ok(lists[2].length > 1000, `${lists[2].length} IDs from the new holder`);
    assertDisjoint(lists, "holders at the master and at the promoted replica");
  } finally {
    m.close();
    r.close();
    await replica.stop();
    await master.stop();
  }
});
