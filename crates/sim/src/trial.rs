//! The trial's rules, sans IO: what both drivers (this crate's [`Sim`](crate::Sim) and the live
//! UDP driver in `election-live`) decide the same way, written once.
//!
//! * [`Timeline`]: the fault timeline as a state machine. Which fault fires next and when, the
//!   wait for a quorum leader before the first one (bounded by
//!   [`SimConfig::fault_wait`]), the reference instant of every duration metric, the faults
//!   counted as skipped (the wait expired, or still pending at the end), and when the trial
//!   ends (the settle window and the verdict's hold span after the last fault, or the
//!   horizon), and the calm the verdict counts from.
//! * [`resolve`]: the selector rules ([`Resolver`]) over "which nodes are up, who leads".
//! * [`apply_topology`]: what an applied fault does to the link table and to the nodes cut off
//!   from the shared resource, and whether the observer must be told.
//! * [`observer`]: the observer a trial measures with.
//! * [`sets_link`]: whether a fault sets a link, so that a stale connection does not bring
//!   back a link a later fault cut.
//! * [`offer_write`]: a write reaching the shared resource.
//!
//! Nothing here reads a clock or draws a random number of its own: time comes in as the
//! `now` of each call, randomness as the generator handed to [`resolve`], the cluster's state
//! as plain values or the [`Observer`]; every decision comes back as data ([`Start`],
//! [`Wait`], [`GiveUp`], [`Deadline`], [`Applied`]) for the driver to carry out. The simulator
//! feeds it simulated instants from its event queue; the live driver feeds it the real time
//! since the trial's start. The live/sim conformance test (`crates/live/tests/it/conformance.rs`)
//! drives both over the same scenarios.

use std::time::Duration;

use election_core::{NodeId, Rng, Time};

use crate::config::SimConfig;
use crate::fault::{group_of, Applied, FaultAction, Resolver};
use crate::observer::{Links, Observer};
use crate::workload::{Fencing, Resource, WriteTag};

/// Why a skipped fault did not fire because the trial ended first.
pub const STILL_PENDING: &str = "still pending when the trial ended";

/// A fault's scheduled instant (validated finite and >= 0; saturating).
pub fn fault_time(at_ms: f64) -> Time {
    Time((at_ms * 1e6).round().clamp(0.0, u64::MAX as f64) as u64)
}

/// Where the timeline stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Faults fire at their scheduled instants (no wait for a leader, or nothing to wait for).
    Scheduled,
    /// The timeline will wait for a leader, from its first fault's scheduled instant on.
    Pending,
    /// Waiting for a quorum leader until this instant.
    Waiting(Time),
    /// Started after the wait: faults fire at their shifted instants.
    Started,
    /// No quorum leader within the wait: no fault fires.
    Abandoned,
}

/// The fault timeline of one trial and the end-of-trial rule (see the module docs and the
/// [`fault`](crate::fault) module's rules).
///
/// Driving contract: build it from the trial's [`SimConfig`]; at [`Timeline::first_instant`]
/// (when it is [`Some`]) call [`Timeline::at_first_instant`] with whether there is a quorum
/// leader; while [`Timeline::is_waiting`], call [`Timeline::leader_found`] once there is one,
/// or [`Timeline::give_up`] at the instant [`Wait::until`]; call [`Timeline::fire`] for each fault
/// as it fires (in [`Timeline::schedule`] order, at [`Timeline::due`]); end the trial at
/// [`Timeline::deadline`] and count [`Timeline::end`]'s faults as skipped.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// `(instant, index into the configuration's faults)`, in firing order: by scheduled
    /// instant, faults of one instant in list order. Shifted when the timeline starts late.
    schedule: Vec<(Time, usize)>,
    /// How many of `schedule` have fired (or been skipped).
    fired: usize,
    phase: Phase,
    fault_wait: Duration,
    /// The configured reference instant ([`SimConfig::reference_ms`]).
    fixed_reference: bool,
    reference_fault: Option<usize>,
    /// The reference instant, when it is known before the trial runs.
    reference: Option<Time>,
    /// How long a quorum leadership must last past the last fault before the trial may end:
    /// the longer of the settle window and the verdict's hold span.
    settle: Duration,
    horizon: Time,
    run_to_horizon: bool,
    /// The latest end of a fault that fired or will fire at its scheduled instant: its instant
    /// plus what it [`lasts`](FaultAction::lasts).
    last_fault_at: Time,
    /// What each fault lasts by itself, by index into the configuration's faults.
    lasts: Vec<Duration>,
}

