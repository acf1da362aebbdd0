//! `robotsieve meta`: page-level rules (robots meta tags and `X-Robots-Tag`
//! headers) of fetched pages for one crawler, and what decided them.

use crate::failure::{fail, Context, Failure};
use crate::input::read_all;
use robotsieve_engine::PendingFile;
use robotsieve_filter::{ChunkReader, ChunkSink, ChunkWorker, Config, FilterError, Pipeline};
use robotsieve_page::{Field, PageRules, Statement};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::http::HttpError;
use robotsieve_sources::warc::{self, WarcError, WarcReader, WarcRecord};
use serde_json::Value;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `robotsieve meta`.
#[derive(clap::Args)]
pub struct Args {
    /// The crawler: its product tokens, comma-separated (`googlebot-news,googlebot`).
    /// Tags named `robots` and tags named after any of the tokens apply.
    #[arg(long, value_name = "TOKEN[,TOKEN...]")]
    agent: String,
    /// A response header of the page, `Name: value` (repeatable). Only
    /// `X-Robots-Tag` headers are read: `--header "X-Robots-Tag: googlebot: noindex"`.
    #[arg(long, value_name = "NAME: VALUE")]
    header: Vec<String>,
    /// One JSON object per page instead of a line of `field=value`; with
    /// --warc, one per HTTP response instead of a tab-separated line, with its
    /// `url`, `status` and `error` (null unless the record could not be read,
    /// and then every other value null).
    #[arg(long)]
    json: bool,
    /// Evaluate every HTTP response record of a WARC file (gzip or plain) in
    /// parallel: one tab-separated line per record, in input order, and a
    /// summary on standard error.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["pages", "header"])]
    warc: Option<PathBuf>,
    /// With --warc: where to write the lines (through a temporary file and a
    /// rename, so a failed run leaves nothing under the name); standard output
    /// when not given.
    #[arg(short, long, value_name = "FILE", requires = "warc")]
    output: Option<PathBuf>,
    /// The old spelling of -o/--output.
    #[arg(long, value_name = "FILE", requires = "warc", conflicts_with = "output", hide = true)]
    out: Option<PathBuf>,
    // With --warc: the threads the records are evaluated on.
    #[command(flatten)]
    threads: crate::flags::Threads,
    /// HTML pages to read (`-` for standard input). Only the head is read.
    #[arg(required_unless_present = "warc")]
    pages: Vec<PathBuf>,
}

/// Runs `meta`.
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    let agent = Agent::parse(&args.agent).map_err(|e| fail!("--agent: {e}"))?;
    if args.out.is_some() {
        crate::flags::deprecated("--out", "-o/--output");
    }
    if let Some(warc) = &args.warc {
        let output = args.output.as_deref().or(args.out.as_deref());
        return run_warc(&agent, warc, output, args.json, args.threads.count());
    }
    let headers = parse_headers(&args.header)?;
    let header_refs: Vec<(&[u8], &[u8])> = headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for path in &args.pages {
        let html = read_all(path)?;
        let rules = PageRules::evaluate(&agent, &html, &header_refs);
        let page = path.display();
        for (statement, directive) in rules.problems() {
            eprintln!("robotsieve: warning: {page}: {}: {directive}", statement.origin);
        }
        let written = if args.json {
            let mut object = rules_json(&rules);
            object["page"] = serde_json::json!(page.to_string());
            writeln!(out, "{object}")
        } else if args.pages.len() > 1 {
            writeln!(out, "{page}\t{rules} (source: {})", sources_text(&rules))
        } else {
            writeln!(out, "{rules} (source: {})", sources_text(&rules))
        };
        written.context("standard output")?;
    }
    out.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Splits each `--header` at its first colon into name and value.
fn parse_headers(headers: &[String]) -> Result<Vec<(String, String)>, Failure> {
    headers
        .iter()
        .map(|h| match h.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.trim().to_string())),
            _ => Err(fail!("--header {h:?}: expected `Name: value`, e.g. \"X-Robots-Tag: noindex\"")),
        })
        .collect()
}

