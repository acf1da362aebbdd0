//! `fetch --due` and `fetch --compact` through the real binary: every row of
//! the cache policy table on a hand-made corpus (each URL due exactly when
//! the row says: not one second before, and at that second), compaction's
//! choice of records, its output files, its errors; and on a generated
//! corpus of random histories, that the compacted corpus compiles to the
//! same verdicts and gives the same due list as its inputs.

use robotsieve_sources::Timestamp;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

fn robotsieve(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_robotsieve")).current_dir(dir).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// 2026-12-01T00:00:00Z, the time the hand-made records are measured from.
fn t0() -> i64 {
    Timestamp::parse_rfc3339("2026-12-01T00:00:00Z").unwrap().unix_seconds()
}

/// The RFC 3339 time `secs` after [`t0`].
fn at(secs: i64) -> String {
    Timestamp::from_unix(t0() + secs).to_string()
}

const H: i64 = 3600;
const D: i64 = 86_400;

fn write_jsonl(path: &Path, records: &[Value]) {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// The URLs `fetch --due` prints for `corpora` at `now`, with `flags`.
fn due(dir: &Path, corpora: &[&str], now: &str, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["fetch", "--due"];
    args.extend_from_slice(corpora);
    args.extend_from_slice(&["--now", now]);
    args.extend_from_slice(flags);
    let out = robotsieve(dir, &args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// A record of `url` with `status` fetched `secs` after [`t0`], plus `extra` fields.
fn record(url: &str, status: u16, secs: i64, extra: Value) -> Value {
    let mut r = json!({"url": url, "status": status, "fetched_at": at(secs), "body": "user-agent: *\ndisallow: /x\n"});
    if let Value::Object(fields) = extra {
        r.as_object_mut().unwrap().extend(fields);
    }
    r
}

const A: &str = "https://a.example/robots.txt";

/// Checks that `records` make [`A`] due exactly `secs` after [`t0`] under
/// `flags`: not at `secs - 1`, and at `secs` (and both before compaction
/// and after).
fn assert_due_at(records: &[Value], secs: i64, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("c.jsonl"), records);
    let out = robotsieve(dir.path(), &["fetch", "--compact", "c.jsonl", "-o", "compacted.jsonl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for corpus in ["c.jsonl", "compacted.jsonl"] {
        assert_eq!(due(dir.path(), &[corpus], &at(secs - 1), flags), Vec::<String>::new(), "{corpus}: due too early");
        assert_eq!(due(dir.path(), &[corpus], &at(secs), flags), vec![A.to_owned()], "{corpus}: not due in time");
    }
}

#[test]
fn a_200_is_fresh_for_24_hours_then_due() {
    assert_due_at(&[record(A, 200, 0, json!({}))], 24 * H, &[]);
}

#[test]
fn the_newest_record_decides() {
    assert_due_at(&[record(A, 200, 5 * H, json!({})), record(A, 200, 0, json!({}))], 29 * H, &[]);
}

#[test]
fn a_4xx_keeps_the_default_ttl_or_its_max_age() {
    assert_due_at(&[record(A, 404, 0, json!({}))], 24 * H, &[]);
    assert_due_at(&[record(A, 410, 0, json!({"max_age": 7200}))], 2 * H, &[]);
}

#[test]
fn default_ttl_is_a_flag() {
    assert_due_at(&[record(A, 200, 0, json!({}))], 2 * H, &["--default-ttl", "2h"]);
    assert_due_at(&[record(A, 200, 0, json!({}))], 90 * 60, &["--default-ttl", "5400"]);
}

#[test]
fn a_short_max_age_shortens_the_life() {
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 2 * H}))], 2 * H, &[]);
}

#[test]
fn a_long_max_age_lengthens_it() {
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 3 * D}))], 3 * D, &[]);
}

#[test]
fn max_age_is_clamped_to_one_hour_and_seven_days() {
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 60}))], H, &[]);
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 30 * D}))], 7 * D, &[]);
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 60}))], 10 * 60, &["--min-ttl", "10m"]);
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 30 * D}))], 2 * D, &["--max-ttl", "2d"]);
}

#[test]
fn no_store_and_no_cache_give_max_age_0_which_is_the_minimum() {
    assert_due_at(&[record(A, 200, 0, json!({"max_age": 0}))], H, &[]);
}

#[test]
fn a_5xx_or_429_with_retry_after_is_due_then() {
    assert_due_at(&[record(A, 503, 0, json!({"retry_after": 600}))], 600, &[]);
    assert_due_at(&[record(A, 429, 0, json!({"retry_after": 120}))], 120, &[]);
}

