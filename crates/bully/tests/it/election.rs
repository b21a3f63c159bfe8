//! The bully election on a reliable network (Garcia-Molina 1982, §3): the highest live id
//! wins, the best case costs O(n) messages, the cascade O(n²), and the second timeout
//! (`t_coord`) rescues an election whose higher node dies after answering OK.

use crate::common;

use std::time::Duration;

use common::{assert_agreed, run, scenario, sent, L};
use election_bully::BullyConfig;
use election_core::NodeId;
use election_sim::{Fault, FaultAction, Latency, NodeSet, Selector, SimConfig};
use proptest::prelude::*;

/// The instant of every fault in these scenarios, well after the boot election settled.
const T: f64 = 1010.0;

fn id(i: u32) -> Selector {
    Selector::Id(NodeId(i))
}

/// Only `suspect` notices the leader's crash: automatic detection is off everywhere.
fn only_one_detects(n: u32, suspect: Selector, mut more: Vec<Fault>) -> SimConfig {
    let mut faults = vec![
        Fault::at_ms(
            T,
            FaultAction::Detection {
                nodes: NodeSet::All,
                enabled: false,
            },
        ),
        Fault::at_ms(T, FaultAction::Crash(Selector::Leader)),
        Fault::at_ms(T, FaultAction::Suspect(suspect)),
    ];
    faults.append(&mut more);
    scenario(n, 7, faults)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// §3, fault-free: whatever the size and seed, exactly one leader — the highest id — and
    /// every node names it (the boot election is the paper's everyone-recovers case).
    #[test]
    fn fault_free_elects_the_highest_id(
        n in 2u32..=64,
        seed in any::<u64>(),
        random_latency in any::<bool>(),
    ) {
        let mut s = SimConfig::new(n, seed);
        s.horizon = Duration::from_secs(5);
        s.settle = Duration::from_millis(500);
        if random_latency {
            s.net.latency = Latency::Uniform { min_ms: 0.2, max_ms: 5.0 };
            s.net.fifo = false;
        }
        let report = run(s, BullyConfig::new(n));
        let m = &report.metrics;
        prop_assert!(m.converged, "n={} seed={}: {:?}", n, seed, m);
        prop_assert_eq!(m.leader, Some(NodeId(n)));
        let leaders = report
            .final_status
            .iter()
            .filter(|s| s.unwrap().role == election_core::Role::Leader)
            .count();
        prop_assert_eq!(leaders, 1);
        for st in &report.final_status {
            prop_assert_eq!(st.unwrap().leader, Some(NodeId(n)));
        }
    }
}

/// Best case (the O(n) path): only the second-highest notices the leader's crash. It sends
/// one ELECTION (to the dead leader), gets no OK, and announces itself with n−2 COORDINATORs.
#[test]
fn only_second_highest_detects_costs_one_election_and_n_minus_2_coordinators() {
    for n in [2, 3, 4, 5, 8, 16, 33] {
        let report = run(only_one_detects(n, id(n - 1), vec![]), BullyConfig::new(n));
        let what = format!("n={n}");
        assert_agreed(&report, n - 1, &what);
        assert_eq!(sent(&report, "ELECTION", T), 1, "{what}");
        assert_eq!(sent(&report, "OK", T), 0, "{what}");
        assert_eq!(sent(&report, "COORDINATOR", T), u64::from(n - 2), "{what}");
        // One t_elec wait, then the COORDINATOR's flight.
        let elect = report.metrics.elect_ms.unwrap();
        let expect = 20.0 + if n > 2 { L } else { 0.0 };
        assert!((elect - expect).abs() < 1e-6, "{what}: elect_ms {elect}");
    }
}

