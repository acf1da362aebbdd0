//! The `artifact` target: see `robotsieve_testkit::fuzz_checks::artifact` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| robotsieve_testkit::fuzz_checks::artifact(data));
