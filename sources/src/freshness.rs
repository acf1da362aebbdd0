//! How long a fetched robots.txt may be kept, as Google keeps it: the cache
//! policy, one function from a URL's records and the time now to "fresh
//! until T" or "due" ([`CachePolicy::freshness`]), and the robots.txt URLs
//! of a corpus with theirs ([`corpus_freshness`]).
//!
//! Google caches a robots.txt for up to 24 hours, longer when it cannot be
//! refreshed, and lets `Cache-Control: max-age` change that; RFC 9309
//! (section 2.4) says a crawler SHOULD NOT use a cached copy for more than
//! 24 hours unless the robots.txt is unreachable. The policy, from the
//! newest record of a URL:
//!
//! | newest record | due at |
//! |---|---|
//! | no time (`fetched_at` absent), or no record | now |
//! | 2xx, 3xx, 4xx (not 429) without `max_age` | `fetched_at` + [`CachePolicy::default_ttl`] (24 h) |
//! | the same with `max_age` (0 for `no-store`/`no-cache`) | `fetched_at` + `max_age` clamped to [`CachePolicy::min_ttl`] (1 h) .. [`CachePolicy::max_ttl`] (7 d) |
//! | 5xx, 429, status 0 (or any other status) with `retry_after` | `fetched_at` + `retry_after`, at most [`CachePolicy::retry_after_cap`] (24 h) |
//! | the same without `retry_after` | `fetched_at` + min([`CachePolicy::backoff_start`] (1 h) x 2^(k-1), [`CachePolicy::backoff_cap`] (12 h)), k the failures in a row |
//!
//! k is the newest record's `failures_in_a_row` where it has one (written by
//! compaction), else counted back from the newest record over the failures
//! before it, stopping at a reachable record or adding the count of the
//! first record that carries one. A robots.txt URL whose newest record
//! redirects is due when any URL of its redirect chain (each hop's newest
//! record, as compile follows them) is due.

use crate::corpus::{CopyFacts, FetchRecord};
use crate::history::UrlHistories;
use crate::status::StatusClass;
use crate::time::Timestamp;
use std::collections::HashSet;
use std::time::Duration;

/// The bounds of the cache policy (see the module documentation). The
/// [`Default`] is Google's: 24 hours, `max_age` within 1 hour .. 7 days,
/// `Retry-After` up to 24 hours, backoff from 1 hour doubling up to 12 hours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CachePolicy {
    /// How long a copy is kept when the server says nothing: 24 hours.
    pub default_ttl: Duration,
    /// The shortest a server's `max_age` may make it (so that `no-store` does
    /// not mean a fetch every run): 1 hour.
    pub min_ttl: Duration,
    /// The longest a server's `max_age` may make it: 7 days.
    pub max_ttl: Duration,
    /// The longest wait a failure's `Retry-After` may ask for: 24 hours.
    pub retry_after_cap: Duration,
    /// The wait after one failure without `Retry-After`; it doubles with each
    /// further failure in a row: 1 hour.
    pub backoff_start: Duration,
    /// The longest wait after failures without `Retry-After`: 12 hours.
    pub backoff_cap: Duration,
}

const HOUR: u64 = 3600;

impl Default for CachePolicy {
    fn default() -> CachePolicy {
        CachePolicy {
            default_ttl: Duration::from_secs(24 * HOUR),
            min_ttl: Duration::from_secs(HOUR),
            max_ttl: Duration::from_secs(7 * 24 * HOUR),
            retry_after_cap: Duration::from_secs(24 * HOUR),
            backoff_start: Duration::from_secs(HOUR),
            backoff_cap: Duration::from_secs(12 * HOUR),
        }
    }
}

/// Which row of the policy set a URL's due time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheRule {
    /// No record, or the newest has no time: due at once.
    Undated,
    /// A reachable answer without `max_age`: the default TTL.
    DefaultTtl,
    /// A reachable answer with `max_age`.
    MaxAge {
        /// The server's `max_age`, seconds.
        given: u64,
        /// After clamping to the policy's bounds.
        used: u64,
    },
    /// A failure with `retry_after`.
    RetryAfter {
        /// The server's `Retry-After`, seconds.
        given: u64,
        /// After the cap.
        used: u64,
    },
    /// A failure without `retry_after`: exponential backoff.
    Backoff {
        /// Failures in a row, the newest included (k).
        failures: u32,
        /// The wait, seconds.
        wait: u64,
    },
}

/// Whether a URL is due for a new fetch, and since or until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The copy may still be used, until `until`.
    Fresh {
        /// When it expires.
        until: Timestamp,
        /// Why then.
        rule: CacheRule,
    },
    /// The copy has expired (or there is none): fetch again.
    Due {
        /// When it expired; `None` for "always" (no time known).
        since: Option<Timestamp>,
        /// Why.
        rule: CacheRule,
    },
}

impl Freshness {
    /// Whether a fetch is due.
    pub fn is_due(&self) -> bool {
        matches!(self, Freshness::Due { .. })
    }

