//! The ring's configuration: cluster size, shared timing, ring arrangement and the
//! hop-acknowledgement variant.

use std::time::Duration;

use election_core::{NodeId, Rng, RngExt, SeedableRng, Timing};

/// How the `n` node ids are laid out on the unidirectional ring. Messages travel from a node
/// to its successor.
///
/// With every node initiating at once (Chang & Roberts 1979, section 3), the arrangement
/// decides the message count: [`Arrangement::Ascending`] is the best case (`2n − 1` ELECTION
/// messages: ids *increase* along the direction of travel, so every message but `n`'s is
/// discarded after one hop), [`Arrangement::Descending`] the worst (`n(n+1)/2`: ids
/// *decrease* along the direction of travel, so the message of id `i` travels `i` hops).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arrangement {
    /// The successor of `i` is `i + 1`, and the successor of `n` is `1`.
    Ascending,
    /// The successor of `i` is `i − 1`, and the successor of `1` is `n`.
    Descending,
    /// A permutation of `1..=n` drawn from `seed` (a Fisher–Yates shuffle driven by
    /// [`election_core::Rng`] seeded with `seed`). Every node computes the same permutation
    /// from the shared configuration, so no state is exchanged; the runner puts the trial's
    /// seed here.
    Random {
        /// The permutation's seed.
        seed: u64,
    },
}

impl Arrangement {
    /// The lowercase option name: `ascending`, `descending` or `random`.
    pub fn name(&self) -> &'static str {
        match self {
            Arrangement::Ascending => "ascending",
            Arrangement::Descending => "descending",
            Arrangement::Random { .. } => "random",
        }
    }

    /// The arrangement named `name` (`ascending`, `descending` or `random`; `random` takes
    /// `seed`, normally the trial's), or `None` for an unknown name.
    pub fn from_name(name: &str, seed: u64) -> Option<Arrangement> {
        match name {
            "ascending" => Some(Arrangement::Ascending),
            "descending" => Some(Arrangement::Descending),
            "random" => Some(Arrangement::Random { seed }),
            _ => None,
        }
    }
}

/// The ring order for `n` nodes: `order[k + 1]` is the successor of `order[k]`, and
/// `order[0]` is the successor of `order[n − 1]`. Every node computes the same order.
pub fn ring_order(n: u32, arrangement: Arrangement) -> Vec<NodeId> {
    let mut order: Vec<NodeId> = (1..=n).map(NodeId).collect();
    match arrangement {
        Arrangement::Ascending => {}
        Arrangement::Descending => order.reverse(),
        Arrangement::Random { seed } => {
            let mut rng = Rng::seed_from_u64(seed);
            // Fisher–Yates; draw u32 (not usize) so the permutation is the same on 32- and
            // 64-bit targets.
            for i in (1..order.len()).rev() {
                let j = rng.random_range(0..=i as u32) as usize;
                order.swap(i, j);
            }
        }
    }
    order
}

/// Configuration shared by every node of a ring cluster (wrap it in an `Arc`).
#[derive(Clone, Debug, PartialEq)]
pub struct RingConfig {
    /// Number of nodes; ids are `1..=n`.
    pub n: u32,
    /// Heartbeat period and failure-detection window, the same for every protocol.
    pub timing: Timing,
    /// The ring's layout (option `arrangement`: `ascending`, `descending`, `random`).
    pub arrangement: Arrangement,
    /// Acknowledge every hop, skip successors that do not acknowledge within `t_hop`, and
    /// restart an election that produces no ELECTED within [`RingConfig::restart_bound`].
    /// `false` is the original 1979 algorithm with no failure handling.
    pub hop_acks: bool,
    /// How long a sender waits for a hop acknowledgement before it skips the silent
    /// successor (parameter `t_hop`). Must exceed the network's round trip.
    pub t_hop: Duration,
}

