//! From a tuned point to real systems' settings: etcd, hashicorp/raft (and Consul's
//! `raft_multiplier`) for a Raft point, Kubernetes client-go leader election for a lease point.
//! Each mapping states its assumptions and cites the project's own code or documentation; the
//! rules below were read from these sources (latest stored versions, November 2026):
//!
//! * **etcd** — `server/embed/config.go`: `--heartbeat-interval` (`TickMs`, default 100) and
//!   `--election-timeout` (`ElectionMs`, default 1000), both whole milliseconds;
//!   `Config.Validate` refuses `5*cfg.TickMs > cfg.ElectionMs` ("should be at least as 5 times
//!   as --heartbeat-interval") and an election timeout above `maxElectionMs = 50000`;
//!   `ElectionTicks()` is `ElectionMs / TickMs` in integer division (one tick per heartbeat
//!   interval, `HeartbeatTick: 1` in `server/etcdserver/bootstrap.go`). etcd-io/raft
//!   `resetRandomizedElectionTimeout` draws the timeout in `[electiontimeout, 2 *
//!   electiontimeout - 1]` ticks, our `raft.timeout_ms = T-2T`. etcd runs `CheckQuorum: true`
//!   always and `--pre-vote` by default since 3.5 (`CHANGELOG-3.5.md`), so the faithful spec to
//!   tune for etcd is `raft+pre_vote+check_quorum`. The tuning guide (etcd.io docs, "Tuning")
//!   advises a heartbeat of about the round-trip time and an election timeout of at least ten
//!   round trips.
//! * **hashicorp/raft** — `config.go`: `HeartbeatTimeout` ("the time in follower state without
//!   contact from a leader before we attempt an election"), `ElectionTimeout` (the same, in
//!   candidate state), `LeaderLeaseTimeout` (how long a leader stays without reaching a quorum),
//!   defaults 1000 / 1000 / 500 ms; `ValidateConfig` refuses any of them below 5 ms,
//!   `LeaderLeaseTimeout` above `HeartbeatTimeout`, and `ElectionTimeout` below
//!   `HeartbeatTimeout`. `util.go` `randomTimeout(min)` draws in `[min, 2·min)`, our `[T, 2T]`.
//!   The leader's heartbeat is not a setting: `replication.go` sends one every
//!   `randomTimeout(HeartbeatTimeout / 10)`, a ratio of 5 to 10.
//! * **Consul** — `performance.raft_multiplier` (`agent/consul/config.go`:
//!   `DefaultRaftMultiplier = 5`, `MaxRaftMultiplier = 10`; `agent/config/builder.go` refuses
//!   values outside 1..=10 and multiplies hashicorp/raft's 1000 / 1000 / 500 ms by it; the
//!   "Server Performance" page of Consul's docs lists the scaled values).
//! * **Kubernetes client-go** — `tools/leaderelection/leaderelection.go`: `LeaseDuration`,
//!   `RenewDeadline`, `RetryPeriod`; `NewLeaderElector` refuses `leaseDuration <=
//!   renewDeadline` ("leaseDuration must be greater than renewDeadline"), `renewDeadline <=
//!   JitterFactor * retryPeriod` with `JitterFactor = 1.2`, and any of them `<= 0`. The
//!   components' defaults are 15 s / 10 s / 2 s (`component-base/config/v1alpha1/defaults.go`).
//!   Our lease crate follows client-go's rules, so the mapping is one to one.
//!
//! * **omnipaxos** (0.2.4) — `src/omni_paxos.rs`: `ServerConfig::election_tick_timeout` (the
//!   ticks per Ballot Leader Election heartbeat round) and the period at which the user calls
//!   `tick()`, which is not a setting of the library; `ServerConfig::validate` refuses
//!   `election_tick_timeout = 0`. A round of the tuned timeout notices a silent leader after 1-2
//!   rounds, our `[T, 2T]` (`election_omnipaxos` docs).
//!
//! A Raft point is tuned with this crate's rules, which are not exactly any library's; each
//! Raft system therefore names the **rule set** it runs ([`Mapping::rule_set`], a spec of our
//! Raft's options, see `crates/raft/src/config.rs` for each rule's source), and `tune`
//! evaluates the advised point again under it ([`crate::tune::SystemCheck`]): [`ETCD_RULES`]
//! for etcd, [`HASHICORP_RULES`] for hashicorp/raft and [`CONSUL_RULES`] for Consul.
//!
//! The bully and the Chang–Roberts ring ship in no mainstream system as a configurable
//! component; their "settings" are the workbench's own, for a hand-written implementation.

