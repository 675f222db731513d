//! `cargo xtask bench`: every benchmark, each printing a table with ratios against peers
//! measured in the same run.

use crate::util::{cargo, Result};

pub fn run() -> Result {
    cargo(&[
        "bench",
        "-p",
        "snowdrift",
        "--features",
        "atomic",
        "--bench",
        "compare",
    ])?;
    crate::npm::bench()
}
