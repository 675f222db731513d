//! A reference model of a generator and its policy, written from the docs (`Policy`,
//! `Error::behind_ms`, `Error::ahead_ms`, `IdGenerator::resume_after`) in ticks and
//! milliseconds: given the clock readings a call took, in order, it predicts the call's
//! outcome, the (tick, sequence) pairs of the IDs or the error with its numbers, and how
//! many readings the call takes.
//!
//! - A reading in a tick after the newest used takes that tick's first pair; in the newest
//!   tick, its next pair.
//! - Otherwise the next pair's tick is ahead of the clock by `ahead` (the start of its tick
//!   less the reading). It is taken when `ahead` is within the allowance: a resume mark's
//!   lead while it sets the pace (every tick used since it was taken under it; a mark the
//!   clock had reached when it was set has no lead and covers no tick), under `Borrow` its
//!   bound if that is larger.
//! - Else, when the clock (with the lead) reached the newest tick used, that tick is used
//!   up: wait for the clock to move on.
//! - Else the clock stepped back, by whole ticks from its tick up to the newest tick used,
//!   less the lead: `Fail` reports it (limit 0), `SwitchNode` too, `Wait` waits while the
//!   clock can reach the newest tick within `max_wait_ms` and reports it otherwise,
//!   `Borrow` waits while the next ID is at most its bound past the allowance (for at
//!   most the bound) and reports `TooFarAhead` with `ahead` otherwise.
//! - A wait ends when the clock gets there; it runs out once the clock has moved more than
//!   the limit past the wait's first reading: `ClockBackwards` by the whole ticks from that
//!   reading's tick to where the clock had to get, or `TooFarAhead` at the last reading.
//! - `try_*` calls never wait: `WouldBlock`. The shared generator reads the clock once more
//!   to confirm a step back before it believes it.

use snowdrift::{Error, ErrorKind, Field, Layout, Order, Policy};

/// What the model predicts a call gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `len` pairs from `slot` (`tick << sequence_bits | sequence`).
    Slots {
        slot: u64,
        len: u64,
    },
    Backwards {
        by_ms: u64,
        limit_ms: u64,
    },
    SwitchNode {
        by_ms: u64,
    },
    TooFarAhead {
        ahead_ms: u64,
        limit_ms: u64,
    },
    WouldBlock,
    /// A time outside the layout: the reading, or the end of the time field.
    Time {
        value: u64,
    },
}

impl Expect {
    /// Whether `e` is this error, numbers included.
    pub fn matches(self, e: &Error) -> bool {
        let got = match e.kind() {
            ErrorKind::ClockBackwards => Expect::Backwards {
                by_ms: e.behind_ms().unwrap_or(u64::MAX),
                limit_ms: e.limit_ms().unwrap_or(u64::MAX),
            },
            ErrorKind::SwitchNode => Expect::SwitchNode {
                by_ms: e.behind_ms().unwrap_or(u64::MAX),
            },
            ErrorKind::TooFarAhead => Expect::TooFarAhead {
                ahead_ms: e.ahead_ms().unwrap_or(u64::MAX),
                limit_ms: e.limit_ms().unwrap_or(u64::MAX),
            },
            ErrorKind::WouldBlock => Expect::WouldBlock,
            ErrorKind::OutOfRange if e.field() == Some(Field::Time) => Expect::Time {
                value: e.value().unwrap_or(u64::MAX),
            },
            _ => return false,
        };
        got == self
    }
}

/// One attempt at the reading `ms`.
enum Attempt {
    Take {
        slot: u64,
        lead: bool,
    },
    /// Wait for the clock to move past `ms`.
    NextTick,
    /// Wait for the clock to reach `target`, at most `limit` past the wait's first reading.
    Wait {
        target: u64,
        limit: u64,
        overdue: Overdue,
    },
    Fail(Expect),
}

#[derive(Clone, Copy)]
enum Overdue {
    /// `ClockBackwards` from the start of this reading's tick.
    Backwards {
        tick_ms: u64,
    },
    TooFarAhead {
        ahead_ms: u64,
    },
}

/// Readings the model ran out of: the call read the clock fewer times than predicted.
#[derive(Debug)]
pub struct OutOfReadings;

pub struct Model {
    layout: Layout,
    policy: Policy,
    /// The shared generator (it confirms a step back with a second reading).
    shared: bool,
    unit: u64,
    seq_bits: u32,
    node: u64,
    /// The next free pair.
    pub next: u64,
    lead_ticks: u64,
    lead_through: u64,
}

