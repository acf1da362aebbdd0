//! Where records go: `OUT.partial` as they complete, in frames flushed
//! every few hundred records and every second (zstd or gzip by `OUT`'s
//! extension, else plain JSON Lines), renamed to `OUT` when the run ends.
//! An interrupted run keeps `OUT.partial`; [`resume`] cuts it back to its
//! last complete record and says which URLs it holds.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Records buffered before a frame is written.
pub const FRAME_RECORDS: usize = 256;

/// How the output is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Plain JSON Lines.
    Plain,
    /// A gzip member per frame.
    Gzip,
    /// A zstd frame per frame.
    Zstd,
}

impl Encoding {
    /// The encoding `path`'s extension names (`.zst`, `.gz`, else plain).
    pub fn of(path: &Path) -> Encoding {
        match path.extension().and_then(|e| e.to_str()) {
            Some("zst") => Encoding::Zstd,
            Some("gz") => Encoding::Gzip,
            _ => Encoding::Plain,
        }
    }

    fn encode(self, lines: &[u8]) -> io::Result<Vec<u8>> {
        match self {
            Encoding::Plain => Ok(lines.to_vec()),
            Encoding::Zstd => zstd::bulk::compress(lines, 3),
            Encoding::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
                e.write_all(lines)?;
                e.finish()
            }
        }
    }
}

/// The name of `out`'s file in progress: `OUT.partial`.
pub fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Where an output stands: the file in progress, or standard output.
enum Sink {
    File { file: File, partial: PathBuf, out: PathBuf },
    Stdout(io::Stdout),
}

/// Writes record lines in frames (see the module documentation).
pub struct RecordWriter {
    sink: Sink,
    encoding: Encoding,
    lines: Vec<u8>,
    records: usize,
}

impl RecordWriter {
    /// Writes to `OUT.partial` (a new file, or one [`resume`] has cut back
    /// when `append`), or to standard output for `-`.
    pub fn create(out: &Path, append: bool) -> io::Result<RecordWriter> {
        if out == Path::new("-") {
            return Ok(RecordWriter {
                sink: Sink::Stdout(io::stdout()),
                encoding: Encoding::Plain,
                lines: Vec::new(),
                records: 0,
            });
        }
        let partial = partial_path(out);
        let file = if append {
            let mut f = OpenOptions::new().write(true).open(&partial)?;
            f.seek(SeekFrom::End(0))?;
            f
        } else {
            File::create(&partial)?
        };
        Ok(RecordWriter {
            sink: Sink::File { file, partial, out: out.to_owned() },
            encoding: Encoding::of(out),
            lines: Vec::new(),
            records: 0,
        })
    }

    /// Adds the lines of one chain (whole records: a frame never splits one).
    pub fn add(&mut self, lines: &[u8], records: usize) -> io::Result<()> {
        self.lines.extend_from_slice(lines);
        self.records += records;
        if self.records >= FRAME_RECORDS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered records as one frame.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let frame = self.encoding.encode(&self.lines)?;
        match &mut self.sink {
            Sink::File { file, .. } => file.write_all(&frame)?,
            Sink::Stdout(out) => {
                let mut out = out.lock();
                out.write_all(&frame)?;
                out.flush()?;
            }
        }
        self.lines.clear();
        self.records = 0;
        Ok(())
    }

    /// Flushes and syncs; when `complete`, renames `OUT.partial` to `OUT`.
    pub fn finish(mut self, complete: bool) -> io::Result<()> {
        self.flush()?;
        if let Sink::File { file, partial, out } = &self.sink {
            file.sync_all()?;
            if complete {
                std::fs::rename(partial, out)?;
            }
        }
        Ok(())
    }

    /// The file being written, for messages.
    pub fn name(&self) -> String {
        match &self.sink {
            Sink::File { partial, .. } => partial.display().to_string(),
            Sink::Stdout(_) => "standard output".to_owned(),
        }
    }
}

