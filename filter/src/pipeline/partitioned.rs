//! The partitioned form of a run ([`Grouping`]): three passes over a mapped
//! input, each URL's origin tables used while they are in the cache.
//!
//! 1. **Split**, all of it on the workers. The input is cut into the same
//!    chunks as the windowed path, and each chunk's URLs are sorted into
//!    partitions by the hash of their authority as written
//!    ([`partition_of_hash`]), each URL a record of a 4-byte header (its
//!    length and bucket) and its bytes ([`HEADER`]). The worker takes the
//!    numbers of the chunk's URLs in each partition from the partition's
//!    counter (an atomic add per partition and chunk, in whatever order the
//!    chunks come), writes them as the chunk's row of a cursor file, and
//!    appends each partition's records, after a segment header holding the
//!    first number ([`SEGMENT`]), to that partition's block in its own set
//!    of blocks (write-combining buffers of [`block_size`] bytes); full
//!    blocks go, many in one `pwritev`, to the next bytes of the set's own
//!    temporary file (a file per worker), and are linked into their
//!    partitions' chains ([`Extent`]). Each non-blank line's record for pass
//!    3 (its length and partition, [`IRREGULAR`]) goes to an order file at
//!    bytes taken the same way. The calling thread only keeps, in input
//!    order, where each chunk's line records went ([`Split`]).
//! 2. **Classify.** The partitions are the unit of work: each worker takes
//!    the next partition, reads its blocks, up to [`BLOCK`] bytes at a time,
//!    groups them by the hash bits stored beside each URL and hands them to
//!    the classifier as grouped ([`Classifier::classify_grouped`]), and writes
//!    each verdict, a byte, into the partition's region of a (mapped)
//!    verdict file at its URL's number. A partition holds about
//!    [`MIN_PARTITION_BYTES`] of list (one batch of pass 2): each origin's
//!    URLs come to the classifier as one run, so its tables are read once
//!    whatever the partition's other origins.
//! 3. **Write.** The input is cut into chunks again and each chunk formatted
//!    on the workers from the verdict file: its lines are found from their
//!    records (not split again), and chunk `c`'s next URL of partition `p`
//!    has its verdict at `p`'s region start plus the cursor of `(c, p)`. The
//!    chunks go to the sink in input order, as on the windowed path, so
//!    outputs, counts and bad lines are the windowed path's byte for byte.
//!
//! A run that writes nothing a line at a time (only counts:
//! [`super::Format::writes_lines`]) skips pass 3, and pass 1 writes no
//! cursors or line records for it: the verdict file's bytes are counted
//! instead ([`count_verdicts`]), and the lines that are no URL were counted
//! in pass 1, which saves instructions a URL and the page faults of
//! mapping the input a second time.
//!
//! Memory stays flat in the input size: the passes stream, the partitions
//! are read a block at a time, the mapped input, cursors, order and
//! verdicts give their pages back as they go ([`robotsieve_engine::release_mapped`]);
//! pass 1 holds [`BLOCK_BUFFERS`] of blocks per worker whatever the
//! partition count. The temporary files are unnamed (`O_TMPFILE`, or
//! removed right after creation): an interrupted run leaves nothing
//! behind. They take about the input's size plus 8 bytes per URL (the
//! header's 3 beyond the line end, the line record's 4, the verdict), 12
//! bytes per segment (a chunk's URLs of a partition, per block they go to)
//! and 8 bytes per chunk and partition.
//!
//! The partition of a URL only decides where it is classified, never how:
//! any function of the URL gives the same verdicts. The authority as
//! written (no case folding, no parsing) keeps the URLs of one origin
//! together in practice at the cost of a search and a hash, done once per
//! URL in pass 1.

use super::{
    reported, reuse, ChunkBuffers, ChunkJob, ChunkSink, Classifier, FilterError, Format, Input, Line, Lines, Pipeline,
    Progress, Recorder, Report, Sink,
};
use memmap2::{Mmap, MmapRaw};
use robotsieve_core::line::LineProblem;
use robotsieve_core::url::{origin_hash, origin_hash_of_prefix};
use robotsieve_core::Verdict;
use std::fs::File;
use std::io::{self, IoSlice};
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The most partitions a run uses: each has a block of at least 4 KiB in
/// memory during pass 1 ([`block_size`]), and its number is a `u16`.
pub(super) const MAX_PARTITIONS: usize = 8192;
const _: () = assert!(MAX_PARTITIONS <= 1 << 16);

/// The fewest origins a partition should hold on average: the bound of a
/// list of unknown size ([`partitions_for`]), whose partitions are then
/// as large as its origins make them: the count that keeps a partition's
/// tables in a core's L2 cache. Lists of a known size take fewer, larger
/// partitions ([`MIN_PARTITION_BYTES`]).
const ORIGINS_PER_PARTITION: usize = 16;

/// Bytes of a partition handed to the classifier at once (whole lines):
/// the memory of pass 2 per worker, whatever the input's size.
const BLOCK: usize = 4 << 20;

/// Every how many chunks pass 3 gives back the pages of the verdict and
/// cursor files it read: each chunk reads a few bytes per partition, so
/// the pages it touches are mostly those of the chunks before.
const RELEASE_EVERY: u64 = 64;

/// The fewest bytes of list a partition should get. Pass 2 groups each
/// batch of a partition by its origins' hash bits, so an origin's URLs are
/// one run of the classifier whatever else the partition holds: small
/// partitions no longer keep the tables in the cache, they only make pass
/// 1's blocks small ([`block_size`]: 4 KiB from 2,048 partitions) and its
/// per-partition work per chunk large, and pass 2 reads each block with a
/// `pread` of its own. Large ones make pass 2's batch (the records and
/// about 40 bytes a URL of its vectors) outgrow a core's L2 cache. 1 MiB
/// lies between the two (the frontier x20, 320 MB, gets 512 partitions of
/// 16 KiB blocks).
const MIN_PARTITION_BYTES: usize = 1 << 20;
// The average partition (at most this much list, plus its records' and
// segments' headers, about 8%) fits one batch of pass 2 with room for
// uneven hashes.
const _: () = assert!(2 * MIN_PARTITION_BYTES <= BLOCK);

/// How many partitions the partitioned form uses over an artifact of
/// `origins` origins for a list of `list_bytes` bytes: a power of two near
/// `list_bytes` / `MIN_PARTITION_BYTES` (at most twice that), and no more
/// than about `origins` / `ORIGINS_PER_PARTITION`, from 2 to
/// `MAX_PARTITIONS`.
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
/// once); partitioning it would only add its passes.
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
/// written, without parsing or case folding. Its low bits are then mixed
/// with where the authority starts (the scheme's length and `://`): the
/// partition (the top bits) is the authority's alone, while the bits a
/// record's header keeps ([`header_of`]) tell `http` and `https` of one
/// host apart, so that pass 2's grouping does not interleave the two
/// origins' URLs (which split their runs: 161 k runs instead of 30 k on a
/// million lines of the frontier, callgrind).
///
/// Taken once per URL in pass 1, so without a search call: an `http://` or
/// `https://` start (whose first colon is the scheme's) skips the colon
/// search, the authority's end is found 16 bytes at a time
/// ([`authority_len`]), and the hash reads the bytes after the authority
/// instead of gathering its tail ([`origin_hash_of_prefix`]): two `memchr`
/// calls a URL would cost more than the rest of the hash.
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
    origin_hash_of_prefix(rest, authority_len(rest)) ^ start as u64
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