impl RingConfig {
    /// Fair defaults for `n` nodes: [`Timing::default()`] (50 ms heartbeats, suspicion after
    /// 150–300 ms), the [`Arrangement::Ascending`] ring, `hop_acks` on, `t_hop` = 20 ms
    /// (ten times a 1 ms one-way latency's round trip, well under the detection window).
    pub fn new(n: u32) -> Self {
        RingConfig {
            n,
            timing: Timing::default(),
            arrangement: Arrangement::Ascending,
            hop_acks: true,
            t_hop: Duration::from_millis(20),
        }
    }

    /// Checks every field, naming the first bad one and its value.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("n must be at least 1 (got 0)".into());
        }
        if self.timing.heartbeat.is_zero() {
            return Err(format!(
                "timing.heartbeat must be > 0 (got {:?})",
                self.timing.heartbeat
            ));
        }
        if self.timing.detect_timeout <= self.timing.heartbeat {
            return Err(format!(
                "timing.detect_timeout must exceed timing.heartbeat ({:?}) (got {:?})",
                self.timing.heartbeat, self.timing.detect_timeout
            ));
        }
        if self.hop_acks && self.t_hop.is_zero() {
            return Err(format!(
                "t_hop must be > 0 when hop_acks is on (got {:?})",
                self.t_hop
            ));
        }
        Ok(())
    }

    /// The ring order of this configuration (see [`ring_order`]).
    pub fn ring_order(&self) -> Vec<NodeId> {
        ring_order(self.n, self.arrangement)
    }

    /// With `hop_acks`: how long a node that sent an ELECTION waits for the election to end
    /// (an ELECTED, or its own id returning) before it starts again: `2 · n · t_hop`.
    ///
    /// Why: a ring position costs at most `t_hop` (a live successor answers within `t_hop`;
    /// a dead one costs exactly `t_hop` before it is skipped). After a node sends
    /// ELECTION(x), the largest live id `m` has its own ELECTION in flight within the `d`
    /// positions from the node to `m`; that message needs `n` positions to return to `m`, and
    /// ELECTED(`m`) needs `n − d` more to reach the node: `2n` positions in all.
    pub fn restart_bound(&self) -> Duration {
        self.t_hop.saturating_mul(2u32.saturating_mul(self.n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<NodeId> {
        v.iter().copied().map(NodeId).collect()
    }

    #[test]
    fn ascending_and_descending_orders() {
        assert_eq!(ring_order(4, Arrangement::Ascending), ids(&[1, 2, 3, 4]));
        assert_eq!(ring_order(4, Arrangement::Descending), ids(&[4, 3, 2, 1]));
    }

    #[test]
    fn random_order_is_a_seeded_permutation() {
        for n in 1..40 {
            for seed in 0..5 {
                let a = ring_order(n, Arrangement::Random { seed });
                let b = ring_order(n, Arrangement::Random { seed });
                assert_eq!(a, b, "same seed, same ring");
                let mut sorted = a.clone();
                sorted.sort();
                assert_eq!(sorted, ring_order(n, Arrangement::Ascending));
            }
        }
        assert_ne!(
            ring_order(20, Arrangement::Random { seed: 1 }),
            ring_order(20, Arrangement::Random { seed: 2 })
        );
    }

    #[test]
    fn arrangement_names_round_trip() {
        for a in [
            Arrangement::Ascending,
            Arrangement::Descending,
            Arrangement::Random { seed: 9 },
        ] {
            assert_eq!(Arrangement::from_name(a.name(), 9), Some(a));
        }
        assert_eq!(Arrangement::from_name("spiral", 0), None);
    }

    #[test]
    fn defaults_are_valid_and_bad_fields_are_named() {
        let c = RingConfig::new(5);
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.restart_bound(), Duration::from_millis(200));
        let mut bad = c.clone();
        bad.n = 0;
        assert!(bad.validate().unwrap_err().contains("n must"));
        let mut bad = c.clone();
        bad.t_hop = Duration::ZERO;
        assert!(bad.validate().unwrap_err().starts_with("t_hop"));
        bad.hop_acks = false;
        assert_eq!(bad.validate(), Ok(()));
        let mut bad = c.clone();
        bad.timing.detect_timeout = Duration::from_millis(10);
        assert!(bad.validate().unwrap_err().contains("detect_timeout"));
    }
}
