//! `cargo xtask bench --baseline <rev>`: the core's benchmark (`bench/benches/compare.rs`)
//! built at a revision and at the working tree, run in turn, row by row against each other.
//!
//! The revision is checked out in a detached git worktree under `target/baseline/` and built
//! into a target directory of its own there, so neither build invalidates the other's; the
//! worktree is removed when the comparison ends (the baseline's build stays, for the next
//! run). The two binaries run alternately (baseline, working tree, baseline, ...), so a burst
//! of load from elsewhere on the machine falls on both. Rows are matched by name: a row that
//! only one side prints is listed as such, so rows added later never break the comparison.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{Result, cargo_bin, root};

/// Runs of each binary, taken alternately; each row's figure is the median of its runs.
const ROUNDS: usize = 3;

/// One figure of the benchmark's table: snowdrift's cell of a row ("5.93 ns",
/// "4.096 M/s (100.0%)"), as a number and its unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub unit: String,
}

/// One line of the comparison: a row's figure at the baseline and at the working tree.
#[derive(Debug, PartialEq)]
pub struct Compared {
    pub name: String,
    pub old: Option<Figure>,
    pub new: Option<Figure>,
}

impl Compared {
    /// new ÷ old, when both sides measured the row in the same unit.
    pub fn ratio(&self) -> Option<f64> {
        match (&self.old, &self.new) {
            (Some(o), Some(n)) if o.unit == n.unit && o.value > 0.0 => Some(n.value / o.value),
            _ => None,
        }
    }
}

/// Parses a figure cell: a number, a space and a unit, anything after the unit ignored
/// ("4.096 M/s (100.0%)" is 4.096 M/s). `None` for "—" and anything else without a number.
pub fn parse_figure(cell: &str) -> Option<Figure> {
    let mut words = cell.split_whitespace();
    let value: f64 = words.next()?.replace(',', "").parse().ok()?;
    let unit = words.next()?.to_string();
    value.is_finite().then_some(Figure { value, unit })
}

/// The rows of the benchmark's markdown table, in the order printed: each row's name and
/// snowdrift's figure (the first column after the name). The header, the separator and
/// every line that is not a table row are skipped, as are rows without a figure.
pub fn parse_table(output: &str) -> Vec<(String, Figure)> {
    output
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let inner = line.strip_prefix('|')?.strip_suffix('|')?;
            let mut cells = inner.split('|').map(str::trim);
            let name = cells.next()?;
            let figure = parse_figure(cells.next()?)?;
            (!name.is_empty() && name != "row").then(|| (name.to_string(), figure))
        })
        .collect()
}

/// The median of a row's figures over runs, if every run gave it in one unit.
fn median(figures: &[&Figure]) -> Option<Figure> {
    let unit = &figures.first()?.unit;
    if figures.iter().any(|f| &f.unit != unit) {
        return None;
    }
    let mut values: Vec<f64> = figures.iter().map(|f| f.value).collect();
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    let value = if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    };
    Some(Figure {
        value,
        unit: unit.clone(),
    })
}

/// Each row's median over a side's runs, in the order the rows first appear.
fn medians(runs: &[Vec<(String, Figure)>]) -> Vec<(String, Option<Figure>)> {
    let mut order: Vec<&str> = Vec::new();
    let mut by_name: HashMap<&str, Vec<&Figure>> = HashMap::new();
    for run in runs {
        for (name, figure) in run {
            let seen = by_name.entry(name.as_str()).or_default();
            if seen.is_empty() {
                order.push(name);
            }
            seen.push(figure);
        }
    }
    order
        .into_iter()
        .map(|name| (name.to_string(), median(&by_name[name])))
        .collect()
}

/// Matches the two sides' rows by name: the working tree's rows in its order, then the rows
/// only the baseline printed, in the baseline's order.
pub fn compare(
    old_runs: &[Vec<(String, Figure)>],
    new_runs: &[Vec<(String, Figure)>],
) -> Vec<Compared> {
    let old = medians(old_runs);
    let new = medians(new_runs);
    let mut old_by_name: HashMap<&str, &Option<Figure>> =
        old.iter().map(|(n, f)| (n.as_str(), f)).collect();
    let mut lines: Vec<Compared> = new
        .iter()
        .map(|(name, figure)| Compared {
            name: name.clone(),
            old: old_by_name.remove(name.as_str()).cloned().flatten(),
            new: figure.clone(),
        })
        .collect();
    lines.extend(
        old.iter()
            .filter(|(name, _)| old_by_name.contains_key(name.as_str()))
            .map(|(name, figure)| Compared {
                name: name.clone(),
                old: figure.clone(),
                new: None,
            }),
    );
    lines
}

fn cell(figure: &Option<Figure>, side: &str) -> String {
    match figure {
        Some(f) if f.value < 10.0 => format!("{:.2} {}", f.value, f.unit),
        Some(f) => format!("{:.1} {}", f.value, f.unit),
        None => format!("not in {side}"),
    }
}

