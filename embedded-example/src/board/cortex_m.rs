//! Cortex-M glue shared by the LM3S6965 and the micro:bit: SysTick as the free-running
//! counter, the NVIC, the interrupt vector table, HardFault, and panics (through
//! panic-semihosting, which exits QEMU with a failure code).

use cortex_m::peripheral::{NVIC, SYST, syst::SystClkSource};
use cortex_m_rt::{ExceptionFrame, exception};
use panic_semihosting as _;

use super::{TIMER_IRQ, VECTORS};

/// SysTick is 24 bits wide; with reload `2^bits - 1` it is a free-running counter of
/// `bits` bits. The demo uses 20 so that a run of a fifth of a second crosses several
/// wrap-arounds (every 84 ms on the LM3S6965, 66 ms on the micro:bit); a board would use 24.
pub const COUNTER_BITS: u32 = 20;
const COUNTER_MASK: u32 = (1 << COUNTER_BITS) - 1;

/// Starts SysTick as a free-running counter from zero, with no interrupt.
pub fn start_counter() {
    let Some(mut core) = cortex_m::Peripherals::take() else {
        crate::host::exit(false)
    };
    let syst = &mut core.SYST;
    syst.disable_counter();
    syst.disable_interrupt();
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(COUNTER_MASK);
    syst.clear_current();
    syst.enable_counter();
}

/// SysTick as an up-counter: counts since [`start_counter`], modulo 2^COUNTER_BITS.
/// SysTick counts *down* from the reload value, and reads 0 right after it is cleared.
#[inline]
pub fn counter() -> u64 {
    u64::from(
        COUNTER_MASK
            .wrapping_add(1)
            .wrapping_sub(SYST::get_current())
            & COUNTER_MASK,
    )
}

#[derive(Clone, Copy)]
struct Irq(u16);

// SAFETY: the number is a valid interrupt of the board (the vector table reaches it).
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

/// Sleeps until an interrupt.
pub fn idle() {
    cortex_m::asm::wfi();
}

extern "C" fn timer_handler() {
    crate::on_timer();
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    use core::fmt::Write;
    let mut console = crate::host::Console::open();
    let _ = writeln!(console, "HardFault at pc={:#010x}", frame.pc());
    crate::host::exit(false)
}

/// The device's interrupt vectors, up to the periodic timer's (cortex-m-rt `device`).
#[unsafe(link_section = ".vector_table.interrupts")]
#[unsafe(no_mangle)]
#[used]
pub static __INTERRUPTS: [Vector; VECTORS] = {
    let mut v = [Vector {
        handler: DefaultHandler,
    }; VECTORS];
    v[TIMER_IRQ as usize] = Vector {
        handler: timer_handler,
    };
    v
};

#[derive(Clone, Copy)]
pub union Vector {
    handler: unsafe extern "C" fn(),
    _reserved: usize,
}

unsafe extern "C" {
    fn DefaultHandler();
}
