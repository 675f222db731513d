//! snowdrift against its peers (`ferroid`, `snowflaked`, `snowflake_me`), measured in one
//! process and printed as a markdown table: `cargo xtask bench`
//! (crate `snowdrift-bench`, so the peers stay out of the core's dependencies).
//!
//! How it measures:
//! - Every figure is the median of many short samples (31 of 4 ms; 45 of 1 ms on the
//!   real-clock rows, 93 on the two-thread row); the contenders of a row take turns sample
//!   by sample, so a burst of load from elsewhere on the machine hits all of them alike.
//!   Each contender is warmed up and calibrated first. Results go through `black_box`.
//! - Every call is the whole call a user makes (`next()` returning a `Result`, a batch
//!   written to memory, a formatted string), never a part of it.
//! - Everyone uses the Twitter layout (41-bit time, 10-bit node, 12-bit sequence).
//! - *Real clock*: a 12-bit sequence allows 4096 IDs per millisecond, so a tight loop on a
//!   real clock would mostly measure waiting for the next millisecond. These rows run in
//!   bursts of [`BURST`] calls, each starting in a fresh millisecond, and time only the
//!   bursts: the cost of a call that does not have to wait.
//! - *Fake clock*: a clock whose reading is a plain field (`Cell`, or a relaxed atomic
//!   load where it must be `Sync`), as cheap as ferroid's cached clock, that moves one
//!   millisecond forward only when a generator waits for it (snowdrift's `Clock::relax`,
//!   ferroid's back-off closure). snowflake_me takes its clock as a `dyn Fn` and has no
//!   wait hook, so its fake clock moves forward by 1/4096 ms per read (per batch: 1 ms).
//! - *Sustained*: each generator runs flat out for one second on its own real clock; only
//!   correct IDs count (distinct across threads, increasing within each thread); best of
//!   three runs.
//! - *Seal*: `Sealer::seal` and `open` (FF1 over AES, no peer crate) against their floor in
//!   the same run: the AES block encryptions FF1 needs for one 63-bit ID, timed alone.
//!   FF1 makes ten rounds, each an AES-CBC-MAC over `P || Q`: two blocks for a short tweak
//!   (`S` needs no more, `d` = 8 bytes ≤ 16), 20 in all; `P` and the tweak's whole blocks
//!   are the same in every round, so `Sealer::new` MACs them once, leaving one block per
//!   round that depends on the data: ten, each waiting for the one before. The floor is
//!   ten such chained encryptions, under the same key size.

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicU64,
    Ordering::{AcqRel, Acquire, Relaxed},
};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroid::base32::Base32SnowExt;
use ferroid::generator::{AtomicSnowflakeGenerator, BasicSnowflakeGenerator};
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{TWITTER_EPOCH, TimeSource};
use snowdrift::{
    AtomicGenerator, Clock, Generator, IdGenerator, Layout, MonotonicClock, Policy, text,
};

/// Samples per contender and row; the figure is their median.
const SAMPLES: usize = 31;
/// Timed length of one sample.
const SAMPLE: Duration = Duration::from_millis(4);
/// Warm-up per contender before calibrating.
const WARM_UP: Duration = Duration::from_millis(60);
/// Calls per burst on a real clock: fewer than the 4096 a millisecond allows.
const BURST: u64 = 3000;
/// Samples of the real-clock rows: many short ones (about 13 bursts, 15 ms of wall time
/// each), so the contenders take turns often.
const BURST_SAMPLES: usize = 45;
const BURST_SAMPLE: Duration = Duration::from_millis(1);
/// IDs per batch call.
const BATCH: usize = 4096;
/// A 12-bit sequence at 1 ms per tick.
const CEILING: f64 = 4_096_000.0;
const TWITTER_EPOCH_MS: u64 = 1_288_834_974_657;
const NODE: u64 = 1;

// ---------------------------------------------------------------------------------------
// Fake clocks

/// One thread's fake clock: a `Cell` read; one millisecond forward when a generator waits.
struct FakeClock {
    now: Cell<u64>,
}

impl FakeClock {
    fn new(ms: u64) -> Self {
        FakeClock { now: Cell::new(ms) }
    }
    #[inline(always)]
    fn advance(&self) {
        self.now.set(self.now.get() + 1);
    }
}

impl Clock for FakeClock {
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        self.now.get()
    }
    #[inline(always)]
    fn relax(&self) {
        self.advance();
    }
}

impl TimeSource<u64> for &FakeClock {
    #[inline(always)]
    fn current_millis(&self) -> u64 {
        self.now.get()
    }
}

/// A fake clock threads can share: a relaxed atomic load (ferroid's cached clock is one).
struct SharedFakeClock {
    now: AtomicU64,
}

impl SharedFakeClock {
    fn new(ms: u64) -> Self {
        SharedFakeClock {
            now: AtomicU64::new(ms),
        }
    }
    #[inline(always)]
    fn advance(&self) {
        self.now.fetch_add(1, Relaxed);
    }
}

impl Clock for SharedFakeClock {
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        self.now.load(Relaxed)
    }
    #[inline(always)]
    fn relax(&self) {
        self.advance();
    }
}

impl TimeSource<u64> for &SharedFakeClock {
    #[inline(always)]
    fn current_millis(&self) -> u64 {
        self.now.load(Relaxed)
    }
}

/// Shared fake clocks at the current time, for snowdrift and (in its epoch's time) for
/// ferroid.
fn shared_fake_clocks() -> (SharedFakeClock, SharedFakeClock) {
    (
        SharedFakeClock::new(unix_ms()),
        SharedFakeClock::new(unix_ms() - TWITTER_EPOCH_MS),
    )
}

