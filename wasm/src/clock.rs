//! The core `Clock` over JS time: `Date.now()` by default, or a user's `clock` function.

use snowdrift::Clock;
use wasm_bindgen::prelude::wasm_bindgen;

// The package's `host.mjs`, next to the glue: `now` is `Date.now` itself, imported without
// a wrapper; `clock` and `random` reach the JS layer's state.
#[wasm_bindgen(raw_module = "./host.mjs")]
extern "C" {
    /// `Date.now`.
    fn now() -> f64;
    /// The user's clock function number `index`: Unix ms in 0..2^53, or -1 if it threw or
    /// returned something else (JS keeps that error and throws it).
    fn clock(index: u32) -> f64;
    /// `crypto.getRandomValues` over `len` bytes at `ptr`.
    fn random(ptr: *mut u8, len: usize);
    /// Throws the error of `kind` just recorded (see `io::fail`), or the clock's own: a
    /// failed call ends here, with no result for JS to check. (With an argument the glue
    /// reaches it through its own import object: `host.mjs` is then imported once, for
    /// `now`, and bundlers see no duplicate key.)
    pub fn raise(kind: u32);
}

/// True while a user's clock function runs: generators refuse calls from it.
static IN_CLOCK: crate::io::Flag = crate::io::Flag::new();

/// Whether a user's clock function is running (see [`IN_CLOCK`]).
#[inline(always)]
pub fn in_clock() -> bool {
    IN_CLOCK.get()
}

/// Fills `buf` from `crypto.getRandomValues`.
pub fn fill_random(buf: &mut [u8]) {
    random(buf.as_mut_ptr(), buf.len());
}

/// A reading no layout accepts: the generator reports it as a time error, and JS then
/// throws the clock's own error instead.
const FAILED: u64 = u64::MAX;

/// Wall-clock time for generators.
///
/// The default is `Date.now()`: wall time, so IDs from different processes and machines
/// order by their real creation time and decode to the right date, and the cheapest time
/// call in every runtime. `performance.timeOrigin + performance.now()` never goes back
/// within a process, but it drifts from wall time (it ignores NTP corrections and, in
/// some browsers, stops while the machine sleeps), so a long-lived process would stamp
/// IDs with the wrong time and interleave badly with other nodes. The rare backwards step
/// of `Date.now()` is what `onClockBackwards` is for.
#[derive(Clone, Copy)]
pub enum JsClock {
    /// `Date.now()`.
    DateNow,
    /// The user's function number `index` (JS holds the functions).
    Custom(u32),
}

impl Clock for JsClock {
    // Inlined into every generator call: the `Date.now` reading is the hot path.
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        let ms = match *self {
            JsClock::DateNow => now(),
            JsClock::Custom(index) => custom(index),
        };
        // Date.now() is an integer in 0..2^53; a custom reading was checked by JS (and
        // its fraction dropped here), or is -1 for a failure.
        if ms >= 0.0 { ms as u64 } else { FAILED }
    }
}

/// `Date.now()` alone, for the ObjectId generator (no user clock there).
pub struct DateNow;

impl Clock for DateNow {
    fn now_ms(&self) -> u64 {
        JsClock::DateNow.now_ms()
    }
}

/// A reading of the user's clock function number `index`, out of line (the `Date.now`
/// reading is inlined into every caller).
#[inline(never)]
fn custom(index: u32) -> f64 {
    // The JS side catches whatever the function throws: this always returns.
    IN_CLOCK.set(true);
    let ms = clock(index);
    IN_CLOCK.set(false);
    ms
}
