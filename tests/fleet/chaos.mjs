// The fleet chaos run: worker processes (Node, Rust or both) lease node ids of one small
// space from a local redis-server or PostgreSQL server and write every ID they issue to
// files, while this script kills them with SIGKILL and starts them again at random, their
// clocks step back at random (`--clock-steps`, in even seats), and halfway through the store loses
// data or restarts: redis-server restarted without persistence; PostgreSQL stopped at
// once (`--event immediate`, as `pg_ctl stop -m immediate`: crash recovery) and started
// again, or restored from a base backup taken a quarter of the way in (`--event
// restore`: every commit after it is gone). At the end every ID of every file is
// checked: none may appear twice.
//
//   node chaos.mjs --workers node,node,node,node [--store redis|postgres]
//     [--event immediate|restore] [--seconds 20] [--node-bits 3] [--seed N]
//
// `--workers` names the kind of each worker seat: `node` (worker.mjs with node-redis, or
// a pg Pool), `node-ioredis` (worker.mjs with ioredis), `node-client` (worker.mjs with a
// pg Client), or `rust` (the fleet_worker example of snowdrift-lease, built by `cargo
// xtask test fleet` into target/release/examples/). Exits 1 on a duplicate, on a file
// with a line that is not an ID, or when the workers issued too few IDs to mean anything.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis } from "./redis-server.mjs";
import { startStore } from "./stores.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");

function args(argv) {
  const o = {
    workers: "node,node,node,node",
    store: "redis",
    event: "immediate",
    seconds: "20",
    "node-bits": "3",
    seed: String(Date.now() % 1e9),
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in o) || argv[i + 1] === undefined) throw new RangeError(`unknown or incomplete option ${argv[i]}`);
    o[key] = argv[i + 1];
  }
  return o;
}

const opts = args(process.argv.slice(2));
const kinds = opts.workers.split(",");
const seconds = Number(opts.seconds);
const nodeBits = Number(opts["node-bits"]);
// A small xorshift, seeded from the command line, so a failing run can be repeated.
let seed = Number(opts.seed) >>> 0 || 1;
const random = () => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 2 ** 32;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (!["redis", "postgres"].includes(opts.store)) throw new RangeError(`--store ${opts.store} is not redis or postgres`);
if (!["immediate", "restore"].includes(opts.event))
  throw new RangeError(`--event ${opts.event} is not immediate or restore`);
const postgres = opts.store === "postgres";
const dir = mkdtempSync(join(tmpdir(), "snowdrift-chaos-"));
const server = postgres ? await startStore("pg-pool") : await startRedis();
const space = `chaos:${process.pid}`;
const TTL_MS = 1000;
const SKEW_MS = 200;

/** The command line of a worker of `kind` in `seat`: workers in even seats run on clocks
 * that start behind and step back (`--clock-steps`), the others on the system clock, so
 * holders issue both behind and at the store's time. */
function command(kind, seat, out, runFor) {
  const common = [
    ...(postgres ? ["--postgres", server.url] : ["--redis", `127.0.0.1:${server.port}`]),
    "--space",
    space,
    "--node-bits",
    String(nodeBits),
    "--ttl-ms",
    String(TTL_MS),
    "--skew-ms",
    String(SKEW_MS),
    "--seconds",
    String(runFor),
    "--out",
    out,
    ...(seat % 2 === 0 ? ["--clock-steps"] : []),
  ];
  const node = (client) => [process.execPath, [join(here, "worker.mjs"), ...common, "--client", client]];
  if (kind === "rust") return [join(root, "target/release/examples/fleet_worker"), common];
  if (kind === "node") return node(postgres ? "pg-pool" : "redis");
  if (kind === "node-ioredis" && !postgres) return node("ioredis");
  if (kind === "node-client" && postgres) return node("pg-client");
  const kinds = postgres ? "node, node-client, rust" : "node, node-ioredis, rust";
  throw new RangeError(`unknown worker kind ${JSON.stringify(kind)} (allowed with ${opts.store}: ${kinds})`);
}

