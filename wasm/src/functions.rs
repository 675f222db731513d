//! Layouts and the free functions: decode, compose, text forms, ID ranges for a time.
//!
//! Layouts are passed by address: a preset from `layout_preset` (the default layout is
//! the preset named "default"), the one custom layout cell filled by `layout_custom`, or a
//! generator's (`gen_fact`).

use core::cell::UnsafeCell;
use snowdrift::{Layout, Order, Parts, text};
use wasm_bindgen::prelude::wasm_bindgen;

use crate::io::{self, fail_parse, fail_range, id_result, text_in, text_out};
use crate::shared::*;

struct CustomLayout(UnsafeCell<Layout>);
// SAFETY: one thread per module instance (see lib.rs).
unsafe impl Sync for CustomLayout {}

static CUSTOM: CustomLayout = CustomLayout(UnsafeCell::new(Layout::DEFAULT));

/// The core's presets, at fixed addresses. JS reads their names and addresses once, when
/// it loads (`preset_name`, `layout_preset`): the names users write come from here.
static PRESETS: [(&str, Layout); Layout::PRESETS.len()] = Layout::PRESETS;

/// Writes the name of preset number `index` into the text buffer and returns its length,
/// or 0 past the last preset.
#[wasm_bindgen]
pub fn preset_name(index: u32) -> u32 {
    PRESETS
        .get(index as usize)
        .map_or(0, |(name, _)| text_out(name.as_bytes()))
}

/// The address of preset number `index` (null past the last preset).
#[wasm_bindgen]
pub fn layout_preset(index: u32) -> *const Layout {
    PRESETS
        .get(index as usize)
        .map_or(core::ptr::null(), |(_, layout)| layout)
}

/// A custom layout (field widths checked by the core), in the one custom cell: valid
/// until the next call. `split` says datacenter + worker were given instead of node bits;
/// `order` 1 is sequence-then-node. Returns 0 with the error recorded if the core rejects
/// it.
#[wasm_bindgen]
#[allow(clippy::too_many_arguments)]
pub fn layout_custom(
    time_bits: u32,
    node_bits: u32,
    datacenter_bits: u32,
    worker_bits: u32,
    split: u32,
    sequence_bits: u32,
    unit_ms: u32,
    epoch_ms: f64,
    order: u32,
) -> *const Layout {
    let mut b = Layout::builder()
        .time_bits(time_bits)
        .sequence_bits(sequence_bits)
        .unit_ms(unit_ms)
        .epoch_ms(epoch_ms as u64)
        .order(if order == ORDER_SEQUENCE_NODE {
            Order::SequenceThenNode
        } else {
            Order::NodeThenSequence
        });
    b = if split != 0 {
        b.datacenter_bits(datacenter_bits).worker_bits(worker_bits)
    } else {
        b.node_bits(node_bits)
    };
    match b.build() {
        Ok(layout) => {
            // SAFETY: one thread; no reference to the cell outlives a call.
            unsafe { *CUSTOM.0.get() = layout };
            CUSTOM.0.get()
        }
        Err(e) => {
            fail_range(e);
            core::ptr::null()
        }
    }
}

/// Facts about a layout, one field at a time (`LAYOUT_*` in shared.rs: largest node,
/// datacenter and worker ids, split, fits in 63 bits, field widths, unit, epoch, order,
/// last tick, when it runs out); 0 for an unknown field. JS reads them for its checks and
/// for `layoutInfo`.
///
/// # Safety
/// `layout` is an address from `layout_*` or `gen_fact`.
#[wasm_bindgen]
pub unsafe fn layout_fact(layout: *const Layout, field: u32) -> f64 {
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    let l = unsafe { &*layout };
    (match field {
        LAYOUT_MAX_NODE => l.max_node(),
        LAYOUT_MAX_DATACENTER => l.max_datacenter(),
        LAYOUT_MAX_WORKER => l.max_worker(),
        LAYOUT_SPLIT => u64::from(l.is_split()),
        LAYOUT_FITS_I64 => u64::from(l.fits_i64()),
        LAYOUT_TIME_BITS => u64::from(l.time_bits()),
        LAYOUT_DATACENTER_BITS => u64::from(l.datacenter_bits()),
        LAYOUT_WORKER_BITS => u64::from(l.worker_bits()),
        LAYOUT_SEQUENCE_BITS => u64::from(l.sequence_bits()),
        LAYOUT_UNIT_MS => u64::from(l.unit_ms()),
        LAYOUT_EPOCH_MS => l.epoch_ms(),
        LAYOUT_ORDER => match l.order() {
            Order::NodeThenSequence => u64::from(ORDER_NODE_SEQUENCE),
            Order::SequenceThenNode => u64::from(ORDER_SEQUENCE_NODE),
        },
        LAYOUT_LAST_MS => l.last_ms(),
        LAYOUT_EXHAUSTS_AT => l.exhausts_at(),
        LAYOUT_MAX_SEQUENCE => l.max_sequence(),
        _ => 0,
    }) as f64
}

