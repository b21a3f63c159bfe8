//! `election-bench tune`: the timeout advisor. Shorter timeouts fail over faster; too short,
//! and a healthy cluster holds elections nobody needed after a GC pause, a disk stall or a
//! latency spike. `tune` measures both sides of that trade on the same simulated network and
//! nodes, under the same noise, and reports the settings that are not beaten on both.
//!
//! # What a point costs and measures
//!
//! A **point** is one protocol spec at one timing: a timeout `T` and a ratio `k` (the timeout
//! over the period of the leader's heartbeat or the holder's renewal), turned into the
//! protocol's own parameters by [`point_params`]:
//!
//! | family | period | timeout |
//! |---|---|---|
//! | raft | `heartbeat_ms = T/k` | `raft.timeout_ms = T-2T` (drawn per re-arm, as etcd and hashicorp/raft randomise in `[T, 2T)`) |
//! | bully, ring | `heartbeat_ms = T/k` | `detect_timeout_ms = T`, `detect_jitter_ms = T` (the same `[T, 2T]` window) |
//! | lease | `lease.retry_ms = T/k` | `lease.duration_ms = T`, `lease.renew_deadline_ms = 2T/3` (client-go's 15 : 10 ratio) |
//!
//! Every family also gets `detect_timeout_ms = T` and `detect_jitter_ms = T`, which the
//! observer's verdicts count election timeouts in, and `fault_at_ms = max(1 s, 10 T)`
//! ([`fault_at`]) and a crash trial's `horizon_ms` 26 timeouts and 10 s past it ([`horizon`]):
//! the crash, or the steady window, comes after the cold start's election,
//! whatever the timeout (a window opening mid-election would count that election as false; the
//! `unsettled_starts` column counts windows that opened without a quorum leader anyway). Each point is run twice over, under the same
//! noise (the `noise.*` parameters; `noise.profile = busy` unless the caller sets it):
//!
//! * **false elections**: `steady-noise` trials, each one hour of a healthy cluster (`steady_ms`),
//!   one per seed. Every entry into the leader role in that hour (`leader_changes`) is an
//!   election nobody needed. The rate per hour is their sum over the hours run, with the exact
//!   (Garwood) 95 % Poisson interval; the time without a leader they cost is reported per hour
//!   too.
//! * **failover**: `leader-crash` trials under the same noise: p50, p95 and p99 of
//!   `failover_ms` (the crash to the first quorum leader after it), with the distribution-free
//!   95 % interval of the p99. A trial that never regained a leader counts as infinitely slow.
//!
//! Trials that ran out of work budget or whose fault found no leader to crash are not
//! measurements; they are counted in their own columns and a point with any is left off the
//! frontier.
//!
//! # The search
//!
//! Deterministic, so that the same command gives the same bytes on every machine: its budget is
//! simulated work (hours per point, trials per point, rounds), never wall-clock time.
//!
//! 1. **Coarse**: a grid of `T` log-spaced over `--timeouts LO-HI` (9 values) times the ratios
//!    (`--ratios`, 3, 5 and 10 by default).
//! 2. **Refine**, `--rounds` times: around every point on the current frontier, the timeouts
//!    half a grid step above and below (a quarter in the second round, and so on).
//! 3. **Confirm**: a rate of at most one false election a day cannot be shown in a few hours.
//!    The fastest frontier point that meets both limits on its estimates gets more hours,
//!    doubling, until its 95 % upper bound meets the limit, its estimate no longer does, or it
//!    reaches `--max-hours`; then the next fastest (a point that failed may have let a slower
//!    one onto the frontier), stopping at the first that meets, within [`CONFIRM_BUDGET`] ×
//!    `--max-hours` steady hours per protocol. When that budget runs out before the
//!    recommendation is confirmed, the page's list of what the budget could not show says so.
//! 4. **Bisect**, up to `--rounds` times, only when confirmation left no point that meets or
//!    likely meets the limits: the grid may have stepped over the answer, between the largest
//!    timeout fast enough but too noisy and the smallest larger one quiet enough (e.g. 889 and
//!    1580 ms). Their geometric middle is evaluated at every ratio, then confirmed as above
//!    within the same budget.
//!
//! # Real systems' rules
//!
//! The search runs each protocol spec as given (`raft`: this workbench's rules). A Raft point
//! maps onto etcd, hashicorp/raft and Consul ([`mapping`]), whose election rules differ from
//! ours in ways that move failover: etcd draws its randomized timeout once per term and checks
//! its quorum once per election timeout; a hashicorp/raft follower does not reset its timer
//! on heartbeats but wakes every `[T, 2T)` and campaigns only after `T` without contact, and
//! its nodes refuse votes while they know a leader. So each system names its **rule set**
//! ([`mapping::Mapping::rule_set`]: [`mapping::ETCD_RULES`], [`mapping::HASHICORP_RULES`], [`mapping::CONSUL_RULES`]),
//! and after the search the advised point (the recommendation, or the closest point) is run
//! once more under each distinct rule set ([`SystemCheck`], phase `rule-set` in `points.csv`):
//! at the timing the system's own settings realise ([`mapping::Mapping::runs_at`]: etcd's
//! whole ticks, hashicorp/raft's heartbeat at a tenth of its timeout, Consul's whole
//! multiplier), on the same steady-noise seeds as the advised point ran (its base and
//! confirmed hours) and the same crash trials, so the difference is the system's rules and
//! settings. The page
//! reports each system's predicted failover and false elections from that run, next to the
//! tuned spec's.
//!
//! Why not a search per system: a full search costs as much as the protocol's own (tune takes
//! 3 to 5 minutes on 2 cores and CI reruns it), and the question a reader asks of a system is
//! "what will these settings do under its rules", which one evaluation on common seeds
//! answers. The frontier and the recommendation remain the tuned spec's: tune
//! `raft+pre_vote+check_quorum+follower=hashicorp` (or any rule set) as a protocol of its own
//! to search a system's frontier.
//!
//! # Is my disk good enough?
//!
//! After the search, the advised point (the recommendation, else the closest) runs
//! `--disk-hours` steady-noise hours ([`DISK_HOURS`] by default; 0 skips it) on every disk
//! preset of [`crate::disk::DISKS`] ([`disk_curve`]): the preset's `node.fsync_ms` replaces
//! the run's, the seeds are the same for every preset, and unless `--set` names a workload
//! the cluster writes ([`DISK_WORKLOAD`]: every 100 ms, committed by a majority, so the leader
//! and its followers make each entry durable). Without writes a healthy Raft cluster never
//! touches its disk and the disk could cause no election; with them a node waiting for its
//! disk handles nothing else, and a slow write delays a heartbeat like a pause. The page
//! plots false elections per day against each preset's fsync p99 with etcd's 10 ms line
//! (phase `disk:NAME` in `points.csv`). The bully and the ring write nothing durable on
//! their heartbeat path (only an epoch or incarnation, at an election or a boot), and the
//! lease's members none at all; the lease's store makes every renewal durable on the same
//! disk, so the lease's curve is what the store's disk does to its renewals.
//!
//! # Your cluster: `--config`
//!
//! With `--config FILE`, every point starts from that configuration (its parameters, network
//! profiles and custom scenarios; tune's own defaults yield to its parameters, the point's
//! timing to nothing), and the protocols, size and network default to its first. When the file
//! is a profile (`election-bench profile`, [`crate::profile`]), the cluster's **current**
//! settings (its election timeout `T` and `T` / heartbeat) are evaluated first as a point of
//! their own, phase `current`, with `--max-hours` steady hours, and its false elections per
//! hour are set against the leader changes per hour the cluster was seen to make
//! ([`TuneOutcome::agreement`]): when the two 95 % intervals are disjoint ([`Agreement`]), the
//! noise model does not describe the cluster, and the page withholds that protocol's
//! recommendation and says which way the model is wrong.
//!
//! The **frontier** (per protocol) is the set of points that no other point of that protocol
//! beats on both p99 failover and false elections per hour (point estimates). A point
//! **meets** the limits when the upper ends of both 95 % intervals are within them, **likely**
//! when only the estimates are, and **fails** otherwise. The recommendation is the fastest
//! point (lowest p99) that meets them; when none does, the page says so and shows the closest
//! points instead.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::error::{usage, Error, Result};
use crate::plan::Cell;
use crate::progress::Progress;
use crate::protocol::{ProtocolKind, ProtocolSpec};
use crate::shard::Shard;

mod shard;
pub use shard::{merge, verify};

pub mod mapping;

