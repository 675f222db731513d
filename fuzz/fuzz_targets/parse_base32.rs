//! `text::parse_base32` against an independent model, and `to_base32` round trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::text::{BASE32, fuzz_form};

fuzz_target!(|data: &[u8]| fuzz_form(&BASE32, data));
