//! `Lease::acquire_async`: the same lease, with a tokio task as its heartbeat.

use crate::error::Error;
use crate::granted::{Granted, Wait};
use crate::heartbeat_thread::{AsyncReleaser, Heart};
use crate::held::Held;
use crate::lease::Lease;
use crate::lease_state::State;
use crate::rules::{Beat, Step};
use crate::space::Space;
use crate::store::AsyncStore;
use crate::token::new_token;
use snowdrift::Clock;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::timeout;

/// Runs a call of `K`'s, bounded by `limit`.
async fn bounded<K: AsyncStore, T>(
    limit: Duration,
    call: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(K::timed_out(limit)),
    }
}

impl<C: Clock + Clone + Send + Sync + 'static> Lease<C> {
    /// [`acquire`](Lease::acquire) for tokio (feature `tokio`), from a Redis client or (with
    /// the `postgres` feature too) a `Postgres`: the heartbeat is a task on the current
    /// runtime, with its own connection. Call it inside a tokio runtime.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use snowdrift::Layout;
    /// use snowdrift_lease::{Lease, Space};
    /// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
    /// let space = Space::new("ids:orders", Layout::TWITTER);
    /// let lease = Lease::acquire_async(&client, &space).await?;
    /// let id = lease.generator().next()?;
    /// lease.release_async().await?;
    /// # Ok(()) }
    /// ```
    pub async fn acquire_async<K: AsyncStore>(store: &K, space: &Space<C>) -> Result<Self, Error> {
        space.validate()?;
        let limit = Duration::from_millis(space.ttl_ms);
        let mut con = bounded::<K, _>(limit, store.connect_async()).await?;
        let token = new_token();
        let sent = Instant::now();
        // A grant that comes `ttl - skew` after the acquire was sent would lapse at once.
        let live = Duration::from_millis(space.ttl_ms - space.skew_ms);
        let grant = bounded::<K, _>(live, K::acquire_async(&mut con, space, &token)).await?;
        let mut granted = Granted::new(space, token, grant, sent);
        while !granted.usable(space) {
            match granted.next(space, Instant::now()) {
                Ok(Wait::Sleep(nap)) => tokio::time::sleep(nap).await,
                Ok(Wait::Renew { sent, budget }) => {
                    let renew = K::renew_async(&mut con, granted.renewal(), space.ttl_ms);
                    let reply = bounded::<K, _>(budget, renew).await;
                    if granted.renewed(reply, sent)?
                        && let Ok(fresh) = bounded::<K, _>(budget, store.connect_async()).await
                    {
                        con = fresh;
                    }
                }
                Err(error) => {
                    let give_up = K::release_async(&mut con, &granted.ticket, granted.grant.until);
                    let _ = bounded::<K, _>(limit, give_up).await;
                    return Err(error);
                }
            }
        }
        let (shared, beat) = match granted.start(space) {
            Ok(started) => started,
            Err(failed) => {
                let (e, ticket, until) = *failed;
                let _ = bounded::<K, _>(limit, K::release_async(&mut con, &ticket, until)).await;
                return Err(e);
            }
        };
        let task = tokio::spawn(heartbeat(
            Arc::clone(&shared),
            store.clone(),
            Some(con),
            beat,
        ));
        Ok(Lease::from_task(shared, task))
    }

    /// [`release`](Lease::release), waiting for the store's answer (feature `tokio`).
    pub async fn release_async(mut self) -> Result<(), Error> {
        let shared = Arc::clone(self.shared());
        let Some(heart) = self.take_heart() else {
            return Ok(());
        };
        shared.finish(State::Released, None);
        match heart {
            Heart::Task(task, _) => {
                shared.wake.notify_one();
                match task.await {
                    Ok(releaser) => releaser().await,
                    Err(_) => Ok(()),
                }
            }
            Heart::Thread(handle) => {
                handle.thread().unpark();
                let joined = tokio::task::spawn_blocking(move || handle.join())
                    .await
                    .ok()
                    .and_then(|r| r.ok());
                match joined {
                    Some(releaser) => tokio::task::spawn_blocking(releaser)
                        .await
                        .unwrap_or(Ok(())),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The heartbeat task: as the thread, with every call bounded by a timeout.
async fn heartbeat<K: AsyncStore, C: Clock + Send + Sync + 'static>(
    shared: Arc<Held<C>>,
    store: K,
    mut con: Option<K::Connection>,
    mut beat: Beat,
) -> AsyncReleaser {
    while shared.is_live() {
        match shared.step(&beat, Instant::now()) {
            Step::Lapse => {
                shared.finish(State::Lapsed, None);
            }
            Step::Sleep(nap) => {
                let _ = timeout(nap, shared.wake.notified()).await;
            }
            Step::Renew(budget) => {
                let sent = Instant::now();
                beat.sent(sent);
                let renewed = async {
                    let c = match &mut con {
                        Some(c) => c,
                        None => con.insert(bounded::<K, _>(budget, store.connect_async()).await?),
                    };
                    let ticket = shared.renewal();
                    let renew = K::renew_async(c, &ticket, shared.ttl_ms);
                    bounded::<K, _>(budget, renew).await
                };
                let result = renewed.await;
                if shared.after_renewal(&mut beat, sent, result) {
                    con = None;
                }
            }
        }
    }
    let releaser: AsyncReleaser = Box::new(move || {
        Box::pin(async move {
            let issued = shared.stop_generator();
            let limit = Duration::from_millis(shared.ttl_ms);
            let mut con = match con {
                Some(c) => c,
                None => bounded::<K, _>(limit, store.connect_async()).await?,
            };
            let ticket = shared.ticket();
            let release = K::release_async(&mut con, &ticket, issued);
            bounded::<K, _>(limit, release).await.map(drop)
        })
    });
    releaser
}
