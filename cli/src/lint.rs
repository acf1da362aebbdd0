//! `robotsieve lint`: how Google reads a robots.txt, line by line, and where
//! that differs from what its author evidently meant; or, with `--summary`,
//! how often each finding occurs over a whole corpus.

use crate::failure::{fail, Context, Failure};
use crate::input::read_all;
use rayon::prelude::*;
use robotsieve_lint::{self as lint, AgentReport, Effect, EffectCache, Finding, Options, Report, Severity, CODES};
use robotsieve_robotstxt::group::Source;
use robotsieve_robotstxt::{Agent, RobotsTxt};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `robotsieve lint`.
#[derive(clap::Args)]
pub struct Args {
    /// robots.txt files to lint (`-` for standard input).
    #[arg(required_unless_present_any = ["summary", "list_codes"])]
    files: Vec<PathBuf>,
    /// Also show which group applies to this crawler and its effective rules,
    /// and check the rules only as this crawler sees them.
    #[arg(long, value_name = "TOKEN[,TOKEN...]")]
    agent: Option<String>,
    /// One JSON object per file (per run with --summary or --list-codes)
    /// instead of text.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// The old spelling of --json (`--format json`; `--format human` is the default).
    #[arg(long, value_enum, hide = true)]
    format: Option<Format>,
    /// Lint every file under DIR in parallel and print counts per finding
    /// (files affected and occurrences) instead of the findings.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["files", "agent"])]
    summary: Option<PathBuf>,
    /// Print the table of finding codes and exit.
    #[arg(long, conflicts_with_all = ["files", "agent", "summary"])]
    list_codes: bool,
    // With --summary: the threads the files are linted on.
    #[command(flatten)]
    threads: crate::flags::Threads,
}

/// How findings are printed (`--json`, or the old `--format`).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// `file:line: severity[code]: message`, with the fix on the next line.
    Human,
    /// One JSON object per file (per run with `--summary` or `--list-codes`).
    Json,
}

/// Runs `lint`: exit status 0 without errors, 1 with errors, 2 (a
/// [`Failure`]) when a file cannot be read.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    if let Some(format) = args.format {
        let old = if format == Format::Json { "--format json" } else { "--format human" };
        crate::flags::deprecated(old, if format == Format::Json { "--json" } else { "no flag (text is the default)" });
    }
    let format = if args.json { Format::Json } else { args.format.unwrap_or(Format::Human) };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.list_codes {
        list_codes(&mut out, format).context("standard output")?;
        out.flush().context("standard output")?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &args.summary {
        let summary = args.threads.install(|| summarise(dir))??;
        summary.write(&mut out, format).context("standard output")?;
        out.flush().context("standard output")?;
        return Ok(ExitCode::SUCCESS);
    }
    let agent = match &args.agent {
        Some(spec) => Some(Agent::parse(spec).map_err(|e| fail!("--agent: {e}"))?),
        None => None,
    };
    let options = Options { agent };
    let mut errors = false;
    for path in &args.files {
        let body = read_all(path)?;
        let robots = RobotsTxt::parse(&body);
        let report = lint::lint(&robots, &options);
        errors |= report.has_errors();
        let name = path.display().to_string();
        match format {
            Format::Human => write_human(&mut out, &name, &report),
            Format::Json => write_json(&mut out, &name, &report),
        }
        .context("standard output")?;
    }
    out.flush().context("standard output")?;
    Ok(if errors { ExitCode::from(crate::failure::status::LINT_ERRORS) } else { ExitCode::SUCCESS })
}

fn list_codes(out: &mut impl Write, format: Format) -> std::io::Result<()> {
    match format {
        Format::Human => {
            for code in CODES {
                writeln!(out, "{:<24} {:<8} {}", code.name, code.severity.name(), code.doc)?;
            }
        }
        Format::Json => {
            let codes: Vec<_> = CODES
                .iter()
                .map(|c| serde_json::json!({"code": c.name, "severity": c.severity.name(), "doc": c.doc}))
                .collect();
            writeln!(out, "{}", serde_json::Value::Array(codes))?;
        }
    }
    Ok(())
}

fn location(name: &str, line: u32) -> String {
    if line == 0 {
        name.to_string()
    } else {
        format!("{name}:{line}")
    }
}

