//! robotsieve-lint: how Google's rules read a robots.txt, and where that differs from
//! what its author evidently meant.
//!
//! The linter is a second consumer of the one parse ([`RobotsTxt`]): it walks
//! the parser's line reports (never the raw bytes again, except for the part
//! past 500 KiB that Google ignores) and reports [`Finding`]s, each with a
//! stable [`Code`] from [`CODES`], a severity, a line, a message and a fix.
//!
//! Group structure is read by the one [`Segmenter`] that [`Group::select`]
//! reads it with (a `user-agent` line after a rule starts a group; nothing
//! else ends one), and the rules of
//! each crawler named in the file are checked on the merged group that crawler
//! really gets. Whether a rule can ever decide a verdict is computed from the
//! automaton built for that merged group (see [`robotsieve_compiler::automaton`]), not from
//! pattern heuristics.
//!
//! [`RobotsTxt`]: robotsieve_robotstxt::parse::RobotsTxt
//! [`Segmenter`]: robotsieve_robotstxt::group::Segmenter
//! [`Group::select`]: robotsieve_robotstxt::group::Group::select

//!
//! # Example
//!
//! ```
//! use robotsieve_lint::{lint, Options};
//! use robotsieve_robotstxt::RobotsTxt;
//!
//! // Lines without their colon are each a `missing-colon` finding.
//! let report = lint(&RobotsTxt::parse(b"User-agent *\nDisallow /x\n"), &Options::default());
//! let missing: Vec<u32> = report.findings.iter().filter(|f| f.code == "missing-colon").map(|f| f.line).collect();
//! assert_eq!(missing, [1, 2]);
//!
//! let clean = lint(&RobotsTxt::parse(b"User-agent: *\nDisallow: /x\n"), &Options::default());
//! assert!(!clean.has_errors());
//! ```
#![warn(missing_docs)]

mod codes;
mod effects;
mod linter;
mod redundancy;
mod walk;

// What the linter takes from the engine, in one place.
use robotsieve_core::pattern;
use robotsieve_core::preference::PreferenceField;
use robotsieve_core::Label;
use robotsieve_engine::DfaRef;
use robotsieve_engine::{Matcher, Part};

// Every finding code is a constant at the root, as its documentation lists it.
pub use codes::*;
pub use effects::{
    rule_effects, Effect, EffectCache, LINT_BUDGET, PRODUCT_STATE_LIMIT, REBUILD_RULE_LIMIT, SAME_VERDICT_RULE_LIMIT,
    WALK_STEP_LIMIT,
};
pub use linter::{lint, lint_with, AgentReport, Options, Report};
