//! Model check of the atomic generator with loom, both of its ways to take an ID (the
//! compare-and-swap that takes a tick, and the `fetch_add` that counts in a tick already
//! taken, racing tick changes, used-up ticks, fences and `stop`): every interleaving of
//! two threads taking IDs yields distinct IDs, increasing in each thread, and `stop` hands
//! on a time at or after every ID issued, whatever calls were in flight.
//! And of `CounterClock`'s extension: a reader preempted anywhere (between its raw read of
//! the counter and its extension above all) by threads that advance the counter and read
//! the clock is never ahead of the counter and never behind an extension made before it.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p snowdrift --features atomic --release --test loom`
//! (`cargo xtask test` does).
#![cfg(all(loom, feature = "atomic"))]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use snowdrift::{AtomicGenerator, Clock, CounterClock, ErrorKind, Layout, Policy};

const EPOCH: u64 = 1_700_000_000_000;

/// A clock that advances by `step` ms on every read (0: frozen).
struct Ticking {
    now: AtomicU64,
    step: u64,
}

impl Clock for Ticking {
    fn now_ms(&self) -> u64 {
        self.now.fetch_add(self.step, Ordering::Relaxed)
    }
}

/// A clock that moves 1 ms every `reads` reads: several calls see one tick, so the
/// `fetch_add` in an open tick races the compare-and-swap of the next one.
struct Slow {
    reads: AtomicU64,
    per_ms: u64,
}

impl Clock for Slow {
    fn now_ms(&self) -> u64 {
        EPOCH + 10 + self.reads.fetch_add(1, Ordering::Relaxed) / self.per_ms
    }
}

fn frozen() -> Ticking {
    Ticking {
        now: AtomicU64::new(EPOCH + 10),
        step: 0,
    }
}

/// Two IDs per tick, so the tick boundary is inside the model.
fn layout() -> Layout {
    Layout::builder()
        .time_bits(20)
        .node_bits(2)
        .sequence_bits(1)
        .epoch_ms(EPOCH)
        .build()
        .unwrap()
}

fn check(mut all: Vec<u64>, per_thread: &[Vec<u64>]) {
    for ids in per_thread {
        assert!(
            ids.windows(2).all(|w| w[1] > w[0]),
            "not increasing within a thread: {ids:?}"
        );
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicate ID");
}

/// Two threads take two IDs each from one generator on `clock` (policy `Fail`): none
/// repeated, each thread's increasing.
fn two_threads_two_ids_each<C: Clock + Send + Sync + 'static>(clock: C) {
    let generator = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
    let other = {
        let generator = generator.clone();
        thread::spawn(move || vec![generator.next().unwrap(), generator.next().unwrap()])
    };
    let mine = vec![generator.next().unwrap(), generator.next().unwrap()];
    let theirs = other.join().unwrap();
    let all: Vec<u64> = mine.iter().chain(&theirs).copied().collect();
    check(all, &[mine, theirs]);
}

#[test]
fn two_threads_with_a_moving_clock_never_share_an_id() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH),
            step: 1,
        };
        two_threads_two_ids_each(clock);
    });
}

#[test]
fn a_full_tick_is_shared_out_exactly_once() {
    loom::model(|| {
        // Frozen clock, two IDs per tick, three takers: exactly one would block.
        let clock = Ticking {
            now: AtomicU64::new(EPOCH),
            step: 0,
        };
        let generator = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let generator = generator.clone();
                thread::spawn(move || generator.try_next())
            })
            .collect();
        let mut results = vec![generator.try_next()];
        results.extend(handles.into_iter().map(|h| h.join().unwrap()));
        let ids: Vec<u64> = results.iter().filter_map(|r| r.ok()).collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(
            results
                .iter()
                .filter(|r| matches!(r, Err(e) if e.kind() == ErrorKind::WouldBlock))
                .count(),
            1
        );
        check(ids, &[]);
    });
}

#[test]
fn batches_and_single_ids_do_not_overlap() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH),
            step: 1,
        };
        let generator = Arc::new(AtomicGenerator::new(clock, layout(), 2, Policy::Fail).unwrap());
        let other = {
            let generator = generator.clone();
            thread::spawn(move || generator.next_batch(2).unwrap().collect::<Vec<u64>>())
        };
        let mine = vec![generator.next().unwrap()];
        let theirs = other.join().unwrap();
        let all: Vec<u64> = mine.iter().chain(&theirs).copied().collect();
        check(all, &[mine, theirs]);
    });
}

