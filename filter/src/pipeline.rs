//! The parallel filter pipeline: a URL list in, one verdict per line out.
//!
//! A frontier of billions of URLs is streamed through a [`Classifier`] (the
//! compiled artifact, for one agent and one path mode) at memory speed:
//!
//! - The input is a newline-separated list (LF or CRLF). A regular file is
//!   memory-mapped and cut into chunks without copying; any other source
//!   (standard input, a decompressor) is read into recycled chunk buffers
//!   ([`Input`]). Blank lines are skipped; every other line gets exactly one
//!   verdict, a final line without a newline included. The line is the URL
//!   byte for byte (only the line end is removed).
//! - A line that is no text (a NUL or other control byte, a CR inside, bytes
//!   that are not UTF-8) or longer than [`MAX_LINE`] bytes is `invalid`
//!   whatever its URL, with its [`LineProblem`] as the reason: the classifier
//!   never sees it. Lines are checked in the same pass that finds the
//!   newlines, so plain ASCII lines pay nothing more. Of an over-long line
//!   the chunkers keep only the start and skip the rest, and the outputs hold
//!   its first `MAX_LINE` bytes: whatever the input, a chunk is at most
//!   `chunk_size + MAX_LINE` bytes, and every line gets one verdict.
//! - Chunks of a few MiB, cut just after a newline, are classified in parallel
//!   on a dedicated rayon pool. Each chunk is formatted into its own buffers
//!   on its worker, and the chunks are written out in input order while
//!   later ones are classified.
//!   At most `threads × chunks_per_thread` chunks are in flight, so memory
//!   stays bounded whatever the input size (a chunk only grows past the chunk
//!   size to finish a line longer than it).
//! - Where the results go is a [`Sink`]'s business: the pipeline hands each
//!   URL's verdict to the sink's [`Format`] on its worker and the finished
//!   chunks to the sink ([`ChunkSink::write`]) in input order; it formats
//!   and opens nothing itself.
//! - Lines of URLs are one kind of chunk. [`Pipeline::run_chunks_of`] runs
//!   any other on the same ordered loop: a [`ChunkReader`] cuts the input
//!   on the calling thread, a [`ChunkWorker`] works each chunk on the pool,
//!   a [`ChunkSink`] gets them in input order (`meta --warc`: batches of
//!   WARC records in, lines of page rules out). A reader's damage ends a
//!   run once the chunks before it are written.
//!   The command line's TSV outputs and its output files (written under a
//!   temporary name, renamed into place on success, removed on a signal)
//!   are in [`crate::output`].
//! - Without reasons, a chunk's URLs go to the classifier all at once, so
//!   that it can group them by origin ([`crate::classify`]).
//! - A large mapped list whose origins are scattered over an artifact of
//!   many origins can instead be split by origin into temporary partitions
//!   first, each classified with its origins' tables in the cache, and the
//!   outputs written in input order from a verdict per URL ([`Grouping`],
//!   the `partitioned` module): the same outputs, three passes.
//!
//! The per-URL cost of the pipeline itself is one step of a vectorised
//! newline search, a call the compiler inlines, and appends to buffers that
//! are reused from chunk to chunk: no allocation per URL.

use memmap2::Mmap;
use robotsieve_core::line::{self, LineProblem, MAX_LINE};
use robotsieve_core::Verdict;
use robotsieve_engine::OutputError;
use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

mod partitioned;
pub use partitioned::partitions_for;

/// What decides a URL's verdict: the compiled artifact for one agent and one
/// path mode, or any other rule (tests use verdicts read from the URL text).
pub trait Classifier: Sync {
    /// Per-worker reusable state (buffers), so classify never allocates in the common case.
    ///
    /// A scratch may also carry tallies beyond the verdict counts (origins hit
    /// per robots.txt status class, say): every scratch used in a run is
    /// handed back in [`Report::scratches`] for the caller to merge.
    type Scratch: Default + Send;

    /// Why the classifier could not answer (for the artifact's classifiers,
    /// a damaged group): the run stops and reports it as
    /// [`FilterError::Classifier`].
    type Error: std::error::Error + Send + Sync + 'static;

    /// The verdict for one URL (the line without its line end). When `explain` is Some, append a short
    /// tab-free reason (e.g. `4: disallow: /b`, or `robots.txt answered 503`) to it.
    /// An error (a damaged group of an artifact) stops the run.
    fn classify(
        &self,
        url: &[u8],
        scratch: &mut Self::Scratch,
        explain: Option<&mut Vec<u8>>,
    ) -> Result<Verdict, Self::Error>;

    /// The verdicts of a batch of URLs (each a line without its line end), in
    /// order: `verdicts[i]` is what [`Classifier::classify`] gives `urls[i]`,
    /// and with `reasons`, its reason is added to them. With reasons the
    /// filter hands over up to [`BATCH`] URLs at a time; without, every URL
    /// of a chunk at once, so that a classifier can group them (by origin,
    /// say) to use each table while it is hot. The default classifies one
    /// URL after the other; a classifier whose lookups miss the cache
    /// overrides it.
    fn classify_batch(
        &self,
        urls: &[&[u8]],
        scratch: &mut Self::Scratch,
        verdicts: &mut [Verdict],
        mut reasons: Option<&mut Reasons>,
    ) -> Result<(), Self::Error> {
        for (url, verdict) in urls.iter().zip(verdicts) {
            *verdict = self.classify(url, scratch, reasons.as_mut().map(|r| r.start_next()))?;
        }
        Ok(())
    }

    /// [`Classifier::classify_batch`] without reasons of URLs that come
    /// grouped by origin: the partitioned form sorts each block of a
    /// partition by the origin hash it took in its first pass and hands it
    /// here, so that a classifier that groups URLs itself can skip hashing
    /// and sorting them again. The grouping is a hint for speed only: the
    /// verdicts must be [`Classifier::classify`]'s, whatever the order (a
    /// pass-1 hash is of the authority as written, not of the parsed origin,
    /// so two spellings of one origin may come apart, and two origins may
    /// share a bucket). The default is [`Classifier::classify_batch`].
    fn classify_grouped(
        &self,
        urls: &[&[u8]],
        scratch: &mut Self::Scratch,
        verdicts: &mut [Verdict],
    ) -> Result<(), Self::Error> {
        self.classify_batch(urls, scratch, verdicts, None)
    }
}

/// The reasons of a batch of URLs, one after the other in one buffer.
#[derive(Clone, Debug, Default)]
pub struct Reasons {
    text: Vec<u8>,
    /// Where each reason starts in `text`; it ends where the next starts.
    starts: Vec<usize>,
}

impl Reasons {
    /// Starts the next URL's reason: append it to the buffer returned.
    pub fn start_next(&mut self) -> &mut Vec<u8> {
        self.starts.push(self.text.len());
        &mut self.text
    }

    /// The reason of the `i`th URL of the batch (empty if none was started).
    pub fn get(&self, i: usize) -> &[u8] {
        let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        &self.text[self.starts.get(i).copied().unwrap_or(end)..end]
    }

    /// Forgets every reason, keeping the memory.
    pub fn clear(&mut self) {
        self.text.clear();
        self.starts.clear();
    }
}

/// The most URLs the filter hands to [`Classifier::classify_batch`] at once:
/// enough for the cache misses of many URLs to overlap, few enough that a
/// batch's tables stay in the cache between its steps.
pub const BATCH: usize = 512;

/// How a run is carried out.
#[derive(Clone, Debug)]
pub struct Config {
    /// Worker threads; 0 means one per core (or `RAYON_NUM_THREADS`).
    pub threads: usize,
    /// Bytes of input per chunk; a chunk ends at the first newline at or after
    /// this size. Larger chunks cost memory, smaller ones more bookkeeping;
    /// tests use tiny chunks to exercise the ordering.
    pub chunk_size: usize,
    /// Chunks in flight per worker thread: enough to keep every worker busy
    /// while the writer waits for the oldest chunk. Memory is bounded by
    /// roughly `threads × chunks_per_thread × (chunk_size + output per chunk)`.
    pub chunks_per_thread: usize,
    /// The verdict URLs of origins without a robots.txt are reported as:
    /// [`Verdict::Unknown`] (the default) keeps them apart; `Allowed` or
    /// `Disallowed` folds them into that verdict everywhere (the lists, the
    /// verdicts output and the counts), as `--unknown-as` does.
    pub unknown_as: Verdict,
    /// Ask the classifier for a reason and append it to each line of the
    /// verdicts output (ignored when there is no verdicts output).
    pub explain: bool,
    /// Whether the URLs are grouped by origin within each chunk only, or
    /// split by origin into partitions first (see [`Grouping`]).
    pub grouping: Grouping,
    /// Where the partitioned form keeps its temporary files (unnamed, so
    /// that nothing is left behind whatever ends the process); `None` is
    /// the system's temporary directory (`TMPDIR`). It needs about the
    /// input's size plus a byte per URL.
    pub temp_dir: Option<PathBuf>,
}

