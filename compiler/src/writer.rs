//! Writing artifacts: compiled groups and origins laid out as
//! `robotsieve_engine::artifact` reads them.
//!
//! The layout is documented (and read) in `engine/src/artifact.rs`; this is
//! its only writer. The whole file is assembled in memory, then written to a
//! temporary file beside the destination and renamed over it, so a crash
//! never leaves a half-written artifact under the final name.

use crate::group::{Rule, Verb};
use rayon::prelude::*;
use robotsieve_engine::artifact::{
    file_checksum, FetchInfo, Meta, Section, BYTE_ORDER_MARK, CHECKSUM_AT, EMPTY_SLOT, EXPLAIN_ENTRY_LEN, FLAG_EXPLAIN,
    FORMAT_VERSION, GROUP_RECORD_LEN, HEADER_LEN, MAGIC, NO_RULE, PART_COMB, PART_COMB16, PART_DFA16, PART_DFA32,
    PART_RECORD_LEN, PART_RULES, SECTION_ENTRY_LEN, SEMANTICS_VERSION,
};
use robotsieve_engine::comb::{CombDfaBuf, NarrowTables};
use robotsieve_engine::filter::PendingFile;
use robotsieve_engine::matcher::{MatcherBuf, PartBuf};
use robotsieve_engine::preference::PreferenceLine;
use robotsieve_engine::preference_store::{self, Selection};
use robotsieve_engine::url::{origin_hash, OriginKey};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Collects groups and origins, then lays them out as one artifact.
pub struct ArtifactWriter {
    meta: Meta,
    explain: bool,
    groups: Vec<(MatcherBuf, Vec<Rule>)>,
    origins: Vec<(OriginKey, FetchInfo, Vec<u32>)>,
    /// Per origin (in order of addition) and agent, its preference set and
    /// whether it is named; and the distinct sets.
    preferences: Option<(Vec<Selection>, Vec<Vec<PreferenceLine>>)>,
}

