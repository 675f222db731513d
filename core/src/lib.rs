//! Snowflake-family 64-bit IDs: time-ordered, unique across nodes without coordination,
//! decodable. `#![no_std]`, no allocation, no panics on input or on clock behaviour.
//!
//! An ID is a time field (ticks since an epoch), a node field (which generator) and a
//! sequence (which ID within the tick), laid out by a [`Layout`]. Generators read a
//! [`Clock`] you choose and follow a [`Policy`] when the clock goes backwards.
//!
//! ```
//! use snowdrift::{Generator, IdGenerator, Layout, MonotonicClock, Policy, text};
//!
//! let mut generator = Generator::new(MonotonicClock::new(), Layout::DEFAULT, 42, Policy::DEFAULT)?;
//! let id = generator.next()?;
//! let parts = Layout::DEFAULT.decode(id)?;
//! assert_eq!(parts.node, 42);
//! let text = text::to_base32(id); // 13 characters, sorts like the number
//! assert_eq!(text::parse_base32(&text)?, id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The restart rule
//! A generator with a fixed node id under the default [`Policy::Borrow`] runs up to
//! `max_ahead_ms` (1 s by default) ahead of the clock under load, and a clock can be set
//! back. A process restarted with that node id sooner than that repeats IDs, unless it
//! resumes after a persisted mark ([`IdGenerator::resume_after_ms`], with the mark stored
//! ahead of the IDs and the generator fenced there by [`IdGenerator::set_fence_ms`]) or
//! takes its node id from a lease (the crate `snowdrift-lease`). The crate's README shows
//! the mark kept in a file.
//!
//! # What is in the box
//! - [`Layout`]: field widths, time unit, epoch; presets for Twitter, Discord, Sonyflake,
//!   Instagram, Baidu, snowdrift's [`Layout::DEFAULT`] and [`Layout::JS53`] (53 bits: IDs
//!   a JavaScript `Number` and JSON hold exactly); decode, compose and ID ranges for a
//!   point in time.
//! - [`Generator`] (`&mut self`) and [`AtomicGenerator`] (`&self`, lock-free, one atomic
//!   add per ID within a tick and a compare-and-swap per tick, usable in a `static` and
//!   from interrupt handlers), both driven
//!   through the [`IdGenerator`] trait: `next`, `try_next` (never waits), batches
//!   ([`Batch`]), `fill`, resume after a persisted high-water mark, a fence.
//! - [`Policy`]: fail, wait, borrow or switch node when the clock goes back; or reuse the
//!   unspent sequence numbers of recent ticks ([`Generator::with_history`]).
//! - [`Error`] (with [`ErrorKind`] and [`Field`]) for generators, layouts and values, and
//!   [`ParseError`] (with [`ParseErrorKind`]) for text forms; each renders its
//!   [`Message`] without allocating.
//! - [`Clock`]: [`SystemClock`], [`MonotonicClock`], [`CounterClock`] for hardware
//!   counters, [`ManualClock`] for tests, [`FnClock`] for anything else.
//! - [`text`]: decimal, hex, Crockford base32 and base62, without allocation.
//! - `ObjectId` and `ObjectIdGenerator`: MongoDB ObjectIds (feature `objectid`).
//! - `Sealer`: sealed public IDs, a keyed permutation of the ID space (NIST FF1 over
//!   AES) that hides an ID's time and the gaps between IDs (feature `seal`).
//!
//! # Features
//! - `std` (default): [`SystemClock`] and [`MonotonicClock`]. Errors implement
//!   `core::error::Error` with or without it.
//! - `atomic` (default): [`AtomicGenerator`] and [`CounterClock`], through `portable-atomic`
//!   (with `require-cas`). On targets without 64-bit atomics the *final binary* enables
//!   portable-atomic's `critical-section` feature (and provides an implementation, e.g.
//!   `cortex-m`'s `critical-section-single-core`); this library never does. Cortex-M3/M4/M7
//!   have 32-bit but no 64-bit atomics: there portable-atomic ignores `critical-section`
//!   and falls back to a spin lock, which deadlocks when an interrupt handler preempts the
//!   lock holder, so a single-core firmware that uses the generator from interrupts
//!   enables `unsafe-assume-single-core` instead.
//! - `objectid` (off by default): `ObjectId` and `ObjectIdGenerator`, for MongoDB's
//!   12-byte ObjectIds, which are not Snowflake IDs:
//!   `snowdrift = { version = "0.3", features = ["objectid"] }`.
//! - `seal` (off by default): `Sealer`, which seals IDs into public IDs and opens them
//!   with a secret AES key (NIST SP 800-38G FF1 in radix 2 over the layout's 63 or 64
//!   bits, through RustCrypto's `aes`; AES-NI and ARMv8 AES where the CPU has them, else
//!   constant-time software): `snowdrift = { version = "0.3", features = ["seal"] }`.
//!
//! # Building for other targets
//! The crate builds with `default-features = false` for any target `core` supports:
//! ```text
//! cargo build -p snowdrift --no-default-features --target thumbv6m-none-eabi
//! cargo build -p snowdrift --no-default-features --target riscv32imc-unknown-none-elf
//! cargo build -p snowdrift --no-default-features --target wasm32-unknown-unknown
//! cargo build -p snowdrift --no-default-features --features atomic --target thumbv7em-none-eabihf
//! ```
//!
//! # Guarantees
//! 1. No generator issues the same ID twice, under any clock behaviour or interleaving.
//! 2. IDs from one generator strictly increase, except from a generator made by
//!    [`Generator::with_history`].
//! 3. No call waits longer than its policy's bound; `try_*` calls never wait.
//! 4. Bad input returns an error naming the value and the allowed range, and changes
//!    nothing.
//!
//! MSRV: Rust 1.85 (edition 2024), checked by `cargo xtask test lint`.

#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "atomic")]
mod atomic;
mod batch;
mod clock;
mod engine;
mod error;
#[cfg(feature = "seal")]
mod ff1;
mod generator;
mod history;
mod id;
mod id_generator;
mod layout;
mod message;
#[cfg(feature = "objectid")]
mod objectid;
mod policy;
#[cfg(feature = "seal")]
mod seal;
mod stats;
#[cfg(feature = "atomic")]
mod sync;
pub mod text;

#[cfg(feature = "atomic")]
pub use atomic::AtomicGenerator;
pub use batch::Batch;
#[cfg(feature = "atomic")]
pub use clock::CounterClock;
pub use clock::{Clock, FnClock, ManualClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, SystemClock};
pub use error::{Error, ErrorKind, Field, ParseError, ParseErrorKind};
pub use generator::Generator;
pub use id::Parts;
pub use id_generator::IdGenerator;
pub use layout::{Layout, LayoutBuilder, Order};
pub use message::Message;
#[cfg(feature = "objectid")]
pub use objectid::{ObjectId, ObjectIdGenerator};
pub use policy::Policy;
#[cfg(feature = "seal")]
pub use seal::Sealer;
pub use stats::ClockStats;
