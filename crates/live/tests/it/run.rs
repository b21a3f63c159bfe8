//! `run_live`: the runner's catalog and CSV format, live.

use election_live::{run_live, LiveArgs};

fn args(protocol: &str, scenario: &str, dir: &std::path::Path) -> LiveArgs {
    let mut a = LiveArgs::new(protocol, 5, scenario);
    a.trials = 1;
    a.first_seed = 3;
    a.out = dir.to_path_buf();
    // Short trials: the cluster is quiet well before these bounds.
    a.params = vec![
        ("settle_ms".into(), "500".into()),
        ("horizon_ms".into(), "6000".into()),
    ];
    a
}

#[test]
fn leader_crash_writes_live_rows_in_the_results_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = 0;
    let out = run_live(&args("bully", "leader-crash", dir.path()), |_, _| seen += 1).unwrap();
    assert_eq!(seen, 1);
    let row = &out.rows[0];
    assert_eq!((row.mode.as_str(), row.net.as_str()), ("live", "loopback"));
    assert!(row.converged && row.leader == Some(4), "{row:?}");
    // The fault instant is the runner's: fault_at_ms + U[0, fault_jitter_ms] (1200 ms and
    // 300 ms: four longest election timeouts and one).
    let t = out.reports[0].metrics.reference_ms;
    assert!((1200.0..=1500.0).contains(&t), "{t}");
    let csv = std::fs::read_to_string(dir.path().join("trials.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("mode,protocol,nodes,scenario,net,seed,converged,leader,"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("live,bully,5,leader-crash,loopback,3,true,4,"));
    let summary = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
    assert!(summary
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("bully,5,leader-crash,loopback,1,1,"));
    // After the results schema, the live-only column: nothing but the cluster spoke.
    for file in [&csv, &summary] {
        let mut lines = file.lines();
        assert!(
            lines.next().unwrap().ends_with(",datagrams_rejected"),
            "{file}"
        );
        assert!(lines.next().unwrap().ends_with(",0"), "{file}");
    }
}

/// A live verdict counts recoveries in the trial's own election timeout, as the simulator
/// does (it once counted in a fixed 150 ms whatever `detect_timeout_ms` was).
#[test]
fn recovered_timeouts_count_in_the_trials_detect_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args("bully", "leader-crash", dir.path());
    // A longer detection window, a settle window of its size, and a horizon with room for the
    // fault (1600 + U[0, 400] ms) and the verdict's hold span (ten windows of 400 ms).
    a.params
        .retain(|(k, _)| k != "settle_ms" && k != "horizon_ms");
    a.params.push(("detect_timeout_ms".into(), "300".into()));
    a.params.push(("detect_jitter_ms".into(), "100".into()));
    a.params.push(("settle_ms".into(), "800".into()));
    a.params.push(("horizon_ms".into(), "8000".into()));
    let out = run_live(&a, |_, _| {}).unwrap();
    let row = &out.rows[0];
    let failover = row.failover_ms.expect("a quorum leader after the fault");
    assert!(failover > 200.0, "{row:?}");
    let want = (failover / 300.0).ceil() as u32;
    assert_eq!(row.recovered_timeouts, Some(want), "{row:?}");
}

/// The partition scenario needs the leader at the fault instant: live mode reads it from the
/// running cluster. Raft with the leader on the minority side: the majority elects a new
/// leader, the stranded one keeps believing (no CheckQuorum) until the heal.
#[test]
fn partition_scenario_reads_the_live_leader() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args("raft", "partition-leader-minority", dir.path());
    a.params.push(("outage_ms".into(), "1000".into()));
    let out = run_live(&a, |_, _| {}).unwrap();
    let m = &out.reports[0].metrics;
    assert!(m.converged, "{m:?}");
    assert!(
        m.minority_leader_ms > 0.0,
        "the old leader was stranded: {m:?}"
    );
    assert_eq!(m.same_epoch_leaders, 0);
}

