//! One trial over time, the way Maelstrom and Jepsen draw a run: which node leads (and with
//! which epoch), whether the cluster has a quorum leader, and what became of the workload's
//! writes (ok, stale, fenced), along one simulated-time axis with the fault windows shaded.
//! The report draws it next to the message-sequence chart of the same trial.
//!
//! Nothing here is estimated: the [`Timeline`] is read off the trial's own event log, the one
//! the message-sequence chart is drawn from. Leadership comes from the nodes' status events;
//! the quorum leader from the observer's [`TraceKind::QuorumLeader`] records, the same
//! incremental state `failover_ms` and `unavailable_ms` are measured with (so the gaps of the
//! quorum row after the reference instant add up to the trial's `unavailable_ms`); writes from
//! the workload's [`TraceKind::Write`] records; fault windows from the fault records, named in
//! the sequence chart's words: a crash lasts until the node boots again, a pause until it
//! resumes, a link fault (partition, isolation, cut or downed links) until the next heal.

use std::error::Error;

use election_core::{NodeId, Role, Time};
use election_sim::observer::WriteOutcome;
use election_sim::{Applied, TraceEvent, TraceKind};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{fault_note, TraceMeta};
use crate::charts::{frame, rgb, text_style, title_style, Chart, DrawResult, Swatch};
use crate::palette;

/// A span of simulated time, `[from, to)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub from: Time,
    /// End.
    pub to: Time,
}

impl Span {
    /// Its length in milliseconds.
    pub fn ms(&self) -> f64 {
        self.to.as_millis_f64() - self.from.as_millis_f64()
    }
}

/// A member in the leader role, without a break and with one epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leading {
    /// Who.
    pub node: NodeId,
    /// The epoch (term) it led with, for protocols that have one.
    pub epoch: Option<u64>,
    /// When.
    pub span: Span,
}

/// A shaded fault window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultWindow {
    /// The node it applies to (`None`: the network, drawn across every row).
    pub node: Option<NodeId>,
    /// `crashed`, `paused`, or the link fault in the sequence chart's words
    /// (`PARTITION {1, 2} | {3, 4, 5}`).
    pub label: String,
    /// When.
    pub span: Span,
}

/// One write of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// When it was taken (or fenced).
    pub at: Time,
    /// Who sent it.
    pub writer: NodeId,
    /// What became of it.
    pub outcome: WriteOutcome,
}

/// A trial over time (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Members.
    pub nodes: u32,
    /// The end of the trial.
    pub end: Time,
    /// The reference instant.
    pub reference: Time,
    /// When the final followed-by-all leadership began (`elect_ms`), if it did.
    pub converged: Option<Time>,
    /// Every stretch of a member in the leader role, in the order they began.
    pub leading: Vec<Leading>,
    /// The quorum leader from the start to the end, as consecutive spans (`None`: no quorum
    /// leader).
    pub quorum: Vec<(Span, Option<NodeId>)>,
    /// Crashes, pauses and link faults, in the order they began.
    pub faults: Vec<FaultWindow>,
    /// Faults that are an instant rather than a window (a clock jump, a slowed node, loss set
    /// on a link), with the sequence chart's words for them.
    pub marks: Vec<(Time, String)>,
    /// The workload's writes, in order.
    pub writes: Vec<Write>,
    /// Whether the trial ran a workload (the write rows are drawn even when empty).
    pub workload: bool,
}

