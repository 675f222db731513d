"use strict";
// `snowdrift/redis`: node id leases in Redis, so that a fleet of processes gets distinct
// node ids without configuration. It speaks the protocol of lease/PROTOCOL.md through its
// Lua scripts (copied into the package's `lua/` by `cargo xtask npm`), with the caller's
// client: node-redis (`createClient`, `createCluster`) or ioredis (`Redis`, `Redis.Cluster`),
// told apart by their methods. The package depends on neither. The holder is `holder.cjs`,
// shared with `snowdrift/postgres`.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createHash } = require("node:crypto");
const { Lease, lease, leaseOptions, storeError } = require("./holder.cjs");
const { describe, strArg, wrongType } = require("../check.mjs");
const { keysOf, listing } = require("./redis-space.mjs");

const scripts = new Map();
function script(name) {
  let s = scripts.get(name);
  if (s === undefined) {
    // After prelude.lua, the functions every script uses (lease/PROTOCOL.md, "Scripts").
    const read = (file) => readFileSync(join(__dirname, "lua", `${file}.lua`), "utf8");
    const text = read("prelude") + read(name);
    s = { text, sha: createHash("sha1").update(text).digest("hex") };
    scripts.set(name, s);
  }
  return s;
}

/** Runs a script with EVALSHA, falling back to EVAL once when the server lacks it (a
 * new, restarted or other cluster node). Arguments go as strings. */
function evalWith(client) {
  let call;
  if (typeof client.evalSha === "function" && typeof client.eval === "function") {
    // node-redis
    call = (cmd, body, keys, args) =>
      cmd === "sha" ? client.evalSha(body, { keys, arguments: args }) : client.eval(body, { keys, arguments: args });
  } else if (typeof client.evalsha === "function" && typeof client.eval === "function") {
    // ioredis
    call = (cmd, body, keys, args) =>
      cmd === "sha"
        ? client.evalsha(body, keys.length, ...keys, ...args)
        : client.eval(body, keys.length, ...keys, ...args);
  } else {
    throw wrongType("the Redis client", "a node-redis or ioredis client (with evalSha or evalsha)", client);
  }
  return async (name, space, args) => {
    const s = script(name);
    const keys = keysOf(space);
    args = [space, ...args].map(String);
    try {
      return await call("sha", s.sha, keys, args);
    } catch (e) {
      if (!/^NOSCRIPT/.test(e?.message ?? "")) throw e;
      return call("eval", s.text, keys, args);
    }
  };
}

/** The protocol's calls on a Redis client, as the holder and `snowdrift/http`'s
 * `leaseHandler` take them (the store interface of rules.mjs). */
function redisStore(client) {
  const run = evalWith(client);
  return {
    name: "Redis",
    async acquire(a) {
      const reply = await run("acquire", a.space, [a.capacity, a.ttl, a.skew, a.token, a.holder, a.layout]);
      const [node, notBefore, until, now] = reply.map(Number);
      return { node, notBefore, until, now };
    },
    async renew(t, ttl) {
      const [until] = await run("renew", t.space, [t.node, t.token, ttl, t.next ?? ""]);
      return Number(until);
    },
    release: (t, issued) => run("release", t.space, [t.node, t.token, issued, t.next ?? ""]),
  };
}

function checkSpace(space) {
  if (/[{}]/.test(space))
    throw new RangeError(`key ${describe(space)} must not contain '{' or '}' (the keys' hash tag)`);
}

/** Leases a node id of the space `options.key`; resolves once the lease is usable. */
async function leaseNode(client, options) {
  const o = leaseOptions(options, checkSpace);
  return lease(redisStore(client), o);
}

/** The space `key` as Redis lists it (list.lua), for operators: its settings (null when
 * it does not exist) and every id ever leased, oldest fence first. */
async function list(client, key) {
  const space = strArg("key", key);
  let reply;
  try {
    reply = await evalWith(client)("list", space, []);
  } catch (e) {
    throw storeError(e);
  }
  return listing(reply);
}

module.exports = { leaseNode, redisStore, list, Lease };
