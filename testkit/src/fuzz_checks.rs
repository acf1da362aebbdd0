//! What the fuzz targets of `fuzz/` check, one function per target: each
//! takes the fuzzer's bytes and panics on a finding. The targets are one-line
//! calls into these, and `tests/fuzz_replay.rs` runs the same functions on
//! the committed crashes and corpora and on the seeds from `shared/`, so a
//! finding stays found without any fuzzing time, and an API change breaks
//! the normal build rather than a fuzz build nobody runs.
//!
//! The input layouts (the `encode` functions here make seeds in them):
//!
//! - [`robots`]: a flag byte, then the robots.txt body; optionally
//!   [`SEPARATOR`] and an agent specification, then `SEPARATOR` and a path,
//!   any number of times (see [`RobotsInput`]).
//! - [`artifact`]: a flag byte choosing one of a few small valid artifacts,
//!   then mutations of four bytes each (see [`artifact`]).
//! - [`artifact_file`], [`warc()`], [`page`], [`url()`]: the whole input is the file.

use robotsieve_compiler::automaton::{compile, Budget, BuildOptions};
use robotsieve_compiler::build::{build_bytes, BuildPlan};
use robotsieve_core::url::{KeyBuf, OriginKey, PathMode};
use robotsieve_core::Verdict;
use robotsieve_engine::testing::reseal;
use robotsieve_engine::Artifact;
use robotsieve_engine::ShardSet;
use robotsieve_engine::{AgentClassifier, Scratch};
use robotsieve_lint::{lint, Options};
use robotsieve_page::{parse_date, parse_directives, parse_x_robots_tag, scan_head, Field, PageRules};
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_sources::corpus::{Corpus, FetchRecord, Place, SourceRef};
use robotsieve_sources::http::{HttpError, HttpResponse};
use robotsieve_sources::warc;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use crate::differential::{disagreements, paths_for_group, Rng, TINY};
use crate::url_oracle;

/// Separates the parts of a structured fuzz input (`robots`: body, agent,
/// paths; `page`: headers, page). Two NULs: rare in real files, so that a
/// real file used as a seed stays one part.
pub const SEPARATOR: &[u8] = b"\0\0";

/// Splits `data` at every [`SEPARATOR`].
fn split_parts(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        parts.push(&rest[..at]);
        rest = &rest[at + SEPARATOR.len()..];
    }
    parts.push(rest);
    parts
}

/// At most the first 2,000 bytes of `bytes`, for a panic message that shows
/// the input without flooding the log.
fn shown(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(&bytes[..bytes.len().min(2000)])
}

// ---------------------------------------------------------------- robots

/// The crawlers the `robots` check picks from when its input names none.
pub const AGENTS: [&str; 4] = ["googlebot", "mybot", "googlebot-image,googlebot", "otherbot"];

/// How the `robots` check builds and what it runs: the bits of the flag byte.
pub mod robots_flags {
    /// Compile in explain mode (ranks identify rules; the deciding rule must be the oracle's).
    pub const EXPLAIN: u8 = 1;
    /// Compile with [`crate::differential::TINY`], so that groups split into parts and the per-rule fallback.
    pub const TINY_BUDGET: u8 = 2;
    /// Bits 2 and 3: which of [`super::AGENTS`] when the input names no agent.
    pub const AGENT_SHIFT: u8 = 2;
    /// Also build an artifact of the body for `http://example.com` and ask it
    /// about every path as a URL, in both URL modes (writer, reader, classifier).
    pub const THROUGH_ARTIFACT: u8 = 16;
    /// Also lint the file (the linter reads every line and computes rule
    /// effects), when the body is at most [`super::LINT_MAX_BODY`] bytes.
    pub const LINT: u8 = 32;
}

/// The largest body the `robots` check lints. The linter's rule effects
/// rebuild the group once per line: a 1.8 KB real file of star rules
/// (squareup.com) takes about a second in the fuzz build, which would cut
/// the target's throughput by a factor of ten; small bodies still reach
/// every branch of the line reader.
pub const LINT_MAX_BODY: usize = 512;

/// A `robots` fuzz input, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotsInput<'a> {
    /// See [`robots_flags`].
    pub flags: u8,
    /// The robots.txt body.
    pub body: &'a [u8],
    /// An agent specification (`TOKEN[,TOKEN...]`); `None`: one of [`AGENTS`] by the flags.
    pub agent: Option<&'a [u8]>,
    /// Paths to decide, besides those made from the group's own rules.
    pub paths: Vec<&'a [u8]>,
}

