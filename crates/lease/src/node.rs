//! One endpoint of the lease protocol: a member (candidate or holder) or the store.

use std::sync::Arc;
use std::time::Duration;

use election_core::{Io, NodeId, Protocol, QuorumRule, Role, Status, Time};

use crate::config::LeaseConfig;
use crate::message::{LeaseMsg, LeaseTimer, Op, Record};

/// A node of the lease protocol. Ids `1..=n` are members, id `n + 1` is the store; the
/// factory builds either from the id (see [`Lease::new`]).
#[derive(Clone, Debug)]
pub struct Lease {
    id: NodeId,
    cfg: Arc<LeaseConfig>,
    part: Part,
}

#[derive(Clone, Debug)]
enum Part {
    Store(Record),
    Member(Member),
}

#[derive(Clone, Debug, Default)]
struct Member {
    /// The last record seen (client-go's `observedRecord`).
    observed: Option<Record>,
    /// When, on this node's clock, the observed record was first seen (`observedTime`).
    observed_at: Time,
    /// Holds the lease and believes it leads.
    leading: bool,
    /// An `ACQUIRE` is in flight.
    acquiring: bool,
    /// The failure detector fired (or was forced) since the observed record last changed.
    detected: bool,
    /// Whom this node believes leads, as of its last input.
    believed: Option<NodeId>,
    /// About to be stopped on purpose ([`Protocol::on_handover`]): its elector's context is
    /// cancelled, so it neither renews nor tries to acquire again until it boots.
    stopping: bool,
}

