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
//!
//! # Example
//!
//! Read fetch records and resolve them into what governs each origin: a
//! body to parse, or a blanket verdict from the fetch's status.
//!
//! ```
//! use robotsieve_sources::{Corpus, Robots};
//!
//! let records = br#"{"url": "https://example.com/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /x\n"}
//! {"url": "https://down.example/robots.txt", "status": 503}
//! {"url": "https://gone.example/robots.txt", "status": 404}
//! "#;
//! let mut corpus = Corpus::new();
//! assert_eq!(corpus.add_jsonl_from("fetches.jsonl".into(), &records[..]).unwrap(), 3);
//! let resolution = corpus.resolve();
//! let mut kinds: Vec<&str> = resolution
//!     .origins
//!     .values()
//!     .map(|governing| match governing.robots {
//!         Robots::Body(_) => "rules",
//!         Robots::Unrestricted => "unrestricted (4xx)",
//!         Robots::Blocked => "blocked (5xx)",
//!     })
//!     .collect();
//! kinds.sort();
//! assert_eq!(kinds, ["blocked (5xx)", "rules", "unrestricted (4xx)"]);
//! ```
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
    CopyFacts, Corpus, CorpusError, CorpusProblem, FetchDetails, FetchRecord, Governing, RecordError, Resolution,
    Robots,
};
pub use freshness::{corpus_freshness, CachePolicy, CacheRule, Freshness, UrlFreshness};
pub use http::{HttpError, HttpResponse};
pub use time::{TimeError, Timestamp};
pub use warc::{WarcError, WarcReader, WarcRecord};
