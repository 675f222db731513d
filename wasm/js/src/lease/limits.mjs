// The limits of a lease's settings, the same in every client and store of the protocol
// (lease/PROTOCOL.md, "Limits"): the Node holder, the Workers client and its Durable
// Object, the HTTP handler, and the Rust crate, whose constants (lease/src/limits.rs)
// its tests check against this file. Lengths are of JavaScript strings (UTF-16 units).

/** The shortest TTL of a space, ms. */
export const MIN_TTL_MS = 100;
/** The longest TTL of a space, ms: a year (365 days), for browsers that lease over HTTP
 * and issue offline until their fence. */
export const MAX_TTL_MS = 31_536_000_000;
/** The shortest renewal period, ms (the longest is below `ttl - skew`). */
export const MIN_RENEW_EVERY_MS = 10;
/** The widest node field a space leases ids for (2^32 ids). */
export const MAX_NODE_BITS = 32;
/** The longest space name. */
export const MAX_SPACE_NAME = 1024;
/** The longest holder description. */
export const MAX_HOLDER = 1024;
/** The longest lease token a store takes. */
export const MAX_TOKEN = 256;
