// A smoke of snowdrift/browser and of the page in WebKit (WebKitGTK's MiniBrowser, driven
// by WebKitWebDriver over classic WebDriver with selenium-webdriver, under a virtual X
// display). WebKit's driver has no init scripts, offline switch or clock control, so the
// smoke covers what needs none: IDs unique and increasing, above them after a reload, a
// tab and a dedicated worker never sharing an ID, and the page making and decoding IDs.
//
//   node webkit.mjs   (`cargo xtask test www` runs it after the Chromium and Firefox suites)
//
// Xvfb and the driver are started here, on 127.0.0.1 and a free port, and stopped by the
// process ids started, whatever happens; every wait is bounded.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import { assertIncreasing, assertNoDuplicates, startServer } from "./harness.mjs";

const require = createRequire(new URL("../js/", import.meta.url));
const { Builder, By, until } = require("selenium-webdriver");

const MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
const WAIT = 30_000;
const children = [];
let server;
let driver;

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer().once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Spawns `cmd`; resolves with the child once `ready(stdout so far)` is true, within `ms`. */
function start(cmd, args, env, ready, ms = WAIT) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} not ready within ${ms} ms: ${out}`)), ms);
    const check = (d) => {
      out += d;
      if (ready(out)) {
        clearTimeout(timer);
        resolve({ child, out });
      }
    };
    child.stdout.on("data", check);
    child.stderr.on("data", (d) => (out += d));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}): ${out}`));
    });
  });
}

/** Resolves once something listens on 127.0.0.1:port, within `ms`. */
async function listening(port, ms = WAIT) {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => s.end(() => resolve(true))).once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listens on port ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `p`, or a rejection naming `what` after `ms` (a browser that cannot start never answers). */
function within(p, ms, what) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

before(async () => {
  server = await startServer();
  const xvfb = await start("Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x900x24"], {}, (o) =>
    /^\d+\n/.test(o),
  );
  const display = `:${xvfb.out.trim()}`;
  const port = await freePort();
  start("WebKitWebDriver", ["--host=127.0.0.1", `--port=${port}`], { DISPLAY: display }, () => false, 3_600_000).catch(
    () => {},
  );
  await listening(port);
  driver = await within(
    new Builder()
      .usingServer(`http://127.0.0.1:${port}`)
      .withCapabilities({
        browserName: "MiniBrowser",
        "webkitgtk:browserOptions": {
          binary: MINIBROWSER,
          args: ["--automation", "--features=+StorageAPI,+StorageAPIEstimate"],
        },
      })
      .build(),
    WAIT,
    "WebKitWebDriver starting MiniBrowser",
  );
  await driver.manage().setTimeouts({ script: WAIT, pageLoad: WAIT });
});

after(async () => {
  await driver?.quit().catch(() => {});
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  await server?.stop();
});

async function open(path) {
  await driver.get(`${server.url}${path}`);
  await driver.wait(until.elementLocated(By.css("html[data-ready]")), WAIT);
}

/** Runs `body` (a function's source taking `args`) in the page; it may return a promise. */
const run = (body, ...args) =>
  driver
    .executeAsyncScript(
      `const done = arguments[arguments.length - 1];
   Promise.resolve().then(() => (${body})(...Array.from(arguments).slice(0, -1)))
     .then((v) => done({ ok: v }), (e) => done({ error: String(e && e.message || e) }));`,
      ...args,
    )
    .then((r) => {
      if (r.error) throw new Error(r.error);
      return r.ok;
    });

test("WebKit: snowdrift/browser makes unique, increasing IDs, above them after a reload, and a tab and a worker never share one", async () => {
  await open("plain/");
  const first = await run(
    String(async () => {
      window.gen = await window.sd.openSnowdrift();
      return {
        node: window.gen.node,
        storage: window.gen.storage,
        ids: Array.from(window.gen.nextBatch(1000), String),
      };
    }),
  );
  assert.equal(first.storage, "indexeddb");
  const a = first.ids.map(BigInt);
  assertIncreasing(a, "first 1,000");
  await open("plain/");
  const again = await run(
    String(async () => {
      window.gen = await window.sd.openSnowdrift();
      return { node: window.gen.node, ids: Array.from(window.gen.nextBatch(1000), String) };
    }),
  );
  assert.equal(again.node, first.node, "the node id is kept");
  assert.ok(BigInt(again.ids[0]) > a[a.length - 1], "after the reload, above the IDs before");
  const both = await run(
    String(async () => {
      const { worker, ask } = await window.startWorker();
      const opened = await ask({ open: {} });
      const ids = Array.from(window.gen.nextBatch(2000), String);
      const w = await ask({ batch: 2000 });
      worker.terminate();
      if (w.error) throw new Error(w.error);
      return { node: opened.node, ids: [...ids, ...w.ids] };
    }),
  );
  assert.notEqual(both.node, first.node, "the worker holds its own node id");
  assertNoDuplicates(both.ids.map(BigInt), "tab and worker");
});

test("WebKit: the page makes IDs and decodes Discord's documentation ID as a Discord ID", async () => {
  await open("");
  const count = await driver.findElement(By.css('[data-testid="count"]'));
  await count.clear();
  await count.sendKeys("25");
  await driver.findElement(By.css('[data-testid="generate"]')).click();
  await driver.wait(
    async () => (await driver.findElement(By.css('[data-testid="ids"]')).getAttribute("data-count")) === "25",
    WAIT,
  );
  const ids = (
    await run(String(() => Array.from(document.querySelectorAll('[data-testid="ids"] .dec'), (e) => e.textContent)))
  ).map(BigInt);
  assert.equal(ids.length, 25);
  assertIncreasing(ids, "the page's IDs");
  await run(
    String(() => {
      const select = document.querySelector('[data-testid="decode-layout"]');
      select.value = "discord";
      select.dispatchEvent(new Event("change"));
    }),
  );
  await driver.findElement(By.css('[data-testid="decode-input"]')).sendKeys("175928847299117063");
  await driver.wait(until.elementLocated(By.css('[data-testid="decoded"] dl')), WAIT);
  const summary = await driver.findElement(By.css('[data-testid="decoded"] .summary')).getText();
  assert.match(
    summary,
    /^As a Discord ID: made 2016-04-30T11:18:25\.796Z \(\d+ years ago\) by worker 1, process 0, sequence 7/,
  );
});