fn write_human(out: &mut impl Write, name: &str, report: &Report) -> std::io::Result<()> {
    for f in &report.findings {
        writeln!(out, "{}: {}[{}]: {}", location(name, f.line), f.severity, f.code, f.message)?;
        writeln!(out, "    fix: {}", f.fix)?;
    }
    if let Some(agent) = &report.agent {
        write_agent_human(out, name, agent)?;
    }
    let (e, w, n) = (report.count(Severity::Error), report.count(Severity::Warning), report.count(Severity::Note));
    writeln!(out, "{name}: {e} error(s), {w} warning(s), {n} note(s)")
}

fn write_agent_human(out: &mut impl Write, name: &str, report: &AgentReport) -> std::io::Result<()> {
    let group = &report.group;
    let lines = group.agent_lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let agent = &report.agent;
    match group.source {
        Source::Specific => {
            writeln!(out, "{name}: {agent}: the group(s) naming it apply (user-agent line(s) {lines})")?
        }
        Source::Global => {
            writeln!(out, "{name}: {agent}: no group names it; the `*` group(s) apply (user-agent line(s) {lines})")?
        }
        Source::Nothing => {
            writeln!(out, "{name}: {agent}: no group names it and there is no `*` group: every path is allowed")?
        }
    }
    if group.rules.is_empty() && group.source != Source::Nothing {
        writeln!(out, "    no rules: every path is allowed")?;
    }
    for (rule, effect) in group.rules.iter().zip(&report.effects) {
        let note = match effect {
            Effect::Needed => String::new(),
            other => format!("    ({})", other.name()),
        };
        let derived = if rule.index_directory { " (the directory of an index.htm* allow)" } else { "" };
        writeln!(out, "    {}: {rule}{derived}{note}", location(name, rule.line))?;
    }
    Ok(())
}

fn finding_json(f: &Finding) -> serde_json::Value {
    serde_json::json!({
        "code": f.code,
        "severity": f.severity.name(),
        "line": (f.line != 0).then_some(f.line),
        "message": f.message,
        "fix": f.fix,
    })
}

fn write_json(out: &mut impl Write, name: &str, report: &Report) -> std::io::Result<()> {
    let mut value = serde_json::json!({
        "file": name,
        "errors": report.count(Severity::Error),
        "warnings": report.count(Severity::Warning),
        "notes": report.count(Severity::Note),
        "findings": report.findings.iter().map(finding_json).collect::<Vec<_>>(),
        // Null without --agent, so that every object has the same keys.
        "agent": null,
    });
    if let Some(agent) = &report.agent {
        let source = match agent.group.source {
            Source::Specific => "specific",
            Source::Global => "global",
            Source::Nothing => "nothing",
        };
        let rules: Vec<_> = agent
            .group
            .rules
            .iter()
            .zip(&agent.effects)
            .map(|(rule, effect)| {
                serde_json::json!({
                    "line": rule.line,
                    "verb": rule.verb.name(),
                    "pattern": String::from_utf8_lossy(&rule.pattern),
                    "index_directory": rule.index_directory,
                    "effect": effect.name(),
                    "redundant": match effect {
                        Effect::Unknown => serde_json::Value::Null,
                        known => serde_json::Value::Bool(known.is_redundant()),
                    },
                })
            })
            .collect();
        value["agent"] = serde_json::json!({
            "agent": agent.agent.to_string(),
            "source": source,
            "agent_lines": agent.group.agent_lines,
            "rules": rules,
        });
    }
    writeln!(out, "{value}")
}

/// Counts over a corpus.
struct Summary {
    files: usize,
    unreadable: Vec<String>,
    with_errors: usize,
    seconds: f64,
    threads: usize,
    /// Per code: (files affected, occurrences).
    counts: HashMap<&'static str, (usize, usize)>,
    /// The slowest files to lint: (seconds, path).
    slowest: Vec<(f64, String)>,
}

#[derive(Default)]
struct Tally {
    files: usize,
    unreadable: Vec<String>,
    with_errors: usize,
    counts: HashMap<&'static str, (usize, usize)>,
    /// The slowest files: (seconds, path), at most [`SLOWEST`].
    slowest: Vec<(f64, String)>,
}

/// How many of the slowest files a summary names.
const SLOWEST: usize = 5;

