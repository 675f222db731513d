// The holder of a lease in JavaScript: its rules (`decide` in wasm/js/lease-rules.mjs)
// against the situations of tests/vectors/holder.json, which the Rust holder's tests read
// too, and the Node holder of the package (`holder.cjs`, the one `snowdrift/redis` and
// `snowdrift/postgres` use) over a store in memory whose calls can stop answering, whose
// clock can step, and whose caller can stall.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as api from "snowdrift";
import {
  HeldLease,
  NEAR_FENCE_MS,
  POLL_MS,
  acquireLease,
  decide,
  leaseOptions as rulesOptions,
} from "../../wasm/js/lease-rules.mjs";

const table = JSON.parse(readFileSync(new URL("../vectors/holder.json", import.meta.url)));
// The package's Node holder (bundled with the rules), as the Redis and PostgreSQL clients use it.
const { lease, leaseOptions } = createRequire(import.meta.url)("../../wasm/pkg/holder.cjs");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TTL_MS = 1000;
const SKEW_MS = 100;
const LIVE_MS = TTL_MS - SKEW_MS;
const options = { key: "ids:holder", layout: "twitter", ttlMs: TTL_MS, skewMs: SKEW_MS };

test("the holder's rules: every situation of tests/vectors/holder.json gets its decision", () => {
  assert.equal(table.pollMs, POLL_MS);
  assert.equal(table.nearFenceMs, NEAR_FENCE_MS);
  assert.ok(table.situations.length >= 30);
  for (const { name, situation, decision } of table.situations) {
    assert.deepEqual(decide({ ...table.defaults, ...situation }), decision, name);
  }
});

/** A store in memory holding one space (Date.now() plus `offset` is its clock). `stall`
 * names the calls that never answer from then on (a renewal is applied first: its reply
 * is lost); `grantAhead` grants as a new space does (not before the clock plus the TTL and
 * skew). */
function memoryStore({ grantAhead = false } = {}) {
  const store = {
    offset: 0,
    stall: new Set(),
    fence: 0,
    token: undefined,
    calls: [],
    now: () => Date.now() + store.offset,
    async acquire(a) {
      store.calls.push("acquire");
      if (store.stall.has("acquire")) return new Promise(() => {});
      if (store.acquireDelay) await sleep(store.acquireDelay);
      store.token = a.token;
      const now = store.now();
      store.fence = now + a.ttl;
      return { node: 0, notBefore: grantAhead ? now + a.ttl + a.skew : now, until: store.fence, now };
    },
    async renew(t, ttl) {
      store.calls.push("renew");
      if (store.delay) await sleep(store.delay);
      if (t.token !== store.token) throw new Error("LOST node id 0 of 'ids:holder' is no longer held by this lease");
      const until = Math.max(store.fence, store.now() + ttl);
      store.fence = until;
      if (store.stall.has("renew")) return new Promise(() => {});
      return until;
    },
    async release(t, issued) {
      store.calls.push("release");
      if (store.stall.has("release")) return new Promise(() => {});
      if (t.token !== store.token) return 0;
      store.fence = Math.min(store.fence, issued + 1);
      store.token = undefined;
      return 1;
    },
  };
  return store;
}

/** Resolves to what `p` settled with, or "no answer" after `ms`. */
const outcome = (p, ms) =>
  Promise.race([
    p.then(
      () => "resolved",
      (e) => e.message,
    ),
    sleep(ms).then(() => "no answer"),
  ]);

/** Waits (at most `ms`) until `f()` holds. */
async function until(f, ms) {
  for (const end = performance.now() + ms; !f() && performance.now() < end; ) await sleep(10);
  return f();
}

test("Node holder: an acquire that never answers rejects at ttl - skew", async () => {
  const store = memoryStore();
  store.stall.add("acquire");
  // Ten lapses' time: the acquire is given up after one.
  const got = await outcome(lease(store, leaseOptions(options)), 10 * LIVE_MS);
  assert.equal(got, `acquire of a node id of 'ids:holder' got no reply within ${LIVE_MS} ms (ttl - skew)`);
});

test("Node holder: an acquire whose reply comes after ttl - skew is not used, and its grant is released", async () => {
  const store = memoryStore();
  store.acquireDelay = LIVE_MS + 200;
  const got = await outcome(lease(store, leaseOptions(options)), 10 * LIVE_MS);
  assert.equal(got, `acquire of a node id of 'ids:holder' got no reply within ${LIVE_MS} ms (ttl - skew)`);
  assert.ok(await until(() => store.calls.includes("release"), 10 * LIVE_MS), "the late grant was released");
  assert.equal(store.token, undefined, "the store holds no lease for it");
});