/** What happens to the store halfway; `prepare` runs a quarter of the way in. */
let backup;
const event = !postgres
  ? { what: "redis-server restarted without persistence", run: () => server.restart() }
  : opts.event === "immediate"
    ? {
        what: "PostgreSQL stopped at once (crash recovery) and started",
        run: async () => {
          await server.stopImmediate();
          await server.start();
        },
      }
    : {
        what: "PostgreSQL restored from a base backup taken a quarter of the way in",
        prepare: () => {
          backup = server.baseBackup();
        },
        run: () => server.restore(backup),
      };

const started = Date.now();
const left = () => Math.max(1, Math.ceil((seconds * 1000 - (Date.now() - started)) / 1000));
const live = new Map(); // seat -> child
let launched = 0;
let killed = 0;

function launch(seat) {
  const kind = kinds[seat];
  const [program, argv] = command(kind, seat, join(dir, `${kind}-${seat}-${launched++}.ids`), left());
  const child = spawn(program, argv, { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr.setEncoding("utf8");
  child.log = "";
  child.stderr.on("data", (d) => (child.log += d));
  child.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  live.set(seat, child);
}

for (let seat = 0; seat < kinds.length; seat++) launch(seat);

// Kill a random worker every 0.3-1.3 s and start it again at once; the store's event at
// the halfway mark.
let prepared = false;
let happened = false;
while (Date.now() - started < seconds * 1000 - 1500) {
  await sleep(300 + random() * 1000);
  if (!prepared && Date.now() - started > (seconds * 1000) / 4) {
    prepared = true;
    event.prepare?.();
  }
  if (!happened && Date.now() - started > (seconds * 1000) / 2) {
    await event.run();
    happened = true;
    console.error(`chaos: ${event.what} at ${Date.now() - started} ms`);
    continue;
  }
  const seat = Math.floor(random() * kinds.length);
  const child = live.get(seat);
  child.kill("SIGKILL");
  await child.exited;
  killed++;
  launch(seat);
}

// The workers stop by themselves at the end; SIGTERM (release and exit) any that do not.
const deadline = started + seconds * 1000 + 15_000;
const failures = [];
for (const [seat, child] of live) {
  const timer = setTimeout(() => child.kill("SIGTERM"), Math.max(0, deadline - Date.now()));
  const { code, signal } = await child.exited;
  clearTimeout(timer);
  if (code !== 0) failures.push(`worker ${seat} (${kinds[seat]}) ended with ${code ?? signal}: ${child.log.trim()}`);
  else console.error(`chaos: worker ${seat} (${kinds[seat]}): ${child.log.trim().split("\n").pop()}`);
}
await server.stop();

// Every ID of every file, once.
const seen = new Map();
let total = 0;
const perKind = {};
const duplicates = [];
const nodeMask = (1n << BigInt(nodeBits)) - 1n;
const nodes = new Set();
for (const file of readdirSync(dir)) {
  const kind = file.split("-").slice(0, -2).join("-");
  for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
    if (line === "") continue;
    if (!/^\d{1,20}$/.test(line)) {
      failures.push(`${file}: ${JSON.stringify(line)} is not an ID`);
      continue;
    }
    total++;
    perKind[kind] = (perKind[kind] ?? 0) + 1;
    nodes.add((BigInt(line) >> 12n) & nodeMask);
    const other = seen.get(line);
    if (other !== undefined) duplicates.push(`${line} in ${other} and ${file}`);
    else seen.set(line, file);
  }
}
rmSync(dir, { recursive: true, force: true });

console.log(
  `chaos: ${kinds.length} workers (${opts.workers}), ${seconds} s, ${launched} processes started, ` +
    `${killed} killed with SIGKILL, ${event.what}: ${happened}, seed ${opts.seed}`,
);
console.log(
  `chaos: ${total} IDs (${Object.entries(perKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ")}), ` + `${nodes.size} node ids used, ${duplicates.length} duplicates`,
);
if (duplicates.length) failures.push(`duplicate IDs: ${duplicates.slice(0, 10).join("; ")}`);
if (total < 10_000) failures.push(`only ${total} IDs were issued: the run proves nothing`);
for (const kind of new Set(kinds)) {
  if (!perKind[kind]) failures.push(`no ${kind} worker issued an ID`);
}
if (failures.length) {
  console.error(failures.join("\n"));
  process.exit(1);
}
