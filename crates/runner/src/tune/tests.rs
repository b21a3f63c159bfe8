//! The frontier, the verdicts, the intervals and the mappings, on constructed inputs.

use super::mapping::{client_go, consul, etcd, go_duration, hashicorp, map};
use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A measured point with `fe` false elections over `hours`, and `n` crash trials whose
/// failover times are `1..=n` ms scaled so that the p99 is about `p99`.
fn pt(t: f64, fe: u64, hours: f64, p99: f64, n: usize) -> Point {
    let mut failover: Vec<f64> = (1..=n)
        .map(|i| i as f64 * p99 / (0.99 * n as f64))
        .collect();
    failover.sort_by(f64::total_cmp);
    Point {
        protocol: "raft".into(),
        kind: ProtocolKind::Raft,
        timeout_ms: t,
        ratio: 5.0,
        phase: "coarse".into(),
        hours,
        false_elections: fe,
        elections_started: fe,
        leaderless_ms: 0.0,
        crash_trials: n as u64,
        failover_ms: failover,
        budget_exceeded: 0,
        faults_skipped: 0,
        unsettled_starts: 0,
        steady_runs: hours.round() as u64,
        crash_runs: n as u64,
    }
}

#[test]
fn poisson_intervals_are_garwoods() {
    // Published exact 95 % limits (e.g. Ulm 1990's table): 0 → [0, 3.689], 1 → [0.0253,
    // 5.572], 10 → [4.795, 18.39].
    let (lo, hi) = poisson_ci(0);
    assert_eq!(lo, 0.0);
    assert!(close(hi, 3.689, 1e-3), "{hi}");
    let (lo, hi) = poisson_ci(1);
    assert!(
        close(lo, 0.0253, 1e-4) && close(hi, 5.572, 1e-3),
        "{lo} {hi}"
    );
    let (lo, hi) = poisson_ci(10);
    assert!(
        close(lo, 4.795, 1e-3) && close(hi, 18.39, 1e-2),
        "{lo} {hi}"
    );
}

#[test]
fn the_frontier_keeps_exactly_the_unbeaten_points() {
    let mut pts = vec![
        pt(50.0, 500, 10.0, 100.0, 1000), // 0: fastest, noisiest: on
        pt(100.0, 10, 10.0, 200.0, 1000), // 1: on
        pt(150.0, 20, 10.0, 300.0, 1000), // 2: beaten by 1 on both: off
        pt(200.0, 0, 10.0, 400.0, 1000),  // 3: quietest: on
        pt(300.0, 0, 10.0, 600.0, 1000),  // 4: as quiet as 3 but slower: off
        pt(50.0, 500, 10.0, 100.0, 1000), // 5: equal to 0 on both: kept with it
        pt(20.0, 0, 10.0, 50.0, 1000),    // 6: would beat everything, but not measured
    ];
    pts[6].budget_exceeded = 1;
    let f = frontier(&pts);
    assert_eq!(f, vec![0, 5, 1, 3]);
    // A never-recovered trial makes the p99 infinite once it is more than 1 % of them.
    let mut stuck = pt(10.0, 0, 10.0, 10.0, 100);
    stuck.failover_ms[98] = f64::INFINITY;
    stuck.failover_ms[99] = f64::INFINITY;
    assert_eq!(stuck.failover(0.99), Some(f64::INFINITY));
    assert_eq!(stuck.never_recovered(), 2);
    pts.push(stuck);
    assert_eq!(frontier(&pts), vec![0, 5, 1, 3]);
}

