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
    next_stream_chunk, ChunkBuffers, ChunkJob, Classifier, FilterError, Format, Input, Line, Lines, Pipeline, Progress,
    Recorder, Report, Sink,
};
use crate::artifact::ArtifactError;
use crate::line::LineProblem;
use crate::url::origin_hash;
use crate::verdict::Verdict;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The most partitions a run uses (one open temporary file each).
pub(super) const MAX_PARTITIONS: usize = 256;

/// About how many origins one partition should hold: few enough that
/// their index entries and automata stay in a core's L2 and the shared L3
/// cache while the partition is classified.
const ORIGINS_PER_PARTITION: usize = 512;

/// Bytes of a partition handed to the classifier at once (whole lines):
/// the memory of pass 2 per worker, whatever the input's size.
const BLOCK: usize = 4 << 20;

/// Every how many chunks pass 3 gives back the pages of the verdict and
/// cursor files it read: each chunk reads a few bytes per partition, so
/// the pages it touches are mostly those of the chunks before.
const RELEASE_EVERY: u64 = 64;

/// How many partitions the partitioned form uses over an artifact of
/// `origins` origins: a power of two near `origins` / 512 (about 512 origins
/// a partition, whose tables stay in the cache), from 2 to 256 (one open
/// temporary file each).
pub fn partitions_for(origins: usize) -> usize {
    (origins / ORIGINS_PER_PARTITION).next_power_of_two().clamp(2, MAX_PARTITIONS)
}

/// The partition of `url`, one of `partitions`: by the hash of what follows
/// the first `://` up to the next `/`, `?` or `#` (the whole URL when it has
/// no `://`).
#[inline]
fn partition_of(url: &[u8], partitions: usize) -> usize {
    let authority = match memchr::memchr(b':', url) {
        Some(colon) if url[colon + 1..].starts_with(b"//") => {
            let rest = &url[colon + 3..];
            &rest[..memchr::memchr3(b'/', b'?', b'#', rest).unwrap_or(rest.len())]
        }
        _ => url,
    };
    // Multiply-shift of the top half: any count, and the top bits decide.
    ((origin_hash(authority) >> 32) * partitions as u64 >> 32) as usize
}

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
        temp: &temp,
    };
    pipeline.run_chunks(&SplitLines, input, &mut split, None)?;
    let totals = std::mem::take(&mut split.totals);
    drop(split);
    let mut starts = Vec::with_capacity(partitions + 1);
    starts.push(0u64);
    for total in &totals {
        starts.push(starts[starts.len() - 1] + total);
    }
    let urls = starts[partitions];
    verdicts.set_len(urls).map_err(|e| temp.failed(e))?;

    // Pass 2: classify.
    let scratches = classify_partitions(pipeline, classifier, &files, &verdicts, &starts, &temp)?;
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
    temp: &'a TempFiles<'a>,
}

impl Sink for Split<'_> {
    type Chunk = SplitChunk;
    type Format = SplitFormat;

    fn format(&self, _: &super::Config) -> SplitFormat {
        SplitFormat { partitions: self.files.len() }
    }

    fn write(&mut self, chunk: &SplitChunk) -> Result<(), FilterError> {
        for total in &self.totals {
            self.cursors.write_all(&total.to_le_bytes()).map_err(|e| self.temp.failed(e))?;
        }
        for ((mut file, part), (total, count)) in
            self.files.iter().zip(&chunk.parts).zip(self.totals.iter_mut().zip(&chunk.counts))
        {
            file.write_all(part).map_err(|e| self.temp.failed(e))?;
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

/// Classifies every partition (`files`), partition `p`'s verdicts going to
/// bytes `starts[p]..starts[p + 1]` of `verdicts`; returns the scratches
/// used (one per worker).
fn classify_partitions<C: Classifier>(
    pipeline: &Pipeline,
    classifier: &C,
    files: &[File],
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
                        block.classify(classifier, &mut scratch, &files[p], verdicts, starts[p], temp)?;
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

/// A pass-2 worker's buffers, reused from block to block.
#[derive(Default)]
struct PartitionBlock {
    bytes: Vec<u8>,
    carry: Vec<u8>,
    verdicts: Vec<Verdict>,
    verdict_bytes: Vec<u8>,
}

impl PartitionBlock {
    /// Classifies one partition, a block at a time, writing its verdicts
    /// to `verdicts` from byte `start`.
    fn classify<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        mut file: &File,
        verdicts: &File,
        mut start: u64,
        temp: &TempFiles<'_>,
    ) -> Result<(), FilterError> {
        file.rewind().map_err(|e| temp.failed(e))?;
        let mut eof = false;
        self.carry.clear();
        while next_stream_chunk(&mut file, &mut self.carry, &mut eof, &mut self.bytes, BLOCK)
            .map_err(|e| temp.failed(e))?
            .is_some()
        {
            let data = self.bytes.strip_suffix(b"\n").unwrap_or(&self.bytes);
            let urls: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
            self.verdicts.clear();
            self.verdicts.resize(urls.len(), Verdict::Invalid);
            classifier.classify_batch(&urls, scratch, &mut self.verdicts, None).map_err(FilterError::Artifact)?;
            self.verdict_bytes.clear();
            self.verdict_bytes.extend(self.verdicts.iter().map(|v| v.index() as u8));
            verdicts.write_all_at(&self.verdict_bytes, start).map_err(|e| temp.failed(e))?;
            start += self.verdict_bytes.len() as u64;
        }
        Ok(())
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
        assert_eq!(partitions_for(31_898), 64);
        assert_eq!(partitions_for(127_592), 256);
        assert_eq!(partitions_for(10_000_000), MAX_PARTITIONS);
    }
}