/// The most slots of pass 2's table of hash bits ([`PartitionBlock`]'s
/// grouping): twice the values a record's header can hold, so that the
/// table is never more than half full.
const GROUP_SLOTS: usize = 1 << (33 - LEN_BITS);

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
    // A blocks file per worker: each writes its own (see [`SplitShared::files`]).
    let blocks = (0..pipeline.threads().max(1)).map(|_| temp.create()).collect::<Result<Vec<_>, _>>()?;
    let cursors = temp.create()?;
    let order = temp.create()?;
    let verdicts = temp.create()?;

    // Pass 1: split, on the workers; the sink keeps where each chunk's line records went.
    let replayed = sink.format(&pipeline.config).writes_lines();
    let shared = SplitShared { replayed, ..SplitShared::new(partitions, &blocks, (&cursors, &order), &temp) };
    let mut split = Split { partitions, chunk_lines: Vec::new() };
    let split_report = pipeline.run_chunks(&SplitLines(&shared), input, &mut split, None)?;
    let (chains, totals) = shared.finish(pipeline)?;
    let mut starts = Vec::with_capacity(partitions + 1);
    starts.push(0u64);
    for total in &totals {
        starts.push(starts[starts.len() - 1] + total);
    }
    // A byte a URL (one at least: a map is never empty).
    verdicts.set_len(starts[partitions].max(1)).map_err(|e| temp.failed(e))?;

    // Pass 2: classify.
    let verdict_map = VerdictMap::new(&verdicts).map_err(|e| temp.failed(e))?;
    let scratches = classify_partitions(pipeline, classifier, &blocks, &chains, &verdict_map, &starts, &temp)?;
    drop(verdict_map);
    // Their bytes are not needed again: give the disk back now, each file
    // on a thread of its own while the verdicts are counted or pass 3 runs
    // (else here, should no thread start). Closing the files frees their
    // page cache (about 17 ms over the frontier x20's 334 MB, `perf
    // record`), time in which the calling thread used to hold up the end of
    // the run.
    let stats = std::thread::scope(|scope| {
        for file in blocks {
            let close = move || drop(file);
            let _ = std::thread::Builder::new().name("robotsieve-close".into()).spawn_scoped(scope, close);
        }

        // Nothing to write a line at a time: count the verdicts instead of pass 3.
        if !replayed {
            // Pass 1 counted the lines that are no URL (as invalid) and the input's bytes.
            let mut stats = split_report.stats;
            let verdict_map = map(&verdicts).map_err(|e| temp.failed(e))?;
            count_verdicts(&verdict_map[..starts[partitions] as usize], pipeline.config.unknown_as, &mut stats.counts);
            sink.finish()?;
            if let Some(progress) = progress {
                progress.urls.fetch_add(stats.urls(), Ordering::Relaxed);
                progress.bytes.fetch_add(stats.input_bytes, Ordering::Relaxed);
            }
            return Ok(stats);
        }

        // Pass 3: write.
        let verdict_map = map(&verdicts).map_err(|e| temp.failed(e))?;
        let cursor_map = map(&cursors).map_err(|e| temp.failed(e))?;
        let order_map = map(&order).map_err(|e| temp.failed(e))?;
        let replay = Replay {
            verdicts: &verdict_map,
            cursors: &cursor_map,
            order: &order_map,
            chunk_lines: &split.chunk_lines,
            starts: &starts[..partitions],
        };
        pipeline.run_chunks(&replay, input, sink, progress).map(|report| report.stats)
    });
    let mut stats = stats?;
    stats.elapsed = started.elapsed();
    Ok(Report { stats, scratches })
}

/// Adds the verdicts of `bytes` (a verdict file's, a byte each) to `counts`
/// ([`Verdict::index`]), an unknown one as `unknown_as` (as
/// [`super::Recorder`] counts them).
fn count_verdicts(bytes: &[u8], unknown_as: Verdict, counts: &mut [u64; 4]) {
    let mut by_byte = [0u64; 256];
    for &byte in bytes {
        by_byte[usize::from(byte)] += 1;
    }
    for (verdict, &count) in Verdict::ALL.iter().zip(&by_byte) {
        counts[reported(*verdict, unknown_as).index()] += count;
    }
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
/// URL's length in the low [`LEN_BITS`] bits and the low bits of its
/// [`authority_hash`] above, then the URL's bytes. Pass 2 reads the URLs
/// and groups them by those bits without scanning for line ends or hashing
/// again.
const HEADER: usize = 4;

/// Bits of a record's header that hold the URL's length: a URL line is at
/// most [`robotsieve_core::line::MAX_LINE`] bytes (a longer line is no URL).
const LEN_BITS: u32 = 17;
const _: () = assert!(robotsieve_core::line::MAX_LINE < 1 << LEN_BITS);

/// The header of a record of `url`, whose [`authority_hash`] is `hash`.
#[inline]
fn header_of(url: &[u8], hash: u64) -> u32 {
    url.len() as u32 | (hash as u32) << LEN_BITS
}

/// The records of `bytes` (a sequence of whole records): each URL and its
/// hash bits (the header's bits above [`LEN_BITS`]).
fn records(bytes: &[u8]) -> impl Iterator<Item = (&[u8], u32)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = u32::from_le_bytes(bytes.get(at..at + HEADER)?.try_into().expect("4 bytes"));
        let url = &bytes[at + HEADER..at + HEADER + (header & ((1 << LEN_BITS) - 1)) as usize];
        at += HEADER + url.len();
        Some((url, header >> LEN_BITS))
    })
}

/// How a partition's URLs of one chunk start in a block: a little-endian
/// `u64`, the number of the first of them within the partition (the place
/// of its verdict in the partition's region), and a `u32`, the bytes of
/// their records that follow. The worker that splits a chunk takes its
/// numbers from each partition's counter ([`SplitShared::totals`]) at
/// once, whichever chunks the other workers split meanwhile: a partition's
/// blocks may hold its chunks in any order, and pass 2 writes each verdict
/// at its number.
const SEGMENT: usize = 12;

/// The bytes that start a segment of `bytes` bytes of records whose first
/// URL is number `first` of its partition.
fn segment_header(first: u64, bytes: usize) -> [u8; SEGMENT] {
    let mut header = [0; SEGMENT];
    header[..8].copy_from_slice(&first.to_le_bytes());
    header[8..].copy_from_slice(&(bytes as u32).to_le_bytes());
    header
}

/// The segments of `bytes` (a sequence of whole segments): each one's first
/// number and its records.
fn segments(bytes: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let header = bytes.get(at..at + SEGMENT)?;
        let first = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(header[8..].try_into().expect("4 bytes")) as usize;
        let records = &bytes[at + SEGMENT..at + SEGMENT + len];
        at += SEGMENT + len;
        Some((first, records))
    })
}

/// What pass 3 reads instead of splitting the lines again: a little-endian
/// `u32` per non-blank line of a chunk, in input order, in the order file.
/// A URL that starts where the line before it ends (just after its newline,
/// or at the chunk's start: no blank line between) holds its length in the
/// low [`LEN_BITS`] bits and its partition in the [`PARTITION_BITS`] above;
/// any other line has [`IRREGULAR`] set (a URL its partition too), and pass
/// 3 finds it with [`Lines`] from where the line before it ended.
const IRREGULAR: u32 = 1 << 31;
const PARTITION_BITS: u32 = 13;
const _: () = assert!(MAX_PARTITIONS <= 1 << PARTITION_BITS && LEN_BITS + PARTITION_BITS < 31);

/// The line record of a URL of `len` bytes of partition `p`.
#[inline]
fn line_record(len: usize, p: usize, regular: bool) -> u32 {
    len as u32 | (p as u32) << LEN_BITS | if regular { 0 } else { IRREGULAR }
}

/// Where the line after a line of `data` starts, given where its URL (or
/// the bad line [`Lines`] gave) ends: a line loses at most one CR before
/// its newline ([`Lines`]), so past an optional CR and the newline.
#[inline(always)]
fn line_after(data: &[u8], end: usize) -> usize {
    end + 1 + usize::from(data.get(end) == Some(&b'\r'))
}

/// Where `part` (a subslice of `data`) starts in it.
#[inline(always)]
fn offset_in(data: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - data.as_ptr() as usize
}

/// What the workers of pass 1 share: the temporary files, the partitions'
/// counters and chains, and the block sets.
struct SplitShared<'a> {
    partitions: usize,
    block_size: usize,
    /// The blocks files, and how many bytes of each are taken (written or
    /// being written): a block set writes its full blocks to the next bytes
    /// of its own file ([`BlockSet::file`]; sets beyond the files' count
    /// share them). One file for all sets makes the workers' `pwritev`s wait
    /// for each other: a buffered write holds the file's inode lock
    /// (`i_rwsem`) while it copies its MiB into the page cache, and the
    /// other worker spins on it.
    files: &'a [File],
    file_lens: Vec<AtomicU64>,
    /// Block sets made so far: a new set's file is the next one.
    set_count: AtomicUsize,
    /// Each partition's blocks, in the order they were written.
    chains: Mutex<Vec<Vec<Extent>>>,
    /// Each partition's URLs numbered so far (in any chunk order).
    totals: Vec<AtomicU64>,
    /// Per chunk, per partition, the number of the chunk's first URL of the
    /// partition (a `u64` LE), at `seq × partitions × 8`.
    cursors: &'a File,
    /// Each chunk's line records ([`IRREGULAR`]), at the bytes it took.
    order: &'a File,
    /// Whether pass 3 runs, and so needs the cursors and line records: not
    /// when the run only counts ([`super::Format::writes_lines`]).
    replayed: bool,
    order_len: AtomicU64,
    /// The partition blocks of the workers not splitting a chunk now: a
    /// worker takes one for its chunk and puts it back, so that there are
    /// at most as many as chunks split at once (the threads).
    sets: Mutex<Vec<BlockSet>>,
    temp: &'a TempFiles<'a>,
}

