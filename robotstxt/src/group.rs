//! Which rules apply to a crawler: group selection and merging.
//!
//! A group is one or more `user-agent` lines followed by rules. Only a
//! `user-agent` line that follows a rule starts a new group; sitemaps, unknown
//! fields, blank lines and comments do not end one. Rules before the first
//! `user-agent` line are ignored. The robots.txt side of `user-agent` is cut to
//! its leading run of `[A-Za-z_-]` and compared without case; `*` (alone or
//! followed by white space) names the global group.
//!
//! Every group naming any of the crawler's tokens is merged into one. If any
//! exists, the global groups are ignored, even when the merged group has no
//! rules; otherwise the global groups are merged and used.
//!
//! `content-signal` and `content-usage` lines are kept with the group they
//! are in, by the same selection (the crawler's merged group, else `*`).
//! Google reads them as unknown fields, so they neither end a group nor
//! change a rule: a `user-agent` line after one still joins the group.

use crate::parse::{Directive, Field, RobotsTxt};
use crate::preference;
use robotsieve_core::pattern;
use robotsieve_core::preference::{PreferenceField, PreferenceLine};
use robotsieve_core::Label;
use std::fmt;

/// One crawler, known by one or more product tokens (`googlebot-news,googlebot`).
///
/// Tokens are stored in lower case; matching is without case.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Agent {
    tokens: Vec<String>,
}

/// Why an agent specification was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentError {
    /// The offending token (empty when the specification was empty).
    pub token: String,
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "empty user-agent token: a product token is one or more of A-Z, a-z, '-' and '_'")
        } else {
            write!(
                f,
                "invalid user-agent token {:?}: a product token is made of A-Z, a-z, '-' and '_' only \
                 (robots.txt groups name crawlers by such tokens, e.g. \"googlebot\", not by full User-Agent strings)",
                self.token
            )
        }
    }
}

impl std::error::Error for AgentError {}

impl Agent {
    /// Parses `TOKEN[,TOKEN...]`: the product tokens of one crawler.
    pub fn parse(spec: &str) -> Result<Agent, AgentError> {
        let tokens: Vec<&str> = spec.split(',').map(str::trim).collect();
        if let Some(bad) = tokens.iter().find(|t| t.is_empty() || !t.bytes().all(is_token_byte)) {
            return Err(AgentError { token: bad.to_string() });
        }
        Ok(Agent { tokens: tokens.iter().map(|t| t.to_ascii_lowercase()).collect() })
    }

    /// Takes tokens as Google's library takes them: any strings, unchecked,
    /// compared without case against the token extracted from each
    /// `user-agent` line. A string that is not a product token can then only
    /// match by accident (`""` matches a `user-agent` value with no token
    /// characters, as in the reference). For conformance with the reference
    /// API; users get [`Agent::parse`], which refuses such tokens.
    pub fn from_raw_tokens<S: AsRef<str>>(tokens: &[S]) -> Agent {
        Agent { tokens: tokens.iter().map(|t| t.as_ref().to_ascii_lowercase()).collect() }
    }

    /// The crawler's tokens, lower case.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Whether a robots.txt `user-agent` token (already extracted) names this crawler.
    pub fn is_named_by(&self, token: &[u8]) -> bool {
        self.tokens.iter().any(|t| t.as_bytes().eq_ignore_ascii_case(token))
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tokens.join(","))
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
}

/// What a `user-agent` value names, as Google reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserAgent<'a> {
    /// `*`, alone or followed by white space and anything.
    Global,
    /// The leading run of `[A-Za-z_-]` of the value (possibly empty, which
    /// names no crawler).
    Token(&'a [u8]),
}

impl<'a> UserAgent<'a> {
    /// Reads a `user-agent` value.
    pub fn read(value: &'a [u8]) -> UserAgent<'a> {
        match value {
            [b'*'] => UserAgent::Global,
            [b'*', next, ..] if next.is_ascii_whitespace() || *next == 0x0b => UserAgent::Global,
            _ => {
                let len = value.iter().take_while(|&&b| is_token_byte(b)).count();
                UserAgent::Token(&value[..len])
            }
        }
    }
}

/// Whether a rule allows or disallows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `allow:`
    Allow,
    /// `disallow:`
    Disallow,
}

