//! One trial drawn message by message, the way the textbooks draw elections: a lifeline per
//! node, time flowing down, an arrow per message labelled with its kind and coloured by its
//! category, crashes, pauses and partitions as marked spans, role changes as marks on the
//! lifeline, and the instant the cluster converged.
//!
//! The input is the simulator's full event log ([`TraceEvent`]s, recorded when a trial runs
//! with `trace: true`). Three renderings share one model:
//!
//! * **SVG** ([`TraceFormat::Svg`]): a message-sequence chart. Time runs down on a compressed
//!   axis: every instant at which something happened gets a row, and idle gaps longer than a
//!   few milliseconds are shown as a marked break with their length, so a 1 ms hop and a
//!   150 ms timeout both stay readable.
//! * **Mermaid** ([`TraceFormat::Mermaid`]): a `sequenceDiagram`, for pasting into markdown.
//! * **JSONL** ([`TraceFormat::Jsonl`]): the raw event log, one JSON object per line, first
//!   line the trial's metadata. Never windowed.
//!
//! **Legibility.** A sequence chart stays legible up to about twelve lifelines and a few
//! hundred messages. A trial that is larger than that (or that has long stretches of
//! heartbeats before the fault) is cut to the election: from a few events before the reference
//! instant to a few events after convergence, and to at most `max_messages` messages. The
//! chart says so in its header, with how many messages it shows out of how many.

mod jsonl;
mod mermaid;
mod svg;
mod text;
pub mod timeline;

use std::fmt;
use std::str::FromStr;

use election_core::{MsgCategory, NodeId, Role, Status, Time};
use election_sim::observer::WriteOutcome;
use election_sim::{Applied, DropReason, Metrics, TraceEvent, TraceKind};

use crate::error::ReportError;

/// Output format of [`render_trace`](crate::render_trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// A message-sequence chart as SVG.
    Svg,
    /// A Mermaid `sequenceDiagram`.
    Mermaid,
    /// The raw event log, one JSON object per line.
    Jsonl,
}

impl FromStr for TraceFormat {
    type Err = ReportError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "svg" => Ok(TraceFormat::Svg),
            "mermaid" => Ok(TraceFormat::Mermaid),
            "jsonl" => Ok(TraceFormat::Jsonl),
            other => Err(ReportError::Trace(format!(
                "unknown trace format {other:?}: expected svg, mermaid or jsonl"
            ))),
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TraceFormat::Svg => "svg",
            TraceFormat::Mermaid => "mermaid",
            TraceFormat::Jsonl => "jsonl",
        })
    }
}

/// Which part of the trial to draw.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum TraceWindow {
    /// The whole trial if it is small enough to stay legible, otherwise the election window.
    #[default]
    Auto,
    /// The whole trial, whatever its size (still cut to `max_messages`).
    Full,
    /// From `from_ms` to `to_ms` (ms since the trial's start).
    Ms {
        /// Start.
        from_ms: f64,
        /// End.
        to_ms: f64,
    },
}

/// What the trace is of, and how to draw it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceMeta {
    /// Protocol spec.
    pub protocol: String,
    /// Scenario name.
    pub scenario: String,
    /// Network profile name.
    pub net: String,
    /// Trial seed.
    pub seed: u64,
    /// The reference instant (the first fault), in ms since the start.
    pub reference_ms: f64,
    /// Failover time, relative to the reference instant (`None`: never converged).
    pub elect_ms: Option<f64>,
    /// The agreed leader at the end, if any.
    pub leader: Option<u32>,
    /// Split-brain time of the trial (ms), shown in the header.
    pub split_brain_ms: Option<f64>,
    /// The workload's writes after the reference instant (ok, stale, fenced), shown in the
    /// header; stale and fenced writes are also marked where they happened.
    pub writes: Option<(u64, u64, u64)>,
    /// Which part to draw.
    pub window: TraceWindow,
    /// At most this many messages are drawn.
    pub max_messages: usize,
    /// Above this many nodes the chart is cut to the election window.
    pub max_nodes: u32,
    /// How many of the trace's last lanes are the protocol's service endpoints (lease's store,
    /// id `n + 1`) rather than members: drawn as their own lanes, labelled `store`.
    pub services: u32,
}

impl TraceMeta {
    /// Metadata for a trial, without metrics (no convergence line).
    pub fn new(protocol: &str, scenario: &str, net: &str, seed: u64) -> TraceMeta {
        TraceMeta {
            protocol: protocol.to_string(),
            scenario: scenario.to_string(),
            net: net.to_string(),
            seed,
            reference_ms: 0.0,
            elect_ms: None,
            leader: None,
            split_brain_ms: None,
            writes: None,
            window: TraceWindow::Auto,
            max_messages: 300,
            max_nodes: 12,
            services: 0,
        }
    }

    /// Metadata for a trial whose metrics are known (reference instant, convergence, leader).
    pub fn from_metrics(
        protocol: &str,
        scenario: &str,
        net: &str,
        seed: u64,
        m: &Metrics,
    ) -> TraceMeta {
        TraceMeta {
            reference_ms: m.reference_ms,
            elect_ms: m.elect_ms,
            leader: m.leader.map(|l| l.0),
            split_brain_ms: Some(m.split_brain_ms),
            writes: m.writes.map(|w| (w.ok, w.stale, w.fenced)),
            ..TraceMeta::new(protocol, scenario, net, seed)
        }
    }

