//! Taking URLs apart: the path-and-query that rules match against.

use std::borrow::Cow;

/// The path, parameters and query of `url`, as Google's library extracts them.
///
/// Accepts whatever the reference library accepts: absolute URLs, `//host/path`,
/// `host/path`, a bare path, or the empty string. The fragment is dropped; the
/// result always starts with `/` (a `?` or `;` first gets one prepended); a URL
/// without a path gives `/`.
pub fn path_params_query(url: &[u8]) -> Cow<'_, [u8]> {
    // Two leading slashes introduce an authority without a scheme.
    let search_start = if url.starts_with(b"//") { 2 } else { 0 };
    let tail = &url[search_start..];
    let early_path = tail.iter().position(|b| matches!(b, b'/' | b'?' | b';'));
    let protocol_end = match find_subslice(tail, b"://") {
        Some(p) if early_path.is_none_or(|e| p < e) => search_start + p + 3,
        _ => search_start,
    };
    let Some(path_start) = url[protocol_end..].iter().position(|b| matches!(b, b'/' | b'?' | b';')) else {
        return Cow::Borrowed(b"/");
    };
    let path_start = protocol_end + path_start;
    let hash = url[search_start..].iter().position(|&b| b == b'#').map(|h| h + search_start);
    if hash.is_some_and(|h| h < path_start) {
        return Cow::Borrowed(b"/");
    }
    let path_end = hash.unwrap_or(url.len());
    let path = &url[path_start..path_end];
    if path[0] == b'/' {
        Cow::Borrowed(path)
    } else {
        let mut owned = Vec::with_capacity(path.len() + 1);
        owned.push(b'/');
        owned.extend_from_slice(path);
        Cow::Owned(owned)
    }
}

/// How a URL's path is prepared before rules match it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PathMode {
    /// Escape the path as patterns are escaped (bytes >= 0x80 to `%XX`,
    /// upper-case hex in escapes): what a crawler sends on the wire. The
    /// default, and robotsieve's one deliberate extension of Google's library,
    /// which expects URLs already escaped.
    #[default]
    Escaped,
    /// Match the path byte for byte, as Google's library does (`--raw-urls`).
    Raw,
}

impl PathMode {
    /// Prepares a path-and-query for matching.
    pub fn prepare(self, path: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
        match (self, path) {
            (PathMode::Raw, path) => path,
            (PathMode::Escaped, Cow::Borrowed(p)) => crate::pattern::escape(p),
            (PathMode::Escaped, Cow::Owned(p)) => Cow::Owned(crate::pattern::escape(&p).into_owned()),
        }
    }

    /// The path-and-query of any URL Google's library accepts, ready to match.
    pub fn path_of(self, url: &[u8]) -> Cow<'_, [u8]> {
        self.prepare(path_params_query(url))
    }
}

fn find_subslice(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(url: &str) -> String {
        String::from_utf8(path_params_query(url.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn google_path_extraction() {
        // The cases of the reference library's own test.
        assert_eq!(p(""), "/");
        assert_eq!(p("http://www.example.com"), "/");
        assert_eq!(p("http://www.example.com/"), "/");
        assert_eq!(p("http://www.example.com/a"), "/a");
        assert_eq!(p("http://www.example.com/a/"), "/a/");
        assert_eq!(p("http://www.example.com/a/b?c=http://d.e/"), "/a/b?c=http://d.e/");
        assert_eq!(p("http://www.example.com/a/b?c=d&e=f#fragment"), "/a/b?c=d&e=f");
        assert_eq!(p("example.com"), "/");
        assert_eq!(p("example.com/"), "/");
        assert_eq!(p("example.com/a"), "/a");
        assert_eq!(p("example.com/a/"), "/a/");
        assert_eq!(p("example.com/a/b?c=d&e=f#fragment"), "/a/b?c=d&e=f");
        assert_eq!(p("a"), "/");
        assert_eq!(p("a/"), "/");
        assert_eq!(p("/a"), "/a");
        assert_eq!(p("a/b"), "/b");
        assert_eq!(p("example.com?a"), "/?a");
        assert_eq!(p("example.com/a;b#c"), "/a;b");
        assert_eq!(p("//a/b/c"), "/b/c");
    }

    #[test]
    fn fragment_before_path_gives_root() {
        assert_eq!(p("http://example.com#x/y"), "/");
        assert_eq!(p("http://example.com/x#/y"), "/x");
    }

    #[test]
    fn params_start_the_path() {
        assert_eq!(p("http://example.com;jsessionid=1"), "/;jsessionid=1");
    }
}