impl Timeline {
    /// Reads a trial's event log (`nodes` members; service endpoints such as the lease's store
    /// are not drawn) up to `end_ms`, the end of the trial.
    pub fn build(events: &[TraceEvent], nodes: u32, meta: &TraceMeta, end_ms: f64) -> Timeline {
        let last = events.last().map_or(Time::ZERO, |e| e.at);
        let end = super::ms_to_time(end_ms).max(last);
        let n = nodes as usize;
        let member = |id: NodeId| id.0 >= 1 && id.0 <= nodes;
        let mut leading = Vec::new();
        let mut open: Vec<Option<(Option<u64>, Time)>> = vec![None; n];
        let mut quorum: Vec<(Span, Option<NodeId>)> = Vec::new();
        let mut q_since = Time::ZERO;
        let mut q_now: Option<NodeId> = None;
        let mut faults = Vec::new();
        let mut marks = Vec::new();
        let mut down: Vec<Option<Time>> = vec![None; n];
        let mut paused: Vec<Option<Time>> = vec![None; n];
        let mut link: Option<(Time, String)> = None;
        let mut writes = Vec::new();
        for e in events {
            match &e.what {
                TraceKind::Status { node, status } if member(*node) => {
                    let i = node.index();
                    match status {
                        Some(st) if st.role == Role::Leader => {
                            if !matches!(open[i], Some((ep, _)) if ep == st.epoch) {
                                end_lead(&mut leading, &mut open[i], *node, e.at);
                                open[i] = Some((st.epoch, e.at));
                            }
                        }
                        _ => end_lead(&mut leading, &mut open[i], *node, e.at),
                    }
                }
                TraceKind::QuorumLeader(l) if *l != q_now => {
                    if e.at > q_since {
                        quorum.push((
                            Span {
                                from: q_since,
                                to: e.at,
                            },
                            q_now,
                        ));
                    }
                    q_since = e.at;
                    q_now = *l;
                }
                TraceKind::Boot(id) if member(*id) => {
                    if let Some(from) = down[id.index()].take() {
                        faults.push(FaultWindow {
                            node: Some(*id),
                            label: "crashed".to_string(),
                            span: Span { from, to: e.at },
                        });
                    }
                }
                TraceKind::Write {
                    writer, outcome, ..
                } => writes.push(Write {
                    at: e.at,
                    writer: *writer,
                    outcome: *outcome,
                }),
                TraceKind::Fault(a) => match a {
                    Applied::Crash(id) if member(*id) => {
                        down[id.index()].get_or_insert(e.at);
                    }
                    Applied::Pause(id, _) if member(*id) => {
                        paused[id.index()].get_or_insert(e.at);
                    }
                    Applied::Resume(id) if member(*id) => {
                        if let Some(from) = paused[id.index()].take() {
                            faults.push(FaultWindow {
                                node: Some(*id),
                                label: "paused".to_string(),
                                span: Span { from, to: e.at },
                            });
                        }
                    }
                    // Recovery is drawn where the node boots; a skipped action changed nothing.
                    Applied::Recover(_) | Applied::Skipped(_) => {}
                    other => {
                        if let Some(note) = fault_note(e.at, other, nodes) {
                            if note.heal {
                                if let Some((from, label)) = link.take() {
                                    faults.push(FaultWindow {
                                        node: None,
                                        label,
                                        span: Span { from, to: e.at },
                                    });
                                }
                            } else if note.link_fault {
                                // Link faults accumulate until the heal: one window, named
                                // by the first.
                                link.get_or_insert((e.at, note.text));
                            } else {
                                marks.push((e.at, note.text));
                            }
                        }
                    }
                },
                _ => {}
            }
        }
        for i in 0..n {
            end_lead(&mut leading, &mut open[i], NodeId::from_index(i), end);
            if let Some(from) = down[i].take() {
                faults.push(FaultWindow {
                    node: Some(NodeId::from_index(i)),
                    label: "crashed".to_string(),
                    span: Span { from, to: end },
                });
            }
            if let Some(from) = paused[i].take() {
                faults.push(FaultWindow {
                    node: Some(NodeId::from_index(i)),
                    label: "paused".to_string(),
                    span: Span { from, to: end },
                });
            }
        }
        if let Some((from, label)) = link.take() {
            faults.push(FaultWindow {
                node: None,
                label,
                span: Span { from, to: end },
            });
        }
        if end > q_since {
            quorum.push((
                Span {
                    from: q_since,
                    to: end,
                },
                q_now,
            ));
        }
        leading.sort_by_key(|l| (l.span.from, l.node));
        faults.sort_by_key(|f| (f.span.from, f.node));
        Timeline {
            nodes,
            end,
            reference: super::ms_to_time(meta.reference_ms),
            converged: meta.converged_at(),
            leading,
            quorum,
            faults,
            marks,
            writes,
            workload: meta.writes.is_some(),
        }
    }

