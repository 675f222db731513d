//! Generators under a clock stepped forward and back by hand: one scenario per policy and
//! per edge of the time field.

// In wasm32 (wasm/core-tests) the tests run under wasm-bindgen-test.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use snowdrift::{ErrorKind, Field, Generator, IdGenerator, Layout, ManualClock, Parts, Policy};

const T0: u64 = 1_750_000_000_000;

fn generator(clock: &ManualClock, policy: Policy) -> Generator<&ManualClock> {
    Generator::new(clock, Layout::DEFAULT, 7, policy).unwrap()
}

fn time_of(id: u64) -> u64 {
    Layout::DEFAULT.decode(id).unwrap().time_ms
}

/// A layout with a 2-bit sequence, so ticks run out after 4 IDs.
fn tiny() -> Layout {
    Layout::builder()
        .time_bits(40)
        .node_bits(4)
        .sequence_bits(2)
        .epoch_ms(T0 - 1000)
        .build()
        .unwrap()
}

#[test]
fn fail_reports_the_step_and_changes_nothing() {
    let clock = ManualClock::new(T0);
    let mut g = generator(&clock, Policy::Fail);
    let a = g.next().unwrap();
    clock.rewind(37);
    assert_eq!(
        g.next()
            .map_err(|e| (e.kind(), e.behind_ms(), e.limit_ms())),
        Err((ErrorKind::ClockBackwards, Some(37), Some(0)))
    );
    assert_eq!(
        g.try_next()
            .map_err(|e| (e.kind(), e.behind_ms(), e.limit_ms())),
        Err((ErrorKind::ClockBackwards, Some(37), Some(0)))
    );
    assert_eq!(
        g.next_batch(10)
            .map_err(|e| (e.kind(), e.behind_ms(), e.limit_ms())),
        Err((ErrorKind::ClockBackwards, Some(37), Some(0)))
    );
    clock.advance(37);
    let b = g.next().unwrap();
    assert!(b > a);
    assert_eq!(time_of(b), T0);
}

#[test]
fn wait_rides_out_a_small_step_and_refuses_a_large_one() {
    let clock = ManualClock::new(T0).with_step(0);
    let mut g = generator(&clock, Policy::Wait { max_wait_ms: 10 });
    g.next().unwrap();
    clock.rewind(5);
    assert_eq!(
        g.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    // A clock that moves 1 ms per read catches up after a few reads.
    let ticking = ManualClock::new(T0).with_step(1);
    let mut g2 = generator(&ticking, Policy::Wait { max_wait_ms: 10 });
    let a2 = g2.next().unwrap();
    ticking.rewind(5);
    let reads = ticking.reads();
    let b = g2.next().unwrap();
    assert!(b > a2);
    assert!(ticking.reads() - reads >= 5);
    // 11 ms back is over the limit: an error at once, without waiting.
    clock.set(T0 - 11);
    let reads = clock.reads();
    assert_eq!(
        g.next()
            .map_err(|e| (e.kind(), e.behind_ms(), e.limit_ms())),
        Err((ErrorKind::ClockBackwards, Some(11), Some(10)))
    );
    assert_eq!(clock.reads(), reads + 1);
}

#[test]
fn borrow_keeps_ids_increasing_up_to_max_ahead() {
    let clock = ManualClock::new(T0);
    let mut g = generator(
        &clock,
        Policy::Borrow {
            max_ahead_ms: 1_000,
        },
    );
    let mut last = g.next().unwrap();
    clock.rewind(500);
    for _ in 0..10_000 {
        let id = g.next().unwrap();
        assert!(id > last);
        last = id;
    }
    // 10,001 IDs at 4,096 per tick: the logical clock is 2 ticks past T0, 502 ms ahead.
    assert_eq!(time_of(last), T0 + 2);
    clock.set(T0 - 2_000);
    assert_eq!(
        g.next().map_err(|e| (e.kind(), e.ahead_ms(), e.limit_ms())),
        Err((ErrorKind::TooFarAhead, Some(2_002), Some(1_000)))
    );
    clock.set(T0 + 10);
    let id = g.next().unwrap();
    assert!(id > last);
    assert_eq!(time_of(id), T0 + 10);
}

#[test]
fn borrow_takes_the_next_tick_when_the_sequence_runs_out() {
    let clock = ManualClock::new(T0);
    let mut g = Generator::new(&clock, tiny(), 1, Policy::Borrow { max_ahead_ms: 2 }).unwrap();
    let ids: Vec<u64> = (0..12).map(|_| g.next().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] > w[0]));
    let times: Vec<u64> = ids
        .iter()
        .map(|&i| tiny().decode(i).unwrap().time_ms)
        .collect();
    assert_eq!(times[0], T0);
    assert_eq!(times[4], T0 + 1);
    assert_eq!(times[8], T0 + 2);
    // The lead reached the bound by taking ticks: wait for the clock, as for a used-up tick.
    assert_eq!(
        g.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    clock.advance(1);
    let id = g.next().unwrap();
    assert!(id > ids[11]);
    assert_eq!(tiny().decode(id).unwrap().time_ms, T0 + 3);
}