impl Verb {
    /// `"allow"` or `"disallow"`.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Allow => "allow",
            Verb::Disallow => "disallow",
        }
    }
}

/// One rule of a merged group, ready to match.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Allow or disallow.
    pub verb: Verb,
    /// The pattern after escaping (what is matched and what the length counts).
    pub pattern: Vec<u8>,
    /// The line of the robots.txt it came from.
    pub line: u32,
    /// Google's directory rule: this allow rule was derived from
    /// `allow: .../index.htm...` on the same line and allows the directory
    /// itself (`/d/$`).
    pub index_directory: bool,
}

impl Rule {
    /// The rule's precedence.
    pub fn label(&self) -> Label {
        Label::new(self.pattern.len(), self.verb == Verb::Allow)
    }

    /// Whether the rule matches a path-and-query (already in the form rules
    /// are matched against).
    pub fn matches(&self, path: &[u8]) -> bool {
        pattern::matches(&self.pattern, path)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.verb.name(), String::from_utf8_lossy(&self.pattern))
    }
}

/// Where a merged group's rules came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// One or more groups name the crawler.
    Specific,
    /// No group names the crawler; the `*` groups apply.
    Global,
    /// Neither: nothing applies and every path is allowed.
    Nothing,
}

/// The merged rules that apply to one crawler.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    /// Where the rules came from.
    pub source: Source,
    /// The `user-agent` lines of the merged groups.
    pub agent_lines: Vec<u32>,
    /// The rules, in file order (a derived directory rule right after its source).
    pub rules: Vec<Rule>,
    /// The `content-signal` and `content-usage` lines, in file order (they
    /// never change a verdict; see [`robotsieve_core::preference`]).
    pub preferences: Vec<PreferenceLine>,
}

/// The outcome of matching a path against a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The winning label (`Label::NONE` when no rule matched).
    pub label: Label,
    /// Index in `Group::rules` of the deciding rule: among the rules with the
    /// winning label, the first in the file, as Google reports it.
    pub rule: Option<usize>,
}

impl Decision {
    /// Whether the path is allowed.
    pub fn allowed(&self) -> bool {
        self.label.allows()
    }
}

impl Group {
    /// Selects and merges the rules of `robots` that apply to `agent`.
    pub fn select(robots: &RobotsTxt<'_>, agent: &Agent) -> Group {
        let mut members = [Members::default(), Members::default()];
        // The preference lines of the group being read: which members they
        // join is known at the group's end, as a user-agent line may follow.
        let mut pending: Vec<PreferenceLine> = Vec::new();
        walk_groups(robots, agent, |step| match step {
            Step::Agent { names: Some(member), line } => members[member as usize].agent_lines.push(line),
            Step::Agent { names: None, .. } => {}
            Step::Line { member, line, directive: d } => match d.field {
                Field::Allow | Field::Disallow => {
                    // Rules of no group, or of a group for other crawlers, are not read.
                    if let Some(member) = member {
                        let verb = if d.field == Field::Allow { Verb::Allow } else { Verb::Disallow };
                        members[member as usize].push_rule(verb, d.value, line);
                    }
                }
                Field::ContentSignal | Field::ContentUsage => {
                    let field = if d.field == Field::ContentSignal {
                        PreferenceField::ContentSignal
                    } else {
                        PreferenceField::ContentUsage
                    };
                    pending.push(preference::read(field, line, d.value).0);
                }
                Field::UserAgent | Field::Sitemap | Field::Unknown => {}
            },
            Step::End { member: Some(member) } => members[member as usize].preferences.append(&mut pending),
            Step::End { member: None } => pending.clear(),
        });
        let [specific, global] = members;
        if !specific.agent_lines.is_empty() {
            specific.into_group(Source::Specific)
        } else if !global.agent_lines.is_empty() {
            global.into_group(Source::Global)
        } else {
            Members::default().into_group(Source::Nothing)
        }
    }

