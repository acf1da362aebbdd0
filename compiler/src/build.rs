//! From robots.txt fetch results for many origins to one artifact.
//!
//! Most sites serve one of a few common files, and most files give the same
//! group to several crawlers, so the work is deduplicated twice: each distinct
//! body is parsed once, and each distinct group is compiled once and shared by
//! every origin and crawler it applies to. Parsing and compiling run in
//! parallel (rayon) over the distinct bodies and groups.

use crate::automaton::{self, BuildOptions};
use crate::corpus::{Governing, Robots};
use crate::group::{Agent, Group, Rule, Source, Verb};
use crate::parse::RobotsTxt;
use crate::writer::ArtifactWriter;
use rayon::prelude::*;
use robotsieve_engine::artifact::{FetchInfo, FetchKind};
use robotsieve_engine::preference::PreferenceLine;
use robotsieve_engine::preference_store::Selection;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildPlan {
    /// The crawlers, one group per origin each.
    pub agents: Vec<Agent>,
    /// Automaton options (explain mode, budget).
    pub options: BuildOptions,
}

/// Figures about a build, for the user and `inspect`.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// Origins in the artifact.
    pub origins: usize,
    /// Distinct bodies parsed.
    pub bodies: usize,
    /// Distinct groups compiled.
    pub groups: usize,
    /// States over all automata.
    pub states: usize,
    /// Groups whose build went over budget and was split.
    pub split_groups: usize,
    /// The slowest group builds: (time, number of rules, an origin using it).
    pub slowest: Vec<(Duration, usize, String)>,
    /// Wall time of parsing and compiling.
    pub elapsed: Duration,
}