/// Timeouts in the coarse grid.
pub const GRID_TIMEOUTS: usize = 9;
/// The confirm phase of one protocol spends at most this many times `--max-hours` steady
/// hours, over as many frontier points as it takes. Under noise with a heavy tail one rare
/// long burst gives every point with a timeout below it the same false election in the same
/// hour (the seeds are common), so several neighbours of a failed point fail alike and cost
/// little each (the doubling stops after the first batch of hours, 4, 8, 16, ..., whose
/// count puts the estimate over the limit);
/// a budget in hours, not in points, still reaches the point that holds.
pub const CONFIRM_BUDGET: u64 = 4;
/// The disk curve's default steady-noise hours per preset (`--disk-hours`).
pub const DISK_HOURS: u64 = 8;

/// The disk curve's write load when `--set` names none: a write every 100 ms, each a log
/// entry that the leader and its followers make durable (`workload.commit = majority`).
/// Without writes a healthy Raft cluster writes nothing to disk (heartbeats carry no
/// entries) and the disk could not cause an election at all.
pub const DISK_WORKLOAD: [&str; 2] = ["workload.interval_ms=100", "workload.commit=majority"];

/// One steady-noise trial is this long: one hour.
pub const HOUR_MS: f64 = 3_600_000.0;

/// The parameters `tune` fixes before the caller's `--set`s: no workload (a verdict on
/// leadership needs no writes, and each write is an event) and the `busy` noise profile.
pub const TUNE_PARAMS: [&str; 2] = ["workload.interval_ms=0", "noise.profile=busy"];

/// The parameters a point sets (a spec must not set them itself: the search would not move
/// them).
pub const TUNED_KEYS: [&str; 9] = [
    "fault_at_ms",
    "horizon_ms",
    "heartbeat_ms",
    "detect_timeout_ms",
    "detect_jitter_ms",
    "raft.timeout_ms",
    "lease.duration_ms",
    "lease.renew_deadline_ms",
    "lease.retry_ms",
];

/// What to tune and within which limits.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// The run's name (`reports/tune-<name>/`).
    pub name: String,
    /// Protocol specs.
    pub protocols: Vec<String>,
    /// Cluster size.
    pub nodes: u32,
    /// Network profile.
    pub net: String,
    /// `key=value` parameters over [`TUNE_PARAMS`] (the noise, the network, node time).
    pub set: Vec<String>,
    /// The most false elections per day the user accepts.
    pub max_false_per_day: f64,
    /// The slowest p99 failover the user accepts, ms.
    pub max_p99_ms: f64,
    /// Timeout range of the coarse grid, ms.
    pub timeouts: (f64, f64),
    /// Ratios timeout / period.
    pub ratios: Vec<f64>,
    /// Steady-noise hours per point in the coarse and refine phases.
    pub hours: u64,
    /// At most this many hours for a confirmed point.
    pub max_hours: u64,
    /// Leader-crash trials per point.
    pub crash_trials: u64,
    /// Refinement rounds.
    pub rounds: u32,
    /// Steady-noise hours per disk preset of the disk curve ([`disk_curve`]); 0 skips it.
    pub disk_hours: u64,
    /// The first seed.
    pub first_seed: u64,
    /// Worker threads (0: all cores).
    pub jobs: usize,
    /// Progress on standard error.
    pub progress: bool,
    /// The output directory.
    pub out: PathBuf,
    /// Search one slice of the protocols (round-robin), and write its searches for
    /// [`merge`] instead of the page.
    pub shard: Option<Shard>,
    /// `--config`: a configuration (a profile from `election-bench profile`, or any sweep
    /// config) whose parameters, network profiles and custom scenarios every point starts
    /// from, before tune's own settings; its path as given.
    pub config: Option<(PathBuf, crate::SweepSpec)>,
}

impl TuneOptions {
    /// The defaults for `name`: raft, bully, ring and lease at 5 nodes on `lan`, at most one
    /// false election a day and a p99 failover under 2 s.
    pub fn defaults(name: &str) -> TuneOptions {
        TuneOptions {
            name: name.to_string(),
            protocols: ["raft", "bully", "ring", "lease"]
                .map(String::from)
                .to_vec(),
            nodes: 5,
            net: "lan".into(),
            set: Vec::new(),
            max_false_per_day: 1.0,
            max_p99_ms: 2000.0,
            timeouts: (50.0, 5000.0),
            ratios: vec![3.0, 5.0, 10.0],
            hours: 4,
            max_hours: 96,
            crash_trials: 1000,
            rounds: 2,
            disk_hours: DISK_HOURS,
            first_seed: 1,
            jobs: 0,
            progress: true,
            out: PathBuf::from(format!("reports/tune-{name}")),
            shard: None,
            config: None,
        }
    }

    /// The profile `--config` came with (its `[profile]` table), if any.
    pub fn profile(&self) -> Option<&crate::config::ProfileSource> {
        self.config.as_ref().and_then(|(_, c)| c.profile.as_ref())
    }

    /// The point at the profiled cluster's current settings: its election timeout and
    /// election timeout / heartbeat ratio.
    pub fn current(&self) -> Option<(f64, f64)> {
        self.profile().map(|p| {
            (
                p.election_timeout_ms,
                p.election_timeout_ms / p.heartbeat_ms,
            )
        })
    }

    /// The parameters every point runs with: [`TUNE_PARAMS`] that `set` does not override,
    /// then `set`.
    pub fn fixed_params(&self) -> Vec<String> {
        // A --config's own parameters (a profile's `noise.profile = none`) win over tune's
        // defaults too; they stay in the config, under the `set`.
        let key = crate::config::assignment_key;
        let defaults: Vec<&str> = TUNE_PARAMS
            .iter()
            .copied()
            .filter(|d| {
                !self
                    .config
                    .as_ref()
                    .is_some_and(|(_, c)| c.params.iter().any(|(k, _)| k == key(d)))
            })
            .collect();
        crate::config::over_defaults(&defaults, &self.set)
    }

    /// The false-election limit per hour.
    pub fn max_false_per_hour(&self) -> f64 {
        self.max_false_per_day / 24.0
    }

    /// Check every option; the error names the bad one and its value.
    pub fn validate(&self) -> Result<()> {
        let (lo, hi) = self.timeouts;
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo && hi <= 1e9) {
            return usage!("--timeouts {lo}-{hi}: expected LO-HI ms with 0 < LO <= HI <= 1e9");
        }
        if self.ratios.is_empty() {
            return usage!("--ratios: give at least one ratio");
        }
        for &k in &self.ratios {
            if !(k.is_finite() && (2.0..=1000.0).contains(&k)) {
                return usage!(
                    "--ratios {k}: a timeout / period ratio must be in [2, 1000] (below 2 a leader's \
                     period reaches its own timeout; a lease needs renew_deadline (2/3) > 1.2 x retry)"
                );
            }
        }
        if !(self.max_false_per_day.is_finite() && self.max_false_per_day > 0.0) {
            return usage!(
                "--max-false-per-day {}: expected a rate > 0 (a rate of 0 can never be shown by a finite run)",
                self.max_false_per_day
            );
        }
        if !(self.max_p99_ms.is_finite() && self.max_p99_ms > 0.0) {
            return usage!(
                "--max-p99-ms {}: expected milliseconds > 0",
                self.max_p99_ms
            );
        }
        if self.hours == 0 || self.hours > 100_000 {
            return usage!("--hours {}: expected 1 to 100000", self.hours);
        }
        if self.max_hours < self.hours || self.max_hours > 100_000 {
            return usage!(
                "--max-hours {}: expected at least --hours ({}) and at most 100000",
                self.max_hours,
                self.hours
            );
        }
        if self.crash_trials < 2 || self.crash_trials > 1_000_000 {
            return usage!(
                "--crash-trials {}: expected 2 to 1000000",
                self.crash_trials
            );
        }
        if self.disk_hours > 100_000 {
            return usage!("--disk-hours {}: expected 0 to 100000", self.disk_hours);
        }
        if self.rounds > 8 {
            return usage!("--rounds {}: expected 0 to 8", self.rounds);
        }
        if self.nodes < 2 {
            return usage!("--nodes {}: a failover needs at least 2 nodes", self.nodes);
        }
        if let Some(s) = self.shard.filter(|s| s.n as usize > self.protocols.len()) {
            return usage!(
                "--shard {s}: tune shards by protocol, and {} protocol(s) make at most {} shard(s)",
                self.protocols.len(),
                self.protocols.len()
            );
        }
        if let Some((path, c)) = &self.config {
            if let Some((k, v)) = c.params.iter().find(|(_, v)| v.len() > 1) {
                return usage!(
                    "--config {}: parameter {k} varies ({}); tune runs every point with one value per parameter",
                    path.display(),
                    v.join(", ")
                );
            }
        }
        if let Some((t, k)) = self.current() {
            if !(t.is_finite() && t > 0.0 && (2.0..=1000.0).contains(&k)) {
                return usage!(
                    "--config: the profile's current election timeout {t} ms and heartbeat ratio {k} are not a point tune can run (ratio in [2, 1000])"
                );
            }
        }
        Ok(())
    }
}

