//! The tokio driver: one task per node, each owning its UDP socket and its protocol instance,
//! and one hub task that applies the fault timeline and feeds the [`Observer`].
//!
//! # Tasks
//!
//! * A **node task** boots its protocol (`on_start` with what its stable storage holds), then
//!   loops over three inputs, in this priority: a control message from the hub (pause,
//!   forced suspicion), the earliest due timer, a datagram. After every input it carries out
//!   the protocol's actions in order (sends go out on its socket at once; timers go into a
//!   table with one slot per [`TimerKind`]; `Persist` writes the node's stable storage, an
//!   `Arc<Mutex<..>>` owned by the hub so that it outlives the task) and reports its status.
//! * The **hub** owns the [`Observer`], the link table and the fault timeline. The trial's
//!   rules are the simulator's, from [`election_sim::trial`], fed the real time: the
//!   [`Timeline`] decides when faults fire (after the wait for a quorum leader), the reference
//!   instant and when the trial ends; [`trial::resolve`] resolves each fault's selectors and
//!   [`trial::apply_topology`] updates the links; the hub only carries the decisions out over
//!   tasks and sockets. Every node
//!   reports what it does (status changes, sends, deliveries, drops, rejected datagrams,
//!   socket errors) over one channel, stamped with the real time since the trial's start; the
//!   hub observes those events in order. A fault fires at its scheduled instant (the hub sleeps
//!   to within 1.5 ms of it, then yields until it is due, so faults are not subject to the
//!   timer wheel's millisecond granularity); the hub first observes every event already
//!   reported, then resolves the fault's selectors from the observer's view, exactly like the
//!   simulator.
//!
//! Everything runs on one current-thread runtime per trial: while the hub applies a fault no
//! node runs, so a fault is atomic with respect to the nodes, as in the simulator.
//!
//! # Faults
//!
//! * **Crash**: the node's task is aborted (it loses its volatile state and pending timers; a
//!   crash can fall between a `Persist` and the sends after it, as a real crash can). Its
//!   socket stays bound, held by the hub, and a *tombstone* task reads it and drops every
//!   datagram that arrives while the node is down (reason `crashed`). **Recover** aborts the
//!   tombstone and starts a fresh task from the factory, with the stored record.
//! * **Pause**: the node's task sleeps for the duration; datagrams queue in the kernel's
//!   socket buffer and timers come due; on waking it fires the overdue timers (earliest
//!   first), then reads the backlog.
//! * **Partition, one-way cuts, isolate, heal**: a shared link table. The sender drops a
//!   datagram on a cut link; the receiver drops one whose link was cut while it was on the wire.
//! * **Loss**: each sender draws from its own seeded generator.
//! * **Added delay** (`net.latency` of [`LiveConfig::trial`], drawn by the simulator's
//!   [`Sampler`]): each datagram waits a drawn duration (at most a minute) in a spawned task
//!   before it is sent, FIFO per link with `net.fifo` (a datagram never overtakes an earlier
//!   one on the same link). Datagrams already waiting when their sender crashes are still sent.
//! * **Not modelled live** (refused by [`LiveConfig::validate`] before the trial runs): per-link
//!   loss and delay, slow nodes, amnesia, clock faults, duplication, per-link latencies, noise
//!   and steady-state windows.
//! * **Suspect**, **Handover** and **Detection** act on the node exactly as in the simulator
//!   (a paused node hears neither a forced suspicion nor a hand-over).
//! * **Protocol options** are the protocol's own state and run unchanged: the lease's
//!   `expiry`, `cas` and `on_loss = exit` (whose down time is the member's own
//!   `LeaseTimer::Restart`) need nothing from the driver. What `clock-jump-follower` and
//!   `clock.offset_ms` would show them is refused above (clock faults) or not modelled live.
//!
//! # Time
//!
//! `Time` is nanoseconds since the trial's start, read from tokio's clock. Events reach the
//! hub in channel order; an event stamped a few microseconds before one already observed
//! (two tasks racing to the channel) is observed at the later instant, so the observer's
//! clock never goes backwards. Protocol timers go through tokio's timer wheel, whose
//! resolution is one millisecond: a timer fires up to about a millisecond after its deadline.
//! The lateness of every firing is recorded in [`Health::timer_lateness_ms`].
//!
//! # Robustness
//!
//! Every trial draws a secret [`Key`] from the operating system, and every datagram carries a
//! tag under it ([`datagram`]): only the trial's own nodes can make one that verifies, so a
//! forger who can send to the ports, even from a member's address, cannot make a node act on
//! anything. A datagram from an address that is not a cluster member, one with a bad header,
//! one whose tag does not verify, one whose header names a different member than the address
//! it came from or another receiver, a replay (each receiver keeps a [`ReplayWindow`] per
//! sender, in the hub's memory so that it outlives the receiver's crashes, as the senders'
//! counters outlive theirs) and one the protocol cannot decode are each dropped and counted
//! ([`Health`]; their sum is the `datagrams_rejected` column); a socket error is counted and
//! the node carries on. Nothing a peer sends can make a node panic or allocate: datagrams are
//! read into one fixed buffer.

use std::future::pending;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use election_core::{
    Action, Io, Message, NodeId, Protocol, Rng, RngExt, Role, Status, ThreadedProtocol, Time,
    TimerKind, Wire,
};
use election_sim::trial::{self, FirstInstant, Timeline};
use election_sim::workload::{Commit, Resource, Workload, WriteTag};
use election_sim::{
    Applied, ConfigError, DropReason, FaultAction, Links, MsgInfo, NetConfig, Observer, Sampler,
    SimConfig, Stream, TraceKind, TrialReport,
};
use tokio::net::UdpSocket;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio::time::{sleep, sleep_until, Instant};

use crate::datagram::{self, Envelope, FrameError, Key, ReplayWindow, MAX_DATAGRAM};

/// The longest trial the driver accepts.
pub const MAX_HORIZON: Duration = Duration::from_secs(600);
/// The most endpoints (members and service endpoints) a live trial runs: one socket each, and
/// each keeps a [`ReplayWindow`] per peer (a few megabytes at this size).
pub const MAX_ENDPOINTS: u32 = 256;

/// Everything that defines one live trial: the trial as the simulator defines it, plus what
/// only sockets need.
///
/// The trial's rules are the simulator's own ([`election_sim::trial`]): the fault timeline,
/// the wait for a quorum leader, the reference instant, the settle window and the horizon, the
/// selectors, the topology after each fault, the workload's resource. What the simulator models
/// and real sockets cannot is refused by [`LiveConfig::validate`], naming the parameter and its
/// value; nothing is dropped silently. Two parts of [`SimConfig`] mean something else live:
///
/// * [`SimConfig::net`] is what the driver **adds** on top of the real network: `net.latency`
///   is a delay drawn per datagram (constant 0: none), `net.loss` a loss probability, and
///   `net.fifo` whether delayed datagrams keep their order per link. Duplication and per-link
///   latencies are refused.
/// * [`SimConfig::node`] (processing time, stable-storage latency, timer jitter, clocks) is the
///   machine's own: live nodes run on it; [`SimConfig::budget`], the simulator's bound on
///   its own work, does not apply (a live trial is bounded by its horizon, at most
///   [`MAX_HORIZON`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LiveConfig {
    /// The trial. Its [`SimConfig::seed`] seeds the protocols' generators, loss, added delay
    /// and `Selector::Random`: a live trial is not reproducible (the operating system
    /// schedules it), but its random choices are.
    pub trial: SimConfig,
    /// The address every node binds (on an ephemeral port). Loopback unless the user passes
    /// another address explicitly.
    pub bind: IpAddr,
}

