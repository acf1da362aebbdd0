//! The artifact end to end: built by the compiler, read by the engine; damage
//! is detected; conformance cases answer the same through it.

use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build_bytes, BuildPlan};
use robotsieve_engine::testing::{reseal, Header, GROUPS_START};
use robotsieve_engine::testing::{GroupHead, PART_COMB16};
use robotsieve_engine::{
    Artifact, ArtifactError, ArtifactHead, DamageKind, GroupDamage, Section, VersionMismatch, Versioned,
    FORMAT_VERSION, SEMANTICS_VERSION,
};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::corpus::{Corpus, Governing};
use robotsieve_testkit::conformance::{check_verdict_file, conformance_file, read_origin_cases};
const HEADER_LEN: usize = Header::LEN;
use robotsieve_core::url::{OriginKey, PathMode};

/// One 200 record per (robots.txt URL, body), resolved as `compile --corpus` does.
fn resolve(records: &[(String, Vec<u8>)]) -> Vec<Governing> {
    let mut corpus = Corpus::new();
    let lines: String = records
        .iter()
        .map(|(url, body)| {
            let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, body);
            format!("{}\n", serde_json::json!({"url": url, "status": 200, "body_b64": b64}))
        })
        .collect();
    corpus.add_jsonl_from("test.jsonl".into(), lines.as_bytes()).unwrap();
    corpus.resolve().origins.into_values().collect()
}

fn sample_bytes(explain: bool) -> Vec<u8> {
    let records: Vec<_> = (0..50)
        .map(|i| {
            let body = format!("user-agent: *\ndisallow: /p{}\nallow: /p{}/ok\ndisallow: /*.pdf$\n", i % 7, i % 7);
            (format!("https://site{i}.example/robots.txt"), body.into_bytes())
        })
        .collect();
    let origins = resolve(&records);
    let plan =
        BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions { explain, ..BuildOptions::default() });
    build_bytes(origins, &plan).unwrap().0
}

#[test]
fn truncated_files_are_refused_with_a_reason() {
    let bytes = sample_bytes(true);
    assert!(Artifact::from_bytes(&bytes).is_ok());
    for len in [0, 7, 8, HEADER_LEN - 1, HEADER_LEN, HEADER_LEN + 10, bytes.len() / 2, bytes.len() - 1] {
        let err = Artifact::from_bytes(&bytes[..len]).unwrap_err().to_string();
        assert!(err.contains("not a valid robotsieve artifact"), "{len}: {err}");
    }
}

/// Every flipped byte is caught: at open (header, index) or, inside a group
/// blob, by `verify` and by the first lookup of that group, which gives an
/// error naming the group, or exactly the undamaged answer (a lookup of
/// another, sound group); never a different one.
#[test]
fn every_flipped_byte_is_detected() {
    let bytes = sample_bytes(true);
    let original = Artifact::from_bytes(&bytes).unwrap();
    let paths: [&[u8]; 5] = [b"/", b"/private", b"/private/ok", b"/private/ok/x", b"/x.php"];
    let (mut at_open, mut at_lookup) = (0, 0);
    for i in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[i] ^= 0x40;
        let artifact = match Artifact::from_bytes(&damaged) {
            Err(e) => {
                assert!(!e.to_string().is_empty());
                at_open += 1;
                continue;
            }
            Ok(artifact) => artifact,
        };
        let err = artifact.verify().expect_err(&format!("flip at byte {i} went unnoticed by verify"));
        assert!(err.to_string().contains("damaged artifact: group"), "{err}");
        let mut refused = false;
        for g in 0..artifact.groups() {
            for path in paths {
                match artifact.decide(g, path) {
                    Ok(got) => assert_eq!(got, original.decide(g, path).unwrap(), "flip at byte {i}: group {g}"),
                    Err(e) => {
                        assert!(e.to_string().contains(&format!("group {g}")), "{e}");
                        refused = true;
                    }
                }
            }
        }
        assert!(refused, "flip at byte {i}: no lookup noticed it");
        at_lookup += 1;
    }
    assert!(at_open > 0 && at_lookup > 0, "{at_open} caught at open, {at_lookup} at lookup");
}