/// The timeline starts: what the driver does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// Every fault fires this much later than scheduled.
    pub shift: Duration,
    /// The reference instant is now: set it (and start the workload).
    pub reference: Option<Time>,
}

/// No quorum leader at the first fault's instant: wait for one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// Give up at this instant.
    pub until: Time,
}

/// No quorum leader within the wait: the timeline is abandoned.
#[derive(Clone, Debug, PartialEq)]
pub struct GiveUp {
    /// The reference instant is now: set it (and start the workload).
    pub reference: Option<Time>,
    /// One [`Applied::Skipped`] per fault that will never fire, for the observer.
    pub skipped: Vec<Applied>,
}

/// What happens at the first fault's instant when the timeline waits for a leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstInstant {
    /// There is a quorum leader: the timeline starts now.
    Start(Start),
    /// There is none: wait.
    Wait(Wait),
}

/// Why a trial ends where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Every fault has fired and the same quorum leader has led for the settle window.
    Settled,
    /// The horizon.
    Horizon,
}

/// When the trial ends given what is known now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    /// The instant.
    pub at: Time,
    /// Why.
    pub reason: EndReason,
}

impl Timeline {
    /// The timeline `cfg` describes (validated or not: nothing here can fail).
    pub fn new(cfg: &SimConfig) -> Timeline {
        // Stable sort by time keeps list order for faults at the same instant.
        let mut order: Vec<usize> = (0..cfg.faults.len()).collect();
        order.sort_by(|&a, &b| cfg.faults[a].at_ms.total_cmp(&cfg.faults[b].at_ms));
        let schedule: Vec<(Time, usize)> = order
            .into_iter()
            .map(|i| (fault_time(cfg.faults[i].at_ms), i))
            .collect();
        let waits = cfg.fault_wait.is_some() && !schedule.is_empty();
        // With a wait for a leader and no explicit reference, the reference instant is known
        // only when the timeline starts; until then it is "never".
        let reference = (!waits || cfg.reference_ms.is_some()).then(|| cfg.reference());
        let lasts: Vec<Duration> = cfg.faults.iter().map(|f| f.action.lasts()).collect();
        let last_fault_at = if waits {
            Time::ZERO
        } else {
            ends(&schedule, &lasts).unwrap_or(Time::ZERO)
        };
        Timeline {
            schedule,
            fired: 0,
            phase: if waits {
                Phase::Pending
            } else {
                Phase::Scheduled
            },
            fault_wait: cfg.fault_wait.unwrap_or_default(),
            fixed_reference: cfg.reference_ms.is_some(),
            reference_fault: cfg.reference_fault,
            reference,
            settle: cfg.settle.max(cfg.hold),
            horizon: Time::ZERO + cfg.horizon,
            run_to_horizon: cfg.run_to_horizon,
            last_fault_at,
            lasts,
        }
    }

    /// The faults in firing order: `(scheduled instant, index into the configuration's
    /// faults)`; after a late start, the shifted instants.
    pub fn schedule(&self) -> &[(Time, usize)] {
        &self.schedule
    }

    /// The reference instant, if it is known before the trial runs (the observer's `t0`);
    /// `None`: it is set when the timeline starts, gives up or the reference fault fires.
    pub fn reference(&self) -> Option<Time> {
        self.reference
    }

