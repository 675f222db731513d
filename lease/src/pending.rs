//! A lease just granted, before its generator exists: waiting until it is usable.

use crate::error::Error;
use crate::shared::{Shared, Started};
use crate::space::Space;
use crate::store::{Grant, Ticket};
use snowdrift::{AtomicGenerator, Clock};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a new lease renews while it waits to become usable (PROTOCOL step 2).
pub(crate) const USABLE_POLL: Duration = Duration::from_millis(100);

/// A lease just granted by the store's acquire, before its generator exists.
pub(crate) struct Pending {
    pub grant: Grant,
    pub ticket: Ticket,
    pub started: Instant,
    /// When the newest successful call (acquire or renew) was sent.
    pub last_sent: Instant,
}

/// Why a granted lease could not start, and what hands it back unused: the ticket and
/// the time to release it with (its fence, which stays where it is).
pub(crate) type Failed = Box<(Error, Ticket, u64)>;

impl Pending {
    pub fn new<C>(space: &Space<C>, token: String, grant: Grant, sent: Instant) -> Pending {
        Pending {
            ticket: Ticket {
                space: space.name.clone(),
                node: grant.node,
                token,
            },
            grant,
            started: sent,
            last_sent: sent,
        }
    }

    /// Whether the fence leaves at least one tick after `not_before` (PROTOCOL step 2).
    pub fn usable<C>(&self, space: &Space<C>) -> bool {
        let tick = u64::from(space.layout.unit_ms());
        self.grant.until > self.grant.not_before.saturating_add(tick)
    }

    /// Whether the usable wait has run out (`ttl + skew`).
    pub fn waited_too_long<C>(&self, space: &Space<C>) -> bool {
        self.started.elapsed() >= Duration::from_millis(space.ttl_ms + space.skew_ms)
    }

    pub fn not_usable<C>(&self, space: &Space<C>) -> Error {
        Error::NotUsable {
            node: self.grant.node,
            space: space.name.clone(),
            waited_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// Notes the result of a renewal sent at `sent` while waiting to become usable:
    /// `Ok(true)` when the connection failed (reconnect and go on), an error when the
    /// id was lost.
    pub fn renewed(&mut self, reply: Result<u64, Error>, sent: Instant) -> Result<bool, Error> {
        match reply {
            Ok(until) => {
                self.grant.until = self.grant.until.max(until);
                self.last_sent = sent;
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
        let last_sent = self.last_sent;
        match self.into_shared(space) {
            Ok(shared) => {
                let beat = shared.beat(last_sent, space.renew_every());
                Ok((Arc::new(shared), beat))
            }
            Err(e) => Err(Box::new((e, ticket, until))),
        }
    }

    /// The generator for the lease: resumed after `not_before`, fenced at `until`.
    fn into_shared<C: Clock + Clone>(self, space: &Space<C>) -> Result<Shared<C>, Error> {
        let g = &self.grant;
        let generator =
            AtomicGenerator::new(space.clock.clone(), space.layout, g.node, space.policy)?;
        // 0 (an id never leased) and times before the epoch need no resume: the
        // generator never issues before its epoch.
        if g.not_before != 0 && g.not_before >= space.layout.epoch_ms() {
            generator.resume_after_ms(g.not_before)?;
        }
        generator.set_fence_ms(g.until);
        Ok(Shared::new(generator, space, self.ticket, g))
    }
}
