//! The heartbeat: a thread (or, in `asynchronous.rs`, a tokio task) that renews a lease on
//! schedule and moves its generator's fence, then hands back what releases it.

use crate::error::Error;
use crate::held::Held;
use crate::lease_state::State;
use crate::rules::{Beat, Step};
use crate::store::Store;
use snowdrift::Clock;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Hands the id back after the heartbeat stopped: the store's release with the time the
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

/// The heartbeat thread: renews on schedule until the lease stops, then returns what
/// releases it (with the connection it has, if any).
pub(crate) fn heartbeat<K: Store, C: Clock + Send + Sync + 'static>(
    shared: Arc<Held<C>>,
    connector: K,
    mut con: Option<K::Connection>,
    mut beat: Beat,
) -> Releaser {
    while shared.is_live() {
        match shared.step(&beat, Instant::now()) {
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
        K::release(&mut con, &shared.ticket(), issued).map(drop)
    })
}

fn renew_once<K: Store, C: Clock>(
    connector: &K,
    con: &mut Option<K::Connection>,
    shared: &Held<C>,
    budget: Duration,
) -> Result<u64, Error> {
    let con = match con {
        Some(c) => {
            K::set_timeout(c, budget)?;
            c
        }
        None => con.insert(connector.connect(budget)?),
    };
    K::renew(con, &shared.renewal(), shared.ttl_ms)
}
