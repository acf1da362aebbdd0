//! What each rule contributes to its merged group's verdicts, computed from
//! the group's automata, and the cache that shares it between files.

use crate::walk::{walk_product, Parts, Reach};
use crate::{pattern, DfaRef, Label};
use robotsieve_compiler::automaton::{self, Budget, BuildOptions};
use robotsieve_robotstxt::group::{Group, Rule, Verb};
use std::collections::HashMap;
use std::sync::Mutex;

/// What a rule contributes to its merged group's verdicts, computed from
/// the automata of the group (see [`rule_effects`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Removing the rule changes the verdict of some path.
    Needed,
    /// The rule is the deciding rule of no path: on every path it matches, a
    /// longer rule, an allow of the same length or an earlier copy wins.
    NeverWins,
    /// The rule decides some paths, but they get the same verdict from the
    /// other rules (`disallow: /a/b` under `disallow: /a`).
    SameVerdict,
    /// An allow rule that decides only paths no other rule matches, which
    /// are allowed anyway.
    AllowedAnyway,
    /// Not computed: the rule went to the per-rule fallback matcher, or the
    /// analysis went over its limits.
    Unknown,
}

impl Effect {
    /// Whether the rule can be removed without changing any verdict.
    pub fn is_redundant(self) -> bool {
        matches!(self, Effect::NeverWins | Effect::SameVerdict | Effect::AllowedAnyway)
    }

    /// A short description for listings.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Needed => "needed",
            Effect::NeverWins => "never wins",
            Effect::SameVerdict => "same verdict without it",
            Effect::AllowedAnyway => "allowed anyway",
            Effect::Unknown => "not analysed",
        }
    }
}

/// What each rule of `group` contributes, computed from automata rather
/// than from patterns:
///
/// 1. The group is compiled in explain mode (one rank per rule). A rule is
///    the deciding rule of some path iff its rank is the answer of a state
///    reachable after a leading `/` (every real path starts with one); a
///    group split into several automata is walked as their product.
/// 2. For a line whose rules win somewhere, the line's own literal paths are
///    tried first (with [`Group::decide`] on the other rules): if the verdict
///    changes there, the rule is needed.
/// 3. Otherwise the group without the line is compiled (verdict mode) and
///    walked in product with the full one: the line is redundant iff every
///    state the line decides has the same verdict without it.
///
/// A line's rules (an `index.htm` allow and the directory rule derived from
/// it) are judged together. Rules in a per-rule fallback part (budget
/// overflow) and analyses past [`PRODUCT_STATE_LIMIT`] states,
/// [`WALK_STEP_LIMIT`] steps or [`REBUILD_RULE_LIMIT`] rebuilt rules give
/// [`Effect::Unknown`].
pub fn rule_effects(group: &Group) -> Vec<Effect> {
    let n = group.rules.len();
    let mut effects = vec![Effect::NeverWins; n];
    if n == 0 {
        return effects;
    }
    let explain = BuildOptions { explain: true, budget: LINT_BUDGET };
    let full = automaton::compile(group, &explain).matcher;
    let Some(full_parts) = Parts::of(&full) else {
        effects.fill(Effect::Unknown);
        return effects;
    };
    let mut steps = WALK_STEP_LIMIT;
    let Some(reach) = Reach::of(&full_parts, full.rules().len(), &mut steps) else {
        effects.fill(Effect::Unknown);
        return effects;
    };
    let mut rank_of = vec![0u32; n];
    for (rank, &rule) in full.rules().iter().enumerate() {
        if let Some(r) = rank_of.get_mut(rule as usize) {
            *r = rank as u32;
        }
    }
    let mut rebuilt = 0;
    for (start, end) in line_spans(group) {
        let ranks: Vec<u32> = rank_of[start..end].to_vec();
        let effect = if ranks.iter().any(|&r| r <= full_parts.fallback_max && full_parts.fallback_max > 0) {
            Effect::Unknown
        } else if !ranks.iter().any(|&r| reach.wins[r as usize]) {
            Effect::NeverWins
        } else if n > SAME_VERDICT_RULE_LIMIT {
            Effect::Unknown
        } else if verdict_changes_on(group, start, end, &reach.witnesses(&ranks)) {
            Effect::Needed
        } else {
            let (local, line) = local_group(group, start, end);
            if rebuilt + local.rules.len() > REBUILD_RULE_LIMIT {
                Effect::Unknown
            } else {
                rebuilt += local.rules.len();
                effect_without(&local, line, &mut steps)
            }
        };
        effects[start..end].fill(effect);
    }
    effects
}

