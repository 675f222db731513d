//! `ObjectId::parse` against an independent model; text and accessors of any 12 bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::text::fuzz_objectid;

fuzz_target!(|data: &[u8]| fuzz_objectid(data));
