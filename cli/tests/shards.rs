//! Shard sets as users make and read them: `compile --shards N`, `compile
//! --shard K/N` put together by copying, `shard-of`, and the sets that must
//! be refused (missing, duplicated, foreign shards), each with exit 2 and a
//! message naming the file.

use robotsieve_core::url::OriginKey;
use robotsieve_engine::Artifact;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{robotsieve, succeeds};

fn run(args: &[&str], paths: &[&Path]) -> Output {
    let mut cmd = robotsieve();
    cmd.args(args).args(paths);
    cmd.output().unwrap()
}

/// 120 hosts over both schemes: bodies of a few kinds, a 404, a 503 and a
/// redirect to another origin, so that newest-wins and redirects cross shards.
fn corpus(dir: &Path) -> PathBuf {
    let mut lines = String::new();
    for i in 0..120 {
        let body = format!("user-agent: *\ndisallow: /private{}\nallow: /private{}/ok\n", i % 9, i % 9);
        for scheme in ["http", "https"] {
            let status = match i {
                7 => 404,
                8 => 503,
                _ => 200,
            };
            let record = serde_json::json!({"url": format!("{scheme}://host{i}.example/robots.txt"), "status": status, "body": body, "fetched_at": "2024-01-01T00:00:00Z"});
            lines.push_str(&format!("{record}\n"));
        }
    }
    // host9's robots.txt moved to host10's: the redirect is followed across origins.
    let redirect = serde_json::json!({"url": "https://host9.example/robots.txt", "status": 301, "location": "https://host10.example/robots.txt", "fetched_at": "2024-02-01T00:00:00Z"});
    lines.push_str(&format!("{redirect}\n"));
    let path = dir.join("corpus.jsonl");
    std::fs::write(&path, lines).unwrap();
    path
}

fn urls(dir: &Path) -> PathBuf {
    let mut list = String::new();
    for i in 0..130 {
        for path in ["/", "/private3", "/private3/ok", "/private5/x"] {
            list.push_str(&format!("https://host{i}.example{path}\nhttp://host{i}.example{path}\n"));
        }
    }
    let path = dir.join("urls.txt");
    std::fs::write(&path, list).unwrap();
    path
}

fn compile(corpus: &Path, out: &Path, extra: &[&str]) {
    succeeds(
        robotsieve()
            .args(["compile", "--explain", "--agent", "mybot", "--corpus"])
            .arg(corpus)
            .arg("-o")
            .arg(out)
            .args(extra),
    );
}

/// The corpus in `dir`, and the set of `shards` shards compiled from it
/// (`dir/set`).
fn corpus_and_set(dir: &Path, shards: u32) -> (PathBuf, PathBuf) {
    let corpus = corpus(dir);
    let set = dir.join("set");
    compile(&corpus, &set, &["--shards", &shards.to_string()]);
    (corpus, set)
}

fn verdicts(rules: &Path, urls: &Path, dir: &Path) -> String {
    let out = dir.join("verdicts.tsv");
    let filtered = robotsieve()
        .args(["filter", "--agent", "mybot", "--rules"])
        .arg(rules)
        .arg("--urls")
        .arg(urls)
        .arg("--verdicts")
        .arg(&out)
        .output()
        .unwrap();
    assert!(filtered.status.success(), "{}", String::from_utf8_lossy(&filtered.stderr));
    std::fs::read_to_string(&out).unwrap()
}

/// `check --rules RULES URL` for mybot.
fn check(rules: &Path, url: &str) -> Output {
    robotsieve().args(["check", "--agent", "mybot", "--rules"]).arg(rules).arg(url).output().unwrap()
}

