// snowdrift/browser without the page: a plain page (plain/index.html) imports the package
// as built and drives it through page.evaluate, in headless Chromium. Each test gets a
// fresh browser context, so a fresh origin storage.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  assertIncreasing, assertNoDuplicates, clockOneHourBack, launch, max, min, openPage, reload, startServer,
} from "./harness.mjs";

let server;
let browser;
let url;
before(async () => {
  server = await startServer();
  url = `${server.url}plain/`;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A fresh context (its own storage) with `n` plain pages. */
async function pages(n = 1, setup) {
  const context = await browser.newContext();
  if (setup) await setup(context);
  const list = [];
  for (let i = 0; i < n; i++) list.push(await openPage(context, url));
  return { context, pages: list };
}

/** Opens a generator in the page (kept as window.gen); returns { node, storage }. */
const open = (page, options = {}) =>
  page.evaluate(async (o) => {
    window.gen = await sd.openSnowdrift(o);
    return { node: gen.node, storage: gen.storage };
  }, options);

/** `n` IDs from the page's generator, one next() at a time, as bigints. */
const nextIds = async (page, n) =>
  (await page.evaluate((k) => Array.from({ length: k }, () => gen.nextString()), n)).map(BigInt);

const batch = async (page, n) => (await page.evaluate((k) => Array.from(gen.nextBatch(k), String), n)).map(BigInt);

const noErrors = (...list) => {
  for (const p of list) assert.deepEqual(p.errors, [], "errors in the page");
};

test("1,000 IDs are unique and increasing; after a reload, new IDs are above them on the same node", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  const first = await open(page);
  assert.equal(first.storage, "indexeddb");
  const a = await nextIds(page, 1000);
  assertIncreasing(a, "first 1,000");
  const nodes = await page.evaluate((ids) => ids.map((id) => gen.decode(id).node), a.map(String));
  assert.ok(nodes.every((n) => n === first.node), "every ID carries the generator's node id");
  await reload(page);
  const second = await open(page);
  assert.equal(second.node, first.node, "the node id is kept in storage and reused");
  const b = await nextIds(page, 1000);
  assertIncreasing(b, "after the reload");
  assert.ok(min(b) > max(a), `after the reload ${min(b)} is not above ${max(a)}`);
  noErrors(page);
  await context.close();
});

test("clock set back an hour (Date.now and performance), then a reload: new IDs are still above", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  await open(page);
  const a = await batch(page, 5000);
  const lastTime = await page.evaluate((id) => gen.decode(id).timestampMs, String(max(a)));
  await clockOneHourBack(context);
  await reload(page);
  const skew = await page.evaluate(() => Date.now() - new Date().getTime());
  assert.ok(skew < -3_500_000, "the page's Date.now reads an hour early");
  await open(page);
  const b = [...(await nextIds(page, 1000)), ...(await batch(page, 5000))];
  assertIncreasing(b, "with the clock an hour back");
  assert.ok(min(b) > max(a), `with the clock back ${min(b)} is not above ${max(a)}`);
  const firstTime = await page.evaluate((id) => gen.decode(id).timestampMs, String(min(b)));
  assert.ok(firstTime > lastTime, "IDs go on after the reservation, not from the clock's reading");
  noErrors(page);
  await context.close();
});

test("two tabs generating at once get distinct node ids and never the same ID", { timeout: 120_000 }, async () => {
  const { context, pages: tabs } = await pages(2);
  const opened = await Promise.all(tabs.map((t) => open(t)));
  assert.notEqual(opened[0].node, opened[1].node, "each tab holds its own node id");
  const all = [];
  for (let round = 0; round < 5; round++) {
    const got = await Promise.all(tabs.map((t) => batch(t, 2000)));
    got.forEach((ids) => assertIncreasing(ids, `round ${round}`));
    all.push(...got.flat());
  }
  assertNoDuplicates(all, "two tabs");
  noErrors(...tabs);
  await context.close();
});

test("a tab and a worker of one origin never issue the same ID", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  const tabNode = (await open(page)).node;
  const result = await page.evaluate(async () => {
    const { worker, ask } = await startWorker();
    const opened = await ask({ open: {} });
    const ids = [];
    for (let i = 0; i < 5; i++) {
      // The worker generates on its own thread while the tab generates here.
      const pending = ask({ batch: 2000 });
      ids.push(...Array.from(gen.nextBatch(2000), String));
      const w = await pending;
      if (w.error) return { error: w.error };
      ids.push(...w.ids);
    }
    worker.terminate();
    return { opened, ids };
  });
  assert.equal(result.error, undefined, result.error);
  assert.equal(result.opened.storage, "indexeddb", "a worker has no localStorage");
  assert.notEqual(result.opened.node, tabNode, "the worker holds its own node id");
  assertNoDuplicates(result.ids.map(BigInt), "tab and worker");
  noErrors(page);
  await context.close();
});

