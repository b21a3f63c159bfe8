//! A toy protocol for engine tests: "highest claimant wins".
//!
//! The leader broadcasts LEADER every 10 ms; a follower adopts the sender of any LEADER whose
//! id is at least that of its current leader (or any, after suspecting), and suspects after
//! 35 ms of silence. A suspecting node becomes candidate, and after 5 ms claims leadership
//! itself. A leader hearing a LEADER from a higher id steps down. Node `n` leads at boot.

use std::time::Duration;

use election_core::{
    Io, Message, MsgCategory, NodeId, Protocol, QuorumRule, Role, Status, TimerKind,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    Leader,
    Ping(u32),
}

impl Message for Msg {
    fn category(&self) -> MsgCategory {
        match self {
            Msg::Leader => MsgCategory::Leader,
            Msg::Ping(_) => MsgCategory::Election,
        }
    }
    fn kind(&self) -> &'static str {
        match self {
            Msg::Leader => "LEADER",
            Msg::Ping(_) => "PING",
        }
    }
    fn wire_size(&self) -> usize {
        match self {
            Msg::Leader => 5,
            // The size encodes the ping's number so tests can follow one message.
            Msg::Ping(x) => 100 + *x as usize,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    Detect,
    Claim,
    Beat,
}

impl TimerKind for Timer {
    const COUNT: usize = 3;
    fn index(self) -> usize {
        self as usize
    }
    fn is_failure_detector(self) -> bool {
        self == Timer::Detect
    }
}

#[derive(Clone)]
pub struct Toy {
    pub id: NodeId,
    pub n: u32,
    pub role: Role,
    pub leader: Option<NodeId>,
    pub boots: u64,
    /// Every ping payload received, in order, with the time.
    pub log: Vec<(u64, u32)>,
    /// Pings to send to node `n` at boot.
    pub pings: u32,
    /// Send one message to node `n + 1` (which does not exist) at boot.
    pub bogus: bool,
}

impl Toy {
    pub fn new(id: NodeId, n: u32) -> Self {
        Toy {
            id,
            n,
            role: Role::Follower,
            leader: None,
            boots: 0,
            log: Vec::new(),
            pings: 0,
            bogus: false,
        }
    }
    fn lead(&mut self, io: &mut Io<'_, Self>) {
        self.role = Role::Leader;
        self.leader = Some(self.id);
        io.cancel_timer(Timer::Detect);
        self.beat(io);
    }
    fn beat(&mut self, io: &mut Io<'_, Self>) {
        let me = self.id;
        io.send_many((1..=self.n).map(NodeId).filter(|&v| v != me), &Msg::Leader);
        io.set_timer(Timer::Beat, Duration::from_millis(10));
    }
}

impl Protocol for Toy {
    type Msg = Msg;
    type Timer = Timer;
    type Persist = u64;

    fn on_start(&mut self, io: &mut Io<'_, Self>, stored: Option<&u64>) {
        self.boots = stored.copied().unwrap_or(0) + 1;
        io.persist(self.boots);
        for x in 0..self.pings {
            io.send(NodeId(self.n), Msg::Ping(x));
        }
        if self.bogus {
            io.send(NodeId(self.n + 1), Msg::Ping(0));
        }
        if self.id.0 == self.n && self.boots == 1 {
            self.lead(io);
        } else {
            io.set_timer(Timer::Detect, Duration::from_millis(35));
        }
    }
    fn on_message(&mut self, io: &mut Io<'_, Self>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Ping(x) => self.log.push((io.now().0, x)),
            Msg::Leader => {
                if self.role == Role::Leader && from < self.id {
                    return;
                }
                if self.role == Role::Leader {
                    io.cancel_timer(Timer::Beat);
                }
                self.role = Role::Follower;
                self.leader = Some(from);
                io.cancel_timer(Timer::Claim);
                io.set_timer(Timer::Detect, Duration::from_millis(35));
            }
        }
    }
    fn on_timer(&mut self, io: &mut Io<'_, Self>, timer: Timer) {
        match timer {
            Timer::Detect => self.on_suspect(io),
            Timer::Claim => self.lead(io),
            Timer::Beat => self.beat(io),
        }
    }
    fn on_suspect(&mut self, io: &mut Io<'_, Self>) {
        if self.role == Role::Leader {
            return;
        }
        self.role = Role::Candidate;
        self.leader = None;
        io.set_timer(Timer::Claim, Duration::from_millis(5));
    }
    fn status(&self) -> Status {
        Status {
            role: self.role,
            leader: self.leader,
            epoch: None,
        }
    }
    /// Like the bully, it elects among whoever is alive.
    fn quorum_rule(&self) -> QuorumRule {
        QuorumRule::LiveMembers
    }
}
