//! Walks over the automata of a compiled group: which ranks win on some
//! path, and the product of several automata.

use crate::effects::PRODUCT_STATE_LIMIT;
use crate::{DfaRef, Matcher, Part};
use std::collections::{BTreeMap, HashSet};

/// Which ranks of a compiled group win on some path, and (for a group that
/// is one automaton) a shortest path on which each wins.
pub(crate) struct Reach {
    pub(crate) wins: Vec<bool>,
    /// For each rank, a state where it wins, and per state how it was reached.
    first_state: Vec<Option<u32>>,
    parent: Vec<(u32, u8)>,
}

impl Reach {
    pub(crate) fn of(parts: &Parts<'_>, ranks: usize, steps: &mut u64) -> Option<Reach> {
        let mut reach = Reach { wins: vec![false; ranks], first_state: Vec::new(), parent: Vec::new() };
        if let [dfa] = parts.dfas.as_slice() {
            // Breadth first, remembering how each state was reached.
            let mut representatives = vec![None; 256];
            for byte in 0..=255u8 {
                representatives[usize::from(dfa.class_of(byte))].get_or_insert(byte);
            }
            let bytes: Vec<u8> = representatives.into_iter().flatten().collect();
            let states = dfa.states();
            reach.first_state = vec![None; ranks];
            reach.parent = vec![(u32::MAX, 0); states];
            let first = dfa.next_index(dfa.start_index(), b'/');
            let mut seen = vec![false; states];
            seen[first] = true;
            let mut queue = std::collections::VecDeque::from([first]);
            while let Some(state) = queue.pop_front() {
                let rank = dfa.answer_at(state) as usize;
                if let Some(w) = reach.wins.get_mut(rank) {
                    *w = true;
                    reach.first_state[rank].get_or_insert(state as u32);
                }
                for &byte in &bytes {
                    let next = dfa.next_index(state, byte);
                    if !seen[next] {
                        seen[next] = true;
                        reach.parent[next] = (state as u32, byte);
                        queue.push_back(next);
                    }
                }
            }
            return Some(reach);
        }
        let walked = walk_product(&parts.dfas, steps, |states| {
            if let Some(w) = reach.wins.get_mut(parts.answer(states, 0) as usize) {
                *w = true;
            }
            true
        });
        walked.then_some(reach)
    }

    /// Shortest paths on which these ranks win (none for a split group).
    pub(crate) fn witnesses(&self, ranks: &[u32]) -> Vec<Vec<u8>> {
        let mut paths = Vec::new();
        for &rank in ranks {
            let Some(Some(mut state)) = self.first_state.get(rank as usize).copied() else { continue };
            let mut bytes = Vec::new();
            while self.parent[state as usize].0 != u32::MAX {
                let (from, byte) = self.parent[state as usize];
                bytes.push(byte);
                state = from;
            }
            bytes.push(b'/');
            bytes.reverse();
            paths.push(bytes);
        }
        paths
    }
}

/// The automaton parts of a compiled group (the engine's views, which step
/// a state as a scan does), and the best rank of its per-rule fallback part
/// (0 when there is none).
pub(crate) struct Parts<'m> {
    pub(crate) dfas: Vec<DfaRef<'m>>,
    pub(crate) fallback_max: u32,
}

impl<'m> Parts<'m> {
    /// `None` when the group has only a fallback part (nothing to walk).
    pub(crate) fn of(matcher: &'m Matcher) -> Option<Parts<'m>> {
        let mut parts = Parts { dfas: Vec::new(), fallback_max: 0 };
        for part in matcher.parts() {
            match part {
                Part::Dfa(dfa) => parts.dfas.push(dfa.as_ref()),
                Part::Rules(list) => parts.fallback_max = parts.fallback_max.max(list.max_answer()),
                Part::Dfa16(never) | Part::Comb(never) | Part::Comb16(never) => match *never {},
            }
        }
        (!parts.dfas.is_empty() || parts.fallback_max == 0).then_some(parts)
    }

    /// The group's answer in a combination of part states (the maximum).
    pub(crate) fn answer(&self, states: &[usize], floor: u32) -> u32 {
        self.dfas.iter().zip(states).map(|(d, &s)| d.answer_at(s)).fold(floor, u32::max)
    }
}

/// Walks the combinations of states of `dfas` reachable after a leading `/`
/// (every real path starts with one), calling `visit` once for each; `visit`
/// returns false to stop. Each state's transitions are taken from `steps`.
/// Returns false when stopped, out of steps or past [`PRODUCT_STATE_LIMIT`]
/// combinations.
pub(crate) fn walk_product(dfas: &[DfaRef<'_>], steps: &mut u64, mut visit: impl FnMut(&[usize]) -> bool) -> bool {
    if dfas.is_empty() {
        return visit(&[]);
    }
    // Combinations are numbered in mixed radix; past 64 bits there is no walk.
    let mut radix = 1u64;
    for d in dfas {
        match radix.checked_mul(d.states() as u64) {
            Some(r) => radix = r,
            None => return false,
        }
    }
    let key = |states: &[usize]| states.iter().zip(dfas).fold(0u64, |k, (&s, d)| k * d.states() as u64 + s as u64);
    // One byte per distinct combination of classes stands for all of them.
    let mut representatives: BTreeMap<Vec<u8>, u8> = BTreeMap::new();
    for byte in 0..=255u8 {
        representatives.entry(dfas.iter().map(|d| d.class_of(byte)).collect()).or_insert(byte);
    }
    let bytes: Vec<u8> = representatives.into_values().collect();
    let first: Vec<usize> = dfas.iter().map(|d| d.next_index(d.start_index(), b'/')).collect();
    let mut seen: HashSet<u64, BuildFibonacci> = HashSet::default();
    seen.insert(key(&first));
    let mut stack = vec![first];
    let mut next = vec![0usize; dfas.len()];
    while let Some(states) = stack.pop() {
        if !visit(&states) {
            return false;
        }
        match steps.checked_sub(bytes.len() as u64) {
            Some(left) => *steps = left,
            None => return false,
        }
        for &byte in &bytes {
            for ((n, d), &s) in next.iter_mut().zip(dfas).zip(&states) {
                *n = d.next_index(s, byte);
            }
            if seen.insert(key(&next)) {
                if seen.len() > PRODUCT_STATE_LIMIT {
                    return false;
                }
                stack.push(next.clone());
            }
        }
    }
    true
}

/// A hasher for state-combination numbers: one multiplication (Fibonacci
/// hashing), far cheaper than SipHash, and the keys are not adversarial.
#[derive(Default, Clone, Copy)]
struct BuildFibonacci;

impl std::hash::BuildHasher for BuildFibonacci {
    type Hasher = FibonacciHasher;
    fn build_hasher(&self) -> FibonacciHasher {
        FibonacciHasher(0)
    }
}

struct FibonacciHasher(u64);

impl std::hash::Hasher for FibonacciHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