#[test]
fn borrow_under_sustained_load_waits_for_the_clock_at_the_bound_and_never_fails() {
    // IDs asked for four times as fast as the layout allows (4 per tick, 16 per ms of
    // clock): the lead grows to the bound, then each call waits about a tick.
    let reads = std::cell::Cell::new(0u64);
    let clock = snowdrift::FnClock(|| {
        reads.set(reads.get() + 1);
        T0 + reads.get() / 16
    });
    let mut g = Generator::new(&clock, tiny(), 1, Policy::Borrow { max_ahead_ms: 100 }).unwrap();
    let mut last = 0;
    for i in 0..20_000 {
        let id = g.next().unwrap_or_else(|e| panic!("ID {i}: {e}"));
        assert!(id > last);
        last = id;
        let ahead = tiny()
            .decode(id)
            .unwrap()
            .time_ms
            .saturating_sub(T0 + reads.get() / 16);
        assert!(ahead <= 100, "ID {i} is {ahead} ms ahead of the clock");
    }
    // 20,000 IDs at 4 per ms: the logical clock went 5 s, the real one with it.
    assert!(tiny().decode(last).unwrap().time_ms >= T0 + 4_999);
}

#[test]
fn history_reuses_unspent_sequence_numbers_of_recent_ticks() {
    let clock = ManualClock::new(T0);
    let mut g = Generator::<_, 4>::with_history(&clock, tiny(), 1).unwrap();
    let mut seen = std::collections::HashSet::new();
    // Two IDs in each of ticks T0..T0+5.
    for _ in 0..6 {
        assert!(seen.insert(g.next().unwrap()));
        assert!(seen.insert(g.next().unwrap()));
        clock.advance(1);
    }
    // Back to T0+3 (in the ring of 4): its two spare sequence numbers, then wait for T0+4.
    clock.set(T0 + 3);
    let a = g.next().unwrap();
    let b = g.next().unwrap();
    assert!(seen.insert(a) && seen.insert(b));
    assert_eq!(
        tiny().decode(a).unwrap(),
        Parts {
            time_ms: T0 + 3,
            node: 1,
            sequence: 2
        }
    );
    assert_eq!(
        g.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    ); // T0+3 is full now
    // The ring holds T0+1..T0+4 (T0+5 is current): T0 has fallen out, so it is refused
    // rather than risk a duplicate, and T0+1 still serves its spare numbers.
    clock.set(T0);
    assert_eq!(
        g.next().map_err(|e| (e.kind(), e.behind_ms())),
        Err((ErrorKind::ClockBackwards, Some(5)))
    );
    clock.set(T0 + 1);
    assert!(seen.insert(g.next().unwrap()));
    // Forward again: fresh ticks as usual.
    clock.set(T0 + 6);
    for _ in 0..4 {
        assert!(seen.insert(g.next().unwrap()));
    }
}

#[test]
fn history_never_reuses_ticks_before_a_resume_point() {
    let clock = ManualClock::new(T0);
    let mut g = Generator::<_, 8>::with_history(&clock, tiny(), 1).unwrap();
    g.resume_after_ms(T0 + 5).unwrap();
    clock.set(T0 + 6);
    let a = g.next().unwrap();
    clock.set(T0 + 3);
    assert!(matches!(g.next(), Err(e) if e.kind() == ErrorKind::ClockBackwards));
    assert!(tiny().decode(a).unwrap().time_ms == T0 + 6);
}