impl LiveConfig {
    /// `n` nodes on 127.0.0.1, the given seed, no faults, nothing added to the real network, a
    /// 10 s horizon and a 1 s settle window; everything else as [`SimConfig::new`].
    pub fn new(n: u32, seed: u64) -> Self {
        let mut trial = SimConfig::new(n, seed);
        trial.net = NetConfig::constant_ms(0.0);
        trial.horizon = Duration::from_secs(10);
        trial.settle = Duration::from_secs(1);
        LiveConfig {
            trial,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        }
    }

    /// Check every field; the error names the first bad one, or the first thing the trial asks
    /// for that live nodes cannot do.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.trial;
        t.validate()?;
        if self.bind.is_unspecified() || self.bind.is_multicast() {
            // Bound to 0.0.0.0, a node's address is 0.0.0.0:port while its datagrams arrive
            // from 127.0.0.1:port (or another interface): no source would match a member, and
            // every datagram would be dropped as a non-member's.
            return Err(ConfigError::new(
                "bind",
                self.bind,
                "the nodes need one address their peers see datagrams come from: \
                 an unspecified (0.0.0.0, ::) or multicast address is none (e.g. 127.0.0.1)",
            ));
        }
        if t.nodes + t.services > MAX_ENDPOINTS {
            return Err(ConfigError::new(
                "nodes",
                t.nodes,
                format!(
                    "a live trial runs at most {MAX_ENDPOINTS} endpoints (nodes + service \
                     endpoints, here {} + {}), one UDP socket each",
                    t.nodes, t.services
                ),
            ));
        }
        if t.horizon > MAX_HORIZON {
            return Err(ConfigError::new(
                "horizon",
                format!("{:?}", t.horizon),
                format!("a live trial runs at most {MAX_HORIZON:?}"),
            ));
        }
        if t.run_to_horizon {
            return Err(ConfigError::new(
                "run_to_horizon",
                true,
                "a steady-state window under simulated noise has no live counterpart (the live \
                 driver has no noise model); run it simulated",
            ));
        }
        if !t.noise.is_none() {
            return Err(ConfigError::new(
                "noise",
                format!("{:?}", t.noise),
                "GC pauses, disk stalls and latency spikes are simulated only; set every \
                 noise.*_per_hour to 0 (noise.profile = none) for a live run",
            ));
        }
        if t.net.duplicate > 0.0 {
            return Err(ConfigError::new(
                "net.duplicate",
                t.net.duplicate,
                "the live driver does not duplicate datagrams; set net.duplicate = 0",
            ));
        }
        if let Some(l) = t.net.links.first() {
            return Err(ConfigError::new(
                "net.links",
                format!("{} -> {}: {:?}", l.from, l.to, l.latency),
                "the live driver adds one latency to every link; per-link latencies are \
                 simulated only",
            ));
        }
        if t.workload.on() && !t.workload.stop_lag.is_zero() {
            return Err(ConfigError::new(
                "leader.stop_lag_ms",
                format!("{:?}", t.workload.stop_lag),
                "a deposed leader's lagging writes are simulated only; set \
                 leader.stop_lag_ms = constant:0 for a live run",
            ));
        }
        if t.workload.on() && t.workload.commit == Commit::Majority {
            return Err(ConfigError::new(
                "workload.commit",
                "majority",
                "live mode supports workload.commit = resource only",
            ));
        }
        for (i, f) in t.faults.iter().enumerate() {
            if let Some(why) = unsupported(&f.action) {
                return Err(ConfigError::new(
                    format!("faults[{i}].action"),
                    format!("{:?}", f.action),
                    why,
                ));
            }
        }
        Ok(())
    }
}

/// Why the live driver cannot carry out `action`, if it cannot.
fn unsupported(action: &FaultAction) -> Option<&'static str> {
    match action {
        // Loss, delay and slowness per link or node would need the hub to hold each datagram
        // per link, and live nodes keep their stable storage in the hub's memory for the trial.
        FaultAction::LinkLoss { .. }
        | FaultAction::LinkDelay { .. }
        | FaultAction::Slow { .. }
        | FaultAction::Amnesia(_) => Some("not supported by the live driver (simulated only)"),
        // A stale connection comes back by itself at a simulated instant: the live hub has no
        // timer to restore it (simulated only).
        FaultAction::StaleConnection { .. } => {
            Some("not supported by the live driver (simulated only)")
        }
        // Live nodes read the machine's clock: it cannot be moved per node.
        FaultAction::ClockJump { .. } | FaultAction::ClockRate { .. } => {
            Some("live nodes read the machine's real clock, which cannot be moved per node")
        }
        _ => None,
    }
}

/// Why a live trial could not run.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A node's socket could not be bound.
    #[error("binding node {node}'s UDP socket to {addr}: {source}")]
    Bind {
        /// Which node.
        node: NodeId,
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
    /// The tokio runtime could not start.
    #[error("starting the tokio runtime: {0}")]
    Runtime(io::Error),
    /// The operating system's generator could not give the trial's datagram key.
    #[error("drawing the datagram key from the operating system's generator: {0}")]
    Key(getrandom::Error),
    /// The trial overran its horizon by more than the grace period (a driver bug).
    #[error("the trial did not stop within {0:?} of its start")]
    Overrun(Duration),
    /// A node's task panicked (a protocol bug, or input a check let through): the trial is
    /// void, never a result row.
    #[error("node {node}'s task panicked: {message}")]
    NodePanicked {
        /// Which node.
        node: NodeId,
        /// The panic's message.
        message: String,
    },
}

/// Why a datagram was dropped before reaching a protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// It came from an address that is not a cluster member's.
    NonMember(SocketAddr),
    /// It came from member `actual`'s address but its header names `claimed`.
    Impersonation {
        /// The header's sender.
        claimed: NodeId,
        /// The member whose address it came from.
        actual: NodeId,
    },
    /// Its header or payload is malformed, its tag does not verify, it is meant for another
    /// node or it is a replay (the [`FrameError`] says which).
    Malformed(FrameError),
}

