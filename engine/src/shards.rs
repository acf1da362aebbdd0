//! Shard sets: the origins of one corpus split by a stable hash of the
//! origin key into N artifacts in a directory, compiled anywhere and put
//! together by copying files.
//!
//! The shard of an origin is [`shard_of_hash`] of its key's `origin_hash`
//! (the scheme named [`SHARD_SCHEME`]), published so that other tools can
//! partition URLs the same way. Shard K of N is the file
//! [`shard_file_name`]`(K, N)`; each file says in its META which shard it is,
//! of how many, by which scheme. [`ShardSet::open`] of a directory checks that
//! shards 0..N-1 are all there, agree on everything but K (agents,
//! explanations, count, scheme; format and semantics versions are checked
//! per file at open), and each holds only its own origins, and names the
//! missing or foreign file otherwise. A single artifact is a set of one.
//!
//! A set answers as the one artifact of the same corpus would: origin and
//! group numbers of the set are the shards' numbers laid end to end.
//!
//! A worker that holds only shard K of N opens that file alone with
//! [`ShardSet::open_shard`], checked against the file's own header. It
//! answers every URL of its own origins as the whole set does; a URL whose
//! origin belongs to another shard gets [`ArtifactError::Misrouted`], never
//! `unknown`, so that a URL list split the wrong way never passes unnoticed.
//! The shard holds only its own origins (checked at open), so only a URL
//! whose origin is not found needs the check: found origins cost nothing more.

use crate::artifact::{
    shard_file_name, Artifact, ArtifactError, ExplainedRule, GroupOutcome, GroupStats, Meta, UnknownAgent,
};
use crate::format::{FetchInfo, ShardSetProblem};
use crate::runtime::CompiledGroup;
use robotsieve_core::preference::PreferenceLine;
use robotsieve_core::url::{OriginKey, UrlError};
use std::path::{Path, PathBuf};

/// The name of the shard function: the low 32 bits of the origin key's
/// `origin_hash`, scaled to N (`(low32 * N) >> 32`). The hash's top bits
/// choose a slot within an artifact's origin index, so the two never interfere.
pub const SHARD_SCHEME: &str = "origin_hash-low32-scaled";

/// The shard (0..count) of an origin whose key has `origin_hash` `hash`.
pub fn shard_of_hash(hash: u64, count: u32) -> u32 {
    ((u64::from(hash as u32) * u64::from(count)) >> 32) as u32
}

/// The shard (0..count) of the origin of `url` (any URL of it, or `scheme://host[:port]`).
pub fn shard_of_url(url: &str, count: u32) -> Result<u32, UrlError> {
    let key = OriginKey::of_url(url)?;
    Ok(shard_of_hash(key.hash64(), count))
}

/// One artifact, or a directory of shards, opened and checked.
#[derive(Debug)]
pub struct ShardSet {
    shards: Vec<Artifact>,
    paths: Vec<PathBuf>,
    /// `origin_base[k]`: the set's number of shard k's origin 0; then the total.
    origin_base: Vec<usize>,
    /// The same for groups.
    group_base: Vec<usize>,
    /// The same for preference sets.
    set_base: Vec<usize>,
    /// For one shard opened alone: which shard of how many it is.
    lone: Option<LoneShard>,
}

/// Which shard a shard opened alone is: `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoneShard {
    /// K, from 0.
    pub index: u32,
    /// N.
    pub count: u32,
}

fn set_error(dir: &Path, problem: ShardSetProblem) -> ArtifactError {
    ArtifactError::ShardSet { path: dir.to_path_buf(), problem: Box::new(problem) }
}

