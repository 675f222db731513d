//! The binding's tests in headless Chromium (`wasm-bindgen-test-runner` with
//! `CHROMEDRIVER` set).
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
mod common;
