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

use crate::walk::{self, Automaton, Located, SkipMemo};
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

/// Why a set of tables is not a valid automaton, dense ([`Dfa::new`]) or
/// comb ([`crate::comb::CombDfa::new`]): which invariant is broken, and where.
///
/// State ids are as the tables store them: premultiplied in a dense
/// automaton, plain in a comb.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DfaError {
    /// The automaton has no state at all.
    NoStates,
    /// A dense row is wider than 512 entries (`stride2` above 9).
    StrideTooLarge {
        /// log2 of the row width.
        stride2: u32,
    },
    /// The dense transition table does not have one row per state.
    TransitionCount {
        /// Entries in the transition table.
        transitions: usize,
        /// Number of states (answers).
        states: usize,
        /// Entries per row.
        stride: usize,
    },
    /// A byte class is wider than a dense row.
    ClassPastStride {
        /// The class.
        class: u8,
        /// Entries per row.
        stride: usize,
    },
    /// The dense start id is not a premultiplied state.
    StartNotState {
        /// The start id.
        start: u32,
    },
    /// The comb start state is not a state.
    StartOutOfRange {
        /// The start state.
        start: u32,
        /// Number of states.
        states: usize,
    },
    /// More sink states than states.
    TooManySinks {
        /// The number of sinks claimed.
        sinks: u32,
        /// Number of states.
        states: usize,
    },
    /// A dense transition leads to an id that is not a (premultiplied) state.
    TransitionNotState {
        /// Index of the entry in the transition table.
        index: usize,
        /// The id it holds.
        target: u32,
    },
    /// A comb has more states than its slot ids can name.
    StatesPastSlotIds {
        /// Number of states.
        states: usize,
        /// Bytes per slot id.
        id_bytes: usize,
    },
    /// A comb's answers table has the wrong length (one per state, or none
    /// when the rows carry the answers).
    AnswerCount {
        /// Entries in the answers table.
        answers: usize,
        /// Number of states.
        states: usize,
        /// The length wanted.
        wanted: usize,
    },
    /// A comb row's slots run past the slot table.
    RowPastSlots {
        /// The state whose row it is.
        state: usize,
        /// Where the row starts in the slot table.
        base: u32,
        /// Entries in the slot table.
        slots: usize,
    },
    /// A comb row's default transition leads to an id that is not a state.
    DefaultNotState {
        /// The state whose row it is.
        state: usize,
        /// The id it leads to.
        target: u32,
    },
    /// A comb slot leads to an id that is not a state.
    SlotTargetNotState {
        /// Index of the slot.
        slot: usize,
        /// The id it leads to.
        target: u32,
    },
    /// A comb slot is owned by an id that is neither a state nor free.
    SlotOwnerNotState {
        /// Index of the slot.
        slot: usize,
        /// The owner id.
        owner: u32,
    },
    /// The accelerated states are not strictly ascending.
    AccelsOutOfOrder {
        /// The earlier entry's state.
        first: u32,
        /// The next entry's state, not above `first`.
        second: u32,
    },
    /// The rows marked accelerated are not as many as the states listed.
    AccelCount {
        /// Rows with the accelerated mark.
        marked: usize,
        /// Accelerated states listed.
        listed: usize,
    },
    /// A listed accelerated state is a sink, not a state, or its row is not marked.
    AccelNotMarkedState {
        /// The listed state.
        state: u32,
    },
    /// An accelerated state has not one to three escape bytes.
    AccelEscapeCount {
        /// The accelerated state.
        state: u32,
        /// Its number of escape bytes.
        count: usize,
    },
    /// An accelerated state leaves on a byte that is not one of its escapes,
    /// so skipping to the next escape byte would be wrong.
    AccelLeaves {
        /// The accelerated state.
        state: u32,
        /// The byte it leaves on.
        byte: u8,
    },
}

