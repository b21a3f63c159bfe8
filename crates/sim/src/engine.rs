//! The discrete-event engine: one event queue ordered by (time, insertion sequence), one
//! protocol instance per live node, and the network and fault model around them.

use election_core::{
    Action, Io, Message, NodeId, Protocol, Rng, RngExt, Role, Status, Time, TimerKind,
};

use crate::config::{ConfigError, Latency, Sampler, SimConfig};
use crate::fault::{Applied, FaultAction};
use crate::observer::{DropReason, Links, Metrics, MsgInfo, Observer, TraceEvent};
use crate::queue::EventQueue;
use crate::trial::{self, FirstInstant, Timeline};
use crate::workload::{Commit, Resource, Workload, WriteTag};

use crate::stream::Stream;

/// The outcome of one trial, simulated or live.
#[derive(Clone, Debug)]
pub struct TrialReport {
    /// The trial's metrics.
    pub metrics: Metrics,
    /// Each node's last status (`None` = crashed at the end), indexed by `id - 1`.
    pub final_status: Vec<Option<Status>>,
    /// Every event, if the configuration asked for a trace.
    pub trace: Vec<TraceEvent>,
    /// When the trial ended.
    pub end: Time,
    /// Events processed (deliveries, timer firings, faults, boots); live, the events the
    /// driver observed.
    pub events: u64,
}

impl TrialReport {
    /// The report of a trial that ended at `end`: the observer's metrics and trace, and the
    /// last status of each of the `members`.
    pub fn finish(observer: Observer, members: u32, end: Time, events: u64) -> TrialReport {
        let final_status = (0..members as usize)
            .map(|i| observer.status(NodeId::from_index(i)))
            .collect();
        let (metrics, trace) = observer.finish(end);
        TrialReport {
            metrics,
            final_status,
            trace,
            end,
            events,
        }
    }
}

#[derive(Clone)]
enum Event<P: Protocol> {
    Boot(NodeId),
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: P::Msg,
    },
    Timer {
        node: NodeId,
        timer: P::Timer,
        generation: u64,
    },
    Fault(usize),
    /// The fault timeline's first scheduled instant, when it waits for a leader.
    TimelineStart,
    /// The end of the wait for a leader.
    TimelineGiveUp,
    Resume {
        node: NodeId,
        pause: u64,
    },
    /// The node finished its current input: it takes the next one from its queue.
    NodeFree(NodeId),
    /// A driver-made input (a forced suspicion, a client entry), queued like a message.
    Input {
        node: NodeId,
        input: Input,
    },
    /// The workload starts (at the reference instant): every leader begins writing.
    WorkloadStart,
    /// The next burst of the noise schedule starts or ends (see [`crate::noise`]).
    Noise,
    /// A leader's next write is due.
    Write {
        node: NodeId,
        generation: u64,
    },
    /// A write reaches the shared resource.
    WriteArrive(WriteTag),
    /// A stale connection's keep-alive ran out (by index into the stale connections): its
    /// links come back.
    Reconnect(usize),
    /// Majority commit: a write reaches a peer, which acknowledges it if it follows the writer.
    AckRequest {
        write: usize,
        to: NodeId,
    },
    /// Majority commit: an acknowledgement reaches the writer.
    Ack {
        write: usize,
        from: NodeId,
    },
}

/// Inputs the driver makes (not messages or timers).
#[derive(Clone, Copy, Debug)]
enum Input {
    /// A scenario forces the node's failure detector.
    Suspect,
    /// The workload hands the node a client entry (majority commit).
    ClientEntry,
    /// A scenario is about to stop the node on purpose.
    Handover,
}

/// What kind of work an input is, for its processing time ([`NodeTime`](crate::NodeTime)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    /// A message, a boot, a suspicion, a client entry: always handled.
    Handled,
    /// A timer: free when it only arms or cancels timers.
    Timer,
}

/// A write waiting for a majority of acknowledgements.
#[derive(Clone)]
struct PendingWrite {
    tag: WriteTag,
    acks: u32,
    taken: bool,
}

/// One timer slot of one node.
///
/// Re-arming a pending timer to a later instant (a follower's failure detector, pushed back by
/// every heartbeat) does not queue a new entry: the slot remembers the new deadline and the
/// queue key `(time, seq)` it would have been queued with, and the entry already queued for
/// the slot (the *carrier*, due no later) queues the deadline under that same key when it
/// comes up. Every firing therefore happens at exactly the position in the event order it
/// would have had with one queue entry per re-arm, while the queue holds one entry per slot
/// instead of one per re-arm.
#[derive(Clone, Copy, Debug, Default)]
struct TimerSlot {
    /// Bumped at every set and cancel; a firing (possibly backlogged by a pause) whose
    /// generation differs is stale.
    generation: u64,
    /// The armed deadline's queue key, if the timer is armed.
    armed: Option<(Time, u64)>,
    /// The key of the queue entry responsible for this slot: it fires the timer if it is the
    /// armed key, or queues the armed key if that is later.
    carrier: Option<(Time, u64)>,
}

#[derive(Clone)]
struct Node<P: Protocol> {
    proto: Option<P>,
    persisted: Option<P::Persist>,
    timers: Vec<TimerSlot>,
    paused: bool,
    /// Identifies the current pause, so a crash during a pause voids its wake-up.
    pause_id: u64,
    /// Inputs waiting while the node is paused or busy, in arrival order.
    inbox: std::collections::VecDeque<Event<P>>,
    /// Busy with an input (processing, or waiting for stable storage) until then.
    busy_until: Time,
    /// A `NodeFree` event is queued for this node.
    free_queued: bool,
    /// This node's clock: `local = offset + global × rate` (ns).
    clock_offset: f64,
    clock_rate: f64,
    detection: bool,
    /// Failure-detector firings swallowed while detection was off (timer, generation): when
    /// detection comes back on, those still current (not re-armed or cancelled since) go off
    /// then — a detector that was muted notices, when unmuted, that its deadline has passed.
    suppressed: Vec<(P::Timer, u64)>,
    /// Bumped whenever the node's writing stops (it leaves the leader role, or crashes).
    write_gen: u64,
    /// A write fell due while the node was paused: it leaves first when the node resumes.
    write_due: Option<WriteTag>,
    /// The node left the leader role and its workload goes on writing, with the tag it had as
    /// leader, until this instant (`leader.stop_lag_ms`; see [`crate::workload`]).
    lag: Option<(Time, WriteTag)>,
    /// Extra processing time per input (the `Slow` fault's `ms`), ns.
    slow_ns: u64,
}

