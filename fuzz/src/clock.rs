//! A clock whose readings come from the fuzz input, and the record of what each call read.

use std::cell::{Cell, RefCell};

use arbitrary::Arbitrary;
use snowdrift::Clock;

/// What one reading does to the clock before it is returned.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Step {
    Same,
    Forward(u8),
    Back(u8),
    ForwardFar(u16),
    BackFar(u16),
    Leap(u32),
    Plunge(u32),
    /// The clock stops for the next 20,000 reads (the core accepts 2^22 before it gives
    /// up with `ClockStalled`: that many would make a run take seconds).
    Freeze,
    /// An interrupt handler takes IDs during this reading (atomic generator only): with
    /// `stale`, after the clock was read, so the interrupted call goes on with a reading
    /// older than the handler's; else before, and the reading is taken as `Same`.
    Interrupt {
        call: Nested,
        stale: bool,
    },
}

/// A call an interrupt handler makes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Nested {
    TryNext,
    TryBatch(u8),
    Next,
}

/// Runs a nested call from inside a clock reading.
pub trait Interrupt {
    fn fire(&self, call: Nested);
}

/// Reads a `Freeze` lasts.
const FREEZE_READS: u64 = 20_000;

/// What the clock saw during one call.
#[derive(Debug, Default, Clone)]
pub struct Window {
    /// Every reading, consecutive repeats dropped.
    pub readings: Vec<u64>,
    /// Reads made by this call itself, not by interrupts nested in it.
    pub own_reads: u64,
    /// The readings of those reads, in order, repeats included.
    pub own: Vec<u64>,
    /// Interrupts that fired during the call.
    pub interrupts: u64,
    /// The longest run of reads in a row that did not move forward.
    pub longest_stall: u64,
    stall: u64,
    last: Option<u64>,
}

/// Readings follow the script, one step per read; once it has run out, the clock moves
/// forward by itself: 1 ms per read at first, doubling every 4096 reads, so that any wait
/// (even one bounded by a huge `max_wait_ms`) ends after some 100,000 reads.
pub struct ScriptClock<'a> {
    script: Vec<Step>,
    pos: Cell<usize>,
    now: Cell<u64>,
    past_script: Cell<u64>,
    frozen: Cell<u64>,
    windows: RefCell<Vec<Window>>,
    interrupt: Cell<Option<&'a dyn Interrupt>>,
    in_interrupt: Cell<bool>,
}

impl<'a> ScriptClock<'a> {
    pub fn new(start: u64, script: Vec<Step>) -> Self {
        ScriptClock {
            script,
            pos: Cell::new(0),
            now: Cell::new(start),
            past_script: Cell::new(0),
            frozen: Cell::new(0),
            windows: RefCell::new(Vec::new()),
            interrupt: Cell::new(None),
            in_interrupt: Cell::new(false),
        }
    }

    pub fn set_interrupt(&self, handler: &'a dyn Interrupt) {
        self.interrupt.set(Some(handler));
    }

    /// The current reading, without taking a read.
    pub fn peek(&self) -> u64 {
        self.now.get()
    }

    /// Starts recording a call's readings (calls nest).
    pub fn open(&self) {
        self.windows.borrow_mut().push(Window::default());
    }

    /// Stops recording the innermost call and returns what it read.
    pub fn close(&self) -> Window {
        self.windows.borrow_mut().pop().unwrap_or_default()
    }

    fn advance(&self) -> u64 {
        let now = self.now.get();
        if self.frozen.get() > 0 {
            self.frozen.set(self.frozen.get() - 1);
            return now;
        }
        let Some(step) = self.script.get(self.pos.get()).copied() else {
            let n = self.past_script.get();
            self.past_script.set(n + 1);
            let next = now.saturating_add(1 << (n / 4096).min(40));
            self.now.set(next);
            return next;
        };
        self.pos.set(self.pos.get() + 1);
        let next = match step {
            Step::Same => now,
            Step::Forward(d) => now.saturating_add(u64::from(d)),
            Step::Back(d) => now.saturating_sub(u64::from(d)),
            Step::ForwardFar(d) => now.saturating_add(u64::from(d)),
            Step::BackFar(d) => now.saturating_sub(u64::from(d)),
            Step::Leap(d) => now.saturating_add(u64::from(d)),
            Step::Plunge(d) => now.saturating_sub(u64::from(d)),
            Step::Freeze => {
                self.frozen.set(FREEZE_READS);
                now
            }
            Step::Interrupt { call, stale } => {
                if let Some(handler) = self.interrupt.get()
                    && !self.in_interrupt.replace(true)
                {
                    if let Some(w) = self.windows.borrow_mut().last_mut() {
                        w.interrupts += 1;
                    }
                    handler.fire(call);
                    self.in_interrupt.set(false);
                }
                if stale {
                    // The handler's readings moved the clock on; this one was taken before.
                    return now;
                }
                self.now.get()
            }
        };
        self.now.set(next);
        next
    }
}

impl Clock for ScriptClock<'_> {
    fn now_ms(&self) -> u64 {
        let reading = self.advance();
        let mut windows = self.windows.borrow_mut();
        let depth = windows.len();
        for (i, w) in windows.iter_mut().enumerate() {
            if i + 1 == depth {
                w.own_reads += 1;
                w.own.push(reading);
            }
            match w.last {
                Some(last) if reading <= last => {
                    w.stall += 1;
                    w.longest_stall = w.longest_stall.max(w.stall);
                }
                _ => w.stall = 0,
            }
            if w.last != Some(reading) {
                w.readings.push(reading);
            }
            w.last = Some(reading);
        }
        reading
    }
}
