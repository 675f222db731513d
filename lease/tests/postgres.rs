//! Leases against a real PostgreSQL server (started by the tests in a temp dir on a free
//! port, as an unprivileged role that may only create schemas).
#![cfg(feature = "postgres")]

mod common;
#[path = "common/postgres.rs"]
mod pg;

use common::gated::{Gated, REPLIES_LOST};
use common::layout;
use common::scenarios::{self, acquire_within, scenario_tests, store_scenarios, take};
use pg::Pg;
use snowdrift_lease::{Error, Lease, Postgres, Space, State, Store};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const SCHEMA: &str = "Snowdrift leases";

/// A server with the lease tables set up (twice: the step is idempotent).
fn server() -> (Pg, Postgres) {
    let pg = Pg::start();
    let store = pg.store(SCHEMA);
    store.setup().expect("setup");
    store.setup().expect("setup again");
    (pg, store)
}

// The scenarios every store passes (common/scenarios.rs), each against a server of its own.
store_scenarios!(server().1);
scenario_tests! {
    server().1;
    a_holder_whose_renewal_replies_are_lost_sends_one_pair_and_releases_with_it => a_holder_whose_replies_are_lost_keeps_its_pair_and_releases_with_it,
}

#[test]
fn a_holder_whose_database_stops_answering_stops_issuing_by_ttl_minus_skew() {
    let (pg, store) = server();
    // SIGSTOP: the connections stay open and nothing answers (a hung server, a
    // partition); a killed server would refuse at once, which is the easier case.
    let mut paused = Vec::new();
    let lease = scenarios::lapse(&store, || paused = pg.pause());
    // Release with the server silent fails after its timeout (the TTL, 2 s), not hanging
    // (a bound far above that timeout, to catch a hang, not to time it).
    let start = Instant::now();
    let err = lease.release().unwrap_err();
    assert!(matches!(err, Error::Io(_)), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30));
    Pg::resume(&paused);
}

#[test]
fn a_crash_and_restart_of_the_server_keeps_the_leases() {
    let (mut pg, store) = server();
    let lay = layout(2);
    let (ttl, skew) = (2_000, 200);
    let space = Space::new("test:restart", lay)
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(300);
    let held = Lease::acquire(&store, &space).expect("acquire");
    let before = take(&held, 1_000);
    let until_at_stop = held.until_ms();
    pg.stop_immediate(); // SIGQUIT: no checkpoint, crash recovery at the next start
    pg.spawn();
    let start = Instant::now();
    while held.until_ms() <= until_at_stop && start.elapsed() < Duration::from_secs(3) {
        sleep(Duration::from_millis(20));
    }
    assert!(held.is_live(), "{:?}", held.check());
    assert!(
        held.until_ms() > until_at_stop,
        "no renewal after the restart"
    );
    let after = take(&held, 1_000);
    assert_eq!(after.len(), 1_000);
    assert!(after.iter().min() > before.iter().max());
    // A lease granted just after a restart is fenced after the guard: beyond any fence
    // the server could have lost.
    let other = Lease::acquire(&store, &space).expect("acquire after the restart");
    assert_eq!(other.node(), 1);
    assert!(
        other.not_before_ms() > until_at_stop,
        "{} > {until_at_stop}",
        other.not_before_ms()
    );
}

/// Both holders of one id issued, no ID twice, the next one's all above the previous one's.
fn handed_on(theirs: &[u64], ours: &[u64]) {
    assert!(!theirs.is_empty() && !ours.is_empty());
    let all: HashSet<u64> = theirs.iter().chain(ours).copied().collect();
    assert_eq!(
        all.len(),
        theirs.len() + ours.len(),
        "an ID was issued twice"
    );
    assert!(ours.iter().min() > theirs.iter().max());
}

/// A thread that issues from `old` while it is live (at most 5 s), and returns the IDs.
fn issue_while_live(old: &std::sync::Arc<Lease>) -> std::thread::JoinHandle<Vec<u64>> {
    let old = std::sync::Arc::clone(old);
    std::thread::spawn(move || {
        let mut ids = Vec::new();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) && old.state() == State::Live {
            ids.extend((0..20).filter_map(|_| old.generator().next().ok()));
            sleep(Duration::from_millis(1));
        }
        ids
    })
}