/// One trial of protocol `P` over the simulated network.
///
/// ```ignore
/// let report = Sim::new(SimConfig::new(5, 1), |id| MyProtocol::new(id))?.run();
/// ```
///
/// Trials that differ only in their fault timelines can share the run up to their first
/// fault: [`Sim::run_all`].
#[derive(Clone)]
pub struct Sim<P: Protocol, F: FnMut(NodeId) -> P> {
    cfg: SimConfig,
    factory: F,
    nodes: Vec<Node<P>>,
    queue: EventQueue<Event<P>>,
    seq: u64,
    /// An event did not fit in the queue (see [`EventQueue::fits`]): the trial stops as over
    /// budget.
    queue_full: bool,
    net_rng: Rng,
    proto_rng: Rng,
    fault_rng: Rng,
    latency: Sampler,
    /// Per-link latency overrides (`from * n + to`), only allocated when there are some.
    link_latency: Vec<Option<Sampler>>,
    loss: f64,
    /// Per-link loss probabilities (`from * n + to`) set by `LinkLoss`, allocated when first set.
    link_loss: Vec<f64>,
    /// Per-link extra latency in ns set by `LinkDelay`, allocated when first set.
    link_delay: Vec<u64>,
    /// Per-node slow-down factors (the `Slow` fault's `factor`), allocated when one is first
    /// set above 1.
    slow: Vec<f64>,
    links: Links,
    /// Per-link time of the latest scheduled delivery, for FIFO links (only the links used).
    fifo_last: crate::links::LinkTimes,
    observer: Observer,
    actions: Vec<Action<P>>,
    last_crashed: Option<NodeId>,
    /// The fault timeline and the end-of-trial rule ([`trial::Timeline`]).
    timeline: Timeline,
    /// The queue key reserved for each fault (by index), so that a timeline started late keeps
    /// the order its faults would have had if queued at the start.
    fault_keys: Vec<(Time, u64)>,
    workload: Workload,
    /// `leader.stop_lag_ms`, when it is not zero (zero draws nothing).
    stop_lag: Option<Sampler>,
    /// Stale connections under way: when each comes back, and the one-way links it holds
    /// down (those no later link fault has set since).
    stale: Vec<(Time, Vec<(NodeId, NodeId)>)>,
    workload_rng: Rng,
    workload_started: bool,
    resource: Resource,
    /// Nodes cut off from the shared resource (by index; empty: none).
    resource_cut: Vec<bool>,
    pending_writes: Vec<PendingWrite>,
    node_rng: Rng,
    cpu: Option<Sampler>,
    fsync: Option<Sampler>,
    timer_jitter_ns: u64,
    /// Some node's clock is not the global one.
    clocks: bool,
    /// The noise schedule (see [`crate::noise`]) and the index of its next event, which is
    /// the one queued: one queue entry at a time, whatever the schedule's length.
    noise: Vec<crate::noise::NoiseEvent>,
    noise_next: usize,
    /// Per-node extra latency of a noise spike in ns (`SpikeStart` to `SpikeEnd`), allocated
    /// when the schedule has spikes.
    spike_ns: Vec<u64>,
    horizon: Time,
    events: u64,
    /// Work done so far: events processed plus messages sent (see [`SimConfig::budget`]).
    work: u64,
}

/// Sequence numbers (the second half of an event's queue key, which orders events of one
/// instant) come from three ranges, in this order: the boots and the noise schedule's first
/// event, queued first (below `TIMELINE_SEQ`); the fault timeline, its check for a leader and
/// its faults (from `TIMELINE_SEQ`); the workload's start when its instant is known before the
/// trial runs (`WORKLOAD_SEQ`); then every event queued while the trial runs (after
/// `RUN_SEQ`). It is the order in which [`Sim::new`] queues them, so the ranges change no
/// event's place; what they buy is that everything but the timeline is numbered the same
/// whatever the timeline holds, which lets trials that differ only in their timelines share
/// the run up to their first fault ([`Sim::run_all`]). [`SimConfig::validate`] bounds the
/// nodes and faults to fit.
const TIMELINE_SEQ: u64 = 1 << 22;
const WORKLOAD_SEQ: u64 = TIMELINE_SEQ + (1 << 21);
const RUN_SEQ: u64 = 1 << 23;

/// How a stretch of a trial's run ended.
enum Step {
    /// The trial is over, at this instant.
    Ended(Time),
    /// The next event is at or after the instant asked for.
    Paused,
}

impl<P: Protocol, F: FnMut(NodeId) -> P> Sim<P, F> {
    /// Validate `cfg` and build a trial whose nodes are made by `factory` (called at boot and
    /// at every recovery).
    pub fn new(cfg: SimConfig, factory: F) -> Result<Self, ConfigError> {
        let mut sim = Self::build(cfg, factory)?;
        sim.queue_timeline();
        Ok(sim)
    }