/// One evaluated point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The protocol spec.
    pub protocol: String,
    /// The family.
    pub kind: ProtocolKind,
    /// Timeout `T`, ms.
    pub timeout_ms: f64,
    /// Ratio `k` = timeout / period.
    pub ratio: f64,
    /// The phase that added it: `coarse`, `refine-1`, ...
    pub phase: String,
    /// Steady-noise hours run (measured ones: without budget-exceeded trials).
    pub hours: f64,
    /// Entries into the leader role over those hours.
    pub false_elections: u64,
    /// Elections started over those hours (attempts, including those that changed nothing).
    pub elections_started: u64,
    /// Time without a quorum leader over those hours, ms.
    pub leaderless_ms: f64,
    /// Leader-crash trials measured.
    pub crash_trials: u64,
    /// Their `failover_ms`, ascending; a trial that never regained a leader is `+inf`.
    pub failover_ms: Vec<f64>,
    /// Trials (steady or crash) stopped by the work budget.
    pub budget_exceeded: u64,
    /// Crash trials whose fault found no leader.
    pub faults_skipped: u64,
    /// Steady-noise trials whose window opened with no quorum leader (the noise kept the
    /// cluster from settling even before it): counted in, and said.
    pub unsettled_starts: u64,
    /// Steady-noise trials run, budget-exceeded ones included: seeds `first_seed..` in order
    /// (a confirmed point's extra hours continue the base hours' seeds). With
    /// [`Point::crash_runs`] it is what a tune shard's merge runs again to check a point.
    pub steady_runs: u64,
    /// Leader-crash trials run, whatever their outcome: seeds `first_seed..` in order.
    pub crash_runs: u64,
}

impl Point {
    /// A point at timeout `timeout_ms` and ratio `ratio` with nothing measured yet: every
    /// search phase, rule-set check and disk preset starts its points here.
    fn unmeasured(
        protocol: &str,
        kind: ProtocolKind,
        timeout_ms: f64,
        ratio: f64,
        phase: &str,
    ) -> Point {
        Point {
            protocol: protocol.to_string(),
            kind,
            timeout_ms,
            ratio,
            phase: phase.to_string(),
            hours: 0.0,
            false_elections: 0,
            elections_started: 0,
            leaderless_ms: 0.0,
            crash_trials: 0,
            failover_ms: Vec::new(),
            budget_exceeded: 0,
            faults_skipped: 0,
            unsettled_starts: 0,
            steady_runs: 0,
            crash_runs: 0,
        }
    }
}

/// Whether a point meets the limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Both 95 % upper bounds are within the limits.
    Meets,
    /// Both estimates are, not both upper bounds.
    Likely,
    /// An estimate is over a limit.
    Fails,
}

impl Verdict {
    /// As the CSV and the page print it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Meets => "meets",
            Verdict::Likely => "likely",
            Verdict::Fails => "fails",
        }
    }
}

pub use crate::stats::poisson_ci;

/// The distribution-free 95 % interval of the `q`-quantile of an ascending sample, and whether
/// its upper end is the sample's largest value ([`crate::stats::quantile_ci`]).
pub fn quantile_ci(sorted: &[f64], q: f64) -> Option<(f64, f64, bool)> {
    crate::stats::quantile_ci(sorted, q, crate::stats::Z95)
}

/// The `q`-quantile of an ascending sample that may hold `+inf` (linear interpolation between
/// closest ranks; infinite as soon as an infinite value is involved).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    if sorted[hi].is_infinite() && h > lo as f64 || sorted[lo].is_infinite() {
        return Some(f64::INFINITY);
    }
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

impl Point {
    /// False elections per hour (`None` before any hour was measured).
    pub fn false_per_hour(&self) -> Option<f64> {
        (self.hours > 0.0).then(|| self.false_elections as f64 / self.hours)
    }

    /// The 95 % interval of the false elections per hour.
    pub fn false_per_hour_ci(&self) -> Option<(f64, f64)> {
        (self.hours > 0.0).then(|| {
            let (lo, hi) = poisson_ci(self.false_elections);
            (lo / self.hours, hi / self.hours)
        })
    }

    /// The `q`-quantile of the failover times.
    pub fn failover(&self, q: f64) -> Option<f64> {
        quantile(&self.failover_ms, q)
    }

    /// The 95 % interval of the p99 failover, and whether it is bounded above by the sample.
    pub fn p99_ci(&self) -> Option<(f64, f64, bool)> {
        quantile_ci(&self.failover_ms, 0.99)
    }

    /// Trials that never regained a leader.
    pub fn never_recovered(&self) -> u64 {
        self.failover_ms.iter().filter(|x| x.is_infinite()).count() as u64
    }

    /// Is every trial of the point a measurement (no budget stop, no skipped fault)?
    pub fn measured(&self) -> bool {
        self.budget_exceeded == 0
            && self.faults_skipped == 0
            && self.hours > 0.0
            && !self.failover_ms.is_empty()
    }

    /// The point against the limits (see the module docs).
    pub fn verdict(&self, max_false_per_hour: f64, max_p99_ms: f64) -> Verdict {
        let (Some(fe), Some((_, fe_hi)), Some(p99), Some((_, p99_hi, open))) = (
            self.false_per_hour(),
            self.false_per_hour_ci(),
            self.failover(0.99),
            self.p99_ci(),
        ) else {
            return Verdict::Fails;
        };
        if !self.measured() || fe > max_false_per_hour || p99 > max_p99_ms {
            Verdict::Fails
        } else if fe_hi <= max_false_per_hour && p99_hi <= max_p99_ms && !open {
            Verdict::Meets
        } else {
            Verdict::Likely
        }
    }

    /// How far the point is from meeting both limits: the larger of its estimates over its
    /// limits (at most 1 when both are met on the estimates).
    pub fn distance(&self, max_false_per_hour: f64, max_p99_ms: f64) -> f64 {
        let fe = self.false_per_hour().unwrap_or(f64::INFINITY) / max_false_per_hour;
        let p = self.failover(0.99).unwrap_or(f64::INFINITY) / max_p99_ms;
        fe.max(p)
    }
}

/// The indices of the points no other point beats on both p99 failover and false elections
/// per hour (point estimates; a point equal to another on both is kept with it), among
/// `points` that are [measured](Point::measured); ordered by p99, ascending.
pub fn frontier(points: &[Point]) -> Vec<usize> {
    let key = |p: &Point| {
        (
            p.failover(0.99).unwrap_or(f64::INFINITY),
            p.false_per_hour().unwrap_or(f64::INFINITY),
        )
    };
    let mut out: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].measured())
        .filter(|&i| {
            let (a99, afe) = key(&points[i]);
            !points.iter().enumerate().any(|(j, q)| {
                let (b99, bfe) = key(q);
                j != i && q.measured() && b99 <= a99 && bfe <= afe && (b99 < a99 || bfe < afe)
            })
        })
        .collect();
    out.sort_by(|&a, &b| {
        let (ka, kb) = (key(&points[a]), key(&points[b]));
        ka.0.total_cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(points[a].timeout_ms.total_cmp(&points[b].timeout_ms))
            .then(points[a].ratio.total_cmp(&points[b].ratio))
    });
    out
}

/// What `tune` concluded for one protocol.
#[derive(Clone, Debug)]
pub struct Advice {
    /// The protocol spec.
    pub protocol: String,
    /// The family.
    pub kind: ProtocolKind,
    /// Every point evaluated, in evaluation order.
    pub points: Vec<Point>,
    /// Indices of the frontier, by p99.
    pub frontier: Vec<usize>,
    /// The recommended point, if one meets or likely meets the limits.
    pub chosen: Option<usize>,
    /// The closest points when none does (by [`Point::distance`]), at most three.
    pub closest: Vec<usize>,
    /// The fastest point that meets the false-election limit (on its upper bound), and the
    /// point with the fewest false elections that meets the p99 limit: the two sides of a
    /// contradiction.
    pub best_each: (Option<usize>, Option<usize>),
    /// Trials the protocol's search ran.
    pub trials: u64,
    /// When the confirm phase spent its budget before the recommendation was shown with
    /// confidence: the page's statement of it.
    pub unconfirmed: Option<String>,
    /// The point at the profiled cluster's current settings (`--config` with a profile).
    pub current: Option<usize>,
    /// The advised point (the recommendation, or the closest point when there is none)
    /// evaluated again under each real system's rule set ([`mapping::Mapping::rule_set`]) at
    /// the timing its settings realise ([`mapping::Mapping::runs_at`]), in the order the
    /// family's mappings name them, one per distinct rule set.
    pub systems: Vec<SystemCheck>,
    /// The advised point's steady-noise hours on each disk preset ([`disk_curve`]), in
    /// [`crate::disk::DISKS`] order; empty with `--disk-hours 0` or no advised point.
    pub disks: Vec<DiskCheck>,
}

