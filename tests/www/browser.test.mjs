// snowdrift/browser without the page: a plain page (plain/index.html) imports the package
// as built and drives it through page.evaluate, in headless Chromium. Each test gets a
// fresh browser context, so a fresh origin storage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ENGINE,
  assertIncreasing,
  assertNoDuplicates,
  assertNumberRefused,
  clockOneHourBack,
  max,
  min,
  openPage,
  reload,
  serverAndBrowser,
} from "./harness.mjs";

const started = serverAndBrowser();
/** The plain page's address on the running server. */
const plainUrl = () => `${started.server.url}plain/`;

/** A fresh context (its own storage) with `n` plain pages. */
async function pages(n = 1, setup) {
  const context = await started.browser.newContext();
  if (setup) await setup(context);
  const list = [];
  for (let i = 0; i < n; i++) list.push(await openPage(context, plainUrl()));
  return { context, pages: list };
}

/** A test in a fresh context's plain page: the page logs no errors, and the context is closed
 * whatever happens. */
function pageTest(name, body) {
  test(name, { timeout: 120_000 }, async () => {
    const {
      context,
      pages: [page],
    } = await pages();
    try {
      await body(page, context);
      noErrors(page);
    } finally {
      await context.close();
    }
  });
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

pageTest(
  "1,000 IDs are unique and increasing; after a reload, new IDs are above them on the same node",
  async (page) => {
    const first = await open(page);
    assert.equal(first.storage, "indexeddb");
    const a = await nextIds(page, 1000);
    assertIncreasing(a, "first 1,000");
    const nodes = await page.evaluate((ids) => ids.map((id) => gen.decode(id).node), a.map(String));
    assert.ok(
      nodes.every((n) => n === first.node),
      "every ID carries the generator's node id",
    );
    await reload(page);
    const second = await open(page);
    assert.equal(second.node, first.node, "the node id is kept in storage and reused");
    const b = await nextIds(page, 1000);
    assertIncreasing(b, "after the reload");
    assert.ok(min(b) > max(a), `after the reload ${min(b)} is not above ${max(a)}`);
  },
);

pageTest(
  "nextNumber() on the js53 layout: Numbers equal to the IDs, increasing across a reload; refused on a wider layout with no ID issued",
  async (page) => {
    await open(page, { name: "numbers", layout: "js53" });
    const a = await page.evaluate(() => Array.from({ length: 600 }, () => gen.nextNumber()));
    assert.ok(a.every((n) => Number.isSafeInteger(n)));
    assertIncreasing(a.map(BigInt), "js53 Numbers");
    const next = await page.evaluate(() => String(gen.next()));
    assert.ok(BigInt(next) > BigInt(a[a.length - 1]), "next() goes on above the last Number");
    assert.equal(await page.evaluate((n) => gen.decode(n).node, a[0]), await page.evaluate(() => gen.node));
    await reload(page);
    await open(page, { name: "numbers", layout: "js53" });
    const b = await page.evaluate(() => gen.nextNumber());
    assert.ok(b > a[a.length - 1], `after the reload ${b} is not above ${a[a.length - 1]}`);
    // The default layout takes 63 bits: refused, and the next ID is the one it would have been.
    await open(page, { name: "wide" });
    await assertNumberRefused(page, 63);
  },
);

pageTest(
  "clock set back an hour (Date.now and performance), then a reload: new IDs are still above",
  async (page, context) => {
    await open(page);
    const a = await batch(page, 5000);
    const lastTime = await page.evaluate((id) => gen.decode(id).timeMs, String(max(a)));
    await clockOneHourBack(context);
    await reload(page);
    // biome-ignore lint/complexity/useDateNow: the two read different clocks here (Date.now is set back)
    const skew = await page.evaluate(() => Date.now() - new Date().getTime());
    assert.ok(skew < -3_500_000, "the page's Date.now reads an hour early");
    await open(page);
    const b = [...(await nextIds(page, 1000)), ...(await batch(page, 5000))];
    assertIncreasing(b, "with the clock an hour back");
    assert.ok(min(b) > max(a), `with the clock back ${min(b)} is not above ${max(a)}`);
    const firstTime = await page.evaluate((id) => gen.decode(id).timeMs, String(min(b)));
    assert.ok(firstTime > lastTime, "IDs go on after the reservation, not from the clock's reading");
  },
);

test("two tabs generating at once get distinct node ids and never the same ID", { timeout: 120_000 }, async () => {
  const { context, pages: tabs } = await pages(2);
  const opened = await Promise.all(tabs.map((t) => open(t)));
  assert.notEqual(opened[0].node, opened[1].node, "each tab holds its own node id");
  const all = [];
  for (let round = 0; round < 5; round++) {
    const got = await Promise.all(tabs.map((t) => batch(t, 2000)));
    for (const ids of got) assertIncreasing(ids, `round ${round}`);
    all.push(...got.flat());
  }
  assertNoDuplicates(all, "two tabs");
  noErrors(...tabs);
  await context.close();
});

for (const [kind, start] of [
  ["worker", "startWorker"],
  ["shared worker", "startSharedWorker"],
]) {
  test(`a tab and a ${kind} of one origin never issue the same ID`, { timeout: 120_000 }, async () => {
    const {
      context,
      pages: [page],
    } = await pages();
    const tabNode = (await open(page)).node;
    const result = await page.evaluate(async (start) => {
      const { worker, ask } = await window[start]();
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
    }, start);
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.opened.storage, "indexeddb", "a worker has no localStorage");
    assert.notEqual(result.opened.node, tabNode, `the ${kind} holds its own node id`);
    assert.equal(result.ids.length, 20_000);
    assertNoDuplicates(result.ids.map(BigInt), `tab and ${kind}`);
    noErrors(page);
    await context.close();
  });
}