/// How a run groups URLs by origin, so that each origin's index entry and
/// automaton are used while they are in the cache.
///
/// The windowed path groups the URLs of each chunk (the classifier sorts
/// a window of them by origin hash): enough when origins repeat within a
/// window (a list sorted by host, an artifact of a few thousand origins).
/// When a large list in random order meets many origins, nearly every URL
/// finds its tables cold; the partitioned form then splits the URLs by
/// origin hash into temporary partitions, each with few enough origins that
/// their tables stay in the cache, classifies the partitions (in parallel),
/// and writes the outputs in input order from a verdict per URL (see
/// the pipeline's `partitioned` module). It needs a mapped input (a
/// regular file; standard input and decompressed lists stay windowed) and
/// no reasons (`--explain` and `--matrix` stay windowed): its verdict
/// store holds one byte per URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// Within each chunk only.
    Windowed,
    /// Partitioned when it pays: a mapped input of at least
    /// [`PARTITION_MIN_CHUNKS`] chunks over an artifact of at least
    /// [`PARTITION_MIN_ORIGINS`] origins (`origins`, the artifact's count),
    /// whose origins are scattered (sampled: in windows of 2,048 lines at 8
    /// places, more than a quarter of the URLs with an origin of their
    /// own; a list sorted or clustered by host stays windowed); windowed
    /// otherwise.
    Auto {
        /// The artifact's number of origins.
        origins: usize,
    },
    /// Partitioned into `partitions` (at most 8,192) whenever the form
    /// applies (a mapped input, no reasons); for tests and measurements.
    Partitioned {
        /// How many partitions.
        partitions: usize,
    },
}

/// From how many chunks of input [`Grouping::Auto`] partitions: below it,
/// the temporary files cost more than the cold lookups they save.
pub const PARTITION_MIN_CHUNKS: usize = 32;

/// From how many origins [`Grouping::Auto`] partitions: with fewer, the
/// tables of all origins stay in the cache anyway, or a chunk's window
/// repeats each origin often enough.
pub const PARTITION_MIN_ORIGINS: usize = 4096;

/// The default chunk size: 1 MiB, about 18,000 URLs and 10 ms of work per
/// chunk (coarse enough that handing chunks out costs nothing, while the
/// chunks in flight and their outputs stay a few MiB per thread).
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

impl Default for Config {
    fn default() -> Config {
        Config {
            threads: 0,
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunks_per_thread: 4,
            unknown_as: Verdict::Unknown,
            explain: false,
            grouping: Grouping::Windowed,
            temp_dir: None,
        }
    }
}

/// Why a run failed. Every variant names what failed, for the user.
#[derive(Debug)]
#[non_exhaustive]
pub enum FilterError {
    /// Reading the URL list failed (or it could not be opened).
    Input {
        /// The input's name (its path, or `standard input`).
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// Creating, writing or renaming an output failed.
    Output {
        /// The output's name (its final path).
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The classifier (or another kind of chunk's [`ChunkWorker`]) panicked:
    /// a bug, reported instead of a crash so that the outputs are cleaned up
    /// and the caller exits with a message.
    ClassifierPanicked {
        /// The panic message.
        message: String,
    },
    /// The worker threads could not be started.
    ThreadPool(String),
    /// The classifier could not answer (a group of the artifact is damaged,
    /// say): its [`Classifier::Error`]. Nothing of the chunk it was
    /// classifying was written.
    Classifier(Box<dyn std::error::Error + Send + Sync>),
    /// A record of an input of another kind than URL lines (a WARC record,
    /// say, for [`Pipeline::run_chunks_of`]) could not be read.
    Record {
        /// The input's name (its path).
        name: String,
        /// The reader's own error, which says which record and why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl FilterError {
    /// A classifier's error, boxed.
    fn classifier(error: impl std::error::Error + Send + Sync + 'static) -> FilterError {
        FilterError::Classifier(Box::new(error))
    }
}

impl From<OutputError> for FilterError {
    fn from(error: OutputError) -> FilterError {
        FilterError::Output { name: error.name, source: error.source }
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterError::Input { name, source } => write!(f, "{name}: cannot read: {source}"),
            FilterError::Output { name, source } => write!(f, "{name}: cannot write: {source}"),
            FilterError::ClassifierPanicked { message } => {
                write!(f, "internal error: the classifier panicked: {message}")
            }
            FilterError::ThreadPool(message) => write!(f, "cannot start worker threads: {message}"),
            FilterError::Classifier(error) => write!(f, "{error}"),
            FilterError::Record { name, source } => write!(f, "{name}: {source}"),
        }
    }
}

impl std::error::Error for FilterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FilterError::Input { source, .. } | FilterError::Output { source, .. } => Some(source),
            FilterError::Classifier(error) => Some(error.as_ref()),
            FilterError::Record { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------

/// A URL list to filter: a memory-mapped file, or a stream read in chunks.
pub struct Input {
    name: String,
    source: Source,
}

enum Source {
    Mapped(Mmap),
    Stream { reader: Box<dyn Read>, carry: Vec<u8>, eof: bool },
}

impl Input {
    /// Opens `path`: `-` is standard input; a regular file is memory-mapped;
    /// anything else (a named pipe, a device) is streamed. Compressed files
    /// are the caller's business: wrap the decoder with [`Input::from_reader`].
    pub fn open(path: &Path) -> Result<Input, FilterError> {
        if path == Path::new("-") {
            return Ok(Input::stdin());
        }
        let name = path.display().to_string();
        let failed = |source| FilterError::Input { name: name.clone(), source };
        let file = File::open(path).map_err(failed)?;
        let metadata = file.metadata().map_err(failed)?;
        if metadata.is_dir() {
            return Err(failed(io::Error::other("is a directory")));
        }
        if !metadata.is_file() {
            return Ok(Input::from_reader(name, file));
        }
        // SAFETY: the map is only read. If another process truncates the file
        // while it is mapped, reads past the new end fault (SIGBUS): the same
        // contract every memory-mapped reader has, stated in the CLI help.
        let map = unsafe { Mmap::map(&file) }.map_err(failed)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Input { name, source: Source::Mapped(map) })
    }

    /// Standard input, streamed.
    pub fn stdin() -> Input {
        Input::from_reader("standard input", io::stdin())
    }

    /// Any byte stream (a decompressor, a socket, bytes in memory), read in
    /// chunks; `name` is what errors call it.
    pub fn from_reader(name: impl Into<String>, reader: impl Read + 'static) -> Input {
        Input { name: name.into(), source: Source::Stream { reader: Box::new(reader), carry: Vec::new(), eof: false } }
    }

    /// The name errors use: the path, or `standard input`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole input, when it is a mapped file.
    pub fn mapped_bytes(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Mapped(map) => Some(map),
            Source::Stream { .. } => None,
        }
    }
}

/// Where the chunks of a run come from.
enum Chunker<'a> {
    /// A mapped file: chunks are slices of it, shared by the workers.
    /// `released` bytes at its start have been given back (see
    /// [`Chunker::release_before`]).
    Mapped { map: &'a Mmap, at: usize, released: usize },
    /// A stream: chunks are read into the buffer of the chunk's workspace.
    Stream { reader: &'a mut dyn Read, carry: &'a mut Vec<u8>, eof: &'a mut bool },
}

/// The next chunk of a [`Chunker`], and how many input bytes after it were
/// skipped: the rest of an over-long line the chunk ends with the start of.
enum Chunk<'a> {
    /// These bytes of the mapped file.
    Mapped(&'a [u8], usize),
    /// The bytes now in the buffer passed to [`Chunker::next`].
    Buffered(usize),
}

/// How much of an over-long line the chunkers keep: enough to tell that it
/// is longer than [`MAX_LINE`] even when its last byte kept is a CR (which a
/// CRLF line end would take off).
const LONG_LINE_HEAD: usize = MAX_LINE + 2;

impl<'a> Chunker<'a> {
    /// The next chunk: whole lines of at least `chunk_size` bytes unless the
    /// input ends first; `None` at the end.
    fn next(&mut self, buffer: &mut Vec<u8>, chunk_size: usize) -> io::Result<Option<Chunk<'a>>> {
        match self {
            Chunker::Mapped { map, at, .. } => {
                let data: &'a [u8] = map;
                if *at == data.len() {
                    return Ok(None);
                }
                let end = mapped_chunk_end(data, *at, chunk_size);
                let chunk = &data[*at..end];
                *at = if end == data.len() || data[end - 1] == b'\n' { end } else { skip_mapped_line(map, end) };
                Ok(Some(Chunk::Mapped(chunk, *at - end)))
            }
            Chunker::Stream { reader, carry, eof } => {
                let chunk = next_stream_chunk(*reader, carry, eof, buffer, chunk_size)?;
                Ok(chunk.map(Chunk::Buffered))
            }
        }
    }

    /// Takes the pages of a mapped file before byte `offset` (which every
    /// chunk written so far covers) out of this process's resident memory,
    /// in steps of [`RELEASE_STEP`]: they are read once, and keeping them
    /// would make the memory of a run grow with its input (10 million URLs
    /// are 530 MB). The mapping stays valid: a page read again comes back
    /// from the file. Streams hold no more than their chunk buffers anyway.
    fn release_before(&mut self, offset: usize) {
        let Chunker::Mapped { map, released, .. } = self else {
            return;
        };
        // A multiple of every page size in use (4 KiB to 64 KiB), as madvise wants.
        let end = offset / RELEASE_STEP * RELEASE_STEP;
        if end > *released {
            robotsieve_engine::release_mapped(map, *released, end - *released);
            *released = end;
        }
    }
}

/// How much of a mapped input is given back at a time (see
/// [`Chunker::release_before`]): large enough that the system calls cost
/// nothing, small against the memory a run needs otherwise.
const RELEASE_STEP: usize = 4 << 20;

/// The end of the mapped chunk that starts at `start`: just after the first
/// newline at or after `start + chunk_size`, or the end of the data; but
/// when the line that holds byte `start + chunk_size - 1` is longer than
/// [`MAX_LINE`], the first [`LONG_LINE_HEAD`] bytes of that line end the chunk
/// (the caller then skips the rest of it with [`skip_mapped_line`]).
fn mapped_chunk_end(data: &[u8], start: usize, chunk_size: usize) -> usize {
    let min_end = start.saturating_add(chunk_size.max(1));
    if min_end >= data.len() {
        return data.len();
    }
    let line_start = memchr::memrchr(b'\n', &data[start..min_end - 1]).map_or(start, |i| start + i + 1);
    let head_end = (line_start + LONG_LINE_HEAD).max(min_end);
    match memchr::memchr(b'\n', &data[min_end - 1..head_end.min(data.len())]) {
        Some(i) => min_end + i,
        None => head_end.min(data.len()),
    }
}

/// Where the line that goes on at `from` ends: just after its newline, or at
/// the end of `map`. The pages scanned are given back as the scan goes, so
/// that skipping a line of gigabytes does not make them resident.
fn skip_mapped_line(map: &Mmap, from: usize) -> usize {
    let data: &[u8] = map;
    let mut at = from;
    while at < data.len() {
        let step_end = (at / RELEASE_STEP + 1) * RELEASE_STEP;
        let end = step_end.min(data.len());
        if let Some(i) = memchr::memchr(b'\n', &data[at..end]) {
            return at + i + 1;
        }
        let aligned = at.div_ceil(RELEASE_STEP) * RELEASE_STEP;
        if end > aligned {
            robotsieve_engine::release_mapped(map, aligned, end - aligned);
        }
        at = end;
    }
    data.len()
}

/// Fills `buf` with the next chunk of a stream: whole lines, at least
/// `chunk_size` bytes unless the stream ends first. The bytes after the last
/// newline wait in `carry` for the next chunk. A line longer than
/// [`MAX_LINE`] with no newline in the chunk ends it with its first
/// [`LONG_LINE_HEAD`] bytes; the rest of it is read and dropped. Returns the
/// number of bytes dropped, or `None` at the end.
fn next_stream_chunk(
    reader: &mut dyn Read,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    buf: &mut Vec<u8>,
    chunk_size: usize,
) -> io::Result<Option<usize>> {
    buf.clear();
    buf.append(carry);
    // `buf[..filled]` holds data; the rest is zeroed room to read into,
    // zeroed once per chunk rather than once per read.
    let mut filled = buf.len();
    let mut scanned = 0;
    let mut target = chunk_size.max(1);
    let result = 'chunk: loop {
        while filled < target && !*eof {
            if buf.len() < target {
                buf.resize(target, 0);
            }
            match reader.read(&mut buf[filled..target]) {
                Ok(0) => *eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break 'chunk Err(e),
            }
        }
        if *eof {
            break Ok((filled > 0).then_some(0));
        }
        if let Some(i) = memchr::memrchr(b'\n', &buf[scanned..filled]) {
            let cut = scanned + i + 1;
            carry.extend_from_slice(&buf[cut..filled]);
            filled = cut;
            break Ok(Some(0));
        }
        // No newline in the chunk: `buf` holds the start of one line.
        if filled >= LONG_LINE_HEAD {
            let dropped = filled - LONG_LINE_HEAD;
            filled = LONG_LINE_HEAD;
            break skip_stream_line(reader, carry, eof, chunk_size).map(|skipped| Some(dropped + skipped));
        }
        // A line longer than the chunk: read on until it ends.
        scanned = filled;
        target = filled + chunk_size.max(1);
    };
    buf.truncate(filled);
    result
}

/// Reads and drops the rest of a line, up to and including its newline,
/// using `carry` (empty) as the buffer; what follows the newline stays in
/// `carry`. Returns the number of bytes dropped.
fn skip_stream_line(
    reader: &mut dyn Read,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    chunk_size: usize,
) -> io::Result<usize> {
    let mut skipped = 0;
    carry.resize(chunk_size.max(1), 0);
    while !*eof {
        match reader.read(carry) {
            Ok(0) => *eof = true,
            Ok(n) => {
                if let Some(i) = memchr::memchr(b'\n', &carry[..n]) {
                    carry.copy_within(i + 1..n, 0);
                    carry.truncate(n - i - 1);
                    return Ok(skipped + i + 1);
                }
                skipped += n;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                carry.clear();
                return Err(e);
            }
        }
    }
    carry.clear();
    Ok(skipped)
}

// ---------------------------------------------------------------------------
// Progress and results
// ---------------------------------------------------------------------------

/// Counters a progress display can read while a run goes on (from another
/// thread). Updated once per chunk written, so reading them costs the run
/// nothing.
#[derive(Debug, Default)]
pub struct Progress {
    urls: AtomicU64,
    bytes: AtomicU64,
}

impl Progress {
    /// Zero URLs, zero bytes.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// URLs classified and written so far.
    pub fn urls(&self) -> u64 {
        self.urls.load(Ordering::Relaxed)
    }

