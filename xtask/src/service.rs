//! The `serve` test suite and benchmark: `snowdrift serve`, the npm package's ID service
//! over HTTP (`tests/serve/`), against redis-server and PostgreSQL processes the tests
//! start on 127.0.0.1 at free ports and stop again: its flags, tokens, limits, health,
//! metrics and shutdown (`serve.test.mjs`), and 20 clients for 10 s while the service is
//! killed twice and Redis restarted once (`chaos.test.mjs`).

use std::path::PathBuf;

use crate::util::{Result, root, run_in};

fn serve_dir() -> PathBuf {
    root().join("tests/serve")
}

/// The fleet suite's servers and package (redis-server, redis-cli, PostgreSQL, the npm
/// package with the Redis and PostgreSQL clients), which the command loads from the project
/// it runs in (`tests/js`'s node_modules, linked here).
fn setup() -> Result {
    crate::fleet::setup()?;
    crate::npm::link_test_modules(&serve_dir())
}

/// `cargo xtask test serve`.
pub fn test() -> Result {
    setup()?;
    run_in(
        &serve_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=120000"],
        &[],
    )
}

/// The ID service's rows of `cargo xtask bench` (`tests/serve/bench.mjs`).
pub fn bench() -> Result {
    setup()?;
    run_in(&serve_dir(), "node", &["bench.mjs"], &[])
}
