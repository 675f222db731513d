//! The single-owner generator (`&mut self`) and batches of IDs.

use crate::clock::Clock;
use crate::engine::{self, Behind, Engine, Lead, Step};
use crate::error::Error;
use crate::layout::Layout;
use crate::policy::Policy;

/// Consecutive IDs reserved in one step, all in one tick: `first`, `first + step`, ...
///
/// ```
/// use snowdrift::{Generator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
/// let batch = generator.next_batch(100)?;
/// assert_eq!(batch.len(), 100);
/// let ids: Vec<u64> = batch.collect();
/// assert!(ids.windows(2).all(|w| w[1] > w[0]));
/// assert!(generator.next()? > ids[99]);
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    first: u64,
    step: u64,
    len: u32,
}

impl Batch {
    pub(crate) fn new(engine: &Engine, slot: u64, len: u32) -> Batch {
        Batch {
            first: engine.id(slot),
            step: engine.id_step(),
            len,
        }
    }
    pub(crate) fn empty(engine: &Engine) -> Batch {
        Batch {
            first: 0,
            step: engine.id_step(),
            len: 0,
        }
    }
    /// The first ID (0 for an empty batch).
    pub fn first(&self) -> u64 {
        self.first
    }
    /// Distance between consecutive IDs (1 unless the sequence sits above the node).
    pub fn step(&self) -> u64 {
        self.step
    }
    /// How many IDs are left.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether no IDs are left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The `i`th remaining ID.
    pub fn get(&self, i: usize) -> Option<u64> {
        (i < self.len()).then(|| self.first + i as u64 * self.step)
    }
    /// Writes the IDs to the start of `out` (as many as fit) and returns how many.
    #[inline]
    pub fn write_to(&self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.len());
        let (first, step) = (self.first, self.step);
        for (i, slot) in out.iter_mut().take(n).enumerate() {
            *slot = first + i as u64 * step;
        }
        n
    }
}

