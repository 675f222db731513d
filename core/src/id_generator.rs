//! The one interface of every Snowflake generator.

use crate::batch::{Batch, fill_with};
use crate::clock::Clock;
use crate::error::Error;
use crate::layout::Layout;
use crate::policy::Policy;

/// What every Snowflake generator does: [`Generator`](crate::Generator) (one owner,
/// `&mut self`), [`AtomicGenerator`](crate::AtomicGenerator) (shared, lock-free) and a
/// shared reference to one (`&AtomicGenerator`). Code that drives a generator, a node id
/// lease or a test harness, is written once against this trait.
///
/// [`AtomicGenerator`](crate::AtomicGenerator) also has each issuing call as a method on
/// `&self`, for a generator in a `static` or shared by threads.
///
/// ```
/// use snowdrift::{AtomicGenerator, Generator, IdGenerator, Layout, ManualClock, Policy};
///
/// /// Takes three IDs from any generator.
/// fn three(generator: &mut impl IdGenerator) -> Result<[u64; 3], snowdrift::Error> {
///     Ok([generator.next()?, generator.next()?, generator.next()?])
/// }
///
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut owned = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
/// let shared = AtomicGenerator::new(&clock, Layout::DEFAULT, 2, Policy::DEFAULT)?;
/// assert!(three(&mut owned)?.is_sorted());
/// assert!(three(&mut &shared)?.is_sorted());
/// # Ok::<(), snowdrift::Error>(())
/// ```
pub trait IdGenerator {
    /// The clock the generator reads.
    type Clock: Clock;

    /// The next ID, waiting (bounded by the policy) when the tick is used up or the clock
    /// is behind.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, MonotonicClock, Policy};
    /// let mut generator = Generator::new(MonotonicClock::new(), Layout::TWITTER, 33, Policy::DEFAULT)?;
    /// let (a, b) = (generator.next()?, generator.next()?);
    /// assert!(b > a);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn next(&mut self) -> Result<u64, Error>;