/// The advised point of a protocol on one disk preset (`node.disk`), phase `disk:NAME`.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskCheck {
    /// The preset.
    pub disk: &'static crate::disk::Disk,
    /// The advised point's timing with that disk and [`DISK_WORKLOAD`]: steady hours only.
    pub point: Point,
}

/// The advised point of a protocol run under one real system's rules (see the module docs,
/// "Real systems' rules").
#[derive(Clone, Debug, PartialEq)]
pub struct SystemCheck {
    /// The spec of the system's rule set (`raft+pre_vote+check_quorum+follower=hashicorp`).
    pub spec: String,
    /// The system's settings for the advised point ([`mapping::Mapping::runs_at`]: the
    /// nearest timing the system accepts) under that spec (phase `rule-set`), on the seeds the
    /// advised point ran.
    pub point: Point,
}

impl Advice {
    /// The point the page advises: the recommendation, or the closest point when none meets
    /// the limits.
    pub fn advised(&self) -> Option<usize> {
        self.chosen.or(self.closest.first().copied())
    }

    /// The evaluation of the advised point under `spec`, a system's rule set.
    pub fn system(&self, spec: &str) -> Option<&SystemCheck> {
        self.systems.iter().find(|c| c.spec == spec)
    }
}

/// The profiled cluster's observed leader changes against the simulated false elections at
/// its current settings: do the two 95 % intervals overlap?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The intervals overlap: the measurements cannot tell the model from the cluster.
    Consistent,
    /// The simulated interval lies wholly below the observed one: the cluster changes leader
    /// more often than the model explains (something the profile does not measure — GC
    /// pauses, CPU starvation, partitions, restarts — causes elections).
    ModelTooQuiet,
    /// The simulated interval lies wholly above the observed one: the model holds more
    /// elections than the cluster (its noise or distributions are heavier than the cluster's).
    ModelTooNoisy,
}

impl Agreement {
    /// As the page and the manifest name it.
    pub fn name(self) -> &'static str {
        match self {
            Agreement::Consistent => "consistent",
            Agreement::ModelTooQuiet => "model-too-quiet",
            Agreement::ModelTooNoisy => "model-too-noisy",
        }
    }

    /// Compare the simulated `(lo, hi)` interval with the observed one.
    pub fn of(sim: (f64, f64), observed: (f64, f64)) -> Agreement {
        if sim.1 < observed.0 {
            Agreement::ModelTooQuiet
        } else if sim.0 > observed.1 {
            Agreement::ModelTooNoisy
        } else {
            Agreement::Consistent
        }
    }
}

/// The outcome of a tune run.
#[derive(Clone, Debug)]
pub struct TuneOutcome {
    /// The options it ran with.
    pub options: TuneOptions,
    /// Per protocol, in the order given.
    pub advice: Vec<Advice>,
    /// Trials run.
    pub trials: u64,
    /// Statements about the budget and the limits (too few hours to show the limit, p99
    /// intervals open above), for the page.
    pub warnings: Vec<String>,
    /// The noise every point ran under, as resolved from the parameters ([`describe_noise`]).
    pub noise: String,
    /// Every measured (`empirical:`) distribution the points ran with, as the manifest
    /// records it ([`crate::empirical::describe`]), by parameter.
    pub empirical: Vec<(String, Value)>,
}

impl TuneOutcome {
    /// The observed leader changes per hour with their 95 % interval, from `--config`'s
    /// profile, when it observed a span.
    pub fn observed(&self) -> Option<(f64, f64, f64)> {
        self.options.profile()?.observed_per_hour()
    }

    /// For a protocol's advice: the simulated false elections per hour at the current
    /// settings and their interval, and how they compare with the observed rate.
    pub fn agreement(&self, a: &Advice) -> Option<(f64, f64, f64, Agreement)> {
        let (_, olo, ohi) = self.observed()?;
        let p = &a.points[a.current?];
        let fe = p.false_per_hour()?;
        let (lo, hi) = p.false_per_hour_ci()?;
        Some((fe, lo, hi, Agreement::of((lo, hi), (olo, ohi))))
    }
}

/// The measured distributions among a cell's parameters: (parameter, manifest entry).
fn empirical_of(r: &crate::params::Resolved) -> Vec<(String, Value)> {
    use election_sim::Latency;
    let links: Vec<String> = (0..r.net.links.len())
        .map(|i| format!("net.links[{i}].latency"))
        .collect();
    let mut v: Vec<(&str, Option<&Latency>)> = vec![("net.latency", Some(&r.net.latency))];
    v.extend(
        links
            .iter()
            .zip(&r.net.links)
            .map(|(k, l)| (k.as_str(), Some(&l.latency))),
    );
    v.extend([
        ("node.fsync_ms", r.node.fsync.as_ref()),
        ("node.cpu_us", r.node.cpu.as_ref()),
    ]);
    if let Some(b) = &r.noise.pause {
        v.push(("noise.pause_ms", Some(&b.ms)));
    }
    if let Some(b) = &r.noise.stall {
        v.push(("noise.stall_ms", Some(&b.ms)));
    }
    if let Some(sp) = &r.noise.spike {
        v.push(("noise.spike_ms", Some(&sp.extra_ms)));
        v.push(("noise.spike_len_ms", Some(&sp.len_ms)));
    }
    v.into_iter()
        .filter_map(|(k, l)| match l {
            // node.cpu_us is held in ms; the manifest speaks the file's unit, so rescale.
            Some(Latency::Empirical(e)) if k == "node.cpu_us" => {
                Some((k.to_string(), crate::empirical::describe(&e.scaled(1e3))))
            }
            Some(Latency::Empirical(e)) => Some((k.to_string(), crate::empirical::describe(e))),
            _ => None,
        })
        .collect()
}

/// One line naming a noise model's rates and distributions (`latency` syntax, as
/// `election-bench params` documents it), as the trials ran it.
pub fn describe_noise(n: &election_sim::Noise) -> String {
    use crate::net::format_latency as d;
    let mut parts = Vec::new();
    if let Some(b) = n.pause.as_ref().filter(|b| b.per_hour > 0.0) {
        parts.push(format!(
            "GC pauses {} an hour per node, each `{}` ms long",
            b.per_hour,
            d(&b.ms)
        ));
    }
    if let Some(b) = n.stall.as_ref().filter(|b| b.per_hour > 0.0) {
        parts.push(format!(
            "disk stalls {} an hour per node, each `{}` ms long",
            b.per_hour,
            d(&b.ms)
        ));
    }
    if let Some(sp) = n.spike.as_ref().filter(|sp| sp.per_hour > 0.0) {
        parts.push(format!(
            "latency spikes {} an hour per node, `{}` ms more on every link of the node for `{}` ms",
            sp.per_hour,
            d(&sp.extra_ms),
            d(&sp.len_ms)
        ));
    }
    if parts.is_empty() {
        "no noise".into()
    } else {
        parts.join("; ")
    }
}

/// Round to three significant digits (grid values read as settings): the double nearest the
/// rounded decimal, so it prints as that decimal (`13.7`, never `13.700000000000001`).
pub fn sig3(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    format!("{v:.2e}").parse().unwrap_or(v)
}

/// The period (heartbeat, lease retry) of the point `(t, k)`, as set: `t / k` to three
/// significant digits.
pub fn period(t: f64, k: f64) -> f64 {
    sig3(t / k)
}

/// A parameter value as the runner's canonical form prints it.
pub(crate) fn num(v: f64) -> String {
    format!("{}", sig3(v))
}

/// The parameters a point at timeout `t` and ratio `k` sets for a family (see the module docs):
/// the shared failure detector, then the family's own knobs ([`crate::protocol::Family`]).
pub fn point_params(kind: ProtocolKind, t: f64, k: f64) -> Vec<(&'static str, String)> {
    let mut v = vec![("detect_timeout_ms", num(t)), ("detect_jitter_ms", num(t))];
    v.extend((kind.family().tune_knobs)(t, period(t, k)));
    v
}

/// The coarse grid's timeouts: [`GRID_TIMEOUTS`] values log-spaced over `lo..=hi`, rounded to
/// three significant digits.
pub fn grid(lo: f64, hi: f64) -> Vec<f64> {
    if hi <= lo {
        return vec![sig3(lo)];
    }
    let m = GRID_TIMEOUTS;
    let mut v: Vec<f64> = (0..m)
        .map(|i| sig3(lo * (hi / lo).powf(i as f64 / (m - 1) as f64)))
        .collect();
    v.dedup();
    v
}

/// When a point's trials fire their fault (the crash) or open their steady window: 10 timeouts
/// after the cold start, at least 1 s, so that the first election is over whatever the
/// timeout (it would otherwise count as a false election, or leave no leader to crash).
pub fn fault_at(t: f64) -> String {
    num((10.0 * t).max(1000.0))
}