/// How the nodes and their sockets fared: everything dropped before reaching a protocol, and
/// every socket error. A healthy loopback trial has all counters at zero.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Health {
    /// Datagrams from addresses outside the cluster.
    pub rejected_non_member: u64,
    /// Datagrams whose header names another member than the one whose address sent them.
    pub rejected_impersonation: u64,
    /// Datagrams with a malformed header (short, oversized, wrong version or length).
    pub rejected_frame: u64,
    /// Datagrams whose tag does not verify under the trial's key (forged or altered), or
    /// authentic ones naming a sender or receiver that does not fit (never from the trial's
    /// own nodes).
    pub rejected_forged: u64,
    /// Authentic datagrams received a second time, or too late to tell ([`ReplayWindow`]).
    pub rejected_replay: u64,
    /// Datagrams whose payload the protocol's decoder refused, or that name a node id no
    /// member has.
    pub rejected_payload: u64,
    /// Failed sends (the node carried on).
    pub send_errors: u64,
    /// Failed receives (the node carried on).
    pub recv_errors: u64,
    /// How late each protocol timer fired after its deadline, in ms.
    pub timer_lateness_ms: Vec<f64>,
    /// The first few problems, for people: `"t=812.402ms node 3: ..."`.
    pub notes: Vec<String>,
}

impl Health {
    /// The most notes kept.
    pub const MAX_NOTES: usize = 20;

    /// Every datagram rejected before reaching a protocol: the `datagrams_rejected` column of
    /// a live row and of a live summary.
    pub fn rejected(&self) -> u64 {
        self.rejected_non_member
            + self.rejected_impersonation
            + self.rejected_frame
            + self.rejected_forged
            + self.rejected_replay
            + self.rejected_payload
    }

    fn note(&mut self, at: Time, node: NodeId, what: String) {
        if self.notes.len() < Self::MAX_NOTES {
            self.notes.push(format!("t={at} node {node}: {what}"));
        }
    }

    /// Add another trial's health to this one (for a summary over trials).
    pub fn absorb(&mut self, other: &Health) {
        self.rejected_non_member += other.rejected_non_member;
        self.rejected_impersonation += other.rejected_impersonation;
        self.rejected_frame += other.rejected_frame;
        self.rejected_forged += other.rejected_forged;
        self.rejected_replay += other.rejected_replay;
        self.rejected_payload += other.rejected_payload;
        self.send_errors += other.send_errors;
        self.recv_errors += other.recv_errors;
        self.timer_lateness_ms
            .extend_from_slice(&other.timer_lateness_ms);
        for n in &other.notes {
            if self.notes.len() < Self::MAX_NOTES {
                self.notes.push(n.clone());
            }
        }
    }
}

/// The outcome of one live trial: the trial's report as the simulator makes one (it
/// dereferences to it: `report.metrics`), and what only sockets have.
#[derive(Clone, Debug)]
pub struct LiveReport {
    /// The metrics (computed by the simulator's own observer from real timestamps), each
    /// node's last status, the trace, the end, and how many events the hub observed.
    pub trial: TrialReport,
    /// The address each node's socket was bound to, indexed by `id - 1`.
    pub addresses: Vec<SocketAddr>,
    /// Rejected datagrams, socket errors and timer lateness.
    pub health: Health,
}

/// Run one trial of protocol `P` over real UDP sockets; `factory` makes a node at boot and at
/// every recovery. Blocks until the trial stops itself (at most `cfg.horizon` plus a few
/// seconds of grace), then closes every socket.
pub fn run_trial<P, F>(cfg: &LiveConfig, factory: F) -> Result<LiveReport, LiveError>
where
    P: ThreadedProtocol,
    F: Fn(NodeId) -> P + Send + Sync + 'static,
{
    run_trial_with(cfg, factory, Hooks::default())
}

/// Called once the sockets are bound, with the nodes' addresses.
pub type OnBound = Box<dyn FnOnce(&[SocketAddr]) + Send>;
/// Called once the sockets are bound, with a second handle on each endpoint's socket.
pub type OnSockets = Box<dyn FnOnce(Vec<std::net::UdpSocket>) + Send>;
/// Optional extras for [`run_trial_with`].
#[derive(Default)]
pub struct Hooks {
    /// Called once every socket is bound, before any node boots, with the nodes' addresses
    /// (indexed by `id - 1`).
    pub on_bound: Option<OnBound>,
    /// Called once every socket is bound, before any node boots, with a clone of every
    /// endpoint's socket (indexed by `id - 1`; non-blocking, as the node's own). What is sent
    /// on one arrives from that member's own address, as a forger who spoofs source addresses
    /// would make it arrive (the forgery tests); reading from one would steal the node's
    /// datagrams, peeking does not.
    pub on_sockets: Option<OnSockets>,
}

impl std::ops::Deref for LiveReport {
    type Target = TrialReport;
    fn deref(&self) -> &TrialReport {
        &self.trial
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("on_bound", &self.on_bound.is_some())
            .field("on_sockets", &self.on_sockets.is_some())
            .finish()
    }
}

/// [`run_trial`] with [`Hooks`].
pub fn run_trial_with<P, F>(
    cfg: &LiveConfig,
    factory: F,
    hooks: Hooks,
) -> Result<LiveReport, LiveError>
where
    P: ThreadedProtocol,
    F: Fn(NodeId) -> P + Send + Sync + 'static,
{
    cfg.validate()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LiveError::Runtime)?;
    let key = Key::random().map_err(LiveError::Key)?;
    let grace = Duration::from_secs(5);
    let limit = cfg.trial.horizon + grace;
    let result = rt.block_on(async {
        let (mut hub, clones) =
            Hub::<P, F>::bind(cfg, factory, key, hooks.on_sockets.is_some()).await?;
        if let Some(f) = hooks.on_bound {
            f(&hub.shared.peers);
        }
        if let Some(f) = hooks.on_sockets {
            f(clones);
        }
        hub.restart_clock();
        tokio::time::timeout(limit, hub.run())
            .await
            .map_err(|_| LiveError::Overrun(limit))?
    });
    // Dropping the runtime cancels every task still alive (delayed sends), which closes the
    // last sockets.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// A message from the hub to a node task.
#[derive(Debug)]
enum Control {
    /// Process nothing until this instant.
    Pause(Instant),
    /// The failure detector is forced to fire.
    Suspect,
    /// The node is about to be stopped on purpose (`Protocol::on_handover`).
    Handover,
}

/// What a node tells the hub.
#[derive(Debug)]
enum Ev {
    Boot(NodeId, Status),
    Status(NodeId, Status),
    Send(MsgInfo),
    Deliver(MsgInfo),
    Drop(MsgInfo, DropReason),
    Invalid {
        from: NodeId,
        to: u32,
        kind: &'static str,
    },
    Timer {
        node: NodeId,
        name: Option<String>,
        late_ns: u64,
    },
    Suppressed(NodeId),
    Resumed(NodeId),
    Rejected(NodeId, Rejection),
    SocketError {
        node: NodeId,
        send: bool,
        error: String,
    },
}

#[derive(Debug)]
struct Stamped {
    at: Time,
    ev: Ev,
}

