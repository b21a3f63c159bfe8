//! From a real trial's logs and fault journal to the simulator's metrics.
//!
//! Nothing is measured here: the members' own log lines ([`crate::log`]) are turned into the
//! [`Status`] each member would report (its role from `raft.go`'s `became ...` lines, the leader
//! it names from `node.go`'s `elected/changed/lost leader` lines, its term as the epoch), the
//! injector's journal ([`Act`]: kill, restart, SIGSTOP, SIGCONT, cut, heal) into the same
//! fault actions the simulator applies, and both are fed, in time order, to the simulator's
//! own [`Observer`] — so `failover_ms`, `elect_ms`, `minority_leader_ms`, the outcome and every
//! other column mean exactly what `crates/sim/src/observer.rs` defines them to mean.
//!
//! # Time
//!
//! Everything is in wall-clock milliseconds since the Unix epoch: etcd's `ts` (truncated to
//! the millisecond) and the injector's instants (taken just before each signal, truncated the
//! same way). The observer's clock starts at the trial's *origin*, when the cluster was last
//! seen healthy before the fault; what happened before it only sets each member's status at
//! the origin. Within one millisecond the injector's actions come first, then the log lines of
//! the members that do not end that millisecond as leader, then of those that do, each member's
//! in log order: a millisecond is the resolution of every real duration, and two leaders at
//! once are counted only when the logs show them so for at least one.
//!
//! # What the rows cannot say
//!
//! etcd's messages are not counted (the `msgs_*` and `bytes_total` columns are 0), there is no
//! workload (the write columns are empty), and the steady window counts no messages.
//! [`Failover`] adds what the log says about the failover itself: the terms it took, the
//! (pre-)candidacies, the votes ignored within a leader's lease, the check-quorum step-downs.

use election_core::{NodeId, Role, Status, Time};
use election_sim::trial::apply_topology;
use election_sim::{Applied, Links, Metrics, Observer};

use crate::log::{Event, LogEvent, RaftId};

/// What the injector did to a member (by member index, 0-based), or to the links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// SIGKILL.
    Crash(usize),
    /// Started again with its data.
    Restart(usize),
    /// SIGSTOP.
    Pause(usize),
    /// SIGCONT.
    Resume(usize),
    /// Cut into these groups (both ways between groups).
    Partition(Vec<Vec<usize>>),
    /// Every cut undone.
    Heal,
}

/// The instants of one trial, in wall-clock ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Where the observer's clock starts (the cluster healthy).
    pub origin_ms: i64,
    /// The fault: the reference instant `t0`.
    pub t0_ms: i64,
    /// When the last fault action of the trial ended (the SIGCONT, the heal; `t0` for a kill).
    pub calm_ms: i64,
    /// When observation stopped.
    pub end_ms: i64,
}

/// The verdict window, as the simulator's trial configuration gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The election timeout `recovered_timeouts` counts in, ms.
    pub election_ms: u64,
    /// How long one quorum leadership must last past the calm to count as settled, ms.
    pub hold_ms: u64,
}

/// What the log says about the failover, beyond the simulator's columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failover {
    /// The quorum leader just before `t0` (member id, 1-based) and its term.
    pub leader_before: Option<(u32, u64)>,
    /// The first quorum leader at or after `t0` (the one `failover_ms` ends at) and its term.
    pub leader_after: Option<(u32, u64)>,
    /// `became candidate` lines from `t0` to that instant (to the end without one).
    pub candidacies: u32,
    /// `became pre-candidate` lines in the same span.
    pub pre_candidacies: u32,
    /// Vote requests ignored within a leader's lease in the same span (`lease is not expired`).
    pub votes_ignored: u32,
    /// CheckQuorum step-downs from `t0` to the end.
    pub stepped_down: u32,
}

impl Failover {
    /// Terms the failover took: the new quorum leader's term minus the old one's (0: the same
    /// leader kept or regained its quorum in its term; 1: one election; 2 or more: lost terms).
    pub fn terms(&self) -> Option<u64> {
        match (self.leader_before, self.leader_after) {
            (Some((_, a)), Some((_, b))) => Some(b.saturating_sub(a)),
            _ => None,
        }
    }
}

/// A trial's measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The simulator's metrics, from its observer.
    pub metrics: Metrics,
    /// The failover as the log tells it.
    pub failover: Failover,
}

/// One member's status as its log tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Member {
    live: bool,
    role: Role,
    leader: Option<RaftId>,
    term: u64,
}

