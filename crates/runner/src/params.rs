//! Parameters: every timing, protocol, network and scenario knob, each under one name used
//! alike in TOML configs, `--set key=value`, protocol specs (`bully+rejoin=defer`), the
//! varied-parameter columns of the CSVs and the manifest.
//!
//! Values are kept as canonical strings (numbers in Rust's shortest round-trip form, so
//! `150.0` and `150` are both `150`), which is what the CSVs print; [`Resolved`] turns a set of
//! them, over a network profile, into typed values for one grid cell.
//!
//! # Fair timing
//!
//! Every protocol gets the same heartbeat interval and the same failure-detection window
//! `W = [detect_timeout_ms, detect_timeout_ms + detect_jitter_ms]`:
//!
//! | | heartbeat | suspects the leader after | protocol-specific timeouts |
//! |---|---|---|---|
//! | bully | `heartbeat_ms` (50) | `detect_timeout_ms` + U[0, `detect_jitter_ms`] (150–300 ms) | `bully.t_elec_ms` 20, `bully.t_coord_ms` 2 × t_elec |
//! | ring | `heartbeat_ms` (50) | `detect_timeout_ms` + U[0, `detect_jitter_ms`] (150–300 ms) | `ring.t_hop_ms` 20 |
//! | raft | `heartbeat_ms` (50) | election timeout drawn from `raft.timeout_ms` = W by default (150–300 ms) | — |
//! | raftrs | every `heartbeat_ms / raftrs.tick_ms` ticks (1 tick of 50 ms) | W in whole ticks: 3–5 ticks of 50 ms (raft-rs's default `[election_tick, 2 × election_tick)`), counted from the last reset on each node's own ticker, started in its own phase | `raftrs.tick_ms` = `heartbeat_ms` |
//! | omnipaxos | a BLE heartbeat round every `round(detect_timeout_ms / omnipaxos.tick_ms)` ticks of `omnipaxos.tick_ms` (= `heartbeat_ms`): 3 × 50 = 150 ms | 1-2 rounds after the leader's last reply (150–300 ms), no jitter of its own; it takes over one round later | — |
//! | lease | the holder renews every `lease.retry_ms` (20) | a member's detector fires `lease.duration_ms` (150 = `detect_timeout_ms`) after it last saw the record change, and it takes the lease at its next read (every 20–44 ms): about 150–240 ms after the last renewal | `lease.renew_deadline_ms` 100 |
//!
//! Lease has no heartbeat of its own: its timing is client-go's three periods, and the
//! default `lease.profile = scaled` is Kubernetes' defaults (15 s / 10 s / 2 s) divided by 100,
//! which puts the lease duration at `detect_timeout_ms` and keeps production's ratios
//! (`duration : renew_deadline : retry = 15 : 10 : 2`); `lease.profile = k8s` is the real
//! thing, with every scenario time at its scale ([`K8S_TIME_SCALE`]). Explicit `lease.*_ms` values win over either profile. Its failover after a crash is
//! the duration plus up to two jittered reads (the one that first sees the record unchanged
//! for the duration, and the lag before the member first saw the last renewal), which lands
//! in the same window as the others' detection.

use std::collections::BTreeMap;
use std::time::Duration;

use election_bully::Rejoin;
use election_core::Timing;
use election_lease::{Expiry, OnLoss};
use election_raft::{
    AppendRule, CheckQuorumEvery, Clock, FollowerRule, LeaderSend, Redraw, RepliesRule,
};
use election_sim::workload::{Commit, Fencing, Workload};
use election_sim::{Bursts, Latency, NetConfig, NodeTime, Noise, Spikes};

use crate::error::{usage, Result};
use crate::net::{format_latency, parse_latency, NetProfile};

/// The largest millisecond value a parameter accepts: 1e12 ms, about 31.7 years. Every
/// millisecond parameter becomes a nanosecond count in a `u64` (at most about 1.8e13 ms), and
/// the derived defaults add and double them, so anything larger is refused by name instead of
/// silently saturating.
pub const MAX_MS: f64 = 1e12;

/// What kind of value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Milliseconds, a finite number `>= 0`.
    Ms,
    /// Milliseconds, a finite number `> 0`.
    PositiveMs,
    /// A probability in `[0, 1]`.
    Probability,
    /// Parts per million, `0..=100000` (a clock rate error up to 10 %).
    Ppm,
    /// Events per node per hour, `0..=3600000`.
    Rate,
    /// `true` or `false`.
    Bool,
    /// A whole number `>= 1`.
    Count,
    /// A whole number `>= 1`, up to `2^64 - 1`.
    BigCount,
    /// One of a fixed list of names.
    Choice(&'static [&'static str]),
    /// A latency distribution (`lognormal:0.25:0.3`, see [`crate::net`]).
    Latency,
    /// A millisecond range `LO-HI` (or one number, `LO` = `HI`).
    MsRange,
    /// Nodes and how many log entries each lags: `none`, or `NODE:K` items joined by `/`
    /// (`1:3/2:1`; `/`, not a comma, so that a value fits in comma-separated lists).
    NodeLags,
    /// Nodes and a timing multiplier each: `none`, or `NODE:K` items joined by `/` (`3:5`:
    /// node 3's timing ×5; `K` a number in `(0, 1000]`).
    NodeMultipliers,
}

impl Kind {
    /// What a valid value looks like, for error messages and `election-bench params`.
    pub fn describe(self) -> String {
        match self {
            Kind::Ms => "milliseconds >= 0 (at most 1e12)".into(),
            Kind::PositiveMs => "milliseconds > 0 (at most 1e12)".into(),
            Kind::Probability => "a probability in [0, 1]".into(),
            Kind::Ppm => "parts per million in [0, 100000]".into(),
            Kind::Rate => "events per node per hour in [0, 3600000]".into(),
            Kind::Bool => "true | false".into(),
            Kind::Count => "a whole number >= 1".into(),
            Kind::BigCount => "a whole number >= 1 (up to 2^64-1)".into(),
            Kind::Choice(c) => c.join(" | "),
            Kind::Latency => crate::net::LATENCY_SYNTAX.into(),
            Kind::MsRange => "LO-HI milliseconds (or one number), at most 1e12".into(),
            Kind::NodeLags => "none | NODE:K[/NODE:K...] (node id >= 1, K >= 1 entries)".into(),
            Kind::NodeMultipliers => {
                format!(
                    "none | NODE:K[/NODE:K...] (node id >= 1, 0 < K <= {MAX_TIMING_MULTIPLIER})"
                )
            }
        }
    }
}

/// The values parameter `def` takes, as `params` lists them: its kind's, narrowed where the
/// parameter has bounds of its own (checked by [`canonical`]).
pub fn values(def: &ParamDef) -> String {
    match def.key {
        "workload.interval_ms" => {
            format!("0 (no workload) or milliseconds >= {MIN_WORKLOAD_INTERVAL_MS} (at most 1e12)")
        }
        "slow_factor" => format!("a whole number from 1 to {MAX_SLOW_FACTOR}"),
        _ => def.kind.describe(),
    }
}

/// One parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    /// Its one name.
    pub key: &'static str,
    /// Its kind of value.
    pub kind: Kind,
    /// Its default, or the rule that derives it.
    pub default: &'static str,
    /// One line on what it does.
    pub about: &'static str,
}

const fn p(key: &'static str, kind: Kind, default: &'static str, about: &'static str) -> ParamDef {
    ParamDef {
        key,
        kind,
        default,
        about,
    }
}

