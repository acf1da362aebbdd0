//! The documentation cannot drift from the code: every `console` block of
//! every page runs against the binary and its output is compared (times,
//! thread counts and the working folder redacted); an unmarked command
//! block fails; every relative link and anchor resolves; every flag of
//! every command appears in the guide; and the process-word check finds
//! what it looks for.
//!
//! A `console` block is lines of `$ COMMAND` each followed by its expected
//! output (standard output and error together). In the expected text
//! `[TIME]` stands for a duration, `[N]` for a thread count, `[TMP]` for the
//! folder the page's examples run in, `[..]` for any text within a line and
//! a line `...` for any lines; a last line `[exit: N]` expects that status
//! (0 otherwise). The blocks of one page run in order in one fresh folder
//! holding a link to the repository's `corpus/`. Blocks marked `sh,ignore`
//! are not run (installs, network, minutes of work).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Pages linked from the docs that are written alongside them and may not
/// be in this tree yet; once a page exists its anchors are checked too.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Every page of documentation: the Markdown files at the root and in
/// docs/, and each top-level folder's README.md.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = Vec::new();
    for dir in [root.clone(), root.join("docs")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(&root).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        if readme.is_file() && !readme.starts_with(root.join("target")) {
            pages.push(readme);
        }
    }
    pages.sort();
    pages
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap().display().to_string()
}

/// A fenced code block: its info string, its lines, and the line of the page it starts on.
struct Block {
    info: String,
    lines: Vec<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            None if trimmed.starts_with("```") => {
                let info = trimmed.trim_start_matches('`').trim().to_string();
                open = Some(Block { info, lines: Vec::new(), line: number + 1 });
            }
            None => {}
            Some(block) if trimmed.starts_with("```") => blocks.push(block),
            Some(mut block) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
        }
    }
    blocks
}

/// Whether a block's info string says it holds commands to run or skip;
/// `None` for a block of another kind (text, code, data).
fn command_block(info: &str) -> Option<bool> {
    match info {
        "console" => Some(true),
        "sh,ignore" => Some(false),
        _ => None,
    }
}

/// Replaces what changes from run to run: durations (`27.16ms`, `0.5s`),
/// thread counts and the folder the examples run in.
fn redact(text: &str, folder: &str) -> String {
    let text = text.replace(folder, "[TMP]");
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if starts_number {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            let rest = &text[j..];
            let unit = ["ns", "µs", "us", "ms", "s"].into_iter().find(|unit| {
                rest.starts_with(unit) && !rest[unit.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
            });
            if let Some(unit) = unit {
                out.push_str("[TIME]");
                i = j + unit.len();
                continue;
            }
            if let Some(after) = rest.strip_prefix(" thread") {
                if out.ends_with("on ") && (after.starts_with("s") || after.starts_with(|c: char| !c.is_alphanumeric()))
                {
                    out.push_str("[N]");
                    i = j;
                    continue;
                }
            }
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        let c = text[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Whether one line matches its expected form, `[..]` matching any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let pieces: Vec<&str> = expected.split("[..]").collect();
    if pieces.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the output's lines match the expected ones, a line `...`
/// matching any number of lines.
fn lines_match(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..])),
        Some((line, rest)) => {
            actual.split_first().is_some_and(|(first, others)| line_matches(line, first) && lines_match(rest, others))
        }
    }
}

/// One command of a `console` block, with what it should print.
struct Example {
    command: String,
    expected: Vec<String>,
    status: i32,
    line: usize,
}

fn examples(block: &Block) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    for (offset, line) in block.lines.iter().enumerate() {
        if let Some(command) = line.strip_prefix("$ ") {
            let line = block.line + 1 + offset;
            examples.push(Example { command: command.to_string(), expected: Vec::new(), status: 0, line });
        } else if let Some(example) = examples.last_mut() {
            match line.strip_prefix("[exit: ").and_then(|s| s.strip_suffix(']')) {
                Some(status) => example.status = status.parse().expect("[exit: N] holds a number"),
                None => example.expected.push(line.clone()),
            }
        } else {
            panic!("line {}: a console block starts with `$ COMMAND`", block.line + 1 + offset);
        }
    }
    examples
}

