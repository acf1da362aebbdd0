//! The command line spells one idea one way, as ripgrep does:
//! `--rules ARTIFACT` wherever an artifact is read, `-o/--output` wherever one
//! file is written, `--json` (a switch) wherever output can be JSON,
//! `--threads` wherever work runs in parallel, with one meaning and one help
//! text; a reader of standard output that goes away ends the run quietly
//! with status 0; the JSON objects of one command have the same keys; and the
//! old spellings still work, each with a one-line note on standard error.

use robotsieve_testkit::seeds::{http_message, warc_record};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn robotsieve(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_robotsieve"));
    command.current_dir(dir).env_remove("RAYON_NUM_THREADS");
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    robotsieve(dir).args(args).stdin(Stdio::null()).output().expect("the robotsieve binary runs")
}

/// Runs a command that must succeed and returns its standard output.
fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The deprecation note of an old spelling, as the binary prints it.
fn note(old: &str, new: &str) -> String {
    format!("robotsieve: {old} is deprecated; use {new}\n")
}

/// A directory holding `robots.txt` (with a `Content-Signal` line), a page,
/// a WARC file of 40 pages and a response that is not HTTP, the fetch records of three origins (rules, 404,
/// 503), `rules.rsv` compiled from them for two crawlers with `--explain`,
/// and `urls.txt`: an allowed, a disallowed, an unknown and an invalid URL.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let robots = "user-agent: *\ndisallow: /private\nallow: /private/ok\ncontent-signal: ai-train=no\n\n\
                  user-agent: otherbot\ndisallow: /\n";
    std::fs::write(path.join("robots.txt"), robots).unwrap();
    std::fs::write(path.join("clean.txt"), "user-agent: *\nallow: /\n").unwrap();
    let record = |url: &str, status: u16, body: &str| {
        serde_json::json!({"url": url, "status": status, "body": body}).to_string() + "\n"
    };
    let fetches = record("https://a.example/robots.txt", 200, robots)
        + &record("https://b.example/robots.txt", 404, "")
        + &record("https://c.example/robots.txt", 503, "");
    std::fs::write(path.join("fetches.jsonl"), fetches).unwrap();
    let urls = "https://a.example/\nhttps://a.example/private/x\nhttps://a.example/private/ok\n\
                https://b.example/x\nhttps://c.example/x\nhttps://unknown.example/\nnot a url\n";
    std::fs::write(path.join("urls.txt"), urls).unwrap();
    std::fs::write(path.join("page.html"), "<head><meta name=robots content=\"noindex, noodp\"></head>").unwrap();
    std::fs::write(path.join("plain.html"), "<head><title>t</title></head>").unwrap();
    let mut warc = warc_record("warcinfo", "", b"software: test\r\n");
    for i in 0..40 {
        let body = if i % 2 == 0 { "<head><meta name=robots content=noindex></head>" } else { "<p>x</p>" };
        let headers: &[&str] = if i % 3 == 0 { &["X-Robots-Tag: nofollow"] } else { &[] };
        warc.extend(warc_record(
            "response",
            &format!("https://a.example/{i}"),
            &http_message(200, headers, body.as_bytes()),
        ));
    }
    warc.extend(warc_record("response", "https://a.example/broken", b"not http"));
    std::fs::write(path.join("pages.warc"), warc).unwrap();
    stdout_of(
        path,
        &[
            "compile",
            "--agent",
            "mybot",
            "--agent",
            "otherbot",
            "--corpus",
            "fetches.jsonl",
            "--explain",
            "-o",
            "rules.rsv",
        ],
    );
    dir
}

/// The lines of `robotsieve COMMAND --help` that describe `flag`: its line and
/// the indented ones after it, up to the next flag.
fn help_of(dir: &Path, command: &str, flag: &str) -> Option<String> {
    let help = stdout_of(dir, &[command, "--help"]);
    let names_flag = |line: &str| line.trim_start().starts_with('-') && line.split([' ', ',']).any(|word| word == flag);
    let mut lines = help.lines().skip_while(|l| !names_flag(l));
    let first = lines.next()?;
    let rest: Vec<&str> = lines.take_while(|l| !l.trim_start().starts_with('-') && !l.trim().is_empty()).collect();
    // Words only: clap lays a flag's help out on one line or two, by command.
    Some(std::iter::once(first).chain(rest).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" "))
}

