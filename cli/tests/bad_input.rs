//! The bad-input catalogue of the README ("Bad input"), each case through
//! the real binary: what a bad line of a URL list gets (one `invalid`
//! verdict with a reason, the run goes on), and what a damaged input or
//! output gets (exit status 2, a message naming the file and where, no file
//! left under a final name).

use robotsieve_testkit::names_in;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{compile_example, robotsieve};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

/// A directory holding `x.rsv`, compiled for mybot (with --explain) from
/// ROBOTS as https://example.com.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    compile_example(dir.path(), ROBOTS);
    dir
}

/// Starts robotsieve in `dir` with `args`, every standard stream a pipe.
fn spawn_piped(dir: &Path, args: &[&str]) -> Child {
    robotsieve()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs robotsieve in `dir` with `args`, feeding `stdin` (or nothing).
fn run(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = spawn_piped(dir, args);
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or_default().to_vec();
    let feeder = std::thread::spawn(move || {
        // The run may stop reading early (it failed): a broken pipe is fine.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// The verdicts `check` printed, in order.
fn verdicts_of(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts a failure as the catalogue promises: exit status 2 and a message
/// holding every one of `parts`.
fn assert_fails(out: &Output, parts: &[&str]) {
    let message = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{message}");
    for part in parts {
        assert!(message.contains(part), "{part:?} not in: {message}");
    }
    assert!(!message.contains("panicked"), "{message}");
}

/// Lines of a URL list that are no URL, each with the reason its verdict
/// gets (`None`: whatever the URL parser says, as long as it says something).
const BAD_LINES: [(&[u8], Option<&str>); 6] = [
    (b"https://example.com/a\0b", Some("NUL byte at byte 22: binary data, not a URL")),
    (b"\0\0\0\0", Some("NUL byte at byte 1: binary data, not a URL")),
    (b"https://example.com/\xff\xfeok", Some("not UTF-8 from byte 21 on")),
    (
        b"https://example.com/ok\rhttps://example.com/private",
        Some("carriage return at byte 23: lines end with LF or CRLF, not CR alone"),
    ),
    (b"\x1b[31mhttps://example.com/", Some("control character 0x1b at byte 1")),
    (b"%%% garbage ::// %%%", None),
];

/// A URL list with the bad lines between good ones, blank lines (LF, CRLF)
/// and CRLF line ends: each bad line `i` follows an allowed URL and comes
/// before a disallowed one.
fn list_with_bad_lines() -> Vec<u8> {
    let mut data = Vec::new();
    for (i, (line, _)) in BAD_LINES.iter().enumerate() {
        data.extend_from_slice(format!("https://example.com/ok/{i}\n\n").as_bytes());
        data.extend_from_slice(line);
        data.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
        data.extend_from_slice(format!("\r\nhttps://example.com/private/{i}\r\n").as_bytes());
    }
    data
}

/// The verdicts file `list_with_bad_lines` must give: one line per non-blank
/// line, in input order, the URL as read.
fn check_verdicts_file(verdicts: &[u8]) {
    let lines: Vec<&[u8]> = verdicts.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 3 * BAD_LINES.len(), "{}", String::from_utf8_lossy(verdicts));
    for (i, (bad, reason)) in BAD_LINES.iter().enumerate() {
        let field = |line: &[u8], n: usize| line.split(|&b| b == b'\t').nth(n).unwrap().to_vec();
        assert_eq!(field(lines[3 * i], 1), format!("https://example.com/ok/{i}").as_bytes());
        assert_eq!(field(lines[3 * i], 0), b"allowed");
        let line = lines[3 * i + 1];
        assert!(line.starts_with(b"invalid\t"), "{}", String::from_utf8_lossy(line));
        assert_eq!(&line[8..8 + bad.len() + 1], [*bad, b"\t"].concat(), "the URL as read");
        let given = String::from_utf8_lossy(&line[8 + bad.len() + 1..]).into_owned();
        match reason {
            Some(reason) => assert_eq!(given, *reason),
            None => assert!(!given.is_empty(), "a garbage line says why"),
        }
        assert_eq!(field(lines[3 * i + 2], 0), b"disallowed");
    }
}

#[test]
fn each_bad_line_of_a_url_list_is_one_invalid_verdict_in_input_order() {
    let dir = setup();
    let data = list_with_bad_lines();
    std::fs::write(dir.path().join("urls.txt"), &data).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&data).unwrap();
    std::fs::write(dir.path().join("urls.txt.gz"), gz.finish().unwrap()).unwrap();
    // Mapped, from standard input, decompressed: the same answers.
    for (urls, stdin) in [("urls.txt", None), ("-", Some(&data[..])), ("urls.txt.gz", None)] {
        let args = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", urls, "--explain"];
        let outputs = ["--verdicts", "v.txt", "--invalid", "i.txt", "--allowed", "a.txt", "--stats", "s.json"];
        let out = run(dir.path(), &[&args[..], &outputs].concat(), stdin);
        assert!(out.status.success(), "{urls}: {}", stderr(&out));
        check_verdicts_file(&std::fs::read(dir.path().join("v.txt")).unwrap());
        // The invalid list holds the bad lines byte for byte: it is where
        // they are looked at and fixed. The other lists hold only text.
        let invalid: Vec<u8> = BAD_LINES.iter().flat_map(|(line, _)| [*line, b"\n"].concat()).collect();
        assert_eq!(std::fs::read(dir.path().join("i.txt")).unwrap(), invalid, "{urls}");
        let allowed = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
        assert_eq!(allowed.lines().count(), BAD_LINES.len());
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
        let n = BAD_LINES.len();
        assert_eq!(stats["urls"], 3 * n, "{urls}: every non-blank line counted once");
        assert_eq!(stats["counts"], serde_json::json!({"allowed": n, "disallowed": n, "unknown": 0, "invalid": n}));
        assert_eq!(stats["input_bytes"], data.len());
    }
}

#[test]
fn check_answers_bad_lines_on_standard_input_one_printable_line_each() {
    let dir = setup();
    let mut data = Vec::new();
    for (line, _) in BAD_LINES {
        data.extend_from_slice(line);
        data.extend_from_slice(b"\nhttps://example.com/private\n");
    }
    let out = run(dir.path(), &["check", "--rules", "x.rsv", "--agent", "mybot"], Some(&data));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).expect("check prints text");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * BAD_LINES.len(), "{text}");
    // Control bytes and bytes that are not UTF-8 are shown as \xNN, so
    // that no answer breaks into two lines or fields.
    let shown = [
        "https://example.com/a\\x00b",
        "\\x00\\x00\\x00\\x00",
        "https://example.com/\\xff\\xfeok",
        "https://example.com/ok\\x0dhttps://example.com/private",
        "\\x1b[31mhttps://example.com/",
        "%%% garbage ::// %%%",
    ];
    for (i, ((_, reason), shown)) in BAD_LINES.iter().zip(shown).enumerate() {
        let fields: Vec<&str> = lines[2 * i].split('\t').collect();
        assert_eq!(fields[..2], ["invalid", shown], "{}", lines[2 * i]);
        assert_eq!(fields.len(), 3);
        if let Some(reason) = reason {
            assert_eq!(fields[2], *reason);
        }
        assert!(lines[2 * i + 1].starts_with("disallowed\thttps://example.com/private\t"), "{}", lines[2 * i + 1]);
    }
    // Against one robots.txt, the same.
    let out = run(dir.path(), &["check", "--robots", "robots.txt", "--agent", "mybot"], Some(&data));
    let robots_lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect();
    for (i, (_, reason)) in BAD_LINES.iter().enumerate().filter(|(_, (_, reason))| reason.is_some()) {
        assert_eq!(robots_lines[2 * i], lines[2 * i], "{:?}", reason);
    }
    // JSON keeps the bytes JSON can hold: control bytes escaped.
    let out = run(dir.path(), &["check", "--rules", "x.rsv", "--agent", "mybot", "--json"], Some(&data));
    let first: serde_json::Value = serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["url"], "https://example.com/a\u{0}b");
    assert_eq!(first["verdict"], "invalid");
    assert_eq!(first["reason"], BAD_LINES[0].1.unwrap());
}

