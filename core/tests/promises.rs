//! The promises a generator keeps when used adversarially: scripted clocks, stale
//! readings, marks, fences and values at the edges of a layout. Each test is a path to a
//! duplicate, a broken promise or a misleading error that once existed.

// In wasm32 (wasm/core-tests) the tests run under wasm-bindgen-test.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

#[cfg(feature = "objectid")]
use snowdrift::ObjectIdGenerator;
use snowdrift::{
    Clock, ErrorKind, Field, Generator, IdGenerator, Layout, ManualClock, Parts, Policy,
};

const T0: u64 = 1_750_000_000_000;
const PER_TICK: usize = 4096; // Layout::DEFAULT's 12-bit sequence

/// A clock that returns scripted readings, then moves `step` ms every `every` reads from
/// the last scripted one.
struct Script {
    readings: RefCell<VecDeque<u64>>,
    last: Cell<u64>,
    after: Cell<u64>,
    step: u64,
    every: u64,
}

impl Script {
    fn new(readings: &[u64], step: u64, every: u64) -> Self {
        Script {
            readings: RefCell::new(readings.iter().copied().collect()),
            last: Cell::new(readings[0]),
            after: Cell::new(0),
            step,
            every,
        }
    }
    /// The reading the clock would give now, without counting as a read.
    fn peek(&self) -> u64 {
        self.readings
            .borrow()
            .front()
            .copied()
            .unwrap_or(self.last.get() + self.after.get() / self.every * self.step)
    }
    #[cfg(feature = "atomic")] // only the atomic generator's test scripts a second act
    fn then(&self, readings: &[u64]) {
        self.readings.borrow_mut().extend(readings);
        self.after.set(0);
    }
}

impl Clock for Script {
    fn now_ms(&self) -> u64 {
        if let Some(ms) = self.readings.borrow_mut().pop_front() {
            self.last.set(ms);
            return ms;
        }
        let n = self.after.get() + 1;
        self.after.set(n);
        self.last.get() + n / self.every * self.step
    }
}

fn all_increasing(ids: &[u64]) -> bool {
    ids.windows(2).all(|w| w[1] > w[0])
}

#[test]
fn switching_onto_a_used_node_issues_only_after_its_previous_holder() {
    // The previous holder of node 9 issued up to T0 + 5 s (a lease's notBefore says so);
    // this generator's clock stepped back to T0 - 3 s and it moves to node 9.
    let clock = ManualClock::new(T0);
    let mut previous = Generator::new(&clock, Layout::DEFAULT, 9, Policy::DEFAULT).unwrap();
    clock.set(T0 + 5_000);
    let theirs: Vec<u64> = (0..100).map(|_| previous.next().unwrap()).collect();
    let not_before = previous.issued_through_ms();
    clock.set(T0);
    let mut generator = Generator::new(&clock, Layout::DEFAULT, 3, Policy::SwitchNode).unwrap();
    generator.next().unwrap();
    clock.rewind(3_000);
    assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::SwitchNode));
    generator.switch_node(9, not_before).unwrap();
    for _ in 0..100 {
        let id = generator.next().unwrap();
        assert!(!theirs.contains(&id));
        assert!(Layout::DEFAULT.decode(id).unwrap().time_ms > not_before);
    }
}

#[test]
fn switching_to_the_node_already_held_is_refused_and_changes_nothing() {
    let clock = ManualClock::new(T0);
    let mut generator = Generator::new(&clock, Layout::DEFAULT, 3, Policy::SwitchNode).unwrap();
    let a = generator.next().unwrap();
    let err = generator.switch_node(3, 0).unwrap_err();
    assert_eq!((err.kind(), err.value()), (ErrorKind::SameNode, Some(3)));
    assert_eq!(
        err.to_string(),
        "node id 3 is the one this generator holds: switch to a node id it has not used"
    );
    // The state was kept: the next ID follows `a` instead of repeating it.
    assert_eq!(generator.next().unwrap(), a + 1);
}

#[test]
fn history_forgets_every_slot_at_or_below_a_mark_under_its_newest_tick() {
    let clock = ManualClock::new(T0);
    let mut generator = Generator::<_, 8>::with_history(&clock, Layout::DEFAULT, 1).unwrap();
    generator.next().unwrap(); // tick T0, with 4095 slots left in the ring
    clock.advance(10);
    generator.next().unwrap(); // tick T0 + 10, the newest
    let mark = T0 + 5; // below the newest tick, above the ring's T0
    generator.resume_after_ms(mark).unwrap();
    clock.rewind(10); // back to T0: its free slots are below the mark
    for _ in 0..10 {
        match generator.next() {
            Ok(id) => assert!(Layout::DEFAULT.decode(id).unwrap().time_ms > mark),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::ClockBackwards);
                assert!(e.behind_ms() > e.limit_ms());
            }
        }
    }
    // A mark inside a tick in the ring: the ring goes on above the mark only.
    let clock = ManualClock::new(T0);
    let mut generator = Generator::<_, 8>::with_history(&clock, Layout::DEFAULT, 1).unwrap();
    let first = generator.next().unwrap();
    clock.advance(10);
    generator.next().unwrap();
    generator.resume_after(first + 100).unwrap();
    clock.rewind(10);
    assert_eq!(generator.next().unwrap(), first + 101);
}

