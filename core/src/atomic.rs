//! The lock-free shared generator (`&self`): one `fetch_add` per ID on a packed 64-bit
//! word; a compare-and-swap where the tick changes.
//!
//! # Why `fetch_add`
//!
//! A compare-and-swap loop retries whenever another core changed the word between its
//! load and its swap: with `n` cores taking IDs, each ID costs about `n` attempts, each a
//! transfer of the cache line, so the cost per ID grows with the cores. A `fetch_add`
//! always succeeds: one transfer per ID, whatever the number of cores. What it cannot do
//! is decide: it adds first and the caller learns afterwards what it took. So the word is
//! packed as `tick << count_bits | count` ([`Packing`]) with room above the sequence, and
//! `fetch_add` is used only where its outcome is known to be right, the rest of a tick
//! already taken (4095 of a 12-bit tick's 4096 IDs at the layout's rate):
//!
//! - `open` names the tick the fast path may count in: it is opened by the call that
//!   takes the tick (through the compare-and-swap and the policy, like every change of
//!   tick, a resume mark and a batch), and closed once the tick is known to be used up.
//!   It only grows, and lives on another cache line than the counter, so every core
//!   reads it from its own cache until the tick changes.
//! - The fast path reads `open`, the clock and the fence, and counts only when the clock's
//!   tick allows the open tick as the policy would (the same tick, or under `Borrow` a
//!   tick within the bound ahead of it) and the open tick is before the fence. Then one
//!   `fetch_add(1)`: if the count it returns lies in the open tick and below the
//!   sequence's end, that slot is the ID.
//! - Otherwise the tick is used up, or the call lost a race (another call took a later
//!   tick in between): `open` is moved up to what the count showed (closed when used
//!   up); a slot of a later tick is the ID if the clock's reading allows that tick as
//!   above, and is otherwise skipped (never issued, so no ID is issued twice;
//!   later IDs are still higher); the call then goes the whole way. Counts past the sequence's end stay in the room
//!   above it: each caller counts past the end of a tick at most once (it closes the tick
//!   before its next call reads `open`), so the room, at least 2^16 counts, holds as many
//!   callers at once. A layout with less room (a time field over 47 bits) never opens a
//!   tick: every call takes the compare-and-swap, as on targets without native 64-bit
//!   atomics ([`COUNTS`]).

use crate::batch::{Batch, fill_with};
use crate::clock::Clock;
use crate::engine::{self, Engine, Lead, Step};
use crate::error::Error;
use crate::id_generator::IdGenerator;
use crate::layout::Layout;
use crate::policy::Policy;
use crate::stats::{ClockStats, SharedStats};
use crate::sync::{AtomicU64, Ordering};

/// A generator shared by threads and interrupt handlers (`&self`, `Sync`), lock-free: its
/// state is one 64-bit counter of slots (its next free (tick, sequence) pair), taken with
/// one `fetch_add` per ID within a tick and a compare-and-swap where the tick changes or a
/// batch is taken (see the module source for why); the cost per ID does not grow with the
/// number of threads retrying. It can live in a `static`.
///
/// On targets without native 64-bit atomics (Cortex-M0, RISC-V `imc`) it uses
/// `portable-atomic`; the *firmware* then enables portable-atomic's `critical-section`
/// feature (or `unsafe-assume-single-core`), never this library. On Cortex-M3/M4/M7 (32-bit
/// atomics only) `critical-section` has no effect and portable-atomic's default is a spin
/// lock, which deadlocks if an interrupt handler calls the generator while the code it
/// preempted holds the lock: single-core firmware enables `unsafe-assume-single-core`.
///
/// Supports every [`Policy`] (a history ring, [`Generator::with_history`], does not fit
/// one word). After [`ErrorKind::SwitchNode`](crate::ErrorKind::SwitchNode), build a new
/// generator with the new node id.
///
/// Its calls are those of the [`IdGenerator`] trait, which it implements, and so does
/// `&AtomicGenerator`; each is also a method on `&self` (documented on the trait), for a
/// generator in a `static`, in an `Arc` or used from interrupt handlers.
///
/// [`Generator::with_history`]: crate::Generator::with_history
///
/// ```
/// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
/// use std::{sync::Arc, thread};
/// let generator = Arc::new(AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 9, Policy::DEFAULT)?);
/// let handles: Vec<_> = (0..2).map(|_| {
///     let generator = Arc::clone(&generator);
///     thread::spawn(move || (0..1000).map(|_| generator.next().unwrap()).collect::<Vec<_>>())
/// }).collect();
/// let mut all: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
/// all.sort_unstable();
/// all.dedup();
/// assert_eq!(all.len(), 2000);
/// # Ok::<(), snowdrift::Error>(())
/// ```
///
/// In a `static` (the constructor is a `const fn`):
///
/// ```
/// use snowdrift::{AtomicGenerator, FnClock, Layout, Policy};
/// fn board_ms() -> u64 { 1_750_000_000_000 } // a hardware timer, in real firmware
/// static IDS: AtomicGenerator<FnClock<fn() -> u64>> =
///     match AtomicGenerator::new(FnClock(board_ms as fn() -> u64), Layout::DEFAULT, 3, Policy::Fail) {
///         Ok(generator) => generator,
///         Err(_) => panic!("node 3 does not fit"), // a compile-time error
///     };
/// assert!(IDS.next().unwrap() > 0);
/// ```
#[derive(Debug)]
pub struct AtomicGenerator<C> {
    engine: Engine,
    packing: Packing,
    /// The next free slot, packed ([`Packing`]).
    next: Padded<AtomicU64>,
    /// The tick the fast path counts in, as an ID of it: its first ID while the tick is
    /// open (taken, not known to be used up), the ID of its second slot once it is closed
    /// (tick 0 closed before any). Only grows, as IDs grow with the slot.
    open: AtomicU64,
    /// The [`Lead`] of resume marks, as two words: each only grows, so concurrent resumes
    /// keep the largest lead and the newest tick it covers.
    lead_ticks: AtomicU64,
    lead_through: AtomicU64,
    /// Ticks at or past this one are refused: see [`IdGenerator::set_fence_ms`].
    fence: AtomicU64,
    /// Counted on the slow paths only.
    stats: Padded<SharedStats>,
    clock: C,
}

