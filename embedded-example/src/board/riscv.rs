//! RISC-V (`riscv32imc`, no atomic instructions at all) on QEMU's `virt` machine: the
//! CLINT's `mtime` (10 MHz) as the free-running counter, the machine timer interrupt
//! (`mtimecmp`) as the periodic timer. The generator's 64-bit compare-and-swap comes from
//! portable-atomic's critical sections, implemented by the `riscv` crate for one hart.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use riscv::interrupt::Interrupt;
use riscv::register::{mie, mstatus};

use super::{read, write};

/// `mtime` counted from [`start_counter`], cut to 20 bits like SysTick on the Cortex-M
/// boards, so that a short run crosses wrap-arounds (every 105 ms). A board would use 32.
pub const COUNTER_BITS: u32 = 20;
/// QEMU `virt`'s CLINT timebase.
pub const COUNTER_HZ: u64 = 10_000_000;

const MTIME: usize = 0x0200_BFF8;
const MTIMECMP: usize = 0x0200_4000; // hart 0

/// `mtime` runs from reset; the counter the clock reads starts at zero here.
static START: AtomicU32 = AtomicU32::new(0);
static PERIOD: AtomicU32 = AtomicU32::new(0);

pub fn start_counter() {
    START.store(read(MTIME), Relaxed);
}

#[inline]
pub fn counter() -> u64 {
    u64::from(read(MTIME).wrapping_sub(START.load(Relaxed)) & ((1 << COUNTER_BITS) - 1))
}

fn mtime() -> u64 {
    loop {
        let hi = read(MTIME + 4);
        let lo = read(MTIME);
        if read(MTIME + 4) == hi {
            return u64::from(hi) << 32 | u64::from(lo);
        }
    }
}

fn set_mtimecmp(at: u64) {
    write(MTIMECMP + 4, u32::MAX); // no spurious interrupt while the halves disagree
    write(MTIMECMP, at as u32);
    write(MTIMECMP + 4, (at >> 32) as u32);
}

pub fn start_periodic(period_us: u32) {
    let period = (u64::from(period_us) * COUNTER_HZ / 1_000_000) as u32;
    PERIOD.store(period, Relaxed);
    set_mtimecmp(mtime() + u64::from(period));
}

/// Schedules the next period (which also clears the pending interrupt).
pub fn ack_periodic() {
    set_mtimecmp(mtime() + u64::from(PERIOD.load(Relaxed)));
}

pub fn stop_periodic() {
    set_mtimecmp(u64::MAX);
}

pub fn unmask_periodic() {
    // SAFETY: the handler only touches state built for sharing with it.
    unsafe {
        mie::set_mtimer();
        mstatus::set_mie();
    }
}

pub fn mask_periodic() {
    // SAFETY: disabling an interrupt source cannot break anything.
    unsafe { mie::clear_mtimer() };
}

pub fn idle() {
    riscv::asm::wfi();
}

#[riscv_rt::core_interrupt(Interrupt::MachineTimer)]
fn machine_timer() {
    crate::on_timer();
}

#[unsafe(export_name = "ExceptionHandler")]
fn exception_handler(_frame: &riscv_rt::TrapFrame) -> ! {
    use core::fmt::Write;
    let mut console = crate::host::Console::open();
    let _ = writeln!(
        console,
        "exception mcause={:#x}",
        riscv::register::mcause::read().bits()
    );
    crate::host::exit(false)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    use core::fmt::Write;
    let mut console = crate::host::Console::open();
    let _ = writeln!(console, "{info}");
    crate::host::exit(false)
}
