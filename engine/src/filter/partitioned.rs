//! The partitioned form of a run ([`Grouping`]): three passes over a mapped
//! input, each URL's origin tables used while they are in the cache.
//!
//! 1. **Split.** The input is cut into the same chunks as the windowed path,
//!    and each chunk's URLs are sorted into partitions by the hash of their
//!    authority as written ([`partition_of_hash`]), each URL a record of a
//!    4-byte header (its length and bucket) and its bytes ([`HEADER`]). The
//!    sink appends each partition's records to the partition's block in
//!    memory (a write-combining buffer of [`block_size`] bytes); a full block
//!    goes to the end of the one temporary file and is linked into its
//!    partition's chain ([`Extent`]). Each URL's partition goes to an order
//!    file (2 bytes a URL), and the number each partition had received
//!    before each chunk to a cursor file. Lines that are no URL stay out:
//!    pass 3 sees them.
//! 2. **Classify.** The partitions are the unit of work: each worker takes
//!    the next partition, reads its blocks, up to [`BLOCK`] bytes at a time,
//!    hands them to the classifier (sorted by the bucket stored beside each
//!    URL when they are more than the classifier groups itself), and writes
//!    the verdicts, a byte each, into the partition's region of a verdict
//!    file. A partition holds the URLs of about [`ORIGINS_PER_PARTITION`]
//!    origins, whose tables stay in the cache for the whole partition.
//! 3. **Write.** The input is cut into chunks again and each chunk formatted
//!    on the workers from the verdict file: chunk `c`'s next URL of partition
//!    `p` (read from the order file, not hashed again) has its verdict at
//!    `p`'s region start plus the cursor of `(c, p)`. The chunks go to the
//!    sink in input order, as on the windowed path, so outputs, counts and
//!    bad lines are the windowed path's byte for byte.
//!
//! Memory stays flat in the input size: the passes stream, the partitions
//! are read a block at a time, the mapped input, cursors, order and
//! verdicts give their pages back as they go ([`crate::mapped::release`]);
//! pass 1 holds [`BLOCK_BUFFERS`] of blocks whatever the partition count.
//! The temporary files are unnamed (`O_TMPFILE`, or removed right after
//! creation): an interrupted run leaves nothing behind. They take about the
//! input's size plus 6 bytes per URL (the header's 3 beyond the line end,
//! the partition's 2, the verdict) and 8 bytes per chunk and partition.
//!
//! The partition of a URL only decides where it is classified, never how:
//! any function of the URL gives the same verdicts. The authority as
//! written (no case folding, no parsing) keeps the URLs of one origin
//! together in practice at the cost of a search and a hash, done once per
//! URL in pass 1.

use super::{
    reuse, ChunkBuffers, ChunkJob, ChunkSink, Classifier, FilterError, Format, Input, Line, Lines, Pipeline, Progress,
    Recorder, Report, Sink,
};
use crate::artifact::ArtifactError;
use crate::line::LineProblem;
use crate::url::{origin_hash, origin_hash_of_prefix};
use crate::verdict::Verdict;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, BufWriter, IoSlice, Write};
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The most partitions a run uses: each has a block of at least 4 KiB in
/// memory during pass 1 ([`block_size`]), and its number is a `u16`.
pub(super) const MAX_PARTITIONS: usize = 8192;
const _: () = assert!(MAX_PARTITIONS <= 1 << 16);

/// About how many origins one partition should hold: few enough that
/// their index entries and automata stay in a core's L2 cache while the
/// partition is classified. Measured on the synthetic frontier x20 over the
/// whole-corpus artifact (31,898 origins), 1 thread, CPU seconds of pass 2
/// at 256, 1,024, 2,048, 4,096 and 8,192 partitions: 0.94, 0.84, 0.73 to
/// 0.84, 0.75, 0.74 to 0.81 (load 11 to 15; pass 1 0.4 to 0.6 s whatever the
/// count): flat from about 16 origins a partition (2,048 here), the count
/// that keeps a 4x artifact's partitions as small.
const ORIGINS_PER_PARTITION: usize = 16;

/// Bytes of a partition handed to the classifier at once (whole lines):
/// the memory of pass 2 per worker, whatever the input's size.
const BLOCK: usize = 4 << 20;

/// Every how many chunks pass 3 gives back the pages of the verdict and
/// cursor files it read: each chunk reads a few bytes per partition, so
/// the pages it touches are mostly those of the chunks before.
const RELEASE_EVERY: u64 = 64;

