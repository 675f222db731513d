//! Clock trouble a generator met, counted on its slow paths only.

use crate::error::{Error, Repr};

/// What a generator counted of its clock's trouble since it was made: read with
/// [`Generator::stats`](crate::Generator::stats) or
/// [`AtomicGenerator::stats`](crate::AtomicGenerator::stats) and report it to the metrics
/// system of your choice (the `snowdrift-lease` crate's `metrics` feature does).
///
/// Counted only where a call leaves its fast path (the clock behind the generator, a
/// tick's sequence used up), so a generator whose clock behaves pays nothing for it. A
/// clock step back that the policy absorbs within a tick already taken (under
/// [`Policy::Borrow`](crate::Policy::Borrow), up to its bound) is not seen as a step: it
/// shows as [`ahead_ms`](Self::ahead_ms), the time the generator runs ahead of its clock.
///
/// ```
/// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Wait { max_wait_ms: 10 })?;
/// generator.next()?;
/// clock.rewind(50);
/// assert!(generator.next().is_err()); // 50 ms back: more than the policy waits
/// let stats = generator.stats();
/// assert_eq!((stats.behind, stats.largest_behind_ms), (1, 50));
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClockStats {
    /// Calls that found the clock behind the generator's newest tick (a clock step back,
    /// or under `Borrow` the generator past its bound): each one the policy waited for
    /// (`Wait`, `Borrow`), or failed
    /// ([`ClockBackwards`](crate::ErrorKind::ClockBackwards),
    /// [`SwitchNode`](crate::ErrorKind::SwitchNode),
    /// [`TooFarAhead`](crate::ErrorKind::TooFarAhead)).
    pub behind: u64,
    /// The largest distance of those, in ms: how far the clock had to move to reach the
    /// generator's newest tick (`TooFarAhead`: how far ahead the next ID was).
    pub largest_behind_ms: u64,
    /// Calls that waited for the clock to catch up (of those counted in `behind`).
    pub clock_waits: u64,
    /// Calls that waited for the next tick because their tick's sequence was used up
    /// (the generator at the layout's rate).
    pub tick_waits: u64,
    /// How far the generator's newest ID is timed ahead of the clock's reading when the
    /// stats were read (time borrowed under `Borrow`, or a resume mark above the clock),
    /// in ms; 0 when it is not ahead.
    pub ahead_ms: u64,
}

/// Where the slow paths count (`engine::run_from` and `engine::wait`).
pub(crate) trait Tally {
    /// A call found the clock `by_ms` behind the generator; `waits` if it waits for it.
    fn behind(&mut self, by_ms: u64, waits: bool);
    /// A call waits for the next tick, its tick's sequence used up.
    fn tick_wait(&mut self);
}

/// A call failed with `e`: counted when it is a clock error.
#[cold]
pub(crate) fn failed(tally: &mut impl Tally, e: &Error) {
    match e.0 {
        Repr::ClockBackwards { by_ms, .. } | Repr::SwitchNode { by_ms } => {
            tally.behind(by_ms, false)
        }
        Repr::TooFarAhead { ahead_ms, .. } => tally.behind(ahead_ms, false),
        _ => {}
    }
}

/// Nothing counted (the ObjectId generator).
#[cfg(feature = "objectid")]
impl Tally for () {
    fn behind(&mut self, _: u64, _: bool) {}
    fn tick_wait(&mut self) {}
}

impl Tally for ClockStats {
    fn behind(&mut self, by_ms: u64, waits: bool) {
        self.behind = self.behind.wrapping_add(1);
        self.largest_behind_ms = self.largest_behind_ms.max(by_ms);
        self.clock_waits = self.clock_waits.wrapping_add(u64::from(waits));
    }

    fn tick_wait(&mut self) {
        self.tick_waits = self.tick_waits.wrapping_add(1);
    }
}

#[cfg(feature = "atomic")]
pub(crate) use shared::SharedStats;

#[cfg(feature = "atomic")]
mod shared {
    use super::{ClockStats, Tally};
    use crate::sync::{AtomicU64, Ordering};

    /// [`ClockStats`] of a shared generator: each count its own atomic, updated
    /// `Relaxed` (they order nothing).
    #[derive(Debug)]
    pub(crate) struct SharedStats {
        behind: AtomicU64,
        largest_behind_ms: AtomicU64,
        clock_waits: AtomicU64,
        tick_waits: AtomicU64,
    }

    impl SharedStats {
        #[cfg(not(loom))]
        pub const fn new() -> SharedStats {
            SharedStats {
                behind: AtomicU64::new(0),
                largest_behind_ms: AtomicU64::new(0),
                clock_waits: AtomicU64::new(0),
                tick_waits: AtomicU64::new(0),
            }
        }

        #[cfg(loom)]
        pub fn new() -> SharedStats {
            SharedStats {
                behind: AtomicU64::new(0),
                largest_behind_ms: AtomicU64::new(0),
                clock_waits: AtomicU64::new(0),
                tick_waits: AtomicU64::new(0),
            }
        }

        /// The counts now, `ahead_ms` as given.
        pub fn read(&self, ahead_ms: u64) -> ClockStats {
            ClockStats {
                behind: self.behind.load(Ordering::Relaxed),
                largest_behind_ms: self.largest_behind_ms.load(Ordering::Relaxed),
                clock_waits: self.clock_waits.load(Ordering::Relaxed),
                tick_waits: self.tick_waits.load(Ordering::Relaxed),
                ahead_ms,
            }
        }
    }

    impl Tally for &SharedStats {
        fn behind(&mut self, by_ms: u64, waits: bool) {
            self.behind.fetch_add(1, Ordering::Relaxed);
            self.largest_behind_ms.fetch_max(by_ms, Ordering::Relaxed);
            if waits {
                self.clock_waits.fetch_add(1, Ordering::Relaxed);
            }
        }

        fn tick_wait(&mut self) {
            self.tick_waits.fetch_add(1, Ordering::Relaxed);
        }
    }
}
