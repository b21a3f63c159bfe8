//! The adapter: one `omnipaxos::OmniPaxos` per node behind [`Protocol`] (crate docs).

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use election_core::{
    Io, Message, MsgCategory, NodeId, Protocol, QuorumRule, Role, Status, Ticker, Time, TimerKind,
};
use omnipaxos::ballot_leader_election::Ballot;
use omnipaxos::messages::ballot_leader_election::HeartbeatMsg;
use omnipaxos::messages::sequence_paxos::PaxosMsg;
use omnipaxos::messages::Message as LibMessage;
use omnipaxos::storage::{Entry, StopSign, Storage, StorageOp, StorageResult};
use omnipaxos::util::NodeId as Pid;
use omnipaxos::{ClusterConfig, ServerConfig};
use omnipaxos_storage::memory_storage::MemoryStorage;
use serde::{Deserialize, Serialize};

/// A client entry in the replicated log: the appending node's id and its count of appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, omnipaxos::macros::Entry)]
pub struct OmniEntry {
    /// The node that appended it.
    pub node: u32,
    /// How many entries that node had appended before this one.
    pub seq: u64,
}

/// The library's default `resend_message_tick_timeout` (`omnipaxos/src/util.rs`,
/// `defaults::RESEND_MESSAGE_TIMEOUT`), which the adapter keeps.
const RESEND_TICKS: u64 = 100;

/// The configuration every node of a cluster shares.
#[derive(Clone, Debug, PartialEq)]
pub struct OmniConfig {
    /// Cluster size; ids `1..=n`.
    pub n: u32,
    /// The tick period: each node calls `tick()` this often on its own clock.
    pub tick: Duration,
    /// `election_tick_timeout`: ticks per BLE heartbeat round.
    pub election_ticks: u64,
}

impl OmniConfig {
    /// The derivation of the crate docs: `tick`, and a round of `detect_timeout` rounded to
    /// whole ticks (at least one).
    pub fn derive(n: u32, tick: Duration, detect_timeout: Duration) -> OmniConfig {
        let ticks = if tick.is_zero() {
            1.0
        } else {
            (detect_timeout.as_secs_f64() / tick.as_secs_f64()).round()
        };
        OmniConfig {
            n,
            tick,
            election_ticks: (ticks as u64).max(1),
        }
    }

    /// The BLE heartbeat round: `election_ticks × tick`.
    pub fn round(&self) -> Duration {
        self.tick
            .saturating_mul(self.election_ticks.min(u32::MAX as u64) as u32)
    }

    /// Checks the configuration, naming the bad field and value.
    pub fn validate(&self) -> Result<(), String> {
        if self.n < 2 {
            return Err(format!(
                "nodes = {}: Omni-Paxos needs at least 2 nodes (the library refuses one)",
                self.n
            ));
        }
        if self.tick < Duration::from_micros(1) {
            return Err(format!(
                "omnipaxos.tick_ms = {}: must be at least 0.001 ms",
                self.tick.as_secs_f64() * 1e3
            ));
        }
        if self.election_ticks == 0 {
            return Err("election_ticks = 0: must be at least 1".into());
        }
        Ok(())
    }

    /// The timing in one line (the manifest's `config.timing.omnipaxos`).
    pub fn describe(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            "tick {} ms; heartbeat round {} ticks = {} ms; a silent leader is noticed after {}-{} ms (1-2 rounds) and replaced one round later",
            ms(self.tick),
            self.election_ticks,
            ms(self.round()),
            ms(self.round()),
            2.0 * ms(self.round())
        )
    }
}

/// The node's one timer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OmniTimer {
    /// Call the library's `tick()`.
    Tick,
}

impl TimerKind for OmniTimer {
    const COUNT: usize = 1;
    fn index(self) -> usize {
        0
    }
    /// The tick drives replication and resends as well as BLE: switching it off would stop
    /// the node, not just its detector (crate docs).
    fn is_failure_detector(self) -> bool {
        false
    }
}

/// One library message.
#[derive(Clone, Debug)]
pub struct OmniMsg(pub LibMessage<OmniEntry>);

