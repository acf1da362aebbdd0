//! A compiled group: automaton parts combined by rank.
//!
//! The ranks and parts a group holds are described on [`Matcher`].
//!
//! # One way to run a group
//!
//! [`Matcher::new`] checks the tables (rank tables against the parts'
//! answers), and its view ([`MatcherRef`], [`Matcher::matcher`]) runs the
//! group through [`CompiledGroup`], the runtime the
//! artifact's classifier uses too: automata first, then the rule lists,
//! whose prefilter skips the rules that cannot beat the rank found so far.
//! So the compiled tables that tests and benches decide with are walked by
//! the very code that decides a frontier. What a matcher adds is the rule
//! index table, to name the deciding rule of an explain-mode group.
//!
//! Parts sit in a fixed inline array instead of a `Vec`, so making a view of
//! an automaton-only group allocates nothing and matching never allocates.

use crate::compiled::Matcher;
use crate::runtime::{CompiledGroup, RunnerPart};
use robotsieve_core::Label;

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

/// A checked compiled group ready to decide paths ([`Matcher::matcher`]):
/// its rank tables borrowed, its parts run by [`CompiledGroup`], each rule
/// list with its prefilter.
pub type MatcherRef<'a> = Matcher<&'a [u32], CompiledGroup<'a>>;

impl Matcher {
    /// The view that decides paths, each rule list's prefilter built now
    /// (the group itself, which the builder makes and the writer stores,
    /// never builds one).
    pub fn matcher(&self) -> MatcherRef<'_> {
        let mut group = CompiledGroup::new(self.labels());
        for part in self.parts() {
            group.push(RunnerPart::prefiltered(part.as_stored()));
        }
        Matcher::validated(self.labels(), self.rules(), group)
    }
}

impl<T: AsRef<[u32]>, P> Matcher<T, P> {
    /// What a rank stands for. Ranks come from this group's parts, which
    /// [`Matcher::new`] checked against the tables.
    pub fn outcome(&self, rank: u32) -> Outcome {
        let rule = self.rules()[rank as usize];
        Outcome { rank, label: Label(self.labels()[rank as usize]), rule: (rule != u32::MAX).then_some(rule) }
    }
}

impl<'a> MatcherRef<'a> {
    /// Decides a path (in the form rules are matched against). Allocates nothing.
    #[inline]
    pub fn decide(&self, path: &[u8]) -> Outcome {
        self.outcome(self.compiled_group().rank(path))
    }

    /// The group as the runtime runs it.
    pub fn compiled_group(&self) -> &CompiledGroup<'a> {
        self.part_storage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::{MatcherError, Part};
    use crate::dfa::Dfa;
    use crate::rules::RuleList;

    /// One state per rank, all sinks: the start state answers `rank`.
    fn constant(rank: u32) -> Dfa {
        Dfa::new([0; 256], 0, vec![0], vec![rank], 0, 1).unwrap()
    }

    #[test]
    fn parts_combine_by_max_and_tables_give_meaning() {
        let group = Matcher::new(
            vec![0, 4, 7],
            vec![u32::MAX, 3, u32::MAX],
            vec![
                Part::Dfa(constant(1)),
                Part::Rules(RuleList::from_rules([(b"/x".as_slice(), 2), (b"/y".as_slice(), 1)])),
            ],
        )
        .unwrap();
        assert_eq!(group.ranks(), 3);
        let m = group.matcher();
        assert_eq!((m.ranks(), m.labels(), m.rules()), (3, group.labels(), group.rules()));
        let x = m.decide(b"/x");
        assert_eq!((x.rank, x.label, x.rule), (2, Label(7), None));
        assert!(x.allowed());
        let y = m.decide(b"/y");
        assert_eq!((y.rank, y.label, y.rule), (1, Label(4), Some(3)));
        assert!(!y.allowed());
    }

    #[test]
    fn rejects_inconsistent_tables() {
        let group =
            |labels: Vec<u32>, rules: Vec<u32>, rank: u32| Matcher::new(labels, rules, vec![Part::Dfa(constant(rank))]);
        assert!(group(vec![0, 2], vec![u32::MAX, 0], 1).is_ok());
        assert!(group(vec![0, 2], vec![u32::MAX, 0], 2).is_err());
        assert!(group(vec![0, 2], vec![u32::MAX], 1).is_err());
        assert!(group(vec![1, 2], vec![u32::MAX, 0], 1).is_err());
        assert!(Matcher::new(vec![0], vec![u32::MAX], vec![Part::Dfa(constant(0)); 4]).is_err());
        let empty = Matcher::new(vec![0], vec![u32::MAX], vec![]).unwrap();
        assert_eq!(empty.matcher().decide(b"/").rank, 0);
    }

    #[test]
    fn each_inconsistency_gives_its_own_error() {
        let buf = |labels: Vec<u32>, rules: Vec<u32>, parts: Vec<Part>| Matcher::new(labels, rules, parts);
        let rank = |rank| vec![Part::Dfa(constant(rank))];
        let e = buf(vec![0, 2], vec![u32::MAX, 0], rank(2)).unwrap_err();
        assert!(matches!(e, MatcherError::RankOutOfRange { part: 0, rank: 2, ranks: 2 }), "{e}");
        let e = buf(vec![0, 2], vec![u32::MAX], rank(1)).unwrap_err();
        assert!(matches!(e, MatcherError::RankTablesDiffer { labels: 2, rules: 1 }), "{e}");
        let e = buf(vec![1, 2], vec![u32::MAX, 0], rank(1)).unwrap_err();
        assert!(matches!(e, MatcherError::RankZeroNotNoRule), "{e}");
        let e = buf(vec![0], vec![u32::MAX], vec![Part::Dfa(constant(0)); 5]).unwrap_err();
        assert!(matches!(e, MatcherError::TooManyParts { parts: 5 }), "{e}");
        assert_eq!(e.to_string(), "invalid compiled group: 5 parts, at most 3 allowed");
        // A rule list's best rank is checked against the tables as an automaton's is.
        let rules = Part::Rules(RuleList::from_rules([(b"/a".as_slice(), 2)]));
        let e = buf(vec![0, 1], vec![u32::MAX, 0], vec![Part::Dfa(constant(1)), rules]).unwrap_err();
        assert!(matches!(e, MatcherError::RankOutOfRange { part: 1, rank: 2, ranks: 2 }), "{e}");
    }
}
