//! `Sealer::open` of arbitrary text, as a public ID arrives: parsed in one of the text
//! forms under one of the presets with a key and tweak taken from the input. Whatever
//! the text, nothing panics; a value inside the layout's space opens to an ID that seals
//! back to it, and one outside is refused naming it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift::text::{self, Format};
use snowdrift::{Field, Layout, Sealer};

fuzz_target!(|data: &[u8]| {
    let [choice, key_len, tweak_len, rest @ ..] = data else {
        return;
    };
    let (_, layout) = Layout::PRESETS[usize::from(*choice) % Layout::PRESETS.len()];
    let form = Format::ALL[usize::from(*choice / 8) % Format::ALL.len()];
    let key_len = [16, 24, 32][usize::from(*key_len) % 3];
    let (key, rest) = rest.split_at(key_len.min(rest.len()));
    let mut key = key.to_vec();
    key.resize(key_len, 0);
    let (tweak, text) = rest.split_at(usize::from(*tweak_len % 32).min(rest.len()));
    let sealer = Sealer::new(&layout, &key, tweak).expect("a key of an AES length");
    let text = String::from_utf8_lossy(text);
    let Ok(value) = text::parse(&text, form) else {
        return;
    };
    match sealer.open(value) {
        Ok(id) => {
            assert!(id <= sealer.max());
            assert_eq!(sealer.seal(id), Ok(value));
            let public = text::format(value, form);
            assert_eq!(text::parse(&public, form), Ok(value));
        }
        Err(e) => {
            assert!(value > sealer.max());
            assert_eq!((e.field(), e.value()), (Some(Field::Sealed), Some(value)));
        }
    }
});