    /// Input bytes consumed so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// The figures of a finished run. The CLI writes them as JSON (`--stats`)
/// and may add classifier-specific figures of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// URLs per verdict, indexed by [`Verdict::index`], after `unknown_as`.
    pub counts: [u64; 4],
    /// Bytes of input read (after decompression, blank lines included).
    pub input_bytes: u64,
    /// Wall time of the run, from the first read to the last write.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
}

impl Stats {
    /// URLs with `verdict`.
    pub fn count(&self, verdict: Verdict) -> u64 {
        self.counts[verdict.index()]
    }

    /// All URLs (non-blank lines).
    pub fn urls(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// URLs per second of wall time.
    pub fn urls_per_second(&self) -> f64 {
        per_second(self.urls(), self.elapsed)
    }

    /// Input bytes per second of wall time.
    pub fn bytes_per_second(&self) -> f64 {
        per_second(self.input_bytes, self.elapsed)
    }
}

fn per_second(amount: u64, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        amount as f64 / seconds
    } else {
        0.0
    }
}

/// What a successful run returns.
#[derive(Debug)]
pub struct Report<S> {
    /// Counts and speed.
    pub stats: Stats,
    /// Every classifier scratch the run used (one per chunk in flight at
    /// most), for classifiers that tally more than verdicts.
    pub scratches: Vec<S>,
}

// ---------------------------------------------------------------------------
// The pipeline
// ---------------------------------------------------------------------------

/// Where the finished chunks of a run go, in input order: the part of a
/// sink every kind of chunk shares (ripgrep's `Sink`). The pipeline cuts,
/// works and orders; the sink decides what is written and where.
///
/// The finished chunks go to [`ChunkSink::write`] one at a time in input
/// order, on the thread that called [`Pipeline::run`] (or
/// [`Pipeline::run_chunks_of`]), while later chunks are worked on. A
/// chunk of lines is a [`Sink`]'s; a chunk of another kind (a batch of
/// WARC records, say) is its [`ChunkReader`]'s.
pub trait ChunkSink {
    /// A chunk's output: buffers, reused from chunk to chunk (and, for
    /// lines, from run to run).
    type Chunk: Default + Send + 'static;

    /// Writes a finished chunk; chunks come in input order.
    fn write(&mut self, chunk: &Self::Chunk) -> Result<(), FilterError>;

    /// [`ChunkSink::write`] of a chunk whose buffers the sink may take
    /// (leaving empty ones, whose memory the next chunk may reuse), so as to
    /// write them without a copy: what the pipeline calls for chunks of
    /// lines. The default writes the chunk as it is.
    fn write_taking(&mut self, chunk: &mut Self::Chunk) -> Result<(), FilterError> {
        self.write(chunk)
    }

    /// After the last chunk of a successful run (flushes, say).
    fn finish(&mut self) -> Result<(), FilterError>;
}

/// Where the results of a run of URL lines go: a [`ChunkSink`] whose
/// chunks are filled, URL by URL, by its [`Format`].
///
/// Each URL's verdict (and reason, when the sink's [`Format`] wants them)
/// goes to the sink's format on the worker that classified it, into that
/// chunk's [`ChunkSink::Chunk`]; the finished chunks then go to
/// [`ChunkSink::write`] in input order. The TSV outputs of the command
/// line are one sink ([`crate::output::Outputs`]).
pub trait Sink: ChunkSink {
    /// What formats the chunks, on the workers: a small value each worker
    /// shares.
    type Format: Format<Chunk = Self::Chunk>;