#[test]
fn verdicts_read_the_upper_bounds() {
    let day = 1.0 / 24.0;
    // No false election in 100 hours: the upper bound 3.689/100 = 0.0369/h is under 1/day.
    assert_eq!(
        pt(500.0, 0, 100.0, 900.0, 2000).verdict(day, 2000.0),
        Verdict::Meets
    );
    // None in 4 hours: the estimate meets the limit, the bound (0.92/h) does not.
    assert_eq!(
        pt(500.0, 0, 4.0, 900.0, 2000).verdict(day, 2000.0),
        Verdict::Likely
    );
    // A p99 whose interval is open above (too few trials) is only likely.
    let few = pt(500.0, 0, 100.0, 900.0, 50);
    assert!(few.p99_ci().unwrap().2);
    assert_eq!(few.verdict(day, 2000.0), Verdict::Likely);
    // Over either limit on the estimate: fails.
    assert_eq!(
        pt(500.0, 10, 4.0, 900.0, 2000).verdict(day, 2000.0),
        Verdict::Fails
    );
    assert_eq!(
        pt(500.0, 0, 100.0, 2500.0, 2000).verdict(day, 2000.0),
        Verdict::Fails
    );
    // Unmeasured points always fail, and say how far they are from the limits.
    let mut skipped = pt(500.0, 0, 100.0, 900.0, 2000);
    skipped.faults_skipped = 1;
    assert_eq!(skipped.verdict(day, 2000.0), Verdict::Fails);
    assert!(close(
        pt(500.0, 12, 4.0, 1000.0, 2000).distance(day, 2000.0),
        72.0,
        1e-9
    ));
}

#[test]
fn points_set_each_familys_own_knobs() {
    let get = |kind, key: &str| {
        point_params(kind, 300.0, 5.0)
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    };
    assert_eq!(
        get(ProtocolKind::Raft, "raft.timeout_ms").as_deref(),
        Some("300-600")
    );
    assert_eq!(
        get(ProtocolKind::Raft, "heartbeat_ms").as_deref(),
        Some("60")
    );
    assert_eq!(
        get(ProtocolKind::Bully, "detect_jitter_ms").as_deref(),
        Some("300")
    );
    assert_eq!(get(ProtocolKind::Ring, "raft.timeout_ms"), None);
    assert_eq!(
        get(ProtocolKind::Lease, "lease.renew_deadline_ms").as_deref(),
        Some("200")
    );
    assert_eq!(
        get(ProtocolKind::Lease, "lease.retry_ms").as_deref(),
        Some("60")
    );
    assert_eq!(get(ProtocolKind::Lease, "heartbeat_ms"), None);
    let g = grid(50.0, 5000.0);
    assert_eq!(g.len(), GRID_TIMEOUTS);
    assert_eq!((g[0], g[4], g[8]), (50.0, 500.0, 5000.0));
    assert_eq!(g[1], 88.9);
    assert_eq!(format!("{}", period(137.0, 10.0)), "13.7");
    assert_eq!(format!("{}", sig3(43.3)), "43.3");
}

#[test]
fn etcd_mapping_follows_its_validation() {
    let m = etcd(1000.0, 100.0);
    assert_eq!(m.settings[0].value, "100");
    assert_eq!(m.settings[1].value, "1000");
    assert!(m.valid.is_ok());
    // Ratio 3: under etcd's 5 heartbeat intervals; the heartbeat shortens to T/5.
    let m = etcd(300.0, 100.0);
    assert_eq!(
        (m.settings[0].value.as_str(), m.settings[1].value.as_str()),
        ("60", "300")
    );
    assert!(m.notes.iter().any(|n| n.contains("5 heartbeat intervals")));
    // Whole milliseconds and whole ticks.
    let m = etcd(155.0, 15.5);
    assert_eq!(
        (m.settings[0].value.as_str(), m.settings[1].value.as_str()),
        ("16", "160")
    );
    // Past the 50 s cap.
    assert!(etcd(60_000.0, 6000.0).valid.is_err());
}