/// The message of a `check` that must be refused (exit status 2).
fn refused(rules: &Path, url: &str) -> String {
    let out = check(rules, url);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn shards_compiled_apart_and_copied_together_equal_the_whole_set() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, set) = corpus_and_set(dir.path(), 7);
    let parts = dir.path().join("parts");
    for k in 0..7 {
        // Each shard compiled on its own, into a directory of its own, as on other machines.
        let alone = dir.path().join(format!("machine{k}"));
        compile(&corpus, &alone, &["--shard", &format!("{k}/7")]);
        let files: Vec<_> = std::fs::read_dir(&alone).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1, "{files:?}");
        std::fs::create_dir_all(&parts).unwrap();
        std::fs::copy(&files[0], parts.join(files[0].file_name().unwrap())).unwrap();
    }
    for k in 0..7 {
        let name = format!("{k:05}-of-00007.rsv");
        let whole = std::fs::read(set.join(&name)).unwrap();
        let apart = std::fs::read(parts.join(&name)).unwrap();
        assert!(whole == apart, "{name}: --shard {k}/7 differs from --shards 7");
    }
    // The same verdicts as the one artifact of the corpus.
    let single = dir.path().join("single.rsv");
    compile(&corpus, &single, &[]);
    let urls = urls(dir.path());
    let want = verdicts(&single, &urls, dir.path());
    assert!(want.lines().count() >= 1000);
    assert_eq!(verdicts(&set, &urls, dir.path()), want);
    assert_eq!(verdicts(&parts, &urls, dir.path()), want);
}

#[test]
fn shard_of_names_the_shard_that_holds_the_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (_, set) = corpus_and_set(dir.path(), 7);
    let urls: Vec<String> = (0..40).map(|i| format!("https://host{i}.example/some/path")).collect();
    let out = robotsieve().args(["shard-of", "--shards", "7"]).args(&urls).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut used = std::collections::BTreeSet::new();
    for (line, url) in text.lines().zip(&urls) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols[2], url);
        used.insert(cols[0].to_string());
        // That shard file alone holds the origin.
        for k in 0..7 {
            let file = set.join(format!("{k:05}-of-00007.rsv"));
            let key = OriginKey::of_url(url).unwrap();
            let holds = Artifact::open(&file).unwrap().find_origin(key.as_bytes(), key.hash64());
            assert_eq!(holds.is_some(), cols[0] == k.to_string(), "{url} in shard {k}");
            assert_eq!(cols[0] == k.to_string(), cols[1] == format!("{k:05}-of-00007.rsv"));
        }
    }
    assert!(used.len() > 3, "40 origins over 7 shards: {used:?}");
    let bad = robotsieve().args(["shard-of", "--shards", "7", "not a url"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a url"));
}

#[test]
fn missing_duplicated_and_foreign_shards_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, set) = corpus_and_set(dir.path(), 7);
    let copy = |name: &str| {
        let to = dir.path().join(name);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(&set).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
        to
    };
    let shard = |k: u32| format!("{k:05}-of-00007.rsv");

    let missing = copy("missing");
    std::fs::remove_file(missing.join(shard(4))).unwrap();
    let err = refused(&missing, "https://host1.example/");
    assert!(err.contains("shard 4 of 7 is missing") && err.contains(&shard(4)), "{err}");

    let duplicated = copy("duplicated");
    std::fs::copy(duplicated.join(shard(2)), duplicated.join("extra.rsv")).unwrap();
    let err = refused(&duplicated, "https://host1.example/");
    assert!(err.contains("extra.rsv") && err.contains(&shard(2)) && err.contains("both shard 2 of 7"), "{err}");

    // A shard of another split, copied in by mistake.
    let other = dir.path().join("other");
    compile(&corpus, &other, &["--shards", "5"]);
    let foreign = copy("foreign");
    std::fs::copy(other.join("00001-of-00005.rsv"), foreign.join("00001-of-00005.rsv")).unwrap();
    let err = refused(&foreign, "https://host1.example/");
    assert!(err.contains("00001-of-00005.rsv") && err.contains("foreign"), "{err}");

    // A shard of the same split but compiled for another crawler.
    let other_agent = dir.path().join("other-agent");
    let done = robotsieve()
        .args(["compile", "--explain", "--agent", "otherbot", "--shard", "3/7", "--corpus"])
        .arg(&corpus)
        .arg("-o")
        .arg(&other_agent)
        .output()
        .unwrap();
    assert!(done.status.success());
    let mixed = copy("mixed");
    std::fs::copy(other_agent.join(shard(3)), mixed.join(shard(3))).unwrap();
    let err = refused(&mixed, "https://host1.example/");
    assert!(err.contains(&shard(3)) && err.contains("other agents"), "{err}");

    // One shard given as if it were the whole set.
    let err = refused(&set.join(shard(0)), "https://host1.example/");
    assert!(err.contains(&shard(0)) && err.contains("shard 0 of 7"), "{err}");

    // The intact set answers.
    let ok = check(&set, "https://host1.example/");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let shown = run(&["inspect", "--rules"], &[&set]);
    assert!(shown.status.success());
    assert!(String::from_utf8_lossy(&shown.stdout).contains("7 shards"));
}