/// What a reader elsewhere checks from two ranged reads (the head, then
/// META) refuses what opening refuses there, with the same message: every
/// flipped byte of the head and of META, and every truncation; on the
/// intact file it finds the META that opening reads.
#[test]
fn the_head_reader_refuses_what_opening_refuses() {
    let bytes = sample_bytes(true);
    let read = |bytes: &[u8]| -> Result<_, ArtifactError> {
        let head = ArtifactHead::read(&bytes[..ArtifactHead::LEN.min(bytes.len())], bytes.len() as u64)?;
        let range = head.meta_range();
        head.read_meta(&bytes[range.start as usize..range.end as usize])
    };
    assert_eq!(read(&bytes).unwrap(), *Artifact::from_bytes(&bytes).unwrap().meta());
    let meta = ArtifactHead::read(&bytes[..ArtifactHead::LEN], bytes.len() as u64).unwrap().meta_range();
    let (mut refused, mut flips) = (0, 0);
    for i in (0..ArtifactHead::LEN).chain(meta.start as usize..meta.end as usize) {
        let mut damaged = bytes.clone();
        damaged[i] ^= 0x40;
        flips += 1;
        if let Err(e) = read(&damaged) {
            refused += 1;
            let opened = Artifact::from_bytes(&damaged).err().unwrap_or_else(|| panic!("byte {i}: opened, but {e}"));
            assert_eq!(e.to_string(), opened.to_string(), "byte {i}");
        }
    }
    // A flip in an unused (zero) entry of the table, or in a field opening
    // reads past the head (a section's checksum), passes the head alone;
    // every other flip is refused there.
    assert!(refused * 10 >= flips * 9, "{refused} of {flips} flips refused by the head");
    for len in [0, 7, HEADER_LEN, ArtifactHead::LEN - 1, ArtifactHead::LEN, bytes.len() / 2, bytes.len() - 1] {
        let e = read(&bytes[..len]).expect_err("a truncated file");
        assert_eq!(e.to_string(), Artifact::from_bytes(&bytes[..len]).unwrap_err().to_string(), "{len} bytes");
    }
}

#[test]
fn foreign_and_future_files_are_named_as_such() {
    let err = Artifact::from_bytes(b"user-agent: *\ndisallow: /\n......................................").unwrap_err();
    assert!(err.to_string().contains("wrong magic"), "{err}");
    let mut bytes = sample_bytes(false);
    bytes[8] = 99; // format version
    assert!(Artifact::from_bytes(&bytes).unwrap_err().to_string().contains("format version 99"));
    let mut bytes = sample_bytes(false);
    bytes[12] = 42; // semantics version
    assert!(Artifact::from_bytes(&bytes).unwrap_err().to_string().contains("semantics version 42"));
}

#[test]
fn a_version_mismatch_is_told_apart_from_damage() {
    let mut older = sample_bytes(false);
    older[8..12].copy_from_slice(&(FORMAT_VERSION - 1).to_ne_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.rsv");
    std::fs::write(&path, &older).unwrap();
    match Artifact::open(&path) {
        Err(ArtifactError::Version { path: Some(named), mismatch }) => {
            assert_eq!(named, path);
            assert_eq!(
                mismatch,
                VersionMismatch { of: Versioned::Format, found: FORMAT_VERSION - 1, supported: FORMAT_VERSION }
            );
            assert!(!mismatch.is_newer());
        }
        other => panic!("expected a version mismatch, got {other:?}"),
    }
    let mut newer = sample_bytes(false);
    newer[12..16].copy_from_slice(&(SEMANTICS_VERSION + 1).to_ne_bytes());
    match Artifact::from_bytes(&newer) {
        Err(ArtifactError::Version { path: None, mismatch }) => {
            assert_eq!(mismatch.of, Versioned::Semantics);
            assert!(mismatch.is_newer());
        }
        other => panic!("expected a version mismatch, got {other:?}"),
    }
    let mut damaged = sample_bytes(false);
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    // The last byte is padding after the last section: the error says where.
    match Artifact::from_bytes(&damaged) {
        Err(ArtifactError::Invalid { path: None, damage }) if damage.kind() == DamageKind::SectionGap => {
            let (len, message) = (damaged.len(), damage.to_string());
            let from = (len - 7..len).find(|from| message.ends_with(&format!("(bytes {from} to {len})")));
            assert!(from.is_some(), "{message}, in a file of {len} bytes");
            assert_eq!(damage.section(), None);
        }
        other => panic!("expected damage in the padding, got {other:?}"),
    }
    let mut meta = sample_bytes(false);
    let at = meta.len() - 16;
    meta[at] ^= 0x40;
    match Artifact::from_bytes(&meta) {
        Err(ArtifactError::Invalid { damage, .. })
            if damage.kind() == DamageKind::SectionChecksum && damage.section() == Some(Section::Meta) => {}
        other => panic!("expected META's checksum to fail, got {other:?}"),
    }
    let path = dir.path().join("damaged.rsv");
    std::fs::write(&path, &damaged).unwrap();
    match Artifact::open(&path) {
        Err(e @ ArtifactError::Invalid { path: Some(_), .. }) if matches!(&e, ArtifactError::Invalid { damage, .. } if damage.kind() == DamageKind::SectionGap) =>
        {
            assert!(
                e.to_string().starts_with(&format!("not a valid robotsieve artifact: {}: ", path.display())),
                "{e}"
            );
        }
        other => panic!("expected damage naming the file, got {other:?}"),
    }
    let mut cut = sample_bytes(false);
    cut.truncate(cut.len() - 8);
    match Artifact::from_bytes(&cut) {
        Err(ArtifactError::Invalid { damage, .. }) if damage.kind() == DamageKind::Truncated => {
            let actual = cut.len();
            assert_eq!(
                damage.to_string(),
                format!("header says {} bytes but the file has {actual} (truncated?)", actual + 8)
            );
        }
        other => panic!("expected a truncated file, got {other:?}"),
    }
}

#[test]
fn a_damaged_group_names_its_number_and_what_is_wrong() {
    let mut bytes = sample_bytes(false);
    // Group 0's blob starts GROUPS; a byte past its head is covered by its checksum.
    bytes[GROUPS_START + GroupHead::LEN + 4] ^= 0x01;
    let artifact = Artifact::from_bytes(&bytes).expect("groups are checked on first use, not at open");
    match artifact.decide(0, b"/p1") {
        Err(ArtifactError::DamagedGroup {
            group: 0,
            origin: Some(_),
            problem: GroupDamage::Checksum { stored, computed },
            ..
        }) => {
            assert_ne!(stored, computed);
        }
        other => panic!("expected group 0's checksum to fail, got {other:?}"),
    }
    assert!(matches!(artifact.verify(), Err(ArtifactError::DamagedGroup { group: 0, .. })));
}

#[test]
fn opening_a_file_maps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.rsv");
    std::fs::write(&path, sample_bytes(false)).unwrap();
    let a = Artifact::open(&path).unwrap();
    assert_eq!(a.origins(), 50);
    let missing = Artifact::open(&dir.path().join("nope.rsv")).unwrap_err().to_string();
    assert!(missing.contains("nope.rsv"), "{missing}");
}

