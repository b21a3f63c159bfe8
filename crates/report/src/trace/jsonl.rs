//! The raw event log as JSON lines: a `meta` line, then one line per [`TraceEvent`], keys in a
//! fixed order, times in milliseconds (the shortest decimal that reads back as the same
//! `f64`, so nanoseconds survive), built as `serde_json` values, never by hand.

use election_core::{NodeId, Time};
use election_sim::{Applied, TraceEvent, TraceKind};
use serde_json::{json, Map, Value};

use super::TraceMeta;

fn t(at: Time) -> Value {
    json!(at.as_millis_f64())
}

fn ids(v: &[NodeId]) -> Value {
    v.iter().map(|i| i.0).collect()
}

/// One JSON object, compact, newline included. Key order is insertion order (serde_json's
/// `preserve_order`), so every line reads `t_ms` / `event` first.
fn line(v: Value) -> String {
    let mut s = serde_json::to_string(&v).expect("JSON values serialize");
    s.push('\n');
    s
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
    // Non-finite numbers become null (serde_json's rule for f64).
    line(json!({
        "event": "meta",
        "protocol": meta.protocol,
        "scenario": meta.scenario,
        "net": meta.net,
        "nodes": nodes,
        "seed": meta.seed,
        "reference_ms": meta.reference_ms,
        "elect_ms": meta.elect_ms,
        "leader": meta.leader,
    }))
}

/// One event's line, newline included.
pub(super) fn event_line(e: &TraceEvent) -> String {
    let mut o = Map::new();
    o.insert("t_ms".into(), t(e.at));
    let mut put = |k: &str, v: Value| {
        o.insert(k.into(), v);
    };
    match &e.what {
        TraceKind::Boot(n) => {
            put("event", json!("boot"));
            put("node", json!(n.0));
        }
        TraceKind::Send(m) | TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
            let ev = match &e.what {
                TraceKind::Send(_) => "send",
                TraceKind::Deliver(_) => "deliver",
                _ => "drop",
            };
            put("event", json!(ev));
            put("from", json!(m.from.0));
            put("to", json!(m.to.0));
            put("kind", json!(m.kind));
            put("category", json!(m.category.name()));
            put("bytes", json!(m.bytes));
            if let TraceKind::Drop(_, why) = &e.what {
                put("reason", json!(why.name()));
            }
        }
        TraceKind::InvalidDestination { from, to, kind } => {
            put("event", json!("invalid_destination"));
            put("from", json!(from.0));
            put("to", json!(to));
            put("kind", json!(kind));
        }
        TraceKind::Timer { node, timer } => {
            put("event", json!("timer"));
            put("node", json!(node.0));
            put("timer", json!(timer));
        }
        TraceKind::DetectorSuppressed(n) => {
            put("event", json!("detector_suppressed"));
            put("node", json!(n.0));
        }
        TraceKind::Status { node, status } => {
            put("event", json!("status"));
            put("node", json!(node.0));
            match status {
                Some(st) => {
                    put("role", json!(st.role.name()));
                    put("leader", json!(st.leader.map(|l| l.0)));
                    put("epoch", json!(st.epoch));
                }
                None => put("role", json!("crashed")),
            }
        }
        TraceKind::QuorumLeader(l) => {
            put("event", json!("quorum_leader"));
            put("node", json!(l.map(|l| l.0)));
        }
        TraceKind::Write {
            writer,
            token,
            outcome,
        } => {
            put("event", json!("write"));
            put("writer", json!(writer.0));
            put("token", json!(token));
            put("outcome", json!(outcome.name()));
        }
        TraceKind::Fault(a) => {
            put("event", json!("fault"));
            let (fault, rest): (&str, Vec<(&str, Value)>) = match a {
                Applied::Crash(n) => ("crash", vec![("node", json!(n.0))]),
                Applied::Recover(n) => ("recover", vec![("node", json!(n.0))]),
                Applied::Pause(n, until) => {
                    ("pause", vec![("node", json!(n.0)), ("until_ms", t(*until))])
                }
                Applied::Resume(n) => ("resume", vec![("node", json!(n.0))]),
                Applied::Partition(g) => (
                    "partition",
                    vec![("groups", g.iter().map(|g| ids(g)).collect())],
                ),
                Applied::CutLink { from, to } => {
                    ("cut_link", vec![("from", ids(from)), ("to", ids(to))])
                }
                Applied::StaleConnection { from, to, until } => (
                    "stale_connection",
                    vec![
                        ("from", ids(from)),
                        ("to", ids(to)),
                        ("until_ms", t(*until)),
                    ],
                ),
                Applied::Isolate(n) => ("isolate", vec![("node", json!(n.0))]),
                Applied::Heal => ("heal", vec![]),
                Applied::SetLoss(p) => ("set_loss", vec![("loss", json!(p))]),
                Applied::Suspect(n) => ("suspect", vec![("node", json!(n.0))]),
                Applied::Handover(n) => ("handover", vec![("node", json!(n.0))]),
                Applied::Detection { nodes, enabled } => (
                    "detection",
                    vec![("nodes", ids(nodes)), ("enabled", json!(enabled))],
                ),
                Applied::Skipped(why) => ("skipped", vec![("reason", json!(why))]),
                Applied::ClockJump(n, ms) => {
                    ("clock_jump", vec![("node", json!(n.0)), ("ms", json!(ms))])
                }
                Applied::ClockRate(n, ppm) => (
                    "clock_rate",
                    vec![("node", json!(n.0)), ("ppm", json!(ppm))],
                ),
                Applied::Slow(n, k, ms) => (
                    "slow",
                    vec![
                        ("node", json!(n.0)),
                        ("factor", json!(k)),
                        ("ms", json!(ms)),
                    ],
                ),
                Applied::Links { pairs, up } => (
                    "links",
                    vec![
                        ("up", json!(up)),
                        (
                            "pairs",
                            json!(pairs.iter().map(|(a, b)| [a.0, b.0]).collect::<Vec<_>>()),
                        ),
                    ],
                ),
                Applied::LinkLoss { from, to, loss } => (
                    "link_loss",
                    vec![("from", ids(from)), ("to", ids(to)), ("loss", json!(loss))],
                ),
                Applied::LinkDelay { from, to, ms } => (
                    "link_delay",
                    vec![("from", ids(from)), ("to", ids(to)), ("ms", json!(ms))],
                ),
                Applied::Amnesia(n) => ("amnesia", vec![("node", json!(n.0))]),
                Applied::Spike(n, ms) => ("spike", vec![("node", json!(n.0)), ("ms", json!(ms))]),
                Applied::ResourceCut(nodes) => ("cut_resource", vec![("nodes", ids(nodes))]),
            };
            put("fault", json!(fault));
            for (k, v) in rest {
                put(k, v);
            }
        }
    }
    line(Value::Object(o))
}
