// The holder of a lease in JavaScript: its rules (`decide` in wasm/js/src/lease/rules.mjs)
// against the situations of tests/vectors/holder.json, which the Rust holder's tests read
// too, and the Node holder of the package (`holder.cjs`, the one `snowdrift/redis` and
// `snowdrift/postgres` use) over a store in memory whose calls can stop answering, whose
// clock can step, and whose caller can stall; and what the holder reports
// (`lease.health()`, `onEvent`, the diagnostics channels, `snowdrift/metrics`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import * as api from "snowdrift";
import { CHANNELS, EVENTS, STATES, collect, freeIds, prometheusText, recordListing } from "snowdrift/metrics";
import {
  HeldLease,
  NEAR_FENCE_MS,
  POLL_MS,
  acquireLease,
  decide,
  layoutFacts,
  leaseOptions as rulesOptions,
} from "../../wasm/js/src/lease/rules.mjs";

const table = JSON.parse(readFileSync(new URL("../vectors/holder.json", import.meta.url)));
// The package's Node holder (bundled with the rules), as the Redis and PostgreSQL clients use it.
const { lease, leaseOptions } = createRequire(import.meta.url)("../../wasm/pkg/holder.cjs");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TTL_MS = 1000;
const SKEW_MS = 100;
const LIVE_MS = TTL_MS - SKEW_MS;
const options = { key: "ids:holder", layout: "twitter", ttlMs: TTL_MS, skewMs: SKEW_MS };

test("a space's recorded layout text, capacity and node ids: every space of tests/vectors/spaces.json", () => {
  const spaces = JSON.parse(readFileSync(new URL("../vectors/spaces.json", import.meta.url))).spaces;
  for (const s of spaces) {
    const { text, capacity, base } = layoutFacts(api, s.layout, s.region);
    assert.deepEqual({ text, capacity, base }, { text: s.text, capacity: s.capacity, base: s.base });
  }
});

test("the holder's rules: every situation of tests/vectors/holder.json gets its decision", () => {
  assert.equal(table.pollMs, POLL_MS);
  assert.equal(table.nearFenceMs, NEAR_FENCE_MS);
  assert.ok(table.situations.length >= 30);
  for (const { name, situation, decision } of table.situations) {
    assert.deepEqual(decide({ ...table.defaults, ...situation }), decision, name);
  }
});

/** A store in memory holding one space (Date.now() plus `offset` is its clock), replacing
 * the lease's token with the next one at each renewal (lease/PROTOCOL.md, "Tokens"). `stall`
 * names the calls that never answer from then on (a renewal is applied first: its reply
 * is lost); `grantAhead` grants as a new space does (not before the clock plus the TTL and
 * skew). */
