//! The per-origin records: fetch information, one group per crawler, and
//! the slots of the origin hash table.

use super::{align8, ne32, ne64, put32, put64, EMPTY_SLOT};

/// What the robots.txt fetch of an origin gave, as stored per origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FetchKind {
    /// A body was fetched (2xx, or a file given directly); its rules apply.
    Rules = 0,
    /// No restrictions (4xx other than 429, a redirect chain too long, ...).
    Unrestricted = 1,
    /// Everything disallowed (5xx, 429, no HTTP answer).
    Blocked = 2,
}

impl FetchKind {
    #[inline]
    fn from_u32(v: u32) -> Option<FetchKind> {
        match v {
            0 => Some(FetchKind::Rules),
            1 => Some(FetchKind::Unrestricted),
            2 => Some(FetchKind::Blocked),
            _ => None,
        }
    }
}

/// Per-origin fetch information: the kind and the HTTP status (0 for no answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FetchInfo {
    /// How the fetch result governs the origin.
    pub kind: FetchKind,
    /// The HTTP status of the governing fetch (0: no HTTP answer; 200 for
    /// files given directly).
    pub status: u16,
}

impl FetchInfo {
    /// The packed form stored in an `OriginRecord`: status | kind << 16.
    pub fn pack(self) -> u32 {
        u32::from(self.status) | (self.kind as u32) << 16
    }

    /// Reads the packed form back; `None` for an unknown kind.
    #[inline]
    pub fn unpack(v: u32) -> Option<FetchInfo> {
        Some(FetchInfo { kind: FetchKind::from_u32(v >> 16)?, status: (v & 0xffff) as u16 })
    }
}

/// When and how an origin's governing robots.txt copy was fetched, as the
/// optional FRESHNESS section stores it per origin: the raw facts the cache
/// policy of `robotsieve fetch --due` reads, so that a crawl loop can tell
/// from the artifact which origins' copies have expired. `None` where the
/// record did not say (a file given directly says nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FetchFacts {
    /// When the copy was fetched, in seconds since 1970 (UTC).
    pub fetched_at: Option<i64>,
    /// How long the server said it may be kept, in seconds (at most
    /// `u32::MAX - 1`, 136 years; longer is stored as that).
    pub max_age: Option<u32>,
    /// How many fetches in a row had failed, as `robotsieve fetch` recorded it.
    pub failures_in_a_row: Option<u32>,
}

/// The stored `fetched_at` of an unknown time.
const UNKNOWN_TIME: i64 = i64::MIN;
/// The stored `max_age` or `failures_in_a_row` of an absent one.
const ABSENT: u32 = u32::MAX;

impl FetchFacts {
    /// Encoded size: `fetched_at i64, max_age u32, failures_in_a_row u32`.
    pub const LEN: usize = 16;

    /// Whether nothing is known (what needs no FRESHNESS section).
    pub fn is_empty(&self) -> bool {
        *self == FetchFacts::default()
    }

    /// Appends the record (a time of `i64::MIN` is stored as one second later).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let time = self.fetched_at.map_or(UNKNOWN_TIME, |t| t.max(UNKNOWN_TIME + 1));
        out.extend_from_slice(&time.to_ne_bytes());
        out.extend_from_slice(&self.max_age.map_or(ABSENT, |a| a.min(ABSENT - 1)).to_ne_bytes());
        out.extend_from_slice(&self.failures_in_a_row.map_or(ABSENT, |k| k.min(ABSENT - 1)).to_ne_bytes());
    }

    /// Reads a record of [`FetchFacts::LEN`] bytes: every value is valid.
    pub(crate) fn decode(b: &[u8]) -> FetchFacts {
        let time = ne64(b, 0) as i64;
        let absent = |v: u32| (v != ABSENT).then_some(v);
        FetchFacts {
            fetched_at: (time != UNKNOWN_TIME).then_some(time),
            max_age: absent(ne32(b, 8)),
            failures_in_a_row: absent(ne32(b, 12)),
        }
    }
}

/// One origin in ORIGINS: `key_off u64, key_len u32, info u32`, then one
/// u32 group id per agent, padded to a multiple of 8 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OriginRecord {
    /// Where the key starts in KEYS.
    pub key_off: u64,
    /// Its length.
    pub key_len: u32,
    /// [`FetchInfo::pack`].
    pub info: u32,
    /// The group of each agent.
    pub groups: Vec<u32>,
}

impl OriginRecord {
    /// Encoded size for `agents` agents.
    pub fn len(agents: usize) -> usize {
        align8(16 + 4 * agents)
    }

    /// Where agent `agent`'s group id lies in a record.
    pub fn group_at(agent: usize) -> usize {
        16 + 4 * agent
    }

    /// Appends the encoded record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + OriginRecord::len(self.groups.len()), 0);
        let b = &mut out[start..];
        put64(b, 0, self.key_off);
        put32(b, 8, self.key_len);
        put32(b, 12, self.info);
        for (a, &g) in self.groups.iter().enumerate() {
            put32(b, OriginRecord::group_at(a), g);
        }
    }

    /// The key's range in KEYS.
    // Always: opening reads it once per origin, and left out of line it was
    // a tenth of opening the whole corpus's artifact (callgrind).
    #[inline(always)]
    pub fn key_range(b: &[u8]) -> (u64, u32) {
        (ne64(b, 0), ne32(b, 8))
    }

    /// The packed fetch information.
    #[inline]
    pub fn info(b: &[u8]) -> u32 {
        ne32(b, 12)
    }

    /// Agent `agent`'s group id.
    #[inline]
    pub fn group(b: &[u8], agent: usize) -> u32 {
        ne32(b, OriginRecord::group_at(agent))
    }
}

/// One slot of the origin hash table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// `origin_hash` of the key.
    pub hash: u64,
    /// The origin number, or [`EMPTY_SLOT`].
    pub origin: u64,
}

impl Slot {
    /// Encoded size.
    pub const LEN: usize = 16;
    /// An empty slot.
    pub const EMPTY: Slot = Slot { hash: 0, origin: EMPTY_SLOT };

    /// Encodes the slot.
    pub fn encode(&self) -> [u8; Slot::LEN] {
        let mut b = [0u8; Slot::LEN];
        put64(&mut b, 0, self.hash);
        put64(&mut b, 8, self.origin);
        b
    }

    /// Decodes a slot.
    pub fn decode(b: &[u8]) -> Slot {
        Slot { hash: ne64(b, 0), origin: ne64(b, 8) }
    }

    /// The home slot of `hash` in a table of `1 << bits` slots: its top bits,
    /// so that hashes sorted in order are in home-slot order for every size.
    pub fn home(hash: u64, bits: u32) -> usize {
        if bits == 0 {
            0
        } else {
            (hash >> (64 - bits)) as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_slots_follow_hash_order() {
        assert_eq!(Slot::home(u64::MAX, 4), 15);
        assert_eq!(Slot::home(1 << 60, 4), 1);
        assert_eq!(Slot::home(123, 0), 0);
    }
}
