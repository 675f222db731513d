//! Leases on a 3-master Redis Cluster (feature `cluster`).
#![cfg(feature = "cluster")]

mod common;

use common::{Cluster, layout};
use redis::cluster::ClusterClient;
use snowdrift_lease::{Error, Lease, Space};
use std::thread::sleep;
use std::time::Duration;

#[test]
fn leases_on_a_cluster() {
    let cluster = Cluster::start();
    let client = ClusterClient::new(cluster.urls()).expect("cluster client");

    // Acquire, renew across two TTLs, release.
    let space = Space::new("cluster:one", layout(3))
        .ttl_ms(1_000)
        .skew_ms(100);
    let lease = Lease::acquire(&client, &space).expect("acquire");
    let first_until = lease.until_ms();
    sleep(Duration::from_millis(2_200));
    assert!(lease.is_live());
    assert!(lease.until_ms() > first_until + 1_000);
    lease.generator().next().expect("id");
    lease.release().expect("release");

    // Eight acquirers on a 3-bit space, at once.
    let space = Space::new("cluster:eight", layout(3))
        .ttl_ms(1_000)
        .skew_ms(100);
    let _held = common::acquire_concurrently(&client, &space, 8);
    let err = Lease::acquire(&client, &space).unwrap_err();
    assert!(matches!(err, Error::AllLeased { .. }));
    assert_eq!(
        err.to_string(),
        "all 8 node ids of 'cluster:eight' are leased"
    );

    #[cfg(feature = "tokio")]
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let space = Space::new("cluster:async", layout(3))
                .ttl_ms(1_000)
                .skew_ms(100);
            let lease = Lease::acquire_async(&client, &space)
                .await
                .expect("acquire_async");
            let first_until = lease.until_ms();
            tokio::time::sleep(Duration::from_millis(2_200)).await;
            assert!(lease.is_live());
            assert!(lease.until_ms() > first_until + 1_000);
            lease.generator().next().expect("id");
            lease.release_async().await.expect("release");
        });
    }
}
