//! The shape of the workspace, checked so that it changes only on purpose:
//! which crate depends on which (as `cargo metadata` reads the manifests),
//! what the lower crates must never pull in, and that no crate's top-level
//! modules import each other in a circle.
//!
//! The library crates' graph is the one ARCHITECTURE.md draws (its first
//! `text` block under "Crates", one `crate -> dep, dep` line a crate); the
//! applications and test tools on top are listed here.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The applications and test tools, with the workspace crates each depends
/// on for its library and binaries (not its tests).
const APPLICATIONS: &[(&str, &[&str])] = &[
    (
        "robotsieve-cli",
        &[
            "robotsieve-compiler",
            "robotsieve-core",
            "robotsieve-engine",
            "robotsieve-fetch",
            "robotsieve-filter",
            "robotsieve-lint",
            "robotsieve-page",
            "robotsieve-robotstxt",
            "robotsieve-sources",
        ],
    ),
    (
        "robotsieve-python",
        &[
            "robotsieve-compiler",
            "robotsieve-core",
            "robotsieve-engine",
            "robotsieve-fetch",
            "robotsieve-filter",
            "robotsieve-robotstxt",
            "robotsieve-sources",
        ],
    ),
    (
        "robotsieve-testkit",
        &[
            "robotsieve-compiler",
            "robotsieve-core",
            "robotsieve-engine",
            "robotsieve-filter",
            "robotsieve-lint",
            "robotsieve-page",
            "robotsieve-robotstxt",
            "robotsieve-sources",
        ],
    ),
    (
        "robotsieve-benches",
        &[
            "robotsieve-compiler",
            "robotsieve-core",
            "robotsieve-engine",
            "robotsieve-filter",
            "robotsieve-page",
            "robotsieve-robotstxt",
            "robotsieve-sources",
            "robotsieve-testkit",
        ],
    ),
];

/// Crates that a lower crate must not depend on, directly or through
/// another: the parser builds without the pipeline's and the file's
/// machinery, the corpus readers without the thread pool and mappings.
const FORBIDDEN: &[(&str, &[&str])] = &[];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `cargo metadata` of the workspace, with the resolved graph.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// For each package id: its name, and the ids of the packages it depends
/// on for its library and binaries (normal and build dependencies).
fn normal_graph(meta: &Value) -> (BTreeMap<String, String>, BTreeMap<String, Vec<String>>) {
    let names = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_string(), p["name"].as_str().unwrap().to_string()))
        .collect();
    let mut edges = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].as_str() != Some("dev")))
            .map(|d| d["pkg"].as_str().unwrap().to_string())
            .collect();
        edges.insert(node["id"].as_str().unwrap().to_string(), deps);
    }
    (names, edges)
}

#[test]
fn the_crate_graph_is_the_one_drawn() {
    let meta = metadata();
    let (names, edges) = normal_graph(&meta);
    let members: BTreeSet<&str> =
        meta["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let mut actual = BTreeMap::new();
    for id in &members {
        let name = names[*id].as_str();
        let on: BTreeSet<&str> =
            edges[*id].iter().filter(|d| members.contains(d.as_str())).map(|d| names[d].as_str()).collect();
        actual.insert(name, on);
    }
    let drawing = drawn_graph();
    let mut intended: BTreeMap<&str, BTreeSet<&str>> =
        drawing.iter().map(|(name, on)| (name.as_str(), on.iter().map(String::as_str).collect())).collect();
    for (name, on) in APPLICATIONS {
        intended.insert(name, on.iter().copied().collect());
    }
    assert_eq!(actual, intended, "the workspace's dependencies differ from ARCHITECTURE.md's drawing");
}

/// The library crates' graph as ARCHITECTURE.md draws it: each line of the
/// first `text` block after its "## Crates" heading is `crate -> dep, dep`
/// (or `crate -> (none)`), names without the `robotsieve-` prefix.
fn drawn_graph() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let crates = doc.find("## Crates").expect("ARCHITECTURE.md has a Crates section");
    let block = doc[crates..].find("```text\n").expect("a text block under Crates") + crates + "```text\n".len();
    let len = doc[block..].find("```").expect("the text block ends");
    let mut graph = BTreeMap::new();
    for line in doc[block..block + len].lines().filter(|l| !l.trim().is_empty()) {
        let (name, deps) = line.split_once("->").unwrap_or_else(|| panic!("not `crate -> deps`: {line}"));
        let deps = deps.trim();
        let on = if deps == "(none)" {
            BTreeSet::new()
        } else {
            deps.split(',').map(|d| format!("robotsieve-{}", d.trim())).collect()
        };
        graph.insert(format!("robotsieve-{}", name.trim()), on);
    }
    assert!(graph.len() >= 9, "the drawing names every library crate: {graph:?}");
    graph
}

