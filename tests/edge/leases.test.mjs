// The lease protocol of `snowdrift/cloudflare` (lease/PROTOCOL.md, "Cloudflare Durable
// Objects") in workerd: the package's object class on SQLite storage, called by client
// workers in their own isolates. The objects' clock is moved by the tests (an offset on
// the host's), so nothing waits for a lease to end.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { open, workerdPids } from "./harness.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const LAYOUT = "time 41 bits of 1 ms from 1288834974657, node 3 bits, sequence 12 bits, node above sequence";
const TTL = 1000;
const SKEW = 100;

const dirs = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir() {
  const d = mkdtempSync(join(tmpdir(), "snowdrift-edge-"));
  dirs.push(d);
  return d;
}

let tokens = 0;
/** An acquire request of `space` with the test's settings. */
const ask = (space, more = {}) => ({
  space,
  capacity: 8,
  ttl: TTL,
  skew: SKEW,
  token: `token-${++tokens}`,
  holder: `holder ${tokens}`,
  layout: LAYOUT,
  ...more,
});

/** Runs `body(store)` on a fresh storage; disposes the store whatever happens. */
async function withStore(options, body) {
  const store = await open(tempDir(), options);
  try {
    await body(store);
  } finally {
    await store.dispose();
  }
}

/** The error `call` rejects with: its name and message. */
async function failure(call) {
  const e = await call.then(
    (v) => assert.fail(`expected an error, got ${JSON.stringify(v)}`),
    (e) => e,
  );
  return { name: e.name, message: e.message };
}