#[cfg(feature = "objectid")]
#[test]
fn objectids_never_repeat_when_a_second_holds_more_than_the_counter() {
    let clock = ManualClock::new(T0);
    let mut generator = ObjectIdGenerator::new(&clock, [1, 2, 3, 4, 5], 77);
    let first = generator.next().unwrap();
    for _ in 1..1 << 24 {
        generator.try_next().unwrap();
    }
    // The counter would wrap back to `first`'s: the second is full.
    assert_eq!(
        generator.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    let ticking = ManualClock::new(T0).with_step(1);
    let mut generator = ObjectIdGenerator::new(&ticking, [1, 2, 3, 4, 5], 77);
    let first_of_ticking = generator.next().unwrap();
    assert_eq!(first_of_ticking, first);
    for _ in 1..1 << 24 {
        generator.try_next().ok();
    }
    // next() waits for the next second instead.
    let later = generator.next().unwrap();
    assert_ne!(later, first);
    assert!(later.timestamp() > first.timestamp());
}

#[cfg(feature = "objectid")]
#[test]
fn objectids_keep_the_newest_second_when_the_clock_steps_back() {
    let clock = ManualClock::new(T0);
    let mut generator = ObjectIdGenerator::new(&clock, [9; 5], 0);
    let a = generator.next().unwrap();
    clock.rewind(3_600_000);
    let b = generator.next().unwrap();
    assert_eq!(b.timestamp(), a.timestamp());
    assert_ne!(a, b);
}

#[cfg(feature = "atomic")]
#[test]
fn a_stale_first_reading_does_not_shorten_a_wait() {
    use snowdrift::AtomicGenerator;
    // Call 1 reads T0 + 103. Call 2's first reading, T0, was taken before call 1 (a
    // preempted thread); its confirming reading is T0 + 100, a real 3 ms step back,
    // which Wait { 100 } rides out as the clock moves 1 ms per read.
    let clock = Script::new(&[T0 + 103, T0, T0 + 100], 1, 1);
    let generator = AtomicGenerator::new(
        &clock,
        Layout::DEFAULT,
        1,
        Policy::Wait { max_wait_ms: 100 },
    )
    .unwrap();
    let a = generator.next().unwrap();
    let b = generator.next().unwrap();
    assert!(b > a);
}

#[test]
fn a_clock_that_moves_on_after_a_step_back_is_not_stalled() {
    // The tick is used up; while the call waits for the next one the clock steps back
    // 500 ms and then moves on, 1 ms per 10,000 reads (5 million reads to catch up).
    let clock = Script::new(&[T0], 0, 1);
    let mut generator = Generator::new(
        &clock,
        Layout::DEFAULT,
        1,
        Policy::Wait { max_wait_ms: 1000 },
    )
    .unwrap();
    let ids: Vec<u64> = (0..PER_TICK).map(|_| generator.next().unwrap()).collect();
    let clock = Script::new(&[T0, T0 - 500], 1, 10_000);
    let mut generator = Generator::new(
        &clock,
        Layout::DEFAULT,
        1,
        Policy::Wait { max_wait_ms: 1000 },
    )
    .unwrap();
    generator.resume_after(ids[PER_TICK - 1]).unwrap();
    let id = generator.next().unwrap();
    assert!(id > ids[PER_TICK - 1]);
}

#[cfg(feature = "atomic")]
#[test]
fn a_stall_names_the_newest_reading() {
    use snowdrift::AtomicGenerator;
    let clock = Script::new(&[T0 + 5], 0, 1);
    let generator = AtomicGenerator::new(
        &clock,
        Layout::DEFAULT,
        1,
        Policy::Wait { max_wait_ms: 100 },
    )
    .unwrap();
    for _ in 0..PER_TICK {
        generator.next().unwrap(); // tick T0 + 5 used up
    }
    // A stale first reading, the confirming one (the newest), then a clock stuck 1 ms
    // behind it.
    clock.then(&[T0, T0 + 5, T0 + 4]);
    assert_eq!(
        generator.next().map_err(|e| (e.kind(), e.time_ms())),
        Err((ErrorKind::ClockStalled, Some(T0 + 5)))
    );
}

/// The restart recipe: persist now + 60 s; restart a second later; resume after it.
#[test]
fn the_restart_recipe_works_under_every_policy() {
    let persisted = T0 + 60_000;
    // `None`: a generator with a history ring.
    for policy in [
        Some(Policy::DEFAULT),
        Some(Policy::Fail),
        Some(Policy::SwitchNode),
        Some(Policy::Borrow { max_ahead_ms: 10 }),
        None,
    ] {
        // A clock moving 1 ms per 1,000 reads: about 4 ms per used-up tick.
        let clock = Script::new(&[T0 + 1_000], 1, 1_000);
        let mut plain;
        let mut ring;
        let generator: &mut dyn IdGenerator<Clock = &Script> = match policy {
            None => {
                ring = Generator::<_, 4>::with_history(&clock, Layout::DEFAULT, 2).unwrap();
                &mut ring
            }
            Some(policy) => {
                plain = Generator::new(&clock, Layout::DEFAULT, 2, policy).unwrap();
                &mut plain
            }
        };
        generator.resume_after_ms(persisted).unwrap();
        let mut ids = Vec::new();
        for _ in 0..20 * PER_TICK {
            let id = generator
                .next()
                .unwrap_or_else(|e| panic!("{policy:?}: {e}"));
            let t = Layout::DEFAULT.decode(id).unwrap().time_ms;
            // Above the mark, and never further ahead of the clock than the mark was
            // (Borrow adds its own 10 ms).
            assert!(t > persisted, "{policy:?}");
            assert!(t <= clock.peek() + 59_000 + 1 + 10, "{policy:?}: {t}");
            ids.push(id);
        }
        assert!(all_increasing(&ids), "{policy:?}");
    }
}

#[test]
fn a_resume_lead_ends_once_the_clock_has_caught_up() {
    let clock = ManualClock::new(T0);
    let mut generator = Generator::new(&clock, Layout::DEFAULT, 2, Policy::Fail).unwrap();
    generator.resume_after_ms(T0 + 60_000).unwrap();
    generator.next().unwrap();
    clock.advance(61_000); // caught up; the generator takes a tick of its own
    generator.next().unwrap();
    clock.rewind(30_000); // a real step back, within the old lead: reported
    assert_eq!(
        generator
            .next()
            .map_err(|e| (e.kind(), e.behind_ms(), e.limit_ms())),
        Err((ErrorKind::ClockBackwards, Some(30_000), Some(0)))
    );
}

#[test]
fn borrow_below_one_tick_waits_for_the_next_tick_instead_of_failing() {
    let layout = Layout::SONYFLAKE; // 10 ms ticks
    let clock = ManualClock::new(T0);
    let mut generator =
        Generator::new(&clock, layout, 1, Policy::Borrow { max_ahead_ms: 5 }).unwrap();
    for _ in 0..256 {
        generator.try_next().unwrap(); // an 8-bit sequence: 256 per tick
    }
    assert_eq!(
        generator.try_next().map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    let ticking = ManualClock::new(T0).with_step(1);
    let mut generator =
        Generator::new(&ticking, layout, 1, Policy::Borrow { max_ahead_ms: 5 }).unwrap();
    let ids: Vec<u64> = (0..1000).map(|_| generator.next().unwrap()).collect();
    assert!(all_increasing(&ids));
}

#[test]
fn a_batch_ending_at_the_largest_id_iterates_to_its_end() {
    let layout = Layout::DISCORD;
    let node = layout.node_from(31, 31).unwrap();
    let clock = ManualClock::new(layout.last_ms());
    let mut generator = Generator::new(&clock, layout, node, Policy::Fail).unwrap();
    let batch = generator.next_batch(4096).unwrap();
    assert_eq!(batch.len(), 4096);
    let ids: Vec<u64> = batch.collect();
    assert_eq!(ids.last(), Some(&u64::MAX));
    assert!(all_increasing(&ids));
    assert_eq!(
        generator.try_next_batch(1).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    clock.advance(1);
    assert!(matches!(generator.next_batch(1), Err(e) if e.field() == Some(Field::Time))); // used up: never wraps
}

#[test]
fn resume_errors_name_the_value_given() {
    let clock = ManualClock::new(T0);
    let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT).unwrap();
    let err = generator.resume_after_ms(5_000_000_000_000).unwrap_err();
    let last_start = Layout::DEFAULT.exhausts_at() - 1;
    assert_eq!(
        err.to_string(),
        format!(
            "no ID can follow time 5000000000000 ms (max {} ms)",
            last_start - 1
        )
    );
    // The last ID this node can issue: nothing follows it.
    let last = Layout::DEFAULT
        .compose(Parts {
            time_ms: Layout::DEFAULT.last_ms(),
            node: 1,
            sequence: 4095,
        })
        .unwrap();
    let err = generator.resume_after(last).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("no ID of this node can follow id {last} (max {})", last - 1)
    );
    assert!(generator.resume_after(last - 1).is_ok());
    // Errors change nothing.
    let mut fresh = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT).unwrap();
    fresh.resume_after_ms(5_000_000_000_000).unwrap_err();
    assert!(fresh.next().is_ok());
}

