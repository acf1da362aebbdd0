//! The HTTP/1.x response a WARC `response` record holds: status line, header
//! fields, and the body with its transfer and content codings undone (up to
//! [`MAX_BLOCK`], so no gzip bomb).

use flate2::bufread::{GzDecoder, ZlibDecoder};
use std::borrow::Cow;
use std::io::Read;

/// The most of a record's block (and of a decoded body) held in memory:
/// 64 MiB, far more than the 500 KiB of a robots.txt Google reads or the
/// head of a page where its meta tags are.
pub const MAX_BLOCK: u64 = 64 << 20;

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
    pub fn parse(block: &[u8]) -> Result<HttpResponse, String> {
        let mut rest = block;
        let status_line = take_line(&mut rest).ok_or("empty HTTP message")?;
        let status_line = std::str::from_utf8(status_line).map_err(|_| "status line is not UTF-8")?;
        let mut parts = status_line.split_ascii_whitespace();
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/") {
            return Err(format!("not an HTTP status line: {:?}", truncate(status_line)));
        }
        let code = parts.next().unwrap_or("");
        let status = match code.parse::<u16>() {
            Ok(s) if code.len() == 3 => s,
            _ => return Err(format!("bad HTTP status code {:?}", truncate(code))),
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
            let colon = line.iter().position(|&b| b == b':').ok_or_else(|| {
                format!("HTTP header line without a colon: {:?}", truncate(&String::from_utf8_lossy(line)))
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
    pub fn decoded_body(&self) -> Result<Cow<'_, [u8]>, String> {
        let mut body = Cow::Borrowed(self.body.as_slice());
        if let Some(te) = self.header("Transfer-Encoding") {
            let te = String::from_utf8_lossy(te).trim().to_ascii_lowercase();
            match te.as_str() {
                "" | "identity" => {}
                "chunked" => body = Cow::Owned(dechunk(&body)?),
                other => return Err(format!("unsupported Transfer-Encoding {other:?}")),
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
                        .map_err(|e| format!("gzip body: {e}"))?;
                    body = Cow::Owned(out);
                }
                "deflate" => {
                    ZlibDecoder::new(&body[..])
                        .take(MAX_BLOCK)
                        .read_to_end(&mut out)
                        .map_err(|e| format!("deflate body: {e}"))?;
                    body = Cow::Owned(out);
                }
                other => return Err(format!("unsupported Content-Encoding {other:?}")),
            }
        }
        Ok(body)
    }
}

/// Undoes chunked transfer coding.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(rest.len());
    loop {
        let line = take_line(&mut rest).ok_or("chunked body ends without a last chunk")?;
        let size_text = line.split(|&b| b == b';').next().unwrap_or(b"").trim_ascii();
        let size = std::str::from_utf8(size_text)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| format!("bad chunk size {:?}", String::from_utf8_lossy(size_text)))?;
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size {
            return Err("chunked body is truncated".into());
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
