//! A compiled group's owned tables, as the builder makes them, the writer
//! encodes them ([`crate::format::encode_group`]) and tests decide with them
//! ([`crate::matcher`] makes the checked view, [`MatcherBuf::matcher`]).
//!
//! Kept apart from [`crate::matcher`] so that the format, which encodes
//! these tables, does not depend on the runtime a matcher runs through
//! (matcher -> runtime -> format -> compiled, no circle). Their paths under
//! `matcher` stay (`matcher::{MatcherBuf, PartBuf}` re-exports them).

use crate::dfa::Dfa;
use crate::rules::RuleList;

/// The stored form of one part.
// A group has at most three parts and the artifact writer reads `Dfa` in
// place, so the automaton stays unboxed despite its 256-byte class map.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PartBuf {
    /// An automaton.
    Dfa(Dfa),
    /// Rules matched one by one.
    Rules(RuleList),
}

/// The stored form of a compiled group.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MatcherBuf {
    /// `labels[rank]`: the label a rank stands for (`labels[0] == 0`).
    pub labels: Vec<u32>,
    /// `rules[rank]`: index of the deciding rule in `Group::rules`, or `u32::MAX`.
    pub rules: Vec<u32>,
    /// The parts, highest possible answer first.
    pub parts: Vec<PartBuf>,
}
