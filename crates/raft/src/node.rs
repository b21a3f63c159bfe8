//! The Raft node: one state machine per server, driven through [`election_core::Protocol`].

use std::sync::Arc;
use std::time::Duration;

use election_core::{
    all_nodes, Io, NodeId, Protocol, QuorumRule, RngExt, Role, Status, Ticker, Time,
};

use crate::{
    AppendRule, CheckQuorumEvery, Clock, FollowerRule, LeaderSend, LogPos, RaftConfig, RaftMsg,
    RaftTimer, Redraw, RepliesRule, MAX_TERM,
};

/// What a Raft node keeps on stable storage (Figure 2 of the paper, with the log abstracted to
/// the position of its last entry).
///
/// It is written with [`Io::persist`] whenever it changes, *before* any message that depends on
/// it (a vote, a RequestVote for a new term, a response carrying a newly adopted term) is
/// pushed into the same [`Io`]; drivers carry actions out in order, so the record is on
/// stable storage before the message leaves. [`Raft::on_start`](Protocol::on_start) restores it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Stable {
    /// The latest term this node has seen.
    pub current_term: u64,
    /// The candidate this node voted for in `current_term`, if any.
    pub voted_for: Option<NodeId>,
    /// The last entry of the node's log (the log is stable state in Raft: Figure 2).
    pub last_log: LogPos,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Follower,
    PreCandidate,
    Candidate,
    Leader,
}

/// One Raft server's election state machine.
///
/// Build it with [`Raft::new`]; drive it through the [`Protocol`] methods as the
/// `election_core` crate docs describe (inputs in, actions drained after every input).
#[derive(Clone, Debug)]
pub struct Raft {
    id: NodeId,
    config: Arc<RaftConfig>,
    /// This node votes and may campaign ([`RaftConfig::is_voter`]); a learner only follows.
    voter: bool,
    state: State,
    current_term: u64,
    voted_for: Option<NodeId>,
    /// The last entry of this node's (abstract) log; stable.
    last_log: LogPos,
    /// Leader only: its log when it won its term, before its no-op entry (where a lagging
    /// follower's log stops at the latest).
    term_base: LogPos,
    /// The believed leader of `current_term` (itself when leading).
    leader: Option<NodeId>,
    /// When a valid AppendEntries from the current leader last arrived (PreVote's rule).
    leader_contact: Option<Time>,
    /// Votes (or pre-votes) received in the current round, by node index.
    granted: Vec<bool>,
    granted_count: u32,
    /// Pre-vote denials received in the current round, by node index.
    denied: Vec<bool>,
    denied_count: u32,
    /// Leader only, with CheckQuorum: when each node was last heard from in this term.
    last_heard: Vec<Time>,
    /// Leader only, with CheckQuorum every timeout: who answered an AppendEntries since the
    /// last check (etcd's `RecentActive`), by node index.
    recent_active: Vec<bool>,
    /// With [`Redraw::PerTerm`]: the election timeout drawn for this term and role, `None`
    /// until the next arming draws it.
    term_timeout: Option<Duration>,
    /// When this node last heard from a leader or granted a vote (hashicorp/raft's
    /// `lastContact`, read by [`FollowerRule::Hashicorp`]).
    last_contact: Option<Time>,
    /// `current_term`/`voted_for`/`last_log` changed since the last [`Io::persist`].
    dirty: bool,
    /// Leader only: where each node's log ends, as far as the leader knows, once it
    /// acknowledged an AppendEntries of this term (`None`: not yet); what a hand-over ranks
    /// the voters by (hashicorp/raft `pickServer` reads `matchIndex`).
    acked: Vec<Option<LogPos>>,
    /// Leader only, handing over: the transferee, and whether its `TimeoutNow` left (etcd-io/raft
    /// `leadTransferee`). While set, client entries are refused.
    transfer: Option<(NodeId, bool)>,
    /// The node was told it is about to be stopped ([`Protocol::on_handover`]): it no longer
    /// campaigns, nor answers a `TimeoutNow`, until it boots again.
    stopping: bool,
    /// [`Clock::Ticks`]: the node's own ticker, started in its own phase at boot.
    ticker: Option<Ticker>,
    /// [`Clock::Ticks`]: ticks since the count last restarted (etcd-io/raft `electionElapsed`).
    elapsed: u32,
    /// [`Clock::Ticks`]: the armed election timeout, in ticks (etcd-io/raft
    /// `randomizedElectionTimeout`); `u32::MAX` when nothing is armed (a learner, a leader).
    timeout_ticks: u32,
}

