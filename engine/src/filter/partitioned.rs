//! The partitioned form of a run ([`Grouping`]): three passes over a mapped
//! input, each URL's origin tables used while they are in the cache.
//!
//! 1. **Split.** The input is cut into the same chunks as the windowed path,
//!    and each chunk's URLs are sorted into partitions by the hash of their
//!    authority as written ([`partition_of`]); the partitions' URLs are
//!    appended, chunk after chunk, to one temporary file each (one URL a
//!    line), and the number each partition had received before each chunk
//!    to a cursor file. Lines that are no URL stay out: pass 3 sees them.
//! 2. **Classify.** The partitions are the unit of work: each worker takes
//!    the next partition, reads it in blocks of [`BLOCK`] bytes and hands
//!    each block to the classifier (which groups it by origin), and writes
//!    the verdicts, a byte each, into the partition's region of a verdict
//!    file. A partition holds the URLs of about [`ORIGINS_PER_PARTITION`]
//!    origins, whose tables stay in the cache for the whole partition.
//! 3. **Write.** The input is cut into chunks again and each chunk formatted
//!    on the workers from the verdict file: chunk `c`'s next URL of partition
//!    `p` has its verdict at `p`'s region start plus the cursor of `(c, p)`.
//!    The chunks go to the sink in input order, as on the windowed path, so
//!    outputs, counts and bad lines are the windowed path's byte for byte.
//!
//! Memory stays flat in the input size: the passes stream, the partitions
//! are read a block at a time, the mapped input, cursors and verdicts give
//! their pages back as they go ([`crate::mapped::release`]). The temporary
//! files are unnamed (`O_TMPFILE`, or removed right after creation): an
//! interrupted run leaves nothing behind. They take about the input's size
//! (each partition's file is emptied once classified) plus a byte per URL
//! and 8 bytes per chunk and partition.
//!
//! The partition of a URL only decides where it is classified, never how:
//! any function of the URL gives the same verdicts. The authority as
//! written (no case folding, no parsing) keeps the URLs of one origin
//! together in practice at the cost of a search and a hash.

use super::{
    reuse, ChunkBuffers, ChunkJob, ChunkSink, Classifier, FilterError, Format, Input, Line, Lines, Pipeline, Progress,
    Recorder, Report, Sink,
};
use crate::artifact::ArtifactError;
use crate::line::LineProblem;
use crate::url::origin_hash;
use crate::verdict::Verdict;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The most partitions a run uses (one open temporary file each).
pub(super) const MAX_PARTITIONS: usize = 256;

/// About how many origins one partition should hold: few enough that
/// their index entries and automata stay in a core's L2 cache while the
/// partition is classified. Measured on the synthetic frontier x20 over the
/// whole-corpus artifact (31,898 origins), CPU seconds of pass 2 at 16, 64
/// and 256 partitions: 3.00, 1.77, 1.34 (pass 1 costs 0.43 to 0.76 s more
/// with more partitions).
const ORIGINS_PER_PARTITION: usize = 128;

/// Bytes of a partition handed to the classifier at once (whole lines):
/// the memory of pass 2 per worker, whatever the input's size.
const BLOCK: usize = 4 << 20;

/// Every how many chunks pass 3 gives back the pages of the verdict and
/// cursor files it read: each chunk reads a few bytes per partition, so
/// the pages it touches are mostly those of the chunks before.
const RELEASE_EVERY: u64 = 64;

/// How many partitions the partitioned form uses over an artifact of
/// `origins` origins: a power of two near `origins` / 128 (about 128 origins
/// a partition, whose tables stay in the cache), from 2 to 256 (one open
/// temporary file each).
pub fn partitions_for(origins: usize) -> usize {
    (origins / ORIGINS_PER_PARTITION).next_power_of_two().clamp(2, MAX_PARTITIONS)
}

/// How many places of an input [`is_scattered`] samples, and how many
/// lines at each: a window of the classifier's grouping.
const SAMPLES: usize = 8;
const SAMPLE_LINES: usize = 2048;