    /// The one of two that is due first: a redirect chain is due when any
    /// of its hops is.
    pub fn sooner(self, other: Freshness) -> Freshness {
        match (self, other) {
            (Freshness::Due { since: a, .. }, Freshness::Due { since: b, .. }) => match b < a {
                true => other,
                false => self,
            },
            (Freshness::Due { .. }, _) => self,
            (_, Freshness::Due { .. }) => other,
            (Freshness::Fresh { until: a, .. }, Freshness::Fresh { until: b, .. }) => match b < a {
                true => other,
                false => self,
            },
        }
    }
}

/// Whether a record's own answer is a failure for the cache: 5xx, 429,
/// status 0 and any status outside 200 to 599 (what compile reads as
/// "unreachable").
pub fn is_failure(record: &FetchRecord) -> bool {
    StatusClass::of(record.status) == StatusClass::Unreachable
}

/// Sorts one URL's records oldest first as compile orders fetches (by
/// `fetched_at`, undated first, ties in the order given).
fn oldest_first<'r>(records: &[&'r FetchRecord]) -> Vec<&'r FetchRecord> {
    let mut sorted = records.to_vec();
    sorted.sort_by_key(|r| r.fetched_at);
    sorted
}

/// How many fetches in a row, the newest included, failed: 0 when the
/// newest did not. `history` is one URL's records oldest first. The newest
/// record's `failures_in_a_row` is taken as it is; otherwise the failures
/// are counted back from the newest, stopping at a reachable record, or at
/// a record that carries `failures_in_a_row` (whose count is added): so a
/// compacted history counts as the history it stands for.
pub fn failures_in_a_row(history: &[&FetchRecord]) -> u32 {
    let mut count = 0u32;
    for record in history.iter().rev() {
        if !is_failure(record) {
            break;
        }
        if let Some(k) = record.details().failures_in_a_row {
            return count.saturating_add(k.max(1));
        }
        count = count.saturating_add(1);
    }
    count
}

impl CachePolicy {
    /// Whether the URL whose records (in the order read, any number of
    /// them) are `records` is due for a new fetch at `now`, and since or
    /// until when, by the policy of the module documentation: the newest
    /// record's facts, with the failures counted over the history, through
    /// [`CachePolicy::freshness_of`].
    pub fn freshness(&self, records: &[&FetchRecord], now: Timestamp) -> Freshness {
        let history = oldest_first(records);
        let Some(newest) = history.last() else {
            return Freshness::Due { since: None, rule: CacheRule::Undated };
        };
        let copy = CopyFacts { failures_in_a_row: Some(failures_in_a_row(&history)), ..CopyFacts::of(newest) };
        self.freshness_of(newest.status, newest.details().retry_after, &copy, now)
    }

    /// The policy itself, on one copy: fetched with HTTP `status` (0 for
    /// no answer), the server's `retry_after` (seconds) if it gave one, and
    /// `copy`'s facts; due or fresh at `now`, and since or until when.
    pub fn freshness_of(&self, status: u16, retry_after: Option<u64>, copy: &CopyFacts, now: Timestamp) -> Freshness {
        let Some(fetched_at) = copy.fetched_at else {
            return Freshness::Due { since: None, rule: CacheRule::Undated };
        };
        let secs = |d: Duration| d.as_secs();
        let rule = if StatusClass::of(status) == StatusClass::Unreachable {
            match retry_after {
                Some(given) => CacheRule::RetryAfter { given, used: given.min(secs(self.retry_after_cap)) },
                None => {
                    let failures = copy.failures_in_a_row.unwrap_or(1).max(1);
                    let doublings = (failures - 1).min(63);
                    let wait = secs(self.backoff_start).saturating_mul(1u64 << doublings).min(secs(self.backoff_cap));
                    CacheRule::Backoff { failures, wait }
                }
            }
        } else {
            match copy.max_age {
                Some(given) => CacheRule::MaxAge { given, used: given.clamp(secs(self.min_ttl), secs(self.max_ttl)) },
                None => CacheRule::DefaultTtl,
            }
        };
        let wait = match rule {
            CacheRule::DefaultTtl => secs(self.default_ttl),
            CacheRule::MaxAge { used, .. } | CacheRule::RetryAfter { used, .. } => used,
            CacheRule::Backoff { wait, .. } => wait,
            CacheRule::Undated => 0,
        };
        let wait = i64::try_from(wait).unwrap_or(i64::MAX);
        let until =
            Timestamp::from_unix_nanos(fetched_at.unix_seconds().saturating_add(wait), fetched_at.subsec_nanos());
        match until <= now {
            true => Freshness::Due { since: Some(until), rule },
            false => Freshness::Fresh { until, rule },
        }
    }
}

/// The freshness of one robots.txt URL of a corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlFreshness<'c> {
    /// The URL as its newest record spells it: what to fetch again.
    pub url: &'c str,
    /// The soonest of the freshness of every URL of its redirect chain.
    pub freshness: Freshness,
    /// The URL of the chain whose freshness that is (`url` itself, or a
    /// redirect's target).
    pub decided_by: &'c str,
}

