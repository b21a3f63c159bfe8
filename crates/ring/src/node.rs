//! One ring node: the Chang–Roberts rules, the hop-acknowledgement layer and the leader's
//! heartbeats.

use std::collections::VecDeque;
use std::sync::Arc;

use election_core::{Io, NodeId, Protocol, QuorumRule, Role, Status, Time};

use crate::config::RingConfig;
use crate::message::{Hop, RingMsg, RingTimer};

/// What a ring hop carries: the kind, the id it is about and the instance number (see
/// [`Hop::round`]; unused without `hop_acks`). The hop number is added when it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    Election(NodeId, u64),
    Elected(NodeId, u64),
}

impl Body {
    /// The node whose id the message carries: the candidate or the leader.
    fn owner(self) -> NodeId {
        match self {
            Body::Election(id, _) | Body::Elected(id, _) => id,
        }
    }

    fn to_msg(self, seq: Option<u32>) -> RingMsg {
        match self {
            Body::Election(id, round) => RingMsg::Election {
                id,
                hop: seq.map(|seq| Hop { seq, round }),
            },
            Body::Elected(leader, round) => RingMsg::Elected {
                leader,
                hop: seq.map(|seq| Hop { seq, round }),
            },
        }
    }
}

/// A hop waiting for its ACK.
#[derive(Clone, Copy, Debug)]
struct Pending {
    seq: u32,
    body: Body,
    /// Ring distance from this node to the node it was sent to (1 = the successor).
    offset: usize,
    deadline: Time,
}

/// One node of a Chang–Roberts ring. See the crate documentation for the algorithm.
///
/// Build one per node with [`Ring::new`] and drive it through [`election_core::Protocol`].
#[derive(Clone, Debug)]
pub struct Ring {
    id: NodeId,
    config: Arc<RingConfig>,
    /// The ring order, identical at every node.
    order: Vec<NodeId>,
    /// This node's position in `order`.
    pos: usize,
    /// Chang–Roberts' "participant" mark.
    participant: bool,
    /// True once this node saw its own ELECTION return (and until it steps down).
    leading: bool,
    /// About to be stopped on purpose ([`Protocol::on_handover`]): a relay that passes every
    /// ELECTION and ELECTED on unchanged and competes in nothing, until it boots again.
    stopping: bool,
    /// The recorded leader (itself when leading).
    leader: Option<NodeId>,
    /// The next hop number to use.
    next_seq: u32,
    /// The next instance number for a candidacy or announcement of this node's own.
    next_round: u64,
    /// The instance number of this node's latest candidacy.
    candidacy: Option<u64>,
    /// Unacknowledged hops, in sending order (so in deadline order).
    pending: VecDeque<Pending>,
    /// With `hop_acks`: per originator (index = id − 1), the newest instance of its
    /// ELECTION / ELECTED this node handled (0: none; instance numbers start at 1), to drop
    /// second copies and stale instances.
    seen_election: Vec<u64>,
    seen_elected: Vec<u64>,
}