/// Every parameter, in documentation order.
pub const PARAMS: &[ParamDef] = &[
    p("heartbeat_ms", Kind::PositiveMs, "50; k8s: 5000", "the leader's heartbeat period (every protocol)"),
    p("detect_timeout_ms", Kind::PositiveMs, "150; k8s: 15000", "base failure-detection timeout (every protocol)"),
    p("detect_jitter_ms", Kind::Ms, "150; k8s: 15000", "upper bound of the random addition to the detection timeout, redrawn at every re-arm"),
    p("bully.t_elec_ms", Kind::PositiveMs, "20", "bully: wait for OK after ELECTION before declaring"),
    p("bully.t_coord_ms", Kind::PositiveMs, "2 x bully.t_elec_ms", "bully: wait for COORDINATOR after yielding"),
    p("bully.rejoin", Kind::Choice(&["eager", "defer"]), "eager", "bully: a booting node elects at once (eager) or first listens for a leader (defer)"),
    p("bully.quorum", Kind::Bool, "false", "bully: declare only with a majority, leader steps down without one (check-quorum lease)"),
    p("bully.epoch", Kind::Bool, "false", "bully: epochs on every message, stale COORDINATOR/HEARTBEAT ignored"),
    p("ring.t_hop_ms", Kind::PositiveMs, "20", "ring: wait for a hop acknowledgement before skipping the successor"),
    p("ring.arrangement", Kind::Choice(&["ascending", "descending", "random"]), "ascending", "ring: id layout along the direction of travel (random: a permutation drawn from the trial seed)"),
    p("ring.hop_acks", Kind::Bool, "true", "ring: acknowledge hops, skip dead successors, restart lost elections (false: the 1979 algorithm)"),
    p("raft.timeout_ms", Kind::MsRange, "detect_timeout_ms-(detect_timeout_ms+detect_jitter_ms)", "raft: election timeout range, drawn uniformly at every re-arm"),
    p("raft.pre_vote", Kind::Bool, "false", "raft: PreVote (thesis 9.6)"),
    p("raft.check_quorum", Kind::Bool, "false", "raft: CheckQuorum (thesis 6.2) and, with it as in etcd, leader stickiness (thesis 4.2.3): a node that heard its leader within the minimum election timeout ignores RequestVote"),
    p("raft.redraw", Kind::Choice(Redraw::NAMES), "every_rearm", "raft: when the election timeout is drawn: at every arming (every_rearm), or once per term and role as etcd-io/raft and raft-rs do (per_term: reset(term))"),
    p("raft.check_quorum_every", Kind::Choice(CheckQuorumEvery::NAMES), "rearm", "raft: with check_quorum, the leader steps down the instant it lacks a majority (rearm), or checks once per minimum election timeout as etcd-io/raft and raft-rs do (timeout: MsgCheckQuorum)"),
    p("raft.follower", Kind::Choice(FollowerRule::NAMES), "reset", "raft: a follower's timer restarts on every heartbeat (reset), or, as hashicorp/raft's runFollower, wakes every timeout, campaigns only without contact for the minimum timeout, and a node rejects votes while it knows a leader (hashicorp)"),
    p("raft.append", Kind::Choice(AppendRule::NAMES), "heartbeat", "raft: a leader ships a client entry with its next heartbeat (heartbeat), or sends an AppendEntries to every follower at once, as etcd-io/raft and raft-rs do (immediate: stepLeader on MsgProp → bcastAppend)"),
    p("raft.replies", Kind::Choice(RepliesRule::NAMES), "paper", "raft: every request is answered, a stale one with the receiver's term (paper), or etcd-io/raft's and raft-rs's silences (etcd: a stale message is ignored, a stale append answered only with pre_vote or check_quorum; with check_quorum a vote or pre-vote within the leader lease is ignored)"),
    p("raft.leader_send", Kind::Choice(LeaderSend::NAMES), "persisted", "raft: a leader's messages leave once its own write is durable, like everyone's (persisted), or before it, as raft-rs and etcd's server send a leader's messages (parallel: the thesis, section 10.2.1; RawNode::ready, raftNode.start)"),
    p("raft.clock", Kind::Choice(Clock::NAMES), "time", "raft: the election timeout, the leader lease and the CheckQuorum period are durations on the node's clock (time), or whole ticks of each node's own heartbeat_ms ticker, started in its own phase, as etcd counts them (ticks: etcd-io/raft tickElection, tickHeartbeat, Step's inLease; a timeout of k ticks drawn in [timeout_min / heartbeat_ms, timeout_max / heartbeat_ms); with check_quorum it needs check_quorum_every = timeout, and refuses follower = hashicorp)"),
    p("raft.system", Kind::Choice(crate::systems::SYSTEM_NAMES), "none", "raft: a real system's election rules and default timings as the defaults of the raft.* options and of heartbeat_ms, detect_timeout_ms and detect_jitter_ms (explicit values win); the spec etcd@3.4 is raft+system=etcd@3.4; `election-bench params` lists each system's rules with their sources"),
    p("raft.lagging", Kind::NodeLags, "none", "raft: NODE:K/... keeps each NODE's log K entries behind the leader's (at most back to the start of the leader's term); bully and ring ignore it"),
    p("raft.voters", Kind::Count, "every node", "raft: the K lowest ids (1..=K) vote; the others are learners (etcd-io/raft learners, hashicorp/raft non-voters) that follow the leader and take its entries but never campaign or vote; votes, pre-votes, CheckQuorum and the quorum leader count a majority of the K voters; K >= nodes: every node votes"),
    p("raftrs.tick_ms", Kind::PositiveMs, "heartbeat_ms", "raftrs: raft-rs's tick period on each node's clock; heartbeat_tick = heartbeat_ms / tick, election_tick = detect_timeout_ms / tick, randomized timeout in [election_tick, election_tick + detect_jitter_ms / tick) ticks (each rounded; raft-rs's default [election_tick, 2 x election_tick) at the default jitter); each node's ticker starts in its own drawn phase; from heartbeat_ms / 50 up to heartbeat_ms and detect_timeout_ms (a finer tick spends the work budget on ticks, a longer one rounds the timeouts to one tick): refused otherwise"),
    p("raftrs.pre_vote", Kind::Bool, "false", "raftrs: raft-rs's Config::pre_vote"),
    p("raftrs.check_quorum", Kind::Bool, "false", "raftrs: raft-rs's Config::check_quorum (the leader checks every election_tick ticks; followers in its lease ignore RequestVote)"),
    p("lease.profile", Kind::Choice(&["scaled", "k8s"]), "scaled", "lease: timing defaults, scaled (Kubernetes' divided by 100: 150/100/20 ms, the lease duration = detect_timeout_ms) or k8s (kube-scheduler's 15 s/10 s/2 s), which also runs the trial at Kubernetes' time scale: the defaults marked k8s of heartbeat_ms, detect_timeout_ms, detect_jitter_ms, fault_at_ms, fault_wait_ms, horizon_ms and workload.interval_ms, and so every scenario time derived from them, are 100 times the scaled ones"),
    p("lease.duration_ms", Kind::PositiveMs, "scaled: detect_timeout_ms; k8s: 15000", "lease: LeaseDuration, how long a member waits, on its own clock, after it last saw the record change before it may take the lease"),
    p("lease.renew_deadline_ms", Kind::PositiveMs, "2/3 x lease.duration_ms", "lease: RenewDeadline, how long a renewal round may take before the holder stops leading"),
    p("lease.retry_ms", Kind::PositiveMs, "2/15 x lease.duration_ms", "lease: RetryPeriod, the holder's renewal period; members read the record every retry x U[1, 2.2]"),
    p("lease.release_on_cancel", Kind::Bool, "false", "lease: ReleaseOnCancel, a holder that stops leading hands the lease back at once"),
    p("lease.store_nodes", Kind::Count, "1", "lease: the store's endpoints; 1: one endpoint that never fails unless a scenario makes it; 2 or more: a replicated store, a Raft group with PreVote and CheckQuorum that commits every compare-and-swap at a majority and serves reads by ReadIndex (etcd behind the API server; crates/store)"),
    p("lease.store_heartbeat_ms", Kind::PositiveMs, "scaled: 1; k8s: 100", "lease: a replicated store's Raft heartbeat interval (etcd's --heartbeat-interval 100 ms, divided by 100 like the lease's timings)"),
    p("lease.store_election_ms", Kind::PositiveMs, "scaled: 10; k8s: 1000", "lease: a replicated store's Raft election timeout, drawn in [t, 2t] (etcd's --election-timeout 1000 ms and its randomization, divided by 100 like the lease's timings)"),
    p("lease.expiry", Kind::Choice(Expiry::NAMES), "observed", "lease: when a member may take a held lease: a duration after it saw the record change, on its own clock (observed: client-go's observedTime, sensitive to clock rate only), or once the holder's renew time plus the duration has passed on its own clock (renew_time: hendrikmaus/kube-leader-election's has_lease_expired, sensitive to clock offset)"),
    p("lease.cas", Kind::Bool, "true", "lease: acquisitions are compare-and-swap on the version (client-go's Update with resourceVersion); false: blind writes, last writer wins, renewals and releases applied while the record names the writer (hendrikmaus/kube-leader-election's merge patches)"),
    p("lease.on_loss", Kind::Choice(OnLoss::NAMES), "continue", "lease: a holder that stops leading goes back to reading the record (continue: client-go's OnStoppedLeading returns) or its process exits and restarts after lease.restart_ms, its state gone (exit: kube-controller-manager's and kube-scheduler's klog.FlushAndExit)"),
    p("lease.restart_ms", Kind::MsRange, "scaled: 100; k8s: 10000", "lease: with on_loss = exit, how long the exited process is down, drawn uniformly from LO-HI at each exit: the kubelet's first restart back-off, 10 s (pkg/kubelet backOffPeriod), divided by 100 with the scaled timings"),
    p("lease.reconnect_ms", Kind::Ms, "scaled: 0; k8s: 45000", "lease: with a replicated store (lease.store_nodes >= 2), how long a member keeps its connection to one store endpoint while a request there stays unanswered before it moves to the next endpoint; 0: at the next request (etcd's client balancer); k8s: client-go's HTTP/2 health check, ReadIdleTimeout 30 s + PingTimeout 15 s (k8s.io/apimachinery/pkg/util/net/http.go), during which a vanished API server's clients lose every request"),
    p("omnipaxos.tick_ms", Kind::PositiveMs, "heartbeat_ms", "omnipaxos: the tick period; a BLE heartbeat round is detect_timeout_ms rounded to whole ticks; from heartbeat_ms / 50 up to heartbeat_ms and detect_timeout_ms, as raftrs.tick_ms"),
    p("net.latency", Kind::Latency, "the profile's", "one-way latency distribution of every link"),
    p("net.loss", Kind::Probability, "the profile's", "probability that a message is lost"),
    p("net.duplicate", Kind::Probability, "the profile's", "probability that a message is delivered twice"),
    p("net.fifo", Kind::Bool, "the profile's", "links never reorder"),
    p("node.profile", Kind::Choice(&["server", "ideal"]), "server", "node time defaults: server (below: a datacenter SSD, a few µs per message, quartz clocks, a runtime's 1 ms timers) or ideal (nothing takes time, perfect clocks: the model before node time)"),
    p("node.disk", Kind::Choice(crate::disk::DISK_NAMES), "the node.profile's node.fsync_ms", "a disk preset for node.fsync_ms from a published figure (etcd's hardware guide, OpenShift's fio check, AWS EBS volume types; each source and how its log-normal follows from it: `crates/runner/src/disk.rs`); an explicit node.fsync_ms wins"),
    p("node.fsync_ms", Kind::Latency, "node.disk's, else server: lognormal:2:0.5; ideal: constant:0", "stable-storage write latency: a message behind a persist leaves when the write is durable, and the node handles nothing meanwhile"),
    p("node.cpu_us", Kind::Latency, "server: lognormal:20:0.5; ideal: constant:0", "processing time per handled input, in MICROseconds (same syntax as net.latency); inputs arriving meanwhile queue; a timer that only re-arms timers costs none"),
    p("node.timer_jitter_ms", Kind::Ms, "server: 1; ideal: 0", "each timer fires up to this much late (U[0, jitter]), like a runtime's timer granularity"),
    p("node.timing_multiplier", Kind::NodeMultipliers, "none", "per-node timing: NODE:K/... runs NODE with its heartbeat period and failure-detection window (Raft's election timeout range, the lease's three periods, raft-rs's and Omni-Paxos' tick) multiplied by K, like a Consul server with its own performance.raft_multiplier; node ids must be in 1..=nodes; none: every node runs the shared timing"),
    p("clock.drift_ppm", Kind::Ppm, "server: 50; ideal: 0", "each node's clock runs at 1 + U[-drift, +drift]·1e-6 of real time (drawn per trial and node)"),
    p("clock.offset_ms", Kind::Ms, "0", "each node's clock starts at U[0, offset] ms (protocols see only their own clock)"),
    p("noise.profile", Kind::Choice(&["none", "busy"]), "none", "background noise defaults for the seven noise.* parameters below: none, or busy (an illustrative busy production node: GC pauses, disk stalls and latency spikes; replace with your own measurements)"),
    p("noise.pause_per_hour", Kind::Rate, "none: 0; busy: 180", "stop-the-world pauses (a garbage collector) per node per hour, from time zero to the end of the trial; noise, not a fault"),
    p("noise.pause_ms", Kind::Latency, "lognormal:5:1", "length of each noise pause (latency syntax)"),
    p("noise.stall_per_hour", Kind::Rate, "none: 0; busy: 12", "disk stalls per node per hour: the node handles nothing until the stuck write completes"),
    p("noise.stall_ms", Kind::Latency, "lognormal:20:1", "length of each disk stall (latency syntax)"),
    p("noise.spike_per_hour", Kind::Rate, "none: 0; busy: 6", "latency spikes per node per hour: every message to or from the node takes noise.spike_ms longer while it lasts"),
    p("noise.spike_ms", Kind::Latency, "lognormal:20:1", "extra one-way latency of a spike, drawn per spike (latency syntax)"),
    p("noise.spike_len_ms", Kind::Latency, "lognormal:500:0.5", "how long each spike lasts (latency syntax)"),
    p("workload.interval_ms", Kind::Ms, "10; k8s: 1000", "every node that believes it leads (and is not paused) writes to the shared resource this often, carrying its epoch as fencing token; 0 turns the workload off (write columns empty)"),
    p("workload.fencing", Kind::Choice(&["token", "off"]), "token", "token: the resource refuses a write whose token is below the highest it took (writes_fenced); off: it takes every write. Fencing changes no node's behaviour, so under token writes_stale + writes_fenced is what an unfenced resource would take"),
    p("workload.commit", Kind::Choice(&["resource", "majority"]), "resource", "resource: a write takes effect at the shared resource outside the cluster; majority: when a majority of the cluster (writer included) acknowledges it, each node acknowledging only writes of the leader it follows"),
    p("leader.stop_lag_ms", Kind::Latency, "constant:0", "how long a node's workload goes on writing after it leaves the leader role, drawn at each departure (latency syntax): its writes keep the token it had as leader, so they are fenced (workload.fencing = token) or stale (off) once someone else was elected; a deposed controller that has not yet noticed. constant:0: it stops at once"),
    p("fault_at_ms", Kind::Ms, "4 x (detect_timeout_ms + detect_jitter_ms)", "the scenario's first fault fires at fault_at_ms + U[0, fault_jitter_ms] (same draw for every protocol); the default lets the cold start elect a leader (within one longest election timeout) that then holds for about three more, so the fault hits a settled cluster"),
    p("fault_jitter_ms", Kind::Ms, "detect_timeout_ms + detect_jitter_ms", "random offset added to fault_at_ms per trial: one longest election timeout by default, so the fault falls anywhere in the leader's heartbeat and CheckQuorum cycles"),
    p("fault_wait_ms", Kind::Ms, "10000; k8s: 1000000", "if there is no quorum leader at the drawn fault instant, the scenario's faults wait for one at most this long (0: fire anyway); a trial that waits in vain undergoes no fault and is marked (faults_skipped)"),
    p("settle_ms", Kind::PositiveMs, "2 x (detect_timeout_ms + detect_jitter_ms)", "a trial ends once the last fault fired and the same quorum leader has led this long and for the verdict's hold span (10 x (detect_timeout_ms + detect_jitter_ms), derived, not a parameter); settle_ms lengthens the observation, never the verdict"),
    p("horizon_ms", Kind::PositiveMs, "fault_at_ms + fault_jitter_ms + 60 x (detect_timeout_ms + detect_jitter_ms)", "a trial never runs past this instant; one that has not settled by then (no quorum leadership held the verdict's hold span) is a liveness failure, so the default leaves 60 of the longest election timeouts after the latest fault instant"),
    p("outage_ms", Kind::Ms, "5 x (detect_timeout_ms + detect_jitter_ms)", "how long a partition or isolation lasts before it heals, and how long leader-recovers keeps the leader down"),
    p("pause_ms", Kind::Ms, "2 x (detect_timeout_ms + detect_jitter_ms)", "leader-pause: length of the stop-the-world pause"),
    p("flaps", Kind::Count, "3", "flapping-leader: how many crash/recover cycles"),
    p("flap_down_ms", Kind::Ms, "2 x (detect_timeout_ms + detect_jitter_ms)", "flapping-leader: time down per cycle"),
    p("flap_up_ms", Kind::Ms, "2 x (detect_timeout_ms + detect_jitter_ms)", "flapping-leader: time up between cycles"),
    p("slow_factor", Kind::Count, "1000", "slow-leader: the leader's processing and message latencies are multiplied by this (a 0.25 ms LAN hop becomes 250 ms, beyond the detection window)"),
    p("cascade_delay_ms", Kind::Ms, "5", "cascade-crash: the would-be successor crashes this long after the election starts"),
    p("fault_loss", Kind::Probability, "0.1", "lossy-leader-crash: message loss from the fault to the end of the trial"),
    p("steady_ms", Kind::PositiveMs, "3600000", "steady-noise: how long the healthy cluster runs under noise after the fault instant (an hour); horizon_ms and settle_ms do not apply to it"),
    p("stale_keepalive_ms", Kind::Ms, "5 x detect_timeout_ms", "stale-connection: how long the leader's connections to its followers black-hole before they are re-established; etcd's peer connections time out after 5 s (rafthttp ConnReadTimeout) against a 1 s election timeout, so 5 election timeouts (750 ms)"),
    p("clock_jump_ms", Kind::Ms, "2 x detect_timeout_ms", "clock-jump-follower: how far the lowest follower's clock steps ahead (an NTP step); the default is twice the scaled lease duration (lease.duration_ms = detect_timeout_ms)"),
    p("handover_grace_ms", Kind::Ms, "detect_timeout_ms + detect_jitter_ms", "planned-handover: how long after the leader is told it will be stopped (and hands over) its process is stopped; an election timeout, as etcd bounds its shutdown's leadership transfer (etcd-io/raft aborts a transfer after an election timeout; etcdserver TryTransferLeadershipOnShutdown)"),
    p("mixed_multiplier", Kind::Count, "5", "mixed-multiplier: the timing multiplier of the floor(n/2) highest ids (Consul's default raft_multiplier, 5, against the 1 its docs recommend for production: a cluster half-way through changing it)"),
    p("store_slow_ms", Kind::Ms, "5", "store-slow: the extra time the lease store takes per request during the outage"),
    p("work_budget", Kind::BigCount, "100000 x nodes, at most 20000000, per 20 s of simulated time (k8s: per 2000 s)", "events processed plus messages sent after which a trial is stopped and reported as budget_exceeded (no wall clock, so deterministic)"),
];

