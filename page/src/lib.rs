//! robotsieve-page: page-level rules, robots `<meta>` tags and `X-Robots-Tag` headers.
//!
//! robots.txt says what a crawler may fetch; once a page is fetched, its
//! robots meta tags and `X-Robots-Tag` response headers say whether it may be
//! indexed, its links followed, a snippet or a cached copy shown. This crate
//! reads both and combines them for one crawler:
//!
//! - [`parse_directives`] and [`parse_x_robots_tag`]: one directive parser for
//!   meta `content` values and header values (comma-separated lists, names
//!   without case, `name: value` for the valued directives; a header may carry
//!   `agent:` prefixes).
//! - [`scan_head`]: the robots-relevant `<meta name=... content=...>` tags of
//!   a document's head, with line numbers, read with a real HTML tokenizer.
//! - [`PageRules::combine`] / [`PageRules::evaluate`]: the rules for an
//!   [`Agent`](robotsieve_robotstxt::Agent), with the tag or header that decided each one.
//!
//! # Combination
//!
//! The generic `robots` tags and unprefixed headers apply to every crawler;
//! tags named after one of the crawler's tokens (`<meta name="googlebot">`) and
//! headers prefixed with one (`X-Robots-Tag: googlebot: noindex`) apply to it
//! too. All that apply are combined and, where they conflict, the more
//! restrictive wins: `noindex` beats `index` whatever the order, the smallest
//! `max-snippet` and `max-video-preview` win (`-1`, no limit, is the largest),
//! the smallest `max-image-preview` wins, the earliest `unavailable_after` wins.
//! Directives are separated by commas, as Google requires ("you must place a
//! comma between them, but it doesn't matter if you also include spaces"):
//! `noindex nofollow` is one unknown directive, reported.
//! `all` means `index, follow` and `none` means `noindex, nofollow`; defaults
//! are index, follow, everything allowed and no limits. `nocache` is read as
//! `noarchive`, and `max-snippet:0` as `nosnippet` (Google documents both
//! equivalences). Unknown directives and malformed values are reported in
//! [`Statement::directives`] as [`Directive::Unknown`] / [`Directive::Invalid`]
//! and otherwise ignored.
//!
//! # Where the head ends
//!
//! Only tags the HTML parser would put into the document's `<head>` count:
//! the scan follows the tree-construction rules of the WHATWG HTML standard
//! for the "before head", "in head" and "after head" insertion modes. The head
//! ends at `<body>` or `<frameset>`, at any start tag that cannot be in a head
//! (`<div>`, `<p>`, `<img>`, ...), at `</body>`, `</html>` or `</br>`, and at
//! text other than white space. A document with no `<head>` tag has an implied
//! one, so `<meta>` tags before the first body content still count. A `<meta>`
//! between `</head>` and the body (`</head><meta ...><body>`) counts, because a
//! browser moves it into the head. A `<meta>` in the body is **not** read:
//! scanning stops where the head ends, as the crawler operator asked, and a
//! robots tag in the body is invalid HTML that Google documents as belonging
//! in the head. Tags inside `<template>`, and text that only looks like markup
//! inside `<script>`, `<style>`, `<noscript>` (read as a browser with scripting
//! enabled reads it) and `<title>`, do not count either.
//!
//! Pages are bytes. A leading UTF-8 byte order mark is skipped; a page with a
//! UTF-16 byte order mark is transcoded first (lossily). Nothing fails: the
//! worst a malformed page gets is the defaults.

//!
//! # Example
//!
//! ```
//! use robotsieve_page::{parse_directives, Directive};
//!
//! let directives = parse_directives("noindex, NoFollow");
//! assert_eq!(directives, [Directive::NoIndex, Directive::NoFollow]);
//! ```
#![warn(missing_docs)]

mod dates;
mod directives;
mod head;
mod rules;

pub use dates::parse_date;
pub use directives::{parse_directives, parse_x_robots_tag, Directive, ImagePreview};
pub use head::{scan_head, HeadScan, MetaTag};
pub use rules::{Field, Origin, PageRules, Statement};
