//! Node ids for fleets of snowdrift ID generators, leased from Redis (or PostgreSQL) and
//! fenced.
//!
//! Every process of a fleet takes a node id of a *space* (`ids:orders`) with a lease
//! that a heartbeat renews. Its [`AtomicGenerator`](snowdrift::AtomicGenerator) issues
//! IDs only after the id's previous holder stopped (`not_before`) and only before the
//! lease's end (the fence), so no two live holders ever issue the same ID: not when a
//! holder stalls or loses its network, not when host clocks disagree, not when the store
//! restarts without its data. The protocol, shared with the npm package, is described in
//! `PROTOCOL.md` beside this crate and implemented by the Lua scripts in `lua/` and the
//! SQL in `postgres/`; every store runs under the same holder ([`Store`]).
//!
//! ```no_run
//! use snowdrift::{Layout, Policy};
//! use snowdrift_lease::{Lease, Space};
//!
//! let client = redis::Client::open("redis://127.0.0.1:6379/")?;
//! let space = Space::new("ids:orders", Layout::TWITTER)
//!     .ttl_ms(10_000)
//!     .policy(Policy::Wait { max_wait_ms: 100 });
//! let lease = Lease::acquire(&client, &space)?; // blocks until the id is usable
//! let generator = lease.generator(); // lock-free, share it with every thread
//! let id = generator.next()?;
//! println!("node {} issued {id}, leased until {}", lease.node(), lease.until_ms());
//! match generator.next() {
//!     Ok(id) => println!("{id}"),
//!     // The fence: the lease lapsed or was lost; `check` says which.
//!     Err(e) if e.kind() == snowdrift::ErrorKind::PastFence => eprintln!("{}", lease.check().unwrap_err()),
//!     Err(e) => eprintln!("{e}"),
//! }
//! lease.release()?; // the next holder starts right after our newest ID
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Lifecycle
//! 1. [`Lease::acquire`] takes the lowest id never leased, else the one whose lease ended
//!    longest ago, or fails with [`Error::AllLeased`].
//! 2. A heartbeat (a thread, or a tokio task) renews every `renew_every_ms` (a third of
//!    the TTL) and moves the generator's fence to the new lease end.
//! 3. If no renewal succeeds for `ttl - skew` ms, the lease *lapses*; if the store says the
//!    id is someone else's now (or it lost its data), the lease is *lost*. Either way the
//!    generator stops at once ([`PastFence`](snowdrift::ErrorKind::PastFence)); take a new lease.
//!    Each renewal also replaces the lease's token with one the holder draws ([`Ticket`]):
//!    of two copies of one holder (a VM snapshot resumed beside the original), the one
//!    that renews second is lost (until then both issue IDs: run one copy at a time).
//! 4. [`Lease::release`] (or dropping the lease) hands the id back.
//!
//! # Features
//! - `tokio`: [`Lease::acquire_async`] and [`Lease::release_async`], with the heartbeat as
//!   a tokio task, from any [`AsyncStore`] ([`AsyncConnector`] for Redis).
//! - `cluster`: [`Connector`] (and with `tokio`, [`AsyncConnector`]) for
//!   `redis::cluster::ClusterClient`. A space's keys share one hash tag, so each script
//!   runs on one node.
//! - `postgres`: `Postgres`, a [`Store`] in a PostgreSQL database (the SQL of
//!   `postgres/`, over `tokio-postgres` on a private single-thread runtime so every call
//!   has a timeout; no tokio runtime of yours is needed). With `tokio` too, it is an
//!   [`AsyncStore`] for [`Lease::acquire_async`], on your runtime.
//! - `metrics`: every lease reports through the [`metrics`](https://docs.rs/metrics)
//!   facade (renewals, failures, `LOST`, lapses, the fence, the generator's clock trouble);
//!   plug in the recorder of your choice. `docs/observability.md` lists the names.
//! - `tracing`: `tracing` events (target `snowdrift_lease`) for acquires, failed renewals,
//!   `LOST`, lapses and the clock found behind the generator.
//!
//! [`Lease::health`] says where a lease stands (`ok`, `renewing late`, `lapsed`, `lost`)
//! with or without them.
//!
//! MSRV: Rust 1.88 (that of `redis` 1.8).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "tokio")]
mod asynchronous;
mod connector;
mod error;
mod granted;
mod health;
mod heartbeat_thread;
mod held;
mod lease;
mod lease_state;
mod limits;
mod observe;
mod rules;
mod space;
mod store;
mod token;

#[cfg(feature = "tokio")]
pub use connector::AsyncConnector;
pub use connector::Connector;
pub use error::Error;
pub use health::{Health, HealthState};
pub use lease::Lease;
pub use lease_state::State;
pub use limits::{MAX_NODE_BITS, TTL_RANGE_MS};
pub use space::Space;
#[cfg(feature = "tokio")]
pub use store::AsyncStore;
#[cfg(feature = "postgres")]
pub use store::postgres::{Postgres, PostgresConnection};
pub use store::{Grant, Listed, Listing, Store, Ticket};
