//! The lease variants real libraries ship (issue #31), pinned over the simulator against
//! client-go's rules: `lease.expiry = renew_time` (the holder's renew time against the member's
//! own clock), `lease.cas = false` (blind writes) and `lease.on_loss = exit` (the process
//! exits on loss and restarts after `lease.restart_ms`).

use crate::common;

use common::cell_with_params as cell;
use election_core::{NodeId, Role};
use election_sim::TraceKind;

const SEEDS: u64 = 20;

/// `clock-jump-follower`: the lowest follower's clock steps 300 ms ahead, twice the lease
/// duration. Under client-go's rule (a duration on the member's own clock from its
/// observation) nothing happens: no leader change, no split brain. Under `renew_time` that
/// member finds the holder's renew time (written from the holder's clock) more than a duration
/// behind its own clock and takes the lease the holder is still renewing: two holders act at
/// once until the old one's next renewal fails, and without fencing the old one's writes are
/// taken stale.
#[test]
fn a_clock_ahead_by_more_than_the_duration_steals_the_lease_only_under_renew_time() {
    let observed = cell("lease", 5, "clock-jump-follower", "");
    let renew_time = cell(
        "lease+expiry=renew_time",
        5,
        "clock-jump-follower",
        "\"workload.fencing\" = \"off\"",
    );
    let (mut split, mut stale) = (0, 0);
    for seed in 0..SEEDS {
        let m = observed.run(seed, false).unwrap().report.metrics;
        assert_eq!(m.faults_skipped, 0, "seed {seed}");
        assert!(!m.split_brain, "observed, seed {seed}");
        assert_eq!(m.leader_changes, 0, "observed, seed {seed}");
        assert_eq!(m.writes.unwrap().stale, 0, "observed, seed {seed}");

        let run = renew_time.run(seed, false).unwrap();
        let m = &run.report.metrics;
        // The jumped member always takes the lease from a live holder ...
        assert!(m.leader_changes >= 1, "renew_time, seed {seed}");
        assert_ne!(m.leader, run.leader_at_fault, "renew_time, seed {seed}");
        // ... and, unless the old holder's renewal happens to be refused before the thief
        // hears it won, both act at once, for up to a renewal period (20 ms).
        if m.split_brain {
            split += 1;
            assert!(
                m.split_brain_ms <= 25.0,
                "seed {seed}: {}",
                m.split_brain_ms
            );
        }
        stale += m.writes.unwrap().stale;
    }
    assert!(
        split >= SEEDS * 3 / 4,
        "two holders in {split} of {SEEDS} seeds"
    );
    assert!(stale >= SEEDS / 2, "{stale} stale writes in {SEEDS} seeds");
}

/// Clocks that start up to 1 s apart (`clock.offset_ms`), more than six lease durations. At
/// a cold start the store's compare-and-swap elects one holder; under client-go's rule it
/// keeps the lease; under `renew_time` every member whose clock is ahead of the holder's by
/// more than the duration takes it in turn (split brain, several leader changes) until the
/// member with the clock furthest ahead holds it. And once that holder crashes, the others
/// read its renew time, written from a clock ahead of theirs, and wait the offset on top of
/// the duration: failover slower than client-go's duration plus two reads.
#[test]
fn clock_offsets_beyond_the_duration_under_renew_time() {
    let offset = "\"clock.offset_ms\" = 1000";
    let (mut split, mut slow) = (0, 0);
    for seed in 0..SEEDS {
        let m = cell("lease", 5, "cold-start", offset)
            .run(seed, false)
            .unwrap()
            .report
            .metrics;
        assert!(!m.split_brain, "observed, seed {seed}");
        assert_eq!(m.leader_changes, 1, "observed, seed {seed}");
        let m = cell("lease+expiry=renew_time", 5, "cold-start", offset)
            .run(seed, false)
            .unwrap()
            .report
            .metrics;
        assert!(m.converged, "renew_time, seed {seed}");
        if m.split_brain {
            split += 1;
            assert!(m.leader_changes >= 2, "renew_time, seed {seed}");
        }

        let m = cell("lease", 5, "leader-crash", offset)
            .run(seed, false)
            .unwrap()
            .report
            .metrics;
        let f = m.failover_ms.unwrap();
        assert!(f < 150.0 + 2.0 * 44.0 + 10.0, "observed, seed {seed}: {f}");
        let m = cell("lease+expiry=renew_time", 5, "leader-crash", offset)
            .run(seed, false)
            .unwrap()
            .report
            .metrics;
        if m.failover_ms.unwrap() > 150.0 + 2.0 * 44.0 + 10.0 {
            slow += 1;
        }
    }
    assert!(
        split >= SEEDS / 2,
        "two holders in {split} of {SEEDS} cold starts"
    );
    assert!(
        slow >= SEEDS / 2,
        "slow failover in {slow} of {SEEDS} crashes"
    );
}

/// With the clock jump at most the lease duration minus the poll and renewal lag, even
/// `renew_time` keeps one holder: the offset must exceed what the lease leaves as margin.
#[test]
fn a_small_clock_jump_is_harmless_under_renew_time() {
    let c = cell(
        "lease+expiry=renew_time",
        5,
        "clock-jump-follower",
        "clock_jump_ms = 50",
    );
    for seed in 0..SEEDS {
        let m = c.run(seed, false).unwrap().report.metrics;
        assert!(!m.split_brain, "seed {seed}");
        assert_eq!(m.leader_changes, 0, "seed {seed}");
    }
}

