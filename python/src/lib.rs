//! `robotsieve._native`: the engine, the compiler and the fetcher as the
//! Python package sees them. The Python side (`robotsieve/__init__.py`) turns what this
//! module returns into pyarrow arrays and Protego's method names; everything
//! that decides a verdict is the engine's public API, not a copy of it.

mod arrow;
mod fetch;
mod head;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use robotsieve_compiler::{compile_corpus, CompileError, CompileOptions, Outputs};
use robotsieve_core::url::OriginKey;
use robotsieve_core::url::PathMode;
use robotsieve_core::url::{origin_hash, KeyBuf};
use robotsieve_core::Verdict;
use robotsieve_engine::{shard_file_name, shard_of_hash, ShardSet, SHARD_SCHEME};
use robotsieve_engine::{AgentClassifier, Reason, Scratch};
use robotsieve_engine::{WriteError, DEFAULT_MEMORY};
use robotsieve_filter::BATCH;
use robotsieve_robotstxt::group::UserAgent;
use robotsieve_robotstxt::parse::Field;
use robotsieve_robotstxt::{Agent, Group};
use robotsieve_sources::bounded::BoundedCorpus;
use robotsieve_sources::corpus::{record_key, resolve_location, StatusClass, MAX_REDIRECTS};
use robotsieve_sources::Timestamp;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

create_exception!(_native, RobotsieveError, PyException, "Every error robotsieve raises.");
create_exception!(_native, ArtifactError, RobotsieveError, "An artifact that cannot be opened or is damaged.");
create_exception!(_native, AgentError, RobotsieveError, "An invalid agent, or one the artifact was not compiled for.");
create_exception!(
    _native,
    CorpusError,
    RobotsieveError,
    "A fetch record that cannot be read, or an artifact that cannot be written."
);

fn path_mode(raw_urls: bool) -> PathMode {
    if raw_urls {
        PathMode::Raw
    } else {
        PathMode::Escaped
    }
}

/// A compiled artifact or shard set, memory-mapped (`robotsieve.Artifact`).
#[pyclass(frozen, module = "robotsieve._native")]
struct Artifact {
    artifact: ShardSet,
    path: PathBuf,
}

/// The columns of a classified batch, as Arrow buffers.
#[derive(Default)]
struct Columns {
    /// Verdict codes, in `Verdict::ALL` order.
    verdicts: Vec<u8>,
    lines: Vec<u32>,
    line_valid: Vec<bool>,
    rules: Strings,
    reasons: Strings,
}

/// A large_string column under construction.
#[derive(Default)]
struct Strings {
    offsets: Vec<i64>,
    data: Vec<u8>,
    valid: Vec<bool>,
}

impl Strings {
    fn push(&mut self, value: Option<std::fmt::Arguments<'_>>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if let Some(args) = value {
            let _ = std::io::Write::write_fmt(&mut self.data, args);
        }
        self.valid.push(value.is_some());
        self.offsets.push(self.data.len() as i64);
    }

    fn push_bytes(&mut self, value: Option<&[u8]>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if let Some(bytes) = value {
            self.data.extend_from_slice(bytes);
        }
        self.valid.push(value.is_some());
        self.offsets.push(self.data.len() as i64);
    }

    fn append(&mut self, other: Strings) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let base = self.data.len() as i64;
        self.offsets.extend(other.offsets.iter().skip(1).map(|o| o + base));
        self.data.extend_from_slice(&other.data);
        self.valid.extend_from_slice(&other.valid);
    }

    fn into_py<'py>(mut self, py: Python<'py>) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let offsets: Vec<u8> = self.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
        (PyBytes::new(py, &bitmap(&self.valid)), PyBytes::new(py, &offsets), PyBytes::new(py, &self.data))
    }
}

/// An Arrow validity bitmap.
fn bitmap(valid: &[bool]) -> Vec<u8> {
    let mut bits = vec![0u8; valid.len().div_ceil(8)];
    for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        bits[i / 8] |= 1 << (i % 8);
    }
    bits
}