/// `lease.profile = k8s` runs client-go's real timings (15 s / 10 s / 2 s), 100 times the
/// scaled profile's, and with them the whole trial at that time scale: the defaults of
/// `heartbeat_ms`, `detect_timeout_ms`, `detect_jitter_ms`, `fault_at_ms`, `fault_wait_ms`,
/// `horizon_ms` and `workload.interval_ms` are multiplied by this, and so every scenario time
/// derived from them (an outage is 5 detection windows, a pause 2, ...). Without it a 1.3 s
/// partition never outlasts a 15 s lease and a 20 s horizon cuts a 15 s failover short, so the
/// row's "no split brain" and "no liveness failure" would hold by construction. The workload
/// writes once a second (as many writes per lease as the scaled row's every 10 ms), so the
/// damage columns count the same writes per unit of overlap. Network latency, node time and
/// the store's own Raft timings are not scaled: they are what they are in production.
pub const K8S_TIME_SCALE: f64 = 100.0;

/// Every parameter key, in documentation order.
pub fn keys() -> impl Iterator<Item = &'static str> {
    PARAMS.iter().map(|d| d.key)
}

/// The parameter named `key`, or an error listing every valid key.
pub fn lookup(key: &str) -> Result<&'static ParamDef> {
    match PARAMS.iter().find(|d| d.key == key) {
        Some(d) => Ok(d),
        None => Err(crate::Error::Usage(crate::error::unknown_name(
            &format!("unknown parameter {key:?}"),
            key,
            keys(),
            &format!(
                "valid parameters (`election-bench params` explains each): {}",
                keys().collect::<Vec<_>>().join(", ")
            ),
        ))),
    }
}

