//! The slot arithmetic and the bounded wait both generators share.
//!
//! A *slot* is one (tick, sequence) pair, `tick << sequence_bits | seq`: the place of one
//! ID among a node's IDs. (In snowdrift the word means only this.) A generator's whole
//! state is one 64-bit *slot counter*, the next slot it may hand out. Using up a tick's last sequence number
//! carries into the next tick by plain addition, so "the next free slot" is always one
//! number, which is what lets the atomic generator keep its state in one atomic word.

use core::num::NonZeroU64;

use crate::clock::Clock;
use crate::error::{Error, Field, Repr};
#[cfg(target_arch = "wasm32")]
use crate::layout::checked_mul_u32;
use crate::layout::{Layout, Order, mask};
use crate::policy::Policy;
use crate::stats::{self, Tally};

/// How many clock readings in a row that do not move forward a waiting call accepts
/// before it reports [`ErrorKind::ClockStalled`](crate::ErrorKind::ClockStalled).
pub(crate) const STALL_READS: u32 = 1 << 22;

/// How far a resume mark set the generator ahead of the clock.
///
/// A mark above the clock is the caller's promise, not a clock step: the generator goes on
/// from it, up to `ticks` ahead of the clock, for as long as every tick it has used since
/// was taken that way (`through`). Once the clock catches up and the generator takes a
/// tick of its own above `through`, the lead is spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lead {
    /// Ticks between the clock and the first slot above the mark, when it was set.
    pub ticks: u64,
    /// The newest tick the lead covers: the mark's tick, then each tick taken under it.
    pub through: u64,
}

impl Lead {
    pub fn merge(self, other: Lead) -> Lead {
        Lead {
            ticks: self.ticks.max(other.ticks),
            through: self.through.max(other.through),
        }
    }
}

/// The outcome of one attempt to take a slot.
pub(crate) enum Step<T> {
    Done(T),
    /// Done, with a new tick taken ahead of the clock under a [`Lead`]: the caller records
    /// it in `Lead::through`.
    Lead(T),
    /// The clock, read at `at_ms`, is behind: try again as it moves. The wait starts at
    /// the first such reading; once the clock has moved more than `limit_ms` past it and
    /// is still short of `target_ms`, the call fails with the error
    /// [`Overdue`] describes.
    Wait(Behind),
    /// The tick is used up (the clock read `at_ms`): try again as the clock moves on. No
    /// clock-time limit, since the next tick always frees slots for a single owner, and
    /// other callers of a shared generator only take them while the clock moves forward;
    /// a clock that stops moving forward ends the wait with [`ErrorKind::ClockStalled`](crate::ErrorKind::ClockStalled).
    NextTick {
        at_ms: u64,
    },
    Fail(Error),
}

/// See [`Step::Wait`].
#[derive(Clone, Copy)]
pub(crate) struct Behind {
    pub at_ms: u64,
    pub target_ms: u64,
    pub limit_ms: u64,
    pub overdue: Overdue,
}

/// The error of a wait that ran out: see [`Step::Wait`].
#[derive(Clone, Copy)]
pub(crate) enum Overdue {
    /// [`ErrorKind::ClockBackwards`](crate::ErrorKind::ClockBackwards), by `target_ms`
    /// less `tick_ms` of the wait's first reading: the start of its tick, so that a
    /// generator's step is whole ticks (a wait is started only within its limit, so the
    /// step is then above it).
    Backwards { tick_ms: u64 },
    /// [`ErrorKind::TooFarAhead`](crate::ErrorKind::TooFarAhead) at this reading, the
    /// next ID `ahead_ms` ahead of it (a wait under `Borrow` that ran out, other callers
    /// of a shared generator having taken the ticks the clock reached meanwhile).
    Ahead { ahead_ms: u64 },
}

/// Runs `attempt` with the clock's reading until it is done or fails, waiting (bounded)
/// while it asks to. With `blocking == false`, a wait is [`ErrorKind::WouldBlock`](crate::ErrorKind::WouldBlock).
/// Clock trouble is counted in `tally`, off the path of a call that is done at once.
#[cfg(any(feature = "atomic", feature = "objectid"))]
#[inline(always)]
pub(crate) fn run<C: Clock, T>(
    clock: &C,
    blocking: bool,
    tally: &mut impl Tally,
    attempt: impl FnMut(u64) -> Step<T>,
) -> Result<T, Error> {
    run_from(clock, clock.now_ms(), blocking, tally, attempt)
}

