//! `robotsieve check`: the verdict for each URL, and the rule that decided it.

use crate::failure::{fail, Context, Failure};
use crate::input::read_all;
use robotsieve_core::line::{self, LineProblem};
use robotsieve_core::url::{origin_hash, KeyBuf, PathMode};
use robotsieve_core::Verdict;
use robotsieve_engine::{Reason, Scratch};
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use std::borrow::Cow;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `robotsieve check`.
#[derive(clap::Args)]
pub struct Args {
    /// The robots.txt file to check against (`-` for standard input).
    #[arg(long, value_name = "FILE", required_unless_present = "rules", conflicts_with = "rules")]
    robots: Option<PathBuf>,
    /// The compiled artifact, or the directory of a shard set (`robotsieve compile`),
    /// to answer from instead of --robots; URLs must then be absolute, and each
    /// is looked up under its own origin.
    #[arg(long, value_name = "ARTIFACT")]
    rules: Option<PathBuf>,
    /// The crawler: its product tokens, comma-separated (`googlebot-news,googlebot`).
    #[arg(long, value_name = "TOKEN[,TOKEN...]")]
    agent: String,
    /// Match each URL's path byte for byte as Google's library reads it,
    /// instead of the path the fetcher requests (dot segments resolved,
    /// percent-encoded as the URL Standard does, escaped like patterns).
    /// The origin is the fetcher's either way.
    #[arg(long)]
    raw_urls: bool,
    /// One JSON object per URL instead of tab-separated lines, every one
    /// with the same keys (`url`, `verdict`, `allowed`, `line`, `rule`,
    /// `reason`, and the `Content-Signal` and `Content-Usage` preferences
    /// that apply, `"preferences": [{"field", "lines", "values"}]`), null
    /// where there is no value.
    #[arg(long)]
    json: bool,
    /// URLs to check; one per line on standard input when none are given
    /// (each line is a URL, the empty one included). With --robots: absolute URLs,
    /// `host/path`, bare paths and the empty string are accepted, as Google's
    /// library accepts them. A line that is no text (a NUL or other control
    /// byte, a CR inside, not UTF-8) or longer than 65,536 bytes is
    /// `invalid`, as in `filter`.
    urls: Vec<String>,
}

/// One answer, however it was found.
struct Line<'a> {
    verdict: Verdict,
    /// The deciding rule: its line and text.
    rule: Option<(u32, String)>,
    /// Why, when no rule decided and there is more to say than "allowed".
    note: Option<String>,
    /// The usage preferences that apply, when known (printed with `--json`).
    preferences: Option<serde_json::Value>,
    /// The origin's sitemaps and the crawler's crawl-delay, when known
    /// (printed with `--json`; they never change the verdict).
    crawl: Option<Crawl>,
    url: &'a [u8],
}

/// What a robots.txt says beyond its rules, for the crawl loop.
struct Crawl {
    /// Its `sitemap` URLs, in file order.
    sitemaps: Vec<String>,
    /// The crawler's `crawl-delay` values, as written, in file order
    /// (Google ignores them).
    crawl_delays: Vec<String>,
}

impl Crawl {
    fn of(sitemaps: &[&[u8]], crawl_delays: &[&[u8]]) -> Crawl {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Crawl {
            sitemaps: sitemaps.iter().map(|s| text(s)).collect(),
            crawl_delays: crawl_delays.iter().map(|d| text(d)).collect(),
        }
    }
}