/// State every task of one trial shares.
struct Shared {
    epoch: Instant,
    n: u32,
    /// The members (`n` counts the service endpoints too).
    members: u32,
    peers: Vec<SocketAddr>,
    links: RwLock<Links>,
    loss_bits: AtomicU64,
    /// The delay added to every datagram (`None`: none).
    delay: Option<Sampler>,
    /// Delayed datagrams keep their order per link.
    fifo: bool,
    detection: Vec<AtomicBool>,
    events: UnboundedSender<Stamped>,
    trace: bool,
    seed: u64,
    /// The trial's datagram key.
    key: Key,
    /// The last sequence number each endpoint used towards each other, by `from * n + to`
    /// (indices): here, not in the node task, so that numbers keep rising across crashes.
    sent: Vec<AtomicU64>,
    /// Each receiver's record of each sender's numbers, by `to * n + from` (indices): in the
    /// hub's memory, so that a datagram a node accepted before its crash is a replay after it.
    windows: Vec<Mutex<ReplayWindow>>,
}

impl Shared {
    fn now(&self) -> Time {
        Time(self.epoch.elapsed().as_nanos().min(u64::MAX as u128) as u64)
    }
    fn instant(&self, t: Time) -> Instant {
        self.epoch + Duration::from_nanos(t.0)
    }
    fn emit(&self, at: Time, ev: Ev) {
        // The hub outlives every node during a trial; after it, nobody listens.
        let _ = self.events.send(Stamped { at, ev });
    }
    fn member(&self, addr: SocketAddr) -> Option<NodeId> {
        self.peers
            .iter()
            .position(|p| *p == addr)
            .map(NodeId::from_index)
    }
    fn link_up(&self, from: NodeId, to: NodeId) -> bool {
        self.links
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_up(from, to)
    }
    /// The simulator's streams ([`Stream`]), one per node and incarnation.
    fn rng(&self, stream: Stream, node: NodeId, incarnation: u64) -> Rng {
        stream.rng_at(self.seed, (node.0 as u64) << 16 | incarnation << 48)
    }

    /// Check a datagram `me` received from `addr`: it must come from an endpoint's address,
    /// its header be sound and its tag verify, it must name that endpoint as sender and `me`
    /// as receiver, be fresh, and its payload decode. Rejections are reported.
    fn accept<M: Wire>(&self, me: NodeId, bytes: &[u8], addr: SocketAddr) -> Option<(NodeId, M)> {
        let reject = |why| {
            self.emit(self.now(), Ev::Rejected(me, why));
            None
        };
        let Some(actual) = self.member(addr) else {
            return reject(Rejection::NonMember(addr));
        };
        let (env, body) = match datagram::open(&self.key, bytes, self.n) {
            Ok(ok) => ok,
            Err(e) => return reject(Rejection::Malformed(e)),
        };
        if env.from != actual {
            return reject(Rejection::Impersonation {
                claimed: env.from,
                actual,
            });
        }
        if env.to != me {
            return reject(Rejection::Malformed(FrameError::Receiver(env.to.0)));
        }
        let fresh = self.windows[me.index() * self.n as usize + env.from.index()]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .accept(env.seq);
        if let Err(e) = fresh {
            return reject(Rejection::Malformed(e));
        }
        match datagram::payload::<M>(body, self.members) {
            Err(e) => reject(Rejection::Malformed(e)),
            Ok(msg) => Some((env.from, msg)),
        }
    }

