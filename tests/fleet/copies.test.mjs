// A holder's state copied (a VM or container snapshot resumed beside the original, a
// process forked after acquiring): a lease's token changes at every renewal
// (lease/PROTOCOL.md, "Tokens"), so of two copies the one that renews second is LOST and
// stops. Against real redis-server and PostgreSQL, through each client kind.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { redisStore } from "snowdrift/redis";
import { postgresStore } from "snowdrift/postgres";
import { issueFor, until } from "./holders.mjs";
import { STORE_KINDS, isPostgres, leaseFor, startStore, withStore } from "./stores.mjs";

const layout = (nodeBits) => ({ timeBits: 41, nodeBits, sequenceBits: 12, epochMs: 1704067200000 });
const TEXT = "time 41 bits of 1 ms from 1704067200000, node 2 bits, sequence 12 bits, node above sequence";
let spaces = 0;
const space = (what) => `test:${what}:${process.pid}:${++spaces}`;

const servers = {};
before(async () => {
  servers.redis = await startStore("redis");
  servers.postgres = await startStore("pg-pool");
});
after(async () => {
  await servers.redis?.stop();
  await servers.postgres?.stop();
});
const serverOf = (kind) => (isPostgres(kind) ? servers.postgres : servers.redis);
const storeOf = (kind, client) => (isPostgres(kind) ? postgresStore(client) : redisStore(client));

/** The token the store holds for `node` of `key` now. */
async function tokenOf(kind, client, key, node) {
  if (isPostgres(kind)) {
    const r = await client.query("SELECT token FROM snowdrift.snowdrift_leases WHERE space = $1 AND node = $2", [
      key,
      node,
    ]);
    return r.rows[0]?.token ?? null;
  }
  const field = [`{${key}}:token`, String(node)];
  return client.hget ? client.hget(...field) : client.sendCommand(["HGET", ...field]); // ioredis, node-redis
}

const lost = { message: /^LOST node id \d+ of '.*' is no longer held by this lease/ };

for (const kind of STORE_KINDS) {
  test(`${kind}: the store's calls with tokens: a renewal replaces the token with the next one, the same renewal sent again renews, a copy holding the old token is LOST, a release matches either token of a renewal without a reply`, () =>
    withStore(kind, serverOf(kind), async (client) => {
      const store = storeOf(kind, client);
      const key = space("tokens");
      const args = { space: key, capacity: 4, ttl: 2000, skew: 100, token: "t0", holder: "test", layout: TEXT };
      const g = await store.acquire(args);
      const at = (token, next) => ({ space: key, node: g.node, token, next });
      const first = await store.renew(at("t0", "a1"), 2000);
      assert.ok(first >= g.until, "the renewal moves the fence forward");
      assert.equal(await tokenOf(kind, client, key, g.node), "a1", "the token is the next one now");
      assert.ok((await store.renew(at("t0", "a1"), 2000)) >= first, "the same renewal sent again renews");
      await assert.rejects(store.renew(at("t0", "b1"), 2000), lost, "a copy with the old token and its own next");
      await assert.rejects(store.renew(at("t0"), 2000), lost, "the old token without a next");
      assert.equal(await tokenOf(kind, client, key, g.node), "a1", "a refused renewal changes nothing");
      await store.renew(at("a1", "a2"), 2000);
      // A renewal whose reply never came: the holder does not know which token the store
      // has, and sends both with its release.
      await store.renew(at("a2", "a3"), 2000);
      assert.equal(await store.release(at("t0", "a1"), g.notBefore + 1), isPostgres(kind) ? false : 0, "old tokens");
      const released = await store.release(at("a2", "a3"), g.notBefore + 1);
      assert.ok(released === true || released === 1, `released: ${released}`);
      await assert.rejects(store.renew(at("a3", "a4"), 2000), lost, "a renewal after the release");
      // Without a next, the token stays (the calls of clients that send none).
      const h = await store.acquire({ ...args, token: "u0" });
      const plain = { space: key, node: h.node, token: "u0" };
      await store.renew(plain, 2000);
      await store.renew(plain, 2000);
      assert.equal(await tokenOf(kind, client, key, h.node), "u0");
      const r = await store.release(plain, h.notBefore + 1);
      assert.ok(r === true || r === 1, `released: ${r}`);
    }));

  for (const order of ["the original renews first", "the copy renews first"]) {
    test(`${kind}: a holder copied while it holds a lease (${order}): the copy that renews second is LOST and stops issuing; the two hold one token for at most one renewal`, () =>
      withStore(kind, serverOf(kind), async (client) => {
        const key = space("copied");
        const opts = { key, layout: layout(2), ttlMs: 1500, skewMs: 100, renewEveryMs: 300 };
        const original = await leaseFor(kind)(client, opts);
        const gen = original.generator();
        // The copy: the holder's state as it was now (its token), renewing through the store.
        const copied = await tokenOf(kind, client, key, original.node);
        assert.ok(copied, "the lease's token");
        const store = storeOf(kind, client);
        const ticket = { space: key, node: original.node, token: copied, next: "copy-next" };
        if (order === "the original renews first") {
          await until(
            "the original's renewal",
            async () => (await tokenOf(kind, client, key, original.node)) !== copied,
            3000,
          );
          await assert.rejects(store.renew(ticket, opts.ttlMs), lost, "the copy's renewal");
          assert.equal(original.state, "live");
          const ids = await issueFor(gen, 700); // two more renewals of the original
          assert.equal(original.state, "live", "the original goes on");
          assert.ok(ids.length > 0);
          await original.release();
          return;
        }
        await store.renew(ticket, opts.ttlMs);
        await until("the original is LOST", () => original.state === "lost", 3000);
        assert.match(original.error.message, /^node id \d+ of '.*' is no longer held by this lease/);
        assert.throws(() => gen.next(), /fence/, "its generator stops");
        // The copy, holding the lease now, goes on; a new lease of the original repeats none
        // of the copy's IDs.
        const again = await leaseFor(kind)(client, opts);
        assert.notEqual(again.node, original.node, "the id stays the copy's");
        const a = await issueFor(again.generator(), 100);
        await again.release();
        await original.release(); // a lease already lost: resolves, writes nothing
        assert.equal(await tokenOf(kind, client, key, original.node), "copy-next", "the copy's lease is untouched");
        assert.ok(a.length > 0);
      }));
  }
}
