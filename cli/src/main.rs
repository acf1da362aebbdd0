//! `robotsieve`: enforce robots.txt at crawl-frontier scale.
//!
//! A thin layer over `robotsieve-compiler` and `robotsieve-engine`: it parses
//! flags, opens files, and prints. Every failure the user can cause ends with
//! a message naming the file, line or URL and exit status 2. SIGINT, SIGTERM
//! and SIGHUP remove the unfinished outputs and exit with 128 + the signal's
//! number (130, 143, 129), as a shell reports a process the signal killed.
//! When the reader of standard output goes away (`| head -1`), the run ends
//! quietly with status 0, as ripgrep's does.

mod check;
mod compile;
mod failure;
mod fetch;
mod fetch_network;
mod filter;
mod flags;
mod generate;
mod input;
mod inspect;
mod lint;
mod meta;
mod preferences;
mod progress_line;
mod shard_of;
mod survey;
mod unknown_origins;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// The worked example that ends the top-level help.
const EXAMPLE: &str = "\
Every command's flags: robotsieve COMMAND --help. The guide: GUIDE.md.

Example: compile fetched robots.txt for one crawler, then sort a frontier
  robotsieve compile --agent mybot --corpus fetches.jsonl -o rules.rsv
  robotsieve filter --rules rules.rsv --agent mybot --urls frontier.txt \\
      --allowed ok.txt --disallowed blocked.txt --unknown-origins fetch-next.txt
  robotsieve check --rules rules.rsv --agent mybot https://example.com/private";

/// Enforce robots.txt at crawl-frontier scale, with Google's semantics:
/// check URLs against one robots.txt, compile many origins' robots.txt into
/// one artifact, filter URL lists through it, and inspect, lint and survey.
#[derive(Parser)]
#[command(name = "robotsieve", after_help = EXAMPLE)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check URLs against one robots.txt (or a compiled artifact) for one crawler.
    Check(check::Args),
    /// Compile many origins' robots.txt into one memory-mappable artifact.
    Compile(compile::Args),
    /// Show what an artifact holds: header, counts, sizes, largest groups, one origin's rules.
    Inspect(inspect::Args),
    /// Stream a URL list through a compiled artifact: allowed, disallowed, unknown and invalid URLs.
    Filter(filter::Args),
    /// Page-level rules: robots meta tags and X-Robots-Tag headers of fetched pages, for one crawler.
    Meta(meta::Args),
    /// Explain how Google reads a robots.txt and where that differs from what was meant.
    Lint(lint::Args),
    /// Fetch robots.txt as Google does (redirects, size cap, address safety, retries) into a corpus for `compile --corpus`; with --due or --compact, keep fetched copies as Google keeps them.
    Fetch(fetch::FetchArgs),
    /// Which shard of a set of N each URL's origin is in (as `compile --shards N` splits them).
    ShardOf(shard_of::Args),
    /// Figures for many crawlers over a frontier: shares disallowed, origins fully blocked, Content-Signal values; an SVG chart.
    Survey(survey::Args),
    /// The man page, or shell completions (bash, zsh, fish, powershell), from these flag definitions.
    Generate(generate::Args),
}

/// What `--version` prints: the version of robotsieve, and the artifact
/// format and matching semantics versions it reads and writes, so that a
/// user can tell whether an artifact will open before trying.
fn version() -> String {
    use robotsieve_engine::{FORMAT_VERSION, SEMANTICS_VERSION};
    format!(
        "{} (reads and writes artifact format version {FORMAT_VERSION}, semantics version {SEMANTICS_VERSION})",
        env!("CARGO_PKG_VERSION")
    )
}

/// The whole command line's definition: the derived one with the version
/// (leaked once per call: clap keeps a version as `&'static str`, and a
/// process builds its command line once or twice).
fn command() -> clap::Command {
    let version: &'static str = Box::leak(version().into_boxed_str());
    Cli::command().version(version)
}

fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|error| error.exit());
    // Fetching over the network keeps its OUT.partial on a signal, for
    // --resume, and so handles the signals itself.
    #[cfg(unix)]
    if !matches!(&cli.command, Command::Fetch(args) if args.fetches_over_network()) {
        remove_outputs_on_signal();
    }
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Compile(args) => compile::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Filter(args) => filter::run(args),
        Command::Meta(args) => meta::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Fetch(args) => fetch::run(args),
        Command::ShardOf(args) => shard_of::run(args),
        Command::Survey(args) => survey::run(args),
        Command::Generate(args) => generate::run(args, command()),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            if !failure.reader_gone() {
                eprintln!("robotsieve: {failure}");
            }
            failure.exit_code()
        }
    }
}

/// Makes SIGINT (Ctrl-C), SIGTERM and SIGHUP remove every output not yet
/// renamed into place, then exit with 128 + the signal's number: a signal ends
/// the process without running the destructors that remove a `PendingFile`'s
/// temporary file. The signals are taken on a thread of their own while the
/// work goes on; an output being written is merely unlinked, and the process
/// exits right after.
#[cfg(unix)]
fn remove_outputs_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let cannot = |error: std::io::Error| {
        eprintln!("robotsieve: cannot handle signals ({error}): an interrupted run may leave hidden temporary files");
    };
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(signals) => signals,
        Err(error) => return cannot(error),
    };
    robotsieve_engine::install_signal_cleanup();
    let watcher = std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let removed = robotsieve_engine::remove_pending_files();
            let name = match signal {
                SIGINT => "SIGINT",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            if removed == 0 {
                eprintln!("robotsieve: interrupted by {name}");
            } else {
                eprintln!("robotsieve: interrupted by {name}; the unfinished outputs were removed");
            }
            std::process::exit(failure::status::SIGNALLED + signal);
        }
    });
    if let Err(error) = watcher {
        cannot(error);
    }
}