/// Why an artifact could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// The same origin was added twice.
    DuplicateOrigin(String),
    /// An origin names a group that was not added, or the wrong number of groups.
    BadGroup(String),
    /// Writing the file failed.
    Io(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::DuplicateOrigin(key) => write!(f, "origin {key} was added twice"),
            WriteError::BadGroup(msg) => f.write_str(msg),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {}

impl ArtifactWriter {
    /// A writer for these crawlers (each `TOKEN[,TOKEN...]`). With `explain`,
    /// the rules of every group are stored so verdicts can name their line.
    pub fn new(agents: Vec<String>, explain: bool) -> ArtifactWriter {
        ArtifactWriter {
            meta: Meta { agents, build: Vec::new() },
            explain,
            groups: Vec::new(),
            origins: Vec::new(),
            preferences: None,
        }
    }

    /// Records a piece of build information (shown by `inspect`).
    pub fn build_info(&mut self, key: &str, value: &str) {
        self.meta.build.push((key.to_string(), value.to_string()));
    }

    /// Adds a compiled group and returns its id. `rules` are the group's rules
    /// (indexed by the matcher's rule table); stored only when explaining.
    pub fn add_group(&mut self, matcher: MatcherBuf, rules: Vec<Rule>) -> u32 {
        let rules = if self.explain { rules } else { Vec::new() };
        self.groups.push((matcher, rules));
        (self.groups.len() - 1) as u32
    }

    /// Adds an origin with its fetch information and one group id per agent.
    pub fn add_origin(&mut self, key: OriginKey, info: FetchInfo, groups: Vec<u32>) {
        self.origins.push((key, info, groups));
    }

    /// Sets the usage preferences and which crawlers are named:
    /// `selections[origin * agents + agent]`, whose sets index `sets`, origins
    /// in order of [`ArtifactWriter::add_origin`]. Without a call, or when no
    /// entry has a set or is named, the artifact has no preferences section.
    pub fn set_preferences(&mut self, selections: Vec<Selection>, sets: Vec<Vec<PreferenceLine>>) {
        let any = !sets.is_empty() || selections.iter().any(|s| s.named);
        self.preferences = any.then_some((selections, sets));
    }

    /// Number of origins added so far.
    pub fn origins(&self) -> usize {
        self.origins.len()
    }

    /// Lays the artifact out in memory.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let agents = self.meta.agents.len();
        let mut seen = HashSet::with_capacity(self.origins.len());
        for (key, _, groups) in &self.origins {
            if !seen.insert(key.as_bytes()) {
                return Err(WriteError::DuplicateOrigin(key.to_string()));
            }
            if groups.len() != agents || groups.iter().any(|&g| g as usize >= self.groups.len()) {
                return Err(WriteError::BadGroup(format!(
                    "origin {key}: group ids do not match the agents and groups"
                )));
            }
        }

        // Origin tables.
        let meta = self.meta_with_counts().to_json();
        let capacity = (self.origins.len() * 2).next_power_of_two().max(2);
        let mut slots = vec![[0u64, EMPTY_SLOT]; capacity];
        let mut key_ends = Vec::with_capacity(self.origins.len());
        let mut keys = Vec::new();
        let mut origin_groups = Vec::with_capacity(self.origins.len() * agents);
        let mut origin_info = Vec::with_capacity(self.origins.len());
        for (i, (key, info, groups)) in self.origins.iter().enumerate() {
            keys.extend_from_slice(key.as_bytes());
            key_ends
                .push(u32::try_from(keys.len()).map_err(|_| WriteError::BadGroup("origin keys exceed 4 GiB".into()))?);
            origin_groups.extend_from_slice(groups);
            origin_info.push(info.pack());
            let hash = origin_hash(key.as_bytes());
            let mut slot = (hash as usize) & (capacity - 1);
            while slots[slot][1] != EMPTY_SLOT {
                slot = (slot + 1) & (capacity - 1);
            }
            slots[slot] = [hash, i as u64];
        }
        let slots: Vec<u64> = slots.into_iter().flatten().collect();

        // Every section but TABLES has a known size, so TABLES' offset is known
        // before its contents, and records can hold absolute offsets directly.
        let part_count: usize = self.groups.iter().map(|(m, _)| m.parts.len()).sum();
        let sizes = [
            (Section::Meta, meta.len()),
            (Section::Slots, slots.len() * 8),
            (Section::KeyEnds, key_ends.len() * 4),
            (Section::Keys, keys.len()),
            (Section::OriginGroups, origin_groups.len() * 4),
            (Section::OriginInfo, origin_info.len() * 4),
            (Section::Groups, self.groups.len() * GROUP_RECORD_LEN),
            (Section::Parts, part_count * PART_RECORD_LEN),
        ];
        let preferences = match &self.preferences {
            Some((set_of, sets)) => {
                if set_of.len() != self.origins.len() * agents {
                    return Err(WriteError::BadGroup("preference sets do not match the origins and agents".into()));
                }
                let sets: Vec<&[PreferenceLine]> = sets.iter().map(Vec::as_slice).collect();
                Some(preference_store::encode(set_of, self.origins.len(), agents, &sets))
            }
            None => None,
        };
        let sections = sizes.len() + 1 + usize::from(preferences.is_some());
        let mut offsets = Vec::with_capacity(sections);
        let mut at = align8(HEADER_LEN + sections * SECTION_ENTRY_LEN);
        for (section, len) in sizes {
            offsets.push((section, at as u64, len as u64));
            at = align8(at + len);
        }
        let mut tables = Blob { base: at as u64, data: Vec::new() };
        let mut groups = Vec::with_capacity(self.groups.len() * GROUP_RECORD_LEN);
        let mut parts = Vec::with_capacity(part_count * PART_RECORD_LEN);
        let mut part_index = 0u64;
        // Packing the combs is most of the writer's work and each automaton's
        // is independent: done on every core, before the sequential layout.
        let combs: Vec<Vec<Option<StoredComb>>> = self
            .groups
            .par_iter()
            .map(|(matcher, _)| {
                let comb = |part: &PartBuf| match part {
                    PartBuf::Dfa(dfa) => smaller_comb(dfa),
                    PartBuf::Rules(_) => None,
                };
                matcher.parts.iter().map(comb).collect()
            })
            .collect();
        for ((matcher, rules), combs) in self.groups.iter().zip(combs) {
            let labels_off = tables.u32s(&matcher.labels);
            let rule_ids = if self.explain { matcher.rules.clone() } else { vec![NO_RULE; matcher.rules.len()] };
            let rules_off = tables.u32s(&rule_ids);
            for (part, comb) in matcher.parts.iter().zip(combs) {
                let (head, offs) = match (part, comb) {
                    (PartBuf::Dfa(dfa), Some(comb)) => {
                        let a = tables.bytes(&dfa.classes);
                        let b = tables.bytes(&comb.tables);
                        let c = if comb.answers.is_empty() { 0 } else { tables.bytes(&comb.answers) };
                        (comb.head, [a, b, c])
                    }
                    (PartBuf::Dfa(dfa), None) => {
                        let a = tables.bytes(&dfa.classes);
                        let (kind, b) = if dfa.fits_u16() {
                            let narrow: Vec<u16> = dfa.transitions.iter().map(|&t| t as u16).collect();
                            (PART_DFA16, tables.u16s(&narrow))
                        } else {
                            (PART_DFA32, tables.u32s(&dfa.transitions))
                        };
                        let c = tables.u32s(&dfa.answers);
                        ([kind, dfa.stride2, dfa.answers.len() as u32, dfa.sinks, dfa.start, 0], [a, b, c])
                    }
                    (PartBuf::Rules(list), _) => {
                        let offs = [tables.bytes(&list.patterns), tables.u32s(&list.ends), tables.u32s(&list.ranks)];
                        ([PART_RULES, 0, list.ends.len() as u32, 0, 0, 0], offs)
                    }
                };
                head.iter().for_each(|v| parts.extend_from_slice(&v.to_ne_bytes()));
                offs.iter().for_each(|v| parts.extend_from_slice(&v.to_ne_bytes()));
            }
            let (explain_off, explain_count) = if self.explain && !rules.is_empty() {
                let mut entries = Vec::with_capacity(rules.len() * EXPLAIN_ENTRY_LEN);
                for rule in rules {
                    let text_off = tables.bytes(&rule.pattern);
                    let flags = u32::from(rule.verb == Verb::Allow) | u32::from(rule.index_directory) << 1;
                    entries.extend_from_slice(&rule.line.to_ne_bytes());
                    entries.extend_from_slice(&flags.to_ne_bytes());
                    entries.extend_from_slice(&text_off.to_ne_bytes());
                    entries.extend_from_slice(&(rule.pattern.len() as u64).to_ne_bytes());
                }
                (tables.bytes(&entries), rules.len() as u32)
            } else {
                (0, 0)
            };
            groups.extend_from_slice(&(matcher.labels.len() as u32).to_ne_bytes());
            groups.extend_from_slice(&(matcher.parts.len() as u32).to_ne_bytes());
            for v in [labels_off, rules_off, part_index, explain_off] {
                groups.extend_from_slice(&v.to_ne_bytes());
            }
            groups.extend_from_slice(&explain_count.to_ne_bytes());
            groups.extend_from_slice(&0u32.to_ne_bytes());
            part_index += matcher.parts.len() as u64;
        }
        offsets.push((Section::Tables, at as u64, tables.data.len() as u64));
        let mut file_len = align8(at + tables.data.len());
        if let Some(bytes) = &preferences {
            offsets.push((Section::Preferences, file_len as u64, bytes.len() as u64));
            file_len = align8(file_len + bytes.len());
        }

        let mut out = Vec::with_capacity(file_len);
        out.extend_from_slice(&MAGIC);
        for v in [FORMAT_VERSION, SEMANTICS_VERSION, BYTE_ORDER_MARK, if self.explain { FLAG_EXPLAIN } else { 0 }] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
        out.extend_from_slice(&(file_len as u64).to_ne_bytes());
        out.extend_from_slice(&0u64.to_ne_bytes()); // the checksum, set last
        out.extend_from_slice(&(offsets.len() as u32).to_ne_bytes());
        out.extend_from_slice(&0u32.to_ne_bytes());
        for &(section, off, len) in &offsets {
            out.extend_from_slice(&(section as u32).to_ne_bytes());
            out.extend_from_slice(&0u32.to_ne_bytes());
            out.extend_from_slice(&off.to_ne_bytes());
            out.extend_from_slice(&len.to_ne_bytes());
        }
        let contents: Vec<&[u8]> = vec![
            meta.as_bytes(),
            bytemuck::cast_slice(&slots),
            bytemuck::cast_slice(&key_ends),
            &keys,
            bytemuck::cast_slice(&origin_groups),
            bytemuck::cast_slice(&origin_info),
            &groups,
            &parts,
            &tables.data,
        ];
        let contents: Vec<&[u8]> = contents.into_iter().chain(preferences.as_deref()).collect();
        for (bytes, &(_, off, len)) in contents.iter().zip(&offsets) {
            debug_assert_eq!((bytes.len() as u64, align8(out.len()) as u64), (len, off));
            out.resize(off as usize, 0);
            out.extend_from_slice(bytes);
        }
        out.resize(file_len, 0);
        let sum = file_checksum(&out);
        out[CHECKSUM_AT].copy_from_slice(&sum.to_ne_bytes());
        Ok(out)
    }

    /// Writes the artifact to `path` through a temporary file and a rename.
    pub fn write(&self, path: &Path) -> Result<usize, WriteError> {
        let bytes = self.to_bytes()?;
        write_atomically(path, &bytes).map_err(WriteError::Io)?;
        Ok(bytes.len())
    }

    fn meta_with_counts(&self) -> Meta {
        let mut meta = self.meta.clone();
        meta.build.push(("origins".into(), self.origins.len().to_string()));
        meta.build.push(("groups".into(), self.groups.len().to_string()));
        meta
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it
/// into place: readers see the old file or the whole new one, never a part.
/// (The engine's [`PendingFile`] does the work, as for every output, and
/// writes streams such as `-` or `/dev/full` in place.) Every error names
/// `path`: `PATH: cannot write: REASON`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = PendingFile::create(path).map_err(std::io::Error::other)?;
    file.write_all(bytes).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            robotsieve_engine::filter::FilterError::Output { name: path.display().to_string(), source: e },
        )
    })?;
    file.commit().map_err(std::io::Error::other)
}