/// The IDs the lease `new` issues in `for_ms` ms, once it is known to start after `fence`
/// (its `not_before` at or above it).
fn issue_after(new: &Lease, fence: u64, for_ms: u64) -> Vec<u64> {
    assert!(
        new.not_before_ms() >= fence,
        "{} >= {fence}",
        new.not_before_ms()
    );
    let mut ours = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(for_ms) {
        ours.extend((0..20).filter_map(|_| new.generator().next().ok()));
        sleep(Duration::from_millis(1));
    }
    ours
}

/// Reads a holder process's lines (`ready N`, `id N`) into a vector on a thread.
fn read_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Not a test on its own: the holder process of
/// `a_holder_paused_past_its_ttl_issues_no_id_of_the_next_holder` (run with
/// `SNOWDRIFT_PG_HOLDER=PORT`). Leases the one id of `test:paused`, then issues bursts of
/// IDs for 5 s, writing each as `id N`.
#[test]
fn holder_process() {
    let Ok(port) = std::env::var("SNOWDRIFT_PG_HOLDER") else {
        return;
    };
    let config = format!(
        "host=127.0.0.1 port={port} user={} dbname=postgres",
        pg::ROLE
    )
    .parse()
    .expect("config");
    let store = Postgres::new(config, SCHEMA);
    let space = Space::new("test:paused", layout(0))
        .ttl_ms(1_000)
        .skew_ms(100)
        .renew_every_ms(200);
    let lease = Lease::acquire(&store, &space).expect("acquire");
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready {}", lease.node()).expect("write");
    out.flush().expect("flush");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        for _ in 0..50 {
            if let Ok(id) = lease.generator().next() {
                writeln!(out, "id {id}").expect("write");
            }
        }
        out.flush().expect("flush");
        sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_holder_paused_past_its_ttl_issues_no_id_of_the_next_holder() {
    let (pg, store) = server();
    let lay = layout(0);
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "holder_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SNOWDRIFT_PG_HOLDER", pg.port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("holder process");
    let lines = read_lines(&mut child);
    let limit = Instant::now() + Duration::from_secs(10);
    let mut theirs = Vec::new();
    let mut ready = false;
    while !ready && Instant::now() < limit {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            // libtest's "test holder_process ... " has no newline before it.
            ready = line.contains("ready ");
        }
    }
    assert!(ready, "the holder process did not lease within 10 s");
    sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    let signal = |s: &str| {
        let _ = Command::new("kill").args(["-s", s, &pid]).status();
    };
    signal("STOP");
    let space = Space::new("test:paused", lay)
        .ttl_ms(1_000)
        .skew_ms(100)
        .renew_every_ms(200);
    let next = acquire_within(&store, &space, Duration::from_secs(3));
    assert_eq!(next.node(), 0);
    // The paused holder wakes while the next one issues.
    let mut ours = Vec::new();
    let start = Instant::now();
    let mut resumed = false;
    while start.elapsed() < Duration::from_millis(1_500) {
        if !resumed && start.elapsed() > Duration::from_millis(200) {
            signal("CONT");
            resumed = true;
        }
        ours.extend((0..50).filter_map(|_| next.generator().next().ok()));
        sleep(Duration::from_millis(1));
    }
    signal("CONT");
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the holder process did not end within 10 s");
        }
        sleep(Duration::from_millis(20));
    }
    while let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) {
        if let Some(id) = line.strip_prefix("id ") {
            theirs.push(id.parse::<u64>().expect("an id"));
        }
    }
    handed_on(&theirs, &ours);
}

#[test]
fn a_restore_from_an_older_base_backup_gives_no_two_holders_one_id() {
    let (mut pg, store) = server();
    let lay = layout(0);
    // A TTL long enough for the old holder to outlive the shut gate (2.9 s), not lapse.
    let (ttl, skew) = (3_000, 100);
    let space = Space::new("test:restore", lay)
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(300);
    // The old holder renews through a gate: shut across the restore, so the next holder
    // reaches the restored server first (else the old one might renew there first, its
    // token being in the restored row, and keep its id: safe, but not this test).
    let gated = Gated::new(store.clone());
    let old = std::sync::Arc::new(Lease::acquire(&gated, &space).expect("acquire"));
    sleep(Duration::from_millis(ttl + skew)); // past the new space's guard
    let backup = pg.base_backup("backup");
    // The holder issues and renews well past the fence the backup holds.
    let issuing = {
        let old = std::sync::Arc::clone(&old);
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(8) && old.state() == State::Live {
                ids.extend((0..20).filter_map(|_| old.generator().next().ok()));
                sleep(Duration::from_millis(1));
            }
            ids
        })
    };
    // Past the fence the backup holds (at most the backup's time + ttl).
    sleep(Duration::from_millis(ttl + 200));
    gated.shut(true);
    let fence_before = old.until_ms();
    pg.restore(&backup);
    // The restored records show the id's lease as ended long ago.
    let new = acquire_within(&store, &space, Duration::from_secs(3));
    gated.shut(false); // the old holder's next renewal reaches the restored server
    assert_eq!(new.node(), 0);
    let ours = issue_after(&new, fence_before, 2_000);
    let theirs = issuing.join().expect("issuing thread");
    assert_eq!(old.state(), State::Lost, "{:?}", old.check());
    handed_on(&theirs, &ours);
}

