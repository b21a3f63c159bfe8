//! `calibrate` end to end, small: the loopback is measured, both modes run, and every file of
//! the report is written with the numbers it promises.

use election_live::calibrate::{calibrate, measure_loopback, CalibrateArgs, FITTED_NET};
use election_sim::Latency;

#[test]
fn loopback_latency_is_measured_and_fitted() {
    let l = measure_loopback(200, "127.0.0.1".parse().unwrap()).unwrap();
    assert_eq!(l.one_way_ms.len() + l.lost, 200);
    assert!(l.lost < 10, "{} lost on loopback", l.lost);
    // Loopback is fast: a median one-way latency well under a millisecond.
    assert!(
        l.quantile(0.5) > 0.0 && l.quantile(0.5) < 1.0,
        "{}",
        l.quantile(0.5)
    );
    match l.fit {
        Latency::LogNormal { median_ms, sigma } => {
            assert!(
                median_ms > 0.0 && median_ms < 1.0 && sigma >= 0.0,
                "{:?}",
                l.fit
            )
        }
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_small_calibration_writes_the_whole_report() {
    let dir = tempfile::tempdir().unwrap();
    let args = CalibrateArgs {
        protocols: vec!["bully".into()],
        trials: 2,
        sim_trials: 4,
        pings: 100,
        out: dir.path().to_path_buf(),
        params: vec![("settle_ms".into(), "300".into())],
        ..CalibrateArgs::default()
    };
    let mut lines = 0;
    let out = calibrate(&args, |_| lines += 1).unwrap();
    // The CLI has the report render the page from what was measured; so does this test.
    election_report::calibration::write_calibration_page(&out.page, dir.path()).unwrap();
    assert!(lines > 0);
    let c = &out.page.protocols[0];
    assert_eq!((c.sim.trials, c.live.trials), (4, 2));
    assert_eq!(
        c.live.failover_ms.len(),
        2,
        "both live trials had a quorum leader after the fault"
    );
    assert!(c.p50_ratio.is_some() && c.p50_ratio_ci.is_some());
    assert!(!c.timer_lateness_ms.is_empty());
    for f in [
        "trials.csv",
        "summary.csv",
        "loopback.csv",
        "calibration.csv",
        "failover.svg",
        "failover.png",
        "README.md",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    // The two calibration tables: a header and one row per protocol (loopback: one row).
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
    let cal = read("calibration.csv");
    let cal: Vec<&str> = cal.lines().collect();
    assert_eq!(cal.len(), 2, "{cal:?}");
    assert!(cal[0].starts_with("protocol,nodes,scenario,trials,sim_led,"));
    assert!(
        cal[1].starts_with("bully,5,leader-crash,2,4,2,"),
        "{}",
        cal[1]
    );
    assert_eq!(cal[0].split(',').count(), cal[1].split(',').count());
    let lo = read("loopback.csv");
    let lo: Vec<&str> = lo.lines().collect();
    assert_eq!(lo.len(), 2, "{lo:?}");
    assert!(
        lo[1].starts_with("100,") && lo[1].ends_with(&c_fit(&out)),
        "{}",
        lo[1]
    );
    let trials = std::fs::read_to_string(dir.path().join("trials.csv")).unwrap();
    assert_eq!(
        trials
            .lines()
            .filter(|l| l.starts_with("sim,bully,5,leader-crash,"))
            .count(),
        4
    );
    assert!(trials.contains(&format!("sim,bully,5,leader-crash,{FITTED_NET},")));
    assert_eq!(
        trials
            .lines()
            .filter(|l| l.starts_with("live,bully,5,leader-crash,loopback,"))
            .count(),
        2
    );
    let md = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    assert!(
        md.contains("| bully |") && md.contains("Timer granularity"),
        "{md}"
    );
    let png = std::fs::read(dir.path().join("failover.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

fn c_fit(out: &election_live::CalibrationOutcome) -> String {
    election_runner::net::format_latency(&out.page.loopback.fit)
}
