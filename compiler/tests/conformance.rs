//! The conformance files of ../shared/conformance through the parser, group
//! selection and the per-rule matcher.

use robotsieve_compiler::conformance::{conformance_file, read_verdict_cases};
use robotsieve_compiler::{Agent, Group, RobotsTxt};
use robotsieve_engine::url::PathMode;

fn run_file(name: &str) {
    let Some(path) = conformance_file(name) else {
        eprintln!("skipped: ../shared/conformance/{name} is absent");
        return;
    };
    let cases = read_verdict_cases(&path).unwrap();
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for case in &cases {
        let agent = Agent::from_raw_tokens(&case.agents);
        let robots = RobotsTxt::parse(&case.body);
        let group = Group::select(&robots, &agent);
        for (mode, expected) in [(PathMode::Raw, case.allowed), (PathMode::Escaped, case.allowed_escaped)] {
            let got = group.decide(&mode.path_of(case.url.as_bytes())).allowed();
            if got != expected {
                failures.push(format!("{} ({mode:?}): expected allowed={expected}, got {got}", case.id));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    eprintln!("{name}: {} cases passed in both URL modes", cases.len());
}

#[test]
fn robots_jsonl() {
    run_file("robots.jsonl");
}

#[test]
fn google_spec_test_jsonl() {
    run_file("google-spec-test.jsonl");
}