/// [`run`], with the clock's first reading already taken (`first_ms`).
#[inline(always)]
pub(crate) fn run_from<C: Clock, T>(
    clock: &C,
    first_ms: u64,
    blocking: bool,
    tally: &mut impl Tally,
    mut attempt: impl FnMut(u64) -> Step<T>,
) -> Result<T, Error> {
    match attempt(first_ms) {
        Step::Done(v) | Step::Lead(v) => Ok(v),
        Step::Fail(e) => {
            stats::failed(tally, &e);
            Err(e)
        }
        Step::Wait(behind) if !blocking => refused(tally, behind),
        Step::NextTick { .. } if !blocking => Err(Error::WOULD_BLOCK),
        step => wait(clock, step, tally, attempt),
    }
}

/// A call that may not wait found the clock `behind`.
#[cold]
fn refused<T>(tally: &mut impl Tally, behind: Behind) -> Result<T, Error> {
    tally.behind(behind.target_ms.saturating_sub(behind.at_ms), false);
    Err(Error::WOULD_BLOCK)
}

/// The wait of a blocking [`run`] whose first attempt asked to wait: kept out of line, so
/// that the common case is small enough to inline into the caller, and so that a caller
/// that never waits (`try_next`) has no copy of it.
#[cold]
#[inline(never)]
pub(crate) fn wait<C: Clock, T>(
    clock: &C,
    mut step: Step<T>,
    tally: &mut impl Tally,
    mut attempt: impl FnMut(u64) -> Step<T>,
) -> Result<T, Error> {
    // What the call counted: a wait for the next tick, the clock behind (once each).
    let (mut counted_tick, mut counted_behind) = (false, false);
    // The reading at which the clock was first found behind, once it was, and the start
    // of its tick (see `Overdue::Backwards`).
    let mut behind_since: Option<(u64, u64)> = None;
    // Readings in a row that did not move forward: a clock that moves (even after a step
    // back) is not stalled; one that repeats or only goes back for STALL_READS reads is.
    let mut idle = 0u32;
    // The newest reading of the call, the attempts' own included: what a stall names.
    let mut newest = 0u64;
    loop {
        let last = match step {
            Step::Done(v) | Step::Lead(v) => return Ok(v),
            Step::Fail(e) => {
                if !counted_behind {
                    stats::failed(tally, &e);
                }
                return Err(e);
            }
            Step::NextTick { at_ms } => {
                if !counted_tick {
                    counted_tick = true;
                    tally.tick_wait();
                }
                at_ms
            }
            Step::Wait(Behind {
                at_ms,
                target_ms,
                limit_ms,
                overdue,
            }) => {
                let tick_ms = match overdue {
                    Overdue::Backwards { tick_ms } => tick_ms,
                    Overdue::Ahead { .. } => at_ms,
                };
                if !counted_behind {
                    counted_behind = true;
                    tally.behind(target_ms.saturating_sub(at_ms), true);
                }
                let (since, since_tick_ms) = *behind_since.get_or_insert((at_ms, tick_ms));
                if at_ms.saturating_sub(since) > limit_ms {
                    return Err(Error(match overdue {
                        Overdue::Backwards { .. } => Repr::ClockBackwards {
                            by_ms: target_ms.saturating_sub(since_tick_ms),
                            limit_ms,
                        },
                        Overdue::Ahead { ahead_ms } => Repr::TooFarAhead { ahead_ms, limit_ms },
                    }));
                }
                at_ms
            }
        };
        newest = newest.max(last);
        let ms = loop {
            clock.relax();
            let read = clock.now_ms();
            if read > last {
                idle = 0;
                break read;
            }
            idle += 1;
            if idle >= STALL_READS {
                return Err(Error(Repr::ClockStalled {
                    at_ms: newest.max(read),
                }));
            }
            if read < last {
                break read;
            }
        };
        step = attempt(ms);
    }
}

