// snowdrift/browser-lease in headless browsers, leasing from snowdrift/http's handler
// served by Node (nodeListener) over a real redis-server, and by workerd (Miniflare) over
// the Durable Object, each on another origin than the page (so CORS and its preflight are
// in play): tabs of one origin share one lease, devices
// (browser contexts) get their own; a reload with the lease server unreachable; storage
// cleared with the clock set back; the lease ending while offline. Every ID is collected:
// none twice. Only 127.0.0.1; every wait is bounded.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { sleep, startServer as startRedis } from "../fleet/redis-server.mjs";
import {
  ENGINE,
  assertIncreasing,
  assertNoDuplicates,
  assertNumberRefused,
  max,
  openPage,
  reload,
  serverAndBrowser,
} from "./harness.mjs";

const require = createRequire(new URL("../js/", import.meta.url));
const { createClient } = require("redis");
const { leaseHandler, nodeListener } = require("snowdrift/http");
const { redisStore } = require("snowdrift/redis");
const { decode } = require("snowdrift");
const { Miniflare } = require("miniflare");

const ROOT = new URL("../../", import.meta.url).pathname;

const HOUR = 3_600_000;
// A layout with no node field: one node id in the space, so a second lease of it must
// wait for the first one's fence (or its release).
const SOLO = { timeBits: 41, nodeBits: 0, sequenceBits: 12, unitMs: 1, epochMs: 1704067200000 };