#[test]
fn the_artifact_is_read_with_rules_everywhere() {
    let dir = fixture();
    let path = dir.path();
    for command in ["check", "filter", "inspect", "survey"] {
        let help = help_of(path, command, "--rules").unwrap_or_else(|| panic!("{command} has no --rules"));
        assert!(help.contains("--rules <ARTIFACT>"), "{command}: {help}");
        assert!(help.contains("directory of a shard set"), "{command}: {help}");
    }
    let runs: [&[&str]; 4] = [
        &["check", "--rules", "rules.rsv", "--agent", "mybot", "https://a.example/private/x"],
        &["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "urls.txt", "--verdicts", "-"],
        &["inspect", "--rules", "rules.rsv", "--origin", "https://a.example"],
        &["survey", "--rules", "rules.rsv", "--urls", "urls.txt"],
    ];
    for args in runs {
        let out = run(path, args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn inspect_still_takes_the_artifact_as_an_argument_with_a_note() {
    let dir = fixture();
    let path = dir.path();
    let new = run(path, &["inspect", "--rules", "rules.rsv", "--origin", "https://a.example"]);
    let old = run(path, &["inspect", "rules.rsv", "--origin", "https://a.example"]);
    assert!(old.status.success() && new.status.success());
    assert_eq!(old.stdout, new.stdout);
    assert!(String::from_utf8_lossy(&new.stdout).contains("https://a.example: robots.txt fetched (status 200)"));
    assert_eq!(String::from_utf8(old.stderr).unwrap(), note("the artifact as an argument", "--rules ARTIFACT"));
    assert!(new.stderr.is_empty());
    let both = run(path, &["inspect", "rules.rsv", "--rules", "rules.rsv"]);
    assert_eq!(both.status.code(), Some(2), "the argument and --rules together are refused");
    let help = stdout_of(path, &["inspect", "--help"]);
    assert!(!help.contains("[ARTIFACT]"), "the old spelling is not in --help: {help}");
}

#[test]
fn one_file_is_written_with_output_everywhere() {
    let dir = fixture();
    let path = dir.path();
    for command in ["compile", "survey", "meta"] {
        let help = help_of(path, command, "--output").unwrap_or_else(|| panic!("{command} has no --output"));
        assert!(help.starts_with("-o, --output <"), "{command}: {help}");
    }
    // Each written with -o and with --output: the same bytes, nothing on standard output.
    let writers: [(&[&str], &str); 3] = [
        (&["compile", "--agent", "mybot", "--corpus", "fetches.jsonl", "--threads", "1"], "artifact"),
        (&["survey", "--rules", "rules.rsv", "--urls", "urls.txt", "--json", "--threads", "1"], "figures"),
        (&["meta", "--agent", "googlebot", "--warc", "pages.warc"], "lines"),
    ];
    for (args, what) in writers {
        let mut written = Vec::new();
        for flag in ["-o", "--output"] {
            let file = format!("{what}{flag}");
            let out = robotsieve(path).args(args).args([flag, &file]).output().unwrap();
            assert!(out.status.success(), "{args:?} {flag}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(out.stdout.is_empty(), "{args:?} {flag}: the output went to the file");
            assert!(!String::from_utf8_lossy(&out.stderr).contains("deprecated"));
            written.push(std::fs::read(path.join(&file)).unwrap());
        }
        assert!(!written[0].is_empty(), "{args:?}");
        if what != "artifact" {
            // (An artifact records when it was built.)
            assert_eq!(written[0], written[1], "{args:?}");
        }
    }
}

#[test]
fn meta_out_still_works_with_a_note() {
    let dir = fixture();
    let path = dir.path();
    let old = run(path, &["meta", "--agent", "googlebot", "--warc", "pages.warc", "--out", "old.tsv"]);
    let new = run(path, &["meta", "--agent", "googlebot", "--warc", "pages.warc", "-o", "new.tsv"]);
    assert!(old.status.success() && new.status.success(), "{}", String::from_utf8_lossy(&old.stderr));
    assert_eq!(std::fs::read(path.join("old.tsv")).unwrap(), std::fs::read(path.join("new.tsv")).unwrap());
    let stderr = String::from_utf8(old.stderr).unwrap();
    let first = stderr.split_inclusive('\n').next().unwrap();
    assert_eq!(first, note("--out", "-o/--output"));
    assert_eq!(stderr.matches("deprecated").count(), 1, "{stderr}");
    assert!(!String::from_utf8_lossy(&new.stderr).contains("deprecated"));
    assert!(!stdout_of(path, &["meta", "--help"]).contains("--out "), "--help shows only -o/--output");
}

#[test]
fn json_is_a_switch_everywhere() {
    let dir = fixture();
    let path = dir.path();
    let runs: [&[&str]; 9] = [
        &["check", "--robots", "robots.txt", "--agent", "mybot", "https://a.example/private/x"],
        &["inspect", "--rules", "rules.rsv"],
        &["inspect", "--rules", "rules.rsv", "--origin", "https://a.example"],
        &["shard-of", "--shards", "4", "https://a.example/"],
        &["check", "--rules", "rules.rsv", "--agent", "mybot", "https://a.example/private/x"],
        &["lint", "clean.txt"],
        &["meta", "--agent", "googlebot", "page.html"],
        &["meta", "--agent", "googlebot", "--warc", "pages.warc"],
        &["survey", "--rules", "rules.rsv", "--urls", "urls.txt"],
    ];
    for args in runs {
        let help = help_of(path, args[0], "--json").unwrap_or_else(|| panic!("{} has no --json", args[0]));
        assert!(help.contains("JSON"), "{help}");
        let text = stdout_of(path, args);
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{args:?}: text by default: {text}");
        let json = stdout_of(path, &[args, &["--json"]].concat());
        let values = json_values(&json);
        assert!(!values.is_empty() && values.iter().all(Value::is_object), "{args:?}: {json}");
    }
}

#[test]
fn lint_format_still_works_with_a_note() {
    let dir = fixture();
    let path = dir.path();
    for (old, new) in [("json", &["--json"][..]), ("human", &[][..])] {
        let with_new = run(path, &[&["lint", "clean.txt"][..], new].concat());
        let with_old = run(path, &["lint", "clean.txt", "--format", old]);
        assert_eq!(with_old.status.code(), with_new.status.code());
        assert_eq!(with_old.stdout, with_new.stdout, "--format {old}");
        assert!(with_new.stderr.is_empty());
        let expected = if old == "json" {
            note("--format json", "--json")
        } else {
            note("--format human", "no flag (text is the default)")
        };
        assert_eq!(String::from_utf8(with_old.stderr).unwrap(), expected);
    }
    assert_eq!(run(path, &["lint", "clean.txt", "--format", "json", "--json"]).status.code(), Some(2));
    assert!(!stdout_of(path, &["lint", "--help"]).contains("--format"), "--help shows only --json");
}

#[test]
fn threads_mean_the_same_everywhere() {
    let dir = fixture();
    let path = dir.path();
    let commands = ["compile", "filter", "survey", "lint", "meta"];
    let helps: Vec<String> = commands
        .iter()
        .map(|c| help_of(path, c, "--threads").unwrap_or_else(|| panic!("{c} has no --threads")))
        .collect();
    assert!(helps[0].contains("0 or absent: one per core"), "{}", helps[0]);
    for (command, help) in commands.iter().zip(&helps) {
        assert_eq!(help, &helps[0], "{command}: the same help text as compile's");
    }
    let cores = std::thread::available_parallelism().unwrap().get();
    let lint_dir = path.join("lint");
    std::fs::create_dir(&lint_dir).unwrap();
    for i in 0..8 {
        std::fs::copy(path.join(if i % 2 == 0 { "robots.txt" } else { "clean.txt" }), lint_dir.join(format!("{i}")))
            .unwrap();
    }
    // The threads each command reports having used; the same results on any number.
    for (threads, expected) in [("0", cores), ("1", 1), ("3", 3)] {
        let filter = &["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "urls.txt"];
        let stats = stdout_of(path, &[&filter[..], &["--stats", "-", "--threads", threads]].concat());
        let stats: Value = serde_json::from_str(&stats).unwrap();
        assert_eq!(stats["threads"], expected, "filter --threads {threads}");
        assert_eq!(stats["counts"]["disallowed"], 2, "filter --threads {threads}");

        let survey =
            stdout_of(path, &["survey", "--rules", "rules.rsv", "--urls", "urls.txt", "--json", "--threads", threads]);
        let mut survey: Value = serde_json::from_str(&survey).unwrap();
        assert_eq!(survey["threads"], expected, "survey --threads {threads}");
        survey["threads"] = Value::Null;
        let reference =
            stdout_of(path, &["survey", "--rules", "rules.rsv", "--urls", "urls.txt", "--json", "--threads", "1"]);
        let mut reference: Value = serde_json::from_str(&reference).unwrap();
        reference["threads"] = Value::Null;
        assert_eq!(survey, reference);

        let lint = stdout_of(path, &["lint", "--summary", "lint", "--json", "--threads", threads]);
        let lint: Value = serde_json::from_str(&lint).unwrap();
        assert_eq!(
            (&lint["threads"], &lint["files"]),
            (&Value::from(expected), &Value::from(8)),
            "lint --threads {threads}"
        );

        let on = format!("on {expected} threads");
        let compile = run(
            path,
            &["compile", "--agent", "mybot", "--corpus", "fetches.jsonl", "-o", "t.rsv", "--threads", threads],
        );
        let stderr = String::from_utf8(compile.stderr).unwrap();
        assert!(compile.status.success() && stderr.contains(&on), "compile --threads {threads}: {stderr}");
        let inspected = stdout_of(path, &["inspect", "--rules", "t.rsv", "--origin", "https://a.example"]);
        assert!(inspected.contains("status 200"), "{inspected}");

        let meta = run(path, &["meta", "--agent", "googlebot", "--warc", "pages.warc", "--threads", threads]);
        let stderr = String::from_utf8(meta.stderr).unwrap();
        assert!(meta.status.success() && stderr.contains(&on), "meta --threads {threads}: {stderr}");
        assert!(stderr.contains("41 HTTP responses: 20 noindex, 14 nofollow"), "{stderr}");
    }
}

/// A pipe whose read end is closed, for a child's standard output: its first
/// write fails with a broken pipe.
#[cfg(unix)]
fn closed_pipe() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe writes two new descriptors into the array; the read end is
    // closed at once and the write end owned by the OwnedFd.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

#[cfg(unix)]
#[test]
fn a_closed_standard_output_ends_every_command_quietly() {
    let dir = fixture();
    let path = dir.path();
    let runs: [&[&str]; 11] = [
        &["check", "--robots", "robots.txt", "--agent", "mybot", "https://a.example/private/x"],
        &["check", "--rules", "rules.rsv", "--agent", "mybot", "--json", "https://a.example/"],
        &["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "urls.txt", "--verdicts", "-"],
        &["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "urls.txt", "--allowed", "-"],
        &["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "urls.txt", "--stats", "-"],
        &["inspect", "--rules", "rules.rsv"],
        &["inspect", "--rules", "rules.rsv", "--origin", "https://a.example"],
        &["lint", "robots.txt"],
        &["meta", "--agent", "googlebot", "--warc", "pages.warc"],
        &["survey", "--rules", "rules.rsv", "--urls", "urls.txt"],
        &["shard-of", "--shards", "4", "https://a.example/"],
    ];
    for args in runs {
        let out = robotsieve(path).args(args).stdin(Stdio::null()).stdout(closed_pipe()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!((out.status.code(), stderr.as_ref()), (Some(0), ""), "{args:?}");
    }
    let names: BTreeSet<String> =
        std::fs::read_dir(path).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "no temporary file left: {names:?}");
}

/// `robotsieve ... | head -1`: the reader takes one line of a long output and
/// goes away; the run ends with status 0 and says nothing.
#[test]
fn a_reader_that_reads_one_line_and_leaves_ends_the_run_quietly() {
    let dir = fixture();
    let path = dir.path();
    let frontier: String = (0..200_000).map(|i| format!("https://a.example/private/{i}\n")).collect();
    std::fs::write(path.join("frontier.txt"), &frontier).unwrap();
    let runs: [(&[&str], bool); 3] = [
        (&["check", "--rules", "rules.rsv", "--agent", "mybot"], true),
        (&["check", "--robots", "robots.txt", "--agent", "mybot", "--json"], true),
        (&["filter", "--rules", "rules.rsv", "--agent", "mybot", "--urls", "frontier.txt", "--verdicts", "-"], false),
    ];
    for (args, from_stdin) in runs {
        let mut child = robotsieve(path)
            .args(args)
            .stdin(if from_stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let feeder = child.stdin.take().map(|mut stdin| {
            let frontier = frontier.clone();
            std::thread::spawn(move || {
                let _ = stdin.write_all(frontier.as_bytes());
            })
        });
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(first.contains("https://a.example/private/0"), "{args:?}: {first}");
        let out = child.wait_with_output().unwrap();
        if let Some(feeder) = feeder {
            feeder.join().unwrap();
        }
        assert_eq!(
            (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
            (Some(0), String::new()),
            "{args:?}"
        );
    }
}

/// Every JSON value in `text`: one document, or one a line.
fn json_values(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text).into_iter::<Value>().map(Result::unwrap).collect()
}

/// The key sets of the JSON objects in `values`, by where each sits
/// (`.agents[]`, `.findings[]`, ...), skipping the maps keyed by data
/// (`data_keyed`: a preference's values, the crawlers of `by_agent`).
fn key_sets(values: &[Value], data_keyed: &[&str]) -> BTreeMap<String, BTreeSet<Vec<String>>> {
    fn walk(value: &Value, at: String, data_keyed: &[&str], sets: &mut BTreeMap<String, BTreeSet<Vec<String>>>) {
        match value {
            Value::Object(map) if !data_keyed.contains(&at.as_str()) => {
                sets.entry(at.clone()).or_default().insert(map.keys().cloned().collect());
                for (key, value) in map {
                    walk(value, format!("{at}.{key}"), data_keyed, sets);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, format!("{at}[]"), data_keyed, sets)),
            _ => {}
        }
    }
    let mut sets = BTreeMap::new();
    for value in values {
        walk(value, String::new(), data_keyed, &mut sets);
    }
    sets
}

/// Asserts that the objects at each place of the JSON of `runs` (one
/// command's) have one key set, and that every place in `places` was seen.
fn assert_same_keys(dir: &Path, runs: &[&[&str]], data_keyed: &[&str], places: &[&str]) {
    let mut values = Vec::new();
    for args in runs {
        let out = run(dir, args);
        assert!(out.status.code().is_some_and(|c| c < 2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        values.extend(json_values(&String::from_utf8(out.stdout).unwrap()));
    }
    let sets = key_sets(&values, data_keyed);
    for (at, keys) in &sets {
        assert_eq!(keys.len(), 1, "{:?}: the objects at `{at}` have different keys: {keys:?}", runs[0][0]);
    }
    for place in places {
        assert!(sets.contains_key(*place), "{:?}: no object at `{place}`: {sets:?}", runs[0][0]);
    }
}

#[test]
fn the_json_objects_of_a_command_have_the_same_keys() {
    let dir = fixture();
    let path = dir.path();
    let text = std::fs::read_to_string(path.join("urls.txt")).unwrap();
    let urls: Vec<&str> = text.lines().chain(["https://a.example/\u{1}"]).collect();
    // check: allowed (with and without a rule), disallowed, unknown, invalid; from a file and an artifact.
    let by_file = [&["check", "--json", "--robots", "robots.txt", "--agent", "mybot"][..], &urls].concat();
    let by_artifact = [&["check", "--json", "--rules", "rules.rsv", "--agent", "mybot"][..], &urls].concat();
    let checked = json_values(&stdout_of(path, &by_artifact));
    let verdicts: BTreeSet<&str> = checked.iter().map(|v| v["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, BTreeSet::from(["allowed", "disallowed", "invalid", "unknown"]));
    assert_same_keys(path, &[&by_file, &by_artifact], &[".preferences[].values"], &["", ".preferences[]"]);

    // lint: files with and without findings, with and without --agent; the summary; the codes.
    assert_same_keys(
        path,
        &[
            &["lint", "--json", "robots.txt", "clean.txt"],
            &["lint", "--json", "--agent", "mybot", "robots.txt", "clean.txt"],
        ],
        &[],
        &["", ".findings[]", ".agent", ".agent.rules[]"],
    );
    std::fs::create_dir(path.join("corpus")).unwrap();
    std::fs::copy(path.join("robots.txt"), path.join("corpus/a")).unwrap();
    std::fs::copy(path.join("clean.txt"), path.join("corpus/b")).unwrap();
    assert_same_keys(path, &[&["lint", "--json", "--summary", "corpus"]], &[], &["", ".codes[]", ".slowest[]"]);
    assert_same_keys(path, &[&["lint", "--json", "--list-codes"]], &[], &["[]"]);

    // meta: a page with a tag and a problem, and one with neither.
    assert_same_keys(
        path,
        &[&["meta", "--json", "--agent", "googlebot", "page.html", "plain.html"]],
        &[],
        &["", ".statements[]", ".problems[]"],
    );

    // inspect: an artifact and a shard set; origins known and not, with rules kept and not.
    stdout_of(path, &["compile", "--agent", "mybot", "--corpus", "fetches.jsonl", "--shards", "2", "-o", "set"]);
    let inspect_rules = |rules: &'static str, origin: Option<&'static str>| -> Vec<&'static str> {
        let mut args = vec!["inspect", "--json", "--rules", rules];
        args.extend(origin.map(|o| ["--origin", o]).into_iter().flatten());
        args
    };
    let overviews = [inspect_rules("rules.rsv", None), inspect_rules("set", None)];
    assert_same_keys(
        path,
        &overviews.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        &[".shards[].build"],
        &["", ".shards[]", ".shards[].shard", ".shards[].largest_groups[]", ".shards[].sections[]"],
    );
    let origins = [
        inspect_rules("rules.rsv", Some("https://a.example")),
        inspect_rules("rules.rsv", Some("https://nowhere.example")),
        inspect_rules("set", Some("https://c.example")),
    ];
    assert_same_keys(
        path,
        &origins.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        &[".agents[].preferences[].values"],
        &["", ".fetch", ".agents[]", ".agents[].rules[]", ".agents[].preferences[]"],
    );

    // meta --warc: pages with a tag, without, and a record that is no HTTP response.
    let records = json_values(&stdout_of(path, &["meta", "--json", "--agent", "googlebot", "--warc", "pages.warc"]));
    assert_eq!(records.len(), 41);
    assert_eq!((&records[40]["status"], &records[40]["index"]), (&Value::Null, &Value::Null), "{}", records[40]);
    assert!(records[40]["error"].as_str().is_some_and(|e| e.contains("not an HTTP status line")), "{}", records[40]);
    assert_eq!((&records[0]["index"], &records[0]["error"]), (&Value::Bool(false), &Value::Null), "{}", records[0]);
    assert_same_keys(
        path,
        &[&["meta", "--json", "--agent", "googlebot", "--warc", "pages.warc"]],
        &[],
        &["", ".statements[]"],
    );

    // survey: crawlers, and preference values.
    assert_same_keys(
        path,
        &[&["survey", "--json", "--rules", "rules.rsv", "--urls", "urls.txt"]],
        &[],
        &["", ".agents[]", ".preferences[]"],
    );

    // filter --stats: for one crawler and as a matrix.
    let filter = ["filter", "--rules", "rules.rsv", "--urls", "urls.txt", "--stats", "-"];
    assert_same_keys(
        path,
        &[
            &[&filter[..], &["--agent", "mybot"]].concat(),
            &[&filter[..], &["--all-agents", "--matrix", "/dev/null"]].concat(),
        ],
        &[".by_agent"],
        &["", ".counts", ".by_robots_fetch"],
    );
}
