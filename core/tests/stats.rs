//! `stats()` of both generators: what each policy counts when the clock steps back, when
//! a tick is used up, and how far IDs run ahead of the clock; nothing while the clock
//! behaves.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use snowdrift::{
    AtomicGenerator, ClockStats, ErrorKind, Generator, IdGenerator, Layout, ManualClock, Policy,
};

const T0: u64 = 1_750_000_000_000;

/// Both generators, driven through `IdGenerator`, with their `stats()`.
trait Counted: IdGenerator {
    fn counted(&self) -> ClockStats;
}
impl Counted for Generator<&ManualClock> {
    fn counted(&self) -> ClockStats {
        self.stats()
    }
}
impl Counted for AtomicGenerator<&ManualClock> {
    fn counted(&self) -> ClockStats {
        self.stats()
    }
}

/// Runs `check` with a generator of each kind over `clock`.
fn each(
    layout: Layout,
    policy: Policy,
    clock: &ManualClock,
    check: impl Fn(&mut dyn Counted<Clock = &ManualClock>),
) {
    clock.set(T0);
    check(&mut Generator::new(clock, layout, 1, policy).unwrap());
    clock.set(T0);
    check(&mut AtomicGenerator::new(clock, layout, 1, policy).unwrap());
}

/// `stats` with the counts given and `ahead_ms`.
fn counts(
    behind: u64,
    largest_behind_ms: u64,
    clock_waits: u64,
    tick_waits: u64,
    ahead_ms: u64,
) -> ClockStats {
    let mut s = ClockStats::default();
    (
        s.behind,
        s.largest_behind_ms,
        s.clock_waits,
        s.tick_waits,
        s.ahead_ms,
    ) = (behind, largest_behind_ms, clock_waits, tick_waits, ahead_ms);
    s
}

#[test]
fn a_clock_that_behaves_counts_nothing() {
    let clock = ManualClock::new(T0);
    each(Layout::DEFAULT, Policy::DEFAULT, &clock, |g| {
        for i in 0..1000 {
            if i % 10 == 0 {
                clock.advance(1);
            }
            g.next().unwrap();
        }
        assert_eq!(g.counted(), ClockStats::default());
    });
}

#[test]
fn fail_counts_each_refused_call_and_the_largest_step() {
    let clock = ManualClock::new(T0);
    each(Layout::DEFAULT, Policy::Fail, &clock, |g| {
        g.next().unwrap();
        clock.rewind(37);
        assert!(g.next().is_err());
        clock.rewind(3);
        assert!(g.try_next().is_err());
        assert!(g.next_batch(5).is_err());
        // 40 ms back, then the clock catches up 39 of them.
        assert_eq!(g.counted(), counts(3, 40, 0, 0, 40));
        clock.advance(39);
        assert!(g.next().is_err());
        assert_eq!(g.counted(), counts(4, 40, 0, 0, 1));
        clock.advance(1);
        g.next().unwrap();
        assert_eq!(g.counted(), counts(4, 40, 0, 0, 0));
    });
}

#[test]
fn wait_counts_a_wait_for_the_clock_and_a_step_past_its_bound() {
    let clock = ManualClock::new(T0);
    each(
        Layout::DEFAULT,
        Policy::Wait { max_wait_ms: 10 },
        &clock,
        |g| {
            g.next().unwrap();
            // 5 ms back: a call that may not wait finds the clock behind.
            clock.rewind(5);
            assert_eq!(
                g.try_next().map_err(|e| e.kind()),
                Err(ErrorKind::WouldBlock)
            );
            assert_eq!(g.counted(), counts(1, 5, 0, 0, 5));
            // 11 ms back is past the bound: refused at once.
            clock.set(T0 - 11);
            assert!(g.next().is_err());
            assert_eq!(g.counted(), counts(2, 11, 0, 0, 11));
        },
    );
    // A clock that moves 1 ms a read: `next` waits for it, and counts the wait once.
    let ticking = ManualClock::new(T0).with_step(1);
    each(
        Layout::DEFAULT,
        Policy::Wait { max_wait_ms: 10 },
        &ticking,
        |g| {
            g.next().unwrap();
            ticking.rewind(6);
            g.next().unwrap();
            let s = g.counted();
            assert_eq!((s.behind, s.clock_waits, s.tick_waits), (1, 1, 0));
            // The step seen is the rewind less the reads since the first ID (1 ms each).
            assert!((1..=6).contains(&s.largest_behind_ms), "{s:?}");
        },
    );
}

#[test]
fn borrow_shows_a_small_step_as_time_ahead_and_counts_one_past_its_bound() {
    let clock = ManualClock::new(T0);
    each(
        Layout::DEFAULT,
        Policy::Borrow { max_ahead_ms: 10 },
        &clock,
        |g| {
            g.next().unwrap();
            clock.rewind(8);
            g.next().unwrap(); // borrowed: within the bound, not a step the generator counts
            assert_eq!(g.counted(), counts(0, 0, 0, 0, 8));
            clock.rewind(42);
            assert!(g.next().is_err()); // 50 ms ahead: TooFarAhead
            assert_eq!(g.counted(), counts(1, 50, 0, 0, 50));
        },
    );
}

#[test]
fn a_used_up_tick_counts_one_wait_for_the_next_tick_per_call() {
    // Sonyflake: 10 ms ticks of 256 IDs. With a clock moving 1 ms a read, a batch uses up
    // a tick, and the next ID waits for the next tick (several reads), counted once.
    let ticking = ManualClock::new(T0).with_step(1);
    each(Layout::SONYFLAKE, Policy::Fail, &ticking, |g| {
        assert_eq!(g.next_batch(256).unwrap().len(), 256);
        assert_eq!(g.counted().tick_waits, 0);
        g.next().unwrap();
        assert_eq!(g.counted(), counts(0, 0, 0, 1, 0));
    });
    // A stopped clock: the wait ends as ClockStalled, still one wait; try_next never waits.
    let stopped = ManualClock::new(T0);
    each(Layout::SONYFLAKE, Policy::Fail, &stopped, |g| {
        assert_eq!(g.next_batch(256).unwrap().len(), 256);
        assert_eq!(
            g.try_next().map_err(|e| e.kind()),
            Err(ErrorKind::WouldBlock)
        );
        assert_eq!(g.counted().tick_waits, 0);
        assert_eq!(g.next().map_err(|e| e.kind()), Err(ErrorKind::ClockStalled));
        assert_eq!(g.counted(), counts(0, 0, 0, 1, 0));
    });
}