/// Every verdict case, compiled into one artifact per file (one origin per
/// case), answered through the artifact in both URL modes.
#[test]
fn conformance_through_the_artifact() {
    for name in ["robots.jsonl", "google-spec-test.jsonl"] {
        for explain in [false, true] {
            check_verdict_file(name, &format!("the artifact (explain={explain})"), |case| {
                // Four cases check the empty string as a URL: it has no
                // origin, so they are filed under a stand-in one.
                let origin = OriginKey::of_url(&case.url)
                    .unwrap_or_else(|_| OriginKey::of_url("http://stand-in.example").unwrap());
                let agents = vec![Agent::from_raw_tokens(&case.agents)];
                let plan = BuildPlan::new(agents, BuildOptions { explain, ..BuildOptions::default() });
                let robots = resolve(&[(origin.robots_url(), case.body.clone())]);
                let artifact = Artifact::from_bytes(&build_bytes(robots, &plan).unwrap().0).unwrap();
                let group = artifact.group_of(artifact.find_origin(origin.as_bytes(), origin.hash64()).unwrap(), 0);
                move |path: &[u8]| artifact.decide(group, path).unwrap().allowed()
            });
        }
    }
}

/// origins.jsonl: the robots.txt governs exactly the URLs of its origin.
#[test]
fn origins_through_the_artifact() {
    let Some(path) = conformance_file("origins.jsonl") else {
        eprintln!("skipped: ../shared/conformance/origins.jsonl is absent");
        return;
    };
    for case in read_origin_cases(&path).unwrap() {
        let Ok(key) = OriginKey::of_robots_url(&case.robots_url) else {
            // Not at the root: not a robots.txt, so it governs nothing.
            assert!(!case.applies, "{}: {}", case.robots_url, case.note);
            continue;
        };
        let plan = BuildPlan::new(vec![Agent::parse("anybot").unwrap()], BuildOptions::default());
        let robots = resolve(&[(key.robots_url(), Vec::new())]);
        let artifact = Artifact::from_bytes(&build_bytes(robots, &plan).unwrap().0).unwrap();
        let found = OriginKey::of_url(&case.url).ok().and_then(|k| artifact.find_origin(k.as_bytes(), k.hash64()));
        assert_eq!(found.is_some(), case.applies, "{} -> {}: {}", case.robots_url, case.url, case.note);
    }
}

/// The artifact of one origin, `https://s.example`, compiled from `body` for
/// mybot, answers every path with the per-rule oracle's label and, when it
/// explains, the oracle's deciding line.
fn assert_agrees_with_the_oracle<'p>(
    artifact: &Artifact,
    body: &str,
    paths: impl IntoIterator<Item = &'p str>,
    explain: bool,
) {
    use robotsieve_robotstxt::{Group, RobotsTxt};
    let group = Group::select(&RobotsTxt::parse(body.as_bytes()), &Agent::parse("mybot").unwrap());
    let key = OriginKey::of_url("https://s.example").unwrap();
    let o = artifact.find_origin(key.as_bytes(), key.hash64()).unwrap();
    let paths: Vec<&str> = paths.into_iter().collect();
    let prepared: Vec<_> = paths.iter().map(|path| PathMode::Escaped.path_of(path.as_bytes())).collect();
    // All paths at once too: their walks interleave, and must answer as one at a time.
    let queries: Vec<(usize, &[u8])> = prepared.iter().map(|p| (artifact.group_of(o, 0), &p[..])).collect();
    let mut together = Vec::new();
    artifact.decide_many(&queries, &mut together).unwrap();
    assert_eq!(together.len(), paths.len());
    for ((path, prepared), together) in paths.iter().zip(&prepared).zip(together) {
        let want = group.decide(prepared);
        let got = artifact.decide(artifact.group_of(o, 0), prepared).unwrap();
        assert_eq!(got.label, want.label, "{path} explain={explain}");
        assert_eq!(together, got, "{path}: decided with the others");
        if explain {
            let rule = artifact.explain(&got).unwrap().map(|r| r.line);
            assert_eq!(rule, want.rule.map(|i| group.rules[i].line), "{path}");
        }
    }
}