/// snowflake_me's clock is a `Fn() -> i64` without a wait hook: this one reads a field
/// and moves 1 ms forward every `reads_per_ms` reads (load and store, no locked
/// instruction: one thread at a time).
fn stepping_clock(start_ms: i64, reads_per_ms: i64) -> impl Fn() -> i64 + Send + Sync {
    let reads = AtomicI64::new(0);
    move || {
        let r = reads.load(Relaxed);
        reads.store(r + 1, Relaxed);
        start_ms + r / reads_per_ms
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

// ---------------------------------------------------------------------------------------
// Peers, configured like snowdrift's Twitter-layout generators

fn twitter_epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS)
}

fn snowflaked_gen() -> snowflaked::Generator {
    snowflaked::Generator::builder()
        .instance(NODE as u16)
        .epoch(twitter_epoch())
        .build()
}

fn snowflaked_sync_gen() -> snowflaked::sync::Generator {
    snowflaked::sync::Generator::builder()
        .instance(NODE as u16)
        .epoch(twitter_epoch())
        .build()
}

fn snowflake_me_builder<'a>() -> snowflake_me::Builder<'a> {
    snowflake_me::Snowflake::builder()
        .machine_id(&|| Ok(NODE as u16))
        .data_center_id(&|| Ok(0))
        .start_time(TWITTER_EPOCH_MS as i64)
}

fn snowflake_me_gen() -> snowflake_me::Snowflake {
    snowflake_me_builder()
        .finalize()
        .expect("snowflake_me config")
}

fn snowflake_me_fake(reads_per_ms: i64) -> snowflake_me::Snowflake {
    snowflake_me_builder()
        .clock_source(stepping_clock(unix_ms() as i64, reads_per_ms))
        .finalize()
        .expect("snowflake_me config")
}

/// An ID from ferroid's atomic generator on a shared fake clock, which moves on when the
/// generator would wait.
#[inline(always)]
fn ferroid_next<T: TimeSource<u64>>(
    generator: &AtomicSnowflakeGenerator<SnowflakeTwitterId, T>,
    clock: &SharedFakeClock,
) -> u64 {
    generator
        .next_id(|wait| {
            if wait > 0 {
                clock.advance();
            }
        })
        .to_raw()
}

/// The value of a call that returns a `Result`, as a caller's `?` or `unwrap` would take
/// it; a failure stops the benchmark (none is expected).
#[inline(always)]
fn ok<T, E: std::fmt::Debug>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => failed(e),
    }
}

#[cold]
#[inline(never)]
fn failed<E: std::fmt::Debug>(e: E) -> ! {
    panic!("a benchmarked call failed: {e:?}")
}

// ---------------------------------------------------------------------------------------
// The harness

/// Runs `iters` operations and returns the time they took.
type Runner<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

/// A tight loop of one operation.
fn looped<'a>(mut op: impl FnMut() + 'a) -> Runner<'a> {
    Box::new(move |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            op();
        }
        start.elapsed()
    })
}

/// A tight loop of one operation on input `i % 1024`, the index kept in a register (not
/// in memory the loop would have to go through on every turn).
fn looped_over<'a>(mut op: impl FnMut(usize) + 'a) -> Runner<'a> {
    Box::new(move |iters| {
        let start = Instant::now();
        for i in 0..iters as usize {
            op(i & 1023);
        }
        start.elapsed()
    })
}

/// Bursts of at most [`BURST`] operations, each starting in a fresh millisecond (the
/// gaps are not timed).
fn bursts<'a>(mut op: impl FnMut() + 'a) -> Runner<'a> {
    Box::new(move |iters| {
        let mut timed = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let gap = Instant::now() + Duration::from_micros(1100);
            while Instant::now() < gap {
                std::hint::spin_loop();
            }
            let n = left.min(BURST);
            let start = Instant::now();
            for _ in 0..n {
                op();
            }
            timed += start.elapsed();
            left -= n;
        }
        timed
    })
}

/// `iters` operations split over two threads; the wall time from the moment both start.
fn two_threads<'a, G: Sync + 'a>(generator: G, op: impl Fn(&G) + Sync + 'a) -> Runner<'a> {
    Box::new(move |iters| {
        let barrier = Barrier::new(2);
        let per_thread = iters.div_ceil(2);
        let spans: Vec<(Instant, Instant)> = thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let start = Instant::now();
                        for _ in 0..per_thread {
                            op(&generator);
                        }
                        (start, Instant::now())
                    })
                })
                .collect();
            joined(handles)
        });
        // Per operation across both threads: the wall time for all of them.
        wall(&spans).mul_f64(iters as f64 / (2 * per_thread) as f64)
    })
}

/// The threads' results, in order.
fn joined<T>(handles: Vec<thread::ScopedJoinHandle<'_, T>>) -> Vec<T> {
    handles
        .into_iter()
        .map(|h| h.join().expect("bench thread"))
        .collect()
}

/// From the first thread's start to the last one's end.
fn wall(spans: &[(Instant, Instant)]) -> Duration {
    let start = spans.iter().map(|s| s.0).min().expect("a span");
    let end = spans.iter().map(|s| s.1).max().expect("a span");
    end - start
}

/// `iters` operations split over `n` threads, each keeping every ID it gets; the wall
/// time from the moment all start. After each sample, outside the timed part, every ID is
/// checked: none repeated across the threads, each thread's increasing. A repeat stops
/// the benchmark.
fn threads_checked<'a, G: Sync + 'a>(
    n: usize,
    generator: G,
    op: impl Fn(&G) -> u64 + Sync + 'a,
) -> Runner<'a> {
    let mut kept: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut all = Vec::new();
    Box::new(move |iters| {
        let barrier = Barrier::new(n);
        let per_thread = iters.div_ceil(n as u64) as usize;
        let spans: Vec<(Instant, Instant)> = thread::scope(|s| {
            let handles: Vec<_> = kept
                .iter_mut()
                .map(|ids| {
                    let (barrier, generator, op) = (&barrier, &generator, &op);
                    ids.clear();
                    ids.reserve(per_thread);
                    s.spawn(move || {
                        barrier.wait();
                        let start = Instant::now();
                        for _ in 0..per_thread {
                            ids.push(op(generator));
                        }
                        (start, Instant::now())
                    })
                })
                .collect();
            joined(handles)
        });
        all.clear();
        for ids in &kept {
            if let Some(w) = ids.windows(2).find(|w| w[1] <= w[0]) {
                panic!("a thread's IDs went from {} to {}", w[0], w[1]);
            }
            all.extend_from_slice(ids);
        }
        all.sort_unstable();
        if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
            panic!("ID {} issued twice", w[0]);
        }
        wall(&spans).mul_f64(iters as f64 / (n * per_thread) as f64)
    })
}

