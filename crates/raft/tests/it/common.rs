//! Test harness: runs Raft under the simulator behind an auditing wrapper.
//!
//! The wrapper forwards every input to a real [`Raft`] node unchanged (same random draws, same
//! actions, same order) and records, in a log shared by every incarnation of every node:
//! each status change, each message sent, and each vote (a self-vote when a candidate asks for
//! votes, a `VOTE` grant otherwise). It also checks the stable-storage contract on every send:
//! the last record the node persisted must already hold the term (and vote) the message
//! depends on. The checks below can therefore really fail, and [`Audited::amnesiac`] shows they
//! do when a node forgets its stable storage.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;

use election_core::{Action, Io, NodeId, Protocol, Role, Status, Time};
use election_raft::{Raft, RaftConfig, RaftMsg, RaftTimer, Stable};
use election_sim::{Sim, SimConfig, TrialReport};

/// One vote: `voter` voted for `candidate` in `term`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub at: Time,
    pub voter: NodeId,
    pub term: u64,
    pub candidate: NodeId,
}

/// Everything the wrappers saw, across crashes.
#[derive(Default, Debug, PartialEq)]
pub struct Log {
    /// Every status change `(when, node, new status)`, including each boot's first status.
    pub statuses: Vec<(Time, NodeId, Status)>,
    /// Every message sent `(when, from, to, msg)`.
    pub sends: Vec<(Time, NodeId, NodeId, RaftMsg)>,
    /// Every vote cast.
    pub grants: Vec<Grant>,
    /// Stable-storage contract violations seen at send time.
    pub violations: Vec<String>,
}

impl Log {
    /// Term -> every node that was leader in it.
    pub fn leaders_by_term(&self) -> BTreeMap<u64, BTreeSet<NodeId>> {
        let mut m: BTreeMap<u64, BTreeSet<NodeId>> = BTreeMap::new();
        for &(_, node, s) in &self.statuses {
            if s.role == Role::Leader {
                m.entry(s.epoch.expect("raft reports its term"))
                    .or_default()
                    .insert(node);
            }
        }
        m
    }

    /// Every (voter, term) that voted for more than one candidate.
    pub fn double_votes(&self) -> Vec<String> {
        let mut m: BTreeMap<(NodeId, u64), BTreeSet<NodeId>> = BTreeMap::new();
        for g in &self.grants {
            m.entry((g.voter, g.term)).or_default().insert(g.candidate);
        }
        m.into_iter()
            .filter(|(_, c)| c.len() > 1)
            .map(|((v, t), c)| format!("node {v} voted for {c:?} in term {t}"))
            .collect()
    }

    /// The last status `node` reported at or before `at` (ignores crashes).
    pub fn status_at(&self, node: NodeId, at: Time) -> Option<Status> {
        self.statuses
            .iter()
            .filter(|&&(t, n, _)| n == node && t <= at)
            .map(|&(_, _, s)| s)
            .next_back()
    }

    /// Status changes of `node` in `[from, to)`.
    pub fn changes(&self, node: NodeId, from: Time, to: Time) -> Vec<(Time, Status)> {
        self.statuses
            .iter()
            .filter(|&&(t, n, _)| n == node && t >= from && t < to)
            .map(|&(t, _, s)| (t, s))
            .collect()
    }

    /// The highest term any node reported.
    pub fn max_term(&self) -> u64 {
        self.statuses
            .iter()
            .filter_map(|(_, _, s)| s.epoch)
            .max()
            .unwrap_or(0)
    }

    /// Messages of `kind` sent at or after `from`.
    pub fn sent_since(&self, kind: &str, from: Time) -> usize {
        use election_core::Message;
        self.sends
            .iter()
            .filter(|(t, _, _, m)| *t >= from && m.kind() == kind)
            .count()
    }
}

/// A [`Raft`] node behind an auditing wrapper.
pub struct Audited {
    inner: Raft,
    log: Rc<RefCell<Log>>,
    /// What this incarnation last persisted (or booted with).
    stored: Stable,
    last: Option<Status>,
    amnesia: bool,
    buf: Vec<Action<Raft>>,
}

impl Audited {
    pub fn new(id: NodeId, config: Arc<RaftConfig>, log: Rc<RefCell<Log>>) -> Audited {
        Audited {
            inner: Raft::new(id, config),
            log,
            stored: Stable::default(),
            last: None,
            amnesia: false,
            buf: Vec::new(),
        }
    }

    /// A broken node that ignores its stable storage on recovery: the audit must catch it.
    pub fn amnesiac(id: NodeId, config: Arc<RaftConfig>, log: Rc<RefCell<Log>>) -> Audited {
        Audited {
            amnesia: true,
            ..Audited::new(id, config, log)
        }
    }

