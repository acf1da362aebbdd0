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
use std::path::{Path, PathBuf};
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

/// Sends one input line to the run, unless it is blank or a `#` comment;
/// false when the run has stopped reading.
fn send_line(tx: &mpsc::Sender<Line>, line: &str) -> bool {
    let text = line.trim();
    if text.is_empty() || text.starts_with('#') {
        return true;
    }
    tx.blocking_send(Line::Text(text.to_owned())).is_ok()
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
            if !send_line(&tx, &String::from_utf8_lossy(&line)) {
                return;
            }
        }
    }
}

/// Sends a caller's lines, on a thread of their own, into `tx`.
fn send_lines(lines: impl Iterator<Item = String>, tx: mpsc::Sender<Line>) {
    for line in lines {
        if !send_line(&tx, &line) {
            return;
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError(format!("cannot start the runtime: {e}")))
}

/// Runs a fetch: see the crate documentation. Blocks until done or
/// interrupted (SIGINT, SIGTERM, SIGHUP); `progress`, if given, is updated
/// as records are written.
pub fn run(
    options: &FetchOptions,
    paths: &RunPaths,
    progress: Option<Arc<Progress>>,
) -> Result<(Ending, Summary), RunError> {
    for input in paths.inputs.iter().filter(|p| p.as_os_str() != "-") {
        std::fs::File::open(input).map_err(|e| RunError(format!("{}: {e}", input.display())))?;
    }
    let inputs = paths.inputs.clone();
    let read = move |tx| read_inputs(inputs, tx);
    let runtime = runtime()?;
    // Signal streams belong to the runtime they are made in.
    let signals = {
        let _inside = runtime.enter();
        Signals::new().map_err(|e| RunError(format!("cannot watch signals: {e}")))?
    };
    let target = FileTarget { output: &paths.output, resume: paths.resume, signals: Some(signals) };
    runtime.block_on(into_file(options, read, target, progress.unwrap_or_default()))
}

/// Fetches the robots.txt URLs of `lines` (origins, robots.txt URLs or bare
/// hosts, as [`run()`] reads its input lines) into the file `output` as
/// [`run()`] writes it: `OUT.partial` as records complete, renamed to `OUT`
/// at the end (`-`: standard output). Unlike [`run()`] it watches no signals,
/// so that a program embedding it (the Python package) keeps its own.
/// Blocks until every line is fetched.
pub fn fetch_to_file<I>(options: &FetchOptions, lines: I, output: &Path) -> Result<Summary, RunError>
where
    I: IntoIterator<Item = String>,
    I::IntoIter: Send + 'static,
{
    let lines = lines.into_iter();
    let read = move |tx| send_lines(lines, tx);
    let target = FileTarget { output, resume: false, signals: None };
    let (_, summary) = runtime()?.block_on(into_file(options, read, target, Arc::default()))?;
    Ok(summary)
}

/// Fetches the robots.txt URLs of `lines` (as [`fetch_to_file()`] reads
/// them) and hands each origin's records to `sink` as its fetch completes:
/// a redirect chain's hops in order, or the one status-0 record of a line
/// that names no origin. Each URL is fetched once however often it is
/// listed; records come in the order fetches complete, not the input's.
/// An error from `sink` stops the run (fetches in flight are dropped) and
/// is returned. Watches no signals; blocks until done.
///
/// This is the run of [`run()`] with a caller's sink in place of the output
/// file: the same limits, politeness, retries and records.
///
/// # Example
///
/// ```
/// use robotsieve_fetch::test_server::{Pki, Reply, TestServer};
/// use robotsieve_fetch::{fetch_records, FetchOptions};
///
/// let dir = tempfile::tempdir().unwrap();
/// let pki = Pki::new(dir.path(), &["example.test"]);
/// let server = TestServer::start(&pki, |_host, _path| Reply::status(404, ""));
/// let port = server.ports.http;
/// let mut options = FetchOptions::new("mybot/1.0");
/// options.dns.overrides.push(format!("example.test:{port}:127.0.0.1").parse().unwrap());
///
/// let mut chains = Vec::new();
/// let lines = vec![format!("http://example.test:{port}/"), "not an origin".to_owned()];
/// let summary = fetch_records(&options, lines, |chain| Ok(chains.push(chain))).unwrap();
/// assert_eq!((summary.origins, summary.bad_lines), (1, 1));
/// chains.sort_by_key(|chain| chain[0].status);
/// assert_eq!(chains[0][0].status, 0); // the line that names no origin
/// assert_eq!(chains[1][0].status, 404);
/// ```
pub fn fetch_records<I, F>(options: &FetchOptions, lines: I, sink: F) -> Result<Summary, RunError>
where
    I: IntoIterator<Item = String>,
    I::IntoIter: Send + 'static,
    F: FnMut(Vec<Record>) -> Result<(), RunError>,
{
    let lines = lines.into_iter();
    runtime()?.block_on(async move {
        let started = std::time::Instant::now();
        let context = chain_context(options).await?;
        let (line_tx, line_rx) = mpsc::channel::<Line>(4096);
        let reader = std::thread::spawn(move || send_lines(lines, line_tx));
        let mut sink = CallerSink(sink);
        let progress = Progress::default();
        let mut run = Drive { summary: Summary::default(), seen: Seen::new(), signals: None, progress: &progress };
        let (_, failure) = run.drive(options, context, line_rx, &mut sink).await;
        if let Some(e) = failure {
            return Err(e);
        }
        let _ = reader.join();
        run.summary.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(run.summary)
    })
}

/// What every chain of a run shares, from the options (a `--ca-cert` that
/// is no PEM file, or a resolver that cannot start, is an error here,
/// before anything is written).
async fn chain_context(options: &FetchOptions) -> Result<Arc<ChainContext>, RunError> {
    let tls = tls_config(&options.ca_certs).map_err(|e| RunError(format!("--ca-cert {e}")))?;
    let resolver = Resolver::new(options.dns.clone()).map_err(RunError)?;
    let proxy_addrs = match &options.proxy {
        Some(proxy) => Some(proxy.addresses().await.map_err(RunError)?),
        None => None,
    };
    Ok(Arc::new(ChainContext {
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
    }))
}

/// Where a run puts each origin's records as they complete.
trait ChainSink {
    /// Takes one origin's records (a chain, or a bad line's one record).
    fn take(&mut self, records: Vec<Record>) -> Result<(), RunError>;
    /// Called about once a second.
    fn tick(&mut self) -> Result<(), RunError>;
}

/// Records into the output file, in frames.
struct FileSink {
    writer: RecordWriter,
    lines: Vec<u8>,
    name: String,
}

impl ChainSink for FileSink {
    fn take(&mut self, records: Vec<Record>) -> Result<(), RunError> {
        self.lines.clear();
        for record in &records {
            record.write_json_line(&mut self.lines);
        }
        self.writer.add(&self.lines, records.len()).map_err(|e| RunError(format!("{}: {e}", self.name)))
    }

    fn tick(&mut self) -> Result<(), RunError> {
        self.writer.flush().map_err(|e| RunError(format!("{}: {e}", self.name)))
    }
}

/// Records handed to a caller's function.
struct CallerSink<F>(F);

impl<F: FnMut(Vec<Record>) -> Result<(), RunError>> ChainSink for CallerSink<F> {
    fn take(&mut self, records: Vec<Record>) -> Result<(), RunError> {
        (self.0)(records)
    }

    fn tick(&mut self) -> Result<(), RunError> {
        Ok(())
    }
}

/// Where a file run writes, and whether it obeys signals.
struct FileTarget<'a> {
    output: &'a Path,
    resume: bool,
    signals: Option<Signals>,
}