/// `cold-start`: every member reads the empty record at once and writes itself in. With
/// compare-and-swap exactly one wins; with blind writes every one of them is told it won, all
/// with transitions 1: split brain in one epoch (`same_epoch_leaders`), which fencing cannot
/// separate. The overwritten winners learn at their first renewal, a retry later, and the
/// cluster converges on the last writer.
#[test]
fn blind_acquisitions_all_win_where_compare_and_swap_elects_one() {
    let cas = cell("lease", 5, "cold-start", "");
    let blind = cell("lease+cas=false", 5, "cold-start", "");
    for seed in 0..SEEDS {
        let m = cas.run(seed, false).unwrap().report.metrics;
        assert!(!m.split_brain, "cas, seed {seed}");
        assert_eq!(m.same_epoch_leaders, 0, "cas, seed {seed}");
        assert_eq!(m.leader_changes, 1, "cas, seed {seed}");

        let run = blind.run(seed, true).unwrap();
        let m = &run.report.metrics;
        assert!(m.split_brain, "blind, seed {seed}");
        assert!(m.max_leaders >= 2, "blind, seed {seed}");
        assert!(m.same_epoch_leaders >= 1, "blind, seed {seed}");
        assert!(m.converged, "blind, seed {seed}");
        // Every leader of the trial led in epoch 1.
        let epochs: Vec<_> = run
            .report
            .trace
            .iter()
            .filter_map(|e| match e.what {
                TraceKind::Status {
                    status: Some(s), ..
                } if s.role == Role::Leader => s.epoch,
                _ => None,
            })
            .collect();
        assert!(epochs.len() >= 2, "blind, seed {seed}: {epochs:?}");
        assert!(
            epochs.iter().all(|&e| e == 1),
            "blind, seed {seed}: {epochs:?}"
        );
    }
}

/// The status changes of `node` as (ms, role, leader).
fn statuses(run: &election_runner::TrialRun, node: NodeId) -> Vec<(f64, Role, Option<NodeId>)> {
    run.report
        .trace
        .iter()
        .filter_map(|e| match e.what {
            TraceKind::Status {
                node: n,
                status: Some(s),
            } if n == node => Some((e.at.as_millis_f64(), s.role, s.leader)),
            _ => None,
        })
        .collect()
}

/// When `node` sent messages, ms.
fn sends_of(run: &election_runner::TrialRun, node: NodeId) -> Vec<f64> {
    run.report
        .trace
        .iter()
        .filter_map(|e| match &e.what {
            TraceKind::Send(m) if m.from == node => Some(e.at.as_millis_f64()),
            _ => None,
        })
        .collect()
}

/// `leader-pause`: the holder wakes after 600 ms, its renewal finds another holder and it is
/// deposed. With `on_loss = exit` it exits: a follower with no leader that sends nothing for
/// `lease.restart_ms` (100 ms), then it starts afresh with a read and follows the new holder.
/// With `continue` it follows the new holder at once and keeps reading.
#[test]
fn an_exited_holder_is_down_for_the_restart_delay() {
    for (spec, exit) in [("lease", false), ("lease+on_loss=exit", true)] {
        let c = cell(spec, 5, "leader-pause", "");
        for seed in 0..SEEDS {
            let run = c.run(seed, true).unwrap();
            let old = run.leader_at_fault.expect("a holder");
            let st = statuses(&run, old);
            let t = run.fault_instant_ms.unwrap();
            // Its first status change after the pause: it stops leading.
            let (down_at, role, leader) = *st
                .iter()
                .find(|s| s.0 > t && s.1 != Role::Leader)
                .unwrap_or_else(|| panic!("{spec} seed {seed}: deposed: {st:?}"));
            assert_eq!(role, Role::Follower, "{spec} seed {seed}");
            let next_send = sends_of(&run, old)
                .into_iter()
                .find(|&s| s > down_at)
                .expect("it speaks again");
            if exit {
                assert_eq!(leader, None, "{spec} seed {seed}: knows no leader");
                // Silent for the restart delay (its timers are node-clock instants, plus up
                // to 1 ms of timer jitter and the drift of the server profile).
                let gap = next_send - down_at;
                assert!((99.9..102.0).contains(&gap), "{spec} seed {seed}: {gap}");
                // The next status change comes after the restart: it follows again.
                let after = st.iter().find(|s| s.0 > down_at).expect("follows again");
                assert!(after.0 >= next_send, "{spec} seed {seed}: {after:?}");
                assert!(after.2.is_some(), "{spec} seed {seed}: {after:?}");
            } else {
                // It reads again within a jittered retry (20-44 ms).
                assert!(
                    next_send - down_at < 45.0,
                    "{spec} seed {seed}: keeps reading"
                );
            }
            assert!(run.report.metrics.converged, "{spec} seed {seed}");
        }
    }
}

/// Bad values are refused naming the parameter and the value.
#[test]
fn bad_variant_values_name_the_parameter() {
    use election_runner::protocol::ProtocolSpec;
    for (spec, want) in [
        ("lease+expiry=wall", "lease.expiry"),
        ("lease+cas=maybe", "lease.cas"),
        ("lease+on_loss=crash", "lease.on_loss"),
        ("lease+restart_ms=0", "lease.restart_ms"),
        ("lease+restart_ms=300-100", "lease.restart_ms"),
    ] {
        let e = ProtocolSpec::parse(spec).unwrap_err().to_string();
        assert!(e.contains(want), "{spec}: {e}");
        let value = spec.split('=').nth(1).unwrap();
        assert!(e.contains(value), "{spec}: {e}");
    }
    let s = ProtocolSpec::parse("lease+expiry=renew_time+cas=false+on_loss=exit+restart_ms=50-150")
        .unwrap();
    assert_eq!(s.options.get("lease.restart_ms").unwrap(), "50-150");
}
