// Argument checks for every JS entry of the package (`api.mjs`, `snowdrift/browser`,
// `snowdrift/redis`), with one set of messages: a TypeError for a value of the wrong type
// ("node must be a number, got string \"3\""), a RangeError for a value outside its range,
// naming the value and the allowed range ("node 1024 is outside the allowed range
// 0..=1023", "maxNodes 1.5 is not an integer (allowed 1..=1024)"), and for an option name
// that is not one ("unknown Snowdrift option \"nod\" (allowed: ...)"). `cargo xtask npm`
// bundles it into each of them.
//
// A number outside its range is a RangeError with the code `"OutOfRange"`, as the core
// has it (`error-codes.mjs` says what codes are); a wrong type, an unknown option or a
// value outside a list of names has no `code`.

/** A RangeError with the code `"OutOfRange"`: a value outside its allowed range. */
export function outOfRange(message) {
  const error = new RangeError(message);
  error.code = "OutOfRange";
  return error;
}

/** Whether `e` is a generator's refusal at its fence (the core's `PastFence`): IDs reached
 * the end of a lease or a reservation. */
export const pastFence = (e) => e?.code === "PastFence";

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
  return outOfRange(
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

/** The largest integer a Number holds exactly, and every one below it: 2^53 - 1. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** The largest unsigned 32-bit integer (the wasm's u32 arguments). */
export const MAX_U32 = 4294967295;

/** An ID given as a `number`, as a bigint: an integer in 0..=2^53 - 1. Past 2^53 - 1 a
 * Number holds only some integers, so the ID it was made from may have lost its low bits:
 * a RangeError says so rather than take another ID. */
export function numberId(what, v) {
  if (v > MAX_SAFE && v !== Number.POSITIVE_INFINITY) {
    throw outOfRange(
      `${what} ${describe(v)} is above 2^53 - 1 (${MAX_SAFE}): a Number cannot hold it exactly, so it may have lost precision; pass the ID as a bigint or a decimal string`,
    );
  }
  const e = intError(what, v, 0, MAX_SAFE);
  if (e) throw e;
  return BigInt(v);
}

/** What `nextNumber()` throws on a layout of `bits` (> 53) bits, before issuing any ID. */
export const numberRefused = (bits) =>
  new RangeError(
    `nextNumber() needs a layout of at most 53 bits (a Number holds integers exactly up to 2^53 - 1 = ${MAX_SAFE}); this layout takes ${bits} bits: use next() (a bigint) or nextString(), or the "js53" layout`,
  );

/** A string. */
export function strArg(what, v) {
  if (typeof v !== "string") throw wrongType(what, "a string", v);
  return v;
}

/** A string of `min..=max` characters. */
export function textArg(what, v, min, max) {
  strArg(what, v);
  if (v.length < min || v.length > max) {
    throw outOfRange(`${what} ${describe(v)} has ${v.length} characters (allowed ${min}..=${max})`);
  }
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