test("concurrent acquirers in three isolates get distinct ids; when all are leased, LEASED", async () => {
  await withStore({ clients: 3 }, async (store) => {
    const at = await store.clock(0);
    const first = await store.call(0, "acquire", ask("ids:busy"));
    // Four calls at once from each client: twelve acquires of the seven ids left.
    const results = (
      await Promise.all([0, 1, 2].map((c) => store.calls(c, "acquire", [ask("ids:busy", { token: `t${c}` })], 4)))
    ).flat();
    const granted = [first, ...results.filter((r) => r.ok).map((r) => r.ok)];
    const refused = results.filter((r) => r.error).map((r) => r.error);
    assert.deepEqual(granted.map((g) => g.node).sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(refused.length, 5);
    for (const e of refused) {
      assert.deepEqual(e, { name: "Error", message: "LEASED all 8 node ids of 'ids:busy' are leased" });
    }
    const { created } = await store.call(0, "list", "ids:busy");
    assert.ok(created >= at);
    for (const g of granted) {
      assert.equal(g.until, g.now + TTL);
      // A new space's first leases are fenced after its guard window.
      assert.equal(g.notBefore, created + TTL + SKEW);
    }
  });
});

test("an ended lease is reclaimed oldest first, not before its old fence", async () => {
  await withStore({}, async (store) => {
    const space = "ids:reclaim";
    const more = { capacity: 2 };
    const a = await store.call(0, "acquire", ask(space, more));
    const breq = ask(space, more);
    const b = await store.call(1, "acquire", breq);
    assert.deepEqual([a.node, b.node], [0, 1]);
    // b renews later, so a's lease ends first.
    await store.clock(400);
    const rb = await store.call(1, "renew", { space, node: 1, token: breq.token, ttl: TTL });
    assert.ok(rb.until > a.until);
    await store.clock(a.until - Date.now() + 50);
    const c = await store.call(0, "acquire", ask(space, more));
    assert.equal(c.node, 0);
    assert.ok(c.notBefore >= a.until - 1 && c.notBefore >= c.now, JSON.stringify({ a, c }));
    // b's lease has not ended.
    assert.deepEqual(await failure(store.call(1, "acquire", ask(space, more))), {
      name: "Error",
      message: "LEASED all 2 node ids of 'ids:reclaim' are leased",
    });
    await store.clock(rb.until - Date.now() + 10);
    const d = await store.call(1, "acquire", ask(space, more));
    assert.equal(d.node, 1);
    assert.ok(d.notBefore >= rb.until - 1);
  });
});

test("release hands the id on from the newest ID issued, and never raises the fence", async () => {
  await withStore({}, async (store) => {
    const space = "ids:release";
    const more = { capacity: 1 };
    // Past the new space's guard window, a grant starts at the object's clock.
    const first = ask(space, more);
    const g1 = await store.call(0, "acquire", first);
    await store.clock(TTL + SKEW + 10);
    // A release never moves the fence up (a lease given up before its generator was made
    // passes a time past its end).
    assert.equal(await store.call(0, "release", { space, node: 0, token: first.token, issued: g1.until + 1000 }), true);
    assert.deepEqual((await store.call(0, "list", space)).ids, [{ node: 0, until: g1.until, holder: "" }]);
    const second = ask(space, more);
    const g2 = await store.call(1, "acquire", second);
    assert.equal(g2.notBefore, g2.now);
    // Another lease's token releases nothing.
    assert.equal(await store.call(0, "release", { space, node: 0, token: first.token, issued: g2.now }), false);
    const issued = g2.now + 50;
    assert.equal(await store.call(1, "release", { space, node: 0, token: second.token, issued }), true);
    const listed = await store.call(0, "list", space);
    assert.deepEqual(listed.ids, [{ node: 0, until: issued + 1, holder: "" }]);
    assert.equal(await store.call(1, "release", { space, node: 0, token: second.token, issued }), false);
    // Once the clock passes issued + 1 the id goes to the next holder, long before g2's end.
    await store.clock(TTL + SKEW + 10 + (issued + 1 - g2.now) + 5);
    const g3 = await store.call(0, "acquire", ask(space, more));
    assert.equal(g3.node, 0);
    assert.ok(g3.now < g2.until, JSON.stringify({ g2, g3 }));
    assert.ok(g3.notBefore >= issued);
  });
});

test("renew moves the fence forward only", async () => {
  await withStore({}, async (store) => {
    const space = "ids:renew";
    const req = ask(space);
    const g = await store.call(0, "acquire", req);
    const renew = () => store.call(0, "renew", { space, node: g.node, token: req.token, ttl: TTL });
    await store.clock(300);
    const r1 = await renew();
    assert.equal(r1.until, r1.now + TTL);
    assert.ok(r1.until >= g.until + 300);
    // A shorter TTL does not take the fence back.
    const r2 = await store.call(1, "renew", { space, node: g.node, token: req.token, ttl: 100 });
    assert.equal(r2.until, r1.until);
    // Nor does the host's clock going back: the object's clock never goes behind the newest
    // time it recorded.
    await store.clock(-5000);
    const r3 = await renew();
    assert.ok(r3.now >= r2.now, JSON.stringify({ r2, r3 }));
    assert.equal(r3.until, Math.max(r1.until, r3.now + TTL));
    const listed = await store.call(0, "list", space);
    assert.deepEqual(listed.ids, [{ node: g.node, until: r3.until, holder: req.holder }]);
  });
});

test("a lease taken over after it ended is LOST", async () => {
  await withStore({}, async (store) => {
    const space = "ids:lost";
    const more = { capacity: 1 };
    const old = ask(space, more);
    const g = await store.call(0, "acquire", old);
    await store.clock(g.until - Date.now() + 20);
    const taker = ask(space, more);
    const t = await store.call(1, "acquire", taker);
    assert.equal(t.node, 0);
    assert.deepEqual(await failure(store.call(0, "renew", { space, node: 0, token: old.token, ttl: TTL })), {
      name: "Error",
      message:
        "LOST node id 0 of 'ids:lost' is no longer held by this lease (taken over after it ended, renewed by a copy of this holder, or the object's storage was wiped)",
    });
    assert.equal(await store.call(0, "release", { space, node: 0, token: old.token, issued: g.until }), false);
    const r = await store.call(1, "renew", { space, node: 0, token: taker.token, ttl: TTL });
    assert.ok(r.until >= t.until);
  });
});

test("one space, one setting: acquire names both; bad arguments name the value and the range", async () => {
  await withStore({}, async (store) => {
    const space = "ids:config";
    await store.call(0, "acquire", ask(space));
    const was = `space 'ids:config' leases 8 node ids of layout "${LAYOUT}" for 1000 ms (skew 100 ms)`;
    const other = "time 41 bits of 1 ms from 0, node 3 bits, sequence 12 bits, node above sequence";
    for (const [more, asked] of [
      [{ ttl: 2000 }, `8 node ids of layout "${LAYOUT}" for 2000 ms (skew 100 ms)`],
      [{ skew: 200 }, `8 node ids of layout "${LAYOUT}" for 1000 ms (skew 200 ms)`],
      [{ capacity: 16 }, `16 node ids of layout "${LAYOUT}" for 1000 ms (skew 100 ms)`],
      [{ layout: other }, `8 node ids of layout "${other}" for 1000 ms (skew 100 ms)`],
    ]) {
      assert.deepEqual(await failure(store.call(1, "acquire", ask(space, more))), {
        name: "Error",
        message: `CONFIG ${was}; this client asked for ${asked}`,
      });
    }
    for (const [req, name, message] of [
      [ask(space, { skew: 500 }), "RangeError", "skew 500 is outside the allowed range 0..=499"],
      [ask(space, { ttl: 0 }), "RangeError", "ttl 0 is outside the allowed range 100..=31536000000"],
      [ask(space, { capacity: 2.5 }), "RangeError", "capacity 2.5 is not an integer (allowed 1..=4294967296)"],
      [ask(space, { token: "" }), "RangeError", 'token "" has 0 characters (allowed 1..=256)'],
      [ask(space, { token: 7 }), "TypeError", "token must be a string, got number 7"],
      [ask("", {}), "RangeError", 'space "" has 0 characters (allowed 1..=1024)'],
    ]) {
      assert.deepEqual(await failure(store.call(0, "acquire", req)), { name, message });
    }
    assert.deepEqual(await failure(store.call(0, "renew", { space, node: -1, token: "t", ttl: TTL })), {
      name: "RangeError",
      message: "node -1 is outside the allowed range 0..=4294967295",
    });
    const { token: _, ...settings } = ask(space);
    for (const [req, name, message] of [
      [{ ...settings, count: 0 }, "RangeError", "count 0 is outside the allowed range 1..=100000"],
      [{ ...settings, capacity: 16, count: 1 }, "RangeError", /^capacity 16 is outside the allowed range 1\.\.=8/],
      [{ ...settings, layout: "twitter", count: 1 }, "RangeError", /^layout "twitter" is not a layout's text/],
      [{ ...settings, ttl: 2000, count: 1 }, "Error", /^CONFIG space 'ids:config' leases 8 node ids/],
    ]) {
      const e = await failure(store.call(0, "ids", req));
      assert.equal(e.name, name);
      if (typeof message === "string") assert.equal(e.message, message);
      else assert.match(e.message, message);
    }
    // Nothing was granted by the refused calls.
    assert.equal((await store.call(0, "list", space)).next, 1);
  });
});

test("a restarted object keeps its grants, and its clock never goes behind what it recorded", async () => {
  const dir = tempDir();
  const space = "ids:restart";
  let store = await open(dir, { offset: 5000 });
  const reqs = [ask(space), ask(space), ask(space)];
  let before;
  try {
    for (const r of reqs) r.grant = await store.call(0, "acquire", r);
    before = await store.call(1, "list", space);
  } finally {
    await store.dispose();
  }
  // Reopened on the same storage, with the host's clock 5 s behind the last one's.
  store = await open(dir, { offset: 0 });
  try {
    const listed = await store.call(1, "list", space);
    assert.deepEqual(listed.ids, before.ids);
    assert.equal(listed.created, before.created);
    // The newest time the storage recorded is the last grant's.
    assert.ok(listed.now >= reqs[2].grant.now, JSON.stringify({ listed, grant: reqs[2].grant }));
    // while the host's clock reads seconds earlier.
    assert.ok((await store.clock(0)) < reqs[2].grant.now - 3000);
    for (const r of reqs) {
      const renewed = await store.call(0, "renew", { space, node: r.grant.node, token: r.token, ttl: TTL });
      assert.ok(renewed.now >= r.grant.now && renewed.until >= r.grant.until);
    }
    assert.equal((await store.call(1, "acquire", ask(space))).node, 3);
  } finally {
    await store.dispose();
  }
});

test("every grant is written before the reply: workerd killed right after it keeps the grant", async () => {
  const dir = tempDir();
  const space = "ids:durable";
  const req = ask(space);
  let store = await open(dir);
  let grant;
  try {
    grant = await store.call(0, "acquire", req);
    const pids = workerdPids();
    assert.ok(pids.length > 0, "no workerd process found");
    for (const pid of pids) process.kill(pid, "SIGKILL");
  } finally {
    await store.dispose().catch(() => {});
  }
  store = await open(dir);
  try {
    const listed = await store.call(0, "list", space);
    assert.deepEqual(listed.ids, [{ node: grant.node, until: grant.until, holder: req.holder }]);
    await store.call(0, "renew", { space, node: grant.node, token: req.token, ttl: TTL });
  } finally {
    await store.dispose();
  }
});

/** The holders of `space` as granted, then its storage lost by `lose(store)` (which may
 * return a new store): their renewals are LOST, and the next grants are fenced after the
 * new space's guard window, beyond every fence the lost records held. */
async function lostStorage(lose) {
  const dir = tempDir();
  const space = "ids:wiped";
  let store = await open(dir);
  try {
    const holders = [ask(space), ask(space)];
    for (const h of holders) h.grant = await store.call(0, "acquire", h);
    // Past the first guard window, the holders renew: their fences move on.
    await store.clock(TTL + SKEW + 200);
    for (const h of holders) {
      h.grant = await store.call(1, "renew", { space, node: h.grant.node, token: h.token, ttl: TTL });
    }
    const newest = Math.max(...holders.map((h) => h.grant.until));
    store = (await lose(store, dir)) ?? store;
    await store.clock(TTL + SKEW + 200);
    for (const [i, h] of holders.entries()) {
      const e = await failure(store.call(i, "renew", { space, node: i, token: h.token, ttl: TTL }));
      assert.equal(e.message.split(" ")[0], "LOST");
    }
    const next = await store.call(0, "acquire", ask(space));
    const listed = await store.call(1, "list", space);
    assert.equal(next.node, 0);
    assert.equal(next.notBefore, listed.created + TTL + SKEW);
    assert.ok(next.notBefore > newest, JSON.stringify({ next, newest }));
    // Once the window is over, grants start at the object's clock again.
    await store.clock(TTL + SKEW + 200 + TTL + SKEW + 10);
    const later = await store.call(1, "acquire", ask(space));
    assert.equal(later.node, 1);
    assert.equal(later.notBefore, later.now);
  } finally {
    await store.dispose();
  }
}

test("storage wiped while the object lives (deleteAll): holders are LOST, new grants are fenced", async () => {
  await lostStorage(async (store) => {
    await store.call(0, "wipe", "ids:wiped");
  });
});

test("storage wiped across a restart: holders are LOST, new grants are fenced", async () => {
  await lostStorage(async (store, dir) => {
    await store.dispose();
    for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
    return open(dir);
  });
});

test("an object whose host's clock is 10 TTLs behind goes on at the local clock's speed: renewals move fences, ended leases return", async () => {
  const dir = tempDir();
  const space = "ids:behind";
  const more = { capacity: 2 };
  const [a, b] = [ask(space, more), ask(space, more)];
  const renewA = () => store.call(1, "renew", { space, node: a.grant.node, token: a.token, ttl: TTL });
  let store = await open(dir);
  try {
    a.grant = await store.call(0, "acquire", a);
    b.grant = await store.call(0, "acquire", b);
    // The host's clock steps back 10 s while the object runs: each renewal still moves the
    // fence by at least the time between them.
    await store.clock(-10 * TTL);
    let last = { r: await renewA(), answered: performance.now() };
    for (let i = 0; i < 3; i++) {
      await sleep(150);
      const sent = performance.now();
      const r = await renewA();
      const gap = Math.floor(sent - last.answered);
      assert.ok(r.until - last.r.until >= gap - 2, `the fence moved ${r.until - last.r.until} ms in ${gap} ms`);
      last = { r, answered: performance.now() };
    }
  } finally {
    await store.dispose();
  }
  // Restarted on a host 10 s behind: b's lease, never renewed, ends a TTL after its grant
  // in the object's time, which goes on from the newest time recorded.
  store = await open(dir, { offset: -10 * TTL });
  try {
    const c = ask(space, more);
    let refused = 0;
    for (let i = 0; i < 40 && c.grant === undefined; i++) {
      try {
        c.grant = await store.call(0, "acquire", c);
      } catch (e) {
        assert.equal(e.message, `LEASED all 2 node ids of '${space}' are leased`);
        refused++;
        await sleep(100);
      }
    }
    assert.ok(c.grant !== undefined, `still LEASED after ${refused} tries over 4 s`);
    assert.equal(c.grant.node, b.grant.node);
    assert.ok(c.grant.notBefore >= b.grant.until - 1, JSON.stringify({ b: b.grant, c: c.grant }));
    const r = await renewA();
    assert.ok(r.now >= c.grant.now && r.until === r.now + TTL, JSON.stringify({ r, c: c.grant }));
  } finally {
    await store.dispose();
  }
});

test("the space's row or the store's row lost alone (by hand): holders are LOST, new grants are fenced", async () => {
  for (const table of ["snowdrift_spaces", "snowdrift_store"]) {
    await lostStorage(async (store) => {
      await store.call(0, "exec", "ids:wiped", `DELETE FROM ${table}`);
    });
  }
});

test("one lease row lost alone (by hand): its holder is LOST and its id is never granted again", async () => {
  await withStore({}, async (store) => {
    const space = "ids:row";
    const more = { capacity: 2 };
    const [a, b] = [ask(space, more), ask(space, more)];
    a.grant = await store.call(0, "acquire", a);
    b.grant = await store.call(0, "acquire", b);
    await store.call(0, "exec", space, `DELETE FROM snowdrift_leases WHERE node = ${a.grant.node}`);
    const e = await failure(store.call(1, "renew", { space, node: a.grant.node, token: a.token, ttl: TTL }));
    assert.equal(e.message.split(" ")[0], "LOST");
    // Every fence passed: only b's id is granted again, after its fence.
    await store.clock(3 * TTL);
    const c = await store.call(1, "acquire", ask(space, more));
    assert.equal(c.node, b.grant.node);
    assert.ok(c.notBefore >= b.grant.until - 1);
    assert.equal((await failure(store.call(1, "acquire", ask(space, more)))).message.split(" ")[0], "LEASED");
  });
});

test("requests replayed: an acquire sent twice grants two ids; a renewal after the release is LOST", async () => {
  await withStore({}, async (store) => {
    const space = "ids:replay";
    const req = ask(space, { capacity: 2 });
    const [g1, g2] = [await store.call(0, "acquire", req), await store.call(1, "acquire", req)];
    assert.deepEqual([g1.node, g2.node], [0, 1], "never one id twice");
    const listed = await store.call(0, "list", space);
    assert.deepEqual(
      listed.ids.map((l) => l.holder),
      [req.holder, req.holder],
      "the first stays leased until its TTL passes",
    );
    const ticket = { space, node: g1.node, token: req.token };
    assert.equal(await store.call(0, "release", { ...ticket, issued: g1.notBefore }), true);
    assert.equal(await store.call(1, "release", { ...ticket, issued: g1.notBefore }), false);
    const e = await failure(store.call(0, "renew", { ...ticket, ttl: TTL }));
    assert.equal(e.message.split(" ")[0], "LOST");
    // The other lease of the token is untouched.
    const r = await store.call(1, "renew", { space, node: g2.node, token: req.token, ttl: TTL });
    assert.ok(r.until >= g2.until);
  });
});

test("tokens: a renewal replaces the token with the next one, the same renewal sent again renews, a copy holding the old token is LOST, a release matches either token of a renewal without a reply", async () => {
  await withStore({}, async (store) => {
    const space = "ids:tokens";
    const req = ask(space);
    const g = await store.call(0, "acquire", req);
    const at = (token, next) => ({ space, node: g.node, token, next, ttl: TTL });
    const first = await store.call(0, "renew", at(req.token, "a1"));
    assert.ok(first.until >= g.until);
    assert.ok((await store.call(1, "renew", at(req.token, "a1"))).until >= first.until, "sent again: renews");
    const copy = await failure(store.call(1, "renew", at(req.token, "b1")));
    assert.match(copy.message, /^LOST node id \d+ of 'ids:tokens' is no longer held by this lease/, "the copy");
    assert.equal((await failure(store.call(0, "renew", at(req.token)))).message.split(" ")[0], "LOST");
    await store.call(0, "renew", at("a1", "a2"));
    await store.call(0, "renew", at("a2", "a3")); // its reply never came
    const release = (token, next) => ({ space, node: g.node, token, next, issued: g.notBefore });
    assert.equal(await store.call(0, "release", release(req.token, "a1")), false, "old tokens");
    assert.equal(await store.call(0, "release", release("a2", "a3")), true);
    assert.equal((await failure(store.call(0, "renew", at("a3", "a4")))).message.split(" ")[0], "LOST");
    const bad = await failure(store.call(0, "renew", at("a3", 7)));
    assert.match(bad.message, /next/, "a next that is not text is refused, naming it");
  });
});

/** The layout of LAYOUT, for decoding the object's IDs. */
const SPEC = { timeBits: 41, nodeBits: 3, sequenceBits: 12, unitMs: 1, epochMs: 1288834974657 };

/** The request of `ids` for `space` with the test's settings (`more` added). */
function idsRequest(space, more, count) {
  const { token: _, ...settings } = ask(space, { ...more, holder: "ids" });
  return { ...settings, count };
}

/** `count` IDs issued by the object of `space`, once a new space has a tick to issue in. */
async function issue(store, space, more, count) {
  for (let i = 0; i < 30; i++) {
    const r = await store.call(0, "ids", idsRequest(space, more, count));
    if (r.wait === undefined) return r;
    await sleep(Math.min(r.wait, 50));
  }
  assert.fail("the new space never became usable");
}

test("ids: the object issues from a free id for the call alone and hands it on; devices after it start past its IDs", async () => {
  const { decode } = await import("snowdrift");
  const dir = tempDir();
  const space = "ids:object";
  const more = { capacity: 2 };
  const ids = (store, count) => issue(store, space, more, count);
  const timeOf = (id) => decode(BigInt(id), SPEC).timeMs;
  const all = [];
  let store = await open(dir);
  try {
    const first = await ids(store, 5000);
    assert.equal(first.node, 0);
    assert.equal(first.ids.length, 5000);
    all.push(...first.ids);
    // Past the new space's guard window, the next call's id is handed on at once.
    await store.clock(TTL + SKEW + 10);
    const second = await ids(store, 10);
    all.push(...second.ids);
    const listed = await store.call(0, "list", space);
    assert.deepEqual(listed.next, 1);
    assert.ok(listed.ids[0].until <= listed.now + 5, JSON.stringify(listed));
  } finally {
    await store.dispose();
  }
  // A restarted object goes on after its own IDs.
  let offset = TTL + SKEW + 10;
  store = await open(dir, { offset });
  try {
    const third = await ids(store, 10);
    assert.equal(third.node, 0);
    all.push(...third.ids);
    // Two devices lease both ids; the one on id 0 starts after every ID the object issued.
    offset += 20;
    await store.clock(offset);
    const devices = [ask(space, more), ask(space, more)];
    for (const d of devices) d.grant = await store.call(1, "acquire", d);
    assert.deepEqual(devices.map((d) => d.grant.node).sort(), [0, 1]);
    const onZero = devices.find((d) => d.grant.node === 0).grant;
    assert.ok(onZero.notBefore >= Math.max(...all.map(timeOf)), JSON.stringify(onZero));
    // With every id leased, ids is refused like an acquire.
    assert.deepEqual(await failure(store.call(0, "ids", idsRequest(space, more, 1))), {
      name: "Error",
      message: `LEASED all 2 node ids of '${space}' are leased`,
    });
    // The storage wiped under the object's generator: the next IDs come after the new
    // space's guard window, past every ID before.
    await store.call(0, "wipe", space);
    offset += SKEW + 10;
    await store.clock(offset);
    const fourth = await ids(store, 10);
    all.push(...fourth.ids);
  } finally {
    await store.dispose();
  }
  const sorted = [...all].map(BigInt);
  for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i] > sorted[i - 1], `ID ${i} not above the one before`);
});

