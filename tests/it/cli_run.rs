//! End-to-end tests of `run`: one trial, readable or as one JSON object, its fault instant and
//! reference, faults that did not apply, extreme timings, the work budget and the memory
//! estimate.

use crate::common;

use std::fs;
use std::path::Path;

use common::{bench, fails, listing, ok, tiny};

/// `run --json` of one trial, parsed.
fn run_json(
    dir: &Path,
    protocol: &str,
    n: &str,
    scenario: &str,
    sets: &[&str],
) -> serde_json::Value {
    let mut args = vec!["run", "-p", protocol, "-n", n, "-s", scenario, "--json"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = ok(&bench(&args, dir));
    serde_json::from_str(out.trim()).expect("one JSON object")
}

#[test]
fn run_prints_a_summary_or_one_json_object_with_the_csv_columns() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(
        &[
            "run",
            "--protocol",
            "bully",
            "--nodes",
            "5",
            "--scenario",
            "leader-crash",
        ],
        d.path(),
    ));
    assert!(out.contains("converged") && out.contains("elect"), "{out}");
    // --trace: one readable line per event, in the trace's vocabulary, never a Debug struct.
    let traced = ok(&bench(
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--trace",
            "--trace-messages",
        ],
        d.path(),
    ));
    assert!(traced.contains(" ms  fault     crash node 5"), "{traced}");
    assert!(
        traced.contains("  send      ") && traced.contains(" → "),
        "{traced}"
    );
    assert!(traced.contains("  status    node "), "{traced}");
    for debug in ["NodeId(", "Some(", "Status {", "Fault("] {
        assert!(!traced.contains(debug), "{debug} in: {traced}");
    }
    let args = [
        "run",
        "--protocol",
        "raft+pre_vote",
        "--nodes",
        "5",
        "--scenario",
        "leader-crash",
        "--seed",
        "7",
        "--set",
        "net.loss=0.01",
        "--json",
    ];
    let out = ok(&bench(&args, d.path()));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, election_runner::results::trial_header(&[]));
    assert_eq!(v["protocol"], "raft+pre_vote");
    assert_eq!(v["seed"], 7);
    assert_eq!(v["converged"], true);
    // The same trial twice: the same object.
    assert_eq!(ok(&bench(&args, d.path())), out);
    // No files are written by `run`.
    assert!(listing(d.path()).is_empty());
}

/// A fixed `--set net.*` that overrides the profile is part of the network's name, in `run`'s
/// header, its JSON, the CSVs, the manifest and the report; a value equal to the profile's own,
/// or a varied one (its own column), is not.
#[test]
fn a_network_overridden_by_set_says_so_in_its_name() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-p", "raft", "-n", "3", "-s", "leader-crash"];
        args.extend(extra);
        ok(&bench(&args, d.path()))
    };
    let out = run(&["--set", "net.loss=0.05"]);
    let header = out.lines().next().unwrap();
    assert!(header.contains("| lan+net.loss=0.05 |"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(run(&["--set", "net.loss=0.050", "--json"]).trim()).unwrap();
    assert_eq!(v["net"], "lan+net.loss=0.05");
    let v: serde_json::Value =
        serde_json::from_str(run(&["--net", "lossy", "--set", "net.loss=0.05", "--json"]).trim())
            .unwrap();
    assert_eq!(v["net"], "lossy", "the profile's own loss is no override");
    let v: serde_json::Value = serde_json::from_str(run(&["--json"]).trim()).unwrap();
    assert_eq!(v["net"], "lan");
    // The name is not a profile: the error says how to write it.
    fails(
        &bench(
            &[
                "run",
                "-p",
                "raft",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--net",
                "lan+net.loss=0.05",
            ],
            d.path(),
        ),
        2,
        &["lan+net.loss=0.05", "--set net.loss=0.05"],
    );

    let net_column = |dir: &str, file: &str| -> Vec<String> {
        let text = fs::read_to_string(d.path().join(dir).join(file)).unwrap();
        let mut lines = text.lines();
        let col = lines
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "net")
            .unwrap();
        lines
            .map(|l| l.split(',').nth(col).unwrap().to_string())
            .collect()
    };
    let manifest = |dir: &str| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(d.path().join(dir).join("manifest.json")).unwrap())
            .unwrap()
    };
    // Fixed: in the name (and the report re-runs its traces from it).
    ok(&tiny(
        d.path(),
        "fixed",
        &["--name", "fixed", "--set", "net.latency=constant:2"],
    ));
    for file in ["trials.csv", "summary.csv"] {
        let nets = net_column("fixed", file);
        assert!(!nets.is_empty());
        assert!(
            nets.iter().all(|n| n == "lan+net.latency=constant:2"),
            "{file}: {nets:?}"
        );
    }
    let m = manifest("fixed");
    assert_eq!(m["config"]["nets"][0]["name"], "lan");
    assert_eq!(m["config"]["nets"][0]["net"], "lan+net.latency=constant:2");
    let report = fs::read_to_string(d.path().join("reports/fixed/REPORT.md")).unwrap();
    assert!(report.contains("`lan+net.latency=constant:2`"), "{report}");
    assert!(report.contains("traces/"), "{report}");
    assert!(
        !report.contains("failed:") && !report.contains("disagrees"),
        "{report}"
    );
    // Varied: its own column, not the name; and without `--set net.*`, lan stays lan.
    ok(&tiny(
        d.path(),
        "varied",
        &["--set", "net.loss=0,0.1", "--no-report"],
    ));
    ok(&tiny(d.path(), "plain", &["--no-report"]));
    for dir in ["varied", "plain"] {
        assert!(net_column(dir, "trials.csv").iter().all(|n| n == "lan"));
        assert!(manifest(dir)["config"]["nets"][0].get("net").is_none());
    }
}

