// `snowdrift serve` as the tests run it: the package's command (`node_modules/snowdrift`
// links to wasm/pkg) started as a child process in this directory, whose node_modules
// (tests/js's) holds the Redis and PostgreSQL clients the command loads as the user's
// peer dependencies. Every wait is bounded; every process started here is killed when
// this process exits.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const COMMAND = join(HERE, "node_modules/snowdrift/bin/snowdrift.cjs");

const children = new Set();
const dirs = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A new temp directory, removed when this process exits. */
export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-serve-"));
  dirs.add(dir);
  return dir;
}

/** A token file holding `tokens` (one per line), in a temp directory. */
export function tokenFile(...tokens) {
  const file = join(tempDir(), "tokens");
  writeFileSync(file, `${tokens.join("\n")}\n`, { mode: 0o600 });
  return file;
}

/** Runs the command with `args` to its end (at most `ms`): `{ code, stdout, stderr }`. */
export function run(args, { cwd = HERE, ms = 15_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [COMMAND, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`snowdrift ${args.join(" ")} still running after ${ms} ms:\n${stderr}`));
    }, ms);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts `snowdrift serve` with `args`; resolves once it listens (within `ms`) with `{
 * url, child, log(), exited, stop(signal) }`. `log()` is its stderr so far. Killed after
 * the test `t` if still running. */
export function start(t, args, { cwd = HERE, ms = 15_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [COMMAND, "serve", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    t?.after(() => child.kill("SIGKILL"));
    let stdout = "";
    let stderr = "";
    const exited = new Promise((r) =>
      child.once("exit", (code, signal) => {
        children.delete(child);
        r({ code, signal });
      }),
    );
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`snowdrift serve did not listen within ${ms} ms:\n${stderr}`));
    }, ms);
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (d) => {
      stdout += d;
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m === null) return;
      clearTimeout(timer);
      resolve({
        url: m[1],
        child,
        exited,
        log: () => stderr,
        /** Sends `signal` and resolves with how it exited (SIGKILL after `ms`). */
        async stop(signal = "SIGTERM", ms = 20_000) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const t = setTimeout(() => child.kill("SIGKILL"), ms);
          const r = await exited;
          clearTimeout(t);
          return r;
        },
      });
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`snowdrift serve exited (${code ?? signal}) before listening:\n${stderr}`));
    });
  });
}

/** Resolves once `check()` is true, polling every 20 ms, for at most `ms`. */
export async function until(what, check, ms = 10_000) {
  const end = performance.now() + ms;
  for (;;) {
    if (await check()) return;
    if (performance.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** POST /ids with `body` (an object, sent as JSON, or a string as it is). */
export function postIds(url, body, token, headers = {}) {
  return fetch(`${url}/ids`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
