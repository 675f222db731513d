// `snowdrift/http`'s lease handler in Node, over a store object that records its calls:
// the options it refuses, authorize, CORS, bad requests (each error names the value and
// the allowed range), the store's refusals and failures as statuses, `ids` (bounded,
// unique, from the handler's own lease renewed lazily), Node's http server through
// `nodeListener` on 127.0.0.1, and the handler in Deno and Bun.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { preflight } from "./harness.mjs";

const require = createRequire(import.meta.url);
const { leaseHandler, nodeListener } = require("snowdrift/http");
const { decode } = require("snowdrift");

/** A store of the lease rules' interface in memory: grants ids in order, replaces a
 * lease's token with the next one at each renewal (lease/PROTOCOL.md, "Tokens"), records calls;
 * `fail` (a function of the call's name) makes a call throw what it returns. With `step`,
 * the store's clock starts an hour ahead and moves `store.step` ms per call, and its grants are
 * those of a new space: not before the store's clock plus the TTL and skew. */
function memoryStore({ fail, step } = {}) {
  const calls = [];
  const held = new Map(); // node -> token
  let next = 0;
  let storeNow = Date.now() + 3_600_000;
  const clock = () => (step === undefined ? Date.now() : (storeNow += store.step));
  const holds = (t) => held.has(t.node) && [t.token, t.next].includes(held.get(t.node));
  const maybeFail = (name) => {
    const e = fail?.(name);
    if (e) throw e;
  };
  const store = {
    calls,
    held,
    step,
    async acquire(a) {
      calls.push(["acquire", a]);
      maybeFail("acquire");
      const node = next++;
      held.set(node, a.token);
      const now = clock();
      return { node, notBefore: step === undefined ? now : now + a.ttl + a.skew, until: now + a.ttl, now };
    },
    async renew(t, ttl) {
      calls.push(["renew", t]);
      maybeFail("renew");
      if (!holds(t)) throw new Error(`LOST node id ${t.node} of '${t.space}' is no longer held`);
      if (t.next !== undefined) held.set(t.node, t.next);
      return clock() + ttl;
    },
    async release(t, issued) {
      calls.push(["release", t, issued]);
      maybeFail("release");
      const mine = holds(t);
      if (mine) held.delete(t.node);
      return mine ? 1 : 0;
    },
  };
  return store;
}

const SPACES = { web: { layout: "default", ttlMs: 60_000, skewMs: 1000 } };
const ORIGIN = "https://app.example";

function handler(extra = {}) {
  const store = extra.store ?? memoryStore();
  const h = leaseHandler({ store, spaces: SPACES, authorize: () => true, origins: [ORIGIN], ...extra });
  return { h, store };
}

