//! `election-core`: the contract every leader-election protocol in the workbench implements.
//!
//! A protocol is a **pure state machine**. It never reads a clock, never touches a socket,
//! never spawns a thread and never draws from a global random generator. Everything it needs
//! comes in through the [`Io`] handle the driver passes to each input, and everything it wants
//! done leaves through the same handle as data ([`Action`]s). The same protocol code is
//! therefore driven by the deterministic simulator (`election-sim`), by the tokio/UDP driver
//! (`election-live`), and by hand in unit tests.
//!
//! # The driving contract
//!
//! A driver owns one protocol instance per live node and must:
//!
//! 1. call [`Protocol::on_start`] once when the node boots or recovers from a crash, passing
//!    whatever the node last wrote with [`Io::persist`] (or `None` on a first boot);
//! 2. call [`Protocol::on_message`] for each delivered message, [`Protocol::on_timer`] for
//!    each timer that fires (a timer set again or cancelled before it fires never fires), and
//!    [`Protocol::on_suspect`] when a scenario forces the node's failure detector to fire,
//!    and [`Protocol::on_handover`] when the node is about to be stopped on purpose (a planned
//!    restart: a leader hands over before it goes);
//! 3. after **every** input, drain the actions from the [`Io`] and carry them out in order, then
//!    read [`Protocol::status`]; the observer compares it with the previous status to record
//!    role and leader-belief changes.
//!
//! Each node has at most one pending timer per [`TimerKind`] value: setting a timer that is
//! already pending moves it. Timer kinds are a small fixed table ([`TimerKind::COUNT`]), which
//! lets drivers keep timers in an array and discard stale firings with a generation counter.
//!
//! Node ids are `1..=n` and a higher id is a higher priority (the bully order).
//!
//! # Service endpoints
//!
//! A protocol may need endpoints that are not members of the cluster: lease-based election's
//! lock service (the lease store). Such a protocol declares how many (the runner's spec table
//! passes the count to the drivers as `services`); a driver then runs ids `n + 1 ..= n +
//! services` as more nodes, built by the same factory and driven through this same trait
//! (messages, timers, stable storage, crashes, pauses, clocks), and the protocol's node type
//! plays either part by its id. Service endpoints are not counted in `n`, never lead, and
//! stay out of partitions (they sit outside the members' network split; only faults that name
//! them cut their links). Their messages count like any other. A service endpoint that is the
//! family's authority (a lock service) reports in its [`Status::leader`] the holder its record
//! names: the observer's quorum leader for such a family is that holder while it can reach the
//! endpoint (the simulator's `observer` module defines it), since the members of such a family
//! talk only through the endpoint. A replicated authority (several endpoints that elect a
//! leader among themselves) has only its leader report the holder, with its term as
//! [`Status::epoch`]; see [`QuorumRule::Service`].
//!
//! # Randomness
//!
//! [`Io::rng`] is a [`Rng`] (ChaCha8, a portable generator whose output is fixed by its seed on
//! every platform). The simulator seeds it from the trial seed; protocols use it for election
//! timeouts and detection jitter. Nothing else in a protocol may be random.
//!
//! # Example: a protocol, driven by hand
//!
//! The smallest protocol: node 1 leads and says so every 50 ms. Driving it is what every driver
//! does: build an [`Io`] over the node's generator and an action buffer, call an input, carry
//! out the actions, read the status. (`examples/highest_alive.rs` at the repository's root runs
//! a protocol like it in the simulator, through a crash and a partition.)
//!
//! ```
//! use std::time::Duration;
//! use election_core::*;
//!
//! #[derive(Clone, Debug)]
//! struct Hello;
//! impl Message for Hello {
//!     fn category(&self) -> MsgCategory { MsgCategory::Heartbeat }
//!     fn kind(&self) -> &'static str { "HELLO" }
//!     fn wire_size(&self) -> usize { 1 }
//! }
//! #[derive(Clone, Copy, Debug, PartialEq, Eq)]
//! struct Tick;
//! impl TimerKind for Tick {
//!     const COUNT: usize = 1;
//!     fn index(self) -> usize { 0 }
//!     fn is_failure_detector(self) -> bool { false }
//! }
//! struct FixedLeader { id: NodeId, n: u32 }
//! impl Protocol for FixedLeader {
//!     type Msg = Hello;
//!     type Timer = Tick;
//!     type Persist = ();
//!     fn on_start(&mut self, io: &mut Io<'_, Self>, _stored: Option<&()>) { self.on_timer(io, Tick) }
//!     fn on_message(&mut self, _io: &mut Io<'_, Self>, _from: NodeId, _msg: Hello) {}
//!     fn on_timer(&mut self, io: &mut Io<'_, Self>, _timer: Tick) {
//!         if self.id == NodeId(1) {
//!             io.send_many((2..=self.n).map(NodeId), &Hello);
//!             io.set_timer(Tick, Duration::from_millis(50));
//!         }
//!     }
//!     fn on_suspect(&mut self, _io: &mut Io<'_, Self>) {}
//!     fn status(&self) -> Status {
//!         let role = if self.id == NodeId(1) { Role::Leader } else { Role::Follower };
//!         Status { role, leader: Some(NodeId(1)), epoch: None }
//!     }
//! }
//!
//! // The driver's side of one input: node 1 boots at t = 0 in a 3-node cluster.
//! let mut node = FixedLeader { id: NodeId(1), n: 3 };
//! let mut rng = Rng::seed_from_u64(1);
//! let mut actions = Vec::new();
//! node.on_start(&mut Io::new(Time::ZERO, &mut rng, &mut actions), None);
//! assert!(matches!(actions[0], Action::Send { to: NodeId(2), .. }));
//! assert!(matches!(actions[1], Action::Send { to: NodeId(3), .. }));
//! assert!(matches!(actions[2], Action::SetTimer { at, .. } if at == Time::ZERO + Duration::from_millis(50)));
//! assert_eq!(node.status().role, Role::Leader);
//! ```
use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

