//! # robotsieve-robotstxt
//!
//! The robots.txt language, read exactly as Google reads it: the one parse
//! that matching, the linter and explanations share, which rules apply to a
//! crawler, and the values of the preference lines. Everything that compiles,
//! lints or serves rules starts here; this crate depends on the engine only
//! (for its pattern, label and preference types).
//!
//! - [`parse`]: bytes to line reports ([`RobotsTxt`]).
//! - [`group`]: which rules apply to a crawler, merged, escaped and labelled;
//!   with the plain per-rule matcher that is the oracle for everything faster.
//! - [`preference`]: reading `Content-Signal` and `Content-Usage` values (the
//!   lines are kept per group by [`group`]; which apply is the engine's).
//!
//! # Example
//!
//! Parse a robots.txt, select the group that applies to a crawler, and ask
//! it about paths (in the escaped form rules are matched against):
//!
//! ```
//! use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
//!
//! let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
//! let group = Group::select(&robots, &Agent::parse("mybot").unwrap());
//! assert!(!group.decide(b"/private/x").allowed());
//! assert!(group.decide(b"/private/ok").allowed());
//! assert!(group.decide(b"/elsewhere").allowed());
//! // The deciding rule: the group's first, `Disallow: /private`.
//! assert_eq!(group.decide(b"/private/x").rule, Some(0));
//! ```
#![warn(missing_docs)]

pub mod group;
pub mod parse;
pub mod preference;

pub use group::{Agent, Decision, Group, Position, Rule, Segmenter, Source, UserAgent, Verb};
pub use parse::RobotsTxt;