/** POSTs `body` (an object, or a string as it is) to `call`; { status, headers, json }. */
async function post(h, call, body, headers = {}) {
  const res = await h(
    new Request(`http://127.0.0.1/lease/${call}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
  return { status: res.status, headers: res.headers, json: await res.json() };
}

test("leaseHandler refuses options that would let anyone lease, or settings out of range", () => {
  const store = memoryStore();
  assert.throws(() => leaseHandler({ store, spaces: SPACES }), {
    name: "TypeError",
    message: /^authorize must be a function .*no default: anyone could exhaust a space.*got undefined/,
  });
  const base = { store, authorize: () => true };
  assert.throws(() => leaseHandler({ ...base, spaces: { web: { ttlMs: 50 } } }), {
    name: "RangeError",
    message: "ttlMs 50 is outside the allowed range 100..=31536000000",
  });
  assert.throws(() => leaseHandler({ ...base, spaces: { web: { ttlMs: 1000, skewMs: 500 } } }), {
    message: "skewMs 500 is outside the allowed range 0..=499",
  });
  assert.throws(() => leaseHandler({ ...base, spaces: { web: { layout: "nope" } } }), {
    message: /unknown layout "nope"/,
  });
  assert.throws(() => leaseHandler({ ...base, spaces: {} }), { message: "spaces must name at least one space" });
  assert.throws(() => leaseHandler({ ...base, spaces: SPACES, maxIds: 0 }), {
    message: "maxIds 0 is outside the allowed range 1..=100000",
  });
  assert.throws(() => leaseHandler({ ...base, spaces: SPACES, origins: ["https://a.example/"] }), {
    message: /origin "https:\/\/a.example\/" is not an origin/,
  });
  assert.throws(() => leaseHandler({ ...base, spaces: SPACES, store: {} }), {
    name: "TypeError",
    message: /^store must be/,
  });
});

test("acquire answers the lease and the space's settings; renew and release follow it", async () => {
  const { h } = handler();
  const a = await post(h, "acquire", { space: "web" });
  assert.equal(a.status, 200);
  assert.deepEqual(Object.keys(a.json).sort(), [
    "layout",
    "node",
    "notBefore",
    "now",
    "skewMs",
    "space",
    "token",
    "ttlMs",
    "until",
  ]);
  assert.equal(a.json.ttlMs, 60_000);
  assert.equal(a.json.layout, "default");
  assert.match(a.json.token, /^[0-9a-f]{32}$/);
  const r = await post(h, "renew", { space: "web", node: a.json.node, token: a.json.token });
  assert.equal(r.status, 200);
  assert.ok(r.json.until >= a.json.until);
  const rel = await post(h, "release", {
    space: "web",
    node: a.json.node,
    token: a.json.token,
    issued: a.json.notBefore,
  });
  assert.deepEqual(rel.json, { released: true });
  const lost = await post(h, "renew", { space: "web", node: a.json.node, token: a.json.token });
  assert.equal(lost.status, 409);
  assert.equal(lost.json.error.code, "LOST");
  assert.match(lost.json.error.message, /^node id 0 of 'web' is no longer held/);
});

test("authorize sees the request and the call; a refusal is 403 and reaches no store", async () => {
  const seen = [];
  const { h, store } = handler({
    authorize: (request, call) => {
      seen.push([request.headers.get("authorization"), call]);
      return request.headers.get("authorization") === "Bearer good";
    },
  });
  const no = await post(h, "acquire", { space: "web" }, { authorization: "Bearer bad" });
  assert.equal(no.status, 403);
  assert.deepEqual(no.json.error, { code: "FORBIDDEN", message: "not authorized to acquire in space 'web'" });
  const ids = await post(h, "ids", { space: "web", count: 5 }, { authorization: "Bearer bad" });
  assert.equal(ids.status, 403);
  assert.equal(store.calls.length, 0, "no store call for a refused request");
  const yes = await post(h, "acquire", { space: "web" }, { authorization: "Bearer good" });
  assert.equal(yes.status, 200);
  assert.deepEqual(seen[1], ["Bearer bad", { call: "ids", space: "web", count: 5 }]);
  // A hook that throws refuses too, without telling why (its error stays on the server).
  const { h: h2 } = handler({
    authorize: () => {
      throw new Error("token expired");
    },
  });
  const thrown = await post(h2, "acquire", { space: "web" });
  assert.equal(thrown.status, 403);
  assert.equal(thrown.json.error.message, "not authorized to acquire in space 'web'");
});

test("holder describes each lease to operators; a holder function that fails is the server's error (500)", async () => {
  const { h, store } = handler({ holder: (request) => `device ${request.headers.get("x-device")}` });
  assert.equal((await post(h, "acquire", { space: "web" }, { "x-device": "tablet-7" })).status, 200);
  assert.equal(store.calls[0][1].holder, "device tablet-7");
  const broken = handler({ holder: () => 42 });
  const r = await post(broken.h, "acquire", { space: "web" });
  assert.equal(r.status, 500);
  assert.deepEqual(r.json.error, { code: "INTERNAL", message: "the lease handler's holder function failed" });
  assert.equal(broken.store.calls.length, 0);
});

test("CORS: a preflight from a listed origin is answered; other origins get 403 and reach no store", async () => {
  const { h, store } = handler();
  const pre = await h(new Request("http://127.0.0.1/lease/acquire", preflight(ORIGIN, "content-type,authorization")));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), ORIGIN);
  assert.equal(pre.headers.get("access-control-allow-methods"), "POST");
  assert.equal(pre.headers.get("access-control-allow-headers"), "content-type,authorization");
  assert.equal(pre.headers.get("vary"), "Origin");
  assert.equal(pre.headers.get("access-control-allow-credentials"), null);
  const ok = await post(h, "acquire", { space: "web" }, { origin: ORIGIN });
  assert.equal(ok.headers.get("access-control-allow-origin"), ORIGIN);

  const evil = "https://evil.example";
  const badPre = await h(
    new Request("http://127.0.0.1/lease/acquire", { method: "OPTIONS", headers: { origin: evil } }),
  );
  assert.equal(badPre.status, 403);
  assert.equal(badPre.headers.get("access-control-allow-origin"), null);
  const calls = store.calls.length;
  const bad = await post(h, "acquire", { space: "web" }, { origin: evil });
  assert.equal(bad.status, 403);
  assert.deepEqual(bad.json.error, { code: "ORIGIN", message: `origin "${evil}" is not allowed to lease here` });
  assert.equal(bad.headers.get("vary"), "Origin");
  assert.equal(store.calls.length, calls, "no store call from an origin not listed");
  // Cookies and HTTP auth across origins only when asked for.
  const { h: withCredentials } = handler({ credentials: true });
  const c = await post(withCredentials, "acquire", { space: "web" }, { origin: ORIGIN });
  assert.equal(c.headers.get("access-control-allow-credentials"), "true");
});

test("bad requests are 4xx errors naming the value and the allowed range", async () => {
  const { h, store } = handler({ maxIds: 50 });
  const cases = [
    ["acquire", "{", 400, "BAD_REQUEST", /^the request body is not JSON/],
    ["acquire", "[1]", 400, "BAD_REQUEST", "the request body must be a JSON object, got array 1"],
    [
      "acquire",
      { space: "web", ttlMs: 5 },
      400,
      "BAD_REQUEST",
      'unknown acquire request option "ttlMs" (allowed: space)',
    ],
    ["acquire", { space: 7 }, 400, "BAD_REQUEST", "space must be a string, got number 7"],
    ["acquire", { space: "" }, 400, "BAD_REQUEST", 'space "" has 0 characters (allowed 1..=1024)'],
    ["acquire", { space: "orders" }, 404, "UNKNOWN_SPACE", 'space "orders" is not served here'],
    [
      "renew",
      { space: "web", node: 1024, token: "t" },
      400,
      "BAD_REQUEST",
      "node 1024 is outside the allowed range 0..=1023",
    ],
    [
      "renew",
      { space: "web", node: 1.5, token: "t" },
      400,
      "BAD_REQUEST",
      "node 1.5 is not an integer (allowed 0..=1023)",
    ],
    ["renew", { space: "web", node: 1, token: "" }, 400, "BAD_REQUEST", 'token "" has 0 characters (allowed 1..=256)'],
    [
      "renew",
      { space: "web", node: 1, token: "t", next: 7 },
      400,
      "BAD_REQUEST",
      "next must be a string, got number 7",
    ],
    [
      "release",
      { space: "web", node: 1, token: "t", issued: 1, next: "x".repeat(257) },
      400,
      "BAD_REQUEST",
      /^next "x+"? has 257 characters \(allowed 1\.\.=256\)$/,
    ],
    [
      "release",
      { space: "web", node: 1, token: "t", issued: -1 },
      400,
      "BAD_REQUEST",
      "issued -1 is outside the allowed range 0..=9007199254740990",
    ],
    ["ids", { space: "web", count: 51 }, 400, "BAD_REQUEST", "count 51 is outside the allowed range 1..=50"],
    ["ids", { space: "web", count: 0 }, 400, "BAD_REQUEST", "count 0 is outside the allowed range 1..=50"],
    ["ids", { space: "web" }, 400, "BAD_REQUEST", "count must be a number, got undefined undefined"],
    ["list", { space: "web" }, 404, "UNKNOWN_CALL", /^call "list" is not one of "acquire", "renew", "release", "ids"/],
    ["acquire", JSON.stringify({ space: "web", pad: "x".repeat(5000) }), 413, "TOO_LARGE", /\(allowed 0\.\.=4096\)$/],
  ];
  for (const [call, body, status, code, message] of cases) {
    const r = await post(h, call, body);
    assert.equal(r.status, status, `${call} ${JSON.stringify(body).slice(0, 60)}`);
    assert.equal(r.json.error.code, code);
    if (typeof message === "string") assert.equal(r.json.error.message, message);
    else assert.match(r.json.error.message, message);
  }
  const get = await h(new Request("http://127.0.0.1/lease/acquire"));
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST, OPTIONS");
  assert.equal(store.calls.length, 0, "no bad request reaches the store");
});

test("the store's refusals are 409s with their code; failures and silence are 503s that hide the store's message", async () => {
  const leased = handler({
    store: memoryStore({ fail: () => new Error("LEASED all 1024 node ids of 'web' are leased") }),
  });
  const r = await post(leased.h, "acquire", { space: "web" });
  assert.equal(r.status, 409);
  assert.deepEqual(r.json.error, { code: "LEASED", message: "all 1024 node ids of 'web' are leased" });

  const down = handler({ store: memoryStore({ fail: () => new Error("connect ECONNREFUSED 10.0.0.7:6379") }) });
  const d = await post(down.h, "acquire", { space: "web" });
  assert.equal(d.status, 503);
  assert.equal(d.json.error.code, "UNAVAILABLE");
  assert.doesNotMatch(d.json.error.message, /10\.0\.0\.7/);

  const silent = memoryStore();
  silent.acquire = () => {
    silent.calls.push(["acquire"]);
    return new Promise(() => {});
  };
  // A store that issues IDs itself (as the Durable Object store does) is bounded the same way.
  silent.ids = () => new Promise(() => {});
  const { h } = handler({ store: silent, storeTimeoutMs: 100 });
  const s = await post(h, "acquire", { space: "web" });
  assert.equal(s.status, 503);
  assert.equal(s.json.error.message, "the lease store did not answer an acquire within 100 ms");
  const i = await post(h, "ids", { space: "web", count: 1 });
  assert.equal(i.status, 503);
  assert.equal(i.json.error.message, "the lease store did not answer an ids call within 100 ms");
  assert.equal(silent.calls.length, 1, "ids asked the store's ids, not for a lease of its own");
});

/** `rounds` ids requests of `count` IDs of the space "web" to `h`: each answered 200 with
 * `count` decimal IDs. Returns them all. */
async function takeIds(h, rounds, count) {
  const all = [];
  for (let i = 0; i < rounds; i++) {
    const r = await post(h, "ids", { space: "web", count });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.ids.length, count);
    assert.ok(r.json.ids.every((id) => /^[1-9][0-9]*$/.test(id)));
    all.push(...r.json.ids);
  }
  return all;
}

test("ids: up to maxIds decimal IDs per request from the handler's own lease, renewed lazily, reacquired when lost", async () => {
  const { h, store } = handler({ store: memoryStore(), spaces: { web: { ttlMs: 600, skewMs: 100 } }, maxIds: 1000 });
  const all = await takeIds(h, 5, 1000);
  assert.equal(new Set(all).size, all.length, "no ID twice");
  assert.equal(store.calls.filter(([c]) => c === "acquire").length, 1, "one lease for every request");
  assert.equal(store.calls.filter(([c]) => c === "renew").length, 0, "not renewed before a third of the TTL");
  await new Promise((r) => setTimeout(r, 250));
  const renewed = await post(h, "ids", { space: "web", count: 10 });
  assert.equal(renewed.status, 200);
  assert.equal(store.calls.filter(([c]) => c === "renew").length, 1, "renewed by the request that found it due");
  all.push(...renewed.json.ids);
  // The store gives the id to someone else: the next due renewal is LOST, and the handler
  // goes on with a new lease on another node id.
  store.held.clear();
  await new Promise((r) => setTimeout(r, 250));
  const after = await post(h, "ids", { space: "web", count: 10 });
  assert.equal(after.status, 200);
  assert.equal(store.calls.filter(([c]) => c === "acquire").length, 2);
  assert.deepEqual(new Set(after.json.ids.map((id) => decode(BigInt(id)).node)), new Set([1]));
  all.push(...after.json.ids);
  assert.equal(new Set(all).size, all.length, "no ID twice across leases");
  await h.close();
  const released = store.calls.filter(([c]) => c === "release");
  assert.equal(released.length, 1, "close() releases the live lease");
  assert.equal(released[0][1].node, 1);
});

test("ids in a new space: a request that reaches the fence renews and goes on; one that a renewal cannot help is 503", async () => {
  // A new space's first lease is fenced a TTL ahead of the store's clock and gets ID time
  // only as renewals move its fence (here 10 ms, about 40,000 IDs, per store call), far
  // sooner than the handler's renewal every TTL / 3 (20 s) would.
  const { h, store } = handler({
    store: memoryStore({ step: 10 }),
    spaces: { web: { ttlMs: 60_000, skewMs: 0 } },
    maxIds: 30_000,
  });
  const all = await takeIds(h, 10, 30_000);
  assert.equal(new Set(all).size, all.length, "no ID twice");
  const renewals = store.calls.filter(([c]) => c === "renew").length;
  assert.ok(renewals >= 7 && renewals <= 11, `one renewal to become usable, then one per request at most: ${renewals}`);
  // The store's clock stands still: a renewal cannot move the fence, the request is refused.
  store.step = 0;
  let r;
  for (let i = 0; i < 3 && (r = await post(h, "ids", { space: "web", count: 30_000 })).status === 200; i++);
  assert.equal(r.status, 503);
  assert.equal(r.json.error.code, "UNAVAILABLE");
  assert.match(
    r.json.error.message,
    /^cannot issue IDs of space 'web' now: next ID at \d+ ms is not before the fence at \d+ ms$/,
  );
  assert.ok(
    store.calls.filter(([c]) => c === "renew").length <= renewals + 3,
    "one renewal per refused request at most",
  );
  await h.close();
});

test("nodeListener serves the handler on Node's http server", async () => {
  const { h } = handler();
  const server = createServer(nodeListener(h));
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${server.address().port}/lease`;
  try {
    const a = await fetch(`${base}/acquire`, { method: "POST", body: JSON.stringify({ space: "web" }) });
    assert.equal(a.status, 200);
    const grant = await a.json();
    assert.equal(grant.node, 0);
    const big = await fetch(`${base}/acquire`, { method: "POST", body: "x".repeat(100_000) });
    assert.equal(big.status, 413);
    const pre = await fetch(`${base}/renew`, { method: "OPTIONS", headers: { origin: ORIGIN } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), ORIGIN);
    // A request read to its end keeps its connection.
    for (const r of [a, pre]) assert.equal(r.headers.get("connection"), "keep-alive");
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
});

test("Deno and Bun take the handler as it is (the package's node condition, their own Request)", () => {
  const js = fileURLToPath(new URL("../js/", import.meta.url));
  // Run from tests/js, whose node_modules has the package and both runtimes.
  const code = `
    import { leaseHandler } from "snowdrift/http";
    const store = {
      async acquire(a) { const now = Date.now(); return { node: 5, notBefore: now, until: now + a.ttl, now }; },
      async renew(t, ttl) { return Date.now() + ttl; },
      async release() { return 1; },
    };
    const h = leaseHandler({ store, spaces: { web: { ttlMs: 60000 } }, authorize: () => true, bodyTimeoutMs: 100 });
    const r = await h(new Request("http://127.0.0.1/lease/ids", { method: "POST", body: JSON.stringify({ space: "web", count: 3 }) }));
    // This runtime's streams: a body of unknown length over 4,096 bytes, and one that never ends.
    const stream = (chunks, end) => new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(new TextEncoder().encode(x)); if (end) c.close(); } });
    const post = (body) => h(new Request("http://127.0.0.1/lease/acquire", { method: "POST", body, duplex: "half" }));
    const big = await post(stream(Array(5).fill(" ".repeat(1000)), true));
    const endless = await post(stream(['{"space":'], false));
    console.log(JSON.stringify({ status: r.status, ...(await r.json()), big: big.status, endless: endless.status }));
    await h.close();`;
  for (const [runtime, args] of [
    ["deno", ["eval", code]],
    ["bun", ["-e", code]],
  ]) {
    const r = spawnSync(`${js}node_modules/.bin/${runtime}`, args, {
      cwd: js,
      encoding: "utf8",
      timeout: 120_000,
      killSignal: "SIGKILL",
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    });
    assert.equal(r.status, 0, `${runtime} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`);
    const reply = JSON.parse(r.stdout.trim().split("\n").pop());
    assert.equal(reply.status, 200, runtime);
    assert.equal(reply.ids.length, 3);
    assert.deepEqual([reply.big, reply.endless], [413, 408], runtime);
    assert.ok(
      reply.ids.every((id) => decode(BigInt(id)).node === 5),
      runtime,
    );
  }
});

test("authorize: only true authorizes; its errors never reach the caller, and one that never answers is bounded", async () => {
  const secret = "connect ECONNREFUSED 10.0.0.9:5432 postgres://keys:s3cret@10.0.0.9/keys";
  const refused = { code: "FORBIDDEN", message: "not authorized to acquire in space 'web'" };
  for (const answer of [
    () => {
      throw new Error(secret);
    },
    () => Promise.reject(new Error(secret)),
    () => "false",
    () => "true",
    () => 1,
    () => ({ allowed: false }),
    () => new Response("no", { status: 401 }),
    () => undefined,
  ]) {
    const { h, store } = handler({ authorize: answer });
    const r = await post(h, "acquire", { space: "web" });
    assert.equal(r.status, 403, String(answer));
    assert.deepEqual(r.json.error, refused);
    assert.equal(store.calls.length, 0, "no store call for a request not authorized");
  }
  const silent = handler({ authorize: () => new Promise(() => {}), storeTimeoutMs: 100 });
  const s = await post(silent.h, "acquire", { space: "web" });
  assert.equal(s.status, 503);
  assert.deepEqual(s.json.error, { code: "UNAVAILABLE", message: "authorize did not answer within 100 ms" });
  assert.equal(silent.store.calls.length, 0);
  const slowHolder = handler({ holder: () => new Promise(() => {}), storeTimeoutMs: 100 });
  const sh = await post(slowHolder.h, "acquire", { space: "web" });
  assert.equal(sh.status, 503);
  assert.deepEqual(sh.json.error, {
    code: "UNAVAILABLE",
    message: "the lease handler's holder function did not answer within 100 ms",
  });
  assert.equal(slowHolder.store.calls.length, 0);
});

test("a store answering something that is not its protocol's reply is the server's error (500), never a 400", async () => {
  const store = memoryStore();
  store.acquire = async () => undefined;
  store.renew = async () => "soon";
  const { h } = handler({ store });
  const a = await post(h, "acquire", { space: "web" });
  assert.equal(a.status, 500);
  assert.deepEqual(a.json.error, { code: "INTERNAL", message: "the lease handler failed" });
  const r = await post(h, "renew", { space: "web", node: 0, token: "t" });
  assert.equal(r.status, 500);
  assert.deepEqual(r.json.error, { code: "INTERNAL", message: "the lease handler failed" });
  // A store that throws at once (not a rejection) fails like any store: 503, its message kept.
  const sync = memoryStore();
  sync.release = () => {
    throw new TypeError("redis://admin:hunter2@10.0.0.7 is closed");
  };
  const { h: h2 } = handler({ store: sync });
  const rel = await post(h2, "release", { space: "web", node: 0, token: "t", issued: 1 });
  assert.equal(rel.status, 503);
  assert.deepEqual(rel.json.error, {
    code: "UNAVAILABLE",
    message: "the lease store failed a release; try again later",
  });
});

test("every method but POST and OPTIONS is 405 METHOD; bodies are bounded in size and time, read as UTF-8 JSON", async () => {
  const { h, store } = handler({ bodyTimeoutMs: 200 });
  for (const method of ["GET", "HEAD", "PUT", "DELETE", "PATCH", "PROPFIND"]) {
    const r = await h(new Request("http://127.0.0.1/lease/acquire", { method }));
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get("allow"), "POST, OPTIONS");
    if (method !== "HEAD") {
      assert.deepEqual((await r.json()).error, {
        code: "METHOD",
        message: `method ${method} is not allowed (POST, or OPTIONS for CORS)`,
      });
    }
  }
  const body = (bytes, headers = {}) =>
    h(new Request("http://127.0.0.1/lease/acquire", { method: "POST", body: bytes, headers })).then(async (r) => ({
      status: r.status,
      json: await r.json(),
    }));
  // Not UTF-8.
  const latin1 = await body(new Uint8Array([0x7b, 0x22, 0x73, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
  assert.equal(latin1.status, 400);
  assert.match(latin1.json.error.message, /^the request body is not JSON \(/);
  // Any Content-Type: the body is read as JSON (a fetch of a string body sends text/plain).
  const plain = await body(JSON.stringify({ space: "web" }), { "content-type": "text/plain" });
  assert.equal(plain.status, 200);
  // Keys that name an object's internals are unknown fields like any other.
  for (const key of ["__proto__", "constructor", "hasOwnProperty"]) {
    const r = await body(`{"space":"web","${key}":{"space":"x"}}`);
    assert.equal(r.status, 400, key);
    assert.equal(r.json.error.message, `unknown acquire request option "${key}" (allowed: space)`);
  }
  // Deeply nested JSON within the size bound.
  const deep = await body(`{"space":${"[".repeat(2000)}${"]".repeat(2000)}}`);
  assert.equal(deep.status, 400);
  assert.match(deep.json.error.message, /^space must be a string, got array/);
  // A body of unknown length over 4,096 bytes.
  const chunks = (n, size) =>
    new ReadableStream({
      start(c) {
        for (let i = 0; i < n; i++) c.enqueue(new Uint8Array(size).fill(0x20));
        c.close();
      },
    });
  const big = await h(
    new Request("http://127.0.0.1/lease/acquire", { method: "POST", body: chunks(5, 1000), duplex: "half" }),
  );
  assert.equal(big.status, 413);
  assert.deepEqual((await big.json()).error, {
    code: "TOO_LARGE",
    message: "the request body has more than 4096 bytes (allowed 0..=4096)",
  });
  // A body that never ends.
  const endless = await h(
    new Request("http://127.0.0.1/lease/acquire", {
      method: "POST",
      body: new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"space":')) }),
      duplex: "half",
    }),
  );
  assert.equal(endless.status, 408);
  assert.deepEqual((await endless.json()).error, {
    code: "TIMEOUT",
    message: "the request body did not arrive within 200 ms",
  });
  assert.equal(store.calls.length, 1, "only the good request reached the store");
  assert.throws(() => leaseHandler({ store, spaces: SPACES, authorize: () => true, bodyTimeoutMs: 0 }), {
    message: "bodyTimeoutMs 0 is outside the allowed range 1..=600000",
  });
});

/** Sends `head` (the request line and headers) and then `chunks` over a raw socket to
 * `port`; resolves to the response's status line and body, or "closed" when the server
 * closed the connection without one. */
async function raw(port, head, chunks = []) {
  const { connect } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(head);
      for (const c of chunks) socket.write(c);
    });
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => {
      data += d;
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (data === "") return resolve({ status: "closed" });
      const [head, rest] = [data.slice(0, data.indexOf("\r\n\r\n")), data.slice(data.indexOf("\r\n\r\n") + 4)];
      let body = rest;
      if (/\r\ntransfer-encoding: chunked/i.test(head)) {
        body = "";
        for (let at = 0; ; ) {
          const eol = rest.indexOf("\r\n", at);
          const size = Number.parseInt(rest.slice(at, eol), 16);
          if (!(size > 0)) break;
          body += rest.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
      }
      resolve({ status: Number(head.split(" ")[1]), body });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${JSON.stringify(head.split("\r\n")[0])} within 10 s`));
    }, 10_000).unref();
  });
}

test("nodeListener: methods Request refuses are 405, chunked and endless bodies get an answer, errors stay on the server", async () => {
  const { h, store } = handler({ bodyTimeoutMs: 200 });
  const server = createServer(nodeListener(h));
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address();
  try {
    // Node's parser answers methods it does not know itself.
    const track = await raw(port, "TRACK /lease/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert.equal(track.status, 400);
    for (const method of ["TRACE", "CONNECT"]) {
      const target = method === "CONNECT" ? "127.0.0.1:1" : "/lease/acquire";
      const r = await raw(port, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      // Node's server answers CONNECT itself when no 'connect' listener is set: the
      // connection is closed without a response.
      if (method === "CONNECT") {
        assert.equal(r.status, "closed");
        continue;
      }
      assert.equal(r.status, 405, method);
      assert.deepEqual(JSON.parse(r.body).error, {
        code: "METHOD",
        message: `method ${method} is not allowed (POST, or OPTIONS for CORS)`,
      });
    }
    const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const head = `POST /lease/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const big = await raw(port, head, [...Array.from({ length: 5 }, () => chunk(" ".repeat(1000))), "0\r\n\r\n"]);
    assert.equal(big.status, 413);
    assert.equal(JSON.parse(big.body).error.code, "TOO_LARGE");
    const slow = await raw(port, head, [chunk('{"space":')]);
    assert.equal(slow.status, 408);
    assert.equal(JSON.parse(slow.body).error.message, "the request body did not arrive within 200 ms");
    const ok = await raw(port, head, [chunk('{"space":"web"}'), "0\r\n\r\n"]);
    assert.equal(ok.status, 200);
    assert.equal(store.calls.length, 1);
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
  // A handler that throws (not one of leaseHandler's): 500, its message kept on the server.
  const broken = createServer(
    nodeListener(async () => {
      throw new Error("redis://admin:hunter2@10.0.0.7");
    }),
  );
  await new Promise((ok) => broken.listen(0, "127.0.0.1", ok));
  try {
    const r = await fetch(`http://127.0.0.1:${broken.address().port}/lease/acquire`, { method: "POST", body: "{}" });
    assert.equal(r.status, 500);
    assert.deepEqual((await r.json()).error, { code: "INTERNAL", message: "the lease handler failed" });
  } finally {
    broken.closeAllConnections();
    await new Promise((ok) => broken.close(ok));
  }
});

test("ids while renewals stop answering: each request is answered by the lease's lapse at the latest, from a new lease", async () => {
  // TTL 600 ms, skew 100 ms: the handler's lease lapses 500 ms after its newest successful
  // renewal was sent. Renewals then stall for 5 s, less than the store's timeout (10 s).
  const store = memoryStore();
  const { h } = handler({ store, spaces: { web: { ttlMs: 600, skewMs: 100 } }, maxIds: 100 });
  let stalledDone = 0;
  const renew = store.renew;
  const all = await takeIds(h, 1, 100);
  store.renew = async (t, ttl) => {
    await new Promise((r) => setTimeout(r, 5000));
    stalledDone++;
    return renew(t, ttl);
  };
  const replies = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, 100 * i));
      const r = await post(h, "ids", { space: "web", count: 100 });
      return { ...r, waited: stalledDone > 0 };
    }),
  );
  const waited = replies.filter((r) => r.waited).length;
  assert.equal(waited, 0, `${waited} of 12 requests waited for a stalled renewal`);
  for (const r of replies) assert.equal(r.status, 200, JSON.stringify(r.json));
  for (const r of replies) all.push(...r.json.ids);
  assert.equal(new Set(all).size, all.length, "no ID twice");
  assert.ok(new Set(all.map((id) => decode(BigInt(id)).node)).size >= 2, "the lapsed lease was followed by another");
  store.renew = renew;
  await h.close();
});

