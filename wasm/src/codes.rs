//! The number of each core error kind, which the JS layer turns into the error's `code`:
//! the kind's name (`"PastFence"`, `"InvalidChar"`). Kept in this one file, which the seal
//! module includes as well, so both modules number kinds alike. The numbers follow the
//! order in which `core/src/error.rs` declares `ErrorKind` and `ParseErrorKind`; `cargo
//! xtask npm` reads the names from there in the same order and writes them, with
//! [`PARSE_CODE_BASE`], into the package's `codes.mjs`.

use snowdrift::{ErrorKind, ParseErrorKind};

/// The number of the first `ParseErrorKind`: parse errors are numbered after every
/// `ErrorKind`.
pub const PARSE_CODE_BASE: u32 = 256;

/// The number of an error kind: its place in `ErrorKind`, from 1 (0 stands for no code).
pub const fn error_code(kind: ErrorKind) -> u32 {
    kind as u32 + 1
}

/// The number of a parse error kind: its place in `ParseErrorKind` after
/// [`PARSE_CODE_BASE`].
pub const fn parse_code(kind: ParseErrorKind) -> u32 {
    PARSE_CODE_BASE + kind as u32
}
