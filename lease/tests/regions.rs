//! Regions: one store per data centre, each given its own region of one layout, never
//! issue the same ID; a holder whose region or split differs from the space's is refused.

mod common;

use common::scenarios::take;
use common::{Server, layout};
use snowdrift::Layout;
use snowdrift_lease::{Error, Lease, Space};
use std::collections::HashSet;

/// 4 node bits: a region of 1 bit above 3 leased worker bits.
const NODE_BITS: u32 = 4;
const REGION_BITS: u32 = 1;

fn space(region: u64) -> Space {
    Space::new("test:regions", layout(NODE_BITS))
        .ttl_ms(1_000)
        .skew_ms(100)
        .region(REGION_BITS, region)
}

#[test]
fn two_stores_given_their_own_regions_fill_every_id_and_issue_no_id_twice() {
    let servers = [Server::start(), Server::start()];
    let lay = layout(NODE_BITS);
    let mut seen = HashSet::new();
    let mut holders = Vec::new();
    for (region, server) in (0u64..).zip(&servers) {
        let client = server.client();
        let space = space(region);
        // Every worker id of the region (2^3), leased at once from the region's store.
        let leases = common::acquire_concurrently(&client, &space, 8);
        let err = Lease::acquire(&client, &space).unwrap_err();
        assert_eq!(
            err.to_string(),
            "all 8 node ids of 'test:regions' are leased"
        );
        for lease in leases {
            assert_eq!(lease.node() >> 3, region, "node {}", lease.node());
            holders.push(lease);
        }
    }
    // Both regions leased the same worker ids 0..8 from their stores, yet their IDs differ.
    let mut nodes: Vec<u64> = holders.iter().map(Lease::node).collect();
    nodes.sort_unstable();
    assert_eq!(nodes, (0..16).collect::<Vec<u64>>());
    for lease in &holders {
        for id in take(lease, 2_000) {
            assert_eq!(lay.decode(id).expect("decode").node, lease.node());
            assert!(seen.insert(id), "id {id} issued twice");
        }
    }
    assert_eq!(seen.len(), 16 * 2_000);
    for lease in holders {
        lease.release().expect("release");
    }
}

#[test]
fn a_holder_with_another_region_or_split_is_refused_naming_both() {
    let server = Server::start();
    let client = server.client();
    let _lease = Lease::acquire(&client, &space(1)).expect("acquire");
    let ours = space(1).layout_text();
    assert!(ours.ends_with(", region 1 of 1 bits"), "{ours}");
    let cases = [
        (space(0), 8),
        (
            Space::new("test:regions", layout(NODE_BITS))
                .ttl_ms(1_000)
                .skew_ms(100)
                .region(2, 1),
            4,
        ),
        (
            Space::new("test:regions", layout(NODE_BITS))
                .ttl_ms(1_000)
                .skew_ms(100),
            16,
        ),
    ];
    for (other, capacity) in cases {
        let err = Lease::acquire(&client, &other).unwrap_err();
        assert!(matches!(err, Error::Config { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "space 'test:regions' leases 8 node ids of layout \"{ours}\" for 1000 ms (skew 100 ms); \
                 this client asked for {capacity} node ids of layout \"{}\" for 1000 ms (skew 100 ms)",
                other.layout_text()
            )
        );
    }
}

#[test]
fn a_region_as_wide_as_the_datacenter_field_is_the_ids_datacenter() {
    let server = Server::start();
    let space = Space::new("test:twitter", Layout::TWITTER)
        .ttl_ms(1_000)
        .skew_ms(100)
        .region(Layout::TWITTER.datacenter_bits(), 21);
    let lease = Lease::acquire(&server.client(), &space).expect("acquire");
    let lay = Layout::TWITTER;
    let node = lay
        .decode(lease.generator().next().expect("id"))
        .expect("decode")
        .node;
    assert_eq!((lay.datacenter_of(node), lay.worker_of(node)), (21, 0));
    assert_eq!(lease.node(), 21 << 5);
    lease.release().expect("release");
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tokio_holder_composes_the_region_into_its_node_id() {
    let server = Server::start();
    let client = server.client();
    let lease = Lease::acquire_async(&client, &space(1))
        .await
        .expect("acquire_async");
    assert_eq!(lease.node(), 1 << 3);
    let id = lease.generator().next().expect("id");
    assert_eq!(layout(NODE_BITS).decode(id).expect("decode").node, 1 << 3);
    lease.release_async().await.expect("release");
}