    /// The observer's reference instant at the start: [`Timeline::reference`], else never.
    pub fn initial_reference(&self) -> Time {
        self.reference.unwrap_or(Time(u64::MAX))
    }

    /// The instant the timeline checks for a leader (the first fault's), when it waits for one.
    pub fn first_instant(&self) -> Option<Time> {
        match self.phase {
            Phase::Pending => self.schedule.first().map(|f| f.0),
            _ => None,
        }
    }

    /// Waiting for a quorum leader.
    pub fn is_waiting(&self) -> bool {
        matches!(self.phase, Phase::Waiting(_))
    }

    /// The wait ends at this instant, if the timeline waits now.
    pub fn waiting_until(&self) -> Option<Time> {
        match self.phase {
            Phase::Waiting(until) => Some(until),
            _ => None,
        }
    }

    /// Faults not yet fired nor skipped.
    pub fn pending(&self) -> usize {
        self.schedule.len() - self.fired
    }

    /// The first fault's instant has come (`now`, at or just after it), with or without a
    /// quorum leader. The wait is measured from the scheduled instant, however late the driver
    /// noticed it.
    pub fn at_first_instant(&mut self, now: Time, quorum_leader: bool) -> FirstInstant {
        if quorum_leader {
            FirstInstant::Start(self.start(now))
        } else {
            let first = self.schedule.first().map_or(now, |f| f.0);
            let until = first + self.fault_wait;
            self.phase = Phase::Waiting(until);
            FirstInstant::Wait(Wait { until })
        }
    }

    /// While waiting: a quorum leader appeared at `now`, so the timeline starts.
    pub fn leader_found(&mut self, now: Time) -> Option<Start> {
        self.is_waiting().then(|| self.start(now))
    }

    fn start(&mut self, now: Time) -> Start {
        self.phase = Phase::Started;
        // With a reference fault, the reference is set when that fault fires.
        let reference = (!self.fixed_reference && self.reference_fault.is_none()).then_some(now);
        let first = self.schedule.first().map_or(now, |f| f.0);
        let shift = now - first;
        for f in &mut self.schedule[self.fired..] {
            f.0 = f.0 + shift;
        }
        self.last_fault_at = self
            .last_fault_at
            .max(ends(&self.schedule, &self.lasts).unwrap_or(now));
        Start { shift, reference }
    }

    /// While waiting: the wait ended at `now` without a quorum leader (`None` if the timeline
    /// is not waiting). No fault fires; each counts as skipped.
    pub fn give_up(&mut self, now: Time) -> Option<GiveUp> {
        if !self.is_waiting() {
            return None;
        }
        self.phase = Phase::Abandoned;
        let reference = (!self.fixed_reference).then_some(now);
        let reason = format!(
            "no quorum leader within the fault wait ({:.3} ms)",
            self.fault_wait.as_secs_f64() * 1e3
        );
        let skipped = (0..self.pending())
            .map(|_| Applied::Skipped(reason.clone()))
            .collect();
        self.fired = self.schedule.len();
        Some(GiveUp { reference, skipped })
    }

    /// The next fault to fire at `now`, if one is due: `(its instant, its index)`.
    pub fn due(&self, now: Time) -> Option<(Time, usize)> {
        match self.phase {
            Phase::Scheduled | Phase::Started => self
                .schedule
                .get(self.fired)
                .copied()
                .filter(|f| f.0 <= now),
            _ => None,
        }
    }

    /// When the next fault fires or the wait ends, whichever the driver must wake for.
    pub fn next_wake(&self) -> Option<Time> {
        match self.phase {
            Phase::Scheduled | Phase::Started => self.schedule.get(self.fired).map(|f| f.0),
            Phase::Pending => self.first_instant(),
            Phase::Waiting(until) => Some(until),
            Phase::Abandoned => None,
        }
    }

