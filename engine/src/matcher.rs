//! A compiled group: automaton parts combined by rank.
//!
//! # Ranks
//!
//! Every part answers a *rank*: 0 means no rule matched, and a larger rank
//! wins. The group carries two tables indexed by rank: the [`Label`] it stands
//! for and the index of the deciding rule in the compiler's `Group::rules`
//! (`u32::MAX` when the rank does not name one rule, as in verdict mode, and
//! for rank 0). The compiler numbers ranks in one of two ways:
//!
//! - verdict mode: one rank per distinct label, in label order, so automata
//!   are minimised on the verdict and stay small;
//! - explain mode: one rank per rule, ordered by label and, among equal
//!   labels, with the earlier rule ranked higher, so the best rank names the
//!   rule Google would report.
//!
//! # Parts
//!
//! A group is usually one automaton. A group too large for one is split into
//! at most [`MAX_PARTS`] parts (a literal-rule automaton, a one-star automaton,
//! a per-rule list); the answer is the maximum over the parts, and parts are
//! visited highest possible answer first, so a part that cannot beat the rank
//! found so far is skipped.
//!
//! The view [`Matcher`] keeps its parts in a fixed inline array instead of a
//! `Vec`, so making a view of a one-automaton group allocates nothing and
//! matching never allocates: the artifact may make a view per lookup. Making a
//! view reads every answer once (to learn each part's best answer and check it
//! against the rank tables), which costs less than the transition check of
//! [`Dfa::new`] that a view needs anyway.

use crate::dfa::{Dfa, DfaBuf, DfaError};
use crate::label::Label;
use crate::rules::{RuleList, RuleListBuf, RuleListError};
use std::fmt;

/// The most parts a group is split into.
pub const MAX_PARTS: usize = 3;

/// The stored form of one part.
// A group has at most three parts and the artifact writer reads `DfaBuf` in
// place, so the automaton stays unboxed despite its 256-byte class map.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PartBuf {
    /// An automaton.
    Dfa(DfaBuf),
    /// Rules matched one by one.
    Rules(RuleListBuf),
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

impl MatcherBuf {
    /// A validated view for matching.
    pub fn matcher(&self) -> Result<Matcher<'_>, MatcherError> {
        let mut parts: [Option<Part<'_>>; MAX_PARTS] = Default::default();
        if self.parts.len() > MAX_PARTS {
            return Err(MatcherError(format!("{} parts, at most {MAX_PARTS} allowed", self.parts.len())));
        }
        for (slot, part) in parts.iter_mut().zip(&self.parts) {
            *slot = Some(match part {
                PartBuf::Dfa(dfa) => Part::Dfa(dfa.as_dfa()?),
                PartBuf::Rules(rules) => Part::Rules(rules.as_rule_list()?),
            });
        }
        Matcher::new(&self.labels, &self.rules, parts.into_iter().flatten())
    }
}

/// One part of a view.
#[derive(Clone, Debug)]
pub enum Part<'a> {
    /// An automaton: one scan gives the part's rank.
    Dfa(Dfa<'a>),
    /// Rules matched one by one behind a prefilter.
    Rules(RuleList<'a>),
}

impl Part<'_> {
    /// The highest rank this part can answer.
    pub fn max_answer(&self) -> u32 {
        match self {
            Part::Dfa(dfa) => dfa.max_answer(),
            Part::Rules(rules) => rules.max_answer(),
        }
    }

    /// This part's rank for `path`; a part may answer 0 when it cannot beat `floor`.
    #[inline]
    fn rank(&self, path: &[u8], floor: u32) -> u32 {
        match self {
            Part::Dfa(dfa) => dfa.scan(path),
            Part::Rules(rules) => rules.best(path, floor),
        }
    }
}

/// Why tables are not a valid compiled group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatcherError(pub String);

impl fmt::Display for MatcherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid compiled group: {}", self.0)
    }
}

impl std::error::Error for MatcherError {}

impl From<DfaError> for MatcherError {
    fn from(e: DfaError) -> Self {
        MatcherError(e.to_string())
    }
}

impl From<RuleListError> for MatcherError {
    fn from(e: RuleListError) -> Self {
        MatcherError(e.to_string())
    }
}

/// The result of matching a path against a compiled group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The winning rank (0: no rule matched).
    pub rank: u32,
    /// The winning label.
    pub label: Label,
    /// The deciding rule's index in `Group::rules`, when the group was
    /// compiled to explain (always `None` in verdict mode or when nothing matched).
    pub rule: Option<u32>,
}

impl Outcome {
    /// Whether the path is allowed.
    pub fn allowed(&self) -> bool {
        self.label.allows()
    }
}

