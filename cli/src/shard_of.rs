//! `robotsieve shard-of`: which shard of a set each URL's origin is in, so
//! that other tools can partition URL lists as `compile --shards` does; and
//! with `--split`, a URL list partitioned so: one part per shard, each
//! grouped by origin, for workers that hold only their own shard
//! (`filter --shard K/N`).
//!
//! The split sorts the list by (shard, origin, input line) with the
//! external sort the bounded corpus resolution uses, so it runs in the
//! memory `--memory` gives it whatever the list's size: beyond it, sorted
//! runs spill to unnamed temporary files and are merged.

use crate::failure::{fail, Context, Failure};
use robotsieve_core::url::{origin_hash, KeyBuf};
use robotsieve_engine::PendingFile;
use robotsieve_engine::{shard_file_name, shard_of_hash, shard_of_url};
use robotsieve_sources::runs::{read_or_end, SortedRuns, Spill};
use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `robotsieve shard-of`.
#[derive(clap::Args)]
#[command(after_help = "With --split, every file is written under a temporary name in DIR and renamed into place \
once complete; the whole list is read and sorted before the first part is written, so bad input leaves no part \
behind. Exit status 2 names the file and line of input that cannot be read.")]
pub struct Args {
    /// The number of shards of the set.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    shards: u32,
    /// One JSON object per URL instead of a line: `{"shard": K, "file": FILE, "url": URL}`.
    #[arg(long, conflicts_with = "split")]
    json: bool,
    /// URLs (or `scheme://host[:port]` origins).
    #[arg(value_name = "URL", required_unless_present = "split", conflicts_with = "split")]
    urls: Vec<String>,
    /// Split the list --urls into one file per shard in DIR, named as the
    /// set's files with `.txt` (`00003-of-00064.txt`), each grouped by
    /// origin (input order within an origin), every shard's file written
    /// even when empty; lines that are no URL go to `DIR/invalid.txt`.
    #[arg(long, value_name = "DIR", requires = "list")]
    split: Option<PathBuf>,
    /// The URL list to split, one per line (LF or CRLF; blank lines are
    /// skipped). `-` reads standard input; a name ending in `.gz` or `.zst`
    /// is decompressed.
    #[arg(long = "urls", id = "list", value_name = "FILE", requires = "split")]
    list: Option<PathBuf>,
    /// With --split: beside each part, its URLs' input line numbers (from
    /// 1, blank lines counted), one per URL in the part's order
    /// (`00003-of-00064.lines`, and `invalid.lines`), to put results back
    /// in input order.
    #[arg(long, requires = "split")]
    line_numbers: bool,
    /// With --split: the memory budget of the sort in bytes (suffixes K, M,
    /// G), as compile's: beyond it, sorted runs spill to temporary files.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = crate::flags::parse_bytes)]
    memory: usize,
}

/// Runs `shard-of`: one line per URL, `K<TAB>FILE<TAB>URL` (or a JSON object); a URL without
/// an origin fails the run (exit 2) naming it, after the lines before it. With `--split`, the
/// list's parts.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    if let (Some(dir), Some(list)) = (&args.split, &args.list) {
        return split(dir, list, args.shards, args.line_numbers, args.memory);
    }
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

/// The name of shard `index` of `count`'s part in a split's directory,
/// without its extension (`.txt`, `.lines`): the set's file name's.
fn part_stem(index: u32, count: u32) -> String {
    let name = shard_file_name(index, count);
    name.strip_suffix(".rsv").unwrap_or(&name).to_string()
}

/// A URL of the list on its way to its part: ordered by shard, then by
/// origin (hash, then key), then input line, which no two share.
struct Routed {
    shard: u32,
    hash: u64,
    line: u64,
    /// The origin key's length: `bytes` is the key, then the URL.
    key_len: u32,
    bytes: Box<[u8]>,
}

impl Routed {
    fn key(&self) -> &[u8] {
        &self.bytes[..self.key_len as usize]
    }

    fn url(&self) -> &[u8] {
        &self.bytes[self.key_len as usize..]
    }
}

impl Ord for Routed {
    fn cmp(&self, other: &Routed) -> Ordering {
        (self.shard, self.hash, self.key(), self.line).cmp(&(other.shard, other.hash, other.key(), other.line))
    }
}