impl<'a> SplitShared<'a> {
    fn new(
        partitions: usize,
        files: &'a [File],
        (cursors, order): (&'a File, &'a File),
        temp: &'a TempFiles<'a>,
    ) -> Self {
        assert!(!files.is_empty(), "a blocks file at least");
        SplitShared {
            partitions,
            block_size: block_size(partitions),
            files,
            file_lens: files.iter().map(|_| AtomicU64::new(0)).collect(),
            set_count: AtomicUsize::new(0),
            chains: Mutex::new(vec![Vec::new(); partitions]),
            totals: (0..partitions).map(|_| AtomicU64::new(0)).collect(),
            cursors,
            order,
            replayed: true,
            order_len: AtomicU64::new(0),
            sets: Mutex::new(Vec::new()),
            temp,
        }
    }

    /// After the last chunk: writes what the block sets still hold (up to
    /// [`BLOCK_BUFFERS`] each, on the workers, a set each); each
    /// partition's chain of blocks and number of URLs.
    fn finish(self, pipeline: &Pipeline) -> Result<(Vec<Vec<Extent>>, Vec<u64>), FilterError> {
        let sets = std::mem::take(&mut *self.sets.lock().unwrap_or_else(|e| e.into_inner()));
        let outcomes = Mutex::new(Vec::new());
        pipeline.pool.scope(|scope| {
            for mut set in sets {
                let (shared, outcomes) = (&self, &outcomes);
                scope.spawn(move |_| {
                    let flushed = (0..set.blocks.len())
                        .try_for_each(|p| if set.blocks[p].is_empty() { Ok(()) } else { set.close(p, shared) })
                        .and_then(|()| set.write_pending(shared));
                    outcomes.lock().unwrap_or_else(|e| e.into_inner()).push(flushed);
                });
            }
        });
        outcomes.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().collect::<Result<(), _>>()?;
        let chains = self.chains.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok((chains, self.totals.into_iter().map(AtomicU64::into_inner).collect()))
    }
}

/// The job of pass 1: every URL of a chunk to its partition, on the
/// workers (see the module).
struct SplitLines<'s, 'a>(&'s SplitShared<'a>);

impl ChunkJob<SplitFormat> for SplitLines<'_, '_> {
    type Scratch = ();

    fn run(
        &self,
        seq: u64,
        data: &[u8],
        _: &Recorder<SplitFormat>,
        buffers: &mut ChunkBuffers<SplitChunk>,
        _: &mut (),
    ) -> Result<(), FilterError> {
        let shared = self.0;
        let partitions = shared.partitions;
        let chunk = &mut buffers.output;
        chunk.clear(partitions);
        // The lines split a block of 64 bytes at a time ([`super::split_lines`],
        // the windowed path's: 50 instructions a URL against the iterator's
        // 69), the lines that are no URL (rare) between the URLs they came between.
        let mut urls = reuse(std::mem::take(&mut chunk.urls));
        let mut bad = Vec::new();
        super::split_lines(data, &mut urls, &mut bad);
        // Two copies of the loop: a run that only counts writes no line records.
        if shared.replayed {
            chunk.place::<true>(data, &urls, &bad, partitions);
        } else {
            chunk.place::<false>(data, &urls, &bad, partitions);
        }
        let url_count = urls.len();
        chunk.urls = reuse(urls);
        // The lines that are no URL, counted for a run that ends without pass 3.
        buffers.counts[Verdict::Invalid.index()] += bad.len() as u64;
        let chunk = &mut buffers.output;
        chunk.group(data, partitions, url_count);
        // The chunk's numbers in each partition, for its segments and pass 3.
        chunk.row.clear();
        for (p, &count) in chunk.counts[..partitions].iter().enumerate() {
            let first = if count > 0 { shared.totals[p].fetch_add(count, Ordering::Relaxed) } else { 0 };
            chunk.row.extend_from_slice(&first.to_le_bytes());
        }
        let failed = |e| shared.temp.failed(e);
        if shared.replayed {
            shared.cursors.write_all_at(&chunk.row, seq * partitions as u64 * 8).map_err(failed)?;
            let order_at = shared.order_len.fetch_add(chunk.line_records().len() as u64, Ordering::Relaxed);
            chunk.order_at = order_at;
            shared.order.write_all_at(chunk.line_records(), order_at).map_err(failed)?;
        }
        let spare = shared.sets.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut set = spare.unwrap_or_else(|| BlockSet {
            file: shared.set_count.fetch_add(1, Ordering::Relaxed) % shared.files.len(),
            ..BlockSet::default()
        });
        set.blocks.resize_with(partitions, Vec::new);
        let added = (0..partitions).filter(|&p| chunk.counts[p] > 0).try_for_each(|p| {
            let first = u64::from_le_bytes(chunk.row[p * 8..p * 8 + 8].try_into().expect("8 bytes"));
            set.add(p, first, chunk.part(p), shared)
        });
        shared.sets.lock().unwrap_or_else(|e| e.into_inner()).push(set);
        added
    }
}

/// One chunk's URLs as records ([`HEADER`]) grouped by partition:
/// partition `p`'s are `grouped[starts[p]..ends[p]]`, in input order,
/// `counts[p]` of them.
///
/// Pass 1's per-URL writes go to places fixed before the loop: `placed`
/// and `lines` only grow (a chunk's URLs written by index, their count
/// kept apart), and `ends` and `counts` hold [`MAX_PARTITIONS`] entries
/// each (a partition's index masked, never checked), so that no write per
/// URL checks a capacity or a bound.
#[derive(Debug)]
struct SplitChunk {
    /// The chunk's URLs as split (the memory only, see [`reuse`]).
    urls: Vec<&'static [u8]>,
    /// Each URL's [`Placed`], in input order: the first as many as the
    /// chunk's URLs (never shortened).
    placed: Vec<Placed>,
    /// Each line's record for pass 3 ([`IRREGULAR`]): the first
    /// `line_count` (none when the run has no pass 3; never shortened), and
    /// where they went in the order file.
    lines: Vec<[u8; 4]>,
    line_count: usize,
    order_at: u64,
    /// The records by partition, each partition's region followed by
    /// [`COPY`] bytes of slack (never shortened, so never zeroed again).
    grouped: Vec<u8>,
    starts: Vec<usize>,
    /// Per partition (the first `partitions` entries): its records' bytes,
    /// then where they end ([`SplitChunk::group`]), and its URLs.
    ends: Box<[usize; MAX_PARTITIONS]>,
    counts: Box<[u64; MAX_PARTITIONS]>,
    /// The number of the chunk's first URL in each partition, as the cursor
    /// file holds them.
    row: Vec<u8>,
}

impl Default for SplitChunk {
    fn default() -> Self {
        SplitChunk {
            urls: Vec::new(),
            placed: Vec::new(),
            lines: Vec::new(),
            line_count: 0,
            order_at: 0,
            grouped: Vec::new(),
            starts: Vec::new(),
            ends: per_partition(),
            counts: per_partition(),
            row: Vec::new(),
        }
    }
}

/// An entry per possible partition, each the default (on the heap: 64 KiB).
fn per_partition<T: Copy + Default>() -> Box<[T; MAX_PARTITIONS]> {
    let entries = vec![T::default(); MAX_PARTITIONS].into_boxed_slice();
    entries.try_into().unwrap_or_else(|_| unreachable!("MAX_PARTITIONS entries"))
}

/// A URL of a chunk as pass 1 placed it: where it lies in the chunk's
/// bytes, its record's header ([`header_of`]) and its partition.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    at: u32,
    header: u32,
    p: u32,
}

/// The most bytes [`SplitChunk::group`] copies in fixed moves
/// ([`copy_fixed`]): a URL of at most that many bytes (four in five on the
/// frontier x20) is copied with the bytes after it, which spill into the
/// next record's place or its partition's slack; a longer one by a
/// `memcpy` call. (A loop over blocks of 16 bytes is turned back into a
/// `memcpy` call per URL by the compiler.)
const COPY: usize = 64;

