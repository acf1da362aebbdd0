//! `robotsieve check` as users run it: every conformance case through the
//! binary, from a robots.txt file and from a compiled artifact.

use robotsieve_robotstxt::Agent;
use robotsieve_testkit::conformance::{conformance_file, read_verdict_cases, VerdictCase};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

mod common;
use common::{assert_exit_2, robotsieve, succeeds};

/// Compiles one robots.txt file as https://ex.com's into `rules`, with
/// `args` (the crawlers, `--explain`) before it.
fn compile_robots(robots: &Path, rules: &Path, args: &[&str]) {
    succeeds(
        robotsieve()
            .arg("compile")
            .args(args)
            .args(["--origin", "https://ex.com", "--robots"])
            .arg(robots)
            .arg("-o")
            .arg(rules),
    );
}

fn cases() -> Option<Vec<VerdictCase>> {
    let mut all = Vec::new();
    for name in ["robots.jsonl", "google-spec-test.jsonl"] {
        let Some(path) = conformance_file(name) else {
            eprintln!("skipped: ../shared/conformance/{name} is absent");
            return None;
        };
        all.extend(read_verdict_cases(&path).unwrap());
    }
    Some(all)
}

/// The agent as the CLI takes it, or None when the CLI must refuse it.
fn cli_agent(case: &VerdictCase) -> Option<String> {
    let spec = case.agents.join(",");
    Agent::parse(&spec).ok().map(|_| spec)
}

fn verdicts(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

#[test]
fn conformance_through_check_robots() {
    let Some(cases) = cases() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut refused = 0;
    for (i, case) in cases.iter().enumerate() {
        let robots = dir.path().join(format!("{i}.txt"));
        std::fs::write(&robots, &case.body).unwrap();
        let Some(agent) = cli_agent(case) else {
            let out = robotsieve()
                .args(["check", "--agent", &case.agents.join(","), "--robots"])
                .arg(&robots)
                .arg(&case.url)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{}: an invalid agent must be refused", case.id);
            assert!(String::from_utf8_lossy(&out.stderr).contains("user-agent token"), "{}", case.id);
            refused += 1;
            continue;
        };
        for (raw, expected) in [(true, case.allowed), (false, case.allowed_escaped)] {
            let mut cmd = robotsieve();
            cmd.args(["check", "--agent", &agent, "--robots"]).arg(&robots);
            if raw {
                cmd.arg("--raw-urls");
            }
            // Through standard input, so that even the empty URL is one line.
            let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
            child.stdin.take().unwrap().write_all(format!("{}\n", case.url).as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", case.id);
            let want = if expected { "allowed" } else { "disallowed" };
            assert_eq!(verdicts(&out.stdout), vec![want], "{} (raw={raw})", case.id);
        }
    }
    eprintln!("{} cases through check --robots ({refused} invalid agents refused)", cases.len());
}

/// All cases of one agent set compiled into one artifact, each case under an
/// origin of its own (the path and query are kept; only the host changes),
/// then checked in one run per URL mode.
#[test]
fn conformance_through_compile_and_check_rules() {
    let Some(cases) = cases() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut by_agent: BTreeMap<String, Vec<&VerdictCase>> = BTreeMap::new();
    for case in &cases {
        if let Some(agent) = cli_agent(case) {
            by_agent.entry(agent).or_default().push(case);
        }
    }
    let mut checked = 0;
    for (a, (agent, cases)) in by_agent.iter().enumerate() {
        let mut corpus = String::new();
        let mut urls = String::new();
        for (i, case) in cases.iter().enumerate() {
            let host = format!("case{i}.example");
            let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &case.body);
            let record =
                serde_json::json!({"url": format!("http://{host}/robots.txt"), "status": 200, "body_b64": b64});
            corpus.push_str(&format!("{record}\n"));
            let path = robotsieve_core::url::path_params_query(case.url.as_bytes());
            urls.push_str(&format!("http://{host}{}\n", String::from_utf8_lossy(&path)));
        }
        let corpus_path = dir.path().join(format!("corpus{a}.jsonl"));
        std::fs::write(&corpus_path, corpus).unwrap();
        // One artifact, and shard sets of 1 and 7: the same lines, verdicts and rules alike.
        let mut first_output: Option<Vec<u8>> = None;
        for shards in [None, Some(1), Some(7)] {
            let artifact = match shards {
                None => dir.path().join(format!("rules{a}.rsv")),
                Some(n) => dir.path().join(format!("rules{a}-{n}-shards")),
            };
            let mut cmd = robotsieve();
            cmd.args(["compile", "--explain", "--agent", agent, "--corpus"]).arg(&corpus_path).arg("-o").arg(&artifact);
            if let Some(n) = shards {
                cmd.args(["--shards", &n.to_string()]);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            for raw in [true, false] {
                let mut cmd = robotsieve();
                cmd.args(["check", "--agent", agent, "--rules"]).arg(&artifact);
                if raw {
                    cmd.arg("--raw-urls");
                }
                let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
                child.stdin.take().unwrap().write_all(urls.as_bytes()).unwrap();
                let out = child.wait_with_output().unwrap();
                assert!(out.status.success());
                let got = verdicts(&out.stdout);
                assert_eq!(got.len(), cases.len());
                for (case, got) in cases.iter().zip(got) {
                    let expected = if raw { case.allowed } else { case.allowed_escaped };
                    let want = if expected { "allowed" } else { "disallowed" };
                    assert_eq!(got, want, "{} (raw={raw}, shards {shards:?})", case.id);
                }
                if !raw {
                    match &first_output {
                        None => first_output = Some(out.stdout),
                        Some(first) => assert!(*first == out.stdout, "{shards:?} shards answer otherwise"),
                    }
                }
            }
        }
        checked += cases.len();
    }
    eprintln!(
        "{checked} cases through compile + check --rules (1 artifact, 1 and 7 shards), {} agent sets",
        by_agent.len()
    );
}

#[test]
fn output_names_the_deciding_line() {
    let dir = tempfile::tempdir().unwrap();
    let robots = dir.path().join("robots.txt");
    std::fs::write(&robots, "user-agent: *\n# comment\ndisallow: /b\nallow: /b/ok\n").unwrap();
    let out = robotsieve()
        .args(["check", "--agent", "mybot", "--robots"])
        .arg(&robots)
        .args(["https://example.com/a", "https://example.com/b", "https://example.com/b/ok"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "allowed\thttps://example.com/a\ndisallowed\thttps://example.com/b\t3: disallow: /b\nallowed\thttps://example.com/b/ok\t4: allow: /b/ok\n"
    );
    let out = robotsieve()
        .args(["check", "--json", "--agent", "mybot", "--robots"])
        .arg(&robots)
        .arg("https://example.com/b")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"url": "https://example.com/b", "verdict": "disallowed", "allowed": false, "line": 3,
            "rule": "disallow: /b", "reason": null, "preferences": [], "sitemaps": [], "crawl_delay": null,
            "crawl_delays": []})
    );
}