impl Model {
    pub fn new(layout: Layout, policy: Policy, shared: bool, node: u64) -> Self {
        Model {
            layout,
            policy,
            shared,
            node,
            unit: u64::from(layout.unit_ms()),
            seq_bits: layout.sequence_bits(),
            next: 0,
            lead_ticks: 0,
            lead_through: 0,
        }
    }

    fn tick_of(&self, ms: u64) -> Option<u64> {
        let tick = ms.checked_sub(self.layout.epoch_ms())? / self.unit;
        (tick <= self.layout.max_tick()).then_some(tick)
    }

    fn start(&self, tick: u64) -> u64 {
        let ms = u128::from(self.layout.epoch_ms()) + u128::from(tick) * u128::from(self.unit);
        u64::try_from(ms).unwrap_or(u64::MAX)
    }

    /// The pair of an ID of this generator.
    pub fn slot_of(&self, id: u64) -> u64 {
        let l = &self.layout;
        let (s, n) = (l.sequence_bits(), l.node_bits());
        let seq = match l.order() {
            Order::NodeThenSequence => id & ((1 << s) - 1),
            Order::SequenceThenNode => (id >> n) & ((1 << s) - 1),
        };
        ((id >> (s + n)) << s) | seq
    }

    /// An ID of this generator was issued (by the call checked, or one the model did not
    /// predict): the next free pair is past it.
    pub fn issued(&mut self, id: u64) {
        self.next = self.next.max(self.slot_of(id) + 1);
    }

    /// A resume mark whose first free pair is `floor`, set while the clock read `ms`. Only
    /// a mark whose first free pair lies in a tick after the clock's has a lead: the clock
    /// reached any other, so falling behind it later is a step.
    pub fn raise(&mut self, floor: u64, ms: u64) {
        if let Some(now) = self.tick_of(ms)
            && floor >> self.seq_bits > now
        {
            self.lead_ticks = self.lead_ticks.max((floor >> self.seq_bits) - now);
            self.lead_through = self.lead_through.max((floor - 1) >> self.seq_bits);
        }
        self.next = self.next.max(floor);
    }

    /// A fresh start on another node.
    pub fn reset(&mut self, node: u64) {
        (self.next, self.lead_ticks, self.lead_through) = (0, 0, 0);
        self.node = node;
    }

    /// The first pair whose ID (of this node) is above `id`: the smallest (tick, sequence)
    /// that, with this node, makes a larger ID.
    pub fn floor_above_id(&self, id: u64) -> u64 {
        let l = &self.layout;
        let (s, n) = (l.sequence_bits(), l.node_bits());
        let tick = id >> (s + n);
        let (node, seq) = match l.order() {
            Order::NodeThenSequence => ((id >> s) & ((1 << n) - 1), id & ((1 << s) - 1)),
            Order::SequenceThenNode => (id & ((1 << n) - 1), (id >> n) & ((1 << s) - 1)),
        };
        let (tick, seq) = match l.order() {
            // The node sits above the sequence: every pair of the tick, or none.
            Order::NodeThenSequence if self.node > node => (tick, 0),
            Order::NodeThenSequence if self.node < node => (tick + 1, 0),
            // The node sits below: the same sequence already makes a larger ID.
            Order::SequenceThenNode if self.node > node => (tick, seq),
            _ if seq == l.max_sequence() => (tick + 1, 0),
            _ => (tick, seq + 1),
        };
        (tick << s) | seq
    }

    /// The first pair after Unix millisecond `ms`: the next tick's first.
    pub fn floor_after_ms(&self, ms: u64) -> u64 {
        match ms.checked_sub(self.layout.epoch_ms()) {
            Some(since) => (since / self.unit + 1) << self.seq_bits,
            None => 0,
        }
    }

