// Regions: one store per data centre (Redis in region 0, PostgreSQL in region 1), each
// space given its region of one layout: every holder of both issues, no ID twice across
// them, node ids carry their region; a holder of another region or split is refused
// naming both; bad regions are refused before the store is called; `snowdrift/http`
// answers composed node ids; `snowdrift lease` shows the region.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { leaseNode as redisLease, redisStore } from "snowdrift/redis";
import { leaseNode as postgresLease } from "snowdrift/postgres";
import { leaseHandler } from "snowdrift/http";
import { decode } from "snowdrift";
import { assertDisjoint, issueFor, runChild } from "./holders.mjs";
import { startStore, withStore } from "./stores.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, "../../wasm/pkg/bin/snowdrift.cjs");
// 4 node bits: a region of 1 bit above 3 leased worker bits.
const LAYOUT = { timeBits: 41, nodeBits: 4, sequenceBits: 12, epochMs: 1704067200000 };
const TEXT = "time 41 bits of 1 ms from 1704067200000, node 4 bits, sequence 12 bits, node above sequence";
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;
const options = (key, region) => ({ key, layout: LAYOUT, region, ttlMs: 1000, skewMs: 100 });

let redis;
let postgres;
before(async () => {
  [redis, postgres] = await Promise.all([startStore("redis"), startStore("pg-pool")]);
});
after(async () => {
  await redis?.stop();
  await postgres?.stop();
});

test("two stores given their own regions of one layout: every holder issues, no ID twice, node ids carry the region", () =>
  withStore("redis", redis, (r) =>
    withStore("pg-pool", postgres, async (p) => {
      const key = space("two");
      const regions = [
        { store: r, lease: redisLease, region: { bits: 1, id: 0 } },
        { store: p, lease: postgresLease, region: { bits: 1, id: 1 } },
      ];
      const held = [];
      for (const { store, lease, region } of regions) {
        const leases = await Promise.all(Array.from({ length: 8 }, () => lease(store, options(key, region))));
        assert.deepEqual(
          leases.map((l) => l.node).sort((a, b) => a - b),
          Array.from({ length: 8 }, (_, i) => region.id * 8 + i),
        );
        await assert.rejects(lease(store, options(key, region)), {
          name: "RangeError",
          message: `all 8 node ids of '${key}' are leased`,
        });
        held.push(...leases);
      }
      const lists = await Promise.all(held.map((l) => issueFor(l.generator(), 300)));
      for (const [i, ids] of lists.entries()) {
        assert.ok(ids.length > 0, `holder of node ${held[i].node} issued no ID`);
        for (const id of ids.slice(0, 100)) assert.equal(decode(id, LAYOUT).node, held[i].node);
      }
      assertDisjoint(lists, "two regions");
      await Promise.all(held.map((l) => l.release()));
    }),
  ));

test("a holder with another region or split is refused naming both; without a region the text is the layout's", () =>
  withStore("pg-client", postgres, async (client) => {
    const key = space("config");
    const lease = await postgresLease(client, options(key, { bits: 1, id: 1 }));
    assert.equal(lease.node, 8);
    const ours = `${TEXT}, region 1 of 1 bits`;
    const cases = [
      [{ bits: 1, id: 0 }, 8, `${TEXT}, region 0 of 1 bits`],
      [{ bits: 2, id: 1 }, 4, `${TEXT}, region 1 of 2 bits`],
      [undefined, 16, TEXT],
    ];
    for (const [region, capacity, text] of cases) {
      await assert.rejects(postgresLease(client, options(key, region)), {
        name: "RangeError",
        message: `space '${key}' leases 8 node ids of layout "${ours}" for 1000 ms (skew 100 ms); this client asked for ${capacity} node ids of layout "${text}" for 1000 ms (skew 100 ms)`,
      });
    }
    await lease.release();
  }));

