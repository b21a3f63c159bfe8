//! End-to-end test of `live`: a bounded trial over loopback writing live rows.

use crate::common;

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{bench, fails, listing, ok, BIN};

#[test]
fn live_runs_a_bounded_trial_over_loopback_and_writes_live_rows() {
    let d = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = ok(&bench(
        &[
            "live",
            "-p",
            "raft",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--trials",
            "1",
            "--out",
            "live",
        ],
        d.path(),
    ));
    assert!(out.contains("seed 0: converged true"), "{out}");
    // A summary at the end.
    for line in [
        "summary          raft | 3 nodes | leader-crash | 1 live trials",
        "converged        1 of 1",
        "failover         p50 ",
    ] {
        assert!(out.contains(line), "{line:?} not in: {out}");
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    // Without --out: nothing in the working directory (results/ is tracked), the rows go
    // into a new directory per run under the temporary directory, and the output says where.
    let tmp = tempfile::tempdir().unwrap();
    let live_run = || {
        Command::new(BIN)
            .args([
                "live",
                "-p",
                "bully",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--trials",
                "1",
            ])
            .current_dir(d.path())
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap()
    };
    let printed = ok(&live_run());
    assert_eq!(
        listing(d.path()),
        ["live"],
        "live wrote into the working directory"
    );
    let runs = || listing(&tmp.path().join("election-bench/live"));
    assert_eq!(runs().len(), 1, "{printed}");
    let rows = tmp
        .path()
        .join("election-bench/live")
        .join(&runs()[0])
        .join("trials.csv");
    assert!(rows.exists(), "{printed}");
    assert!(
        printed.contains(&format!("wrote {}", rows.display())),
        "{printed}"
    );
    // A second run leaves the first one's files alone.
    let first = fs::read(&rows).unwrap();
    ok(&live_run());
    assert_eq!(runs().len(), 2, "{:?}", runs());
    assert_eq!(fs::read(&rows).unwrap(), first);
    let trials = fs::read_to_string(d.path().join("live/trials.csv")).unwrap();
    assert!(trials
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("live,raft,3,leader-crash,"));
    fails(
        &bench(
            &["live", "-p", "paxos", "-n", "3", "-s", "leader-crash"],
            d.path(),
        ),
        2,
        &["paxos", "bully, ring, raft"],
    );
}