impl Raft {
    /// Node `id` of the cluster described by `config` (which should pass
    /// [`RaftConfig::validate`]). The node does nothing until `on_start`.
    pub fn new(id: NodeId, config: Arc<RaftConfig>) -> Raft {
        debug_assert!(
            id.0 >= 1 && id.0 <= config.n,
            "node id {id} outside 1..={}",
            config.n
        );
        Raft {
            id,
            voter: config.is_voter(id),
            config,
            state: State::Follower,
            current_term: 0,
            voted_for: None,
            last_log: LogPos::EMPTY,
            term_base: LogPos::EMPTY,
            leader: None,
            leader_contact: None,
            granted: Vec::new(),
            granted_count: 0,
            denied: Vec::new(),
            denied_count: 0,
            last_heard: Vec::new(),
            recent_active: Vec::new(),
            term_timeout: None,
            last_contact: None,
            dirty: false,
            acked: Vec::new(),
            transfer: None,
            stopping: false,
            ticker: None,
            elapsed: 0,
            timeout_ticks: u32::MAX,
        }
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The node's current stable state (what it has persisted or is about to persist).
    pub fn stable(&self) -> Stable {
        Stable {
            current_term: self.current_term,
            voted_for: self.voted_for,
            last_log: self.last_log,
        }
    }

    /// The position of the last entry of this node's log.
    pub fn last_log(&self) -> LogPos {
        self.last_log
    }

    /// True while the node is a PreVote candidate (reported as [`Role::Candidate`]).
    pub fn is_pre_candidate(&self) -> bool {
        self.state == State::PreCandidate
    }

    /// Leader stickiness (thesis §4.2.3), on with `check_quorum` as in etcd: this node leads,
    /// or knows a leader it heard from less than `timeout_min` ago (etcd's `inLease`:
    /// `checkQuorum && lead != None && electionElapsed < electionTimeout`).
    ///
    /// Under [`Clock::Ticks`] "less than `timeout_min` ago" is etcd's own test, fewer than `E`
    /// ticks of this node's ticker since its count last restarted.
    fn in_lease(&self, now: Time) -> bool {
        self.config.check_quorum && self.heard_leader(now)
    }

    /// This node leads, or knows a leader it heard from less than `timeout_min` ago (under
    /// [`Clock::Ticks`]: fewer than `E` of its own ticks ago, etcd's `lead != None &&
    /// electionElapsed < electionTimeout`). The leader lease of `check_quorum` and PreVote's
    /// leader-contact rule.
    fn heard_leader(&self, now: Time) -> bool {
        if self.state == State::Leader {
            return true;
        }
        match self.config.clock {
            Clock::Time => {
                self.leader.is_some()
                    && self
                        .leader_contact
                        .is_some_and(|t| now.saturating_since(t) < self.config.timeout_min)
            }
            Clock::Ticks => self.leader.is_some() && self.elapsed < self.config.election_ticks().0,
        }
    }

    /// Counting in ticks ([`Clock::Ticks`])?
    fn ticks(&self) -> bool {
        self.config.clock == Clock::Ticks
    }

    /// True unless this node is a learner (see the crate docs, "Learners").
    pub fn is_voter(&self) -> bool {
        self.voter
    }

    /// A majority of the voters: votes, pre-votes and CheckQuorum's contacts count towards it.
    fn quorum(&self) -> u32 {
        self.config.quorum()
    }

    /// Every other node, learners included: where AppendEntries go.
    fn others(&self) -> impl Iterator<Item = NodeId> + Clone {
        let me = self.id;
        all_nodes(self.config.n).filter(move |&p| p != me)
    }

    /// Every other voter: where RequestVote and PreVote go (etcd-io/raft `campaign` sends
    /// them to `r.trk.Voters.IDs()` only; hashicorp/raft `electSelf` and `preElectSelf` to
    /// the servers whose `Suffrage == Voter`).
    fn other_voters(&self) -> impl Iterator<Item = NodeId> + Clone {
        let me = self.id;
        all_nodes(self.config.voter_count()).filter(move |&p| p != me)
    }

    /// The election timeout to arm now, `U[timeout_min, timeout_max]`: a fresh draw at every
    /// arming ([`Redraw::EveryRearm`]), or the one drawn for this term and role
    /// ([`Redraw::PerTerm`], drawn at its first arming after [`Raft::redraw_point`]).
    ///
    /// Under [`Clock::Ticks`] the draw is a whole number of ticks `k`, uniform in `[E, end)`
    /// ([`RaftConfig::election_ticks`]; etcd-io/raft `resetRandomizedElectionTimeout`:
    /// `electionTimeout + rand.Intn(electionTimeout)`), returned as `k` tick periods.
    fn draw_timeout(&mut self, io: &mut Io<'_, Self>) -> Duration {
        let (lo, hi) = (self.config.timeout_min, self.config.timeout_max);
        let ticks = self.ticks().then(|| self.config.election_ticks());
        let period = self.config.timing.heartbeat;
        let draw = |io: &mut Io<'_, Self>| match ticks {
            None => io.uniform(lo, hi),
            Some((e, end)) => period * io.rng().random_range(e..end),
        };
        match self.config.redraw {
            Redraw::EveryRearm => draw(io),
            Redraw::PerTerm => *self.term_timeout.get_or_insert_with(|| draw(io)),
        }
    }

    /// Arms the election timer `timer` to fire `after` from now; under [`Clock::Ticks`],
    /// restarts the tick count instead (`electionElapsed = 0`) towards `after` in ticks
    /// (a whole number of them: [`Raft::draw_timeout`]).
    fn arm_election(&mut self, io: &mut Io<'_, Self>, timer: RaftTimer, after: Duration) {
        if self.ticks() {
            let period = self.config.timing.heartbeat.as_nanos().max(1);
            self.elapsed = 0;
            self.timeout_ticks = (after.as_nanos() / period).min(u128::from(u32::MAX)) as u32;
        } else {
            io.set_timer(timer, after);
        }
    }