/// The comparison as a markdown table, with its reading notes.
pub fn render(lines: &[Compared], old_label: &str, runs: usize) -> String {
    let mut out = format!(
        "\nsnowdrift's figure per row, baseline {old_label} against the working tree \
         (medians of {runs} alternating runs each)\n\n\
         | row | {old_label} | working tree | new ÷ old |\n|---|---|---|---|\n"
    );
    for line in lines {
        let ratio = match line.ratio() {
            Some(r) => format!("{r:.2}×"),
            None => "—".to_string(),
        };
        out += &format!(
            "| {} | {} | {} | {ratio} |\n",
            line.name,
            cell(&line.old, old_label),
            cell(&line.new, "working tree"),
        );
    }
    out += "\n- new ÷ old: for times (ns), above 1.00× is slower; for rates (M/s), below 1.00× \
            is slower. On a shared machine, read 0.9-1.1 as a tie.\n";
    out
}

/// The commit a revision names, or an error naming the revision.
fn resolve(rev: &str) -> Result<String> {
    let out = Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot start git: {e}"))?;
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !commit.is_empty() {
        Ok(commit)
    } else {
        Err(format!(
            "cannot resolve baseline revision `{rev}` to a commit in this repository \
             (a tag may be missing from this clone: `git fetch --tags`)"
        ))
    }
}

fn git(args: &[&str]) -> Result {
    crate::util::run("git", args)
}

/// A detached git worktree, removed when dropped.
struct Worktree(PathBuf);

impl Worktree {
    fn add(path: &Path, commit: &str) -> Result<Worktree> {
        let p = path
            .to_str()
            .ok_or("the target directory's path is not UTF-8")?;
        if path.exists() {
            // Left by a run that was stopped before it could remove it.
            let _ = git(&["worktree", "remove", "--force", p]);
            let _ = std::fs::remove_dir_all(path);
        }
        git(&["worktree", "prune"])?;
        git(&["worktree", "add", "--detach", "--quiet", p, commit])?;
        Ok(Worktree(path.to_path_buf()))
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        if let Some(p) = self.0.to_str()
            && git(&["worktree", "remove", "--force", p]).is_err()
        {
            eprintln!("xtask: could not remove the worktree {p}; `git worktree prune` will");
        }
    }
}

/// Builds the compare benchmark of the workspace at `dir` (into `target_dir` if given, else
/// where cargo builds by default) and returns the path of its binary.
fn build(dir: &Path, target_dir: Option<&Path>) -> Result<PathBuf> {
    let mut args = vec![
        "bench",
        "-p",
        "snowdrift-bench",
        "--bench",
        "compare",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ];
    if let Some(target) = target_dir {
        args.push("--target-dir");
        args.push(
            target
                .to_str()
                .ok_or("the target directory's path is not UTF-8")?,
        );
    }
    eprintln!("$ cargo {} (in {})", args.join(" "), dir.display());
    let out = Command::new(cargo_bin())
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the benchmark in {} failed",
            dir.display()
        ));
    }
    // The artifact message of the `compare` bench target names its binary.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"compare\"")
        })
        .find_map(|l| {
            let start = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = start + l[start..].find('"')?;
            Some(PathBuf::from(&l[start..end]))
        })
        .ok_or_else(|| format!("cargo named no benchmark binary for {}", dir.display()))
}

