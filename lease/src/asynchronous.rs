//! `Lease::acquire_async`: the same lease, with a tokio task as its heartbeat.

use crate::beat::{Beat, Step};
use crate::connector::AsyncConnector;
use crate::error::Error;
use crate::heartbeat::{AsyncReleaser, Heart};
use crate::lease::Lease;
use crate::pending::{Pending, USABLE_POLL};
use crate::protocol::{Call, new_token, renewed_until};
use crate::shared::Shared;
use crate::space::Space;
use crate::state::State;
use crate::store::Grant;
use snowdrift::Clock;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::timeout;

/// Runs `call` on `con`, bounded by `limit`.
async fn run_bounded<T: redis::FromRedisValue, N: redis::aio::ConnectionLike + Send>(
    call: &Call,
    con: &mut N,
    limit: Duration,
) -> Result<T, Error> {
    match timeout(limit, call.run_async(con)).await {
        Ok(result) => result,
        Err(_) => Err(Error::Redis(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no reply from redis within {} ms", limit.as_millis()),
        )))),
    }
}

async fn connect_bounded<K: AsyncConnector>(
    connector: &K,
    limit: Duration,
) -> Result<K::Connection, Error> {
    match timeout(limit, connector.connect_async()).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(Error::Redis(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("could not connect to redis within {} ms", limit.as_millis()),
        )))),
    }
}

impl<C: Clock + Clone + Send + Sync + 'static> Lease<C> {
    /// [`acquire`](Lease::acquire) for tokio (feature `tokio`): the heartbeat is a task on
    /// the current runtime, with its own connection. Call it inside a tokio runtime.
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
    pub async fn acquire_async<K: AsyncConnector>(
        connector: &K,
        space: &Space<C>,
    ) -> Result<Self, Error> {
        space.validate()?;
        let limit = Duration::from_millis(space.ttl_ms);
        let mut con = connect_bounded(connector, limit).await?;
        let token = new_token();
        let sent = Instant::now();
        let reply = run_bounded(&Call::acquire(space, &token), &mut con, limit).await?;
        let mut pending = Pending::new(space, token, Grant::from_reply(reply)?, sent);
        while !pending.usable(space) {
            if pending.waited_too_long(space) {
                let give_up = Call::release(&pending.ticket, pending.grant.until);
                let _ = run_bounded::<i64, _>(&give_up, &mut con, limit).await;
                return Err(pending.not_usable(space));
            }
            tokio::time::sleep(USABLE_POLL).await;
            let sent = Instant::now();
            let renew = Call::renew(&pending.ticket, space.ttl_ms);
            let reply = run_bounded(&renew, &mut con, limit).await;
            if pending.renewed(reply.and_then(renewed_until), sent)?
                && let Ok(fresh) = connect_bounded(connector, limit).await
            {
                con = fresh;
            }
        }
        let (shared, beat) = match pending.start(space) {
            Ok(started) => started,
            Err(failed) => {
                let (e, ticket, until) = *failed;
                let _ =
                    run_bounded::<i64, _>(&Call::release(&ticket, until), &mut con, limit).await;
                return Err(e);
            }
        };
        let task = tokio::spawn(heartbeat(
            Arc::clone(&shared),
            connector.clone(),
            Some(con),
            beat,
        ));
        Ok(Lease::from_task(shared, task))
    }

    /// [`release`](Lease::release), waiting for Redis's answer (feature `tokio`).
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
async fn heartbeat<K: AsyncConnector, C: Clock + Send + Sync + 'static>(
    shared: Arc<Shared<C>>,
    connector: K,
    mut con: Option<K::Connection>,
    mut beat: Beat,
) -> AsyncReleaser {
    while shared.is_live() {
        match beat.step(Instant::now()) {
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
                        None => con.insert(connect_bounded(&connector, budget).await?),
                    };
                    let renew = Call::renew(&shared.ticket, shared.ttl_ms);
                    renewed_until(run_bounded(&renew, c, budget).await?)
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
                None => connect_bounded(&connector, limit).await?,
            };
            run_bounded::<i64, _>(&Call::release(&shared.ticket, issued), &mut con, limit)
                .await
                .map(drop)
        })
    });
    releaser
}
