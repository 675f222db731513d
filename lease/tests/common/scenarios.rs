//! Lease scenarios every store must pass: the Redis tests (`lease.rs`) and the
//! PostgreSQL tests (`postgres.rs`) run the same bodies against their own servers.

use super::gated::{Gated, Outcome, REPLIES_LOST};
use super::layout;
use snowdrift::Layout;
use snowdrift_lease::{Error, HealthState, Lease, Space, State, Store, Ticket};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// One `#[test]` per scenario named (`test_name => scenario_function`), each running the
/// scenario against the store `$store` gives (evaluated in each test).
#[allow(unused_macros)]
macro_rules! scenario_tests {
    ($store:expr; $($test:ident => $scenario:ident),+ $(,)?) => {
        $(
            #[test]
            fn $test() {
                $crate::common::scenarios::$scenario(&$store);
            }
        )+
    };
}
#[allow(unused_imports)]
pub(crate) use scenario_tests;

/// The scenarios every store passes, one `#[test]` each, against the store `$store` gives.
#[allow(unused_macros)]
macro_rules! store_scenarios {
    ($store:expr) => {
        $crate::common::scenarios::scenario_tests! {
            $store;
            thirty_two_acquirers_get_thirty_two_distinct_ids_and_the_33rd_is_refused => many,
            expired_leases_are_reclaimed_oldest_fence_first_and_resume_after_it => reclaim,
            release_hands_on_issued_through_so_the_next_holder_starts_above_at_once => release_hands_on,
            a_new_space_s_first_lease_renews_early_while_its_generator_is_near_the_fence => new_space_renews_early,
            a_copy_of_the_holder_renewing_after_it_is_lost_and_the_holder_renews_on => a_copy_renewing_after_the_holder_is_lost,
            a_holder_whose_copy_renewed_first_is_lost_and_its_generator_stops => a_holder_whose_copy_renewed_first_is_lost,
            a_renewal_sent_twice_with_one_pair_renews_twice_and_the_pair_releases => a_renewal_sent_twice_renews_twice_and_its_pair_releases,
            the_listing_shows_settings_ids_and_holders => list,
            a_space_has_one_setting => one_setting,
            health_is_ok_then_renewing_late_then_lapsed_when_renewals_fail => health_late_then_lapsed,
        }
    };
}
#[allow(unused_imports)]
pub(crate) use store_scenarios;

pub fn time_of(layout: Layout, id: u64) -> u64 {
    layout.decode(id).expect("decode").time_ms
}

