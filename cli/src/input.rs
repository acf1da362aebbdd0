//! Reading what the user names on the command line: files, or `-` for stdin,
//! and a crawler's view of an artifact or shard set.

use crate::failure::{fail, Context, Failure};
use robotsieve_core::url::PathMode;
use robotsieve_engine::AgentClassifier;
use robotsieve_engine::ShardSet;
use robotsieve_robotstxt::group::UserAgent;
use robotsieve_robotstxt::Agent;
use std::io::Read;
use std::path::Path;

/// Reads a whole file, or standard input for `-`.
pub fn read_all(path: &Path) -> Result<Vec<u8>, Failure> {
    if path == Path::new("-") {
        let mut body = Vec::new();
        std::io::stdin().read_to_end(&mut body).context("standard input")?;
        Ok(body)
    } else {
        std::fs::read(path).context(path.display())
    }
}

/// Opens the artifact file or shard-set directory at `path`.
pub fn open_rules(path: &Path) -> Result<ShardSet, Failure> {
    ShardSet::open(path).map_err(Failure::from)
}

/// Opens the file of shard `index` of `count` at `path` alone, checked
/// against its header (`--shard K/N`).
pub fn open_shard(path: &Path, index: u32, count: u32) -> Result<ShardSet, Failure> {
    ShardSet::open_shard(path, index, count).map_err(Failure::from)
}

/// Reads a list of crawler names: a JSON object keyed by name (the format of
/// ai.robots.txt's `robots.json`), a JSON array of names, or one name a line
/// (`#` comments). A name that is not a product token (`AI2Bot`, `Kangaroo
/// Bot`) is read as Google reads a `user-agent` line, as its leading run of
/// letters, `-` and `_` (`AI`, `Kangaroo`), with a warning naming it on
/// standard error; names that read the same (without case) count once, and
/// one that reads as nothing is skipped with a warning.
pub fn agents_file(path: &Path) -> Result<Vec<Agent>, Failure> {
    let text = read_all(path)?;
    let text = String::from_utf8_lossy(&text);
    let names: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
        Ok(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| fail!("{}: the array holds a non-string {v}", path.display()))
            })
            .collect::<Result<_, _>>()?,
        Ok(other) => {
            return Err(fail!("{}: expected a JSON object or array of crawler names, found {other}", path.display()))
        }
        Err(_) => text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    };
    let mut agents: Vec<Agent> = Vec::new();
    for name in &names {
        let token = match UserAgent::read(name.as_bytes()) {
            UserAgent::Global => {
                eprintln!("robotsieve: warning: {}: \"*\" is not a crawler, skipped", path.display());
                continue;
            }
            UserAgent::Token(token) => String::from_utf8_lossy(token).into_owned(),
        };
        if token.is_empty() {
            eprintln!("robotsieve: warning: {}: \"{name}\" has no leading letter, '-' or '_': Google reads it as naming no crawler; skipped", path.display());
            continue;
        }
        if token != *name {
            eprintln!("robotsieve: warning: {}: \"{name}\" is not a product token; read as Google reads a user-agent line: \"{token}\"", path.display());
        }
        let agent = Agent::parse(&token).map_err(|e| fail!("{}: {e}", path.display()))?;
        if agents.contains(&agent) {
            eprintln!(
                "robotsieve: warning: {}: \"{name}\" reads as \"{token}\", already listed: counted once",
                path.display()
            );
            continue;
        }
        agents.push(agent);
    }
    if agents.is_empty() {
        return Err(fail!("{}: no crawler names", path.display()));
    }
    Ok(agents)
}

/// The classifier of `agent` in the artifact or shard set at `path`: the one
/// place that knows how an agent is looked up.
pub fn agent_classifier<'a>(
    artifact: &'a ShardSet,
    path: &Path,
    agent: &str,
    mode: PathMode,
) -> Result<AgentClassifier<'a>, Failure> {
    Ok(AgentClassifier::new(artifact, agent_index(artifact, path, agent)?, mode))
}

/// The number of `agent` in the artifact at `path`, or why it has none.
pub fn agent_index(artifact: &ShardSet, path: &Path, agent: &str) -> Result<usize, Failure> {
    let agent = Agent::parse(agent).map_err(|e| fail!("--agent: {e}"))?;
    artifact.find_agent(&agent.to_string()).map_err(|e| fail!("{}: {e}", path.display()))
}