/// Runs `check`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let agent = Agent::parse(&args.agent).map_err(|e| fail!("--agent: {e}"))?;
    let mode = if args.raw_urls { PathMode::Raw } else { PathMode::Escaped };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut print = |line: Line<'_>| -> Result<(), Failure> { print_line(&mut out, &line, args.json) };
    if let Some(path) = &args.rules {
        let artifact = crate::input::open_rules(path)?;
        let classifier = crate::input::agent_classifier(&artifact, path, &args.agent, mode)?;
        let agent_index = artifact.find_agent(&agent.to_string()).map_err(|e| fail!("{}: {e}", path.display()))?;
        let mut scratch = Scratch::default();
        let mut key = KeyBuf::new();
        for_each_url(&args.urls, &mut print, |url| {
            let answer = classifier.answer(url, &mut scratch, true).map_err(|e| fail!("{e}"))?;
            let (rule, note) = match answer.reason {
                Reason::Rule(rule) => (Some((rule.line, rule.to_string())), None),
                Reason::NoMatch => (None, None),
                other => (None, Some(other.to_string())),
            };
            let preferences = Some(crate::preferences::to_json(&classifier.preferences(url, &mut scratch)));
            let origin = key.parse(url).ok().and_then(|o| artifact.find_origin(o.key, origin_hash(o.key)));
            let crawl = match origin {
                Some(o) => {
                    let sitemaps = artifact.sitemaps(o).map_err(|e| fail!("{e}"))?;
                    Some(Crawl::of(&sitemaps, &artifact.crawl_delays(o, agent_index).map_err(|e| fail!("{e}"))?))
                }
                None => None,
            };
            Ok(Line { verdict: answer.verdict, rule, note, preferences, crawl, url })
        })?;
    } else {
        let path = args.robots.as_ref().expect("clap requires --robots or --rules");
        if path.as_os_str() == "-" && args.urls.is_empty() {
            return Err(fail!("--robots - reads standard input, so give the URLs as arguments"));
        }
        let body = read_all(path)?;
        let robots = RobotsTxt::parse(&body);
        let group = Group::select(&robots, &agent);
        let (sitemaps, crawl_delays) = (robots.sitemaps(), Group::crawl_delays(&robots, &agent));
        for_each_url(&args.urls, &mut print, |url| {
            let decision = group.decide(&mode.path_of(url));
            let rule = decision.rule.map(|i| &group.rules[i]).map(|r| (r.line, r.to_string()));
            let verdict = if decision.allowed() { Verdict::Allowed } else { Verdict::Disallowed };
            let preferences = Some(crate::preferences::to_json(&group.preferences_for(&mode.path_of(url))));
            let crawl = Some(Crawl::of(&sitemaps, &crawl_delays));
            Ok(Line { verdict, rule, note: None, preferences, crawl, url })
        })?;
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the answer for each URL argument, or each line of standard input
/// when there are none (an empty line is the empty URL, which `--robots`
/// answers as Google's library does). A line that is no URL at all
/// ([`line::problem`]) is `invalid` without asking `answer`. Lines are read
/// with at most 64 KiB of each kept, so memory stays bounded.
fn for_each_url(
    urls: &[String],
    print: &mut impl FnMut(Line<'_>) -> Result<(), Failure>,
    mut answer: impl FnMut(&[u8]) -> Result<Line<'_>, Failure>,
) -> Result<(), Failure> {
    let mut one = |url: &[u8]| match line::problem(url) {
        Some(problem) => print(bad_line(url, problem)),
        None => print(answer(url)?),
    };
    if !urls.is_empty() {
        return urls.iter().try_for_each(|url| one(url.as_bytes()));
    }
    let mut input = std::io::stdin().lock();
    let mut text = Vec::new();
    let mut number = 0u64;
    let keep = line::MAX_LINE + 1;
    while line::read_bounded_line(&mut input, &mut text, keep)
        .map_err(|e| fail!("standard input: line {}: {e}", number + 1))?
        .is_some()
    {
        number += 1;
        one(&text)?;
    }
    Ok(())
}

/// The answer for a line that is no URL at all.
fn bad_line(url: &[u8], problem: LineProblem) -> Line<'_> {
    Line {
        verdict: Verdict::Invalid,
        rule: None,
        note: Some(problem.to_string()),
        preferences: None,
        crawl: None,
        url: line::shown(url),
    }
}

/// A URL as `check` prints it in text: as read, but each control byte
/// (tab included) and each byte that is not UTF-8 written `\xNN`, so that a
/// line of output is one line with three fields whatever the input held.
fn printable(url: &[u8]) -> Cow<'_, str> {
    let plain = |c: char| !c.is_control();
    match std::str::from_utf8(url) {
        Ok(text) if text.chars().all(plain) => Cow::Borrowed(text),
        _ => {
            let mut shown = String::with_capacity(url.len() + 8);
            for chunk in url.utf8_chunks() {
                for c in chunk.valid().chars() {
                    if plain(c) {
                        shown.push(c);
                    } else {
                        shown.extend(c.to_string().bytes().map(|b| format!("\\x{b:02x}")));
                    }
                }
                shown.extend(chunk.invalid().iter().map(|b| format!("\\x{b:02x}")));
            }
            Cow::Owned(shown)
        }
    }
}

/// Writes one answer: a JSON object (the URL as a JSON string: control
/// bytes escaped, bytes that are not UTF-8 replaced by U+FFFD), or
/// tab-separated fields (the URL [`printable`]).
fn print_line(out: &mut impl Write, line: &Line<'_>, json: bool) -> Result<(), Failure> {
    let written = if json {
        let url = String::from_utf8_lossy(line.url);
        let allowed = match line.verdict {
            Verdict::Allowed => Some(true),
            Verdict::Disallowed => Some(false),
            Verdict::Unknown | Verdict::Invalid => None,
        };
        let object = serde_json::json!({
            "url": url,
            "verdict": line.verdict.name(),
            "allowed": allowed,
            "line": line.rule.as_ref().map(|r| r.0),
            "rule": line.rule.as_ref().map(|r| &r.1),
            "reason": line.note,
            "preferences": line.preferences,
            "sitemaps": line.crawl.as_ref().map(|c| &c.sitemaps),
            "crawl_delay": line.crawl.as_ref().map(|c| c.crawl_delays.first()),
            "crawl_delays": line.crawl.as_ref().map(|c| &c.crawl_delays),
        });
        writeln!(out, "{object}")
    } else {
        let verdict = line.verdict.name();
        let url = printable(line.url);
        match (&line.rule, &line.note) {
            (Some((number, rule)), _) => writeln!(out, "{verdict}\t{url}\t{number}: {rule}"),
            (None, Some(note)) => writeln!(out, "{verdict}\t{url}\t{note}"),
            (None, None) => writeln!(out, "{verdict}\t{url}"),
        }
    };
    written.context("standard output")
}