use crate::protocol::ProtocolKind;

/// One setting of one system.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The setting's name as the system spells it.
    pub name: String,
    /// Its value, in the system's syntax.
    pub value: String,
}

/// A tuned point as one system's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    /// The system.
    pub system: &'static str,
    /// The settings.
    pub settings: Vec<Setting>,
    /// What differs from the tuned point, and the assumptions.
    pub notes: Vec<String>,
    /// Whether the system accepts these settings as they are (`Err`: why not).
    pub valid: Result<(), String>,
    /// Where the rules come from.
    pub source: &'static str,
    /// The spec of our Raft that runs the system's election rules, when the family is Raft
    /// ([`ETCD_RULES`], [`HASHICORP_RULES`], [`CONSUL_RULES`]); `None` when the family's own rules are the
    /// system's (client-go's lease) or there is no system (the bully, the ring).
    pub rule_set: Option<&'static str>,
    /// The timing the system's settings realise, `(timeout_ms, ratio)`, at which
    /// [`Self::rule_set`] is measured: the tuned point's own where the settings express it
    /// exactly, else the nearest the system accepts (etcd's whole ticks, Consul's whole
    /// multiplier, hashicorp/raft's heartbeat at a tenth of its timeout).
    pub runs_at: (f64, f64),
}

/// etcd's election rules as our Raft's options: `CheckQuorum: true` always
/// (`server/etcdserver/bootstrap.go`, `raftConfig`), PreVote on by default since 3.5 (`CHANGELOG-3.5.md`),
/// etcd-io/raft's once-per-term draw of the randomized timeout (`raft.go` `reset` →
/// `resetRandomizedElectionTimeout`), its CheckQuorum once per election timeout
/// (`tickHeartbeat` → `MsgCheckQuorum`), its silences (`Step`: stale messages and votes within
/// the leader lease ignored), its immediate appends (`stepLeader` → `bcastAppend`) and its
/// server's leader that sends before it writes (`server/etcdserver/raft.go`, `raftNode.start`:
/// `if islead` the messages go before `storage.Save`): the rule set `election-bench
/// reference` matches against raft-rs, which shares these rules — and, as the `etcd@3.5`
/// system spec ([`crate::systems`]), its time counted in whole ticks of each member's own
/// heartbeat ticker (`clock=ticks`: `server/etcdserver/raft.go` `raftNode.start`, etcd-io/raft
/// `tickElection`, `pastElectionTimeout` and `Step`'s lease), so the tuned point's election
/// timeout is a whole number of its heartbeat intervals, as etcd's flags make it.
pub const ETCD_RULES: &str = "raft+pre_vote+check_quorum+redraw=per_term+check_quorum_every=timeout+append=immediate+replies=etcd+leader_send=parallel+clock=ticks";

/// hashicorp/raft's election rules (and Consul's, which runs it) as our Raft's options: the
/// follower's periodic `lastContact` check and the refusal of votes while a leader is known
/// (`raft.go` `runFollower`, `requestVote`), PreVote on by default since v1.7.0 (`config.go`
/// `PreVoteDisabled`, `raft.go` `requestPreVote`), and a leader that steps down without a
/// quorum (`raft.go` `checkLeaderLease`, our `check_quorum`; its window here is the heartbeat
/// timeout `T`, the library's `LeaderLeaseTimeout` is `T/2` in this mapping).
pub const HASHICORP_RULES: &str = "raft+pre_vote+check_quorum+follower=hashicorp";

/// Consul's election rules: [`HASHICORP_RULES`] without PreVote, for Consul 1.16 vendors
/// hashicorp/raft v1.5.0 (`go.mod`), before v1.7.0 brought pre-vote (the `consul@1.16` system
/// spec, [`crate::systems`]).
pub const CONSUL_RULES: &str = "raft+check_quorum+follower=hashicorp";

fn set(name: &str, value: String) -> Setting {
    Setting {
        name: name.into(),
        value,
    }
}

/// A duration in Go's `time.ParseDuration` syntax: whole milliseconds as `150ms`, whole
/// seconds as `15s`, otherwise fractional milliseconds (`12.5ms`).
pub fn go_duration(ms: f64) -> String {
    if ms >= 1000.0 && (ms / 1000.0).fract() == 0.0 {
        format!("{}s", ms / 1000.0)
    } else {
        format!("{}ms", crate::results::fmt_ms(ms))
    }
}