/// Past this many rules in a group, [`rule_effects`] finds only the rules
/// that never win (one automaton); whether a winning rule changes a verdict
/// needs work quadratic in the rules and is not computed.
pub const SAME_VERDICT_RULE_LIMIT: usize = 2_000;

/// The most rules [`rule_effects`] compiles again (groups without one line)
/// for one group; past it, lines left undecided are [`Effect::Unknown`].
pub const REBUILD_RULE_LIMIT: usize = 20_000;

/// The budget of each automaton the linter builds: a tenth of the
/// compiler's default, so that linting a corpus stays fast; a group over it
/// is split as usual and its fallback rules are reported as not analysed.
pub const LINT_BUDGET: Budget = Budget { max_states: 25_000, max_work: 4_000_000 };

/// The most transitions the walks of [`rule_effects`] follow for one group
/// (each walk of a group split into several automata, and each comparison
/// with a group without one line, counts); past it, lines left undecided
/// are [`Effect::Unknown`].
pub const WALK_STEP_LIMIT: u64 = 4_000_000;

/// The most product states one walk of [`rule_effects`] visits.
pub const PRODUCT_STATE_LIMIT: usize = 1 << 16;

/// A group's rules without their lines: verb, escaped pattern, derived directory rule.
type GroupKey = Vec<(Verb, Vec<u8>, bool)>;

/// Rule effects already computed, shared between files and threads: a
/// corpus repeats the same groups (sites of one owner, one CMS's default
/// file), and effects depend only on the rules' verbs, patterns and order,
/// not on their line numbers.
#[derive(Default)]
pub struct EffectCache {
    map: Mutex<HashMap<GroupKey, Vec<Effect>>>,
}

impl EffectCache {
    /// The most groups the cache keeps; past it, effects are computed each time.
    pub const CAPACITY: usize = 100_000;

    /// [`rule_effects`] of `group`, from the cache when it has them.
    pub fn effects(&self, group: &Group) -> Vec<Effect> {
        let key: GroupKey = group.rules.iter().map(|r| (r.verb, r.pattern.clone(), r.index_directory)).collect();
        if let Some(found) = self.map.lock().ok().and_then(|map| map.get(&key).cloned()) {
            return found;
        }
        let effects = rule_effects(group);
        if let Ok(mut map) = self.map.lock() {
            if map.len() < Self::CAPACITY {
                map.insert(key, effects.clone());
            }
        }
        effects
    }
}

/// The rules of each line: `(start, end)` index ranges of `group.rules`.
pub(crate) fn line_spans(group: &Group) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < group.rules.len() {
        let mut end = i + 1;
        while end < group.rules.len()
            && group.rules[end].index_directory
            && group.rules[end].line == group.rules[i].line
        {
            end += 1;
        }
        spans.push((i, end));
        i = end;
    }
    spans
}

