//! The core `Clock` over JS time: `Date.now()` by default, or a user's `clock` function.

use snowdrift::Clock;

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "env")]
    extern "C" {
        /// `Date.now`.
        pub fn now() -> f64;
        /// The user's clock function number `slot`: Unix ms in 0..2^53, or -1 if it threw
        /// or returned something else (JS keeps that error and throws it).
        pub fn clock(slot: u32) -> f64;
        /// `crypto.getRandomValues` over `len` bytes at `ptr`.
        pub fn random(ptr: *mut u8, len: u32);
    }
}

/// Stand-ins for host builds (tests and lints): the system clock, no custom clocks.
#[cfg(not(target_arch = "wasm32"))]
mod imports {
    pub unsafe fn now() -> f64 {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        since.map_or(0.0, |d| d.as_millis() as f64)
    }
    pub unsafe fn clock(_slot: u32) -> f64 {
        -1.0
    }
    pub unsafe fn random(ptr: *mut u8, len: u32) {
        for i in 0..len as usize {
            *ptr.add(i) = (i as u8).wrapping_mul(151).wrapping_add(7);
        }
    }
}

/// Fills `buf` from `crypto.getRandomValues`.
pub fn random(buf: &mut [u8]) {
    // SAFETY: the import writes exactly `len` bytes at `ptr`, inside `buf`.
    unsafe { imports::random(buf.as_mut_ptr(), buf.len() as u32) }
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
    /// The user's function number `slot` (JS holds the functions).
    Custom(u32),
}

impl Clock for JsClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        // SAFETY: the imports take and return plain numbers.
        let ms = unsafe {
            match *self {
                JsClock::DateNow => imports::now(),
                JsClock::Custom(slot) => imports::clock(slot),
            }
        };
        // Date.now() is an integer in 0..2^53; a custom reading was checked by JS (and
        // its fraction dropped here), or is -1 for a failure.
        if ms >= 0.0 {
            ms as u64
        } else {
            FAILED
        }
    }
}
