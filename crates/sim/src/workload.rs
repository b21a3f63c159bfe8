//! The leader's work, and the shared resource it goes to: what a failure *costs*.
//!
//! Election alone is not enough (see the leases-and-fencing part of the project's seeds): what
//! matters is whether a deposed leader's work is accepted. The workload makes that measurable,
//! the same way for every protocol, without the protocols knowing it exists beyond the epoch
//! they report in [`Status`](election_core::Status).
//!
//! # The model
//!
//! * **Who writes.** Every node that believes it is the leader (its status says so), and is
//!   neither crashed nor paused, sends a write every [`Workload::interval`], starting at the
//!   reference instant (`t0`) if it leads then, or at the instant it enters the leader role
//!   after `t0`. Writes before `t0` would change no metric and are not simulated. A write that
//!   falls due while the node is paused leaves first when it resumes, before the node handles
//!   its backlog of messages: the GC-pause story (a leader frozen past its lease wakes up and
//!   writes before it learns it was deposed) happens exactly.
//! * **A deposed leader that keeps writing** (`leader.stop_lag_ms`, [`Workload::stop_lag`]):
//!   when a node leaves the leader role after `t0` (its status stops saying leader), its
//!   workload goes on writing every interval for a lag drawn then, from the workload's own
//!   stream, and stops at the first write that falls due at or after the end of the lag: the
//!   application that has not yet noticed it lost leadership — the controllers that kept
//!   writing after their lease was gone. Those writes carry the token the node had as leader
//!   (the application keeps the token it was handed, not the node's current epoch) and its
//!   last entry into the leader role, so the observer classifies them as it does every
//!   other write: once someone was elected after the writer they are stale, or fenced under
//!   [`Fencing::Token`] once the resource has taken a higher token. Under majority commit
//!   they are not client entries (the node's log no longer takes them) and are acknowledged
//!   only by nodes whose status still names the writer as leader. The lag ends at once when
//!   the node enters the leader role again (it writes as the new leader from then on) or
//!   crashes (a crashed node writes nothing); a pause does not stretch it: a write that fell
//!   due within the lag while the node was paused leaves when it resumes, like a leader's,
//!   and none after. A trial does not end while a lag is under way (it still ends at the
//!   horizon), so it counts every write of the lag it drew. The default, `constant:0`, stops
//!   the writing the instant the role is left, and draws nothing.
//! * **The fencing token** a write carries is the writer's epoch (Raft's term, `bully+epoch`'s
//!   epoch) when the write leaves; a protocol without epochs sends none.
//! * **The shared resource** ([`Commit::Resource`], the default) is one endpoint of the
//!   simulated network outside the cluster, like a database or an object store: each node has a
//!   link to it, with the network's latency and loss, that the cluster's partitions do not cut
//!   (the classic split-brain: both sides still reach the database). Scenarios cut nodes off it
//!   with the `cut_resource` fault; `heal` restores those links too. With
//!   [`Fencing::Token`] the resource refuses a write whose token is lower than the highest it
//!   has accepted (a write without a token cannot be fenced); with [`Fencing::Off`] it takes
//!   every write that reaches it.
//! * **Majority commit** ([`Commit::Majority`]): instead, the writer sends the write to every
//!   other node; a node acknowledges it only while its own status names the writer as its
//!   leader (and it is neither crashed nor paused); the write takes effect (is *taken*) when the
//!   writer has received acknowledgements that make a majority with itself — Raft's commit rule
//!   without logs. Requests and acknowledgements travel over the cluster's links and are counted
//!   as workload messages, never as election traffic. Fencing does not apply. Each such write is
//!   also a client entry of the writer's replicated log
//!   ([`Protocol::on_client_entry`](election_core::Protocol::on_client_entry): Raft appends it in
//!   its term), so committed writes
//!   advance the logs and the election restriction reads them — here the workload is part of the
//!   election, as in a real replicated state machine.
//!
//! # What is measured (by the observer; definitions in [`crate::observer`])
//!
//! A write taken after `t0` is **ok** if its writer had not been deposed when it was taken, and
//! **stale** if it had: some node was elected after it — with a higher epoch than the write's
//! token, or, for protocols without epochs, by entering the leader role after the writer last
//! did. A write refused for its token is **fenced**.
//!
//! Because a node's writes never depend on the resource's answers, fencing changes no node's
//! behaviour: under [`Fencing::Token`], `writes_stale + writes_fenced` is exactly what the
//! resource would have taken from deposed leaders with fencing off. One trial measures both
//! sides, which is why `token` is the default.
//!
//! The workload's randomness (latency and loss of its messages) comes from a stream of its own,
//! so with the default resource commit switching it on or off changes none of the protocol's
//! draws: every election metric of a trial is the same with and without it.
//!
//! The live driver (`election-live`) applies the same rules with the same [`Resource`] and the
//! same observer; its hub plays the resource, without a network hop, and supports
//! [`Commit::Resource`] only.

