//! The numbers the seal module and its JS layer (`wasm/js/src/seal/api.mjs`) share: the
//! buffer's capacity and offsets, checked against the buffer's struct at compile time in
//! `lib.rs`. Kept once, here: `cargo xtask npm` reads this file as text, as it reads the
//! main module's `wasm/src/shared.rs`, and writes the same numbers as `seal-constants.mjs`,
//! which `seal-api.mjs` imports and the build bundles. So this file holds plain constants
//! only, one to a line: no imports, no expressions, nothing but `pub const`.

/// Bytes of the data area.
pub const DATA_CAP: usize = 1024;
/// Offset of the last error message's length (`u32`, 0 after a call that succeeded).
pub const ERR_LEN: usize = 0;
/// Offset of the number of the last error's core kind (`u32`, see `wasm/src/codes.rs`; 0:
/// an error of this module's own, without a code).
pub const ERR_CODE: usize = 4;
/// Offset of the last error message (UTF-8).
pub const ERR: usize = 8;
/// Offset of the data area: bytes in and out.
pub const DATA: usize = 204;