/// Runs one benchmark binary from its crate's directory, its progress on stderr, and
/// returns what it printed.
fn measure(binary: &Path, workspace: &Path, filters: &[String]) -> Result<String> {
    let out = Command::new(binary)
        .arg("--bench")
        .args(filters)
        .current_dir(workspace.join("bench"))
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", binary.display(), out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Builds the benchmark at `rev` and at the working tree, runs them alternately and prints
/// each row's figure at both with the ratio new ÷ old. `filters` pass through to both
/// binaries (the benchmark's section names: real, fake, batch, ...).
pub fn run(rev: &str, filters: &[String]) -> Result {
    let commit = resolve(rev)?;
    let short = &commit[..commit.len().min(7)];
    let label = if rev.starts_with(short) {
        short.to_string()
    } else {
        format!("{rev} ({short})")
    };
    let base = root().join("target").join("baseline");
    let worktree = Worktree::add(&base.join("src"), &commit)?;
    let old_bin = build(&worktree.0, Some(&base.join("target")))?;
    let new_bin = build(&root(), None)?;
    let (mut old_runs, mut new_runs) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        eprintln!("round {round} of {ROUNDS}: baseline {label}");
        old_runs.push(parse_table(&measure(&old_bin, &worktree.0, filters)?));
        eprintln!("round {round} of {ROUNDS}: working tree");
        new_runs.push(parse_table(&measure(&new_bin, &root(), filters)?));
    }
    drop(worktree);
    if old_runs.iter().chain(&new_runs).all(Vec::is_empty) {
        return Err(format!(
            "neither side printed a row for the sections {filters:?} (sections: real, fake, \
             batch, text, sustained, seal)"
        ));
    }
    print!("{}", render(&compare(&old_runs, &new_runs), &label, ROUNDS));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "
snowdrift 0.2.0 vs ferroid 2.0, snowflaked 1.0, snowflake_me 2.2 (AMD EPYC, 2 cores)

| row | snowdrift | ferroid | snowflaked | snowflake_me | fastest peer ÷ snowdrift | target | met |
|---|---|---|---|---|---|---|---|
| `Generator::next()`, fake clock (pure cost) | 11.8 ns | 1.05 ns | — | — | 0.09× | ≤ 1.5 ns | **no** |
| retired row | 3.00 ns | — | — | — | — | — | — |
| IDs sustained over 1 s, 1 thread | 4.096 M/s (100.0%) | 4.092 M/s (99.9%) | — | — | 1.00× | — | yes |

- Ratio: the fastest peer's time over snowdrift's, judged as shown.
";

    const NEW: &str = "
| row | snowdrift | ferroid | snowflaked | snowflake_me | fastest peer ÷ snowdrift | target | met |
|---|---|---|---|---|---|---|---|
| new row | 7.50 ns | — | — | — | — | — | — |
| `Generator::next()`, fake clock (pure cost) | 0.95 ns | 1.05 ns | — | — | 1.11× | ≤ 1.5 ns | yes |
| IDs sustained over 1 s, 1 thread | 4.100 M/s (100.1%) | 4.092 M/s (99.9%) | — | — | 1.00× | — | yes |
";

    fn fig(value: f64, unit: &str) -> Option<Figure> {
        Some(Figure {
            value,
            unit: unit.into(),
        })
    }

    #[test]
    fn table_rows_are_read_with_their_first_figure() {
        let rows = parse_table(OLD);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "`Generator::next()`, fake clock (pure cost)",
                "retired row",
                "IDs sustained over 1 s, 1 thread"
            ]
        );
        assert_eq!(Some(rows[0].1.clone()), fig(11.8, "ns"));
        assert_eq!(Some(rows[2].1.clone()), fig(4.096, "M/s"));
    }

    #[test]
    fn cells_without_a_number_are_not_figures() {
        assert_eq!(parse_figure("—"), None);
        assert_eq!(parse_figure("---"), None);
        assert_eq!(parse_figure("snowdrift"), None);
        assert_eq!(parse_figure("12"), None);
        assert_eq!(parse_figure("1,234.5 ns"), fig(1234.5, "ns"));
    }

    #[test]
    fn rows_match_by_name_and_one_sided_rows_are_kept() {
        let lines = compare(&[parse_table(OLD)], &[parse_table(NEW)]);
        let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "new row",
                "`Generator::next()`, fake clock (pure cost)",
                "IDs sustained over 1 s, 1 thread",
                "retired row"
            ]
        );
        assert_eq!((lines[0].old.clone(), lines[0].ratio()), (None, None));
        assert_eq!((lines[3].new.clone(), lines[3].ratio()), (None, None));
        let pure = lines[1].ratio().unwrap();
        assert!((pure - 0.95 / 11.8).abs() < 1e-12, "{pure}");
        let rate = lines[2].ratio().unwrap();
        assert!((rate - 4.100 / 4.096).abs() < 1e-12, "{rate}");
        let table = render(&lines, "v0.2.0 (20ee9dc)", 1);
        assert!(
            table.contains("| new row | not in v0.2.0 (20ee9dc) | 7.50 ns | — |"),
            "{table}"
        );
        assert!(
            table.contains("| retired row | 3.00 ns | not in working tree | — |"),
            "{table}"
        );
        assert!(table.contains("| 11.8 ns | 0.95 ns | 0.08× |"), "{table}");
    }

    #[test]
    fn each_side_takes_the_median_of_its_runs() {
        let run = |v: &str| parse_table(&format!("| r | {v} ns | — |\n| s | 1.00 {v} |"));
        let lines = compare(
            &[run("4.00"), run("1.00"), run("2.00")],
            &[run("3.00"), run("5.00")],
        );
        assert_eq!(lines[0].old, fig(2.0, "ns"));
        assert_eq!(lines[0].new, fig(4.0, "ns"));
        // Row s changes unit between runs: no figure rather than a mix.
        assert_eq!((lines[1].name.as_str(), lines[1].ratio()), ("s", None));
        assert_eq!(lines[1].old, None);
    }

    #[test]
    fn a_unit_change_gives_no_ratio() {
        let old = parse_table("| r | 5.00 ns |");
        let new = parse_table("| r | 5.00 us |");
        assert_eq!(compare(&[old], &[new])[0].ratio(), None);
    }
}