/// `run` of a custom scenario measured from its second fault prints both instants, and its
/// JSON's times are measured from the second.
#[test]
fn run_says_which_fault_is_the_reference() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("c.toml"),
        r#"
[[scenario]]
name = "second-crash"
faults = [
  { at_ms = 0, action = "crash", node = "leader" },
  { at_ms = 2000, action = "crash", node = "leader", reference = true },
]
"#,
    )
    .unwrap();
    let args = [
        "run",
        "-p",
        "bully",
        "-n",
        "5",
        "-s",
        "second-crash",
        "--config",
        "c.toml",
    ];
    let out = ok(&bench(&args, d.path()));
    let line = |start: &str| -> f64 {
        let l = out
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{out}"));
        l.split_whitespace()
            .nth(start.split_whitespace().count())
            .unwrap()
            .parse()
            .unwrap()
    };
    let (first, reference) = (line("fault instant"), line("reference"));
    assert!((reference - first - 2000.0).abs() < 1e-3, "{out}");
    assert!(out.contains("faults[1]"), "{out}");
    // Node 5 crashed first, node 4 took over and is the leader at the reference.
    assert!(out.contains("leader then      node 4"), "{out}");
}

/// Issue #12: a fault that finds no target is never silent. With no wait for a leader, a
/// crash of the leader at 0 ms finds none: `run` says so in plain words, every row carries
/// `faults_skipped`, the summary keeps those trials out of the statistics, and the report
/// flags the cell with seeds and a replay command instead of presenting it as a failover.
#[test]
fn faults_that_did_not_apply_are_counted_said_and_flagged() {
    let d = tempfile::tempdir().unwrap();
    let no_wait = [
        "--set",
        "fault_at_ms=0",
        "--set",
        "fault_jitter_ms=0",
        "--set",
        "fault_wait_ms=0",
    ];
    let mut args = vec!["run", "-p", "raft", "-n", "5", "-s", "leader-crash"];
    args.extend(no_wait);
    let out = ok(&bench(&args, d.path()));
    assert!(
        out.contains("FAULTS SKIPPED   1 of the scenario's actions (1 faults"),
        "{out}"
    );
    assert!(
        out.contains("SKIPPED: crash: no node matched Leader"),
        "{out}"
    );
    args.push("--json");
    let json: serde_json::Value = serde_json::from_str(&ok(&bench(&args, d.path()))).unwrap();
    assert_eq!(json["faults_skipped"], 1);

    // The default wait: the same fault waits for the first leader and applies.
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--set",
            "fault_at_ms=0",
            "--set",
            "fault_jitter_ms=0",
        ],
        d.path(),
    ));
    assert!(out.contains("waiting for a quorum leader"), "{out}");
    assert!(!out.contains("SKIPPED"), "{out}");

    let mut args = vec![
        "sweep",
        "--name",
        "skips",
        "--protocols",
        "raft",
        "--nodes",
        "5",
        "--scenarios",
        "leader-crash",
        "--seeds",
        "3",
        "--quiet",
    ];
    args.extend(no_wait);
    ok(&bench(&args, d.path()));
    let trials = fs::read_to_string(d.path().join("results/skips/trials.csv")).unwrap();
    let header: Vec<&str> = trials.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "faults_skipped").unwrap();
    for line in trials.lines().skip(1) {
        assert_eq!(line.split(',').nth(col), Some("1"), "{line}");
    }
    let summary = fs::read_to_string(d.path().join("results/skips/summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(get("trials"), "3");
    assert_eq!(get("measured"), "0");
    assert_eq!(get("faults_skipped_trials"), "3");
    assert_eq!(get("elect_ms_p50"), "");
    let md = fs::read_to_string(d.path().join("reports/skips/REPORT.md")).unwrap();
    assert!(md.contains("**Faults that did not apply**"), "{md}");
    assert!(md.contains("no trial measured the scenario"), "{md}");
    // A trace of the first such trial, linked from the finding and drawn in the report.
    let trace = "traces/leader-crash-raft-n5-seed0.svg";
    assert!(
        md.contains(&format!("trace: [leader-crash-raft-n5-seed0.svg]({trace})")),
        "{md}"
    );
    assert!(d.path().join("reports/skips").join(trace).is_file());
    assert!(
        md.contains("election-bench run --protocol raft --nodes 5 --scenario leader-crash --net lan --seed 0 --set fault_at_ms=0"),
        "{md}"
    );
}

/// A fault instant at or past the horizon is a usage error naming the field and the value.
#[test]
fn a_fault_instant_past_the_horizon_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--set",
            "fault_at_ms=25000",
            "--set",
            "horizon_ms=20000",
        ],
        d.path(),
    );
    fails(&o, 2, &["fault_at_ms", "25300", "horizon_ms"]);
}

