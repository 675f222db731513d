// `snowdrift/redis` when the store itself misbehaves: two live holders of one node id must
// never issue the same ID, whatever Redis loses. Each test reproduces a way an earlier
// version of the protocol issued duplicates: a space mixing layouts, a late grant to a
// host whose clock is behind after data loss, a key evicted on its own, a restart from an
// older snapshot, a failover to a replica that had not caught up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Snowdrift, maxIdAt } from "snowdrift";
import { leaseNode, list, redisStore } from "snowdrift/redis";
import { KEY_NAMES } from "../../wasm/js/src/lease/redis-space.mjs";
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

// Each key of a space lost on its own (as `maxmemory` eviction removes keys, one at a
// time), each pair, all four, and one member of each lost while its key stays, under
// each script: the reply PROTOCOL.md gives ("Keys lost"), then the next holder of the id
// (on the same host: the same clock) issues none of the old holder's IDs.
const KEY_TTL = 1000;
const KEY_SKEW = 50;
const ONE_ID = layout(0); // one node id: the next holder of the space holds the old one's id
const ONE_ID_TEXT = "time 41 bits of 1 ms from 1704067200000, node 0 bits, sequence 12 bits, node above sequence";
const keysOf = (key) => Object.fromEntries(KEY_NAMES.map((k) => [k, `{${key}}:${k}`]));

/** The losses: a name and the commands that make it, for a space's keys `k`. */
const LOSSES = [
  ...KEY_NAMES.map((a) => [a, (k) => [["DEL", k[a]]]]),
  ...KEY_NAMES.flatMap((a, i) => KEY_NAMES.slice(i + 1).map((b) => [`${a} and ${b}`, (k) => [["DEL", k[a], k[b]]]])),
  ["all four", (k) => [["DEL", ...Object.values(k)]]],
  ["the id's fence (ZREM ends)", (k) => [["ZREM", k.ends, "0"]]],
  ...["capacity", "ttl", "skew", "created", "next", "layout", "run"].map((f) => [
    `meta's ${f} field (HDEL)`,
    (k) => [["HDEL", k.meta, f]],
  ]),
  ["the id's token (HDEL)", (k) => [["HDEL", k.token, "0"]]],
  ["the id's holder (HDEL)", (k) => [["HDEL", k.holder, "0"]]],
];

/** What a loss leaves: "over" (meta or ends touched: the records may have lost writes and
 * the space starts over), "token" (the id's token gone: its holder is refused), or
 * "kept" (only descriptions for operators gone). */
function lossKind(commands, k) {
  const touched = new Set(commands.flatMap(([, ...args]) => args));
  if (touched.has(k.meta) || touched.has(k.ends)) return "over";
  return touched.has(k.token) ? "token" : "kept";
}

/** The code word of a rejected call, or its value. */
const settle = (p) => p.catch((e) => ({ error: /^\w+/.exec(e.message)?.[0] ?? e.message }));

/** The generator a holder makes from `grant` on a host whose clock reads `clockMs`. */
function holderGenerator(grant, clockMs) {
  const gen = new Snowdrift({
    layout: ONE_ID,
    node: grant.node,
    clock: () => clockMs,
    onClockBackwards: "borrow",
    maxAheadMs: 5000,
    resumeAfter: maxIdAt(grant.notBefore, ONE_ID),
  });
  gen.setFenceMs(grant.until);
  return gen;
}

/** `grant`, once usable: a new space's first leases are usable once renewals move their
 * fence past notBefore (with room for the IDs the tests take). */
async function usableGrant(store, grant, ticket) {
  for (let i = 0; grant.until - grant.notBefore <= 10 && i < 50; i++) {
    await sleep(20);
    grant.until = await store.renew(ticket, KEY_TTL);
  }
  return grant;
}

/** acquire.lua's arguments for the one-id space `key`, with `token`. */
const oneIdArgs = (key, token) => ({
  space: key,
  capacity: 1,
  ttl: KEY_TTL,
  skew: KEY_SKEW,
  token,
  holder: `host ${token}`,
  layout: ONE_ID_TEXT,
});