test("a closed tab's node id is reused by the next one, and maxNodes bounds how many a device holds", {
  timeout: 120_000,
}, async () => {
  const {
    context,
    pages: [a, b, c],
  } = await pages(3);
  const na = (await open(a, { maxNodes: 2 })).node;
  const nb = (await open(b, { maxNodes: 2 })).node;
  const full = await c.evaluate(() =>
    sd.openSnowdrift({ maxNodes: 2 }).then(
      () => "opened",
      (e) => e.message,
    ),
  );
  assert.match(full, /all 2 node ids of this origin \(name "snowdrift"\) are in use/);
  await a.evaluate(() => gen.close());
  assert.equal((await open(c, { maxNodes: 2 })).node, na, "the freed node id is taken again");
  assert.notEqual(na, nb);
  const closed = await a.evaluate(() => {
    try {
      gen.next();
      return "issued";
    } catch (e) {
      return e.message;
    }
  });
  assert.equal(closed, "this snowdrift/browser generator is closed");
  noErrors(a, b, c);
  await context.close();
});

test("an app-supplied node id: a number is used as given and held by one tab; a function is asked once per new node id", {
  timeout: 120_000,
}, async () => {
  const {
    context,
    pages: [a, b],
  } = await pages(2);
  assert.equal((await open(a, { node: 77 })).node, 77);
  const ids = await nextIds(a, 100);
  const nodes = await a.evaluate((list) => list.map((id) => gen.decode(id).node), ids.map(String));
  assert.ok(nodes.every((n) => n === 77));
  const taken = await b.evaluate(() =>
    sd.openSnowdrift({ node: 77 }).then(
      () => "opened",
      (e) => e.message,
    ),
  );
  assert.match(taken, /node 77 is in use by another tab or worker of this origin/);

  // A function (standing in for a server call) gives the node id the first time only.
  const calls = await b.evaluate(async () => {
    let calls = 0;
    const options = {
      name: "orders",
      node: async () => {
        calls++;
        return 300;
      },
    };
    const g1 = await sd.openSnowdrift(options);
    const first = g1.node;
    await g1.close();
    const g2 = await sd.openSnowdrift(options);
    const again = g2.node;
    await g2.close();
    return { calls, first, again };
  });
  assert.deepEqual(calls, { calls: 1, first: 300, again: 300 });
  const bad = await b.evaluate(() =>
    sd.openSnowdrift({ name: "x", node: () => 5000 }).then(
      () => "opened",
      (e) => `${e.name}: ${e.message}`,
    ),
  );
  assert.equal(bad, "RangeError: the node function's result 5000 is outside the allowed range 0..=1023");
  noErrors(a, b);
  await context.close();
});

test("where IndexedDB is missing, localStorage keeps the node id and reservation across reloads, and a worker (no localStorage) refuses to open", {
  timeout: 120_000,
}, async () => {
  const {
    context,
    pages: [page],
  } = await pages(1, (c) =>
    c.addInitScript(() => {
      Object.defineProperty(globalThis, "indexedDB", { value: undefined });
    }),
  );
  const first = await open(page, { reserveMs: 2 });
  assert.equal(first.storage, "localstorage");
  // localStorage writes are synchronous: a burst past the reservation renews it on the spot.
  const a = await batch(page, 1 << 18);
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem(`snowdrift:snowdrift:${gen.node}`)).until);
  assert.ok(
    stored >= (await page.evaluate((id) => gen.decode(id).timeMs, String(max(a)))),
    "localStorage covers the burst",
  );
  await reload(page);
  const second = await open(page);
  assert.equal(second.node, first.node);
  // A worker, which has no localStorage, cannot keep a reservation there: it refuses to open.
  const worker = await page.evaluate(async () => {
    const { worker: w, ask } = await startWorker();
    await ask({ withoutIndexedDB: true });
    const out = await ask({ open: {} });
    w.terminate();
    return out.error;
  });
  assert.equal(
    worker,
    "Error: snowdrift/browser needs IndexedDB (or, in a window, localStorage) to remember its node id and reservation; neither is available in this context",
  );
  const b = await batch(page, 1000);
  assert.ok(min(b) > max(a), "above the IDs before the reload");
  noErrors(page);
  await context.close();
});

pageTest(
  "no ID is issued past what storage holds: a window renews a burst's reservation on the spot, a worker throws and the same call goes on after ready",
  async (page) => {
    const { node } = await open(page, { reserveMs: 2 });
    // 1,048,576 IDs in one synchronous call: 256 ms of 4,096-ID ticks, far past a 2 ms reservation.
    const tab = await page.evaluate(() => {
      const ids = gen.nextBatch(1 << 20);
      return { newest: gen.decode(ids[ids.length - 1]).timeMs, reserved: gen.reservedUntil };
    });
    const held = await stored(page, "snowdrift", node);
    assert.ok(
      held.local >= tab.newest && tab.reserved === held.local,
      `localStorage holds ${held.local}, the newest ID has ${tab.newest}`,
    );

    const worker = await page.evaluate(async () => {
      const { worker: w, ask } = await startWorker();
      const out = { opened: await ask({ open: { name: "w", reserveMs: 2 } }) };
      out.burst = (await ask({ batch: 1 << 20 })).error;
      out.ready = (await ask({ ready: true })).ready;
      // A caller that takes a moment before calling again: the clock goes on meanwhile.
      await new Promise((r) => setTimeout(r, 200));
      const after = await ask({ batch: 1 << 20 });
      out.after = after.error ?? after.ids.length;
      out.newest = after.ids?.at(-1);
      w.terminate();
      return out;
    });
    assert.match(
      worker.burst ?? "",
      /^Error: IDs reached the end of the reservation stored in IndexedDB \(.*Z\) before it could be renewed; await generator.ready, then call again$/,
    );
    assert.equal(worker.ready, true);
    assert.equal(worker.after, 1 << 20, "after ready, the renewal covers the whole call");
    const newestMs = await page.evaluate((id) => sd.decode(id).timeMs, worker.newest);
    const rec = await stored(page, "w", worker.opened.node);
    assert.ok(
      rec.until >= newestMs && rec.window === false,
      `IndexedDB holds ${rec.until}, the worker's newest ID has ${newestMs}`,
    );
  },
);