#[test]
fn hashicorp_and_consul_mappings() {
    let m = hashicorp(1000.0, 10.0);
    let v: Vec<&str> = m.settings.iter().map(|s| s.value.as_str()).collect();
    assert_eq!(v, ["1s", "1s", "500ms"]);
    assert!(m.valid.is_ok());
    assert!(!m.notes.iter().any(|n| n.contains("not a setting")));
    // The library heartbeats every T/10 to T/5: more often than a point at ratio 3 (T/3),
    // less often than one at ratio 20 (T/20).
    let note = |t: f64, k: f64, want: &str| hashicorp(t, k).notes.iter().any(|n| n.contains(want));
    assert!(note(300.0, 3.0, "more frequent than the tuned point's"));
    assert!(!note(300.0, 3.0, "rarer"));
    assert!(note(3000.0, 20.0, "rarer than the tuned point's"));
    assert!(hashicorp(6.0, 5.0).valid.is_err());
    assert_eq!(consul(300.0).settings[0].value, "1");
    assert!(consul(300.0).notes[0].contains("slower than this point"));
    assert_eq!(consul(2500.0).settings[0].value, "3");
    assert_eq!(consul(5000.0).settings[0].value, "5");
    assert!(consul(5000.0).notes.is_empty());
    assert_eq!(consul(20_000.0).settings[0].value, "10");
}

#[test]
fn client_go_mapping_checks_new_leader_elector() {
    let m = client_go(15_000.0, 2000.0);
    let v: Vec<&str> = m.settings.iter().map(|s| s.value.as_str()).collect();
    assert_eq!(v, ["15s", "10s", "2s"]);
    assert!(m.valid.is_ok());
    // RenewDeadline 100 ms is not above 1.2 x 100 ms.
    assert!(client_go(150.0, 100.0)
        .valid
        .unwrap_err()
        .contains("retryPeriod*JitterFactor"));
    assert_eq!(go_duration(12.5), "12.5ms");
    assert_eq!(map(ProtocolKind::Raft, 500.0, 5.0).len(), 3);
    assert_eq!(map(ProtocolKind::Bully, 500.0, 5.0)[0].settings.len(), 2);
}

#[test]
fn the_gap_to_bisect_lies_between_too_noisy_and_quiet_enough() {
    let day = 1.0 / 24.0;
    let pts = vec![
        pt(500.0, 1, 16.0, 800.0, 1000),  // noisy (1.5 a day), fast
        pt(889.0, 1, 16.0, 1400.0, 1000), // noisy, fast: the largest such
        pt(1580.0, 0, 4.0, 2500.0, 1000), // quiet, too slow: the smallest larger quiet one
        pt(2810.0, 0, 4.0, 4400.0, 1000), // quiet, slower
    ];
    let t = gap(&pts, day, 2000.0).unwrap();
    assert!(close(t, (889.0f64 * 1580.0).sqrt(), 1e-9), "{t}");
    // Nothing fast enough and noisy: nothing to bisect.
    assert_eq!(gap(&pts, day, 500.0), None);
    // Nothing quiet above the noisy ones.
    assert_eq!(gap(&pts[..2], day, 2000.0), None);
    // Neighbours within 2 %: the gap is closed.
    let near = vec![
        pt(889.0, 1, 16.0, 1400.0, 1000),
        pt(900.0, 0, 4.0, 1420.0, 1000),
    ];
    assert_eq!(gap(&near, day, 2000.0), None);
}

/// Each system's rule set is measured at the timing its own settings realise (issue #45: no
/// row pairs one system's verdict with another's settings): etcd's whole ticks at least 5 a
/// timeout, hashicorp/raft's heartbeat at a tenth of its timeout, Consul's whole multiplier.
#[test]
fn rule_sets_run_at_the_systems_own_settings() {
    assert_eq!(etcd(500.0, 167.0).runs_at, (500.0, 5.0));
    assert_eq!(etcd(1000.0, 100.0).runs_at, (1000.0, 10.0));
    assert_eq!(hashicorp(500.0, 3.0).runs_at, (500.0, 10.0));
    assert_eq!(consul(500.0).runs_at, (1000.0, 10.0));
    assert_eq!(consul(2500.0).runs_at, (3000.0, 10.0));
    let sets = crate::tune::rule_sets(crate::protocol::ProtocolKind::Raft, 500.0, 3.0);
    assert_eq!(
        sets,
        vec![
            (mapping::ETCD_RULES, 500.0, 5.0),
            (mapping::HASHICORP_RULES, 500.0, 10.0),
            (mapping::CONSUL_RULES, 1000.0, 10.0)
        ]
    );
}
