//! The raw event log as JSON lines: a `meta` line, then one line per [`TraceEvent`], keys in a
//! fixed order, times in milliseconds with nanosecond precision.

use std::fmt::Write as _;

use election_core::{NodeId, Time};
use election_sim::{Applied, TraceEvent, TraceKind};

use super::TraceMeta;

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn t(at: Time) -> String {
    format!("{:.6}", at.as_millis_f64())
}

fn ids(v: &[NodeId]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|i| i.0.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "null".into())
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

pub(super) fn render(events: &[TraceEvent], nodes: u32, meta: &TraceMeta) -> String {
    let mut s = meta_line(nodes, meta);
    for e in events {
        s.push_str(&event_line(e));
    }
    s
}

/// The `meta` line, newline included.
pub(super) fn meta_line(nodes: u32, meta: &TraceMeta) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"event":"meta","protocol":{},"scenario":{},"net":{},"nodes":{nodes},"seed":{},"reference_ms":{},"elect_ms":{},"leader":{}}}"#,
        q(&meta.protocol),
        q(&meta.scenario),
        q(&meta.net),
        meta.seed,
        num(meta.reference_ms),
        meta.elect_ms.map(num).unwrap_or_else(|| "null".into()),
        opt(meta.leader)
    );
    s
}

/// One event's line, newline included.
pub(super) fn event_line(e: &TraceEvent) -> String {
    {
        let at = t(e.at);
        let body = match &e.what {
            TraceKind::Boot(n) => format!(r#""event":"boot","node":{}"#, n.0),
            TraceKind::Send(m) | TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
                let (ev, reason) = match &e.what {
                    TraceKind::Send(_) => ("send", String::new()),
                    TraceKind::Deliver(_) => ("deliver", String::new()),
                    TraceKind::Drop(_, why) => ("drop", format!(r#","reason":{}"#, q(why.name()))),
                    _ => unreachable!(),
                };
                format!(
                    r#""event":"{ev}","from":{},"to":{},"kind":{},"category":{},"bytes":{}{reason}"#,
                    m.from.0,
                    m.to.0,
                    q(m.kind),
                    q(m.category.name()),
                    m.bytes
                )
            }
            TraceKind::InvalidDestination { from, to, kind } => format!(
                r#""event":"invalid_destination","from":{},"to":{to},"kind":{}"#,
                from.0,
                q(kind)
            ),
            TraceKind::Timer { node, timer } => {
                format!(r#""event":"timer","node":{},"timer":{}"#, node.0, q(timer))
            }
            TraceKind::DetectorSuppressed(n) => {
                format!(r#""event":"detector_suppressed","node":{}"#, n.0)
            }
            TraceKind::Status { node, status } => match status {
                Some(st) => format!(
                    r#""event":"status","node":{},"role":{},"leader":{},"epoch":{}"#,
                    node.0,
                    q(st.role.name()),
                    opt(st.leader.map(|l| l.0)),
                    opt(st.epoch)
                ),
                None => format!(r#""event":"status","node":{},"role":"crashed""#, node.0),
            },
            TraceKind::Write {
                writer,
                token,
                outcome,
            } => format!(
                r#""event":"write","writer":{},"token":{},"outcome":{}"#,
                writer.0,
                opt(*token),
                q(outcome.name())
            ),
            TraceKind::Fault(a) => {
                let f = match a {
                    Applied::Crash(n) => format!(r#""fault":"crash","node":{}"#, n.0),
                    Applied::Recover(n) => format!(r#""fault":"recover","node":{}"#, n.0),
                    Applied::Pause(n, until) => {
                        format!(r#""fault":"pause","node":{},"until_ms":{}"#, n.0, t(*until))
                    }
                    Applied::Resume(n) => format!(r#""fault":"resume","node":{}"#, n.0),
                    Applied::Partition(g) => format!(
                        r#""fault":"partition","groups":[{}]"#,
                        g.iter().map(|g| ids(g)).collect::<Vec<_>>().join(",")
                    ),
                    Applied::CutLink { from, to } => format!(
                        r#""fault":"cut_link","from":{},"to":{}"#,
                        ids(from),
                        ids(to)
                    ),
                    Applied::Isolate(n) => format!(r#""fault":"isolate","node":{}"#, n.0),
                    Applied::Heal => r#""fault":"heal""#.to_string(),
                    Applied::SetLoss(p) => format!(r#""fault":"set_loss","loss":{}"#, num(*p)),
                    Applied::Suspect(n) => format!(r#""fault":"suspect","node":{}"#, n.0),
                    Applied::Detection { nodes, enabled } => format!(
                        r#""fault":"detection","nodes":{},"enabled":{enabled}"#,
                        ids(nodes)
                    ),
                    Applied::Skipped(why) => format!(r#""fault":"skipped","reason":{}"#, q(why)),
                    Applied::ClockJump(n, ms) => {
                        format!(r#""fault":"clock_jump","node":{},"ms":{}"#, n.0, num(*ms))
                    }
                    Applied::ClockRate(n, ppm) => {
                        format!(r#""fault":"clock_rate","node":{},"ppm":{}"#, n.0, num(*ppm))
                    }
                    Applied::ResourceCut(nodes) => {
                        format!(r#""fault":"cut_resource","nodes":{}"#, ids(nodes))
                    }
                    Applied::Links { pairs, up } => format!(
                        r#""fault":"links","up":{up},"pairs":[{}]"#,
                        pairs
                            .iter()
                            .map(|(a, b)| format!("[{},{}]", a.0, b.0))
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                    Applied::LinkLoss { from, to, loss } => format!(
                        r#""fault":"link_loss","from":{},"to":{},"loss":{}"#,
                        ids(from),
                        ids(to),
                        num(*loss)
                    ),
                    Applied::LinkDelay { from, to, ms } => format!(
                        r#""fault":"link_delay","from":{},"to":{},"ms":{}"#,
                        ids(from),
                        ids(to),
                        num(*ms)
                    ),
                    Applied::Slow(n, k) => {
                        format!(r#""fault":"slow","node":{},"factor":{}"#, n.0, num(*k))
                    }
                    Applied::Amnesia(n) => format!(r#""fault":"amnesia","node":{}"#, n.0),
                };
                format!(r#""event":"fault",{f}"#)
            }
        };
        format!("{{\"t_ms\":{at},{body}}}\n")
    }
}
