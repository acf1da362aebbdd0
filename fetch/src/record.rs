//! A fetch record: one line of the corpus `compile --corpus` reads, plus the
//! fields the cache needs (`max_age`, `retry_after`, `attempts`,
//! `elapsed_ms`).

use base64::Engine as _;
use robotsieve_sources::Timestamp;
use serde::Serialize;
use std::fmt;

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

#[derive(Serialize)]
struct JsonRecord<'a> {
    url: &'a str,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_b64: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    fetched_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_age: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
    attempts: u32,
    elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ftp_reply: Option<&'a str>,
}

impl Record {
    /// A status-0 record of a failure.
    pub fn failed(url: &str, error: &FetchError) -> Record {
        Record { url: url.to_owned(), error: Some(error.to_string()), attempts: 1, ..Record::default() }
    }

    /// Appends the record as one JSON line (`body` when the body is UTF-8,
    /// else `body_b64`; no body field when it is empty).
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        let (body, body_b64) = match std::str::from_utf8(&self.body) {
            _ if self.body.is_empty() => (None, None),
            Ok(text) => (Some(text), None),
            Err(_) => (None, Some(base64::engine::general_purpose::STANDARD.encode(&self.body))),
        };
        let json = JsonRecord {
            url: &self.url,
            status: self.status,
            body,
            body_b64,
            truncated: self.truncated,
            fetched_at: self.fetched_at.map(|t| t.to_string()),
            location: self.location.as_deref(),
            error: self.error.as_deref(),
            max_age: self.max_age,
            retry_after: self.retry_after,
            attempts: self.attempts,
            elapsed_ms: self.elapsed_ms,
            ftp_reply: self.ftp_reply.as_deref(),
        };
        serde_json::to_writer(&mut *out, &json).expect("a record serialises");
        out.push(b'\n');
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