/// `filter --rules SHARD --shard K/N --urls PART`, its verdicts or its
/// failure (exit status and standard error).
fn filter_lone(shard: &Path, k: u32, n: u32, urls: &Path, out: &Path) -> (Option<i32>, String) {
    let done = robotsieve()
        .args(["filter", "--agent", "mybot", "--shard", &format!("{k}/{n}"), "--rules"])
        .arg(shard)
        .arg("--urls")
        .arg(urls)
        .arg("--verdicts")
        .arg(out)
        .output()
        .unwrap();
    (done.status.code(), String::from_utf8_lossy(&done.stderr).into_owned())
}

#[test]
fn a_lone_shard_answers_its_urls_as_the_whole_set_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, set) = corpus_and_set(dir.path(), 4);
    let urls = urls(dir.path());
    let whole = verdicts(&set, &urls, dir.path());
    // Each URL's line of the whole set's verdicts, put in its shard's part.
    let mut parts: Vec<(String, String)> = vec![(String::new(), String::new()); 4];
    for (url, row) in std::fs::read_to_string(&urls).unwrap().lines().zip(whole.lines()) {
        assert_eq!(row.split_once('\t').map(|(_, u)| u), Some(url), "{row} is the row of {url}");
        let k = robotsieve_engine::shard_of_url(url, 4).unwrap() as usize;
        parts[k].0.push_str(&format!("{url}\n"));
        parts[k].1.push_str(&format!("{row}\n"));
    }
    // Lines that are no URL have no shard: any part answers them.
    parts[0].0.push_str("not a url\n");
    let invalid = verdicts(&set, &write(dir.path(), "invalid.txt", "not a url\n"), dir.path());
    parts[0].1.push_str(&invalid);
    let mut verdict_kinds = std::collections::BTreeSet::new();
    for (k, (list, want)) in parts.iter().enumerate() {
        assert!(want.lines().count() > 100, "shard {k} has {} URLs", want.lines().count());
        let part = write(dir.path(), &format!("part{k}.txt"), list);
        let out = dir.path().join(format!("verdicts{k}.tsv"));
        let shard = set.join(format!("{k:05}-of-00004.rsv"));
        let (status, stderr) = filter_lone(&shard, k as u32, 4, &part, &out);
        assert_eq!(status, Some(0), "{stderr}");
        assert_eq!(&std::fs::read_to_string(&out).unwrap(), want, "shard {k}");
        verdict_kinds.extend(want.lines().map(|row| row.split('\t').next().unwrap().to_string()));
    }
    assert!(verdict_kinds.len() >= 4, "{verdict_kinds:?}");

    // Shard 1's URLs sent to shard 0: refused, naming the first such URL and its shard.
    let misrouted = write(dir.path(), "misrouted.txt", &format!("{}{}", parts[0].0, parts[1].0));
    let out = dir.path().join("misrouted.tsv");
    let (status, stderr) = filter_lone(&set.join("00000-of-00004.rsv"), 0, 4, &misrouted, &out);
    assert_eq!(status, Some(2), "{stderr}");
    let named = stderr.strip_prefix("robotsieve: ").and_then(|s| s.split_once(": belongs")).map(|(url, _)| url);
    assert!(named.is_some_and(|url| parts[1].0.lines().any(|u| u == url)), "a URL of shard 1: {stderr}");
    assert!(stderr.contains("shard 1 of 4") && stderr.contains("00001-of-00004.rsv"), "{stderr}");
    assert!(!out.exists(), "no verdicts under the final name after a failed run");

    // --shard must match the shard's own header.
    let shard2 = set.join("00002-of-00004.rsv");
    for (asked, said) in [("1/4", "shard 1 of 4"), ("2/8", "shard 2 of 8")] {
        let (k, n) = asked.split_once('/').unwrap();
        let (status, stderr) = filter_lone(&shard2, k.parse().unwrap(), n.parse().unwrap(), &urls, &out);
        assert_eq!(status, Some(2), "{stderr}");
        assert!(
            stderr.contains("00002-of-00004.rsv") && stderr.contains("shard 2 of 4") && stderr.contains(said),
            "{stderr}"
        );
    }
    // A whole artifact is no shard.
    let single = dir.path().join("single.rsv");
    compile(&corpus, &single, &[]);
    let (status, stderr) = filter_lone(&single, 0, 1, &urls, &out);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("single.rsv") && stderr.contains("not a shard"), "{stderr}");
    // A bad K/N is a usage error.
    let (status, stderr) = filter_lone(&shard2, 4, 4, &urls, &out);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("K/N"), "{stderr}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The content digest of each shard of the set `set` as `inspect --json` shows it.