/// The names of every package `krate` depends on, directly or through
/// another (in the graph [`normal_graph`] reads).
fn reached_from<'a>(
    names: &'a BTreeMap<String, String>,
    edges: &BTreeMap<String, Vec<String>>,
    krate: &str,
) -> BTreeSet<&'a str> {
    let start = names.iter().find(|(_, n)| *n == krate).map(|(id, _)| id.clone()).expect(krate);
    let mut seen = BTreeSet::new();
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        for dep in &edges[&id] {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen.iter().map(|id| names[id].as_str()).collect()
}

#[test]
fn lower_crates_pull_in_nothing_they_must_not() {
    let meta = metadata();
    let (names, edges) = normal_graph(&meta);
    for (krate, forbidden) in FORBIDDEN {
        let reached = reached_from(&names, &edges, krate);
        for name in *forbidden {
            assert!(!reached.contains(name), "{krate} depends on {name}, directly or through another crate");
        }
    }
}

/// The packages of the async runtime and the HTTP stack: they belong to the
/// fetch crate, and to the front ends that link it, and to no other crate.
const NETWORK_STACK: &[&str] = &["tokio", "hyper", "rustls", "hickory-resolver"];

#[test]
fn the_network_stack_stays_in_fetch_and_the_front_ends() {
    let meta = metadata();
    let (names, edges) = normal_graph(&meta);
    for krate in drawn_graph().keys().filter(|k| k.as_str() != "robotsieve-fetch") {
        for name in reached_from(&names, &edges, krate) {
            assert!(
                !NETWORK_STACK.contains(&name),
                "{krate} depends on {name}, which only fetch and the front ends may"
            );
        }
    }
}

/// The top-level modules of the crate whose `src` is `src`, each with the
/// top-level modules its files name as `crate::MODULE` (in `use` or in
/// paths; doc links and comments aside).
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() && path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "lib" || name == "main" || name == "bin" {
            continue;
        }
        let mut files = Vec::new();
        collect_rs(&path, &mut files);
        let imports: &mut BTreeSet<String> = modules.entry(name.clone()).or_default();
        for file in files {
            for line in std::fs::read_to_string(&file).unwrap().lines() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                let code = code.split("//").next().unwrap();
                for (at, _) in code.match_indices("crate::") {
                    let before = code[..at].chars().next_back();
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let rest = &code[at + "crate::".len()..];
                    let target: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !target.is_empty() && target != name {
                        imports.insert(target);
                    }
                }
            }
        }
    }
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    for imports in modules.values_mut() {
        imports.retain(|m| known.contains(m));
    }
    modules
}

fn collect_rs(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            collect_rs(&entry.unwrap().path(), files);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        files.push(path.to_path_buf());
    }
}

/// A circle of modules in `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in &graph[node] {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|m| m == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(next, graph, state, path) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            if let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

/// Module circles that exist today and are allowed to stay, as
/// `(crate, module, module)`: a circle through these two modules is
/// reported only if it is another one.
const KNOWN_CIRCLES: &[(&str, &str, &str)] = &[("robotsieve-lint", "walk", "effects")];