/// Whether the origins of a mapped input are scattered: whether, in
/// windows of [`SAMPLE_LINES`] lines at [`SAMPLES`] places, more than a
/// quarter of the URLs have an origin of their own. A list sorted or
/// clustered by host repeats each origin within a window, which the
/// windowed path then groups (runs of 4 URLs or more scan their group
/// once); partitioning it would only add its passes (measured: 1.91 CPU s
/// partitioned against 0.94 windowed on the sorted frontier x20).
pub(super) fn is_scattered(data: &[u8]) -> bool {
    let mut hashes = Vec::with_capacity(SAMPLE_LINES);
    let (mut urls, mut distinct) = (0, 0);
    for sample in 0..SAMPLES {
        let from = data.len() / SAMPLES * sample;
        // From the line after `from`, at most a window's worth of bytes.
        let start = memchr::memchr(b'\n', &data[from..]).map_or(data.len(), |i| from + i + 1);
        let window = &data[start..data.len().min(start + SAMPLE_LINES * 256)];
        hashes.clear();
        hashes.extend(
            Lines::new(window)
                .filter_map(|line| match line {
                    Line::Url(url) => Some(authority_hash(url)),
                    Line::Bad(..) => None,
                })
                .take(SAMPLE_LINES),
        );
        urls += hashes.len();
        hashes.sort_unstable();
        hashes.dedup();
        distinct += hashes.len();
    }
    distinct * 4 > urls
}

/// The partition of `url`, one of `partitions`: by [`authority_hash`].
#[inline]
fn partition_of(url: &[u8], partitions: usize) -> usize {
    // Multiply-shift of the top half: any count, and the top bits decide.
    (((authority_hash(url) >> 32) * partitions as u64) >> 32) as usize
}

/// The hash of what follows the first `://` of `url` up to the next `/`,
/// `?` or `#` (of the whole URL when it has no `://`): the origin as
/// written, without parsing or case folding.
#[inline]
fn authority_hash(url: &[u8]) -> u64 {
    let authority = match memchr::memchr(b':', url) {
        Some(colon) if url[colon + 1..].starts_with(b"//") => {
            let rest = &url[colon + 3..];
            &rest[..memchr::memchr3(b'/', b'?', b'#', rest).unwrap_or(rest.len())]
        }
        _ => url,
    };
    origin_hash(authority)
}

/// How many buckets a block's URLs are sorted into before they are
/// classified ([`PartitionBlock::classify`]): by the low bits of their
/// [`authority_hash`], so that the URLs of an origin come in one run. A
/// partition holds a few hundred origins: two rarely share a bucket, and
/// those that do only interleave their runs.
const BUCKETS: usize = 1 << 12;

/// Runs `input` through `classifier` in `partitions` partitions (see the
/// module), writing to `sink` in input order.
pub(super) fn run<C: Classifier, S: Sink>(
    pipeline: &Pipeline,
    classifier: &C,
    partitions: usize,
    input: &mut Input,
    sink: &mut S,
    progress: Option<&Progress>,
) -> Result<Report<C::Scratch>, FilterError> {
    let started = Instant::now();
    let dir = pipeline.config.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let temp = TempFiles { dir: &dir };
    let files = (0..partitions).map(|_| temp.create()).collect::<Result<Vec<File>, FilterError>>()?;
    let cursors = temp.create()?;
    let verdicts = temp.create()?;

    // Pass 1: split.
    let mut split = Split {
        files: &files,
        cursors: BufWriter::with_capacity(1 << 16, &cursors),
        totals: vec![0; partitions],
        sizes: vec![0; partitions],
        temp: &temp,
    };
    pipeline.run_chunks(&SplitLines, input, &mut split, None)?;
    let totals = std::mem::take(&mut split.totals);
    let sizes = std::mem::take(&mut split.sizes);
    drop(split);
    let mut starts = Vec::with_capacity(partitions + 1);
    starts.push(0u64);
    for total in &totals {
        starts.push(starts[starts.len() - 1] + total);
    }
    let urls = starts[partitions];
    verdicts.set_len(urls).map_err(|e| temp.failed(e))?;

    // Pass 2: classify.
    let scratches = classify_partitions(pipeline, classifier, &files, &sizes, &verdicts, &starts, &temp)?;
    drop(files);

    // Pass 3: write.
    let verdict_map = map(&verdicts).map_err(|e| temp.failed(e))?;
    let cursor_map = map(&cursors).map_err(|e| temp.failed(e))?;
    let replay = Replay { verdicts: &verdict_map, cursors: &cursor_map, starts: &starts[..partitions] };
    let report = pipeline.run_chunks(&replay, input, sink, progress)?;
    let mut stats = report.stats;
    stats.elapsed = started.elapsed();
    Ok(Report { stats, scratches })
}

/// Maps a temporary file read-only (an empty one as an empty map).
fn map(file: &File) -> io::Result<Mmap> {
    // SAFETY: the file is unnamed and only this run writes it, before the
    // map is made; nothing truncates it while mapped.
    unsafe { Mmap::map(file) }
}

