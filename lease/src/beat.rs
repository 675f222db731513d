//! The heartbeat's schedule: when a lease renews, and when it lapses.

use std::time::{Duration, Instant};

/// The longest a heartbeat sleeps before it looks at its lease again.
const MAX_NAP: Duration = Duration::from_millis(25);
/// A generator whose newest ID is this close to its fence (ms of ID time; at most `ttl -
/// renew_every`) renews early: a new space's first leases are fenced a TTL ahead of the
/// store's clock, and only renewals give them more ID time.
const NEAR_FENCE_MS: u64 = 1_000;
/// Early renewals are sent this far apart at least.
const EARLY_EVERY: Duration = Duration::from_millis(100);

/// The heartbeat's schedule: when to renew next, and when the lease lapses.
pub(crate) struct Beat {
    next: Instant,
    deadline: Instant,
    period: Duration,
    live: Duration,
    near_ms: u64,
}

/// What the heartbeat does next.
pub(crate) enum Step {
    /// Sleep this long (or until woken), then look again.
    Sleep(Duration),
    /// Renew now; the call may take this long.
    Renew(Duration),
    /// `ttl - skew` passed since the last successful renewal was sent.
    Lapse,
}

impl Beat {
    /// The schedule of a lease of `ttl_ms` renewed every `renew_every_ms` that lapses
    /// `live` after its newest successful renewal, starting from a renewal (or the
    /// acquire) sent at `sent`.
    pub fn new(sent: Instant, ttl_ms: u64, renew_every_ms: u64, live: Duration) -> Beat {
        let period = Duration::from_millis(renew_every_ms);
        Beat {
            next: sent + period,
            deadline: sent + live,
            period,
            live,
            near_ms: NEAR_FENCE_MS.min(ttl_ms.saturating_sub(renew_every_ms)),
        }
    }

    /// What to do at `now`, with the generator's newest ID `gap_ms` of ID time before its
    /// fence.
    pub fn step(&self, now: Instant, gap_ms: u64) -> Step {
        let early = gap_ms < self.near_ms && now >= self.next - self.period + EARLY_EVERY;
        if now >= self.deadline {
            Step::Lapse
        } else if now >= self.next || early {
            let left = self.deadline - now;
            Step::Renew(left.min(self.period).max(Duration::from_millis(5)))
        } else {
            Step::Sleep((self.next.min(self.deadline) - now).min(MAX_NAP))
        }
    }

    /// A renewal is sent now: the next one is due a period later.
    pub fn sent(&mut self, at: Instant) {
        self.next = at + self.period;
    }

    /// The renewal sent at `sent` succeeded.
    pub fn succeeded(&mut self, sent: Instant) {
        self.deadline = self.deadline.max(sent + self.live);
    }
}
