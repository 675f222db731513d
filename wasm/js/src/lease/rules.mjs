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
//   renew({ space, node, token, next }, ttl) -> until (the lease's token is `next` from then on)
//   release({ space, node, token, next }, issued) -> anything
import {
  describe,
  intError,
  optFn,
  optInt,
  options as checkOptions,
  outOfRange,
  strArg,
  wrongType,
} from "../check.mjs";
import { MAX_HOLDER, MAX_NODE_BITS, MAX_SPACE_NAME, MAX_TTL_MS, MIN_RENEW_EVERY_MS, MIN_TTL_MS } from "./limits.mjs";
import { report, track } from "./metrics.mjs";

/** The options of `leaseNode`, whatever the store. */
export const OPTIONS = ["key", "layout", "region", "ttlMs", "skewMs", "renewEveryMs", "holder", "clock", "onEvent"];
// Generator options a lease decides itself.
const FIXED = ["layout", "node", "datacenter", "worker", "resumeAfter"];
const CODE = /^(LEASED|CONFIG|LOST) /;

/** A space's region `{ bits, id }` checked against a node field of `nodeBits`: the top
 * `bits` (1 to `nodeBits - 1`) hold `id` (below 2^bits) in every ID of the space. */
function regionArg(region, nodeBits) {
  const r = checkOptions("region", region, ["bits", "id"]);
  for (const k of ["bits", "id"]) {
    if (typeof r[k] !== "number") throw wrongType(`region.${k}`, "a number", r[k]);
  }
  const bitsError = intError("region.bits", r.bits, 1, nodeBits - 1);
  if (bitsError) {
    throw outOfRange(`${bitsError.message} (the layout's node field has ${nodeBits} bits; at least one is leased)`);
  }
  const idError = intError("region.id", r.id, 0, 2 ** r.bits - 1);
  if (idError) throw outOfRange(`${idError.message} (the ids of ${r.bits} region bits)`);
  return { bits: r.bits, id: r.id };
}

/** What a lease needs to know of a layout: its node bits, epoch and tick, and `text`, the
 * layout as the space records it: the same text the Rust crate's `Space::layout_text`
 * gives, so Rust and JS clients of one layout share a space. With a `region` (`{ bits,
 * id }`, checked here), the store leases the worker bits below it (`capacity`), the text
 * ends with ", region ID of BITS bits", and a leased id `n` is the node id `base + n`. */