/// The fewest bytes of list a partition should get: pass 2 pays a fixed
/// cost per partition (its grouping's radix counts, 4,096 buckets zeroed and
/// summed, about 12 k instructions), which partitions of a few hundred URLs
/// pay again every few hundred URLs. Measured on `filter_scale.sh`'s 4x
/// artifact (127,592 origins) and 3 M URLs (157 MB), callgrind and
/// cachegrind of the whole run: 8,192 partitions (366 URLs each) 1,955
/// instructions and 10.71 last-level misses a URL, 2,048 partitions (this
/// bound's choice) 1,859 and 9.53; the 1x artifact keeps its 2,048.
const MIN_PARTITION_BYTES: usize = 128 << 10;

/// How many partitions the partitioned form uses over an artifact of
/// `origins` origins for a list of `list_bytes` bytes: a power of two near
/// `origins` / 16 (about 16 origins a partition, whose tables stay in the
/// cache), but none smaller than about [`MIN_PARTITION_BYTES`] of list (at
/// most twice as many as `list_bytes` / that), from 2 to [`MAX_PARTITIONS`].
/// Give `usize::MAX` for a list of unknown size.
pub fn partitions_for(origins: usize, list_bytes: usize) -> usize {
    let by_origins = (origins / ORIGINS_PER_PARTITION).next_power_of_two();
    let by_list = (list_bytes / MIN_PARTITION_BYTES).max(1).checked_next_power_of_two().unwrap_or(usize::MAX);
    by_origins.min(by_list).clamp(2, MAX_PARTITIONS)
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
#[cfg(test)]
fn partition_of(url: &[u8], partitions: usize) -> usize {
    partition_of_hash(authority_hash(url), partitions)
}

/// The partition of a URL whose [`authority_hash`] is `hash`.
#[inline]
fn partition_of_hash(hash: u64, partitions: usize) -> usize {
    // Multiply-shift of the top half: any count, and the top bits decide.
    (((hash >> 32) * partitions as u64) >> 32) as usize
}

/// The hash of what follows the first `://` of `url` up to the next `/`,
/// `?` or `#` (of the whole URL when it has no `://`): the origin as
/// written, without parsing or case folding.
///
/// Taken once per URL in pass 1, so without a search call: an `http://` or
/// `https://` start (whose first colon is the scheme's) skips the colon
/// search, the authority's end is found 16 bytes at a time
/// ([`authority_len`]), and the hash reads the bytes after the authority
/// instead of gathering its tail ([`origin_hash_of_prefix`]). Two `memchr`
/// calls cost 120 instructions a URL on the frontier x20 (callgrind).
#[inline(always)]
fn authority_hash(url: &[u8]) -> u64 {
    let start = if url.starts_with(b"https://") {
        8
    } else if url.starts_with(b"http://") {
        7
    } else {
        match memchr::memchr(b':', url) {
            Some(colon) if url[colon + 1..].starts_with(b"//") => colon + 3,
            _ => return origin_hash(url),
        }
    };
    let rest = &url[start..];
    origin_hash_of_prefix(rest, authority_len(rest))
}

/// Where the authority at the start of `rest` ends: at its first `/`, `?`
/// or `#`, or at its end. The bytes are compared 16 at a time (SSE2, part
/// of every x86-64), the last block overlapping the one before when fewer
/// than 16 bytes are left: authorities are a few dozen bytes, too short for
/// a search call to pay its start-up.
#[inline(always)]
fn authority_len(rest: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        /// Bit `i` set when byte `i` of `block` ends an authority.
        #[inline(always)]
        fn ends(block: &[u8]) -> u32 {
            use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};
            assert!(block.len() >= 16);
            // SAFETY: SSE2 is part of x86-64, and `block` holds the 16 bytes
            // read (an unaligned load).
            unsafe {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'/' as i8));
                let query = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'?' as i8));
                let fragment = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'#' as i8));
                _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(slash, query), fragment)) as u32
            }
        }
        if rest.len() >= 16 {
            let mut at = 0;
            while at + 16 <= rest.len() {
                let hits = ends(&rest[at..]);
                if hits != 0 {
                    return at + hits.trailing_zeros() as usize;
                }
                at += 16;
            }
            // The last 16 bytes, of which those before `at` were seen.
            let last = rest.len() - 16;
            let hits = ends(&rest[last..]) >> (at - last);
            return if hits != 0 { at + hits.trailing_zeros() as usize } else { rest.len() };
        }
    }
    rest.iter().position(|b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(rest.len())
}