/// The statements that decided something, each with the fields it decided:
/// `line 12 <meta name="googlebot">: index, archive; header 1 X-Robots-Tag: follow`,
/// or `defaults` when nothing did.
fn sources_text(rules: &PageRules) -> String {
    let mut parts: Vec<(&Statement, Vec<&str>)> = Vec::new();
    for field in Field::ALL {
        if let Some(statement) = rules.decided_by(field) {
            match parts.iter_mut().find(|(s, _)| std::ptr::eq(*s, statement)) {
                Some((_, fields)) => fields.push(field.name()),
                None => parts.push((statement, vec![field.name()])),
            }
        }
    }
    if parts.is_empty() {
        return "defaults".to_string();
    }
    parts.iter().map(|(s, fields)| format!("{}: {}", s.origin, fields.join(", "))).collect::<Vec<_>>().join("; ")
}

/// The rules as a JSON object: the booleans, the limits (`-1` for none,
/// `null` for an unset image preview or no `unavailable_after`), the
/// statements read with the fields each decided, and the problems.
fn rules_json(rules: &PageRules) -> serde_json::Value {
    let limit = |l: Option<u64>| l.map_or(-1i128, i128::from);
    let statements: Vec<serde_json::Value> = rules
        .statements
        .iter()
        .map(|s| {
            let decides: Vec<&str> = Field::ALL
                .into_iter()
                .filter(|&f| rules.decided_by(f).is_some_and(|d| std::ptr::eq(d, s)))
                .map(Field::name)
                .collect();
            serde_json::json!({
                "origin": s.origin.to_string(),
                "directives": s.directives.iter().filter(|d| !d.is_problem()).map(|d| d.to_string()).collect::<Vec<_>>(),
                "decides": decides,
            })
        })
        .collect();
    let problems: Vec<serde_json::Value> = rules
        .problems()
        .map(|(s, d)| serde_json::json!({ "origin": s.origin.to_string(), "problem": d.to_string() }))
        .collect();
    serde_json::json!({
        "index": rules.index,
        "follow": rules.follow,
        "archive": rules.archive,
        "snippet": rules.snippet,
        "imageindex": rules.image_index,
        "translate": rules.translate,
        "indexifembedded": rules.index_if_embedded,
        "max_snippet": limit(rules.max_snippet),
        "max_image_preview": rules.max_image_preview.map(|p| p.name()),
        "max_video_preview": limit(rules.max_video_preview),
        "unavailable_after": rules.unavailable_after.map(|t| t.to_string()),
        "statements": statements,
        "problems": problems,
    })
}

/// The most records in a chunk of `meta --warc`, and the bytes of record
/// blocks after which a chunk ends sooner: enough records per chunk that
/// handing chunks to the workers costs nothing, few enough bytes that the
/// chunks in flight (`threads × chunks_per_thread`) bound memory.
const CHUNK_RECORDS: usize = 256;
const CHUNK_BYTES: usize = 16 << 20;

/// The columns of `meta --warc` output.
const TSV_HEADER: &str = "url\tstatus\tindex\tfollow\tarchive\tsnippet\timageindex\ttranslate\tindexifembedded\t\
                          max-snippet\tmax-image-preview\tmax-video-preview\tunavailable_after\tnote";

/// Counts for the summary of `meta --warc`, of one chunk or of a run.
#[derive(Default)]
struct Summary {
    records: u64,
    responses: u64,
    noindex: u64,
    nofollow: u64,
    with_problems: u64,
    errors: u64,
}

impl Summary {
    /// Adds a chunk's counts to the run's.
    fn add(&mut self, chunk: &Summary) {
        self.records += chunk.records;
        self.responses += chunk.responses;
        self.noindex += chunk.noindex;
        self.nofollow += chunk.nofollow;
        self.with_problems += chunk.with_problems;
        self.errors += chunk.errors;
    }
}

/// A chunk of `meta --warc` on the engine's ordered pipeline: records read
/// in input order, their lines made on a worker, and how they count.
#[derive(Default)]
struct WarcChunk {
    records: Vec<WarcRecord>,
    /// The output lines of the records, each with its newline.
    lines: Vec<u8>,
    summary: Summary,
}

