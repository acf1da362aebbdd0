//! `robotsieve fetch` end to end, against the fetcher's test server on
//! loopback: real robots.txt files fetched and compiled give the verdicts of
//! `compile --robots-dir` on the same files; runs killed (SIGKILL, SIGTERM)
//! and resumed leave every origin in the output exactly once.

use robotsieve_fetch::test_server::{Pki, Reply, TestServer};
use robotsieve_testkit::shared_dir;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

/// `fetch` of `origins.txt` from the test server, named in `hosts`: no
/// interval between requests to its one address, no retries.
const LOCAL_FETCH: [&str; 11] = [
    "fetch",
    "--user-agent",
    "robotsieve-test",
    "--urls",
    "origins.txt",
    "--hosts-file",
    "hosts",
    "--per-ip-interval-ms",
    "0",
    "--retries",
    "0",
];

fn robotsieve(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_robotsieve")).current_dir(dir).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The paths a robots.txt names, as URLs of `origin` to filter.
fn urls_of_rules(origin: &str, body: &str, out: &mut Vec<String>) {
    out.push(format!("{origin}/"));
    for line in body.lines() {
        let Some((name, value)) = line.split_once(':') else { continue };
        if !matches!(name.trim().to_ascii_lowercase().as_str(), "allow" | "disallow") {
            continue;
        }
        let path = value.split('#').next().unwrap_or("").trim().replace('*', "x").replace('$', "");
        if path.starts_with('/') && !path.contains(char::is_whitespace) {
            out.push(format!("{origin}{path}"));
            out.push(format!("{origin}{path}more"));
        }
    }
}

#[test]
fn fetched_real_files_compile_to_the_verdicts_of_the_files_themselves() {
    let Some(robots) = shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir()) else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&robots)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt") && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'))
        .collect();
    names.sort();
    // A few hundred, spread over the whole list.
    let step = (names.len() / 300).max(1);
    let chosen: Vec<String> = names.into_iter().step_by(step).take(300).collect();
    let bodies: Arc<HashMap<String, Vec<u8>>> = Arc::new(
        chosen
            .iter()
            .map(|n| (n.trim_end_matches(".txt").to_owned(), std::fs::read(robots.join(n)).unwrap()))
            .collect(),
    );
    let pki = Pki::new(dir.path(), &["unused.test"]);
    let served = bodies.clone();
    let server = TestServer::start(&pki, move |host, path| match (served.get(host), path) {
        (Some(body), "/robots.txt") => Reply::Full(200, vec![], body.clone()),
        _ => Reply::status(404, ""),
    });
    let port = server.ports.http;
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let mut hosts = String::new();
    let mut input = String::new();
    let mut urls = Vec::new();
    for (host, body) in bodies.iter() {
        // `host_PORT.txt` governs http://host:PORT, the origin fetched.
        std::fs::write(files.join(format!("{host}_{port}.txt")), body).unwrap();
        hosts.push_str(&format!("127.0.0.1 {host}\n"));
        input.push_str(&format!("http://{host}:{port}/\n"));
        urls_of_rules(&format!("http://{host}:{port}"), &String::from_utf8_lossy(body), &mut urls);
    }
    std::fs::write(dir.path().join("hosts"), hosts).unwrap();
    std::fs::write(dir.path().join("origins.txt"), input).unwrap();
    std::fs::write(dir.path().join("urls.txt"), urls.join("\n") + "\n").unwrap();
    let d = dir.path();
    let mut args = LOCAL_FETCH.to_vec();
    args.extend(["-o", "fetched.jsonl.zst", "--per-ip-connections", "32", "--stats", "stats.json"]);
    robotsieve(d, &args);

    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("stats.json")).unwrap()).unwrap();
    assert_eq!(
        (stats["origins"].as_u64(), stats["by_status"]["2xx"].as_u64()),
        (Some(bodies.len() as u64), Some(bodies.len() as u64)),
        "{stats}"
    );
    robotsieve(d, &["compile", "--agent", "googlebot", "--corpus", "fetched.jsonl.zst", "-o", "fetched.rsv"]);
    robotsieve(d, &["compile", "--agent", "googlebot", "--robots-dir", "files", "-o", "files.rsv"]);
    robotsieve(
        d,
        &[
            "filter",
            "--rules",
            "fetched.rsv",
            "--agent",
            "googlebot",
            "--urls",
            "urls.txt",
            "--verdicts",
            "fetched.txt",
        ],
    );
    robotsieve(
        d,
        &["filter", "--rules", "files.rsv", "--agent", "googlebot", "--urls", "urls.txt", "--verdicts", "files.txt"],
    );
    let fetched = std::fs::read_to_string(d.join("fetched.txt")).unwrap();
    let files_verdicts = std::fs::read_to_string(d.join("files.txt")).unwrap();
    assert_eq!(fetched.lines().count(), urls.len());
    assert!(fetched == files_verdicts, "the verdicts differ");
    // Both verdicts are there (and no origin is unknown): the comparison means something.
    let verdicts: HashSet<&str> = fetched.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert!(
        verdicts.contains("allowed") && verdicts.contains("disallowed") && !verdicts.contains("unknown"),
        "{verdicts:?}"
    );
}