pub use rand::{Rng as RngExt, RngCore, SeedableRng};

/// The portable random generator every driver hands to protocols.
pub type Rng = rand_chacha::ChaCha8Rng;

/// A node's identity. Ids run `1..=n`; a higher id is a higher bully priority.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The zero-based index of this node in per-node vectors (`id - 1`).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize - 1
    }
    /// The node whose zero-based index is `i`.
    #[inline]
    pub fn from_index(i: usize) -> NodeId {
        NodeId(i as u32 + 1)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An instant: nanoseconds since the driver's epoch (the start of the trial in simulation).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Time(pub u64);

impl Time {
    /// The driver's epoch.
    pub const ZERO: Time = Time(0);
    /// The instant `ms` milliseconds after the epoch (the last representable instant if
    /// that is later).
    pub fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }
    /// Milliseconds since the epoch, with nanosecond precision.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// The time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Duration) -> Time {
        Time(
            self.0
                .saturating_add(d.as_nanos().min(u64::MAX as u128) as u64),
        )
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    #[inline]
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_since(rhs)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.as_millis_f64())
    }
}

/// The common message categories, meaning the same thing in every protocol so that counts
/// compare across protocols.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum MsgCategory {
    /// Asks others to take part in an election: bully ELECTION, ring ELECTION, Raft
    /// RequestVote and PreVote requests.
    Election,
    /// Answers an election request or acknowledges a hop: bully OK, Raft vote and pre-vote
    /// responses, ring hop acknowledgements.
    Reply,
    /// Announces a leader: bully COORDINATOR, ring ELECTED.
    Leader,
    /// Keeps a leader's authority alive: heartbeats and their acknowledgements (Raft's empty
    /// AppendEntries and its response).
    Heartbeat,
}

impl MsgCategory {
    /// Every category, in column order.
    pub const ALL: [MsgCategory; 4] = [
        MsgCategory::Election,
        MsgCategory::Reply,
        MsgCategory::Leader,
        MsgCategory::Heartbeat,
    ];
    /// Number of categories.
    pub const COUNT: usize = 4;
    /// Position in [`MsgCategory::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The lowercase name used in CSV columns and docs.
    pub fn name(self) -> &'static str {
        match self {
            MsgCategory::Election => "election",
            MsgCategory::Reply => "reply",
            MsgCategory::Leader => "leader",
            MsgCategory::Heartbeat => "heartbeat",
        }
    }
    /// True for the categories that make up an election (everything but heartbeats).
    pub fn is_election_traffic(self) -> bool {
        !matches!(self, MsgCategory::Heartbeat)
    }
}

/// What every protocol message tells the driver about itself.
pub trait Message: Clone + fmt::Debug {
    /// The common category, for counting.
    fn category(&self) -> MsgCategory;
    /// The protocol's own name for this message kind (`"ELECTION"`, `"OK"`, ...), for traces.
    fn kind(&self) -> &'static str;
    /// The size in bytes of this message's wire encoding (payload only, without UDP/IP headers).
    fn wire_size(&self) -> usize;
}

