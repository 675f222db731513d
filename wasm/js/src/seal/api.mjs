// The JS half of `snowdrift/seal`: the `Sealer` class over the seal module's exports
// (wasm/seal/src/lib.rs, through the wasm-bindgen glue `snowdrift_seal_wasm.js` that
// `cargo xtask npm` generates next to this file and bundles with it). It checks arguments
// and converts values; FF1, AES, the text forms and the core's error texts stay in the wasm.
//
// `createSeal(module)` is called by each seal entry with the compiled module; it
// instantiates it synchronously (`initSync`), once per copy of this file.
import {
  initSync,
  buffer,
  preset_name,
  sealer_new,
  sealer_free,
  sealer_bits,
  seal,
  open,
  seal_text,
  open_text,
} from "../snowdrift_seal_wasm.js";
import { describe, wrongType, numberId, options as checkOptions, oneOf, outOfRange } from "../check.mjs";
import { withCode } from "../error-codes.mjs";
// The seal module's buffer offsets (wasm/seal/src/shared.rs, written by the build).
import { DATA, DATA_CAP, ERR, ERR_CODE, ERR_LEN } from "../seal-constants.mjs";
const MAX_ID = 0xffffffffffffffffn;
const FORMS = ["decimal", "hex", "base32", "base62"];
const FREED = 0xffffffff; // no entry: the module answers "this sealer was freed"

let made;
export function createSeal(module) {
  return (made ??= build(module));
}

