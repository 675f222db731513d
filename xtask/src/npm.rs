//! `cargo xtask npm`: builds the `snowdrift` npm package into `wasm/pkg/`, and the `npm`
//! test suite and JS benchmark that run against it.
//!
//! The package is a release build of the `snowdrift-wasm` crate (plain exported functions,
//! no wasm-bindgen) passed through `wasm-opt -Oz` (npm `binaryen`), plus the hand-written
//! files in `wasm/js/`: the JS API over the exports (`api.mjs`, and `api.cjs` made from it
//! here), the entry points, the types, the `snowdrift` command and package.json.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{self, cargo, ensure_apt, ensure_targets, root, run_in, Result};

pub fn js_dir() -> PathBuf {
    root().join("tests/js")
}

pub fn pkg_dir() -> PathBuf {
    root().join("wasm/pkg")
}

/// Installs what building the package needs, skipping what is there.
fn ensure_tools() -> Result {
    ensure_targets(&["wasm32-unknown-unknown"])?;
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
    ])?;
    let wasm = root().join("target/wasm32-unknown-unknown/wasm-release/snowdrift_wasm.wasm");
    let pkg = pkg_dir();
    if pkg.exists() {
        fs::remove_dir_all(&pkg).map_err(|e| format!("cannot clear {}: {e}", pkg.display()))?;
    }
    fs::create_dir_all(&pkg).map_err(|e| format!("cannot create {}: {e}", pkg.display()))?;
    let wasm_opt = js_dir().join("node_modules/.bin/wasm-opt");
    util::run(
        path_str(&wasm_opt)?,
        &[
            "-Oz",
            "--enable-bulk-memory",
            "--enable-nontrapping-float-to-int",
            "--enable-sign-ext",
            "--enable-mutable-globals",
            "--enable-multivalue",
            "--enable-reference-types",
            "--converge",
            "--strip-debug",
            "--strip-producers",
            "--strip-target-features",
            path_str(&wasm)?,
            "-o",
            path_str(&pkg.join("snowdrift.wasm"))?,
        ],
    )?;
    copy_dir(&root().join("wasm/js"), &pkg)?;
    // The API module, minified (it is most of the JS a page downloads), once as an ES
    // module and once as CommonJS, so that require("snowdrift") needs no require(esm).
    let esbuild = js_dir().join("node_modules/.bin/esbuild");
    // `snowdrift/browser` (offline.js) likewise, as an ES module only.
    for (source, format, file) in [
        ("api.mjs", "esm", "api.mjs"),
        ("api.mjs", "cjs", "api.cjs"),
        ("offline.js", "esm", "offline.js"),
    ] {
        let src = root().join("wasm/js").join(source);
        let out = format!("--outfile={}", path_str(&pkg.join(file))?);
        util::run(
            path_str(&esbuild)?,
            &[
                path_str(&src)?,
                "--minify",
                "--target=es2022",
                "--log-level=warning",
                &format!("--format={format}"),
                &out,
            ],
        )?;
    }
    fs::copy(root().join("wasm/README.md"), pkg.join("README.md"))
        .map_err(|e| format!("cannot copy README: {e}"))?;
    eprintln!("npm package built in {}", pkg.display());
    Ok(())
}

/// The `npm` test suite: the JS tests (API, vectors, errors, clock policies, the binding's
/// own checks and the smoke test in every runtime including Node and headless Chromium,
/// duplicates, types, the command), all against the built package.
pub fn test() -> Result {
    ensure_apt(&[("chromium", "chromium")])?;
    build()?;
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

pub fn path_str(p: &Path) -> Result<&str> {
    p.to_str()
        .ok_or_else(|| format!("path is not UTF-8: {}", p.display()))
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
