//! The cost of node id leases in Rust, against a redis-server this benchmark starts on
//! 127.0.0.1 (part of `cargo xtask bench`): an acquire with its release, a renewal (the
//! heartbeat's script call), and `next()` of a lease-bound `AtomicGenerator` against an
//! unbound one with the same clock, layout and policy, taking turns burst by burst.
//! Medians; printed as a markdown table; no thresholds.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/timing.rs"]
mod timing;

use std::hint::black_box;
use std::thread::sleep;
use std::time::{Duration, Instant};
use timing::{median, per_call};

use snowdrift::{AtomicGenerator, Layout, MonotonicClock, Policy};
use snowdrift_lease::{Lease, Space, Store, Ticket};

/// IDs per timed burst: fewer than the 4,096 a millisecond allows.
const BURST: u32 = 3000;
const ROUNDS: usize = 201;

/// Waits for the next millisecond of the wall clock, so a burst never waits for a tick.
fn next_ms() {
    let start = MonotonicClock::new();
    let t = snowdrift::Clock::now_ms(&start);
    while snowdrift::Clock::now_ms(&start) == t {}
}

/// ns per `next()` of each generator, in turns.
fn next_in_turns(gens: [&AtomicGenerator<MonotonicClock>; 2]) -> [f64; 2] {
    let mut samples = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        for (i, generator) in gens.iter().enumerate() {
            next_ms();
            let t = Instant::now();
            for _ in 0..BURST {
                black_box(generator.next().expect("an ID"));
            }
            if round >= 20 {
                samples[i].push(t.elapsed().as_secs_f64() * 1e9 / f64::from(BURST));
            }
        }
    }
    let [a, b] = samples;
    [median(a), median(b)]
}

fn main() {
    let server = common::Server::start();
    let client = server.client();
    let ttl_ms = 3_000;
    let skew_ms = 500;
    let space = Space::new("bench:rust", Layout::TWITTER)
        .ttl_ms(ttl_ms)
        .skew_ms(skew_ms)
        .policy(Policy::DEFAULT);
    // Create the space and wait out its first ttl + skew ms (while new leases are fenced
    // ahead of the clock, see PROTOCOL.md), so what is timed is the steady state.
    Lease::acquire(&client, &space)
        .and_then(Lease::release)
        .expect("first lease");
    sleep(Duration::from_millis(ttl_ms + skew_ms + 100));

    let acquire = per_call(|| {
        Lease::acquire(&client, &space)
            .and_then(Lease::release)
            .expect("acquire and release");
    });

    // The heartbeat's call (EVALSHA, loaded by the first call), on a grant of its own
    // that no heartbeat renews: each call makes its next token the lease's, as the
    // heartbeat's does (PROTOCOL.md, "Tokens"), and the next call sends the other one.
    let mut con = server.connection();
    let grant = <redis::Client as Store>::acquire(&mut con, &space, "bench-a").expect("grant");
    let mut ticket = Ticket {
        space: space.name().into(),
        node: grant.node,
        token: "bench-a".into(),
        next: Some("bench-b".into()),
    };
    let renew = per_call(|| {
        let until = <redis::Client as Store>::renew(&mut con, &ticket, ttl_ms).expect("renewal");
        black_box(until);
        let next = ticket.next.replace(std::mem::take(&mut ticket.token));
        ticket.token = next.expect("a next token");
    });

    let lease = Lease::acquire(&client, &space).expect("lease");
    let unbound = AtomicGenerator::new(
        MonotonicClock::new(),
        Layout::TWITTER,
        lease.node(),
        Policy::DEFAULT,
    )
    .expect("generator");
    let [bound, free] = next_in_turns([lease.generator(), &unbound]);
    lease.release().expect("release");

    println!("\nnode id leases, Rust, redis-server on 127.0.0.1 (medians)\n");
    println!(
        "| acquire + release | renewal (script call) | `AtomicGenerator::next()`, lease-bound | unbound | bound ÷ unbound |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| {acquire:.1} µs | {renew:.1} µs | {bound:.2} ns | {free:.2} ns | {:.2}× |",
        bound / free
    );
}
