//! One event per line for a person reading a terminal (`election-bench run --trace`): the
//! time, then the JSON-lines vocabulary ([`super::jsonl`]) — the same event and field names —
//! as words and arrows instead of objects.
//!
//! ```text
//!     412.118 ms  send      3 → 5  ELECTION (election, 24 B)
//!     413.020 ms  drop      3 → 4  ELECTION (election): loss
//!     560.400 ms  status    node 5  leader, leader 5, epoch 2
//!     560.400 ms  fault     crash node 5
//! ```

use election_core::NodeId;
use election_sim::{Applied, TraceEvent, TraceKind};

fn ids(v: &[NodeId]) -> String {
    v.iter()
        .map(|i| i.0.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A fault as applied, in words (`crash node 5`, `partition [1,2] | [3,4,5]`).
pub(super) fn fault(a: &Applied) -> String {
    match a {
        Applied::Crash(n) => format!("crash node {}", n.0),
        Applied::Recover(n) => format!("recover node {}", n.0),
        Applied::Pause(n, until) => {
            format!("pause node {} until {:.3} ms", n.0, until.as_millis_f64())
        }
        Applied::Resume(n) => format!("resume node {}", n.0),
        Applied::Partition(g) => format!(
            "partition {}",
            g.iter()
                .map(|g| format!("[{}]", ids(g)))
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        Applied::CutLink { from, to } => {
            format!("cut_link [{}] → [{}]", ids(from), ids(to))
        }
        Applied::StaleConnection { from, to, until } => format!(
            "stale_connection [{}] → [{}] until {:.3} ms",
            ids(from),
            ids(to),
            until.as_millis_f64()
        ),
        Applied::Isolate(n) => format!("isolate node {}", n.0),
        Applied::Heal => "heal".into(),
        Applied::SetLoss(p) => format!("set_loss {p}"),
        Applied::Suspect(n) => format!("suspect node {}", n.0),
        Applied::Handover(n) => format!("handover node {}", n.0),
        Applied::Detection { nodes, enabled } => format!(
            "detection {} on [{}]",
            if *enabled { "enabled" } else { "disabled" },
            ids(nodes)
        ),
        Applied::Skipped(why) => format!("skipped: {why}"),
        Applied::ClockJump(n, ms) => format!("clock_jump node {} by {ms} ms", n.0),
        Applied::ClockRate(n, ppm) => format!("clock_rate node {} at {ppm} ppm", n.0),
        Applied::Slow(n, k, ms) => format!("slow node {} by x{k} and {ms} ms per input", n.0),
        Applied::Links { pairs, up } => format!(
            "links {} [{}]",
            if *up { "up" } else { "down" },
            pairs
                .iter()
                .map(|(a, b)| format!("{}->{}", a.0, b.0))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Applied::LinkLoss { from, to, loss } => {
            format!("link_loss [{}] -> [{}] at {loss}", ids(from), ids(to))
        }
        Applied::LinkDelay { from, to, ms } => {
            format!("link_delay [{}] -> [{}] +{ms} ms", ids(from), ids(to))
        }
        Applied::Amnesia(n) => format!("amnesia node {}", n.0),
        Applied::Spike(n, ms) => format!("spike node {} +{ms} ms on its links (noise)", n.0),
        Applied::ResourceCut(nodes) => format!("cut_resource [{}]", ids(nodes)),
    }
}

/// One event's line, without a newline.
pub(super) fn event_line(e: &TraceEvent) -> String {
    let (event, body) = match &e.what {
        TraceKind::Boot(n) => ("boot", format!("node {}", n.0)),
        TraceKind::Send(m) | TraceKind::Deliver(m) | TraceKind::Drop(m, _) => {
            let (ev, why) = match &e.what {
                TraceKind::Send(_) => ("send", String::new()),
                TraceKind::Deliver(_) => ("deliver", String::new()),
                TraceKind::Drop(_, why) => ("drop", format!(": {}", why.name())),
                _ => unreachable!("matched above"),
            };
            (
                ev,
                format!(
                    "{} → {}  {} ({}, {} B){why}",
                    m.from.0,
                    m.to.0,
                    m.kind,
                    m.category.name(),
                    m.bytes
                ),
            )
        }
        TraceKind::InvalidDestination { from, to, kind } => (
            "invalid_destination",
            format!("{} → {to}  {kind}: no such node", from.0),
        ),
        TraceKind::Timer { node, timer } => ("timer", format!("node {}  {timer}", node.0)),
        TraceKind::DetectorSuppressed(n) => ("detector_suppressed", format!("node {}", n.0)),
        TraceKind::Status { node, status } => (
            "status",
            match status {
                Some(st) => format!(
                    "node {}  {}, leader {}{}",
                    node.0,
                    st.role.name(),
                    st.leader.map_or("none".into(), |l| l.0.to_string()),
                    st.epoch.map_or(String::new(), |x| format!(", epoch {x}"))
                ),
                None => format!("node {}  crashed", node.0),
            },
        ),
        TraceKind::QuorumLeader(l) => (
            "quorum",
            l.map_or("no quorum leader".to_string(), |l| {
                format!("node {} is the quorum leader", l.0)
            }),
        ),
        TraceKind::Write {
            writer,
            token,
            outcome,
        } => (
            "write",
            format!(
                "node {}  token {}: {}",
                writer.0,
                token.map_or("none".into(), |x| x.to_string()),
                outcome.name()
            ),
        ),
        TraceKind::Fault(a) => ("fault", fault(a)),
    };
    format!("{:>12.3} ms  {event:<9} {body}", e.at.as_millis_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use election_core::{MsgCategory, Time};
    use election_sim::observer::MsgInfo;

    #[test]
    fn events_read_as_words_not_debug_structs() {
        let at = Time::from_millis(412);
        let crash = TraceEvent {
            at,
            what: TraceKind::Fault(Applied::Crash(NodeId(5))),
        };
        assert_eq!(
            event_line(&crash),
            "     412.000 ms  fault     crash node 5"
        );
        let send = TraceEvent {
            at,
            what: TraceKind::Send(MsgInfo {
                from: NodeId(3),
                to: NodeId(5),
                kind: "ELECTION",
                category: MsgCategory::Election,
                bytes: 24,
            }),
        };
        let line = event_line(&send);
        assert!(
            line.ends_with("send      3 → 5  ELECTION (election, 24 B)"),
            "{line}"
        );
        assert!(!line.contains('{') && !line.contains("NodeId"));
    }
}