/// The literal paths of a rule: its pattern with each `*` standing for
/// nothing, then for one byte, behind a `/` if it has none.
pub(crate) fn own_paths(rule: &Rule) -> Vec<Vec<u8>> {
    let (body, _) = pattern::split_anchor(&rule.pattern);
    let mut paths = Vec::with_capacity(2);
    for fill in [&b""[..], b"x"] {
        let mut path = Vec::with_capacity(body.len() + 1);
        if body.first() != Some(&b'/') {
            path.push(b'/');
        }
        for (k, piece) in body.split(|&b| b == b'*').enumerate() {
            if k > 0 {
                path.extend_from_slice(fill);
            }
            path.extend_from_slice(piece);
        }
        if rule.matches(&path) && !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// The best rule other than `start..end` that matches `path`.
pub(crate) fn best_without(group: &Group, start: usize, end: usize, path: &[u8]) -> Option<usize> {
    let mut best: Option<(Label, usize)> = None;
    for (i, rule) in group.rules.iter().enumerate() {
        if (start..end).contains(&i) {
            continue;
        }
        let label = rule.label();
        if best.is_none_or(|(b, _)| label > b) && rule.matches(path) {
            best = Some((label, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Whether the line `start..end` decides one of its own literal paths, or
/// one of `witnesses`, with a verdict the other rules would not give.
fn verdict_changes_on(group: &Group, start: usize, end: usize, witnesses: &[Vec<u8>]) -> bool {
    let own = group.rules[start..end].iter().flat_map(own_paths);
    witnesses.iter().cloned().chain(own).any(|path| {
        let decision = group.decide(&path);
        let decided_here = decision.rule.is_some_and(|r| (start..end).contains(&r));
        let without = best_without(group, start, end, &path).is_none_or(|r| group.rules[r].verb == Verb::Allow);
        decided_here && decision.allowed() != without
    })
}

/// The rules that can match a path the line `start..end` matches: a rule
/// whose literal prefix (up to its first `*`) is not compatible with the
/// line's matches none of the line's paths. On the line's paths, the local
/// group decides exactly as the whole group does, so the line's effect can
/// be computed on it alone. Returns the local group and where the line's
/// rules are in it.
fn local_group(group: &Group, start: usize, end: usize) -> (Group, std::ops::Range<usize>) {
    let prefix = |rule: &Rule| -> Vec<u8> {
        let (body, _) = pattern::split_anchor(&rule.pattern);
        body[..body.iter().position(|&b| b == b'*').unwrap_or(body.len())].to_vec()
    };
    let prefixes: Vec<Vec<u8>> = group.rules[start..end].iter().map(prefix).collect();
    let compatible = |p: &[u8]| prefixes.iter().any(|q| p.starts_with(q) || q.starts_with(p));
    let mut rules = Vec::new();
    let mut line = 0..0;
    for (i, rule) in group.rules.iter().enumerate() {
        if i == start {
            line.start = rules.len();
        }
        if (start..end).contains(&i) || compatible(&prefix(rule)) {
            rules.push(rule.clone());
        }
        if i + 1 == end {
            line.end = rules.len();
        }
    }
    (Group { source: group.source, agent_lines: Vec::new(), rules, preferences: Vec::new() }, line)
}

/// Compiles the local group (see [`local_group`]) in explain mode and
/// without the line in verdict mode, and walks them in product: the line is
/// needed iff some state where it wins gets another verdict without it.
fn effect_without(local: &Group, line: std::ops::Range<usize>, steps: &mut u64) -> Effect {
    let allow = local.rules[line.start].verb == Verb::Allow;
    let explain = BuildOptions { explain: true, budget: LINT_BUDGET };
    let with = automaton::compile(local, &explain).matcher;
    let Some(with_parts) = Parts::of(&with) else { return Effect::Unknown };
    if with_parts.fallback_max > 0 {
        return Effect::Unknown;
    }
    let ranks: Vec<u32> =
        (0..with.rules().len() as u32).filter(|&rank| line.contains(&(with.rules()[rank as usize] as usize))).collect();
    let mut rest = local.clone();
    rest.rules.drain(line);
    let full = &with_parts;
    let rest = &rest;
    let verdict = BuildOptions { explain: false, budget: LINT_BUDGET };
    let without = automaton::compile(rest, &verdict).matcher;
    let Some(without_parts) = Parts::of(&without) else { return Effect::Unknown };
    if without_parts.fallback_max > 0 {
        return Effect::Unknown;
    }
    let split = full.dfas.len();
    let dfas: Vec<DfaRef<'_>> = full.dfas.iter().chain(&without_parts.dfas).copied().collect();
    let (mut changes, mut covered) = (false, false);
    let walked = walk_product(&dfas, steps, |states| {
        if ranks.contains(&full.answer(&states[..split], 0)) {
            let rank = without_parts.answer(&states[split..], 0) as usize;
            let label = without.labels().get(rank).copied().unwrap_or(0);
            covered |= label != 0;
            changes |= Label(label).allows() != allow;
        }
        !changes
    });
    match (walked || changes, changes, covered) {
        (false, _, _) => Effect::Unknown,
        (true, true, _) => Effect::Needed,
        (true, false, false) if allow => Effect::AllowedAnyway,
        (true, false, _) => Effect::SameVerdict,
    }
}
