//! MongoDB ObjectIds from the core, with the process bytes and the counter start drawn
//! from `crypto.getRandomValues`.

use core::cell::UnsafeCell;
use snowdrift::{ObjectId, ObjectIdGenerator};

use wasm_bindgen::prelude::wasm_bindgen;

use crate::clock::{DateNow, fill_random};
use crate::io::{fail_gen, fail_parse, text_in, text_out};

struct Shared(UnsafeCell<Option<ObjectIdGenerator<DateNow>>>);
// SAFETY: one thread per module instance (see lib.rs).
unsafe impl Sync for Shared {}

/// One generator per module instance (per process, worker or isolate), created on first
/// use: workerd allows no random numbers while a module loads.
static GENERATOR: Shared = Shared(UnsafeCell::new(None));

/// A new ObjectId: its 24 hex digits into the text buffer; returns its timestamp (s), or
/// -1 with the error recorded.
#[wasm_bindgen]
pub fn objectid_generate() -> f64 {
    // SAFETY: one thread; the reference does not outlive this call.
    let cell = unsafe { &mut *GENERATOR.0.get() };
    let generator = cell.get_or_insert_with(|| {
        let mut bytes = [0u8; 8];
        fill_random(&mut bytes);
        let [p0, p1, p2, p3, p4, c0, c1, c2] = bytes;
        let counter = u32::from_be_bytes([0, c0, c1, c2]);
        ObjectIdGenerator::new(DateNow, [p0, p1, p2, p3, p4], counter)
    });
    match generator.next() {
        Ok(id) => put(id),
        Err(e) => {
            fail_gen(e);
            -1.0
        }
    }
}

/// Parses the `len` bytes of hex in the text buffer; writes the lowercase form back and
/// returns the timestamp (s), or -1 with the error recorded.
#[wasm_bindgen]
pub fn objectid_parse(len: u32) -> f64 {
    match ObjectId::parse(text_in(len)) {
        Ok(id) => put(id),
        Err(e) => {
            fail_parse(e);
            -1.0
        }
    }
}

fn put(id: ObjectId) -> f64 {
    text_out(id.to_hex().as_bytes());
    f64::from(id.timestamp())
}
