// The web page (www/dist, built by `cargo xtask www`) in headless Chromium, through its
// data-testid hooks: generate, reload, clock set back, two tabs, decode, offline, 100,000
// IDs, custom layouts, keyboard and labels, contrast, phone width, screenshots.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { decode } from "../../wasm/pkg/node.mjs";
import {
  ENGINE,
  SCREENSHOTS,
  assertIncreasing,
  assertNoDuplicates,
  clockOneHourBack,
  max,
  min,
  openPage,
  reload,
  serverAndBrowser,
  startServer,
} from "./harness.mjs";

const started = serverAndBrowser();

const T = { timeout: 120_000 };
const DISCORD_ID = "175928847299117063";

/** The IDs in the list, as bigints. */
const listed = async (page) =>
  (await page.$$eval('[data-testid="ids"] > li > .dec', (els) => els.map((e) => e.textContent))).map(BigInt);

/** Types `value` into a field, replacing what it held (Firefox's number inputs keep the
 * old text under a plain fill). */
async function setField(locator, value) {
  await locator.fill("");
  await locator.fill(value);
}

/** Sets the count, clicks Generate, waits for a new list; returns the IDs shown. */
async function generate(page, count) {
  const before = await page.$eval('[data-testid="ids"]', (e) => e.firstElementChild?.textContent ?? "");
  await setField(page.getByTestId("count"), String(count));
  await page.getByTestId("generate").click();
  await page.waitForFunction(
    ([n, old]) => {
      const list = document.querySelector('[data-testid="ids"]');
      return list.dataset.count === String(n) && list.firstElementChild && list.firstElementChild.textContent !== old;
    },
    [count, before],
    { timeout: 60_000 },
  );
  return listed(page);
}

/** The decoded output as { label: value } from its definition list. */
const decodedFields = (page) =>
  page.$$eval('[data-testid="decoded"] dt', (dts) =>
    Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])),
  );

const noErrors = (...pages) => {
  for (const p of pages) assert.deepEqual(p.errors, [], "errors in the page");
};

/**
 * A test on a fresh browser context (its own storage) with the page open: `body(page,
 * context)`; `setup(context)` runs before the page opens. Fails on errors in the page;
 * the context is closed whatever happens.
 */
function pageTest(name, body, setup) {
  test(name, T, async () => {
    const context = await started.browser.newContext();
    try {
      if (setup) await setup(context);
      const page = await openPage(context, started.server.url);
      await body(page, context);
      noErrors(page);
    } finally {
      await context.close();
    }
  });
}

const requests = []; // every request of the first test, and the server's counts before it
let sentBefore;

pageTest(
  "the page loads only from its own origin (no CDN, no external font), and what a first visit transfers",
  async (page) => {
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    const foreign = requests.filter((u) => !u.startsWith(started.server.url) && !u.startsWith("data:"));
    assert.deepEqual(foreign, []);
    // The service worker's copies of the files the page already has are revalidated (304s).
    const files = new Set(requests.map((u) => new URL(u).pathname));
    // Playwright does not report the service worker's own script request in Firefox.
    const seen = ["/", "/app.js", "/snowdrift.wasm", "/style.css", ...(ENGINE === "firefox" ? [] : ["/sw.js"])];
    assert.deepEqual([...files].sort(), seen);
    const responses = started.server.sent.responses - sentBefore.responses;
    const bytes = started.server.sent.bytes - sentBefore.bytes;
    console.log(
      `first visit, service worker included: ${responses} responses, ${bytes} bytes sent (gzip, headers included)`,
    );
  },
  (context) => {
    sentBefore = { ...started.server.sent };
    context.on("request", (r) => requests.push(r.url()));
  },
);