/// A small random source (the seed is printed, so a failure can be re-run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn read_records(path: &Path) -> Vec<serde_json::Value> {
    let mut text = String::new();
    zstd::stream::read::Decoder::new(std::fs::File::open(path).unwrap()).unwrap().read_to_string(&mut text).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn killed_and_resumed_runs_hold_every_origin_exactly_once() {
    const ORIGINS: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pki = Pki::new(d, &["unused.test"]);
    // Every 50th origin redirects once: its hop must count as held too.
    // Every answer waits 3 ms and at most 16 are in flight, so a run takes
    // at least 20,000 x 3 ms / 16 = 3.75 s on any machine: the first two
    // rounds (killed within 1.4 s) are always interrupted.
    let server = TestServer::start(&pki, |host, path| {
        let n: usize = host.trim_start_matches('o').trim_end_matches(".test").parse().unwrap_or(1);
        match path {
            "/robots.txt" if n % 50 == 0 => Reply::redirect(301, "/moved.txt"),
            _ => Reply::SlowHeaders(Duration::from_millis(3)),
        }
    });
    let port = server.ports.http;
    let mut hosts = String::new();
    let mut input = String::new();
    for i in 0..ORIGINS {
        hosts.push_str(&format!("127.0.0.1 o{i}.test\n"));
        input.push_str(&format!("http://o{i}.test:{port}/\n"));
    }
    std::fs::write(d.join("hosts"), hosts).unwrap();
    std::fs::write(d.join("origins.txt"), input).unwrap();
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    eprintln!("seed {seed}");
    let mut random = Lcg(seed);
    let mut args = LOCAL_FETCH.to_vec();
    args.extend(["-o", "out.jsonl.zst", "--per-ip-connections", "16", "--concurrency", "16"]);
    let started = Instant::now();
    let mut interrupted = 0;
    for (round, signal) in [libc::SIGKILL, libc::SIGTERM, libc::SIGKILL, libc::SIGTERM].into_iter().enumerate() {
        let mut command = Command::new(env!("CARGO_BIN_EXE_robotsieve"));
        command.current_dir(d).args(&args).stderr(Stdio::piped());
        if round > 0 {
            command.arg("--resume");
        }
        let mut child = command.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(200 + random.below(1200)));
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        use std::os::unix::process::ExitStatusExt;
        match (signal, status.code(), status.signal()) {
            (_, Some(0), _) => break, // finished before the signal
            (libc::SIGKILL, None, Some(libc::SIGKILL)) => interrupted += 1,
            (libc::SIGTERM, Some(143), _) => {
                interrupted += 1;
                assert!(stderr.contains("--resume"), "{stderr}");
                // A signal flushes: the partial file reads back whole.
                assert!(d.join("out.jsonl.zst.partial").exists());
            }
            other => panic!("round {round}: {other:?}: {stderr}"),
        }
    }
    assert!(interrupted >= 2, "the runs were interrupted: {interrupted}");
    args.push("--resume");
    robotsieve(d, &args);
    assert!(!d.join("out.jsonl.zst.partial").exists());
    let records = read_records(&d.join("out.jsonl.zst"));
    let mut counts: HashMap<String, usize> = HashMap::new();
    for r in &records {
        assert_eq!(r["status"].as_u64().unwrap_or(0) / 100 * 100, if r["status"] == 301 { 300 } else { 200 }, "{r}");
        *counts.entry(r["url"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    let repeated: Vec<_> = counts.iter().filter(|(_, &n)| n > 1).collect();
    assert!(repeated.is_empty(), "fetched more than once: {:?}", &repeated[..repeated.len().min(5)]);
    let want: HashSet<String> = (0..ORIGINS)
        .flat_map(|i| {
            let robots = format!("http://o{i}.test:{port}/robots.txt");
            match i % 50 {
                0 => vec![robots, format!("http://o{i}.test:{port}/moved.txt")],
                _ => vec![robots],
            }
        })
        .collect();
    let got: HashSet<String> = counts.into_keys().collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the output holds other URLs than the origins'");
    // The corpus reads back as compile reads it.
    robotsieve(d, &["compile", "--agent", "googlebot", "--corpus", "out.jsonl.zst", "-o", "out.rsv"]);
    eprintln!("{} records, {interrupted} interruptions, {:?}", records.len(), started.elapsed());
}

#[test]
fn a_signal_keeps_the_partial_output_and_bad_flags_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Lines that name no origin become records at once; standard input
    // stays open, so only the signal ends the run.
    let mut child = Command::new(env!("CARGO_BIN_EXE_robotsieve"))
        .current_dir(d)
        .args(["fetch", "--user-agent", "t", "--urls", "-", "-o", "out.jsonl"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"not an origin\nmailto:x@example.com\n").unwrap();
    stdin.flush().unwrap();
    let partial = d.join("out.jsonl.partial");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&partial).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "the records were not written within a second's flush");
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    assert_eq!(child.wait().unwrap().code(), Some(129));
    drop(stdin);
    let text = std::fs::read_to_string(&partial).unwrap();
    let urls: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(urls, ["not an origin", "mailto:x@example.com"]);
    assert!(!d.join("out.jsonl").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_robotsieve"))
        .current_dir(d)
        .args(["fetch", "--user-agent", "t", "--urls", "missing.txt", "-o", "x.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.txt"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!d.join("x.jsonl").exists());
}

#[test]
fn ftp_records_compile_as_http_ones_a_file_its_rules_a_550_no_restrictions() {
    use robotsieve_fetch::test_server::{FtpBehaviour, FtpServer};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let with_file = FtpServer::start(FtpBehaviour::Serve(b"User-agent: *\nDisallow: /private\n".to_vec()), true);
    let no_file = FtpServer::start(FtpBehaviour::NoFile, true);
    let (a, b) = (format!("ftp://ftp-a.test:{}", with_file.port), format!("ftp://ftp-b.test:{}", no_file.port));
    std::fs::write(d.join("hosts"), "127.0.0.1 ftp-a.test ftp-b.test\n").unwrap();
    std::fs::write(d.join("origins.txt"), format!("{a}/\n{b}/robots.txt\n")).unwrap();
    let mut args = LOCAL_FETCH.to_vec();
    args.extend(["-o", "fetched.jsonl"]);
    robotsieve(d, &args);
    let records: Vec<serde_json::Value> = std::fs::read_to_string(d.join("fetched.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let status = |url: String| records.iter().find(|r| r["url"] == url).map(|r| r["status"].as_u64().unwrap());
    assert_eq!(status(format!("{a}/robots.txt")), Some(200), "{records:#?}");
    assert_eq!(status(format!("{b}/robots.txt")), Some(404), "{records:#?}");

    robotsieve(d, &["compile", "--agent", "googlebot", "--corpus", "fetched.jsonl", "-o", "rules.rsv"]);
    let urls = [format!("{a}/private/x"), format!("{a}/public"), format!("{b}/private/x")];
    std::fs::write(d.join("urls.txt"), urls.join("\n") + "\n").unwrap();
    robotsieve(
        d,
        &["filter", "--rules", "rules.rsv", "--agent", "googlebot", "--urls", "urls.txt", "--verdicts", "v.txt"],
    );
    let verdicts: Vec<String> = std::fs::read_to_string(d.join("v.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split('\t').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        verdicts,
        [format!("disallowed {}", urls[0]), format!("allowed {}", urls[1]), format!("allowed {}", urls[2])]
    );

    // A proxy URL that is no http:// URL is a flag error.
    let out = Command::new(env!("CARGO_BIN_EXE_robotsieve"))
        .current_dir(d)
        .args(["fetch", "--user-agent", "t", "--urls", "origins.txt", "-o", "x.jsonl", "--proxy", "socks5://p:1"])
        .output()
        .unwrap();
    common::assert_exit_2(&out, "only http:// proxies");
}