impl PartialEq for OmniMsg {
    /// Equal when the encodings are (the encoding is canonical: [`crate::wire`]).
    fn eq(&self, other: &Self) -> bool {
        crate::wire::to_bytes(self) == crate::wire::to_bytes(other)
    }
}

impl OmniMsg {
    /// The sender and the recipient the message names.
    pub fn ends(&self) -> (Pid, Pid) {
        match &self.0 {
            LibMessage::SequencePaxos(m) => (m.from, m.to),
            LibMessage::BLE(m) => (m.from, m.to),
        }
    }

    /// Every ballot the message carries.
    fn ballots(&self) -> Vec<Ballot> {
        match &self.0 {
            LibMessage::BLE(m) => match &m.msg {
                HeartbeatMsg::Request(_) => vec![],
                HeartbeatMsg::Reply(r) => vec![r.ballot, r.leader],
            },
            LibMessage::SequencePaxos(m) => match &m.msg {
                PaxosMsg::PrepareReq(p) => vec![p.n],
                PaxosMsg::Prepare(p) => vec![p.n, p.n_accepted],
                PaxosMsg::Promise(p) => vec![p.n, p.n_accepted],
                PaxosMsg::AcceptSync(a) => vec![a.n],
                PaxosMsg::AcceptDecide(a) => vec![a.n],
                PaxosMsg::Accepted(a) => vec![a.n],
                PaxosMsg::NotAccepted(a) => vec![a.n],
                PaxosMsg::Decide(d) => vec![d.n],
                PaxosMsg::AcceptStopSign(a) => vec![a.n],
                PaxosMsg::ProposalForward(_)
                | PaxosMsg::Compaction(_)
                | PaxosMsg::ForwardStopSign(_) => vec![],
            },
        }
    }

    /// Is every ballot's round at most [`crate::MAX_BALLOT`]?
    pub(crate) fn ballots_within_bound(&self) -> bool {
        self.ballots().iter().all(|b| b.n <= crate::MAX_BALLOT)
    }

    /// Does every id the message names (sender, recipient, ballots' pids; 0 is the library's
    /// "no ballot") lie in `1..=n`, with the sender `from` and the recipient `to`? The
    /// library indexes per-node vectors by pid, so a message naming any other id is dropped
    /// before it reaches it.
    pub fn names_only(&self, n: u32, from: NodeId, to: NodeId) -> bool {
        let (f, t) = self.ends();
        f == from.0 as Pid && t == to.0 as Pid && self.ballots().iter().all(|b| b.pid <= n as Pid)
    }
}

impl Message for OmniMsg {
    fn category(&self) -> MsgCategory {
        match &self.0 {
            LibMessage::BLE(_) => MsgCategory::Heartbeat,
            LibMessage::SequencePaxos(m) => match &m.msg {
                PaxosMsg::PrepareReq(_) | PaxosMsg::Prepare(_) => MsgCategory::Election,
                PaxosMsg::Promise(_) => MsgCategory::Reply,
                PaxosMsg::AcceptSync(_) => MsgCategory::Leader,
                _ => MsgCategory::Heartbeat,
            },
        }
    }

    fn kind(&self) -> &'static str {
        match &self.0 {
            LibMessage::BLE(m) => match m.msg {
                HeartbeatMsg::Request(_) => "HB_REQUEST",
                HeartbeatMsg::Reply(_) => "HB_REPLY",
            },
            LibMessage::SequencePaxos(m) => match m.msg {
                PaxosMsg::PrepareReq(_) => "PREPARE_REQ",
                PaxosMsg::Prepare(_) => "PREPARE",
                PaxosMsg::Promise(_) => "PROMISE",
                PaxosMsg::AcceptSync(_) => "ACCEPT_SYNC",
                PaxosMsg::AcceptDecide(_) => "ACCEPT_DECIDE",
                PaxosMsg::Accepted(_) => "ACCEPTED",
                PaxosMsg::NotAccepted(_) => "NOT_ACCEPTED",
                PaxosMsg::Decide(_) => "DECIDE",
                PaxosMsg::ProposalForward(_) => "FORWARD",
                PaxosMsg::Compaction(_) => "COMPACTION",
                PaxosMsg::AcceptStopSign(_) => "ACCEPT_STOPSIGN",
                PaxosMsg::ForwardStopSign(_) => "FORWARD_STOPSIGN",
            },
        }
    }

    fn wire_size(&self) -> usize {
        crate::wire::size(self)
    }
}