/// A run into a file: `read` sends the input lines (on a thread of its
/// own); the output is resumed if asked, written in frames, and renamed
/// into place when the run completes.
async fn into_file(
    options: &FetchOptions,
    read: impl FnOnce(mpsc::Sender<Line>) + Send + 'static,
    target: FileTarget<'_>,
    progress: Arc<Progress>,
) -> Result<(Ending, Summary), RunError> {
    let started = std::time::Instant::now();
    let context = chain_context(options).await?;
    let output = target.output;
    let name = output::partial_path(output).display().to_string();
    let output_error = |e: io::Error| RunError(format!("{name}: {e}"));
    let mut seen = Seen::new();
    let mut held = 0u64;
    if target.resume && output.as_os_str() != "-" {
        let left = output::resume(output).map_err(output_error)?;
        for url in &left.urls {
            seen.insert(url);
        }
        held = left.urls.len() as u64;
    }
    let append = target.resume && output::partial_path(output).exists();
    let writer = RecordWriter::create(output, append).map_err(output_error)?;
    let mut sink = FileSink { name: writer.name(), writer, lines: Vec::new() };

    let (line_tx, line_rx) = mpsc::channel::<Line>(4096);
    let reader = std::thread::spawn(move || read(line_tx));
    let summary = Summary { records_held: held, ..Summary::default() };
    let mut run = Drive { summary, seen, signals: target.signals, progress: &progress };
    let (ending, failure) = run.drive(options, context, line_rx, &mut sink).await;
    if ending == Ending::Complete && failure.is_none() {
        let _ = reader.join();
    }
    let mut summary = run.summary;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    progress.update(&summary);
    let complete = ending == Ending::Complete && failure.is_none();
    sink.writer.finish(complete).map_err(|e| RunError(format!("{}: {e}", sink.name)))?;
    match failure {
        Some(e) => Err(e),
        None => Ok((ending, summary)),
    }
}

