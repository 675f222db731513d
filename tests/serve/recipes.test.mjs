// The recipes of docs/serve/ run as far as this machine allows (no container runtime, no
// systemd as init): the Dockerfile's ENTRYPOINT and CMD and its HEALTHCHECK command, and
// the systemd unit's ExecStart, each run as written with only the paths, the Redis
// address, the token file and the port put in for this machine (and the Dockerfile's
// 0.0.0.0 for 127.0.0.1: the tests listen on loopback only). Linting them (hadolint,
// systemd-analyze verify) is the suite's step before these tests.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { freePort, startRedis } from "../fleet/redis-server.mjs";
import { HERE, postIds, start, tokenFile } from "./service.mjs";

const DOCS = join(HERE, "../../docs/serve");
const TOKEN = "recipe-token-0123456789abcdef";

let redis;
before(async () => {
  redis = await startRedis();
});
after(() => redis?.stop());

/** The `serve` arguments of a command line, with this machine's values put in. */
function localized(args, { port, tokens, remote, packageDir }) {
  const i = args.indexOf("serve");
  assert.ok(i >= 0, `no serve in ${args.join(" ")}`);
  assert.equal(args[i - 1], `${packageDir}/bin/snowdrift.cjs`);
  const out = args.slice(i + 1);
  const swap = (flag, from, to) => {
    const at = out.indexOf(flag);
    assert.ok(at >= 0, `no ${flag} in ${args.join(" ")}`);
    assert.equal(out[at + 1], from, flag);
    out[at + 1] = to;
  };
  swap("--redis", remote, redis.url);
  swap("--port", "8080", String(port));
  const f = out.indexOf("--token-file");
  out[f + 1] = tokens;
  const h = out.indexOf("--host");
  if (out[h + 1] === "0.0.0.0") out[h + 1] = "127.0.0.1";
  return out;
}

test("the Dockerfile's command serves IDs, and its HEALTHCHECK command reads the health", async (t) => {
  const text = readFileSync(join(DOCS, "Dockerfile"), "utf8");
  const json = (instruction) => JSON.parse(new RegExp(`^${instruction} (\\[.*\\])$`, "m").exec(text)[1]);
  const command = [...json("ENTRYPOINT"), ...json("CMD")];
  assert.equal(command[0], "node");
  const port = await freePort();
  const args = localized(command, {
    port,
    tokens: tokenFile(TOKEN),
    remote: "redis://redis:6379",
    packageDir: "/app/node_modules/snowdrift",
  });
  const service = await start(t, args);
  const r = await postIds(service.url, { count: 2 }, TOKEN);
  assert.equal(r.status, 200);
  assert.equal((await r.json()).ids.length, 2);

  const check = JSON.parse(/^ {4}CMD (\[.*\])$/m.exec(text)[1]);
  assert.equal(check[0], "node");
  const script = check[2].replace("127.0.0.1:8080", `127.0.0.1:${port}`);
  await promisify(execFile)(process.execPath, [check[1], script], { timeout: 10_000 });
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
  // With the service gone the check fails.
  await assert.rejects(promisify(execFile)(process.execPath, [check[1], script], { timeout: 10_000 }));
});

test("the Dockerfile installs this package's version and the Redis client the tests run", () => {
  const text = readFileSync(join(DOCS, "Dockerfile"), "utf8");
  const version = (file) => JSON.parse(readFileSync(file, "utf8")).version;
  const installs = /^RUN npm install .*$/m.exec(text)[0];
  assert.match(installs, new RegExp(` snowdrift@${version(join(HERE, "../../wasm/js/package.json"))} `));
  assert.match(installs, new RegExp(` redis@${version(join(HERE, "node_modules/redis/package.json"))} `));
});

test("the systemd unit's ExecStart serves IDs", async (t) => {
  const text = readFileSync(join(DOCS, "snowdrift-serve.service"), "utf8");
  const line = /^ExecStart=(.*)$/m.exec(text)[1];
  const words = line.split(/\s+/).map((w) => w.replace(/\$\{CREDENTIALS_DIRECTORY\}/, "CREDENTIALS"));
  assert.equal(words[0], "/usr/bin/node");
  const port = await freePort();
  const args = localized(words, {
    port,
    tokens: tokenFile(TOKEN),
    remote: "redis://127.0.0.1:6379",
    packageDir: "/opt/snowdrift-serve/node_modules/snowdrift",
  });
  assert.equal(words[words.indexOf("--token-file") + 1], "CREDENTIALS/token");
  assert.match(text, /^KillSignal=SIGTERM$/m);
  const service = await start(t, args);
  const r = await postIds(service.url, { count: 2 }, TOKEN);
  assert.equal(r.status, 200);
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });
});