/// A crash trial's horizon at timeout `t`: the fault instant plus its jitter (one longest
/// timeout, `2t`), the verdict's hold span (ten longest timeouts, `20t`), and 4 timeouts and
/// 10 s more, room for any failover that happens at all (steady windows set their own,
/// `steady_ms`).
pub fn horizon(t: f64) -> String {
    num((10.0 * t).max(1000.0) + 26.0 * t + 10_000.0)
}

/// One cell of `spec` at the point `(t, k)`, for `scenario` (`steady-noise` or
/// `leader-crash`), as the search runs it.
pub fn point_cell(
    o: &TuneOptions,
    spec: &ProtocolSpec,
    t: f64,
    k: f64,
    scenario: &str,
) -> Result<Cell> {
    point_cell_with(o, spec, t, k, scenario, o.fixed_params())
}

/// The parameters of the disk curve's point on `disk`: the run's fixed parameters with the
/// disk's `node.fsync_ms` in place of any `node.fsync_ms` or `node.disk` given, and
/// [`DISK_WORKLOAD`] in place of tune's `workload.interval_ms = 0` unless `--set` names a
/// workload.
pub fn disk_params(o: &TuneOptions, disk: &crate::disk::Disk) -> Vec<String> {
    let key = crate::config::assignment_key;
    let user_workload = o.set.iter().any(|a| key(a).starts_with("workload."));
    let mut all: Vec<String> = o
        .fixed_params()
        .into_iter()
        .filter(|a| !matches!(key(a), "node.fsync_ms" | "node.disk"))
        .filter(|a| user_workload || !key(a).starts_with("workload."))
        .collect();
    if !user_workload {
        all.extend(DISK_WORKLOAD.map(String::from));
    }
    all.push(format!("node.fsync_ms={}", disk.fsync()));
    all
}

/// [`point_cell`] over the parameters `fixed` instead of the run's.
fn point_cell_with(
    o: &TuneOptions,
    spec: &ProtocolSpec,
    t: f64,
    k: f64,
    scenario: &str,
    fixed: Vec<String>,
) -> Result<Cell> {
    let mut sweep = crate::SweepSpec {
        name: Some(format!("tune-{}", o.name)),
        ..o.config
            .as_ref()
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }
    .one_cell(&spec.spec, o.nodes, scenario, &o.net);
    sweep.first_seed = None;
    let mut all = fixed;
    all.extend(
        point_params(spec.kind, t, k)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}")),
    );
    all.push(format!("fault_at_ms={}", fault_at(t)));
    all.push(format!("horizon_ms={}", horizon(t)));
    sweep.set_all(&all)?;
    sweep
        .plan()?
        .runnable_cell(|_, why| format!("{} cannot run {scenario}: {why}", spec.spec))
}

/// A unit of work: one trial of one point.
#[derive(Clone, Copy)]
enum Job {
    Steady(usize, u64),
    Crash(usize, u64),
}

/// Evaluate `jobs` over the points' cells in parallel and fold the results into the points in
/// job order (so the sums are the same whatever the thread count).
fn evaluate(
    cells: &[(Cell, Cell)],
    points: &mut [Point],
    jobs: &[Job],
    progress: &mut Progress,
) -> Result<()> {
    const CHUNK: usize = 256;
    for chunk in jobs.chunks(CHUNK) {
        // One job per task: a point's steady hours sit side by side in `jobs` and cost
        // hundreds of times its crash trials, so rayon's default split (halves, split again
        // only when stolen) left them to one thread in sequence while the other idled
        // (1.1 x on 2 cores, against 2 x now). Results come back in job order either way.
        let rows: Vec<Result<(Job, election_sim::Metrics)>> = chunk
            .par_iter()
            .with_max_len(1)
            .map(|&job| {
                let (cell, seed) = match job {
                    Job::Steady(i, s) => (&cells[i].0, s),
                    Job::Crash(i, s) => (&cells[i].1, s),
                };
                Ok((job, cell.run(seed, false)?.report.metrics))
            })
            .collect();
        let mut hours = 0;
        for r in rows {
            let (job, m) = r?;
            match job {
                Job::Steady(i, _) => {
                    hours += 1;
                    let p = &mut points[i];
                    p.steady_runs += 1;
                    if m.budget_exceeded {
                        p.budget_exceeded += 1;
                        continue;
                    }
                    p.hours += (m.end_ms - m.reference_ms) / HOUR_MS;
                    if m.leader_at_reference.is_none() {
                        p.unsettled_starts += 1;
                    }
                    p.false_elections += u64::from(m.leader_changes);
                    p.elections_started += u64::from(m.elections_started);
                    p.leaderless_ms += m.unavailable_ms;
                }
                Job::Crash(i, _) => {
                    let p = &mut points[i];
                    p.crash_runs += 1;
                    if m.budget_exceeded {
                        p.budget_exceeded += 1;
                    } else if m.faults_skipped > 0 {
                        p.faults_skipped += 1;
                    } else {
                        p.crash_trials += 1;
                        p.failover_ms.push(m.failover_ms.unwrap_or(f64::INFINITY));
                    }
                }
            }
        }
        progress.advance(hours);
    }
    for p in points.iter_mut() {
        p.failover_ms.sort_by(f64::total_cmp);
    }
    Ok(())
}

/// Run the search for every protocol (see the module docs).
pub fn tune(o: &TuneOptions) -> Result<TuneOutcome> {
    o.validate()?;
    let specs: Vec<ProtocolSpec> = o
        .protocols
        .iter()
        .map(|s| ProtocolSpec::parse(s))
        .collect::<Result<_>>()?;
    crate::protocol::check_distinct(&specs)?;
    for s in &specs {
        if let Some(k) = TUNED_KEYS.iter().find(|k| s.options.contains_key(**k)) {
            return usage!(
                "protocol {}: tune sets {k} itself at every point; drop the option from the spec",
                s.spec
            );
        }
    }
    let key = crate::config::assignment_key;
    if let Some(s) = o.set.iter().find(|s| TUNED_KEYS.contains(&key(s))) {
        return usage!("--set {s}: tune sets {} itself at every point", key(s));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.jobs)
        .build()
        .map_err(|e| Error::Usage(format!("--jobs: cannot start the threads: {e}")))?;
    pool.install(|| tune_all(o, &specs))
}

/// The search state of one protocol.
/// The timeout to bisect when no point meets the limits: the geometric middle of the largest
/// timeout whose p99 meets `max_p99_ms` but whose false elections (estimate) exceed
/// `max_false_per_hour`, and the smallest larger one whose false elections do not, if both
/// exist and lie more than 2 % apart.
pub fn gap(points: &[Point], max_false_per_hour: f64, max_p99_ms: f64) -> Option<f64> {
    let measured = || points.iter().filter(|p| p.measured());
    let lo = measured()
        .filter(|p| {
            p.failover(0.99).is_some_and(|q| q <= max_p99_ms)
                && p.false_per_hour().is_some_and(|f| f > max_false_per_hour)
        })
        .map(|p| p.timeout_ms)
        .reduce(f64::max)?;
    let hi = measured()
        .filter(|p| {
            p.timeout_ms > lo && p.false_per_hour().is_some_and(|f| f <= max_false_per_hour)
        })
        .map(|p| p.timeout_ms)
        .reduce(f64::min)?;
    (hi / lo > 1.02).then(|| (lo * hi).sqrt())
}

/// The confirm phase's budget of steady hours for one protocol, and what it spent on which
/// points.
struct Confirm {
    budget: u64,
    spent: u64,
    confirmed: Vec<usize>,
}

struct Search<'a> {
    o: &'a TuneOptions,
    spec: &'a ProtocolSpec,
    points: Vec<Point>,
    cells: Vec<(Cell, Cell)>,
    seen: BTreeSet<(u64, u64)>,
    trials: u64,
    current: Option<usize>,
}

