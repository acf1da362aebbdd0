//! The one way a corpus becomes artifacts: resolution, the writers, the
//! build and the shard filter, in that order. The CLI's `compile` and the
//! Python package's `compile_jsonl` both call [`compile_corpus`], so that
//! what they write cannot drift apart; each keeps only what is its own (the
//! flags or arguments that fill the [`BoundedCorpus`], and how it shows
//! progress, warnings and errors).

use crate::automaton::BuildOptions;
use crate::build::{build, build_shards, BuildPlan, BuildReport};
use robotsieve_engine::PendingFile;
use robotsieve_engine::ShardInfo;
use robotsieve_engine::{shard_file_name, shard_of_hash, SHARD_SCHEME};
use robotsieve_engine::{ArtifactWriter, WriteError, DEFAULT_MEMORY};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::bounded::BoundedCorpus;
use robotsieve_sources::corpus::CorpusError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to compile a corpus into, and how.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// The crawlers, one group per origin each. No default: a compile needs
    /// at least one.
    pub agents: Vec<Agent>,
    /// Keep the rules in the artifact, so that verdicts can name the deciding
    /// line. Default: false.
    pub explain: bool,
    /// The memory budget in bytes, shared by the writers (see
    /// [`ArtifactWriter::create`]) and the build's tables of known groups.
    /// Default: [`DEFAULT_MEMORY`].
    pub memory: usize,
    /// What the artifact's build information names as its sources (shown by
    /// `inspect`). Default: empty.
    pub sources: String,
    /// How many warnings [`Resolved::warnings`] holds (all are counted).
    /// Default: all.
    pub warnings_kept: u64,
    /// Whether a corpus without a single record compiles (to an artifact with
    /// no origins: a task of a distributed compile whose shard got no
    /// records) rather than failing with [`CompileError::NoRecords`].
    /// Default: false.
    pub allow_empty: bool,
}

impl CompileOptions {
    /// The options for these crawlers, every other field at its default.
    pub fn new(agents: Vec<Agent>) -> CompileOptions {
        CompileOptions {
            agents,
            explain: false,
            memory: DEFAULT_MEMORY,
            sources: String::new(),
            warnings_kept: u64::MAX,
            allow_empty: false,
        }
    }
}

/// Shard `index` of `count` names a shard: `index < count` (so `count` is at
/// least 1).
fn check_shard(index: u32, count: u32) -> Result<(), CompileError> {
    if index < count {
        Ok(())
    } else {
        Err(CompileError::Shard { index, count })
    }
}

/// The artifacts a compile writes: one, a whole shard set, or one shard.
#[derive(Clone, Debug)]
pub struct Outputs {
    paths: Vec<PathBuf>,
    /// The set's shard count and the shards written, in the order of `paths`.
    set: Option<(u32, Vec<u32>)>,
}

impl Outputs {
    /// One artifact holding every origin, at `path`.
    pub fn artifact(path: &Path) -> Outputs {
        Outputs { paths: vec![path.to_path_buf()], set: None }
    }

    /// Shard `index` of a set of `count` at `path`: only the origins whose
    /// key hashes to that shard. Fails unless `index < count`.
    pub fn shard(path: &Path, index: u32, count: u32) -> Result<Outputs, CompileError> {
        check_shard(index, count)?;
        Ok(Outputs { paths: vec![path.to_path_buf()], set: Some((count, vec![index])) })
    }

    /// A shard set of `count` in the directory `dir` (created if missing),
    /// each shard under [`shard_file_name`]; with `only`, just that shard.
    /// Fails when `count` is 0 or `only` is not below it.
    pub fn shard_set(dir: &Path, count: u32, only: Option<u32>) -> Result<Outputs, CompileError> {
        check_shard(only.unwrap_or(0), count)?;
        std::fs::create_dir_all(dir)
            .map_err(|error| CompileError::CreateDir { dir: dir.display().to_string(), error })?;
        let shards: Vec<u32> = match only {
            Some(index) => vec![index],
            None => (0..count).collect(),
        };
        let paths = shards.iter().map(|&k| dir.join(shard_file_name(k, count))).collect();
        Ok(Outputs { paths, set: Some((count, shards)) })
    }