#[test]
fn retry_after_is_capped() {
    assert_due_at(&[record(A, 503, 0, json!({"retry_after": 5 * D}))], 24 * H, &[]);
    assert_due_at(&[record(A, 429, 0, json!({"retry_after": 5 * D}))], 6 * H, &["--retry-after-cap", "6h"]);
}

#[test]
fn a_5xx_or_429_without_retry_after_backs_off_one_hour() {
    assert_due_at(&[record(A, 200, -D, json!({})), record(A, 500, 0, json!({}))], H, &[]);
    assert_due_at(&[record(A, 503, 0, json!({}))], H, &[]);
    assert_due_at(&[record(A, 429, 0, json!({}))], H, &[]);
}

#[test]
fn no_answer_status_0_backs_off_as_a_failure() {
    assert_due_at(&[record(A, 0, 0, json!({"error": "timeout: no answer in 30 s"}))], H, &[]);
}

#[test]
fn k_failures_in_a_row_double_the_wait() {
    let failures = |k: i64| -> Vec<Value> {
        let mut records = vec![record(A, 200, -10 * D, json!({}))];
        records.extend((0..k).map(|i| record(A, if i % 2 == 0 { 503 } else { 0 }, -(k - 1 - i) * H, json!({}))));
        records
    };
    assert_due_at(&failures(2), 2 * H, &[]);
    assert_due_at(&failures(3), 4 * H, &[]);
    assert_due_at(&failures(4), 8 * H, &[]);
}

#[test]
fn the_backoff_stops_at_12_hours() {
    let records: Vec<Value> = (0..9).map(|i| record(A, 503, -(8 - i) * H, json!({}))).collect();
    assert_due_at(&records, 12 * H, &[]);
}

#[test]
fn a_reachable_fetch_ends_the_run_of_failures() {
    let records = [
        record(A, 503, -3 * H, json!({})),
        record(A, 503, -2 * H, json!({})),
        record(A, 404, -H, json!({})),
        record(A, 503, 0, json!({})),
    ];
    assert_due_at(&records, H, &[]);
}

#[test]
fn failures_in_a_row_on_the_newest_record_is_taken_as_it_is() {
    assert_due_at(&[record(A, 503, 0, json!({"failures_in_a_row": 3}))], 4 * H, &[]);
    // One more failure on top of a compacted run of three: k = 4.
    let records = [record(A, 503, -H, json!({"failures_in_a_row": 3})), record(A, 503, 0, json!({}))];
    assert_due_at(&records, 8 * H, &[]);
}

#[test]
fn a_redirect_chain_is_due_when_a_hop_is() {
    let moved = "https://a.example/moved/robots.txt";
    let other = "https://www.a.example/robots.txt";
    // The start is fresh for 24 h, its target only for 2 h more.
    let records = [record(A, 301, 0, json!({"location": "/moved/robots.txt"})), record(moved, 200, -22 * H, json!({}))];
    assert_due_at(&records, 2 * H, &[]);
    // Two hops, to another host: the last hop's short max-age decides.
    let records = [
        record(A, 301, 0, json!({"location": "/moved/robots.txt"})),
        record(moved, 302, 0, json!({"location": other})),
        record(other, 200, 0, json!({"max_age": 3 * H})),
    ];
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("c.jsonl"), &records);
    // The other host's robots.txt is a URL of its own too.
    assert_eq!(due(dir.path(), &["c.jsonl"], &at(3 * H - 1), &[]), Vec::<String>::new());
    assert_eq!(due(dir.path(), &["c.jsonl"], &at(3 * H), &[]), vec![A.to_owned(), other.to_owned()]);
    // A hop that failed backs the chain off as it backs itself off.
    let records = [
        record(A, 301, 0, json!({"location": "/moved/robots.txt"})),
        record(moved, 503, 0, json!({"retry_after": 900})),
    ];
    assert_due_at(&records, 900, &[]);
}

#[test]
fn undated_records_are_always_due() {
    let dir = tempfile::tempdir().unwrap();
    let undated = json!({"url": A, "status": 200, "body": "user-agent: *\ndisallow: /\n"});
    write_jsonl(&dir.path().join("c.jsonl"), std::slice::from_ref(&undated));
    assert_eq!(due(dir.path(), &["c.jsonl"], "1970-01-01T00:00:00Z", &[]), vec![A.to_owned()]);
    // A dated record is newer than an undated one: it decides.
    write_jsonl(&dir.path().join("d.jsonl"), &[record(A, 200, 0, json!({})), undated]);
    assert_eq!(due(dir.path(), &["d.jsonl"], &at(H), &[]), Vec::<String>::new());
}