test("ids after the handler's lease lapsed unnoticed (no request for longer than ttl - skew): a new lease, no ID twice; a silent acquire is a 503 by ttl - skew", async () => {
  const store = memoryStore();
  const { h } = handler({ store, spaces: { web: { ttlMs: 600, skewMs: 100 } }, maxIds: 100 });
  const all = await takeIds(h, 1, 100);
  await new Promise((r) => setTimeout(r, 700));
  all.push(...(await takeIds(h, 1, 100)));
  assert.equal(new Set(all).size, all.length, "no ID twice");
  assert.deepEqual(new Set(all.map((id) => decode(BigInt(id)).node)), new Set([0, 1]), "the lapsed lease was replaced");
  await h.close();
  // The store's timeout is 10 s; an acquire whose grant would be lapsed on arrival is given up first.
  const silent = memoryStore();
  silent.acquire = () => new Promise(() => {});
  const quiet = handler({ store: silent, spaces: { web: { ttlMs: 600, skewMs: 100 } } });
  const r = await post(quiet.h, "ids", { space: "web", count: 1 });
  assert.equal(r.status, 503);
  assert.equal(r.json.error.message, "acquire of a node id of 'web' got no reply within 500 ms (ttl - skew)");
});

test("ids in a full space, asked every 10 ms for 2 s: the handler's acquires back off (a few, not one per request), each request answered at once with the refusal", async () => {
  const store = memoryStore({
    fail: (name) => name === "acquire" && new Error("LEASED all 1024 node ids of 'web' are leased"),
  });
  const { h } = handler({ store });
  const replies = [];
  const end = performance.now() + 2000;
  while (performance.now() < end) {
    replies.push(await post(h, "ids", { space: "web", count: 1 }));
    await new Promise((r) => setTimeout(r, 10));
  }
  const acquires = store.calls.filter(([c]) => c === "acquire").length;
  // Waits double from 50-100 ms: within 2 s at most 6 of them can end.
  assert.ok(acquires <= 7, `${acquires} acquires for ${replies.length} requests`);
  assert.ok(replies.length > 20, `${replies.length} requests`);
  for (const r of replies) {
    assert.equal(r.status, 409);
    assert.deepEqual(r.json.error, { code: "LEASED", message: "all 1024 node ids of 'web' are leased" });
  }
  await h.close();
});
