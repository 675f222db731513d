//! What a lease's handle, its heartbeat and its generator share: the lease's state, its
//! fence, and the calls that renew and release it.

use crate::error::Error;
use crate::health::{Health, HealthState};
use crate::lease_state::State;
use crate::observe::{self, Event};
use crate::rules::{Beat, Step};
use crate::space::Space;
use crate::store::{Grant, Ticket};
use snowdrift::{AtomicGenerator, Clock, IdGenerator};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Status {
    state: State,
    lost: Option<String>,
}

/// What the holder saw of its renewals, for [`Held::health`] and the metrics.
#[derive(Clone, Copy)]
struct Seen {
    /// When the newest successful call was sent (as the heartbeat's `Beat` has it).
    ok_sent: Instant,
    renewals: u64,
    failures: u64,
    last_latency: Option<Duration>,
}

/// What the lease's handle, its heartbeat and its generator share.
pub(crate) struct Held<C> {
    pub(crate) generator: AtomicGenerator<C>,
    pub(crate) space: String,
    /// The lease's token and the pending next one: renewals and the release read it,
    /// only the heartbeat's replies change it.
    ticket: Mutex<Ticket>,
    pub(crate) node: u64,
    pub(crate) not_before: u64,
    pub(crate) ttl_ms: u64,
    skew_ms: u64,
    pub(crate) until: AtomicU64,
    status: Mutex<Status>,
    seen: Mutex<Seen>,
    /// The generator's `behind` count last reported (`observe`).
    #[cfg_attr(not(any(feature = "metrics", feature = "tracing")), allow(dead_code))]
    pub(crate) reported_behind: AtomicU64,
    #[cfg(feature = "tokio")]
    pub(crate) wake: tokio::sync::Notify,
}

impl<C: Clock> Held<C> {
    /// The state of a live lease of `space`, granted as `grant` to the lease `ticket`,
    /// whose generator is made and fenced; its newest successful call was sent at `ok_sent`.
    pub(crate) fn new(
        generator: AtomicGenerator<C>,
        space: &Space<C>,
        ticket: Ticket,
        grant: &Grant,
        ok_sent: Instant,
    ) -> Self {
        Held {
            generator,
            space: space.name.clone(),
            ticket: Mutex::new(ticket),
            node: space.node_id(grant.node),
            not_before: grant.not_before,
            ttl_ms: space.ttl_ms,
            skew_ms: space.skew_ms,
            until: AtomicU64::new(grant.until),
            status: Mutex::new(Status {
                state: State::Live,
                lost: None,
            }),
            seen: Mutex::new(Seen {
                ok_sent,
                renewals: 0,
                failures: 0,
                last_latency: None,
            }),
            reported_behind: AtomicU64::new(0),
            #[cfg(feature = "tokio")]
            wake: tokio::sync::Notify::new(),
        }
    }

