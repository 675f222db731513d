// The cost of node id leases in Cloudflare Workers, in workerd through Miniflare (part of
// `cargo xtask bench`): from a client Worker, a lease's acquire with its release
// (`leaseNode` + `release`: two object calls) next to a bare call of the same object (a
// release of a token it does not know: one read, and the clock row written), and `next()`
// of a lease-bound generator against an unbound one with the same options. Each figure
// is timed in the Worker's own loop; Workers stop their clocks during a request, so the
// loop runs in a request of its own and this script times it from outside, once with
// the loop and once with an empty one, and takes the difference. Medians; no thresholds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { entry, open } from "./harness.mjs";

const client = `
import { leaseNode } from "${entry}";
import { Snowdrift } from "./node_modules/snowdrift/workerd.js";
const options = { key: "bench:edge", layout: "twitter", ttlMs: 3000, skewMs: 500 };
let held; // a lease and its generator, for the next() rounds
export default {
  async fetch(request, env) {
    const { op, n } = await request.json();
    const stub = env.LEASES.get(env.LEASES.idFromName(options.key));
    if (op === "acquire") for (let i = 0; i < n; i++) await (await leaseNode(env.LEASES, options)).release();
    else if (op === "call")
      for (let i = 0; i < n; i++) await stub.release({ space: options.key, node: 0, token: "none", issued: 0 });
    else if (op === "bound" || op === "unbound") {
      if (held === undefined) {
        const lease = await leaseNode(env.LEASES, options);
        held = { lease, bound: lease.generator(), unbound: new Snowdrift({ layout: "twitter", node: lease.node }) };
      }
      await held.lease.keep(); // renews when due: the lease outlives the rounds
      const gen = held[op];
      for (let i = 0; i < n; i++) gen.next();
    }
    return new Response("ok");
  },
};`;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const dir = mkdtempSync(join(tmpdir(), "snowdrift-edge-bench-"));
const mf = await open(dir, { clients: 1, client });
/** ms of one request running `op` `n` times, median of `rounds`. */
async function timed(op, n, rounds) {
  const xs = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const res = await mf.mf.dispatchFetch("http://client0.test/", { method: "POST", body: JSON.stringify({ op, n }) });
    const body = await res.text();
    if (body !== "ok") throw new Error(`${op}: HTTP ${res.status}: ${body.slice(0, 300)}`);
    xs.push(performance.now() - t0);
  }
  return median(xs);
}
/** µs (or ns for `next`) per call of `op`: a request of `n` calls less an empty request. */
async function perCall(op, n, rounds) {
  await timed(op, n, 3); // warm-up
  const empty = await timed("none", 0, rounds);
  return ((await timed(op, n, rounds)) - empty) / n;
}
let rows;
try {
  // The new space's first ttl + skew ms are fenced ahead: wait them out once.
  await timed("acquire", 1, 1);
  await new Promise((r) => setTimeout(r, 3600));
  const acquire = await perCall("acquire", 50, 21);
  const call = await perCall("call", 50, 21);
  // The two generators in turns, so that both see the same machine. 100,000 IDs a
  // request: a Worker's clock stands still during a request, and a generator runs ahead
  // of it by 1 ms every 4,096 IDs ("borrow"); this keeps both well inside the second
  // they may run ahead (and the lease inside its fence), so neither ever waits.
  const N = 100_000;
  await timed("bound", N, 3);
  await timed("unbound", N, 3);
  const samples = { bound: [], unbound: [] };
  for (let r = 0; r < 31; r++) {
    for (const op of r % 2 ? ["bound", "unbound"] : ["unbound", "bound"]) samples[op].push(await timed(op, N, 1));
    await new Promise((resolve) => setTimeout(resolve, 30)); // the clock catches up
  }
  const empty = await timed("none", 0, 11);
  const [bound, unbound] = ["bound", "unbound"].map((op) => (median(samples[op]) - empty) / N);
  rows = { acquire, call, bound, unbound };
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
const { acquire, call, bound, unbound } = rows;
console.log("\nnode id leases in workerd (Miniflare), from a client Worker (medians)\n");
console.log(
  "| `leaseNode` + `release` | a bare object call | acquire + release ÷ two bare calls | `next()`, lease-bound | `next()`, unbound | bound ÷ unbound |",
);
console.log("|---|---|---|---|---|---|");
console.log(
  `| ${(acquire * 1000).toFixed(0)} µs | ${(call * 1000).toFixed(0)} µs | ${(acquire / (2 * call)).toFixed(2)}× | ${(bound * 1e6).toFixed(1)} ns | ${(unbound * 1e6).toFixed(1)} ns | ${(bound / unbound).toFixed(2)}× |`,
);