impl<'a> RobotsInput<'a> {
    /// Reads the layout of the module documentation; any bytes are an input.
    pub fn decode(data: &'a [u8]) -> RobotsInput<'a> {
        let Some((&flags, rest)) = data.split_first() else {
            return RobotsInput { flags: 0, body: b"", agent: None, paths: Vec::new() };
        };
        let mut parts = split_parts(rest).into_iter();
        let body = parts.next().unwrap_or_default();
        let agent = parts.next();
        RobotsInput { flags, body, agent, paths: parts.collect() }
    }

    /// The fuzz input that decodes to `self` (when the body and agent hold no [`SEPARATOR`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.flags];
        out.extend_from_slice(self.body);
        if self.agent.is_some() || !self.paths.is_empty() {
            out.extend_from_slice(SEPARATOR);
            out.extend_from_slice(self.agent.unwrap_or(AGENTS[0].as_bytes()));
        }
        for path in &self.paths {
            out.extend_from_slice(SEPARATOR);
            out.extend_from_slice(path);
        }
        out
    }

    /// The crawler: the input's agent as `--agent` reads it, else as Google's
    /// library takes any string; [`AGENTS`] by the flags when there is none.
    pub fn agent(&self) -> Agent {
        match self.agent {
            Some(spec) => {
                let spec = String::from_utf8_lossy(spec);
                Agent::parse(&spec).unwrap_or_else(|_| Agent::from_raw_tokens(&[spec.as_ref()]))
            }
            None => {
                let pick = AGENTS[usize::from(self.flags >> robots_flags::AGENT_SHIFT) & 3];
                Agent::parse(pick).expect("the built-in agents are valid")
            }
        }
    }

    /// The automaton options the flags ask for.
    pub fn options(&self) -> BuildOptions {
        BuildOptions {
            explain: self.flags & robots_flags::EXPLAIN != 0,
            budget: if self.flags & robots_flags::TINY_BUDGET != 0 { TINY } else { Budget::default() },
        }
    }
}

/// The `robots` target: parsing, linting and group selection never panic,
/// and the compiled automaton decides every path as the per-rule oracle
/// does, on the input's own paths and on paths made from the group's rules,
/// each both raw and escaped (the two URL modes); optionally through a whole
/// artifact as a URL (see [`robots_flags::THROUGH_ARTIFACT`]).
pub fn robots(data: &[u8]) {
    check_robots(&RobotsInput::decode(data));
}

/// [`robots`] on a decoded input (the replay of real files uses it directly).
pub fn check_robots(input: &RobotsInput<'_>) {
    let robots = RobotsTxt::parse(input.body);
    let agent = input.agent();
    let group = Group::select(&robots, &agent);
    if input.flags & robots_flags::LINT != 0 && input.body.len() <= LINT_MAX_BODY {
        let everything = RobotsTxt::parse_all(input.body);
        lint(&everything, &Options { agent: Some(agent.clone()) });
        lint(&everything, &Options { agent: None });
    }
    let seed = input.body.iter().fold(input.body.len() as u64, |h, &b| h.rotate_left(5) ^ u64::from(b)) | 1;
    let mut paths = paths_for_group(&group, group.rules.len().min(24), &mut Rng(seed));
    paths.extend(input.paths.iter().map(|p| p.to_vec()));
    let raw_urls = paths.clone();
    // The path the default URL mode matches (as `check --robots` reads a bare
    // path), and a raw non-ASCII byte as an unescaped URL carries it.
    for path in &raw_urls {
        let escaped = PathMode::Escaped.path_of(path);
        if escaped.as_ref() != path.as_slice() {
            paths.push(escaped.into_owned());
        }
        let mut raw = path.clone();
        raw.push(0xE9);
        paths.push(raw);
    }
    let options = input.options();
    let compiled = compile(&group, &options);
    let bad = disagreements(&group, &compiled, options.explain, &paths);
    assert!(
        bad.is_empty(),
        "{} of {} paths disagree ({options:?}, agent {agent}):\n{}\nbody:\n{}",
        bad.len(),
        paths.len(),
        bad[..bad.len().min(10)].join("\n"),
        shown(input.body)
    );
    if input.flags & robots_flags::THROUGH_ARTIFACT != 0 {
        through_artifact(input.body, &agent, &group, options, &raw_urls);
    }
}

/// A fetch record of `body` as `origin`'s robots.txt with `status`.
fn fetched(origin: &str, status: u16, body: &[u8]) -> FetchRecord {
    let source = SourceRef { file: Arc::from("fuzz"), place: Place::File };
    FetchRecord::new(format!("{origin}/robots.txt"), status, body.into(), source)
}

