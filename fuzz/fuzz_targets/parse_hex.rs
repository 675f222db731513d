//! `text::parse_hex` against an independent model, and `to_hex` round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::text::{HEX, fuzz_form};

fuzz_target!(|data: &[u8]| fuzz_form(&HEX, data));