impl Search<'_> {
    /// Add the point `(t, k)` unless it was evaluated already.
    fn add(&mut self, t: f64, k: f64, phase: &str) -> Result<()> {
        let t = sig3(t);
        if !self.seen.insert((t.to_bits(), k.to_bits())) {
            return Ok(());
        }
        let (o, spec) = (self.o, self.spec);
        self.cells.push((
            point_cell(o, spec, t, k, "steady-noise")?,
            point_cell(o, spec, t, k, "leader-crash")?,
        ));
        self.points
            .push(Point::unmeasured(&spec.spec, spec.kind, t, k, phase));
        Ok(())
    }

    /// The base measurement of points `from..`: `hours` steady-noise hours and the crash
    /// trials, seeds from the first.
    fn run_new(&mut self, from: usize, phase: &str) -> Result<()> {
        let o = self.o;
        let mut jobs = Vec::new();
        for i in from..self.points.len() {
            jobs.extend((0..o.hours).map(|s| Job::Steady(i, o.first_seed + s)));
            jobs.extend((0..o.crash_trials).map(|s| Job::Crash(i, o.first_seed + s)));
        }
        self.run(phase, &jobs)
    }

    fn run(&mut self, phase: &str, jobs: &[Job]) -> Result<()> {
        if jobs.is_empty() {
            return Ok(());
        }
        let hours = jobs.iter().filter(|j| matches!(j, Job::Steady(..))).count() as u64;
        let mut progress = Progress::labelled(
            self.o.progress,
            "tune",
            &format!("{} {phase}", self.spec.spec),
            "steady-noise hours",
            hours,
            rayon::current_num_threads(),
        );
        evaluate(&self.cells, &mut self.points, jobs, &mut progress)?;
        progress.finish();
        self.trials += jobs.len() as u64;
        Ok(())
    }

    /// Confirm: the fastest frontier point that likely meets the limits gets more hours,
    /// doubling, until its upper bound meets the limit, its estimate no longer does, or
    /// `max_hours`; then the next (a confirmed point that fails lets a slower one onto the
    /// frontier), stopping at the first that meets, within the budget of steady hours.
    fn confirm(&mut self, c: &mut Confirm) -> Result<()> {
        let o = self.o;
        let limit_fe = o.max_false_per_hour();
        while c.spent < c.budget {
            let Some(i) = frontier(&self.points).into_iter().find(|&i| {
                // The current point already ran --max-hours, on the seeds confirming
                // would add.
                self.verdict(i) == Verdict::Likely
                    && !c.confirmed.contains(&i)
                    && Some(i) != self.current
            }) else {
                break;
            };
            c.confirmed.push(i);
            let mut next = o.first_seed + o.hours;
            let mut total = o.hours;
            while total < o.max_hours
                && c.spent < c.budget
                && self.verdict(i) == Verdict::Likely
                && self.points[i]
                    .false_per_hour_ci()
                    .is_some_and(|(_, hi)| hi > limit_fe)
            {
                let more = total.min(o.max_hours - total).min(c.budget - c.spent);
                let jobs: Vec<Job> = (0..more).map(|k| Job::Steady(i, next + k)).collect();
                next += more;
                total += more;
                c.spent += more;
                self.points[i].phase = "confirm".into();
                self.run("confirm", &jobs)?;
            }
            if self.verdict(i) == Verdict::Meets {
                break;
            }
        }
        Ok(())
    }

    fn verdict(&self, i: usize) -> Verdict {
        self.points[i].verdict(self.o.max_false_per_hour(), self.o.max_p99_ms)
    }

    /// Indices sorted by p99 failover, then timeout.
    fn by_p99(&self, mut v: Vec<usize>) -> Vec<usize> {
        let f = |i: usize| self.points[i].failover(0.99).unwrap_or(f64::INFINITY);
        v.sort_by(|&a, &b| {
            f(a).total_cmp(&f(b))
                .then(
                    self.points[a]
                        .timeout_ms
                        .total_cmp(&self.points[b].timeout_ms),
                )
                .then(self.points[a].ratio.total_cmp(&self.points[b].ratio))
        });
        v
    }

    fn advice(self) -> Advice {
        let (o, limit_fe) = (self.o, self.o.max_false_per_hour());
        let all = 0..self.points.len();
        let pick = |want: Verdict| {
            self.by_p99(all.clone().filter(|&i| self.verdict(i) == want).collect())
                .first()
                .copied()
        };
        let chosen = pick(Verdict::Meets).or_else(|| pick(Verdict::Likely));
        let mut closest = Vec::new();
        if chosen.is_none() {
            let mut v: Vec<usize> = all.clone().filter(|&i| self.points[i].measured()).collect();
            let d = |i: usize| self.points[i].distance(limit_fe, o.max_p99_ms);
            v.sort_by(|&a, &b| {
                d(a).total_cmp(&d(b)).then(
                    self.points[a]
                        .timeout_ms
                        .total_cmp(&self.points[b].timeout_ms),
                )
            });
            closest = v.into_iter().take(3).collect();
        }
        let fastest_quiet = self
            .by_p99(
                all.clone()
                    .filter(|&i| {
                        self.points[i].measured()
                            && self.points[i]
                                .false_per_hour_ci()
                                .is_some_and(|(_, hi)| hi <= limit_fe)
                    })
                    .collect(),
            )
            .first()
            .copied();
        let fe = |i: usize| self.points[i].false_per_hour().unwrap_or(f64::INFINITY);
        let quietest_fast = all
            .filter(|&i| {
                self.points[i].measured()
                    && self.points[i]
                        .failover(0.99)
                        .is_some_and(|p| p <= o.max_p99_ms)
            })
            .min_by(|&a, &b| {
                fe(a).total_cmp(&fe(b)).then(
                    self.points[a]
                        .timeout_ms
                        .total_cmp(&self.points[b].timeout_ms),
                )
            });
        Advice {
            protocol: self.spec.spec.clone(),
            kind: self.spec.kind,
            frontier: frontier(&self.points),
            chosen,
            closest,
            best_each: (fastest_quiet, quietest_fast),
            trials: self.trials,
            unconfirmed: None,
            current: self.current,
            points: self.points,
            systems: Vec::new(),
            disks: Vec::new(),
        }
    }
}

