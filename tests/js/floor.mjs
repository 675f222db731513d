// "\0asm", version 1: how every wasm module begins.
const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

// floor.wat, assembled by hand: 58 bytes. One row per section.
// biome-ignore format: the bytes stay in rows, one per section
const bytes = new Uint8Array([
  ...HEADER,
  // type section: 2 types, () -> f64 and () -> i64
  0x01, 0x09, 0x02, 0x60, 0x00, 0x01, 0x7c, 0x60, 0x00, 0x01, 0x7e,
  // import section: "env" "now", a function of type 0
  0x02, 0x0b, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x6e, 0x6f, 0x77, 0x00, 0x00,
  // function section: one function of type 1
  0x03, 0x02, 0x01, 0x01,
  // export section: "next" is function 1
  0x07, 0x08, 0x01, 0x04, 0x6e, 0x65, 0x78, 0x74, 0x00, 0x01,
  // code section: no locals; call 0, i64.trunc_f64_u, i64.const 22, i64.shl, end
  0x0a, 0x0a, 0x01, 0x08, 0x00, 0x10, 0x00, 0xb1, 0x42, 0x16, 0x86, 0x0b,
]);

export const floorBytes = bytes;

/** The floor's `next()`: Date.now() << 22 as a bigint, through wasm. */
export function floor() {
  const module = new WebAssembly.Module(bytes);
  return new WebAssembly.Instance(module, { env: { now: Date.now } }).exports.next;
}

// The floor of `decode`: a wasm function taking (i32, i64), as snowdrift's decode export
// does (a layout address and the ID), that decodes nothing and returns the constant 2.
// Assembled by hand, 36 bytes: (func (export "f") (param i32 i64) (result i32) i32.const 2)
// biome-ignore format: the bytes stay in rows, one per section
const decodeBytes = new Uint8Array([
  ...HEADER,
  // type section: one type, (i32, i64) -> i32
  0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7e, 0x01, 0x7f,
  // function section: one function of type 0
  0x03, 0x02, 0x01, 0x00,
  // export section: "f" is function 0
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00,
  // code section: no locals; i32.const 2, end
  0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x02, 0x0b,
]);

/** The decode floor's call: a bigint into wasm, a small integer back. */
export function decodeFloor() {
  return new WebAssembly.Instance(new WebAssembly.Module(decodeBytes)).exports.f;
}