impl Columns {
    /// Classifies `urls` (a null is invalid) with one scratch; an error
    /// when a group the URLs reach is damaged.
    fn classify(
        classifier: &AgentClassifier<'_>,
        urls: &[Option<&[u8]>],
        explain: bool,
    ) -> Result<Columns, robotsieve_engine::ArtifactError> {
        let mut out = Columns::default();
        let mut scratch = Scratch::default();
        let mut batch: Vec<&[u8]> = Vec::with_capacity(BATCH);
        for chunk in urls.chunks(BATCH) {
            batch.clear();
            batch.extend(chunk.iter().map(|u| u.unwrap_or(b"")));
            let answers = classifier.answers(&batch, &mut scratch, explain)?;
            for (url, answer) in chunk.iter().zip(answers) {
                out.verdicts.push(Verdict::ALL.iter().position(|v| *v == answer.verdict).unwrap_or(3) as u8);
                match answer.reason {
                    Reason::Rule(rule) => {
                        out.lines.push(rule.line);
                        out.line_valid.push(true);
                        out.rules.push(Some(format_args!("{rule}")));
                    }
                    _ => {
                        out.lines.push(0);
                        out.line_valid.push(false);
                        out.rules.push(None);
                    }
                }
                match (url, answer.reason) {
                    (None, _) => out.reasons.push(Some(format_args!("null URL"))),
                    (_, Reason::NotAsked) => out.reasons.push(None),
                    (_, reason) => out.reasons.push(Some(format_args!("{reason}"))),
                }
            }
        }
        Ok(out)
    }

    fn append(&mut self, other: Columns) {
        self.verdicts.extend_from_slice(&other.verdicts);
        self.lines.extend_from_slice(&other.lines);
        self.line_valid.extend_from_slice(&other.line_valid);
        self.rules.append(other.rules);
        self.reasons.append(other.reasons);
    }
}

type StringBuffers<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>);

#[pymethods]
impl Artifact {
    /// Maps and validates the artifact file, or the shard set directory, at
    /// `path`; with `shard=(K, N)`, the file of shard K of N alone, checked
    /// against its header, which refuses URLs of other shards.
    #[new]
    #[pyo3(signature = (path, shard=None))]
    fn new(path: PathBuf, shard: Option<(u32, u32)>) -> PyResult<Artifact> {
        let artifact = match shard {
            None => ShardSet::open(&path),
            Some((index, count)) => ShardSet::open_shard(&path, index, count),
        };
        let artifact = artifact.map_err(|e| ArtifactError::new_err(e.to_string()))?;
        Ok(Artifact { artifact, path })
    }

    /// For a shard opened alone: (K, N); `None` otherwise.
    #[getter]
    fn shard(&self) -> Option<(u32, u32)> {
        self.artifact.lone_shard().map(|s| (s.index, s.count))
    }

