//! A deposed leader that keeps acting (issue #31): `leader.stop_lag_ms` keeps a node's workload
//! writing after it left the leader role, with the token it had as leader. Pinned on the
//! seeds' GC-pause story (`leader-pause`): the frozen Raft leader wakes up, sends the write
//! that fell due, learns of the higher term, steps down — and, with a lag, goes on writing.
//! With fencing the resource refuses every one of those writes; without it, it takes them all:
//! the lag turns fenced writes into stale ones.

use crate::common;

use common::{cell_with_params as cell, resume_ms, writes};
use election_core::{NodeId, Role};
use election_runner::{SweepSpec, TrialRun};
use election_sim::observer::WriteOutcome;
use election_sim::TraceKind;

/// The epoch `node` led with when the fault fired (its last leader status before it).
fn epoch_as_leader(run: &TrialRun, node: NodeId) -> Option<u64> {
    let t = run.fault_instant_ms.unwrap();
    run.report
        .trace
        .iter()
        .filter(|e| e.at.as_millis_f64() <= t)
        .filter_map(|e| match &e.what {
            TraceKind::Status {
                node: who,
                status: Some(s),
            } if *who == node && s.role == Role::Leader => s.epoch,
            _ => None,
        })
        .next_back()
}

/// The paused leader's writes taken or fenced from its wake-up on.
fn after_wake(run: &TrialRun) -> Vec<(f64, NodeId, Option<u64>, WriteOutcome)> {
    let paused = run.leader_at_fault.expect("a leader to pause");
    let woke = resume_ms(run);
    writes(run)
        .into_iter()
        .filter(|w| w.1 == paused && w.0 >= woke)
        .collect()
}

/// With a 200 ms lag at the default 10 ms interval, the woken leader sends 20 or 21 writes:
/// the one due during the pause, then one every 10 ms while the lag lasts. It steps down while
/// it handles its backlog, a little after the wake-up, and the lag counts from there, so a
/// write that falls due just under 200 ms after the wake-up still leaves when the writes' own
/// phase puts one there. Each carries the term it led with, below the new leader's: fenced, all
/// of them, under `token`; taken, all of them stale, under `off` — the same count, since
/// fencing changes no node's behaviour.
#[test]
fn stop_lag_turns_fenced_writes_into_stale_ones_without_fencing() {
    for seed in 0..4 {
        let lagged = |fencing: &str| {
            let c = cell(
                "raft",
                5,
                "leader-pause",
                &format!(
                    "\"leader.stop_lag_ms\" = \"constant:200\"\n\"workload.fencing\" = \"{fencing}\""
                ),
            );
            c.run(seed, true).unwrap()
        };
        let (token, off) = (lagged("token"), lagged("off"));
        for (run, outcome) in [(&token, WriteOutcome::Fenced), (&off, WriteOutcome::Stale)] {
            let paused = run.leader_at_fault.unwrap();
            let old = epoch_as_leader(run, paused).expect("the paused node led with a term");
            let w = after_wake(run);
            assert!(
                (20..=21).contains(&w.len()),
                "seed {seed}: {} writes: {w:?}",
                w.len()
            );
            assert!(
                w.iter().all(|x| x.3 == outcome && x.2 == Some(old)),
                "seed {seed}: every lagging write keeps term {old} and is {outcome:?}: {w:?}"
            );
            // The writes stop when the lag is over: none leaves 200 ms or more after the wake-up.
            let woke = resume_ms(run);
            assert!(w.iter().all(|x| x.0 < woke + 200.0 + 5.0), "{w:?}");
        }
        let (t, o) = (
            token.report.metrics.writes.unwrap(),
            off.report.metrics.writes.unwrap(),
        );
        assert!(t.fenced >= 20, "seed {seed}: {t:?}");
        assert_eq!(o.fenced, 0);
        assert!(o.stale >= t.fenced, "seed {seed}: {t:?} vs {o:?}");
        assert_eq!(o.stale, t.stale + t.fenced, "seed {seed}: {t:?} vs {o:?}");
    }
}

/// Without a lag the woken leader stops at once: only the write due during the pause leaves
/// (fenced), and `constant:0` set explicitly changes nothing at all — the same trial, row for
/// row, as the default.
#[test]
fn no_lag_stops_at_once_and_is_the_default() {
    for seed in 0..4 {
        let default = cell("raft", 5, "leader-pause", "").run(seed, true).unwrap();
        let zero = cell(
            "raft",
            5,
            "leader-pause",
            "\"leader.stop_lag_ms\" = \"constant:0\"",
        )
        .run(seed, true)
        .unwrap();
        let w = after_wake(&default);
        assert_eq!(w.len(), 1, "seed {seed}: {w:?}");
        assert_eq!(w[0].3, WriteOutcome::Fenced);
        let (a, b) = (&default.report, &zero.report);
        assert_eq!(a.end, b.end, "seed {seed}");
        assert_eq!(a.events, b.events, "seed {seed}");
        assert_eq!(
            format!("{:?}", a.metrics.writes),
            format!("{:?}", b.metrics.writes)
        );
        assert_eq!(a.trace.len(), b.trace.len(), "seed {seed}");
        // And a lag changes none of the election: the same failover with and without it.
        let lagged = cell(
            "raft",
            5,
            "leader-pause",
            "\"leader.stop_lag_ms\" = \"constant:200\"",
        )
        .run(seed, false)
        .unwrap();
        assert_eq!(
            lagged.report.metrics.failover_ms, a.metrics.failover_ms,
            "seed {seed}"
        );
    }
}

/// Under majority commit a deposed writer's writes are acknowledged only by nodes whose status
/// still names it as leader: after the wake-up every other node follows the new leader, so
/// none of the lagging writes is taken.
#[test]
fn under_majority_commit_nobody_acknowledges_a_lagging_writer() {
    for seed in 0..3 {
        let run = cell(
            "raft",
            5,
            "leader-pause",
            "\"leader.stop_lag_ms\" = \"constant:200\"\n\"workload.commit\" = \"majority\"",
        )
        .run(seed, true)
        .unwrap();
        let w = after_wake(&run);
        assert!(w.is_empty(), "seed {seed}: {w:?}");
        assert!(run.report.metrics.writes.unwrap().ok > 0);
    }
}

/// A bad distribution is refused by name.
#[test]
fn a_bad_lag_is_refused_naming_the_parameter() {
    let toml = "protocols = [\"raft\"]\nnodes = [3]\nscenarios = [\"leader-pause\"]\nseeds = 1\n[params]\n\"leader.stop_lag_ms\" = \"sometimes\"";
    let e = match SweepSpec::from_toml(toml)
        .and_then(|s| s.plan())
        .and_then(|p| p.cells())
    {
        Ok(_) => panic!("a bad lag was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("leader.stop_lag_ms"), "{e}");
}
