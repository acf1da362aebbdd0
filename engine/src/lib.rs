//! # robotsieve-engine
//!
//! The automata robotsieve runs and the artifact that holds them: what a
//! worker needs to answer "may this URL be fetched?" from a compiled file,
//! and what writes that file. No robots.txt parsing (`robotsieve-robotstxt`)
//! and no pipeline (`robotsieve-filter`); URL splitting and the other shared
//! vocabulary come from `robotsieve-core`.
//!
//! - [`dfa`]: the automaton runtime: one scan of a path gives the winning rank.
//! - [`comb`]: the same automaton with its transition table row-displaced,
//!   for trie-like automata whose dense rows are almost all one target.
//! - `walk` (internal): walking a path through either table layout, once or
//!   many walks interleaved so that their cache misses overlap.
//! - [`rules`]: the per-rule fallback for rules no automaton can hold cheaply.
//! - [`compiled`]: a compiled group's owned tables, as the builder makes them.
//! - [`matcher`]: a compiled group checked and run (through [`runtime`]): its parts, combined by rank.
//! - [`runtime`]: an artifact's group with its parts read once, for a run of paths.
//! - [`artifact`]: the memory-mappable file of every origin's compiled rules.
//! - [`mod@format`]: the artifact's layout, each record's encode and decode side by side.
//! - [`writer`]: laying compiled groups and origins out as one artifact file.
//! - [`shards`]: shard sets: origins split by a published hash over N artifacts.
//! - [`classify`]: URL verdicts from an artifact (origin, group, automaton),
//!   one at a time with reasons, or a batch with every step interleaved.
//! - [`pending`]: output files that appear only when a run succeeds (and are
//!   removed on a signal once the binary asks for it).
//! - `mapped` (internal): giving back the pages of mapped files read once.
//!
//! # Example
//!
//! Open an artifact (here compiled on the spot from one fetch record) and
//! classify URLs through it, with the deciding rule:
//!
//! ```
//! use robotsieve_core::{PathMode, Verdict};
//! use robotsieve_engine::classify::{AgentClassifier, Scratch};
//! use robotsieve_engine::ShardSet;
//! # use robotsieve_compiler::{compile_corpus, CompileOptions, Outputs};
//! # let records = br#"{"url": "https://example.com/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /private\n"}"#;
//! # let mut corpus = robotsieve_sources::bounded::BoundedCorpus::new(64 << 20);
//! # corpus.add_jsonl_bytes("records", records).unwrap();
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("rules.rsv");
//! # let options = CompileOptions::new(vec![robotsieve_robotstxt::Agent::parse("mybot").unwrap()]);
//! # compile_corpus(corpus, &Outputs::artifact(&path), &options, &mut ()).unwrap();
//!
//! let rules = ShardSet::open(&path).unwrap();
//! let agent = rules.agent_index("mybot").unwrap();
//! let classifier = AgentClassifier::new(&rules, agent, PathMode::default());
//! let mut scratch = Scratch::default();
//! let mut verdict = |url: &str| classifier.answer(url.as_bytes(), &mut scratch, false).unwrap().verdict;
//! assert_eq!(verdict("https://example.com/private/x"), Verdict::Disallowed);
//! assert_eq!(verdict("https://example.com/public"), Verdict::Allowed);
//! // No robots.txt for this origin in the artifact: fetch it first.
//! assert_eq!(verdict("https://elsewhere.example/"), Verdict::Unknown);
//! ```
#![warn(missing_docs)]

pub mod artifact;
pub mod classify;
pub mod comb;
pub mod compiled;
pub mod dfa;
pub mod format;
mod mapped;
pub use mapped::release as release_mapped;
pub mod matcher;
pub mod pending;
pub mod rules;
pub mod runtime;
pub mod shards;
mod walk;
pub mod writer;

pub use artifact::{Artifact, ArtifactError, Meta, ShardInfo};
pub use classify::{AgentClassifier, MatrixClassifier, MatrixScratch, Scratch};
pub use pending::{install_signal_cleanup, remove_pending_files, OutputError, PendingFile};
pub use shards::{shard_file_name, shard_of_hash, shard_of_url, ShardSet, SHARD_SCHEME};
pub use writer::{write_atomically, ArtifactWriter, WriteError};

/// What tests, fuzz targets and benchmarks need of the engine's internals:
/// not part of the API, and free to change with them.
#[doc(hidden)]
pub mod testing {
    /// How many bytes a direct-write buffer of a [`crate::PendingFile`] holds.
    pub const DIRECT_BUFFER: usize = crate::pending::DIRECT_BUFFER;
    pub use crate::format::groups::{
        GroupHead, PartRecord, PART_COMB, PART_COMB16, PART_DFA16, PART_DFA32, PART_RULES,
    };
    pub use crate::format::header::reseal;
}
