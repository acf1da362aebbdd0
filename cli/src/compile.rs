//! `robotsieve compile`: many origins' robots.txt into one artifact.

use crate::failure::{fail, Failure};
use indicatif::{ProgressBar, ProgressStyle};
use robotsieve_compiler::build::BuildReport;
use robotsieve_compiler::{compile_corpus, CompileError, CompileEvents, CompileOptions, Outputs, Resolved};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::bounded::BoundedCorpus;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    /// A directory of `<host>.txt` files, each the robots.txt of http://host and https://host
    /// (`<host>_<port>.txt` for another port; names are percent-decoded).
    #[arg(long, value_name = "DIR")]
    robots_dir: Vec<PathBuf>,
    /// JSON Lines files of fetch records: {"url": ".../robots.txt", "status": 200, "body": "..."}
    /// (or "body_b64"), with optional "fetched_at", "location", "error"; plain, gzip or zstd
    /// (told by their first bytes). Takes several (a shell glob), and repeats.
    #[arg(long, value_name = "FILE.jsonl", num_args = 1..)]
    corpus: Vec<PathBuf>,
    /// WARC files (gzip per record, zstd without a dictionary, or plain) of robots.txt captures.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    warc: Vec<PathBuf>,
    /// Keep the rules in the artifact, so verdicts can name the deciding line
    /// (automata are then minimised per rule and somewhat larger).
    #[arg(long)]
    explain: bool,
    /// Where to write the artifact (through a temporary file and a rename);
    /// with --shards or --shard, the directory of the shard set.
    #[arg(short, long, value_name = "FILE|DIR")]
    output: PathBuf,
    /// Write a shard set: N artifacts in the directory -o, origins split by
    /// a stable hash of the origin key (`robotsieve shard-of`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536), conflicts_with = "shard")]
    shards: Option<u32>,
    /// Write only shard K of N into the directory -o: every input is read and
    /// redirects and newest-record-wins are resolved across the whole corpus,
    /// then only shard K's origins are kept.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
    /// The memory budget in bytes (suffixes K, M, G): the corpus is resolved
    /// in sorts that spill to temporary files beyond it; it sizes the table of
    /// first-seen groups (a sixty-fourth) and the map of repeated groups
    /// (a quarter, then it starts afresh); the origin index spills to sorted
    /// temporary files beside the output at 262,144 origins or a quarter of it.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    memory: usize,
    /// Print every warning, not only the first 20.
    #[arg(long)]
    all_warnings: bool,
    /// Skip broken records of --corpus and --warc files (a line that is no
    /// fetch record, a WARC record whose header cannot be read) instead of
    /// failing: the summary counts them, and the first few are named.
    #[arg(long)]
    skip_bad_records: bool,
    // The threads the automata are built on.
    #[command(flatten)]
    threads: crate::flags::Threads,
}

/// How many skipped records `compile --skip-bad-records` names on standard
/// error (all are counted).
const SKIPPED_SHOWN: usize = 5;

/// How many warnings `compile` shows without `--all-warnings` (all are
/// counted).
const WARNINGS_SHOWN: u64 = 20;

/// Runs `compile` on `--threads` threads.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    args.threads.install(|| compile(args))?
}

/// Compiles what `args` names.
fn compile(args: Args) -> Result<ExitCode, Failure> {
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
    let outputs = match (args.shards, args.shard) {
        (Some(n), _) => Outputs::shard_set(&args.output, n, None)?,
        (None, Some((k, n))) => Outputs::shard_set(&args.output, n, Some(k))?,
        (None, None) => Outputs::artifact(&args.output),
    };
    // Fail before the work when an output cannot be created.
    outputs.probe()?;
    let started = Instant::now();
    // Read in bounded memory: a few words per record in sorted runs, the
    // inputs read twice (robotsieve_sources::bounded).
    let mut corpus = BoundedCorpus::new(args.memory);
    if args.skip_bad_records {
        corpus.skip_bad_records();
    }
    for (file, origin) in args.robots.iter().zip(&args.origin) {
        corpus.add_robots_file(file, origin);
    }
    for dir in &args.robots_dir {
        corpus.add_robots_dir(dir);
    }
    for file in &args.corpus {
        corpus.add_jsonl(file)?;
    }
    for file in &args.warc {
        corpus.add_warc(file)?;
    }
    let sources: Vec<String> = args
        .robots
        .iter()
        .chain(&args.robots_dir)
        .chain(&args.corpus)
        .chain(&args.warc)
        .map(|p| p.display().to_string())
        .collect();
    let options = CompileOptions {
        explain: args.explain,
        memory: args.memory,
        sources: sources.join(" "),
        warnings_kept: if args.all_warnings { u64::MAX } else { WARNINGS_SHOWN },
        ..CompileOptions::new(agents)
    };
    let mut progress = Progress { bar: None, one_in: outputs.one_in(), started, read: Duration::ZERO };
    let report = compile_corpus(corpus, &outputs, &options, &mut progress).map_err(|e| match e {
        CompileError::NoRecords => {
            fail!("no robots.txt given: use --robots with --origin, --robots-dir, --corpus or --warc")
        }
        other => Failure::from(other),
    })?;
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    let (resolved, build) = (&report.resolved, &report.build);
    let skipped =
        if args.skip_bad_records { format!(", {} bad records skipped", resolved.skipped_count) } else { String::new() };
    eprintln!(
        "compiled {} origins ({} distinct files, {} distinct groups, {} states, {} split{skipped}) into {} ({} bytes, {} bytes per origin) in {:.2?} on {} threads: read {:.2?}, automata {:.2?}, written {:.2?}",
        build.origins,
        build.bodies,
        build.groups,
        build.states,
        build.split_groups,
        args.output.display(),
        report.bytes,
        report.bytes / build.origins.max(1) as u64,
        started.elapsed(),
        rayon::current_num_threads(),
        progress.read,
        build.elapsed,
        report.writing,
    );
    Ok(ExitCode::SUCCESS)
}