    /// etcd's `reset(term)`: the node adopted a term or changed role, so under
    /// [`Redraw::PerTerm`] its next arming draws a new timeout.
    fn redraw_point(&mut self) {
        self.term_timeout = None;
    }

    /// Arms the follower's election timeout. A learner has none: it never campaigns
    /// (etcd-io/raft `tickElection` campaigns only if `promotable()`, false for a learner;
    /// hashicorp/raft `runFollower` starts an election only if `hasVote`), so it keeps
    /// following its leader until a leader of a newer term reaches it.
    fn reset_election_timer(&mut self, io: &mut Io<'_, Self>) {
        if !self.voter {
            return;
        }
        let after = self.draw_timeout(io);
        self.arm_election(io, RaftTimer::Election, after);
    }

    /// Writes the stable record if it changed. Called before every send and at the end of
    /// every input, so no message ever leaves ahead of the state it depends on.
    fn flush(&mut self, io: &mut Io<'_, Self>) {
        if self.dirty {
            io.persist(self.stable());
            self.dirty = false;
        }
    }

    fn send(&mut self, io: &mut Io<'_, Self>, to: NodeId, msg: RaftMsg) {
        self.flush_before_send(io);
        io.send(to, msg);
    }

    /// Sends `msg` to every other node, learners included (AppendEntries).
    fn broadcast(&mut self, io: &mut Io<'_, Self>, msg: RaftMsg) {
        self.flush_before_send(io);
        io.send_many(self.others(), &msg);
    }

    /// Sends `msg` to every other voter (RequestVote, PreVote).
    fn broadcast_voters(&mut self, io: &mut Io<'_, Self>, msg: RaftMsg) {
        self.flush_before_send(io);
        io.send_many(self.other_voters(), &msg);
    }

    /// Persists what changed before a message leaves, except a leader's under
    /// [`LeaderSend::Parallel`]: its record then follows at the end of the input (every
    /// [`Protocol`] entry point ends with [`Raft::flush`]).
    fn flush_before_send(&mut self, io: &mut Io<'_, Self>) {
        if !(self.state == State::Leader && self.config.leader_send == LeaderSend::Parallel) {
            self.flush(io);
        }
    }

    /// The term after `current_term`, or `None` once `current_term` is [`MAX_TERM`].
    fn next_term(&self) -> Option<u64> {
        (self.current_term < MAX_TERM).then(|| self.current_term + 1)
    }

    /// The term space is used up (`current_term` is [`MAX_TERM`]): no election can start, so
    /// stay (or become) a follower of whatever leader this term has and keep listening.
    fn cannot_advance(&mut self, io: &mut Io<'_, Self>) {
        match self.state {
            State::Follower => self.reset_election_timer(io),
            State::PreCandidate | State::Candidate => self.become_follower(io, self.leader),
            State::Leader => {}
        }
    }

    /// Adopts a newer term: no vote and no known leader in it yet.
    fn adopt_term(&mut self, term: u64) {
        debug_assert!(term > self.current_term);
        self.current_term = term;
        self.voted_for = None;
        self.leader = None;
        self.dirty = true;
        self.redraw_point();
    }

    /// Becomes (or stays) a follower of `leader`, swapping the role's timers for the
    /// failure detector when the role changes.
    fn become_follower(&mut self, io: &mut Io<'_, Self>, leader: Option<NodeId>) {
        let was = self.state;
        self.state = State::Follower;
        self.transfer = None;
        self.leader = leader;
        if was != State::Follower {
            self.redraw_point();
        }
        match was {
            State::Follower => {}
            State::PreCandidate | State::Candidate => {
                io.cancel_timer(RaftTimer::ElectionRetry);
                self.reset_election_timer(io);
            }
            State::Leader => {
                io.cancel_timer(RaftTimer::Heartbeat);
                io.cancel_timer(RaftTimer::CheckQuorum);
                self.reset_election_timer(io);
            }
        }
    }

    /// Starts a new vote tally in which this node has voted for itself.
    fn reset_tally(&mut self) {
        let n = self.config.n as usize;
        self.granted.clear();
        self.granted.resize(n, false);
        self.denied.clear();
        self.denied.resize(n, false);
        self.granted[self.id.index()] = true;
        self.granted_count = 1;
        self.denied_count = 0;
    }

    /// Counts `from`'s (pre-)vote, if `from` is a voter: a learner's is never counted.
    fn tally_grant(&mut self, from: NodeId) {
        if self.config.is_voter(from) && !self.granted[from.index()] {
            self.granted[from.index()] = true;
            self.granted_count += 1;
        }
    }

    fn tally_denial(&mut self, from: NodeId) {
        if self.config.is_voter(from) && !self.denied[from.index()] {
            self.denied[from.index()] = true;
            self.denied_count += 1;
        }
    }

    /// The follower's election timeout fired (or was forced by `on_suspect`).
    fn election_timeout(&mut self, io: &mut Io<'_, Self>) {
        if !self.voter || self.stopping {
            // A learner never campaigns (its timer is never armed; `on_suspect` ends here),
            // and neither does a node about to be stopped.
            return;
        }
        if self.config.pre_vote {
            self.start_pre_vote(io);
        } else {
            self.start_election(io);
        }
    }