    /// Checks every byte of the artifact or shard set; raises ArtifactError
    /// naming the first damage.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.artifact.verify()).map_err(|e| ArtifactError::new_err(e.to_string()))
    }

    /// The agents the artifact was compiled for.
    #[getter]
    fn agents(&self) -> Vec<String> {
        self.artifact.meta().agents.clone()
    }

    /// The number of origins.
    #[getter]
    fn origins(&self) -> usize {
        self.artifact.origins()
    }

    /// For a shard set: each file's (path, K, N, the shard function's name),
    /// as its META says, in K order; empty for a whole artifact.
    #[getter]
    fn shard_files(&self) -> Vec<(PathBuf, u32, u32, String)> {
        self.artifact
            .shards()
            .iter()
            .zip(self.artifact.paths())
            .filter_map(|(a, p)| a.meta().shard.as_ref().map(|s| (p.clone(), s.index, s.count, s.scheme.clone())))
            .collect()
    }

    /// How many artifact files it was opened from (a shard set's N; 1 for a file).
    #[getter]
    fn files(&self) -> usize {
        self.artifact.shards().len()
    }

    /// Whether the artifact keeps the rules (compiled with explain).
    #[getter]
    fn explains(&self) -> bool {
        self.artifact.explains()
    }

    /// The file it was opened from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Classifies the Arrow array behind the capsules of `__arrow_c_array__`:
    /// verdict codes, line (values, validity), rule and reason buffers.
    #[pyo3(signature = (schema, array, agent, threads, raw_urls, explain))]
    #[allow(clippy::type_complexity)]
    fn classify_arrow<'py>(
        &self,
        schema: &Bound<'py, PyCapsule>,
        array: &Bound<'py, PyCapsule>,
        agent: &str,
        threads: usize,
        raw_urls: bool,
        explain: bool,
    ) -> PyResult<(
        usize,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        StringBuffers<'py>,
        StringBuffers<'py>,
    )> {
        let py = schema.py();
        let agent = Agent::parse(agent).map_err(|e| AgentError::new_err(e.to_string()))?;
        let index = self
            .artifact
            .find_agent(&agent.to_string())
            .map_err(|e| AgentError::new_err(format!("{}: {e}", self.path.display())))?;
        let classifier = AgentClassifier::new(&self.artifact, index, path_mode(raw_urls));
        let urls = arrow::urls_of(schema, array)?;
        let urls = &urls.urls;
        let threads = threads.clamp(1, 256);
        let columns = py.allow_threads(|| {
            if threads == 1 || urls.len() < 2 * BATCH {
                return Columns::classify(&classifier, urls, explain);
            }
            let part = urls.len().div_ceil(threads);
            let parts: Vec<_> = std::thread::scope(|scope| {
                let workers: Vec<_> = urls
                    .chunks(part)
                    .map(|chunk| scope.spawn(|| Columns::classify(&classifier, chunk, explain)))
                    .collect();
                workers.into_iter().map(|w| w.join().expect("classify does not panic")).collect()
            });
            let mut all = Columns::default();
            for p in parts {
                all.append(p?);
            }
            Ok(all)
        });
        let columns = columns.map_err(|e| ArtifactError::new_err(e.to_string()))?;
        let lines: Vec<u8> = columns.lines.iter().flat_map(|l| l.to_le_bytes()).collect();
        Ok((
            columns.verdicts.len(),
            PyBytes::new(py, &columns.verdicts),
            PyBytes::new(py, &lines),
            PyBytes::new(py, &bitmap(&columns.line_valid)),
            columns.rules.into_py(py),
            columns.reasons.into_py(py),
        ))
    }
}

/// One robots.txt body, decided as Google does (`robotsieve.RobotsTxt`).
/// The merged group of each crawler is selected once and kept.
#[pyclass(frozen, module = "robotsieve._native")]
struct Robots {
    body: Vec<u8>,
    mode: PathMode,
    groups: Mutex<HashMap<Vec<String>, Arc<Group>>>,
}

impl Robots {
    fn group(&self, tokens: &[String]) -> Arc<Group> {
        let agent = Agent::from_raw_tokens(tokens);
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        groups
            .entry(agent.tokens().to_vec())
            .or_insert_with(|| {
                let robots = robotsieve_robotstxt::RobotsTxt::parse(&self.body);
                Arc::new(Group::select(&robots, &agent))
            })
            .clone()
    }
}

#[pymethods]
impl Robots {
    #[new]
    #[pyo3(signature = (body, raw_urls=false))]
    fn new(body: Vec<u8>, raw_urls: bool) -> Robots {
        Robots { body, mode: path_mode(raw_urls), groups: Mutex::new(HashMap::new()) }
    }