    /// The format of a run with `config` ([`Config::explain`] says whether
    /// reasons are asked for).
    fn format(&self, config: &Config) -> Self::Format;
}

/// How the thread that runs [`Pipeline::run_chunks_of`] reads an input of
/// some kind other than URL lines into chunks, in input order: a batch of
/// WARC records, say, which workers then turn into output lines
/// ([`ChunkWorker`]) while the next chunks are read.
pub trait ChunkReader {
    /// A chunk: its input, and its output once a worker is done with it.
    /// Recycled from chunk to chunk, and the sink's chunk type.
    type Chunk: Default + Send + 'static;

    /// Empties `chunk` (it may hold a chunk already written) and reads the
    /// next chunk of the input into it; `false` at the end of the input.
    /// An error ends the run once the chunks read before it are written:
    /// a reader that finds damage after some good input returns the good
    /// part as a chunk and the error at the next call.
    fn read_next(&mut self, chunk: &mut Self::Chunk) -> Result<bool, FilterError>;
}

/// What the workers of [`Pipeline::run_chunks_of`] do with one chunk of a
/// [`ChunkReader`]'s kind: turn its input into its output.
pub trait ChunkWorker<C>: Sync {
    /// Works `chunk` on a worker thread. An error stops the run at once,
    /// and nothing of this chunk is written.
    fn work(&self, chunk: &mut C) -> Result<(), FilterError>;
}

/// How a [`Sink`] turns a chunk's verdicts into output, on the workers.
pub trait Format: Sync {
    /// The sink's per-chunk output.
    type Chunk;

    /// Whether the classifier's reasons are wanted (they cost a table
    /// lookup and a formatted string per URL).
    fn wants_reasons(&self) -> bool;

    /// Whether the chunks carry anything a line at a time (a list, the
    /// verdicts); `false` for a format that only counts, whose run the
    /// partitioned form ends by counting its verdicts instead of walking
    /// the lines again in input order (see its module).
    fn writes_lines(&self) -> bool {
        true
    }

    /// Before chunk number `seq` of the run (from 0, in input order) is
    /// worked on, on its worker: a format that lays a chunk's output out by
    /// where the chunks before it ended takes its number here. The default
    /// does nothing.
    fn begin(&self, chunk: &mut Self::Chunk, seq: u64) {
        let _ = (chunk, seq);
    }

    /// After a chunk's last URL was recorded, on its worker, before the
    /// chunk goes to the sink. The default does nothing.
    fn end(&self, chunk: &mut Self::Chunk) {
        let _ = chunk;
    }

    /// Before the first URL of a chunk of `input_len` bytes is recorded
    /// (as late as the job can: the windowed path classifies the chunk
    /// first): make room for its output.
    fn start(&self, chunk: &mut Self::Chunk, input_len: usize);

    /// One URL (the line without its line end) and its verdict (after
    /// [`Config::unknown_as`]), in input order; `reason` is empty unless
    /// reasons are wanted.
    fn record(&self, chunk: &mut Self::Chunk, url: &[u8], verdict: Verdict, reason: &[u8]);

    /// A line that is no URL ([`line::problem`]): `invalid` whatever its
    /// URL; `line` is as much of it as outputs hold ([`line::shown`]).
    fn record_bad_line(&self, chunk: &mut Self::Chunk, line: &[u8], problem: LineProblem);

    /// After the chunk was written: empty it for the next, giving back
    /// memory beyond `keep` bytes per buffer that a chunk of unusually long
    /// lines made it take.
    fn reset(&self, chunk: &mut Self::Chunk, keep: usize);
}

/// A worker pool and the configuration of runs on it. Make one and run any
/// number of inputs through it.
pub struct Pipeline {
    pool: rayon::ThreadPool,
    config: Config,
    /// Chunk buffers kept from one run to the next, so that a second run
    /// neither allocates nor page-faults its buffers in again (each a
    /// [`ChunkBuffers`] of some sink's chunk type).
    spare_buffers: Mutex<Vec<Box<dyn Any + Send>>>,
}

/// The per-chunk buffers, reused from chunk to chunk: the sink's output and
/// what the pipeline needs on the way.
#[derive(Default)]
struct ChunkBuffers<O> {
    output: O,
    reasons: Reasons,
    counts: [u64; 4],
    /// The URLs of the chunk and their verdicts (the memory only: emptied
    /// between chunks, see [`reuse`]).
    urls: Vec<&'static [u8]>,
    verdict_list: Vec<Verdict>,
    /// The chunk's input, when it was read from a stream.
    input: Vec<u8>,
    input_len: usize,
}

/// Everything one chunk in flight owns: its buffers and a classifier scratch.
struct Workspace<O, S> {
    buffers: ChunkBuffers<O>,
    scratch: S,
}

/// How a run formats its chunks, decided once per run: the sink's format
/// and the verdict unknown URLs are counted and written as.
struct Recorder<F> {
    format: F,
    unknown_as: Verdict,
}

/// `verdict` as a run with [`Config::unknown_as`] reports and counts it:
/// the one place that folds unknown URLs into another verdict.
#[inline(always)]
fn reported(verdict: Verdict, unknown_as: Verdict) -> Verdict {
    if verdict == Verdict::Unknown {
        unknown_as
    } else {
        verdict
    }
}

impl<F: Format> Recorder<F> {
    /// Counts a URL's verdict and hands it to the format.
    #[inline(always)]
    fn record(&self, buffers: &mut ChunkBuffers<F::Chunk>, url: &[u8], verdict: Verdict, reason: &[u8]) {
        let verdict = reported(verdict, self.unknown_as);
        buffers.counts[verdict.index()] += 1;
        self.format.record(&mut buffers.output, url, verdict, reason);
    }

    /// Counts a line that is no URL ([`line::problem`]) as `invalid` and
    /// hands it to the format.
    #[cold]
    fn record_bad_line(&self, buffers: &mut ChunkBuffers<F::Chunk>, url: &[u8], problem: LineProblem) {
        buffers.counts[Verdict::Invalid.index()] += 1;
        self.format.record_bad_line(&mut buffers.output, line::shown(url), problem);
    }
}

impl Pipeline {
    /// Starts the worker pool.
    pub fn new(config: Config) -> Result<Pipeline, FilterError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .thread_name(|i| format!("robotsieve-filter-{i}"))
            .build()
            .map_err(|e| FilterError::ThreadPool(e.to_string()))?;
        Ok(Pipeline { pool, config, spare_buffers: Mutex::new(Vec::new()) })
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The configuration runs use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Classifies every non-blank line of `input` and writes the results
    /// to `sink` in input order. On error, whatever was already written
    /// stays written: write to [`robotsieve_engine::PendingFile`]s and commit
    /// them only on success.
    pub fn run<C: Classifier, S: Sink>(
        &self,
        classifier: &C,
        input: &mut Input,
        sink: &mut S,
        progress: Option<&Progress>,
    ) -> Result<Report<C::Scratch>, FilterError> {
        if let Some(partitions) = self.partitions_for(input, &sink.format(&self.config)) {
            return partitioned::run(self, classifier, partitions, input, sink, progress);
        }
        self.run_chunks(&ClassifyLines(classifier), input, sink, progress)
    }

    /// How many partitions a run of `input` through `format` is split into
    /// ([`Grouping`]), or `None` for the windowed path.
    fn partitions_for<F: Format>(&self, input: &Input, format: &F) -> Option<usize> {
        let mapped_len = input.mapped_bytes().map(<[u8]>::len);
        match self.config.grouping {
            Grouping::Windowed => None,
            _ if format.wants_reasons() || mapped_len.is_none() => None,
            Grouping::Partitioned { partitions } => Some(partitions.clamp(1, partitioned::MAX_PARTITIONS)),
            Grouping::Auto { origins } => {
                let large = mapped_len? >= self.config.chunk_size.max(1).saturating_mul(PARTITION_MIN_CHUNKS);
                let scattered = || partitioned::is_scattered(input.mapped_bytes().unwrap_or_default());
                (large && origins >= PARTITION_MIN_ORIGINS && scattered())
                    .then(|| partitioned::partitions_for(origins, mapped_len.unwrap_or(usize::MAX)))
            }
        }
    }

