//! `cargo xtask test`: every suite, after installing what is missing.

use crate::util::{self, Result, cargo, cargo_bin, ensure_apt, ensure_targets, root, run_in};

/// Targets the no_std builds (and later the wasm and firmware suites) need.
pub const TARGETS: &[&str] = &[
    "wasm32-unknown-unknown",
    "thumbv6m-none-eabi",
    "thumbv7m-none-eabi",
    "thumbv7em-none-eabihf",
    "riscv32imc-unknown-none-elf",
];

/// A named suite.
type Suite = (&'static str, fn() -> Result);

pub fn run(args: &[String]) -> Result {
    let only = args.first().map(String::as_str);
    let suites: &[Suite] = &[
        ("setup", setup),
        ("lint", lint),
        ("docs", crate::docs::test),
        ("core", core_tests),
        ("vectors", vectors),
        ("loom", loom),
        ("stress", stress),
        ("fuzz", fuzz),
        ("no_std", no_std),
        ("wasm-core", wasm_core),
        ("firmware", firmware),
        ("npm", crate::npm::test),
        ("fleet", crate::fleet::test),
        ("edge", crate::edge::test),
        ("serve", crate::service::test),
        ("www", crate::www::test),
        ("newcomer", crate::newcomer::test),
    ];
    for (name, suite) in suites {
        if only.is_some_and(|o| o != *name) && *name != "setup" {
            continue;
        }
        eprintln!("\n== {name} ==");
        suite().map_err(|e| format!("suite {name}: {e}"))?;
    }
    eprintln!("\nall suites passed");
    Ok(())
}

fn setup() -> Result {
    ensure_targets(TARGETS)?;
    util::run("rustup", &["component", "add", "rustfmt", "clippy"])
}

fn lint() -> Result {
    lockfiles()?;
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ])?;
    lint_fuzz()?;
    lint_js()?;
    msrv()
}

/// The JS (the package's, its tests', the page's): formatted and linted by Biome, as
/// `biome.json` says, with the version pinned in `xtask/js/` (installed by `npm ci` when
/// missing). `xtask/js/node_modules/.bin/biome check --write` applies its formatting and
/// safe fixes.
fn lint_js() -> Result {
    crate::npm::ensure_tools_installed()?;
    let biome = crate::npm::tool("biome");
    run_in(&root(), crate::npm::path_str(&biome)?, &["ci", "."], &[])
}

/// Each published crate builds with the oldest Rust its manifest states (`rust-version`),
/// in a target directory of its own.
fn msrv() -> Result {
    for (package, manifest) in [
        ("snowdrift", "core/Cargo.toml"),
        ("snowdrift-lease", "lease/Cargo.toml"),
    ] {
        let version = rust_version(manifest)?;
        let installed = util::output("rustup", &["toolchain", "list"]).unwrap_or_default();
        if !installed
            .lines()
            .any(|l| l.starts_with(&format!("{version}-")))
        {
            util::run(
                "rustup",
                &["toolchain", "install", &version, "--profile", "minimal"],
            )?;
        }
        eprintln!("-- {package} with Rust {version}");
        run_in(
            &root(),
            "rustup",
            &[
                "run",
                &version,
                "cargo",
                "check",
                "-p",
                package,
                "--all-features",
                "--lib",
            ],
            &[("CARGO_TARGET_DIR", "target/msrv")],
        )?;
    }
    Ok(())
}

/// The `rust-version` a manifest states, its own or the workspace's.
fn rust_version(manifest: &str) -> Result<String> {
    let stated = |path: &str| -> Result<Option<String>> {
        let text = std::fs::read_to_string(root().join(path))
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        Ok(text
            .lines()
            .find_map(|l| l.strip_prefix("rust-version = \""))
            .and_then(|v| v.strip_suffix('"'))
            .map(str::to_string))
    };
    stated(manifest)?
        .or(stated("Cargo.toml")?)
        .ok_or_else(|| format!("no rust-version in {manifest} or Cargo.toml"))
}

/// The workspaces outside the main one (firmware, fuzz) keep their own Cargo.lock, which
/// their suites build `--locked`: a stale one fails here in seconds, not minutes in.
fn lockfiles() -> Result {
    for dir in ["embedded-example", "fuzz"] {
        let status = std::process::Command::new(cargo_bin())
            .args([
                "metadata",
                "--locked",
                "--format-version",
                "1",
                "--manifest-path",
            ])
            .arg(root().join(dir).join("Cargo.toml"))
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("cargo metadata: {e}"))?;
        if !status.success() {
            return Err(format!(
                "{dir}/Cargo.lock is out of date: run `cargo update -w` in {dir}"
            ));
        }
    }
    Ok(())
}

/// The fuzz crate is outside the workspace: formatted and linted on its own.
fn lint_fuzz() -> Result {
    let manifest = crate::fuzz::fuzz_dir().join("Cargo.toml");
    let manifest = manifest
        .to_str()
        .ok_or("the fuzz manifest path is not UTF-8")?;
    cargo(&["fmt", "--check", "--manifest-path", manifest])?;
    cargo(&[
        "clippy",
        "--manifest-path",
        manifest,
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])
}