/// Fills `out` from batches taken by `take`: all of it, or what was written before an
/// error (the error itself when nothing was).
pub(crate) fn fill_with(
    out: &mut [u64],
    mut take: impl FnMut(u32) -> Result<Batch, Error>,
) -> Result<usize, Error> {
    let mut done = 0;
    while done < out.len() {
        let want = u32::try_from(out.len() - done).unwrap_or(u32::MAX);
        match take(want) {
            Ok(batch) => done += batch.write_to(&mut out[done..]),
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(done)
}

impl Iterator for Batch {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let id = self.first;
        self.len -= 1;
        if self.len > 0 {
            // Not past the last ID, which may be u64::MAX.
            self.first += self.step;
        }
        Some(id)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl ExactSizeIterator for Batch {}

/// A generator owned by one caller (`&mut self`): the fastest kind, with every
/// [`Policy`], including [`Policy::History`] when `H > 0` (a ring of the `H` most recent
/// ticks with their next free sequence number, kept inline: no heap).
///
/// ```
/// use snowdrift::{Generator, Layout, MonotonicClock, Policy};
/// let mut generator = Generator::new(MonotonicClock::new(), Layout::TWITTER, 33, Policy::DEFAULT)?;
/// let a = generator.next()?;
/// let b = generator.next()?;
/// assert!(b > a);
/// assert_eq!(Layout::TWITTER.decode(b)?.node, 33);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A generator is not `Clone`: a copy would hold the same node and state and issue the
/// same IDs. Two generators need two node ids.
///
/// ```compile_fail
/// use snowdrift::{Generator, Layout, MonotonicClock, Policy};
/// let generator = Generator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
/// let twin = generator.clone();
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug)]
pub struct Generator<C, const H: usize = 0> {
    engine: Engine,
    next: u64,
    history: History<H>,
    lead: Lead,
    /// Ticks at or past this one are refused: see [`Generator::set_fence_ms`].
    fence: u64,
    clock: C,
}

impl<C: Clock> Generator<C> {
    /// A generator for `node` (the whole node field; see [`Layout::node_from`] for split
    /// layouts). Fails if the node does not fit, or for [`Policy::History`], which needs
    /// [`Generator::with_history`].
    pub fn new(clock: C, layout: Layout, node: u64, policy: Policy) -> Result<Self, Error> {
        if policy == Policy::History {
            return Err(Error::Unsupported {
                reason: "the history policy needs a ring: use Generator::with_history",
            });
        }
        Ok(Generator::with_engine(
            Engine::new(layout, node, policy)?,
            clock,
        ))
    }
}

impl<C: Clock, const H: usize> Generator<C, H> {
    /// A generator under [`Policy::History`] with a ring of the `H` most recent ticks
    /// (`H` from 1; each entry takes 16 bytes). When the clock goes back to a tick in the
    /// ring, the tick's unspent sequence numbers are used; IDs stay unique but may then be
    /// below earlier ones. A step back past the ring is [`Error::ClockBackwards`].
    ///
    /// ```
    /// use snowdrift::{Generator, Layout, ManualClock};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::<_, 8>::with_history(&clock, Layout::DEFAULT, 1)?;
    /// let a = generator.next()?;
    /// clock.advance(3);
    /// let b = generator.next()?;
    /// clock.rewind(3); // back to the tick of `a`
    /// let c = generator.next()?;
    /// assert!(a < c && c < b); // unique, not monotonic
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn with_history(clock: C, layout: Layout, node: u64) -> Result<Self, Error> {
        const { assert!(H > 0, "the history ring needs at least one entry") };
        Ok(Generator::with_engine(
            Engine::new(layout, node, Policy::History)?,
            clock,
        ))
    }

    fn with_engine(engine: Engine, clock: C) -> Self {
        Generator {
            engine,
            next: 0,
            history: History::new(0),
            lead: Lead::default(),
            fence: u64::MAX,
            clock,
        }
    }

    /// The next ID, waiting (bounded by the policy) when the tick is used up or the clock
    /// is behind.
    #[inline(always)] // the common case is a few instructions; waiting is out of line
    #[allow(clippy::should_implement_trait)] // fallible, not an iterator
    pub fn next(&mut self) -> Result<u64, Error> {
        self.take_one(true)
    }

    /// The next ID if it is available without waiting, else [`Error::WouldBlock`]. Never
    /// spins or sleeps.
    ///
    /// ```
    /// use snowdrift::{Error, Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 0, Policy::Wait { max_wait_ms: 100 })?;
    /// for _ in 0..4096 { generator.try_next()?; } // a 12-bit sequence: 4096 per tick
    /// assert_eq!(generator.try_next(), Err(Error::WouldBlock));
    /// clock.advance(1);
    /// assert!(generator.try_next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline(always)]
    pub fn try_next(&mut self) -> Result<u64, Error> {
        self.take_one(false)
    }

    /// Reserves up to `n` consecutive IDs (at least one, at most the rest of one tick) in
    /// one step, waiting like [`next`](Self::next). `n == 0` gives an empty batch and
    /// changes nothing.
    pub fn next_batch(&mut self, n: u32) -> Result<Batch, Error> {
        if n == 0 {
            return Ok(Batch::empty(&self.engine));
        }
        self.take(n, true)
            .map(|(slot, len)| Batch::new(&self.engine, slot, len))
    }

    /// [`next_batch`](Self::next_batch) without waiting.
    pub fn try_next_batch(&mut self, n: u32) -> Result<Batch, Error> {
        if n == 0 {
            return Ok(Batch::empty(&self.engine));
        }
        self.take(n, false)
            .map(|(slot, len)| Batch::new(&self.engine, slot, len))
    }

    /// Fills `out` with increasing IDs, one batch per tick, waiting like
    /// [`next`](Self::next). Returns how many it wrote: all of `out`, or fewer if an error
    /// stopped it after the first ID (the error itself is returned when nothing was
    /// written).
    ///
    /// ```
    /// use snowdrift::{Generator, Layout, MonotonicClock, Policy};
    /// let mut generator = Generator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let mut ids = [0u64; 10_000];
    /// assert_eq!(generator.fill(&mut ids)?, 10_000);
    /// assert!(ids.windows(2).all(|w| w[1] > w[0]));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn fill(&mut self, out: &mut [u64]) -> Result<usize, Error> {
        fill_with(out, |want| self.next_batch(want))
    }

    /// Never issue an ID at or below `id` (a high-water mark persisted by an earlier run).
    ///
    /// A mark above the clock is a promise, not a clock step: under every policy the
    /// generator goes on from the mark, never further ahead of the clock than the mark was
    /// when it was set, until the clock catches up. Under [`Policy::History`] the ring
    /// forgets every slot at or below the mark.
    ///
    /// ```
    /// use snowdrift::{Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut first_run = Generator::new(&clock, Layout::DEFAULT, 5, Policy::Fail)?;
    /// let saved = first_run.next()?;
    /// clock.rewind(60_000); // the clock was set back before the restart
    /// let mut second_run = Generator::new(&clock, Layout::DEFAULT, 5, Policy::Fail)?;
    /// second_run.resume_after(saved)?;
    /// assert!(second_run.next()? > saved);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn resume_after(&mut self, id: u64) -> Result<(), Error> {
        let slot = self.engine.slot_above_id(id)?;
        self.raise(slot);
        Ok(())
    }

    /// Never issue an ID whose time is at or before Unix millisecond `ms`. The restart
    /// recipe: persist `now + margin` while running (again before the clock reaches it),
    /// and resume after the persisted value on boot; see
    /// [`resume_after`](Self::resume_after) for a mark above the clock.
    ///
    /// ```
    /// use snowdrift::{Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let persisted = 1_750_000_000_000 + 60_000; // saved by the previous run
    /// clock.advance(1_000); // restarted a second later
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// generator.resume_after_ms(persisted)?;
    /// let id = generator.next()?;
    /// assert!(Layout::DEFAULT.decode(id)?.time_ms > persisted);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn resume_after_ms(&mut self, ms: u64) -> Result<(), Error> {
        let slot = self.engine.slot_after_ms(ms)?;
        self.raise(slot);
        Ok(())
    }

    fn raise(&mut self, floor: u64) {
        let lead = self.engine.lead_for(floor, self.clock.now_ms());
        self.lead = self.lead.merge(lead);
        self.next = self.next.max(floor);
        self.history.raise(self.engine.seq_bits(), floor);
    }

    /// Issue only IDs whose time is before Unix millisecond `ms` (for example the end of a
    /// node id lease, less a clock-skew allowance): past it, calls fail with
    /// [`Error::PastFence`] and change nothing, until the fence moves forward. The fence
    /// may also move back, to stop at once. It stays when the node changes.
    ///
    /// ```
    /// use snowdrift::{Error, Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// generator.set_fence_ms(1_750_000_010_000); // the lease ends in 10 s
    /// assert!(generator.next().is_ok());
    /// clock.advance(10_000);
    /// assert!(matches!(generator.next(), Err(Error::PastFence { .. })));
    /// generator.set_fence_ms(1_750_000_020_000); // renewed
    /// assert!(generator.next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn set_fence_ms(&mut self, ms: u64) {
        self.fence = self.engine.ticks_before(ms);
    }

    /// Moves to another node id: the way on after [`Error::SwitchNode`]. The generator
    /// then issues only IDs timed after `not_before_ms`, the newest time at which any
    /// earlier holder of `node` may have issued an ID: a node id lease's `notBefore` (a
    /// lease hands it out with the node id), or 0 for a node id nobody has ever used. A
    /// mark above the clock is a promise, as for [`resume_after_ms`](Self::resume_after_ms).
    /// The node this generator holds is refused with [`Error::SameNode`]; a mark past the
    /// layout's end is an error; on error nothing changes. Resume marks of the old node are
    /// dropped; the fence stays.
    ///
    /// ```
    /// use snowdrift::{Error, Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::SwitchNode)?;
    /// generator.next()?;
    /// clock.rewind(5_000);
    /// assert_eq!(generator.next(), Err(Error::SwitchNode { by_ms: 5_000 }));
    /// assert_eq!(generator.switch_node(1, 0), Err(Error::SameNode { node: 1 }));
    /// // Node 2's previous holder issued up to 1_750_000_002_000 (its lease's notBefore).
    /// generator.switch_node(2, 1_750_000_002_000)?;
    /// let parts = Layout::DEFAULT.decode(generator.next()?)?;
    /// assert_eq!(parts.node, 2);
    /// assert!(parts.time_ms > 1_750_000_002_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn switch_node(&mut self, node: u64, not_before_ms: u64) -> Result<(), Error> {
        if node == self.engine.node {
            return Err(Error::SameNode { node });
        }
        let engine = self.engine.with_node(node)?;
        let floor = engine.slot_after_ms(not_before_ms)?;
        self.engine = engine;
        self.next = 0;
        self.history = History::new(0);
        self.lead = Lead::default();
        self.raise(floor);
        Ok(())
    }

    /// A Unix millisecond at or after the time of every ID this generator has issued:
    /// the start of the tick its next ID would take at the earliest (after a resume, the
    /// tick past the mark). On releasing a node id lease, the next holder is fenced after
    /// it rather than after the lease's end.
    ///
    /// ```
    /// use snowdrift::{Generator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// let id = generator.next()?;
    /// assert!(generator.issued_through_ms() >= Layout::DEFAULT.decode(id)?.time_ms);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn issued_through_ms(&self) -> u64 {
        self.engine.slot_start_ms(self.next)
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.engine.layout
    }
    /// The node id.
    pub fn node(&self) -> u64 {
        self.engine.node
    }
    /// The policy.
    pub fn policy(&self) -> Policy {
        self.engine.policy
    }
    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// One ID: inline, the common case of the clock in the tick of the next free slot;
    /// anything else out of line, through [`take_from`](Self::take_from).
    #[inline(always)]
    fn take_one(&mut self, blocking: bool) -> Result<u64, Error> {
        let ms = self.clock.now_ms();
        // Under the history policy every change of tick is recorded: all the way, always.
        if H == 0 {
            if let Some(slot) = self.engine.ready(ms, self.next, self.fence) {
                self.next = slot + 1;
                return Ok(self.engine.id(slot));
            }
        }
        self.take_one_from(ms, blocking)
    }

    #[inline(never)]
    fn take_one_from(&mut self, ms: u64, blocking: bool) -> Result<u64, Error> {
        self.take_from(ms, 1, blocking)
            .map(|(slot, _)| self.engine.id(slot))
    }

    /// Takes up to `n` slots of one tick: (first slot, count).
    #[inline(always)]
    fn take(&mut self, n: u32, blocking: bool) -> Result<(u64, u32), Error> {
        self.take_from(self.clock.now_ms(), n, blocking)
    }

    /// [`take`](Self::take), the clock's first reading being `first_ms`.
    #[inline(always)]
    fn take_from(&mut self, first_ms: u64, n: u32, blocking: bool) -> Result<(u64, u32), Error> {
        let n = n.max(1);
        let Generator {
            engine,
            next,
            history,
            lead,
            fence,
            clock,
        } = self;
        let (engine, fence) = (&*engine, *fence);
        engine::run_from(clock, first_ms, blocking, move |ms| {
            let now = match engine.tick(ms) {
                Ok(now) => now,
                Err(e) => return Step::Fail(e),
            };
            let slot = match engine.decide(now, ms, *next, fence, || *lead) {
                Step::Done(slot) => slot,
                Step::Lead(slot) => {
                    lead.through = slot >> engine.seq_bits();
                    slot
                }
                Step::Fail(Error::ClockBackwards { .. }) if H > 0 => {
                    return history.take(engine, now, ms, *next, n);
                }
                Step::Fail(e) => return Step::Fail(e),
                Step::Wait(behind) => return Step::Wait(behind),
                Step::NextTick { at_ms } => return Step::NextTick { at_ms },
            };
            // `next()` asks for one, and one always fits: a free slot leaves at least itself.
            let len = if n == 1 {
                1
            } else {
                engine.left_in_tick(slot).min(u64::from(n)) as u32
            };
            if H > 0 && *next > 0 && slot >> engine.seq_bits() != (*next - 1) >> engine.seq_bits() {
                history.remember(engine, *next);
            }
            *next = slot + u64::from(len);
            Step::Done((slot, len))
        })
    }
}

