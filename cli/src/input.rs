//! Reading what the user names on the command line: files, or `-` for stdin,
//! and a crawler's view of an artifact or shard set.

use crate::failure::{fail, Context, Failure};
use robotsieve_compiler::Agent;
use robotsieve_engine::classify::AgentClassifier;
use robotsieve_engine::shards::ShardSet;
use robotsieve_engine::url::PathMode;
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
    ShardSet::open(path).map_err(|e| fail!("{e}"))
}

/// The classifier of `agent` in the artifact or shard set at `path`: the one
/// place that knows how an agent is looked up.
pub fn agent_classifier<'a>(
    artifact: &'a ShardSet,
    path: &Path,
    agent: &str,
    mode: PathMode,
) -> Result<AgentClassifier<'a>, Failure> {
    let agent = Agent::parse(agent).map_err(|e| fail!("--agent: {e}"))?;
    let Some(index) = artifact.agent_index(&agent.to_string()) else {
        return Err(fail!(
            "{}: built for {}, not for {agent}: compile with --agent {agent}",
            path.display(),
            artifact.meta().agents.join(" and ")
        ));
    };
    Ok(AgentClassifier::new(artifact, index, mode))
}