    fn attempt(&self, ms: u64) -> Attempt {
        let Some(now) = self.tick_of(ms) else {
            return Attempt::Fail(Expect::Time { value: ms });
        };
        let (tick, s) = (self.next >> self.seq_bits, self.seq_bits);
        if tick == now {
            return Attempt::Take {
                slot: self.next,
                lead: false,
            };
        }
        if tick < now {
            return Attempt::Take {
                slot: now << s,
                lead: false,
            };
        }
        let newest = (self.next - 1) >> s;
        let lead = if self.lead_ticks > 0 && newest <= self.lead_through {
            self.lead_ticks
        } else {
            0
        };
        let lead_ms = lead * self.unit;
        let ahead = self.start(tick).saturating_sub(ms);
        let allowed = match self.policy {
            Policy::Borrow { max_ahead_ms } => lead_ms.max(u64::from(max_ahead_ms)),
            _ => lead_ms,
        };
        if ahead <= allowed {
            if tick > self.layout.max_tick() {
                return Attempt::Fail(Expect::Time {
                    value: self.layout.exhausts_at(),
                });
            }
            return Attempt::Take {
                slot: self.next,
                lead: lead > 0 && tick > newest,
            };
        }
        let reach = self.start(newest).saturating_sub(lead_ms);
        if reach <= ms {
            return Attempt::NextTick;
        }
        let by_ms = (newest - lead - now) * self.unit;
        match self.policy {
            Policy::Borrow { max_ahead_ms } if ahead - allowed <= u64::from(max_ahead_ms) => {
                Attempt::Wait {
                    target: ms + (ahead - allowed),
                    limit: u64::from(max_ahead_ms),
                    overdue: Overdue::TooFarAhead { ahead_ms: ahead },
                }
            }
            Policy::Borrow { max_ahead_ms } => Attempt::Fail(Expect::TooFarAhead {
                ahead_ms: ahead,
                limit_ms: u64::from(max_ahead_ms),
            }),
            Policy::Wait { max_wait_ms } if reach - ms <= u64::from(max_wait_ms) => Attempt::Wait {
                target: reach,
                limit: u64::from(max_wait_ms),
                overdue: Overdue::Backwards {
                    tick_ms: self.start(now),
                },
            },
            Policy::Wait { max_wait_ms } => Attempt::Fail(Expect::Backwards {
                by_ms,
                limit_ms: u64::from(max_wait_ms),
            }),
            Policy::SwitchNode => Attempt::Fail(Expect::SwitchNode { by_ms }),
            _ => Attempt::Fail(Expect::Backwards { by_ms, limit_ms: 0 }),
        }
    }

    /// An attempt as the generator makes it: the shared one reads the clock again before
    /// it believes a step back or a wait (not a reading outside the layout, which is wrong
    /// whatever the generator's state).
    fn confirmed(
        &self,
        ms: u64,
        readings: &mut dyn Iterator<Item = u64>,
    ) -> Result<(u64, Attempt), OutOfReadings> {
        let first = self.attempt(ms);
        let outside = self.tick_of(ms).is_none();
        if self.shared && !outside && matches!(first, Attempt::Wait { .. } | Attempt::Fail(_)) {
            let ms = readings.next().ok_or(OutOfReadings)?;
            return Ok((ms, self.attempt(ms)));
        }
        Ok((ms, first))
    }

    /// Predicts one call for up to `n` IDs (`next`, `try_next`: 1), consuming the readings
    /// it takes, and moves the model on as the generator should.
    pub fn call(
        &mut self,
        n: u32,
        blocking: bool,
        readings: &mut dyn Iterator<Item = u64>,
    ) -> Result<Expect, OutOfReadings> {
        let first = readings.next().ok_or(OutOfReadings)?;
        let (mut ms, mut step) = self.confirmed(first, readings)?;
        // The first reading found behind and the start of its tick; the last reading.
        let mut since: Option<(u64, u64)> = None;
        loop {
            let last = match step {
                Attempt::Take { slot, lead } => {
                    let left = (1u64 << self.seq_bits) - (slot & ((1 << self.seq_bits) - 1));
                    let len = left.min(u64::from(n.max(1)));
                    if lead {
                        self.lead_through = self.lead_through.max(slot >> self.seq_bits);
                    }
                    self.next = slot + len;
                    return Ok(Expect::Slots { slot, len });
                }
                Attempt::Fail(e) => return Ok(e),
                Attempt::NextTick | Attempt::Wait { .. } if !blocking => {
                    return Ok(Expect::WouldBlock);
                }
                Attempt::NextTick => ms,
                Attempt::Wait {
                    target,
                    limit,
                    overdue,
                } => {
                    let tick_ms = match overdue {
                        Overdue::Backwards { tick_ms } => tick_ms,
                        Overdue::TooFarAhead { .. } => ms,
                    };
                    let (at, at_tick) = *since.get_or_insert((ms, tick_ms));
                    if ms.saturating_sub(at) > limit {
                        return Ok(match overdue {
                            Overdue::Backwards { .. } => Expect::Backwards {
                                by_ms: target - at_tick,
                                limit_ms: limit,
                            },
                            Overdue::TooFarAhead { ahead_ms } => Expect::TooFarAhead {
                                ahead_ms,
                                limit_ms: limit,
                            },
                        });
                    }
                    ms
                }
            };
            // Readings that repeat the last one are let go by.
            ms = loop {
                let read = readings.next().ok_or(OutOfReadings)?;
                if read != last {
                    break read;
                }
            };
            (ms, step) = self.confirmed(ms, readings)?;
        }
    }
}
