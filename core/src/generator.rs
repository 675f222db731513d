//! The single-owner generator (`&mut self`).

use crate::batch::Batch;
use crate::clock::Clock;
use crate::engine::{self, Engine, Lead, Step};
use crate::error::{Error, ErrorKind, Repr};
use crate::history::History;
use crate::id_generator::IdGenerator;
use crate::layout::{Layout, mask};
use crate::policy::Policy;
use crate::stats::ClockStats;

/// A generator owned by one caller (`&mut self`): the fastest kind, with every
/// [`Policy`]; with `H > 0`, made by [`with_history`](Generator::with_history), it keeps
/// a ring of the `H` most recent ticks with their next free sequence number, inline (no
/// heap). Its calls are those of the [`IdGenerator`] trait.
///
/// ```
/// use snowdrift::{Generator, IdGenerator, Layout, MonotonicClock, Policy};
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
    /// The next free slot, except while `run` is live: then `run` holds it.
    next: u64,
    run: Run,
    history: History<H>,
    lead: Lead,
    /// Ticks at or past this one are refused: see [`IdGenerator::set_fence_ms`].
    fence: u64,
    /// Counted on the slow paths only (`ahead_ms` is filled in when read).
    stats: ClockStats,
    clock: C,
}

impl<C: Clock> Generator<C> {
    /// A generator for `node` (the whole node field; see [`Layout::node_from`] for split
    /// layouts). Fails if the node does not fit.
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Generator, Layout, MonotonicClock, Policy};
    /// let err = Generator::new(MonotonicClock::new(), Layout::TWITTER, 1024, Policy::DEFAULT).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::OutOfRange);
    /// ```
    pub fn new(clock: C, layout: Layout, node: u64, policy: Policy) -> Result<Self, Error> {
        Ok(Generator::with_engine(
            Engine::new(layout, node, policy)?,
            clock,
        ))
    }
}