function memoryStore({ grantAhead = false } = {}) {
  const holds = (t) => store.token !== undefined && [t.token, t.next].includes(store.token);
  const store = {
    offset: 0,
    stall: new Set(),
    fence: 0,
    token: undefined,
    calls: [],
    tickets: [], // the tickets of renewals and releases, as sent
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
      store.tickets.push({ ...t });
      if (store.delay) await sleep(store.delay);
      if (!holds(t)) throw new Error("LOST node id 0 of 'ids:holder' is no longer held by this lease");
      const until = Math.max(store.fence, store.now() + ttl);
      store.fence = until;
      store.token = t.next ?? t.token;
      if (store.stall.has("renew")) return new Promise(() => {});
      return until;
    },
    async release(t, issued) {
      store.calls.push("release");
      store.tickets.push({ ...t });
      if (store.stall.has("release")) return new Promise(() => {});
      if (!holds(t)) return 0;
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

test("Node holder: the token changes at every renewal; a renewal without an answer is sent again with the same pair; the release sends both tokens; a copy holding an old token is LOST", async () => {
  const store = memoryStore();
  const l = await lease(store, leaseOptions({ ...options, renewEveryMs: 100 }));
  const gen = l.generator();
  const acquired = store.token;
  assert.ok(await until(() => store.tickets.length >= 3, 10 * LIVE_MS), "renewals were sent");
  const [r1, r2, r3] = store.tickets;
  assert.equal(r1.token, acquired);
  assert.match(r1.next, /^[0-9a-f]{32}$/);
  assert.deepEqual(
    [r2.token, r3.token],
    [r1.next, r2.next],
    "each renewal sends the token the one before put in place",
  );
  assert.equal(new Set([acquired, r1.next, r2.next, r3.next]).size, 4, "each next token is new");
  // Renewals applied whose replies never come: each sends the pair of the first again, and
  // the store renews every one of them.
  store.stall.add("renew");
  const sent = store.tickets.length;
  assert.ok(await until(() => store.tickets.length >= sent + 3, 10 * LIVE_MS));
  const unanswered = store.tickets.slice(sent);
  assert.equal(new Set(unanswered.map((t) => `${t.token} ${t.next}`)).size, 1, "one pair, sent again");
  assert.equal(store.token, unanswered[0].next, "the store holds the pair's next token");
  assert.equal(l.state, "live");
  // A copy of the holder made before these renewals holds a token the store replaced.
  await assert.rejects(
    store.renew({ space: "ids:holder", node: 0, token: r1.token, next: "copy" }, TTL_MS),
    /^Error: LOST /,
  );
  store.stall.delete("renew");
  gen.next();
  await l.release();
  const release = store.tickets.at(-1);
  assert.deepEqual(
    [release.token, release.next],
    [unanswered[0].token, unanswered[0].next],
    "the release sends both tokens of the renewal without an answer",
  );
  assert.equal(store.token, undefined, "released");
});

test("per-request holder: a LOST reply to a renewal whose token the holder already replaced is its own renewals overtaking each other, and does not count", async () => {
  const store = memoryStore();
  const o = rulesOptions(api, options, { holder: "test" });
  const l = await acquireLease((...a) => new HeldLease(api, ...a), store, o);
  l.generator().next();
  // The first renewal is held back on its way to the store; the second (the same pair)
  // overtakes it and succeeds, and the third replaces the token again. The first then
  // arrives with a token the store no longer holds.
  const first = store.renew;
  let release;
  const held = new Promise((r) => (release = r));
  store.renew = async (t, ttl) => {
    store.renew = first;
    await held;
    return first(t, ttl);
  };
  await sleep(o.renewEvery);
  const p1 = l._renew();
  await sleep(o.renewEvery);
  await l._renew();
  await sleep(POLL_MS);
  await l._renew();
  release();
  await p1;
  assert.equal(l.state, "live", "the late LOST of its own older pair does not count");
  assert.equal(store.tickets.filter((t) => t.next !== undefined).length, 3);
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

// ---- what a lease reports ----

/** The samples of metric `name` in Prometheus text, as a map from its label text to the value. */
function samples(text, name) {
  const out = new Map();
  for (const line of text.split("\n")) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (m?.[1] === name) out.set(m[2], Number(m[3]));
  }
  return out;
}

/** Subscribes to every lease channel; returns the messages heard and a function ending it. */
function listen() {
  const heard = [];
  const handlers = EVENTS.map((e) => [CHANNELS[e], (data) => heard.push([e, data])]);
  for (const [name, h] of handlers) subscribe(name, h);
  const stop = () => {
    for (const [name, h] of handlers) unsubscribe(name, h);
  };
  return { heard, stop };
}

test("observability: renewals, then a LOST reply, reach health(), onEvent, the diagnostics channels and the Prometheus text", async () => {
  const store = memoryStore();
  const key = "ids:observe-lost";
  const events = [];
  const channels = listen();
  try {
    const o = leaseOptions({ ...options, key, renewEveryMs: 100, onEvent: (e, d) => events.push([e, d]) });
    const l = await lease(store, o);
    let h = l.health();
    assert.equal(h.state, "ok");
    assert.deepEqual([h.space, h.node, h.fenceMs, h.notBeforeMs], [key, 0, l.until, l.notBefore]);
    assert.equal(h.issuedThroughMs, null, "no generator yet");
    assert.equal(h.lapseAtMs - h.lastRenewalMs, LIVE_MS);
    assert.equal(h.lateAtMs - h.lastRenewalMs, LIVE_MS / 2);
    const gen = l.generator();
    gen.next();
    assert.ok(await until(() => l.health().renewals >= 2, 10 * LIVE_MS), "renewals counted");
    h = l.health();
    assert.equal(h.fenceDistanceMs, l.until - gen.issuedThroughMs);
    assert.ok(h.lastRenewalLatencyMs >= 0);
    assert.equal(h.renewalFailures, 0);
    let text = prometheusText();
    const label = `space="${key}"`;
    assert.equal(samples(text, "snowdrift_lease_renewals_total").get(label), l.health().renewals);
    assert.equal(samples(text, "snowdrift_lease_acquires_total").get(label), 1);
    assert.equal(samples(text, "snowdrift_lease_health").get(`${label},node="0",state="ok"`), 1);
    assert.equal(samples(text, "snowdrift_lease_health").get(`${label},node="0",state="renewing late"`), 0);
    assert.equal(samples(text, "snowdrift_lease_fence_seconds").get(`${label},node="0"`), l.until / 1000);
    assert.equal(events[0][0], "acquire");
    assert.deepEqual(
      [events[0][1].space, events[0][1].node, events[0][1].until],
      [key, 0, events[0][1].until],
      "the acquire event names the lease",
    );
    assert.ok(events.some(([e]) => e === "renew"));

    // Another holder now has the id (the store replaced the token): the next renewal is LOST.
    store.token = "another holder's";
    assert.ok(await until(() => l.state !== "live", 10 * LIVE_MS), "the lease stopped");
    h = l.health();
    assert.equal(h.state, "lost");
    assert.match(h.error.message, /is no longer held by this lease/);
    assert.ok(h.renewalFailures >= 1);
    const lost = events.filter(([e]) => e === "lost");
    assert.equal(lost.length, 1);
    assert.equal(lost[0][1].error, l.error);
    assert.ok(events.some(([e, d]) => e === "renew-failed" && /^LOST /.test(d.error.message)));
    const heardLost = channels.heard.filter(([e, d]) => e === "lost" && d.space === key);
    assert.equal(heardLost.length, 1, "published once on snowdrift:lease:lost");
    text = prometheusText();
    assert.equal(samples(text, "snowdrift_lease_lost_total").get(label), 1);
    assert.equal(samples(text, "snowdrift_lease_renewal_failures_total").get(label), h.renewalFailures);
    assert.equal(samples(text, "snowdrift_lease_lapses_total").get(label), 0);
    assert.equal(
      samples(text, "snowdrift_lease_health").get(`${label},node="0",state="ok"`),
      undefined,
      "a stopped lease has no gauges",
    );
    await l.release();
  } finally {
    channels.stop();
  }
});

test("observability: renewals that never answer: health() turns 'renewing late' at half of ttl - skew, then 'lapsed', counted once", async () => {
  const store = memoryStore();
  const key = "ids:observe-lapse";
  const events = [];
  const l = await lease(store, leaseOptions({ ...options, key, onEvent: (e) => events.push(e) }));
  l.generator().next();
  store.stall.add("renew");
  assert.ok(await until(() => l.health().state !== "ok", 10 * LIVE_MS));
  const late = l.health();
  assert.equal(late.state, "renewing late", "late comes before the lapse");
  assert.ok(late.sinceRenewalMs * 2 >= LIVE_MS);
  assert.ok(late.lateAtMs <= Date.now() && Date.now() < late.lapseAtMs);
  assert.equal(
    samples(prometheusText(), "snowdrift_lease_health").get(`space="${key}",node="0",state="renewing late"`),
    1,
  );
  assert.ok(await until(() => l.health().state !== "renewing late", 10 * LIVE_MS));
  assert.equal(l.health().state, "lapsed");
  assert.equal(l.state, "lapsed");
  assert.deepEqual(
    events.filter((e) => e === "lapse"),
    ["lapse"],
  );
  assert.equal(samples(prometheusText(), "snowdrift_lease_lapses_total").get(`space="${key}"`), 1);
  await l.release();
});

test("observability: a clock step back under the borrow policy shows as time borrowed ahead", async () => {
  const store = memoryStore();
  const key = "ids:observe-ahead";
  let now;
  const l = await lease(store, leaseOptions({ ...options, key, clock: () => now ?? Date.now() }));
  now = l.notBefore + 1; // the first time the lease may issue at
  const gen = l.generator();
  gen.next();
  assert.equal(l.health().aheadMs, 0);
  now -= 300;
  gen.next(); // borrowed: timed at the newest time used, 300 ms ahead of the clock
  const h = l.health();
  assert.equal(h.aheadMs, 300);
  assert.deepEqual(h.clock, { behind: 0, largestBehindMs: 0, clockWaits: 0, tickWaits: 0, aheadMs: 300 });
  const text = prometheusText();
  assert.equal(samples(text, "snowdrift_generator_ahead_seconds").get(`space="${key}",node="0"`), h.aheadMs / 1000);
  await l.release();
  assert.equal(l.health().state, "released");
});

test("observability: a clock step back the policy refuses is counted in the lease's clock metrics", async () => {
  const store = memoryStore();
  const key = "ids:observe-behind";
  let now;
  const l = await lease(store, leaseOptions({ ...options, key, clock: () => now ?? Date.now() }));
  now = l.notBefore + 1; // the first time the lease may issue at
  const gen = l.generator({ onClockBackwards: "fail" });
  gen.next();
  now -= 50;
  assert.throws(() => gen.next(), /clock moved backwards by 50 ms/);
  assert.throws(() => gen.next(), /clock moved backwards by 50 ms/);
  now += 20;
  assert.throws(() => gen.next(), /clock moved backwards by 30 ms/);
  const { clock } = l.health();
  assert.deepEqual(clock, { behind: 3, largestBehindMs: 50, clockWaits: 0, tickWaits: 0, aheadMs: 30 });
  const text = prometheusText();
  const labels = `space="${key}",node="0"`;
  assert.equal(samples(text, "snowdrift_clock_behind_total").get(labels), 3);
  assert.equal(samples(text, "snowdrift_clock_largest_behind_seconds").get(labels), 0.05);
  assert.equal(samples(text, "snowdrift_clock_waits_total").get(labels), 0);
  await l.release();
});

test("observability: the Prometheus text: every family typed once, labels escaped, the same values as collect()", async () => {
  const store = memoryStore();
  const key = 'ids:"quoted"\\back\nslash';
  const l = await lease(store, leaseOptions({ ...options, key }));
  const text = prometheusText();
  const families = collect();
  assert.equal(families.length, 18);
  for (const f of families) {
    assert.equal(text.split("\n").filter((line) => line === `# TYPE ${f.name} ${f.type}`).length, 1, f.name);
    assert.ok(text.includes(`# HELP ${f.name} `));
    for (const { labels, value } of f.values) {
      assert.ok(Number.isFinite(value), `${f.name} ${JSON.stringify(labels)}`);
    }
  }
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# ")) continue;
    assert.match(line, /^[a-z_]+\{([a-z]+="([^"\\\n]|\\["\\n])*",?)+\} [-+0-9.e]+$/, line);
  }
  const escaped = 'space="ids:\\"quoted\\"\\\\back\\nslash"';
  assert.equal(samples(text, "snowdrift_lease_acquires_total").get(escaped), 1);
  assert.deepEqual(STATES, ["ok", "renewing late", "lapsed", "lost", "released"]);
  await l.release();
});

test("observability: onEvent must be a function, and a callback that throws does not stop the lease", async () => {
  assert.throws(
    () => leaseOptions({ ...options, onEvent: 5 }),
    /onEvent must be a function \(event, data\) hearing the lease's events/,
  );
  const store = memoryStore();
  const l = await lease(
    store,
    leaseOptions({
      ...options,
      key: "ids:observe-throws",
      renewEveryMs: 100,
      onEvent: () => {
        throw new Error("the app's callback failed");
      },
    }),
  );
  assert.ok(await until(() => l.health().renewals >= 2, 10 * LIVE_MS));
  assert.equal(l.state, "live");
  await l.release();
});

test("observability: a space's free node ids: never leased, or fence passed by the store's clock; recorded as gauges", () => {
  const lease = (node, untilMs) => ({ node, untilMs, holder: untilMs > 1000 ? "a holder" : null });
  const listing = {
    nowMs: 1000,
    capacity: 8,
    ttlMs: 100,
    skewMs: 10,
    createdMs: 0,
    next: 3,
    leases: [lease(0, 900), lease(1, 1000), lease(2, 1001)],
  };
  assert.equal(freeIds(listing), 7, "ids 3..8 never leased, and ids 0 and 1 whose fences passed");
  const none = { ...listing, capacity: null, next: null, leases: [] };
  assert.equal(freeIds(none), null, "no such space");
  recordListing("ids:listed", listing);
  const text = prometheusText();
  assert.equal(samples(text, "snowdrift_space_free_ids").get('space="ids:listed"'), 7);
  assert.equal(samples(text, "snowdrift_space_capacity").get('space="ids:listed"'), 8);
  recordListing("ids:listed", none);
  assert.equal(samples(prometheusText(), "snowdrift_space_free_ids").get('space="ids:listed"'), undefined);
});
