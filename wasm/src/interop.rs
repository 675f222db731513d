//! Every conversion between JS values and core types, and every error, in one place.
//!
//! IDs cross as `bigint` (or, going in, a decimal string); small integers cross as
//! `number` and must be exact integers in range. Wrong types are `TypeError`s, values out
//! of range `RangeError`s, clock and generator failures plain `Error`s, each with the core's
//! message text. Messages are built by concatenation: no float formatting in the wasm.

use alloc::string::{String, ToString};

use js_sys::{Function, Object, Reflect};
use snowdrift::{text, Error, Layout, LayoutError, Order, ParseError, Parts, Policy, RangeError};
use wasm_bindgen::prelude::*;

// The JS half of the conversions: building objects and strings costs one call into JS
// instead of one per property or a TextDecoder, and an ID argument is checked in one call.
#[wasm_bindgen(inline_js = r#"
export function parts(t, n, s) {
  return { timestampMs: t, date: new Date(t), node: n, sequence: s };
}
export function splitParts(t, n, d, w, s) {
  return { timestampMs: t, date: new Date(t), node: n, datacenter: d, worker: w, sequence: s };
}
export function idBits(v) {
  return typeof v === "bigint" && v >= 0n && v <= 0xffffffffffffffffn ? v : 0xffffffffffffffffn;
}
export function isMaxId(v) {
  return v === 0xffffffffffffffffn;
}
const char = String.fromCharCode;
export function ascii(n, a, b, c, d, e, f) {
  return char(a & 255, a >>> 8 & 255, a >>> 16 & 255, a >>> 24, b & 255, b >>> 8 & 255,
    b >>> 16 & 255, b >>> 24, c & 255, c >>> 8 & 255, c >>> 16 & 255, c >>> 24, d & 255,
    d >>> 8 & 255, d >>> 16 & 255, d >>> 24, e & 255, e >>> 8 & 255, e >>> 16 & 255,
    e >>> 24, f & 255, f >>> 8 & 255, f >>> 16 & 255, f >>> 24).slice(0, n);
}
export function decimal(id) {
  return String(id);
}
export function describe(v) {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return v + "n";
  try { return String(v); } catch { return Object.prototype.toString.call(v); }
}
export function typeName(v) {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}
"#)]
extern "C" {
    fn parts(time_ms: f64, node: f64, sequence: f64) -> JsValue;
    #[wasm_bindgen(js_name = splitParts)]
    fn split_parts(time_ms: f64, node: f64, datacenter: f64, worker: f64, sequence: f64)
        -> JsValue;
    /// The bigint in 0..=2^64-1, or 2^64-1 for anything else.
    #[wasm_bindgen(js_name = idBits)]
    fn id_bits(v: &JsValue) -> u64;
    #[wasm_bindgen(js_name = isMaxId)]
    fn is_max_id(v: &JsValue) -> bool;
    /// A string of `n` ASCII bytes packed little-endian into the words.
    fn ascii(n: u32, w0: u32, w1: u32, w2: u32, w3: u32, w4: u32, w5: u32) -> JsValue;
    /// The decimal string of an ID (the engine's BigInt printing beats dividing in wasm).
    fn decimal(id: u64) -> JsValue;
    /// A value as a user would write it, for messages.
    fn describe(v: &JsValue) -> String;
    #[wasm_bindgen(js_name = typeName)]
    fn type_name(v: &JsValue) -> String;
}

/// An ID as a decimal string for JS.
pub fn decimal_to_js(id: u64) -> JsValue {
    decimal(id)
}

/// An ASCII string (at most 24 bytes, as every text form of an ID is) for JS.
pub fn ascii_to_js(text: &str) -> JsValue {
    let mut w = [0u32; 6];
    for (i, b) in text.bytes().take(24).enumerate() {
        w[i / 4] |= u32::from(b) << (8 * (i % 4));
    }
    ascii(
        text.len().min(24) as u32,
        w[0],
        w[1],
        w[2],
        w[3],
        w[4],
        w[5],
    )
}

/// The result of every exported function.
pub type JsResult<T> = Result<T, JsValue>;

pub fn type_error(msg: &str) -> JsValue {
    js_sys::TypeError::new(msg).into()
}

pub fn range_error(msg: &str) -> JsValue {
    js_sys::RangeError::new(msg).into()
}