/// What an interrupted run left: the URLs of its complete records.
#[derive(Debug, Default)]
pub struct Held {
    /// Every record's URL (redirect hops included).
    pub urls: Vec<String>,
    /// Bytes of the file kept.
    pub kept: u64,
    /// Bytes cut off (an incomplete last frame or line).
    pub cut: u64,
}

/// Cuts `OUT.partial` back to its last complete record (frame for zstd
/// and gzip, line for plain) and returns what it holds. No file: nothing held.
pub fn resume(out: &Path) -> io::Result<Held> {
    let partial = partial_path(out);
    let mut data = Vec::new();
    match File::open(&partial) {
        Ok(mut f) => f.read_to_end(&mut data)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Held::default()),
        Err(e) => return Err(e),
    };
    let mut held = Held::default();
    let mut pos = 0usize;
    while pos < data.len() {
        let rest = &data[pos..];
        let Some((used, lines)) = next_frame(Encoding::of(out), rest) else { break };
        let Some(urls) = record_urls(&lines) else { break };
        held.urls.extend(urls);
        pos += used;
    }
    held.kept = pos as u64;
    held.cut = (data.len() - pos) as u64;
    OpenOptions::new().write(true).open(&partial)?.set_len(held.kept)?;
    Ok(held)
}

/// The first complete frame of `data`: its length and its lines.
fn next_frame(encoding: Encoding, data: &[u8]) -> Option<(usize, Vec<u8>)> {
    match encoding {
        Encoding::Plain => {
            let end = data.iter().position(|&b| b == b'\n')? + 1;
            Some((end, data[..end].to_vec()))
        }
        Encoding::Zstd => {
            let size = zstd::zstd_safe::find_frame_compressed_size(data).ok()?;
            let lines = zstd::stream::decode_all(&data[..size]).ok()?;
            Some((size, lines))
        }
        Encoding::Gzip => {
            let mut rest = data;
            let mut lines = Vec::new();
            flate2::bufread::GzDecoder::new(&mut rest).read_to_end(&mut lines).ok()?;
            Some((data.len() - rest.len(), lines))
        }
    }
}

/// The `url` of each line, `None` when a line is no complete record.
fn record_urls(lines: &[u8]) -> Option<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Url {
        url: String,
    }
    if !lines.ends_with(b"\n") {
        return None;
    }
    lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Url>(l).ok().map(|u| u.url))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(url: &str) -> Vec<u8> {
        format!("{{\"url\":\"{url}\",\"status\":200}}\n").into_bytes()
    }

    #[test]
    fn resume_cuts_an_incomplete_last_frame() {
        for ext in ["jsonl", "jsonl.gz", "jsonl.zst"] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join(format!("out.{ext}"));
            let mut w = RecordWriter::create(&out, false).unwrap();
            w.add(&line("http://a/robots.txt"), 1).unwrap();
            w.flush().unwrap();
            w.add(&[line("http://b/robots.txt"), line("http://c/robots.txt")].concat(), 2).unwrap();
            w.finish(false).unwrap();
            let whole = std::fs::metadata(partial_path(&out)).unwrap().len();
            // A kill in the middle of the second frame.
            OpenOptions::new().write(true).open(partial_path(&out)).unwrap().set_len(whole - 3).unwrap();
            // Plain JSON Lines keeps every whole line; a frame goes whole or not at all.
            let kept: &[&str] = match ext {
                "jsonl" => &["http://a/robots.txt", "http://b/robots.txt"],
                _ => &["http://a/robots.txt"],
            };
            let held = resume(&out).unwrap();
            assert_eq!(held.urls, kept, "{ext}");
            assert!(held.cut > 0);
            let mut w = RecordWriter::create(&out, true).unwrap();
            w.add(&line("http://d/robots.txt"), 1).unwrap();
            w.finish(false).unwrap();
            let held = resume(&out).unwrap();
            assert_eq!(held.urls, [kept, &["http://d/robots.txt"]].concat(), "{ext}");
            assert_eq!(held.cut, 0);
        }
    }
}