pageTest("bad options are a TypeError or RangeError naming the value and the allowed range", async (page) => {
  const errors = await page.evaluate(async () => {
    const fail = (o) =>
      sd.openSnowdrift(o).then(
        () => "opened",
        (e) => `${e.name}: ${e.message}`,
      );
    return [
      await fail({ node: 5000 }),
      await fail({ node: "3" }),
      await fail({ nod: 3 }),
      await fail({ reserveMs: 0 }),
      await fail({ storageTimeoutMs: 0 }),
      await fail({ storage: "cookies" }),
      await fail({ layout: { timeBits: 41, nodeBits: 12, sequenceBits: 12, epochMs: 0 } }),
    ];
  });
  assert.deepEqual(errors, [
    "RangeError: node 5000 is outside the allowed range 0..=1023",
    'TypeError: node must be a number, got string "3"',
    'RangeError: unknown openSnowdrift option "nod" (allowed: name, layout, node, maxNodes, reserveMs, maxAheadMs, storage, persist, storageTimeoutMs)',
    "RangeError: reserveMs 0 is outside the allowed range 1..=86400000",
    "RangeError: storageTimeoutMs 0 is outside the allowed range 1..=600000",
    'RangeError: storage "cookies" is not one of "auto", "indexeddb"',
    "RangeError: invalid layout: the fields take 65 bits (max 64)",
  ]);
});

