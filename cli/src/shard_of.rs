//! `robotsieve shard-of`: which shard of a set each URL's origin is in, so
//! that other tools can partition URL lists as `compile --shards` does.

use crate::failure::{fail, Context, Failure};
use robotsieve_engine::shards::{shard_file_name, shard_of_url};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `robotsieve shard-of`.
#[derive(clap::Args)]
pub struct Args {
    /// The number of shards of the set.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    shards: u32,
    /// One JSON object per URL instead of a line: `{"shard": K, "file": FILE, "url": URL}`.
    #[arg(long)]
    json: bool,
    /// URLs (or `scheme://host[:port]` origins).
    #[arg(value_name = "URL", required = true)]
    urls: Vec<String>,
}

/// Runs `shard-of`: one line per URL, `K<TAB>FILE<TAB>URL` (or a JSON object); a URL without
/// an origin fails the run (exit 2) naming it, after the lines before it.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for url in &args.urls {
        let k = shard_of_url(url, args.shards).map_err(|e| fail!("{url}: {e}"))?;
        let file = shard_file_name(k, args.shards);
        let written = if args.json {
            writeln!(out, "{}", serde_json::json!({"shard": k, "file": file, "url": url}))
        } else {
            writeln!(out, "{k}\t{file}\t{url}")
        };
        written.context("standard output")?;
    }
    Ok(ExitCode::SUCCESS)
}