    /// Milliseconds from the reference instant to the end without a quorum leader: the
    /// trial's `unavailable_ms`, read off the quorum row.
    pub fn unavailable_ms(&self) -> f64 {
        self.quorum
            .iter()
            .filter(|(_, l)| l.is_none())
            .map(|(s, _)| {
                let from = s.from.max(self.reference);
                if s.to > from {
                    s.to.as_millis_f64() - from.as_millis_f64()
                } else {
                    0.0
                }
            })
            .sum()
    }

    /// Writes with this outcome taken at or after the reference instant (the trial's
    /// `writes_ok`, `writes_stale`, `writes_fenced`).
    pub fn writes_after_reference(&self, outcome: WriteOutcome) -> u64 {
        self.writes
            .iter()
            .filter(|w| w.outcome == outcome && w.at >= self.reference)
            .count() as u64
    }
}

/// Closes `node`'s open stretch in the leader role, if any, at `at`.
fn end_lead(
    leading: &mut Vec<Leading>,
    open: &mut Option<(Option<u64>, Time)>,
    node: NodeId,
    at: Time,
) {
    if let Some((epoch, from)) = open.take() {
        leading.push(Leading {
            node,
            epoch,
            span: Span { from, to: at },
        });
    }
}

/// A [`Timeline`] as a chart (SVG and PNG through [`crate::charts::write_chart`]).
pub struct TimelineChart<'a> {
    /// The data.
    pub timeline: &'a Timeline,
    /// The title (protocol, scenario, size, seed).
    pub title: String,
}

const WIDTH: u32 = 1400;
const LABEL_W: i32 = 150;
const ROW_H: i32 = 30;
const MARKS_H: i32 = 46;
const AXIS_H: i32 = 62;

const QUORUM: RGBColor = RGBColor(44, 160, 44);
const NO_QUORUM: RGBColor = RGBColor(250, 200, 200);
const CRASHED: RGBColor = RGBColor(90, 90, 90);
const PAUSED: RGBColor = RGBColor(200, 200, 200);
const LINK_FAULT: RGBColor = RGBColor(255, 228, 196);
const FAULT_LINE: RGBColor = RGBColor(214, 39, 40);
const CONVERGED: RGBColor = RGBColor(44, 160, 44);
const WRITE_OK: RGBColor = RGBColor(44, 160, 44);
const WRITE_STALE: RGBColor = RGBColor(214, 39, 40);
const WRITE_FENCED: RGBColor = RGBColor(255, 127, 14);

