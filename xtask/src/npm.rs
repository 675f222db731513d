//! `cargo xtask npm`: builds the `snowdrift` npm package into `wasm/pkg/`, and the `npm`
//! test suite and JS benchmark that run against it.
//!
//! The package is a release build of the `snowdrift-wasm` crate, passed through
//! `wasm-bindgen` twice (`--target nodejs` for Node, Deno and Bun; `--target web` for
//! browsers and workerd) and `wasm-opt -Oz` (npm `binaryen`), plus the hand-written files
//! in `wasm/js/`: the entry points, the types, the `snowdrift` command and package.json.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{self, cargo, ensure_apt, ensure_targets, output, root, run_in, Result};

/// Must equal the `wasm-bindgen` version pinned in `wasm/Cargo.toml`.
const WASM_BINDGEN: &str = "0.2.130";

fn js_dir() -> PathBuf {
    root().join("tests/js")
}

fn pkg_dir() -> PathBuf {
    root().join("wasm/pkg")
}

/// Installs what building the package needs, skipping what is there.
fn ensure_tools() -> Result {
    ensure_targets(&["wasm32-unknown-unknown"])?;
    let have = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) != Some(WASM_BINDGEN) {
        util::cargo(&[
            "install",
            "wasm-bindgen-cli",
            "--version",
            WASM_BINDGEN,
            "--force",
        ])?;
    }
    ensure_node_modules()
}

/// Installs tests/js/node_modules when it is missing or older than the lockfile.
fn ensure_node_modules() -> Result {
    let dir = js_dir();
    let stamp = dir.join("node_modules/.package-lock.json");
    let lock = dir.join("package-lock.json");
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&stamp), modified(&lock)) {
        (Some(s), Some(l)) => s >= l,
        _ => false,
    };
    if !fresh {
        // `npm install` from the lockfile rather than `npm ci`: the lockfile lacks the
        // other platforms' optional binaries (deno's), which `npm ci` rejects as out of
        // sync. `--no-save` leaves package.json and the lockfile untouched.
        run_in(
            &dir,
            "npm",
            &["install", "--no-save", "--no-audit", "--no-fund"],
            &[],
        )?;
    }
    // The tests import the package by its name, through its `exports`.
    let link = dir.join("node_modules/snowdrift");
    if fs::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(pkg_dir(), &link)
            .map_err(|e| format!("cannot link {}: {e}", link.display()))?;
    }
    Ok(())
}

/// `cargo xtask npm`.
pub fn build() -> Result {
    ensure_tools()?;
    cargo(&[
        "build",
        "-p",
        "snowdrift-wasm",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "wasm-release",
        "--no-default-features",
    ])?;
    let wasm = root().join("target/wasm32-unknown-unknown/wasm-release/snowdrift_wasm.wasm");
    let pkg = pkg_dir();
    if pkg.exists() {
        fs::remove_dir_all(&pkg).map_err(|e| format!("cannot clear {}: {e}", pkg.display()))?;
    }
    let wasm_opt = js_dir().join("node_modules/.bin/wasm-opt");
    for (target, dir) in [("nodejs", "node"), ("web", "web")] {
        let out = pkg.join(dir);
        util::run(
            "wasm-bindgen",
            &[
                "--target",
                target,
                "--out-dir",
                path_str(&out)?,
                "--out-name",
                "snowdrift",
                "--no-typescript",
                path_str(&wasm)?,
            ],
        )?;
        let bg = out.join("snowdrift_bg.wasm");
        util::run(
            path_str(&wasm_opt)?,
            &[
                "-Oz",
                "--enable-bulk-memory",
                "--enable-nontrapping-float-to-int",
                "--enable-sign-ext",
                "--enable-reference-types",
                "--enable-multivalue",
                "--enable-mutable-globals",
                path_str(&bg)?,
                "-o",
                path_str(&bg)?,
            ],
        )?;
    }
    // The web glue and the JS snippets of both builds are ES modules; say so for tools
    // that go by package.json (the Node glue loads its snippets with require(esm)).
    for dir in ["web", "node/snippets"] {
        write(
            &pkg.join(dir).join("package.json"),
            "{ \"type\": \"module\" }\n",
        )?;
    }
    copy_dir(&root().join("wasm/js"), &pkg)?;
    fs::copy(root().join("wasm/README.md"), pkg.join("README.md"))
        .map_err(|e| format!("cannot copy README: {e}"))?;
    eprintln!("npm package built in {}", pkg.display());
    Ok(())
}

/// The `npm` test suite: wasm-bindgen tests in Node and headless Chromium, then the JS
/// tests (API, vectors, errors, clock policies, smoke test in every runtime, duplicates).
pub fn test() -> Result {
    ensure_apt(&[
        ("chromium", "chromium"),
        ("chromium-driver", "chromedriver"),
    ])?;
    build()?;
    let runner = [(
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
        "wasm-bindgen-test-runner",
    )];
    let test = |name: &str, extra: &[(&str, &str)]| {
        let env: Vec<(&str, &str)> = runner.iter().chain(extra).copied().collect();
        run_in(
            &root(),
            &util::cargo_bin(),
            &[
                "test",
                "-p",
                "snowdrift-wasm",
                "--target",
                "wasm32-unknown-unknown",
                "--test",
                name,
            ],
            &env,
        )
    };
    test("node", &[])?;
    test("browser", &[("CHROMEDRIVER", "/usr/bin/chromedriver")])?;
    run_in(
        &js_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=600000"],
        &[("CHROMIUM", "/usr/bin/chromium")],
    )
}

/// The JS benchmark (one Node process), run by `cargo xtask bench`.
pub fn bench() -> Result {
    build()?;
    run_in(&js_dir(), "node", &["bench.mjs"], &[])
}

fn path_str(p: &Path) -> Result<&str> {
    p.to_str()
        .ok_or_else(|| format!("path is not UTF-8: {}", p.display()))
}

fn write(path: &Path, text: &str) -> Result {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result {
    let entries = fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            fs::create_dir_all(&dst).map_err(|e| e.to_string())?;
            copy_dir(&src, &dst)?;
        } else {
            fs::copy(&src, &dst).map_err(|e| format!("cannot copy {}: {e}", src.display()))?;
        }
    }
    Ok(())
}
