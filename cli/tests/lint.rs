//! `robotsieve lint` end to end: the diagnostic format, JSON, exit statuses,
//! the `--agent` view, `--list-codes` and `--summary`.

use std::path::Path;
use std::process::{Command, Output};

fn robotsieve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_robotsieve")).args(args).output().expect("the binary runs")
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

const ISSUE_EXAMPLE: &str = "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n\nUser-agent: *\n\
                             Disallow: GoogleBot\nDisallow: /a\nDisallow: /a/b\n";

#[test]
fn diagnostics_in_compiler_style_and_exit_1_on_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "robots.txt", ISSUE_EXAMPLE);
    let out = robotsieve(&["lint", &file]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    let expected = [
        format!("{file}:3: warning[group-joined]: this user-agent line joins the group of line 1, because no allow or disallow line came between them; line 2 (crawl-delay) does not end a group"),
        format!("{file}:7: error[path-not-slash]: \"disallow: GoogleBot\" does not start with / or *: it matches nothing"),
        format!("{file}:9: warning[never-decides]: \"disallow: /a/b\" never decides a verdict: \"disallow: /a\" (line 8) already covers every path it matches"),
    ];
    for line in &expected {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    // Every finding line is followed by its fix.
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("]: ") && l.starts_with(&file) {
            assert!(lines[i + 1].starts_with("    fix: "), "{l}");
        }
    }
    assert!(text.ends_with(&format!("{file}: 1 error(s), 2 warning(s), 1 note(s)\n")), "{text}");
}

#[test]
fn exit_0_without_errors_and_2_when_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let clean = write(dir.path(), "clean.txt", "User-agent: *\nDisallow: /private/\nSitemap: https://x.test/s.xml\n");
    let out = robotsieve(&["lint", &clean]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), format!("{clean}: 0 error(s), 0 warning(s), 0 note(s)\n"));
    // Warnings alone do not fail.
    let warned = write(dir.path(), "warned.txt", "User-agent: MJ12bot\nDisallow: /\n");
    assert_eq!(robotsieve(&["lint", &warned]).status.code(), Some(0));
    let missing = dir.path().join("missing.txt");
    let out = robotsieve(&["lint", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.txt"), "{err}");
}

#[test]
fn json_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "robots.txt", ISSUE_EXAMPLE);
    let html = write(dir.path(), "page.txt", "<!DOCTYPE html><html><body>404</body></html>\n");
    let out = robotsieve(&["lint", "--json", &file, &html]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let docs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["file"], file.as_str());
    assert_eq!(docs[0]["errors"], 1);
    let findings = docs[0]["findings"].as_array().unwrap();
    let joined = findings.iter().find(|f| f["code"] == "group-joined").unwrap();
    assert_eq!(joined["line"], 3);
    assert_eq!(joined["severity"], "warning");
    assert!(joined["fix"].as_str().unwrap().contains("Disallow:"));
    // A whole-file finding has no line.
    let page = &docs[1]["findings"][0];
    assert_eq!(page["code"], "html-page");
    assert!(page["line"].is_null());
}

#[test]
fn agent_view() {
    let dir = tempfile::tempdir().unwrap();
    let body = "User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /a\nDisallow: /a/b\nAllow: /a/c\n";
    let file = write(dir.path(), "robots.txt", body);
    let out = robotsieve(&["lint", "--agent", "googlebot", &file]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("{file}: googlebot: the group(s) naming it apply (user-agent line(s) 4)")),
        "{text}"
    );
    assert!(text.contains(&format!("    {file}:5: disallow: /a\n")), "{text}");
    assert!(text.contains(&format!("    {file}:6: disallow: /a/b    (same verdict without it)\n")), "{text}");
    assert!(text.contains(&format!("    {file}:7: allow: /a/c\n")), "{text}");
    // A crawler no group names gets the `*` group.
    let out = robotsieve(&["lint", "--agent", "bingbot", "--json", &file]);
    let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(doc["agent"]["source"], "global");
    assert_eq!(doc["agent"]["agent_lines"], serde_json::json!([1]));
    assert_eq!(doc["agent"]["rules"][0]["pattern"], "/");
    assert_eq!(doc["agent"]["rules"][0]["redundant"], false);
    // A bad token is a usage error.
    let out = robotsieve(&["lint", "--agent", "Googlebot/2.1", &file]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn list_codes() {
    let out = robotsieve(&["lint", "--list-codes"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for code in ["group-joined", "path-not-slash", "never-decides", "agent-unrestricted", "body-too-large"] {
        assert!(text.lines().any(|l| l.starts_with(code)), "{code}");
    }
    let out = robotsieve(&["lint", "--list-codes", "--json"]);
    let codes: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(codes.as_array().unwrap().len(), text.lines().count());
}

#[test]
fn summary_counts_files_and_occurrences() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "User-agent: *\nDisallow: css\nDisallow: js\n");
    write(dir.path(), "b.txt", "User-agent: *\nDisallow: img\nCrawl-delay: 3\n");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(&dir.path().join("sub"), "c.txt", "User-agent: *\nDisallow: /ok\n");
    let out = robotsieve(&["lint", "--summary", dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(doc["files"], 3);
    assert_eq!(doc["with_errors"], 2);
    let codes = doc["codes"].as_array().unwrap();
    assert_eq!(codes[0]["code"], "path-not-slash");
    assert_eq!(codes[0]["files"], 2);
    assert_eq!(codes[0]["occurrences"], 3);
    let delay = codes.iter().find(|c| c["code"] == "crawl-delay").unwrap();
    assert_eq!((delay["files"].as_u64(), delay["occurrences"].as_u64()), (Some(1), Some(1)));
    // The human table.
    let out = robotsieve(&["lint", "--summary", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert!(text.starts_with("3 files linted in "), "{text}");
    assert!(text.lines().any(|l| l.starts_with("path-not-slash") && l.contains("66.67%")), "{text}");
    // An empty directory is an error.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(robotsieve(&["lint", "--summary", empty.path().to_str().unwrap()]).status.code(), Some(2));
}
