//! The compiled matcher against the per-rule oracle `Group::decide`:
//! generated robots.txt files, pathological files, the real-world corpus and
//! the conformance cases, in verdict and explain mode, with the default budget
//! and with budgets small enough to force the split and the per-rule fallback.

use proptest::prelude::*;
use rayon::prelude::*;
use robotsieve_compiler::automaton::{compile, Budget, BuildOptions, PartKind};
use robotsieve_core::pattern;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_testkit::conformance::check_verdict_file;
use robotsieve_testkit::differential::{assert_agrees, disagreements, paths_for_group, Rng, TINY};
use robotsieve_testkit::realworld_robots_files;

fn options(explain: bool, budget: Budget) -> BuildOptions {
    BuildOptions { explain, budget }
}

/// Every way we compile in the differential tests.
fn all_options() -> [BuildOptions; 4] {
    [options(false, Budget::default()), options(true, Budget::default()), options(false, TINY), options(true, TINY)]
}

// ---------------------------------------------------------------- generated files

fn field() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "Allow",
        "allow",
        "Disallow",
        "disallow",
        "DISALLOW",
        "Dissallow",
        "Disallowed",
        "disalow",
    ])
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "/",
        "a",
        "b",
        "ab",
        "/a",
        "/b/",
        "x.html",
        "index.html",
        "index.htm",
        "%2f",
        "%2F",
        "%aa",
        "%AA",
        "é",
        "ü/",
        "*",
        "*",
        "$",
        "?",
        "=",
        "q",
        ".php",
        "~",
    ])
}

fn pattern_value() -> impl Strategy<Value = String> {
    (prop::collection::vec(piece(), 0..6), any::<bool>(), any::<bool>()).prop_map(|(pieces, slash, dollar)| {
        let mut value = String::new();
        if slash {
            value.push('/');
        }
        value.extend(pieces);
        if dollar {
            value.push('$');
        }
        value
    })
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (field(), pattern_value()).prop_map(|(f, v)| format!("{f}: {v}")),
        1 => prop::sample::select(vec!["User-agent: *", "user-agent: mybot", "User-Agent: Googlebot/2.1", "useragent: otherbot", "User-agent: MyBot"]).prop_map(String::from),
        1 => prop::sample::select(vec!["", "# comment", "Sitemap: https://x/s.xml", "Crawl-delay: 3"]).prop_map(String::from),
    ]
}

fn body() -> impl Strategy<Value = String> {
    (prop::sample::select(vec!["User-agent: *", "user-agent: mybot"]), prop::collection::vec(line(), 1..25))
        .prop_map(|(head, lines)| format!("{head}\n{}\n", lines.join("\n")))
}