/// `"<what> must be <expected>, got <type> <value>"` as a TypeError.
pub fn wrong_type(what: &str, expected: &str, v: &JsValue) -> JsValue {
    let mut msg = String::new();
    for piece in [what, " must be ", expected, ", got ", &type_name(v), " "] {
        msg.push_str(piece);
    }
    msg.push_str(&describe(v));
    type_error(&msg)
}

/// A generator or clock failure: `RangeError` for a time outside the layout or an ID that
/// does not fit, `Error` for everything the clock did.
pub fn gen_error(e: Error) -> JsValue {
    let msg = e.to_string();
    match e {
        Error::Time(_) | Error::Range(_) => range_error(&msg),
        _ => js_sys::Error::new(&msg).into(),
    }
}

pub fn range_of(e: RangeError) -> JsValue {
    range_error(&e.to_string())
}

fn layout_error(e: LayoutError) -> JsValue {
    let mut msg = String::from("invalid layout: ");
    msg.push_str(&e.to_string());
    range_error(&msg)
}

pub fn parse_error(form: &str, input: &str, e: ParseError) -> JsValue {
    let mut msg = String::from("invalid ");
    msg.push_str(form);
    msg.push_str(" id ");
    msg.push_str(&describe(&JsValue::from_str(input)));
    msg.push_str(": ");
    msg.push_str(&e.to_string());
    range_error(&msg)
}

/// An ID argument: a `bigint` in 0..=2^64-1, or its decimal string.
pub fn id_arg(what: &str, v: &JsValue) -> JsResult<u64> {
    let bits = id_bits(v);
    if bits != u64::MAX || is_max_id(v) {
        return Ok(bits);
    }
    if v.is_bigint() {
        return u64::try_from(v.clone()).map_err(|_| {
            let mut msg = String::from(what);
            msg.push(' ');
            msg.push_str(&describe(v));
            msg.push_str(" is outside 0..=18446744073709551615");
            range_error(&msg)
        });
    }
    if let Some(s) = v.as_string() {
        return text::parse_decimal(&s).map_err(|e| parse_error("decimal", &s, e));
    }
    Err(wrong_type(what, "a bigint or a decimal string", v))
}

/// A string argument.
pub fn str_arg(what: &str, v: &JsValue) -> JsResult<String> {
    v.as_string().ok_or_else(|| wrong_type(what, "a string", v))
}

/// An integer `number` in `min..=max` (at most 2^53).
pub fn int_arg(what: &str, v: &JsValue, min: u64, max: u64) -> JsResult<u64> {
    let Some(x) = v.as_f64() else {
        return Err(wrong_type(what, "a number", v));
    };
    // NaN fails the comparisons; for a finite `x`, `as i64` drops any fraction.
    let fraction = x.is_finite() && (x as i64) as f64 != x;
    if x >= min as f64 && x <= max as f64 && !fraction {
        return Ok(x as u64);
    }
    let mut msg = String::from(what);
    msg.push(' ');
    msg.push_str(&describe(v));
    msg.push_str(if fraction {
        " is not an integer (allowed "
    } else {
        " is outside the allowed range "
    });
    msg.push_str(&text::to_decimal(min));
    msg.push_str("..=");
    msg.push_str(&text::to_decimal(max));
    if fraction {
        msg.push(')');
    }
    Err(range_error(&msg))
}

/// The largest integer a `number` holds exactly.
pub const MAX_SAFE: u64 = (1 << 53) - 1;

/// Reads `obj[key]` (undefined when absent).
pub fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// An optional `number` field of an options object.
pub fn opt_int(obj: &JsValue, key: &str, min: u64, max: u64) -> JsResult<Option<u64>> {
    let v = get(obj, key);
    if v.is_undefined() {
        return Ok(None);
    }
    int_arg(key, &v, min, max).map(Some)
}

/// Rejects keys of an options object that are not in `known` (catches typos).
pub fn check_keys(what: &str, obj: &JsValue, known: &[&str]) -> JsResult<()> {
    if !obj.is_object() || obj.is_function() || js_sys::Array::is_array(obj) {
        return Err(wrong_type(what, "an object", obj));
    }
    for key in Object::keys(obj.unchecked_ref::<Object>()).iter() {
        let name = key.as_string().unwrap_or_default();
        if !known.contains(&name.as_str()) {
            let mut msg = String::from("unknown ");
            msg.push_str(what);
            msg.push_str(" option ");
            msg.push_str(&describe(&key));
            msg.push_str(" (allowed: ");
            for (i, k) in known.iter().enumerate() {
                if i > 0 {
                    msg.push_str(", ");
                }
                msg.push_str(k);
            }
            msg.push(')');
            return Err(range_error(&msg));
        }
    }
    Ok(())
}