/// Seconds each fuzz target runs in the test suite: about a minute for all of them.
const FUZZ_SECONDS: u64 = 8;

/// Every fuzz target: first the kept inputs of earlier findings, then a few seconds of
/// fuzzing from a copy of its committed corpus (so a test run never adds files to the
/// repository). Failures are listed after all targets ran; a new crashing input is in
/// `fuzz/artifacts/<target>/`.
fn fuzz() -> Result {
    crate::fuzz::setup()?;
    let scratch = std::env::temp_dir().join(format!("snowdrift-fuzz-{}", std::process::id()));
    let mut failed = Vec::new();
    for target in crate::fuzz::TARGETS {
        failed.extend(crate::fuzz::replay(target)?);
        let corpus = scratch.join(target);
        crate::fuzz::copy_dir(
            &crate::fuzz::fuzz_dir().join("corpus").join(target),
            &corpus,
        )?;
        let time = format!("-max_total_time={FUZZ_SECONDS}");
        // A hang fails the target after 30 s instead of running on.
        if let Err(e) = crate::fuzz::fuzz_run(target, &corpus, &[&time, "-timeout=30"]) {
            eprintln!("{e}");
            failed.push(target.to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "failed: {} (new crashing inputs in fuzz/artifacts/)",
            failed.join(", ")
        ))
    }
}

fn core_tests() -> Result {
    // What a contributor types, with default features, then everything.
    cargo(&["test", "-p", "snowdrift"])?;
    cargo(&["test", "-p", "snowdrift", "--all-features"])?;
    // The crate must also work without std.
    cargo(&["test", "-p", "snowdrift", "--no-default-features", "--lib"])
}

fn vectors() -> Result {
    // The vectors come from an independent Python implementation; check they are current.
    util::ensure_python_packages()?;
    util::run("python3", &["tests/vectors/generate.py", "--check"])
}

/// `cargo test` of one release-built integration test of the core with `atomic`.
fn release_test(test: &str, extra: &[&str], env: &[(&str, &str)]) -> Result {
    let mut args = vec![
        "test",
        "-p",
        "snowdrift",
        "--features",
        "atomic",
        "--release",
        "--test",
        test,
    ];
    args.extend(extra);
    run_in(&root(), &cargo_bin(), &args, env)
}

fn loom() -> Result {
    // Its own target dir: `--cfg loom` rebuilds every dependency.
    release_test(
        "loom",
        &["--target-dir", "target/loom"],
        &[("RUSTFLAGS", "--cfg loom"), ("LOOM_MAX_PREEMPTIONS", "3")],
    )
}

fn stress() -> Result {
    release_test("stress", &["--", "--include-ignored"], &[])
}

fn no_std() -> Result {
    // (features, target): the bare core on each kind of target, the atomic generator on
    // a core with 32-bit atomics only, and sealing (AES in software) on the smallest core.
    for (features, target) in [
        ("", "thumbv6m-none-eabi"),
        ("", "riscv32imc-unknown-none-elf"),
        ("", "wasm32-unknown-unknown"),
        ("atomic", "thumbv7em-none-eabihf"),
        ("seal", "thumbv6m-none-eabi"),
    ] {
        cargo(&[
            "build",
            "-p",
            "snowdrift",
            "--no-default-features",
            "--features",
            features,
            "--target",
            target,
        ])?;
    }
    Ok(())
}

/// The core's integration tests inside wasm32 (wasm/core-tests), with wasm-bindgen-test:
/// in Node, then in headless Chromium (through chromedriver, served from 127.0.0.1).
fn wasm_core() -> Result {
    ensure_apt(&[
        ("chromium", "chromium"),
        ("chromium-driver", "chromedriver"),
    ])?;
    crate::npm::ensure_wasm_bindgen()?;
    let args = [
        "test",
        "-p",
        "snowdrift-core-tests",
        "--target",
        "wasm32-unknown-unknown",
        "--test",
        "core",
    ];
    // The runner, wasm-bindgen-test-runner, is set in .cargo/config.toml.
    eprintln!("in Node:");
    run_in(&root(), &cargo_bin(), &args, &[])?;
    eprintln!("in headless Chromium:");
    run_in(
        &root(),
        &cargo_bin(),
        &args,
        &[
            ("WASM_BINDGEN_USE_BROWSER", "1"),
            ("CHROMEDRIVER", "/usr/bin/chromedriver"),
        ],
    )
}

fn firmware() -> Result {
    crate::firmware::setup()?;
    let dir = snowdrift_firmware_host::firmware_dir();
    let cargo_path = cargo_bin();
    run_in(&dir, &cargo_path, &["fmt", "--check"], &[])?;
    for board in snowdrift_firmware_host::BOARDS {
        run_in(
            &dir,
            &cargo_path,
            &[
                "clippy",
                "--release",
                "--locked",
                "--target",
                board.target,
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )?;
    }
    // Boots each firmware twice under QEMU and checks every ID it printed
    // (embedded-example/host/tests/qemu.rs).
    cargo(&["test", "-p", "snowdrift-firmware-host", "--", "--nocapture"])
}
