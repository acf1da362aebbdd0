//! `robotsieve filter` as users run it: a tiny artifact compiled with
//! `robotsieve compile`, then URL lists through the binary.

use robotsieve_testkit::names_in;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{compile_example, robotsieve};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\nAllow: /private/ok\nDisallow: /caf%C3%A9\n\n\
                      User-agent: otherbot\nDisallow: /\n";

/// Lines of a frontier and the verdict each gets for mybot (after escaping).
const FRONTIER: [(&str, &str); 8] = [
    ("https://example.com/", "allowed"),
    ("https://example.com/private/x", "disallowed"),
    ("https://EXAMPLE.com:443/private/ok?q=1", "allowed"),
    ("https://other.org/a", "unknown"),
    ("not a url", "invalid"),
    ("https://example.com/café", "disallowed"),
    ("mailto:someone@example.com", "invalid"),
    ("http://example.com/private", "unknown"),
];

/// A directory holding `x.rsv`, compiled for mybot (with --explain) from
/// ROBOTS as https://example.com, and `urls.txt`: FRONTIER with CRLF line
/// ends, blank lines and no final newline.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    compile_example(dir.path(), ROBOTS);
    std::fs::write(dir.path().join("urls.txt"), frontier_text()).unwrap();
    dir
}

#[test]
fn compile_reports_the_time_of_each_phase() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), ROBOTS).unwrap();
    let compiled = robotsieve()
        .current_dir(dir.path())
        .args(["compile", "--robots", "robots.txt", "--origin", "https://example.com", "--agent", "mybot"])
        .args(["-o", "x.rsv"])
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&compiled.stderr);
    assert!(compiled.status.success(), "{summary}");
    let line = summary.lines().find(|l| l.starts_with("compiled 1 origins")).expect("a summary line");
    let (_, phases) = line.split_once(" in ").expect("a total time");
    let names: Vec<&str> =
        phases.split(": ").nth(1).unwrap_or("").split(", ").map(|p| p.split(' ').next().unwrap()).collect();
    assert_eq!(names, ["read", "automata", "written"], "{line}");
}

fn frontier_text() -> String {
    let lines: Vec<&str> = FRONTIER.iter().map(|(url, _)| *url).collect();
    format!("\r\n{}", lines.join("\r\n\r\n"))
}