/// A validated compiled group, ready to decide paths.
#[derive(Clone, Debug)]
pub struct Matcher<'a> {
    labels: &'a [u32],
    rules: &'a [u32],
    /// `(part, its highest answer)`, highest first; the used slots come first.
    parts: [Option<(Part<'a>, u32)>; MAX_PARTS],
}

impl<'a> Matcher<'a> {
    /// Makes a view over the rank tables and up to [`MAX_PARTS`] parts (in any order).
    ///
    /// Checks that the two tables have one entry per rank, that rank 0 is
    /// "no rule", and that no part answers a rank outside the tables.
    pub fn new(
        labels: &'a [u32],
        rules: &'a [u32],
        parts: impl IntoIterator<Item = Part<'a>>,
    ) -> Result<Matcher<'a>, MatcherError> {
        let err = |msg: String| Err(MatcherError(msg));
        if labels.len() != rules.len() {
            return err(format!("{} labels but {} rule indexes", labels.len(), rules.len()));
        }
        if labels.first() != Some(&0) {
            return err("rank 0 must stand for label 0 (no rule)".into());
        }
        let mut slots: [Option<(Part<'a>, u32)>; MAX_PARTS] = Default::default();
        for (n, part) in parts.into_iter().enumerate() {
            if n == MAX_PARTS {
                return err(format!("more than {MAX_PARTS} parts"));
            }
            let max = part.max_answer();
            if max as usize >= labels.len() {
                return err(format!("part {n} answers rank {max} but there are {} ranks", labels.len()));
            }
            slots[n] = Some((part, max));
        }
        // Highest possible answer first; empty slots last.
        slots.sort_by_key(|slot| std::cmp::Reverse(slot.as_ref().map_or(0, |(_, max)| u64::from(*max) + 1)));
        Ok(Matcher { labels, rules, parts: slots })
    }

    /// Decides a path (in the form rules are matched against). Allocates nothing.
    #[inline]
    pub fn decide(&self, path: &[u8]) -> Outcome {
        let mut rank = 0;
        for (part, max) in self.parts.iter().flatten() {
            if *max <= rank {
                break;
            }
            rank = rank.max(part.rank(path, rank));
        }
        self.outcome(rank)
    }

    /// What a rank stands for. Ranks come from this group's parts, which
    /// [`Matcher::new`] checked against the tables.
    pub fn outcome(&self, rank: u32) -> Outcome {
        let rule = self.rules[rank as usize];
        Outcome { rank, label: Label(self.labels[rank as usize]), rule: (rule != u32::MAX).then_some(rule) }
    }

    /// Number of ranks, including 0.
    pub fn ranks(&self) -> usize {
        self.labels.len()
    }

    /// The parts, highest possible answer first.
    pub fn parts(&self) -> impl Iterator<Item = &Part<'a>> {
        self.parts.iter().flatten().map(|(part, _)| part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One state per rank, all sinks: the start state answers `rank`.
    fn constant(rank: u32) -> DfaBuf {
        DfaBuf { classes: [0; 256], stride2: 0, transitions: vec![0], answers: vec![rank], start: 0, sinks: 1 }
    }

    #[test]
    fn parts_combine_by_max_and_tables_give_meaning() {
        let buf = MatcherBuf {
            labels: vec![0, 4, 7],
            rules: vec![u32::MAX, 3, u32::MAX],
            parts: vec![
                PartBuf::Dfa(constant(1)),
                PartBuf::Rules(RuleListBuf::new([(b"/x".as_slice(), 2), (b"/y".as_slice(), 1)])),
            ],
        };
        let m = buf.matcher().unwrap();
        assert!(matches!(m.parts().next(), Some(Part::Rules(_))));
        let x = m.decide(b"/x");
        assert_eq!((x.rank, x.label, x.rule), (2, Label(7), None));
        assert!(x.allowed());
        let y = m.decide(b"/y");
        assert_eq!((y.rank, y.label, y.rule), (1, Label(4), Some(3)));
        assert!(!y.allowed());
    }

    #[test]
    fn rejects_inconsistent_tables() {
        let buf = |labels: Vec<u32>, rules: Vec<u32>, rank: u32| MatcherBuf {
            labels,
            rules,
            parts: vec![PartBuf::Dfa(constant(rank))],
        };
        assert!(buf(vec![0, 2], vec![u32::MAX, 0], 1).matcher().is_ok());
        assert!(buf(vec![0, 2], vec![u32::MAX, 0], 2).matcher().is_err());
        assert!(buf(vec![0, 2], vec![u32::MAX], 1).matcher().is_err());
        assert!(buf(vec![1, 2], vec![u32::MAX, 0], 1).matcher().is_err());
        let many = MatcherBuf { labels: vec![0], rules: vec![u32::MAX], parts: vec![PartBuf::Dfa(constant(0)); 4] };
        assert!(many.matcher().is_err());
        let empty = MatcherBuf { labels: vec![0], rules: vec![u32::MAX], parts: vec![] };
        assert_eq!(empty.matcher().unwrap().decide(b"/").rank, 0);
    }
}