/// Reads a WARC file into [`WarcChunk`]s on the thread that runs the
/// pipeline (the reader, a boxed decoder, stays on it).
struct WarcChunks<R: std::io::BufRead> {
    records: WarcReader<R>,
    /// The file's name, for errors.
    name: String,
    /// Damage found after the records of the last chunk: the next call's error.
    damage: Option<WarcError>,
}

impl<R: std::io::BufRead> ChunkReader for WarcChunks<R> {
    type Chunk = WarcChunk;

    fn read_next(&mut self, chunk: &mut WarcChunk) -> Result<bool, FilterError> {
        chunk.records.clear();
        chunk.lines.clear();
        chunk.summary = Summary::default();
        let damaged =
            |name: &str, error: WarcError| FilterError::Record { name: name.to_string(), source: error.into() };
        if let Some(error) = self.damage.take() {
            return Err(damaged(&self.name, error));
        }
        let mut bytes = 0;
        while chunk.records.len() < CHUNK_RECORDS && bytes < CHUNK_BYTES {
            match self.records.next() {
                Some(Ok(record)) => {
                    bytes += record.block.len();
                    chunk.records.push(record);
                }
                // The records before the damage are written first.
                Some(Err(error)) if !chunk.records.is_empty() => {
                    self.damage = Some(error);
                    break;
                }
                Some(Err(error)) => return Err(damaged(&self.name, error)),
                None => break,
            }
        }
        Ok(!chunk.records.is_empty())
    }
}

/// Evaluates the records of a [`WarcChunk`] into its lines, on a worker.
struct WarcLines<'a> {
    agent: &'a Agent,
    json: bool,
}

impl ChunkWorker<WarcChunk> for WarcLines<'_> {
    fn work(&self, chunk: &mut WarcChunk) -> Result<(), FilterError> {
        let summary = &mut chunk.summary;
        summary.records = chunk.records.len() as u64;
        for result in chunk.records.iter().filter_map(|r| record_line(self.agent, r, self.json)) {
            summary.responses += 1;
            match &result.rules {
                Some(rules) => {
                    summary.noindex += u64::from(!rules.index);
                    summary.nofollow += u64::from(!rules.follow);
                    summary.with_problems += u64::from(rules.problems().next().is_some());
                }
                None => summary.errors += 1,
            }
            chunk.lines.extend_from_slice(result.line.as_bytes());
            chunk.lines.push(b'\n');
        }
        Ok(())
    }
}

/// Where `meta --warc` writes its chunks, in input order, and the run's counts.
struct WarcSink<W: Write> {
    output: W,
    /// The output's name, for errors.
    name: String,
    summary: Summary,
}

impl<W: Write> ChunkSink for WarcSink<W> {
    type Chunk = WarcChunk;

    fn write(&mut self, chunk: &WarcChunk) -> Result<(), FilterError> {
        self.summary.add(&chunk.summary);
        self.output.write_all(&chunk.lines).map_err(|source| FilterError::Output { name: self.name.clone(), source })
    }

    fn finish(&mut self) -> Result<(), FilterError> {
        self.output.flush().map_err(|source| FilterError::Output { name: self.name.clone(), source })
    }
}

/// What one record gave: its output line, and how it counts.
struct RecordResult {
    line: String,
    rules: Option<PageRules>,
}

