//! A minimal protocol for measuring the engine itself: node 1 and node 2 (and every other
//! pair `2k-1`, `2k`) bounce a ball forever. It is no leader election; benchmarks and engine
//! tests use it to load the event queue with nothing but deliveries.

use election_core::{Io, Message, MsgCategory, NodeId, Protocol, Role, Status, TimerKind};

/// The ball.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ball(pub u64);

impl Message for Ball {
    fn category(&self) -> MsgCategory {
        MsgCategory::Heartbeat
    }
    fn kind(&self) -> &'static str {
        "BALL"
    }
    fn wire_size(&self) -> usize {
        9
    }
}

/// Ping-pong has no timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTimer {}

impl TimerKind for NoTimer {
    const COUNT: usize = 0;
    fn index(self) -> usize {
        match self {}
    }
    fn is_failure_detector(self) -> bool {
        match self {}
    }
}

/// A ping-pong node.
#[derive(Debug)]
pub struct PingPong {
    id: NodeId,
    partner: Option<NodeId>,
    /// Balls received.
    pub received: u64,
}

impl PingPong {
    /// Node `id` of an `n`-node cluster; it plays with its pair partner if it has one.
    pub fn new(id: NodeId, n: u32) -> Self {
        let partner = if id.0 % 2 == 1 { id.0 + 1 } else { id.0 - 1 };
        PingPong {
            id,
            partner: (partner >= 1 && partner <= n).then_some(NodeId(partner)),
            received: 0,
        }
    }
}

impl Protocol for PingPong {
    type Msg = Ball;
    type Timer = NoTimer;
    type Persist = ();

    fn on_start(&mut self, io: &mut Io<'_, Self>, _stored: Option<&()>) {
        if let (Some(p), true) = (self.partner, self.id.0 % 2 == 1) {
            io.send(p, Ball(0));
        }
    }
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: Ball) {
        self.received += 1;
        io.send(from, Ball(msg.0 + 1));
    }
    fn on_timer(&mut self, _io: &mut Io<'_, Self>, timer: NoTimer) {
        match timer {}
    }
    fn on_suspect(&mut self, _io: &mut Io<'_, Self>) {}
    fn status(&self) -> Status {
        Status {
            role: Role::Follower,
            leader: None,
            epoch: None,
        }
    }
}

/// The engine benchmark's trial (`engine/ping-pong/<n>` in `benches/simulator.rs`, and
/// `profile-engine` for callgrind): `n / 2` balls in flight for 100 simulated ms at 10 µs
/// latency. Returns the messages delivered.
pub fn bench_trial(n: u32) -> u64 {
    let mut cfg = crate::SimConfig::new(n, 1);
    cfg.net = crate::NetConfig::constant_ms(0.01);
    cfg.horizon = std::time::Duration::from_millis(100);
    let report = crate::Sim::new(cfg, move |id: NodeId| PingPong::new(id, n))
        .expect("valid config")
        .run();
    report.metrics.total.delivered
}
