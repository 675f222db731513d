// The text forms of an ID: 13 Crockford base32 characters that sort like the number
// (`toBase32`, `fromBase32`), and `parseId` for the forms people write.
import { from_base32, to_base32 } from "../snowdrift_wasm.js";
import { describe, numberId, outOfRange, strArg } from "../check.mjs";
import { idArg, idOut, parseError, textAt, textIn, u8 } from "./interop.mjs";

/** `toBase32(id)`: 13 Crockford base32 characters that sort like the number. */
export function toBase32(id) {
  if (typeof id !== "bigint" || BigInt.asUintN(64, id) !== id) id = idArg("id", id);
  to_base32(id);
  // 13 characters, read one by one (no subarray, no apply), from a local view: V8 reads a
  // module's variables again at each use.
  const t = textAt;
  const b = u8;
  return String.fromCharCode(
    b[t],
    b[t + 1],
    b[t + 2],
    b[t + 3],
    b[t + 4],
    b[t + 5],
    b[t + 6],
    b[t + 7],
    b[t + 8],
    b[t + 9],
    b[t + 10],
    b[t + 11],
    b[t + 12],
  );
}

/** `fromBase32(text)`: the ID written as 13 Crockford base32 characters. */
export function fromBase32(text) {
  const s = strArg("text", text);
  return idOut(from_base32(textIn("text", s)), () => parseError("base32", s));
}

/**
 * `parseId(text)`: an ID as people write it: decimal, a negative decimal (the signed
 * 64-bit column that stores it: the same 64 bits), hex (`0x…`, or 16 digits with a
 * letter) or base32 (13 characters, hyphens allowed). Spaces, `_` and `,` are ignored.
 * A number is taken as `decode` takes it: an integer up to 2^53 - 1.
 */
export function parseId(text) {
  if (typeof text === "number") return numberId("id", text);
  const t = strArg("text", text).replace(/[\s_,]/g, "");
  if (/^-\d+$/.test(t)) {
    const v = BigInt(t);
    if (v < -(1n << 63n)) throw outOfRange(`id ${t} is below the smallest signed 64-bit number (-9223372036854775808)`);
    return BigInt.asUintN(64, v);
  }
  if (/^\d+$/.test(t)) return idArg("id", t);
  if (/^0x/i.test(t) || /^[0-9a-f]{16}$/i.test(t)) {
    if (!/^(0x)?[0-9a-f]{1,16}$/i.test(t))
      throw new RangeError(`id ${describe(text)} is not 1 to 16 hex digits after 0x`);
    return BigInt(/^0x/i.test(t) ? t : `0x${t}`);
  }
  const b32 = t.replace(/-/g, "");
  if (b32.length === 13) return idOut(from_base32(textIn("text", b32)), () => parseError("base32", text));
  throw new RangeError(`id ${describe(text)} is not decimal, hex (0x…) or base32 (13 characters)`);
}