    /// Runs every chunk of `input` through `job` on the workers and writes
    /// the chunks to `sink` in input order.
    fn run_chunks<J: ChunkJob<S::Format>, S: Sink>(
        &self,
        job: &J,
        input: &mut Input,
        sink: &mut S,
        progress: Option<&Progress>,
    ) -> Result<Report<J::Scratch>, FilterError> {
        let started = Instant::now();
        let recorder = Recorder { format: sink.format(&self.config), unknown_as: self.config.unknown_as };
        let recorder = &recorder;
        let chunk_size = self.config.chunk_size.max(1);
        let name = input.name.clone();
        let chunker = match &mut input.source {
            Source::Mapped(map) => Chunker::Mapped { map, at: 0, released: 0 },
            Source::Stream { reader, carry, eof } => Chunker::Stream { reader: reader.as_mut(), carry, eof },
        };
        // This sink's kind of buffers from earlier runs; the others stay for theirs.
        let (mut spare_buffers, others): (Vec<_>, Vec<_>) =
            std::mem::take(&mut *self.spare_buffers.lock().unwrap_or_else(|e| e.into_inner()))
                .into_iter()
                .partition(|b| b.is::<ChunkBuffers<S::Chunk>>());
        let spare_buffers: Vec<ChunkBuffers<S::Chunk>> =
            spare_buffers.drain(..).filter_map(|b| b.downcast().ok()).map(|b| *b).collect();
        let mut ends = LineEnds {
            chunker,
            name,
            chunk_size,
            sink,
            format: &recorder.format,
            progress,
            stats: Stats { threads: self.threads(), ..Stats::default() },
            spare_buffers,
        };
        let mut spare: Vec<Workspace<S::Chunk, J::Scratch>> = Vec::new();
        let outcome = self.run_ordered(&mut ends, &mut spare, |seq, (mapped_chunk, skipped), workspace| {
            let Workspace { buffers, scratch } = workspace;
            let input = std::mem::take(&mut buffers.input);
            let data = mapped_chunk.unwrap_or(&input);
            buffers.input_len = data.len() + skipped;
            recorder.format.begin(&mut buffers.output, seq);
            let worked = job.run(seq, data, recorder, buffers, scratch);
            if worked.is_ok() {
                recorder.format.end(&mut buffers.output);
            }
            buffers.input = input;
            worked
        });
        let LineEnds { mut stats, mut spare_buffers, sink, .. } = ends;
        let mut scratches = Vec::with_capacity(spare.len());
        for Workspace { buffers, scratch } in spare {
            spare_buffers.push(buffers);
            scratches.push(scratch);
        }
        let mut kept = others;
        kept.extend(spare_buffers.into_iter().map(|b| Box::new(b) as Box<dyn Any + Send>));
        *self.spare_buffers.lock().unwrap_or_else(|e| e.into_inner()) = kept;
        outcome?;
        sink.finish()?;
        stats.elapsed = started.elapsed();
        Ok(Report { stats, scratches })
    }

    /// Runs an input of another kind than URL lines (a WARC file's
    /// records, say) on the same ordered pipeline as [`Pipeline::run`]:
    /// `reader` cuts it into chunks on this thread, `worker` works each on
    /// the pool, and `sink` gets them in input order while later chunks
    /// are worked on. At most `threads × chunks_per_thread` chunks are in
    /// flight ([`Config`]; its other fields are for lines). A worker's
    /// error or panic ends the run at once; a reader's error once the
    /// chunks read before it are written. Returns the number of chunks
    /// written.
    pub fn run_chunks_of<R, W, S>(&self, reader: &mut R, worker: &W, sink: &mut S) -> Result<u64, FilterError>
    where
        R: ChunkReader,
        W: ChunkWorker<R::Chunk>,
        S: ChunkSink<Chunk = R::Chunk>,
    {
        let mut ends = ReaderEnds { reader, sink, written: 0 };
        let mut spare = Vec::new();
        self.run_ordered(&mut ends, &mut spare, |_, (), chunk| worker.work(chunk))?;
        ends.sink.finish()?;
        Ok(ends.written)
    }

    /// The ordered parallel loop every kind of chunk runs on. `ends.cut`
    /// fills a workspace with the next chunk on this thread, `work` runs it
    /// on the pool with the piece `cut` returned, and `ends.finish` gets
    /// the worked workspaces one at a time in the order they were cut. At
    /// most `threads × chunks_per_thread` chunks are in flight, so memory
    /// stays bounded whatever the input's size. A worker's error or panic
    /// ends the run at once; an input error once the chunks cut before it
    /// are finished, so that everything before the damage is written.
    /// Workspaces are recycled; those not in flight when the loop ends are
    /// left in `spare`.
    fn run_ordered<W, E>(
        &self,
        ends: &mut E,
        spare: &mut Vec<W>,
        work: impl Fn(u64, E::Piece, &mut W) -> Result<(), FilterError> + Sync,
    ) -> Result<(), FilterError>
    where
        W: Send,
        E: RunEnds<W>,
    {
        let window = (self.threads() * self.config.chunks_per_thread.max(1)).max(2);
        let work = &work;
        let (sender, receiver) = mpsc::channel::<(u64, std::thread::Result<(W, Result<(), FilterError>)>)>();
        self.pool.in_place_scope_fifo(|scope| {
            // Chunks are numbered in input order; `written` is the next to finish.
            let mut spawned: u64 = 0;
            let mut written: u64 = 0;
            let mut done: VecDeque<Option<W>> = VecDeque::new();
            let mut input_ended = false;
            let mut input_error = None;
            loop {
                while !input_ended && spawned - written < window as u64 {
                    let mut workspace = spare.pop().unwrap_or_else(|| ends.workspace());
                    let piece = match ends.cut(&mut workspace) {
                        Ok(Some(piece)) => piece,
                        outcome => {
                            spare.push(workspace);
                            input_ended = true;
                            input_error = outcome.err();
                            break;
                        }
                    };
                    let seq = spawned;
                    spawned += 1;
                    let sender = sender.clone();
                    scope.spawn_fifo(move |_| {
                        let result = catch_unwind(AssertUnwindSafe(move || {
                            let worked = work(seq, piece, &mut workspace);
                            (workspace, worked)
                        }));
                        // The receiver is gone only when the run already failed.
                        let _ = sender.send((seq, result));
                    });
                }
                if written == spawned {
                    return input_error.map_or(Ok(()), Err);
                }
                let (seq, result) = receiver.recv().expect("a sender lives while chunks are in flight");
                let (workspace, worked) = result
                    .map_err(|panic| FilterError::ClassifierPanicked { message: panic_message(panic.as_ref()) })?;
                if let Err(error) = worked {
                    spare.push(workspace);
                    return Err(error);
                }
                let slot = (seq - written) as usize;
                if done.len() <= slot {
                    done.resize_with(slot + 1, || None);
                }
                done[slot] = Some(workspace);
                while let Some(Some(_)) = done.front() {
                    let mut workspace = done.pop_front().flatten().expect("checked above");
                    let finished = ends.finish(&mut workspace);
                    spare.push(workspace);
                    finished?;
                    written += 1;
                }
            }
        })
    }
}

/// The two ends of an ordered run, on the thread that runs it
/// ([`Pipeline::run_ordered`]): where chunks are cut, in input order, and
/// where the worked chunks are finished, in the same order.
trait RunEnds<W> {
    /// What a chunk's worker gets besides its workspace (a slice of a
    /// mapped input, say).
    type Piece: Send;

    /// A new workspace, when none is spare.
    fn workspace(&mut self) -> W;

    /// Cuts the next chunk into `workspace`; `None` at the end of the input.
    fn cut(&mut self, workspace: &mut W) -> Result<Option<Self::Piece>, FilterError>;

    /// Finishes a worked chunk (writes it to the sink), in input order.
    fn finish(&mut self, workspace: &mut W) -> Result<(), FilterError>;
}

/// The ends of a run of URL lines: the chunker, and the sink with the
/// run's figures.
struct LineEnds<'a, 'r, S: Sink> {
    chunker: Chunker<'a>,
    /// The input's name, for errors.
    name: String,
    chunk_size: usize,
    sink: &'r mut S,
    format: &'r S::Format,
    progress: Option<&'r Progress>,
    stats: Stats,
    /// Buffers of earlier runs, for new workspaces.
    spare_buffers: Vec<ChunkBuffers<S::Chunk>>,
}

impl<'a, S: Sink, X: Default> RunEnds<Workspace<S::Chunk, X>> for LineEnds<'a, '_, S> {
    /// The chunk's bytes when they are a slice of a mapped input (else they
    /// are in the workspace's buffer), and how many bytes after them were
    /// skipped.
    type Piece = (Option<&'a [u8]>, usize);

    fn workspace(&mut self) -> Workspace<S::Chunk, X> {
        Workspace { buffers: self.spare_buffers.pop().unwrap_or_default(), scratch: X::default() }
    }

    fn cut(&mut self, workspace: &mut Workspace<S::Chunk, X>) -> Result<Option<Self::Piece>, FilterError> {
        let chunk = self
            .chunker
            .next(&mut workspace.buffers.input, self.chunk_size)
            .map_err(|source| FilterError::Input { name: self.name.clone(), source })?;
        Ok(chunk.map(|chunk| match chunk {
            Chunk::Mapped(data, skipped) => (Some(data), skipped),
            Chunk::Buffered(skipped) => (None, skipped),
        }))
    }

    fn finish(&mut self, workspace: &mut Workspace<S::Chunk, X>) -> Result<(), FilterError> {
        let buffers = &mut workspace.buffers;
        self.sink.write_taking(&mut buffers.output)?;
        let urls: u64 = buffers.counts.iter().sum();
        for (total, count) in self.stats.counts.iter_mut().zip(&buffers.counts) {
            *total += count;
        }
        self.stats.input_bytes += buffers.input_len as u64;
        if let Some(progress) = self.progress {
            progress.urls.fetch_add(urls, Ordering::Relaxed);
            progress.bytes.fetch_add(buffers.input_len as u64, Ordering::Relaxed);
        }
        buffers.reset(self.chunk_size, self.format);
        self.chunker.release_before(self.stats.input_bytes as usize);
        Ok(())
    }
}

/// The ends of a run of another kind of chunk ([`Pipeline::run_chunks_of`]).
struct ReaderEnds<'r, R, S> {
    reader: &'r mut R,
    sink: &'r mut S,
    /// Chunks written so far.
    written: u64,
}

