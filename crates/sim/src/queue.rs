//! The engine's event queue: a binary heap of 16-byte keys over a slab of events.
//!
//! Events are ordered by `(time, seq)`, `seq` being unique per key. The heap holds only the key
//! `(time, seq << 24 | slot)`, where `slot` is where the event waits in the slab, so a sift moves
//! and compares 16 bytes instead of a whole event (a bully message's event is 56 bytes), and
//! since `seq` is unique, comparing `seq << 24 | slot` orders exactly as comparing `seq`.
//!
//! With a constant network latency (the `ideal` profile, the engine bench) messages come due in
//! the order they are sent, so the queue can be built to keep a run of keys in order (`tail`):
//! a key later than the run's last joins it in O(1) instead of the heap, and `pop` takes the
//! earlier of the heap's and the run's first key. With random latencies that run catches too
//! few keys to pay for the extra comparison (callgrind: +7 % instructions per bully or raft
//! trial on `lan`), so it is off there.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use election_core::Time;

/// Bits of a key's tag that hold the slab slot.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;

#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    at: u64,
    /// `seq << SLOT_BITS | slot`.
    tag: u64,
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)` first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        let a = (u128::from(self.at) << 64) | u128::from(self.tag);
        let b = (u128::from(other.at) << 64) | u128::from(other.tag);
        b.cmp(&a)
    }
}

/// A priority queue of events keyed by `(time, seq)`; `seq` must be unique among queued keys
/// and below 2^40, and at most 2^24 events may wait at once.
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    /// Keys in increasing order: a key later than the tail's last joins it, others the heap.
    tail: std::collections::VecDeque<Key>,
    /// Use `tail` at all.
    ordered: bool,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
}

impl<E> EventQueue<E> {
    /// A queue for about `n` events; `ordered`: keys mostly come in order (keep the tail).
    pub(crate) fn new(n: usize, ordered: bool) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            tail: std::collections::VecDeque::with_capacity(if ordered { n } else { 0 }),
            ordered,
            slab: Vec::with_capacity(n),
            free: Vec::new(),
        }
    }

    /// Whether one more event fits: at most 2^24 wait at once, and `seq` below 2^40. The
    /// engine checks this before each push and ends a trial that outgrows it as over budget.
    #[inline(always)]
    pub(crate) fn fits(&self, seq: u64) -> bool {
        (!self.free.is_empty() || self.slab.len() as u64 <= SLOT_MASK)
            && seq < 1 << (64 - SLOT_BITS)
    }

    /// Queue `event` under the key `(at, seq)`; [`EventQueue::fits`] must hold.
    #[inline(always)]
    pub(crate) fn push(&mut self, at: Time, seq: u64, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(event);
                s as u64
            }
            None => {
                let s = self.slab.len() as u64;
                assert!(s <= SLOT_MASK, "more than 2^24 events queued at once");
                self.slab.push(Some(event));
                s
            }
        };
        debug_assert!(seq < 1 << (64 - SLOT_BITS), "sequence number out of range");
        let key = Key {
            at: at.0,
            tag: (seq << SLOT_BITS) | slot,
        };
        // `Key`'s order is reversed: `a >= b` means `a` comes up no later than `b`.
        match self.tail.back() {
            _ if !self.ordered => self.heap.push(key),
            Some(last) if *last < key => self.heap.push(key),
            _ => self.tail.push_back(key),
        }
    }

    /// The earliest key, and whether it is the tail's.
    #[inline(always)]
    fn first(&self) -> Option<(Key, bool)> {
        if !self.ordered {
            return self.heap.peek().map(|k| (*k, false));
        }
        match (self.heap.peek(), self.tail.front()) {
            (Some(h), Some(t)) => Some(if t > h { (*t, true) } else { (*h, false) }),
            (Some(h), None) => Some((*h, false)),
            (None, Some(t)) => Some((*t, true)),
            (None, None) => None,
        }
    }

    /// The time of the earliest event.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<Time> {
        self.first().map(|(k, _)| Time(k.at))
    }

    /// Take the earliest event, with its key.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Time, u64, E)> {
        let k = match self.first()? {
            (_, true) => self.tail.pop_front(),
            (_, false) => self.heap.pop(),
        }?;
        let slot = (k.tag & SLOT_MASK) as u32;
        let event = self.slab[slot as usize].take().expect("queued event");
        self.free.push(slot);
        Some((Time(k.at), k.tag >> SLOT_BITS, event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn says_when_an_event_would_not_fit() {
        let mut q: EventQueue<()> = EventQueue::new(4, false);
        assert!(q.fits(1));
        assert!(q.fits((1 << 40) - 1));
        assert!(!q.fits(1 << 40), "a sequence number past 40 bits");
        // Every slot taken (the slab holds 2^24 events) and none free.
        q.slab = vec![None; (SLOT_MASK + 1) as usize];
        assert!(!q.fits(1));
        // One popped event frees its slot for the next.
        q.free.push(7);
        assert!(q.fits(1));
    }

    proptest! {
        /// Events come out in `(time, seq)` order, each with its own payload, under any
        /// interleaving of pushes and pops.
        #[test]
        fn pops_in_time_then_sequence_order(
            ops in proptest::collection::vec(proptest::option::of(0u64..50), 1..400),
            ahead in proptest::bool::ANY,
            ordered in proptest::bool::ANY,
        ) {
            // `ahead`: times relative to the last pop, mostly later than everything queued
            // (the tail's path); otherwise absolute times in a small range (the heap's).
            let mut now = 0u64;
            let mut q = EventQueue::new(4, ordered);
            let mut reference = std::collections::BTreeMap::new();
            let mut seq = 0u64;
            for op in ops {
                match op {
                    Some(at) => {
                        let at = if ahead { now + at * 3 + seq % 2 } else { at };
                        seq += 1;
                        q.push(Time(at), seq, (at, seq));
                        reference.insert((at, seq), (at, seq));
                    }
                    None => {
                        let expected = reference.pop_first().map(|(k, v)| (Time(k.0), k.1, v));
                        if let Some(e) = expected {
                            now = e.0 .0;
                        }
                        prop_assert_eq!(q.peek_time(), expected.map(|e| e.0));
                        prop_assert_eq!(q.pop(), expected);
                    }
                }
            }
            while let Some((k, v)) = reference.pop_first() {
                prop_assert_eq!(q.pop(), Some((Time(k.0), k.1, v)));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
