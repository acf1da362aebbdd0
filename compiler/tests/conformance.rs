//! The conformance files of ../shared/conformance through the parser, group
//! selection and the per-rule matcher.

use robotsieve_compiler::conformance::check_verdict_file;
use robotsieve_compiler::{Agent, Group, RobotsTxt};

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
