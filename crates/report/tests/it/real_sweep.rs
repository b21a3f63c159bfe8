//! The report on a real (small) sweep run through election-runner: the traces the report
//! re-runs reproduce the sweep's trials exactly, and the tables repeat `summary.csv`.

use crate::common;

use std::fs;

use election_report::{render_report, ReportOptions, RunnerTracer};
use election_runner::SweepSpec;

/// The tests' sweep: `protocols` at 3 and 5 nodes, a leader crash and a leader partitioned
/// into the minority, 4 seeds.
fn small_spec(name: &str, protocols: &[&str]) -> SweepSpec {
    SweepSpec {
        name: Some(name.into()),
        protocols: Some(protocols.iter().map(|p| p.to_string()).collect()),
        nodes: Some(vec![3, 5]),
        scenarios: Some(vec![
            "leader-crash".into(),
            "partition-leader-minority".into(),
        ]),
        seeds: Some(4),
        ..SweepSpec::default()
    }
}

#[test]
fn traced_reruns_match_the_sweep() {
    let base = common::scratch("real-sweep");
    let results = base.join("results");
    let mut spec = small_spec("small", &["bully", "raft+pre_vote"]);
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

/// `lease+profile=k8s` runs at Kubernetes' time scale: the matrix grades its failover against
/// its own 30 s window and ranks it against nobody (no relative verdict, and it does not
/// take "best" from the scaled lease), the charts leave it out and say so, and the tables
/// hold its numbers.
#[test]
fn a_row_at_its_own_time_scale_is_graded_on_its_window_and_not_ranked() {
    let base = common::scratch("own-scale");
    let results = base.join("results");
    let spec = small_spec("k8s", &["lease", "lease+profile=k8s"]);
    common::run_small_sweep(&spec, &results, "election-bench sweep --name k8s");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(results.join("manifest.json")).unwrap()).unwrap();
    let own = &manifest["config"]["timing"]["specs"]["lease+profile=k8s"];
    assert_eq!(own["detect_timeout_ms"], 15000.0, "{own}");
    assert!(manifest["config"]["timing"]["specs"].get("lease").is_none());
    let out = base.join("report");
    let opts = ReportOptions {
        png: false,
        ..ReportOptions::default()
    };
    render_report(&results, &out, &opts, None).unwrap();
    let md = fs::read_to_string(out.join("REPORT.md")).unwrap();
    let row = |p: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| `{p}` |")))
            .unwrap_or_else(|| panic!("no matrix row for {p}"))
            .to_string()
    };
    let k8s = row("lease+profile=k8s");
    let failover = k8s.split(" | ").nth(1).unwrap();
    assert!(
        failover.contains("(its own window: 30000 ms) **≤ 1 window**"),
        "{failover}"
    );
    for word in ["best", "good", "fair", "poor"] {
        assert!(!failover.contains(&format!("**{word}**")), "{failover}");
    }
    // The scaled lease is the best of the protocols that are ranked: here, the only one.
    assert!(row("lease")
        .split(" | ")
        .nth(1)
        .unwrap()
        .contains("**best**"));
    assert!(
        md.contains("`lease+profile=k8s` runs at a time scale of its own"),
        "{md}"
    );
    for chart in fs::read_dir(out.join("charts")).unwrap() {
        let path = chart.unwrap().path();
        let svg = fs::read_to_string(&path).unwrap();
        assert!(!svg.contains("profile=k8s"), "{}", path.display());
    }
    let appendix = fs::read_to_string(out.join("APPENDIX.md")).unwrap();
    assert!(appendix.contains("| `lease+profile=k8s` |"));
}
