//! robotsieve-lint: how Google's rules read a robots.txt, and where that differs from
//! what its author evidently meant.
//!
//! The linter is a second consumer of the one parse ([`RobotsTxt`]): it walks
//! the parser's line reports (never the raw bytes again, except for the part
//! past 500 KiB that Google ignores) and reports [`Finding`]s, each with a
//! stable [`Code`] from [`CODES`], a severity, a line, a message and a fix.
//!
//! Group structure is read by the one [`Segmenter`] that [`Group::select`]
//! reads it with (a `user-agent` line after a rule starts a group; nothing
//! else ends one), and the rules of
//! each crawler named in the file are checked on the merged group that crawler
//! really gets. Whether a rule can ever decide a verdict is computed from the
//! automaton built for that merged group (see [`robotsieve_compiler::automaton`]), not from
//! pattern heuristics.

#![warn(missing_docs)]

use robotsieve_compiler::automaton::{self, Budget, BuildOptions};
use robotsieve_engine::dfa::Dfa;
use robotsieve_engine::matcher::{MatcherBuf, PartBuf};
use robotsieve_engine::pattern;
use robotsieve_engine::preference::PreferenceField;
use robotsieve_robotstxt::group::{Agent, Group, Position, Rule, Segmenter, UserAgent, Verb};
use robotsieve_robotstxt::parse::{Field, Line, RobotsTxt, Spelling, MAX_BODY_BYTES, MAX_LINE_BYTES};
use robotsieve_robotstxt::preference::{self, Problem};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Mutex;

/// How bad a finding is. Ordered: `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; Google's reading matches what the author most likely meant.
    Note,
    /// Google's reading probably differs from what the author meant, or other
    /// crawlers read the line differently.
    Warning,
    /// The line (or file) cannot do what it evidently means to do.
    Error,
}

impl Severity {
    /// `"note"`, `"warning"` or `"error"`, as printed in diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One kind of finding: a stable name (never renamed once published, so that
/// tools and counts can rely on it), its severity and a one-line description.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    /// Stable kebab-case name, e.g. `group-joined`.
    pub name: &'static str,
    /// The severity of every finding of this kind.
    pub severity: Severity,
    /// What the finding means, in one line.
    pub doc: &'static str,
}

macro_rules! codes {
    ($($ident:ident = $name:literal, $severity:ident, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            pub const $ident: Code = Code { name: $name, severity: Severity::$severity, doc: $doc };
        )*
        /// Every code the linter reports, in the order of the documentation.
        pub const CODES: &[Code] = &[$($ident),*];
    };
}

codes! {
    EMPTY_FILE = "empty-file", Note,
        "The file is empty: every crawler may fetch everything.";
    HTML_PAGE = "html-page", Error,
        "The file is an HTML page (an error or login page served as robots.txt), not rules.";
    BINARY_CONTENT = "binary-content", Error,
        "The file holds binary data (NUL or control bytes, an image, UTF-16) rather than text.";
    NO_DIRECTIVES = "no-directives", Warning,
        "The file has text but not one robots.txt line (a JSON or plain-text error page?): everything is allowed.";
    BODY_TOO_LARGE = "body-too-large", Error,
        "Content past 500 KiB (512,000 bytes) is ignored by Google; the rules there are cut off.";
    LINE_TOO_LONG = "line-too-long", Warning,
        "A line longer than 16,663 bytes is cut there; the cut rule still counts.";
    BOM_INSIDE = "bom-inside", Warning,
        "A byte order mark after the start of the file is part of the line (a key after it is not recognised).";
    MANGLED_BOM = "mangled-bom", Error,
        "The file starts with a byte order mark that was decoded and re-encoded (\"ï»¿\"), which breaks the first line.";
    NOT_UTF8 = "not-utf8", Warning,
        "Bytes that are not UTF-8: Google escapes them byte by byte, which matches only URLs in the same encoding.";
    UNPARSED_LINE = "unparsed-line", Warning,
        "A line with text that Google reads no key and value from (no colon, and not exactly two words).";
    RULE_BEFORE_AGENT = "rule-before-agent", Error,
        "An allow or disallow line before any user-agent line belongs to no group and is ignored.";
    GROUP_JOINED = "group-joined", Warning,
        "A user-agent line joins the previous group because only sitemap, crawl-delay or other non-rule lines came between.";
    AGENT_UNRESTRICTED = "agent-unrestricted", Warning,
        "A crawler's group has no rules while a `*` group disallows something: that crawler ignores `*` and may fetch everything.";
    AGENT_CUT = "agent-cut", Warning,
        "A user-agent value that Google cuts to its leading letters, `-` and `_` (`MJ12bot` reads as `MJ`).";
    AGENT_NAMES_NOTHING = "agent-names-nothing", Warning,
        "A user-agent value with no leading letter, `-` or `_` (`360Spider`, `*bot`, empty): it names no crawler for Google.";
    STAR_TRAILING_TEXT = "star-trailing-text", Note,
        "`*` followed by white space and more text: Google reads the global group and ignores the rest.";
    MISSING_COLON = "missing-colon", Warning,
        "A key and value separated by white space: Google accepts it, many other parsers do not.";
    FIELD_TYPO = "field-typo", Warning,
        "A misspelt field name from Google's accepted list (`dissallow`, `useragent`): other parsers ignore the line.";
    FIELD_SUFFIX = "field-suffix", Note,
        "A field name with extra text (`Disallowed`, `User-agents`): Google matches by prefix, other parsers may not.";
    UNKNOWN_FIELD = "unknown-field", Warning,
        "A field no crawler is known to read (often a typo that Google does not accept): the line is ignored.";
    CRAWL_DELAY = "crawl-delay", Note,
        "`crawl-delay` is ignored by Google and honoured by Bing, Yandex and others.";
    NOINDEX_FIELD = "noindex-field", Warning,
        "`noindex` and similar fields in robots.txt have been ignored by Google since 2019.";
    OTHER_CRAWLER_FIELD = "other-crawler-field", Note,
        "A field other crawlers define (`host`, `clean-param`, `request-rate`, ...): Google ignores it.";
    PREFERENCE_MALFORMED = "preference-malformed", Warning,
        "A `Content-Signal` or `Content-Usage` value that is not `[path] key=value, ...` in its vocabulary (`train-ai=yes` for `y`, `AI-Train`, `,,`): readers may ignore it.";
    PREFERENCE_UNKNOWN_KEY = "preference-unknown-key", Note,
        "A `Content-Signal` or `Content-Usage` key its vocabulary does not define (or one given twice on a line): kept, but it means nothing to readers of the vocabulary.";
    PREFERENCE_OUTSIDE_GROUP = "preference-outside-group", Warning,
        "A `Content-Signal` or `Content-Usage` line before any user-agent line belongs to no group and applies to no crawler.";
    SITEMAP_NOT_ABSOLUTE = "sitemap-not-absolute", Warning,
        "A sitemap that is not an absolute URL: crawlers ignore it.";
    PATH_NOT_SLASH = "path-not-slash", Error,
        "A rule path that starts with neither `/` nor `*` (`Disallow: css`): it matches no URL.";
    SEVERAL_PATHS = "several-paths", Error,
        "Several paths on one rule line (`Disallow: /css/ /js/`): they form one pattern with a space, matching nothing intended.";
    SPACE_IN_PATTERN = "space-in-pattern", Warning,
        "A space inside a pattern is a literal space; URLs carry `%20` instead.";
    DOLLAR_INSIDE = "dollar-inside", Warning,
        "A `$` that does not end the pattern is a literal `$`, not an anchor.";
    ESCAPED_WILDCARD = "escaped-wildcard", Warning,
        "`%2A` or `%24` in a pattern is a literal escape, not the `*` or `$` wildcard.";
    REDUNDANT_STAR = "redundant-star", Note,
        "`**` or a trailing `*` matches what the pattern without it matches (it only adds to the length that ranks rules).";
    NON_ASCII = "non-ascii", Note,
        "Non-ASCII bytes in a pattern: Google escapes them (`ä` matches `%C3%A4`), which is usually what is meant.";
    NEVER_DECIDES = "never-decides", Warning,
        "A rule that changes no verdict: on every path it matches, another rule wins or gives the same verdict.";
    ALLOW_WITHOUT_EFFECT = "allow-without-effect", Note,
        "An allow rule that decides only paths no other rule matches: they are allowed anyway.";
    DUPLICATE_RULE = "duplicate-rule", Note,
        "The same rule (verb and pattern) appears earlier in the crawler's group: this copy never decides.";
    ALLOW_DISALLOW_CONFLICT = "allow-disallow-conflict", Warning,
        "The same pattern is both allowed and disallowed: allow wins, so the disallow never decides.";
    DECISION_NOT_ANALYSED = "decision-not-analysed", Note,
        "Whether the rule changes a verdict was not computed (per-rule fallback matcher, or an analysis limit).";
}

