// `snowdrift serve` against real redis-server and PostgreSQL processes: its flags (each bad
// value named with its range, exit code 2), Bearer tokens (401, 403), `POST /ids` and its
// count limit (400 naming the range), `GET /health` and `GET /metrics`, the store going
// away (503 with Retry-After) and coming back, and shutdown on SIGTERM: requests in
// flight finish, new connections are refused, and the store's record shows the lease
// released.
import assert from "node:assert/strict";
import { symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createClient } from "redis";
import { leaseNode } from "snowdrift/redis";
import { startPostgres } from "../fleet/pg-server.mjs";
import { freePort, startRedis } from "../fleet/redis-server.mjs";
import { HERE, postIds, run, start, tempDir, tokenFile, until } from "./service.mjs";

const TOKEN = "t0ken-of-the-tests-0123456789";
const SECOND = "another-token-for-rotation-42";
const ID = /^\d{1,20}$/;

let redis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

/** The leases of `space` as `snowdrift lease --json` lists them. */
async function leases(space, store = ["--redis", redis.url]) {
  const r = await run(["lease", space, ...store, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).leases;
}

test("bad flags: exit code 2 and a message naming the value and its range", async () => {
  const shortToken = tokenFile("short");
  const store = ["--redis", "redis://127.0.0.1:1"];
  const auth = ["--token-file", tokenFile(TOKEN)];
  const cases = [
    [[...store, ...auth, "--port", "70000"], /--port 70000 is outside the allowed range 0\.\.=65535/],
    [[...store, ...auth, "--max-count", "0"], /--max-count 0 is outside the allowed range 1\.\.=100000/],
    [[...store, ...auth, "--ttl-ms", "1.5"], /--ttl-ms "1\.5" is not an integer \(allowed 1000\.\.=86400000\)/],
    [[...store, ...auth, "--shutdown-ms=-1"], /--shutdown-ms "-1" is not an integer \(allowed 0\.\.=600000\)/],
    [[...auth], /serve needs a lease store: --redis URL or --postgres URL/],
    [[...store, ...auth, "--postgres", "postgres://a@127.0.0.1/b"], /serve needs a lease store/],
    [
      ["--redis", "http://127.0.0.1:6379", ...auth],
      /--redis "http:\/\/127\.0\.0\.1:6379\/?" is not a redis: or rediss:\/\/ URL/,
    ],
    [[...store], /serve needs --token-file F .* or --no-auth/],
    [
      [...store, "--no-auth", "--host", "0.0.0.0"],
      /--no-auth serves only a loopback address .* not --host "0\.0\.0\.0"/,
    ],
    [[...store, ...auth, "--no-auth"], /serve takes --token-file or --no-auth, not both/],
    [[...store, "--token-file", shortToken], /line 1 of the token file .* 5 characters.*allowed 16\.\.=1024/],
    [[...store, "--token-file", join(tempDir(), "none")], /--token-file ".*none" cannot be read \(ENOENT\)/],
    [[...store, ...auth, "--prot", "1"], /unknown option "--prot"/],
    [[...store, ...auth, "--layout", "bogus"], /unknown layout "bogus" \(allowed: "default"/],
    [[...store, ...auth, "--layout", "{nope"], /--layout "\{nope" is not a JSON object/],
    [[...store, ...auth, "--space", "a{b}"], /--space "a\{b\}" must not contain '\{' or '\}'/],
    [[...store, ...auth, "--schema", "s"], /--schema goes with --postgres/],
    [[...store, ...auth, "--port"], /--port needs a value/],
    [[...store, ...auth, "--region", "1"], /--region and --region-bits go together/],
    [[...store, ...auth, "--region", "4", "--region-bits", "2"], /region\.id 4 is outside the allowed range 0\.\.=3/],
    [
      [...store, ...auth, "--region", "0", "--region-bits", "10"],
      /region\.bits 10 is outside the allowed range 1\.\.=9/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await run(["serve", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.doesNotMatch(r.stderr, /listening/);
  }
  const help = await run(["serve", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /POST \/ids \{"count": N\}/);
});

test("POST /ids: decimal strings, the count limit, tokens, and errors as JSON; health and metrics", async (t) => {
  const service = await start(t, [
    "--redis",
    redis.url,
    "--space",
    "api",
    "--port",
    "0",
    "--max-count",
    "50",
    "--ttl-ms",
    "3000",
    "--token-file",
    tokenFile("#comment-lines-are-not-tokens", TOKEN, SECOND),
  ]);
  const { url } = service;
  let issued = 0;
  const seen = new Set();
  for (const token of [TOKEN, SECOND]) {
    const r = await postIds(url, { count: 50 }, token);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "application/json");
    const { ids } = await r.json();
    assert.equal(ids.length, 50);
    for (const id of ids) {
      assert.match(id, ID);
      assert.ok(!seen.has(id), `ID ${id} twice`);
      seen.add(id);
    }
    const big = ids.map(BigInt);
    assert.ok(
      big.every((id, i) => i === 0 || id > big[i - 1]),
      "IDs of one answer increase",
    );
    issued += ids.length;
  }
  const one = await (await postIds(url, { count: 1 }, TOKEN)).json();
  assert.equal(one.ids.length, 1);
  issued++;

  const error = async (r, status, code, message) => {
    assert.equal(r.status, status);
    assert.equal(r.headers.get("content-type"), "application/json");
    const body = await r.json();
    assert.equal(body.error.code, code);
    assert.match(body.error.message, message);
    return r;
  };
  const noHeader = await error(await postIds(url, { count: 1 }), 401, "UNAUTHORIZED", /Authorization: Bearer/);
  assert.equal(noHeader.headers.get("www-authenticate"), 'Bearer realm="snowdrift"');
  await error(
    await postIds(url, { count: 1 }, undefined, { authorization: `Basic ${TOKEN}` }),
    401,
    "UNAUTHORIZED",
    /Bearer/,
  );
  await error(await postIds(url, { count: 1 }, `${TOKEN}x`), 403, "FORBIDDEN", /not authorized/);
  await error(await postIds(url, { count: 1 }, "#comment-lines-are-not-tokens"), 403, "FORBIDDEN", /not authorized/);
  await error(
    await postIds(url, { count: 51 }, TOKEN),
    400,
    "BAD_REQUEST",
    /count 51 is outside the allowed range 1\.\.=50/,
  );
  await error(
    await postIds(url, { count: 0 }, TOKEN),
    400,
    "BAD_REQUEST",
    /count 0 is outside the allowed range 1\.\.=50/,
  );
  await error(await postIds(url, { count: "3" }, TOKEN), 400, "BAD_REQUEST", /count must be a number, got string "3"/);
  await error(await postIds(url, {}, TOKEN), 400, "BAD_REQUEST", /count must be a number, got undefined/);
  await error(await postIds(url, { count: 1, n: 2 }, TOKEN), 400, "BAD_REQUEST", /unknown ids request option "n"/);
  await error(await postIds(url, "{count: 1", TOKEN), 400, "BAD_REQUEST", /the request body is not JSON/);
  await error(await postIds(url, "[1]", TOKEN), 400, "BAD_REQUEST", /must be a JSON object, got array/);
  await error(
    await postIds(url, { count: 1, pad: "x".repeat(5000) }, TOKEN),
    413,
    "TOO_LARGE",
    /more than 4096 bytes \(allowed 0\.\.=4096\)/,
  );
  await error(await postIds(url, { space: "other", count: 1 }, TOKEN), 404, "UNKNOWN_SPACE", /"other" is not served/);
  await error(await fetch(`${url}/nope`), 404, "NOT_FOUND", /"\/nope" is not one of "\/ids"/);
  const get = await error(await fetch(`${url}/ids`), 405, "METHOD", /GET is not allowed on \/ids \(POST\)/);
  assert.equal(get.headers.get("allow"), "POST");

  // Not HTTP at all: a JSON 400 too, and the connection closed.
  const raw = await new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1", () => socket.write("HELLO\r\n\r\n"));
    let text = "";
    socket.on("data", (d) => (text += d));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
  assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(raw, /\r\n\r\n\{"error":\{"code":"BAD_REQUEST","message":"the request is not HTTP\/1\.1/);

  const health = await fetch(`${url}/health`);
  assert.equal(health.status, 200);
  const h = await health.json();
  assert.equal(h.status, "ok");
  assert.equal(h.state, "ok");
  assert.equal(h.space, "api");
  const [listed] = await leases("api");
  assert.equal(h.node, listed.node);
  assert.equal(listed.state, "live");

  const metrics = await fetch(`${url}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(metrics.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
  const text = await metrics.text();
  const value = (sample) => {
    const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
    assert.ok(line !== undefined, `no ${sample} in\n${text}`);
    return Number(line.slice(sample.length + 1));
  };
  assert.equal(value("snowdrift_serve_ids_issued_total"), issued);
  assert.equal(value('snowdrift_serve_requests_total{path="/ids",status="200"}'), 3);
  assert.equal(value('snowdrift_serve_requests_total{path="/ids",status="401"}'), 2);
  assert.equal(value('snowdrift_serve_requests_total{path="/ids",status="403"}'), 2);
  assert.equal(value('snowdrift_serve_requests_total{path="/ids",status="400"}'), 7);
  assert.equal(value('snowdrift_serve_errors_total{code="BAD_REQUEST"}'), 7 + 1);
  assert.equal(value('snowdrift_serve_requests_total{path="other",status="404"}'), 1);
  assert.equal(value('snowdrift_serve_requests_total{path="other",status="400"}'), 1);
  assert.equal(value("snowdrift_serve_ids_request_seconds_count"), 3 + 2 + 2 + 7 + 1 + 1 + 1);
  assert.equal(value("snowdrift_serve_lease_live"), 1);
  assert.equal(value("snowdrift_serve_lease_node"), listed.node);
  // The leases' own metrics (snowdrift/metrics) follow the service's.
  const labels = `{space="api",node="${listed.node}"`;
  assert.equal(value(`snowdrift_lease_health${labels},state="ok"}`), 1);
  assert.ok(value(`snowdrift_lease_fence_seconds${labels}}`) >= h.fenceMs / 1000, "the fence, renewed or not");
  assert.equal(value('snowdrift_lease_acquires_total{space="api"}'), 1);
  // The space's listing, taken for the scrape: 1024 node ids, one of them leased.
  assert.equal(value('snowdrift_space_capacity{space="api"}'), 1024);
  assert.equal(value('snowdrift_space_free_ids{space="api"}'), 1023);

  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
  assert.match(service.log(), new RegExp(`released node ${listed.node} of 'api'`));
  const [released] = await leases("api");
  assert.equal(released.state, "released");
});

test("SIGTERM: requests in flight finish, new connections are refused, the lease is released", async (t) => {
  const port = await freePort();
  const service = await start(t, [
    "--redis",
    redis.url,
    "--space",
    "drain",
    "--port",
    String(port),
    "--ttl-ms",
    "3000",
    "--token-file",
    tokenFile(TOKEN),
  ]);
  await until("a lease", async () => (await fetch(`${service.url}/health`)).status === 200);
  // A request whose body is still arriving when the signal comes.
  const body = JSON.stringify({ count: 7 });
  let finish;
  const answer = new Promise((resolve, reject) => {
    const req = http.request(
      `${service.url}/ids`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.write(body.slice(0, 5));
    finish = () => req.end(body.slice(5));
  });
  await until("the request reaches the service", async () =>
    /^snowdrift_serve_ids_in_flight 1$/m.test(await (await fetch(`${service.url}/metrics`)).text()),
  );
  service.child.kill("SIGTERM");
  await until("the service waits for the request", () => /finishing 1 request\(s\) in flight/.test(service.log()));
  // The listener is closed: a new connection is refused.
  await assert.rejects(fetch(`${service.url}/health`), (e) => e.cause?.code === "ECONNREFUSED");
  const [held] = await leases("drain");
  assert.equal(held.state, "live", "the lease is held until the request in flight is answered");
  finish();
  const done = await answer;
  assert.equal(done.status, 200, done.text);
  assert.equal(done.headers.connection, "close");
  assert.equal(JSON.parse(done.text).ids.length, 7);
  assert.deepEqual(await service.exited, { code: 0, signal: null });
  const [released] = await leases("drain");
  assert.equal(released.state, "released");
  assert.equal(released.node, held.node);
});

test("the store away: health and ids answer 503 with Retry-After, and recover when it is back", async (t) => {
  const store = await startRedis();
  try {
    const service = await start(t, [
      "--redis",
      store.url,
      "--space",
      "away",
      "--port",
      "0",
      "--ttl-ms",
      "2000",
      "--store-timeout-ms",
      "500",
      "--token-file",
      tokenFile(TOKEN),
    ]);
    await until("a lease", async () => (await fetch(`${service.url}/health`)).status === 200);
    await store.cli("SHUTDOWN", "NOSAVE").catch(() => {}); // redis-cli sees the connection close
    // The lease issues until it lapses (no renewal for ttl - skew), then nothing can.
    await until("health says 503", async () => (await fetch(`${service.url}/health`)).status === 503);
    const health = await fetch(`${service.url}/health`);
    assert.equal(health.headers.get("retry-after"), "1");
    const h = await health.json();
    assert.equal(h.status, "unavailable");
    assert.equal(h.error.code, "UNAVAILABLE");
    const ids = await postIds(service.url, { count: 2 }, TOKEN);
    assert.equal(ids.status, 503);
    assert.equal(ids.headers.get("retry-after"), "1");
    const e = await ids.json();
    assert.equal(e.error.code, "UNAVAILABLE");
    assert.doesNotMatch(e.error.message, /127\.0\.0\.1/, "the store's address stays on the server");

    await store.restart(); // empty: its records are gone
    await until("IDs again", async () => (await postIds(service.url, { count: 2 }, TOKEN)).status === 200, 15_000);
    assert.equal((await fetch(`${service.url}/health`)).status, 200);
    // Stopped while the store is away: the release fails, and the log says so.
    await store.cli("SHUTDOWN", "NOSAVE").catch(() => {});
    assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
    assert.match(service.log(), /node \d+ of 'away' could not be released \(.*\): it is free again after its TTL/);
  } finally {
    await store.stop();
  }
});

test("an idle service keeps its lease: renewed by the service, not only by requests", async (t) => {
  const service = await start(t, [
    "--redis",
    redis.url,
    "--space",
    "idle",
    "--ttl-ms",
    "3000",
    "--port",
    "0",
    "--token-file",
    tokenFile(TOKEN),
  ]);
  await until("a lease", async () => (await leases("idle")).length === 1);
  const [first] = await leases("idle");
  // Twice the time to the lapse (ttl - skew: 2 s) without a request: a lease renewed only
  // by requests would lapse, and the next request would lease another node id.
  await new Promise((r) => setTimeout(r, 4000));
  const r = await postIds(service.url, { count: 1 }, TOKEN);
  assert.equal(r.status, 200);
  const now = await leases("idle");
  assert.equal(now.length, 1, "one node id leased, the same");
  assert.equal(now[0].node, first.node);
  assert.equal(now[0].state, "live");
  assert.ok(now[0].untilMs > first.untilMs, "renewed");
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
});

test("every node id of the space leased elsewhere: 503 with Retry-After naming it, IDs once one is free", async (t) => {
  const layout = { timeBits: 41, nodeBits: 1, sequenceBits: 12, epochMs: 1704067200000 };
  const client = await createClient({ url: redis.url }).connect();
  const settings = { key: "full", layout, ttlMs: 3000, skewMs: 1000 };
  const others = [await leaseNode(client, settings), await leaseNode(client, settings)];
  t.after(async () => {
    await Promise.all(others.map((l) => l.release()));
    await client.close();
  });
  const service = await start(t, [
    "--redis",
    redis.url,
    "--space",
    "full",
    "--layout",
    JSON.stringify(layout),
    "--ttl-ms",
    "3000",
    "--port",
    "0",
    "--token-file",
    tokenFile(TOKEN),
  ]);
  const r = await postIds(service.url, { count: 1 }, TOKEN);
  assert.equal(r.status, 503);
  assert.equal(r.headers.get("retry-after"), "1");
  const { error } = await r.json();
  assert.equal(error.code, "LEASED");
  assert.match(error.message, /all 2 node ids of 'full' are leased/);
  const health = await fetch(`${service.url}/health`);
  assert.equal(health.status, 503);
  assert.equal((await health.json()).error.code, "LEASED");

  await others[0].release();
  await until(
    "IDs once a node id is free",
    async () => (await postIds(service.url, { count: 1 }, TOKEN)).status === 200,
  );
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
});

test("a region: IDs carry it above the leased id, and a service of another region is refused", async (t) => {
  const region = (id) => ["--region", String(id), "--region-bits", "2"];
  const args = ["--redis", redis.url, "--space", "regional", "--ttl-ms", "3000", "--port", "0", "--no-auth"];
  const service = await start(t, [...args, ...region(2)]);
  const r = await postIds(service.url, { count: 3 });
  assert.equal(r.status, 200);
  for (const id of (await r.json()).ids) {
    // The default layout: 10 node bits above 12 sequence bits; region 2 of 2 bits on top.
    const node = Number((BigInt(id) >> 12n) & 1023n);
    assert.equal(node >> 8, 2, `ID ${id} is of node ${node}`);
  }
  const h = await (await fetch(`${service.url}/health`)).json();
  assert.equal(h.node >> 8, 2);
  // The same space asked for with another region: refused, naming both (503 REGION or the like).
  const other = await start(t, [...args, ...region(1)]);
  const refused = await postIds(other.url, { count: 1 });
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.match((await refused.json()).error.message, /region 2 of 2 bits.*region 1 of 2 bits/s);
  assert.deepEqual(await other.stop("SIGTERM"), { code: 0, signal: null });
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
});

test("over PostgreSQL: the schema set up at start, IDs, the lease released at shutdown", async (t) => {
  const pg = await startPostgres();
  try {
    const service = await start(t, [
      "--postgres",
      pg.url,
      "--schema",
      "ids_service",
      "--port",
      "0",
      "--ttl-ms",
      "3000",
      "--token-file",
      tokenFile(TOKEN),
    ]);
    const r = await postIds(service.url, { count: 1000 }, TOKEN);
    assert.equal(r.status, 200);
    const { ids } = await r.json();
    assert.equal(new Set(ids).size, 1000);
    const store = ["--postgres", pg.url, "--schema", "ids_service"];
    assert.equal((await leases("ids", store))[0].state, "live");
    assert.deepEqual(await service.stop("SIGINT"), { code: 0, signal: null });
    assert.equal((await leases("ids", store))[0].state, "released");
  } finally {
    await pg.stop();
  }
});

test("with ioredis as the project's Redis client, without a token", async (t) => {
  const project = tempDir();
  mkdirSync(join(project, "node_modules"));
  symlinkSync(join(HERE, "node_modules/ioredis"), join(project, "node_modules/ioredis"));
  writeFileSync(join(project, "package.json"), "{}");
  const service = await start(
    t,
    ["--redis", redis.url, "--space", "io", "--port", "0", "--no-auth", "--ttl-ms", "3000"],
    { cwd: project },
  );
  const r = await postIds(service.url, { count: 3 }, undefined);
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal((await r.json()).ids.length, 3);
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
  assert.equal((await leases("io"))[0].state, "released");

  // With neither client, the command says which to install.
  const bare = tempDir();
  const r2 = await run(["serve", "--redis", redis.url, "--no-auth"], { cwd: bare });
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /--redis needs a Redis client in the current project: npm install redis \(or ioredis\)/);
});