    /// The fields Google ignores (`crawl-delay`, `request-rate`,
    /// `visit-time`, ...) written in the groups that [`Group::select`] picks
    /// for `agent`, in file order: what a binding needs to answer Protego's
    /// `crawl_delay` for the same group whose rules decide.
    pub fn other_fields<'a>(robots: &RobotsTxt<'a>, agent: &Agent) -> Vec<OtherField<'a>> {
        let mut fields = [Vec::new(), Vec::new()];
        let mut named = [false, false];
        walk_groups(robots, agent, |step| match step {
            Step::Agent { names: Some(member), .. } => named[member as usize] = true,
            Step::Line { member: Some(member), line, directive: d } if d.field == Field::Unknown => {
                fields[member as usize].push(OtherField { line, key: d.key, value: d.value })
            }
            _ => {}
        });
        let [specific, global] = fields;
        if named[Member::Specific as usize] {
            specific
        } else {
            global
        }
    }

    /// The first `crawl-delay` value (as written) in the groups that
    /// [`Group::select`] picks for `agent` (see [`Group::crawl_delays`]).
    pub fn crawl_delay<'a>(robots: &RobotsTxt<'a>, agent: &Agent) -> Option<&'a [u8]> {
        Group::crawl_delays(robots, agent).into_iter().next()
    }

    /// Every `crawl-delay` value (as written, in file order) in the groups
    /// that [`Group::select`] picks for `agent`. Google ignores crawl-delay
    /// (and so do verdicts), RFC 9309 does not define it, and the readers
    /// that honour it disagree on a group with several: Python's
    /// `urllib.robotparser` keeps the last; others the first. So all are
    /// kept, for the crawl loop to choose.
    pub fn crawl_delays<'a>(robots: &RobotsTxt<'a>, agent: &Agent) -> Vec<&'a [u8]> {
        Group::other_fields(robots, agent)
            .into_iter()
            .filter(|f| f.key.eq_ignore_ascii_case(b"crawl-delay"))
            .map(|f| f.value)
            .collect()
    }

    /// The straightforward per-rule matcher: tries every rule. This is the
    /// oracle every faster matcher is tested against.
    ///
    /// `path` is a path-and-query in the form rules are matched against (see
    /// [`robotsieve_core::url::PathMode::path_of`]: the fetcher's path,
    /// escaped like patterns, or Google's with raw URLs).
    pub fn decide(&self, path: &[u8]) -> Decision {
        let mut best = Decision { label: Label::NONE, rule: None };
        for (i, rule) in self.rules.iter().enumerate() {
            let label = rule.label();
            if label > best.label && rule.matches(path) {
                best = Decision { label, rule: Some(i) };
            }
        }
        best
    }

    /// The preferences that apply to a path-and-query (the form
    /// [`Group::decide`] takes): per field, the matching lines with the
    /// longest path, combined.
    pub fn preferences_for(&self, path: &[u8]) -> Vec<(PreferenceField, robotsieve_core::preference::Applied)> {
        robotsieve_core::preference::applicable(&self.preferences, path)
    }
}

#[derive(Default)]
struct Members {
    agent_lines: Vec<u32>,
    rules: Vec<Rule>,
    preferences: Vec<PreferenceLine>,
}

impl Members {
    fn push_rule(&mut self, verb: Verb, value: &[u8], line: u32) {
        // A rule without a path is ignored.
        if value.is_empty() {
            return;
        }
        let pattern = pattern::escape(value).into_owned();
        let directory = (verb == Verb::Allow).then(|| index_directory(&pattern)).flatten();
        self.rules.push(Rule { verb, pattern, line, index_directory: false });
        if let Some(pattern) = directory {
            self.rules.push(Rule { verb, pattern, line, index_directory: true });
        }
    }

    fn into_group(self, source: Source) -> Group {
        Group { source, agent_lines: self.agent_lines, rules: self.rules, preferences: self.preferences }
    }
}

/// Google's directory rule: an allow pattern whose last segment starts with
/// `index.htm` also allows the directory itself, as the pattern `<dir>/$`.
/// A field of a crawler's group that is neither a rule nor `user-agent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherField<'a> {
    /// Its robots.txt line.
    pub line: u32,
    /// The key as written (`Crawl-delay`).
    pub key: &'a [u8],
    /// The value as written.
    pub value: &'a [u8],
}