    /// The lane label of endpoint `i` in a trace of `lanes` lanes.
    pub(crate) fn lane_label(&self, i: u32, lanes: u32) -> String {
        if i + self.services > lanes {
            "store".to_string()
        } else {
            format!("node {i}")
        }
    }

    fn converged_at(&self) -> Option<Time> {
        self.elect_ms.map(|e| ms_to_time(self.reference_ms + e))
    }
}

pub(crate) fn ms_to_time(ms: f64) -> Time {
    Time((ms * 1e6).round().max(0.0) as u64)
}

pub(crate) fn ms(t: Time) -> String {
    format!("{:.3}", t.as_millis_f64())
}

/// The first line of a [`TraceFormat::Jsonl`] trace (newline included), for writing a trace
/// as the trial produces it: this line, then [`jsonl_event`] of each record in order, is
/// exactly what [`render_trace`] returns for the whole log.
pub fn jsonl_meta(nodes: u32, meta: &TraceMeta) -> String {
    jsonl::meta_line(nodes, meta)
}

/// One record's line of a [`TraceFormat::Jsonl`] trace, newline included (see [`jsonl_meta`]).
pub fn jsonl_event(e: &TraceEvent) -> String {
    jsonl::event_line(e)
}

/// One record as a line for a person at a terminal (`run --trace`), without a newline: the
/// time and the JSON-lines vocabulary as words (`412.118 ms  send  3 → 5  ELECTION (election,
/// 24 B)`), never a `Debug` struct.
pub fn text_event(e: &TraceEvent) -> String {
    text::event_line(e)
}

/// A fault as applied, in the same words as [`text_event`] (`crash node 5`).
pub fn text_fault(a: &Applied) -> String {
    text::fault(a)
}

/// Renders a trial's event log. See the [module docs](self).
pub fn render_trace(
    events: &[TraceEvent],
    nodes: u32,
    meta: &TraceMeta,
    format: TraceFormat,
) -> Result<String, ReportError> {
    if nodes == 0 {
        return Err(ReportError::Trace("a trace needs at least one node".into()));
    }
    if events.is_empty() {
        return Err(ReportError::Trace(
            "the event log is empty: was the trial run with tracing on?".into(),
        ));
    }
    for e in events {
        for id in event_nodes(&e.what) {
            if id == 0 || id > nodes {
                return Err(ReportError::Trace(format!(
                    "event at {} ms names node {id}, outside 1..={nodes}",
                    ms(e.at)
                )));
            }
        }
    }
    if format == TraceFormat::Jsonl {
        return Ok(jsonl::render(events, nodes, meta));
    }
    // The sequence chart draws what the nodes did; the observer's quorum-leader verdicts are
    // drawn by the timeline ([`timeline`]), so they neither add rows nor move the window.
    let drawn: Vec<TraceEvent> = events
        .iter()
        .filter(|e| !matches!(e.what, TraceKind::QuorumLeader(_)))
        .cloned()
        .collect();
    let model = Model::build(&drawn, nodes, meta);
    Ok(match format {
        TraceFormat::Svg => svg::render(&model, meta),
        TraceFormat::Mermaid => mermaid::render(&model, meta),
        TraceFormat::Jsonl => unreachable!(),
    })
}

fn event_nodes(k: &TraceKind) -> Vec<u32> {
    match k {
        TraceKind::Boot(n) | TraceKind::DetectorSuppressed(n) => vec![n.0],
        TraceKind::Send(m) | TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
            vec![m.from.0, m.to.0]
        }
        TraceKind::InvalidDestination { from, .. } => vec![from.0],
        TraceKind::Timer { node, .. } | TraceKind::Status { node, .. } => vec![node.0],
        TraceKind::Fault(a) => match a {
            Applied::Crash(n)
            | Applied::Recover(n)
            | Applied::ClockJump(n, _)
            | Applied::ClockRate(n, _)
            | Applied::Slow(n, _, _)
            | Applied::Pause(n, _)
            | Applied::Resume(n)
            | Applied::Isolate(n)
            | Applied::Amnesia(n)
            | Applied::Spike(n, _)
            | Applied::Suspect(n)
            | Applied::Handover(n) => vec![n.0],
            Applied::Links { pairs, .. } => pairs.iter().flat_map(|(a, b)| [a.0, b.0]).collect(),
            Applied::LinkLoss { from, to, .. } | Applied::LinkDelay { from, to, .. } => {
                from.iter().chain(to).map(|n| n.0).collect()
            }
            Applied::Partition(g) => g.iter().flatten().map(|n| n.0).collect(),
            Applied::CutLink { from, to } | Applied::StaleConnection { from, to, .. } => {
                from.iter().chain(to).map(|n| n.0).collect()
            }
            Applied::Detection { nodes, .. } | Applied::ResourceCut(nodes) => {
                nodes.iter().map(|n| n.0).collect()
            }
            Applied::Heal | Applied::SetLoss(_) | Applied::Skipped(_) => Vec::new(),
        },
        TraceKind::Write { writer, .. } => vec![writer.0],
        TraceKind::QuorumLeader(l) => l.iter().map(|l| l.0).collect(),
    }
}

