//! Leases against a real redis-server (started by the tests on a free port).

mod common;

use common::scenarios::{self, store_scenarios, take, time_of};
use common::{Server, SteppedBack, layout};
use snowdrift::IdGenerator;
use snowdrift_lease::{Error, Lease, Space, State};
use std::collections::HashSet;
use std::thread::sleep;
use std::time::{Duration, Instant};

// The scenarios every store passes (common/scenarios.rs), each against a server of its own.
store_scenarios!(Server::start().client());

#[test]
fn a_holder_that_cannot_renew_stops_issuing_by_ttl_minus_skew() {
    let mut server = Server::start();
    let lease = scenarios::lapse(&server.client(), || server.kill());
    // Release with Redis gone reports the Redis error and does not hang (a bound far above
    // the call's own, to catch a hang, not to time it).
    let start = Instant::now();
    assert!(matches!(lease.release(), Err(Error::Redis(_))));
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn after_data_loss_the_old_holder_is_lost_and_the_new_one_starts_beyond_its_fence() {
    let mut server = Server::start();
    let lay = layout(3);
    let space = Space::new("test:loss", lay)
        .ttl_ms(600)
        .skew_ms(100)
        .renew_every_ms(150);
    let old = Lease::acquire(&server.client(), &space).expect("acquire");
    assert_eq!(old.node(), 0);
    let old_ids = take(&old, 1_000);
    server.restart();
    let start = Instant::now();
    while old.is_live() && start.elapsed() < Duration::from_secs(3) {
        sleep(Duration::from_millis(10));
    }
    assert_eq!(old.state(), State::Lost);
    assert!(matches!(
        old.generator().next(),
        Err(e) if e.kind() == snowdrift::ErrorKind::PastFence
    ));
    let message = old.check().unwrap_err().to_string();
    assert_eq!(
        message,
        "node id 0 of 'test:loss' is no longer held by this lease (taken over after it ended, renewed by a copy of this holder, or Redis lost or may have lost its records: a restart, a failover, an eviction)"
    );
    let new = Lease::acquire(&server.client(), &space).expect("acquire after the loss");
    assert_eq!(new.node(), 0);
    assert!(
        new.not_before_ms() >= old.until_ms() - 1,
        "{} >= {} - 1",
        new.not_before_ms(),
        old.until_ms()
    );
    let new_ids = take(&new, 1_000);
    assert_eq!(new_ids.len(), 1_000);
    let old_set: HashSet<u64> = old_ids.iter().copied().collect();
    assert!(new_ids.iter().all(|id| !old_set.contains(id)));
    assert!(new_ids.iter().min() > old_ids.iter().max());
    old.release()
        .expect("releasing a lost lease is not an error");
}

#[test]
fn a_release_after_the_fences_were_evicted_writes_nothing_and_the_next_holder_repeats_no_id() {
    let server = Server::start();
    let client = server.client();
    let space = Space::new("test:evicted", layout(0))
        .ttl_ms(1_000)
        .skew_ms(100);
    // A new space's first leases may have one tick of ID time before their fence: 4,096
    // IDs of a 12-bit sequence.
    let old = Lease::acquire(&client, &space).expect("acquire");
    let old_ids = take(&old, 4_000);
    assert_eq!(old_ids.len(), 4_000);
    // Eviction under maxmemory removes one key at a time: here the fences, alone.
    redis::cmd("DEL")
        .arg("{test:evicted}:ends")
        .query::<()>(&mut server.connection())
        .expect("DEL");
    old.release()
        .expect("a release of records that may have lost writes is not an error");
    let new = scenarios::acquire_within(&client, &space, Duration::from_secs(3));
    assert_eq!(new.node(), 0);
    let new_ids = take(&new, 4_000);
    assert_eq!(new_ids.len(), 4_000);
    let old_set: HashSet<u64> = old_ids.iter().copied().collect();
    let repeated = new_ids.iter().filter(|id| old_set.contains(id)).count();
    assert_eq!(
        repeated, 0,
        "{repeated} of the old holder's IDs issued again"
    );
    new.release().expect("release");
}

#[test]
fn a_holder_whose_renewal_replies_are_lost_sends_one_pair_and_releases_with_it() {
    scenarios::a_holder_whose_replies_are_lost_keeps_its_pair_and_releases_with_it(
        &Server::start().client(),
    );
}

#[test]
fn invalid_options_are_refused_before_redis_is_touched() {
    let server = Server::start();
    let client = server.client();
    let cases = [
        (
            Space::new("test:bad", layout(2)).ttl_ms(50),
            "ttl_ms 50 is outside 100..=31536000000",
        ),
        (
            Space::new("test:bad", layout(2)).ttl_ms(31_536_000_001),
            "ttl_ms 31536000001 is outside 100..=31536000000",
        ),
        (
            Space::new("test:bad", layout(2))
                .ttl_ms(10_000)
                .skew_ms(6_000),
            "skew_ms 6000 must be below half of ttl_ms 10000",
        ),
        (
            Space::new("test:bad", layout(2))
                .ttl_ms(1_000)
                .skew_ms(100)
                .renew_every_ms(900),
            "renew_every_ms 900 is outside 10..=899 (below ttl_ms - skew_ms)",
        ),
        (Space::new("", layout(2)), "space name must not be empty"),
        (
            Space::new("é".repeat(1025), layout(2)),
            "space name has 1025 characters (allowed 1..=1024)",
        ),
        (
            Space::new("test:bad", layout(2)).holder("h".repeat(1025)),
            "holder has 1025 characters (allowed 0..=1024)",
        ),
        (
            Space::new("a}b", layout(2)),
            "space name 'a}b' must not contain '{' or '}' (the keys' hash tag)",
        ),
        (
            Space::new("test:bad", layout(4)).region(0, 0),
            "region bits 0 is outside 1..=3 (the layout's node field has 4 bits; at least one is leased)",
        ),
        (
            Space::new("test:bad", layout(4)).region(4, 0),
            "region bits 4 is outside 1..=3 (the layout's node field has 4 bits; at least one is leased)",
        ),
        (
            Space::new("test:bad", layout(4)).region(2, 4),
            "region id 4 does not fit in 2 bits (allowed 0..=3)",
        ),
        (
            Space::new("test:bad", layout(4)).region(3, u64::MAX),
            "region id 18446744073709551615 does not fit in 3 bits (allowed 0..=7)",
        ),
    ];
    for (space, message) in cases {
        let err = Lease::acquire(&client, &space).unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{err}");
        assert_eq!(err.to_string(), message);
    }
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut server.connection())
        .expect("KEYS");
    assert!(keys.is_empty(), "{keys:?}");
    // Nothing is sent at all: not even a connection is made.
    let nowhere = redis::Client::open("redis://127.0.0.1:1/").expect("client");
    let bad = Space::new("test:bad", layout(2)).ttl_ms(50);
    assert!(matches!(
        Lease::acquire(&nowhere, &bad),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn the_first_lease_of_a_new_space_is_usable_within_ttl_plus_skew() {
    let server = Server::start();
    let lay = layout(2);
    let (ttl, skew) = (1_000, 300);
    let space = Space::new("test:usable", lay).ttl_ms(ttl).skew_ms(skew);
    let start = Instant::now();
    let lease = Lease::acquire(&server.client(), &space).expect("acquire");
    let waited = start.elapsed();
    assert!(waited < Duration::from_millis(ttl + skew), "{waited:?}");
    // A new space fences its first leases after its guard: not before created + ttl + skew.
    assert!(lease.not_before_ms() > 0);
    assert!(lease.until_ms() > lease.not_before_ms() + 1);
    let id = lease.generator().next().expect("id");
    assert!(time_of(lay, id) > lease.not_before_ms());
    assert!(time_of(lay, id) < lease.until_ms());
}

#[test]
fn renewals_move_the_fence_while_the_lease_lives() {
    let server = Server::start();
    let space = Space::new("test:renew", layout(2))
        .ttl_ms(1_000)
        .skew_ms(100);
    let lease = Lease::acquire(&server.client(), &space).expect("acquire");
    let first_until = lease.until_ms();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(3_000) {
        lease
            .generator()
            .next()
            .expect("IDs all along, across three TTLs");
        sleep(Duration::from_millis(5));
    }
    assert!(lease.is_live());
    assert!(lease.until_ms() >= first_until + 1_500);
}

#[test]
fn under_switch_node_a_clock_step_back_moves_the_holder_to_a_fresh_lease() {
    let server = Server::start();
    let lay = layout(3);
    let clock = SteppedBack::default();
    let space = Space::new("test:switch", lay)
        .ttl_ms(1_000)
        .skew_ms(100)
        .policy(snowdrift::Policy::SwitchNode)
        .clock(clock.clone());
    // Past the new space's first ttl + skew ms, so the lease issues at the clock's time.
    Lease::acquire(&server.client(), &space)
        .and_then(Lease::release)
        .expect("first lease");
    sleep(Duration::from_millis(1_300));

    let old = Lease::acquire(&server.client(), &space).expect("lease");
    let before = take(&old, 5_000);
    assert_eq!(before.len(), 5_000);
    clock.0.store(5_000, std::sync::atomic::Ordering::SeqCst);
    let by_ms = match old.generator().next() {
        Err(e) if e.kind() == snowdrift::ErrorKind::SwitchNode => e.behind_ms().unwrap_or(0),
        _ => panic!("a 5 s step back under SwitchNode is not reported as a node switch"),
    };
    assert!(by_ms > 4_000, "step reported as {by_ms} ms");

    // The recipe: a fresh lease (another id, fenced like any), then let the old one go.
    let new = Lease::acquire(&server.client(), &space).expect("fresh lease");
    assert_ne!(new.node(), old.node());
    old.release().expect("release");
    let after = take(&new, 5_000);
    assert_eq!(after.len(), 5_000);
    assert!(
        after
            .iter()
            .all(|&id| lay.decode(id).expect("decode").node == new.node())
    );
    let all: HashSet<u64> = before.iter().chain(&after).copied().collect();
    assert_eq!(all.len(), 10_000, "an ID was issued twice");
}

#[test]
fn a_generator_switched_onto_a_fresh_lease_with_its_not_before_repeats_none_of_the_previous_holders_ids()
 {
    let server = Server::start();
    let lay = layout(1); // two node ids
    let space = Space::new("test:switch-onto", lay).ttl_ms(600).skew_ms(100);
    let client = server.client();
    // The previous holder of node 1 issues, then goes away without releasing.
    let _zero = Lease::acquire(&client, &space).expect("node 0");
    let previous = Lease::acquire(&client, &space).expect("node 1");
    assert_eq!(previous.node(), 1);
    let theirs = take(&previous, 5_000);
    previous.abandon();
    sleep(Duration::from_millis(800)); // its lease ends
    // A generator of its own, whose clock is 2.5 s behind, switches onto node 1 when its
    // new lease arrives: with the lease's notBefore, above the previous holder's IDs.
    let behind = snowdrift::FnClock(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as u64
            - 2_500
    });
    let mut generator = snowdrift::Generator::new(behind, lay, 0, snowdrift::Policy::SwitchNode)
        .expect("generator");
    let fresh = Lease::acquire(&client, &space).expect("node 1 again");
    assert_eq!(fresh.node(), 1);
    generator
        .switch_node(fresh.node(), fresh.not_before_ms())
        .expect("switch");
    let seen: HashSet<u64> = theirs.iter().copied().collect();
    for _ in 0..5_000 {
        let id = generator.next().expect("id");
        assert!(!seen.contains(&id));
        assert!(time_of(lay, id) > fresh.not_before_ms());
    }
}