    /// Whether `tokens` (one crawler's product tokens, taken as Google's
    /// library takes them) may fetch `url`; the deciding line and rule.
    fn decide(&self, url: &str, tokens: Vec<String>) -> (bool, Option<u32>, Option<String>) {
        let group = self.group(&tokens);
        let decision = group.decide(&self.mode.path_of(url.as_bytes()));
        let rule = decision.rule.map(|i| &group.rules[i]);
        (decision.allowed(), rule.map(|r| r.line), rule.map(|r| r.to_string()))
    }

    /// The fields Google ignores in the crawler's group: (line, key in lower
    /// case, value).
    fn other_fields(&self, tokens: Vec<String>) -> Vec<(u32, String, String)> {
        let robots = robotsieve_robotstxt::RobotsTxt::parse(&self.body);
        Group::other_fields(&robots, &Agent::from_raw_tokens(&tokens))
            .iter()
            .map(|f| {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                (f.line, text(f.key).to_ascii_lowercase(), text(f.value))
            })
            .collect()
    }

    /// Every `sitemap` value, in file order.
    fn sitemaps(&self) -> Vec<String> {
        self.fields_named(Field::Sitemap, None)
    }

    /// Every value of an unknown field `key` (lower case), anywhere in the file.
    fn unknown_fields(&self, key: &str) -> Vec<String> {
        self.fields_named(Field::Unknown, Some(key))
    }
}

impl Robots {
    fn fields_named(&self, field: Field, key: Option<&str>) -> Vec<String> {
        let robots = robotsieve_robotstxt::RobotsTxt::parse(&self.body);
        robots
            .directives()
            .filter(|(_, d)| d.field == field && key.is_none_or(|k| d.key.eq_ignore_ascii_case(k.as_bytes())))
            .map(|(_, d)| String::from_utf8_lossy(d.value).into_owned())
            .collect()
    }
}

/// The product token of a User-Agent string as Google reads a `user-agent`
/// line: its leading run of letters, `-` and `_` (empty if none; `*` is no
/// token).
#[pyfunction]
fn product_token(user_agent: &str) -> String {
    match UserAgent::read(user_agent.trim().as_bytes()) {
        UserAgent::Token(token) => String::from_utf8_lossy(token).into_owned(),
        UserAgent::Global => String::new(),
    }
}

/// The crawlers of a compile, as `--agent` reads them; AgentError when one
/// is invalid or none is given.
fn parse_agents(agents: &[String]) -> PyResult<Vec<Agent>> {
    let agents = agents
        .iter()
        .map(|a| Agent::parse(a).map_err(|e| AgentError::new_err(format!("agents: {e}"))))
        .collect::<PyResult<Vec<_>>>()?;
    if agents.is_empty() {
        return Err(AgentError::new_err("agents: give at least one crawler"));
    }
    Ok(agents)
}

/// The crawlers' names as an artifact lists them (`TOKEN[,TOKEN...]`), so
/// that a distributed compile fails on the driver, before any task, on an
/// invalid agent.
#[pyfunction]
fn agent_names(agents: Vec<String>) -> PyResult<Vec<String>> {
    Ok(parse_agents(&agents)?.iter().map(|a| a.to_string()).collect())
}

/// The shard (0..count) of the origin of `url`: the engine's shard function
/// ([`shard_of_url`](robotsieve_engine::shard_of_url)), as
/// `robotsieve shard-of` prints it.
#[pyfunction(name = "shard_of_url")]
fn py_shard_of_url(url: &str, count: u32) -> PyResult<u32> {
    if count == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("a shard set has at least one shard"));
    }
    robotsieve_engine::shard_of_url(url, count)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{url}: {e}")))
}