/// The bytes of an artifact built from `records` for `agents` with `options`.
fn artifact_bytes(records: Vec<FetchRecord>, agents: &[Agent], options: BuildOptions) -> Vec<u8> {
    let mut corpus = Corpus::new();
    for record in records {
        corpus.push(record);
    }
    let plan = BuildPlan::new(agents.to_vec(), options);
    build_bytes(corpus.resolve().origins.into_values(), &plan).expect("a small artifact is written").0
}

/// Builds an artifact of `body` for `http://example.com` and checks that
/// each path, asked as a URL of that origin in both URL modes, gets the
/// oracle's verdict on the path the URL parser extracts, singly and batched.
fn through_artifact(body: &[u8], agent: &Agent, group: &Group, options: BuildOptions, paths: &[Vec<u8>]) {
    let bytes = artifact_bytes(vec![fetched("http://example.com", 200, body)], std::slice::from_ref(agent), options);
    let artifact = Artifact::from_bytes(&bytes).unwrap_or_else(|e| panic!("our own artifact is refused: {e}"));
    let artifact = ShardSet::single(artifact);
    let urls: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| {
            let mut url = b"http://example.com".to_vec();
            if !p.starts_with(b"/") {
                url.push(b'/');
            }
            url.extend_from_slice(p);
            url
        })
        .collect();
    let lines: Vec<&[u8]> = urls.iter().map(Vec::as_slice).collect();
    let mut key = KeyBuf::new();
    for mode in [PathMode::Escaped, PathMode::Raw] {
        let classifier = AgentClassifier::new(&artifact, 0, mode);
        let mut scratch = Scratch::default();
        let mut batched = vec![Verdict::Invalid; lines.len()];
        classifier.verdicts(&lines, &mut scratch, &mut batched).expect("our own artifact answers");
        // The grouped path trusts no order: the same verdicts, grouped or not.
        let mut grouped = vec![Verdict::Invalid; lines.len()];
        classifier.grouped_verdicts(&lines, &mut scratch, &mut grouped).expect("our own artifact answers");
        assert_eq!(grouped, batched, "grouped and batched verdicts differ ({mode:?})");
        for (url, batched) in lines.iter().zip(batched) {
            let got = classifier.answer(url, &mut scratch, true).expect("our own artifact answers").verdict;
            assert_eq!(got, batched, "{}: single and batched verdicts differ ({mode:?})", shown(url));
            let want = match key.parse(url) {
                Err(_) => Verdict::Invalid,
                Ok(origin) if group.decide(&origin.path_for(mode)).allowed() => Verdict::Allowed,
                Ok(_) => Verdict::Disallowed,
            };
            assert_eq!(got, want, "{} ({mode:?}): artifact and oracle differ; body:\n{}", shown(url), shown(body));
        }
    }
}

// ---------------------------------------------------------------- artifact

/// The crawlers of the base artifacts.
const ARTIFACT_AGENTS: [&str; 2] = ["googlebot", "mybot"];

/// A few origins' robots.txt and fetch statuses, chosen so that the
/// artifacts hold every kind of part: prefix rules, stars and `$`,
/// escapes, a 4xx (unrestricted) and a 5xx (blocked) origin.
fn base_records() -> Vec<FetchRecord> {
    let mut many = String::from("user-agent: mybot\n");
    for i in 0..40 {
        many += &format!("{}: /section-{}/{i}\n", if i % 3 == 0 { "allow" } else { "disallow" }, i % 7);
    }
    vec![
        fetched("http://example.com", 200, b"User-agent: *\nDisallow: /private\nAllow: /private/ok$\n"),
        fetched(
            "https://example.com",
            200,
            b"user-agent: googlebot\ndisallow: /*.php$\ndisallow: /a*b*c\nallow: /%7Euser/\n\nuser-agent: *\ndisallow: /\n",
        ),
        fetched("http://shop.example.org:8080", 200, many.as_bytes()),
        fetched("https://gone.example.net", 404, b""),
        fetched("http://down.example.net", 503, b""),
    ]
}

/// The valid artifacts the `artifact` check mutates: verdict and explain
/// mode, with the default and the tiny budget (split parts, per-rule
/// fallback). Built once per process.
pub fn base_artifacts() -> &'static [Vec<u8>] {
    static BASES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BASES.get_or_init(|| {
        let agents: Vec<Agent> = ARTIFACT_AGENTS.iter().map(|a| Agent::parse(a).unwrap()).collect();
        [(false, Budget::default()), (true, Budget::default()), (false, TINY), (true, TINY)]
            .into_iter()
            .map(|(explain, budget)| artifact_bytes(base_records(), &agents, BuildOptions { explain, budget }))
            .collect()
    })
}

