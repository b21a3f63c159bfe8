//! One bully node as a pure state machine (see the crate docs for the algorithm).

use std::sync::Arc;

use election_core::{majority, Io, NodeId, Protocol, QuorumRule, Role, Status, Time};

use crate::config::{BullyConfig, Rejoin};
use crate::message::{BullyMsg, BullyTimer};

/// Where a node is in the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Follows `leader`; its failure detector is armed.
    Follower,
    /// Rejoining under `rejoin = defer`: listening for a leader's heartbeat, knows no leader.
    Listening,
    /// Sent ELECTION, waiting `t_elec` for an OK.
    Electing,
    /// Yielded to a higher node (or, under `quorum`, failed to gather a majority), waiting
    /// `t_coord` for a COORDINATOR before starting again.
    Waiting,
    /// Declared itself coordinator; heartbeats every `timing.heartbeat`.
    Leader,
    /// About to be stopped on purpose ([`Protocol::on_handover`]): takes no part in anything
    /// (answers no ELECTION, claims nothing) until it boots again.
    Stopping,
}

/// A bully node.
///
/// Built with [`Bully::new`] and driven through [`Protocol`]: `on_start` at boot and at every
/// recovery, then `on_message`, `on_timer` and `on_suspect`, draining the [`Io`] actions after
/// each. [`Protocol::status`] reports role Candidate while electing or waiting for a
/// COORDINATOR, Leader after declaring, Follower otherwise; the believed coordinator as
/// leader; and the epoch only under the `epoch` option.
#[derive(Clone, Debug)]
pub struct Bully {
    id: NodeId,
    cfg: Arc<BullyConfig>,
    mode: Mode,
    leader: Option<NodeId>,
    /// Highest epoch seen (always 0 without the `epoch` option).
    epoch: u64,
    /// The epoch this node declared in, while it leads.
    led_epoch: u64,
    /// Start time of the current election; identifies the round ACKs answer.
    round: Time,
    /// `quorum`: which lower nodes ACKed this round (indexed by node).
    answered: Vec<bool>,
    /// `quorum`: how many entries of `answered` are set.
    answers: u32,
    /// `quorum`, leader: send time of the freshest heartbeat (or the declaration) each node
    /// acknowledged (indexed by node).
    last_ack: Vec<Option<Time>>,
    /// Reused buffer for the lease computation.
    scratch: Vec<Time>,
    /// A higher node that resigned (RESIGN): left out of elections until it is heard from
    /// again.
    resigned: Option<NodeId>,
}

