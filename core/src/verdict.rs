//! The four answers robotsieve gives for a URL.

use std::fmt;

/// Where a URL goes when a frontier is filtered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The rules of the URL's origin allow it (or no rule matched).
    Allowed,
    /// The rules of the URL's origin disallow it (or the robots.txt fetch
    /// failed with a server error, which disallows everything).
    Disallowed,
    /// The artifact has no robots.txt for the URL's origin.
    Unknown,
    /// Not an absolute http, https or ftp URL.
    Invalid,
}

impl Verdict {
    /// All verdicts, in output order.
    pub const ALL: [Verdict; 4] = [Verdict::Allowed, Verdict::Disallowed, Verdict::Unknown, Verdict::Invalid];

    /// The lower-case name used in outputs (`allowed`, `disallowed`, `unknown`, `invalid`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Disallowed => "disallowed",
            Verdict::Unknown => "unknown",
            Verdict::Invalid => "invalid",
        }
    }

    /// Position in [`Verdict::ALL`], for per-verdict arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
