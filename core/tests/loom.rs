//! Model check of the atomic generator's compare-and-swap step with loom: every
//! interleaving of two threads taking IDs yields distinct IDs, increasing in each thread.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p snowdrift --features atomic --release --test loom`
//! (`cargo xtask test` does).
#![cfg(all(loom, feature = "atomic"))]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use snowdrift::{AtomicGenerator, Clock, Error, Layout, Policy};

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

#[test]
fn two_threads_with_a_moving_clock_never_share_an_id() {
    loom::model(|| {
        let clock = Ticking {
            now: AtomicU64::new(EPOCH),
            step: 1,
        };
        let gen = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let other = {
            let gen = gen.clone();
            thread::spawn(move || vec![gen.next().unwrap(), gen.next().unwrap()])
        };
        let mine = vec![gen.next().unwrap(), gen.next().unwrap()];
        let theirs = other.join().unwrap();
        let all: Vec<u64> = mine.iter().chain(&theirs).copied().collect();
        check(all, &[mine, theirs]);
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
        let gen = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let gen = gen.clone();
                thread::spawn(move || gen.try_next())
            })
            .collect();
        let mut results = vec![gen.try_next()];
        results.extend(handles.into_iter().map(|h| h.join().unwrap()));
        let ids: Vec<u64> = results.iter().filter_map(|r| r.ok()).collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(
            results
                .iter()
                .filter(|r| **r == Err(Error::WouldBlock))
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
        let gen = Arc::new(AtomicGenerator::new(clock, layout(), 2, Policy::Fail).unwrap());
        let other = {
            let gen = gen.clone();
            thread::spawn(move || gen.next_batch(2).unwrap().collect::<Vec<u64>>())
        };
        let mine = vec![gen.next().unwrap()];
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
        let gen = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        let mark = EPOCH + 50; // far above the clock
        let other = {
            let gen = gen.clone();
            thread::spawn(move || {
                gen.resume_after_ms(mark).unwrap();
                gen.next().unwrap()
            })
        };
        // Before the mark is seen: an ID of the clock's tick; after: above the mark. The
        // lead travels with the raised slot counter, so no caller mistakes the mark for a
        // step back (Policy::Fail would report it).
        let mine = gen.next().unwrap();
        let theirs = other.join().unwrap();
        let after = gen.next().unwrap();
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
        let gen = Arc::new(AtomicGenerator::new(clock, layout(), 1, Policy::Fail).unwrap());
        gen.set_fence_ms(EPOCH + 1_000);
        let other = {
            let gen = gen.clone();
            thread::spawn(move || [gen.next(), gen.next()])
        };
        gen.set_fence_ms(EPOCH + 12); // the lease ends: ticks from EPOCH + 12 on are refused
        let mine = gen.next();
        for r in other.join().unwrap().into_iter().chain([mine]) {
            match r {
                Ok(id) => assert!(layout().decode(id).unwrap().time_ms < EPOCH + 1_000),
                Err(e) => assert!(matches!(e, Error::PastFence { .. }), "{e:?}"),
            }
        }
        // Every call that starts after the fence moved back honours it.
        assert!(matches!(gen.next(), Err(Error::PastFence { .. })));
    });
}