/// The one cluster configuration id (no reconfiguration is ever proposed).
const CONFIG_ID: u32 = 1;

/// The library's in-memory storage, noting whether anything was written since the adapter
/// last persisted it.
struct Durable {
    mem: MemoryStorage<OmniEntry>,
    dirty: bool,
}

/// The storage handed to the library. The library keeps its storage private, so the adapter
/// keeps a second handle on the same [`Durable`] to read what was written (one node, one
/// thread: the lock is never contended).
struct Store(Arc<Mutex<Durable>>);

impl Store {
    fn get(&self) -> MutexGuard<'_, Durable> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a node keeps on stable storage: the library's whole `MemoryStorage`.
#[derive(Clone)]
pub struct Record(Arc<MemoryStorage<OmniEntry>>);

impl fmt::Debug for Record {
    /// The durable fields a reader of a trace cares about (the log by its length).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &*self.0;
        f.debug_struct("Record")
            .field(
                "promise",
                &m.get_promise().ok().flatten().map(|b| (b.n, b.pid)),
            )
            .field(
                "accepted_round",
                &m.get_accepted_round().ok().flatten().map(|b| (b.n, b.pid)),
            )
            .field("decided_idx", &m.get_decided_idx().unwrap_or_default())
            .field("log_len", &m.get_log_len().unwrap_or_default())
            .finish()
    }
}

impl Record {
    /// The promised ballot's `(n, pid)`, if any.
    pub fn promise(&self) -> Option<(u32, u64)> {
        self.0.get_promise().ok().flatten().map(|b| (b.n, b.pid))
    }
    /// The number of entries in the durable log.
    pub fn log_len(&self) -> usize {
        self.0.get_log_len().unwrap_or_default()
    }
}

macro_rules! write_op {
    ($self:ident, $m:ident($($a:expr),*)) => {{
        let mut d = $self.get();
        d.dirty = true;
        d.mem.$m($($a),*)
    }};
}
macro_rules! read_op {
    ($self:ident, $m:ident($($a:expr),*)) => {{
        $self.get().mem.$m($($a),*)
    }};
}

impl Storage<OmniEntry> for Store {
    fn write_atomically(&mut self, ops: Vec<StorageOp<OmniEntry>>) -> StorageResult<()> {
        write_op!(self, write_atomically(ops))
    }
    fn append_entry(&mut self, entry: OmniEntry) -> StorageResult<()> {
        write_op!(self, append_entry(entry))
    }
    fn append_entries(&mut self, entries: Vec<OmniEntry>) -> StorageResult<()> {
        write_op!(self, append_entries(entries))
    }
    fn append_on_prefix(&mut self, from_idx: usize, entries: Vec<OmniEntry>) -> StorageResult<()> {
        write_op!(self, append_on_prefix(from_idx, entries))
    }
    fn set_promise(&mut self, n_prom: Ballot) -> StorageResult<()> {
        write_op!(self, set_promise(n_prom))
    }
    fn set_decided_idx(&mut self, ld: usize) -> StorageResult<()> {
        write_op!(self, set_decided_idx(ld))
    }
    fn get_decided_idx(&self) -> StorageResult<usize> {
        read_op!(self, get_decided_idx())
    }
    fn set_accepted_round(&mut self, na: Ballot) -> StorageResult<()> {
        write_op!(self, set_accepted_round(na))
    }
    fn get_accepted_round(&self) -> StorageResult<Option<Ballot>> {
        read_op!(self, get_accepted_round())
    }
    fn get_entries(&self, from: usize, to: usize) -> StorageResult<Vec<OmniEntry>> {
        read_op!(self, get_entries(from, to))
    }
    fn get_log_len(&self) -> StorageResult<usize> {
        read_op!(self, get_log_len())
    }
    fn get_suffix(&self, from: usize) -> StorageResult<Vec<OmniEntry>> {
        read_op!(self, get_suffix(from))
    }
    fn get_promise(&self) -> StorageResult<Option<Ballot>> {
        read_op!(self, get_promise())
    }
    fn set_stopsign(&mut self, s: Option<StopSign>) -> StorageResult<()> {
        write_op!(self, set_stopsign(s))
    }
    fn get_stopsign(&self) -> StorageResult<Option<StopSign>> {
        read_op!(self, get_stopsign())
    }
    fn trim(&mut self, idx: usize) -> StorageResult<()> {
        write_op!(self, trim(idx))
    }
    fn set_compacted_idx(&mut self, idx: usize) -> StorageResult<()> {
        write_op!(self, set_compacted_idx(idx))
    }
    fn get_compacted_idx(&self) -> StorageResult<usize> {
        read_op!(self, get_compacted_idx())
    }
    fn set_snapshot(
        &mut self,
        snapshot: Option<<OmniEntry as Entry>::Snapshot>,
    ) -> StorageResult<()> {
        write_op!(self, set_snapshot(snapshot))
    }
    fn get_snapshot(&self) -> StorageResult<Option<<OmniEntry as Entry>::Snapshot>> {
        read_op!(self, get_snapshot())
    }
}

