//! What a lease reports as it goes: through the `metrics` facade (feature `metrics`) and
//! as `tracing` events (feature `tracing`); nothing without them. Reported on the lease's
//! own calls to its store (an acquire, each renewal's answer, the stop), never on a
//! generator's `next()`. docs/observability.md lists every name.

use crate::error::Error;
use crate::held::Held;
use crate::lease_state::State;
use snowdrift::Clock;
use std::time::Duration;

/// Something that happened to a lease (each feature reads what it reports).
#[cfg_attr(not(all(feature = "metrics", feature = "tracing")), allow(dead_code))]
pub(crate) enum Event<'a> {
    /// The lease was granted and is usable.
    Acquired,
    /// The store accepted a renewal, answering after `latency` with the fence `until`.
    Renewed { latency: Duration, until: u64 },
    /// A renewal failed after `latency`.
    RenewalFailed { latency: Duration, error: &'a Error },
    /// The lease stopped in `state` (`message`: the store's, for `Lost`).
    Stopped {
        state: State,
        message: Option<&'a str>,
    },
}

/// Reports `event` of the lease `held`.
#[cfg_attr(
    not(any(feature = "metrics", feature = "tracing")),
    allow(unused_variables)
)]
pub(crate) fn report<C: Clock>(held: &Held<C>, event: Event<'_>) {
    #[cfg(feature = "tracing")]
    trace(held, &event);
    #[cfg(feature = "metrics")]
    record(held, &event);
    // The clock trouble the generator counted since the last report (a warning per report
    // that found more, not per call of the generator).
    #[cfg(any(feature = "metrics", feature = "tracing"))]
    if !matches!(event, Event::Stopped { .. }) {
        let stats = held.generator.stats();
        let before = held
            .reported_behind
            .swap(stats.behind, std::sync::atomic::Ordering::Relaxed);
        #[cfg(feature = "tracing")]
        if stats.behind > before {
            tracing::warn!(
                target: "snowdrift_lease",
                space = %held.space,
                node = held.node,
                behind = stats.behind,
                largest_behind_ms = stats.largest_behind_ms,
                clock_waits = stats.clock_waits,
                "the clock was found behind the generator"
            );
        }
        #[cfg(not(feature = "tracing"))]
        let _ = before;
    }
}

#[cfg(feature = "tracing")]
fn trace<C: Clock>(held: &Held<C>, event: &Event<'_>) {
    let (space, node) = (&held.space, held.node);
    match event {
        Event::Acquired => tracing::info!(
            target: "snowdrift_lease",
            space = %space,
            node,
            not_before_ms = held.not_before,
            "lease acquired"
        ),
        Event::Renewed { latency, until } => tracing::debug!(
            target: "snowdrift_lease",
            space = %space,
            node,
            until_ms = until,
            latency_ms = latency.as_millis() as u64,
            "lease renewed"
        ),
        Event::RenewalFailed { latency, error } => tracing::warn!(
            target: "snowdrift_lease",
            space = %space,
            node,
            latency_ms = latency.as_millis() as u64,
            error = %error,
            "lease renewal failed"
        ),
        Event::Stopped {
            state: State::Lost,
            message,
        } => tracing::error!(
            target: "snowdrift_lease",
            space = %space,
            node,
            message = message.unwrap_or_default(),
            "lease lost: the generator stopped"
        ),
        Event::Stopped {
            state: State::Lapsed,
            ..
        } => tracing::error!(
            target: "snowdrift_lease",
            space = %space,
            node,
            ttl_ms = held.ttl_ms,
            "lease lapsed: no renewal succeeded for ttl - skew; the generator stopped"
        ),
        Event::Stopped { state, .. } => {
            tracing::info!(target: "snowdrift_lease", space = %space, node, state = ?state, "lease stopped")
        }
    }
}

#[cfg(feature = "metrics")]
fn record<C: Clock>(held: &Held<C>, event: &Event<'_>) {
    use crate::health::HealthState;
    use metrics::{counter, gauge, histogram};
    let space = held.space.clone();
    match event {
        Event::Acquired => {
            counter!("snowdrift_lease_acquires_total", "space" => space.clone()).increment(1)
        }
        Event::Renewed { latency, .. } => {
            counter!("snowdrift_lease_renewals_total", "space" => space.clone()).increment(1);
            histogram!("snowdrift_lease_renewal_seconds", "space" => space.clone())
                .record(latency.as_secs_f64());
        }
        Event::RenewalFailed { latency, .. } => {
            counter!("snowdrift_lease_renewal_failures_total", "space" => space.clone())
                .increment(1);
            histogram!("snowdrift_lease_renewal_seconds", "space" => space.clone())
                .record(latency.as_secs_f64());
        }
        Event::Stopped { state, .. } => {
            match state {
                State::Lost => {
                    counter!("snowdrift_lease_lost_total", "space" => space.clone()).increment(1)
                }
                State::Lapsed => {
                    counter!("snowdrift_lease_lapses_total", "space" => space.clone()).increment(1)
                }
                _ => {}
            }
            let node = held.node.to_string();
            for s in [HealthState::Ok, HealthState::RenewingLate] {
                gauge!("snowdrift_lease_health", "space" => space.clone(), "node" => node.clone(), "state" => s.as_str())
                    .set(0.0);
            }
            return;
        }
    }
    // The lease's gauges, as of this report.
    let h = held.health();
    let node = h.node.to_string();
    let labels = [("space", space), ("node", node)];
    for s in [HealthState::Ok, HealthState::RenewingLate] {
        let mut with_state = labels.to_vec();
        with_state.push(("state", s.as_str().to_string()));
        gauge!("snowdrift_lease_health", &with_state).set(if h.state == s { 1.0 } else { 0.0 });
    }
    let ms = |v: u64| v as f64 / 1000.0;
    gauge!("snowdrift_lease_fence_seconds", &labels).set(ms(h.fence_ms));
    gauge!("snowdrift_lease_fence_distance_seconds", &labels).set(ms(h.fence_distance_ms));
    gauge!("snowdrift_generator_ahead_seconds", &labels).set(ms(h.clock.ahead_ms));
    gauge!("snowdrift_clock_largest_behind_seconds", &labels).set(ms(h.clock.largest_behind_ms));
    counter!("snowdrift_clock_behind_total", &labels).absolute(h.clock.behind);
    counter!("snowdrift_clock_waits_total", &labels).absolute(h.clock.clock_waits);
    counter!("snowdrift_tick_waits_total", &labels).absolute(h.clock.tick_waits);
}
