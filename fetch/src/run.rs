//! A whole fetch run: input lines streamed in, each robots.txt URL fetched
//! once, chains written as they complete, signals obeyed, a summary out.

use crate::chain::ChainContext;
use crate::dns::{DnsOptions, Resolver};
use crate::http::{tls_config, ClientSettings};
use crate::output::{self, RecordWriter};
use crate::politeness::Politeness;
use crate::proxy::Proxy;
use crate::record::{ErrorClass, FetchError, Record};
use crate::summary::{Progress, Summary};
use crate::target::targets_of_line;
use robotsieve_sources::warc::decompressed;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Duration;

/// Everything a run is told. [`FetchOptions::new`] gives the documented
/// defaults.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// The `User-Agent` header (required: say who you are).
    pub user_agent: String,
    /// Requests in flight at once (default 256).
    pub concurrency: usize,
    /// Connections to one IP address at once (default 4).
    pub per_ip_connections: usize,
    /// Minimum time between request starts to one IP address (default 100 ms).
    pub per_ip_interval: Duration,
    /// Fetches waiting for busy addresses before reading pauses (default 100,000).
    pub max_waiting: usize,
    /// Deadline for TCP connect plus TLS handshake (default 10 s).
    pub connect_timeout: Duration,
    /// Deadline for response headers once the request is sent (default 15 s).
    pub response_timeout: Duration,
    /// Deadline for a whole redirect chain, bodies included (default 30 s).
    pub total_timeout: Duration,
    /// Retries after a 5xx, 429 or failure with no answer (default 2).
    pub retries: u32,
    /// The first retry's delay, doubled for each further one (default 1 s).
    pub retry_backoff: Duration,
    /// The longest `Retry-After` waited for within the run (default 30 s).
    pub retry_after_cap: Duration,
    /// Body bytes kept, after decoding (default 512,000, as Google).
    pub max_body: usize,
    /// Extra CA certificates (PEM files) trusted besides the system's.
    pub ca_certs: Vec<PathBuf>,
    /// Name resolution and the address rule.
    pub dns: DnsOptions,
    /// `--proxy`: an HTTP proxy every http(s) request goes through (none
    /// by default).
    pub proxy: Option<Proxy>,
}

impl FetchOptions {
    /// The defaults, with `user_agent`.
    pub fn new(user_agent: impl Into<String>) -> FetchOptions {
        FetchOptions {
            user_agent: user_agent.into(),
            concurrency: 256,
            per_ip_connections: 4,
            per_ip_interval: Duration::from_millis(100),
            max_waiting: 100_000,
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(15),
            total_timeout: Duration::from_secs(30),
            retries: 2,
            retry_backoff: Duration::from_secs(1),
            retry_after_cap: Duration::from_secs(30),
            max_body: crate::MAX_BODY,
            ca_certs: Vec::new(),
            dns: DnsOptions { timeout: Duration::from_secs(5), ..DnsOptions::default() },
            proxy: None,
        }
    }
}

/// Where the input comes from and where records go.
#[derive(Clone, Debug)]
pub struct RunPaths {
    /// Input files (`-` for standard input), read in order; gzip or zstd
    /// as their first bytes say.
    pub inputs: Vec<PathBuf>,
    /// The output (`-` for standard output); `OUT.partial` while running.
    pub output: PathBuf,
    /// Continue `OUT.partial`, skipping the URLs it holds.
    pub resume: bool,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every line read and fetched; `OUT` written.
    Complete,
    /// Stopped by this signal; `OUT.partial` kept, flushed.
    Interrupted(i32),
}

/// A failure that stops a run: input or output unreadable or unwritable,
/// a bad option (a `--ca-cert` that is no PEM file).
#[derive(Debug)]
pub struct RunError(pub String);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunError {}

/// The set of URLs already fetched or held: 16 bytes a URL (two
/// independent 64-bit hashes), so memory grows by little per origin.
struct Seen {
    set: HashSet<u128>,
    hasher: std::collections::hash_map::RandomState,
}

