// The cost of `snowdrift serve` (part of `cargo xtask bench`): IDs per second and the
// latency of one request, at count 1 and count 1000, against a plain Node http server
// answering a constant of the same size (`constant-server.mjs`: the same request read and
// parsed, the same JSON written, no lease and no generator), each in a process of its own
// on 127.0.0.1, over a redis-server this script starts. Printed as ratios; no thresholds.
import { spawn } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { startRedis } from "../fleet/redis-server.mjs";
import { HERE, start } from "./service.mjs";

const WARM_UP_MS = 1000; // of load on each server at each count before anything is measured
const WARM_UP = 200; // requests one at a time before the latency is measured
const LATENCY_REQUESTS = 400; // one at a time
const THROUGHPUT_MS = 2000; // per server and count
const CONCURRENCY = 8; // requests in flight at once, on kept-alive connections
const TTL_MS = 3000; // the service's lease (skew 1,000 ms)

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};

/** POST /ids {"count": count} over `agent`; resolves with the answer's status. */
function post(agent, url, count) {
  const body = JSON.stringify({ count });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/ids`,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Median µs of one request at a time. */
async function latency(url, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples = [];
  for (let i = 0; i < WARM_UP + LATENCY_REQUESTS; i++) {
    const t0 = process.hrtime.bigint();
    await post(agent, url, count);
    if (i >= WARM_UP) samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  agent.destroy();
  return median(samples);
}

/** Requests per second with CONCURRENCY in flight for `ms`. */
async function throughput(url, count, ms = THROUGHPUT_MS) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let done = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await post(agent, url, count);
        done++;
      }
    }),
  );
  agent.destroy();
  return (done * 1000) / (performance.now() - t0);
}

/** The constant server, started; resolves with `{ url, stop }`. */
function startConstant() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(HERE, "constant-server.mjs")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const timer = setTimeout(() => reject(new Error("constant-server.mjs did not listen within 10 s")), 10_000);
    child.stdout.once("data", (d) => {
      clearTimeout(timer);
      resolve({ url: /http:\/\/\S+/.exec(String(d))[0], stop: () => child.kill("SIGTERM") });
    });
    process.on("exit", () => child.kill("SIGKILL"));
  });
}

const redis = await startRedis();
const service = await start(undefined, [
  "--redis",
  redis.url,
  "--space",
  "bench",
  "--port",
  "0",
  "--no-auth",
  "--max-count",
  "1000",
  "--ttl-ms",
  String(TTL_MS),
]);
// A new space's first leases are fenced close to their start for its first TTL + skew
// (lease/PROTOCOL.md), so that requests then wait for early renewals: measured after it.
await new Promise((r) => setTimeout(r, TTL_MS + 1000 + 500));
const constant = await startConstant();
const rows = [];
try {
  // Both servers' code paths compiled and warm before anything is measured.
  for (const url of [service.url, constant.url]) {
    for (const count of [1, 1000]) await throughput(url, count, WARM_UP_MS);
  }
  for (const count of [1, 1000]) {
    // Alternately, so that both meet the same load from the rest of the machine.
    const serveLatency = await latency(service.url, count);
    const constantLatency = await latency(constant.url, count);
    const serveRate = await throughput(service.url, count);
    const constantRate = await throughput(constant.url, count);
    rows.push({ count, serveLatency, constantLatency, serveRate, constantRate });
  }
} finally {
  await service.stop("SIGTERM");
  constant.stop();
  await redis.stop();
}

const fmt = (n) => Math.round(n).toLocaleString("en-US");
console.log(
  `\nsnowdrift serve over redis-server, Node ${process.version}, one client process on 127.0.0.1 (keep-alive); the constant: a Node http server answering the same JSON without a lease\n`,
);
console.log(
  "| count | latency, serve | latency, constant | serve ÷ constant | IDs/s, serve | IDs/s, constant | serve ÷ constant |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.count} | ${r.serveLatency.toFixed(0)} µs | ${r.constantLatency.toFixed(0)} µs | ${(r.serveLatency / r.constantLatency).toFixed(2)} | ${fmt(r.serveRate * r.count)} | ${fmt(r.constantRate * r.count)} | ${(r.serveRate / r.constantRate).toFixed(2)} |`,
  );
}
console.log(
  `\nlatency: median of ${LATENCY_REQUESTS} requests one at a time (after ${WARM_UP}); IDs/s: ${CONCURRENCY} requests in flight for ${THROUGHPUT_MS / 1000} s`,
);
