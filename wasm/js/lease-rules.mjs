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