impl Seen {
    fn new() -> Seen {
        Seen { set: HashSet::new(), hasher: std::collections::hash_map::RandomState::new() }
    }

    /// Adds `url`; false when it was there.
    fn insert(&mut self, url: &str) -> bool {
        let mut h = self.hasher.build_hasher();
        h.write(url.as_bytes());
        let key = (u128::from(h.finish()) << 64) | u128::from(robotsieve_core::url::origin_hash(url.as_bytes()));
        self.set.insert(key)
    }
}

enum Line {
    Text(String),
    Failed(String),
}

/// Reads the inputs on a thread of their own, line by line, into `tx`.
fn read_inputs(inputs: Vec<PathBuf>, tx: mpsc::Sender<Line>) {
    for path in inputs {
        let name = path.display().to_string();
        let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            match std::fs::File::open(&path) {
                Ok(f) => Box::new(BufReader::with_capacity(1 << 16, f)),
                Err(e) => {
                    let _ = tx.blocking_send(Line::Failed(format!("{name}: {e}")));
                    return;
                }
            }
        };
        let mut lines = match decompressed(reader) {
            Ok((lines, _)) => lines,
            Err(e) => {
                let _ = tx.blocking_send(Line::Failed(format!("{name}: {e}")));
                return;
            }
        };
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => number += 1,
                Err(e) => {
                    let _ = tx.blocking_send(Line::Failed(format!("{name}: line {}: {e}", number + 1)));
                    return;
                }
            }
            let text = String::from_utf8_lossy(&line).trim().to_owned();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            if tx.blocking_send(Line::Text(text)).is_err() {
                return;
            }
        }
    }
}

/// Runs a fetch: see the crate documentation. Blocks until done or
/// interrupted; `progress`, if given, is updated as records are written.
pub fn run(
    options: &FetchOptions,
    paths: &RunPaths,
    progress: Option<Arc<Progress>>,
) -> Result<(Ending, Summary), RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(run_async(options, paths, progress.unwrap_or_default()))
}

