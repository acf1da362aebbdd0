//! `lint`: for every finding code, a file that triggers it (at the expected
//! line) and a close file that does not; never-decides checked against the
//! per-rule oracle; and a run over the real corpus when it is present.

use robotsieve_lint::{self as lint, rule_effects, Effect, Finding, Options, Severity, CODES};
use robotsieve_robotstxt::parse::MAX_BODY_BYTES;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use std::collections::BTreeSet;

fn findings(body: &[u8]) -> Vec<Finding> {
    lint::lint(&RobotsTxt::parse(body), &Options::default()).findings
}

/// The lines at which `code` is reported.
fn lines_of(body: &[u8], code: &str) -> Vec<u32> {
    findings(body).iter().filter(|f| f.code == code).map(|f| f.line).collect()
}

/// `code` is reported exactly at `lines` for `bad`, and not at all for `good`.
fn check(code: &str, bad: &str, lines: &[u32], good: &str) {
    check_bytes(code, bad.as_bytes(), lines, good.as_bytes());
}

fn check_bytes(code: &str, bad: &[u8], lines: &[u32], good: &[u8]) {
    assert!(lint::code(code).is_some(), "{code} is not in the code table");
    assert_eq!(lines_of(bad, code), lines, "{code} on {:?}: {:#?}", String::from_utf8_lossy(bad), findings(bad));
    assert_eq!(lines_of(good, code), Vec::<u32>::new(), "{code} on {:?}", String::from_utf8_lossy(good));
}

fn message(body: &str, code: &str) -> String {
    findings(body.as_bytes()).into_iter().find(|f| f.code == code).map(|f| f.message).unwrap_or_default()
}

#[test]
fn code_table_is_unique_and_documented() {
    let names: BTreeSet<_> = CODES.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), CODES.len());
    for c in CODES {
        assert!(c.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit()), "{}", c.name);
        assert!(!c.doc.is_empty() && c.doc.ends_with('.'), "{}", c.name);
    }
}

#[test]
fn findings_carry_their_code_severity_and_are_sorted_by_line() {
    let body = b"disallow: /x\nuser-agent: *\ndisallow: css\ncrawl-delay: 3\n";
    let found = findings(body);
    for f in &found {
        assert_eq!(lint::code(f.code).unwrap().severity, f.severity, "{f:?}");
        assert!(!f.message.is_empty() && !f.fix.is_empty());
    }
    let lines: Vec<u32> = found.iter().map(|f| f.line).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
}

#[test]
fn empty_file() {
    check("empty-file", "", &[0], "user-agent: *\ndisallow:\n");
    assert_eq!(lines_of(b"\n  \n", "empty-file"), vec![0]);
}

#[test]
fn html_page() {
    check(
        "html-page",
        "<!DOCTYPE html>\n<html><head><title>404</title></head>\n<body>Not found</body></html>\n",
        &[0],
        "user-agent: *\ndisallow: /<html>\n",
    );
    // Per-line noise is not reported for an HTML page.
    let body = b"<html>\n<body>\nfoo: bar\nnot a directive here\n</body></html>\n";
    assert_eq!(findings(body).iter().map(|f| f.code).collect::<Vec<_>>(), vec!["html-page"]);
}

#[test]
fn binary_content() {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10".to_vec();
    png.extend((0..200u8).map(|b| b % 7));
    check_bytes("binary-content", &png, &[0], b"user-agent: *\ndisallow: /\x01\n");
    let utf16: Vec<u8> = "user-agent: *\ndisallow: /\n".bytes().flat_map(|b| [b, 0]).collect();
    let found = findings(&utf16);
    assert_eq!(found[0].code, "binary-content");
    assert!(found[0].message.contains("UTF-16"), "{}", found[0].message);
    // Re-encoded binary: mostly U+FFFD.
    let replaced = "\u{fffd}\u{fffd}JFIF\u{fffd}\u{fffd}\u{fffd}\u{fffd}".repeat(20);
    assert_eq!(lines_of(replaced.as_bytes(), "binary-content"), vec![0]);
}