impl fmt::Display for DfaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid automaton: ")?;
        match *self {
            DfaError::NoStates => f.write_str("no states"),
            DfaError::StrideTooLarge { stride2 } => write!(f, "stride 2^{stride2} is larger than 512"),
            DfaError::TransitionCount { transitions, states, stride } => {
                write!(f, "{transitions} transitions for {states} states of stride {stride}")
            }
            DfaError::ClassPastStride { class, stride } => write!(f, "byte class {class} does not fit stride {stride}"),
            DfaError::StartNotState { start } => write!(f, "start state {start} out of range"),
            DfaError::StartOutOfRange { start, states } => {
                write!(f, "start state {start} out of range ({states} states)")
            }
            DfaError::TooManySinks { sinks, states } => write!(f, "{sinks} sinks but {states} states"),
            DfaError::TransitionNotState { index, target } => {
                write!(f, "transition {index} leads to {target} which is not a state")
            }
            DfaError::StatesPastSlotIds { states, id_bytes } => {
                write!(f, "{states} states do not fit {id_bytes}-byte slot ids")
            }
            DfaError::AnswerCount { answers, states, wanted } => {
                write!(f, "{answers} answers for {states} states (wanted {wanted})")
            }
            DfaError::RowPastSlots { state, base, slots } => {
                write!(f, "row of state {state} at base {base} does not fit {slots} slots")
            }
            DfaError::DefaultNotState { state, target } => {
                write!(f, "default of state {state} leads to {target} which is not a state")
            }
            DfaError::SlotTargetNotState { slot, target } => {
                write!(f, "slot {slot} leads to {target} which is not a state")
            }
            DfaError::SlotOwnerNotState { slot, owner } => {
                write!(f, "slot {slot} is owned by {owner} which is not a state")
            }
            DfaError::AccelsOutOfOrder { first, second } => {
                write!(f, "accelerated states {first} and {second} out of order")
            }
            DfaError::AccelCount { marked, listed } => write!(f, "{marked} rows marked accelerated, {listed} listed"),
            DfaError::AccelNotMarkedState { state } => {
                write!(f, "accelerated state {state} is a sink, no state or not marked")
            }
            DfaError::AccelEscapeCount { state, count } => {
                write!(f, "accelerated state {state} has {count} escape bytes")
            }
            DfaError::AccelLeaves { state, byte } => {
                write!(f, "accelerated state {state} leaves on byte {byte}, not an escape byte")
            }
        }
    }
}

impl std::error::Error for DfaError {}

