//! BBC micro:bit v1: Nordic nRF51822 (Cortex-M0), as QEMU's `microbit` machine emulates
//! it: the core and SysTick run at 16 MHz, and TIMER0 interrupts periodically.

use super::write;

/// The core clock, which SysTick counts.
pub const COUNTER_HZ: u64 = 16_000_000;

/// TIMER0's interrupt number, and the length of the vector table that reaches it.
pub(super) const TIMER_IRQ: u16 = 8;
pub(super) const VECTORS: usize = 9;

const TIMER0: usize = 0x4000_8000;
const TASKS_START: usize = TIMER0;
const TASKS_STOP: usize = TIMER0 + 0x004;
const TASKS_CLEAR: usize = TIMER0 + 0x00C;
const EVENTS_COMPARE0: usize = TIMER0 + 0x140;
const SHORTS: usize = TIMER0 + 0x200;
const INTENSET: usize = TIMER0 + 0x304;
const MODE: usize = TIMER0 + 0x504;
const BITMODE: usize = TIMER0 + 0x508;
const PRESCALER: usize = TIMER0 + 0x510;
const CC0: usize = TIMER0 + 0x540;

/// Starts TIMER0 at 1 MHz, interrupting (and restarting) every `period_us` microseconds.
pub fn start_periodic(period_us: u32) {
    write(MODE, 0); // timer, not counter
    write(BITMODE, 3); // 32 bits
    write(PRESCALER, 4); // 16 MHz / 2^4
    write(CC0, period_us);
    write(SHORTS, 1); // COMPARE[0] clears the timer
    write(INTENSET, 1 << 16); // COMPARE[0] interrupts
    write(TASKS_CLEAR, 1);
    write(TASKS_START, 1);
}

/// Acknowledges the periodic interrupt.
#[inline]
pub fn ack_periodic() {
    write(EVENTS_COMPARE0, 0);
    // Read back so the write lands before the handler returns (no spurious re-entry).
    let _ = super::read(EVENTS_COMPARE0);
}

/// Stops the periodic timer.
pub fn stop_periodic() {
    write(TASKS_STOP, 1);
}
