//! Firmware that stamps records with snowdrift IDs, from the main loop and from a timer
//! interrupt at the same time, with time from SysTick and restart safety through a
//! persisted reservation. Runs under QEMU: see README.md.
//!
//! At the end it writes `snowdrift.stats`: `contended=<k>`, how many times the timer
//! interrupt took an ID while a main-loop call was in flight.
//!
//! Output, one line each: `boot <k> target=<triple>`, then `record <n> src=<main|isr>
//! id=<decimal id>` in the order the IDs were issued, then `done <count>`; exit code 0
//! through semihosting. A panic, a HardFault or an ID error exits with 1.

#![no_std]
#![no_main]

mod board;
mod host;
mod log;
mod stamp;
mod store;

use core::fmt::Write;
use portable_atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use log::Src;
use store::State;

/// Records per run.
const RECORDS: u32 = 240;
/// The timer interrupt stamps one record per period.
const ISR_PERIOD_US: u32 = 2_000;
/// The main loop stamps a record about this often (emulated time).
const MAIN_PERIOD_US: u32 = 1_000;
/// The reservation runs this far ahead of the newest ID: one state write per half of it.
const MARGIN_MS: u64 = 100;
/// An ID is issued only this far below the reservation: covers the time between the check
/// and the generator's clock reading, and one borrowed tick.
const GUARD_MS: u64 = 2;

const TARGET: &str = env!("FIRMWARE_TARGET");

/// IDs up to this Unix millisecond may be issued: it is persisted before it is raised.
static RESERVED_MS: AtomicU64 = AtomicU64::new(0);
/// The time of the newest ID issued (or the earliest the next one can have).
static NEWEST_MS: AtomicU64 = AtomicU64::new(0);
/// Timer interrupts taken.
static TICKS: AtomicU32 = AtomicU32::new(0);
/// The counter's reading when the timer interrupt last ran, and the counts between its
/// last two runs.
static ISR_AT: AtomicU32 = AtomicU32::new(0);
static ISR_EVERY: AtomicU32 = AtomicU32::new(0);
/// Set by the interrupt handler when the generator fails; the main loop reports it.
static ISR_FAILED: AtomicU32 = AtomicU32::new(0);
/// Main-loop IDs dropped because an interrupt issued one while theirs was in flight.
static CONTENDED: AtomicU32 = AtomicU32::new(0);

#[cfg_attr(target_arch = "arm", cortex_m_rt::entry)]
#[cfg_attr(target_arch = "riscv32", riscv_rt::entry)]
fn main() -> ! {
    let mut console = host::Console::open();

    let boot_ms = store::boot_epoch_ms();
    let mut state = State::load();
    state.boots += 1;
    let _ = writeln!(console, "boot {} target={TARGET}", state.boots);

    // The counter reads zero from here on: that instant is `boot_ms`. It runs before the
    // generator resumes, since resuming reads the clock (a counter that later restarts
    // from zero would look a wrap ahead).
    board::start_counter();
    let first_ms =
        stamp::start(boot_ms, state.reserved_ms).unwrap_or_else(|e| fail(&stamp::describe(&e)));
    NEWEST_MS.store(first_ms, Relaxed);
    reserve(&mut state, true);

    board::start_periodic(ISR_PERIOD_US);
    board::unmask_periodic();

    let pace = (u64::from(MAIN_PERIOD_US) * board::COUNTER_HZ / 1_000_000) as u32;
    let mut round = 0u32;
    while log::issued() < RECORDS {
        board::wait_counts(pace);
        if ISR_FAILED.load(Relaxed) != 0 {
            fail(&"the timer interrupt could not get an ID");
        }
        reserve(&mut state, false);
        stamp_from_main();
        // Every third round, one more record timed to start a little before the timer
        // fires, so that the interrupt lands while this call is in flight. How long the
        // call takes differs by core (no divide instruction on the M0), so the lead sweeps
        // from 1 to 48 counts.
        round += 1;
        if round.is_multiple_of(3) {
            const LEADS: [u32; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48];
            wait_until_just_before_interrupt(LEADS[(round / 3) as usize % LEADS.len()]);
            stamp_from_main();
        }
        while let Some(rec) = log::pop() {
            print(&mut console, &rec);
        }
    }
    board::mask_periodic();
    board::stop_periodic();
    while let Some(rec) = log::pop() {
        print(&mut console, &rec);
    }
    let _ = writeln!(console, "done {}", log::issued());
    let mut stats = heapless::String::<32>::new();
    let _ = writeln!(stats, "contended={}", CONTENDED.load(Relaxed));
    host::write_file(b"snowdrift.stats\0", stats.as_bytes());
    host::exit(true)
}

