//! The automaton runtime: one forward scan of a path gives the winning rule.
//!
//! A [`Dfa`] is a deterministic automaton over bytes whose states carry an
//! *answer*: the rank of the best rule matched so far (see [`crate::matcher`]
//! for ranks), including rules anchored with `$` that match when the input
//! ends in that state. Because the best rank so far is part of the state,
//! precedence costs nothing at match time.
//!
//! # Representation (what the artifact stores)
//!
//! - `classes`: 256 bytes mapping each input byte to its equivalence class.
//! - `stride2`: log2 of the row width; a row has `1 << stride2` entries, at
//!   least the number of classes.
//! - `transitions`: `states << stride2` entries of `u16` or `u32`. Entries are
//!   *premultiplied* state ids (`state << stride2`), so the next row is found
//!   without a multiplication.
//! - `answers`: one `u32` per state: the rank if the input ends in that state.
//! - `start`: the premultiplied start state.
//! - `sinks`: states `0 .. sinks` are sinks: every transition loops back and
//!   the answer can no longer change, so a scan stops at the first id below
//!   `sinks << stride2`.
//!
//! # Invariants
//!
//! Checked by [`Dfa::new`], so that a scan never indexes out of bounds: the
//! transition table has exactly `answers.len() << stride2` entries, every
//! entry and `start` is a multiple of `1 << stride2` below that length, every
//! class is below `1 << stride2`, and `sinks <= answers.len()`.

use crate::walk::{self, Automaton, Located};
use std::fmt;

/// The transition table of a [`Dfa`], in the narrowest width that fits.
#[derive(Clone, Copy, Debug)]
pub enum Transitions<'a> {
    /// Premultiplied ids below 65,536.
    U16(&'a [u16]),
    /// Premultiplied ids of any size.
    U32(&'a [u32]),
}

impl Transitions<'_> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Transitions::U16(t) => t.len(),
            Transitions::U32(t) => t.len(),
        }
    }

    /// Whether the table is empty (never true for a valid automaton).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, i: usize) -> u32 {
        match self {
            Transitions::U16(t) => u32::from(t[i]),
            Transitions::U32(t) => t[i],
        }
    }
}

/// A borrowed, validated automaton (from an artifact or a [`DfaBuf`]).
#[derive(Clone, Copy, Debug)]
pub struct Dfa<'a> {
    classes: &'a [u8; 256],
    stride2: u32,
    transitions: Transitions<'a>,
    answers: &'a [u32],
    start: u32,
    sink_limit: u32,
}

/// Why a set of tables is not a valid automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DfaError(pub String);

impl fmt::Display for DfaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid automaton: {}", self.0)
    }
}

impl std::error::Error for DfaError {}

impl<'a> Dfa<'a> {
    /// Checks the invariants (see the module documentation) and makes a view.
    pub fn new(
        classes: &'a [u8; 256],
        stride2: u32,
        transitions: Transitions<'a>,
        answers: &'a [u32],
        start: u32,
        sinks: u32,
    ) -> Result<Dfa<'a>, DfaError> {
        let err = |msg: String| Err(DfaError(msg));
        if stride2 > 9 {
            return err(format!("stride 2^{stride2} is larger than 512"));
        }
        let stride = 1usize << stride2;
        if answers.is_empty() {
            return err("no states".into());
        }
        let expected = answers.len().checked_mul(stride);
        if expected != Some(transitions.len()) {
            return err(format!("{} transitions for {} states of stride {stride}", transitions.len(), answers.len()));
        }
        if let Some(c) = classes.iter().find(|&&c| usize::from(c) >= stride) {
            return err(format!("byte class {c} does not fit stride {stride}"));
        }
        let valid = |id: u32| (id as usize) < transitions.len() && (id as usize) % stride == 0;
        if !valid(start) {
            return err(format!("start state {start} out of range"));
        }
        if sinks as usize > answers.len() {
            return err(format!("{sinks} sinks but {} states", answers.len()));
        }
        let bad = match transitions {
            Transitions::U16(t) => t.iter().position(|&id| !valid(u32::from(id))),
            Transitions::U32(t) => t.iter().position(|&id| !valid(id)),
        };
        if let Some(i) = bad {
            return err(format!("transition {i} leads to {} which is not a state", transitions.get(i)));
        }
        Ok(Dfa { classes, stride2, transitions, answers, start, sink_limit: sinks << stride2 })
    }

    /// Makes a view of tables that [`Dfa::new`] has already accepted, without
    /// re-checking every transition (which costs the table's size): for
    /// lookups in an artifact whose tables were all checked when it was opened.
    /// Given tables that were never checked, [`Dfa::scan`] may panic on an
    /// out-of-range index, but never reads out of bounds.
    pub fn validated(
        classes: &'a [u8; 256],
        stride2: u32,
        transitions: Transitions<'a>,
        answers: &'a [u32],
        start: u32,
        sinks: u32,
    ) -> Dfa<'a> {
        Dfa { classes, stride2, transitions, answers, start, sink_limit: sinks << stride2 }
    }

    /// The answer (a rank) for a whole path: the best rule that matches it.
    #[inline]
    pub fn scan(&self, path: &[u8]) -> u32 {
        match self.walker() {
            Walker::U16(dense) => walk::scan(&dense, path),
            Walker::U32(dense) => walk::scan(&dense, path),
        }
    }

    /// This automaton with its table width fixed, for walking.
    #[inline]
    pub(crate) fn walker(&self) -> Walker<'a> {
        let Dfa { classes, stride2, transitions, answers, start, sink_limit } = *self;
        match transitions {
            Transitions::U16(table) => Walker::U16(Dense { classes, table, answers, stride2, start, sink_limit }),
            Transitions::U32(table) => Walker::U32(Dense { classes, table, answers, stride2, start, sink_limit }),
        }
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.answers.len()
    }

    /// Number of sink states.
    pub fn sinks(&self) -> usize {
        (self.sink_limit >> self.stride2) as usize
    }

    /// The largest answer any state gives: no path scores above it.
    pub fn max_answer(&self) -> u32 {
        self.answers.iter().copied().max().unwrap_or(0)
    }

    /// Bytes of the tables (classes, transitions, answers).
    pub fn memory_bytes(&self) -> usize {
        let width = match self.transitions {
            Transitions::U16(_) => 2,
            Transitions::U32(_) => 4,
        };
        256 + self.transitions.len() * width + self.answers.len() * 4
    }
}

