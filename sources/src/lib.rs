//! # robotsieve-sources
//!
//! Where robots.txt files come from, and what a fetch result means: reading
//! WARC files and the HTTP responses in them, reading corpora of fetch
//! results (a file, a directory, JSON Lines, WARC), Google's fetch-status
//! rules (redirects, 4xx, 5xx, the 30-day rule) that make one governing
//! robots.txt per origin, and the one time type. It knows nothing of the
//! robots.txt language: bodies stay bytes here.
//!
//! - [`bounded`]: the same resolution in bounded memory, for corpora of any
//!   size (two passes over the inputs, sorted runs on disk).
//! - [`corpus`]: fetch records in, one [`Governing`] robots.txt per origin out.
//! - [`runs`]: the external sort the bounded resolution spills to disk with.
//! - [`freshness`]: the cache policy: when a fetched robots.txt is due for
//!   a new fetch, as Google keeps its copies.
//! - [`compaction`]: a corpus cut down to the records that still decide
//!   something (the newest per URL, the copies the 30-day rule needs).
//! - [`status`]: Google's fetch-status policy (2xx, 3xx, 4xx, 5xx and 429,
//!   the 30-day rule), shared by every resolution.
//! - [`warc`]: a streaming WARC record reader.
//! - [`http`]: the HTTP/1.x response in a WARC record, with its transfer and
//!   content codings undone.
//! - [`time`]: [`Timestamp`] and calendar arithmetic.
#![warn(missing_docs)]

pub mod bounded;
pub mod compaction;
pub mod corpus;
pub mod freshness;
mod history;
pub mod http;
pub mod runs;
pub mod status;
pub mod time;
pub mod warc;

pub use compaction::{compact, CompactionStats};
pub use corpus::{
    Corpus, CorpusError, CorpusProblem, FetchDetails, FetchRecord, Governing, RecordError, Resolution, Robots,
};
pub use freshness::{corpus_freshness, CachePolicy, CacheRule, Freshness, UrlFreshness};
pub use http::{HttpError, HttpResponse};
pub use time::{TimeError, Timestamp};
pub use warc::{WarcError, WarcReader, WarcRecord};