/// Bits of the `artifact` check's flag byte.
pub mod artifact_flags {
    /// Keep the stored checksum (a damaged file must then be refused);
    /// otherwise the check writes the right one, to reach the checks behind it.
    pub const KEEP_CHECKSUM: u8 = 0x80;
    /// Write the true length into the header's length field after the mutations.
    pub const FIX_LENGTH: u8 = 0x40;
}

/// Where the header stores the file length.
const LENGTH_AT: std::ops::Range<usize> = 24..32;

/// Applies one 4-byte mutation `[op, position (u16 LE), value]` to `file`.
fn mutate(file: &mut Vec<u8>, op: &[u8]) {
    let [kind, lo, hi, value] = [op[0], op[1], op[2], op[3]];
    let at = usize::from(u16::from_le_bytes([lo, hi])) % (file.len() + 1);
    let word = at & !3;
    let set_u32 = |file: &mut Vec<u8>, f: &dyn Fn(u32) -> u32| {
        if let Some(slot) = file.get_mut(word..word + 4) {
            let old = u32::from_ne_bytes(slot.try_into().expect("4 bytes"));
            slot.copy_from_slice(&f(old).to_ne_bytes());
        }
    };
    match kind % 8 {
        0 => {
            if let Some(b) = file.get_mut(at) {
                *b ^= value.max(1);
            }
        }
        1 => {
            if let Some(b) = file.get_mut(at) {
                *b = value;
            }
        }
        2 => file.truncate(at),
        3 => file.insert(at, value),
        4 => {
            if at < file.len() {
                file.remove(at);
            }
        }
        5 => set_u32(file, &|_| u32::from(value)),
        6 => set_u32(file, &|_| 0xFFFF_FF00 | u32::from(value)),
        _ => set_u32(file, &|old| old.wrapping_add_signed(i32::from(value as i8))),
    }
}

/// The `artifact` target: one of [`base_artifacts`] (flag byte, low bits),
/// mutated by the rest of the input (4 bytes a mutation: flip, set,
/// truncate, insert, delete a byte, or set or shift an aligned u32), with
/// every checksum (`testing::reseal`; and, if asked, the length) rewritten unless
/// [`artifact_flags::KEEP_CHECKSUM`]. Whatever opens must answer every
/// lookup with an answer or a typed error, never a panic ([`exercise`]).
/// A changed file whose checksums were kept may open (opening checks only
/// the header and index; each group is checked on first use), but then
/// every answer it gives must be the base's (an error instead is allowed),
/// and [`Artifact::verify`], which checks every byte, must refuse it.
pub fn artifact(data: &[u8]) {
    let Some((&flags, ops)) = data.split_first() else { return };
    let bases = base_artifacts();
    let which = usize::from(flags & 0x3f) % bases.len();
    let base = &bases[which];
    let mut file = base.clone();
    for op in ops.chunks_exact(4) {
        mutate(&mut file, op);
    }
    let keep = flags & artifact_flags::KEEP_CHECKSUM != 0;
    if flags & artifact_flags::FIX_LENGTH != 0 && file.len() >= LENGTH_AT.end {
        let len = file.len() as u64;
        file[LENGTH_AT].copy_from_slice(&len.to_ne_bytes());
    }
    if !keep {
        reseal(&mut file);
    }
    match Artifact::from_bytes(&file) {
        Ok(artifact) => {
            let transcript = exercise(artifact);
            if keep && file != *base {
                assert!(transcript.verified.is_err(), "a damaged artifact with its old checksums passed verify");
                if let Some(difference) = transcript.differs_from(&base_transcripts()[which]) {
                    panic!("a damaged artifact with its old checksums answered differently: {difference}");
                }
            }
        }
        Err(e) => assert!(file != *base, "a valid artifact was refused: {e}"),
    }
}

/// The [`exercise`] transcripts of the [`base_artifacts`], made once per process.
fn base_transcripts() -> &'static [Transcript] {
    static TRANSCRIPTS: OnceLock<Vec<Transcript>> = OnceLock::new();
    TRANSCRIPTS.get_or_init(|| {
        base_artifacts()
            .iter()
            .map(|bytes| {
                let transcript = exercise(Artifact::from_bytes(bytes).expect("the base artifacts open"));
                assert!(transcript.answers.iter().all(|(_, a)| a.is_ok()), "a base artifact gives an error");
                transcript
            })
            .collect()
    })
}

