"use strict";
// `snowdrift/redis`: node id leases in Redis, so that a fleet of processes gets distinct
// node ids without configuration. It speaks the protocol of lease/PROTOCOL.md through its
// Lua scripts (copied into the package's `lua/` by `cargo xtask npm`), with the caller's
// client: node-redis (`createClient`, `createCluster`) or ioredis (`Redis`, `Redis.Cluster`),
// told apart by their methods. The package depends on neither.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createHash, randomBytes } = require("node:crypto");
const { hostname } = require("node:os");
const { performance } = require("node:perf_hooks");
const { Snowdrift, layoutInfo, maxIdAt } = require("./node.cjs");
// Bundled in by `cargo xtask npm` (node.cjs stays a separate file: one wasm instance).
const { describe, wrongType, optInt, strArg, optFn, options: checkOptions } = require("./check.mjs");

const OPTIONS = ["key", "layout", "ttlMs", "skewMs", "renewEveryMs", "holder", "clock"];
// Generator options a lease decides itself.
const FIXED = ["layout", "node", "datacenter", "worker", "resumeAfter"];
const MAX_NODE_BITS = 32;
// While a new (or data-lost) space's first lease is not yet usable, renew this often.
const USABLE_POLL_MS = 100;
// How long releasing on a signal or at exit may hold the process.
const EXIT_RELEASE_MS = 1000;
const CODE = /^(LEASED|CONFIG|LOST) /;

/** What a lease needs to know of a layout (from the core, `layoutInfo`): its node bits,
 * epoch and tick, and `text`, the layout as the space records it: the same text the Rust
 * crate's `Space::layout_text` gives, so Rust and Node clients of one layout share a space. */
function layoutFacts(layout) {
  const { timeBits, nodeBits, sequenceBits, unitMs, epochMs, order: o } = layoutInfo(layout);
  if (nodeBits > MAX_NODE_BITS) {
    throw new RangeError(`the layout has ${nodeBits} node bits; leases cover at most ${MAX_NODE_BITS}`);
  }
  // With an empty node or sequence field the order cannot be seen in an ID: Rust names it
  // "node above sequence" then.
  const order =
    nodeBits === 0 || sequenceBits === 0 || o === "node-sequence" ? "node above sequence" : "sequence above node";
  const text = `time ${timeBits} bits of ${unitMs} ms from ${epochMs}, node ${nodeBits} bits, sequence ${sequenceBits} bits, ${order}`;
  return { capacity: 2 ** nodeBits, epochMs, tickMs: unitMs, text };
}

/** The four keys of a space: one hash tag, so one Redis Cluster hash slot. */
const keysOf = (space) => ["meta", "ends", "token", "holder"].map((k) => `{${space}}:${k}`);

const scripts = new Map();
function script(name) {
  let s = scripts.get(name);
  if (s === undefined) {
    const text = readFileSync(join(__dirname, "lua", `${name}.lua`), "utf8");
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
  return async (name, keys, args) => {
    const s = script(name);
    args = args.map(String);
    try {
      return await call("sha", s.sha, keys, args);
    } catch (e) {
      if (!/^NOSCRIPT/.test(e?.message ?? "")) throw e;
      return call("eval", s.text, keys, args);
    }
  };
}

/** A script's error reply as the error a user sees: the code word stripped. */
function scriptError(e) {
  const m = CODE.exec(e?.message ?? "");
  if (!m) return e;
  const message = e.message.slice(m[0].length);
  return m[1] === "LOST" ? new Error(message) : new RangeError(message);
}

const sleep = (ms, ref = true) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (!ref) t.unref();
  });

/** `p`, or a rejection with `message` after `ms` (the timer never holds the process). */
function within(p, ms, message, ref = false) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    if (!ref) timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// Live leases, released once on SIGINT, SIGTERM or beforeExit.
const live = new Set();
const SIGNALS = ["SIGINT", "SIGTERM"];
let hooked = false;

function releaseAll() {
  const all = [...live];
  live.clear();
  return Promise.allSettled(all.map((l) => within(l.release(), EXIT_RELEASE_MS, "release timed out", true)));
}