fn filter(dir: &Path, args: &[&str]) -> Output {
    robotsieve().current_dir(dir).args(["filter", "--rules", "x.rsv", "--agent", "mybot"]).args(args).output().unwrap()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The URLs of FRONTIER with `verdict` (after folding unknown into `unknown_as`), as a list file.
fn expected_list(verdict: &str, unknown_as: &str) -> String {
    FRONTIER
        .iter()
        .filter(|(_, v)| if *v == "unknown" { unknown_as == verdict } else { *v == verdict })
        .map(|(url, _)| format!("{url}\n"))
        .collect()
}

#[test]
fn every_output_holds_its_urls_in_input_order() {
    let dir = setup();
    for threads in ["1", "2"] {
        let out = filter(
            dir.path(),
            &["--urls", "urls.txt", "--threads", threads, "--allowed", "ok.txt", "--disallowed", "blocked.txt"]
                .into_iter()
                .chain(["--unknown", "unknown.txt", "--invalid", "bad.txt", "--verdicts", "v.tsv"])
                .chain(["--stats", "stats.json"])
                .collect::<Vec<_>>(),
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "no progress bar off a terminal");
        for (file, verdict) in
            [("ok.txt", "allowed"), ("blocked.txt", "disallowed"), ("unknown.txt", "unknown"), ("bad.txt", "invalid")]
        {
            assert_eq!(read(dir.path(), file), expected_list(verdict, "unknown"), "{file}");
        }
        let verdicts: String = FRONTIER.iter().map(|(url, v)| format!("{v}\t{url}\n")).collect();
        assert_eq!(read(dir.path(), "v.tsv"), verdicts);

        let stats: serde_json::Value = serde_json::from_str(&read(dir.path(), "stats.json")).unwrap();
        assert_eq!(stats["urls"], 8);
        assert_eq!(stats["counts"], serde_json::json!({"allowed": 2, "disallowed": 2, "unknown": 2, "invalid": 2}));
        assert_eq!(stats["input_bytes"], frontier_text().len());
        assert_eq!(stats["threads"], threads.parse::<u64>().unwrap());
        assert!(stats["elapsed_seconds"].as_f64().unwrap() > 0.0);
        assert!(stats["urls_per_second"].as_f64().unwrap() > 0.0);
        assert!(stats["bytes_per_second"].as_f64().unwrap() > 0.0);
        assert_eq!(stats["by_robots_fetch"]["rules"], serde_json::json!({"urls": 4, "origins": 1}));
    }
}

#[test]
fn explain_names_the_deciding_line() {
    let dir = setup();
    let out = filter(dir.path(), &["--urls", "urls.txt", "--verdicts", "v.tsv", "--explain"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = read(dir.path(), "v.tsv");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), FRONTIER.len());
    assert!(lines.iter().all(|l| l.split('\t').count() == 3), "{text}");
    assert_eq!(lines[1], "disallowed\thttps://example.com/private/x\t2: disallow: /private");
    assert_eq!(lines[2], "allowed\thttps://EXAMPLE.com:443/private/ok?q=1\t3: allow: /private/ok");
}

#[test]
fn unknown_as_folds_unknown_everywhere() {
    let dir = setup();
    for unknown_as in ["allowed", "disallowed"] {
        let out = filter(
            dir.path(),
            &["--urls", "urls.txt", "--unknown-as", unknown_as, "--allowed", "ok.txt", "--disallowed", "blocked.txt"]
                .into_iter()
                .chain(["--verdicts", "v.tsv", "--stats", "stats.json"])
                .collect::<Vec<_>>(),
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(read(dir.path(), "ok.txt"), expected_list("allowed", unknown_as));
        assert_eq!(read(dir.path(), "blocked.txt"), expected_list("disallowed", unknown_as));
        assert!(!read(dir.path(), "v.tsv").contains("unknown"));
        let stats: serde_json::Value = serde_json::from_str(&read(dir.path(), "stats.json")).unwrap();
        assert_eq!(stats["counts"]["unknown"], 0);
        assert_eq!(stats["counts"][unknown_as], 4);
    }
}

#[test]
fn raw_urls_match_the_path_byte_for_byte() {
    let dir = setup();
    let out = filter(dir.path(), &["--urls", "urls.txt", "--raw-urls", "--disallowed", "blocked.txt"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // `/café` is not `/caf%C3%A9` byte for byte.
    assert_eq!(read(dir.path(), "blocked.txt"), "https://example.com/private/x\n");
}

/// Compressed and piped frontiers give the same outputs as the plain file.
#[test]
fn gzip_zstd_and_standard_input_are_read_like_the_file() {
    let dir = setup();
    let text = frontier_text();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(dir.path().join("urls.txt.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(dir.path().join("urls.txt.zst"), zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    let expected: String = FRONTIER.iter().map(|(url, v)| format!("{v}\t{url}\n")).collect();
    for input in ["urls.txt.gz", "urls.txt.zst"] {
        let out = filter(dir.path(), &["--urls", input, "--verdicts", "v.tsv", "--stats", "s.json"]);
        assert!(out.status.success(), "{input}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(read(dir.path(), "v.tsv"), expected, "{input}");
        let stats: serde_json::Value = serde_json::from_str(&read(dir.path(), "s.json")).unwrap();
        assert_eq!(stats["input_bytes"], text.len(), "{input}: bytes after decompression");
    }

    let mut child = robotsieve()
        .current_dir(dir.path())
        .args(["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "-", "--verdicts", "v.tsv"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read(dir.path(), "v.tsv"), expected, "standard input");
}

#[test]
fn a_corrupt_compressed_input_fails_naming_it_and_leaves_no_output() {
    let dir = setup();
    std::fs::write(dir.path().join("urls.txt.gz"), b"\x1f\x8b\x08\x00 not really gzip").unwrap();
    let before = names_in(dir.path());
    let out = filter(dir.path(), &["--urls", "urls.txt.gz", "--allowed", "ok.txt", "--stats", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("robotsieve: urls.txt.gz: "), "{stderr}");
    assert_eq!(names_in(dir.path()), before, "no output, no temporary file");
}

#[test]
fn an_output_that_cannot_be_created_fails_the_run_and_leaves_no_file() {
    let dir = setup();
    let before = names_in(dir.path());
    let out = filter(dir.path(), &["--urls", "urls.txt", "--allowed", "ok.txt", "--disallowed", "no/such/dir/b.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no/such/dir/b.txt"), "{stderr}");
    assert_eq!(names_in(dir.path()), before);
}

#[test]
fn binary_input_is_classified_not_a_crash() {
    let dir = setup();
    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(dir.path().join("junk.bin"), &bytes).unwrap();
    let out = filter(dir.path(), &["--urls", "junk.bin", "--invalid", "bad.txt", "--stats", "s.json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stats: serde_json::Value = serde_json::from_str(&read(dir.path(), "s.json")).unwrap();
    let lines = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty() && *l != b"\r").count();
    assert_eq!(stats["urls"], lines);
}

#[test]
fn user_errors_name_the_problem() {
    let dir = setup();
    let cases: [(&[&str], &str); 7] = [
        (&["--urls", "missing.txt", "--allowed", "ok.txt"], "missing.txt"),
        (&["--urls", "urls.txt"], "nothing to write"),
        (&["--urls", "urls.txt", "--allowed", "a.txt", "--disallowed", "a.txt"], "--allowed and --disallowed"),
        (&["--urls", "urls.txt", "--allowed", "urls.txt"], "names the input file"),
        (&["--urls", "urls.txt", "--allowed", "-", "--verdicts", "-"], "--allowed and --verdicts name the same file -"),
        (&["--urls", "urls.txt", "--explain", "--allowed", "a.txt"], "--verdicts"),
        (&["--urls", "urls.txt", "--unknown", "u.txt", "--unknown-as", "allowed"], "--unknown-as"),
    ];
    for (args, message) in cases {
        let out = filter(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(message), "{args:?}: {stderr}");
    }

    let out = robotsieve()
        .current_dir(dir.path())
        .args(["filter", "--rules", "x.rsv", "--agent", "otherbot", "--urls", "urls.txt", "--allowed", "a.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("x.rsv: built for mybot, not for otherbot"), "{stderr}");

    let missing: PathBuf = dir.path().join("nope.rsv");
    let out = robotsieve()
        .current_dir(dir.path())
        .args(["filter", "--rules", missing.to_str().unwrap(), "--agent", "mybot", "--urls", "-", "--allowed", "a"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.rsv"));
    assert_eq!(names_in(dir.path()), ["robots.txt", "urls.txt", "x.rsv"], "no output of a failed run");
}

/// Starts `robotsieve filter` on an endless frontier fed through standard
/// input, with its outputs in a fresh directory; once a hidden temporary
/// output holds data (the run is writing), sends `signal` with kill(1). The
/// run must exit with `status`, say so, and leave the directory empty: no
/// output under its final name, no temporary file.
#[cfg(unix)]
fn interrupted_run_leaves_no_file(signal: &str, status: i32) {
    let dir = setup();
    let out = tempfile::tempdir().unwrap();
    let target = |name: &str| out.path().join(name).to_str().unwrap().to_string();
    let mut child = robotsieve()
        .current_dir(dir.path())
        .args(["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "-", "--threads", "2"])
        .args(["--allowed", &target("ok.txt"), "--disallowed", &target("blocked.txt")])
        .args(["--verdicts", &target("v.tsv"), "--stats", &target("stats.json")])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Writes the frontier over and over until the run is gone (broken pipe).
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let block = format!("{}\n", FRONTIER.map(|(url, _)| url).join("\n")).repeat(4096);
        while stdin.write_all(block.as_bytes()).is_ok() {}
    });

    let started = std::time::Instant::now();
    loop {
        let writing = std::fs::read_dir(out.path()).unwrap().any(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with('.') && name.ends_with(".tmp") && entry.metadata().is_ok_and(|m| m.len() > 0)
        });
        if writing {
            break;
        }
        if let Some(exit) = child.try_wait().unwrap() {
            panic!("the run ended before it wrote anything: {exit}");
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("no temporary output with data after 120 s: {:?}", names_in(out.path()));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(names_in(out.path()).iter().all(|name| name.starts_with('.')), "nothing under a final name mid-run");

    let kill = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    assert!(kill.success(), "kill -{signal}");
    let result = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(status), "{signal}: {:?}, stderr: {stderr}", result.status);
    assert!(stderr.contains(&format!("interrupted by SIG{signal}")), "{stderr}");
    assert_eq!(names_in(out.path()), Vec::<String>::new(), "{signal}: no output, no temporary file");
}

#[cfg(unix)]
#[test]
fn sigint_mid_run_removes_every_output_and_exits_130() {
    interrupted_run_leaves_no_file("INT", 130);
}

#[cfg(unix)]
#[test]
fn sigterm_mid_run_removes_every_output_and_exits_143() {
    interrupted_run_leaves_no_file("TERM", 143);
}

#[cfg(unix)]
#[test]
fn sighup_mid_run_removes_every_output_and_exits_129() {
    interrupted_run_leaves_no_file("HUP", 129);
}

/// `--unknown-origins`: the robots.txt URL of every origin the artifact does
/// not hold, once each, in the order its first URL came, on a small corpus
/// and a list long enough for many chunks and both threads; `--unknown` is
/// written alongside unchanged; with `--unknown-as` it is refused.
#[test]
fn unknown_origins_lists_each_missing_robots_txt_once_in_first_seen_order() {
    use robotsieve_core::url::OriginKey;
    let dir = tempfile::tempdir().unwrap();
    let corpus = [
        r#"{"url": "https://example.com/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /private\n"}"#,
        r#"{"url": "http://b.example/robots.txt", "status": 404}"#,
        r#"{"url": "https://c.example:8443/robots.txt", "status": 503}"#,
    ];
    std::fs::write(dir.path().join("corpus.jsonl"), corpus.join("\n")).unwrap();
    let out = robotsieve()
        .current_dir(dir.path())
        .args(["compile", "--agent", "mybot", "--corpus", "corpus.jsonl", "-o", "x.rsv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Known origins, unknown ones in several spellings of one origin, other
    // ports and schemes of known hosts, and lines that are no URL.
    let mut urls: Vec<String> = vec![
        "https://example.com/a".into(),
        "https://z.example/x".into(),
        "HTTPS://Z.example:443/y".into(),
        "not a url".into(),
        "http://example.com/".into(),
        "https://c.example/".into(),
        "http://b.example/ok".into(),
        "https://c.example:8443/blocked".into(),
        "http://z.example/".into(),
    ];
    let mut state = 12345u64;
    for i in 0..60_000 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let host = (state >> 33) % 1500;
        urls.push(match i % 4 {
            0 => format!("https://u{host}.example/page/{i}"),
            1 => format!("https://example.com/p/{i}"),
            2 => format!("http://U{host}.example:80/q?{i}"),
            _ => format!("https://u{host}.example:8080/{i}"),
        });
    }
    std::fs::write(dir.path().join("urls.txt"), urls.join("\n")).unwrap();
    let known = ["https://example.com", "http://b.example", "https://c.example:8443"];
    let mut expected = String::new();
    let mut seen = std::collections::HashSet::new();
    let mut unknown_urls = String::new();
    for url in &urls {
        let Ok(key) = OriginKey::of_url(url) else { continue };
        if known.contains(&key.to_string().as_str()) {
            continue;
        }
        unknown_urls.push_str(&format!("{url}\n"));
        if seen.insert(key.to_string()) {
            expected.push_str(&format!("{}\n", key.robots_url()));
        }
    }
    assert!(expected.starts_with(
        "https://z.example/robots.txt\nhttp://example.com/robots.txt\nhttps://c.example/robots.txt\nhttp://z.example/robots.txt\n"
    ));
    assert!(seen.len() > 3000, "{} unknown origins", seen.len());
    for threads in ["1", "2"] {
        let out = robotsieve()
            .current_dir(dir.path())
            .args(["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "urls.txt", "--threads", threads])
            .args(["--unknown-origins", "fetch.txt"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(read(dir.path(), "fetch.txt") == expected, "{threads} threads: --unknown-origins alone");
        let out = robotsieve()
            .current_dir(dir.path())
            .args(["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "urls.txt", "--threads", threads])
            .args(["--unknown-origins", "fetch2.txt", "--unknown", "unknown.txt", "--allowed", "ok.txt"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(read(dir.path(), "fetch2.txt") == expected, "{threads} threads: with --unknown");
        assert!(read(dir.path(), "unknown.txt") == unknown_urls, "{threads} threads: --unknown unchanged");
    }
    for extra in [&["--unknown-as", "allowed"][..], &["--unknown", "fetch3.txt"]] {
        let out = robotsieve()
            .current_dir(dir.path())
            .args(["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "urls.txt"])
            .args(["--unknown-origins", "fetch3.txt"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(!dir.path().join("fetch3.txt").exists());
    }
}

#[test]
fn partitioned_and_windowed_runs_write_the_same_files() {
    let dir = setup();
    // FRONTIER's lines over many hosts (the unknown ones), a frontier of
    // several chunks, CRLF and no final newline included.
    let mut text = String::new();
    for i in 0..60_000 {
        let (url, _) = FRONTIER[i % FRONTIER.len()];
        text.push_str(&url.replace("other.org", &format!("other{}.org", i / FRONTIER.len() % 5000)));
        text.push_str(if i % 2 == 0 { "\r\n" } else { "\n" });
    }
    text.push_str("https://example.com/private/last");
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    let outputs = ["allowed", "disallowed", "unknown", "invalid", "verdicts", "unknown-origins"];
    let mut written = Vec::new();
    for (grouping, threads) in [("windowed", "1"), ("partitioned", "1"), ("partitioned", "2")] {
        let mut args: Vec<String> =
            ["--urls", "big.txt", "--threads", threads, "--grouping", grouping, "--temp-dir", "tmp"]
                .map(String::from)
                .into();
        let names: Vec<String> = outputs.iter().map(|o| format!("{grouping}-{threads}.{o}")).collect();
        for (flag, name) in outputs.iter().zip(&names) {
            args.extend([format!("--{flag}"), name.clone()]);
        }
        let stats = format!("{grouping}-{threads}.json");
        args.extend(["--stats".to_string(), stats.clone()]);
        let out = filter(dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let files: Vec<String> = names.iter().map(|name| read(dir.path(), name)).collect();
        let mut stats: serde_json::Value = serde_json::from_str(&read(dir.path(), &stats)).unwrap();
        for timing in ["elapsed_seconds", "urls_per_second", "bytes_per_second", "threads"] {
            stats[timing] = serde_json::Value::Null;
        }
        written.push((files, stats));
        assert!(names_in(&dir.path().join("tmp")).is_empty(), "the temporary files are unnamed");
    }
    assert_eq!(written[0].1["urls"], 60_001);
    assert_eq!(written[0].1["by_robots_fetch"]["rules"]["origins"], 1);
    // Every unknown origin once: the 5,000 hosts and http://example.com.
    assert_eq!(written[0].0[5].lines().count(), 5001);
    for other in &written[1..] {
        assert_eq!(other, &written[0]);
    }
}
