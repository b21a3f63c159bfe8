//! End-to-end tests of `report`: rendered after a sweep and again from the results, charts
//! that follow the sweep, and the checks on a results directory (missing, foreign, edited).

use crate::common;

use std::fs;

use common::{bench, corrupt, fails, listing, ok, text, tiny, TINY};

#[test]
fn sweep_renders_the_report_and_report_rerenders_it_from_the_results() {
    let d = tempfile::tempdir().unwrap();
    let mut args = TINY.to_vec();
    args.extend(["--name", "tiny"]);
    let out = ok(&bench(&args, d.path()));
    assert!(out.contains("report: reports/tiny/REPORT.md"), "{out}");
    let report = d.path().join("reports/tiny");
    let md = fs::read_to_string(report.join("REPORT.md")).unwrap();
    assert!(md.contains("## 1. Decision matrix"), "{md}");
    assert!(md.contains("## 3. Findings"), "{md}");
    assert!(report.join("APPENDIX.md").is_file() && report.join("index.html").is_file());
    for chart in ["messages_vs_nodes", "failover_vs_nodes", "split_brain"] {
        for ext in ["svg", "png"] {
            let f = report.join(format!("charts/{chart}.{ext}"));
            assert!(
                fs::metadata(&f).map(|m| m.len() > 1000).unwrap_or(false),
                "{f:?}"
            );
        }
    }
    // `report` on the same results writes the same REPORT.md.
    let again = d.path().join("again");
    ok(&bench(
        &["report", "--results", "results/tiny", "--out", "again"],
        d.path(),
    ));
    assert_eq!(fs::read_to_string(again.join("REPORT.md")).unwrap(), md);
    // The committed form: only trials.csv.gz (trials.csv is not committed). The report reads
    // it transparently and says the same.
    fs::remove_file(d.path().join("results/tiny/trials.csv")).unwrap();
    ok(&bench(
        &["report", "--results", "results/tiny", "--out", "from-gz"],
        d.path(),
    ));
    assert_eq!(
        fs::read_to_string(d.path().join("from-gz/REPORT.md")).unwrap(),
        md
    );
    // --no-report writes results only.
    let mut args = TINY.to_vec();
    args.extend(["--name", "quiet", "--no-report"]);
    ok(&bench(&args, d.path()));
    assert!(!d.path().join("reports/quiet").exists());
}

/// The README's custom sweep, tiny: the varied parameter gets its own charts, sizes stay on
/// the x axis because they vary, no chart without data is drawn, and the `net.loss` that
/// `lossy-leader-crash` overrides is warned about before the sweep runs.
#[test]
fn charts_follow_the_sweep() {
    let d = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            "sweep",
            "--name",
            "loss",
            "--protocols",
            "bully+quorum,raft+pre_vote",
            "--nodes",
            "5,9",
            "--scenarios",
            "lossy-leader-crash",
            "--set",
            "net.loss=0,0.05,0.1",
            "--seeds",
            "4",
            "--quiet",
        ],
        d.path(),
    );
    ok(&o);
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: net.loss=0,0.05,0.1 is overridden in scenario lossy-leader-crash")
            && err.contains("fault_loss"),
        "{err}"
    );
    let charts = d.path().join("reports/loss/charts");
    let names = listing(&charts);
    for stem in [
        "vs-net-loss-lossy-leader-crash-n5",
        "vs-net-loss-lossy-leader-crash-n9",
        "messages_vs_nodes",
        "failover_vs_nodes",
    ] {
        assert!(names.contains(&format!("{stem}.svg")), "{stem}: {names:?}");
    }
    // No recovery or flapping scenario ran: no leader-changes chart, not an empty one.
    assert!(
        !names.iter().any(|n| n.starts_with("leader_changes")),
        "{names:?}"
    );
    let svg = fs::read_to_string(charts.join("vs-net-loss-lossy-leader-crash-n5.svg")).unwrap();
    for label in [
        "net.loss",
        "\n0.05\n",
        "bully+quorum",
        "raft+pre_vote",
        "failover_ms (ms)",
    ] {
        assert!(svg.contains(label), "{label} not in the chart");
    }
    let md = fs::read_to_string(d.path().join("reports/loss/REPORT.md")).unwrap();
    assert!(md.contains("charts/vs-net-loss-lossy-leader-crash-n5.svg"));

    // One size, and a raft-only parameter: no size axis, and bully is run and drawn once.
    let o = bench(
        &[
            "sweep",
            "--name",
            "rt",
            "--protocols",
            "bully,raft",
            "--nodes",
            "5",
            "--scenarios",
            "leader-crash",
            "--set",
            "raft.timeout_ms=150-300,300-600",
            "--seeds",
            "3",
            "--quiet",
        ],
        d.path(),
    );
    ok(&o);
    assert!(text(&o.stderr).is_empty(), "{}", text(&o.stderr));
    let trials = fs::read_to_string(d.path().join("results/rt/trials.csv")).unwrap();
    let bully = trials.lines().filter(|l| l.contains(",bully,")).count();
    let raft = trials.lines().filter(|l| l.contains(",raft,")).count();
    assert_eq!((bully, raft), (3, 6), "{trials}");
    let names = listing(&d.path().join("reports/rt/charts"));
    assert!(
        names.contains(&"vs-raft-timeout-ms-leader-crash-n5.svg".to_string()),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("_vs_nodes")), "{names:?}");
    let svg = fs::read_to_string(
        d.path()
            .join("reports/rt/charts/vs-raft-timeout-ms-leader-crash-n5.svg"),
    )
    .unwrap();
    assert!(svg.contains("\n300-600\n") && !svg.contains("\nbully\n"));
    let md = fs::read_to_string(d.path().join("reports/rt/REPORT.md")).unwrap();
    assert!(
        md.contains("does not apply to `bully`"),
        "report lacks the note"
    );
    let legend = fs::read_to_string(d.path().join("reports/rt/charts/failover_cdf.svg")).unwrap();
    assert_eq!(legend.matches("\nbully\n").count(), 1, "bully drawn twice");
}

