//! `Sim::run_all` shares the run before the first fault between configurations that differ
//! only in their fault timelines; each report must be exactly the one `Sim::new(cfg)?.run()`
//! gives, every trace record included, and configurations that differ in anything else must
//! not share.
use crate::common;

use std::time::Duration;

use common::Toy;
use election_core::NodeId;
use election_sim::*;

fn alone(cfg: &SimConfig) -> Result<TrialReport, ConfigError> {
    let n = cfg.nodes;
    Sim::new(cfg.clone(), move |id: NodeId| Toy::new(id, n)).map(Sim::run)
}

fn together(cfgs: &[SimConfig]) -> Vec<Result<TrialReport, ConfigError>> {
    let n = cfgs[0].nodes;
    Sim::run_all(cfgs.to_vec(), move |id: NodeId| Toy::new(id, n))
}

/// A traced 5-node trial on a random-latency network with a workload, node time and the
/// wait for a leader, with `faults`.
fn trial(seed: u64, faults: Vec<Fault>) -> SimConfig {
    let mut cfg = SimConfig::new(5, seed);
    cfg.trace = true;
    cfg.net.latency = Latency::LogNormal {
        median_ms: 0.5,
        sigma: 0.4,
    };
    cfg.net.fifo = false;
    cfg.node.cpu = Some(Latency::Exponential { mean_ms: 0.02 });
    cfg.node.fsync = Some(Latency::Constant { ms: 0.3 });
    cfg.workload.interval = Some(Duration::from_millis(7));
    cfg.fault_wait = Some(Duration::from_millis(500));
    cfg.horizon = Duration::from_secs(3);
    cfg.settle = Duration::from_millis(300);
    cfg.faults = faults;
    cfg
}

fn same(a: &TrialReport, b: &TrialReport, what: &str) {
    assert_eq!(a.trace, b.trace, "{what}: the traces differ");
    assert_eq!(a.metrics, b.metrics, "{what}: the metrics differ");
    assert_eq!(a.final_status, b.final_status, "{what}");
    assert_eq!((a.end, a.events), (b.end, b.events), "{what}");
}

#[test]
fn every_report_is_the_one_a_trial_run_alone_gives() {
    use FaultAction::*;
    let crash = |ms| Fault::at_ms(ms, Crash(Selector::Leader));
    for seed in 0..6 {
        let cfgs = vec![
            // Shared: first faults at 200 and 260 ms, the later one queued after the shared run.
            trial(seed, vec![crash(200.0)]),
            trial(
                seed,
                vec![
                    Fault::at_ms(
                        260.0,
                        Pause {
                            node: Selector::Leader,
                            ms: 80.0,
                        },
                    ),
                    Fault::at_ms(200.0, Crash(Selector::Lowest)),
                ],
            ),
            {
                let mut c = trial(
                    seed,
                    vec![
                        crash(200.0),
                        Fault::at_ms(400.0, Recover(Selector::LastCrashed)),
                    ],
                );
                c.reference_fault = Some(1);
                c
            },
            // Not shareable with the others: more loss, no wait for a leader (the reference
            // instant known from the start), a different horizon.
            {
                let mut c = trial(seed, vec![crash(200.0)]);
                c.net.loss = 0.05;
                c
            },
            {
                let mut c = trial(seed, vec![crash(210.0)]);
                c.fault_wait = None;
                c
            },
            {
                let mut c = trial(seed, vec![crash(230.0)]);
                c.fault_wait = None;
                c
            },
            {
                let mut c = trial(seed, vec![crash(200.0)]);
                c.horizon = Duration::from_millis(2500);
                c
            },
            // No fault at all: nothing to share.
            trial(seed, vec![]),
            // Invalid: its error in its place.
            trial(seed, vec![Fault::at_ms(-1.0, Crash(Selector::Leader))]),
            // Shared with the first three by its configuration, but its run ends (the work
            // budget) before any first fault: every trial runs alone.
            {
                let mut c = trial(seed, vec![crash(200.0)]);
                c.budget = 40;
                c
            },
        ];
        let got = together(&cfgs);
        assert_eq!(got.len(), cfgs.len());
        for (i, (cfg, r)) in cfgs.iter().zip(&got).enumerate() {
            let what = format!("seed {seed}, configuration {i}");
            match (alone(cfg), r) {
                (Ok(a), Ok(b)) => same(&a, b, &what),
                (Err(a), Err(b)) => assert_eq!(&a, b, "{what}"),
                (a, b) => panic!("{what}: alone {:?}, together {:?}", a.is_ok(), b.is_ok()),
            }
        }
        // The two budget-bound trials share a group whose run ends before the fault.
        let pair = together(&[cfgs[9].clone(), {
            let mut c = cfgs[9].clone();
            c.faults = vec![crash(300.0)];
            c
        }]);
        assert!(pair[0].as_ref().unwrap().metrics.budget_exceeded);
        same(
            pair[1].as_ref().unwrap(),
            &alone(&{
                let mut c = cfgs[9].clone();
                c.faults = vec![crash(300.0)];
                c
            })
            .unwrap(),
            "budget",
        );
    }
}