/// Groups forced over a tiny budget are split into automata and a per-rule
/// list; through the artifact (prefilters built on first use) they must still
/// agree with the per-rule oracle.
#[test]
fn split_groups_agree_with_the_oracle_through_the_artifact() {
    use robotsieve_compiler::automaton::Budget;
    let body = "user-agent: *\n\
        disallow: /a*b*c\nallow: /a*b*c*d$\ndisallow: /*x*y*z\nallow: /*.pdf$\ndisallow: /private\n\
        allow: /private/ok\ndisallow: /*?*session=\ndisallow: /*/tmp/*\nallow: /p%C3%A4th*\ndisallow: /$\n";
    let paths = [
        "/",
        "/abc",
        "/a1b2c3",
        "/a1b2c3d",
        "/abcd",
        "/xyz",
        "/q/x/y/z",
        "/doc.pdf",
        "/doc.pdf?x",
        "/private",
        "/private/ok",
        "/private/ok/more",
        "/p?a=1&session=2",
        "/x/tmp/y",
        "/päth",
        "/p%c3%a4th/x",
        "/zzz",
    ];
    for explain in [false, true] {
        let budget = Budget { max_states: 4, max_work: 50 };
        let plan = BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions { explain, budget });
        let origins = resolve(&[("https://s.example/robots.txt".to_string(), body.as_bytes().to_vec())]);
        let (bytes, report) = build_bytes(origins, &plan).unwrap();
        assert_eq!(report.split_groups, 1, "the tiny budget must force a split");
        let artifact = Artifact::from_bytes(&bytes).unwrap();
        assert!(artifact.group_stats(0).unwrap().fallback_rules > 0, "some rules must be matched one by one");
        assert_agrees_with_the_oracle(&artifact, body, paths.iter().copied(), explain);
    }
}

/// A group of many long, unique literal rules compiles to a trie-like
/// automaton that the writer stores as a comb table (far smaller than the
/// dense rows); through the artifact it must answer as the per-rule oracle.
#[test]
fn long_literal_rules_are_stored_as_a_comb_and_agree_with_the_oracle() {
    let rule_path = |i: usize| format!("/archive/{}/documents/report-{i:04}-final-version.html", i * 7919 % 1000);
    let mut body = String::from("user-agent: *\n");
    for i in 0..300 {
        let verb = if i % 3 == 0 { "allow" } else { "disallow" };
        body.push_str(&format!("{verb}: {}\n", rule_path(i)));
    }
    body.push_str("disallow: /archive/\n");
    let mut paths = vec!["/".to_string(), "/archive/".into(), "/archive/x".into(), "/other".into()];
    for i in 0..300 {
        let p = rule_path(i);
        paths.push(p.clone());
        paths.push(format!("{p}?q=1"));
        paths.push(p[..p.len() - 6].to_string());
        paths.push(p.replace("final", "draft"));
    }
    for explain in [false, true] {
        let plan =
            BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions { explain, ..BuildOptions::default() });
        let origins = resolve(&[("https://s.example/robots.txt".to_string(), body.as_bytes().to_vec())]);
        let artifact = Artifact::from_bytes(&build_bytes(origins, &plan).unwrap().0).unwrap();
        let stats = artifact.group_stats(0).unwrap();
        assert_eq!((stats.dfas, stats.combs), (1, 1), "explain={explain}: {stats:?}");
        assert!(stats.states > 5_000, "{stats:?}");
        // A dense row of this automaton alone is at least 16 u16 entries per state.
        assert!(stats.bytes < stats.states * 32, "{stats:?}");
        assert_agrees_with_the_oracle(&artifact, &body, paths.iter().map(String::as_str), explain);
    }
}

