//! The lines of a URL list before they are read as URLs.
//!
//! A URL list is text: one URL per line, LF or CRLF. Some lines cannot be a
//! URL whatever the URL parser would make of them, because they are not text
//! or not one line: a NUL byte (binary data), another control character
//! (a tab aside, which URLs may hold), a carriage return inside the line (a
//! file with CR line ends reads as one line), bytes that are not UTF-8, or a
//! line longer than [`MAX_LINE`] bytes. Such a line is still one URL: it gets
//! the verdict `invalid` with its [`LineProblem`] as the reason, is counted,
//! and the run goes on.
//!
//! Readers never hold more of a line than `MAX_LINE + 1` bytes: enough to
//! know it is too long. The filter's chunkers keep that much of an over-long
//! line and skip the rest (the filter pipeline); [`read_bounded_line`] does the
//! same for readers that take one line at a time.

use std::fmt;
use std::io::{self, BufRead};

/// The longest line read as a URL, in bytes: 64 KiB, eight times what
/// common HTTP servers accept in a request line, and 32 times the 2,048
/// characters sitemaps allow. A longer line is `invalid`, and outputs hold
/// its first `MAX_LINE` bytes.
pub const MAX_LINE: usize = 64 * 1024;

/// Why a line of a URL list is not read as a URL: the reason of its
/// `invalid` verdict. Byte positions count from 1, as editors show columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineProblem {
    /// Longer than [`MAX_LINE`] bytes.
    TooLong,
    /// A NUL byte at this position: binary data.
    Nul(usize),
    /// A carriage return at this position, not the one before the line feed.
    CarriageReturn(usize),
    /// Another C0 control character (not a tab), and its position.
    Control(u8, usize),
    /// The bytes from this position on are not UTF-8.
    NotUtf8(usize),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LineProblem::TooLong => write!(f, "line longer than {MAX_LINE} bytes (cut there in the outputs)"),
            LineProblem::Nul(at) => write!(f, "NUL byte at byte {at}: binary data, not a URL"),
            LineProblem::CarriageReturn(at) => {
                write!(f, "carriage return at byte {at}: lines end with LF or CRLF, not CR alone")
            }
            LineProblem::Control(byte, at) => write!(f, "control character {byte:#04x} at byte {at}"),
            LineProblem::NotUtf8(at) => write!(f, "not UTF-8 from byte {at} on"),
        }
    }
}

/// What makes `line` (without its line end) no URL at all, if anything; the
/// first problem when there are several, a too-long line before any other.
pub fn problem(line: &[u8]) -> Option<LineProblem> {
    if line.len() > MAX_LINE {
        return Some(LineProblem::TooLong);
    }
    if let Some(at) = line.iter().position(|&b| b < 0x20 && b != b'\t') {
        return Some(match line[at] {
            0 => LineProblem::Nul(at + 1),
            b'\r' => LineProblem::CarriageReturn(at + 1),
            byte => LineProblem::Control(byte, at + 1),
        });
    }
    match std::str::from_utf8(line) {
        Ok(_) => None,
        Err(e) => Some(LineProblem::NotUtf8(e.valid_up_to() + 1)),
    }
}

/// What of a line the outputs hold: all of it, or its first [`MAX_LINE`]
/// bytes when it is longer.
pub fn shown(line: &[u8]) -> &[u8] {
    &line[..line.len().min(MAX_LINE)]
}

/// Reads the next line of `input` into `line` (cleared first), without its
/// LF or CRLF, keeping at most `keep` of its bytes: the rest of a longer line
/// is read and dropped, so memory stays bounded whatever the input. Returns
/// the length of the whole line (without its line end), or `None` at the end
/// of the input. URL lists keep `MAX_LINE + 1` bytes: enough to tell a line
/// that is too long.
pub fn read_bounded_line(input: &mut impl BufRead, line: &mut Vec<u8>, keep: usize) -> io::Result<Option<usize>> {
    line.clear();
    let mut read_any = false;
    // The length of the line without its LF, of which `line` holds the start.
    let mut length = 0;
    // The last byte of the line before its LF.
    let mut last = None;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (taken, ended) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let content = &available[..taken - usize::from(ended)];
        length += content.len();
        last = content.last().copied().or(last);
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&content[..content.len().min(room)]);
        input.consume(taken);
        if ended {
            break;
        }
    }
    if last == Some(b'\r') {
        // A CRLF line end: the CR is no part of the line.
        length -= 1;
        line.truncate(length);
    }
    Ok(read_any.then_some(length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines_have_no_problem() {
        for line in ["http://example.com/", "https://例え.jp/パス", "http://a.com/x\ty", ""] {
            assert_eq!(problem(line.as_bytes()), None, "{line:?}");
        }
    }

    #[test]
    fn each_problem_is_named_with_its_position() {
        assert_eq!(problem(b"http://a.com/\0"), Some(LineProblem::Nul(14)));
        assert_eq!(problem(b"http://a.com/\rhttp://b.com/"), Some(LineProblem::CarriageReturn(14)));
        assert_eq!(problem(b"\x1b[31mhttp://a.com/"), Some(LineProblem::Control(0x1b, 1)));
        assert_eq!(problem(b"http://a.com/\xff"), Some(LineProblem::NotUtf8(14)));
        assert_eq!(problem(&[b'a'; MAX_LINE]), None);
        assert_eq!(problem(&[b'a'; MAX_LINE + 1]), Some(LineProblem::TooLong));
        assert_eq!(LineProblem::Control(0x1b, 1).to_string(), "control character 0x1b at byte 1");
    }

    #[test]
    fn bounded_lines_keep_at_most_one_byte_past_the_limit() {
        let mut input = Vec::new();
        input.extend_from_slice(b"short\r\n");
        input.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE));
        input.extend_from_slice(b"\r\n\n");
        input.extend(std::iter::repeat_n(b'y', MAX_LINE));
        input.extend_from_slice(b"\r\nlast");
        // A small buffer, so that lines span many refills.
        let mut reader = io::BufReader::with_capacity(1000, &input[..]);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        let mut lengths = Vec::new();
        while let Some(length) = read_bounded_line(&mut reader, &mut line, MAX_LINE + 1).unwrap() {
            lines.push(line.clone());
            lengths.push(length);
        }
        assert_eq!(lengths, [5, 3 * MAX_LINE, 0, MAX_LINE, 4]);
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], b"short");
        assert_eq!(lines[1], vec![b'x'; MAX_LINE + 1]);
        assert_eq!(lines[2], b"");
        // As long as allowed, then CRLF: the CR is the line end, not the line.
        assert_eq!(lines[3], vec![b'y'; MAX_LINE]);
        assert_eq!(lines[4], b"last");
    }
}
