//! `shard-of --split`: a URL list split into one part per shard, each
//! grouped by origin, with the input line numbers of its URLs; every part
//! through its shard file alone (`filter --shard K/N`) gives, row for row,
//! the whole set's verdicts on the list (on a synthetic frontier of 100,000
//! URLs), whether the sort spilled to disk or not.

use robotsieve_core::url::OriginKey;
use robotsieve_testkit::frontier::Frontier;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{robotsieve, succeeds};

/// `shard-of --split DIR --shards N --urls LIST --line-numbers` with `extra` flags.
fn split(dir: &Path, shards: u32, list: &Path, extra: &[&str]) -> Output {
    let mut cmd = robotsieve();
    cmd.args(["shard-of", "--shards", &shards.to_string(), "--line-numbers", "--split"]);
    cmd.arg(dir).arg("--urls").arg(list).args(extra);
    cmd.output().unwrap()
}

fn filter(rules: &Path, urls: &Path, out: &Path, extra: &[&str]) {
    let mut cmd = robotsieve();
    cmd.args(["filter", "--agent", "googlebot", "--rules"]).arg(rules).arg("--urls").arg(urls);
    succeeds(cmd.arg("--verdicts").arg(out).args(extra));
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_string).collect()
}

/// Lines that are no URL, a blank line and a CRLF line end, among the frontier's.
fn with_odd_lines(urls: &str) -> String {
    let mut text = String::from("not a url\n\nhttps://no-robots.example/a\r\n");
    for (i, line) in urls.lines().enumerate() {
        text.push_str(line);
        text.push('\n');
        if i == 5000 {
            text.push_str("mailto:x@example.com\n\n");
        }
    }
    text
}

#[test]
fn every_part_through_its_shard_alone_gives_the_whole_sets_verdicts() {
    let Some(frontier) = Frontier::generate(100_000, 11) else { return };
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    std::fs::write(&corpus, frontier.corpus()).unwrap();
    let set = dir.path().join("set");
    let shards = 8;
    let mut compile = robotsieve();
    compile.args(["compile", "--agent", "googlebot", "--shards", &shards.to_string(), "--corpus"]).arg(&corpus);
    succeeds(compile.arg("-o").arg(&set));
    let list = dir.path().join("frontier.txt");
    let text = with_odd_lines(&frontier.urls);
    std::fs::write(&list, &text).unwrap();

    // The whole set's verdict row of each input line (blank lines have none).
    let whole_out = dir.path().join("whole.tsv");
    filter(&set, &list, &whole_out, &[]);
    let whole = read_lines(&whole_out);
    let numbers: Vec<u64> =
        text.lines().enumerate().filter(|(_, l)| !l.is_empty()).map(|(i, _)| i as u64 + 1).collect();
    assert_eq!(whole.len(), numbers.len());
    let row_of: HashMap<u64, &str> = numbers.iter().copied().zip(whole.iter().map(String::as_str)).collect();

    // Split with a small budget (the sort spills) and with the default (it does not).
    let spilled = dir.path().join("spilled");
    let done = split(&spilled, shards, &list, &["--memory", "1M"]);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(!said.contains("(0 sorted runs spilled)"), "1M spills 100,000 URLs: {said}");
    let in_memory = dir.path().join("in-memory");
    let done = split(&in_memory, shards, &list, &[]);
    assert!(String::from_utf8_lossy(&done.stderr).contains("(0 sorted runs spilled)"));

    let mut seen = HashSet::new();
    let mut kinds = HashSet::new();
    for k in 0..shards {
        let stem = format!("{k:05}-of-{shards:05}");
        for ext in ["txt", "lines"] {
            let name = format!("{stem}.{ext}");
            assert_eq!(std::fs::read(spilled.join(&name)).unwrap(), std::fs::read(in_memory.join(&name)).unwrap());
        }
        let part = spilled.join(format!("{stem}.txt"));
        let lines: Vec<u64> =
            read_lines(&spilled.join(format!("{stem}.lines"))).iter().map(|l| l.parse().unwrap()).collect();
        let urls = read_lines(&part);
        assert_eq!(urls.len(), lines.len(), "{stem}");
        assert!(urls.len() > 1000, "{stem} holds {} URLs", urls.len());
        // Grouped by origin: an origin's URLs side by side, in input order.
        let mut done_origins = HashSet::new();
        let mut last: Option<(OriginKey, u64)> = None;
        for (url, &line) in urls.iter().zip(&lines) {
            let key = OriginKey::of_url(url).unwrap();
            match &last {
                Some((previous, at)) if *previous == key => assert!(line > *at, "{stem}: {url} out of input order"),
                _ => assert!(done_origins.insert(key.clone()), "{stem}: {url}'s origin came apart"),
            }
            last = Some((key, line));
        }
        // Through its shard file alone: the whole set's row, line by line.
        let out = dir.path().join(format!("{stem}.tsv"));
        let shard_file = set.join(format!("{stem}.rsv"));
        filter(&shard_file, &part, &out, &["--shard", &format!("{k}/{shards}")]);
        let rows = read_lines(&out);
        assert_eq!(rows.len(), lines.len(), "{stem}");
        for (row, line) in rows.iter().zip(&lines) {
            assert_eq!(row, row_of[line], "{stem}, input line {line}");
            assert!(seen.insert(*line), "line {line} in two parts");
            kinds.insert(row.split('\t').next().unwrap().to_string());
        }
    }
    assert!(kinds.len() >= 3, "{kinds:?}");
    // Lines that are no URL, with their numbers; every other line is in one part.
    let invalid = read_lines(&spilled.join("invalid.txt"));
    assert!(invalid.iter().any(|l| l == "not a url") && invalid.iter().any(|l| l == "mailto:x@example.com"));
    let invalid_lines: Vec<u64> =
        read_lines(&spilled.join("invalid.lines")).iter().map(|l| l.parse().unwrap()).collect();
    assert_eq!(invalid.len(), invalid_lines.len());
    for line in &invalid_lines {
        assert!(row_of[line].starts_with("invalid\t"), "{}", row_of[line]);
        assert!(seen.insert(*line));
    }
    assert_eq!(seen.len(), numbers.len(), "every line that is not blank is in one file");
}