async function keysLostCell(client, store, { key, lose, script, aheadMs }) {
  const k = keysOf(key);
  const args = (token) => oneIdArgs(key, token);
  const ticketA = { space: key, node: 0, token: "a" };
  const usable = (grant, ticket) => usableGrant(store, grant, ticket);
  const a = await usable(await store.acquire(args("a")), ticketA);
  const clockMs = a.now + aheadMs;
  const genA = holderGenerator(a, clockMs);
  const idsA = [...genA.nextBatch(4096), ...genA.nextBatch(4096)];
  const issued = genA.issuedThroughMs;

  const commands = lose(k);
  for (const c of commands) await client.sendCommand(c);
  const kind = lossKind(commands, k);

  // The script under test, its reply, and the reply PROTOCOL.md gives.
  let b;
  let reply;
  let expected;
  if (script === "acquire") {
    const r = await settle(store.acquire(args("b")));
    if (r.error === undefined) b = r;
    if (kind === "over") {
      reply = r.error === undefined ? { node: r.node, aheadOfClock: r.notBefore - r.now } : r;
      expected = { node: 0, aheadOfClock: KEY_TTL + KEY_SKEW };
    } else {
      // As usual: the id is held until its fence passes (on a loaded machine it may have),
      // then granted after that fence.
      reply = r.error ?? (r.node === 0 && r.notBefore >= a.until - 1 ? "granted after the fence" : r);
      expected = r.error === undefined ? "granted after the fence" : "LEASED";
    }
  } else if (script === "renew") {
    const r = await settle(store.renew(ticketA, KEY_TTL));
    reply = r.error === undefined ? { renewed: r >= a.until } : r;
    expected = kind === "kept" ? { renewed: true } : { error: "LOST" };
  } else if (script === "release") {
    reply = await store.release(ticketA, issued);
    expected = kind === "kept" ? 1 : 0;
  } else {
    const r = await list(client, key);
    const ids = r.leases.map((l) => [l.node, l.holder]);
    const settings = [r.capacity, r.ttlMs, r.skewMs, r.createdMs, r.next];
    reply = settings.every((v) => v === null) && ids.length === 0 ? "no space" : { capacity: r.capacity, ids };
    const gone = (key) => commands.some((c) => c.includes(key));
    const holder = !gone(k.holder) ? "host a" : gone(k.token) ? null : "(description lost)";
    expected = kind === "over" ? "no space" : { capacity: 1, ids: [[0, holder]] };
  }
  // The old holder stops: a holder told LOST never releases; the others do.
  if (script !== "release" && reply.error !== "LOST") await store.release(ticketA, issued);
  // The next holder of the id, as soon as it is free.
  const end = performance.now() + KEY_TTL + KEY_SKEW + aheadMs + 2000;
  while (b === undefined) {
    const r = await settle(store.acquire(args("b")));
    if (r.error === undefined) b = r;
    else if (r.error !== "LEASED" || performance.now() > end) assert.fail(`the next acquire: ${r.error}`);
    else await sleep(20);
  }
  const genB = holderGenerator(await usable(b, { space: key, node: 0, token: "b" }), clockMs);
  const idsB = [...genB.nextBatch(4096), ...genB.nextBatch(4096)];
  assertDisjoint([idsA, idsB], `holder before and after losing ${commands.map((c) => c.join(" ")).join(", ")}`);
  assert.deepEqual(reply, expected, `${script}'s reply`);
}

