//! `Generator` under every policy, driven by a scripted clock and call sequence.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::{drive, input::Input};

fuzz_target!(|input: Input| drive::generator(input));
