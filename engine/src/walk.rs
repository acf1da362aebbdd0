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

use std::sync::atomic::{AtomicU64, Ordering};

/// An automaton whose states carry answers: the interface a walk needs.
///
/// A step is split in two lookups, so that [`interleave`] can start fetching
/// each one's memory a round before it reads it: [`Automaton::locate`] finds
/// where the transition is stored (the comb reads the state's row there; the
/// dense table only adds the byte's class), and [`Automaton::follow`] reads
/// the target from there.
///
/// Implementations are small `Copy` views of tables that were checked when
/// they were made (see [`crate::dfa::Dfa::new`], [`crate::comb::CombDfa::new`]):
/// every state id a table holds (the start, a target, a default) is a
/// state, and every state's row lies within the transitions. So a step
/// from a state to a state needs no bounds check, and the methods a step
/// takes read their tables unchecked (callgrind, `filter --threads 1
/// --verdicts` at N = 100,000: 884.3 to 834.8 instructions a URL on
/// crawl2019 x40, 1,795.7 to 1,739.5 on the frontier x20). They are
/// `unsafe` for that: each is given a state of this automaton, its start
/// or a state a step reached ([`Automaton::locate`]'s `Located` for
/// [`Automaton::follow`]), never a number from elsewhere.
pub(crate) trait Automaton: Copy {
    /// The state a walk starts in.
    fn start(&self) -> u32;
    /// Whether `state` is a sink: its answer can no longer change, so the
    /// walk stops there.
    fn is_sink(&self, state: u32) -> bool;
    /// Where the transition of `state` on `byte` is stored.
    ///
    /// # Safety
    ///
    /// `state` is a state of this automaton (see the trait).
    unsafe fn locate(&self, state: u32, byte: u8) -> Located;
    /// The target of the transition `locate(state, _)` found.
    ///
    /// # Safety
    ///
    /// `at` is what [`Automaton::locate`] gave for `state`, a state of this
    /// automaton.
    unsafe fn follow(&self, state: u32, at: Located) -> u32;
    /// The answer (a rank) if the input ends in `state`.
    ///
    /// # Safety
    ///
    /// `state` is a state of this automaton.
    unsafe fn answer(&self, state: u32) -> u32;
    /// Starts fetching the memory `locate(state, _)` reads, if any.
    fn prefetch_row(&self, state: u32);
    /// Starts fetching the memory `follow(_, at)` reads.
    fn prefetch_transition(&self, at: Located);
    /// How many bytes of `path` from `at` on (`at <= path.len()`) leave
    /// `state` where it is: a walk may pass over them at once. Zero unless
    /// the automaton knows the state loops on all bytes but a few (an
    /// accelerated comb state). The whole path is given so that a search
    /// may read whole blocks of it; bytes before `at` do not count.
    ///
    /// `last` is what walks through this automaton (this very one: a
    /// memo is never shared between automata) remember of the state they
    /// last skipped in, so that the state's escapes are looked up once for
    /// a run of paths; the automaton may read and replace it. Only a skip
    /// touches it: a path that never reaches an accelerated state neither
    /// reads nor writes it.
    fn skip(&self, state: u32, path: &[u8], at: usize, last: &SkipMemo) -> usize;
    /// Whether [`Automaton::skip`] may pass over bytes in `state`: false
    /// means it would answer 0, and [`scan`] does not ask. Cheap (the comb
    /// reads a bit of the row [`Automaton::locate`] reads anyway), so that
    /// the common step pays a test, not a call's bookkeeping.
    ///
    /// # Safety
    ///
    /// `state` is a state of this automaton.
    unsafe fn accelerated(&self, state: u32) -> bool;

    /// The state after reading `byte` in `state`: a state of this automaton.
    ///
    /// # Safety
    ///
    /// `state` is a state of this automaton.
    #[inline(always)]
    unsafe fn step(&self, state: u32, byte: u8) -> u32 {
        // SAFETY: `state` is a state (the caller's word), and `follow` gets
        // what `locate` found for it.
        unsafe { self.follow(state, self.locate(state, byte)) }
    }
}

