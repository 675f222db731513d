//! `cargo xtask firmware [--size]`: builds the firmware in `embedded-example/` for the
//! Cortex-M3, Cortex-M0 and RISC-V boards QEMU emulates, boots each twice (the second time
//! with its clock set a second earlier) and prints the records with their IDs decoded;
//! with `--size`, measures the flash and RAM the snowdrift core adds on the Cortex-M ones.
//!
//! The host-side tests of the firmware live here too (`firmware::tests`), run by
//! `cargo xtask test firmware`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowdrift::Layout;

use crate::util::{self, Result, cargo_bin, ensure_apt, ensure_targets, root, run_in};

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
const QEMU_TIMEOUT: Duration = Duration::from_secs(180);

pub fn run(args: &[String]) -> Result {
    setup()?;
    if args.iter().any(|a| a == "--size") {
        return size();
    }
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_millis() as u64;
    for board in BOARDS {
        let elf = build(board)?;
        let dir = TempDir::new(board.target)?;
        for (boot, epoch_ms) in [(1, now_ms), (2, now_ms - 1000)] {
            let out = boot_once(board, &elf, dir.path(), epoch_ms)?;
            println!(
                "\n{} on qemu -machine {} (node {}), boot {boot}, clock at boot {epoch_ms}",
                board.target, board.machine, board.node
            );
            if boot == 2 {
                println!("(clock set 1 s back: IDs go on after the reservation boot 1 persisted)");
            }
            print!("{}", describe(&out, epoch_ms));
            println!(
                "(the timer interrupt took an ID while a main-loop call was in flight {} times)",
                read_contended(dir.path())?
            );
        }
    }
    Ok(())
}

/// Installs the rustup targets, QEMU (Arm and RISC-V) and Arm binutils when missing.
pub fn setup() -> Result {
    ensure_targets(&BOARDS.map(|b| b.target))?;
    ensure_apt(&[
        ("qemu-system-arm", "qemu-system-arm"),
        ("qemu-system-misc", "qemu-system-riscv32"),
        ("binutils-arm-none-eabi", "arm-none-eabi-size"),
    ])
}

pub fn firmware_dir() -> PathBuf {
    root().join("embedded-example")
}

