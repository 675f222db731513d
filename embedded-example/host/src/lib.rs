//! The firmware in `embedded-example/` seen from the host: the boards QEMU emulates, a
//! build per board, a boot under QEMU, and the records the firmware prints, parsed and
//! decoded. `cargo xtask firmware` prints the records with it; the suite in `tests/`
//! (run by `cargo xtask test firmware`, which first installs QEMU, the Arm binutils and the
//! targets) boots every board twice and checks every ID.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowdrift::Layout;

/// What every step returns: an error is a message for the person running it.
pub type Result<T = ()> = std::result::Result<T, String>;

/// A board QEMU emulates, and the node id its firmware is built with.
#[derive(Debug, Clone, Copy)]
pub struct Board {
    pub target: &'static str,
    pub qemu: &'static str,
    pub machine: &'static str,
    /// QEMU arguments besides `-machine`.
    pub qemu_args: &'static [&'static str],
    pub node: u64,
}

pub const CORTEX_M3: Board = Board {
    target: "thumbv7m-none-eabi",
    qemu: "qemu-system-arm",
    machine: "lm3s6965evb",
    qemu_args: &["-cpu", "cortex-m3"],
    node: 673,
};

pub const CORTEX_M0: Board = Board {
    target: "thumbv6m-none-eabi",
    qemu: "qemu-system-arm",
    machine: "microbit",
    qemu_args: &["-cpu", "cortex-m0"],
    node: 5,
};

/// A core without any atomic instructions: the generator's CAS is a critical section.
pub const RISCV: Board = Board {
    target: "riscv32imc-unknown-none-elf",
    qemu: "qemu-system-riscv32",
    machine: "virt",
    qemu_args: &["-bios", "none"],
    node: 1000,
};

pub const BOARDS: [Board; 3] = [CORTEX_M3, CORTEX_M0, RISCV];

/// The layout the firmware uses (embedded-example/src/stamp.rs).
pub const LAYOUT: Layout = Layout::DEFAULT;

/// No run of the firmware takes longer than this, even on a loaded machine; QEMU is killed
/// past it.
pub const QEMU_TIMEOUT: Duration = Duration::from_secs(180);

/// The firmware's crate (`embedded-example/`).
pub fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the host crate lives in the firmware's directory")
        .to_path_buf()
}

/// Runs cargo (the one running this, if any) in the firmware's directory with `args` and
/// extra environment variables, failing on a non-zero exit.
pub fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("$ {cargo} {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(firmware_dir())
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot start {cargo}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

/// Builds the firmware for `board` (release, its node id) and returns the ELF.
pub fn build(board: Board) -> Result<PathBuf> {
    let node = board.node.to_string();
    cargo(
        &["build", "--release", "--locked", "--target", board.target],
        &[("SNOWDRIFT_NODE", &node)],
    )?;
    Ok(firmware_dir()
        .join("target")
        .join(board.target)
        .join("release/snowdrift-firmware"))
}

/// Boots the firmware once in `dir` (its flash and provisioning files) with the clock set
/// to `epoch_ms` at boot, and returns what it printed, checked for form and exit code.
pub fn boot_once(board: Board, elf: &Path, dir: &Path, epoch_ms: u64) -> Result<Output> {
    std::fs::write(dir.join("snowdrift.cfg"), format!("epoch_ms={epoch_ms}\n"))
        .map_err(|e| format!("cannot write the firmware's config: {e}"))?;
    let (ok, stdout, stderr) = qemu(board, elf, dir)?;
    if !ok {
        return Err(format!(
            "{} firmware failed under QEMU\nstdout:\n{stdout}\nstderr:\n{stderr}",
            board.target
        ));
    }
    parse(&stdout).map_err(|e| format!("{}: {e}\nstdout:\n{stdout}", board.target))
}

/// Runs QEMU on `elf` in `dir`; returns (exit status 0, stdout, stderr). Killed after
/// [`QEMU_TIMEOUT`].
pub fn qemu(board: Board, elf: &Path, dir: &Path) -> Result<(bool, String, String)> {
    let out_path = dir.join("qemu.stdout");
    let err_path = dir.join("qemu.stderr");
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = Command::new(board.qemu)
        .args(["-machine", board.machine])
        .args(board.qemu_args)
        .arg("-nographic")
        .args(["-icount", "shift=0"])
        .args(["-semihosting-config", "enable=on,target=native"])
        .arg("-kernel")
        .arg(elf)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", board.qemu))?;
    let deadline = Instant::now() + QEMU_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} firmware still running after {QEMU_TIMEOUT:?}: killed",
                    board.target
                ));
            }
            Err(e) => {
                let _ = child.kill();
                return Err(format!("waiting for qemu: {e}"));
            }
        }
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Ok((status.success(), read(&out_path), read(&err_path)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    Main,
    Isr,
}

#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub n: u32,
    pub src: Src,
    pub id: u64,
}