impl<C: Clock> AtomicGenerator<C> {
    /// A generator for `node` (see [`Layout::node_from`] for split layouts). Fails if the
    /// node does not fit.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Field, Layout, MonotonicClock, Policy};
    /// let err = AtomicGenerator::new(MonotonicClock::new(), Layout::TWITTER, 1024, Policy::DEFAULT).unwrap_err();
    /// assert_eq!(err.field(), Some(Field::Node));
    /// ```
    #[cfg(not(loom))]
    pub const fn new(clock: C, layout: Layout, node: u64, policy: Policy) -> Result<Self, Error> {
        match Engine::new(layout, node, policy) {
            Ok(engine) => Ok(AtomicGenerator {
                engine,
                packing: Packing::new(layout),
                next: Padded(AtomicU64::new(0)),
                open: AtomicU64::new(layout.pack(0, node, 1)),
                lead_ticks: AtomicU64::new(0),
                lead_through: AtomicU64::new(0),
                fence: AtomicU64::new(u64::MAX),
                stats: Padded(SharedStats::new()),
                clock,
            }),
            Err(e) => {
                // A const fn cannot run the clock's destructor; the clock is a plain value
                // in every sensible case, so forgetting it loses nothing.
                core::mem::forget(clock);
                Err(e)
            }
        }
    }

    /// Model-checking build: loom's atomics have no `const` constructor.
    #[cfg(loom)]
    pub fn new(clock: C, layout: Layout, node: u64, policy: Policy) -> Result<Self, Error> {
        let engine = Engine::new(layout, node, policy)?;
        Ok(AtomicGenerator {
            engine,
            packing: Packing::new(layout),
            next: Padded(AtomicU64::new(0)),
            open: AtomicU64::new(layout.pack(0, node, 1)),
            lead_ticks: AtomicU64::new(0),
            lead_through: AtomicU64::new(0),
            fence: AtomicU64::new(u64::MAX),
            stats: Padded(SharedStats::new()),
            clock,
        })
    }

    /// [`IdGenerator::next`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// assert!(generator.next()? < generator.next()?);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline(always)] // the common case is a few instructions; waiting is out of line
    pub fn next(&self) -> Result<u64, Error> {
        self.take_one(true)
    }

    /// [`IdGenerator::try_next`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// assert!(generator.try_next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline(always)]
    pub fn try_next(&self) -> Result<u64, Error> {
        self.take_one(false)
    }