impl ShardSet {
    /// Opens an artifact file, or the shard set in a directory.
    pub fn open(path: &Path) -> Result<ShardSet, ArtifactError> {
        if !path.is_dir() {
            let artifact = Artifact::open(path)?;
            if let Some(shard) = artifact.meta().shard.as_ref().filter(|s| s.count > 1) {
                let (index, count) = (shard.index, shard.count);
                return Err(ArtifactError::PartOfSet { path: path.to_path_buf(), index, count });
            }
            return Ok(ShardSet::from_parts(vec![artifact], vec![path.to_path_buf()]));
        }
        let io = |error| ArtifactError::Io { path: path.to_path_buf(), error };
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "rsv"))
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(set_error(path, ShardSetProblem::NoShardFiles));
        }
        let mut opened = Vec::with_capacity(files.len());
        for file in &files {
            opened.push(Artifact::open(file)?);
        }
        ShardSet::assemble(opened, files, path)
    }

    /// Opens the file of shard `index` of `count` alone, for a worker that
    /// holds only that shard: the file's header must say it is that shard
    /// (else [`ArtifactError::WrongShard`], naming the file, the header's
    /// shard and the one asked for), by the scheme this build knows, holding
    /// only its own origins. The set answers its own origins' URLs as the
    /// whole set does, and refuses another shard's ([`ShardSet::check_routed`]).
    pub fn open_shard(path: &Path, index: u32, count: u32) -> Result<ShardSet, ArtifactError> {
        let artifact = Artifact::open(path)?;
        let header = artifact.meta().shard.as_ref().map(|s| (s.index, s.count));
        if header != Some((index, count)) {
            return Err(ArtifactError::WrongShard { path: path.to_path_buf(), index, count, header });
        }
        let scheme = &artifact.meta().shard.as_ref().expect("the header has shard information").scheme;
        if scheme != SHARD_SCHEME {
            let problem = ShardSetProblem::UnknownScheme { file: path.to_path_buf(), scheme: scheme.clone() };
            return Err(set_error(path, problem));
        }
        holds_only_its_own(&artifact, path, index, count).map_err(|problem| set_error(path, problem))?;
        let mut set = ShardSet::from_parts(vec![artifact], vec![path.to_path_buf()]);
        set.lone = Some(LoneShard { index, count });
        Ok(set)
    }

    /// The shard set of artifacts already opened (shards in any order),
    /// checked as [`ShardSet::open`] checks a directory; messages name
    /// them `shard file 0`, `shard file 1`, ... in the order given.
    pub fn from_artifacts(artifacts: Vec<Artifact>) -> Result<ShardSet, ArtifactError> {
        let names = (0..artifacts.len()).map(|i| PathBuf::from(format!("shard file {i}"))).collect();
        ShardSet::assemble(artifacts, names, Path::new("(in memory)"))
    }

    fn assemble(opened: Vec<Artifact>, files: Vec<PathBuf>, path: &Path) -> Result<ShardSet, ArtifactError> {
        if opened.is_empty() {
            return Err(set_error(path, ShardSetProblem::NoShards));
        }
        let name = |i: usize| files[i].clone();
        let Some(first) = opened[0].meta().shard.clone() else {
            return Err(set_error(path, ShardSetProblem::NotAShard { file: name(0) }));
        };
        let count = first.count as usize;
        let mut by_index: Vec<Option<usize>> = vec![None; count];
        for (i, artifact) in opened.iter().enumerate() {
            let meta = artifact.meta();
            let Some(shard) = &meta.shard else {
                return Err(set_error(path, ShardSetProblem::NotAShard { file: name(i) }));
            };
            if shard.count != first.count || shard.scheme != first.scheme {
                return Err(set_error(
                    path,
                    ShardSetProblem::ForeignSet {
                        file: name(i),
                        index: shard.index,
                        count: shard.count,
                        scheme: shard.scheme.clone(),
                        first: name(0),
                        first_count: first.count,
                        first_scheme: first.scheme.clone(),
                    },
                ));
            }
            if shard.scheme != SHARD_SCHEME {
                return Err(set_error(
                    path,
                    ShardSetProblem::UnknownScheme { file: name(i), scheme: shard.scheme.clone() },
                ));
            }
            if meta.agents != opened[0].meta().agents || artifact.explains() != opened[0].explains() {
                return Err(set_error(path, ShardSetProblem::ForeignAgents { file: name(i), first: name(0) }));
            }
            let k = shard.index as usize;
            if k >= count {
                let (index, count) = (shard.index, first.count);
                return Err(set_error(path, ShardSetProblem::IndexBeyondCount { file: name(i), index, count }));
            }
            if let Some(other) = by_index[k].replace(i) {
                let (first, second, index, count) = (name(other), name(i), shard.index, first.count);
                return Err(set_error(path, ShardSetProblem::SameShard { first, second, index, count }));
            }
            holds_only_its_own(artifact, &name(i), shard.index, first.count)
                .map_err(|problem| set_error(path, problem))?;
        }
        if let Some(k) = by_index.iter().position(Option::is_none) {
            let expected = path.join(shard_file_name(k as u32, first.count));
            let (index, count) = (k as u32, first.count);
            return Err(set_error(path, ShardSetProblem::Missing { index, count, expected }));
        }
        let mut slots: Vec<Option<Artifact>> = opened.into_iter().map(Some).collect();
        let mut shards = Vec::with_capacity(count);
        let mut paths = Vec::with_capacity(count);
        for i in by_index.into_iter().flatten() {
            shards.push(slots[i].take().expect("each file is one shard"));
            paths.push(files[i].clone());
        }
        Ok(ShardSet::from_parts(shards, paths))
    }

    /// A set of one artifact.
    pub fn single(artifact: Artifact) -> ShardSet {
        ShardSet::from_parts(vec![artifact], vec![PathBuf::new()])
    }

    fn from_parts(shards: Vec<Artifact>, paths: Vec<PathBuf>) -> ShardSet {
        let bases = |count: fn(&Artifact) -> usize| {
            let mut base = vec![0];
            for a in &shards {
                base.push(base.last().copied().unwrap_or(0) + count(a));
            }
            base
        };
        let origin_base = bases(Artifact::origins);
        let group_base = bases(Artifact::groups);
        let set_base = bases(|a| a.preferences().map_or(0, |t| t.sets()));
        ShardSet { shards, paths, origin_base, group_base, set_base, lone: None }
    }

    /// Which shard this is, when one shard was opened alone ([`ShardSet::open_shard`]).
    pub fn lone_shard(&self) -> Option<LoneShard> {
        self.lone
    }

    /// Whether this set can answer for a URL whose origin has `origin_hash`
    /// `hash` and was not found: always, but for a shard opened alone and a
    /// URL of another shard ([`ArtifactError::Misrouted`], naming `url`).
    /// Asked only of origins not found, since a lone shard holds only its own.
    #[inline]
    pub fn check_routed(&self, hash: u64, url: &[u8]) -> Result<(), ArtifactError> {
        match self.lone {
            None => Ok(()),
            Some(lone) => self.check_lone_routed(lone, hash, url),
        }
    }

    #[cold]
    fn check_lone_routed(&self, lone: LoneShard, hash: u64, url: &[u8]) -> Result<(), ArtifactError> {
        let shard = shard_of_hash(hash, lone.count);
        if shard == lone.index {
            return Ok(());
        }
        Err(ArtifactError::Misrouted {
            url: String::from_utf8_lossy(url).into_owned(),
            shard,
            count: lone.count,
            index: lone.index,
            path: self.paths[0].clone(),
        })
    }

    /// The shards, in order (one for a single artifact).
    pub fn shards(&self) -> &[Artifact] {
        &self.shards
    }

    /// The file of each shard.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The metadata of the first shard (agents agree across the set).
    pub fn meta(&self) -> &Meta {
        self.shards[0].meta()
    }

    /// Whether verdicts can name their rule.
    pub fn explains(&self) -> bool {
        self.shards[0].explains()
    }

    /// Origins over every shard.
    pub fn origins(&self) -> usize {
        self.origin_base[self.shards.len()]
    }

    /// Groups over every shard.
    pub fn groups(&self) -> usize {
        self.group_base[self.shards.len()]
    }

    /// The index of an agent given as `TOKEN[,TOKEN...]`.
    pub fn agent_index(&self, agent: &str) -> Option<usize> {
        self.shards[0].agent_index(agent)
    }

    /// [`Artifact::find_agent`]: the agent's index, or an error naming the
    /// agents the set was built for.
    pub fn find_agent(&self, agent: &str) -> Result<usize, UnknownAgent> {
        self.shards[0].find_agent(agent)
    }

    /// The shard an origin of this `origin_hash` lives in.
    #[inline]
    pub fn shard_of(&self, hash: u64) -> usize {
        if self.shards.len() == 1 {
            0
        } else {
            shard_of_hash(hash, self.shards.len() as u32) as usize
        }
    }

    /// (shard, number within it) of a set's origin number.
    #[inline]
    fn split_origin(&self, origin: usize) -> (usize, usize) {
        let k = self.origin_base.partition_point(|&b| b <= origin) - 1;
        (k, origin - self.origin_base[k])
    }

    /// (shard, number within it) of a set's group number; an error for a
    /// group past the set's.
    #[inline]
    fn split_group(&self, group: usize) -> Result<(usize, usize), ArtifactError> {
        if group >= self.groups() {
            return Err(ArtifactError::NoSuchGroup { group, groups: self.groups() });
        }
        let k = self.group_base.partition_point(|&b| b <= group) - 1;
        Ok((k, group - self.group_base[k]))
    }

    /// The set's number of an origin key, if a shard has it.
    pub fn find_origin(&self, key: &[u8], hash: u64) -> Option<usize> {
        let k = self.shard_of(hash);
        self.shards[k].find_origin(key, hash).map(|o| o + self.origin_base[k])
    }

    /// [`Artifact::find_origins`] through the set: each lookup asked of its shard.
    pub fn find_origins(&self, lookups: &[(&[u8], u64)], found: &mut Vec<Option<usize>>) {
        if self.shards.len() == 1 {
            return self.shards[0].find_origins(lookups, found);
        }
        let first = found.len();
        found.resize(first + lookups.len(), None);
        let mut mine = Vec::new();
        let mut at = Vec::new();
        let mut got = Vec::new();
        for (k, shard) in self.shards.iter().enumerate() {
            mine.clear();
            at.clear();
            for (i, &(key, hash)) in lookups.iter().enumerate() {
                if self.shard_of(hash) == k {
                    mine.push((key, hash));
                    at.push(i);
                }
            }
            if mine.is_empty() {
                continue;
            }
            got.clear();
            shard.find_origins(&mine, &mut got);
            for (&i, origin) in at.iter().zip(&got) {
                found[first + i] = origin.map(|o| o + self.origin_base[k]);
            }
        }
    }

    /// The canonical key of a set's origin.
    pub fn origin_key(&self, origin: usize) -> &[u8] {
        let (k, o) = self.split_origin(origin);
        self.shards[k].origin_key(o)
    }

    /// The fetch information of a set's origin (read once a run of URLs).
    #[inline]
    pub fn fetch_info(&self, origin: usize) -> FetchInfo {
        let (k, o) = self.split_origin(origin);
        self.shards[k].fetch_info(o)
    }

    /// The set's number of the group that applies to `agent` at `origin`.
    #[inline]
    pub fn group_of(&self, origin: usize, agent: usize) -> usize {
        let (k, o) = self.split_origin(origin);
        self.shards[k].group_of(o, agent) + self.group_base[k]
    }

    /// [`Artifact::decide_many`] through the set: each query asked of the
    /// shard its group is in, the outcomes in query order; on an error
    /// (a damaged group) nothing is appended.
    pub fn decide_many(
        &self,
        queries: &[(usize, &[u8])],
        outcomes: &mut Vec<GroupOutcome>,
    ) -> Result<(), ArtifactError> {
        if self.shards.len() == 1 {
            return self.shards[0].decide_many(queries, outcomes);
        }
        let first = outcomes.len();
        let mut by_shard: Vec<Vec<usize>> = vec![Vec::new(); self.shards.len()];
        let split = queries.iter().map(|&(g, _)| self.split_group(g)).collect::<Result<Vec<_>, _>>()?;
        for (i, &(k, _)) in split.iter().enumerate() {
            by_shard[k].push(i);
        }
        let blank = GroupOutcome { group: 0, rank: 0, label: robotsieve_core::Label(0) };
        outcomes.resize(first + queries.len(), blank);
        let mut got = Vec::new();
        for (k, indices) in by_shard.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
            let local: Vec<(usize, &[u8])> = indices.iter().map(|&i| (split[i].1, queries[i].1)).collect();
            got.clear();
            if let Err(e) = self.shards[k].decide_many(&local, &mut got) {
                outcomes.truncate(first);
                return Err(e);
            }
            for (&i, outcome) in indices.iter().zip(&got) {
                outcomes[first + i] = GroupOutcome { group: outcome.group + self.group_base[k], ..*outcome };
            }
        }
        Ok(())
    }

    /// [`Artifact::compiled_group`] of a set's group.
    #[inline]
    pub fn compiled_group(&self, group: usize) -> Result<CompiledGroup<'_>, ArtifactError> {
        let (k, g) = self.split_group(group)?;
        self.shards[k].compiled_group(g)
    }

    /// The best rank among a set's group's rules for a prepared path.
    pub fn decide(&self, group: usize, path: &[u8]) -> Result<GroupOutcome, ArtifactError> {
        let mut outcomes = Vec::with_capacity(1);
        self.decide_many(&[(group, path)], &mut outcomes)?;
        Ok(outcomes[0])
    }

    /// The rule an outcome's rank stands for, when the set explains.
    pub fn explain(&self, outcome: &GroupOutcome) -> Result<Option<ExplainedRule<'_>>, ArtifactError> {
        let (k, g) = self.split_group(outcome.group)?;
        self.shards[k].explain(&GroupOutcome { group: g, ..*outcome })
    }

    /// Rule `index` of a set's group's explanation table.
    pub fn rule(&self, group: usize, index: usize) -> Result<Option<ExplainedRule<'_>>, ArtifactError> {
        let (k, g) = self.split_group(group)?;
        self.shards[k].rule(g, index)
    }

    /// Number of rules in a set's group's explanation table.
    pub fn rule_count(&self, group: usize) -> Result<usize, ArtifactError> {
        let (k, g) = self.split_group(group)?;
        self.shards[k].rule_count(g)
    }

    /// [`Artifact::verify`] of every shard: every byte of the set checked.
    pub fn verify(&self) -> Result<(), ArtifactError> {
        self.shards.iter().try_for_each(Artifact::verify)
    }

    /// Whether any shard has a preferences section (see [`Artifact::preferences`]).
    pub fn has_preferences(&self) -> bool {
        self.set_base[self.shards.len()] > 0 || self.shards.iter().any(|a| a.preferences().is_some())
    }

    /// The set's number of the preference set of `agent` at `origin`, if it
    /// has preference lines (shards' sets laid end to end, as groups are).
    pub fn preference_set(&self, origin: usize, agent: usize) -> Option<usize> {
        let (k, o) = self.split_origin(origin);
        let set = self.shards[k].preferences()?.set_of(o, agent)?;
        Some(set as usize + self.set_base[k])
    }

    /// The lines of a set's preference set (see [`ShardSet::preference_set`]).
    pub fn preference_set_lines(&self, set: usize) -> Vec<PreferenceLine> {
        let k = self.set_base.partition_point(|&b| b <= set) - 1;
        self.shards[k].preferences().map(|t| t.lines((set - self.set_base[k]) as u32)).unwrap_or_default()
    }

    /// [`Artifact::preference_lines`] of a set's origin.
    pub fn preference_lines(&self, origin: usize, agent: usize) -> Vec<PreferenceLine> {
        let (k, o) = self.split_origin(origin);
        self.shards[k].preference_lines(o, agent)
    }

    /// [`Artifact::sitemaps`] of a set's origin.
    pub fn sitemaps(&self, origin: usize) -> Result<Vec<&[u8]>, ArtifactError> {
        let (k, o) = self.split_origin(origin);
        self.shards[k].sitemaps(o)
    }

    /// [`Artifact::crawl_delay`] of a set's origin.
    pub fn crawl_delay(&self, origin: usize, agent: usize) -> Result<Option<&[u8]>, ArtifactError> {
        let (k, o) = self.split_origin(origin);
        self.shards[k].crawl_delay(o, agent)
    }

    /// [`Artifact::crawl_delays`] of a set's origin.
    pub fn crawl_delays(&self, origin: usize, agent: usize) -> Result<Vec<&[u8]>, ArtifactError> {
        let (k, o) = self.split_origin(origin);
        self.shards[k].crawl_delays(o, agent)
    }

    /// [`Artifact::names_agent`] of a set's origin.
    pub fn names_agent(&self, origin: usize, agent: usize) -> bool {
        let (k, o) = self.split_origin(origin);
        self.shards[k].names_agent(o, agent)
    }

    /// Statistics of a set's group.
    pub fn group_stats(&self, group: usize) -> Result<GroupStats, ArtifactError> {
        let (k, g) = self.split_group(group)?;
        self.shards[k].group_stats(g)
    }
}

