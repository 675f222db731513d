//! The binding's tests in Node (`wasm-bindgen-test-runner`).
mod common;
