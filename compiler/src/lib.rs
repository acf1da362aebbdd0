//! # robotsieve-compiler
//!
//! Turns the rules that apply to a crawler (read by `robotsieve-robotstxt`)
//! into what the engine runs, and many origins' robots.txt (resolved by
//! `robotsieve-sources`) into one artifact file or a shard set.
//!
//! - [`automaton`]: a merged group compiled into precedence-labelled automata
//!   (with a per-rule fallback for what no automaton holds within budget).
//! - [`build`]: many origins' robots.txt to one artifact, parsed and compiled once per distinct body and group.
//! - [`compile_corpus`]: the one entry point from a corpus to artifacts
//!   (resolution, writers, build, shard filter) that the CLI and Python call.
//!
//! # Example
//!
//! Fetch records in, an artifact out (the engine's documentation goes on to
//! classify URLs through it):
//!
//! ```
//! use robotsieve_compiler::{compile_corpus, CompileOptions, Outputs};
//! use robotsieve_robotstxt::Agent;
//! use robotsieve_sources::bounded::BoundedCorpus;
//!
//! let records = br#"{"url": "https://example.com/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /private\n"}"#;
//! let mut corpus = BoundedCorpus::new(64 << 20);
//! corpus.add_jsonl_bytes("records", records).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("rules.rsv");
//! let options = CompileOptions::new(vec![Agent::parse("mybot").unwrap()]);
//! let report = compile_corpus(corpus, &Outputs::artifact(&path), &options, &mut ()).unwrap();
//! assert_eq!((report.resolved.records, report.build.origins), (1, 1));
//! assert!(path.exists());
//! ```
#![warn(missing_docs)]

pub mod automaton;
pub mod build;
mod corpus;

pub use automaton::{compile, BuildOptions};
pub use build::BuildPlan;
pub use corpus::{compile_corpus, CompileError, CompileEvents, CompileOptions, CompileReport, Outputs, Resolved};