#[test]
fn due_reads_several_corpora_compressed_and_sorts_the_urls() {
    let dir = tempfile::tempdir().unwrap();
    let b = "http://b.example/robots.txt";
    write_jsonl(&dir.path().join("one.jsonl"), &[record(b, 200, 0, json!({})), record(A, 200, 0, json!({}))]);
    let out = robotsieve(dir.path(), &["fetch", "--compact", "one.jsonl", "-o", "two.jsonl.zst"]);
    assert!(out.status.success(), "{}", stderr(&out));
    write_jsonl(&dir.path().join("three.jsonl"), &[record(A, 200, 12 * H, json!({}))]);
    let both = ["two.jsonl.zst", "three.jsonl"];
    assert_eq!(due(dir.path(), &both, &at(24 * H), &[]), vec![b.to_owned()]);
    assert_eq!(due(dir.path(), &both, &at(36 * H), &[]), vec![b.to_owned(), A.to_owned()]);
}

/// The records `fetch --compact` writes for `records`.
fn compacted(records: &[Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("c.jsonl"), records);
    let out = robotsieve(dir.path(), &["fetch", "--compact", "c.jsonl", "-o", "out.jsonl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn with(mut record: Value, field: &str, value: Value) -> Value {
    record.as_object_mut().unwrap().insert(field.to_owned(), value);
    record
}

#[test]
fn compaction_keeps_the_newest_record_of_a_reachable_url() {
    let records = [record(A, 200, -2 * D, json!({})), record(A, 404, 0, json!({})), record(A, 200, -D, json!({}))];
    assert_eq!(compacted(&records), vec![records[1].clone()]);
}

#[test]
fn compaction_keeps_the_last_reachable_record_behind_failures() {
    let records = [
        record(A, 200, -40 * D, json!({})),
        record(A, 200, -35 * D, json!({"max_age": 600})),
        record(A, 503, -20 * D, json!({})),
        record(A, 0, -10 * D, json!({"error": "dns: no such host"})),
        record(A, 503, 0, json!({"retry_after": 60, "attempts": 3, "elapsed_ms": 812})),
    ];
    let newest = with(records[4].clone(), "failures_in_a_row", json!(3));
    assert_eq!(compacted(&records), vec![records[1].clone(), newest]);
}

#[test]
fn compaction_keeps_the_oldest_failure_when_none_was_reachable() {
    let records = [
        record(A, 503, -20 * D, json!({})),
        record(A, 429, -40 * D, json!({})),
        record(A, 0, 0, json!({"error": "refused: connection refused"})),
        record(A, 500, -10 * D, json!({})),
    ];
    let newest = with(records[2].clone(), "failures_in_a_row", json!(4));
    // The order read is kept: the oldest failure was read second.
    assert_eq!(compacted(&records), vec![records[1].clone(), newest]);
}

#[test]
fn compaction_reads_reachability_after_redirects() {
    // The 301 is reachable on its own, but leads to a 503: unreachable, so
    // the 200 before it is the copy the 30-day rule falls back to.
    let moved = "https://a.example/moved/robots.txt";
    let records = [
        record(A, 200, -50 * D, json!({})),
        record(A, 301, -40 * D, json!({"location": moved})),
        record(moved, 503, -40 * D, json!({})),
        record(A, 503, 0, json!({})),
    ];
    let newest = with(records[3].clone(), "failures_in_a_row", json!(1));
    let target = with(records[2].clone(), "failures_in_a_row", json!(1));
    assert_eq!(compacted(&records), vec![records[0].clone(), target, newest]);
}

#[test]
fn compaction_keeps_every_field_and_binary_bodies() {
    let binary = json!({"url": A, "status": 200, "fetched_at": at(0), "body_b64": "/wAB", "truncated": true,
        "ftp_reply": "226 Transfer complete", "attempts": 1, "elapsed_ms": 5, "max_age": 60});
    let unparsed = json!({"url": "not a url", "status": 200});
    assert_eq!(compacted(&[binary.clone(), unparsed.clone()]), vec![binary, unparsed]);
}

#[test]
fn compaction_writes_gzip_and_zstd_and_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let records = [record(A, 200, 0, json!({})), record(A, 200, H, json!({}))];
    write_jsonl(&dir.path().join("all.jsonl"), &records);
    for out in ["all.jsonl.gz", "all.jsonl.zst"] {
        let run = robotsieve(dir.path(), &["fetch", "--compact", "all.jsonl", "-o", out]);
        assert!(run.status.success(), "{}", stderr(&run));
        let bytes = std::fs::read(dir.path().join(out)).unwrap();
        let magic: &[u8] = if out.ends_with(".gz") { &[0x1f, 0x8b] } else { &[0x28, 0xb5, 0x2f, 0xfd] };
        assert!(bytes.starts_with(magic), "{out} is not compressed");
        assert!(!dir.path().join(format!("{out}.partial")).exists());
        // Compacting a compacted corpus into itself changes nothing.
        let run = robotsieve(dir.path(), &["fetch", "--compact", out, "-o", out]);
        assert!(run.status.success(), "{}", stderr(&run));
        let run = robotsieve(dir.path(), &["fetch", "--compact", out, "-o", "plain.jsonl"]);
        assert!(run.status.success(), "{}", stderr(&run));
        let text = std::fs::read_to_string(dir.path().join("plain.jsonl")).unwrap();
        let read: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(read, vec![records[1].clone()]);
    }
}

#[test]
fn a_broken_record_is_exit_2_naming_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = record(A, 200, 0, json!({}));
    std::fs::write(dir.path().join("c.jsonl"), format!("{good}\n{{\"url\": \"{A}\", \"status\": \"x\"}}\n")).unwrap();
    std::fs::write(dir.path().join("d.jsonl"), format!("{}\n", with(good, "max_age", json!(-5)))).unwrap();
    for (file, line) in [("c.jsonl", "c.jsonl:2"), ("d.jsonl", "d.jsonl:1")] {
        let out = robotsieve(dir.path(), &["fetch", "--compact", file, "-o", "out.jsonl"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(line), "{}", stderr(&out));
        assert!(!dir.path().join("out.jsonl").exists() && !dir.path().join("out.jsonl.partial").exists());
        let out = robotsieve(dir.path(), &["fetch", "--due", file]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(line), "{}", stderr(&out));
    }
    let out = robotsieve(dir.path(), &["fetch", "--due", "missing.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.jsonl"), "{}", stderr(&out));
    let out = robotsieve(dir.path(), &["fetch", "--due", "c.jsonl", "--now", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    let out = robotsieve(dir.path(), &["fetch", "--due", "c.jsonl", "--default-ttl", "3w"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unit"), "{}", stderr(&out));
}

#[test]
fn without_due_or_compact_fetching_needs_a_user_agent() {
    let dir = tempfile::tempdir().unwrap();
    let out = robotsieve(dir.path(), &["fetch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--user-agent"), "{}", stderr(&out));
}

/// A small deterministic generator (xorshift64*), so that a failure repeats.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// A corpus of `hosts` hosts with random histories (statuses of every
/// class, redirects within and across hosts, cache fields, undated and
/// tied times, several distinct bodies), in three files.
fn random_corpus(dir: &Path, hosts: u64, rng: &mut Rng) -> usize {
    let mut files: Vec<Vec<Value>> = vec![Vec::new(); 3];
    let statuses = [200, 200, 200, 404, 503, 503, 429, 500, 0, 301, 302, 304];
    let mut count = 0;
    for h in 0..hosts {
        let url = format!("https://h{h}.example/robots.txt");
        for _ in 0..1 + rng.below(6) {
            let status = statuses[rng.below(statuses.len() as u64) as usize];
            let mut r =
                json!({"url": url, "status": status, "body": format!("user-agent: *\ndisallow: /p{}\n", rng.below(4))});
            if rng.below(20) != 0 {
                // Times over 70 days, on the hour, so that ties happen.
                r["fetched_at"] = json!(at(-(rng.below(70 * 24) as i64) * H));
            }
            if (300..400).contains(&status) && status != 304 {
                r["location"] = match rng.below(3) {
                    0 => json!("/moved/robots.txt"),
                    1 => json!(format!("https://h{}.example/robots.txt", rng.below(hosts))),
                    _ => json!(format!("http://h{h}.example/robots.txt")),
                };
            }
            match rng.below(6) {
                0 => r["max_age"] = json!(rng.below(10 * D as u64)),
                1 => r["retry_after"] = json!(rng.below(2 * D as u64)),
                2 => r["failures_in_a_row"] = json!(1 + rng.below(5)),
                _ => {}
            }
            files[rng.below(3) as usize].push(r);
            count += 1;
            if rng.below(4) == 0 {
                // A redirect target's own record, or the other scheme's.
                let target = match rng.below(2) {
                    0 => format!("https://h{h}.example/moved/robots.txt"),
                    _ => format!("http://h{h}.example/robots.txt"),
                };
                let status = statuses[rng.below(9) as usize];
                let r = json!({"url": target, "status": status, "fetched_at": at(-(rng.below(70 * 24) as i64) * H),
                    "body": format!("user-agent: *\ndisallow: /q{}\n", rng.below(4))});
                files[rng.below(3) as usize].push(r);
                count += 1;
            }
        }
    }
    for (i, records) in files.iter().enumerate() {
        write_jsonl(&dir.join(format!("part{i}.jsonl")), records);
    }
    count
}

/// The verdicts of `mybot` under `rules` for a few paths of every host.
fn verdicts(dir: &Path, rules: &str, hosts: u64) -> String {
    let urls: String = (0..hosts)
        .flat_map(|h| {
            ["https", "http"].into_iter().flat_map(move |scheme| {
                ["/", "/p0", "/p1", "/p2", "/p3", "/q0", "/q1", "/q2", "/q3"]
                    .map(|path| format!("{scheme}://h{h}.example{path}\n"))
            })
        })
        .collect();
    std::fs::write(dir.join("urls.txt"), urls).unwrap();
    let v = format!("{rules}.verdicts");
    let out =
        robotsieve(dir, &["filter", "--rules", rules, "--agent", "mybot", "--urls", "urls.txt", "--verdicts", &v]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_to_string(dir.join(&v)).unwrap()
}

/// `inspect --json` of `rules`, without what names the file, times the
/// opening, or lists the sources read (the meta section, and so the sizes
/// of the whole file).
fn summary(dir: &Path, rules: &str) -> Value {
    let out = robotsieve(dir, &["inspect", "--rules", rules, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let object = summary.as_object_mut().unwrap();
    for name in ["rules", "opened_seconds", "bytes"] {
        object.remove(name);
    }
    for shard in object["shards"].as_array_mut().unwrap() {
        let shard = shard.as_object_mut().unwrap();
        // The digest covers META, which names the sources.
        for name in ["artifact", "bytes", "digest"] {
            shard.remove(name);
        }
        let sources = shard["build"].as_object_mut().unwrap().remove("sources");
        assert!(sources.is_some(), "no list of sources to leave out");
        shard["sections"].as_array_mut().unwrap().retain(|s| s["section"] != "meta");
    }
    summary
}

#[test]
fn a_compacted_random_corpus_compiles_the_same_and_gives_the_same_due_list() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let hosts = 800;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let count = random_corpus(dir, hosts, &mut rng);
    assert!(count > 2000, "only {count} records");
    let parts = ["part0.jsonl", "part1.jsonl", "part2.jsonl"];
    let mut args = vec!["fetch", "--compact"];
    args.extend_from_slice(&parts);
    args.extend_from_slice(&["-o", "all.jsonl.zst"]);
    let out = robotsieve(dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let compacted = robotsieve(dir, &["fetch", "--compact", "all.jsonl.zst", "-o", "again.jsonl"]);
    assert!(compacted.status.success(), "{}", stderr(&compacted));
    let kept = std::fs::read_to_string(dir.join("again.jsonl")).unwrap().lines().count();
    assert!(kept < count * 3 / 4, "compaction kept {kept} of {count} records");

    let mut compile = vec!["compile", "--agent", "mybot", "-o", "inputs.rsv"];
    for part in &parts {
        compile.extend_from_slice(&["--corpus", part]);
    }
    let out = robotsieve(dir, &compile);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = robotsieve(dir, &["compile", "--agent", "mybot", "--corpus", "all.jsonl.zst", "-o", "compacted.rsv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(summary(dir, "inputs.rsv"), summary(dir, "compacted.rsv"));
    let before = verdicts(dir, "inputs.rsv", hosts);
    assert_eq!(before, verdicts(dir, "compacted.rsv", hosts));
    // Every kind of verdict is there, so the comparison means something.
    for verdict in ["allowed\t", "disallowed\t"] {
        assert!(before.lines().filter(|l| l.starts_with(verdict)).count() > 100, "few {verdict}");
    }

    // Due lists grow with time; some are neither empty nor everything.
    let mut sizes = Vec::new();
    for now in [-60 * D, -30 * D, -10 * D, -2 * D, -H, 0, 6 * H, 10 * D] {
        let due_before = due(dir, &parts, &at(now), &[]);
        assert_eq!(due_before, due(dir, &["all.jsonl.zst"], &at(now), &[]), "due at {}", at(now));
        assert_eq!(due_before, due(dir, &["again.jsonl"], &at(now), &[]), "due at {}", at(now));
        sizes.push(due_before.len());
    }
    assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");
    assert!(sizes.iter().filter(|&&n| n > 100 && n + 100 < sizes[sizes.len() - 1]).count() >= 2, "{sizes:?}");
}

/// `inspect --now` judges the copies an artifact kept by the policy of
/// `fetch --due`: on a corpus without redirects, at every time around the
/// rows' expiries, it counts as expired exactly the origins `fetch --due`
/// lists (policy flags included), and `inspect --origin` shows the facts.
#[test]
fn inspect_now_counts_the_origins_fetch_due_lists() {
    let dir = tempfile::tempdir().unwrap();
    let records = [
        record("https://a.example/robots.txt", 200, 0, json!({})),
        record("https://b.example/robots.txt", 200, 0, json!({"max_age": 2 * H})),
        record("https://c.example/robots.txt", 404, 3 * H, json!({"max_age": 30 * D})),
        record("https://d.example/robots.txt", 503, 5 * H, json!({"failures_in_a_row": 3})),
        record("https://e.example/robots.txt", 503, 0, json!({})),
        // The artifact keeps the governing record's own count, as `fetch` and compaction write it.
        record("https://e.example/robots.txt", 0, H, json!({"failures_in_a_row": 2})),
        json!({"url": "https://f.example/robots.txt", "status": 200, "body": "user-agent: *\ndisallow: /x\n"}),
    ];
    write_jsonl(&dir.path().join("c.jsonl"), &records);
    let out = robotsieve(dir.path(), &["compile", "--agent", "mybot", "--corpus", "c.jsonl", "-o", "c.rsv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let expired = |now: &str, flags: &[&str]| -> u64 {
        let mut args = vec!["inspect", "--json", "--rules", "c.rsv", "--now", now];
        args.extend_from_slice(flags);
        let out = robotsieve(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["expiry"]["undated"], 1, "{json}");
        json["expiry"]["expired"].as_u64().unwrap()
    };
    let mut seen = std::collections::BTreeSet::new();
    for flags in [&[][..], &["--default-ttl", "2h", "--max-ttl", "10d"][..]] {
        for secs in [0, H, 2 * H - 1, 2 * H, 3 * H, 7 * H, 9 * H, D, D + 3 * H, 2 * D, 8 * D, 40 * D] {
            let now = at(secs);
            let listed = due(dir.path(), &["c.jsonl"], &now, flags).len() as u64;
            assert_eq!(expired(&now, flags), listed, "at {now} with {flags:?}");
            seen.insert(listed);
        }
    }
    assert!(seen.len() >= 4, "the times cross several expiries: {seen:?}");

    let out =
        robotsieve(dir.path(), &["inspect", "--rules", "c.rsv", "--origin", "https://d.example", "--now", &at(6 * H)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("  copy: fetched {}, 3 failures in a row\n", at(5 * H))), "{text}");
    assert!(text.contains(&format!("  fresh until {} (at {})", at(9 * H), at(6 * H))), "{text}");
    let out = robotsieve(dir.path(), &["inspect", "--json", "--rules", "c.rsv", "--origin", "https://b.example"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["fetch"]["fetched_at"], at(0));
    assert_eq!(json["fetch"]["max_age"], 2 * H);
    assert_eq!(json["fetch"]["failures_in_a_row"], Value::Null);
}

/// An artifact compiled from a robots.txt file given directly has no
/// FRESHNESS section, so it is no larger than without the feature: its
/// sections are those of format 6 and every origin counts as expired.
#[test]
fn files_given_directly_have_no_fetch_times() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("robots.txt"), "user-agent: *\ndisallow: /x\n").unwrap();
    let args =
        ["compile", "--agent", "mybot", "--robots", "robots.txt", "--origin", "https://a.example", "-o", "a.rsv"];
    assert!(robotsieve(dir.path(), &args).status.success());
    let out = robotsieve(dir.path(), &["inspect", "--json", "--rules", "a.rsv", "--now", &at(0)]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["expiry"]["expired"], 1);
    let sections = json["shards"][0]["sections"].as_array().unwrap();
    let fetch_times = sections.iter().find(|s| s["section"] == "fetch times").unwrap();
    assert_eq!(fetch_times["bytes"], 0, "{json}");
}