    /// Thesis §9.6: ask for pre-votes for `current_term + 1` without changing any state that
    /// others can see or that is persisted.
    fn start_pre_vote(&mut self, io: &mut Io<'_, Self>) {
        let Some(term) = self.next_term() else {
            self.cannot_advance(io);
            return;
        };
        self.state = State::PreCandidate;
        self.leader = None;
        self.leader_contact = None;
        io.cancel_timer(RaftTimer::Election);
        let after = self.draw_timeout(io);
        self.arm_election(io, RaftTimer::ElectionRetry, after);
        self.reset_tally();
        if self.granted_count >= self.quorum() {
            self.start_election(io);
            return;
        }
        let last_log = self.last_log;
        self.broadcast_voters(io, RaftMsg::PreVote { term, last_log });
    }

    /// §5.2: increment the term, vote for self (persisted before the requests leave), ask
    /// every voter, and wait a fresh random timeout for the result.
    fn start_election(&mut self, io: &mut Io<'_, Self>) {
        self.campaign(io, false);
    }

    /// [`Raft::start_election`]; `transfer` marks a campaign a `TimeoutNow` started, whose
    /// RequestVotes say so (etcd-io/raft `campaign(campaignTransfer)`).
    fn campaign(&mut self, io: &mut Io<'_, Self>, transfer: bool) {
        let Some(term) = self.next_term() else {
            self.cannot_advance(io);
            return;
        };
        self.adopt_term(term);
        self.voted_for = Some(self.id);
        self.state = State::Candidate;
        self.leader_contact = None;
        io.cancel_timer(RaftTimer::Election);
        let after = self.draw_timeout(io);
        self.arm_election(io, RaftTimer::ElectionRetry, after);
        self.reset_tally();
        if self.granted_count >= self.quorum() {
            self.become_leader(io);
            return;
        }
        let last_log = self.last_log;
        self.broadcast_voters(
            io,
            RaftMsg::RequestVote {
                term,
                last_log,
                transfer,
            },
        );
    }

    fn become_leader(&mut self, io: &mut Io<'_, Self>) {
        debug_assert_eq!(self.state, State::Candidate);
        self.state = State::Leader;
        self.leader = Some(self.id);
        self.transfer = None;
        self.acked.clear();
        self.acked.resize(self.config.n as usize, None);
        // Raft §8 / thesis §6.4: a leader appends a no-op entry of its term when it takes
        // office (persisted before the heartbeat that ships it leaves).
        self.term_base = self.last_log;
        self.last_log = LogPos {
            term: self.current_term,
            index: self.term_base.index + 1,
        };
        self.dirty = true;
        self.redraw_point();
        io.cancel_timer(RaftTimer::ElectionRetry);
        io.cancel_timer(RaftTimer::Election);
        if self.config.check_quorum {
            // A new leader has just heard from a majority; every node gets one full
            // election timeout of grace from now.
            let now = io.now();
            self.last_heard.clear();
            self.last_heard.resize(self.config.n as usize, now);
            // etcd's `reset` clears every `RecentActive`; `becomeLeader` sets its own.
            self.recent_active.clear();
            self.recent_active.resize(self.config.n as usize, false);
            self.recent_active[self.id.index()] = true;
            if !self.ticks() {
                io.set_timer(RaftTimer::CheckQuorum, self.config.timeout_min);
            }
        }
        // etcd-io/raft `becomeLeader` → `reset`: the leader's tick count restarts too.
        self.elapsed = 0;
        self.timeout_ticks = u32::MAX;
        self.heartbeat(io);
    }

    /// Sends AppendEntries to every other node (the first one announces the new leader) and
    /// schedules the next. Each ships the leader's log up to its last entry, or for a lagging
    /// node up to [`Raft::shipped_to`].
    /// Under [`Clock::Ticks`] the next one goes with the next tick of the node's ticker
    /// ([`Raft::tick`]).
    fn heartbeat(&mut self, io: &mut Io<'_, Self>) {
        self.ship(io);
        if !self.ticks() {
            io.set_timer(RaftTimer::Heartbeat, self.config.timing.heartbeat);
        }
    }

    /// Sends the AppendEntries of [`Raft::heartbeat`] without scheduling the next.
    fn ship(&mut self, io: &mut Io<'_, Self>) {
        let term = self.current_term;
        if self.config.lagging.is_empty() {
            let log = self.last_log;
            self.broadcast(io, RaftMsg::AppendEntries { term, log });
        } else {
            for to in self.others() {
                let log = self.shipped_to(to);
                self.send(io, to, RaftMsg::AppendEntries { term, log });
            }
        }
    }

    /// Leader only: where `to`'s log ends once it takes this leader's entries. A node lagging
    /// `k` entries stops `k` entries short of the leader's last one, but never before the
    /// leader's `term_base` (the entries of earlier terms count as written; the term of an
    /// entry before `term_base` is not known to this abstract log).
    fn shipped_to(&self, to: NodeId) -> LogPos {
        let k = self.config.lag(to);
        match self.last_log.index.checked_sub(k) {
            Some(index) if index > self.term_base.index => LogPos {
                term: self.last_log.term,
                index,
            },
            _ if k == 0 => self.last_log,
            _ => self.term_base,
        }
    }