impl<C: Clock, const H: usize> Generator<C, H> {
    /// A generator with a ring of the `H` most recent ticks (`H` from 1; each entry takes
    /// 16 bytes). When the clock goes back to a tick in the ring, the tick's unspent
    /// sequence numbers are used; IDs stay unique but may then be below earlier ones. A
    /// step back past the ring is [`ErrorKind::ClockBackwards`], as under
    /// [`Policy::Fail`] (which [`policy`](IdGenerator::policy) reports).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock};
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
            Engine::new(layout, node, Policy::Fail)?,
            clock,
        ))
    }

    fn with_engine(engine: Engine, clock: C) -> Self {
        Generator {
            engine,
            next: 0,
            run: Run::NONE,
            history: History::new(0),
            lead: Lead::default(),
            fence: u64::MAX,
            stats: ClockStats::default(),
            clock,
        }
    }

    /// The clock trouble this generator met so far ([`ClockStats`]), with how far its
    /// newest ID is ahead of the clock now (one clock reading).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// generator.next()?;
    /// clock.rewind(300); // under Borrow: IDs go on from the newest time used
    /// generator.next()?;
    /// assert_eq!(generator.stats().ahead_ms, 300);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn stats(&self) -> ClockStats {
        ClockStats {
            ahead_ms: self.engine.ahead_ms(self.next_slot(), self.clock.now_ms()),
            ..self.stats
        }
    }

    /// Moves to another node id: the way on after [`ErrorKind::SwitchNode`]. The generator
    /// then issues only IDs timed after `not_before_ms`, the newest time at which any
    /// earlier holder of `node` may have issued an ID: a node id lease's `notBefore` (a
    /// lease hands it out with the node id), or 0 for a node id nobody has ever used. A
    /// mark above the clock is a promise, as for
    /// [`resume_after_ms`](IdGenerator::resume_after_ms). The node this generator holds is
    /// refused with [`ErrorKind::SameNode`]; a mark past the
    /// layout's end is an error; on error nothing changes. Resume marks of the old node are
    /// dropped; the fence stays.
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::SwitchNode)?;
    /// generator.next()?;
    /// clock.rewind(5_000);
    /// let err = generator.next().unwrap_err();
    /// assert_eq!((err.kind(), err.behind_ms()), (ErrorKind::SwitchNode, Some(5_000)));
    /// let err = generator.switch_node(1, 0).unwrap_err();
    /// assert_eq!((err.kind(), err.value()), (ErrorKind::SameNode, Some(1)));
    /// // Node 2's previous holder issued up to 1_750_000_002_000 (its lease's notBefore).
    /// generator.switch_node(2, 1_750_000_002_000)?;
    /// let parts = Layout::DEFAULT.decode(generator.next()?)?;
    /// assert_eq!(parts.node, 2);
    /// assert!(parts.time_ms > 1_750_000_002_000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn switch_node(&mut self, node: u64, not_before_ms: u64) -> Result<(), Error> {
        if node == self.engine.node {
            return Err(Error(Repr::SameNode { node }));
        }
        let engine = self.engine.with_node(node)?;
        let floor = engine.slot_after_ms(not_before_ms)?;
        self.engine = engine;
        self.run = Run::NONE;
        self.next = 0;
        self.history = History::new(0);
        self.lead = Lead::default();
        self.raise(floor);
        Ok(())
    }

    fn raise(&mut self, floor: u64) {
        self.settle();
        let lead = self.engine.lead_for(floor, self.clock.now_ms());
        self.lead = self.lead.merge(lead);
        self.next = self.next.max(floor);
        self.history.raise(self.engine.seq_bits(), floor);
    }

    /// A batch of up to `n` IDs, waiting or not (`blocking` a constant where inlined).
    #[inline(always)]
    fn take_batch(&mut self, n: u32, blocking: bool) -> Result<Batch, Error> {
        if n == 0 {
            return Ok(Batch::empty(&self.engine));
        }
        self.take(n, blocking)
            .map(|(slot, len)| Batch::new(&self.engine, slot, len))
    }

    /// The next free slot, `run` included.
    #[inline]
    fn next_slot(&self) -> u64 {
        if self.run.is_live() {
            self.run.next_slot(self.engine.seq_shift())
        } else {
            self.next
        }
    }

    /// Ends the run: its next slot back into `next`, before anything else looks at it.
    #[inline]
    fn settle(&mut self) {
        self.next = self.next_slot();
        self.run = Run::NONE;
    }

    /// One ID: inline, the run (the rest of the tick the last call took, while the clock
    /// reads as it did then); anything else out of line, through
    /// [`take_from`](Self::take_from).
    #[inline(always)]
    fn take_one(&mut self, blocking: bool) -> Result<u64, Error> {
        let ms = self.clock.now_ms();
        if let Some(id) = self.run.take(ms) {
            return Ok(id);
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
        self.settle();
        let Generator {
            engine,
            next,
            run,
            history,
            lead,
            fence,
            stats,
            clock,
        } = self;
        let (engine, fence) = (&*engine, *fence);
        engine::run_from(clock, first_ms, blocking, stats, move |ms| {
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
                Step::Fail(e) if H > 0 && matches!(e.kind(), ErrorKind::ClockBackwards) => {
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
            // Under the history policy every change of tick is recorded: no run.
            if H == 0 {
                *run = Run::after(engine, now, ms, *next);
            }
            Step::Done((slot, len))
        })
    }
}

/// The rest of the tick a call took, handed out without the policy: while the clock
/// reads within `[from_ms, from_ms + len_ms)` (from the reading that took the tick to the
/// end of that reading's tick), the next IDs of the tick are the ones the whole way
/// ([`Engine::decide`]) would give. The reading's tick is the same and the reading no
/// earlier, so: the fence (a tick count, which stays while the run lives: every other
/// call ends the run) is not reached; a tick ahead of the clock is no further ahead; a
/// taken tick holds no lead to record. So `take` is the clock's reading, two comparisons
/// and an addition.
///
/// The run counts in IDs (`id` the next one, `last` the tick's last one), not slots: within
/// one tick the ID is `(slot << seq_shift) + offset`, so the slot comes back when the run
/// ends.
#[derive(Debug, Clone, Copy)]
struct Run {
    from_ms: u64,
    /// 0: no run.
    len_ms: u64,
    id: u64,
    last: u64,
    step: u64,
    offset: u64,
}

impl Run {
    const NONE: Run = Run {
        from_ms: 0,
        len_ms: 0,
        id: 1,
        last: 0,
        step: 0,
        offset: 0,
    };

    /// The run from slot `next` on, the clock having read `ms` (tick `now`) when the slot
    /// before it was taken; none when `next` starts a tick.
    fn after(engine: &Engine, now: u64, ms: u64, next: u64) -> Run {
        let seq_bits = engine.seq_bits();
        if next & mask(seq_bits) == 0 {
            return Run::NONE;
        }
        let first = engine.id(next);
        Run {
            from_ms: ms,
            len_ms: engine.start_ms(now + 1) - ms,
            id: first,
            last: engine.id(next | mask(seq_bits)),
            step: engine.id_step(),
            offset: first.wrapping_sub(next << engine.seq_shift()),
        }
    }

    fn is_live(&self) -> bool {
        self.len_ms != 0
    }

    /// The next ID of the run, if the clock's reading `ms` is within it and the tick has
    /// one left.
    #[inline(always)]
    fn take(&mut self, ms: u64) -> Option<u64> {
        let id = self.id;
        if ms.wrapping_sub(self.from_ms) < self.len_ms && id <= self.last {
            self.id = id + self.step;
            return Some(id);
        }
        None
    }

    /// The next free slot: the one of `id`.
    fn next_slot(&self, seq_shift: u32) -> u64 {
        self.id.wrapping_sub(self.offset) >> seq_shift
    }
}

impl<C: Clock, const H: usize> IdGenerator for Generator<C, H> {
    type Clock = C;

    #[inline(always)] // the common case is a few instructions; waiting is out of line
    fn next(&mut self) -> Result<u64, Error> {
        self.take_one(true)
    }

    #[inline(always)]
    fn try_next(&mut self) -> Result<u64, Error> {
        self.take_one(false)
    }

    #[inline]
    fn next_batch(&mut self, n: u32) -> Result<Batch, Error> {
        self.take_batch(n, true)
    }

    #[inline]
    fn try_next_batch(&mut self, n: u32) -> Result<Batch, Error> {
        self.take_batch(n, false)
    }

    fn resume_after(&mut self, id: u64) -> Result<(), Error> {
        let slot = self.engine.slot_above_id(id)?;
        self.raise(slot);
        Ok(())
    }

    fn resume_after_ms(&mut self, ms: u64) -> Result<(), Error> {
        let slot = self.engine.slot_after_ms(ms)?;
        self.raise(slot);
        Ok(())
    }

    fn set_fence_ms(&mut self, ms: u64) {
        self.settle();
        self.fence = self.engine.ticks_before(ms);
    }

    fn issued_through_ms(&self) -> u64 {
        self.engine.slot_start_ms(self.next_slot())
    }

    fn layout(&self) -> Layout {
        self.engine.layout
    }

    fn node(&self) -> u64 {
        self.engine.node
    }

    fn policy(&self) -> Policy {
        self.engine.policy
    }

    fn clock(&self) -> &C {
        &self.clock
    }
}
