//! A held node id: the generator fenced at the lease's end, and the heartbeat that
//! moves the fence.

use crate::connector::Connector;
use crate::error::Error;
use crate::protocol::{Call, Grant, new_token, renewed_until};
use crate::space::Space;
use snowdrift::{AtomicGenerator, Clock, MonotonicClock};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a new lease renews while it waits to become usable (PROTOCOL step 2).
pub(crate) const USABLE_POLL: Duration = Duration::from_millis(100);

/// The longest a heartbeat sleeps before it looks at its lease again.
const MAX_NAP: Duration = Duration::from_millis(25);

/// Where a lease is in its life. Every state but `Live` is final, and in every one of
/// them the generator is fenced at 0 (it issues nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Renewed in time; the generator issues IDs before [`Lease::until_ms`].
    Live,
    /// No renewal succeeded for `ttl - skew` ms.
    Lapsed,
    /// Redis answered that the id is no longer this lease's.
    Lost,
    /// Released by its holder.
    Released,
    /// Stopped with [`Lease::abandon`], without telling Redis.
    Abandoned,
}

struct Status {
    state: State,
    lost: Option<String>,
}

/// What the lease's handle, its heartbeat and its generator share.
pub(crate) struct Shared<C> {
    generator: AtomicGenerator<C>,
    space: String,
    keys: [String; 4],
    token: String,
    node: u64,
    not_before: u64,
    ttl_ms: u64,
    skew_ms: u64,
    until: AtomicU64,
    status: Mutex<Status>,
    #[cfg(feature = "tokio")]
    pub(crate) wake: tokio::sync::Notify,
}

