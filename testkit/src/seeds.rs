//! Seed inputs for the fuzz targets, in their input layouts (see
//! [`crate::fuzz_checks`]): made from the files of `shared/` (real robots.txt
//! files, the conformance cases, the URL lists) and generated here (WARC
//! files, pages, artifact mutations). The `fuzz_seeds` example writes them
//! into folders for `cargo fuzz run`; the replay tests feed them to the
//! checks directly. Nothing here is committed: the seeds are remade from
//! `shared/` wherever they are needed.

use crate::conformance::{read_origin_cases, read_verdict_cases};
use crate::fuzz_checks::{artifact_flags, base_artifacts, robots_flags, RobotsInput, SEPARATOR};
use robotsieve_core::url::path_params_query;
use robotsieve_engine::testing::GROUPS_START;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One seed: a name (unique within its target) and the bytes.
pub type Seed = (String, Vec<u8>);

/// The real robots.txt files of `shared/realworld/robots`, sorted by name.
pub fn realworld_robots_files(shared: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(shared.join("realworld/robots")) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// The flag byte seed number `n` gets: every combination of the `robots`
/// flags in turn (explain, budget, agent, through the artifact, lint).
pub fn robots_seed_flags(n: usize) -> u8 {
    (n % 64) as u8
}

/// `robots` seeds: every `every`-th real robots.txt file (whole, as the
/// body, flags by [`robots_seed_flags`]), and every conformance verdict case
/// (body, agent tokens and the case's path).
pub fn robots(shared: &Path, every: usize) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for (n, file) in realworld_robots_files(shared).iter().enumerate().step_by(every.max(1)) {
        let Ok(body) = std::fs::read(file) else { continue };
        let input = RobotsInput { flags: robots_seed_flags(n), body: &body, agent: None, paths: Vec::new() };
        let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
        seeds.push((name, input.encode()));
    }
    for name in ["robots.jsonl", "google-spec-test.jsonl"] {
        let Ok(cases) = read_verdict_cases(&shared.join("conformance").join(name)) else { continue };
        for (n, case) in cases.iter().enumerate() {
            let agent = case.agents.join(",");
            let path = path_params_query(case.url.as_bytes());
            let input = RobotsInput {
                flags: robots_seed_flags(n) | robots_flags::THROUGH_ARTIFACT,
                body: &case.body,
                agent: Some(agent.as_bytes()),
                paths: vec![&path],
            };
            seeds.push((format!("{name}-{}", case.id), input.encode()));
        }
    }
    seeds
}

/// `artifact` seeds: each base artifact untouched, with its checksum kept
/// and rewritten, truncated at a few places, with a field or two of the
/// header and section table changed, and with a group byte flipped.
pub fn artifact() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for base in 0..base_artifacts().len() as u8 {
        let len = base_artifacts()[usize::from(base)].len();
        seeds.push((format!("base{base}"), vec![base]));
        seeds.push((format!("base{base}-kept"), vec![base | artifact_flags::KEEP_CHECKSUM]));
        for cut in [len / 2, len - 1, 47, 100] {
            let [lo, hi] = (cut as u16).to_le_bytes();
            seeds.push((format!("base{base}-cut{cut}"), vec![base | artifact_flags::FIX_LENGTH, 2, lo, hi, 0]));
        }
        // The section count, the first section's kind and offset, a byte in the tables.
        for (at, op, value) in [(40u16, 5u8, 3u8), (48, 5, 77), (56, 6, 8), ((len / 2) as u16, 0, 0x40)] {
            let [lo, hi] = at.to_le_bytes();
            seeds.push((format!("base{base}-set{at}"), vec![base, op, lo, hi, value]));
        }
        // A byte inside the group blobs flipped with the checksums kept: it
        // opens (groups are checked on first use), and must answer as the
        // base or with an error.
        let [lo, hi] = (GROUPS_START as u16 + 64).to_le_bytes();
        seeds
            .push((format!("base{base}-kept-group-flip"), vec![base | artifact_flags::KEEP_CHECKSUM, 0, lo, hi, 0x40]));
    }
    seeds
}

/// `artifact_file` seeds: the base artifacts themselves.
pub fn artifact_file() -> Vec<Seed> {
    base_artifacts().iter().enumerate().map(|(n, a)| (format!("base{n}.rsv"), a.clone())).collect()
}

/// A WARC record of `kind` for `uri` with `block`, as crawlers write them.
pub fn warc_record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut record = Vec::new();
    write!(
        record,
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-05-01T12:00:00Z\r\n\
         Content-Type: application/http; msgtype={kind}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .expect("writing to memory");
    record.extend_from_slice(block);
    record.extend_from_slice(b"\r\n\r\n");
    record
}

