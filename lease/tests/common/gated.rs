//! A store between a holder and its real store: it notes the tokens the holder sends, and
//! its gate makes renewals fail before they reach the store (as if the holder's network
//! were down) or lose their replies after the store applied them.

use snowdrift_lease::{Error, Grant, Listing, Space, Store, Ticket};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Renewals pass.
pub const OPEN: u8 = 0;
/// Renewals fail without reaching the store.
pub const SHUT: u8 = 1;
/// Renewals reach the store; their replies are lost.
pub const REPLIES_LOST: u8 = 2;

/// What became of one renewal, as the holder heard it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Renewed,
    Lost,
    /// Any other error of the store.
    Failed,
    /// Stopped at the shut gate.
    Shut,
    /// Applied by the store, its reply lost.
    ReplyLost,
}

/// What the gates of one [`Gated`] store share.
#[derive(Default)]
pub struct Watch {
    gate: AtomicU8,
    acquired: Mutex<Vec<String>>,
    renewals: Mutex<Vec<(Ticket, Outcome)>>,
}

impl Watch {
    /// Records the token of an acquire.
    fn acquired(&self, token: &str) {
        self.acquired.lock().expect("lock").push(token.into());
    }
}

/// The store `K` behind a gate, with a record of the tickets its holders send.
#[derive(Clone)]
pub struct Gated<K>(pub K, Arc<Watch>);

impl<K> Gated<K> {
    pub fn new(store: K) -> Self {
        Gated(store, Arc::default())
    }

    pub fn shut(&self, shut: bool) {
        self.set(if shut { SHUT } else { OPEN });
    }

    pub fn set(&self, mode: u8) {
        self.1.gate.store(mode, Ordering::SeqCst);
    }

    /// The tokens acquires were sent with, in order.
    pub fn acquired(&self) -> Vec<String> {
        self.1.acquired.lock().expect("lock").clone()
    }

    /// Every renewal sent through the gate, in order, with its outcome.
    pub fn renewals(&self) -> Vec<(Ticket, Outcome)> {
        self.1.renewals.lock().expect("lock").clone()
    }

    /// How many renewals had `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.renewals()
            .iter()
            .filter(|(_, o)| *o == outcome)
            .count()
    }

    /// Waits (5 s at most) until `outcome` counts `n` renewals.
    pub fn wait_for(&self, n: usize, outcome: Outcome) {
        let start = Instant::now();
        while self.count(outcome) < n {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{} renewals {outcome:?} within 5 s, not {n}: {:?}",
                self.count(outcome),
                self.renewals()
            );
            sleep(Duration::from_millis(5));
        }
    }

    fn note(watch: &Watch, ticket: &Ticket, result: Result<u64, Error>) -> Result<u64, Error> {
        let mode = watch.gate.load(Ordering::SeqCst);
        let (result, outcome) = match result {
            Ok(_) if mode == REPLIES_LOST => (
                Err(Error::Io(std::io::ErrorKind::TimedOut.into())),
                Outcome::ReplyLost,
            ),
            Ok(until) => (Ok(until), Outcome::Renewed),
            Err(e @ Error::Lost { .. }) => (Err(e), Outcome::Lost),
            Err(e) => (Err(e), Outcome::Failed),
        };
        let mut renewals = watch.renewals.lock().expect("lock");
        renewals.push((ticket.clone(), outcome));
        result
    }

    fn stopped(watch: &Watch, ticket: &Ticket) -> Option<Error> {
        (watch.gate.load(Ordering::SeqCst) == SHUT).then(|| {
            let mut renewals = watch.renewals.lock().expect("lock");
            renewals.push((ticket.clone(), Outcome::Shut));
            Error::Io(std::io::ErrorKind::NotConnected.into())
        })
    }
}

impl<K: Store> Store for Gated<K> {
    type Connection = (K::Connection, Arc<Watch>);

    fn connect(&self, timeout: Duration) -> Result<Self::Connection, Error> {
        Ok((self.0.connect(timeout)?, Arc::clone(&self.1)))
    }

    fn set_timeout(connection: &mut Self::Connection, timeout: Duration) -> Result<(), Error> {
        K::set_timeout(&mut connection.0, timeout)
    }

    fn acquire<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> Result<Grant, Error> {
        connection.1.acquired(token);
        K::acquire(&mut connection.0, space, token)
    }

    fn renew(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> Result<u64, Error> {
        let (con, watch) = connection;
        if let Some(e) = Self::stopped(watch, ticket) {
            return Err(e);
        }
        let result = K::renew(con, ticket, ttl_ms);
        Self::note(watch, ticket, result)
    }

    fn release(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> Result<bool, Error> {
        K::release(&mut connection.0, ticket, issued_ms)
    }

    fn list(connection: &mut Self::Connection, space: &str) -> Result<Listing, Error> {
        K::list(&mut connection.0, space)
    }
}

#[cfg(feature = "tokio")]
impl<K: snowdrift_lease::AsyncStore> snowdrift_lease::AsyncStore for Gated<K> {
    type Connection = (K::Connection, Arc<Watch>);

    async fn connect_async(&self) -> Result<Self::Connection, Error> {
        Ok((self.0.connect_async().await?, Arc::clone(&self.1)))
    }

    fn acquire_async<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> impl std::future::Future<Output = Result<Grant, Error>> + Send {
        connection.1.acquired(token);
        K::acquire_async(&mut connection.0, space, token)
    }

    async fn renew_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> Result<u64, Error> {
        let (con, watch) = connection;
        if let Some(e) = Self::stopped(watch, ticket) {
            return Err(e);
        }
        let result = K::renew_async(con, ticket, ttl_ms).await;
        Self::note(watch, ticket, result)
    }

    async fn release_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> Result<bool, Error> {
        K::release_async(&mut connection.0, ticket, issued_ms).await
    }
}
