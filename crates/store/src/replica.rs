//! One store endpoint: a Raft node of the store group plus the lease record (crate docs).

use std::collections::VecDeque;

use election_core::{Action, Io, NodeId, Protocol, Role, Status, Time};
use election_lease::{LeaseMsg, Record};
use election_raft::{LogPos, Raft, RaftMsg, RaftTimer};

use crate::{step, LeaseGroup, ReplicaStable, StoreConfig, StoreMsg, StoreTimer};

/// A request the leader answers once its position is committed (and, for a read, once a
/// majority has acknowledged an `APPEND_ENTRIES` since it arrived).
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// The log position whose commit answers it.
    pos: LogPos,
    /// A read: when it arrived (the acknowledgements that count come after).
    read_at: Option<Time>,
    /// The member that asked.
    client: NodeId,
    /// The endpoint that forwarded it, if it did not come straight from the member.
    via: Option<NodeId>,
    /// The answer.
    reply: LeaseMsg,
}

/// A store endpoint (see the crate docs).
#[derive(Clone, Debug)]
pub struct Replica {
    /// This endpoint's id (`n + k`).
    id: NodeId,
    /// The number of members: Raft node `k` is endpoint `n + k`.
    n: u32,
    raft: Raft,
    /// The record at this endpoint's log's end.
    record: Record,
    /// Leader: the record at each position it may still ship or commit, oldest first.
    history: VecDeque<(LogPos, Record)>,
    /// Leader: the term it leads in (0: not leading).
    term: u64,
    /// Leader: the highest position it knows committed in its term.
    commit: LogPos,
    /// Leader: the record at `commit`, once it has committed an entry of its term.
    committed: Option<Record>,
    /// Leader: the position each endpoint acknowledged, by Raft index.
    matched: Vec<LogPos>,
    /// Leader: when each endpoint last acknowledged an `APPEND_ENTRIES`, by Raft index.
    heard: Vec<Option<Time>>,
    pending: Vec<Pending>,
    /// The lease's `cas` rule (compare-and-swap, or blind writes).
    cas: bool,
}

impl Replica {
    /// The store endpoint with id `id` (`n < id ≤ n + s`).
    pub fn new(id: NodeId, cfg: &StoreConfig) -> Replica {
        let n = cfg.lease.n;
        let s = cfg.raft.n as usize;
        Replica {
            id,
            n,
            raft: Raft::new(NodeId(id.0 - n), std::sync::Arc::clone(&cfg.raft)),
            record: Record::EMPTY,
            history: VecDeque::new(),
            term: 0,
            commit: LogPos::EMPTY,
            committed: None,
            matched: vec![LogPos::EMPTY; s],
            heard: vec![None; s],
            pending: Vec::new(),
            cas: cfg.lease.cas,
        }
    }

    /// Is this endpoint the store group's leader?
    pub fn is_leader(&self) -> bool {
        self.raft.status().role == Role::Leader
    }

    /// The record at this endpoint's log's end.
    pub fn record(&self) -> Record {
        self.record
    }

    /// Leader: the record it has committed in its term, if any.
    pub fn committed(&self) -> Option<Record> {
        self.committed
    }

    fn outer(&self, raft_id: NodeId) -> NodeId {
        NodeId(self.n + raft_id.0)
    }

    /// The store's leader as this endpoint knows it (its outer id), itself included.
    fn leader(&self) -> Option<NodeId> {
        self.raft.status().leader.map(|l| self.outer(l))
    }

    pub(crate) fn on_start(&mut self, io: &mut Io<'_, LeaseGroup>, stored: Option<&ReplicaStable>) {
        self.record = stored.map_or(Record::EMPTY, |s| s.record);
        self.history.clear();
        self.term = 0;
        self.pending.clear();
        let raft_stored = stored.map(|s| s.raft);
        let acts = step(io, &mut self.raft, |r, io| {
            r.on_start(io, raft_stored.as_ref())
        });
        self.emit(io, acts);
    }

    pub(crate) fn on_timer(&mut self, io: &mut Io<'_, LeaseGroup>, t: RaftTimer) {
        let acts = step(io, &mut self.raft, |r, io| r.on_timer(io, t));
        self.emit(io, acts);
    }

    pub(crate) fn on_message(&mut self, io: &mut Io<'_, LeaseGroup>, from: NodeId, msg: StoreMsg) {
        match msg {
            StoreMsg::Client(m) if from.0 <= self.n => self.request(io, from, None, m),
            StoreMsg::Forward { client, msg } if self.is_peer(from) => {
                self.request(io, client, Some(from), msg)
            }
            StoreMsg::Reply { client, msg } if self.is_peer(from) && client.0 <= self.n => {
                io.send(client, StoreMsg::Client(msg))
            }
            StoreMsg::Peer { raft, record, ack } if self.is_peer(from) => {
                let k = NodeId(from.0 - self.n);
                let acts = step(io, &mut self.raft, |r, io| r.on_message(io, k, raft));
                match raft {
                    // A follower that accepted the entries holds the record they produce.
                    RaftMsg::AppendEntries { log, .. } if self.raft.last_log() == log => {
                        if let Some(rec) = record {
                            self.record = rec;
                        }
                    }
                    RaftMsg::AppendResp {
                        term,
                        success: true,
                    } if self.term != 0 && term == self.term => {
                        let i = k.index();
                        if ack <= self.raft.last_log() && ack > self.matched[i] {
                            self.matched[i] = ack;
                        }
                        self.heard[i] = Some(io.now());
                    }
                    _ => {}
                }
                self.emit(io, acts);
            }
            _ => {}
        }
    }