#[test]
fn a_fence_refuses_ids_at_or_past_it_and_changes_nothing() {
    let clock = ManualClock::new(T0);
    let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT).unwrap();
    generator.set_fence_ms(T0 + 10);
    let a = generator.next().unwrap();
    clock.advance(10);
    assert_eq!(
        generator
            .next()
            .map_err(|e| (e.kind(), e.time_ms(), e.fence_ms())),
        Err((ErrorKind::PastFence, Some(T0 + 10), Some(T0 + 10)))
    );
    assert_eq!(
        generator.try_next_batch(5).unwrap_err().to_string(),
        format!(
            "next ID at {} ms is not before the fence at {} ms",
            T0 + 10,
            T0 + 10
        )
    );
    generator.set_fence_ms(T0 + 20);
    let b = generator.next().unwrap();
    assert!(b > a);
    // Borrowed ticks are fenced too.
    let mut generator = Generator::new(
        &clock,
        Layout::DEFAULT,
        1,
        Policy::Borrow { max_ahead_ms: 100 },
    )
    .unwrap();
    generator.set_fence_ms(T0 + 12);
    let ids: Vec<u64> = (0..3 * PER_TICK)
        .map_while(|_| generator.next().ok())
        .collect();
    assert_eq!(ids.len(), 2 * PER_TICK); // ticks T0 + 10 and T0 + 11
    assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
}

