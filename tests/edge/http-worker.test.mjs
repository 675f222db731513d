// `snowdrift/http`'s handler in workerd through Miniflare, over the Durable Object store
// (`SnowdriftLeases` on SQLite storage, through `durableObjectStore` of snowdrift/cloudflare): two Workers serve the
// handler, each in its own isolate with its own lease for `ids`, and one object keeps
// the space. Acquire, renew, release, LEASED when the space is full, authorize and CORS,
// and IDs from both isolates at once: none twice.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { decode } from "snowdrift";
import { entry as cloudflare, preflight, worker } from "./harness.mjs";

const pkg = JSON.parse(readFileSync(new URL("./node_modules/snowdrift/package.json", import.meta.url)));
// The files the "workerd" conditions pick.
const http = `./node_modules/snowdrift/${pkg.exports["./http"].workerd.replace(/^\.\//, "")}`;
const ORIGIN = "https://app.example";
// Two node ids: the third lease is refused.
const PAIR = { timeBits: 41, nodeBits: 1, sequenceBits: 12, unitMs: 1, epochMs: 1704067200000 };

// Four node ids, of which region 1 (1 bit) takes the upper two.
const REGIONAL = { timeBits: 41, nodeBits: 2, sequenceBits: 12, unitMs: 1, epochMs: 1704067200000 };

const store = `
import { SnowdriftLeases } from "${cloudflare}";
export class Leases extends SnowdriftLeases {}
export default { fetch: () => new Response("store") };`;

const server = `
import { leaseHandler } from "${http}";
import { durableObjectStore } from "${cloudflare}";
let handler;
export default {
  fetch(request, env) {
    handler ??= leaseHandler({
      store: durableObjectStore(env.LEASES),
      spaces: {
        web: { ttlMs: 5000, skewMs: 100 },
        pair: { layout: ${JSON.stringify(PAIR)}, ttlMs: 5000, skewMs: 100 },
        west: { layout: ${JSON.stringify(REGIONAL)}, region: { bits: 1, id: 1 }, ttlMs: 5000, skewMs: 100 },
      },
      origins: ["${ORIGIN}"],
      authorize: (request) => request.headers.get("authorization") === "Bearer t",
      maxIds: 500,
    });
    return handler(request);
  },
};`;