    fn status(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn held(&self) -> MutexGuard<'_, Ticket> {
        self.ticket.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lease's ticket as it is (for the release: with the pending next token, which
    /// the store may hold in place of the token).
    pub(crate) fn ticket(&self) -> Ticket {
        self.held().clone()
    }

    /// The ticket of the next renewal: the pending next token, or a new one.
    pub(crate) fn renewal(&self) -> Ticket {
        self.held().renewal().clone()
    }

    pub(crate) fn state(&self) -> State {
        self.status().state
    }

    pub(crate) fn is_live(&self) -> bool {
        self.state() == State::Live
    }

    /// A renewal succeeded: the fence moves to `until` (never back), while the lease is
    /// live. Under the status lock, so a lease that just stopped stays fenced at 0.
    pub(crate) fn renewed(&self, until: u64) {
        let status = self.status();
        if status.state == State::Live {
            let until = self.until.fetch_max(until, Ordering::SeqCst).max(until);
            self.generator.set_fence_ms(until);
        }
        drop(status);
    }

    /// Applies the result of the renewal sent at `sent` with the ticket of
    /// [`renewal`](Self::renewal): moves the fence and the token, or ends a lost lease.
    /// Returns whether the connection failed (the next beat reconnects).
    ///
    /// A heartbeat has one renewal outstanding at a time: it reads the reply of each (or
    /// gives it up with its connection, whose replies it never reads) before it sends the
    /// next, and only a reply changes the ticket. So every reply it applies, `LOST`
    /// included, is to a renewal sent with the token the lease holds now.
    pub(crate) fn after_renewal(
        &self,
        beat: &mut Beat,
        sent: Instant,
        result: Result<u64, Error>,
    ) -> bool {
        if result.is_ok() {
            // The store took the pair: its next token is the lease's now, even when the
            // reply comes too late to count (the release then sends it alone).
            self.held().renewed();
        }
        let latency = sent.elapsed();
        {
            let mut seen = self.seen();
            seen.last_latency = Some(latency);
            match result {
                Ok(_) => seen.renewals += 1,
                Err(_) => seen.failures += 1,
            }
        }
        // Any other failure keeps the pending next token (the renewal may or may not have
        // reached the store): the next beat sends the same pair.
        let reconnect = match &result {
            // A reply that comes after the lapse was due does not count: the lease lapsed.
            Ok(_) if beat.lapsed(Instant::now()) => {
                self.finish(State::Lapsed, None);
                false
            }
            Ok(until) => {
                beat.succeeded(sent);
                let mut seen = self.seen();
                seen.ok_sent = seen.ok_sent.max(sent);
                drop(seen);
                self.renewed(*until);
                false
            }
            Err(Error::Lost { message }) => {
                self.finish(State::Lost, Some(message.clone()));
                false
            }
            Err(_) => true,
        };
        let event = match &result {
            Ok(until) => Event::Renewed {
                latency,
                until: *until,
            },
            Err(error) => Event::RenewalFailed { latency, error },
        };
        observe::report(self, event);
        reconnect
    }

    /// Ends a live lease: fence 0, and the final state. Returns whether it was live.
    pub(crate) fn finish(&self, to: State, lost: Option<String>) -> bool {
        let mut status = self.status();
        if status.state != State::Live {
            return false;
        }
        self.generator.set_fence_ms(0);
        status.state = to;
        status.lost = lost;
        let message = status.lost.clone();
        drop(status);
        observe::report(
            self,
            Event::Stopped {
                state: to,
                message: message.as_deref(),
            },
        );
        true
    }

    /// The lease's health now (see [`HealthState`]): a live lease whose lapse is due
    /// lapses here, as its heartbeat would at its next step.
    pub(crate) fn health(&self) -> Health {
        let now = Instant::now();
        let seen = *self.seen();
        let live_for = Duration::from_millis(self.ttl_ms - self.skew_ms);
        let since = now.saturating_duration_since(seen.ok_sent);
        if since >= live_for {
            self.finish(State::Lapsed, None);
        }
        let state = match self.state() {
            State::Live if since * 2 >= live_for => HealthState::RenewingLate,
            State::Live => HealthState::Ok,
            State::Lapsed => HealthState::Lapsed,
            State::Lost => HealthState::Lost,
            State::Released => HealthState::Released,
            State::Abandoned => HealthState::Abandoned,
        };
        let fence_ms = self.until.load(Ordering::SeqCst);
        let issued_through_ms = self.generator.issued_through_ms();
        Health {
            state,
            node: self.node,
            fence_ms,
            not_before_ms: self.not_before,
            last_renewal_sent: seen.ok_sent,
            late_at: seen.ok_sent + live_for / 2,
            lapse_at: seen.ok_sent + live_for,
            issued_through_ms,
            fence_distance_ms: fence_ms.saturating_sub(issued_through_ms),
            renewals: seen.renewals,
            renewal_failures: seen.failures,
            last_renewal_latency: seen.last_latency,
            clock: self.generator.stats(),
        }
    }

    pub(crate) fn check(&self) -> Result<(), Error> {
        let status = self.status();
        match status.state {
            State::Live => Ok(()),
            State::Lapsed => Err(Error::Lapsed {
                node: self.node,
                space: self.space.clone(),
                ttl_ms: self.ttl_ms,
                skew_ms: self.skew_ms,
            }),
            State::Lost => Err(Error::Lost {
                message: status.lost.clone().unwrap_or_default(),
            }),
            State::Released | State::Abandoned => Err(Error::Stopped {
                node: self.node,
                space: self.space.clone(),
            }),
        }
    }

    /// Stops the generator for good: a time at or after every ID it issued, calls still
    /// running on other threads included (the core's `stop`).
    #[cfg(feature = "tokio")]
    pub(crate) fn stop_generator(&self) -> u64 {
        self.generator.stop()
    }

    /// The heartbeat's step at `now`, for the lease's fence and its generator's newest ID.
    pub(crate) fn step(&self, beat: &Beat, now: Instant) -> Step {
        let until = self.until.load(Ordering::SeqCst);
        beat.step(
            now,
            until,
            self.not_before,
            self.generator.issued_through_ms(),
        )
    }
}

/// A lease's shared state and its heartbeat's schedule.
pub(crate) type Started<C> = (Arc<Held<C>>, Beat);