#[test]
fn a_backend_crash_under_synchronous_commit_off_gives_no_two_holders_one_id() {
    let (pg, store) = server();
    // Commits acknowledged before their WAL is flushed, and a WAL writer that waits 10 s:
    // a crash loses every commit of the last seconds.
    pg.psql("ALTER SYSTEM SET synchronous_commit = off");
    pg.psql("ALTER SYSTEM SET wal_writer_delay = '10s'");
    pg.psql("SELECT pg_reload_conf()");
    let (ttl, skew) = (1_000, 100);
    let one = Space::new("test:crash", layout(0))
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(200);
    let two = Space::new("test:crash-guard", layout(1))
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(200);
    // Both spaces exist on disk, their guard windows over, the one id of `one` released.
    Lease::acquire(&store, &one)
        .expect("acquire")
        .release()
        .expect("release");
    let kept = Lease::acquire(&store, &two).expect("acquire");
    pg.psql("CHECKPOINT");
    sleep(Duration::from_millis(ttl + skew));
    // The holder takes the released id over, renews through a gate (shut at the crash, so
    // it issues on until it lapses), and issues.
    let gated = Gated::new(store.clone());
    let old = std::sync::Arc::new(Lease::acquire(&gated, &one).expect("takeover"));
    let issuing = issue_while_live(&old);
    sleep(Duration::from_millis(300));
    gated.shut(true);
    let (fence, kept_fence) = (old.until_ms(), kept.until_ms());
    pg.kill_backend();
    // The crash is seen even where no commit was lost: a lease granted just after it is
    // fenced beyond every fence the server held before it.
    let other = Lease::acquire(&store, &two).expect("acquire after the crash");
    assert_eq!(other.node(), 1);
    assert!(
        other.not_before_ms() > kept_fence,
        "{} > {kept_fence}",
        other.not_before_ms()
    );
    let new = acquire_within(&store, &one, Duration::from_secs(3));
    let ours = issue_after(&new, fence, 1_500);
    let theirs = issuing.join().expect("issuing thread");
    handed_on(&theirs, &ours);
}

#[test]
fn the_database_s_defaults_serializable_and_read_only_do_not_change_the_calls() {
    let pg = Pg::start();
    pg.psql("ALTER DATABASE postgres SET default_transaction_isolation = 'serializable'");
    pg.psql("ALTER DATABASE postgres SET default_transaction_read_only = on");
    let store = pg.store(SCHEMA);
    store.setup().expect("setup");
    scenarios::many(&store);
}

