//! The engine's event queue: a binary heap while few events wait, a calendar of time buckets
//! while many do, over a slab of events.
//!
//! Events are ordered by `(time, seq)`, `seq` being unique per key. The queue holds only the
//! 16-byte key `(time, seq << 24 | slot)`, where `slot` is where the event waits in the slab,
//! so moving and comparing keys never touches a whole event (a bully message's event is 56
//! bytes); since `seq` is unique, comparing `seq << 24 | slot` orders exactly as comparing
//! `seq`.
//!
//! # Two shapes
//!
//! A small trial keeps a handful of events waiting (a 5-node Raft: its timers and the
//! messages of one heartbeat round), and a binary heap of a few dozen keys is as cheap as
//! anything. A large one keeps thousands in flight (a 101-node bully's cold start: about
//! 9,500), nearly all due within a few latencies of now, and there a heap pays `log2` of that
//! on every pop: 13 levels of unpredictable compares, a quarter of a whole trial's
//! instructions. Simulated time only moves forward, so those keys can be dropped into buckets
//! of simulated time instead (Brown's calendar queue, 1988, with the far future in a heap as
//! in a ladder queue):
//!
//! * time is cut into buckets of `2^shift` ns; `cur` is the bucket being drained;
//! * the keys of bucket `cur` sit sorted in `active`, and pop from its front;
//! * the next `RING` buckets are plain unsorted vectors in a ring (push: one `Vec::push`), with
//!   a bitmap of the non-empty ones;
//! * keys further ahead (timers, the fault timeline, the noise schedule) wait in the heap and
//!   move into the ring when the window reaches them.
//!
//! When `active` runs out, the next non-empty bucket is found in the bitmap (or, with the ring
//! empty, the heap's earliest bucket is jumped to), the far keys now within the window move
//! into the ring, and the bucket is sorted once. A key pushed into the bucket being drained (a
//! zero-delay event), or before it after a peek, is inserted at its sorted place.
//!
//! The queue is a plain heap (every key in `far`, popped one at a time) until more than
//! `HEAP_MAX` keys wait, and goes back to it when fewer than `HEAP_MIN` do, so that the calendar
//! is only paid for where it pays. With a constant network latency the heap keeps beside it a
//! run of keys in order, which takes every key later than the run's last in O(1): messages
//! come due in the order they are sent. The bucket width is about a 128th of the network's typical
//! latency ([`EventQueue::new`]), so that a broadcast's deliveries spread over a few dozen
//! buckets and the ring (1024 buckets) reaches past the latency's tail: measured in
//! instructions, a 64th sorted more keys per bucket (bully's cold start: +2 to 4 %), a 1024th
//! pushed a broadcast's tail into the heap (+20 to 35 %). A width that followed the load was
//! tried too: traffic alternates between bursts (a broadcast's deliveries) and lone timers,
//! and the width only oscillated.
//!
//! The order of pops is exactly the order of `(time, seq)` whatever the shape and the width:
//! they decide how the work is split between the heap, the ring and the sorts, never which
//! event comes first (the property test below checks it against a sorted map, for widths from
//! 1 ns to 2^20 ns and with both shapes in use).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use election_core::Time;

/// Bits of a key's tag that hold the slab slot.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Buckets in the ring (a power of two).
const RING: usize = 1024;
const RING_MASK: u64 = RING as u64 - 1;
const WORDS: usize = RING / 64;
/// A heap of more keys than this becomes a calendar; a calendar of fewer than `HEAP_MIN`, a
/// heap again.
const HEAP_MAX: usize = 128;
const HEAP_MIN: usize = 32;
/// The narrowest and widest buckets: 64 ns and 2^40 ns (18 minutes).
const MIN_SHIFT: u32 = 6;
const MAX_SHIFT: u32 = 40;

/// `(time, seq << SLOT_BITS | slot)`, ordered as the tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    at: u64,
    tag: u64,
}

impl Key {
    /// The tuple as one 128-bit number: one comparison, no branch between the halves.
    #[inline(always)]
    fn wide(self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.tag)
    }
}

impl PartialOrd for Key {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.wide().cmp(&other.wide())
    }
}