impl PartialOrd for Routed {
    fn partial_cmp(&self, other: &Routed) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Routed {
    fn eq(&self, other: &Routed) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Routed {}

impl Spill for Routed {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut head = [0u8; 28];
        head[..4].copy_from_slice(&self.shard.to_le_bytes());
        head[4..12].copy_from_slice(&self.hash.to_le_bytes());
        head[12..20].copy_from_slice(&self.line.to_le_bytes());
        head[20..24].copy_from_slice(&self.key_len.to_le_bytes());
        head[24..28].copy_from_slice(&(self.bytes.len() as u32).to_le_bytes());
        out.write_all(&head)?;
        out.write_all(&self.bytes)
    }

    fn read_from(input: &mut impl Read) -> io::Result<Option<Routed>> {
        let mut head = [0u8; 28];
        if !read_or_end(input, &mut head)? {
            return Ok(None);
        }
        let u32_at = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
        let mut bytes = vec![0u8; u32_at(24) as usize].into_boxed_slice();
        if !bytes.is_empty() && !read_or_end(input, &mut bytes)? {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a temporary run is cut short"));
        }
        Ok(Some(Routed { shard: u32_at(0), hash: u64_at(4), line: u64_at(12), key_len: u32_at(20), bytes }))
    }

    fn memory(&self) -> usize {
        std::mem::size_of::<Routed>() + self.bytes.len()
    }
}

/// The URL list at `path`, read line by line: standard input for `-`,
/// decompressed for `.gz` and `.zst`.
fn open_list(path: &Path) -> Result<Box<dyn BufRead>, Failure> {
    let name = path.display();
    if path == Path::new("-") {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    let file = File::open(path).context(&name)?;
    let reader: Box<dyn Read> = match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file))),
        Some("zst") => Box::new(zstd::Decoder::new(file).context(&name)?),
        _ => Box::new(file),
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, reader)))
}

/// One file of a split being written: its text, and its line numbers when asked for.
struct Part {
    text: BufWriter<PendingFile>,
    lines: Option<BufWriter<PendingFile>>,
}

impl Part {
    /// Creates `DIR/STEM.txt` (and `DIR/STEM.lines`) under temporary names.
    fn create(dir: &Path, stem: &str, line_numbers: bool) -> Result<Part, Failure> {
        let create = |extension: &str| -> Result<BufWriter<PendingFile>, Failure> {
            let file = PendingFile::create(&dir.join(format!("{stem}.{extension}")))?;
            Ok(BufWriter::with_capacity(1 << 20, file))
        };
        Ok(Part { text: create("txt")?, lines: if line_numbers { Some(create("lines")?) } else { None } })
    }

    /// Appends a line of the list and its number.
    fn push(&mut self, line: &[u8], number: u64) -> io::Result<()> {
        self.text.write_all(line)?;
        self.text.write_all(b"\n")?;
        if let Some(lines) = &mut self.lines {
            writeln!(lines, "{number}")?;
        }
        Ok(())
    }

    /// Renames the files into place.
    fn commit(self) -> Result<(), Failure> {
        for file in std::iter::once(self.text).chain(self.lines) {
            let name = file.get_ref().path().display().to_string();
            let file = file.into_inner().map_err(|e| fail!("{name}: cannot write: {}", e.error()))?;
            file.commit()?;
        }
        Ok(())
    }

    /// What to name a write error of this part.
    fn name(&self) -> String {
        self.text.get_ref().path().display().to_string()
    }
}

/// Splits the list at `list` into `count` parts in `dir` (see [`Args::split`]).
fn split(dir: &Path, list: &Path, count: u32, line_numbers: bool, memory: usize) -> Result<ExitCode, Failure> {
    std::fs::create_dir_all(dir).context(dir.display())?;
    let mut input = open_list(list)?;
    let mut invalid = Part::create(dir, "invalid", line_numbers)?;
    let mut sort = SortedRuns::new(memory);
    let mut key = KeyBuf::new();
    let mut line = Vec::new();
    let (mut number, mut urls, mut invalids) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        number += 1;
        let read = input.read_until(b'\n', &mut line).map_err(|e| fail!("{}:{number}: {e}", list.display()))?;
        if read == 0 {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.is_empty() {
            continue;
        }
        let Ok(origin) = key.parse(text) else {
            invalid.push(text, number).map_err(|e| fail!("{}: cannot write: {e}", invalid.name()))?;
            invalids += 1;
            continue;
        };
        let hash = origin_hash(origin.key);
        let mut bytes = Vec::with_capacity(origin.key.len() + text.len());
        bytes.extend_from_slice(origin.key);
        bytes.extend_from_slice(text);
        let key_len = origin.key.len() as u32;
        let routed = Routed { shard: shard_of_hash(hash, count), hash, line: number, key_len, bytes: bytes.into() };
        sort.push(routed).map_err(|e| fail!("{}:{number}: a temporary sort file: {e}", list.display()))?;
        urls += 1;
    }
    drop(input);
    let spilled = sort.runs();
    let sort_failed = |e: io::Error| fail!("a temporary sort file of {}: {e}", list.display());
    let mut merged = sort.finish().map_err(sort_failed)?.peekable();
    for k in 0..count {
        let mut part = Part::create(dir, &part_stem(k, count), line_numbers)?;
        while let Some(next) = merged.next_if(|r| r.as_ref().map_or(true, |r| r.shard == k)) {
            let routed = next.map_err(sort_failed)?;
            part.push(routed.url(), routed.line).map_err(|e| fail!("{}: cannot write: {e}", part.name()))?;
        }
        part.commit()?;
    }
    invalid.commit()?;
    eprintln!(
        "robotsieve: {urls} URLs in {count} parts in {}, {invalids} lines that are no URL in invalid.txt ({spilled} sorted runs spilled)",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