/// The most buckets a batch's URLs are sorted into before they are
/// classified ([`PartitionBlock::classify`]): by the low bits of their
/// [`authority_hash`] (stored in each record's header), so that the URLs of
/// an origin come in one run. A partition holds a few dozen origins: two
/// rarely share a bucket, and those that do only interleave their runs.
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
    let blocks = temp.create()?;
    let cursors = temp.create()?;
    let order = temp.create()?;
    let verdicts = temp.create()?;

    // Pass 1: split.
    let mut split = Split::new(partitions, &blocks, (&cursors, &order), &temp);
    pipeline.run_chunks(&SplitLines, input, &mut split, None)?;
    let chains = std::mem::take(&mut split.chains);
    let totals = std::mem::take(&mut split.totals);
    let chunk_starts = std::mem::take(&mut split.chunk_starts);
    drop(split);
    let mut starts = Vec::with_capacity(partitions + 1);
    starts.push(0u64);
    for total in &totals {
        starts.push(starts[starts.len() - 1] + total);
    }
    let urls = starts[partitions];
    verdicts.set_len(urls).map_err(|e| temp.failed(e))?;

    // Pass 2: classify.
    let scratches = classify_partitions(pipeline, classifier, &blocks, &chains, &verdicts, &starts, &temp)?;
    // Its bytes are not needed again: give the disk back now.
    drop(blocks);

    // Pass 3: write.
    let verdict_map = map(&verdicts).map_err(|e| temp.failed(e))?;
    let cursor_map = map(&cursors).map_err(|e| temp.failed(e))?;
    let order_map = map(&order).map_err(|e| temp.failed(e))?;
    let replay = Replay {
        verdicts: &verdict_map,
        cursors: &cursor_map,
        order: &order_map,
        chunk_starts: &chunk_starts,
        starts: &starts[..partitions],
    };
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

/// How a URL is stored in a partition: a little-endian `u32` header, the
/// URL's length in the low [`LEN_BITS`] bits and its bucket (the low bits
/// of its [`authority_hash`]) above, then the URL's bytes. Pass 2 reads the
/// URLs and their buckets without scanning for line ends or hashing again.
const HEADER: usize = 4;

/// Bits of a record's header that hold the URL's length: a URL line is at
/// most [`crate::line::MAX_LINE`] bytes (a longer line is no URL).
const LEN_BITS: u32 = 17;
const _: () = assert!(crate::line::MAX_LINE < 1 << LEN_BITS);

/// The header of a record of `url`, whose [`authority_hash`] is `hash`.
#[inline]
fn header_of(url: &[u8], hash: u64) -> u32 {
    url.len() as u32 | (hash as u32) << LEN_BITS
}

/// The records of `bytes` (a sequence of whole records): each URL and its
/// bucket bits (the header's bits above [`LEN_BITS`]).
fn records(bytes: &[u8]) -> impl Iterator<Item = (&[u8], u32)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = u32::from_le_bytes(bytes.get(at..at + HEADER)?.try_into().expect("4 bytes"));
        let url = &bytes[at + HEADER..at + HEADER + (header & ((1 << LEN_BITS) - 1)) as usize];
        at += HEADER + url.len();
        Some((url, header >> LEN_BITS))
    })
}

/// The job of pass 1: every URL of a chunk to its partition.
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
        let partitions = recorder.format.partitions;
        let chunk = &mut buffers.output;
        chunk.clear(partitions);
        for line in Lines::new(data) {
            if let Line::Url(url) = line {
                let hash = authority_hash(url);
                let p = partition_of_hash(hash, partitions);
                chunk.ids.push((p as u16).to_le_bytes());
                chunk.ends[p] += HEADER + url.len();
                chunk.counts[p] += 1;
                // Where the URL lies in the chunk: `Lines` hands out subslices.
                let at = url.as_ptr() as usize - data.as_ptr() as usize;
                chunk.placed.push((at as u32, header_of(url, hash)));
            }
        }
        chunk.group(data);
        Ok(())
    }
}

