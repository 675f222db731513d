//! The shared vectors in tests/vectors/*.json, written by an independent implementation
//! (tests/vectors/generate.py): the core must agree with every one of them.

// In wasm32 (wasm/core-tests) the tests run under wasm-bindgen-test.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use serde_json::Value;
#[cfg(feature = "objectid")]
use snowdrift::ObjectId;
use snowdrift::text::{self, Format};
use snowdrift::{Layout, Order, ParseErrorKind, Parts};

fn load(name: &str) -> Value {
    // Built in, so the tests also run where there is no file system (wasm32).
    let text = match name {
        "ids.json" => include_str!("../../tests/vectors/ids.json"),
        "objectid.json" => include_str!("../../tests/vectors/objectid.json"),
        "text_errors.json" => include_str!("../../tests/vectors/text_errors.json"),
        _ => panic!("no vector file {name}"),
    };
    serde_json::from_str(text).expect("valid JSON")
}

fn num(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| v.as_str().expect("number or string").parse().expect("u64"))
}

fn form(name: &str) -> Format {
    Format::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .expect("known form")
}

#[test]
fn layouts_match_the_presets() {
    let v = load("ids.json");
    let layouts = v["layouts"].as_object().unwrap();
    assert_eq!(layouts.len(), Layout::PRESETS.len());
    for (name, l) in Layout::PRESETS {
        let j = &layouts[name];
        assert_eq!(num(&j["timeBits"]), u64::from(l.time_bits()), "{name}");
        assert_eq!(
            num(&j["datacenterBits"]),
            u64::from(l.datacenter_bits()),
            "{name}"
        );
        assert_eq!(num(&j["workerBits"]), u64::from(l.worker_bits()), "{name}");
        assert_eq!(num(&j["nodeBits"]), u64::from(l.node_bits()), "{name}");
        assert_eq!(
            num(&j["sequenceBits"]),
            u64::from(l.sequence_bits()),
            "{name}"
        );
        assert_eq!(num(&j["unitMs"]), u64::from(l.unit_ms()), "{name}");
        assert_eq!(num(&j["epochMs"]), l.epoch_ms(), "{name}");
        let order = match l.order() {
            Order::NodeThenSequence => "node-sequence",
            Order::SequenceThenNode => "sequence-node",
        };
        assert_eq!(j["order"], order, "{name}");
    }
}

#[test]
fn every_id_decodes_composes_and_formats_as_the_vectors_say() {
    let v = load("ids.json");
    let ids = v["ids"].as_array().unwrap();
    assert!(ids.len() >= 70);
    for case in ids {
        let layout = Layout::preset(case["layout"].as_str().unwrap()).unwrap();
        let id = num(&case["id"]);
        let parts = Parts {
            time_ms: num(&case["timeMs"]),
            node: num(&case["node"]),
            sequence: num(&case["sequence"]),
        };
        assert_eq!(layout.decode(id), Ok(parts), "{case}");
        assert_eq!(layout.compose(parts), Ok(id), "{case}");
        if layout.is_split() {
            assert_eq!(
                layout.datacenter_of(parts.node),
                num(&case["datacenter"]),
                "{case}"
            );
            assert_eq!(layout.worker_of(parts.node), num(&case["worker"]), "{case}");
            let node = layout.node_from(num(&case["datacenter"]), num(&case["worker"]));
            assert_eq!(node, Ok(parts.node));
        } else {
            assert!(case["datacenter"].is_null() && case["worker"].is_null());
        }
        for (name, expected) in case["text"].as_object().unwrap() {
            let f = form(name);
            assert_eq!(
                text::format(id, f).as_str(),
                expected.as_str().unwrap(),
                "{case}"
            );
            assert_eq!(text::parse(expected.as_str().unwrap(), f), Ok(id), "{case}");
        }
    }
}

#[test]
fn the_discord_documentation_id_is_in_the_vectors() {
    let v = load("ids.json");
    let found = v["ids"].as_array().unwrap().iter().any(|c| {
        c["id"] == "175928847299117063"
            && c["timeMs"] == 1_462_015_105_796u64
            && c["datacenter"] == 1
            && c["worker"] == 0
            && c["sequence"] == 7
    });
    assert!(found);
}

#[cfg(feature = "objectid")]
#[test]
fn objectids_match() {
    let v = load("objectid.json");
    for case in v.as_array().unwrap() {
        let hex = case["hex"].as_str().unwrap();
        let oid = ObjectId::parse(hex).unwrap();
        assert_eq!(u64::from(oid.timestamp()), num(&case["timestamp"]));
        assert_eq!(u64::from(oid.counter()), num(&case["counter"]));
        let process: String = oid.process().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(process, case["process"].as_str().unwrap());
        assert_eq!(oid.to_string(), hex);
    }
    assert_eq!(v[0]["hex"], "5c4a7fcc0ed0240001a79289");
    assert_eq!(v[0]["timestamp"], 1_548_386_252);
}

#[test]
fn parse_errors_match() {
    let v = load("text_errors.json");
    for case in v.as_array().unwrap() {
        let input = case["input"].as_str().unwrap();
        let err = text::parse(input, form(case["form"].as_str().unwrap())).unwrap_err();
        let kind = match err.kind() {
            ParseErrorKind::Empty => "empty",
            ParseErrorKind::InvalidChar => "invalid-char",
            ParseErrorKind::Overflow => "overflow",
            ParseErrorKind::WrongLength => "wrong-length",
            ParseErrorKind::TooLong => "too-long",
            _ => "other",
        };
        assert_eq!(kind, case["kind"], "{case}");
        assert_eq!(err.position() as u64, num(&case["position"]), "{case}");
        assert_eq!(err.to_string(), case["message"], "{case}");
        assert_eq!(err.message().as_str(), case["message"], "{case}");
    }
}

#[cfg(feature = "seal")]
fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[cfg(feature = "seal")]
#[test]
fn every_id_seals_and_opens_as_the_vectors_say() {
    let cases: Value =
        serde_json::from_str(include_str!("../../tests/vectors/sealed.json")).expect("valid JSON");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 150);
    for case in cases {
        let layout = Layout::preset(case["layout"].as_str().unwrap()).unwrap();
        let key = hex_bytes(case["key"].as_str().unwrap());
        let tweak = hex_bytes(case["tweak"].as_str().unwrap());
        let sealer = snowdrift::Sealer::new(&layout, &key, &tweak).unwrap();
        assert_eq!(u64::from(sealer.bits()), num(&case["bits"]), "{case}");
        let (id, sealed) = (num(&case["id"]), num(&case["sealed"]));
        assert_eq!(sealer.seal(id), Ok(sealed), "{case}");
        assert_eq!(sealer.open(sealed), Ok(id), "{case}");
        for form in ["base32", "base62"] {
            let text = case[form].as_str().unwrap();
            assert_eq!(text::format(sealed, self::form(form)).as_str(), text);
            assert_eq!(
                sealer.open(text::parse(text, self::form(form)).unwrap()),
                Ok(id)
            );
        }
    }
}