/// Why bytes could not be decoded into a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The bytes end before the message does.
    Truncated,
    /// The tag byte names no message kind.
    UnknownTag(u8),
    /// The message is followed by this many unexpected bytes.
    Trailing(usize),
    /// A field holds a value the protocol never sends (e.g. node id 0).
    Invalid(&'static str),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated => write!(f, "message truncated"),
            WireError::UnknownTag(t) => write!(f, "unknown message tag {t}"),
            WireError::Trailing(n) => write!(f, "{n} trailing bytes after the message"),
            WireError::Invalid(what) => write!(f, "invalid field: {what}"),
        }
    }
}

impl std::error::Error for WireError {}

/// A protocol message's binary encoding, for drivers that use a real network. The encoding
/// of a message is exactly [`Message::wire_size`] bytes long.
pub trait Wire: Message + Sized {
    /// Append this message's encoding to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decode one message that fills `bytes` exactly. Never panics, whatever the input.
    fn decode(bytes: &[u8]) -> Result<Self, WireError>;
    /// The node id this message names in its fields, if any (not its sender, which the
    /// transport carries): a candidate, a leader, a lease holder; no message names more than
    /// one. The decoder cannot know the cluster's size; a driver that does refuses a message
    /// naming an id outside `1..=n`, since a protocol may index its per-node state by it.
    fn named_node(&self) -> Option<NodeId> {
        None
    }
}

/// The [`Wire`] contract as checks, for every protocol crate's tests to run over its own
/// messages: one statement of what an encoding must satisfy, instead of a copy per crate.
/// Each check panics with the offending message on a violation.
pub mod wire_contract {
    use super::Wire;
    use std::fmt::Debug;

    /// `m`'s encoding.
    pub fn encode<M: Wire>(m: &M) -> Vec<u8> {
        let mut out = Vec::new();
        m.encode(&mut out);
        out
    }

    /// Every message encodes to exactly [`crate::Message::wire_size`] bytes, decodes back to
    /// itself, and no two messages share an encoding.
    pub fn round_trips<M: Wire + PartialEq + Debug>(all: &[M]) {
        for m in all {
            let bytes = encode(m);
            assert_eq!(bytes.len(), m.wire_size(), "{m:?}: encoding length");
            assert_eq!(M::decode(&bytes).as_ref(), Ok(m), "{m:?}: decode(encode)");
        }
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(encode(a), encode(b), "{a:?} and {b:?} collide");
            }
        }
    }

    /// Every proper prefix of a message's encoding, and the encoding with one byte more, is an
    /// error (a datagram holds exactly one message).
    pub fn rejects_truncated_and_extended<M: Wire + Debug>(all: &[M]) {
        for m in all {
            let bytes = encode(m);
            for cut in 0..bytes.len() {
                assert!(M::decode(&bytes[..cut]).is_err(), "{m:?} cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(M::decode(&longer).is_err(), "{m:?} + 1 byte");
        }
    }

    /// Decoding arbitrary `bytes` returns (never panics), and what it accepts re-encodes to
    /// the same bytes: the encoding is canonical. For property tests over random input.
    pub fn canonical<M: Wire + Debug>(bytes: &[u8]) -> Result<(), String> {
        match M::decode(bytes) {
            Ok(m) if encode(&m) != bytes => Err(format!(
                "{bytes:?} decodes to {m:?}, which encodes to {:?}",
                encode(&m)
            )),
            _ => Ok(()),
        }
    }
}

/// A bounds-checked reader for [`Wire::decode`] implementations (big-endian integers).
#[derive(Debug)]
pub struct WireReader<'a> {
    bytes: &'a [u8],
}

impl<'a> WireReader<'a> {
    /// Read from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        WireReader { bytes }
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        if self.bytes.len() < N {
            return Err(WireError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(N);
        self.bytes = rest;
        Ok(head.try_into().expect("length checked"))
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take::<1>()?[0])
    }
    /// A big-endian u32.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.take()?))
    }
    /// A big-endian u64.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
    /// A node id (a u32 that must not be 0).
    pub fn node(&mut self) -> Result<NodeId, WireError> {
        match self.u32()? {
            0 => Err(WireError::Invalid("node id 0")),
            id => Ok(NodeId(id)),
        }
    }
    /// Succeeds only if every byte was consumed.
    pub fn finish(self) -> Result<(), WireError> {
        match self.bytes.len() {
            0 => Ok(()),
            n => Err(WireError::Trailing(n)),
        }
    }
}