    /// CheckQuorum: step down once `timeout_min` has passed since the leader last had a
    /// majority of the voters (itself included) heard from; otherwise re-arm for the instant
    /// that happens. Learners are heard from but not counted (hashicorp/raft
    /// `checkLeaderLease` counts `Suffrage == Voter` servers only; etcd-io/raft
    /// `QuorumActive` asks the voters' majority config).
    fn check_quorum(&mut self, io: &mut Io<'_, Self>) {
        if self.config.check_quorum_every == CheckQuorumEvery::Timeout {
            self.check_quorum_periodic(io);
            return;
        }
        let now = io.now();
        self.last_heard[self.id.index()] = now;
        // The leader is a voter, and the voters are the first `voter_count` nodes.
        let mut times = self.last_heard[..self.config.voter_count() as usize].to_vec();
        let k = self.quorum() as usize - 1;
        // The k-th most recent contact: a majority has been heard from since `since`.
        let (_, &mut since, _) = times.select_nth_unstable_by(k, |a, b| b.cmp(a));
        let deadline = since + self.config.timeout_min;
        if deadline <= now {
            self.become_follower(io, None);
        } else {
            io.set_timer(RaftTimer::CheckQuorum, deadline - now);
        }
    }

    /// CheckQuorum every election timeout (etcd's `MsgCheckQuorum` in `stepLeader`): step down
    /// unless a majority of the voters, itself included, answered an AppendEntries since the
    /// last check; then forget who did and check again one `timeout_min` later.
    fn check_quorum_periodic(&mut self, io: &mut Io<'_, Self>) {
        let voters = self.config.voter_count() as usize;
        let active = self.recent_active[..voters].iter().filter(|&&a| a).count() as u32;
        if active < self.quorum() {
            self.become_follower(io, None);
            return;
        }
        for (i, a) in self.recent_active.iter_mut().enumerate() {
            *a = i == self.id.index();
        }
        if !self.ticks() {
            io.set_timer(RaftTimer::CheckQuorum, self.config.timeout_min);
        }
    }

    /// [`Clock::Ticks`]: one tick of the node's own ticker (etcd-io/raft `Node.Tick`, which
    /// etcd's server calls on every `r.ticker.C`). The leader runs `tickHeartbeat`: it counts
    /// towards its CheckQuorum every `E` ticks since it took office and ships an AppendEntries
    /// on every tick (`heartbeatTimeout` is one tick: the tick is the heartbeat interval). A
    /// follower or (pre-)candidate runs `tickElection`: it counts towards its armed timeout and,
    /// on reaching it, acts as its election timer would (a follower campaigns, a
    /// (pre-)candidate starts its next round), which restarts the count.
    fn tick(&mut self, io: &mut Io<'_, Self>) {
        if let Some(ticker) = self.ticker.as_mut() {
            let next = ticker.fired(io.now());
            io.set_timer(RaftTimer::Tick, next);
        }
        self.elapsed = self.elapsed.saturating_add(1);
        if self.state == State::Leader {
            if self.elapsed >= self.config.election_ticks().0 {
                self.elapsed = 0;
                if self.config.check_quorum {
                    self.check_quorum_periodic(io);
                }
            }
            if self.state == State::Leader {
                self.ship(io);
            }
            return;
        }
        if self.elapsed < self.timeout_ticks {
            return;
        }
        match self.state {
            State::Follower => self.election_timeout(io),
            State::PreCandidate => self.start_pre_vote(io),
            State::Candidate => self.start_election(io),
            State::Leader => unreachable!("handled above"),
        }
    }

    /// [`FollowerRule::Hashicorp`]'s periodic wake-up (`runFollower`'s `heartbeatTimer`): a
    /// contact less than `timeout_min` old means the leader is alive; sleep another
    /// timeout. Otherwise campaign.
    fn follower_wakes(&mut self, io: &mut Io<'_, Self>) {
        let now = io.now();
        let fresh = self
            .last_contact
            .is_some_and(|t| now.saturating_since(t) < self.config.timeout_min);
        if fresh {
            self.reset_election_timer(io);
        } else {
            self.election_timeout(io);
        }
    }

    /// [`FollowerRule::Hashicorp`]: a node that knows a leader other than `from` rejects a
    /// vote or pre-vote before looking at its term (hashicorp/raft `requestVote` and
    /// `requestPreVote`: "rejecting vote request since we have a leader").
    fn rejects_for_known_leader(&self, from: NodeId) -> bool {
        self.config.follower == FollowerRule::Hashicorp && self.leader.is_some_and(|l| l != from)
    }

