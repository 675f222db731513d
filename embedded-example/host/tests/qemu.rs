//! Boots each firmware twice under QEMU and checks the IDs it printed. Needs QEMU (Arm
//! and RISC-V), the Arm binutils and the boards' targets: `cargo xtask test firmware`
//! installs what is missing and runs this suite.

use std::collections::HashSet;

use snowdrift_firmware_host::{
    Board, CORTEX_M0, CORTEX_M3, LAYOUT, RISCV, Record, Src, TempDir, boot_once, build, qemu,
    read_contended, read_state,
};

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

fn check_board(board: Board) {
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
        let last_of_src = &mut last_by[r.src as usize];
        if let Some(prev) = *last_of_src {
            assert!(r.id > prev, "record {}: not above its source's last", r.n);
        }
        *last_of_src = Some(r.id);
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