#[test]
fn a_released_lease_hands_on_a_time_after_every_id_issued() {
    // What a node id lease's release passes to the next holder: every ID so far is at or
    // before `issued_through_ms`, and a successor resumed after it issues only later IDs,
    // on a layout with 10 ms ticks, with borrowed ticks and after a resume lead.
    let clock = ManualClock::new(T0);
    let layout = Layout::SONYFLAKE;
    let mut generator =
        Generator::new(&clock, layout, 9, Policy::Borrow { max_ahead_ms: 500 }).unwrap();
    assert!(generator.issued_through_ms() <= T0);
    generator.resume_after_ms(T0 + 25).unwrap();
    let mut ids = Vec::new();
    for step in 0..40u64 {
        ids.extend(generator.next_batch(200).unwrap());
        clock.advance(step % 3 * 10);
        let through = generator.issued_through_ms();
        let newest = ids
            .iter()
            .map(|&id| layout.decode(id).unwrap().time_ms)
            .max()
            .unwrap();
        assert!(
            newest <= through,
            "an ID at {newest} ms is after {through} ms"
        );
    }
    let mut next = Generator::new(&clock, layout, 9, Policy::DEFAULT).unwrap();
    next.resume_after_ms(generator.issued_through_ms()).unwrap();
    let first = next.next().unwrap();
    assert!(ids.iter().all(|&id| id < first));
}

#[test]
fn calls_between_two_ids_of_one_tick_take_effect_at_once() {
    // The second ID of a tick comes the quick way (the rest of the tick the first took):
    // a fence, a resume mark or a node switch set in between must still hold for it.
    let clock = ManualClock::new(T0);
    for policy in [Policy::DEFAULT, Policy::Fail] {
        let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, policy).unwrap();
        within_one_tick(&mut generator);
        generator.next().unwrap();
        generator.switch_node(3, T0 + 200).unwrap();
        let parts = Layout::DEFAULT.decode(generator.next().unwrap()).unwrap();
        assert_eq!(parts.node, 3);
        assert!(parts.time_ms > T0 + 200);
        #[cfg(feature = "atomic")]
        within_one_tick(
            &mut &snowdrift::AtomicGenerator::new(&clock, Layout::DEFAULT, 2, policy).unwrap(),
        );
    }
}

/// A fence and a resume mark set between IDs of one tick (the clock at `T0`).
fn within_one_tick(generator: &mut impl IdGenerator) {
    let a = generator.next().unwrap();
    assert_eq!(generator.issued_through_ms(), T0);
    generator.set_fence_ms(T0);
    assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
    generator.set_fence_ms(u64::MAX);
    let b = generator.next().unwrap();
    assert!(b > a);
    generator.resume_after_ms(T0 + 100).unwrap();
    let c = generator.next().unwrap();
    assert!(Layout::DEFAULT.decode(c).unwrap().time_ms > T0 + 100);
    assert_eq!(generator.issued_through_ms(), T0 + 101);
}
