//! `text::parse_base62` against an independent model, and `to_base62` round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::text::{BASE62, fuzz_form};

fuzz_target!(|data: &[u8]| fuzz_form(&BASE62, data));
