//! # robotsieve-fetch
//!
//! Gets robots.txt files as Google gets them and writes fetch records in the
//! corpus format `compile --corpus` reads. tokio and the HTTP stack (hyper,
//! rustls, hickory) live in this crate and nowhere else.
//!
//! The root is the whole API: [`run()`] with its [`FetchOptions`] and
//! [`RunPaths`] runs a fetch (input lines in, `OUT.partial` out, renamed to
//! `OUT` at the end; signals; `--resume`) and says how it ended
//! ([`Ending`], [`Summary`], [`RunError`]); [`fetch_records()`] and
//! [`fetch_to_file()`] are the same run over a caller's lines, into a
//! caller's function or a file, watching no signals (the Python package); [`Record`] is one fetch as
//! written ([`ErrorClass`] and [`FetchError`] for failures with no HTTP
//! answer); [`DnsOptions`], [`ResolveOverride`] and [`read_hosts_file`]
//! say where names lead; [`Proxy`] is `--proxy`; [`targets_of_line`] reads
//! an input line as the run does; [`Progress`] is read while a run goes on;
//! [`registrable_domain()`] and [`site_of_line()`] group hosts by site with
//! the Public Suffix List compiled in.
//!
//! Inside, one module a job: input lines and redirect targets as URLs
//! (`target`, the one module that uses the engine's URL parser), one
//! origin's redirect chain with its deadline and retries (`chain`), one
//! HTTP request on a connection robotsieve opens itself (`http`, through
//! `proxy` when there is one), FTP (`ftp`), Content-Encoding undone under
//! the size cap (`body`), names to addresses and the address rule (`dns`,
//! `safety`), the limits in flight and per IP address (`politeness`),
//! registrable domains (`site`), and
//! what is written (`record`, `cache_headers`, `output`, `summary`).
//! `test_server` (feature `test-server`) is the tests' server on loopback.
//!
//! # Example
//!
//! One origin fetched from a server on loopback (the tests' own server,
//! mapped with a `--resolve` entry, which the address rule trusts):
//!
//! ```
//! use robotsieve_fetch::test_server::{Pki, Reply, TestServer};
//! use robotsieve_fetch::{run, Ending, FetchOptions, RunPaths};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let pki = Pki::new(dir.path(), &["example.test"]);
//! let server = TestServer::start(&pki, |_host, _path| Reply::status(200, "User-agent: *\nDisallow: /private\n"));
//! let port = server.ports.http;
//! std::fs::write(dir.path().join("origins.txt"), format!("http://example.test:{port}/\n")).unwrap();
//!
//! let mut options = FetchOptions::new("mybot/1.0 (+https://example.org/bot)");
//! options.dns.overrides.push(format!("example.test:{port}:127.0.0.1").parse().unwrap());
//! let output = dir.path().join("fetched.jsonl");
//! let paths = RunPaths { inputs: vec![dir.path().join("origins.txt")], output: output.clone(), resume: false };
//! let (ending, _summary) = run(&options, &paths, None).unwrap();
//! assert_eq!(ending, Ending::Complete);
//!
//! let record: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&output).unwrap().trim()).unwrap();
//! assert_eq!(record["url"], format!("http://example.test:{port}/robots.txt"));
//! assert_eq!(record["status"], 200);
//! assert_eq!(record["body"], "User-agent: *\nDisallow: /private\n");
//! ```
#![warn(missing_docs)]

mod body;
mod cache_headers;
mod chain;
mod dns;
mod ftp;
mod http;
mod output;
mod politeness;
mod proxy;
mod record;
mod run;
mod safety;
mod site;
mod summary;
mod target;
#[cfg(feature = "test-server")]
pub mod test_server;

pub use dns::{read_hosts_file, DnsOptions, ResolveOverride};
pub use output::partial_path;
pub use proxy::Proxy;
pub use record::{ErrorClass, FetchError, Record};
pub use run::{fetch_records, fetch_to_file, run, Ending, FetchOptions, RunError, RunPaths};
pub use site::{registrable_domain, site_of_line};
pub use summary::{Progress, ProgressReading, Summary};
pub use target::{targets_of_line, Target, TargetScheme};

/// Body bytes kept, counted after Content-Encoding is undone: the 500 KiB
/// Google reads (RFC 9309 asks for at least 500 kibibytes).
pub const MAX_BODY: usize = 512_000;
