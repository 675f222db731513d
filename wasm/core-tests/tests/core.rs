//! The core's own integration tests, unchanged, inside wasm32: scenario tests with a
//! clock stepped by hand, property tests, the shared vectors and the generators' promises.
//! Each file names `wasm_bindgen_test` as its `test` attribute when built for wasm32.
//!
//! `cargo xtask test wasm-core` runs them in Node, then in headless Chromium. By hand:
//! `cargo test -p snowdrift-core-tests --target wasm32-unknown-unknown` (the runner is set
//! in .cargo/config.toml; add `WASM_BINDGEN_USE_BROWSER=1` and
//! `CHROMEDRIVER=/usr/bin/chromedriver` for Chromium).

#![cfg(target_arch = "wasm32")]

#[path = "../../../core/tests/error_values.rs"]
mod error_values;
#[path = "../../../core/tests/policies.rs"]
mod policies;
#[path = "../../../core/tests/promises.rs"]
mod promises;
#[path = "../../../core/tests/properties.rs"]
mod properties;
#[path = "../../../core/tests/stats.rs"]
mod stats;
#[path = "../../../core/tests/vectors.rs"]
mod vectors;