/// Looks a code up by its name.
pub fn code(name: &str) -> Option<&'static Code> {
    CODES.iter().find(|c| c.name == name)
}

/// One finding: what is wrong (or worth knowing) at one line, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The stable name of the finding's [`Code`].
    pub code: &'static str,
    /// The code's severity.
    pub severity: Severity,
    /// The 1-based line (as the parser numbers lines); 0 for the whole file.
    pub line: u32,
    /// What Google does with the line, in one sentence.
    pub message: String,
    /// How to write what was evidently meant.
    pub fix: String,
}

impl Finding {
    fn new(code: Code, line: u32, message: String, fix: impl Into<String>) -> Finding {
        Finding { code: code.name, severity: code.severity, line, message, fix: fix.into() }
    }
}

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

/// What applies to one crawler (the `--agent` view).
#[derive(Clone, Debug)]
pub struct AgentReport {
    /// The crawler.
    pub agent: Agent,
    /// Its merged group.
    pub group: Group,
    /// For each rule of `group.rules`, what it contributes.
    pub effects: Vec<Effect>,
}

/// Everything the linter found in one file.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The findings, by line (whole-file findings first), then by severity (worst first).
    pub findings: Vec<Finding>,
    /// The group that applies to the crawler asked about, if one was.
    pub agent: Option<AgentReport>,
}

impl Report {
    /// Whether any finding is an error (the CLI then exits with status 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// How many findings have this severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }
}

/// What to lint for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Check rules only as this crawler sees them (its merged group), and
    /// report that group. Without it, every crawler the file names is checked.
    pub agent: Option<Agent>,
}

/// Lints a parsed robots.txt.
pub fn lint(robots: &RobotsTxt<'_>, options: &Options) -> Report {
    lint_with(robots, options, &EffectCache::default())
}