impl<C: Clock> Shared<C> {
    fn status(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
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

    /// Applies the result of the renewal sent at `sent`: moves the fence, or ends a lost
    /// lease. Returns whether the connection failed (the next beat reconnects).
    pub(crate) fn after_renewal(
        &self,
        beat: &mut Beat,
        sent: Instant,
        result: Result<u64, Error>,
    ) -> bool {
        match result {
            Ok(until) => {
                beat.succeeded(sent);
                self.renewed(until);
                false
            }
            Err(Error::Lost { message }) => {
                self.finish(State::Lost, Some(message));
                false
            }
            Err(_) => true,
        }
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
        true
    }

    fn check(&self) -> Result<(), Error> {
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

    #[cfg(feature = "tokio")]
    pub(crate) fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// Stops the generator for good: a time at or after every ID it issued, calls still
    /// running on other threads included (the core's `stop`).
    #[cfg(feature = "tokio")]
    pub(crate) fn stop_generator(&self) -> u64 {
        self.generator.stop()
    }

    pub(crate) fn renew_call(&self) -> Call {
        Call::renew(
            self.keys.clone(),
            &self.space,
            self.node,
            &self.token,
            self.ttl_ms,
        )
    }

    pub(crate) fn release_call(&self, issued: u64) -> Call {
        Call::release(
            self.keys.clone(),
            &self.space,
            self.node,
            &self.token,
            issued,
        )
    }

    /// The heartbeat's schedule, starting from a renewal (or the acquire) sent at `sent`.
    pub(crate) fn beat(&self, sent: Instant, renew_every_ms: u64) -> Beat {
        let period = Duration::from_millis(renew_every_ms);
        Beat {
            next: sent + period,
            deadline: sent + Duration::from_millis(self.ttl_ms - self.skew_ms),
            period,
            live: Duration::from_millis(self.ttl_ms - self.skew_ms),
        }
    }
}

/// A lease's shared state and its heartbeat's schedule.
pub(crate) type Started<C> = (Arc<Shared<C>>, Beat);

/// A lease just granted by `acquire.lua`, before its generator exists.
pub(crate) struct Pending {
    pub grant: Grant,
    pub keys: [String; 4],
    pub token: String,
    pub started: Instant,
    /// When the newest successful call (acquire or renew) was sent.
    pub last_sent: Instant,
}

impl Pending {
    pub fn acquire_call<C>(space: &Space<C>, token: &str) -> Call {
        Call::acquire(space, token)
    }

    pub fn new(keys: [String; 4], token: String, grant: Grant, sent: Instant) -> Pending {
        Pending {
            grant,
            keys,
            token,
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

    pub fn renew_call<C>(&self, space: &Space<C>) -> Call {
        Call::renew(
            self.keys.clone(),
            &space.name,
            self.grant.node,
            &self.token,
            space.ttl_ms,
        )
    }

    /// Notes the result of a renewal sent at `sent` while waiting to become usable:
    /// `Ok(true)` when the connection failed (reconnect and go on), an error when the
    /// id was lost.
    pub fn renewed(
        &mut self,
        reply: Result<Vec<u64>, Error>,
        sent: Instant,
    ) -> Result<bool, Error> {
        match reply.and_then(renewed_until) {
            Ok(until) => {
                self.grant.until = self.grant.until.max(until);
                self.last_sent = sent;
                Ok(false)
            }
            Err(e @ Error::Lost { .. }) => Err(e),
            Err(_) => Ok(true),
        }
    }

    /// Hands the id back unused: the fence stays where it is.
    pub fn give_up_call<C>(&self, space: &Space<C>) -> Call {
        Call::release(
            self.keys.clone(),
            &space.name,
            self.grant.node,
            &self.token,
            self.grant.until,
        )
    }

    /// The lease's shared state and the heartbeat's schedule; on failure, the error and
    /// the call that hands the id back.
    pub fn start<C: Clock + Clone>(
        self,
        space: &Space<C>,
    ) -> Result<Started<C>, Box<(Error, Call)>> {
        let give_up = self.give_up_call(space);
        let last_sent = self.last_sent;
        match self.into_shared(space) {
            Ok(shared) => {
                let beat = shared.beat(last_sent, space.renew_every());
                Ok((Arc::new(shared), beat))
            }
            Err(e) => Err(Box::new((e, give_up))),
        }
    }

    /// The generator for the lease: resumed after `not_before`, fenced at `until`.
    fn into_shared<C: Clock + Clone>(self, space: &Space<C>) -> Result<Shared<C>, Error> {
        let g = self.grant;
        let generator =
            AtomicGenerator::new(space.clock.clone(), space.layout, g.node, space.policy)?;
        // 0 (an id never leased) and times before the epoch need no resume: the
        // generator never issues before its epoch.
        if g.not_before != 0 && g.not_before >= space.layout.epoch_ms() {
            generator.resume_after_ms(g.not_before)?;
        }
        generator.set_fence_ms(g.until);
        Ok(Shared {
            generator,
            space: space.name.clone(),
            keys: self.keys,
            token: self.token,
            node: g.node,
            not_before: g.not_before,
            ttl_ms: space.ttl_ms,
            skew_ms: space.skew_ms,
            until: AtomicU64::new(g.until),
            status: Mutex::new(Status {
                state: State::Live,
                lost: None,
            }),
            #[cfg(feature = "tokio")]
            wake: tokio::sync::Notify::new(),
        })
    }
}

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

/// Hands the id back after the heartbeat stopped: `release.lua` with the time the
/// generator's `stop` returns when it runs (at or after every ID it issued, calls racing
/// the release included).
pub(crate) type Releaser = Box<dyn FnOnce() -> Result<(), Error> + Send>;

#[cfg(feature = "tokio")]
pub(crate) type AsyncReleaser = Box<
    dyn FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Error>> + Send>>
        + Send,
>;

pub(crate) enum Heart {
    Thread(std::thread::JoinHandle<Releaser>),
    #[cfg(feature = "tokio")]
    Task(
        tokio::task::JoinHandle<AsyncReleaser>,
        tokio::runtime::Handle,
    ),
}

/// A node id leased from Redis, with a generator that issues IDs only while the lease
/// holds.
///
/// The generator is resumed after the lease's `not_before` (the fence of the id's
/// previous lease) and fenced at the lease's end, which a heartbeat moves forward on each
/// renewal. When renewals fail for `ttl - skew` ms, or Redis says the id is no longer
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
    shared: Arc<Shared<C>>,
    heart: Option<Heart>,
}

impl<C: Clock + Clone + Send + Sync + 'static> Lease<C> {
    /// Leases a node id of `space` (blocking): acquires it, waits until it is usable (a
    /// new space's first leases wait about `skew` ms), builds the generator, and starts
    /// the heartbeat thread with its own connection. Options are checked first; a bad
    /// one sends nothing to Redis.
    pub fn acquire<K: Connector>(connector: &K, space: &Space<C>) -> Result<Self, Error> {
        space.validate()?;
        let timeout = Duration::from_millis(space.ttl_ms);
        let mut con = connector.connect(timeout)?;
        let token = new_token();
        let sent = Instant::now();
        let reply = Pending::acquire_call(space, &token).run(&mut con)?;
        let mut pending = Pending::new(space.keys(), token, Grant::from_reply(reply)?, sent);
        while !pending.usable(space) {
            if pending.waited_too_long(space) {
                let _ = pending.give_up_call(space).run::<i64>(&mut con);
                return Err(pending.not_usable(space));
            }
            std::thread::sleep(USABLE_POLL);
            let sent = Instant::now();
            if pending.renewed(pending.renew_call(space).run(&mut con), sent)?
                && let Ok(fresh) = connector.connect(timeout)
            {
                con = fresh;
            }
        }
        let (shared, beat) = match pending.start(space) {
            Ok(started) => started,
            Err(failed) => {
                let (e, give_up) = *failed;
                let _ = give_up.run::<i64>(&mut con);
                return Err(e);
            }
        };
        // Keeps the fence where it is: nothing was issued.
        let give_up = shared.release_call(shared.until.load(Ordering::SeqCst));
        let (s, k) = (Arc::clone(&shared), connector.clone());
        let thread = std::thread::Builder::new()
            .name(format!("snowdrift-lease-{}", shared.node))
            .spawn(move || heartbeat(s, k, Some(con), beat));
        match thread {
            Ok(handle) => Ok(Lease {
                shared,
                heart: Some(Heart::Thread(handle)),
            }),
            Err(e) => {
                let _ = give_up.run::<i64>(&mut connector.connect(timeout)?);
                Err(Error::Redis(redis::RedisError::from(e)))
            }
        }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn from_task(
        shared: Arc<Shared<C>>,
        task: tokio::task::JoinHandle<AsyncReleaser>,
    ) -> Self {
        Lease {
            shared,
            heart: Some(Heart::Task(task, tokio::runtime::Handle::current())),
        }
    }
}

impl<C: Clock> Lease<C> {
    /// The node id (for split layouts, datacenter and worker together, as
    /// [`snowdrift::Layout::node_from`] composes them).
    pub fn node(&self) -> u64 {
        self.shared.node
    }

    /// The generator issues only IDs timed after this Unix millisecond (the fence of the
    /// id's previous lease; 0 for an id never leased).
    pub fn not_before_ms(&self) -> u64 {
        self.shared.not_before
    }

    /// The lease's end as Redis recorded it at the newest renewal (Unix ms): the
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

    /// Stops the heartbeat and the generator *without* telling Redis, as if the process
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
    pub(crate) fn shared(&self) -> &Arc<Shared<C>> {
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

/// The heartbeat thread: renews on schedule until the lease stops, then returns what
/// releases it (with the connection it has, if any).
fn heartbeat<K: Connector, C: Clock + Send + Sync + 'static>(
    shared: Arc<Shared<C>>,
    connector: K,
    mut con: Option<K::Connection>,
    mut beat: Beat,
) -> Releaser {
    while shared.is_live() {
        match beat.step(Instant::now()) {
            Step::Lapse => {
                shared.finish(State::Lapsed, None);
            }
            Step::Sleep(nap) => std::thread::park_timeout(nap),
            Step::Renew(budget) => {
                let sent = Instant::now();
                beat.sent(sent);
                let result = renew_once(&connector, &mut con, &shared, budget);
                if shared.after_renewal(&mut beat, sent, result) {
                    con = None; // retried at the next beat, on a fresh connection
                }
            }
        }
    }
    Box::new(move || {
        let issued = shared.generator.stop();
        let timeout = Duration::from_millis(shared.ttl_ms);
        let mut con = match con {
            Some(mut c) => {
                K::set_timeout(&mut c, timeout)?;
                c
            }
            None => connector.connect(timeout)?,
        };
        shared.release_call(issued).run::<i64>(&mut con).map(drop)
    })
}

fn renew_once<K: Connector, C: Clock>(
    connector: &K,
    con: &mut Option<K::Connection>,
    shared: &Shared<C>,
    budget: Duration,
) -> Result<u64, Error> {
    let con = match con {
        Some(c) => {
            K::set_timeout(c, budget)?;
            c
        }
        None => con.insert(connector.connect(budget)?),
    };
    renewed_until(shared.renew_call().run(con)?)
}