/// A comb automaton as the artifact stores it (see [`smaller_comb`]).
struct StoredComb {
    /// The part record's leading fields: kind, accelerated states, states,
    /// sinks, start, slots.
    head: [u32; 6],
    /// The bytes at the record's `b` offset: rows, slots, accelerated states.
    tables: Vec<u8>,
    /// The bytes at its `c` offset: the answers, empty for a [`PART_COMB16`]
    /// (its rows carry them). The classes are the dense automaton's.
    answers: Vec<u8>,
}

/// The comb form of `dfa`, as stored, when it is smaller than the dense
/// transitions and answers the artifact would otherwise store. Trie-like
/// automata from long literal rules shrink many times; small or dense
/// automata stay dense and scan a little faster.
fn smaller_comb(dfa: &robotsieve_engine::dfa::DfaBuf) -> Option<StoredComb> {
    let dense_bytes = dfa.transitions.len() * if dfa.fits_u16() { 2 } else { 4 } + 4 * dfa.answers.len();
    let comb = CombDfaBuf::from_dense_within(dfa, dense_bytes)?;
    u32::try_from(comb.slots.len()).ok()?;
    let cast = |words: &[u32]| bytemuck::cast_slice::<u32, u8>(words).to_vec();
    let accels = cast(comb.accels.as_flattened());
    let (kind, tables, answers) = match comb.narrow() {
        Some(NarrowTables { rows, slots }) => (
            PART_COMB16,
            [cast(rows.as_flattened()), bytemuck::cast_slice(&slots).to_vec(), accels].concat(),
            Vec::new(),
        ),
        None => {
            let tables = [cast(comb.rows.as_flattened()), cast(comb.slots.as_flattened()), accels].concat();
            (PART_COMB, tables, cast(&comb.answers))
        }
    };
    let (states, accels, slots) = (comb.answers.len() as u32, comb.accels.len() as u32, comb.slots.len() as u32);
    let head = [kind, accels, states, comb.sinks, comb.start, slots];
    (comb.stored_bytes() < dense_bytes).then_some(StoredComb { head, tables, answers })
}

fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The TABLES section under construction: 8-byte aligned arrays, addressed
/// by absolute file offset.
struct Blob {
    base: u64,
    data: Vec<u8>,
}

impl Blob {
    fn bytes(&mut self, bytes: &[u8]) -> u64 {
        self.data.resize(align8(self.data.len()), 0);
        let off = self.base + self.data.len() as u64;
        self.data.extend_from_slice(bytes);
        off
    }

    fn u16s(&mut self, values: &[u16]) -> u64 {
        self.bytes(bytemuck::cast_slice(values))
    }

    fn u32s(&mut self, values: &[u32]) -> u64 {
        self.bytes(bytemuck::cast_slice(values))
    }
}