test("a closed tab's node id is reused by the next one, and maxNodes bounds how many a device holds", { timeout: 120_000 }, async () => {
  const { context, pages: [a, b, c] } = await pages(3);
  const na = (await open(a, { maxNodes: 2 })).node;
  const nb = (await open(b, { maxNodes: 2 })).node;
  const full = await c.evaluate(() => sd.openSnowdrift({ maxNodes: 2 }).then(() => "opened", (e) => e.message));
  assert.match(full, /all 2 node ids of this origin \(name "snowdrift"\) are in use/);
  await a.evaluate(() => gen.close());
  assert.equal((await open(c, { maxNodes: 2 })).node, na, "the freed node id is taken again");
  assert.notEqual(na, nb);
  const closed = await a.evaluate(() => { try { gen.next(); return "issued"; } catch (e) { return e.message; } });
  assert.equal(closed, "this snowdrift/browser generator is closed");
  noErrors(a, b, c);
  await context.close();
});

test("an app-supplied node id: a number is used as given and held by one tab; a function is asked once per new node id", { timeout: 120_000 }, async () => {
  const { context, pages: [a, b] } = await pages(2);
  assert.equal((await open(a, { node: 77 })).node, 77);
  const ids = await nextIds(a, 100);
  const nodes = await a.evaluate((list) => list.map((id) => gen.decode(id).node), ids.map(String));
  assert.ok(nodes.every((n) => n === 77));
  const taken = await b.evaluate(() => sd.openSnowdrift({ node: 77 }).then(() => "opened", (e) => e.message));
  assert.match(taken, /node 77 is in use by another tab or worker of this origin/);

  // A function (standing in for a server call) gives the node id the first time only.
  const calls = await b.evaluate(async () => {
    let calls = 0;
    const options = { name: "orders", node: async () => { calls++; return 300; } };
    const g1 = await sd.openSnowdrift(options);
    const first = g1.node;
    await g1.close();
    const g2 = await sd.openSnowdrift(options);
    const again = g2.node;
    await g2.close();
    return { calls, first, again };
  });
  assert.deepEqual(calls, { calls: 1, first: 300, again: 300 });
  const bad = await b.evaluate(() => sd.openSnowdrift({ name: "x", node: () => 5000 }).then(() => "opened", (e) => `${e.name}: ${e.message}`));
  assert.equal(bad, "RangeError: the node function's result 5000 is outside the allowed range 0..=1023");
  noErrors(a, b);
  await context.close();
});

test("where IndexedDB is missing, localStorage keeps the node id and reservation across reloads", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages(1, (c) => c.addInitScript(() => {
    Object.defineProperty(globalThis, "indexedDB", { value: undefined });
  }));
  const first = await open(page);
  assert.equal(first.storage, "localstorage");
  const a = await batch(page, 1000);
  await reload(page);
  const second = await open(page);
  assert.equal(second.node, first.node);
  const b = await batch(page, 1000);
  assert.ok(min(b) > max(a), "above the IDs before the reload");
  noErrors(page);
  await context.close();
});

test("the stored reservation covers every ID issued, also after a burst that outruns it", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  await open(page, { reserveMs: 2 });
  const check = await page.evaluate(async () => {
    const stored = () => new Promise((ok, fail) => {
      const r = indexedDB.open("snowdrift");
      r.onerror = () => fail(r.error);
      r.onsuccess = () => {
        const get = r.result.transaction("nodes").objectStore("nodes").get(["snowdrift", gen.node]);
        get.onsuccess = () => { ok(get.result.until); r.result.close(); };
      };
    });
    const local = () => JSON.parse(localStorage.getItem(`snowdrift:snowdrift:${gen.node}`) ?? "null")?.until ?? 0;
    // 1,048,576 IDs in one synchronous call: 256 ms of 4,096-ID ticks, far past a 2 ms reservation.
    const ids = gen.nextBatch(1 << 20);
    const newest = gen.decode(ids[ids.length - 1]).timestampMs;
    const right = Math.max(await stored(), local());
    await gen.ready;
    return { newest, right, later: await stored(), reserved: gen.reservedUntil };
  });
  assert.ok(check.right >= check.newest, `when the burst returned, storage covered ${check.right}, the newest ID has ${check.newest}`);
  assert.ok(check.later >= check.newest && check.reserved >= check.newest, "IndexedDB caught up once its write finished");

  // A worker has no synchronous storage: the same burst throws, and goes on after `ready`.
  const worker = await page.evaluate(async () => {
    const { worker: w, ask } = await startWorker();
    const out = { opened: await ask({ open: { name: "w", reserveMs: 2 } }) };
    out.burst = (await ask({ batch: 1 << 20 })).error;
    out.ready = (await ask({ ready: true })).ready;
    const after = await ask({ batch: 10 });
    out.after = after.error ?? after.ids.length;
    w.terminate();
    return out;
  });
  assert.match(worker.burst ?? "", /^Error: IDs reached the end of the reservation .* before it could be renewed; await gen.ready, then call again$/);
  assert.equal(worker.ready, true);
  assert.equal(worker.after, 10, "after the renewal the worker's generator goes on");
  noErrors(page);
  await context.close();
});

