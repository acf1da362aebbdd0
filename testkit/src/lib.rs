//! What robotsieve's tests and fuzz targets share.
//!
//! - [`shared_dir`]: the `shared/` folder of conformance cases and real-world
//!   files, found one way for every test. Tests that need it skip with a
//!   message when it is absent, except under CI (`CI=true`), where a missing
//!   folder fails the run: a green CI must never mean "skipped".
//! - The differential checks that fuzz targets run on fuzzed input and that
//!   the replay tests run on the fuzzers' corpora and the seeds from
//!   `shared/`, so that one definition of "correct" serves both:
//!   [`differential`] (the compiled matcher against the per-rule oracle) and
//!   [`fuzz_checks`] (one check per fuzz target of `fuzz/`), with their
//!   [`seeds`] made from `shared/`.
//! - [`names_in`]: the files a test's directory holds, sorted.
//! - [`assert_none_disagree`]: how a comparison of two readings fails,
//!   listing its first disagreements.
//! - [`url_oracle`]: robotsieve's URL parser against the `url` crate, and its
//!   fast path against its complete parser.
//! - [`conformance`]: the conformance cases of `shared/conformance`, read one
//!   way for every test (the per-rule oracle, the automaton, the artifact,
//!   the binary).
//! - [`regex_oracle`]: a third reading of patterns and precedence, by
//!   regex-automata's DFA, against the per-rule oracle and the automaton
//!   (a misreading the two share would pass every test between them).

use std::path::{Path, PathBuf};

pub mod conformance;
pub mod differential;
pub mod frontier;
pub mod fuzz_checks;
pub mod regex_oracle;
pub mod seeds;
pub mod url_oracle;

/// The `shared/` folder beside the repository: `$ROBOTSIEVE_SHARED` if set,
/// else `../shared` from the workspace root, else `None`.
///
/// # Panics
///
/// When the folder is absent and `CI` is `true`: CI always has it, so its
/// absence there is a broken set-up, not a reason to skip.
pub fn shared_dir() -> Option<PathBuf> {
    let found = match std::env::var_os("ROBOTSIEVE_SHARED") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")),
    }
    .filter(|d| d.is_dir());
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but the shared/ folder is missing: set ROBOTSIEVE_SHARED or put it beside the repository");
    }
    found
}

/// A path under [`shared_dir`], if both exist; the tests' usual way in.
pub fn shared_path(relative: &str) -> Option<PathBuf> {
    Some(shared_dir()?.join(relative)).filter(|p| p.exists())
}

/// Panics when any of `total` cases disagree between two readings:
/// `failures` describes each disagreement, `what` names the cases (and
/// under what they were compared), and the first `shown` are listed.
pub fn assert_none_disagree(failures: &[String], total: usize, shown: usize, what: std::fmt::Arguments<'_>) {
    assert!(
        failures.is_empty(),
        "{} of {total} {what} disagree:\n{}",
        failures.len(),
        failures[..failures.len().min(shown)].join("\n")
    );
}

/// The robots.txt files of `shared/realworld/robots` (`*.txt`), sorted by
/// name so that sampling by index is repeatable; `None` when the folder is
/// absent (see [`shared_dir`] for CI).
pub fn realworld_robots_files() -> Option<Vec<PathBuf>> {
    let dir = shared_path("realworld/robots")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    Some(files)
}

/// The names of the entries of `dir`, sorted: what a test compares to say
/// which files a run left behind (no temporary file, no partial output).
///
/// # Panics
///
/// When `dir` cannot be read: a test's own directory always can.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// `len` deterministic bytes that differ from position to position and from
/// seed to seed, so that a chunk of them written twice or at the wrong place
/// shows.
pub fn varied_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}