/// One chunk's URLs as records ([`HEADER`]) grouped by partition:
/// partition `p`'s are `grouped[starts[p]..ends[p]]`, in input order,
/// `counts[p]` of them.
#[derive(Debug, Default)]
struct SplitChunk {
    /// Each URL's place in the chunk's bytes and its record's header, and
    /// its partition as pass 3 reads it (a `u16` LE), in input order.
    placed: Vec<(u32, u32)>,
    ids: Vec<[u8; 2]>,
    /// The records by partition, each partition's region followed by
    /// [`COPY`] bytes of slack (never shortened, so never zeroed again).
    grouped: Vec<u8>,
    starts: Vec<usize>,
    ends: Vec<usize>,
    counts: Vec<u64>,
}

/// The bytes [`SplitChunk::group`] copies at a time: a URL is copied in
/// whole blocks of 16, the last one spilling into the next record's place
/// or its partition's slack. One `memcpy` call per URL cost about 60
/// instructions a URL on the frontier x20 (callgrind), these few moves
/// about 4 each.
const COPY: usize = 16;

impl SplitChunk {
    /// Empties the chunk for the URLs of `partitions` partitions.
    fn clear(&mut self, partitions: usize) {
        self.placed.clear();
        self.ids.clear();
        self.ends.clear();
        self.ends.resize(partitions, 0);
        self.counts.clear();
        self.counts.resize(partitions, 0);
    }

    /// Writes the records of the URLs placed in `data` into `grouped` by
    /// partition (a counting sort within the chunk, whose bytes stay in the
    /// cache); `ends` held each partition's bytes and then holds where its
    /// records end.
    fn group(&mut self, data: &[u8]) {
        self.starts.clear();
        let mut total = 0;
        for end in &mut self.ends {
            self.starts.push(total);
            let bytes = std::mem::replace(end, total);
            total += bytes + COPY;
        }
        if self.grouped.len() < total {
            self.grouped.resize(total, 0);
        }
        // `ends[p]` walks partition p's region.
        for (&(at, header), &p) in self.placed.iter().zip(&self.ids) {
            let (at, len) = (at as usize, (header & ((1 << LEN_BITS) - 1)) as usize);
            let to = &mut self.ends[usize::from(u16::from_le_bytes(p))];
            let record = &mut self.grouped[*to..*to + HEADER + len.next_multiple_of(COPY)];
            record[..HEADER].copy_from_slice(&header.to_le_bytes());
            match data.get(at..at + len.next_multiple_of(COPY)) {
                Some(url) => {
                    for (to, from) in record[HEADER..].chunks_exact_mut(COPY).zip(url.chunks_exact(COPY)) {
                        to.copy_from_slice(from);
                    }
                }
                // The chunk's last bytes: no whole block to read past the URL.
                None => record[HEADER..HEADER + len].copy_from_slice(&data[at..at + len]),
            }
            *to += HEADER + len;
        }
    }

    /// Partition `p`'s records.
    fn part(&self, p: usize) -> &[u8] {
        &self.grouped[self.starts[p]..self.ends[p]]
    }
}

/// The format of pass 1's chunks. [`SplitLines`] groups a chunk's URLs
/// itself, from their places in the chunk, so no line is recorded one by one.
#[derive(Clone, Copy, Debug)]
struct SplitFormat {
    partitions: usize,
}

impl Format for SplitFormat {
    type Chunk = SplitChunk;

    fn wants_reasons(&self) -> bool {
        false
    }

    fn start(&self, chunk: &mut SplitChunk, _: usize) {
        chunk.clear(self.partitions);
    }

    fn record(&self, _: &mut SplitChunk, _: &[u8], _: Verdict, _: &[u8]) {
        // Never called: SplitLines places the URLs itself.
    }

    fn record_bad_line(&self, _: &mut SplitChunk, _: &[u8], _: LineProblem) {
        // Never called: pass 3 writes the lines that are no URL.
    }

    fn reset(&self, chunk: &mut SplitChunk, keep: usize) {
        // A chunk of unusually long lines: give back what it took beyond twice `keep`.
        if chunk.grouped.len() > keep * 2 {
            chunk.grouped.truncate(keep * 2);
            chunk.grouped.shrink_to_fit();
        }
    }
}

/// Bytes of the write-combining blocks of pass 1, all partitions together:
/// each partition's block is [`block_size`] bytes. Measured at 2,048
/// partitions on the frontier x20: 8 MiB (4 KiB blocks) and 32 MiB cost the
/// same CPU time (1.53 and 1.45 to 1.98 s, load 16), peak RSS 127 and 151 MB.
const BLOCK_BUFFERS: usize = 8 << 20;

