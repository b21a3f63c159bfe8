//! The report on a real (small) sweep run through election-runner: the traces the report
//! re-runs reproduce the sweep's trials exactly, and the tables repeat `summary.csv`.

mod common;

use std::fs;

use election_report::{render_report, ReportOptions, RunnerTracer};
use election_runner::SweepSpec;

#[test]
fn traced_reruns_match_the_sweep() {
    let base = common::scratch("real-sweep");
    let results = base.join("results");
    let mut spec = SweepSpec {
        name: Some("small".into()),
        protocols: Some(vec!["bully".into(), "raft+pre_vote".into()]),
        nodes: Some(vec![3, 5]),
        scenarios: Some(vec![
            "leader-crash".into(),
            "partition-leader-minority".into(),
        ]),
        seeds: Some(4),
        ..SweepSpec::default()
    };
    // A fixed parameter the tracer must read back from the manifest.
    spec.set("heartbeat_ms=40").unwrap();
    common::run_small_sweep(&spec, &results, "election-bench sweep --name small");
    let out = base.join("report");
    let opts = ReportOptions {
        png: false,
        ..ReportOptions::default()
    };
    let tracer = RunnerTracer::from_manifest(&results).unwrap();
    let o = render_report(&results, &out, &opts, Some(&tracer)).unwrap();
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    let mut names: Vec<String> = fs::read_dir(out.join("traces"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let timelines: Vec<&String> = names.iter().filter(|n| n.contains("-timeline")).collect();
    assert_eq!(
        names.len() - timelines.len(),
        3,
        "one leader-crash trace per protocol and the worst split brain: {names:?}"
    );
    // The worst split brain, and only it, is drawn over time as well (the timeline's quorum
    // row agreed with the trial's unavailability: no warning above).
    assert_eq!(timelines.len(), 1, "{names:?}");
    assert!(
        timelines[0].starts_with("partition-leader-minority-"),
        "{names:?}"
    );
    let md = fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(!md.contains("disagrees"));
    // The same tracer built from the spec agrees.
    let again = base.join("report2");
    render_report(&results, &again, &opts, Some(&RunnerTracer::new(spec))).unwrap();
    assert_eq!(md, fs::read_to_string(again.join("REPORT.md")).unwrap());
}
