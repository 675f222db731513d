//! snowdrift's benchmark against its peer crates lives in `benches/compare.rs`; run it
//! with `cargo xtask bench` (or `cargo bench -p snowdrift-bench --bench compare`).
