//! `filter --matrix`: one pass for several crawlers gives, URL by URL, what
//! one `filter` run per crawler gives; on the crawl2019 list compiled from
//! its own robots.txt files, and on a synthetic frontier (20,000 URLs here;
//! benches/scripts/matrix.sh compares a million and measures the cost).

use robotsieve_testkit::frontier::{corpus_of, Frontier};
use robotsieve_testkit::shared_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::{assert_exit_2, robotsieve, succeeds};

const AGENTS: [&str; 5] = ["gptbot", "ccbot", "claudebot", "google-extended", "googlebot"];

/// Runs `filter --rules RULES --urls URLS` with `args`, then `out`'s path.
fn filter(rules: &Path, urls: &Path, args: &[&str], out: &Path) {
    succeeds(robotsieve().arg("filter").arg("--rules").arg(rules).arg("--urls").arg(urls).args(args).arg(out));
}

/// Compiles the fetch records `corpus` (JSON Lines) for AGENTS, and
/// returns the artifact's path.
fn compile(dir: &Path, corpus: &str) -> PathBuf {
    let path = dir.join("corpus.jsonl");
    std::fs::write(&path, corpus).unwrap();
    let rules = dir.join("rules.rsv");
    let mut compile = robotsieve();
    compile.arg("compile").arg("--corpus").arg(&path).arg("-o").arg(&rules);
    for agent in AGENTS {
        compile.args(["--agent", agent]);
    }
    succeeds(&mut compile);
    rules
}

/// Runs the matrix with `--all-agents` and with `--agent` repeated in
/// another order, and `filter --verdicts` once per crawler, and compares
/// them URL by URL. Returns the number of rows.
fn matrix_equals_one_run_per_crawler(dir: &Path, rules: &Path, urls: &Path) -> usize {
    let matrix = dir.join("matrix.tsv");
    filter(rules, urls, &["--all-agents", "--matrix"], &matrix);
    let text = std::fs::read_to_string(&matrix).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), format!("url\t{}", AGENTS.join("\t")));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.rsplitn(AGENTS.len() + 1, '\t').collect()).collect();
    let mut per_crawler = Vec::new();
    for agent in AGENTS {
        let verdicts = dir.join(format!("{agent}.tsv"));
        filter(rules, urls, &["--agent", agent, "--verdicts"], &verdicts);
        per_crawler.push(std::fs::read_to_string(&verdicts).unwrap());
    }
    let per_crawler: Vec<Vec<(&str, &str)>> =
        per_crawler.iter().map(|t| t.lines().map(|l| l.split_once('\t').unwrap()).collect()).collect();
    let mut by_verdict: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        // rsplitn: the verdicts last to first, then the URL.
        let url = row[AGENTS.len()];
        for (c, runs) in per_crawler.iter().enumerate() {
            let (verdict, single_url) = runs[i];
            assert_eq!(single_url, url, "row {i}");
            assert_eq!(row[AGENTS.len() - 1 - c], verdict, "{url} for {}", AGENTS[c]);
            *by_verdict.entry(verdict).or_default() += 1;
        }
    }
    for runs in &per_crawler {
        assert_eq!(runs.len(), rows.len());
    }
    // Every verdict occurs, and the crawlers do not all agree: the
    // comparison is not between columns that are all the same.
    for verdict in ["allowed", "disallowed", "unknown", "invalid"] {
        assert!(by_verdict.get(verdict).copied().unwrap_or(0) > 0, "no {verdict} URL: {by_verdict:?}");
    }
    assert!(
        rows.iter().any(|r| r[..AGENTS.len()].iter().any(|v| *v != r[0])),
        "every crawler gave every URL the same verdict"
    );

    // --agent repeated, in another order, gives the same columns reordered.
    let reordered = dir.join("reordered.tsv");
    filter(rules, urls, &["--agent", "googlebot", "--agent", "gptbot", "--matrix"], &reordered);
    let reordered = std::fs::read_to_string(&reordered).unwrap();
    for (line, row) in reordered.lines().skip(1).zip(&rows) {
        let cols: Vec<&str> = line.rsplitn(3, '\t').collect();
        assert_eq!((cols[1], cols[0]), (row[0], row[AGENTS.len() - 1]), "{line}");
    }
    rows.len()
}

/// A few lines no robots.txt covers: unknown origins and lines that are not URLs.
const EXTRA_LINES: &str = "https://no-robots.example/a\nnot a url\nmailto:x@example.com\n";