pageTest(
  "a sealed ID opens with a pasted key, in the page alone: the key goes nowhere, seal.js and seal.wasm load on first use",
  async (page, context) => {
    const sent = [];
    context.on("request", (r) => sent.push({ url: r.url(), body: r.postData() ?? "" }));
    const vectors = JSON.parse(readFileSync(new URL("../vectors/sealed.json", import.meta.url)));
    const wide = vectors.find((v) => v.layout === "discord" && v.tweak !== "");
    const narrow = vectors.find((v) => v.layout === "twitter" && v.key.length === 64);
    await page.locator("#seal summary").click();
    for (const [v, form] of [
      [narrow, "base62"],
      [wide, "base32"],
    ]) {
      await page.getByTestId("seal-key").fill(v.key);
      await page.getByTestId("seal-tweak").fill(v.tweak);
      await page.getByTestId("seal-width").selectOption(String(v.bits === 63));
      await page.getByTestId("seal-input").fill(v[form]);
      await page.getByTestId("seal-open").click();
      await page
        .getByTestId("seal-out")
        .filter({ hasText: `opens to ID ${v.id} ` })
        .waitFor();
    }
    // The opened ID goes to the decoder.
    await page.getByTestId("seal-out").getByRole("button", { name: "Decode it" }).click();
    assert.equal(await page.getByTestId("decode-input").inputValue(), wide.id);
    // All digits in 11 or 13 characters: base62 or base32, or decimal. The page shows both.
    const { Sealer } = createRequire(new URL("../js/", import.meta.url))("snowdrift/seal");
    const sealer = new Sealer(narrow.key, { layout: "twitter", tweak: narrow.tweak });
    await page.getByTestId("seal-key").fill(narrow.key);
    await page.getByTestId("seal-tweak").fill(narrow.tweak);
    await page.getByTestId("seal-width").selectOption("true");
    for (const [digits, coded] of [
      ["12345678901", "base62"],
      ["1234567890123", "base32"],
    ]) {
      await page.getByTestId("seal-input").fill(digits);
      await page.getByTestId("seal-open").click();
      const text = `as ${coded}, opens to ID ${sealer.openString(digits, coded)} Decode it; as decimal, opens to ID ${sealer.openString(digits, "decimal")} Decode it`;
      await page.getByTestId("seal-out").filter({ hasText: text }).waitFor();
    }
    sealer.free();
    // A wrong key says what is wrong.
    await page.getByTestId("seal-key").fill("00112233");
    await page.getByTestId("seal-open").click();
    await page.getByTestId("seal-out").filter({ hasText: "key of 4 bytes: AES keys are 16, 24 or 32 bytes" }).waitFor();
    const paths = sent.map((r) => new URL(r.url).pathname);
    assert.ok(paths.includes("/seal.js") && paths.includes("/seal.wasm"), paths.join(" "));
    for (const r of sent) {
      for (const key of [narrow.key, wide.key]) {
        assert.ok(!r.url.includes(key) && !r.body.includes(key), `the key was sent: ${r.url}`);
      }
      assert.ok(r.url.startsWith(started.server.url), `a request left the page's origin: ${r.url}`);
    }
  },
);

/** 1,000 IDs, then `between()`, a reload and 1,000 more: each batch increasing, the second all above the first. */
async function aboveAfterReload(page, between, what) {
  const a = await generate(page, 1000);
  assert.equal(a.length, 1000, "one element per ID");
  assertIncreasing(a, "first batch");
  await between();
  await reload(page);
  const b = await generate(page, 1000);
  assert.equal(b.length, 1000, "one element per ID");
  assertIncreasing(b, what);
  assert.ok(min(b) > max(a), `${what}: ${min(b)} is not above ${max(a)}`);
}

pageTest(
  "1,000 IDs, one element each, unique and increasing; after a reload, all above the first batch",
  async (page) => {
    await aboveAfterReload(page, async () => {}, "after the reload");
    const b32 = await page.$eval('[data-testid="ids"] > li', (li) => li.dataset.b32);
    assert.match(b32, /^[0-9A-Z]{13}$/, "each row carries the base32 form");
  },
);

pageTest(
  "Date.now and performance set one hour earlier, then a reload: new IDs are still above",
  async (page, context) => {
    await aboveAfterReload(page, () => clockOneHourBack(context), "with the clock an hour back");
    assert.ok(
      // biome-ignore lint/complexity/useDateNow: the two read different clocks here (Date.now is set back)
      await page.evaluate(() => Date.now() < new Date().getTime() - 3_500_000),
      "the clock reads an hour early",
    );
  },
);

pageTest("two tabs generating at once: no duplicate, each on its own node id", async (first, context) => {
  const tabs = [first, await openPage(context, started.server.url)];
  const all = [];
  for (let round = 0; round < 3; round++) {
    const got = await Promise.all(tabs.map((t) => generate(t, 1000)));
    all.push(...got.flat());
  }
  assert.equal(all.length, 6000);
  assertNoDuplicates(all, "two tabs");
  const nodes = await Promise.all(tabs.map((t) => t.$eval("#status", (s) => s.textContent.match(/node (\d+)/)[1])));
  assert.notEqual(nodes[0], nodes[1]);
  noErrors(tabs[1]);
});