#[test]
fn bad_input_exits_2_naming_file_and_line_and_writes_no_part() {
    let dir = tempfile::tempdir().unwrap();
    // A gzip list cut short: its first lines read, then the stream ends early.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let text: String = (0..20_000).map(|i| format!("https://h{}.example/p{i}\n", i % 97)).collect();
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let list = dir.path().join("cut.txt.gz");
    std::fs::write(&list, &bytes[..bytes.len() / 2]).unwrap();
    let parts = dir.path().join("parts");
    let done = split(&parts, 4, &list, &[]);
    assert_eq!(done.status.code(), Some(2));
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(said.contains("cut.txt.gz:"), "{said}");
    let line: u64 = said.split("cut.txt.gz:").nth(1).unwrap().split(':').next().unwrap().parse().unwrap();
    assert!(line > 1000, "{said}");
    let left: Vec<PathBuf> = std::fs::read_dir(&parts).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "nothing written: {left:?}");

    // A missing list, and a directory that is a file.
    let done = split(&parts, 4, &dir.path().join("missing.txt"), &[]);
    assert_eq!(done.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&done.stderr).contains("missing.txt"));
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let ok_list = dir.path().join("ok.txt");
    std::fs::write(&ok_list, "https://a.example/\n").unwrap();
    let done = split(&file, 4, &ok_list, &[]);
    assert_eq!(done.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&done.stderr).contains(&file.display().to_string()));

    // The positional form still works; --split wants --urls.
    let out = succeeds(robotsieve().args(["shard-of", "--shards", "4", "https://a.example/"]));
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("\thttps://a.example/\n"));
    let out = robotsieve().args(["shard-of", "--shards", "4", "--split"]).arg(&parts).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