/// Damage inside a comb part's tables is refused even when the group's
/// checksum is made to match: by `verify` and by the whole group's check,
/// which a first lookup (one or several side by side) and `compiled_group`
/// run. Lookups never run on broken tables, and no damage makes opening or
/// a lookup panic.
#[test]
fn damaged_comb_tables_are_refused_even_with_a_valid_checksum() {
    use robotsieve_engine::testing::{checksum, GROUPS_START};
    use robotsieve_engine::testing::{GroupHead, PartRecord};
    let mut body = String::from("user-agent: *\n");
    for i in 0..200 {
        body.push_str(&format!("disallow: /a/very/long/unique/literal/rule/number/{i:05}/end\n"));
    }
    let plan = BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions::default());
    let origins = resolve(&[("https://s.example/robots.txt".to_string(), body.into_bytes())]);
    let bytes = build_bytes(origins, &plan).unwrap().0;
    let artifact = Artifact::from_bytes(&bytes).unwrap();
    assert_eq!(artifact.group_stats(0).unwrap().combs, 1);
    // The only group's blob starts the groups section; its only part record follows the head.
    let head = GroupHead::decode(&bytes[GROUPS_START..]);
    let blob = GROUPS_START..GROUPS_START + head.len as usize;
    let part = PartRecord::decode(&bytes[GROUPS_START + GroupHead::LEN..]);
    // Fewer than 65,536 states: 16-bit slots.
    assert_eq!(part.kind, PART_COMB16);
    let tables = GROUPS_START + part.b as usize;
    let comb = tables..tables + 8 * part.count as usize + 4 * part.slots as usize;
    assert!(part.count > 20 && part.slots > 20, "{part:?}");
    // Set every u32 word of the blob after its checksum, one at a time, to a
    // huge value and fix the checksum: every word of the comb tables (rows,
    // and slots, whose two 16-bit ids that value turns into ids of no state)
    // must then be refused, and no damage anywhere may make opening or a
    // lookup panic.
    let path = b"/a/very/long/unique/literal/rule/number/00042/end";
    let want = artifact.decide(0, path).unwrap();
    let batch: [&[u8]; 3] = [b"/a/very/long/unique/literal/rule/number/00199/end", b"/a/x", path];
    let (mut refused_in_comb, mut refused_first_in_comb) = (0, 0);
    for at in (blob.start + 8..=blob.end - 4).step_by(4) {
        let mut damaged = bytes.clone();
        damaged[at..at + 4].copy_from_slice(&0x7fff_fff0u32.to_ne_bytes());
        let sum = checksum(&damaged[blob.start + 8..blob.end]);
        damaged[blob.start..blob.start + 8].copy_from_slice(&sum.to_ne_bytes());
        // The header's digest too, so that only the checks behind the checksums stand.
        reseal(&mut damaged);
        let names_origin = |e: &ArtifactError| assert!(e.to_string().contains("https://s.example"), "{e}");
        let opened = Artifact::from_bytes(&damaged).unwrap();
        let first = opened.decide(opened.group_of(0, 0), path);
        match &first {
            Err(e) => {
                names_origin(e);
                refused_first_in_comb += usize::from(comb.contains(&at));
            }
            // Damage the checks refuse (a change they accept is another
            // valid artifact) gives the undamaged answer or an error.
            Ok(got) => assert!(
                Artifact::from_bytes(&damaged).unwrap().verify().is_ok() || *got == want,
                "byte {at}: a first lookup gave another answer"
            ),
        }
        // Several first lookups side by side refuse exactly when one of
        // them alone does, with its message, and otherwise answer each as alone.
        let alone: Vec<_> = batch
            .iter()
            .map(|p| Artifact::from_bytes(&damaged).unwrap().decide(0, p).map_err(|e| e.to_string()))
            .collect();
        let queries: Vec<(usize, &[u8])> = batch.iter().map(|p| (0, *p)).collect();
        let mut together = Vec::new();
        match Artifact::from_bytes(&damaged).unwrap().decide_many(&queries, &mut together) {
            Err(e) => assert_eq!(Some(e.to_string()), alone.iter().find_map(|a| a.clone().err()), "byte {at}"),
            Ok(()) => assert_eq!(together.into_iter().map(Ok).collect::<Vec<_>>(), alone, "byte {at}"),
        }
        let whole = Artifact::from_bytes(&damaged).unwrap();
        let compiled = whole.compiled_group(0).map(|_| ());
        let verified = whole.verify();
        assert_eq!(first.is_err(), verified.is_err(), "byte {at}: verify and the first lookup disagree");
        assert_eq!(compiled.is_err(), verified.is_err(), "byte {at}: verify and compiled_group disagree");
        match verified {
            Err(e) => {
                names_origin(&e);
                refused_in_comb += usize::from(comb.contains(&at));
            }
            Ok(()) => assert!(!comb.contains(&at), "a huge value at byte {at} of the comb tables was accepted"),
        }
    }
    assert_eq!(refused_in_comb, comb.len() / 4);
    // A first lookup checks the whole group: it refuses every damaged word
    // of the comb, whether its walk reads it or not.
    assert_eq!(refused_first_in_comb, comb.len() / 4);
}