/// Explicitly set parameters: key to canonical value.
pub type ParamMap = BTreeMap<&'static str, String>;

fn number(key: &str, raw: &str) -> Result<f64> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => usage!("{key} = {raw:?}: not a number"),
    }
}

/// The shortest write interval of the workload, 0.1 ms: finer than a LAN hop (0.25 ms), so a
/// stale window is resolved below the network's own granularity, while a trial's writes stay
/// bounded (200,000 a leader in the default 20 s horizon). Below it the workload's events
/// would outgrow the work budget, which does not count them.
pub const MIN_WORKLOAD_INTERVAL_MS: f64 = 0.1;

/// The largest multiplier of `node.timing_multiplier` (Consul's own cap is 10,
/// `MaxRaftMultiplier`); a multiplied millisecond value must still be at most [`MAX_MS`].
pub const MAX_TIMING_MULTIPLIER: f64 = 1000.0;

/// The largest `slow_factor` (the simulator's bound: a 0.25 ms hop becomes 250 s).
pub const MAX_SLOW_FACTOR: u32 = 1_000_000;

/// Check `raw` against the parameter's kind and return its canonical form.
pub fn canonical(def: &ParamDef, raw: &str) -> Result<String> {
    let key = def.key;
    let raw_t = raw.trim();
    let v = canonical_kind(def, raw_t)?;
    match key {
        "workload.interval_ms" => {
            let ms: f64 = v.parse().expect("canonical milliseconds");
            if ms != 0.0 && ms < MIN_WORKLOAD_INTERVAL_MS {
                return usage!(
                    "{key} = {raw_t}: 0 (no workload) or at least {MIN_WORKLOAD_INTERVAL_MS} ms \
                     (a write every 0.1 ms already resolves stale windows below a LAN hop; \
                     more often, the writes alone outgrow any trial's work)"
                );
            }
        }
        "slow_factor" => {
            let f: u32 = v.parse().expect("canonical count");
            if f > MAX_SLOW_FACTOR {
                return usage!(
                    "{key} = {raw_t}: at most {MAX_SLOW_FACTOR} (a 0.25 ms hop becomes 250 s)"
                );
            }
        }
        _ => {}
    }
    Ok(v)
}

/// A number of milliseconds below the simulator's resolution (1 ns) that is not 0 would
/// silently become 0: refused, naming the parameter.
fn below_resolution(key: &str, raw: &str, v: f64) -> Result<()> {
    if v > 0.0 && v < 1e-6 {
        return usage!(
            "{key} = {raw}: below the simulator's resolution of 1 ns (0.000001 ms), it would be 0"
        );
    }
    Ok(())
}

fn canonical_kind(def: &ParamDef, raw_t: &str) -> Result<String> {
    let key = def.key;
    Ok(match def.kind {
        Kind::Ms | Kind::PositiveMs => {
            let v = number(key, raw_t)?;
            if v < 0.0 || (def.kind == Kind::PositiveMs && v == 0.0) || v > MAX_MS {
                return usage!("{key} = {raw_t}: expected {}", def.kind.describe());
            }
            below_resolution(key, raw_t, v)?;
            format!("{v}")
        }
        Kind::Rate => {
            let v = number(key, raw_t)?;
            if !(0.0..=3_600_000.0).contains(&v) {
                return usage!("{key} = {raw_t}: expected {}", def.kind.describe());
            }
            format!("{}", v + 0.0)
        }
        Kind::Ppm => {
            let v = number(key, raw_t)?;
            if !(0.0..=100_000.0).contains(&v) {
                return usage!("{key} = {raw_t}: expected {}", def.kind.describe());
            }
            format!("{v}")
        }
        Kind::Probability => {
            let v = number(key, raw_t)?;
            if !(0.0..=1.0).contains(&v) {
                return usage!("{key} = {raw_t}: expected a probability in [0, 1]");
            }
            // `+ 0.0` turns -0 into 0.
            format!("{}", v + 0.0)
        }
        Kind::Bool => match raw_t {
            "true" => "true".into(),
            "false" => "false".into(),
            _ => return usage!("{key} = {raw_t:?}: expected true or false"),
        },
        Kind::Count => match raw_t.parse::<u32>() {
            Ok(v) if v >= 1 => v.to_string(),
            _ => return usage!("{key} = {raw_t:?}: expected a whole number >= 1"),
        },
        Kind::BigCount => match raw_t.parse::<u64>() {
            Ok(v) if v >= 1 => v.to_string(),
            _ => return usage!("{key} = {raw_t:?}: expected a whole number >= 1 (up to 2^64-1)"),
        },
        Kind::Choice(choices) => match choices.iter().find(|c| **c == raw_t) {
            Some(c) => c.to_string(),
            None => return usage!("{key} = {raw_t:?}: valid values: {}", choices.join(", ")),
        },
        Kind::Latency => match parse_latency(raw_t) {
            Ok(l) => format_latency(&l),
            Err(e) => return usage!("{key}: {e}"),
        },
        Kind::MsRange => {
            let expected = "expected LO-HI with 0 < LO <= HI <= 1e12";
            let num = |part: &str| -> Result<f64> {
                match part.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => usage!(
                        "{key} = {raw_t:?}: {:?} is not a number; {expected}",
                        part.trim()
                    ),
                }
            };
            // The separator is a '-' after the first character, so that a negative bound
            // (`-5-10`) is read as one and refused as such.
            let (lo, hi) = match raw_t.get(1..).and_then(|r| r.find('-')) {
                Some(i) => (num(&raw_t[..=i])?, num(&raw_t[i + 2..])?),
                None => {
                    let v = num(raw_t)?;
                    (v, v)
                }
            };
            if lo <= 0.0 || hi < lo || hi > MAX_MS {
                return usage!("{key} = {raw_t:?}: {expected}");
            }
            below_resolution(key, raw_t, lo)?;
            format!("{lo}-{hi}")
        }
        Kind::NodeMultipliers => {
            let ms = parse_node_multipliers(key, raw_t)?;
            if ms.is_empty() {
                "none".into()
            } else {
                ms.iter()
                    .map(|(node, k)| format!("{node}:{k}"))
                    .collect::<Vec<_>>()
                    .join("/")
            }
        }
        Kind::NodeLags => {
            let lags = parse_node_lags(key, raw_t)?;
            if lags.is_empty() {
                "none".into()
            } else {
                lags.iter()
                    .map(|(node, k)| format!("{node}:{k}"))
                    .collect::<Vec<_>>()
                    .join("/")
            }
        }
    })
}