/// A [`Dfa`] whose table width is known, so that a step is one indexed load.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dense<'a, T> {
    classes: &'a [u8; 256],
    table: &'a [T],
    answers: &'a [u32],
    stride2: u32,
    start: u32,
    sink_limit: u32,
}

/// A [`Dfa`] ready to walk, by table width.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Walker<'a> {
    /// 16-bit transitions.
    U16(Dense<'a, u16>),
    /// 32-bit transitions.
    U32(Dense<'a, u32>),
}

impl<T: Copy + Into<u32>> Automaton for Dense<'_, T> {
    const LOCATE_READS_ROW: bool = false;

    #[inline(always)]
    fn start(&self) -> u32 {
        self.start
    }

    #[inline(always)]
    fn is_sink(&self, state: u32) -> bool {
        state < self.sink_limit
    }

    #[inline(always)]
    fn locate(&self, state: u32, byte: u8) -> Located {
        Located { index: state as usize + usize::from(self.classes[usize::from(byte)]), default: 0 }
    }

    #[inline(always)]
    fn follow(&self, _: u32, at: Located) -> u32 {
        self.table[at.index].into()
    }

    #[inline(always)]
    fn answer(&self, state: u32) -> u32 {
        self.answers[(state >> self.stride2) as usize]
    }

    #[inline(always)]
    fn prefetch_row(&self, _: u32) {}

    #[inline(always)]
    fn skip(&self, _: u32, _: &[u8]) -> usize {
        0
    }

    #[inline(always)]
    fn prefetch_transition(&self, at: Located) {
        if let Some(entry) = self.table.get(at.index) {
            walk::prefetch(entry);
        }
    }
}

/// An owned automaton, as the builder makes it and the artifact writer stores it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DfaBuf {
    /// Byte to class.
    pub classes: [u8; 256],
    /// log2 of the row width.
    pub stride2: u32,
    /// Premultiplied transitions, `answers.len() << stride2` entries.
    pub transitions: Vec<u32>,
    /// The answer per state.
    pub answers: Vec<u32>,
    /// The premultiplied start state.
    pub start: u32,
    /// States `0..sinks` are sinks.
    pub sinks: u32,
}

impl DfaBuf {
    /// Whether every transition fits in 16 bits (the artifact then stores u16).
    pub fn fits_u16(&self) -> bool {
        self.transitions.len() <= usize::from(u16::MAX) + 1
    }

    /// A view for matching; fails if the builder broke an invariant.
    pub fn as_dfa(&self) -> Result<Dfa<'_>, DfaError> {
        Dfa::new(
            &self.classes,
            self.stride2,
            Transitions::U32(&self.transitions),
            &self.answers,
            self.start,
            self.sinks,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-made: "/a" scores 5 (and is final), anything else 0.
    fn tiny() -> DfaBuf {
        // states: 0 = sink answer 0, 1 = sink answer 5, 2 = start, 3 = after '/'.
        let mut classes = [0u8; 256];
        classes[usize::from(b'/')] = 1;
        classes[usize::from(b'a')] = 2;
        let s = |i: u32| i << 2;
        let transitions = vec![
            s(0),
            s(0),
            s(0),
            s(0), // sink 0
            s(1),
            s(1),
            s(1),
            s(1), // sink 1
            s(0),
            s(3),
            s(0),
            s(0), // start
            s(0),
            s(0),
            s(1),
            s(0), // after '/'
        ];
        DfaBuf { classes, stride2: 2, transitions, answers: vec![0, 5, 0, 0], start: s(2), sinks: 2 }
    }

    #[test]
    fn scans() {
        let buf = tiny();
        let dfa = buf.as_dfa().unwrap();
        assert_eq!(dfa.scan(b"/a"), 5);
        assert_eq!(dfa.scan(b"/abc"), 5);
        assert_eq!(dfa.scan(b"/b"), 0);
        assert_eq!(dfa.scan(b"/"), 0);
        assert_eq!(dfa.scan(b""), 0);
        assert_eq!(dfa.sinks(), 2);
        assert_eq!(dfa.max_answer(), 5);
    }

    #[test]
    fn rejects_broken_tables() {
        let mut buf = tiny();
        buf.transitions[5] = 3; // not premultiplied
        assert!(buf.as_dfa().is_err());
        let mut buf = tiny();
        buf.transitions[5] = 64; // out of range
        assert!(buf.as_dfa().is_err());
        let mut buf = tiny();
        buf.start = 1;
        assert!(buf.as_dfa().is_err());
        let mut buf = tiny();
        buf.sinks = 5;
        assert!(buf.as_dfa().is_err());
        let mut buf = tiny();
        buf.classes[7] = 4;
        assert!(buf.as_dfa().is_err());
        let mut buf = tiny();
        buf.transitions.pop();
        assert!(buf.as_dfa().is_err());
    }
}