for (const [flavor, aheadMs] of [
  ["the old holder's clock 800 ms ahead, the space past its guard window", 800],
  ["true clocks, inside a new space's guard window", 0],
]) {
  test(`a space's keys lost one at a time, in pairs or all, or one member lost, under acquire, renew, release and list (${flavor}): each script replies as documented and the next holder repeats none of the old holder's IDs`, {
    concurrency: true,
  }, async (t) => {
    const { client, close } = await connect("redis", shared.port);
    const store = redisStore(client);
    try {
      const cells = LOSSES.flatMap(([what, lose]) =>
        ["acquire", "renew", "release", "list"].map((script) => ({ what, lose, script, key: space("keys"), aheadMs })),
      );
      if (aheadMs > 0) {
        // Spaces made and their id released now, leased again once past their guard.
        for (const c of cells) {
          const g = await store.acquire(oneIdArgs(c.key, "p"));
          await store.release({ space: c.key, node: 0, token: "p" }, g.notBefore);
        }
        await sleep(KEY_TTL + KEY_SKEW + 50);
      }
      await Promise.all(
        cells.map((c) => t.test(`${c.what} lost, then ${c.script}`, () => keysLostCell(client, store, c))),
      );
    } finally {
      close();
    }
  });
}

test("every script checks the space's records with prelude.lua's intact() before it reads or writes a key of them", () => {
  const read = (name) => readFileSync(new URL(`../../lease/lua/${name}.lua`, import.meta.url), "utf8");
  assert.match(read("prelude"), /\nlocal function intact\(meta, ends\)\n/, "prelude.lua defines intact(meta, ends)");
  for (const name of ["acquire", "renew", "release", "list"]) {
    const body = read(name);
    assert.doesNotMatch(body, /local function intact\b/, `${name}.lua uses the prelude's intact()`);
    const call = body.search(/\bintact\(meta, ends\)/);
    const touch = body.search(/redis\.call\('\w+', (meta|ends|tokens|holders)\b/);
    assert.ok(call >= 0 && (touch < 0 || call < touch), `${name}.lua calls intact() before touching a key`);
  }
});

test("calls sent twice (a retry after a lost reply, a replay): a second release writes nothing and answers 0, a renewal after the release answers LOST, a second acquire is refused, and the next holder repeats none of the old holder's IDs", async () => {
  const { client, close } = await connect("redis", shared.port);
  const store = redisStore(client);
  try {
    const key = space("twice");
    const ticketA = { space: key, node: 0, token: "a" };
    const a = await usableGrant(store, await store.acquire(oneIdArgs(key, "a")), ticketA);
    const genA = holderGenerator(a, a.now);
    const idsA = [...genA.nextBatch(4096), ...genA.nextBatch(4096)];
    const issued = genA.issuedThroughMs;
    const [r1, r2] = await Promise.all([store.renew(ticketA, KEY_TTL), store.renew(ticketA, KEY_TTL)]);
    assert.ok(r1 >= a.until && r2 >= a.until, "both renewals keep the fence");
    const released = await Promise.all([store.release(ticketA, issued), store.release(ticketA, issued)]);
    assert.deepEqual(released.sort(), [0, 1], "one release, and the second answers 0");
    await assert.rejects(store.renew(ticketA, KEY_TTL), { message: /^LOST / }, "a renewal replayed after the release");
    const fence = Number(await client.sendCommand(["ZSCORE", `{${key}}:ends`, "0"]));
    assert.equal(fence, issued + 1, "the fence is where the release put it");
    let b;
    const end = performance.now() + KEY_TTL + KEY_SKEW + 2000;
    while (b === undefined && performance.now() < end) {
      b = await store.acquire(oneIdArgs(key, "b")).catch((e) => assert.match(e.message, /^LEASED /));
      if (b === undefined) await sleep(20);
    }
    assert.ok(b, "the id is leased again once its fence passed");
    await assert.rejects(store.acquire(oneIdArgs(key, "b")), { message: /^LEASED / }, "the same acquire sent again");
    const genB = holderGenerator(await usableGrant(store, b, { space: key, node: 0, token: "b" }), a.now);
    assertDisjoint([idsA, [...genB.nextBatch(4096), ...genB.nextBatch(4096)]], "holders of one id");
  } finally {
    close();
  }
});