pageTest(
  "decode Discord's documentation ID as a Discord ID: the layout named, its own field names, UTC, local time and age, bits",
  async (page) => {
    await page.getByTestId("decode-layout").selectOption("discord");
    await page.getByTestId("decode-input").fill(DISCORD_ID);
    const decoded = page.getByTestId("decoded");
    await decoded.locator("dl").waitFor();
    const f = await decodedFields(page);
    assert.equal(f.Layout, "Discord");
    assert.equal(f["Time (UTC)"], "2016-04-30T11:18:25.796Z");
    assert.match(f.Age, /^\d+ years ago$/);
    assert.ok(f["Local time"].length > 0);
    assert.equal(f.Worker, "1");
    assert.equal(f.Process, "0");
    assert.equal(f.Sequence, "7");
    assert.equal(f.Hex, "0271065ac1020007");
    assert.equal(f.Base32, "04W86BB0G4007");
    assert.match(
      await decoded.locator(".summary").textContent(),
      /^As a Discord ID: made 2016-04-30T11:18:25\.796Z \(\d+ years ago\) by worker 1, process 0, sequence 7 \(read as decimal\)$/,
    );
    // The drawing: 64 cells holding the ID's bits, coloured by field, and a caption in words.
    const bits = await decoded.locator(".bit").allTextContents();
    assert.equal(bits.join(""), BigInt(DISCORD_ID).toString(2).padStart(64, "0"));
    const classes = await decoded
      .locator(".bit")
      .evaluateAll((els) => els.map((e) => e.className.replace("bit f-", "")));
    assert.deepEqual(classes, [
      ...Array(42).fill("time"),
      ...Array(5).fill("datacenter"),
      ...Array(5).fill("worker"),
      ...Array(12).fill("sequence"),
    ]);
    assert.equal(
      await decoded.locator("figcaption").textContent(),
      "Bits 63 to 0: time 42 bits = 41944705796, worker 5 bits = 1, process 5 bits = 0, sequence 12 bits = 7.",
    );

    // The same ID in every form people paste; a bad one gets a message, not an exception.
    for (const form of [
      "0x0271065ac1020007",
      "0271065ac1020007",
      "04W86BB0G4007",
      "04w86bb0g4007",
      "04W8-6BB0-G400-7",
      "<@175928847299117063>",
      "<@!175928847299117063>",
      " 175_928_847_299_117_063 ",
    ]) {
      await page.getByTestId("decode-input").fill(form);
      assert.equal((await decodedFields(page)).Decimal, DISCORD_ID, form);
    }
    await page.getByTestId("decode-input").fill("04W86BB0G40U7");
    assert.match(
      await decoded.textContent(),
      /invalid base32 id "04W86BB0G40U7": invalid character 'U' at position 11/,
    );
    // A signed 64-bit column's negative number: the same 64 bits.
    await page.getByTestId("decode-input").fill("-5");
    const neg = await decodedFields(page);
    assert.equal(neg.Decimal, "18446744073709551611");
    assert.equal(neg["Signed 64-bit"], "-5");
    assert.match(
      await decoded.locator(".summary").textContent(),
      /a negative number: read as the signed 64-bit column/,
    );
    assert.match(
      await decoded.locator(".note").textContent(),
      /ahead of this device's clock: the ID was probably made with another layout/,
    );
    // A MongoDB ObjectId.
    await page.getByTestId("decode-input").fill("507f1f77bcf86cd799439011");
    const oid = await decodedFields(page);
    assert.equal(oid.Kind, "MongoDB ObjectId");
    assert.equal(oid["Time (UTC)"], "2012-10-17T21:13:27.000Z");
    assert.equal(oid.Counter, String(0x439011));
  },
);

