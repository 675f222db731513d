//! A fleet member for chaos runs: leases a node id, writes the IDs it issues to a file,
//! takes a new lease whenever its lease lapses or is lost, and (with `--clock-steps`)
//! issues under a clock that keeps stepping back.
//!
//! ```text
//! fleet_worker --redis 127.0.0.1:PORT --space NAME --node-bits 3 --ttl-ms 1000 \
//!     --skew-ms 200 --seconds 20 --out FILE [--clock-steps] [--cluster]
//! fleet_worker --postgres postgres://USER@127.0.0.1:PORT/DB --space NAME ...
//! ```
//!
//! `--postgres` (built with the `postgres` feature) leases from the tables of the schema
//! "snowdrift", which must be set up.
//!
//! IDs are appended to FILE as decimal lines, one `write` per burst, so a killed worker
//! leaves whole lines only. SIGTERM, or the end of `--seconds`, releases the lease and
//! exits 0; a one-line summary goes to stderr.

use snowdrift::{Clock, Layout, Policy};
use snowdrift_lease::{Connector, Error, Lease, Space, Store};
use std::fs::OpenOptions;
use std::io::Write;
use std::process::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const EPOCH_MS: u64 = 1_704_067_200_000;
const MAX_BURST: u64 = 256;

struct Args {
    redis: String,
    postgres: String,
    space: String,
    node_bits: u32,
    ttl_ms: u64,
    skew_ms: u64,
    seconds: u64,
    out: String,
    clock_steps: bool,
    cluster: bool,
}

fn usage(problem: &str) -> ! {
    eprintln!("fleet_worker: {problem}");
    eprintln!(
        "usage: fleet_worker --redis HOST:PORT|--postgres URL --space NAME --node-bits N --ttl-ms MS \
         --skew-ms MS --seconds S --out FILE [--clock-steps] [--cluster]"
    );
    exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        redis: String::new(),
        postgres: String::new(),
        space: String::new(),
        node_bits: 3,
        ttl_ms: 1_000,
        skew_ms: 200,
        seconds: 20,
        out: String::new(),
        clock_steps: false,
        cluster: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        let number = |v: String| -> u64 {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("{flag} takes a number, not '{v}'")))
        };
        match flag.as_str() {
            "--redis" => args.redis = value(),
            "--postgres" => args.postgres = value(),
            "--space" => args.space = value(),
            "--node-bits" => args.node_bits = number(value()) as u32,
            "--ttl-ms" => args.ttl_ms = number(value()),
            "--skew-ms" => args.skew_ms = number(value()),
            "--seconds" => args.seconds = number(value()),
            "--out" => args.out = value(),
            "--clock-steps" => args.clock_steps = true,
            "--cluster" => args.cluster = true,
            other => usage(&format!("unknown argument '{other}'")),
        }
    }
    if args.redis.is_empty() == args.postgres.is_empty() {
        usage("one of --redis and --postgres is required");
    }
    if args.space.is_empty() || args.out.is_empty() {
        usage("--space and --out are required");
    }
    args
}