const PRESET_NAMES: &str =
    "\"default\", \"twitter\", \"discord\", \"sonyflake\", \"instagram\", \"baidu\"";

/// A layout argument: a preset name, a `{ timeBits, ... }` object, or undefined (the
/// default layout).
pub fn layout_arg(v: &JsValue) -> JsResult<Layout> {
    if v.is_undefined() {
        return Ok(Layout::DEFAULT);
    }
    if let Some(name) = v.as_string() {
        return Layout::preset(&name).ok_or_else(|| {
            let mut msg = String::from("unknown layout ");
            msg.push_str(&describe(v));
            msg.push_str(" (allowed: ");
            msg.push_str(PRESET_NAMES);
            msg.push_str(", or a { timeBits, sequenceBits, epochMs, ... } object)");
            range_error(&msg)
        });
    }
    if !v.is_object() {
        return Err(wrong_type("layout", "a preset name or a layout object", v));
    }
    check_keys(
        "layout",
        v,
        &[
            "timeBits",
            "nodeBits",
            "datacenterBits",
            "workerBits",
            "sequenceBits",
            "unitMs",
            "epochMs",
            "order",
        ],
    )?;
    let required = |key: &str| {
        let f = get(v, key);
        if f.is_undefined() {
            let mut msg = String::from("layout.");
            msg.push_str(key);
            msg.push_str(" is required");
            return Err(type_error(&msg));
        }
        Ok(f)
    };
    let bits = |key: &str| opt_int(v, key, 0, 64).map(|b| b.map(|b| b as u32));
    let time_bits = int_arg("timeBits", &required("timeBits")?, 0, 64)? as u32;
    let sequence_bits = int_arg("sequenceBits", &required("sequenceBits")?, 0, 64)? as u32;
    let epoch_ms = int_arg("epochMs", &required("epochMs")?, 0, MAX_SAFE)?;
    let mut b = Layout::builder()
        .time_bits(time_bits)
        .sequence_bits(sequence_bits)
        .epoch_ms(epoch_ms);
    match (
        bits("nodeBits")?,
        bits("datacenterBits")?,
        bits("workerBits")?,
    ) {
        (Some(n), None, None) => b = b.node_bits(n),
        (n, d, w) => {
            let (d, w) = (d.unwrap_or(0), w.unwrap_or(0));
            // A full description (as in the shared vectors) gives all three: they must agree.
            if n.is_some_and(|n| n != d + w) {
                return Err(range_error(
                    "layout.nodeBits must equal datacenterBits + workerBits when all are given",
                ));
            }
            b = b.datacenter_bits(d).worker_bits(w)
        }
    }
    if let Some(unit) = opt_int(v, "unitMs", 1, u64::from(u32::MAX))? {
        b = b.unit_ms(unit as u32);
    }
    let order = get(v, "order");
    if !order.is_undefined() {
        b = b.order(match str_arg("layout.order", &order)?.as_str() {
            "node-sequence" => Order::NodeThenSequence,
            "sequence-node" => Order::SequenceThenNode,
            _ => {
                let mut msg = String::from("layout.order ");
                msg.push_str(&describe(&order));
                msg.push_str(" is not one of \"node-sequence\", \"sequence-node\"");
                return Err(range_error(&msg));
            }
        });
    }
    b.build().map_err(layout_error)
}

/// The node id from `node`, or from `datacenter` + `worker` on a split layout.
pub fn node_arg(options: &JsValue, layout: &Layout) -> JsResult<u64> {
    let node = get(options, "node");
    let dc = get(options, "datacenter");
    let worker = get(options, "worker");
    if dc.is_undefined() && worker.is_undefined() {
        if node.is_undefined() {
            return Ok(0);
        }
        return int_arg("node", &node, 0, layout.max_node());
    }
    if !layout.is_split() {
        return Err(range_error(
            "this layout has no datacenter/worker split: give node instead",
        ));
    }
    let field = |key: &str, v: &JsValue, max: u64| {
        if v.is_undefined() {
            Ok(0)
        } else {
            int_arg(key, v, 0, max)
        }
    };
    let split = layout
        .node_from(
            field("datacenter", &dc, layout.max_datacenter())?,
            field("worker", &worker, layout.max_worker())?,
        )
        .map_err(range_of)?;
    // A decoded Parts object carries all three: they must agree.
    if !node.is_undefined() && int_arg("node", &node, 0, MAX_SAFE)? != split {
        let mut msg = String::from("node ");
        msg.push_str(&describe(&node));
        msg.push_str(" does not match datacenter + worker (node ");
        msg.push_str(&text::to_decimal(split));
        msg.push(')');
        return Err(range_error(&msg));
    }
    Ok(split)
}

