//! A third reading of Google's matching, independent of ours: every rule's
//! pattern translated into an anchored byte regex and matched by
//! regex-automata's dense DFA, with Google's precedence applied on top.
//!
//! The per-rule oracle ([`Group::decide`], over `pattern::matches`) and the
//! compiled automaton (`automaton::compile`) are both ours and read patterns
//! the same way: a misreading shared by the two (of `*`, of a final `$`, of a
//! `$` that is not final, of a prefix match, of a byte above 0x7F) would pass
//! every differential test between them. This oracle reads a pattern with a
//! different machine, a regex engine that knows nothing of robots.txt:
//!
//! - `*` is `(?s-u:.)*`: any bytes, newlines and non-UTF-8 included;
//! - a final `$` is `\z`, the end of the path; any other `$` is literal;
//! - every other byte is itself (written `\xHH`, so no byte is special);
//! - the regex is anchored at the start of the path and, without `$`, matches
//!   any prefix of it (`Anchored::Yes`, a match ending anywhere).
//!
//! Patterns and paths are taken as the per-rule oracle takes them: the rule's
//! escaped pattern ([`robotsieve_robotstxt::Rule::pattern`]) and the path as
//! `PathMode::path_of` prepares it. The precedence is Google's, written here
//! again: the longest pattern (in bytes, after escaping) wins, allow wins a tie
//! of lengths, and among equal rules the first in the file decides.

use regex_automata::dfa::{dense, Automaton};
use regex_automata::nfa::thompson;
use regex_automata::{util::syntax, Anchored, Input};
use robotsieve_robotstxt::{Group, Verb};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The regex of one robots.txt pattern (see the module documentation).
pub fn pattern_regex(pattern: &[u8]) -> String {
    let (body, anchored) = match pattern.split_last() {
        Some((b'$', body)) => (body, true),
        _ => (pattern, false),
    };
    let mut re = String::with_capacity(body.len() * 4 + 8);
    for &b in body {
        if b == b'*' {
            re.push_str("(?s-u:.)*");
        } else {
            let _ = write!(re, "\\x{b:02X}");
        }
    }
    if anchored {
        re.push_str("\\z");
    }
    re
}

/// One rule's DFA, built once per distinct pattern.
fn rule_dfa(pattern: &[u8]) -> Result<dense::DFA<Vec<u32>>, String> {
    dense::Builder::new()
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .thompson(thompson::Config::new().utf8(false))
        .configure(dense::Config::new().start_kind(regex_automata::dfa::StartKind::Anchored))
        .build(&pattern_regex(pattern))
        .map_err(|e| format!("pattern {:?}: {e}", String::from_utf8_lossy(pattern)))
}

/// What the regex oracle decides for one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegexDecision {
    /// The deciding rule's index in `Group::rules`, if any rule matched.
    pub rule: Option<usize>,
    /// Whether the path is allowed (no rule matched, or an allow rule won).
    pub allowed: bool,
}

/// A group's rules as regex-automata DFAs.
pub struct RegexOracle<'g> {
    group: &'g Group,
    /// `dfas[i]`: the DFA of `group.rules[i]`'s pattern (shared by equal patterns).
    dfas: Vec<usize>,
    distinct: Vec<dense::DFA<Vec<u32>>>,
}

impl<'g> RegexOracle<'g> {
    /// Builds a DFA for every distinct pattern of `group`; an error names the
    /// pattern regex-automata refused (a test failure, never expected).
    pub fn new(group: &'g Group) -> Result<RegexOracle<'g>, String> {
        let mut index: HashMap<&[u8], usize> = HashMap::new();
        let mut distinct = Vec::new();
        let mut dfas = Vec::with_capacity(group.rules.len());
        for rule in &group.rules {
            let i = match index.get(rule.pattern.as_slice()) {
                Some(&i) => i,
                None => {
                    distinct.push(rule_dfa(&rule.pattern)?);
                    index.insert(&rule.pattern, distinct.len() - 1);
                    distinct.len() - 1
                }
            };
            dfas.push(i);
        }
        Ok(RegexOracle { group, dfas, distinct })
    }

    /// Whether rule `i`'s pattern matches `path`.
    pub fn rule_matches(&self, i: usize, path: &[u8]) -> bool {
        let input = Input::new(path).anchored(Anchored::Yes).earliest(true);
        self.distinct[self.dfas[i]].try_search_fwd(&input).expect("an anchored DFA search cannot fail").is_some()
    }

    /// The verdict for `path`: among the matching rules, the longest pattern,
    /// allow before disallow at equal length, the first in the file among equals.
    pub fn decide(&self, path: &[u8]) -> RegexDecision {
        let mut best: Option<(usize, bool, usize)> = None;
        for (i, rule) in self.group.rules.iter().enumerate() {
            let key = (rule.pattern.len(), rule.verb == Verb::Allow);
            if best.is_some_and(|(len, allow, _)| key <= (len, allow)) || !self.rule_matches(i, path) {
                continue;
            }
            best = Some((key.0, key.1, i));
        }
        match best {
            Some((_, allow, i)) => RegexDecision { rule: Some(i), allowed: allow },
            None => RegexDecision { rule: None, allowed: true },
        }
    }
}

/// The paths of `paths` on which the regex oracle, the per-rule oracle
/// ([`Group::decide`]) and `compiled` (the automaton, when given) do not all
/// agree, described: the verdict always, and the deciding rule between the
/// two oracles (and with the automaton when it was compiled with explain).
pub fn regex_disagreements(
    group: &Group,
    compiled: Option<(&robotsieve_compiler::automaton::Compiled, bool)>,
    paths: &[Vec<u8>],
) -> Result<Vec<String>, String> {
    let oracle = RegexOracle::new(group)?;
    let matcher = compiled.map(|(c, explain)| (c.matcher.matcher(), explain));
    let mut out = Vec::new();
    for path in paths {
        let regex = oracle.decide(path);
        let ours = group.decide(path);
        let show = String::from_utf8_lossy(path);
        if regex.allowed != ours.allowed() || regex.rule != ours.rule {
            out.push(format!(
                "path {show:?}: regex allowed={} by rule {:?}, Group::decide allowed={} by rule {:?}",
                regex.allowed,
                regex.rule.map(|i| group.rules[i].to_string()),
                ours.allowed(),
                ours.rule.map(|i| group.rules[i].to_string()),
            ));
        }
        if let Some((matcher, explain)) = &matcher {
            let got = matcher.decide(path);
            if got.allowed() != regex.allowed || (*explain && got.rule.map(|r| r as usize) != regex.rule) {
                out.push(format!(
                    "path {show:?}: regex allowed={} by rule {:?}, automaton allowed={} by rule {:?}",
                    regex.allowed,
                    regex.rule,
                    got.allowed(),
                    got.rule
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_become_anchored_byte_regexes() {
        assert_eq!(pattern_regex(b"/a*b$"), r"\x2F\x61(?s-u:.)*\x62\z");
        assert_eq!(pattern_regex(b"/a$b"), r"\x2F\x61\x24\x62");
        assert_eq!(pattern_regex(b"$"), r"\z");
        assert_eq!(pattern_regex(b"/\xFF"), r"\x2F\xFF");
    }
}