/// Latencies and timings near the end of the 64-bit nanosecond clock (this binary is a debug
/// build, so an overflow would panic): a latency past the horizon means the message never
/// arrives; a millisecond parameter too large to be an instant is refused by name.
#[test]
fn extreme_latencies_and_timings_give_a_sane_row_or_a_named_error() {
    let d = tempfile::tempdir().unwrap();
    for p in ["bully", "ring", "raft"] {
        // 1e15 ms saturates the clock: nothing is ever delivered, so nobody can converge
        // (raft cannot even win a vote) and the trial runs to its horizon.
        let v = run_json(
            d.path(),
            p,
            "5",
            "leader-crash",
            &["net.latency=constant:1e15"],
        );
        assert_eq!(v["converged"], false, "{p}: {v}");
        assert_eq!(v["leader"], serde_json::Value::Null, "{p}: {v}");
        // The default horizon: the fault instant (1200 ms + 300 ms of jitter) and 60 of the
        // longest election timeouts (300 ms).
        assert_eq!(v["end_ms"], 19500, "{p}: {v}");
        // A heavy tail with reordering: some draws land far past the horizon.
        let v = run_json(
            d.path(),
            p,
            "5",
            "leader-crash",
            &["net.latency=pareto:1:0.2", "net.fifo=false"],
        );
        let end = v["end_ms"].as_f64().unwrap();
        assert!(end > 1200.0 && end <= 19500.0, "{p}: {v}");
        fails(
            &bench(
                &[
                    "run",
                    "-p",
                    p,
                    "-n",
                    "5",
                    "-s",
                    "leader-crash",
                    "--set",
                    "detect_jitter_ms=2e13",
                ],
                d.path(),
            ),
            2,
            &["detect_jitter_ms = 2e13", "at most 1e12"],
        );
    }
    fails(
        &bench(
            &[
                "run",
                "-p",
                "raft",
                "-n",
                "5",
                "-s",
                "leader-crash",
                "--set",
                "raft.timeout_ms=150-1e300",
            ],
            d.path(),
        ),
        2,
        &["raft.timeout_ms", "1e12"],
    );
}