/// Parses a [`Kind::NodeLags`] value into (node, k) pairs sorted by node; `none` is empty.
pub fn parse_node_lags(key: &str, raw: &str) -> Result<Vec<(u32, u64)>> {
    let raw = raw.trim();
    if raw == "none" {
        return Ok(Vec::new());
    }
    let mut lags: Vec<(u32, u64)> = Vec::new();
    for item in raw.split('/') {
        let item = item.trim();
        let parsed = item.split_once(':').and_then(|(node, k)| {
            Some((
                node.trim().parse::<u32>().ok()?,
                k.trim().parse::<u64>().ok()?,
            ))
        });
        match parsed {
            Some((node, k)) if node >= 1 && k >= 1 => {
                if lags.iter().any(|&(other, _)| other == node) {
                    return usage!("{key} = {raw:?}: node {node} is listed twice");
                }
                lags.push((node, k));
            }
            _ => {
                return usage!(
                    "{key} = {raw:?}: {item:?} is not NODE:K; expected {}",
                    Kind::NodeLags.describe()
                )
            }
        }
    }
    lags.sort_unstable();
    Ok(lags)
}

/// Parses a [`Kind::NodeMultipliers`] value into (node, multiplier) pairs sorted by node;
/// `none` is empty. Each error names the parameter, the value and the bad item.
pub fn parse_node_multipliers(key: &str, raw: &str) -> Result<Vec<(u32, f64)>> {
    let raw = raw.trim();
    if raw == "none" {
        return Ok(Vec::new());
    }
    let mut out: Vec<(u32, f64)> = Vec::new();
    for item in raw.split('/') {
        let item = item.trim();
        let parsed = item.split_once(':').and_then(|(node, k)| {
            Some((
                node.trim().parse::<u32>().ok()?,
                k.trim().parse::<f64>().ok()?,
            ))
        });
        match parsed {
            Some((node, k))
                if node >= 1 && k.is_finite() && k > 0.0 && k <= MAX_TIMING_MULTIPLIER =>
            {
                if out.iter().any(|&(other, _)| other == node) {
                    return usage!("{key} = {raw:?}: node {node} is listed twice");
                }
                // `+ 0.0`: one canonical zero sign (never reached, k > 0, but cheap).
                out.push((node, k + 0.0));
            }
            _ => {
                return usage!(
                    "{key} = {raw:?}: {item:?} is not NODE:K; expected {}",
                    Kind::NodeMultipliers.describe()
                )
            }
        }
    }
    out.sort_unstable_by_key(|&(node, _)| node);
    Ok(out)
}

/// A TOML scalar as the string `canonical` parses (arrays are handled by the caller).
pub fn toml_scalar(key: &str, v: &toml::Value) -> Result<String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(format!("{f}")),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => usage!(
            "{key}: expected a number, a boolean or a string, got a {}",
            other.type_str()
        ),
    }
}

fn ms(v: f64) -> Duration {
    Duration::from_nanos((v * 1e6).round() as u64)
}

/// The bully's parameters (`bully.*`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct BullyParams {
    /// `bully.t_elec_ms`.
    pub t_elec_ms: f64,
    /// `bully.t_coord_ms` (`None`: 2 × t_elec).
    pub t_coord_ms: Option<f64>,
    /// `bully.rejoin`.
    pub rejoin: Rejoin,
    /// `bully.quorum`.
    pub quorum: bool,
    /// `bully.epoch`.
    pub epoch: bool,
}

/// The ring's parameters (`ring.*`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct RingParams {
    /// `ring.t_hop_ms`.
    pub t_hop_ms: f64,
    /// `ring.arrangement`: `ascending`, `descending` or `random`.
    pub arrangement: String,
    /// `ring.hop_acks`.
    pub hop_acks: bool,
}

/// Raft's parameters (`raft.*`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct RaftParams {
    /// `raft.timeout_ms` as (lo, hi).
    pub timeout_ms: (f64, f64),
    /// `raft.pre_vote`.
    pub pre_vote: bool,
    /// `raft.check_quorum`.
    pub check_quorum: bool,
    /// `raft.lagging`: (node, entries behind), by node.
    pub lagging: Vec<(u32, u64)>,
    /// `raft.redraw`.
    pub redraw: Redraw,
    /// `raft.check_quorum_every`.
    pub check_quorum_every: CheckQuorumEvery,
    /// `raft.follower`.
    pub follower: FollowerRule,
    /// `raft.append`.
    pub append: AppendRule,
    /// `raft.replies`.
    pub replies: RepliesRule,
    /// `raft.leader_send`.
    pub leader_send: LeaderSend,
    /// `raft.voters` (`None`: every node votes).
    pub voters: Option<u32>,
    /// `raft.clock`.
    pub clock: Clock,
}

/// raft-rs's parameters (`raftrs.*`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct RaftrsParams {
    /// `raftrs.tick_ms` (default `heartbeat_ms`).
    pub tick_ms: f64,
    /// `raftrs.pre_vote`.
    pub pre_vote: bool,
    /// `raftrs.check_quorum`.
    pub check_quorum: bool,
}

/// The lease's parameters (`lease.*`), resolved (`lease.profile` only picks defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct LeaseParams {
    /// `lease.duration_ms`.
    pub duration_ms: f64,
    /// `lease.renew_deadline_ms`.
    pub renew_deadline_ms: f64,
    /// `lease.retry_ms`.
    pub retry_ms: f64,
    /// `lease.release_on_cancel`.
    pub release_on_cancel: bool,
    /// `lease.store_nodes`.
    pub store_nodes: u32,
    /// `lease.store_heartbeat_ms`.
    pub store_heartbeat_ms: f64,
    /// `lease.store_election_ms`.
    pub store_election_ms: f64,
    /// `lease.expiry`.
    pub expiry: Expiry,
    /// `lease.cas`.
    pub cas: bool,
    /// `lease.on_loss`.
    pub on_loss: OnLoss,
    /// `lease.restart_ms` as (lo, hi).
    pub restart_ms: (f64, f64),
    /// `lease.reconnect_ms`.
    pub reconnect_ms: f64,
}

/// Omni-Paxos' parameters (`omnipaxos.*`), resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct OmniPaxosParams {
    /// `omnipaxos.tick_ms`.
    pub tick_ms: f64,
}

/// Every parameter of one grid cell, typed, with derived defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// `heartbeat_ms`.
    pub heartbeat_ms: f64,
    /// `detect_timeout_ms`.
    pub detect_timeout_ms: f64,
    /// `detect_jitter_ms`.
    pub detect_jitter_ms: f64,
    /// The bully's own parameters (`bully.*`).
    pub bully: BullyParams,
    /// The ring's own parameters (`ring.*`).
    pub ring: RingParams,
    /// Raft's own parameters (`raft.*`).
    pub raft: RaftParams,
    /// raft-rs's own parameters (`raftrs.*`).
    pub raftrs: RaftrsParams,
    /// The lease's own parameters (`lease.*`).
    pub lease: LeaseParams,
    /// Omni-Paxos' own parameters (`omnipaxos.*`).
    pub omnipaxos: OmniPaxosParams,
    /// The network: the profile with `net.*` overrides.
    pub net: NetConfig,
    /// `fault_at_ms`.
    pub fault_at_ms: f64,
    /// `fault_jitter_ms`.
    pub fault_jitter_ms: f64,
    /// `fault_wait_ms`.
    pub fault_wait_ms: f64,
    /// The node-time model (`node.*`, `clock.*`).
    pub node: NodeTime,
    /// `node.timing_multiplier`: (node, multiplier), by node; empty: every node runs the
    /// shared timing (see [`Resolved::multiplied`]).
    pub timing_multiplier: Vec<(u32, f64)>,
    /// `mixed_multiplier`.
    pub mixed_multiplier: u32,
    /// Background noise (`noise.*`).
    pub noise: Noise,
    /// `steady_ms`.
    pub steady_ms: f64,
    /// `workload.interval_ms` (0: no workload).
    pub workload_interval_ms: f64,
    /// `workload.fencing`.
    pub workload_fencing: Fencing,
    /// `workload.commit`.
    pub workload_commit: Commit,
    /// `leader.stop_lag_ms`.
    pub stop_lag: Latency,
    /// `settle_ms`.
    pub settle_ms: f64,
    /// `horizon_ms`.
    pub horizon_ms: f64,
    /// `outage_ms`.
    pub outage_ms: f64,
    /// `pause_ms`.
    pub pause_ms: f64,
    /// `flaps`.
    pub flaps: u32,
    /// `slow_factor`.
    pub slow_factor: u32,
    /// `flap_down_ms`.
    pub flap_down_ms: f64,
    /// `flap_up_ms`.
    pub flap_up_ms: f64,
    /// `cascade_delay_ms`.
    pub cascade_delay_ms: f64,
    /// `fault_loss`.
    pub fault_loss: f64,
    /// `stale_keepalive_ms`.
    pub stale_keepalive_ms: f64,
    /// `clock_jump_ms`.
    pub clock_jump_ms: f64,
    /// `handover_grace_ms`.
    pub handover_grace_ms: f64,
    /// `store_slow_ms`.
    pub store_slow_ms: f64,
    /// `work_budget` (`None`: 100000 × nodes, at most 20 million; see [`Resolved::budget`]).
    pub work_budget: Option<u64>,
    /// 1, or [`K8S_TIME_SCALE`] under `lease.profile = k8s`: the factor of the time defaults.
    pub time_scale: f64,
}