    /// The next ID if it is available without waiting, else
    /// [`ErrorKind::WouldBlock`](crate::ErrorKind::WouldBlock). Never spins or sleeps
    /// (a shared generator retries a lost compare-and-swap race at once: another caller
    /// made progress).
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 0, Policy::Wait { max_wait_ms: 100 })?;
    /// for _ in 0..4096 { generator.try_next()?; } // a 12-bit sequence: 4096 per tick
    /// assert_eq!(generator.try_next().unwrap_err().kind(), ErrorKind::WouldBlock);
    /// clock.advance(1);
    /// assert!(generator.try_next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn try_next(&mut self) -> Result<u64, Error>;

    /// Reserves up to `n` consecutive IDs (at least one, at most the rest of one tick) in
    /// one step (one compare-and-swap on a shared generator), waiting like
    /// [`next`](Self::next). `n == 0` gives an empty batch and changes nothing.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(100)?;
    /// assert_eq!(batch.len(), 100);
    /// assert!(generator.next()? > batch.last().unwrap());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn next_batch(&mut self, n: u32) -> Result<Batch, Error>;

    /// [`next_batch`](Self::next_batch) without waiting.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Fail)?;
    /// assert_eq!(generator.try_next_batch(5000)?.len(), 4096); // the rest of the tick
    /// assert!(generator.try_next_batch(1).is_err()); // used up: no wait
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn try_next_batch(&mut self, n: u32) -> Result<Batch, Error>;

    /// Fills `out` with increasing IDs, one batch per tick, waiting like
    /// [`next`](Self::next). Returns how many it wrote: all of `out`, or fewer if an error
    /// stopped it after the first ID (the error itself is returned when nothing was
    /// written).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, MonotonicClock, Policy};
    /// let mut generator = Generator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let mut ids = [0u64; 10_000];
    /// assert_eq!(generator.fill(&mut ids)?, 10_000);
    /// assert!(ids.windows(2).all(|w| w[1] > w[0]));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn fill(&mut self, out: &mut [u64]) -> Result<usize, Error> {
        fill_with(out, |want| self.next_batch(want))
    }

    /// Never issue an ID at or below `id` (a high-water mark persisted by an earlier run).
    ///
    /// A mark above the clock is a promise, not a clock step: under every policy the
    /// generator goes on from the mark, never further ahead of the clock than the mark was
    /// when it was set (its *lead*, in whole ticks from the tick the clock read to the tick
    /// after the mark; under [`Policy::Borrow`] the bound instead, when that is larger),
    /// until the clock catches up. A history ring
    /// ([`Generator::with_history`](crate::Generator::with_history)) forgets every
    /// (tick, sequence) pair at or below the mark. A mark past the last ID the generator
    /// could issue is [`ErrorKind::ResumeOutOfRange`](crate::ErrorKind::ResumeOutOfRange).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut first_run = Generator::new(&clock, Layout::DEFAULT, 5, Policy::Fail)?;
    /// let saved = first_run.next()?;
    /// clock.rewind(60_000); // the clock was set back before the restart
    /// let mut second_run = Generator::new(&clock, Layout::DEFAULT, 5, Policy::Fail)?;
    /// second_run.resume_after(saved)?;
    /// assert!(second_run.next()? > saved);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn resume_after(&mut self, id: u64) -> Result<(), Error>;

    /// Never issue an ID whose time is at or before Unix millisecond `ms`. The restart
    /// recipe: persist `now + margin` while running (again before the clock reaches it),
    /// and resume after the persisted value on boot; see
    /// [`resume_after`](Self::resume_after) for a mark above the clock.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let persisted = 1_750_000_000_000 + 60_000; // saved by the previous run
    /// clock.advance(1_000); // restarted a second later
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// generator.resume_after_ms(persisted)?;
    /// let id = generator.next()?;
    /// assert!(Layout::DEFAULT.decode(id)?.time_ms > persisted);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn resume_after_ms(&mut self, ms: u64) -> Result<(), Error>;

    /// Issue only IDs whose time is before Unix millisecond `ms` (for example the end of a
    /// node id lease, less a clock-skew allowance): past it, calls fail with
    /// [`ErrorKind::PastFence`](crate::ErrorKind::PastFence) and change nothing, until the
    /// fence moves forward. The fence may also move back, to stop at once. It stays when
    /// the node changes. On a shared generator it is lock-free, callable while other
    /// threads take IDs: calls that start after this one returns (in the happens-before
    /// sense) see the new fence.
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// generator.set_fence_ms(1_750_000_010_000); // the lease ends in 10 s
    /// assert!(generator.next().is_ok());
    /// clock.advance(10_000);
    /// assert_eq!(generator.next().unwrap_err().kind(), ErrorKind::PastFence);
    /// generator.set_fence_ms(1_750_000_020_000); // renewed
    /// assert!(generator.next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn set_fence_ms(&mut self, ms: u64);

    /// A Unix millisecond at or after the time of every ID this generator has issued:
    /// the start of the tick its next ID would take at the earliest (after a resume, the
    /// tick past the mark). On releasing a node id lease, the next holder is fenced after
    /// it rather than after the lease's end. On a shared generator, read it after the last
    /// call that issued (or use [`AtomicGenerator::stop`](crate::AtomicGenerator::stop)).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// let id = generator.next()?;
    /// assert!(generator.issued_through_ms() >= Layout::DEFAULT.decode(id)?.time_ms);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn issued_through_ms(&self) -> u64;

    /// The layout.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let generator = Generator::new(ManualClock::new(0), Layout::TWITTER, 5, Policy::Fail)?;
    /// assert_eq!((generator.layout(), generator.node(), generator.policy()), (Layout::TWITTER, 5, Policy::Fail));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn layout(&self) -> Layout;

    /// The node id (the whole node field); see [`layout`](Self::layout).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let generator = Generator::new(ManualClock::new(0), Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// assert_eq!(generator.node(), 5);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn node(&self) -> u64;

    /// The policy; see [`layout`](Self::layout). A generator made by
    /// [`Generator::with_history`](crate::Generator::with_history) reports
    /// [`Policy::Fail`], what it does past its ring.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let generator = Generator::<_, 4>::with_history(ManualClock::new(0), Layout::DEFAULT, 5)?;
    /// assert_eq!(generator.policy(), Policy::Fail);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn policy(&self) -> Policy;

    /// The clock; see [`layout`](Self::layout).
    ///
    /// ```
    /// use snowdrift::{Clock, Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let generator = Generator::new(ManualClock::new(7), Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// assert_eq!(generator.clock().now_ms(), 7);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    fn clock(&self) -> &Self::Clock;
}
