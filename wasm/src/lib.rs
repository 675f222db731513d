//! The wasm layer of the `snowdrift` npm package: `#[wasm_bindgen]` free functions over
//! the core, called by the package's JS layer (`wasm/js/src/api.mjs`) through the glue that the
//! wasm-bindgen CLI generates (`--target web`, loaded with `initSync` in every runtime).
//! It holds no ID logic: every export calls a core function and moves numbers across.
//!
//! Numbers only, so the glue passes every argument and result straight through: IDs cross
//! as `i64` (a JS `bigint`, never converted), small integers as `f64` or `u32`, layouts and
//! generators as wasm addresses. No export returns a `Result` or takes a class: a call that
//! can fail returns a sentinel (`-1`, or a null address) and records the error in [`io`]:
//! its kind ([`ERR_RANGE`], [`ERR_PLAIN`], [`ERR_WOULD_BLOCK`]), the number of the core's
//! error kind (`codes.rs`, which JS names as the error's `code`) and the core's message. The
//! numbers both sides use (kinds, codes, fields, offsets) are in `shared.rs`, from which the
//! build writes JS's copy. As
//! `-1` is also the bit pattern of the ID 2^64-1, JS reads the kind before it believes a
//! `-1`. The exception is `gen_next`, the hot path: on failure it calls the `raise` import,
//! which throws the recorded error into the caller, so JS checks nothing after it (the call
//! is made once the export's frame is off wasm's shadow stack, which a JS exception leaving
//! wasm would not unwind). Strings cross through the text buffer, decoded parts through
//! the number buffer, batches through the batch buffer (all at fixed addresses, see [`io`]).
//! Generators live in blocks of the module's own pool ([`pool`]), which is also the global
//! allocator.
//!
//! Imports (`clock.rs`), from the package's `host.mjs`: `now()` (`Date.now` itself, no
//! wrapper), `clock(index)` (the user's clock function number `index`, already checked by
//! JS: Unix ms, or `-1` if it failed), `random(ptr, len)` (`crypto.getRandomValues`) and
//! `raise(kind)`. A generator call made from inside a user's clock function is refused here.
//!
//! Adding an export: a `#[wasm_bindgen] pub fn` over numbers in the module of its concept
//! (`generator.rs`, `functions.rs`, `objectid.rs`), then import it by name in `api.mjs`.

#![cfg_attr(target_arch = "wasm32", no_std)]

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
compile_error!(
    "snowdrift-wasm keeps per-module state in statics: build without the atomics feature"
);

mod clock;
mod codes;
mod functions;
mod generator;
mod io;
mod objectid;
mod pool;
mod shared;

pub use io::{ERR_PLAIN, ERR_RANGE, ERR_WOULD_BLOCK};

#[cfg(target_arch = "wasm32")]
mod wasm_runtime {
    #[global_allocator]
    static ALLOC: crate::pool::Blocks<crate::generator::Gen> =
        crate::pool::Blocks(&crate::generator::POOL);

    /// Nothing in this crate panics on input; should a bug panic, trap without formatting.
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        core::arch::wasm32::unreachable()
    }
}