    fn is_peer(&self, id: NodeId) -> bool {
        id.0 > self.n && id.0 - self.n <= self.matched.len() as u32 && id != self.id
    }

    /// A member's request, straight or forwarded.
    fn request(
        &mut self,
        io: &mut Io<'_, LeaseGroup>,
        client: NodeId,
        via: Option<NodeId>,
        msg: LeaseMsg,
    ) {
        if !self.is_leader() {
            // Forward to the leader we know; a forwarded request is not forwarded again.
            if let (Some(l), None) = (self.leader(), via) {
                if l != self.id {
                    io.send(l, StoreMsg::Forward { client, msg });
                }
            }
            return;
        }
        let mut next = self.record;
        let Some((reply, changed)) = next.answer(msg, client, self.cas) else {
            return;
        };
        if !changed {
            // A read, or a compare-and-swap that failed against the record at the log's end:
            // answered by ReadIndex, without an entry.
            self.pending.push(Pending {
                pos: self.raft.last_log(),
                read_at: Some(io.now()),
                client,
                via,
                reply,
            });
            self.advance(io);
            return;
        }
        let before = self.raft.last_log();
        self.record = next;
        let acts = step(io, &mut self.raft, |r, io| r.on_client_entry(io));
        let pos = self.raft.last_log();
        if pos == before {
            // Not appended (the log cannot grow): nothing changed; the member will retry.
            self.record = self.history.back().map_or(self.record, |h| h.1);
        } else {
            self.pending.push(Pending {
                pos,
                read_at: None,
                client,
                via,
                reply,
            });
        }
        self.emit(io, acts);
    }

    /// After an input to the Raft node: keep the leader's bookkeeping, carry its actions out,
    /// then answer what became answerable.
    fn emit(&mut self, io: &mut Io<'_, LeaseGroup>, acts: Vec<Action<Raft>>) {
        let pos = self.raft.last_log();
        if self.is_leader() {
            let term = self.raft.stable().current_term;
            if term != self.term {
                self.term = term;
                self.commit = LogPos::EMPTY;
                self.committed = None;
                self.matched.iter_mut().for_each(|m| *m = LogPos::EMPTY);
                self.heard.iter_mut().for_each(|h| *h = None);
                self.pending.clear();
                self.history.clear();
            }
            if self.history.back().map(|h| h.0) != Some(pos) {
                self.history.push_back((pos, self.record));
            }
        } else if self.term != 0 {
            // Deposed: the requests it was answering are dropped; their members retry.
            self.term = 0;
            self.committed = None;
            self.pending.clear();
            self.history.clear();
        }
        let now = io.now();
        for a in acts {
            match a {
                Action::Send { to, msg } => {
                    let (record, ack) = match msg {
                        RaftMsg::AppendEntries { log, .. } => (
                            self.history
                                .iter()
                                .rev()
                                .find(|h| h.0 == log)
                                .map(|h| h.1)
                                .or((log == pos).then_some(self.record)),
                            LogPos::EMPTY,
                        ),
                        RaftMsg::AppendResp { success: true, .. } => (None, pos),
                        _ => (None, LogPos::EMPTY),
                    };
                    io.send(
                        self.outer(to),
                        StoreMsg::Peer {
                            raft: msg,
                            record,
                            ack,
                        },
                    );
                }
                Action::SetTimer { timer, at } => {
                    io.set_timer(StoreTimer::Raft(timer), at.saturating_since(now))
                }
                Action::CancelTimer(t) => io.cancel_timer(StoreTimer::Raft(t)),
                Action::Persist(raft) => io.persist(ReplicaStable {
                    raft,
                    record: self.record,
                }),
            }
        }
        self.advance(io);
    }

    /// Leader: move the commit to the highest position of its term a majority holds, and
    /// answer the requests that are now answerable (in arrival order).
    fn advance(&mut self, io: &mut Io<'_, LeaseGroup>) {
        if self.term == 0 {
            return;
        }
        let me = (self.id.0 - self.n - 1) as usize;
        let s = self.matched.len();
        let majority = s / 2 + 1;
        let mut v: Vec<LogPos> = (0..s)
            .map(|i| {
                if i == me {
                    self.raft.last_log()
                } else {
                    self.matched[i]
                }
            })
            .collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let p = v[majority - 1];
        if p.term == self.term && p > self.commit {
            self.commit = p;
            self.committed = self.history.iter().find(|h| h.0 == p).map(|h| h.1);
            while self.history.front().is_some_and(|h| h.0 < p) {
                self.history.pop_front();
            }
        }
        if self.committed.is_none() {
            return;
        }
        let commit = self.commit;
        let heard = &self.heard;
        let confirmed = |at: Time| {
            1 + (0..s)
                .filter(|&i| i != me && heard[i].is_some_and(|h| h >= at))
                .count()
                >= majority
        };
        let mut keep = Vec::with_capacity(self.pending.len());
        let mut answer = Vec::new();
        for p in self.pending.drain(..) {
            let ready = p.pos <= commit && p.read_at.is_none_or(&confirmed);
            if ready {
                answer.push(p);
            } else {
                keep.push(p);
            }
        }
        self.pending = keep;
        for p in answer {
            match p.via {
                Some(f) => io.send(
                    f,
                    StoreMsg::Reply {
                        client: p.client,
                        msg: p.reply,
                    },
                ),
                None => io.send(p.client, StoreMsg::Client(p.reply)),
            }
        }
    }

    pub(crate) fn status(&self) -> Status {
        match self.committed.filter(|_| self.is_leader()) {
            Some(r) => Status {
                leader: r.holder,
                epoch: Some(self.term),
                ..Status::FOLLOWER_NO_LEADER
            },
            None => Status::FOLLOWER_NO_LEADER,
        }
    }
}
