//! The grouped path's run detection (`AgentClassifier::verdicts`): runs of
//! one origin are found by comparing each URL's origin key with the one
//! before's (as one 32-byte block where the CPU has AVX2 and both keys lie
//! in their URLs), and only each run's first URL is hashed. Checked here
//! against the one-URL-at-a-time answers on lists that mix runs of every
//! key form: keys that are the URL's first bytes, keys built into the buffer
//! (upper case, default ports, user info), keys longer than 32 bytes, URLs
//! shorter than 32 bytes, trimmed URLs, and invalid ones, in runs of 1 to 6
//! (so that windows are taken in input order or sorted by hash).

use proptest::prelude::*;
use robotsieve_core::url::PathMode;
use robotsieve_core::Verdict;
use robotsieve_engine::Artifact;
use robotsieve_engine::ShardSet;
use robotsieve_engine::{AgentClassifier, Scratch};
use robotsieve_testkit::fuzz_checks::base_artifacts;

/// Origins as written in URLs: those of the base artifacts in several
/// forms, unknown ones (some with keys as long as known ones', which only
/// their bytes tell apart), long ones and invalid ones.
const ORIGINS: [&str; 20] = [
    "http://example.com",
    "HTTP://EXAMPLE.COM",
    "http://Example.com:80",
    "http://user@example.com",
    " http://example.com",
    "https://example.com",
    "https://example.com:443",
    "http://shop.example.org:8080",
    "http://SHOP.example.org:8080",
    "https://gone.example.net",
    "https://gone.example.org",
    "https://down.example.net",
    "http://down.example.net",
    "http://a.b",
    "https://a-rather-long-host-name-for-a-key.example.com",
    "https://a-rather-long-host-name-for-a-key.example.org",
    "https://a-rather-long-host-name-for-a-key.example.org:8443",
    "http://exampl.com",
    "not a url",
    "http://[::1]",
];

/// Paths after the origin: none, short, long, escaped, odd.
const PATHS: [&str; 8] =
    ["", "/", "/private", "/private/ok", "/x.php", "/section-3/9", "/%7Euser/a%C3%A9?q=1#f", "/a/../b/./c?x"];

fn urls_of(runs: &[(usize, usize, usize)]) -> Vec<Vec<u8>> {
    let mut urls = Vec::new();
    for &(origin, path, repeat) in runs {
        for i in 0..repeat {
            let mut url = ORIGINS[origin].as_bytes().to_vec();
            url.extend_from_slice(PATHS[(path + i) % PATHS.len()].as_bytes());
            urls.push(url);
        }
    }
    urls
}

/// Every URL's batched verdict, grouped or not, is its single answer's.
fn check(urls: &[Vec<u8>]) {
    let lines: Vec<&[u8]> = urls.iter().map(Vec::as_slice).collect();
    for bytes in base_artifacts() {
        let set = ShardSet::single(Artifact::from_bytes(bytes).expect("the base artifact"));
        for agent in 0..2 {
            for mode in [PathMode::Escaped, PathMode::Raw] {
                let classifier = AgentClassifier::new(&set, agent, mode);
                let mut scratch = Scratch::default();
                let mut batched = vec![Verdict::Invalid; lines.len()];
                classifier.verdicts(&lines, &mut scratch, &mut batched).expect("our own artifact answers");
                let mut grouped = vec![Verdict::Invalid; lines.len()];
                classifier.grouped_verdicts(&lines, &mut scratch, &mut grouped).expect("our own artifact answers");
                for (i, url) in lines.iter().enumerate() {
                    let single = classifier.answer(url, &mut scratch, false).expect("our own artifact answers");
                    let shown = String::from_utf8_lossy(url);
                    assert_eq!(batched[i], single.verdict, "{shown} (URL {i}, agent {agent}, {mode:?}): batched");
                    assert_eq!(grouped[i], single.verdict, "{shown} (URL {i}, agent {agent}, {mode:?}): grouped");
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn runs_of_every_key_form_get_the_single_answers(
        runs in proptest::collection::vec((0..ORIGINS.len(), 0..PATHS.len(), 1usize..7), 0..60),
    ) {
        check(&urls_of(&runs));
    }
}

/// Several windows (of 2,048 URLs), some in long runs (taken in input
/// order), some in runs of one (sorted by hash), a run across a window's end.
#[test]
fn windows_in_input_order_and_sorted_get_the_single_answers() {
    let mut runs = Vec::new();
    for i in 0..700 {
        runs.push((i % ORIGINS.len(), i % PATHS.len(), if i < 500 { 9 } else { 1 }));
    }
    let urls = urls_of(&runs);
    assert!(urls.len() > 2 * 2048, "{} URLs", urls.len());
    check(&urls);
}