/// A tick step of 1, 2 or 5 times a power of ten giving at most `max` ticks over `range`.
fn tick_step(range: f64, max: f64) -> f64 {
    let raw = (range / max).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

impl Timeline {
    fn rows(&self) -> Vec<String> {
        let mut rows: Vec<String> = (1..=self.nodes).map(|i| format!("node {i}")).collect();
        rows.push("quorum leader".to_string());
        if self.workload || !self.writes.is_empty() {
            for o in [WriteOutcome::Ok, WriteOutcome::Stale, WriteOutcome::Fenced] {
                rows.push(format!("writes {}", o.name()));
            }
        }
        rows
    }
}

impl Chart for TimelineChart<'_> {
    fn size(&self) -> (u32, u32) {
        let legend = 2 * 28 + 8;
        let h = 66 + legend + MARKS_H + self.timeline.rows().len() as i32 * ROW_H + AXIS_H + 20;
        (WIDTH, h as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let t = self.timeline;
        let legend = [
            (
                "leader (colour: epoch)".to_string(),
                rgb(palette::epoch_colour(None)),
            ),
            ("quorum leader".to_string(), QUORUM),
            ("no quorum leader".to_string(), NO_QUORUM),
            ("crashed".to_string(), CRASHED),
            ("paused".to_string(), PAUSED),
            ("link fault".to_string(), LINK_FAULT),
            ("write ok".to_string(), WRITE_OK),
            ("write stale".to_string(), WRITE_STALE),
            ("write fenced".to_string(), WRITE_FENCED),
        ];
        let panel = frame(
            root,
            &self.title,
            "Leaders, quorum availability and writes over simulated time; fault windows shaded",
            &legend,
            Swatch::Bar,
        )?;
        let (w, _) = panel.dim_in_pixel();
        let rows = t.rows();
        let x0 = LABEL_W;
        let x1 = w as i32 - 24;
        let end_ms = t.end.as_millis_f64().max(1e-6);
        let px = |at: Time| x0 + ((at.as_millis_f64() / end_ms) * (x1 - x0) as f64).round() as i32;
        let top = MARKS_H;
        let row_y = |r: usize| top + r as i32 * ROW_H;
        let bottom = row_y(rows.len());
        let small = text_style(15);
        let tiny = text_style(13);

        // Network fault windows across every row, then the rows' frames and labels.
        for f in t.faults.iter().filter(|f| f.node.is_none()) {
            panel.draw(&Rectangle::new(
                [
                    (px(f.span.from), top),
                    (px(f.span.to).max(px(f.span.from) + 1), bottom),
                ],
                LINK_FAULT.filled(),
            ))?;
        }
        for (r, name) in rows.iter().enumerate() {
            let y = row_y(r);
            panel.draw(&PathElement::new(
                vec![(x0, y + ROW_H), (x1, y + ROW_H)],
                RGBColor(225, 225, 225).stroke_width(1),
            ))?;
            panel.draw(&Text::new(
                name.as_str(),
                (x0 - 10, y + ROW_H / 2),
                small.clone().pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        let label_in = |s: &str, a: i32, b: i32, y: i32, colour: &RGBColor| -> DrawResult {
            let (tw, _) = panel.estimate_text_size(s, &tiny)?;
            if (b - a) > tw as i32 + 6 {
                panel.draw(&Text::new(
                    s.to_string(),
                    ((a + b) / 2, y + ROW_H / 2),
                    tiny.clone()
                        .color(colour)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
            Ok(())
        };
        // Crashes and pauses fill their node's row; leadership is a bar on top.
        for f in &t.faults {
            let Some(node) = f.node else { continue };
            let y = row_y(node.index());
            let (a, b) = (px(f.span.from), px(f.span.to).max(px(f.span.from) + 1));
            let colour = if f.label == "crashed" {
                CRASHED
            } else {
                PAUSED
            };
            panel.draw(&Rectangle::new(
                [(a, y + 2), (b, y + ROW_H - 2)],
                colour.filled(),
            ))?;
            let ink = if f.label == "crashed" { WHITE } else { BLACK };
            label_in(&f.label, a, b, y, &ink)?;
        }
        for l in &t.leading {
            let y = row_y(l.node.index());
            let (a, b) = (px(l.span.from), px(l.span.to).max(px(l.span.from) + 2));
            panel.draw(&Rectangle::new(
                [(a, y + 6), (b, y + ROW_H - 6)],
                rgb(palette::epoch_colour(l.epoch)).filled(),
            ))?;
            let s = l
                .epoch
                .map_or("leader".to_string(), |e| format!("epoch {e}"));
            label_in(&s, a, b, y, &WHITE)?;
        }
        // The quorum row.
        let qy = row_y(t.nodes as usize);
        for (s, l) in &t.quorum {
            let (a, b) = (px(s.from), px(s.to).max(px(s.from) + 1));
            let colour = if l.is_some() { QUORUM } else { NO_QUORUM };
            panel.draw(&Rectangle::new(
                [(a, qy + 4), (b, qy + ROW_H - 4)],
                colour.filled(),
            ))?;
            let s = l.map_or("none".to_string(), |l| format!("node {}", l.0));
            let ink = if l.is_some() { WHITE } else { BLACK };
            label_in(&s, a, b, qy, &ink)?;
        }
        // Writes: a tick each; ticks closer than a pixel merge into one bar.
        if rows.len() > t.nodes as usize + 1 {
            for (k, (o, colour)) in [
                (WriteOutcome::Ok, WRITE_OK),
                (WriteOutcome::Stale, WRITE_STALE),
                (WriteOutcome::Fenced, WRITE_FENCED),
            ]
            .into_iter()
            .enumerate()
            {
                let y = row_y(t.nodes as usize + 1 + k);
                let mut runs: Vec<(i32, i32)> = Vec::new();
                for wr in t.writes.iter().filter(|w| w.outcome == o) {
                    let x = px(wr.at);
                    match runs.last_mut() {
                        Some(r) if x <= r.1 + 2 => r.1 = x.max(r.1),
                        _ => runs.push((x, x)),
                    }
                }
                for (a, b) in runs {
                    panel.draw(&Rectangle::new(
                        [(a - 1, y + 5), (b + 1, y + ROW_H - 5)],
                        colour.filled(),
                    ))?;
                }
                let count = t.writes.iter().filter(|w| w.outcome == o).count();
                panel.draw(&Text::new(
                    format!("{count}"),
                    (x1 + 4, y + ROW_H / 2),
                    tiny.clone().pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
        }
        // Instants: the reference (the fault), convergence, and the faults that are instants.
        // Labels sit above the rows on two lines and are left out where they would overlap.
        let mut lines: [i32; 2] = [i32::MIN, i32::MIN];
        let mut label_top = |at: Time, s: &str, colour: RGBColor| -> Result<(), Box<dyn Error>> {
            let x = px(at);
            let tw = panel.estimate_text_size(s, &tiny)?.0 as i32;
            // Right of its line, or left of it where the right edge would cut it.
            let (left, anchor, hpos) = if x + 3 + tw > w as i32 - 2 {
                (x - 3 - tw, x - 3, HPos::Right)
            } else {
                (x + 3, x + 3, HPos::Left)
            };
            if let Some(k) = (0..2).find(|&k| left > lines[k] + 6) {
                panel.draw(&Text::new(
                    s.to_string(),
                    (anchor, 4 + k as i32 * 18),
                    tiny.clone().color(&colour).pos(Pos::new(hpos, VPos::Top)),
                ))?;
                lines[k] = left + tw;
            }
            Ok(())
        };
        let mut instants: Vec<(Time, String, RGBColor)> = Vec::new();
        if t.reference > Time::ZERO {
            instants.push((t.reference, "t0 (fault)".to_string(), FAULT_LINE));
        }
        for f in t.faults.iter().filter(|f| f.node.is_none()) {
            instants.push((f.span.from, f.label.clone(), FAULT_LINE));
        }
        for (at, s) in &t.marks {
            instants.push((*at, s.clone(), FAULT_LINE));
        }
        if let Some(c) = t.converged {
            instants.push((c, "converged".to_string(), CONVERGED));
        }
        instants.sort_by_key(|i| i.0);
        for (at, s, colour) in &instants {
            let x = px(*at);
            panel.draw(&PathElement::new(
                vec![(x, top - 8), (x, bottom)],
                colour.stroke_width(2),
            ))?;
            label_top(*at, s, *colour)?;
        }
        // The time axis.
        panel.draw(&PathElement::new(
            vec![(x0, bottom), (x1, bottom)],
            BLACK.stroke_width(1),
        ))?;
        let step = tick_step(end_ms, 12.0);
        let mut v = 0.0;
        while v <= end_ms + 1e-9 {
            let x = x0 + ((v / end_ms) * (x1 - x0) as f64).round() as i32;
            panel.draw(&PathElement::new(
                vec![(x, bottom), (x, bottom + 6)],
                BLACK.stroke_width(1),
            ))?;
            panel.draw(&Text::new(
                crate::charts::compact(v),
                (x, bottom + 9),
                small.clone().pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
            v += step;
        }
        panel.draw(&Text::new(
            "simulated time since the trial's start (ms)",
            ((x0 + x1) / 2, bottom + 34),
            title_style(16).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_core::Status;

    fn ev(ms: u64, what: TraceKind) -> TraceEvent {
        TraceEvent {
            at: Time(ms * 1_000_000),
            what,
        }
    }

    fn leader(node: u32, epoch: u64) -> TraceKind {
        TraceKind::Status {
            node: NodeId(node),
            status: Some(Status {
                role: Role::Leader,
                leader: Some(NodeId(node)),
                epoch: Some(epoch),
            }),
        }
    }

    /// A leader crashes at 100 ms, node 2 takes over at 250 ms: the leader row, the quorum
    /// row's gap (the unavailability) and the crash window come from the events alone.
    #[test]
    fn crash_and_takeover() {
        let events = vec![
            ev(10, leader(3, 1)),
            ev(10, TraceKind::QuorumLeader(Some(NodeId(3)))),
            ev(100, TraceKind::Fault(Applied::Crash(NodeId(3)))),
            ev(
                100,
                TraceKind::Status {
                    node: NodeId(3),
                    status: None,
                },
            ),
            ev(100, TraceKind::QuorumLeader(None)),
            ev(250, leader(2, 2)),
            ev(250, TraceKind::QuorumLeader(Some(NodeId(2)))),
            ev(
                300,
                TraceKind::Write {
                    writer: NodeId(2),
                    token: Some(2),
                    outcome: WriteOutcome::Ok,
                },
            ),
        ];
        let meta = TraceMeta {
            reference_ms: 100.0,
            elect_ms: Some(150.0),
            writes: Some((1, 0, 0)),
            ..TraceMeta::new("bully", "leader-crash", "lan", 1)
        };
        let t = Timeline::build(&events, 3, &meta, 400.0);
        let spans: Vec<(u32, Option<u64>, f64, f64)> = t
            .leading
            .iter()
            .map(|l| {
                (
                    l.node.0,
                    l.epoch,
                    l.span.from.as_millis_f64(),
                    l.span.to.as_millis_f64(),
                )
            })
            .collect();
        assert_eq!(
            spans,
            vec![(3, Some(1), 10.0, 100.0), (2, Some(2), 250.0, 400.0)]
        );
        assert_eq!(t.unavailable_ms(), 150.0);
        assert_eq!(
            t.quorum.len(),
            4,
            "none, node 3, none, node 2: {:?}",
            t.quorum
        );
        assert_eq!(t.faults.len(), 1);
        assert_eq!(t.faults[0].label, "crashed");
        assert_eq!(
            t.faults[0].span.ms(),
            300.0,
            "never booted again: to the end"
        );
        assert_eq!(t.writes_after_reference(WriteOutcome::Ok), 1);
        assert_eq!(t.converged, Some(Time(250_000_000)));
    }

    /// A partition is one shaded window until the heal, named as the sequence chart names it;
    /// a new epoch of the same leader starts a new bar.
    #[test]
    fn partition_window_and_epochs() {
        let events = vec![
            ev(10, leader(1, 1)),
            ev(
                50,
                TraceKind::Fault(Applied::Partition(vec![
                    vec![NodeId(1)],
                    vec![NodeId(2), NodeId(3)],
                ])),
            ),
            ev(60, leader(1, 2)),
            ev(90, TraceKind::Fault(Applied::Heal)),
        ];
        let t = Timeline::build(&events, 3, &TraceMeta::new("raft", "p", "lan", 0), 100.0);
        assert_eq!(t.faults.len(), 1);
        assert_eq!(t.faults[0].node, None);
        assert!(
            t.faults[0].label.starts_with("PARTITION"),
            "{}",
            t.faults[0].label
        );
        assert_eq!(t.faults[0].span.ms(), 40.0);
        assert_eq!(t.leading.len(), 2);
        assert_eq!(t.leading[1].epoch, Some(2));
        assert!(t.marks.is_empty());
        // No quorum-leader record at all: no quorum leader from start to end.
        assert_eq!(t.quorum.len(), 1);
        assert_eq!(t.unavailable_ms(), 100.0);
    }

    #[test]
    fn ticks_are_one_two_five() {
        assert_eq!(tick_step(1800.0, 12.0), 200.0);
        assert_eq!(tick_step(100.0, 12.0), 10.0);
        assert_eq!(tick_step(5000.0, 12.0), 500.0);
    }
}
