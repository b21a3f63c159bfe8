//! A real etcd run beside its prediction: `compare` matches a real run's cells with a sweep's
//! by (system spec, nodes, scenario), and the reality page computes its prediction and names
//! what the logs show for each lost term. The real side is the corpus of real etcd 3.4.23 runs
//! committed as `election-reality`'s fixtures, and the committed run `results/reality` when
//! it is there.

use std::path::PathBuf;

use election_report::compare::{compare_results, is_real, quantile_ratio, CompareOptions, Metric};
use election_report::reality::{analyse, PageOptions};
use election_report::Results;

use crate::common::{run_small_sweep, scratch};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../reality/tests/it/fixtures")
        .join(name)
}

/// The committed real run, if this checkout has it.
fn committed_run() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../results/reality");
    d.join("manifest.json").is_file().then_some(d)
}

/// The prediction as `compare`'s docs give it: the spec at etcd's timing, on `ideal`.
fn prediction(name: &str, nodes: Vec<u32>, scenarios: &[&str], seeds: u64) -> Results {
    let dir = scratch(name);
    let spec = election_runner::SweepSpec {
        name: Some(name.into()),
        protocols: Some(vec!["etcd@3.4".into()]),
        nodes: Some(nodes),
        scenarios: Some(scenarios.iter().map(|s| s.to_string()).collect()),
        nets: Some(vec!["ideal".into()]),
        seeds: Some(seeds),
        params: vec![
            ("heartbeat_ms".into(), vec!["100".into()]),
            ("detect_timeout_ms".into(), vec!["1000".into()]),
            ("detect_jitter_ms".into(), vec!["1000".into()]),
        ],
        ..Default::default()
    };
    run_small_sweep(&spec, &dir, "election-bench sweep");
    Results::load(&dir).unwrap()
}

#[test]
fn compare_matches_a_real_run_by_spec_nodes_and_scenario() {
    let real = Results::load(&fixture("etcd-3.4.23-n3-kill-pause")).unwrap();
    assert!(is_real(&real));
    let pred = prediction(
        "reality-compare",
        vec![3, 5],
        &["leader-crash", "leader-pause"],
        20,
    );
    assert!(!is_real(&pred));
    let c = compare_results(&pred, &real, &CompareOptions::default()).unwrap();
    // Both real cells found their simulated cell although the real net is `loopback`.
    assert_eq!(c.common, 2);
    assert!(c.only_b.is_empty(), "{:?}", c.only_b);
    assert_eq!(c.only_a.len(), 2, "the 5-member cells: {:?}", c.only_a);
    assert_eq!(c.opts.ignore, vec!["net".to_string()]);
    // Three trials a cell is below the bootstrap's minimum: nothing tested, nothing invented.
    assert!(c.changes.is_empty());
    // Without the rule, nothing would match.
    let sim_only = compare_results(&pred, &pred, &CompareOptions::default()).unwrap();
    assert_eq!(sim_only.opts.ignore, Vec::<String>::new());
}

#[test]
fn the_committed_run_compares_with_intervals_and_without_messages() {
    let Some(dir) = committed_run() else { return };
    let real = Results::load(&dir).unwrap();
    let pred = prediction(
        "reality-compare-committed",
        real.sizes(),
        &real
            .scenarios()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        200,
    );
    let c = compare_results(&pred, &real, &CompareOptions::default()).unwrap();
    assert_eq!(c.common, real.summary.len());
    assert!(c.only_b.is_empty());
    for ch in &c.changes {
        assert!(ch.metric.measured_in_real(), "{:?}", ch.metric);
        assert!(ch.label.contains("[B: net=loopback]"), "{}", ch.label);
        assert!(ch.lo <= ch.diff() && ch.diff() <= ch.hi, "{ch:?}");
    }
    let failover = c
        .changes
        .iter()
        .filter(|ch| ch.metric == Metric::FailoverP50)
        .count();
    assert_eq!(
        failover,
        real.summary.len(),
        "every experiment's p50 is tested"
    );
}