/// The `artifact_file` target: the input is the whole file. Opened as it
/// is, then with its checksums recomputed (`testing::reseal`), so that
/// the fuzzer gets past the checksum to the structure; whatever is accepted
/// must answer every lookup with an answer or a typed error, never a panic.
pub fn artifact_file(data: &[u8]) {
    if let Ok(artifact) = Artifact::from_bytes(data) {
        exercise(artifact);
    }
    let mut file = data.to_vec();
    reseal(&mut file);
    if file != data {
        if let Ok(artifact) = Artifact::from_bytes(&file) {
            exercise(artifact);
        }
    }
}

/// Paths every lookup is tried with.
const LOOKUP_PATHS: [&[u8]; 7] =
    [b"/", b"", b"/private", b"/private/ok", b"/x.php", b"/section-3/9", b"/%7Euser/a\xE9"];

/// What [`exercise`] got from an artifact: each lookup (named) with its
/// answer as text, or the error it gave; and what [`Artifact::verify`] said.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// (lookup, answer or error), in the order asked.
    pub answers: Vec<(String, Result<String, String>)>,
    /// [`Artifact::verify`]'s result.
    pub verified: Result<(), String>,
}

impl Transcript {
    fn note<T: std::fmt::Debug, E: std::fmt::Display>(&mut self, lookup: String, answer: Result<T, E>) {
        self.answers.push((lookup, answer.map(|a| format!("{a:?}")).map_err(|e| e.to_string())));
    }

    /// The first answer of `self` that `original` does not give for the
    /// same lookup (errors of `self` excepted), if any.
    pub fn differs_from(&self, original: &Transcript) -> Option<String> {
        let want: std::collections::HashMap<&str, &Result<String, String>> =
            original.answers.iter().map(|(k, v)| (k.as_str(), v)).collect();
        self.answers.iter().find_map(|(lookup, got)| match (got, want.get(lookup.as_str())) {
            (Err(_), _) => None,
            (Ok(got), Some(Ok(want))) if got == want => None,
            (Ok(got), want) => Some(format!("{lookup}: {got}, where the original gave {want:?}")),
        })
    }
}

