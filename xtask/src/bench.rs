//! `cargo xtask bench`: every benchmark, each printing a table with ratios against peers
//! measured in the same run.

use crate::util::{cargo, Result};

pub fn run() -> Result {
    // The core against its peer crates (bench/benches/compare.rs).
    let core = cargo(&["bench", "-p", "snowdrift-bench", "--bench", "compare"]);
    // The npm package's benchmark runs even if another one failed.
    crate::npm::bench()?;
    core
}
