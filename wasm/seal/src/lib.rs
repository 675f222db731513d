//! The wasm of `snowdrift/seal`: the core's [`Sealer`] behind `#[wasm_bindgen]` free
//! functions over numbers, as in the main module (`wasm/src/lib.rs`), which this one is
//! kept apart from so that the package's default entry does not grow by an AES.
//!
//! Sealers live in a table that grows as needed, named by their index. Sealers made from
//! the same width, key and tweak share one entry, counted, so a program that makes a
//! sealer per request holds one; an entry is freed when the last of its sealers is. Bytes
//! cross through one buffer at a fixed address ([`buffer`]): a layout's name, key and tweak
//! in; text in and out; the last error's message and the number of its core kind. A call
//! that fails returns `-1` (or `0` for a length) and records the error, whose length JS
//! reads at [`ERR_LEN`] only when a result says so (`-1` is also the sealed ID 2^64-1 of a
//! 64-bit layout: the length tells), and its kind's number at [`ERR_CODE`]. The offsets
//! are in `shared.rs`, from which the build writes JS's copy.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::UnsafeCell;

use snowdrift::text::{self, Format};
use snowdrift::{Layout, Sealer};
use wasm_bindgen::prelude::wasm_bindgen;

// The error codes, numbered as the main module numbers them.
#[path = "../../src/codes.rs"]
mod codes;
mod shared;

use codes::{error_code, parse_code};
pub use shared::{DATA, DATA_CAP, ERR, ERR_CODE, ERR_LEN};

#[repr(C)]
struct Io {
    err_len: u32,
    err_code: u32,
    err: [u8; 196],
    data: [u8; DATA_CAP],
}

const _: () = {
    assert!(core::mem::offset_of!(Io, err_len) == ERR_LEN);
    assert!(core::mem::offset_of!(Io, err_code) == ERR_CODE);
    assert!(core::mem::offset_of!(Io, err) == ERR);
    assert!(core::mem::offset_of!(Io, data) == DATA);
    assert!(snowdrift::Message::CAPACITY <= 196);
};

/// A sealer, what it was made from (to find it again), and how many JS sealers use it.
struct Entry {
    sealer: Sealer,
    /// The width (63 or 64), then the key's length, the key and the tweak.
    made_from: Box<[u8]>,
    users: u32,
}

impl Drop for Entry {
    fn drop(&mut self) {
        // No copy of the key stays in freed memory.
        for b in self.made_from.iter_mut() {
            // SAFETY: a valid, aligned, exclusive byte; volatile so the wipe is kept.
            unsafe { core::ptr::write_volatile(b, 0) };
        }
    }
}

/// `io` first: [`buffer`] gives its address.
#[repr(C)]
struct State {
    io: Io,
    entries: Vec<Option<Entry>>,
}

struct Shared(UnsafeCell<State>);
// SAFETY: a wasm module instance runs on one thread; its exports are never re-entered
// (this module imports nothing that calls back).
unsafe impl Sync for Shared {}

