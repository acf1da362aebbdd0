//! `robotsieve fetch`: getting robots.txt files and keeping the copies as
//! Google keeps them.
//!
//! Without `--due` or `--compact` it fetches (`crate::fetch_network`).
//! `--due CORPUS...` prints the robots.txt URLs whose copies have expired
//! under the cache policy (`robotsieve_sources::freshness`); `--compact
//! CORPUS... -o OUT` writes the records that still decide something
//! (`robotsieve_sources::compaction`). Both read the corpora as `compile
//! --corpus` reads them (JSON Lines, plain, gzip or zstd).

use crate::failure::{fail, Context, Failure};
use crate::fetch_network::NetworkArgs;
use crate::flags;
use robotsieve_sources::compaction::compact;
use robotsieve_sources::corpus::Corpus;
use robotsieve_sources::freshness::{corpus_freshness, CachePolicy};
use robotsieve_sources::Timestamp;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The arguments of `robotsieve fetch`.
#[derive(clap::Args)]
pub struct FetchArgs {
    /// Print the robots.txt URLs of these corpora (JSON Lines fetch records,
    /// plain, .gz or .zst) that are due for a new fetch, one per line, sorted.
    #[arg(long, num_args = 1.., value_name = "CORPUS", conflicts_with = "compact")]
    due: Vec<PathBuf>,
    /// Write to -o the records of these corpora that still decide something:
    /// per URL the newest, and the copy the 30-day rule needs after a failure.
    #[arg(long, num_args = 1.., value_name = "CORPUS", requires = "output")]
    compact: Vec<PathBuf>,
    /// Where --compact writes (JSON Lines; .gz or .zst compressed by the name),
    /// through OUT.partial renamed at the end.
    #[arg(short = 'o', long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The time --due judges at (RFC 3339, e.g. 2026-12-06T00:00:00Z); default: the clock.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    now: Option<Timestamp>,
    /// The cache policy's bounds.
    #[command(flatten)]
    policy: PolicyArgs,
    /// The network mode's flags.
    #[command(flatten)]
    network: NetworkArgs,
}

/// The bounds of the cache policy (`robotsieve_sources::freshness`), the
/// same flags wherever a copy's expiry is judged (`fetch --due`, `inspect --now`).
#[derive(clap::Args)]
pub struct PolicyArgs {
    /// How long a copy is kept when the server gives no max-age (a number and
    /// s, m, h or d; a bare number is seconds).
    #[arg(long, value_name = "DURATION", value_parser = flags::parse_duration, default_value = "24h")]
    default_ttl: Duration,
    /// The shortest a server's max-age may make a copy's life (no-store and no-cache give 0).
    #[arg(long, value_name = "DURATION", value_parser = flags::parse_duration, default_value = "1h")]
    min_ttl: Duration,
    /// The longest a server's max-age may make a copy's life.
    #[arg(long, value_name = "DURATION", value_parser = flags::parse_duration, default_value = "7d")]
    max_ttl: Duration,
    /// The longest wait a failure's Retry-After may ask for.
    #[arg(long, value_name = "DURATION", value_parser = flags::parse_duration, default_value = "24h")]
    retry_after_cap: Duration,
}

impl PolicyArgs {
    /// The policy these flags give; an error when they contradict each other.
    pub fn policy(&self) -> Result<CachePolicy, Failure> {
        if self.min_ttl > self.max_ttl {
            return Err(fail!("--min-ttl is longer than --max-ttl"));
        }
        Ok(CachePolicy {
            default_ttl: self.default_ttl,
            min_ttl: self.min_ttl,
            max_ttl: self.max_ttl,
            retry_after_cap: self.retry_after_cap,
            ..CachePolicy::default()
        })
    }
}

impl FetchArgs {
    /// Whether this run fetches over the network (neither --due nor --compact).
    pub fn fetches_over_network(&self) -> bool {
        self.due.is_empty() && self.compact.is_empty()
    }
}

/// Runs `fetch`.
pub fn run(args: FetchArgs) -> Result<ExitCode, Failure> {
    if !args.due.is_empty() {
        return due(&args);
    }
    if !args.compact.is_empty() {
        let output = args.output.as_deref().ok_or_else(|| fail!("--compact needs -o OUT"))?;
        return compact_into(&args.compact, output);
    }
    crate::fetch_network::run(args.network, args.output)
}

/// Reads JSON Lines corpora, failing on the first broken record (file and line).
fn read_corpora(paths: &[PathBuf]) -> Result<Corpus, Failure> {
    let mut corpus = Corpus::new();
    for path in paths {
        corpus.add_jsonl(path).map_err(|e| fail!("{e}"))?;
    }
    Ok(corpus)
}

/// `--due`: the URLs due, one per line.
fn due(args: &FetchArgs) -> Result<ExitCode, Failure> {
    let policy = args.policy.policy()?;
    let now = args.now.map_or_else(clock, Ok)?;
    let corpus = read_corpora(&args.due)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for url in corpus_freshness(corpus.records(), &policy, now).iter().filter(|u| u.freshness.is_due()) {
        writeln!(out, "{}", url.url).context("standard output")?;
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The time now, from the system clock.
pub fn clock() -> Result<Timestamp, Failure> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| fail!("the system clock is before 1970: give --now"))?;
    Ok(Timestamp::from_unix_nanos(since.as_secs() as i64, since.subsec_nanos()))
}

/// `--compact`: the compacted records to `output`, through `OUT.partial`.
fn compact_into(inputs: &[PathBuf], output: &Path) -> Result<ExitCode, Failure> {
    let corpus = read_corpora(inputs)?;
    let (records, _stats) = compact(corpus.into_records());
    let partial = PathBuf::from(format!("{}.partial", output.display()));
    let written = write_records(&records, &partial, output);
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written?;
    std::fs::rename(&partial, output).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        fail!("{}: cannot rename {} to it: {e}", output.display(), partial.display())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `records` as JSON Lines to `path`, compressed as `name`'s
/// extension says (`.gz`, `.zst`, else plain), and syncs the file.
fn write_records(records: &[robotsieve_sources::FetchRecord], path: &Path, name: &Path) -> Result<(), Failure> {
    let what = path.display().to_string();
    let file = std::fs::File::create(path).map_err(|e| fail!("{what}: cannot create: {e}"))?;
    let buffered = BufWriter::with_capacity(256 * 1024, file);
    let extension = name.extension().and_then(|e| e.to_str()).unwrap_or("");
    let file = match extension {
        "gz" => {
            let mut out = flate2::write::GzEncoder::new(buffered, flate2::Compression::default());
            write_all(records, &mut out).context(&what)?;
            out.finish().context(&what)?
        }
        "zst" => {
            let mut out = zstd::Encoder::new(buffered, 3).context(&what)?;
            write_all(records, &mut out).context(&what)?;
            out.finish().context(&what)?
        }
        _ => {
            let mut out = buffered;
            write_all(records, &mut out).context(&what)?;
            out
        }
    };
    let file = file.into_inner().map_err(|e| fail!("{what}: {}", e.error()))?;
    file.sync_all().context(&what)
}

fn write_all(records: &[robotsieve_sources::FetchRecord], out: &mut impl Write) -> std::io::Result<()> {
    records.iter().try_for_each(|record| record.write_jsonl(out))
}

/// An RFC 3339 time for `--now`.
pub fn parse_time(text: &str) -> Result<Timestamp, String> {
    Timestamp::parse_rfc3339(text).map_err(|e| e.to_string())
}
