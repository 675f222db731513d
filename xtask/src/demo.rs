//! `cargo xtask demo`: IDs from the real clock, a clock step back under each policy,
//! decoding and text forms, and a quick throughput run.

use std::time::Instant;

use snowdrift::text::{self, Format};
use snowdrift::{
    AtomicGenerator, ErrorKind, Generator, IdGenerator, Layout, ManualClock, MonotonicClock, Policy,
};

use crate::util::Result;

pub fn run() -> Result {
    let layout = Layout::DEFAULT;
    println!(
        "snowdrift demo: layout DEFAULT = 41-bit ms since 2024-01-01, 10-bit node, 12-bit sequence"
    );
    println!("(time field runs out at {})\n", iso(layout.exhausts_at()));

    println!("Five IDs from the monotonic clock, node 7:");
    let mut generator =
        Generator::new(MonotonicClock::new(), layout, 7, Policy::DEFAULT).map_err(err)?;
    println!(
        "  {:<20} {:<16} {:<13} {:<11} {:<24} {:>4} {:>4}",
        "decimal", "hex", "base32", "base62", "time", "node", "seq"
    );
    for _ in 0..5 {
        let id = generator.next().map_err(err)?;
        let p = layout.decode(id).map_err(err)?;
        let t: Vec<String> = Format::ALL
            .iter()
            .map(|&f| text::format(id, f).to_string())
            .collect();
        println!(
            "  {:<20} {:<16} {:<13} {:<11} {:<24} {:>4} {:>4}",
            t[0],
            t[1],
            t[2],
            t[3],
            iso(p.time_ms),
            p.node,
            p.sequence
        );
    }

    println!("\nThe clock steps back 50 ms after an ID; what each policy does with the next one:");
    let t0 = 1_750_000_000_000;
    let policies = [
        ("fail", Policy::Fail),
        ("wait (max 100 ms)", Policy::Wait { max_wait_ms: 100 }),
        (
            "borrow (max 1 s ahead)",
            Policy::Borrow { max_ahead_ms: 1000 },
        ),
        ("switch node", Policy::SwitchNode),
    ];
    for (name, policy) in policies {
        // A clock that moves 1 ms per read, so waiting can end.
        let clock = ManualClock::new(t0).with_step(1);
        let mut g = Generator::new(&clock, layout, 7, policy).map_err(err)?;
        let before = g.next().map_err(err)?;
        clock.set(t0 - 50);
        let outcome = match g.next() {
            Ok(id) => describe(layout, before, id),
            Err(e) if e.kind() == ErrorKind::SwitchNode => {
                g.switch_node(8, 0).map_err(err)?; // node 8: never used
                let id = g.next().map_err(err)?;
                format!(
                    "error \"{e}\", then node 8: {}",
                    describe(layout, before, id)
                )
            }
            Err(e) => format!("error \"{e}\"; state unchanged"),
        };
        println!("  {name:<24} {outcome}");
    }
    let clock = ManualClock::new(t0);
    let mut g = Generator::<_, 16>::with_history(&clock, layout, 7).map_err(err)?;
    g.next().map_err(err)?;
    clock.advance(50);
    let before = g.next().map_err(err)?;
    clock.rewind(50);
    let id = g.next().map_err(err)?;
    println!(
        "  {:<24} {} (a spare number of an earlier tick: unique, not monotonic)",
        "history (ring of 16)",
        describe(layout, before, id)
    );

    println!("\nDecoding Discord's documentation ID 175928847299117063 with the DISCORD layout:");
    let d = Layout::DISCORD;
    let p = d.decode(175_928_847_299_117_063).map_err(err)?;
    println!(
        "  time {} ({} ms), worker {}, process {}, increment {}",
        iso(p.time_ms),
        p.time_ms,
        d.datacenter_of(p.node),
        d.worker_of(p.node),
        p.sequence
    );
    let lo = d.min_id_at(p.time_ms).map_err(err)?;
    let hi = d.max_id_at(p.time_ms).map_err(err)?;
    println!("  IDs made in that millisecond: {lo} ..= {hi}");

    println!("\nBad input is an error that names the value and the range:");
    for e in [
        Layout::TWITTER
            .node_from(3, 40)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        text::parse_base32("04W86BB0G40U7")
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Layout::DEFAULT
            .decode(u64::MAX)
            .map(|_| ())
            .map_err(|e| e.to_string()),
    ] {
        println!("  {}", e.err().unwrap_or_default());
    }

    let generator =
        AtomicGenerator::new(MonotonicClock::new(), layout, 9, Policy::DEFAULT).map_err(err)?;
    let start = Instant::now();
    let mut last = 0;
    for _ in 0..1_000_000 {
        let id = generator.next().map_err(err)?;
        assert!(id > last, "IDs increase");
        last = id;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "\n1,000,000 IDs from one AtomicGenerator in {:.0} ms ({:.2} M/s; the 12-bit sequence caps a node at 4.096 M/s)",
        secs * 1e3,
        1.0 / secs
    );
    println!(
        "\nIn a browser: `cargo xtask serve` builds the web page (`cargo xtask www`: www/dist/) and serves it\n\
         on http://127.0.0.1:8000/: make IDs offline (they survive reloads, tabs and a clock set back),\n\
         decode any ID and see its 64 bits."
    );
    Ok(())
}

fn describe(layout: Layout, before: u64, id: u64) -> String {
    let (a, b) = (
        layout.decode(before).unwrap_or_default(),
        layout.decode(id).unwrap_or_default(),
    );
    let rel = if id > before { "above" } else { "below" };
    format!(
        "id {id} ({rel} the previous), time {:+} ms vs previous, node {}, seq {}",
        b.time_ms as i64 - a.time_ms as i64,
        b.node,
        b.sequence
    )
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Unix milliseconds as an ISO-8601 UTC timestamp.
pub fn iso(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let rem = ms % 86_400_000;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}