/// Layout and node resolved into the shifts and masks the hot path needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Engine {
    pub layout: Layout,
    pub policy: Policy,
    pub node: u64,
    epoch_ms: u64,
    unit_ms: u64,
    /// `unit_ms` for dividing, without a check for zero (a layout's unit is never zero).
    unit: NonZeroU64,
    max_tick: u64,
    seq_bits: u32,
    time_shift: u32,
    seq_shift: u32,
    seq_mask: u64,
    /// The tick bits of a slot (`!seq_mask`).
    tick_mask: u64,
    /// What turns `slot << seq_shift` into the ID: see [`Engine::id`].
    tick_lift: u64,
    node_part: u64,
    /// Under [`Policy::Borrow`], how many ticks a tick already taken may lie ahead of the
    /// clock's tick and still be within the bound from any reading in it (the bound in
    /// whole ticks, rounded down); 0 under every other policy. See [`Engine::decide`].
    borrow_ticks: u64,
}

impl Engine {
    pub const fn new(layout: Layout, node: u64, policy: Policy) -> Result<Engine, Error> {
        if let Err(e) = layout.check_node(node) {
            return Err(e);
        }
        Ok(Engine {
            layout,
            policy,
            node,
            epoch_ms: layout.epoch_ms(),
            unit_ms: layout.unit_ms() as u64,
            unit: match NonZeroU64::new(layout.unit_ms() as u64) {
                Some(unit) => unit,
                None => NonZeroU64::MIN,
            },
            max_tick: layout.max_tick(),
            seq_bits: layout.sequence_bits(),
            time_shift: layout.time_shift(),
            seq_shift: layout.sequence_shift(),
            seq_mask: mask(layout.sequence_bits()),
            tick_mask: !mask(layout.sequence_bits()),
            tick_lift: (1u64 << (layout.time_shift() - layout.sequence_bits()))
                - (1u64 << layout.sequence_shift()),
            node_part: layout.pack(0, node, 0),
            borrow_ticks: match policy {
                Policy::Borrow { max_ahead_ms } => max_ahead_ms as u64 / layout.unit_ms() as u64,
                _ => 0,
            },
        })
    }

    pub const fn with_node(self, node: u64) -> Result<Engine, Error> {
        Engine::new(self.layout, node, self.policy)
    }

    #[inline(always)]
    pub fn seq_bits(&self) -> u32 {
        self.seq_bits
    }

    /// See the field: how many ticks ahead of the clock's a taken tick may be and its
    /// next slots still go out without the policy.
    #[cfg(feature = "atomic")]
    #[inline(always)]
    pub fn borrow_ticks(&self) -> u64 {
        self.borrow_ticks
    }

    /// Where the time field starts in the ID.
    #[cfg(feature = "atomic")]
    #[inline(always)]
    pub fn time_shift(&self) -> u32 {
        self.time_shift
    }

    /// The sequence field's bits in the ID.
    #[cfg(feature = "atomic")]
    #[inline(always)]
    pub fn seq_field(&self) -> u64 {
        self.seq_mask << self.seq_shift
    }

    /// Where the sequence sits in the ID.
    #[inline(always)]
    pub fn seq_shift(&self) -> u32 {
        self.seq_shift
    }

    /// The tick holding Unix millisecond `ms`, or why there is none.
    #[inline(always)]
    pub fn tick(&self, ms: u64) -> Result<u64, Error> {
        match self.tick_of(ms) {
            Some(tick) => Ok(tick),
            None => Err(self.time_error(ms)),
        }
    }

    /// The tick holding Unix millisecond `ms`, or for a time outside the layout a number
    /// above the last tick (see [`tick_of`](Self::tick_of)).
    #[inline(always)]
    pub fn tick_or_above(&self, ms: u64) -> u64 {
        let since = ms.wrapping_sub(self.epoch_ms);
        if self.unit_ms == 1 {
            since
        } else {
            since / self.unit
        }
    }

    /// How many ticks `tick` lies ahead of the tick of Unix millisecond `ms`, in wrapping
    /// arithmetic (`tick` minus [`tick_or_above`](Self::tick_or_above)). With 1 ms ticks
    /// `tick + epoch` is ready before the clock's reading is: one subtraction after it.
    #[cfg(feature = "atomic")]
    #[inline(always)]
    pub fn ticks_ahead(&self, tick: u64, ms: u64) -> u64 {
        if self.unit_ms == 1 {
            tick.wrapping_add(self.epoch_ms).wrapping_sub(ms)
        } else {
            tick.wrapping_sub(self.tick_or_above(ms))
        }
    }