#[test]
fn errors_say_what_the_database_said_and_what_to_do() {
    let (pg, store) = server();
    let space = Space::new("test:errors", layout(2))
        .ttl_ms(1_000)
        .skew_ms(100);
    let as_role = |role: &str| {
        let config = format!(
            "host=127.0.0.1 port={} user={role} dbname=postgres connect_timeout=5",
            pg.port
        );
        Postgres::new(config.parse().expect("config"), SCHEMA)
    };
    let not_set_up = |store: &Postgres, schema: &str, said: &str| {
        let err = Lease::acquire(store, &space).unwrap_err();
        assert!(matches!(err, Error::NotSetUp { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "the snowdrift lease functions are not in schema \"{schema}\", or this role may \
                 not use them: run setup (Postgres::setup, or lease/postgres/setup.sql) for that \
                 schema, or grant this role USAGE on the schema and the rights on its tables \
                 (postgres: {said})"
            )
        );
    };
    let missing = "function snowdrift_acquire(text, bigint, bigint, bigint, text, text, text) \
                   does not exist, SQLSTATE 42883";
    // A schema that was never set up.
    not_set_up(&pg.store("nowhere"), "nowhere", missing);
    // A role without USAGE on the schema, then without rights on its tables.
    pg.psql("CREATE ROLE other LOGIN");
    not_set_up(&as_role("other"), SCHEMA, missing);
    pg.psql(&format!("GRANT USAGE ON SCHEMA \"{SCHEMA}\" TO other"));
    not_set_up(
        &as_role("other"),
        SCHEMA,
        "permission denied for table snowdrift_spaces, SQLSTATE 42501",
    );
    // Any other failure: the database's message and SQLSTATE.
    let nul = Space::new("test:\0", layout(2)).ttl_ms(1_000).skew_ms(100);
    let err = Lease::acquire(&store, &nul).unwrap_err();
    assert_eq!(
        err.to_string(),
        "postgres: invalid byte sequence for encoding \"UTF8\": 0x00 (SQLSTATE 22021)"
    );
    // A lock_timeout shorter than an acquire's wait for the space's row: the database's
    // error, and the space as it was.
    Lease::acquire(&store, &space)
        .expect("acquire")
        .release()
        .expect("release");
    pg.psql("ALTER ROLE app SET lock_timeout = '50ms'");
    let mut holding = pg.psql_background(&format!(
        "BEGIN; SELECT * FROM \"{SCHEMA}\".snowdrift_spaces FOR UPDATE; SELECT pg_sleep(10)"
    ));
    let locked = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
                  WHERE a.usename = 'postgres' AND l.mode = 'RowShareLock'";
    let start = Instant::now();
    while pg.psql(locked) == "0" {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the row was not locked"
        );
        sleep(Duration::from_millis(20));
    }
    let err = Lease::acquire(&store, &space).unwrap_err();
    assert_eq!(
        err.to_string(),
        "postgres: canceling statement due to lock timeout (SQLSTATE 55P03)"
    );
    let _ = holding.kill();
    let _ = holding.wait();
}

#[test]
fn renewal_replies_lost_the_holder_lapses_and_the_next_holder_waits_for_the_recorded_fence() {
    let (_pg, store) = server();
    let space = Space::new("test:replies", layout(0))
        .ttl_ms(1_000)
        .skew_ms(100)
        .renew_every_ms(200);
    let gated = Gated::new(store.clone());
    let old = std::sync::Arc::new(Lease::acquire(&gated, &space).expect("acquire"));
    sleep(Duration::from_millis(1_200)); // past the new space's guard
    // Renewals reach the database and move the fence there; the holder hears of none.
    let heard = old.until_ms();
    gated.set(REPLIES_LOST);
    let issuing = {
        let old = std::sync::Arc::clone(&old);
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(3) && old.state() == State::Live {
                ids.extend((0..20).filter_map(|_| old.generator().next().ok()));
                sleep(Duration::from_millis(1));
            }
            ids
        })
    };
    let theirs = issuing.join().expect("issuing thread");
    assert_eq!(old.state(), State::Lapsed, "{:?}", old.check());
    let recorded = store.listing("test:replies").expect("listing").ids[0].until;
    assert!(
        recorded > heard,
        "{recorded} > {heard}: no renewal reached the database"
    );
    let new = acquire_within(&store, &space, Duration::from_secs(3));
    assert!(
        new.not_before_ms() + 1 >= recorded,
        "{} + 1 >= {recorded}",
        new.not_before_ms()
    );
    let ours = take(&new, 1_000);
    handed_on(&theirs, &ours);
}

#[test]
fn replayed_calls_grant_nothing_twice_a_repeated_renewal_or_release_changes_nothing() {
    let (_pg, store) = server();
    let space = Space::new("test:replayed", layout(1))
        .ttl_ms(1_000)
        .skew_ms(100);
    let mut con = store.connect(Duration::from_secs(2)).expect("connect");
    // An acquire sent twice with one token (a retry after a lost reply): two ids, the
    // second grant's; the first is held by no one until its fence passes.
    let first = Postgres::acquire(&mut con, &space, "token-a").expect("acquire");
    let again = Postgres::acquire(&mut con, &space, "token-a").expect("acquire again");
    assert_ne!(first.node, again.node);
    let err = Postgres::acquire(&mut con, &space, "token-b").unwrap_err();
    assert!(matches!(err, Error::AllLeased { .. }), "{err}");
    let ticket = |node| snowdrift_lease::Ticket {
        space: "test:replayed".into(),
        node,
        token: "token-a".into(),
        next: None,
    };
    // A renewal sent twice moves the fence once; a release sent twice releases once.
    let until = Postgres::renew(&mut con, &ticket(again.node), 1_000).expect("renew");
    let until_again = Postgres::renew(&mut con, &ticket(again.node), 1_000).expect("renew");
    assert!(until_again >= until);
    assert!(
        Postgres::release(&mut con, &ticket(again.node), again.not_before + 1).expect("release")
    );
    assert!(
        !Postgres::release(&mut con, &ticket(again.node), again.not_before + 1).expect("release")
    );
    // After the release, a replayed renewal of it is told the lease is gone.
    let err = Postgres::renew(&mut con, &ticket(again.node), 1_000).unwrap_err();
    assert!(matches!(err, Error::Lost { .. }), "{err}");
}

