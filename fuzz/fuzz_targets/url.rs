//! The `url` target: see `robotsieve_testkit::fuzz_checks::url` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| robotsieve_testkit::fuzz_checks::url(data));
