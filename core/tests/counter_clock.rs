//! `CounterClock` under interrupts: readings held up between their raw counter read and
//! the extension (or before the raw read) by calls of higher priority, nested like
//! interrupt handlers of several priorities, compared with the counter's true count.
#![cfg(feature = "atomic")]

use std::cell::{Cell, RefCell};

use proptest::prelude::*;
use snowdrift::CounterClock;

/// One call to `ticks`, and the calls of higher priority that interrupt it.
#[derive(Debug, Clone, Default)]
struct Call {
    /// Counts the counter makes just before this call's raw read.
    advance: u64,
    /// Calls that run after this call started, before its raw read.
    before_raw: Vec<Call>,
    /// Calls that run after its raw read, before it extends the clock.
    after_raw: Vec<Call>,
}

impl Call {
    fn after(advance: u64) -> Call {
        Call {
            advance,
            ..Call::default()
        }
    }
}

/// What one call returned, and the counter's true count at its (last) raw read.
#[derive(Debug, Clone, Copy)]
struct Reading {
    ticks: u64,
    true_count: u64,
}

/// A free-running counter of `bits` bits that runs the interrupts a [`Call`] plans when
/// the clock reads it.
///
/// The board keeps the clock's rule: the newest completed reading is never a whole wrap
/// behind a raw read (an advance that would break it is cut short).
struct Board<'a> {
    bits: u32,
    /// Counts since the clock was created.
    count: Cell<u64>,
    /// The true count of the newest completed reading.
    newest: Cell<u64>,
    /// The calls under way, innermost last: what is still to run at its raw read, and the
    /// true count at its latest raw read.
    under_way: RefCell<Vec<(Option<Call>, u64)>>,
    /// Every completed reading, in the order the calls returned.
    log: RefCell<Vec<Reading>>,
    ticks: Cell<Option<&'a dyn Fn() -> u64>>,
}

impl<'a> Board<'a> {
    fn new(bits: u32) -> Self {
        Board {
            bits,
            count: Cell::new(0),
            newest: Cell::new(0),
            under_way: RefCell::new(Vec::new()),
            log: RefCell::new(Vec::new()),
            ticks: Cell::new(None),
        }
    }

