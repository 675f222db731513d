//! What a generator does when time misbehaves, and the slot arithmetic both generators
//! share.
//!
//! A generator's whole state is one 64-bit *slot counter*: `tick << sequence_bits | seq`,
//! the next (tick, sequence) pair it may hand out. Using up a tick's last sequence number
//! carries into the next tick by plain addition, so "the next free slot" is always one
//! number, which is what lets the atomic generator work with a single compare-and-swap.

use core::num::NonZeroU64;

use crate::clock::Clock;
use crate::error::Error;
use crate::layout::{mask, Layout, Order};

/// What a generator does when the clock reads earlier than the newest tick it has used,
/// and when a tick's sequence numbers run out.
///
/// | policy | clock went back | sequence used up | IDs strictly increase |
/// |---|---|---|---|
/// | `Fail` | `Err(ClockBackwards)` with the step size | wait for the next tick | yes |
/// | `Wait` | wait up to `max_wait_ms` for the clock to catch up, else `Err(ClockBackwards)` | wait for the next tick | yes |
/// | `Borrow` | go on from the newest tick used (a logical clock that never goes back), up to `max_ahead_ms` ahead of the clock, else `Err(TooFarAhead)` | take the next tick early | yes |
/// | `History` | reuse unspent sequence numbers of the ticks in the generator's ring; older ticks: `Err(ClockBackwards)` | wait for the next tick | **no**: unique, but an ID may be below an earlier one |
/// | `SwitchNode` | `Err(SwitchNode)`: move to an unused node id ([`Generator::switch_node`](crate::Generator::switch_node)) and go on | wait for the next tick | per node |
///
/// Every wait is bounded: a clock that is behind is waited for at most the policy's limit
/// (measured on the clock from the call's first reading); a used-up tick is waited out
/// while the clock moves forward (one tick for a single owner); and a clock that stops
/// moving forward ends any wait with [`Error::ClockStalled`]. The `try_*` calls never
/// wait: they return [`Error::WouldBlock`] instead.
///
/// ```
/// use snowdrift::{Generator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut gen = Generator::new(&clock, Layout::DEFAULT, 7, Policy::Borrow { max_ahead_ms: 1000 })?;
/// let a = gen.next()?;
/// clock.rewind(500); // NTP stepped the clock back
/// let b = gen.next()?; // still increasing: borrowed from the logical clock
/// assert!(b > a);
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Policy {
    /// Report the backwards step as an error, with its size.
    Fail,
    /// Wait for the clock to catch up, at most `max_wait_ms` (measured on the clock).
    Wait {
        /// The longest wait, in milliseconds; larger steps fail at once.
        max_wait_ms: u32,
    },
    /// Keep going on a logical clock, never more than `max_ahead_ms` ahead of the real one.
    /// A limit below one time unit means a used-up sequence cannot borrow either.
    Borrow {
        /// How far ahead of the clock IDs may go, in milliseconds.
        max_ahead_ms: u32,
    },
    /// Reuse unspent sequence numbers of recent ticks (needs `Generator<C, N>` with a ring
    /// of `N > 0` ticks; not available on the atomic generator).
    History,
    /// Surface the step as [`Error::SwitchNode`] so the caller moves to a fresh node id.
    SwitchNode,
}

impl Policy {
    /// The default: [`Policy::Wait`] up to 100 ms. Small steps (NTP corrections, a VM
    /// resumed) cost a short wait and nothing else; large ones are reported instead of
    /// stalling a caller for long.
    pub const DEFAULT: Policy = Policy::Wait { max_wait_ms: 100 };
}

impl Default for Policy {
    fn default() -> Self {
        Policy::DEFAULT
    }
}

/// How many clock readings in a row without a new newest reading a waiting call accepts
/// before it reports [`Error::ClockStalled`].
pub(crate) const STALL_READS: u32 = 1 << 22;