impl Bully {
    /// Node `id` of the cluster described by `config` (shared by all nodes).
    ///
    /// # Panics
    /// If `id` is not in `1..=config.n`.
    pub fn new(id: NodeId, config: Arc<BullyConfig>) -> Self {
        assert!(
            id.0 >= 1 && id.0 <= config.n,
            "node id {id} outside 1..={}",
            config.n
        );
        let n = if config.quorum { config.n as usize } else { 0 };
        Bully {
            id,
            mode: Mode::Listening,
            leader: None,
            epoch: 0,
            led_epoch: 0,
            round: Time::ZERO,
            answered: vec![false; n],
            answers: 0,
            last_ack: vec![None; n],
            scratch: Vec::with_capacity(n),
            resigned: None,
            cfg: config,
        }
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    fn n(&self) -> u32 {
        self.cfg.n
    }

    /// The higher ids an election asks, leaving out one that resigned.
    fn higher(&self) -> impl Iterator<Item = NodeId> {
        let resigned = self.resigned;
        (self.id.0 + 1..=self.n())
            .map(NodeId)
            .filter(move |&j| Some(j) != resigned)
    }

    /// Nobody higher to ask: the highest id, or the highest but one that resigned.
    fn is_top(&self) -> bool {
        self.higher().next().is_none()
    }

    fn lower(&self) -> impl Iterator<Item = NodeId> {
        (1..self.id.0).map(NodeId)
    }

    fn others(&self) -> impl Iterator<Item = NodeId> {
        let me = self.id;
        (1..=self.n()).map(NodeId).filter(move |&j| j != me)
    }

    /// The epoch field of outgoing messages.
    fn e(&self) -> Option<u64> {
        self.cfg.epoch.then_some(self.epoch)
    }

    fn quorum_met(&self) -> bool {
        !self.cfg.quorum || 1 + self.answers >= majority(self.n())
    }

    fn cancel_all(&self, io: &mut Io<'_, Self>) {
        for t in [
            BullyTimer::Detect,
            BullyTimer::Elect,
            BullyTimer::Coord,
            BullyTimer::Heartbeat,
            BullyTimer::Listen,
            BullyTimer::Lease,
        ] {
            io.cancel_timer(t);
        }
    }

    /// Start (or restart) an election: ELECTION to every higher id (and, under `quorum`, as
    /// a probe to every lower id), then wait `t_elec` for an OK. The highest id has nobody to
    /// ask and declares at once (under `quorum`, as soon as a majority answered).
    fn start_election(&mut self, io: &mut Io<'_, Self>) {
        self.cancel_all(io);
        self.mode = Mode::Electing;
        self.leader = None;
        self.round = io.now();
        let stamp = if self.cfg.quorum {
            self.answered.fill(false);
            self.answers = 0;
            Some(self.round)
        } else {
            None
        };
        let msg = BullyMsg::Election {
            epoch: self.e(),
            stamp,
        };
        io.send_many(self.higher(), &msg);
        if self.cfg.quorum {
            io.send_many(self.lower(), &msg);
        }
        if self.is_top() && self.quorum_met() {
            self.declare(io);
        } else {
            io.set_timer(BullyTimer::Elect, self.cfg.t_elec);
        }
    }

    /// No OK came (and, under `quorum`, a majority answered): become coordinator.
    fn declare(&mut self, io: &mut Io<'_, Self>) {
        self.cancel_all(io);
        self.mode = Mode::Leader;
        self.leader = Some(self.id);
        if self.cfg.epoch {
            // Never past what the wire accepts: at the ceiling (2^48 elections, or a member's
            // forged epoch) a coordinator declares the ceiling again rather than an epoch
            // every peer would refuse.
            self.epoch = self.epoch.saturating_add(1).min(crate::MAX_WIRE_EPOCH);
            self.led_epoch = self.epoch;
            io.persist(self.epoch);
        }
        io.send_many(self.lower(), &BullyMsg::Coordinator { epoch: self.e() });
        io.set_timer(BullyTimer::Heartbeat, self.cfg.timing.heartbeat);
        if self.cfg.quorum {
            // The lower nodes that answered this round are receiving our COORDINATOR now,
            // which resets their detectors no earlier than now: the lease starts now.
            let now = io.now();
            for (slot, &ok) in self.last_ack.iter_mut().zip(&self.answered) {
                *slot = ok.then_some(now);
            }
            self.check_lease(io);
        }
    }

    /// Become (or stay) a follower of `leader`: arm the failure detector afresh.
    fn follow(&mut self, io: &mut Io<'_, Self>, leader: NodeId) {
        if self.mode != Mode::Follower {
            self.cancel_all(io);
        }
        self.mode = Mode::Follower;
        self.leader = Some(leader);
        let after = self.cfg.timing.draw_detect(io);
        io.set_timer(BullyTimer::Detect, after);
    }

    /// `quorum`: when the majority's oldest acknowledgement will be older than
    /// `detect_timeout`; `None` when the node alone is a majority.
    fn lease_expiry(&mut self) -> Option<Time> {
        let need = majority(self.n()) as usize - 1;
        if need == 0 {
            return None;
        }
        self.scratch.clear();
        let me = self.id.index();
        self.scratch.extend(
            self.last_ack
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != me)
                .filter_map(|(_, t)| *t),
        );
        if self.scratch.len() < need {
            return Some(Time::ZERO);
        }
        self.scratch.sort_unstable_by(|a, b| b.cmp(a));
        Some(self.scratch[need - 1] + self.cfg.timing.detect_timeout)
    }

    /// `quorum`, leader: step down if the lease ran out, else re-arm the lease timer for the
    /// moment it would.
    fn check_lease(&mut self, io: &mut Io<'_, Self>) {
        match self.lease_expiry() {
            None => {}
            Some(at) if at <= io.now() => self.start_election(io),
            Some(at) => io.set_timer(BullyTimer::Lease, at - io.now()),
        }
    }