pageTest(
  "collisionOdds is the birthday bound over the layout's node ids, and the table in the types says the same",
  async (page) => {
    const odds = await page.evaluate(() => {
      const o = (n, layout) => sd.collisionOdds(n, layout);
      return {
        one: o(1),
        two: o(2),
        twoBrowser: o(2, sd.BROWSER_LAYOUT),
        all: o(1025),
        ten: o(10),
        table: [2, 10, 100, 1000].map((n) => [
          o(n),
          o(n, "instagram"),
          o(n, sd.BROWSER_LAYOUT),
          o(n, "sonyflake"),
          o(n, "twitter"),
        ]),
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

    // The table in browser.d.ts: rows "| devices | default | instagram | browser |".
    const dts = readFileSync(new URL("../../wasm/js/types/browser.d.ts", import.meta.url), "utf8");
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
  },
);

// ---- Reservations under attack: whoever takes a node id next starts above every ID ----
// Each test below reproduces a way an earlier version issued an ID twice or failed
// silently. The plain page's clock is moved through `window.clockOffset` (plain/index.html)
// and a worker's through an { offset } message (plain/worker.js).

/** What the origin's storage holds for (name, node): `{ until, window, local }`, the
 * IndexedDB record's reservation (null: none) and mark of a window's node id, and the
 * localStorage reservation windows write (null: none). */
const stored = (page, name, node) =>
  page.evaluate(
    async ([n, k]) => {
      const local = JSON.parse(localStorage.getItem(`snowdrift:${n}:${k}`) ?? "null")?.until ?? null;
      // Opening a database that is not there would make an empty one: look first.
      if (!(await indexedDB.databases()).some((d) => d.name === "snowdrift"))
        return { until: null, window: false, local };
      return new Promise((ok, fail) => {
        const r = indexedDB.open("snowdrift");
        r.onerror = () => fail(r.error);
        r.onsuccess = () => {
          const get = r.result.transaction("nodes").objectStore("nodes").get([n, k]);
          get.onsuccess = () => {
            ok({ until: get.result?.until ?? null, window: get.result?.window === true, local });
            r.result.close();
          };
          get.onerror = () => fail(get.error);
        };
      });
    },
    [name, node],
  );

/** The reservation a window taking the node id next reads (the larger of the two). */
const storedUntil = async (page, name, node) => {
  const r = await stored(page, name, node);
  return r.until === null && r.local === null ? null : Math.max(r.until ?? 0, r.local ?? 0);
};

/** In a new tab of `context`, a worker takes `node` with its clock `offset` ms off and
 * makes `n` IDs; returns them as bigints (or throws the worker's error). */
async function workerTakes(context, options, offset, n = 2000) {
  const tab = await openPage(context, plainUrl());
  const out = await tab.evaluate(
    async ([o, off, k]) => {
      const { worker, ask } = await startWorker();
      await ask({ offset: off });
      const opened = await ask({ open: o });
      const got = opened.error ? opened : await ask({ batch: k });
      worker.terminate();
      return { node: opened.node, ...got };
    },
    [options, offset, n],
  );
  await tab.close();
  if (out.error) return out.error;
  return out.ids.map(BigInt);
}

/** In a new tab of `context` with its clock `offset` ms off, a window takes `node`, makes
 * `n` IDs and, with `close`, closes its generator; returns the IDs as bigints. */
async function windowTakes(context, node, offset, { n = 2000, close = false } = {}) {
  const tab = await openPage(context, plainUrl());
  const ids = await tab.evaluate(
    async ([k, off, count, shut]) => {
      clockOffset = off;
      const g = await sd.openSnowdrift({ node: k });
      const out = Array.from(g.nextBatch(count), String);
      if (shut) await g.close();
      return out;
    },
    [node, offset, n, close],
  );
  await tab.close();
  return ids.map(BigInt);
}

const WINDOWS_ONLY =
  /^Error: node \d+ \(name "snowdrift"\) was last held by a window, which keeps its newest reservation in localStorage, where workers cannot read it: open it in a window \(close\(\) there hands it back to workers\), or give this worker another node id$/;

/** Runs `body(page)` in a fresh context's plain page; closes the context whatever happens. */
async function withPage(body) {
  const context = await started.browser.newContext();
  try {
    const page = await openPage(context, plainUrl());
    await body(page, context);
  } finally {
    await context.close();
  }
}

/** In the page: for about `ms` of real time, a batch of `size` every `every` ms. Failures
 * are collected (up to 5), not thrown. Returns { newest: decimal, newestMs, errors, count }. */
const issueFor = (page, ms, size = 500, every = 20) =>
  page.evaluate(
    async ([ms, size, every]) => {
      let newest = 0n;
      let count = 0;
      const errors = [];
      const end = performance.now() + ms;
      for (let i = 0; i < 10_000 && performance.now() < end; i++) {
        try {
          const ids = gen.nextBatch(size);
          newest = ids[ids.length - 1];
          count += ids.length;
        } catch (e) {
          if (errors.length < 5) errors.push(e.message);
        }
        await new Promise((r) => setTimeout(r, every));
      }
      return { newest: String(newest), newestMs: newest ? gen.decode(newest).timeMs : 0, errors, count };
    },
    [ms, size, every],
  );

test("bursts in a tab, then the tab closes: a worker is refused its node id until a window hands it back; every later holder, clock 2.5 s back, repeats none", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page, context) => {
    await open(page, { node: 5, reserveMs: 100 });
    const got = await page.evaluate(() => {
      // 60 ms of ticks (past half the 100 ms reservation), then 150 ms (past its end):
      // a window renews in localStorage at once, so neither call throws.
      gen.nextBatch(60 * 4096);
      const ids = gen.nextBatch(150 * 4096);
      const newest = ids[ids.length - 1];
      return { newest: String(newest), newestMs: gen.decode(newest).timeMs };
    });
    const held = await stored(page, "snowdrift", 5);
    assert.ok(held.local >= got.newestMs, `localStorage holds ${held.local}, the newest ID's time is ${got.newestMs}`);
    assert.equal(held.window, true, "IndexedDB marks node 5 as a window's");
    await page.close(); // the tab goes away without close(): the browser releases its lock
    assert.match(await workerTakes(context, { node: 5 }, -2500), WINDOWS_ONLY);
    const byWindow = await windowTakes(context, 5, -2500, { close: true });
    assert.ok(min(byWindow) > BigInt(got.newest), `the next window issued ${min(byWindow)}, not above ${got.newest}`);
    const byWorker = await workerTakes(context, { node: 5 }, -2500);
    assert.ok(Array.isArray(byWorker), `after close() a worker takes node 5: ${byWorker}`);
    assert.ok(min(byWorker) > max(byWindow), "the worker goes on above both windows");
  });
});

test("IndexedDB writes failing in a tab: it goes on under localStorage, its node id stays a window's (close() cannot hand it back), and nothing repeats", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page, context) => {
    await open(page, { node: 6, reserveMs: 100 });
    await page.evaluate(() => {
      IDBObjectStore.prototype.put = function put() {
        throw new DOMException("the quota has been exceeded", "QuotaExceededError");
      };
    });
    const got = await issueFor(page, 1000);
    assert.deepEqual(got.errors, []);
    await page.evaluate(() => gen.close());
    assert.equal((await stored(page, "snowdrift", 6)).window, true, "still marked as a window's");
    await page.close();
    assert.match(await workerTakes(context, { node: 6 }, -2500), WINDOWS_ONLY);
    const opened = await (async () => {
      const tab = await openPage(context, plainUrl());
      const n = await tab.evaluate(() =>
        startWorker().then(async ({ worker, ask }) => {
          const o = await ask({ open: { maxNodes: 4 } });
          worker.terminate();
          return o.node;
        }),
      );
      await tab.close();
      return n;
    })();
    assert.notEqual(opened, 6, "a worker choosing its own node id skips node 6");
    const byWindow = await windowTakes(context, 6, -2500);
    assert.ok(min(byWindow) > BigInt(got.newest), `the next window issued ${min(byWindow)}, not above ${got.newest}`);
  });
});