/// One boot's console output.
#[derive(Debug)]
pub struct Output {
    pub boot: u32,
    pub target: String,
    pub records: Vec<Record>,
}

/// Parses `boot <k> target=<triple>`, `record <n> src=<main|isr> id=<decimal>` lines with
/// n counting from 0, and `done <count>`; anything else is an error.
pub fn parse(text: &str) -> Result<Output> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("no output")?;
    let (boot, target) = first
        .strip_prefix("boot ")
        .and_then(|rest| rest.split_once(" target="))
        .ok_or_else(|| format!("first line is not `boot <k> target=<triple>`: {first:?}"))?;
    let boot = boot
        .parse()
        .map_err(|_| format!("bad boot count in {first:?}"))?;
    let mut records = Vec::new();
    for line in lines {
        if let Some(count) = line.strip_prefix("done ") {
            let count: usize = count
                .parse()
                .map_err(|_| format!("bad count in {line:?}"))?;
            if count != records.len() {
                return Err(format!("`{line}` after {} records", records.len()));
            }
            return Ok(Output {
                boot,
                target: target.to_string(),
                records,
            });
        }
        let bad = || format!("not a `record <n> src=<main|isr> id=<id>` line: {line:?}");
        let mut words = line.split(' ');
        let (Some("record"), Some(n), Some(src), Some(id), None) = (
            words.next(),
            words.next(),
            words.next(),
            words.next(),
            words.next(),
        ) else {
            return Err(bad());
        };
        let n: u32 = n.parse().map_err(|_| bad())?;
        let src = match src {
            "src=main" => Src::Main,
            "src=isr" => Src::Isr,
            _ => return Err(bad()),
        };
        let id = id
            .strip_prefix("id=")
            .and_then(|d| d.parse().ok())
            .ok_or_else(bad)?;
        if n as usize != records.len() {
            return Err(format!("record number {n} where {} was due", records.len()));
        }
        records.push(Record { n, src, id });
    }
    Err("no `done <count>` line".into())
}

/// The records, decoded, one line each.
pub fn describe(out: &Output, epoch_ms: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "boot {} target={}", out.boot, out.target);
    for r in &out.records {
        let src = if r.src == Src::Main { "main" } else { "isr" };
        match LAYOUT.decode(r.id) {
            Ok(p) => {
                let _ = writeln!(
                    s,
                    "record {:>3} src={src:<4} id={}  time=boot{:+}ms node={} seq={}",
                    r.n,
                    r.id,
                    p.time_ms as i64 - epoch_ms as i64,
                    p.node,
                    p.sequence
                );
            }
            Err(e) => {
                let _ = writeln!(s, "record {:>3} src={src:<4} id={}  ({e})", r.n, r.id);
            }
        }
    }
    let _ = writeln!(s, "done {}", out.records.len());
    s
}

/// From the firmware's `snowdrift.stats`: how many times the timer interrupt took an ID
/// while a main-loop call was in flight.
pub fn read_contended(dir: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(dir.join("snowdrift.stats"))
        .map_err(|e| format!("the firmware wrote no stats file: {e}"))?;
    text.trim()
        .strip_prefix("contended=")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("stats file is not `contended=<n>`: {text:?}"))
}

/// A directory for one board's flash and provisioning files, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Result<Self> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "snowdrift-firmware-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempDir(path))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The firmware's state file (its flash page): (boots, reserved Unix ms).
pub fn read_state(dir: &Path) -> Result<(u32, u64)> {
    let bytes = std::fs::read(dir.join("snowdrift.state"))
        .map_err(|e| format!("the firmware wrote no state file: {e}"))?;
    let (Some(b"SDHW"), Some(boots), Some(reserved), 16) = (
        bytes.get(..4),
        bytes.get(4..8),
        bytes.get(8..16),
        bytes.len(),
    ) else {
        return Err(format!("state file is not the firmware's: {bytes:?}"));
    };
    let boots = u32::from_le_bytes(boots.try_into().map_err(|_| "short state file")?);
    let reserved = u64::from_le_bytes(reserved.try_into().map_err(|_| "short state file")?);
    Ok((boots, reserved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rejects_malformed_output() {
        let ok = "boot 1 target=x\nrecord 0 src=main id=5\nrecord 1 src=isr id=6\ndone 2\n";
        assert_eq!(parse(ok).unwrap().records.len(), 2);
        for bad in [
            "",
            "boot x target=y\ndone 0\n",
            "boot 1 target=x\nrecord 1 src=main id=5\ndone 1\n",
            "boot 1 target=x\nrecord 0 src=dma id=5\ndone 1\n",
            "boot 1 target=x\nrecord 0 src=main id=-5\ndone 1\n",
            "boot 1 target=x\nrecord 0 src=main id=5\ndone 2\n",
            "boot 1 target=x\nrecord 0 src=main id=5\n",
        ] {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
    }
}
