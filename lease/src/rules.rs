//! The holder's rules (PROTOCOL.md, "What a holder does"): what a lease does in a given
//! situation, as a pure function ([`decide`], the same as `decide` in the npm package's
//! `wasm/js/src/lease/rules.mjs`, both checked against `tests/vectors/holder.json`), and the
//! heartbeat's schedule that feeds it.

use std::time::{Duration, Instant};

/// The longest a heartbeat sleeps before it looks at its lease again.
const MAX_NAP: Duration = Duration::from_millis(25);
/// While a lease is not usable yet, and between early renewals, a holder waits this long.
pub(crate) const POLL: Duration = Duration::from_millis(100);
/// A generator whose newest ID is this close to its fence (ms of ID time; at most `ttl -
/// renew_every`) renews early: a new space's first leases are fenced a TTL ahead of the
/// store's clock, and only renewals give them more ID time.
const NEAR_FENCE_MS: u64 = 1_000;

/// A lease's situation. Times are of one monotonic clock (any origin, as long as every
/// one of them is at or before `now`); `until`, `not_before` and `issued_through` are ms
/// of ID time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Situation {
    /// Not lapsed, lost, released or abandoned.
    pub live: bool,
    pub now: Duration,
    /// When the acquire was sent.
    pub acquire_sent: Duration,
    /// When the newest successful call (the acquire or a renewal) was sent.
    pub ok_sent: Duration,
    /// When the newest renewal (or the acquire) was sent.
    pub sent: Duration,
    /// The newest renewal has no answer yet (never, for the Rust holder: its calls are
    /// synchronous and bounded).
    pub pending: bool,
    pub until: u64,
    pub not_before: u64,
    /// The generator's newest ID time; `None` before it exists.
    pub issued_through: Option<u64>,
    pub ttl_ms: u64,
    pub skew_ms: u64,
    pub renew_every_ms: u64,
    /// The layout's unit.
    pub tick_ms: u64,
    /// The driver can leave a renewal running after its caller returns.
    pub background: bool,
}

/// What a holder does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The lease is not live; its error is final.
    Stopped,
    /// `ttl - skew` passed since the newest successful call was sent.
    Lapse,
    /// Not usable `ttl + skew` after the acquire was sent.
    GiveUp,
    /// Send a renewal now; `wait`: the caller awaits it (bounded by the lapse).
    Renew { wait: bool },
    /// A renewal is pending and the caller awaits it, at most `next`.
    Await { next: Duration },
    /// Not usable yet: renew again in `next`.
    Sleep { next: Duration },
    /// Nothing to do; look again within `next`.
    Nothing { next: Duration },
}

/// Whether a lease fenced at `until` has a tick to issue in after `not_before`.
pub(crate) fn usable(until: u64, not_before: u64, tick_ms: u64) -> bool {
    until > not_before.saturating_add(tick_ms)
}

/// What a holder does in situation `s` (PROTOCOL.md, "What a holder does").
pub(crate) fn decide(s: &Situation) -> Decision {
    if !s.live {
        return Decision::Stopped;
    }
    let ms = Duration::from_millis;
    let live_for = ms(s.ttl_ms - s.skew_ms);
    let since_ok = s.now.saturating_sub(s.ok_sent);
    if since_ok >= live_for {
        return Decision::Lapse;
    }
    let lapse_in = live_for - since_ok;
    let since_sent = s.now.saturating_sub(s.sent);
    if !usable(s.until, s.not_before, s.tick_ms) {
        if s.now.saturating_sub(s.acquire_sent) >= ms(s.ttl_ms + s.skew_ms) {
            return Decision::GiveUp;
        }
        if since_sent >= POLL {
            return Decision::Renew { wait: true };
        }
        let next = (POLL - since_sent).min(lapse_in);
        return if s.pending {
            Decision::Await { next }
        } else {
            Decision::Sleep { next }
        };
    }
    let near_ms = NEAR_FENCE_MS.min(s.ttl_ms.saturating_sub(s.renew_every_ms));
    let near = s
        .issued_through
        .is_some_and(|t| s.until.saturating_sub(t) < near_ms);
    // A caller awaits the renewal when the generator nears its fence, when the driver has
    // no background, and once half of `ttl - skew` passed with no renewal succeeding.
    let wait = near || !s.background || since_ok * 2 >= live_for;
    let every = ms(s.renew_every_ms);
    if since_sent >= every || (near && !s.pending && since_sent >= POLL) {
        return Decision::Renew { wait };
    }
    let mut next = (every - since_sent).min(lapse_in);
    if near && !s.pending {
        next = next.min(POLL - since_sent);
    }
    if s.pending && wait {
        Decision::Await { next }
    } else {
        Decision::Nothing { next }
    }
}

/// The heartbeat's schedule: the times [`decide`] needs, kept as instants.
pub(crate) struct Beat {
    origin: Instant,
    acquire_sent: Instant,
    ok_sent: Instant,
    sent: Instant,
    ttl_ms: u64,
    skew_ms: u64,
    renew_every_ms: u64,
    tick_ms: u64,
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
    /// The schedule of a lease acquired with a call sent at `acquire_sent`, whose newest
    /// successful call (the acquire, or a renewal while it waited to become usable) was
    /// sent at `ok_sent`.
    pub fn new(
        acquire_sent: Instant,
        ok_sent: Instant,
        ttl_ms: u64,
        skew_ms: u64,
        renew_every_ms: u64,
        tick_ms: u64,
    ) -> Beat {
        Beat {
            origin: acquire_sent,
            acquire_sent,
            ok_sent,
            sent: ok_sent,
            ttl_ms,
            skew_ms,
            renew_every_ms,
            tick_ms,
        }
    }

