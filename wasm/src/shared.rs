//! The numbers the wasm exports and the JS layer (`wasm/js/src/api.mjs`) share: error kinds,
//! policy codes, fact fields, decode flags, buffer capacities and offsets. Kept once,
//! here: `cargo xtask npm` reads this file as text, takes each `pub const NAME: TYPE =
//! <integer>;` line, and writes the same numbers as `constants.mjs`, which `api.mjs`
//! imports and the build bundles. So this file holds plain constants only, one to a line:
//! no imports, no expressions, nothing but `pub const`.

// Some are read only by JS (the borrow policy is the wasm's `_` arm, for instance).
#![allow(dead_code)]

/// Error kind: a value out of range (JS `RangeError`).
pub const ERR_RANGE: u32 = 1;
/// Error kind: the clock or the generator failed (JS `Error`).
pub const ERR_PLAIN: u32 = 2;
/// Error kind: no ID without waiting (`tryNext` returns `undefined`).
pub const ERR_WOULD_BLOCK: u32 = 3;

/// `gen_new`'s policy: `onClockBackwards: "fail"`.
pub const POLICY_FAIL: u32 = 0;
/// `gen_new`'s policy: `onClockBackwards: "wait"`, `bound` = `maxWaitMs`.
pub const POLICY_WAIT: u32 = 1;
/// `gen_new`'s policy: `onClockBackwards: "borrow"`, `bound` = `maxAheadMs` (also any
/// other number).
pub const POLICY_BORROW: u32 = 2;

/// `layout_custom`'s order: node above sequence (`"node-sequence"`).
pub const ORDER_NODE_SEQUENCE: u32 = 0;
/// `layout_custom`'s order: sequence above node (`"sequence-node"`, Sonyflake).
pub const ORDER_SEQUENCE_NODE: u32 = 1;

/// `layout_fact` field: the largest node id.
pub const LAYOUT_MAX_NODE: u32 = 0;
/// `layout_fact` field: the largest datacenter id (0 when the node is not split).
pub const LAYOUT_MAX_DATACENTER: u32 = 1;
/// `layout_fact` field: the largest worker id.
pub const LAYOUT_MAX_WORKER: u32 = 2;
/// `layout_fact` field: 1 when the node is split into datacenter + worker.
pub const LAYOUT_SPLIT: u32 = 3;
/// `layout_fact` field: 1 when every ID fits in 63 bits (else IDs from 2^63 on cross as
/// negative `i64`s).
pub const LAYOUT_FITS_I64: u32 = 4;
/// `layout_fact` field: width of the time field.
pub const LAYOUT_TIME_BITS: u32 = 5;
/// `layout_fact` field: width of the datacenter part of the node.
pub const LAYOUT_DATACENTER_BITS: u32 = 6;
/// `layout_fact` field: width of the worker part (the whole node when not split).
pub const LAYOUT_WORKER_BITS: u32 = 7;
/// `layout_fact` field: width of the sequence field.
pub const LAYOUT_SEQUENCE_BITS: u32 = 8;
/// `layout_fact` field: milliseconds per tick.
pub const LAYOUT_UNIT_MS: u32 = 9;
/// `layout_fact` field: the epoch, Unix ms.
pub const LAYOUT_EPOCH_MS: u32 = 10;
/// `layout_fact` field: the order ([`ORDER_NODE_SEQUENCE`] or [`ORDER_SEQUENCE_NODE`]).
pub const LAYOUT_ORDER: u32 = 11;
/// `layout_fact` field: the Unix ms at which the last tick starts.
pub const LAYOUT_LAST_MS: u32 = 12;
/// `layout_fact` field: the Unix ms at which the time field runs out (`exhausts_at`).
pub const LAYOUT_EXHAUSTS_AT: u32 = 13;
/// `layout_fact` field: the largest sequence number.
pub const LAYOUT_MAX_SEQUENCE: u32 = 14;

/// `gen_fact` field: the address of the generator's layout.
pub const GEN_LAYOUT: u32 = 0;
/// `gen_fact` field: the node id.
pub const GEN_NODE: u32 = 1;
/// `gen_fact` field: a Unix ms at or after the time of every ID issued.
pub const GEN_ISSUED_THROUGH_MS: u32 = 2;
/// `gen_fact` field: calls that found the clock behind (`ClockStats::behind`).
pub const GEN_BEHIND: u32 = 3;
/// `gen_fact` field: the largest of those distances, ms.
pub const GEN_LARGEST_BEHIND_MS: u32 = 4;
/// `gen_fact` field: calls that waited for the clock.
pub const GEN_CLOCK_WAITS: u32 = 5;
/// `gen_fact` field: calls that waited for the next tick.
pub const GEN_TICK_WAITS: u32 = 6;
/// `gen_fact` field: ms the newest ID is ahead of the clock now.
pub const GEN_AHEAD_MS: u32 = 7;

/// `decode`'s result bit: the layout splits the node into datacenter + worker.
pub const DECODED_SPLIT: i32 = 1;
/// `decode`'s result bit: node, datacenter, worker and sequence are below 2^31.
pub const DECODED_SMALL: i32 = 2;

/// Capacity of the text buffer, in bytes.
pub const TEXT_CAP: usize = 4096;
/// Capacity of the batch buffer, in IDs.
pub const BATCH_CAP: usize = 4096;

/// Offsets in the shared buffers (`io::Io`, checked against the struct at compile time):
/// the decoded parts (five `f64`: time, node, datacenter, worker, sequence).
pub const IO_NUM: usize = 0;
/// Offset of the last error's kind (`u32`).
pub const IO_ERR_KIND: usize = 40;
/// Offset of the number of the last error's core kind (`u32`, see `codes.rs`).
pub const IO_ERR_CODE: usize = 44;
/// Offset of the last error message's length (`u32`).
pub const IO_ERR_LEN: usize = 48;
/// Offset of the last error message (UTF-8).
pub const IO_ERR: usize = 52;
/// Offset of the text buffer.
pub const IO_TEXT: usize = 308;
/// Offset of the batch buffer (`u64`s).
pub const IO_BATCH: usize = 4408;

/// `id_at`'s choice: the smallest ID of the tick.
pub const ID_AT_MIN: u32 = 0;
/// `id_at`'s choice: the largest ID of the tick.
pub const ID_AT_MAX: u32 = 1;
