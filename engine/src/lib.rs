//! # robotsieve-engine
//!
//! The automata robotsieve runs and the artifact that holds them: what a
//! worker needs to answer "may this URL be fetched?" from a compiled file,
//! and what writes that file. No robots.txt parsing (`robotsieve-robotstxt`)
//! and no pipeline (`robotsieve-filter`); URL splitting and the other shared
//! vocabulary come from `robotsieve-core`.
//!
//! The types a user needs are at the root: [`ShardSet`] and [`Artifact`]
//! (a set of shard files, or one artifact, opened and checked, with
//! [`ArtifactError`] when it cannot be used), [`AgentClassifier`] and
//! [`MatrixClassifier`] (URL verdicts, one at a time with reasons or a batch
//! with every step interleaved), [`ArtifactWriter`] (laying compiled groups
//! and origins out as one artifact file), [`PendingFile`] (output files that
//! appear only when a run succeeds, and are removed on a signal once the
//! binary asks for it), and the shard functions ([`shard_of_url`],
//! [`shard_file_name`]).
//!
//! And the automata the compiler builds and the artifact holds, each one type
//! generic over where its tables live (owned as the compiler makes them, or
//! borrowed from an artifact, read in place): [`Dfa`] (one scan of a path
//! gives the winning rank), [`CombDfa`] (the same automaton with its
//! transition table row-displaced, for trie-like automata whose dense rows
//! are almost all one target), [`RuleList`] (the per-rule fallback for rules
//! no automaton can hold cheaply, with its [`Prefilter`]), and [`Matcher`]
//! (a compiled group: its rank tables and up to [`MAX_PARTS`] [`Part`]s,
//! combined by rank; [`MatcherRef`] decides paths through the runtime an
//! artifact's [`CompiledGroup`] runs).
//!
//! # Example
//!
//! Open an artifact (here compiled on the spot from one fetch record) and
//! classify URLs through it, with the deciding rule:
//!
//! ```
//! use robotsieve_core::{PathMode, Verdict};
//! use robotsieve_engine::{AgentClassifier, Scratch, ShardSet};
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

mod artifact;
mod classify;
mod comb;
mod compiled;
mod dfa;
mod format;
mod mapped;
mod matcher;
mod pending;
mod rules;
mod runtime;
mod shards;
mod walk;
mod writer;

pub use artifact::{
    shard_file_name, Artifact, ArtifactError, ArtifactHead, ExplainedRule, GroupOutcome, GroupStats, Meta, ShardInfo,
    UnknownAgent,
};
pub use classify::{AgentClassifier, Answer, FetchClass, MatrixClassifier, MatrixScratch, Reason, Scratch};
pub use comb::{Accel, CombDfa, CombDfaRef, NarrowComb, SlotId, SlotTable};
pub use compiled::{Matcher, MatcherError, Owned, Part, PartTables, MAX_PARTS};
pub use dfa::{Dfa, DfaError, DfaRef, StateId, TransitionTable};
pub use format::{
    encode_group, CrawlRefs, Damage, DamageKind, EncodeError, FetchFacts, FetchInfo, FetchKind, GroupDamage,
    GroupTable, MetaProblem, PartProblem, PreferenceTable, RuleText, Section, Selection, ShardSetProblem,
    VersionMismatch, Versioned, FORMAT_VERSION, SEMANTICS_VERSION,
};
pub use mapped::release as release_mapped;
pub use matcher::{MatcherRef, Outcome};
pub use pending::{install_signal_cleanup, remove_pending_files, OutputError, PendingFile};
pub use rules::{Prefilter, RuleList, RuleListError, RuleListRef};
pub use runtime::CompiledGroup;
pub use shards::{shard_of_hash, shard_of_url, LoneShard, ShardSet, SHARD_SCHEME};
pub use writer::{write_atomically, ArtifactWriter, WriteError, DEFAULT_MEMORY};

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
    pub use crate::format::{checksum, Header, SectionEntry, GROUPS_START, MAX_SECTIONS};
}