    fn mask(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The clock's read function: the raw counter.
    fn read(&self) -> u64 {
        let plan = self
            .under_way
            .borrow_mut()
            .last_mut()
            .and_then(|(plan, _)| plan.take())
            .unwrap_or_default();
        for call in &plan.before_raw {
            self.call(call);
        }
        let room = self.mask() - (self.count.get() - self.newest.get());
        let count = self.count.get() + plan.advance.min(room);
        self.count.set(count);
        if let Some((_, true_count)) = self.under_way.borrow_mut().last_mut() {
            *true_count = count;
        }
        for call in &plan.after_raw {
            self.call(call);
        }
        count & self.mask()
    }

    /// Runs `call` (and what interrupts it) through the clock; returns its reading.
    fn call(&self, call: &Call) -> Reading {
        self.under_way.borrow_mut().push((Some(call.clone()), 0));
        let ticks = (self.ticks.get().expect("attached"))();
        let (_, true_count) = self.under_way.borrow_mut().pop().expect("pushed");
        self.newest.set(self.newest.get().max(true_count));
        let reading = Reading { ticks, true_count };
        self.log.borrow_mut().push(reading);
        reading
    }
}

/// Runs `body` with a board of `bits` bits and a `CounterClock` over it.
fn with_board<T>(bits: u32, body: impl FnOnce(&Board) -> T) -> T {
    let board = Board::new(bits);
    let clock = CounterClock::new(|| board.read(), bits, 1000, 0);
    let ticks = || clock.ticks();
    board.ticks.set(Some(&ticks));
    body(&board)
}

/// Main-loop readings, `step` counts apart, until the counter reaches `until`.
fn main_loop(board: &Board, step: u64, until: u64) {
    while board.count.get() < until {
        let r = board.call(&Call::after(step));
        assert_eq!(r.ticks, r.true_count, "an uninterrupted reading is exact");
    }
}

#[test]
fn a_reading_held_up_by_a_handler_is_not_placed_after_the_handlers() {
    with_board(8, |board| {
        main_loop(board, 100, 1000);
        // The main loop reads the counter at 1000; before it extends the clock, a handler
        // reads it at 1100 and 1200 (every read within 100 counts of the one before).
        let main = board.call(&Call {
            advance: 0,
            before_raw: vec![],
            after_raw: vec![Call::after(100), Call::after(100)],
        });
        let log = board.log.borrow().clone();
        let handler: Vec<u64> = log[log.len() - 3..log.len() - 1]
            .iter()
            .map(|r| r.ticks)
            .collect();
        assert_eq!(handler, [1100, 1200]);
        assert!(
            (1000..=1200).contains(&main.ticks),
            "the main loop's reading from count 1000 came back as {}, after the handler's 1200",
            main.ticks
        );
        // And the clock goes on with the counter.
        assert_eq!(board.call(&Call::after(100)).ticks, 1300);
    });
}

#[test]
fn nested_held_up_readings_do_not_put_the_clock_a_wrap_ahead() {
    with_board(8, |board| {
        main_loop(board, 100, 1000);
        // The main loop reads at 1000. A handler interrupts it: a higher-priority handler
        // reads at 1100 before the handler's own read at 1200, and three times (1200, 1300,
        // 1350) after it, before the handler extends the clock.
        let handler = Call {
            advance: 100,
            before_raw: vec![Call::after(100)],
            after_raw: vec![Call::after(0), Call::after(100), Call::after(50)],
        };
        let main = board.call(&Call {
            advance: 0,
            before_raw: vec![],
            after_raw: vec![handler],
        });
        let log = board.log.borrow().clone();
        let nested: Vec<u64> = log.iter().rev().skip(1).take(5).map(|r| r.ticks).collect();
        assert!((1200..=1350).contains(&nested[0]), "handler: {}", nested[0]);
        assert_eq!(nested[1..], [1350, 1300, 1200, 1100]);
        assert!(
            (1000..=1350).contains(&main.ticks),
            "main loop: {}",
            main.ticks
        );
        // Back in the main loop, every reading is the counter's true count again.
        for step in [0, 100, 100, 100, 100, 100, 100, 100, 100, 100] {
            let r = board.call(&Call::after(step));
            assert_eq!(r.ticks, r.true_count, "a wrap ahead for good");
        }
    });
}

#[test]
fn a_one_bit_counter_read_every_count_advances() {
    with_board(1, |board| {
        for n in 1..=10 {
            assert_eq!(board.call(&Call::after(1)).ticks, n);
        }
    });
}

/// A call of nesting depth at most `depth`, advancing at most `half` counts.
fn any_call(half: u64, depth: u32) -> impl Strategy<Value = Call> {
    let leaf = (0..=half).prop_map(Call::after);
    leaf.prop_recursive(depth, 12, 3, move |inner| {
        (
            0..=half,
            prop::collection::vec(inner.clone(), 0..3),
            prop::collection::vec(inner, 0..3),
        )
            .prop_map(|(advance, before_raw, after_raw)| Call {
                advance,
                before_raw,
                after_raw,
            })
    })
}

/// Counter widths from 1 to 64 bits with random calls stepping at most half a wrap (and
/// at most 2^40 counts, so the true count stays within 64 bits).
fn any_run() -> impl Strategy<Value = (u32, Vec<Call>)> {
    (1u32..=64).prop_flat_map(|bits| {
        let half = (1u64 << (bits - 1)).min(1 << 40);
        (Just(bits), prop::collection::vec(any_call(half, 3), 1..24))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_reading_is_the_true_count_at_its_raw_read((bits, calls) in any_run()) {
        with_board(bits, |board| {
            let mut last_main = 0;
            for call in &calls {
                let main = board.call(call);
                prop_assert!(main.ticks >= last_main, "the main loop went back");
                last_main = main.ticks;
            }
            let now = board.count.get();
            for r in board.log.borrow().iter() {
                prop_assert!(r.ticks <= now, "reading {} ahead of the counter's {now}", r.ticks);
                prop_assert_eq!(r.ticks, r.true_count);
            }
            Ok(())
        })?;
    }
}
