//! `acquire_async` with a tokio heartbeat (feature `tokio`).
#![cfg(feature = "tokio")]

mod common;

use common::{Server, layout};
use snowdrift_lease::{HealthState, Lease, Space, State};
use std::time::{Duration, Instant};

/// A space of `node_bits` with `ttl_ms` and `skew_ms`, and a lease of it from `client`.
async fn leased(
    client: &redis::Client,
    key: &str,
    node_bits: u32,
    ttl_ms: u64,
    skew_ms: u64,
) -> (Space, Lease) {
    let space = Space::new(key, layout(node_bits))
        .ttl_ms(ttl_ms)
        .skew_ms(skew_ms);
    let lease = Lease::acquire_async(client, &space)
        .await
        .expect("acquire_async");
    (space, lease)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_task_keeps_the_lease_alive_past_two_ttls() {
    let server = Server::start();
    let client = server.client();
    let ttl = 1_000;
    let (space, lease) = leased(&client, "tokio:alive", 2, ttl, 100).await;
    let first_until = lease.until_ms();
    let mut ids = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(ttl * 5 / 2) {
        ids.push(lease.generator().next().expect("IDs across two TTLs"));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(lease.is_live());
    assert!(lease.until_ms() >= first_until + ttl);
    assert!(ids.windows(2).all(|w| w[1] > w[0]));
    assert_eq!(lease.node(), 0);
    lease.release_async().await.expect("release");
    let next = loop {
        match Lease::acquire_async(&client, &space).await {
            Ok(lease) => break lease,
            Err(snowdrift_lease::Error::AllLeased { .. })
                if start.elapsed() < Duration::from_secs(5) =>
            {
                tokio::time::sleep(Duration::from_millis(5)).await
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(next.node(), 1); // the lowest id never leased comes first
    assert!(next.generator().next().expect("id") > 0);
    drop(next); // released by a background task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_task_renews_a_new_space_s_first_lease_early_near_its_fence() {
    let server = Server::start();
    let (_, lease) = leased(&server.client(), "tokio:ahead", 3, 30_000, 100).await;
    let lease = tokio::task::spawn_blocking(move || {
        assert_eq!(
            common::scenarios::take_through_fence(&lease, 2_000_000),
            2_000_000
        );
        lease
    })
    .await
    .expect("taken");
    lease.release_async().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_task_lapses_when_redis_is_gone() {
    let mut server = Server::start();
    let (_, lease) = leased(&server.client(), "tokio:lapse", 2, 2_000, 500).await;
    assert_eq!(lease.health().state, HealthState::Ok);
    server.kill();
    let start = Instant::now();
    let mut seen = vec![lease.health().state];
    while lease.is_live() && start.elapsed() < Duration::from_secs(4) {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let state = lease.health().state;
        if seen.last() != Some(&state) {
            seen.push(state);
        }
    }
    assert_eq!(lease.state(), State::Lapsed);
    // The heartbeat task's lease goes through the same states as the thread's.
    assert_eq!(
        seen,
        [
            HealthState::Ok,
            HealthState::RenewingLate,
            HealthState::Lapsed
        ]
    );
    assert!(lease.health().renewal_failures >= 1);
    assert!(matches!(
        lease.generator().next(),
        Err(e) if e.kind() == snowdrift::ErrorKind::PastFence
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_task_renews_on_past_a_copy_and_is_lost_to_a_copy_that_renewed_first() {
    let server = Server::start();
    common::scenarios::copies_of_the_async_holder(&server.client()).await;
}