/// A protocol's timer names: a small fixed table.
pub trait TimerKind: Copy + Eq + fmt::Debug {
    /// How many distinct timers a node can have pending at once.
    const COUNT: usize;
    /// This timer's slot in `0..COUNT`.
    fn index(self) -> usize;
    /// True for the timer whose firing is the node's *automatic* failure detector suspecting
    /// the leader. A scenario can switch a node's automatic detection off; the driver then
    /// swallows firings of this timer (the protocol still arms it, it just never goes off).
    fn is_failure_detector(self) -> bool;
}

/// A node's role, as far as the observer is concerned.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Role {
    /// Not running an election and not leading.
    Follower,
    /// Running an election (bully "electing", ring participant, Raft candidate or pre-candidate).
    Candidate,
    /// Believes it is the leader.
    Leader,
}

impl Role {
    /// The lowercase name used in traces and docs.
    pub fn name(self) -> &'static str {
        match self {
            Role::Follower => "follower",
            Role::Candidate => "candidate",
            Role::Leader => "leader",
        }
    }
}

/// What a protocol reports after every input.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Status {
    /// The node's role.
    pub role: Role,
    /// The node it currently believes is leader (itself when it leads), if any.
    pub leader: Option<NodeId>,
    /// The epoch or term, for protocols that have one (Raft's term, bully's epoch option).
    pub epoch: Option<u64>,
}

impl Status {
    /// A follower that knows no leader.
    pub const FOLLOWER_NO_LEADER: Status = Status {
        role: Role::Follower,
        leader: None,
        epoch: None,
    };
}

/// Whose support makes a node in the leader role the cluster's working leader — the *quorum
/// leader* the simulator's observer measures every availability metric by. Each family states
/// its own rule through [`Protocol::quorum_rule`]; the observer applies it the same way in every
/// driver. In every rule the leader must also be live, unpaused and in the leader role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QuorumRule {
    /// More than half of all `n` members (crashed ones count against it) name it as leader,
    /// each over links up both ways with it: a majority protocol (Raft; the bully with its
    /// quorum option), which cannot serve without a majority.
    #[default]
    Members,
    /// More than half of the *live* members name it, each over links up both ways with it: a
    /// protocol built to elect among whoever is alive under crash failures (the bully, the
    /// ring), whose leader serves with any number of survivors. Under a partition the live
    /// members are all there, so a minority side's leader is still not one.
    LiveMembers,
    /// The store's working endpoint names it as the holder of its record, and its links to
    /// and from that endpoint are up (or to and from another working endpoint, linked both ways
    /// to it, that forwards): it can renew (the lease). The working endpoint is, among
    /// the live service endpoints that name a holder and reach more than half of the service
    /// endpoints both ways, the one with the highest epoch: a single store that names one; for
    /// a replicated store (several endpoints, a Raft group), its leader, which reports its term
    /// as its epoch.
    Service,
    /// More than half of the `k` **voters**, the members with the `k` lowest ids `1..=k`
    /// (crashed ones count against it), name it as leader, each over links up both ways with
    /// it: a majority protocol whose other members are non-voting *learners* that follow the
    /// leader but are never counted (Raft with `voters`; etcd-io/raft's learners,
    /// hashicorp/raft's non-voters). Only a voter can lead. With `k >= n` every member votes
    /// and it is [`QuorumRule::Members`]; see [`QuorumRule::voters`].
    Voters(u32),
}

impl QuorumRule {
    /// How many of `n` members count towards this rule's majorities: the first `k` for
    /// [`QuorumRule::Voters`] (at most `n`), every member otherwise (for
    /// [`QuorumRule::LiveMembers`], of which the live ones are counted).
    pub fn voters(self, n: u32) -> u32 {
        match self {
            QuorumRule::Voters(k) => k.min(n),
            _ => n,
        }
    }
}

/// One output of a protocol, carried out by the driver in order.
#[derive(Clone, Debug)]
pub enum Action<P: Protocol> {
    /// Send `msg` to node `to`.
    Send {
        /// Destination.
        to: NodeId,
        /// The message.
        msg: P::Msg,
    },
    /// Arm (or re-arm) `timer` to fire at `at`.
    SetTimer {
        /// Which timer.
        timer: P::Timer,
        /// When it fires.
        at: Time,
    },
    /// Disarm `timer` if it is pending.
    CancelTimer(P::Timer),
    /// Replace the node's stable storage with this record, before any later action is carried out.
    Persist(P::Persist),
}