    /// The next sequence number from `from` to `to`.
    fn next_seq(&self, from: NodeId, to: NodeId) -> u64 {
        self.sent[from.index() * self.n as usize + to.index()].fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// One incarnation of one node: its protocol, timers and generators. Lives in its own task.
struct Node<P: Protocol> {
    id: NodeId,
    shared: Arc<Shared>,
    socket: Arc<UdpSocket>,
    proto: P,
    stored: Arc<Mutex<Option<P::Persist>>>,
    rng: Rng,
    net_rng: Rng,
    timers: Vec<Option<(Time, P::Timer)>>,
    actions: Vec<Action<P>>,
    status: Option<Status>,
    send_buf: Vec<u8>,
    /// Per destination, when the last delayed datagram is due (FIFO links).
    fifo_due: Vec<Instant>,
    control: UnboundedReceiver<Control>,
}

enum Step {
    Control(Option<Control>),
    Timer,
    Recv(io::Result<(usize, SocketAddr)>),
}

impl<P> Node<P>
where
    P: ThreadedProtocol,
{
    async fn run(mut self) {
        let stored = self
            .stored
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let now = self.shared.now();
        self.input(now, true, |p, io| p.on_start(io, stored.as_ref()))
            .await;
        let mut buf = [0u8; MAX_DATAGRAM + 1];
        loop {
            let wake = self.next_timer().map(|(_, at)| self.shared.instant(at));
            let timer = async move {
                match wake {
                    Some(at) => sleep_until(at).await,
                    None => pending().await,
                }
            };
            let step = tokio::select! {
                biased;
                c = self.control.recv() => Step::Control(c),
                _ = timer => Step::Timer,
                r = self.socket.recv_from(&mut buf) => Step::Recv(r),
            };
            match step {
                Step::Control(None) => return, // the trial is over
                Step::Control(Some(Control::Pause(until))) => {
                    sleep_until(until).await;
                    self.shared.emit(self.shared.now(), Ev::Resumed(self.id));
                }
                Step::Control(Some(Control::Suspect)) => {
                    let now = self.shared.now();
                    self.input(now, false, |p, io| p.on_suspect(io)).await;
                }
                Step::Control(Some(Control::Handover)) => {
                    let now = self.shared.now();
                    self.input(now, false, |p, io| p.on_handover(io)).await;
                }
                Step::Timer => self.fire_timer().await,
                Step::Recv(Ok((len, addr))) => {
                    let Some((from, msg)) =
                        self.shared.accept::<P::Msg>(self.id, &buf[..len], addr)
                    else {
                        continue;
                    };
                    let now = self.shared.now();
                    let info = MsgInfo::of(from, self.id, &msg);
                    if !self.shared.link_up(from, self.id) {
                        self.shared.emit(now, Ev::Drop(info, DropReason::LinkDown));
                        continue;
                    }
                    self.shared.emit(now, Ev::Deliver(info));
                    self.input(now, false, |p, io| p.on_message(io, from, msg))
                        .await;
                }
                Step::Recv(Err(e)) => {
                    self.shared.emit(
                        self.shared.now(),
                        Ev::SocketError {
                            node: self.id,
                            send: false,
                            error: e.to_string(),
                        },
                    );
                    // Do not spin on a socket that keeps failing.
                    sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }

    /// The earliest pending timer: its slot and deadline.
    fn next_timer(&self) -> Option<(usize, Time)> {
        self.timers
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|(at, _)| (i, at)))
            .min_by_key(|&(i, at)| (at, i))
    }

    /// Fire the earliest timer if it is due (one per call: handling it may move the others).
    async fn fire_timer(&mut self) {
        let now = self.shared.now();
        let Some((slot, at)) = self.next_timer().filter(|&(_, at)| at <= now) else {
            return;
        };
        let (_, timer) = self.timers[slot].take().expect("slot is pending");
        if timer.is_failure_detector()
            && !self.shared.detection[self.id.index()].load(Ordering::Relaxed)
        {
            self.shared.emit(now, Ev::Suppressed(self.id));
            return;
        }
        let name = self.shared.trace.then(|| format!("{timer:?}"));
        self.shared.emit(
            now,
            Ev::Timer {
                node: self.id,
                name,
                late_ns: now.0 - at.0,
            },
        );
        self.input(now, false, |p, io| p.on_timer(io, timer)).await;
    }

    /// Run one protocol input at `now`, carry out its actions in order, report the status.
    async fn input(&mut self, now: Time, boot: bool, f: impl FnOnce(&mut P, &mut Io<'_, P>)) {
        let mut actions = std::mem::take(&mut self.actions);
        {
            let mut io = Io::new(now, &mut self.rng, &mut actions);
            f(&mut self.proto, &mut io);
        }
        let status = self.proto.status();
        for action in actions.drain(..) {
            self.carry_out(now, action).await;
        }
        self.actions = actions;
        if boot {
            self.shared.emit(now, Ev::Boot(self.id, status));
        } else if self.status != Some(status) {
            self.shared.emit(now, Ev::Status(self.id, status));
        }
        self.status = Some(status);
    }

    async fn carry_out(&mut self, now: Time, action: Action<P>) {
        match action {
            Action::Send { to, msg } => self.send(now, to, msg).await,
            Action::SetTimer { timer, at } => {
                self.timers[timer.index()] = Some((at.max(now), timer))
            }
            Action::CancelTimer(timer) => self.timers[timer.index()] = None,
            Action::Persist(record) => {
                *self.stored.lock().unwrap_or_else(|e| e.into_inner()) = Some(record)
            }
        }
    }

    async fn send(&mut self, now: Time, to: NodeId, msg: P::Msg) {
        let shared = &self.shared;
        if to.0 == 0 || to.0 > shared.n {
            shared.emit(
                now,
                Ev::Invalid {
                    from: self.id,
                    to: to.0,
                    kind: msg.kind(),
                },
            );
            return;
        }
        let info = MsgInfo::of(self.id, to, &msg);
        shared.emit(now, Ev::Send(info));
        if !shared.link_up(self.id, to) {
            shared.emit(now, Ev::Drop(info, DropReason::LinkDown));
            return;
        }
        let loss = f64::from_bits(shared.loss_bits.load(Ordering::Relaxed));
        if loss > 0.0 && self.net_rng.random_bool(loss.clamp(0.0, 1.0)) {
            shared.emit(now, Ev::Drop(info, DropReason::Loss));
            return;
        }
        let env = Envelope {
            from: self.id,
            to,
            seq: shared.next_seq(self.id, to),
        };
        datagram::encode(&shared.key, env, &msg, &mut self.send_buf);
        let addr = shared.peers[to.index()];
        match &shared.delay {
            None => {
                if let Err(e) = self.socket.send_to(&self.send_buf, addr).await {
                    let error = format!("send to node {to} at {addr}: {e}");
                    shared.emit(
                        shared.now(),
                        Ev::SocketError {
                            node: self.id,
                            send: true,
                            error,
                        },
                    );
                }
            }
            Some(delay) => {
                // A heavy tail can draw absurd values; no datagram waits longer than a minute.
                let wait = Duration::from_nanos(delay.sample_ns(&mut self.net_rng))
                    .min(Duration::from_secs(60));
                let mut due = Instant::now() + wait;
                if shared.fifo {
                    due = due.max(self.fifo_due[to.index()]);
                    self.fifo_due[to.index()] = due;
                }
                let socket = Arc::clone(&self.socket);
                let shared = Arc::clone(shared);
                let bytes = self.send_buf.clone();
                let me = self.id;
                tokio::spawn(async move {
                    sleep_until(due).await;
                    if let Err(e) = socket.send_to(&bytes, addr).await {
                        let error = format!("send to node {to} at {addr}: {e}");
                        shared.emit(
                            shared.now(),
                            Ev::SocketError {
                                node: me,
                                send: true,
                                error,
                            },
                        );
                    }
                });
            }
        }
    }
}

/// Reads a crashed node's socket and drops whatever arrives.
async fn tombstone<M: Wire>(id: NodeId, shared: Arc<Shared>, socket: Arc<UdpSocket>) {
    let mut buf = [0u8; MAX_DATAGRAM + 1];
    loop {
        match socket.recv_from(&mut buf).await {
            Ok((len, addr)) => {
                if let Some((from, msg)) = shared.accept::<M>(id, &buf[..len], addr) {
                    let info = MsgInfo::of(from, id, &msg);
                    shared.emit(shared.now(), Ev::Drop(info, DropReason::Crashed));
                }
            }
            Err(_) => sleep(Duration::from_millis(5)).await,
        }
    }
}

/// One node's slot in the hub: what survives its crashes.
struct Slot<P: Protocol> {
    socket: Arc<UdpSocket>,
    stored: Arc<Mutex<Option<P::Persist>>>,
    task: Option<JoinHandle<()>>,
    tombstone: Option<JoinHandle<()>>,
    control: Option<UnboundedSender<Control>>,
    incarnation: u64,
    paused_until: Option<Time>,
}

/// The hub: applies faults, observes, decides when the trial ends.
struct Hub<P: Protocol, F> {
    shared: Arc<Shared>,
    factory: F,
    /// Members; the slots after them are service endpoints.
    members: usize,
    /// Every endpoint's slot, members first.
    slots: Vec<Slot<P>>,
    observer: Observer,
    rx: UnboundedReceiver<Stamped>,
    /// The observer's clock: the latest instant observed.
    last: Time,
    fault_rng: Rng,
    /// Tasks that ended on their own, awaited by [`Hub::panicked`].
    ended: Vec<(NodeId, JoinHandle<()>)>,
    last_crashed: Option<NodeId>,
    /// Events observed.
    events: u64,
    /// Each fault's action, by index ([`SimConfig::faults`]).
    actions: Vec<FaultAction>,
    /// The fault timeline and the end-of-trial rule: the simulator's ([`Timeline`]).
    timeline: Timeline,
    workload: Workload,
    resource: Resource,
    /// Nodes cut off the shared resource (by index; empty: none), as
    /// [`trial::apply_topology`] keeps it.
    resource_cut: Vec<bool>,
    /// Each node's next write, while it leads (after the reference instant).
    next_write: Vec<Option<Time>>,
    /// A write that fell due while the node was paused: it is made when the node resumes.
    due_on_resume: Vec<Option<WriteTag>>,
    health: Health,
}

impl<P, F> Hub<P, F>
where
    P: ThreadedProtocol,
    F: Fn(NodeId) -> P + Send + Sync + 'static,
{
    /// Bind every endpoint's socket; with `clone`, also return a second handle on each
    /// ([`Hooks::on_sockets`]).
    async fn bind(
        live: &LiveConfig,
        factory: F,
        key: Key,
        clone: bool,
    ) -> Result<(Self, Vec<std::net::UdpSocket>), LiveError> {
        let cfg = &live.trial;
        // Every endpoint: the members, then the service endpoints.
        let n = cfg.nodes + cfg.services;
        let mut sockets = Vec::with_capacity(n as usize);
        let mut clones = Vec::new();
        for id in election_core::all_nodes(n) {
            let addr = SocketAddr::new(live.bind, 0);
            let bind_err = |source| LiveError::Bind {
                node: id,
                addr,
                source,
            };
            // Bound through std so that the socket can be cloned; tokio needs it non-blocking.
            let std_socket = std::net::UdpSocket::bind(addr).map_err(bind_err)?;
            std_socket.set_nonblocking(true).map_err(bind_err)?;
            if clone {
                clones.push(std_socket.try_clone().map_err(bind_err)?);
            }
            let socket = UdpSocket::from_std(std_socket).map_err(bind_err)?;
            sockets.push(Arc::new(socket));
        }
        let mut peers = Vec::with_capacity(sockets.len());
        for (i, s) in sockets.iter().enumerate() {
            let addr = s.local_addr().map_err(|source| LiveError::Bind {
                node: NodeId::from_index(i),
                addr: SocketAddr::new(live.bind, 0),
                source,
            })?;
            peers.push(addr);
        }
        let delay = if cfg.net.latency.is_zero() {
            None
        } else {
            Some(cfg.net.latency.sampler("net.latency")?)
        };
        let (tx, rx) = unbounded_channel();
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            n,
            members: cfg.nodes,
            peers,
            links: RwLock::new(Links::new(n)),
            loss_bits: AtomicU64::new(cfg.net.loss.to_bits()),
            delay,
            fifo: cfg.net.fifo,
            detection: (0..n).map(|_| AtomicBool::new(true)).collect(),
            events: tx,
            trace: cfg.trace,
            seed: cfg.seed,
            key,
            sent: (0..n * n).map(|_| AtomicU64::new(0)).collect(),
            windows: (0..n * n)
                .map(|_| Mutex::new(ReplayWindow::default()))
                .collect(),
        });
        let timeline = Timeline::new(cfg);
        let observer = trial::observer(cfg, timeline.initial_reference());
        let hub = Hub {
            members: cfg.nodes as usize,
            slots: sockets
                .into_iter()
                .map(|socket| Slot {
                    socket,
                    stored: Arc::new(Mutex::new(None)),
                    task: None,
                    tombstone: None,
                    control: None,
                    incarnation: 0,
                    paused_until: None,
                })
                .collect(),
            observer,
            rx,
            last: Time::ZERO,
            fault_rng: Stream::Faults.rng(cfg.seed),
            ended: Vec::new(),
            last_crashed: None,
            events: 0,
            actions: cfg.faults.iter().map(|f| f.action.clone()).collect(),
            timeline,
            workload: cfg.workload.clone(),
            resource: Resource::default(),
            resource_cut: Vec::new(),
            next_write: vec![None; n as usize],
            due_on_resume: vec![None; n as usize],
            health: Health::default(),
            factory,
            shared,
        };
        Ok((hub, clones))
    }

    fn now(&self) -> Time {
        self.shared.now()
    }

    /// Start the trial's clock now (the hub is the only holder of `shared` until nodes boot).
    fn restart_clock(&mut self) {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.epoch = Instant::now();
        }
    }

    /// When the trial ends given what is known now (the simulator's rule).
    fn deadline(&self) -> Time {
        self.timeline
            .deadline(trial::quorum_since(&self.observer))
            .at
    }

    /// Sleep until `at`: on the timer wheel to within 1.5 ms, then yielding to the nodes
    /// until it is due, so that faults fire on time.
    async fn sleep_precisely(shared: &Shared, at: Time) {
        let coarse = Time(at.0.saturating_sub(1_500_000));
        if shared.now() < coarse {
            sleep_until(shared.instant(coarse)).await;
        }
        while shared.now() < at {
            tokio::task::yield_now().await;
        }
    }

    async fn run(mut self) -> Result<LiveReport, LiveError> {
        self.observer.advance(Time::ZERO);
        for i in 0..self.slots.len() {
            self.boot(NodeId::from_index(i));
        }
        let end = loop {
            let deadline = self.deadline();
            let mut wake = self
                .timeline
                .next_wake()
                .map_or(deadline, |w| w.min(deadline));
            if let Some(w) = self.next_write.iter().flatten().min() {
                wake = wake.min(*w);
            }
            let shared = Arc::clone(&self.shared);
            let event = tokio::select! {
                biased;
                ev = self.rx.recv() => ev,
                _ = Self::sleep_precisely(&shared, wake) => None,
            };
            if let Some(err) = self.panicked().await {
                return Err(err);
            }
            if let Some(ev) = event {
                self.observe(ev);
                self.workload_tick();
                if self.timeline.is_waiting() && self.observer.quorum_leader().is_some() {
                    let now = self.now();
                    self.advance(now);
                    if let Some(start) = self.timeline.leader_found(now) {
                        self.start_timeline(start);
                    }
                    self.fire_due_faults();
                }
                continue;
            }
            // `wake` has come: observe everything already reported, then act.
            self.drain();
            self.workload_tick();
            let now = self.now();
            if self.timeline.first_instant().is_some_and(|at| at <= now) {
                self.advance(now);
                let leader = self.observer.quorum_leader().is_some();
                if let FirstInstant::Start(start) = self.timeline.at_first_instant(now, leader) {
                    self.start_timeline(start);
                }
            }
            if self
                .timeline
                .waiting_until()
                .is_some_and(|until| until <= now)
            {
                self.advance(now);
                if let Some(give_up) = self.timeline.give_up(now) {
                    if let Some(t0) = give_up.reference {
                        self.observer.set_reference(t0);
                    }
                    for skipped in give_up.skipped {
                        self.observer.on_fault(skipped);
                    }
                }
            }
            if self.fire_due_faults() {
                continue;
            }
            let deadline = self.deadline();
            if self.now() >= deadline {
                break deadline.max(self.last);
            }
        };
        for skipped in self.timeline.end() {
            self.observer.on_fault(skipped);
        }
        if let Some(err) = self.panicked().await {
            return Err(err);
        }
        for slot in &mut self.slots {
            slot.control = None;
            for task in [slot.task.take(), slot.tombstone.take()]
                .into_iter()
                .flatten()
            {
                task.abort();
            }
        }
        let addresses = self.shared.peers.clone();
        let members = self.members as u32;
        self.observer.set_calm(self.timeline.calm());
        Ok(LiveReport {
            trial: TrialReport::finish(self.observer, members, end, self.events),
            addresses,
            health: self.health,
        })
    }

    /// The workload, live (the simulator's rules, see `election_sim::workload`): every node that
    /// leads writes every interval from the reference instant on; a write due while it is paused
    /// is kept, with the token it had, and made when it resumes.
    fn workload_tick(&mut self) {
        let Some(interval) = self.workload.interval.filter(|_| self.workload.on()) else {
            return;
        };
        if !self.observer.past_reference() {
            return;
        }
        let now = self.last.max(self.now());
        self.advance(now);
        for i in 0..self.slots.len() {
            let id = NodeId::from_index(i);
            let leads =
                self.is_live(i) && self.observer.status(id).map(|s| s.role) == Some(Role::Leader);
            if !leads {
                self.next_write[i] = None;
                continue;
            }
            if self.due_on_resume[i].is_some() {
                continue;
            }
            let due = *self.next_write[i].get_or_insert(now);
            if due > now {
                continue;
            }
            let tag = self.observer.write_tag(id);
            if matches!(self.slots[i].paused_until, Some(t) if t > now) {
                self.due_on_resume[i] = Some(tag);
                self.next_write[i] = None;
                continue;
            }
            self.offer_write(tag);
            self.next_write[i] = Some(now + interval);
        }
    }

    /// A write reaches the hub's resource.
    fn offer_write(&mut self, tag: WriteTag) {
        self.observer.on_workload_msg();
        trial::offer_write(
            &mut self.resource,
            self.workload.fencing,
            tag,
            &self.resource_cut,
            &mut self.observer,
        );
    }

    /// Fire every fault now due, at once, with nothing observed in between (`true` if any
    /// fired). The reference instant was set when the timeline started: a quorum leader
    /// observed between it and the fault would pass for one that survived the fault (failover
    /// 0), so the faults act at that instant, and faults of one instant act together, as in the
    /// simulator.
    fn fire_due_faults(&mut self) -> bool {
        let mut fired = false;
        while let Some((at, i)) = self.timeline.due(self.now()) {
            self.advance(at);
            let past = self.observer.past_reference();
            if let Some(t0) = self.timeline.fire(i, self.last, past) {
                // The reference fault: the reference instant is now, before it acts.
                self.observer.set_reference(t0);
            }
            let action = self.actions[i].clone();
            self.apply_fault(at, &action);
            fired = true;
        }
        fired
    }

    /// The fault timeline starts now (every fault shifted by the wait, in the timeline).
    fn start_timeline(&mut self, start: trial::Start) {
        if let Some(t0) = start.reference {
            self.observer.set_reference(t0);
        }
    }

    fn drain(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            self.observe(ev);
        }
    }

