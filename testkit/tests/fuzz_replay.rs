//! Replays what the fuzzers found and started from, as ordinary tests with
//! no fuzzing time: every file of `fuzz/regressions/<target>/` (the crashes,
//! kept after their fix) and `fuzz/corpus/<target>/` (the minimised corpora),
//! and the seeds made from `shared/`, each through the same check function
//! its fuzz target calls (`robotsieve_testkit::fuzz_checks`).

use robotsieve_testkit::{fuzz_checks, seeds, shared_dir};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A target's name and its check.
type Target = (&'static str, fn(&[u8]));

/// Every fuzz target of `fuzz/fuzz_targets/`.
const TARGETS: [Target; 6] = [
    ("robots", fuzz_checks::robots),
    ("artifact", fuzz_checks::artifact),
    ("artifact_file", fuzz_checks::artifact_file),
    ("warc", fuzz_checks::warc),
    ("page", fuzz_checks::page),
    ("url", fuzz_checks::url),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Runs `check` on every input, and panics naming each input that failed
/// (all of them, not just the first) with its message.
fn replay(what: &str, check: fn(&[u8]), inputs: impl IntoIterator<Item = (String, Vec<u8>)>) -> usize {
    let mut failed = Vec::new();
    let mut count = 0;
    for (name, bytes) in inputs {
        count += 1;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&bytes))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{name}: {}", &message[..message.len().min(600)]));
        }
    }
    assert!(failed.is_empty(), "{what}: {} of {count} inputs fail:\n{}", failed.len(), failed.join("\n"));
    count
}

/// The files of a folder, sorted, as named inputs (none if it is absent).
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    paths.sort();
    paths.into_iter().map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())).collect()
}

#[test]
fn regressions_and_corpora_pass_their_checks() {
    for (target, check) in TARGETS {
        let corpus = files_of(&fuzz_dir().join("corpus").join(target));
        assert!(!corpus.is_empty(), "fuzz/corpus/{target} is empty or missing: the minimised corpus is committed");
        let regressions = files_of(&fuzz_dir().join("regressions").join(target));
        let n = replay(target, check, corpus.into_iter().chain(regressions));
        eprintln!("{target}: {n} committed inputs replayed");
    }
}

#[test]
fn generated_seeds_pass_their_checks() {
    replay("artifact seeds", fuzz_checks::artifact, seeds::artifact());
    replay("artifact_file seeds", fuzz_checks::artifact_file, seeds::artifact_file());
    replay("warc seeds", fuzz_checks::warc, seeds::warc(shared_dir().as_deref()));
    replay("page seeds", fuzz_checks::page, seeds::page());
}

/// Every [`REALWORLD_EVERY`]-th real robots.txt file (each with the flags
/// its number gives, so the sample covers every combination of explain,
/// budget, agent, artifact and lint) and every conformance case.
const REALWORLD_EVERY: usize = 4;

#[test]
fn shared_robots_files_pass_the_robots_check() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipped: the shared/ folder is absent");
        return;
    };
    let n = replay("robots seeds", fuzz_checks::robots, seeds::robots(&shared, REALWORLD_EVERY));
    eprintln!("robots: {n} seeds from shared/ replayed (1 in {REALWORLD_EVERY} real files, every conformance case)");
    assert!(n > 1000, "only {n} robots seeds: is shared/realworld/robots complete?");
}

/// Every URL of `shared/realworld/urls` (both lists) and of the conformance
/// origin cases through the `url` check.
#[test]
fn shared_urls_pass_the_url_check() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipped: the shared/ folder is absent");
        return;
    };
    let n = replay("url seeds", fuzz_checks::url, seeds::url(&shared, 1));
    eprintln!("url: {n} URLs from shared/ replayed");
    assert!(n > 100_000, "only {n} URLs: is shared/realworld/urls complete?");
}
