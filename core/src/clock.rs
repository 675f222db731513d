//! Time sources. Generators take their clock as a type parameter, never as a global.

use core::cell::Cell;

/// A source of wall-clock time in Unix milliseconds.
///
/// # Contract
/// - [`now_ms`](Clock::now_ms) returns milliseconds since 1970-01-01T00:00:00Z. It never
///   fails and never panics; it is called once per ID (once per batch), and repeatedly
///   while a generator waits for the next tick.
/// - It should move forward with real time. It **may** go backwards (NTP steps, a board
///   whose boot epoch was set wrong): generators detect that and apply their
///   [`Policy`](crate::Policy); they never issue a duplicate because of it.
/// - A reading that stays the same while a generator waits is a stopped clock: after a
///   bounded number of identical reads the generator returns
///   [`ErrorKind::ClockStalled`](crate::ErrorKind::ClockStalled) instead of spinning forever.
/// - A clock built on a narrow hardware counter must extend the counter across
///   wrap-around itself, so readings do not jump back each time the counter wraps.
///   [`CounterClock`] does this for any counter.
/// - Calls may come from several threads or from interrupt handlers when the clock is
///   used by an [`AtomicGenerator`](crate::AtomicGenerator): then `now_ms` must be safe to
///   call re-entrantly (the type must be `Sync`).
///
/// ```
/// use snowdrift::Clock;
/// struct Fixed;
/// impl Clock for Fixed {
///     fn now_ms(&self) -> u64 { 1_750_000_000_000 }
/// }
/// assert_eq!(Fixed.now_ms(), 1_750_000_000_000);
/// ```
pub trait Clock {
    /// The current time in Unix milliseconds.
    fn now_ms(&self) -> u64;

    /// Called between reads while a generator waits for the clock to move. The default
    /// is a spin-loop hint; the `std` clocks yield the thread.
    #[inline]
    fn relax(&self) {
        core::hint::spin_loop();
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    #[inline]
    fn relax(&self) {
        (**self).relax()
    }
}

/// A clock from a closure returning Unix milliseconds.
///
/// ```
/// use snowdrift::{Clock, FnClock};
/// let clock = FnClock(|| 1_750_000_000_000);
/// assert_eq!(clock.now_ms(), 1_750_000_000_000);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FnClock<F>(pub F);

impl<F: Fn() -> u64> Clock for FnClock<F> {
    #[inline]
    fn now_ms(&self) -> u64 {
        (self.0)()
    }
}

/// A clock you set by hand, for tests: step it forward and back, freeze it, or let it
/// advance by a fixed step on every read.
///
/// ```
/// use snowdrift::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(5);
/// clock.rewind(2);
/// assert_eq!(clock.now_ms(), 1_003);
/// let ticking = ManualClock::new(0).with_step(1);
/// assert_eq!((ticking.now_ms(), ticking.now_ms()), (0, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Cell<u64>,
    step: Cell<u64>,
    reads: Cell<u64>,
}

impl ManualClock {
    /// A frozen clock reading `ms`.
    pub const fn new(ms: u64) -> Self {
        ManualClock {
            now: Cell::new(ms),
            step: Cell::new(0),
            reads: Cell::new(0),
        }
    }
    /// Makes every read advance the clock by `step_ms` (after returning the reading).
    pub fn with_step(self, step_ms: u64) -> Self {
        self.step.set(step_ms);
        self
    }
    /// Sets the reading.
    pub fn set(&self, ms: u64) {
        self.now.set(ms);
    }
    /// Moves the clock forward.
    pub fn advance(&self, ms: u64) {
        self.now.set(self.now.get().saturating_add(ms));
    }
    /// Moves the clock back.
    pub fn rewind(&self, ms: u64) {
        self.now.set(self.now.get().saturating_sub(ms));
    }
    /// How many times the clock was read.
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        let now = self.now.get();
        self.now.set(now.saturating_add(self.step.get()));
        self.reads.set(self.reads.get() + 1);
        now
    }
}

#[cfg(feature = "std")]
pub use std_clocks::{MonotonicClock, SystemClock};

