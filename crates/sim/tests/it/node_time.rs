//! Node time (issue #14): what a node spends — processing, stable storage — and the clock it
//! reads, on the toy protocol with a known timeline (1 ms constant links).
use crate::common;

use std::time::Duration;

use common::Toy;
use election_core::{NodeId, Role};
use election_sim::*;

fn traced(n: u32) -> SimConfig {
    let mut cfg = SimConfig::new(n, 1);
    cfg.trace = true;
    cfg.horizon = Duration::from_millis(200);
    cfg
}

fn ms(t: election_core::Time) -> f64 {
    t.as_millis_f64()
}

/// When node `to` first received a LEADER from `from`.
fn first_leader_delivery(r: &TrialReport, from: u32, to: u32) -> f64 {
    r.trace
        .iter()
        .find_map(|e| match &e.what {
            TraceKind::Deliver(m) if m.kind == "LEADER" && m.from.0 == from && m.to.0 == to => {
                Some(ms(e.at))
            }
            _ => None,
        })
        .expect("a LEADER was delivered")
}

/// The toy persists its boot count at boot, then broadcasts LEADER: with a 5 ms fsync the
/// broadcast leaves only once the write is durable, so it arrives 5 ms later than with ideal
/// storage.
#[test]
fn a_persist_delays_the_messages_behind_it() {
    let ideal = Sim::new(traced(3), |id| Toy::new(id, 3)).unwrap().run();
    assert_eq!(first_leader_delivery(&ideal, 3, 1), 1.0);
    let mut cfg = traced(3);
    cfg.node.fsync = Some(Latency::Constant { ms: 5.0 });
    let slow = Sim::new(cfg, |id| Toy::new(id, 3)).unwrap().run();
    assert_eq!(first_leader_delivery(&slow, 3, 1), 6.0);
}

/// With 1 ms of processing per input, three pings that arrive together are handled one after
/// the other, 1 ms apart, in arrival order: a busy node builds a queue.
#[test]
fn a_busy_node_handles_its_inputs_one_at_a_time() {
    let mut cfg = traced(3);
    cfg.node.cpu = Some(Latency::Constant { ms: 1.0 });
    let r = Sim::new(cfg, |id| {
        let mut t = Toy::new(id, 3);
        if id.0 == 1 {
            t.pings = 3;
        }
        t
    })
    .unwrap()
    .run();
    // Node 1's boot input ends at 1 ms, its pings arrive at node 3 at 2 ms; node 3 is free by
    // then (its boot ended at 1 ms) and takes them at 2, 3 and 4 ms.
    let handled: Vec<(f64, u32)> = r
        .trace
        .iter()
        .filter_map(|e| match &e.what {
            TraceKind::Deliver(m) if m.kind == "PING" => Some((ms(e.at), m.bytes - 100)),
            _ => None,
        })
        .collect();
    assert_eq!(handled, vec![(2.0, 0), (3.0, 1), (4.0, 2)]);
}

/// A node whose clock runs 10 % fast fires the timers it arms afterwards early, in real time:
/// its 35 ms detection and 5 ms claim take 40 / 1.1 ms of real time.
#[test]
fn a_fast_clock_fires_its_timers_early() {
    let claimed_at = |fast: bool| {
        let mut cfg = traced(2);
        cfg.faults = vec![Fault::at_ms(
            0.0,
            FaultAction::Crash(Selector::Id(NodeId(2))),
        )];
        if fast {
            cfg.faults.push(Fault::at_ms(
                0.0,
                FaultAction::ClockRate {
                    node: Selector::Id(NodeId(1)),
                    ppm: 100_000.0,
                },
            ));
        }
        let r = Sim::new(cfg, |id| Toy::new(id, 2)).unwrap().run();
        r.trace
            .iter()
            .find_map(|e| match &e.what {
                TraceKind::Status {
                    node,
                    status: Some(s),
                } if node.0 == 1 && s.role == Role::Leader => Some(ms(e.at)),
                _ => None,
            })
            .expect("node 1 takes over")
    };
    // Node 2's boot LEADER (sent before its crash) arrives at 1 ms and re-arms node 1's
    // detection for 35 ms; after it fires, the claim timer (5 ms): 41 ms with a true clock. Both
    // are armed after the rate change, in node 1's clock: 40 ms of it are 40 / 1.1 real ms.
    assert_eq!(claimed_at(false), 41.0);
    let fast = claimed_at(true);
    assert!((fast - (1.0 + 40.0 / 1.1)).abs() < 1e-3, "{fast}");
}

/// Timer jitter delays every firing by up to its bound, never earlier; per-trial clocks with
/// drift give each node its own rate. Both are drawn from the seed: same seed, same trial.
#[test]
fn jitter_and_drift_are_bounded_and_deterministic() {
    let run = |seed| {
        let mut cfg = traced(3);
        cfg.seed = seed;
        cfg.node.timer_jitter_ms = 1.0;
        cfg.node.drift_ppm = 50.0;
        cfg.faults = vec![Fault::at_ms(
            0.0,
            FaultAction::Crash(Selector::Id(NodeId(3))),
        )];
        Sim::new(cfg, |id| Toy::new(id, 3)).unwrap().run()
    };
    let a = run(7);
    let b = run(7);
    assert_eq!(a.trace, b.trace);
    // A follower's detection (35 ms from its last LEADER at 1 ms or less) fires no earlier
    // than 35 ms minus the drift and no later than 36 ms plus it.
    let first_timer = a
        .trace
        .iter()
        .find_map(|e| match &e.what {
            TraceKind::Timer { timer, .. } if timer == "Detect" => Some(ms(e.at)),
            _ => None,
        })
        .unwrap();
    assert!((34.99..=37.01).contains(&first_timer), "{first_timer}");
}