async fn run_async(
    options: &FetchOptions,
    paths: &RunPaths,
    progress: Arc<Progress>,
) -> Result<(Ending, Summary), RunError> {
    let started = std::time::Instant::now();
    for input in paths.inputs.iter().filter(|p| p.as_os_str() != "-") {
        std::fs::File::open(input).map_err(|e| RunError(format!("{}: {e}", input.display())))?;
    }
    let tls = tls_config(&options.ca_certs).map_err(|e| RunError(format!("--ca-cert {e}")))?;
    let resolver = Resolver::new(options.dns.clone()).map_err(RunError)?;
    let proxy_addrs = match &options.proxy {
        Some(proxy) => Some(proxy.addresses().await.map_err(RunError)?),
        None => None,
    };
    let context = Arc::new(ChainContext {
        resolver,
        client: ClientSettings {
            tls,
            user_agent: options.user_agent.clone(),
            connect_timeout: options.connect_timeout,
            response_timeout: options.response_timeout,
            proxy: options.proxy.clone().map(Arc::new),
        },
        total_timeout: options.total_timeout,
        max_body: options.max_body,
        retries: options.retries,
        backoff: options.retry_backoff,
        retry_after_cap: options.retry_after_cap,
        proxy_addrs,
    });
    let politeness =
        Politeness::new(options.concurrency, options.max_waiting, options.per_ip_connections, options.per_ip_interval);
    let output_error = |e: io::Error| RunError(format!("{}: {e}", output::partial_path(&paths.output).display()));
    let mut seen = Seen::new();
    let mut held = 0u64;
    if paths.resume && paths.output.as_os_str() != "-" {
        let left = output::resume(&paths.output).map_err(output_error)?;
        for url in &left.urls {
            seen.insert(url);
        }
        held = left.urls.len() as u64;
    }
    let append = paths.resume && output::partial_path(&paths.output).exists();
    let mut writer = RecordWriter::create(&paths.output, append).map_err(output_error)?;

    let (line_tx, mut line_rx) = mpsc::channel::<Line>(4096);
    let inputs = paths.inputs.clone();
    let reader = std::thread::spawn(move || read_inputs(inputs, line_tx));
    let (record_tx, mut record_rx) = mpsc::channel::<Vec<Record>>(1024);
    let mut tasks = JoinSet::new();
    let mut signals = Signals::new().map_err(|e| RunError(format!("cannot watch signals: {e}")))?;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut summary = Summary { records_held: held, ..Summary::default() };
    let mut reading = true;
    let mut failure = None;
    let mut ending = Ending::Complete;
    let mut chain_lines = Vec::new();
    loop {
        // Reading waits for a place in flight; records and signals never wait.
        let next_line = async {
            match reading {
                true => {
                    let place = politeness.enter().await;
                    (place, line_rx.recv().await)
                }
                false => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            signal = signals.next() => {
                ending = Ending::Interrupted(signal);
                break;
            }
            Some(chain) = record_rx.recv() => {
                summary.add_chain(&chain, &mut chain_lines);
                progress.update(&summary);
                if let Err(e) = writer.add(&chain_lines, chain.len()) {
                    failure = Some(output_error(e));
                    break;
                }
            }
            _ = tick.tick() => {
                if let Err(e) = writer.flush() {
                    failure = Some(output_error(e));
                    break;
                }
            }
            (place, line) = next_line => {
                let Some(line) = line else {
                    reading = false;
                    if tasks.is_empty() {
                        break;
                    }
                    continue;
                };
                let text = match line {
                    Line::Text(text) => text,
                    Line::Failed(why) => {
                        failure = Some(RunError(why));
                        break;
                    }
                };
                match targets_of_line(&text) {
                    Err(why) => {
                        summary.bad_lines += 1;
                        let record = Record::failed(&text, &FetchError::new(ErrorClass::Protocol, format!("not an origin: {why}")));
                        summary.add_records(&[record], &mut chain_lines);
                        if let Err(e) = writer.add(&chain_lines, 1) {
                            failure = Some(output_error(e));
                            break;
                        }
                    }
                    Ok(targets) => {
                        let mut targets = targets.into_iter().filter(|t| seen.insert(&t.url)).peekable();
                        summary.duplicates_or_held += match targets.peek() { None => 1, Some(_) => 0 };
                        let mut place = Some(place);
                        for target in targets {
                            let context = context.clone();
                            let tx = record_tx.clone();
                            let mut mine = match place.take() {
                                Some(place) => place,
                                None => politeness.enter().await,
                            };
                            tasks.spawn(async move {
                                let records = context.fetch(&target, &mut mine).await;
                                drop(mine);
                                let _ = tx.send(records).await;
                            });
                        }
                    }
                }
            }
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {
                if !reading && tasks.is_empty() {
                    // Every fetch has sent its records: they are drained below.
                    break;
                }
            }
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    drop(record_tx);
    if failure.is_none() {
        // The chains that completed before the end are written whole.
        while let Ok(chain) = record_rx.try_recv() {
            summary.add_chain(&chain, &mut chain_lines);
            if let Err(e) = writer.add(&chain_lines, chain.len()) {
                failure = Some(output_error(e));
                break;
            }
        }
    }
    drop(line_rx);
    if ending == Ending::Complete && failure.is_none() {
        let _ = reader.join();
    }
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    progress.update(&summary);
    let complete = ending == Ending::Complete && failure.is_none();
    let name = writer.name();
    writer.finish(complete).map_err(|e| RunError(format!("{name}: {e}")))?;
    match failure {
        Some(e) => Err(e),
        None => Ok((ending, summary)),
    }
}

/// SIGINT, SIGTERM and SIGHUP, as one stream of signal numbers.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}