/// Parses, selects, deduplicates and compiles; returns a writer ready to write.
pub fn build(origins: Vec<Governing>, plan: &BuildPlan) -> (ArtifactWriter, BuildReport) {
    let started = Instant::now();
    let explain = plan.options.explain;

    // Distinct bodies, parsed once each.
    let mut body_ids: HashMap<&[u8], usize> = HashMap::new();
    let mut bodies: Vec<&[u8]> = Vec::new();
    let origin_body: Vec<Option<usize>> = origins
        .iter()
        .map(|o| match &o.robots {
            Robots::Body(body) => Some(*body_ids.entry(body).or_insert_with(|| {
                bodies.push(body);
                bodies.len() - 1
            })),
            Robots::Unrestricted | Robots::Blocked => None,
        })
        .collect();
    let body_groups: Vec<Vec<Selected>> = bodies
        .par_iter()
        .map(|body| {
            let robots = RobotsTxt::parse(body);
            plan.agents
                .iter()
                .map(|agent| {
                    let mut group = Group::select(&robots, agent);
                    let mut preferences = std::mem::take(&mut group.preferences);
                    if !explain {
                        preferences.iter_mut().for_each(|p| p.line = 0);
                    }
                    let named = group.source == Source::Specific;
                    Selected { group: dedup_form(group, explain), preferences, named }
                })
                .collect()
        })
        .collect();

    // Distinct groups, numbered in order of first use.
    let unrestricted =
        Group { source: Source::Nothing, agent_lines: Vec::new(), rules: Vec::new(), preferences: Vec::new() };
    let blocked = Group {
        source: Source::Nothing,
        agent_lines: Vec::new(),
        rules: vec![Rule { verb: Verb::Disallow, pattern: b"/".to_vec(), line: 0, index_directory: false }],
        preferences: Vec::new(),
    };
    let mut group_ids: HashMap<&Group, u32> = HashMap::new();
    let mut groups: Vec<&Group> = Vec::new();
    let mut first_origin: Vec<usize> = Vec::new();
    let mut origin_groups: Vec<Vec<u32>> = Vec::with_capacity(origins.len());
    let no_preferences: Vec<PreferenceLine> = Vec::new();
    let mut preference_ids: HashMap<&Vec<PreferenceLine>, u32> = HashMap::new();
    let mut preference_sets: Vec<Vec<PreferenceLine>> = Vec::new();
    let mut preference_set_of: Vec<Selection> = Vec::with_capacity(origins.len() * plan.agents.len());
    for (i, (origin, body)) in origins.iter().zip(&origin_body).enumerate() {
        let ids = (0..plan.agents.len())
            .map(|a| {
                let group = match (&origin.robots, body) {
                    (Robots::Body(_), Some(b)) => &body_groups[*b][a].group,
                    (Robots::Blocked, _) => &blocked,
                    _ => &unrestricted,
                };
                *group_ids.entry(group).or_insert_with(|| {
                    groups.push(group);
                    first_origin.push(i);
                    (groups.len() - 1) as u32
                })
            })
            .collect();
        origin_groups.push(ids);
        // The preference lines of each crawler's group, shared like groups.
        let selected: &[Selected] = match (&origin.robots, body) {
            (Robots::Body(_), Some(b)) => &body_groups[*b],
            _ => &[],
        };
        for agent in (0..plan.agents.len()).map(|a| selected.get(a)) {
            let (lines, named) = agent.map_or((&no_preferences, false), |s| (&s.preferences, s.named));
            let set = (!lines.is_empty()).then(|| {
                *preference_ids.entry(lines).or_insert_with(|| {
                    preference_sets.push(lines.clone());
                    (preference_sets.len() - 1) as u32
                })
            });
            preference_set_of.push(Selection { set, named });
        }
    }

    let compiled: Vec<(automaton::Compiled, Duration)> = groups
        .par_iter()
        .map(|group| {
            let t = Instant::now();
            let compiled = automaton::compile(group, &plan.options);
            (compiled, t.elapsed())
        })
        .collect();

    let agent_names = plan.agents.iter().map(|a| a.to_string()).collect();
    let mut writer = ArtifactWriter::new(agent_names, explain);
    let mut report =
        BuildReport { origins: origins.len(), bodies: bodies.len(), groups: groups.len(), ..Default::default() };
    let mut timings = Vec::with_capacity(groups.len());
    for (g, ((compiled, took), group)) in compiled.into_iter().zip(&groups).enumerate() {
        report.states += compiled.stats.states();
        report.split_groups += usize::from(compiled.stats.split);
        timings.push((took, group.rules.len(), origins[first_origin[g]].origin.to_string()));
        writer.add_group(compiled.matcher, group.rules.clone());
    }
    timings.sort_by_key(|t| std::cmp::Reverse(t.0));
    timings.truncate(10);
    report.slowest = timings;
    for (origin, ids) in origins.into_iter().zip(origin_groups) {
        writer.add_origin(origin.origin, fetch_info(&origin.robots, origin.provenance.status), ids);
    }
    writer.set_preferences(preference_set_of, preference_sets);
    report.elapsed = started.elapsed();
    (writer, report)
}

/// One crawler's group of one body: in the form groups are shared in, and
/// what the preferences section keeps beside it.
struct Selected {
    group: Group,
    /// Its preference lines (line numbers 0 without explanations).
    preferences: Vec<PreferenceLine>,
    /// Whether a group of the body names the crawler.
    named: bool,
}

/// What the artifact records of an origin's fetch.
pub fn fetch_info(robots: &Robots, status: u16) -> FetchInfo {
    let kind = match robots {
        Robots::Body(_) => FetchKind::Rules,
        Robots::Unrestricted => FetchKind::Unrestricted,
        Robots::Blocked => FetchKind::Blocked,
    };
    FetchInfo { kind, status }
}

