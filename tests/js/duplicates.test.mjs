// No ID is issued twice and each generator's IDs strictly increase, checked where a real
// mistake would show: generators that share one wasm instance (its block pool and
// buffers) and one frozen millisecond, so that only their node bits keep them apart;
// worker threads whose datacenter + worker pairs collide if the split is packed wrong; a
// node id handed from thread to thread by its high-water mark with the clock an hour
// back; and a clock that keeps stepping back. Each check counts IDs not above the one
// before (order) as well as repeats.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { Snowdrift, decode } from "snowdrift";

const T0 = 1_750_000_000_000;

/** IDs not above the one before (within one generator's sequence of IDs). */
function notIncreasing(ids) {
  let n = 0;
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) n++;
  return n;
}

/** IDs that appear more than once. */
function repeats(ids) {
  const sorted = (ids instanceof BigUint64Array ? ids.slice() : BigUint64Array.from(ids)).sort();
  let n = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) n++;
  return n;
}

/** A deterministic pseudo-random source (mulberry32), so a failure can be replayed. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Runs `source` (CommonJS, with `workerData`) in worker threads; resolves with each one's message. */
function inWorkers(source, datas) {
  return Promise.all(
    datas.map(
      (workerData) =>
        new Promise((resolve, reject) => {
          const w = new Worker(source, { eval: true, workerData });
          const timer = setTimeout(() => {
            w.terminate();
            reject(new Error(`worker ${JSON.stringify(workerData)} timed out`));
          }, 120_000);
          w.once("message", (m) => {
            clearTimeout(timer);
            resolve(m);
          });
          w.once("error", (e) => {
            clearTimeout(timer);
            reject(e);
          });
        }),
    ),
  );
}

test("64 generators in one wasm instance, one frozen millisecond, calls interleaved, some freed and resumed: only node bits keep them apart", () => {
  const rnd = random(19);
  const clock = () => T0; // every generator stamps the same ticks: only the node differs
  const gens = Array.from({ length: 64 }, (_, node) => new Snowdrift({ node, clock }));
  const issued = gens.map(() => []);
  for (let round = 0; round < 250; round++) {
    for (let node = 0; node < gens.length; node++) {
      const out = issued[node];
      if (rnd() < 0.5) for (let k = 0; k < 32; k++) out.push(gens[node].next());
      else out.push(...gens[node].nextBatch(1 + Math.floor(rnd() * 64)));
      // Now and then a generator is freed and its node id taken up again after its newest
      // ID: its pool block goes to the next generator made.
      if (rnd() < 0.01) {
        gens[node].free();
        gens[node] = new Snowdrift({ node, clock, resumeAfter: out[out.length - 1] });
      }
    }
  }
  let total = 0;
  for (const [node, ids] of issued.entries()) {
    total += ids.length;
    assert.equal(notIncreasing(ids), 0, `node ${node}: IDs out of order`);
    for (const id of [ids[0], ids[ids.length >> 1], ids[ids.length - 1]]) assert.equal(decode(id).node, node);
  }
  assert.ok(total > 500_000, `${total} IDs`);
  assert.equal(repeats(issued.flat()), 0);
});

test("worker threads on a split layout, one frozen clock, pairs that collide if datacenter and worker are packed wrong: none twice", async () => {
  // (0, 1) and (1, 0), (1, 1) and (0, 2) and (2, 0), (3, 0) and (0, 3) and (2, 1): equal sums,
  // equal ORs, swapped fields.
  const pairs = [
    [0, 1],
    [1, 0],
    [1, 1],
    [0, 2],
    [2, 0],
    [3, 0],
    [0, 3],
    [2, 1],
  ];
  const N = 250_000;
  const results = await inWorkers(
    `
    const { parentPort, workerData: { datacenter, worker, n, t0 } } = require("node:worker_threads");
    const { Snowdrift } = require("snowdrift");
    const gen = new Snowdrift({ layout: "twitter", datacenter, worker, clock: () => t0 });
    const ids = new BigUint64Array(n);
    for (let i = 0; i < n; i += 1000) ids.set(i % 2000 ? gen.nextBatch(1000) : Array.from({ length: 1000 }, () => gen.next()), i);
    parentPort.postMessage(ids, [ids.buffer]);`,
    pairs.map(([datacenter, worker]) => ({ datacenter, worker, n: N, t0: T0 })),
  );
  results.forEach((ids, k) => {
    assert.equal(ids.length, N);
    assert.equal(notIncreasing(ids), 0, `worker ${pairs[k]}: IDs out of order`);
    const p = decode(ids[N - 1], "twitter");
    assert.deepEqual([p.datacenter, p.worker], pairs[k]);
  });
  const all = new BigUint64Array(pairs.length * N);
  for (const [k, ids] of results.entries()) all.set(ids, k * N);
  assert.equal(repeats(all), 0);
});

test("one node id handed from thread to thread by its high-water mark, each thread's clock an hour further back: every ID above the last", async () => {
  const N = 200_000;
  const source = `
    const { parentPort, workerData: { after, back, n } } = require("node:worker_threads");
    const { Snowdrift } = require("snowdrift");
    const gen = new Snowdrift({ node: 7, clock: () => Date.now() - back, resumeAfter: after });
    const ids = new BigUint64Array(n);
    for (let i = 0; i < n; i++) ids[i] = gen.next();
    parentPort.postMessage(ids, [ids.buffer]);`;
  const all = [];
  let after;
  for (let hop = 0; hop < 4; hop++) {
    const [ids] = await inWorkers(source, [{ after, back: hop * 3_600_000, n: N }]);
    if (after !== undefined) assert.ok(ids[0] > BigInt(after), `hop ${hop}: ${ids[0]} is not above ${after}`);
    for (const id of ids) all.push(id);
    after = String(ids[ids.length - 1]);
  }
  assert.equal(notIncreasing(all), 0, "IDs out of order across the hand-ons");
  assert.equal(repeats(all), 0);
});

for (const [policy, extra] of [
  ["borrow", {}],
  ["wait", { maxWaitMs: 100 }],
]) {
  test(`1M IDs under "${policy}" from a clock that steps back by up to 50 ms every few thousand readings: strictly increasing`, () => {
    const rnd = random(policy.length);
    let now = T0;
    let reads = 0;
    const clock = () => {
      reads++;
      if (reads % 3000 === 0) now -= 1 + Math.floor(rnd() * 50);
      else if (reads % 4 === 0) now += 1; // time moves on: a wait for the clock ends
      return now;
    };
    const gen = new Snowdrift({ node: 5, clock, onClockBackwards: policy, ...extra });
    const ids = new BigUint64Array(1_000_000);
    for (let i = 0; i < ids.length; ) {
      if (rnd() < 0.5) ids[i++] = gen.next();
      else {
        const k = Math.min(1 + Math.floor(rnd() * 100), ids.length - i);
        ids.set(gen.nextBatch(k), i);
        i += k;
      }
    }
    assert.ok(reads > 300, `the clock was read ${reads} times`);
    assert.equal(notIncreasing(ids), 0);
    assert.equal(repeats(ids), 0);
  });
}