    fn on_request_vote(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64, log: LogPos) {
        let current = self.current_term;
        if term < current {
            if self.config.replies == RepliesRule::Etcd {
                return;
            }
            self.send(
                io,
                from,
                RaftMsg::Vote {
                    term: current,
                    granted: false,
                },
            );
            return;
        }
        // One vote per term. A node that already knows this term's leader refuses too (any
        // winner needs a majority, and that leader already has one). §5.4.1: and only to a
        // candidate whose log is at least as up-to-date as this node's.
        let can_vote = match self.voted_for {
            Some(c) => c == from,
            None => self.leader.is_none(),
        };
        let grant = can_vote && log >= self.last_log;
        if !grant {
            self.send(
                io,
                from,
                RaftMsg::Vote {
                    term: current,
                    granted: false,
                },
            );
            return;
        }
        if self.voted_for.is_none() {
            self.voted_for = Some(from);
            self.dirty = true;
        }
        self.last_contact = Some(io.now());
        if self.state == State::Follower {
            if self.config.follower == FollowerRule::Reset {
                self.reset_election_timer(io);
            }
        } else {
            // Only a pre-candidate can get here (candidates and leaders voted for themselves).
            self.become_follower(io, None);
        }
        self.send(
            io,
            from,
            RaftMsg::Vote {
                term,
                granted: true,
            },
        );
    }

    fn on_vote(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64, granted: bool) {
        if term != self.current_term {
            return;
        }
        match self.state {
            State::Candidate if granted => {
                self.tally_grant(from);
                if self.granted_count >= self.quorum() {
                    self.become_leader(io);
                }
            }
            State::Leader if self.config.check_quorum => {
                // (etcd's RecentActive counts AppendEntries answers only.)
                self.last_heard[from.index()] = io.now();
            }
            // A candidate that is denied by a majority cannot win, but like the paper it simply
            // waits for its election timeout (someone else may win meanwhile).
            _ => {}
        }
    }

    fn on_pre_vote(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64, log: LogPos) {
        let current = self.current_term;
        let heard_leader = match self.config.clock {
            // (The original rule reads the contact time whatever the believed leader.)
            Clock::Time => {
                self.state == State::Leader
                    || self
                        .leader_contact
                        .is_some_and(|t| io.now().saturating_since(t) < self.config.timeout_min)
            }
            Clock::Ticks => self.heard_leader(io.now()),
        };
        // Thesis §9.6: a pre-vote is granted only if the real vote could be, so the
        // pre-candidate's log must be at least as up-to-date as this node's (§5.4.1).
        if self.config.replies == RepliesRule::Etcd && term > current && self.in_lease(io.now()) {
            // etcd's `inLease`: silence, not a refusal.
            return;
        }
        let grant = term > current && !heard_leader && log >= self.last_log;
        let term = if grant { term } else { current };
        self.send(
            io,
            from,
            RaftMsg::PreVoteResp {
                term,
                granted: grant,
            },
        );
    }

    fn on_pre_vote_granted(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64) {
        if self.state == State::PreCandidate && Some(term) == self.next_term() {
            self.tally_grant(from);
            if self.granted_count >= self.quorum() {
                self.start_election(io);
            }
        }
    }

    fn on_pre_vote_denied(&mut self, io: &mut Io<'_, Self>, from: NodeId) {
        if self.state == State::PreCandidate {
            self.tally_denial(from);
            // A majority is no longer possible: a majority still hears a leader. Go back to
            // waiting, with a fresh timeout, for it to show up (or to fail).
            if self.denied_count > self.config.voter_count() - self.quorum() {
                self.become_follower(io, None);
            }
        }
    }

    fn on_append_entries(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64, log: LogPos) {
        let current = self.current_term;
        if term < current {
            if self.config.replies == RepliesRule::Etcd
                && !(self.config.check_quorum || self.config.pre_vote)
            {
                return;
            }
            // Tell the stale leader about the newer term (it steps down on it).
            self.send(
                io,
                from,
                RaftMsg::AppendResp {
                    term: current,
                    success: false,
                },
            );
            return;
        }
        if self.state == State::Leader {
            // Two leaders in one term: impossible while majorities intersect and votes are
            // kept on stable storage. Ignore rather than adopt a rival.
            return;
        }
        if self.state == State::Follower {
            self.leader = Some(from);
            if self.config.follower == FollowerRule::Reset {
                self.reset_election_timer(io);
            }
        } else {
            self.become_follower(io, Some(from));
        }
        self.leader_contact = Some(io.now());
        self.last_contact = Some(io.now());
        // The follower's log becomes the shipped prefix of the leader's log (persisted before
        // the answer leaves). Entries of `term` come only from this leader, so a log already
        // ending in `term` is a prefix of the leader's: keep it if a reordered, older
        // AppendEntries ships less.
        let keep = self.last_log.term == term && self.last_log >= log;
        if !keep && self.last_log != log {
            self.last_log = log;
            self.dirty = true;
        }
        self.send(
            io,
            from,
            RaftMsg::AppendResp {
                term,
                success: true,
            },
        );
    }

    fn on_append_resp(&mut self, io: &mut Io<'_, Self>, from: NodeId, term: u64) {
        if self.state != State::Leader || term != self.current_term {
            return;
        }
        if self.config.check_quorum {
            self.last_heard[from.index()] = io.now();
            self.recent_active[from.index()] = true;
        }
        self.acked[from.index()] = Some(self.shipped_to(from));
        // The transferee answered the AppendEntries that brought it up to date (the leader
        // appends nothing while handing over): tell it to campaign now (etcd-io/raft
        // `stepLeader`, MsgAppResp: `if m.From == r.leadTransferee && pr.Match ==
        // r.raftLog.lastIndex() { r.sendTimeoutNow(m.From) }`).
        if let Some((to, false)) = self.transfer {
            if to == from {
                self.transfer = Some((to, true));
                self.send(io, to, RaftMsg::TimeoutNow { term });
            }
        }
    }