    /// Fault `index` fires at `now` (the next in [`Timeline::schedule`] order). If it is the
    /// reference fault and the reference instant has not come (`past_reference`, the
    /// observer's), the reference instant is now: set it before the fault acts (and start the
    /// workload).
    pub fn fire(&mut self, index: usize, now: Time, past_reference: bool) -> Option<Time> {
        debug_assert_eq!(self.schedule.get(self.fired).map(|f| f.1), Some(index));
        self.fired += 1;
        (self.reference_fault == Some(index) && !past_reference).then_some(now)
    }

    /// When the trial ends given what is known now: the horizon, or, once every fault has
    /// fired and there is a quorum leader (`quorum_since`: since when it has led, `None` when
    /// there is none), the instant that leader has led for the settle window and the verdict's
    /// hold span past the calm. The first leadership to hold the span decides the verdict
    /// ([`crate::observer`]), so a trial never ends before its verdict is decided, and what
    /// runs after that instant cannot change it.
    pub fn deadline(&self, quorum_since: Option<Time>) -> Deadline {
        match quorum_since {
            Some(since) if self.pending() == 0 && !self.run_to_horizon => {
                let at = (since.max(self.last_fault_at) + self.settle).min(self.horizon);
                let reason = if at < self.horizon {
                    EndReason::Settled
                } else {
                    EndReason::Horizon
                };
                Deadline { at, reason }
            }
            _ => Deadline {
                at: self.horizon,
                reason: EndReason::Horizon,
            },
        }
    }

    /// The calm: when the last fault's action ends (its instant plus what it
    /// [`lasts`](FaultAction::lasts)), for [`Observer::set_calm`]. Before a timeline that
    /// waits for a leader has started, the instant it would start from; after it gave up, zero
    /// (no fault fired: the observer's reference instant is the calm).
    pub fn calm(&self) -> Time {
        self.last_fault_at
    }

    /// The trial ended: one [`Applied::Skipped`] per fault that never fired.
    pub fn end(&mut self) -> Vec<Applied> {
        let n = self.pending();
        self.fired = self.schedule.len();
        (0..n)
            .map(|_| Applied::Skipped(STILL_PENDING.to_string()))
            .collect()
    }
}

/// The latest end of the scheduled faults: each one's instant plus what it lasts.
fn ends(schedule: &[(Time, usize)], lasts: &[Duration]) -> Option<Time> {
    schedule
        .iter()
        .map(|&(at, i)| at + lasts.get(i).copied().unwrap_or_default())
        .max()
}

/// The quorum leader's start, as [`Timeline::deadline`] takes it.
pub fn quorum_since(observer: &Observer) -> Option<Time> {
    observer.quorum_leader().map(|_| observer.quorum_since())
}

/// The observer a trial of `cfg` measures with, its reference instant `t0` (see
/// [`Timeline::initial_reference`]).
pub fn observer(cfg: &SimConfig, t0: Time) -> Observer {
    let mut observer = Observer::new(cfg.nodes, t0, cfg.trace);
    observer.set_services(cfg.services);
    observer.set_verdict_window(cfg.election_timeout, cfg.hold);
    if cfg.workload.on() {
        observer.set_workload(cfg.workload.interval.unwrap_or_default());
    }
    observer
}

/// `action`, firing at `now`, with its selectors resolved over the cluster's current state
/// ([`Resolver`]): `up` says which endpoints are up (members first, then service endpoints,
/// indexed by `id - 1`), the observer who leads, `rng` is the trial's fault stream.
pub fn resolve(
    now: Time,
    action: &FaultAction,
    up: &[bool],
    members: usize,
    observer: &Observer,
    last_crashed: Option<NodeId>,
    rng: &mut Rng,
) -> Applied {
    let (up, services) = up.split_at(members);
    let leader = observer
        .quorum_leader()
        .or_else(|| observer.highest_leader());
    Resolver {
        up,
        services,
        leader,
        last_crashed,
        initial_leader: observer.leader_at_reference(),
        rng,
    }
    .action(now, action)
}

