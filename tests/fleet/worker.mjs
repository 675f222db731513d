// A fleet worker for the chaos run (chaos.mjs): leases a node id of a space with
// `snowdrift/redis` or `snowdrift/postgres`, issues IDs in bursts and appends each burst
// to a file, re-leasing when its lease lapses or is lost, until the time is up or
// SIGTERM. The Rust worker (snowdrift-lease's fleet_worker example) takes the same
// command line:
//
//   node worker.mjs --redis 127.0.0.1:PORT --space NAME --node-bits 3 --ttl-ms 1000
//     --skew-ms 200 --seconds 20 --out FILE [--clock-steps] [--client redis|ioredis] [--cluster]
//   node worker.mjs --postgres URL ... [--client pg-pool|pg-client]
//
// Each burst is one synchronous write of whole lines, so SIGKILL never leaves a wrong line
// (at most a burst that was issued and not written). `--clock-steps` gives the generator a
// clock that steps back at random and creeps back toward the real time.
import { closeSync, openSync, writeSync } from "node:fs";
import { connect, connectCluster } from "./clients.mjs";
import { connectPostgres, leaseFor } from "./stores.mjs";

const FLAGS = ["clock-steps", "cluster"];
const VALUES = ["redis", "postgres", "space", "node-bits", "ttl-ms", "skew-ms", "seconds", "out", "client"];

function parse(argv) {
  const o = { "node-bits": "3", "ttl-ms": "1000", "skew-ms": "200", seconds: "20" };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, "");
    if (FLAGS.includes(key)) o[key] = true;
    else if (VALUES.includes(key) && argv[i + 1] !== undefined) o[key] = argv[++i];
    else throw new RangeError(`unknown or incomplete option ${argv[i]}`);
  }
  if ((o.redis === undefined) === (o.postgres === undefined))
    throw new RangeError("one of --redis and --postgres is required");
  for (const k of ["space", "out"]) if (o[k] === undefined) throw new RangeError(`--${k} is required`);
  const clients = o.redis === undefined ? ["pg-pool", "pg-client"] : ["redis", "ioredis"];
  o.client ??= clients[0];
  if (!clients.includes(o.client)) throw new RangeError(`--client ${o.client} is not ${clients.join(" or ")}`);
  return o;
}

const o = parse(process.argv.slice(2));
const deadline = performance.now() + Number(o.seconds) * 1000;
const between = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Date.now() shifted back by an offset that starts at 1500-3000 ms (a process whose clock
 * is behind by more than a lease lasts, so it would reissue a dead holder's IDs unless
 * the lease fences it), steps down by 1-1500 ms every 300-800 ms (at most 3000 ms in
 * all) and creeps back toward 0 at 90% of real time, so the clock still moves forward
 * while it creeps, and never reads ahead of Date.now(). */
function steppingClock() {
  let offset = -between(1500, 3000);
  let last = Date.now();
  let nextStep = last + between(300, 800);
  return () => {
    const now = Date.now();
    offset = Math.min(0, offset + Math.floor((now - last) * 0.9));
    last = now;
    if (now >= nextStep) {
      offset = Math.max(-3000, offset - between(1, 1500));
      nextStep = now + between(300, 800);
    }
    return now + offset;
  };
}

let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
});
const done = () => stopping || performance.now() >= deadline;

const stats = {
  ids: 0,
  leases: 0,
  nodes: new Set(),
  lapsed: 0,
  lost: 0,
  clockErrors: 0,
  fenceWaits: 0,
  acquireRetries: 0,
};
const fd = openSync(o.out, "a");
const leaseNode = leaseFor(o.client);
async function connectStore() {
  if (o.postgres !== undefined) return connectPostgres(o.client, o.postgres);
  const [host, port] = o.redis.replace(/^redis:\/\//, "").split(":");
  return o.cluster ? connectCluster(o.client, [{ host, port: Number(port) }]) : connect(o.client, Number(port));
}
let { client, close } = await connectStore();
const options = {
  key: o.space,
  layout: { timeBits: 41, nodeBits: Number(o["node-bits"]), sequenceBits: 12, epochMs: 1704067200000 },
  ttlMs: Number(o["ttl-ms"]),
  skewMs: Number(o["skew-ms"]),
  holder: `worker.mjs pid ${process.pid}`,
  ...(o["clock-steps"] ? { clock: steppingClock() } : {}),
};

while (!done()) {
  let lease;
  try {
    lease = await leaseNode(client, options);
  } catch (e) {
    if (e instanceof TypeError || /^space '.*' leases/.test(e.message)) throw e; // bad options, CONFIG
    stats.acquireRetries++;
    if (o.client === "pg-client" && !/are leased/.test(e.message)) {
      // A pg Client does not reconnect by itself after its server went away.
      await close();
      ({ client, close } = await connectStore().catch(() => ({ client, close })));
    }
    await sleep(between(50, 100));
    continue;
  }
  stats.leases++;
  stats.nodes.add(lease.node);
  const policy = Math.random() < 0.5 ? { onClockBackwards: "wait", maxWaitMs: 50 } : { onClockBackwards: "borrow" };
  const gen = lease.generator(policy);
  while (!done() && lease.state === "live") {
    const n = between(1, 256);
    const ids = [];
    let error;
    try {
      while (ids.length < n) ids.push(gen.next());
    } catch (e) {
      error = e;
    }
    if (ids.length > 0) {
      writeSync(fd, `${ids.join("\n")}\n`);
      stats.ids += ids.length;
    }
    if (error !== undefined && lease.state === "live") {
      // The clock went back further than the policy allows, or the IDs reached the fence
      // before the next renewal moved it: both pass.
      if (/fence/.test(error.message)) stats.fenceWaits++;
      else stats.clockErrors++;
      await sleep(5);
    } else {
      await sleep(between(0, 2));
    }
  }
  if (lease.state === "lapsed") stats.lapsed++;
  if (lease.state === "lost") stats.lost++;
  await lease.release().catch(() => {});
}

closeSync(fd);
await close();
console.error(
  `worker ${process.pid} (${o.client}${o.cluster ? " cluster" : ""}): ${stats.ids} ids in ${stats.leases} leases` +
    ` of nodes ${[...stats.nodes].sort((a, b) => a - b).join(",")}; ${stats.lapsed} lapsed, ${stats.lost} lost,` +
    ` ${stats.clockErrors} clock errors, ${stats.fenceWaits} fence waits, ${stats.acquireRetries} acquire retries`,
);
process.exit(0);
