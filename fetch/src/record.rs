//! A fetch record: one line of the corpus `compile --corpus` reads, plus the
//! fields the cache needs (`max_age`, `retry_after`, `attempts`,
//! `elapsed_ms`).

use robotsieve_sources::corpus::{FetchDetails, FetchRecord, Place, SourceRef};
use robotsieve_sources::Timestamp;
use std::fmt;
use std::sync::Arc;

/// What failed when there was no HTTP answer: the word before `: ` in a
/// record's `error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// The name did not resolve (no such name, no answer, server failure).
    Dns,
    /// The server refused the connection.
    Refused,
    /// Any other failure to connect (unreachable network, no address).
    Connect,
    /// The connection was reset.
    Reset,
    /// A connect, response or total deadline passed.
    Timeout,
    /// The TLS handshake failed (unknown CA, expired certificate, ...).
    Tls,
    /// The answer was not HTTP the client could read, or the URL cannot be
    /// fetched by this fetcher.
    Protocol,
    /// The body broke off or could not be decoded.
    Body,
    /// The address is loopback, private, link-local or reserved and was not
    /// allowed.
    Blocked,
}

impl ErrorClass {
    /// The word in records.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Dns => "dns",
            ErrorClass::Refused => "refused",
            ErrorClass::Connect => "connect",
            ErrorClass::Reset => "reset",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Tls => "tls",
            ErrorClass::Protocol => "protocol",
            ErrorClass::Body => "body",
            ErrorClass::Blocked => "blocked",
        }
    }

    /// Every class, in the order summaries list them.
    pub const ALL: [ErrorClass; 9] = [
        ErrorClass::Dns,
        ErrorClass::Refused,
        ErrorClass::Connect,
        ErrorClass::Reset,
        ErrorClass::Timeout,
        ErrorClass::Tls,
        ErrorClass::Protocol,
        ErrorClass::Body,
        ErrorClass::Blocked,
    ];
}

/// A failure with no HTTP answer: its class and the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchError {
    /// The class.
    pub class: ErrorClass,
    /// What happened, for people.
    pub detail: String,
}

impl FetchError {
    /// A failure of `class`.
    pub fn new(class: ErrorClass, detail: impl Into<String>) -> FetchError {
        FetchError { class, detail: detail.into() }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class.as_str(), self.detail)
    }
}

/// One fetch of one URL (one hop of a redirect chain).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The URL fetched.
    pub url: String,
    /// The HTTP status; 0 when there was no HTTP answer.
    pub status: u16,
    /// The body, Content-Encoding undone, at most [`crate::MAX_BODY`] bytes.
    pub body: Vec<u8>,
    /// Whether the body was cut at [`crate::MAX_BODY`].
    pub truncated: bool,
    /// When the answer came (or the failure happened).
    pub fetched_at: Option<Timestamp>,
    /// The `Location` of a 3xx, as the server sent it.
    pub location: Option<String>,
    /// For status 0: `class: detail`.
    pub error: Option<String>,
    /// Seconds the server lets the copy be kept (`s-maxage`, else `max-age`,
    /// else `Expires` minus `Date`; 0 for `no-store`/`no-cache`).
    pub max_age: Option<u64>,
    /// Seconds the server asked to wait (`Retry-After` of a 429 or 503).
    pub retry_after: Option<u64>,
    /// Attempts made for this chain (1 without retries).
    pub attempts: u32,
    /// Milliseconds this hop took.
    pub elapsed_ms: u64,
    /// An FTP server's last reply (FTP fetches only).
    pub ftp_reply: Option<String>,
}

impl Record {
    /// A status-0 record of a failure.
    pub fn failed(url: &str, error: &FetchError) -> Record {
        Record { url: url.to_owned(), error: Some(error.to_string()), attempts: 1, ..Record::default() }
    }