/// The default for `onClockBackwards`. See the package README for why.
pub const DEFAULT_MAX_AHEAD_MS: u64 = 1000;
/// The default bound of the `"wait"` policy, as the core's default policy.
pub const DEFAULT_MAX_WAIT_MS: u64 = 100;

/// `onClockBackwards` with `maxWaitMs` / `maxAheadMs`. Default: borrow, 1 s ahead.
pub fn policy_arg(options: &JsValue) -> JsResult<Policy> {
    let name = get(options, "onClockBackwards");
    let name = if name.is_undefined() {
        String::from("borrow")
    } else {
        str_arg("onClockBackwards", &name)?
    };
    let max = u64::from(u32::MAX);
    let wait = opt_int(options, "maxWaitMs", 0, max)?;
    let ahead = opt_int(options, "maxAheadMs", 0, max)?;
    let misplaced = |key: &str, policy: &str| {
        let mut msg = String::from(key);
        msg.push_str(" applies only to onClockBackwards: \"");
        msg.push_str(policy);
        msg.push('"');
        Err(range_error(&msg))
    };
    match name.as_str() {
        "fail" | "wait" if ahead.is_some() => misplaced("maxAheadMs", "borrow"),
        "fail" | "borrow" if wait.is_some() => misplaced("maxWaitMs", "wait"),
        "fail" => Ok(Policy::Fail),
        "wait" => Ok(Policy::Wait {
            max_wait_ms: wait.unwrap_or(DEFAULT_MAX_WAIT_MS) as u32,
        }),
        "borrow" => Ok(Policy::Borrow {
            max_ahead_ms: ahead.unwrap_or(DEFAULT_MAX_AHEAD_MS) as u32,
        }),
        _ => {
            let mut msg = String::from("onClockBackwards ");
            msg.push_str(&describe(&JsValue::from_str(&name)));
            msg.push_str(" is not one of \"fail\", \"wait\", \"borrow\"");
            Err(range_error(&msg))
        }
    }
}

/// The `clock` option: a function or undefined.
pub fn clock_arg(options: &JsValue) -> JsResult<Option<Function>> {
    let clock = get(options, "clock");
    if clock.is_undefined() {
        return Ok(None);
    }
    clock
        .dyn_into::<Function>()
        .map(Some)
        .map_err(|v| wrong_type("clock", "a function returning Unix milliseconds", &v))
}

/// A Parts object for JS: `{ timestampMs, date, node, datacenter?, worker?, sequence }`.
pub fn parts_to_js(layout: &Layout, p: Parts) -> JsValue {
    let t = p.time_ms as f64;
    if layout.is_split() {
        split_parts(
            t,
            p.node as f64,
            layout.datacenter_of(p.node) as f64,
            layout.worker_of(p.node) as f64,
            p.sequence as f64,
        )
    } else {
        parts(t, p.node as f64, p.sequence as f64)
    }
}

/// A Parts object from JS: `{ timestampMs, node | datacenter + worker, sequence }`.
pub fn parts_from_js(layout: &Layout, v: &JsValue) -> JsResult<Parts> {
    if !v.is_object() {
        return Err(wrong_type("parts", "an object", v));
    }
    let mut time = get(v, "timestampMs");
    if time.is_undefined() {
        let date = get(v, "date");
        if let Some(d) = date.dyn_ref::<js_sys::Date>() {
            time = JsValue::from_f64(d.get_time());
        }
    }
    if time.is_undefined() {
        return Err(type_error("parts.timestampMs is required"));
    }
    let time_ms = int_arg("timestampMs", &time, 0, MAX_SAFE)?;
    let sequence = {
        let s = get(v, "sequence");
        if s.is_undefined() {
            0
        } else {
            int_arg("sequence", &s, 0, MAX_SAFE)?
        }
    };
    let node = node_arg(v, layout)?;
    Ok(Parts {
        time_ms,
        node,
        sequence,
    })
}
