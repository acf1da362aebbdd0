//! The corpus resolved in bounded memory (sorted runs spilled to temporary
//! files) gives what the in-memory resolution gives: the same origins in the
//! same order with the same robots.txt and status, the same warnings, and so
//! the same artifact bytes, on a corpus of duplicates, ties and redirect
//! chains that cross runs, loop and lead nowhere.

use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build_bytes, BuildPlan};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::bounded::BoundedCorpus;
use robotsieve_sources::corpus::{Corpus, OriginRobots, Robots};
use robotsieve_sources::time::Timestamp;
use serde_json::{json, Value};
use std::io::Write;

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// `records` fetch records over `hosts` hosts: both schemes, a few other
/// paths, every status class, times from a few days (so ties), redirects
/// absolute, scheme-relative, root-relative, relative, invalid or missing;
/// some with the cache's `max_age` and `failures_in_a_row`.
fn corpus(records: usize, hosts: u64, seed: u64) -> Vec<Value> {
    let mut r = Random(seed | 1);
    // Drawn apart, so that the records' other fields are what they were without them.
    let mut cache = Random(seed.wrapping_mul(0x9E37_79B9) | 1);
    let bodies = ["", "User-agent: *\nDisallow: /private\n", "User-agent: mybot\nDisallow: /\n", "Disallow: /a$\n"];
    (0..records)
        .map(|i| {
            let host = r.below(hosts);
            let scheme = if r.below(2) == 0 { "http" } else { "https" };
            let path = match r.below(8) {
                0 => "/robots2.txt",
                1 => "/x/robots.txt",
                _ => "/robots.txt",
            };
            let status = [200, 200, 200, 301, 302, 307, 404, 503, 429, 0, 304, 200][r.below(12) as usize];
            let mut record = json!({"url": format!("{scheme}://h{host}.example{path}"), "status": status});
            if status == 200 {
                let body = match r.below(3) {
                    0 => format!("User-agent: *\nDisallow: /only-h{host}-{}\n", r.below(3)),
                    _ => bodies[r.below(4) as usize].to_owned(),
                };
                record["body"] = json!(body);
            }
            if r.below(5) != 0 {
                record["fetched_at"] =
                    json!(Timestamp::from_unix(1_790_000_000 + r.below(50) as i64 * 86_400).to_string());
            }
            if (300..400).contains(&status) && r.below(9) != 0 {
                let other = r.below(hosts);
                let location = match r.below(7) {
                    0 => format!("https://h{other}.example/robots.txt"),
                    1 => format!("http://h{other}.example/robots2.txt"),
                    2 => format!("//h{other}.example/robots.txt"),
                    3 => "/robots2.txt".to_owned(),
                    4 => "robots.txt".to_owned(),
                    5 => "ftp://nowhere/robots.txt".to_owned(),
                    _ => format!("https://h{other}.example/x/robots.txt"),
                };
                record["location"] = json!(location);
            }
            if cache.below(3) == 0 {
                record["max_age"] = json!(cache.below(200_000));
            }
            if cache.below(4) == 0 {
                record["failures_in_a_row"] = json!(cache.below(6));
            }
            if i % 97 == 0 {
                record["url"] = json!("not a url");
            }
            record
        })
        .collect()
}

#[test]
fn bounded_resolution_equals_the_one_in_memory() {
    let agents = vec![Agent::parse("mybot").unwrap(), Agent::parse("otherbot").unwrap()];
    let plan = BuildPlan::new(agents, BuildOptions::default());
    for (records, hosts, seed) in [(3000, 150, 1), (3000, 40, 2), (800, 400, 3), (1, 1, 4)] {
        let lines = corpus(records, hosts, seed);
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let name = file.path().display().to_string();

        let mut memory = Corpus::new();
        memory.add_jsonl_from(name.as_str().into(), text.as_bytes()).unwrap();
        let resolution = memory.resolve();
        let expected: Vec<OriginRobots> = resolution.origins.into_values().map(OriginRobots::from).collect();
        let expected_warnings: Vec<String> = resolution.warnings.iter().map(|w| w.to_string()).collect();
        let (expected_bytes, _) = build_bytes(expected.clone(), &plan).unwrap();
        if records > 1 {
            // The corpus exercises what it is meant to: redirects followed to
            // a body, failed ones, blocked origins, off-root records skipped.
            let redirected = |followed: bool| {
                expected
                    .iter()
                    .any(|o| (300..400).contains(&o.status) && matches!(o.robots, Robots::Body(_)) == followed)
            };
            assert!(redirected(true) && redirected(false), "seed {seed}");
            assert!(expected.iter().any(|o| o.robots == Robots::Blocked));
            assert!(expected_warnings.iter().any(|w| w.contains("is not /robots.txt at the root")));
            // The governing copies' facts come through, each kind of them.
            assert!(expected.iter().any(|o| o.copy.max_age.is_some() && o.copy.fetched_at.is_some()));
            assert!(expected.iter().any(|o| o.copy.failures_in_a_row.is_some() && o.robots == Robots::Blocked));
        }

        for budget in [2048, 64 << 20] {
            let mut bounded = BoundedCorpus::new(budget);
            bounded.add_jsonl(file.path()).unwrap();
            let mut resolved = bounded.resolve().unwrap();
            if budget == 2048 && records > 1 {
                assert!(
                    resolved.spilled_runs > 10,
                    "{records} records in {budget} bytes: {} runs",
                    resolved.spilled_runs
                );
            }
            assert_eq!(resolved.records, records as u64);
            assert_eq!(resolved.origins, expected.len() as u64);
            assert_eq!(resolved.warnings.first(u64::MAX).unwrap(), expected_warnings, "seed {seed}, budget {budget}");
            let got: Vec<OriginRobots> = resolved.stream.by_ref().collect();
            assert!(resolved.stream.error().is_none());
            assert_eq!(got.len(), expected.len());
            for (g, e) in got.iter().zip(&expected) {
                assert_eq!(g, e, "seed {seed}, budget {budget}");
            }
            let (bytes, _) = build_bytes(got, &plan).unwrap();
            assert!(bytes == expected_bytes, "seed {seed}, budget {budget}: the artifacts differ");
        }
    }
}

#[test]
fn a_pipe_is_read_twice_through_a_copy() {
    let lines = corpus(500, 60, 9);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut memory = Corpus::new();
    memory.add_jsonl_from("/dev/stdin".into(), text.as_bytes()).unwrap();
    let expected: Vec<OriginRobots> = memory.resolve().origins.into_values().map(OriginRobots::from).collect();
    // A fifo, written by a thread: it can be read once only.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("corpus.jsonl");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let mut bounded = BoundedCorpus::new(4096);
    bounded.add_jsonl(&fifo).unwrap();
    writer.join().unwrap();
    let got: Vec<OriginRobots> = bounded.resolve().unwrap().stream.collect();
    assert_eq!(got, expected);
}