/// The point `(timeout_ms, ratio)` of a `kind` spec as each real system's settings (see the
/// module docs; which systems is the family's entry, [`crate::protocol::Family::systems`]).
pub fn map(kind: ProtocolKind, timeout_ms: f64, ratio: f64) -> Vec<Mapping> {
    (kind.family().systems)(timeout_ms, ratio)
}

/// A family no mainstream system ships as a configurable component (the bully, the ring):
/// the workbench's own settings, for a hand-written implementation.
pub fn hand_written(algorithm: &str, timeout_ms: f64, ratio: f64) -> Mapping {
    // The values the point set (three significant digits), not the unrounded quotients.
    let period = super::period(timeout_ms, ratio);
    Mapping {
        system: "a hand-written implementation",
        settings: vec![
            set("heartbeat interval", go_duration(period)),
            set(
                "failure-detector timeout",
                format!(
                    "uniform in [{}, {}], redrawn at every re-arm",
                    go_duration(timeout_ms),
                    go_duration(2.0 * timeout_ms)
                ),
            ),
        ],
        notes: vec![format!(
            "no mainstream system ships the {algorithm} election as a configurable component: these are the workbench's own parameters (heartbeat_ms, detect_timeout_ms, detect_jitter_ms)"
        )],
        valid: Ok(()),
        source: "crates/runner/src/params.rs (the workbench's fair timing)",
        rule_set: None,
        runs_at: (timeout_ms, ratio),
    }
}

/// Omni-Paxos: call `tick()` every heartbeat period; a BLE round is the timeout in whole ticks.
pub fn omnipaxos(timeout_ms: f64, ratio: f64) -> Mapping {
    let period = super::period(timeout_ms, ratio);
    let ticks = (timeout_ms / period).round().max(1.0);
    let mut notes = Vec::new();
    if ticks * period != timeout_ms {
        notes.push(format!(
            "a round is a whole number of ticks: {} ms becomes {} x {} ms",
            crate::results::fmt_ms(timeout_ms),
            ticks,
            crate::results::fmt_ms(period)
        ));
    }
    Mapping {
        system: "omnipaxos (Rust crate)",
        settings: vec![
            set("tick() period (the caller's timer)", go_duration(period)),
            set("ServerConfig::election_tick_timeout", format!("{ticks}")),
        ],
        notes,
        valid: Ok(()),
        source: "omnipaxos 0.2.4, src/omni_paxos.rs (ServerConfig, tick)",
        // An omnipaxos point is a run of the library itself.
        rule_set: None,
        runs_at: (timeout_ms, timeout_ms / period),
    }
}

/// etcd: whole-millisecond flags, the election timeout a whole number of heartbeat ticks, at
/// least 5 of them, at most 50 s.
pub fn etcd(timeout_ms: f64, period_ms: f64) -> Mapping {
    let mut notes = Vec::new();
    let mut hb = period_ms.round().max(1.0);
    if hb != period_ms {
        notes.push(format!(
            "--heartbeat-interval is whole milliseconds: {} ms becomes {} ms",
            crate::results::fmt_ms(period_ms),
            hb
        ));
    }
    let mut ticks = (timeout_ms / hb).round().max(1.0);
    if ticks < 5.0 {
        let hb5 = (timeout_ms / 5.0).floor().max(1.0);
        notes.push(format!(
            "etcd refuses an election timeout under 5 heartbeat intervals; this point's {} would need {} ms, so the heartbeat becomes {} ms (more frequent heartbeats: no more false elections, slightly more traffic)",
            ticks,
            hb * 5.0,
            hb5
        ));
        hb = hb5;
        ticks = (timeout_ms / hb).round().max(5.0);
    }
    let election = ticks * hb;
    if election != timeout_ms {
        notes.push(format!(
            "the election timeout is a whole number of heartbeat ticks (ElectionMs / TickMs in integer division): {} ms becomes {} ticks of {} ms = {} ms",
            crate::results::fmt_ms(timeout_ms),
            ticks,
            hb,
            election
        ));
    }
    notes.push(
        "etcd draws each election timeout in [E, 2E - 1 tick], as the tuned raft.timeout_ms = T-2T"
            .into(),
    );
    notes.push(format!("etcd always runs CheckQuorum and, since 3.5, PreVote, draws its timeout once per term and checks its quorum once per election timeout: the predictions below come from this point run as `{ETCD_RULES}`"));
    let valid = if election > 50_000.0 {
        Err(format!(
            "--election-timeout {election} ms is above etcd's maximum of 50000 ms"
        ))
    } else {
        Ok(())
    };
    Mapping {
        system: "etcd",
        settings: vec![
            set("--heartbeat-interval", format!("{hb}")),
            set("--election-timeout", format!("{election}")),
        ],
        notes,
        valid,
        source: "etcd-io/etcd server/embed/config.go (Config.Validate, ElectionTicks), etcd-io/raft raft.go (resetRandomizedElectionTimeout)",
        rule_set: Some(ETCD_RULES),
        runs_at: (election, ticks),
    }
}

