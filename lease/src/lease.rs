//! A held node id: the handle of a lease, with its generator fenced at the lease's end.

use crate::error::Error;
use crate::granted::{Granted, Wait};
#[cfg(feature = "tokio")]
use crate::heartbeat_thread::AsyncReleaser;
use crate::heartbeat_thread::{Heart, heartbeat};
use crate::held::Held;
use crate::lease_state::State;
use crate::space::Space;
use crate::store::Store;
use crate::token::new_token;
use snowdrift::{AtomicGenerator, Clock, MonotonicClock};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A node id leased from a store, with a generator that issues IDs only while the lease
/// holds.
///
/// The generator is resumed after the lease's `not_before` (the fence of the id's
/// previous lease) and fenced at the lease's end, which a heartbeat moves forward on each
/// renewal. When renewals fail for `ttl - skew` ms, or the store says the id is no longer
/// this lease's, the fence drops to 0: the generator returns
/// [`PastFence`](snowdrift::ErrorKind::PastFence) and [`Lease::check`] says why. Acquire a new lease
/// to go on.
///
/// Dropping a lease releases it (best effort); [`Lease::release`] reports errors.
///
/// ```no_run
/// use snowdrift::Layout;
/// use snowdrift_lease::{Lease, Space};
/// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
/// let space = Space::new("ids:orders", Layout::TWITTER).ttl_ms(10_000);
/// let lease = Lease::acquire(&client, &space)?;
/// let id = lease.generator().next()?;
/// assert_eq!(Layout::TWITTER.decode(id)?.node, lease.node());
/// lease.release()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Lease<C: Clock = MonotonicClock> {
    shared: Arc<Held<C>>,
    heart: Option<Heart>,
}

impl<C: Clock + Clone + Send + Sync + 'static> Lease<C> {
    /// Leases a node id of `space` (blocking) from `store` (a [`redis::Client`], a
    /// Redis Cluster client, or with the `postgres` feature a
    /// `Postgres`): acquires it, waits until it is usable (a new space's
    /// first leases wait about `skew` ms), builds the generator, and starts the heartbeat
    /// thread with its own connection. Options are checked first; a bad one sends
    /// nothing to the store.
    pub fn acquire<K: Store>(store: &K, space: &Space<C>) -> Result<Self, Error> {
        space.validate()?;
        let timeout = Duration::from_millis(space.ttl_ms);
        let mut con = store.connect(timeout)?;
        let token = new_token();
        // A grant that comes `ttl - skew` after the acquire was sent would lapse at once.
        K::set_timeout(
            &mut con,
            Duration::from_millis(space.ttl_ms - space.skew_ms),
        )?;
        let sent = Instant::now();
        let grant = K::acquire(&mut con, space, &token)?;
        let mut granted = Granted::new(space, token, grant, sent);
        while !granted.usable(space) {
            match granted.next(space, Instant::now()) {
                Ok(Wait::Sleep(nap)) => std::thread::sleep(nap),
                Ok(Wait::Renew { sent, budget }) => {
                    let reply = K::set_timeout(&mut con, budget)
                        .and_then(|()| K::renew(&mut con, granted.renewal(), space.ttl_ms));
                    if granted.renewed(reply, sent)?
                        && let Ok(fresh) = store.connect(budget)
                    {
                        con = fresh;
                    }
                }
                Err(error) => {
                    let _ = K::set_timeout(&mut con, timeout);
                    let _ = K::release(&mut con, &granted.ticket, granted.grant.until);
                    return Err(error);
                }
            }
        }
        let _ = K::set_timeout(&mut con, timeout);
        let (shared, beat) = match granted.start(space) {
            Ok(started) => started,
            Err(failed) => {
                let (e, ticket, until) = *failed;
                let _ = K::release(&mut con, &ticket, until);
                return Err(e);
            }
        };
        // Keeps the fence where it is: nothing was issued.
        let give_up = shared.until.load(Ordering::SeqCst);
        let (s, k) = (Arc::clone(&shared), store.clone());
        let thread = std::thread::Builder::new()
            .name(format!("snowdrift-lease-{}", shared.node))
            .spawn(move || heartbeat(s, k, Some(con), beat));
        match thread {
            Ok(handle) => Ok(Lease {
                shared,
                heart: Some(Heart::Thread(handle)),
            }),
            Err(e) => {
                let _ = K::release(&mut store.connect(timeout)?, &shared.ticket(), give_up);
                Err(Error::Io(e))
            }
        }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn from_task(
        shared: Arc<Held<C>>,
        task: tokio::task::JoinHandle<AsyncReleaser>,
    ) -> Self {
        Lease {
            shared,
            heart: Some(Heart::Task(task, tokio::runtime::Handle::current())),
        }
    }
}

