//! Many threads, one lock-free generator, the real clock: zero duplicates.
#![cfg(feature = "atomic")]

use std::sync::Arc;
use std::thread;

use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};

const THREADS: usize = 2;
const PER_THREAD: usize = 5_000_000;

#[test]
#[ignore = "10M IDs: run in release by `cargo xtask test`"]
fn two_threads_take_five_million_ids_each_without_a_duplicate() {
    let gen = Arc::new(
        AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 5, Policy::DEFAULT).unwrap(),
    );
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let gen = Arc::clone(&gen);
            thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(gen.next().expect("the monotonic clock never goes back"));
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
    let gen = Arc::new(
        AtomicGenerator::new(MonotonicClock::new(), Layout::DEFAULT, 5, Policy::DEFAULT).unwrap(),
    );
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let gen = Arc::clone(&gen);
            thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..2_000 {
                    if t % 2 == 0 {
                        ids.push(gen.next().unwrap());
                    } else {
                        ids.extend(gen.next_batch(37).unwrap());
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