impl<R: ChunkReader, S: ChunkSink<Chunk = R::Chunk>> RunEnds<R::Chunk> for ReaderEnds<'_, R, S> {
    /// The chunk holds its input.
    type Piece = ();

    fn workspace(&mut self) -> R::Chunk {
        R::Chunk::default()
    }

    fn cut(&mut self, chunk: &mut R::Chunk) -> Result<Option<()>, FilterError> {
        Ok(self.reader.read_next(chunk)?.then_some(()))
    }

    fn finish(&mut self, chunk: &mut R::Chunk) -> Result<(), FilterError> {
        self.sink.write(chunk)?;
        self.written += 1;
        Ok(())
    }
}

impl<O> ChunkBuffers<O> {
    /// Empties the buffers for the next chunk, giving back memory a chunk of
    /// unusually long lines made them take.
    fn reset<F: Format<Chunk = O>>(&mut self, chunk_size: usize, format: &F) {
        let keep = chunk_size.saturating_mul(2).saturating_add(64);
        self.reasons.clear();
        for buf in [&mut self.input, &mut self.reasons.text] {
            buf.clear();
            buf.shrink_to(keep);
        }
        format.reset(&mut self.output, keep);
        self.counts = [0; 4];
        self.input_len = 0;
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_string()
    }
}

/// What the workers do with one chunk of lines: classify them, or (in the
/// passes of the partitioned form) split them or replay their verdicts.
/// Chunks are numbered from 0 in input order, and the same input cut with
/// the same chunk size gives the same chunks.
trait ChunkJob<F: Format>: Sync {
    /// Per-chunk-in-flight state, handed back in [`Report::scratches`].
    type Scratch: Default + Send;

    /// Formats the lines of chunk `seq` (`data`) into `buffers`. An error
    /// (the classifier's, or the partitioned form's temporary files') ends
    /// the run.
    fn run(
        &self,
        seq: u64,
        data: &[u8],
        recorder: &Recorder<F>,
        buffers: &mut ChunkBuffers<F::Chunk>,
        scratch: &mut Self::Scratch,
    ) -> Result<(), FilterError>;
}

/// The job of the windowed path: each chunk classified by a [`Classifier`].
struct ClassifyLines<'c, C>(&'c C);

impl<C: Classifier, F: Format> ChunkJob<F> for ClassifyLines<'_, C> {
    type Scratch = C::Scratch;

    fn run(
        &self,
        _seq: u64,
        data: &[u8],
        recorder: &Recorder<F>,
        buffers: &mut ChunkBuffers<F::Chunk>,
        scratch: &mut C::Scratch,
    ) -> Result<(), FilterError> {
        classify_chunk(self.0, data, recorder, buffers, scratch).map_err(FilterError::classifier)
    }
}

/// Classifies every non-blank line of `data` into `buffers`, then hands the
/// verdicts to the format in input order; stops at the classifier's first
/// error. Without reasons every URL of the chunk goes to the classifier at
/// once, so that it can group them by origin; with reasons, [`BATCH`] at a
/// time, so that the reasons of a batch stay small.
fn classify_chunk<C: Classifier, F: Format>(
    classifier: &C,
    data: &[u8],
    recorder: &Recorder<F>,
    buffers: &mut ChunkBuffers<F::Chunk>,
    scratch: &mut C::Scratch,
) -> Result<(), C::Error> {
    let wants_reasons = recorder.format.wants_reasons();
    // The line list of the last chunk, its memory reused under this chunk's lifetime.
    let mut urls: Vec<&[u8]> = reuse(std::mem::take(&mut buffers.urls));
    // Room for the lines of a chunk of URLs of 32 bytes or more at once: a
    // buffer's first chunk would otherwise grow it a dozen times (callgrind,
    // `_int_realloc` and its copies, 13 instructions a URL over 40,000 URLs).
    urls.reserve(data.len() / 32);
    // Lines that are no URL, rare: (how many URLs come before, the line, its problem).
    let mut bad: Vec<(usize, &[u8], LineProblem)> = Vec::new();
    split_lines(data, &mut urls, &mut bad);
    let mut verdicts = std::mem::take(&mut buffers.verdict_list);
    verdicts.clear();
    verdicts.resize(urls.len(), Verdict::Invalid);
    // Taken out of the buffers for the chunk, so that `record` can write to them meanwhile.
    let mut reasons = std::mem::take(&mut buffers.reasons);
    let batch = if wants_reasons { BATCH } else { urls.len().max(1) };
    // The first bad line not yet recorded: the URLs up to it are recorded
    // in a loop that checks nothing else per URL.
    let mut next_bad = 0;
    let mut outcome = Ok(());
    for (start, (batch_urls, batch_verdicts)) in
        (0..).step_by(batch).zip(urls.chunks(batch).zip(verdicts.chunks_mut(batch)))
    {
        reasons.clear();
        outcome = classifier.classify_batch(batch_urls, scratch, batch_verdicts, wants_reasons.then_some(&mut reasons));
        if outcome.is_err() {
            break;
        }
        if start == 0 {
            recorder.format.start(&mut buffers.output, data.len());
        }
        let mut from = 0;
        loop {
            // Bad lines that come before URL `from` of the batch.
            while let Some(&(_, line, problem)) = bad.get(next_bad).filter(|&&(before, _, _)| before == start + from) {
                recorder.record_bad_line(buffers, line, problem);
                next_bad += 1;
            }
            let upto = match bad.get(next_bad) {
                Some(&(before, _, _)) if before < start + batch_urls.len() => before - start,
                _ => batch_urls.len(),
            };
            let (urls, verdicts) = (&batch_urls[from..upto], &batch_verdicts[from..upto]);
            if wants_reasons {
                for (i, (url, &verdict)) in (from..).zip(urls.iter().zip(verdicts)) {
                    recorder.record(buffers, url, verdict, reasons.get(i));
                }
            } else {
                for (url, &verdict) in urls.iter().zip(verdicts) {
                    recorder.record(buffers, url, verdict, b"");
                }
            }
            if upto == batch_urls.len() {
                break;
            }
            from = upto;
        }
    }
    if urls.is_empty() {
        recorder.format.start(&mut buffers.output, data.len());
    }
    if outcome.is_ok() {
        for &(_, line, problem) in &bad[next_bad..] {
            recorder.record_bad_line(buffers, line, problem);
        }
    }
    buffers.reasons = reasons;
    buffers.verdict_list = verdicts;
    buffers.urls = reuse(urls);
    outcome
}

/// An empty vector of slices with the memory of `v` (emptied), for a
/// buffer of borrowed lines that outlives each chunk it borrows from: the
/// collect of an emptied vector into one of the same layout keeps its
/// allocation.
fn reuse<'a, 'b>(mut v: Vec<&'a [u8]>) -> Vec<&'b [u8]> {
    v.clear();
    v.into_iter().map(|_| -> &'b [u8] { unreachable!("the vector is empty") }).collect()
}

/// The non-blank lines of `data` (a chunk), in order, without their line
/// ends, appended to `urls`, and those that are no URL at all
/// ([`line::problem`]) to `bad`, each with the number of URLs before it:
/// what [`Lines`] gives, in one pass over the chunk's blocks instead of an
/// iterator step per line.
///
/// The newlines and odd bytes of 64 bytes at a time come as bit masks
/// ([`block_masks`]); a block with no odd byte (nearly every block of a
/// URL list) and no odd byte carried from the blocks before has every line
/// that ends in it plain, and walks its newline bits with nothing else to
/// check but the line's length.
fn split_lines<'a>(data: &'a [u8], urls: &mut Vec<&'a [u8]>, bad: &mut Vec<(usize, &'a [u8], LineProblem)>) {
    #[cfg(target_arch = "x86_64")]
    if robotsieve_core::arch::Avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { split_lines_avx2(data, urls, bad) };
    }
    split_lines_with(data, urls, bad, block_masks_64)
}

/// [`split_lines`] with the masks of [`block_masks_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn split_lines_avx2<'a>(data: &'a [u8], urls: &mut Vec<&'a [u8]>, bad: &mut Vec<(usize, &'a [u8], LineProblem)>) {
    split_lines_with(data, urls, bad, |block| block_masks_avx2(block))
}

