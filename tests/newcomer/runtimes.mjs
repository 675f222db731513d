// One README block in a runtime other than Node, for `cargo xtask test newcomer`
// (xtask/src/newcomer.rs), run from the newcomer's npm project (the current directory,
// with the packed package in its node_modules):
//
//   node runtimes.mjs workerd BLOCK.mjs    a Worker module, bundled as wrangler bundles it
//                                          (esbuild, conditions workerd/worker/browser, the
//                                          .wasm as a compiled module), run in Miniflare,
//                                          then fetched once: a 2xx answer passes
//   node runtimes.mjs chromium BLOCK.mjs   a browser module in headless Chromium, on a page
//                                          served from 127.0.0.1 (xtask/serve.mjs) that
//                                          maps the package's names to its "browser"
//                                          entries with an import map (as wasm/README.md
//                                          tells users without a bundler); passes once the
//                                          module has run
//
// The tools come from the repository: Miniflare and playwright-core from tests/js/node_modules,
// esbuild from the build tools in xtask/js/node_modules.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { serve } from "../../xtask/serve.mjs";
import { launchChromium, pageResult } from "../chromium.mjs";

const [runtime, block] = process.argv.slice(2);
const testTools = createRequire(new URL("../js/package.json", import.meta.url));
const buildTools = createRequire(new URL("../../xtask/js/package.json", import.meta.url));
// A CommonJS tool's exports, whether Node found them by name or only as the default.
const load = async (name) => {
  const tools = name === "esbuild" ? buildTools : testTools;
  const module = await import(pathToFileURL(tools.resolve(name)).href);
  return { ...module.default, ...module };
};
const here = process.cwd();
const pkgDir = join(here, "node_modules/snowdrift");

// What the app's server answers where a browser block asks it for a node id, as the
// blocks' comments describe it (served as files of the project's directory).
const APP_ROUTES = {
  "/api/node": { node: 17, resumeAfter: "383822283821842432" },
  "/node-id": { node: 17, resumeAfter: "383822283821842432" },
};

async function workerd() {
  const out = join(here, `${block}.workerd`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const esbuild = await load("esbuild");
  await esbuild.build({
    entryPoints: [block],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["*.wasm", "cloudflare:workers"],
    outfile: join(out, "worker.mjs"),
    logLevel: "warning",
  });
  copyFileSync(join(pkgDir, "snowdrift.wasm"), join(out, "snowdrift.wasm"));
  const { Miniflare } = await load("miniflare");
  // A block that exports the lease store gets it bound as LEASES, as the README's
  // wrangler.toml binds it (SQLite storage, kept in memory here).
  const leases = /export\s*\{\s*SnowdriftLeases\s*\}/.test(readFileSync(block, "utf8"))
    ? { durableObjects: { LEASES: { className: "SnowdriftLeases", useSQLite: true } } }
    : {};
  const mf = new Miniflare({
    ...leases,
    modules: true,
    scriptPath: join(out, "worker.mjs"),
    modulesRoot: out,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-04-01",
    // The deployment's variables a Worker block reads, as its comments describe them.
    bindings: { NODE_ID: "12" },
    host: "127.0.0.1",
    cf: false,
  });
  try {
    const res = await mf.dispatchFetch("http://127.0.0.1/");
    const body = await res.text();
    console.log(`GET / -> ${res.status} ${body}`);
    if (!res.ok) process.exitCode = 1;
  } finally {
    await mf.dispose();
  }
}

/** The package's subpath exports as an import map, each to its "browser" (else "import") file. */
function importMap() {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const pick = (e) => (typeof e === "string" || e == null ? e : pick(e.browser ?? e.import ?? e.default));
  const imports = {};
  for (const [subpath, conditions] of Object.entries(pkg.exports)) {
    const file = pick(conditions);
    if (file?.endsWith(".js") || file?.endsWith(".mjs")) {
      imports[`snowdrift${subpath.slice(1)}`] = `/node_modules/snowdrift/${file.replace(/^\.\//, "")}`;
    }
  }
  return { imports };
}

async function chromium() {
  // The project's directory is the app's static site: the page, the block, node_modules,
  // and what the app's server answers.
  const page = `${block}.html`;
  writeFileSync(
    join(here, page),
    `<!doctype html><meta charset="utf-8">
<script type="importmap">${JSON.stringify(importMap())}</script>
<script type="module">
  import(${JSON.stringify(`/${block}`)}).then(
    () => { window.result = "ok"; },
    (e) => { window.result = String(e && e.stack || e); });
</script>`,
  );
  for (const [route, answer] of Object.entries(APP_ROUTES)) {
    mkdirSync(dirname(join(here, route)), { recursive: true });
    writeFileSync(join(here, route), JSON.stringify(answer));
  }
  const { server, url } = await serve({ "/": here });
  const { chromium } = await load("playwright-core");
  let browser;
  try {
    browser = await launchChromium(chromium);
    const { result, errors } = await pageResult(browser, `${url}${page}`, { timeout: 45_000, log: console.log });
    if (result !== "ok" || errors.length) {
      console.error([result === "ok" ? "" : result, ...errors].join("\n"));
      process.exitCode = 1;
    }
  } finally {
    await browser?.close();
    server.close();
  }
}

await { workerd, chromium }[runtime]();
