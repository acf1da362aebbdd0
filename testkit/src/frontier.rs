//! The synthetic frontier of `../shared/realworld/synth_frontier.py` as the
//! CLI tests use it: its URLs, and a corpus of fetch records of its hosts'
//! real robots.txt files to compile them against.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// A synthetic frontier: its URLs in order, and the hosts that have a
/// robots.txt in `realworld/robots`, with its file.
pub struct Frontier {
    /// One URL a line, in the generator's order.
    pub urls: String,
    /// Host -> its robots.txt file.
    pub robots: BTreeMap<String, PathBuf>,
}

impl Frontier {
    /// `n` URLs of the generator seeded `seed`; `None` (the test skips,
    /// and this says so on stderr) when `../shared` is absent. Panics when
    /// python3 or the generator fails.
    pub fn generate(n: usize, seed: u64) -> Option<Frontier> {
        let Some(root) = crate::shared_path("realworld").filter(|d| d.join("synth_frontier.py").is_file()) else {
            eprintln!("skipped: ../shared/realworld is absent");
            return None;
        };
        let made = Command::new("python3")
            .arg(root.join("synth_frontier.py"))
            .arg("--root")
            .arg(&root)
            .args(["--n", &n.to_string(), "--seed", &seed.to_string()])
            .output()
            .expect("python3 is needed to run synth_frontier.py when ../shared is present");
        assert!(made.status.success(), "synth_frontier.py: {}", String::from_utf8_lossy(&made.stderr));
        let text = String::from_utf8(made.stdout).expect("the generator writes UTF-8");
        let mut robots = BTreeMap::new();
        let mut urls = String::with_capacity(text.len());
        for line in text.lines().skip(1) {
            let (host, rest) = line.split_once('\t').expect("host<TAB>url<TAB>kind");
            let url = rest.rsplit_once('\t').expect("host<TAB>url<TAB>kind").0;
            let file = root.join("robots").join(format!("{host}.txt"));
            if file.is_file() {
                robots.entry(host.to_string()).or_insert(file);
            }
            urls.push_str(url);
            urls.push('\n');
        }
        Some(Frontier { urls, robots })
    }

    /// [`corpus_of`] its hosts' robots.txt files.
    pub fn corpus(&self) -> String {
        corpus_of(&self.robots)
    }
}

/// Fetch records (JSON Lines, `compile --corpus`) of each host's robots.txt
/// file (host -> file) over http and https; one host in 29 answers 503 and
/// one 404 instead, so that blocked and unrestricted origins are there too.
pub fn corpus_of(robots: &BTreeMap<String, PathBuf>) -> String {
    let mut records = String::new();
    for (i, (host, file)) in robots.iter().enumerate() {
        let body = std::fs::read(file).expect("the robots.txt file is readable");
        for scheme in ["http", "https"] {
            let url = format!("{scheme}://{host}/robots.txt");
            let record = match i % 29 {
                0 => serde_json::json!({"url": url, "status": 503, "body": ""}),
                1 => serde_json::json!({"url": url, "status": 404, "body": ""}),
                _ => {
                    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &body);
                    serde_json::json!({"url": url, "status": 200, "body_b64": b64})
                }
            };
            records.push_str(&format!("{record}\n"));
        }
    }
    records
}