#[test]
fn a_ratio_of_quantiles_has_its_interval() {
    let a: Vec<f64> = (0..200).map(|i| 1000.0 + f64::from(i) * 5.0).collect();
    let same = quantile_ratio(&a, &a, 0.5, &CompareOptions::default(), "x").unwrap();
    assert_eq!(same.point, 1.0);
    assert!(same.lo <= 1.0 && 1.0 <= same.hi, "{same:?}");
    let twice: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
    let r = quantile_ratio(&a, &twice, 0.95, &CompareOptions::default(), "x").unwrap();
    assert!((r.point - 2.0).abs() < 1e-12, "{r:?}");
    assert!(
        r.lo > 1.5 && r.hi < 2.5 && r.lo <= r.point && r.point <= r.hi,
        "{r:?}"
    );
    // Seeded: the same label, the same interval.
    assert_eq!(
        quantile_ratio(&a, &twice, 0.95, &CompareOptions::default(), "x"),
        Some(r)
    );
    assert_eq!(
        quantile_ratio(&a[..4], &a, 0.5, &CompareOptions::default(), "x"),
        None
    );
}

#[test]
fn the_page_computes_its_prediction_and_shows_the_lost_terms() {
    let dir = fixture("etcd-3.4.23-n3-kill-pause");
    let opts = PageOptions {
        seeds: 100,
        ..PageOptions::default()
    };
    let a = analyse(&dir, &opts).unwrap();
    assert_eq!(a.machine.etcd_version, "3.4.23");
    assert_eq!(a.machine.cores, 2);
    assert_eq!(a.experiments.len(), 2);
    let kill = &a.experiments[0];
    assert_eq!(kill.key.scenario, "leader-crash");
    assert_eq!((kill.real_trials, kill.pred_trials), (3, 100));
    // Kill 2 lost term 4: a split vote, and m1 ignored m3's vote within its lease.
    assert_eq!((kill.second_term.k, kill.second_term.n), (1, 3));
    assert_eq!(kill.lost_by, (1, 1));
    assert_eq!(kill.lost[0].seed, 2);
    assert_eq!(kill.lost[0].failover_ms, Some(2168.0));
    // The prediction is the simulator's, the same as `run`'s for those seeds.
    let pred = kill.pred.unwrap();
    assert!(pred.p50 > 1000.0 && pred.p50 < 2000.0, "{pred:?}");
    // Too few real trials for an interval: no ratio is claimed.
    assert_eq!(kill.p50, None);
    assert_eq!(kill.as_predicted(), None);
    let md = a.document().to_markdown();
    assert!(md.contains("term 4: m1 and m3 stood (split vote); m1 ignored m3's MsgVote (lease is not expired: remaining ticks 1)"), "{md}");
    // Not judged is said as such, never as "as predicted".
    assert!(md.contains("**kill, 3 members**: not judged: 3 real failovers (a ratio needs at least 5 on each side"), "{md}");
    assert!(!md.contains("Every experiment is as predicted"), "{md}");
    assert!(md.contains("not regenerated byte for byte"), "{md}");
    assert!(md.contains("3.53 to 5.01"), "the load range: {md}");
    // Deterministic: the same run gives the same page.
    assert_eq!(analyse(&dir, &opts).unwrap().document().to_markdown(), md);
    // A sweep is not a real run.
    let e = analyse(&scratch("reality-missing"), &opts).unwrap_err();
    assert!(!e.to_string().is_empty());
}

#[test]
fn the_page_of_a_partition_shows_the_deposed_leaders_lingering() {
    let a = analyse(
        &fixture("etcd-3.4.23-n3-partition"),
        &PageOptions {
            seeds: 50,
            ..PageOptions::default()
        },
    )
    .unwrap();
    let cut = &a.experiments[0];
    assert!(cut.cuts_links);
    let (real, pred) = cut.lingering;
    assert!(real.unwrap().p50 > 0.0 && pred.unwrap().p50 > 0.0);
    let md = a.document().to_markdown();
    assert!(md.contains("The deposed leader's lingering"), "{md}");
}