/// The ring of recent ticks for [`Policy::History`], each with its next free slot.
///
/// Every slot below `floor` is spent (its tick forgotten, or at or below a resume mark),
/// and every tick this generator used is the current one, in the ring, or wholly below
/// `floor`: so the slots of a tick not in the ring, from `floor` on, were never used.
#[derive(Debug)]
struct History<const H: usize> {
    ticks: [u64; H],
    next: [u64; H],
    len: usize,
    floor: u64,
}

impl<const H: usize> History<H> {
    fn new(floor: u64) -> Self {
        History {
            ticks: [0; H],
            next: [0; H],
            len: 0,
            floor,
        }
    }

    /// Records the tick of the slot before `next`, which the generator is leaving.
    #[cold]
    fn remember(&mut self, engine: &Engine, next: u64) {
        if next > self.floor {
            self.insert(engine.seq_bits(), (next - 1) >> engine.seq_bits(), next);
        }
    }

    /// Adds a tick, forgetting the oldest one when full. Returns false (and changes
    /// nothing) when `tick` is older than everything in a full ring.
    fn insert(&mut self, seq_bits: u32, tick: u64, next: u64) -> bool {
        if self.len < H {
            self.ticks[self.len] = tick;
            self.next[self.len] = next;
            self.len += 1;
            return true;
        }
        let Some(oldest) = (0..H).min_by_key(|&i| self.ticks[i]) else {
            return false;
        };
        if self.ticks[oldest] > tick {
            return false;
        }
        self.floor = self.floor.max((self.ticks[oldest] + 1) << seq_bits);
        self.ticks[oldest] = tick;
        self.next[oldest] = next;
        true
    }

