//! A process restarted with a fixed node id, for real: two runs of this test binary in
//! turn, each taking IDs faster than its layout's ceiling under `Policy::DEFAULT` (so it
//! borrows up to a second ahead of the clock; 4 sequence bits keep the files small). Without a stored mark the second run repeats the first
//! one's IDs whenever it starts before the first one's newest ID time; with the README's
//! recipe (a mark stored ahead of the IDs, the generator fenced there, the next run
//! resuming after it) it repeats none.

use snowdrift::{Clock, Generator, IdGenerator, Layout, MonotonicClock, Policy};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in a child process: the run's output file, and the mark file when it uses the recipe.
const OUT: &str = "SNOWDRIFT_RESTART_OUT";
const MARK: &str = "SNOWDRIFT_RESTART_MARK";
const NODE: u64 = 42;
/// 16 IDs per ms: the default layout's fields with 4 sequence bits.
const LAYOUT: Layout = match Layout::builder()
    .time_bits(41)
    .node_bits(10)
    .sequence_bits(4)
    .epoch_ms(1_735_689_600_000)
    .build()
{
    Ok(layout) => layout,
    Err(_) => panic!("a valid layout"),
};
/// A second and a quarter's worth at the layout's ceiling: the run ends a second (the
/// policy's bound) ahead of its clock.
const COUNT: usize = 20_000;

/// The README's recipe: store a mark 10 s ahead of the clock and fence the generator
/// there (on start, and again before the clock reaches the mark).
fn keep_ahead(generator: &mut impl IdGenerator, file: &Path) -> std::io::Result<()> {
    let mark = generator
        .clock()
        .now_ms()
        .max(generator.issued_through_ms())
        + 10_000;
    fs::write(file, mark.to_string())?;
    generator.set_fence_ms(mark);
    Ok(())
}

/// One run, in a child process: its first clock reading, then every ID, to `out`.
fn run(out: &Path, mark_file: Option<&Path>) {
    let mut generator =
        Generator::new(MonotonicClock::new(), LAYOUT, NODE, Policy::DEFAULT).unwrap();
    let started_ms = generator.clock().now_ms();
    if let Some(file) = mark_file {
        if let Ok(mark) = fs::read_to_string(file) {
            generator
                .resume_after_ms(mark.trim().parse().unwrap())
                .unwrap();
        }
        keep_ahead(&mut generator, file).unwrap();
    }
    let mut ids = vec![0u64; COUNT];
    assert_eq!(generator.fill(&mut ids).unwrap(), COUNT);
    let mut w = BufWriter::new(fs::File::create(out).unwrap());
    w.write_all(&started_ms.to_le_bytes()).unwrap();
    for id in ids {
        w.write_all(&id.to_le_bytes()).unwrap();
    }
    w.flush().unwrap();
}

/// Runs this test again in a child process as one run, to `out`.
fn child(test: &str, out: &Path, mark_file: Option<&Path>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--test-threads=1"])
        .env(OUT, out);
    if let Some(file) = mark_file {
        command.env(MARK, file);
    }
    let status = command.status().unwrap();
    assert!(status.success(), "the run failed: {status}");
}

/// A run's first clock reading and its IDs.
fn read_run(out: &Path) -> (u64, Vec<u64>) {
    let bytes = fs::read(out).unwrap();
    let mut words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()));
    let started_ms = words.next().unwrap();
    (started_ms, words.collect())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snowdrift-restart-{}-{name}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// IDs of `second` that `first` issued too.
fn repeated(first: &[u64], second: &[u64]) -> usize {
    let mut first = first.to_vec();
    first.sort_unstable();
    second
        .iter()
        .filter(|id| first.binary_search(id).is_ok())
        .count()
}

/// The newest ID time of a run, Unix ms.
fn newest_ms(ids: &[u64]) -> u64 {
    let newest = ids.iter().max().unwrap();
    LAYOUT.decode(*newest).unwrap().time_ms
}

#[test]
fn a_restart_sooner_than_the_lead_repeats_ids_without_a_stored_mark() {
    if let Ok(out) = std::env::var(OUT) {
        return run(Path::new(&out), None);
    }
    let dir = scratch("bare");
    let test = "a_restart_sooner_than_the_lead_repeats_ids_without_a_stored_mark";
    child(test, &dir.join("1"), None);
    child(test, &dir.join("2"), None);
    let (_, first) = read_run(&dir.join("1"));
    let (second_started_ms, second) = read_run(&dir.join("2"));
    let lead_ms = newest_ms(&first);
    fs::remove_dir_all(&dir).unwrap();
    if second_started_ms < lead_ms {
        // The second run started while the first one's IDs were still ahead of the clock.
        assert!(
            repeated(&first, &second) > 0,
            "the second run started {} ms before the first one's newest ID time, yet repeated none",
            lead_ms - second_started_ms
        );
    }
}

#[test]
fn a_restart_with_the_stored_mark_recipe_repeats_no_id() {
    if let Ok(out) = std::env::var(OUT) {
        let mark = std::env::var(MARK).unwrap();
        return run(Path::new(&out), Some(Path::new(&mark)));
    }
    let dir = scratch("mark");
    let mark = dir.join("node-42.mark");
    let test = "a_restart_with_the_stored_mark_recipe_repeats_no_id";
    child(test, &dir.join("1"), Some(&mark));
    child(test, &dir.join("2"), Some(&mark));
    let (_, first) = read_run(&dir.join("1"));
    let (_, second) = read_run(&dir.join("2"));
    let repeats = repeated(&first, &second);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        repeats, 0,
        "the second run repeated {repeats} IDs of the first"
    );
    assert!(
        second.iter().min() > first.iter().max(),
        "the second run went below the first one's newest ID"
    );
}
