//! What differs between boards: the periodic timer, its interrupt, and the clock rates.
//! SysTick, the free-running counter the ID clock reads, is the same on every Cortex-M.

#[cfg(board = "lm3s6965")]
mod lm3s6965;
#[cfg(board = "lm3s6965")]
pub use lm3s6965::*;
#[cfg(board = "microbit")]
mod microbit;
#[cfg(board = "microbit")]
pub use microbit::*;

use cortex_m::peripheral::{syst::SystClkSource, NVIC, SYST};

/// SysTick is 24 bits wide; with reload `2^bits - 1` it is a free-running counter of
/// `bits` bits. The demo uses 20 so that a run of a fifth of a second crosses several
/// wrap-arounds (every 84 ms on the LM3S6965, 66 ms on the micro:bit); a board would use 24.
pub const COUNTER_BITS: u32 = 20;
const COUNTER_MASK: u32 = (1 << COUNTER_BITS) - 1;

/// Starts SysTick as a free-running counter from zero, with no interrupt.
pub fn start_counter(syst: &mut SYST) {
    syst.disable_counter();
    syst.disable_interrupt();
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(COUNTER_MASK);
    syst.clear_current();
    syst.enable_counter();
}

/// SysTick as an up-counter: counts since [`start_counter`], modulo 2^COUNTER_BITS. SysTick counts
/// *down* from the reload value, and reads 0 right after it is cleared.
#[inline]
pub fn counter() -> u64 {
    u64::from(
        COUNTER_MASK
            .wrapping_add(1)
            .wrapping_sub(SYST::get_current())
            & COUNTER_MASK,
    )
}

/// Spins until the counter has advanced by `counts` (less than half a wrap).
pub fn wait_counts(counts: u32) {
    let start = counter();
    while counter().wrapping_sub(start) & u64::from(COUNTER_MASK) < u64::from(counts) {}
}

#[derive(Clone, Copy)]
struct Irq(u16);

// SAFETY: the number is a valid interrupt of the board (checked by the vector table size).
unsafe impl cortex_m::interrupt::InterruptNumber for Irq {
    fn number(self) -> u16 {
        self.0
    }
}

/// Lets the periodic timer's interrupt through.
pub fn unmask_periodic() {
    // SAFETY: the handler only touches state built for sharing with it (atomics and
    // critical-section mutexes).
    unsafe { NVIC::unmask(Irq(TIMER_IRQ)) }
}

/// Stops the periodic timer's interrupt.
pub fn mask_periodic() {
    NVIC::mask(Irq(TIMER_IRQ));
}

#[inline]
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