/// The state of one run's loop.
struct Drive<'a> {
    summary: Summary,
    seen: Seen,
    signals: Option<Signals>,
    progress: &'a Progress,
}

impl Drive<'_> {
    /// Reads lines, fetches each new robots.txt URL within the limits, and
    /// hands chains to `sink` as they complete, until the lines end and
    /// every fetch is done, a signal comes, or `sink` or the input fails.
    async fn drive(
        &mut self,
        options: &FetchOptions,
        context: Arc<ChainContext>,
        mut line_rx: mpsc::Receiver<Line>,
        sink: &mut dyn ChainSink,
    ) -> (Ending, Option<RunError>) {
        let politeness = Politeness::new(
            options.concurrency,
            options.max_waiting,
            options.per_ip_connections,
            options.per_ip_interval,
        );
        let (record_tx, mut record_rx) = mpsc::channel::<Vec<Record>>(1024);
        let mut tasks = JoinSet::new();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut reading = true;
        let mut failure = None;
        let mut ending = Ending::Complete;
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
            let signal = async {
                match &mut self.signals {
                    Some(signals) => signals.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                signal = signal => {
                    ending = Ending::Interrupted(signal);
                    break;
                }
                Some(chain) = record_rx.recv() => {
                    self.summary.add_chain(&chain);
                    self.progress.update(&self.summary);
                    if let Err(e) = sink.take(chain) {
                        failure = Some(e);
                        break;
                    }
                }
                _ = tick.tick() => {
                    if let Err(e) = sink.tick() {
                        failure = Some(e);
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
                            self.summary.bad_lines += 1;
                            let record = Record::failed(&text, &FetchError::new(ErrorClass::Protocol, format!("not an origin: {why}")));
                            self.summary.add_records(std::slice::from_ref(&record));
                            if let Err(e) = sink.take(vec![record]) {
                                failure = Some(e);
                                break;
                            }
                        }
                        Ok(targets) => {
                            let mut targets = targets.into_iter().filter(|t| self.seen.insert(&t.url)).peekable();
                            self.summary.duplicates_or_held += match targets.peek() { None => 1, Some(_) => 0 };
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
            // The chains that completed before the end are taken whole.
            while let Ok(chain) = record_rx.try_recv() {
                self.summary.add_chain(&chain);
                if let Err(e) = sink.take(chain) {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.progress.update(&self.summary);
        (ending, failure)
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
