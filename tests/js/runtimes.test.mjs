// Runs the smoke test (smoke.mjs) in every runtime the package supports, each in its own
// process with a time limit, and checks each one's report.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = (name) => `${here}node_modules/.bin/${name}`;

function run(runtime, command, args) {
  const r = spawnSync(command, args, {
    cwd: here,
    encoding: "utf8",
    timeout: 300_000,
    killSignal: "SIGKILL",
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  });
  assert.equal(r.error, undefined, `${runtime}: ${r.error}`);
  assert.equal(r.status, 0, `${runtime} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout.trim().split("\n").pop());
  assert.equal(report.runtime, runtime);
  assert.equal(report.count, 100_000);
  assert.ok(BigInt(report.last) > BigInt(report.first));
}

test('Node ESM: import from "snowdrift"', () => run("node-esm", process.execPath, ["smoke-esm.mjs"]));
test('Node CommonJS: require("snowdrift")', () => run("node-cjs", process.execPath, ["smoke-cjs.cjs"]));
test("Deno", () => run("deno", bin("deno"), ["run", "--allow-read", "smoke-esm.mjs"]));
test("Bun", () => run("bun", bin("bun"), ["smoke-esm.mjs"]));
test("workerd via Miniflare", () => run("workerd", process.execPath, ["smoke-workerd.mjs"]));
test("Chromium via playwright-core", () => run("chromium", process.execPath, ["smoke-browser.mjs"]));