/// 1, 2, 4, ... threads up to the machine's parallelism (which ends the list when it is
/// not a power of two).
fn thread_counts() -> Vec<usize> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts: Vec<usize> = (0..)
        .map(|k| 1usize << k)
        .take_while(|&n| n < cores)
        .collect();
    counts.push(cores);
    counts
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Nanoseconds per operation for each runner: warm-up, calibration, then [`SAMPLES`]
/// interleaved samples; the median of each.
fn measure(runners: &mut [Runner<'_>], per_op: u64) -> Vec<f64> {
    measure_n(runners, per_op, SAMPLES, SAMPLE)
}

/// [`measure`] with `samples` samples of `sample` each: more and shorter samples
/// interleave the contenders more finely.
fn measure_n(
    runners: &mut [Runner<'_>],
    per_op: u64,
    samples: usize,
    sample: Duration,
) -> Vec<f64> {
    let mut iters = Vec::with_capacity(runners.len());
    for run in runners.iter_mut() {
        let started = Instant::now();
        let mut n = 16u64;
        let calibrated = loop {
            let t = run(n);
            if t < sample / 4 {
                n *= 2;
                continue;
            }
            if started.elapsed() >= WARM_UP {
                break (n as f64 * sample.as_secs_f64() / t.as_secs_f64()).ceil() as u64;
            }
        };
        iters.push(calibrated.max(1));
    }
    let mut times = vec![Vec::with_capacity(samples); runners.len()];
    for _ in 0..samples {
        for (i, run) in runners.iter_mut().enumerate() {
            let t = run(iters[i]);
            times[i].push(t.as_nanos() as f64 / (iters[i] * per_op) as f64);
        }
    }
    times.into_iter().map(median).collect()
}

// ---------------------------------------------------------------------------------------
// Sustained rate

/// Calls `next` until `deadline`, keeping the IDs (up to `out`'s capacity).
fn collect_until(deadline: Instant, out: &mut Vec<u64>, mut next: impl FnMut() -> u64) {
    out.clear();
    loop {
        for _ in 0..256 {
            let id = next();
            if out.len() < out.capacity() {
                out.push(id);
            }
        }
        if Instant::now() >= deadline {
            return;
        }
    }
}

/// Correct IDs among the threads' outputs: distinct overall, minus every ID that is not
/// above its thread's previous one. Sorts the buffers in place.
fn correct(a: &mut [u64], b: &mut [u64]) -> u64 {
    let mut out_of_order = 0u64;
    for ids in [&*a, &*b] {
        out_of_order += ids.windows(2).filter(|w| w[1] <= w[0]).count() as u64;
    }
    a.sort_unstable();
    b.sort_unstable();
    // Count the distinct values of the two sorted lists together.
    let (mut i, mut j, mut distinct, mut last) = (0, 0, 0u64, None);
    while i < a.len() || j < b.len() {
        let v = if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if last != Some(v) {
            distinct += 1;
            last = Some(v);
        }
    }
    distinct.saturating_sub(out_of_order)
}

const RUN: Duration = Duration::from_secs(1);

/// Room for the IDs of one thread's run, allocated and touched once, before any run, so
/// that no run pays for first-touch page faults.
struct Buffers {
    a: Vec<u64>,
    b: Vec<u64>,
}

impl Buffers {
    fn new() -> Self {
        let keep = 6_000_000; // 1.5 times what one second at the ceiling can hold
        let touched = |_| {
            let mut v = vec![1u64; keep];
            v.clear();
            v
        };
        Buffers {
            a: touched(0),
            b: touched(1),
        }
    }
}

/// How long a generator may take to spend its borrow credit: one no faster than the
/// ceiling never does.
const CREDIT_LIMIT: Duration = Duration::from_secs(3);

/// The borrow credit a run spent before its steady state: the IDs it issued beyond the
/// ceiling's pace, and how far ahead of the clock its newest ID then was.
#[derive(Clone, Copy, Default)]
struct Credit {
    ids: f64,
    ahead_ms: f64,
}

/// How far ahead of the wall clock the time of `id` (Twitter layout) is, in ms.
fn ahead_ms(id: u64) -> i64 {
    let time_ms = Layout::TWITTER.decode(id).map_or(0, |p| p.time_ms);
    time_ms as i64 - unix_ms() as i64
}

/// How far ahead of the clock a generator with `policy` runs before it waits: its newest
/// ID within 2 ms of the bound means the credit is spent. `None`: it never runs ahead.
fn credit_target(policy: Policy) -> Option<i64> {
    match policy {
        Policy::Borrow { max_ahead_ms } => Some(i64::from(max_ahead_ms) - 2),
        _ => None,
    }
}

/// Calls `next` until its IDs are `target` ms ahead of the clock (or for
/// [`CREDIT_LIMIT`]); nothing for a generator that does not borrow (`None`).
fn spend_credit(target: Option<i64>, mut next: impl FnMut() -> u64) -> Credit {
    let Some(target) = target else {
        return Credit::default();
    };
    let start = Instant::now();
    let mut ids = 0u64;
    loop {
        let mut last = 0;
        for _ in 0..256 {
            last = next();
        }
        ids += 256;
        let ahead = ahead_ms(last);
        if ahead >= target || start.elapsed() >= CREDIT_LIMIT {
            let beyond = ids as f64 - CEILING * start.elapsed().as_secs_f64();
            return Credit {
                ids: beyond,
                ahead_ms: ahead as f64,
            };
        }
    }
}

/// Correct IDs per second from one thread over [`RUN`], once the borrow credit is spent
/// (`target`, see [`credit_target`]), and that credit.
fn sustained_one(
    buf: &mut Buffers,
    target: Option<i64>,
    mut next: impl FnMut() -> u64,
) -> (f64, Credit) {
    let credit = spend_credit(target, &mut next);
    let start = Instant::now();
    collect_until(start + RUN, &mut buf.a, &mut next);
    let elapsed = start.elapsed();
    buf.b.clear();
    let rate = correct(&mut buf.a, &mut buf.b) as f64 / elapsed.as_secs_f64();
    (rate, credit)
}

/// Correct IDs per second from two threads sharing `generator` over [`RUN`], once the
/// borrow credit is spent (both threads take IDs until either sees it spent), and that
/// credit.
fn sustained_two<G: Sync>(
    buf: &mut Buffers,
    target: Option<i64>,
    generator: &G,
    next: impl Fn(&G) -> u64 + Sync,
) -> (f64, Credit) {
    let barrier = Barrier::new(2);
    let next = &next;
    let spent = AtomicBool::new(target.is_none());
    let credit_ids = AtomicU64::new(0);
    let credit_ahead = AtomicI64::new(0);
    let credit_start = Instant::now();
    let spans: Vec<(Instant, Instant, Instant)> = thread::scope(|s| {
        let handles: Vec<_> = [&mut buf.a, &mut buf.b]
            .into_iter()
            .map(|ids| {
                let (barrier, spent) = (&barrier, &spent);
                let (credit_ids, credit_ahead) = (&credit_ids, &credit_ahead);
                s.spawn(move || {
                    barrier.wait();
                    let mut taken = 0u64;
                    while !spent.load(Relaxed) {
                        let mut last = 0;
                        for _ in 0..256 {
                            last = next(generator);
                        }
                        taken += 256;
                        let ahead = ahead_ms(last);
                        let done = target.is_some_and(|t| ahead >= t);
                        if done || credit_start.elapsed() >= CREDIT_LIMIT {
                            credit_ahead.store(ahead, Relaxed);
                            spent.store(true, Relaxed);
                        }
                    }
                    credit_ids.fetch_add(taken, Relaxed);
                    let spent_at = Instant::now();
                    barrier.wait();
                    let start = Instant::now();
                    collect_until(start + RUN, ids, || next(generator));
                    (spent_at, start, Instant::now())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .collect()
    });
    let spent_at = spans.iter().map(|r| r.0).max().expect("two runs");
    let start = spans.iter().map(|r| r.1).min().expect("two runs");
    let end = spans.iter().map(|r| r.2).max().expect("two runs");
    let credit = match target {
        Some(_) => Credit {
            ids: credit_ids.load(Relaxed) as f64
                - CEILING * (spent_at - credit_start).as_secs_f64(),
            ahead_ms: credit_ahead.load(Relaxed) as f64,
        },
        None => Credit::default(),
    };
    let rate = correct(&mut buf.a, &mut buf.b) as f64 / (end - start).as_secs_f64();
    (rate, credit)
}

/// One sustained run: correct IDs per second and the credit spent first.
type SustainedRun<'a> = dyn FnMut(&mut Buffers) -> (f64, Credit) + 'a;

/// Each contender's best of three runs (a rate can only be lowered by other work on the
/// machine; the credit is that run's), in an order that changes from round to round so that no one always goes
/// first.
fn best_of_three(buf: &mut Buffers, runs: &mut [&mut SustainedRun<'_>]) -> Vec<(f64, Credit)> {
    let n = runs.len();
    let mut best = vec![(0.0f64, Credit::default()); n];
    for round in 0..3 {
        for k in 0..n {
            let i = if round % 2 == 0 {
                (k + round) % n
            } else {
                n - 1 - k
            };
            let run = runs[i](buf);
            if run.0 > best[i].0 {
                best[i] = run;
            }
        }
    }
    best
}

// ---------------------------------------------------------------------------------------
// The table

const PEERS: [&str; 3] = ["ferroid", "snowflaked", "snowflake_me"];

enum Unit {
    Ns,
    Rate,
    /// IDs, with how far ahead of the clock the newest one was.
    Credit {
        ahead_ms: f64,
    },
}

struct Row {
    name: String,
    unit: Unit,
    ours: f64,
    peers: [Option<f64>; 3],
    /// The row's own target: its text and whether it holds.
    target: Option<(String, bool)>,
}

impl Row {
    fn ns(name: &str, ours: f64, peers: [Option<f64>; 3]) -> Row {
        Row {
            name: name.into(),
            unit: Unit::Ns,
            ours,
            peers,
            target: None,
        }
    }

    fn target(mut self, text: String, met: bool) -> Row {
        self.target = Some((text, met));
        self
    }

    fn cell(&self, v: f64) -> String {
        match self.unit {
            Unit::Ns if v < 10.0 => format!("{v:.2} ns"),
            Unit::Ns => format!("{v:.1} ns"),
            Unit::Rate => format!("{:.3} M/s ({:.2}%)", v / 1e6, 100.0 * v / CEILING),
            Unit::Credit { ahead_ms } => {
                format!("{:.3} M IDs, {ahead_ms:.0} ms ahead", v / 1e6)
            }
        }
    }

    /// The fastest peer's figure over ours: 1.00 or more means snowdrift is at least as
    /// fast as every peer on the row.
    fn ratio(&self) -> Option<f64> {
        let peers = self.peers.iter().flatten().copied();
        match self.unit {
            Unit::Ns => peers.reduce(f64::min).map(|best| best / self.ours),
            Unit::Rate => peers.reduce(f64::max).map(|best| self.ours / best),
            Unit::Credit { .. } => None,
        }
    }

    fn print(&self) {
        let mut line = format!("| {} | {} |", self.name, self.cell(self.ours));
        for p in &self.peers {
            match p {
                Some(v) => line += &format!(" {} |", self.cell(*v)),
                None => line += " — |",
            }
        }
        // Shown with two decimals; "at least as fast" is judged on the shown figure.
        let ratio = self.ratio().map(|r| (r * 100.0).round() / 100.0);
        match ratio {
            Some(r) => line += &format!(" {r:.2}× |"),
            None => line += " — |",
        }
        let mut goals = Vec::new();
        let mut met = true;
        if let Some((text, ok)) = &self.target {
            goals.push(text.clone());
            met &= ok;
        }
        if let Some(r) = ratio {
            goals.push("≥ 1.00× every peer".into());
            met &= r >= 1.0;
        }
        if goals.is_empty() {
            line += " — | — |";
        } else {
            line += &format!(
                " {} | {} |",
                goals.join("; "),
                if met { "yes" } else { "**no**" }
            );
        }
        println!("{line}");
    }
}

/// Whether to run a section: all of them, or those named on the command line
/// (`cargo xtask bench -- fake text`; sections: real, fake, threads, batch, text,
/// sustained, seal).
fn wanted(section: &str) -> bool {
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    names.is_empty() || names.iter().any(|n| n == section)
}

fn progress(what: &str) {
    eprintln!("  measuring: {what}");
}

fn cpu() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}

/// One section of the table: its rows, measured for a layout and a policy.
type Section = fn(Layout, Policy) -> Vec<Row>;

fn main() {
    let began = Instant::now();
    eprintln!("snowdrift benchmarks (about 45 s)");
    let (layout, policy) = (Layout::TWITTER, Policy::DEFAULT);
    let sections: [(&str, Section); 7] = [
        ("real", real_clock),
        ("fake", fake_clocks),
        ("threads", threads),
        ("batch", batches),
        ("text", decode_and_text),
        ("sustained", sustained),
        ("seal", seal),
    ];
    let mut rows = Vec::new();
    for (name, section) in sections {
        if wanted(name) {
            rows.extend(section(layout, policy));
        }
    }
    print_table(&rows);
    eprintln!("benchmarks took {:.0} s", began.elapsed().as_secs_f64());
}

/// Sealed IDs against their floor: ten chained AES block encryptions.
fn seal(layout: Layout, _: Policy) -> Vec<Row> {
    use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
    let mut rows = Vec::new();
    for (bits, key) in [(128, &[0x2b_u8; 16][..]), (256, &[0x2b_u8; 32][..])] {
        progress(&format!(
            "Sealer::seal and open, AES-{bits}, and their floor"
        ));
        let sealer = ok(snowdrift::Sealer::new(&layout, key, b"k1"));
        let aes128 = aes::Aes128::new_from_slice(&key[..16]).ok();
        let aes256 = aes::Aes256::new_from_slice(key).ok();
        let ids: Vec<u64> = (0..1024u64)
            .map(|i| (i << 22) | 1_541_815_603_606_036_480)
            .collect();
        let sealed: Vec<u64> = ids.iter().map(|&id| ok(sealer.seal(id))).collect();
        let r = measure(
            &mut [
                looped_over(|i| {
                    // Ten encryptions, each of the one before xored with the input.
                    let mut block = GenericArray::from([0u8; 16]);
                    block[8..].copy_from_slice(&ids[i].to_be_bytes());
                    for round in 0..10u8 {
                        block[7] ^= round;
                        match (&aes128, &aes256) {
                            (Some(c), _) if bits == 128 => c.encrypt_block(&mut block),
                            (_, Some(c)) => c.encrypt_block(&mut block),
                            _ => unreachable!(),
                        }
                    }
                    black_box(block);
                }),
                looped_over(|i| {
                    black_box(ok(sealer.seal(black_box(ids[i]))));
                }),
                looped_over(|i| {
                    black_box(ok(sealer.open(black_box(sealed[i]))));
                }),
            ],
            1,
        );
        rows.push(Row::ns(
            &format!("floor: 10 chained AES-{bits} block encryptions (FF1's rounds)"),
            r[0],
            [None; 3],
        ));
        for (what, ns) in [("seal", r[1]), ("open", r[2])] {
            rows.push(
                Row::ns(
                    &format!("`Sealer::{what}`, AES-{bits}, 63-bit ID"),
                    ns,
                    [None; 3],
                )
                .target(
                    format!("≤ 1.5× floor (is {:.2}×)", ns / r[0]),
                    ns <= 1.5 * r[0],
                ),
            );
        }
    }
    rows
}

/// The clock alone, and next() on the real clock.
fn real_clock(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    progress("clock read and next() on the real clock");
    let clock = MonotonicClock::new();
    let mut real_gen = ok(Generator::new(MonotonicClock::new(), layout, NODE, policy));
    let mut sf_gen = snowflaked_gen();
    let sm_gen = snowflake_me_gen();
    let r = measure_n(
        &mut [
            bursts(|| {
                black_box(black_box(&clock).now_ms());
            }),
            bursts(|| {
                black_box(ok(real_gen.next()));
            }),
            bursts(|| {
                black_box(sf_gen.generate::<u64>());
            }),
            bursts(|| {
                black_box(ok(sm_gen.next_id()).as_u64());
            }),
        ],
        1,
        BURST_SAMPLES,
        BURST_SAMPLE,
    );
    let clock_ns = r[0];
    rows.push(Row::ns(
        "clock read alone (`MonotonicClock::now_ms`)",
        clock_ns,
        [None; 3],
    ));
    rows.push(
        Row::ns(
            "`Generator::next()`, real clock",
            r[1],
            [None, Some(r[2]), Some(r[3])],
        )
        .target(
            format!("≤ 1.10× clock read (is {:.2}×)", r[1] / clock_ns),
            r[1] <= 1.1 * clock_ns,
        ),
    );

    progress("AtomicGenerator::next() on the real clock");
    let real_atomic = ok(AtomicGenerator::new(
        MonotonicClock::new(),
        layout,
        NODE,
        policy,
    ));
    let sf_sync = snowflaked_sync_gen();
    let sm_gen = snowflake_me_gen();
    let r = measure_n(
        &mut [
            bursts(|| {
                black_box(ok(real_atomic.next()));
            }),
            bursts(|| {
                black_box(sf_sync.generate::<u64>());
            }),
            bursts(|| {
                black_box(ok(sm_gen.next_id()).as_u64());
            }),
        ],
        1,
        BURST_SAMPLES,
        BURST_SAMPLE,
    );
    rows.push(Row::ns(
        "`AtomicGenerator::next()`, real clock",
        r[0],
        [None, Some(r[1]), Some(r[2])],
    ));
    rows
}

/// Pure cost: fake clocks.
fn fake_clocks(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    progress("Generator::next() on a fake clock");
    let ours_clock = FakeClock::new(unix_ms());
    let ferroid_clock = FakeClock::new(unix_ms() - TWITTER_EPOCH_MS);
    let mut fake_gen = ok(Generator::new(&ours_clock, layout, NODE, policy));
    let ferroid_basic = BasicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(NODE, &ferroid_clock);
    let r = measure(
        &mut [
            looped(|| {
                black_box(ok(fake_gen.next()));
            }),
            looped(|| {
                let id = ferroid_basic.next_id(|_| ferroid_clock.advance());
                black_box(id.to_raw());
            }),
        ],
        1,
    );
    rows.push(
        Row::ns(
            "`Generator::next()`, fake clock (pure cost)",
            r[0],
            [Some(r[1]), None, None],
        )
        .target("≤ 1.5 ns".into(), r[0] <= 1.5),
    );

    progress("AtomicGenerator::next() on a fake clock, one thread");
    let (ours_clock, ferroid_clock) = shared_fake_clocks();
    let atomic = ok(AtomicGenerator::new(&ours_clock, layout, NODE, policy));
    let ferroid_atomic =
        AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(NODE, &ferroid_clock);
    let sm_fake = snowflake_me_fake(4096);
    // The floor of any generator built on a compare-and-swap: a load and one
    // uncontended `lock cmpxchg` on this machine.
    let word = AtomicU64::new(0);
    let r = measure(
        &mut [
            looped(|| {
                let seen = word.load(Acquire);
                black_box(word.compare_exchange(seen, seen + 1, AcqRel, Acquire)).ok();
            }),
            looped(|| {
                black_box(ok(atomic.next()));
            }),
            looped(|| {
                black_box(ferroid_next(&ferroid_atomic, &ferroid_clock));
            }),
            looped(|| {
                black_box(ok(sm_fake.next_id()).as_u64());
            }),
        ],
        1,
    );
    rows.push(Row::ns(
        "reference: one uncontended compare-and-swap (`AtomicU64::compare_exchange`)",
        r[0],
        [None; 3],
    ));
    rows.push(
        Row::ns(
            "`AtomicGenerator::next()`, fake clock, uncontended",
            r[1],
            [Some(r[2]), None, Some(r[3])],
        )
        .target(
            format!("≤ 1.15× one compare-and-swap (is {:.2}×)", r[1] / r[0]),
            r[1] <= 1.15 * r[0],
        ),
    );

    progress("AtomicGenerator::next() on a fake clock, two threads");
    let (ours_clock, ferroid_clock) = shared_fake_clocks();
    let atomic = ok(AtomicGenerator::new(&ours_clock, layout, NODE, policy));
    let ferroid_atomic =
        AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(NODE, &ferroid_clock);
    // Whether both threads really run at once depends on what else the machine does, so
    // this row takes more samples.
    let r = measure_n(
        &mut [
            two_threads(&atomic, |g| {
                black_box(ok(g.next()));
            }),
            two_threads(&ferroid_atomic, |g| {
                black_box(ferroid_next(g, &ferroid_clock));
            }),
        ],
        1,
        3 * SAMPLES,
        SAMPLE,
    );
    rows.push(Row::ns(
        "`AtomicGenerator::next()`, fake clock, 2 threads (wall time per ID)",
        r[0],
        [Some(r[1]), None, None],
    ));
    rows
}

/// One shared generator from 1, 2, 4, ... threads, every ID kept and checked.
fn threads(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    for n in thread_counts() {
        progress(&format!(
            "AtomicGenerator::next() on a fake clock, {n} threads, every ID checked"
        ));
        let (ours_clock, ferroid_clock) = shared_fake_clocks();
        let atomic = ok(AtomicGenerator::new(&ours_clock, layout, NODE, policy));
        let ferroid_atomic =
            AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(NODE, &ferroid_clock);
        let r = measure_n(
            &mut [
                threads_checked(n, &atomic, |g| ok(g.next())),
                threads_checked(n, &ferroid_atomic, |g| ferroid_next(g, &ferroid_clock)),
            ],
            1,
            SAMPLES,
            SAMPLE,
        );
        let threads = if n == 1 { "thread" } else { "threads" };
        rows.push(Row::ns(
            &format!(
                "`AtomicGenerator::next()`, fake clock, {n} {threads}, every ID checked (wall time per ID)"
            ),
            r[0],
            [Some(r[1]), None, None],
        ));
    }
    rows
}

/// Batches.
fn batches(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    progress("batches of 4096 into a buffer");
    let ours_clock = FakeClock::new(unix_ms());
    let mut batch_gen = ok(Generator::new(&ours_clock, layout, NODE, policy));
    let shared_clock = SharedFakeClock::new(unix_ms());
    let batch_atomic = ok(AtomicGenerator::new(&shared_clock, layout, NODE, policy));
    let sm_batch = snowflake_me_fake(1);
    let mut buf = vec![0u64; BATCH];
    let mut buf2 = vec![0u64; BATCH];
    let mut sm_buf = Vec::with_capacity(BATCH);
    let r = measure(
        &mut [
            looped(|| {
                let n = ok(batch_gen.fill(&mut buf));
                black_box(&buf[..n]);
            }),
            looped(|| {
                let n = ok(batch_atomic.fill(&mut buf2));
                black_box(&buf2[..n]);
            }),
            looped(|| {
                sm_buf.clear();
                ok(sm_batch.next_ids_into(BATCH, &mut sm_buf));
                black_box(&sm_buf[..]);
            }),
        ],
        BATCH as u64,
    );
    rows.push(
        Row::ns(
            "batch per ID (`Generator::fill`, 4096 IDs)",
            r[0],
            [None, None, Some(r[2])],
        )
        .target("≤ 0.5 ns".into(), r[0] <= 0.5),
    );
    rows.push(
        Row::ns(
            "batch per ID (`AtomicGenerator::fill`, 4096 IDs)",
            r[1],
            [None, None, Some(r[2])],
        )
        .target("≤ 0.5 ns".into(), r[1] <= 0.5),
    );
    rows
}

/// Decode and text.
fn decode_and_text(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    progress("decode, base32 format and parse");
    let mut ids = vec![0u64; 1024];
    let decode_gen = ok(AtomicGenerator::new(
        MonotonicClock::new(),
        layout,
        513,
        policy,
    ));
    ok(decode_gen.fill(&mut ids));
    let ids: Vec<u64> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| id + ((i as u64 * 7919) & 0xfff)) // vary the sequence field
        .collect();
    assert_eq!(ids.len(), 1024);
    // `decode` gives the time in Unix milliseconds; the peers give their raw time
    // field, so their rows add the epoch to give the same answer.
    let r = measure(
        &mut [
            looped_over(|a| {
                black_box(ok(Layout::TWITTER.decode(black_box(ids[a]))));
            }),
            looped_over(|b| {
                let id = SnowflakeTwitterId::from_raw(black_box(ids[b]));
                black_box((
                    id.timestamp() + TWITTER_EPOCH_MS,
                    id.machine_id(),
                    id.sequence(),
                ));
            }),
            looped_over(|c| {
                use snowflaked::Snowflake;
                let id = black_box(ids[c]);
                black_box((
                    id.timestamp() + TWITTER_EPOCH_MS,
                    id.instance(),
                    id.sequence(),
                ));
            }),
            looped_over(|d| {
                let parts =
                    snowflake_me::DecomposedSnowflake::decompose(black_box(ids[d]), 41, 12, 5, 5);
                black_box((
                    parts.time + TWITTER_EPOCH_MS,
                    parts.data_center_id,
                    parts.machine_id,
                    parts.sequence,
                ));
            }),
        ],
        1,
    );
    rows.push(Row::ns(
        "decode (`Layout::TWITTER.decode`)",
        r[0],
        [Some(r[1]), Some(r[2]), Some(r[3])],
    ));

    // The same with a layout known only at run time (read from a configuration, say):
    // snowflake_me takes its field widths as arguments, so it is the peer here.
    let runtime_layout = black_box(Layout::TWITTER);
    let widths: [u8; 4] = black_box([41, 12, 5, 5]);
    let r = measure(
        &mut [
            looped_over(|a| {
                let layout = black_box(&runtime_layout);
                black_box(ok(layout.decode(black_box(ids[a]))));
            }),
            looped_over(|d| {
                let [t, s, dc, m] = *black_box(&widths);
                let parts =
                    snowflake_me::DecomposedSnowflake::decompose(black_box(ids[d]), t, s, dc, m);
                black_box((
                    parts.time + TWITTER_EPOCH_MS,
                    parts.data_center_id,
                    parts.machine_id,
                    parts.sequence,
                ));
            }),
        ],
        1,
    );
    rows.push(Row::ns(
        "decode, layout known only at run time",
        r[0],
        [None, None, Some(r[1])],
    ));
    let r = measure(
        &mut [
            looped_over(|a| {
                black_box(text::to_base32(black_box(ids[a])));
            }),
            looped_over(|b| {
                black_box(SnowflakeTwitterId::from_raw(black_box(ids[b])).encode());
            }),
            looped_over(|d| {
                black_box(snowflake_me::SnowflakeId::new(black_box(ids[d])).base32());
            }),
        ],
        1,
    );
    rows.push(Row::ns(
        "base32 format (`text::to_base32`)",
        r[0],
        [Some(r[1]), None, Some(r[2])],
    ));

    // Inputs as plain strings for everyone: the parse alone is timed.
    let ours_text: Vec<String> = ids
        .iter()
        .map(|&id| text::to_base32(id).to_string())
        .collect();
    let ferroid_text: Vec<String> = ids
        .iter()
        .map(|&id| {
            SnowflakeTwitterId::from_raw(id)
                .encode()
                .as_str()
                .to_string()
        })
        .collect();
    let sm_text: Vec<_> = ids
        .iter()
        .map(|&id| snowflake_me::SnowflakeId::new(id).base32())
        .collect();
    let r = measure(
        &mut [
            looped_over(|a| {
                black_box(ok(text::parse_base32(black_box(ours_text[a].as_str()))));
            }),
            looped_over(|b| {
                let s: &str = black_box(ferroid_text[b].as_str());
                black_box(ok(SnowflakeTwitterId::decode(s)).to_raw());
            }),
            looped_over(|d| {
                let s: &str = black_box(sm_text[d].as_str());
                black_box(ok(snowflake_me::SnowflakeId::from_base32(s)).as_u64());
            }),
        ],
        1,
    );
    rows.push(Row::ns(
        "base32 parse (`text::parse_base32`)",
        r[0],
        [Some(r[1]), None, Some(r[2])],
    ));
    rows
}

/// Sustained rate against the ceiling, once the borrow credit is spent, and the credit.
fn sustained(layout: Layout, policy: Policy) -> Vec<Row> {
    let mut rows = Vec::new();
    let target = credit_target(policy);
    progress(
        "IDs sustained over 1 s after the borrow credit, one thread (best of three runs each)",
    );
    let mut buf = Buffers::new();
    let r = best_of_three(
        &mut buf,
        &mut [
            &mut |buf| {
                let mut g = ok(Generator::new(MonotonicClock::new(), layout, NODE, policy));
                sustained_one(buf, target, || ok(g.next()))
            },
            &mut |buf| {
                let g = BasicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(
                    NODE,
                    ferroid::time::MonotonicClock::<1>::with_epoch(TWITTER_EPOCH),
                );
                sustained_one(buf, None, || g.next_id(|_| thread::yield_now()).to_raw())
            },
            &mut |buf| {
                let mut g = snowflaked_gen();
                sustained_one(buf, None, || g.generate::<u64>())
            },
            &mut |buf| {
                let g = snowflake_me_gen();
                sustained_one(buf, None, || ok(g.next_id()).as_u64())
            },
        ],
    );
    rows.push(sustained_row(
        "IDs sustained over 1 s once the borrow credit is spent, 1 thread (`Generator`)",
        r[0].0,
        [r[1].0, r[2].0, r[3].0],
    ));
    rows.push(credit_row(
        "borrow credit spent first, 1 thread (`Generator`): IDs beyond the ceiling's pace",
        r[0].1,
    ));

    progress(
        "IDs sustained over 1 s after the borrow credit, two threads (best of three runs each)",
    );
    let r = best_of_three(
        &mut buf,
        &mut [
            &mut |buf| {
                let g = ok(AtomicGenerator::new(
                    MonotonicClock::new(),
                    layout,
                    NODE,
                    policy,
                ));
                sustained_two(buf, target, &g, |g| ok(g.next()))
            },
            &mut |buf| {
                let g = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(
                    NODE,
                    ferroid::time::MonotonicClock::<1>::with_epoch(TWITTER_EPOCH),
                );
                sustained_two(buf, None, &g, |g| {
                    g.next_id(|_| thread::yield_now()).to_raw()
                })
            },
            &mut |buf| {
                let g = snowflaked_sync_gen();
                sustained_two(buf, None, &g, |g| g.generate::<u64>())
            },
            &mut |buf| {
                let g = Arc::new(snowflake_me_gen());
                sustained_two(buf, None, &g, |g| ok(g.next_id()).as_u64())
            },
        ],
    );
    rows.push(sustained_row(
        "IDs sustained over 1 s once the borrow credit is spent, 2 threads (`AtomicGenerator`)",
        r[0].0,
        [r[1].0, r[2].0, r[3].0],
    ));
    rows.push(credit_row(
        "borrow credit spent first, 2 threads (`AtomicGenerator`): IDs beyond the ceiling's pace",
        r[0].1,
    ));
    rows
}

/// The table of every row, and the notes that explain it.
fn print_table(rows: &[Row]) {
    println!();
    println!(
        "snowdrift {} vs ferroid 2.0, snowflaked 1.0, snowflake_me 2.2 ({}; medians of interleaved samples; Twitter layout)",
        snowdrift_version(),
        cpu()
    );
    println!();
    print!("| row | snowdrift |");
    for p in PEERS {
        print!(" {p} |");
    }
    println!(" fastest peer ÷ snowdrift | target | met |");
    println!("|---|---|---|---|---|---|---|---|");
    for row in rows {
        row.print();
    }
    println!();
    let notes = [
        "Ratio: the fastest peer's time over snowdrift's (for rates, snowdrift's rate over the best \
         peer's), judged as shown: 1.00× or more means snowdrift is at least as fast as every peer on the row.",
        "Real-clock rows time bursts of calls that never hit the 4096-per-ms ceiling. ferroid's \
         clock is a cached one, ticked by a background thread, so its next() is on the fake-clock rows.",
        "Fake clocks read a plain field and move on only when a generator waits (snowflake_me takes \
         a `dyn Fn` clock with no wait hook: one that moves 1/4096 ms per read, 1 ms per batch).",
        "2 threads: wall time per ID with both threads on one generator; it depends on whether the \
         two threads get two cores at once, which other work on the machine decides.",
        "Decode: the peers' raw time field plus their epoch, to give Unix ms as `decode` does \
         (which also rejects IDs above the layout).",
        "Sustained: only correct IDs count (distinct, increasing within each thread); best of three \
         one-second runs each, against the 4,096,000/s ceiling (a second spans parts of 1001 \
         milliseconds, and a generator at the borrow bound also ends the tick it was in when the \
         second began: up to 100.2%). Under `Borrow` a generator faster than the ceiling first runs up \
         to the bound ahead of the clock (its credit, the row below each: IDs issued beyond the \
         ceiling's pace, and how far ahead the newest was); the second is counted after that.",
        "Threads: one generator shared by N threads on a fake clock, every ID kept and checked \
         (none repeated, each thread's increasing) after each sample; wall time per ID.",
    ];
    for note in notes {
        println!("- {note}");
    }
}

/// The version of the snowdrift crate measured (this bench crate has its own).
fn snowdrift_version() -> &'static str {
    include_str!("../../core/Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or("?")
}

/// The borrow credit a sustained row spent before it counted (the peers do not borrow).
fn credit_row(name: &str, credit: Credit) -> Row {
    Row {
        name: name.into(),
        unit: Unit::Credit {
            ahead_ms: credit.ahead_ms,
        },
        ours: credit.ids,
        peers: [None; 3],
        target: None,
    }
}

fn sustained_row(name: &str, ours: f64, peers: [f64; 3]) -> Row {
    let pct = 100.0 * ours / CEILING;
    Row {
        name: name.into(),
        unit: Unit::Rate,
        ours,
        peers: peers.map(Some),
        target: Some(("≥ 99.5% of 4.096 M/s".into(), pct >= 99.5)),
    }
}
