//! Tests of the binding itself, run inside wasm in Node (`tests/node.rs`) and in headless
//! Chromium (`tests/browser.rs`): the exported functions and classes called from Rust,
//! against the shared vectors, with JS values in and out.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Reflect, JSON};
use snowdrift_wasm::{compose, decode, from_base32, to_base32, ObjectId, Snowdrift};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

const IDS: &str = include_str!("../../../tests/vectors/ids.json");

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap()
}

fn object(json: &str) -> JsValue {
    JSON::parse(json).unwrap()
}

fn message(e: &JsValue) -> String {
    get(e, "message").as_string().unwrap()
}

fn bigint(decimal: &str) -> JsValue {
    js_sys::BigInt::new(&JsValue::from_str(decimal))
        .unwrap()
        .into()
}

#[wasm_bindgen_test]
fn every_vector_decodes_composes_and_formats() {
    let vectors = object(IDS);
    let ids: js_sys::Array = get(&vectors, "ids").into();
    assert!(ids.length() > 0);
    for v in ids.iter() {
        let id = bigint(&get(&v, "id").as_string().unwrap());
        let layout = get(&v, "layout");
        let parts = decode(id.clone(), layout.clone()).unwrap();
        assert_eq!(get(&parts, "timestampMs"), get(&v, "timeMs"));
        assert_eq!(get(&parts, "node"), get(&v, "node"));
        assert_eq!(get(&parts, "sequence"), get(&v, "sequence"));
        let dc = get(&v, "datacenter");
        let expected_dc = if dc.is_null() { JsValue::UNDEFINED } else { dc };
        assert_eq!(get(&parts, "datacenter"), expected_dc);
        let back = compose(parts, layout).unwrap();
        assert_eq!(JsValue::from(back), id);
        let text = get(&get(&v, "text"), "base32").as_string().unwrap();
        assert_eq!(to_base32(id.clone()).unwrap().as_string().unwrap(), text);
        assert_eq!(
            JsValue::from(from_base32(JsValue::from_str(&text)).unwrap()),
            id
        );
    }
}

#[wasm_bindgen_test]
fn bad_input_becomes_type_and_range_errors_with_the_core_message() {
    let e = Snowdrift::new(object(r#"{"node": 1024}"#)).err().unwrap();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    assert!(message(&e).contains("0..=1023"), "{}", message(&e));
    let e = Snowdrift::new(object(r#"{"node": "1"}"#)).err().unwrap();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    let e = decode(JsValue::from_f64(5.0), JsValue::UNDEFINED).unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    let e = decode(bigint("18446744073709551616"), JsValue::UNDEFINED).unwrap_err();
    assert!(e.is_instance_of::<js_sys::RangeError>());
    let e = from_base32(JsValue::from_str("0000000000!00")).unwrap_err();
    assert_eq!(
        message(&e),
        "invalid base32 id \"0000000000!00\": invalid character '!' at position 10"
    );
    let e = Snowdrift::new(object(
        r#"{"layout": {"timeBits": 41, "nodeBits": 12, "sequenceBits": 12, "epochMs": 0}}"#,
    ))
    .err()
    .unwrap();
    assert_eq!(
        message(&e),
        "invalid layout: the fields take 65 bits (max 64)"
    );
}

#[wasm_bindgen_test]
fn a_js_clock_drives_the_generator_and_fail_reports_the_step() {
    let now = Rc::new(Cell::new(1.75e12));
    let reading = now.clone();
    let clock = Closure::<dyn Fn() -> f64>::new(move || reading.get());
    let options = object(r#"{"onClockBackwards": "fail", "node": 5}"#);
    Reflect::set(&options, &"clock".into(), clock.as_ref()).unwrap();
    let mut gen = Snowdrift::new(options).unwrap();
    let a = gen.next().unwrap();
    let b = gen.next().unwrap();
    assert_eq!(b, a + 1);
    let parts = gen.decode(JsValue::from(a)).unwrap();
    assert_eq!(get(&parts, "timestampMs"), JsValue::from_f64(1.75e12));
    assert_eq!(get(&parts, "node"), JsValue::from_f64(5.0));
    now.set(1.75e12 - 37.0);
    let e = gen.next().unwrap_err();
    assert!(!e.is_instance_of::<js_sys::RangeError>() && e.is_instance_of::<js_sys::Error>());
    assert_eq!(message(&e), "clock moved backwards by 37 ms (limit 0 ms)");
    now.set(1.75e12);
    assert_eq!(gen.next().unwrap(), b + 1);
}

#[wasm_bindgen_test]
fn the_default_clock_and_batches_give_increasing_ids() {
    let mut gen = Snowdrift::new(JsValue::UNDEFINED).unwrap();
    let mut last = gen.next().unwrap();
    let batch = gen.next_batch(JsValue::from_f64(10_000.0)).unwrap();
    assert_eq!(batch.len(), 10_000);
    for id in batch {
        assert!(id > last);
        last = id;
    }
    let s = gen.next_string().unwrap().as_string().unwrap();
    assert!(s.parse::<u64>().unwrap() > last);
}

#[wasm_bindgen_test]
fn object_ids_use_crypto_random_process_bytes() {
    let a = ObjectId::generate().to_string().as_string().unwrap();
    let b = ObjectId::generate().to_string().as_string().unwrap();
    assert_eq!(a.len(), 24);
    assert_eq!(a[8..18], b[8..18]);
    let counter = |s: &str| u32::from_str_radix(&s[18..], 16).unwrap();
    assert_eq!(counter(&b), (counter(&a) + 1) & 0xff_ffff);
    let parsed = ObjectId::parse(JsValue::from_str("5c4a7fcc0ed0240001a79289")).unwrap();
    assert_eq!(parsed.timestamp(), 1_548_386_252);
}
