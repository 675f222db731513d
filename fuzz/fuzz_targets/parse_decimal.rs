//! `text::parse_decimal` against an independent model, and `to_decimal` round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::text::{DECIMAL, fuzz_form};

fuzz_target!(|data: &[u8]| fuzz_form(&DECIMAL, data));