    fn heartbeat(&mut self, io: &mut Io<'_, Self>) {
        let msg = BullyMsg::Heartbeat {
            epoch: self.e(),
            stamp: self.cfg.quorum.then_some(io.now()),
        };
        io.send_many(self.others(), &msg);
        io.set_timer(BullyTimer::Heartbeat, self.cfg.timing.heartbeat);
    }

    fn ack_heartbeat(&self, io: &mut Io<'_, Self>, to: NodeId, stamp: Option<Time>) {
        if let (true, Some(stamp)) = (self.cfg.quorum, stamp) {
            io.send(
                to,
                BullyMsg::HeartbeatAck {
                    epoch: self.e(),
                    stamp,
                },
            );
        }
    }

    /// A lower node claims leadership (COORDINATOR or HEARTBEAT from `from < self.id`).
    /// Returns true if the node accepted it as its leader.
    fn lower_claims(&mut self, io: &mut Io<'_, Self>, from: NodeId) -> bool {
        match self.mode {
            // Already following it: only `rejoin = defer` gets here.
            Mode::Follower if self.leader == Some(from) => {
                self.follow(io, from);
                true
            }
            Mode::Listening if self.cfg.rejoin == Rejoin::Defer => {
                self.follow(io, from);
                true
            }
            // Our own election will overrule it.
            Mode::Electing | Mode::Waiting | Mode::Stopping => false,
            // Bully back.
            Mode::Follower | Mode::Listening | Mode::Leader => {
                self.start_election(io);
                false
            }
        }
    }
}

