"use strict";
// The holder of a node id lease in Node, shared by every store's client
// (`snowdrift/redis`, `snowdrift/postgres`): the state machine of lease-rules.mjs
// (`HeldLease`: the fence, the wait until usable, a renewal, the lapse, lost, release),
// driven by timers (the heartbeat every `renewEvery` ms, an early renewal when the
// generator nears its fence, checked every WATCH_MS, the lapse `ttl - skew` ms after the
// newest successful renewal was sent), and every live lease released on SIGINT,
// SIGTERM and at exit. The stores are the objects of calls lease-rules.mjs describes.
const { hostname } = require("node:os");
const api = require("./node.cjs");
// Bundled in by `cargo xtask npm` (node.cjs stays a separate file: one wasm instance).
const { HeldLease, acquireLease, leaseOptions: checkLease, storeError, within } = require("./lease-rules.mjs");

// How often a lease checks whether its generator is near the fence (lease-rules.mjs).
const WATCH_MS = 100;
// How long releasing on a signal or at exit may hold the process.
const EXIT_RELEASE_MS = 1000;

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

/** A node id leased from a store, renewed by timers. Made by `leaseNode`. */
class Lease extends HeldLease {
  #renewTimer;
  #watchTimer;
  #lapseTimer;

  _start() {
    this.#armLapse();
    this.#beat();
    this.#watchTimer = setInterval(() => {
      if (this._nearFence()) this._renew();
    }, WATCH_MS);
    this.#watchTimer.unref();
    live.add(this);
    hook();
  }

  #beat() {
    this.#renewTimer = setTimeout(() => {
      if (this.state !== "live") return;
      this._renew();
      this.#beat();
    }, this._options.renewEvery);
    this.#renewTimer.unref();
  }

  #armLapse() {
    clearTimeout(this.#lapseTimer);
    const { ttl, skew } = this._options;
    this.#lapseTimer = setTimeout(() => this._lapse(), Math.max(0, ttl - skew - this._sinceRenewal()));
    this.#lapseTimer.unref();
  }

  _renewed() {
    this.#armLapse();
  }

  _stopped() {
    clearTimeout(this.#renewTimer);
    clearInterval(this.#watchTimer);
    clearTimeout(this.#lapseTimer);
    live.delete(this);
    if (live.size === 0) unhook();
  }
}
Object.defineProperty(Lease, "name", { value: "Lease" });

/** Checks `leaseNode`'s options (before any call to the store). */
const leaseOptions = (options, checkSpace, extra) =>
  checkLease(api, options, { checkSpace, extra, holder: `node pid ${process.pid} on ${hostname()}` });

/** Leases a node id of the space `o.space` from `store` (options checked by
 * `leaseOptions`); resolves once the lease is usable. */
async function lease(store, o) {
  const l = await acquireLease((...args) => new Lease(api, ...args), store, o);
  l._start();
  return l;
}

module.exports = { Lease, lease, leaseOptions, storeError, within };