test("a worker renews ahead of the clock: with writes that take 150 ms, a call just past the stored reservation, after a pause with no IDs, issues at once", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const opened = await page.evaluate(async () => {
      window.w = await startWorker();
      await w.ask({ slowWrites: 150 });
      return w.ask({ open: { reserveMs: 1000 } });
    });
    const calls = [];
    for (let i = 0; i < 3; i++) {
      // Two reservations with no calls: only the timer renews.
      await sleep(2100);
      const { until } = await stored(page, "snowdrift", opened.node);
      calls.push(
        await page.evaluate(async (hi) => {
          await new Promise((r) => setTimeout(r, Math.max(0, hi + 20 - Date.now())));
          const at = Date.now() - hi;
          return { at, ...(await w.ask({ batch: 10 })) };
        }, until),
      );
    }
    await page.evaluate(() => w.worker.terminate());
    for (const [i, call] of calls.entries()) {
      assert.equal(
        call.error,
        undefined,
        `call ${i}, ${call.at} ms past the reservation read before it: ${call.error}`,
      );
    }
    assertIncreasing(
      calls.flatMap((c) => c.ids.map(BigInt)),
      "the calls' IDs",
    );
  });
});

test("an odd reserveMs (1001) is renewed as IDs approach its end; a reload with the clock 1.5 s back repeats nothing", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const { node } = await open(page, { reserveMs: 1001 });
    const got = await issueFor(page, 2500);
    assert.deepEqual(got.errors, []);
    await page.evaluate(() => gen.ready);
    const stored = await storedUntil(page, "snowdrift", node);
    assert.ok(
      Number.isSafeInteger(stored) && stored >= got.newestMs,
      `storage holds ${stored}, the newest ID's time is ${got.newestMs}`,
    );
    await reload(page);
    await page.evaluate(() => {
      clockOffset = -1500;
    });
    await open(page, { node });
    const after = await batch(page, 2000);
    assert.ok(min(after) > BigInt(got.newest), `after the reload ${min(after)} is not above ${got.newest}`);
  });
});

test("a clock before the layout's epoch when the generator opens, corrected while it runs: IDs after the correction are reserved", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    await page.evaluate(() => {
      clockOffset = -3 * 365 * 86_400_000;
    }); // 2023: before BROWSER_LAYOUT's 2024 epoch
    const { node } = await page.evaluate(async () => {
      window.gen = await sd.openSnowdrift({ layout: sd.BROWSER_LAYOUT, reserveMs: 200 });
      clockOffset = 0;
      return { node: gen.node };
    });
    const got = await issueFor(page, 1000, 50);
    assert.ok(got.count > 0, `no IDs after the correction: ${got.errors.join("; ")}`);
    await page.evaluate(() => gen.ready);
    const stored = await storedUntil(page, "snowdrift", node);
    assert.ok(stored >= got.newestMs, `storage holds ${stored}, the newest ID's time is ${got.newestMs}`);
    await reload(page);
    await page.evaluate(() => {
      clockOffset = -1500;
    });
    const after = await page.evaluate(async (n) => {
      const g = await sd.openSnowdrift({ layout: sd.BROWSER_LAYOUT, node: n });
      return Array.from(g.nextBatch(500), String);
    }, node);
    assert.ok(min(after.map(BigInt)) > BigInt(got.newest), "after the reload, above the IDs issued before");
  });
});

test("Date.now with fractions of a millisecond: reservations are whole milliseconds, renewed, and a reopened generator goes on above", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const { node } = await page.evaluate(async () => {
      clockOffset = 0.37; // as pages that patch Date.now with performance.now() see it
      window.gen = await sd.openSnowdrift({ reserveMs: 200 });
      return { node: gen.node };
    });
    const got = await issueFor(page, 1000);
    assert.deepEqual(got.errors, []);
    await page.evaluate(() => gen.ready);
    const stored = await storedUntil(page, "snowdrift", node);
    assert.ok(Number.isSafeInteger(stored), `stored ${stored}`);
    assert.ok(stored >= got.newestMs, `storage holds ${stored}, the newest ID's time is ${got.newestMs}`);
    await reload(page);
    await page.evaluate(() => {
      clockOffset = 0.37 - 1500;
    });
    await open(page, { node });
    const after = await batch(page, 1000);
    assert.ok(min(after) > BigInt(got.newest));
  });
});

test("a clock past the layout's end: a clear error naming the end, nothing stored, and the next visit with the right clock works", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const error = await page.evaluate(async () => {
      clockOffset = Date.UTC(2100, 0, 1) - Date.now();
      return sd.openSnowdrift({ node: 9 }).then(
        () => "opened",
        (e) => `${e.name}: ${e.message}`,
      );
    });
    assert.match(
      error,
      /^RangeError: the clock reads 2100-01-01T.*, past the end of the layout's time \(2093-.*\): no ID can be made; set the clock right$/,
    );
    assert.equal(await storedUntil(page, "snowdrift", 9), null, "nothing was reserved");
    await reload(page);
    await open(page, { node: 9 });
    assert.equal((await nextIds(page, 10)).length, 10);
  });
});

test("stored reservations that are not valid times are reported with what to do, and never make a name unusable", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    // A reservation past the layout's end, a fraction, and a non-number, as older versions
    // or other code could have left them.
    const out = await page.evaluate(async () => {
      const g = await sd.openSnowdrift({ node: 1 });
      await g.close();
      const put = (node, until) =>
        new Promise((ok, fail) => {
          const r = indexedDB.open("snowdrift");
          r.onsuccess = () => {
            const tx = r.result.transaction("nodes", "readwrite");
            tx.objectStore("nodes").put({ node, until }, ["snowdrift", node]);
            tx.oncomplete = () => {
              r.result.close();
              ok();
            };
            tx.onerror = () => fail(tx.error);
          };
        });
      const late = Date.UTC(2100, 0, 1);
      await put(1, late);
      await put(2, Date.now() + 0.5);
      await put(3, "soon");
      const fail = (o) =>
        sd.openSnowdrift(o).then(
          async (x) => {
            const id = x.next();
            await x.close();
            return `opened ${x.node} ${id}`;
          },
          (e) => `${e.name}: ${e.message}`,
        );
      return {
        late: await fail({ node: 1 }),
        fraction: await fail({ node: 2 }),
        junk: await fail({ node: 3 }),
        random: await fail({ maxNodes: 4 }),
      };
    });
    assert.match(
      out.late,
      /^Error: the stored reservation of node 1 \(name "snowdrift"\) is 2100-01-01T00:00:00.000Z, at or past the end of the layout's time \(2093-.*\): this node id may have issued the layout's last IDs and cannot issue more; use another node id/,
    );
    assert.match(out.fraction, /^opened 2 \d+$/, "a fraction is rounded up, not refused");
    assert.match(
      out.junk,
      /^Error: the stored reservation of node 3 \(name "snowdrift"\) is "soon", not a time in milliseconds: .*use another node id/,
    );
    assert.match(out.random, /^opened (?!1 |3 )\d+ \d+$/, "a random node id skips the records it cannot trust");
  });
});