/// Waits for `child` and returns its output and the most memory it held
/// (peak resident set, bytes), from the kernel's accounting of that child.
fn wait_with_peak_memory(mut child: Child) -> (Vec<u8>, std::process::ExitStatus, u64) {
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
        bytes
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value; wait4 fills it in for the
    // child `child.id()`, which this test spawned and has not waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let output = reader.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    (output, std::process::ExitStatus::from_raw(status), usage.ru_maxrss as u64 * 1024)
}

/// The most memory a run with a 100 MB line may take: a few chunks of 1 MiB
/// and their outputs. Holding the line would take 100 MB for the chunk and
/// as much again for each output buffer (300 MB before this was bounded).
const BOUNDED_MEMORY: u64 = 64 << 20;

#[test]
fn a_100_mb_line_is_one_invalid_url_and_memory_stays_bounded() {
    let dir = setup();
    let long_len = 100 << 20;
    let head = b"ok\nhttps://example.com/";
    let tail = b"\nhttps://example.com/private\n";
    let write_list = |to: &mut dyn Write| {
        to.write_all(head).unwrap();
        let block = vec![b'a'; 1 << 20];
        for _ in 0..100 {
            to.write_all(&block).unwrap();
        }
        to.write_all(tail).unwrap();
    };
    write_list(&mut std::io::BufWriter::new(File::create(dir.path().join("long.txt")).unwrap()));
    let total = head.len() + long_len + tail.len();
    assert_eq!(std::fs::metadata(dir.path().join("long.txt")).unwrap().len(), total as u64);
    let filter = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--explain", "--verdicts", "-"];
    let cases: [(&[&str], &str); 3] = [
        (&[&filter[..], &["--urls", "long.txt"]].concat(), "mapped"),
        (&[&filter[..], &["--urls", "-"]].concat(), "filter on standard input"),
        (&["check", "--rules", "x.rsv", "--agent", "mybot"], "check on standard input"),
    ];
    for (args, what) in cases {
        let on_stdin = !args.contains(&"long.txt");
        let mut child = robotsieve()
            .current_dir(dir.path())
            .args(args)
            .stdin(if on_stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let feeder = child.stdin.take().map(|mut stdin| std::thread::spawn(move || write_list(&mut stdin)));
        let (output, status, peak) = wait_with_peak_memory(child);
        if let Some(feeder) = feeder {
            feeder.join().unwrap();
        }
        assert!(status.success(), "{what}: {status}");
        let text = String::from_utf8(output).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{what}: one verdict per line, the long line not split");
        assert!(lines[0].starts_with("invalid\tok\t"), "{what}: {}", lines[0]);
        let long: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(long[0], "invalid", "{what}");
        assert_eq!(long[1].len(), 65_536, "{what}: the line is cut at the limit in the output");
        assert_eq!(long[2], "line longer than 65536 bytes (cut there in the outputs)", "{what}");
        assert!(lines[2].starts_with("disallowed\thttps://example.com/private"), "{what}: the run went on");
        eprintln!("{what}: peak memory {} MiB", peak >> 20);
        assert!(peak < BOUNDED_MEMORY, "{what}: peak memory {} MiB", peak >> 20);
    }
}

/// A URL list of `count` lines compressed, cut in half (`cut.txt.gz`,
/// `cut.txt.zst`) and damaged in the middle (`bad.txt.gz`); returns the
/// lengths of the files cut and of the damaged one.
fn damaged_lists(dir: &Path, count: usize) -> [(&'static str, usize); 3] {
    let data: String = (0..count).map(|i| format!("https://example.com/page/{i}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data.as_bytes()).unwrap();
    let mut gz = gz.finish().unwrap();
    std::fs::write(dir.join("cut.txt.gz"), &gz[..gz.len() / 2]).unwrap();
    let zst = zstd::encode_all(data.as_bytes(), 1).unwrap();
    std::fs::write(dir.join("cut.txt.zst"), &zst[..zst.len() / 2]).unwrap();
    let middle = gz.len() / 2;
    gz[middle..middle + 64].fill(0xff);
    std::fs::write(dir.join("bad.txt.gz"), &gz).unwrap();
    [("cut.txt.gz", gz.len() / 2), ("cut.txt.zst", zst.len() / 2), ("bad.txt.gz", gz.len())]
}

#[test]
fn a_truncated_or_damaged_compressed_list_fails_naming_the_file_and_offset_and_leaves_no_output() {
    let dir = setup();
    let files = damaged_lists(dir.path(), 200_000);
    let before = names_in(dir.path());
    for (name, len) in files {
        let args = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", name];
        let out = run(dir.path(), &[&args[..], &["--allowed", "a.txt", "--stats", "s.json"]].concat(), None);
        let of_len = format!(" of {len} of the compressed file (after ");
        assert_fails(&out, &[&format!("{name}: cannot read: "), &of_len, " decompressed bytes)"]);
        // How far it got: all of a file cut short; about half of the damaged
        // one (read ahead by a buffer at most); and in either case many
        // lines' worth of decompressed bytes.
        let message = stderr(&out);
        let number =
            |after: &str| -> usize { message.split(after).nth(1).unwrap().split(' ').next().unwrap().parse().unwrap() };
        let reached = number(" at byte ");
        if name.starts_with("cut") {
            assert_eq!(reached, len, "{message}");
        } else {
            assert!(reached > len / 2 - 100 && reached < len / 2 + 64 * 1024, "{message}");
        }
        assert!(number("(after ") > 1000 * 30, "{message}");
        assert_eq!(names_in(dir.path()), before, "{name}: no output, no temporary file");
        // check reads no compressed files; the artifact name is what a user
        // could get wrong, and a compressed list there is not an artifact.
        let out = run(dir.path(), &["check", "--rules", name, "--agent", "mybot", "https://example.com/"], None);
        assert_fails(&out, &[name, "not a robotsieve artifact"]);
    }
}

fn jsonl_record(host: &str) -> String {
    serde_json::json!({"url": format!("https://{host}/robots.txt"), "status": 200, "body": "User-agent: *\nDisallow: /x\n"})
        .to_string()
}

#[test]
fn a_broken_corpus_record_fails_naming_file_and_line_or_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = ["a.example", "b.example", "c.example", "d.example"].map(jsonl_record).to_vec();
    lines[2] = r#"{"url": "https://c.example/robots.txt", "status": 200, "body": "User-agent: *\nDis"#.to_string();
    lines.insert(3, "not json at all".to_string());
    std::fs::write(dir.path().join("c.jsonl"), lines.join("\n") + "\n").unwrap();
    let compile = ["compile", "--agent", "mybot", "--corpus", "c.jsonl", "-o", "c.rsv"];
    let out = run(dir.path(), &compile, None);
    assert_fails(&out, &["c.jsonl:3: the record is cut short"]);
    assert_eq!(names_in(dir.path()), ["c.jsonl"]);

    let out = run(dir.path(), &[&compile[..], &["--skip-bad-records"]].concat(), None);
    let message = stderr(&out);
    assert!(out.status.success(), "{message}");
    assert!(message.contains("skipped: c.jsonl:3: the record is cut short"), "{message}");
    assert!(message.contains("skipped: c.jsonl:4: not JSON"), "{message}");
    assert!(message.contains(", 2 bad records skipped) into c.rsv"), "{message}");
    let urls = ["https://a.example/x", "https://b.example/x", "https://c.example/x", "https://d.example/x"];
    let out = run(dir.path(), &[&["check", "--rules", "c.rsv", "--agent", "mybot"][..], &urls].concat(), None);
    assert_eq!(verdicts_of(&out), ["disallowed", "disallowed", "unknown", "disallowed"]);
}

fn warc_response(host: &str) -> Vec<u8> {
    let body = "User-agent: *\nDisallow: /x\n";
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n{body}");
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://{host}/robots.txt\r\nWARC-Date: 2026-11-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
    .into_bytes()
}

#[test]
fn a_warc_file_cut_mid_record_fails_naming_record_and_offset_or_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = ["a.example", "b.example", "c.example"].iter().map(|h| warc_response(h)).collect();
    let whole = records.concat();
    std::fs::write(dir.path().join("cut.warc"), &whole[..whole.len() - 20]).unwrap();
    // Gzip per record, as crawlers write them, cut inside the last member.
    let mut gz = Vec::new();
    for record in &records {
        let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        member.write_all(record).unwrap();
        gz.extend(member.finish().unwrap());
    }
    std::fs::write(dir.path().join("cut.warc.gz"), &gz[..gz.len() - 20]).unwrap();
    let third = records[0].len() + records[1].len();
    for name in ["cut.warc", "cut.warc.gz"] {
        let compile = ["compile", "--agent", "mybot", "--warc", name, "-o", "w.rsv"];
        let out = run(dir.path(), &compile, None);
        assert_fails(&out, &[&format!("{name}: record 3: at offset {third}: ")]);
        assert!(!dir.path().join("w.rsv").exists());

        let out = run(dir.path(), &[&compile[..], &["--skip-bad-records"]].concat(), None);
        let message = stderr(&out);
        assert!(out.status.success(), "{name}: {message}");
        assert!(message.contains(&format!("skipped: {name}: record 3: at offset {third}")), "{message}");
        assert!(message.contains(", 1 bad records skipped) into w.rsv"), "{message}");
        let urls = ["https://a.example/x", "https://b.example/x", "https://c.example/x"];
        let out = run(dir.path(), &[&["check", "--rules", "w.rsv", "--agent", "mybot"][..], &urls].concat(), None);
        assert_eq!(verdicts_of(&out), ["disallowed", "disallowed", "unknown"], "{name}");
        std::fs::remove_file(dir.path().join("w.rsv")).unwrap();

        // meta reads WARC files too: the same failure, and no --out file.
        let out = run(dir.path(), &["meta", "--agent", "mybot", "--warc", name, "-o", "m.tsv"], None);
        assert_fails(&out, &[name, "record 3", &format!("offset {third}")]);
        assert!(!dir.path().join("m.tsv").exists());
    }
    // A record with a broken header between good ones: skipped, and the
    // reader finds the next record.
    let mut broken = records[0].clone();
    broken
        .extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\nno colon here\r\n\r\nHTTP/1.1 200 OK\r\n\r\n\r\n\r\n");
    broken.extend_from_slice(&records[2]);
    std::fs::write(dir.path().join("broken.warc"), &broken).unwrap();
    let compile = ["compile", "--agent", "mybot", "--warc", "broken.warc", "-o", "b.rsv"];
    assert_fails(&run(dir.path(), &compile, None), &["broken.warc: record 2: at offset", "without a colon"]);
    let out = run(dir.path(), &[&compile[..], &["--skip-bad-records"]].concat(), None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("compiled 2 origins"), "{}", stderr(&out));
}

/// Spawns robotsieve with a standard input that stays open and is never
/// written: a run that fails before reading its input ends at once; one
/// that reads would wait forever (the test then fails after 20 seconds).
fn fails_before_reading_stdin(dir: &Path, args: &[&str]) -> Output {
    let mut child = spawn_piped(dir, args);
    let _open_stdin = child.stdin.take();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("{args:?} read its input instead of failing first");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A directory this process cannot create files in: a read-only one for a
/// user; for root, whom permissions do not stop, sysfs.
fn unwritable_dir(under: &Path) -> std::path::PathBuf {
    if unsafe { libc::geteuid() } == 0 {
        return "/sys".into();
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = under.join("read-only");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    dir
}

#[test]
fn an_output_that_cannot_be_created_fails_before_the_work() {
    let dir = setup();
    let unwritable = unwritable_dir(dir.path()).join("out.txt");
    let unwritable = unwritable.to_str().unwrap();
    let filter = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "-"];
    let cases: [(&str, &str, &str); 7] = [
        ("--verdicts", "missing/v.txt", "No such file or directory"),
        ("--stats", "missing/s.json", "No such file or directory"),
        ("--allowed", "x.rsv/a.txt", "Not a directory"),
        ("--invalid", ".", "is a directory"),
        ("--verdicts", unwritable, "Permission denied"),
        ("--stats", unwritable, "Permission denied"),
        ("--disallowed", "missing/d.txt", "No such file or directory"),
    ];
    for (flag, path, reason) in cases {
        let mut args = filter.to_vec();
        if flag != "--verdicts" {
            args.extend(["--verdicts", "v.txt"]);
        }
        args.extend([flag, path]);
        let out = fails_before_reading_stdin(dir.path(), &args);
        assert_fails(&out, &[&format!("{path}: cannot write: {reason}")]);
        assert!(!dir.path().join("v.txt").exists(), "{flag} {path}: no output left");
    }
    // compile and meta probe their output before reading anything.
    let compile = ["compile", "--agent", "mybot", "--robots", "/dev/stdin", "--origin", "https://example.com", "-o"];
    for (path, reason) in [("missing/x.rsv", "No such file or directory"), (unwritable, "Permission denied")] {
        let out = fails_before_reading_stdin(dir.path(), &[&compile[..], &[path]].concat());
        assert_fails(&out, &[&format!("{path}: cannot write: {reason}")]);
    }
    let out =
        fails_before_reading_stdin(dir.path(), &["meta", "--agent", "mybot", "--warc", "/dev/stdin", "-o", "no/m.tsv"]);
    assert_fails(&out, &["no/m.tsv: cannot write: No such file or directory"]);
    assert!(names_in(dir.path()).iter().all(|n| !n.contains("robotsieve")), "{:?}", names_in(dir.path()));
}

#[test]
fn an_output_on_a_full_disk_fails_and_the_device_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = setup();
    std::fs::write(dir.path().join("urls.txt"), "https://example.com/\n".repeat(1000)).unwrap();
    let filter = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "urls.txt"];
    for flag in ["--verdicts", "--allowed", "--stats"] {
        let out = run(dir.path(), &[&filter[..], &[flag, "/dev/full"]].concat(), None);
        assert_fails(&out, &["/dev/full: cannot write: No space left on device"]);
    }
    let compile = ["compile", "--agent", "mybot", "--robots", "robots.txt", "--origin", "https://example.com"];
    let out = run(dir.path(), &[&compile[..], &["-o", "/dev/full"]].concat(), None);
    assert_fails(&out, &["/dev/full: cannot write: No space left on device"]);
    assert!(std::fs::metadata("/dev/full").unwrap().file_type().is_char_device(), "never renamed over");
    let litter: Vec<String> = names_in(Path::new("/dev")).into_iter().filter(|n| n.starts_with(".full.")).collect();
    assert!(litter.is_empty(), "{litter:?}");
}

#[test]
fn standard_output_is_written_in_place_never_renamed_over() {
    let dir = setup();
    std::fs::write(dir.path().join("urls.txt"), "https://example.com/\nhttps://example.com/private\n").unwrap();
    let filter = ["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "urls.txt", "--verdicts"];
    let expected = "allowed\thttps://example.com/\ndisallowed\thttps://example.com/private\n";
    let out = run(dir.path(), &[&filter[..], &["-"]].concat(), None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    // Standard output redirected to a file opened for appending (a shell's
    // `>>`): /dev/stdout is written through that descriptor, so the file
    // keeps what it held, and /dev/stdout stays the link it was.
    let log = dir.path().join("log.txt");
    std::fs::write(&log, "earlier\n").unwrap();
    for name in ["/dev/stdout", "/proc/self/fd/1"] {
        let appended = File::options().append(true).open(&log).unwrap();
        let status = robotsieve()
            .current_dir(dir.path())
            .args([&filter[..], &[name]].concat())
            .stdout(Stdio::from(appended))
            .status()
            .unwrap();
        assert!(status.success());
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("earlier\n{expected}{expected}"));
    assert!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_symlink());
}

/// `x.rsv` with its format version changed by `delta`; returns the version
/// this build writes (and reads).
fn artifact_of_version(dir: &Path, delta: i64, name: &str) -> u32 {
    let mut bytes = std::fs::read(dir.join("x.rsv")).unwrap();
    let version = u32::from_ne_bytes(bytes[8..12].try_into().unwrap());
    bytes[8..12].copy_from_slice(&((version as i64 + delta) as u32).to_ne_bytes());
    std::fs::write(dir.join(name), bytes).unwrap();
    version
}

#[test]
fn an_artifact_of_another_format_version_says_which_and_what_to_do() {
    let dir = setup();
    std::fs::write(dir.path().join("urls.txt"), "https://example.com/\n").unwrap();
    let version = artifact_of_version(dir.path(), 1, "newer.rsv");
    artifact_of_version(dir.path(), -1, "older.rsv");
    // A real format-6 artifact, as the previous release compiled it.
    let format6 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format6.rsv");
    std::fs::copy(format6, dir.path().join("format6.rsv")).unwrap();
    let bytes = std::fs::read(dir.path().join("x.rsv")).unwrap();
    std::fs::write(dir.path().join("cut.rsv"), &bytes[..bytes.len() / 2]).unwrap();
    let expected = [
        (
            "newer.rsv",
            format!(
                "newer.rsv: format version {}, written by a newer robotsieve; this one reads version {version}: upgrade robotsieve, or compile the artifact again with this one",
                version + 1
            ),
        ),
        (
            "older.rsv",
            format!(
                "older.rsv: format version {}, written by an older robotsieve; this one reads version {version}: rebuild it from its inputs with `robotsieve compile`",
                version - 1
            ),
        ),
        (
            "format6.rsv",
            format!(
                "format6.rsv: format version 6, written by an older robotsieve; this one reads version {version}: rebuild it from its inputs with `robotsieve compile`"
            ),
        ),
        ("cut.rsv", format!("cut.rsv: header says {} bytes but the file has {}", bytes.len(), bytes.len() / 2)),
    ];
    for (name, message) in &expected {
        let commands: [&[&str]; 3] = [
            &["filter", "--rules", name, "--agent", "mybot", "--urls", "urls.txt", "--verdicts", "v.txt"],
            &["check", "--rules", name, "--agent", "mybot", "https://example.com/"],
            &["inspect", "--rules", name],
        ];
        for args in commands {
            let out = run(dir.path(), args, None);
            assert_fails(&out, &[message]);
            assert!(!dir.path().join("v.txt").exists());
        }
    }
}

/// A byte of `x.rsv`'s only group blob changed (its checksum as it was):
/// opening checks only the header and index, so the file opens, and every
/// command that reaches the group fails with exit 2 naming the file and the
/// origin, leaving no output; a run that never reaches it answers; and
/// `inspect --verify` refuses it.
#[test]
fn a_damaged_group_fails_the_commands_that_reach_it_naming_the_origin() {
    let dir = setup();
    let mut bytes = std::fs::read(dir.path().join("x.rsv")).unwrap();
    bytes[robotsieve_engine::testing::GROUPS_START + 64] ^= 0x40;
    std::fs::write(dir.path().join("damaged.rsv"), &bytes).unwrap();
    std::fs::write(dir.path().join("urls.txt"), "https://example.com/private\n").unwrap();
    std::fs::write(dir.path().join("other.txt"), "https://other.example/private\n").unwrap();
    let message = "damaged.rsv: damaged artifact: group 0 (the rules of https://example.com): checksum mismatch";
    let commands: [&[&str]; 4] = [
        &["filter", "--rules", "damaged.rsv", "--agent", "mybot", "--urls", "urls.txt", "--verdicts", "v.txt"],
        &["check", "--rules", "damaged.rsv", "--agent", "mybot", "https://example.com/"],
        &["inspect", "--verify", "--rules", "damaged.rsv"],
        &["inspect", "--rules", "damaged.rsv", "--origin", "https://example.com"],
    ];
    for args in commands {
        let out = run(dir.path(), args, None);
        assert_fails(&out, &[message, "compile the artifact again"]);
        assert!(!dir.path().join("v.txt").exists());
    }
    let args = ["filter", "--rules", "damaged.rsv", "--agent", "mybot", "--urls", "other.txt", "--verdicts", "v.txt"];
    let out = run(dir.path(), &args, None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.path().join("v.txt")).unwrap(), "unknown\thttps://other.example/private\n");
    let out = run(dir.path(), &["inspect", "--verify", "--rules", "x.rsv"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(every byte checked)"));
}

#[test]
fn a_missing_or_unreadable_input_names_the_file() {
    let dir = setup();
    let missing = "No such file or directory";
    let cases: [&[&str]; 7] = [
        &["check", "--robots", "nope.txt", "--agent", "mybot", "https://example.com/"],
        &["check", "--rules", "nope.rsv", "--agent", "mybot", "https://example.com/"],
        &["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "nope.txt", "--verdicts", "v.txt"],
        &["inspect", "--rules", "nope.rsv"],
        &["lint", "robots.txt", "nope.txt"],
        &["meta", "--agent", "mybot", "nope.html"],
        &["compile", "--agent", "mybot", "--corpus", "nope.jsonl", "-o", "y.rsv"],
    ];
    for args in cases {
        assert_fails(&run(dir.path(), args, None), &["nope.", missing]);
    }
    // A directory where a file is wanted.
    std::fs::create_dir(dir.path().join("d.txt")).unwrap();
    for args in [
        &["lint", "d.txt"][..],
        &["filter", "--rules", "x.rsv", "--agent", "mybot", "--urls", "d.txt", "--stats", "s.json"],
    ] {
        assert_fails(&run(dir.path(), args, None), &["d.txt", "directory"]);
    }
    assert!(
        !dir.path().join("v.txt").exists() && !dir.path().join("y.rsv").exists() && !dir.path().join("s.json").exists()
    );
}
