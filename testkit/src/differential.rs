//! The compiled matcher against the per-rule oracle [`Group::decide`]: the
//! comparison that the automaton tests, the `robots` fuzz target and its
//! replay all make, and the paths they make it on.

use robotsieve_compiler::automaton::{compile, Budget, BuildOptions, Compiled};
use robotsieve_core::pattern;
use robotsieve_engine::Part;
use robotsieve_engine::{CombDfa, CombDfaRef, SlotTable};
use robotsieve_robotstxt::Group;

/// A budget so small that almost every group is split into automata and
/// the per-rule fallback: the differential tests compile with it as well as
/// with the default, so that the split and the fallback are checked too.
pub const TINY: Budget = Budget { max_states: 6, max_work: 120 };

/// A small deterministic generator (xorshift), so path sampling is repeatable.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits (the seed must not be 0).
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items`, which must not be empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const FILLS: &[&[u8]] = &[b"", b"x", b"/", b"a/b", b".html", b"?q=1", b"%2F", b"index.html", b"$", b"*"];

/// Paths built from a pattern: stars filled in, the `$` honoured or broken,
/// and near misses (a byte dropped, case flipped, an escape flipped), so
/// that the paths a differential test tries do match some rules.
pub fn paths_from_pattern(pattern: &[u8], rng: &mut Rng, out: &mut Vec<Vec<u8>>) {
    let (body, anchored) = pattern::split_anchor(pattern);
    let mut filled = Vec::new();
    for &b in body {
        if b == b'*' {
            filled.extend_from_slice(rng.pick(FILLS));
        } else {
            filled.push(b);
        }
    }
    out.push(filled.clone());
    let mut longer = filled.clone();
    longer.extend_from_slice(rng.pick(FILLS));
    if !anchored || rng.below(2) == 0 {
        longer.extend_from_slice(rng.pick(FILLS));
    }
    out.push(longer);
    let mut near = filled.clone();
    if !near.is_empty() {
        let at = rng.below(near.len());
        match rng.below(4) {
            0 => {
                near.remove(at);
            }
            1 => {
                near[at] = if near[at].is_ascii_lowercase() {
                    near[at].to_ascii_uppercase()
                } else {
                    near[at].to_ascii_lowercase()
                }
            }
            2 => near.insert(at, rng.pick(b"/a%*$")),
            _ => near.truncate(at),
        }
    }
    out.push(near);
}

/// Paths for a whole group: from `per_group` randomly chosen rules, plus a
/// few fixed ones.
pub fn paths_for_group(group: &Group, per_group: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut paths: Vec<Vec<u8>> =
        [b"/".as_slice(), b"", b"/index.html", b"/robots.txt", b"/a?b=c"].iter().map(|p| p.to_vec()).collect();
    if !group.rules.is_empty() {
        for _ in 0..per_group {
            let rule = &group.rules[rng.below(group.rules.len())];
            paths_from_pattern(&rule.pattern, rng, &mut paths);
        }
    }
    paths
}

/// Checks every path of `paths` through `compiled` against the oracle
/// (`group.decide`); returns the disagreements, described. In explain mode
/// the deciding rule must be the oracle's too. Also checks that every
/// automaton part, made into a comb table, 32-bit and 16-bit (as the
/// artifact writer may store it), scans as the dense table does.
pub fn disagreements(group: &Group, compiled: &Compiled, explain: bool, paths: &[Vec<u8>]) -> Vec<String> {
    let matcher = compiled.matcher.matcher();
    let mut out = Vec::new();
    for (i, part) in compiled.matcher.parts().iter().enumerate() {
        let Part::Dfa(dense) = part else { continue };
        let comb = CombDfa::from_dense(dense);
        // The 16-bit form too, when it fits (the artifact stores that one then).
        let narrow = comb.narrow();
        let (comb, narrow) = (checked(&comb), narrow.as_ref().map(checked));
        for path in paths {
            let want = dense.scan(path);
            if comb.scan(path) != want || narrow.is_some_and(|n| n.scan(path) != want) {
                out.push(format!("part {i}, path {:?}: comb table scans differently", String::from_utf8_lossy(path)));
            }
        }
    }
    for path in paths {
        let want = group.decide(path);
        let got = matcher.decide(path);
        let rule_ok = !explain || got.rule == want.rule.map(|r| r as u32);
        if got.label != want.label || got.allowed() != want.allowed() || !rule_ok {
            out.push(format!(
                "path {:?}: oracle {:?} (rule {:?}), compiled {:?} (rule {:?}, rank {}); {}",
                String::from_utf8_lossy(path),
                want.label,
                want.rule,
                got.label,
                got.rule,
                got.rank,
                compiled.stats
            ));
        }
    }
    out
}

/// A comb's tables checked as an artifact's are on a group's first use.
fn checked<S: SlotTable>(comb: &CombDfa<S>) -> CombDfaRef<'_, S::Id> {
    let (rows, slots, answers, accels) = (comb.rows(), comb.slots(), comb.answers(), comb.accels());
    CombDfa::new(comb.classes(), rows, slots, answers, accels, comb.start(), comb.sinks() as u32)
        .expect("from_dense and narrow make valid tables")
}

/// Compiles `group` with `options` and panics, listing up to ten, if any
/// path of `paths` disagrees with the oracle; returns the compiled group.
pub fn assert_agrees(group: &Group, options: &BuildOptions, paths: &[Vec<u8>]) -> Compiled {
    let compiled = compile(group, options);
    let bad = disagreements(group, &compiled, options.explain, paths);
    crate::assert_none_disagree(&bad, paths.len(), 10, format_args!("paths ({options:?})"));
    compiled
}