#[cfg(feature = "std")]
mod std_clocks {
    use super::Clock;
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    /// Whole milliseconds in `d`, `u64::MAX` past it.
    fn millis(d: Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    fn unix_ms_now() -> u64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => millis(d),
            Err(_) => 0, // before 1970: outside every layout, reported by the generator
        }
    }

    /// The system's wall clock (`SystemTime`). It follows NTP steps, so it can go
    /// backwards: pair it with a [`Policy`](crate::Policy) that says what to do then, or
    /// use [`MonotonicClock`].
    ///
    /// ```
    /// use snowdrift::{Clock, SystemClock};
    /// assert!(SystemClock.now_ms() > 1_600_000_000_000);
    /// ```
    #[derive(Debug, Clone, Copy, Default)]
    pub struct SystemClock;

    impl Clock for SystemClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            unix_ms_now()
        }
        fn relax(&self) {
            std::thread::yield_now();
        }
    }

    /// Wall-clock time read once at creation, then advanced by the monotonic clock
    /// (`Instant`): never goes backwards within a process, immune to NTP steps (it drifts
    /// from wall time only as far as the system clock is later corrected).
    ///
    /// ```
    /// use snowdrift::{Clock, MonotonicClock};
    /// let clock = MonotonicClock::new();
    /// let a = clock.now_ms();
    /// assert!(clock.now_ms() >= a);
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct MonotonicClock {
        origin: Instant,
        origin_ms: u64,
    }

    impl MonotonicClock {
        /// Anchors to the system clock now.
        pub fn new() -> Self {
            Self::anchored_at(unix_ms_now())
        }
        /// Anchors to the given Unix millisecond now (for example the last time persisted
        /// by a previous run, if the system clock is known to be behind it). Readings stop
        /// at `u64::MAX` instead of wrapping.
        pub fn anchored_at(unix_ms: u64) -> Self {
            MonotonicClock {
                origin: Instant::now(),
                origin_ms: unix_ms,
            }
        }
    }

    impl Default for MonotonicClock {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Clock for MonotonicClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            // Saturating: an anchor near the end of time stays there, never wraps to 1970.
            self.origin_ms.saturating_add(millis(self.origin.elapsed()))
        }
        fn relax(&self) {
            std::thread::yield_now();
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn milliseconds_past_u64_saturate() {
            assert_eq!(millis(Duration::from_micros(2_999)), 2);
            assert_eq!(millis(Duration::MAX), u64::MAX);
        }

        #[test]
        fn an_anchor_near_the_end_of_time_stays_there_instead_of_wrapping() {
            let clock = MonotonicClock::anchored_at(u64::MAX - 1);
            // At least 2 ms pass: past u64::MAX if added unchecked.
            std::thread::sleep(Duration::from_millis(2));
            assert_eq!(clock.now_ms(), u64::MAX);
            assert_eq!(clock.now_ms(), u64::MAX);
        }
    }
}

#[cfg(feature = "atomic")]
pub use counter::CounterClock;

#[cfg(feature = "atomic")]
mod counter {
    use super::Clock;
    use crate::sync::{
        AtomicU64,
        Ordering::{AcqRel, Acquire, Relaxed},
    };
    use core::num::NonZeroU64;