impl<C: Clock> Lease<C> {
    /// The node id the lease's IDs carry (for split layouts, datacenter and worker
    /// together, as [`snowdrift::Layout::node_from`] composes them; in a space with a
    /// [`region`](crate::Space::region), the region above the leased id).
    pub fn node(&self) -> u64 {
        self.shared.node
    }

    /// The generator issues only IDs timed after this Unix millisecond (the fence of the
    /// id's previous lease; 0 for an id never leased).
    pub fn not_before_ms(&self) -> u64 {
        self.shared.not_before
    }

    /// The lease's end as the store recorded it at the newest renewal (Unix ms): the
    /// generator issues only IDs timed before it while the lease is live.
    pub fn until_ms(&self) -> u64 {
        self.shared.until.load(Ordering::SeqCst)
    }

    /// The space's name.
    pub fn space(&self) -> &str {
        &self.shared.space
    }

    /// The lease's generator: lock-free, shared by threads (`&self`). One per lease: a
    /// second generator on the same node id would repeat IDs.
    pub fn generator(&self) -> &AtomicGenerator<C> {
        &self.shared.generator
    }

    /// Where the lease is in its life.
    pub fn state(&self) -> State {
        self.shared.state()
    }

    /// The lease's health by the holder's rules ([`HealthState`](crate::HealthState)):
    /// `Ok`, `RenewingLate` once half of `ttl - skew` passed since the newest successful
    /// call was sent, `Lapsed` at `ttl - skew` (a lease found so here stops now, as its
    /// heartbeat would), `Lost`, `Released` or `Abandoned`; with the fence, when the lease
    /// turns late and lapses, its renewals' counts and the generator's clock trouble.
    ///
    /// ```no_run
    /// # use snowdrift::Layout;
    /// # use snowdrift_lease::{HealthState, Lease, Space};
    /// # let client = redis::Client::open("redis://127.0.0.1:6379/")?;
    /// let lease = Lease::acquire(&client, &Space::new("ids:orders", Layout::TWITTER))?;
    /// let health = lease.health();
    /// if health.state != HealthState::Ok {
    ///     eprintln!("lease of node {}: {} (fence {} ms)", health.node, health.state, health.fence_ms);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn health(&self) -> crate::Health {
        self.shared.health()
    }

    /// Whether the lease is live (renewed in time, not lost, released or abandoned).
    pub fn is_live(&self) -> bool {
        self.shared.is_live()
    }

    /// `Ok` while the lease is live, else why it stopped (for example
    /// `lease of node 3 of 'ids:orders' lapsed: no renewal succeeded for 9000 ms (ttl 10000 ms, skew 1000 ms)`).
    pub fn check(&self) -> Result<(), Error> {
        self.shared.check()
    }

    /// Stops the heartbeat, fences the generator at 0 and hands the id back with the
    /// time of the newest ID issued, so the next holder need not wait for the TTL.
    /// Never fails for a lease that was already lost. A lease from
    /// [`acquire_async`](Lease::acquire_async) is released in the background: use
    /// [`release_async`](Lease::release_async) to wait for it.
    pub fn release(mut self) -> Result<(), Error> {
        self.stop(true)
    }

    /// Stops the heartbeat and the generator *without* telling the store, as if the process
    /// had crashed: the id stays leased until its TTL ends. For tests and crash drills.
    pub fn abandon(mut self) {
        let _ = self.stop(false);
    }

    fn stop(&mut self, release: bool) -> Result<(), Error> {
        let Some(heart) = self.heart.take() else {
            return Ok(());
        };
        let to = if release {
            State::Released
        } else {
            State::Abandoned
        };
        self.shared.finish(to, None);
        match heart {
            Heart::Thread(handle) => {
                handle.thread().unpark();
                let releaser = handle.join();
                match releaser {
                    Ok(releaser) if release => releaser(),
                    _ => Ok(()),
                }
            }
            #[cfg(feature = "tokio")]
            Heart::Task(task, runtime) => {
                self.shared.wake.notify_one();
                if release {
                    // A detached task: the generator is already fenced at 0.
                    let _detached = runtime.spawn(async move {
                        if let Ok(releaser) = task.await {
                            let _ = releaser().await;
                        }
                    });
                }
                Ok(())
            }
        }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn shared(&self) -> &Arc<Held<C>> {
        &self.shared
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn take_heart(&mut self) -> Option<Heart> {
        self.heart.take()
    }
}

impl<C: Clock> Drop for Lease<C> {
    fn drop(&mut self) {
        let _ = self.stop(true);
    }
}

impl<C: Clock> fmt::Debug for Lease<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("space", &self.shared.space)
            .field("node", &self.shared.node)
            .field("not_before_ms", &self.shared.not_before)
            .field("until_ms", &self.until_ms())
            .field("state", &self.state())
            .finish()
    }
}