test("after a visit with the clock an hour ahead: with maxAheadMs the next visit is refused, naming the reserved time and when issuing resumes; without it IDs go on ahead", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    await page.evaluate(() => {
      clockOffset = 3_600_000;
    });
    const { node } = await open(page);
    const ahead = await nextIds(page, 100);
    await page.evaluate(() => gen.close());
    await reload(page);
    const refused = await page.evaluate(
      (n) =>
        sd.openSnowdrift({ node: n, maxAheadMs: 1000 }).then(
          () => "opened",
          (e) => `${e.name}: ${e.message}`,
        ),
      node,
    );
    assert.match(
      refused,
      /^Error: node \d+ \(name "snowdrift"\) has IDs reserved up to \d{4}-.*Z, 3,60\d s ahead of the clock \(maxAheadMs 1000\): it can issue again from \d{4}-.*Z, or use another node id$/,
    );
    await open(page, { node });
    const later = await nextIds(page, 100);
    assert.ok(min(later) > max(ahead), "IDs go on above the reservation");
    const lead = await page.evaluate((id) => gen.decode(id).timeMs - Date.now(), String(min(later)));
    assert.ok(lead > 3_500_000, "the first IDs are an hour ahead of the clock");
    // While running, a clock set back further than maxAheadMs is an error, not a lead.
    const running = await page.evaluate(async () => {
      const g = await sd.openSnowdrift({ name: "running", maxAheadMs: 1000 });
      g.next();
      clockOffset = -5000;
      try {
        return `issued ${g.next()}`;
      } catch (e) {
        return e.message;
      } finally {
        clockOffset = 0;
      }
    });
    assert.match(
      running,
      /^next ID would be \d+ ms ahead of the clock \(limit 1000 ms, then a wait of up to 1000 ms\)$/,
    );
  });
});

test("after storage loss, a node id from the app with its high-water mark goes on above it, even with the clock back; persistent storage is asked for and reported", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const first = await page.evaluate(async () => {
      window.gen = await sd.openSnowdrift({ node: 40 });
      const ids = gen.nextBatch(1000);
      await gen.close();
      return String(ids[ids.length - 1]);
    });
    // Site data cleared: the server still has the newest ID it received from node 40.
    const out = await page.evaluate(async (newest) => {
      await new Promise((ok) => {
        const r = indexedDB.deleteDatabase("snowdrift");
        r.onsuccess = r.onerror = ok;
      });
      localStorage.clear();
      clockOffset = -60_000;
      const g = await sd.openSnowdrift({ node: async () => ({ node: 40, resumeAfter: newest }) });
      const ids = Array.from(g.nextBatch(1000), String);
      return { node: g.node, ids, persisted: await g.persisted };
    }, first);
    assert.equal(out.node, 40);
    assert.ok(min(out.ids.map(BigInt)) > BigInt(first), "above the server's high-water mark");
    assert.equal(typeof out.persisted, "boolean");
  });
});

test("IndexedDB upgraded by a newer version: this version lets go of its connection, a worker stops at its reservation saying why, a window goes on in localStorage, and opening reports the version instead of splitting storage", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const out = await page.evaluate(async () => {
      window.gen = await sd.openSnowdrift({ reserveMs: 100 });
      const { worker, ask } = await startWorker();
      await ask({ open: { reserveMs: 100 } });
      // A newer page version opens the database at version 2: not blocked by these two.
      const upgraded = await new Promise((ok) => {
        const r = indexedDB.open("snowdrift", 2);
        r.onupgradeneeded = () => {};
        r.onsuccess = () => {
          r.result.close();
          ok("upgraded");
        };
        r.onblocked = () => ok("blocked");
        r.onerror = () => ok(`error ${r.error}`);
      });
      let stopped = "issued on";
      for (let i = 0; i < 200; i++) {
        const got = await ask({ batch: 4096 });
        if (got.error) {
          stopped = got.error;
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      worker.terminate();
      const windowIds = gen.nextBatch(200 * 4096).length;
      const reopened = await Promise.race([
        sd.openSnowdrift({ name: "other" }).then(
          (g) => g.storage,
          (e) => e.message,
        ),
        new Promise((r) => setTimeout(() => r("no answer in 10 s"), 10_000)),
      ]);
      return { upgraded, stopped, windowIds, reopened };
    });
    assert.equal(out.upgraded, "upgraded");
    assert.match(
      out.stopped,
      /^Error: IDs reached the end of the reservation stored in IndexedDB .*: it could not be renewed \(Error: IndexedDB was upgraded by a newer version of snowdrift in another tab or worker; reload this page to go on\)/,
    );
    assert.equal(out.windowIds, 200 * 4096);
    assert.equal(
      out.reopened,
      'IndexedDB database "snowdrift" is at version 2, made by a newer version of snowdrift than this page\'s (1); reload the page to get the newer version',
    );
  });
});