pageTest(
  "not sure of the layout: the plausible layouts ranked, no single date stated; a Discord mention puts Discord first; choosing one decodes with it",
  async (page) => {
    await page.getByTestId("decode-input").fill(DISCORD_ID);
    const choices = page.locator(".choices button");
    await choices.first().waitFor();
    const texts = await choices.allTextContents();
    assert.equal(texts.length, 7, "the Discord ID gives a time in the past under every preset");
    assert.ok(
      texts.some(
        (t) =>
          t.startsWith("Discord 2016-04-30T11:18:25.796Z (") &&
          t.endsWith("years ago), worker 1, process 0, sequence 7"),
      ),
      texts.join(" | "),
    );
    assert.ok(
      texts.some((t) => /^Twitter 2012-03-03T13:01:20\.453Z/.test(t)),
      texts.join(" | "),
    );
    assert.equal(
      await page.getByTestId("decoded").locator("dl").count(),
      0,
      "no single answer while several layouts fit",
    );
    await page.getByTestId("decode-input").fill(`<@${DISCORD_ID}>`);
    assert.match(await choices.first().textContent(), /^Discord 2016-04-30T11:18:25\.796Z/);
    await choices.first().click();
    assert.equal(await page.getByTestId("decode-layout").inputValue(), "discord");
    assert.equal((await decodedFields(page))["Time (UTC)"], "2016-04-30T11:18:25.796Z");
    // Making IDs with another layout leaves the decoder as it is.
    await page.getByTestId("layout").selectOption("twitter");
    await generate(page, 3);
    assert.equal((await decodedFields(page))["Time (UTC)"], "2016-04-30T11:18:25.796Z");
    assert.equal((await decodedFields(page)).Layout, "Discord");
  },
);

pageTest(
  "a time gives the smallest and largest ID made in its tick; errors say dates, not milliseconds",
  async (page) => {
    await page.getByTestId("decode-layout").selectOption("discord");
    await page.locator("#range summary").click();
    await page.getByTestId("range-time").fill("2016-04-30T11:18:25.796Z");
    const out = await page.getByTestId("range-out").textContent();
    const [lo, hi] = [...out.matchAll(/\d{15,}/g)].map((m) => BigInt(m[0]));
    assert.ok(lo <= BigInt(DISCORD_ID) && BigInt(DISCORD_ID) <= hi, out);
    assert.equal(hi - lo, (1n << 22n) - 1n, "one millisecond's IDs of every node");
    await page.getByTestId("range-time").fill("2001-01-01T00:00:00Z"); // before Discord's epoch
    const error = await page.getByTestId("range-out").textContent();
    assert.doesNotMatch(error, /\d{11,} ms/, error);
    assert.match(error, /2001-01-01T00:00:00Z/);
  },
);

pageTest(
  "a layout that ran out (Baidu, 2024) cannot make IDs and says when it ran out; the page says when it works offline",
  async (page) => {
    await page.getByTestId("layout").selectOption("baidu");
    assert.equal(await page.getByTestId("generate").isDisabled(), true);
    assert.match(
      await page.textContent("#status"),
      /^This layout ran out of time on 2024-\d\d-\d\d: it can no longer make IDs/,
    );
    await page.getByTestId("layout").selectOption("default");
    assert.equal(await page.getByTestId("generate").isDisabled(), false);
    assert.equal(await page.textContent("#status"), "");
    await page.waitForSelector("html[data-offline=ready]", { timeout: 30_000 });
    assert.equal(
      await page.textContent("#offline"),
      "Ready to work offline: this page and its files are kept in this browser.",
    );
  },
);

pageTest(
  "the JavaScript-safe (53-bit) layout makes IDs a Number holds; under it a larger number is refused, naming 2^53 - 1 and the lost precision",
  async (page) => {
    await page.getByTestId("layout").selectOption("js53");
    assert.match(
      await page.textContent("#layout-info"),
      /38-bit time \(10 ms ticks since 2024-01-01\) · 7-bit node · 8-bit sequence · 53 bits · lasts until 2111-02-08/,
    );
    const ids = await generate(page, 600); // more than a tick's 256
    assertIncreasing(ids, "js53 IDs");
    const node = decode(ids[0], "js53").node;
    for (const id of ids) {
      assert.ok(id <= BigInt(Number.MAX_SAFE_INTEGER), `${id} is above 2^53 - 1`);
      assert.equal(decode(id, "js53").node, node);
    }
    await page.getByTestId("decode-layout").selectOption("js53");
    const decoded = page.getByTestId("decoded");
    await page.getByTestId("decode-input").fill(String(Number.MAX_SAFE_INTEGER));
    await decoded.locator("dl").waitFor();
    const f = await decodedFields(page);
    assert.deepEqual([f.Layout, f.Node, f.Sequence], ["JavaScript-safe (53-bit)", "127", "255"]);
    for (const text of ["9007199254740992", "9007199254740993", "18446744073709551615"]) {
      await page.getByTestId("decode-input").fill(text);
      await decoded.locator("p.error").waitFor();
      assert.equal(
        await decoded.textContent(),
        `${text} is above 2^53 - 1 (9007199254740991), the largest ID a JavaScript Number holds exactly and the largest the JavaScript-safe (53-bit) layout makes: it was made with another layout, or it lost precision as a Number on its way here.`,
      );
    }
    // Compared with every layout, the same text is a 64-bit ID, read exactly.
    await page.getByTestId("decode-layout").selectOption("twitter");
    await page.getByTestId("decode-input").fill("9007199254740993");
    await decoded.locator("dl").waitFor();
    assert.equal((await decodedFields(page)).Hex, 9007199254740993n.toString(16).padStart(16, "0"));
  },
);