/// A shard file that holds an origin of another shard is refused at open,
/// naming the file and the origin.
#[test]
fn a_shard_holding_another_shards_origin_is_refused() {
    use robotsieve_compiler::build::build;
    use robotsieve_engine::ArtifactWriter;
    use robotsieve_engine::ShardInfo;
    use robotsieve_engine::ShardSetProblem;
    use robotsieve_engine::{shard_file_name, ShardSet, SHARD_SCHEME};
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<_> = (0..20)
        .map(|i| (format!("https://site{i}.example/robots.txt"), b"user-agent: *\ndisallow: /x\n".to_vec()))
        .collect();
    let plan = BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions::default());
    // Both files get every origin: each holds some of the other's.
    for k in 0..2 {
        let path = dir.path().join(shard_file_name(k, 2));
        let mut writer = ArtifactWriter::create(&path, vec!["mybot".into()], false, 1 << 20).unwrap();
        writer.set_shard(ShardInfo { index: k, count: 2, scheme: SHARD_SCHEME.into() });
        build(resolve(&records), &plan, &mut writer, |_| {}).unwrap();
        writer.finish().unwrap();
    }
    let err = ShardSet::open(dir.path()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains(&shard_file_name(0, 2)) && message.contains("which belongs to shard 1"), "{message}");
    assert!(message.contains("https://site"), "{message}");
    // Code can tell the problem from the others, and sees where it is.
    let first = dir.path().join(shard_file_name(0, 2));
    let ArtifactError::ShardSet { problem, .. } = &err else { panic!("{err:?}") };
    assert!(
        matches!(problem.as_ref(), ShardSetProblem::ForeignOrigin { file, index: 0, belongs: 1, origin }
            if *file == first && origin.starts_with("https://site")),
        "{problem:?}"
    );
}