#[test]
fn console_examples_print_what_the_docs_say() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_robotsieve")).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let folder = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root().join("corpus"), folder.path().join("corpus")).unwrap();
        let folder_name = folder.path().to_str().unwrap().to_string();
        for block in blocks(&text) {
            if command_block(&block.info) != Some(true) {
                continue;
            }
            for example in examples(&block) {
                let output = Command::new("sh")
                    .arg("-c")
                    .arg(format!("{{ {}\n}} 2>&1", example.command))
                    .current_dir(folder.path())
                    .env("PATH", &path)
                    .env_remove("RAYON_NUM_THREADS")
                    .output()
                    .unwrap();
                ran += 1;
                let actual = redact(&String::from_utf8_lossy(&output.stdout), &folder_name);
                let actual: Vec<&str> = actual.lines().collect();
                let expected: Vec<&str> = example.expected.iter().map(String::as_str).collect();
                let status = output.status.code().unwrap_or(-1);
                if status != example.status || !lines_match(&expected, &actual) {
                    failures.push(format!(
                        "{}:{}: $ {}\n  expected (status {}):\n    {}\n  got (status {status}):\n    {}",
                        relative(&page),
                        example.line,
                        example.command,
                        example.status,
                        expected.join("\n    "),
                        actual.join("\n    ")
                    ));
                }
            }
        }
    }
    assert!(ran >= 20, "only {ran} console examples found: are the pages where this test looks?");
    assert!(failures.is_empty(), "{} console examples differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn command_blocks_are_marked_console_or_sh_ignore() {
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in blocks(&text) {
            let looks_like_commands = matches!(block.info.as_str(), "" | "sh" | "bash" | "shell" | "zsh" | "fish");
            if looks_like_commands && command_block(&block.info).is_none() {
                failures.push(format!(
                    "{}:{}: a code block marked {:?}: mark commands `console` (run and compared) or `sh,ignore` (skipped), anything else with its language (`text`, `json`, `python`)",
                    relative(&page),
                    block.line,
                    block.info
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_example_matcher_redacts_and_compares() {
    let redacted = redact("in 27.16ms on 2 threads: read 730.08µs, 5 states, 3s, /tmp/x/rules.rsv", "/tmp/x");
    assert_eq!(redacted, "in [TIME] on [N] threads: read [TIME], 5 states, [TIME], [TMP]/rules.rsv");
    assert!(line_matches("a [..] c", "a b c"));
    assert!(!line_matches("a [..] c", "a b d"));
    assert!(lines_match(&["x", "...", "z"], &["x", "y", "y", "z"]));
    assert!(!lines_match(&["x", "z"], &["x", "y", "z"]));
    assert!(!lines_match(&["x"], &[]));
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let repeats = anchors.iter().filter(|a| **a == base || a.starts_with(&format!("{base}-"))).count();
        anchors.push(if repeats == 0 { base } else { format!("{base}-{repeats}") });
    }
    anchors
}

/// The relative link targets of a page (outside code blocks and code spans).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut in_code = false;
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let outside_spans: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = outside_spans.as_str();
        while let Some(at) = rest.find("](") {
            let target = &rest[at + 2..];
            let end = target.find(')').unwrap_or(target.len());
            let target = &target[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                links.push((number + 1, target.to_string()));
            }
            rest = &rest[at + 2 + end..];
        }
    }
    links
}

#[test]
fn relative_links_and_anchors_resolve() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, target) in links(&text) {
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            let where_ = format!("{}:{line}: ({target})", relative(&page));
            if !linked.exists() {
                failures.push(format!("{where_}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&linked_text).iter().any(|a| a == anchor) {
                    failures.push(format!("{where_}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} relative links found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        slug(" check: URLs against one robots.txt or an artifact"),
        "check-urls-against-one-robotstxt-or-an-artifact"
    );
    assert_eq!(slug("filter --matrix and survey"), "filter---matrix-and-survey");
    assert_eq!(anchors("# A\n## A\n```\n# not\n```\n"), ["a", "a-1"]);
    assert_eq!(links("[x](a.md#b) `[y](c.md)` [z](https://e.com)"), [(1, "a.md#b".to_string())]);
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_robotsieve")).args(args).output().unwrap();
    assert!(output.status.success(), "robotsieve {args:?} failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The commands `robotsieve --help` lists (clap's own `help` aside).
fn commands() -> Vec<String> {
    let text = help(&["--help"]);
    let listed = text.split("Commands:\n").nth(1).expect("--help lists commands");
    listed
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line[2..].starts_with(' '))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags of a command's options, as its `--help` lists them.
fn flags(command: &[&str]) -> Vec<String> {
    let mut args = command.to_vec();
    args.push("--help");
    help(&args)
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix("-")
                .filter(|l| l.len() > 3 && l.as_bytes()[1] == b',')
                .map_or(line, |l| l[2..].trim_start());
            let flag = line.strip_prefix("--")?;
            let name: String = flag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            Some(format!("--{name}"))
        })
        .filter(|flag| flag != "--help")
        .collect()
}

#[test]
fn every_flag_of_every_command_is_in_the_guide() {
    let guide = std::fs::read_to_string(root().join("GUIDE.md")).unwrap();
    // The pages under docs/ that the guide hands whole commands to.
    let mut text = guide.clone();
    for (_, target) in links(&guide) {
        let file = target.split('#').next().unwrap();
        if file.starts_with("docs/") {
            text.push_str(&std::fs::read_to_string(root().join(file)).unwrap_or_default());
        }
    }
    let mut missing = Vec::new();
    let commands = commands();
    assert!(commands.len() >= 9, "--help lists {commands:?}");
    for command in &commands {
        if !text.contains(&format!("robotsieve {command}")) && !text.contains(&format!("`{command}`")) {
            missing.push(format!("the command {command}"));
        }
        for flag in flags(&[command]) {
            let written = [" ", "`", "(", "/"].iter().any(|before| {
                text.match_indices(&format!("{before}{flag}"))
                    .any(|(at, m)| !text[at + m.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-'))
            });
            if !written {
                missing.push(format!("{command} {flag}"));
            }
        }
    }
    for what in ["generate man", "generate complete"] {
        if !text.contains(what) {
            missing.push(what.to_string());
        }
    }
    assert!(missing.is_empty(), "GUIDE.md does not mention: {}", missing.join(", "));
}

#[test]
fn the_process_word_check_finds_each_kind_and_excuses_the_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.md");
    std::fs::write(
        &bad,
        "as measured at 3a06601\nin session 12\nfor issue 15\nsix engineers\non this branch\nmain's figure\non 2026-12-01 it took 5 s\n",
    )
    .unwrap();
    let good = dir.path().join("good.rs");
    std::fs::write(&good, "// an HTTP request with ?session=7, a branch predictor, 0x9e3779b97f4a7c15\n").unwrap();
    let run = |file: &Path| {
        Command::new("bash").arg(root().join(".ci/process-words")).arg(file).current_dir(root()).output().unwrap()
    };
    let found = run(&bad);
    let text = String::from_utf8(found.stdout).unwrap();
    assert_eq!(found.status.code(), Some(1), "{text}");
    for kind in ["commit", "session", "issue", "engineer", "branch", "main's", "dated"] {
        assert!(text.contains(&format!(": {kind}: ")), "{kind} not found in:\n{text}");
    }
    let clean = run(&good);
    assert_eq!(clean.status.code(), Some(0), "{}", String::from_utf8_lossy(&clean.stdout));
}
