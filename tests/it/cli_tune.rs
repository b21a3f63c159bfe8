//! End-to-end test of `tune`: its advice, and what it says when the limits contradict.

use crate::common;

use std::fs;

use common::{bench, fails, ok, text};

/// `tune` on a tiny budget (minute-long steady windows): the page, the chart, every point in
/// the CSV, the same bytes on a rerun; contradictory limits answered as such; bad input named.
#[test]
fn tune_writes_its_advice_and_says_when_limits_contradict() {
    let dir = tempfile::tempdir().unwrap();
    let args = |out: &str, p99: &str| -> Vec<String> {
        [
            "tune",
            "--protocols",
            "raft,lease",
            "--nodes",
            "3",
            "--hours",
            "2",
            "--max-hours",
            "4",
            "--crash-trials",
            "30",
            "--rounds",
            "1",
            "--timeouts",
            "60-240",
            "--ratios",
            "5",
            "--set",
            "steady_ms=60000",
            "--set",
            "noise.pause_per_hour=7",
            "--max-p99-ms",
            p99,
            "--quiet",
            "--out",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |out: &str, p99: &str| {
        let a = args(out, p99);
        bench(
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        )
    };
    let out = ok(&run("t1", "2000"));
    assert!(
        out.contains("tune:") && out.contains("raft") && out.contains("lease"),
        "{out}"
    );
    // A quick run says on standard output, next to its advice, what its budget cannot show:
    // 4 steady hours bound no rate near 1 a day, 30 crash trials no p99.
    assert!(
        out.contains("note: --max-hours 4 cannot show the limit of 1 false elections a day")
            && out.contains("30 leader-crash trials per point cannot bound a p99"),
        "{out}"
    );
    let advice = fs::read_to_string(dir.path().join("t1/ADVICE.md")).unwrap();
    assert!(advice.starts_with("# Timeout advice"), "{advice}");
    for needle in [
        "## The answer",
        "## The frontier",
        "etcd",
        "hashicorp/raft",
        "Consul",
        "client-go",
        "cannot show the limit",
        // The disk curve: its section, each preset, etcd's line.
        "## Is my disk good enough?",
        "`etcd-hdd`",
        "`aws-io2`",
        "over etcd's line",
        // The noise as the trials ran it, the user's rate over the busy profile's.
        "GC pauses 7 an hour per node, each `lognormal:5:1` ms long; disk stalls 12 an hour",
    ] {
        assert!(advice.contains(needle), "{needle:?} not in ADVICE.md");
    }
    let png = fs::read(dir.path().join("t1/frontier.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let png = fs::read(dir.path().join("t1/disks.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let csv = fs::read_to_string(dir.path().join("t1/points.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("protocol,timeout_ms,ratio,settings"));
    // Every grid timeout of both protocols, plus refinements.
    assert!(rows.len() > 1 + 2 * 9, "{}", rows.len());
    assert!(rows
        .iter()
        .any(|r| r.contains(",true,") && r.starts_with("raft,")));
    // Deterministic: a rerun gives the same bytes.
    ok(&run("t2", "2000"));
    for f in ["points.csv", "ADVICE.md", "frontier.svg", "disks.svg"] {
        let a = fs::read(dir.path().join("t1").join(f)).unwrap();
        let b = fs::read(dir.path().join("t2").join(f)).unwrap();
        // The page names its own output directory in the reproduce command.
        let norm = |v: Vec<u8>| text(&v).replace("--out t2", "--out t1");
        assert_eq!(norm(a), norm(b), "{f} differs between reruns");
    }
    // No timing fails over within 1 ms: the page says no setting meets both limits.
    ok(&run("t3", "1"));
    let advice = fs::read_to_string(dir.path().join("t3/ADVICE.md")).unwrap();
    assert!(advice.contains("no setting met both limits"), "{advice}");
    assert!(advice.contains("The closest evaluated points"), "{advice}");
    assert!(
        advice.contains("no evaluated point's p99 meets the failover limit"),
        "{advice}"
    );
    // Bad input: named, exit 2, nothing written.
    fails(
        &bench(&["tune", "--ratios", "1", "--out", "bad"], dir.path()),
        2,
        &["--ratios 1"],
    );
    fails(
        &bench(
            &["tune", "--set", "raft.timeout_ms=100-200", "--out", "bad"],
            dir.path(),
        ),
        2,
        &["raft.timeout_ms", "tune sets"],
    );
    fails(
        &bench(
            &[
                "tune",
                "--protocols",
                "raft+timeout_ms=100-200",
                "--out",
                "bad",
            ],
            dir.path(),
        ),
        2,
        &["raft+timeout_ms=100-200", "drop the option"],
    );
    fails(
        &bench(&["tune", "--timeouts", "500", "--out", "bad"], dir.path()),
        2,
        &["--timeouts"],
    );
    assert!(!dir.path().join("bad").exists());
}
