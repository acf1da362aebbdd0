//! The command line as users expect it: `--help` names every command and
//! ends with a worked example, `--version` names the artifact versions, and
//! `generate` makes a man page that `man` renders and completions that the
//! shells load.

use std::process::{Command, Output};

fn robotsieve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_robotsieve")).args(args).output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

const COMMANDS: &[&str] =
    &["check", "compile", "inspect", "filter", "meta", "lint", "fetch", "shard-of", "survey", "generate"];

#[test]
fn help_names_every_command_and_ends_with_an_example() {
    let help = stdout(&robotsieve(&["--help"]));
    for command in COMMANDS {
        assert!(help.lines().any(|l| l.trim_start().starts_with(&format!("{command} "))), "{command} not in:\n{help}");
    }
    let example = help.trim_end().rsplit_once("\n\nExample:").expect("ends with an example").1;
    assert!(example.lines().skip(1).all(|l| l.starts_with("  ")), "the example is the last paragraph:\n{help}");
    assert!(example.contains("robotsieve compile") && example.contains("robotsieve filter"), "{help}");
}

#[test]
fn version_names_the_artifact_format_and_semantics() {
    use robotsieve_engine::{FORMAT_VERSION, SEMANTICS_VERSION};
    let version = stdout(&robotsieve(&["--version"]));
    assert!(version.starts_with(&format!("robotsieve {}", env!("CARGO_PKG_VERSION"))), "{version}");
    assert!(version.contains(&format!("artifact format version {FORMAT_VERSION}")), "{version}");
    assert!(version.contains(&format!("semantics version {SEMANTICS_VERSION}")), "{version}");
}

/// Whether a tool is on PATH; absent, a test skips with a message, and
/// fails under `CI=true` (CI installs it).
fn have(tool: &str) -> bool {
    let found = Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().unwrap().status.success();
    if !found {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{tool} is not installed");
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

/// What `robotsieve generate ARGS` prints, in a file `name` of a fresh
/// folder (kept while the folder lives).
fn generated(args: &[&str], name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut all = vec!["generate"];
    all.extend_from_slice(args);
    std::fs::write(&path, stdout(&robotsieve(&all))).unwrap();
    (dir, path)
}

#[test]
fn the_man_page_renders_with_man() {
    if !have("man") {
        return;
    }
    let (_dir, page) = generated(&["man"], "robotsieve.1");
    let rendered =
        Command::new("man").arg("-l").arg(&page).env("MANPAGER", "cat").env("MANWIDTH", "100").output().unwrap();
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(rendered.status.success(), "man -l failed: {}", String::from_utf8_lossy(&rendered.stderr));
    assert!(text.contains("NAME") && text.contains("robotsieve"), "{text}");
    for command in COMMANDS {
        assert!(text.contains(&format!("robotsieve-{command}")), "{command} not in the man page:\n{text}");
    }
}

#[test]
fn bash_completions_load_and_complete_commands_and_flags() {
    if !have("bash") {
        return;
    }
    let (_dir, script) = generated(&["complete", "bash"], "robotsieve.bash");
    let complete = |words: &str| {
        let program = format!(
            "source '{}' && COMP_WORDS=({words}) && COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)) && \
             _robotsieve robotsieve \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\" && \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let output = Command::new("bash").arg("-c").arg(program).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(complete("robotsieve fil").trim(), "filter");
    assert!(complete("robotsieve filter --unk").lines().any(|l| l == "--unknown-as"));
}

#[test]
fn completions_for_every_shell() {
    for (shell, marker) in [
        ("zsh", "#compdef robotsieve"),
        ("fish", "complete -c robotsieve"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = stdout(&robotsieve(&["generate", "complete", shell]));
        assert!(script.contains(marker), "{shell}: {script}");
    }
    let refused = robotsieve(&["generate", "complete", "tcsh"]);
    assert_eq!(refused.status.code(), Some(2));
}