    /// [`tick`](Self::tick) without the error: `None` for a time outside the layout.
    #[inline(always)]
    fn tick_of(&self, ms: u64) -> Option<u64> {
        // One predictable branch keeps the division off the path of 1 ms layouts.
        let tick = self.tick_or_above(ms);
        // One comparison covers a time before the epoch too: the difference then wraps
        // to at least 2^64 - epoch, and a valid layout has epoch + max_tick * unit below
        // 2^63, so even divided by the unit it lands above `max_tick`.
        if tick > self.max_tick {
            return None;
        }
        Some(tick)
    }

    #[cold]
    fn time_error(&self, ms: u64) -> Error {
        self.layout.time_error(ms)
    }

    /// The ID of a slot.
    ///
    /// A slot is `tick << seq_bits | seq`; the ID wants `tick << time_shift | seq <<
    /// seq_shift | node`. Shifting the slot left by `seq_shift` puts the sequence in place
    /// and the tick at `seq_bits + seq_shift`, which is `time_shift` already when the
    /// sequence sits above the node; otherwise adding `(tick << seq_bits) * tick_lift`
    /// (`tick_lift = 2^node_bits - 1`) lifts it the rest of the way. The exact result fits
    /// in 64 bits, so the wrapping arithmetic gives it, and leaves the node bits zero.
    #[inline(always)]
    pub fn id(&self, slot: u64) -> u64 {
        (slot << self.seq_shift).wrapping_add((slot & self.tick_mask).wrapping_mul(self.tick_lift))
            | self.node_part
    }

    /// Distance between IDs of consecutive slots within a tick.
    #[inline(always)]
    pub fn id_step(&self) -> u64 {
        1 << self.seq_shift
    }

    /// Slots left in the tick of `slot`, counting `slot` itself.
    #[inline(always)]
    pub fn left_in_tick(&self, slot: u64) -> u64 {
        self.seq_mask + 1 - (slot & self.seq_mask)
    }

    /// The start of `tick`, in Unix milliseconds (saturating; exact for every tick up to
    /// one past the last, which a valid layout keeps below 2^63).
    #[inline]
    pub fn start_ms(&self, tick: u64) -> u64 {
        self.epoch_ms.saturating_add(self.ticks_ms(tick))
    }

    /// `ticks` ticks in ms, saturating.
    fn ticks_ms(&self, ticks: u64) -> u64 {
        // On wasm a 64-bit multiply with an overflow check is a call into a 128-bit
        // multiply; by 32-bit halves it is not (the unit came from a u32). On Arm the
        // plain form is smaller (`cargo xtask firmware --size`).
        #[cfg(target_arch = "wasm32")]
        return checked_mul_u32(ticks, self.unit_ms as u32).unwrap_or(u64::MAX);
        #[cfg(not(target_arch = "wasm32"))]
        ticks.saturating_mul(self.unit_ms)
    }

    /// The start of the tick of `slot`, in Unix ms: at or after the time of every slot
    /// below it.
    pub fn slot_start_ms(&self, slot: u64) -> u64 {
        self.start_ms(slot >> self.seq_bits)
    }

    /// The number of ticks that start before Unix millisecond `ms`: a fence at `ms` lets
    /// a generator use exactly the ticks below it.
    pub fn ticks_before(&self, ms: u64) -> u64 {
        if ms <= self.epoch_ms {
            return 0;
        }
        (ms - self.epoch_ms).div_ceil(self.unit_ms)
    }

