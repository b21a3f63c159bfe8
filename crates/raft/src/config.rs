//! The protocol's configuration: timing, the election-timeout range, the two options and the
//! lagging replicas.

use std::time::Duration;

use election_core::{NodeId, Timing};

/// Configuration shared by every node of one Raft cluster (wrap it in an `Arc`).
///
/// Field names are the names the runner uses for options (`pre_vote`, `check_quorum`).
#[derive(Clone, Debug, PartialEq)]
pub struct RaftConfig {
    /// Shared timing. Only `heartbeat` is read directly (the leader's AppendEntries period);
    /// the election timeout range below defaults to the shared failure-detection window.
    pub timing: Timing,
    /// Lower bound of the election timeout. Also "the election timeout" of CheckQuorum and of
    /// the PreVote leader-contact rule.
    pub timeout_min: Duration,
    /// Upper bound of the election timeout. Equal to `timeout_min` means no randomization.
    pub timeout_max: Duration,
    /// PreVote (thesis §9.6): ask whether a majority would vote before increasing the term.
    pub pre_vote: bool,
    /// CheckQuorum (thesis §6.2): a leader that has not heard from a majority within
    /// `timeout_min` steps down; and, as etcd ties them together, leader stickiness (thesis
    /// §4.2.3): a node that has heard from a current leader within `timeout_min` (or is that
    /// leader) ignores a RequestVote of a higher term instead of adopting the term.
    pub check_quorum: bool,
    /// Lagging replicas: `(node, k)` puts `node`'s log `k ≥ 1` entries behind the leader's
    /// whenever it takes the leader's entries, but never further back than the start of the
    /// leader's term (see the crate docs, "The log"). Each node at most once. Empty by default.
    pub lagging: Vec<(NodeId, u64)>,
    /// The size of the configured cluster (node ids `1..=n`); majorities are of this number.
    pub n: u32,
}

impl RaftConfig {
    /// The fair defaults for an `n`-node cluster: [`Timing::default()`] (50 ms heartbeats),
    /// election timeouts drawn from `[detect_timeout, detect_timeout + detect_jitter]` =
    /// 150–300 ms (the same window every protocol's failure detector uses, and the range the
    /// Raft paper suggests), PreVote and CheckQuorum off (the paper's basic algorithm, §5.2).
    pub fn new(n: u32) -> RaftConfig {
        RaftConfig::with_timing(n, Timing::default())
    }

    /// Like [`RaftConfig::new`], with the election timeout range derived from `timing`.
    pub fn with_timing(n: u32, timing: Timing) -> RaftConfig {
        RaftConfig {
            timing,
            timeout_min: timing.detect_timeout,
            timeout_max: timing.detect_timeout + timing.detect_jitter,
            pre_vote: false,
            check_quorum: false,
            lagging: Vec::new(),
            n,
        }
    }

    /// How many entries `node` lags behind the leader's log (0: not lagging).
    pub fn lag(&self, node: NodeId) -> u64 {
        self.lagging
            .iter()
            .find(|&&(id, _)| id == node)
            .map_or(0, |&(_, k)| k)
    }

    /// Checks the configuration; the error names the offending field and its value.
    ///
    /// Besides positivity, Raft's timing requirement (`broadcastTime ≪ electionTimeout`,
    /// §5.6) is enforced in its weakest form: `timing.heartbeat < timeout_min`, without which a
    /// healthy leader cannot keep its followers from timing out.
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 {
            return Err("n (0) must be at least 1".into());
        }
        if self.timing.heartbeat.is_zero() {
            return Err("timing.heartbeat (0ns) must be positive".into());
        }
        if self.timeout_min.is_zero() {
            return Err("timeout_min (0ns) must be positive".into());
        }
        if self.timeout_max < self.timeout_min {
            return Err(format!(
                "timeout_max ({:?}) must be at least timeout_min ({:?})",
                self.timeout_max, self.timeout_min
            ));
        }
        if self.timing.heartbeat >= self.timeout_min {
            return Err(format!(
                "timing.heartbeat ({:?}) must be shorter than timeout_min ({:?})",
                self.timing.heartbeat, self.timeout_min
            ));
        }
        for (i, &(node, k)) in self.lagging.iter().enumerate() {
            if node.0 == 0 || node.0 > self.n {
                return Err(format!(
                    "lagging ({node}:{k}): node {node} is not in the cluster 1..={}",
                    self.n
                ));
            }
            if k == 0 {
                return Err(format!(
                    "lagging ({node}:{k}): a lag must be at least 1 entry"
                ));
            }
            if self.lagging[..i].iter().any(|&(other, _)| other == node) {
                return Err(format!("lagging ({node}:{k}): node {node} is listed twice"));
            }
        }
        Ok(())
    }
}