test("snowdrift/browser does not run in a service worker, as the docs say: registering one that imports it fails", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const outcome = await page.evaluate(async () => {
      const timeout = new Promise((ok) => setTimeout(() => ok("no answer in 20 s"), 20_000));
      const registering = navigator.serviceWorker
        .register("/plain/service-worker.js", { type: "module", scope: "/plain/sw-scope/" })
        .then(
          async (r) => {
            // Some engines resolve the registration and fail the install instead.
            const sw = r.installing ?? r.waiting ?? r.active;
            if (!sw || sw.state === "activated") return "registered";
            return new Promise((ok) =>
              sw.addEventListener("statechange", () => {
                if (sw.state === "redundant") ok("install failed");
                else if (sw.state === "activated") ok("registered");
              }),
            );
          },
          (e) => `refused: ${e.name}`,
        );
      return Promise.race([registering, timeout]);
    });
    assert.match(outcome, /^(refused: \w+|install failed)$/, "a service worker that imports the package never runs");
  });
});

// ---- One store lost alone, or deleted under a running generator ----

/** In the page: deletes the "snowdrift" database (as clearing site data does); resolves
 * to how it ended ("deleted", "blocked" or the error). */
const deleteDb = (page) =>
  page.evaluate(
    () =>
      new Promise((ok) => {
        const r = indexedDB.deleteDatabase("snowdrift");
        r.onsuccess = () => ok("deleted");
        r.onerror = () => ok(String(r.error));
        r.onblocked = () => ok("blocked");
      }),
  );

for (const lost of ["localStorage", "IndexedDB"]) {
  test(`${lost} cleared alone (an app's logout, say), then the tab reopened with the clock set back: no ID repeats`, {
    timeout: 120_000,
  }, async () => {
    await withPage(async (page, context) => {
      const node = (await open(page, { reserveMs: 100 })).node;
      // Past the reservation taken on opening: these IDs are held by renewals.
      await sleep(300);
      const before = await batch(page, 300_000);
      const firstMs = await page.evaluate((id) => gen.decode(id).timeMs, String(before[0]));
      if (lost === "localStorage") await page.evaluate(() => localStorage.clear());
      else assert.equal(await deleteDb(page), "deleted");
      // The tab goes away (its lock with it) and opens again; the clock reads 50 ms before
      // those IDs (a batch spans 256 ms of ticks).
      await page.close();
      const next = await openPage(context, plainUrl());
      await next.evaluate((ms) => {
        clockOffset = ms - 50 - realNow.call(Date);
      }, firstMs);
      const again = (await open(next, { reserveMs: 100 })).node;
      const after = await batch(next, 1_048_576);
      const seen = new Set(before);
      const repeated = after.filter((id) => seen.has(id)).length;
      assert.equal(
        repeated,
        0,
        `${repeated} of ${before.length} IDs issued before were issued again (node ${node}, then node ${again})`,
      );
      noErrors(next);
    });
  });
}

/** The node field of a default-layout ID (decimal string): 10 bits above a 12-bit sequence. */
const sdNode = (id) => Number((BigInt(id) >> 12n) & 1023n);

const ways = [["deleteDatabase", (page) => deleteDb(page)]];
if (ENGINE === "chromium") {
  // What "clear site data" does: IndexedDB and localStorage go, open connections are closed.
  ways.push([
    "site data cleared (Storage.clearDataForOrigin)",
    async (page, context, url) => {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Storage.clearDataForOrigin", { origin: new URL(url).origin, storageTypes: "all" });
      await cdp.detach();
    },
  ]);
}
for (const [way, clear] of ways) {
  test(`IndexedDB lost under a running tab and worker (${way}): both go on, the database is made again with their records, and the next holders, clock 2.5 s back, repeat none`, {
    timeout: 120_000,
  }, async () => {
    await withPage(async (page, context) => {
      const tabNode = (await open(page, { reserveMs: 100 })).node;
      await page.evaluate(async () => {
        window.w = await startWorker();
        window.workerNode = (await w.ask({ open: { reserveMs: 100 } })).node;
      });
      const workerNode = await page.evaluate(() => workerNode);
      await clear(page, context, plainUrl());
      // 40 rounds, 5 ms apart: each a batch in the tab and one in the worker (after
      // `ready` if the worker says so).
      const got = await page.evaluate(async () => {
        const ids = [];
        const errors = [];
        for (let i = 0; i < 40; i++) {
          ids.push(...Array.from(gen.nextBatch(4096), String));
          let w1 = await w.ask({ batch: 4096 });
          if (w1.error) {
            errors.push(w1.error);
            await w.ask({ ready: true });
            w1 = await w.ask({ batch: 4096 });
          }
          if (w1.error) return { ids, errors: [...errors, w1.error] };
          ids.push(...w1.ids);
          await new Promise((r) => setTimeout(r, 5));
        }
        await w.ask({ ready: true });
        return { ids, errors };
      });
      assert.equal(got.ids.length, 40 * 2 * 4096, `issuing stopped: ${got.errors.join("; ")}`);
      assertNoDuplicates(got.ids.map(BigInt), "tab and worker");
      const newestWorker = got.ids.filter((id) => sdNode(id) === workerNode).map(BigInt);
      const held = await stored(page, "snowdrift", workerNode);
      const newestMs = await page.evaluate((id) => gen.decode(id).timeMs, String(max(newestWorker)));
      assert.ok(
        held.until >= newestMs,
        `the re-made database holds ${held.until} for the worker, its newest ID is at ${newestMs}`,
      );
      await page.evaluate(() => w.worker.terminate());
      const next = await workerTakes(context, { node: workerNode }, -2500);
      assert.ok(Array.isArray(next), `the worker's node id taken again: ${next}`);
      assert.ok(min(next) > max(newestWorker), "the next holder of the worker's node id goes on above it");
      const tabIds = got.ids.filter((id) => sdNode(id) === tabNode).map(BigInt);
      await page.evaluate(() => gen.close());
      const byWindow = await windowTakes(context, tabNode, -2500);
      assert.ok(min(byWindow) > max(tabIds), "the next holder of the tab's node id goes on above it");
      noErrors(page);
    });
  });
}

