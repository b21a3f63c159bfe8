//! Timelines of real trials (the report draws them for the worst and the failing trials): the
//! quorum row is the observer's own record, so its gaps after the fault are the trial's
//! `unavailable_ms`; the write rows hold exactly the trial's `writes_ok`, `writes_stale` and
//! `writes_fenced`; the chart is the same on every run.

use election_report::charts::write_chart;
use election_report::trace::timeline::{Timeline, TimelineChart};
use election_report::{RunnerTracer, TraceMeta, TrialId, TrialTracer};
use election_runner::SweepSpec;
use election_sim::observer::WriteOutcome;

use crate::common;

fn traced(
    protocol: &str,
    nodes: u32,
    scenario: &str,
    seed: u64,
) -> (Timeline, election_sim::Metrics) {
    let id = TrialId {
        protocol: protocol.to_string(),
        nodes,
        scenario: scenario.to_string(),
        net: "lan".to_string(),
        params: Vec::new(),
        seed,
    };
    let t = RunnerTracer::new(SweepSpec::default())
        .trace_trial(&id)
        .unwrap();
    let meta = TraceMeta::from_metrics(protocol, scenario, "lan", seed, &t.metrics);
    let tl = Timeline::build(&t.events, nodes, &meta, t.metrics.end_ms);
    (tl, t.metrics)
}

#[test]
fn the_timeline_holds_the_trials_own_numbers() {
    for (protocol, nodes, scenario, seed) in [
        ("bully", 5, "partition-leader-minority", 3),
        ("bully+epoch", 7, "partition-leader-minority", 121),
        ("raft", 5, "leader-crash", 1),
        ("bully+epoch", 3, "leader-recovers", 0),
        ("lease", 5, "partition-leader-minority", 2),
    ] {
        let (tl, m) = traced(protocol, nodes, scenario, seed);
        let what = format!("{protocol} n={nodes} {scenario} seed {seed}");
        assert!(
            (tl.unavailable_ms() - m.unavailable_ms).abs() < 1e-6,
            "{what}: timeline {} ms without a quorum leader, metrics {}",
            tl.unavailable_ms(),
            m.unavailable_ms
        );
        let w = m.writes.expect("the default sweep runs the workload");
        assert_eq!(tl.writes_after_reference(WriteOutcome::Ok), w.ok, "{what}");
        assert_eq!(
            tl.writes_after_reference(WriteOutcome::Stale),
            w.stale,
            "{what}"
        );
        assert_eq!(
            tl.writes_after_reference(WriteOutcome::Fenced),
            w.fenced,
            "{what}"
        );
        assert!(!tl.leading.is_empty(), "{what}: nobody ever led");
        // Spans tile the trial from its start to its end.
        assert_eq!(tl.quorum.first().unwrap().0.from.0, 0, "{what}");
        assert_eq!(tl.quorum.last().unwrap().0.to, tl.end, "{what}");
        for w in tl.quorum.windows(2) {
            assert_eq!(w[0].0.to, w[1].0.from, "{what}");
            assert_ne!(
                w[0].1, w[1].1,
                "{what}: two spans with the same quorum leader in a row"
            );
        }
        if scenario.starts_with("partition") {
            assert!(
                tl.faults
                    .iter()
                    .any(|f| f.node.is_none() && f.label.starts_with("PARTITION")),
                "{what}: no partition window: {:?}",
                tl.faults
            );
        }
    }
}

#[test]
fn a_split_brain_shows_two_leaders_at_once() {
    let (tl, m) = traced("bully", 5, "partition-leader-minority", 3);
    assert!(m.split_brain, "the trial this test reads has a split brain");
    let overlap = tl.leading.iter().any(|a| {
        tl.leading
            .iter()
            .any(|b| a.node != b.node && a.span.from < b.span.to && b.span.from < a.span.to)
    });
    assert!(overlap, "no two leaders at once: {:?}", tl.leading);
}

#[test]
fn the_chart_is_the_same_every_time() {
    let dir = common::scratch("timeline-chart");
    let mut files = Vec::new();
    for k in 0..2 {
        let (tl, _) = traced("bully+epoch", 3, "leader-recovers", 0);
        let chart = TimelineChart {
            timeline: &tl,
            title: "bully+epoch, leader-recovers, n = 3, seed 0".to_string(),
        };
        let written = write_chart(&chart, &dir, &format!("t{k}"), true).unwrap();
        assert_eq!(written.len(), 2);
        files.push(written);
    }
    for (a, b) in files[0].iter().zip(&files[1]) {
        assert_eq!(
            std::fs::read(a).unwrap(),
            std::fs::read(b).unwrap(),
            "{}",
            a.display()
        );
    }
    let svg = std::fs::read_to_string(&files[0][0]).unwrap();
    for want in [
        "quorum leader",
        "writes stale",
        "crashed",
        "t0 (fault)",
        "epoch ",
    ] {
        assert!(svg.contains(want), "the timeline has no {want:?}");
    }
}
