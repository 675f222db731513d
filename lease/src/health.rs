//! A lease's health, by the holder's rules.

use snowdrift::ClockStats;
use std::fmt;
use std::time::{Duration, Instant};

/// Where a lease stands, by the holder's rules (PROTOCOL.md, "What a holder does"): the
/// same states, named the same, as `lease.health()` in the npm package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HealthState {
    /// Live, and the newest successful call (the acquire or a renewal) was sent less than
    /// half of `ttl - skew` ago.
    Ok,
    /// Live, and half of `ttl - skew` or more passed since the newest successful call was
    /// sent: renewals fail or do not answer. The lease lapses at `ttl - skew`.
    RenewingLate,
    /// No renewal succeeded for `ttl - skew`: the lease stopped.
    Lapsed,
    /// The store answered that the id is no longer this lease's.
    Lost,
    /// Released by its holder.
    Released,
    /// Stopped with [`Lease::abandon`](crate::Lease::abandon).
    Abandoned,
}

impl HealthState {
    /// The state's name: `ok`, `renewing late`, `lapsed`, `lost`, `released`, `abandoned`.
    ///
    /// ```
    /// assert_eq!(snowdrift_lease::HealthState::RenewingLate.as_str(), "renewing late");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            HealthState::Ok => "ok",
            HealthState::RenewingLate => "renewing late",
            HealthState::Lapsed => "lapsed",
            HealthState::Lost => "lost",
            HealthState::Released => "released",
            HealthState::Abandoned => "abandoned",
        }
    }
}

impl fmt::Display for HealthState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lease's health, read by [`Lease::health`](crate::Lease::health).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Health {
    /// Where the lease stands.
    pub state: HealthState,
    /// The node id.
    pub node: u64,
    /// The fence: the generator issues only IDs timed before it (Unix ms, the store's clock).
    pub fence_ms: u64,
    /// The generator issues only IDs timed after this (Unix ms).
    pub not_before_ms: u64,
    /// When the newest successful call (the acquire or a renewal) was sent.
    pub last_renewal_sent: Instant,
    /// When the lease turns [`RenewingLate`](HealthState::RenewingLate) unless a renewal
    /// succeeds first.
    pub late_at: Instant,
    /// When it lapses unless a renewal succeeds first.
    pub lapse_at: Instant,
    /// A Unix ms at or after the time of every ID the generator issued.
    pub issued_through_ms: u64,
    /// ID time left between the generator's newest ID and the fence, ms.
    pub fence_distance_ms: u64,
    /// Renewals the store accepted.
    pub renewals: u64,
    /// Renewals that failed (the store unreachable or slow, or `LOST`).
    pub renewal_failures: u64,
    /// How long the newest answered renewal took; `None` before the first.
    pub last_renewal_latency: Option<Duration>,
    /// The generator's clock trouble ([`AtomicGenerator::stats`](snowdrift::AtomicGenerator::stats)).
    pub clock: ClockStats,
}
