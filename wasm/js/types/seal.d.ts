/** A text form of an ID: `"base62"` (11 characters) and `"base32"` (13) are fixed width. */
export type SealedForm = "decimal" | "hex" | "base32" | "base62";

/** Key or tweak bytes: a byte array, or the bytes in hex (`"2b7e1516..."`). */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;

export interface SealerOptions {
  /** A preset's name (default `"default"`), or `{ fitsI64 }` as `layoutInfo` gives it
   * for a custom layout: 63-bit IDs seal to 63-bit IDs, 64-bit ones to 64-bit ones. */
  layout?: string | { fitsI64: boolean };
  /** Public bytes that pick one of many unrelated permutations under the key, such as a
   * key id (`"6b31"`, "k1"): keep it with the key. Default: none. */
  tweak?: Bytes;
}

/**
 * Seals IDs into public IDs and opens them: NIST SP 800-38G FF1 over AES (the core's
 * `Sealer`, in wasm) in radix 2 over the layout's 63 or 64 bits. Sealing hides an ID's
 * time and the gaps between IDs; it does not authenticate: any value opens to some ID, so
 * look the opened ID up. Sealed IDs do not sort: store raw IDs, seal at the boundary.
 */
export class Sealer {
  /** @param key 16, 24 or 32 secret bytes (AES-128, -192, -256), or their hex. */
  constructor(key: Bytes, options?: SealerOptions);
  /** The width of the ID space: 63 or 64. */
  readonly bits: number;
  /** The sealed form of `id` (in `0..=2^bits-1`; a number must be an integer in
   * 0..=2^53-1, which it holds exactly). */
  seal(id: bigint | number): bigint;
  /** The ID `sealed` opens to. */
  open(sealed: bigint | number): bigint;
  /** The sealed form of `id` as text (default `"base62"`). */
  sealString(id: bigint | number, form?: SealedForm): string;
  /** The ID a sealed ID in text form opens to (default `"base62"`). */
  openString(text: string, form?: SealedForm): bigint;
  /** Lets go of the sealer's memory now (shared with live sealers of the same key, tweak
   * and width, which go on working); unreachable sealers let go of it when collected. */
  free(): void;
}