/// The node id of `datacenter` + `worker` (each already within its field's range).
///
/// # Safety
/// `layout` is an address from `layout_*` or `gen_fact`.
#[wasm_bindgen]
pub unsafe fn node_from(layout: *const Layout, datacenter: f64, worker: f64) -> f64 {
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    match unsafe { &*layout }.node_from(datacenter as u64, worker as u64) {
        Ok(node) => node as f64,
        Err(e) => {
            fail_range(e);
            -1.0
        }
    }
}

/// Decodes `id` into the number buffer: time (Unix ms), node, datacenter, worker, sequence.
/// Returns [`DECODED_SPLIT`] for a split layout, plus [`DECODED_SMALL`] when the layout's
/// node and sequence fields fit in 31 bits (JS then keeps them as small integers, which
/// it stores without allocating); or -1 with the error recorded.
///
/// # Safety
/// `layout` is an address from `layout_*` or `gen_fact`.
#[wasm_bindgen]
pub unsafe fn decode(layout: *const Layout, id: i64) -> i32 {
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    let l = unsafe { &*layout };
    match l.decode(id as u64) {
        Ok(p) => {
            let num = &mut io::io().num;
            num[0] = p.time_ms as f64;
            num[1] = p.node as f64;
            num[4] = p.sequence as f64;
            let mut kind = 0;
            if l.is_split() {
                num[2] = l.datacenter_of(p.node) as f64;
                num[3] = l.worker_of(p.node) as f64;
                kind |= DECODED_SPLIT;
            }
            if l.node_bits() <= 31 && l.sequence_bits() <= 31 {
                kind |= DECODED_SMALL;
            }
            kind
        }
        Err(e) => {
            fail_range(e);
            -1
        }
    }
}

/// The ID of these parts (each an integer already checked against 0..2^53), or -1 with
/// the error recorded.
///
/// # Safety
/// `layout` is an address from `layout_*` or `gen_fact`.
#[wasm_bindgen]
pub unsafe fn compose(layout: *const Layout, time_ms: f64, node: f64, sequence: f64) -> i64 {
    let parts = Parts {
        time_ms: time_ms as u64,
        node: node as u64,
        sequence: sequence as u64,
    };
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    id_result(unsafe { &*layout }.compose(parts), fail_range)
}

/// The smallest (`max` 0) or largest (`max` 1) ID any node makes in the tick of
/// `time_ms`, or -1 with the error recorded.
///
/// # Safety
/// `layout` is an address from `layout_*` or `gen_fact`.
#[wasm_bindgen]
pub unsafe fn id_at(layout: *const Layout, time_ms: f64, max: u32) -> i64 {
    // SAFETY: the caller's contract (a layout from `layout_preset` or `layout_custom`).
    let l = unsafe { &*layout };
    let ms = time_ms as u64;
    let id = if max == ID_AT_MIN {
        l.min_id_at(ms)
    } else {
        l.max_id_at(ms)
    };
    id_result(id, fail_range)
}

/// Writes the 13 Crockford base32 characters of `id` into the text buffer.
#[wasm_bindgen]
pub fn to_base32(id: i64) -> u32 {
    text_out(text::to_base32(id as u64).as_bytes())
}

/// Parses the base32 text of `len` bytes in the text buffer, or -1 with the error recorded.
#[wasm_bindgen]
pub fn from_base32(len: u32) -> i64 {
    id_result(text::parse_base32(text_in(len)), fail_parse)
}

/// Parses the decimal text of `len` bytes in the text buffer, or -1 with the error
/// recorded.
#[wasm_bindgen]
pub fn parse_decimal(len: u32) -> i64 {
    id_result(text::parse_decimal(text_in(len)), fail_parse)
}