    /// [`Sim::new`] without the fault timeline's events in the queue (see [`Sim::run_all`]:
    /// the timeline is queued when it is installed).
    fn build(cfg: SimConfig, factory: F) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.nodes as usize;
        // Members, then service endpoints (the lease store): every node the factory builds.
        let total = n + cfg.services as usize;
        let latency = cfg.net.latency.sampler("net.latency")?;
        let mut link_latency = Vec::new();
        if !cfg.net.links.is_empty() {
            link_latency = vec![None; n * n];
            for (i, l) in cfg.net.links.iter().enumerate() {
                link_latency[l.from.index() * n + l.to.index()] =
                    Some(l.latency.sampler(&format!("net.links[{i}].latency"))?);
            }
        }
        let stream = |s: Stream| s.rng(cfg.seed);
        let nodes = (0..total)
            .map(|_| Node {
                proto: None,
                persisted: None,
                timers: vec![TimerSlot::default(); P::Timer::COUNT],
                paused: false,
                pause_id: 0,
                inbox: std::collections::VecDeque::new(),
                busy_until: Time::ZERO,
                free_queued: false,
                clock_offset: 0.0,
                clock_rate: 1.0,
                detection: true,
                suppressed: Vec::new(),
                write_gen: 0,
                write_due: None,
                lag: None,
                slow_ns: 0,
            })
            .collect();
        let timeline = Timeline::new(&cfg);
        // The queue's buckets are cut to the network's typical latency, and a constant latency
        // delivers messages in the order they are sent (see `EventQueue`).
        let typical_ms = cfg.net.latency.mean_ms();
        let typical_ns = crate::config::ms_to_ns(if typical_ms.is_finite() {
            typical_ms
        } else {
            1.0
        });
        let ordered = matches!(latency, Sampler::Constant(_)) && link_latency.is_empty();
        let observer = trial::observer(&cfg, timeline.initial_reference());
        let mut sim = Sim {
            net_rng: stream(Stream::Net),
            proto_rng: stream(Stream::Protocol),
            fault_rng: stream(Stream::Faults),
            loss: cfg.net.loss,
            link_loss: Vec::new(),
            link_delay: Vec::new(),
            slow: Vec::new(),
            links: Links::new(cfg.nodes + cfg.services),
            fifo_last: crate::links::LinkTimes::default(),
            horizon: Time::ZERO + cfg.horizon,
            latency,
            link_latency,
            nodes,
            queue: EventQueue::new(4 * n + 16, typical_ns, ordered),
            seq: 0,
            queue_full: false,
            observer,
            actions: Vec::with_capacity(2 * n + 8),
            last_crashed: None,
            timeline,
            fault_keys: vec![(Time::ZERO, 0); cfg.faults.len()],
            workload: cfg.workload.clone(),
            stop_lag: None,
            stale: Vec::new(),
            workload_rng: stream(Stream::Workload),
            workload_started: false,
            resource: Resource::default(),
            resource_cut: Vec::new(),
            pending_writes: Vec::new(),
            node_rng: stream(Stream::NodeTime),
            cpu: None,
            fsync: None,
            timer_jitter_ns: 0,
            clocks: false,
            noise: Vec::new(),
            noise_next: 0,
            spike_ns: Vec::new(),
            events: 0,
            work: 0,
            factory,
            cfg,
        };
        let nt = &sim.cfg.node;
        let sampler = |l: &Option<Latency>, field: &str| match l {
            Some(l) if !l.is_zero() => l.sampler(field).map(Some),
            _ => Ok(None),
        };
        sim.cpu = sampler(&nt.cpu, "node.cpu_us")?;
        sim.stop_lag = sampler(&Some(sim.workload.stop_lag.clone()), "leader.stop_lag_ms")?;
        sim.fsync = sampler(&nt.fsync, "node.fsync_ms")?;
        sim.timer_jitter_ns = (nt.timer_jitter_ms * 1e6).round() as u64;
        if nt.drift_ppm > 0.0 || nt.offset_ms > 0.0 {
            sim.clocks = true;
            let mut r = Stream::Clocks.rng(sim.cfg.seed);
            let (d, o) = (nt.drift_ppm, nt.offset_ms * 1e6);
            for node in &mut sim.nodes {
                let ppm = if d > 0.0 { r.random_range(-d..=d) } else { 0.0 };
                node.clock_rate = 1.0 + ppm * 1e-6;
                node.clock_offset = if o > 0.0 {
                    r.random_range(0.0..=o)
                } else {
                    0.0
                };
            }
        }
        for i in 0..total {
            sim.push(Time::ZERO, Event::Boot(NodeId::from_index(i)));
        }
        sim.noise = sim
            .cfg
            .noise
            .schedule(sim.cfg.seed, sim.cfg.nodes, sim.horizon)?;
        if sim
            .noise
            .iter()
            .any(|e| matches!(e.kind, crate::noise::NoiseKind::SpikeStart(_)))
        {
            sim.spike_ns = vec![0; total];
        }
        if let Some(first) = sim.noise.first() {
            let at = first.at;
            sim.push(at, Event::Noise);
        }
        debug_assert!(sim.seq < TIMELINE_SEQ);
        if sim.workload.on() {
            if let Some(t0) = sim.timeline.reference() {
                // The reference instant is known: the workload starts there, after the faults
                // of that instant (as when a timeline that waited for a leader starts).
                sim.queue.push(t0, WORKLOAD_SEQ, Event::WorkloadStart);
            }
        }
        sim.seq = RUN_SEQ;
        Ok(sim)
    }

    /// Queue the fault timeline: its faults under their keys, or, when it waits for a leader,
    /// the check at its first instant (the faults' keys reserved for when it starts).
    fn queue_timeline(&mut self) {
        let mut seq = TIMELINE_SEQ;
        let schedule = self.timeline.schedule().to_vec();
        if let Some(first) = self.timeline.first_instant() {
            let key = (first, seq);
            for &(at, i) in &schedule {
                seq += 1;
                self.fault_keys[i] = (at, seq);
            }
            self.queue.push(key.0, key.1, Event::TimelineStart);
        } else {
            for (at, i) in schedule {
                seq += 1;
                self.queue.push(at, seq, Event::Fault(i));
            }
        }
    }

    #[inline]
    fn push(&mut self, at: Time, event: Event<P>) {
        self.seq += 1;
        if !self.queue.fits(self.seq) {
            // More events waiting at once than the queue's keys can name (2^24; a boot storm
            // of 16 M messages): the trial ends as over budget at the next step, so the
            // event it could not hold changes nothing reported.
            self.queue_full = true;
            return;
        }
        self.queue.push(at, self.seq, event);
    }

    /// When the trial will end given what is known now: the horizon, or the end of the settle
    /// window once every fault has fired and there is a quorum leader.
    /// A deposed leader still writing (`leader.stop_lag_ms`) holds the end back until its lag
    /// is over, so a trial counts every write of the lag it drew (at most to the horizon).
    fn deadline(&self) -> Time {
        let at = self
            .timeline
            .deadline(trial::quorum_since(&self.observer))
            .at;
        if self.stop_lag.is_none() {
            return at;
        }
        let lag = self
            .nodes
            .iter()
            .filter_map(|n| n.lag.map(|(until, _)| until))
            .max();
        match lag {
            Some(until) if until > at => until.min(self.horizon),
            _ => at,
        }
    }

    /// Hand every trace record to `sink` as it is made (see [`Observer::stream_trace`]); with
    /// [`SimConfig::trace`] off, nothing is buffered, so a trace of any length takes no memory.
    pub fn stream_trace(&mut self, sink: crate::TraceSink) {
        self.observer.stream_trace(sink);
    }

    /// Run the trial to its end.
    pub fn run(mut self) -> TrialReport {
        self.observer.advance(Time::ZERO);
        match self.step(None) {
            Step::Ended(end) => self.finish(end),
            Step::Paused => unreachable!("a run without a pause instant ends"),
        }
    }

    /// Run events until the trial ends, or, with `until`, until the next event is at or after
    /// that instant (an empty queue counts as such: the caller is about to queue more).
    fn step(&mut self, until: Option<Time>) -> Step {
        loop {
            let deadline = self.deadline();
            let next = self.queue.peek_time();
            if let Some(until) = until {
                if next.is_none_or(|t| t >= until) {
                    return Step::Paused;
                }
            }
            let Some(next) = next else {
                return Step::Ended(deadline);
            };
            if next > deadline {
                return Step::Ended(deadline);
            }
            if self.work >= self.cfg.budget || self.queue_full {
                // Out of work budget: stop at the last event's instant, deterministically.
                self.observer.budget_exceeded();
                return Step::Ended(self.observer.now());
            }
            let (at, seq, event) = self.queue.pop().expect("peeked");
            self.observer.advance(at);
            self.events += 1;
            // The workload's own events are not the protocol's work: turning it on must not
            // change which trials run out of budget.
            if !matches!(
                event,
                Event::WorkloadStart
                    | Event::Write { .. }
                    | Event::WriteArrive(_)
                    | Event::AckRequest { .. }
                    | Event::Ack { .. }
            ) {
                self.work += 1;
            }
            let event = match event {
                Event::Timer { node, timer, .. } => match self.timer_due(at, seq, node, timer) {
                    Some(generation) => Event::Timer {
                        node,
                        timer,
                        generation,
                    },
                    None => continue,
                },
                other => other,
            };
            self.dispatch(at, event);
            if self.timeline.is_waiting() && self.observer.quorum_leader().is_some() {
                if let Some(start) = self.timeline.leader_found(at) {
                    self.start_timeline(at, start);
                }
            }
        }
    }

    /// The report of the trial, which ended at `end`.
    fn finish(mut self, end: Time) -> TrialReport {
        if self.timeline.pending() > 0 {
            // Faults scheduled (or pushed by the wait for a leader) past the end never fired.
            self.observer.advance(end);
            for skipped in self.timeline.end() {
                self.observer.on_fault(skipped);
            }
        }
        self.observer.set_calm(self.timeline.calm());
        TrialReport::finish(self.observer, self.cfg.nodes, end, self.events)
    }

    /// Give this trial, run up to before its first fault with another trial's timeline (one
    /// whose configuration differs only in its faults and reference fault), `cfg`'s timeline.
    fn install_timeline(&mut self, cfg: SimConfig) {
        self.timeline = Timeline::new(&cfg);
        self.fault_keys = vec![(Time::ZERO, 0); cfg.faults.len()];
        self.cfg = cfg;
        self.queue_timeline();
    }

    /// A queue entry `(at, seq)` of a timer slot came up: the generation to fire with if it is
    /// the armed deadline; otherwise, if it carries a later armed deadline, queue that under its
    /// own key.
    fn timer_due(&mut self, at: Time, seq: u64, node: NodeId, timer: P::Timer) -> Option<u64> {
        let slot = &mut self.nodes[node.index()].timers[timer.index()];
        if slot.carrier != Some((at, seq)) {
            return None; // superseded by an earlier re-arm, or voided by a cancel or crash
        }
        slot.carrier = None;
        match slot.armed {
            Some(key) if key == (at, seq) => {
                slot.armed = None;
                Some(slot.generation)
            }
            Some((t, q)) => {
                slot.carrier = Some((t, q));
                self.queue.push(
                    t,
                    q,
                    Event::Timer {
                        node,
                        timer,
                        generation: 0,
                    },
                );
                None
            }
            None => None,
        }
    }

    fn dispatch(&mut self, now: Time, event: Event<P>) {
        match event {
            Event::Fault(i) => {
                let past = self.observer.past_reference();
                if let Some(t0) = self.timeline.fire(i, now, past) {
                    // The measured fault: the reference instant is now, just before it acts.
                    self.set_reference(t0);
                }
                let action = self.cfg.faults[i].action.clone();
                self.apply_fault(now, &action);
            }
            Event::TimelineStart => {
                let leader = self.observer.quorum_leader().is_some();
                match self.timeline.at_first_instant(now, leader) {
                    FirstInstant::Start(start) => self.start_timeline(now, start),
                    FirstInstant::Wait(wait) => self.push(wait.until, Event::TimelineGiveUp),
                }
            }
            Event::TimelineGiveUp => {
                let Some(give_up) = self.timeline.give_up(now) else {
                    return;
                };
                if let Some(t0) = give_up.reference {
                    self.set_reference(t0);
                }
                for skipped in give_up.skipped {
                    self.observer.on_fault(skipped);
                }
            }
            Event::Resume { node, pause } => {
                let n = &mut self.nodes[node.index()];
                if !n.paused || n.pause_id != pause {
                    return;
                }
                n.paused = false;
                self.observer.on_fault(Applied::Resume(node));
                // A write that fell due during the pause leaves before the backlog is handled.
                let n = &mut self.nodes[node.index()];
                if let Some(tag) = n.write_due.take() {
                    let generation = n.write_gen;
                    self.write(now, node, generation, Some(tag));
                }
                // The backlog, in arrival order (late timers, stale messages).
                self.drain_inbox(now, node);
            }
            Event::NodeFree(node) => {
                self.nodes[node.index()].free_queued = false;
                self.drain_inbox(now, node);
            }
            Event::Noise => self.noise(),
            Event::Reconnect(i) => {
                let pairs = std::mem::take(&mut self.stale[i].1);
                if pairs.is_empty() {
                    return; // every link taken over by a later fault
                }
                for &(a, b) in &pairs {
                    self.links.set(a, b, true);
                }
                self.observer.topology_changed(&self.links);
                self.observer.on_fault(Applied::Links { pairs, up: true });
            }
            Event::WorkloadStart => {
                self.workload_started = true;
                for i in 0..self.nodes.len() {
                    let id = NodeId::from_index(i);
                    if self.leads(id) {
                        let generation = self.nodes[i].write_gen;
                        self.write(now, id, generation, None);
                    }
                }
            }
            Event::Write { node, generation } => {
                let st = &mut self.nodes[node.index()];
                if st.proto.is_none() || st.write_gen != generation {
                    return;
                }
                self.write(now, node, generation, None);
            }
            // Nothing if the writer was cut off the resource while the write was in flight.
            Event::WriteArrive(tag) => trial::offer_write(
                &mut self.resource,
                self.workload.fencing,
                tag,
                &self.resource_cut,
                &mut self.observer,
            ),
            Event::AckRequest { write, to } => {
                let writer = self.pending_writes[write].tag.writer;
                let st = &self.nodes[to.index()];
                if !self.links.is_up(writer, to) || st.proto.is_none() || st.paused {
                    return;
                }
                if self.observer.status(to).and_then(|s| s.leader) != Some(writer) {
                    return;
                }
                self.observer.on_workload_msg();
                if let Some(at) = self.workload_delivery(now, to, Some(writer)) {
                    self.push(at, Event::Ack { write, from: to });
                }
            }
            Event::Ack { write, from } => {
                let p = &mut self.pending_writes[write];
                let writer = p.tag.writer;
                if !self.links.is_up(from, writer) || self.nodes[writer.index()].proto.is_none() {
                    return;
                }
                p.acks += 1;
                if !p.taken && p.acks >= election_core::majority(self.cfg.nodes) {
                    p.taken = true;
                    let tag = p.tag;
                    self.observer.on_write_taken(tag);
                }
            }
            ev => {
                let node = match &ev {
                    Event::Boot(id) => *id,
                    Event::Deliver { to, .. } => *to,
                    Event::Timer { node, .. } => *node,
                    Event::Input { node, .. } => *node,
                    _ => unreachable!(),
                };
                let st = &mut self.nodes[node.index()];
                if st.proto.is_some() && (st.paused || st.busy_until > now || !st.inbox.is_empty())
                {
                    st.inbox.push_back(ev);
                    if !st.paused && !st.free_queued {
                        st.free_queued = true;
                        let at = st.busy_until.max(now);
                        self.push(at, Event::NodeFree(node));
                    }
                } else {
                    self.handle(now, ev);
                }
            }
        }
    }

    /// Hand the node its queued inputs in arrival order while it is free; if an input keeps it
    /// busy, the rest wait for a `NodeFree` at the end of that input.
    fn drain_inbox(&mut self, now: Time, node: NodeId) {
        loop {
            let st = &mut self.nodes[node.index()];
            if st.paused || st.proto.is_none() {
                return;
            }
            if st.busy_until > now {
                if !st.inbox.is_empty() && !st.free_queued {
                    st.free_queued = true;
                    let at = st.busy_until;
                    self.push(at, Event::NodeFree(node));
                }
                return;
            }
            let Some(ev) = st.inbox.pop_front() else {
                return;
            };
            self.handle(now, ev);
        }
    }

    /// What `node`'s clock reads at global instant `t`.
    #[inline]
    fn local(&self, node: NodeId, t: Time) -> Time {
        if !self.clocks {
            return t;
        }
        let n = &self.nodes[node.index()];
        Time(crate::config::round_to_u64(
            n.clock_offset + t.0 as f64 * n.clock_rate,
        ))
    }

    /// The global instant at which `node`'s clock reads `local` (never before `now`), plus the
    /// timer jitter.
    #[inline]
    fn timer_instant(&mut self, node: NodeId, local: Time, now: Time) -> Time {
        let mut at = if self.clocks {
            let n = &self.nodes[node.index()];
            Time(crate::config::ceil_to_u64(
                (local.0 as f64 - n.clock_offset) / n.clock_rate,
            ))
        } else {
            local
        };
        at = at.max(now);
        if self.timer_jitter_ns > 0 {
            let j = self.node_rng.random_range(0..=self.timer_jitter_ns);
            at = Time(at.0.saturating_add(j));
        }
        at
    }

    /// Hand one event to its node's protocol (the node is not paused).
    #[inline(always)]
    fn handle(&mut self, now: Time, event: Event<P>) {
        match event {
            Event::Boot(id) => self.boot(now, id),
            Event::Deliver { from, to, msg } => {
                let info = MsgInfo::of(from, to, &msg);
                if !self.links.is_up(from, to) {
                    self.observer.on_drop(info, DropReason::LinkDown);
                    return;
                }
                if self.nodes[to.index()].proto.is_none() {
                    self.observer.on_drop(info, DropReason::Crashed);
                    return;
                }
                self.observer.on_deliver(info);
                self.input(now, to, |p, io| p.on_message(io, from, msg));
            }
            Event::Timer {
                node,
                timer,
                generation,
            } => {
                let st = &mut self.nodes[node.index()];
                if st.proto.is_none() || st.timers[timer.index()].generation != generation {
                    return;
                }
                if timer.is_failure_detector() && !st.detection {
                    // One pending deadline per timer: the latest firing supersedes older ones.
                    st.suppressed.retain(|(t, _)| *t != timer);
                    st.suppressed.push((timer, generation));
                    self.observer
                        .record(|| crate::TraceKind::DetectorSuppressed(node));
                    return;
                }
                self.observer.record(|| crate::TraceKind::Timer {
                    node,
                    timer: format!("{timer:?}"),
                });
                self.input_as(now, node, Work::Timer, |p, io| p.on_timer(io, timer));
            }
            Event::Input { node, input } => match input {
                Input::Suspect => self.input(now, node, |p, io| p.on_suspect(io)),
                Input::ClientEntry => self.input(now, node, |p, io| p.on_client_entry(io)),
                Input::Handover => self.input(now, node, |p, io| p.on_handover(io)),
            },
            _ => unreachable!("handled in dispatch"),
        }
    }

    fn boot(&mut self, now: Time, id: NodeId) {
        let proto = (self.factory)(id);
        // The family's own quorum rule (the same for every node it builds).
        self.observer.set_quorum_rule(proto.quorum_rule());
        self.nodes[id.index()].proto = Some(proto);
        self.observer.record(|| crate::TraceKind::Boot(id));
        let stored = self.nodes[id.index()].persisted.clone();
        self.input(now, id, |p, io| p.on_start(io, stored.as_ref()));
        self.observer.topology_changed(&self.links);
    }

    /// Run one protocol input on a live node, carry out its actions, then observe its status.
    fn input(&mut self, now: Time, id: NodeId, f: impl FnOnce(&mut P, &mut Io<'_, P>)) {
        self.input_as(now, id, Work::Handled, f);
    }

    /// [`Sim::input`], for an input of kind `work`: a timer whose actions only arm or cancel
    /// timers (a tick that counts, a check that finds nothing to do) takes no processing time.
    fn input_as(
        &mut self,
        now: Time,
        id: NodeId,
        work: Work,
        f: impl FnOnce(&mut P, &mut Io<'_, P>),
    ) {
        let mut actions = std::mem::take(&mut self.actions);
        let local_now = self.local(id, now);
        let Some(proto) = self.nodes[id.index()].proto.as_mut() else {
            self.actions = actions;
            return;
        };
        {
            let mut io = Io::new(local_now, &mut self.proto_rng, &mut actions);
            f(proto, &mut io);
        }
        let status = proto.status();
        // The input keeps the node busy for its processing time; its messages leave when it is
        // done, and those behind a `persist` only once the write is durable.
        let mut depart = now;
        let idle = work == Work::Timer
            && actions
                .iter()
                .all(|a| matches!(a, Action::SetTimer { .. } | Action::CancelTimer(_)));
        if let (false, Some(cpu)) = (idle, &self.cpu) {
            let ns = cpu.sample_ns(&mut self.node_rng);
            let ns = match self.slow.get(id.index()) {
                Some(&k) if k != 1.0 => (ns as f64 * k) as u64,
                _ => ns,
            };
            depart = Time(depart.0.saturating_add(ns));
        }
        if !idle {
            depart = Time(depart.0.saturating_add(self.nodes[id.index()].slow_ns));
        }
        for action in actions.drain(..) {
            if let (Action::Persist(_), Some(fsync)) = (&action, &self.fsync) {
                depart = Time(depart.0.saturating_add(fsync.sample_ns(&mut self.node_rng)));
            }
            self.carry_out(now, depart, id, action);
        }
        self.actions = actions;
        let st = &mut self.nodes[id.index()];
        st.busy_until = st.busy_until.max(depart);
        if self.workload_started {
            let was = self.observer.status(id).map(|s| s.role) == Some(Role::Leader);
            let is = status.role == Role::Leader;
            if was != is {
                // Leaving the role with a stop lag: the writing goes on, same schedule, with
                // the tag the node had as leader (the observer still holds its old status).
                let lag = match &self.stop_lag {
                    Some(s) if was => Some(s.sample_ns(&mut self.workload_rng)),
                    _ => None,
                };
                if let Some(ns) = lag.filter(|&ns| ns > 0) {
                    let tag = self.observer.write_tag(id);
                    let until = Time(now.0.saturating_add(ns));
                    self.nodes[id.index()].lag = Some((until, tag));
                    self.observer.on_status(id, Some(status));
                    return;
                }
                let n = &mut self.nodes[id.index()];
                n.write_gen += 1;
                n.write_due = None;
                n.lag = None;
                if is {
                    // A new leader starts writing at once.
                    let generation = n.write_gen;
                    self.push(
                        now,
                        Event::Write {
                            node: id,
                            generation,
                        },
                    );
                }
            }
        }
        self.observer.on_status(id, Some(status));
    }

    /// Does `id` believe it leads (as last reported)?
    fn leads(&self, id: NodeId) -> bool {
        self.nodes[id.index()].proto.is_some()
            && self.observer.status(id).map(|s| s.role) == Some(Role::Leader)
    }

    /// `node` (leading, live) sends a write now — `due`, the write that fell due during a
    /// pause, or a new one — and schedules its next. A paused node keeps the write that falls
    /// due, with the tag it has then, for its wake-up (the live driver does the same).
    ///
    /// A node that left the leader role writes on, with the tag it had as leader, while its
    /// stop lag lasts (a write that fell due within it during a pause leaves at the wake-up).
    fn write(&mut self, now: Time, node: NodeId, generation: u64, due: Option<WriteTag>) {
        let interval = self.workload.interval.unwrap_or_default();
        let deposed = if self.leads(node) {
            None
        } else {
            let st = &mut self.nodes[node.index()];
            match st.lag {
                Some((until, tag)) if st.proto.is_some() && (now < until || due.is_some()) => {
                    Some(tag)
                }
                _ => {
                    st.lag = None;
                    return;
                }
            }
        };
        if self.nodes[node.index()].paused {
            let tag = deposed.unwrap_or_else(|| self.observer.write_tag(node));
            self.nodes[node.index()].write_due.get_or_insert(tag);
            return;
        }
        let tag = due
            .or(deposed)
            .unwrap_or_else(|| self.observer.write_tag(node));
        match self.workload.commit {
            Commit::Resource => {
                self.observer.on_workload_msg();
                let cut = self.resource_cut.get(node.index()) == Some(&true);
                if !cut {
                    if let Some(at) = self.workload_delivery(now, node, None) {
                        self.push(at, Event::WriteArrive(tag));
                    }
                }
            }
            Commit::Majority => {
                // The write is a client entry of the writer's replicated log, if it has one: an
                // input like any other, queued behind whatever the node is busy with. Not a
                // deposed writer's: its log no longer takes them.
                if deposed.is_none() {
                    self.dispatch(
                        now,
                        Event::Input {
                            node,
                            input: Input::ClientEntry,
                        },
                    );
                }
                let write = self.pending_writes.len();
                self.pending_writes.push(PendingWrite {
                    tag,
                    acks: 1,
                    taken: false,
                });
                if election_core::majority(self.cfg.nodes) <= 1 {
                    self.pending_writes[write].taken = true;
                    self.observer.on_write_taken(tag);
                }
                for i in 0..self.cfg.nodes as usize {
                    let to = NodeId::from_index(i);
                    if to == node {
                        continue;
                    }
                    self.observer.on_workload_msg();
                    if !self.links.is_up(node, to) {
                        continue;
                    }
                    if let Some(at) = self.workload_delivery(now, node, Some(to)) {
                        self.push(at, Event::AckRequest { write, to });
                    }
                }
            }
        }
        self.push(now + interval, Event::Write { node, generation });
    }

    /// When a workload message from `from` to `to` (`None`: the resource) arrives, or `None` if
    /// it is lost. Drawn from the workload's own stream; not FIFO-ordered (writes are
    /// independent of each other).
    fn workload_delivery(&mut self, now: Time, from: NodeId, to: Option<NodeId>) -> Option<Time> {
        if self.loss > 0.0 && self.workload_rng.random_bool(self.loss) {
            return None;
        }
        // Per-node-pair loss and delay cover every endpoint; per-link latencies name members.
        let n = self.nodes.len();
        let link = to.map(|to| from.index() * n + to.index());
        if let Some(&p) = link.and_then(|l| self.link_loss.get(l)) {
            if p > 0.0 && self.workload_rng.random_bool(p) {
                return None;
            }
        }
        let m = self.cfg.nodes as usize;
        let sampler = match to.and_then(|to| self.link_latency.get(from.index() * m + to.index())) {
            Some(Some(s)) => s,
            _ => &self.latency,
        };
        let ns = sampler.sample_ns(&mut self.workload_rng);
        let extra = link.and_then(|l| self.link_delay.get(l)).copied();
        Some(now + std::time::Duration::from_nanos(self.slowed(from, ns) + extra.unwrap_or(0)))
    }

    /// Carry out one action of an input handled at `now` whose messages leave at `depart`.
    #[inline(always)]
    fn carry_out(&mut self, now: Time, depart: Time, from: NodeId, action: Action<P>) {
        match action {
            Action::Send { to, msg } => self.send(depart, from, to, msg),
            Action::SetTimer { timer, at } => {
                let at = if self.clocks || self.timer_jitter_ns > 0 {
                    self.timer_instant(from, at, now)
                } else {
                    at
                };
                self.seq += 1;
                let key = (at.max(now), self.seq);
                let slot = &mut self.nodes[from.index()].timers[timer.index()];
                slot.generation += 1;
                slot.armed = Some(key);
                if slot.carrier.is_some_and(|c| c <= key) {
                    return; // the queued carrier comes up first and re-queues `key`
                }
                slot.carrier = Some(key);
                self.queue.push(
                    key.0,
                    key.1,
                    Event::Timer {
                        node: from,
                        timer,
                        generation: 0,
                    },
                );
            }
            Action::CancelTimer(timer) => {
                let slot = &mut self.nodes[from.index()].timers[timer.index()];
                slot.generation += 1;
                slot.armed = None;
            }
            Action::Persist(record) => self.nodes[from.index()].persisted = Some(record),
        }
    }

    #[inline(always)]
    fn send(&mut self, now: Time, from: NodeId, to: NodeId, msg: P::Msg) {
        let n = self.nodes.len();
        if to.0 == 0 || to.index() >= n {
            self.observer.on_invalid_destination(from, to.0, msg.kind());
            return;
        }
        let info = MsgInfo::of(from, to, &msg);
        self.work += 1;
        self.observer.on_send(info);
        if !self.links.is_up(from, to) {
            self.observer.on_drop(info, DropReason::LinkDown);
            return;
        }
        if self.loss > 0.0 && self.net_rng.random_bool(self.loss) {
            self.observer.on_drop(info, DropReason::Loss);
            return;
        }
        if let Some(&p) = self.link_loss.get(from.index() * n + to.index()) {
            if p > 0.0 && self.net_rng.random_bool(p) {
                self.observer.on_drop(info, DropReason::Loss);
                return;
            }
        }
        if self.cfg.net.duplicate > 0.0 && self.net_rng.random_bool(self.cfg.net.duplicate) {
            let at = self.delivery_time(now, from, to);
            self.push(
                at,
                Event::Deliver {
                    from,
                    to,
                    msg: msg.clone(),
                },
            );
        }
        let at = self.delivery_time(now, from, to);
        self.push(at, Event::Deliver { from, to, msg });
    }

    #[inline]
    fn delivery_time(&mut self, now: Time, from: NodeId, to: NodeId) -> Time {
        let n = self.nodes.len();
        let link = from.index() * n + to.index();
        // Per-link overrides name members only; a service endpoint's links use the profile.
        let sampler = if self.link_latency.is_empty() {
            &self.latency
        } else {
            let m = self.cfg.nodes as usize;
            let member_link =
                (from.index() < m && to.index() < m).then(|| from.index() * m + to.index());
            match member_link.and_then(|l| self.link_latency.get(l)) {
                Some(Some(s)) => s,
                _ => &self.latency,
            }
        };
        // Saturating: a draw past the last representable instant is also past the horizon,
        // so the message simply never arrives.
        let constant = matches!(sampler, Sampler::Constant(_));
        let mut ns = sampler.sample_ns(&mut self.net_rng);
        let mut varies = !constant;
        if !self.slow.is_empty() || !self.link_delay.is_empty() {
            ns = self.slowed(from, ns);
            ns = ns.saturating_add(self.link_delay.get(link).copied().unwrap_or(0));
            // A latency that changes over time can make a later message overtake an earlier one.
            varies = true;
        }
        if !self.spike_ns.is_empty() {
            ns = ns.saturating_add(self.spike_ns[from.index()].max(self.spike_ns[to.index()]));
            varies = true;
        }
        let mut at = Time(now.0.saturating_add(ns));
        // Once any latency has varied (a delay since healed), a constant one can still
        // overtake the messages that took it: the table stays in use from then on.
        if self.cfg.net.fifo && (varies || !self.fifo_last.is_empty()) {
            // Never overtake an earlier message on the same link; ties keep send order
            // through the queue's sequence numbers.
            at = self.fifo_last.fifo(link, at);
        }
        at
    }

    /// A latency of `ns` drawn for a message from `from`, stretched if `from` is slow.
    #[inline]
    fn slowed(&self, from: NodeId, ns: u64) -> u64 {
        match self.slow.get(from.index()) {
            Some(&k) if k != 1.0 => (ns as f64 * k) as u64,
            _ => ns,
        }
    }

    /// Carry out the noise schedule's next event and queue the one after it.
    fn noise(&mut self) {
        use crate::noise::NoiseKind;
        let e = self.noise[self.noise_next];
        self.noise_next += 1;
        if let Some(next) = self.noise.get(self.noise_next) {
            let at = next.at;
            self.push(at, Event::Noise);
        }
        let i = e.node.index();
        match e.kind {
            NoiseKind::Pause(until) => {
                let st = &mut self.nodes[i];
                if st.proto.is_none() || st.paused {
                    return; // nothing to pause, or absorbed by the pause under way
                }
                st.paused = true;
                st.pause_id += 1;
                let pause = st.pause_id;
                self.push(
                    until,
                    Event::Resume {
                        node: e.node,
                        pause,
                    },
                );
                self.observer.on_noise(Applied::Pause(e.node, until));
            }
            NoiseKind::SpikeStart(ns) => {
                self.spike_ns[i] = ns;
                self.observer.on_noise_spike(e.node, true, ns);
            }
            NoiseKind::SpikeEnd => {
                self.spike_ns[i] = 0;
                self.observer.on_noise_spike(e.node, false, 0);
            }
        }
    }

    /// The reference instant is now: the observer measures from it and the workload starts.
    fn set_reference(&mut self, t0: Time) {
        self.observer.set_reference(t0);
        if self.workload.on() {
            self.push(t0, Event::WorkloadStart);
        }
    }

    /// Start the fault timeline at `now`: queue every fault under its reserved key, shifted by
    /// the time waited for a leader.
    fn start_timeline(&mut self, now: Time, start: trial::Start) {
        if let Some(t0) = start.reference {
            self.set_reference(t0);
        }
        for i in 0..self.fault_keys.len() {
            let (at, seq) = self.fault_keys[i];
            let at = at + start.shift;
            debug_assert!(at >= now);
            if !self.queue.fits(seq) {
                // As in `push`: the trial ends as over budget rather than panic.
                self.queue_full = true;
                return;
            }
            self.queue.push(at, seq, Event::Fault(i));
        }
    }

    fn apply_fault(&mut self, now: Time, action: &FaultAction) {
        let up: Vec<bool> = self.nodes.iter().map(|n| n.proto.is_some()).collect();
        let applied = trial::resolve(
            now,
            action,
            &up,
            self.cfg.nodes as usize,
            &self.observer,
            self.last_crashed,
            &mut self.fault_rng,
        );
        let members = self.cfg.nodes as usize;
        // A link fault sets the links it names: a stale connection no longer brings them back.
        // A new stale connection takes over every link it names that is up or stale.
        let mut stale = Vec::new();
        if let Applied::StaleConnection { from, to, .. } = &applied {
            for &a in from {
                for &b in to {
                    let held = self.links.is_up(a, b)
                        || self.stale.iter().any(|(_, p)| p.contains(&(a, b)));
                    if a != b && held {
                        stale.push((a, b));
                    }
                }
            }
        }
        for (_, pairs) in &mut self.stale {
            pairs.retain(|&(a, b)| !trial::sets_link(&applied, members, a, b));
        }
        if trial::apply_topology(&applied, members, &mut self.links, &mut self.resource_cut) {
            self.observer.topology_changed(&self.links);
        }
        if let Applied::StaleConnection { until, .. } = applied {
            self.stale.push((until, stale));
            let i = self.stale.len() - 1;
            self.push(until, Event::Reconnect(i));
        }
        match applied {
            Applied::Crash(id) => {
                self.observer.on_fault(applied);
                let st = &mut self.nodes[id.index()];
                st.proto = None;
                st.paused = false;
                st.inbox.clear();
                st.busy_until = now;
                st.write_gen += 1;
                st.write_due = None;
                st.lag = None;
                st.free_queued = false;
                for slot in &mut st.timers {
                    slot.generation += 1;
                    slot.armed = None;
                }
                st.suppressed.clear();
                self.last_crashed = Some(id);
                self.observer.on_status(id, None);
                self.observer.topology_changed(&self.links);
                return;
            }
            Applied::Recover(id) => {
                self.observer.on_fault(applied);
                self.boot(now, id);
                return;
            }
            Applied::Pause(id, until) => {
                let st = &mut self.nodes[id.index()];
                st.paused = true;
                st.pause_id += 1;
                let pause = st.pause_id;
                self.push(until, Event::Resume { node: id, pause });
            }
            Applied::Heal => {
                // Links and the resource were healed above; so are per-link loss and delay.
                self.link_loss.clear();
                self.link_delay.clear();
            }
            Applied::LinkLoss {
                ref from,
                ref to,
                loss,
            } => {
                let n = self.nodes.len();
                if self.link_loss.is_empty() {
                    self.link_loss = vec![0.0; n * n];
                }
                for &a in from {
                    for &b in to {
                        self.link_loss[a.index() * n + b.index()] = loss;
                    }
                }
            }
            Applied::LinkDelay {
                ref from,
                ref to,
                ms,
            } => {
                let n = self.nodes.len();
                if self.link_delay.is_empty() {
                    self.link_delay = vec![0; n * n];
                }
                for &a in from {
                    for &b in to {
                        self.link_delay[a.index() * n + b.index()] = crate::config::ms_to_ns(ms);
                    }
                }
            }
            Applied::Slow(id, factor, ms) => {
                // The factor table stays unallocated while nobody is slowed by a factor, so
                // trials without one draw and compute exactly as before.
                if factor != 1.0 && self.slow.is_empty() {
                    self.slow = vec![1.0; self.nodes.len()];
                }
                if let Some(k) = self.slow.get_mut(id.index()) {
                    *k = factor;
                }
                self.nodes[id.index()].slow_ns = crate::config::ms_to_ns(ms);
            }
            Applied::Amnesia(id) => self.nodes[id.index()].persisted = None,
            Applied::SetLoss(p) => self.loss = p,
            Applied::ClockJump(id, ms) => {
                self.clocks = true;
                self.nodes[id.index()].clock_offset += ms * 1e6;
            }
            Applied::ClockRate(id, ppm) => {
                self.clocks = true;
                // Keep the clock continuous: it reads the same now at the new rate.
                let local = self.local(id, now).0 as f64;
                let n = &mut self.nodes[id.index()];
                n.clock_rate = 1.0 + ppm * 1e-6;
                n.clock_offset = local - now.0 as f64 * n.clock_rate;
            }
            Applied::Suspect(id) => {
                self.observer.on_fault(applied);
                if self.nodes[id.index()].paused {
                    return; // a paused node's detector cannot run either
                }
                // The suspicion is the detector going off: a deadline it swallowed while
                // detection was off is spent by it, not fired a second time later.
                self.nodes[id.index()].suppressed.clear();
                self.dispatch(
                    now,
                    Event::Input {
                        node: id,
                        input: Input::Suspect,
                    },
                );
                return;
            }
            Applied::Handover(id) => {
                self.observer.on_fault(applied);
                if self.nodes[id.index()].paused {
                    return; // a frozen process hears no shutdown signal either
                }
                self.dispatch(
                    now,
                    Event::Input {
                        node: id,
                        input: Input::Handover,
                    },
                );
                return;
            }
            Applied::Detection { ref nodes, enabled } => {
                let mut due = Vec::new();
                for &id in nodes {
                    let st = &mut self.nodes[id.index()];
                    st.detection = enabled;
                    if enabled {
                        for (timer, generation) in std::mem::take(&mut st.suppressed) {
                            if st.timers[timer.index()].generation == generation {
                                due.push((id, timer, generation));
                            }
                        }
                    }
                }
                self.observer.on_fault(applied);
                // Deadlines that passed while detection was off go off now, in the order of the
                // fault's node set.
                for (node, timer, generation) in due {
                    self.dispatch(
                        now,
                        Event::Timer {
                            node,
                            timer,
                            generation,
                        },
                    );
                }
                return;
            }
            // Topology, carried out above; a spike comes from the noise schedule only, never
            // from a fault action.
            Applied::Partition(_)
            | Applied::CutLink { .. }
            | Applied::StaleConnection { .. }
            | Applied::Isolate(_)
            | Applied::Links { .. }
            | Applied::ResourceCut(_)
            | Applied::Resume(_)
            | Applied::Skipped(_)
            | Applied::Spike(..) => {}
        }
        self.observer.on_fault(applied);
    }
}

impl<P: Protocol + Clone, F: FnMut(NodeId) -> P + Clone> Sim<P, F> {
    /// One report per configuration, each exactly what `Sim::new(cfg, factory)?.run()` gives,
    /// with the run before the first fault shared between trials that differ only in their
    /// fault timelines.
    ///
    /// A sweep runs every scenario of a cell with the same seeds, and the scenarios of one
    /// protocol, size and network draw the same fault instant from the seed; until that
    /// instant their trials are the same trial: the same boots, cold-start election, heartbeats
    /// and draws (the timeline's events sit in their own range of sequence numbers, so
    /// everything else is numbered alike). That shared run is often most of a trial (a 51-node
    /// bully's cold start is about 85 % of its messages). So configurations equal in every field
    /// but [`faults`](SimConfig::faults) and [`reference_fault`](SimConfig::reference_fault),
    /// with the same initial reference instant and at least one fault each, are run once up to
    /// the earliest of their first faults' scheduled instants; the trial is then cloned, given
    /// each one's timeline (queued under the keys [`Sim::new`] would have given it) and run to
    /// its end. Nothing before that instant can tell the timelines apart: no fault has fired,
    /// the deadline is the horizon while faults are pending, and the observer measures from
    /// the same reference. A configuration that shares with none, or fails validation, runs
    /// on its own (its error in its place); so does a group whose shared run ends before the
    /// instant (the horizon or the work budget). The runner's equivalence test compares every
    /// default scenario's rows both ways.
    pub fn run_all(cfgs: Vec<SimConfig>, factory: F) -> Vec<Result<TrialReport, ConfigError>> {
        let n = cfgs.len();
        // Each configuration's shareable part, its initial reference and its first fault's
        // instant; `None`: nothing to share.
        let shareable: Vec<Option<(SimConfig, Time, Time)>> = cfgs
            .iter()
            .map(|c| {
                c.validate().ok()?;
                let timeline = Timeline::new(c);
                let first = timeline.schedule().first()?.0;
                let base = SimConfig {
                    faults: Vec::new(),
                    reference_fault: None,
                    ..c.clone()
                };
                Some((base, timeline.initial_reference(), first))
            })
            .collect();
        let alone = |cfg: &SimConfig| Sim::new(cfg.clone(), factory.clone()).map(Sim::run);
        let mut out: Vec<Option<Result<TrialReport, ConfigError>>> = (0..n).map(|_| None).collect();
        let mut taken = vec![false; n];
        for i in 0..n {
            if taken[i] {
                continue;
            }
            taken[i] = true;
            let mut group = vec![i];
            if let Some((base, t0, _)) = &shareable[i] {
                for j in i + 1..n {
                    let same = shareable[j]
                        .as_ref()
                        .is_some_and(|(b, t, _)| t == t0 && b == base);
                    if !taken[j] && same {
                        taken[j] = true;
                        group.push(j);
                    }
                }
            }
            let until = group
                .iter()
                .filter_map(|&j| shareable[j].as_ref().map(|s| s.2))
                .min();
            let shared = match until {
                Some(until) if group.len() > 1 => Sim::build(cfgs[i].clone(), factory.clone())
                    .ok()
                    .and_then(|mut sim| {
                        sim.observer.advance(Time::ZERO);
                        matches!(sim.step(Some(until)), Step::Paused).then_some(sim)
                    }),
                _ => None,
            };
            let Some(shared) = shared else {
                for &j in &group {
                    out[j] = Some(alone(&cfgs[j]));
                }
                continue;
            };
            let mut shared = Some(shared);
            for (k, &j) in group.iter().enumerate() {
                let mut sim = if k + 1 == group.len() {
                    shared.take().expect("the last one takes it")
                } else {
                    shared.as_ref().expect("kept until the last").clone()
                };
                sim.install_timeline(cfgs[j].clone());
                out[j] = Some(Ok(match sim.step(None) {
                    Step::Ended(end) => sim.finish(end),
                    Step::Paused => unreachable!("a run without a pause instant ends"),
                }));
            }
        }
        out.into_iter()
            .map(|r| r.expect("every configuration ran"))
            .collect()
    }
}