/// A priority queue of events keyed by `(time, seq)`; `seq` must be unique among queued keys
/// and below 2^40, at most 2^24 events may wait at once, and no key may be pushed earlier than
/// the last one popped (simulated time never goes back; a key earlier than one only peeked at
/// is fine).
#[derive(Clone)]
pub(crate) struct EventQueue<E> {
    /// Every key is in `far`, and pops come from there one at a time.
    heap: bool,
    /// A bucket is `2^shift` ns of simulated time.
    shift: u32,
    /// The bucket being drained.
    cur: u64,
    /// The keys of bucket `cur` not yet popped, in order, from `head` on (in heap mode, the
    /// one key popped last).
    active: Vec<Key>,
    head: usize,
    /// Bucket `b`, for `cur < b < cur + RING`, at `ring[b % RING]`, unsorted; allocated the
    /// first time the queue becomes a calendar.
    ring: Vec<Vec<Key>>,
    /// A bit per ring slot: the bucket holds keys.
    occupied: [u64; WORDS],
    /// Keys in the ring.
    near: usize,
    /// In heap mode every key but the ordered run's; as a calendar, the keys of buckets
    /// `cur + RING` and later.
    far: BinaryHeap<Reverse<Key>>,
    /// In heap mode, with a constant network latency: keys later than every key before them,
    /// in order (a message sent later arrives later), each pushed and popped in O(1).
    ordered: bool,
    run: std::collections::VecDeque<Key>,
    /// Emptied bucket vectors, kept for the next bucket to fill: a trial allocates as many
    /// as buckets are ever non-empty at once, not one per ring slot.
    spare: Vec<Vec<Key>>,
    /// The sizes at which the heap becomes a calendar and back.
    heap_max: usize,
    heap_min: usize,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
}

impl<E> EventQueue<E> {
    /// A queue for about `n` events at once, for a network whose typical latency is
    /// `typical_ns` (the bucket width is about a 128th of it: see the module docs);
    /// `ordered`: the latency is constant, so messages come due in the order they are sent.
    pub(crate) fn new(n: usize, typical_ns: u64, ordered: bool) -> Self {
        let mut q = Self::tuned(n, typical_ns, HEAP_MAX, HEAP_MIN);
        q.ordered = ordered;
        q
    }