/// Worst case (the O(n²) cascade): only the lowest id notices and no other detector fires.
/// Derived in the crate docs: n(n−1)/2 ELECTION, (n−1)(n−2)/2 OK, n−2 COORDINATOR, in all
/// n² − n − 1 election messages (ELECTIONs to the dead leader included).
#[test]
fn only_lowest_detects_costs_n_squared_minus_n_minus_1() {
    for n in [2u64, 3, 4, 5, 8, 13, 32] {
        let report = run(
            only_one_detects(n as u32, Selector::Lowest, vec![]),
            BullyConfig::new(n as u32),
        );
        let what = format!("n={n}");
        assert_agreed(&report, n as u32 - 1, &what);
        let (e, ok, c) = (
            sent(&report, "ELECTION", T),
            sent(&report, "OK", T),
            sent(&report, "COORDINATOR", T),
        );
        assert_eq!(e, n * (n - 1) / 2, "{what}: ELECTION");
        assert_eq!(ok, (n - 1) * (n - 2) / 2, "{what}: OK");
        assert_eq!(c, n - 2, "{what}: COORDINATOR");
        assert_eq!(e + ok + c, n * n - n - 1, "{what}: total");
        // The simulator's election window sees the same traffic.
        assert_eq!(
            report.metrics.window.sent_election(),
            n * n - n - 1,
            "{what}: window"
        );
    }
}

/// The thundering herd (detection jitter 0): every follower suspects at the same instant.
/// Each node then behaves as if it had received the lowest node's ELECTION at once, so the
/// count is the same n² − n − 1 as the cascade.
#[test]
fn thundering_herd_costs_the_same_as_the_cascade() {
    for n in [3u64, 5, 8, 21] {
        let s = scenario(
            n as u32,
            3,
            vec![Fault::at_ms(T, FaultAction::Crash(Selector::Leader))],
        );
        let mut cfg = BullyConfig::new(n as u32);
        cfg.timing.detect_jitter = Duration::ZERO;
        let report = run(s, cfg);
        let what = format!("n={n}");
        assert_agreed(&report, n as u32 - 1, &what);
        assert_eq!(sent(&report, "ELECTION", T), n * (n - 1) / 2, "{what}");
        assert_eq!(sent(&report, "OK", T), (n - 1) * (n - 2) / 2, "{what}");
        assert_eq!(sent(&report, "COORDINATOR", T), n - 2, "{what}");
        assert_eq!(report.metrics.elections_started, n as u32 - 1, "{what}");
    }
}

/// §3's second timeout: the leader crashes, node 1 suspects at T, and node n−1 crashes after
/// answering OK (its OKs go out at T+2L). Node n−2 yielded to it at T+3L, so its `t_coord`
/// runs out at T+3L+t_coord; its new election finds nobody higher and it declares after
/// t_elec; its COORDINATOR lands at T + 4L + t_coord + t_elec (64 ms with the defaults).
#[test]
fn cascade_t_coord_restart_elects_the_third_highest_within_bound() {
    let cfg = BullyConfig::new(4);
    let bound = 4.0 * L + cfg.t_coord().as_secs_f64() * 1e3 + cfg.t_elec.as_secs_f64() * 1e3;
    for n in [4u32, 5, 8, 12] {
        let s = only_one_detects(
            n,
            Selector::Lowest,
            vec![Fault::at_ms(T + 5.0, FaultAction::Crash(id(n - 1)))],
        );
        let report = run(s, BullyConfig::new(n));
        let what = format!("n={n}");
        assert_agreed(&report, n - 2, &what);
        let elect = report.metrics.elect_ms.unwrap();
        // The derivation is exact on a constant-latency network: the bound is met exactly.
        assert!(
            (elect - bound).abs() < 1e-6,
            "{what}: elect_ms {elect}, derived {bound}"
        );
        // The restart really happened: n−2 sent ELECTION twice to each of n−1 and n.
        let from_n2 = report
            .trace
            .iter()
            .filter(|e| {
                matches!(&e.what, election_sim::TraceKind::Send(m)
                    if m.kind == "ELECTION" && m.from == NodeId(n - 2) && e.at >= election_testing::trace::at(T))
            })
            .count();
        assert_eq!(from_n2, 4, "{what}");
    }
}
