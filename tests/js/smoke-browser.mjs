// Headless Chromium through playwright-core: a page served from 127.0.0.1 imports
// "snowdrift" through an import map pointing at the package's "browser" entry, runs the
// binding checks (binding.mjs, with the shared vectors) and the smoke test.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { launchChromium, pageResult } from "../chromium.mjs";

const root = new URL("./", import.meta.url);
const pkgUrl = new URL("./node_modules/snowdrift/", root);
const pkg = JSON.parse(readFileSync(new URL("package.json", pkgUrl)));
const entry = pkg.exports["."].browser.replace(/^\.\//, "");
const page = `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "snowdrift": "/pkg/${entry}" } }</script>
<script type="module">
  import * as snowdrift from "snowdrift";
  import { smoke } from "/smoke.mjs";
  import { binding } from "/binding.mjs";
  try {
    binding(snowdrift, await (await fetch("/vectors/ids.json")).json());
    window.result = smoke(snowdrift, "chromium");
  }
  catch (e) { window.result = { error: String(e && e.stack || e) }; }
</script>`;
const types = {
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
};

const server = createServer(async (req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  try {
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html" }).end(page);
      return;
    }
    const file = path.startsWith("/pkg/")
      ? new URL(path.slice(5), pkgUrl)
      : path === "/smoke.mjs" || path === "/binding.mjs"
        ? new URL(path.slice(1), root)
        : path === "/vectors/ids.json"
          ? new URL("../vectors/ids.json", root)
          : null;
    if (!file || path.includes("..")) throw new Error("not found");
    const ext = path.slice(path.lastIndexOf("."));
    res.writeHead(200, { "content-type": types[ext] || "application/octet-stream" }).end(await readFile(file));
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const { port } = server.address();

let browser;
try {
  browser = await launchChromium(chromium);
  const { result } = await pageResult(browser, `http://127.0.0.1:${port}/`, { timeout: 120_000 });
  if (result.error) throw new Error(result.error);
  console.log(JSON.stringify(result));
} finally {
  await browser?.close();
  server.close();
}
