//! Google's fetch-status policy: what an HTTP status means for a robots.txt
//! fetch, and which of an origin's fetches governs it.
//!
//! The rules, as docs/semantics.md ("Fetch results") gives them and the
//! conformance cases (`shared/conformance/status.jsonl`) check them:
//!
//! - 2xx: the body is the robots.txt.
//! - 3xx: `location` is followed for up to [`MAX_REDIRECTS`] hops; the
//!   chain's last answer decides, and a chain that does not end (too long, a
//!   loop, no or an invalid `location`, a target never fetched) counts as 404.
//! - 4xx other than 429: no robots.txt, no restrictions.
//! - 5xx, 429, status 0 (no HTTP answer) and any status outside 200 to 599:
//!   the site is unreachable, everything is disallowed.
//! - Several fetches of one origin: the newest wins; if it says
//!   "unreachable", the 30-day rule ([`OUTAGE_GRACE_SECONDS`]) decides
//!   ([`FetchHistory`]).
//!
//! Both resolutions of a corpus apply these rules through this module: the
//! one in memory ([`crate::corpus::Corpus::resolve`]) and the one in bounded
//! memory ([`crate::bounded`]).

use crate::time::Timestamp;

/// How many redirects are followed before the fetch counts as a 404.
pub const MAX_REDIRECTS: usize = 5;

/// How long (in seconds) a site may be unreachable and stay blocked: 30 days.
pub const OUTAGE_GRACE_SECONDS: i64 = 30 * 86_400;

/// How a fetch status counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusClass {
    /// 2xx: the body is the robots.txt.
    Success,
    /// 3xx: follow `Location`.
    Redirect,
    /// 4xx other than 429: no robots.txt.
    ClientError,
    /// 5xx, 429, 0 and anything else: the site is unreachable.
    Unreachable,
}

impl StatusClass {
    /// The class of an HTTP status (0 for no answer).
    pub fn of(status: u16) -> StatusClass {
        match status {
            200..=299 => StatusClass::Success,
            300..=399 => StatusClass::Redirect,
            429 => StatusClass::Unreachable,
            400..=499 => StatusClass::ClientError,
            _ => StatusClass::Unreachable,
        }
    }
}

/// Why an origin is governed the way it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// 2xx (perhaps after redirects): the body's rules.
    Success,
    /// 4xx other than 429 (perhaps after redirects): no restrictions.
    ClientError,
    /// A redirect chain that did not end within five hops (too long, a loop,
    /// no `location`, a target the corpus lacks): as 404, no restrictions.
    RedirectFailed,
    /// 5xx, 429 or no answer (perhaps after redirects), within 30 days of
    /// the last reachable fetch: everything disallowed.
    Unreachable,
    /// Unreachable for more than 30 days: the last reachable fetch applies.
    OutageFallback,
    /// Unreachable for more than 30 days and never reachable: no restrictions.
    OutageExpired,
}

/// One origin's fetches, fed oldest first (by fetch time, records without a
/// time first, ties in input order), each with its class after redirects
/// (`Success`, `ClientError` or `Unreachable`), reduced to what the
/// newest-wins and 30-day rules look at: the oldest time, the newest fetch,
/// and the last reachable one before it. A fold, so an origin with any
/// number of fetches takes the same few words.
#[derive(Clone, Debug)]
pub struct FetchHistory<T> {
    oldest_time: Option<Timestamp>,
    newest: Option<(T, StatusClass, Option<Timestamp>)>,
    last_reachable: Option<(T, Option<Timestamp>)>,
}

impl<T> Default for FetchHistory<T> {
    fn default() -> Self {
        FetchHistory { oldest_time: None, newest: None, last_reachable: None }
    }
}

/// Which fetch governs an origin, by the newest-wins and 30-day rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice<T> {
    /// The newest fetch, reachable: its own result applies (its body, no
    /// restrictions for a 4xx or a failed redirect).
    Newest(T),
    /// The newest is unreachable within 30 days of the last reachable fetch
    /// (or a time is unknown): blocked. `since` is that last reachable fetch.
    StaysBlocked {
        /// The newest fetch.
        newest: T,
        /// The last reachable one, and its time.
        since: (T, Option<Timestamp>),
    },
    /// Unreachable for more than 30 days: the last reachable fetch applies.
    Fallback {
        /// The newest fetch.
        newest: T,
        /// The last reachable fetch, whose result applies.
        reachable: T,
    },
    /// Unreachable for more than 30 days, never reachable: no restrictions.
    /// `since` is the oldest fetch's time.
    Expired {
        /// The newest fetch.
        newest: T,
        /// When the oldest fetch was made.
        since: Timestamp,
    },
    /// Unreachable, never reachable, not for more than 30 days: blocked.
    Blocked(T),
}

impl<T> FetchHistory<T> {
    /// Adds the next fetch (newer than every one before).
    pub fn push(&mut self, fetch: T, class: StatusClass, fetched_at: Option<Timestamp>) {
        match self.newest.take() {
            None => self.oldest_time = fetched_at,
            Some((previous, class, time)) => {
                if class != StatusClass::Unreachable {
                    self.last_reachable = Some((previous, time));
                }
            }
        }
        self.newest = Some((fetch, class, fetched_at));
    }

    /// The governing fetch; `None` when no fetch was pushed.
    pub fn choose(self) -> Option<Choice<T>> {
        let (newest, class, newest_time) = self.newest?;
        if class != StatusClass::Unreachable {
            return Some(Choice::Newest(newest));
        }
        let more_than_grace = |since: Option<Timestamp>| matches!((since, newest_time), (Some(a), Some(b)) if b.unix_seconds() - a.unix_seconds() > OUTAGE_GRACE_SECONDS);
        Some(match self.last_reachable {
            Some((reachable, time)) if more_than_grace(time) => Choice::Fallback { newest, reachable },
            Some(since) => Choice::StaysBlocked { newest, since },
            None if more_than_grace(self.oldest_time) => {
                Choice::Expired { newest, since: self.oldest_time.expect("checked above") }
            }
            None => Choice::Blocked(newest),
        })
    }
}
