//! # robotsieve-compiler
//!
//! Turns the rules that apply to a crawler (read by `robotsieve-robotstxt`)
//! into what the engine runs, and many origins' robots.txt (resolved by
//! `robotsieve-sources`) into one artifact file or a shard set.
//!
//! - [`automaton`]: a merged group compiled into precedence-labelled automata
//!   (with a per-rule fallback for what no automaton holds within budget).
//! - [`build`]: many origins' robots.txt to one artifact, parsed and compiled once per distinct body and group.
//! - [`writer`]: laying compiled groups and origins out as one artifact file.
//! - [`compile_corpus`]: the one entry point from a corpus to artifacts
//!   (resolution, writers, build, shard filter) that the CLI and Python call.
#![warn(missing_docs)]

pub mod automaton;
pub mod build;
mod corpus;
pub mod writer;

pub use automaton::{compile, BuildOptions};
pub use build::BuildPlan;
pub use corpus::{compile_corpus, CompileError, CompileEvents, CompileOptions, CompileReport, Outputs, Resolved};
pub use writer::{ArtifactWriter, WriteError};