#[test]
fn json_names_the_preferences_that_apply() {
    let dir = tempfile::tempdir().unwrap();
    let robots = dir.path().join("robots.txt");
    let body = "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /docs/ train-ai=y\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nDisallow: /private\n";
    std::fs::write(&robots, body).unwrap();
    let out = robotsieve()
        .args(["check", "--json", "--agent", "gptbot", "--robots"])
        .arg(&robots)
        .args(["https://example.com/docs/a", "https://example.com/private"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let signal = serde_json::json!({"field": "Content-Signal", "lines": [5], "values": {"ai-train": "no", "search": "yes", "ai-input": "yes"}});
    assert_eq!(
        lines[0]["preferences"],
        serde_json::json!([signal, {"field": "Content-Usage", "lines": [4], "values": {"train-ai": "y"}}])
    );
    assert_eq!(lines[1]["allowed"], false);
    assert_eq!(
        lines[1]["preferences"],
        serde_json::json!([signal, {"field": "Content-Usage", "lines": [3], "values": {"train-ai": "n"}}])
    );
}

#[test]
fn unreadable_files_and_bad_agents_exit_2() {
    let out =
        robotsieve().args(["check", "--agent", "mybot", "--robots", "/nonexistent/robots.txt", "/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/robots.txt"));
    let out = robotsieve().args(["check", "--agent", "mybot", "--rules", "/nonexistent/x.rsv", "/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.rsv");
    std::fs::write(&fake, "user-agent: *\ndisallow: /\n".repeat(10)).unwrap();
    let out = robotsieve()
        .args(["check", "--agent", "mybot", "--rules"])
        .arg(&fake)
        .arg("https://a.example/")
        .output()
        .unwrap();
    assert_exit_2(&out, "not a robotsieve artifact");
}

/// `check --rules --json` (compiled with --explain) names the same
/// preferences as `check --robots --json` for the same file; `filter
/// --explain --explain-preferences` ends each reason with them.
#[test]
fn preferences_through_the_artifact_equal_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let robots = dir.path().join("robots.txt");
    let body = "User-agent: *\nContent-Signal: ai-train=no, search=yes\nDisallow: /private\nContent-Usage: /docs/ train-ai=y\n\n\
                User-agent: gptbot\nDisallow: /\nContent-Usage: train-ai=n\n";
    std::fs::write(&robots, body).unwrap();
    let rules = dir.path().join("r.rsv");
    compile_robots(&robots, &rules, &["--agent", "gptbot", "--agent", "ccbot", "--explain"]);
    let urls = ["https://ex.com/docs/a", "https://ex.com/private", "https://ex.com/"];
    for agent in ["gptbot", "ccbot"] {
        let json = |source: &str, path: &std::path::Path| -> Vec<serde_json::Value> {
            let out =
                robotsieve().args(["check", "--json", "--agent", agent, source]).arg(path).args(urls).output().unwrap();
            assert!(out.status.success());
            out.stdout
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect()
        };
        let (from_file, from_rules) = (json("--robots", &robots), json("--rules", &rules));
        for (a, b) in from_file.iter().zip(&from_rules) {
            assert_eq!(a["preferences"], b["preferences"], "{agent}");
            assert_ne!(a["preferences"], serde_json::json!([]), "{agent}: {a}");
        }
    }
    let list = dir.path().join("urls.txt");
    std::fs::write(&list, urls.join("\n")).unwrap();
    let verdicts = dir.path().join("v.tsv");
    succeeds(
        robotsieve()
            .args(["filter", "--agent", "ccbot", "--explain", "--explain-preferences", "--rules"])
            .arg(&rules)
            .arg("--urls")
            .arg(&list)
            .arg("--verdicts")
            .arg(&verdicts),
    );
    assert_eq!(
        std::fs::read_to_string(&verdicts).unwrap(),
        "allowed\thttps://ex.com/docs/a\tno rule matched | Content-Signal (line 2): ai-train=no, search=yes; Content-Usage (line 4): train-ai=y\n\
         disallowed\thttps://ex.com/private\t3: disallow: /private | Content-Signal (line 2): ai-train=no, search=yes\n\
         allowed\thttps://ex.com/\tno rule matched | Content-Signal (line 2): ai-train=no, search=yes\n"
    );
}

/// `check --json` gives the origin's sitemaps and the crawler's crawl-delay
/// (kept, never used for the verdict), the same from the file (`--robots`)
/// and from the artifact (`--rules`); `inspect --origin` lists them.
#[test]
fn json_and_inspect_show_sitemaps_and_crawl_delays() {
    let dir = tempfile::tempdir().unwrap();
    let robots = dir.path().join("robots.txt");
    let body = "Sitemap: https://ex.com/a.xml\nUser-agent: gptbot\nCrawl-delay: 2.5\nDisallow: /private\n\n\
                User-agent: *\nDisallow: /x\nsitemap: https://ex.com/b.xml\n";
    std::fs::write(&robots, body).unwrap();
    let rules = dir.path().join("r.rsv");
    compile_robots(&robots, &rules, &["--agent", "gptbot", "--agent", "ccbot"]);
    let sitemaps = serde_json::json!(["https://ex.com/a.xml", "https://ex.com/b.xml"]);
    for (agent, delay) in [("gptbot", serde_json::json!("2.5")), ("ccbot", serde_json::Value::Null)] {
        for (source, path) in [("--robots", &robots), ("--rules", &rules)] {
            let out = succeeds(
                robotsieve()
                    .args(["check", "--json", "--agent", agent, source])
                    .arg(path)
                    .arg("https://ex.com/private"),
            );
            let line: serde_json::Value = serde_json::from_slice(out.stdout.trim_ascii_end()).unwrap();
            assert_eq!(line["sitemaps"], sitemaps, "{agent} {source}");
            assert_eq!(line["crawl_delay"], delay, "{agent} {source}");
            let delays = if delay.is_null() { serde_json::json!([]) } else { serde_json::json!([delay]) };
            assert_eq!(line["crawl_delays"], delays, "{agent} {source}");
            assert_eq!(line["allowed"], agent != "gptbot", "{agent} {source}: the verdict is the rules'");
        }
    }
    let out =
        robotsieve().args(["inspect", "--rules"]).arg(&rules).args(["--origin", "https://ex.com"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for expected in ["sitemap: https://ex.com/a.xml", "sitemap: https://ex.com/b.xml", "crawl-delay: 2.5"] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    assert_eq!(text.matches("crawl-delay").count(), 1, "only gptbot's group has one:\n{text}");
    // The whole-artifact view lists every section, the longest name among
    // them, with the sizes in one column.
    let out = robotsieve().args(["inspect", "--rules"]).arg(&rules).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let rows: Vec<&str> =
        text.lines().skip_while(|l| *l != "sections").skip(1).take_while(|l| l.starts_with("  ")).collect();
    assert!(rows.iter().any(|r| r.contains("sitemaps and crawl-delays")), "{text}");
    let ends: Vec<usize> = rows.iter().map(|r| r.find(" bytes").expect("a size")).collect();
    assert!(ends.len() >= 6 && ends.iter().all(|&e| e == ends[0]), "sizes out of column:\n{text}");
}
