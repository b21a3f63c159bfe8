//! End-to-end tests of `trace`: the same trial in every format, and JSON lines streamed
//! exactly as the buffered trace.

use crate::common;

use std::fs;

use common::{bench, fails, listing, ok};

#[test]
fn trace_is_the_same_for_the_same_seed_in_every_format() {
    let d = tempfile::tempdir().unwrap();
    let args = |fmt: &'static str| {
        [
            "trace",
            "-p",
            "bully",
            "-n",
            "4",
            "-s",
            "leader-crash",
            "--seed",
            "1",
            "--format",
            fmt,
        ]
    };
    let mermaid = ok(&bench(&args("mermaid"), d.path()));
    assert!(mermaid.starts_with("sequenceDiagram"), "{mermaid}");
    assert!(mermaid.contains("COORDINATOR"), "{mermaid}");
    assert_eq!(ok(&bench(&args("mermaid"), d.path())), mermaid);
    let jsonl = ok(&bench(&args("jsonl"), d.path()));
    assert!(jsonl
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    let o = bench(
        &[
            "trace",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--out",
            "t.svg",
        ],
        d.path(),
    );
    ok(&o);
    let svg = fs::read_to_string(d.path().join("t.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..80]
    );
    fails(&bench(&args("png"), d.path()), 2, &["svg, mermaid, jsonl"]);
}

/// `trace --format jsonl` streams its records as the trial runs: its output (to standard
/// output or to a file) is byte-for-byte the buffered trace rendered as JSON lines.
#[test]
fn trace_jsonl_streams_exactly_the_buffered_trace() {
    use election_report::{render_trace, TraceFormat, TraceMeta};
    let d = tempfile::tempdir().unwrap();
    let mut spec = election_runner::SweepSpec {
        protocols: Some(vec!["raft+pre_vote".into()]),
        nodes: Some(vec![5]),
        scenarios: Some(vec!["flapping-leader".into()]),
        seeds: Some(1),
        first_seed: Some(3),
        ..Default::default()
    };
    spec.set("net.loss=0.05").unwrap();
    let cell = spec.plan().unwrap().cells().unwrap().swap_remove(0);
    let t = cell.run(3, true).unwrap();
    let meta = TraceMeta::from_metrics(
        "raft+pre_vote",
        "flapping-leader",
        // The fixed --set net.loss overrides the profile: the network's name says so.
        "lan+net.loss=0.05",
        3,
        &t.report.metrics,
    );
    let want = render_trace(&t.report.trace, 5, &meta, TraceFormat::Jsonl).unwrap();
    assert!(want.lines().count() > 100);
    let args = [
        "trace",
        "-p",
        "raft+pre_vote",
        "-n",
        "5",
        "-s",
        "flapping-leader",
        "--seed",
        "3",
        "--set",
        "net.loss=0.05",
        "--format",
        "jsonl",
    ];
    assert_eq!(ok(&bench(&args, d.path())), want);
    let mut to_file = args.to_vec();
    to_file.extend(["--out", "t.jsonl"]);
    let said = ok(&bench(&to_file, d.path()));
    assert!(said.contains("t.jsonl"), "{said}");
    assert_eq!(fs::read_to_string(d.path().join("t.jsonl")).unwrap(), want);
    assert_eq!(
        listing(d.path()),
        vec!["t.jsonl".to_string()],
        "no temporary file left"
    );
}
