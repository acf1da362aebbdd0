//! The `artifact_file` target: see `robotsieve_testkit::fuzz_checks::artifact_file` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| robotsieve_testkit::fuzz_checks::artifact_file(data));