#[test]
fn no_crate_has_a_circle_of_modules() {
    let meta = metadata();
    let members: BTreeSet<&str> =
        meta["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let mut checked = 0;
    for package in meta["packages"].as_array().unwrap() {
        if !members.contains(package["id"].as_str().unwrap()) {
            continue;
        }
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        let src = manifest.parent().unwrap().join("src");
        if !src.is_dir() {
            continue;
        }
        let name = package["name"].as_str().unwrap();
        let mut graph = module_imports(&src);
        for (krate, from, to) in KNOWN_CIRCLES {
            if *krate == name {
                if let Some(imports) = graph.get_mut(*from) {
                    imports.remove(*to);
                }
            }
        }
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{name}: the modules {} import each other in a circle", cycle.join(" -> "));
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} crates were checked");
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["a".to_string()].into()),
        ("d".to_string(), BTreeSet::new()),
    ]
    .into();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&acyclic), None);
}

/// The items a crate's root declares public (`pub mod`, `pub use`d names,
/// root functions, types and constants), sorted, from its `src/lib.rs`.
fn root_items(krate: &str) -> Vec<String> {
    let lib = std::fs::read_to_string(workspace_root().join(krate).join("src/lib.rs")).unwrap();
    let mut items = Vec::new();
    let mut statement = String::new();
    for line in lib.lines() {
        if statement.is_empty() && !line.starts_with("pub ") {
            continue;
        }
        statement.push_str(line.trim());
        statement.push(' ');
        let complete = !statement.starts_with("pub use") || statement.trim_end().ends_with(';');
        if !complete {
            continue;
        }
        let text = std::mem::take(&mut statement);
        let mut words = text.split_whitespace();
        words.next();
        let kind = words.next().unwrap_or_default();
        if kind == "use" {
            let tree = text["pub use ".len()..].trim().trim_end_matches(';');
            let names = match tree.find('{') {
                Some(open) => tree[open + 1..tree.rfind('}').unwrap()].split(',').map(str::to_string).collect(),
                None => vec![tree.rsplit("::").next().unwrap().to_string()],
            };
            for name in names {
                let name = name.trim();
                if !name.is_empty() {
                    items.push(name.rsplit(" as ").next().unwrap().to_string());
                }
            }
        } else {
            let name: String =
                words.next().unwrap_or_default().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            items.push(format!("{kind} {name}"));
        }
    }
    items.sort();
    items
}

/// Asserts that `krate`'s root declares exactly `expected` (in any order).
fn assert_root(krate: &str, expected: &[&str]) {
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(root_items(krate), expected, "{krate}'s public root changed: update this list on purpose");
}

#[test]
fn core_root() {
    assert_root(
        "core",
        &[
            "mod arch",
            "mod line",
            "mod pattern",
            "mod preference",
            "mod url",
            "Label",
            "LineProblem",
            "MAX_LINE",
            "PreferenceField",
            "PreferenceLine",
            "KeyBuf",
            "Origin",
            "OriginKey",
            "PathMode",
            "Scheme",
            "UrlError",
            "Verdict",
        ],
    );
}