/// Every lookup an accepted artifact offers, over (at most) its first 64
/// origins and groups: metadata, origin keys and fetch status, groups per
/// agent, decisions singly and batched (which must agree when the batch is
/// answered), explanations and rules, whole URLs through the classifier in
/// both URL modes (single and batched answers must agree when the batch is
/// answered), and last [`Artifact::verify`]. Each lookup gives an answer or
/// a typed error; this panics only on a disagreement, or where the reader
/// itself panics. The answers are returned for comparison.
pub fn exercise(artifact: Artifact) -> Transcript {
    let mut t = Transcript { answers: Vec::new(), verified: Ok(()) };
    let meta = (artifact.meta().to_json(), artifact.section_sizes(), artifact.explains(), artifact.len());
    t.note::<_, String>("meta".into(), Ok(meta));
    let agents = artifact.meta().agents.len();
    let mut urls: Vec<Vec<u8>> = vec![b"http://example.com/private".to_vec(), b"http://unknown.example/".to_vec()];
    let mut queries = Vec::new();
    for origin in 0..artifact.origins().min(64) {
        let key = artifact.origin_key(origin).to_vec();
        let groups: Vec<usize> = (0..agents).map(|agent| artifact.group_of(origin, agent)).collect();
        t.note::<_, String>(format!("origin {origin}"), Ok((shown(&key), artifact.fetch_info(origin), &groups)));
        let lossy = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
        let sitemaps = artifact.sitemaps(origin).map(|list| list.iter().map(|s| lossy(s)).collect::<Vec<_>>());
        t.note(format!("origin {origin} sitemaps"), sitemaps);
        for agent in 0..agents {
            t.note(
                format!("origin {origin} agent {agent} crawl-delay"),
                artifact.crawl_delay(origin, agent).map(|d| d.map(lossy)),
            );
        }
        for group in groups {
            for path in LOOKUP_PATHS {
                queries.push((group, path));
            }
        }
        for path in LOOKUP_PATHS {
            let mut url = key.clone();
            url.extend_from_slice(path);
            urls.push(url);
        }
    }
    for group in 0..artifact.groups().min(64) {
        t.note(format!("group {group} stats"), artifact.group_stats(group));
        let count = artifact.rule_count(group);
        t.note(format!("group {group} rules"), count.as_ref().map_err(|e| e.to_string()));
        for index in 0..count.unwrap_or(0).min(64) {
            t.note(
                format!("group {group} rule {index}"),
                artifact.rule(group, index).map(|r| r.map(|r| r.to_string())),
            );
        }
    }
    let mut outcomes = Vec::new();
    let batched = artifact.decide_many(&queries, &mut outcomes);
    assert!(batched.is_ok() == (outcomes.len() == queries.len()), "decide_many appended {} outcomes", outcomes.len());
    for (i, &(group, path)) in queries.iter().enumerate() {
        let single = artifact.decide(group, path);
        if let (Some(batched), Ok(single)) = (outcomes.get(i), &single) {
            assert_eq!(single, batched, "group {group}, path {}: decide and decide_many differ", shown(path));
        }
        if let Ok(outcome) = &single {
            let explained = artifact.explain(outcome).map(|r| r.map(|r| r.to_string()));
            t.note(format!("explain group {group}, path {}", shown(path)), explained);
        }
        t.note(format!("decide group {group}, path {}", shown(path)), single);
    }
    // The URLs come grouped by origin, which the classifier keeps in input
    // order; the first origin's come back at the end, split from their run.
    let returning: Vec<Vec<u8>> = urls.iter().skip(2).take(LOOKUP_PATHS.len()).cloned().collect();
    urls.extend(returning);
    let lines: Vec<&[u8]> = urls.iter().map(Vec::as_slice).collect();
    let set = ShardSet::single(artifact);
    for agent in 0..agents {
        for mode in [PathMode::Escaped, PathMode::Raw] {
            let classifier = AgentClassifier::new(&set, agent, mode);
            let mut scratch = Scratch::default();
            let mut batched = vec![Verdict::Invalid; lines.len()];
            let batch = classifier.verdicts(&lines, &mut scratch, &mut batched);
            // The grouped path trusts no order: the same verdicts (or error).
            let mut grouped = vec![Verdict::Invalid; lines.len()];
            let grouped_batch = classifier.grouped_verdicts(&lines, &mut scratch, &mut grouped);
            assert_eq!(grouped_batch.is_ok(), batch.is_ok(), "grouped and batched runs differ in failing");
            if batch.is_ok() {
                assert_eq!(grouped, batched, "grouped and batched verdicts differ");
            }
            for (url, batched) in lines.iter().zip(batched) {
                let answer = classifier.answer(url, &mut scratch, true);
                if let (Ok(()), Ok(answer)) = (&batch, &answer) {
                    assert_eq!(answer.verdict, batched, "{}: single and batched verdicts differ", shown(url));
                }
                let answer = answer.map(|a| (a.verdict, a.reason.to_string()));
                t.note(format!("agent {agent}, {mode:?}, {}", shown(url)), answer);
            }
            let _ = classifier.fetch_tallies(std::slice::from_ref(&scratch));
        }
    }
    t.verified = set.verify().map_err(|e| e.to_string());
    t
}

// ---------------------------------------------------------------- warc

/// The `warc` target: the WARC reader (plain, and gzip when the input starts
/// with the gzip magic) never panics and always progresses: records and
/// errors come at strictly increasing offsets, and the stream ends; without
/// resync an error ends it, with [`warc::WarcReader::resync_after_errors`]
/// it goes on. Every record's accessors and HTTP response decoding are run
/// too, and the same bytes go through the corpus reader, failing and
/// skipping bad records, whose errors must name the file. (A hang shows up
/// as libFuzzer's `-timeout`.)
pub fn warc(data: &[u8]) {
    for resync in [false, true] {
        let mut records = warc::reader(data).expect("reading from memory cannot fail");
        if resync {
            records.resync_after_errors();
        }
        let mut last_offset = None;
        let mut progressed = |offset: u64, what: &str| {
            assert!(last_offset.is_none_or(|last| offset > last), "{what} at offset {offset} after {last_offset:?}");
            last_offset = Some(offset);
        };
        while let Some(record) = records.next() {
            match record {
                Ok(record) => {
                    progressed(record.offset, "a record");
                    let _ = (record.record_type(), record.target_uri(), record.date(), record.header("Content-Type"));
                    if record.is_http() {
                        http_response(record.http_response());
                    }
                }
                Err(e) => {
                    progressed(e.offset, "an error");
                    if !resync {
                        assert!(records.next().is_none(), "the WARC reader goes on after an error");
                        break;
                    }
                }
            }
        }
        let mut corpus = Corpus::new();
        if resync {
            corpus.skip_bad_records();
        }
        match corpus.add_warc_from(Arc::from("fuzz.warc"), data) {
            Ok(_) => {
                for e in corpus.skipped() {
                    assert!(
                        e.to_string().starts_with("fuzz.warc"),
                        "a skipped record's error does not name the file: {e}"
                    );
                }
                let _ = corpus.resolve();
            }
            Err(e) => assert!(e.to_string().starts_with("fuzz.warc"), "the error does not name the file: {e}"),
        }
    }
    http_response(HttpResponse::parse(data));
}

