//! The columns of `trials.csv` with their definitions, `results/README.md`'s table: the
//! header ([`TRIAL_KEY_COLUMNS`], [`TRIAL_METRIC_COLUMNS`]) and the README's table
//! ([`trial_columns_markdown`]) both come from here. The metric definitions follow the
//! simulator's observer (`crates/sim/src/observer.rs`), where every metric is computed; the
//! terms they use ([`TERMS`]: the reference instant, reach, the quorum leader, a stranded member)
//! are defined here too, and the report's glossary is generated from both.

use super::Column;

/// A term the column definitions use, with its definition (the report's glossary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// The term, as the glossary names it (Markdown).
    pub name: &'static str,
    /// What it means.
    pub definition: &'static str,
}

/// The terms of the column definitions, in the order a reader needs them (each uses only
/// the ones before it), following the simulator's observer.
pub const TERMS: [Term; 4] = [
    Term {
        name: "reference instant (`t0`)",
        definition: "the instant the scenario's first fault fired (in a custom scenario, the fault marked `reference = true`), or 0 for `cold-start`. A fault drawn for an instant with no quorum leader waits for one (at most `fault_wait_ms`), and the whole fault timeline shifts with it. Every duration is measured from `t0` and only what happens at or after it counts (except `same_epoch_leaders`, checked over the whole trial)",
    },
    Term {
        name: "reach, quorum-connected",
        definition: "a member reaches another when the links between them are up both ways (for `lease`, whose members talk only to the store: when both reach a live store). A member is quorum-connected when it reaches a majority of the `nodes` members, itself included (`lease`: when it reaches the store; Raft with `raft.voters` = K below `nodes`: a voter that reaches a majority of the K voters, itself included — a learner never is)",
    },
    Term {
        name: "quorum leader",
        definition: "a live, unpaused member in the leader role that more than `nodes/2` members (itself included) name as their leader, each reaching it (Raft with `raft.voters` = K below `nodes`: more than K/2 of the voters, ids `1..=K`; learners follow but are not counted); for `lease`, the holder the store's record names, while it reaches the store (it can renew). At most one at a time: the cluster's working leader, which commits at a majority and serves even while members that cannot reach it are stranded",
    },
    Term {
        name: "stranded member",
        definition: "a live member that does not name-and-reach the quorum leader (every live member when there is none): its clients have no leader to reach through it. A Raft learner is a member: it is stranded like any other",
    },
];

/// The leading columns of `trials.csv`, before the varied parameters, with their definitions.
pub const TRIAL_KEY_DEFS: [Column; 6] = [
    Column {
        name: "mode",
        definition: "`sim` (this simulator), `live` (the UDP driver) or `real` (a real etcd cluster, `election-bench reality`: its members' own logs fed to the simulator's observer, so every column means the same; times have the logs' millisecond resolution, the message and byte counts are 0 (etcd's messages are not counted), the write columns are empty (no workload), `outcome` is judged over a hold span of two election timeouts instead of ten, `seed` numbers the trial, `protocol` is the system spec it is compared with, and the machine's load at each fault is in `reality.csv` beside it)",
    },
    Column {
        name: "protocol",
        definition: "the protocol spec: a protocol plus options, e.g. `bully`, `bully+quorum`, `raft+pre_vote+check_quorum`; each spec is its own series",
    },
    Column {
        name: "nodes",
        definition: "cluster size; node ids are `1..=nodes`, a higher id is a higher bully priority. A protocol's service endpoints (lease's store, id `nodes + 1`) are not counted: no metric but the message counts includes them",
    },
    Column {
        name: "scenario",
        definition: "scenario name (`election-bench scenarios` lists them)",
    },
    Column {
        name: "net",
        definition: "the network: its profile's name (`ideal`, `lan`, `dc`, `wan`, `lossy`, or a custom one from the config), followed by `+KEY=VALUE` for each `net.*` parameter fixed for the sweep whose value differs from the profile's own, in key order (`lan+net.loss=0.05`: `lan` run with `--set net.loss=0.05`); a varied `net.*` parameter has its own column instead. Live rows: `loopback`, or `loopback+` and that name when a profile is emulated",
    },
    Column {
        name: "seed",
        definition: "the trial seed; it determines the whole trial (network draws, protocol randomness, fault selectors, fault time)",
    },
];

