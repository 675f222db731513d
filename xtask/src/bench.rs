//! `cargo xtask bench`: every benchmark, each printing a table with ratios against peers
//! measured in the same run; `--baseline <rev>` compares the core's benchmark with itself
//! at another revision instead (`baseline.rs`).

use crate::util::{Result, cargo};

pub fn run(args: &[String]) -> Result {
    let mut baseline = None;
    let mut sections = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--baseline" => match args.next() {
                Some(rev) if !rev.starts_with('-') => baseline = Some(rev.as_str()),
                _ => return Err("--baseline needs a revision (a tag, branch or commit)".into()),
            },
            flag if flag.starts_with('-') => {
                return Err(format!(
                    "unknown option `{flag}` (bench takes --baseline <rev> and section names)"
                ));
            }
            section => sections.push(section.to_string()),
        }
    }
    if let Some(rev) = baseline {
        return crate::baseline::run(rev, &sections);
    }
    // The core against its peer crates (bench/benches/compare.rs), only the sections named.
    let mut core_args = vec!["bench", "-p", "snowdrift-bench", "--bench", "compare"];
    if !sections.is_empty() {
        core_args.push("--");
        core_args.extend(sections.iter().map(String::as_str));
        return cargo(&core_args);
    }
    let core = cargo(&core_args);
    // The npm package's and the leases' benchmarks run even if another one failed.
    let npm = crate::npm::bench();
    let fleet = crate::fleet::bench();
    let edge = crate::edge::bench();
    let serve = crate::service::bench();
    core.and(npm).and(fleet).and(edge).and(serve)
}
