//! # robotsieve-engine
//!
//! Everything a robotsieve worker needs to answer "may this URL be fetched?"
//! at frontier scale, and nothing it does not run: no robots.txt parsing.
//!
//! - [`label`]: a rule's precedence as one integer, so the larger label wins.
//! - [`pattern`]: how robots.txt patterns (and URL paths) are escaped and what
//!   a pattern matches.
//! - [`url`]: taking URLs apart as WHATWG fetchers do: origins, request paths.
//! - [`dfa`]: the automaton runtime: one scan of a path gives the winning rank.
//! - [`comb`]: the same automaton with its transition table row-displaced,
//!   for trie-like automata whose dense rows are almost all one target.
//! - `walk` (internal): walking a path through either table layout, once or
//!   many walks interleaved so that their cache misses overlap.
//! - [`rules`]: the per-rule fallback for rules no automaton can hold cheaply.
//! - [`compiled`]: a compiled group's owned tables, as the builder makes them.
//! - [`matcher`]: a compiled group checked and run (through [`runtime`]): its parts, combined by rank.
//! - [`runtime`]: an artifact's group with its parts read once, for a run of paths.
//! - [`verdict`]: the four answers for a URL.
//! - [`preference`]: `Content-Signal` and `Content-Usage` lines, and which apply to a URL.
//! - [`line`]: what makes a line of a URL list no URL at all (binary, too long).
//! - [`filter`]: the parallel pipeline that streams a URL list through a classifier into a sink.
//! - [`output`]: what the pipeline writes through: the TSV outputs, and output files
//!   that appear only when a run succeeds (and are removed on a signal).
//! - [`artifact`]: the memory-mappable file of every origin's compiled rules.
//! - [`format`]: the artifact's layout, each record's encode and decode side by side.
//! - [`shards`]: shard sets: origins split by a published hash over N artifacts.
//! - [`classify`]: URL verdicts from an artifact (origin, group, automaton),
//!   one at a time with reasons, or a batch with every step interleaved.
//! - `mapped` (internal): giving back the pages of mapped files read once.
#![warn(missing_docs)]

pub mod artifact;
pub mod classify;
pub mod comb;
pub mod compiled;
pub mod dfa;
pub mod filter;
pub mod format;
pub mod label;
pub mod line;
mod mapped;
pub mod matcher;
pub mod output;
pub mod pattern;
pub mod preference;
pub mod rules;
pub mod runtime;
pub mod shards;
pub mod url;
pub mod verdict;
mod walk;