impl Member {
    fn status(&self, ids: &[RaftId]) -> Option<Status> {
        self.live.then(|| Status {
            role: self.role,
            leader: self
                .leader
                .and_then(|l| ids.iter().position(|&x| x == l))
                .map(NodeId::from_index),
            epoch: Some(self.term),
        })
    }

    /// Apply a log event of this member; true if its status may have changed.
    fn apply(&mut self, e: &Event, me: RaftId) -> bool {
        // A line from a member is proof that it runs (its first lines after a start).
        self.live = true;
        match *e {
            Event::BecameFollower { term, .. } => {
                self.role = Role::Follower;
                self.term = term;
            }
            Event::BecamePreCandidate { term, .. } => {
                // raft.go becomePreCandidate: r.lead = None, the term unchanged.
                self.role = Role::Candidate;
                self.leader = None;
                self.term = term;
            }
            Event::BecameCandidate { term, .. } => {
                self.role = Role::Candidate;
                self.leader = None;
                self.term = term;
            }
            Event::BecameLeader { term, .. } => {
                self.role = Role::Leader;
                self.leader = Some(me);
                self.term = term;
            }
            Event::Leader { leader, term, .. } => {
                self.leader = leader;
                self.term = term;
            }
            Event::VoteIgnored { .. } | Event::SteppedDown { .. } => return false,
        }
        true
    }
}

