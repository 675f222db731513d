//! Many threads, one lock-free generator, the real clock: zero duplicates. And a
//! `CounterClock` read by threads that yield between the raw read and the extension.
#![cfg(feature = "atomic")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::thread;

use snowdrift::{AtomicGenerator, CounterClock, Layout, MonotonicClock, Policy};

const THREADS: usize = 2;
const PER_THREAD: usize = 5_000_000;

#[test]
#[ignore = "10M IDs: run in release by `cargo xtask test`"]
fn two_threads_take_five_million_ids_each_without_a_duplicate() {
    let generator = Arc::new(
        AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 5, Policy::DEFAULT).unwrap(),
    );
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(
                        generator
                            .next()
                            .expect("the monotonic clock never goes back"),
                    );
                }
                ids
            })
        })
        .collect();
    let per_thread: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for ids in &per_thread {
        assert!(
            ids.windows(2).all(|w| w[1] > w[0]),
            "IDs of one thread must increase"
        );
    }
    let mut all: Vec<u64> = per_thread.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), THREADS * PER_THREAD, "duplicates found");
}

#[test]
fn batches_and_single_ids_from_threads_do_not_overlap() {
    let generator = Arc::new(
        AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 5, Policy::DEFAULT).unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let generator = Arc::clone(&generator);
            thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..2_000 {
                    if t % 2 == 0 {
                        ids.push(generator.next().unwrap());
                    } else {
                        ids.extend(generator.next_batch(37).unwrap());
                    }
                }
                ids
            })
        })
        .collect();
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
}

#[test]
fn counter_clock_readers_preempted_after_the_raw_read_stay_within_the_true_count() {
    // An 8-bit counter; its true count. Readers yield right after the raw read, so other
    // threads extend the clock before they do.
    let count = Arc::new(AtomicU64::new(0));
    let raw = Arc::clone(&count);
    let clock = Arc::new(CounterClock::new(
        move || {
            let value = raw.load(SeqCst) & 0xff;
            thread::yield_now();
            value
        },
        8,
        1000,
        0,
    ));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (count, clock, done) = (count.clone(), clock.clone(), done.clone());
            thread::spawn(move || {
                let mut last = 0;
                for _ in 0..1_000_000 {
                    if done.load(SeqCst) {
                        break;
                    }
                    let before = count.load(SeqCst);
                    let ticks = clock.ticks();
                    let after = count.load(SeqCst);
                    assert!(ticks <= after, "reading {ticks} ahead of the count {after}");
                    assert!(ticks >= before, "reading {ticks} behind the count {before}");
                    assert!(ticks >= last, "went back from {last} to {ticks}");
                    last = ticks;
                }
            })
        })
        .collect();
    // The timer: steps of up to half a wrap, each followed by a reading, so the newest
    // extension is never more than half a wrap behind the counter.
    for i in 0..20_000u64 {
        let step = (i * 37) % 129;
        let now = count.fetch_add(step, SeqCst) + step;
        assert_eq!(clock.ticks(), now);
    }
    done.store(true, SeqCst);
    for reader in readers {
        reader.join().unwrap();
    }
}