/// What `applied` does to the link table (among `members` members and the service endpoints
/// after them) and to the nodes cut off the shared resource (`resource_cut`, by index; empty:
/// none, allocated at the first cut). `true`: the links changed, so the observer must be told
/// (`Observer::topology_changed`). Every other fault leaves both alone.
pub fn apply_topology(
    applied: &Applied,
    members: usize,
    links: &mut Links,
    resource_cut: &mut Vec<bool>,
) -> bool {
    match applied {
        Applied::Partition(groups) => {
            // Members only: a service endpoint sits outside the cluster's network split.
            let group_of = group_of(members, groups);
            for a in 0..members {
                for b in 0..members {
                    if group_of[a] != group_of[b] {
                        links.set(NodeId::from_index(a), NodeId::from_index(b), false);
                    }
                }
            }
            true
        }
        Applied::CutLink { from, to } | Applied::StaleConnection { from, to, .. } => {
            for &a in from {
                for &b in to {
                    links.set(a, b, false);
                }
            }
            true
        }
        Applied::Isolate(id) => {
            for i in 0..links.len() {
                let other = NodeId::from_index(i);
                links.set(*id, other, false);
                links.set(other, *id, false);
            }
            true
        }
        Applied::Links { pairs, up } => {
            for &(a, b) in pairs {
                links.set(a, b, *up);
            }
            true
        }
        Applied::Heal => {
            links.heal();
            resource_cut.clear();
            true
        }
        Applied::ResourceCut(nodes) => {
            if resource_cut.is_empty() {
                *resource_cut = vec![false; links.len()];
            }
            for id in nodes {
                resource_cut[id.index()] = true;
            }
            false
        }
        _ => false,
    }
}

/// Does `applied` set the one-way link `a → b` (among `members` members), up or down? A link
/// that a stale connection took down comes back at the end of its keep-alive only if no later
/// fault set it meanwhile ([`FaultAction::StaleConnection`]): a cut, a partition across it, an
/// isolation of either end, `links` naming it, `heal`, or another stale connection over it.
pub fn sets_link(applied: &Applied, members: usize, a: NodeId, b: NodeId) -> bool {
    match applied {
        Applied::Partition(groups) => {
            let of = group_of(members, groups);
            a.index() < members && b.index() < members && of[a.index()] != of[b.index()]
        }
        Applied::CutLink { from, to } | Applied::StaleConnection { from, to, .. } => {
            from.contains(&a) && to.contains(&b)
        }
        Applied::Isolate(id) => a == *id || b == *id,
        Applied::Links { pairs, .. } => pairs.contains(&(a, b)),
        Applied::Heal => true,
        _ => false,
    }
}

