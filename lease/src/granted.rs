//! A lease just granted, before its generator exists: waiting until it is usable.

use crate::error::Error;
use crate::held::{Held, Started};
use crate::observe::{self, Event};
use crate::rules::{Beat, Decision, decide, usable};
use crate::space::Space;
use crate::store::{Grant, Ticket};
use snowdrift::{AtomicGenerator, Clock};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A lease just granted by the store's acquire, before its generator exists.
pub(crate) struct Granted {
    pub grant: Grant,
    pub ticket: Ticket,
    pub started: Instant,
    /// When the calls were sent: the holder's rules decide from it.
    beat: Beat,
}

/// What the wait until usable does next.
pub(crate) enum Wait {
    /// Sleep this long, then look again.
    Sleep(Duration),
    /// Renew now (sent at `sent`); the call may take `budget`.
    Renew { sent: Instant, budget: Duration },
}

/// Why a granted lease could not start, and what hands it back unused: the ticket and
/// the time to release it with (its fence, which stays where it is).
pub(crate) type Failed = Box<(Error, Ticket, u64)>;

impl Granted {
    pub fn new<C>(space: &Space<C>, token: String, grant: Grant, sent: Instant) -> Granted {
        Granted {
            ticket: Ticket {
                space: space.name.clone(),
                node: grant.node,
                token,
                next: None,
            },
            grant,
            started: sent,
            beat: Beat::new(
                sent,
                sent,
                space.ttl_ms,
                space.skew_ms,
                space.renew_every(),
                u64::from(space.layout.unit_ms()),
            ),
        }
    }

    /// Whether the fence leaves at least one tick after `not_before` (PROTOCOL step 2).
    pub fn usable<C>(&self, space: &Space<C>) -> bool {
        usable(
            self.grant.until,
            self.grant.not_before,
            u64::from(space.layout.unit_ms()),
        )
    }

    /// What the holder's rules say at `now`, for a lease with no generator yet.
    pub fn decide(&self, now: Instant) -> Decision {
        let (g, beat) = (&self.grant, &self.beat);
        decide(&beat.situation(now, g.until, g.not_before, None))
    }

    /// The next step of the wait until usable at `now`: a renewal sent now and how long it
    /// may take (until the lapse), or a sleep; the error when the wait is over.
    pub fn next<C>(&mut self, space: &Space<C>, now: Instant) -> Result<Wait, Error> {
        match self.decide(now) {
            Decision::GiveUp => Err(self.not_usable(space)),
            Decision::Lapse | Decision::Stopped => Err(self.lapsed(space)),
            Decision::Renew { .. } => {
                self.beat.sent(now);
                Ok(Wait::Renew {
                    sent: now,
                    budget: self.beat.budget(now),
                })
            }
            Decision::Sleep { next } | Decision::Await { next } | Decision::Nothing { next } => {
                Ok(Wait::Sleep(next))
            }
        }
    }

    pub fn lapsed<C>(&self, space: &Space<C>) -> Error {
        Error::Lapsed {
            node: space.node_id(self.grant.node),
            space: space.name.clone(),
            ttl_ms: space.ttl_ms,
            skew_ms: space.skew_ms,
        }
    }

    pub fn not_usable<C>(&self, space: &Space<C>) -> Error {
        Error::NotUsable {
            node: space.node_id(self.grant.node),
            space: space.name.clone(),
            waited_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The ticket of the next renewal: the pending next token, or a new one (PROTOCOL.md,
    /// "Tokens").
    pub fn renewal(&mut self) -> &Ticket {
        self.ticket.renewal()
    }

    /// Notes the result of a renewal sent at `sent` with the ticket of
    /// [`renewal`](Self::renewal) while waiting to become usable: `Ok(true)` when the
    /// connection failed (reconnect and go on, sending the same pair again), an error
    /// when the id was lost. One renewal is outstanding at a time (each is awaited, up to
    /// its budget), so every reply is to the pair the ticket holds.
    pub fn renewed(&mut self, reply: Result<u64, Error>, sent: Instant) -> Result<bool, Error> {
        if reply.is_ok() {
            self.ticket.renewed();
        }
        match reply {
            // A reply that comes after the lapse was due does not count.
            Ok(_) if self.beat.lapsed(Instant::now()) => Ok(false),
            Ok(until) => {
                self.grant.until = self.grant.until.max(until);
                self.beat.succeeded(sent);
                Ok(false)
            }
            Err(e @ Error::Lost { .. }) => Err(e),
            Err(_) => Ok(true),
        }
    }

    /// The lease's shared state and the heartbeat's schedule; on failure, the error and
    /// what hands the id back unused.
    pub fn start<C: Clock + Clone>(self, space: &Space<C>) -> Result<Started<C>, Failed> {
        let (ticket, until) = (self.ticket.clone(), self.grant.until);
        match self.into_shared(space) {
            Ok((shared, beat)) => {
                let shared = Arc::new(shared);
                observe::report(&shared, Event::Acquired);
                Ok((shared, beat))
            }
            Err(e) => Err(Box::new((e, ticket, until))),
        }
    }

    /// The generator for the lease: resumed after `not_before`, fenced at `until`.
    fn into_shared<C: Clock + Clone>(self, space: &Space<C>) -> Result<(Held<C>, Beat), Error> {
        let g = &self.grant;
        let node = space.node_id(g.node);
        let generator =
            AtomicGenerator::new(space.clock.clone(), space.layout, node, space.policy)?;
        // 0 (an id never leased) and times before the epoch need no resume: the
        // generator never issues before its epoch.
        if g.not_before != 0 && g.not_before >= space.layout.epoch_ms() {
            generator.resume_after_ms(g.not_before)?;
        }
        generator.set_fence_ms(g.until);
        let ok_sent = self.beat.ok_sent();
        Ok((
            Held::new(generator, space, self.ticket, g, ok_sent),
            self.beat,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Grant;
    use snowdrift::Layout;

    /// A new space's lease, waiting to become usable, whose acquire was sent `ago`.
    fn waiting(ago: Duration) -> (Space, Granted) {
        let space = Space::new("ids:waiting", Layout::TWITTER)
            .ttl_ms(1000)
            .skew_ms(100);
        let grant = Grant {
            node: 0,
            not_before: 1_800_000_000_000,
            until: 1_800_000_000_000,
            now: 1_799_999_999_000,
        };
        let pending = Granted::new(&space, "token".into(), grant, Instant::now() - ago);
        (space, pending)
    }

    #[test]
    fn a_reply_in_time_moves_the_fence() {
        let (space, mut p) = waiting(Duration::from_millis(100));
        assert!(!p.renewed(Ok(1_800_000_000_050), Instant::now()).unwrap());
        assert!(p.usable(&space));
    }

    #[test]
    fn a_reply_after_the_lapse_does_not_count() {
        // ttl - skew (900 ms) passed since the acquire, the only successful call, was sent.
        let (space, mut p) = waiting(Duration::from_millis(950));
        let sent = Instant::now() - Duration::from_millis(100);
        assert!(!p.renewed(Ok(1_800_000_000_050), sent).unwrap());
        assert!(!p.usable(&space), "the fence stayed");
        assert_eq!(p.decide(Instant::now()), Decision::Lapse);
    }
}
