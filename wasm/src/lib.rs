//! The wasm-bindgen layer of the `snowdrift` npm package. It holds no ID logic: each
//! exported class wraps a core type (`Snowdrift` a `Generator`, `ObjectId` an
//! `ObjectId`), the free functions call the core's decode/compose/text functions, and all
//! conversions and errors live in `interop`.
//!
//! Features: `std` (default) links the standard library, as the wasm-bindgen tests need;
//! the package is built without it, with a trapping panic handler and a small allocator,
//! which keeps std's panic and formatting machinery out of the wasm.

#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
compile_error!(
    "snowdrift-wasm keeps per-module state in statics: build without the atomics feature"
);

mod clock;
mod functions;
mod interop;
mod objectid;
mod snowdrift;

/// Per-module state (the wasm is single-threaded: see the `compile_error!` above).
pub(crate) struct Global<T>(core::cell::RefCell<Option<T>>);

// SAFETY: without the atomics feature a wasm module instance runs on one thread, and
// each instance (worker, isolate) has its own memory, so no two threads share a static.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    pub(crate) const fn new() -> Self {
        Global(core::cell::RefCell::new(None))
    }
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }
}

pub use crate::functions::{compose, decode, from_base32, max_id_at, min_id_at, to_base32};
pub use crate::objectid::ObjectId;
pub use crate::snowdrift::Snowdrift;

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
mod wasm_runtime {
    /// Single-threaded wasm: the free-list allocator needs no lock.
    #[global_allocator]
    static ALLOC: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
        // SAFETY: wasm32-unknown-unknown without the atomics feature has one thread.
        unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

    /// Nothing in this crate panics on input; should a bug panic, trap without formatting.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
