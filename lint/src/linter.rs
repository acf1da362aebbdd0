//! The linter: whole-file checks, a walk over the parser's lines, the
//! groups as written, and the report.

use crate::codes::*;
use crate::effects::{Effect, EffectCache};
use crate::redundancy::redundant_rules;
use crate::{pattern, PreferenceField};
use robotsieve_robotstxt::group::{Agent, Group, Position, Rule, Segmenter, UserAgent};
use robotsieve_robotstxt::parse::{Field, Line, RobotsTxt, Spelling, MAX_BODY_BYTES, MAX_LINE_BYTES};
use robotsieve_robotstxt::preference::{self, Problem};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