/// The line for one WARC record (a JSON object with `json`), or `None` for
/// records that are not HTTP responses (requests, metadata, warcinfo,
/// revisits, DNS).
fn record_line(agent: &Agent, record: &WarcRecord, json: bool) -> Option<RecordResult> {
    if record.record_type().map(str::trim) != Some("response") || !record.is_http() {
        return None;
    }
    if json {
        return Some(record_json(agent, record));
    }
    let url = record.target_uri().unwrap_or("").replace(['\t', '\n', '\r'], " ");
    let empty_fields = "\t-".repeat(Field::ALL.len());
    let failed = |status: &str, error: HttpError| RecordResult {
        line: format!("{url}\t{status}{empty_fields}\terror: {}", error.to_string().replace(['\t', '\n', '\r'], " ")),
        rules: None,
    };
    let response = match record.http_response() {
        Ok(response) => response,
        Err(error) => return Some(failed("-", error)),
    };
    let rules = match PageRules::evaluate_response(agent, &response) {
        Ok(rules) => rules,
        Err(error) => return Some(failed(&response.status.to_string(), error)),
    };
    let mut line = format!("{url}\t{}", response.status);
    for field in Field::ALL {
        line.push('\t');
        line.push_str(&rules.value_text(field));
    }
    line.push('\t');
    let problems: Vec<String> = rules.problems().map(|(s, d)| format!("{}: {d}", s.origin)).collect();
    line.push_str(&problems.join("; ").replace(['\t', '\n', '\r'], " "));
    Some(RecordResult { line, rules: Some(rules) })
}

/// The JSON object of one HTTP response record: the page's rules as for a
/// page (every value null when the record cannot be evaluated), its `url`,
/// `status` (null without a status line) and `error` (null, or why not).
fn record_json(agent: &Agent, record: &WarcRecord) -> RecordResult {
    let (status, evaluated) = match record.http_response() {
        Ok(response) => (Some(response.status), PageRules::evaluate_response(agent, &response)),
        Err(message) => (None, Err(message)),
    };
    let mut object = rules_json(evaluated.as_ref().unwrap_or(&PageRules::default()));
    if evaluated.is_err() {
        object.as_object_mut().expect("rules_json makes an object").values_mut().for_each(|v| *v = Value::Null);
    }
    object["url"] = record.target_uri().into();
    object["status"] = status.into();
    object["error"] = evaluated.as_ref().err().map(HttpError::to_string).into();
    RecordResult { line: object.to_string(), rules: evaluated.ok() }
}

/// `meta --warc`: on the engine's ordered pipeline, the records are read
/// in chunks on this thread, each chunk evaluated on a worker, and the
/// lines written in input order.
fn run_warc(
    agent: &Agent,
    path: &Path,
    out_path: Option<&Path>,
    json: bool,
    threads: usize,
) -> Result<ExitCode, Failure> {
    let started = Instant::now();
    let pipeline = Pipeline::new(Config { threads, ..Config::default() })?;
    // With --output, lines go to a temporary file renamed into place only when
    // every record was read; a failed run leaves nothing under the name.
    let mut pending = out_path.map(PendingFile::create).transpose().map_err(Failure::from)?;
    let out_name = out_path.map_or_else(|| "standard output".to_string(), |p| p.display().to_string());
    let stdout = std::io::stdout();
    let output: BufWriter<Box<dyn Write + '_>> = match pending.as_mut() {
        Some(file) => BufWriter::with_capacity(1 << 20, Box::new(file)),
        None => BufWriter::with_capacity(1 << 20, Box::new(stdout.lock())),
    };
    let mut sink = WarcSink { output, name: out_name, summary: Summary::default() };
    if !json {
        writeln!(sink.output, "{TSV_HEADER}").context(&sink.name)?;
    }
    let records = warc::open(path).map_err(|e| fail!("{}: {e}", path.display()))?;
    let mut reader = WarcChunks { records, name: path.display().to_string(), damage: None };
    pipeline.run_chunks_of(&mut reader, &WarcLines { agent, json }, &mut sink)?;
    let summary = std::mem::take(&mut sink.summary);
    drop(sink);
    if let Some(file) = pending {
        file.commit().map_err(Failure::from)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "robotsieve: {}: {} records, {} HTTP responses: {} noindex, {} nofollow, {} with unknown or invalid \
         directives, {} unreadable; {:.0} responses/s over {:.2} s on {} threads",
        path.display(),
        summary.records,
        summary.responses,
        summary.noindex,
        summary.nofollow,
        summary.with_problems,
        summary.errors,
        summary.responses as f64 / seconds.max(1e-9),
        seconds,
        pipeline.threads(),
    );
    Ok(ExitCode::SUCCESS)
}