pageTest(
  "each row: the decimal and the base32 as separate, selectable text, read with a pause between; nothing clipped at 320 px",
  async (page) => {
    await page.setViewportSize({ width: 320, height: 640 });
    await generate(page, 20);
    const row = await page.$eval('[data-testid="ids"] > li', (li) => ({
      text: li.textContent,
      select: getComputedStyle(li.querySelector(".b32")).userSelect,
    }));
    assert.match(row.text, /^\d+, base32 [0-9A-Z]{13}$/);
    assert.notEqual(row.select, "none");
    const clipped = await page.$$eval('[data-testid="ids"] .b32', (els) => {
      const box = document.getElementById("ids-box").getBoundingClientRect();
      return els.filter((e) => e.getBoundingClientRect().right > box.right + 0.5).length;
    });
    assert.equal(clipped, 0);
    // Messages in the page's words, not the API's.
    await setField(page.getByTestId("node"), "5000");
    await page.getByTestId("generate").click();
    await page.waitForFunction(() => document.getElementById("status").classList.contains("error"));
    // (Storage names such as "page:default" are the API's; "this page: opening" is prose.)
    const leaked = /www:\S|page:\S|leave node out|navigator\.locks|IndexedDB/;
    const body = await page.textContent("body");
    assert.doesNotMatch(body, leaked, body.match(new RegExp(`.{0,60}(${leaked.source}).{0,60}`, "s"))?.[0]);
  },
);

pageTest(
  "the service worker answers only for the page's own files: another page of the site stays reachable, and it installs files checked with the server, not from the HTTP cache",
  async (page, context) => {
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    const other = await context.newPage();
    await other.goto(`${started.server.url}plain/`);
    assert.equal(await other.title(), "snowdrift/browser without the page");
    await other.close();
    if (ENGINE === "chromium") {
      // Playwright reports a service worker's own requests in Chromium only.
      assert.ok(installRequests.length >= 4, `${installRequests.length} install requests seen`);
      for (const r of installRequests) {
        const headers = await r.headers;
        // Validated with the server (a 304 when unchanged), never taken from the HTTP cache as it is.
        assert.equal(
          headers["cache-control"],
          "max-age=0",
          `${r.url} is checked with the server: ${JSON.stringify(headers)}`,
        );
      }
    }
  },
  (context) => {
    installRequests.length = 0;
    context.on("request", (r) => {
      // The worker's own requests, but for its script, which the browser fetches.
      if (r.serviceWorker() && !r.url().endsWith("/sw.js"))
        installRequests.push({ url: r.url(), headers: r.allHeaders() });
    });
  },
);
const installRequests = [];

test(
  "offline (context.setOffline(true), and the server stopped): the page reloads and still makes and decodes IDs",
  T,
  async () => {
    const own = await startServer(); // this test stops its server
    const context = await started.browser.newContext();
    try {
      const page = await openPage(context, own.url);
      await page.evaluate(() => navigator.serviceWorker.ready);
      const a = await generate(page, 100);
      await context.setOffline(true);
      await own.stop();
      await reload(page);
      assert.ok(
        await page.evaluate(() => navigator.serviceWorker.controller !== null),
        "the service worker served the page",
      );
      const b = await generate(page, 100);
      assert.ok(min(b) > max(a), "offline IDs are above the earlier ones");
      await page.getByTestId("decode-layout").selectOption("discord");
      await page.getByTestId("decode-input").fill(DISCORD_ID);
      assert.equal((await decodedFields(page))["Time (UTC)"], "2016-04-30T11:18:25.796Z");
      // The only errors allowed: the browser's own reports of the network being gone.
      const other = page.errors.filter(
        (e) => !/ERR_INTERNET_DISCONNECTED|ERR_CONNECTION_REFUSED|Failed to fetch|fetching the script/.test(e),
      );
      assert.deepEqual(other, []);
    } finally {
      await context.close();
      await own.stop();
    }
  },
);

