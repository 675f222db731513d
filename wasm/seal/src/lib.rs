//! The wasm of `snowdrift/seal`: the core's [`Sealer`] behind `#[wasm_bindgen]` free
//! functions over numbers, as in the main module (`wasm/src/lib.rs`), which this one is
//! kept apart from so that the package's default entry does not grow by an AES.
//!
//! Sealers live in a fixed table of [`SLOTS`] slots, named by their index. Bytes cross
//! through one buffer at a fixed address ([`buffer`]): a layout's name, key and tweak in;
//! text in and out; the last error's message. A call that fails returns `-1` (or `0` for a
//! length) and records the message, whose length JS reads at [`ERR_LEN`] only when a
//! result says so (`-1` is also the sealed ID 2^64-1 of a 64-bit layout: the length tells).

#![cfg_attr(target_arch = "wasm32", no_std)]

use core::cell::UnsafeCell;

use snowdrift::text::{self, Format};
use snowdrift::{Layout, Sealer};
use wasm_bindgen::prelude::wasm_bindgen;

/// How many sealers can exist at once.
pub const SLOTS: usize = 64;
/// Bytes of the data area.
pub const DATA_CAP: usize = 1024;
/// Offset of the last error message's length (`u32`, 0 after a call that succeeded).
pub const ERR_LEN: usize = 0;
/// Offset of the last error message (UTF-8).
pub const ERR: usize = 4;
/// Offset of the data area: bytes in and out.
pub const DATA: usize = 200;

#[repr(C)]
struct Io {
    err_len: u32,
    err: [u8; 196],
    data: [u8; DATA_CAP],
}

const _: () = {
    assert!(core::mem::offset_of!(Io, err_len) == ERR_LEN);
    assert!(core::mem::offset_of!(Io, err) == ERR);
    assert!(core::mem::offset_of!(Io, data) == DATA);
    assert!(snowdrift::Message::CAPACITY <= 196);
};

/// `io` first: [`buffer`] gives its address.
#[repr(C)]
struct State {
    io: Io,
    slots: [Option<Sealer>; SLOTS],
}

struct Shared(UnsafeCell<State>);
// SAFETY: a wasm module instance runs on one thread; its exports are never re-entered
// (this module imports nothing that calls back).
unsafe impl Sync for Shared {}

static STATE: Shared = Shared(UnsafeCell::new(State {
    io: Io {
        err_len: 0,
        err: [0; 196],
        data: [0; DATA_CAP],
    },
    slots: [const { None }; SLOTS],
}));

#[allow(clippy::mut_from_ref)]
fn state() -> &'static mut State {
    // SAFETY: one thread, and each export takes this reference once and drops it before
    // returning.
    unsafe { &mut *STATE.0.get() }
}

/// The address of the buffers, for JS.
#[wasm_bindgen]
pub fn buffer() -> *mut u8 {
    STATE.0.get().cast()
}

/// Records `message` as the last error.
fn fail(io: &mut Io, message: &[u8]) {
    let mut n = 0;
    for (to, &from) in io.err.iter_mut().zip(message) {
        *to = from;
        n += 1;
    }
    io.err_len = n;
}

/// `len` bytes of the data area from `start`, or none past its end.
fn data(io: &Io, start: u32, len: u32) -> &[u8] {
    let (start, len) = (start as usize, len as usize);
    io.data.get(start..start.saturating_add(len)).unwrap_or(&[])
}

/// The name of preset `index` into the data area: its length, or 0 past the last.
#[wasm_bindgen]
pub fn preset_name(index: u32) -> u32 {
    let io = &mut state().io;
    let Some((name, _)) = Layout::PRESETS.get(index as usize) else {
        return 0;
    };
    let mut n = 0;
    for (to, &from) in io.data.iter_mut().zip(name.as_bytes()) {
        *to = from;
        n += 1;
    }
    n
}