for (const kind of ["worker", "shared worker"]) {
  test(`a ${kind} written the plain way (a static import, then its handler) answers a message posted right after it starts`, {
    timeout: 120_000,
  }, async () => {
    await withPage(async (page) => {
      const out = await page.evaluate(async (shared) => {
        const w = shared
          ? new SharedWorker("/plain/plain-worker.js", { type: "module", name: `p${Math.random()}` })
          : new Worker("/plain/plain-worker.js", { type: "module" });
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
      }, kind === "shared worker");
      assert.equal(out.error, undefined, out.error);
      assert.notEqual(out, "no answer in 20 s");
      assert.equal(out.ids.length, 100);
      assertIncreasing(out.ids.map(BigInt), `the ${kind}'s IDs`);
    });
  });
}

test("IndexedDB cleared alone after a window handed its node id to a worker: no stale localStorage copy is trusted, nothing repeats with the clock back", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page, context) => {
    // A window holds node 9 and hands it back; a worker then issues with its clock 10 s
    // ahead, past anything the window's localStorage copy said.
    const byWindow = await windowTakes(context, 9, 0, { close: true });
    const byWorker = await workerTakes(context, { node: 9 }, 10_000);
    assert.ok(Array.isArray(byWorker), `a worker takes node 9: ${byWorker}`);
    assert.ok(min(byWorker) > max(byWindow));
    assert.equal(await deleteDb(page), "deleted");
    // Whatever a window reads for node 9 now, it must not be a reservation below the
    // worker's IDs: either nothing (node 9 forgotten, as after a loss of all storage) or
    // at or above them.
    const left = await stored(page, "snowdrift", 9);
    const workerMs = await page.evaluate((id) => sd.decode(id).timeMs, String(max(byWorker)));
    assert.ok(
      left.local === null || left.local >= workerMs,
      `localStorage still says ${left.local} for node 9, below the worker's ${workerMs}`,
    );
    // A window drawing its node id at random never takes 9 with a stale reservation.
    const drawn = await page.evaluate(async () => {
      const g = await sd.openSnowdrift();
      const ids = Array.from(g.nextBatch(1000), String);
      const node = g.node;
      await g.close();
      return { node, ids };
    });
    if (drawn.node === 9) assert.ok(min(drawn.ids.map(BigInt)) > max(byWorker));
  });
});

test("IndexedDB that never answers: opening fails after storageTimeoutMs saying so, and a worker whose writes never land stops at its reservation, its ready resolving", {
  timeout: 120_000,
}, async () => {
  await withPage(async (page) => {
    const opening = await page.evaluate(async () => {
      const real = IDBFactory.prototype.open;
      IDBFactory.prototype.open = () => ({}); // a request whose events never come
      try {
        const answer = sd.openSnowdrift({ storageTimeoutMs: 200 }).then(
          () => "opened",
          (e) => e.message,
        );
        return await Promise.race([answer, new Promise((r) => setTimeout(() => r("no answer in 10 s"), 10_000))]);
      } finally {
        IDBFactory.prototype.open = real;
      }
    });
    assert.equal(
      opening,
      "IndexedDB did not answer within 200 ms (storageTimeoutMs) opening its database; no ID is issued past what storage holds",
    );
    const out = await page.evaluate(async () => {
      const { worker, ask } = await startWorker();
      await ask({ open: { reserveMs: 100, storageTimeoutMs: 300 } });
      await ask({ slowWrites: 600_000 }); // every write from now on confirms after 10 minutes
      let stopped;
      for (let i = 0; i < 400 && !stopped; i++) {
        const got = await ask({ batch: 4096 });
        if (got.error) stopped = got.error;
        await new Promise((r) => setTimeout(r, 5));
      }
      const ready = await Promise.race([
        ask({ ready: true }).then(() => "resolved"),
        new Promise((r) => setTimeout(() => r("pending after 10 s"), 10_000)),
      ]);
      worker.terminate();
      return { stopped, ready };
    });
    assert.match(
      out.stopped ?? "",
      /^Error: IDs reached the end of the reservation stored in IndexedDB .*(before it could be renewed|could not be renewed \(Error: IndexedDB did not answer within 300 ms \(storageTimeoutMs\) writing a reservation)/,
    );
    assert.equal(out.ready, "resolved");
  });
});

pageTest("snowdrift/browser exports everything the package's main entry does, the same functions", async (page) => {
  const missing = await page.evaluate(async () => {
    const main = await import("/pkg/index.js");
    return Object.keys(main).filter((k) => sd[k] !== main[k]);
  });
  assert.deepEqual(missing, []);
});