/// An HTTP response message with `status`, extra `headers` (`Name: value`
/// lines) and `body`.
pub fn http_message(status: u16, headers: &[&str], body: &[u8]) -> Vec<u8> {
    let mut message = format!("HTTP/1.1 {status} X\r\n").into_bytes();
    for header in headers {
        message.extend_from_slice(header.as_bytes());
        message.extend_from_slice(b"\r\n");
    }
    message.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    message.extend_from_slice(body);
    message
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in body.chunks(100) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// `warc` seeds: small WARC files of robots.txt fetches (bodies from a few
/// real files when `shared` is there): plain, chunked, gzip-encoded,
/// redirects and errors, request and metadata records, the whole file
/// gzip-compressed, and cut short.
pub fn warc(shared: Option<&Path>) -> Vec<Seed> {
    let mut bodies: Vec<Vec<u8>> = vec![b"User-agent: *\nDisallow: /private\n".to_vec()];
    if let Some(shared) = shared {
        let files = realworld_robots_files(shared);
        for file in files.iter().step_by(files.len().div_ceil(4).max(1)) {
            if let Ok(body) = std::fs::read(file) {
                bodies.push(body[..body.len().min(4000)].to_vec());
            }
        }
    }
    let mut seeds = Vec::new();
    for (n, body) in bodies.iter().enumerate() {
        let uri = format!("https://site{n}.example/robots.txt");
        let plain = warc_record("response", &uri, &http_message(200, &["Content-Type: text/plain"], body));
        let encoded = warc_record(
            "response",
            &format!("http://site{n}.example/robots.txt"),
            &http_message(200, &["Content-Encoding: gzip", "Transfer-Encoding: chunked"], &chunked(&gzip(body))),
        );
        let redirect = warc_record(
            "response",
            &format!("http://www.site{n}.example/robots.txt"),
            &http_message(301, &[&format!("Location: {uri}")], b""),
        );
        let request = warc_record("request", &uri, b"GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n");
        let failed = warc_record("response", "http://down.example/robots.txt", &http_message(503, &[], b"busy"));
        let file = [request, plain, encoded, redirect, failed].concat();
        seeds.push((format!("fetches{n}.warc"), file.clone()));
        seeds.push((format!("fetches{n}.warc.gz"), gzip(&file)));
        seeds.push((format!("fetches{n}-cut.warc"), file[..file.len() * 2 / 3].to_vec()));
    }
    seeds
}

/// `page` seeds: heads with robots meta tags for several crawlers, character
/// references, the elements that end a head, a UTF-16 page, and
/// `X-Robots-Tag` values before [`SEPARATOR`].
pub fn page() -> Vec<Seed> {
    let heads = [
        r#"<meta name="robots" content="noindex, nofollow">"#,
        r#"<meta name=googlebot content="max-snippet:20, max-image-preview:large, unavailable_after: 2031-05-01">"#,
        r#"<meta name = " Robots " content = "no&#105;ndex&comma;noarchive" ><meta name="mybot" content="none">"#,
        r#"<title>x</title><script>document.write('<meta name=robots content=noindex>')</script><meta name=robots content=nosnippet>"#,
        r#"<noscript><meta name=robots content=noindex></noscript><template><meta name=robots content=nofollow></template>"#,
        r#"<!-- <meta name=robots content=noindex> --><link rel=x><meta name="robots" name="description" content="noindex" content="index">"#,
        "<meta name=robots content=\"max-video-preview:-1, notranslate, indexifembedded, noimageindex\">",
    ];
    let mut seeds = Vec::new();
    for (n, head) in heads.iter().enumerate() {
        let html = format!("<!doctype html>\n<html><head>\n{head}\n</head><body><meta name=robots content=noindex>text</body></html>\n");
        seeds.push((format!("page{n}.html"), html.clone().into_bytes()));
        let headers =
            "noarchive\ngooglebot: nofollow, unavailable_after: 25 Jun 2030 15:00:00 PST\nmybot: max-snippet:-1";
        seeds.push((format!("page{n}-headers"), [headers.as_bytes(), SEPARATOR, html.as_bytes()].concat()));
        if n == 0 {
            let utf16: Vec<u8> =
                [0xFF, 0xFE].into_iter().chain(html.encode_utf16().flat_map(u16::to_le_bytes)).collect();
            seeds.push(("page0-utf16.html".into(), utf16));
            seeds.push((
                "page0-response".into(),
                http_message(200, &["X-Robots-Tag: googlebot: noindex", "Content-Type: text/html"], html.as_bytes()),
            ));
        }
    }
    seeds
}

/// URL seeds (one URL each) for the `url` target: every `every`-th line of
/// the URL lists of `shared/realworld/urls` and the URLs of the conformance
/// origin cases.
pub fn url(shared: &Path, every: usize) -> Vec<Seed> {
    let mut urls = Vec::new();
    if let Ok(text) = std::fs::read_to_string(shared.join("realworld/urls/kasztp-urls.txt")) {
        urls.extend(text.lines().map(|l| l.trim_start_matches('\u{feff}').to_string()));
    }
    if let Ok(text) = std::fs::read_to_string(shared.join("realworld/urls/crawl2019-linkgraph.tsv")) {
        urls.extend(text.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).map(str::to_string));
    }
    let mut seeds: Vec<Seed> = urls
        .iter()
        .step_by(every.max(1))
        .enumerate()
        .map(|(n, u)| (format!("list{n}"), u.clone().into_bytes()))
        .collect();
    if let Ok(cases) = read_origin_cases(&shared.join("conformance/origins.jsonl")) {
        for (n, case) in cases.into_iter().enumerate() {
            seeds.push((format!("origins{n}-url"), case.url.into_bytes()));
            seeds.push((format!("origins{n}-robots"), case.robots_url.into_bytes()));
        }
    }
    seeds
}

/// Writes `seeds` into `dir` (created), one file each; returns how many.
pub fn write(dir: &Path, seeds: &[Seed]) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    for (name, bytes) in seeds {
        let name: String =
            name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') { c } else { '_' }).collect();
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(seeds.len())
}