/// What became of a message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fate {
    Delivered(Time),
    Dropped(Time, DropReason),
    /// Still in flight when the trial ended.
    InFlight,
}

/// One message, its send matched with its delivery or loss.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Msg {
    pub sent: Time,
    pub from: u32,
    pub to: u32,
    pub kind: &'static str,
    pub category: MsgCategory,
    pub fate: Fate,
    /// A duplicate delivery (the network delivered one send twice).
    pub duplicate: bool,
}

impl Msg {
    pub(crate) fn end(&self) -> Option<Time> {
        match self.fate {
            Fate::Delivered(t) | Fate::Dropped(t, _) => Some(t),
            Fate::InFlight => None,
        }
    }
}

/// Something that happened on one node's lifeline.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MarkKind {
    Status(Status),
    Crash,
    Boot,
    Recover,
    Pause(Time),
    Resume,
    Timer(String),
    Suspect,
    DetectorSuppressed,
    InvalidDestination(u32, &'static str),
    /// A run of writes of this node taken from it as a deposed leader, or fenced: the outcome,
    /// the token, how many in the run and when the last one was. (Writes taken from the current
    /// leader are routine and not drawn; the header gives their count.)
    Write(WriteOutcome, Option<u64>, u32, Time),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mark {
    pub at: Time,
    pub node: u32,
    pub kind: MarkKind,
}

/// A cluster-wide event: partitions, cuts, heals, loss changes, detector switches.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Note {
    pub at: Time,
    pub text: String,
    /// For partitions and isolations: walls between lanes (`(left lane, right lane)` pairs,
    /// 1-based node ids of adjacent lanes) until the next heal.
    pub walls: Vec<(u32, u32)>,
    /// True for link faults (shaded until the next heal).
    pub link_fault: bool,
    pub heal: bool,
}

/// Each node's state at the window's start.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NodeState {
    pub status: Option<Status>,
    pub crashed: bool,
    pub booted: bool,
}

/// Everything a renderer draws, already cut to the window.
#[derive(Clone, Debug)]
pub(crate) struct Model {
    pub nodes: u32,
    pub from: Time,
    pub to: Time,
    pub reference: Time,
    pub converged_at: Option<Time>,
    pub msgs: Vec<Msg>,
    pub marks: Vec<Mark>,
    pub notes: Vec<Note>,
    /// Link faults active at the window's start (walls, shaded), with the note that made them.
    pub active_at_start: Vec<Note>,
    pub initial: Vec<NodeState>,
    /// Crashed spans `(node, from, to)` inside the window (to = window end if never recovered).
    pub down: Vec<(u32, Time, Time)>,
    /// Paused spans `(node, from, to)`.
    pub paused: Vec<(u32, Time, Time)>,
    /// Spans `(node, from, to)` in which the node believed it was the leader.
    pub leading: Vec<(u32, Time, Time)>,
    /// Heartbeat-only stretches not drawn.
    pub hidden: Vec<Hidden>,
    /// Human notes on what was cut.
    pub cut_notes: Vec<String>,
}

/// A stretch in which nothing but heartbeats happened, collapsed to one marked break.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Hidden {
    pub from: Time,
    pub to: Time,
    /// Heartbeat rounds (bursts of activity) and messages not drawn.
    pub rounds: usize,
    pub msgs: usize,
}

fn in_any(hidden: &[Hidden], t: Time) -> bool {
    hidden.iter().any(|h| t >= h.from && t <= h.to)
}

/// Idle gaps longer than this separate two bursts of activity.
pub(crate) const BURST_GAP_NS: u64 = 5_000_000;

