//! # robotsieve-compiler
//!
//! Reads robots.txt files exactly as Google does and turns the rules that
//! apply to a crawler into what the engine runs.
//!
//! - [`parse`]: bytes to line reports (the one parse that matching, `lint` and
//!   explanations share).
//! - [`group`]: which rules apply to a crawler, merged, escaped and labelled;
//!   with the plain per-rule matcher that is the oracle for everything faster.
//! - [`conformance`]: the shared conformance cases, read one way for every test.
//! - [`page`]: page-level rules: robots meta tags and `X-Robots-Tag` headers, per crawler.
#![warn(missing_docs)]

pub mod conformance;
pub mod group;
pub mod page;
pub mod parse;

pub use group::{Agent, Decision, Group, Rule, Verb};
pub use parse::RobotsTxt;