/// Spins until `lead` counter counts before the timer's next interrupt is due, going by
/// its last period (at most one period).
fn wait_until_just_before_interrupt(lead: u32) {
    let mask = (1u64 << board::COUNTER_BITS) - 1;
    let period = u64::from(ISR_EVERY.load(Relaxed));
    let due = (u64::from(ISR_AT.load(Relaxed)) + period) & mask;
    loop {
        let left = due.wrapping_sub(board::counter()) & mask;
        if left <= u64::from(lead) || left > mask / 2 {
            return;
        }
    }
}

fn print(console: &mut host::Console, rec: &log::Record) {
    let src = match rec.src {
        Src::Main => "main",
        Src::Isr => "isr",
    };
    let _ = writeln!(console, "record {} src={src} id={}", rec.n, rec.id);
}

/// Raises the persisted reservation when IDs come within half the margin of it. The
/// state is written *before* the new limit is published, so no ID is ever issued above
/// what a reboot will resume after.
fn reserve(state: &mut State, force: bool) {
    let horizon = stamp::now_ms().max(NEWEST_MS.load(Relaxed));
    if !force && horizon + MARGIN_MS / 2 <= RESERVED_MS.load(Relaxed) {
        return;
    }
    state.reserved_ms = state.reserved_ms.max(horizon + MARGIN_MS);
    if !state.save() {
        fail(&"cannot write snowdrift.state");
    }
    RESERVED_MS.store(state.reserved_ms, Relaxed);
}

/// Whether an ID taken now stays within the persisted reservation.
fn within_reservation() -> bool {
    let horizon = stamp::now_ms().max(NEWEST_MS.load(Relaxed));
    horizon + GUARD_MS <= RESERVED_MS.load(Relaxed)
}

fn note_issued(id: u64) {
    match stamp::time_of(id) {
        Some(ms) => {
            NEWEST_MS.fetch_max(ms, Relaxed);
        }
        None => fail(&"an ID carries another node"),
    }
}

/// One record from the main loop. `try_next` rather than `next`: the main loop never
/// waits either (and one code path instead of two saves flash). The ID is taken with
/// interrupts enabled, so the timer
/// interrupt may preempt the generator mid-call and take its own ID. The record goes into
/// the log only if no interrupt ran between taking the ID and logging it: otherwise which
/// of the two IDs was issued first cannot be told from here, and the log must be in issue
/// order. A dropped ID is simply never used (IDs may have gaps; none is ever reissued).
fn stamp_from_main() {
    loop {
        if !within_reservation() {
            return; // the next pass writes the reservation first
        }
        if !critical_section::with(log::has_room) {
            return; // the run is complete, or the ring waits to be printed
        }
        let ticks = TICKS.load(Relaxed);
        let id = match stamp::try_next() {
            Ok(id) => id,
            Err(e) if stamp::would_block(&e) => return, // next pass
            Err(e) => fail(&stamp::describe(&e)),
        };
        // Only the interrupt adds records, and it counts TICKS first: if TICKS has not
        // moved, the room checked above is still there.
        let logged = critical_section::with(|cs| {
            if TICKS.load(Relaxed) != ticks {
                return false;
            }
            log::push(cs, Src::Main, id);
            true
        });
        if logged {
            note_issued(id);
            return;
        }
        CONTENDED.fetch_add(1, Relaxed);
    }
}

/// The periodic timer interrupt: one record per period, never waiting.
pub fn on_timer() {
    board::ack_periodic();
    let now = board::counter() as u32;
    let mask = ((1u64 << board::COUNTER_BITS) - 1) as u32;
    ISR_EVERY.store(now.wrapping_sub(ISR_AT.swap(now, Relaxed)) & mask, Relaxed);
    TICKS.fetch_add(1, Relaxed);
    critical_section::with(|cs| {
        if !log::has_room(cs) || !within_reservation() {
            return;
        }
        match stamp::try_next() {
            Ok(id) => {
                log::push(cs, Src::Isr, id);
                note_issued(id);
            }
            Err(e) if stamp::would_block(&e) => {} // the next period takes one
            Err(_) => ISR_FAILED.store(1, Relaxed),
        }
    });
}

fn fail(e: &dyn core::fmt::Display) -> ! {
    let mut console = host::Console::open();
    let _ = writeln!(console, "error: {e}");
    host::exit(false)
}
