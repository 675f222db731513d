//! Running commands and installing what the suites need, skipping what is there.

use std::path::PathBuf;
use std::process::Command;

pub type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root (xtask runs from anywhere inside it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Runs a command in the workspace root, failing on a non-zero exit.
pub fn run(program: &str, args: &[&str]) -> Result {
    run_in(&root(), program, args, &[])
}

/// Runs a command in `dir` with extra environment variables.
pub fn run_in(dir: &std::path::Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> Result {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Runs cargo (the one running xtask) in the workspace root.
pub fn cargo(args: &[&str]) -> Result {
    run(&cargo_bin(), args)
}

pub fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The output of a command, if it ran and succeeded.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The version of a crate in the workspace's Cargo.lock (the first, if it has several).
pub fn lock_version(name: &str) -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            let version = lines.next().and_then(|l| l.strip_prefix("version = \""));
            if let Some(v) = version.and_then(|v| v.strip_suffix('"')) {
                return Ok(v.to_string());
            }
        }
    }
    Err(format!("Cargo.lock has no {name} package"))
}

/// Adds the rustup targets that are not installed yet.
pub fn ensure_targets(targets: &[&str]) -> Result {
    let installed = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    let missing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| !installed.lines().any(|l| l.trim() == *t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut args = vec!["target", "add"];
    args.extend(&missing);
    run("rustup", &args)
}

/// Installs the Python packages the vectors' generator imports (`cryptography`, for its
/// AES) with pip, unless `python3` already imports them.
pub fn ensure_python_packages() -> Result {
    let present = Command::new("python3")
        .args(["-c", "import cryptography"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if present {
        return Ok(());
    }
    run(
        "python3",
        &["-m", "pip", "install", "--quiet", "cryptography"],
    )
}

/// Installs Debian packages whose `probe` command is missing (one `apt-get update` first).
pub fn ensure_apt(packages: &[(&str, &str)]) -> Result {
    let missing: Vec<&str> = packages
        .iter()
        .filter(|(_, probe)| {
            Command::new("sh")
                .args(["-c", &format!("command -v {probe}")])
                .output()
                .map(|o| !o.status.success())
                .unwrap_or(true)
        })
        .map(|(pkg, _)| *pkg)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let sudo = if output("id", &["-u"])
        .map(|u| u.trim() == "0")
        .unwrap_or(false)
    {
        vec![]
    } else {
        vec!["sudo"]
    };
    let mut update: Vec<&str> = sudo.clone();
    update.extend(["apt-get", "update", "-q"]);
    run(update[0], &update[1..])?;
    let mut install = sudo;
    install.extend(["apt-get", "install", "-y", "-q", "--no-install-recommends"]);
    install.extend(&missing);
    run_in(
        &root(),
        install[0],
        &install[1..],
        &[("DEBIAN_FRONTEND", "noninteractive")],
    )
}