/// The rule-set specs of the systems a point of `kind` maps onto, each once, in the order the
/// mappings name them, with the timing `(timeout_ms, ratio)` the system's settings realise
/// ([`mapping::Mapping::runs_at`]), at which each is measured.
pub fn rule_sets(kind: ProtocolKind, timeout_ms: f64, ratio: f64) -> Vec<(&'static str, f64, f64)> {
    let mut v: Vec<(&'static str, f64, f64)> = Vec::new();
    for m in mapping::map(kind, timeout_ms, ratio) {
        if let Some(spec) = m.rule_set {
            if !v.iter().any(|(s, _, _)| *s == spec) {
                v.push((spec, m.runs_at.0, m.runs_at.1));
            }
        }
    }
    v
}

/// Evaluate `a`'s advised point under every rule set of the systems it maps onto: the same
/// timing, the seeds the point ran (its steady hours and its crash trials), so that a
/// difference comes from the rules (common random numbers). Returns the checks and the trials.
fn check_systems(o: &TuneOptions, a: &Advice) -> Result<(Vec<SystemCheck>, u64)> {
    let Some(i) = a.advised() else {
        return Ok((Vec::new(), 0));
    };
    let p = &a.points[i];
    let specs = rule_sets(a.kind, p.timeout_ms, p.ratio);
    if specs.is_empty() {
        return Ok((Vec::new(), 0));
    }
    // The advised point's steady seeds: the base hours, and confirmed hours after them.
    let hours = o.hours.max(p.hours.round() as u64 + p.budget_exceeded);
    let mut cells = Vec::new();
    let mut points = Vec::new();
    let mut jobs = Vec::new();
    for (j, &(spec, t, k)) in specs.iter().enumerate() {
        let spec = ProtocolSpec::parse(spec)?;
        cells.push((
            point_cell(o, &spec, t, k, "steady-noise")?,
            point_cell(o, &spec, t, k, "leader-crash")?,
        ));
        points.push(Point::unmeasured(&spec.spec, spec.kind, t, k, "rule-set"));
        jobs.extend((0..hours).map(|s| Job::Steady(j, o.first_seed + s)));
        jobs.extend((0..o.crash_trials).map(|s| Job::Crash(j, o.first_seed + s)));
    }
    let mut progress = Progress::labelled(
        o.progress,
        "tune",
        &format!("{} rule sets", a.protocol),
        "steady-noise hours",
        hours * specs.len() as u64,
        rayon::current_num_threads(),
    );
    evaluate(&cells, &mut points, &jobs, &mut progress)?;
    progress.finish();
    let checks = specs
        .iter()
        .zip(points)
        .map(|(&(spec, _, _), point)| SystemCheck {
            spec: ProtocolSpec::parse(spec).map_or_else(|_| spec.to_string(), |s| s.spec),
            point,
        })
        .collect();
    Ok((checks, jobs.len() as u64))
}

/// The disk curve: `a`'s advised point run for `--disk-hours` steady-noise hours on every
/// disk preset ([`crate::disk::DISKS`]), with [`DISK_WORKLOAD`], on the same seeds for every
/// preset (so a difference comes from the disk): false elections per day against the disk's
/// fsync p99, the question "is my disk good enough for these timeouts?". Returns the checks
/// and the trials.
fn disk_curve(o: &TuneOptions, a: &Advice) -> Result<(Vec<DiskCheck>, u64)> {
    let Some(i) = a.advised().filter(|_| o.disk_hours > 0) else {
        return Ok((Vec::new(), 0));
    };
    let p = &a.points[i];
    let spec = ProtocolSpec::parse(&a.protocol)?;
    let mut cells = Vec::new();
    let mut points = Vec::new();
    let mut jobs = Vec::new();
    for (j, disk) in crate::disk::DISKS.iter().enumerate() {
        let steady = point_cell_with(
            o,
            &spec,
            p.timeout_ms,
            p.ratio,
            "steady-noise",
            disk_params(o, disk),
        )?;
        // No crash trials: the curve is about false elections.
        cells.push((steady.clone(), steady));
        points.push(Point::unmeasured(
            &p.protocol,
            p.kind,
            p.timeout_ms,
            p.ratio,
            &format!("disk:{}", disk.name),
        ));
        jobs.extend((0..o.disk_hours).map(|s| Job::Steady(j, o.first_seed + s)));
    }
    let mut progress = Progress::labelled(
        o.progress,
        "tune",
        &format!("{} disks", a.protocol),
        "steady-noise hours",
        jobs.len() as u64,
        rayon::current_num_threads(),
    );
    evaluate(&cells, &mut points, &jobs, &mut progress)?;
    progress.finish();
    let checks = crate::disk::DISKS
        .iter()
        .zip(points)
        .map(|(disk, point)| DiskCheck { disk, point })
        .collect();
    Ok((checks, jobs.len() as u64))
}

fn tune_all(o: &TuneOptions, specs: &[ProtocolSpec]) -> Result<TuneOutcome> {
    let mut advice = Vec::new();
    let mut ran = Ran::default();
    for (i, spec) in specs.iter().enumerate() {
        if o.shard.is_some_and(|s| !s.owns(i)) {
            continue;
        }
        let (a, r) = search(o, spec)?;
        if ran.noise.is_empty() {
            ran = r;
        }
        advice.push(a);
    }
    Ok(finish(o.clone(), advice, ran))
}

/// What every point ran under, as the page and the manifest state it: the same for every
/// point of every protocol (only timing keys vary), taken from the first.
#[derive(Clone, Debug, Default)]
struct Ran {
    /// [`describe_noise`].
    noise: String,
    /// [`empirical_of`].
    empirical: Vec<(String, Value)>,
}

/// One protocol's search (the current settings, coarse, refine, confirm, bisect; see the
/// module docs): its advice, and what its points ran under.
fn search(o: &TuneOptions, spec: &ProtocolSpec) -> Result<(Advice, Ran)> {
    let limit_fe = o.max_false_per_hour();
    let timeouts = grid(o.timeouts.0, o.timeouts.1);
    let step = if timeouts.len() > 1 {
        (o.timeouts.1 / o.timeouts.0).powf(1.0 / (GRID_TIMEOUTS - 1) as f64)
    } else {
        2.0
    };
    let mut s = Search {
        o,
        spec,
        points: Vec::new(),
        cells: Vec::new(),
        seen: BTreeSet::new(),
        trials: 0,
        current: None,
    };
    // The cluster's current settings first, with the confirm phase's hours: the page
    // compares its false elections with the leader changes the cluster was seen to make.
    if let Some((t, k)) = o.current() {
        s.add(t, k, "current")?;
        s.current = Some(0);
        let mut jobs: Vec<Job> = (0..o.max_hours)
            .map(|h| Job::Steady(0, o.first_seed + h))
            .collect();
        jobs.extend((0..o.crash_trials).map(|c| Job::Crash(0, o.first_seed + c)));
        s.run("current", &jobs)?;
    }
    let coarse_from = s.points.len();
    // Coarse.
    for &t in &timeouts {
        for &k in &o.ratios {
            s.add(t, k, "coarse")?;
        }
    }
    s.run_new(coarse_from, "coarse")?;
    let ran = s
        .cells
        .first()
        .map(|(c, _)| Ran {
            noise: describe_noise(&c.resolved.noise),
            empirical: empirical_of(&c.resolved),
        })
        .unwrap_or_default();
    // Refine around the frontier, half the step each round.
    for round in 1..=o.rounds {
        let f = step.powf(0.5f64.powi(round as i32));
        let from = s.points.len();
        let phase = format!("refine-{round}");
        for i in frontier(&s.points) {
            let (t, k) = (s.points[i].timeout_ms, s.points[i].ratio);
            s.add(t / f, k, &phase)?;
            s.add(t * f, k, &phase)?;
        }
        s.run_new(from, &phase)?;
    }
    let mut c = Confirm {
        budget: CONFIRM_BUDGET * o.max_hours,
        spent: 0,
        confirmed: Vec::new(),
    };
    s.confirm(&mut c)?;
    // Bisect: when confirmation leaves no point that meets or likely meets the limits,
    // the answer may lie between the slowest timeout still too noisy and the fastest one
    // quiet enough, which the grid stepped over; try their geometric middle, up to
    // `rounds` times, each followed by its own confirmation.
    for round in 1..=o.rounds {
        let any = |v: Verdict| (0..s.points.len()).any(|i| s.verdict(i) == v);
        if any(Verdict::Meets) || any(Verdict::Likely) || c.spent >= c.budget {
            break;
        }
        let Some(t) = gap(&s.points, limit_fe, o.max_p99_ms) else {
            break;
        };
        let from = s.points.len();
        let phase = format!("bisect-{round}");
        for &k in &o.ratios {
            s.add(t, k, &phase)?;
        }
        if s.points.len() == from {
            break;
        }
        s.run_new(from, &phase)?;
        s.confirm(&mut c)?;
    }
    let mut a = s.advice();
    let (systems, trials) = check_systems(o, &a)?;
    a.systems = systems;
    a.trials += trials;
    let (disks, trials) = disk_curve(o, &a)?;
    a.disks = disks;
    a.trials += trials;
    let likely = |i: usize| a.points[i].verdict(limit_fe, o.max_p99_ms) == Verdict::Likely;
    if c.spent >= c.budget && a.chosen.is_some_and(likely) {
        a.unconfirmed = Some(format!(
            "{}: the confirm phase spent its budget of {} steady hours ({} x --max-hours) on {} points before its recommendation was shown with confidence; the recommendation rests on its estimates (raise --max-hours to confirm further)",
            a.protocol,
            c.budget,
            CONFIRM_BUDGET,
            c.confirmed.len()
        ));
    }
    Ok((a, ran))
}

/// The outcome of the protocols' searches `advice` (in the order given), with the page's
/// statements about the budget and the limits: what the unsharded run and the merge of a
/// sharded one both end with.
fn finish(o: TuneOptions, advice: Vec<Advice>, ran: Ran) -> TuneOutcome {
    let limit_fe = o.max_false_per_hour();
    let mut warnings = Vec::new();
    let zero_hi = poisson_ci(0).1;
    if zero_hi / o.max_hours as f64 > limit_fe {
        warnings.push(format!(
            "--max-hours {} cannot show the limit of {} false elections a day: a point with none in {} hours still has a 95 % upper bound of {:.3} a day; showing {} a day needs at least {:.0} hours (--max-hours)",
            o.max_hours,
            o.max_false_per_day,
            o.max_hours,
            zero_hi / o.max_hours as f64 * 24.0,
            o.max_false_per_day,
            (zero_hi / limit_fe).ceil()
        ));
    }
    if zero_hi / o.hours as f64 > limit_fe {
        warnings.push(format!(
            "with {} hours per point the search phases cannot show the false-election limit on their own (no false election in {} hours bounds the rate at {:.3} a day); only the confirmed points can meet it with confidence",
            o.hours,
            o.hours,
            zero_hi / o.hours as f64 * 24.0
        ));
    }
    let open = quantile_ci(&vec![0.0; o.crash_trials as usize], 0.99).is_some_and(|c| c.2);
    if open {
        warnings.push(format!(
            "{} leader-crash trials per point cannot bound a p99 from above (its 95 % interval reaches the largest trial): no point can meet the p99 limit with confidence; use --crash-trials 1000 or more",
            o.crash_trials
        ));
    }
    warnings.extend(advice.iter().filter_map(|a| a.unconfirmed.clone()));
    TuneOutcome {
        trials: advice.iter().map(|a| a.trials).sum(),
        options: o,
        advice,
        warnings,
        noise: ran.noise,
        empirical: ran.empirical,
    }
}

/// The columns of `points.csv`, one row per evaluated point.
pub const POINT_COLUMNS: [&str; 29] = [
    "protocol",
    "timeout_ms",
    "ratio",
    "settings",
    "phase",
    "steady_hours",
    "false_elections",
    "false_per_hour",
    "false_per_hour_lo",
    "false_per_hour_hi",
    "false_per_day",
    "elections_started_per_hour",
    "leaderless_ms_per_hour",
    "crash_trials",
    "failover_ms_p50",
    "failover_ms_p95",
    "failover_ms_p99",
    "failover_ms_p99_lo",
    "failover_ms_p99_hi",
    "p99_bounded",
    "never_recovered",
    "budget_exceeded",
    "faults_skipped",
    "unsettled_starts",
    "measured",
    "on_frontier",
    "verdict",
    "chosen",
    "seeds",
];

/// A number for the CSV: three decimals, trailing zeros trimmed; `inf` for infinity.
fn cell_num(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(x) if x.is_infinite() => "inf".into(),
        Some(x) => crate::results::fmt_ms(x),
    }
}