/// The accelerated state a walk skipped in last and its escapes, in the
/// form the automaton searches for them ([`Automaton::skip`]): a comb looks
/// a state's escapes up in a sorted list, and a run of paths through one
/// group usually skips in the same state path after path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LastSkip {
    /// The state, or [`LastSkip::NONE`]'s, which no state has (ids are
    /// below the number of states, itself at most `u32::MAX`).
    pub state: u32,
    /// Its escapes, as the automaton stores them for its search.
    pub escapes: u32,
}

impl LastSkip {
    /// Nothing remembered yet.
    pub const NONE: LastSkip = LastSkip { state: u32::MAX, escapes: 0 };

    /// Both fields in one word, for a holder that threads share
    /// ([`SkipMemo`]): a word is read and written whole, so a reader always
    /// gets a state with its own escapes, whoever stored it last.
    #[inline(always)]
    fn to_bits(self) -> u64 {
        (u64::from(self.state) << 32) | u64::from(self.escapes)
    }

    /// The inverse of [`LastSkip::to_bits`].
    #[inline(always)]
    fn from_bits(bits: u64) -> LastSkip {
        LastSkip { state: (bits >> 32) as u32, escapes: bits as u32 }
    }
}

/// Where walks through one automaton keep their [`LastSkip`] from path to
/// path (a compiled group's part keeps one for its run, see
/// [`crate::runtime`]). Read and written only by [`Automaton::skip`], so a
/// path that skips nowhere costs nothing here; both fields share one atomic
/// word so that groups and matchers stay `Sync`: relaxed loads and stores
/// are plain moves on x86-64, and whatever another thread stored is a state
/// with its own escapes, a valid hint.
#[derive(Debug)]
pub(crate) struct SkipMemo(AtomicU64);

impl SkipMemo {
    /// Nothing remembered yet.
    #[inline(always)]
    pub fn new() -> SkipMemo {
        SkipMemo(AtomicU64::new(LastSkip::NONE.to_bits()))
    }

    /// What was remembered last.
    #[inline(always)]
    pub fn get(&self) -> LastSkip {
        LastSkip::from_bits(self.0.load(Ordering::Relaxed))
    }

    /// Remembers `last`.
    #[inline(always)]
    pub fn set(&self, last: LastSkip) {
        self.0.store(last.to_bits(), Ordering::Relaxed);
    }
}