fn random_path() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..6).prop_map(|pieces| {
        let mut path = b"/".to_vec();
        for p in pieces {
            path.extend_from_slice(p.as_bytes());
        }
        path
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn generated_files_agree_with_the_oracle(
        body in body(),
        random in prop::collection::vec(random_path(), 0..8),
        seed in 1u64..u64::MAX,
        agent in prop::sample::select(vec!["mybot", "googlebot", "otherbot"]),
    ) {
        let robots = RobotsTxt::parse(body.as_bytes());
        let group = Group::select(&robots, &Agent::parse(agent).unwrap());
        let mut paths = paths_for_group(&group, 6, &mut Rng(seed));
        paths.extend(random);
        // Raw non-ASCII bytes, as an unescaped URL would carry them.
        paths.extend(paths.clone().into_iter().filter(|p| pattern::needs_escape(p)).map(|p| {
            let mut raw = p;
            raw.push(0xE9);
            raw
        }));
        for opts in all_options() {
            let compiled = compile(&group, &opts);
            let bad = disagreements(&group, &compiled, opts.explain, &paths);
            prop_assert!(bad.is_empty(), "body:\n{}\n{:?}:\n{}", body, opts, bad.join("\n"));
        }
    }
}

// ---------------------------------------------------------------- fixed cases

fn group_of(body: &str, agent: &str) -> Group {
    Group::select(&RobotsTxt::parse(body.as_bytes()), &Agent::parse(agent).unwrap())
}

#[test]
fn explain_names_the_first_rule_among_equal_labels() {
    let group = group_of("user-agent: *\ndisallow: /a*\ndisallow: /*b\nallow: /*b\nallow: /ab\n", "x");
    let compiled = assert_agrees(&group, &options(true, Budget::default()), &[b"/ab".to_vec(), b"/xb".to_vec()]);
    let m = compiled.matcher.matcher();
    // allow: /*b (rule 2) and allow: /ab (rule 3) tie on label 7; the first in the file decides.
    assert_eq!(m.decide(b"/ab").rule, Some(2));
    assert_eq!(m.decide(b"/xb").rule, Some(2));
    assert_eq!(m.decide(b"/a").rule, Some(0));
    assert_eq!(m.decide(b"/zz").rule, None);
}

#[test]
fn empty_and_nothing_groups_allow_everything() {
    for body in ["", "user-agent: *\n", "user-agent: other\ndisallow: /\n"] {
        let group = group_of(body, "mybot");
        for opts in all_options() {
            let compiled = assert_agrees(&group, &opts, &[b"/".to_vec(), b"/x".to_vec()]);
            assert!(compiled.matcher.matcher().decide(b"/x").allowed());
        }
    }
}

#[test]
fn tiny_budget_splits_into_the_three_kinds() {
    let group = group_of("user-agent: *\ndisallow: /a/b/c/d\nallow: /*.css\ndisallow: /*a*b*c\nallow: /q\n", "x");
    let compiled = compile(&group, &options(false, TINY));
    assert!(compiled.stats.split);
    let kinds: Vec<PartKind> = compiled.stats.parts.iter().map(|p| p.kind).collect();
    assert!(kinds.contains(&PartKind::Fallback), "{}", compiled.stats);
    let paths: Vec<Vec<u8>> =
        ["/a/b/c/d", "/x.css", "/xaybzc", "/q", "/a/b/c", "/abc.css"].iter().map(|p| p.as_bytes().to_vec()).collect();
    assert!(disagreements(&group, &compiled, false, &paths).is_empty());
    let whole = compile(&group, &options(false, Budget::default()));
    assert!(!whole.stats.split);
    assert_eq!(whole.stats.parts.len(), 1);
}

// ---------------------------------------------------------------- pathological files

#[test]
fn fifty_rules_with_several_stars() {
    let mut rng = Rng(7);
    let letters = b"abcdef";
    let mut body = String::from("user-agent: *\n");
    for i in 0..50 {
        let stars = 2 + rng.below(3);
        let mut value = String::from("/");
        for _ in 0..stars {
            value.push('*');
            value.push(rng.pick(letters) as char);
        }
        if i % 7 == 0 {
            value.push('$');
        }
        body += &format!("{}: {value}\n", if i % 3 == 0 { "allow" } else { "disallow" });
    }
    let group = group_of(&body, "x");
    let mut paths = paths_for_group(&group, 500, &mut rng);
    for _ in 0..2000 {
        let len = rng.below(14);
        paths.push(std::iter::once(b'/').chain((0..len).map(|_| rng.pick(letters))).collect());
    }
    for explain in [false, true] {
        let compiled = assert_agrees(&group, &options(explain, Budget::default()), &paths);
        eprintln!("50 multi-star rules (explain={explain}): {}", compiled.stats);
    }
}

/// `n` prefix rules (one to four path segments and a number), in one group;
/// they must fit the default budget and agree with the oracle.
fn prefix_rules(n: usize) {
    let mut rng = Rng(11);
    let words = ["news", "img", "static", "api", "user", "search", "tag", "2019", "a", "b-c"];
    let mut body = String::from("user-agent: *\n");
    for i in 0..n {
        let depth = 1 + rng.below(4);
        let mut value = String::new();
        for _ in 0..depth {
            value.push('/');
            value.push_str(rng.pick(&words));
        }
        value.push_str(&format!("/{i}"));
        body += &format!("{}: {value}\n", if rng.below(3) == 0 { "allow" } else { "disallow" });
    }
    let group = group_of(&body, "x");
    let paths = paths_for_group(&group, 3000, &mut rng);
    for explain in [false, true] {
        let compiled = assert_agrees(&group, &options(explain, Budget::default()), &paths);
        assert!(!compiled.stats.split, "{n} prefix rules fit the default budget: {}", compiled.stats);
        eprintln!("{n} prefix rules (explain={explain}): {}", compiled.stats);
    }
}

#[test]
fn one_thousand_prefix_rules() {
    prefix_rules(1000);
}

#[test]
fn five_thousand_prefix_rules() {
    prefix_rules(5000);
}

// ---------------------------------------------------------------- the real-world corpus

/// Checks the corpus files selected by `take(index, path)`: googlebot and a
/// `*`-only bot in verdict mode, and one of them in explain mode for every
/// fourth file, with paths drawn from each file's rules.
fn realworld(take: impl Fn(usize, &std::path::Path) -> bool + Sync) {
    let Some(files) = realworld_robots_files() else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let files: Vec<_> = files.into_iter().enumerate().filter(|(n, f)| take(*n, f)).collect();
    for must in ["www.xuexi.cn.txt", "docs.oracle.com.txt"] {
        assert!(files.iter().any(|(_, f)| f.ends_with(must)), "{must} is checked");
    }
    let agents = [Agent::parse("googlebot").unwrap(), Agent::parse("mybot").unwrap()];
    let results: Vec<(usize, usize, Vec<String>)> = files
        .par_iter()
        .map(|(n, file)| {
            let body = std::fs::read(file).unwrap();
            let robots = RobotsTxt::parse(&body);
            let mut checked = 0;
            let mut splits = 0;
            let mut bad = Vec::new();
            for (a, agent) in agents.iter().enumerate() {
                let group = Group::select(&robots, agent);
                let mut rng = Rng(*n as u64 * 2 + a as u64 + 1);
                let paths = paths_for_group(&group, 40, &mut rng);
                for explain in [false, true] {
                    if explain && n % 4 != a {
                        continue;
                    }
                    let compiled = compile(&group, &options(explain, Budget::default()));
                    splits += usize::from(compiled.stats.split);
                    checked += paths.len();
                    for d in disagreements(&group, &compiled, explain, &paths).into_iter().take(3) {
                        bad.push(format!("{} ({agent}, explain={explain}): {d}", file.display()));
                    }
                }
            }
            (checked, splits, bad)
        })
        .collect();
    let checked: usize = results.iter().map(|r| r.0).sum();
    let splits: usize = results.iter().map(|r| r.1).sum();
    let bad: Vec<&String> = results.iter().flat_map(|r| &r.2).collect();
    eprintln!("realworld: {} files, {checked} path checks, {splits} compilations split", files.len());
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.iter().take(20).map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
}

/// A deterministic sample that keeps a debug run to a minute or two on two
/// cores: every 40th file, every file of 200 KiB or more (which includes the
/// largest, www.xuexi.cn and docs.oracle.com) and every file whose name
/// contains "icons8" or "builtin" (groups that go over budget and split).
/// The whole corpus is `realworld_corpus_agrees_every_file` (ignored; run it
/// with `cargo test --release -p robotsieve-compiler --test automaton -- --ignored`).
#[test]
fn realworld_corpus_sample_agrees() {
    realworld(|n, file| {
        let name = file.to_string_lossy();
        n % 40 == 0
            || name.contains("icons8")
            || name.contains("builtin")
            || std::fs::metadata(file).is_ok_and(|m| m.len() >= 200 << 10)
    });
}

/// Every file of the corpus (about 10 s in release on two cores).
#[test]
#[ignore = "the whole corpus: run in release with --ignored"]
fn realworld_corpus_agrees_every_file() {
    realworld(|_, _| true);
}

// ---------------------------------------------------------------- conformance

fn conformance(name: &str) {
    for opts in all_options() {
        check_verdict_file(name, &format!("the automaton ({opts:?})"), |case| {
            let group = Group::select(&RobotsTxt::parse(&case.body), &Agent::from_raw_tokens(&case.agents));
            let matcher = compile(&group, &opts).matcher;
            move |path: &[u8]| matcher.matcher().decide(path).allowed()
        });
    }
}

#[test]
fn conformance_robots_jsonl() {
    conformance("robots.jsonl");
}

#[test]
fn conformance_google_spec_test_jsonl() {
    conformance("google-spec-test.jsonl");
}
