//! The `fleet` test suite and benchmark: node id leases from Redis and PostgreSQL
//! (`lease/`, the npm package's `snowdrift/redis` and `snowdrift/postgres`), against
//! redis-server and PostgreSQL processes the tests start on 127.0.0.1 at free ports and
//! stop again.

use std::path::PathBuf;

use crate::util::{Result, cargo, ensure_apt, root, run_in};

/// Seconds each chaos run lasts.
const CHAOS_SECONDS: &str = "20";

/// The chaos runs: the store, what happens to it halfway, and the kind of each of the
/// four worker processes sharing a 3-bit space (tests/fleet/chaos.mjs).
const CHAOS_RUNS: &[(&str, &str, &str)] = &[
    ("redis", "restart", "node,node,node-ioredis,node-ioredis"),
    ("redis", "restart", "rust,rust,rust,rust"),
    ("redis", "restart", "node,rust,node-ioredis,rust"),
    ("postgres", "immediate", "node,node,node-client,node-client"),
    ("postgres", "immediate", "rust,rust,rust,rust"),
    ("postgres", "immediate", "node,rust,node-client,rust"),
    ("postgres", "restore", "rust,node,rust,node-client"),
];

fn fleet_dir() -> PathBuf {
    root().join("tests/fleet")
}

/// redis-server and redis-cli (the cluster tests create a cluster with it), PostgreSQL
/// (`lease/tests/postgres.rs` runs initdb, postgres, pg_isready, psql and pg_basebackup
/// from `pg_config --bindir`, which is not on PATH), and the npm package with its dev
/// tools (node-redis and ioredis among them).
pub fn setup() -> Result {
    ensure_apt(&[
        ("redis-server", "redis-server"),
        ("redis-tools", "redis-cli"),
        ("postgresql", "\"$(pg_config --bindir 2>/dev/null)/initdb\""),
    ])?;
    crate::npm::build()?;
    // The fleet tests import the package and the Redis clients from tests/js.
    crate::npm::link_test_modules(&fleet_dir())
}

/// `cargo xtask test fleet`: the Rust crate's tests, the Node tests, then the chaos runs.
pub fn test() -> Result {
    setup()?;
    // The Rust worker of the chaos runs.
    cargo(&[
        "build",
        "-p",
        "snowdrift-lease",
        "--release",
        "--example",
        "fleet_worker",
        "--features",
        "postgres",
    ])?;
    cargo(&["test", "-p", "snowdrift-lease", "--all-features"])?;
    run_in(
        &fleet_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=300000"],
        &[],
    )?;
    for (store, event, workers) in CHAOS_RUNS {
        let mut args = vec!["chaos.mjs", "--store", store, "--workers", workers];
        if *store == "postgres" {
            args.extend(["--event", event]);
        }
        args.extend(["--seconds", CHAOS_SECONDS]);
        run_in(&fleet_dir(), "node", &args, &[])?;
    }
    Ok(())
}

/// The lease rows of `cargo xtask bench`: Rust (lease/benches/lease.rs), Rust on
/// PostgreSQL (lease/benches/postgres.rs), then Node (tests/fleet/bench.mjs), each
/// against a server of its own.
pub fn bench() -> Result {
    setup()?;
    cargo(&["bench", "-p", "snowdrift-lease", "--bench", "lease"])?;
    cargo(&[
        "bench",
        "-p",
        "snowdrift-lease",
        "--features",
        "postgres",
        "--bench",
        "postgres",
    ])?;
    run_in(&fleet_dir(), "node", &["bench.mjs"], &[])
}