    /// [`EventQueue::new`] with its thresholds given (the tests exercise every path with small
    /// ones).
    fn tuned(n: usize, typical_ns: u64, heap_max: usize, heap_min: usize) -> Self {
        let width = (typical_ns / 128).max(1);
        let shift = (63 - width.leading_zeros()).clamp(MIN_SHIFT, MAX_SHIFT);
        EventQueue {
            heap: true,
            shift,
            cur: 0,
            active: Vec::new(),
            head: 0,
            ring: Vec::new(),
            occupied: [0; WORDS],
            near: 0,
            far: BinaryHeap::with_capacity(n.min(HEAP_MAX + 1)),
            ordered: false,
            run: std::collections::VecDeque::new(),
            spare: Vec::new(),
            heap_max,
            heap_min,
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
        self.push_key(Key {
            at: at.0,
            tag: (seq << SLOT_BITS) | slot,
        });
    }

    #[inline(always)]
    fn push_key(&mut self, key: Key) {
        if self.heap {
            match self.run.back() {
                Some(last) if *last > key => self.far.push(Reverse(key)),
                _ if self.ordered => self.run.push_back(key),
                _ => self.far.push(Reverse(key)),
            }
            return;
        }
        let b = key.at >> self.shift;
        if b <= self.cur {
            // The bucket being drained, or an earlier one when a peek moved on to a later
            // bucket before this push (keys are never earlier than the last one popped): it
            // joins the sorted run, whose keys are all before the ring's. Keys pushed now mostly
            // come after those waiting, so the insertion moves few.
            let pos = self.head + self.active[self.head..].partition_point(|k| *k < key);
            self.active.insert(pos, key);
        } else if b - self.cur < RING as u64 {
            self.push_near(b, key);
        } else {
            self.far.push(Reverse(key));
        }
    }

    /// Put `key` of bucket `b` (within the ring's reach) into its ring slot.
    #[inline(always)]
    fn push_near(&mut self, b: u64, key: Key) {
        let i = (b & RING_MASK) as usize;
        let bucket = &mut self.ring[i];
        if bucket.capacity() == 0 {
            if let Some(v) = self.spare.pop() {
                *bucket = v;
            }
        }
        bucket.push(key);
        self.occupied[i / 64] |= 1 << (i % 64);
        self.near += 1;
    }

    /// Bring the earliest key within reach: after this, `active` holds it, or the queue is a
    /// small heap (and `active` is empty), or the queue is empty.
    #[inline(always)]
    fn settle(&mut self) {
        if self.head >= self.active.len() && !self.small_heap() {
            self.advance();
        }
    }

    /// `active` is drained and the queue is a calendar, or a heap that has outgrown
    /// `heap_max`: move on to the next bucket that holds keys (unless the queue is empty, or has
    /// just become a heap again).
    fn advance(&mut self) {
        self.active.clear();
        self.head = 0;
        if self.heap {
            // Reached only once the heap has outgrown `heap_max` (a small heap pops directly).
            self.become_calendar();
        } else if self.near + self.far.len() < self.heap_min {
            // A heap again: `pop` and `peek_time` take from it directly, and `active` (just
            // drained) stays empty while it is one.
            self.become_heap();
            return;
        }
        let next = if self.near > 0 {
            self.cur + self.next_occupied()
        } else if let Some(Reverse(k)) = self.far.peek() {
            k.at >> self.shift
        } else {
            return;
        };
        self.cur = next;
        // The window now reaches `next + RING`: far keys before that move into the ring.
        self.pull_far();
        let i = (next & RING_MASK) as usize;
        self.occupied[i / 64] &= !(1 << (i % 64));
        let bucket = &mut self.ring[i];
        if bucket.len() == 1 {
            // A bucket of one key (most of them, between bursts): no swap, no sort.
            self.active.push(bucket[0]);
            bucket.clear();
            self.near -= 1;
            return;
        }
        std::mem::swap(&mut self.active, bucket);
        let drained = std::mem::take(bucket);
        if drained.capacity() > 0 {
            self.spare.push(drained);
        }
        self.near -= self.active.len();
        self.active.sort_unstable();
    }

    /// Far keys within the ring's reach of `cur` move into the ring (those of bucket `cur`
    /// itself into its slot, which the caller drains next).
    #[inline]
    fn pull_far(&mut self) {
        while let Some(&Reverse(k)) = self.far.peek() {
            let b = k.at >> self.shift;
            if b - self.cur >= RING as u64 {
                break;
            }
            self.far.pop();
            self.push_near(b, k);
        }
    }

    /// The heap has grown: become a calendar (`active` is empty). Every key is in `far`; the
    /// next advance jumps to the earliest one's bucket and pulls in the window after it.
    #[cold]
    fn become_calendar(&mut self) {
        if self.ring.is_empty() {
            self.ring = (0..RING).map(|_| Vec::new()).collect();
        }
        self.far.extend(self.run.drain(..).map(Reverse));
        self.heap = false;
        debug_assert_eq!(self.near, 0);
    }

    /// The calendar has emptied out: become a heap again (`active` is empty).
    #[cold]
    fn become_heap(&mut self) {
        for (w, word) in self.occupied.iter_mut().enumerate() {
            while *word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                *word &= *word - 1;
                self.far.extend(self.ring[i].drain(..).map(Reverse));
            }
        }
        self.near = 0;
        self.heap = true;
    }

