//! Message-sequence traces: stable for a fixed seed, every element of the issue drawn, the
//! window cut (and said to be cut) when a trial is too large to stay legible.

use crate::common;

use election_core::{MsgCategory, NodeId, Role, Status, Time};
use election_report::{render_trace, TraceFormat, TraceMeta, TraceWindow};
use election_sim::{Applied, DropReason, MsgInfo, TraceEvent, TraceKind};

fn ev(ms: u64, what: TraceKind) -> TraceEvent {
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

fn status(node: u32, role: Role, leader: Option<u32>, epoch: u64) -> TraceKind {
    TraceKind::Status {
        node: NodeId(node),
        status: Some(Status {
            role,
            leader: leader.map(NodeId),
            epoch: Some(epoch),
        }),
    }
}

/// A hand-made three-node election: node 3 crashes, node 2 campaigns, one vote is lost.
fn tiny() -> (Vec<TraceEvent>, TraceMeta) {
    let e = msg(2, 1, "REQUEST_VOTE", MsgCategory::Election);
    let e3 = msg(2, 3, "REQUEST_VOTE", MsgCategory::Election);
    let v = msg(1, 2, "VOTE", MsgCategory::Reply);
    let hb = msg(2, 1, "APPEND_ENTRIES", MsgCategory::Heartbeat);
    let events = vec![
        ev(0, TraceKind::Boot(NodeId(1))),
        ev(0, TraceKind::Boot(NodeId(2))),
        ev(0, TraceKind::Boot(NodeId(3))),
        ev(0, status(1, Role::Follower, Some(3), 1)),
        ev(0, status(2, Role::Follower, Some(3), 1)),
        ev(0, status(3, Role::Leader, Some(3), 1)),
        ev(100, TraceKind::Fault(Applied::Crash(NodeId(3)))),
        ev(
            100,
            TraceKind::Status {
                node: NodeId(3),
                status: None,
            },
        ),
        ev(
            260,
            TraceKind::Timer {
                node: NodeId(2),
                timer: "Election".into(),
            },
        ),
        ev(260, status(2, Role::Candidate, None, 2)),
        ev(260, TraceKind::Send(e)),
        ev(260, TraceKind::Send(e3)),
        ev(261, TraceKind::Deliver(e)),
        ev(261, TraceKind::Drop(e3, DropReason::Crashed)),
        ev(261, status(1, Role::Follower, None, 2)),
        ev(261, TraceKind::Send(v)),
        ev(262, TraceKind::Deliver(v)),
        ev(262, status(2, Role::Leader, Some(2), 2)),
        ev(262, TraceKind::Send(hb)),
        ev(263, TraceKind::Deliver(hb)),
        ev(263, status(1, Role::Follower, Some(2), 2)),
    ];
    let mut meta = TraceMeta::new("raft", "leader-crash", "lan", 7);
    meta.reference_ms = 100.0;
    meta.elect_ms = Some(163.0);
    meta.leader = Some(2);
    (events, meta)
}

#[test]
fn tiny_election_as_mermaid_is_exactly_this() {
    let (events, meta) = tiny();
    let m = render_trace(&events, 3, &meta, TraceFormat::Mermaid).unwrap();
    let want = "\
sequenceDiagram
    %% election-bench trace: raft · leader-crash · n = 3 · seed 7 · net lan
    participant N1 as node 1
    participant N2 as node 2
    participant N3 as node 3
    Note right of N1: follows 3 e1
    Note right of N2: follows 3 e1
    Note right of N3: LEADER e1
    Note over N1,N3: … 100.0 ms later, t = 100.000 ms
    Note over N1,N3: t0 = 100.000 ms: reference instant (first fault)
    Note right of N3: CRASH
    Note over N1,N3: … 160.0 ms later, t = 260.000 ms
    Note right of N2: timer Election
    Note right of N2: candidate e2
    N2->>N1: REQUEST_VOTE
    N2-xN3: REQUEST_VOTE (lost: crashed)
    Note right of N1: no leader e2
    N1->>N2: VOTE
    Note right of N2: LEADER e2
    N2->>N1: APPEND_ENTRIES
    Note right of N1: follows 2 e2
    Note over N1,N3: CONVERGED at 263.000 ms: node 2 quorum leader (t0 + 163.000 ms)
";
    assert_eq!(m, want);
}

#[test]
fn tiny_election_as_svg_has_every_element() {
    let (events, meta) = tiny();
    let s = render_trace(&events, 3, &meta, TraceFormat::Svg).unwrap();
    assert!(s.starts_with("<svg"));
    assert!(s.trim_end().ends_with("</svg>"));
    for want in [
        ">node 1<",
        ">node 3<",
        "REQUEST_VOTE ×2 (1 lost)",
        ">VOTE<",
        "CRASH",
        "candidate e2",
        "LEADER e2",
        "CONVERGED: node 2 quorum leader, t0 + 163.000 ms",
        "t0: reference instant (first fault)",
        "marker-end=\"url(#ah-election)\"",
        "marker-end=\"url(#ah-reply)\"",
        "marker-end=\"url(#ah-heartbeat)\"",
        "stroke-dasharray=\"2 4\"", // node 3's lifeline while crashed
        "⋯ 160.0 ms ⋯",             // the idle gap before the election timeout
    ] {
        assert!(s.contains(want), "SVG lacks {want:?}");
    }
    // Lines never contain NaN or infinite coordinates.
    assert!(!s.contains("NaN") && !s.contains("inf"));
}

#[test]
fn jsonl_is_the_raw_log() {
    let (events, meta) = tiny();
    let j = render_trace(&events, 3, &meta, TraceFormat::Jsonl).unwrap();
    let lines: Vec<&str> = j.lines().collect();
    assert_eq!(lines.len(), events.len() + 1);
    assert_eq!(
        lines[0],
        r#"{"event":"meta","protocol":"raft","scenario":"leader-crash","net":"lan","nodes":3,"seed":7,"reference_ms":100.0,"elect_ms":163.0,"leader":2}"#
    );
    assert_eq!(
        lines[14],
        r#"{"t_ms":261.0,"event":"drop","from":2,"to":3,"kind":"REQUEST_VOTE","category":"election","bytes":16,"reason":"crashed"}"#
    );
    for l in &lines {
        serde_json::from_str::<serde_json::Value>(l).unwrap();
    }
}

#[test]
fn a_real_trial_traces_the_same_every_time() {
    for protocol in ["bully", "ring", "raft+pre_vote"] {
        let a = common::run_traced(protocol, 5, "leader-crash", 11);
        let b = common::run_traced(protocol, 5, "leader-crash", 11);
        let meta = TraceMeta::from_metrics(protocol, "leader-crash", "lan", 11, &a.metrics);
        for f in [TraceFormat::Svg, TraceFormat::Mermaid, TraceFormat::Jsonl] {
            let x = render_trace(&a.events, 5, &meta, f).unwrap();
            let y = render_trace(&b.events, 5, &meta, f).unwrap();
            assert_eq!(x, y, "{protocol} {f} differs between two runs of seed 11");
        }
        let svg = render_trace(&a.events, 5, &meta, TraceFormat::Svg).unwrap();
        assert!(svg.contains("CONVERGED"), "{protocol}: no convergence line");
        assert!(svg.contains("CRASH"), "{protocol}: no crash mark");
        assert!(svg.contains("LEADER"), "{protocol}: no leader mark");
    }
}

#[test]
fn partitions_are_shaded_with_walls() {
    let t = common::run_traced("bully", 5, "partition-leader-minority", 3);
    let meta = TraceMeta::from_metrics("bully", "partition-leader-minority", "lan", 3, &t.metrics);
    let svg = render_trace(&t.events, 5, &meta, TraceFormat::Svg).unwrap();
    assert!(
        svg.contains("PARTITION {5} | {1,2,3,4}"),
        "no partition note"
    );
    assert!(svg.contains("fill=\"#fbe3e3\""), "no partition shading");
    assert!(
        svg.contains("stroke=\"#c62828\" stroke-width=\"3\""),
        "no wall"
    );
    let mm = render_trace(&t.events, 5, &meta, TraceFormat::Mermaid).unwrap();
    assert!(mm.contains("Note over N1,N5: PARTITION {5} | {1,2,3,4}"));
}

#[test]
fn large_trials_are_cut_and_say_so() {
    let t = common::run_traced("raft", 20, "leader-crash", 1);
    let meta = TraceMeta::from_metrics("raft", "leader-crash", "lan", 1, &t.metrics);
    let svg = render_trace(&t.events, 20, &meta, TraceFormat::Svg).unwrap();
    assert!(svg.contains("n = 20 is more lifelines than a sequence chart shows legibly"));
    let mm = render_trace(&t.events, 20, &meta, TraceFormat::Mermaid).unwrap();
    assert!(mm.contains("Note over N1,N20: n = 20 is more lifelines"));
    let mut small = meta.clone();
    small.max_messages = 25;
    small.window = TraceWindow::Full;
    let svg = render_trace(&t.events, 20, &small, TraceFormat::Svg).unwrap();
    assert!(svg.contains("cut after "), "no cut note");
}

#[test]
fn bad_trace_inputs_are_refused() {
    let (events, meta) = tiny();
    let err = render_trace(&events, 2, &meta, TraceFormat::Svg).unwrap_err();
    assert!(err.to_string().contains("node 3, outside 1..=2"), "{err}");
    let err = render_trace(&[], 3, &meta, TraceFormat::Svg).unwrap_err();
    assert!(err.to_string().contains("tracing on"), "{err}");
    assert!("png".parse::<TraceFormat>().is_err());
    assert_eq!(
        "mermaid".parse::<TraceFormat>().unwrap(),
        TraceFormat::Mermaid
    );
}