/// Finds runs of at least four consecutive bursts (instants closer than [`BURST_GAP_NS`]) in
/// which only heartbeats, routine timers and swallowed detector firings happen, and hides all
/// but the first and last burst of each run.
fn boring_runs(
    events: &[TraceEvent],
    msgs: &[Msg],
    from: Time,
    to: Time,
    reference: Time,
    converged_at: Option<Time>,
) -> Vec<Hidden> {
    // (instant, interesting)
    let mut inst: Vec<(Time, bool)> = Vec::new();
    // Each writer's last write (outcome, token): only the start of a run of stale or fenced
    // writes is interesting, like the mark that stands for the run.
    let mut last_write: Vec<Option<(WriteOutcome, Option<u64>)>> = Vec::new();
    for e in events {
        if e.at < from || e.at > to {
            continue;
        }
        let interesting = match &e.what {
            TraceKind::Send(m) | TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
                m.category != MsgCategory::Heartbeat
            }
            TraceKind::Timer { timer, .. } => !is_routine_timer(timer),
            TraceKind::DetectorSuppressed(_) => false,
            TraceKind::Write {
                writer,
                token,
                outcome,
            } => {
                let w = writer.index();
                if last_write.len() <= w {
                    last_write.resize(w + 1, None);
                }
                let now = Some((*outcome, *token));
                let starts_run = *outcome != WriteOutcome::Ok && last_write[w] != now;
                last_write[w] = now;
                starts_run
            }
            _ => true,
        };
        match inst.last_mut() {
            Some((t, i)) if *t == e.at => *i |= interesting,
            _ => inst.push((e.at, interesting)),
        }
    }
    for t in [Some(reference), converged_at].into_iter().flatten() {
        if let Some(x) = inst.iter_mut().find(|x| x.0 == t) {
            x.1 = true;
        }
    }
    // Bursts: (start, end, interesting).
    let mut bursts: Vec<(Time, Time, bool)> = Vec::new();
    for (t, i) in inst {
        match bursts.last_mut() {
            Some(b) if t.0 - b.1 .0 <= BURST_GAP_NS => {
                b.1 = t;
                b.2 |= i;
            }
            _ => bursts.push((t, t, i)),
        }
    }
    // A burst containing the reference instant or convergence is interesting even when the
    // instant itself carries no event.
    for b in &mut bursts {
        for t in [Some(reference), converged_at].into_iter().flatten() {
            if t >= b.0 && t <= b.1 {
                b.2 = true;
            }
        }
    }
    let mut hidden = Vec::new();
    let mut i = 0;
    while i < bursts.len() {
        if bursts[i].2 {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < bursts.len() && !bursts[j + 1].2 {
            j += 1;
        }
        // Also keep the boring stretch intact if an interesting instant (the fault, say)
        // falls in a gap inside it.
        let crosses = [Some(reference), converged_at]
            .into_iter()
            .flatten()
            .any(|t| t > bursts[i].0 && t < bursts[j].1);
        if j >= i + 3 && !crosses {
            let (a, b) = (bursts[i + 1].0, bursts[j - 1].1);
            hidden.push(Hidden {
                from: a,
                to: b,
                rounds: j - i - 1,
                msgs: msgs.iter().filter(|m| m.sent >= a && m.sent <= b).count(),
            });
        }
        i = j + 1;
    }
    hidden
}