#[test]
fn no_directives() {
    check("no-directives", "\n404 Not Found\n", &[2], "# nothing but a comment\nuser-agent: *\n");
    check("no-directives", r#"{"status":404,"error":"Not Found"}"#, &[1], "user-agent: *\ndisallow:\n");
}

#[test]
fn body_too_large() {
    let mut body = b"user-agent: *\n".to_vec();
    while body.len() < MAX_BODY_BYTES - 5 {
        body.extend_from_slice(b"# filler filler filler filler filler filler\n");
    }
    let kept_lines = body.iter().filter(|&&b| b == b'\n').count() as u32;
    body.extend_from_slice(b"disallow: /a\ndisallow: /b\n");
    let found = findings(&body);
    let f = found.iter().find(|f| f.code == "body-too-large").expect("reported");
    // The cut line is the one holding byte 512,000: "disallow: /a".
    assert_eq!(f.line, kept_lines + 1);
    assert!(f.message.contains("2 rule(s) are cut off"), "{}", f.message);
    assert!(f.message.contains(&format!("{}, {}", kept_lines + 1, kept_lines + 2)), "{}", f.message);
    let small = b"user-agent: *\ndisallow: /a\n";
    assert_eq!(lines_of(small, "body-too-large"), Vec::<u32>::new());
}

#[test]
fn line_too_long() {
    let long = format!("user-agent: *\ndisallow: /{}\n", "a".repeat(20_000));
    let short = format!("user-agent: *\ndisallow: /{}\n", "a".repeat(2_000));
    check("line-too-long", &long, &[2], &short);
}

#[test]
fn bom_inside() {
    check_bytes(
        "bom-inside",
        b"user-agent: *\n\xEF\xBB\xBFdisallow: /x\n",
        &[2],
        b"\xEF\xBB\xBFuser-agent: *\ndisallow: /x\n",
    );
    assert!(message("user-agent: *\n\u{feff}disallow: /x\n", "bom-inside").contains("not recognised"));
}

#[test]
fn mangled_bom() {
    check("mangled-bom", "ï»¿User-agent: *\nDisallow: /x\n", &[1], "User-agent: *\nDisallow: /ï»¿\n");
    assert!(message("ï»¿User-agent: *\nDisallow: /x\n", "mangled-bom").contains("ignored"));
}

#[test]
fn not_utf8() {
    check_bytes(
        "not-utf8",
        b"user-agent: *\ndisallow: /caf\xE9\ndisallow: /\xFCber\n",
        &[2],
        "user-agent: *\ndisallow: /café\n".as_bytes(),
    );
    assert!(message_bytes(b"user-agent: *\ndisallow: /caf\xE9\ndisallow: /\xFCber\n", "not-utf8").starts_with("2 line"));
}

fn message_bytes(body: &[u8], code: &str) -> String {
    findings(body).into_iter().find(|f| f.code == code).map(|f| f.message).unwrap_or_default()
}

#[test]
fn unparsed_line() {
    check(
        "unparsed-line",
        "user-agent: *\nDisallow /css/ /js/\nDisallow\n",
        &[2, 3],
        "user-agent: *\nDisallow /css/\n# Disallow /a /b\n\n",
    );
    assert!(message("user-agent: *\nDisallow /css/ /js/\n", "unparsed-line").contains("3 words"));
}

#[test]
fn rule_before_agent() {
    check(
        "rule-before-agent",
        "# site rules\ndisallow: /private\nallow: /public\nuser-agent: *\ndisallow: /tmp\n",
        &[2, 3],
        "user-agent: *\ndisallow: /private\n",
    );
    assert!(lint::lint(&RobotsTxt::parse(b"disallow: /x\n"), &Options::default()).has_errors());
}

#[test]
fn group_joined() {
    let bad = "User-agent: Googlebot\nCrawl-delay: 10\nUser-agent: *\nDisallow: /private\n";
    check("group-joined", bad, &[3], "User-agent: Googlebot\nUser-agent: bingbot\nDisallow: /private\n");
    let m = message(bad, "group-joined");
    assert!(m.contains("joins the group of line 1"), "{m}");
    assert!(m.contains("line 2 (crawl-delay) does not end a group"), "{m}");
    // Sitemap lines and blank lines do not end a group either; a rule does.
    check(
        "group-joined",
        "User-agent: a\n\nSitemap: https://x.test/s.xml\n\nUser-agent: b\nDisallow: /x\n",
        &[5],
        "User-agent: a\nDisallow:\nSitemap: https://x.test/s.xml\nUser-agent: b\nDisallow: /x\n",
    );
}

#[test]
fn agent_unrestricted() {
    check(
        "agent-unrestricted",
        "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\n",
        &[4],
        "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow:\n",
    );
    // Without disallows in the `*` group nothing is lost.
    assert_eq!(lines_of(b"User-agent: *\nDisallow:\nUser-agent: a\n", "agent-unrestricted"), Vec::<u32>::new());
    assert_eq!(
        lines_of(b"User-agent: *\nAllow: /\nUser-agent: a\nCrawl-delay: 5\n", "agent-unrestricted"),
        Vec::<u32>::new()
    );
    // A crawler named in an empty group and in a group with rules is not unrestricted.
    assert_eq!(
        lines_of(b"User-agent: *\nDisallow: /p\nUser-agent: a\nDisallow: /q\nUser-agent: a\n", "agent-unrestricted"),
        Vec::<u32>::new()
    );
}

#[test]
fn agent_cut() {
    check(
        "agent-cut",
        "User-agent: MJ12bot\nUser-agent: Googlebot, Bingbot\nDisallow: /\n",
        &[1, 2],
        "User-agent: Googlebot/2.1\nUser-agent: googlebot*\nUser-agent: Googlebot-Image\nDisallow: /\n",
    );
    let m = message("User-agent: MJ12bot\nDisallow: /\n", "agent-cut");
    assert!(m.contains("reads as \"MJ\""), "{m}");
}

#[test]
fn agent_names_nothing() {
    check(
        "agent-names-nothing",
        "User-agent: 360Spider\nUser-agent: *bot\nUser-agent:\nDisallow: /\n",
        &[1, 2, 3],
        "User-agent: Spider360\nUser-agent: *\nDisallow: /\n",
    );
}

#[test]
fn star_trailing_text() {
    check("star-trailing-text", "User-agent: * everyone\nDisallow: /x\n", &[1], "User-agent: *\nDisallow: /x\n");
}

#[test]
fn missing_colon() {
    check("missing-colon", "User-agent *\nDisallow /x\n", &[1, 2], "User-agent: *\nDisallow: /x\n");
}

#[test]
fn field_typo() {
    check(
        "field-typo",
        "Useragent: *\nDissallow: /x\nsite-map: https://x.test/s.xml\n",
        &[1, 2, 3],
        "User-agent: *\nDisallow: /x\nSitemap: https://x.test/s.xml\n",
    );
}

#[test]
fn field_suffix() {
    check("field-suffix", "User-agents: *\nDisallowed: /x\n", &[1, 2], "User-agent: *\nDisallow: /x\n");
}

#[test]
fn unknown_field() {
    check("unknown-field", "User-agent: *\nDis-allow: /x\nDisllow: /y\n", &[2, 3], "User-agent: *\nDisalow: /x\n");
    assert!(message("User-agent: *\nDisllow: /y\n", "unknown-field").contains("did you mean `disallow`"));
}

#[test]
fn crawl_delay() {
    check("crawl-delay", "User-agent: *\nCrawl-delay: 5\nDisallow:\n", &[2], "User-agent: *\nDisallow:\n");
}

#[test]
fn noindex_field() {
    check("noindex-field", "User-agent: *\nNoindex: /x\n", &[2], "User-agent: *\nDisallow: /x\n");
}

#[test]
fn other_crawler_field() {
    check(
        "other-crawler-field",
        "User-agent: Yandex\nDisallow: /x\nClean-param: ref /\nHost: example.com\n",
        &[3, 4],
        "User-agent: Yandex\nDisallow: /x\n",
    );
}

#[test]
fn sitemap_not_absolute() {
    check(
        "sitemap-not-absolute",
        "Sitemap: /sitemap.xml\nSitemap: www.example.com/sitemap.xml\n",
        &[1, 2],
        "Sitemap: https://www.example.com/sitemap.xml\nSitemap: http://example.com/s.xml.gz\n",
    );
}

#[test]
fn path_not_slash() {
    let bad = "User-agent: *\nDisallow: GoogleBot\nDisallow: css\nAllow: https://example.com/x\n";
    check("path-not-slash", bad, &[2, 3, 4], "User-agent: *\nDisallow: /css\nDisallow: *.css\nDisallow:\n");
    assert!(message(bad, "path-not-slash")
        .contains("\"disallow: GoogleBot\" does not start with / or *: it matches nothing"));
    assert!(lint::lint(&RobotsTxt::parse(bad.as_bytes()), &Options::default()).has_errors());
}

#[test]
fn several_paths() {
    check(
        "several-paths",
        "User-agent: *\nDisallow: /css/ /cgi-bin/\n",
        &[2],
        "User-agent: *\nDisallow: /css/\nDisallow: /cgi-bin/\n",
    );
}

#[test]
fn space_in_pattern() {
    check(
        "space-in-pattern",
        "User-agent: *\nDisallow: /my folder/\n",
        &[2],
        "User-agent: *\nDisallow: /my%20folder/\n",
    );
}

#[test]
fn dollar_inside() {
    check("dollar-inside", "User-agent: *\nDisallow: /*.php$?\n", &[2], "User-agent: *\nDisallow: /*.php$\n");
}

#[test]
fn escaped_wildcard() {
    check(
        "escaped-wildcard",
        "User-agent: *\nDisallow: /%2A/print\nDisallow: /a%24\n",
        &[2, 3],
        "User-agent: *\nDisallow: /*/print\nDisallow: /%2F\n",
    );
}

#[test]
fn redundant_star() {
    check(
        "redundant-star",
        "User-agent: *\nDisallow: /a**b\nDisallow: /admin*\nDisallow: /x*$\n",
        &[2, 3, 4],
        "User-agent: *\nDisallow: /*a\nDisallow: /admin\nDisallow: *.gif\n",
    );
}

#[test]
fn non_ascii() {
    check("non-ascii", "User-agent: *\nDisallow: /über\n", &[2], "User-agent: *\nDisallow: /%C3%BCber\n");
    assert!(message("User-agent: *\nDisallow: /über\n", "non-ascii").contains("/%C3%BCber"));
}

#[test]
fn never_decides() {
    let bad = "User-agent: *\nDisallow: /private\nAllow: /public\nDisallow: /a\nDisallow: /a/b\n";
    check("never-decides", bad, &[5], "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n");
    let m = message(bad, "never-decides");
    assert_eq!(
        m,
        "\"disallow: /a/b\" never decides a verdict: \"disallow: /a\" (line 4) already covers every path it matches"
    );
    // Covered by wildcards, not by a prefix: computed, not guessed.
    check(
        "never-decides",
        "User-agent: *\nDisallow: /*.pdf\nDisallow: /docs/*.pdf\n",
        &[3],
        "User-agent: *\nDisallow: /*.pdf$\nDisallow: /docs/*.pdf\n",
    );
    // An allow of the same length wins the tie everywhere the disallow matches.
    check(
        "never-decides",
        "User-agent: *\nAllow: /*\nDisallow: /a\n",
        &[3],
        "User-agent: *\nAllow: /*\nDisallow: /ab\n",
    );
    // A disallow inside an allow inside a disallow is needed; the same one without the allow is not.
    check(
        "never-decides",
        "User-agent: *\nDisallow: /a\nDisallow: /a/b/c\n",
        &[3],
        "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n",
    );
}

#[test]
fn allow_without_effect() {
    check(
        "allow-without-effect",
        "User-agent: *\nDisallow: /admin\nAllow: /\n",
        &[3],
        "User-agent: *\nDisallow: /\nAllow: /public\n",
    );
}

#[test]
fn duplicate_rule() {
    check(
        "duplicate-rule",
        "User-agent: *\nDisallow: /x\nDisallow: /y\nDisallow: /x\n",
        &[4],
        "User-agent: *\nDisallow: /x\nDisallow: /x/\n",
    );
    assert!(message("User-agent: *\nDisallow: /x\nDisallow: /x\n", "duplicate-rule").contains("repeats line 2"));
    // The same pattern written raw and escaped: one duplicate, and the first copy is not "covered" by it.
    let body = "User-agent: *\nDisallow: /ö\nDisallow: /%C3%B6\n";
    assert_eq!(lines_of(body.as_bytes(), "duplicate-rule"), vec![3]);
    assert_eq!(lines_of(body.as_bytes(), "never-decides"), Vec::<u32>::new());
}

#[test]
fn allow_disallow_conflict() {
    check(
        "allow-disallow-conflict",
        "User-agent: *\nDisallow: /shop\nAllow: /shop\n",
        &[2],
        "User-agent: *\nDisallow: /shop\nAllow: /shop/\n",
    );
}

#[test]
fn never_decides_per_crawler() {
    // Line 5 is covered for googlebot (whose groups merge) but decides for bingbot.
    let body = "User-agent: googlebot\nDisallow: /a\n\nUser-agent: googlebot\nUser-agent: bingbot\nDisallow: /a/b\n";
    let found = findings(body.as_bytes());
    let f = found.iter().find(|f| f.code == "never-decides").expect("reported");
    assert_eq!(f.line, 6);
    assert!(f.message.ends_with("(for user-agent googlebot)"), "{}", f.message);
    // With --agent, only that crawler's group is checked.
    let robots = RobotsTxt::parse(body.as_bytes());
    let options = Options { agent: Some(Agent::parse("bingbot").unwrap()) };
    let report = lint::lint(&robots, &options);
    assert!(!report.findings.iter().any(|f| f.code == "never-decides"));
    let agent = report.agent.expect("agent report");
    assert_eq!(agent.group.agent_lines, vec![5]);
    assert_eq!(agent.effects, vec![Effect::Needed]);
}

#[test]
fn decision_not_analysed_is_only_for_fallback_rules() {
    // Every small group fits one automaton: no rule is left unanalysed.
    for body in ["User-agent: *\nDisallow: /*a*b*c\nDisallow: /x\n", "User-agent: *\nDisallow: /*a*\n"] {
        assert_eq!(lines_of(body.as_bytes(), "decision-not-analysed"), Vec::<u32>::new());
    }
}

/// Paths over the bytes the patterns use, up to `len` bytes after the `/`.
fn paths(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut all = vec![b"/".to_vec()];
    let mut frontier = all.clone();
    for _ in 0..len {
        let next: Vec<Vec<u8>> =
            frontier.iter().flat_map(|p| alphabet.iter().map(move |&b| [p.as_slice(), &[b]].concat())).collect();
        all.extend(next.iter().cloned());
        frontier = next;
    }
    all
}

/// Differential against the per-rule oracle: a line's effect is what
/// removing it does to the verdicts of every path over a small alphabet
/// (`c` stands for every byte the patterns do not use), and a line never
/// wins iff the oracle never names it.
#[test]
fn rule_effects_agree_with_the_oracle() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let pattern = proptest::collection::vec(prop::sample::select(b"ab/*".to_vec()), 0..4).prop_map(|mut p| {
        p.insert(0, b'/');
        p
    });
    let rule = (any::<bool>(), pattern, any::<bool>());
    let all_paths = paths(b"ab/c", 6);
    let mut runner = TestRunner::new(Config { cases: 120, ..Config::default() });
    runner
        .run(&proptest::collection::vec(rule, 1..6), |rules| {
            let mut body = String::from("user-agent: *\n");
            for (allow, pattern, anchored) in &rules {
                let verb = if *allow { "allow" } else { "disallow" };
                let end = if *anchored { "$" } else { "" };
                body.push_str(&format!("{verb}: {}{end}\n", String::from_utf8_lossy(pattern)));
            }
            let robots = RobotsTxt::parse(body.as_bytes());
            let group = Group::select(&robots, &Agent::parse("x").unwrap());
            let effects = rule_effects(&group);
            for (i, effect) in effects.iter().enumerate() {
                let mut without = group.clone();
                without.rules.remove(i);
                let wins = all_paths.iter().any(|p| group.decide(p).rule == Some(i));
                let changes = all_paths.iter().any(|p| group.decide(p).allowed() != without.decide(p).allowed());
                let covered =
                    all_paths.iter().any(|p| group.decide(p).rule == Some(i) && without.decide(p).rule.is_some());
                let expected = if !wins {
                    Effect::NeverWins
                } else if changes {
                    Effect::Needed
                } else if group.rules[i].verb == robotsieve_robotstxt::Verb::Allow && !covered {
                    Effect::AllowedAnyway
                } else {
                    Effect::SameVerdict
                };
                prop_assert_eq!(*effect, expected, "rule {} of\n{}", i, body);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn severities_order() {
    assert!(Severity::Error > Severity::Warning && Severity::Warning > Severity::Note);
}

/// Every file of the real corpus lints without a panic, and the counts are
/// plausible (the corpus has HTML pages, crawl-delays and group joins).
#[test]
fn real_corpus_sample() {
    let Some(dir) = robotsieve_testkit::shared_dir().map(|d| d.join("realworld/robots")) else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: {} is absent", dir.display());
        return;
    };
    let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    let mut seen = BTreeSet::new();
    // Every 20th file keeps this test quick in debug builds; `lint --summary` runs them all.
    for path in files.iter().step_by(20) {
        let body = std::fs::read(path).unwrap();
        let report = lint::lint(&RobotsTxt::parse(&body), &Options::default());
        for f in report.findings {
            seen.insert(f.code);
        }
    }
    for code in ["html-page", "crawl-delay", "group-joined", "redundant-star"] {
        assert!(seen.contains(code), "{code} never seen in the sample: {seen:?}");
    }
}

#[test]
fn preference_malformed() {
    check(
        "preference-malformed",
        "User-agent: *\nContent-Signal: ai-train=n, search=yes\nContent-Usage: /docs/\nContent-Usage: train-ai=yes\nContent-Usage: Train-AI=n,,search=y\nContent-Usage: docs/ train-ai=n\nAllow: /\n",
        &[2, 3, 4, 5, 5, 6],
        "User-agent: *\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nContent-Usage: train-ai=n\nContent-Usage: /docs/ train-ai=y, search=y, ai-use=n\nAllow: /\n",
    );
    assert!(message("User-agent: *\nContent-Usage: train-ai=yes\n", "preference-malformed").contains("`y` or `n`"));
}

#[test]
fn preference_fields_are_not_unknown_fields() {
    let published = "User-Agent: *\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nAllow: /\n\nUser-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /docs/ train-ai=y\n";
    assert_eq!(
        findings(published.as_bytes())
            .iter()
            .filter(|f| f.code.starts_with("preference") || f.code == "unknown-field")
            .count(),
        0,
        "{:#?}",
        findings(published.as_bytes())
    );
    // A misspelt field name is still an unknown field.
    assert_eq!(lines_of(b"User-agent: *\nContent-Signals: ai-train=no\n", "unknown-field"), vec![2]);
}

#[test]
fn preference_unknown_key() {
    check(
        "preference-unknown-key",
        "User-agent: *\nContent-Signal: ai-train=no, train-ai=no\nContent-Usage: train-ai=n, train-ai=y\n",
        &[2, 3],
        "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: train-ai=n, search=y\n",
    );
}

#[test]
fn preference_outside_group() {
    check(
        "preference-outside-group",
        "Content-Signal: ai-train=no\nUser-agent: *\nDisallow:\n",
        &[1],
        "User-agent: *\nContent-Signal: ai-train=no\nDisallow:\n",
    );
}