fn digests_shown(set: &Path) -> Vec<String> {
    let out = succeeds(robotsieve().args(["inspect", "--json", "--largest", "0", "--rules"]).arg(set));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shards = json["shards"].as_array().unwrap();
    shards.iter().map(|s| s["digest"].as_str().unwrap().to_string()).collect()
}

/// The header's content digest tells shards of different contents apart,
/// and is the same for the same input compiled twice and for a copy, so
/// that a cache may key on it without reading the files.
#[test]
fn the_content_digest_tells_contents_apart_and_copies_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, set) = corpus_and_set(dir.path(), 3);
    let digests = digests_shown(&set);
    assert_eq!(digests.len(), 3);
    assert!(digests.iter().all(|d| d.len() == 16 && d.bytes().all(|b| b.is_ascii_hexdigit())), "{digests:?}");
    assert!(digests[0] != digests[1] && digests[1] != digests[2] && digests[0] != digests[2], "{digests:?}");
    let again = dir.path().join("again");
    compile(&corpus, &again, &["--shards", "3"]);
    assert_eq!(digests_shown(&again), digests, "the same input compiled twice");
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for (k, digest) in digests.iter().enumerate() {
        let name = format!("{k:05}-of-00003.rsv");
        std::fs::copy(set.join(&name), copy.join(&name)).unwrap();
        let opened = Artifact::open(&set.join(&name)).unwrap();
        assert_eq!(&format!("{:016x}", opened.digest()), digest);
        opened.verify().unwrap();
    }
    assert_eq!(digests_shown(&copy), digests, "a copy");
    // One rule changed in one body, the corpus at the same path (META names
    // it): a different digest.
    let whole = |out: &str| {
        compile(&corpus, &dir.path().join(out), &[]);
        Artifact::open(&dir.path().join(out)).unwrap().digest()
    };
    let before = whole("a.rsv");
    let text = std::fs::read_to_string(&corpus).unwrap();
    std::fs::write(&corpus, text.replacen("disallow: /private0", "disallow: /privatE0", 1)).unwrap();
    assert_ne!(before, whole("b.rsv"));
}