    /// The voter a leader hands over to: the most up-to-date other voter, as far as the
    /// leader knows (the position its acknowledged AppendEntries left it at; one that has not
    /// answered this term ranks last), the lowest id on ties; never a learner (hashicorp/raft
    /// `pickServer`: the voter with the highest `matchIndex`; etcd's server picks among
    /// `VotingMemberIDs()` too).
    fn transferee(&self) -> Option<NodeId> {
        self.other_voters()
            .max_by_key(|&v| (self.acked[v.index()], std::cmp::Reverse(v)))
    }

    /// A `TimeoutNow` from the leader of `term`: campaign at once, skipping PreVote and the
    /// election timeout (etcd-io/raft `stepFollower`, MsgTimeoutNow: `r.hup(campaignTransfer)`;
    /// thesis §3.10). A learner, a node being stopped and a stale message do nothing.
    fn on_timeout_now(&mut self, io: &mut Io<'_, Self>, term: u64) {
        if term == self.current_term
            && self.voter
            && !self.stopping
            && self.state == State::Follower
        {
            self.campaign(io, true);
        }
    }
}

impl Protocol for Raft {
    type Msg = RaftMsg;
    type Timer = RaftTimer;
    type Persist = Stable;

    /// Boots as a follower with the persisted term and vote (or term 0 and no vote) and arms
    /// the election timeout. Everything else is volatile and starts afresh.
    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Stable>) {
        let stable = stored.copied().unwrap_or_default();
        self.current_term = stable.current_term;
        self.voted_for = stable.voted_for;
        self.last_log = stable.last_log;
        self.term_base = LogPos::EMPTY;
        self.state = State::Follower;
        self.leader = None;
        self.leader_contact = None;
        self.granted.clear();
        self.denied.clear();
        self.granted_count = 0;
        self.denied_count = 0;
        self.last_heard.clear();
        self.recent_active.clear();
        self.term_timeout = None;
        self.last_contact = None;
        self.dirty = false;
        self.acked.clear();
        self.transfer = None;
        self.stopping = false;
        self.elapsed = 0;
        self.timeout_ticks = u32::MAX;
        self.ticker = None;
        if self.ticks() {
            // A restarted process starts a new ticker, in a phase of its own.
            let (ticker, first) = Ticker::start(io.now(), self.config.timing.heartbeat, io.rng());
            self.ticker = Some(ticker);
            io.set_timer(RaftTimer::Tick, first);
        }
        self.reset_election_timer(io);
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: RaftMsg) {
        // A term past MAX_TERM is one no node sends (the wire decoder rejects it too).
        if from == self.id || from.0 == 0 || from.0 > self.config.n || msg.term() > MAX_TERM {
            return;
        }
        match msg {
            // A learner takes no part in elections: a request for its vote or pre-vote (which
            // no candidate sends it: they ask the voters only) is ignored, neither granted nor
            // refused, and its term is not adopted. See the crate docs, "Learners".
            RaftMsg::RequestVote { .. } | RaftMsg::PreVote { .. } if !self.voter => {}
            // PreVote traffic is the one exception to "a higher term makes the receiver adopt
            // it": the request and its grant carry a term nobody has started yet.
            // hashicorp/raft: no pre-vote, and (below) no vote, while a leader is known; the
            // term is neither checked nor adopted.
            RaftMsg::PreVote { .. } if self.rejects_for_known_leader(from) => {
                let term = self.current_term;
                self.send(
                    io,
                    from,
                    RaftMsg::PreVoteResp {
                        term,
                        granted: false,
                    },
                );
            }
            RaftMsg::PreVote { term, last_log } => self.on_pre_vote(io, from, term, last_log),
            RaftMsg::PreVoteResp {
                term,
                granted: true,
            } => self.on_pre_vote_granted(io, from, term),
            // Leader stickiness (thesis §4.2.3; etcd, with CheckQuorum): "if a server receives a
            // RequestVote request within the minimum election timeout of hearing from a current
            // leader, it does not update its term or grant its vote" -- nor answer (etcd).
            RaftMsg::RequestVote {
                term,
                transfer: false,
                ..
            } if term > self.current_term && self.in_lease(io.now()) => {}
            // A transfer's campaign is granted regardless of a known leader (hashicorp/raft
            // `requestVote`: unless `req.LeadershipTransfer`).
            RaftMsg::RequestVote {
                transfer: false, ..
            } if self.rejects_for_known_leader(from) => {
                let term = self.current_term;
                self.send(
                    io,
                    from,
                    RaftMsg::Vote {
                        term,
                        granted: false,
                    },
                );
            }
            _ => {
                // §5.1: a newer term makes any node adopt it and become a follower.
                if msg.term() > self.current_term {
                    let was_follower = self.state == State::Follower;
                    self.adopt_term(msg.term());
                    self.become_follower(io, None);
                    // etcd's and raft-rs's `reset(term)` also restarts a follower's count
                    // (`electionElapsed = 0`) with the new draw; the paper's follower keeps
                    // its timer (only a heartbeat or a granted vote restarts it).
                    if was_follower && self.config.redraw == Redraw::PerTerm {
                        self.reset_election_timer(io);
                    }
                }
                match msg {
                    RaftMsg::RequestVote { term, last_log, .. } => {
                        self.on_request_vote(io, from, term, last_log)
                    }
                    RaftMsg::Vote { term, granted } => self.on_vote(io, from, term, granted),
                    RaftMsg::PreVoteResp { .. } => self.on_pre_vote_denied(io, from),
                    RaftMsg::AppendEntries { term, log } => {
                        self.on_append_entries(io, from, term, log)
                    }
                    RaftMsg::AppendResp { term, .. } => self.on_append_resp(io, from, term),
                    RaftMsg::TimeoutNow { term } => self.on_timeout_now(io, term),
                    RaftMsg::PreVote { .. } => unreachable!("handled above"),
                }
            }
        }
        self.flush(io);
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: RaftTimer) {
        match (timer, self.state) {
            (RaftTimer::Election, State::Follower) => match self.config.follower {
                FollowerRule::Reset => self.election_timeout(io),
                FollowerRule::Hashicorp => self.follower_wakes(io),
            },
            (RaftTimer::ElectionRetry, State::PreCandidate) => self.start_pre_vote(io),
            (RaftTimer::ElectionRetry, State::Candidate) => self.start_election(io),
            (RaftTimer::Heartbeat, State::Leader) => self.heartbeat(io),
            (RaftTimer::CheckQuorum, State::Leader) if self.config.check_quorum => {
                self.check_quorum(io)
            }
            (RaftTimer::Tick, _) if self.ticks() => self.tick(io),
            // A timer of a role the node has left (drivers drop cancelled timers; be robust).
            _ => {}
        }
        self.flush(io);
    }

    /// A client entry: a leader appends it to its log in its term (§5.3), persisted before the
    /// next AppendEntries ships it (in parallel with it under [`LeaderSend::Parallel`]);
    /// followers adopt it with that AppendEntries, so a node cut off
    /// meanwhile falls behind by every entry committed without it (§5.4.1 then decides).
    fn on_client_entry(&mut self, io: &mut Io<'_, Self>) {
        // A leader handing over refuses proposals (etcd-io/raft `stepLeader`: MsgProp is
        // dropped while `leadTransferee != None`).
        if self.state != State::Leader || self.transfer.is_some() {
            return;
        }
        let Some(index) = self.last_log.index.checked_add(1) else {
            return;
        };
        self.last_log = LogPos {
            term: self.current_term,
            index,
        };
        self.dirty = true;
        if self.config.append == AppendRule::Immediate {
            // `send` persists the new entry first, unless `LeaderSend::Parallel`.
            self.ship(io);
        }
        self.flush(io);
    }

    /// A follower acts as if its election timeout fired. A (pre-)candidate is already
    /// electing (its retry timer runs) and a leader suspects no one: both ignore it. A learner
    /// never campaigns, so it ignores it too.
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        if self.state == State::Follower {
            self.election_timeout(io);
        }
        self.flush(io);
    }

    /// The node is about to be stopped. A leader transfers its leadership (thesis §3.10;
    /// etcd-io/raft `MsgTransferLeader`, which etcd's server sends on a graceful stop,
    /// `TryTransferLeadershipOnShutdown`; hashicorp/raft `LeadershipTransfer`): it picks the
    /// transferee (the most up-to-date other voter, lowest id on ties, never a learner), refuses client entries from now on, ships it its
    /// whole log, and once it answers sends it `TimeoutNow`; the transferee campaigns at once
    /// with `transfer` set, which lets it past PreVote and every voter's leader stickiness.
    /// The leader steps down when the transferee's higher term reaches it. There is no abort
    /// timer (etcd aborts after an election timeout): the node is stopped anyway, and a
    /// transfer that did not finish by then ends as a crash failover. A (pre-)candidate stops
    /// campaigning; from now on no role of this node campaigns again before it boots.
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        self.stopping = true;
        match self.state {
            State::Leader => {
                if self.transfer.is_none() {
                    if let Some(to) = self.transferee() {
                        self.transfer = Some((to, false));
                        let (term, log) = (self.current_term, self.last_log);
                        self.send(io, to, RaftMsg::AppendEntries { term, log });
                    }
                }
            }
            State::PreCandidate | State::Candidate => self.become_follower(io, None),
            State::Follower => {}
        }
        self.flush(io);
    }

    /// A majority of the voters when some nodes are learners ([`QuorumRule::Voters`]), of
    /// every node otherwise ([`QuorumRule::Members`]).
    fn quorum_rule(&self) -> QuorumRule {
        let k = self.config.voter_count();
        if k < self.config.n {
            QuorumRule::Voters(k)
        } else {
            QuorumRule::Members
        }
    }

    fn status(&self) -> Status {
        let role = match self.state {
            State::Follower => Role::Follower,
            State::PreCandidate | State::Candidate => Role::Candidate,
            State::Leader => Role::Leader,
        };
        Status {
            role,
            leader: self.leader,
            epoch: Some(self.current_term),
        }
    }
}

#[cfg(test)]
mod tests;
