//! `robotsieve compile`: many origins' robots.txt into one artifact.

use crate::failure::{fail, Failure};
use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build, BuildPlan};
use robotsieve_compiler::corpus::Corpus;
use robotsieve_compiler::Agent;
use robotsieve_engine::filter::PendingFile;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `robotsieve compile`.
#[derive(clap::Args)]
pub struct Args {
    /// A crawler, as its product tokens (`googlebot-news,googlebot`). Repeat
    /// for several crawlers: the artifact holds one group per origin for each.
    #[arg(long, value_name = "TOKEN[,TOKEN...]", required_unless_present = "agents_file")]
    agent: Vec<String>,
    /// Crawlers from a file, added after any --agent: a JSON object keyed by
    /// name (ai.robots.txt's robots.json), a JSON array, or one name a line.
    /// A name that is not a product token is read as Google reads a
    /// user-agent line (`AI2Bot` as `AI`), with a warning; repeats count once.
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,
    /// A robots.txt file for the origin given by the matching --origin.
    #[arg(long, value_name = "FILE", requires = "origin")]
    robots: Vec<PathBuf>,
    /// The origin (`https://example.com`, or its robots.txt URL) of the matching --robots.
    #[arg(long, value_name = "URL")]
    origin: Vec<String>,
    /// A directory of `<host>.txt` files, each the robots.txt of http://host and https://host.
    #[arg(long, value_name = "DIR")]
    robots_dir: Vec<PathBuf>,
    /// A JSON Lines file of fetch records: {"url": ".../robots.txt", "status": 200, "body": "..."}
    /// (or "body_b64"), with optional "fetched_at", "location", "error".
    #[arg(long, value_name = "FILE.jsonl")]
    corpus: Vec<PathBuf>,
    /// WARC files (gzip per record, or plain) of robots.txt captures.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    warc: Vec<PathBuf>,
    /// Keep the rules in the artifact, so verdicts can name the deciding line
    /// (automata are then minimised per rule and somewhat larger).
    #[arg(long)]
    explain: bool,
    /// Where to write the artifact (through a temporary file and a rename).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Print every warning, not only the first 20.
    #[arg(long)]
    all_warnings: bool,
    /// Skip broken records of --corpus and --warc files (a line that is no
    /// fetch record, a WARC record whose header cannot be read) instead of
    /// failing: the summary counts them, and the first few are named.
    #[arg(long)]
    skip_bad_records: bool,
}

/// How many skipped records `compile --skip-bad-records` names on standard
/// error (all are counted).
const SKIPPED_SHOWN: usize = 5;

/// Runs `compile`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let mut agents =
        args.agent.iter().map(|a| Agent::parse(a).map_err(|e| fail!("--agent: {e}"))).collect::<Result<Vec<_>, _>>()?;
    if let Some(path) = &args.agents_file {
        for agent in crate::input::agents_file(path)? {
            if !agents.contains(&agent) {
                agents.push(agent);
            }
        }
    }
    if args.robots.len() != args.origin.len() {
        return Err(fail!(
            "give one --origin for each --robots ({} files, {} origins)",
            args.robots.len(),
            args.origin.len()
        ));
    }
    // Fail before the work when the output cannot be created (no such
    // directory, not writable, a directory): the probe leaves nothing behind.
    drop(PendingFile::create(&args.output).map_err(|e| fail!("{e}"))?);
    let started = Instant::now();
    let mut corpus = Corpus::new();
    if args.skip_bad_records {
        corpus.skip_bad_records();
    }
    let corpus_error = |e: robotsieve_compiler::corpus::CorpusError| fail!("{e}");
    for (file, origin) in args.robots.iter().zip(&args.origin) {
        corpus.add_robots_file(file, origin).map_err(corpus_error)?;
    }
    for dir in &args.robots_dir {
        corpus.add_robots_dir(dir).map_err(corpus_error)?;
    }
    for file in &args.corpus {
        corpus.add_jsonl(file).map_err(corpus_error)?;
    }
    for file in &args.warc {
        corpus.add_warc(file).map_err(corpus_error)?;
    }
    let skipped = corpus.skipped().len();
    for error in corpus.skipped().iter().take(SKIPPED_SHOWN) {
        eprintln!("skipped: {error}");
    }
    if skipped > SKIPPED_SHOWN {
        eprintln!("skipped: ... and {} more bad records", skipped - SKIPPED_SHOWN);
    }
    if corpus.records().is_empty() {
        return Err(fail!("no robots.txt given: use --robots with --origin, --robots-dir, --corpus or --warc"));
    }
    let resolution = corpus.resolve();
    let read = started.elapsed();
    let shown = if args.all_warnings { usize::MAX } else { 20 };
    for warning in resolution.warnings.iter().take(shown) {
        eprintln!("warning: {warning}");
    }
    if resolution.warnings.len() > shown {
        eprintln!("warning: ... and {} more (--all-warnings shows them)", resolution.warnings.len() - shown);
    }

    let plan = BuildPlan { agents, options: BuildOptions { explain: args.explain, ..BuildOptions::default() } };
    let (mut writer, report) = build(resolution.origins.into_values().collect(), &plan);
    writer.build_info("robotsieve", env!("CARGO_PKG_VERSION"));
    writer.build_info("explain", if args.explain { "yes" } else { "no" });
    let sources: Vec<String> = args
        .robots
        .iter()
        .chain(&args.robots_dir)
        .chain(&args.corpus)
        .chain(&args.warc)
        .map(|p| p.display().to_string())
        .collect();
    writer.build_info("sources", &sources.join(" "));
    let writing = Instant::now();
    let bytes = writer.write(&args.output).map_err(|e| fail!("{e}"))?;
    let skipped = if args.skip_bad_records { format!(", {skipped} bad records skipped") } else { String::new() };
    eprintln!(
        "compiled {} origins ({} distinct files, {} distinct groups, {} states, {} split{skipped}) into {} ({} bytes, {} bytes per origin) in {:.2?}: read {:.2?}, automata {:.2?}, written {:.2?}",
        report.origins,
        report.bodies,
        report.groups,
        report.states,
        report.split_groups,
        args.output.display(),
        bytes,
        bytes / report.origins.max(1),
        started.elapsed(),
        read,
        report.elapsed,
        writing.elapsed(),
    );
    Ok(ExitCode::SUCCESS)
}
