//! `AtomicGenerator` under a scripted clock whose readings may be interrupted by handlers
//! taking IDs from the same generator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowdrift_fuzz::{drive, input::Input};

fuzz_target!(|input: Input| drive::atomic(input));
