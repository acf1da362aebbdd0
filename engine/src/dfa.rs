//! The automaton runtime: one forward scan of a path gives the winning rule.
//!
//! A [`Dfa`] is a deterministic automaton over bytes whose states carry an
//! *answer*: the rank of the best rule matched so far (see [`crate::matcher`]
//! for ranks), including rules anchored with `$` that match when the input
//! ends in that state. Because the best rank so far is part of the state,
//! precedence costs nothing at match time.
//!
//! One type serves both forms, generic over where its tables live (as
//! regex-automata's `dense::DFA<T>`): the builder's owned automaton, a
//! [`Dfa`] of `Vec`s, and a view of an artifact's tables read in place, a
//! [`DfaRef`] of borrowed slices in the width the artifact stores. Both are
//! checked by the same [`Dfa::new`] and scan through the same code.
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
use std::borrow::Borrow;
use std::fmt;

/// A premultiplied state id as a dense transition table stores it: `u16`
/// when every id fits (half the table), else `u32`.
pub trait StateId: Copy + Default + Ord + std::ops::BitOr<Output = Self> + Into<u32> + fmt::Debug + 'static {}

impl StateId for u16 {}
impl StateId for u32 {}

/// Where a [`Dfa`]'s transition table lives: a `Vec` or a slice of
/// [`StateId`]s, which fixes the width a step loads.
pub trait TransitionTable: AsRef<[Self::Id]> {
    /// The width of an entry.
    type Id: StateId;
}

impl<I: StateId> TransitionTable for Vec<I> {
    type Id = I;
}

impl<I: StateId> TransitionTable for &[I] {
    type Id = I;
}

/// A deterministic automaton whose states carry answers (see the module
/// documentation), generic over its tables' storage: the transitions `T`
/// (a [`TransitionTable`]), the answers `A` and the byte classes `C`.
///
/// The default, all owned, is what the builder makes and the artifact
/// writer stores; [`DfaRef`] borrows, as an artifact's tables are read in
/// place. Every value was checked by [`Dfa::new`] (or is a view of tables
/// that were, [`Dfa::validated`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dfa<T = Vec<u32>, A = Vec<u32>, C = [u8; 256]> {
    classes: C,
    stride2: u32,
    transitions: T,
    answers: A,
    start: u32,
    sink_limit: u32,
}

/// A [`Dfa`] over borrowed tables (an artifact's, or an owned automaton's
/// through [`Dfa::as_ref`]), its transitions of width `I`: what a walk runs.
pub type DfaRef<'a, I = u32> = Dfa<&'a [I], &'a [u32], &'a [u8; 256]>;

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
fn ids_union_max<T: StateId>(ids: &[T]) -> (u32, u32) {
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

impl<T: TransitionTable, A: AsRef<[u32]>, C: Borrow<[u8; 256]>> Dfa<T, A, C> {
    /// Checks the invariants (see the module documentation) and makes the
    /// automaton.
    pub fn new(classes: C, stride2: u32, transitions: T, answers: A, start: u32, sinks: u32) -> Result<Self, DfaError> {
        let table = transitions.as_ref();
        if stride2 > 9 {
            return Err(DfaError::StrideTooLarge { stride2 });
        }
        let stride = 1usize << stride2;
        let states = answers.as_ref().len();
        if states == 0 {
            return Err(DfaError::NoStates);
        }
        if states.checked_mul(stride) != Some(table.len()) {
            return Err(DfaError::TransitionCount { transitions: table.len(), states, stride });
        }
        if let Some(&class) = classes.borrow().iter().find(|&&c| usize::from(c) >= stride) {
            return Err(DfaError::ClassPastStride { class, stride });
        }
        let valid = |id: u32| (id as usize) < table.len() && (id as usize) % stride == 0;
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
        let (union, max) = ids_union_max(table);
        if union as usize % stride != 0 || max as usize >= table.len() {
            let index = table.iter().position(|&id| !valid(id.into())).expect("an id off the stride or past the end");
            return Err(DfaError::TransitionNotState { index, target: table[index].into() });
        }
        // SAFETY: checked above.
        Ok(unsafe { Dfa::validated(classes, stride2, transitions, answers, start, sinks) })
    }

    /// Makes an automaton of tables that [`Dfa::new`] has already accepted,
    /// without re-checking every transition (which costs the table's size):
    /// for lookups in an artifact whose group was checked on its first use.
    ///
    /// # Safety
    ///
    /// [`Dfa::new`] accepts these very tables: the walks read them without
    /// bounds checks, trusting its checks.
    #[inline]
    pub unsafe fn validated(classes: C, stride2: u32, transitions: T, answers: A, start: u32, sinks: u32) -> Self {
        Dfa { classes, stride2, transitions, answers, start, sink_limit: sinks << stride2 }
    }

    /// This automaton over borrowed tables: what a walk runs (no check, no copy).
    #[inline]
    pub fn as_ref(&self) -> DfaRef<'_, T::Id> {
        Dfa {
            classes: self.classes.borrow(),
            stride2: self.stride2,
            transitions: self.transitions.as_ref(),
            answers: self.answers.as_ref(),
            start: self.start,
            sink_limit: self.sink_limit,
        }
    }

    /// The answer (a rank) for a whole path: the best rule that matches it.
    #[inline]
    pub fn scan(&self, path: &[u8]) -> u32 {
        walk::scan(&self.as_ref(), path)
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
        // SAFETY: `id` is the row start of a state (asserted above).
        (unsafe { self.as_ref().step(id, byte) } >> self.stride2) as usize
    }

    /// The answer (a rank) if the input ends in state index `state`.
    pub fn answer_at(&self, state: usize) -> u32 {
        self.answers.as_ref()[state]
    }

    /// The class of `byte`: bytes of one class lead every state to the same
    /// target, so one byte of each class stands for all of them.
    pub fn class_of(&self, byte: u8) -> u8 {
        self.classes.borrow()[usize::from(byte)]
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.answers.as_ref().len()
    }

    /// Number of sink states (states `0..sinks()`).
    pub fn sinks(&self) -> usize {
        (self.sink_limit >> self.stride2) as usize
    }

    /// The largest answer any state gives: no path scores above it.
    pub fn max_answer(&self) -> u32 {
        self.answers.as_ref().iter().copied().max().unwrap_or(0)
    }

    /// Bytes of the tables (classes, transitions, answers).
    pub fn memory_bytes(&self) -> usize {
        256 + std::mem::size_of_val(self.transitions.as_ref()) + std::mem::size_of_val(self.answers.as_ref())
    }

    /// Byte to class.
    pub fn classes(&self) -> &[u8; 256] {
        self.classes.borrow()
    }

    /// log2 of the row width.
    pub fn stride2(&self) -> u32 {
        self.stride2
    }

    /// The premultiplied transitions, [`Dfa::states`] rows of `1 << stride2` entries.
    pub fn transitions(&self) -> &[T::Id] {
        self.transitions.as_ref()
    }

    /// The answer per state.
    pub fn answers(&self) -> &[u32] {
        self.answers.as_ref()
    }

    /// The premultiplied start state.
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Whether every transition fits in 16 bits (the artifact then stores u16).
    pub fn fits_u16(&self) -> bool {
        self.transitions.as_ref().len() <= usize::from(u16::MAX) + 1
    }
}