/// Builds the firmware for `board` (release, its node id) and returns the ELF.
pub fn build(board: Board) -> Result<PathBuf> {
    let node = board.node.to_string();
    run_in(
        &firmware_dir(),
        &cargo_bin(),
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

/// text, data, bss of an ELF, from `arm-none-eabi-size` (text includes read-only data).
fn sizes(elf: &Path) -> Result<[u64; 3]> {
    let out = util::output("arm-none-eabi-size", &[&elf.to_string_lossy()])
        .ok_or("arm-none-eabi-size failed")?;
    let row = out.lines().nth(1).ok_or("no size row")?;
    let cols: Vec<u64> = row
        .split_whitespace()
        .take(3)
        .map(|c| c.parse().map_err(|_| format!("bad size row {row:?}")))
        .collect::<Result<_>>()?;
    Ok([cols[0], cols[1], cols[2]])
}

/// Code and data symbols of an ELF with their sizes (`arm-none-eabi-nm`), keyed by
/// (section letter, demangled name).
fn symbols(elf: &Path) -> Result<std::collections::BTreeMap<(char, String), u64>> {
    let out = util::output("arm-none-eabi-nm", &["-S", "-C", &elf.to_string_lossy()])
        .ok_or("arm-none-eabi-nm failed")?;
    let mut map = std::collections::BTreeMap::new();
    for line in out.lines() {
        let mut cols = line.splitn(4, ' ');
        let (Some(_addr), Some(size), Some(kind), Some(name)) =
            (cols.next(), cols.next(), cols.next(), cols.next())
        else {
            continue;
        };
        let (Ok(size), Some(kind)) = (u64::from_str_radix(size, 16), kind.chars().next()) else {
            continue;
        };
        *map.entry((kind.to_ascii_lowercase(), name.to_string()))
            .or_insert(0) += size;
    }
    Ok(map)
}

/// Builds the firmware with and without the core on the Cortex-M targets and prints what
/// the core adds, then where it goes: the functions that grew and the RAM the core's
/// statics take.
fn size() -> Result {
    let variants: [(&str, &[&str]); 3] = [
        ("without snowdrift", &["--no-default-features"]),
        (
            "with snowdrift, errors by kind",
            &["--no-default-features", "--features", "ids"],
        ),
        ("with snowdrift, error messages (default)", &[]),
    ];
    let mut table = String::from(
        "| target | firmware | .text | .data | .bss | core adds: flash (.text + .data) | core adds: RAM (.data + .bss) |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    let mut details = String::new();
    for board in [CORTEX_M3, CORTEX_M0] {
        let mut base = None;
        let mut elves = Vec::new();
        for (name, flags) in variants {
            // A target dir of its own, so the size builds never disturb the test builds.
            let target_dir = format!("target/size-{}", elves.len());
            let mut args = vec![
                "build",
                "--release",
                "--locked",
                "--target",
                board.target,
                "--target-dir",
                &target_dir,
            ];
            args.extend_from_slice(flags);
            run_in(&firmware_dir(), &cargo_bin(), &args, &[])?;
            let elf = firmware_dir()
                .join(&target_dir)
                .join(board.target)
                .join("release/snowdrift-firmware");
            let [text, data, bss] = sizes(&elf)?;
            let [b_text, b_data, b_bss] = *base.get_or_insert([text, data, bss]);
            let flash = (text + data) as i64 - (b_text + b_data) as i64;
            let ram = (data + bss) as i64 - (b_data + b_bss) as i64;
            let _ = writeln!(
                table,
                "| {} | {name} | {text} | {data} | {bss} | {flash:+} | {ram:+} |",
                board.target
            );
            elves.push(elf);
        }
        let without = symbols(&elves[0])?;
        for (elf, (name, _)) in elves.iter().zip(variants).skip(1) {
            let with = symbols(elf)?;
            let _ = writeln!(
                details,
                "{} {name}: symbols that grew (bytes; LTO inlines most of the core into its callers)",
                board.target
            );
            let mut grew: Vec<(i64, &(char, String))> = with
                .iter()
                .map(|(k, &v)| (v as i64 - without.get(k).copied().unwrap_or(0) as i64, k))
                .filter(|(d, (kind, _))| *d != 0 && matches!(kind, 't' | 'd' | 'b'))
                .collect();
            grew.sort_by_key(|g| std::cmp::Reverse(g.0));
            for (d, (kind, sym)) in grew {
                let section = match kind {
                    't' => ".text",
                    'd' => ".data",
                    _ => ".bss",
                };
                let _ = writeln!(details, "  {d:+6} {section:<5} {sym}");
            }
        }
    }
    println!("\n{table}\n{details}");
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Boots each firmware twice under QEMU and checks the IDs it printed.

    use super::*;
    use std::collections::HashSet;

    const EPOCH_MS: u64 = 1_750_000_000_000;
    /// The firmware's timer interrupt period (embedded-example/src/main.rs `ISR_PERIOD_US`).
    const ISR_PERIOD_MS: u64 = 2;
    /// The firmware runs SysTick as a 20-bit counter (embedded-example/src/board/mod.rs).
    const COUNTER_BITS: u32 = 20;

    /// SysTick's rate on each board under QEMU (embedded-example/src/board/).
    fn counter_hz(board: Board) -> u64 {
        match board.machine {
            "lm3s6965evb" => 12_500_000,
            "microbit" => 16_000_000,
            _ => 10_000_000, // RISC-V virt's mtime
        }
    }

    /// Only one test at a time installs what is missing.
    static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The firmware's state file: (boots, reserved Unix ms).
    pub fn read_state(dir: &Path) -> Result<(u32, u64)> {
        let bytes = std::fs::read(dir.join("snowdrift.state"))
            .map_err(|e| format!("the firmware wrote no state file: {e}"))?;
        if bytes.len() != 16 || &bytes[..4] != b"SDHW" {
            return Err(format!("state file is not the firmware's: {bytes:?}"));
        }
        let boots = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
        let reserved = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        Ok((boots, reserved))
    }

    fn check_board(board: Board) {
        {
            let _one = SETUP.lock().unwrap_or_else(|e| e.into_inner());
            setup().unwrap();
        }
        let elf = build(board).unwrap();
        let dir = TempDir::new(board.target).unwrap();
        let wrap_ms = (1u64 << COUNTER_BITS) * 1000 / counter_hz(board);

        // Boot 1: a fresh board whose clock reads EPOCH_MS at boot.
        let first = boot_once(board, &elf, dir.path(), EPOCH_MS).unwrap();
        assert_eq!((first.boot, first.target.as_str()), (1, board.target));
        let times = check_ids(board, &first.records);
        // The interrupt really ran inside main-loop generator calls (the firmware aims some
        // calls at the timer's deadline), and every ID above stayed unique and ordered.
        let contended = read_contended(dir.path()).unwrap();
        assert!(
            contended > 0,
            "the interrupt never preempted a main-loop call"
        );
        let (boots, reserved) = read_state(dir.path()).unwrap();
        assert_eq!(boots, 1);
        let newest = *times.iter().max().unwrap();
        assert!(
            reserved >= newest,
            "an ID at {newest} was issued above the persisted reservation {reserved}"
        );
        // Time comes from the emulated timer: the k-th interrupt (k from 1) fires k
        // periods after boot, so its ID's time is the boot epoch plus k periods (within the
        // millisecond the reading falls in).
        let isr_times = first
            .records
            .iter()
            .zip(&times)
            .filter(|(r, _)| r.src == Src::Isr);
        for (k, (r, &t)) in (1u64..).zip(isr_times) {
            let expected = EPOCH_MS + k * ISR_PERIOD_MS;
            assert!(
                t + 1 >= expected && t <= expected + 1,
                "interrupt record {} (interrupt {k}) has time boot{:+}ms, expected boot+{}ms",
                r.n,
                t as i64 - EPOCH_MS as i64,
                k * ISR_PERIOD_MS
            );
        }
        for (r, &t) in first.records.iter().zip(&times) {
            assert!(t >= EPOCH_MS, "record {} is before boot", r.n);
        }
        // The run is longer than the counter's wrap period: the interrupt records after the
        // wrap would fail the check above without extension across wrap-around.
        assert!(
            newest - EPOCH_MS > wrap_ms,
            "the run ({} ms) did not cross a counter wrap ({wrap_ms} ms)",
            newest - EPOCH_MS
        );

        // Boot 2: the clock is set back a second. The firmware resumes after the persisted
        // reservation, so every ID is above every ID of boot 1.
        let second = boot_once(board, &elf, dir.path(), EPOCH_MS - 1000).unwrap();
        assert_eq!(second.boot, 2);
        let times2 = check_ids(board, &second.records);
        let max_first = first.records.iter().map(|r| r.id).max().unwrap();
        for (r, &t) in second.records.iter().zip(&times2) {
            assert!(
                r.id > max_first,
                "boot 2 record {} ({}) is not above boot 1's newest ID {max_first}",
                r.n,
                r.id
            );
            // Its clock reads behind the reservation the whole run, so IDs go on from the
            // first tick after it (a logical clock, one tick per 4096 IDs).
            let ticks_used = u64::from(r.n) / 4096;
            assert!(
                t > reserved && t <= reserved + 1 + ticks_used,
                "boot 2 record {} has time {t}, expected just after the reservation {reserved}",
                r.n
            );
        }
        let all: HashSet<u64> = first
            .records
            .iter()
            .chain(&second.records)
            .map(|r| r.id)
            .collect();
        assert_eq!(
            all.len(),
            first.records.len() + second.records.len(),
            "an ID repeats across boots"
        );
        assert!(read_contended(dir.path()).unwrap() > 0);
        let (boots, reserved2) = read_state(dir.path()).unwrap();
        assert_eq!(boots, 2);
        assert!(reserved2 >= *times2.iter().max().unwrap());
    }

    /// Checks one boot's records and returns their times (Unix ms).
    fn check_ids(board: Board, records: &[Record]) -> Vec<u64> {
        assert!(records.len() >= 100, "only {} records", records.len());
        let mut seen = HashSet::new();
        let mut last: Option<u64> = None;
        let mut last_by = [None::<u64>; 2];
        let mut times = Vec::new();
        for r in records {
            assert!(seen.insert(r.id), "ID {} issued twice", r.id);
            let parts = LAYOUT.decode(r.id).unwrap();
            assert_eq!(parts.node, board.node, "record {}: wrong node", r.n);
            if let Some(prev) = last {
                assert!(r.id > prev, "record {}: not above the record before", r.n);
            }
            let slot = &mut last_by[r.src as usize];
            if let Some(prev) = *slot {
                assert!(r.id > prev, "record {}: not above its source's last", r.n);
            }
            *slot = Some(r.id);
            last = Some(r.id);
            times.push(parts.time_ms);
        }
        // Both contexts stamp records, interleaved: the interrupt every 2 ms, the main
        // loop every 1 ms in between.
        let isr = records.iter().filter(|r| r.src == Src::Isr).count();
        let switches = records.windows(2).filter(|w| w[0].src != w[1].src).count();
        assert!(
            isr >= records.len() / 5 && isr <= records.len() * 4 / 5,
            "{isr} of {} records from the interrupt",
            records.len()
        );
        assert!(
            switches >= records.len() / 4,
            "sources alternate only {switches} times"
        );
        times
    }

    #[test]
    fn cortex_m3_firmware_under_qemu() {
        check_board(CORTEX_M3);
    }

    #[test]
    fn cortex_m0_firmware_under_qemu() {
        check_board(CORTEX_M0);
    }

    #[test]
    fn riscv_firmware_under_qemu() {
        check_board(RISCV);
    }

    /// A board whose clock reads before the layout's epoch (an RTC reset to 1970) gets
    /// no IDs: the firmware reports the core's error and exits with a failure code.
    #[test]
    fn firmware_reports_a_clock_outside_the_layout() {
        {
            let _one = SETUP.lock().unwrap_or_else(|e| e.into_inner());
            setup().unwrap();
        }
        let board = CORTEX_M3;
        let elf = build(board).unwrap();
        let dir = TempDir::new("bad-clock").unwrap();
        std::fs::write(dir.path().join("snowdrift.cfg"), "epoch_ms=1000000\n").unwrap();
        let (ok, stdout, _) = qemu(board, &elf, dir.path()).unwrap();
        assert!(!ok, "exited 0 with a clock in 1970:\n{stdout}");
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("boot 1 target=thumbv7m-none-eabi"));
        let error = lines.next().unwrap_or_default();
        assert!(
            error.starts_with("error: time 10000") && error.contains("outside the layout's range"),
            "unexpected report: {error:?}"
        );
        assert!(!stdout.contains("record "), "issued IDs:\n{stdout}");
    }

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
