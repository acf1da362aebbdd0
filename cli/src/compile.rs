//! `robotsieve compile`: many origins' robots.txt into one artifact.

use crate::failure::{fail, Failure};
use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build, BuildPlan};
use robotsieve_compiler::corpus::Corpus;
use robotsieve_compiler::writer::ArtifactWriter;
use robotsieve_compiler::Agent;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `robotsieve compile`.
#[derive(clap::Args)]
pub struct Args {
    /// A crawler, as its product tokens (`googlebot-news,googlebot`). Repeat
    /// for several crawlers: the artifact holds one group per origin for each.
    #[arg(long, value_name = "TOKEN[,TOKEN...]", required = true)]
    agent: Vec<String>,
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
    /// The memory budget in bytes (suffixes K, M, G): beyond it the origin
    /// index spills to sorted temporary files beside the output, and the map
    /// of distinct groups starts afresh.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    memory: usize,
    /// Print every warning, not only the first 20.
    #[arg(long)]
    all_warnings: bool,
}

/// Runs `compile`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let agents =
        args.agent.iter().map(|a| Agent::parse(a).map_err(|e| fail!("--agent: {e}"))).collect::<Result<Vec<_>, _>>()?;
    if args.robots.len() != args.origin.len() {
        return Err(fail!(
            "give one --origin for each --robots ({} files, {} origins)",
            args.robots.len(),
            args.origin.len()
        ));
    }
    let started = Instant::now();
    let mut corpus = Corpus::new();
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

    let plan = BuildPlan {
        agents,
        options: BuildOptions { explain: args.explain, ..BuildOptions::default() },
        memory: args.memory,
    };
    let sources: Vec<String> = args
        .robots
        .iter()
        .chain(&args.robots_dir)
        .chain(&args.corpus)
        .chain(&args.warc)
        .map(|p| p.display().to_string())
        .collect();
    let output_error = |e: robotsieve_compiler::writer::WriteError| fail!("{}: {e}", args.output.display());
    let agent_names = plan.agents.iter().map(|a| a.to_string()).collect();
    let mut writer =
        ArtifactWriter::create(&args.output, agent_names, args.explain, args.memory).map_err(output_error)?;
    writer.build_info("robotsieve", env!("CARGO_PKG_VERSION"));
    writer.build_info("explain", if args.explain { "yes" } else { "no" });
    writer.build_info("sources", &sources.join(" "));
    let report = build(resolution.origins.into_values(), &plan, &mut writer, |_| {}).map_err(output_error)?;
    let writing = Instant::now();
    let bytes = writer.finish().map_err(output_error)?;
    eprintln!(
        "compiled {} origins ({} distinct files, {} distinct groups, {} states, {} split) into {} ({} bytes, {} bytes per origin) in {:.2?}: read {:.2?}, automata {:.2?}, written {:.2?}",
        report.origins,
        report.bodies,
        report.groups,
        report.states,
        report.split_groups,
        args.output.display(),
        bytes,
        bytes / report.origins.max(1) as u64,
        started.elapsed(),
        read,
        report.elapsed,
        writing.elapsed(),
    );
    Ok(ExitCode::SUCCESS)
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
}
