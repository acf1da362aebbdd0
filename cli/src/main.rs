//! `robotsieve`: enforce robots.txt at crawl-frontier scale.
//!
//! A thin layer over `robotsieve-compiler` and `robotsieve-engine`: it parses
//! flags, opens files, and prints. Every failure the user can cause ends with
//! a message naming the file, line or URL and exit status 2.

mod check;
mod compile;
mod failure;
mod filter;
mod input;
mod inspect;
mod lint;
mod meta;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Enforce robots.txt at crawl-frontier scale, with Google's semantics.
#[derive(Parser)]
#[command(name = "robotsieve", version, about, long_about = None)]
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Compile(args) => compile::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Filter(args) => filter::run(args),
        Command::Meta(args) => meta::run(args),
        Command::Lint(args) => lint::run(args),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("robotsieve: {failure}");
            ExitCode::from(2)
        }
    }
}
