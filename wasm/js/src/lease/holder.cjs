"use strict";
// The holder of a node id lease in Node, shared by every store's client
// (`snowdrift/redis`, `snowdrift/postgres`): the state machine of rules.mjs
// (`HeldLease`: the fence, the wait until usable, a renewal, the lapse, lost, release),
// driven by one timer that asks the rules (`decide`) what to do at least every WATCH_MS
// and exactly when the lapse or the next regular renewal comes, and every live lease
// released on SIGINT, SIGTERM and at exit. The stores are the objects of calls rules.mjs describes.
const { hostname } = require("node:os");
// The package's Node entry, beside this file once built (the build leaves it external).
const api = require("./node.cjs");
// Bundled in by `cargo xtask npm` (node.cjs stays a separate file: one wasm instance).
const { HeldLease, POLL_MS, acquireLease, leaseOptions: checkLease, storeError, within } = require("./rules.mjs");

// How often a lease asks whether its generator is near the fence (rules.mjs).
const WATCH_MS = POLL_MS;
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
  #timer;

  _start() {
    live.add(this);
    hook();
    this.#tick();
  }

  /** Does what the rules say now, and looks again when they say (at most WATCH_MS on). */
  #tick() {
    clearTimeout(this.#timer);
    if (this.state !== "live") return;
    let d = this._decide(true);
    if (d.action === "renew") {
      this._renew();
      d = this._decide(true);
    }
    if (d.action === "lapse") return this._lapse();
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, Math.min(WATCH_MS, d.next ?? WATCH_MS)));
    this.#timer.unref();
  }

  _stopped() {
    clearTimeout(this.#timer);
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