#[test]
fn usage_errors_are_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_live(&args("paxos", "leader-crash", dir.path()), |_, _| {}).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("bully, ring, raft"),
        "{e}"
    );
    let e = run_live(&args("bully", "meteor", dir.path()), |_, _| {}).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("leader-crash"),
        "{e}"
    );
    // What only the simulator models is refused, not run as something else: a steady hour
    // would have measured a cold start, and noise would have been dropped.
    let e = run_live(&args("raft", "steady-noise", dir.path()), |_, _| {}).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("steady-noise"),
        "{e}"
    );
    let mut a = args("raft", "leader-crash", dir.path());
    a.params.push(("noise.profile".into(), "busy".into()));
    let e = run_live(&a, |_, _| {}).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("noise"), "{e}");
}

/// A socket that cannot be bound is named with the live network, not the profile the cell
/// was planned with (`ideal` without `--net`, `lan` with `--net lan`).
#[test]
fn a_bind_error_names_the_live_network() {
    let dir = tempfile::tempdir().unwrap();
    for (net, want) in [
        (None, "/ loopback, seed 3"),
        (Some("lan"), "/ loopback+lan, seed 3"),
    ] {
        let mut a = args("bully", "leader-crash", dir.path());
        a.net = net.map(String::from);
        // TEST-NET-1 (RFC 5737): never an address of this machine.
        a.bind = "192.0.2.1".parse().unwrap();
        let e = run_live(&a, |_, _| {}).unwrap_err();
        let m = e.to_string();
        assert!(!e.is_usage(), "{m}");
        assert!(
            m.contains(want) && m.contains("binding node 1's UDP socket to 192.0.2.1:0"),
            "{m}"
        );
        assert!(!m.contains("ideal") && !m.contains("/ lan,"), "{m}");
    }
}

/// The workload runs live too (the hub plays the shared resource): in `leader-pause` the frozen
/// leader's due write leaves when it wakes — refused by its Raft term, taken from a bully
/// coordinator, which has no token to fence with. The stale/fenced write is the seeds' GC-pause
/// story; every other write comes from the leader of the moment.
#[test]
fn leader_pause_live_reproduces_the_gc_pause_write() {
    for (protocol, stale, fenced) in [("raft", 0, 1), ("bully", 1, 0)] {
        let dir = tempfile::tempdir().unwrap();
        let out = run_live(&args(protocol, "leader-pause", dir.path()), |_, _| {}).unwrap();
        let row = &out.rows[0];
        assert_eq!(row.writes_stale, Some(stale), "{protocol}: {row:?}");
        assert_eq!(row.writes_fenced, Some(fenced), "{protocol}: {row:?}");
        assert!(row.writes_ok.unwrap() > 20, "{protocol}: {row:?}");
        assert!(row.paused_leader_ms > 500.0, "{protocol}: {row:?}");
    }
}

/// Majority commit needs acknowledgements over the network, which live mode does not model:
/// it is refused as a usage error naming the parameter.
#[test]
fn majority_commit_is_refused_live() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args("raft", "leader-crash", dir.path());
    a.params.push(("workload.commit".into(), "majority".into()));
    let e = run_live(&a, |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("workload.commit"), "{e}");
}

/// Rows are on disk as each trial finishes, so a run killed after trial k keeps k rows: when
/// the progress callback hears of trial k, trials.csv already holds it.
#[test]
fn each_finished_trial_is_on_disk_before_the_next_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args("bully", "leader-crash", dir.path());
    a.trials = 2;
    let mut seen = Vec::new();
    run_live(&a, |row, _| {
        let csv = std::fs::read_to_string(dir.path().join("trials.csv")).unwrap();
        let summary = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
        seen.push((row.seed, csv.lines().count(), summary.lines().count()));
    })
    .unwrap();
    // The header and one row per finished trial; the summary's one cell from the first on.
    assert_eq!(seen, [(3, 2, 2), (4, 3, 2)]);
}
