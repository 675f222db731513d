// A space's data in Redis (lease/PROTOCOL.md, "Redis"): its four keys, in the scripts'
// KEYS order, and list.lua's reply read. `snowdrift/redis` and the tests read both from
// here; the Rust crate keeps its own in lease/src/store/redis.rs.

/** The names of a space's keys, in the scripts' KEYS order. */
export const KEY_NAMES = ["meta", "ends", "token", "holder"];

/** The four keys of a space: one hash tag, so one Redis Cluster hash slot. */
export const keysOf = (space) => KEY_NAMES.map((k) => `{${space}}:${k}`);

/** A number of list.lua's reply: an integer, or a string that is one, or empty (null). */
function listedNumber(v) {
  if (v === "" || v === null || v === undefined) return null;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`list.lua returned ${JSON.stringify(v)} where a number belongs`);
  return n;
}

/** list.lua's reply as a space's listing: its settings (null when it does not exist) and
 * every id ever leased, oldest fence first. */
export function listing(reply) {
  if (!Array.isArray(reply) || reply.length < 6 || (reply.length - 6) % 3 !== 0) {
    throw new Error(`list.lua returned ${Array.isArray(reply) ? reply.length : typeof reply} values, not 6 + 3 per id`);
  }
  const [nowMs, capacity, ttlMs, skewMs, createdMs, next] = reply.slice(0, 6).map(listedNumber);
  const leases = [];
  for (let i = 6; i < reply.length; i += 3) {
    const holder = reply[i + 2];
    leases.push({
      node: listedNumber(reply[i]),
      untilMs: listedNumber(reply[i + 1]),
      holder: holder === "" || holder === null ? null : String(holder),
    });
  }
  return { nowMs, capacity, ttlMs, skewMs, createdMs, next, leases };
}