/// The form in which groups are compared for sharing. With explanations,
/// lines matter, so the group is kept whole. Without, only the set of
/// (verb, pattern) pairs decides a verdict, so the rules are sorted and
/// deduplicated and the rest dropped: more origins share one automaton.
/// Preferences never change a verdict, so they are no part of it either.
fn dedup_form(mut group: Group, explain: bool) -> Group {
    group.preferences.clear();
    if explain {
        return group;
    }
    group.agent_lines.clear();
    group.source = Source::Nothing;
    for rule in &mut group.rules {
        rule.line = 0;
        rule.index_directory = false;
    }
    group.rules.sort_by(|a, b| (&a.pattern, a.verb == Verb::Allow).cmp(&(&b.pattern, b.verb == Verb::Allow)));
    group.rules.dedup();
    group
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_engine::artifact::Artifact;
    use robotsieve_engine::url::{OriginKey, PathMode};

    /// Resolves one fetch record per origin, as `compile --corpus` would.
    pub(crate) fn resolve(records: &[(&str, u16, &str)]) -> Vec<Governing> {
        let mut corpus = crate::corpus::Corpus::new();
        let lines: String = records
            .iter()
            .map(|(origin, status, body)| {
                let record = serde_json::json!({"url": format!("{origin}/robots.txt"), "status": status, "body": body});
                format!("{record}\n")
            })
            .collect();
        corpus.add_jsonl_from("test.jsonl".into(), lines.as_bytes()).unwrap();
        corpus.resolve().origins.into_values().collect()
    }

    fn artifact(explain: bool) -> Artifact {
        let body = "user-agent: *\ndisallow: /private\nallow: /private/ok\n\nuser-agent: mybot\ndisallow: /\n";
        let origins = resolve(&[
            ("https://a.example", 200, body),
            ("http://a.example", 200, body),
            ("https://b.example:8443", 200, "user-agent: *\ndisallow: /b$\n"),
            ("https://down.example", 503, ""),
            ("https://gone.example", 404, ""),
        ]);
        let agents = vec![Agent::parse("otherbot").unwrap(), Agent::parse("mybot").unwrap()];
        let plan = BuildPlan { agents, options: BuildOptions { explain, ..BuildOptions::default() } };
        let (writer, report) = build(origins, &plan);
        assert_eq!(report.origins, 5);
        assert_eq!(report.bodies, 2);
        Artifact::from_bytes(&writer.to_bytes().unwrap()).unwrap()
    }

    fn allowed(a: &Artifact, agent: usize, key: &str, path: &str) -> Option<bool> {
        let key = OriginKey::of_url(key).unwrap();
        let origin = a.find_origin(key.as_bytes(), key.hash64())?;
        let path = PathMode::Escaped.path_of(path.as_bytes());
        Some(a.decide(a.group_of(origin, agent), &path).allowed())
    }

    #[test]
    fn round_trip_through_the_artifact() {
        for explain in [false, true] {
            let a = artifact(explain);
            assert_eq!(a.origins(), 5);
            assert_eq!(allowed(&a, 0, "https://a.example", "/private/x"), Some(false));
            assert_eq!(allowed(&a, 0, "https://a.example", "/private/ok"), Some(true));
            assert_eq!(allowed(&a, 1, "http://a.example", "/anything"), Some(false));
            assert_eq!(allowed(&a, 0, "https://b.example:8443", "/b"), Some(false));
            assert_eq!(allowed(&a, 0, "https://b.example:8443", "/bb"), Some(true));
            assert_eq!(allowed(&a, 0, "https://down.example", "/"), Some(false));
            assert_eq!(allowed(&a, 1, "https://gone.example", "/x"), Some(true));
            assert_eq!(allowed(&a, 0, "https://c.example", "/x"), None);
            assert_eq!(allowed(&a, 0, "https://b.example", "/b"), None, "other port, other origin");
        }
    }

    #[test]
    fn explanations_name_the_line() {
        let a = artifact(true);
        assert!(a.explains());
        let key = OriginKey::of_url("https://a.example").unwrap();
        let origin = a.find_origin(key.as_bytes(), key.hash64()).unwrap();
        let outcome = a.decide(a.group_of(origin, 0), b"/private/ok/x");
        let rule = a.explain(&outcome).unwrap();
        assert_eq!((rule.line, rule.allow, rule.pattern), (3, true, &b"/private/ok"[..]));
        assert_eq!(rule.to_string(), "allow: /private/ok");
    }

    #[test]
    fn identical_groups_are_shared() {
        // Without explanations: otherbot on a.example (both schemes) shares one
        // group; mybot's `disallow: /` there is the very group a blocked origin
        // gets; b.example (both agents) and the unrestricted origin one each.
        assert_eq!(artifact(false).groups(), 4);
        // With explanations lines matter: mybot's line-6 rule is not the
        // blocked origin's synthetic rule.
        assert_eq!(artifact(true).groups(), 5);
    }
}