/// Bad node-time settings are refused by name.
#[test]
fn node_time_is_validated() {
    let mut cfg = SimConfig::new(3, 1);
    cfg.node.drift_ppm = -1.0;
    let e = Sim::new(cfg, |id| Toy::new(id, 3)).err().unwrap();
    assert_eq!(e.field, "clock.drift_ppm");
    let mut cfg = SimConfig::new(3, 1);
    cfg.node.fsync = Some(Latency::Constant { ms: f64::NAN });
    assert!(Sim::new(cfg, |id| Toy::new(id, 3)).is_err());
}

/// A forced suspicion is an input like any other: a node busy with its boot (5 ms of
/// processing) suspects only once it is free.
#[test]
fn a_forced_suspicion_waits_for_a_busy_node() {
    let mut cfg = traced(3);
    cfg.node.cpu = Some(Latency::Constant { ms: 5.0 });
    cfg.faults = vec![Fault::at_ms(
        2.0,
        FaultAction::Suspect(Selector::Id(NodeId(1))),
    )];
    let r = Sim::new(cfg, |id| Toy::new(id, 3)).unwrap().run();
    let candidate_at = r
        .trace
        .iter()
        .find_map(|e| match &e.what {
            TraceKind::Status {
                node,
                status: Some(s),
            } if node.0 == 1 && s.role == Role::Candidate => Some(ms(e.at)),
            _ => None,
        })
        .expect("node 1 suspects");
    assert_eq!(candidate_at, 5.0);
}

/// A tick-driven node: node 1 takes a `Tick` every 0.5 ms that only re-arms itself (or, with
/// `beats`, also sends a BEAT to node 2); node 2 sends one PING to node 1 at boot.
struct Ticks {
    id: NodeId,
    beats: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TickMsg {
    Ping,
    Beat,
}

impl election_core::Message for TickMsg {
    fn category(&self) -> election_core::MsgCategory {
        election_core::MsgCategory::Heartbeat
    }
    fn kind(&self) -> &'static str {
        match self {
            TickMsg::Ping => "PING",
            TickMsg::Beat => "BEAT",
        }
    }
    fn wire_size(&self) -> usize {
        1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tick;

impl election_core::TimerKind for Tick {
    const COUNT: usize = 1;
    fn index(self) -> usize {
        0
    }
    fn is_failure_detector(self) -> bool {
        false
    }
}

impl election_core::Protocol for Ticks {
    type Msg = TickMsg;
    type Timer = Tick;
    type Persist = ();

    fn on_start(&mut self, io: &mut election_core::Io<'_, Self>, _: Option<&()>) {
        if self.id.0 == 1 {
            io.set_timer(Tick, Duration::from_micros(500));
        } else {
            io.send(NodeId(1), TickMsg::Ping);
        }
    }
    fn on_message(&mut self, _: &mut election_core::Io<'_, Self>, _: NodeId, _: TickMsg) {}
    fn on_timer(&mut self, io: &mut election_core::Io<'_, Self>, _: Tick) {
        io.set_timer(Tick, Duration::from_micros(500));
        if self.beats {
            io.send(NodeId(2), TickMsg::Beat);
        }
    }
    fn on_suspect(&mut self, _: &mut election_core::Io<'_, Self>) {}
    fn status(&self) -> election_core::Status {
        election_core::Status {
            role: Role::Follower,
            leader: None,
            epoch: None,
        }
    }
}

/// With 0.6 ms of processing per input, node 2's PING leaves at 0.6 ms and reaches node 1 at
/// 1.6 ms. A tick that only re-arms itself costs nothing, so node 1 is free and takes the PING
/// at once; a tick that also sends is work: node 1's boot ends at 0.6 ms, its first tick (due
/// at 0.5) runs 0.6-1.2, the next (armed at 0.6 for 1.1) 1.2-1.8, and the PING waits for it.
#[test]
fn a_timer_that_only_rearms_takes_no_processing_time() {
    let ping_handled = |beats: bool| {
        let mut cfg = traced(2);
        cfg.horizon = Duration::from_millis(3);
        cfg.node.cpu = Some(Latency::Constant { ms: 0.6 });
        let r = Sim::new(cfg, |id| Ticks { id, beats }).unwrap().run();
        r.trace
            .iter()
            .find_map(|e| match &e.what {
                TraceKind::Deliver(m) if m.kind == "PING" => Some(ms(e.at)),
                _ => None,
            })
            .expect("the PING is delivered")
    };
    assert!(
        (ping_handled(false) - 1.6).abs() < 1e-9,
        "{}",
        ping_handled(false)
    );
    assert!(
        (ping_handled(true) - 1.8).abs() < 1e-9,
        "{}",
        ping_handled(true)
    );
}
