//! A corpus's records grouped by the URL they fetched, each URL's in fetch
//! order, with the redirects between them: what the cache policy
//! ([`crate::freshness`]) and compaction ([`crate::compaction`]) walk.

use crate::corpus::{record_key, Chains, FetchRecord};
use robotsieve_core::url::KeyBuf;
use std::collections::HashMap;

/// The order of fetches: by `fetched_at`, records without a time older than
/// any dated one, ties going to the record read last ([`crate::corpus`]).
pub(crate) fn fetch_order(records: &[FetchRecord], i: usize) -> (Option<crate::Timestamp>, usize) {
    (records[i].fetched_at, i)
}

/// The records of one URL.
pub(crate) struct UrlHistory {
    /// Indices of its records, oldest first ([`fetch_order`]).
    pub(crate) fetches: Vec<usize>,
    /// Whether the URL is an origin's `/robots.txt` (not only a redirect's target).
    pub(crate) at_root: bool,
}

impl UrlHistory {
    /// The newest record.
    pub(crate) fn newest(&self) -> usize {
        *self.fetches.last().expect("a URL has a record")
    }
}

/// Every URL of a corpus with its records.
pub(crate) struct UrlHistories<'c> {
    pub(crate) records: &'c [FetchRecord],
    /// By [`record_key`].
    pub(crate) urls: HashMap<Vec<u8>, UrlHistory>,
    /// The newest record of each URL, by [`record_key`], for [`Chains`].
    newest: HashMap<Vec<u8>, usize>,
    /// Records whose URL cannot be parsed, in input order.
    pub(crate) unparsed: Vec<usize>,
}

impl<'c> UrlHistories<'c> {
    /// Groups `records` by URL.
    pub(crate) fn new(records: &'c [FetchRecord]) -> UrlHistories<'c> {
        let mut buf = KeyBuf::new();
        let mut urls: HashMap<Vec<u8>, UrlHistory> = HashMap::new();
        let mut unparsed = Vec::new();
        for (i, record) in records.iter().enumerate() {
            let Ok(origin) = buf.parse(record.url.as_bytes()) else {
                unparsed.push(i);
                continue;
            };
            let at_root = origin.is_robots_txt();
            let key = record_key(record.url.as_bytes()).expect("parsed above");
            urls.entry(key).or_insert_with(|| UrlHistory { fetches: Vec::new(), at_root }).fetches.push(i);
        }
        for history in urls.values_mut() {
            history.fetches.sort_by_key(|&i| fetch_order(records, i));
        }
        let newest = urls.iter().map(|(key, history)| (key.clone(), history.newest())).collect();
        UrlHistories { records, urls, newest, unparsed }
    }

    /// Redirects through the newest record of each URL, as compile follows them.
    pub(crate) fn chains(&self) -> Chains<'_> {
        Chains { records: self.records, by_url: &self.newest }
    }

    /// The records of the URL of record `i`, oldest first.
    pub(crate) fn of_record(&self, i: usize) -> &UrlHistory {
        let key = record_key(self.records[i].url.as_bytes()).expect("a record in a chain has a URL");
        &self.urls[&key]
    }
}