/// Every robots.txt URL (an origin's `/robots.txt`) that `records` fetched,
/// with its freshness at `now` under `policy`, sorted by URL. Its newest
/// record's redirects are followed as compile follows them (the newest
/// record of each target URL, up to five hops), and the chain is due when
/// any of its URLs is ([`Freshness::sooner`]). URLs that cannot be parsed,
/// and URLs fetched only as a redirect's target, are left out.
pub fn corpus_freshness<'c>(records: &'c [FetchRecord], policy: &CachePolicy, now: Timestamp) -> Vec<UrlFreshness<'c>> {
    let histories = UrlHistories::new(records);
    let chains = histories.chains();
    let mut out: Vec<UrlFreshness<'c>> = Vec::new();
    for history in histories.urls.values().filter(|h| h.at_root) {
        let start = history.newest();
        let outcome = chains.follow(start, &mut HashSet::new());
        let mut soonest: Option<(Freshness, usize)> = None;
        for &hop in &outcome.hops {
            let hop_records: Vec<&FetchRecord> =
                histories.of_record(hop).fetches.iter().map(|&i| &records[i]).collect();
            let freshness = policy.freshness(&hop_records, now);
            soonest = Some(match soonest {
                Some((best, at)) if best.sooner(freshness) == best => (best, at),
                _ => (freshness, hop),
            });
        }
        let (freshness, hop) = soonest.expect("a chain has its start");
        out.push(UrlFreshness { url: &records[start].url, freshness, decided_by: &records[hop].url });
    }
    out.sort_by(|a, b| a.url.cmp(b.url));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Place, SourceRef};

    fn fetch(status: u16, at: Option<i64>, change: impl FnOnce(&mut crate::FetchDetails)) -> FetchRecord {
        let mut record = FetchRecord {
            url: "https://a.example/robots.txt".into(),
            status,
            body: Vec::new().into(),
            fetched_at: at.map(Timestamp::from_unix),
            location: None,
            error: None,
            details: None,
            source: SourceRef { file: "test".into(), place: Place::File },
        };
        record.set_details(change);
        record
    }

    #[test]
    fn the_rule_that_applied_is_named_with_its_figures() {
        let policy = CachePolicy::default();
        let now = Timestamp::from_unix(1_000_000);
        let at = |r: &FetchRecord| policy.freshness(&[r], now);
        let fresh = at(&fetch(200, Some(999_000), |d| d.max_age = Some(30)));
        assert_eq!(
            fresh,
            Freshness::Fresh {
                until: Timestamp::from_unix(1_002_600),
                rule: CacheRule::MaxAge { given: 30, used: 3600 }
            }
        );
        let due = at(&fetch(503, Some(0), |d| d.retry_after = Some(999_999)));
        assert_eq!(
            due,
            Freshness::Due {
                since: Some(Timestamp::from_unix(86_400)),
                rule: CacheRule::RetryAfter { given: 999_999, used: 86_400 }
            }
        );
        assert_eq!(at(&fetch(200, None, |_| {})), Freshness::Due { since: None, rule: CacheRule::Undated });
        assert_eq!(policy.freshness(&[], now), Freshness::Due { since: None, rule: CacheRule::Undated });
    }

    #[test]
    fn records_are_ordered_by_time_whatever_the_order_given() {
        let policy = CachePolicy::default();
        let (old, new) = (fetch(200, Some(0), |_| {}), fetch(503, Some(100), |_| {}));
        let now = Timestamp::from_unix(0);
        for records in [[&old, &new], [&new, &old]] {
            let rule = CacheRule::Backoff { failures: 1, wait: 3600 };
            assert_eq!(policy.freshness(&records, now), Freshness::Fresh { until: Timestamp::from_unix(3700), rule });
        }
    }

    #[test]
    fn failures_in_a_row_count_back_to_a_reachable_record_or_a_count() {
        let ok = fetch(200, Some(0), |_| {});
        let failed = fetch(0, Some(1), |_| {});
        let counted = fetch(503, Some(2), |d| d.failures_in_a_row = Some(5));
        assert_eq!(failures_in_a_row(&[&ok]), 0);
        assert_eq!(failures_in_a_row(&[&failed, &ok]), 0);
        assert_eq!(failures_in_a_row(&[&failed, &ok, &failed, &failed]), 2);
        assert_eq!(failures_in_a_row(&[&failed, &counted, &failed]), 6);
    }

    #[test]
    fn the_sooner_of_two_is_due_first() {
        let rule = CacheRule::DefaultTtl;
        let fresh = |t| Freshness::Fresh { until: Timestamp::from_unix(t), rule };
        let due = |t: Option<i64>| Freshness::Due { since: t.map(Timestamp::from_unix), rule };
        assert_eq!(fresh(5).sooner(fresh(3)), fresh(3));
        assert_eq!(fresh(1).sooner(due(Some(9))), due(Some(9)));
        assert_eq!(due(Some(2)).sooner(due(None)), due(None));
        assert_eq!(due(Some(2)).sooner(due(Some(4))), due(Some(2)));
    }
}