/// Runs what readers do with a parsed HTTP response: headers, the decoded body.
fn http_response(response: Result<HttpResponse, HttpError>) {
    if let Ok(response) = response {
        let _ = (response.header("Location"), response.header("Content-Encoding"));
        let _ = response.decoded_body();
    }
}

// ---------------------------------------------------------------- page

/// The `page` target: the meta-tag page reader never panics and ends. The
/// input is a page, or `X-Robots-Tag` header values (one a line),
/// [`SEPARATOR`], and a page; both go through [`scan_head`],
/// [`PageRules::evaluate`] for a few crawlers (and everything it can
/// report), the directive and date parsers, and the whole input as an HTTP
/// response through [`PageRules::evaluate_response`].
pub fn page(data: &[u8]) {
    let parts = split_parts(data);
    let (headers, html) = match parts.as_slice() {
        [html] => (&b""[..], *html),
        [headers, ..] => (*headers, &data[headers.len() + SEPARATOR.len()..]),
        [] => unreachable!("split_parts gives at least one part"),
    };
    let scan = scan_head(html);
    for tag in &scan.tags {
        assert!(tag.line >= 1, "meta tag lines are 1-based");
        let _ = parse_directives(&tag.content);
    }
    let values: Vec<&[u8]> = headers.split(|&b| b == b'\n').filter(|v| !v.is_empty()).collect();
    let header_fields: Vec<(&[u8], &[u8])> = values.iter().map(|v| (&b"X-Robots-Tag"[..], *v)).collect();
    for value in &values {
        let text = String::from_utf8_lossy(value);
        let _ = (parse_x_robots_tag(&text), parse_date(&text));
    }
    for agent in ["googlebot", "mybot"] {
        let agent = Agent::parse(agent).expect("valid agent");
        let rules = PageRules::evaluate(&agent, html, &header_fields);
        let _ = rules.to_string();
        let _ = rules.problems().count();
        for field in Field::ALL {
            let _ = (rules.value_text(field), rules.decided_by(field));
        }
        if let Ok(response) = HttpResponse::parse(data) {
            let _ = PageRules::evaluate_response(&agent, &response).map(|r| r.to_string());
        }
    }
}

// ---------------------------------------------------------------- url