/// Every distinct instant the chart needs a row for, ascending.
impl Model {
    pub(crate) fn build(events: &[TraceEvent], nodes: u32, meta: &TraceMeta) -> Model {
        let end = events.last().map(|e| e.at).unwrap_or(Time::ZERO);
        let reference = ms_to_time(meta.reference_ms);
        let converged_at = meta.converged_at();
        let all = match_messages(events, nodes);
        let total_msgs = all.len();

        // Choose the window: the whole trial when it stays legible once heartbeat-only
        // stretches are collapsed, otherwise the election.
        let mut cut_notes = Vec::new();
        let visible = |from: Time, to: Time| {
            let hidden = boring_runs(events, &all, from, to, reference, converged_at);
            let msgs: Vec<Msg> = all
                .iter()
                .filter(|m| m.sent >= from && m.sent <= to && !in_any(&hidden, m.sent))
                .cloned()
                .collect();
            (msgs, hidden)
        };
        let (from, to) = match meta.window {
            TraceWindow::Full => (Time::ZERO, end),
            TraceWindow::Ms { from_ms, to_ms } => {
                let (a, b) = (ms_to_time(from_ms), ms_to_time(to_ms));
                (a.min(b), a.max(b))
            }
            TraceWindow::Auto => {
                // The chart starts a few sends before the fault ([`lead_in`]): the boot
                // election and the steady state before it are one note, not the top of the
                // chart. Everything after the fault stays when it fits.
                let (win_from, win_to) = election_window(events, reference, converged_at, end);
                let start = lead_in(events, win_from);
                if start > Time::ZERO {
                    cut_notes.push(format!(
                        "boot election and steady state, 0 ms to {} ms, elided: the chart starts {:.3} ms before t0",
                        ms(start),
                        reference.as_millis_f64() - start.as_millis_f64()
                    ));
                }
                let full_fits =
                    nodes <= meta.max_nodes && visible(start, end).0.len() <= meta.max_messages;
                if full_fits {
                    (start, end)
                } else {
                    if nodes > meta.max_nodes {
                        cut_notes.push(format!(
                            "n = {nodes} is more lifelines than a sequence chart shows legibly (about {}): cut to the election",
                            meta.max_nodes
                        ));
                    }
                    (start, win_to)
                }
            }
        };
        let (mut msgs, mut hidden) = visible(from, to);
        let mut to = to;
        if msgs.len() > meta.max_messages {
            let last = msgs[meta.max_messages - 1].sent;
            // Every send at the cut instant stays, so a broadcast is never half drawn.
            msgs.retain(|m| m.sent <= last);
            hidden.retain(|h| h.from < last);
            cut_notes.push(format!(
                "cut after {} messages, at {} ms (the trial goes on to {} ms)",
                msgs.len(),
                ms(last),
                ms(end)
            ));
            to = last;
        }
        if from > Time::ZERO || to < end {
            cut_notes.insert(
                0,
                format!(
                    "showing {} ms to {} ms of a trial that ends at {} ms",
                    ms(from),
                    ms(to),
                    ms(end)
                ),
            );
        }
        let hidden_msgs: usize = hidden.iter().map(|h| h.msgs).sum();
        if hidden_msgs > 0 {
            cut_notes.push(format!(
                "{} stretches of heartbeats only are collapsed ({} messages not drawn); {} of the trial's {} messages are drawn",
                hidden.len(),
                hidden_msgs,
                msgs.len(),
                total_msgs
            ));
        }
        // Messages delivered after the window still need their arrival drawn.
        let draw_to = msgs.iter().filter_map(Msg::end).fold(to, Time::max);

        // Replay everything before the window to know where each node stands.
        let mut initial = vec![
            NodeState {
                status: None,
                crashed: false,
                booted: false,
            };
            nodes as usize
        ];
        let mut active: Vec<Note> = Vec::new();
        let mut marks = Vec::new();
        let mut notes = Vec::new();
        let mut down = Vec::new();
        let mut paused = Vec::new();
        let mut down_since: Vec<Option<Time>> = vec![None; nodes as usize];
        let mut pause_since: Vec<Option<Time>> = vec![None; nodes as usize];
        let mut write_runs: Vec<Option<usize>> = vec![None; nodes as usize];
        for e in events {
            if e.at > draw_to {
                break;
            }
            let before = e.at < from;
            let i = |n: &NodeId| n.index();
            match &e.what {
                TraceKind::Status { node, status } => {
                    if before {
                        initial[i(node)].status = *status;
                    } else if let Some(st) = status {
                        marks.push(mark(e.at, *node, MarkKind::Status(*st)));
                    }
                }
                TraceKind::Boot(n) => {
                    if before {
                        initial[i(n)].booted = true;
                        initial[i(n)].crashed = false;
                        down_since[i(n)] = None;
                    } else if let Some(t) = down_since[i(n)].take() {
                        down.push((n.0, t, e.at));
                        marks.push(mark(e.at, *n, MarkKind::Recover));
                    } else {
                        marks.push(mark(e.at, *n, MarkKind::Boot));
                    }
                }
                TraceKind::Timer { node, timer } if !before => {
                    marks.push(mark(e.at, *node, MarkKind::Timer(timer.clone())));
                }
                TraceKind::DetectorSuppressed(n) if !before => {
                    marks.push(mark(e.at, *n, MarkKind::DetectorSuppressed));
                }
                TraceKind::InvalidDestination { from: f, to, kind } if !before => {
                    marks.push(mark(e.at, *f, MarkKind::InvalidDestination(*to, kind)));
                }
                TraceKind::Write {
                    writer,
                    token,
                    outcome,
                } if !before => {
                    // One mark per run of stale (or fenced) writes of a node, not one per write:
                    // a stranded leader writes every interval for the whole split.
                    let run = &mut write_runs[i(writer)];
                    if *outcome == WriteOutcome::Ok {
                        *run = None;
                    } else if let Some(k) = run.filter(|&k| {
                        matches!(marks[k].kind, MarkKind::Write(o, t, ..) if o == *outcome && t == *token)
                    }) {
                        if let MarkKind::Write(_, _, n, last) = &mut marks[k].kind {
                            *n += 1;
                            *last = e.at;
                        }
                    } else {
                        *run = Some(marks.len());
                        marks.push(mark(
                            e.at,
                            *writer,
                            MarkKind::Write(*outcome, *token, 1, e.at),
                        ));
                    }
                }
                TraceKind::Fault(a) => {
                    if let Some(note) = fault_note(e.at, a, nodes) {
                        if before {
                            if note.heal {
                                active.clear();
                            } else if note.link_fault {
                                active.push(note.clone());
                            }
                        } else {
                            notes.push(note);
                        }
                    }
                    match a {
                        Applied::Crash(n) => {
                            if before {
                                initial[i(n)].crashed = true;
                                down_since[i(n)] = Some(from);
                            } else {
                                down_since[i(n)] = Some(e.at);
                                marks.push(mark(e.at, *n, MarkKind::Crash));
                            }
                        }
                        Applied::Pause(n, until) => {
                            if !before {
                                pause_since[i(n)] = Some(e.at);
                                marks.push(mark(e.at, *n, MarkKind::Pause(*until)));
                            } else if *until > from {
                                pause_since[i(n)] = Some(from);
                            }
                        }
                        Applied::Resume(n) => {
                            if let Some(t) = pause_since[i(n)].take() {
                                if !before {
                                    paused.push((n.0, t, e.at));
                                    marks.push(mark(e.at, *n, MarkKind::Resume));
                                }
                            }
                        }
                        Applied::Suspect(n) if !before => {
                            marks.push(mark(e.at, *n, MarkKind::Suspect));
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        // Leadership spans, from the initial state and the status marks.
        let mut leading = Vec::new();
        let mut leading_since: Vec<Option<Time>> = initial
            .iter()
            .map(|st| {
                (!st.crashed && st.status.is_some_and(|x| x.role == Role::Leader)).then_some(from)
            })
            .collect();
        for e in events {
            if e.at < from || e.at > draw_to {
                continue;
            }
            if let TraceKind::Status { node, status } = &e.what {
                let i = node.index();
                let leads = status.is_some_and(|x| x.role == Role::Leader);
                match (leading_since[i], leads) {
                    (None, true) => leading_since[i] = Some(e.at),
                    (Some(t), false) => {
                        leading.push((node.0, t, e.at));
                        leading_since[i] = None;
                    }
                    _ => {}
                }
            }
        }
        for (i, since) in leading_since.iter().enumerate() {
            if let Some(t) = since {
                leading.push((i as u32 + 1, *t, draw_to));
            }
        }
        leading.sort_by_key(|d| (d.0, d.1));
        marks.retain(|m| {
            let boot_at_start = m.kind == MarkKind::Boot && m.at == Time::ZERO;
            !(in_any(&hidden, m.at) || boot_at_start)
        });
        for (i, since) in down_since.iter().enumerate() {
            if let Some(t) = since {
                down.push((i as u32 + 1, *t, draw_to));
            }
        }
        for (i, since) in pause_since.iter().enumerate() {
            if let Some(t) = since {
                paused.push((i as u32 + 1, *t, draw_to));
            }
        }
        down.sort_by_key(|d| (d.0, d.1));
        paused.sort_by_key(|d| (d.0, d.1));
        Model {
            nodes,
            from,
            to: draw_to,
            reference,
            converged_at,
            msgs,
            marks,
            notes,
            active_at_start: active,
            initial,
            down,
            paused,
            leading,
            hidden,
            cut_notes,
        }
    }

    /// Every instant that needs a row, ascending and distinct.
    pub(crate) fn instants(&self) -> Vec<Time> {
        let mut t: Vec<Time> = Vec::new();
        t.push(self.from);
        for m in &self.msgs {
            t.push(m.sent);
            if let Some(e) = m.end() {
                t.push(e);
            }
        }
        t.extend(self.marks.iter().map(|m| m.at));
        t.extend(self.notes.iter().map(|n| n.at));
        for &(_, a, b) in self.down.iter().chain(&self.paused) {
            t.push(a);
            t.push(b);
        }
        if self.reference >= self.from && self.reference <= self.to {
            t.push(self.reference);
        }
        if let Some(c) = self.converged_at {
            if c >= self.from && c <= self.to {
                t.push(c);
            }
        }
        t.push(self.to);
        t.retain(|&x| x >= self.from && x <= self.to);
        t.sort_unstable();
        t.dedup();
        t
    }
}

fn mark(at: Time, node: NodeId, kind: MarkKind) -> Mark {
    Mark {
        at,
        node: node.0,
        kind,
    }
}

/// Where an automatic window starts: at `window_from` (a few send instants before the fault,
/// [`election_window`]) when the trial sent anything before that instant — the boot election
/// and the heartbeats after it, elided — else at the trial's start (nothing to elide).
pub(crate) fn lead_in(events: &[TraceEvent], window_from: Time) -> Time {
    let earlier = events
        .iter()
        .any(|e| e.at < window_from && matches!(e.what, TraceKind::Send(_)));
    if earlier {
        window_from
    } else {
        Time::ZERO
    }
}

/// How many distinct send instants before the reference an automatic window keeps (about a
/// couple of heartbeat rounds of every node).
pub(crate) const LEAD_IN_SENDS: usize = 4;

/// From a few instants before the reference to a few after convergence.
fn election_window(
    events: &[TraceEvent],
    reference: Time,
    converged_at: Option<Time>,
    end: Time,
) -> (Time, Time) {
    let mut sends: Vec<Time> = events
        .iter()
        .filter(|e| matches!(e.what, TraceKind::Send(_)))
        .map(|e| e.at)
        .collect();
    sends.dedup();
    let before: Vec<Time> = sends.iter().copied().filter(|&t| t < reference).collect();
    let from = before
        .len()
        .checked_sub(LEAD_IN_SENDS)
        .map(|i| before[i])
        .or_else(|| before.first().copied())
        .unwrap_or(reference);
    let to = match converged_at {
        Some(c) => {
            let after: Vec<Time> = sends.iter().copied().filter(|&t| t > c).collect();
            after.get(5).or(after.last()).copied().unwrap_or(c).min(end)
        }
        None => end,
    };
    (from.min(reference), to.max(reference))
}

/// Matches each send with its delivery or drop: per link and kind, first sent is first
/// resolved (exact for FIFO links; for reordering links it may pair two messages of the same
/// kind the other way round, which draws the same picture). A delivery with nothing pending is
/// a network duplicate of the latest send.
fn match_messages(events: &[TraceEvent], nodes: u32) -> Vec<Msg> {
    let n = nodes as usize;
    let mut msgs: Vec<Msg> = Vec::new();
    // pending[from * n + to] = indices into msgs, oldest first
    let mut pending: Vec<Vec<usize>> = vec![Vec::new(); n * n];
    let slot = |from: NodeId, to: NodeId| from.index() * n + to.index();
    for e in events {
        match &e.what {
            TraceKind::Send(m) => {
                pending[slot(m.from, m.to)].push(msgs.len());
                msgs.push(Msg {
                    sent: e.at,
                    from: m.from.0,
                    to: m.to.0,
                    kind: m.kind,
                    category: m.category,
                    fate: Fate::InFlight,
                    duplicate: false,
                });
            }
            TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
                let fate = match &e.what {
                    TraceKind::Drop(_, why) => Fate::Dropped(e.at, *why),
                    _ => Fate::Delivered(e.at),
                };
                let q = &mut pending[slot(m.from, m.to)];
                if let Some(pos) = q.iter().position(|&i| msgs[i].kind == m.kind) {
                    let i = q.remove(pos);
                    msgs[i].fate = fate;
                } else if let Some(last) = msgs
                    .iter()
                    .rposition(|x| x.from == m.from.0 && x.to == m.to.0 && x.kind == m.kind)
                {
                    let mut dup = msgs[last].clone();
                    dup.fate = fate;
                    dup.duplicate = true;
                    msgs.push(dup);
                }
            }
            _ => {}
        }
    }
    msgs.sort_by_key(|m| m.sent);
    msgs
}

fn set(ids: &[NodeId]) -> String {
    format!(
        "{{{}}}",
        ids.iter()
            .map(|i| i.0.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// Walls between adjacent lanes whose nodes end up in different groups.
fn walls_for(group_of: &[usize]) -> Vec<(u32, u32)> {
    (1..group_of.len())
        .filter(|&i| group_of[i - 1] != group_of[i])
        .map(|i| (i as u32, i as u32 + 1))
        .collect()
}

fn fault_note(at: Time, a: &Applied, nodes: u32) -> Option<Note> {
    let note = |text: String| Note {
        at,
        text,
        walls: Vec::new(),
        link_fault: false,
        heal: false,
    };
    Some(match a {
        Applied::Partition(groups) => {
            let mut group_of = vec![usize::MAX; nodes as usize];
            for (g, ids) in groups.iter().enumerate() {
                for id in ids {
                    group_of[id.index()] = g;
                }
            }
            Note {
                walls: walls_for(&group_of),
                link_fault: true,
                ..note(format!(
                    "PARTITION {}",
                    groups
                        .iter()
                        .map(|g| set(g))
                        .collect::<Vec<_>>()
                        .join(" | ")
                ))
            }
        }
        Applied::Isolate(n) => {
            let mut walls = Vec::new();
            if n.0 > 1 {
                walls.push((n.0 - 1, n.0));
            }
            if n.0 < nodes {
                walls.push((n.0, n.0 + 1));
            }
            Note {
                walls,
                link_fault: true,
                ..note(format!("ISOLATE node {}", n.0))
            }
        }
        Applied::ResourceCut(nodes) => note(format!("CUT from the resource: {}", set(nodes))),
        Applied::ClockJump(n, ms) => note(format!("CLOCK of node {} jumps {ms:+} ms", n.0)),
        Applied::ClockRate(n, ppm) => note(format!("CLOCK of node {} runs at {ppm:+} ppm", n.0)),
        Applied::CutLink { from, to } => Note {
            link_fault: true,
            ..note(format!("CUT links {} → {}", set(from), set(to)))
        },
        Applied::StaleConnection { from, to, until } => Note {
            link_fault: true,
            ..note(format!(
                "STALE connections {} → {} until {:.0} ms",
                set(from),
                set(to),
                until.as_millis_f64()
            ))
        },
        Applied::Heal => Note {
            heal: true,
            ..note("HEAL: every link up".to_string())
        },
        Applied::SetLoss(p) => note(format!("LOSS = {p}")),
        Applied::Links { pairs, up } => {
            let list = pairs
                .iter()
                .map(|(a, b)| format!("{}→{}", a.0, b.0))
                .collect::<Vec<_>>()
                .join(" ");
            if *up {
                note(format!("LINKS UP {list}"))
            } else {
                Note {
                    link_fault: true,
                    ..note(format!("LINKS DOWN {list}"))
                }
            }
        }
        Applied::LinkLoss { from, to, loss } => {
            note(format!("LOSS {loss} on links {} → {}", set(from), set(to)))
        }
        Applied::LinkDelay { from, to, ms } => note(format!(
            "DELAY +{ms} ms on links {} → {}",
            set(from),
            set(to)
        )),
        Applied::Slow(n, k, ms) => note(if *ms > 0.0 && *k != 1.0 {
            format!("SLOW node {} ×{k} and {ms} ms more per input", n.0)
        } else if *ms > 0.0 {
            format!("SLOW: node {} takes {ms} ms more per input", n.0)
        } else {
            format!("SLOW node {} ×{k}", n.0)
        }),
        Applied::Amnesia(n) => note(format!("AMNESIA: node {} loses its stable storage", n.0)),
        Applied::Handover(n) => note(format!(
            "HANDOVER: node {} is told it will be stopped on purpose",
            n.0
        )),
        Applied::Spike(n, ms) => note(if *ms > 0.0 {
            format!("SPIKE (noise): +{ms:.1} ms on node {}'s links", n.0)
        } else {
            format!("SPIKE over on node {}'s links", n.0)
        }),
        Applied::Detection { nodes, enabled } => note(format!(
            "failure detection {} on {}",
            if *enabled { "ON" } else { "OFF" },
            set(nodes)
        )),
        Applied::Skipped(why) => note(format!("fault skipped: {why}")),
        Applied::Crash(_)
        | Applied::Recover(_)
        | Applied::Pause(..)
        | Applied::Resume(_)
        | Applied::Suspect(_) => return None,
    })
}

/// A short label of a status for lifeline marks.
pub(crate) fn status_label(s: &Status) -> String {
    let epoch = s.epoch.map(|e| format!(" e{e}")).unwrap_or_default();
    match s.role {
        Role::Leader => format!("LEADER{epoch}"),
        Role::Candidate => format!("candidate{epoch}"),
        Role::Follower => match s.leader {
            Some(l) => format!("follows {}{epoch}", l.0),
            None => format!("no leader{epoch}"),
        },
    }
}

/// True for timers that fire every heartbeat period (not worth a mark).
pub(crate) fn is_routine_timer(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("heartbeat") || l.contains("tick")
}

/// The short text of a mark (empty for marks not drawn).
fn token(t: Option<u64>) -> String {
    t.map(|t| format!(" (token {t})")).unwrap_or_default()
}

pub(crate) fn mark_label(k: &MarkKind) -> String {
    match k {
        MarkKind::Status(s) => status_label(s),
        MarkKind::Crash => "CRASH".into(),
        MarkKind::Boot => "boot".into(),
        MarkKind::Recover => "RECOVER".into(),
        MarkKind::Pause(until) => format!("PAUSE until {} ms", ms(*until)),
        MarkKind::Resume => "resume".into(),
        MarkKind::Timer(t) if is_routine_timer(t) => String::new(),
        MarkKind::Timer(t) => format!("timer {t}"),
        MarkKind::Suspect => "forced suspicion".into(),
        MarkKind::DetectorSuppressed => "detector off".into(),
        MarkKind::InvalidDestination(to, kind) => format!("{kind} to nonexistent node {to}"),
        MarkKind::Write(outcome, t, n, last) => {
            let what = match outcome {
                WriteOutcome::Stale => "STALE WRITE taken",
                WriteOutcome::Fenced => "write FENCED",
                WriteOutcome::Ok => "write",
            };
            match n {
                1 => format!("{what}{}", token(*t)),
                n => format!("{what}{}, {n} in a row to {} ms", token(*t), ms(*last)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_sim::MsgInfo;

    fn at(ms: u64, what: TraceKind) -> TraceEvent {
        TraceEvent {
            at: Time::from_millis(ms),
            what,
        }
    }

    fn msg(from: u32, to: u32, kind: &'static str, category: MsgCategory) -> MsgInfo {
        MsgInfo {
            from: NodeId(from),
            to: NodeId(to),
            kind,
            category,
            bytes: 16,
        }
    }

    /// A boot election, heartbeats every 50 ms to 1000 ms, the fault at 1000 ms, then an
    /// election of three messages.
    fn long_boot() -> (Vec<TraceEvent>, TraceMeta) {
        let mut ev = Vec::new();
        for n in 1..=3 {
            ev.push(at(0, TraceKind::Boot(NodeId(n))));
        }
        let vote = msg(2, 1, "REQUEST_VOTE", MsgCategory::Election);
        ev.push(at(5, TraceKind::Send(vote)));
        ev.push(at(6, TraceKind::Deliver(vote)));
        for k in 1..20 {
            let hb = msg(3, 1, "APPEND_ENTRIES", MsgCategory::Heartbeat);
            ev.push(at(k * 50, TraceKind::Send(hb)));
            ev.push(at(k * 50 + 1, TraceKind::Deliver(hb)));
        }
        ev.push(at(1000, TraceKind::Fault(Applied::Crash(NodeId(3)))));
        let e = msg(2, 1, "REQUEST_VOTE", MsgCategory::Election);
        let v = msg(1, 2, "VOTE", MsgCategory::Reply);
        let hb = msg(2, 1, "APPEND_ENTRIES", MsgCategory::Heartbeat);
        for (t, m) in [(1200, e), (1202, v), (1204, hb)] {
            ev.push(at(t, TraceKind::Send(m)));
            ev.push(at(t + 1, TraceKind::Deliver(m)));
        }
        let mut meta = TraceMeta::new("raft", "leader-crash", "lan", 1);
        meta.reference_ms = 1000.0;
        meta.elect_ms = Some(205.0);
        (ev, meta)
    }

    #[test]
    fn an_automatic_window_starts_a_few_sends_before_the_fault() {
        let (events, meta) = long_boot();
        let m = Model::build(&events, 3, &meta);
        // The last LEAD_IN_SENDS heartbeat instants before t0: 800, 850, 900, 950 ms.
        assert_eq!(m.from, Time::from_millis(800));
        let lead = m.reference.as_millis_f64() - m.from.as_millis_f64();
        assert!(
            lead > 0.0 && lead <= (LEAD_IN_SENDS as f64) * 50.0,
            "{lead}"
        );
        assert!(
            m.msgs.iter().all(|x| x.sent >= m.from),
            "a message before the window"
        );
        // Everything after the fault stays.
        let after = m.msgs.iter().filter(|x| x.sent >= m.reference).count();
        assert_eq!(after, 3);
        assert!(
            m.cut_notes
                .iter()
                .any(|n| n.contains("boot election and steady state, 0 ms to 800.000 ms, elided")),
            "{:?}",
            m.cut_notes
        );
    }

    #[test]
    fn a_trial_with_nothing_before_the_lead_in_is_drawn_from_its_start() {
        let (events, meta) = long_boot();
        // Drop every send before 900 ms: nothing to elide, the chart starts at 0.
        let events: Vec<TraceEvent> = events
            .into_iter()
            .filter(|e| {
                e.at >= Time::from_millis(900)
                    || !matches!(e.what, TraceKind::Send(_) | TraceKind::Deliver(_))
            })
            .collect();
        let m = Model::build(&events, 3, &meta);
        assert_eq!(m.from, Time::ZERO);
        assert!(!m.cut_notes.iter().any(|n| n.contains("boot election")));
    }
}
