//! The numbers in generator errors, and how far ahead of the clock an ID may be, as the
//! docs state them: for both generators and every issuing call (`next`, `try_next`,
//! `next_batch`, `try_next_batch`, `fill`).

// In wasm32 (wasm/core-tests) the tests run under wasm-bindgen-test.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use snowdrift::{Error, ErrorKind, Generator, IdGenerator, Layout, ManualClock, Parts, Policy};

const T0: u64 = 1_750_000_000_000;

/// A layout with a 2-bit sequence (4 IDs per tick) and ticks of `unit_ms`, whose epoch
/// puts a tick start at `T0`.
fn tiny(unit_ms: u32) -> Layout {
    Layout::builder()
        .time_bits(40)
        .node_bits(4)
        .sequence_bits(2)
        .unit_ms(unit_ms)
        .epoch_ms(T0 - 100_000 * u64::from(unit_ms))
        .build()
        .unwrap()
}

/// The outcome of each issuing call, on the generator as it is (every call fails here,
/// so none changes it): the error's kind and its numbers.
fn every_call(g: &mut impl IdGenerator) -> Vec<(&'static str, Result<(), Numbers>)> {
    let mut out = [0u64; 3];
    vec![
        ("next", g.next().map(drop).map_err(numbers)),
        ("try_next", g.try_next().map(drop).map_err(numbers)),
        ("next_batch", g.next_batch(3).map(drop).map_err(numbers)),
        (
            "try_next_batch",
            g.try_next_batch(3).map(drop).map_err(numbers),
        ),
        ("fill", g.fill(&mut out).map(drop).map_err(numbers)),
    ]
}

/// An error's kind and the numbers a caller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Numbers {
    kind: ErrorKind,
    behind_ms: Option<u64>,
    ahead_ms: Option<u64>,
    limit_ms: Option<u64>,
}

fn numbers(e: Error) -> Numbers {
    Numbers {
        kind: e.kind(),
        behind_ms: e.behind_ms(),
        ahead_ms: e.ahead_ms(),
        limit_ms: e.limit_ms(),
    }
}

fn backwards(kind: ErrorKind, behind_ms: u64, limit_ms: Option<u64>) -> Numbers {
    Numbers {
        kind,
        behind_ms: Some(behind_ms),
        ahead_ms: None,
        limit_ms,
    }
}

fn too_far(ahead_ms: u64, limit_ms: u64) -> Numbers {
    Numbers {
        kind: ErrorKind::TooFarAhead,
        behind_ms: None,
        ahead_ms: Some(ahead_ms),
        limit_ms: Some(limit_ms),
    }
}

/// Asserts every issuing call of `g` fails with `expect`.
fn assert_every_call(g: &mut impl IdGenerator, expect: Numbers, what: &str) {
    for (call, got) in every_call(g) {
        assert_eq!(got, Err(expect), "{what}: {call}");
    }
}

/// Runs `$body` with `$g` a fresh `Generator`, then a fresh `AtomicGenerator` (node 1).
macro_rules! both {
    ($clock:expr, $layout:expr, $policy:expr, |$g:ident| $body:block) => {{
        {
            let mut $g = Generator::new($clock, $layout, 1, $policy).unwrap();
            $body
        }
        #[cfg(feature = "atomic")]
        {
            // Some scenarios use only its `&self` calls.
            #[allow(unused_mut)]
            let mut $g = snowdrift::AtomicGenerator::new($clock, $layout, 1, $policy).unwrap();
            $body
        }
    }};
}

#[test]
fn behind_ms_counts_whole_ticks() {
    // 10 ms ticks: the newest tick used starts at T0; the clock reads 7 ms into the tick 8
    // ticks before it.
    let layout = tiny(10);
    for policy in [
        Policy::Fail,
        Policy::SwitchNode,
        Policy::Wait { max_wait_ms: 50 },
    ] {
        let clock = ManualClock::new(T0 + 3);
        both!(&clock, layout, policy, |g| {
            clock.set(T0 + 3);
            g.next().unwrap();
            clock.set(T0 - 80 + 7);
            let (kind, limit) = match policy {
                Policy::Fail => (ErrorKind::ClockBackwards, Some(0)),
                Policy::SwitchNode => (ErrorKind::SwitchNode, None),
                _ => (ErrorKind::ClockBackwards, Some(50)),
            };
            assert_every_call(&mut g, backwards(kind, 80, limit), &format!("{policy:?}"));
        });
    }
}