/// Checks that shard `index` of `count` holds only origins of that shard,
/// by the hashes its index stores, without hashing every key: a lookup
/// reaches an origin only under its stored hash, so an origin stored under
/// another shard's hash would answer for that shard's URLs.
fn holds_only_its_own(artifact: &Artifact, file: &Path, index: u32, count: u32) -> Result<(), ShardSetProblem> {
    for (o, hash) in artifact.indexed_origins() {
        let belongs = shard_of_hash(hash, count);
        if belongs != index {
            let origin = String::from_utf8_lossy(artifact.origin_key(o)).into_owned();
            return Err(ShardSetProblem::ForeignOrigin { file: file.to_path_buf(), index, origin, belongs });
        }
    }
    Ok(())
}

impl From<Artifact> for ShardSet {
    fn from(artifact: Artifact) -> ShardSet {
        ShardSet::single(artifact)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_core::url::origin_hash;

    #[test]
    fn the_shard_function_is_stable_and_in_range() {
        // Published: other tools must partition the same way, so these never change.
        let key = OriginKey::of_url("https://example.com/x").unwrap();
        assert_eq!(key.hash64(), origin_hash(b"https://example.com"));
        for count in [1, 2, 7, 64, 1000] {
            let k = shard_of_url("https://example.com/x", count).unwrap();
            assert!(k < count);
            assert_eq!(k, shard_of_url("HTTPS://EXAMPLE.COM:443/other", count).unwrap(), "one origin, one shard");
        }
        assert_eq!(shard_of_hash(0, 7), 0);
        assert_eq!(shard_of_hash(u64::from(u32::MAX), 7), 6);
        assert_eq!(shard_of_hash(0xffff_ffff_0000_0000, 7), 0, "the top bits do not choose the shard");
        assert_eq!(shard_file_name(3, 64), "00003-of-00064.rsv");
    }

    #[test]
    fn origins_spread_over_the_shards() {
        let mut counts = [0usize; 7];
        for i in 0..7000 {
            counts[shard_of_url(&format!("https://host{i}.example"), 7).unwrap() as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
    }
}