/// A write reaches the shared resource: taken or fenced, as the observer counts it; nothing if
/// its writer is cut off the resource (`resource_cut`, as [`apply_topology`] keeps it).
pub fn offer_write(
    resource: &mut Resource,
    fencing: Fencing,
    tag: WriteTag,
    resource_cut: &[bool],
    observer: &mut Observer,
) {
    if resource_cut.get(tag.writer.index()) == Some(&true) {
        return;
    }
    if resource.offer(fencing, tag.token) {
        observer.on_write_taken(tag);
    } else {
        observer.on_write_fenced(tag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{Fault, Selector};

    fn crash_at(ms: f64) -> Fault {
        Fault::at_ms(ms, FaultAction::Crash(Selector::Leader))
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// Faults of one instant fire in list order, earlier instants first; without a wait the
    /// reference is the first fault's instant, known in advance.
    #[test]
    fn schedule_is_by_instant_then_list_order() {
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![crash_at(200.0), crash_at(100.0), crash_at(100.0)];
        let mut t = Timeline::new(&cfg);
        assert_eq!(t.schedule(), &[(ms(100), 1), (ms(100), 2), (ms(200), 0)]);
        assert_eq!(t.reference(), Some(ms(100)));
        assert_eq!(t.first_instant(), None);
        assert_eq!(t.due(ms(99)), None);
        assert_eq!(t.due(ms(100)), Some((ms(100), 1)));
        assert_eq!(t.fire(1, ms(100), true), None);
        assert_eq!(t.due(ms(100)), Some((ms(100), 2)));
        t.fire(2, ms(100), true);
        assert_eq!(t.next_wake(), Some(ms(200)));
        assert_eq!(t.deadline(Some(ms(50))).reason, EndReason::Horizon);
        t.fire(0, ms(200), true);
        // Settle (2 s) from the later of the leader's start and the last fault.
        assert_eq!(
            t.deadline(Some(ms(50))),
            Deadline {
                at: ms(2200),
                reason: EndReason::Settled
            }
        );
        assert_eq!(t.deadline(None).at, ms(30_000));
    }

    /// A stale connection ends by itself: the settle window counts from its reconnect, with or
    /// without a wait for a leader (shifted with the timeline).
    #[test]
    fn a_stale_connection_ends_at_its_reconnect() {
        let stale = Fault::at_ms(
            100.0,
            FaultAction::StaleConnection {
                from: crate::NodeSet::One(Selector::Leader),
                to: crate::NodeSet::All,
                ms: 750.0,
            },
        );
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![stale, crash_at(300.0)];
        let mut t = Timeline::new(&cfg);
        t.fire(0, ms(100), true);
        t.fire(1, ms(300), true);
        assert_eq!(t.deadline(Some(ms(50))).at, ms(850 + 2000));
        cfg.fault_wait = Some(Duration::from_millis(500));
        let mut t = Timeline::new(&cfg);
        t.at_first_instant(ms(100), false);
        t.leader_found(ms(140)).unwrap();
        t.fire(0, ms(140), true);
        t.fire(1, ms(340), true);
        assert_eq!(t.deadline(Some(ms(50))).at, ms(890 + 2000));
    }

    /// Which faults set a link, so that a stale connection leaves it to them.
    #[test]
    fn later_link_faults_set_the_links_they_name() {
        let id = NodeId;
        let (a, b, c) = (id(1), id(2), id(3));
        assert!(sets_link(&Applied::Heal, 3, a, b));
        assert!(sets_link(
            &Applied::CutLink {
                from: vec![a],
                to: vec![b, c]
            },
            3,
            a,
            c
        ));
        assert!(!sets_link(
            &Applied::CutLink {
                from: vec![a],
                to: vec![b, c]
            },
            3,
            b,
            a
        ));
        assert!(sets_link(
            &Applied::Partition(vec![vec![a], vec![b, c]]),
            3,
            a,
            b
        ));
        assert!(!sets_link(
            &Applied::Partition(vec![vec![a], vec![b, c]]),
            3,
            b,
            c
        ));
        assert!(sets_link(&Applied::Isolate(b), 3, a, b));
        assert!(!sets_link(&Applied::Crash(b), 3, a, b));
        assert!(sets_link(
            &Applied::Links {
                pairs: vec![(a, b)],
                up: true
            },
            3,
            a,
            b
        ));
    }

    /// The wait for a leader: the timeline starts when one appears, every fault shifted by the
    /// delay, and the reference instant is that start.
    #[test]
    fn a_late_leader_shifts_the_timeline() {
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![crash_at(100.0), crash_at(300.0)];
        cfg.fault_wait = Some(Duration::from_millis(500));
        let mut t = Timeline::new(&cfg);
        assert_eq!(t.initial_reference(), Time(u64::MAX));
        assert_eq!(t.first_instant(), Some(ms(100)));
        assert_eq!(
            t.at_first_instant(ms(100), false),
            FirstInstant::Wait(Wait { until: ms(600) })
        );
        assert_eq!(t.due(ms(100)), None);
        let s = t.leader_found(ms(140)).unwrap();
        assert_eq!(s.shift, Duration::from_millis(40));
        assert_eq!(s.reference, Some(ms(140)));
        assert_eq!(t.schedule(), &[(ms(140), 0), (ms(340), 1)]);
        assert_eq!(t.give_up(ms(600)), None, "started: nothing to give up");
    }

    /// No leader within the wait: nothing fires, every fault is skipped with the wait named,
    /// and the reference is the instant it gave up (also with a reference fault).
    #[test]
    fn an_expired_wait_skips_every_fault() {
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![crash_at(100.0), crash_at(300.0)];
        cfg.fault_wait = Some(Duration::from_millis(50));
        cfg.reference_fault = Some(1);
        let mut t = Timeline::new(&cfg);
        t.at_first_instant(ms(100), false);
        assert!(t.leader_found(ms(120)).is_some());
        let mut t = Timeline::new(&cfg);
        t.at_first_instant(ms(100), false);
        let g = t.give_up(ms(150)).unwrap();
        assert_eq!(g.reference, Some(ms(150)));
        assert_eq!(
            g.skipped,
            vec![
                Applied::Skipped("no quorum leader within the fault wait (50.000 ms)".to_string());
                2
            ]
        );
        assert_eq!(t.pending(), 0);
        assert_eq!(t.due(ms(1000)), None);
        assert!(t.end().is_empty());
    }

    /// A reference fault sets the reference when it fires (not when the timeline starts), and
    /// only if the observer has not crossed it already.
    #[test]
    fn a_reference_fault_is_the_reference() {
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![crash_at(100.0), crash_at(300.0)];
        cfg.fault_wait = Some(Duration::from_millis(500));
        cfg.reference_fault = Some(1);
        let mut t = Timeline::new(&cfg);
        let FirstInstant::Start(s) = t.at_first_instant(ms(100), true) else {
            panic!("a leader: the timeline starts")
        };
        assert_eq!(s.reference, None);
        assert_eq!(t.fire(0, ms(100), false), None);
        assert_eq!(t.fire(1, ms(300), false), Some(ms(300)));
        let mut t = Timeline::new(&cfg);
        t.at_first_instant(ms(100), true);
        t.fire(0, ms(100), false);
        assert_eq!(t.fire(1, ms(300), true), None);
    }

    /// Faults left when the trial ends are skipped as still pending; a steady window never
    /// ends early.
    #[test]
    fn pending_faults_at_the_end_and_run_to_horizon() {
        let mut cfg = SimConfig::new(3, 1);
        cfg.faults = vec![crash_at(100.0)];
        let mut t = Timeline::new(&cfg);
        assert_eq!(t.end(), vec![Applied::Skipped(STILL_PENDING.into())]);
        cfg.faults.clear();
        cfg.run_to_horizon = true;
        let t = Timeline::new(&cfg);
        assert_eq!(t.deadline(Some(Time::ZERO)).reason, EndReason::Horizon);
    }

    /// A partition cuts member links only; a heal restores every link and the resource.
    #[test]
    fn topology_bookkeeping() {
        let mut links = Links::new(4);
        let mut cut = Vec::new();
        let groups = vec![vec![NodeId(1)], vec![NodeId(2), NodeId(3)]];
        assert!(apply_topology(
            &Applied::Partition(groups),
            3,
            &mut links,
            &mut cut
        ));
        assert!(!links.is_up(NodeId(1), NodeId(2)));
        assert!(links.is_up(NodeId(2), NodeId(3)));
        assert!(
            links.is_up(NodeId(1), NodeId(4)),
            "the service endpoint stays reachable"
        );
        assert!(!apply_topology(
            &Applied::ResourceCut(vec![NodeId(2)]),
            3,
            &mut links,
            &mut cut
        ));
        assert_eq!(cut, vec![false, true, false, false]);
        assert!(!apply_topology(
            &Applied::SetLoss(0.5),
            3,
            &mut links,
            &mut cut
        ));
        assert!(apply_topology(&Applied::Heal, 3, &mut links, &mut cut));
        assert!(links.is_up(NodeId(1), NodeId(2)));
        assert!(cut.is_empty());
    }
}