    /// [`IdGenerator::next_batch`] through `&self`: one compare-and-swap.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(64)?;
    /// assert!(batch.len() >= 1 && batch.len() <= 64);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn next_batch(&self, n: u32) -> Result<Batch, Error> {
        self.take_batch(n, true)
    }

    /// [`IdGenerator::try_next_batch`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// assert!(generator.try_next_batch(0)?.is_empty());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn try_next_batch(&self, n: u32) -> Result<Batch, Error> {
        self.take_batch(n, false)
    }

    /// [`IdGenerator::fill`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let mut ids = [0; 5000];
    /// assert_eq!(generator.fill(&mut ids)?, 5000);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn fill(&self, out: &mut [u64]) -> Result<usize, Error> {
        fill_with(out, |want| self.next_batch(want))
    }

    /// [`IdGenerator::resume_after`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
    /// let generator = AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let saved = generator.next()?;
    /// generator.resume_after(saved)?;
    /// assert!(generator.next()? > saved);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn resume_after(&self, id: u64) -> Result<(), Error> {
        let slot = self.engine.slot_above_id(id)?;
        self.raise(slot);
        Ok(())
    }

    /// [`IdGenerator::resume_after_ms`] through `&self`.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let generator = AtomicGenerator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// generator.resume_after_ms(1_750_000_000_500)?;
    /// assert!(Layout::DEFAULT.decode(generator.next()?)?.time_ms > 1_750_000_000_500);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn resume_after_ms(&self, ms: u64) -> Result<(), Error> {
        let slot = self.engine.slot_after_ms(ms)?;
        self.raise(slot);
        Ok(())
    }

    fn raise(&self, floor: u64) {
        let lead = self.engine.lead_for(floor, self.clock.now_ms());
        if lead.ticks > 0 {
            self.lead_ticks.fetch_max(lead.ticks, Ordering::Relaxed);
            self.lead_through.fetch_max(lead.through, Ordering::Relaxed);
        }
        // Release: a caller that sees the new counter sees the lead too.
        self.next
            .0
            .fetch_max(self.packing.word(floor), Ordering::AcqRel);
        // Every tick below the mark's is closed: a later call counts there no more (its
        // count would land in the mark's tick, judged against the wrong one).
        let floor_tick = floor >> self.engine.seq_bits();
        if COUNTS && floor_tick > 0 {
            self.open
                .fetch_max(self.open_id(floor_tick - 1, true), Ordering::AcqRel);
        }
    }

    fn lead(&self) -> Lead {
        Lead {
            ticks: self.lead_ticks.load(Ordering::Relaxed),
            through: self.lead_through.load(Ordering::Relaxed),
        }
    }

    /// [`IdGenerator::set_fence_ms`] through `&self`, while other threads take IDs.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, ErrorKind, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let generator = AtomicGenerator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// generator.set_fence_ms(1_750_000_000_000); // nothing at or after now
    /// assert_eq!(generator.next().unwrap_err().kind(), ErrorKind::PastFence);
    /// generator.set_fence_ms(1_750_000_010_000);
    /// assert!(generator.next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn set_fence_ms(&self, ms: u64) {
        self.fence
            .store(self.engine.ticks_before(ms), Ordering::SeqCst);
    }

    /// Stops the generator and returns a Unix millisecond at or after the time of every
    /// ID it ever issued, calls still running on other threads included: what a node id
    /// lease hands to the next holder when it is released. Afterwards every call fails
    /// with [`ErrorKind::PastFence`](crate::ErrorKind::PastFence) (until
    /// [`set_fence_ms`](Self::set_fence_ms) moves the fence again).
    ///
    /// Lowering the fence and then reading
    /// [`issued_through_ms`](IdGenerator::issued_through_ms) is not enough: a call that
    /// checked the fence before it moved can still take its (tick, sequence) pair
    /// afterwards. `stop` lowers the fence, then moves the counter on by one (a pair never
    /// issued), so every such call's compare-and-swap fails and, retrying, sees the fence;
    /// the counter it moved is the high-water mark. A call counting in the open tick (one
    /// atomic add) that read the fence before it moved may still take a pair after the
    /// moved counter: in that same tick, whose start is at or before the time returned.
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, ErrorKind, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let generator = AtomicGenerator::new(&clock, Layout::DEFAULT, 5, Policy::DEFAULT)?;
    /// let id = generator.next()?;
    /// assert!(generator.stop() >= Layout::DEFAULT.decode(id)?.time_ms);
    /// assert_eq!(generator.next().unwrap_err().kind(), ErrorKind::PastFence);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn stop(&self) -> u64 {
        self.set_fence_ms(0);
        let mut seen = self.next.0.load(Ordering::Acquire);
        loop {
            let mark = self.packing.slot(seen).saturating_add(1);
            // Release: a call that loads the moved counter sees the lowered fence.
            match self.next.0.compare_exchange_weak(
                seen,
                self.packing.word(mark),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return self.engine.slot_start_ms(mark),
                Err(actual) => seen = actual,
            }
        }
    }

    /// The clock trouble this generator met so far ([`ClockStats`]), with how far its
    /// newest ID is ahead of the clock now (one clock reading).
    ///
    /// ```
    /// use snowdrift::{AtomicGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let generator = AtomicGenerator::new(&clock, Layout::DEFAULT, 1, Policy::Fail)?;
    /// generator.next()?;
    /// clock.rewind(20);
    /// assert!(generator.next().is_err());
    /// let stats = generator.stats();
    /// assert_eq!((stats.behind, stats.largest_behind_ms, stats.ahead_ms), (1, 20, 20));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn stats(&self) -> ClockStats {
        let next = self.packing.slot(self.next.0.load(Ordering::Acquire));
        self.stats
            .0
            .read(self.engine.ahead_ms(next, self.clock.now_ms()))
    }

    /// One ID: inline, a `fetch_add` in the open tick when the clock and the fence allow it
    /// (see the module source); anything else out of line.
    #[inline(always)]
    fn take_one(&self, blocking: bool) -> Result<u64, Error> {
        let engine = &self.engine;
        // The clock first: a call nested in the reading (an interrupt handler) that takes
        // a later tick has opened it before `open` is read, so its tick is judged against
        // this reading here, before anything is counted.
        let ms = self.clock.now_ms();
        if !COUNTS {
            return self.take_one_from(ms, blocking);
        }
        let open = self.open.load(Ordering::Acquire);
        let tick = open >> engine.time_shift();
        // The open tick is the clock's, or a tick within the bound ahead of it: what
        // `Engine::decide` hands out (the tick is taken, so the count is not its first
        // slot). `open` is the tick's first ID: the `fetch_add` only adds the sequence.
        // One comparison covers a reading outside the layout too: its tick is above the
        // last (`Engine::tick_or_above`), so below every tick in wrapping arithmetic, and
        // no tick under the bound (`borrow_ticks`, 0 except under `Borrow`) is ever opened,
        // so the window `[tick - borrow_ticks, tick]` never wraps.
        if open & engine.seq_field() == 0
            && tick < self.fence.load(Ordering::Acquire)
            && engine.ticks_ahead(tick, ms) <= engine.borrow_ticks()
        {
            let counted = self.next.0.fetch_add(1, Ordering::AcqRel);
            let seq = counted.wrapping_sub(tick << self.packing.count_bits);
            if seq < self.packing.seq_len {
                return Ok(open + (seq << engine.seq_shift()));
            }
            return self.counted_past(counted, ms, blocking);
        }
        self.take_one_from(ms, blocking)
    }

    /// A `fetch_add` counted outside the open tick's sequence (`counted`, the value it
    /// returned). Either the tick of `counted` is used up (the count lies in the room
    /// above its sequence, no slot): it is closed. Or it is a later tick, which another
    /// call took after this one read `open`: it is opened, and its slot is the ID if the
    /// clock's reading and the fence allow that tick as the fast path would; otherwise the
    /// slot is skipped (never issued, so nothing repeats). Then the whole way.
    #[cold]
    #[inline(never)]
    fn counted_past(&self, counted: u64, ms: u64, blocking: bool) -> Result<u64, Error> {
        let engine = &self.engine;
        let tick = counted >> self.packing.count_bits;
        let count = counted & self.packing.count_mask;
        let used_up = count >= self.packing.seq_len;
        if used_up || tick >= engine.borrow_ticks() {
            self.open
                .fetch_max(self.open_id(tick, used_up), Ordering::AcqRel);
        }
        if used_up {
            return self.take_one_from(ms, blocking);
        }
        // The reading taken before the count: a reading after it could let an interrupt
        // handler (or a nested call) take a higher ID first, and a call must return an ID
        // above every one issued while it ran up to its count.
        let allowed = match engine.tick(ms) {
            Ok(now) => now <= tick && tick - now <= engine.borrow_ticks(),
            Err(_) => false,
        };
        if allowed && tick < self.fence.load(Ordering::Acquire) {
            return Ok(engine.id((tick << engine.seq_bits()) | count));
        }
        self.take_one_from(ms, blocking)
    }

    #[inline(never)]
    fn take_one_from(&self, ms: u64, blocking: bool) -> Result<u64, Error> {
        engine::run_from(&self.clock, ms, blocking, &mut &self.stats.0, |ms| {
            self.attempt(ms, 1, blocking)
        })
        .map(|(slot, _)| self.engine.id(slot))
    }

    /// A batch of up to `n` IDs, waiting or not (`blocking` a constant where inlined).
    #[inline(always)]
    fn take_batch(&self, n: u32, blocking: bool) -> Result<Batch, Error> {
        if n == 0 {
            return Ok(Batch::empty(&self.engine));
        }
        self.take(n, blocking)
            .map(|(slot, len)| Batch::new(&self.engine, slot, len))
    }

    #[inline(always)]
    fn take(&self, n: u32, blocking: bool) -> Result<(u64, u32), Error> {
        let n = u64::from(n.max(1));
        engine::run(&self.clock, blocking, &mut &self.stats.0, move |ms| {
            self.attempt(ms, n, blocking)
        })
    }

    /// One attempt at `n` slots with the clock reading `ms`.
    #[inline(always)]
    fn attempt(&self, mut ms: u64, n: u64, blocking: bool) -> Step<(u64, u32)> {
        let engine = &self.engine;
        // The clock was read before the state was loaded, so another caller may have
        // taken a later tick in between: a reading behind the state is confirmed with a
        // fresh reading, taken after the load, before it counts as a step back (and the
        // fresh reading is the one a wait starts from). The acquire/release pairs make
        // that fresh reading come after the other caller's. After a lost race, a blocking
        // call hands a wait to `engine::wait` as it is, which reads the clock again and
        // keeps the wait's bound: confirming it here could repeat for as long as other
        // callers win every race.
        let mut seen_word = self.next.0.load(Ordering::Acquire);
        let mut fresh = false;
        let mut raced = false;
        loop {
            let seen = self.packing.slot(seen_word);
            let now = match engine.tick(ms) {
                Ok(now) => now,
                Err(e) => return Step::Fail(e),
            };
            let fence = self.fence.load(Ordering::Acquire);
            let slot = match engine.decide(now, ms, seen, fence, || self.lead()) {
                Step::Done(slot) => slot,
                Step::Lead(slot) => {
                    self.lead_through
                        .fetch_max(slot >> engine.seq_bits(), Ordering::Relaxed);
                    slot
                }
                Step::NextTick { at_ms } => return Step::NextTick { at_ms },
                Step::Wait(behind) if raced && blocking => return Step::Wait(behind),
                Step::Wait(_) | Step::Fail(_) if !fresh => {
                    ms = self.clock.now_ms();
                    fresh = true;
                    continue;
                }
                Step::Wait(behind) => return Step::Wait(behind),
                Step::Fail(e) => return Step::Fail(e),
            };
            // `next()` asks for one, and one always fits: a free slot leaves at least itself.
            let len = if n == 1 {
                1
            } else {
                engine.left_in_tick(slot).min(n)
            };
            match self.next.0.compare_exchange_weak(
                seen_word,
                self.packing.word(slot + len),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.open_after(slot, slot + len);
                    return Step::Done((slot, len as u32));
                }
                Err(actual) => (seen_word, fresh, raced) = (actual, false, true),
            }
        }
    }
}