/// Copies the first `N` bytes of `from` to `to` in 16-byte moves. Not
/// `copy_from_slice`: the compiler merged that with the other branches'
/// copies into one `memcpy` call per URL.
#[inline(always)]
fn copy_fixed<const N: usize>(to: &mut [u8], from: &[u8]) {
    let (to, from): (&mut [u8; N], &[u8; N]) =
        ((&mut to[..N]).try_into().expect("N bytes"), from[..N].try_into().expect("N bytes"));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86-64; the unaligned loads and stores
    // are of the N bytes (a multiple of 16) of `from` and `to`.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
        const { assert!(N % 16 == 0) };
        for i in 0..N / 16 {
            let v = _mm_loadu_si128(from.as_ptr().add(16 * i).cast::<__m128i>());
            _mm_storeu_si128(to.as_mut_ptr().add(16 * i).cast::<__m128i>(), v);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    to.copy_from_slice(from);
}

impl SplitChunk {
    /// Places the chunk's `urls` (and `bad`, the lines that are no URL,
    /// each with the number of URLs before it, as [`super::split_lines`]
    /// gives them): each URL's partition, record header and place in
    /// `data`, its partition's bytes and count, and with `REPLAYED` each
    /// line's record for pass 3 ([`IRREGULAR`]). Compiled apart for a run
    /// that only counts, which writes no line records, so that its loop
    /// carries no test for them.
    #[inline(always)]
    fn place<const REPLAYED: bool>(
        &mut self,
        data: &[u8],
        urls: &[&[u8]],
        bad: &[(usize, &[u8], LineProblem)],
        partitions: usize,
    ) {
        // Every URL gets a place, every line (with REPLAYED) a record: the
        // slots written by index below, without a capacity check per URL.
        grow(&mut self.placed, urls.len(), Placed::default());
        let line_count = if REPLAYED { urls.len() + bad.len() } else { 0 };
        self.line_count = line_count;
        grow(&mut self.lines, line_count, [0; 4]);
        let SplitChunk { placed, lines, ends, counts, .. } = self;
        let (placed, lines) = (&mut placed[..urls.len()], &mut lines[..line_count]);
        // One URL's partition, record and place; its partition's bytes and count.
        let mut place = |url: &[u8], slot: &mut Placed| {
            let hash = authority_hash(url);
            let p = partition_of_hash(hash, partitions);
            // Where the URL lies in the chunk: the split hands out subslices.
            let at = offset_in(data, url);
            // Masked, not checked: p < partitions <= MAX_PARTITIONS.
            ends[p % MAX_PARTITIONS] += HEADER + url.len();
            counts[p % MAX_PARTITIONS] += 1;
            *slot = Placed { at: at as u32, header: header_of(url, hash), p: p as u32 };
            (p, at)
        };
        // Where the next line starts if no blank line comes first.
        let mut next = 0;
        let mut done = 0;
        for k in 0..=bad.len() {
            let until = bad.get(k).map_or(urls.len(), |&(before, ..)| before);
            let (urls, slots) = (&urls[done..until], &mut placed[done..until]);
            if REPLAYED {
                // The lines before bad line k: its URLs' lines, shifted by the k bad lines before.
                for ((&url, slot), line) in urls.iter().zip(slots).zip(&mut lines[done + k..until + k]) {
                    let (p, at) = place(url, slot);
                    *line = line_record(url.len(), p, at == next).to_le_bytes();
                    next = line_after(data, at + url.len());
                }
            } else {
                for (&url, slot) in urls.iter().zip(slots) {
                    place(url, slot);
                }
            }
            done = until;
            if let Some(&(_, line, _)) = bad.get(k).filter(|_| REPLAYED) {
                lines[until + k] = IRREGULAR.to_le_bytes();
                next = line_after(data, offset_in(data, line) + line.len());
            }
        }
    }

    /// The chunk's line records for pass 3, in input order.
    fn line_records(&self) -> &[u8] {
        self.lines[..self.line_count].as_flattened()
    }

    /// Empties the chunk for the URLs of `partitions` partitions.
    fn clear(&mut self, partitions: usize) {
        self.line_count = 0;
        self.ends[..partitions].fill(0);
        self.counts[..partitions].fill(0);
    }

    /// Writes the records of the first `urls` URLs placed in `data` into
    /// `grouped` by partition (a counting sort within the chunk, whose bytes
    /// stay in the cache); `ends` held each of the `partitions` partitions'
    /// bytes and then holds where its records end.
    fn group(&mut self, data: &[u8], partitions: usize, urls: usize) {
        self.starts.clear();
        let mut total = 0;
        for end in &mut self.ends[..partitions] {
            self.starts.push(total);
            let bytes = std::mem::replace(end, total);
            total += bytes + COPY;
        }
        if self.grouped.len() < total {
            self.grouped.resize(total, 0);
        }
        // `ends[p]` walks partition p's region.
        for &Placed { at, header, p } in &self.placed[..urls] {
            let (at, len) = (at as usize, (header & ((1 << LEN_BITS) - 1)) as usize);
            let to = &mut self.ends[p as usize % MAX_PARTITIONS];
            let start = *to;
            *to += HEADER + len;
            let short = self.grouped.get_mut(start..start + HEADER + COPY).filter(|_| len <= COPY);
            match (short, data.get(at..at + COPY)) {
                // Fixed moves of COPY bytes (no call), the bytes past
                // the URL spilling into the next record's place or the
                // slack; the record's place and the bytes read as arrays,
                // checked once.
                (Some(record), Some(from)) => {
                    let record: &mut [u8; HEADER + COPY] = record.try_into().expect("HEADER + COPY bytes");
                    let (head, url) = record.split_at_mut(HEADER);
                    head.copy_from_slice(&header.to_le_bytes());
                    copy_fixed::<COPY>(url, from);
                }
                // Longer URLs (a fifth of the frontier x20's), and the
                // chunk's last bytes (no COPY bytes to read past the URL).
                _ => {
                    let record = &mut self.grouped[start..start + HEADER + len];
                    record[..HEADER].copy_from_slice(&header.to_le_bytes());
                    record[HEADER..].copy_from_slice(&data[at..at + len]);
                }
            }
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

/// Bytes of the write-combining blocks of pass 1 per worker, all
/// partitions together: each partition's block is [`block_size`] bytes.
/// Measured at 2,048 partitions on the frontier x20 (one set of blocks, on
/// the calling thread): 8 MiB (4 KiB blocks) and 32 MiB cost the same CPU
/// time (1.53 and 1.45 to 1.98 s, load 16), peak RSS 127 and 151 MB.
const BLOCK_BUFFERS: usize = 8 << 20;

/// The block size of a run of `partitions` partitions: [`BLOCK_BUFFERS`]
/// shared out, from 4 KiB (a page, one read of pass 2) to 1 MiB.
fn block_size(partitions: usize) -> usize {
    (BLOCK_BUFFERS / partitions.max(1)).clamp(4 << 10, 1 << 20)
}

/// Bytes of full blocks gathered before they are written to the file: one
/// `pwritev` for many blocks (of at most [`MAX_SLICES`]), no copy.
const APPEND: usize = 1 << 20;
const MAX_SLICES: usize = 1024;

/// Where one block of a partition lies in the temporary files (which
/// file, [`SplitShared::files`]). A block holds whole segments
/// ([`SEGMENT`]).
#[derive(Clone, Copy, Debug)]
struct Extent {
    offset: u64,
    len: u32,
    file: u32,
}

/// One worker's write-combining blocks of pass 1: each partition's block
/// being filled, and full blocks not yet written.
#[derive(Default)]
struct BlockSet {
    /// The blocks file this set writes to ([`SplitShared::files`]).
    file: usize,
    blocks: Vec<Vec<u8>>,
    /// Full blocks and their partitions (`pending_bytes` in all), and
    /// emptied ones to fill again.
    pending: Vec<(usize, Vec<u8>)>,
    pending_bytes: usize,
    spare: Vec<Vec<u8>>,
}

impl BlockSet {
    /// Appends partition `p`'s `records` (whose first URL is number `first`
    /// of the partition) to its block as a segment, closing the block
    /// (never a record cut in two) whenever the next record does not fit;
    /// the records after it go on in a segment of their own in the next
    /// block. A record longer than a block gets a block of its own.
    fn add(
        &mut self,
        p: usize,
        mut first: u64,
        mut records: &[u8],
        shared: &SplitShared<'_>,
    ) -> Result<(), FilterError> {
        let size = shared.block_size;
        loop {
            let block = &mut self.blocks[p];
            if block.capacity() == 0 {
                block.reserve_exact(size);
            }
            let room = size.saturating_sub(block.len() + SEGMENT);
            if records.len() <= room {
                block.extend_from_slice(&segment_header(first, records.len()));
                block.extend_from_slice(records);
                return Ok(());
            }
            // The whole records that fit, or the first one alone in an empty block.
            let (mut fit, mut count) = (0, 0);
            for (url, _) in self::records(records) {
                let next = fit + HEADER + url.len();
                if next > room && (count > 0 || !block.is_empty()) {
                    break;
                }
                (fit, count) = (next, count + 1);
            }
            if count > 0 {
                block.extend_from_slice(&segment_header(first, fit));
                block.extend_from_slice(&records[..fit]);
                first += count;
                records = &records[fit..];
            }
            self.close(p, shared)?;
            if records.is_empty() {
                return Ok(());
            }
        }
    }

    /// Queues partition `p`'s block for the file, the partition going on in
    /// a spare block.
    fn close(&mut self, p: usize, shared: &SplitShared<'_>) -> Result<(), FilterError> {
        let next = self.spare.pop().unwrap_or_default();
        let block = std::mem::replace(&mut self.blocks[p], next);
        self.pending_bytes += block.len();
        self.pending.push((p, block));
        if self.pending_bytes >= APPEND || self.pending.len() >= MAX_SLICES {
            self.write_pending(shared)?;
        }
        Ok(())
    }

    /// Writes the pending blocks to the next bytes of the file in one
    /// `pwritev` (or more, if the kernel takes fewer bytes), links them into
    /// their partitions' chains and keeps their buffers as spares.
    fn write_pending(&mut self, shared: &SplitShared<'_>) -> Result<(), FilterError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let offset = shared.file_lens[self.file].fetch_add(self.pending_bytes as u64, Ordering::Relaxed);
        let mut slices: Vec<IoSlice<'_>> = self.pending.iter().map(|(_, block)| IoSlice::new(block)).collect();
        write_all_vectored_at(&shared.files[self.file], &mut slices, offset).map_err(|e| shared.temp.failed(e))?;
        let mut chains = shared.chains.lock().unwrap_or_else(|e| e.into_inner());
        let mut at = offset;
        for (p, mut block) in self.pending.drain(..) {
            chains[p].push(Extent { offset: at, len: block.len() as u32, file: self.file as u32 });
            at += block.len() as u64;
            block.clear();
            self.spare.push(block);
        }
        self.pending_bytes = 0;
        Ok(())
    }
}

/// Writes all of `slices` to `file` from byte `offset` (`pwritev`, again
/// after a short write or an interruption).
fn write_all_vectored_at(file: &File, mut slices: &mut [IoSlice<'_>], mut offset: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    while !slices.is_empty() {
        let count = slices.len().min(MAX_SLICES) as libc::c_int;
        // SAFETY: `IoSlice` is ABI-compatible with `iovec` on Unix, and the
        // first `count` slices are valid for reads.
        let written = unsafe { libc::pwritev(file.as_raw_fd(), slices.as_ptr().cast(), count, offset as libc::off_t) };
        match written {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            n => {
                offset += n as u64;
                IoSlice::advance_slices(&mut slices, n as usize);
            }
        }
    }
    Ok(())
}

/// The sink of pass 1, on the calling thread: only where each chunk's line
/// records went in the order file, in input order (the workers wrote
/// everything else).
struct Split {
    partitions: usize,
    /// Per chunk: where its line records start in the order file, and how many.
    chunk_lines: Vec<(u64, usize)>,
}

impl Sink for Split {
    type Format = SplitFormat;

    fn format(&self, _: &super::Config) -> SplitFormat {
        SplitFormat { partitions: self.partitions }
    }
}

impl ChunkSink for Split {
    type Chunk = SplitChunk;

    fn write(&mut self, chunk: &SplitChunk) -> Result<(), FilterError> {
        self.chunk_lines.push((chunk.order_at, chunk.line_count));
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Pass 2
// ---------------------------------------------------------------------------

/// The verdict file of pass 2, mapped shared and writable: each partition's
/// region is written by the worker that classifies it, each segment's
/// verdicts at their numbers (pass 1 gave every URL of a partition its own).
struct VerdictMap {
    map: MmapRaw,
}

impl VerdictMap {
    /// Maps `file`, already of its full size (a byte per URL; one at least:
    /// a map is never empty).
    fn new(file: &File) -> io::Result<VerdictMap> {
        Ok(VerdictMap { map: MmapRaw::map_raw(file)? })
    }

    /// Writes `verdicts` from byte `at`.
    fn write(&self, at: u64, verdicts: &[u8]) {
        let at = usize::try_from(at).expect("a mapped offset");
        assert!(at + verdicts.len() <= self.map.len(), "a verdict past the file's end");
        // SAFETY: in bounds (checked); the ranges written are disjoint: each
        // URL of a partition has its own number (pass 1's counters), and
        // each partition its own region, classified by one worker.
        unsafe { std::ptr::copy_nonoverlapping(verdicts.as_ptr(), self.map.as_mut_ptr().add(at), verdicts.len()) }
    }

    /// Takes the written pages out of this process's resident memory (they
    /// stay in the page cache, and in the file).
    fn release(&self) {
        // SAFETY: the map is shared (MAP_SHARED): MADV_DONTNEED only drops
        // this process's page table entries, the dirty pages stay in the
        // page cache, and a later write or read faults them back in.
        let _ = unsafe { self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, self.map.len()) };
    }
}

/// Classifies every partition (the blocks of `chains` in `files`),
/// partition `p`'s verdicts going to bytes `starts[p]..starts[p + 1]` of
/// `verdicts`; returns the scratches used (one per worker).
fn classify_partitions<C: Classifier>(
    pipeline: &Pipeline,
    classifier: &C,
    files: &[File],
    chains: &[Vec<Extent>],
    verdicts: &VerdictMap,
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
                        block.classify(classifier, &mut scratch, (files, &chains[p]), verdicts, starts[p], temp)?;
                        if p % RELEASE_EVERY as usize == RELEASE_EVERY as usize - 1 {
                            verdicts.release();
                        }
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
    /// group order.
    urls: Vec<&'static [u8]>,
    sorted: Vec<&'static [u8]>,
    /// Each URL's group (the URLs whose headers hold the same bits of
    /// their [`authority_hash`], numbered as they first come), the table
    /// of bits (open addressing: each slot the bits plus one, 0 empty, and
    /// their group), and where each group starts in `order`, the URLs'
    /// numbers in group order.
    groups: Vec<u32>,
    /// The table, all slots empty between blocks, and the slots a block filled.
    table: Vec<(u32, u32)>,
    filled: Vec<u32>,
    group_starts: Vec<u32>,
    order: Vec<u32>,
    verdicts: Vec<Verdict>,
    verdict_bytes: Vec<u8>,
    /// The block's segments: each one's first number and its URLs.
    segments: Vec<(u64, usize)>,
}

impl PartitionBlock {
    /// Classifies one partition (its `chain` of blocks in `files`), at most
    /// [`BLOCK`] bytes of them at a time, writing each verdict to
    /// `verdicts` at byte `start` plus its URL's number.
    ///
    /// The blocks are copied out with `pread`, not read in place from a
    /// mapping of the file: with a mapping the classifier's reads spread
    /// over pages of the whole file instead of one reused buffer, and the
    /// fault-around maps the file's neighbouring pages too, which costs
    /// more user time and memory than the copy's system time.
    fn classify<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        (files, chain): (&[File], &[Extent]),
        verdicts: &VerdictMap,
        start: u64,
        temp: &TempFiles<'_>,
    ) -> Result<(), FilterError> {
        let mut used = 0;
        for (i, extent) in chain.iter().enumerate() {
            let len = extent.len as usize;
            if self.bytes.len() < used + len {
                self.bytes.resize(used + len, 0);
            }
            let file = &files[extent.file as usize];
            file.read_exact_at(&mut self.bytes[used..used + len], extent.offset).map_err(|e| temp.failed(e))?;
            used += len;
            let next_fits = chain.get(i + 1).is_some_and(|next| used + next.len as usize <= BLOCK);
            if !next_fits {
                self.classify_records(classifier, scratch, used)?;
                let mut from = 0;
                for &(first, count) in &self.segments {
                    verdicts.write(start + first, &self.verdict_bytes[from..from + count]);
                    from += count;
                }
                used = 0;
            }
        }
        Ok(())
    }

    /// Classifies the segments of `self.bytes[..end]`: their verdicts go to
    /// `verdict_bytes`, a byte each in record order, and each segment's
    /// first number and count to `segments`.
    fn classify_records<C: Classifier>(
        &mut self,
        classifier: &C,
        scratch: &mut C::Scratch,
        end: usize,
    ) -> Result<(), FilterError> {
        let data = &self.bytes[..end];
        let mut urls = reuse(std::mem::take(&mut self.urls));
        // Each URL's group: its header's hash bits (kept in `groups` until
        // all are read) looked up in a table of twice as many slots as
        // there are URLs (at most [`GROUP_SLOTS`]; the slots a block
        // filled emptied after it). Two origins of a partition share the bits (15 of
        // them) rarely; where they do, their URLs interleave, which only
        // splits their runs.
        self.groups.clear();
        self.segments.clear();
        for (first, segment) in segments(data) {
            let before = urls.len();
            for (url, bits) in records(segment) {
                urls.push(url);
                self.groups.push(bits);
            }
            self.segments.push((first, urls.len() - before));
        }
        let slots = (2 * urls.len()).next_power_of_two().clamp(64, GROUP_SLOTS);
        // Empty between blocks: only the slots a block filled are emptied
        // after it (a few dozen), not the whole table zeroed per block.
        if self.table.len() < slots {
            self.table.resize(slots, (0, 0));
        }
        let starts = &mut self.group_starts;
        starts.clear();
        starts.push(0);
        self.filled.clear();
        for bits in &mut self.groups {
            let mut slot = *bits as usize & (slots - 1);
            let group = loop {
                let (key, group) = &mut self.table[slot];
                if *key == *bits + 1 {
                    break *group;
                }
                if *key == 0 {
                    (*key, *group) = (*bits + 1, starts.len() as u32 - 1);
                    starts.push(0);
                    self.filled.push(slot as u32);
                    break *group;
                }
                slot = (slot + 1) & (slots - 1);
            };
            starts[group as usize + 1] += 1;
            *bits = group;
        }
        for &slot in &self.filled {
            self.table[slot as usize] = (0, 0);
        }
        // A counting sort by group: each origin's URLs side by side, in
        // input order, so that the classifier finds long runs without
        // hashing or sorting them again ([`Classifier::classify_grouped`]).
        for g in 1..starts.len() {
            starts[g] += starts[g - 1];
        }
        // Grown only, never shortened: a shorter block after a longer one
        // would make the next longer one zero its tail again (a `memset` of
        // up to a block's URLs, about 1,500 of them per million URLs).
        grow(&mut self.order, urls.len(), 0);
        for (i, &group) in self.groups.iter().enumerate() {
            let at = &mut starts[group as usize];
            self.order[*at as usize] = i as u32;
            *at += 1;
        }
        let mut sorted = reuse(std::mem::take(&mut self.sorted));
        sorted.extend(self.order[..urls.len()].iter().map(|&i| urls[i as usize]));
        grow(&mut self.verdicts, urls.len(), Verdict::Invalid);
        let verdicts = &mut self.verdicts[..urls.len()];
        let outcome = classifier.classify_grouped(&sorted, scratch, verdicts);
        grow(&mut self.verdict_bytes, urls.len(), 0);
        let verdict_bytes = &mut self.verdict_bytes[..urls.len()];
        for (&i, verdict) in self.order[..urls.len()].iter().zip(verdicts.iter()) {
            verdict_bytes[i as usize] = verdict.index() as u8;
        }
        self.urls = reuse(urls);
        self.sorted = reuse(sorted);
        outcome.map_err(FilterError::classifier)
    }
}

/// Makes `v` at least `len` long, new elements `value` (never shorter).
fn grow<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    if v.len() < len {
        v.resize(len, value);
    }
}

// ---------------------------------------------------------------------------
// Pass 3
// ---------------------------------------------------------------------------

/// The job of pass 3: a chunk's verdicts read back from the verdict file,
/// its lines found from their records ([`IRREGULAR`]) without splitting it
/// again.
struct Replay<'a> {
    verdicts: &'a Mmap,
    /// Per chunk, per partition: the number of the chunk's first URL in the
    /// partition (u64 LE).
    cursors: &'a Mmap,
    /// Each chunk's line records (u32 LE), at `chunk_lines[seq]`.
    order: &'a Mmap,
    chunk_lines: &'a [(u64, usize)],
    /// Where each partition's verdicts start.
    starts: &'a [u64],
}

/// The non-blank lines of a chunk from their records (pass 1's
/// [`IRREGULAR`] records of the chunk), in order and as [`Lines`] gives
/// them, each with its partition (a URL's): a URL that starts where the
/// line before it ended is sliced from its length, any other line found by
/// [`Lines`] from there.
struct ReplayLines<'d, 'r> {
    data: &'d [u8],
    records: std::slice::ChunksExact<'r, u8>,
    /// Where the next line starts, when no blank line comes first.
    at: usize,
}

impl<'d, 'r> ReplayLines<'d, 'r> {
    fn new(data: &'d [u8], records: &'r [u8]) -> Self {
        ReplayLines { data, records: records.chunks_exact(4), at: 0 }
    }
}

impl<'d> Iterator for ReplayLines<'d, '_> {
    type Item = (Line<'d>, usize);

    // Always: once per URL, as `Lines::next`.
    #[inline(always)]
    fn next(&mut self) -> Option<(Line<'d>, usize)> {
        let record = u32::from_le_bytes(self.records.next()?.try_into().expect("chunks of 4"));
        let p = (record >> LEN_BITS) as usize & ((1 << PARTITION_BITS) - 1);
        let data = self.data;
        if record & IRREGULAR == 0 {
            let url = &data[self.at..self.at + (record & ((1 << LEN_BITS) - 1)) as usize];
            self.at = line_after(data, self.at + url.len());
            return Some((Line::Url(url), p));
        }
        let found = Lines::new(&data[self.at..]).next().expect("pass 1 saw the same lines");
        let (Line::Url(bytes) | Line::Bad(bytes, _)) = found;
        self.at = line_after(data, offset_in(data, bytes) + bytes.len());
        Some((found, p))
    }
}

/// Where each partition's next verdict is, in pass 3: an entry per possible
/// partition, so that a line record's partition ([`PARTITION_BITS`]) indexes
/// it unchecked.
struct NextVerdicts(Box<[u64; MAX_PARTITIONS]>);
const _: () = assert!(MAX_PARTITIONS == 1 << PARTITION_BITS);

impl Default for NextVerdicts {
    fn default() -> Self {
        NextVerdicts(per_partition())
    }
}

impl<F: Format> ChunkJob<F> for Replay<'_> {
    type Scratch = NextVerdicts;

    fn run(
        &self,
        seq: u64,
        data: &[u8],
        recorder: &Recorder<F>,
        buffers: &mut ChunkBuffers<F::Chunk>,
        next: &mut NextVerdicts,
    ) -> Result<(), FilterError> {
        recorder.format.start(&mut buffers.output, data.len());
        let partitions = self.starts.len();
        let row = seq as usize * partitions * 8;
        let next = &mut next.0;
        for ((next, cursor), start) in
            next.iter_mut().zip(self.cursors[row..row + partitions * 8].chunks_exact(8)).zip(self.starts)
        {
            *next = start + u64::from_le_bytes(cursor.try_into().expect("chunks of 8"));
        }
        let (first, lines) = self.chunk_lines[seq as usize];
        let first = first as usize;
        for (line, p) in ReplayLines::new(data, &self.order[first..first + lines * 4]) {
            match line {
                Line::Url(url) => {
                    // Unchecked: p < 1 << PARTITION_BITS; a verdict byte is
                    // a `Verdict::index` (pass 2 writes no other).
                    let at = &mut next[p % MAX_PARTITIONS];
                    let verdict = Verdict::ALL[usize::from(self.verdicts[*at as usize]) % Verdict::ALL.len()];
                    *at += 1;
                    recorder.record(buffers, url, verdict, b"");
                }
                Line::Bad(line, problem) => recorder.record_bad_line(buffers, line, problem),
            }
        }
        if seq % RELEASE_EVERY == RELEASE_EVERY - 1 {
            robotsieve_engine::release_mapped(self.verdicts, 0, self.verdicts.len());
            robotsieve_engine::release_mapped(self.cursors, 0, self.cursors.len());
            robotsieve_engine::release_mapped(self.order, 0, self.order.len());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;
    use robotsieve_engine::ArtifactError;

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
        // The start as written decides, whichever way it is found, mixed
        // into the low bits with where the authority starts.
        let hash = |authority: &[u8], start: u64| origin_hash(authority) ^ start;
        assert_eq!(authority_hash(b"https://a.example.org:8443/x?y"), hash(b"a.example.org:8443", 8));
        assert_eq!(authority_hash(b"http://a.example.org#f"), hash(b"a.example.org", 7));
        assert_eq!(authority_hash(b"HTTP://a.example.org/"), hash(b"a.example.org", 7));
        assert_eq!(authority_hash(b"ftp://user@a.example.org"), hash(b"user@a.example.org", 6));
        assert_eq!(authority_hash(b"mailto:x@a.example"), hash(b"mailto:x@a.example", 0));
        // http and https of one host: one partition, told apart by the
        // bits a record keeps (pass 2's groups).
        let (http, https) = (authority_hash(b"http://a.example.org/"), authority_hash(b"https://a.example.org/"));
        assert_eq!(http >> 32, https >> 32);
        assert_ne!(header_of(b"x", http) >> LEN_BITS, header_of(b"x", https) >> LEN_BITS);
    }

    /// A classifier whose verdict is a function of the URL's bytes.
    struct ByLength;

    impl Classifier for ByLength {
        type Scratch = u64;
        type Error = ArtifactError;

        fn classify(&self, url: &[u8], seen: &mut u64, _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
            *seen += 1;
            Ok(Verdict::ALL[url.len() % 4])
        }
    }

    /// A mapped input of `urls`, a line each, in `dir`.
    fn input_of(urls: &[Vec<u8>], dir: &Path) -> Input {
        let data: Vec<u8> = urls.iter().flat_map(|url| url.iter().chain(b"\n")).copied().collect();
        let path = dir.join("urls");
        std::fs::write(&path, data).unwrap();
        Input::open(&path).unwrap()
    }

    /// A pipeline of `threads` workers cutting chunks of `chunk_size` bytes.
    fn pipeline(threads: usize, chunk_size: usize) -> Pipeline {
        Pipeline::new(Config { threads, chunk_size, ..Config::default() }).unwrap()
    }

    /// Runs pass 1 over `urls` (chunks of `chunk_size` bytes, `threads`
    /// workers, `partitions` partitions) and checks that each partition's
    /// blocks hold exactly its URLs, whole, with their hash bits, each number
    /// of the partition taken once, in blocks of at most the block size (or
    /// of one record); that each chunk's line records and cursor row give
    /// each URL's length, partition and number, in input order; and that
    /// pass 2 writes each verdict at its URL's number.
    fn split_and_classify(partitions: usize, urls: &[Vec<u8>], chunk_size: usize, threads: usize) {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFiles { dir: dir.path() };
        let files: Vec<File> = (0..threads).map(|_| temp.create().unwrap()).collect();
        let (cursors, verdicts) = (temp.create().unwrap(), temp.create().unwrap());
        let order = temp.create().unwrap();
        let pipeline = pipeline(threads, chunk_size);
        let shared = SplitShared::new(partitions, &files, (&cursors, &order), &temp);
        let mut split = Split { partitions, chunk_lines: Vec::new() };
        pipeline.run_chunks(&SplitLines(&shared), &mut input_of(urls, dir.path()), &mut split, None).unwrap();
        let (chains, totals) = shared.finish(&pipeline).unwrap();
        let mut expected = vec![Vec::new(); partitions];
        for url in urls {
            expected[partition_of(url, partitions)].push(url.clone());
        }
        let size = block_size(partitions);
        let mut starts = vec![0];
        let mut numbered = Vec::new();
        for (p, (chain, expected)) in chains.iter().zip(&expected).enumerate() {
            assert_eq!(totals[p], expected.len() as u64);
            let mut got = vec![None; expected.len()];
            for extent in chain {
                let mut bytes = vec![0; extent.len as usize];
                files[extent.file as usize].read_exact_at(&mut bytes, extent.offset).unwrap();
                let mut in_block = 0;
                for (first, segment) in segments(&bytes) {
                    for (k, (url, bits)) in records(segment).enumerate() {
                        assert_eq!(bits, header_of(url, authority_hash(url)) >> LEN_BITS);
                        let slot = &mut got[first as usize + k];
                        assert!(slot.is_none(), "partition {p}: two URLs numbered {}", first as usize + k);
                        *slot = Some(url.to_vec());
                        in_block += 1;
                    }
                }
                assert!(bytes.len() <= size || in_block == 1, "a block of {} bytes", bytes.len());
            }
            // Every number taken once, by the partition's URLs.
            let mut got: Vec<Vec<u8>> = got.into_iter().map(|url| url.expect("every number taken")).collect();
            numbered.push(got.clone());
            got.sort();
            let mut expected = expected.clone();
            expected.sort();
            assert!(got == expected, "partition {p}: other URLs");
            starts.push(starts[p] + totals[p]);
        }
        // The chunks' line records, in input order: every URL regular here.
        let mut urls_left = urls.iter();
        let mut row = vec![0; partitions * 8];
        for (seq, &(at, lines)) in split.chunk_lines.iter().enumerate() {
            cursors.read_exact_at(&mut row, (seq * partitions * 8) as u64).unwrap();
            let mut seen = vec![0; partitions];
            let mut records = vec![0; lines * 4];
            order.read_exact_at(&mut records, at).unwrap();
            for record in records.chunks_exact(4) {
                let record = u32::from_le_bytes(record.try_into().unwrap());
                let url = urls_left.next().expect("no more lines than URLs");
                let p = partition_of(url, partitions);
                assert_eq!(record, line_record(url.len(), p, true));
                let first = u64::from_le_bytes(row[p * 8..p * 8 + 8].try_into().unwrap()) as usize;
                assert!(numbered[p][first + seen[p]] == *url, "chunk {seq}: a URL's number");
                seen[p] += 1;
            }
        }
        assert!(urls_left.next().is_none(), "a line record for every URL");
        verdicts.set_len(urls.len().max(1) as u64).unwrap();
        let map = VerdictMap::new(&verdicts).unwrap();
        let scratches = classify_partitions(&pipeline, &ByLength, &files, &chains, &map, &starts, &temp).unwrap();
        assert_eq!(scratches.iter().sum::<u64>(), urls.len() as u64);
        drop(map);
        for (p, numbered) in numbered.iter().enumerate() {
            let mut written = vec![0; numbered.len()];
            verdicts.read_exact_at(&mut written, starts[p]).unwrap();
            let wanted: Vec<u8> = numbered.iter().map(|url| (url.len() % 4) as u8).collect();
            assert!(written == wanted, "partition {p}: verdicts out of place");
        }
    }

    #[test]
    fn each_url_is_numbered_once_in_its_partition_whichever_worker_split_it() {
        // A few hosts: each partition gets its URLs from many chunks, split
        // by several workers into blocks of their own, and some URLs are
        // longer than a block (of 4 KiB at the most partitions), one as
        // long as a URL line can be.
        let mut urls: Vec<Vec<u8>> = (0..6000)
            .map(|i| {
                let len = if i % 997 == 5 { 6000 } else { i % 90 };
                format!("https://h{}.example/{}", i % 7, "x".repeat(len)).into_bytes()
            })
            .collect();
        let mut longest = b"https://h1.example/".to_vec();
        longest.resize(robotsieve_core::line::MAX_LINE, b'y');
        urls.insert(3000, longest);
        for threads in [1, 3] {
            split_and_classify(MAX_PARTITIONS, &urls, 8 << 10, threads);
            split_and_classify(3, &urls, 8 << 10, threads);
        }
        // Many hosts, many partitions, more than a block set's worth of bytes.
        let urls: Vec<Vec<u8>> =
            (0..40_000).map(|i| format!("https://h{}.example/{i}", i * 7919 % 5000).into_bytes()).collect();
        split_and_classify(256, &urls, 16 << 10, 2);
        split_and_classify(MAX_PARTITIONS, &urls, 64 << 10, 4);
    }

    #[test]
    fn a_partition_larger_than_a_block_of_pass_2_is_classified_in_parts() {
        // One partition of more than BLOCK bytes in blocks of 1 MiB.
        let urls: Vec<Vec<u8>> = (0..(BLOCK / 100) * 3)
            .map(|i| format!("https://h.example/{i}/{}", "z".repeat(i % 160)).into_bytes())
            .collect();
        split_and_classify(1, &urls, 1 << 20, 2);
    }

    #[test]
    fn a_temporary_file_that_cannot_be_written_fails_pass_1_with_its_error() {
        let urls: Vec<Vec<u8>> = (0..2000).map(|i| format!("https://h{i}.example/").into_bytes()).collect();
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFiles { dir: dir.path() };
        let writable = || temp.create().unwrap();
        let read_only = || {
            let path = dir.path().join("read-only");
            std::fs::write(&path, b"").unwrap();
            File::open(&path).unwrap()
        };
        // The blocks (written when a worker's blocks fill, or at the end),
        // the cursor rows, the line records: each fails the run.
        for broken in 0..3 {
            let files: Vec<File> = (0..3).map(|i| if i == broken { read_only() } else { writable() }).collect();
            let shared = SplitShared::new(64, &files[..1], (&files[1], &files[2]), &temp);
            let mut split = Split { partitions: 64, chunk_lines: Vec::new() };
            let mut input = input_of(&urls, dir.path());
            let pipeline = pipeline(2, 4096);
            let outcome = pipeline.run_chunks(&SplitLines(&shared), &mut input, &mut split, None);
            let error = match outcome {
                Ok(_) => shared.finish(&pipeline).map(|_| ()).unwrap_err(),
                Err(error) => error,
            };
            match &error {
                FilterError::Output { name, source } => {
                    assert!(name.contains(&dir.path().display().to_string()), "{error}");
                    assert_eq!(source.raw_os_error(), Some(libc::EBADF), "{error}");
                }
                other => panic!("file {broken}: {other}"),
            }
        }
    }

    #[test]
    fn a_chunk_split_after_a_larger_one_leaves_nothing_of_it_behind() {
        // Pass 1's per-URL slots only grow: a chunk of fewer URLs and lines
        // split in the buffers of a larger one gives what fresh buffers give
        // (records, counts, line records), with and without pass 3.
        let large: Vec<u8> = (0..3000)
            .flat_map(|i| format!("https://h{}.example/{}\n", i % 41, "q".repeat(i % 150)).into_bytes())
            .collect();
        let small = b"https://a.example/1\n\nbad\x01line\nhttps://b.example/22\r\nhttps://a.example/333\nx\n".to_vec();
        for replayed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let temp = TempFiles { dir: dir.path() };
            let (file, cursors, order) = (temp.create().unwrap(), temp.create().unwrap(), temp.create().unwrap());
            let shared =
                SplitShared { replayed, ..SplitShared::new(7, std::slice::from_ref(&file), (&cursors, &order), &temp) };
            let recorder = Recorder { format: SplitFormat { partitions: 7 }, unknown_as: Verdict::Unknown };
            let split = |buffers: &mut ChunkBuffers<SplitChunk>, seq, data: &[u8]| {
                SplitLines(&shared).run(seq, data, &recorder, buffers, &mut ()).unwrap();
                let chunk = &buffers.output;
                let parts: Vec<Vec<u8>> = (0..7).map(|p| chunk.part(p).to_vec()).collect();
                (parts, chunk.counts[..7].to_vec(), chunk.line_records().to_vec(), buffers.counts)
            };
            let mut reused = ChunkBuffers::default();
            let first = split(&mut reused, 0, &large);
            assert_eq!(first.1.iter().sum::<u64>(), 3000);
            reused.counts = [0; 4];
            let after = split(&mut reused, 1, &small);
            let fresh = split(&mut ChunkBuffers::default(), 2, &small);
            assert_eq!(after, fresh, "replayed: {replayed}");
            // Four URLs (a line of no scheme is one here: the classifier decides), one bad line.
            assert_eq!(fresh.1.iter().sum::<u64>(), 4);
            assert_eq!(fresh.3[Verdict::Invalid.index()], 1);
            assert_eq!(fresh.2.len(), if replayed { 5 * 4 } else { 0 });
        }
    }

    /// A line as [`Lines`] gives it: its bytes, its problem if it is no
    /// URL, else its partition (of 7).
    type Seen = (Vec<u8>, Option<LineProblem>, Option<usize>);

    /// Pass 1's line records of `data` (one chunk, 7 partitions), and the
    /// lines pass 3 finds from them and those `Lines` finds, as [`Seen`].
    fn replayed_and_split(data: &[u8]) -> (Vec<u32>, Vec<Seen>, Vec<Seen>) {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFiles { dir: dir.path() };
        let (file, cursors, order) = (temp.create().unwrap(), temp.create().unwrap(), temp.create().unwrap());
        let shared = SplitShared::new(7, std::slice::from_ref(&file), (&cursors, &order), &temp);
        let recorder = Recorder { format: SplitFormat { partitions: 7 }, unknown_as: Verdict::Unknown };
        let mut buffers = ChunkBuffers::default();
        SplitLines(&shared).run(0, data, &recorder, &mut buffers, &mut ()).unwrap();
        let seen = |line: Line<'_>, p: usize| -> Seen {
            match line {
                Line::Url(url) => (url.to_vec(), None, Some(p)),
                Line::Bad(line, problem) => (line.to_vec(), Some(problem), None),
            }
        };
        let records = buffers.output.line_records();
        let replayed = ReplayLines::new(data, records).map(|(line, p)| seen(line, p)).collect();
        let split = Lines::new(data)
            .map(|line| {
                let p = match line {
                    Line::Url(url) => partition_of(url, 7),
                    Line::Bad(..) => 0,
                };
                seen(line, p)
            })
            .collect();
        let records = records.chunks_exact(4).map(|r| u32::from_le_bytes(r.try_into().unwrap())).collect();
        (records, replayed, split)
    }

    proptest::proptest! {
        /// Pass 3's walk over pass 1's line records ([`ReplayLines`]) gives the lines that
        /// splitting the chunk again gives: blank lines, CRs, CRLF, odd
        /// bytes, lines that are no URL, an over-long line, no last newline.
        #[test]
        fn lines_replayed_from_their_records_are_the_lines_split_again(
            bytes in proptest::collection::vec(proptest::sample::select(b"h:/a.\r\n\n\t\x01\xff".to_vec()), 0..300),
            long in proptest::option::of(0usize..300),
        ) {
            let mut data = bytes;
            if let Some(at) = long {
                let at = at.min(data.len());
                data.splice(at..at, std::iter::repeat_n(b'x', robotsieve_core::line::MAX_LINE + 1).chain([b'\n']));
            }
            let (_, replayed, split) = replayed_and_split(&data);
            proptest::prop_assert_eq!(replayed, split);
        }
    }

    #[test]
    fn urls_one_after_another_are_replayed_from_their_lengths() {
        // LF and CRLF ends, no blank line, a last line without a newline:
        // every URL starts where the line before it ended.
        let data = b"https://a.example/1\nhttps://b.example/2\r\nhttps://c.example/3\r\nd://x\nhttps://e.example/";
        let (records, replayed, split) = replayed_and_split(data);
        assert_eq!(records.len(), 5);
        assert!(records.iter().all(|&record| record & IRREGULAR == 0), "{records:x?}");
        assert_eq!(replayed, split);
        // A blank line, a CR line, a line that is no URL: only the lines
        // after them (and the bad line) are found with `Lines`.
        let data =
            b"https://a.example/1\n\nhttps://b.example/2\n\r\nhttps://c.example/3\nbad\x01line\nhttps://d.example/4\n";
        let (records, replayed, split) = replayed_and_split(data);
        let irregular: Vec<bool> = records.iter().map(|&record| record & IRREGULAR != 0).collect();
        assert_eq!(irregular, [false, true, true, true, false]);
        assert_eq!(replayed, split);
    }

    #[test]
    fn verdicts_are_counted_as_the_recorder_counts_them() {
        let bytes: Vec<u8> = (0..1000).map(|i| [0, 1, 2, 3, 2][i % 5]).collect();
        let mut counts = [0; 4];
        count_verdicts(&bytes, Verdict::Unknown, &mut counts);
        assert_eq!(counts, [200, 200, 400, 200]);
        // Unknown ones folded into another verdict, added to what was there.
        count_verdicts(&bytes, Verdict::Disallowed, &mut counts);
        assert_eq!(counts, [400, 800, 400, 400]);
        count_verdicts(&[], Verdict::Allowed, &mut counts);
        assert_eq!(counts, [400, 800, 400, 400]);
    }

    #[test]
    fn partition_counts_follow_the_artifacts_origins_and_the_lists_size() {
        let any = usize::MAX;
        assert_eq!(partitions_for(0, any), 2);
        assert_eq!(partitions_for(4096, any), 256);
        assert_eq!(partitions_for(31_898, any), 2048);
        assert_eq!(partitions_for(127_592, any), 8192);
        assert_eq!(partitions_for(10_000_000, any), MAX_PARTITIONS);
        // Partitions of 0.5 to 1 MiB of list whatever the artifact's origins:
        // filter_scale.sh's 3 M URLs (98 MB) 128, the frontier x20 (320 MB) 512.
        assert_eq!(partitions_for(31_898, 99_391_241), 128);
        assert_eq!(partitions_for(127_592, 99_391_241), 128);
        assert_eq!(partitions_for(127_592, 157_000_000), 256);
        assert_eq!(partitions_for(63_796, 320_713_180), 512);
        // Few origins bound the count of a large list.
        assert_eq!(partitions_for(4096, 1 << 40), 256);
        // A small list: few partitions; none at all still gives two.
        assert_eq!(partitions_for(127_592, 16 << 20), 16);
        assert_eq!(partitions_for(127_592, 1 << 20), 2);
        assert_eq!(partitions_for(127_592, 0), 2);
    }
}