test("a bad region is refused before the store is called, naming the value and the range", () =>
  withStore("redis", redis, async (client) => {
    const key = space("bad");
    const cases = [
      [
        { bits: 0, id: 0 },
        RangeError,
        "region.bits 0 is outside the allowed range 1..=3 (the layout's node field has 4 bits; at least one is leased)",
      ],
      [
        { bits: 4, id: 0 },
        RangeError,
        "region.bits 4 is outside the allowed range 1..=3 (the layout's node field has 4 bits; at least one is leased)",
      ],
      [
        { bits: 1.5, id: 0 },
        RangeError,
        "region.bits 1.5 is not an integer (allowed 1..=3) (the layout's node field has 4 bits; at least one is leased)",
      ],
      [{ bits: 2, id: 4 }, RangeError, "region.id 4 is outside the allowed range 0..=3 (the ids of 2 region bits)"],
      [{ bits: 2, id: -1 }, RangeError, "region.id -1 is outside the allowed range 0..=3 (the ids of 2 region bits)"],
      [{ bits: 2 }, TypeError, "region.id must be a number, got undefined undefined"],
      [{ bits: "2", id: 0 }, TypeError, 'region.bits must be a number, got string "2"'],
      [{ bits: 2, id: 0, size: 1 }, RangeError, `unknown region option "size" (allowed: bits, id)`],
      [3, TypeError, "region options must be an object, got number 3"],
    ];
    for (const [region, type, message] of cases) {
      await assert.rejects(redisLease(client, options(key, region)), { name: type.name, message }, String(region));
    }
    assert.deepEqual(await client.keys(`*${key}*`), []);
  }));

test("snowdrift/http with a region answers composed node ids and takes them back", () =>
  withStore("redis", redis, async (client) => {
    const key = space("http");
    const handler = leaseHandler({
      store: redisStore(client),
      spaces: { [key]: { layout: LAYOUT, region: { bits: 1, id: 1 }, ttlMs: 1000, skewMs: 100 } },
      authorize: () => true,
    });
    const post = async (call, body) => {
      const res = await handler(
        new Request(`http://127.0.0.1/leases/${call}`, { method: "POST", body: JSON.stringify(body) }),
      );
      return { status: res.status, body: await res.json() };
    };
    try {
      const a = await post("acquire", { space: key });
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.node, 8);
      const renewed = await post("renew", { space: key, node: a.body.node, token: a.body.token });
      assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
      // The leased id alone is not a node id of this region.
      const wrong = await post("renew", { space: key, node: 0, token: a.body.token });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error.message, "node 0 is outside the allowed range 8..=15");
      const ids = await post("ids", { space: key, count: 50 });
      assert.equal(ids.status, 200, JSON.stringify(ids.body));
      assert.equal(ids.body.ids.length, 50);
      for (const id of ids.body.ids) {
        const node = decode(BigInt(id), LAYOUT).node;
        assert.ok(node >= 8 && node <= 15 && node !== a.body.node, `node ${node}`);
      }
      const released = await post("release", { space: key, node: a.body.node, token: a.body.token, issued: 0 });
      assert.deepEqual(released, { status: 200, body: { released: true } });
    } finally {
      await handler.close();
    }
  }));

test("snowdrift lease shows the region and the leases as node ids, from Redis and PostgreSQL", async () => {
  const key = space("cli");
  const region = { bits: 1, id: 1 };
  for (const [kind, lease, flags] of [
    ["redis", redisLease, ["--redis", redis.url]],
    ["pg-pool", postgresLease, ["--postgres", postgres.url]],
  ]) {
    await withStore(kind, kind === "redis" ? redis : postgres, async (client) => {
      const a = await lease(client, { ...options(key, region), ttlMs: 5000, holder: "test holder" });
      const text = await runChild(process.execPath, [BIN, "lease", key, ...flags]);
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, new RegExp(`space '${key}': 8 node ids, ttl 5000 ms, skew 100 ms`));
      assert.match(text.out, /^region 1 of 1 bits: node ids 8\.\.=15 \(the region above the leased id\)$/m);
      assert.match(text.out, /^\s*8\s+test holder\s+ends in \d+\.\d s$/m);
      const json = JSON.parse((await runChild(process.execPath, [BIN, "lease", key, ...flags, "--json"])).out);
      assert.deepEqual(json.region, region);
      assert.equal(json.layout, `${TEXT}, region 1 of 1 bits`);
      assert.deepEqual(
        json.leases.map((l) => [l.node, l.leased, l.holder]),
        [[8, 0, "test holder"]],
      );
      await a.release();
    });
  }
});
