//! Reading the conformance cases of `../shared/conformance` (JSON Lines).
//!
//! The cases are the project's contract with Google's semantics; every
//! matcher (the per-rule oracle, the automaton, the artifact, the binary) is
//! tested against them. This reader lives in the test-support crate so that
//! all those tests read the files one way.

use crate::shared_dir;
use base64::Engine as _;
use robotsieve_core::url::PathMode;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A verdict case of `robots.jsonl` or `google-spec-test.jsonl`.
#[derive(Clone, Debug)]
pub struct VerdictCase {
    /// The case's name.
    pub id: String,
    /// The exact robots.txt bytes.
    pub body: Vec<u8>,
    /// The product tokens of one crawler.
    pub agents: Vec<String>,
    /// An escaped absolute URL.
    pub url: String,
    /// The verdict when the URL is matched byte for byte (`--raw-urls`).
    pub allowed: bool,
    /// The verdict with robotsieve's default URL escaping.
    pub allowed_escaped: bool,
}

/// A case of `origins.jsonl`: does the robots.txt at `robots_url` govern `url`?
#[derive(Clone, Debug, Deserialize)]
pub struct OriginCase {
    /// Where the robots.txt was fetched.
    pub robots_url: String,
    /// The URL in question.
    pub url: String,
    /// Whether the robots.txt governs the URL.
    pub applies: bool,
    /// Why.
    #[serde(default)]
    pub note: String,
}

/// A case of `status.jsonl`: the fetch status of the robots.txt and its effect.
#[derive(Clone, Debug, Deserialize)]
pub struct StatusCase {
    /// HTTP status of the robots.txt fetch; 0 for no HTTP answer.
    pub status: u16,
    /// The body that came with it.
    pub robots: String,
    /// The URL in question.
    pub url: String,
    /// The crawler's tokens.
    pub agents: Vec<String>,
    /// The expected verdict.
    pub allowed: bool,
    /// Why.
    #[serde(default)]
    pub note: String,
}

#[derive(Deserialize)]
struct RawVerdict {
    id: String,
    robots: Option<String>,
    robots_b64: Option<String>,
    robots_gen: Option<Generated>,
    agents: Vec<String>,
    url: String,
    allowed: bool,
    allowed_escaped: Option<bool>,
}

#[derive(Deserialize)]
struct Generated {
    head: String,
    repeat: String,
    times: usize,
    tail: String,
}

/// The path of a file under `shared/conformance`, if the folder is present.
pub fn conformance_file(name: &str) -> Option<PathBuf> {
    Some(shared_dir()?.join("conformance").join(name)).filter(|p| p.is_file())
}

/// Reads the verdict cases of one file.
pub fn read_verdict_cases(path: &Path) -> Result<Vec<VerdictCase>, String> {
    read_lines(path, |raw: RawVerdict| {
        let body = match (raw.robots, raw.robots_b64, raw.robots_gen) {
            (Some(text), None, None) => text.into_bytes(),
            (None, Some(b64), None) => base64::engine::general_purpose::STANDARD
                .decode(b64.as_bytes())
                .map_err(|e| format!("{}: robots_b64: {e}", raw.id))?,
            (None, None, Some(g)) => [g.head, g.repeat.repeat(g.times), g.tail].concat().into_bytes(),
            _ => return Err(format!("{}: exactly one of robots, robots_b64, robots_gen", raw.id)),
        };
        Ok(VerdictCase {
            id: raw.id,
            body,
            agents: raw.agents,
            url: raw.url,
            allowed: raw.allowed,
            allowed_escaped: raw.allowed_escaped.unwrap_or(raw.allowed),
        })
    })
}

/// Runs every verdict case of the conformance file `name` through a matcher,
/// in both URL modes, and panics listing every case that disagrees.
///
/// `matcher` is called once per case and returns the case's decision
/// function: given a path prepared for matching (`PathMode::path_of` the
/// case's URL), whether it is allowed. `what` names the matcher in messages.
/// Returns the number of cases, or `None` (after saying so) when the file is
/// absent, so tests skip cleanly without `../shared`.
pub fn check_verdict_file<D: Fn(&[u8]) -> bool>(
    name: &str,
    what: &str,
    mut matcher: impl FnMut(&VerdictCase) -> D,
) -> Option<usize> {
    let Some(path) = conformance_file(name) else {
        eprintln!("skipped: ../shared/conformance/{name} is absent");
        return None;
    };
    let cases = read_verdict_cases(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!cases.is_empty(), "{name} has no cases");
    let mut failures = Vec::new();
    for case in &cases {
        let allowed = matcher(case);
        for (mode, expected) in [(PathMode::Raw, case.allowed), (PathMode::Escaped, case.allowed_escaped)] {
            let got = allowed(&mode.path_of(case.url.as_bytes()));
            if got != expected {
                failures.push(format!("{} ({mode:?}): expected allowed={expected}, got {got}", case.id));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{name} through {what}: {} failures (case and URL mode) over {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{name}: {} cases passed through {what} in both URL modes", cases.len());
    Some(cases.len())
}

/// Reads `origins.jsonl`.
pub fn read_origin_cases(path: &Path) -> Result<Vec<OriginCase>, String> {
    read_lines(path, Ok)
}

/// Reads `status.jsonl`.
pub fn read_status_cases(path: &Path) -> Result<Vec<StatusCase>, String> {
    read_lines(path, Ok)
}

fn read_lines<R: for<'de> Deserialize<'de>, T>(
    path: &Path,
    convert: impl Fn(R) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let raw: R = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            convert(raw).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}