/// A number with six significant digits, for small rates (trailing zeros trimmed).
fn rate(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(0.0) => "0".into(),
        Some(x) => {
            let d = (5 - x.abs().log10().floor() as i32).max(0) as usize;
            let s = format!("{x:.d$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        }
    }
}

impl TuneOutcome {
    /// The rows of `points.csv` (see [`POINT_COLUMNS`]).
    pub fn rows(&self) -> Vec<Vec<String>> {
        let o = &self.options;
        let limit_fe = o.max_false_per_hour();
        let mut rows = Vec::new();
        let row = |p: &Point, on_frontier: bool, chosen: bool| {
            let ci = p.false_per_hour_ci();
            let p99ci = p.p99_ci();
            let settings = point_params(p.kind, p.timeout_ms, p.ratio)
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            vec![
                p.protocol.clone(),
                crate::results::fmt_ms(p.timeout_ms),
                crate::results::fmt_ms(p.ratio),
                settings,
                p.phase.clone(),
                rate(Some(p.hours)),
                p.false_elections.to_string(),
                rate(p.false_per_hour()),
                rate(ci.map(|c| c.0)),
                rate(ci.map(|c| c.1)),
                rate(p.false_per_hour().map(|x| x * 24.0)),
                rate((p.hours > 0.0).then(|| p.elections_started as f64 / p.hours)),
                cell_num((p.hours > 0.0).then(|| p.leaderless_ms / p.hours)),
                p.crash_trials.to_string(),
                cell_num(p.failover(0.5)),
                cell_num(p.failover(0.95)),
                cell_num(p.failover(0.99)),
                cell_num(p99ci.map(|c| c.0)),
                cell_num(p99ci.map(|c| c.1)),
                p99ci.is_some_and(|c| !c.2).to_string(),
                p.never_recovered().to_string(),
                p.budget_exceeded.to_string(),
                p.faults_skipped.to_string(),
                p.unsettled_starts.to_string(),
                p.measured().to_string(),
                on_frontier.to_string(),
                p.verdict(limit_fe, o.max_p99_ms).name().into(),
                chosen.to_string(),
                format!("{}..", o.first_seed),
            ]
        };
        for a in &self.advice {
            for (i, p) in a.points.iter().enumerate() {
                rows.push(row(p, a.frontier.contains(&i), a.chosen == Some(i)));
            }
            // The advised point under each real system's rules: off the search's frontier.
            for c in &a.systems {
                rows.push(row(&c.point, false, false));
            }
            // The advised point on each disk preset (steady hours only).
            for d in &a.disks {
                rows.push(row(&d.point, false, false));
            }
        }
        rows
    }

    /// The exact command that reproduces this run.
    pub fn command(&self) -> String {
        let o = &self.options;
        let d = TuneOptions::defaults(&o.name);
        let mut s = String::from("election-bench tune");
        if o.name != "default" {
            s.push_str(&format!(" --name {}", o.name));
        }
        if o.protocols != d.protocols {
            s.push_str(&format!(" --protocols {}", o.protocols.join(",")));
        }
        if o.nodes != d.nodes {
            s.push_str(&format!(" --nodes {}", o.nodes));
        }
        if o.net != d.net {
            s.push_str(&format!(" --net {}", o.net));
        }
        if let Some((p, _)) = &o.config {
            s.push_str(&format!(" --config {}", p.display()));
        }
        for a in &o.set {
            s.push_str(&format!(" --set {a}"));
        }
        let f = crate::results::fmt_ms;
        if o.max_false_per_day != d.max_false_per_day {
            s.push_str(&format!(" --max-false-per-day {}", f(o.max_false_per_day)));
        }
        if o.max_p99_ms != d.max_p99_ms {
            s.push_str(&format!(" --max-p99-ms {}", f(o.max_p99_ms)));
        }
        if o.timeouts != d.timeouts {
            s.push_str(&format!(
                " --timeouts {}-{}",
                f(o.timeouts.0),
                f(o.timeouts.1)
            ));
        }
        if o.ratios != d.ratios {
            let r: Vec<String> = o.ratios.iter().map(|&r| f(r)).collect();
            s.push_str(&format!(" --ratios {}", r.join(",")));
        }
        for (flag, v, dv) in [
            ("--hours", o.hours, d.hours),
            ("--max-hours", o.max_hours, d.max_hours),
            ("--crash-trials", o.crash_trials, d.crash_trials),
            ("--rounds", u64::from(o.rounds), u64::from(d.rounds)),
            ("--disk-hours", o.disk_hours, d.disk_hours),
            ("--first-seed", o.first_seed, d.first_seed),
        ] {
            if v != dv {
                s.push_str(&format!(" {flag} {v}"));
            }
        }
        if o.out != d.out {
            s.push_str(&format!(" --out {}", o.out.display()));
        }
        s
    }

    /// Write `points.csv` and `manifest.json` into the output directory (created; each file
    /// written atomically); a shard writes its `manifest.json` only, holding its searches.
    pub fn write(&self) -> Result<()> {
        let dir = &self.options.out;
        crate::files::prepare_dir(dir)?;
        if let Some(s) = self.options.shard {
            // A shard's searches, whole, for `merge`; the page is written from every shard's.
            let json = shard::to_json(self, s)?;
            return crate::files::write_atomic(
                &dir.join("manifest.json"),
                &crate::sweep::json_bytes(&json),
            );
        }
        let header = POINT_COLUMNS
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>();
        let rows = std::iter::once(header).chain(self.rows());
        crate::files::write_atomic(&dir.join("points.csv"), &crate::files::csv_bytes(rows))?;
        let mut json = serde_json::to_string_pretty(&self.manifest()).expect("valid JSON");
        json.push('\n');
        crate::files::write_atomic(&dir.join("manifest.json"), json.as_bytes())
    }

    /// The run as `manifest.json` records it.
    pub fn manifest(&self) -> Value {
        let o = &self.options;
        let mut m = json!({
            "command": self.command(),
            "protocols": o.protocols,
            "nodes": o.nodes,
            "net": o.net,
            "fixed": o.fixed_params(),
            "noise": self.noise,
            "limits": { "max_false_per_day": o.max_false_per_day, "max_p99_ms": o.max_p99_ms },
            "search": {
                "timeouts_ms": [o.timeouts.0, o.timeouts.1],
                "grid": grid(o.timeouts.0, o.timeouts.1),
                "ratios": o.ratios,
                "rounds": o.rounds,
                "hours_per_point": o.hours,
                "max_hours": o.max_hours,
                "confirm_budget_hours": CONFIRM_BUDGET * o.max_hours,
                "crash_trials": o.crash_trials,
                "first_seed": o.first_seed,
            },
            "disk_curve": {
                "hours_per_disk": o.disk_hours,
                "workload": if o.set.iter().any(|a| crate::config::assignment_key(a).starts_with("workload.")) {
                    json!("as --set")
                } else {
                    json!(DISK_WORKLOAD)
                },
                "disks": crate::disk::DISKS.iter().map(|d| json!({
                    "disk": d.name,
                    "fsync": d.fsync(),
                    "p99_ms": sig3(d.p99_ms()),
                })).collect::<Vec<_>>(),
            },
            "trials": self.trials,
            "points": self.advice.iter().map(|a| a.points.len()).sum::<usize>(),
            "warnings": self.warnings,
        });
        // Only with --config, so that a run without one records what it always did.
        if let Some((path, _)) = &o.config {
            m["config"] = json!(path.display().to_string());
            m["empirical"] = json!(self
                .empirical
                .iter()
                .map(|(k, v)| {
                    let mut v = v.clone();
                    v["parameter"] = json!(k);
                    v
                })
                .collect::<Vec<_>>());
        }
        if let Some(p) = o.profile() {
            m["profile"] = p.to_json();
            m["current"] = json!(self
                .advice
                .iter()
                .filter_map(|a| {
                    let p = &a.points[a.current?];
                    Some(json!({
                        "protocol": a.protocol,
                        "timeout_ms": p.timeout_ms,
                        "ratio": p.ratio,
                        "false_per_hour": p.false_per_hour(),
                        "false_per_hour_ci": p.false_per_hour_ci().map(|c| [c.0, c.1]),
                        "observed_per_hour": self.observed().map(|o| o.0),
                        "observed_per_hour_ci": self.observed().map(|o| [o.1, o.2]),
                        "agreement": self.agreement(a).map(|c| c.3.name()),
                    }))
                })
                .collect::<Vec<_>>());
        }
        m
    }
}

#[cfg(test)]
mod tests;