/// The handle a driver passes to every protocol input: the current time, the random
/// generator, and the sink for outputs.
///
/// The action buffer is owned by the driver and reused across inputs, so steady-state
/// operation does not allocate.
pub struct Io<'a, P: Protocol> {
    now: Time,
    rng: &'a mut Rng,
    actions: &'a mut Vec<Action<P>>,
}

impl<'a, P: Protocol> Io<'a, P> {
    /// A handle for one input at `now`. Actions are appended to `actions`.
    pub fn new(now: Time, rng: &'a mut Rng, actions: &'a mut Vec<Action<P>>) -> Self {
        Io { now, rng, actions }
    }
    /// The current time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// The driver's random generator.
    #[inline]
    pub fn rng(&mut self) -> &mut Rng {
        self.rng
    }
    /// A duration drawn uniformly from `[lo, hi]` (exactly `lo` when `hi <= lo`). Bounds past
    /// `u64::MAX` nanoseconds (about 584 years, beyond any instant) are clamped to it first.
    pub fn uniform(&mut self, lo: Duration, hi: Duration) -> Duration {
        if hi <= lo {
            return lo;
        }
        let ns = |d: Duration| d.as_nanos().min(u64::MAX as u128) as u64;
        let (lo, hi) = (ns(lo), ns(hi));
        if hi <= lo {
            return Duration::from_nanos(lo);
        }
        Duration::from_nanos(self.rng.random_range(lo..=hi))
    }
    /// Send `msg` to `to`.
    #[inline]
    pub fn send(&mut self, to: NodeId, msg: P::Msg) {
        self.actions.push(Action::Send { to, msg });
    }
    /// Send a copy of `msg` to each node in `to`, in iteration order.
    pub fn send_many(&mut self, to: impl IntoIterator<Item = NodeId>, msg: &P::Msg) {
        for to in to {
            self.actions.push(Action::Send {
                to,
                msg: msg.clone(),
            });
        }
    }
    /// Arm `timer` to fire `after` from now (moving it if already pending).
    #[inline]
    pub fn set_timer(&mut self, timer: P::Timer, after: Duration) {
        let at = self.now + after;
        self.actions.push(Action::SetTimer { timer, at });
    }
    /// Disarm `timer`.
    #[inline]
    pub fn cancel_timer(&mut self, timer: P::Timer) {
        self.actions.push(Action::CancelTimer(timer));
    }
    /// Write `record` to the node's stable storage (it survives crashes).
    #[inline]
    pub fn persist(&mut self, record: P::Persist) {
        self.actions.push(Action::Persist(record));
    }
}

/// A leader-election protocol as a pure state machine. See the crate docs for the driving
/// contract.
pub trait Protocol: Sized {
    /// The protocol's messages.
    type Msg: Message;
    /// The protocol's timers.
    type Timer: TimerKind;
    /// What the protocol keeps on stable storage (use `()` if nothing).
    type Persist: Clone + fmt::Debug;

    /// The node boots (first time: `stored` is `None`) or recovers from a crash with the
    /// last record it persisted.
    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&Self::Persist>);
    /// A message from `from` was delivered.
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: Self::Msg);
    /// `timer` fired.
    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: Self::Timer);
    /// The failure detector was forced to fire now: act exactly as if the node had just
    /// suspected its leader of having failed. A leader ignores it.
    fn on_suspect(&mut self, io: &mut Io<'_, Self>);
    /// The node is about to be stopped on purpose (a planned restart, a rolling upgrade): the
    /// driver stops its process a grace period later. A leader hands its leadership over
    /// before it goes, the way its real counterpart does on a graceful shutdown (Raft's
    /// leadership transfer and TimeoutNow, a bully coordinator resigning, a ring leader
    /// announcing its departure, a lease holder releasing its lease as client-go does with
    /// `ReleaseOnCancel`); until it is stopped it keeps answering but no longer competes to
    /// lead. A node that does not lead does nothing. The default does nothing: a family that
    /// keeps it has no hand-over (the runner's family table says so and skips the scenarios
    /// that ask for one).
    fn on_handover(&mut self, io: &mut Io<'_, Self>) {
        let _ = io;
    }
    /// A client hands the node an entry to replicate (the driver's workload, under majority
    /// commit: `election_sim::workload`). A protocol with a replicated log appends it when it
    /// leads (Raft: one entry of its term, persisted before it ships); the others ignore it,
    /// which is the default.
    fn on_client_entry(&mut self, io: &mut Io<'_, Self>) {
        let _ = io;
    }
    /// The node's current role, believed leader and epoch.
    fn status(&self) -> Status;
    /// Whose support makes this protocol's leader the cluster's working leader: the rule the
    /// observer's *quorum leader* applies (see [`QuorumRule`]). A majority protocol keeps the
    /// default.
    fn quorum_rule(&self) -> QuorumRule {
        QuorumRule::Members
    }
}