impl<C> AtomicGenerator<C> {
    /// After the compare-and-swap took the slots from `slot` up to `end`: their tick is
    /// open for counting while it has room left, closed once used up.
    fn open_after(&self, slot: u64, end: u64) {
        if !COUNTS || !self.packing.counts {
            return;
        }
        let seq_bits = self.engine.seq_bits();
        let tick = slot >> seq_bits;
        let used_up = end >> seq_bits != tick;
        // See `take_one`: the first ticks are never opened under `Borrow`.
        if !used_up && tick < self.engine.borrow_ticks() {
            return;
        }
        let open = self.open_id(tick, used_up);
        if self.open.load(Ordering::Relaxed) < open {
            // Release: a caller that reads the open tick counts after the slots taken.
            self.open.fetch_max(open, Ordering::AcqRel);
        }
    }
}

impl<C> AtomicGenerator<C> {
    /// The value of `open` for `tick`, open or closed.
    fn open_id(&self, tick: u64, closed: bool) -> u64 {
        self.engine
            .id((tick << self.engine.seq_bits()) | u64::from(closed))
    }
}

/// Whether the fast path counts on this target: where 64-bit atomics are native. Without
/// them (Cortex-M, RISC-V `imc`) portable-atomic makes every 64-bit operation a short
/// critical section on one core, where an add costs what a compare-and-swap does and no
/// other core contends: the compare-and-swap alone is smaller in flash.
const COUNTS: bool = cfg!(target_has_atomic = "64");