test("ids after its id was taken by a device, or its row lost alone: the next call issues from another id, none twice", async () => {
  await withStore({}, async (store) => {
    const space = "ids:moved";
    const more = { capacity: 3 };
    const all = [];
    const first = await issue(store, space, more, 100);
    all.push(...first.ids);
    // Past the guard window, every other id leased: a device takes the id ids used.
    await store.clock(TTL + SKEW + 10);
    const devices = [ask(space, more), ask(space, more), ask(space, more)];
    for (const d of devices.slice(0, 2)) d.grant = await store.call(1, "acquire", d);
    assert.deepEqual(
      devices.slice(0, 2).map((d) => d.grant.node),
      [1, 2],
    );
    devices[2].grant = await store.call(1, "acquire", devices[2]);
    assert.equal(devices[2].grant.node, first.node);
    assert.equal((await failure(store.call(0, "ids", idsRequest(space, more, 1)))).message.split(" ")[0], "LEASED");
    // Device 1 goes away: ids takes its id after its fence.
    await store.call(1, "release", { space, node: 1, token: devices[0].token, issued: devices[0].grant.notBefore });
    await store.clock(TTL + SKEW + 20);
    const second = await issue(store, space, more, 100);
    assert.equal(second.node, 1);
    all.push(...second.ids);
    // Its row deleted by hand: it is never granted again, and ids has no id left.
    await store.call(0, "exec", space, "DELETE FROM snowdrift_leases WHERE node = 1");
    assert.equal((await failure(store.call(0, "ids", idsRequest(space, more, 1)))).message.split(" ")[0], "LEASED");
    assert.equal(new Set(all).size, all.length, "no ID twice");
  });
});
