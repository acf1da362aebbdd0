//! The HTTP/1.x response a WARC `response` record holds: status line, header
//! fields, and the body with its transfer and content codings undone (up to
//! [`MAX_BLOCK`], so no gzip bomb).

use flate2::bufread::{GzDecoder, ZlibDecoder};
use std::borrow::Cow;
use std::fmt;
use std::io::Read;

/// The most of a record's block (and of a decoded body) held in memory:
/// 64 MiB, far more than the 500 KiB of a robots.txt Google reads or the
/// head of a page where its meta tags are.
pub const MAX_BLOCK: u64 = 64 << 20;

/// Why an HTTP response could not be read ([`HttpResponse::parse`]) or its
/// body not decoded ([`HttpResponse::decoded_body`]). Quoted input is cut to
/// its first 60 characters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpError {
    /// No bytes at all.
    Empty,
    /// The status line is not UTF-8.
    StatusLineNotUtf8,
    /// The first line is no `HTTP/x.y` status line.
    NotStatusLine {
        /// The line.
        line: String,
    },
    /// The status code is not three digits.
    BadStatusCode {
        /// The code as written.
        code: String,
    },
    /// A header line without a colon.
    HeaderWithoutColon {
        /// The line.
        line: String,
    },
    /// A chunked body whose data runs out before the last (empty) chunk.
    NoLastChunk,
    /// A chunk size that is not hexadecimal.
    BadChunkSize {
        /// The size as written.
        size: String,
    },
    /// A chunk longer than the bytes left.
    TruncatedChunk,
    /// A `Transfer-Encoding` other than `chunked` or `identity`.
    UnsupportedTransferEncoding {
        /// The coding, lower case.
        coding: String,
    },
    /// A `Content-Encoding` other than `gzip`, `x-gzip`, `deflate` or `identity`.
    UnsupportedContentEncoding {
        /// The coding, lower case.
        coding: String,
    },
    /// A `gzip` or `deflate` body that does not decompress.
    Decompress {
        /// `gzip` or `deflate`.
        coding: &'static str,
        /// What the decoder said.
        error: String,
    },
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Empty => f.write_str("empty HTTP message"),
            HttpError::StatusLineNotUtf8 => f.write_str("status line is not UTF-8"),
            HttpError::NotStatusLine { line } => write!(f, "not an HTTP status line: {line:?}"),
            HttpError::BadStatusCode { code } => write!(f, "bad HTTP status code {code:?}"),
            HttpError::HeaderWithoutColon { line } => write!(f, "HTTP header line without a colon: {line:?}"),
            HttpError::NoLastChunk => f.write_str("chunked body ends without a last chunk"),
            HttpError::BadChunkSize { size } => write!(f, "bad chunk size {size:?}"),
            HttpError::TruncatedChunk => f.write_str("chunked body is truncated"),
            HttpError::UnsupportedTransferEncoding { coding } => write!(f, "unsupported Transfer-Encoding {coding:?}"),
            HttpError::UnsupportedContentEncoding { coding } => write!(f, "unsupported Content-Encoding {coding:?}"),
            HttpError::Decompress { coding, error } => write!(f, "{coding} body: {error}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// An HTTP/1.x response as recorded: status, header fields and the body bytes
/// as they were stored (see [`HttpResponse::decoded_body`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code of the status line.
    pub status: u16,
    /// The header fields in order, values as raw bytes.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Everything after the empty line ending the header.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// Parses a status line (`HTTP/1.1 200 OK`), header fields (continuation
    /// lines folded in) and the body. LF alone is accepted for CRLF.
    pub fn parse(block: &[u8]) -> Result<HttpResponse, HttpError> {
        let mut rest = block;
        let status_line = take_line(&mut rest).ok_or(HttpError::Empty)?;
        let status_line = std::str::from_utf8(status_line).map_err(|_| HttpError::StatusLineNotUtf8)?;
        let mut parts = status_line.split_ascii_whitespace();
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/") {
            return Err(HttpError::NotStatusLine { line: truncate(status_line).to_owned() });
        }
        let code = parts.next().unwrap_or("");
        let status = match code.parse::<u16>() {
            Ok(s) if code.len() == 3 => s,
            _ => return Err(HttpError::BadStatusCode { code: truncate(code).to_owned() }),
        };
        let mut headers: Vec<(String, Vec<u8>)> = Vec::new();
        // A header without the empty line after it has no body.
        while let Some(line) = take_line(&mut rest) {
            if line.is_empty() {
                break;
            }
            if matches!(line[0], b' ' | b'\t') {
                if let Some((_, value)) = headers.last_mut() {
                    value.push(b' ');
                    value.extend_from_slice(line.trim_ascii());
                }
                continue;
            }
            let colon = line.iter().position(|&b| b == b':').ok_or_else(|| HttpError::HeaderWithoutColon {
                line: truncate(&String::from_utf8_lossy(line)).to_owned(),
            })?;
            let name = String::from_utf8_lossy(line[..colon].trim_ascii()).into_owned();
            headers.push((name, line[colon + 1..].trim_ascii().to_vec()));
        }
        Ok(HttpResponse { status, headers, body: rest.to_vec() })
    }

    /// The first header field called `name`, compared without case.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
    }

    /// The body with the encodings its headers declare undone:
    /// `Transfer-Encoding: chunked` (sizes, extensions ignored, trailers
    /// dropped) and `Content-Encoding` `gzip`, `x-gzip` or `deflate` (its
    /// first [`MAX_BLOCK`] bytes). Any
    /// other transfer or content coding is an error. Common Crawl stores
    /// bodies already decoded and renames these headers
    /// (`X-Crawler-Transfer-Encoding`), so its bodies come back unchanged.
    pub fn decoded_body(&self) -> Result<Cow<'_, [u8]>, HttpError> {
        let mut body = Cow::Borrowed(self.body.as_slice());
        if let Some(te) = self.header("Transfer-Encoding") {
            let te = String::from_utf8_lossy(te).trim().to_ascii_lowercase();
            match te.as_str() {
                "" | "identity" => {}
                "chunked" => body = Cow::Owned(dechunk(&body)?),
                other => return Err(HttpError::UnsupportedTransferEncoding { coding: other.to_owned() }),
            }
        }
        if let Some(ce) = self.header("Content-Encoding") {
            let ce = String::from_utf8_lossy(ce).trim().to_ascii_lowercase();
            let mut out = Vec::new();
            match ce.as_str() {
                "" | "identity" => {}
                "gzip" | "x-gzip" => {
                    GzDecoder::new(&body[..])
                        .take(MAX_BLOCK)
                        .read_to_end(&mut out)
                        .map_err(|e| HttpError::Decompress { coding: "gzip", error: e.to_string() })?;
                    body = Cow::Owned(out);
                }
                "deflate" => {
                    ZlibDecoder::new(&body[..])
                        .take(MAX_BLOCK)
                        .read_to_end(&mut out)
                        .map_err(|e| HttpError::Decompress { coding: "deflate", error: e.to_string() })?;
                    body = Cow::Owned(out);
                }
                other => return Err(HttpError::UnsupportedContentEncoding { coding: other.to_owned() }),
            }
        }
        Ok(body)
    }
}

/// Undoes chunked transfer coding.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::with_capacity(rest.len());
    loop {
        let line = take_line(&mut rest).ok_or(HttpError::NoLastChunk)?;
        let size_text = line.split(|&b| b == b';').next().unwrap_or(b"").trim_ascii();
        let size = std::str::from_utf8(size_text)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| HttpError::BadChunkSize { size: String::from_utf8_lossy(size_text).into_owned() })?;
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size {
            return Err(HttpError::TruncatedChunk);
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size..];
        // The CRLF after the chunk data.
        rest = rest.strip_prefix(b"\r\n").or_else(|| rest.strip_prefix(b"\n")).unwrap_or(rest);
    }
}

/// Takes one line (without its CRLF or LF) off the front of `rest`.
fn take_line<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    if rest.is_empty() {
        return None;
    }
    let (line, after) = match rest.iter().position(|&b| b == b'\n') {
        Some(nl) => (&rest[..nl], &rest[nl + 1..]),
        None => (&rest[..], &rest[rest.len()..]),
    };
    *rest = after;
    Some(line.strip_suffix(b"\r").unwrap_or(line))
}

/// The first 60 characters of `s`, for messages that quote input.
pub(crate) fn truncate(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