pageTest(
  "100,000 IDs in one click: the list holds only the rows in view, scrolls to any, and copying gives all",
  async (page) => {
    const first = await generate(page, 100_000);
    assert.ok(first.length < 200, `${first.length} elements for 100,000 IDs`);
    assertIncreasing(first, "rows in view");
    await page.locator("#ids-box").evaluate((box) => {
      box.scrollTop = box.scrollHeight;
    });
    await page.waitForFunction(
      () => document.querySelector('[data-testid="ids"] > li:last-child')?.getAttribute("aria-posinset") === "100000",
    );
    const end = await listed(page);
    assertIncreasing(end, "rows at the end");
    await page.locator("#copy-dec").click();
    await page.waitForFunction(() => /^Copied/.test(document.getElementById("status").textContent));
    // Firefox has no clipboard-read permission to grant a test: the copied text is read in Chromium.
    if (ENGINE === "firefox") return;
    const copied = (await page.evaluate(() => navigator.clipboard.readText())).split("\n").map(BigInt);
    assert.equal(copied.length, 100_000);
    assertIncreasing(copied, "copied IDs");
    assert.equal(copied[0], first[0]);
    assert.equal(copied[99_999], end[end.length - 1]);
  },
  (context) =>
    ENGINE === "chromium" &&
    context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: started.server.url }),
);

pageTest("a custom layout generates and decodes; a bad one shows the core's error", async (page) => {
  await page.getByTestId("layout").selectOption("custom");
  for (const [id, v] of [
    ["c-time", "40"],
    ["c-node", "8"],
    ["c-dc", "3"],
    ["c-seq", "15"],
    ["c-unit", "10"],
    ["c-epoch", "2020-01-01T00:00:00Z"],
  ]) {
    await setField(page.locator(`#${id}`), v);
  }
  assert.match(
    await page.textContent("#layout-info"),
    /^40-bit time \(10 ms ticks since 2020-01-01\) · 3\+5-bit datacenter\+worker · 15-bit sequence · 63 bits/,
  );
  await setField(page.getByTestId("node"), "200");
  const ids = await generate(page, 10);
  assertIncreasing(ids, "custom layout");
  await page.locator("#decode-last").click();
  const f = await decodedFields(page);
  assert.equal(f.Node, "200");
  assert.equal(f.Datacenter, "6");
  assert.equal(f.Worker, "8");
  assert.match(
    await page.locator("figcaption").textContent(),
    /^Bits 63 to 0: unused 1 bit, time 40 bits = \d+, datacenter 3 bits = 6, worker 5 bits = 8, sequence 15 bits = \d+\.$/,
  );
  await setField(page.locator("#c-time"), "45");
  assert.equal(await page.textContent("#custom-error"), "invalid layout: the fields take 68 bits (max 64)");
});

pageTest("every control has a label, and the keyboard alone generates IDs", async (page) => {
  const unlabelled = await page.$$eval("input, select, button", (els) =>
    els.filter((e) => !(e.labels?.length || e.getAttribute("aria-label") || e.textContent.trim())).map((e) => e.id),
  );
  assert.deepEqual(unlabelled, []);
  await page.getByTestId("node").focus();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), "count");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("5");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="ids"] > li').length === 5);
  assert.match(await page.textContent("#status"), /^5 IDs from node \d+/);
  // A node id out of range: the core's message, where the status is announced.
  await setField(page.getByTestId("node"), "5000");
  await page.getByTestId("generate").click();
  await page.waitForFunction(() => document.getElementById("status").classList.contains("error"));
  assert.equal(await page.textContent("#status"), "node 5000 is outside the allowed range 0..=1023");
});