/// The block size of a run of `partitions` partitions: [`BLOCK_BUFFERS`]
/// shared out, from 4 KiB (a page, one read of pass 2) to 1 MiB.
fn block_size(partitions: usize) -> usize {
    (BLOCK_BUFFERS / partitions.max(1)).clamp(4 << 10, 1 << 20)
}

/// Bytes of full blocks gathered before they are appended to the file: one
/// `writev` for many blocks (of at most [`MAX_SLICES`]), no copy.
const APPEND: usize = 1 << 20;
const MAX_SLICES: usize = 1024;

/// Where one block of a partition lies in the temporary file. A block holds
/// whole records.
#[derive(Clone, Copy, Debug)]
struct Extent {
    offset: u64,
    len: u32,
}

/// The sink of pass 1: appends each chunk's records to their partitions'
/// blocks, each full block to the end of the one temporary file (linked
/// into its partition's chain), and the partitions' totals before each
/// chunk to the cursor file.
struct Split<'a> {
    file: &'a File,
    /// Bytes of the file, the blocks in `pending` included.
    file_len: u64,
    /// Full blocks not yet written (`pending_bytes` in all, the last ending
    /// at `file_len`), and emptied ones to fill again.
    pending: Vec<Vec<u8>>,
    pending_bytes: usize,
    spare: Vec<Vec<u8>>,
    block_size: usize,
    /// Each partition's block being filled, and its chain of blocks written.
    blocks: Vec<Vec<u8>>,
    chains: Vec<Vec<Extent>>,
    cursors: BufWriter<&'a File>,
    /// Each URL's partition in input order, a `u16` LE each.
    order: BufWriter<&'a File>,
    /// URLs per partition so far.
    totals: Vec<u64>,
    /// URLs before each chunk (and after the last).
    chunk_starts: Vec<u64>,
    /// A chunk's row of the cursor file, as bytes.
    row: Vec<u8>,
    temp: &'a TempFiles<'a>,
}

impl<'a> Split<'a> {
    fn new(partitions: usize, file: &'a File, (cursors, order): (&'a File, &'a File), temp: &'a TempFiles<'a>) -> Self {
        Split {
            file,
            file_len: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            spare: Vec::new(),
            block_size: block_size(partitions),
            blocks: vec![Vec::new(); partitions],
            chains: vec![Vec::new(); partitions],
            cursors: BufWriter::with_capacity(1 << 16, cursors),
            order: BufWriter::with_capacity(1 << 16, order),
            totals: vec![0; partitions],
            chunk_starts: vec![0],
            row: Vec::new(),
            temp,
        }
    }

    /// Appends partition `p`'s `records` to its block, closing the block
    /// (never a record cut in two) whenever the next record does not fit.
    /// A record longer than a block gets a block of its own.
    fn add(&mut self, p: usize, records: &[u8]) -> Result<(), FilterError> {
        if self.blocks[p].capacity() == 0 {
            self.blocks[p].reserve_exact(self.block_size);
        }
        if self.blocks[p].len() + records.len() <= self.block_size {
            self.blocks[p].extend_from_slice(records);
            return Ok(());
        }
        for (url, _) in self::records(records) {
            if self.blocks[p].len() + HEADER + url.len() > self.block_size && !self.blocks[p].is_empty() {
                self.close(p)?;
            }
            // The record's own bytes, header included, as they lie in `records`.
            let at = url.as_ptr() as usize - records.as_ptr() as usize - HEADER;
            self.blocks[p].extend_from_slice(&records[at..at + HEADER + url.len()]);
        }
        Ok(())
    }

    /// Links partition `p`'s block into its chain and queues it for the
    /// file, the partition going on in a spare block.
    fn close(&mut self, p: usize) -> Result<(), FilterError> {
        let next = self.spare.pop().unwrap_or_default();
        let block = std::mem::replace(&mut self.blocks[p], next);
        self.chains[p].push(Extent { offset: self.file_len, len: block.len() as u32 });
        self.file_len += block.len() as u64;
        self.pending_bytes += block.len();
        self.pending.push(block);
        if self.pending_bytes >= APPEND || self.pending.len() >= MAX_SLICES {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Appends the pending blocks to the file in one `writev` (or more, if
    /// the kernel takes fewer bytes) and keeps their buffers as spares.
    fn write_pending(&mut self) -> Result<(), FilterError> {
        let mut slices: Vec<IoSlice<'_>> = self.pending.iter().map(|block| IoSlice::new(block)).collect();
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            match (&mut &*self.file).write_vectored(rest) {
                Ok(0) => return Err(self.temp.failed(io::ErrorKind::WriteZero.into())),
                Ok(written) => IoSlice::advance_slices(&mut rest, written),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.temp.failed(e)),
            }
        }
        for mut block in self.pending.drain(..) {
            block.clear();
            self.spare.push(block);
        }
        self.pending_bytes = 0;
        Ok(())
    }
}

impl Sink for Split<'_> {
    type Format = SplitFormat;

