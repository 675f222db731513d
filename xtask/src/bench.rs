//! `cargo xtask bench`: every benchmark, each printing a table with ratios against peers
//! measured in the same run.

use crate::util::{Result, cargo};

pub fn run() -> Result {
    // The core against its peer crates (bench/benches/compare.rs).
    let core = cargo(&["bench", "-p", "snowdrift-bench", "--bench", "compare"]);
    // The npm package's and the leases' benchmarks run even if another one failed.
    let npm = crate::npm::bench();
    let fleet = crate::fleet::bench();
    let edge = crate::edge::bench();
    core.and(npm).and(fleet).and(edge)
}
