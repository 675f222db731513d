// Real PostgreSQL servers for the fleet tests: `initdb` in a temp dir, `postgres` as a
// direct child on a free port of 127.0.0.1 (as nobody through setpriv when the tests run
// as root: PostgreSQL refuses root), polled with pg_isready. Stops by the pid started
// here: fast (SIGINT), immediate (SIGQUIT: the next start runs crash recovery), and a
// restore from an older base backup. Every wait is bounded; every server is killed when
// this process exits.
//
// Run as a program (`node pg-server.mjs serve PORT`, for the newcomer suite), it starts a
// server on PORT with a database `app` owned by the role `app`, prints "ready", and stops
// it on SIGTERM or SIGINT.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, sleep } from "./redis-server.mjs";

/** The role the leases use: it may create schemas in the database, nothing more. */
export const ROLE = "app";
const bin = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
const root = process.getuid?.() === 0;
const children = new Set();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** A PostgreSQL program, run as nobody when we are root (setpriv execs: the pid is its own). */
function command(program, args) {
  const path = join(bin, program);
  return root ? ["setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", path, ...args]] : [path, args];
}

function runSync(program, args) {
  const [file, argv] = command(program, args);
  return execFileSync(file, argv, { encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
}

/** `dir` for the server's user, mode 0700. */
function own(dir) {
  if (root) execFileSync("chown", ["-R", "nobody:nogroup", dir]);
  chmodSync(dir, 0o700);
}

/** Starts a server in a new temp dir (on `port`, else a free one); resolves once it
 * answers. */
export async function startPostgres({ port: wanted } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "snowdrift-pg-"));
  own(dir);
  const data = join(dir, "data");
  runSync("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]);
  const port = wanted ?? (await freePort());
  let child;

  async function spawnServer() {
    const [file, argv] = command("postgres", [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
    ]);
    child = spawn(file, argv, { stdio: "ignore" });
    children.add(child);
    const c = child;
    c.exited = new Promise((resolve) => c.once("exit", resolve));
    c.once("exit", () => children.delete(c));
    const end = performance.now() + 20_000;
    for (;;) {
      try {
        execFileSync(join(bin, "pg_isready"), ["-q", "-h", "127.0.0.1", "-p", String(port)], { timeout: 5000 });
        return;
      } catch {}
      if (c.exitCode !== null) throw new Error(`postgres on port ${port} exited at once (${c.exitCode})`);
      if (performance.now() > end) throw new Error(`postgres on port ${port} not ready within 20 s`);
      await sleep(20);
    }
  }

  async function stopWith(signal) {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    c.kill("SIGCONT");
    c.kill(signal);
    const t = setTimeout(() => c.kill("SIGKILL"), 10_000);
    await c.exited;
    clearTimeout(t);
  }

  /** The server and its backends (children of the postmaster). */
  function pids() {
    let backends = [];
    try {
      backends = execFileSync("pgrep", ["-P", String(child.pid)], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean)
        .map(Number);
    } catch {}
    return [child.pid, ...backends];
  }

  const psql = (sql) =>
    execFileSync(
      join(bin, "psql"),
      ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t"].concat([
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        sql,
      ]),
      { encoding: "utf8", timeout: 10_000 },
    ).trim();

  await spawnServer();
  psql(`CREATE ROLE ${ROLE} LOGIN; GRANT CREATE ON DATABASE postgres TO ${ROLE};`);
  let backups = 0;
  return {
    port,
    /** A connection string for the lease role. */
    url: `postgres://${ROLE}@127.0.0.1:${port}/postgres`,
    psql,
    /** The pid of the postmaster. */
    get pid() {
      return child.pid;
    },
    /** SIGSTOP to the server and every backend: connections stay open and silent. */
    pause() {
      const all = pids();
      for (const p of all) process.kill(p, "SIGSTOP");
      return () => {
        for (const p of all) process.kill(p, "SIGCONT");
      };
    },
    /** Immediate stop (SIGQUIT: no checkpoint; the next start runs crash recovery). */
    stopImmediate: () => stopWith("SIGQUIT"),
    /** Starts it again on its data, after a stop. */
    start: spawnServer,
    /** A base backup of the running server, taken now. */
    baseBackup() {
      const to = join(dir, `backup-${++backups}`);
      runSync("pg_basebackup", [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-D",
        to,
        "-X",
        "stream",
        "-c",
        "fast",
      ]);
      return to;
    },
    /** Stops the server at once and starts it on `backup` instead of its data: every
     * commit after the backup is gone. */
    async restore(backup) {
      await stopWith("SIGQUIT");
      renameSync(data, join(dir, `data-lost-${backups}`));
      renameSync(backup, data);
      await spawnServer();
    },
    /** Stops it (fast shutdown) and removes its files. */
    async stop() {
      await stopWith("SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

if (process.argv[2] === "serve" && import.meta.url === `file://${process.argv[1]}`) {
  const server = await startPostgres({ port: Number(process.argv[3]) });
  server.psql(`CREATE DATABASE ${ROLE} OWNER ${ROLE}`);
  console.log(`ready ${server.url.replace(/postgres$/, ROLE)} (pid ${server.pid})`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