use std::time::Duration;

use election_core::{NodeId, Time};

use crate::config::Latency;

/// Whether the resource checks fencing tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fencing {
    /// Every write that reaches the resource is taken.
    Off,
    /// A write whose token is lower than the highest accepted is refused.
    #[default]
    Token,
}

impl Fencing {
    /// The parameter value (`off`, `token`).
    pub fn name(self) -> &'static str {
        match self {
            Fencing::Off => "off",
            Fencing::Token => "token",
        }
    }
}

/// Where a write takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Commit {
    /// At the shared resource, when it arrives and is not fenced.
    #[default]
    Resource,
    /// When a majority of the cluster (the writer included) has acknowledged it.
    Majority,
}

impl Commit {
    /// The parameter value (`resource`, `majority`).
    pub fn name(self) -> &'static str {
        match self {
            Commit::Resource => "resource",
            Commit::Majority => "majority",
        }
    }
}

/// The workload of a trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// How often a leader writes; `None` turns the workload off (no write, no workload
    /// message, and every write metric empty).
    pub interval: Option<Duration>,
    /// Whether the resource checks tokens.
    pub fencing: Fencing,
    /// Where a write takes effect.
    pub commit: Commit,
    /// How long a node's writing goes on after it leaves the leader role (`leader.stop_lag_ms`),
    /// drawn at each departure; zero (the default) stops it at once.
    pub stop_lag: Latency,
}

impl Default for Workload {
    fn default() -> Workload {
        Workload::OFF
    }
}

impl Workload {
    /// No workload.
    pub const OFF: Workload = Workload {
        interval: None,
        fencing: Fencing::Token,
        commit: Commit::Resource,
        stop_lag: Latency::Constant { ms: 0.0 },
    };

    /// Is there a workload?
    pub fn on(&self) -> bool {
        self.interval.is_some_and(|d| !d.is_zero())
    }
}

/// What a write carries and what the observer needs to classify it when it is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteTag {
    /// Who sent it.
    pub writer: NodeId,
    /// Its fencing token: the writer's epoch when it left.
    pub token: Option<u64>,
    /// The number of the writer's latest entry into the leader role when it left (entries are
    /// numbered across the cluster, in order).
    pub entry: u64,
}

/// The shared resource's fencing state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resource {
    highest: Option<u64>,
}

impl Resource {
    /// A write with `token` arrives: `true` if it is taken. With [`Fencing::Token`] a write
    /// whose token is lower than the highest taken so far is refused; a write without a token
    /// is always taken.
    pub fn offer(&mut self, fencing: Fencing, token: Option<u64>) -> bool {
        match (fencing, token) {
            (Fencing::Token, Some(t)) => {
                if self.highest.is_some_and(|h| t < h) {
                    return false;
                }
                self.highest = Some(self.highest.map_or(t, |h| h.max(t)));
                true
            }
            _ => true,
        }
    }
}

/// The measure of a union of half-open intervals `[start, start + len)` added in
/// non-decreasing order of `start`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Coverage {
    total_ns: u64,
    until: u64,
}

impl Coverage {
    /// Add `[start, start + len)`.
    pub(crate) fn add(&mut self, start: Time, len: Duration) {
        let end = start
            .0
            .saturating_add(len.as_nanos().min(u64::MAX as u128) as u64);
        let from = start.0.max(self.until);
        if end > from {
            self.total_ns += end - from;
        }
        self.until = self.until.max(end);
    }

    /// The covered time up to `end`, in ns.
    pub(crate) fn up_to(&self, end: Time) -> u64 {
        self.total_ns
            .saturating_sub(self.until.saturating_sub(end.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_fence_lower_writes_and_none_is_never_fenced() {
        let mut r = Resource::default();
        assert!(r.offer(Fencing::Token, Some(3)));
        assert!(r.offer(Fencing::Token, Some(3)), "an equal token is taken");
        assert!(r.offer(Fencing::Token, Some(5)));
        assert!(!r.offer(Fencing::Token, Some(4)), "lower than 5: fenced");
        assert!(r.offer(Fencing::Token, None), "no token: cannot be fenced");
        assert!(
            r.offer(Fencing::Off, Some(1)),
            "fencing off takes everything"
        );
        assert!(!r.offer(Fencing::Token, Some(4)), "still 5");
    }

    #[test]
    fn coverage_is_the_measure_of_the_union() {
        let ms = Duration::from_millis;
        let t = |ms: u64| Time::from_millis(ms);
        let mut c = Coverage::default();
        c.add(t(0), ms(10)); // [0, 10)
        c.add(t(5), ms(10)); // [5, 15): +5
        c.add(t(30), ms(10)); // [30, 40): +10
        assert_eq!(c.up_to(t(100)), 25_000_000);
        assert_eq!(c.up_to(t(35)), 20_000_000, "clipped at the end");
    }
}