impl Clone for SkipMemo {
    fn clone(&self) -> Self {
        SkipMemo(AtomicU64::new(self.0.load(Ordering::Relaxed)))
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
    prefetch_at(item as *const T);
}

/// [`prefetch`] of `table[index]`, with no bounds check: an index past the
/// table (a damaged or inconsistent one) only prefetches some other line,
/// and the read that follows checks its own bounds. A walk's step prefetches
/// twice, so the checks would be a noticeable part of each step.
#[inline(always)]
pub(crate) fn prefetch_item<T>(table: &[T], index: usize) {
    // `wrapping_add`: the address is computed, never dereferenced.
    prefetch_at(table.as_ptr().wrapping_add(index));
}

/// Prefetches the cache line at `ptr`, which need not point into anything.
#[inline(always)]
fn prefetch_at<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 has no architectural effect (it loads nothing into
    // registers and never faults, whatever the address), so any pointer will do.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// The answer for a whole path: walk from the start, stop at the end or at
/// the first sink.
///
/// The loop is the filter's hottest (a long run's paths all go through it):
/// a step reads the byte at a position the loop has checked, and asks for a
/// skip only in an accelerated state, so that an ordinary step is the two
/// table lookups, the sink test and the end test.
#[inline]
pub(crate) fn scan<A: Automaton>(automaton: &A, path: &[u8]) -> u32 {
    scan_remembering(automaton, path, &SkipMemo::new())
}

/// [`scan`], remembering in `last` the state it skipped in last (see
/// [`Automaton::skip`]): for a run of paths through one automaton.
#[inline]
pub(crate) fn scan_remembering<A: Automaton>(automaton: &A, path: &[u8], last: &SkipMemo) -> u32 {
    // SAFETY: the start is a state.
    unsafe { scan_from(automaton, path, 0, automaton.start(), last) }
}

/// Where a walk through `automaton` stands after a leading `/`: the start
/// state's step on it, or the start state itself when that is a sink (a
/// walk reads nothing there). A prepared path starts with `/`, so a part
/// that walks a run of paths takes this step once ([`scan_after_slash`])
/// instead of once a path: one step of the 6.9 a crawl2019 URL walks.
pub(crate) fn after_slash<A: Automaton>(automaton: &A) -> u32 {
    let start = automaton.start();
    if automaton.is_sink(start) {
        start
    } else {
        // SAFETY: the start is a state.
        unsafe { automaton.step(start, b'/') }
    }
}

/// [`scan_remembering`] of `path`, its leading `/` (when it has one) taken
/// as read in `slash`, which must be [`after_slash`] of this automaton.
/// The same answer: from the start state, a walk reads the `/` with a step
/// (or, in an accelerated start state that loops on `/`, skips over it into
/// the same state), unless the start is a sink, which `slash` then is.
///
/// # Safety
///
/// `slash` is a state of `automaton`, as [`after_slash`] of it is.
#[inline(always)]
pub(crate) unsafe fn scan_after_slash<A: Automaton>(automaton: &A, path: &[u8], slash: u32, last: &SkipMemo) -> u32 {
    // SAFETY: `slash` is a state (the caller's word), and so is the start.
    unsafe {
        match path.first() {
            Some(&b'/') => scan_from(automaton, path, 1, slash, last),
            _ => scan_from(automaton, path, 0, automaton.start(), last),
        }
    }
}

/// The walk of [`scan_remembering`] from `state`, with `path[..at]` read.
///
/// # Safety
///
/// `state` is a state of `automaton`.
#[inline(always)]
unsafe fn scan_from<A: Automaton>(automaton: &A, path: &[u8], mut at: usize, mut state: u32, last: &SkipMemo) -> u32 {
    // SAFETY: `state` is a state, at first by the caller's word, then
    // because a step from a state reaches a state.
    unsafe {
        while at < path.len() && !automaton.is_sink(state) {
            if automaton.accelerated(state) {
                at += automaton.skip(state, path, at, last);
                let Some(&byte) = path.get(at) else { break };
                state = automaton.step(state, byte);
            } else {
                state = automaton.step(state, path[at]);
            }
            at += 1;
        }
        automaton.answer(state)
    }
}

/// The walks of a batch for [`interleave`], all through automata of one
/// layout: each automaton stored once, and per walk only its automaton's
/// number and the caller's number for the walk (its job), whose path
/// [`interleave`] asks the caller for. A walk is 8 bytes here, where a copy
/// of its automaton's view is 80: building the batch and starting a walk
/// copy no view.
#[derive(Debug)]
pub(crate) struct Walks<A> {
    /// The automata, by number.
    automata: Vec<A>,
    /// Per walk: its automaton's number, its job.
    walks: Vec<(u32, u32)>,
}

impl<A: Automaton> Walks<A> {
    /// No walks yet, with room for `automata` automata and `walks` walks.
    pub fn with_capacity(automata: usize, walks: usize) -> Walks<A> {
        Walks { automata: Vec::with_capacity(automata), walks: Vec::with_capacity(walks) }
    }

    /// Adds a walk through `automaton` for each job of `jobs`.
    #[inline]
    pub fn add(&mut self, automaton: A, jobs: std::ops::Range<usize>) {
        let table = self.automata.len() as u32;
        self.automata.push(automaton);
        self.walks.extend(jobs.map(|job| (table, job as u32)));
    }
}

/// How many walks [`interleave`] keeps going at once: enough to cover the
/// misses a core can have outstanding, few enough that the loop over them
/// stays short.
pub(crate) const WINDOW: usize = 32;

/// [`Window::at`] of a walk that has read its whole path (its last byte
/// read in the round before, or an accelerated state skipped to its end):
/// no transition to follow.
const DONE: usize = usize::MAX;

/// The walks [`interleave`] has in flight, one array per field (a struct of
/// arrays): each pass over the window reads only the fields it needs, a
/// finished walk's slot is refilled in place, and no walk is moved but when
/// the window shrinks at the end.
struct Window<'a, 'p, A> {
    /// Each slot's automaton.
    automaton: [&'a A; WINDOW],
    /// Each slot's job.
    job: [u32; WINDOW],
    /// Each slot's state.
    state: [u32; WINDOW],
    /// Each slot's path, and how much of it has been read.
    path: [&'p [u8]; WINDOW],
    pos: [usize; WINDOW],
    /// Each slot's located transition ([`Located`]), being fetched, or [`DONE`].
    at: [usize; WINDOW],
    default: [u32; WINDOW],
}

impl<'a, 'p, A: Automaton> Window<'a, 'p, A> {
    /// Starts in slot `i` the next of `waiting` that has a step to take, and
    /// starts fetching its start state's row; walks with none (an empty path,
    /// or a sink to start with) are finished on the way. False when no walk
    /// is left.
    #[inline(always)]
    fn refill(
        &mut self,
        i: usize,
        automata: &'a [A],
        waiting: &mut std::slice::Iter<'_, (u32, u32)>,
        path_of: &impl Fn(u32) -> &'p [u8],
        finish: &mut impl FnMut(u32, u32),
    ) -> bool {
        for &(table, job) in waiting {
            let automaton = &automata[table as usize];
            let (state, path) = (automaton.start(), path_of(job));
            if path.is_empty() || automaton.is_sink(state) {
                // SAFETY: the start is a state.
                finish(job, unsafe { automaton.answer(state) });
                continue;
            }
            automaton.prefetch_row(state);
            (self.automaton[i], self.job[i], self.state[i], self.path[i], self.pos[i]) =
                (automaton, job, state, path, 0);
            return true;
        }
        false
    }

    /// Moves the walk of slot `from` to slot `to` (the window shrinking).
    #[inline(always)]
    fn shift(&mut self, from: usize, to: usize) {
        self.automaton[to] = self.automaton[from];
        self.job[to] = self.job[from];
        self.state[to] = self.state[from];
        self.path[to] = self.path[from];
        self.pos[to] = self.pos[from];
        self.at[to] = self.at[from];
        self.default[to] = self.default[from];
    }
}

/// Walks every walk of `walks` to the end of its path (`path_of(job)`) or a
/// sink, [`WINDOW`] at a time, and calls `finish(job, answer)` once per walk,
/// in no particular order.
///
/// Every lookup's memory is prefetched one pass over the window before it is
/// read, so that the misses of the whole window are in flight at once. A
/// round is two passes: the first locates each walk's next transition (the
/// state's row, fetched in the round before) and starts fetching it; the
/// second follows each one and starts fetching the new state's row (a dense
/// automaton's rows are not read to locate, so for it that fetch is none). A
/// walk ends in the second pass, and the next waiting walk takes its slot at
/// once, so that the number of walks in flight stays up until the last ones
/// (paths differ in length, and lockstep over a fixed set would soon be down
/// to its longest walk). A walk that reads its path's last byte ends a round
/// later, when the locate pass finds no byte left.
pub(crate) fn interleave<'p, A: Automaton>(
    walks: &Walks<A>,
    path_of: impl Fn(u32) -> &'p [u8],
    mut finish: impl FnMut(u32, u32),
) {
    let automata = &walks.automata[..];
    let Some(first) = automata.first() else { return };
    let mut waiting = walks.walks.iter();
    let mut w = Window {
        automaton: [first; WINDOW],
        job: [0; WINDOW],
        state: [0; WINDOW],
        path: [&[]; WINDOW],
        pos: [0; WINDOW],
        at: [0; WINDOW],
        default: [0; WINDOW],
    };
    let mut live = 0;
    while live < WINDOW && w.refill(live, automata, &mut waiting, &path_of, &mut finish) {
        live += 1;
    }
    while live > 0 {
        // (`live` is at most WINDOW: said here, the passes need not check
        // their slot numbers against the arrays.)
        let live_slots = live.min(WINDOW);
        // Locate: no walk in the window is in a sink; one at its path's end
        // is marked DONE here, where the path's bound is checked anyway (the
        // follow pass does not test it: most walks end in a sink, and a
        // test there was 3 instructions a step). A skip is asked for only in an accelerated state, as in [`scan`]
        // (the test reads the row `locate` reads next).
        // A slot's state is a state of its automaton: the start when the
        // slot was filled, then what each follow reached; a slot's `at`
        // what its locate found for that state.
        for i in 0..live_slots {
            let automaton = w.automaton[i];
            let (state, path) = (w.state[i], w.path[i]);
            let mut pos = w.pos[i];
            // SAFETY: `state` is a state of `automaton` (above).
            if unsafe { automaton.accelerated(state) } {
                pos += automaton.skip(state, path, pos, &SkipMemo::new());
            }
            match path.get(pos) {
                Some(&byte) => {
                    // SAFETY: as above.
                    let at = unsafe { automaton.locate(state, byte) };
                    automaton.prefetch_transition(at);
                    (w.at[i], w.default[i], w.pos[i]) = (at.index, at.default, pos + 1);
                }
                None => w.at[i] = DONE,
            }
        }
        // Follow, and finish or refill.
        let mut i = 0;
        while i < live.min(WINDOW) {
            let automaton = w.automaton[i];
            if w.at[i] != DONE {
                // SAFETY: the slot's `at` is its locate's for its state (above).
                let state = unsafe { automaton.follow(w.state[i], Located { index: w.at[i], default: w.default[i] }) };
                w.state[i] = state;
                if !automaton.is_sink(state) {
                    automaton.prefetch_row(state);
                    i += 1;
                    continue;
                }
            }
            // SAFETY: the slot's state is a state of its automaton.
            finish(w.job[i], unsafe { automaton.answer(w.state[i]) });
            if w.refill(i, automata, &mut waiting, &path_of, &mut finish) {
                i += 1;
            } else {
                live -= 1;
                w.shift(live, i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Counts `a` bytes up to its limit, a sink; the answer is the count
    /// (plus 10 times the limit, so that a walk answered through another
    /// walk's automaton shows).
    #[derive(Clone, Copy)]
    struct CountA(u32);

    impl Automaton for CountA {
        fn start(&self) -> u32 {
            0
        }
        fn is_sink(&self, state: u32) -> bool {
            state == self.0
        }
        unsafe fn locate(&self, _: u32, byte: u8) -> Located {
            Located { index: usize::from(byte == b'a'), default: 0 }
        }
        unsafe fn follow(&self, state: u32, at: Located) -> u32 {
            state + at.index as u32
        }
        unsafe fn answer(&self, state: u32) -> u32 {
            state + 10 * self.0
        }
        fn prefetch_row(&self, _: u32) {}
        fn prefetch_transition(&self, _: Located) {}
        fn skip(&self, state: u32, path: &[u8], at: usize, _: &SkipMemo) -> usize {
            // The state before the sink loops on everything but `a`.
            if state + 1 == self.0 {
                let rest = &path[at..];
                rest.iter().position(|&b| b == b'a').unwrap_or(rest.len())
            } else {
                0
            }
        }
        unsafe fn accelerated(&self, state: u32) -> bool {
            state + 1 == self.0
        }
    }

    #[test]
    fn scan_stops_at_a_sink() {
        assert_eq!(scan(&CountA(3), b""), 30);
        assert_eq!(scan(&CountA(3), b"xax"), 31);
        assert_eq!(scan(&CountA(3), b"aaaaaa"), 33);
        assert_eq!(scan(&CountA(0), b"aaaaaa"), 0);
    }

    proptest! {
        /// Walks of several automata (one a sink from the start), each
        /// automaton shared by a run of walks, more walks than a window.
        #[test]
        fn interleaved_walks_answer_as_single_scans(
            paths in prop::collection::vec(("[ab]{0,12}", 0..4u32), 0..3 * WINDOW),
            run in 1..4usize,
        ) {
            let mut walks = Walks::with_capacity(0, 0);
            for first in (0..paths.len()).step_by(run) {
                walks.add(CountA(paths[first].1), first..(first + run).min(paths.len()));
            }
            let automaton_of = |job: usize| CountA(paths[job - job % run].1);
            let mut got = vec![None; paths.len()];
            interleave(&walks, |job| paths[job as usize].0.as_bytes(), |job, answer| {
                assert!(got[job as usize].replace(answer).is_none(), "walk {job} finished twice");
            });
            let want: Vec<_> =
                paths.iter().enumerate().map(|(job, (p, _))| Some(scan(&automaton_of(job), p.as_bytes()))).collect();
            prop_assert_eq!(got, want);
        }
    }
}