let mf;
let dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "snowdrift-http-edge-"));
  mf = new Miniflare({
    host: "127.0.0.1",
    cf: false,
    durableObjectsPersist: dir,
    workers: [
      worker("store", store, { className: "Leases", useSQLite: true }),
      worker("lease0", server, { className: "Leases", scriptName: "store" }),
      worker("lease1", server, { className: "Leases", scriptName: "store" }),
    ],
  });
});
after(async () => {
  await mf?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** POSTs `body` to the handler of Worker `w`; { status, headers, json }. */
async function post(w, call, body, headers = { authorization: "Bearer t" }) {
  const res = await mf.dispatchFetch(`http://lease${w}.test/lease/${call}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

test("acquire, renew and release through the handler in a Worker, over the Durable Object", async () => {
  const a = await post(0, "acquire", { space: "web" });
  assert.equal(a.status, 200, JSON.stringify(a.json));
  assert.equal(a.json.node, 0);
  assert.equal(a.json.ttlMs, 5000);
  assert.ok(a.json.notBefore >= a.json.now, "a new space's lease starts after its guard window");
  const b = await post(1, "acquire", { space: "web" });
  assert.equal(b.json.node, 1, "another isolate, the same object: the next id");
  const r = await post(1, "renew", { space: "web", node: a.json.node, token: a.json.token });
  assert.equal(r.status, 200);
  assert.ok(r.json.until >= a.json.until);
  const rel = await post(0, "release", {
    space: "web",
    node: b.json.node,
    token: b.json.token,
    issued: b.json.notBefore,
  });
  assert.deepEqual(rel.json, { released: true });
  const lost = await post(0, "renew", { space: "web", node: b.json.node, token: b.json.token });
  assert.equal(lost.status, 409);
  assert.equal(lost.json.error.code, "LOST");
  assert.match(lost.json.error.message, /^node id 1 of 'web' is no longer held by this lease/);
});

test("a full space answers 409 LEASED; bad input 400, authorize 403 and CORS as in Node", async () => {
  for (const node of [0, 1]) assert.equal((await post(node, "acquire", { space: "pair" })).json.node, node);
  const full = await post(0, "acquire", { space: "pair" });
  assert.equal(full.status, 409);
  assert.deepEqual(full.json.error, { code: "LEASED", message: "all 2 node ids of 'pair' are leased" });
  const bad = await post(0, "renew", { space: "pair", node: 2, token: "x" });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.message, "node 2 is outside the allowed range 0..=1");
  const no = await post(1, "acquire", { space: "pair" }, { authorization: "Bearer wrong" });
  assert.equal(no.status, 403);
  const pre = await mf.dispatchFetch("http://lease1.test/lease/acquire", preflight(ORIGIN, "content-type"));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), ORIGIN);
  await pre.arrayBuffer();
  const other = await post(
    1,
    "acquire",
    { space: "pair" },
    { authorization: "Bearer t", origin: "https://evil.example" },
  );
  assert.equal(other.status, 403);
  assert.equal(other.json.error.code, "ORIGIN");
});

test("ids from two isolates at once, issued by the space's object: none twice", async () => {
  const all = [];
  for (let round = 0; round < 10; round++) {
    const got = await Promise.all([0, 1, 0, 1].map((w) => post(w, "ids", { space: "web", count: 500 })));
    for (const r of got) {
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.ids.length, 500);
      all.push(...r.json.ids);
    }
  }
  assert.equal(new Set(all).size, all.length, "no ID twice");
  const over = await post(0, "ids", { space: "web", count: 501 });
  assert.equal(over.status, 400);
  assert.equal(over.json.error.message, "count 501 is outside the allowed range 1..=500");
});

test("a space with a region: devices get node ids under it, and the object's ids carry it", async () => {
  const a = await post(0, "acquire", { space: "west" });
  assert.equal(a.status, 200, JSON.stringify(a.json));
  assert.equal(a.json.node, 2);
  const r = await post(1, "renew", { space: "west", node: a.json.node, token: a.json.token });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const bad = await post(0, "renew", { space: "west", node: 0, token: a.json.token });
  assert.equal(bad.json.error.message, "node 0 is outside the allowed range 2..=3");
  let got;
  for (let i = 0; i < 20 && (got = await post(i % 2, "ids", { space: "west", count: 100 })).status === 503; i++) {
    await new Promise((ok) => setTimeout(ok, 50));
  }
  assert.equal(got.status, 200, JSON.stringify(got.json));
  assert.deepEqual([...new Set(got.json.ids.map((id) => decode(BigInt(id), REGIONAL).node))], [3]);
  const rel = await post(0, "release", { space: "west", node: 2, token: a.json.token, issued: a.json.notBefore });
  assert.deepEqual(rel.json, { released: true });
});

test("ids from recycled isolates hold no node id: devices lease every id of the space (the Worker of docs/http.md)", async () => {
  // The Worker of docs/http.md, on a space of four node ids with a 60 s TTL.
  const QUAD = { timeBits: 41, nodeBits: 2, sequenceBits: 12, unitMs: 1, epochMs: 1704067200000 };
  const readme = `
import { leaseHandler } from "${http}";
import { durableObjectStore } from "${cloudflare}";
let handler;
export default {
  fetch(request, env) {
    handler ??= leaseHandler({
      store: durableObjectStore(env.LEASES),
      spaces: { quad: { layout: ${JSON.stringify(QUAD)}, ttlMs: 60_000, skewMs: 100 } },
      origins: ["${ORIGIN}"],
      authorize: (request) => request.headers.get("authorization") === "Bearer t",
    });
    return handler(request);
  },
};`;
  const quadDir = mkdtempSync(join(tmpdir(), "snowdrift-http-quad-"));
  const start = () =>
    new Miniflare({
      host: "127.0.0.1",
      cf: false,
      durableObjectsPersist: quadDir,
      workers: [
        worker("store", store, { className: "Leases", useSQLite: true }),
        worker("quad0", readme, { className: "Leases", scriptName: "store" }),
        worker("quad1", readme, { className: "Leases", scriptName: "store" }),
      ],
    });
  const call = async (m, w, name, body) => {
    const res = await m.dispatchFetch(`http://quad${w}.test/lease/${name}`, {
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  const all = [];
  let m;
  try {
    // Two rounds of two isolates each, every one serving ids, then recycled (workerd
    // restarted on the same storage: none of them ever closes its handler).
    for (let round = 0; round < 2; round++) {
      m = start();
      for (const w of [0, 1]) {
        let r;
        for (let i = 0; i < 20 && (r = await call(m, w, "ids", { space: "quad", count: 100 })).status === 503; i++) {
          await new Promise((ok) => setTimeout(ok, 50));
        }
        assert.equal(r.status, 200, JSON.stringify(r.json));
        all.push(...r.json.ids);
      }
      await m.dispose();
      m = undefined;
    }
    m = start();
    const devices = [];
    for (let d = 0; d < 4; d++) devices.push(await call(m, d % 2, "acquire", { space: "quad" }));
    assert.deepEqual(
      devices.map((d) => d.status),
      [200, 200, 200, 200],
      `devices refused: ${JSON.stringify(devices.filter((d) => d.status !== 200).map((d) => d.json))}`,
    );
    assert.deepEqual(devices.map((d) => d.json.node).sort(), [0, 1, 2, 3]);
    // Every device starts after every ID issued from its id (the object's IDs of a new
    // space run ahead of the clock, and so does its id's fence).
    const { decode } = await import("snowdrift");
    const newest = new Map();
    for (const id of all) {
      const { node, timeMs } = decode(BigInt(id), QUAD);
      newest.set(node, Math.max(newest.get(node) ?? 0, timeMs));
    }
    for (const d of devices) {
      assert.ok(d.json.notBefore >= (newest.get(d.json.node) ?? 0), JSON.stringify({ d: d.json, newest: [...newest] }));
    }
    // With every id leased by a device, ids is refused, not served from a device's id.
    const full = await call(m, 0, "ids", { space: "quad", count: 1 });
    assert.equal(full.status, 409);
    assert.deepEqual(full.json.error, { code: "LEASED", message: "all 4 node ids of 'quad' are leased" });
    assert.equal(new Set(all).size, all.length, "no ID twice");
  } finally {
    await m?.dispose();
    rmSync(quadDir, { recursive: true, force: true });
  }
});