    /// The slot to hand out when the clock reads `now_ms` (tick `now`) and `next` is the
    /// first free slot; anything but the common case goes to the policy. `lead` is read
    /// only off the common path; no slot of a tick at or past `fence` (a tick count) is
    /// handed out.
    #[inline(always)]
    pub fn decide(
        &self,
        now: u64,
        now_ms: u64,
        next: u64,
        fence: u64,
        lead: impl FnOnce() -> Lead,
    ) -> Step<u64> {
        if now >= fence {
            return Step::Fail(self.past_fence(now, fence));
        }
        // The common case first: the next free slot lies in the current tick.
        if next >> self.seq_bits == now {
            return Step::Done(next);
        }
        // The clock moved on to a tick not used yet: its first slot.
        let fresh = now << self.seq_bits;
        if fresh > next {
            return Step::Done(fresh);
        }
        // A generator running ahead under `Borrow` (load past the layout's rate, or a
        // clock step back): the rest of a tick it already took, when that tick is before
        // the fence and within the bound whatever the reading in tick `now`. This is what
        // `behind` decides then (the tick was taken, so no lead starts and the time field
        // holds it), without its work on every ID of a saturated generator.
        if next & self.seq_mask != 0 {
            let next_tick = next >> self.seq_bits;
            if next_tick - now <= self.borrow_ticks && next_tick < fence {
                return Step::Done(next);
            }
        }
        self.behind(now, now_ms, next, fence, lead())
    }

    /// `next` lies past the current tick `now` (read at `now_ms`): either this tick is
    /// used up, or the generator is ahead of the clock (a resume mark above it, borrowed
    /// ticks, or a clock step back).
    #[cold]
    #[inline(never)]
    fn behind(&self, now: u64, now_ms: u64, next: u64, fence: u64, lead: Lead) -> Step<u64> {
        let next_tick = next >> self.seq_bits;
        // next > the current tick's first slot >= 0
        let last_tick = (next - 1) >> self.seq_bits;
        // Every tick used since the resume mark was taken under its lead: the lag it
        // explains is not a clock step.
        let lead_ticks = if lead.ticks > 0 && last_tick <= lead.through {
            lead.ticks
        } else {
            0
        };
        let lead_ms = self.ticks_ms(lead_ticks);
        // How far ahead of the clock the next ID would be (the start of its tick), and how
        // far the policy lets it be: the mark's lead, or the bound of `Borrow` if larger.
        let ahead_ms = self.start_ms(next_tick).saturating_sub(now_ms);
        let allowed_ms = match self.policy {
            Policy::Borrow { max_ahead_ms } => lead_ms.max(u64::from(max_ahead_ms)),
            _ => lead_ms,
        };
        if ahead_ms <= allowed_ms {
            if next_tick > self.max_tick {
                return Step::Fail(self.exhausted());
            }
            if next_tick >= fence {
                return Step::Fail(self.past_fence(next_tick, fence));
            }
            return if lead_ticks > 0 && next_tick > last_tick {
                Step::Lead(next)
            } else {
                Step::Done(next)
            };
        }
        // How far the clock must still move to reach the newest tick used (beyond the
        // lead). None: that tick is used up; wait for the next one, whatever the policy.
        let catch_up_ms = self
            .start_ms(last_tick)
            .saturating_sub(lead_ms)
            .saturating_sub(now_ms);
        if catch_up_ms == 0 {
            return Step::NextTick { at_ms: now_ms };
        }
        // The step back, in whole ticks: from the clock's tick up to the newest tick used,
        // less the lead (at least one tick, since that tick is still ahead).
        let step_ms = self.ticks_ms(last_tick.saturating_sub(lead_ticks).saturating_sub(now));
        match self.policy {
            // Past the allowance by at most the bound: the lead grew by taking ticks (a
            // tick's worth past it under load) or by a step back no larger than the bound.
            // Wait for the clock, at most the bound; further ahead is an error at once.
            Policy::Borrow { max_ahead_ms } => {
                let limit_ms = u64::from(max_ahead_ms);
                if ahead_ms - allowed_ms <= limit_ms {
                    Step::Wait(Behind {
                        at_ms: now_ms,
                        target_ms: now_ms + (ahead_ms - allowed_ms),
                        limit_ms,
                        overdue: Overdue::Ahead { ahead_ms },
                    })
                } else {
                    Step::Fail(Error(Repr::TooFarAhead { ahead_ms, limit_ms }))
                }
            }
            // The clock can reach the newest tick used within the limit: wait for it (and
            // then for the next tick, if that one is used up).
            Policy::Wait { max_wait_ms } if catch_up_ms <= u64::from(max_wait_ms) => {
                Step::Wait(Behind {
                    at_ms: now_ms,
                    target_ms: now_ms + catch_up_ms,
                    limit_ms: u64::from(max_wait_ms),
                    overdue: Overdue::Backwards {
                        tick_ms: self.start_ms(now),
                    },
                })
            }
            Policy::Wait { max_wait_ms } => Step::Fail(Error(Repr::ClockBackwards {
                by_ms: step_ms,
                limit_ms: u64::from(max_wait_ms),
            })),
            Policy::SwitchNode => Step::Fail(Error(Repr::SwitchNode { by_ms: step_ms })),
            Policy::Fail => Step::Fail(Error(Repr::ClockBackwards {
                by_ms: step_ms,
                limit_ms: 0,
            })),
        }
    }