static STATE: Shared = Shared(UnsafeCell::new(State {
    io: Io {
        err_len: 0,
        err_code: 0,
        err: [0; 196],
        data: [0; DATA_CAP],
    },
    entries: Vec::new(),
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

/// Records `message` as the last error, of the core kind numbered `code` (0: none).
fn fail(io: &mut Io, code: u32, message: &[u8]) {
    let mut n = 0;
    for (to, &from) in io.err.iter_mut().zip(message) {
        *to = from;
        n += 1;
    }
    io.err_len = n;
    io.err_code = code;
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
/// tweak bytes after those: its entry, or -1. The same width, key and tweak give the
/// entry that exists already, with one more user.
#[wasm_bindgen]
pub fn sealer_new(name_len: u32, key_len: u32, tweak_len: u32, wide: bool) -> i32 {
    let State { io, entries } = state();
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
        fail(io, 0, b"unknown layout");
        return -1;
    };
    let key = data(io, name_len, key_len);
    let tweak = data(io, name_len + key_len, tweak_len);
    let width: u8 = if layout.fits_i64() { 63 } else { 64 };
    let same = |made_from: &[u8]| {
        made_from.len() == 2 + key.len() + tweak.len()
            && made_from[0] == width
            && usize::from(made_from[1]) == key.len()
            && &made_from[2..2 + key.len()] == key
            && &made_from[2 + key.len()..] == tweak
    };
    if let Some(index) = entries
        .iter()
        .position(|e| e.as_ref().is_some_and(|e| same(&e.made_from)))
    {
        if let Some(entry) = &mut entries[index] {
            entry.users = entry.users.saturating_add(1);
        }
        io.err_len = 0;
        return index as i32;
    }
    let sealer = match Sealer::new(&layout, key, tweak) {
        Ok(s) => s,
        Err(e) => {
            core_err(io, e);
            return -1;
        }
    };
    let index = match entries.iter().position(Option::is_none) {
        Some(index) => index,
        None if entries.try_reserve(1).is_ok() && entries.len() < i32::MAX as usize => {
            entries.push(None);
            entries.len() - 1
        }
        None => {
            fail(
                io,
                0,
                b"out of memory for another sealer: free() those no longer used",
            );
            return -1;
        }
    };
    // Sealer::new took the key's length (16, 24 or 32): it fits a byte.
    let mut made_from = Vec::new();
    if made_from
        .try_reserve_exact(2 + key.len() + tweak.len())
        .is_err()
    {
        fail(
            io,
            0,
            b"out of memory for another sealer: free() those no longer used",
        );
        return -1;
    }
    made_from.extend_from_slice(&[width, key.len() as u8]);
    made_from.extend_from_slice(key);
    made_from.extend_from_slice(tweak);
    entries[index] = Some(Entry {
        sealer,
        made_from: made_from.into_boxed_slice(),
        users: 1,
    });
    io.err_len = 0;
    index as i32
}

/// One user of a sealer's entry is done with it; the last one frees it (nothing if it is
/// free already).
#[wasm_bindgen]
pub fn sealer_free(index: u32) {
    if let Some(slot) = state().entries.get_mut(index as usize) {
        if let Some(entry) = slot {
            entry.users -= 1;
            if entry.users == 0 {
                *slot = None;
            }
        }
    }
}

/// The width of a sealer's space: 63 or 64 (0 for a free entry).
#[wasm_bindgen]
pub fn sealer_bits(index: u32) -> u32 {
    match state().entries.get(index as usize) {
        Some(Some(e)) => e.sealer.bits(),
        _ => 0,
    }
}

/// Runs `f` on the sealer of entry `index`, recording its error: the result's bits, or -1.
#[inline]
fn with(index: u32, f: impl FnOnce(&Sealer, &mut Io) -> Result<u64, ()>) -> i64 {
    let State { io, entries } = state();
    io.err_len = 0;
    match entries.get(index as usize) {
        Some(Some(entry)) => f(&entry.sealer, io).map_or(-1, |v| v as i64),
        _ => {
            fail(io, 0, b"this sealer was freed");
            -1
        }
    }
}

fn core_err(io: &mut Io, e: snowdrift::Error) {
    fail(io, error_code(e.kind()), e.message().as_bytes());
}

/// `id` sealed, or -1.
#[wasm_bindgen]
pub fn seal(index: u32, id: i64) -> i64 {
    with(index, |s, io| {
        s.seal(id as u64).map_err(|e| core_err(io, e))
    })
}

/// The ID `sealed` opens to, or -1.
#[wasm_bindgen]
pub fn open(index: u32, sealed: i64) -> i64 {
    with(index, |s, io| {
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
pub fn seal_text(index: u32, id: i64, code: u32) -> u32 {
    let mut len = 0;
    with(index, |s, io| {
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
pub fn open_text(index: u32, len: u32, code: u32) -> i64 {
    with(index, |s, io| {
        let text = core::str::from_utf8(data(io, 0, len)).unwrap_or("\u{fffd}");
        let value = match text::parse(text, form(code)) {
            Ok(v) => v,
            Err(e) => {
                fail(io, parse_code(e.kind()), e.message().as_bytes());
                return Err(());
            }
        };
        s.open(value).map_err(|e| core_err(io, e))
    })
}

#[cfg(target_arch = "wasm32")]
mod wasm_runtime {
    /// The sealer table's memory: the allocator Rust's standard library uses on wasm.
    #[global_allocator]
    static ALLOC: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

    /// Nothing in this crate panics on input; should a bug panic, trap without formatting.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