/// The bitwise OR and the maximum of `ids`, 16 lanes at a time (a form
/// the compiler turns into vector ORs and maxima).
fn ids_union_max<T>(ids: &[T]) -> (u32, u32)
where
    T: Copy + Default + Ord + std::ops::BitOr<Output = T> + Into<u32>,
{
    const LANES: usize = 16;
    let (mut union, mut max) = ([T::default(); LANES], [T::default(); LANES]);
    let mut chunks = ids.chunks_exact(LANES);
    for chunk in &mut chunks {
        for i in 0..LANES {
            union[i] = union[i] | chunk[i];
            max[i] = max[i].max(chunk[i]);
        }
    }
    let lanes = union.iter().zip(&max).map(|(&u, &m)| (u, m));
    let tail = chunks.remainder().iter().map(|&id| (id, id));
    lanes.chain(tail).fold((0, 0), |(u, m), (lane_union, lane_max)| (u | lane_union.into(), m.max(lane_max.into())))
}

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
        if stride2 > 9 {
            return Err(DfaError::StrideTooLarge { stride2 });
        }
        let stride = 1usize << stride2;
        let states = answers.len();
        if states == 0 {
            return Err(DfaError::NoStates);
        }
        if states.checked_mul(stride) != Some(transitions.len()) {
            return Err(DfaError::TransitionCount { transitions: transitions.len(), states, stride });
        }
        if let Some(&class) = classes.iter().find(|&&c| usize::from(c) >= stride) {
            return Err(DfaError::ClassPastStride { class, stride });
        }
        let valid = |id: u32| (id as usize) < transitions.len() && (id as usize) % stride == 0;
        if !valid(start) {
            return Err(DfaError::StartNotState { start });
        }
        if sinks as usize > states {
            return Err(DfaError::TooManySinks { sinks, states });
        }
        // Every id is a state when the ids' union has no bit below the
        // stride and their maximum is below the table's end: one pass of
        // ORs and maxima, which vectorises (a search for the first bad id
        // was five instructions an entry), then the search only to name it.
        let (union, max) = match transitions {
            Transitions::U16(t) => ids_union_max(t),
            Transitions::U32(t) => ids_union_max(t),
        };
        if union as usize % stride != 0 || max as usize >= transitions.len() {
            let bad = match transitions {
                Transitions::U16(t) => t.iter().position(|&id| !valid(u32::from(id))),
                Transitions::U32(t) => t.iter().position(|&id| !valid(id)),
            };
            let index = bad.expect("an id off the stride or past the end");
            return Err(DfaError::TransitionNotState { index, target: transitions.get(index) });
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

    /// The state a scan starts in, as a state index (states are numbered
    /// `0..states()`, the sinks first). With [`Dfa::next_index`],
    /// [`Dfa::answer_at`] and [`Dfa::class_of`] it lets a tool explore the
    /// automaton state by state (the linter walks every reachable state)
    /// through the same transition lookup [`Dfa::scan`] uses, instead of
    /// indexing the stored tables itself.
    pub fn start_index(&self) -> usize {
        (self.start >> self.stride2) as usize
    }

    /// The state index after reading `byte` in state index `state`: one step
    /// of [`Dfa::scan`]. Panics when `state` is not below [`Dfa::states`].
    pub fn next_index(&self, state: usize, byte: u8) -> usize {
        assert!(state < self.states(), "state {state} of an automaton of {} states", self.states());
        let id = (state as u32) << self.stride2;
        let next = match self.walker() {
            Walker::U16(dense) => dense.step(id, byte),
            Walker::U32(dense) => dense.step(id, byte),
        };
        (next >> self.stride2) as usize
    }

    /// The answer (a rank) if the input ends in state index `state`.
    pub fn answer_at(&self, state: usize) -> u32 {
        self.answers[state]
    }

    /// The class of `byte`: bytes of one class lead every state to the same
    /// target, so one byte of each class stands for all of them.
    pub fn class_of(&self, byte: u8) -> u8 {
        self.classes[usize::from(byte)]
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
    fn skip(&self, _: u32, _: &[u8], _: usize, _: &SkipMemo) -> usize {
        0
    }

    #[inline(always)]
    fn accelerated(&self, _: u32) -> bool {
        false
    }

    #[inline(always)]
    fn prefetch_transition(&self, at: Located) {
        walk::prefetch_item(self.table, at.index);
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
    fn rejects_broken_tables_naming_the_problem() {
        let broken = |break_it: fn(&mut DfaBuf)| {
            let mut buf = tiny();
            break_it(&mut buf);
            buf.as_dfa().expect_err("broken tables were accepted")
        };
        assert_eq!(broken(|b| b.transitions[5] = 3), DfaError::TransitionNotState { index: 5, target: 3 });
        assert_eq!(broken(|b| b.transitions[5] = 64), DfaError::TransitionNotState { index: 5, target: 64 });
        assert_eq!(broken(|b| b.start = 1), DfaError::StartNotState { start: 1 });
        assert_eq!(broken(|b| b.sinks = 5), DfaError::TooManySinks { sinks: 5, states: 4 });
        assert_eq!(broken(|b| b.classes[7] = 4), DfaError::ClassPastStride { class: 4, stride: 4 });
        assert_eq!(
            broken(|b| b.transitions.truncate(15)),
            DfaError::TransitionCount { transitions: 15, states: 4, stride: 4 }
        );
        assert_eq!(broken(|b| b.stride2 = 10), DfaError::StrideTooLarge { stride2: 10 });
        assert_eq!(
            broken(|b| {
                b.answers.clear();
                b.transitions.clear();
            }),
            DfaError::NoStates
        );
        assert_eq!(broken(|b| b.transitions[15] = 2), DfaError::TransitionNotState { index: 15, target: 2 });
        let out_of_range = broken(|b| b.transitions[14] = 64);
        assert_eq!(out_of_range.to_string(), "invalid automaton: transition 14 leads to 64 which is not a state");
    }

    /// The transitions' check by the plain definition: the first id that is
    /// past the table or not a multiple of the stride.
    fn first_bad_transition(ids: &[u32], stride: usize) -> Option<usize> {
        ids.iter().position(|&id| id as usize >= ids.len() || id as usize % stride != 0)
    }

    proptest::proptest! {
        /// [`Dfa::new`] refuses a table of 16- or 32-bit ids exactly when
        /// some id is not a state, naming the first such (the vector pass
        /// of ORs and maxima against the entry-by-entry definition), for
        /// tables of every length around the pass's 16 lanes.
        #[test]
        fn transitions_are_refused_as_by_the_plain_check(
            stride2 in 0u32..4,
            states in 1usize..24,
            ids in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..400),
            bad in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(), 0u32..4), 0..3),
            wide in proptest::prelude::any::<bool>(),
        ) {
            let stride = 1usize << stride2;
            let len = states * stride;
            // Mostly states, a few ids off the stride or past the end.
            let mut table: Vec<u32> = (0..len).map(|i| ids.get(i).map_or(0, |&id| (id % states as u32) << stride2)).collect();
            for (at, kind) in bad {
                let i = at.index(len);
                table[i] = match kind {
                    0 => table[i] | 1,
                    1 => len as u32,
                    2 => u32::from(u16::MAX),
                    _ => (len as u32).max(1) * 7 + 3,
                };
            }
            let classes = [0u8; 256];
            let answers = vec![0u32; states];
            let narrow: Vec<u16> = table.iter().map(|&id| id as u16).collect();
            let (transitions, checked) = if wide {
                (Transitions::U32(&table), table.clone())
            } else {
                (Transitions::U16(&narrow), narrow.iter().map(|&id| u32::from(id)).collect())
            };
            let expected = first_bad_transition(&checked, stride)
                .map(|index| DfaError::TransitionNotState { index, target: checked[index] });
            let got = Dfa::new(&classes, stride2, transitions, &answers, 0, 0).err();
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
