//! The findings the linter reports: their codes, severities and shape.

use std::fmt;

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
    pub(crate) fn new(code: Code, line: u32, message: String, fix: impl Into<String>) -> Finding {
        Finding { code: code.name, severity: code.severity, line, message, fix: fix.into() }
    }
}