    /// Creates each output and drops it at once, so that one that cannot be
    /// written (no such directory, not writable, a directory) fails before
    /// the work; the probe leaves nothing behind.
    pub fn probe(&self) -> Result<(), CompileError> {
        for path in &self.paths {
            drop(PendingFile::create(path).map_err(|e| CompileError::Write(WriteError::Output(e)))?);
        }
        Ok(())
    }

    /// How many of a corpus's origins one output gets, about: one in the
    /// set's count when a single shard of a set is written, else all.
    pub fn one_in(&self) -> u32 {
        match &self.set {
            Some((count, shards)) if shards.len() == 1 => *count,
            _ => 1,
        }
    }
}

/// The resolved corpus, before any automaton is built.
#[derive(Debug)]
pub struct Resolved {
    /// Records read (those with a URL that does not parse included).
    pub records: u64,
    /// Origins resolved.
    pub origins: u64,
    /// Sorted runs the resolution spilled to temporary files.
    pub spilled_runs: usize,
    /// The first broken records skipped (when the corpus skips them).
    pub skipped: Vec<CorpusError>,
    /// How many broken records were skipped.
    pub skipped_count: u64,
    /// The first [`CompileOptions::warnings_kept`] warnings of reading and
    /// resolving.
    pub warnings: Vec<String>,
    /// How many warnings there were.
    pub warning_count: u64,
}

/// What a compile did.
#[derive(Debug)]
pub struct CompileReport {
    /// The resolved corpus.
    pub resolved: Resolved,
    /// The build's figures.
    pub build: BuildReport,
    /// Bytes written, over all outputs.
    pub bytes: u64,
    /// Wall time of finishing the outputs (the origin index, the header).
    pub writing: Duration,
}

/// What a caller is told while a compile runs (every method does nothing
/// unless implemented; `()` ignores everything).
pub trait CompileEvents {
    /// The corpus is resolved; nothing is built yet.
    fn resolved(&mut self, _resolved: &Resolved) {}
    /// A batch of origins is built: the figures so far.
    fn batch(&mut self, _report: &BuildReport) {}
}

impl CompileEvents for () {}

/// Why a compile failed.
#[non_exhaustive]
#[derive(Debug)]
pub enum CompileError {
    /// Reading or resolving the corpus failed (names the file and record).
    Corpus(CorpusError),
    /// The corpus has no record, and [`CompileOptions::allow_empty`] is off.
    NoRecords,
    /// The temporary file of warnings could not be read back.
    Warnings(std::io::Error),
    /// The temporary file of the resolved corpus could not be read back.
    Resolved(std::io::Error),
    /// The directory of a shard set could not be created.
    CreateDir {
        /// The directory.
        dir: String,
        /// Why.
        error: std::io::Error,
    },
    /// An artifact could not be written.
    Write(WriteError),
    /// A shard of a set that cannot be: its index not below the count.
    Shard {
        /// The shard asked for.
        index: u32,
        /// The set's shard count.
        count: u32,
    },
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Corpus(e) => write!(f, "{e}"),
            CompileError::NoRecords => f.write_str("no robots.txt given"),
            CompileError::Warnings(e) => write!(f, "a temporary file of warnings: {e}"),
            CompileError::Resolved(e) => write!(f, "a temporary file of the resolved corpus: {e}"),
            CompileError::CreateDir { dir, error } => write!(f, "{dir}: cannot write: {error}"),
            CompileError::Write(e) => write!(f, "{e}"),
            CompileError::Shard { index, count } => {
                write!(f, "shard {index} of {count}: a shard is K of N with 0 <= K < N")
            }
        }
    }
}

impl std::error::Error for CompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompileError::Corpus(e) => Some(e),
            CompileError::NoRecords => None,
            CompileError::Warnings(e) | CompileError::Resolved(e) => Some(e),
            CompileError::CreateDir { error, .. } => Some(error),
            CompileError::Write(e) => Some(e),
            CompileError::Shard { .. } => None,
        }
    }
}