type Lib = omnipaxos::OmniPaxos<OmniEntry, Store>;

/// One Omni-Paxos node: the library instance and the adapter's bookkeeping.
pub struct OmniPaxos {
    id: NodeId,
    config: Arc<OmniConfig>,
    /// Built in `on_start` (and rebuilt on every restart).
    lib: Option<Lib>,
    /// The adapter's handle on the library's storage.
    store: Arc<Mutex<Durable>>,
    /// When a message last arrived from each peer (by index; `None`: never since start).
    last_heard: Vec<Option<Time>>,
    /// Client entries this node appended.
    appended: u64,
    /// Reused buffer for the library's outgoing messages.
    outgoing: Vec<LibMessage<OmniEntry>>,
    /// The fixed-rate tick on the node's clock (`None` before the first start).
    ticker: Option<Ticker>,
}

impl OmniPaxos {
    /// Node `id` of the cluster `config` describes. It does nothing until `on_start`.
    pub fn new(id: NodeId, config: Arc<OmniConfig>) -> OmniPaxos {
        OmniPaxos {
            id,
            last_heard: vec![None; config.n as usize],
            config,
            lib: None,
            store: Arc::new(Mutex::new(Durable {
                mem: MemoryStorage::default(),
                dirty: false,
            })),
            appended: 0,
            outgoing: Vec::new(),
            ticker: None,
        }
    }

    /// The session rule of the crate docs: a gap longer than two heartbeat rounds.
    fn session_gap(&self) -> Duration {
        self.config.round().saturating_mul(2)
    }

    /// Send what the library queued, after persisting what it wrote.
    fn flush(&mut self, io: &mut Io<'_, Self>) {
        let Some(lib) = self.lib.as_mut() else {
            return;
        };
        lib.take_outgoing_messages(&mut self.outgoing);
        if let Some(record) = Store(Arc::clone(&self.store)).take_dirty() {
            io.persist(record);
        }
        for m in self.outgoing.drain(..) {
            let to = match &m {
                LibMessage::SequencePaxos(p) => p.to,
                LibMessage::BLE(b) => b.to,
            };
            let m = OmniMsg(m);
            // Never a ballot the peers' decoders refuse: past MAX_BALLOT the library would
            // campaign in rounds nobody accepts; held back, no election goes past it.
            if to >= 1
                && to <= self.config.n as Pid
                && to != self.id.0 as Pid
                && m.ballots_within_bound()
            {
                io.send(NodeId(to as u32), m);
            }
        }
    }

