//! The precedence of a rule, as one integer.
//!
//! Google's rule: among the rules that match a path, the one with the longest
//! pattern wins, and on a tie allow wins. Packing a rule as
//! `(pattern_len << 1) | allow` turns that into "the larger label wins", so an
//! automaton can carry the best label seen so far in its state and precedence
//! costs nothing when matching.

/// A rule's precedence: `(pattern length in bytes << 1) | allow`.
///
/// `Label::NONE` (0) means "no rule matched", which Google reads as allowed.
/// Rules with an empty pattern are ignored by Google, so every real label is
/// at least 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Label(pub u32);

impl Label {
    /// No rule matched: the path is allowed.
    pub const NONE: Label = Label(0);

    /// The label of a rule whose (escaped) pattern is `pattern_len` bytes long.
    pub fn new(pattern_len: usize, allow: bool) -> Label {
        let len = u32::try_from(pattern_len).unwrap_or(u32::MAX >> 1).min(u32::MAX >> 1);
        Label((len << 1) | u32::from(allow))
    }

    /// The verdict this label stands for: allowed when no rule matched or an
    /// allow rule won.
    pub fn allows(self) -> bool {
        self.0 == 0 || self.0 & 1 == 1
    }

    /// Whether any rule matched.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The winning pattern's length in bytes (0 when none matched).
    pub fn pattern_len(self) -> u32 {
        self.0 >> 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_wins_and_allow_wins_ties() {
        assert!(Label::new(5, false) > Label::new(4, true));
        assert!(Label::new(4, true) > Label::new(4, false));
        assert!(Label::new(1, false) > Label::NONE);
    }

    #[test]
    fn verdicts() {
        assert!(Label::NONE.allows());
        assert!(Label::new(3, true).allows());
        assert!(!Label::new(3, false).allows());
        assert_eq!(Label::new(7, false).pattern_len(), 7);
    }
}
