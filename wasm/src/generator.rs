//! Generators: a core `Generator` over a `JsClock`, in a block of the module's pool
//! ([`POOL`]), addressed by JS through its pointer.

use snowdrift::{Generator, IdGenerator, Layout, Policy};

use wasm_bindgen::prelude::wasm_bindgen;

use crate::clock::{self, JsClock};
use crate::io::{self, BATCH_CAP, fail_gen, id_result};
use crate::pool::Pool;

/// The module's generators; also the global allocator's memory (see lib.rs).
pub static POOL: Pool<Gen> = Pool::new();

/// A generator with a copy of its layout (which `decode` takes by address).
pub struct Gen {
    pub(crate) generator: Generator<JsClock>,
    pub(crate) layout: Layout,
}

use crate::shared::{
    GEN_BEHIND, GEN_CLOCK_WAITS, GEN_ISSUED_THROUGH_MS, GEN_LARGEST_BEHIND_MS, GEN_LAYOUT,
    GEN_NODE, GEN_TICK_WAITS, POLICY_FAIL, POLICY_WAIT,
};

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
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    match Generator::new(clock, unsafe { *layout }, node as u64, policy) {
        Ok(generator) => {
            let block = POOL.put(Gen {
                layout: generator.layout(),
                generator,
            });
            if block.is_null() {
                crate::io::fail(crate::io::ERR_PLAIN, 0, b"out of memory");
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
        0,
        b"a clock function must not call a snowdrift generator",
    );
    true
}

/// Releases a generator.
///
/// # Safety
/// `generator` came from `gen_new` and is not used again.
#[wasm_bindgen]
pub unsafe fn gen_free(generator: *mut Gen) {
    // SAFETY: the caller's contract.
    unsafe { POOL.take(generator) };
}

/// Never issue an ID at or below `id`. Returns 0, or -1 with the error recorded.
///
/// # Safety
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_resume(generator: *mut Gen, id: i64) -> i32 {
    // SAFETY: the caller's contract.
    match unsafe { &mut *generator }.generator.resume_after(id as u64) {
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
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_next(generator: *mut Gen) -> i64 {
    // SAFETY: the caller's contract.
    let id = unsafe { next_or_fail(generator) };
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
unsafe fn next_or_fail(generator: *mut Gen) -> i64 {
    if refused() {
        return -1;
    }
    // Matched here rather than through `id_result`, so that the common case keeps the
    // ID out of memory.
    // SAFETY: the caller's contract (a live generator).
    match unsafe { &mut *generator }.generator.next() {
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
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_try_next(generator: *mut Gen) -> i64 {
    if refused() {
        return -1;
    }
    // SAFETY: the caller's contract.
    id_result(unsafe { &mut *generator }.generator.try_next(), fail_gen)
}

/// Writes `n` (at most the batch buffer's 4,096) increasing IDs into the batch buffer.
/// Returns `n`, or -1 with the error recorded and the generator as it was before the
/// call (a chunk can span ticks, and a later tick can fail: the IDs of the earlier ones
/// never reach JS, so taking them back repeats nothing).
///
/// # Safety
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_fill(generator: *mut Gen, n: u32) -> i32 {
    if refused() {
        return -1;
    }
    // SAFETY: the caller's contract.
    let generator = &mut unsafe { &mut *generator }.generator;
    let before = Saved::of(generator);
    let n = (n as usize).min(BATCH_CAP);
    let mut done = 0;
    while done < n {
        match generator.next_batch((n - done) as u32) {
            // The buffer is borrowed only after the clock was read; `get_mut` rather than
            // slicing, which would keep a panic path (done < n <= BATCH_CAP).
            Ok(batch) => match io::io().batch.get_mut(done..n) {
                Some(out) => done += batch.write_to(out),
                None => break,
            },
            Err(e) => {
                before.restore(generator);
                fail_gen(e);
                return -1;
            }
        }
    }
    done as i32
}

/// A generator's state, kept to be put back: a batch that fails changes nothing.
/// `Generator` is plain data (numbers and a clock tag, no `Drop`), and its IDs issued
/// since the copy never left the call (or, with `gen_save`, the JS call), so writing the
/// copy back is as if those calls had not run.
struct Saved(core::mem::MaybeUninit<Generator<JsClock>>);

impl Saved {
    fn of(generator: &Generator<JsClock>) -> Saved {
        let mut saved = core::mem::MaybeUninit::uninit();
        // SAFETY: a byte copy of a live value into space of its own type; the copy is
        // never used as a second generator, only written back in place of the first.
        unsafe { core::ptr::copy_nonoverlapping(generator, saved.as_mut_ptr(), 1) };
        Saved(saved)
    }

    fn restore(&self, generator: &mut Generator<JsClock>) {
        // SAFETY: `self` holds a byte copy of a live generator (see `of`); the value it
        // overwrites has no `Drop` to skip.
        unsafe { core::ptr::copy_nonoverlapping(self.0.as_ptr(), generator, 1) };
    }
}

/// The state `gen_save` kept, for a JS call that fills in several chunks.
struct SavedSlot(core::cell::UnsafeCell<Option<Saved>>);
// SAFETY: a wasm module instance runs on one thread, and these exports do not re-enter.
unsafe impl Sync for SavedSlot {}
static SAVED: SavedSlot = SavedSlot(core::cell::UnsafeCell::new(None));

/// Keeps the generator's state, for `gen_restore` if a later chunk of one JS batch fails.
///
/// # Safety
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_save(generator: *mut Gen) {
    // SAFETY: the caller's contract; one thread, no re-entry.
    unsafe { *SAVED.0.get() = Some(Saved::of(&(*generator).generator)) };
}

/// Puts back the state `gen_save` kept for this generator (its IDs since then were never
/// handed out).
///
/// # Safety
/// `generator` is the live generator last passed to `gen_save`, and no ID it issued since
/// then has left the JS call that saved it.
#[wasm_bindgen]
pub unsafe fn gen_restore(generator: *mut Gen) {
    // SAFETY: the caller's contract; one thread, no re-entry.
    if let Some(saved) = unsafe { (*SAVED.0.get()).take() } {
        saved.restore(unsafe { &mut (*generator).generator });
    }
}

/// Facts about a generator: [`GEN_LAYOUT`] the address of its layout (for `decode`),
/// [`GEN_NODE`] its node id, [`GEN_ISSUED_THROUGH_MS`] a Unix millisecond at or after
/// the time of every ID it has issued, else one of its `ClockStats` ([`GEN_BEHIND`] ...
/// [`GEN_AHEAD_MS`]).
///
/// # Safety
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_fact(generator: *mut Gen, field: u32) -> f64 {
    // SAFETY: the caller's contract.
    let generator = unsafe { &*generator };
    match field {
        GEN_LAYOUT => &generator.layout as *const Layout as usize as f64,
        GEN_NODE => generator.generator.node() as f64,
        GEN_ISSUED_THROUGH_MS => generator.generator.issued_through_ms() as f64,
        field => {
            let stats = generator.generator.stats();
            (match field {
                GEN_BEHIND => stats.behind,
                GEN_LARGEST_BEHIND_MS => stats.largest_behind_ms,
                GEN_CLOCK_WAITS => stats.clock_waits,
                GEN_TICK_WAITS => stats.tick_waits,
                _ => stats.ahead_ms,
            }) as f64
        }
    }
}

/// Issue only IDs whose time is before Unix millisecond `ms` (a lease's end).
///
/// # Safety
/// `generator` is a live generator from `gen_new`.
#[wasm_bindgen]
pub unsafe fn gen_set_fence(generator: *mut Gen, ms: f64) {
    // SAFETY: the caller's contract.
    unsafe { &mut *generator }.generator.set_fence_ms(ms as u64);
}