#[test]
fn behind_ms_is_the_step_whether_or_not_the_newest_tick_is_used_up() {
    let layout = tiny(1);
    for policy in [Policy::Fail, Policy::SwitchNode] {
        let clock = ManualClock::new(T0);
        both!(&clock, layout, policy, |g| {
            clock.set(T0);
            g.next().unwrap();
            clock.set(T0 - 5_000);
            let kind = if policy == Policy::Fail {
                ErrorKind::ClockBackwards
            } else {
                ErrorKind::SwitchNode
            };
            let limit = (policy == Policy::Fail).then_some(0);
            assert_every_call(&mut g, backwards(kind, 5_000, limit), "one ID");
            clock.set(T0);
            for _ in 0..3 {
                g.next().unwrap();
            }
            // The tick of T0 is used up: the step is still 5,000 ms.
            clock.set(T0 - 5_000);
            assert_every_call(&mut g, backwards(kind, 5_000, limit), "tick used up");
        });
    }
}

#[test]
fn behind_ms_counts_up_to_a_mark_in_the_clock_tick_whatever_the_lead_of_a_lower_mark() {
    // A mark in the clock's tick has no lead: the generator goes on from it, and the clock
    // falling behind it is a step. A later mark below it, set while the clock read 100 ms
    // behind that mark, has a lead of 100 ms, which explains none of the way up to the first
    // mark's tick: the step is counted in full, and is one even within those 100 ms.
    let layout = tiny(1);
    // The generator's own ID of the tick of T0.
    let at_clock = layout
        .compose(Parts {
            time_ms: T0,
            node: 1,
            sequence: 0,
        })
        .unwrap();
    for policy in [
        Policy::Fail,
        Policy::SwitchNode,
        Policy::Wait { max_wait_ms: 50 },
    ] {
        let clock = ManualClock::new(T0);
        both!(&clock, layout, policy, |g| {
            clock.set(T0);
            g.resume_after(at_clock).unwrap();
            clock.set(T0 - 1_000);
            g.resume_after_ms(T0 - 901).unwrap();
            let (kind, limit) = match policy {
                Policy::Fail => (ErrorKind::ClockBackwards, Some(0)),
                Policy::SwitchNode => (ErrorKind::SwitchNode, None),
                _ => (ErrorKind::ClockBackwards, Some(50)),
            };
            let what = format!("{policy:?}");
            assert_every_call(&mut g, backwards(kind, 1_000, limit), &what);
            clock.set(T0 - 60);
            assert_every_call(&mut g, backwards(kind, 60, limit), &what);
        });
    }
}

#[test]
fn wait_takes_a_step_within_its_limit_when_the_newest_tick_is_used_up() {
    let layout = tiny(1);
    let clock = ManualClock::new(T0);
    both!(&clock, layout, Policy::Wait { max_wait_ms: 5_000 }, |g| {
        clock.set(T0);
        for _ in 0..4 {
            g.next().unwrap();
        }
        // 5,000 ms back is within the limit: the call would wait, not fail.
        clock.set(T0 - 5_000);
        assert_eq!(
            g.try_next().map_err(|e| e.kind()),
            Err(ErrorKind::WouldBlock)
        );
        clock.set(T0 - 5_001);
        assert_every_call(
            &mut g,
            backwards(ErrorKind::ClockBackwards, 5_001, Some(5_000)),
            "over the limit",
        );
    });
}

/// A clock that moves 1 ms per reading and, at each reading, first lets `handler` run (an
/// interrupt handler taking IDs from the same generator), unless one is running.
#[cfg(feature = "atomic")]
struct Interrupted<'a> {
    now: std::cell::Cell<u64>,
    handler: std::cell::Cell<Option<&'a dyn Fn()>>,
    busy: std::cell::Cell<bool>,
}

#[cfg(feature = "atomic")]
impl snowdrift::Clock for Interrupted<'_> {
    fn now_ms(&self) -> u64 {
        if let Some(handler) = self.handler.get()
            && !self.busy.replace(true)
        {
            self.now.set(self.now.get() + 1);
            handler();
            self.busy.set(false);
        }
        self.now.get()
    }
}

