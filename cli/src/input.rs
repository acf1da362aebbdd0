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
    let agent = Agent::parse(agent).map_err(|e| fail!("--agent: {e}"))?;
    let index = artifact.find_agent(&agent.to_string()).map_err(|e| fail!("{}: {e}", path.display()))?;
    Ok(AgentClassifier::new(artifact, index, mode))
}