impl Lease {
    /// The endpoint with id `id`: a member for `1..=n`, the store for `n + 1`.
    pub fn new(id: NodeId, cfg: Arc<LeaseConfig>) -> Self {
        let part = if id == cfg.store() {
            Part::Store(Record::EMPTY)
        } else {
            Part::Member(Member::default())
        };
        Lease { id, cfg, part }
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Is this node the store?
    pub fn is_store(&self) -> bool {
        matches!(self.part, Part::Store(_))
    }

    /// The store's record, or the member's last observed one.
    pub fn record(&self) -> Option<Record> {
        match &self.part {
            Part::Store(r) => Some(*r),
            Part::Member(m) => m.observed,
        }
    }

    fn poll_after(&self, io: &mut Io<'_, Self>) -> Duration {
        let hi = self.cfg.retry.mul_f64(1.0 + self.cfg.jitter);
        io.uniform(self.cfg.retry, hi)
    }

    /// Does the observed record give the lease to someone else, still valid by our clock, or
    /// not yet noticed to have expired by our failure detector?
    fn held_by_other(m: &Member, me: NodeId, now: Time) -> bool {
        match m.observed {
            Some(r) => {
                r.holder.is_some_and(|h| h != me)
                    && (now < m.observed_at + r.duration || !m.detected)
            }
            None => true, // nothing known yet: read before writing
        }
    }

    /// Take in a record the store sent; a record older than the observed one (reordered) is
    /// ignored. client-go: the record differs from `observedRecord` → observe it now. A
    /// change re-arms the failure detector for a lease duration from now.
    fn observe(&mut self, io: &mut Io<'_, Self>, rec: Record) {
        let now = io.now();
        let Part::Member(m) = &mut self.part else {
            return;
        };
        match m.observed {
            Some(o) if rec.version <= o.version => {}
            _ => {
                m.observed = Some(rec);
                m.observed_at = now;
                m.detected = false;
                if !m.leading && rec.holder.is_some() {
                    io.set_timer(LeaseTimer::Expire, rec.duration);
                }
            }
        }
    }

    /// The non-holder's half of `tryAcquireOrRenew`, after a read: write ourselves in if
    /// nobody holds a lease that is valid by our own clock.
    fn try_acquire(&mut self, io: &mut Io<'_, Self>) {
        let (me, now, duration, store) = (self.id, io.now(), self.cfg.duration, self.cfg.store());
        let Part::Member(m) = &mut self.part else {
            return;
        };
        if m.leading || m.acquiring || m.stopping || Self::held_by_other(m, me, now) {
            return;
        }
        let Some(o) = m.observed else { return };
        let mine = o.holder == Some(me);
        let record = Record {
            holder: Some(me),
            version: o.version,
            transitions: if mine {
                o.transitions
            } else {
                o.transitions + 1
            },
            duration,
            acquire: if mine { o.acquire } else { now },
            renew: now,
        };
        m.acquiring = true;
        io.send(
            store,
            LeaseMsg::Update {
                op: Op::Acquire,
                record,
            },
        );
    }

    fn lead(&mut self, io: &mut Io<'_, Self>) {
        if let Part::Member(m) = &mut self.part {
            m.leading = true;
        }
        io.cancel_timer(LeaseTimer::Poll);
        io.cancel_timer(LeaseTimer::Expire);
        self.renewed(io);
    }

    /// A renewal (or the acquisition) succeeded now: next round in `retry`, and the round
    /// after that must succeed within `renew_deadline` of its start.
    fn renewed(&mut self, io: &mut Io<'_, Self>) {
        io.set_timer(LeaseTimer::Renew, self.cfg.retry);
        io.set_timer(
            LeaseTimer::Deadline,
            self.cfg.retry + self.cfg.renew_deadline,
        );
    }

    /// Stop leading (renew deadline passed, or the record names someone else); with
    /// `release_on_cancel`, hand the lease back if it is still ours as far as we know.
    fn step_down(&mut self, io: &mut Io<'_, Self>, release: bool) {
        let (me, now, store) = (self.id, io.now(), self.cfg.store());
        let Part::Member(m) = &mut self.part else {
            return;
        };
        m.leading = false;
        io.cancel_timer(LeaseTimer::Renew);
        io.cancel_timer(LeaseTimer::Deadline);
        if release {
            Self::release(m, me, now, store, io);
        }
        let after = self.poll_after(io);
        io.set_timer(LeaseTimer::Poll, after);
    }

    /// Writes an empty holder over the observed record if it is still ours.
    fn release(m: &Member, me: NodeId, now: Time, store: NodeId, io: &mut Io<'_, Self>) {
        if let Some(o) = m.observed.filter(|o| o.holder == Some(me)) {
            let record = Record {
                holder: None,
                version: o.version,
                transitions: o.transitions,
                duration: Duration::from_millis(1),
                acquire: o.acquire,
                renew: now,
            };
            io.send(
                store,
                LeaseMsg::Update {
                    op: Op::Release,
                    record,
                },
            );
        }
    }

    fn refresh_belief(&mut self, now: Time) {
        let me = self.id;
        if let Part::Member(m) = &mut self.part {
            m.believed = if m.leading {
                Some(me)
            } else {
                m.observed
                    .filter(|r| now < m.observed_at + r.duration)
                    .and_then(|r| r.holder)
                    // Only the leading node names itself: one that stopped does not.
                    .filter(|&h| h != me)
            };
        }
    }

    fn store_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let Part::Store(rec) = &mut self.part else {
            return;
        };
        match msg {
            LeaseMsg::Get => io.send(from, LeaseMsg::Record(*rec)),
            LeaseMsg::Update { op, record } => {
                let ok = record.version == rec.version;
                if ok {
                    *rec = Record {
                        version: rec.version + 1,
                        ..record
                    };
                    io.persist(*rec);
                }
                io.send(
                    from,
                    LeaseMsg::Updated {
                        op,
                        ok,
                        record: *rec,
                    },
                );
            }
            LeaseMsg::Record(_) | LeaseMsg::Updated { .. } => {}
        }
    }
}