impl Resolved {
    /// Resolve `params` (already canonical) over `profile`.
    pub fn resolve(profile: &NetProfile, params: &ParamMap) -> Result<Resolved> {
        // `raft.system`: a real system's rules and timings are the defaults of the parameters
        // it sets ([`crate::systems`]); what `params` sets explicitly wins.
        let with_system = crate::systems::with_defaults(params);
        let params = with_system.as_ref().unwrap_or(params);
        let get = |k: &str| params.get(k).map(String::as_str);
        let num = |k: &str, d: f64| get(k).map_or(d, |v| v.parse::<f64>().expect("canonical"));
        let flag = |k: &str, d: bool| get(k).map_or(d, |v| v == "true");
        // `lease.profile = k8s` runs the whole trial at Kubernetes' time scale
        // ([`K8S_TIME_SCALE`]): its defaults below are the scaled profile's times 100.
        let k8s = get("lease.profile") == Some("k8s");
        let scale = if k8s { K8S_TIME_SCALE } else { 1.0 };
        let heartbeat_ms = num("heartbeat_ms", 50.0 * scale);
        let detect_timeout_ms = num("detect_timeout_ms", 150.0 * scale);
        let detect_jitter_ms = num("detect_jitter_ms", 150.0 * scale);
        let window = detect_timeout_ms + detect_jitter_ms;
        let mut net = profile.net.clone();
        if let Some(l) = get("net.latency") {
            net.latency = parse_latency(l)?;
        }
        net.loss = num("net.loss", net.loss);
        net.duplicate = num("net.duplicate", net.duplicate);
        net.fifo = flag("net.fifo", net.fifo);
        let ideal = get("node.profile") == Some("ideal");
        let latency = |k: &str, server: &str| -> Result<Latency> {
            match get(k) {
                Some(v) => parse_latency(v),
                None if ideal => Ok(Latency::Constant { ms: 0.0 }),
                None => parse_latency(server),
            }
        };
        let node = NodeTime {
            fsync: Some(match (get("node.fsync_ms"), get("node.disk")) {
                (None, Some(disk)) => crate::disk::named(disk).expect("canonical").latency(),
                _ => latency("node.fsync_ms", "lognormal:2:0.5")?,
            }),
            // Microseconds as written; the simulator's distributions are in ms.
            cpu: Some(latency("node.cpu_us", "lognormal:20:0.5")?.scaled(1e-3)),
            timer_jitter_ms: num("node.timer_jitter_ms", if ideal { 0.0 } else { 1.0 }),
            drift_ppm: num("clock.drift_ppm", if ideal { 0.0 } else { 50.0 }),
            offset_ms: num("clock.offset_ms", 0.0),
        };
        let busy = get("noise.profile") == Some("busy");
        let rate = |k: &str, b: f64| num(k, if busy { b } else { 0.0 });
        let dist = |k: &str, d: &str| parse_latency(get(k).unwrap_or(d));
        let noise = Noise {
            pause: Some(Bursts {
                per_hour: rate("noise.pause_per_hour", 180.0),
                ms: dist("noise.pause_ms", "lognormal:5:1")?,
            }),
            stall: Some(Bursts {
                per_hour: rate("noise.stall_per_hour", 12.0),
                ms: dist("noise.stall_ms", "lognormal:20:1")?,
            }),
            spike: Some(Spikes {
                per_hour: rate("noise.spike_per_hour", 6.0),
                extra_ms: dist("noise.spike_ms", "lognormal:20:1")?,
                len_ms: dist("noise.spike_len_ms", "lognormal:500:0.5")?,
            }),
        };
        let r = Resolved {
            heartbeat_ms,
            detect_timeout_ms,
            detect_jitter_ms,
            bully: BullyParams {
                t_elec_ms: num("bully.t_elec_ms", 20.0),
                t_coord_ms: get("bully.t_coord_ms").map(|v| v.parse().expect("canonical")),
                rejoin: get("bully.rejoin")
                    .map_or(Rejoin::Eager, |v| v.parse().expect("canonical")),
                quorum: flag("bully.quorum", false),
                epoch: flag("bully.epoch", false),
            },
            ring: RingParams {
                t_hop_ms: num("ring.t_hop_ms", 20.0),
                arrangement: get("ring.arrangement").unwrap_or("ascending").to_string(),
                hop_acks: flag("ring.hop_acks", true),
            },
            raft: RaftParams {
                timeout_ms: match get("raft.timeout_ms") {
                    Some(v) => {
                        let (lo, hi) = v.split_once('-').expect("canonical range");
                        (
                            lo.parse().expect("canonical"),
                            hi.parse().expect("canonical"),
                        )
                    }
                    None => (detect_timeout_ms, window),
                },
                pre_vote: flag("raft.pre_vote", false),
                check_quorum: flag("raft.check_quorum", false),
                lagging: get("raft.lagging").map_or_else(Vec::new, |v| {
                    parse_node_lags("raft.lagging", v).expect("canonical")
                }),
                redraw: get("raft.redraw").map_or_else(Redraw::default, |v| {
                    Redraw::from_name(v).expect("canonical")
                }),
                check_quorum_every: get("raft.check_quorum_every")
                    .map_or_else(CheckQuorumEvery::default, |v| {
                        CheckQuorumEvery::from_name(v).expect("canonical")
                    }),
                follower: get("raft.follower").map_or_else(FollowerRule::default, |v| {
                    FollowerRule::from_name(v).expect("canonical")
                }),
                append: get("raft.append").map_or_else(AppendRule::default, |v| {
                    AppendRule::from_name(v).expect("canonical")
                }),
                replies: get("raft.replies").map_or_else(RepliesRule::default, |v| {
                    RepliesRule::from_name(v).expect("canonical")
                }),
                leader_send: get("raft.leader_send").map_or_else(LeaderSend::default, |v| {
                    LeaderSend::from_name(v).expect("canonical")
                }),
                voters: get("raft.voters").map(|v| v.parse().expect("canonical count")),
                clock: get("raft.clock")
                    .map_or_else(Clock::default, |v| Clock::from_name(v).expect("canonical")),
            },
            raftrs: RaftrsParams {
                tick_ms: num("raftrs.tick_ms", heartbeat_ms),
                pre_vote: flag("raftrs.pre_vote", false),
                check_quorum: flag("raftrs.check_quorum", false),
            },
            lease: {
                let duration_ms = num(
                    "lease.duration_ms",
                    if k8s { 15_000.0 } else { detect_timeout_ms },
                );
                LeaseParams {
                    duration_ms,
                    renew_deadline_ms: num("lease.renew_deadline_ms", duration_ms * 2.0 / 3.0),
                    retry_ms: num("lease.retry_ms", duration_ms * 2.0 / 15.0),
                    release_on_cancel: flag("lease.release_on_cancel", false),
                    store_nodes: get("lease.store_nodes")
                        .map_or(1, |v| v.parse().expect("canonical count")),
                    store_heartbeat_ms: num(
                        "lease.store_heartbeat_ms",
                        if k8s { 100.0 } else { 1.0 },
                    ),
                    store_election_ms: num(
                        "lease.store_election_ms",
                        if k8s { 1000.0 } else { 10.0 },
                    ),
                    expiry: get("lease.expiry").map_or_else(Expiry::default, |v| {
                        Expiry::from_name(v).expect("canonical")
                    }),
                    cas: flag("lease.cas", true),
                    on_loss: get("lease.on_loss").map_or_else(OnLoss::default, |v| {
                        OnLoss::from_name(v).expect("canonical")
                    }),
                    restart_ms: match get("lease.restart_ms") {
                        Some(v) => {
                            let (lo, hi) = v.split_once('-').expect("canonical range");
                            (
                                lo.parse().expect("canonical"),
                                hi.parse().expect("canonical"),
                            )
                        }
                        None => {
                            let d = if k8s {
                                election_lease::RESTART_K8S
                            } else {
                                election_lease::RESTART
                            };
                            let ms = d.as_secs_f64() * 1e3;
                            (ms, ms)
                        }
                    },
                    reconnect_ms: num(
                        "lease.reconnect_ms",
                        if k8s {
                            election_lease::RECONNECT_K8S.as_secs_f64() * 1e3
                        } else {
                            0.0
                        },
                    ),
                }
            },
            omnipaxos: OmniPaxosParams {
                tick_ms: num("omnipaxos.tick_ms", heartbeat_ms),
            },
            net,
            fault_at_ms: num("fault_at_ms", 4.0 * window),
            fault_jitter_ms: num("fault_jitter_ms", window),
            fault_wait_ms: num("fault_wait_ms", 10_000.0 * scale),
            node,
            timing_multiplier: get("node.timing_multiplier").map_or_else(Vec::new, |v| {
                parse_node_multipliers("node.timing_multiplier", v).expect("canonical")
            }),
            mixed_multiplier: get("mixed_multiplier").map_or(5, |v| v.parse().expect("canonical")),
            noise,
            steady_ms: num("steady_ms", 3_600_000.0),
            workload_interval_ms: num("workload.interval_ms", 10.0 * scale),
            workload_fencing: match get("workload.fencing") {
                Some("off") => Fencing::Off,
                _ => Fencing::Token,
            },
            workload_commit: match get("workload.commit") {
                Some("majority") => Commit::Majority,
                _ => Commit::Resource,
            },
            stop_lag: dist("leader.stop_lag_ms", "constant:0")?,
            settle_ms: num("settle_ms", 2.0 * window),
            horizon_ms: num(
                "horizon_ms",
                num("fault_at_ms", 4.0 * window)
                    + num("fault_jitter_ms", window)
                    + Self::HORIZON_TIMEOUTS * window,
            ),
            outage_ms: num("outage_ms", 5.0 * window),
            pause_ms: num("pause_ms", 2.0 * window),
            flaps: get("flaps").map_or(3, |v| v.parse().expect("canonical")),
            slow_factor: get("slow_factor").map_or(1000, |v| v.parse().expect("canonical")),
            flap_down_ms: num("flap_down_ms", 2.0 * window),
            flap_up_ms: num("flap_up_ms", 2.0 * window),
            cascade_delay_ms: num("cascade_delay_ms", 5.0),
            fault_loss: num("fault_loss", 0.1),
            stale_keepalive_ms: num("stale_keepalive_ms", 5.0 * detect_timeout_ms),
            clock_jump_ms: num("clock_jump_ms", 2.0 * detect_timeout_ms),
            handover_grace_ms: num("handover_grace_ms", window),
            store_slow_ms: num("store_slow_ms", 5.0),
            work_budget: get("work_budget").map(|v| v.parse().expect("canonical")),
            time_scale: scale,
        };
        let latest = r.fault_at_ms + r.fault_jitter_ms;
        if latest >= r.horizon_ms {
            let field = if r.fault_jitter_ms > 0.0 {
                "fault_at_ms + fault_jitter_ms"
            } else {
                "fault_at_ms"
            };
            return usage!(
                "invalid {field} = {} ms: the fault instant must come before horizon_ms ({} ms)",
                crate::results::fmt_ms(latest),
                crate::results::fmt_ms(r.horizon_ms)
            );
        }
        if latest + r.settle_ms > r.horizon_ms {
            // No trial could hold a leader for the settle window before the horizon.
            return usage!(
                "invalid settle_ms = {} ms: the settle window must fit between the latest fault instant ({} ms) and horizon_ms ({} ms); raise horizon_ms or lower settle_ms",
                crate::results::fmt_ms(r.settle_ms),
                crate::results::fmt_ms(latest),
                crate::results::fmt_ms(r.horizon_ms)
            );
        }
        if latest + r.hold_ms() > r.horizon_ms {
            // No trial could hold a leader for the verdict's span before the horizon: every
            // verdict would be a liveness failure, even with a leader at the end.
            return usage!(
                "invalid horizon_ms = {} ms: the verdict's hold span (10 x (detect_timeout_ms + detect_jitter_ms) = {} ms) must fit between the latest fault instant ({} ms) and horizon_ms; raise horizon_ms or lower fault_at_ms",
                crate::results::fmt_ms(r.horizon_ms),
                crate::results::fmt_ms(r.hold_ms()),
                crate::results::fmt_ms(latest)
            );
        }
        Ok(r)
    }