    /// How many buckets after `cur` the next non-empty ring bucket is (`near > 0`).
    #[inline]
    fn next_occupied(&self) -> u64 {
        let start = ((self.cur + 1) & RING_MASK) as usize;
        let (w0, b0) = (start / 64, start % 64);
        // The first word from bit `b0` on, then whole words, wrapping, then the first word's
        // low bits.
        let first = self.occupied[w0] & (!0u64 << b0);
        let found = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            let mut at = None;
            for k in 1..=WORDS {
                let w = (w0 + k) % WORDS;
                let bits = if k == WORDS {
                    self.occupied[w] & !(!0u64 << b0)
                } else {
                    self.occupied[w]
                };
                if bits != 0 {
                    at = Some(w * 64 + bits.trailing_zeros() as usize);
                    break;
                }
            }
            at.expect("a ring holding keys has an occupied bucket")
        };
        // Bucket `cur` itself is never in the ring, so the distance is 1 to RING - 1.
        (found as u64).wrapping_sub(self.cur) & RING_MASK
    }

    /// A heap small enough to stay one (then `active` is empty).
    #[inline(always)]
    fn small_heap(&self) -> bool {
        self.heap && self.far.len() + self.run.len() <= self.heap_max
    }

    /// The earliest key of a heap: the heap's or the ordered run's.
    #[inline(always)]
    fn heap_first(&self) -> Option<Key> {
        match (self.far.peek(), self.run.front()) {
            (Some(Reverse(h)), Some(r)) => Some(if r < h { *r } else { *h }),
            (Some(Reverse(h)), None) => Some(*h),
            (None, r) => r.copied(),
        }
    }

    /// The time of the earliest event.
    #[inline(always)]
    pub(crate) fn peek_time(&mut self) -> Option<Time> {
        self.settle();
        match self.active.get(self.head) {
            Some(k) => Some(Time(k.at)),
            None => self.heap_first().map(|k| Time(k.at)),
        }
    }

    /// Take the earliest event, with its key.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<(Time, u64, E)> {
        self.settle();
        let k = match self.active.get(self.head) {
            Some(&k) => {
                self.head += 1;
                k
            }
            // A small heap (or nothing at all).
            None => match (self.far.peek(), self.run.front()) {
                (Some(Reverse(h)), Some(r)) if r < h => self.run.pop_front(),
                (None, Some(_)) => self.run.pop_front(),
                _ => self.far.pop().map(|Reverse(k)| k),
            }?,
        };
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
        let mut q: EventQueue<()> = EventQueue::new(4, 1_000_000, false);
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

    #[test]
    fn finds_the_next_bucket_across_the_ring_and_beyond_it() {
        // A calendar from the first key, 64 ns wide: a key every 10 buckets, one just inside
        // the ring's reach and one far beyond it, pushed out of order.
        let mut q = EventQueue::tuned(4, 64 * 64, 0, 0);
        let times = [
            640 * 3,
            64 * (RING as u64 - 1),
            64 * 5,
            64 * 40 * RING as u64,
            0,
            64 * (RING as u64 + 3),
        ];
        for (i, &t) in times.iter().enumerate() {
            q.push(Time(t), i as u64 + 1, t);
        }
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        for t in sorted {
            assert_eq!(q.peek_time(), Some(Time(t)));
            assert_eq!(q.pop().map(|(at, _, e)| (at, e)), Some((Time(t), t)));
        }
        assert_eq!(q.pop(), None);
    }

    proptest! {
        /// Events come out in `(time, seq)` order, each with its own payload, under any
        /// interleaving of pushes, peeks and pops that never pushes before the last pop, for
        /// bucket widths from 1 ns (most keys far) to 2^20 ns (every key in one bucket), the
        /// heap becoming a calendar and back at sizes from 0 to 11, with and without the
        /// ordered run.
        #[test]
        fn pops_in_time_then_sequence_order(
            ops in proptest::collection::vec(
                proptest::option::of((0u64..50, 0u32..4, proptest::bool::weighted(0.1))),
                1..400,
            ),
            width_log in 0u32..21,
            scale_log in 0u32..24,
            heap_max in 0usize..12,
            heap_min in 0usize..12,
            ordered in proptest::bool::ANY,
        ) {
            // Each push lands `at * 2^scale` (times a spread) after the last pop: from the
            // bucket being drained to far past the ring.
            let mut now = 0u64;
            let heap_min = heap_min.min(heap_max);
            let mut q =
                EventQueue::tuned(4, (1u64 << width_log) * 64, heap_max, heap_min);
            q.ordered = ordered;
            let mut reference: std::collections::BTreeMap<(u64, u64), (u64, u64)> =
                std::collections::BTreeMap::new();
            let mut seq = 0u64;
            for op in ops {
                match op {
                    Some((at, spread, peek)) => {
                        // A peek moves the queue on to the earliest bucket without popping: the
                        // pushes after it may be earlier than the peeked key (never than `now`).
                        if peek {
                            let expected = reference.first_key_value().map(|(k, _)| Time(k.0));
                            prop_assert_eq!(q.peek_time(), expected);
                        }
                        let at = now + (at << scale_log) * (1 + u64::from(spread) * 37);
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