impl From<WriteError> for CompileError {
    fn from(error: WriteError) -> CompileError {
        CompileError::Write(error)
    }
}

/// Resolves `corpus` and compiles its origins into `outputs`: each output
/// gets its shard's origins (a whole artifact all of them), a group is
/// compiled once and written to every output that uses it, and an output
/// appears under its name only when complete.
pub fn compile_corpus(
    corpus: BoundedCorpus,
    outputs: &Outputs,
    options: &CompileOptions,
    events: &mut impl CompileEvents,
) -> Result<CompileReport, CompileError> {
    let mut resolution = corpus.resolve().map_err(CompileError::Corpus)?;
    let resolved = Resolved {
        records: resolution.records,
        origins: resolution.origins,
        spilled_runs: resolution.spilled_runs,
        skipped: std::mem::take(&mut resolution.skipped),
        skipped_count: resolution.skipped_count,
        warnings: resolution.warnings.first(options.warnings_kept).map_err(CompileError::Warnings)?,
        warning_count: resolution.warnings.count(),
    };
    events.resolved(&resolved);
    if resolved.records == 0 && !options.allow_empty {
        return Err(CompileError::NoRecords);
    }

    let plan = BuildPlan {
        agents: options.agents.clone(),
        options: BuildOptions { explain: options.explain, ..BuildOptions::default() },
        memory: options.memory,
    };
    let mut writers = Vec::with_capacity(outputs.paths.len());
    for (i, path) in outputs.paths.iter().enumerate() {
        let agent_names = plan.agents.iter().map(|a| a.to_string()).collect();
        let mut writer =
            ArtifactWriter::create(path, agent_names, options.explain, options.memory / outputs.paths.len())?;
        writer.build_info("robotsieve", env!("CARGO_PKG_VERSION"));
        writer.build_info("explain", if options.explain { "yes" } else { "no" });
        writer.build_info("sources", &options.sources);
        if let Some((count, shards)) = &outputs.set {
            writer.set_shard(ShardInfo { index: shards[i], count: *count, scheme: SHARD_SCHEME.to_string() });
        }
        writers.push(writer);
    }
    let on_batch = |report: &BuildReport| events.batch(report);
    let origins = &mut resolution.stream;
    let build = match &outputs.set {
        // One shard of a set: the others' origins are dropped here.
        Some((count, shards)) if shards.len() == 1 && *count > 1 => {
            let (index, count) = (shards[0], *count);
            let mine = origins.filter(move |o| shard_of_hash(o.origin.hash64(), count) == index);
            build(mine, &plan, &mut writers[0], on_batch)
        }
        _ => build_shards(origins, &plan, &mut writers, on_batch),
    }?;
    if let Some(e) = resolution.stream.error() {
        return Err(CompileError::Resolved(e));
    }
    let writing = Instant::now();
    let mut bytes = 0;
    for writer in writers {
        bytes += writer.finish()?;
    }
    Ok(CompileReport { resolved, build, bytes, writing: writing.elapsed() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_must_be_below_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.rsv");
        assert!(Outputs::shard(&path, 3, 4).is_ok());
        for (index, count) in [(4, 4), (0, 0), (9, 2)] {
            let error = Outputs::shard(&path, index, count).unwrap_err();
            assert!(matches!(error, CompileError::Shard { index: i, count: n } if i == index && n == count));
            assert_eq!(error.to_string(), format!("shard {index} of {count}: a shard is K of N with 0 <= K < N"));
        }
        assert!(matches!(Outputs::shard_set(dir.path(), 0, None), Err(CompileError::Shard { index: 0, count: 0 })));
        assert!(matches!(Outputs::shard_set(dir.path(), 4, Some(4)), Err(CompileError::Shard { index: 4, count: 4 })));
        let set = Outputs::shard_set(&dir.path().join("set"), 4, None).unwrap();
        assert_eq!(set.one_in(), 1);
    }
}
