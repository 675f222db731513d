//! Where leases are kept: the protocol's calls over one store's connection, and what
//! they answer. Redis (every [`Connector`](crate::Connector), in `redis.rs`) and, with
//! the `postgres` feature, `Postgres` (in `postgres.rs`) implement it;
//! [`Lease`](crate::Lease) runs the holder's state machine over any of them.

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod redis;

use crate::error::Error;
use crate::space::Space;
use crate::token::new_token;
use std::time::Duration;

/// What an acquire grants (PROTOCOL.md: `acquire`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// The node id.
    pub node: u64,
    /// The holder issues only IDs timed after this Unix ms.
    pub not_before: u64,
    /// The lease's end and fence, Unix ms of the store's clock.
    pub until: u64,
    /// The store's clock at the grant, Unix ms.
    pub now: u64,
}

/// What names a held lease in its store: the space, the node id, the lease's token and,
/// while a renewal is outstanding, the token that renewal puts in its place.
///
/// A lease's token changes at every renewal (PROTOCOL.md, "Tokens"), so that of two
/// copies of one holder the one that renews second is told the lease is lost. A holder
/// draws `next` at random for a renewal and sends the same pair again until one of them
/// succeeds; from that reply on, `next` is its `token` and `next` is `None`. A release
/// sends the pair as it is: the store releases a lease whose token is either.
///
/// ```
/// use snowdrift_lease::Ticket;
/// let ticket = Ticket {
///     space: "ids:orders".into(),
///     node: 3,
///     token: "3f2a9c".into(),
///     next: Some("b71e04".into()), // a renewal sent with it got no reply yet
/// };
/// assert_eq!(ticket.next.as_deref(), Some("b71e04"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    /// The space's name.
    pub space: String,
    /// The node id.
    pub node: u64,
    /// The lease's token (random: made at the acquire, replaced at every renewal).
    pub token: String,
    /// The token a renewal makes the lease's (renew), or that a renewal whose reply never
    /// came may have made it (release: the store matches `token` or this one). `None`:
    /// no renewal is outstanding, and a renewal leaves the token as it is. Sent as the
    /// scripts' and functions' `next` argument, `''` for `None`.
    pub next: Option<String>,
}

impl Ticket {
    /// The ticket of a renewal (PROTOCOL.md, "Tokens"): with the pending next token, or
    /// with one drawn now (and kept as pending) when no renewal is outstanding.
    pub(crate) fn renewal(&mut self) -> &Ticket {
        if self.next.is_none() {
            self.next = Some(new_token());
        }
        self
    }

    /// The renewal sent with this ticket's pair succeeded: its next token is the lease's
    /// from now on. (A holder of this crate has one renewal of a lease outstanding at a
    /// time, so the reply it reads is always that of the pair it holds.)
    pub(crate) fn renewed(&mut self) {
        if let Some(next) = self.next.take() {
            self.token = next;
        }
    }
}

/// A space as its store lists it (PROTOCOL.md: `list`), for operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The store's clock, Unix ms.
    pub now: u64,
    /// How many node ids the space has; `None` (as every setting) when it does not exist.
    pub capacity: Option<u64>,
    /// The space's TTL, ms.
    pub ttl_ms: Option<u64>,
    /// The space's skew allowance, ms.
    pub skew_ms: Option<u64>,
    /// When the space was created (or started over), Unix ms.
    pub created: Option<u64>,
    /// The lowest id never leased.
    pub next: Option<u64>,
    /// Every id ever leased, oldest fence first.
    pub ids: Vec<Listed>,
}

impl Listing {
    /// How many node ids an acquire could take now: those never leased and those whose
    /// fence passed by the store's clock; `None` when the space does not exist.
    ///
    /// ```
    /// use snowdrift_lease::{Listed, Listing};
    /// let listing = Listing {
    ///     now: 1_000,
    ///     capacity: Some(8),
    ///     ttl_ms: Some(100),
    ///     skew_ms: Some(10),
    ///     created: Some(0),
    ///     next: Some(3),
    ///     ids: vec![
    ///         Listed { node: 0, until: 900, holder: None },
    ///         Listed { node: 1, until: 1_050, holder: Some("a".into()) },
    ///         Listed { node: 2, until: 1_100, holder: Some("b".into()) },
    ///     ],
    /// };
    /// assert_eq!(listing.free_ids(), Some(6)); // ids 3..8 never leased, and id 0
    /// ```
    pub fn free_ids(&self) -> Option<u64> {
        let never = self.capacity?.saturating_sub(self.next?);
        let ended = self.ids.iter().filter(|l| l.until <= self.now).count() as u64;
        Some(never + ended)
    }

