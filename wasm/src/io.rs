//! The fixed buffers JS reads and writes, the last error among them.

use core::cell::UnsafeCell;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::codes::{error_code, parse_code};

pub use crate::shared::{BATCH_CAP, ERR_PLAIN, ERR_RANGE, ERR_WOULD_BLOCK, TEXT_CAP};
/// Capacity of the error message buffer, in bytes (every core message is far shorter).
const MESSAGE_CAP: usize = 256;

/// Everything JS exchanges with the module besides arguments and results.
#[repr(C)]
pub struct Io {
    /// Decoded parts: time (Unix ms), node, datacenter, worker, sequence.
    pub num: [f64; 5],
    /// The kind of the last error (0: none).
    pub err_kind: u32,
    /// The number of the last error's core kind (`codes.rs`; 0: an error of this module's
    /// own, without a code).
    pub err_code: u32,
    /// Length of the last error message.
    pub err_len: u32,
    /// The last error message, UTF-8.
    pub err: [u8; MESSAGE_CAP],
    /// Strings in and out: UTF-8 in, ASCII out.
    pub text: [u8; TEXT_CAP],
    /// IDs of `nextBatch`, a chunk at a time.
    pub batch: [u64; BATCH_CAP],
}

struct Shared(UnsafeCell<Io>);

// SAFETY: a wasm module instance runs on one thread (no atomics feature, see lib.rs), and
// each instance has its own memory; host builds only use it from single-threaded tests.
unsafe impl Sync for Shared {}

static IO: Shared = Shared(UnsafeCell::new(Io {
    num: [0.0; 5],
    err_kind: 0,
    err_code: 0,
    err_len: 0,
    err: [0; MESSAGE_CAP],
    text: [0; TEXT_CAP],
    batch: [0; BATCH_CAP],
}));

/// The shared buffers. Callers hold the reference only within one export call and never
/// across a call into JS that could call back into the module.
#[allow(clippy::mut_from_ref)]
pub fn io() -> &'static mut Io {
    // SAFETY: single-threaded (see `Shared`), and each export takes this reference once,
    // uses it, and drops it before returning; no export is re-entered while it holds it
    // (the imports JS provides never call exports).
    unsafe { &mut *IO.0.get() }
}

/// The address of the shared buffers, for JS.
#[wasm_bindgen]
pub fn buffers() -> *mut Io {
    IO.0.get()
}

/// The text buffer as `&str`: the first `len` bytes JS wrote (always UTF-8, from
/// `TextEncoder`; anything else reads as empty).
pub fn text_in(len: u32) -> &'static str {
    let io = io();
    let bytes = &io.text[..(len as usize).min(TEXT_CAP)];
    // SAFETY: JS writes the text buffer only with `TextEncoder.encodeInto`, which writes
    // whole UTF-8 sequences, and passes the count of bytes it wrote.
    unsafe { core::str::from_utf8_unchecked(bytes) }
}

/// Writes ASCII text into the text buffer; returns its length.
pub fn text_out(s: &[u8]) -> u32 {
    let io = io();
    // Zipped, not sliced: no length check or panic path.
    let mut n = 0;
    for (to, &from) in io.text.iter_mut().zip(s) {
        *to = from;
        n += 1;
    }
    n
}

/// Records an error of `kind` (an `ERR_*`) with the core kind's number `code` (0: none)
/// and the message `msg` (UTF-8).
pub fn fail(kind: u32, code: u32, msg: &[u8]) {
    let io = io();
    let mut n = 0;
    for (to, &from) in io.err.iter_mut().zip(msg) {
        *to = from;
        n += 1;
    }
    io.err_len = n;
    io.err_kind = kind;
    io.err_code = code;
}

/// A flag in a static (one thread per module instance, see `Shared`).
pub struct Flag(core::cell::Cell<bool>);

// SAFETY: as for `Shared`: one thread per module instance.
unsafe impl Sync for Flag {}

impl Flag {
    pub const fn new() -> Flag {
        Flag(core::cell::Cell::new(false))
    }
    #[inline(always)]
    pub fn get(&self) -> bool {
        self.0.get()
    }
    pub fn set(&self, on: bool) {
        self.0.set(on);
    }
}

/// Records a core generator error: `RangeError` for times and values outside the layout,
/// would-block for `try_*`, `Error` for the rest.
pub fn fail_gen(e: snowdrift::Error) {
    use snowdrift::ErrorKind;
    let kind = match e.kind() {
        ErrorKind::OutOfRange | ErrorKind::ResumeOutOfRange | ErrorKind::SameNode => ERR_RANGE,
        ErrorKind::WouldBlock => ERR_WOULD_BLOCK,
        _ => ERR_PLAIN,
    };
    fail(kind, error_code(e.kind()), e.message().as_bytes());
}

/// Records a core error about a layout or a value as a `RangeError`.
pub fn fail_range(e: snowdrift::Error) {
    fail(ERR_RANGE, error_code(e.kind()), e.message().as_bytes());
}

/// Records a rejected text form as a `RangeError`.
pub fn fail_parse(e: snowdrift::ParseError) {
    fail(ERR_RANGE, parse_code(e.kind()), e.message().as_bytes());
}

/// An ID result for JS: the bits as `i64`; an ID with the top bit set reads as negative,
/// so clear the error kind for JS to tell it from the `-1` of a failure.
#[inline]
pub fn id_out(id: u64) -> i64 {
    if (id as i64) < 0 {
        io().err_kind = 0;
    }
    id as i64
}

/// The result of a fallible ID call.
#[inline]
pub fn id_result<E>(r: Result<u64, E>, on_err: impl FnOnce(E)) -> i64 {
    match r {
        Ok(id) => id_out(id),
        Err(e) => {
            on_err(e);
            -1
        }
    }
}

// The offsets `wasm/js/src/api.mjs` reads at: the `IO_*` of shared.rs, which the build writes
// into its constants module.
const _: () = {
    use crate::shared::{IO_BATCH, IO_ERR, IO_ERR_CODE, IO_ERR_KIND, IO_ERR_LEN, IO_NUM, IO_TEXT};
    assert!(core::mem::offset_of!(Io, num) == IO_NUM);
    assert!(core::mem::offset_of!(Io, err_kind) == IO_ERR_KIND);
    assert!(core::mem::offset_of!(Io, err_code) == IO_ERR_CODE);
    assert!(core::mem::offset_of!(Io, err_len) == IO_ERR_LEN);
    assert!(core::mem::offset_of!(Io, err) == IO_ERR);
    assert!(core::mem::offset_of!(Io, text) == IO_TEXT);
    assert!(core::mem::offset_of!(Io, batch) == IO_BATCH);
};
