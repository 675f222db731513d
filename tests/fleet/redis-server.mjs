// Real redis-server processes for the fleet tests, on free ports of 127.0.0.1: one
// server, a restart on the same port (without persistence: its data is lost), and a
// three-master cluster. Every wait is bounded; every process started here is stopped by
// `stop()` and killed when this process exits. Each server works in a directory of its
// own (a replica writes the snapshot it syncs from there), made under the system's temp
// directory and removed when it stops, unless the caller gives one.
import { spawn, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const children = new Set();
const dirs = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A TCP port nobody listens on now (nor on port + 10000, for a cluster's bus). */
export async function freePort({ bus = false } = {}) {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise((resolve, reject) => {
      const s = net.createServer().once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });
    if (!bus || (port + 10000 <= 65535 && (await isFree(port + 10000)))) return port;
  }
  throw new Error("no free port pair found in 20 tries");
}

function isFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer().once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

async function cli(port, ...args) {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 5000 });
  return stdout.trim();
}

async function waitFor(what, check, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {}
    if (Date.now() > end) throw new Error(`${what} not ready within ${ms} ms`);
    await sleep(50);
  }
}

/** Spawns redis-server; resolves with its child process once it answers PING. */
async function spawnServer(port, args) {
  const child = spawn("redis-server", args, { stdio: "ignore" });
  children.add(child);
  child.exited = new Promise((resolve) => child.once("exit", resolve));
  child.once("exit", () => children.delete(child));
  await waitFor(`redis-server on port ${port}`, async () => (await cli(port, "PING")) === "PONG");
  return child;
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), 2000);
  await child.exited;
  clearTimeout(t);
}

/** A redis-server on `port` (a free one by default), working in `dir` (by default a new
 * temp directory, removed when it stops); resolves once it answers PING. */
export async function startServer({ port, extra = [], dir } = {}) {
  port ??= await freePort();
  const own = dir === undefined ? mkdtempSync(join(tmpdir(), "snowdrift-redis-")) : undefined;
  if (own !== undefined) dirs.add(own);
  const removeOwn = () => {
    if (own === undefined) return;
    rmSync(own, { recursive: true, force: true });
    dirs.delete(own);
  };
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...extra];
  args.push("--dir", dir ?? own);
  let child;
  try {
    child = await spawnServer(port, args);
  } catch (e) {
    removeOwn();
    throw e;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    /** Runs redis-cli against it; resolves with its output. */
    cli: (...a) => cli(port, ...a),
    /** Stops it (SIGKILL after 2 s) and removes its own directory. */
    async stop() {
      await stopChild(child);
      removeOwn();
    },
    /** Stops it and starts an empty one on the same port, as after a crash without
     * persistence: every key is gone. */
    async restart() {
      await stopChild(child);
      child = await spawnServer(port, args);
    },
  };
}
export const startRedis = startServer;

/** Three masters, every hash slot assigned; resolves once cluster_state is ok. */
export async function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-cluster-"));
  const nodes = [];
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort({ bus: true });
      nodes.push(
        await startServer({
          port,
          dir,
          extra: ["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`],
        }),
      );
    }
    const addrs = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run("redis-cli", ["--cluster", "create", ...addrs, "--cluster-replicas", "0", "--cluster-yes"], {
      timeout: 20000,
    });
    for (const n of nodes) {
      await waitFor(
        `cluster node ${n.port}`,
        async () => (await cli(n.port, "CLUSTER", "INFO")).includes("cluster_state:ok"),
        10000,
      );
    }
  } catch (e) {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    nodes: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
    urls: nodes.map((n) => n.url),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