function build(module) {
  const w = initSync({ module });
  const io = buffer();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let u8 = new Uint8Array(w.memory.buffer);
  const bytes = () => (u8.byteLength === 0 ? (u8 = new Uint8Array(w.memory.buffer)) : u8);
  const errLen = () => new DataView(w.memory.buffer).getUint32(io + ERR_LEN, true);
  const lastError = () => decoder.decode(bytes().slice(io + ERR, io + ERR + errLen()));
  /** The RangeError of the last error: `message` (the module's own by default), with the
   * code of its core kind. */
  const rangeError = (message = lastError()) =>
    withCode(new RangeError(message), new DataView(w.memory.buffer).getUint32(io + ERR_CODE, true));
  const dataOut = (n) => decoder.decode(bytes().subarray(io + DATA, io + DATA + n));

  const presets = [];
  for (let i = 0, n; (n = preset_name(i)) > 0; i++) presets.push(dataOut(n));

  /** A result of `seal`/`open`: the bits as an unsigned bigint, or the recorded error. */
  function idOut(r, what, v) {
    if (r >= 0n) return r;
    if (r === -1n && errLen() !== 0) throw rangeError(`cannot ${what} ${describe(v)}: ${lastError()}`);
    return BigInt.asUintN(64, r);
  }

  /** Key or tweak bytes: a Uint8Array (or other byte view) or a hex string. */
  function bytesArg(what, v) {
    if (typeof v === "string") {
      if (!/^(?:[0-9a-fA-F]{2})*$/.test(v)) {
        throw new RangeError(`${what} must be hex digits in pairs, got ${v.length} characters`);
      }
      const out = new Uint8Array(v.length / 2);
      for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(v.slice(2 * i, 2 * i + 2), 16);
      return out;
    }
    if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    // Only its kind: the value may be a key.
    throw new TypeError(`${what} must be a Uint8Array or a hex string, got ${kindOf(v)}`);
  }

  /** What `v` is, without any of its contents. */
  function kindOf(v) {
    if (v === null || v === undefined) return String(v);
    if (Array.isArray(v)) return `an array of ${v.length} items`;
    const type = typeof v;
    return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  }

  function idArg(what, v) {
    if (typeof v === "number") return numberId(what, v);
    if (typeof v !== "bigint") throw wrongType(what, "a bigint or a number", v);
    if (v < 0n || v > MAX_ID) {
      throw outOfRange(`${what} ${describe(v)} is outside the allowed range 0..=18446744073709551615`);
    }
    return v;
  }

  const formCode = (form) => FORMS.indexOf(oneOf("form", form, FORMS));

  // Sealers nobody can reach any more let go of their entries in the module.
  const registry = typeof FinalizationRegistry === "function" ? new FinalizationRegistry(sealer_free) : undefined;

  class Sealer {
    #entry;
    /**
     * @param key 16, 24 or 32 secret bytes (AES-128, -192, -256), or their hex.
     * @param opts `layout`: a preset name (default "default") or `{ fitsI64 }` (what
     *   `layoutInfo` says of a custom layout); `tweak`: public bytes or hex (a key id).
     */
    constructor(key, opts) {
      const o = checkOptions("Sealer", opts, ["layout", "tweak"]);
      const keyBytes = bytesArg("key", key);
      const tweak = o.tweak === undefined ? new Uint8Array(0) : bytesArg("tweak", o.tweak);
      const layout = o.layout ?? "default";
      let name = "";
      let wide = false;
      if (typeof layout === "string") {
        if (!presets.includes(layout)) {
          throw new RangeError(`unknown layout ${describe(layout)} (presets: ${presets.map(describe).join(", ")})`);
        }
        name = layout;
      } else if (typeof layout === "object" && layout !== null && typeof layout.fitsI64 === "boolean") {
        wide = !layout.fitsI64;
      } else {
        throw wrongType("layout", "a preset name or { fitsI64: boolean } (from layoutInfo)", layout);
      }
      const total = name.length + keyBytes.length + tweak.length;
      if (total > DATA_CAP) {
        throw new RangeError(
          `key and tweak of ${keyBytes.length + tweak.length} bytes (max ${DATA_CAP - name.length})`,
        );
      }
      const data = bytes();
      encoder.encodeInto(name, data.subarray(io + DATA));
      data.set(keyBytes, io + DATA + name.length);
      data.set(tweak, io + DATA + name.length + keyBytes.length);
      const entry = sealer_new(name.length, keyBytes.length, tweak.length, wide);
      // No copy of the key stays here (through a fresh view: the call may have grown memory).
      bytes().fill(0, io + DATA, io + DATA + total);
      if (entry < 0) throw rangeError();
      this.#entry = entry;
      registry?.register(this, entry, this);
    }

    /** The width of the ID space: 63 (IDs that fit a signed 64-bit integer) or 64. */
    get bits() {
      return sealer_bits(this.#entry);
    }

    /** The sealed form of `id` (a bigint in the ID space). */
    seal(id) {
      return idOut(seal(this.#entry, idArg("id", id)), "seal", id);
    }

    /** The ID `sealed` opens to. Any value of the space opens to some ID: look it up. */
    open(sealed) {
      return idOut(open(this.#entry, idArg("sealed id", sealed)), "open", sealed);
    }

    /** The sealed form of `id` as text (`"base62"`: 11 characters, the default). */
    sealString(id, form = "base62") {
      const n = seal_text(this.#entry, idArg("id", id), formCode(form));
      if (n === 0) throw rangeError(`cannot seal ${describe(id)}: ${lastError()}`);
      return dataOut(n);
    }

    /** The ID that a sealed ID in text form opens to. */
    openString(text, form = "base62") {
      if (typeof text !== "string") throw wrongType("sealed id", "a string", text);
      const code = formCode(form);
      if (text.length > 64) throw new RangeError(`sealed id of ${text.length} characters is not a ${form} id`);
      const { written } = encoder.encodeInto(text, bytes().subarray(io + DATA, io + DATA + 256));
      const r = open_text(this.#entry, written, code);
      if (r === -1n && errLen() !== 0) {
        throw rangeError(`cannot open ${form} id ${describe(text)}: ${lastError()}`);
      }
      return BigInt.asUintN(64, r);
    }

    /** Lets go of the sealer's memory now (shared with live sealers of the same key, tweak
     * and width, which go on working); it cannot be used after. */
    free() {
      if (this.#entry === FREED) return;
      registry?.unregister(this);
      sealer_free(this.#entry);
      this.#entry = FREED;
    }
  }
  return { Sealer };
}