impl Protocol for Lease {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    /// The store's record (the store is durable, like etcd); members keep nothing.
    type Persist = Record;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Record>) {
        match &mut self.part {
            Part::Store(rec) => *rec = stored.copied().unwrap_or(Record::EMPTY),
            Part::Member(m) => {
                *m = Member::default();
                // client-go's JitterUntil runs its first attempt at once.
                io.send(self.cfg.store(), LeaseMsg::Get);
                let after = self.poll_after(io);
                io.set_timer(LeaseTimer::Poll, after);
            }
        }
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: LeaseMsg) {
        if self.is_store() {
            self.store_message(io, from, msg);
            return;
        }
        if from != self.cfg.store() {
            return;
        }
        let now = io.now();
        let me = self.id;
        match msg {
            LeaseMsg::Record(rec) => {
                self.observe(io, rec);
                self.try_acquire(io);
            }
            LeaseMsg::Updated { op, ok, record } => {
                self.observe(io, record);
                let Part::Member(m) = &mut self.part else {
                    return;
                };
                match op {
                    Op::Acquire => {
                        m.acquiring = false;
                        if ok && record.holder == Some(me) && !m.leading {
                            self.lead(io);
                        }
                    }
                    Op::Renew if m.leading => {
                        if ok {
                            self.renewed(io);
                        } else if m.observed.is_some_and(|o| o.holder != Some(me)) {
                            // Someone else holds it now: we are deposed.
                            self.step_down(io, false);
                        }
                        // A conflict with our own newer renewal: the next round uses the
                        // version we now observe.
                    }
                    // A planned release that lost the race with a renewal still in flight
                    // (the store took the renewal first): release again over the record the
                    // conflict returned, as client-go's `release` reads the lease before it
                    // writes (`le.config.Lock.Get`, then `Update`).
                    Op::Release if !ok && m.stopping => {
                        let store = self.cfg.store();
                        Self::release(m, me, now, store, io);
                    }
                    Op::Renew | Op::Release => {}
                }
            }
            LeaseMsg::Get | LeaseMsg::Update { .. } => {}
        }
        self.refresh_belief(now);
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: LeaseTimer) {
        let (me, now, store) = (self.id, io.now(), self.cfg.store());
        let Part::Member(m) = &mut self.part else {
            return;
        };
        match timer {
            LeaseTimer::Poll if !m.leading && !m.stopping => {
                // A new attempt: an acquisition still unanswered was lost (client-go's request
                // would have timed out by now).
                m.acquiring = false;
                io.send(store, LeaseMsg::Get);
                let after = self.poll_after(io);
                io.set_timer(LeaseTimer::Poll, after);
            }
            LeaseTimer::Renew if m.leading => {
                if let Some(o) = m.observed {
                    let record = Record {
                        holder: Some(me),
                        renew: now,
                        ..o
                    };
                    io.send(
                        store,
                        LeaseMsg::Update {
                            op: Op::Renew,
                            record,
                        },
                    );
                }
                // Keep trying every retry until a renewal succeeds or the deadline passes.
                io.set_timer(LeaseTimer::Renew, self.cfg.retry);
            }
            LeaseTimer::Deadline if m.leading => {
                let release = self.cfg.release_on_cancel;
                self.step_down(io, release);
            }
            LeaseTimer::Expire if !m.leading => {
                // Noticed: the next read takes the lease if the record is still unchanged.
                if let Part::Member(m) = &mut self.part {
                    m.detected = true;
                }
            }
            _ => {}
        }
        self.refresh_belief(now);
    }

    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        let store = self.cfg.store();
        if let Part::Member(m) = &mut self.part {
            if !m.leading {
                // A forced detection: the member suspects the holder now and reads the record at
                // once; it still takes the lease only once it is expired by its own clock.
                m.detected = true;
                io.send(store, LeaseMsg::Get);
            }
        }
        let now = io.now();
        self.refresh_belief(now);
    }

    /// The process is about to be stopped: its elector's context is cancelled. A holder
    /// releases the lease at once, whatever `release_on_cancel` says (client-go
    /// `LeaderElector.renew`: when the context is done and `ReleaseOnCancel` is set it calls
    /// `release()`, which writes the record with no holder and a 1 s duration, here 1 ms; a
    /// planned stop is the case `ReleaseOnCancel` exists for, while `lease.release_on_cancel`
    /// keeps deciding what a holder does when it loses the lease unplanned, at its renew
    /// deadline). The others see the empty record at their next poll and take it without
    /// waiting out a lease duration. From now on the member neither renews nor acquires.
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        let Part::Member(m) = &mut self.part else {
            return;
        };
        m.stopping = true;
        m.acquiring = false;
        if m.leading {
            self.step_down(io, true);
        }
        io.cancel_timer(LeaseTimer::Poll);
        let now = io.now();
        self.refresh_belief(now);
    }

    fn quorum_rule(&self) -> QuorumRule {
        // The store decides who holds the lease.
        QuorumRule::Service
    }

    fn status(&self) -> Status {
        match &self.part {
            // The store never leads; it names the holder its record holds, which makes it the
            // family's authority for the observer's quorum leader (see election-core's docs on
            // service endpoints).
            Part::Store(r) => Status {
                leader: r.holder,
                ..Status::FOLLOWER_NO_LEADER
            },
            Part::Member(m) => Status {
                role: if m.leading {
                    Role::Leader
                } else if m.acquiring {
                    Role::Candidate
                } else {
                    Role::Follower
                },
                leader: m.believed,
                epoch: m.observed.map(|r| r.transitions),
            },
        }
    }
}