impl Protocol for Bully {
    type Msg = BullyMsg;
    type Timer = BullyTimer;
    /// The epoch (`epoch` option only).
    type Persist = u64;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&u64>) {
        self.leader = None;
        self.epoch = if self.cfg.epoch {
            stored.copied().unwrap_or(0)
        } else {
            0
        };
        self.led_epoch = 0;
        self.answers = 0;
        self.answered.fill(false);
        self.last_ack.fill(None);
        self.resigned = None;
        match self.cfg.rejoin {
            Rejoin::Eager => self.start_election(io),
            Rejoin::Defer => {
                self.cancel_all(io);
                self.mode = Mode::Listening;
                io.set_timer(BullyTimer::Listen, self.cfg.listen_window());
            }
        }
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: BullyMsg) {
        if from == self.id || from.0 == 0 || from.0 > self.n() {
            return;
        }
        if self.mode == Mode::Stopping {
            return; // on its way out: takes no part
        }
        if self.resigned == Some(from) && !matches!(msg, BullyMsg::Resign { .. }) {
            self.resigned = None; // it is back
        }
        let incoming = msg.epoch().unwrap_or(0);
        // Fencing: leadership claims from an older epoch are ignored.
        let stale = self.cfg.epoch && incoming < self.epoch;
        let newer = self.cfg.epoch && incoming > self.epoch;
        if newer {
            self.epoch = incoming;
            io.persist(incoming);
        }
        match msg {
            BullyMsg::Election { .. } if from < self.id => {
                io.send(from, BullyMsg::Ok { epoch: self.e() });
                match self.mode {
                    Mode::Electing | Mode::Waiting => {}
                    // A sitting leader is the outcome of an election already held: it
                    // re-announces itself to the asker instead of holding another.
                    Mode::Leader if self.epoch == self.led_epoch => {
                        io.send(from, BullyMsg::Coordinator { epoch: self.e() });
                    }
                    Mode::Leader => {} // superseded: re-elected below
                    Mode::Follower | Mode::Listening => self.start_election(io),
                    Mode::Stopping => unreachable!("returned above"),
                }
            }
            BullyMsg::Election { stamp, .. } => {
                // A higher candidate's quorum probe.
                if let Some(stamp) = stamp {
                    io.send(
                        from,
                        BullyMsg::Ack {
                            epoch: self.e(),
                            stamp,
                        },
                    );
                }
            }
            BullyMsg::Ok { .. } => {
                if from > self.id && self.mode == Mode::Electing {
                    self.mode = Mode::Waiting;
                    io.cancel_timer(BullyTimer::Elect);
                    io.set_timer(BullyTimer::Coord, self.cfg.t_coord());
                }
            }
            BullyMsg::Ack { stamp, .. } => {
                let i = from.index();
                if self.mode == Mode::Electing
                    && from < self.id
                    && stamp == self.round
                    && i < self.answered.len()
                    && !self.answered[i]
                {
                    self.answered[i] = true;
                    self.answers += 1;
                    if self.is_top() && self.quorum_met() {
                        self.declare(io);
                    }
                }
            }
            BullyMsg::Coordinator { .. } | BullyMsg::Heartbeat { .. } if stale => {}
            BullyMsg::Coordinator { .. } => {
                if from > self.id {
                    self.follow(io, from);
                } else {
                    self.lower_claims(io, from);
                }
            }
            BullyMsg::Heartbeat { stamp, .. } => {
                if self.mode == Mode::Follower && self.leader == Some(from) {
                    self.follow(io, from);
                    self.ack_heartbeat(io, from, stamp);
                } else if from > self.id {
                    // Keep following a higher believed leader unless the claim is newer.
                    let keep = self.mode == Mode::Follower
                        && self.leader.is_some_and(|l| l > from)
                        && !newer;
                    if !keep {
                        self.follow(io, from);
                        self.ack_heartbeat(io, from, stamp);
                    }
                } else if self.lower_claims(io, from) {
                    self.ack_heartbeat(io, from, stamp);
                }
            }
            BullyMsg::Resign { .. } if stale => {}
            BullyMsg::Resign { .. } => {
                self.resigned = Some(from);
                // Elect now, without waiting for the detector; a node already electing
                // leaves the resigner out of its next round. A node waiting for the
                // resigner's COORDINATOR starts again at once.
                match self.mode {
                    Mode::Follower | Mode::Listening => self.start_election(io),
                    Mode::Waiting => self.start_election(io),
                    Mode::Electing | Mode::Leader | Mode::Stopping => {}
                }
            }
            BullyMsg::HeartbeatAck { stamp, .. } => {
                let i = from.index();
                if self.mode == Mode::Leader && !stale && i < self.last_ack.len() {
                    let slot = &mut self.last_ack[i];
                    *slot = Some(slot.map_or(stamp, |t| t.max(stamp)));
                }
            }
        }
        // A leader that learns of a newer epoch holds an election to lead in the newest one.
        if self.mode == Mode::Leader && self.epoch > self.led_epoch {
            self.start_election(io);
        }
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: BullyTimer) {
        match (timer, self.mode) {
            (BullyTimer::Detect, Mode::Follower) => self.start_election(io),
            (BullyTimer::Listen, Mode::Listening) => self.start_election(io),
            (BullyTimer::Elect, Mode::Electing) => {
                if self.quorum_met() {
                    self.declare(io);
                } else {
                    // Not enough of the cluster answered: wait and try again.
                    self.mode = Mode::Waiting;
                    io.set_timer(BullyTimer::Coord, self.cfg.t_coord());
                }
            }
            (BullyTimer::Coord, Mode::Waiting) => self.start_election(io),
            (BullyTimer::Heartbeat, Mode::Leader) => self.heartbeat(io),
            (BullyTimer::Lease, Mode::Leader) => self.check_lease(io),
            _ => {} // a timer of a mode the node has left
        }
    }

    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        if matches!(self.mode, Mode::Follower | Mode::Listening) {
            self.start_election(io);
        }
    }

    /// The coordinator resigns: RESIGN to every other node, which elect at once without it
    /// (Garcia-Molina's paper has no resignation; this is the planned stop a deployment adds:
    /// a leader that steps down on shutdown instead of leaving the others to detect it).
    /// Any node about to be stopped then takes no part until it boots again.
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        let was_leader = self.mode == Mode::Leader;
        self.cancel_all(io);
        self.mode = Mode::Stopping;
        self.leader = None;
        if was_leader {
            io.send_many(self.others(), &BullyMsg::Resign { epoch: self.e() });
        }
    }

    fn quorum_rule(&self) -> QuorumRule {
        // The plain bully elects among whoever is alive; with `quorum` it needs a majority.
        if self.cfg.quorum {
            QuorumRule::Members
        } else {
            QuorumRule::LiveMembers
        }
    }

    fn status(&self) -> Status {
        Status {
            role: match self.mode {
                Mode::Follower | Mode::Listening | Mode::Stopping => Role::Follower,
                Mode::Electing | Mode::Waiting => Role::Candidate,
                Mode::Leader => Role::Leader,
            },
            leader: self.leader,
            epoch: self.cfg.epoch.then_some(self.epoch),
        }
    }
}