#[test]
fn matrix_equals_filter_per_crawler_on_crawl2019() {
    let Some(root) = shared_dir().map(|d| d.join("realworld")).filter(|d| d.join("urls").is_dir()) else {
        eprintln!("skipped: ../shared/realworld is absent");
        return;
    };
    let list = std::fs::read_to_string(root.join("urls/crawl2019-linkgraph.tsv")).unwrap();
    let mut files = BTreeMap::new();
    let mut urls = String::new();
    for line in list.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if !cols[2].is_empty() {
            files.entry(cols[0].to_string()).or_insert_with(|| root.join(cols[2]));
        }
        urls.push_str(cols[1]);
        urls.push('\n');
    }
    urls.push_str(EXTRA_LINES);
    let dir = tempfile::tempdir().unwrap();
    let rules = compile(dir.path(), &corpus_of(&files));
    let list = dir.path().join("urls.txt");
    std::fs::write(&list, urls).unwrap();
    let rows = matrix_equals_one_run_per_crawler(dir.path(), &rules, &list);
    eprintln!("crawl2019: {rows} rows, {} crawlers, equal to one run per crawler", AGENTS.len());
}

#[test]
fn matrix_equals_filter_per_crawler_on_a_synthetic_frontier() {
    let Some(frontier) = Frontier::generate(20_000, 7) else { return };
    let dir = tempfile::tempdir().unwrap();
    let urls = format!("{}{EXTRA_LINES}", frontier.urls);
    let rules = compile(dir.path(), &frontier.corpus());
    let list = dir.path().join("urls.txt");
    std::fs::write(&list, urls).unwrap();
    let rows = matrix_equals_one_run_per_crawler(dir.path(), &rules, &list);
    assert!(rows > 20_000);
    eprintln!("synthetic frontier: {rows} rows over {} hosts, equal to one run per crawler", frontier.robots.len());
}

#[test]
fn repeated_agent_without_matrix_is_an_error() {
    let out = robotsieve()
        .args(["filter", "--rules", "x.rsv", "--urls", "u.txt", "--agent", "a", "--agent", "b", "--stats", "s.json"])
        .output()
        .unwrap();
    assert_exit_2(&out, "--agent given 2 times");
    let out = robotsieve()
        .args(["filter", "--rules", "x.rsv", "--urls", "u.txt", "--all-agents", "--stats", "s.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `filter --stats` says whose verdicts its top-level `counts` are
/// (`agent`): with --matrix the first crawler's, and `by_agent` holds every
/// crawler's, each what a run for that crawler alone counts.
#[test]
fn matrix_stats_say_which_crawler_they_count() {
    let dir = tempfile::tempdir().unwrap();
    let records = [
        ("a.example", "user-agent: gptbot\ndisallow: /\n\nuser-agent: *\ndisallow: /private\n"),
        ("b.example", "user-agent: googlebot\ndisallow: /x\n"),
    ];
    let mut corpus = String::new();
    for (host, body) in records {
        corpus.push_str(&format!(
            "{}\n",
            serde_json::json!({"url": format!("https://{host}/robots.txt"), "status": 200, "body": body})
        ));
    }
    std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
    succeeds(robotsieve().current_dir(dir.path()).args([
        "compile",
        "--corpus",
        "corpus.jsonl",
        "-o",
        "r.rsv",
        "--agent",
        "googlebot",
        "--agent",
        "gptbot",
    ]));
    let urls = "https://a.example/\nhttps://a.example/other\nhttps://a.example/private\nhttps://b.example/x\nhttps://c.example/\nnot a url\n";
    std::fs::write(dir.path().join("u.txt"), urls).unwrap();
    let stats = |args: &[&str], out: &str| -> serde_json::Value {
        let base = ["filter", "--rules", "r.rsv", "--urls", "u.txt", "--stats", out];
        succeeds(robotsieve().current_dir(dir.path()).args(base).args(args));
        serde_json::from_slice(&std::fs::read(dir.path().join(out)).unwrap()).unwrap()
    };
    let single: BTreeMap<&str, serde_json::Value> =
        AGENTS_OF_STATS.iter().map(|&a| (a, stats(&["--agent", a], &format!("{a}.json")))).collect();
    for (agent, document) in &single {
        assert_eq!(document["agent"], *agent);
    }
    // The two crawlers differ, so that counting the wrong one shows.
    assert_ne!(single["gptbot"]["counts"], single["googlebot"]["counts"]);
    assert_eq!(single["gptbot"]["counts"]["disallowed"], 3);
    assert_eq!(single["googlebot"]["counts"]["disallowed"], 2);
    assert_eq!(single["googlebot"]["counts"]["allowed"], 2);
    for order in [["gptbot", "googlebot"], ["googlebot", "gptbot"]] {
        let matrix = stats(&["--agent", order[0], "--agent", order[1], "--matrix", "m.tsv"], "m.json");
        assert_eq!(matrix["agent"], order[0]);
        assert_eq!(matrix["counts"], single[order[0]]["counts"]);
        for agent in order {
            assert_eq!(matrix["by_agent"][agent], single[agent]["counts"], "{agent}");
        }
    }
}

const AGENTS_OF_STATS: [&str; 2] = ["googlebot", "gptbot"];