    /// Records the space's free and total node ids as the gauges
    /// `snowdrift_space_free_ids` and `snowdrift_space_capacity` (label `space`), for a
    /// listing taken on your schedule (feature `metrics`).
    #[cfg(feature = "metrics")]
    pub fn record(&self, space: &str) {
        if let (Some(free), Some(capacity)) = (self.free_ids(), self.capacity) {
            let space = space.to_owned();
            metrics::gauge!("snowdrift_space_free_ids", "space" => space.clone()).set(free as f64);
            metrics::gauge!("snowdrift_space_capacity", "space" => space).set(capacity as f64);
        }
    }

    /// A listing from a store's reply: its clock, the space's settings in the reply's
    /// order (capacity, TTL, skew, created, next) and its ids.
    pub(crate) fn from_reply(now: u64, settings: [Option<u64>; 5], ids: Vec<Listed>) -> Listing {
        let [capacity, ttl_ms, skew_ms, created, next] = settings;
        Listing {
            now,
            capacity,
            ttl_ms,
            skew_ms,
            created,
            next,
            ids,
        }
    }
}

/// One id of a [`Listing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The node id as the store leases it (in a space with a region, the worker id below
    /// it: [`Space::node_id`](crate::Space::node_id) gives the IDs' node id).
    pub node: u64,
    /// Its fence: the end of its newest lease (or just after a released lease's newest
    /// ID), Unix ms.
    pub until: u64,
    /// The holder's description; `None` once released.
    pub holder: Option<String>,
}

/// A store of leases: the protocol's acquire, renew, release and list over a connection.
/// A lease connects once to acquire and hands the connection to its heartbeat, which
/// reconnects through a clone of the store after a failure.
///
/// Errors follow the protocol: [`Error::AllLeased`], [`Error::Config`] and
/// [`Error::Lost`] for its code words, anything else for a store that failed or could
/// not be reached (the heartbeat retries those).
///
/// Tokens follow the protocol too ([`Ticket`]): [`renew`](Store::renew) makes
/// `ticket.next` the lease's token, and renew and [`release`](Store::release) find a
/// lease whose token is `ticket.token` or `ticket.next`. A holder uses the next token
/// from a renewal's reply on, so a store that ignored it would lose its leases at their
/// second renewal.
pub trait Store: Clone + Send + 'static {
    /// A connection.
    type Connection: Send + 'static;

    /// Opens a connection, failing after about `timeout`.
    fn connect(&self, timeout: Duration) -> Result<Self::Connection, Error>;

    /// Bounds every later call on `connection` by `timeout`, so a heartbeat stuck on a
    /// silent store still lapses on time.
    fn set_timeout(connection: &mut Self::Connection, timeout: Duration) -> Result<(), Error>;

    /// Acquires a node id of `space` for the lease of `token`.
    fn acquire<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> Result<Grant, Error>;

    /// Renews the lease for `ttl_ms`; returns its new end (never earlier than before).
    /// The store finds the lease by `ticket.token` or `ticket.next` (the same renewal
    /// sent again), else fails with [`Error::Lost`]; it makes `ticket.next`, when given,
    /// the lease's token.
    fn renew(connection: &mut Self::Connection, ticket: &Ticket, ttl_ms: u64)
    -> Result<u64, Error>;

    /// Releases the lease, its id's fence coming down to `issued_ms + 1`; whether the
    /// id was still this lease's (its token `ticket.token` or `ticket.next`).
    fn release(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> Result<bool, Error>;

    /// The space named `space`: its settings and every id ever leased (read-only).
    fn list(connection: &mut Self::Connection, space: &str) -> Result<Listing, Error>;

    /// [`list`](Store::list) on a connection of its own, opened for the call (about
    /// 5 s to connect and answer).
    fn listing(&self, space: &str) -> Result<Listing, Error> {
        let mut connection = self.connect(Duration::from_secs(5))?;
        Self::list(&mut connection, space)
    }
}

/// [`Store`] for tokio (feature `tokio`): the same calls as futures on the caller's
/// runtime. [`Lease::acquire_async`](crate::Lease::acquire_async) bounds each with a
/// timeout. Redis (every [`AsyncConnector`](crate::AsyncConnector)) and, with the
/// `postgres` feature too, `Postgres` implement it.
#[cfg(feature = "tokio")]
pub trait AsyncStore: Clone + Send + Sync + 'static {
    /// A connection.
    type Connection: Send + 'static;

    /// Opens a connection.
    fn connect_async(
        &self,
    ) -> impl std::future::Future<Output = Result<Self::Connection, Error>> + Send;

    /// [`Store::acquire`].
    fn acquire_async<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> impl std::future::Future<Output = Result<Grant, Error>> + Send;

    /// [`Store::renew`].
    fn renew_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> impl std::future::Future<Output = Result<u64, Error>> + Send;

    /// [`Store::release`].
    fn release_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> impl std::future::Future<Output = Result<bool, Error>> + Send;

    /// The error for a call that got no reply within `limit`.
    fn timed_out(limit: Duration) -> Error {
        Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no reply from the store within {} ms", limit.as_millis()),
        ))
    }
}