/// hashicorp/raft: `HeartbeatTimeout = ElectionTimeout = T`, `LeaderLeaseTimeout = T/2` (its
/// default proportion); heartbeats are sent at `HeartbeatTimeout/10` to `/5`, not set.
pub fn hashicorp(timeout_ms: f64, ratio: f64) -> Mapping {
    let mut notes = vec![
        "followers draw their heartbeat timeout in [HeartbeatTimeout, 2 x HeartbeatTimeout), as the tuned raft.timeout_ms = T-2T".to_string(),
        "LeaderLeaseTimeout is set to half the heartbeat timeout, the library's default proportion (500 of 1000 ms); it must not exceed HeartbeatTimeout".to_string(),
        format!("a follower does not reset its timer on heartbeats: it wakes every [HeartbeatTimeout, 2 x HeartbeatTimeout) and campaigns only if its last contact is a HeartbeatTimeout old, and nodes refuse votes while they know a leader: the predictions below come from this point run as `{HASHICORP_RULES}`"),
    ];
    if ratio != 10.0 {
        notes.push(format!(
            "the leader's heartbeat is not a setting: it is sent every HeartbeatTimeout/10 to /5 (a ratio of 5 to 10), not at this point's ratio of {}; {}",
            crate::results::fmt_ms(ratio),
            // A ratio under 10 is a heartbeat of T/3, say: rarer than the library's T/10.
            if ratio < 10.0 {
                "its heartbeats are more frequent than the tuned point's; its row is measured with them (a tenth of its timeout)"
            } else {
                "its heartbeats are rarer than the tuned point's; its row is measured with them (a tenth of its timeout)"
            }
        ));
    }
    let valid = if timeout_ms < 5.0 {
        Err(format!(
            "HeartbeatTimeout {} is below hashicorp/raft's minimum of 5 ms",
            go_duration(timeout_ms)
        ))
    } else if timeout_ms / 2.0 < 5.0 {
        Err(format!(
            "LeaderLeaseTimeout {} is below hashicorp/raft's minimum of 5 ms",
            go_duration(timeout_ms / 2.0)
        ))
    } else {
        Ok(())
    };
    Mapping {
        system: "hashicorp/raft",
        settings: vec![
            set("HeartbeatTimeout", go_duration(timeout_ms)),
            set("ElectionTimeout", go_duration(timeout_ms)),
            set("LeaderLeaseTimeout", go_duration(timeout_ms / 2.0)),
        ],
        notes,
        valid,
        source: "hashicorp/raft config.go (Config, DefaultConfig, ValidateConfig), util.go (randomTimeout), replication.go (heartbeat), raft.go (runFollower, requestVote)",
        rule_set: Some(HASHICORP_RULES),
        // replication.go heartbeat: every randomTimeout(HeartbeatTimeout / 10).
        runs_at: (timeout_ms, 10.0),
    }
}

/// Consul: `raft_multiplier` scales hashicorp/raft's 1000 / 1000 / 500 ms defaults by a whole
/// number from 1 to 10; the multiplier whose timeout is the smallest not below the point's.
pub fn consul(timeout_ms: f64) -> Mapping {
    let exact = timeout_ms / 1000.0;
    let m = exact.ceil().clamp(1.0, 10.0);
    let mut notes = Vec::new();
    if exact < 1.0 {
        notes.push(format!(
            "Consul's shortest timing (multiplier 1: 1000 ms heartbeat and election timeouts) is slower than this point's {} ms: failover will be slower than tuned, false elections no more frequent",
            crate::results::fmt_ms(timeout_ms)
        ));
    } else if exact > 10.0 {
        notes.push(format!(
            "Consul's longest timing (multiplier 10: 10 s) is shorter than this point's {} ms: expect more false elections than tuned",
            crate::results::fmt_ms(timeout_ms)
        ));
    } else if m != exact {
        notes.push(format!(
            "the multiplier is a whole number: {exact:.2} rounds up to {m} ({} ms), the side of fewer false elections",
            m * 1000.0
        ));
    }
    Mapping {
        system: "Consul",
        settings: vec![set("performance.raft_multiplier", format!("{m}"))],
        notes,
        valid: Ok(()),
        source: "hashicorp/consul agent/consul/config.go (DefaultRaftMultiplier, MaxRaftMultiplier), agent/config/builder.go, go.mod (hashicorp/raft v1.5.0); Consul docs, Server Performance",
        rule_set: Some(CONSUL_RULES),
        runs_at: (m * 1000.0, 10.0),
    }
}