const started = serverAndBrowser();
const lease = {};
before(async () => {
  lease.redis = await startRedis();
  lease.client = createClient({ url: lease.redis.url });
  await lease.client.connect();
  lease.handler = leaseHandler({
    store: redisStore(lease.client),
    spaces: {
      web: { ttlMs: 8000, skewMs: 200 },
      short: { ttlMs: 3000, skewMs: 100 },
      solo: { layout: SOLO, ttlMs: 8000, skewMs: 200 },
      page: { ttlMs: 8000, skewMs: 200 },
      storm: { layout: SOLO, ttlMs: 1000, skewMs: 100 },
      numbers: { layout: "js53", ttlMs: 8000, skewMs: 200 },
    },
    origins: [new URL(started.server.url).origin],
    // Devices show a token; the page (which sends none) may lease in its own space only.
    authorize: (request, call) => request.headers.get("authorization") === "Bearer device" || call.space === "page",
  });
  // A new space fences every lease of its first ttl + skew ms after that window (the guard
  // against a store that lost its records), so a device would get little ID time before
  // its next renewal: the spaces are made, and that window left to pass, before the tests.
  const call = async (name, body) => {
    const res = await lease.handler(
      new Request(`http://127.0.0.1/lease/${name}`, {
        method: "POST",
        headers: { authorization: "Bearer device" },
        body: JSON.stringify(body),
      }),
    );
    assert.equal(res.status, 200, `${name}: ${await res.clone().text()}`);
    return res.json();
  };
  for (const space of ["web", "short", "solo", "page", "storm", "numbers"]) {
    const g = await call("acquire", { space });
    await call("release", { space, node: g.node, token: g.token, issued: g.notBefore });
  }
  // The same handler in workerd over the Durable Object, its space made the same way.
  lease.edge = await startEdge(new URL(started.server.url).origin);
  const edgeCall = async (name, body) => {
    const res = await lease.edge.mf.dispatchFetch(`${lease.edge.url}${name}`, {
      method: "POST",
      headers: { authorization: "Bearer device" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${name}: ${await res.clone().text()}`);
    return res.json();
  };
  const g = await edgeCall("acquire", { space: "edge" });
  await edgeCall("release", { space: "edge", node: g.node, token: g.token, issued: g.notBefore });
  await sleep(8200 + 100);
  const listener = nodeListener(lease.handler);
  lease.requests = 0;
  lease.acquires = 0;
  lease.server = createServer((req, res) => {
    lease.requests++;
    if (req.method === "POST" && req.url.endsWith("/acquire")) lease.acquires++;
    listener(req, res);
  });
  await new Promise((ok) => lease.server.listen(0, "127.0.0.1", ok));
  lease.url = `http://127.0.0.1:${lease.server.address().port}/lease`;
});
after(async () => {
  await lease.edge?.mf.dispose();
  lease.server?.closeAllConnections();
  await new Promise((ok) => (lease.server ? lease.server.close(ok) : ok()));
  await lease.handler?.close();
  await lease.client?.quit();
  await lease.redis?.stop();
});

/** The handler in workerd through Miniflare (on 127.0.0.1), over the Durable Object
 * `SnowdriftLeases` on SQLite storage in memory: { mf, url }, `url` its base. */
async function startEdge(origin) {
  const pkg = "../../wasm/pkg/";
  const worker = {
    modules: true,
    modulesRoot: ROOT,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-04-01",
  };
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    workers: [
      {
        ...worker,
        name: "lease",
        scriptPath: `${ROOT}tests/www/lease-worker.mjs`,
        script: `
          import { leaseHandler } from "${pkg}http-workerd.js";
          import { durableObjectStore } from "${pkg}cloudflare.js";
          let handler;
          export default {
            fetch(request, env) {
              handler ??= leaseHandler({
                store: durableObjectStore(env.LEASES),
                spaces: { edge: { ttlMs: 8000, skewMs: 200 } },
                origins: ["${origin}"],
                authorize: (request) => request.headers.get("authorization") === "Bearer device",
              });
              return handler(request);
            },
          };`,
        durableObjects: { LEASES: { className: "Leases", scriptName: "store" } },
      },
      {
        ...worker,
        name: "store",
        scriptPath: `${ROOT}tests/www/lease-store.mjs`,
        script: `
          import { SnowdriftLeases } from "${pkg}cloudflare.js";
          export class Leases extends SnowdriftLeases {}
          export default { fetch: () => new Response("store") };`,
        durableObjects: { LEASES: { className: "Leases", useSQLite: true } },
      },
    ],
  });
  const base = await mf.ready;
  return { mf, url: `${new URL("/lease/", base)}` };
}

/** A plain page with snowdrift/browser-lease loaded (as window.sdl). */
async function leasePage(context) {
  const page = await openPage(context, `${started.server.url}plain/`);
  await page.evaluate(async () => {
    window.sdl = await import("/pkg/browser-lease.js");
    // `n` IDs as decimal strings, waiting for the next window when a tab's runs out.
    // 20 IDs at a time for `ms` ms, yielding to other tasks between batches.
    window.burst = async (ms) => {
      const out = [];
      const end = performance.now() + ms;
      while (performance.now() < end) {
        try {
          for (const id of gen.nextBatch(20)) out.push(String(id));
        } catch (e) {
          if (!/await generator.ready/.test(e.message)) throw e;
          await gen.ready;
        }
        await new Promise((r) => setTimeout(r, 0));
      }
      return out;
    };
    window.take = async (n) => {
      const out = [];
      const end = performance.now() + 30_000;
      while (out.length < n) {
        try {
          for (const id of gen.nextBatch(Math.min(200, n - out.length))) out.push(String(id));
        } catch (e) {
          if (!/await generator.ready/.test(e.message) || performance.now() > end) throw e;
          await gen.ready;
        }
      }
      return out;
    };
  });
  return page;
}

/** Opens the page's generator (window.gen) on `space`; { node, lease } or { error }. */
const open = (page, space, extra = {}) =>
  page.evaluate(
    async ([o]) => {
      try {
        window.gen = await sdl.openLeased({ headers: { authorization: "Bearer device" }, ...o });
        return { node: gen.node, lease: gen.lease };
      } catch (e) {
        return { error: `${e.name}: ${e.message}` };
      }
    },
    [{ lease: lease.url, space, ...extra }],
  );

const take = async (page, n) => (await page.evaluate((k) => take(k), n)).map(BigInt);

function leaseTest(name, body) {
  test(name, { timeout: 120_000 }, async () => {
    const contexts = [];
    const newContext = async () => {
      const c = await started.browser.newContext();
      contexts.push(c);
      return c;
    };
    try {
      await body(newContext);
    } finally {
      for (const c of contexts) await c.close();
    }
  });
}

leaseTest("nextNumber(): Numbers on a js53 space, refused on a 63-bit one with no ID issued", async (newContext) => {
  const page = await leasePage(await newContext());
  const opened = await open(page, "numbers", { layout: "js53" });
  assert.equal(opened.error, undefined);
  const got = await page.evaluate(() => {
    const numbers = Array.from({ length: 300 }, () => gen.nextNumber());
    return { numbers, node: gen.decode(numbers[0]).node, after: String(gen.next()) };
  });
  assert.ok(got.numbers.every(Number.isSafeInteger));
  assertIncreasing([...got.numbers.map(BigInt), BigInt(got.after)], "js53 Numbers, then next()");
  assert.equal(got.node, opened.node);
  await page.evaluate(() => gen.close());
  assert.equal((await open(page, "web")).error, undefined);
  await assertNumberRefused(page, 63);
});

leaseTest("tabs of one origin share one lease, devices get their own; no ID twice", async (newContext) => {
  const devices = [await newContext(), await newContext()];
  const tabs = [];
  for (const [d, n] of [
    [0, 3],
    [1, 2],
  ]) {
    for (let i = 0; i < n; i++) tabs.push({ device: d, page: await leasePage(devices[d]) });
  }
  for (const t of tabs) {
    const r = await open(t.page, "web");
    assert.equal(r.error, undefined);
    t.node = r.node;
    t.ids = [];
  }
  assert.deepEqual(new Set(tabs.filter((t) => t.device === 0).map((t) => t.node)).size, 1, "one lease per origin");
  assert.notEqual(tabs[0].node, tabs[3].node, "devices lease different node ids");
  // Every tab at once, in the same milliseconds (yielding between batches, so tabs that
  // share a process interleave too), then a burst of larger batches.
  const got = await Promise.all(tabs.map((t) => t.page.evaluate(() => burst(400))));
  for (const [i, ids] of got.entries()) tabs[i].ids.push(...ids.map(BigInt));
  const more = await Promise.all(tabs.map((t) => take(t.page, 3000)));
  for (const [i, ids] of more.entries()) tabs[i].ids.push(...ids);
  const all = [];
  for (const t of tabs) {
    assertIncreasing(t.ids, `tab of device ${t.device}`);
    assert.ok(t.ids.every((id) => decode(id).node === t.node));
    all.push(...t.ids);
    assert.deepEqual(t.page.errors, []);
  }
  assert.ok(all.length > 5 * 3000 + 5 * 100, `${all.length} IDs`);
  assertNoDuplicates(all, "five tabs on two devices");
});

leaseTest(
  "a reload with the lease server unreachable and the clock an hour back goes on from the stored lease, above every ID before it",
  async (newContext) => {
    const context = await newContext();
    const page = await leasePage(context);
    const first = await open(page, "web");
    assert.equal(first.error, undefined);
    const before = await take(page, 3000);
    await context.route(`${lease.url}/**`, (route) => route.abort("internetdisconnected"));
    await context.clock.install({ time: Date.now() - HOUR });
    await reload(page);
    const page2 = await leasePage(context);
    await page.close();
    const second = await open(page2, "web");
    assert.equal(second.error, undefined, "the stored lease opens without the server");
    assert.equal(second.node, first.node);
    const afterReload = await take(page2, 3000);
    assertIncreasing([...before, ...afterReload], "before and after the reload");
    // Storage cleared while the server is unreachable: nothing to go on from.
    await page2.evaluate(async () => {
      gen.close();
      await new Promise((ok, fail) => {
        const r = indexedDB.deleteDatabase("snowdrift-lease");
        r.onsuccess = ok;
        r.onerror = () => fail(r.error);
      });
    });
    const none = await open(page2, "web");
    assert.match(
      none.error,
      /^Error: no lease of space 'web' is stored here and .* did not answer .*: reconnect to go on$/,
    );
    await context.unroute(`${lease.url}/**`);
    // The browser logs each call the route refused (Chromium, Firefox); nothing else.
    const refused =
      /^Failed to load resource: net::ERR_INTERNET_DISCONNECTED$|^Cross-Origin Request Blocked: .*CORS request did not succeed/;
    assert.deepEqual(
      page2.errors.filter((e) => !refused.test(e)),
      [],
    );
  },
);

leaseTest(
  "storage cleared with the clock an hour back: the next lease starts after the server's notBefore",
  async (newContext) => {
    const context = await newContext();
    const page = await leasePage(context);
    assert.equal((await open(page, "solo")).error, undefined);
    const before = await take(page, 5000);
    // Another device meanwhile: the space's one node id is leased.
    const other = await leasePage(await newContext());
    const refused = await open(other, "solo");
    assert.match(refused.error, /answered 409 LEASED: all 1 node ids of 'solo' are leased$/);
    // This device hands the lease back (from its reservation) and its storage is cleared.
    await page.evaluate(async () => {
      await gen.release();
      await new Promise((ok, fail) => {
        const r = indexedDB.deleteDatabase("snowdrift-lease");
        r.onsuccess = ok;
        r.onerror = () => fail(r.error);
      });
    });
    // The server hands the id on from the device's reservation (reserveMs, 2 s, ahead of its
    // clock, plus what a burst past its window asked for): until that passes, the id is
    // still leased.
    const fence = Number(await lease.client.zScore("{solo}:ends", "0"));
    assert.ok(fence - Date.now() < 10_000, `the released fence ${fence} is within reach`);
    await sleep(Math.max(0, fence - Date.now() + 100));
    await context.clock.install({ time: Date.now() - HOUR });
    await reload(page);
    const page2 = await leasePage(context);
    await page.close();
    const deviceNow = await page2.evaluate(() => Date.now());
    assert.ok(deviceNow < Date.now() - HOUR / 2, "the page's clock is an hour back");
    const again = await open(page2, "solo");
    assert.equal(again.error, undefined);
    assert.ok(again.lease.notBefore >= decode(max(before), SOLO).timeMs, "notBefore is past every ID issued");
    const afterClear = await take(page2, 5000);
    assert.ok(afterClear[0] > max(before), "the first new ID is above every earlier one");
    assertIncreasing(afterClear, "after the storage was cleared");
    assertNoDuplicates([...before, ...afterClear], "before and after the storage was cleared");
    await page2.evaluate(() => gen.release());
    assert.deepEqual(page2.errors, []);
  },
);

leaseTest(
  "a tab whose lease passed to another device while it was offline, with the app calling next() every 10 ms for 3 s: its acquires back off (a few, not one per call)",
  async (newContext) => {
    const a = await newContext();
    const tab = await leasePage(a);
    assert.equal((await open(tab, "storm", { reserveMs: 50 })).error, undefined);
    // Offline past its lease's end (1 s), while another device takes the space's one id.
    await a.setOffline(true);
    await sleep(1500);
    const other = await leasePage(await newContext());
    assert.equal((await open(other, "storm")).error, undefined);
    await a.setOffline(false);
    const before = lease.acquires;
    const r = await tab.evaluate(async () => {
      const errors = new Set();
      let calls = 0;
      for (const end = performance.now() + 3000; performance.now() < end; calls++) {
        try {
          gen.next();
        } catch (e) {
          errors.add(e.message.replace(/\d{4}-\S+/g, "<time>"));
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      return { calls, errors: [...errors] };
    });
    const acquires = lease.acquires - before;
    assert.ok(r.calls > 100, `${r.calls} calls`);
    assert.ok(
      r.errors.some((e) => /all 1 node ids of 'storm' are leased/.test(e)),
      r.errors.join("\n"),
    );
    // Waits double from 50-100 ms: within 3 s at most 6 of them end.
    assert.ok(acquires <= 8, `${acquires} acquires for ${r.calls} calls`);
  },
);

leaseTest(
  "a lease server that stops answering: every call is given up after timeoutMs, IDs go on until the lease's end, then a clear error; answering again, IDs go on with none twice",
  async (newContext) => {
    const page = await leasePage(await newContext());
    // The app's fetch, switched to one that never answers (it only honours the abort).
    const opened = await page.evaluate(
      async ([o]) => {
        window.silent = false;
        const fetch = (url, init) =>
          window.silent
            ? new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)))
            : globalThis.fetch(url, init);
        try {
          window.gen = await sdl.openLeased({ headers: { authorization: "Bearer device" }, fetch, ...o });
          return {};
        } catch (e) {
          return { error: e.message };
        }
      },
      [{ lease: lease.url, space: "short", timeoutMs: 300 }],
    );
    assert.equal(opened.error, undefined);
    const ids = await take(page, 500);
    const silent = await page.evaluate(async () => {
      window.silent = true;
      const out = [];
      const end = performance.now() + 15_000;
      while (performance.now() < end) {
        try {
          out.push(String(gen.next()));
        } catch (e) {
          if (/reconnect to go on/.test(e.message)) return { ids: out, error: e.message };
          // Every wait is bounded: ready settles although the server never answers.
          await gen.ready.catch(() => {});
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      return { ids: out };
    });
    ids.push(...silent.ids.map(BigInt));
    assert.match(silent.error ?? "", /could not be renewed .*did not answer.*: reconnect to go on$/);
    const resumed = await page.evaluate(async () => {
      window.silent = false;
      dispatchEvent(new Event("online"));
      const end = performance.now() + 15_000;
      for (;;) {
        try {
          return Array.from(gen.nextBatch(100), String);
        } catch (e) {
          if (performance.now() > end) throw e;
          await gen.ready.catch(() => {});
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    });
    ids.push(...resumed.map(BigInt));
    assertIncreasing(ids, "before, while the server was silent and after");
    assertNoDuplicates(ids, "the short lease");
  },
);

leaseTest(
  "a lease that ends while offline says to reconnect; back online, IDs go on with none twice",
  async (newContext) => {
    const context = await newContext();
    const page = await leasePage(context);
    assert.equal((await open(page, "short")).error, undefined);
    const ids = await take(page, 500);
    const health = () => page.evaluate(() => gen.health());
    const fresh = await health();
    assert.equal(fresh.state, "ok");
    assert.equal(fresh.space, "short");
    assert.ok(fresh.fenceMs > Date.now() && fresh.lapseAtMs < fresh.fenceMs, JSON.stringify(fresh));
    assert.ok(fresh.issuedThroughMs <= fresh.fenceMs && fresh.fenceDistanceMs >= 0, JSON.stringify(fresh));
    await context.setOffline(true);
    // Offline, the lease (3 s) reaches its fence: a call fails, saying what to do. Its
    // health goes from ok to renewing late (half of ttl - skew without a renewal) to lapsed.
    const ended = await page.evaluate(async () => {
      const out = [];
      const states = [];
      const end = performance.now() + 15_000;
      while (performance.now() < end) {
        const { state } = gen.health();
        if (states.at(-1) !== state) states.push(state);
        try {
          out.push(String(gen.next()));
        } catch (e) {
          if (/reconnect to go on/.test(e.message)) return { ids: out, error: e.message, states, health: gen.health() };
          try {
            await gen.ready;
          } catch (e) {
            return { ids: out, error: e.message, states, health: gen.health() };
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      return { ids: out, states };
    });
    ids.push(...ended.ids.map(BigInt));
    assert.match(
      ended.error ?? "",
      /^.*the lease of node \d+ of 'short' ended at .* and could not be renewed .*: reconnect to go on$/,
    );
    // (It may be renewing late already when the tab goes offline: renewals come every ttl / 3.)
    assert.deepEqual(ended.states, ["ok", "renewing late", "lapsed"].slice(-ended.states.length), "health offline");
    assert.ok(ended.states.length >= 2, `health offline: ${ended.states}`);
    assert.ok(ended.health.renewalFailures > 0, `renewals failed offline: ${JSON.stringify(ended.health)}`);
    await context.setOffline(false);
    // Back online: the `online` event renews (or a new lease is acquired); IDs go on.
    const resumed = await page.evaluate(async () => {
      const end = performance.now() + 15_000;
      for (;;) {
        try {
          return Array.from(gen.nextBatch(100), String);
        } catch (e) {
          if (performance.now() > end) throw e;
          await gen.ready.catch(() => {});
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    });
    ids.push(...resumed.map(BigInt));
    assert.equal((await health()).state, "ok", "online again, renewed");
    assertIncreasing(ids, "before, while offline and after");
    assertNoDuplicates(ids, "the short lease");
  },
);

leaseTest(
  "a tab keeps its window ahead of the clock: with IndexedDB slowed to 60 ms a transaction, a call just past the stored window, after a pause with no IDs, issues at once",
  async (newContext) => {
    const page = await leasePage(await newContext());
    await page.evaluate(() => {
      // A slow disk: every IndexedDB transaction confirms 60 ms late.
      const { get, set } = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "oncomplete");
      Object.defineProperty(IDBTransaction.prototype, "oncomplete", {
        get,
        set(f) {
          set.call(this, f && ((e) => setTimeout(() => f.call(this, e), 60)));
        },
      });
    });
    assert.equal((await open(page, "web", { reserveMs: 1000 })).error, undefined);
    const calls = await page.evaluate(async () => {
      // The end of the window the origin's tabs have stored (`reserved`), read apart.
      const stored = () =>
        new Promise((ok, fail) => {
          const r = indexedDB.open("snowdrift-lease", 1);
          r.onerror = () => fail(r.error);
          r.onsuccess = () => {
            const all = r.result.transaction("leases").objectStore("leases").getAll();
            all.onerror = () => fail(all.error);
            all.onsuccess = () => {
              r.result.close();
              ok(Math.max(...all.result.map((l) => l.reserved)));
            };
          };
        });
      const out = [];
      for (let i = 0; i < 4; i++) {
        // Two reservations with no calls: only the timer renews.
        await new Promise((r) => setTimeout(r, 2100));
        const hi = await stored();
        await new Promise((r) => setTimeout(r, Math.max(0, hi + 20 - Date.now())));
        try {
          out.push({ at: Date.now() - hi, ids: Array.from(gen.nextBatch(10), String) });
        } catch (e) {
          out.push({ at: Date.now() - hi, error: e.message });
        }
      }
      return out;
    });
    for (const [i, call] of calls.entries()) {
      assert.equal(call.error, undefined, `call ${i}, ${call.at} ms past the window read before it: ${call.error}`);
    }
    assertIncreasing(
      calls.flatMap((c) => c.ids.map(BigInt)),
      "the calls' IDs",
    );
  },
);

leaseTest(
  "the page leases from a URL set in its settings (off by default, its lease client loaded only then)",
  async (newContext) => {
    const context = await newContext();
    const page = await openPage(context, started.server.url);
    const scripts = [];
    page.on("request", (r) => scripts.push(new URL(r.url()).pathname));
    const listed = () =>
      page.$$eval('[data-testid="ids"] > li > .dec', (els) => els.map((e) => BigInt(e.textContent)).map(String));
    const generate = async (count) => {
      const before = await page.$eval('[data-testid="ids"]', (e) => e.firstElementChild?.textContent ?? "");
      // Emptied first: Firefox's number inputs keep the old text under a plain fill.
      await page.getByTestId("count").fill("");
      await page.getByTestId("count").fill(String(count));
      await page.getByTestId("generate").click();
      await page
        .waitForFunction(
          ([n, old]) => {
            const list = document.querySelector('[data-testid="ids"]');
            return list.dataset.count === String(n) && list.firstElementChild?.textContent !== old;
          },
          [count, before],
          { timeout: 30_000 },
        )
        .catch(async (e) => {
          const status = await page.$eval("#status", (s) => s.textContent);
          throw new Error(`${e.message}; status: ${status}; errors: ${page.errors}`);
        });
      return (await listed()).map(BigInt);
    };
    // Off by default: the setting is closed and empty, and nothing is asked of the server.
    assert.equal(await page.getByTestId("lease-setting").evaluate((d) => d.open), false);
    assert.equal(await page.getByTestId("lease-url").inputValue(), "");
    const requestsBefore = lease.requests;
    const own = await generate(100);
    assert.equal(lease.requests, requestsBefore, "no request to the lease server");
    assert.ok(!scripts.some((p) => p.endsWith("/lease.js")), "the lease client is not loaded");
    // Set: the node id is leased there, from the space's layout.
    await page.getByTestId("lease-setting").locator("summary").click();
    await page.getByTestId("lease-url").fill(lease.url);
    await page.getByTestId("lease-space").fill("page");
    const leased = await generate(1000);
    assert.ok(
      scripts.some((p) => p.endsWith("/lease.js")),
      "the lease client is loaded now",
    );
    assert.ok(lease.requests > requestsBefore);
    const status = await page.$eval("#status", (s) => s.textContent);
    assert.match(
      status,
      new RegExp(`Node (\\d+) is leased from ${lease.url.replaceAll(".", "\\.")} \\(space page, its layout\\) until `),
    );
    const node = Number(/Node (\d+) is leased/.exec(status)[1]);
    assert.ok(leased.every((id) => decode(id).node === node));
    assertIncreasing(leased, "leased IDs");
    assertNoDuplicates([...own, ...leased], "the page's IDs");
    // Decoding the newest uses the space's layout, not the one chosen under Make IDs.
    await page.getByTestId("layout").selectOption("twitter");
    await page.locator("#decode-last").click();
    assert.equal(await page.getByTestId("decode-layout").inputValue(), "default");
    const fields = await page.$$eval('[data-testid="decoded"] dt', (dts) =>
      Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])),
    );
    assert.equal(fields.Node, String(node));
    // Kept: after a reload the setting is still there and open.
    await reload(page);
    assert.equal(await page.getByTestId("lease-url").inputValue(), lease.url);
    assert.equal(await page.getByTestId("lease-setting").evaluate((d) => d.open), true);
    assert.deepEqual(page.errors, []);
  },
);

leaseTest(
  "devices lease from the handler in workerd over the Durable Object; offline, they go on; no ID twice",
  async (newContext) => {
    const tabs = [];
    for (const d of [0, 1]) {
      const context = await newContext();
      for (let i = 0; i < 2; i++) tabs.push({ device: d, context, page: await leasePage(context) });
    }
    const edgeUrl = lease.edge.url.replace(/\/$/, "");
    for (const t of tabs) {
      const r = await open(t.page, "edge", { lease: edgeUrl });
      assert.equal(r.error, undefined);
      t.node = r.node;
      t.ids = [];
    }
    assert.equal(tabs[0].node, tabs[1].node, "one lease per device");
    assert.notEqual(tabs[0].node, tabs[2].node, "devices lease different node ids");
    const got = await Promise.all(tabs.map((t) => t.page.evaluate(() => burst(300))));
    for (const [i, ids] of got.entries()) tabs[i].ids.push(...ids.map(BigInt));
    // One device offline: it goes on within its lease.
    await tabs[0].context.setOffline(true);
    const offline = await Promise.all(tabs.map((t) => take(t.page, 2000)));
    for (const [i, ids] of offline.entries()) tabs[i].ids.push(...ids);
    await tabs[0].context.setOffline(false);
    const all = [];
    for (const t of tabs) {
      assertIncreasing(t.ids, `tab of device ${t.device}`);
      assert.ok(t.ids.every((id) => decode(id).node === t.node));
      all.push(...t.ids);
    }
    assertNoDuplicates(all, "four tabs on two devices, from the Durable Object");
  },
);

leaseTest(
  "openLeased's errors name the value and the allowed range; the app's layout must be the space's",
  async (newContext) => {
    const page = await leasePage(await newContext());
    const errors = await page.evaluate(async (url) => {
      const tries = [
        {},
        { lease: url },
        { lease: url, space: "" },
        { lease: url, space: "web", reserveMs: 5 },
        { lease: url, space: "web", timeoutMs: 1e9 },
        { lease: url, space: "web", headers: "x" },
        { lease: url, space: "web", leese: 1 },
        { lease: url, space: "web", storageTimeoutMs: 0 },
        { lease: url, space: "nope", headers: { authorization: "Bearer device" } },
        { lease: url, space: "web", headers: { authorization: "Bearer wrong" } },
        { lease: url, space: "web", layout: "twitter", headers: { authorization: "Bearer device" } },
      ];
      const out = [];
      for (const o of tries) {
        try {
          const g = await sdl.openLeased(o);
          g.close();
          out.push("opened");
        } catch (e) {
          out.push(`${e.name}: ${e.message}`);
        }
      }
      return out;
    }, lease.url);
    assert.deepEqual(errors.slice(0, 8), [
      "TypeError: lease must be a string, got undefined undefined",
      "TypeError: space must be a string, got undefined undefined",
      'RangeError: space "" has 0 characters (allowed 1..=1024)',
      "RangeError: reserveMs 5 is outside the allowed range 10..=3600000",
      "RangeError: timeoutMs 1000000000 is outside the allowed range 100..=600000",
      'TypeError: headers must be an object of header names and values, got string "x"',
      'RangeError: unknown openLeased option "leese" (allowed: lease, space, name, layout, reserveMs, headers, fetch, timeoutMs, persist, storageTimeoutMs)',
      "RangeError: storageTimeoutMs 0 is outside the allowed range 1..=600000",
    ]);
    assert.equal(errors[8], `Error: ${lease.url}/acquire answered 404 UNKNOWN_SPACE: space "nope" is not served here`);
    assert.equal(
      errors[9],
      `Error: ${lease.url}/acquire answered 403 FORBIDDEN: not authorized to acquire in space 'web'`,
    );
    assert.match(
      errors[10],
      /^RangeError: space 'web' at .* has the layout "time 41 bits of 1 ms from 1704067200000, node 10 bits, sequence 12 bits, node above sequence"; this app expects "time 41 bits of 1 ms from 1288834974657, node 10 bits, sequence 12 bits, node above sequence"$/,
    );
  },
);

leaseTest(
  "a dedicated worker shares the tab's lease; renewals move its end while online; no ID twice",
  async (newContext) => {
    const page = await leasePage(await newContext());
    const first = await open(page, "web");
    assert.equal(first.error, undefined);
    // A module worker of this origin, leasing with the same name: the same lease.
    const worker = await page.evaluate(async (url) => {
      const code = `
      const { openLeased } = await import("${location.origin}/pkg/browser-lease.js");
      let gen;
      onmessage = async ({ data }) => {
        try {
          if (data.open) {
            gen = await openLeased({ lease: data.open, space: "web", headers: { authorization: "Bearer device" } });
            postMessage({ node: gen.node });
            return;
          }
          const out = [];
          const end = performance.now() + 20000;
          while (out.length < data.n) {
            try {
              for (const id of gen.nextBatch(Math.min(100, data.n - out.length))) out.push(String(id));
            } catch (e) {
              if (!/await generator.ready/.test(e.message) || performance.now() > end) throw e;
              await gen.ready;
            }
            await new Promise((r) => setTimeout(r, 0));
          }
          postMessage({ ids: out });
        } catch (e) {
          postMessage({ error: e.message });
        }
      };
      postMessage({ loaded: true });`;
      const w = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })), { type: "module" });
      window.leaseWorker = w;
      window.askWorker = (msg) =>
        new Promise((ok) => {
          w.onmessage = ({ data }) => ok(data);
          w.postMessage(msg);
        });
      await new Promise((ok, fail) => {
        w.onmessage = ({ data }) => data.loaded && ok();
        w.onerror = (e) => fail(new Error(`worker: ${e.message}`));
      });
      return window.askWorker({ open: url });
    }, lease.url);
    assert.equal(worker.error, undefined);
    assert.equal(worker.node, first.node, "the worker uses the tab's lease");
    const ids = [];
    const [fromTab, fromWorker] = await Promise.all([
      page.evaluate(() => burst(300)),
      page.evaluate(() => askWorker({ n: 3000 })),
    ]);
    assert.equal(fromWorker.error, undefined);
    ids.push(...fromTab.map(BigInt), ...fromWorker.ids.map(BigInt));
    assertIncreasing(fromWorker.ids.map(BigInt), "the worker's IDs");
    // Online, the lease is renewed once a third of its TTL (8 s) has passed: its end moves.
    await sleep(3500);
    ids.push(...(await take(page, 500)));
    const later = await page.evaluate(async () => {
      await gen.ready;
      return gen.lease.until;
    });
    assert.ok(later >= first.lease.until + 3000, `until ${first.lease.until} -> ${later}`);
    const more = await page.evaluate(() => askWorker({ n: 500 }));
    ids.push(...more.ids.map(BigInt));
    assertNoDuplicates(ids, "a tab and a worker on one lease");
    await page.evaluate(() => leaseWorker.terminate());
  },
);

leaseTest(
  "a device clock ahead of the server by more than the TTL is told to set it right, and takes no second lease",
  async (newContext) => {
    const context = await newContext();
    await context.clock.install({ time: Date.now() + HOUR });
    const page = await leasePage(context);
    const acquires = () => lease.acquires;
    const before = acquires();
    const r = await open(page, "web");
    assert.match(
      r.error,
      /^Error: this device's clock reads .*, past the end of its lease of node \d+ of 'web' \(.*: the server's clock plus 8000 ms\): set the clock right to go on$/,
    );
    // Trying again reuses the stored lease: still one acquire.
    const again = await open(page, "web");
    assert.match(again.error, /set the clock right to go on$/);
    assert.equal(acquires() - before, 1, "one lease, not one per try");
    assert.deepEqual(page.errors, []);
  },
);

// ---- Storage lost or stuck under a running tab; workers written the plain way ----

/** In the page: deletes the lease database; resolves to how it ended ("deleted", the error,
 * or "blocked, then nothing in 10 s" when an open connection holds it). */
const deleteLeaseDb = (page) =>
  page.evaluate(
    () =>
      new Promise((ok) => {
        const r = indexedDB.deleteDatabase("snowdrift-lease");
        let blocked = false;
        r.onsuccess = () => ok(blocked ? "deleted after being blocked" : "deleted");
        r.onerror = () => ok(String(r.error));
        r.onblocked = () => {
          blocked = true;
          setTimeout(() => ok("blocked, then nothing in 10 s"), 10_000);
        };
      }),
  );

const lossWays = [["deleteDatabase from another tab", (_page, other) => deleteLeaseDb(other)]];
if (ENGINE === "chromium") {
  // What "clear site data" does: IndexedDB goes and open connections are closed.
  lossWays.push([
    "site data cleared (Storage.clearDataForOrigin)",
    async (page, _other, context) => {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Storage.clearDataForOrigin", { origin: new URL(page.url()).origin, storageTypes: "all" });
      await cdp.detach();
      return "deleted";
    },
  ]);
}
for (const [way, clear] of lossWays) {
  leaseTest(
    `IndexedDB lost under a running tab and worker (${way}): their next windows take a new lease, the origin's other tabs share it, no ID twice`,
    async (newContext) => {
      const context = await newContext();
      const page = await leasePage(context);
      const first = await open(page, "web", { reserveMs: 100 });
      assert.equal(first.error, undefined);
      // A dedicated worker on the same lease (the plain worker, reserving 100 ms too).
      const inWorker = await page.evaluate(async (lease) => {
        const w = new Worker(`/plain/plain-lease-worker.js?reserveMs=100&lease=${encodeURIComponent(lease)}`, {
          type: "module",
        });
        window.askWorker = (msg) =>
          new Promise((ok) => {
            w.onmessage = ({ data }) => ok(data);
            w.onerror = (e) => ok({ error: `worker error: ${e.message}` });
            setTimeout(() => ok({ error: "no answer in 20 s" }), 20_000);
            w.postMessage(msg);
          });
        window.leaseWorker = w;
        return askWorker({ count: 100 });
      }, lease.url);
      assert.equal(inWorker.error, undefined);
      assert.equal(inWorker.node, first.node, "the worker shares the tab's lease");
      const before = [...(await take(page, 2000)), ...inWorker.ids.map(BigInt)];
      const other = await leasePage(context);
      assert.equal(await clear(page, other, context), "deleted", "nothing holds the database against its deletion");
      // 40 rounds, 5 ms apart, of 200 IDs each in the tab and in the worker (after `ready`
      // when a window ran out).
      const got = await page.evaluate(async () => {
        const ids = [];
        const errors = [];
        let workerNode;
        const end = performance.now() + 15_000;
        for (let i = 0; i < 40 && performance.now() < end; i++) {
          try {
            ids.push(...Array.from(gen.nextBatch(200), String));
          } catch (e) {
            errors.push(e.message);
            await Promise.race([gen.ready.catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
            i--;
            continue;
          }
          for (let tries = 0; tries < 20; tries++) {
            const w = await askWorker({ count: 200 });
            if (!w.error) {
              ids.push(...w.ids);
              workerNode = w.node;
              break;
            }
            errors.push(w.error);
            await askWorker({ ready: true });
          }
          await new Promise((r) => setTimeout(r, 5));
        }
        leaseWorker.terminate();
        const real = errors.filter((e) => !/await generator.ready/.test(e));
        return { ids, errors: [...new Set(real)], node: gen.node, workerNode };
      });
      assert.equal(got.ids.length, 40 * 2 * 200, `issuing stopped: ${got.errors.join("; ")}`);
      assert.notEqual(got.node, first.node, "a new lease (the old one is still the device's until its end)");
      assert.equal(got.workerNode, got.node, "the worker shares the new lease");
      // The re-made database holds the new lease: a tab opened now shares it.
      const shared = await open(other, "web", { reserveMs: 100 });
      assert.equal(shared.error, undefined);
      assert.equal(shared.node, got.node);
      const more = await take(other, 2000);
      assertNoDuplicates(
        [...before, ...got.ids.map(BigInt), ...more],
        "before and after the loss, two tabs and a worker",
      );
      assert.deepEqual(page.errors, []);
    },
  );
}

leaseTest(
  "IndexedDB that never answers: openLeased fails after storageTimeoutMs saying so, and a tab whose transactions never complete stops at its window, ready rejecting with why",
  async (newContext) => {
    const page = await leasePage(await newContext());
    const opening = await page.evaluate(async (url) => {
      const real = IDBFactory.prototype.open;
      IDBFactory.prototype.open = () => ({}); // a request whose events never come
      try {
        const answer = sdl
          .openLeased({ lease: url, space: "web", headers: { authorization: "Bearer device" }, storageTimeoutMs: 200 })
          .then(
            (g) => {
              g.close();
              return "opened";
            },
            (e) => `${e.name}: ${e.message}`,
          );
        return await Promise.race([answer, new Promise((r) => setTimeout(() => r("no answer in 10 s"), 10_000))]);
      } finally {
        IDBFactory.prototype.open = real;
      }
    }, lease.url);
    assert.equal(
      opening,
      "Error: IndexedDB did not answer within 200 ms (storageTimeoutMs) opening its database; no ID is issued past what storage holds",
    );
    assert.equal((await open(page, "web", { reserveMs: 100, storageTimeoutMs: 300 })).error, undefined);
    const out = await page.evaluate(async () => {
      // From now on no transaction completes.
      const { get } = Object.getOwnPropertyDescriptor(IDBTransaction.prototype, "oncomplete");
      Object.defineProperty(IDBTransaction.prototype, "oncomplete", { get, set() {} });
      const ids = [];
      let stopped;
      for (let i = 0; i < 400 && !stopped; i++) {
        try {
          ids.push(...Array.from(gen.nextBatch(100), String));
        } catch (e) {
          if (!/await generator.ready/.test(e.message)) stopped = e.message;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      const ready = await Promise.race([
        gen.ready.then(
          () => "resolved",
          (e) => `rejected: ${e.message}`,
        ),
        new Promise((r) => setTimeout(() => r("pending after 10 s"), 10_000)),
      ]);
      return { ids, stopped, ready };
    });
    assert.match(
      out.stopped ?? "",
      /^IDs reached the end of this tab's reservation: IndexedDB did not answer within 300 ms \(storageTimeoutMs\) (reading|writing) the lease/,
    );
    assert.match(out.ready, /^rejected: IndexedDB did not answer within 300 ms \(storageTimeoutMs\)/);
    assertIncreasing(out.ids.map(BigInt), "the IDs before it stopped");
  },
);

for (const kind of ["worker", "shared worker"]) {
  leaseTest(
    `a ${kind} written the plain way (a static import, then its handler) answers a message posted right after it starts`,
    async (newContext) => {
      const page = await leasePage(await newContext());
      const out = await page.evaluate(
        async ([shared, lease]) => {
          const url = `/plain/plain-lease-worker.js?lease=${encodeURIComponent(lease)}`;
          const w = shared
            ? new SharedWorker(url, { type: "module", name: `p${Math.random()}` })
            : new Worker(url, { type: "module" });
          const port = shared ? w.port : w;
          const answered = new Promise((ok) => {
            port.onmessage = ({ data }) => ok(data);
            w.onerror = (e) => ok({ error: `worker error: ${e.message}` });
          });
          port.postMessage({ count: 100 });
          const got = await Promise.race([
            answered,
            new Promise((ok) => setTimeout(() => ok("no answer in 20 s"), 20_000)),
          ]);
          if (shared) port.close();
          else w.terminate();
          return got;
        },
        [kind === "shared worker", lease.url],
      );
      assert.equal(out.error, undefined, out.error);
      assert.notEqual(out, "no answer in 20 s");
      assert.equal(out.ids.length, 100);
      assertIncreasing(out.ids.map(BigInt), `the ${kind}'s IDs`);
    },
  );
}

/** In the page: the lease record `name` of the origin's lease database (undefined if none). */
const readLeaseRecord = (page, name) =>
  page.evaluate(
    (key) =>
      new Promise((ok, fail) => {
        const r = indexedDB.open("snowdrift-lease", 1);
        r.onerror = () => fail(r.error);
        r.onsuccess = () => {
          const get = r.result.transaction("leases").objectStore("leases").get(key);
          get.onsuccess = () => {
            r.result.close();
            ok(get.result);
          };
          get.onerror = () => fail(get.error);
        };
      }),
    name,
  );

/** In the page: stores `record` as the lease record `name`, as a copied profile holds it. */
const writeLeaseRecord = (page, name, record) =>
  page.evaluate(
    ([key, value]) =>
      new Promise((ok, fail) => {
        const r = indexedDB.open("snowdrift-lease", 1);
        r.onupgradeneeded = () => r.result.createObjectStore("leases");
        r.onerror = () => fail(r.error);
        r.onsuccess = () => {
          const tx = r.result.transaction("leases", "readwrite");
          tx.objectStore("leases").put(value, key);
          tx.oncomplete = () => {
            r.result.close();
            ok();
          };
          tx.onerror = () => fail(tx.error);
        };
      }),
    [name, record],
  );

for (const [over, space, urlOf] of [
  ["Redis", "web", () => lease.url],
  ["the Durable Object", "edge", () => lease.edge.url],
]) {
  leaseTest(
    `a browser profile copied from another (the same IndexedDB) and used beside it, over ${over}: the copy opens on the copied lease, the original's next renewal is LOST and it leases anew; no ID twice`,
    async (newContext) => {
      const original = await leasePage(await newContext());
      const a = await open(original, space, { lease: urlOf() });
      assert.equal(a.error, undefined, a.error);
      const ids = await take(original, 2000);
      const copy = await leasePage(await newContext());
      await writeLeaseRecord(copy, space, await readLeaseRecord(original, space));
      // Opening renews: the copy renews first, with a next token of its own.
      const b = await open(copy, space, { lease: urlOf() });
      assert.equal(b.error, undefined, b.error);
      assert.equal(b.node, a.node, "the copy goes on with the copied lease");
      // The original's next renewal (the browser back online renews at once).
      const renewed = await original.evaluate(async () => {
        dispatchEvent(new Event("online"));
        await new Promise((r) => setTimeout(r, 0));
        await gen.ready;
        return gen.node;
      });
      assert.notEqual(renewed, b.node, "the original found out: it leased another node id");
      // Both issue at once from here.
      const [fromOriginal, fromCopy] = await Promise.all([take(original, 5000), take(copy, 5000)]);
      assertIncreasing([...ids, ...fromOriginal], "the original's IDs");
      assert.ok(fromOriginal.every((id) => decode(id).node === renewed));
      assert.ok(fromCopy.every((id) => decode(id).node === b.node));
      assertNoDuplicates([...ids, ...fromOriginal, ...fromCopy], "the original and its copy");
      assert.deepEqual(copy.errors, []);
      // Chromium logs the LOST reply (409) of the original's renewal; nothing else is logged.
      assert.deepEqual(
        original.errors.filter((e) => !/status of 409 \(Conflict\)$/.test(e)),
        [],
      );
    },
  );
}