    fn format(&self, _: &super::Config) -> SplitFormat {
        SplitFormat { partitions: self.blocks.len() }
    }
}

impl ChunkSink for Split<'_> {
    type Chunk = SplitChunk;

    fn write(&mut self, chunk: &SplitChunk) -> Result<(), FilterError> {
        self.row.clear();
        self.row.extend(self.totals.iter().flat_map(|total| total.to_le_bytes()));
        self.cursors.write_all(&self.row).map_err(|e| self.temp.failed(e))?;
        self.chunk_starts.push(self.chunk_starts.last().copied().unwrap_or(0) + chunk.ids.len() as u64);
        self.order.write_all(chunk.ids.as_flattened()).map_err(|e| self.temp.failed(e))?;
        for p in 0..self.blocks.len() {
            self.totals[p] += chunk.counts[p];
            self.add(p, chunk.part(p))?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        for p in 0..self.blocks.len() {
            if !self.blocks[p].is_empty() {
                self.close(p)?;
            }
            // No more records: give the block's memory back.
            self.blocks[p] = Vec::new();
        }
        self.write_pending()?;
        self.spare = Vec::new();
        self.order.flush().map_err(|e| self.temp.failed(e))?;
        self.cursors.flush().map_err(|e| self.temp.failed(e))
    }
}

// ---------------------------------------------------------------------------
// Pass 2
// ---------------------------------------------------------------------------