    fn advance(&mut self, at: Time) {
        self.last = self.last.max(at);
        self.observer.advance(self.last);
    }

    fn observe(&mut self, Stamped { at, ev }: Stamped) {
        self.events += 1;
        self.advance(at);
        let at = self.last;
        match ev {
            Ev::Boot(id, status) => {
                self.observer.record(|| TraceKind::Boot(id));
                self.observer.on_status(id, Some(status));
                let links = self.shared.links.read().unwrap_or_else(|e| e.into_inner());
                self.observer.topology_changed(&links);
            }
            Ev::Status(id, status) => {
                // A status from an incarnation that has since crashed is stale.
                if self.slots[id.index()].task.is_some() {
                    self.observer.on_status(id, Some(status));
                }
            }
            Ev::Send(m) => self.observer.on_send(m),
            Ev::Deliver(m) => self.observer.on_deliver(m),
            Ev::Drop(m, why) => self.observer.on_drop(m, why),
            Ev::Invalid { from, to, kind } => self.observer.on_invalid_destination(from, to, kind),
            Ev::Timer {
                node,
                name,
                late_ns,
            } => {
                self.health.timer_lateness_ms.push(late_ns as f64 / 1e6);
                if let Some(timer) = name {
                    self.observer.record(|| TraceKind::Timer { node, timer });
                }
            }
            Ev::Suppressed(node) => self.observer.record(|| TraceKind::DetectorSuppressed(node)),
            Ev::Resumed(node) => {
                self.slots[node.index()].paused_until = None;
                self.observer.on_fault(Applied::Resume(node));
                // The write that fell due during the pause leaves first.
                if let Some(tag) = self.due_on_resume[node.index()].take() {
                    self.offer_write(tag);
                    let interval = self.workload.interval.unwrap_or_default();
                    self.next_write[node.index()] = Some(at + interval);
                }
            }
            Ev::Rejected(node, why) => {
                let h = &mut self.health;
                match why {
                    Rejection::NonMember(_) => h.rejected_non_member += 1,
                    Rejection::Impersonation { .. } => h.rejected_impersonation += 1,
                    Rejection::Malformed(FrameError::Payload(_) | FrameError::Named(_)) => {
                        h.rejected_payload += 1
                    }
                    Rejection::Malformed(
                        FrameError::Tag | FrameError::Sender(_) | FrameError::Receiver(_),
                    ) => h.rejected_forged += 1,
                    Rejection::Malformed(FrameError::Replay(_)) => h.rejected_replay += 1,
                    Rejection::Malformed(
                        FrameError::Short(_)
                        | FrameError::Oversized(_)
                        | FrameError::Version(_)
                        | FrameError::Length { .. },
                    ) => h.rejected_frame += 1,
                }
                let what = match why {
                    Rejection::NonMember(addr) => format!("dropped a datagram from non-member {addr}"),
                    Rejection::Impersonation { claimed, actual } => format!(
                        "dropped a datagram from node {actual}'s address claiming to be node {claimed}"
                    ),
                    Rejection::Malformed(e) => format!("dropped a malformed datagram: {e}"),
                };
                h.note(at, node, what);
            }
            Ev::SocketError { node, send, error } => {
                if send {
                    self.health.send_errors += 1;
                } else {
                    self.health.recv_errors += 1;
                }
                let what = format!(
                    "socket error ({}): {error}",
                    if send { "send" } else { "receive" }
                );
                self.health.note(at, node, what);
            }
        }
    }