    /// How many of the protocol's longest election timeouts one quorum leadership must last
    /// for the `outcome` verdict (see [`Resolved::hold_ms`]).
    pub const HOLD_TIMEOUTS: f64 = 10.0;

    /// How many of the protocol's longest election timeouts the default horizon leaves after
    /// the latest fault instant: the scale at which a cluster that has not settled is a
    /// liveness failure. Over every 4- and 5-node link pattern `explore` runs for Raft, a
    /// horizon three times as long changes 52 of 29,000 verdicts (0.2 %), each a livelock
    /// that held a leader later.
    pub const HORIZON_TIMEOUTS: f64 = 60.0;

    /// The `outcome` verdict's hold span ([`SimConfig::hold`](election_sim::SimConfig)):
    /// [`Resolved::HOLD_TIMEOUTS`] of the longest election timeout the detection window draws
    /// (`detect_timeout_ms + detect_jitter_ms`). Derived from the timing, never set on its
    /// own, so no observation window (`settle_ms`, `horizon_ms`) moves a verdict; why ten is
    /// in the observer's docs (`crates/sim/src/observer.rs`).
    pub fn hold_ms(&self) -> f64 {
        Self::HOLD_TIMEOUTS * (self.detect_timeout_ms + self.detect_jitter_ms)
    }

    /// These parameters as `scenario` runs them: a steady-state scenario (`steady-noise`)
    /// measures a fixed window, so its horizon is the latest fault instant plus `steady_ms`
    /// (`fault_at_ms + fault_jitter_ms + steady_ms`; `horizon_ms` does not apply to it) and it
    /// runs to that horizon ([`SimConfig::run_to_horizon`](election_sim::SimConfig)). Every
    /// other scenario runs them as given.
    pub fn for_scenario(mut self, scenario: &crate::scenario::Scenario) -> Resolved {
        if scenario.steady() {
            self.horizon_ms = self.fault_at_ms + self.fault_jitter_ms + self.steady_ms;
        }
        self
    }

    /// These parameters for an `n`-node cluster running `scenario`: `mixed-multiplier` runs
    /// the `⌊n/2⌋` highest ids with `mixed_multiplier` (replacing `node.timing_multiplier`,
    /// which the sweep warns about, [`crate::scenario::Builtin::overrides`]); every other
    /// scenario runs them as given.
    pub fn for_cluster(mut self, scenario: &crate::scenario::Scenario, n: u32) -> Resolved {
        if scenario.name() == crate::scenario::MIXED_MULTIPLIER
            && matches!(scenario, crate::scenario::Scenario::Builtin(_))
        {
            let k = f64::from(self.mixed_multiplier);
            self.timing_multiplier = (n - n / 2 + 1..=n).map(|id| (id, k)).collect();
        }
        self
    }

    /// The parameters one node with timing multiplier `k` builds its configuration from:
    /// its heartbeat period and its failure-detection window multiplied by `k`
    /// (`heartbeat_ms`, `detect_timeout_ms`, `detect_jitter_ms`, `raft.timeout_ms`, the
    /// lease's duration, renew deadline and retry period, raft-rs's and Omni-Paxos' tick),
    /// as Consul's `raft_multiplier` multiplies hashicorp/raft's `HeartbeatTimeout`,
    /// `ElectionTimeout` and `LeaderLeaseTimeout` on that server alone
    /// (`agent/config/builder.go`). The bully's `t_elec`/`t_coord` and the ring's `t_hop`
    /// (waits for a reply, not detection) are left alone. A value multiplied past
    /// [`MAX_MS`] is refused, naming the parameter.
    pub fn multiplied(&self, k: f64) -> std::result::Result<Resolved, String> {
        let mut r = self.clone();
        let scale = |name: &str, v: &mut f64| {
            let x = *v * k;
            if x > MAX_MS {
                return Err(format!(
                    "node.timing_multiplier: {name} = {} ms x {k} is past 1e12 ms",
                    *v
                ));
            }
            *v = x;
            Ok(())
        };
        scale("heartbeat_ms", &mut r.heartbeat_ms)?;
        scale("detect_timeout_ms", &mut r.detect_timeout_ms)?;
        scale("detect_jitter_ms", &mut r.detect_jitter_ms)?;
        scale("raft.timeout_ms", &mut r.raft.timeout_ms.0)?;
        scale("raft.timeout_ms", &mut r.raft.timeout_ms.1)?;
        scale("lease.duration_ms", &mut r.lease.duration_ms)?;
        scale("lease.renew_deadline_ms", &mut r.lease.renew_deadline_ms)?;
        scale("lease.retry_ms", &mut r.lease.retry_ms)?;
        scale("raftrs.tick_ms", &mut r.raftrs.tick_ms)?;
        scale("omnipaxos.tick_ms", &mut r.omnipaxos.tick_ms)?;
        r.timing_multiplier = Vec::new();
        Ok(r)
    }

