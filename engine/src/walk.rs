//! Walking a path through an automaton: once, or many walks interleaved.
//!
//! Both table layouts ([`crate::dfa`]'s dense rows and [`crate::comb`]'s
//! row-displaced ones) implement [`Automaton`]: a start state, a step per
//! byte, the sinks where a walk may stop early, the bytes a state lets a walk
//! skip (an accelerated comb state), and the answer of a state. On top of
//! that this module holds the two ways of walking, each written once:
//!
//! - [`scan`]: one path, byte after byte. Each step's table lookup depends on
//!   the one before, so when the tables are not in the cache every byte waits
//!   for a memory access.
//! - [`interleave`]: many independent paths in lockstep, one byte of each in
//!   turn. A frontier visits tens of thousands of origins in random order, so
//!   almost every automaton it reaches is cold; interleaving puts the lookups
//!   of different paths side by side, and the processor overlaps their cache
//!   misses instead of waiting for each in turn.
//!
//! Both give the same answer for a path (a test below checks it).

/// An automaton whose states carry answers: the interface a walk needs.
///
/// A step is split in two lookups, so that [`interleave`] can start fetching
/// each one's memory a round before it reads it: [`Automaton::locate`] finds
/// where the transition is stored (the comb reads the state's row there; the
/// dense table only adds the byte's class), and [`Automaton::follow`] reads
/// the target from there.
///
/// Implementations are small `Copy` views of tables that were checked when
/// they were made (see [`crate::dfa::Dfa::new`], [`crate::comb::CombDfa::new`]),
/// so no method can index out of bounds on them.
pub(crate) trait Automaton: Copy {
    /// Whether [`Automaton::locate`] reads the state's own table memory (a
    /// comb row), which a walk should then fetch a round ahead too.
    const LOCATE_READS_ROW: bool;

    /// The state a walk starts in.
    fn start(&self) -> u32;
    /// Whether `state` is a sink: its answer can no longer change, so the
    /// walk stops there.
    fn is_sink(&self, state: u32) -> bool;
    /// Where the transition of `state` on `byte` is stored.
    fn locate(&self, state: u32, byte: u8) -> Located;
    /// The target of the transition `locate(state, _)` found.
    fn follow(&self, state: u32, at: Located) -> u32;
    /// The answer (a rank) if the input ends in `state`.
    fn answer(&self, state: u32) -> u32;
    /// Starts fetching the memory `locate(state, _)` reads, if any.
    fn prefetch_row(&self, state: u32);
    /// Starts fetching the memory `follow(_, at)` reads.
    fn prefetch_transition(&self, at: Located);
    /// How many leading bytes of `rest` leave `state` where it is: a walk may
    /// pass over them at once. Zero unless the automaton knows the state
    /// loops on all bytes but a few (an accelerated comb state).
    fn skip(&self, state: u32, rest: &[u8]) -> usize;

    /// The state after reading `byte` in `state`.
    #[inline(always)]
    fn step(&self, state: u32, byte: u8) -> u32 {
        self.follow(state, self.locate(state, byte))
    }
}

/// Where a transition is stored: an index into the automaton's transition
/// table, and the target to take if that entry turns out not to belong to
/// the state (the comb's row default; unused by dense tables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Located {
    /// Index of the transition entry.
    pub index: usize,
    /// The target when the entry is another state's.
    pub default: u32,
}

/// Asks the processor to start loading the cache line of `item`, without
/// waiting for it. A hint only: it changes no memory and cannot fault, and
/// where there is no prefetch instruction it does nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 has no architectural effect (it loads nothing into
    // registers and never faults); the pointer comes from a reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// The answer for a whole path: walk from the start, stop at the end or at
/// the first sink.
#[inline]
pub(crate) fn scan<A: Automaton>(automaton: &A, path: &[u8]) -> u32 {
    let mut state = automaton.start();
    let mut rest = path;
    while !automaton.is_sink(state) {
        rest = &rest[automaton.skip(state, rest)..];
        let Some((&byte, tail)) = rest.split_first() else { break };
        state = automaton.step(state, byte);
        rest = tail;
    }
    automaton.answer(state)
}

/// One path on its way through one automaton, for [`interleave`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walk<'p, A> {
    /// The automaton.
    pub automaton: A,
    /// The bytes still to read.
    pub rest: &'p [u8],
    /// The current state.
    pub state: u32,
    /// A transition located (and being fetched), not yet followed.
    pub pending: Option<Located>,
    /// The caller's number for this walk, handed back with its answer.
    pub job: u32,
}

