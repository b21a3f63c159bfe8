//! Chang & Roberts (1979), the classic model: no failures, `hop_acks` off, a reliable FIFO
//! network with constant 1 ms latency. The message counts of the paper hold exactly.
//!
//! "Every node initiates at the same instant": automatic detection is off from t = 0 (so no
//! boot election starts), then every node is forced to suspect at t = 10 ms, in id order, at
//! the same instant; no message is delivered before every node has initiated. The trace then
//! holds this one election and nothing else but the new leader's heartbeats.
use crate::common;

use common::{one_leader_named_by_all, run, sent, suspects};
use election_core::{MsgCategory, NodeId};
use election_ring::{ring_order, Arrangement, RingConfig};
use election_sim::{SimConfig, TrialReport};

const SIZES: [u32; 7] = [2, 3, 4, 5, 8, 13, 32];

fn classic(n: u32, arrangement: Arrangement) -> RingConfig {
    let mut ring = RingConfig::new(n);
    ring.arrangement = arrangement;
    ring.hop_acks = false;
    ring
}

fn traced(n: u32, seed: u64) -> SimConfig {
    let mut sim = SimConfig::new(n, seed);
    sim.trace = true;
    sim
}

fn all_initiate(n: u32, ring: RingConfig) -> TrialReport {
    let mut sim = traced(n, 7);
    sim.faults = suspects(10.0, 1..=n);
    run(sim, ring)
}

fn assert_classic_counts(r: &TrialReport, n: u32, elections: usize) {
    assert_eq!(sent(r, "ELECTION"), elections, "ELECTION messages, n = {n}");
    assert_eq!(sent(r, "ELECTED"), n as usize, "ELECTED messages, n = {n}");
    assert_eq!(
        sent(r, "ACK"),
        0,
        "no hop acknowledgements in the 1979 algorithm"
    );
    assert_eq!(
        r.metrics.total.sent_of(MsgCategory::Election),
        elections as u64
    );
    assert_eq!(r.metrics.total.sent_of(MsgCategory::Leader), n as u64);
    assert_eq!(one_leader_named_by_all(r), NodeId(n), "the largest id wins");
    assert_eq!(r.metrics.max_leaders, 1);
}

/// Worst case (section 3): ids decrease along the direction of travel, so ELECTION(i) travels
/// i hops (down to 1, then one more to n, which discards it; n's own goes all the way round):
/// 1 + 2 + ... + n = n(n+1)/2.
#[test]
fn all_initiate_ids_descending_along_the_ring_cost_n_n_plus_1_over_2() {
    for n in SIZES {
        let r = all_initiate(n, classic(n, Arrangement::Descending));
        assert_classic_counts(&r, n, (n * (n + 1) / 2) as usize);
    }
}

/// Best case: ids increase along the direction of travel, so every ELECTION(i), i < n, is
/// discarded by its successor (a participant with a larger id) after one hop, and ELECTION(n)
/// goes round: (n − 1) + n = 2n − 1.
#[test]
fn all_initiate_ids_ascending_along_the_ring_cost_2n_minus_1() {
    for n in SIZES {
        let r = all_initiate(n, classic(n, Arrangement::Ascending));
        assert_classic_counts(&r, n, (2 * n - 1) as usize);
    }
}

/// The same worst case reached without forced suspicion: with `detect_jitter = 0` every
/// node's detector fires at exactly `detect_timeout` after the common boot.
#[test]
fn cold_start_without_jitter_is_also_a_simultaneous_start() {
    for n in [3, 6, 10] {
        for (arrangement, elections) in [
            (Arrangement::Descending, n * (n + 1) / 2),
            (Arrangement::Ascending, 2 * n - 1),
        ] {
            let mut ring = classic(n, arrangement);
            ring.timing.detect_jitter = std::time::Duration::ZERO;
            let r = run(traced(n, 3), ring);
            assert_classic_counts(&r, n, elections as usize);
        }
    }
}

/// The count depends only on the order in which ids meet the direction of travel; a random
/// ring lies between the two extremes.
#[test]
fn all_initiate_on_random_rings_lie_between_best_and_worst() {
    for n in SIZES {
        for seed in 0..4 {
            let r = all_initiate(n, classic(n, Arrangement::Random { seed }));
            let e = sent(&r, "ELECTION") as u32;
            assert!((2 * n - 1..=n * (n + 1) / 2).contains(&e), "n = {n}: {e}");
            assert_eq!(sent(&r, "ELECTED"), n as usize);
            assert_eq!(one_leader_named_by_all(&r), NodeId(n));
        }
    }
}

/// A single initiator k: its candidacy grows to the largest id seen (every node is still a
/// non-participant and passes on the larger of the carried id and its own) until it reaches
/// node n, d(k, n) hops downstream; n's own ELECTION then goes all the way round (n hops).
/// ELECTION: n + d(k, n); ELECTED: n.
#[test]
fn a_single_initiator_costs_n_plus_its_distance_to_the_largest_id() {
    for n in [2, 3, 5, 9] {
        for arrangement in [
            Arrangement::Ascending,
            Arrangement::Descending,
            Arrangement::Random { seed: 11 },
            Arrangement::Random { seed: 12 },
        ] {
            let order = ring_order(n, arrangement);
            let pos = |id: u32| order.iter().position(|&x| x == NodeId(id)).unwrap();
            for k in 1..=n {
                let d = (pos(n) + n as usize - pos(k)) % n as usize;
                let mut sim = traced(n, 5);
                sim.faults = suspects(10.0, [k]);
                let r = run(sim, classic(n, arrangement));
                assert_classic_counts(&r, n, n as usize + d);
            }
        }
    }
    // The named cases on an ascending ring of 6: initiator 1 pays 2n − 1 = 11 (it is
    // n − 1 hops upstream of 6), initiator 6 pays n = 6, initiator 5 pays n + 1 = 7.
    for (k, elections) in [(1, 11), (6, 6), (5, 7)] {
        let mut sim = traced(6, 5);
        sim.faults = suspects(10.0, [k]);
        let r = run(sim, classic(6, Arrangement::Ascending));
        assert_classic_counts(&r, 6, elections);
    }
}

/// The hop-acknowledged variant, fault-free, pays exactly one ACK per ELECTION and ELECTED
/// hop and otherwise sends the same messages.
#[test]
fn hop_acks_add_one_ack_per_hop_and_nothing_else() {
    for n in [3, 8] {
        for (arrangement, elections) in [
            (Arrangement::Descending, n * (n + 1) / 2),
            (Arrangement::Ascending, 2 * n - 1),
        ] {
            let mut ring = classic(n, arrangement);
            ring.hop_acks = true;
            let r = all_initiate(n, ring);
            assert_eq!(sent(&r, "ELECTION"), elections as usize);
            assert_eq!(sent(&r, "ELECTED"), n as usize);
            assert_eq!(sent(&r, "ACK"), (elections + n) as usize);
            assert_eq!(one_leader_named_by_all(&r), NodeId(n));
        }
    }
}

/// A run is a function of its seed: the same configuration gives the same trace.
#[test]
fn runs_are_deterministic_for_a_seed() {
    for seed in [1, 2] {
        let go = || {
            let mut ring = RingConfig::new(12);
            ring.arrangement = Arrangement::Random { seed };
            run(traced(12, seed), ring)
        };
        let (a, b) = (go(), go());
        assert!(!a.trace.is_empty());
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.metrics, b.metrics);
    }
}
