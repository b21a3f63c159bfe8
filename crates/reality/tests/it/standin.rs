//! The orchestration end to end without etcd: `run` against the stand-in member
//! (`src/bin/etcd-standin.rs`: etcd's flags, status endpoint, peer header and log lines, with a
//! small Raft of its own), through a kill and restart, a pause and a partition and heal, on
//! three members at 50/300 ms. What is checked is the orchestration and the measurement
//! pipeline, not the stand-in's numbers: every trial is measured and settles, the partition's
//! cut reaches the members (the deposed leader is counted as a minority leader), the files
//! measure again to the same rows, and no member process outlives the run.

use election_reality::replay::replay_dir;
use election_reality::run::{run, Fault, Progress, RealityArgs};

const STANDIN: &str = env!("CARGO_BIN_EXE_etcd-standin");

fn alive(pid: u32) -> bool {
    // A reaped process has no /proc entry; a zombie would still show as one.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn kill_pause_and_partition_run_end_to_end_on_stand_ins() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut args = RealityArgs::new(out.clone());
    args.etcd = STANDIN.into();
    args.heartbeat_ms = 50;
    args.election_ms = 300;
    args.faults = vec![Fault::Kill, Fault::Pause, Fault::Partition];
    args.trials = election_reality::run::Trials::each(1);
    let mut pids = Vec::new();
    let outcome = run(&args, |p| {
        if let Progress::ClusterUp(_, ps) = p {
            pids.extend(ps);
        }
    })
    .unwrap();
    assert_eq!(outcome.protocol, "etcd@3.4");
    assert_eq!(outcome.version.to_string(), "3.4.0");
    assert_eq!(pids.len(), 3);
    let pids_after: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(
        pids_after.is_empty(),
        "members left running: {pids_after:?}"
    );
    let scenarios: Vec<&str> = outcome
        .trials
        .iter()
        .map(|t| t.row.scenario.as_str())
        .collect();
    assert_eq!(
        scenarios,
        ["leader-crash", "leader-pause", "partition-leader-minority"]
    );
    for t in &outcome.trials {
        let r = &t.row;
        assert_eq!(r.mode, "real");
        assert!(t.note.is_empty(), "{}: {}", r.scenario, t.note);
        assert!(r.converged, "{}", r.scenario);
        assert!(
            r.failover_ms.is_some_and(|f| f > 0.0),
            "{}: {:?}",
            r.scenario,
            r.failover_ms
        );
        assert!(r.elections_started >= 1, "{}", r.scenario);
        assert_eq!(r.validate(), Ok(()), "{}", r.scenario);
        // The leader the fault hit is not the one after it (a stand-in's term only grows).
        let (before, after) = (
            t.failover.leader_before.unwrap(),
            t.failover.leader_after.unwrap(),
        );
        assert!(
            after.1 > before.1,
            "{}: {before:?} -> {after:?}",
            r.scenario
        );
    }
    // After the kill, the restarted member joined a fresh health check (the pause's origin is
    // after the kill trial's end); after the pause nothing was restarted, and the agreement
    // that ended it was the partition's health check (its origin is within the pause trial,
    // at or after the SIGCONT: the first poll after it can fall in the same millisecond).
    let w: Vec<_> = outcome.trials.iter().map(|t| t.window).collect();
    assert!(w[1].origin_ms > w[0].end_ms, "{w:?}");
    assert!(w[2].origin_ms <= w[1].end_ms, "{w:?}");
    assert!(w[2].origin_ms >= w[1].calm_ms, "{w:?}");
    // The partitioned leader kept its role until its CheckQuorum deposed it.
    let cut = &outcome.trials[2];
    assert!(cut.row.minority_leader_ms > 0.0);
    assert_eq!(cut.failover.stepped_down, 1);
    // The paused leader was measured as one.
    assert!(outcome.trials[1].row.paused_leader_ms > 0.0);
    // The files alone give the same rows.
    let again = replay_dir(&out).unwrap();
    assert_eq!(again.len(), 3);
    for (a, t) in again.iter().zip(&outcome.trials) {
        assert_eq!(a.row, t.row);
        assert_eq!(a.failover, t.failover);
    }
}