/// Classifies every partition (the blocks of `chains` in `file`),
/// partition `p`'s verdicts going to bytes `starts[p]..starts[p + 1]` of
/// `verdicts`; returns the scratches used (one per worker).
fn classify_partitions<C: Classifier>(
    pipeline: &Pipeline,
    classifier: &C,
    file: &File,
    chains: &[Vec<Extent>],
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
        for _ in 0..pipeline.threads().min(chains.len()) {
            scope.spawn(|_| {
                let mut scratch = C::Scratch::default();
                let mut block = PartitionBlock::default();
                let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), FilterError> {
                    loop {
                        let p = next.fetch_add(1, Ordering::Relaxed);
                        if p >= chains.len() || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        block.classify(classifier, &mut scratch, (file, &chains[p]), verdicts, starts[p], temp)?;
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
    /// Each URL's bucket, where each bucket starts, and the URLs' numbers
    /// in bucket order.
    buckets: Vec<u16>,
    bucket_starts: Vec<u32>,
    order: Vec<u32>,
    verdicts: Vec<Verdict>,
    verdict_bytes: Vec<u8>,
}

impl PartitionBlock {
    /// Classifies one partition (its `chain` of blocks in `file`), at most
    /// [`BLOCK`] bytes of them at a time, writing its verdicts to
    /// `verdicts` from byte `start`.
    fn classify<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        (file, chain): (&File, &[Extent]),
        verdicts: &File,
        mut start: u64,
        temp: &TempFiles<'_>,
    ) -> Result<(), FilterError> {
        let mut used = 0;
        for (i, extent) in chain.iter().enumerate() {
            let len = extent.len as usize;
            if self.bytes.len() < used + len {
                self.bytes.resize(used + len, 0);
            }
            file.read_exact_at(&mut self.bytes[used..used + len], extent.offset).map_err(|e| temp.failed(e))?;
            used += len;
            let next_fits = chain.get(i + 1).is_some_and(|next| used + next.len as usize <= BLOCK);
            if !next_fits {
                let written = self.classify_records(classifier, scratch, used)?;
                verdicts.write_all_at(written, start).map_err(|e| temp.failed(e))?;
                start += written.len() as u64;
                used = 0;
            }
        }
        Ok(())
    }

    /// Classifies the records of `self.bytes[..end]`; their verdicts, a
    /// byte each in record order.
    fn classify_records<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        end: usize,
    ) -> Result<&[u8], FilterError> {
        let data = &self.bytes[..end];
        let mut urls = reuse(std::mem::take(&mut self.urls));
        self.buckets.clear();
        // About a bucket per 256 bytes of records (4 URLs or so): the sort
        // stays linear in the URLs, and a partition's origins rarely share one.
        let buckets = (data.len() / 256).next_power_of_two().clamp(64, BUCKETS);
        for (url, bits) in records(data) {
            urls.push(url);
            self.buckets.push((bits as usize % buckets) as u16);
        }
        if urls.len() <= C::GROUPS_BY_ORIGIN {
            // The classifier groups these itself ([`Classifier::GROUPS_BY_ORIGIN`]): no sort.
            self.verdicts.resize(urls.len(), Verdict::Invalid);
            let verdicts = &mut self.verdicts[..urls.len()];
            let outcome = classifier.classify_batch(&urls, scratch, verdicts, None);
            self.verdict_bytes.clear();
            self.verdict_bytes.extend(verdicts.iter().map(|verdict| verdict.index() as u8));
            self.urls = reuse(urls);
            outcome.map_err(FilterError::Artifact)?;
            return Ok(&self.verdict_bytes);
        }
        // A counting sort by bucket: each origin's URLs side by side, in
        // input order, so that the classifier finds long runs.
        let starts = &mut self.bucket_starts;
        starts.clear();
        starts.resize(buckets + 1, 0);
        for &bucket in &self.buckets {
            starts[bucket as usize + 1] += 1;
        }
        for b in 0..buckets {
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
    /// Each URL's partition in input order (u16 LE), and the URLs before
    /// each chunk: chunk `c`'s partitions are read, not hashed again.
    order: &'a Mmap,
    chunk_starts: &'a [u64],
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
        let first = self.chunk_starts[seq as usize] as usize * 2;
        let mut ids = self.order[first..self.chunk_starts[seq as usize + 1] as usize * 2].chunks_exact(2);
        for line in Lines::new(data) {
            match line {
                Line::Url(url) => {
                    let id = ids.next().expect("pass 1 saw the same URLs");
                    let at = &mut next[usize::from(u16::from_le_bytes([id[0], id[1]]))];
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
            crate::mapped::release(self.order, 0, self.order.len());
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
    fn an_authority_ends_at_its_first_slash_query_or_fragment_at_any_length() {
        // Every length up to three blocks of 16, the end at every place (or
        // none), each of the three bytes that end it, a second one after.
        for len in 0..50 {
            for end in 0..=len {
                for stop in [b'/', b'?', b'#'] {
                    let mut rest = vec![b'a'; len];
                    if end < len {
                        rest[end] = stop;
                        rest[len - 1] = b'/';
                    }
                    let wanted = rest.iter().position(|b| b"/?#".contains(b)).unwrap_or(len);
                    assert_eq!(authority_len(&rest), wanted, "{:?}", String::from_utf8_lossy(&rest));
                }
            }
        }
        // The start as written decides, whichever way it is found.
        let hash = |authority: &[u8]| origin_hash(authority);
        assert_eq!(authority_hash(b"https://a.example.org:8443/x?y"), hash(b"a.example.org:8443"));
        assert_eq!(authority_hash(b"http://a.example.org#f"), hash(b"a.example.org"));
        assert_eq!(authority_hash(b"HTTP://a.example.org/"), hash(b"a.example.org"));
        assert_eq!(authority_hash(b"ftp://user@a.example.org"), hash(b"user@a.example.org"));
        assert_eq!(authority_hash(b"mailto:x@a.example"), hash(b"mailto:x@a.example"));
    }

    /// A classifier whose verdict is a function of the URL's bytes.
    struct ByLength;

    impl Classifier for ByLength {
        type Scratch = u64;

        fn classify(&self, url: &[u8], seen: &mut u64, _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
            *seen += 1;
            Ok(Verdict::ALL[url.len() % 4])
        }
    }

    /// Splits `urls` in chunks of `per_chunk` into `partitions` partitions
    /// as pass 1 does, then checks that each partition's chain of blocks
    /// holds exactly its URLs in input order, whole, with their buckets, and
    /// that pass 2 gives each its verdict at its place.
    fn split_and_classify(partitions: usize, urls: &[Vec<u8>], per_chunk: usize) {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFiles { dir: dir.path() };
        let (file, cursors, verdicts) = (temp.create().unwrap(), temp.create().unwrap(), temp.create().unwrap());
        let order = temp.create().unwrap();
        let mut split = Split::new(partitions, &file, (&cursors, &order), &temp);
        let format = SplitFormat { partitions };
        let mut expected = vec![Vec::new(); partitions];
        let (recorder, mut buffers) = (Recorder { format, unknown_as: Verdict::Unknown }, ChunkBuffers::default());
        for (seq, chunk_urls) in urls.chunks(per_chunk).enumerate() {
            let data: Vec<u8> = chunk_urls.iter().flat_map(|url| url.iter().chain(b"\n")).copied().collect();
            SplitLines.run(seq as u64, &data, &recorder, &mut buffers, &mut ()).unwrap();
            for url in chunk_urls {
                expected[partition_of(url, partitions)].push(url.clone());
            }
            split.write(&buffers.output).unwrap();
            format.reset(&mut buffers.output, 0);
        }
        split.finish().unwrap();
        let size = block_size(partitions);
        let mut start = 0;
        for (p, (chain, expected)) in split.chains.iter().zip(&expected).enumerate() {
            let mut got = Vec::new();
            for extent in chain {
                let mut bytes = vec![0; extent.len as usize];
                file.read_exact_at(&mut bytes, extent.offset).unwrap();
                let records: Vec<_> = records(&bytes).collect();
                assert!(bytes.len() <= size || records.len() == 1, "a block of {} bytes", bytes.len());
                for (url, bits) in records {
                    assert_eq!(bits, header_of(url, authority_hash(url)) >> LEN_BITS);
                    got.push(url.to_vec());
                }
            }
            assert_eq!(split.totals[p], expected.len() as u64);
            assert!(got == *expected, "partition {p}: {} URLs, {} expected", got.len(), expected.len());
            let mut seen = 0;
            let partition = (&file, &chain[..]);
            PartitionBlock::default().classify(&ByLength, &mut seen, partition, &verdicts, start, &temp).unwrap();
            assert_eq!(seen, expected.len() as u64);
            let mut written = vec![0; expected.len()];
            verdicts.read_exact_at(&mut written, start).unwrap();
            let wanted: Vec<u8> = expected.iter().map(|url| (url.len() % 4) as u8).collect();
            assert!(written == wanted, "partition {p}: verdicts out of place");
            start += expected.len() as u64;
        }
        assert_eq!(start, urls.len() as u64);
    }

    #[test]
    fn partitions_are_chains_of_whole_records_in_input_order() {
        // A few hosts: each partition gets chains of many blocks, and some
        // URLs are longer than a block (of 4 KiB at the most partitions),
        // one as long as a URL line can be.
        let mut urls: Vec<Vec<u8>> = (0..6000)
            .map(|i| {
                let len = if i % 997 == 5 { 6000 } else { i % 90 };
                format!("https://h{}.example/{}", i % 7, "x".repeat(len)).into_bytes()
            })
            .collect();
        let mut longest = b"https://h1.example/".to_vec();
        longest.resize(crate::line::MAX_LINE, b'y');
        urls.insert(3000, longest);
        split_and_classify(MAX_PARTITIONS, &urls, 700);
        split_and_classify(3, &urls, 700);
    }

    #[test]
    fn a_partition_larger_than_a_block_of_pass_2_is_classified_in_parts() {
        // One partition of more than BLOCK bytes in blocks of 1 MiB.
        let urls: Vec<Vec<u8>> = (0..(BLOCK / 100) * 3)
            .map(|i| format!("https://h.example/{i}/{}", "z".repeat(i % 160)).into_bytes())
            .collect();
        split_and_classify(1, &urls, 20_000);
    }

    #[test]
    fn partition_counts_follow_the_artifacts_origins_and_the_lists_size() {
        let any = usize::MAX;
        assert_eq!(partitions_for(0, any), 2);
        assert_eq!(partitions_for(4096, any), 256);
        assert_eq!(partitions_for(31_898, any), 2048);
        assert_eq!(partitions_for(127_592, any), 8192);
        assert_eq!(partitions_for(10_000_000, any), MAX_PARTITIONS);
        // filter_scale.sh's 3 M URLs (about 157 MB): the 1x keeps its count,
        // the 4x's partitions get as many URLs as the 1x's.
        assert_eq!(partitions_for(31_898, 157_000_000), 2048);
        assert_eq!(partitions_for(127_592, 157_000_000), 2048);
        // A small list: few partitions; none at all still gives two.
        assert_eq!(partitions_for(127_592, 1 << 20), 8);
        assert_eq!(partitions_for(127_592, 0), 2);
    }
}
