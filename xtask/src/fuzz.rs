//! `cargo xtask fuzz [TARGET] [--seconds N] [--merge]`: coverage-guided fuzzing of the
//! core with cargo fuzz (libFuzzer) on the nightly toolchain, both installed when missing.
//!
//! Each target starts from its committed seeds in `fuzz/corpus/<target>/` and grows a
//! working corpus in `fuzz/target/corpus/<target>/` (kept between runs, not committed);
//! `--merge` adds to the committed seeds only the inputs that reach new coverage. Crashing
//! inputs land in `fuzz/artifacts/<target>/`; those of the findings are kept, shrunk, in
//! `fuzz/regressions/<target>/`, replayed by `cargo xtask test fuzz`.

use std::path::{Path, PathBuf};

use crate::util::{Result, output, root, run, run_in};

/// Every fuzz target (`fuzz/fuzz_targets/<name>.rs`).
pub const TARGETS: &[&str] = &[
    "parse_decimal",
    "parse_hex",
    "parse_base32",
    "parse_base62",
    "parse_objectid",
    "generator",
    "atomic_generator",
    "open_sealed",
];

const USAGE: &str = "usage: cargo xtask fuzz [TARGET] [--seconds N] [--merge]";

pub fn run_command(args: &[String]) -> Result {
    let mut seconds = 60u64;
    let mut merge = false;
    let mut only = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&s| s > 0)
                    .ok_or(format!("--seconds needs a whole number above 0; {USAGE}"))?;
            }
            "--merge" => merge = true,
            t if TARGETS.contains(&t) && only.is_none() => only = Some(t),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; {USAGE}\ntargets: {}",
                    TARGETS.join(", ")
                ));
            }
        }
    }
    setup()?;
    let targets: Vec<&str> = only.map_or(TARGETS.to_vec(), |t| vec![t]);
    for target in targets {
        let seeds = fuzz_dir().join("corpus").join(target);
        let work = fuzz_dir().join("target").join("corpus").join(target);
        copy_dir(&seeds, &work)?;
        fuzz_run(target, &work, &[&format!("-max_total_time={seconds}")])?;
        if merge {
            // cargo fuzz puts its corpus argument last; libFuzzer merges into the first
            // directory it is given, so the seeds come first among the arguments too.
            let seeds_arg = path_str(&seeds)?;
            fuzz_run(target, &seeds, &["-merge=1", &seeds_arg, &path_str(&work)?])?;
        }
    }
    Ok(())
}

/// Installs the nightly toolchain (minimal profile) and cargo-fuzz when missing.
pub fn setup() -> Result {
    let toolchains = output("rustup", &["toolchain", "list"]).unwrap_or_default();
    if !toolchains.lines().any(|l| l.starts_with("nightly")) {
        run(
            "rustup",
            &["toolchain", "install", "nightly", "--profile", "minimal"],
        )?;
    }
    if output("cargo", &["fuzz", "--version"]).is_none() {
        // Built by the stable toolchain; no --locked (see shared TOOLCHAIN notes).
        run("cargo", &["+stable", "install", "cargo-fuzz"])?;
    }
    Ok(())
}

pub fn fuzz_dir() -> PathBuf {
    root().join("fuzz")
}

/// Replays each input kept in `fuzz/regressions/<target>/` (one per finding, named after
/// it) on its own; returns `<target>/<name>` of those that fail.
pub fn replay(target: &str) -> Result<Vec<String>> {
    let dir = fuzz_dir().join("regressions").join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    files.sort();
    let mut failed = Vec::new();
    for file in files {
        if let Err(e) = fuzz_run(target, &file, &[]) {
            eprintln!("{e}");
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            failed.push(format!("{target}/{name}"));
        }
    }
    Ok(failed)
}

/// `cargo +nightly fuzz run TARGET CORPUS -- ARGS...` from the repository root.
pub fn fuzz_run(target: &str, corpus: &Path, libfuzzer_args: &[&str]) -> Result {
    let corpus = path_str(corpus)?;
    let mut args = vec!["+nightly", "fuzz", "run", target, &corpus, "--"];
    args.extend(libfuzzer_args);
    run_in(&root(), "cargo", &args, &[])
}

fn path_str(p: &Path) -> Result<String> {
    p.to_str()
        .map(str::to_owned)
        .ok_or(format!("{} is not UTF-8", p.display()))
}

/// Copies the files of `from` into `to` (created if needed), leaving other files of `to`.
pub fn copy_dir(from: &Path, to: &Path) -> Result {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let dest = to.join(entry.file_name());
        std::fs::copy(entry.path(), &dest)
            .map_err(|e| format!("cannot copy to {}: {e}", dest.display()))?;
    }
    Ok(())
}
