//! `robotsieve fetch --user-agent UA --urls LIST -o OUT`: the network mode of
//! `fetch`, getting each origin's robots.txt as Google gets it (the
//! `robotsieve-fetch` crate) and writing fetch records for `compile --corpus`.

use crate::failure::{status, Failure};
use crate::progress_line::with_progress_line;
use robotsieve_fetch::{DnsOptions, Ending, FetchOptions, Progress, Proxy, ResolveOverride, RunPaths};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The network mode's flags (every limit with its default; docs/fetch.md).
#[derive(clap::Args)]
pub struct NetworkArgs {
    /// The User-Agent header: who is fetching (required for fetching).
    #[arg(long, value_name = "UA")]
    pub user_agent: Option<String>,
    /// Robots.txt URLs, origins or bare hosts, one a line (`-` for standard
    /// input; .gz/.zst read). May be given more than once.
    #[arg(long, value_name = "FILE")]
    pub urls: Vec<PathBuf>,
    /// Continue an interrupted run's OUT.partial, skipping the URLs it holds.
    #[arg(long)]
    pub resume: bool,
    /// Write a JSON summary of the run here (`-` for standard error).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub concurrency: usize,
    /// Connections to one IP address at once.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub per_ip_connections: usize,
    /// Minimum milliseconds between request starts to one IP address.
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub per_ip_interval_ms: u64,
    /// Fetches waiting for busy addresses before reading the input pauses.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub max_waiting: usize,
    /// Seconds for TCP connect and TLS handshake.
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    pub connect_timeout: f64,
    /// Seconds from request to response headers.
    #[arg(long, default_value_t = 15.0, value_name = "S")]
    pub response_timeout: f64,
    /// Seconds for a whole redirect chain, bodies included.
    #[arg(long, default_value_t = 30.0, value_name = "S")]
    pub total_timeout: f64,
    /// Retries after a 5xx, 429 or failure with no answer.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub retries: u32,
    /// Seconds before the first retry, doubled for each further one.
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub retry_backoff: f64,
    /// The longest Retry-After (seconds) a retry waits for within the run
    /// (the record keeps the server's figure for --due).
    #[arg(long, default_value_t = 30.0, value_name = "S")]
    pub retry_wait_cap: f64,
    /// A PEM file of CA certificates trusted besides the system's.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,
    /// HOST:PORT:ADDR, as curl spells it: connect there (a trusted address).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<ResolveOverride>,
    /// Names to addresses in /etc/hosts format (trusted addresses).
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,
    /// Ask this DNS server (ADDR:PORT, UDP) instead of the system's.
    #[arg(long, value_name = "ADDR:PORT")]
    pub dns_server: Option<SocketAddr>,
    /// Seconds one DNS query may take.
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    pub dns_timeout: f64,
    /// Let DNS answers and redirects lead to loopback, private, link-local
    /// and reserved addresses too (for private networks).
    #[arg(long)]
    pub allow_private: bool,
    /// An HTTP proxy, as curl's -x: http://user:password@host:port, the
    /// user, password and port optional (port 1080 by default). The proxy
    /// resolves names, so the address rule then applies to IP literals
    /// only; ftp:// URLs get an error record.
    #[arg(long, value_name = "URL")]
    pub proxy: Option<Proxy>,
}

fn seconds(flag: &str, value: f64) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(value).map_err(|_| Failure::new(format!("{flag} {value}: not a number of seconds")))
}

/// Runs a fetch into `output` (-o: .jsonl, .jsonl.gz or .jsonl.zst by the
/// name, `-` for standard output; written as OUT.partial, renamed when the
/// run ends); exit 0 when done, 128 + n when signal n stopped it.
pub fn run(args: NetworkArgs, output: Option<PathBuf>) -> Result<ExitCode, Failure> {
    let user_agent = args
        .user_agent
        .ok_or_else(|| Failure::new("fetch needs --user-agent UA to fetch (or --due, or --compact)".into()))?;
    let output = output.ok_or_else(|| Failure::new("fetch needs -o OUT".into()))?;
    if args.urls.is_empty() {
        return Err(Failure::new("fetch needs --urls FILE (`-` for standard input)".into()));
    }
    let mut options = FetchOptions::new(user_agent);
    options.concurrency = args.concurrency;
    options.per_ip_connections = args.per_ip_connections;
    options.per_ip_interval = Duration::from_millis(args.per_ip_interval_ms);
    options.max_waiting = args.max_waiting;
    options.connect_timeout = seconds("--connect-timeout", args.connect_timeout)?;
    options.response_timeout = seconds("--response-timeout", args.response_timeout)?;
    options.total_timeout = seconds("--total-timeout", args.total_timeout)?;
    options.retries = args.retries;
    options.retry_backoff = seconds("--retry-backoff", args.retry_backoff)?;
    options.retry_after_cap = seconds("--retry-wait-cap", args.retry_wait_cap)?;
    options.ca_certs = args.ca_cert;
    let hosts = match &args.hosts_file {
        Some(path) => robotsieve_fetch::read_hosts_file(path).map_err(|e| Failure::new(format!("--hosts-file {e}")))?,
        None => Default::default(),
    };
    options.dns = DnsOptions {
        overrides: args.resolve,
        hosts,
        server: args.dns_server,
        timeout: seconds("--dns-timeout", args.dns_timeout)?,
        allow_private: args.allow_private,
    };
    options.proxy = args.proxy;
    let paths = RunPaths { inputs: args.urls, output, resume: args.resume };
    let progress = Arc::new(Progress::default());
    let message = |elapsed: Duration| {
        let now = progress.read();
        let rate = now.origins as f64 / elapsed.as_secs_f64().max(1e-3);
        format!(
            "{} origins, {rate:.0}/s; {} records: {} 2xx, {} no answer",
            now.origins, now.records, now.success, now.failed
        )
    };
    let (ending, summary) =
        with_progress_line(message, || robotsieve_fetch::run(&options, &paths, Some(progress.clone())))
            .map_err(|e| Failure::new(e.to_string()))?;
    if let Some(path) = &args.stats {
        let json = serde_json::to_string_pretty(&summary).expect("the summary serialises") + "\n";
        let written = match path.as_os_str() == "-" {
            true => {
                eprint!("{json}");
                Ok(())
            }
            false => std::fs::write(path, json),
        };
        written.map_err(|e| Failure::new(format!("--stats {}: {e}", path.display())))?;
    }
    match ending {
        Ending::Complete => Ok(ExitCode::SUCCESS),
        Ending::Interrupted(signal) => {
            eprintln!(
                "robotsieve: interrupted by signal {signal}; {} kept (continue it with --resume)",
                robotsieve_fetch::partial_path(&paths.output).display()
            );
            Ok(ExitCode::from((status::SIGNALLED + signal) as u8))
        }
    }
}
