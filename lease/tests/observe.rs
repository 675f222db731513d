//! What a lease reports through the `metrics` facade and as `tracing` events (features
//! `metrics` and `tracing`), against a real redis-server: renewals, a clock step back the
//! policy refuses, the space's free ids, a LOST after Redis lost its data, and a lapse.
#![cfg(all(feature = "metrics", feature = "tracing"))]

mod common;

use common::{Server, SteppedBack, layout};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use snowdrift::{ErrorKind, Policy};
use snowdrift_lease::{HealthState, Lease, Space, State, Store};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, span};

/// The tracing events heard, as `LEVEL message field=value ...`.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl tracing::Subscriber for Heard {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let line = format!("{}{}", event.metadata().level(), fields.0);
        self.0.lock().expect("lock").push(line);
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

impl Heard {
    fn count(&self, what: &str) -> usize {
        let heard = self.0.lock().expect("lock");
        heard.iter().filter(|l| l.contains(what)).count()
    }
}

/// The metrics recorded since the last snapshot, as `name{label=value,...}` (labels in
/// the order given) to their value. Counters count from the last snapshot.
fn snapshot(s: &Snapshotter) -> HashMap<String, DebugValue> {
    s.snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            (format!("{}{{{}}}", key.name(), labels.join(",")), value)
        })
        .collect()
}

fn counter(m: &HashMap<String, DebugValue>, key: &str) -> u64 {
    match m.get(key) {
        Some(DebugValue::Counter(v)) => *v,
        other => panic!("{key}: {other:?} in {m:#?}"),
    }
}

fn gauge(m: &HashMap<String, DebugValue>, key: &str) -> f64 {
    match m.get(key) {
        Some(DebugValue::Gauge(v)) => v.into_inner(),
        other => panic!("{key}: {other:?} in {m:#?}"),
    }
}

/// Waits (at most 5 s) until `f()` holds.
fn until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(5), "{what}");
        sleep(Duration::from_millis(5));
    }
}

#[test]
fn metrics_and_tracing_events_report_renewals_clock_trouble_free_ids_lost_and_lapsed() {
    let recorder = DebuggingRecorder::new();
    let metrics = recorder.snapshotter();
    recorder.install().expect("the test's recorder");
    let heard = Heard::default();
    tracing::subscriber::set_global_default(heard.clone()).expect("the test's subscriber");

    let mut server = Server::start();
    let client = server.client();
    let clock = SteppedBack::default();
    let (ttl, skew) = (1_000, 100);
    let space = Space::new("observe:metrics", layout(3))
        .ttl_ms(ttl)
        .skew_ms(skew)
        .renew_every_ms(100)
        .policy(Policy::Fail)
        .clock(clock.clone());
    // Past the new space's guard, a lease is usable at its grant.
    Lease::acquire(&client, &space)
        .and_then(Lease::release)
        .expect("first lease");
    sleep(Duration::from_millis(ttl + skew + 100));
    let _ = snapshot(&metrics);

    let lease = Lease::acquire(&client, &space).expect("acquire");
    let (space_label, node) = ("space=observe:metrics", lease.node());
    let labels = format!("{space_label},node={node}");
    lease.generator().next().expect("an ID");
    clock.0.store(5_000, Ordering::SeqCst); // the clock steps 5 s back
    let err = lease.generator().next().unwrap_err();
    // 5 s back, less the wall time between the two calls.
    assert_eq!(err.kind(), ErrorKind::ClockBackwards);
    let behind_ms = err.behind_ms().expect("the step");
    assert!((4_900..=5_000).contains(&behind_ms), "{behind_ms}");
    let renewed = lease.health().renewals;
    until("two renewals", || lease.health().renewals >= renewed + 2);
    let listing = client.listing("observe:metrics").expect("listing");
    assert_eq!(listing.free_ids(), Some(7), "{listing:?}");
    listing.record("observe:metrics");

    let m = snapshot(&metrics);
    assert_eq!(
        counter(
            &m,
            &format!("snowdrift_lease_acquires_total{{{space_label}}}")
        ),
        1
    );
    assert!(
        counter(
            &m,
            &format!("snowdrift_lease_renewals_total{{{space_label}}}")
        ) >= 2
    );
    match m.get(&format!("snowdrift_lease_renewal_seconds{{{space_label}}}")) {
        Some(DebugValue::Histogram(v)) => {
            assert!(v.len() >= 2 && v.iter().all(|s| s.into_inner() >= 0.0))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        gauge(&m, &format!("snowdrift_lease_health{{{labels},state=ok}}")),
        1.0
    );
    assert_eq!(
        gauge(
            &m,
            &format!("snowdrift_lease_health{{{labels},state=renewing late}}")
        ),
        0.0
    );
    assert_eq!(
        counter(&m, &format!("snowdrift_clock_behind_total{{{labels}}}")),
        1
    );
    assert_eq!(
        gauge(
            &m,
            &format!("snowdrift_clock_largest_behind_seconds{{{labels}}}")
        ),
        behind_ms as f64 / 1000.0
    );
    // The newest ID is timed ahead of the clock by the step, less the time since.
    let ahead = gauge(
        &m,
        &format!("snowdrift_generator_ahead_seconds{{{labels}}}"),
    );
    assert!(ahead > 3.0 && ahead <= 5.0, "{ahead}");
    assert!(
        gauge(
            &m,
            &format!("snowdrift_lease_fence_distance_seconds{{{labels}}}")
        ) > 0.0
    );
    assert!(
        gauge(&m, &format!("snowdrift_lease_fence_seconds{{{labels}}}")) * 1000.0
            <= lease.until_ms() as f64
    );
    assert_eq!(
        gauge(&m, &format!("snowdrift_space_free_ids{{{space_label}}}")),
        7.0
    );
    assert_eq!(
        gauge(&m, &format!("snowdrift_space_capacity{{{space_label}}}")),
        8.0
    );
    assert_eq!(heard.count("lease acquired"), 2);
    assert_eq!(heard.count("the clock was found behind the generator"), 1);
    assert_eq!(
        heard.count(&format!(" behind=1 largest_behind_ms={behind_ms} ")),
        1
    );

    // Redis restarts without its data: the next renewal is answered LOST.
    server.restart();
    until("the lease is lost", || lease.state() == State::Lost);
    assert_eq!(lease.health().state, HealthState::Lost);
    let m = snapshot(&metrics);
    assert_eq!(
        counter(&m, &format!("snowdrift_lease_lost_total{{{space_label}}}")),
        1
    );
    assert_eq!(
        gauge(&m, &format!("snowdrift_lease_health{{{labels},state=ok}}")),
        0.0
    );
    assert_eq!(heard.count("lease lost"), 1);
    lease.release().expect("releasing a lost lease");

    // A lease whose store goes away lapses.
    let lease = Lease::acquire(
        &server.client(),
        &space.clone().clock(SteppedBack::default()),
    )
    .expect("acquire");
    server.kill();
    until("the lease lapses", || lease.state() == State::Lapsed);
    let m = snapshot(&metrics);
    assert_eq!(
        counter(
            &m,
            &format!("snowdrift_lease_lapses_total{{{space_label}}}")
        ),
        1
    );
    assert!(
        counter(
            &m,
            &format!("snowdrift_lease_renewal_failures_total{{{space_label}}}")
        ) >= 1
    );
    assert_eq!(heard.count("lease lapsed"), 1);
    assert!(heard.count("lease renewal failed") >= 1);
    let _ = lease.release();
}