    /// The workload of a trial.
    pub fn workload(&self) -> Workload {
        Workload {
            interval: (self.workload_interval_ms > 0.0)
                .then(|| Resolved::duration(self.workload_interval_ms)),
            fencing: self.workload_fencing,
            commit: self.workload_commit,
            stop_lag: self.stop_lag.clone(),
        }
    }

    /// The detection window's upper end, `detect_timeout_ms + detect_jitter_ms`.
    pub fn window_ms(&self) -> f64 {
        self.detect_timeout_ms + self.detect_jitter_ms
    }

    /// The work budget of one trial with `nodes` nodes that runs to at most `horizon_ms`:
    /// `work_budget`, or by default
    /// [`SimConfig::default_budget`](election_sim::SimConfig::default_budget) (100000 × nodes,
    /// at most 20 million) per 20 s (the default horizon) of simulated time, so that a trial
    /// meant to run for an hour (`steady-noise`) gets an hour's budget; at the default horizon
    /// and below it is exactly the per-trial default. At a time scale of its own
    /// ([`K8S_TIME_SCALE`]) the unit is the scaled horizon (2000 s): its protocol sends that
    /// much less often.
    pub fn budget(&self, nodes: u32, horizon_ms: f64) -> u64 {
        self.work_budget.unwrap_or_else(|| {
            let per = election_sim::SimConfig::default_budget(nodes);
            let k = (horizon_ms / (20_000.0 * self.time_scale)).max(1.0);
            (per as f64 * k).min(u64::MAX as f64) as u64
        })
    }

    /// The shared timing handed to every protocol.
    pub fn timing(&self) -> Timing {
        Timing {
            heartbeat: ms(self.heartbeat_ms),
            detect_timeout: ms(self.detect_timeout_ms),
            detect_jitter: ms(self.detect_jitter_ms),
        }
    }

    /// `ms` milliseconds as a duration (nanosecond precision).
    pub fn duration(ms_value: f64) -> Duration {
        ms(ms_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_found() {
        let mut k: Vec<_> = keys().collect();
        k.sort();
        k.dedup();
        assert_eq!(k.len(), PARAMS.len());
        assert!(lookup("net.loss").is_ok());
        let e = lookup("net.los").unwrap_err().to_string();
        assert!(e.contains("net.loss") && e.contains("heartbeat_ms"), "{e}");
    }

    #[test]
    fn values_are_canonical() {
        let c = |k, v| canonical(lookup(k).unwrap(), v);
        assert_eq!(c("heartbeat_ms", "50.0").unwrap(), "50");
        assert_eq!(c("net.loss", "0.10").unwrap(), "0.1");
        assert_eq!(c("raft.timeout_ms", "150 - 300").unwrap(), "150-300");
        assert_eq!(c("raft.timeout_ms", "200").unwrap(), "200-200");
        assert_eq!(c("bully.rejoin", "defer").unwrap(), "defer");
        assert!(c("bully.rejoin", "lazy")
            .unwrap_err()
            .to_string()
            .contains("eager, defer"));
        assert!(c("net.loss", "1.5").is_err());
        assert!(c("heartbeat_ms", "0").is_err());
        assert!(c("raft.timeout_ms", "300-150").is_err());
        assert!(c("flaps", "0").is_err());
        assert!(c("net.fifo", "yes").is_err());
        assert_eq!(c("net.latency", " constant:2.0 ").unwrap(), "constant:2");
        assert_eq!(c("horizon_ms", "1e12").unwrap(), "1000000000000");
        let e = c("detect_jitter_ms", "2e13").unwrap_err().to_string();
        assert!(
            e.contains("detect_jitter_ms = 2e13") && e.contains("1e12"),
            "{e}"
        );
        assert!(c("raft.timeout_ms", "150-2e13").is_err());
        assert_eq!(c("raft.lagging", " 2:1 / 1:3 ").unwrap(), "1:3/2:1");
        assert_eq!(c("raft.lagging", "none").unwrap(), "none");
        for bad in ["", "1", "1:0", "0:2", "1:2/1:3", "1:2,2:1", "a:1", "1:-1"] {
            let e = c("raft.lagging", bad).unwrap_err().to_string();
            assert!(e.starts_with("raft.lagging = "), "{bad}: {e}");
        }
    }

    #[test]
    fn defaults_are_fair() {
        let c = |k, v| canonical(lookup(k).unwrap(), v);
        let lan = NetProfile::builtin("lan").unwrap();
        let r = Resolved::resolve(&lan, &ParamMap::new()).unwrap();
        assert_eq!(r.timing(), Timing::default());
        assert_eq!(r.raft.timeout_ms, (150.0, 300.0));
        assert_eq!(r.raft.lagging, Vec::<(u32, u64)>::new());
        assert_eq!(r.settle_ms, 600.0);
        // A settle window that cannot fit before the horizon is refused, naming it.
        let mut set = ParamMap::new();
        set.insert("settle_ms", "19500".to_string());
        let e = Resolved::resolve(&lan, &set).unwrap_err().to_string();
        assert!(e.contains("invalid settle_ms = 19500 ms"), "{e}");
        // The fault falls in a settled cluster: 4 longest timeouts after boot, give or take one.
        assert_eq!((r.fault_at_ms, r.fault_jitter_ms), (1200.0, 300.0));
        assert_eq!(r.hold_ms(), 3000.0);
        assert_eq!(r.budget(51, r.horizon_ms), 5_100_000);
        assert_eq!(r.budget(5001, r.horizon_ms), 20_000_000);
        assert_eq!(r.budget(5, 10_000.0), 500_000);
        assert_eq!(r.budget(5, 3_620_000.0), 90_500_000);
        assert!(r.noise.is_none());
        assert_eq!(
            c("work_budget", "18446744073709551615").unwrap(),
            "18446744073709551615"
        );
        assert!(c("work_budget", "0").is_err());
        assert!(c("work_budget", "1e9").is_err());
        let mut m = ParamMap::new();
        m.insert("detect_jitter_ms", "50".into());
        m.insert("net.loss", "0.2".into());
        let r = Resolved::resolve(&lan, &m).unwrap();
        assert_eq!(r.raft.timeout_ms, (150.0, 200.0));
        assert_eq!(r.net.loss, 0.2);
    }

    /// Values that used to be taken and misread: a workload interval that outgrew the work
    /// (0.0001 ms ran 20 s) or rounded to 0 ns and silently turned the workload off, any
    /// millisecond value below 1 ns (a heartbeat that named `timing.heartbeat` as the culprit),
    /// a negative range bound read as `""`, and slow_factor's cap, now in `params`.
    #[test]
    fn bounds_are_refused_naming_the_parameter() {
        let c = |k, v| canonical(lookup(k).unwrap(), v);
        assert_eq!(c("workload.interval_ms", "0").unwrap(), "0");
        assert_eq!(c("workload.interval_ms", "0.1").unwrap(), "0.1");
        for v in ["0.0001", "0.0000001", "0.09"] {
            let e = c("workload.interval_ms", v).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("workload.interval_ms = {v}:")),
                "{e}"
            );
        }
        let e = c("heartbeat_ms", "0.0000001").unwrap_err().to_string();
        assert!(
            e.contains("heartbeat_ms = 0.0000001") && e.contains("1 ns"),
            "{e}"
        );
        let e = c("fault_wait_ms", "1e-9").unwrap_err().to_string();
        assert!(e.contains("fault_wait_ms"), "{e}");
        assert_eq!(c("heartbeat_ms", "0.000001").unwrap(), "0.000001");
        let e = c("raft.timeout_ms", "-5-10").unwrap_err().to_string();
        assert!(
            e.contains("raft.timeout_ms = \"-5-10\"") && e.contains("0 < LO"),
            "{e}"
        );
        let e = c("raft.timeout_ms", "x-10").unwrap_err().to_string();
        assert!(e.contains("\"x\" is not a number"), "{e}");
        assert_eq!(c("raft.timeout_ms", "150 - 300").unwrap(), "150-300");
        assert_eq!(c("slow_factor", "1000000").unwrap(), "1000000");
        let e = c("slow_factor", "1000001").unwrap_err().to_string();
        assert!(e.contains("slow_factor = 1000001: at most 1000000"), "{e}");
        assert!(values(lookup("slow_factor").unwrap()).contains("1 to 1000000"));
        assert!(values(lookup("workload.interval_ms").unwrap()).contains(">= 0.1"));
    }

    /// A bad distribution names its own parameters, not the probe's `net.latency`.
    #[test]
    fn a_bad_distribution_is_not_blamed_on_the_network() {
        for key in [
            "node.fsync_ms",
            "node.cpu_us",
            "noise.pause_ms",
            "net.latency",
        ] {
            let e = canonical(lookup(key).unwrap(), "uniform:5:1")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(key) && e.contains("invalid max_ms = 1"),
                "{e}"
            );
            assert!(!e.contains("net.latency.max_ms"), "{e}");
        }
    }
}