#[cfg(feature = "atomic")]
#[test]
fn borrow_on_a_shared_generator_whose_wait_runs_out_is_too_far_ahead() {
    use snowdrift::AtomicGenerator;
    let clock = Interrupted {
        now: std::cell::Cell::new(T0),
        handler: std::cell::Cell::new(None),
        busy: std::cell::Cell::new(false),
    };
    let policy = Policy::Borrow { max_ahead_ms: 3 };
    let g = AtomicGenerator::new(&clock, tiny(1), 1, policy).unwrap();
    // Ticks T0 to T0 + 3 taken: the next ID would be 4 ms ahead, past the bound.
    for _ in 0..4 {
        assert_eq!(g.next_batch(4).unwrap().len(), 4);
    }
    // Every reading the waiting call takes, a handler takes the tick the clock reached.
    let handler = || {
        let _ = g.try_next_batch(4);
    };
    clock.handler.set(Some(&handler));
    let err = g.next().unwrap_err();
    clock.handler.set(None);
    assert_eq!(numbers(err), too_far(4, 3), "{err}");
}

#[test]
fn a_resume_mark_above_the_clock_lets_borrow_run_no_further_ahead_than_the_mark() {
    let layout = Layout::DEFAULT;
    let clock = ManualClock::new(T0);
    both!(&clock, layout, Policy::Borrow { max_ahead_ms: 1 }, |g| {
        clock.set(T0);
        // The first ID after the mark is 6 ms ahead of the clock.
        g.resume_after_ms(T0 + 5).unwrap();
        let mut newest = 0;
        for _ in 0..4 {
            match g.try_next_batch(u32::MAX) {
                Ok(batch) => newest = batch.last().unwrap(),
                Err(e) => assert_eq!(e.kind(), ErrorKind::WouldBlock),
            }
        }
        let ahead = layout.decode(newest).unwrap().time_ms - T0;
        assert_eq!(ahead, 6, "IDs {ahead} ms ahead of the clock");
        // A step back past the lead: the error says how far ahead the next ID would be.
        clock.set(T0 - 20);
        assert_every_call(&mut g, too_far(27, 1), "20 ms back");
    });
}

#[test]
fn with_ticks_longer_than_the_borrow_bound_an_id_is_never_more_than_the_bound_ahead() {
    // 1 s ticks, a 1 ms bound: a used-up tick takes the next one only in its last 1 ms.
    let layout = tiny(1000);
    let clock = ManualClock::new(T0);
    both!(&clock, layout, Policy::Borrow { max_ahead_ms: 1 }, |g| {
        clock.set(T0);
        assert_eq!(g.next_batch(4).unwrap().len(), 4);
        for ms in [T0, T0 + 500, T0 + 998] {
            clock.set(ms);
            assert_eq!(
                g.try_next().map_err(|e| e.kind()),
                Err(ErrorKind::WouldBlock),
                "at {ms}"
            );
        }
        clock.set(T0 + 999);
        let mut ids = [0; 2];
        assert_eq!(g.fill(&mut ids), Ok(2));
        for id in ids {
            assert_eq!(layout.decode(id).unwrap().time_ms, T0 + 1000);
        }
    });
}

#[test]
fn past_fence_names_the_refused_tick_and_the_fence_rounded_up_to_a_tick() {
    let layout = tiny(10);
    let clock = ManualClock::new(T0 + 4);
    both!(&clock, layout, Policy::DEFAULT, |g| {
        g.set_fence_ms(T0 + 5); // IDs of the tick of T0 start before it: allowed
        clock.set(T0 + 4);
        assert!(g.next().is_ok());
        clock.set(T0 + 10);
        for (call, got) in every_call(&mut g) {
            assert_eq!(got.map_err(|n| n.kind), Err(ErrorKind::PastFence), "{call}");
        }
        let err = g.next().unwrap_err();
        assert_eq!(
            (err.time_ms(), err.fence_ms()),
            (Some(T0 + 10), Some(T0 + 10))
        );
        g.set_fence_ms(u64::MAX);
    });
}

#[test]
fn a_used_up_time_field_names_its_end() {
    // 4 ticks of 1 ms: the last starts at epoch + 3.
    let layout = Layout::builder()
        .time_bits(2)
        .node_bits(4)
        .sequence_bits(1)
        .epoch_ms(T0)
        .build()
        .unwrap();
    let clock = ManualClock::new(T0 + 3);
    both!(&clock, layout, Policy::Borrow { max_ahead_ms: 5 }, |g| {
        clock.set(T0 + 3);
        assert_eq!(g.next_batch(2).unwrap().len(), 2);
        for (call, got) in every_call(&mut g) {
            let err = got.unwrap_err();
            assert_eq!(err.kind, ErrorKind::OutOfRange, "{call}");
        }
        let err = g.next().unwrap_err();
        assert_eq!(
            (err.value(), err.min(), err.max()),
            (Some(layout.exhausts_at()), Some(T0), Some(T0 + 3))
        );
    });
}
