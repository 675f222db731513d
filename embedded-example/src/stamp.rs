//! The ID source: one snowdrift `AtomicGenerator` in a `static`, over SysTick through the
//! core's `CounterClock`. Built without the `ids` feature, a plain counter instead (the
//! size baseline): everything else in the firmware stays the same.

#[cfg(feature = "ids")]
pub use with_core::*;
#[cfg(not(feature = "ids"))]
pub use without_core::*;

/// The node id, set when building: `SNOWDRIFT_NODE=37 cargo build --release`. A value that
/// does not fit the layout is a compile-time error.
#[cfg_attr(not(feature = "ids"), allow(dead_code))]
pub const NODE: u64 = match option_env!("SNOWDRIFT_NODE") {
    Some(text) => parse_node(text.as_bytes()),
    None => 1,
};

#[cfg_attr(not(feature = "ids"), allow(dead_code))]
const fn parse_node(text: &[u8]) -> u64 {
    assert!(!text.is_empty(), "SNOWDRIFT_NODE is empty");
    let mut n = 0u64;
    let mut i = 0;
    while i < text.len() {
        let d = text[i];
        assert!(
            d.is_ascii_digit(),
            "SNOWDRIFT_NODE must be a decimal number"
        );
        n = n * 10 + (d - b'0') as u64;
        assert!(n < 1 << 20, "SNOWDRIFT_NODE is too large");
        i += 1;
    }
    n
}

#[cfg(feature = "ids")]
mod with_core {
    use crate::board;
    use snowdrift::{AtomicGenerator, Clock, CounterClock, Error, ErrorKind, Layout, Policy};

    /// 41 bits of milliseconds since 2024, 10 bits of node, 12 of sequence.
    pub const LAYOUT: Layout = Layout::DEFAULT;

    /// After a reboot whose clock reads earlier than the persisted reservation, go on
    /// from the reservation on a logical clock (never reusing a slot) for up to a minute
    /// ahead of the board's clock, instead of stalling or failing.
    pub const POLICY: Policy = Policy::Borrow {
        max_ahead_ms: 60_000,
    };

    /// SysTick, extended past its 24 bits, plus the boot epoch set once it is known.
    pub static CLOCK: CounterClock<fn() -> u64> = CounterClock::new(
        board::counter as fn() -> u64,
        board::COUNTER_BITS,
        board::COUNTER_HZ,
        0,
    );

    /// The one generator, shared by the main loop and the timer interrupt.
    pub static IDS: AtomicGenerator<&CounterClock<fn() -> u64>> =
        match AtomicGenerator::new(&CLOCK, LAYOUT, super::NODE, POLICY) {
            Ok(ids) => ids,
            Err(_) => panic!("SNOWDRIFT_NODE does not fit the layout's 10-bit node field"),
        };

    /// Sets the boot epoch and never issues an ID at or before `resume_after_ms`. Returns
    /// the earliest time the next ID can have.
    pub fn start(boot_ms: u64, resume_after_ms: u64) -> Result<u64, Error> {
        CLOCK.set_boot_ms(boot_ms);
        IDS.resume_after_ms(resume_after_ms)?;
        Ok(resume_after_ms + u64::from(LAYOUT.unit_ms()))
    }

    /// Unix milliseconds now.
    #[inline]
    pub fn now_ms() -> u64 {
        CLOCK.now_ms()
    }

    /// The next ID without waiting (neither the main loop nor the interrupt handler
    /// waits; under the borrow policy nothing ever has to).
    #[inline]
    pub fn try_next() -> Result<u64, Error> {
        IDS.try_next()
    }

    pub fn would_block(e: &Error) -> bool {
        e.kind() == ErrorKind::WouldBlock
    }

    /// What went wrong: the core's message (`error-messages`, the default), or just its
    /// kind, which keeps the message texts and their formatting out of flash.
    #[cfg(feature = "error-messages")]
    pub fn describe(e: &Error) -> &Error {
        e
    }

    #[cfg(not(feature = "error-messages"))]
    pub fn describe(e: &Error) -> &'static str {
        match e.kind() {
            ErrorKind::ClockBackwards => "clock moved backwards",
            ErrorKind::TooFarAhead => "IDs too far ahead of the clock",
            ErrorKind::OutOfRange => "value out of range",
            ErrorKind::WouldBlock => "would block",
            _ => "ID generator error",
        }
    }

    /// The time of an ID, if it is one of ours.
    pub fn time_of(id: u64) -> Option<u64> {
        match LAYOUT.decode(id) {
            Ok(parts) if parts.node == super::NODE => Some(parts.time_ms),
            _ => None,
        }
    }
}

#[cfg(not(feature = "ids"))]
mod without_core {
    use crate::board;
    use portable_atomic::{AtomicU64, Ordering::Relaxed};

    static BOOT_MS: AtomicU64 = AtomicU64::new(0);
    static NEXT: AtomicU64 = AtomicU64::new(1);

    type StampError = &'static str;

    pub fn start(boot_ms: u64, resume_after_ms: u64) -> Result<u64, StampError> {
        BOOT_MS.store(boot_ms, Relaxed);
        Ok(resume_after_ms + 1)
    }

    /// Not extended past the counter's wrap: the baseline only needs to run.
    pub fn now_ms() -> u64 {
        let ms = board::counter() as u32 / (board::COUNTER_HZ / 1000) as u32;
        BOOT_MS.load(Relaxed) + u64::from(ms)
    }

    pub fn try_next() -> Result<u64, StampError> {
        Ok(NEXT.fetch_add(1, Relaxed))
    }

    pub fn would_block(_: &StampError) -> bool {
        false
    }

    pub fn describe(e: &StampError) -> &'static str {
        e
    }

    pub fn time_of(_id: u64) -> Option<u64> {
        Some(now_ms())
    }
}
