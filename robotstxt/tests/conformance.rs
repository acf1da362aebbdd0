//! The conformance files of ../shared/conformance through the parser, group
//! selection and the per-rule matcher.

use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_testkit::conformance::check_verdict_file;

fn run_file(name: &str) {
    check_verdict_file(name, "the per-rule matcher", |case| {
        let group = Group::select(&RobotsTxt::parse(&case.body), &Agent::from_raw_tokens(&case.agents));
        move |path: &[u8]| group.decide(path).allowed()
    });
}

#[test]
fn robots_jsonl() {
    run_file("robots.jsonl");
}

#[test]
fn google_spec_test_jsonl() {
    run_file("google-spec-test.jsonl");
}

/// Content-Signal and Content-Usage lines never change a verdict: every
/// case again, with both lines after every line of its robots.txt (bodies
/// within 64 KiB of the 500 KiB cut are left as they are, since the added
/// bytes would move rules past it).
fn run_file_with_preferences(name: &str) {
    const EXTRA: &[u8] = b"Content-Usage: / train-ai=n, search=y\nContent-Signal: ai-train=no, search=yes\n";
    check_verdict_file(name, "the per-rule matcher with preference lines added", |case| {
        let mut body = case.body.clone();
        if body.len() + 64 * 1024 < robotsieve_robotstxt::parse::MAX_BODY_BYTES {
            body = Vec::with_capacity(case.body.len() * 2);
            for &b in &case.body {
                body.push(b);
                if b == b'\n' {
                    body.extend_from_slice(EXTRA);
                }
            }
        }
        let robots = RobotsTxt::parse(&body);
        let group = Group::select(&robots, &Agent::from_raw_tokens(&case.agents));
        move |path: &[u8]| group.decide(path).allowed()
    });
}

#[test]
fn robots_jsonl_with_preference_lines() {
    run_file_with_preferences("robots.jsonl");
}

#[test]
fn google_spec_test_jsonl_with_preference_lines() {
    run_file_with_preferences("google-spec-test.jsonl");
}