/// What the varied-parameter columns (between the key and the metric columns of both CSVs) hold.
pub const VARIED_PARAMETERS: &str = "one column per parameter the sweep varies, named by the parameter key (`net.loss`, `raft.timeout_ms`, `detect_jitter_ms`, ...), sorted by key, holding this trial's value; empty where the parameter does not apply to the row's protocol spec (a family parameter such as `raft.timeout_ms` on a bully row, or one the spec sets itself, `raft+timeout_ms=300-600`: such cells run once, not once per value); absent when nothing varies";

/// The metric columns of `trials.csv`, after the varied parameters, with their definitions
/// (in the order [`super::TrialRow`]'s fields serialize).
pub const TRIAL_METRIC_DEFS: [Column; 36] = [
    Column {
        name: "converged",
        definition: "there is a quorum leader at the end of the trial. `false` is the right answer when a majority protocol has lost its majority",
    },
    Column {
        name: "leader",
        definition: "the quorum leader at the end (empty if not converged)",
    },
    Column {
        name: "detect_ms",
        definition: "`t0` to the first moment any node leaves the follower role (starts an election or declares itself); empty if none did",
    },
    Column {
        name: "elect_ms",
        definition: "`t0` to the start of the final interval, lasting to the end, in which one and the same quorum leader is followed by every live member that reaches it (0 if that interval began before `t0`, e.g. the leader never changed); empty if there is none at the end (given only when `converged`). It includes the time the last members that can reach the leader take to hear of it; under partial connectivity it can come much later than `failover_ms`, and in scenarios that heal or recover it includes whatever happened after the heal",
    },
    Column {
        name: "failover_ms",
        definition: "**the failover time**: `t0` to the first instant at or after `t0` with a quorum leader (an instant counts once every event at it has been handled). 0 when there was one right after the fault (a partition that leaves the leader on the majority side, a follower's crash), empty if there never was one. The one meaning of \"failover\" in every column, chart and sentence",
    },
    Column {
        name: "unavailable_ms",
        definition: "total time from `t0` to the end without a quorum leader",
    },
    Column {
        name: "stranded_node_ms",
        definition: "node-milliseconds from `t0` to the end during which a live member was stranded: summed over members, the time each had no leader it reaches and follows (a leaderless cluster of `k` live members accrues `k` ms per ms; a working leader with one member cut off from it, 1 ms per ms). The cost to the cut-off members, whose clients are stuck",
    },
    Column {
        name: "stranded_nodes",
        definition: "live members stranded at the end",
    },
    Column {
        name: "msgs_election",
        definition: "election traffic — every message category but heartbeats — sent from `t0` to the instant `elect_ms` ends (to the end of the trial if there is no such instant)",
    },
    Column {
        name: "msgs_total",
        definition: "every message sent during the whole trial (boot and heartbeats included), all categories",
    },
    Column {
        name: "bytes_total",
        definition: "the wire size of those messages (payload only, no UDP/IP headers)",
    },
    Column {
        name: "split_brain",
        definition: "at some instant at or after `t0`, two or more **acting** leaders existed at once: live nodes in the leader role that are not paused (a node frozen by a stop-the-world pause cannot act on its belief; see `paused_leader_ms`)",
    },
    Column {
        name: "split_brain_ms",
        definition: "total time with two or more acting leaders. Read it next to `writes_stale`: an overlap during which no deposed leader's write was taken did no damage",
    },
    Column {
        name: "minority_leader_ms",
        definition: "total time with a live member (paused or not) in the leader role that is not quorum-connected: a stranded leader that still believes it leads (a Raft leader without CheckQuorum on the minority side, a bully coordinator on the small side, a lease holder cut off from the store)",
    },
    Column {
        name: "paused_leader_ms",
        definition: "total time after `t0` during which a paused node still believed it led (apart from `split_brain_ms`)",
    },
    Column {
        name: "max_leaders",
        definition: "the most acting leaders at any one instant after `t0`",
    },
    Column {
        name: "same_epoch_leaders",
        definition: "how many times a node took (or kept, under a new epoch) the leader role while another live leader claimed the same epoch — a safety violation for protocols with terms (Raft, `bully+epoch`, the lease's transitions count, which `lease+cas=false`'s blind acquisitions break); always 0 for protocols without epochs",
    },
    Column {
        name: "leader_changes",
        definition: "entries into the leader role at or after `t0`",
    },
    Column {
        name: "elections_started",
        definition: "entries into the candidate role at or after `t0`, plus epoch increases of a node that stays a candidate (a Raft candidate retrying after a split vote)",
    },
    Column {
        name: "writes_ok",
        definition: "the workload (`workload.*` parameters; see `crates/runner/README.md`): writes taken after `t0` — by the shared resource, or by a majority under `workload.commit = majority` — from a leader that had not been deposed. Empty when the workload is off (`workload.interval_ms = 0`), as are the four columns below",
    },
    Column {
        name: "writes_stale",
        definition: "writes taken after `t0` from a **deposed** leader: one that some other node was elected after (with a higher epoch than the write's token; for protocols without epochs, by entering the leader role, or becoming the quorum leader again, later). With `leader.stop_lag_ms` above 0 they include the writes a node sends after leaving the leader role, with the token it had as leader. **The damage number**",
    },
    Column {
        name: "writes_fenced",
        definition: "writes the resource refused because their token was lower than the highest it had taken (`workload.fencing = token`). Fencing changes no node's behaviour, so `writes_stale + writes_fenced` is what an unfenced resource would have taken from deposed leaders",
    },
    Column {
        name: "stale_window_ms",
        definition: "the time during which a deposed leader's writes were being taken: the measure of the union of `[w, w + interval)` over the instants `w` at which stale writes were taken",
    },
    Column {
        name: "write_unavailable_ms",
        definition: "the time from `t0` to the end during which no write could be taken: not covered by `[w, w + interval)` for any taken write",
    },
    Column {
        name: "msgs_election_req",
        definition: "of the election window's messages: category *election* (bully ELECTION, ring ELECTION, Raft REQUEST_VOTE and PRE_VOTE)",
    },
    Column {
        name: "msgs_reply",
        definition: "category *reply* (bully OK and ACK, Raft vote and pre-vote answers, ring hop ACK)",
    },
    Column {
        name: "msgs_leader",
        definition: "category *leader* (bully COORDINATOR, ring ELECTED)",
    },
    Column {
        name: "msgs_heartbeat",
        definition: "category *heartbeat* (heartbeats and their acknowledgements, Raft APPEND_ENTRIES/APPEND_RESP) sent in the same window; not part of `msgs_election`",
    },
    Column {
        name: "msgs_workload",
        definition: "workload messages over the whole trial (writes, and under majority commit acknowledgement requests and acknowledgements); never part of `msgs_election` or `msgs_total`",
    },
    Column {
        name: "faults_skipped",
        definition: "fault actions of the scenario that did not apply: a selector found no node when the action fired (no leader to crash or to hand over, nothing crashed to recover), no quorum leader appeared within `fault_wait_ms` (then every fault counts), or the trial ended before the action's instant; for Raft, a node `raft.lagging` lists was the quorum leader at the fault instant, where a lag has no effect (counted once, with that reason in the trial's fault log). Anything above 0 means the trial did not undergo the scenario as described; its other columns do not measure that scenario, and `summary.csv` leaves it out of every statistic",
    },
    Column {
        name: "budget_exceeded",
        definition: "`true` if the trial used up its work budget (`work_budget`: events processed plus messages sent, by default 100000 × `nodes`, at most 20 million) and was stopped there. Such a trial was cut short: it never counts as converged (`leader`, `elect_ms` empty), its other metrics cover it up to the stop, and `summary.csv` leaves it out of every statistic. `false` for every trial of the default sweep",
    },
    Column {
        name: "end_ms",
        definition: "when the trial ended: `horizon_ms`, or earlier once every fault has fired (a `stale_connection` counts from its end) and one quorum leader has led, past the last fault, for the verdict's hold span (ten times `detect_timeout_ms + detect_jitter_ms`) and for `settle_ms` (and no deposed leader is still writing under `leader.stop_lag_ms`), or the instant the work budget ran out (`budget_exceeded`)",
    },
    Column {
        name: "outcome",
        definition: "the verdict on liveness after the last fault; the first of these that holds (defined once in `crates/sim/src/observer.rs`). **Settled** means that some quorum leadership lasted the **hold span** — ten of the protocol's longest election timeouts (`detect_timeout_ms + detect_jitter_ms`), derived from the timing — past the later of its start and the end of the last fault (the *calm*); the first one that did decides the verdict, so no observation window (`settle_ms`, `horizon_ms`) changes it. `minority-only`: no live member is quorum-connected at the end (no quorum leader is possible: none is the correct answer); `stable`: settled by the quorum leader at the reference instant, which never lost its quorum before (it was the quorum leader at every instant, or nobody was while it was paused); `recovered-after`: settled otherwise (quorum leadership moved, lapsed and came back, or in `cold-start` was first won, and then held the span); `livelock`: not settled, and some quorum leadership began after the calm (leadership kept forming and breaking: leader ping-pong, endless disruptive elections); `no-leader`: not settled, and no quorum leadership began after the calm, although one was possible. `livelock` and `no-leader` are liveness failures",
    },
    Column {
        name: "recovered_timeouts",
        definition: "with `outcome = recovered-after`: the time from the last fault that fired at or before the deciding quorum leadership (the first to hold the hold span) began (or the reference instant) to that beginning, in election timeouts (`detect_timeout_ms`), rounded up; empty otherwise",
    },
    Column {
        name: "msgs_steady",
        definition: "messages sent in the **steady window** (every category; never the workload): from the last instant before `t0` at which every quorum-connected member came to follow one quorum leader, to `t0` — no fault has fired and no election runs, so this is the protocol's steady cost (heartbeats, a lease's renewals and polls). Empty when `t0` came before such an instant (`cold-start`, or a fault before the boot election settled)",
    },
    Column {
        name: "steady_ms",
        definition: "the length of that steady window; empty with it",
    },
];

/// The leading columns of `trials.csv`, before the varied parameters.
pub const TRIAL_KEY_COLUMNS: [&str; 6] = names(TRIAL_KEY_DEFS);

/// The metric columns of `trials.csv`, after the varied parameters.
pub const TRIAL_METRIC_COLUMNS: [&str; 36] = names(TRIAL_METRIC_DEFS);

const fn names<const N: usize>(defs: [Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = defs[i].name;
        i += 1;
    }
    out
}

/// The `trials.csv` column table of `results/README.md`, generated from the definitions.
pub fn trial_columns_markdown() -> String {
    let mut s = String::from("| column | meaning |\n| --- | --- |\n");
    for c in &TRIAL_KEY_DEFS {
        s.push_str(&c.markdown_row());
    }
    s.push_str(&format!("| *varied parameters* | {VARIED_PARAMETERS} |\n"));
    for c in &TRIAL_METRIC_DEFS {
        s.push_str(&c.markdown_row());
    }
    s
}