/// What `compile` shows while it runs: the skipped records and the
/// warnings once the corpus is resolved, then a progress bar.
struct Progress {
    bar: Option<ProgressBar>,
    /// One origin in this many of the corpus is built (`--shard K/N`).
    one_in: u32,
    /// When the compile started, and how long reading and resolving took.
    started: Instant,
    read: Duration,
}

impl CompileEvents for Progress {
    fn resolved(&mut self, resolved: &Resolved) {
        self.read = self.started.elapsed();
        for error in resolved.skipped.iter().take(SKIPPED_SHOWN) {
            eprintln!("skipped: {error}");
        }
        if resolved.skipped_count > SKIPPED_SHOWN as u64 {
            eprintln!("skipped: ... and {} more bad records", resolved.skipped_count - SKIPPED_SHOWN as u64);
        }
        if resolved.records == 0 {
            return;
        }
        for warning in &resolved.warnings {
            eprintln!("warning: {warning}");
        }
        let shown = resolved.warnings.len() as u64;
        if resolved.warning_count > shown {
            eprintln!("warning: ... and {} more (--all-warnings shows them)", resolved.warning_count - shown);
        }
        self.bar = progress_bar(resolved.origins as usize, self.one_in);
    }

    fn batch(&mut self, report: &BuildReport) {
        if let Some(bar) = &self.bar {
            bar.set_position(report.origins as u64);
            bar.set_message(format!("{} groups compiled", report.groups));
        }
    }
}

/// A progress bar of origins built, with origins/s and an ETA, on standard
/// error when it is a terminal. With `--shard K/N` about one origin in N of
/// the corpus is built, so the bar's length is the corpus's over N.
fn progress_bar(origins: usize, one_in: u32) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new((origins / one_in as usize).max(1) as u64);
    let style = ProgressStyle::with_template("{bar:30} {pos}/{len} origins, {per_sec}, ETA {eta} ({msg})")
        .expect("the template is valid");
    bar.set_style(style);
    bar.set_message("compiling");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

/// Reads `K/N` (shard K of N, 0 <= K < N).
fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{text:?} is not K/N with 0 <= K < N, such as 17/64");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Reads a byte count with an optional K, M or G suffix (powers of 1024).
fn parse_bytes(text: &str) -> Result<usize, String> {
    let (digits, unit) = match text.trim().char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text.trim()[..i], c.to_ascii_uppercase()),
        _ => (text.trim(), 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        other => return Err(format!("unknown unit {other:?} (use K, M or G)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("{text:?} is not a byte count such as 512M or 2G"))?;
    n.checked_mul(1 << shift).filter(|&n| n > 0).ok_or_else(|| format!("{text:?} is out of range"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_counts_take_suffixes() {
        assert_eq!(super::parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(super::parse_bytes("64m"), Ok(64 << 20));
        assert_eq!(super::parse_bytes("4096"), Ok(4096));
        assert!(super::parse_bytes("12X").is_err());
        assert!(super::parse_bytes("0").is_err());
    }

    #[test]
    fn shards_are_k_of_n() {
        assert_eq!(super::parse_shard("17/64"), Ok((17, 64)));
        assert!(super::parse_shard("64/64").is_err());
        assert!(super::parse_shard("3").is_err());
    }
}
