//! # robotsieve-compiler
//!
//! Reads robots.txt files exactly as Google does and turns the rules that
//! apply to a crawler into what the engine runs.
//!
//! - [`parse`]: bytes to line reports (the one parse that matching, `lint` and
//!   explanations share).
//! - [`group`]: which rules apply to a crawler, merged, escaped and labelled;
//!   with the plain per-rule matcher that is the oracle for everything faster.
//! - [`automaton`]: a merged group compiled into precedence-labelled automata
//!   (with a per-rule fallback for what no automaton holds within budget).
//! - [`conformance`]: the shared conformance cases, read one way for every test.
//! - [`corpus`]: robots.txt fetch results (files, directories, JSON Lines, WARC)
//!   to one governing robots.txt per origin, with Google's fetch-status rules.
//! - [`warc`]: a streaming WARC record reader and the HTTP responses inside.
//! - [`lint`]: how Google reads a robots.txt line by line, and where that differs
//!   from what its author evidently meant (stable finding codes).
//! - [`preference`]: reading `Content-Signal` and `Content-Usage` values (the
//!   lines are kept per group by [`group`]; which apply is the engine's).
//! - [`page`]: page-level rules: robots meta tags and `X-Robots-Tag` headers, per crawler.
//! - [`build`]: many origins' robots.txt to one artifact, parsed and compiled once per distinct body and group.
//! - [`writer`]: laying compiled groups and origins out as one artifact file.
#![warn(missing_docs)]

pub mod automaton;
pub mod build;
mod calendar;
pub mod conformance;
pub mod corpus;
pub mod group;
pub mod lint;
pub mod page;
pub mod parse;
pub mod preference;
pub mod warc;
pub mod writer;

pub use group::{Agent, Decision, Group, Rule, Verb};
pub use parse::RobotsTxt;