/// What a distributed filter partitions and sorts a frontier by, for each
/// entry of the Arrow string or binary array behind the capsules of
/// `__arrow_c_array__`: the shard (0..count) of its origin, as a buffer of
/// little-endian i32 (`-1` for a null or a line that is no URL, which the
/// classifier calls invalid), and the origin's key (`scheme://host[:port]`)
/// as large_binary buffers (validity, offsets, data; null where the shard
/// is `-1`). The URLs are taken apart by the classifier's own parser, so a
/// URL's shard here is the shard whose file answers it.
#[pyfunction]
fn frontier_keys<'py>(
    schema: &Bound<'py, PyCapsule>,
    array: &Bound<'py, PyCapsule>,
    count: u32,
) -> PyResult<(usize, Bound<'py, PyBytes>, StringBuffers<'py>)> {
    if count == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("a shard set has at least one shard"));
    }
    let py = schema.py();
    let urls = arrow::urls_of(schema, array)?;
    let urls = &urls.urls;
    let (shards, keys) = py.allow_threads(|| {
        let mut key = KeyBuf::new();
        let mut shards: Vec<u8> = Vec::with_capacity(urls.len() * 4);
        let mut keys = Strings::default();
        for url in urls {
            match url.map(|u| key.parse(u)) {
                Some(Ok(origin)) => {
                    shards.extend_from_slice(&(shard_of_hash(origin_hash(origin.key), count) as i32).to_le_bytes());
                    keys.push_bytes(Some(origin.key));
                }
                _ => {
                    shards.extend_from_slice(&(-1i32).to_le_bytes());
                    keys.push_bytes(None);
                }
            }
        }
        (shards, keys)
    });
    Ok((urls.len(), PyBytes::new(py, &shards), keys.into_py(py)))
}

/// The file name of shard `index` of `count` in a shard set's directory.
#[pyfunction(name = "shard_file_name")]
fn py_shard_file_name(index: u32, count: u32) -> String {
    shard_file_name(index, count)
}

/// What a distributed resolution needs of each fetch record, computed as
/// [`robotsieve_sources::corpus::Corpus::resolve`] computes it:
/// `key` (the [`record_key`] redirects find it by; None for a URL that cannot
/// be parsed), `shard` (the shard of its origin when it is the origin's
/// `/robots.txt`, else None), `target` (for a redirect, a 3xx status, the
/// [`record_key`] of its `location` resolved against it; else None) and the fetch time as
/// (`seconds`, `nanos`) (None when not given). A `fetched_at` that is not
/// RFC 3339 raises CorpusError naming the URL, as `compile --corpus` fails.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn fetch_keys(
    py: Python<'_>,
    urls: Vec<String>,
    statuses: Vec<Option<i64>>,
    locations: Vec<Option<String>>,
    fetched_at: Vec<Option<String>>,
    shards: u32,
) -> PyResult<(Vec<Option<Vec<u8>>>, Vec<Option<u32>>, Vec<Option<Vec<u8>>>, Vec<Option<i64>>, Vec<Option<u32>>)> {
    if statuses.len() != urls.len() || locations.len() != urls.len() || fetched_at.len() != urls.len() {
        return Err(pyo3::exceptions::PyValueError::new_err("the columns differ in length"));
    }
    let shards = shards.max(1);
    py.allow_threads(|| {
        let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (((url, status), location), time) in urls.iter().zip(&statuses).zip(&locations).zip(&fetched_at) {
            let key = record_key(url.as_bytes());
            let shard = OriginKey::of_robots_url(url).ok().map(|origin| shard_of_hash(origin.hash64(), shards));
            let redirect =
                status.and_then(|s| u16::try_from(s).ok()).is_some_and(|s| StatusClass::of(s) == StatusClass::Redirect);
            let target = location.as_deref().filter(|_| redirect).and_then(|l| resolve_location(url, l));
            let time = match time {
                Some(text) => Some(
                    Timestamp::parse_rfc3339(text)
                        .map_err(|e| CorpusError::new_err(format!("{url}: fetched_at: {e}")))?,
                ),
                None => None,
            };
            out.0.push(key);
            out.1.push(shard);
            out.2.push(target);
            out.3.push(time.map(Timestamp::unix_seconds));
            out.4.push(time.map(Timestamp::subsec_nanos));
        }
        Ok(out)
    })
}