impl Ring {
    /// Node `id` of the cluster described by `config`.
    ///
    /// # Panics
    /// If `id` is not in `1..=config.n`.
    pub fn new(id: NodeId, config: Arc<RingConfig>) -> Self {
        assert!(
            (1..=config.n).contains(&id.0),
            "node id {id} outside 1..={}",
            config.n
        );
        let order = config.ring_order();
        let pos = order
            .iter()
            .position(|&x| x == id)
            .expect("ring order is a permutation of 1..=n");
        Ring {
            id,
            config,
            order,
            pos,
            participant: false,
            leading: false,
            stopping: false,
            leader: None,
            next_seq: 0,
            next_round: 0,
            candidacy: None,
            pending: VecDeque::new(),
            seen_election: Vec::new(),
            seen_elected: Vec::new(),
        }
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The node `offset` positions downstream (1 = the successor).
    pub fn downstream(&self, offset: usize) -> NodeId {
        self.order[(self.pos + offset) % self.order.len()]
    }

    /// True while the node takes part in an election (Chang–Roberts' participant mark).
    pub fn is_participant(&self) -> bool {
        self.participant
    }

    /// Number of hops still waiting for an acknowledgement.
    pub fn unacknowledged(&self) -> usize {
        self.pending.len()
    }

    fn fresh_round(&mut self) -> u64 {
        let r = self.next_round;
        self.next_round = self.next_round.wrapping_add(1);
        r
    }

    // ----- hop layer -------------------------------------------------------------------

    /// Sends `body` to the node `offset` positions downstream, tracking the ACK if
    /// `hop_acks` is on. If every other node has been skipped the message has come back to
    /// this node, which handles it itself.
    fn send_hop(&mut self, io: &mut Io<'_, Self>, body: Body, offset: usize) {
        if offset >= self.order.len() {
            self.returned_to_self(io, body);
            return;
        }
        let to = self.downstream(offset);
        if !self.config.hop_acks {
            io.send(to, body.to_msg(None));
            return;
        }
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        io.send(to, body.to_msg(Some(seq)));
        if self.pending.is_empty() {
            io.set_timer(RingTimer::Hop, self.config.t_hop);
        }
        self.pending.push_back(Pending {
            seq,
            body,
            offset,
            deadline: io.now() + self.config.t_hop,
        });
    }

    /// A hop skipped every other node (or the ring has one node): this node is alone in
    /// its part of the ring.
    fn returned_to_self(&mut self, io: &mut Io<'_, Self>, body: Body) {
        match body {
            // Our own candidacy went all the way round: nobody reachable is higher.
            Body::Election(id, round) if id == self.id => self.own_candidacy_returned(io, round),
            // Only reachable when the owner was skipped, which drops the message first.
            Body::Election(..) => {}
            // The announcement has reached everyone reachable.
            Body::Elected(..) => {}
        }
    }

    fn rearm_hop(&mut self, io: &mut Io<'_, Self>) {
        match self.pending.front() {
            Some(p) => {
                let after = p.deadline - io.now();
                io.set_timer(RingTimer::Hop, after);
            }
            None => io.cancel_timer(RingTimer::Hop),
        }
    }

    fn on_ack(&mut self, io: &mut Io<'_, Self>, seq: u32) {
        if let Some(i) = self.pending.iter().position(|p| p.seq == seq) {
            self.pending.remove(i);
            if i == 0 {
                self.rearm_hop(io);
            }
        }
        // Otherwise a late ACK for a hop already skipped (or from a previous life): ignore.
    }

    /// Every hop whose ACK is overdue skips its silent target and is resent one position
    /// further on.
    fn on_hop_timeout(&mut self, io: &mut Io<'_, Self>) {
        let now = io.now();
        // Only hops pending on entry: resends go to the back with later deadlines.
        let mut budget = self.pending.len();
        while budget > 0 {
            budget -= 1;
            match self.pending.front() {
                Some(p) if p.deadline <= now => {}
                _ => break,
            }
            let p = self.pending.pop_front().expect("front checked");
            let silent = self.downstream(p.offset);
            if silent == p.body.owner() {
                // The message's owner is gone. An ELECTION for it would circle forever
                // (every live node is lower and forwards it), an ELECTED for it has
                // reached everyone: drop it. A participant that was waiting for that
                // candidate starts again at once (past the dead node) instead of waiting
                // for its bound.
                if matches!(p.body, Body::Election(..)) && self.participant && !self.leading {
                    self.start_election_at(io, p.offset + 1);
                }
                continue;
            }
            self.send_hop(io, p.body, p.offset + 1);
        }
        self.rearm_hop(io);
    }

    /// With `hop_acks`: true if this instance, or a newer one from the same originator, was
    /// handled here before (a second copy, or a superseded instance); records it otherwise.
    fn is_second_copy(&mut self, body: Body) -> bool {
        if !self.config.hop_acks {
            return false;
        }
        let (seen, id, round) = match body {
            Body::Election(id, round) => (&mut self.seen_election, id, round),
            Body::Elected(id, round) => (&mut self.seen_elected, id, round),
        };
        if seen.is_empty() {
            *seen = vec![0; self.order.len()];
        }
        let slot = &mut seen[id.index()];
        if *slot >= round {
            return true;
        }
        *slot = round;
        false
    }

    // ----- Chang–Roberts ----------------------------------------------------------------

    /// Marks this node participant; a participant forgets any leader it believed in.
    fn join(&mut self, io: &mut Io<'_, Self>) {
        self.participant = true;
        self.leader = None;
        io.cancel_timer(RingTimer::Detect);
    }

    /// Passes `ELECTION` downstream and (with `hop_acks`) restarts the election bound.
    fn send_election(&mut self, io: &mut Io<'_, Self>, body: Body, offset: usize) {
        if self.config.hop_acks {
            io.set_timer(RingTimer::Restart, self.config.restart_bound());
        }
        self.send_hop(io, body, offset);
    }

    /// Initiates (or restarts) an election with this node as candidate, sending its
    /// ELECTION to the node `offset` positions downstream.
    fn start_election_at(&mut self, io: &mut Io<'_, Self>, offset: usize) {
        self.join(io);
        let round = self.fresh_round();
        self.candidacy = Some(round);
        self.send_election(io, Body::Election(self.id, round), offset);
    }

    fn own_candidacy_returned(&mut self, io: &mut Io<'_, Self>, round: u64) {
        let current = !self.config.hop_acks || self.candidacy == Some(round);
        if self.participant && !self.leading && current {
            self.become_leader(io);
        }
        // Otherwise a stale instance: a restart superseded it, or the node has since
        // followed a leader.
    }

    fn become_leader(&mut self, io: &mut Io<'_, Self>) {
        self.leading = true;
        self.participant = false;
        self.leader = Some(self.id);
        io.cancel_timer(RingTimer::Detect);
        io.cancel_timer(RingTimer::Restart);
        io.set_timer(RingTimer::Heartbeat, self.config.timing.heartbeat);
        self.announce(io);
    }

    /// Sends a fresh `ELECTED(own id)` round the ring.
    fn announce(&mut self, io: &mut Io<'_, Self>) {
        let round = self.fresh_round();
        self.send_hop(io, Body::Elected(self.id, round), 1);
    }

    /// Records `leader` as leader and goes back to watching it.
    fn follow(&mut self, io: &mut Io<'_, Self>, leader: NodeId) {
        if self.leading {
            self.leading = false;
            io.cancel_timer(RingTimer::Heartbeat);
        }
        if self.participant {
            self.participant = false;
            io.cancel_timer(RingTimer::Restart);
        }
        self.leader = Some(leader);
        let after = self.config.timing.draw_detect(io);
        io.set_timer(RingTimer::Detect, after);
    }

    fn on_election(&mut self, io: &mut Io<'_, Self>, j: NodeId, round: u64) {
        let body = Body::Election(j, round);
        if self.stopping {
            // A relay: it neither replaces a lower candidate nor carries its own.
            if j != self.id {
                self.send_hop(io, body, 1);
            }
            return;
        }
        if self.leading {
            if j > self.id {
                // A higher candidate is alive: it will win; take part.
                self.leading = false;
                io.cancel_timer(RingTimer::Heartbeat);
                self.join(io);
                self.send_election(io, body, 1);
            } else if j < self.id {
                // A spurious election (someone missed our heartbeats): the result is known.
                // Stop the ELECTION here and reassert leadership directly to every node,
                // which ends every participant's election at once.
                self.broadcast_heartbeat(io);
            }
            // j == own id: a stale copy of our own winning message.
            return;
        }
        if j > self.id {
            self.join(io);
            self.send_election(io, body, 1);
        } else if j < self.id {
            if !self.participant {
                self.start_election_at(io, 1);
            }
            // else: a participant discards a lower candidate.
        } else {
            self.own_candidacy_returned(io, round);
        }
    }

    fn on_elected(&mut self, io: &mut Io<'_, Self>, l: NodeId, round: u64) {
        if l == self.id {
            // Our announcement came back: everyone has it.
            return;
        }
        if self.stopping {
            self.leader = Some(l);
            self.send_hop(io, Body::Elected(l, round), 1);
            return;
        }
        if self.leading && l < self.id {
            // A rival, lower leader (a healed partition): do not pass its announcement
            // on; tell everyone, the rival included, who leads.
            self.broadcast_heartbeat(io);
            return;
        }
        self.follow(io, l);
        self.send_hop(io, Body::Elected(l, round), 1);
    }

    fn on_heartbeat(&mut self, io: &mut Io<'_, Self>, l: NodeId) {
        if self.stopping {
            self.leader = Some(l);
            return;
        }
        if self.leading {
            if l > self.id {
                self.follow(io, l);
            } else if l < self.id {
                self.broadcast_heartbeat(io);
            }
            return;
        }
        self.follow(io, l);
    }

    fn broadcast_heartbeat(&mut self, io: &mut Io<'_, Self>) {
        let me = self.id;
        let msg = RingMsg::Heartbeat { leader: me };
        io.send_many(
            election_core::all_nodes(self.config.n).filter(|&x| x != me),
            &msg,
        );
    }

    /// The failure detector fired (or was forced to).
    fn suspect(&mut self, io: &mut Io<'_, Self>) {
        if self.leading || self.participant || self.stopping {
            return;
        }
        self.start_election_at(io, 1);
    }
}

impl Protocol for Ring {
    type Msg = RingMsg;
    type Timer = RingTimer;
    /// With `hop_acks`: the node's incarnation (boot count), so that instance numbers keep
    /// increasing across crashes.
    type Persist = u32;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&u32>) {
        // Boot and recovery alike: no leader known, wait one detection window for a
        // heartbeat before starting an election.
        self.participant = false;
        self.leading = false;
        self.stopping = false;
        self.leader = None;
        self.candidacy = None;
        self.pending.clear();
        self.seen_election.clear();
        self.seen_elected.clear();
        if self.config.hop_acks {
            let incarnation = stored.map_or(0, |s| s.wrapping_add(1));
            io.persist(incarnation);
            self.next_round = (u64::from(incarnation) << 32) | 1;
        }
        let after = self.config.timing.draw_detect(io);
        io.set_timer(RingTimer::Detect, after);
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: RingMsg) {
        // No member sends an id outside 1..=n (drivers refuse one, `Wire::named_node`); per-node
        // state is indexed by it, so a message that does is ignored rather than trusted.
        let named = match msg {
            RingMsg::Election { id, .. } => Some(id),
            RingMsg::Elected { leader, .. }
            | RingMsg::Heartbeat { leader }
            | RingMsg::Leaving { leader } => Some(leader),
            RingMsg::Ack { .. } => None,
        };
        if named.is_some_and(|id| id.0 == 0 || id.0 > self.config.n) {
            return;
        }
        match msg {
            RingMsg::Election { id, hop } => {
                let round = hop.map_or(0, |h| h.round);
                if let Some(h) = hop {
                    io.send(from, RingMsg::Ack { seq: h.seq });
                }
                if id != self.id && self.is_second_copy(Body::Election(id, round)) {
                    return;
                }
                self.on_election(io, id, round);
            }
            RingMsg::Elected { leader, hop } => {
                let round = hop.map_or(0, |h| h.round);
                if let Some(h) = hop {
                    io.send(from, RingMsg::Ack { seq: h.seq });
                }
                if self.is_second_copy(Body::Elected(leader, round)) {
                    return;
                }
                self.on_elected(io, leader, round);
            }
            RingMsg::Ack { seq } => self.on_ack(io, seq),
            RingMsg::Heartbeat { leader } => self.on_heartbeat(io, leader),
            RingMsg::Leaving { .. } => {
                // The leader announces its departure: elect now, without waiting for the
                // detector (a node already electing, or leading, has nothing to start).
                if !(self.leading || self.participant || self.stopping) {
                    self.start_election_at(io, 1);
                }
            }
        }
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: RingTimer) {
        match timer {
            RingTimer::Detect => self.suspect(io),
            RingTimer::Heartbeat => {
                if self.leading {
                    self.broadcast_heartbeat(io);
                    io.set_timer(RingTimer::Heartbeat, self.config.timing.heartbeat);
                }
            }
            RingTimer::Hop => self.on_hop_timeout(io),
            RingTimer::Restart => {
                if self.participant && !self.leading {
                    self.start_election_at(io, 1);
                }
            }
        }
    }

    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        self.suspect(io);
    }

    /// The leader announces its departure: LEAVING to its successor, which starts an
    /// election at once; the leaving node competes in nothing from now on and relays every
    /// ELECTION and ELECTED unchanged (acknowledging hops), so the ring stays whole until it
    /// is stopped. Any node about to be stopped becomes such a relay. (Chang & Roberts have
    /// no departure; this is the planned stop a deployment adds, announced rather than left
    /// to the detectors.)
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        let was_leading = self.leading;
        self.stopping = true;
        self.leading = false;
        self.participant = false;
        self.leader = None;
        self.candidacy = None;
        io.cancel_timer(RingTimer::Heartbeat);
        io.cancel_timer(RingTimer::Detect);
        io.cancel_timer(RingTimer::Restart);
        if was_leading && self.order.len() > 1 {
            let me = self.id;
            io.send(self.downstream(1), RingMsg::Leaving { leader: me });
        }
    }

    fn quorum_rule(&self) -> QuorumRule {
        // Chang-Roberts elects among whoever is alive: the ring skips crashed nodes.
        QuorumRule::LiveMembers
    }

    fn status(&self) -> Status {
        let role = if self.leading {
            Role::Leader
        } else if self.participant {
            Role::Candidate
        } else {
            Role::Follower
        };
        Status {
            role,
            leader: self.leader,
            epoch: None,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The state machine driven by hand: each Chang–Roberts rule, the hop layer and the
    //! leader's extra rules, checked on the actions a single input produces.
    use super::*;
    use crate::config::Arrangement;
    use election_core::{Action, Rng, SeedableRng};
    use std::time::Duration;

    struct Bench {
        rng: Rng,
    }

    impl Bench {
        fn new() -> Self {
            Bench {
                rng: Rng::seed_from_u64(1),
            }
        }
        fn run(
            &mut self,
            node: &mut Ring,
            at_ms: u64,
            f: impl FnOnce(&mut Ring, &mut Io<'_, Ring>),
        ) -> Vec<Action<Ring>> {
            let mut actions = Vec::new();
            let mut io = Io::new(Time::from_millis(at_ms), &mut self.rng, &mut actions);
            f(node, &mut io);
            actions
        }
    }

    fn cfg(n: u32, hop_acks: bool) -> Arc<RingConfig> {
        let mut c = RingConfig::new(n);
        c.hop_acks = hop_acks;
        Arc::new(c)
    }

    fn sends(actions: &[Action<Ring>]) -> Vec<(u32, RingMsg)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((to.0, *msg)),
                _ => None,
            })
            .collect()
    }

    fn sets(actions: &[Action<Ring>], timer: RingTimer) -> bool {
        actions
            .iter()
            .any(|a| matches!(a, Action::SetTimer { timer: t, .. } if *t == timer))
    }

    fn election(id: u32) -> RingMsg {
        RingMsg::Election {
            id: NodeId(id),
            hop: None,
        }
    }

    fn elected(id: u32) -> RingMsg {
        RingMsg::Elected {
            leader: NodeId(id),
            hop: None,
        }
    }

    fn booted(b: &mut Bench, id: u32, c: &Arc<RingConfig>) -> Ring {
        let mut node = Ring::new(NodeId(id), c.clone());
        let a = b.run(&mut node, 0, |n, io| n.on_start(io, None));
        assert!(sets(&a, RingTimer::Detect), "boot arms the detector only");
        assert!(sends(&a).is_empty(), "no election on boot");
        node
    }

    #[test]
    fn initiator_marks_itself_and_sends_its_id_to_the_successor() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        let mut node = booted(&mut b, 3, &c);
        let a = b.run(&mut node, 200, |n, io| n.on_timer(io, RingTimer::Detect));
        assert_eq!(sends(&a), vec![(4, election(3))]);
        assert_eq!(node.status().role, Role::Candidate);
        assert!(!sets(&a, RingTimer::Restart), "no bound without hop_acks");
    }

    #[test]
    fn chang_roberts_rules_on_election() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        // j > own: forward and mark.
        let mut node = booted(&mut b, 3, &c);
        let a = b.run(&mut node, 1, |n, io| {
            n.on_message(io, NodeId(2), election(5))
        });
        assert_eq!(sends(&a), vec![(4, election(5))]);
        assert!(node.is_participant());
        // j < own, participant: discard.
        let a = b.run(&mut node, 2, |n, io| {
            n.on_message(io, NodeId(2), election(1))
        });
        assert!(sends(&a).is_empty());
        // j < own, not participant: replace with own id.
        let mut node = booted(&mut b, 3, &c);
        let a = b.run(&mut node, 1, |n, io| {
            n.on_message(io, NodeId(2), election(1))
        });
        assert_eq!(sends(&a), vec![(4, election(3))]);
        assert!(node.is_participant());
        // j == own: leader, announce.
        let a = b.run(&mut node, 5, |n, io| {
            n.on_message(io, NodeId(2), election(3))
        });
        assert_eq!(sends(&a), vec![(4, elected(3))]);
        assert!(sets(&a, RingTimer::Heartbeat));
        assert_eq!(
            node.status(),
            Status {
                role: Role::Leader,
                leader: Some(NodeId(3)),
                epoch: None
            }
        );
        // Our announcement returns: it stops here.
        let a = b.run(&mut node, 10, |n, io| {
            n.on_message(io, NodeId(2), elected(3))
        });
        assert!(sends(&a).is_empty());
    }

    #[test]
    fn elected_is_recorded_and_forwarded() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        let mut node = booted(&mut b, 2, &c);
        b.run(&mut node, 1, |n, io| {
            n.on_message(io, NodeId(1), election(5))
        });
        let a = b.run(&mut node, 9, |n, io| {
            n.on_message(io, NodeId(1), elected(5))
        });
        assert_eq!(sends(&a), vec![(3, elected(5))]);
        assert!(sets(&a, RingTimer::Detect));
        assert_eq!(
            node.status(),
            Status {
                role: Role::Follower,
                leader: Some(NodeId(5)),
                epoch: None
            }
        );
    }

    #[test]
    fn participant_forgets_its_leader_and_ignores_suspicion() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        let mut node = booted(&mut b, 2, &c);
        b.run(&mut node, 1, |n, io| {
            n.on_message(io, NodeId(5), RingMsg::Heartbeat { leader: NodeId(5) })
        });
        assert_eq!(node.status().leader, Some(NodeId(5)));
        let a = b.run(&mut node, 2, |n, io| {
            n.on_message(io, NodeId(1), election(1))
        });
        assert_eq!(sends(&a), vec![(3, election(2))]);
        assert_eq!(node.status().leader, None);
        assert!(a
            .iter()
            .any(|x| matches!(x, Action::CancelTimer(RingTimer::Detect))));
        let a = b.run(&mut node, 3, |n, io| n.on_suspect(io));
        assert!(a.is_empty());
    }

    #[test]
    fn descending_ring_successor_is_the_next_lower_id() {
        let mut c = RingConfig::new(4);
        c.arrangement = Arrangement::Descending;
        let c = Arc::new(c);
        assert_eq!(Ring::new(NodeId(3), c.clone()).downstream(1), NodeId(2));
        assert_eq!(Ring::new(NodeId(1), c).downstream(1), NodeId(4));
    }

    #[test]
    fn a_single_node_elects_itself() {
        for hop_acks in [false, true] {
            let mut b = Bench::new();
            let c = cfg(1, hop_acks);
            let mut node = booted(&mut b, 1, &c);
            let a = b.run(&mut node, 200, |n, io| n.on_suspect(io));
            assert!(sends(&a).is_empty());
            assert_eq!(node.status().role, Role::Leader);
        }
    }

    #[test]
    fn hops_are_acknowledged() {
        let mut b = Bench::new();
        let c = cfg(5, true);
        let mut node = booted(&mut b, 3, &c);
        let a = b.run(&mut node, 1, |n, io| {
            n.on_message(
                io,
                NodeId(2),
                RingMsg::Election {
                    id: NodeId(5),
                    hop: Some(Hop { seq: 41, round: 9 }),
                },
            )
        });
        let s = sends(&a);
        assert_eq!(
            s[0],
            (2, RingMsg::Ack { seq: 41 }),
            "ACK to the sender first"
        );
        assert!(matches!(
            s[1],
            (
                4,
                RingMsg::Election {
                    id: NodeId(5),
                    hop: Some(_)
                }
            )
        ));
        assert!(sets(&a, RingTimer::Hop));
        assert!(sets(&a, RingTimer::Restart));
        assert_eq!(node.unacknowledged(), 1);
        let RingMsg::Election { hop: Some(h), .. } = s[1].1 else {
            unreachable!()
        };
        let a = b.run(&mut node, 2, |n, io| {
            n.on_message(io, NodeId(4), RingMsg::Ack { seq: h.seq })
        });
        assert_eq!(node.unacknowledged(), 0);
        assert!(a
            .iter()
            .any(|x| matches!(x, Action::CancelTimer(RingTimer::Hop))));
    }

    #[test]
    fn a_silent_successor_is_skipped_after_t_hop() {
        let mut b = Bench::new();
        let c = cfg(5, true);
        let mut node = booted(&mut b, 2, &c);
        let a = b.run(&mut node, 100, |n, io| n.on_suspect(io));
        assert!(matches!(
            sends(&a)[..],
            [(3, RingMsg::Election { id: NodeId(2), .. })]
        ));
        // 3 never answers: at 100 + t_hop the ELECTION goes to 4, then to 5.
        let a = b.run(&mut node, 120, |n, io| n.on_timer(io, RingTimer::Hop));
        assert!(matches!(
            sends(&a)[..],
            [(4, RingMsg::Election { id: NodeId(2), .. })]
        ));
        let a = b.run(&mut node, 140, |n, io| n.on_timer(io, RingTimer::Hop));
        assert!(matches!(
            sends(&a)[..],
            [(5, RingMsg::Election { id: NodeId(2), .. })]
        ));
        assert_eq!(node.unacknowledged(), 1);
        // A late ACK for an abandoned hop changes nothing.
        b.run(&mut node, 141, |n, io| {
            n.on_message(io, NodeId(3), RingMsg::Ack { seq: 0 })
        });
        assert_eq!(node.unacknowledged(), 1);
    }

    #[test]
    fn alone_in_its_arc_a_node_elects_itself() {
        let mut b = Bench::new();
        let c = cfg(3, true);
        let mut node = booted(&mut b, 1, &c);
        b.run(&mut node, 100, |n, io| n.on_suspect(io));
        b.run(&mut node, 120, |n, io| n.on_timer(io, RingTimer::Hop));
        let a = b.run(&mut node, 140, |n, io| n.on_timer(io, RingTimer::Hop));
        assert_eq!(node.status().role, Role::Leader);
        // And its ELECTED starts round the (silent) ring.
        assert!(matches!(
            sends(&a)[..],
            [(
                2,
                RingMsg::Elected {
                    leader: NodeId(1),
                    ..
                }
            )]
        ));
        b.run(&mut node, 160, |n, io| n.on_timer(io, RingTimer::Hop));
        let a = b.run(&mut node, 180, |n, io| n.on_timer(io, RingTimer::Hop));
        assert!(
            sends(&a).is_empty(),
            "the announcement is dropped after a full lap"
        );
        assert_eq!(node.unacknowledged(), 0);
    }

    #[test]
    fn an_election_for_a_dead_candidate_is_dropped_not_circled() {
        let mut b = Bench::new();
        let c = cfg(5, true);
        let mut node = booted(&mut b, 3, &c);
        // 3 forwards 4's candidacy to 4, which has died.
        b.run(&mut node, 1, |n, io| {
            n.on_message(
                io,
                NodeId(2),
                RingMsg::Election {
                    id: NodeId(4),
                    hop: Some(Hop { seq: 0, round: 9 }),
                },
            )
        });
        let a = b.run(&mut node, 21, |n, io| n.on_timer(io, RingTimer::Hop));
        // Not ELECTION(4) to 5: 3 starts again with its own id, past the dead node.
        assert!(matches!(
            sends(&a)[..],
            [(5, RingMsg::Election { id: NodeId(3), .. })]
        ));
        assert!(node.is_participant());
    }

    #[test]
    fn the_election_bound_restarts_a_stalled_participant() {
        let mut b = Bench::new();
        let c = cfg(5, true);
        let mut node = booted(&mut b, 3, &c);
        b.run(&mut node, 1, |n, io| {
            n.on_message(
                io,
                NodeId(2),
                RingMsg::Election {
                    id: NodeId(5),
                    hop: Some(Hop { seq: 0, round: 9 }),
                },
            )
        });
        let a = b.run(&mut node, 201, |n, io| n.on_timer(io, RingTimer::Restart));
        assert!(sends(&a)
            .iter()
            .any(|m| matches!(m, (4, RingMsg::Election { id: NodeId(3), .. }))));
        assert!(a.iter().any(|x| matches!(
            x,
            Action::SetTimer { timer: RingTimer::Restart, at } if *at == Time::from_millis(201) + Duration::from_millis(200)
        )));
    }

    #[test]
    fn a_live_leader_stops_a_lower_election_and_reasserts_itself() {
        let mut b = Bench::new();
        let c = cfg(4, false);
        let mut node = booted(&mut b, 4, &c);
        b.run(&mut node, 1, |n, io| n.on_suspect(io));
        b.run(&mut node, 5, |n, io| {
            n.on_message(io, NodeId(3), election(4))
        });
        assert_eq!(node.status().role, Role::Leader);
        let a = b.run(&mut node, 100, |n, io| {
            n.on_message(io, NodeId(3), election(2))
        });
        assert_eq!(
            sends(&a),
            vec![
                (1, RingMsg::Heartbeat { leader: NodeId(4) }),
                (2, RingMsg::Heartbeat { leader: NodeId(4) }),
                (3, RingMsg::Heartbeat { leader: NodeId(4) }),
            ]
        );
        assert_eq!(node.status().role, Role::Leader);
        // The leader ignores forced suspicion.
        assert!(b.run(&mut node, 101, |n, io| n.on_suspect(io)).is_empty());
    }

    #[test]
    fn a_leader_yields_to_a_higher_candidate_or_leader() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        let mut node = booted(&mut b, 3, &c);
        b.run(&mut node, 1, |n, io| n.on_suspect(io));
        b.run(&mut node, 6, |n, io| {
            n.on_message(io, NodeId(2), election(3))
        });
        assert_eq!(node.status().role, Role::Leader);
        let a = b.run(&mut node, 50, |n, io| {
            n.on_message(io, NodeId(2), election(4))
        });
        assert_eq!(sends(&a), vec![(4, election(4))]);
        assert_eq!(node.status().role, Role::Candidate);

        let mut node = booted(&mut b, 3, &c);
        b.run(&mut node, 1, |n, io| n.on_suspect(io));
        b.run(&mut node, 6, |n, io| {
            n.on_message(io, NodeId(2), election(3))
        });
        b.run(&mut node, 7, |n, io| {
            n.on_message(io, NodeId(5), RingMsg::Heartbeat { leader: NodeId(5) })
        });
        assert_eq!(
            node.status(),
            Status {
                role: Role::Follower,
                leader: Some(NodeId(5)),
                epoch: None
            }
        );
    }

    #[test]
    fn a_higher_leader_overrules_a_lower_rival_at_once() {
        let mut b = Bench::new();
        let c = cfg(4, false);
        let mut node = booted(&mut b, 4, &c);
        b.run(&mut node, 1, |n, io| n.on_suspect(io));
        b.run(&mut node, 6, |n, io| {
            n.on_message(io, NodeId(3), election(4))
        });
        let a = b.run(&mut node, 50, |n, io| {
            n.on_message(io, NodeId(2), RingMsg::Heartbeat { leader: NodeId(2) })
        });
        let to: Vec<u32> = sends(&a).iter().map(|s| s.0).collect();
        assert_eq!(to, vec![1, 2, 3]);
        // Nor does it pass a lower leader's ELECTED on.
        let a = b.run(&mut node, 51, |n, io| {
            n.on_message(io, NodeId(3), elected(2))
        });
        assert!(sends(&a)
            .iter()
            .all(|s| matches!(s.1, RingMsg::Heartbeat { .. })));
        assert_eq!(node.status().role, Role::Leader);
    }

    #[test]
    fn the_leader_heartbeats_everyone_every_period() {
        let mut b = Bench::new();
        let c = cfg(4, false);
        let mut node = booted(&mut b, 2, &c);
        b.run(&mut node, 1, |n, io| n.on_suspect(io));
        let a = b.run(&mut node, 5, |n, io| {
            n.on_message(io, NodeId(1), election(2))
        });
        assert!(a.iter().any(|x| matches!(
            x,
            Action::SetTimer { timer: RingTimer::Heartbeat, at } if *at == Time::from_millis(55)
        )));
        let a = b.run(&mut node, 55, |n, io| n.on_timer(io, RingTimer::Heartbeat));
        assert_eq!(
            sends(&a),
            vec![
                (1, RingMsg::Heartbeat { leader: NodeId(2) }),
                (3, RingMsg::Heartbeat { leader: NodeId(2) }),
                (4, RingMsg::Heartbeat { leader: NodeId(2) }),
            ]
        );
        assert!(sets(&a, RingTimer::Heartbeat));
    }

    fn tagged_election(id: u32, seq: u32, round: u64) -> RingMsg {
        RingMsg::Election {
            id: NodeId(id),
            hop: Some(Hop { seq, round }),
        }
    }

    #[test]
    fn a_second_copy_of_an_instance_is_acknowledged_but_not_passed_on() {
        let mut b = Bench::new();
        let c = cfg(5, true);
        let mut node = booted(&mut b, 3, &c);
        let first = b.run(&mut node, 1, |n, io| {
            n.on_message(io, NodeId(2), tagged_election(5, 0, 7))
        });
        assert_eq!(sends(&first).len(), 2, "ACK and forward");
        // The same instance again, from the node two places upstream (its sender skipped 2).
        let copy = b.run(&mut node, 2, |n, io| {
            n.on_message(io, NodeId(1), tagged_election(5, 4, 7))
        });
        assert_eq!(sends(&copy), vec![(1, RingMsg::Ack { seq: 4 })]);
        // A new instance of the same candidacy (5 restarted) is passed on.
        let again = b.run(&mut node, 3, |n, io| {
            n.on_message(io, NodeId(2), tagged_election(5, 1, 8))
        });
        assert_eq!(sends(&again).len(), 2);
        // The same for ELECTED.
        let elected = |seq| RingMsg::Elected {
            leader: NodeId(5),
            hop: Some(Hop { seq, round: 3 }),
        };
        let a = b.run(&mut node, 4, |n, io| {
            n.on_message(io, NodeId(2), elected(2))
        });
        assert_eq!(sends(&a).len(), 2);
        let a = b.run(&mut node, 5, |n, io| {
            n.on_message(io, NodeId(2), elected(3))
        });
        assert_eq!(sends(&a), vec![(2, RingMsg::Ack { seq: 3 })]);
    }

    #[test]
    fn a_superseded_candidacy_returning_does_not_make_a_leader() {
        let mut b = Bench::new();
        let c = cfg(3, true);
        let mut node = booted(&mut b, 2, &c);
        let a = b.run(&mut node, 100, |n, io| n.on_suspect(io));
        let RingMsg::Election { hop: Some(old), .. } = sends(&a)[0].1 else {
            unreachable!()
        };
        // The bound fires: a new candidacy supersedes the first.
        b.run(&mut node, 300, |n, io| n.on_timer(io, RingTimer::Restart));
        b.run(&mut node, 301, |n, io| {
            n.on_message(io, NodeId(1), tagged_election(2, 0, old.round))
        });
        assert_eq!(node.status().role, Role::Candidate);
        b.run(&mut node, 302, |n, io| {
            n.on_message(
                io,
                NodeId(1),
                tagged_election(2, 1, old.round.wrapping_add(1)),
            )
        });
        assert_eq!(node.status().role, Role::Leader);
    }

    /// A planned stop: the leader sends LEAVING to its successor only and becomes a relay
    /// that competes in nothing; the successor starts an election at once; the relay passes
    /// a lower ELECTION on unchanged (it does not replace it) and the ELECTED after it.
    #[test]
    fn a_leaving_leader_announces_its_departure_and_relays_the_election() {
        let mut b = Bench::new();
        let c = cfg(5, false);
        let mut five = booted(&mut b, 5, &c);
        b.run(&mut five, 200, |n, io| n.on_timer(io, RingTimer::Detect));
        b.run(&mut five, 201, |n, io| {
            n.on_message(io, NodeId(4), election(5))
        });
        assert_eq!(five.status().role, Role::Leader);
        let a = b.run(&mut five, 300, |n, io| n.on_handover(io));
        assert_eq!(sends(&a), vec![(1, RingMsg::Leaving { leader: NodeId(5) })]);
        assert_eq!(five.status().role, Role::Follower);
        assert_eq!(five.status().leader, None);
        // It relays a lower candidate unchanged and passes the result on.
        let a = b.run(&mut five, 301, |n, io| {
            n.on_message(io, NodeId(4), election(4))
        });
        assert_eq!(sends(&a), vec![(1, election(4))]);
        let a = b.run(&mut five, 302, |n, io| {
            n.on_message(io, NodeId(4), elected(4))
        });
        assert_eq!(sends(&a), vec![(1, elected(4))]);
        assert_eq!(five.status().role, Role::Follower);
        // Its detector is ignored.
        assert!(sends(&b.run(&mut five, 900, |n, io| n.on_suspect(io))).is_empty());
        // The successor elects at once.
        let mut one = booted(&mut b, 1, &c);
        let a = b.run(&mut one, 300, |n, io| {
            n.on_message(io, NodeId(5), RingMsg::Leaving { leader: NodeId(5) })
        });
        assert_eq!(sends(&a), vec![(2, election(1))]);
        assert_eq!(one.status().role, Role::Candidate);
    }
}
