//! Compaction: a corpus cut down to the records that still decide
//! something, so that a crawl loop's corpus stays the size of the web and
//! not of its history.
//!
//! Per URL (by [`crate::corpus::record_key`]), it keeps:
//!
//! - the newest record;
//! - where the newest is unreachable (after its redirects, as compile reads
//!   it), also the last reachable record, whose copy the 30-day rule falls
//!   back to; or, where none was ever reachable, the oldest record, from
//!   which the 30-day rule measures;
//! - and writes on the newest record, when it failed (5xx, 429, status 0),
//!   `failures_in_a_row` ([`crate::freshness::failures_in_a_row`]), so that
//!   the cache policy's backoff survives the failures dropped.
//!
//! Compile reads no more of a URL than these (the newest record, and for an
//! unreachable one the last reachable record or the oldest time), so the
//! compacted corpus compiles to the same rules; and the cache policy reads
//! the newest record and the failure count, so it gives the same due list.
//! Records keep their order, so that ties of time resolve as before.
//! Records whose URL cannot be parsed are kept as they are (compile skips
//! them with a warning).

use crate::corpus::FetchRecord;
use crate::freshness::{failures_in_a_row, is_failure};
use crate::history::UrlHistories;
use crate::status::StatusClass;
use std::collections::HashSet;

/// What a compaction kept and dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionStats {
    /// Records read.
    pub read: usize,
    /// Records kept.
    pub kept: usize,
    /// Distinct URLs.
    pub urls: usize,
}

/// Compacts `records` (in the order read, from any number of corpora; see
/// the module documentation): the records kept, in the order read.
pub fn compact(records: Vec<FetchRecord>) -> (Vec<FetchRecord>, CompactionStats) {
    let (keep, failures, urls) = {
        let histories = UrlHistories::new(&records);
        let chains = histories.chains();
        let mut keep = vec![false; records.len()];
        let mut failures = Vec::new();
        for &i in &histories.unparsed {
            keep[i] = true;
        }
        for history in histories.urls.values() {
            let fetches = &history.fetches;
            let newest = history.newest();
            keep[newest] = true;
            let unreachable = |i: usize| chains.follow(i, &mut HashSet::new()).class == StatusClass::Unreachable;
            if unreachable(newest) {
                let older = &fetches[..fetches.len() - 1];
                match older.iter().rev().find(|&&i| !unreachable(i)) {
                    Some(&reachable) => keep[reachable] = true,
                    None => keep[fetches[0]] = true,
                }
            }
            if is_failure(&records[newest]) {
                let in_order: Vec<&FetchRecord> = fetches.iter().map(|&i| &records[i]).collect();
                failures.push((newest, failures_in_a_row(&in_order)));
            }
        }
        (keep, failures, histories.urls.len())
    };
    let read = records.len();
    let mut records = records;
    for (i, k) in failures {
        records[i].set_details(|d| d.failures_in_a_row = Some(k));
    }
    let kept: Vec<FetchRecord> = records.into_iter().zip(keep).filter_map(|(r, keep)| keep.then_some(r)).collect();
    let stats = CompactionStats { read, kept: kept.len(), urls };
    (kept, stats)
}