/// Where a directive stands in the groups of a file ([`Segmenter::position`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Before the first `user-agent` line: in no group, ignored by Google.
    Outside,
    /// A `user-agent` line that starts a group: the first of the file, or
    /// the first after a rule.
    StartsGroup,
    /// A line of the group being read: a `user-agent` line that joins it
    /// (no rule came between), a rule, or any other field.
    InGroup,
}

/// How a file divides into groups, as Google reads it, one directive at a
/// time: a group is one or more `user-agent` lines followed by rules; only a
/// `user-agent` line after a rule starts a new group (sitemaps, preference
/// lines, unknown fields, blank lines and comments end none); lines before
/// the first `user-agent` line are in no group.
///
/// The one reading of group structure: [`Group::select`] (rules and
/// preference lines), [`Group::other_fields`] and the linter all take their
/// groups from it, so they cannot disagree. Google's own parser notes a rule
/// only inside a group that names the crawler or `*`; the groups of rules
/// are the same either way (a group naming neither contributes nothing),
/// and noting every rule keeps the preference lines of such a group out of
/// the next one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Segmenter {
    /// A `user-agent` line has been read.
    open: bool,
    /// A rule has been read since the group started.
    after_rule: bool,
}

impl Segmenter {
    /// The position of the next directive, a line of field `field`, read in
    /// file order.
    pub fn position(&mut self, field: Field) -> Position {
        match field {
            Field::UserAgent if !self.open || self.after_rule => {
                self.open = true;
                self.after_rule = false;
                Position::StartsGroup
            }
            _ if !self.open => Position::Outside,
            field => {
                self.after_rule |= field.is_rule();
                Position::InGroup
            }
        }
    }
}

/// Which of the merged groups a line belongs to (also an index: specific first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Member {
    /// A group that names the crawler (it also wins when the group names `*` too).
    Specific = 0,
    /// A `*` group.
    Global = 1,
}

/// What [`walk_groups`] hands on, in file order.
enum Step<'d, 'a> {
    /// A `user-agent` line, and the member it names (`None`: other crawlers).
    Agent { names: Option<Member>, line: u32 },
    /// Any other directive, with the member its group belongs to as far as
    /// its user-agent lines have been read (`None`: no group, or one for
    /// other crawlers).
    Line { member: Option<Member>, line: u32, directive: &'d Directive<'a> },
    /// A group ends (the next starts, or the file ends), with the member it
    /// belongs to in the end; also before the first group, with `None`.
    End { member: Option<Member> },
}

/// Reads the groups of `robots` as Google does ([`Segmenter`]) and hands
/// every directive to `visit`, with whom its group belongs to for `agent`:
/// the one reading of groups that [`Group::select`] and
/// [`Group::other_fields`] share.
fn walk_groups<'a>(robots: &RobotsTxt<'a>, agent: &Agent, mut visit: impl FnMut(Step<'_, 'a>)) {
    // The state of the group being read: does it name the crawler, is it global.
    let (mut names_agent, mut is_global) = (false, false);
    let member = |names_agent: bool, is_global: bool| {
        if names_agent {
            Some(Member::Specific)
        } else {
            is_global.then_some(Member::Global)
        }
    };
    let mut groups = Segmenter::default();
    for (line, d) in robots.directives() {
        if groups.position(d.field) == Position::StartsGroup {
            visit(Step::End { member: member(names_agent, is_global) });
            names_agent = false;
            is_global = false;
        }
        if d.field == Field::UserAgent {
            let names = match UserAgent::read(d.value) {
                UserAgent::Global => Some(Member::Global),
                UserAgent::Token(token) => agent.is_named_by(token).then_some(Member::Specific),
            };
            names_agent |= names == Some(Member::Specific);
            is_global |= names == Some(Member::Global);
            visit(Step::Agent { names, line: line.number });
        } else {
            visit(Step::Line { member: member(names_agent, is_global), line: line.number, directive: d });
        }
    }
    visit(Step::End { member: member(names_agent, is_global) });
}