function onSignal(signal) {
  unhook();
  releaseAll().finally(() => {
    // Do what the signal would have done: with no other listener, that is to end the process.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}
const onBeforeExit = () => {
  if (live.size > 0) releaseAll();
};

function hook() {
  if (hooked) return;
  hooked = true;
  for (const s of SIGNALS) process.on(s, onSignal);
  process.on("beforeExit", onBeforeExit);
}
function unhook() {
  if (!hooked) return;
  hooked = false;
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  process.removeListener("beforeExit", onBeforeExit);
}

/** A node id leased in Redis. Made by `leaseNode`. */
class Lease {
  #run;
  #keys;
  #space;
  #token;
  #layout;
  #facts;
  #ttl;
  #skew;
  #renewEvery;
  #clock;
  #gen;
  #okSentAt; // performance.now() when the newest successful renewal was sent
  #renewTimer;
  #lapseTimer;
  #controller = new AbortController();
  #released;

  constructor(init) {
    this.#run = init.run;
    this.#keys = init.keys;
    this.#space = init.space;
    this.#token = init.token;
    this.#layout = init.layout;
    this.#facts = init.facts;
    this.#ttl = init.ttl;
    this.#skew = init.skew;
    this.#renewEvery = init.renewEvery;
    this.#clock = init.clock;
    this.#okSentAt = init.sentAt;
    /** The node id. */
    this.node = init.node;
    /** The ID time (Unix ms) this lease never issues at or before. */
    this.notBefore = init.notBefore;
    /** The fence: the lease's end (Unix ms of Redis's clock); IDs are timed before it. */
    this.until = init.until;
    /** "live", "lapsed", "lost" or "released". */
    this.state = "live";
    /** Why the lease stopped (undefined while live). */
    this.error = undefined;
  }

  /** Aborted when the lease stops, with `error` as its reason. */
  get signal() {
    return this.#controller.signal;
  }

  #what() {
    return `lease of node ${this.node} of '${this.#space}'`;
  }

  /** Renews until the lease has a tick to issue in (a new space's first `skew` ms). */
  async _usable() {
    const deadline = performance.now() + this.#ttl + this.#skew;
    while (this.until - this.notBefore <= this.#facts.tickMs) {
      if (performance.now() > deadline) {
        throw new Error(
          `${this.#what()} is not usable after ${this.#ttl + this.#skew} ms (fence ${this.until}, not before ${this.notBefore})`,
        );
      }
      await sleep(USABLE_POLL_MS);
      // A renewal that gets no answer is given up on here (it may still land).
      await Promise.race([this.#renew(), sleep(USABLE_POLL_MS)]);
      if (this.state !== "live") throw this.error;
    }
  }

  _start() {
    this.#armLapse();
    this.#beat();
    live.add(this);
    hook();
  }

  #beat() {
    this.#renewTimer = setTimeout(() => {
      if (this.state !== "live") return;
      this.#renew();
      this.#beat();
    }, this.#renewEvery);
    this.#renewTimer.unref();
  }

  #armLapse() {
    clearTimeout(this.#lapseTimer);
    const limit = this.#ttl - this.#skew;
    this.#lapseTimer = setTimeout(
      () => {
        this.#stop(
          "lapsed",
          new Error(
            `${this.#what()} lapsed: no renewal succeeded for ${limit} ms (ttl ${this.#ttl} ms, skew ${this.#skew} ms)`,
          ),
        );
      },
      Math.max(0, this.#okSentAt + limit - performance.now()),
    );
    this.#lapseTimer.unref();
  }

  /** One renewal; failures other than LOST are left for the next beat. A reply that comes
   * late (a client queueing commands while Redis is away) counts from when it was sent;
   * the lapse bounds how many can be pending. */
  async #renew() {
    const sentAt = performance.now();
    try {
      const [until] = await this.#run("renew", this.#keys, [this.#space, this.node, this.#token, this.#ttl]);
      if (this.state !== "live") return;
      if (Number(until) > this.until) this.until = Number(until);
      this.#gen?.setFenceMs(this.until);
      if (sentAt > this.#okSentAt) {
        this.#okSentAt = sentAt;
        this.#armLapse();
      }
    } catch (e) {
      if (CODE.exec(e?.message ?? "")?.[1] === "LOST" && this.state === "live") {
        this.#stop("lost", scriptError(e));
      }
    }
  }

  #stop(state, error) {
    if (this.state !== "live") return;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#lapseTimer);
    this.#gen?.setFenceMs(0);
    this.state = state;
    this.error = error;
    live.delete(this);
    if (live.size === 0) unhook();
    this.#controller.abort(error);
  }

  /** The generator of this lease (one per lease: a second would repeat IDs). Options as
   * `new Snowdrift` takes, but the layout, node and resumeAfter are the lease's. */
  generator(options) {
    // Its keys are checked by new Snowdrift; those the lease sets, here.
    options = options ?? {};
    if (typeof options !== "object" || Array.isArray(options))
      throw wrongType("generator options", "an object", options);
    for (const k of FIXED) {
      if (options[k] !== undefined) throw new RangeError(`option ${describe(k)} is the lease's to set`);
    }
    if (this.state !== "live") throw this.error;
    if (this.#gen !== undefined) {
      throw new Error(`${this.#what()} already has its generator (one per lease: a second would repeat IDs)`);
    }
    const opts = { clock: this.#clock, ...options, layout: this.#layout, node: this.node };
    if (opts.clock === undefined) delete opts.clock;
    if (this.notBefore >= this.#facts.epochMs) opts.resumeAfter = maxIdAt(this.notBefore, this.#layout);
    const gen = new Snowdrift(opts);
    gen.setFenceMs(this.until);
    this.#gen = gen;
    return gen;
  }

  /** Stops the generator and hands the id on (the next holder starts after the newest ID
   * issued, not at the lease's end). Idempotent; resolves for a lease already lost. */
  release() {
    return (this.#released ??= this.#release());
  }

  async #release() {
    this.#stop("released", new Error(`${this.#what()} was released`));
    if (this.state === "lost") return;
    this.state = "released";
    const issued = Math.max(this.notBefore, this.#gen?.issuedThroughMs ?? 0);
    const call = this.#run("release", this.#keys, [this.#space, this.node, this.#token, issued]);
    await within(call, this.#ttl, `release of ${this.#what()} got no reply within ${this.#ttl} ms`);
  }
}
Object.defineProperty(Lease, "name", { value: "Lease" });

/** Leases a node id of the space `options.key`; resolves once the lease is usable. */
async function leaseNode(client, options) {
  options = checkOptions("leaseNode", options, OPTIONS);
  const space = strArg("key", options.key);
  if (space.length === 0) throw new RangeError("key must not be empty");
  if (/[{}]/.test(space))
    throw new RangeError(`key ${describe(space)} must not contain '{' or '}' (the keys' hash tag)`);
  const facts = layoutFacts(options.layout);
  const ttl = optInt(options, "ttlMs", 100, 86_400_000, 10_000);
  const maxSkew = Math.ceil(ttl / 2) - 1; // below ttlMs / 2
  if (options.skewMs === undefined && maxSkew < 1000) {
    throw new RangeError(
      `skewMs 1000 (the default) is outside the allowed range 0..=${maxSkew} (below ttlMs / 2): give skewMs`,
    );
  }
  const skew = optInt(options, "skewMs", 0, maxSkew, 1000);
  const renewEvery = optInt(options, "renewEveryMs", 1, ttl - skew - 1, Math.floor(ttl / 3));
  const holder = strArg("holder", options.holder ?? `node pid ${process.pid} on ${hostname()}`);
  optFn("clock", options.clock, "a function returning Unix milliseconds");
  const run = evalWith(client);
  const keys = keysOf(space);
  const token = randomBytes(16).toString("hex");
  const sentAt = performance.now();
  let reply;
  try {
    reply = await run("acquire", keys, [space, facts.capacity, ttl, skew, token, holder, facts.text]);
  } catch (e) {
    throw scriptError(e);
  }
  const [node, notBefore, until] = reply.map(Number);
  const lease = new Lease({
    run,
    keys,
    space,
    token,
    layout: options.layout,
    facts,
    ttl,
    skew,
    renewEvery,
    clock: options.clock,
    sentAt,
    node,
    notBefore,
    until,
  });
  try {
    await lease._usable();
  } catch (e) {
    await lease.release().catch(() => {});
    throw e;
  }
  lease._start();
  return lease;
}

module.exports = { leaseNode, Lease };
