//! `robotsieve survey`: the figures of a small frontier worked out by hand,
//! the agents file read as Google reads user-agent lines, the SVG chart, and
//! the per-crawler counts against `filter --matrix --stats`.

use std::path::Path;
use std::process::Output;

mod common;
use common::{robotsieve, succeeds};

/// a.com: `*` carries preferences and disallows /private; gptbot's own group
/// disallows everything. b.com: `*` disallows everything. c.com: a group
/// named `AI` disallows /x. d.com answered 503.
fn setup(dir: &Path) {
    let files = [
        ("a.txt", "User-agent: *\nContent-Signal: ai-train=no, search=yes\nDisallow: /private\nContent-Usage: /docs/ train-ai=y\n\nUser-agent: gptbot\nDisallow: /\nContent-Usage: train-ai=n\n"),
        ("b.txt", "User-agent: *\nDisallow: /\n"),
        ("c.txt", "User-agent: AI\nDisallow: /x\n"),
    ];
    for (name, body) in files {
        std::fs::write(dir.join(name), body).unwrap();
    }
    std::fs::write(dir.join("d.jsonl"), "{\"url\": \"https://d.com/robots.txt\", \"status\": 503, \"body\": \"\"}\n")
        .unwrap();
    std::fs::write(
        dir.join("agents.json"),
        r#"{"GPTBot": {}, "AI2Bot": {}, "Ai2Bot-Dolma": {}, "Kangaroo Bot": {}, "CCBot": {}}"#,
    )
    .unwrap();
    let urls = "https://a.com/docs/x\nhttps://a.com/private\nhttps://a.com/\nhttps://b.com/\nhttps://c.com/x\nhttps://d.com/\nhttps://zz.com/\nbad\n";
    std::fs::write(dir.join("urls.txt"), urls).unwrap();
    let out = compile(dir, &["-o", "s.rsv"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for warned in ["\"AI2Bot\"", "\"Kangaroo Bot\"", "\"Ai2Bot-Dolma\" reads as \"Ai\", already listed"] {
        assert!(stderr.contains(warned), "{warned}: {stderr}");
    }
}

/// Compiles the files `setup` writes in `dir` (a.com, b.com and c.com's
/// robots.txt, d.com's 503) for the crawlers of agents.json, with `out`
/// (where to, and how many shards).
fn compile(dir: &Path, out: &[&str]) -> Output {
    succeeds(
        robotsieve()
            .current_dir(dir)
            .args(["compile", "--agents-file", "agents.json", "--corpus", "d.jsonl"])
            .args(["--robots", "a.txt", "--origin", "https://a.com", "--robots", "b.txt", "--origin", "https://b.com"])
            .args(["--robots", "c.txt", "--origin", "https://c.com"])
            .args(out),
    )
}

#[test]
fn figures_of_a_small_frontier() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = succeeds(
        robotsieve()
            .current_dir(dir.path())
            .args([
                "survey",
                "--rules",
                "s.rsv",
                "--urls",
                "urls.txt",
                "--agents-file",
                "agents.json",
                "--json",
                "-o",
                "s.json",
            ])
            .args(["--plot", "s.svg"]),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"Kangaroo Bot\" is not a product token"));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).unwrap()).unwrap();
    assert_eq!((doc["urls"].as_u64(), doc["urls_with_robots"].as_u64()), (Some(8), Some(6)));
    assert_eq!(
        (doc["urls_unknown"].as_u64(), doc["urls_invalid"].as_u64(), doc["origins_reached"].as_u64()),
        (Some(1), Some(1), Some(4))
    );
    let agents: Vec<&str> = doc["agents"].as_array().unwrap().iter().map(|a| a["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["ai", "ccbot", "gptbot", "kangaroo"], "names read as Google reads them, repeats once");
    let agent = |name: &str| doc["agents"].as_array().unwrap().iter().find(|a| a["agent"] == name).unwrap().clone();
    let gptbot = agent("gptbot");
    // gptbot: a.com (3 URLs, own group disallows /), b.com (* disallows /), c.com allowed, d.com blocked.
    assert_eq!(gptbot["urls"]["disallowed"], 5);
    assert_eq!(gptbot["urls"]["allowed"], 1);
    assert_eq!(
        gptbot["origins_fully_blocked"],
        serde_json::json!({"by_name": 1, "only_by_star": 1, "by_fetch_result": 1})
    );
    let ai = agent("ai");
    // ai: named on c.com but only /x is disallowed; a.com's `*` disallows /private.
    assert_eq!(ai["origins_fully_blocked"], serde_json::json!({"by_name": 0, "only_by_star": 1, "by_fetch_result": 1}));
    assert_eq!(ai["origins_with_disallowed_url"], 4);
    assert_eq!(ai["urls"]["disallowed"], 4);
    let ccbot = agent("ccbot");
    assert_eq!(ccbot["origins_with_disallowed_url"], 3);
    let prefs: Vec<(String, u64, u64)> = doc["preferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                format!(
                    "{}: {}={}",
                    p["field"].as_str().unwrap(),
                    p["key"].as_str().unwrap(),
                    p["value"].as_str().unwrap()
                ),
                p["origins"].as_u64().unwrap(),
                p["urls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        prefs,
        [
            ("Content-Signal: ai-train=no".to_string(), 1, 3),
            ("Content-Signal: search=yes".to_string(), 1, 3),
            ("Content-Usage: train-ai=n".to_string(), 1, 3),
            ("Content-Usage: train-ai=y".to_string(), 1, 1),
        ]
    );
    let svg = std::fs::read_to_string(dir.path().join("s.svg")).unwrap();
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    for label in ["gptbot", "kangaroo", "Content-Signal: ai-train=no", "1 by name, 1 by *, 1 by fetch"] {
        assert!(svg.contains(label), "{label} missing from the chart");
    }
}

#[test]
fn survey_counts_equal_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    succeeds(
        robotsieve()
            .current_dir(dir.path())
            .args(["survey", "--rules", "s.rsv", "--urls", "urls.txt", "--json", "-o", "s.json"]),
    );
    succeeds(robotsieve().current_dir(dir.path()).args([
        "filter",
        "--rules",
        "s.rsv",
        "--urls",
        "urls.txt",
        "--all-agents",
        "--matrix",
        "m.tsv",
        "--stats",
        "m.json",
    ]));
    let survey: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).unwrap()).unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("m.json")).unwrap()).unwrap();
    for a in survey["agents"].as_array().unwrap() {
        assert_eq!(a["urls"], stats["by_agent"][a["agent"].as_str().unwrap()], "{}", a["agent"]);
    }
}

