//! Which robots.txt answers for a URL, and which path it matches, as users
//! ask the binary: the origin-confusion example
//! (`http://evil.com\@good.com/`), and `check --robots` against `check
//! --rules` on generated URLs in both URL modes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn robotsieve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_robotsieve"))
}

/// Runs `robotsieve ARGS` with `urls` on standard input (one a line); the
/// verdict of each line.
fn verdicts(args: &[&str], urls: &[String]) -> Vec<String> {
    let mut child = robotsieve().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut input = urls.join("\n");
    input.push('\n');
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "robotsieve {args:?} failed");
    let verdicts: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split('\t').next().unwrap().to_owned()).collect();
    assert_eq!(verdicts.len(), urls.len(), "one verdict per URL");
    verdicts
}

fn compile(dir: &Path, pairs: &[(&Path, &str)], out: &Path) {
    let mut cmd = robotsieve();
    cmd.args(["compile", "--agent", "mybot"]);
    for (file, origin) in pairs {
        cmd.arg("--robots").arg(file).args(["--origin", origin]);
    }
    let status = cmd.arg("-o").arg(out).current_dir(dir).output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
}

#[test]
fn a_backslash_ends_the_authority() {
    let dir = tempfile::tempdir().unwrap();
    let (good, evil, rules) = (dir.path().join("good.txt"), dir.path().join("evil.txt"), dir.path().join("r.rsv"));
    std::fs::write(&good, "User-agent: *\nAllow: /\n").unwrap();
    std::fs::write(&evil, "User-agent: *\nDisallow: /\n").unwrap();
    compile(dir.path(), &[(&good, "http://good.com"), (&evil, "http://evil.com")], &rules);
    let rules = rules.to_str().unwrap();
    let urls = [r"http://evil.com\@good.com/", "http://evil.com/", "http://good.com/", r"http:\\evil.com\@good.com"];
    let urls: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
    for raw in [false, true] {
        let mut args = vec!["check", "--rules", rules, "--agent", "mybot"];
        if raw {
            args.push("--raw-urls");
        }
        assert_eq!(verdicts(&args, &urls), ["disallowed", "disallowed", "allowed", "disallowed"], "raw={raw}");
    }
}

#[test]
fn user_info_with_a_semicolon_gives_one_answer_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let (robots, rules) = (dir.path().join("u.txt"), dir.path().join("u.rsv"));
    std::fs::write(&robots, "User-agent: *\nDisallow: /ab/\n").unwrap();
    compile(dir.path(), &[(&robots, "https://example.com")], &rules);
    let url = vec!["https://u;x@example.com/ab/".to_owned()];
    for (raw, want) in [(true, "allowed"), (false, "disallowed")] {
        // Raw: Google's library reads the path as /;x@example.com/ab/; default: the fetcher requests /ab/.
        for source in [["--robots", robots.to_str().unwrap()], ["--rules", rules.to_str().unwrap()]] {
            let mut args = vec!["check", "--agent", "mybot", source[0], source[1]];
            if raw {
                args.push("--raw-urls");
            }
            assert_eq!(verdicts(&args, &url), [want], "{source:?} raw={raw}");
        }
    }
}

/// URLs built from every combination of parts that the two readings, or the
/// fetcher and Google's library, take differently.
fn generated_urls() -> Vec<String> {
    let schemes = ["http://", "HTTPS://", r"http:\\", "http:/\\", "http:///"];
    let users = ["", "u@", "u;x@", "a@b@", "u:p;q@", r"u\x@", "u%40@"];
    let hosts = [
        "example.com",
        "EXAMPLE.com",
        "ex%61mple.com",
        "example.com.",
        "0x7f.1",
        "127.1",
        "2130706433",
        "münchen.de",
        "xn--mnchen-3ya.de",
        "[0:0::1]",
        "example.com:443",
        "ex\tample.com",
    ];
    let paths = [
        "",
        "/ab/",
        "/ab/../private",
        "/x/./ab/",
        r"\ab\c",
        "/%61b/",
        "/x/%2e%2E/ab/",
        "/a b/",
        "/private?x",
        ";x/ab/",
        "/é",
        "?q",
        "/x#/ab/",
        "/x/y%2Fz",
        "/a%2fb",
    ];
    let mut urls = Vec::new();
    for (s, scheme) in schemes.iter().enumerate() {
        for (u, user) in users.iter().enumerate() {
            for (h, host) in hosts.iter().enumerate() {
                for (p, path) in paths.iter().enumerate() {
                    // Every host with every path; the other parts spread over them.
                    if (s + u + p) % 3 == h % 3 || s == 0 && u == 0 {
                        urls.push(format!("{scheme}{user}{host}{path}"));
                    }
                }
            }
        }
    }
    urls
}

#[test]
fn check_robots_and_check_rules_agree_on_generated_urls() {
    let dir = tempfile::tempdir().unwrap();
    let (robots, rules) = (dir.path().join("robots.txt"), dir.path().join("r.rsv"));
    std::fs::write(
        &robots,
        "User-agent: *\nDisallow: /ab/\nDisallow: /private\nDisallow: /;x\nAllow: /x\nDisallow: /x/y\n\
         Disallow: /%C3%A9\nDisallow: /*%2F\nDisallow: /a%20b\nDisallow: /?q\n",
    )
    .unwrap();
    let origins =
        ["https://example.com", "http://example.com", "http://127.0.0.1", "http://münchen.de", "http://[::1]"];
    let pairs: Vec<(&Path, &str)> = origins.iter().map(|o| (robots.as_path(), *o)).collect();
    compile(dir.path(), &pairs, &rules);
    let urls = generated_urls();
    let mut compared = 0;
    let mut by_mode = Vec::new();
    for raw in [false, true] {
        let mut with_robots = vec!["check", "--agent", "mybot", "--robots", robots.to_str().unwrap()];
        let mut with_rules = vec!["check", "--agent", "mybot", "--rules", rules.to_str().unwrap()];
        if raw {
            with_robots.push("--raw-urls");
            with_rules.push("--raw-urls");
        }
        let from_robots = verdicts(&with_robots, &urls);
        let from_rules = verdicts(&with_rules, &urls);
        for ((url, a), b) in urls.iter().zip(&from_robots).zip(&from_rules) {
            if matches!(b.as_str(), "allowed" | "disallowed") {
                assert_eq!(a, b, "{url:?} (raw={raw}): check --robots and check --rules disagree");
                compared += 1;
            }
        }
        for verdict in ["allowed", "disallowed", "invalid"] {
            assert!(from_rules.iter().any(|v| v == verdict), "no URL is {verdict} (raw={raw})");
        }
        by_mode.push(from_rules);
    }
    let modes_differ = by_mode[0].iter().zip(&by_mode[1]).filter(|(a, b)| a != b).count();
    assert!(compared > urls.len(), "only {compared} of 2 x {} verdicts compared", urls.len());
    assert!(modes_differ > 0, "the raw and default modes never differ: the test does not exercise them");
    eprintln!("{} URLs, {compared} verdicts compared, {modes_differ} differ between the modes", urls.len());
}