impl Tally {
    fn of_file(path: &Path, cache: &EffectCache) -> Tally {
        let mut tally = Tally { files: 1, ..Tally::default() };
        let body = match std::fs::read(path) {
            Ok(body) => body,
            Err(e) => {
                tally.unreadable.push(format!("{}: {e}", path.display()));
                return tally;
            }
        };
        let robots = RobotsTxt::parse(&body);
        let started = Instant::now();
        let report = lint::lint_with(&robots, &Options::default(), cache);
        tally.slowest.push((started.elapsed().as_secs_f64(), path.display().to_string()));
        tally.with_errors = usize::from(report.has_errors());
        for f in &report.findings {
            tally.counts.entry(f.code).or_insert((1, 0)).1 += 1;
        }
        tally
    }

    fn merge(mut self, other: Tally) -> Tally {
        self.files += other.files;
        self.with_errors += other.with_errors;
        self.unreadable.extend(other.unreadable);
        self.slowest.extend(other.slowest);
        self.slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        self.slowest.truncate(SLOWEST);
        for (code, (files, occurrences)) in other.counts {
            let entry = self.counts.entry(code).or_default();
            entry.0 += files;
            entry.1 += occurrences;
        }
        self
    }
}

/// Every regular file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).context(dir.display())? {
            let entry = entry.context(dir.display())?;
            let kind = entry.file_type().context(entry.path().display())?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() || (kind.is_symlink() && entry.path().is_file()) {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

fn summarise(dir: &Path) -> Result<Summary, Failure> {
    let start = Instant::now();
    let files = files_under(dir)?;
    if files.is_empty() {
        return Err(fail!("{}: no files to lint", dir.display()));
    }
    let cache = EffectCache::default();
    let tally = files.par_iter().map(|p| Tally::of_file(p, &cache)).reduce(Tally::default, Tally::merge);
    Ok(Summary {
        files: tally.files,
        unreadable: tally.unreadable,
        with_errors: tally.with_errors,
        seconds: start.elapsed().as_secs_f64(),
        threads: rayon::current_num_threads(),
        counts: tally.counts,
        slowest: tally.slowest,
    })
}

impl Summary {
    /// Codes by files affected, then occurrences, then name.
    fn sorted(&self) -> Vec<(&'static lint::Code, usize, usize)> {
        let mut rows: Vec<_> = self
            .counts
            .iter()
            .filter_map(|(name, &(files, occurrences))| lint::code(name).map(|c| (c, files, occurrences)))
            .collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.name.cmp(b.0.name)));
        rows
    }

    fn write(&self, out: &mut impl Write, format: Format) -> std::io::Result<()> {
        let rows = self.sorted();
        match format {
            Format::Human => {
                writeln!(
                    out,
                    "{} files linted in {:.1} s on {} threads; {} with errors, {} unreadable",
                    self.files,
                    self.seconds,
                    self.threads,
                    self.with_errors,
                    self.unreadable.len()
                )?;
                writeln!(out, "{:<24} {:<8} {:>8} {:>7} {:>11}", "code", "severity", "files", "share", "occurrences")?;
                for (code, files, occurrences) in rows {
                    let share = 100.0 * files as f64 / self.files.max(1) as f64;
                    writeln!(
                        out,
                        "{:<24} {:<8} {files:>8} {share:>6.2}% {occurrences:>11}",
                        code.name,
                        code.severity.name()
                    )?;
                }
                for failure in &self.unreadable {
                    writeln!(out, "unreadable: {failure}")?;
                }
                for (seconds, path) in &self.slowest {
                    writeln!(out, "slowest: {seconds:.3} s {path}")?;
                }
            }
            Format::Json => {
                let codes: Vec<_> = rows
                    .iter()
                    .map(|(code, files, occurrences)| {
                        serde_json::json!({
                            "code": code.name,
                            "severity": code.severity.name(),
                            "files": files,
                            "occurrences": occurrences,
                            "doc": code.doc,
                        })
                    })
                    .collect();
                let value = serde_json::json!({
                    "files": self.files,
                    "with_errors": self.with_errors,
                    "unreadable": self.unreadable,
                    "seconds": self.seconds,
                    "threads": self.threads,
                    "codes": codes,
                    "slowest": self.slowest.iter().map(|(s, p)| serde_json::json!({"seconds": s, "file": p})).collect::<Vec<_>>(),
                });
                writeln!(out, "{value}")?;
            }
        }
        Ok(())
    }
}
