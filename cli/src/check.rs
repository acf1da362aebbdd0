//! `robotsieve check`: the verdict for each URL, and the rule that decided it.

use crate::failure::{fail, Context, Failure};
use crate::input::read_all;
use robotsieve_compiler::{Agent, Group, RobotsTxt};
use robotsieve_engine::url::PathMode;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `robotsieve check`.
#[derive(clap::Args)]
pub struct Args {
    /// The robots.txt file to check against (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    robots: PathBuf,
    /// The crawler: its product tokens, comma-separated (`googlebot-news,googlebot`).
    #[arg(long, value_name = "TOKEN[,TOKEN...]")]
    agent: String,
    /// Match URL paths byte for byte, as Google's library does, instead of
    /// escaping them first like patterns.
    #[arg(long)]
    raw_urls: bool,
    /// One JSON object per URL instead of tab-separated lines.
    #[arg(long)]
    json: bool,
    /// URLs to check; one per line on standard input when none are given.
    /// Absolute URLs, `host/path`, bare paths and the empty string are accepted.
    urls: Vec<String>,
}

/// Runs `check`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let agent = Agent::parse(&args.agent).map_err(|e| fail!("--agent: {e}"))?;
    if args.robots.as_os_str() == "-" && args.urls.is_empty() {
        return Err(fail!("--robots - reads standard input, so give the URLs as arguments"));
    }
    let body = read_all(&args.robots)?;
    let robots = RobotsTxt::parse(&body);
    let group = Group::select(&robots, &agent);
    let mode = if args.raw_urls { PathMode::Raw } else { PathMode::Escaped };

    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut answer = |url: &[u8]| -> Result<(), Failure> {
        let decision = group.decide(&mode.path_of(url));
        let rule = decision.rule.map(|i| &group.rules[i]);
        let url = String::from_utf8_lossy(url);
        let written = if args.json {
            let line = serde_json::json!({
                "url": url,
                "allowed": decision.allowed(),
                "line": rule.map(|r| r.line),
                "rule": rule.map(|r| r.to_string()),
            });
            writeln!(out, "{line}")
        } else {
            let verdict = if decision.allowed() { "allowed" } else { "disallowed" };
            match rule {
                Some(r) => writeln!(out, "{verdict}\t{url}\t{}: {r}", r.line),
                None => writeln!(out, "{verdict}\t{url}"),
            }
        };
        written.context("standard output")
    };
    if args.urls.is_empty() {
        let stdin = std::io::stdin();
        for line in stdin.lock().split(b'\n') {
            let mut line = line.context("standard input")?;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            answer(&line)?;
        }
    } else {
        for url in &args.urls {
            answer(url.as_bytes())?;
        }
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}
