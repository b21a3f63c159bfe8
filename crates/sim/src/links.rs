//! Per-link state that only the links actually used need: the latest scheduled delivery of each
//! FIFO link.
//!
//! A dense `n × n` table costs `8 n²` bytes per trial — 8 MB at n = 1001, allocated and faulted
//! in afresh every trial, with every message touching a random spot of it — while a trial uses
//! a few links per node (a Raft follower talks to its leader). [`LinkTimes`] is an
//! open-addressing hash table from link index to time, so its memory follows the links used.
//! It is only ever looked up, never iterated, so its layout cannot affect any result.

use election_core::Time;

/// The latest time recorded per link; a link never recorded reads as [`Time::ZERO`].
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkTimes {
    /// `(link + 1, time)`; a key of 0 marks an empty slot. The length is a power of two.
    slots: Vec<(u64, u64)>,
    len: usize,
}

impl LinkTimes {
    /// The time recorded for `link`, for reading and updating.
    #[inline]
    pub(crate) fn entry(&mut self, link: usize) -> &mut u64 {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let key = link as u64 + 1;
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(key) & mask;
        loop {
            let k = self.slots[i].0;
            if k == key {
                return &mut self.slots[i].1;
            }
            if k == 0 {
                self.slots[i].0 = key;
                self.len += 1;
                return &mut self.slots[i].1;
            }
            i = (i + 1) & mask;
        }
    }

    /// Fibonacci hashing: the top bits of `key × 2^64 / φ`, spread over the whole index.
    #[inline]
    fn hash(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); cap]);
        let mask = cap - 1;
        for (k, v) in old.into_iter().filter(|s| s.0 != 0) {
            let mut i = Self::hash(k) & mask;
            while self.slots[i].0 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (k, v);
        }
    }

    /// No link recorded yet.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The latest delivery so far on `link`, raised to `at`: `max(at, latest)`, which becomes
    /// the link's latest.
    #[inline]
    pub(crate) fn fifo(&mut self, link: usize, at: Time) -> Time {
        let last = self.entry(link);
        let t = (*last).max(at.0);
        *last = t;
        Time(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The table behaves as the dense `n × n` vector it replaces.
        #[test]
        fn equals_a_dense_table(
            ops in proptest::collection::vec((0usize..2000, 0u64..1_000_000), 1..3000),
        ) {
            let mut dense = vec![Time::ZERO; 2000];
            let mut map = LinkTimes::default();
            for (link, at) in ops {
                let expected = dense[link].max(Time(at));
                dense[link] = expected;
                prop_assert_eq!(map.fifo(link, Time(at)), expected);
            }
        }
    }
}
