// The Workers client of `snowdrift/cloudflare` (`leased`, `leaseNode`) in workerd through
// Miniflare: client Workers in isolates of their own lease node ids from the store's
// Durable Object and issue IDs in every request, while the object restarts, its storage
// is wiped, and all isolates are recycled. Every ID is collected: none twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "snowdrift";
import { entry, open } from "./harness.mjs";

const LAYOUT = { timeBits: 41, nodeBits: 2, sequenceBits: 12, epochMs: 1704067200000 };
const TTL_MS = 1000;
const SKEW_MS = 200;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A client Worker: POST {n} answers {ids} (decimal strings, `n` of them from this
// isolate's leased generator) or {error}; POST {op: "list"} lists the space; POST {op: "lapse"} leases with leaseNode, stays
// idle past the lapse and answers what keep() and next() then say, with the lease's events
// (onEvent) and health() before and after; POST {op: "wipe"}
// empties the object's storage.
const client = `
import { leased, leaseNode } from "${entry}";
const LAYOUT = ${JSON.stringify(LAYOUT)};
const options = { key: "ids:edge", layout: LAYOUT, ttlMs: ${TTL_MS}, skewMs: ${SKEW_MS} };
const ids = leased("LEASES", options);
// A lease renewed rarely (every 2.5 s of its 3 s): a holder goes on issuing long after
// its records are gone.
const slow = { ...options, key: "ids:slow", ttlMs: 3000, renewEveryMs: 2500 };
const slowIds = leased("LEASES", slow);
// A new space renewed every 10 s: its first lease gets ID time from early renewals only.
const ahead = { ...options, key: "ids:ahead", ttlMs: 30_000, skewMs: 100 };
const aheadIds = leased("LEASES", ahead);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const error = (e) => ({ error: { name: e.name, message: e.message } });
// A space whose ids are all held for a minute, and the binding as leased() sees it, with
// its acquires counted.
const full = { ...options, key: "ids:full", ttlMs: 60_000 };
const fullIds = leased("COUNTED", full);
let acquires = 0;
const counted = (ns) => ({
  idFromName: (name) => ns.idFromName(name),
  get: (id) => {
    const stub = ns.get(id);
    return {
      acquire: (a) => (acquires++, stub.acquire(a)),
      renew: (a) => stub.renew(a),
      release: (a) => stub.release(a),
    };
  },
});
export default {
  async fetch(request, env, ctx) {
    const body = await request.json();
    if (body.op === "storm") {
      // Fill the space, then ask leased() for a generator every 10 ms for body.ms.
      for (let i = 0; i < 4; i++) await leaseNode(env.LEASES, full);
      const countedEnv = { ...env, COUNTED: counted(env.LEASES) };
      const errors = new Set();
      let requests = 0;
      for (const end = Date.now() + body.ms; Date.now() < end; requests++) {
        await fullIds(countedEnv, ctx).then(
          () => errors.add("a generator"),
          (e) => errors.add(e.message),
        );
        await sleep(10);
      }
      return Response.json({ requests, acquires, errors: [...errors] });
    }
    if (body.op === "list") {
      return Response.json(await env.LEASES.get(env.LEASES.idFromName(options.key)).list(options.key));
    }
    if (body.op === "wipe") {
      await env.LEASES.get(env.LEASES.idFromName(body.slow ? slow.key : options.key)).wipe();
      return Response.json({ ok: true });
    }
    if (body.op === "lapse") {
      const events = [];
      const onEvent = (event, data) => events.push(\`\${event} \${data.node}\`);
      const lease = await leaseNode(env.LEASES, { ...options, key: "ids:lapse", onEvent });
      const health = [lease.health().state];
      const gen = lease.generator();
      const first = gen.next().toString();
      await sleep(${TTL_MS - SKEW_MS} + 100);
      const kept = await lease.keep(ctx).then(() => "kept", (e) => e.message);
      let next;
      try {
        next = gen.next().toString();
      } catch (e) {
        next = e.message;
      }
      health.push(lease.health().state);
      return Response.json({ first, kept, next, state: lease.state, node: lease.node, events, health });
    }
    if (body.op === "region") {
      // Region 1 of 1 bit: the object leases the 2 worker ids below it.
      const west = { ...options, key: "ids:region", region: { bits: 1, id: 1 } };
      const leases = [await leaseNode(env.LEASES, west), await leaseNode(env.LEASES, west)];
      const refused = [];
      for (const region of [west.region, { bits: 1, id: 0 }]) {
        await leaseNode(env.LEASES, { ...west, region }).then(
          (l) => refused.push(\`node \${l.node}\`),
          (e) => refused.push(\`\${e.name}: \${e.message}\`),
        );
      }
      const ids = leases.map((l) => l.generator().next().toString());
      await Promise.all(leases.map((l) => l.release()));
      return Response.json({ nodes: leases.map((l) => l.node), ids, refused });
    }
    try {
      const gen = await (body.slow ? slowIds : body.ahead ? aheadIds : ids)(env, ctx);
      return Response.json({ ids: Array.from(gen.nextBatch(body.n), String) });
    } catch (e) {
      return Response.json(error(e));
    }
  },
};`;

/** A Miniflare with `clients` client isolates on the storage in `dir`. */
const start = (dir, clients = 3) => open(dir, { clients, client });

async function post(mf, c, body) {
  const res = await mf.dispatchFetch(`http://client${c}.test/`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`client${c}: HTTP ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Requests IDs from every client for `ms`, `n` per request (of the slowly renewed lease
 * when `slow`); returns {ids, errors}. */
async function issue(mf, clients, ms, n = 200, slow = false) {
  const ids = [];
  const errors = [];
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < 10_000 && performance.now() < end; i++) {
        const r = await post(mf, c, { n, slow });
        if (r.error) errors.push(r.error.message);
        else if (Array.isArray(r.ids)) ids.push(...r.ids);
        else throw new Error(`client${c} answered ${JSON.stringify(r)}`);
        await sleep(5);
      }
    }),
  );
  return { ids, errors };
}

/** Fails with the count and an example if any ID appears twice. */
function assertUnique(ids, what) {
  const seen = new Set();
  const twice = ids.filter((id) => seen.size === seen.add(id).size);
  assert.equal(twice.length, 0, `${what}: ${twice.length} IDs issued twice, e.g. ${twice[0]}`);
}

/** Runs `f(mf)` with workerd started on a fresh storage directory with `clients` client
 * isolates; disposes of it and removes the directory after. */
const withWorkers = (clients, f) =>
  withDir(async (dir) => {
    const mf = await start(dir, clients);
    try {
      return await f(mf);
    } finally {
      await mf.dispose();
    }
  });

/** Runs `f(dir)` with a fresh storage directory, removed after. */
async function withDir(f) {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-edge-client-"));
  try {
    return await f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("three isolates issuing at once: a node id each, renewed lazily over three TTLs, no ID twice", () =>
  withWorkers(3, async (mf) => {
    const { ids, errors } = await issue(mf.mf, 3, 3 * TTL_MS);
    assert.deepEqual(errors, []);
    assert.ok(ids.length > 10_000, `${ids.length} IDs`);
    assertUnique(ids, "three isolates");
    // Each isolate kept its first lease: three node ids in all.
    const nodes = new Set(ids.map((id) => decode(BigInt(id), LAYOUT).node));
    assert.equal(nodes.size, 3, `node ids ${[...nodes]}`);
    const listing = await post(mf.mf, 0, { op: "list" });
    assert.equal(listing.ids.filter((l) => l.holder !== "").length, 3);
    assert.ok(
      listing.ids.every((l) => l.until > listing.now),
      "every lease was renewed past now",
    );
  }));

test("a region's leases carry it in their node ids; a client of another region is refused naming both", () =>
  withWorkers(1, async (mf) => {
    const r = await post(mf.mf, 0, { op: "region" });
    assert.deepEqual(r.nodes.toSorted(), [2, 3]);
    assert.deepEqual(
      r.ids.map((id) => decode(BigInt(id), LAYOUT).node),
      r.nodes,
    );
    const text = "time 41 bits of 1 ms from 1704067200000, node 2 bits, sequence 12 bits, node above sequence";
    assert.deepEqual(r.refused, [
      "RangeError: all 2 node ids of 'ids:region' are leased",
      `RangeError: space 'ids:region' leases 2 node ids of layout "${text}, region 1 of 1 bits" for ${TTL_MS} ms (skew ${SKEW_MS} ms); this client asked for 2 node ids of layout "${text}, region 0 of 1 bits" for ${TTL_MS} ms (skew ${SKEW_MS} ms)`,
    ]);
  }));

test("a new space's first lease: keep() renews early when the generator nears its fence", () =>
  withWorkers(1, async (mf) => {
    // Fenced a TTL ahead of the object's clock, the lease gets ID time only as renewals
    // move its fence: 600,000 IDs (about 150 ms of ID time) need several long before the
    // regular renewal every ttl / 3 (10 s).
    const ids = [];
    const errors = [];
    const deadline = performance.now() + 5000;
    while (ids.length < 600_000 && performance.now() < deadline) {
      const r = await post(mf.mf, 0, { n: 20_000, ahead: true });
      if (r.error) {
        assert.match(r.error.message, /is not before the fence at/);
        errors.push(r.error.message);
        await sleep(20);
      } else ids.push(...r.ids);
    }
    assert.equal(ids.length, 600_000, `${ids.length} IDs in 5 s, ${errors.length} requests refused at the fence`);
    assertUnique(ids, "a new space");
  }));

test("an isolate idle past ttl - skew: keep() says the lease lapsed, and its generator stops", () =>
  withWorkers(1, async (mf) => {
    const r = await post(mf.mf, 0, { op: "lapse" });
    assert.equal(r.state, "lapsed");
    assert.equal(
      r.kept,
      `lease of node ${r.node} of 'ids:lapse' lapsed: no renewal succeeded for ${TTL_MS - SKEW_MS} ms (ttl ${TTL_MS} ms, skew ${SKEW_MS} ms)`,
    );
    assert.match(r.next, /is not before the fence at/);
    // The Workers client's onEvent option and health(), as every holder's.
    // (A new space's first lease renews until it is usable, then none while idle.)
    assert.equal(r.events.at(0), `acquire ${r.node}`);
    assert.equal(r.events.at(-1), `lapse ${r.node}`);
    assert.ok(
      r.events.slice(1, -1).every((e) => e === `renew ${r.node}`),
      r.events.join(", "),
    );
    assert.deepEqual(r.health, ["ok", "lapsed"]);
    // The next request of an isolate whose lease lapsed leases again.
    const before = await issue(mf.mf, 1, 200);
    await sleep(TTL_MS);
    const after = await issue(mf.mf, 1, 200);
    assert.deepEqual([...before.errors, ...after.errors], []);
    assertUnique([...before.ids, ...after.ids], "before and after a lapse");
  }));

test("the object restarted and every isolate recycled at random while issuing; storage wiped once: no ID twice", () =>
  withDir(async (dir) => {
    let mf = await start(dir);
    const all = [];
    const errors = [];
    try {
      for (let round = 0; round < 6; round++) {
        const r = await issue(mf.mf, 3, 300 + Math.floor(Math.random() * 700));
        all.push(...r.ids);
        errors.push(...r.errors);
        if (round === 2) {
          await post(mf.mf, 0, { op: "wipe" });
        } else {
          // workerd goes away with every isolate (none releases) and comes back on the
          // persisted storage: the new isolates lease while the old leases still run.
          await mf.dispose();
          mf = await start(dir);
        }
      }
    } finally {
      await mf.dispose();
    }
    assertUnique(all, "across restarts and a wipe");
    assert.ok(all.length > 20_000, `${all.length} IDs`);
    // While the old isolates' leases run, the new ones may find every id leased, and
    // after the wipe the first leases wait out the guard window: nothing else fails.
    for (const e of errors) assert.match(e, /are leased|is no longer held|is not usable/);
  }));

test("storage wiped under an isolate that goes on issuing: a new isolate gets its node id, fenced after it, no ID twice", () =>
  withWorkers(2, async (mf) => {
    // Isolate 0 alone: node 0 of the space, past the new space's guard window.
    const first = await issue(mf.mf, 1, 3000 + SKEW_MS + 300, 200, true);
    await post(mf.mf, 0, { op: "wipe", slow: true });
    // Isolate 0 issues until its next renewal (up to 2.5 s away) hears LOST; isolate 1
    // leases the wiped space's first id (node 0 again) at once and issues beside it.
    const [old, fresh] = await Promise.all([
      (async () => {
        const ids = [];
        for (let i = 0; i < 2000 && ids.length < 400_000; i++) {
          const r = await post(mf.mf, 0, { n: 200, slow: true });
          if (r.error) break;
          ids.push(...r.ids);
        }
        return ids;
      })(),
      (async () => {
        const ids = [];
        const end = performance.now() + 2000;
        for (let i = 0; i < 2000 && performance.now() < end; i++) {
          const r = await post(mf.mf, 1, { n: 200, slow: true });
          if (!r.error) ids.push(...r.ids);
          await sleep(2);
        }
        return ids;
      })(),
    ]);
    const node = (id) => decode(BigInt(id), LAYOUT).node;
    assert.ok(old.length > 1000, `${old.length} IDs from the wiped holder`);
    assert.ok(
      fresh.some((id) => node(id) === node(first.ids[0])),
      "the new isolate got the old one's node id",
    );
    assertUnique([...first.ids, ...old, ...fresh], "the wiped holder and the next");
  }));

// A client Worker whose object calls go through a binding that can stall renewals: POST
// {op: "stall", ms} makes every renewal sent from then on wait `ms` before it reaches the
// object (as an object that stops answering would); POST {n} answers {ids, stalledDone}
// from `leased` of a TTL of 2 s, where `stalledDone` counts the stalled renewals that have
// come back so far.
const STALL_TTL_MS = 2000;
const stallingClient = `
import { leased } from "${entry}";
const LAYOUT = ${JSON.stringify(LAYOUT)};
const ids = leased("LEASES", { key: "ids:stall", layout: LAYOUT, ttlMs: ${STALL_TTL_MS}, skewMs: ${SKEW_MS} });
let stallMs = 0;
let stalledDone = 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stalling = (ns) => ({
  idFromName: (name) => ns.idFromName(name),
  get(id) {
    const stub = ns.get(id);
    return {
      acquire: (a) => stub.acquire(a),
      release: (a) => stub.release(a),
      async renew(a) {
        if (stallMs === 0) return stub.renew(a);
        await sleep(stallMs);
        stalledDone++;
        return stub.renew(a);
      },
    };
  },
});
export default {
  async fetch(request, env, ctx) {
    const body = await request.json();
    if (body.op === "stall") {
      stallMs = body.ms;
      return Response.json({ ok: true });
    }
    try {
      const gen = await ids({ LEASES: stalling(env.LEASES) }, ctx);
      return Response.json({ ids: Array.from(gen.nextBatch(body.n), String), stalledDone });
    } catch (e) {
      return Response.json({ error: { name: e.name, message: e.message }, stalledDone });
    }
  },
};`;

test("renewals that stop answering: every request is answered at the latest when the lease lapses, from a new lease, no ID twice", () =>
  withDir(async (dir) => {
    const mf = await open(dir, { clients: 1, client: stallingClient });
    try {
      // Past the new space's guard window, then every renewal stalls for 30 s while a
      // request comes every 100 ms for 4 s (two lapses' worth: ttl - skew is 1.8 s).
      const first = await issue(mf.mf, 1, STALL_TTL_MS, 100);
      assert.deepEqual(first.errors, []);
      await post(mf.mf, 0, { op: "stall", ms: 30_000 });
      const replies = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          await sleep(100 * i);
          return post(mf.mf, 0, { n: 100 });
        }),
      );
      // No request waited for a stalled renewal to come back (the first comes back after
      // 30 s): each was answered by the lapse at the latest, with IDs of a new lease.
      const waited = replies.filter((r) => r.stalledDone > 0).length;
      const failed = replies.filter((r) => r.error).map((r) => r.error.message);
      assert.equal(waited, 0, `${waited} of 40 requests waited for a stalled renewal`);
      assert.deepEqual(failed, []);
      const ids = [...first.ids, ...replies.flatMap((r) => r.ids)];
      assertUnique(ids, "across the lapses");
      const nodes = new Set(replies.flatMap((r) => r.ids.map((id) => decode(BigInt(id), LAYOUT).node)));
      assert.ok(nodes.size >= 2, `the lapsed lease was followed by a new one: node ids ${[...nodes]}`);
    } finally {
      await mf.dispose();
    }
  }));

test("a full space, asked every 10 ms for 2 s: leased() backs off its acquires (a few, not one per request) and answers with the refusal", () =>
  withWorkers(1, async (mf) => {
    const r = await post(mf.mf, 0, { op: "storm", ms: 2000 });
    assert.deepEqual(r.errors, ["all 4 node ids of 'ids:full' are leased"]);
    assert.ok(r.requests > 20, `${r.requests} requests`);
    // Waits double from 50-100 ms: within 2 s at most 6 of them can end.
    assert.ok(r.acquires <= 7, `${r.acquires} acquires for ${r.requests} requests`);
  }));
