//! Reading what the user names on the command line: files, or `-` for stdin,
//! and a crawler's view of an artifact.

use crate::failure::{fail, Context, Failure};
use robotsieve_compiler::Agent;
use robotsieve_engine::artifact::Artifact;
use robotsieve_engine::classify::AgentClassifier;
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

/// The classifier of `agent` in the artifact at `path`: the one place that
/// knows how an agent is looked up.
pub fn agent_classifier<'a>(
    artifact: &'a Artifact,
    path: &Path,
    agent: &str,
    mode: PathMode,
) -> Result<AgentClassifier<'a>, Failure> {
    Ok(AgentClassifier::new(artifact, agent_index(artifact, path, agent)?, mode))
}

/// The number of `agent` in the artifact at `path`, or why it has none.
pub fn agent_index(artifact: &Artifact, path: &Path, agent: &str) -> Result<usize, Failure> {
    let agent = Agent::parse(agent).map_err(|e| fail!("--agent: {e}"))?;
    artifact.agent_index(&agent.to_string()).ok_or_else(|| {
        fail!(
            "{}: built for {}, not for {agent}: compile with --agent {agent}",
            path.display(),
            artifact.meta().agents.join(" and ")
        )
    })
}