/// Acquires, retrying while every id is leased, for at most `limit`.
pub fn acquire_within<K: Store>(store: &K, space: &Space, limit: Duration) -> Lease {
    let start = Instant::now();
    loop {
        match Lease::acquire(store, space) {
            Ok(lease) => return lease,
            Err(Error::AllLeased { .. }) if start.elapsed() < limit => {
                sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// Takes IDs until `n` are issued or the generator refuses.
pub fn take<C: snowdrift::Clock>(lease: &Lease<C>, n: usize) -> Vec<u64> {
    (0..n)
        .map_while(|_| lease.generator().next().ok())
        .collect()
}

/// Takes `n` IDs from the lease's generator within 5 s, waiting 20 ms whenever it
/// refuses at its fence; returns how many it took. They must go up.
pub fn take_through_fence<C: snowdrift::Clock>(lease: &Lease<C>, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    let (mut taken, mut last) = (0, 0);
    while taken < n && Instant::now() < deadline {
        match lease.generator().next() {
            Ok(id) => {
                assert!(id > last, "IDs go up");
                (taken, last) = (taken + 1, id);
            }
            Err(e) if e.kind() == snowdrift::ErrorKind::PastFence => {
                sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{e}"),
        }
    }
    taken
}

/// A new space's first lease is fenced a TTL ahead of the store's clock and gets ID time
/// only from renewals: 2,000,000 IDs (about 490 ms of ID time) need several early ones,
/// long before the regular renewal every ttl / 3 (10 s).
pub fn new_space_renews_early<K: Store>(client: &K) {
    let space = Space::new("test:ahead", layout(3))
        .ttl_ms(30_000)
        .skew_ms(100);
    let lease = Lease::acquire(client, &space).expect("acquire");
    assert_eq!(take_through_fence(&lease, 2_000_000), 2_000_000);
    lease.release().expect("release");
}

/// 32 concurrent acquirers of a 5-bit space get 32 distinct ids; the 33rd is refused with the exact message.
pub fn many<K: Sync + Store>(client: &K) {
    let space = Space::new("test:many", layout(5))
        .ttl_ms(1_000)
        .skew_ms(100);
    let leases = super::acquire_concurrently(client, &space, 32);
    let err = Lease::acquire(client, &space).unwrap_err();
    assert!(matches!(err, Error::AllLeased { .. }));
    assert_eq!(err.to_string(), "all 32 node ids of 'test:many' are leased");
    // Every lease issues, with its own node id in its IDs.
    for lease in &leases {
        let id = lease.generator().next().expect("id");
        assert_eq!(layout(5).decode(id).expect("decode").node, lease.node());
    }
}

/// Ended leases are reclaimed oldest fence first, and the next holder issues after it.
pub fn reclaim<K: Store>(client: &K) {
    let lay = layout(2);
    let space = Space::new("test:reclaim", lay).ttl_ms(600).skew_ms(100);
    let mut held: Vec<Lease> = (0..4)
        .map(|_| Lease::acquire(client, &space).expect("acquire"))
        .collect();
    let old_ids: Vec<Vec<u64>> = held.iter().map(|l| take(l, 100)).collect();
    // Node 2 stops first; node 0 renews at least once more, then stops too.
    let (n2, n0) = (held.remove(2), held.remove(0));
    let (node2, until2) = (n2.node(), n2.until_ms());
    n2.abandon();
    sleep(Duration::from_millis(300));
    let (node0, until0) = (n0.node(), n0.until_ms());
    n0.abandon();
    assert!(until2 < until0, "{until2} < {until0}");
    // Both expire (the other two stay live); the oldest fence goes first.
    let first = acquire_within(client, &space, Duration::from_secs(3));
    assert_eq!(first.node(), node2);
    assert!(
        first.not_before_ms() >= until2 - 1,
        "{} >= {until2} - 1",
        first.not_before_ms()
    );
    let id = first.generator().next().expect("id");
    assert!(time_of(lay, id) > first.not_before_ms());
    assert!(id > *old_ids[2].iter().max().unwrap());
    // Node 0's fence passes next (how long after node 2's depends on its heartbeat).
    let second = acquire_within(client, &space, Duration::from_secs(3));
    assert_eq!(second.node(), node0);
    assert!(second.not_before_ms() >= until0 - 1);
    let id = second.generator().next().expect("id");
    assert!(time_of(lay, id) > second.not_before_ms());
    assert!(id > *old_ids[0].iter().max().unwrap());
    assert!(matches!(
        Lease::acquire(client, &space),
        Err(Error::AllLeased { .. })
    ));
}

/// A release hands the id on from the newest ID issued: the next holder takes it at once and issues above.
pub fn release_hands_on<K: Store>(client: &K) {
    let lay = layout(0);
    let (ttl, skew) = (1_000, 100);
    let space = Space::new("test:release", lay).ttl_ms(ttl).skew_ms(skew);
    let first = Lease::acquire(client, &space).expect("acquire");
    // A new space's leases start after its guard (created + ttl + skew); past it, the
    // generator issues at the clock's time.
    sleep(Duration::from_millis(ttl + skew + 100));
    let ids = take(&first, 5_000);
    assert_eq!(ids.len(), 5_000);
    let newest_ms = time_of(lay, *ids.iter().max().unwrap());
    let lease_end = first.until_ms();
    first.release().expect("release");
    // The fence came down to just after the newest ID, below the lease's end: the store
    // lets the id go as soon as its clock passes that.
    let fence = client
        .listing("test:release")
        .expect("listing")
        .ids
        .iter()
        .find(|l| l.node == 0)
        .expect("node 0 is listed")
        .until;
    assert!(
        fence > newest_ms && fence < lease_end,
        "fence {fence} after the newest ID ({newest_ms}) and before the lease's end ({lease_end})"
    );
    let next = acquire_within(client, &space, Duration::from_millis(ttl + skew));
    assert_eq!(next.node(), 0);
    assert!(next.not_before_ms() >= fence - 1);
    let id = next.generator().next().expect("id");
    assert!(id > *ids.iter().max().unwrap());
    // Releasing twice, or dropping after release, is harmless.
    next.release().expect("release");
}

/// A space leased with one TTL or layout refuses another, naming both.
pub fn one_setting<K: Store>(client: &K) {
    let space = Space::new("test:config", layout(2))
        .ttl_ms(1_000)
        .skew_ms(100);
    let _lease = Lease::acquire(client, &space).expect("acquire");
    let other = Space::new("test:config", layout(2))
        .ttl_ms(2_000)
        .skew_ms(100);
    let err = Lease::acquire(client, &other).unwrap_err();
    assert!(matches!(err, Error::Config { .. }));
    let ours = space.layout_text();
    assert_eq!(
        err.to_string(),
        format!(
            "space 'test:config' leases 4 node ids of layout \"{ours}\" for 1000 ms (skew 100 ms); \
             this client asked for 4 node ids of layout \"{ours}\" for 2000 ms (skew 100 ms)"
        )
    );
    // The same node width with another epoch: the holders' IDs would not compare by time.
    let epoch = layout(2).epoch_ms() - 1_000;
    let shifted = Layout::builder()
        .time_bits(41)
        .node_bits(2)
        .sequence_bits(12)
        .epoch_ms(epoch)
        .build()
        .expect("layout");
    let other = Space::new("test:config", shifted)
        .ttl_ms(1_000)
        .skew_ms(100);
    let err = Lease::acquire(client, &other).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "space 'test:config' leases 4 node ids of layout \"{ours}\" for 1000 ms (skew 100 ms); \
             this client asked for 4 node ids of layout \"time 41 bits of 1 ms from {epoch}, node 2 bits, \
             sequence 12 bits, node above sequence\" for 1000 ms (skew 100 ms)"
        )
    );
}

/// A holder whose store is cut off by `cut_off` (killed, paused) stops issuing by
/// `ttl - skew` after its last good renewal, and says it lapsed; returns the lease.
pub fn lapse<K: Store>(store: &K, cut_off: impl FnOnce()) -> Lease {
    let lay = layout(3);
    let (ttl, skew) = (2_000, 500);
    let space = Space::new("test:lapse", lay)
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(500);
    let lease = Lease::acquire(store, &space).expect("acquire");
    assert!(!take(&lease, 10).is_empty());
    cut_off();
    let cut = Instant::now();
    // The last successful renewal was sent before the cut.
    let deadline = cut + Duration::from_millis(ttl - skew);
    let mut stopped_at = None;
    while cut.elapsed() < Duration::from_secs(4) {
        match lease.generator().next() {
            Ok(id) => {
                assert!(stopped_at.is_none(), "an ID after the generator stopped");
                assert!(time_of(lay, id) < lease.until_ms());
            }
            Err(e) if e.kind() == snowdrift::ErrorKind::PastFence => {
                stopped_at.get_or_insert_with(Instant::now);
                if cut.elapsed() > Duration::from_millis(ttl + 200) {
                    break;
                }
            }
            Err(e) => panic!("{e}"),
        }
        sleep(Duration::from_micros(200));
    }
    let stopped_at = stopped_at.expect("the generator stopped");
    // By ttl - skew after the last good renewal, with up to 400 ms of slack for the
    // heartbeat's naps and a busy machine: still before the lease's end.
    assert!(
        stopped_at <= deadline + Duration::from_millis(400),
        "stopped {:?} after the deadline",
        stopped_at - deadline
    );
    assert_eq!(lease.state(), State::Lapsed);
    assert_eq!(
        lease.check().unwrap_err().to_string(),
        "lease of node 0 of 'test:lapse' lapsed: no renewal succeeded for 1500 ms (ttl 2000 ms, skew 500 ms)"
    );
    lease
}

/// The listing shows the space's settings and its ids, oldest fence first, a released
/// one without a holder; a space that does not exist has no settings.
pub fn list<K: Store>(client: &K) {
    let space = Space::new("test:list", layout(2))
        .ttl_ms(1_000)
        .skew_ms(100)
        .holder("test holder");
    let first = Lease::acquire(client, &space).expect("acquire");
    let second = Lease::acquire(client, &space).expect("acquire");
    let (first_node, second_node) = (first.node(), second.node());
    first.release().expect("release");
    let listing = client.listing("test:list").expect("list");
    assert_eq!(listing.capacity, Some(4));
    assert_eq!((listing.ttl_ms, listing.skew_ms), (Some(1_000), Some(100)));
    assert_eq!(listing.next, Some(2));
    assert!(listing.created.is_some_and(|c| c <= listing.now));
    let ids: Vec<(u64, Option<&str>)> = listing
        .ids
        .iter()
        .map(|l| (l.node, l.holder.as_deref()))
        .collect();
    assert_eq!(
        ids,
        [(first_node, None), (second_node, Some("test holder"))]
    );
    assert_eq!(listing.ids[1].until, second.until_ms());
    let none = client.listing("test:none").expect("list");
    assert_eq!((none.capacity, none.next), (None, None));
    assert!(none.ids.is_empty());
}

/// The ticket of a copy of `lease`'s holder taken at its acquire (a VM snapshot resumed
/// beside it): the acquire's token, and a next token of the copy's own.
fn copy_of(gated: &Gated<impl Store>, lease: &Lease) -> Ticket {
    Ticket {
        space: lease.space().into(),
        node: lease.node(),
        token: gated.acquired()[0].clone(),
        next: Some("the copy's next".into()),
    }
}

/// `lease` stopped, lost to `copy`, which renewed first: its generator refuses, and every
/// renewal it sent through `gated` carried one pair, the acquire's token and the next
/// token drawn for its first try, the last one answered `LOST`.
fn lost_to_the_copy(gated: &Gated<impl Store>, copy: &Ticket, lease: &Lease) {
    assert_eq!(lease.state(), State::Lost, "{:?}", lease.check());
    assert!(matches!(
        lease.generator().next(),
        Err(e) if e.kind() == snowdrift::ErrorKind::PastFence
    ));
    let err = lease.check().unwrap_err();
    assert!(matches!(err, Error::Lost { .. }), "{err}");
    let sent = gated.renewals();
    assert_eq!(
        sent.last().map(|(_, o)| *o),
        Some(Outcome::Lost),
        "{sent:?}"
    );
    assert!(sent[0].0.next.is_some(), "{sent:?}");
    assert_ne!(sent[0].0.next, copy.next);
    for (ticket, _) in &sent {
        assert_eq!(
            (&ticket.token, &ticket.next),
            (&copy.token, &sent[0].0.next)
        );
    }
}

/// A copy of a holder that renews after the holder renewed is told the lease is lost (its
/// token was replaced), and its release writes nothing; the holder goes on renewing and
/// releases its id.
pub fn a_copy_renewing_after_the_holder_is_lost<K: Store>(store: &K) {
    let gated = Gated::new(store.clone());
    let space = Space::new("test:copied-late", layout(1))
        .ttl_ms(1_000)
        .skew_ms(100)
        .renew_every_ms(100);
    let lease = Lease::acquire(&gated, &space).expect("acquire");
    let copy = copy_of(&gated, &lease);
    gated.wait_for(1, Outcome::Renewed);
    let mut con = store.connect(Duration::from_secs(5)).expect("connect");
    let err = K::renew(&mut con, &copy, 1_000).unwrap_err();
    assert!(matches!(err, Error::Lost { .. }), "{err}");
    assert!(
        err.to_string().contains("renewed by a copy of this holder"),
        "{err}"
    );
    let issued = lease.not_before_ms() + 1;
    assert!(!K::release(&mut con, &copy, issued).expect("the copy's release"));
    // The holder renews on, with the tokens it drew.
    let renewed = gated.count(Outcome::Renewed);
    let until = lease.until_ms();
    gated.wait_for(renewed + 3, Outcome::Renewed);
    assert!(lease.is_live(), "{:?}", lease.check());
    assert!(lease.until_ms() > until);
    assert!(!take(&lease, 100).is_empty());
    assert_eq!(gated.count(Outcome::Lost), 0, "{:?}", gated.renewals());
    let node = lease.node();
    lease.release().expect("release");
    let listed = store.listing("test:copied-late").expect("listing");
    let id = listed.ids.iter().find(|l| l.node == node).expect("listed");
    assert_eq!(id.holder, None, "released with the holder's token");
}

/// A copy of a holder that renews first keeps the lease: the holder, which drew one next
/// token for a renewal that could not reach the store and sent that same pair at every
/// beat since, is told the lease is lost at its next renewal, and its generator stops.
pub fn a_holder_whose_copy_renewed_first_is_lost<K: Store>(store: &K) {
    let (ttl, skew) = (2_000, 100);
    let space = past_its_guard(store, "test:copied-first", ttl, skew);
    let gated = Gated::new(store.clone());
    gated.shut(true);
    let lease = Lease::acquire(&gated, &space).expect("acquire");
    let copy = copy_of(&gated, &lease);
    gated.wait_for(2, Outcome::Shut);
    let mut con = store.connect(Duration::from_secs(5)).expect("connect");
    K::renew(&mut con, &copy, ttl).expect("the copy renews first");
    gated.shut(false);
    let start = Instant::now();
    while lease.is_live() && start.elapsed() < Duration::from_secs(5) {
        sleep(Duration::from_millis(5));
    }
    lost_to_the_copy(&gated, &copy, &lease);
    let health = lease.health();
    assert_eq!(health.state, HealthState::Lost);
    assert_eq!(health.renewals, 0, "no renewal of the holder was accepted");
    assert_eq!(
        health.renewal_failures as usize,
        gated.count(Outcome::Shut) + gated.count(Outcome::Lost),
        "every renewal that failed is counted: {health:?}"
    );
    // The holder's release writes nothing; the copy renews on with its token, and releases.
    lease
        .release()
        .expect("releasing a lost lease is not an error");
    let the_copy = Ticket {
        token: "the copy's next".into(),
        next: Some("the copy's next but one".into()),
        ..copy
    };
    K::renew(&mut con, &the_copy, ttl).expect("the copy renews again");
    let the_copy = Ticket {
        token: "the copy's next but one".into(),
        next: None,
        ..the_copy
    };
    let listed = store.listing("test:copied-first").expect("listing");
    assert!(listed.ids[0].holder.is_some(), "{listed:?}");
    assert!(K::release(&mut con, &the_copy, listed.now).expect("the copy's release"));
}

/// A renewal sent twice with one pair (its reply lost, then sent again) renews twice: the
/// second finds the next token in place. The old token alone is not the lease's any
/// more; a release with the pair releases it, once.
pub fn a_renewal_sent_twice_renews_twice_and_its_pair_releases<K: Store>(store: &K) {
    let space = Space::new("test:twice", layout(0))
        .ttl_ms(1_000)
        .skew_ms(100);
    let mut con = store.connect(Duration::from_secs(5)).expect("connect");
    let grant = K::acquire(&mut con, &space, "token-a").expect("acquire");
    let pair = Ticket {
        space: "test:twice".into(),
        node: grant.node,
        token: "token-a".into(),
        next: Some("token-b".into()),
    };
    let until = K::renew(&mut con, &pair, 1_000).expect("renew");
    let again = K::renew(&mut con, &pair, 1_000).expect("the same renewal again");
    assert!(again >= until);
    let other = Ticket {
        next: Some("token-c".into()),
        ..pair.clone()
    };
    let err = K::renew(&mut con, &other, 1_000).unwrap_err();
    assert!(matches!(err, Error::Lost { .. }), "{err}");
    let alone = Ticket {
        next: None,
        ..pair.clone()
    };
    let issued = grant.not_before + 1;
    assert!(!K::release(&mut con, &alone, issued).expect("release"));
    assert!(K::release(&mut con, &pair, issued).expect("release"));
    assert!(!K::release(&mut con, &pair, issued).expect("release again"));
    let listed = store.listing("test:twice").expect("listing");
    assert_eq!(listed.ids[0].holder, None, "{listed:?}");
}

/// A holder whose renewals reach the store and whose replies are lost sends one pair
/// again and again (the store renews each), and its release, sent with that pair,
/// releases the id.
pub fn a_holder_whose_replies_are_lost_keeps_its_pair_and_releases_with_it<K: Store>(store: &K) {
    let gated = Gated::new(store.clone());
    let space = Space::new("test:unanswered", layout(0))
        .ttl_ms(2_000)
        .skew_ms(100)
        .renew_every_ms(100);
    let lease = Lease::acquire(&gated, &space).expect("acquire");
    gated.set(REPLIES_LOST);
    gated.wait_for(2, Outcome::ReplyLost);
    let unanswered: Vec<Ticket> = gated
        .renewals()
        .into_iter()
        .filter(|(_, o)| *o == Outcome::ReplyLost)
        .map(|(t, _)| t)
        .collect();
    assert!(unanswered[0].next.is_some(), "{unanswered:?}");
    assert!(
        unanswered.iter().all(|t| *t == unanswered[0]),
        "{unanswered:?}"
    );
    assert!(lease.is_live(), "{:?}", lease.check());
    lease.release().expect("release");
    let listed = store.listing("test:unanswered").expect("listing");
    assert_eq!(listed.ids[0].holder, None, "released: {listed:?}");
}

/// [`Gated::wait_for`] off the runtime's threads.
#[cfg(feature = "tokio")]
async fn wait_for<K: Clone + Send + Sync + 'static>(gated: &Gated<K>, n: usize, outcome: Outcome) {
    let gated = gated.clone();
    tokio::task::spawn_blocking(move || gated.wait_for(n, outcome))
        .await
        .expect("waited");
}

/// The tokio holder against copies of itself (as the blocking one above): a copy that
/// renews after it is lost and the holder renews on; then, on a lease whose gate is shut,
/// a copy that renews first makes the holder's next renewal lost.
#[cfg(feature = "tokio")]
pub async fn copies_of_the_async_holder<K: Store + snowdrift_lease::AsyncStore>(store: &K) {
    let ttl = 2_000;
    let space = Space::new("test:copied-async", layout(1))
        .ttl_ms(ttl)
        .skew_ms(100)
        .renew_every_ms(100);
    let mut con = store.connect_async().await.expect("connect");
    let gated = Gated::new(store.clone());
    let created = Instant::now();
    let lease = Lease::acquire_async(&gated, &space).await.expect("acquire");
    let copy = copy_of(&gated, &lease);
    wait_for(&gated, 1, Outcome::Renewed).await;
    let err = K::renew_async(&mut con, &copy, ttl).await.unwrap_err();
    assert!(matches!(err, Error::Lost { .. }), "{err}");
    let renewed = gated.count(Outcome::Renewed);
    wait_for(&gated, renewed + 3, Outcome::Renewed).await;
    assert!(lease.is_live(), "{:?}", lease.check());
    assert_eq!(gated.count(Outcome::Lost), 0, "{:?}", gated.renewals());
    lease.release_async().await.expect("release");

    // Past the new space's guard (ttl + skew), a lease is usable at its grant.
    let guard = Duration::from_millis(ttl + 100 + 100);
    tokio::time::sleep(guard.saturating_sub(created.elapsed())).await;
    let gated = Gated::new(store.clone());
    gated.shut(true);
    let lease = Lease::acquire_async(&gated, &space).await.expect("acquire");
    let copy = copy_of(&gated, &lease);
    wait_for(&gated, 2, Outcome::Shut).await;
    K::renew_async(&mut con, &copy, ttl)
        .await
        .expect("the copy renews first");
    gated.shut(false);
    wait_for(&gated, 1, Outcome::Lost).await;
    let start = Instant::now();
    while lease.is_live() && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    lost_to_the_copy(&gated, &copy, &lease);
    lease
        .release_async()
        .await
        .expect("releasing a lost lease is not an error");
}

/// `Lease::health` through a lease's life: `Ok` while renewals succeed, `RenewingLate`
/// once half of `ttl - skew` passed since the newest successful one was sent (renewals
/// fail at a shut gate), then `Lapsed` at `ttl - skew`.
pub fn health_late_then_lapsed<K: Store>(store: &K) {
    let (ttl, skew) = (1_000, 100);
    let space = past_its_guard(store, "test:health", ttl, skew);
    let gated = Gated::new(store.clone());
    let lease = Lease::acquire(&gated, &space).expect("acquire");
    gated.wait_for(2, Outcome::Renewed);
    assert!(!take(&lease, 10).is_empty());
    let ok = lease.health();
    assert_eq!(ok.state, HealthState::Ok);
    assert_eq!(ok.node, lease.node());
    assert!(ok.renewals >= 2, "{ok:?}");
    assert_eq!(ok.renewal_failures, 0);
    assert!(ok.last_renewal_latency.is_some());
    let live_for = Duration::from_millis(ttl - skew);
    assert_eq!(ok.lapse_at - ok.last_renewal_sent, live_for);
    assert_eq!(ok.late_at - ok.last_renewal_sent, live_for / 2);
    assert_eq!(ok.fence_distance_ms, ok.fence_ms - ok.issued_through_ms);
    assert!(ok.fence_distance_ms > 0);

    gated.shut(true);
    let start = Instant::now();
    let mut health = lease.health();
    while health.state == HealthState::Ok && start.elapsed() < Duration::from_secs(5) {
        sleep(Duration::from_millis(5));
        health = lease.health();
    }
    assert_eq!(
        health.state,
        HealthState::RenewingLate,
        "late before the lapse: {health:?}"
    );
    assert!(Instant::now() >= health.late_at && health.last_renewal_sent < health.late_at);
    assert!(lease.is_live());
    while health.state == HealthState::RenewingLate && start.elapsed() < Duration::from_secs(5) {
        sleep(Duration::from_millis(5));
        health = lease.health();
    }
    assert_eq!(health.state, HealthState::Lapsed, "{health:?}");
    assert_eq!(lease.state(), State::Lapsed);
    assert!(health.renewal_failures >= 1, "{health:?}");
    assert!(Instant::now() >= health.lapse_at);
    lease.release().expect("release");
}

/// A space of one node id (`ttl`, `skew`, renewed every 100 ms) made and waited past its
/// guard, so that a lease of it is usable at its grant, without a renewal.
fn past_its_guard<K: Store>(store: &K, name: &str, ttl: u64, skew: u64) -> Space {
    let space = Space::new(name, layout(0))
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(100);
    Lease::acquire(store, &space)
        .and_then(Lease::release)
        .expect("first lease");
    sleep(Duration::from_millis(ttl + skew + 100));
    space
}