/// [`split_lines`] with the masks of each whole block from `masks` (a form
/// of [`block_masks_64`]).
#[inline(always)]
fn split_lines_with<'a>(
    data: &'a [u8],
    urls: &mut Vec<&'a [u8]>,
    bad: &mut Vec<(usize, &'a [u8], LineProblem)>,
    masks: impl Fn(&[u8; 64]) -> (u64, u64),
) {
    let mut split = LineSplit { data, start: 0, odd_before: false, urls, bad };
    let mut blocks = data.chunks_exact(64);
    let mut base = 0;
    for block in &mut blocks {
        let (mut newlines, odd) = masks(block.try_into().expect("64 bytes"));
        if odd == 0 && !split.odd_before && newlines != 0 {
            // Plain lines: nothing to do but take them, unless one is blank
            // or too long, which the general step takes from there on. The
            // block's lines (at most 64) are written into room made once a
            // block, with no check of capacity per line (a push per line
            // spent about 8 instructions a URL on it, callgrind).
            split.urls.reserve(64);
            let room = &mut split.urls.spare_capacity_mut()[..64];
            let mut taken = 0;
            while newlines != 0 {
                let end = base + newlines.trailing_zeros() as usize;
                // Blank (0) or too long: one comparison for both.
                if end.wrapping_sub(split.start).wrapping_sub(1) >= MAX_LINE {
                    break;
                }
                // At most 64 lines end in a block: `taken` is below 64.
                room[taken % 64].write(&data[split.start..end]);
                taken += 1;
                split.start = end + 1;
                newlines &= newlines - 1;
            }
            let len = split.urls.len() + taken;
            // SAFETY: the `taken` places after the URLs were written above.
            unsafe { split.urls.set_len(len) };
        }
        if newlines != 0 || odd != 0 || split.odd_before {
            split.block(base, newlines, odd);
        }
        base += 64;
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let (newlines, odd) = block_masks_scalar(rest);
        split.block(base, newlines, odd);
    }
    if split.start < data.len() {
        push_line(&data[split.start..], split.odd_before, split.urls, split.bad);
    }
}

/// Where [`split_lines`] is in a chunk, and where its lines go.
struct LineSplit<'a, 'v> {
    data: &'a [u8],
    /// Where the current line starts.
    start: usize,
    /// Whether the blocks before the current one hold an odd byte of the current line.
    odd_before: bool,
    urls: &'v mut Vec<&'a [u8]>,
    bad: &'v mut Vec<(usize, &'a [u8], LineProblem)>,
}

impl LineSplit<'_, '_> {
    /// The lines that end at the `newlines` of the block at `base`, whose
    /// odd bytes not yet in a line taken are `odd`, each checked in full:
    /// the step for blocks with an odd byte, blank lines or long ones (and
    /// the chunk's last bytes), out of the loop over plain blocks.
    #[inline(never)]
    fn block(&mut self, base: usize, mut newlines: u64, mut odd: u64) {
        while newlines != 0 {
            let bit = newlines.trailing_zeros() as usize;
            newlines &= newlines - 1;
            // The bytes of this block up to the newline.
            let line_bits = u64::MAX >> (63 - bit);
            let line_is_odd = self.odd_before || odd & line_bits != 0;
            odd &= !line_bits;
            self.odd_before = false;
            push_line(&self.data[self.start..base + bit], line_is_odd, self.urls, self.bad);
            self.start = base + bit + 1;
        }
        self.odd_before |= odd != 0;
    }
}

/// [`split_lines`]' step for one line (`odd`: whether it holds an odd
/// byte): skipped when empty, else a URL, or checked first when odd or
/// longer than [`MAX_LINE`].
#[inline(always)]
fn push_line<'a>(line: &'a [u8], odd: bool, urls: &mut Vec<&'a [u8]>, bad: &mut Vec<(usize, &'a [u8], LineProblem)>) {
    if line.is_empty() {
        return;
    }
    if odd || line.len() > MAX_LINE {
        push_checked_line(line, urls, bad);
        return;
    }
    urls.push(line);
}

/// [`push_line`] for a line with an odd byte or longer than [`MAX_LINE`]:
/// [`checked_line`]'s reading, appended where it belongs.
#[cold]
#[inline(never)]
fn push_checked_line<'a>(line: &'a [u8], urls: &mut Vec<&'a [u8]>, bad: &mut Vec<(usize, &'a [u8], LineProblem)>) {
    match checked_line(line) {
        Some(Line::Url(url)) => urls.push(url),
        Some(Line::Bad(line, problem)) => bad.push((urls.len(), line, problem)),
        None => {}
    }
}

/// A line with an odd byte or longer than [`MAX_LINE`], as both splitters
/// ([`Lines`], [`split_lines`]) read it: a final CR dropped (a CR is an odd
/// byte: only an odd line can end in one), `None` if nothing is left, else
/// checked for a [`LineProblem`].
#[inline]
fn checked_line(line: &[u8]) -> Option<Line<'_>> {
    let line = match line {
        [line @ .., b'\r'] => line,
        line => line,
    };
    if line.is_empty() {
        return None;
    }
    Some(match line::problem(line) {
        Some(problem) => Line::Bad(line, problem),
        None => Line::Url(line),
    })
}

/// A non-blank line of a chunk, without its line end: a URL to classify,
/// or a line that is no URL at all ([`line::problem`]).
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    Url(&'a [u8]),
    Bad(&'a [u8], LineProblem),
}

/// The non-blank lines of a chunk, in order; a final line without a newline
/// ends at the end of the chunk. Only lines with an odd byte, or longer than
/// [`MAX_LINE`], are checked for a [`LineProblem`]. The iterator form, a
/// step per line (the partitioned form's passes read it; the windowed
/// path's [`split_lines`] is tested against it).
struct Lines<'a> {
    data: &'a [u8],
    newlines: Newlines<'a>,
    start: usize,
}

impl<'a> Lines<'a> {
    fn new(data: &'a [u8]) -> Lines<'a> {
        Lines { data, newlines: Newlines::new(data), start: 0 }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    // Always: once per URL, and a call here cost 3% of a run (callgrind).
    #[inline(always)]
    fn next(&mut self) -> Option<Line<'a>> {
        while self.start < self.data.len() {
            let (end, odd) = match self.newlines.next() {
                Some(line) => line,
                None => (self.data.len(), self.newlines.rest_is_odd()),
            };
            let url = &self.data[self.start..end];
            self.start = end + 1;
            if url.is_empty() {
                continue;
            }
            if odd || url.len() > MAX_LINE {
                match checked_line(url) {
                    Some(line) => return Some(line),
                    None => continue,
                }
            }
            return Some(Line::Url(url));
        }
        None
    }
}

/// The positions of the newlines in a chunk, in order, each with whether
/// the line it ends holds an odd byte: a control byte (CR and tab included)
/// or a byte above 0x7F, which [`line::problem`] must then look at.
///
/// URLs are short (tens of bytes), so a search call per line spends most of
/// its time starting up. This finds the newlines and the odd bytes of 64 bytes at a
/// time as bit masks and walks the newline bits, a few instructions per line.
struct Newlines<'a> {
    data: &'a [u8],
    /// Where the block of `mask` starts.
    block: usize,
    /// The newlines of the current block not yet returned, bit `i` for byte `block + i`.
    mask: u64,
    /// The odd bytes of the current block after the last newline returned.
    odd: u64,
    /// Whether an earlier block held an odd byte after the last newline returned.
    odd_before: bool,
}

impl<'a> Newlines<'a> {
    fn new(data: &'a [u8]) -> Newlines<'a> {
        let (mask, odd) = block_masks(data);
        Newlines { data, block: 0, mask, odd, odd_before: false }
    }

    /// Once [`Iterator::next`] returned `None`: whether the bytes after the
    /// last newline hold an odd byte.
    fn rest_is_odd(&self) -> bool {
        self.odd_before || self.odd != 0
    }
}

impl Iterator for Newlines<'_> {
    /// The newline's position, and whether its line holds an odd byte.
    type Item = (usize, bool);

    #[inline]
    fn next(&mut self) -> Option<(usize, bool)> {
        while self.mask == 0 {
            self.odd_before |= self.odd != 0;
            self.odd = 0;
            self.block += 64;
            if self.block >= self.data.len() {
                return None;
            }
            (self.mask, self.odd) = block_masks(&self.data[self.block..]);
        }
        let bit = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        // The bytes of this block up to the newline.
        let line_bits = u64::MAX >> (63 - bit);
        let odd = self.odd_before || self.odd & line_bits != 0;
        self.odd &= !line_bits;
        self.odd_before = false;
        Some((self.block + bit, odd))
    }
}

/// For the first 64 bytes: bit `i` set where `bytes[i]` is a newline, and
/// where it is odd (below 0x20 but no newline, or above 0x7F).
#[inline]
fn block_masks(bytes: &[u8]) -> (u64, u64) {
    match bytes.first_chunk::<64>() {
        Some(block) => block_masks_64(block),
        None => block_masks_scalar(bytes),
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn block_masks_64(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 target; the four unaligned 16-byte
    // loads read exactly the 64 bytes of `block`.
    unsafe {
        let newline = _mm_set1_epi8(b'\n' as i8);
        let space = _mm_set1_epi8(0x20);
        let at = |i: usize| {
            let lanes = _mm_loadu_si128(block.as_ptr().add(16 * i).cast::<__m128i>());
            // A signed comparison: bytes above 0x7F are negative, so below 0x20 too.
            let newlines = u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(lanes, newline)) as u16);
            let odd = u64::from(_mm_movemask_epi8(_mm_cmplt_epi8(lanes, space)) as u16);
            (newlines, odd)
        };
        let ((n0, o0), (n1, o1), (n2, o2), (n3, o3)) = (at(0), at(1), at(2), at(3));
        let newlines = n0 | n1 << 16 | n2 << 32 | n3 << 48;
        (newlines, (o0 | o1 << 16 | o2 << 32 | o3 << 48) & !newlines)
    }
}