/// Google's directory rule: an allow pattern whose last segment starts with
/// `index.htm` also allows the directory itself, as the pattern `<dir>/$`.
fn index_directory(pattern: &[u8]) -> Option<Vec<u8>> {
    let slash = pattern.iter().rposition(|&b| b == b'/')?;
    if !pattern[slash..].starts_with(b"/index.htm") {
        return None;
    }
    let mut directory = pattern[..=slash].to_vec();
    directory.push(b'$');
    Some(directory)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(body: &str, agent: &str, path: &str) -> bool {
        let robots = RobotsTxt::parse(body.as_bytes());
        Group::select(&robots, &Agent::parse(agent).unwrap()).decide(path.as_bytes()).allowed()
    }

    /// The values of the fields other_fields finds for `agent`.
    fn other_values(body: &str, agent: &str) -> Vec<(u32, String)> {
        let robots = RobotsTxt::parse(body.as_bytes());
        Group::other_fields(&robots, &Agent::parse(agent).unwrap())
            .iter()
            .map(|f| (f.line, String::from_utf8_lossy(f.value).into_owned()))
            .collect()
    }

    #[test]
    fn other_fields_come_from_the_group_that_decides() {
        let body = "crawl-delay: 9\nuser-agent: *\ncrawl-delay: 1\ndisallow: /x\n\
                    user-agent: mybot\nuser-agent: other\ncrawl-delay: 2\nallow: /\nrequest-rate: 1/5\n\
                    user-agent: mybot\nvisit-time: 0600-0700\nsitemap: https://a/s.xml\n";
        // Both groups naming mybot are merged; the line before any group and the * group are not.
        let expected = [(7, "2".to_string()), (9, "1/5".to_string()), (11, "0600-0700".to_string())];
        assert_eq!(other_values(body, "mybot"), expected);
        assert_eq!(other_values(body, "nobody"), [(3, "1".to_string())]);
        // A group that names the crawler wins even without such fields.
        let specific = "user-agent: *\ncrawl-delay: 1\ndisallow: /a\nuser-agent: mybot\ndisallow: /\n";
        assert_eq!(other_values(specific, "mybot"), []);
        assert_eq!(other_values("crawl-delay: 1\n", "mybot"), []);
    }

    #[test]
    fn agent_tokens_are_validated() {
        assert!(Agent::parse("googlebot").is_ok());
        assert!(Agent::parse("Googlebot-News,googlebot").is_ok());
        assert!(Agent::parse("Googlebot/2.1").is_err());
        assert!(Agent::parse("").is_err());
        assert!(Agent::parse("a,,b").is_err());
        assert!(Agent::parse("my bot").is_err());
    }

    #[test]
    fn raw_tokens_match_like_the_reference() {
        let body = "user-agent: *\ndisallow: /\nuser-agent: Foo Bar\nallow: /\n";
        let robots = RobotsTxt::parse(body.as_bytes());
        // "Foo Bar" reads as the token "Foo", which is not "foo bar".
        let group = Group::select(&robots, &Agent::from_raw_tokens(&["Foo Bar"]));
        assert_eq!(group.source, Source::Global);
        let empty = RobotsTxt::parse(b"user-agent: /x\ndisallow: /\n");
        assert_eq!(Group::select(&empty, &Agent::from_raw_tokens(&[""])).source, Source::Specific);
    }

    #[test]
    fn user_agent_values() {
        assert_eq!(UserAgent::read(b"*"), UserAgent::Global);
        assert_eq!(UserAgent::read(b"* foo"), UserAgent::Global);
        assert_eq!(UserAgent::read(b"*foo"), UserAgent::Token(b""));
        assert_eq!(UserAgent::read(b"Googlebot/2.1"), UserAgent::Token(b"Googlebot"));
        assert_eq!(UserAgent::read(b"googlebot*"), UserAgent::Token(b"googlebot"));
        assert_eq!(UserAgent::read(b"MJ12bot"), UserAgent::Token(b"MJ"));
    }

    #[test]
    fn sitemap_and_unknown_lines_do_not_end_a_group() {
        let body = "user-agent: a\nsitemap: x\ncrawl-delay: 1\n\nuser-agent: b\ndisallow: /x\n";
        assert!(!decide(body, "a", "/x"));
        assert!(!decide(body, "b", "/x"));
    }

    #[test]
    fn rules_before_any_user_agent_are_ignored() {
        assert!(decide("disallow: /x\nuser-agent: *\ndisallow: /y\n", "a", "/x"));
    }

    #[test]
    fn specific_group_excludes_global_even_when_empty() {
        let body = "user-agent: *\ndisallow: /\nuser-agent: a\n";
        assert!(decide(body, "a", "/x"));
        assert!(!decide(body, "b", "/x"));
    }

    #[test]
    fn exact_token_match_no_fallback_to_shorter_token() {
        let body = "user-agent: googlebot\ndisallow: /g\nuser-agent: *\ndisallow: /all\n";
        assert!(decide(body, "googlebot-image", "/g"));
        assert!(!decide(body, "googlebot-image", "/all"));
    }

    #[test]
    fn several_tokens_pool_their_groups() {
        let body = "user-agent: googlebot\ndisallow: /g\nuser-agent: googlebot-news\ndisallow: /n\n";
        assert!(!decide(body, "googlebot-news,googlebot", "/g"));
        assert!(!decide(body, "googlebot-news,googlebot", "/n"));
        assert!(decide(body, "googlebot-news", "/g"));
    }

    #[test]
    fn precedence_longest_then_allow() {
        let body = "user-agent: *\nallow: /p\ndisallow: /\nallow: /folder\ndisallow: /folder\n";
        assert!(decide(body, "a", "/page"));
        assert!(decide(body, "a", "/folder/x"));
        assert!(!decide(body, "a", "/x"));
    }

    #[test]
    fn index_htm_allows_the_directory() {
        let body = "user-agent: *\ndisallow: /d/\nallow: /d/index.html\n";
        assert!(decide(body, "a", "/d/"));
        assert!(decide(body, "a", "/d/index.html"));
        assert!(!decide(body, "a", "/d/other"));
        let robots = RobotsTxt::parse(body.as_bytes());
        let group = Group::select(&robots, &Agent::parse("a").unwrap());
        assert_eq!(group.rules[2].pattern, b"/d/$");
        assert!(group.rules[2].index_directory);
    }

    #[test]
    fn empty_rules_are_ignored() {
        assert!(decide("user-agent: *\ndisallow:\n", "a", "/x"));
    }

    #[test]
    fn deciding_rule_is_the_first_of_equal_labels() {
        let robots = RobotsTxt::parse(b"user-agent: *\ndisallow: /a*\ndisallow: /*b\n");
        let group = Group::select(&robots, &Agent::parse("a").unwrap());
        let d = group.decide(b"/ab");
        assert_eq!(d.rule, Some(0));
        assert_eq!(group.rules[0].line, 2);
    }

    #[test]
    fn patterns_are_escaped() {
        let body = "user-agent: *\ndisallow: /ä\ndisallow: /%aa\n";
        assert!(!decide(body, "a", "/%C3%A4"));
        assert!(!decide(body, "a", "/%AA"));
        assert!(decide(body, "a", "/%aa"));
    }

    fn preferences(body: &str, agent: &str, path: &str) -> Vec<(u32, String)> {
        let robots = RobotsTxt::parse(body.as_bytes());
        let group = Group::select(&robots, &Agent::parse(agent).unwrap());
        group
            .preferences_for(path.as_bytes())
            .into_iter()
            .flat_map(|(field, applied)| {
                let text =
                    format!("{}: {}", field.name(), robotsieve_core::preference::format_entries(&applied.entries));
                applied.lines.into_iter().map(move |l| (l, text.clone()))
            })
            .collect()
    }

    #[test]
    fn cloudflare_published_example() {
        let body = "User-Agent: *\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nAllow: /\n";
        let got = preferences(body, "gptbot", "/any/page");
        assert_eq!(got, vec![(2, "Content-Signal: ai-train=no, search=yes, ai-input=yes".into())]);
        assert!(decide(body, "gptbot", "/any/page"));
    }

    #[test]
    fn aipref_issue_example_with_paths() {
        let body = "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /docs/ train-ai=y\n";
        assert_eq!(preferences(body, "a", "/docs/x"), vec![(4, "Content-Usage: train-ai=y".into())]);
        assert_eq!(preferences(body, "a", "/blog"), vec![(3, "Content-Usage: train-ai=n".into())]);
    }

    #[test]
    fn aipref_attach_draft_example() {
        // draft-ietf-aipref-attach, section 3 "Example", and its table.
        let body = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\n\
                    User-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n";
        assert_eq!(preferences(body, "other", "/test"), vec![(4, "Content-Usage: train-ai=n".into())]);
        assert_eq!(preferences(body, "other", "/ai-ok/test"), vec![(5, "Content-Usage: train-ai=y".into())]);
        assert!(!decide(body, "other", "/never/test"));
        assert_eq!(preferences(body, "examplebot", "/never/test"), vec![(9, "Content-Usage: train-ai=y".into())]);
    }

    #[test]
    fn several_lines_in_one_group_tie_and_combine() {
        let body = "User-agent: *\nContent-Usage: / train-ai=y, search=y\nContent-Usage: / train-ai=n\nContent-Signal: search=yes\nContent-Signal: ai-train=no\n";
        assert_eq!(
            preferences(body, "a", "/x"),
            vec![
                (4, "Content-Signal: search=yes, ai-train=no".into()),
                (5, "Content-Signal: search=yes, ai-train=no".into()),
                (2, "Content-Usage: train-ai=n, search=y".into()),
                (3, "Content-Usage: train-ai=n, search=y".into()),
            ]
        );
    }

    #[test]
    fn preference_lines_follow_group_selection_and_merging() {
        let body = "User-agent: *\nContent-Signal: ai-train=no\nDisallow:\n\nUser-agent: gptbot\nContent-Usage: /a train-ai=n\nDisallow: /private\n\n\
                    User-agent: ccbot\nDisallow: /\nUser-agent: gptbot\nContent-Usage: /ab train-ai=y\n";
        // gptbot: its two groups merged, `*` ignored.
        assert_eq!(preferences(body, "gptbot", "/abc"), vec![(12, "Content-Usage: train-ai=y".into())]);
        assert_eq!(preferences(body, "gptbot", "/a"), vec![(6, "Content-Usage: train-ai=n".into())]);
        assert_eq!(preferences(body, "gptbot", "/x"), vec![]);
        // ccbot has a group of its own without preferences; others get `*`.
        assert_eq!(preferences(body, "ccbot", "/x"), vec![]);
        assert_eq!(preferences(body, "other", "/x"), vec![(2, "Content-Signal: ai-train=no".into())]);
    }

    #[test]
    fn preference_lines_do_not_end_a_group_and_need_one() {
        // Google reads them as unknown fields: the second user-agent joins the group.
        let body =
            "Content-Usage: train-ai=n\nUser-agent: a\nContent-Signal: ai-train=no\nUser-agent: b\nDisallow: /x\n";
        assert_eq!(preferences(body, "b", "/y"), vec![(3, "Content-Signal: ai-train=no".into())]);
        assert!(!decide(body, "a", "/x"));
        assert_eq!(preferences(body, "c", "/y"), vec![], "the line before any user-agent applies to no one");
    }

    #[test]
    fn preference_lines_of_a_group_naming_neither_stay_in_it() {
        // The rule of `other`'s group ends it, though it names neither
        // gptbot nor `*`: its Content-Signal is not gptbot's.
        let body = "User-agent: other\nContent-Signal: ai-train=no\nDisallow: /x\nUser-agent: gptbot\nDisallow: /y\n";
        assert_eq!(preferences(body, "gptbot", "/z"), vec![]);
        assert_eq!(preferences(body, "other", "/z"), vec![(2, "Content-Signal: ai-train=no".into())]);
        assert!(decide(body, "gptbot", "/x") && !decide(body, "gptbot", "/y"));
    }

    #[test]
    fn segmenter_starts_a_group_only_at_a_user_agent_after_a_rule() {
        let body = "disallow: /a\nuser-agent: a\nsitemap: https://x/s\nuser-agent: b\ncrawl-delay: 1\nallow: /\nuser-agent: c\n";
        let robots = RobotsTxt::parse(body.as_bytes());
        let mut groups = Segmenter::default();
        let positions: Vec<Position> = robots.directives().map(|(_, d)| groups.position(d.field)).collect();
        use Position::*;
        assert_eq!(positions, vec![Outside, StartsGroup, InGroup, InGroup, InGroup, InGroup, StartsGroup]);
    }
}