/// Where the temporary files go, and what their errors say.
struct TempFiles<'a> {
    dir: &'a Path,
}

impl TempFiles<'_> {
    /// A new unnamed file in the directory.
    fn create(&self) -> Result<File, FilterError> {
        tempfile::tempfile_in(self.dir).map_err(|e| self.failed(e))
    }

    /// The error of a temporary file that could not be made, written or read.
    fn failed(&self, source: io::Error) -> FilterError {
        FilterError::Output { name: format!("a temporary file in {}", self.dir.display()), source }
    }
}

// ---------------------------------------------------------------------------
// Pass 1
// ---------------------------------------------------------------------------

/// The job of pass 1: every URL of a chunk to its partition's buffer.
struct SplitLines;

impl ChunkJob<SplitFormat> for SplitLines {
    type Scratch = ();

    fn run(
        &self,
        _seq: u64,
        data: &[u8],
        recorder: &Recorder<SplitFormat>,
        buffers: &mut ChunkBuffers<SplitChunk>,
        _: &mut (),
    ) -> Result<(), ArtifactError> {
        let format = &recorder.format;
        format.start(&mut buffers.output, data.len());
        for line in Lines::new(data) {
            if let Line::Url(url) = line {
                format.record(&mut buffers.output, url, Verdict::Allowed, b"");
            }
        }
        Ok(())
    }
}

/// One chunk's URLs by partition, a URL a line, and how many each got.
#[derive(Debug, Default)]
struct SplitChunk {
    parts: Vec<Vec<u8>>,
    counts: Vec<u64>,
}

/// Sorts a chunk's URLs into [`SplitChunk`]s.
#[derive(Clone, Copy, Debug)]
struct SplitFormat {
    partitions: usize,
}

impl Format for SplitFormat {
    type Chunk = SplitChunk;

    fn wants_reasons(&self) -> bool {
        false
    }

    fn start(&self, chunk: &mut SplitChunk, input_len: usize) {
        chunk.parts.resize_with(self.partitions, Vec::new);
        chunk.counts.resize(self.partitions, 0);
        for part in &mut chunk.parts {
            // Twice a partition's share: rarely grown, and never by much.
            part.reserve(input_len / self.partitions * 2);
        }
    }

    #[inline(always)]
    fn record(&self, chunk: &mut SplitChunk, url: &[u8], _: Verdict, _: &[u8]) {
        let p = partition_of(url, self.partitions);
        let part = &mut chunk.parts[p];
        part.extend_from_slice(url);
        part.push(b'\n');
        chunk.counts[p] += 1;
    }

    fn record_bad_line(&self, _: &mut SplitChunk, _: &[u8], _: LineProblem) {
        // Never called: pass 3 writes the lines that are no URL.
    }

    fn reset(&self, chunk: &mut SplitChunk, keep: usize) {
        for part in &mut chunk.parts {
            part.clear();
            part.shrink_to(keep / self.partitions.max(1) * 2);
        }
        chunk.counts.fill(0);
    }
}

/// The sink of pass 1: appends each chunk's partitions to their files and
/// the partitions' totals before the chunk to the cursor file.
struct Split<'a> {
    files: &'a [File],
    cursors: BufWriter<&'a File>,
    /// URLs per partition so far.
    totals: Vec<u64>,
    /// Bytes per partition file so far.
    sizes: Vec<u64>,
    temp: &'a TempFiles<'a>,
}

impl Sink for Split<'_> {
    type Format = SplitFormat;

    fn format(&self, _: &super::Config) -> SplitFormat {
        SplitFormat { partitions: self.files.len() }
    }
}

impl ChunkSink for Split<'_> {
    type Chunk = SplitChunk;

    fn write(&mut self, chunk: &SplitChunk) -> Result<(), FilterError> {
        for total in &self.totals {
            self.cursors.write_all(&total.to_le_bytes()).map_err(|e| self.temp.failed(e))?;
        }
        let totals = self.totals.iter_mut().zip(&chunk.counts);
        for (((mut file, part), size), (total, count)) in
            self.files.iter().zip(&chunk.parts).zip(self.sizes.iter_mut()).zip(totals)
        {
            file.write_all(part).map_err(|e| self.temp.failed(e))?;
            *size += part.len() as u64;
            *total += count;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        self.cursors.flush().map_err(|e| self.temp.failed(e))
    }
}