/// [`block_masks_64`] with AVX2: two 32-byte blocks instead of four of 16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn block_masks_avx2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: the two unaligned 32-byte loads read exactly the 64 bytes of `block`.
    unsafe {
        let newline = _mm256_set1_epi8(b'\n' as i8);
        let space = _mm256_set1_epi8(0x20);
        let at = |i: usize| {
            let lanes = _mm256_loadu_si256(block.as_ptr().add(32 * i).cast::<__m256i>());
            // A signed comparison: bytes above 0x7F are negative, so below 0x20 too.
            let newlines = u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lanes, newline)) as u32);
            let odd = u64::from(_mm256_movemask_epi8(_mm256_cmpgt_epi8(space, lanes)) as u32);
            (newlines, odd)
        };
        let ((n0, o0), (n1, o1)) = (at(0), at(1));
        let newlines = n0 | n1 << 32;
        (newlines, (o0 | o1 << 32) & !newlines)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn block_masks_64(block: &[u8; 64]) -> (u64, u64) {
    block_masks_scalar(block)
}

fn block_masks_scalar(bytes: &[u8]) -> (u64, u64) {
    bytes.iter().take(64).enumerate().fold((0, 0), |(newlines, odd), (i, &b)| {
        (newlines | u64::from(b == b'\n') << i, odd | u64::from(b != b'\n' && !(0x20..0x80).contains(&b)) << i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_are_found_wherever_they_are() {
        // Every length up to three blocks, with newlines at a varying stride,
        // against a plain search.
        for len in 0..200 {
            for stride in 1..70 {
                let data: Vec<u8> = (0..len).map(|i| if i % stride == stride - 1 { b'\n' } else { b'x' }).collect();
                let expected: Vec<usize> = (0..len).filter(|&i| data[i] == b'\n').collect();
                let found: Vec<usize> = Newlines::new(&data).map(|(end, _)| end).collect();
                assert_eq!(found, expected, "len {len}, stride {stride}");
            }
        }
        let all = [b'\n'; 130];
        assert_eq!(Newlines::new(&all).count(), 130);
        assert_eq!(block_masks_64(&[b'\n'; 64]), (u64::MAX, 0));
    }

    #[test]
    fn block_masks_are_the_bytewise_ones_in_every_form() {
        // Every byte at every place of a block, beside newlines and plain bytes.
        for b in 0..=255u8 {
            for at in 0..64 {
                let mut block = [b'a'; 64];
                block[(at + 1) % 64] = b'\n';
                block[at] = b;
                let bytewise = block_masks_scalar(&block);
                assert_eq!(block_masks_64(&block), bytewise, "{b:#x} at {at}");
                #[cfg(target_arch = "x86_64")]
                if robotsieve_core::arch::Avx2::available() {
                    // SAFETY: the CPU has AVX2.
                    assert_eq!(unsafe { block_masks_avx2(&block) }, bytewise, "{b:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn reasons_keep_each_url_apart() {
        let mut reasons = Reasons::default();
        reasons.start_next().extend_from_slice(b"first");
        reasons.start_next();
        reasons.start_next().extend_from_slice(b"third");
        assert_eq!(
            [reasons.get(0), reasons.get(1), reasons.get(2), reasons.get(3)],
            [&b"first"[..], b"", b"third", b""]
        );
        reasons.clear();
        assert_eq!(reasons.get(0), b"");
    }

    /// Every line of `data` as [`split_lines`] gives them, in the form of [`Lines`].
    fn split(data: &[u8]) -> Vec<Line<'_>> {
        let (mut urls, mut bad) = (Vec::new(), Vec::new());
        split_lines(data, &mut urls, &mut bad);
        let mut lines: Vec<Line<'_>> = Vec::new();
        let mut bad = bad.into_iter().peekable();
        for (i, url) in urls.into_iter().enumerate() {
            while let Some((_, line, problem)) = bad.next_if(|&(before, _, _)| before == i) {
                lines.push(Line::Bad(line, problem));
            }
            lines.push(Line::Url(url));
        }
        lines.extend(bad.map(|(_, line, problem)| Line::Bad(line, problem)));
        lines
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]

        /// The lines of a chunk, split a block at a time, are those of the
        /// line iterator: blank lines, CRs, odd bytes of every kind, lines
        /// across blocks, a final line without a newline.
        #[test]
        fn split_lines_are_the_iterators_lines(
            data in proptest::collection::vec(
                proptest::prop_oneof![
                    12 => proptest::sample::select(b"abc/:.%".to_vec()),
                    3 => proptest::sample::select(b"\n".to_vec()),
                    1 => proptest::sample::select(b"\r\t\0 \x7f\x80\xc3\xa9\xff".to_vec()),
                ],
                0..400,
            ),
        ) {
            proptest::prop_assert_eq!(split(&data), Lines::new(&data).collect::<Vec<_>>());
            // The SSE2 masks too, where `split_lines` chose AVX2.
            let (mut urls, mut bad) = (Vec::new(), Vec::new());
            split_lines(&data, &mut urls, &mut bad);
            let (mut urls_sse2, mut bad_sse2) = (Vec::new(), Vec::new());
            split_lines_with(&data, &mut urls_sse2, &mut bad_sse2, block_masks_64);
            proptest::prop_assert_eq!((urls, bad), (urls_sse2, bad_sse2));
        }
    }

    #[test]
    fn split_lines_check_long_lines() {
        let long = [b"http://a.example/".as_slice(), &[b'x'; MAX_LINE]].concat();
        for data in [
            [b"a\n".as_slice(), &long, b"\nb\r\n\r\n"].concat(),
            [long.as_slice(), b"\r"].concat(),
            [b"\xff\n".as_slice(), &long[..MAX_LINE]].concat(),
        ] {
            let lines = split(&data);
            assert_eq!(lines, Lines::new(&data).collect::<Vec<_>>());
            assert!(lines.iter().any(|line| matches!(line, Line::Bad(..))), "{}", lines.len());
        }
    }

    #[test]
    fn newlines_are_found_among_all_bytes() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 256) as u8).collect();
        let expected: Vec<usize> = (0..data.len()).filter(|&i| data[i] == b'\n').collect();
        assert_eq!(Newlines::new(&data).map(|(end, _)| end).collect::<Vec<_>>(), expected);
    }

    #[test]
    fn odd_lines_are_flagged_wherever_their_odd_byte_is() {
        // Lines of varying length across block boundaries, each odd byte of
        // every kind at every place, against a plain check of each line.
        for odd_byte in [0u8, b'\r', b'\t', 0x1f, 0x80, 0xff] {
            for len in [1usize, 30, 63, 64, 65, 130] {
                for at in (0..len).step_by(7) {
                    let mut line = vec![b'a'; len];
                    line[at] = odd_byte;
                    let mut data = b"plain\n".repeat(at % 5);
                    data.extend_from_slice(&line);
                    data.extend_from_slice(b"\nplain\n");
                    data.extend_from_slice(&line);
                    let mut lines = Newlines::new(&data);
                    let mut start = 0;
                    let mut flags = Vec::new();
                    for (end, odd) in lines.by_ref() {
                        let expected = data[start..end].iter().any(|&b| !(0x20..0x80).contains(&b));
                        assert_eq!(odd, expected, "byte {odd_byte:#x} at {at} of {len}, line {start}..{end}");
                        flags.push(odd);
                        start = end + 1;
                    }
                    assert!(lines.rest_is_odd(), "the final line holds {odd_byte:#x}");
                    assert_eq!(flags.iter().filter(|&&odd| odd).count(), 1);
                }
            }
        }
        let mut plain_end = Newlines::new(b"x\0\nplain");
        assert_eq!(plain_end.next(), Some((2, true)));
        assert_eq!(plain_end.next(), None);
        assert!(!plain_end.rest_is_odd());
    }

    #[test]
    fn mapped_chunks_end_after_a_newline_or_at_the_end() {
        let data = b"ab\ncd\nef";
        assert_eq!(mapped_chunk_end(data, 0, 1), 3);
        assert_eq!(mapped_chunk_end(data, 0, 3), 3);
        assert_eq!(mapped_chunk_end(data, 0, 4), 6);
        assert_eq!(mapped_chunk_end(data, 3, 3), 6);
        assert_eq!(mapped_chunk_end(data, 6, 1), 8);
        assert_eq!(mapped_chunk_end(data, 0, 100), 8);
    }

    /// A reader that returns at most `step` bytes per call, to exercise the
    /// stream chunker's refills.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn stream_chunks_are_whole_lines_and_lose_nothing() {
        let data = b"a\nbbbbbbbbbb\ncc\n\nddd";
        for step in 1..6 {
            for chunk_size in 1..8 {
                let mut reader = Trickle { data, step };
                let (mut carry, mut eof, mut buf) = (Vec::new(), false, Vec::new());
                let mut joined = Vec::new();
                while next_stream_chunk(&mut reader, &mut carry, &mut eof, &mut buf, chunk_size).unwrap().is_some() {
                    let last = buf.len() - 1;
                    assert!(buf[last] == b'\n' || eof, "chunk {buf:?} cut inside a line");
                    joined.extend_from_slice(&buf);
                }
                assert_eq!(joined, data, "step {step}, chunk size {chunk_size}");
            }
        }
    }
}