    /// The error for a slot past the time field's last tick.
    pub fn exhausted(&self) -> Error {
        self.layout.time_error(self.layout.exhausts_at())
    }

    #[cold]
    fn past_fence(&self, tick: u64, fence: u64) -> Error {
        Error(Repr::PastFence {
            time_ms: self.start_ms(tick),
            fence_ms: self.start_ms(fence),
        })
    }

    /// The lead a resume to slot `floor` gives when the clock reads `now_ms`: none for a
    /// mark whose next slot lies in the clock's tick or before it. The clock has reached
    /// such a mark, so a later reading behind it is a step, and it covers no tick of
    /// another mark's lead.
    pub fn lead_for(&self, floor: u64, now_ms: u64) -> Lead {
        match self.tick(now_ms) {
            Ok(now) if floor >> self.seq_bits > now => Lead {
                ticks: (floor >> self.seq_bits) - now,
                through: (floor - 1) >> self.seq_bits,
            },
            _ => Lead::default(),
        }
    }

    /// How far the newest slot below `next` (the first free one) is timed ahead of the
    /// clock's reading `now_ms`: 0 when it is not ahead, or when no slot was used.
    pub fn ahead_ms(&self, next: u64, now_ms: u64) -> u64 {
        match next.checked_sub(1) {
            Some(newest) => self.slot_start_ms(newest).saturating_sub(now_ms),
            None => 0,
        }
    }

    /// The first slot whose ID (from this node) is above `id`.
    pub fn slot_above_id(&self, id: u64) -> Result<u64, Error> {
        self.layout.decode(id)?;
        let l = &self.layout;
        let tick = id >> self.time_shift;
        let node = (id >> l.node_shift()) & l.max_node();
        let seq = (id >> self.seq_shift) & l.max_sequence();
        // As (tick, sequence): the tick may be one past the last (no slot above `id`),
        // whose first slot would not fit in 64 bits. tick <= max_tick < 2^63: no overflow.
        let above = match l.order() {
            Order::NodeThenSequence if self.node > node => (tick, 0),
            Order::NodeThenSequence if self.node < node => (tick + 1, 0),
            Order::SequenceThenNode if self.node > node => (tick, seq),
            _ if seq == self.seq_mask => (tick + 1, 0),
            _ => (tick, seq + 1),
        };
        // Some slot is above `id` exactly when the last one is.
        let last = (self.max_tick << self.seq_bits) | self.seq_mask;
        self.checked_slot(above, Field::Id, id, self.id(last) - 1)
    }

    /// The first slot of the tick after the one holding Unix millisecond `ms` (0 for a time
    /// before the epoch).
    pub fn slot_after_ms(&self, ms: u64) -> Result<u64, Error> {
        if ms < self.epoch_ms {
            return Ok(0);
        }
        let tick = (ms - self.epoch_ms) / self.unit_ms;
        self.checked_slot(
            (tick.saturating_add(1), 0),
            Field::Time,
            ms,
            self.start_ms(self.max_tick) - 1,
        )
    }

    /// The slot of `(tick, seq)` if the tick is within the time field, else the error
    /// for the resume mark `value` of `field`, whose largest usable mark is `max`.
    fn checked_slot(
        &self,
        (tick, seq): (u64, u64),
        field: Field,
        value: u64,
        max: u64,
    ) -> Result<u64, Error> {
        if tick > self.max_tick {
            return Err(Error(Repr::ResumeOutOfRange { field, value, max }));
        }
        Ok((tick << self.seq_bits) | seq)
    }
}