    /// A clock over a free-running hardware counter of `bits` bits at `hz` counts per
    /// second, plus a boot epoch: the Unix millisecond at which the counter read zero.
    ///
    /// The counter must read (near) zero when the clock is created, at `boot_ms`.
    /// The read function returns the raw counter as an *up*-counter, one that goes back
    /// only by wrapping around; wrap a down-counter such as SysTick as
    /// `(1 << 24) - 1 - cvr`.
    ///
    /// # Extension across wrap-around
    /// A reading ([`ticks`](CounterClock::ticks)) is the number of counts since boot, in
    /// 64 bits. The clock keeps the newest extension (the highest reading completed so
    /// far). A call takes it, *then* reads the counter, and places the raw value at the
    /// first count at or after that extension with the same low `bits` bits.
    ///
    /// **The rule:** when the counter is read, the newest extension must be less than a
    /// whole wrap period (2<sup>`bits`</sup> counts) behind it. Reading the clock
    /// (through [`now_ms`](Clock::now_ms) or [`ticks`](CounterClock::ticks)) at least once
    /// per half wrap period, by code that is not itself held up for another half period,
    /// keeps it: for a 24-bit SysTick at 12 MHz, every 0.69 s, for example from the
    /// timer's own interrupt; for a 1-bit counter, at every count.
    ///
    /// Under the rule every reading is the counter's true count at its raw read,
    /// however calls from the main loop, interrupt handlers (nested at any depth) and
    /// threads interleave:
    /// - A reading older than the last extension is placed before it, never after. A
    ///   call held up between its raw read and its extension (an interrupt handler or
    ///   another thread ran meanwhile) returns its own, older count; or, when a newer
    ///   extension landed before its own, it cannot tell its raw value from one a whole
    ///   wrap later, so it reads the counter again and returns that reading, at or after
    ///   the newer extension.
    /// - A reading taken after an extension is never behind it.
    ///
    /// Even when the rule is broken, no reading is ahead of the counter's true count: a
    /// raw read a whole wrap or more after the newest extension comes back whole wraps
    /// behind.
    ///
    /// ```
    /// use core::sync::atomic::{AtomicU32, Ordering};
    /// use snowdrift::{Clock, CounterClock};
    /// static RAW: AtomicU32 = AtomicU32::new(0); // stands in for a 16-bit timer register
    /// fn read() -> u64 { u64::from(RAW.load(Ordering::Relaxed)) }
    /// static CLOCK: CounterClock<fn() -> u64> = CounterClock::new(read, 16, 1000, 1_750_000_000_000);
    /// RAW.store(30_000, Ordering::Relaxed);
    /// assert_eq!(CLOCK.now_ms(), 1_750_000_030_000);
    /// RAW.store(60_000, Ordering::Relaxed);
    /// assert_eq!(CLOCK.now_ms(), 1_750_000_060_000);
    /// RAW.store(500, Ordering::Relaxed); // wrapped once
    /// assert_eq!(CLOCK.now_ms(), 1_750_000_066_036);
    /// ```
    #[derive(Debug)]
    pub struct CounterClock<F> {
        read: F,
        mask: u64,
        hz: NonZeroU64,
        boot_ms: AtomicU64,
        /// The newest extension: only ever raised.
        extended: AtomicU64,
    }

    /// The mask of a counter of `bits` bits (0 and more than 64 are taken as 64).
    const fn mask_of(bits: u32) -> u64 {
        if bits == 0 || bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }

    /// `hz`, with 0 taken as 1.
    const fn rate(hz: u64) -> NonZeroU64 {
        match NonZeroU64::new(hz) {
            Some(hz) => hz,
            None => NonZeroU64::MIN,
        }
    }

    impl<F: Fn() -> u64> CounterClock<F> {
        /// A clock over `read`, a counter of `bits` bits (1..=64; 0 and larger values are
        /// taken as 64) counting at `hz` (0 is taken as 1), zero at Unix millisecond
        /// `boot_ms`.
        #[cfg(not(loom))]
        pub const fn new(read: F, bits: u32, hz: u64, boot_ms: u64) -> Self {
            CounterClock {
                read,
                mask: mask_of(bits),
                hz: rate(hz),
                boot_ms: AtomicU64::new(boot_ms),
                extended: AtomicU64::new(0),
            }
        }

        /// Model-checking build: loom's atomics have no `const` constructor.
        #[cfg(loom)]
        pub fn new(read: F, bits: u32, hz: u64, boot_ms: u64) -> Self {
            CounterClock {
                read,
                mask: mask_of(bits),
                hz: rate(hz),
                boot_ms: AtomicU64::new(boot_ms),
                extended: AtomicU64::new(0),
            }
        }

        /// Sets the boot epoch (for example once read from a real-time clock or a host).
        pub fn set_boot_ms(&self, boot_ms: u64) {
            self.boot_ms.store(boot_ms, Relaxed);
        }

        /// The boot epoch in Unix milliseconds.
        pub fn boot_ms(&self) -> u64 {
            self.boot_ms.load(Relaxed)
        }