    fn boot(&mut self, id: NodeId) {
        let shared = Arc::clone(&self.shared);
        let slot = &mut self.slots[id.index()];
        if let Some(t) = slot.tombstone.take() {
            t.abort();
        }
        slot.incarnation += 1;
        slot.paused_until = None;
        let (tx, rx) = unbounded_channel();
        let proto = (self.factory)(id);
        // The family's own quorum rule (the same for every node it builds).
        self.observer.set_quorum_rule(proto.quorum_rule());
        let node = Node {
            id,
            socket: Arc::clone(&slot.socket),
            proto,
            stored: Arc::clone(&slot.stored),
            rng: shared.rng(Stream::Protocol, id, slot.incarnation),
            net_rng: shared.rng(Stream::Net, id, slot.incarnation),
            timers: vec![None; P::Timer::COUNT],
            actions: Vec::new(),
            status: None,
            send_buf: Vec::with_capacity(MAX_DATAGRAM),
            fifo_due: vec![Instant::now(); shared.n as usize],
            control: rx,
            shared,
        };
        slot.task = Some(tokio::spawn(node.run()));
        slot.control = Some(tx);
    }

    fn crash(&mut self, id: NodeId) {
        let shared = Arc::clone(&self.shared);
        let slot = &mut self.slots[id.index()];
        if let Some(t) = slot.task.take() {
            if t.is_finished() {
                // Ended before its crash: kept, so that a panic fails the trial.
                self.ended.push((id, t));
            } else {
                t.abort();
            }
        }
        slot.control = None;
        slot.paused_until = None;
        self.next_write[id.index()] = None;
        self.due_on_resume[id.index()] = None;
        let socket = Arc::clone(&slot.socket);
        slot.tombstone = Some(tokio::spawn(tombstone::<P::Msg>(id, shared, socket)));
        self.last_crashed = Some(id);
        self.observer.on_status(id, None);
        self.topology_changed();
    }