/// The slot counter as the shared generator keeps it: `tick << count_bits | count`, with
/// room above the sequence (`count_bits` beyond `seq_bits`) for counts past a tick's
/// last slot. A count at or above `seq_len` means the tick is used up: the next free slot
/// is the following tick's first. A slot that starts a tick is kept as the previous tick
/// used up, so that a count past the end never lands in a tick nobody took (where it
/// would look like a tick used ahead of the clock).
#[derive(Debug, Clone, Copy)]
struct Packing {
    count_bits: u32,
    count_mask: u64,
    seq_bits: u32,
    seq_len: u64,
    /// Whether the fast path counts: room for at least 2^16 counts past the sequence.
    counts: bool,
}

impl Packing {
    const fn new(layout: Layout) -> Packing {
        // A layout keeps time and sequence within 63 bits: room for one count at least.
        let count_bits = layout.max_tick().leading_zeros();
        let seq_bits = layout.sequence_bits();
        Packing {
            count_bits,
            count_mask: (1 << count_bits) - 1,
            seq_bits,
            seq_len: 1 << seq_bits,
            counts: count_bits >= 17 && COUNTS,
        }
    }

    /// The packed form of the next free slot `slot`.
    #[inline]
    fn word(&self, slot: u64) -> u64 {
        if !COUNTS {
            return slot; // never counted past a tick's end: the slot itself
        }
        let tick = slot >> self.seq_bits;
        let seq = slot & (self.seq_len - 1);
        if seq == 0 && tick > 0 {
            ((tick - 1) << self.count_bits) + self.seq_len
        } else {
            (tick << self.count_bits) | seq
        }
    }

