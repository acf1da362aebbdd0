//! The findings for rules that change no verdict.

use crate::codes::{
    Finding, ALLOW_DISALLOW_CONFLICT, ALLOW_WITHOUT_EFFECT, DECISION_NOT_ANALYSED, DUPLICATE_RULE, NEVER_DECIDES,
};
use crate::effects::{best_without, line_spans, own_paths, Effect};
use robotsieve_robotstxt::group::{Group, Verb};
use std::collections::BTreeSet;

/// The findings for lines of `group` that change no verdict (or were not
/// analysed), one per line. Lines whose rule matches nothing for a reason
/// already reported (`unmatchable`) are left out.
pub(crate) fn redundant_rules(group: &Group, effects: &[Effect], unmatchable: &BTreeSet<u32>) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut unknown: Vec<u32> = Vec::new();
    for (index, end) in line_spans(group) {
        let rule = &group.rules[index];
        let line = rule.line;
        let effect = effects[index];
        if unmatchable.contains(&line) || effect == Effect::Needed {
            continue;
        }
        if effect == Effect::Unknown {
            unknown.push(line);
            continue;
        }
        let same = |j: &usize| !(index..end).contains(j) && group.rules[*j].pattern == rule.pattern;
        let duplicate = (0..index).filter(same).find(|&j| group.rules[j].verb == rule.verb);
        let conflict = (0..group.rules.len())
            .filter(same)
            .find(|&j| group.rules[j].verb == Verb::Allow && rule.verb == Verb::Disallow);
        let cite = |j: usize| format!("\"{}\" (line {})", group.rules[j], group.rules[j].line);
        if let (Effect::NeverWins, Some(j)) = (effect, duplicate) {
            out.push(Finding::new(
                DUPLICATE_RULE,
                line,
                format!("\"{rule}\" repeats line {}: this copy never decides", group.rules[j].line),
                "remove the duplicate",
            ));
        } else if let (Effect::NeverWins, Some(j)) = (effect, conflict) {
            out.push(Finding::new(
                ALLOW_DISALLOW_CONFLICT,
                line,
                format!("\"{rule}\" and {} have the same pattern: allow wins, so this disallow never decides", cite(j)),
                "remove one of them; if the path should be disallowed, remove the allow",
            ));
        } else if effect == Effect::AllowedAnyway {
            out.push(Finding::new(
                ALLOW_WITHOUT_EFFECT,
                line,
                format!("\"{rule}\" changes nothing: no other rule matches the paths it decides, and they are allowed anyway"),
                "remove it, or check that the disallow it was meant to override matches",
            ));
        } else {
            let winners: Vec<usize> = {
                let mut w: Vec<usize> = Vec::new();
                for path in group.rules[index..end].iter().flat_map(own_paths) {
                    if let Some(j) = best_without(group, index, end, &path) {
                        if !w.contains(&j) {
                            w.push(j);
                        }
                    }
                }
                w
            };
            // A later copy of this very rule covers it: that copy is reported as the duplicate.
            if let [j] = winners.as_slice() {
                if *j > index && group.rules[*j].pattern == rule.pattern && group.rules[*j].verb == rule.verb {
                    continue;
                }
            }
            let message = match (effect, winners.as_slice()) {
                (Effect::SameVerdict, [j]) if group.rules[*j].verb == rule.verb => format!(
                    "\"{rule}\" never decides a verdict: {} already covers every path it matches",
                    cite(*j)
                ),
                (Effect::SameVerdict, _) => format!(
                    "\"{rule}\" never decides a verdict: the other rules give every path it matches the same verdict{}",
                    winners.first().map(|&j| format!(" (e.g. {})", cite(j))).unwrap_or_default()
                ),
                _ => format!(
                    "\"{rule}\" never decides a verdict: a longer rule or an allow of the same length wins on every path it matches{}",
                    winners.first().map(|&j| format!(" (e.g. {})", cite(j))).unwrap_or_default()
                ),
            };
            out.push(Finding::new(
                NEVER_DECIDES,
                line,
                message,
                "remove it, or make it more specific than the rule that covers it",
            ));
        }
    }
    if let Some(&first) = unknown.first() {
        let listed = unknown.iter().take(10).map(u32::to_string).collect::<Vec<_>>().join(", ");
        let more = if unknown.len() > 10 { format!(" and {} more", unknown.len() - 10) } else { String::new() };
        out.push(Finding::new(
            DECISION_NOT_ANALYSED,
            first,
            format!(
                "whether {} rule line(s) of this group ({} rules) change any verdict was not computed \
                 (per-rule fallback or analysis limit): line(s) {listed}{more}",
                unknown.len(),
                group.rules.len()
            ),
            "nothing to do; smaller groups and fewer rules with several `*` are analysed fully",
        ));
    }
    out
}
