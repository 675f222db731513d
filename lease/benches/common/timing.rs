//! The benchmarks' timing: medians of many calls after a warm-up.
#![allow(dead_code)]

use std::time::Instant;

/// Calls timed per row.
pub const ROUND_TRIPS: usize = 300;

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// µs per call of `f`, median of [`ROUND_TRIPS`] after a warm-up.
pub fn per_call(mut f: impl FnMut()) -> f64 {
    for _ in 0..20 {
        f();
    }
    median(
        (0..ROUND_TRIPS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}
