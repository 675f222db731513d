//! The atomics switch: `portable-atomic` (which uses native atomics where the target has
//! them), or loom's model-checked atomics under `cfg(loom)`. The files that need atomics
//! ([`AtomicGenerator`](crate::AtomicGenerator), [`CounterClock`](crate::CounterClock))
//! import them from here and from nowhere else, so they never import one another.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use portable_atomic::{AtomicU64, Ordering};
