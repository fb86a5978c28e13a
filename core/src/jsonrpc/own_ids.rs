//! Hash maps keyed by request ids this side allocated.
//!
//! std's `HashMap` hashes with SipHash, which stands up to keys a peer picks so that they
//! collide. The ids of our own requests come from counters of our own, so the tables that
//! hold them (calls waiting for an answer, requests outstanding, a 2026-07-28 client's
//! rounds and tool calls) use a multiply-rotate hash, a fraction of SipHash's cost for an
//! integer id (SipHash was 2 to 3 % of a client's time at 64 B). A table keyed by ids a peer
//! chose keeps SipHash; a peer's id is only ever looked up in these.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::RequestId;

/// A map keyed by our own request ids (or call keys).
pub(crate) type OwnIdMap<K, V> = HashMap<K, V, BuildHasherDefault<OwnIdHasher>>;

/// A set of our own request ids.
pub(crate) type OwnIdSet = HashSet<RequestId, BuildHasherDefault<OwnIdHasher>>;

/// Each word of the key is folded in by a rotate, an xor and a multiply by an odd constant
/// (a bijection, so ids that differ in their low bits land in different buckets).
#[derive(Default)]
pub(crate) struct OwnIdHasher(u64);

const SEED: u64 = 0x517c_c1b7_2722_0a95;

impl OwnIdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for OwnIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits (distinct for ids that differ in
        // them: the multiply is a bijection on them) and a tag from the top seven (where the
        // multiply gathers every bit of the id).
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn ids_in_a_row_spread_over_buckets_and_tags() {
        let build = BuildHasherDefault::<OwnIdHasher>::default();
        let hashes: Vec<u64> = (1..=1024).map(|n| build.hash_one(RequestId::Number(n))).collect();
        let buckets: HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        let tags: HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert_eq!(buckets.len(), 1024, "one bucket each");
        assert_eq!(tags.len(), 128, "every tag in use");
        let text = build.hash_one(RequestId::String("1".into()));
        assert_ne!(text, build.hash_one(RequestId::Number(1)), "a string id is not its number");
    }

    #[test]
    fn a_map_of_own_ids_finds_what_it_holds() {
        let mut map: OwnIdMap<RequestId, u32> = OwnIdMap::default();
        for n in 0..5000 {
            map.insert(RequestId::Number(n), n as u32);
        }
        map.insert(RequestId::String("a".into()), 7);
        assert_eq!(map.get(&RequestId::Number(4321)), Some(&4321));
        assert_eq!(map.get(&RequestId::String("a".into())), Some(&7));
        assert_eq!(map.get(&RequestId::Number(5000)), None);
    }
}