/// Compiles fetch records (JSON Lines, as `compile --corpus` reads them) for
/// `agents` into an artifact at `output`; returns the number of origins, the
/// resolution's warnings and the sorted runs it spilled. The records are resolved as `compile --corpus`
/// resolves them, in bounded memory ([`BoundedCorpus`]: two passes over a
/// temporary copy, sorted runs spilled beyond `memory` bytes, which also
/// sizes the writer as `--memory` does). With `shard=(K, N)` the artifact is
/// shard K of a set of N and keeps only the origins of shard K (as `compile
/// --shard K/N`): redirect targets of other shards resolve its origins and
/// are dropped; no records at all make an empty shard.
#[pyfunction]
#[pyo3(signature = (records, agents, output, explain, shard=None, memory=DEFAULT_MEMORY))]
fn compile_jsonl(
    py: Python<'_>,
    records: Vec<u8>,
    agents: Vec<String>,
    output: PathBuf,
    explain: bool,
    shard: Option<(u32, u32)>,
    memory: usize,
) -> PyResult<(usize, Vec<String>, usize)> {
    let outputs = match shard {
        Some((index, count)) => {
            Outputs::shard(&output, index, count).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?
        }
        None => Outputs::artifact(&output),
    };
    let agents = parse_agents(&agents)?;
    py.allow_threads(|| {
        let mut corpus = BoundedCorpus::new(memory);
        corpus.add_jsonl_bytes("records", &records).map_err(|e| CorpusError::new_err(e.to_string()))?;
        drop(records);
        let options = CompileOptions {
            explain,
            memory,
            sources: "python records".to_string(),
            allow_empty: shard.is_some(),
            ..CompileOptions::new(agents)
        };
        let report = compile_corpus(corpus, &outputs, &options, &mut ()).map_err(|e| match e {
            CompileError::NoRecords => CorpusError::new_err("records: no fetch record given"),
            // Output errors name the file already (`PATH: cannot write: ...`).
            CompileError::Write(WriteError::Output(_)) => CorpusError::new_err(e.to_string()),
            CompileError::Write(other) => CorpusError::new_err(format!("{}: {other}", output.display())),
            other => CorpusError::new_err(other.to_string()),
        })?;
        Ok((report.build.origins, report.resolved.warnings, report.resolved.spilled_runs))
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Artifact>()?;
    m.add_class::<Robots>()?;
    m.add_function(wrap_pyfunction!(product_token, m)?)?;
    m.add_function(wrap_pyfunction!(compile_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(fetch_keys, m)?)?;
    m.add_function(wrap_pyfunction!(agent_names, m)?)?;
    m.add_function(wrap_pyfunction!(py_shard_of_url, m)?)?;
    m.add_function(wrap_pyfunction!(py_shard_file_name, m)?)?;
    m.add_function(wrap_pyfunction!(frontier_keys, m)?)?;
    m.add_function(wrap_pyfunction!(head::artifact_head, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::fetch_to_file, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::fetch_iter, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::fetch_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::check_fetch_options, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::registrable_domain, m)?)?;
    m.add_function(wrap_pyfunction!(fetch::sites_of_lines, m)?)?;
    m.add_class::<fetch::RecordIter>()?;
    m.add_function(wrap_pyfunction!(head::artifact_meta, m)?)?;
    m.add("ARTIFACT_HEAD_LEN", head::HEAD_LEN)?;
    m.add("SHARD_SCHEME", SHARD_SCHEME)?;
    m.add("MAX_REDIRECTS", MAX_REDIRECTS)?;
    m.add("RobotsieveError", py.get_type::<RobotsieveError>())?;
    m.add("ArtifactError", py.get_type::<ArtifactError>())?;
    m.add("AgentError", py.get_type::<AgentError>())?;
    m.add("CorpusError", py.get_type::<CorpusError>())?;
    m.add("VERDICTS", Verdict::ALL.iter().map(|v| v.name()).collect::<Vec<_>>())?;
    Ok(())
}
