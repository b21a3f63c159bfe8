//! Live/sim conformance: the simulator and the live UDP driver run the same trial rules
//! (`election_sim::trial`), so for the same configuration they must take the same decisions:
//! which faults fire, in which order, on which nodes, which are skipped and why, what the
//! reference instant is, who leads then, and whether the trial ends by settling or at its
//! horizon.
//!
//! Each scenario of the table runs once simulated ([`Sim`]) and once live over loopback
//! ([`run_trial`]) from the same [`SimConfig`], and only timing-independent decisions are
//! compared: the clusters are bully clusters, whose leader is determined by the ids, and the
//! fault instants are far (hundreds of ms) from any election, so loopback's scheduling cannot
//! change a decision. Every trial stops by itself within a few seconds.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use election_bully::{Bully, BullyConfig};
use election_core::{NodeId, Protocol, Time, Wire};
use election_live::{run_trial, LiveConfig, LiveReport};
use election_sim::trial::EndReason;
use election_sim::{Applied, Fault, FaultAction, Metrics, Selector, Sim, SimConfig, TrialReport};

/// What a driver decided in one trial, without timing.
#[derive(Debug, PartialEq)]
struct Decisions {
    /// The faults as carried out (or skipped, with the reason), in order.
    applied: Vec<Applied>,
    /// Faults counted as skipped.
    skipped: u32,
    /// The entry of `applied` the reference instant is the instant of (`None`: none is).
    reference: Option<usize>,
    /// The quorum leader at the reference instant.
    leader_at_reference: Option<NodeId>,
    /// How the trial ended.
    end: EndReason,
}

impl Decisions {
    fn of(m: &Metrics, end: Time, horizon: Duration) -> Decisions {
        let reference = m
            .fault_log
            .iter()
            .position(|(t, _)| (t.as_millis_f64() - m.reference_ms).abs() < 1e-6);
        Decisions {
            applied: m.fault_log.iter().map(|(_, a)| a.clone()).collect(),
            skipped: m.faults_skipped,
            reference,
            leader_at_reference: m.leader_at_reference,
            end: if end < Time::ZERO + horizon {
                EndReason::Settled
            } else {
                EndReason::Horizon
            },
        }
    }
}

/// Run `trial` in both drivers with nodes from `make`: (simulated, live).
fn both<P, F>(trial: &SimConfig, make: F) -> (Decisions, Decisions)
where
    P: Protocol + Send + 'static,
    P::Msg: Wire + Send + Sync + 'static,
    P::Timer: Send + Sync + 'static,
    P::Persist: Send + Sync + 'static,
    F: Fn(NodeId) -> P + Clone + Send + Sync + 'static,
{
    let s: TrialReport = Sim::new(trial.clone(), make.clone()).unwrap().run();
    let live = LiveConfig {
        trial: trial.clone(),
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    let l: LiveReport = run_trial(&live, make).unwrap();
    (
        Decisions::of(&s.metrics, s.end, trial.horizon),
        Decisions::of(&l.metrics, l.end, trial.horizon),
    )
}

fn bully(n: u32) -> impl Fn(NodeId) -> Bully + Clone + Send + Sync + 'static {
    let c = Arc::new(BullyConfig::new(n));
    move |id| Bully::new(id, c.clone())
}

/// A 5-node trial with `faults`, a 2 s wait for a leader, a short settle window and horizon.
fn trial(faults: Vec<Fault>) -> SimConfig {
    let mut t = LiveConfig::new(5, 11).trial;
    t.faults = faults;
    t.fault_wait = Some(Duration::from_secs(2));
    t.settle = Duration::from_millis(500);
    t.horizon = Duration::from_secs(4);
    t
}

fn at(ms: f64, action: FaultAction) -> Fault {
    Fault::at_ms(ms, action)
}

