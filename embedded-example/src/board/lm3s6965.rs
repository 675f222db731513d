//! TI Stellaris LM3S6965 (Cortex-M3), as QEMU's `lm3s6965evb` emulates it: the core and
//! SysTick run from the system clock, and general-purpose timer 0 interrupts periodically.

use super::write;

/// The system clock QEMU 7.2 gives the board out of reset, which SysTick and the
/// general-purpose timers count: 12.5 MHz (measured against `-icount shift=0`).
pub const COUNTER_HZ: u64 = 12_500_000;

/// Timer 0A's interrupt number, and the length of the vector table that reaches it.
pub(super) const TIMER_IRQ: u16 = 19;
pub(super) const VECTORS: usize = 20;

const SYSCTL_RCGC1: usize = 0x400F_E104;
const TIMER0: usize = 0x4003_0000;
const CFG: usize = TIMER0;
const TAMR: usize = TIMER0 + 0x004;
const CTL: usize = TIMER0 + 0x00C;
const IMR: usize = TIMER0 + 0x018;
const ICR: usize = TIMER0 + 0x024;
const TAILR: usize = TIMER0 + 0x028;

/// Starts timer 0A in 32-bit periodic mode, interrupting every `period_us` microseconds.
pub fn start_periodic(period_us: u32) {
    write(SYSCTL_RCGC1, 1 << 16); // clock the timer
    write(CTL, 0);
    write(CFG, 0); // one 32-bit timer
    write(TAMR, 0x2); // periodic
    // QEMU counts exactly the load value per period (the chip: load + 1).
    write(
        TAILR,
        (u64::from(period_us) * COUNTER_HZ / 1_000_000) as u32,
    );
    write(IMR, 1); // time-out interrupt
    write(CTL, 1); // go
}

/// Acknowledges the periodic interrupt.
#[inline]
pub fn ack_periodic() {
    write(ICR, 1);
}

/// Stops the periodic timer.
pub fn stop_periodic() {
    write(CTL, 0);
}
