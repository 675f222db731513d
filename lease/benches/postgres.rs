//! The cost of node id leases on PostgreSQL, against a server this benchmark starts in a
//! temp dir on 127.0.0.1 (part of `cargo xtask bench`): an acquire with its release
//! through `Lease` (its connection and heartbeat thread included), and on one connection
//! the heartbeat's call (`renew.sql`) next to a `SELECT 1` round trip. Medians; printed
//! as a markdown table; no thresholds.

#[path = "../tests/common/postgres.rs"]
mod pg;
#[path = "common/timing.rs"]
mod timing;

use std::hint::black_box;
use std::thread::sleep;
use std::time::Duration;
use timing::{ROUND_TRIPS, per_call};

use snowdrift::Layout;
use snowdrift_lease::{Lease, Space, Store, Ticket};
use tokio_postgres::types::{ToSql, Type};

const SCHEMA: &str = "snowdrift";

fn main() {
    let server = pg::Pg::start();
    let store = server.store(SCHEMA);
    store.setup().expect("setup");
    let (ttl_ms, skew_ms) = (3_000u64, 500u64);
    let space = Space::new("bench:pg", Layout::TWITTER)
        .ttl_ms(ttl_ms)
        .skew_ms(skew_ms);
    // Past the new space's first ttl + skew ms: the steady state.
    Lease::acquire(&store, &space)
        .and_then(Lease::release)
        .expect("first lease");
    sleep(Duration::from_millis(ttl_ms + skew_ms + 100));

    let acquire = per_call(|| {
        Lease::acquire(&store, &space)
            .and_then(Lease::release)
            .expect("acquire and release");
    });

    // One connection, as the heartbeat has: the crate's renewal, then renew.sql and
    // SELECT 1 sent the same way (query_typed: one round trip each).
    let mut con = store
        .connect(Duration::from_secs(5))
        .expect("store connection");
    let grant = <snowdrift_lease::Postgres as Store>::acquire(&mut con, &space, "bench-token")
        .expect("grant");
    // Each renewal makes its next token the lease's, as the heartbeat's does
    // (PROTOCOL.md, "Tokens"); the next one sends the other token.
    let mut ticket = Ticket {
        space: "bench:pg".into(),
        node: grant.node,
        token: "bench-token".into(),
        next: Some("bench-next".into()),
    };
    let connect = per_call(|| {
        black_box(store.connect(Duration::from_secs(5)).expect("connect"));
    });
    let mut n = 0u64;
    let grant_and_release = per_call(|| {
        n += 1;
        let token = format!("bench-{n}");
        let g = <snowdrift_lease::Postgres as Store>::acquire(&mut con, &space, &token)
            .expect("acquire");
        let t = Ticket {
            space: "bench:pg".into(),
            node: g.node,
            token,
            next: None,
        };
        <snowdrift_lease::Postgres as Store>::release(&mut con, &t, g.not_before).expect("release");
    });
    let renew_store = per_call(|| {
        black_box(
            <snowdrift_lease::Postgres as Store>::renew(&mut con, &ticket, ttl_ms)
                .expect("renewal"),
        );
        if let Some(next) = ticket.next.as_mut() {
            std::mem::swap(&mut ticket.token, next);
        }
    });

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let config: tokio_postgres::Config = format!(
        "host=127.0.0.1 port={} user={} dbname=postgres",
        server.port,
        pg::ROLE
    )
    .parse()
    .expect("config");
    let (client, connection) = runtime
        .block_on(config.connect(tokio_postgres::NoTls))
        .expect("connect");
    runtime.spawn(connection);
    runtime
        .block_on(client.query_typed(
            include_str!("../postgres/connect.sql"),
            &[
                (&SCHEMA as &(dyn ToSql + Sync), Type::TEXT),
                (&false, Type::BOOL),
            ],
        ))
        .expect("connect.sql");
    let node = i64::try_from(grant.node).expect("node");
    let ttl = i64::try_from(ttl_ms).expect("ttl");
    let renew_sql = include_str!("../postgres/renew.sql");
    let renew = per_call(|| {
        let params: [(&(dyn ToSql + Sync), Type); 5] = [
            (&"bench:pg", Type::TEXT),
            (&node, Type::INT8),
            (&ticket.token, Type::TEXT),
            (&ttl, Type::INT8),
            (&ticket.next, Type::TEXT),
        ];
        black_box(
            runtime
                .block_on(client.query_typed(renew_sql, &params))
                .expect("renew.sql"),
        );
        if let Some(next) = ticket.next.as_mut() {
            std::mem::swap(&mut ticket.token, next);
        }
    });
    // The floor of a write: a one-row UPDATE in its own transaction, one round trip.
    runtime
        .block_on(client.batch_execute(
            "CREATE TABLE IF NOT EXISTS bench_floor (id int PRIMARY KEY, x bigint); \
             INSERT INTO bench_floor VALUES (1, 0) ON CONFLICT DO NOTHING",
        ))
        .expect("floor table");
    let update = per_call(|| {
        black_box(
            runtime
                .block_on(client.query_typed("UPDATE bench_floor SET x = x + 1 WHERE id = 1", &[]))
                .expect("UPDATE"),
        );
    });
    let select_1 = per_call(|| {
        black_box(
            runtime
                .block_on(client.query_typed("SELECT 1", &[]))
                .expect("SELECT 1"),
        );
    });

    println!();
    println!(
        "| Rust, PostgreSQL 15 (`postgres` feature) | `Lease` acquire + release | a new connection | acquire.sql + release.sql on one connection | one renewal (the crate's call) | `renew.sql` on a bare connection | `SELECT 1` on it | a one-row UPDATE on it |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| medians of {ROUND_TRIPS} | {acquire:.0} µs | {connect:.0} µs | {grant_and_release:.0} µs | {renew_store:.0} µs | {renew:.0} µs | {select_1:.0} µs | {update:.0} µs |"
    );
    println!(
        "\nratios: renewal ÷ SELECT 1 {:.1}×, renewal ÷ one-row UPDATE {:.1}×, acquire.sql + release.sql ÷ two one-row UPDATEs {:.1}×",
        renew_store / select_1,
        renew_store / update,
        grant_and_release / (2.0 * update)
    );
}