    /// A node or tombstone task that ended on its own before the trial did: a node task only
    /// ends when the hub closes its control channel, so one that has ended panicked. Its
    /// panic fails the trial loudly, never a row measured from a cluster that lost a node
    /// the timeline did not crash.
    async fn panicked(&mut self) -> Option<LiveError> {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            for task in [&mut slot.task, &mut slot.tombstone] {
                if task.as_ref().is_some_and(|t| t.is_finished()) {
                    let t = task.take().expect("checked");
                    self.ended.push((NodeId::from_index(i), t));
                }
            }
        }
        while let Some((node, t)) = self.ended.pop() {
            let message = match t.await {
                Ok(()) => "its task ended while the trial ran".to_string(),
                Err(e) if e.is_panic() => {
                    let p = e.into_panic();
                    p.downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "(no message)".to_string())
                }
                Err(_) => continue, // aborted: a crash, not a failure
            };
            return Some(LiveError::NodePanicked { node, message });
        }
        None
    }

    fn topology_changed(&mut self) {
        let links = self.shared.links.read().unwrap_or_else(|e| e.into_inner());
        self.observer.topology_changed(&links);
    }

    fn is_live(&self, i: usize) -> bool {
        self.slots[i].task.is_some()
    }

    fn apply_fault(&mut self, now: Time, action: &FaultAction) {
        let up: Vec<bool> = (0..self.slots.len()).map(|i| self.is_live(i)).collect();
        let applied = trial::resolve(
            now,
            action,
            &up,
            self.members,
            &self.observer,
            self.last_crashed,
            &mut self.fault_rng,
        );
        if matches!(applied, Applied::StaleConnection { .. }) {
            // Refused by `LiveConfig::validate`: its links would go down and never come back.
            self.observer.on_fault(Applied::Skipped(format!(
                "{applied:?}: not supported by the live driver"
            )));
            return;
        }
        let changed = {
            let mut links = self.shared.links.write().unwrap_or_else(|e| e.into_inner());
            trial::apply_topology(&applied, self.members, &mut links, &mut self.resource_cut)
        };
        if changed {
            self.topology_changed();
        }
        match applied {
            Applied::Crash(id) => {
                self.observer.on_fault(applied);
                self.crash(id);
                return;
            }
            Applied::Recover(id) => {
                self.observer.on_fault(applied);
                self.boot(id);
                return;
            }
            Applied::Pause(id, until) => {
                let slot = &mut self.slots[id.index()];
                slot.paused_until = Some(until);
                if let Some(c) = &slot.control {
                    let _ = c.send(Control::Pause(self.shared.instant(until)));
                }
            }
            Applied::SetLoss(p) => {
                self.shared.loss_bits.store(p.to_bits(), Ordering::Relaxed);
            }
            Applied::Suspect(id) => {
                let slot = &self.slots[id.index()];
                // A paused node's detector cannot run either.
                if !matches!(slot.paused_until, Some(t) if t > now) {
                    if let Some(c) = &slot.control {
                        let _ = c.send(Control::Suspect);
                    }
                }
            }
            Applied::Handover(id) => {
                let slot = &self.slots[id.index()];
                // A paused process hears no shutdown signal either.
                if !matches!(slot.paused_until, Some(t) if t > now) {
                    if let Some(c) = &slot.control {
                        let _ = c.send(Control::Handover);
                    }
                }
            }
            Applied::Detection { ref nodes, enabled } => {
                for &id in nodes {
                    self.shared.detection[id.index()].store(enabled, Ordering::Relaxed);
                }
            }
            Applied::LinkLoss { .. }
            | Applied::LinkDelay { .. }
            | Applied::Spike(..)
            | Applied::Slow(..)
            | Applied::Amnesia(_)
            | Applied::ClockJump(..)
            | Applied::ClockRate(..) => {
                // Refused by `LiveConfig::validate` (a spike comes from noise, refused too):
                // never carried out as something else, counted as skipped if it ever came.
                self.observer.on_fault(Applied::Skipped(format!(
                    "{applied:?}: not supported by the live driver"
                )));
                return;
            }
            // Topology, carried out above.
            Applied::Partition(_)
            | Applied::CutLink { .. }
            | Applied::StaleConnection { .. }
            | Applied::Isolate(_)
            | Applied::Heal
            | Applied::Links { .. }
            | Applied::ResourceCut(_)
            | Applied::Resume(_)
            | Applied::Skipped(_) => {}
        }
        self.observer.on_fault(applied);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_bully::{Bully, BullyConfig};
    use election_core::Role;

    /// A node whose peer cannot be reached — its address refuses datagrams (a broadcast
    /// address, which needs `SO_BROADCAST`) — counts every failed send and keeps running: with
    /// no answer to its ELECTION it declares itself leader and heartbeats on.
    #[test]
    fn socket_errors_are_reported_and_the_node_carries_on() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let events = rt.block_on(async {
            let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
            let (tx, mut rx) = unbounded_channel();
            let shared = Arc::new(Shared {
                epoch: Instant::now(),
                n: 2,
                members: 2,
                peers: vec![
                    socket.local_addr().unwrap(),
                    "255.255.255.255:9".parse().unwrap(),
                ],
                links: RwLock::new(Links::new(2)),
                loss_bits: AtomicU64::new(0f64.to_bits()),
                delay: None,
                fifo: true,
                detection: vec![AtomicBool::new(true), AtomicBool::new(true)],
                events: tx,
                trace: false,
                seed: 1,
                key: Key::from_bytes([7; 32]),
                sent: (0..4).map(|_| AtomicU64::new(0)).collect(),
                windows: (0..4)
                    .map(|_| Mutex::new(ReplayWindow::default()))
                    .collect(),
            });
            let (_control_tx, control) = unbounded_channel();
            let node = Node {
                id: NodeId(1),
                shared: Arc::clone(&shared),
                socket,
                proto: Bully::new(NodeId(1), Arc::new(BullyConfig::new(2))),
                stored: Arc::new(Mutex::new(None)),
                rng: shared.rng(Stream::Protocol, NodeId(1), 1),
                net_rng: shared.rng(Stream::Net, NodeId(1), 1),
                timers: vec![None; 6],
                actions: Vec::new(),
                status: None,
                send_buf: Vec::new(),
                fifo_due: vec![Instant::now(); 2],
                control,
            };
            let _ = tokio::time::timeout(Duration::from_millis(250), node.run()).await;
            let mut out = Vec::new();
            while let Ok(e) = rx.try_recv() {
                out.push(e.ev);
            }
            out
        });
        let errors = events
            .iter()
            .filter(|e| matches!(e, Ev::SocketError { send: true, .. }))
            .count();
        assert!(
            errors >= 2,
            "the ELECTION and later heartbeats failed: {events:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Ev::Status(_, s) if s.role == Role::Leader)),
            "the node went on to lead: {events:?}"
        );
    }
}