/// A trial that uses up its work budget ends with a row that says so (and never counts as
/// converged); the default budget leaves normal trials alone. `run` says it in plain words.
#[test]
fn a_trial_out_of_work_budget_says_so_in_its_row_and_the_summary() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(d.path(), "bully", "5", "leader-crash", &[]);
    assert_eq!(v["budget_exceeded"], false, "{v}");
    assert_eq!(v["converged"], true, "{v}");
    let v = run_json(d.path(), "bully", "5", "leader-crash", &["work_budget=50"]);
    assert_eq!(v["budget_exceeded"], true, "{v}");
    assert_eq!(v["converged"], false, "{v}");
    assert!(v["end_ms"].as_f64().unwrap() < 1000.0, "{v}");
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--set",
            "work_budget=50",
        ],
        d.path(),
    ));
    assert!(
        out.contains("BUDGET EXCEEDED") && out.contains("work budget of 50"),
        "{out}"
    );
    let out = ok(&bench(
        &["run", "-p", "raft", "-n", "5", "-s", "leader-crash"],
        d.path(),
    ));
    assert!(!out.contains("BUDGET"), "{out}");
    // A sweep: each trial's column, and the per-cell count in summary.csv.
    ok(&bench(
        &[
            "sweep",
            "--protocols",
            "bully",
            "--nodes",
            "3",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "2",
            "--quiet",
            "--out",
            "tight",
            "--no-report",
            "--set",
            "work_budget=50",
        ],
        d.path(),
    ));
    let trials = fs::read_to_string(d.path().join("tight/trials.csv")).unwrap();
    let header: Vec<&str> = trials.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "budget_exceeded").unwrap();
    assert_eq!(header[col + 1], "end_ms");
    for line in trials.lines().skip(1) {
        assert_eq!(line.split(',').nth(col), Some("true"), "{line}");
    }
    let summary = fs::read_to_string(d.path().join("tight/summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "budget_exceeded").unwrap();
    assert_eq!(header[col + 1], "outcome_stable");
    assert_eq!(header.last(), Some(&"skipped"));
    let row: Vec<&str> = summary.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[col], "2", "{summary}");
    // A trial cut short measures nothing: the cell has no statistics.
    let get = |name: &str| row[header.iter().position(|c| *c == name).unwrap()];
    assert_eq!(get("measured"), "0");
    assert_eq!(get("converged_rate"), "");
}

/// Sizes and parameters whose trial could not fit in memory are refused before anything is
/// allocated, naming the parameter and the estimate.
#[test]
fn a_trial_too_big_for_memory_is_refused_with_its_estimate() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-p", "bully", "-s", "flapping-leader"];
        args.extend(extra);
        bench(&args, d.path())
    };
    fails(
        &run(&["-n", "100000"]),
        2,
        &["nodes = 100000", "GiB", "limit is 4.0 GiB"],
    );
    fails(
        &run(&["-n", "5", "--set", "flaps=1000000000"]),
        2,
        &["flaps = 1000000000", "GiB", "limit is 4.0 GiB"],
    );
    fails(
        &run(&["-n", "5", "--set", "flaps=1e9"]),
        2,
        &["flaps", "whole number"],
    );
    fails(
        &bench(
            &[
                "sweep",
                "--protocols",
                "raft",
                "--nodes",
                "3,100000",
                "--scenarios",
                "leader-crash",
                "--seeds",
                "1",
                "--quiet",
                "--out",
                "big",
            ],
            d.path(),
        ),
        2,
        &["nodes = 100000"],
    );
    assert!(!d.path().join("big/trials.csv").exists());
}

/// Issue #15's first "done when": a lease trial runs from the CLI, the store scenarios are
/// refused for a protocol without a store only by skipping, and a bad lease timing names its
/// field.
#[test]
fn run_lease_leader_crash_and_its_errors() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "lease",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--json",
        ],
        d.path(),
    ));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["protocol"], "lease");
    assert_eq!(v["converged"], true);
    assert_eq!(v["split_brain"], false);
    let f = v["failover_ms"].as_f64().unwrap();
    assert!((100.0..300.0).contains(&f), "{f}");
    fails(
        &bench(
            &[
                "run",
                "-p",
                "lease+renew_deadline_ms=200",
                "-n",
                "5",
                "-s",
                "leader-crash",
            ],
            d.path(),
        ),
        2,
        &["lease.duration_ms", "lease.renew_deadline_ms"],
    );
}