#[test]
fn a_resume_mark_above_the_clock_holds_for_every_thread() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH),
            step: 1,
        };
        let generator = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let mark = EPOCH + 50; // far above the clock
        let other = {
            let generator = generator.clone();
            thread::spawn(move || {
                generator.resume_after_ms(mark).unwrap();
                generator.next().unwrap()
            })
        };
        // Before the mark is seen: an ID of the clock's tick; after: above the mark. The
        // lead travels with the raised slot counter, so no caller mistakes the mark for a
        // step back (Policy::Fail would report it).
        let mine = generator.next().unwrap();
        let theirs = other.join().unwrap();
        let after = generator.next().unwrap();
        assert!(layout().decode(theirs).unwrap().time_ms > mark);
        assert!(layout().decode(after).unwrap().time_ms > mark);
        check(vec![mine, theirs, after], &[vec![mine, after]]);
    });
}

#[test]
fn a_fence_set_by_one_thread_stops_the_others() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH + 10),
            step: 1,
        };
        let generator = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        generator.set_fence_ms(EPOCH + 1_000);
        let other = {
            let generator = generator.clone();
            thread::spawn(move || [generator.next(), generator.next()])
        };
        generator.set_fence_ms(EPOCH + 12); // the lease ends: ticks from EPOCH + 12 on are refused
        let mine = generator.next();
        for r in other.join().unwrap().into_iter().chain([mine]) {
            match r {
                Ok(id) => assert!(layout().decode(id).unwrap().time_ms < EPOCH + 1_000),
                Err(e) => assert_eq!(e.kind(), ErrorKind::PastFence, "{e:?}"),
            }
        }
        // Every call that starts after the fence moved back honours it.
        assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
    });
}

#[test]
fn stop_returns_a_time_at_or_after_every_id_any_thread_issued() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH + 10),
            step: 1,
        };
        let generator = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let other = {
            let generator = generator.clone();
            thread::spawn(move || [generator.next(), generator.next()])
        };
        // A lease's release: stop the generator, hand on how far it issued.
        let through = generator.stop();
        let issued: Vec<u64> = other.join().unwrap().into_iter().flatten().collect();
        for id in issued {
            let time = layout().decode(id).unwrap().time_ms;
            assert!(
                time <= through,
                "ID at {time} ms after the hand-on at {through} ms"
            );
        }
        assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
    });
}

#[test]
fn counting_in_an_open_tick_races_the_next_tick_without_sharing_an_id() {
    loom::model(|| {
        let clock = Slow {
            reads: AtomicU64::new(0),
            per_ms: 3,
        };
        two_threads_two_ids_each(clock);
    });
}

#[test]
fn counting_in_borrowed_ticks_stays_within_the_bound() {
    loom::model(|| {
        // Frozen clock, two IDs per tick: six IDs need two ticks ahead of the clock, the
        // bound; each borrowed tick is taken once and then counted in.
        let generator = Arc::new(
            AtomicGenerator::new(frozen(), layout(), 1, Policy::Borrow { max_ahead_ms: 2 })
                .unwrap(),
        );
        let other = {
            let generator = generator.clone();
            thread::spawn(move || {
                (0..3)
                    .map(|_| generator.try_next().unwrap())
                    .collect::<Vec<_>>()
            })
        };
        let mine: Vec<u64> = (0..3).map(|_| generator.try_next().unwrap()).collect();
        let theirs = other.join().unwrap();
        let all: Vec<u64> = mine.iter().chain(&theirs).copied().collect();
        for &id in &all {
            assert!(layout().decode(id).unwrap().time_ms <= EPOCH + 10 + 2);
        }
        check(all, &[mine, theirs]);
        // The bound is reached: the next call would wait.
        let err = generator.try_next().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock);
    });
}

#[test]
fn stop_covers_the_calls_counting_in_the_open_tick() {
    loom::model(|| {
        let layout = Layout::builder()
            .time_bits(20)
            .node_bits(2)
            .sequence_bits(2)
            .epoch_ms(EPOCH)
            .build()
            .unwrap();
        let generator = Arc::new(AtomicGenerator::new(frozen(), layout, 1, Policy::Fail).unwrap());
        let first = generator.next().unwrap(); // takes the tick: the rest is counted
        let other = {
            let generator = generator.clone();
            thread::spawn(move || [generator.next(), generator.next()])
        };
        let through = generator.stop();
        assert!(layout.decode(first).unwrap().time_ms <= through);
        for r in other.join().unwrap() {
            match r {
                Ok(id) => assert!(layout.decode(id).unwrap().time_ms <= through),
                Err(e) => assert_eq!(e.kind(), ErrorKind::PastFence, "{e:?}"),
            }
        }
        assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
    });
}