/// The table: each scenario, its configuration, and what both drivers must decide.
#[test]
fn both_drivers_take_the_same_decisions() {
    let (n4, n5) = (NodeId(4), NodeId(5));
    let crash_leader = || FaultAction::Crash(Selector::Leader);
    let mut table: Vec<(&str, SimConfig, Decisions)> = Vec::new();

    // The leader crashes; the next-highest takes over and the trial settles.
    table.push((
        "leader crash",
        trial(vec![at(300.0, crash_leader())]),
        Decisions {
            applied: vec![Applied::Crash(n5)],
            skipped: 0,
            reference: Some(0),
            leader_at_reference: Some(n5),
            end: EndReason::Settled,
        },
    ));

    // The leader is cut off alone, then the partition heals: the selectors are resolved when
    // the partition fires, the heal restores every link, and the trial settles after it.
    table.push((
        "partition with heal",
        trial(vec![
            at(
                300.0,
                FaultAction::Partition(vec![vec![Selector::Leader], vec![Selector::Rest]]),
            ),
            at(900.0, FaultAction::Heal),
        ]),
        Decisions {
            applied: vec![
                Applied::Partition(vec![vec![n5], (1..=4).map(NodeId).collect()]),
                Applied::Heal,
            ],
            skipped: 0,
            reference: Some(0),
            leader_at_reference: Some(n5),
            end: EndReason::Settled,
        },
    ));

    // Two leader crashes, measured from the second: the reference is the instant it fires,
    // and the leader then is the one the first crash elected.
    let mut reference = trial(vec![at(300.0, crash_leader()), at(1200.0, crash_leader())]);
    reference.reference_fault = Some(1);
    table.push((
        "a reference fault",
        reference,
        Decisions {
            applied: vec![Applied::Crash(n5), Applied::Crash(n4)],
            skipped: 0,
            reference: Some(1),
            leader_at_reference: Some(n4),
            end: EndReason::Settled,
        },
    ));

    // Every datagram is lost: no leader ever has a quorum, so the wait for one expires, no
    // fault fires (each is skipped, naming the wait), the reference is the instant it gave up,
    // and the trial runs to its horizon.
    let mut expires = trial(vec![
        at(300.0, crash_leader()),
        at(600.0, FaultAction::Heal),
    ]);
    expires.net.loss = 1.0;
    expires.fault_wait = Some(Duration::from_millis(200));
    expires.horizon = Duration::from_millis(1500);
    let gave_up = "no quorum leader within the fault wait (200.000 ms)".to_string();
    table.push((
        "a fault wait that expires",
        expires,
        Decisions {
            applied: vec![Applied::Skipped(gave_up.clone()), Applied::Skipped(gave_up)],
            skipped: 2,
            reference: Some(0),
            leader_at_reference: None,
            end: EndReason::Horizon,
        },
    ));

    // Every member alone: five bully leaders, none of them a quorum leader, so the trial
    // never settles and ends at its horizon.
    let alone = (1..=5).map(|i| vec![Selector::Id(NodeId(i))]).collect();
    let mut horizon = trial(vec![at(300.0, FaultAction::Partition(alone))]);
    horizon.horizon = Duration::from_millis(1500);
    table.push((
        "a horizon end",
        horizon,
        Decisions {
            applied: vec![Applied::Partition(
                (1..=5).map(|i| vec![NodeId(i)]).collect(),
            )],
            skipped: 0,
            reference: Some(0),
            leader_at_reference: Some(n5),
            end: EndReason::Horizon,
        },
    ));

    // A fault scheduled past the horizon never fires in either driver: skipped as pending.
    let mut pending = trial(vec![
        at(300.0, crash_leader()),
        at(9_000.0, FaultAction::Heal),
    ]);
    pending.horizon = Duration::from_millis(1500);
    table.push((
        "a fault still pending at the end",
        pending,
        Decisions {
            applied: vec![
                Applied::Crash(n5),
                Applied::Skipped(election_sim::trial::STILL_PENDING.to_string()),
            ],
            skipped: 1,
            reference: Some(0),
            leader_at_reference: Some(n5),
            end: EndReason::Horizon,
        },
    ));

    for (name, cfg, want) in table {
        let (sim, live) = both(&cfg, bully(5));
        assert_eq!(sim, want, "{name}: the simulator");
        assert_eq!(live, sim, "{name}: live against the simulator");
    }
}

/// A steady-state window of the runner's catalog (`steady-noise`) runs simulated, and live
/// refuses it before any socket is bound, naming the parameter it cannot model.
#[test]
fn a_steady_scenario_is_refused_by_live_and_run_by_the_simulator() {
    use election_runner::SweepSpec;
    let mut spec = SweepSpec::default().one_cell("raft", 3, "steady-noise", "lan");
    spec.first_seed = Some(0);
    spec.params = vec![
        ("steady_ms".into(), vec!["2000".into()]),
        ("noise.profile".into(), vec!["busy".into()]),
    ];
    let cell = spec
        .plan()
        .unwrap()
        .runnable_cell(|_, why| why.to_string())
        .unwrap();
    let trial = cell.trial_config(0, false);
    assert!(cell.run(0, false).is_ok(), "the simulator runs it");
    let live = election_live::live_config(&cell, 0, true, IpAddr::V4(Ipv4Addr::LOCALHOST));
    let e = live.validate().unwrap_err();
    assert_eq!(e.field, "run_to_horizon", "{e}");
    // Without the steady window, the noise alone is refused, naming it.
    let mut quiet = live.clone();
    quiet.trial.run_to_horizon = false;
    let e = quiet.validate().unwrap_err();
    assert_eq!(e.field, "noise", "{e}");
    assert!(trial.run_to_horizon && !trial.noise.is_none());
    let e = run_trial(&live, bully(3)).unwrap_err();
    assert!(matches!(e, election_live::LiveError::Config(_)), "{e}");
}