    fn drive(&mut self, io: &mut Io<'_, Self>, f: impl FnOnce(&mut Raft, &mut Io<'_, Raft>)) {
        let now = io.now();
        let me = self.inner.id();
        let mut buf = std::mem::take(&mut self.buf);
        {
            let mut inner = Io::new(now, io.rng(), &mut buf);
            f(&mut self.inner, &mut inner);
        }
        let mut log = self.log.borrow_mut();
        for action in buf.drain(..) {
            match action {
                Action::Persist(s) => {
                    self.stored = s;
                    io.persist(s);
                }
                Action::Send { to, msg } => {
                    let st = self.stored;
                    let ok = match msg {
                        RaftMsg::PreVote { term, last_log } => {
                            term == st.current_term + 1 && last_log == st.last_log
                        }
                        RaftMsg::PreVoteResp {
                            term,
                            granted: true,
                        } => term > st.current_term,
                        RaftMsg::RequestVote { term, last_log, .. } => {
                            term == st.current_term
                                && st.voted_for == Some(me)
                                && last_log == st.last_log
                        }
                        // A leader ships only entries it has persisted, and its last one is
                        // of its own term (its no-op, Raft §8).
                        RaftMsg::AppendEntries { term, log } => {
                            term == st.current_term
                                && st.last_log.term == term
                                && log <= st.last_log
                        }
                        // An accepted AppendEntries is answered only once its entries are
                        // on stable storage (Figure 2).
                        RaftMsg::AppendResp {
                            term,
                            success: true,
                        } => term == st.current_term && st.last_log.term <= term,
                        RaftMsg::Vote {
                            term,
                            granted: true,
                        } => term == st.current_term && st.voted_for == Some(to),
                        m => m.term() == st.current_term,
                    };
                    if !ok {
                        log.violations.push(format!(
                            "{now}: node {me} sent {msg:?} to {to} with {st:?} on disk"
                        ));
                    }
                    match msg {
                        RaftMsg::RequestVote { term, .. } => log.grants.push(Grant {
                            at: now,
                            voter: me,
                            term,
                            candidate: me,
                        }),
                        RaftMsg::Vote {
                            term,
                            granted: true,
                        } => log.grants.push(Grant {
                            at: now,
                            voter: me,
                            term,
                            candidate: to,
                        }),
                        _ => {}
                    }
                    log.sends.push((now, me, to, msg));
                    io.send(to, msg);
                }
                Action::SetTimer { timer, at } => io.set_timer(timer, at - now),
                Action::CancelTimer(timer) => io.cancel_timer(timer),
            }
        }
        let status = self.inner.status();
        if self.last != Some(status) {
            self.last = Some(status);
            log.statuses.push((now, me, status));
        }
        self.buf = buf;
    }
}

impl Protocol for Audited {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Persist = Stable;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Stable>) {
        let stored = if self.amnesia { None } else { stored.copied() };
        self.stored = stored.unwrap_or_default();
        self.drive(io, |r, io| r.on_start(io, stored.as_ref()));
    }
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: RaftMsg) {
        self.drive(io, |r, io| r.on_message(io, from, msg));
    }
    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: RaftTimer) {
        self.drive(io, |r, io| r.on_timer(io, timer));
    }
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        self.drive(io, |r, io| r.on_suspect(io));
    }
    fn status(&self) -> Status {
        self.inner.status()
    }
}

/// Runs one trial of audited Raft nodes.
pub fn run(sim: SimConfig, raft: RaftConfig) -> (TrialReport, Log) {
    run_with(sim, raft, false)
}

/// Runs one trial; with `amnesia` every node forgets its stable storage on recovery.
pub fn run_with(sim: SimConfig, raft: RaftConfig, amnesia: bool) -> (TrialReport, Log) {
    raft.validate().expect("valid raft config");
    let raft = Arc::new(raft);
    let log = Rc::new(RefCell::new(Log::default()));
    let shared = Rc::clone(&log);
    let report = Sim::new(sim, move |id| {
        let (cfg, log) = (Arc::clone(&raft), Rc::clone(&shared));
        if amnesia {
            Audited::amnesiac(id, cfg, log)
        } else {
            Audited::new(id, cfg, log)
        }
    })
    .expect("valid sim config")
    .run();
    let log = Rc::try_unwrap(log)
        .expect("sim dropped its nodes")
        .into_inner();
    (report, log)
}

/// §5.2's safety property and the stable-storage contract, checked on every run:
/// at most one leader per term (from the nodes' own statuses and from the simulator's
/// `same_epoch_leaders`), at most one vote per node per term across crashes, and every
/// message sent only after the state it depends on was persisted.
pub fn assert_safe(report: &TrialReport, log: &Log, what: &str) {
    assert_eq!(
        report.metrics.same_epoch_leaders, 0,
        "{what}: same_epoch_leaders"
    );
    for (term, leaders) in log.leaders_by_term() {
        assert_eq!(
            leaders.len(),
            1,
            "{what}: term {term} had leaders {leaders:?}"
        );
    }
    assert_eq!(
        log.double_votes(),
        Vec::<String>::new(),
        "{what}: double votes"
    );
    assert_eq!(
        log.violations,
        Vec::<String>::new(),
        "{what}: persisted too late"
    );
}

pub fn ms(ms: u64) -> Time {
    Time::from_millis(ms)
}