/// Through a shard set of the same files, `survey`, `filter --matrix` and
/// `check --json` (with its preferences) answer exactly as through the one
/// artifact: preference sets, named groups and verdicts are found in each
/// origin's shard.
#[test]
fn a_shard_set_surveys_as_the_one_artifact() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    compile(dir.path(), &["--shards", "3", "-o", "set"]);
    let shards = std::fs::read_dir(dir.path().join("set")).unwrap().count();
    assert_eq!(shards, 3);
    let survey = |rules: &str| {
        let out = format!("{rules}.survey.json");
        succeeds(
            robotsieve()
                .current_dir(dir.path())
                .args(["survey", "--rules", rules, "--urls", "urls.txt", "--json", "-o", &out]),
        );
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(dir.path().join(out)).unwrap()).unwrap()
    };
    let (one, set) = (survey("s.rsv"), survey("set"));
    assert!(one["agents"].as_array().is_some_and(|a| !a.is_empty()), "{one}");
    assert_eq!(one, set);
    let matrix = |rules: &str| {
        let out = format!("{rules}.matrix.tsv");
        succeeds(robotsieve().current_dir(dir.path()).args([
            "filter",
            "--rules",
            rules,
            "--urls",
            "urls.txt",
            "--all-agents",
            "--matrix",
            &out,
        ]));
        std::fs::read_to_string(dir.path().join(out)).unwrap()
    };
    let (one, set) = (matrix("s.rsv"), matrix("set"));
    assert!(one.contains("disallowed"), "{one}");
    assert_eq!(one, set);
    let check = |rules: &str| {
        let out = succeeds(robotsieve().current_dir(dir.path()).args([
            "check",
            "--json",
            "--agent",
            "gptbot",
            "--rules",
            rules,
            "https://a.com/docs/x",
            "https://a.com/",
        ]));
        String::from_utf8(out.stdout).unwrap()
    };
    let (one, set) = (check("s.rsv"), check("set"));
    assert!(one.contains("train-ai"), "{one}");
    assert_eq!(one, set);
}
