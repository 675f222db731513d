// `snowdrift serve` under load while things fail: 20 clients ask for IDs for 10 s while the
// service is killed (SIGKILL) and started again twice and Redis is stopped for 1.5 s and
// started again once (empty: without persistence its records are gone). No ID is received twice, every answer that is
// not 200 is a clean 503 with Retry-After and a JSON error, and IDs flow again after each
// event. A killed process resets its connections and refuses new ones until it is started
// again: clients count those and retry, as a client of a service that restarts must.
import assert from "node:assert/strict";
import { test } from "node:test";
import { freePort, sleep, startRedis } from "../fleet/redis-server.mjs";
import { postIds, start, tokenFile } from "./service.mjs";

const CLIENTS = 20;
const SECONDS = 10;
const TOKEN = "chaos-token-0123456789abcdef";

test(`${CLIENTS} clients for ${SECONDS} s: the service killed twice, Redis restarted once: no ID twice, every error a 503 with Retry-After`, async (t) => {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const port = await freePort();
  const args = [
    "--redis",
    redis.url,
    "--space",
    "chaos",
    "--port",
    String(port),
    "--ttl-ms",
    "2000",
    "--store-timeout-ms",
    "500",
    "--token-file",
    tokenFile(TOKEN),
  ];
  let service = await start(t, args);
  const url = service.url;

  const chunks = []; // BigUint64Arrays of the IDs received
  const bad = []; // answers that are neither 200 nor a clean 503
  const counts = { ok: 0, ids: 0, unavailable: 0, connection: 0 };
  const codes = new Map(); // a 503's error code -> how many
  // IDs received after each event: [kill 1, Redis restart, kill 2].
  const after = [0, 0, 0];
  let phase = -1;
  const end = performance.now() + SECONDS * 1000;

  async function client(c) {
    for (let i = 0; performance.now() < end && i < 1_000_000; i++) {
      const count = 1 + ((c * 7 + i * 13) % 100);
      let r;
      try {
        r = await postIds(url, { count }, TOKEN);
      } catch (e) {
        // The service is down or was killed mid-answer: retry shortly.
        counts.connection++;
        if (!/fetch failed|terminated|other side closed|socket/i.test(e.message)) bad.push(`fetch: ${e.message}`);
        await sleep(20);
        continue;
      }
      let body;
      try {
        body = await r.json();
      } catch (e) {
        counts.connection++;
        if (r.status !== 200 && r.status !== 503) bad.push(`${r.status} with a body that is not JSON (${e.message})`);
        await sleep(20);
        continue;
      }
      if (r.status === 200) {
        if (!Array.isArray(body.ids) || body.ids.length !== count) {
          bad.push(`200 with ${JSON.stringify(body).slice(0, 200)}`);
          continue;
        }
        chunks.push(BigUint64Array.from(body.ids, BigInt));
        counts.ok++;
        counts.ids += count;
        if (phase >= 0) after[phase] += count;
        continue;
      }
      const clean =
        r.status === 503 &&
        r.headers.get("retry-after") === "1" &&
        typeof body?.error?.code === "string" &&
        typeof body.error.message === "string";
      if (!clean) bad.push(`${r.status} retry-after ${r.headers.get("retry-after")}: ${JSON.stringify(body)}`);
      counts.unavailable++;
      codes.set(body?.error?.code, (codes.get(body?.error?.code) ?? 0) + 1);
      // Retry-After says 1 s; these clients come back sooner to keep the load up.
      await sleep(50);
    }
  }

  async function events() {
    const at = (s) => sleep(Math.max(0, end - (SECONDS - s) * 1000 - performance.now()));
    await at(2);
    service.child.kill("SIGKILL");
    await service.exited;
    service = await start(t, args);
    phase = 0;
    await at(3);
    // Down for longer than the service's lease outlives its last renewal (ttl - skew, 1 s):
    // requests meet a service that cannot issue until Redis is back, empty.
    await redis.cli("SHUTDOWN", "NOSAVE").catch(() => {});
    await sleep(1500);
    await redis.restart();
    phase = 1;
    await at(8);
    service.child.kill("SIGKILL");
    await service.exited;
    service = await start(t, args);
    phase = 2;
  }

  await Promise.all([events(), ...Array.from({ length: CLIENTS }, (_, c) => client(c))]);
  assert.deepEqual(await service.stop("SIGTERM"), { code: 0, signal: null });

  const all = new BigUint64Array(counts.ids);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  all.sort();
  let duplicates = 0;
  for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) duplicates++;
  console.log(
    `${counts.ids} IDs in ${counts.ok} answers; ${counts.unavailable} answers 503 (${[...codes].map(([k, v]) => `${k} ${v}`).join(", ")}); ${counts.connection} requests met a closed or reset connection; IDs after each event: ${after.join(", ")}; duplicates: ${duplicates}`,
  );
  assert.equal(duplicates, 0, "no ID twice");
  assert.deepEqual(bad, [], "every answer is 200 or a clean 503 with Retry-After");
  // A service started again issues at once. After Redis comes back, the service leases
  // again once its reconnection and the handler's back-off let it (seconds: printed above).
  assert.ok(after[0] > 0, "IDs flow again after the first kill");
  assert.ok(after[2] > 0, "IDs flow again after the second kill");
});
