// Values and errors across the wasm boundary: the wasm instance (set once, by `init`), its
// memory seen through typed arrays, text in and out of its buffer, the errors a call
// records there, and ID arguments and results.
import { buffers, initSync, parse_decimal } from "../snowdrift_wasm.js";
import { provide } from "../host.mjs";
import { describe, numberId, outOfRange, wrongType } from "../check.mjs";
import { withCode } from "../error-codes.mjs";
// The numbers shared with the wasm (error kinds, policy codes, fact fields, buffer
// offsets): written by `cargo xtask npm` from wasm/src/shared.rs.
import { ERR_RANGE, IO_ERR, IO_NUM, IO_ERR_CODE, IO_ERR_KIND, IO_ERR_LEN, IO_TEXT, TEXT_CAP } from "../constants.mjs";
import { readClock, takeClockError } from "./clocks.mjs";

const MAX_ID = 0xffffffffffffffffn;

/** The instance's exports (its memory), and the address of its I/O buffer. */
let w;
export let io = 0;
/** Where `decode` writes its fields (an index of `f64`), and the text buffer's address. */
export let numAt = 0,
  textAt = 0;
/** Views of the wasm memory: new ones after it grows (`views`). */
export let u8, u32, f64, u64;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Instantiates the compiled `module` (once: the glue holds one instance per copy of this
 * module); the imports it calls (host.mjs) are provided first. */
export function init(module) {
  provide({
    clock: readClock,
    random(ptr, len) {
      crypto.getRandomValues(new Uint8Array(w.memory.buffer, ptr, len));
    },
    // A failed gen_next ends here: the error it recorded, thrown past the wasm.
    raise(kind) {
      throw takeError(kind);
    },
  });
  w = initSync({ module });
  io = buffers();
  numAt = (io + IO_NUM) >> 3;
  textAt = io + IO_TEXT;
  views();
}

/** New views after the memory grew (only calls that allocate can grow it). */
export function views() {
  const b = w.memory.buffer;
  u8 = new Uint8Array(b);
  u32 = new Uint32Array(b);
  f64 = new Float64Array(b);
  u64 = new BigUint64Array(b);
}

/** The `n` bytes of text a call wrote into the buffer. */
export const textOut = (n) => String.fromCharCode.apply(null, u8.subarray(io + IO_TEXT, io + IO_TEXT + n));

/** Writes `s` into the text buffer; returns its length in bytes. */
export function textIn(what, s) {
  // Short ASCII (every text form of an ID) byte by byte; anything else through TextEncoder.
  const n = s.length;
  if (n <= 64) {
    const t = io + IO_TEXT;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) break;
      u8[t + i] = c;
    }
    if (i === n) return n;
  }
  const { read, written } = encoder.encodeInto(s, u8.subarray(io + IO_TEXT, io + IO_TEXT + TEXT_CAP));
  if (read < s.length) {
    throw new RangeError(`${what} ${describe(`${s.slice(0, 32)}...`)} is too long (${s.length} characters)`);
  }
  return written;
}

/** The kind of error the last call recorded (0: none). */
export const errorKind = () => u32[(io + IO_ERR_KIND) >> 2];

/** The error the last call recorded (of `kind`, read from wasm memory unless given): the
 * clock's own if it failed, else the core's. */
export function takeError(kind = errorKind()) {
  const clock = takeClockError();
  if (clock) return clock.error;
  const message = decoder.decode(u8.subarray(io + IO_ERR, io + IO_ERR + u32[(io + IO_ERR_LEN) >> 2]));
  return withCode(kind === ERR_RANGE ? new RangeError(message) : new Error(message), u32[(io + IO_ERR_CODE) >> 2]);
}

/** The core's error (a value out of range, a text form), as a RangeError that names what
 * it was about, with the core's code. */
export function reworded(message) {
  const e = takeError();
  const out = new RangeError(`${message}: ${e.message}`);
  if (e.code !== undefined) out.code = e.code;
  return out;
}

/** The error of text that is no ID of `form`. */
export const parseError = (form, input) => reworded(`invalid ${form} id ${describe(input)}`);

/** An ID result of wasm: the bits as an unsigned bigint, or the recorded error. */
export function idOut(r, onError = takeError) {
  if (r >= 0n) return r;
  if (r === -1n && errorKind() !== 0) throw onError();
  return BigInt.asUintN(64, r);
}

/** An ID argument: a `bigint` in 0..=2^64-1, its decimal string, or a `number` in 0..=2^53-1. */
export function idArg(what, v) {
  if (typeof v === "bigint") {
    if (v >= 0n && v <= MAX_ID) return v;
    throw outOfRange(`${what} ${describe(v)} is outside the allowed range 0..=18446744073709551615`);
  }
  if (typeof v === "string") return idOut(parse_decimal(textIn(what, v)), () => parseError("decimal", v));
  if (typeof v === "number") return numberId(what, v);
  throw wrongType(what, "a bigint, a decimal string or a number", v);
}
