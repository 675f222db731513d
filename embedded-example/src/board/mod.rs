//! What differs between boards: the free-running counter the ID clock reads, the periodic
//! timer and its interrupt, and the runtime glue (vector table, fault and panic handlers).
//!
//! Every board module provides the same items: `COUNTER_BITS`, `COUNTER_HZ`, `counter`,
//! `start_counter`, `start_periodic`, `ack_periodic`, `stop_periodic`, `unmask_periodic`,
//! `mask_periodic` and `idle`.

#[cfg(target_arch = "arm")]
mod cortex_m;
#[cfg(target_arch = "arm")]
pub use self::cortex_m::*;
#[cfg(board = "lm3s6965")]
mod lm3s6965;
#[cfg(board = "lm3s6965")]
pub use lm3s6965::*;
#[cfg(board = "microbit")]
mod microbit;
#[cfg(board = "microbit")]
pub use microbit::*;
#[cfg(board = "riscv")]
mod riscv;
#[cfg(board = "riscv")]
pub use self::riscv::*;

/// Spins until the counter has advanced by `counts` (less than half a wrap).
pub fn wait_counts(counts: u32) {
    let mask = (1u64 << COUNTER_BITS) - 1;
    let start = counter();
    while counter().wrapping_sub(start) & mask < u64::from(counts) {}
}

#[inline]
#[allow(dead_code)]
fn write(addr: usize, value: u32) {
    // SAFETY: only called with the addresses of this board's timer registers.
    unsafe { core::ptr::write_volatile(addr as *mut u32, value) }
}

#[inline]
#[allow(dead_code)]
fn read(addr: usize) -> u32 {
    // SAFETY: only called with the addresses of this board's timer registers.
    unsafe { core::ptr::read_volatile(addr as *const u32) }
}
