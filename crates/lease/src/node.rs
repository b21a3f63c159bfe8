//! One endpoint of the lease protocol: a member (candidate or holder) or the store.

use std::sync::Arc;
use std::time::Duration;

use election_core::{Io, NodeId, Protocol, QuorumRule, Role, Status, Time};

use crate::config::{Expiry, LeaseConfig, OnLoss};
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
    /// Which of the store's endpoints it sends to (0-based; always 0 with one endpoint).
    endpoint: u32,
    /// When (on this node's clock) it sent the oldest request on its current endpoint that
    /// has had no answer yet; `None` once an answer arrives.
    unanswered_since: Option<Time>,
    /// With `on_loss = exit`: the process exited and has not started again yet.
    down: bool,
    /// About to be stopped on purpose ([`Protocol::on_handover`]): its elector's context is
    /// cancelled, so it neither renews nor tries to acquire again until it boots.
    stopping: bool,
}

/// Send `msg` to the store endpoint `m` uses. If a request there has been unanswered for
/// [`LeaseConfig::reconnect`] or longer now that the next one is due, its connection is
/// given up and the member moves to the next endpoint first; with `reconnect = 0` that is
/// whenever the previous request is still unanswered. With one endpoint there is nowhere to
/// move and this changes nothing.
fn request(cfg: &LeaseConfig, m: &mut Member, io: &mut Io<'_, Lease>, msg: LeaseMsg) {
    let now = io.now();
    if cfg.stores > 1
        && m.unanswered_since
            .is_some_and(|t| now.saturating_since(t) >= cfg.reconnect)
    {
        m.endpoint = (m.endpoint + 1) % cfg.stores;
        m.unanswered_since = None;
    }
    m.unanswered_since.get_or_insert(now);
    io.send(cfg.store_endpoint(m.endpoint), msg);
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

    /// When, on this node's clock, record `r` (observed at `observed_at`) expires: a duration
    /// after we saw it change (client-go), or a duration after the renew time the holder wrote
    /// from its own clock (`expiry = renew_time`).
    fn expires_at(expiry: Expiry, observed_at: Time, r: &Record) -> Time {
        match expiry {
            Expiry::Observed => observed_at + r.duration,
            Expiry::RenewTime => r.renew + r.duration,
        }
    }

    /// Does the observed record give the lease to someone else, still valid by our clock, or
    /// not yet noticed to have expired by our failure detector?
    fn held_by_other(m: &Member, me: NodeId, now: Time, expiry: Expiry) -> bool {
        match m.observed {
            Some(r) => {
                r.holder.is_some_and(|h| h != me)
                    && (now < Self::expires_at(expiry, m.observed_at, &r) || !m.detected)
            }
            None => true, // nothing known yet: read before writing
        }
    }

    /// Take in a record the store sent; a record older than the observed one (reordered) is
    /// ignored. client-go: the record differs from `observedRecord` → observe it now. A
    /// change re-arms the failure detector for a lease duration from now (`expiry =
    /// renew_time`: for the record's renew time plus its duration, on our clock).
    fn observe(&mut self, io: &mut Io<'_, Self>, rec: Record) {
        let (now, expiry) = (io.now(), self.cfg.expiry);
        let Part::Member(m) = &mut self.part else {
            return;
        };
        match m.observed {
            Some(o) if rec.version <= o.version => {}
            _ => {
                m.observed = Some(rec);
                m.observed_at = now;
                match expiry {
                    Expiry::Observed => {
                        m.detected = false;
                        if !m.leading && rec.holder.is_some() {
                            io.set_timer(LeaseTimer::Expire, rec.duration);
                        }
                    }
                    Expiry::RenewTime => {
                        // The detector fires when the holder's renew time plus the duration
                        // passes on our clock (at once if it already has); once it fired, a
                        // newer record that is just as expired on arrival keeps it fired.
                        let at = Self::expires_at(expiry, now, &rec);
                        m.detected = m.detected && now >= at;
                        if !m.leading && rec.holder.is_some() {
                            io.set_timer(LeaseTimer::Expire, at.saturating_since(now));
                        }
                    }
                }
            }
        }
    }

    /// The non-holder's half of `tryAcquireOrRenew`, after a read: write ourselves in if
    /// nobody holds a lease that is valid by our own clock.
    fn try_acquire(&mut self, io: &mut Io<'_, Self>) {
        let (me, now, duration) = (self.id, io.now(), self.cfg.duration);
        let expiry = self.cfg.expiry;
        let Part::Member(m) = &mut self.part else {
            return;
        };
        if m.leading || m.acquiring || m.stopping || Self::held_by_other(m, me, now, expiry) {
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
        request(
            &self.cfg,
            m,
            io,
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
    /// `release_on_cancel`, hand the lease back if it is still ours as far as we know (client-go
    /// releases at the end of `renew`, before `Run`'s deferred `OnStoppedLeading`). Then go
    /// back to reading the record, or, with `on_loss = exit`, exit.
    fn step_down(&mut self, io: &mut Io<'_, Self>, release: bool) {
        let (me, now) = (self.id, io.now());
        let Part::Member(m) = &mut self.part else {
            return;
        };
        m.leading = false;
        io.cancel_timer(LeaseTimer::Renew);
        io.cancel_timer(LeaseTimer::Deadline);
        if release {
            Self::release(&self.cfg, m, me, now, io);
        }
        if self.cfg.on_loss == OnLoss::Exit {
            self.exit(io);
            return;
        }
        let after = self.poll_after(io);
        io.set_timer(LeaseTimer::Poll, after);
    }

    /// Writes an empty holder over the observed record if it is still ours.
    fn release(cfg: &LeaseConfig, m: &mut Member, me: NodeId, now: Time, io: &mut Io<'_, Self>) {
        if let Some(o) = m.observed.filter(|o| o.holder == Some(me)) {
            let record = Record {
                holder: None,
                version: o.version,
                transitions: o.transitions,
                duration: Duration::from_millis(1),
                acquire: o.acquire,
                renew: now,
            };
            request(
                cfg,
                m,
                io,
                LeaseMsg::Update {
                    op: Op::Release,
                    record,
                },
            );
        }
    }

    /// `on_loss = exit`: the process is gone until its supervisor starts it again, a draw of
    /// `restart` later. Nothing of it survives (members persist nothing), it arms no timer and
    /// ignores every message meanwhile. Modelled here rather than as a driver crash so that
    /// protocols stay pure and both drivers run it unchanged; the node's workload is the
    /// driver's and follows `leader.stop_lag_ms` as for any departure (`klog.FlushAndExit`
    /// itself waits up to `ExitFlushTimeout` for the logs while the other goroutines run on).
    fn exit(&mut self, io: &mut Io<'_, Self>) {
        if let Part::Member(m) = &mut self.part {
            *m = Member {
                down: true,
                ..Member::default()
            };
        }
        for t in [
            LeaseTimer::Poll,
            LeaseTimer::Expire,
            LeaseTimer::Renew,
            LeaseTimer::Deadline,
        ] {
            io.cancel_timer(t);
        }
        let after = io.uniform(self.cfg.restart.0, self.cfg.restart.1);
        io.set_timer(LeaseTimer::Restart, after);
    }

    /// A member's (re)start: forget everything, read the record at once (client-go's
    /// `JitterUntil` runs its first attempt at once) and poll from then on.
    fn start_member(&mut self, io: &mut Io<'_, Self>) {
        if let Part::Member(m) = &mut self.part {
            *m = Member::default();
            request(&self.cfg, m, io, LeaseMsg::Get);
        }
        let after = self.poll_after(io);
        io.set_timer(LeaseTimer::Poll, after);
    }

    fn refresh_belief(&mut self, now: Time) {
        let (me, expiry) = (self.id, self.cfg.expiry);
        if let Part::Member(m) = &mut self.part {
            m.believed = if m.leading {
                Some(me)
            } else {
                m.observed
                    .filter(|r| now < Self::expires_at(expiry, m.observed_at, r))
                    .and_then(|r| r.holder)
                    // Only the leading node names itself: one that stopped does not.
                    .filter(|&h| h != me)
            };
        }
    }

    fn store_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let cas = self.cfg.cas;
        let Part::Store(rec) = &mut self.part else {
            return;
        };
        if let Some((reply, changed)) = rec.answer(msg, from, cas) {
            if changed {
                io.persist(*rec);
            }
            io.send(from, reply);
        }
    }
}

impl Record {
    /// The store's rule, for any store (this crate's single endpoint, or a replicated store
    /// applying requests in its log's order): answer `msg` from member `from` against the
    /// record `self`, applying an update as a compare-and-swap on the version (with `cas`) or
    /// as a blind write (`lease.cas = false`, see the crate docs). Returns the answer and
    /// whether the record changed; `None` for a message that is not a request.
    pub fn answer(&mut self, msg: LeaseMsg, from: NodeId, cas: bool) -> Option<(LeaseMsg, bool)> {
        match msg {
            LeaseMsg::Get => Some((LeaseMsg::Record(*self), false)),
            LeaseMsg::Update { op, record } => {
                let next = if cas {
                    // Compare-and-swap on the version the writer read.
                    (record.version == self.version).then_some(record)
                } else {
                    Lease::blind(op, from, self, record)
                };
                let ok = next.is_some();
                if let Some(next) = next {
                    *self = Record {
                        version: self.version + 1,
                        ..next
                    };
                }
                Some((
                    LeaseMsg::Updated {
                        op,
                        ok,
                        record: *self,
                    },
                    ok,
                ))
            }
            LeaseMsg::Record(_) | LeaseMsg::Updated { .. } => None,
        }
    }
}

impl Lease {
    /// `cas = false`, hendrikmaus/kube-leader-election's writes (`src/lease.rs`): JSON merge
    /// patches without a `resourceVersion`, which the API server applies whatever the version.
    /// An acquisition (`acquire_lease`) writes the whole record: the last writer wins. A
    /// renewal (`renew_lease`: renew time and duration) and a release (`step_down`: an empty
    /// holder) are sent only after a read that found the writer holding the lease
    /// (`try_acquire_or_renew`, `are_we_leading`); that read and the write are collapsed into
    /// one step here, as client-go's read and compare-and-swap are: applied if the record
    /// still names the writer, refused otherwise. The version is ignored throughout.
    fn blind(op: Op, from: NodeId, cur: &Record, upd: Record) -> Option<Record> {
        match op {
            Op::Acquire => Some(upd),
            Op::Renew if cur.holder == Some(from) => Some(Record {
                renew: upd.renew,
                duration: upd.duration,
                ..*cur
            }),
            Op::Release if cur.holder == Some(from) => Some(Record {
                holder: None,
                renew: upd.renew,
                duration: upd.duration,
                ..*cur
            }),
            Op::Renew | Op::Release => None,
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
            Part::Member(_) => self.start_member(io),
        }
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: LeaseMsg) {
        if self.is_store() {
            self.store_message(io, from, msg);
            return;
        }
        if !self.cfg.is_store_endpoint(from) || matches!(&self.part, Part::Member(m) if m.down) {
            return; // not the store's, or the process is down: nobody reads it
        }
        let now = io.now();
        let me = self.id;
        if let Part::Member(m) = &mut self.part {
            m.unanswered_since = None;
        }
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
                        Self::release(&self.cfg, m, me, now, io);
                    }
                    Op::Renew | Op::Release => {}
                }
            }
            LeaseMsg::Get | LeaseMsg::Update { .. } => {}
        }
        self.refresh_belief(now);
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: LeaseTimer) {
        let (me, now) = (self.id, io.now());
        let Part::Member(m) = &mut self.part else {
            return;
        };
        if m.down {
            if timer == LeaseTimer::Restart {
                self.start_member(io);
            }
            return;
        }
        match timer {
            LeaseTimer::Poll if !m.leading && !m.stopping => {
                // A new attempt: an acquisition still unanswered was lost (client-go's request
                // would have timed out by now).
                m.acquiring = false;
                request(&self.cfg, m, io, LeaseMsg::Get);
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
                    request(
                        &self.cfg,
                        m,
                        io,
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
        if let Part::Member(m) = &mut self.part {
            if !m.leading && !m.down {
                // A forced detection: the member suspects the holder now and reads the record at
                // once; it still takes the lease only once it is expired by its own clock.
                m.detected = true;
                request(&self.cfg, m, io, LeaseMsg::Get);
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
