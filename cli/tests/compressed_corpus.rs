//! `compile --corpus` with gzip and zstd JSON Lines and several inputs in
//! one run, through the real binary: compressed files compile as the plain
//! file does, and one cut short is exit status 2 with a message naming the
//! file and the line it reached, leaving no artifact behind.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn robotsieve(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_robotsieve")).current_dir(dir).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `count` fetch records from `first` on, each host disallowing its own path.
fn jsonl(first: usize, count: usize) -> Vec<u8> {
    let mut text = String::new();
    for i in first..first + count {
        let body = format!("user-agent: *\ndisallow: /private-{i}\n");
        let record =
            serde_json::json!({"url": format!("https://h{i}.example/robots.txt"), "status": 200, "body": body});
        text.push_str(&format!("{record}\n"));
    }
    text.into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `check`'s verdict for `url` under the artifact `rules`.
fn verdict(dir: &Path, rules: &str, url: &str) -> String {
    let out = robotsieve(dir, &["check", "--rules", rules, "--agent", "mybot", url]);
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or("").to_string()
}

#[test]
fn gzip_zstd_and_plain_inputs_compile_together_as_one_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("all.jsonl"), jsonl(0, 300)).unwrap();
    std::fs::write(d.join("a.jsonl.gz"), gzip(&jsonl(0, 100))).unwrap();
    std::fs::write(d.join("b.jsonl.zst"), zstd::encode_all(&jsonl(100, 100)[..], 3).unwrap()).unwrap();
    std::fs::write(d.join("c.jsonl"), jsonl(200, 100)).unwrap();
    let whole = robotsieve(d, &["compile", "--agent", "mybot", "--corpus", "all.jsonl", "-o", "whole.rsv"]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let parts = robotsieve(
        d,
        &[
            "compile",
            "--agent",
            "mybot",
            "--corpus",
            "a.jsonl.gz",
            "--corpus",
            "b.jsonl.zst",
            "--corpus",
            "c.jsonl",
            "-o",
            "parts.rsv",
        ],
    );
    assert!(parts.status.success(), "{}", stderr(&parts));
    assert!(stderr(&parts).contains("compiled 300 origins"), "{}", stderr(&parts));
    // One --corpus with several files, as a shell glob gives them.
    let globbed = robotsieve(
        d,
        &["compile", "--agent", "mybot", "--corpus", "a.jsonl.gz", "b.jsonl.zst", "c.jsonl", "-o", "globbed.rsv"],
    );
    assert!(globbed.status.success(), "{}", stderr(&globbed));
    assert_eq!(std::fs::read(d.join("globbed.rsv")).unwrap(), std::fs::read(d.join("parts.rsv")).unwrap());
    for i in [0, 99, 100, 199, 200, 299] {
        for (path, wanted) in [(format!("/private-{i}/x"), "disallowed"), (format!("/private-{}/x", i + 1), "allowed")]
        {
            let url = format!("https://h{i}.example{path}");
            assert_eq!(verdict(d, "whole.rsv", &url), wanted, "{url}");
            assert_eq!(verdict(d, "parts.rsv", &url), wanted, "{url}");
        }
    }
}

#[test]
fn a_compressed_corpus_cut_short_is_exit_2_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Many zstd blocks (128 KiB each), so the cut falls after some lines.
    let plain = jsonl(0, 20_000);
    for (name, whole) in [("cut.jsonl.gz", gzip(&plain)), ("cut.jsonl.zst", zstd::encode_all(&plain[..], 3).unwrap())] {
        std::fs::write(d.join(name), &whole[..whole.len() * 2 / 3]).unwrap();
        let out = robotsieve(d, &["compile", "--agent", "mybot", "--corpus", name, "-o", "cut.rsv"]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let message = stderr(&out);
        let line = message
            .strip_prefix(&format!("robotsieve: {name}:"))
            .or_else(|| message.split_once(&format!("{name}:")).map(|(_, rest)| rest))
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse::<u64>().ok());
        assert!(line.is_some_and(|n| n > 1 && n < 20_000), "{name}: {message}");
        assert!(message.contains("cut short or damaged"), "{name}: {message}");
        assert!(!d.join("cut.rsv").exists(), "{name}: no artifact under the final name");
    }
}