    /// The situation at `now` of a live lease fenced at `until`, not before `not_before`,
    /// whose generator (if it exists yet) issued through `issued_through`.
    pub fn situation(
        &self,
        now: Instant,
        until: u64,
        not_before: u64,
        issued_through: Option<u64>,
    ) -> Situation {
        let at = |t: Instant| t.saturating_duration_since(self.origin);
        Situation {
            live: true,
            now: at(now),
            acquire_sent: at(self.acquire_sent),
            ok_sent: at(self.ok_sent),
            sent: at(self.sent),
            pending: false,
            until,
            not_before,
            issued_through,
            ttl_ms: self.ttl_ms,
            skew_ms: self.skew_ms,
            renew_every_ms: self.renew_every_ms,
            tick_ms: self.tick_ms,
            background: true,
        }
    }

    /// What the heartbeat of a usable lease does at `now`, fenced at `until` with its
    /// generator's newest ID at `issued_through`.
    pub fn step(&self, now: Instant, until: u64, not_before: u64, issued_through: u64) -> Step {
        let s = self.situation(now, until, not_before, Some(issued_through));
        match decide(&s) {
            Decision::Lapse | Decision::Stopped | Decision::GiveUp => Step::Lapse,
            Decision::Renew { .. } => Step::Renew(self.budget(now)),
            Decision::Await { next } | Decision::Sleep { next } | Decision::Nothing { next } => {
                Step::Sleep(next.min(MAX_NAP))
            }
        }
    }

    /// How long a renewal sent at `now` may take: until the lapse, and no longer than a
    /// period (at least 5 ms).
    pub fn budget(&self, now: Instant) -> Duration {
        let live = Duration::from_millis(self.ttl_ms - self.skew_ms);
        let left = live.saturating_sub(now.saturating_duration_since(self.ok_sent));
        let period = Duration::from_millis(self.renew_every_ms);
        left.min(period).max(Duration::from_millis(5))
    }

    /// Whether `ttl - skew` passed at `now` since the newest successful call was sent.
    pub fn lapsed(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.ok_sent)
            >= Duration::from_millis(self.ttl_ms - self.skew_ms)
    }

    /// When the newest successful call was sent.
    pub fn ok_sent(&self) -> Instant {
        self.ok_sent
    }

    /// A renewal is sent now.
    pub fn sent(&mut self, at: Instant) {
        self.sent = at;
    }

    /// The renewal sent at `sent` succeeded.
    pub fn succeeded(&mut self, sent: Instant) {
        self.ok_sent = self.ok_sent.max(sent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn situation(v: &Value) -> Situation {
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}: {}", v[k]));
        let ms = |k: &str| Duration::from_millis(n(k));
        Situation {
            live: v["live"].as_bool().expect("live"),
            now: ms("now"),
            acquire_sent: ms("acquireSentAt"),
            ok_sent: ms("okSentAt"),
            sent: ms("sentAt"),
            pending: v["pending"].as_bool().expect("pending"),
            until: n("until"),
            not_before: n("notBefore"),
            issued_through: v["issuedThrough"].as_u64(),
            ttl_ms: n("ttl"),
            skew_ms: n("skew"),
            renew_every_ms: n("renewEvery"),
            tick_ms: n("tick"),
            background: v["background"].as_bool().expect("background"),
        }
    }

    fn expected(v: &Value) -> Decision {
        let next = || Duration::from_millis(v["next"].as_u64().expect("next"));
        match v["action"].as_str().expect("action") {
            "stopped" => Decision::Stopped,
            "lapse" => Decision::Lapse,
            "give-up" => Decision::GiveUp,
            "renew" => Decision::Renew {
                wait: v["wait"].as_bool().expect("wait"),
            },
            "await" => Decision::Await { next: next() },
            "sleep" => Decision::Sleep { next: next() },
            "none" => Decision::Nothing { next: next() },
            other => panic!("unknown action {other}"),
        }
    }

    /// Every situation of the shared table gets the table's decision.
    #[test]
    fn the_holder_table() {
        let table: Value =
            serde_json::from_str(include_str!("../../tests/vectors/holder.json")).expect("JSON");
        assert_eq!(table["pollMs"].as_u64(), Some(POLL.as_millis() as u64));
        assert_eq!(table["nearFenceMs"].as_u64(), Some(NEAR_FENCE_MS));
        let cases = table["situations"].as_array().expect("situations");
        assert!(cases.len() >= 30, "{} situations", cases.len());
        for case in cases {
            let name = case["name"].as_str().expect("name");
            // The table's defaults, with the fields the case names.
            let mut s = table["defaults"].clone();
            for (k, v) in case["situation"].as_object().expect("situation") {
                s[k] = v.clone();
            }
            let got = decide(&situation(&s));
            assert_eq!(got, expected(&case["decision"]), "{name}");
        }
    }
}