#[test]
fn a_fence_moved_back_stops_the_counting_of_every_later_call() {
    loom::model(|| {
        let layout = Layout::builder()
            .time_bits(20)
            .node_bits(2)
            .sequence_bits(2)
            .epoch_ms(EPOCH)
            .build()
            .unwrap();
        let generator = Arc::new(AtomicGenerator::new(frozen(), layout, 1, Policy::Fail).unwrap());
        generator.next().unwrap(); // the tick is open
        let other = {
            let generator = generator.clone();
            thread::spawn(move || {
                generator.set_fence_ms(EPOCH);
                generator.next()
            })
        };
        let mine = generator.next();
        assert!(matches!(other.join().unwrap(), Err(e) if e.kind() == ErrorKind::PastFence));
        if let Err(e) = mine {
            assert_eq!(e.kind(), ErrorKind::PastFence);
        }
        assert!(matches!(generator.next(), Err(e) if e.kind() == ErrorKind::PastFence));
    });
}

/// A 3-bit counter (a wrap every 8 counts) and the true count behind it, shared through a
/// loom atomic, with a `CounterClock` over it.
fn counter_clock() -> (Arc<AtomicU64>, Arc<CounterClock<impl Fn() -> u64>>) {
    let count = Arc::new(AtomicU64::new(0));
    let raw = count.clone();
    let clock = CounterClock::new(move || raw.load(Ordering::Relaxed) & 0b111, 3, 1000, 0);
    (count, Arc::new(clock))
}

/// Steps of at most half a wrap, each followed by a reading, like a timer interrupt.
/// Each reading lies between the true count right after the step and the true count
/// after the reading (the same count when no other thread advances the counter).
fn advance_and_read(
    count: &AtomicU64,
    clock: &CounterClock<impl Fn() -> u64>,
    steps: &[u64],
) -> Vec<u64> {
    let mut readings = Vec::new();
    for &step in steps {
        let before = count.fetch_add(step, Ordering::Relaxed) + step;
        readings.push(read_since(before, count, clock));
    }
    assert!(
        readings.windows(2).all(|w| w[1] >= w[0]),
        "readings went back: {readings:?}"
    );
    readings
}

/// A reading, checked against the true count `before` it and the true count after it.
fn read_since(before: u64, count: &AtomicU64, clock: &CounterClock<impl Fn() -> u64>) -> u64 {
    let ticks = clock.ticks();
    let after = count.load(Ordering::Relaxed);
    assert!(
        ticks <= after,
        "reading {ticks} ahead of the counter's {after}"
    );
    assert!(
        ticks >= before,
        "reading {ticks} behind the counter's {before} before it"
    );
    ticks
}

#[test]
fn a_counter_clock_reader_preempted_by_an_advancing_thread_stays_within_the_true_count() {
    loom::model(|| {
        let (count, clock) = counter_clock();
        let handler = {
            let (count, clock) = (count.clone(), clock.clone());
            // 3 + 3 + 2: the counter wraps once; its readings are exact.
            thread::spawn(move || advance_and_read(&count, &clock, &[3, 3, 2]))
        };
        let first = read_since(count.load(Ordering::Relaxed), &count, &clock);
        let second = read_since(count.load(Ordering::Relaxed), &count, &clock);
        assert!(
            second >= first,
            "the reader went back from {first} to {second}"
        );
        let handled = handler.join().unwrap();
        assert_eq!(handled, [3, 6, 8]);
        // After the handler's extensions: exact, so not behind any of them.
        assert_eq!(clock.ticks(), 8);
    });
}

#[test]
fn a_counter_clock_reader_preempted_by_two_advancing_threads_stays_within_the_true_count() {
    loom::model(|| {
        let (count, clock) = counter_clock();
        let handlers: Vec<_> = (0..2)
            .map(|_| {
                let (count, clock) = (count.clone(), clock.clone());
                // 2 + 2 from each: the newest extension is at most 4 counts (half a wrap)
                // behind the counter; the counter wraps once.
                thread::spawn(move || advance_and_read(&count, &clock, &[2, 2]))
            })
            .collect();
        read_since(count.load(Ordering::Relaxed), &count, &clock);
        for handler in handlers {
            handler.join().unwrap();
        }
        // After every extension: exact.
        assert_eq!(clock.ticks(), 8);
    });
}