#[test]
fn report_refuses_a_missing_or_foreign_results_directory() {
    let d = tempfile::tempdir().unwrap();
    fails(
        &bench(&["report", "--results", "nowhere"], d.path()),
        2,
        &["nowhere", "does not exist"],
    );
    let foreign = d.path().join("foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("trials.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("summary.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("manifest.json"), "{}").unwrap();
    let o = bench(&["report", "--results", "foreign"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// Results are checked against what the sweep recorded wherever a finished directory is read:
/// an edited `trials.csv` is refused by `merge`, `report`, `compare` and `--resume` (which
/// would otherwise re-certify it with a new hash), and a `summary.csv` edited within every
/// range is refused by `report` and `compare`, which recompute it from the trials.
#[test]
fn recorded_hashes_and_the_summary_are_checked_wherever_results_are_read() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "good", &["--no-report"]));
    ok(&tiny(d.path(), "s1", &["--no-report", "--shard", "1/2"]));
    ok(&tiny(d.path(), "s2", &["--no-report", "--shard", "2/2"]));
    let copy = |from: &str, name: &str| {
        let dir = d.path().join(name);
        fs::create_dir_all(&dir).unwrap();
        for f in [
            "trials.csv",
            "trials.csv.gz",
            "summary.csv",
            "manifest.json",
        ] {
            fs::copy(d.path().join(from).join(f), dir.join(f)).unwrap();
        }
        dir
    };
    let hash_msg = ["trials.csv is not the file the sweep wrote", "SHA-256"];
    // An edited trial value (a plausible one: another election time).
    let edited = copy("good", "edited");
    let t = fs::read_to_string(edited.join("trials.csv")).unwrap();
    let line = t.lines().position(|l| l.contains(",true,")).unwrap() + 1;
    corrupt(&edited.join("trials.csv"), line, "elect_ms", "1");
    fails(
        &bench(&["report", "--results", "edited", "--out", "rep"], d.path()),
        1,
        &hash_msg,
    );
    assert!(!d.path().join("rep").exists());
    fails(
        &bench(&["compare", "good", "edited", "--out", "cmp"], d.path()),
        1,
        &hash_msg,
    );
    let before = fs::read(edited.join("manifest.json")).unwrap();
    fails(
        &tiny(d.path(), "edited", &["--no-report", "--resume"]),
        1,
        &hash_msg,
    );
    assert!(fs::read(edited.join("manifest.json")).unwrap() == before);
    // Only the compressed copy, as committed: decompressed and checked the same way.
    let gz_only = copy("good", "gz-only");
    fs::remove_file(gz_only.join("trials.csv")).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(gz_only.join("manifest.json")).unwrap()).unwrap();
    m["trials_csv"]["sha256"] = "0".repeat(64).into();
    fs::write(gz_only.join("manifest.json"), m.to_string()).unwrap();
    fails(
        &bench(
            &["report", "--results", "gz-only", "--out", "rep"],
            d.path(),
        ),
        1,
        &["trials.csv.gz is not the file the sweep wrote"],
    );
    // A shard whose trials no longer match its manifest.
    let s1 = copy("s1", "s1-edited");
    corrupt(&s1.join("trials.csv"), line.min(3), "msgs_total", "7");
    fails(
        &bench(&["merge", "--out", "m", "s1-edited", "s2"], d.path()),
        1,
        &hash_msg,
    );
    // A statistic edited within its range: the trials give another value.
    let summary = copy("good", "summary");
    corrupt(&summary.join("summary.csv"), 2, "msgs_election_mean", "1");
    fails(
        &bench(
            &["report", "--results", "summary", "--out", "rep"],
            d.path(),
        ),
        1,
        &[
            "summary.csv line 2",
            "msgs_election_mean",
            "the cell's trials give",
        ],
    );
    fails(
        &bench(&["compare", "good", "summary", "--out", "cmp"], d.path()),
        1,
        &["summary.csv line 2"],
    );
    // Untouched results still pass everywhere.
    ok(&bench(
        &["report", "--results", "good", "--out", "rep"],
        d.path(),
    ));
    ok(&bench(
        &["compare", "good", "good", "--out", "cmp"],
        d.path(),
    ));
}

#[test]
fn report_refuses_a_summary_out_of_range_or_inconsistent() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "r", &["--no-report"]));
    let dir = d.path().join("r");
    let summary = fs::read(dir.join("summary.csv")).unwrap();
    corrupt(&dir.join("summary.csv"), 2, "split_brain_rate", "1.2");
    fails(
        &bench(&["report", "--results", "r", "--out", "rep"], d.path()),
        2,
        &[
            "summary.csv, line 2",
            "`split_brain_rate`",
            "\"1.2\"",
            "above 1",
        ],
    );
    fs::write(dir.join("summary.csv"), &summary).unwrap();
    let m = fs::read_to_string(dir.join("manifest.json")).unwrap();
    fs::write(
        dir.join("manifest.json"),
        m.replace("\"trials\": 16", "\"trials\": 17"),
    )
    .unwrap();
    fails(
        &bench(&["report", "--results", "r", "--out", "rep"], d.path()),
        2,
        &["manifest.json says 17 trials"],
    );
}