#[test]
fn a_failover_to_a_standby_that_had_not_caught_up_gives_no_two_holders_one_id() {
    let (mut pg, store) = server();
    let (ttl, skew) = (1_500, 100);
    let space = Space::new("test:failover", layout(0))
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(200);
    // The space exists with its one id released, its guard over, on both servers.
    Lease::acquire(&store, &space)
        .expect("acquire")
        .release()
        .expect("release");
    sleep(Duration::from_millis(ttl + skew));
    let standby = pg.standby();
    let released = format!(
        "SELECT count(*) FROM \"{SCHEMA}\".snowdrift_leases WHERE space = 'test:failover' \
         AND token IS NULL"
    );
    let start = Instant::now();
    while standby.psql(&released) != "1" {
        assert!(start.elapsed() < Duration::from_secs(10), "standby behind");
        sleep(Duration::from_millis(20));
    }
    standby.detach();
    // A takeover and its renewals that the standby never receives.
    let old = std::sync::Arc::new(Lease::acquire(&store, &space).expect("takeover"));
    let issuing = issue_while_live(&old);
    sleep(Duration::from_millis(500));
    let fence = old.until_ms();
    // The primary goes down (its holder renews nowhere, and issues on until it lapses);
    // the standby is promoted and shows the id as released long ago.
    pg.stop_immediate();
    standby.psql("SELECT pg_promote()");
    let new = acquire_within(&standby.store(SCHEMA), &space, Duration::from_secs(3));
    assert_eq!(new.node(), 0);
    let ours = issue_after(&new, fence, 2_000);
    let theirs = issuing.join().expect("issuing thread");
    assert_eq!(old.state(), State::Lapsed, "{:?}", old.check());
    handed_on(&theirs, &ours);
}

#[test]
fn invalid_options_are_refused_before_the_database_is_touched() {
    let nowhere = Postgres::new(
        "host=127.0.0.1 port=1 user=app".parse().expect("config"),
        SCHEMA,
    );
    let bad = Space::new("test:bad", layout(2)).ttl_ms(50);
    let err = Lease::acquire(&nowhere, &bad).unwrap_err();
    assert_eq!(err.to_string(), "ttl_ms 50 is outside 100..=31536000000");
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquire_async_renews_on_past_a_copy_and_is_lost_to_a_copy_that_renewed_first() {
    let (_pg, store) = tokio::task::spawn_blocking(server).await.expect("server");
    scenarios::copies_of_the_async_holder(&store).await;
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquire_async_renews_and_hands_on_like_the_blocking_lease() {
    let (_pg, store) = tokio::task::spawn_blocking(server).await.expect("server");
    let space = Space::new("test:async", layout(0)).ttl_ms(600).skew_ms(100);
    let lease = Lease::acquire_async(&store, &space)
        .await
        .expect("acquire_async");
    let first_until = lease.until_ms();
    let mut ids = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1_000) {
        ids.push(
            lease
                .generator()
                .next()
                .expect("IDs all along, across renewals"),
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(lease.is_live());
    assert!(lease.until_ms() >= first_until + 300);
    lease.release_async().await.expect("release_async");
    let start = Instant::now();
    let next = loop {
        match Lease::acquire_async(&store, &space).await {
            Ok(lease) => break lease,
            Err(Error::AllLeased { .. }) if start.elapsed() < Duration::from_millis(300) => {
                tokio::time::sleep(Duration::from_millis(5)).await
            }
            Err(e) => panic!("{e}"),
        }
    };
    let id = next.generator().next().expect("id");
    assert!(id > *ids.iter().max().unwrap());
    next.release_async().await.expect("release_async");
}