    /// A resume mark: every slot below `floor` is spent from now on.
    fn raise(&mut self, seq_bits: u32, floor: u64) {
        if floor <= self.floor {
            return;
        }
        self.floor = floor;
        let floor_tick = floor >> seq_bits;
        let mut i = 0;
        while i < self.len {
            if self.ticks[i] < floor_tick {
                self.len -= 1;
                self.ticks[i] = self.ticks[self.len];
                self.next[i] = self.next[self.len];
            } else {
                if self.ticks[i] == floor_tick {
                    self.next[i] = self.next[i].max(floor);
                }
                i += 1;
            }
        }
    }

    /// Serves tick `now` (read at `now_ms`), which is behind the newest tick used
    /// (`newest` is the generator's next free slot), from the ring.
    #[cold]
    fn take(
        &mut self,
        engine: &Engine,
        now: u64,
        now_ms: u64,
        newest: u64,
        n: u32,
    ) -> Step<(u64, u32)> {
        let s = engine.seq_bits();
        let unit = u64::from(engine.layout.unit_ms());
        if let Some(i) = (0..self.len).find(|&i| self.ticks[i] == now) {
            let slot = self.next[i];
            if slot >> s != now {
                // This tick is used up too: wait for the next one, which may be in the
                // ring as well: at most H + 1 ticks in a row are used up.
                return Step::Wait(Behind {
                    at_ms: now_ms,
                    target_ms: engine.start_ms(now + 1),
                    limit_ms: (H as u64 + 1) * unit,
                });
            }
            let len = engine.left_in_tick(slot).min(u64::from(n));
            self.next[i] = slot + len;
            return Step::Done((slot, len as u32));
        }
        let slot = (now << s).max(self.floor);
        let len = engine.left_in_tick(slot).min(u64::from(n));
        if slot >> s == now && self.insert(s, now, slot + len) {
            return Step::Done((slot, len as u32));
        }
        // The oldest tick the ring could still serve: `now` is below it.
        let lowest = match self.len {
            len if len < H => self.floor >> s,
            _ => self.ticks.iter().copied().min().unwrap_or(0),
        };
        let newest_tick = (newest - 1) >> s;
        Step::Fail(Error::ClockBackwards {
            by_ms: (newest_tick - now) * unit,
            limit_ms: newest_tick.saturating_sub(lowest) * unit,
        })
    }
}
