//! The `robots` target: see `robotsieve_testkit::fuzz_checks::robots` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| robotsieve_testkit::fuzz_checks::robots(data));