        /// Counts since boot, extended to 64 bits (see [the rule](CounterClock#extension-across-wrap-around)).
        pub fn ticks(&self) -> u64 {
            if self.mask == u64::MAX {
                return (self.read)(); // nothing to extend
            }
            // Taken before the raw read (Acquire: the read cannot move before it, and sees
            // the counter at least as far as the call that made this extension saw it).
            let mut newest = self.extended.load(Acquire);
            loop {
                let raw = (self.read)() & self.mask;
                // The first count at or after `newest` with these low bits: the raw read
                // came after `newest` was made, and (by the rule) less than a wrap after.
                let ticks = newest.saturating_add(raw.wrapping_sub(newest) & self.mask);
                let before = self.extended.fetch_max(ticks, AcqRel);
                if before <= ticks {
                    return ticks;
                }
                // Another call extended past `ticks` since `newest` was taken: this raw
                // value is either older than that extension or a whole wrap newer than
                // `ticks` (this call was held up before its raw read). Read again, from
                // the newer extension.
                newest = before;
            }
        }
    }

    impl<F: Fn() -> u64> Clock for CounterClock<F> {
        fn now_ms(&self) -> u64 {
            let t = self.ticks();
            // A non-zero divisor: no division-by-zero check or panic path in the firmware.
            let hz = self.hz;
            // Saturating: no overflow panic even for absurd rates or counts.
            let ms = (t / hz)
                .saturating_mul(1000)
                .saturating_add((t % hz).saturating_mul(1000) / hz);
            self.boot_ms.load(Relaxed).saturating_add(ms)
        }
    }

    #[cfg(all(test, not(loom)))]
    mod tests {
        use super::*;
        use core::cell::Cell;

        #[test]
        fn extends_a_narrow_counter_across_many_wraps() {
            let raw = Cell::new(0u64);
            let clock = CounterClock::new(|| raw.get(), 8, 1000, 0);
            let mut expected = 0u64;
            for step in [100u64, 100, 127, 3, 1, 90, 0, 128, 128]
                .iter()
                .cycle()
                .take(200)
            {
                expected += step;
                raw.set(expected & 0xff);
                assert_eq!(clock.ticks(), expected);
            }
        }

        #[test]
        fn a_reading_a_wrap_late_comes_back_whole_wraps_behind_never_ahead() {
            let raw = Cell::new(100u64);
            let clock = CounterClock::new(|| raw.get(), 8, 1000, 0);
            assert_eq!(clock.ticks(), 100);
            raw.set((100 + 300) & 0xff); // more than a wrap later: the rule is broken
            assert_eq!(clock.ticks(), 400 - 256);
            raw.set((400 + 100) & 0xff);
            assert_eq!(clock.ticks(), 500 - 256);
        }

        #[test]
        fn a_64_bit_counter_is_its_own_extension() {
            let raw = Cell::new(u64::MAX - 3);
            let clock = CounterClock::new(|| raw.get(), 64, 1000, 0);
            assert_eq!(clock.ticks(), u64::MAX - 3);
            raw.set(7); // reset by the firmware: read as it is
            assert_eq!(clock.ticks(), 7);
        }

        #[test]
        fn absurd_rates_and_counts_saturate_instead_of_panicking() {
            let raw = Cell::new(1u64 << 62);
            let clock = CounterClock::new(|| raw.get(), 64, 1, 1_000);
            assert_eq!(clock.now_ms(), u64::MAX);
            let clock = CounterClock::new(|| raw.get(), 64, u64::MAX, 0);
            assert!(clock.now_ms() <= 1000);
        }

        #[test]
        fn converts_counts_to_milliseconds_without_overflow() {
            // 2^62 counts at 12 MHz: about 12,000 years, past any u64 product of ms.
            let t = 1u64 << 62;
            let raw = Cell::new(t);
            let clock = CounterClock::new(|| raw.get(), 64, 12_000_000, 5);
            let expected = (t / 12_000_000) * 1000 + (t % 12_000_000) * 1000 / 12_000_000 + 5;
            assert_eq!(clock.now_ms(), expected);
        }
    }
}