/// Lints a parsed robots.txt, reusing (and adding to) rule effects that
/// `cache` holds for groups seen in earlier files.
pub fn lint_with(robots: &RobotsTxt<'_>, options: &Options, cache: &EffectCache) -> Report {
    let mut linter = Linter::new(robots, cache);
    linter.file_checks();
    linter.walk_lines();
    linter.cut_off_content();
    linter.unrestricted_agents();
    let agent = match &options.agent {
        Some(agent) => {
            let group = Group::select(robots, agent);
            let effects = cache.effects(&group);
            linter.findings.extend(redundant_rules(&group, &effects, &linter.unmatchable));
            Some(AgentReport { agent: agent.clone(), group, effects })
        }
        None => {
            linter.every_crawler_decisions();
            None
        }
    };
    let mut findings = linter.findings;
    findings.sort_by(|a, b| a.line.cmp(&b.line).then(b.severity.cmp(&a.severity)));
    Report { findings, agent }
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
    let Some(reach) = Reach::of(&full_parts, full.rules.len(), &mut steps) else {
        effects.fill(Effect::Unknown);
        return effects;
    };
    let mut rank_of = vec![0u32; n];
    for (rank, &rule) in full.rules.iter().enumerate() {
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

/// Which ranks of a compiled group win on some path, and (for a group that
/// is one automaton) a shortest path on which each wins.
struct Reach {
    wins: Vec<bool>,
    /// For each rank, a state where it wins, and per state how it was reached.
    first_state: Vec<Option<u32>>,
    parent: Vec<(u32, u8)>,
}

impl Reach {
    fn of(parts: &Parts<'_>, ranks: usize, steps: &mut u64) -> Option<Reach> {
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
    fn witnesses(&self, ranks: &[u32]) -> Vec<Vec<u8>> {
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
fn line_spans(group: &Group) -> Vec<(usize, usize)> {
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
fn own_paths(rule: &Rule) -> Vec<Vec<u8>> {
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
fn best_without(group: &Group, start: usize, end: usize, path: &[u8]) -> Option<usize> {
    let mut best: Option<(robotsieve_engine::label::Label, usize)> = None;
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
        (0..with.rules.len() as u32).filter(|&rank| line.contains(&(with.rules[rank as usize] as usize))).collect();
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
    let dfas: Vec<Dfa<'_>> = full.dfas.iter().chain(&without_parts.dfas).copied().collect();
    let (mut changes, mut covered) = (false, false);
    let walked = walk_product(&dfas, steps, |states| {
        if ranks.contains(&full.answer(&states[..split], 0)) {
            let rank = without_parts.answer(&states[split..], 0) as usize;
            let label = without.labels.get(rank).copied().unwrap_or(0);
            covered |= label != 0;
            changes |= robotsieve_engine::label::Label(label).allows() != allow;
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

/// The automaton parts of a compiled group (the engine's views, which step
/// a state as a scan does), and the best rank of its per-rule fallback part
/// (0 when there is none).
struct Parts<'m> {
    dfas: Vec<Dfa<'m>>,
    fallback_max: u32,
}

impl<'m> Parts<'m> {
    /// `None` when the group has only a fallback part (nothing to walk), or
    /// an automaton the builder made is not valid (never expected: the
    /// group is then left unanalysed rather than walked out of bounds).
    fn of(matcher: &'m MatcherBuf) -> Option<Parts<'m>> {
        let mut parts = Parts { dfas: Vec::new(), fallback_max: 0 };
        for part in &matcher.parts {
            match part {
                PartBuf::Dfa(dfa) => parts.dfas.push(dfa.as_dfa().ok()?),
                PartBuf::Rules(list) => {
                    parts.fallback_max = parts.fallback_max.max(list.ranks.iter().copied().max().unwrap_or(0))
                }
            }
        }
        (!parts.dfas.is_empty() || parts.fallback_max == 0).then_some(parts)
    }

    /// The group's answer in a combination of part states (the maximum).
    fn answer(&self, states: &[usize], floor: u32) -> u32 {
        self.dfas.iter().zip(states).map(|(d, &s)| d.answer_at(s)).fold(floor, u32::max)
    }
}

/// Walks the combinations of states of `dfas` reachable after a leading `/`
/// (every real path starts with one), calling `visit` once for each; `visit`
/// returns false to stop. Each state's transitions are taken from `steps`.
/// Returns false when stopped, out of steps or past [`PRODUCT_STATE_LIMIT`]
/// combinations.
fn walk_product(dfas: &[Dfa<'_>], steps: &mut u64, mut visit: impl FnMut(&[usize]) -> bool) -> bool {
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

/// A group of the file as written: its user-agent lines and rule lines.
#[derive(Default)]
struct FileGroup {
    agents: Vec<(u32, Vec<u8>)>,
    global: bool,
    rule_lines: Vec<u32>,
    /// Disallow lines with a path (an empty `Disallow:` allows everything).
    disallows: usize,
}

struct Linter<'r, 'a> {
    robots: &'r RobotsTxt<'a>,
    cache: &'r EffectCache,
    findings: Vec<Finding>,
    /// The file is not a robots.txt at all: per-line noise is suppressed.
    not_text: bool,
    groups: Vec<FileGroup>,
    /// Lines whose rule matches nothing for a reason already reported.
    unmatchable: BTreeSet<u32>,
}

impl<'r, 'a> Linter<'r, 'a> {
    fn new(robots: &'r RobotsTxt<'a>, cache: &'r EffectCache) -> Self {
        Linter {
            robots,
            cache,
            findings: Vec::new(),
            not_text: false,
            groups: Vec::new(),
            unmatchable: BTreeSet::new(),
        }
    }

    fn push(&mut self, code: Code, line: u32, message: String, fix: impl Into<String>) {
        self.findings.push(Finding::new(code, line, message, fix));
    }

    /// Whole-file checks: empty, HTML, binary, no directives, not UTF-8.
    fn file_checks(&mut self) {
        let lines = &self.robots.lines;
        let empty = self.robots.ignored_tail.is_empty() && lines.iter().all(|l| is_blank(l.text));
        if empty {
            let what = if lines.len() <= 1 && lines[0].text.is_empty() { "empty" } else { "only white space" };
            self.push(
                EMPTY_FILE,
                0,
                format!("the file is {what}: every crawler may fetch every path"),
                "if that is meant, `User-agent: *` with `Disallow:` says it explicitly",
            );
            return;
        }
        let sample = Sample::of(lines);
        if sample.is_html() {
            self.not_text = true;
            self.push(
                HTML_PAGE,
                0,
                "the file is an HTML page, not robots.txt rules: Google finds no rules in it and allows everything"
                    .into(),
                "serve a plain-text robots.txt at /robots.txt (or a 404 if there are no rules)",
            );
        } else if let Some(why) = sample.binary() {
            self.not_text = true;
            self.push(
                BINARY_CONTENT,
                0,
                format!("the file is not text ({why}): Google finds no rules in it and allows everything"),
                "serve a plain-text, UTF-8 robots.txt at /robots.txt",
            );
        }
        let known = |key: &[u8]| {
            let lower = String::from_utf8_lossy(key).to_ascii_lowercase();
            lower.starts_with("crawl-delay") || OTHER_CRAWLER_FIELDS.contains(&lower.as_str())
        };
        if !self.not_text && !self.robots.directives().any(|(_, d)| d.field != Field::Unknown) {
            // Keep per-line findings when the file is made of real (if ignored) fields.
            self.not_text = !self.robots.directives().any(|(_, d)| known(d.key));
            let first = lines.iter().find(|l| !is_blank(l.text)).map_or(0, |l| l.number);
            self.push(
                NO_DIRECTIVES,
                first,
                "no line of the file is a user-agent, allow, disallow or sitemap line: Google allows everything (an error page served as robots.txt?)"
                    .into(),
                "serve the real robots.txt, or a 404 status if there are no rules",
            );
        }
        if self.not_text {
            return;
        }
        let bad: Vec<u32> =
            lines.iter().filter(|l| std::str::from_utf8(l.text).is_err() && !l.truncated).map(|l| l.number).collect();
        if let Some(&first) = bad.first() {
            self.push(
                NOT_UTF8,
                first,
                format!(
                    "{} line(s) hold bytes that are not UTF-8 (first here): Google escapes each byte as %XX, \
                     so rules match only URLs escaped from the same legacy encoding",
                    bad.len()
                ),
                "save the file as UTF-8, or write the path percent-escaped as the site's URLs are",
            );
        }
    }

    /// The line-by-line walk: structure, fields, user agents and patterns.
    fn walk_lines(&mut self) {
        let robots = self.robots;
        let mut groups = Segmenter::default();
        // Non-rule directive lines since the last user-agent line of the current group.
        let mut since_agent: Vec<(u32, String)> = Vec::new();
        for line in &robots.lines {
            self.line_bytes(line);
            let Some(d) = line.directive else {
                if !self.not_text {
                    self.unparsed(line);
                }
                continue;
            };
            if !self.not_text || d.field != Field::Unknown {
                self.spelling(line.number, d.key, d.field, d.spelling, d.missing_colon);
            }
            let position = groups.position(d.field);
            match d.field {
                Field::UserAgent => {
                    if position == Position::StartsGroup {
                        self.groups.push(FileGroup::default());
                    } else if !since_agent.is_empty() {
                        let group = self.groups.last().expect("a group is open");
                        let first = group.agents.first().map_or(line.number, |a| a.0);
                        let between = since_agent
                            .iter()
                            .map(|(n, what)| format!("line {n} ({what})"))
                            .collect::<Vec<_>>()
                            .join(", ");
                        let verb = if since_agent.len() == 1 { "does" } else { "do" };
                        self.push(
                            GROUP_JOINED,
                            line.number,
                            format!(
                                "this user-agent line joins the group of line {first}, because no allow or disallow \
                                 line came between them; {between} {verb} not end a group"
                            ),
                            format!(
                                "if the crawlers of line {first} should get their own rules, give them at least one \
                                 rule (`Disallow:` allows everything) before this line"
                            ),
                        );
                    }
                    since_agent.clear();
                    let read = UserAgent::read(d.value);
                    let group = self.groups.last_mut().expect("a group is open");
                    match read {
                        UserAgent::Global => group.global = true,
                        UserAgent::Token(token) => group.agents.push((line.number, token.to_ascii_lowercase())),
                    }
                    self.user_agent(line.number, d.value, read);
                }
                Field::Allow | Field::Disallow => {
                    since_agent.clear();
                    if position == Position::Outside {
                        self.push(
                            RULE_BEFORE_AGENT,
                            line.number,
                            format!(
                                "\"{}\" comes before any user-agent line: it belongs to no group and is ignored",
                                show(line_text(line))
                            ),
                            "put a `User-agent:` line (e.g. `User-agent: *`) above the rules",
                        );
                        self.unmatchable.insert(line.number);
                    } else if let Some(group) = self.groups.last_mut() {
                        group.rule_lines.push(line.number);
                        group.disallows += usize::from(d.field == Field::Disallow && !d.value.is_empty());
                    }
                    self.pattern(line.number, d.field, d.value);
                }
                Field::Sitemap => {
                    since_agent.push((line.number, "sitemap".into()));
                    if !is_absolute_url(d.value) {
                        self.push(
                            SITEMAP_NOT_ABSOLUTE,
                            line.number,
                            format!("sitemap \"{}\" is not an absolute URL: crawlers ignore it", show(d.value)),
                            "write the full URL, e.g. `Sitemap: https://example.com/sitemap.xml`",
                        );
                    }
                }
                Field::ContentSignal | Field::ContentUsage => {
                    since_agent.push((line.number, String::from_utf8_lossy(d.key).to_ascii_lowercase()));
                    if position == Position::Outside {
                        self.push(
                            PREFERENCE_OUTSIDE_GROUP,
                            line.number,
                            format!(
                                "\"{}\" comes before any user-agent line: it belongs to no group and applies to no crawler",
                                show(line_text(line))
                            ),
                            "put it after the `User-agent:` line of the group it is for (`User-agent: *` for every crawler)",
                        );
                    }
                    self.preference(line.number, d.field, d.value);
                }
                Field::Unknown => {
                    since_agent.push((line.number, String::from_utf8_lossy(d.key).to_ascii_lowercase()));
                    if !self.not_text {
                        self.unknown_field(line.number, d.key);
                    }
                }
            }
        }
    }

    /// Checks on a line's bytes: truncation, byte order marks.
    fn line_bytes(&mut self, line: &Line<'_>) {
        if line.truncated {
            let what = match line.directive {
                Some(d) if d.field.is_rule() => "the rule is cut there and still counts, with the shorter pattern",
                _ => "the rest is ignored",
            };
            self.push(
                LINE_TOO_LONG,
                line.number,
                format!("the line is longer than {MAX_LINE_BYTES} bytes: Google keeps only the first {MAX_LINE_BYTES}; {what}"),
                "split the rule, or shorten it with `*`",
            );
        }
        const MANGLED: &[u8] = "\u{ef}\u{bb}\u{bf}".as_bytes();
        if line.number == 1 && line.text.starts_with(MANGLED) {
            let effect = match line.directive {
                Some(d) if d.field == Field::Unknown => {
                    " so the first line's key is not recognised and the line is ignored".to_string()
                }
                _ => String::new(),
            };
            self.push(
                MANGLED_BOM,
                1,
                format!("the file starts with \"ï»¿\", a byte order mark decoded as Latin-1 and re-encoded{effect}"),
                "save the file as UTF-8 without a byte order mark",
            );
        } else if let Some(at) = find(line.text, &[0xEF, 0xBB, 0xBF]) {
            let effect = if at == 0 || is_blank(&line.text[..at]) {
                "; it is part of the key, so the key is not recognised and the line is ignored"
            } else {
                ""
            };
            self.push(
                BOM_INSIDE,
                line.number,
                format!("a byte order mark (EF BB BF) at byte {} of the line: only one at the very start of the file is skipped{effect}", at + 1),
                "remove it (files were probably concatenated)",
            );
        }
    }

    fn unparsed(&mut self, line: &Line<'_>) {
        let content = line_text(line);
        if is_blank(content) {
            return;
        }
        let words = content.split(|&b| b == b' ' || b == b'\t').filter(|w| !w.is_empty()).count();
        let why = if content.contains(&b':') {
            "the key before the colon is empty".to_string()
        } else if words > 2 {
            format!("it has no colon and {words} words (Google accepts a missing colon only with exactly two)")
        } else {
            "it has no colon and no value".to_string()
        };
        self.push(
            UNPARSED_LINE,
            line.number,
            format!("\"{}\" is ignored: {why}", show(content)),
            "write `Field: value`, one value per line, or start the line with `#` to make it a comment",
        );
    }

    fn spelling(&mut self, number: u32, key: &[u8], field: Field, spelling: Spelling, missing_colon: bool) {
        let Some(name) = field.name() else { return };
        let key_text = show(key);
        match spelling {
            Spelling::Exact => {}
            Spelling::Typo => self.push(
                FIELD_TYPO,
                number,
                format!(
                    "\"{key_text}\" is read as `{name}` by Google (an accepted typo); other crawlers ignore the line"
                ),
                format!("write `{}:`", canonical(name)),
            ),
            Spelling::Prefix => self.push(
                FIELD_SUFFIX,
                number,
                format!(
                    "\"{key_text}\" is read as `{name}` because it starts with it; other crawlers may ignore the line"
                ),
                format!("write `{}:`", canonical(name)),
            ),
        }
        if missing_colon {
            self.push(
                MISSING_COLON,
                number,
                format!("no colon after \"{key_text}\": Google accepts it, other crawlers ignore the line"),
                format!("write `{}: value`", canonical(name)),
            );
        }
    }

    /// Checks a `content-signal` or `content-usage` value against its syntax
    /// and vocabulary.
    fn preference(&mut self, number: u32, field: Field, value: &[u8]) {
        let field =
            if field == Field::ContentSignal { PreferenceField::ContentSignal } else { PreferenceField::ContentUsage };
        let (yes, no) = field.yes_no();
        let (yes, no) = (String::from_utf8_lossy(yes), String::from_utf8_lossy(no));
        let name = field.name();
        for problem in preference::read(field, number, value).1 {
            let (code, message, fix) = match &problem {
                Problem::NoPreferences => (
                    PREFERENCE_MALFORMED,
                    format!("{name} line with no `key=value`: it says nothing"),
                    format!("write e.g. `{name}: {}`", if field == PreferenceField::ContentSignal { "ai-train=no" } else { "/ train-ai=n" }),
                ),
                Problem::PathNotSlash(path) => (
                    PREFERENCE_MALFORMED,
                    format!("{name} path \"{}\" does not start with `/`: it applies to no URL", show(path)),
                    format!("write `/{}`", show(path)),
                ),
                Problem::EmptyMember => (
                    PREFERENCE_MALFORMED,
                    format!("{name} value has an empty entry (two commas in a row, or one at an end)"),
                    "separate entries with exactly one comma".to_string(),
                ),
                Problem::BadKey(key) => (
                    PREFERENCE_MALFORMED,
                    format!("{name} key \"{}\" is not a valid key (lower case letters, digits, `_-.*`; keys are case-sensitive)", show(key)),
                    format!("write `{}`", show(key).to_ascii_lowercase()),
                ),
                Problem::SpaceAroundEquals(key) => (
                    PREFERENCE_MALFORMED,
                    format!("white space around `=` after \"{}\": strict readers refuse the line", show(key)),
                    format!("write `{}=value` without spaces", show(key)),
                ),
                Problem::BadValue { key, value } => (
                    PREFERENCE_MALFORMED,
                    format!("{name} value \"{}\" of \"{}\" is not a token, string or number", show(value), show(key)),
                    format!("write `{}={yes}` or `{}={no}`", show(key), show(key)),
                ),
                Problem::NotYesNo { key, value } => (
                    PREFERENCE_MALFORMED,
                    format!(
                        "{name} \"{}\" has the value \"{}\", which its vocabulary does not define ({name} says `{yes}` or `{no}`): it means nothing",
                        show(key),
                        show(value)
                    ),
                    format!("write `{}={yes}` or `{}={no}`", show(key), show(key)),
                ),
                Problem::UnknownKey(key) => (
                    PREFERENCE_UNKNOWN_KEY,
                    format!(
                        "{name} key \"{}\" is not one its vocabulary defines ({}): it is kept, but means nothing to its readers",
                        show(key),
                        field.known_keys().join(", ")
                    ),
                    "check the spelling; Content-Signal and Content-Usage have different keys".to_string(),
                ),
                Problem::RepeatedKey(key) => (
                    PREFERENCE_UNKNOWN_KEY,
                    format!("{name} key \"{}\" is given twice on the line: only the last value counts", show(key)),
                    "keep one".to_string(),
                ),
            };
            self.push(code, number, message, fix);
        }
    }

    fn unknown_field(&mut self, number: u32, key: &[u8]) {
        let lower = String::from_utf8_lossy(key).to_ascii_lowercase();
        let shown = show(key);
        if lower.starts_with("crawl-delay") || lower == "crawldelay" || lower == "crawl delay" {
            self.push(
                CRAWL_DELAY,
                number,
                "crawl-delay is ignored by Google (it sets its own rate), honoured by Bing, Yandex and others".into(),
                "keep it for the crawlers that read it; Google's rate is set in Search Console",
            );
        } else if ["noindex", "nofollow", "noarchive", "nosnippet"].contains(&lower.as_str()) {
            self.push(
                NOINDEX_FIELD,
                number,
                format!("\"{shown}\" in robots.txt is ignored by Google (support ended in 2019)"),
                "use a `noindex` robots meta tag or X-Robots-Tag header, and do not disallow the page",
            );
        } else if OTHER_CRAWLER_FIELDS.contains(&lower.as_str()) {
            self.push(
                OTHER_CRAWLER_FIELD,
                number,
                format!("\"{shown}\" is ignored by Google; some other crawlers read it"),
                "nothing to do if it is meant for those crawlers",
            );
        } else {
            let near = nearest_field(&lower);
            let hint = near.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
            self.push(
                UNKNOWN_FIELD,
                number,
                format!(
                    "\"{shown}\" is not a field Google knows{hint}: the line is ignored, and it does not end a group"
                ),
                match near {
                    Some(n) => format!("write `{n}:`"),
                    None => "remove the line, or make it a comment with `#`".into(),
                },
            );
        }
    }

    fn user_agent(&mut self, number: u32, value: &[u8], read: UserAgent<'_>) {
        let shown = show(value);
        match read {
            UserAgent::Global => {
                if value.len() > 1 {
                    self.push(
                        STAR_TRAILING_TEXT,
                        number,
                        format!("\"{shown}\" reads as `*`, the global group; the text after `*` is ignored"),
                        "write `User-agent: *` alone, and name other crawlers on lines of their own",
                    );
                }
            }
            UserAgent::Token([]) => {
                let why = if value.is_empty() {
                    "an empty user-agent".to_string()
                } else if value[0] == b'*' {
                    format!(
                        "\"{shown}\" is not `*` (only `*` alone or followed by white space is the global group) and"
                    )
                } else {
                    format!("\"{shown}\" does not start with a letter, `-` or `_`, so it")
                };
                self.push(
                    AGENT_NAMES_NOTHING,
                    number,
                    format!("{why} names no crawler for Google: the group applies to no Google crawler"),
                    "name the crawler by its product token (letters, `-` and `_`), or `*` for all",
                );
            }
            UserAgent::Token(token) => {
                let rest = &value[token.len()..];
                let version =
                    rest.first() == Some(&b'/') && rest[1..].iter().all(|b| b.is_ascii_alphanumeric() || *b == b'.');
                if rest.is_empty() || rest == b"*" || version {
                    return;
                }
                let more = if rest.iter().any(|&b| b == b',' || b == b' ' || b == b'\t') {
                    "; a list of crawlers on one line names only the first"
                } else {
                    ""
                };
                self.push(
                    AGENT_CUT,
                    number,
                    format!(
                        "\"{shown}\" reads as \"{}\": Google keeps only the leading letters, `-` and `_`{more}",
                        show(token)
                    ),
                    "write the crawler's product token alone, one `User-agent:` line per crawler",
                );
            }
        }
    }

    fn pattern(&mut self, number: u32, field: Field, value: &[u8]) {
        if value.is_empty() {
            return;
        }
        let verb = field.name().unwrap_or_default();
        let shown = show(value);
        let words: Vec<&[u8]> = value.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).collect();
        if words.len() > 1 && words.iter().all(|w| w[0] == b'/' || w[0] == b'*') {
            self.unmatchable.insert(number);
            self.push(
                SEVERAL_PATHS,
                number,
                format!(
                    "\"{verb}: {shown}\" is one pattern with white space in it, not {} paths: it matches nothing meant",
                    words.len()
                ),
                format!("write one `{verb}:` line per path"),
            );
        } else if words.len() > 1 {
            self.push(
                SPACE_IN_PATTERN,
                number,
                format!("the space in \"{shown}\" is literal; URLs carry `%20` for a space, so the rest of the pattern rarely matches"),
                "write `%20` for a space in a path, or end the pattern before it",
            );
        }
        if value[0] != b'/' && value[0] != b'*' {
            self.unmatchable.insert(number);
            let url = value.len() > 7 && (value[..7].eq_ignore_ascii_case(b"http://") || value.starts_with(b"https:"));
            let fix = if url {
                "rules match the path only: write the part from the `/` after the host".to_string()
            } else {
                format!("write `{verb}: /{shown}` (the folder at the root) or `{verb}: /*{shown}` (anywhere)")
            };
            self.push(
                PATH_NOT_SLASH,
                number,
                format!("\"{verb}: {shown}\" does not start with / or *: it matches nothing"),
                fix,
            );
        }
        let (body, _) = pattern::split_anchor(value);
        if let Some(at) = body.iter().position(|&b| b == b'$') {
            self.push(
                DOLLAR_INSIDE,
                number,
                format!("the `$` at byte {} of \"{shown}\" is a literal `$`: only a final `$` anchors", at + 1),
                "move `$` to the end of the pattern, or remove it",
            );
        }
        let upper = value.to_ascii_uppercase();
        for (escape, meant) in [(&b"%2A"[..], '*'), (b"%24", '$')] {
            if find(&upper, escape).is_some() {
                self.push(
                    ESCAPED_WILDCARD,
                    number,
                    format!(
                        "`{}` in \"{shown}\" is matched literally: it is not the wildcard `{meant}`",
                        String::from_utf8_lossy(escape)
                    ),
                    format!("write `{meant}` if a wildcard is meant"),
                );
            }
        }
        if find(body, b"**").is_some() {
            self.push(
                REDUNDANT_STAR,
                number,
                format!("`**` in \"{shown}\" matches what one `*` matches"),
                "write a single `*`",
            );
        } else if body.len() > 1 && body.ends_with(b"*") {
            let without = String::from_utf8_lossy(&body[..body.len() - 1]);
            self.push(
                REDUNDANT_STAR,
                number,
                format!("the trailing `*` in \"{shown}\" changes nothing: rules match prefixes, so `{without}` matches the same paths"),
                format!("write `{verb}: {without}` (the `*` only makes the rule one byte longer when rules are ranked)"),
            );
        }
        if value.iter().any(|&b| b >= 0x80) {
            self.push(
                NON_ASCII,
                number,
                format!(
                    "\"{shown}\" has non-ASCII bytes: Google matches it as \"{}\"",
                    String::from_utf8_lossy(&pattern::escape(value))
                ),
                "nothing to do if the site's URLs are UTF-8; writing the escaped form makes it explicit",
            );
        }
    }

    /// The rules Google never sees because they are past 500 KiB.
    fn cut_off_content(&mut self) {
        let tail = self.robots.ignored_tail;
        if tail.is_empty() {
            return;
        }
        // The first line of the tail continues the last kept line: read them whole.
        let Some(last) = self.robots.lines.last() else { return };
        let mut whole = last.text.to_vec();
        whole.extend_from_slice(tail);
        let rest = RobotsTxt::parse_all(&whole);
        let cut: Vec<u32> = rest
            .lines
            .iter()
            .filter(|l| l.field().is_some_and(Field::is_rule))
            .map(|l| l.number + last.number - 1)
            .collect();
        let kept = match last.directive {
            Some(d) if !last.text.is_empty() => {
                format!("; Google reads the cut line as \"{}: {}\"", show(d.key), show(d.value))
            }
            _ => String::new(),
        };
        let last = last.number;
        let listed = cut.iter().take(10).map(u32::to_string).collect::<Vec<_>>().join(", ");
        let more = if cut.len() > 10 { format!(" and {} more", cut.len() - 10) } else { String::new() };
        let rules = if cut.is_empty() {
            "no rules are cut off".to_string()
        } else {
            format!("{} rule(s) are cut off: line(s) {listed}{more}", cut.len())
        };
        self.push(
            BODY_TOO_LARGE,
            last,
            format!(
                "the file is {} bytes; Google reads only the first {MAX_BODY_BYTES} (this line is cut at that byte){kept}; {rules}",
                MAX_BODY_BYTES + tail.len()
            ),
            "shorten the file below 500 KiB: merge rules with `*`, drop duplicates",
        );
    }

    /// Crawlers whose groups have no rule lines while the `*` group has rules.
    fn unrestricted_agents(&mut self) {
        let global_rules = self.groups.iter().filter(|g| g.global).any(|g| g.disallows > 0);
        if !global_rules {
            return;
        }
        let mut per_token: BTreeMap<&[u8], (u32, usize)> = BTreeMap::new();
        for g in &self.groups {
            for (line, token) in &g.agents {
                if token.is_empty() {
                    continue;
                }
                let entry = per_token.entry(token).or_insert((*line, 0));
                entry.1 += g.rule_lines.len();
            }
        }
        let unrestricted: Vec<(u32, String)> =
            per_token.iter().filter(|(_, (_, rules))| *rules == 0).map(|(t, (line, _))| (*line, show(t))).collect();
        for (line, token) in unrestricted {
            self.push(
                AGENT_UNRESTRICTED,
                line,
                format!(
                    "the group of \"{token}\" has no allow or disallow line, so {token} ignores the `*` group and may \
                     fetch every path"
                ),
                format!(
                    "to give {token} the `*` rules, move this line into the `*` group; to allow it everything, \
                     say so with `Disallow:`"
                ),
            );
        }
    }

    /// Never-deciding rules for every crawler the file names (and for `*`),
    /// each checked on the merged group that crawler gets. A finding that
    /// holds for only some of the crawlers whose groups hold the line names them.
    fn every_crawler_decisions(&mut self) {
        // A crawler's merged group depends only on which file groups name it.
        let mut tokens: BTreeMap<&[u8], Vec<usize>> = BTreeMap::new();
        for (i, g) in self.groups.iter().enumerate() {
            for (_, token) in g.agents.iter().filter(|(_, t)| !t.is_empty()) {
                let list = tokens.entry(token).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        let mut by_groups: BTreeMap<Vec<usize>, Vec<String>> = BTreeMap::new();
        for (token, groups) in tokens {
            by_groups.entry(groups).or_default().push(show(token));
        }
        let mut selections: Vec<(Agent, String)> = Vec::new();
        if self.groups.iter().any(|g| g.global) {
            // `*` never equals a token read from a user-agent line, so this
            // crawler gets the global groups.
            selections.push((Agent::from_raw_tokens(&["*"]), "*".into()));
        }
        for names in by_groups.into_values() {
            selections.push((Agent::from_raw_tokens(&names[..1]), names.join(", ")));
        }
        let mut holders: BTreeMap<u32, usize> = BTreeMap::new();
        let mut found: BTreeMap<(u32, &'static str), (Finding, Vec<String>)> = BTreeMap::new();
        let mut checked: HashMap<Vec<Rule>, Vec<Finding>> = HashMap::new();
        for (agent, names) in selections {
            let group = Group::select(self.robots, &agent);
            let lines: BTreeSet<u32> = group.rules.iter().map(|r| r.line).collect();
            for line in lines {
                *holders.entry(line).or_default() += 1;
            }
            let findings = checked
                .entry(group.rules.clone())
                .or_insert_with(|| redundant_rules(&group, &self.cache.effects(&group), &self.unmatchable));
            for f in findings.iter() {
                found.entry((f.line, f.code)).or_insert_with(|| (f.clone(), Vec::new())).1.push(names.clone());
            }
        }
        for ((line, _), (mut finding, names)) in found {
            if holders.get(&line).is_some_and(|&n| n > names.len()) {
                finding.message.push_str(&format!(" (for user-agent {})", names.join("; ")));
            }
            self.findings.push(finding);
        }
    }
}

/// The findings for lines of `group` that change no verdict (or were not
/// analysed), one per line. Lines whose rule matches nothing for a reason
/// already reported (`unmatchable`) are left out.
fn redundant_rules(group: &Group, effects: &[Effect], unmatchable: &BTreeSet<u32>) -> Vec<Finding> {
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

/// The first 4 KiB of the file's lines, classified.
struct Sample {
    bytes: Vec<u8>,
}

impl Sample {
    fn of(lines: &[Line<'_>]) -> Sample {
        let mut bytes = Vec::with_capacity(4096);
        for line in lines {
            if bytes.len() >= 4096 {
                break;
            }
            bytes.extend_from_slice(line.text);
            bytes.push(b'\n');
        }
        bytes.truncate(4096);
        Sample { bytes }
    }

    fn is_html(&self) -> bool {
        let start = self.bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(self.bytes.len());
        if self.bytes.get(start) != Some(&b'<') {
            return false;
        }
        let lower = self.bytes.to_ascii_lowercase();
        ["<html", "<!doctype html", "<head", "<body", "<meta", "<script", "<title", "<div", "<iframe"]
            .iter()
            .any(|tag| find(&lower, tag.as_bytes()).is_some())
    }

    /// Why the sample is not text, if it is not.
    fn binary(&self) -> Option<String> {
        let b = &self.bytes;
        let nuls = b.iter().filter(|&&c| c == 0).count();
        if nuls * 4 > b.len() && nuls > 1 {
            let alternating = b.iter().step_by(2).filter(|&&c| c == 0).count() * 3 > b.len() / 2
                || b.iter().skip(1).step_by(2).filter(|&&c| c == 0).count() * 3 > b.len() / 2;
            return Some(if alternating { "UTF-16 text".into() } else { format!("{nuls} NUL bytes") });
        }
        let control = b.iter().filter(|&&c| c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)).count();
        let replacement = b.windows(3).filter(|w| *w == [0xEF, 0xBF, 0xBD]).count();
        let chars = b.iter().filter(|&&c| !(0x80..0xC0).contains(&c)).count().max(1);
        if (control + replacement) * 10 > chars {
            let what = if replacement > control {
                "decoded binary: many U+FFFD replacement characters"
            } else {
                "control bytes"
            };
            return Some(what.into());
        }
        if nuls > 0 && (nuls + control) * 20 > chars {
            return Some(format!("{nuls} NUL bytes"));
        }
        None
    }
}

/// Fields that crawlers other than Google define.
const OTHER_CRAWLER_FIELDS: &[&str] = &[
    "host",
    "clean-param",
    "request-rate",
    "visit-time",
    "content-signal",
    "content-usage",
    "cache-delay",
    "indexpage",
    "ai-train",
    "acap-crawler",
    "acap-disallow-crawl",
    "acap-allow-crawl",
];

/// A canonical field name close to `key` (at most two edits), if any.
fn nearest_field(key: &str) -> Option<&'static str> {
    ["user-agent", "allow", "disallow", "sitemap", "crawl-delay"]
        .into_iter()
        .map(|name| (edit_distance(key.as_bytes(), name.as_bytes()), name))
        .filter(|(d, name)| *d <= 2 && *d < name.len() / 2)
        .min()
        .map(|(_, name)| name)
}

fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(x != y)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `User-agent` for `user-agent`, as people write field names.
fn canonical(name: &str) -> &'static str {
    match name {
        "user-agent" => "User-agent",
        "allow" => "Allow",
        "disallow" => "Disallow",
        "sitemap" => "Sitemap",
        "content-signal" => "Content-Signal",
        "content-usage" => "Content-Usage",
        _ => "Field",
    }
}

fn is_absolute_url(value: &[u8]) -> bool {
    let Some(colon) = find(value, b"://") else { return false };
    let scheme = &value[..colon];
    let host = &value[colon + 3..];
    !scheme.is_empty()
        && scheme[0].is_ascii_alphabetic()
        && scheme.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && host.first().is_some_and(|b| !matches!(b, b'/' | b'?' | b'#') && !b.is_ascii_whitespace())
}

/// The line's content as the parser read it: up to a NUL and without a comment.
fn line_text<'a>(line: &Line<'a>) -> &'a [u8] {
    let text = line.text;
    let text = &text[..text.iter().position(|&b| b == 0).unwrap_or(text.len())];
    let text = &text[..text.iter().position(|&b| b == b'#').unwrap_or(text.len())];
    let start = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    let end = text.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &text[start..end.max(start)]
}

fn is_blank(text: &[u8]) -> bool {
    text.iter().all(|b| b.is_ascii_whitespace() || *b == 0x0b)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Bytes for a message: lossy UTF-8, cut at 80 characters.
fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}
