//! The regex oracle (regex-automata's DFA per pattern, precedence on top)
//! against the per-rule oracle (`Group::decide`) and the compiled automaton:
//! first against Google's verdicts itself (the conformance files), then
//! three ways on the conformance cases and on the real-world robots files,
//! with paths made from each group's own patterns.

use robotsieve_compiler::automaton::{compile, Budget, BuildOptions};
use robotsieve_core::url::PathMode;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_testkit::conformance::{check_verdict_file, conformance_file, read_verdict_cases};
use robotsieve_testkit::differential::{paths_for_group, Rng, TINY};
use robotsieve_testkit::realworld_robots_files;
use robotsieve_testkit::regex_oracle::{regex_disagreements, RegexOracle};

fn group_of(body: &str, agent: &str) -> Group {
    Group::select(&RobotsTxt::parse(body.as_bytes()), &Agent::parse(agent).unwrap())
}

/// Google's own examples (developers.google.com/search/docs/crawling-indexing/robots/robots_txt)
/// through the regex oracle alone: it reads patterns and precedence right.
#[test]
fn the_regex_oracle_reads_googles_examples() {
    let cases: &[(&str, &str, bool)] = &[
        ("Disallow: /fish*.php", "/fish.php", false),
        ("Disallow: /fish*.php", "/fishheads/catfish.php?parameters", false),
        ("Disallow: /fish*.php", "/Fish.PHP", true),
        ("Disallow: /*.php$", "/filename.php", false),
        ("Disallow: /*.php$", "/filename.php?parameters", true),
        ("Disallow: /*.php$", "/filename.php5", true),
        ("Disallow: /fish", "/fish/salmon.html", false),
        ("Disallow: /fish", "/catfish", true),
        ("Disallow: /fish/", "/fish", true),
        ("Disallow: /a$b", "/a$b/c", false),
        ("Disallow: /a$b", "/a", true),
        ("Disallow: /$", "/", false),
        ("Disallow: /$", "/x", true),
        ("Allow: /p\nDisallow: /", "/page", true),
        ("Allow: /folder\nDisallow: /folder", "/folder/page", true),
        ("Allow: /page\nDisallow: /*.htm", "/page.htm", false),
        ("Allow: /$\nDisallow: /", "/", true),
        ("Allow: /$\nDisallow: /", "/page.htm", false),
    ];
    for (rules, path, allowed) in cases {
        let group = group_of(&format!("User-agent: *\n{rules}\n"), "googlebot");
        let decision = RegexOracle::new(&group).unwrap().decide(path.as_bytes());
        assert_eq!(decision.allowed, *allowed, "{rules:?} on {path}");
    }
}

/// Every verdict case of a conformance file through the regex oracle, in
/// both URL modes.
fn conformance_verdicts(name: &str) {
    check_verdict_file(name, "the regex oracle", |case| {
        let group = Group::select(&RobotsTxt::parse(&case.body), &Agent::from_raw_tokens(&case.agents));
        move |path: &[u8]| RegexOracle::new(&group).unwrap().decide(path).allowed
    });
}

#[test]
fn conformance_robots_jsonl_through_the_regex_oracle() {
    conformance_verdicts("robots.jsonl");
}

#[test]
fn conformance_google_spec_test_jsonl_through_the_regex_oracle() {
    conformance_verdicts("google-spec-test.jsonl");
}

/// The three readings on every case of a conformance file: its URL in both
/// modes and paths made from its group's patterns, the automaton compiled
/// with and without explain and with the default and the tiny budget.
fn conformance_three_ways(name: &str) {
    let Some(path) = conformance_file(name) else {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true but {name} is absent");
        eprintln!("skipped: ../shared/conformance/{name} is absent");
        return;
    };
    let cases = read_verdict_cases(&path).unwrap();
    let mut bad = Vec::new();
    let mut checked = 0;
    for (n, case) in cases.iter().enumerate() {
        let group = Group::select(&RobotsTxt::parse(&case.body), &Agent::from_raw_tokens(&case.agents));
        let mut paths = paths_for_group(&group, 8, &mut Rng(n as u64 + 1));
        paths.extend([PathMode::Raw, PathMode::Escaped].map(|m| m.path_of(case.url.as_bytes()).into_owned()));
        for (explain, budget) in [(false, Budget::default()), (true, Budget::default()), (true, TINY)] {
            let compiled = compile(&group, &BuildOptions { explain, budget });
            checked += paths.len();
            let found = regex_disagreements(&group, Some((&compiled, explain)), &paths).unwrap();
            bad.extend(found.into_iter().take(3).map(|d| format!("{} (explain={explain}): {d}", case.id)));
        }
    }
    eprintln!("{name}: {} cases, {checked} path checks, three ways", cases.len());
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad[..bad.len().min(20)].join("\n"));
}

#[test]
fn conformance_robots_jsonl_three_ways() {
    conformance_three_ways("robots.jsonl");
}

#[test]
fn conformance_google_spec_test_jsonl_three_ways() {
    conformance_three_ways("google-spec-test.jsonl");
}

/// The real-world files selected by `take(index, path)`: googlebot's and a
/// `*`-only bot's groups, paths from 40 of each group's rules, the automaton
/// in verdict mode and, for every fourth file, in explain mode.
fn realworld(take: impl Fn(usize, &std::path::Path) -> bool) {
    let Some(files) = realworld_robots_files() else {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true but realworld/robots is absent");
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let agents = [Agent::parse("googlebot").unwrap(), Agent::parse("mybot").unwrap()];
    let (mut used, mut checked, mut rules) = (0, 0, 0);
    let mut bad = Vec::new();
    for (n, file) in files.iter().enumerate().filter(|(n, f)| take(*n, f)) {
        used += 1;
        let body = std::fs::read(file).unwrap();
        let robots = RobotsTxt::parse(&body);
        for (a, agent) in agents.iter().enumerate() {
            let group = Group::select(&robots, agent);
            rules += group.rules.len();
            let paths = paths_for_group(&group, 40, &mut Rng(n as u64 * 2 + a as u64 + 1));
            let explain = n % 4 == a;
            let compiled = compile(&group, &BuildOptions { explain, ..BuildOptions::default() });
            checked += paths.len();
            let found = regex_disagreements(&group, Some((&compiled, explain)), &paths).unwrap();
            bad.extend(found.into_iter().take(3).map(|d| format!("{} ({agent}): {d}", file.display())));
        }
    }
    eprintln!("realworld: {used} files, {rules} rules, {checked} paths checked three ways");
    assert!(used > 0, "no file selected");
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad[..bad.len().min(20)].join("\n"));
}

/// Every 40th file and every file of 200 KiB or more (the largest groups).
#[test]
fn realworld_sample_three_ways() {
    realworld(|n, file| n % 40 == 0 || std::fs::metadata(file).is_ok_and(|m| m.len() >= 200 << 10));
}

/// Every file of the corpus.
#[test]
#[ignore = "the whole corpus: run in release with --ignored"]
fn realworld_every_file_three_ways() {
    realworld(|_, _| true);
}