// ---------------------------------------------------------------------------
// Pass 2
// ---------------------------------------------------------------------------

/// Classifies every partition (`files`, of `sizes` bytes), partition `p`'s
/// verdicts going to bytes `starts[p]..starts[p + 1]` of `verdicts`;
/// returns the scratches used (one per worker).
fn classify_partitions<C: Classifier>(
    pipeline: &Pipeline,
    classifier: &C,
    files: &[File],
    sizes: &[u64],
    verdicts: &File,
    starts: &[u64],
    temp: &TempFiles<'_>,
) -> Result<Vec<C::Scratch>, FilterError> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let scratches = Mutex::new(Vec::new());
    let error: Mutex<Option<FilterError>> = Mutex::new(None);
    let fail = |e: FilterError| {
        failed.store(true, Ordering::Relaxed);
        let mut first = error.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(e);
    };
    pipeline.pool.scope(|scope| {
        for _ in 0..pipeline.threads().min(files.len()) {
            scope.spawn(|_| {
                let mut scratch = C::Scratch::default();
                let mut block = PartitionBlock::default();
                let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), FilterError> {
                    loop {
                        let p = next.fetch_add(1, Ordering::Relaxed);
                        if p >= files.len() || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let partition = (&files[p], sizes[p]);
                        block.classify(classifier, &mut scratch, partition, verdicts, starts[p], temp)?;
                        // Its bytes are not needed again: give the disk back now.
                        files[p].set_len(0).map_err(|e| temp.failed(e))?;
                    }
                }));
                match result {
                    Ok(Ok(())) => scratches.lock().unwrap_or_else(|e| e.into_inner()).push(scratch),
                    Ok(Err(e)) => fail(e),
                    Err(panic) => {
                        fail(FilterError::ClassifierPanicked { message: super::panic_message(panic.as_ref()) })
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(scratches.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// A pass-2 worker's buffers, reused from block to block (never emptied,
/// so that nothing is zeroed again: a block is read over the last).
#[derive(Default)]
struct PartitionBlock {
    bytes: Vec<u8>,
    /// The URLs of the block (the memory only, see [`reuse`]), and in
    /// bucket order.
    urls: Vec<&'static [u8]>,
    sorted: Vec<&'static [u8]>,
    /// Each URL's bucket, and the URLs' numbers in bucket order.
    buckets: Vec<u16>,
    order: Vec<u32>,
    verdicts: Vec<Verdict>,
    verdict_bytes: Vec<u8>,
}

impl PartitionBlock {
    /// Classifies one partition (`file`, `len` bytes of lines), a block of
    /// at most [`BLOCK`] bytes at a time, writing its verdicts to
    /// `verdicts` from byte `start`.
    fn classify<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        (file, len): (&File, u64),
        verdicts: &File,
        mut start: u64,
        temp: &TempFiles<'_>,
    ) -> Result<(), FilterError> {
        let mut offset = 0u64;
        while offset < len {
            let want = (len - offset).min(BLOCK as u64) as usize;
            if self.bytes.len() < want {
                self.bytes.resize(want, 0);
            }
            file.read_exact_at(&mut self.bytes[..want], offset).map_err(|e| temp.failed(e))?;
            // Whole lines: up to the block's last newline (every line of a
            // partition ends with one and is far shorter than a block).
            let cut = memchr::memrchr(b'\n', &self.bytes[..want]).map_or(want, |i| i + 1);
            offset += cut as u64;
            let written = self.classify_lines(classifier, scratch, cut)?;
            verdicts.write_all_at(written, start).map_err(|e| temp.failed(e))?;
            start += written.len() as u64;
        }
        Ok(())
    }

    /// Classifies the lines of `self.bytes[..end]`; their verdicts, a byte
    /// each in line order.
    fn classify_lines<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        end: usize,
    ) -> Result<&[u8], FilterError> {
        let data = &self.bytes[..end];
        let mut urls = reuse(std::mem::take(&mut self.urls));
        urls.extend(data.strip_suffix(b"\n").unwrap_or(data).split(|&b| b == b'\n'));
        // A counting sort by bucket: each origin's URLs side by side, in
        // input order, so that the classifier finds long runs.
        self.buckets.clear();
        self.buckets.extend(urls.iter().map(|url| (authority_hash(url) as usize % BUCKETS) as u16));
        let mut starts = [0u32; BUCKETS + 1];
        for &bucket in &self.buckets {
            starts[bucket as usize + 1] += 1;
        }
        for b in 0..BUCKETS {
            starts[b + 1] += starts[b];
        }
        self.order.resize(urls.len(), 0);
        for (i, &bucket) in self.buckets.iter().enumerate() {
            let at = &mut starts[bucket as usize];
            self.order[*at as usize] = i as u32;
            *at += 1;
        }
        let mut sorted = reuse(std::mem::take(&mut self.sorted));
        sorted.extend(self.order[..urls.len()].iter().map(|&i| urls[i as usize]));
        self.verdicts.resize(urls.len(), Verdict::Invalid);
        let verdicts = &mut self.verdicts[..urls.len()];
        let outcome = classifier.classify_batch(&sorted, scratch, verdicts, None);
        self.verdict_bytes.resize(urls.len(), 0);
        let verdict_bytes = &mut self.verdict_bytes[..urls.len()];
        for (&i, verdict) in self.order.iter().zip(verdicts.iter()) {
            verdict_bytes[i as usize] = verdict.index() as u8;
        }
        self.urls = reuse(urls);
        self.sorted = reuse(sorted);
        outcome.map_err(FilterError::Artifact)?;
        Ok(verdict_bytes)
    }
}

// ---------------------------------------------------------------------------
// Pass 3
// ---------------------------------------------------------------------------

/// The job of pass 3: a chunk's verdicts read back from the verdict file.
struct Replay<'a> {
    verdicts: &'a Mmap,
    /// Per chunk, per partition: the partition's URLs before the chunk (u64 LE).
    cursors: &'a Mmap,
    /// Where each partition's verdicts start.
    starts: &'a [u64],
}

impl<F: Format> ChunkJob<F> for Replay<'_> {
    /// Where each partition's next verdict is.
    type Scratch = Vec<u64>;

    fn run(
        &self,
        seq: u64,
        data: &[u8],
        recorder: &Recorder<F>,
        buffers: &mut ChunkBuffers<F::Chunk>,
        next: &mut Vec<u64>,
    ) -> Result<(), ArtifactError> {
        recorder.format.start(&mut buffers.output, data.len());
        let partitions = self.starts.len();
        let row = seq as usize * partitions * 8;
        next.clear();
        next.extend(
            self.cursors[row..row + partitions * 8]
                .chunks_exact(8)
                .zip(self.starts)
                .map(|(cursor, start)| start + u64::from_le_bytes(cursor.try_into().expect("chunks of 8"))),
        );
        for line in Lines::new(data) {
            match line {
                Line::Url(url) => {
                    let at = &mut next[partition_of(url, partitions)];
                    let verdict = Verdict::ALL[usize::from(self.verdicts[*at as usize])];
                    *at += 1;
                    recorder.record(buffers, url, verdict, b"");
                }
                Line::Bad(url, problem) => recorder.record_bad_line(buffers, url, problem),
            }
        }
        if seq % RELEASE_EVERY == RELEASE_EVERY - 1 {
            crate::mapped::release(self.verdicts, 0, self.verdicts.len());
            crate::mapped::release(self.cursors, 0, self.cursors.len());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_decided_by_the_authority_as_written() {
        for partitions in [1, 2, 3, 64, 256] {
            let of = |url: &[u8]| partition_of(url, partitions);
            assert_eq!(of(b"https://a.example/x"), of(b"https://a.example?y"));
            assert_eq!(of(b"https://a.example/x"), of(b"http://a.example#z"));
            assert_eq!(of(b"https://a.example/x"), of(b"ftp://a.example"));
            assert!((0..1000).all(|i| of(format!("https://h{i}.example/").as_bytes()) < partitions));
        }
        // Spread: 10,000 hosts over 64 partitions, none with twice its share.
        let mut counts = [0usize; 64];
        for i in 0..10_000 {
            counts[partition_of(format!("https://host{i}.example/p").as_bytes(), 64)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 10_000 / 64 / 2 && c < 10_000 / 64 * 2), "{counts:?}");
        // No `://`, a colon at the end: still some partition, no panic.
        for url in [&b"no-scheme"[..], b"x:", b"x:/", b"x://", b":"] {
            assert!(partition_of(url, 64) < 64);
        }
    }

    #[test]
    fn partition_counts_follow_the_artifacts_origins() {
        assert_eq!(partitions_for(0), 2);
        assert_eq!(partitions_for(4096), 32);
        assert_eq!(partitions_for(31_898), 256);
        assert_eq!(partitions_for(127_592), 256);
        assert_eq!(partitions_for(10_000_000), MAX_PARTITIONS);
    }
}