impl<I: StateId> Automaton for DfaRef<'_, I> {
    #[inline(always)]
    fn start(&self) -> u32 {
        self.start
    }

    #[inline(always)]
    fn is_sink(&self, state: u32) -> bool {
        state < self.sink_limit
    }

    // The tables passed [`Dfa::new`]'s checks: every id (the start and
    // each transition) is a row's start within the transitions, and every
    // class is below the stride.

    #[inline(always)]
    unsafe fn locate(&self, state: u32, byte: u8) -> Located {
        Located { index: state as usize + usize::from(self.classes[usize::from(byte)]), default: 0 }
    }

    #[inline(always)]
    unsafe fn follow(&self, _: u32, at: Located) -> u32 {
        // SAFETY: `at` is a state's row start plus a class below the stride.
        unsafe { (*self.transitions.get_unchecked(at.index)).into() }
    }

    #[inline(always)]
    unsafe fn answer(&self, state: u32) -> u32 {
        // SAFETY: `state` is a state's row start: its index has an answer.
        unsafe { *self.answers.get_unchecked((state >> self.stride2) as usize) }
    }

    #[inline(always)]
    fn prefetch_row(&self, _: u32) {}

    #[inline(always)]
    fn skip(&self, _: u32, _: &[u8], _: usize, _: &SkipMemo) -> usize {
        0
    }

    #[inline(always)]
    unsafe fn accelerated(&self, _: u32) -> bool {
        false
    }

    #[inline(always)]
    fn prefetch_transition(&self, at: Located) {
        walk::prefetch_item(self.transitions, at.index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An automaton's tables, to break one at a time before [`Dfa::new`] sees them.
    #[derive(Clone)]
    struct Tables {
        classes: [u8; 256],
        stride2: u32,
        transitions: Vec<u32>,
        answers: Vec<u32>,
        start: u32,
        sinks: u32,
    }

    impl Tables {
        /// The owned automaton of these tables, if they are valid.
        fn dfa(self) -> Result<Dfa, DfaError> {
            Dfa::new(self.classes, self.stride2, self.transitions, self.answers, self.start, self.sinks)
        }
    }

    /// Hand-made: "/a" scores 5 (and is final), anything else 0.
    fn tiny() -> Tables {
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
        Tables { classes, stride2: 2, transitions, answers: vec![0, 5, 0, 0], start: s(2), sinks: 2 }
    }

    #[test]
    fn scans() {
        let owned = tiny().dfa().unwrap();
        // The owned automaton and its borrowed view scan alike.
        let view: DfaRef<'_> = owned.as_ref();
        for path in [b"/a".as_slice(), b"/abc", b"/b", b"/", b""] {
            assert_eq!(owned.scan(path), view.scan(path));
        }
        let narrow: Vec<u16> = owned.transitions().iter().map(|&id| id as u16).collect();
        let dfa = Dfa::new(owned.classes(), 2, narrow.as_slice(), owned.answers(), owned.start(), 2).unwrap();
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
        let broken = |break_it: fn(&mut Tables)| {
            let mut tables = tiny();
            break_it(&mut tables);
            tables.dfa().expect_err("broken tables were accepted")
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
            let checked: Vec<u32> = if wide { table.clone() } else { narrow.iter().map(|&id| u32::from(id)).collect() };
            let expected = first_bad_transition(&checked, stride)
                .map(|index| DfaError::TransitionNotState { index, target: checked[index] });
            let got = if wide {
                Dfa::new(&classes, stride2, table.as_slice(), answers.as_slice(), 0, 0).err()
            } else {
                Dfa::new(&classes, stride2, narrow.as_slice(), answers.as_slice(), 0, 0).err()
            };
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