#[test]
fn engine_root() {
    assert_root(
        "engine",
        &[
            "Accel",
            "AgentClassifier",
            "Answer",
            "Artifact",
            "ArtifactError",
            "ArtifactHead",
            "ArtifactWriter",
            "CombDfa",
            "CombDfaRef",
            "CompiledGroup",
            "CrawlRefs",
            "DEFAULT_MEMORY",
            "Damage",
            "DamageKind",
            "Dfa",
            "DfaError",
            "DfaRef",
            "EncodeError",
            "ExplainedRule",
            "FORMAT_VERSION",
            "FetchClass",
            "FetchFacts",
            "FetchInfo",
            "FetchKind",
            "GroupDamage",
            "GroupOutcome",
            "GroupStats",
            "GroupTable",
            "LoneShard",
            "MAX_PARTS",
            "Matcher",
            "MatcherError",
            "MatcherRef",
            "MatrixClassifier",
            "MatrixScratch",
            "Meta",
            "MetaProblem",
            "NarrowComb",
            "Outcome",
            "OutputError",
            "Owned",
            "Part",
            "PartProblem",
            "PartTables",
            "PendingFile",
            "PreferenceTable",
            "Prefilter",
            "Reason",
            "RuleList",
            "RuleListError",
            "RuleListRef",
            "RuleText",
            "SEMANTICS_VERSION",
            "SHARD_SCHEME",
            "Scratch",
            "Section",
            "Selection",
            "ShardInfo",
            "ShardSet",
            "ShardSetProblem",
            "SlotId",
            "SlotTable",
            "StateId",
            "TransitionTable",
            "UnknownAgent",
            "VersionMismatch",
            "Versioned",
            "WriteError",
            "encode_group",
            "install_signal_cleanup",
            "mod testing",
            "release_mapped",
            "remove_pending_files",
            "shard_file_name",
            "shard_of_hash",
            "shard_of_url",
            "write_atomically",
        ],
    );
}

#[test]
fn filter_root() {
    assert_root(
        "filter",
        &[
            "mod testing",
            "Outputs",
            "TsvChunk",
            "TsvFormat",
            "partitions_for",
            "ChunkReader",
            "ChunkSink",
            "ChunkWorker",
            "Classifier",
            "Config",
            "FilterError",
            "Format",
            "Grouping",
            "Input",
            "Pipeline",
            "Progress",
            "Reasons",
            "Report",
            "Sink",
            "Stats",
            "BATCH",
            "DEFAULT_CHUNK_SIZE",
        ],
    );
}

#[test]
fn robotstxt_root() {
    assert_root(
        "robotstxt",
        &[
            "mod group",
            "mod parse",
            "mod preference",
            "Agent",
            "Decision",
            "Group",
            "Position",
            "Rule",
            "Segmenter",
            "Source",
            "UserAgent",
            "Verb",
            "RobotsTxt",
        ],
    );
}

#[test]
fn sources_root() {
    assert_root(
        "sources",
        &[
            "mod bounded",
            "mod compaction",
            "mod corpus",
            "mod freshness",
            "mod http",
            "mod runs",
            "mod status",
            "mod time",
            "mod warc",
            "CachePolicy",
            "CacheRule",
            "CompactionStats",
            "CopyFacts",
            "FetchDetails",
            "Freshness",
            "UrlFreshness",
            "compact",
            "corpus_freshness",
            "Corpus",
            "CorpusError",
            "CorpusProblem",
            "FetchRecord",
            "Governing",
            "RecordError",
            "Resolution",
            "Robots",
            "HttpError",
            "HttpResponse",
            "TimeError",
            "Timestamp",
            "WarcError",
            "WarcReader",
            "WarcRecord",
        ],
    );
}

#[test]
fn compiler_root() {
    assert_root(
        "compiler",
        &[
            "mod automaton",
            "mod build",
            "compile",
            "BuildOptions",
            "BuildPlan",
            "compile_corpus",
            "CompileError",
            "CompileEvents",
            "CompileOptions",
            "CompileReport",
            "Outputs",
            "Resolved",
        ],
    );
}

#[test]
fn fetch_root() {
    assert_root(
        "fetch",
        &[
            "mod test_server",
            "const MAX_BODY",
            "run",
            "DnsOptions",
            "Ending",
            "ErrorClass",
            "FetchError",
            "FetchOptions",
            "fetch_records",
            "fetch_to_file",
            "partial_path",
            "Progress",
            "ProgressReading",
            "Proxy",
            "read_hosts_file",
            "Record",
            "registrable_domain",
            "ResolveOverride",
            "RunError",
            "RunPaths",
            "site_of_line",
            "Summary",
            "Target",
            "TargetScheme",
            "targets_of_line",
        ],
    );
}
