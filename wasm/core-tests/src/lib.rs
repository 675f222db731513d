//! No code of its own: `tests/core.rs` compiles the core's integration tests for wasm32,
//! where `cargo xtask test wasm-core` runs them with wasm-bindgen-test in Node and in
//! headless Chromium.