    fn build(&mut self, stored: Option<&Record>) -> Lib {
        let mem = stored.map_or_else(MemoryStorage::default, |r| MemoryStorage::clone(&r.0));
        let cluster = ClusterConfig {
            configuration_id: CONFIG_ID,
            nodes: (1..=self.config.n as Pid).collect(),
            flexible_quorum: None,
        };
        let server = ServerConfig {
            pid: self.id.0 as Pid,
            election_tick_timeout: self.config.election_ticks,
            resend_message_tick_timeout: RESEND_TICKS,
            ..ServerConfig::default()
        };
        self.store = Arc::new(Mutex::new(Durable { mem, dirty: false }));
        cluster
            .build_for_server(server, Store(Arc::clone(&self.store)))
            .expect("OmniConfig::validate accepts only configurations the library builds")
    }
}

impl Store {
    /// The record to persist if the library wrote since the last call.
    fn take_dirty(&self) -> Option<Record> {
        let mut d = self.get();
        std::mem::take(&mut d.dirty).then(|| Record(Arc::new(d.mem.clone())))
    }
}

impl Protocol for OmniPaxos {
    type Msg = OmniMsg;
    type Timer = OmniTimer;
    type Persist = Record;

    /// Builds the library on the stored record (its own recovery runs if it holds a promise)
    /// and starts ticking.
    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Record>) {
        let lib = self.build(stored);
        self.lib = Some(lib);
        self.last_heard.iter_mut().for_each(|t| *t = None);
        let (ticker, first) = Ticker::start(io.now(), self.config.tick, io.rng());
        self.ticker = Some(ticker);
        io.set_timer(OmniTimer::Tick, first);
        self.flush(io);
    }

    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: OmniMsg) {
        let n = self.config.n;
        if from == self.id || from.0 == 0 || from.0 > n || !msg.names_only(n, from, self.id) {
            return;
        }
        let now = io.now();
        let gap = self.session_gap();
        let Some(lib) = self.lib.as_mut() else {
            return;
        };
        let last = &mut self.last_heard[from.index()];
        if last.is_some_and(|t| now.saturating_since(t) > gap) {
            lib.reconnected(from.0 as Pid);
        }
        *last = Some(now);
        lib.handle_incoming(msg.0);
        self.flush(io);
    }

    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: OmniTimer) {
        match timer {
            OmniTimer::Tick => {
                if let Some(lib) = self.lib.as_mut() {
                    lib.tick();
                }
                let now = io.now();
                let next = match self.ticker.as_mut() {
                    Some(t) => t.fired(now),
                    None => self.config.tick,
                };
                io.set_timer(OmniTimer::Tick, next);
            }
        }
        self.flush(io);
    }

    /// BLE has no detector to force (crate docs): ignored.
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        self.flush(io);
    }

    /// A leader appends the entry (crate docs).
    fn on_client_entry(&mut self, io: &mut Io<'_, Self>) {
        if self.status().role != Role::Leader {
            return;
        }
        let entry = OmniEntry {
            node: self.id.0,
            seq: self.appended,
        };
        if let Some(lib) = self.lib.as_mut() {
            if lib.append(entry).is_ok() {
                self.appended += 1;
            }
        }
        self.flush(io);
    }

    fn status(&self) -> Status {
        let Some(lib) = self.lib.as_ref() else {
            return Status::FOLLOWER_NO_LEADER;
        };
        let promise = lib.get_promise();
        match lib.get_current_leader() {
            None => Status::FOLLOWER_NO_LEADER,
            Some((pid, accepted)) => {
                let me = pid == self.id.0 as Pid;
                let role = match (me, accepted) {
                    (true, true) => Role::Leader,
                    (true, false) => Role::Candidate,
                    (false, _) => Role::Follower,
                };
                Status {
                    role,
                    leader: Some(NodeId(pid as u32)),
                    epoch: Some(epoch(promise)),
                }
            }
        }
    }

    fn quorum_rule(&self) -> QuorumRule {
        QuorumRule::Members
    }
}

/// A ballot as an epoch: `(n << 32) | pid` (crate docs).
pub(crate) fn epoch(b: Ballot) -> u64 {
    ((b.n as u64) << 32) | (b.pid & 0xffff_ffff)
}
