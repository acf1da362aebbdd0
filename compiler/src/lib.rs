//! # robotsieve-compiler
//!
//! Turns the rules that apply to a crawler (read by `robotsieve-robotstxt`)
//! into what the engine runs, and many origins' robots.txt (resolved by
//! `robotsieve-sources`) into one artifact file or a shard set.
//!
//! - [`automaton`]: a merged group compiled into precedence-labelled automata
//!   (with a per-rule fallback for what no automaton holds within budget).
//! - [`build`]: many origins' robots.txt to one artifact, parsed and compiled once per distinct body and group.
#![warn(missing_docs)]

pub mod automaton;
pub mod build;

pub use automaton::{compile, BuildOptions};
pub use build::BuildPlan;