/// A protocol a multi-threaded driver can run (the live driver gives each node its own task):
/// the node, its messages with their wire encoding, its timers and its stable record can move
/// between threads. Every protocol that qualifies has it; drivers name this one bound instead
/// of the list.
pub trait ThreadedProtocol:
    Protocol<
        Msg: Wire + Send + Sync + 'static,
        Timer: Send + Sync + 'static,
        Persist: Send + Sync + 'static,
    > + Send
    + 'static
{
}

impl<P> ThreadedProtocol for P
where
    P: Protocol + Send + 'static,
    P::Msg: Wire + Send + Sync + 'static,
    P::Timer: Send + Sync + 'static,
    P::Persist: Send + Sync + 'static,
{
}

/// Timing every protocol shares, so that comparisons are fair: the same heartbeat interval
/// and the same failure-detection window.
///
/// A follower suspects its leader `detect_timeout + U[0, detect_jitter]` after the last sign
/// of life it received; the jitter is redrawn every time the detector is re-armed. Raft's
/// election timeout range is exactly this window (`[detect_timeout, detect_timeout +
/// detect_jitter]`) unless configured otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The leader's heartbeat period.
    pub heartbeat: Duration,
    /// The failure detector's base timeout.
    pub detect_timeout: Duration,
    /// The upper bound of the per-node random addition to `detect_timeout`.
    pub detect_jitter: Duration,
}

impl Timing {
    /// A detection deadline drawn from `[detect_timeout, detect_timeout + detect_jitter]`.
    pub fn draw_detect<P: Protocol>(&self, io: &mut Io<'_, P>) -> Duration {
        io.uniform(
            self.detect_timeout,
            self.detect_timeout.saturating_add(self.detect_jitter),
        )
    }
}

impl Default for Timing {
    /// 50 ms heartbeats, suspicion after 150–300 ms: the Raft paper's suggested election
    /// timeout range, used for every protocol.
    fn default() -> Self {
        Timing {
            heartbeat: Duration::from_millis(50),
            detect_timeout: Duration::from_millis(150),
            detect_jitter: Duration::from_millis(150),
        }
    }
}

/// A fixed-rate tick on the node's clock, for the adapters of tick-driven libraries (raft-rs,
/// Omni-Paxos): the `k`-th tick is due `k × period` after the start, whenever the previous
/// one actually fired, so a late firing (timer jitter, CPU time, a stop-the-world pause) does
/// not push every later tick back. This is Go's `time.Ticker`, which etcd's `raftNode` uses
/// to drive `Node.Tick` (etcd `server/etcdserver/raft.go`): a receiver that falls behind
/// loses the missed ticks ("the ticker will adjust the time interval or drop ticks to make
/// up for slow receivers", Go's `time.NewTicker` docs). A timer re-armed a whole period
/// after each firing would instead add each firing's lateness to every later tick, so a
/// 30-tick timeout would collect 30 timer jitters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticker {
    period: Duration,
    next: Time,
}

impl Ticker {
    /// A ticker started at `now` (local time) in a random phase: the first tick is due after
    /// a delay drawn uniformly from `(0, period]` with `rng` (the node's seeded stream,
    /// [`Io::rng`]), every later one a whole period after the one before. Arm the tick timer
    /// with the returned delay.
    ///
    /// A real member's ticker started when its process did, which has nothing to do with when
    /// the other members' did. Started at each node's boot instant, the tickers of a cluster
    /// booted together would all tick in the same phase (give or take timer jitter), so the
    /// part of a tick that each tick-counted timeout loses (a timeout of `k` ticks counted
    /// from a reset anywhere within a tick lasts `(k - 1)` to `k` periods) would be the same
    /// on every node, and elections that real clusters lose to a member one tick behind would
    /// never happen.
    pub fn start(now: Time, period: Duration, rng: &mut Rng) -> (Ticker, Duration) {
        let period = period.max(Duration::from_nanos(1));
        let ns = period.as_nanos().min(u64::MAX as u128) as u64;
        let first = Duration::from_nanos(rng.random_range(1..=ns));
        Ticker::with_first(now, period, first)
    }

