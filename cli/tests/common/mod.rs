//! What the binary's tests share: running the `robotsieve` binary, checking
//! how a run ended, and the small artifact several of them start from.

// Each test file is its own crate and uses some of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `robotsieve` binary of this build.
pub fn robotsieve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_robotsieve"))
}

/// Runs a command that must succeed (its stderr shown when it does not).
pub fn succeeds(command: &mut Command) -> Output {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Asserts that a run failed as a user's mistake fails: exit status 2, and
/// a message that says `says`.
pub fn assert_exit_2(out: &Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(says), "{says:?} is not in: {stderr}");
}

/// Writes `robots` to `dir/robots.txt` and compiles it as the robots.txt
/// of https://example.com for mybot, with `--explain`, into `dir/x.rsv`.
pub fn compile_example(dir: &Path, robots: &str) {
    std::fs::write(dir.join("robots.txt"), robots).unwrap();
    succeeds(
        robotsieve()
            .current_dir(dir)
            .args(["compile", "--robots", "robots.txt", "--origin", "https://example.com", "--agent", "mybot"])
            .args(["--explain", "-o", "x.rsv"]),
    );
}
