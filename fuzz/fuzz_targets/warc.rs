//! The `warc` target: see `robotsieve_testkit::fuzz_checks::warc` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| robotsieve_testkit::fuzz_checks::warc(data));
