//! The free functions: decode, compose, text forms and ID ranges for a point in time.

use snowdrift::{text, Layout};
use wasm_bindgen::prelude::*;

use crate::interop::{self, JsResult};

/// The parts of `id` under `layout`.
pub fn decode_with(layout: &Layout, id: &JsValue) -> JsResult<JsValue> {
    let id = interop::id_arg("id", id)?;
    let parts = layout.decode(id).map_err(interop::range_of)?;
    Ok(interop::parts_to_js(layout, parts))
}

/// `decode(id, layout?)`: the parts of an ID (default layout unless given).
#[wasm_bindgen]
pub fn decode(id: JsValue, layout: JsValue) -> JsResult<JsValue> {
    decode_with(&interop::layout_arg(&layout)?, &id)
}

/// `compose(parts, layout?)`: the ID made of these parts.
#[wasm_bindgen]
pub fn compose(parts: JsValue, layout: JsValue) -> JsResult<u64> {
    let layout = interop::layout_arg(&layout)?;
    let parts = interop::parts_from_js(&layout, &parts)?;
    layout.compose(parts).map_err(interop::range_of)
}

/// `toBase32(id)`: 13 Crockford base32 characters that sort like the number.
#[wasm_bindgen(js_name = toBase32)]
pub fn to_base32(id: JsValue) -> JsResult<JsValue> {
    let id = interop::id_arg("id", &id)?;
    Ok(interop::ascii_to_js(&text::to_base32(id)))
}

/// `fromBase32(text)`: the ID written as 13 Crockford base32 characters.
#[wasm_bindgen(js_name = fromBase32)]
pub fn from_base32(text: JsValue) -> JsResult<u64> {
    let s = interop::str_arg("text", &text)?;
    text::parse_base32(&s).map_err(|e| interop::parse_error("base32", &s, e))
}

/// `minIdAt(timeMs, layout?)`: the smallest ID any node makes in the tick of `timeMs`.
#[wasm_bindgen(js_name = minIdAt)]
pub fn min_id_at(time_ms: JsValue, layout: JsValue) -> JsResult<u64> {
    let layout = interop::layout_arg(&layout)?;
    let t = interop::int_arg("timeMs", &time_ms, 0, interop::MAX_SAFE)?;
    layout.min_id_at(t).map_err(interop::range_of)
}

/// `maxIdAt(timeMs, layout?)`: the largest ID any node makes in the tick of `timeMs`.
#[wasm_bindgen(js_name = maxIdAt)]
pub fn max_id_at(time_ms: JsValue, layout: JsValue) -> JsResult<u64> {
    let layout = interop::layout_arg(&layout)?;
    let t = interop::int_arg("timeMs", &time_ms, 0, interop::MAX_SAFE)?;
    layout.max_id_at(t).map_err(interop::range_of)
}
