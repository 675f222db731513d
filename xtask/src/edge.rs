//! The `edge` test suite: the lease store of `snowdrift/cloudflare` (a Durable Object on
//! SQLite storage) in workerd through Miniflare, called by client workers in their own
//! isolates; restarted on its persisted storage, killed, and wiped; its Workers client,
//! leasing per isolate while isolates are recycled; and `snowdrift/http`'s lease handler,
//! in Node over a store in memory (`http.test.mjs`) and in Workers over the Durable
//! Object (`http-worker.test.mjs`) (`tests/edge/`).

use std::path::PathBuf;

use crate::util::{Result, root, run_in};

fn edge_dir() -> PathBuf {
    root().join("tests/edge")
}

/// Builds the package and links `tests/edge/node_modules` to `tests/js/node_modules`
/// (Miniflare and the package).
fn setup() -> Result {
    crate::npm::build()?;
    crate::npm::link_test_modules(&edge_dir())
}

/// The Workers rows of `cargo xtask bench` (`tests/edge/bench.mjs`).
pub fn bench() -> Result {
    setup()?;
    run_in(&edge_dir(), "node", &["bench.mjs"], &[])
}

/// `cargo xtask test edge`: builds the package, then runs the Node tests of `tests/edge/`.
pub fn test() -> Result {
    setup()?;
    run_in(
        &edge_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=120000"],
        &[],
    )
}
