// No ID is ever issued twice: 1M IDs from one generator, and 1M from each of 4
// worker_threads with distinct nodes, checked together.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { Snowdrift, decode } from "snowdrift";

const N = 1_000_000;

function duplicates(ids) {
  const sorted = ids.slice().sort();
  let dups = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) dups++;
  return dups;
}

test("1M IDs from one generator: strictly increasing, no duplicates", () => {
  const gen = new Snowdrift({ node: 1 });
  const ids = new BigUint64Array(N);
  // Half one at a time, half in batches, interleaved.
  for (let i = 0; i < N; ) {
    if ((i / 1000) % 2 === 0) {
      for (let j = 0; j < 1000; j++) ids[i++] = gen.next();
    } else {
      ids.set(gen.nextBatch(1000), i);
      i += 1000;
    }
  }
  let backwards = 0;
  for (let i = 1; i < N; i++) if (ids[i] <= ids[i - 1]) backwards++;
  assert.equal(backwards, 0);
  assert.equal(duplicates(ids), 0);
});

test("4 worker_threads with distinct nodes, 1M IDs each: no duplicates", async () => {
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const { Snowdrift } = require("snowdrift");
    const gen = new Snowdrift({ node: workerData.node });
    const ids = new BigUint64Array(workerData.n);
    for (let i = 0; i < ids.length; i++) ids[i] = gen.next();
    parentPort.postMessage(ids, [ids.buffer]);`;
  const results = await Promise.all(
    [10, 11, 12, 13].map(
      (node) =>
        new Promise((resolve, reject) => {
          const w = new Worker(source, { eval: true, workerData: { node, n: N } });
          const timer = setTimeout(() => { w.terminate(); reject(new Error(`worker ${node} timed out`)); }, 120_000);
          w.once("message", (ids) => { clearTimeout(timer); resolve({ node, ids }); });
          w.once("error", (e) => { clearTimeout(timer); reject(e); });
        }),
    ),
  );
  const all = new BigUint64Array(4 * N);
  results.forEach(({ node, ids }, k) => {
    assert.equal(ids.length, N);
    assert.equal(decode(ids[0]).node, node);
    assert.equal(decode(ids[N - 1]).node, node);
    all.set(ids, k * N);
  });
  assert.equal(duplicates(all), 0);
});