test("bad options are a TypeError or RangeError naming the value and the allowed range", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  const errors = await page.evaluate(async () => {
    const fail = (o) => sd.openSnowdrift(o).then(() => "opened", (e) => `${e.name}: ${e.message}`);
    return [
      await fail({ node: 5000 }),
      await fail({ node: "3" }),
      await fail({ nod: 3 }),
      await fail({ reserveMs: 0 }),
      await fail({ storage: "cookies" }),
      await fail({ layout: { timeBits: 41, nodeBits: 12, sequenceBits: 12, epochMs: 0 } }),
    ];
  });
  assert.deepEqual(errors, [
    "RangeError: node 5000 is outside the allowed range 0..=1023",
    'TypeError: node must be a number, got string "3"',
    'RangeError: unknown openSnowdrift option "nod" (allowed: name, layout, node, maxNodes, reserveMs, maxAheadMs, storage)',
    "RangeError: reserveMs 0 is outside the allowed range 1..=86400000",
    'RangeError: storage "cookies" is not one of "auto", "indexeddb", "localstorage"',
    "RangeError: invalid layout: the fields take 65 bits (max 64)",
  ]);
  noErrors(page);
  await context.close();
});

test("collisionOdds is the birthday bound over the layout's node ids, and the table in the types says the same", { timeout: 120_000 }, async () => {
  const { context, pages: [page] } = await pages();
  const odds = await page.evaluate(() => {
    const o = (n, layout) => sd.collisionOdds(n, layout);
    return {
      one: o(1), two: o(2), twoBrowser: o(2, sd.BROWSER_LAYOUT), all: o(1025), ten: o(10),
      table: [2, 10, 100, 1000].map((n) => [o(n), o(n, "instagram"), o(n, sd.BROWSER_LAYOUT), o(n, "sonyflake"), o(n, "twitter")]),
    };
  });
  assert.equal(odds.one, 0);
  const near = (got, want) => assert.ok(Math.abs(got - want) <= want * 1e-12, `${got} vs ${want}`);
  near(odds.two, 1 / 1024);
  near(odds.twoBrowser, 1 / 65536);
  assert.equal(odds.all, 1, "more devices than node ids");
  let none = 1;
  for (let i = 1; i < 10; i++) none *= 1 - i / 1024;
  near(odds.ten, 1 - none);

  // The table in offline.d.ts: rows "| devices | default | instagram | browser |".
  const dts = readFileSync(new URL("../../wasm/js/offline.d.ts", import.meta.url), "utf8");
  const rows = [...dts.matchAll(/^ \* \| ([\d,]+) \| ([\d.]+)% \| ([\d.]+)% \| ([\d.]+)% \|$/gm)];
  assert.equal(rows.length, 4, "four rows in the table");
  const shown = (p, text) => {
    const digits = text.includes(".") ? text.split(".")[1].length : 0;
    const want = Math.min(100, Number(text));
    return Math.abs(p * 100 - want) <= 0.5 * 10 ** -digits + 1e-9;
  };
  rows.forEach(([, n, d, i, b], k) => {
    const [def, insta, browserOdds, sony, twitter] = odds.table[k];
    assert.equal(Number(n.replace(",", "")), [2, 10, 100, 1000][k]);
    assert.ok(shown(def, d) && shown(twitter, d), `${n} devices, default: ${def * 100}% vs ${d}%`);
    assert.ok(shown(insta, i), `${n} devices, instagram: ${insta * 100}% vs ${i}%`);
    assert.ok(shown(browserOdds, b) && shown(sony, b), `${n} devices, 16-bit node: ${browserOdds * 100}% vs ${b}%`);
  });
  noErrors(page);
  await context.close();
});
