//! A response body with its `Content-Encoding` (gzip, deflate, br) undone as
//! it arrives, cut at a cap counted after decoding: a compression bomb costs
//! the cap, not its expansion.

use crate::record::{ErrorClass, FetchError};
use std::io::{self, Write};

/// The decoded body.
#[derive(Debug, Default)]
pub struct Decoded {
    /// At most the cap's bytes.
    pub bytes: Vec<u8>,
    /// Whether more came (or would have come) past the cap.
    pub truncated: bool,
}

/// A writer that keeps the first `cap` bytes and then refuses.
struct Capped {
    bytes: Vec<u8>,
    cap: usize,
    full: bool,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.cap - self.bytes.len();
        if data.len() > room {
            self.bytes.extend_from_slice(&data[..room]);
            self.full = true;
            return Err(io::Error::other("body cap reached"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Decoder {
    Identity(Capped),
    Gzip(flate2::write::MultiGzDecoder<Capped>),
    Deflate(flate2::write::ZlibDecoder<Capped>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Capped>>),
}

/// Decodes a body as it arrives (see the module documentation).
pub struct BodyDecoder {
    decoder: Decoder,
    coding: &'static str,
}

impl BodyDecoder {
    /// A decoder for the `Content-Encoding` header's value, keeping `cap`
    /// bytes. Codings other than gzip, deflate and br are kept as they come.
    pub fn new(content_encoding: Option<&http::HeaderValue>, cap: usize) -> BodyDecoder {
        let sink = Capped { bytes: Vec::new(), cap, full: false };
        let coding = content_encoding.and_then(|v| v.to_str().ok()).map(|v| v.trim().to_ascii_lowercase());
        let (decoder, coding) = match coding.as_deref() {
            Some("gzip" | "x-gzip") => (Decoder::Gzip(flate2::write::MultiGzDecoder::new(sink)), "gzip"),
            Some("deflate") => (Decoder::Deflate(flate2::write::ZlibDecoder::new(sink)), "deflate"),
            Some("br") => (Decoder::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(sink, 4096))), "br"),
            _ => (Decoder::Identity(sink), "identity"),
        };
        BodyDecoder { decoder, coding }
    }

    fn sink(&self) -> &Capped {
        match &self.decoder {
            Decoder::Identity(s) => s,
            Decoder::Gzip(d) => d.get_ref(),
            Decoder::Deflate(d) => d.get_ref(),
            Decoder::Brotli(d) => d.get_ref(),
        }
    }

    /// Feeds received bytes; `Ok(true)` once the cap is reached (read no more).
    pub fn push(&mut self, data: &[u8]) -> Result<bool, FetchError> {
        let written = match &mut self.decoder {
            Decoder::Identity(s) => s.write_all(data),
            Decoder::Gzip(d) => d.write_all(data),
            Decoder::Deflate(d) => d.write_all(data),
            Decoder::Brotli(d) => d.write_all(data),
        };
        match written {
            Ok(()) => Ok(false),
            Err(_) if self.sink().full => Ok(true),
            Err(e) => Err(self.broken(&e)),
        }
    }

    fn broken(&self, e: &io::Error) -> FetchError {
        FetchError::new(ErrorClass::Body, format!("cannot decode the {} body: {e}", self.coding))
    }

    /// The body, once the last bytes are in.
    pub fn finish(self) -> Result<Decoded, FetchError> {
        if self.sink().full {
            let truncated = true;
            return Ok(Decoded { bytes: self.into_sink().bytes, truncated });
        }
        let coding = self.coding;
        let broken = |e: io::Error| FetchError::new(ErrorClass::Body, format!("cannot decode the {coding} body: {e}"));
        let sink = match self.decoder {
            Decoder::Identity(s) => s,
            Decoder::Gzip(d) => d.finish().map_err(broken)?,
            Decoder::Deflate(d) => d.finish().map_err(broken)?,
            Decoder::Brotli(d) => {
                d.into_inner().map_err(|_| broken(io::Error::other("the brotli stream is cut short")))?
            }
        };
        Ok(Decoded { truncated: sink.full, bytes: sink.bytes })
    }

    fn into_sink(self) -> Capped {
        match self.decoder {
            Decoder::Identity(s) => s,
            Decoder::Gzip(mut d) => std::mem::replace(d.get_mut(), Capped { bytes: Vec::new(), cap: 0, full: true }),
            Decoder::Deflate(mut d) => std::mem::replace(d.get_mut(), Capped { bytes: Vec::new(), cap: 0, full: true }),
            Decoder::Brotli(mut d) => std::mem::replace(d.get_mut(), Capped { bytes: Vec::new(), cap: 0, full: true }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_bomb_costs_the_cap() {
        let bomb = gzip(&vec![b'a'; 50 << 20]);
        assert!(bomb.len() < 100_000);
        let mut d = BodyDecoder::new(Some(&http::HeaderValue::from_static("gzip")), 512_000);
        let mut stopped = false;
        for chunk in bomb.chunks(16 << 10) {
            if d.push(chunk).unwrap() {
                stopped = true;
                break;
            }
        }
        assert!(stopped);
        let body = d.finish().unwrap();
        assert_eq!((body.bytes.len(), body.truncated), (512_000, true));
    }

    #[test]
    fn codings_are_undone_and_broken_ones_named() {
        let mut d = BodyDecoder::new(Some(&http::HeaderValue::from_static("gzip")), 512_000);
        assert!(!d.push(&gzip(b"User-agent: *\nDisallow: /x\n")).unwrap());
        assert_eq!(d.finish().unwrap().bytes, b"User-agent: *\nDisallow: /x\n");
        let mut d = BodyDecoder::new(Some(&http::HeaderValue::from_static("gzip")), 512_000);
        let cut = gzip(b"User-agent: *\nDisallow: /x\n");
        let _ = d.push(&cut[..cut.len() - 6]);
        assert_eq!(d.finish().unwrap_err().class, ErrorClass::Body);
        let mut d = BodyDecoder::new(None, 4);
        assert!(d.push(b"12345").unwrap());
        let body = d.finish().unwrap();
        assert_eq!((body.bytes.as_slice(), body.truncated), (&b"1234"[..], true));
    }
}