    /// The record in the corpus format's own type, as
    /// `robotsieve-sources` reads and writes it: the fields every record
    /// has, and the fetch's own figures (`attempts`, `elapsed_ms`, and
    /// `truncated`, `max_age`, `retry_after`, `ftp_reply` where present) as
    /// its [`FetchDetails`]. Its source names the fetcher, since the record
    /// was never read from a file.
    pub fn to_corpus_record(&self) -> FetchRecord {
        FetchRecord {
            url: self.url.clone(),
            status: self.status,
            body: Arc::from(self.body.as_slice()),
            fetched_at: self.fetched_at,
            location: self.location.clone(),
            error: self.error.clone(),
            details: Some(Box::new(FetchDetails {
                max_age: self.max_age,
                retry_after: self.retry_after,
                failures_in_a_row: None,
                attempts: Some(self.attempts),
                elapsed_ms: Some(self.elapsed_ms),
                truncated: self.truncated.then_some(true),
                ftp_reply: self.ftp_reply.clone(),
            })),
            source: SourceRef { file: Arc::from("robotsieve fetch"), place: Place::File },
        }
    }

    /// Appends the record as one line of the corpus format, written by the
    /// one writer of that format ([`FetchRecord::write_jsonl`]): `body` when
    /// the body is UTF-8, else `body_b64`, no body field when it is empty.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        self.to_corpus_record().write_jsonl(out).expect("writing to memory cannot fail");
    }

    /// Whether this result is retried: a 5xx, a 429, or no HTTP answer
    /// (but never a blocked address, which no retry changes).
    pub fn is_retryable(&self) -> bool {
        match self.status {
            0 => !self.error.as_deref().is_some_and(|e| e.starts_with("blocked:")),
            429 | 500..=599 => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_sources::Corpus;

    fn read_back(line: &[u8]) -> FetchRecord {
        let mut corpus = Corpus::new();
        corpus.add_jsonl_from(Arc::from("line"), line).unwrap();
        corpus.into_records().remove(0)
    }

    #[test]
    fn records_are_written_by_the_corpus_writer_and_read_back_whole() {
        let fetched_at = Some(Timestamp::parse_rfc3339("2026-12-06T00:00:00Z").unwrap());
        let ok = Record {
            url: "https://a.test/robots.txt".into(),
            status: 200,
            body: b"User-agent: *\nDisallow: /x\n".to_vec(),
            truncated: true,
            fetched_at,
            max_age: Some(600),
            attempts: 1,
            elapsed_ms: 12,
            ..Record::default()
        };
        let mut line = Vec::new();
        ok.write_json_line(&mut line);
        assert_eq!(
            String::from_utf8(line.clone()).unwrap(),
            concat!(
                r#"{"url":"https://a.test/robots.txt","status":200,"body":"User-agent: *\nDisallow: /x\n","#,
                r#""fetched_at":"2026-12-06T00:00:00Z","max_age":600,"attempts":1,"elapsed_ms":12,"truncated":true}"#,
                "\n"
            )
        );
        let back = read_back(&line);
        assert_eq!(FetchRecord { source: back.source.clone(), ..ok.to_corpus_record() }, back);

        // Binary bodies go as base64; an FTP reply and an error are kept; no
        // `truncated` when the body was whole.
        let ftp = Record {
            url: "ftp://a.test/robots.txt".into(),
            body: vec![0xff, 0x00, 0x01],
            ftp_reply: Some("421 Service not available".into()),
            error: Some("protocol: x".into()),
            attempts: 3,
            fetched_at,
            ..Record::default()
        };
        let mut line = Vec::new();
        ftp.write_json_line(&mut line);
        let text = String::from_utf8(line.clone()).unwrap();
        assert!(text.contains(r#""body_b64":"/wAB""#) && !text.contains("truncated"), "{text}");
        let back = read_back(&line);
        assert_eq!(back.details().ftp_reply.as_deref(), Some("421 Service not available"));
        assert_eq!((back.details().attempts, back.details().truncated), (Some(3), None));
        assert_eq!(&*back.body, &[0xff, 0x00, 0x01]);
    }
}