/// The `url` target: splitting a URL into origin and path never panics; it
/// agrees with the `url` crate ([`url_oracle::check_against_url_crate`]),
/// and its fast path with its complete parser
/// ([`url_oracle::check_fast_path`]); and the answer is the same whichever
/// way a URL is asked: the key is ASCII and starts with the scheme,
/// `check --robots`'s reading ([`PathMode::path_of`]) gives in both modes
/// the path an artifact lookup matches ([`Origin::path_for`]), the key
/// followed by the default-mode path parses again to the same key and path,
/// and the key's robots.txt URL is accepted as that origin's.
///
/// [`Origin::path_for`]: robotsieve_core::url::Origin::path_for
pub fn url(data: &[u8]) {
    if let Err(e) = url_oracle::check_against_url_crate(data) {
        panic!("{e}");
    }
    if let Err(e) = url_oracle::check_fast_path(data) {
        panic!("{e}");
    }
    let mut key = KeyBuf::new();
    let Ok(origin) = key.parse(data) else {
        let _ = (PathMode::Raw.path_of(data), PathMode::Escaped.path_of(data));
        return;
    };
    let (key_bytes, path, scheme) = (origin.key.to_vec(), origin.path.to_vec(), origin.scheme);
    let _ = (origin.host(), origin.is_robots_txt(), origin.port);
    assert!(key_bytes.is_ascii(), "{}: origin key {} is not ASCII", shown(data), shown(&key_bytes));
    assert!(
        key_bytes.starts_with(scheme.as_str().as_bytes()),
        "{}: key {} for scheme {scheme:?}",
        shown(data),
        shown(&key_bytes)
    );
    for mode in [PathMode::Escaped, PathMode::Raw] {
        let lookup = origin.path_for(mode);
        assert!(lookup.starts_with(b"/"), "{}: {mode:?} path {} does not start with /", shown(data), shown(&lookup));
        let asked = mode.path_of(data);
        assert_eq!(
            asked,
            lookup,
            "{}: check --robots and an artifact lookup read different {mode:?} paths",
            shown(data)
        );
    }
    let again = [key_bytes.as_slice(), path.as_slice()].concat();
    match KeyBuf::new().parse(&again) {
        Ok(o) => assert_eq!(
            (o.key, o.path),
            (key_bytes.as_slice(), path.as_slice()),
            "{}: its key and path, {}, parse differently",
            shown(data),
            shown(&again)
        ),
        Err(e) => panic!("{}: its key and path, {}, are refused: {e}", shown(data), shown(&again)),
    }
    let robots = format!("{}/robots.txt", String::from_utf8_lossy(&key_bytes));
    match OriginKey::of_robots_url(&robots) {
        Ok(k) => assert_eq!(k.as_bytes(), key_bytes, "{}: {robots} governs another origin", shown(data)),
        Err(e) => panic!("{}: its robots.txt URL {robots} is refused: {e}", shown(data)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_inputs_decode_what_they_encode() {
        let paths: Vec<&[u8]> = vec![b"/a", b"", b"/b?c"];
        for (agent, paths) in [(None, vec![]), (Some(&b"mybot"[..]), vec![]), (Some(&b"x,y"[..]), paths)] {
            let input = RobotsInput { flags: 0x35, body: b"user-agent: *\ndisallow: /a\n", agent, paths };
            assert_eq!(RobotsInput::decode(&input.encode()), input);
        }
        // Paths without an agent: the encoding names the default agent.
        let input = RobotsInput { flags: 4, body: b"", agent: None, paths: vec![b"/x"] };
        let encoded = input.encode();
        let decoded = RobotsInput::decode(&encoded);
        assert_eq!((decoded.agent, decoded.paths), (Some(AGENTS[0].as_bytes()), vec![&b"/x"[..]]));
        assert_eq!(RobotsInput::decode(b""), RobotsInput { flags: 0, body: b"", agent: None, paths: vec![] });
    }

    #[test]
    fn a_damaged_group_with_its_old_checksum_opens_errs_on_use_and_never_answers_otherwise() {
        use robotsieve_engine::testing::GROUPS_START;
        for (n, base) in base_artifacts().iter().enumerate() {
            let mut file = base.clone();
            // A byte of the first group's tables (after its head and checksum).
            file[GROUPS_START + 64] ^= 0x40;
            let artifact = Artifact::from_bytes(&file).unwrap_or_else(|e| panic!("base {n}: refused at open: {e}"));
            let transcript = exercise(artifact);
            assert!(transcript.verified.is_err(), "base {n}: verify passed");
            let errors: Vec<&String> = transcript.answers.iter().filter_map(|(_, a)| a.as_ref().err()).collect();
            assert!(!errors.is_empty(), "base {n}: no lookup met the damaged group");
            assert!(errors.iter().all(|e| e.contains("damaged artifact: group 0")), "base {n}: {errors:?}");
            assert!(transcript.answers.iter().any(|(_, a)| a.is_ok()), "base {n}: the sound groups answer");
            assert_eq!(transcript.differs_from(&base_transcripts()[n]), None, "base {n}");
            // And a different answer is caught.
            let mut changed = Transcript { answers: transcript.answers.clone(), verified: Ok(()) };
            let ok = changed.answers.iter_mut().find(|(_, a)| a.is_ok()).expect("an answer");
            ok.1 = Ok("something else".into());
            assert!(changed.differs_from(&base_transcripts()[n]).is_some());
        }
    }

    #[test]
    fn the_base_artifacts_open_and_a_kept_checksum_catches_every_mutation_kind() {
        for (n, base) in base_artifacts().iter().enumerate() {
            let artifact = Artifact::from_bytes(base).unwrap_or_else(|e| panic!("base {n}: {e}"));
            assert_eq!(artifact.origins(), base_records().len(), "base {n}");
            for kind in 0..8u8 {
                let mut file = base.clone();
                mutate(&mut file, &[kind, 100, 0, 7]);
                assert_ne!(&file, base, "mutation {kind} changes the file");
                // Refused at open, or (a change inside a group blob) by verify.
                let refused = Artifact::from_bytes(&file).and_then(|a| a.verify());
                assert!(refused.is_err(), "base {n}, mutation {kind}: accepted");
            }
        }
    }
}
