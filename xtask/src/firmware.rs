//! `cargo xtask firmware [--size]`: builds the firmware in `embedded-example/` for the
//! Cortex-M3, Cortex-M0 and RISC-V boards QEMU emulates, boots each twice (the second time
//! with its clock set a second earlier) and prints the records with their IDs decoded;
//! with `--size`, measures the flash and RAM the snowdrift core adds on the Cortex-M ones.
//!
//! Building, booting and reading the firmware is `embedded-example/host`'s, which also
//! holds the firmware's test suite; this file installs what it needs and drives it.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use snowdrift_firmware_host::{
    BOARDS, CORTEX_M0, CORTEX_M3, TempDir, boot_once, build, describe, firmware_dir, read_contended,
};

use crate::util::{self, Result, cargo_bin, ensure_apt, ensure_targets, run_in};

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