/// A sealer for the preset named by the first `name_len` data bytes (none: a layout whose
/// IDs fit `i64` unless `wide`), the `key_len` key bytes after it and the `tweak_len`
/// tweak bytes after those: its slot, or -1.
#[wasm_bindgen]
pub fn sealer_new(name_len: u32, key_len: u32, tweak_len: u32, wide: bool) -> i32 {
    let State { io, slots } = state();
    let name = core::str::from_utf8(data(io, 0, name_len)).unwrap_or("");
    // A sealer reads only whether the layout's IDs fit i64: for a custom layout, a preset
    // of the same width stands in.
    let layout = match (name_len, wide) {
        (0, false) => Some(Layout::DEFAULT),
        (0, true) => Some(Layout::DISCORD),
        _ => Layout::preset(name),
    };
    let Some(layout) = layout else {
        // JS checks the name against the presets first; this is a backstop.
        fail(io, b"unknown layout");
        return -1;
    };
    let key = data(io, name_len, key_len);
    let tweak = data(io, name_len + key_len, tweak_len);
    let sealer = match Sealer::new(&layout, key, tweak) {
        Ok(s) => s,
        Err(e) => {
            fail(io, e.message().as_bytes());
            return -1;
        }
    };
    let Some(slot) = slots.iter().position(Option::is_none) else {
        fail(
            io,
            b"64 sealers exist (max 64): reuse one, or free() those no longer used",
        );
        return -1;
    };
    slots[slot] = Some(sealer);
    io.err_len = 0;
    slot as i32
}

/// Frees a sealer's slot (nothing if it is free already).
#[wasm_bindgen]
pub fn sealer_free(slot: u32) {
    if let Some(s) = state().slots.get_mut(slot as usize) {
        *s = None;
    }
}

/// The width of a sealer's space: 63 or 64 (0 for a free slot).
#[wasm_bindgen]
pub fn sealer_bits(slot: u32) -> u32 {
    match state().slots.get(slot as usize) {
        Some(Some(s)) => s.bits(),
        _ => 0,
    }
}

/// Runs `f` on the sealer in `slot`, recording its error: the result's bits, or -1.
#[inline]
fn with(slot: u32, f: impl FnOnce(&Sealer, &mut Io) -> Result<u64, ()>) -> i64 {
    let State { io, slots } = state();
    io.err_len = 0;
    match slots.get(slot as usize) {
        Some(Some(sealer)) => f(sealer, io).map_or(-1, |v| v as i64),
        _ => {
            fail(io, b"this sealer was freed");
            -1
        }
    }
}

fn core_err(io: &mut Io, e: snowdrift::Error) {
    fail(io, e.message().as_bytes());
}

/// `id` sealed, or -1.
#[wasm_bindgen]
pub fn seal(slot: u32, id: i64) -> i64 {
    with(slot, |s, io| s.seal(id as u64).map_err(|e| core_err(io, e)))
}

/// The ID `sealed` opens to, or -1.
#[wasm_bindgen]
pub fn open(slot: u32, sealed: i64) -> i64 {
    with(slot, |s, io| {
        s.open(sealed as u64).map_err(|e| core_err(io, e))
    })
}

fn form(code: u32) -> Format {
    match code {
        0 => Format::Decimal,
        1 => Format::Hex,
        2 => Format::Base32,
        _ => Format::Base62,
    }
}

/// `id` sealed and written in the text form `code` (0 decimal, 1 hex, 2 base32, 3 base62)
/// into the data area: its length, or 0.
#[wasm_bindgen]
pub fn seal_text(slot: u32, id: i64, code: u32) -> u32 {
    let mut len = 0;
    with(slot, |s, io| {
        let sealed = s.seal(id as u64).map_err(|e| core_err(io, e))?;
        let text = text::format(sealed, form(code));
        for (to, &from) in io.data.iter_mut().zip(text.as_bytes()) {
            *to = from;
            len += 1;
        }
        Ok(0)
    });
    len
}

/// The ID that the first `len` data bytes (UTF-8), a sealed ID in the text form `code`,
/// open to; or -1.
#[wasm_bindgen]
pub fn open_text(slot: u32, len: u32, code: u32) -> i64 {
    with(slot, |s, io| {
        let text = core::str::from_utf8(data(io, 0, len)).unwrap_or("\u{fffd}");
        let value = match text::parse(text, form(code)) {
            Ok(v) => v,
            Err(e) => {
                let message = e.message();
                fail(io, message.as_bytes());
                return Err(());
            }
        };
        s.open(value).map_err(|e| core_err(io, e))
    })
}

#[cfg(target_arch = "wasm32")]
mod wasm_runtime {
    /// Nothing here allocates; the `alloc` crate under wasm-bindgen needs an allocator,
    /// and this one has nothing to give.
    struct NoHeap;

    // SAFETY: never hands out memory; a null return is an allocation failure.
    unsafe impl core::alloc::GlobalAlloc for NoHeap {
        unsafe fn alloc(&self, _: core::alloc::Layout) -> *mut u8 {
            core::ptr::null_mut()
        }
        unsafe fn dealloc(&self, _: *mut u8, _: core::alloc::Layout) {}
    }

    #[global_allocator]
    static ALLOC: NoHeap = NoHeap;

    /// Nothing in this crate panics on input; should a bug panic, trap without formatting.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
