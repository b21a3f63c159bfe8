//! The smallest leader election on `election-core`, run in the simulator: every node
//! broadcasts a heartbeat every 50 ms and follows the highest id it has heard from within the
//! last 150 ms, itself included. No votes, no terms: under a partition each side elects its
//! own leader, which is what the observer's split-brain metrics are for.
//!
//! ```text
//! cargo run --release --example highest-alive
//! ```
//!
//! It prints each scenario's failover, split brain and outcome as the observer measured them:
//! a crashed leader is replaced within `ALIVE`, and a partition leaves a leader on each side.
//!
//! The protocol is the 80 lines between the two rules below; everything a driver needs comes
//! through [`Io`] (time, timers, sends), and the observer measures from [`Protocol::status`].

use std::time::Duration;

use election_core::{Io, Message, MsgCategory, NodeId, Protocol, Role, Status, Time, TimerKind};
use election_sim::{Fault, FaultAction, Selector, Sim, SimConfig};

// ---------------------------------------------------------------------------------------
#[derive(Clone, Debug)]
struct Beat;

impl Message for Beat {
    fn category(&self) -> MsgCategory {
        MsgCategory::Heartbeat
    }
    fn kind(&self) -> &'static str {
        "BEAT"
    }
    fn wire_size(&self) -> usize {
        1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tick;

impl TimerKind for Tick {
    const COUNT: usize = 1;
    fn index(self) -> usize {
        0
    }
    fn is_failure_detector(self) -> bool {
        false
    }
}

struct HighestAlive {
    id: NodeId,
    n: u32,
    /// When each node was last heard from (index `id - 1`).
    heard: Vec<Option<Time>>,
    now: Time,
}

const BEAT: Duration = Duration::from_millis(50);
const ALIVE: Duration = Duration::from_millis(150);

impl Protocol for HighestAlive {
    type Msg = Beat;
    type Timer = Tick;
    type Persist = ();

    fn on_start(&mut self, io: &mut Io<'_, Self>, _stored: Option<&()>) {
        self.heard = vec![None; self.n as usize];
        self.on_timer(io, Tick);
    }
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, _msg: Beat) {
        self.heard[from.index()] = Some(io.now());
        self.now = io.now();
    }
    fn on_timer(&mut self, io: &mut Io<'_, Self>, _timer: Tick) {
        self.now = io.now();
        self.heard[self.id.index()] = Some(io.now());
        let others = (1..=self.n).map(NodeId).filter(|&p| p != self.id);
        io.send_many(others, &Beat);
        io.set_timer(Tick, BEAT);
    }
    fn on_suspect(&mut self, _io: &mut Io<'_, Self>) {}
    fn status(&self) -> Status {
        let alive =
            |t: &Option<Time>| t.is_some_and(|t| self.now.0 <= t.0 + ALIVE.as_nanos() as u64);
        let leader = (0..self.n as usize)
            .rev()
            .find(|&i| alive(&self.heard[i]))
            .map(NodeId::from_index);
        let role = if leader == Some(self.id) {
            Role::Leader
        } else {
            Role::Follower
        };
        Status {
            role,
            leader,
            epoch: None,
        }
    }
}
// ---------------------------------------------------------------------------------------

fn main() {
    let n = 5;
    let partition = FaultAction::Partition(vec![
        vec![Selector::Id(NodeId(1)), Selector::Id(NodeId(2))],
        vec![
            Selector::Id(NodeId(3)),
            Selector::Id(NodeId(4)),
            Selector::Id(NodeId(5)),
        ],
    ]);
    for (name, fault) in [
        ("leader crash", FaultAction::Crash(Selector::Leader)),
        ("partition {1,2} | {3,4,5}", partition),
    ] {
        let mut cfg = SimConfig::new(n, 0);
        cfg.election_timeout = ALIVE;
        cfg.faults = vec![Fault::at_ms(1000.0, fault)];
        let sim = Sim::new(cfg, move |id| HighestAlive {
            id,
            n,
            heard: Vec::new(),
            now: Time::ZERO,
        })
        .expect("a valid configuration");
        let m = sim.run().metrics;
        println!(
            "{name}: failover {:?} ms, leader {:?}, split brain {} ms (at most {} leaders at once), \
             {} messages, outcome {}",
            m.failover_ms,
            m.leader.map(|l| l.0),
            m.split_brain_ms,
            m.max_leaders,
            m.total.sent.iter().sum::<u64>(),
            m.outcome.name()
        );
    }
}
