//! The heartbeat's schedule: when a lease renews, and when it lapses.

use std::time::{Duration, Instant};

/// The longest a heartbeat sleeps before it looks at its lease again.
const MAX_NAP: Duration = Duration::from_millis(25);

/// The heartbeat's schedule: when to renew next, and when the lease lapses.
pub(crate) struct Beat {
    next: Instant,
    deadline: Instant,
    period: Duration,
    live: Duration,
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
    /// The schedule of a lease renewed every `renew_every_ms` that lapses `live` after
    /// its newest successful renewal, starting from a renewal (or the acquire) sent at
    /// `sent`.
    pub fn new(sent: Instant, renew_every_ms: u64, live: Duration) -> Beat {
        let period = Duration::from_millis(renew_every_ms);
        Beat {
            next: sent + period,
            deadline: sent + live,
            period,
            live,
        }
    }

    pub fn step(&self, now: Instant) -> Step {
        if now >= self.deadline {
            Step::Lapse
        } else if now >= self.next {
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
