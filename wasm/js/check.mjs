// Argument checks for every JS entry of the package (`api.mjs`, `snowdrift/browser`,
// `snowdrift/redis`), with one set of messages: a TypeError for a value of the wrong type
// ("node must be a number, got string \"3\""), a RangeError for a value outside its range,
// naming the value and the allowed range ("node 1024 is outside the allowed range
// 0..=1023", "maxNodes 1.5 is not an integer (allowed 1..=1024)"), and for an option name
// that is not one ("unknown Snowdrift option \"nod\" (allowed: ...)"). `cargo xtask npm`
// bundles it into each of them.

/** A value as a user would write it, for messages. */
export function describe(v) {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}n`;
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

const typeName = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** The TypeError for `what` not being `expected`. */
export const wrongType = (what, expected, v) =>
  new TypeError(`${what} must be ${expected}, got ${typeName(v)} ${describe(v)}`);

/** The RangeError for a number outside `min..=max` or not an integer, else undefined. */
export function intError(what, x, min, max) {
  // As the core sees it: finite values beyond ±2^63 are not integers it could take.
  const fraction = Number.isFinite(x) && (!Number.isInteger(x) || Math.abs(x) > 2 ** 63);
  if (x >= min && x <= max && !fraction) return undefined;
  return new RangeError(
    fraction
      ? `${what} ${describe(x)} is not an integer (allowed ${min}..=${max})`
      : `${what} ${describe(x)} is outside the allowed range ${min}..=${max}`,
  );
}

/** An integer `number` in `min..=max`. */
export function intArg(what, v, min, max) {
  if (typeof v !== "number") throw wrongType(what, "a number", v);
  const e = intError(what, v, min, max);
  if (e) throw e;
  return v;
}

/** `obj[key]` checked by `intArg`, or `fallback` when it is undefined. */
export const optInt = (obj, key, min, max, fallback) =>
  obj[key] === undefined ? fallback : intArg(key, obj[key], min, max);

/** A string. */
export function strArg(what, v) {
  if (typeof v !== "string") throw wrongType(what, "a string", v);
  return v;
}

/** One of the strings `allowed`. */
export function oneOf(what, v, allowed) {
  if (!allowed.includes(strArg(what, v))) {
    throw new RangeError(`${what} ${describe(v)} is not one of ${allowed.map(describe).join(", ")}`);
  }
  return v;
}

/** A boolean. */
export function boolArg(what, v) {
  if (typeof v !== "boolean") throw wrongType(what, "a boolean", v);
  return v;
}

/** A function, or undefined. */
export function optFn(what, v, expected = "a function") {
  if (v !== undefined && typeof v !== "function") throw wrongType(what, expected, v);
  return v;
}

/** An options object (undefined reads as `{}`) whose keys are all in `known`: a typo such
 * as `nod: 3` is an error, not an option silently left out. */
export function options(what, obj, known) {
  if (obj === undefined) return {};
  if (typeof obj !== "object" || obj === null || Array.isArray(obj))
    throw wrongType(`${what} options`, "an object", obj);
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      throw new RangeError(`unknown ${what} option ${describe(key)} (allowed: ${known.join(", ")})`);
    }
  }
  return obj;
}