#[test]
fn switch_node_surfaces_the_step_and_resumes_on_a_new_node() {
    let clock = ManualClock::new(T0);
    let mut g = generator(&clock, Policy::SwitchNode);
    let a = g.next().unwrap();
    clock.rewind(3_000);
    assert_eq!(
        g.next().map_err(|e| (e.kind(), e.behind_ms())),
        Err((ErrorKind::SwitchNode, Some(3_000)))
    );
    assert!(g.switch_node(1 << 10, 0).is_err()); // does not fit: nothing changes
    assert_eq!(g.node(), 7);
    g.switch_node(8, 0).unwrap(); // node 8 never used
    let b = g.next().unwrap();
    assert_ne!(a, b);
    assert_eq!(Layout::DEFAULT.decode(b).unwrap().node, 8);
}

#[test]
fn a_used_up_tick_waits_for_the_next_one_and_try_next_would_block() {
    let clock = ManualClock::new(T0);
    let mut g = Generator::new(&clock, tiny(), 1, Policy::Fail).unwrap();
    for _ in 0..4 {
        g.try_next().unwrap();
    }
    assert_eq!(
        g.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    assert_eq!(
        g.try_next_batch(3).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    // A clock moving on its own: `next` waits for T0+1.
    let moving = ManualClock::new(T0).with_step(1);
    let mut g = Generator::new(&moving, tiny(), 1, Policy::Fail).unwrap();
    let ids: Vec<u64> = (0..5).map(|_| g.next().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn a_stopped_clock_is_reported_instead_of_spinning_forever() {
    // A used-up tick (Wait), and a lead at the bound (Borrow, 2 ticks ahead: 12 IDs).
    for (policy, ids) in [
        (Policy::Wait { max_wait_ms: 100 }, 4),
        (Policy::Borrow { max_ahead_ms: 2 }, 12),
    ] {
        let clock = ManualClock::new(T0);
        let mut g = Generator::new(&clock, tiny(), 1, policy).unwrap();
        for _ in 0..ids {
            g.next().unwrap();
        }
        assert_eq!(
            g.next().map_err(|e| (e.kind(), e.time_ms())),
            Err((ErrorKind::ClockStalled, Some(T0))),
            "{policy:?}"
        );
        clock.advance(1);
        assert!(g.next().is_ok());
    }
}

#[test]
fn the_time_field_runs_out_with_an_error_and_never_wraps() {
    let l = Layout::builder()
        .time_bits(4)
        .node_bits(2)
        .sequence_bits(2)
        .epoch_ms(T0)
        .build()
        .unwrap();
    let clock = ManualClock::new(l.last_ms());
    let mut g = Generator::new(&clock, l, 1, Policy::Borrow { max_ahead_ms: 100 }).unwrap();
    let last: Vec<u64> = (0..4).map(|_| g.next().unwrap()).collect();
    assert_eq!(l.decode(last[3]).unwrap().time_ms, l.last_ms());
    let err = g.next().unwrap_err();
    assert_eq!(
        (err.kind(), err.field(), err.value()),
        (
            ErrorKind::OutOfRange,
            Some(Field::Time),
            Some(l.exhausts_at())
        )
    );
    clock.advance(1);
    assert!(matches!(g.next(), Err(e) if e.field() == Some(Field::Time)));
    // Nothing can follow the last tick: the error names the mark and the largest one.
    let last_start = l.exhausts_at() - u64::from(l.unit_ms());
    let err = g.resume_after_ms(l.last_ms()).unwrap_err();
    assert!(
        err.kind() == ErrorKind::ResumeOutOfRange
            && err.value() == Some(l.last_ms())
            && err.max() == Some(last_start - 1),
        "{err:?}"
    );
    assert!(g.resume_after_ms(last_start - 1).is_ok());
}

#[test]
fn a_clock_before_the_epoch_is_an_error() {
    let clock = ManualClock::new(Layout::DEFAULT.epoch_ms() - 1);
    let mut g = generator(&clock, Policy::DEFAULT);
    let err = g.next().unwrap_err();
    assert_eq!(
        err.to_string(),
        "time 1704067199999 ms is outside the layout's range (1704067200000..=3903090455551 ms since the Unix epoch)"
    );
}

#[test]
fn resume_after_an_id_of_any_node_never_goes_at_or_below_it() {
    let clock = ManualClock::new(T0);
    let l = Layout::DEFAULT;
    for (mark_node, mark_seq) in [(6u64, 0u64), (7, 5), (8, 4095), (7, 4095)] {
        let mark = l
            .compose(Parts {
                time_ms: T0,
                node: mark_node,
                sequence: mark_seq,
            })
            .unwrap();
        let mut g = Generator::new(&clock, l, 7, Policy::Borrow { max_ahead_ms: 10 }).unwrap();
        g.resume_after(mark).unwrap();
        let id = g.next().unwrap();
        assert!(id > mark, "mark node {mark_node} seq {mark_seq}");
        // ... and it is the smallest such ID this node can make.
        let p = l.decode(id).unwrap();
        if p.sequence > 0 {
            let below = l
                .compose(Parts {
                    sequence: p.sequence - 1,
                    ..p
                })
                .unwrap();
            assert!(below <= mark);
        }
    }
    // Sonyflake puts the sequence above the node.
    let s = Layout::SONYFLAKE;
    let clock = ManualClock::new(s.epoch_ms() + 1_000);
    let mark = s
        .compose(Parts {
            time_ms: s.epoch_ms() + 1_000,
            node: 9,
            sequence: 3,
        })
        .unwrap();
    let mut g = Generator::new(&clock, s, 4, Policy::Borrow { max_ahead_ms: 100 }).unwrap();
    g.resume_after(mark).unwrap();
    let id = g.next().unwrap();
    assert!(id > mark);
    assert_eq!(s.decode(id).unwrap().sequence, 4);
    // The last sequence number of a tick, from a node above: the next tick's first.
    let mark = s
        .compose(Parts {
            time_ms: s.epoch_ms() + 1_000,
            node: 9,
            sequence: s.max_sequence(),
        })
        .unwrap();
    let mut g = Generator::new(&clock, s, 4, Policy::Borrow { max_ahead_ms: 100 }).unwrap();
    g.resume_after(mark).unwrap();
    let p = s.decode(g.next().unwrap()).unwrap();
    assert_eq!((p.time_ms, p.sequence), (s.epoch_ms() + 1_010, 0));
    // No ID of this node follows the last ID of the last tick.
    let last = s
        .compose(Parts {
            time_ms: s.last_ms(),
            node: s.max_node(),
            sequence: s.max_sequence(),
        })
        .unwrap();
    let mut g = Generator::new(&clock, s, 4, Policy::Borrow { max_ahead_ms: 100 }).unwrap();
    assert!(matches!(
        g.resume_after(last),
        Err(e) if e.kind() == snowdrift::ErrorKind::ResumeOutOfRange
    ));
}

#[test]
fn fill_spans_ticks_and_batches_stay_in_one() {
    let clock = ManualClock::new(T0).with_step(1);
    let mut g = Generator::new(&clock, tiny(), 2, Policy::DEFAULT).unwrap();
    let mut ids = [0u64; 10];
    assert_eq!(g.fill(&mut ids), Ok(10));
    assert!(ids.windows(2).all(|w| w[1] > w[0]));
    let empty = g.next_batch(0).unwrap();
    assert!(empty.is_empty());
    let batch = g.next_batch(100).unwrap();
    assert!(batch.first() > ids[9], "an empty batch takes nothing");
    assert!(batch.len() <= 4);
    let t = tiny().decode(batch.first()).unwrap().time_ms;
    assert!(
        batch
            .clone()
            .all(|id| tiny().decode(id).unwrap().time_ms == t)
    );
}

#[test]
fn bad_node_ids_are_rejected_with_the_range() {
    let clock = ManualClock::new(T0);
    let err = Generator::new(&clock, Layout::TWITTER, 1024, Policy::DEFAULT).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node id 1024 does not fit in 10 bits (max 1023)"
    );
}