/// A META section that is not the JSON this build writes: a typed problem
/// that says what was expected where, with the message of old.
#[test]
fn a_damaged_meta_section_says_what_was_expected_where() {
    use robotsieve_engine::Meta;
    use robotsieve_engine::MetaProblem;
    let cases: [(&str, MetaProblem, &str); 4] = [
        (r#"{"agents":[1]}"#, MetaProblem::Expected { expected: b'"', at: 11 }, r#"expected '"' at byte 11"#),
        (
            r#"{"agent":[]}"#,
            MetaProblem::Key { expected: "agents", found: "agent".into() },
            r#"expected key "agents", found "agent""#,
        ),
        (r#"{"agents":["a"#, MetaProblem::UnterminatedString, "unterminated string"),
        (r#"{"agents":["\x"]}"#, MetaProblem::UnsupportedEscape { at: 14 }, "unsupported escape at byte 14"),
    ];
    for (json, problem, message) in cases {
        let found = Meta::from_json(json).unwrap_err();
        assert_eq!(found, problem, "{json}");
        assert_eq!(found.to_string(), message, "{json}");
    }
    let shard = r#"{"agents":[],"build":{},"shard":{"index":x"#;
    assert_eq!(Meta::from_json(shard).unwrap_err(), MetaProblem::Number { at: 41 });
}

/// Bodies with preference lines in varied groups: the artifact gives each
/// origin and crawler the lines `Group::select` keeps (line numbers only
/// with --explain), shares equal lists, and has no preferences section when
/// no body has a line.
#[test]
fn preferences_through_the_artifact_equal_group_selection() {
    use robotsieve_engine::Section;
    use robotsieve_robotstxt::{Group, RobotsTxt};
    let bodies = [
        "User-Agent: *\nContent-Signal: ai-train=no, search=yes, ai-input=yes\nAllow: /\n",
        "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /docs/ train-ai=y\n",
        "User-agent: gptbot\nContent-Usage: / train-ai=n\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n",
        "User-agent: *\nDisallow: /x\n",
        "Content-Signal: ai-train=no\nUser-agent: *\nDisallow:\n",
    ];
    let records: Vec<_> = (0..20)
        .map(|i| (format!("https://s{i}.example/robots.txt"), bodies[i % bodies.len()].as_bytes().to_vec()))
        .collect();
    let agents = vec![Agent::parse("gptbot").unwrap(), Agent::parse("ccbot").unwrap()];
    for explain in [false, true] {
        let plan = BuildPlan::new(agents.clone(), BuildOptions { explain, ..BuildOptions::default() });
        let bytes = build_bytes(resolve(&records), &plan).unwrap().0;
        let artifact = Artifact::from_bytes(&bytes).unwrap();
        let table = artifact.preferences().expect("a preferences section");
        // gptbot: bodies 0, 1, 2; ccbot: bodies 0, 1 (body 2's `*` group has none).
        assert_eq!(table.sets(), 3, "equal lists are shared");
        for i in 0..20 {
            let key = OriginKey::of_url(format!("https://s{i}.example/")).unwrap();
            let origin = artifact.find_origin(key.as_bytes(), key.hash64()).unwrap();
            let robots = RobotsTxt::parse(bodies[i % bodies.len()].as_bytes());
            for (a, agent) in agents.iter().enumerate() {
                let mut expected = Group::select(&robots, agent).preferences;
                if !explain {
                    expected.iter_mut().for_each(|p| p.line = 0);
                }
                assert_eq!(artifact.preference_lines(origin, a), expected, "s{i} {agent} explain={explain}");
                let named = Group::select(&robots, agent).source == robotsieve_robotstxt::group::Source::Specific;
                assert_eq!(artifact.names_agent(origin, a), named, "s{i} {agent}");
                assert_eq!(named, i % bodies.len() == 2 && a == 0);
            }
        }
    }
    let without: Vec<_> = records.iter().filter(|(_, b)| !b.windows(7).any(|w| w == b"Content")).cloned().collect();
    let plan = BuildPlan::new(agents, BuildOptions::default());
    let artifact = Artifact::from_bytes(&build_bytes(resolve(&without), &plan).unwrap().0).unwrap();
    assert!(artifact.preferences().is_none());
    assert!(artifact.section_sizes().contains(&(Section::Preferences, 0)));
}

/// Each origin's sitemaps and each crawler's crawl-delay through the
/// artifact equal what the file says (`RobotsTxt::sitemaps`,
/// `Group::crawl_delays`: every value), shared lists are stored once, a blocked or
/// unrestricted origin has none, verdicts do not depend on them, and an
/// artifact of files without any has no such section.
#[test]
fn sitemaps_and_crawl_delays_through_the_artifact_equal_the_file() {
    use robotsieve_engine::Section;
    use robotsieve_robotstxt::{Group, RobotsTxt};
    let bodies = [
        "User-agent: *\nCrawl-delay: 10\nDisallow: /x\nSitemap: https://a.example/sitemap.xml\n",
        "Sitemap: https://b.example/1.xml\nsitemap: https://b.example/2.xml\nUser-agent: gptbot\nCrawl-delay: 0.5\ncrawl-delay: 3\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n",
        "User-agent: *\nDisallow: /x\n",
        "User-agent: *\nCrawl-delay: 10\nDisallow: /y\n",
    ];
    let mut records: Vec<_> = (0..12)
        .map(|i| (format!("https://s{i}.example/robots.txt"), bodies[i % bodies.len()].as_bytes().to_vec()))
        .collect();
    records.push(("https://gone.example/robots.txt".into(), Vec::new()));
    let agents = vec![Agent::parse("gptbot").unwrap(), Agent::parse("ccbot").unwrap()];
    let plan = BuildPlan::new(agents.clone(), BuildOptions::default());
    let artifact = Artifact::from_bytes(&build_bytes(resolve(&records), &plan).unwrap().0).unwrap();
    let (_, crawl_bytes) = artifact.section_sizes().into_iter().find(|(s, _)| *s == Section::Crawl).unwrap();
    assert!(crawl_bytes > 0);
    for i in 0..12 {
        let key = OriginKey::of_url(format!("https://s{i}.example/")).unwrap();
        let origin = artifact.find_origin(key.as_bytes(), key.hash64()).unwrap();
        let robots = RobotsTxt::parse(bodies[i % bodies.len()].as_bytes());
        assert_eq!(artifact.sitemaps(origin).unwrap(), robots.sitemaps(), "s{i}");
        for (a, agent) in agents.iter().enumerate() {
            assert_eq!(artifact.crawl_delay(origin, a).unwrap(), Group::crawl_delay(&robots, agent), "s{i} {agent}");
            assert_eq!(artifact.crawl_delays(origin, a).unwrap(), Group::crawl_delays(&robots, agent), "s{i} {agent}");
        }
    }
    let key = OriginKey::of_url("https://s1.example/").unwrap();
    let s1 = artifact.find_origin(key.as_bytes(), key.hash64()).unwrap();
    assert_eq!(artifact.crawl_delay(s1, 0).unwrap(), Some(&b"0.5"[..]), "the first of the crawler's group");
    assert_eq!(artifact.crawl_delays(s1, 0).unwrap(), [&b"0.5"[..], b"3"], "every value, in file order");
    assert_eq!(artifact.crawl_delay(s1, 1).unwrap(), None, "the * group has none");
    // Lists are shared: 2 sitemap lists and 2 distinct crawl-delay lists (["10"], ["0.5", "3"]) for 12 origins.
    let text =
        ["https://a.example/sitemap.xml", "https://b.example/1.xml", "https://b.example/2.xml", "10", "0.5", "3"];
    let expected = 24 + 13 * 3 * 4 + 4 * 4 + 6 * 8 + text.iter().map(|t| t.len()).sum::<usize>();
    assert_eq!(crawl_bytes, expected, "each distinct list once");
    let key = OriginKey::of_url("https://gone.example/").unwrap();
    let gone = artifact.find_origin(key.as_bytes(), key.hash64()).unwrap();
    assert!(artifact.sitemaps(gone).unwrap().is_empty() && artifact.crawl_delay(gone, 1).unwrap().is_none());
    // A damaged section opens (no verdict reads it) and is refused on first use and by verify.
    let bytes = build_bytes(resolve(&records), &plan).unwrap().0;
    let header = Header::decode(&bytes).unwrap();
    let entry = (0..header.sections as usize)
        .map(|i| robotsieve_engine::testing::SectionEntry::decode(&bytes[HEADER_LEN + i * 32..]).unwrap())
        .find(|e| e.section == Section::Crawl)
        .unwrap();
    let mut damaged = bytes.clone();
    damaged[entry.offset as usize + entry.len as usize - 1] ^= 0x40;
    let opened = Artifact::from_bytes(&damaged).unwrap();
    let err = opened.sitemaps(0).unwrap_err().to_string();
    assert!(err.contains("sitemaps and crawl-delays: checksum mismatch"), "{err}");
    assert!(opened.crawl_delay(0, 0).is_err() && opened.verify().is_err());
    assert_eq!(
        opened.decide(opened.group_of(0, 0), b"/").unwrap(),
        artifact.decide(artifact.group_of(0, 0), b"/").unwrap()
    );
    // No sitemap, no crawl-delay: no section.
    let without = resolve(&[("https://c.example/robots.txt".to_string(), bodies[2].as_bytes().to_vec())]);
    let artifact = Artifact::from_bytes(&build_bytes(without, &plan).unwrap().0).unwrap();
    assert!(artifact.section_sizes().contains(&(Section::Crawl, 0)));
}

/// Flipped bytes inside the preferences section are caught (by the section's
/// checksum, and by the section's own checks when the checksums are made to match).
#[test]
fn damaged_preferences_are_refused() {
    use robotsieve_engine::testing::{checksum, SectionEntry, GROUPS_START};
    use robotsieve_engine::Section;
    let records = vec![(
        "https://a.example/robots.txt".to_string(),
        b"User-agent: *\nContent-Usage: /d train-ai=n\nDisallow: /x\n".to_vec(),
    )];
    let plan = BuildPlan::new(vec![Agent::parse("mybot").unwrap()], BuildOptions::default());
    let bytes = build_bytes(resolve(&records), &plan).unwrap().0;
    let header = Header::decode(&bytes).unwrap();
    let (at_entry, entry) = (0..header.sections as usize)
        .map(|i| HEADER_LEN + i * SectionEntry::LEN)
        .map(|at| (at, SectionEntry::decode(&bytes[at..]).unwrap()))
        .find(|(_, e)| e.section == Section::Preferences)
        .expect("a preferences section");
    let (start, len) = (entry.offset as usize, entry.len as usize);
    assert!(len > 16);
    // Its first 16 bytes are counts.
    let mut refused = 0;
    for at in start..start + 16 {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        assert!(Artifact::from_bytes(&damaged).is_err(), "flip at {at} unnoticed");
        let fixed = SectionEntry { checksum: checksum(&damaged[start..start + len]), ..entry };
        damaged[at_entry..at_entry + SectionEntry::LEN].copy_from_slice(&fixed.encode());
        let sum = Header::checksum_of(&damaged[..GROUPS_START]);
        damaged[Header::CHECKSUM_AT].copy_from_slice(&sum.to_ne_bytes());
        refused += usize::from(Artifact::from_bytes(&damaged).is_err());
    }
    assert_eq!(refused, 16, "a count changed is refused even with valid checksums");
}

/// A group blob of an artifact built without `--explain` that claims an
/// explanation table (count 1, at an offset near `u32::MAX`, past the file,
/// or at 0) is refused (on first use, or by `verify`), checksums or not: `rule` would read any
/// group's table (found by the `artifact_file` fuzz target on format 3,
/// fuzz/regressions/artifact_file/; format 4 refuses any explanation table
/// in an artifact without explanations).
#[test]
fn explanation_tables_out_of_range_are_refused_without_explain_too() {
    use robotsieve_engine::testing::GROUPS_START;
    use robotsieve_engine::testing::{reseal, GroupHead};
    let bytes = sample_bytes(false);
    let artifact = Artifact::from_bytes(&bytes).unwrap();
    assert!(!artifact.explains() && artifact.groups() > 0);
    let mut blob = GROUPS_START;
    for group in 0..artifact.groups() {
        let head = GroupHead::decode(&bytes[blob..]);
        for off in [u32::MAX - 8, bytes.len() as u32, 0] {
            let mut damaged = bytes.clone();
            GroupHead { explain_count: 1, explain_off: off, ..head }.encode(&mut damaged[blob..]);
            reseal(&mut damaged);
            let opened = Artifact::from_bytes(&damaged).unwrap();
            let err = opened.verify().expect_err("an explanation table out of range was accepted");
            assert!(opened.rule(group, 0).is_err() && opened.rule_count(group).is_err(), "group {group}, offset {off}");
            assert!(err.to_string().contains("explanation"), "group {group}, offset {off}: {err}");
        }
        blob += head.len as usize;
    }
}