    /// The next free slot of the packed `word`.
    #[inline]
    fn slot(&self, word: u64) -> u64 {
        if !COUNTS {
            return word;
        }
        let tick = word >> self.count_bits;
        let count = word & self.count_mask;
        if count >= self.seq_len {
            (tick + 1) << self.seq_bits
        } else {
            (tick << self.seq_bits) | count
        }
    }
}

/// A value on a cache line of its own where cores have caches (the sizes crossbeam-utils'
/// `CachePadded` uses): the counter, so that the other fields, read on every call and
/// written rarely, stay in every core's cache while the counter moves between them; and
/// the stats, written on slow paths that run often under load (a wait for the next
/// tick), so that those writes do not take the fields the fast path reads.
#[cfg_attr(
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "powerpc64"
    ),
    repr(align(128))
)]
#[cfg_attr(
    any(
        target_arch = "x86",
        target_arch = "riscv64",
        target_arch = "loongarch64",
        target_arch = "mips64",
        target_arch = "sparc64",
    ),
    repr(align(64))
)]
#[derive(Debug)]
struct Padded<T>(T);

/// Implements [`IdGenerator`] for a shared generator type (`$ty`)
/// by calling its methods on `&self`.
macro_rules! id_generator {
    ($ty:ty) => {
        impl<C: Clock> IdGenerator for $ty {
            type Clock = C;

            #[inline(always)]
            fn next(&mut self) -> Result<u64, Error> {
                AtomicGenerator::next(self)
            }
            #[inline(always)]
            fn try_next(&mut self) -> Result<u64, Error> {
                AtomicGenerator::try_next(self)
            }
            fn next_batch(&mut self, n: u32) -> Result<Batch, Error> {
                AtomicGenerator::next_batch(self, n)
            }
            fn try_next_batch(&mut self, n: u32) -> Result<Batch, Error> {
                AtomicGenerator::try_next_batch(self, n)
            }
            fn fill(&mut self, out: &mut [u64]) -> Result<usize, Error> {
                AtomicGenerator::fill(self, out)
            }
            fn resume_after(&mut self, id: u64) -> Result<(), Error> {
                AtomicGenerator::resume_after(self, id)
            }
            fn resume_after_ms(&mut self, ms: u64) -> Result<(), Error> {
                AtomicGenerator::resume_after_ms(self, ms)
            }
            fn set_fence_ms(&mut self, ms: u64) {
                AtomicGenerator::set_fence_ms(self, ms)
            }
            fn issued_through_ms(&self) -> u64 {
                let next = self.packing.slot(self.next.0.load(Ordering::Acquire));
                self.engine.slot_start_ms(next)
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
    };
}

id_generator!(AtomicGenerator<C>);
id_generator!(&AtomicGenerator<C>);