impl<'p, A: Automaton> Walk<'p, A> {
    /// A walk of `path` through `automaton`, at its start state.
    pub fn new(automaton: A, path: &'p [u8], job: u32) -> Walk<'p, A> {
        Walk { automaton, rest: path, state: automaton.start(), pending: None, job }
    }
}

/// How many walks [`interleave`] keeps going at once: enough to cover the
/// misses a core can have outstanding, few enough that the loop over them
/// stays short.
pub(crate) const WINDOW: usize = 32;

/// Walks every path of `walks` to its end (or a sink), a lookup of each walk
/// in a window of [`WINDOW`] in turn, and calls `finish(job, answer)` once
/// per walk, in no particular order. Leaves `walks` in an unspecified order.
///
/// Every lookup's memory is prefetched one round (a visit of every walk in
/// the window) before it is read, so that the misses of the whole window are
/// in flight at once: a round locates each walk's next transition and starts
/// fetching it, the next round follows it and starts fetching the new
/// state's row (comb; a dense walk locates its next transition at once). A
/// finished walk's place in the window goes to the next waiting walk, so that
/// the number of walks in flight stays up until the last ones (paths differ
/// in length, and lockstep over a fixed set would soon be down to its longest
/// walk).
pub(crate) fn interleave<A: Automaton>(walks: &mut [Walk<'_, A>], mut finish: impl FnMut(u32, u32)) {
    // walks[..live] are in the window; walks[waiting..] have not started.
    let mut waiting = walks.len().min(WINDOW);
    let mut live = waiting;
    for w in &walks[..live] {
        w.automaton.prefetch_row(w.state);
    }
    while live > 0 {
        let mut i = 0;
        while i < live {
            let w = &mut walks[i];
            if let Some(at) = w.pending.take() {
                w.state = w.automaton.follow(w.state, at);
                if A::LOCATE_READS_ROW && !w.rest.is_empty() && !w.automaton.is_sink(w.state) {
                    w.automaton.prefetch_row(w.state);
                    i += 1;
                    continue;
                }
            }
            if !w.automaton.is_sink(w.state) {
                w.rest = &w.rest[w.automaton.skip(w.state, w.rest)..];
            }
            match w.rest.split_first() {
                Some((&byte, rest)) if !w.automaton.is_sink(w.state) => {
                    let at = w.automaton.locate(w.state, byte);
                    w.automaton.prefetch_transition(at);
                    w.pending = Some(at);
                    w.rest = rest;
                    i += 1;
                }
                _ => {
                    finish(w.job, w.automaton.answer(w.state));
                    if waiting < walks.len() {
                        walks[i] = walks[waiting];
                        walks[i].automaton.prefetch_row(walks[i].state);
                        waiting += 1;
                        i += 1;
                    } else {
                        live -= 1;
                        walks.swap(i, live);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Counts `a` bytes up to 3, with 3 a sink; the answer is the count.
    #[derive(Clone, Copy)]
    struct CountA;

    impl Automaton for CountA {
        const LOCATE_READS_ROW: bool = true;
        fn start(&self) -> u32 {
            0
        }
        fn is_sink(&self, state: u32) -> bool {
            state == 3
        }
        fn locate(&self, _: u32, byte: u8) -> Located {
            Located { index: usize::from(byte == b'a'), default: 0 }
        }
        fn follow(&self, state: u32, at: Located) -> u32 {
            state + at.index as u32
        }
        fn answer(&self, state: u32) -> u32 {
            state
        }
        fn prefetch_row(&self, _: u32) {}
        fn prefetch_transition(&self, _: Located) {}
        fn skip(&self, state: u32, rest: &[u8]) -> usize {
            // State 2 loops on everything but `a`.
            if state == 2 {
                rest.iter().position(|&b| b == b'a').unwrap_or(rest.len())
            } else {
                0
            }
        }
    }

    #[test]
    fn scan_stops_at_a_sink() {
        assert_eq!(scan(&CountA, b""), 0);
        assert_eq!(scan(&CountA, b"xax"), 1);
        assert_eq!(scan(&CountA, b"aaaaaa"), 3);
    }

    proptest! {
        #[test]
        fn interleaved_walks_answer_as_single_scans(paths in prop::collection::vec("[ab]{0,12}", 0..3 * WINDOW)) {
            let mut walks: Vec<_> =
                paths.iter().enumerate().map(|(i, p)| Walk::new(CountA, p.as_bytes(), i as u32)).collect();
            let mut got = vec![None; paths.len()];
            interleave(&mut walks, |job, answer| {
                assert!(got[job as usize].replace(answer).is_none(), "walk {job} finished twice");
            });
            let want: Vec<_> = paths.iter().map(|p| Some(scan(&CountA, p.as_bytes()))).collect();
            prop_assert_eq!(got, want);
        }
    }
}