/// xorshift64: enough randomness for timing jitter and clock steps.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let pid = u64::from(std::process::id());
        Rng(pid.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A number in `lo..=hi`.
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// How far behind wall time a stepping clock may be.
const MAX_BEHIND_MS: u64 = 3_000;

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Wall time plus an offset that is never positive: with `steps`, it starts 1500–3000 ms
/// behind (a process whose clock is behind by more than a lease lasts, so it would reissue
/// a dead holder's IDs unless the lease fenced it), drops by 1–1500 ms every 300–800 ms
/// (at most 3000 ms behind in all) and creeps back toward 0 at half the speed of real time.
#[derive(Clone)]
struct SteppingClock {
    steps: bool,
    state: Arc<Mutex<StepState>>,
}

struct StepState {
    offset_ms: u64, // how far behind wall time
    last_wall: u64,
    next_step: u64,
    rng: Rng,
}

impl SteppingClock {
    fn new(steps: bool) -> Self {
        let now = wall_ms();
        let mut rng = Rng::seeded();
        SteppingClock {
            steps,
            state: Arc::new(Mutex::new(StepState {
                offset_ms: if steps {
                    rng.between(MAX_BEHIND_MS / 2, MAX_BEHIND_MS)
                } else {
                    0
                },
                last_wall: now,
                next_step: now + 500,
                rng,
            })),
        }
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> u64 {
        let wall = wall_ms();
        if !self.steps {
            return wall;
        }
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = wall.saturating_sub(s.last_wall);
        s.last_wall = s.last_wall.max(wall);
        s.offset_ms = s.offset_ms.saturating_sub(elapsed / 2);
        if wall >= s.next_step {
            let back = s.rng.between(1, 1_500);
            s.offset_ms = (s.offset_ms + back).min(MAX_BEHIND_MS);
            s.next_step = wall + s.rng.between(300, 800);
        }
        wall.saturating_sub(s.offset_ms)
    }

    fn relax(&self) {
        std::thread::yield_now();
    }
}

#[derive(Default)]
struct Totals {
    ids: u64,
    leases: u64,
}

fn run<K: Store>(store: K, args: &Args, term: &AtomicBool) -> Totals {
    let layout = Layout::builder()
        .time_bits(41)
        .node_bits(args.node_bits)
        .sequence_bits(12)
        .unit_ms(1)
        .epoch_ms(EPOCH_MS)
        .build()
        .unwrap_or_else(|e| usage(&format!("layout: {e}")));
    let space = Space::new(args.space.clone(), layout)
        .ttl_ms(args.ttl_ms)
        .skew_ms(args.skew_ms)
        .holder(format!("rust fleet_worker pid {}", std::process::id()))
        .policy(Policy::Wait { max_wait_ms: 50 })
        .clock(SteppingClock::new(args.clock_steps));
    if let Err(e) = space.validate() {
        usage(&e.to_string());
    }
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .unwrap_or_else(|e| usage(&format!("cannot open {}: {e}", args.out)));
    let mut rng = Rng::seeded();
    let mut totals = Totals::default();
    let mut lease: Option<Lease<SteppingClock>> = None;
    let end = Instant::now() + Duration::from_secs(args.seconds);
    let mut buf = String::with_capacity(MAX_BURST as usize * 21);
    while !term.load(Ordering::Relaxed) && Instant::now() < end {
        let held = match lease {
            Some(ref held) => held,
            None => match Lease::acquire(&store, &space) {
                Ok(fresh) => {
                    totals.leases += 1;
                    lease.insert(fresh)
                }
                Err(e) if e.is_transient() => {
                    sleep(Duration::from_millis(rng.between(50, 100)));
                    continue;
                }
                Err(e) => {
                    eprintln!("fleet_worker: {e}");
                    exit(1);
                }
            },
        };
        buf.clear();
        let mut written = 0;
        let (mut renew, mut clock_trouble) = (false, false);
        for _ in 0..rng.between(1, MAX_BURST) {
            match held.generator().next() {
                Ok(id) => {
                    buf.push_str(&id.to_string());
                    buf.push('\n');
                    written += 1;
                }
                Err(e) if e.kind() == snowdrift::ErrorKind::PastFence => {
                    renew = true;
                    break;
                }
                Err(_) => {
                    // Clock stepped back beyond the policy's wait, or stalled.
                    clock_trouble = true;
                    break;
                }
            }
        }
        if written > 0 {
            if let Err(e) = out.write_all(buf.as_bytes()).and_then(|()| out.flush()) {
                eprintln!("fleet_worker: writing {}: {e}", args.out);
                exit(1);
            }
            totals.ids += written;
        }
        if renew || !held.is_live() {
            if let Some(old) = lease.take() {
                let _ = old.release();
            }
            continue;
        }
        if clock_trouble {
            sleep(Duration::from_millis(5));
        } else {
            sleep(Duration::from_micros(rng.between(0, 2_000)));
        }
    }
    if let Some(held) = lease
        && let Err(e) = held.release()
    {
        report_release(&e);
    }
    totals
}

fn report_release(e: &Error) {
    eprintln!("fleet_worker: release: {e}");
}

/// A Redis Cluster through the crate's [`Connector`] trait (the crate implements it for
/// `ClusterClient` with its `cluster` feature; this example builds without features).
#[derive(Clone)]
struct Cluster(redis::cluster::ClusterClient);

impl Connector for Cluster {
    type Connection = redis::cluster::ClusterConnection;

    fn connect(&self, timeout: Duration) -> redis::RedisResult<Self::Connection> {
        let mut con = self.0.get_connection()?;
        <Cluster as Connector>::set_timeout(&mut con, timeout)?;
        Ok(con)
    }

    fn set_timeout(con: &mut Self::Connection, timeout: Duration) -> redis::RedisResult<()> {
        con.set_read_timeout(Some(timeout))?;
        con.set_write_timeout(Some(timeout))
    }
}

#[cfg(feature = "postgres")]
fn postgres(args: &Args, term: &AtomicBool) -> Totals {
    let config = args
        .postgres
        .parse()
        .unwrap_or_else(|e| usage(&format!("--postgres: {e}")));
    run(
        snowdrift_lease::Postgres::new(config, "snowdrift"),
        args,
        term,
    )
}

#[cfg(not(feature = "postgres"))]
fn postgres(_: &Args, _: &AtomicBool) -> Totals {
    usage("--postgres needs the example built with the postgres feature")
}

fn main() {
    let args = parse_args();
    let term = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&term)) {
            usage(&format!("cannot handle signal {signal}: {e}"));
        }
    }
    let url = format!("redis://{}/", args.redis);
    let totals = if !args.postgres.is_empty() {
        postgres(&args, &term)
    } else if args.cluster {
        let client = redis::cluster::ClusterClient::new(vec![url])
            .unwrap_or_else(|e| usage(&format!("--redis: {e}")));
        run(Cluster(client), &args, &term)
    } else {
        let client = redis::Client::open(url).unwrap_or_else(|e| usage(&format!("--redis: {e}")));
        run(client, &args, &term)
    };
    eprintln!(
        "fleet_worker pid {}: {} ids written, {} leases taken",
        std::process::id(),
        totals.ids,
        totals.leases
    );
}