/** WCAG contrast of text against the first opaque background behind it, in the page. */
function contrasts(page, selectors) {
  return page.evaluate((list) => {
    const rgb = (c) => c.match(/[\d.]+/g).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (rgb(c)[3] !== 0) return rgb(c);
      }
      return [255, 255, 255];
    };
    return list.map(([selector, pseudo]) => {
      const el = document.querySelector(selector);
      if (!el) return { selector, missing: true };
      const fg = rgb(getComputedStyle(el, pseudo).color);
      const [a, b] = [lum(fg), lum(background(el))].sort((x, y) => y - x);
      return { selector: selector + (pseudo ?? ""), ratio: (a + 0.05) / (b + 0.05) };
    });
  }, selectors);
}

pageTest("text contrast is at least 4.5:1 in the light and the dark colour scheme", async (page) => {
  await generate(page, 3);
  await page.getByTestId("decode-layout").selectOption("twitter");
  await page.getByTestId("decode-input").fill("1212161880508416000");
  const selectors = [
    ["h1"],
    ["header p"],
    ["#offline"],
    ["label"],
    [".info"],
    ["#status"],
    ["#generate"],
    [".toolbar button"],
    ['[data-testid="ids"] .dec'],
    ['[data-testid="ids"] .b32'],
    ["dt"],
    ["dd"],
    ["figcaption"],
    ["footer a"],
    ["summary"],
    [".bit.f-time"],
    [".bit.f-datacenter"],
    [".bit.f-worker"],
    [".bit.f-sequence"],
    [".bit.f-unused"],
    [".label.f-time"],
    [".bitidx span"],
  ];
  const choices = [[".choices button"], [".choices strong"], [".suggest p"]];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.getByTestId("decode-layout").selectOption("twitter");
    const low = (await contrasts(page, selectors)).filter((c) => c.missing || c.ratio < 4.5);
    assert.deepEqual(low, [], `${scheme}: ${JSON.stringify(low)}`);
    await page.getByTestId("decode-layout").selectOption("auto");
    const lowChoices = (await contrasts(page, choices)).filter((c) => c.missing || c.ratio < 4.5);
    assert.deepEqual(lowChoices, [], `${scheme}: ${JSON.stringify(lowChoices)}`);
  }
});

pageTest("at phone and desktop width nothing overflows sideways; screenshots saved for a look", async (page) => {
  await page.getByTestId("layout").selectOption("discord");
  await generate(page, 10);
  await page.getByTestId("decode-layout").selectOption("discord");
  await page.getByTestId("decode-input").fill(DISCORD_ID);
  await page.evaluate(() => document.activeElement.blur());
  for (const [name, width, height] of [
    ["desktop", 1280, 900],
    ["phone", 390, 844],
    ["narrow", 320, 640],
  ]) {
    await page.setViewportSize({ width, height });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name} (${width}px): the page is ${overflow}px wider than the window`);
    const file = join(SCREENSHOTS, ENGINE === "chromium" ? `${name}.png` : `${name}-${ENGINE}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`screenshot: ${file}`);
  }
});

test(
  "a typed node id: the page warns where it is typed that lost site data can repeat IDs, and that is what happens with the clock behind",
  T,
  async () => {
    /** In a fresh context (a browser with no site data for the page), node 7 typed: `n`
     * IDs made, with `setup(context)` first. Returns { ids, warned, described }. */
    const typed = async (n, setup) => {
      const context = await started.browser.newContext();
      try {
        if (setup) await setup(context);
        const page = await openPage(context, started.server.url);
        const warning = page.getByTestId("node-warning");
        const before = await warning.isVisible();
        await setField(page.getByTestId("node"), "7");
        const warned = before === false && (await warning.isVisible()) ? await warning.textContent() : "";
        const described = (await page.getByTestId("node").getAttribute("aria-describedby")).split(" ");
        const ids = await generate(page, n);
        noErrors(page);
        return { ids, warned, described };
      } finally {
        await context.close();
      }
    };
    const first = await typed(1000);
    assert.match(first.warned, /site data is cleared.*IDs made with it before can come again/s);
    assert.ok(first.described.includes("node-warning"), "the warning is read with the field");
    // Site data cleared, the clock standing at the time of the first of those IDs, node 7
    // typed again.
    const firstMs = decode(first.ids[0]).timeMs; // the page's layout is the default one
    const again = await typed(1000, (context) =>
      context.addInitScript((ms) => {
        Date.now = () => ms;
      }, firstMs),
    );
    const seen = new Set(first.ids);
    const repeated = again.ids.filter((id) => seen.has(id)).length;
    assert.ok(
      repeated > 0,
      "without its site data the browser cannot know what node 7 made: IDs come again, as the warning says",
    );
  },
);
