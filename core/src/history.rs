//! The ring of recent ticks behind [`Generator::with_history`](crate::Generator::with_history):
//! when the clock goes back into a tick it holds, that tick's unspent sequence numbers are
//! used.

use crate::engine::{Behind, Engine, Overdue, Step};
use crate::error::{Error, Repr};

/// The ring of recent ticks of a generator made by
/// [`Generator::with_history`](crate::Generator::with_history), each with its next free slot.
///
/// Every slot below `floor` is spent (its tick forgotten, or at or below a resume mark),
/// and every tick this generator used is the current one, in the ring, or wholly below
/// `floor`: so the slots of a tick not in the ring, from `floor` on, were never used.
#[derive(Debug)]
pub(crate) struct History<const H: usize> {
    ticks: [u64; H],
    next: [u64; H],
    len: usize,
    floor: u64,
}

impl<const H: usize> History<H> {
    pub(crate) fn new(floor: u64) -> Self {
        History {
            ticks: [0; H],
            next: [0; H],
            len: 0,
            floor,
        }
    }

    /// Records the tick of the slot before `next`, which the generator is leaving.
    #[cold]
    pub(crate) fn remember(&mut self, engine: &Engine, next: u64) {
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
    pub(crate) fn raise(&mut self, seq_bits: u32, floor: u64) {
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
    pub(crate) fn take(
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
                    overdue: Overdue::Backwards {
                        tick_ms: engine.start_ms(now),
                    },
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
        Step::Fail(Error(Repr::ClockBackwards {
            by_ms: (newest_tick - now) * unit,
            limit_ms: newest_tick.saturating_sub(lowest) * unit,
        }))
    }
}
