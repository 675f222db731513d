// The lease protocol's rules every holder follows, whatever its runtime and store
// (lease/PROTOCOL.md, "What a holder does"): the options and their ranges, a layout as
// the space records it, the store's errors as users see them, and the generator a lease
// gives. The Node holder (`holder.cjs`, over Redis and PostgreSQL) and the Workers client
// (`cloudflare.js`) bundle it; the runtime's API (`Snowdrift`, `layoutInfo`, `maxIdAt`)
// is passed in, so it works with any runtime's wasm instance.
//
// A store is an object of calls, each resolving with the protocol's reply or rejecting
// with an error whose message starts with its code word (`LEASED`, `CONFIG`, `LOST`):
//
//   acquire({ space, capacity, ttl, skew, token, holder, layout }) -> { node, notBefore, until }
//   renew({ space, node, token }, ttl) -> until
//   release({ space, node, token }, issued) -> anything
import { describe, optFn, optInt, options as checkOptions, strArg, wrongType } from "./check.mjs";

/** The options of `leaseNode`, whatever the store. */
export const OPTIONS = ["key", "layout", "ttlMs", "skewMs", "renewEveryMs", "holder", "clock"];
// Generator options a lease decides itself.
const FIXED = ["layout", "node", "datacenter", "worker", "resumeAfter"];
const MAX_NODE_BITS = 32;
const CODE = /^(LEASED|CONFIG|LOST) /;

/** What a lease needs to know of a layout: its node bits, epoch and tick, and `text`, the
 * layout as the space records it: the same text the Rust crate's `Space::layout_text`
 * gives, so Rust and JS clients of one layout share a space. */
