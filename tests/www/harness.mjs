// Shared by the www suites: a static server on 127.0.0.1 for the built page (www/dist, at
// /), the npm package as built (wasm/pkg, at /pkg/) and the plain test page (at /plain/),
// and headless Chromium or Firefox through playwright-core (installed in tests/js/node_modules).
import { after, before } from "node:test";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import assert from "node:assert/strict";
import { serve } from "../../xtask/serve.mjs";
import { launchChromium } from "../chromium.mjs";

const require = createRequire(new URL("../js/", import.meta.url));
const { chromium } = require("playwright-core");
// playwright-core 1.65 cannot drive Firefox ESR 153 (newContext fails); 1.64 can.
const { firefox } = require("playwright-core-firefox");

/** The browser engine of this run: SNOWDRIFT_BROWSER=chromium (default) or firefox. */
export const ENGINE = process.env.SNOWDRIFT_BROWSER || "chromium";
if (!["chromium", "firefox"].includes(ENGINE)) throw new Error(`SNOWDRIFT_BROWSER=${ENGINE}: not chromium or firefox`);
const path = (rel) => fileURLToPath(new URL(rel, import.meta.url));

export const DIST = path("../../www/dist/");
export const SCREENSHOTS = path("../../target/www-screenshots/");
mkdirSync(SCREENSHOTS, { recursive: true });

/** Starts the server; returns { url, stop, sent } (sent: responses and bytes so far). */
export async function startServer() {
  const { server, url, sent } = await serve({ "/": DIST, "/pkg/": path("../../wasm/pkg/"), "/plain/": path("plain/") });
  const stop = () =>
    new Promise((ok) => {
      server.closeAllConnections();
      server.close(ok);
    });
  return { url, stop, sent };
}

/**
 * The server and the browser of a test file: started before its first test, stopped after
 * its last. Returns { server, browser }, filled in once started.
 */
export function serverAndBrowser() {
  const started = {};
  before(async () => {
    started.server = await startServer();
    started.browser = await launch();
  });
  after(async () => {
    await started.browser?.close();
    await started.server?.stop();
  });
  return started;
}

export function launch() {
  if (ENGINE === "firefox") {
    return firefox.launch({
      channel: "moz-firefox",
      executablePath: process.env.FIREFOX || "/usr/bin/firefox-esr",
      // Otherwise navigator.storage.persist() waits for a user who never answers.
      firefoxUserPrefs: { "dom.storageManager.prompt.testing": true, "dom.storageManager.prompt.testing.allow": true },
      timeout: 60_000,
    });
  }
  return launchChromium(chromium);
}

/** A page that fails the test on any uncaught error or console error. */
export async function openPage(context, url) {
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") page.errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector("html[data-ready]", { timeout: 30_000 });
  return page;
}

export async function reload(page) {
  await page.reload();
  await page.waitForSelector("html[data-ready]", { timeout: 30_000 });
}

/** An init script making Date.now and performance.timeOrigin read one hour earlier. */
export function clockOneHourBack(context) {
  return context.addInitScript(() => {
    const HOUR = 3_600_000;
    const now = Date.now;
    Date.now = () => now.call(Date) - HOUR;
    const origin = performance.timeOrigin;
    Object.defineProperty(performance, "timeOrigin", { get: () => origin - HOUR });
  });
}

/** Asserts the IDs are strictly increasing (so also unique). */
export function assertIncreasing(ids, what) {
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i] > ids[i - 1], `${what}: ID ${i} (${ids[i]}) is not above ID ${i - 1} (${ids[i - 1]})`);
  }
}

/** `gen.nextNumber()` in the page between two `next()`, on a layout of `bits` (> 53) bits:
 * a RangeError naming the width, and no ID issued by it (in the same tick the second
 * `next()` is the next sequence number, else a new tick's first: none skipped). */
export async function assertNumberRefused(page, bits) {
  const refused = await page.evaluate(() => {
    const before = gen.next();
    let message;
    try {
      gen.nextNumber();
    } catch (e) {
      message = `${e.name}: ${e.message}`;
    }
    const after = gen.next();
    return { message, unskipped: after === before + 1n || gen.decode(after).sequence === 0 };
  });
  assert.match(
    refused.message,
    new RegExp(`^RangeError: nextNumber\\(\\) needs a layout of at most 53 bits .*this layout takes ${bits} bits`),
  );
  assert.ok(refused.unskipped, "the refused call issued no ID");
}

export const max = (ids) => ids.reduce((a, b) => (b > a ? b : a));
export const min = (ids) => ids.reduce((a, b) => (b < a ? b : a));

export function assertNoDuplicates(ids, what) {
  const seen = new Set();
  for (const id of ids) {
    assert.ok(!seen.has(id), `${what}: ${id} was issued twice`);
    seen.add(id);
  }
}