test("Node holder: renewals that never answer (applied, their replies lost): the lease lapses and its generator stops", async () => {
  const store = memoryStore();
  const l = await lease(store, leaseOptions(options));
  const gen = l.generator();
  gen.next();
  store.stall.add("renew");
  assert.ok(await until(() => l.state !== "live", 10 * LIVE_MS), "the lease lapsed");
  assert.equal(l.state, "lapsed");
  assert.match(l.error.message, /lapsed: no renewal succeeded for 900 ms/);
  assert.throws(() => gen.next(), /is not before the fence at/);
  assert.ok(store.calls.filter((c) => c === "renew").length >= 1, "renewals were sent");
  await l.release();
});

test("Node holder: a release that never answers: the generator stops at once, and release() rejects after the TTL", async () => {
  const store = memoryStore();
  const l = await lease(store, leaseOptions(options));
  const gen = l.generator();
  gen.next();
  store.stall.add("release");
  const released = l.release();
  assert.throws(() => gen.next(), /is not before the fence at/);
  assert.equal(l.state, "released");
  const got = await outcome(released, 10 * TTL_MS);
  assert.equal(got, `release of lease of node 0 of 'ids:holder' got no reply within ${TTL_MS} ms`);
});

test("Node holder: a new lease whose renewals never answer while it waits to be usable: leasing fails with the lapse", async () => {
  const store = memoryStore({ grantAhead: true });
  store.stall.add("renew");
  const got = await outcome(lease(store, leaseOptions(options)), 10 * LIVE_MS);
  assert.match(got, /lapsed: no renewal succeeded for 900 ms/);
  assert.equal(store.calls.at(-1), "release", "the unusable lease was handed back");
});

test("Node holder: the store's clock steps back, then forward: the fence never moves back, and moves forward with it", async () => {
  const store = memoryStore();
  const l = await lease(store, leaseOptions({ ...options, renewEveryMs: 100 }));
  const gen = l.generator();
  const before = l.until;
  store.offset = -5000; // renewals now reply with an end 5 s before the fence
  const renewals = store.calls.length;
  assert.ok(await until(() => store.calls.length >= renewals + 3, 10 * LIVE_MS));
  assert.equal(l.state, "live", "renewals that succeed keep the lease live");
  assert.ok(l.until >= before, `the fence stays at ${before} or later: ${l.until}`);
  store.offset = 5000;
  assert.ok(await until(() => l.until > before + 4000, 10 * LIVE_MS), "the fence moved forward with the clock");
  assert.equal(gen.next() > 0n, true);
  await l.release();
});

test("Node holder: a process stalled past its TTL issues nothing past its fence, then lapses", async () => {
  const store = memoryStore();
  const l = await lease(store, leaseOptions(options));
  const gen = l.generator();
  gen.next();
  const fence = l.until;
  // No timer runs while the process is busy: the fence alone stops the generator.
  const end = Date.now() + TTL_MS + 50;
  while (Date.now() < end);
  assert.throws(() => gen.next(), new RegExp(`is not before the fence at ${fence} ms`));
  // The heartbeat then finds the lapse first (no renewal succeeded for ttl - skew).
  await sleep(0);
  assert.ok(await until(() => l.state !== "live", 10 * LIVE_MS));
  assert.equal(l.state, "lapsed");
  await l.release();
});

test("per-request holder (Workers, the HTTP handler): a renewal whose reply comes after the lapse does not count, with no request to notice", async () => {
  const store = memoryStore();
  const o = rulesOptions(api, options, { holder: "test" });
  const l = await acquireLease((...a) => new HeldLease(api, ...a), store, o);
  const gen = l.generator();
  gen.next();
  const fence = l.until;
  // A third of the TTL on, a request starts a renewal in the background; its reply comes
  // 200 ms after the lapse, and no request comes meanwhile.
  await sleep(o.renewEvery);
  store.delay = LIVE_MS + 200;
  let waited;
  await l.keep({ waitUntil: (p) => (waited = p) });
  assert.ok(waited, "the renewal runs in the background");
  await waited;
  assert.equal(l.state, "lapsed");
  assert.equal(l.until, fence, "the late reply did not move the fence");
  assert.throws(() => gen.next(), /is not before the fence at/);
  await assert.rejects(l.keep({ waitUntil: () => {} }), /lapsed: no renewal succeeded for 900 ms/);
});