export function layoutFacts(api, layout, region) {
  const { timeBits, nodeBits, sequenceBits, unitMs, epochMs, order: o } = api.layoutInfo(layout);
  if (nodeBits > MAX_NODE_BITS) {
    throw new RangeError(`the layout has ${nodeBits} node bits; leases cover at most ${MAX_NODE_BITS}`);
  }
  // With an empty node or sequence field the order cannot be seen in an ID: Rust names it
  // "node above sequence" then.
  const order =
    nodeBits === 0 || sequenceBits === 0 || o === "node-sequence" ? "node above sequence" : "sequence above node";
  let text = `time ${timeBits} bits of ${unitMs} ms from ${epochMs}, node ${nodeBits} bits, sequence ${sequenceBits} bits, ${order}`;
  let workerBits = nodeBits;
  let base = 0;
  if (region !== undefined) {
    const r = regionArg(region, nodeBits);
    workerBits = nodeBits - r.bits;
    base = r.id * 2 ** workerBits;
    text += `, region ${r.id} of ${r.bits} bits`;
  }
  return { capacity: 2 ** workerBits, base, epochMs, tickMs: unitMs, bits: timeBits + nodeBits + sequenceBits, text };
}

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
export function leaseOptions(api, options, { checkSpace = () => {}, extra = [], holder }) {
  options = checkOptions("leaseNode", options, [...OPTIONS, ...extra]);
  const space = strArg("key", options.key);
  if (space.length === 0) throw new RangeError("key must not be empty");
  if (space.length > MAX_SPACE_NAME) {
    throw new RangeError(`key has ${space.length} characters (allowed 1..=${MAX_SPACE_NAME})`);
  }
  checkSpace(space);
  const facts = layoutFacts(api, options.layout, options.region);
  const ttl = optInt(options, "ttlMs", MIN_TTL_MS, MAX_TTL_MS, 10_000);
  const maxSkew = Math.ceil(ttl / 2) - 1; // below ttlMs / 2
  if (options.skewMs === undefined && maxSkew < 1000) {
    throw new RangeError(
      `skewMs 1000 (the default) is outside the allowed range 0..=${maxSkew} (below ttlMs / 2): give skewMs`,
    );
  }
  const skew = optInt(options, "skewMs", 0, maxSkew, 1000);
  const renewEvery = optInt(options, "renewEveryMs", MIN_RENEW_EVERY_MS, ttl - skew - 1, Math.floor(ttl / 3));
  const holderText = strArg("holder", options.holder ?? holder);
  if (holderText.length > MAX_HOLDER) {
    throw new RangeError(`holder has ${holderText.length} characters (allowed 0..=${MAX_HOLDER})`);
  }
  optFn("clock", options.clock, "a function returning Unix milliseconds");
  optFn("onEvent", options.onEvent, "a function (event, data) hearing the lease's events");
  return {
    space,
    facts,
    ttl,
    skew,
    renewEvery,
    holder: options.holder ?? holder,
    layout: options.layout,
    clock: options.clock,
    onEvent: options.onEvent,
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

// The holder's rules (lease/PROTOCOL.md, "What a holder does"), the same in Rust
// (lease/src/rules.rs) and checked against one table of situations
// (tests/vectors/holder.json). While a lease is not usable yet, and between early
// renewals, a holder waits this long:
export const POLL_MS = 100;
// A generator whose newest ID is this close to its fence (ms of ID time; at most `ttl -
// renewEvery`) renews early, every POLL_MS at most. A new space's first leases are
// fenced a TTL ahead of the store's clock, and only renewals give them more ID time.
export const NEAR_FENCE_MS = 1000;

/**
 * The wait before a client calls the store again after a call failed (a full space, `LOST`,
 * the store unreachable): doubling from `POLL_MS` up to `RETRY_MAX_MS`, each wait drawn at
 * random between half and all of it, so that clients that failed together do not come
 * back together, and an app that keeps asking (every request, every `next()`) is answered
 * with the last error meanwhile instead of a call to the store. A success starts over.
 */
export const RETRY_MAX_MS = 30_000;
export class Backoff {
  #failures = 0;
  #until = Number.NEGATIVE_INFINITY;
  #error;

  /** The last failure, while its wait runs (`now` from `performance.now()`), else undefined. */
  waiting(now) {
    return now < this.#until ? this.#error : undefined;
  }

  /** A call failed with `error` at `now`: the next one waits. */
  failed(error, now) {
    const full = Math.min(RETRY_MAX_MS, POLL_MS * 2 ** Math.min(this.#failures, 20));
    this.#failures++;
    this.#until = now + full / 2 + (Math.random() * full) / 2;
    this.#error = error;
  }

  /** A call succeeded: the next failure waits the shortest time again. */
  succeeded() {
    this.#failures = 0;
    this.#until = Number.NEGATIVE_INFINITY;
    this.#error = undefined;
  }
}

/** Whether a lease fenced at `until` has a tick of `tickMs` to issue in after `notBefore`. */
export const usable = (until, notBefore, tickMs) => until - notBefore > tickMs;

/**
 * What a holder does now: the decision core every JS holder drives (Node's timers, a
 * Worker's `keep(ctx)`, the HTTP handler's `ids`, the browser client's usable wait), pure:
 * the situation in, the decision out. Times are ms of one monotonic clock.
 *
 * Situation: `live` (false once lapsed, lost or released), `now`, `acquireSentAt` (when
 * the acquire was sent), `okSentAt` (when the newest successful call, acquire or renew,
 * was sent), `sentAt` (when the newest renewal, or the acquire, was sent), `pending` (the
 * newest renewal has no answer yet; one is not waited for past POLL_MS while the lease is
 * not usable, or past `renewEvery` once it is: another is sent then), `until`, `notBefore`, `issuedThrough` (the
 * generator's newest ID time; null before it exists), `ttl`, `skew`, `renewEvery`,
 * `tick` (the layout's unit), `background` (the driver can leave a renewal running after
 * its caller returns).
 *
 * Decision `{ action, wait, next }`, `action` one of:
 * - `stopped`: the lease is not live; its error is final.
 * - `lapse`: `ttl - skew` passed since the newest successful call was sent: stop for good.
 * - `give-up`: not usable `ttl + skew` after the acquire was sent (renewals succeed but do
 *   not move the fence: the store's clock stands still or went back).
 * - `renew`: send a renewal now; `wait`: the caller awaits it (bounded by the lapse).
 * - `await`: a renewal is pending and the caller awaits it (bounded by the lapse).
 * - `sleep`: not usable yet; renew again in `next` ms.
 * - `none`: nothing to do; ask again within `next` ms (when the lapse or the next
 *   regular renewal comes; an early renewal needs asking every POLL_MS).
 */
export function decide(s) {
  if (!s.live) return { action: "stopped" };
  const lapseIn = s.okSentAt + s.ttl - s.skew - s.now;
  if (lapseIn <= 0) return { action: "lapse" };
  const sinceSent = s.now - s.sentAt;
  if (!usable(s.until, s.notBefore, s.tick)) {
    if (s.now - s.acquireSentAt >= s.ttl + s.skew) return { action: "give-up" };
    if (sinceSent >= POLL_MS) return { action: "renew", wait: true };
    const next = Math.min(POLL_MS - sinceSent, lapseIn);
    return s.pending ? { action: "await", wait: true, next } : { action: "sleep", next };
  }
  const near = s.issuedThrough !== null && s.until - s.issuedThrough < Math.min(NEAR_FENCE_MS, s.ttl - s.renewEvery);
  // A caller awaits the renewal when the generator nears its fence, when the driver has
  // no background, and once half of `ttl - skew` passed with no renewal succeeding.
  const wait = near || !s.background || 2 * (s.now - s.okSentAt) >= s.ttl - s.skew;
  if (sinceSent >= s.renewEvery || (near && !s.pending && sinceSent >= POLL_MS)) return { action: "renew", wait };
  let next = Math.min(s.renewEvery - sinceSent, lapseIn);
  if (near && !s.pending) next = Math.min(next, POLL_MS - sinceSent);
  return s.pending && wait ? { action: "await", wait, next } : { action: "none", next };
}

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

/** Resolves when `p` settles or `ms` pass, whichever is first (never rejects). */
function settled(p, ms) {
  let timer;
  const time = new Promise((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  return Promise.race([
    p?.then(
      () => {},
      () => {},
    ),
    time,
  ]).finally(() => clearTimeout(timer));
}

// Bounds the loops of a driver: each pass waits or ends, and the lapse ends them all.
const MAX_STEPS = 100_000;

/**
 * The holder's state machine of one lease, whatever the runtime: the fence, a renewal
 * and its bookkeeping, the lapse, lost, the generator and the release, with `decide`
 * saying what to do. Drivers only do the I/O `decide` asks for: the wait until usable
 * (`_usable`, every runtime), timers in Node (`holder.cjs`), `keep(ctx)` in each request
 * in Workers (`cloudflare.js`) and in the HTTP handler (`http.mjs`). Every await of
 * a store call is bounded by the lapse. Subclasses hear of the stop (`_stopped`).
 */
export class HeldLease {
  #api;
  #store;
  #ticket;
  #o;
  #gen;
  #acquireSentAt; // performance.now() when the acquire was sent
  #okSentAt; // performance.now() when the newest successful call was sent
  #sentAt; // performance.now() when the newest renewal (or the acquire) was sent
  #renewing; // the newest renewal, while it has no answer
  #next; // the token sent to replace the lease's, while no renewal sent with it succeeded
  #controller = new AbortController();
  #released;
  #renewals = 0; // renewals the store accepted
  #renewalFailures = 0; // renewals that failed (LOST included)
  #lastLatency = null; // ms the newest answered renewal took

  constructor(api, store, o, token, sentAt, grant) {
    this.#api = api;
    this.#store = store;
    this.#o = o;
    // The store's calls name the leased id; the IDs carry it under the space's region.
    this.#ticket = { space: o.space, node: grant.node, token };
    this.#acquireSentAt = sentAt;
    this.#okSentAt = sentAt;
    this.#sentAt = sentAt;
    /** The node id the lease's IDs carry (the region above the leased id, if any). */
    this.node = o.facts.base + grant.node;
    /** The ID time (Unix ms) this lease never issues at or before. */
    this.notBefore = grant.notBefore;
    /** The fence: the lease's end (Unix ms of the store's clock); IDs are timed before it. */
    this.until = grant.until;
    /** "live", "lapsed", "lost" or "released". */
    this.state = "live";
    /** Why the lease stopped (undefined while live). */
    this.error = undefined;
    track(this, true);
    this._report("acquire", { notBefore: grant.notBefore, until: grant.until, latencyMs: performance.now() - sentAt });
  }

  /** Reports `event` (metrics.mjs): counted, published to its diagnostics channel,
   * passed to the `onEvent` option. */
  _report(event, data) {
    report(this.#o.space, event, { space: this.#o.space, node: this.node, ...data }, this.#o.onEvent);
  }

  /**
   * The lease's health now, by the holder's rules (`decide`), with its times as Unix ms:
   * - `ok`: live, and the newest successful call (acquire or renewal) was sent less than
   *   half of `ttl - skew` ago;
   * - `renewing late`: live, and half of `ttl - skew` or more passed since then (from
   *   there on callers await the renewal: `decide`'s `wait`);
   * - `lapsed`: `ttl - skew` passed with no renewal succeeding: the lease stopped (a
   *   lease found so here stops now, as `keep` would stop it);
   * - `lost`: the store answered LOST (another holder has the id, or the store lost it);
   * - `released`.
   * `clock` is the generator's `stats()` (null before it exists).
   */
  health() {
    if (this.state === "live" && this._decide(true).action === "lapse") this._lapse();
    const now = performance.now();
    const wall = Date.now();
    const unix = (t) => Math.round(wall - (now - t));
    const { ttl, skew, space } = this.#o;
    const since = now - this.#okSentAt;
    let state = this.state;
    if (state === "live") state = 2 * since >= ttl - skew ? "renewing late" : "ok";
    const through = this.#gen?.issuedThroughMs ?? null;
    let clock = null;
    try {
      clock = this.#gen?.stats() ?? null;
    } catch {} // a freed generator
    return {
      state,
      space,
      node: this.node,
      fenceMs: this.until,
      notBeforeMs: this.notBefore,
      lastRenewalMs: unix(this.#okSentAt),
      sinceRenewalMs: Math.round(since),
      lateAtMs: unix(this.#okSentAt + (ttl - skew) / 2),
      lapseAtMs: unix(this.#okSentAt + ttl - skew),
      issuedThroughMs: through,
      fenceDistanceMs: through === null ? null : Math.max(0, this.until - through),
      aheadMs: clock?.aheadMs ?? null,
      clock,
      renewals: this.#renewals,
      renewalFailures: this.#renewalFailures,
      lastRenewalLatencyMs: this.#lastLatency,
      error: this.error,
    };
  }

  /** Aborted when the lease stops, with `error` as its reason. */
  get signal() {
    return this.#controller.signal;
  }

  _what() {
    return `lease of node ${this.node} of '${this.#o.space}'`;
  }

  /** What to do now (`decide`), for a driver that can (`background`) or cannot leave a
   * renewal running after its caller returns. */
  _decide(background) {
    const { ttl, skew, renewEvery, facts } = this.#o;
    return decide({
      live: this.state === "live",
      now: performance.now(),
      acquireSentAt: this.#acquireSentAt,
      okSentAt: this.#okSentAt,
      sentAt: this.#sentAt,
      pending: this.#renewing !== undefined,
      until: this.until,
      notBefore: this.notBefore,
      issuedThrough: this.#gen?.issuedThroughMs ?? null,
      ttl,
      skew,
      renewEvery,
      tick: facts.tickMs,
      background,
    });
  }

  /** Waits until the lease has a tick to issue in (a new space's first `skew` ms). */
  async _usable() {
    const { ttl, skew, facts } = this.#o;
    for (let i = 0; i < MAX_STEPS && !usable(this.until, this.notBefore, facts.tickMs); i++) {
      const d = this._decide(false);
      if (d.action === "lapse") this._lapse();
      if (d.action === "give-up") {
        throw new Error(
          `${this._what()} is not usable after ${ttl + skew} ms (fence ${this.until}, not before ${this.notBefore})`,
        );
      }
      if (this.state !== "live") throw this.error;
      if (d.action === "renew") this._renew();
      else if (d.action === "await") await settled(this.#renewing, d.next);
      else await sleep(d.next);
    }
  }

  /**
   * The per-request driver (Workers, the HTTP handler), cheap unless a renewal is due:
   * lapses the lease when no renewal succeeded for `ttl - skew` ms, renews when `decide`
   * says so (in the background through `ctx.waitUntil` when the caller gives one and
   * need not wait, else awaited), awaits a pending renewal when it must, never past the
   * lapse, and throws the lease's error once it stopped.
   */
  async keep(ctx) {
    const background = typeof ctx?.waitUntil === "function";
    for (let i = 0; i < MAX_STEPS && this.state === "live"; i++) {
      const d = this._decide(background);
      if (d.action === "lapse") this._lapse();
      else if (d.action === "renew") {
        const p = this._renew();
        if (d.wait) continue;
        ctx.waitUntil(p);
      } else if (d.action === "await") {
        await settled(this.#renewing, d.next);
        continue;
      }
      break;
    }
    if (this.state !== "live") throw this.error;
  }

  /** Sends a renewal; failures other than LOST are left for the next one. A reply that
   * comes late (a client queueing commands while the store is away) counts from when it
   * was sent. Resolves when it is answered (never rejects). */
  _renew() {
    const sentAt = performance.now();
    this.#sentAt = sentAt;
    const p = this.#renewOnce(sentAt);
    this.#renewing = p;
    // Runs after the assignment even when the store's call failed at once.
    p.finally(() => {
      if (this.#renewing === p) this.#renewing = undefined;
    });
    return p;
  }

  async #renewOnce(sentAt) {
    // The token changes at every renewal (lease/PROTOCOL.md, "Tokens"), so that of two
    // copies of one holder (a VM snapshot resumed beside the original) the one that
    // renews second gets LOST. A renewal is drawn a new token when none is pending, else
    // sends the pending one again: the store takes a pair it already applied as the same
    // renewal sent again (its reply lost).
    this.#next ??= newToken();
    const ticket = { ...this.#ticket, next: this.#next };
    let until;
    try {
      until = await this.#store.renew(ticket, this.#o.ttl);
    } catch (e) {
      const latencyMs = performance.now() - sentAt;
      this.#renewalFailures++;
      this.#lastLatency = latencyMs;
      this._report("renew-failed", { error: e, latencyMs });
      // LOST for a token this holder already replaced is its own renewal overtaking this
      // one (calls on several connections), not another holder's.
      if (codeOf(e) === "LOST" && this.#ticket.token === ticket.token) this._stop("lost", storeError(e));
      return;
    }
    const latencyMs = performance.now() - sentAt;
    this.#renewals++;
    this.#lastLatency = latencyMs;
    this._report("renew", { until, latencyMs });
    if (this.#ticket.token === ticket.token) {
      this.#ticket.token = ticket.next;
      this.#next = undefined;
    }
    if (this.state !== "live") return;
    // A reply that comes after the lapse was due does not count: the lease lapsed.
    if (this._decide(true).action === "lapse") return this._lapse();
    if (until > this.until) this.until = until;
    this.#gen?.setFenceMs(this.until);
    if (sentAt > this.#okSentAt) this.#okSentAt = sentAt;
  }

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
    track(this, false);
    this._report(state === "lapsed" ? "lapse" : state === "lost" ? "lost" : "release", { error });
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
        this.#store.release({ ...this.#ticket, next: this.#next }, issued),
        ttl,
        `release of ${this._what()} got no reply within ${ttl} ms`,
      );
    })();
    return this.#released;
  }
}

/** Acquires a lease of the checked options `o` from `store`, made by `make(store, o,
 * token, sentAt, grant)`; resolves once it is usable (else releases it and rejects). A
 * grant that comes `ttl - skew` ms or more after the acquire was sent would lapse at once:
 * the acquire is given up then (and a grant that still comes is released). */
export async function acquireLease(make, store, o) {
  const token = newToken();
  const sentAt = performance.now();
  const args = acquireArgs(o, token);
  const asked = Promise.resolve(store.acquire(args));
  const live = o.ttl - o.skew;
  let grant;
  try {
    grant = await within(
      asked,
      live,
      `acquire of a node id of '${o.space}' got no reply within ${live} ms (ttl - skew)`,
      true,
    );
  } catch (e) {
    asked
      .then(
        (g) => store.release({ space: o.space, node: g.node, token }, g.notBefore),
        () => {},
      )
      .catch(() => {});
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