    /// A ticker started at `now` whose first tick is due after `first` (at most one period),
    /// every later one a whole period after the one before.
    pub fn with_first(now: Time, period: Duration, first: Duration) -> (Ticker, Duration) {
        let period = period.max(Duration::from_nanos(1));
        let first = first.max(Duration::from_nanos(1)).min(period);
        (
            Ticker {
                period,
                next: now + first,
            },
            first,
        )
    }

    /// The tick due at `self.next` fired at `now`: the delay until the next one still ahead
    /// (ticks already past are dropped, as Go's ticker drops them).
    pub fn fired(&mut self, now: Time) -> Duration {
        let period = self.period.as_nanos().min(u64::MAX as u128) as u64;
        let mut next = self.next.0.saturating_add(period);
        if next <= now.0 {
            let missed = (now.0 - next) / period + 1;
            next = next.saturating_add(missed.saturating_mul(period));
        }
        self.next = Time(next);
        self.next.saturating_since(now)
    }
}

/// Every id of an `n`-node cluster, ascending.
pub fn all_nodes(n: u32) -> impl DoubleEndedIterator<Item = NodeId> + Clone {
    (1..=n).map(NodeId)
}

/// The size of a strict majority of `n` nodes: `n / 2 + 1`.
#[inline]
pub fn majority(n: u32) -> u32 {
    n / 2 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticker_keeps_a_fixed_rate_and_drops_missed_ticks() {
        let ms = Duration::from_millis;
        let (mut t, first) = Ticker::with_first(Time::from_millis(3), ms(5), ms(5));
        assert_eq!(first, ms(5)); // due at 8
                                  // Fired 0.7 ms late: the next is still due at 13, not 13.7.
        assert_eq!(t.fired(Time(8_700_000)), Duration::from_micros(4_300));
        assert_eq!(t.fired(Time::from_millis(13)), ms(5)); // due at 18
                                                           // A 12 ms pause: the ticks due at 23 and 28 are dropped; the next is due at 33.
        assert_eq!(t.fired(Time::from_millis(30)), ms(3));
        // A zero period is one nanosecond, never a loop.
        let (mut z, d) = Ticker::with_first(Time::ZERO, Duration::ZERO, Duration::ZERO);
        assert_eq!(d, Duration::from_nanos(1));
        assert_eq!(z.fired(Time(10)), Duration::from_nanos(1));
    }

    #[test]
    fn tickers_start_in_a_drawn_phase_within_one_period() {
        let period = Duration::from_millis(10);
        let mut rng = Rng::seed_from_u64(7);
        let firsts: Vec<Duration> = (0..50)
            .map(|_| Ticker::start(Time::ZERO, period, &mut rng).1)
            .collect();
        assert!(firsts.iter().all(|&f| f > Duration::ZERO && f <= period));
        // Phases spread over the period rather than sitting at its end.
        let early = firsts.iter().filter(|&&f| f < period / 2).count();
        assert!(
            (10..=40).contains(&early),
            "{early} of 50 in the first half"
        );
    }

    #[test]
    fn majority_is_strict() {
        assert_eq!(majority(1), 1);
        assert_eq!(majority(3), 2);
        assert_eq!(majority(4), 3);
        assert_eq!(majority(5), 3);
    }

    #[test]
    fn node_index_round_trips() {
        for i in 0..10 {
            assert_eq!(NodeId::from_index(i).index(), i);
        }
        assert_eq!(NodeId(1).index(), 0);
    }

    #[test]
    fn wire_reader_checks_bounds() {
        let bytes = [0u8, 0, 0, 7, 1, 9];
        let mut r = WireReader::new(&bytes);
        assert_eq!(r.node(), Ok(NodeId(7)));
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u32(), Err(WireError::Truncated));
        let mut r = WireReader::new(&bytes[..5]);
        r.u32().unwrap();
        assert_eq!(r.finish(), Err(WireError::Trailing(1)));
        assert_eq!(
            WireReader::new(&[0, 0, 0, 0]).node(),
            Err(WireError::Invalid("node id 0"))
        );
    }

    /// The contract checks catch what they state: a byte the size leaves out, a decoder that
    /// accepts trailing bytes, a non-canonical decoding.
    mod wire_contract_checks {
        use super::super::{wire_contract, Message, MsgCategory, Wire, WireError};

        /// A one-byte message; `LOOSE` decoders accept anything after the tag byte.
        #[derive(Clone, Debug, PartialEq)]
        struct Byte<const SIZE: usize, const LOOSE: bool>(u8);
        impl<const SIZE: usize, const LOOSE: bool> Message for Byte<SIZE, LOOSE> {
            fn category(&self) -> MsgCategory {
                MsgCategory::Heartbeat
            }
            fn kind(&self) -> &'static str {
                "BYTE"
            }
            fn wire_size(&self) -> usize {
                SIZE
            }
        }
        impl<const SIZE: usize, const LOOSE: bool> Wire for Byte<SIZE, LOOSE> {
            fn encode(&self, out: &mut Vec<u8>) {
                out.push(self.0);
            }
            fn decode(bytes: &[u8]) -> Result<Self, WireError> {
                match bytes {
                    [] => Err(WireError::Truncated),
                    [b] => Ok(Byte(*b)),
                    [b, ..] if LOOSE => Ok(Byte(*b)),
                    [_, rest @ ..] => Err(WireError::Trailing(rest.len())),
                }
            }
        }

        #[test]
        fn a_faithful_encoding_passes() {
            let all = [Byte::<1, false>(0), Byte(7)];
            wire_contract::round_trips(&all);
            wire_contract::rejects_truncated_and_extended(&all);
            assert_eq!(wire_contract::canonical::<Byte<1, false>>(&[3, 4]), Ok(()));
        }

        #[test]
        #[should_panic(expected = "encoding length")]
        fn a_wrong_wire_size_fails() {
            wire_contract::round_trips(&[Byte::<2, false>(0)]);
        }

        #[test]
        #[should_panic(expected = "+ 1 byte")]
        fn accepting_trailing_bytes_fails() {
            wire_contract::rejects_truncated_and_extended(&[Byte::<1, true>(0)]);
        }

        #[test]
        fn a_non_canonical_decoding_is_reported() {
            assert!(wire_contract::canonical::<Byte<1, true>>(&[3, 4]).is_err());
        }
    }

    #[test]
    fn time_arithmetic_saturates() {
        let t = Time::from_millis(5);
        assert_eq!(t + Duration::from_millis(2), Time::from_millis(7));
        assert_eq!(Time::from_millis(2) - t, Duration::ZERO);
        assert_eq!(Time(u64::MAX) + Duration::from_secs(1), Time(u64::MAX));
        assert_eq!(Time(1) + Duration::MAX, Time(u64::MAX));
        assert_eq!(Time::from_millis(u64::MAX), Time(u64::MAX));
    }

    struct Nop;
    #[derive(Clone, Debug)]
    struct NopMsg;
    impl Message for NopMsg {
        fn category(&self) -> MsgCategory {
            MsgCategory::Heartbeat
        }
        fn kind(&self) -> &'static str {
            "NOP"
        }
        fn wire_size(&self) -> usize {
            0
        }
    }
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct NopTimer;
    impl TimerKind for NopTimer {
        const COUNT: usize = 1;
        fn index(self) -> usize {
            0
        }
        fn is_failure_detector(self) -> bool {
            true
        }
    }
    impl Protocol for Nop {
        type Msg = NopMsg;
        type Timer = NopTimer;
        type Persist = ();
        fn on_start(&mut self, _: &mut Io<'_, Self>, _: Option<&()>) {}
        fn on_message(&mut self, _: &mut Io<'_, Self>, _: NodeId, _: NopMsg) {}
        fn on_timer(&mut self, _: &mut Io<'_, Self>, _: NopTimer) {}
        fn on_suspect(&mut self, _: &mut Io<'_, Self>) {}
        fn status(&self) -> Status {
            Status::FOLLOWER_NO_LEADER
        }
    }

    #[test]
    fn uniform_clamps_bounds_past_the_last_instant() {
        let mut rng = Rng::seed_from_u64(1);
        let mut actions = Vec::new();
        let mut io: Io<'_, Nop> = Io::new(Time::ZERO, &mut rng, &mut actions);
        let max = Duration::from_nanos(u64::MAX);
        // 2e13 ms = 2e19 ns: past u64::MAX ns; used to truncate to a bound below `lo` and panic.
        let huge = Duration::from_millis(20_000_000_000_000);
        let d = io.uniform(Duration::from_millis(150), huge);
        assert!(d >= Duration::from_millis(150) && d <= max, "{d:?}");
        assert_eq!(io.uniform(huge, huge + huge), max);
        assert_eq!(io.uniform(max, Duration::MAX), max);
        let t = Timing {
            heartbeat: Duration::from_millis(50),
            detect_timeout: Duration::MAX,
            detect_jitter: Duration::MAX,
        };
        assert_eq!(t.draw_detect(&mut io), Duration::MAX);
        let w = Timing::default().draw_detect(&mut io);
        assert!(w >= Duration::from_millis(150) && w <= Duration::from_millis(300));
    }
}