export function layoutFacts(api, layout) {
  const { timeBits, nodeBits, sequenceBits, unitMs, epochMs, order: o } = api.layoutInfo(layout);
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

/** Whether `e` is the generator's refusal at its fence (the core's `PastFence`, in
 * core/src/error.rs: `next ID at ... ms is not before the fence at ... ms`). */
export const pastFence = (e) => /^next ID at \d+ ms is not before the fence at \d+ ms$/.test(e?.message ?? "");

/** The protocol's code word of a store's error (`LEASED`, `CONFIG`, `LOST`), if any. */
export const codeOf = (e) => CODE.exec(e?.message ?? "")?.[1];

/** A store's error as the error a user sees: the code word stripped; LEASED and CONFIG
 * are RangeErrors (the space is full, the settings disagree). */
export function storeError(e) {
  const code = codeOf(e);
  if (code === undefined) return e;
  const message = e.message.slice(code.length + 1);
  return code === "LOST" ? new Error(message) : new RangeError(message);
}

/** Checks `leaseNode`'s options (before any call to the store): the space's name passes
 * `checkSpace` too, the store's own rule for names; `extra` names the store's own
 * options, which the store checks; `holder` is the default description. */
export function leaseOptions(api, options, { checkSpace = () => {}, extra = [], holder, maxTtlMs = 86_400_000 }) {
  options = checkOptions("leaseNode", options, [...OPTIONS, ...extra]);
  const space = strArg("key", options.key);
  if (space.length === 0) throw new RangeError("key must not be empty");
  checkSpace(space);
  const facts = layoutFacts(api, options.layout);
  const ttl = optInt(options, "ttlMs", 100, maxTtlMs, 10_000);
  const maxSkew = Math.ceil(ttl / 2) - 1; // below ttlMs / 2
  if (options.skewMs === undefined && maxSkew < 1000) {
    throw new RangeError(
      `skewMs 1000 (the default) is outside the allowed range 0..=${maxSkew} (below ttlMs / 2): give skewMs`,
    );
  }
  const skew = optInt(options, "skewMs", 0, maxSkew, 1000);
  const renewEvery = optInt(options, "renewEveryMs", 1, ttl - skew - 1, Math.floor(ttl / 3));
  strArg("holder", options.holder ?? holder);
  optFn("clock", options.clock, "a function returning Unix milliseconds");
  return {
    space,
    facts,
    ttl,
    skew,
    renewEvery,
    holder: options.holder ?? holder,
    layout: options.layout,
    clock: options.clock,
  };
}

/** The arguments of the store's acquire for the checked options `o`. */
export const acquireArgs = (o, token) => ({
  space: o.space,
  capacity: o.facts.capacity,
  ttl: o.ttl,
  skew: o.skew,
  token,
  holder: o.holder,
  layout: o.facts.text,
});

/** The generator of a lease: the lease's layout and node, resumed after `notBefore`,
 * fenced at `until`. `options` as `new Snowdrift` takes them, but those the lease sets. */
export function leaseGenerator(api, lease, options) {
  options = options ?? {};
  if (typeof options !== "object" || Array.isArray(options)) throw wrongType("generator options", "an object", options);
  for (const k of FIXED) {
    if (options[k] !== undefined) throw new RangeError(`option ${describe(k)} is the lease's to set`);
  }
  const opts = { clock: lease.clock, ...options, layout: lease.layout, node: lease.node };
  if (opts.clock === undefined) delete opts.clock;
  if (lease.notBefore >= lease.facts.epochMs) opts.resumeAfter = api.maxIdAt(lease.notBefore, lease.layout);
  const gen = new api.Snowdrift(opts);
  gen.setFenceMs(lease.until);
  return gen;
}

/** A random token of 32 hex digits (Web Crypto: Node, workerd, Deno, Bun, browsers). */
export function newToken() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// While a new (or data-lost) space's first lease is not yet usable, renew this often.
const USABLE_POLL_MS = 100;
// A generator whose newest ID is this close to its fence (ms of ID time; at most `ttl -
// renewEvery`) renews early, every USABLE_POLL_MS at most. A new space's first leases are
// fenced a TTL ahead of the store's clock, and only renewals give them more ID time.
const NEAR_FENCE_MS = 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `p`, or a rejection with `message` after `ms` (in Node the timer never holds the
 * process unless `ref`). */
export function within(p, ms, message, ref = false) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    if (!ref) timer.unref?.();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The holder's state machine of one lease, whatever the runtime: the fence, the wait
 * until usable, a renewal and its bookkeeping, the lapse, lost, the generator and the
 * release. What schedules the renewals and checks the lapse is the runtime's: timers in
 * Node (`holder.cjs`), each request in Workers (`cloudflare.js`); they subclass this and
 * hear of a successful renewal (`_renewed`) and of the stop (`_stopped`).
 */
export class HeldLease {
  #api;
  #store;
  #ticket;
  #o;
  #gen;
  #okSentAt; // performance.now() when the newest successful renewal was sent
  #sentAt; // performance.now() when the newest renewal was sent
  #pending = 0; // renewals sent and not answered
  #controller = new AbortController();
  #released;

  constructor(api, store, o, token, sentAt, grant) {
    this.#api = api;
    this.#store = store;
    this.#o = o;
    this.#ticket = { space: o.space, node: grant.node, token };
    this.#okSentAt = sentAt;
    this.#sentAt = sentAt;
    /** The node id. */
    this.node = grant.node;
    /** The ID time (Unix ms) this lease never issues at or before. */
    this.notBefore = grant.notBefore;
    /** The fence: the lease's end (Unix ms of the store's clock); IDs are timed before it. */
    this.until = grant.until;
    /** "live", "lapsed", "lost" or "released". */
    this.state = "live";
    /** Why the lease stopped (undefined while live). */
    this.error = undefined;
  }

  /** Aborted when the lease stops, with `error` as its reason. */
  get signal() {
    return this.#controller.signal;
  }

  /** The checked options: `ttl`, `skew`, `renewEvery` (ms) and the rest. */
  get _options() {
    return this.#o;
  }

  /** How long ago (local monotonic ms) the newest successful renewal was sent. */
  _sinceRenewal() {
    return performance.now() - this.#okSentAt;
  }

  _what() {
    return `lease of node ${this.node} of '${this.#o.space}'`;
  }

  /** Renews until the lease has a tick to issue in (a new space's first `skew` ms). */
  async _usable() {
    const { ttl, skew } = this.#o;
    const deadline = performance.now() + ttl + skew;
    while (this.until - this.notBefore <= this.#o.facts.tickMs) {
      if (performance.now() > deadline) {
        throw new Error(
          `${this._what()} is not usable after ${ttl + skew} ms (fence ${this.until}, not before ${this.notBefore})`,
        );
      }
      await sleep(USABLE_POLL_MS);
      // A renewal that gets no answer is given up on here (it may still land).
      await Promise.race([this._renew(), sleep(USABLE_POLL_MS)]);
      if (this.state !== "live") throw this.error;
    }
  }

  /** Whether the generator's newest ID is near its fence and a renewal could move it (one
   * was last sent USABLE_POLL_MS ago or more, none is pending): renew now, ahead of the
   * regular schedule. */
  _nearFence() {
    const { ttl, renewEvery } = this.#o;
    return (
      this.state === "live" &&
      this.#gen !== undefined &&
      this.#pending === 0 &&
      performance.now() - this.#sentAt >= USABLE_POLL_MS &&
      this.until - this.#gen.issuedThroughMs < Math.min(NEAR_FENCE_MS, ttl - renewEvery)
    );
  }

  /** One renewal; failures other than LOST are left for the next one. A reply that comes
   * late (a client queueing commands while the store is away) counts from when it was
   * sent; the lapse bounds how many can be pending. */
  async _renew() {
    const sentAt = performance.now();
    this.#sentAt = sentAt;
    this.#pending++;
    try {
      const until = await this.#store.renew(this.#ticket, this.#o.ttl);
      if (this.state !== "live") return;
      if (until > this.until) this.until = until;
      this.#gen?.setFenceMs(this.until);
      if (sentAt > this.#okSentAt) {
        this.#okSentAt = sentAt;
        this._renewed();
      }
    } catch (e) {
      if (codeOf(e) === "LOST") this._stop("lost", storeError(e));
    } finally {
      this.#pending--;
    }
  }

  /** Called after a renewal moved the newest successful one forward. */
  _renewed() {}

  /** Called once, when the lease stops. */
  _stopped() {}

  /** Stops the lease for good: no renewal succeeded for `ttl - skew` ms. */
  _lapse() {
    const { ttl, skew } = this.#o;
    this._stop(
      "lapsed",
      new Error(`${this._what()} lapsed: no renewal succeeded for ${ttl - skew} ms (ttl ${ttl} ms, skew ${skew} ms)`),
    );
  }

  _stop(state, error) {
    if (this.state !== "live") return;
    this.#gen?.setFenceMs(0);
    this.state = state;
    this.error = error;
    this._stopped();
    this.#controller.abort(error);
  }

  /** The generator of this lease (one per lease: a second would repeat IDs). Options as
   * `new Snowdrift` takes, but the layout, node and resumeAfter are the lease's. */
  generator(options) {
    if (this.state !== "live") throw this.error;
    if (this.#gen !== undefined) {
      throw new Error(`${this._what()} already has its generator (one per lease: a second would repeat IDs)`);
    }
    const o = this.#o;
    const lease = { clock: o.clock, layout: o.layout, facts: o.facts, node: this.node };
    this.#gen = leaseGenerator(this.#api, { ...lease, notBefore: this.notBefore, until: this.until }, options);
    return this.#gen;
  }

  /** Stops the generator and hands the id on (the next holder starts after the newest ID
   * issued, not at the lease's end). Idempotent; resolves for a lease already lost. */
  release() {
    this.#released ??= (async () => {
      this._stop("released", new Error(`${this._what()} was released`));
      if (this.state === "lost") return;
      this.state = "released";
      const issued = Math.max(this.notBefore, this.#gen?.issuedThroughMs ?? 0);
      const ttl = this.#o.ttl;
      await within(
        this.#store.release(this.#ticket, issued),
        ttl,
        `release of ${this._what()} got no reply within ${ttl} ms`,
      );
    })();
    return this.#released;
  }
}

/** Acquires a lease of the checked options `o` from `store`, made by `make(store, o,
 * token, sentAt, grant)`; resolves once it is usable (else releases it and rejects). */
export async function acquireLease(make, store, o) {
  const token = newToken();
  const sentAt = performance.now();
  let grant;
  try {
    grant = await store.acquire(acquireArgs(o, token));
  } catch (e) {
    throw storeError(e);
  }
  const lease = make(store, o, token, sentAt, grant);
  try {
    await lease._usable();
  } catch (e) {
    await lease.release().catch(() => {});
    throw e;
  }
  return lease;
}