/// An item of the merged timeline.
#[derive(Clone, Debug)]
enum Item<'a> {
    Act(&'a Act),
    Log(usize, &'a Event),
}

/// Measure one trial: `ids` are the members' raft ids by member index, `events` every member's
/// log events (whole logs: what precedes the origin sets the statuses there; events of
/// unknown ids are ignored), `acts` the injector's journal with wall-clock instants.
pub fn measure(
    ids: &[RaftId],
    events: &[LogEvent],
    acts: &[(i64, Act)],
    w: Window,
    verdict: Verdict,
) -> Measured {
    let n = ids.len();
    // Within a millisecond the order between members is unknown: acts first, then the members
    // whose lines in that millisecond do not end in the leader role, then those whose do (so a
    // leader handing over within one millisecond is never counted as two leaders at once: an
    // overlap must be visible at the logs' resolution). Each member's lines keep their log
    // order (the sort is stable and a member's lines of one millisecond share their key).
    let mut ends_leading: std::collections::HashMap<(i64, usize), bool> =
        std::collections::HashMap::new();
    for e in events {
        if let Some(m) = ids.iter().position(|&id| id == e.event.member()) {
            let role_change = match e.event {
                Event::BecameLeader { .. } => Some(true),
                Event::BecameFollower { .. }
                | Event::BecamePreCandidate { .. }
                | Event::BecameCandidate { .. } => Some(false),
                _ => None,
            };
            if let Some(leads) = role_change {
                ends_leading.insert((e.ts_ms, m), leads);
            }
        }
    }
    let mut items: Vec<(i64, u8, Item)> = acts
        .iter()
        .map(|(t, a)| (*t, 0, Item::Act(a)))
        .chain(events.iter().filter_map(|e| {
            let m = ids.iter().position(|&id| id == e.event.member())?;
            let leads = ends_leading.get(&(e.ts_ms, m)).copied().unwrap_or(false);
            Some((e.ts_ms, 1 + u8::from(leads), Item::Log(m, &e.event)))
        }))
        .collect();
    items.sort_by_key(|(t, class, _)| (*t, *class));

    let ns = |ms: i64| Time(((ms - w.origin_ms).max(0) as u64) * 1_000_000);
    let mut members = vec![
        Member {
            live: false,
            role: Role::Follower,
            leader: None,
            term: 0,
        };
        n
    ];
    let mut links = Links::new(n as u32);
    let mut cut = Vec::new();
    let mut observer: Option<Observer> = None;
    let mut failover = Failover::default();
    let mut before_t0 = true;
    let mut settled_at: Option<i64> = None;
    // Each pause's end, for the observer's `Applied::Pause(id, until)`.
    let resume_of = |from: usize, who: usize| -> i64 {
        items[from..]
            .iter()
            .find_map(|(t, _, it)| {
                matches!(it, Item::Act(Act::Resume(x)) if *x == who).then_some(*t)
            })
            .unwrap_or(w.end_ms)
    };

    for (k, (t, _, item)) in items.iter().enumerate() {
        let t = *t;
        if t > w.end_ms {
            break;
        }
        if t >= w.origin_ms && observer.is_none() {
            observer = Some(start_observer(&members, ids, &links, w, verdict));
        }
        if let Some(o) = observer.as_mut() {
            o.advance(ns(t));
            if before_t0 && t >= w.t0_ms {
                before_t0 = false;
                failover.leader_before = leader_with_term(o, &members);
            }
        }
        let counting = !before_t0 && settled_at.is_none_or(|s| t <= s);
        match *item {
            Item::Log(m, e) => {
                match *e {
                    Event::BecameCandidate { .. } if counting => failover.candidacies += 1,
                    Event::BecamePreCandidate { .. } if counting => failover.pre_candidacies += 1,
                    Event::VoteIgnored { .. } if counting => failover.votes_ignored += 1,
                    Event::SteppedDown { .. } if !before_t0 => failover.stepped_down += 1,
                    _ => {}
                }
                let was = members[m];
                if members[m].apply(e, ids[m]) && members[m] != was {
                    if let Some(o) = observer.as_mut() {
                        if !was.live {
                            o.topology_changed(&links);
                        }
                        o.on_status(NodeId::from_index(m), members[m].status(ids));
                    }
                }
            }
            Item::Act(act) => {
                let id = |i: usize| NodeId::from_index(i);
                match act {
                    Act::Crash(i) => {
                        members[*i].live = false;
                        members[*i].leader = None;
                        if let Some(o) = observer.as_mut() {
                            o.on_fault(Applied::Crash(id(*i)));
                            o.on_status(id(*i), None);
                            o.topology_changed(&links);
                        }
                    }
                    Act::Restart(i) => {
                        members[*i] = Member {
                            live: true,
                            role: Role::Follower,
                            leader: None,
                            term: members[*i].term,
                        };
                        if let Some(o) = observer.as_mut() {
                            o.on_fault(Applied::Recover(id(*i)));
                            o.on_status(id(*i), members[*i].status(ids));
                            o.topology_changed(&links);
                        }
                    }
                    Act::Pause(i) => {
                        if let Some(o) = observer.as_mut() {
                            o.on_fault(Applied::Pause(id(*i), ns(resume_of(k, *i))));
                        }
                    }
                    Act::Resume(i) => {
                        if let Some(o) = observer.as_mut() {
                            o.on_fault(Applied::Resume(id(*i)));
                        }
                    }
                    Act::Partition(groups) => {
                        let applied = Applied::Partition(
                            groups
                                .iter()
                                .map(|g| g.iter().map(|&i| id(i)).collect())
                                .collect(),
                        );
                        apply_topology(&applied, n, &mut links, &mut cut);
                        if let Some(o) = observer.as_mut() {
                            o.topology_changed(&links);
                            o.on_fault(applied);
                        }
                    }
                    Act::Heal => {
                        links.heal();
                        if let Some(o) = observer.as_mut() {
                            o.topology_changed(&links);
                            o.on_fault(Applied::Heal);
                        }
                    }
                }
            }
        }
        if let Some(o) = observer.as_ref() {
            if !before_t0 && failover.leader_after.is_none() {
                if let Some(l) = leader_with_term(o, &members) {
                    failover.leader_after = Some(l);
                    settled_at = Some(t);
                }
            }
        }
    }
    let mut o = observer.unwrap_or_else(|| start_observer(&members, ids, &links, w, verdict));
    if before_t0 {
        o.advance(ns(w.t0_ms.min(w.end_ms)));
        failover.leader_before = leader_with_term(&o, &members);
    }
    if failover.leader_after.is_none() && w.t0_ms <= w.end_ms {
        // A quorum leader at the end of the last item holds to the end.
        failover.leader_after = leader_with_term(&o, &members);
    }
    let (metrics, _) = o.finish(ns(w.end_ms));
    Measured { metrics, failover }
}

/// The quorum leader right now (1-based id) with its term.
fn leader_with_term(o: &Observer, members: &[Member]) -> Option<(u32, u64)> {
    o.quorum_leader().map(|l| (l.0, members[l.index()].term))
}

fn start_observer(
    members: &[Member],
    ids: &[RaftId],
    links: &Links,
    w: Window,
    verdict: Verdict,
) -> Observer {
    let ms = |x: i64| Time(((x - w.origin_ms).max(0) as u64) * 1_000_000);
    let mut o = Observer::new(ids.len() as u32, ms(w.t0_ms), false);
    o.set_verdict_window(
        std::time::Duration::from_millis(verdict.election_ms),
        std::time::Duration::from_millis(verdict.hold_ms),
    );
    o.set_calm(ms(w.calm_ms.max(w.t0_ms)));
    for (i, m) in members.iter().enumerate() {
        if let Some(s) = m.status(ids) {
            o.on_status(NodeId::from_index(i), Some(s));
        }
    }
    o.topology_changed(links);
    o
}

/// What the logs show for each term a failover lost (the terms strictly between the old
/// leader's and the new one's), one clause per term, empty when it took one
/// term or none: who stood (`became candidate at term k`; two or more is a **split vote**),
/// and each vote ignored within a leader's lease while that term's election ran (`ignored
/// MsgVote ... lease is not expired (remaining ticks: K)`, raft.go Step's `inLease`); a term
/// with one candidate and no ignored vote says `no quorum of votes`. A candidate cut off from
/// the majority by a partition of the journal `acts` at its candidacy is named apart (`m2
/// stood cut off`): it takes no part in the majority's vote. Members are 1-based
/// (`m2`), like `reality.csv`'s `target`; terms are joined by ` / `, and the text has no
/// comma (a CSV field read by a naive split stays one field).
pub fn lost_terms(
    ids: &[RaftId],
    events: &[LogEvent],
    acts: &[(i64, Act)],
    w: Window,
    f: &Failover,
) -> String {
    let (Some((_, before)), Some((_, after))) = (f.leader_before, f.leader_after) else {
        return String::new();
    };
    let member = |id: RaftId| ids.iter().position(|&x| x == id).map(|i| i + 1);
    let span: Vec<&LogEvent> = events
        .iter()
        .filter(|e| e.ts_ms >= w.t0_ms && e.ts_ms <= w.end_ms)
        .collect();
    // The first candidacy at each term: a term's election runs until the next one starts.
    let first_at = |k: u64| {
        span.iter()
            .filter(|e| matches!(e.event, Event::BecameCandidate { term, .. } if term == k))
            .map(|e| e.ts_ms)
            .min()
    };
    // Is member `m` (1-based) on a side without a majority at `t`?
    let cut_off = |m: usize, t: i64| {
        let last = acts
            .iter()
            .rev()
            .find(|(at, a)| *at <= t && matches!(a, Act::Partition(_) | Act::Heal));
        match last {
            Some((_, Act::Partition(groups))) => groups
                .iter()
                .find(|g| g.contains(&(m - 1)))
                .is_some_and(|g| 2 * g.len() <= ids.len()),
            _ => false,
        }
    };
    let mut out = Vec::new();
    for k in before + 1..after {
        let mut stood: Vec<usize> = Vec::new();
        let mut apart: Vec<usize> = Vec::new();
        for e in &span {
            if let Event::BecameCandidate { id, term } = e.event {
                if let Some(m) = member(id).filter(|_| term == k) {
                    let list = if cut_off(m, e.ts_ms) {
                        &mut apart
                    } else {
                        &mut stood
                    };
                    if !list.contains(&m) {
                        list.push(m);
                    }
                }
            }
        }
        let from = first_at(k).unwrap_or(w.t0_ms);
        let to = first_at(k + 1).unwrap_or(w.end_ms);
        let ignored: Vec<String> = span
            .iter()
            .filter(|e| e.ts_ms >= from && e.ts_ms < to)
            .filter_map(|e| match e.event {
                Event::VoteIgnored {
                    id,
                    from,
                    pre,
                    remaining_ticks,
                    ..
                } => Some(format!(
                    "m{} ignored m{}'s {} (lease is not expired{})",
                    member(id)?,
                    member(from)?,
                    if pre { "MsgPreVote" } else { "MsgVote" },
                    remaining_ticks
                        .map(|r| format!(": remaining ticks {r}"))
                        .unwrap_or_default()
                )),
                _ => None,
            })
            .collect();
        let who: Vec<String> = stood.iter().map(|m| format!("m{m}")).collect();
        let mut clause = format!("term {k}: ");
        clause.push_str(&match who.len() {
            0 => "no candidacy logged".to_string(),
            1 => format!("{} stood", who[0]),
            _ => format!("{} stood (split vote)", who.join(" and ")),
        });
        for m in &apart {
            clause.push_str(&format!("; m{m} stood cut off"));
        }
        for i in &ignored {
            clause.push_str("; ");
            clause.push_str(i);
        }
        if who.len() == 1 && ignored.is_empty() {
            clause.push_str("; no quorum of votes");
        }
        out.push(clause);
    }
    out.join(" / ")
}