/// client-go: `LeaseDuration = T`, `RenewDeadline = 2T/3`, `RetryPeriod` the point's period;
/// `NewLeaderElector`'s checks.
pub fn client_go(timeout_ms: f64, period_ms: f64) -> Mapping {
    let (ld, rd, rp) = (timeout_ms, super::sig3(timeout_ms * 2.0 / 3.0), period_ms);
    let valid = if ld <= rd {
        Err("leaseDuration must be greater than renewDeadline".to_string())
    } else if rd <= 1.2 * rp {
        Err(format!(
            "renewDeadline must be greater than retryPeriod*JitterFactor ({} <= 1.2 x {})",
            go_duration(rd),
            go_duration(rp)
        ))
    } else if rp <= 0.0 {
        Err("retryPeriod must be greater than zero".to_string())
    } else {
        Ok(())
    };
    Mapping {
        system: "Kubernetes client-go (leaderelection.LeaderElectionConfig)",
        settings: vec![
            set("LeaseDuration", go_duration(ld)),
            set("RenewDeadline", go_duration(rd)),
            set("RetryPeriod", go_duration(rp)),
        ],
        notes: vec![
            "the workbench's lease follows client-go's rules (observed time on the member's own clock, renew deadline, retry jitter 1.2): one to one".to_string(),
            "RenewDeadline keeps client-go's 10 : 15 proportion to LeaseDuration; kube-scheduler and kube-controller-manager take these as --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period".to_string(),
        ],
        valid,
        source: "kubernetes/client-go tools/leaderelection/leaderelection.go (NewLeaderElector, JitterFactor)",
        rule_set: None,
        runs_at: (timeout_ms, timeout_ms / period_ms),
    }
}

/// tikv's raft-rs (`raft::Config`): the application ticks `RawNode` every heartbeat period,
/// `heartbeat_tick = 1`, and the election timeout `T` becomes `election_tick = round(T /
/// period)` ticks (at least 2: raft-rs requires it above `heartbeat_tick`), the randomized
/// timeout drawn in `[election_tick, 2 × election_tick]` as the tuned `T`–`2T` window.
pub fn raft_rs(timeout_ms: f64, period_ms: f64) -> Mapping {
    let tick = period_ms;
    let election = (timeout_ms / tick).round().max(2.0);
    let mut notes = vec![format!(
        "the application calls RawNode::tick every {}; every raft-rs timeout is a whole number of ticks, counted from the last reset, so a timeout of k ticks is (k - 1) to k ticks of real time",
        go_duration(tick)
    )];
    if election * tick != timeout_ms {
        notes.push(format!(
            "the election timeout is a whole number of ticks: {} ms becomes {} ticks of {} = {}",
            crate::results::fmt_ms(timeout_ms),
            election,
            go_duration(tick),
            go_duration(election * tick)
        ));
    }
    notes.push("raft-rs draws the randomized timeout once per term or role change (not at every heartbeat), and its leader checks the quorum every election_tick ticks".into());
    Mapping {
        system: "tikv/raft-rs (raft::Config)",
        settings: vec![
            set("tick interval", go_duration(tick)),
            set("heartbeat_tick", "1".into()),
            set("election_tick", format!("{election}")),
            set("min_election_tick", format!("{election}")),
            set("max_election_tick", format!("{}", 2.0 * election + 1.0)),
        ],
        notes,
        valid: Ok(()),
        // A raftrs point is a run of the library itself: no rule set of ours stands in.
        rule_set: None,
        runs_at: (timeout_ms, timeout_ms / period_ms),
        source: "tikv/raft-rs src/config.rs (Config::validate), src/raft.rs (reset_randomized_election_timeout, tick_heartbeat)",
    }
}
