"use strict";
// The holder of a node id lease (lease/PROTOCOL.md, "What a holder does"), shared by every
// store's client (`snowdrift/redis`, `snowdrift/postgres`): the options, the wait until
// usable, the heartbeat, the lapse on the local monotonic clock, the fence, lost,
// release (on demand, on SIGINT/SIGTERM and at exit). A store is an object of four calls:
//
//   acquire({ space, capacity, ttl, skew, token, holder, layout }) -> { node, notBefore, until }
//   renew({ space, node, token }, ttl) -> until
//   release({ space, node, token }, issued) -> anything
//   name: what to call the store in messages ("Redis", "PostgreSQL")
//
// whose errors carry the protocol's code word at the start of their message (`LEASED`,
// `CONFIG`, `LOST`), as the scripts and the SQL functions raise them.
const { hostname } = require("node:os");
const { performance } = require("node:perf_hooks");
const api = require("./node.cjs");
// Bundled in by `cargo xtask npm` (node.cjs stays a separate file: one wasm instance).
const {
  acquireArgs,
  codeOf,
  leaseGenerator,
  leaseOptions: checkLease,
  newToken,
  storeError,
} = require("./lease-rules.mjs");

// While a new (or data-lost) space's first lease is not yet usable, renew this often.
const USABLE_POLL_MS = 100;
// How long releasing on a signal or at exit may hold the process.
const EXIT_RELEASE_MS = 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `p`, or a rejection with `message` after `ms` (the timer never holds the process
 * unless `ref`). */
function within(p, ms, message, ref = false) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    if (!ref) timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// Live leases of every store, released once on SIGINT, SIGTERM or beforeExit.
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

/** A node id leased from a store. Made by `leaseNode`. */
class Lease {
  #store;
  #ticket;
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
    this.#store = init.store;
    this.#ticket = { space: init.space, node: init.node, token: init.token };
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
    /** The fence: the lease's end (Unix ms of the store's clock); IDs are timed before it. */
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
    return `lease of node ${this.node} of '${this.#ticket.space}'`;
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
   * late (a client queueing commands while the store is away) counts from when it was
   * sent; the lapse bounds how many can be pending. */
  async #renew() {
    const sentAt = performance.now();
    try {
      const until = await this.#store.renew(this.#ticket, this.#ttl);
      if (this.state !== "live") return;
      if (until > this.until) this.until = until;
      this.#gen?.setFenceMs(this.until);
      if (sentAt > this.#okSentAt) {
        this.#okSentAt = sentAt;
        this.#armLapse();
      }
    } catch (e) {
      if (codeOf(e) === "LOST" && this.state === "live") this.#stop("lost", storeError(e));
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
    if (this.state !== "live") throw this.error;
    if (this.#gen !== undefined) {
      throw new Error(`${this.#what()} already has its generator (one per lease: a second would repeat IDs)`);
    }
    const lease = {
      clock: this.#clock,
      layout: this.#layout,
      facts: this.#facts,
      node: this.node,
      notBefore: this.notBefore,
      until: this.until,
    };
    this.#gen = leaseGenerator(api, lease, options);
    return this.#gen;
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
    const call = this.#store.release(this.#ticket, issued);
    await within(call, this.#ttl, `release of ${this.#what()} got no reply within ${this.#ttl} ms`);
  }
}
Object.defineProperty(Lease, "name", { value: "Lease" });

/** Checks `leaseNode`'s options (before any call to the store). */
const leaseOptions = (options, checkSpace, extra) =>
  checkLease(api, options, { checkSpace, extra, holder: `node pid ${process.pid} on ${hostname()}` });

/** Leases a node id of the space `o.space` from `store` (options checked by
 * `leaseOptions`); resolves once the lease is usable. */
async function lease(store, o) {
  const token = newToken();
  const sentAt = performance.now();
  let grant;
  try {
    grant = await store.acquire(acquireArgs(o, token));
  } catch (e) {
    throw storeError(e);
  }
  const l = new Lease({ ...o, store, token, sentAt, ...grant });
  try {
    await l._usable();
  } catch (e) {
    await l.release().catch(() => {});
    throw e;
  }
  l._start();
  return l;
}

module.exports = { Lease, lease, leaseOptions, storeError, within };