/// The outcome of one attempt to take a slot.
pub(crate) enum Step<T> {
    Done(T),
    /// The clock is behind: try again as it moves, giving up with `timeout` once it reads
    /// more than `limit_ms` past the call's first reading.
    Wait {
        limit_ms: u64,
        timeout: Error,
    },
    /// The tick is used up: try again as the clock moves on. No clock-time limit, since
    /// the next tick always frees slots for a single owner, and other callers of a shared
    /// generator only take them while the clock moves forward; a clock that stops moving
    /// forward ends the wait with [`Error::ClockStalled`].
    NextTick,
    Fail(Error),
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
}

impl Engine {
    pub const fn new(layout: Layout, node: u64, policy: Policy) -> Result<Engine, Error> {
        if let Err(e) = layout.check_node(node) {
            return Err(Error::Range(e));
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
        })
    }

    pub const fn with_node(self, node: u64) -> Result<Engine, Error> {
        Engine::new(self.layout, node, self.policy)
    }

    #[inline(always)]
    pub fn seq_bits(&self) -> u32 {
        self.seq_bits
    }

    /// The tick holding Unix millisecond `ms`, or why there is none.
    #[inline(always)]
    pub fn tick(&self, ms: u64) -> Result<u64, Error> {
        let since = ms.wrapping_sub(self.epoch_ms);
        // One predictable branch keeps the division off the path of 1 ms layouts.
        let tick = if self.unit_ms == 1 {
            since
        } else {
            since / self.unit
        };
        // One comparison covers a time before the epoch too: the difference then wraps
        // to at least 2^64 - epoch, and a valid layout has epoch + max_tick * unit below
        // 2^63, so even divided by the unit it lands above `max_tick`.
        if tick > self.max_tick {
            return Err(self.time_error(ms));
        }
        Ok(tick)
    }

    #[cold]
    fn time_error(&self, ms: u64) -> Error {
        Error::Time(self.layout.time_error(ms))
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

    /// The slot to hand out when the clock reads tick `now` and `next` is the first free
    /// slot; anything but the common case goes to the policy.
    #[inline(always)]
    pub fn decide(&self, now: u64, next: u64) -> Step<u64> {
        // The common case first: the next free slot lies in the current tick.
        if next >> self.seq_bits == now {
            return Step::Done(next);
        }
        // The clock moved on to a tick not used yet: its first slot.
        let fresh = now << self.seq_bits;
        if fresh > next {
            return Step::Done(fresh);
        }
        self.behind(now, next)
    }

    /// `next` lies past the current tick: either this tick is used up or the clock is
    /// behind the newest tick used.
    #[cold]
    #[inline(never)]
    fn behind(&self, now: u64, next: u64) -> Step<u64> {
        let next_tick = next >> self.seq_bits;
        let last_tick = (next - 1) >> self.seq_bits; // next > now << seq_bits >= 0
        let by_ms = (last_tick - now) * self.unit_ms;
        match self.policy {
            Policy::Borrow { max_ahead_ms } => {
                let ahead_ms = (next_tick - now) * self.unit_ms;
                if ahead_ms > u64::from(max_ahead_ms) {
                    Step::Fail(Error::TooFarAhead {
                        ahead_ms,
                        limit_ms: u64::from(max_ahead_ms),
                    })
                } else if next_tick > self.max_tick {
                    Step::Fail(self.exhausted())
                } else {
                    Step::Done(next)
                }
            }
            _ if last_tick == now => Step::NextTick,
            Policy::Wait { max_wait_ms } => {
                let timeout = Error::ClockBackwards {
                    by_ms,
                    limit_ms: u64::from(max_wait_ms),
                };
                if by_ms > u64::from(max_wait_ms) {
                    Step::Fail(timeout)
                } else {
                    Step::Wait {
                        limit_ms: u64::from(max_wait_ms),
                        timeout,
                    }
                }
            }
            Policy::SwitchNode => Step::Fail(Error::SwitchNode { by_ms }),
            Policy::Fail | Policy::History => {
                Step::Fail(Error::ClockBackwards { by_ms, limit_ms: 0 })
            }
        }
    }

    /// The error for a slot past the time field's last tick.
    pub fn exhausted(&self) -> Error {
        Error::Time(self.layout.time_error(self.layout.exhausts_at()))
    }

    /// Runs `attempt` with the clock's tick until it is done or fails, waiting (bounded)
    /// while it asks to. With `blocking == false`, a wait is [`Error::WouldBlock`].
    #[inline(always)]
    pub fn run<C: Clock, T>(
        &self,
        clock: &C,
        blocking: bool,
        mut attempt: impl FnMut(u64) -> Step<T>,
    ) -> Result<T, Error> {
        let first_ms = clock.now_ms();
        match attempt(self.tick(first_ms)?) {
            Step::Done(v) => Ok(v),
            Step::Fail(e) => Err(e),
            Step::Wait { .. } | Step::NextTick if !blocking => Err(Error::WouldBlock),
            step => self.run_on(clock, first_ms, step, attempt),
        }
    }

    /// The wait of a blocking [`run`](Self::run) whose first attempt (at `first_ms`) asked
    /// to wait: kept out of line, so that the common case is small enough to inline into
    /// the caller, and so that a caller that never waits (`try_next`) has no copy of it.
    #[cold]
    #[inline(never)]
    pub fn run_on<C: Clock, T>(
        &self,
        clock: &C,
        first_ms: u64,
        first: Step<T>,
        mut attempt: impl FnMut(u64) -> Step<T>,
    ) -> Result<T, Error> {
        let mut deadline = match first {
            Step::Done(v) => return Ok(v),
            Step::Fail(e) => return Err(e),
            Step::Wait { limit_ms, .. } => first_ms.saturating_add(limit_ms),
            Step::NextTick => first_ms,
        };
        let (mut ms, mut newest, mut idle) = (first_ms, first_ms, 0u32);
        loop {
            clock.relax();
            let read = clock.now_ms();
            if read > newest {
                (newest, idle) = (read, 0);
            } else {
                idle += 1;
                if idle >= STALL_READS {
                    return Err(Error::ClockStalled { at_ms: newest });
                }
            }
            if read == ms {
                continue;
            }
            ms = read;
            match attempt(self.tick(ms)?) {
                Step::Done(v) => return Ok(v),
                Step::Fail(e) => return Err(e),
                Step::NextTick => {}
                Step::Wait { limit_ms, timeout } => {
                    // The longest limit met so far, counted from the call's first reading.
                    deadline = deadline.max(first_ms.saturating_add(limit_ms));
                    if ms > deadline {
                        return Err(timeout);
                    }
                }
            }
        }
    }

    /// The first slot whose ID (from this node) is above `id`.
    pub fn slot_above_id(&self, id: u64) -> Result<u64, Error> {
        let parts_ok = self.layout.decode(id);
        if let Err(e) = parts_ok {
            return Err(Error::Range(e));
        }
        let l = &self.layout;
        let tick = id >> self.time_shift;
        let node = (id >> l.node_shift()) & l.max_node();
        let seq = (id >> self.seq_shift) & l.max_sequence();
        let slot = ((tick as u128) << self.seq_bits) | seq as u128;
        let above = match l.order() {
            Order::NodeThenSequence if self.node > node => slot & !(mask(self.seq_bits) as u128),
            Order::NodeThenSequence if self.node < node => (u128::from(tick) + 1) << self.seq_bits,
            Order::SequenceThenNode if self.node > node => slot,
            _ => slot + 1,
        };
        self.checked_slot(above)
    }

    /// The first slot of the tick after the one holding Unix millisecond `ms` (0 for a time
    /// before the epoch).
    pub fn slot_after_ms(&self, ms: u64) -> Result<u64, Error> {
        if ms < self.epoch_ms {
            return Ok(0);
        }
        let tick = (ms - self.epoch_ms) / self.unit_ms;
        self.checked_slot((u128::from(tick) + 1) << self.seq_bits)
    }

    fn checked_slot(&self, slot: u128) -> Result<u64, Error> {
        if slot >> self.seq_bits > u128::from(self.max_tick) {
            return Err(self.exhausted());
        }
        Ok(slot as u64)
    }
}
