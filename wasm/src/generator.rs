//! Generators: a core `Generator` over a `JsClock`, in a block of the module's pool
//! ([`pool`]), addressed by JS through its pointer.

use snowdrift::{Generator, Layout, Policy};

use wasm_bindgen::prelude::wasm_bindgen;

use crate::clock::{self, JsClock};
use crate::io::{self, fail_gen, id_result, BATCH_CAP};
use crate::pool;

/// A generator with a copy of its layout (which `decode` takes by address).
pub struct Gen {
    pub(crate) gen: Generator<JsClock>,
    pub(crate) layout: Layout,
}

/// `onClockBackwards: "fail"`.
pub const POLICY_FAIL: u32 = 0;
/// `onClockBackwards: "wait"`, `bound` = `maxWaitMs`.
pub const POLICY_WAIT: u32 = 1;
// Anything else: `onClockBackwards: "borrow"` (2), `bound` = `maxAheadMs`.

/// A new generator on `*layout` for `node` (checked by the core), with the policy and its
/// bound, on `Date.now` (`clock` = -1) or the user's clock function number `clock`.
/// Returns its address, or 0 with the error recorded.
///
/// # Safety
/// `layout` points to a layout from `layout_*`.
#[wasm_bindgen]
pub unsafe fn gen_new(
    layout: *const Layout,
    node: f64,
    policy: u32,
    bound: f64,
    clock: i32,
) -> *mut Gen {
    let bound = bound as u32;
    let policy = match policy {
        POLICY_FAIL => Policy::Fail,
        POLICY_WAIT => Policy::Wait { max_wait_ms: bound },
        _ => Policy::Borrow {
            max_ahead_ms: bound,
        },
    };
    let clock = if clock < 0 {
        JsClock::DateNow
    } else {
        JsClock::Custom(clock as u32)
    };
    match Generator::new(clock, *layout, node as u64, policy) {
        Ok(gen) => {
            let block = pool::put(Gen {
                layout: gen.layout(),
                gen,
            });
            if block.is_null() {
                crate::io::fail(crate::io::ERR_PLAIN, b"out of memory");
            }
            block
        }
        Err(e) => {
            fail_gen(e);
            core::ptr::null_mut()
        }
    }
}

/// Whether the call must be refused, with the error recorded: a generator called from
/// inside a user's clock function (the running call holds the generator's state and the
/// batch buffer, so a second one could repeat an ID).
#[inline(always)]
fn refused() -> bool {
    clock::in_clock() && refuse()
}

#[cold]
fn refuse() -> bool {
    io::fail(
        io::ERR_PLAIN,
        b"a clock function must not call a snowdrift generator",
    );
    true
}

/// Releases a generator.
///
/// # Safety
/// `gen` came from `gen_new` and is not used again.
#[wasm_bindgen]
pub unsafe fn gen_free(gen: *mut Gen) {
    pool::take(gen);
}

/// Never issue an ID at or below `id`. Returns 0, or -1 with the error recorded.
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_resume(gen: *mut Gen, id: i64) -> i32 {
    match (*gen).gen.resume_after(id as u64) {
        Ok(()) => 0,
        Err(e) => {
            fail_gen(e);
            -1
        }
    }
}

/// The next ID. A failure throws in JS (`raise`), so JS checks nothing: the ID is the
/// result.
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_next(gen: *mut Gen) -> i64 {
    let id = next_or_fail(gen);
    // Raised once `next_or_fail` has returned: a JS exception leaves wasm without running
    // epilogues, so a frame still on the shadow stack would leak (the npm tests make
    // 100,000 failures).
    let kind = io::io().err_kind;
    if id == -1 && kind != 0 {
        clock::raise(kind);
    }
    id
}

/// `gen_next`'s work: the next ID, or -1 with the error recorded.
#[inline(never)]
unsafe fn next_or_fail(gen: *mut Gen) -> i64 {
    if refused() {
        return -1;
    }
    // Matched here rather than through `id_result`, so that the common case keeps the
    // ID out of memory.
    match (*gen).gen.next() {
        Ok(id) => io::id_out(id),
        Err(e) => {
            fail_gen(e);
            -1
        }
    }
}

/// The next ID if one is ready without waiting, or -1 with the error recorded
/// (would-block when it would have to wait).
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_try_next(gen: *mut Gen) -> i64 {
    if refused() {
        return -1;
    }
    id_result((*gen).gen.try_next(), fail_gen)
}

/// Writes `n` (at most the batch buffer's 4,096) increasing IDs into the batch buffer.
/// Returns `n`, or -1 with the error recorded.
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_fill(gen: *mut Gen, n: u32) -> i32 {
    if refused() {
        return -1;
    }
    let gen = &mut (*gen).gen;
    let n = (n as usize).min(BATCH_CAP);
    let mut done = 0;
    while done < n {
        match gen.next_batch((n - done) as u32) {
            // The buffer is borrowed only after the clock was read; `get_mut` rather than
            // slicing, which would keep a panic path (done < n <= BATCH_CAP).
            Ok(batch) => match io::io().batch.get_mut(done..n) {
                Some(out) => done += batch.write_to(out),
                None => break,
            },
            Err(e) => {
                fail_gen(e);
                return -1;
            }
        }
    }
    done as i32
}

/// Facts about a generator: field 0 the address of its layout (for `decode`), 1 its node
/// id, 2 a Unix millisecond at or after the time of every ID it has issued.
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_fact(gen: *mut Gen, field: u32) -> f64 {
    let gen = &*gen;
    match field {
        0 => &gen.layout as *const Layout as usize as f64,
        1 => gen.gen.node() as f64,
        _ => gen.gen.issued_through_ms() as f64,
    }
}

/// Issue only IDs whose time is before Unix millisecond `ms` (a lease's end).
///
/// # Safety
/// `gen` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_set_fence(gen: *mut Gen, ms: f64) {
    (*gen).gen.set_fence_ms(ms as u64);
}
