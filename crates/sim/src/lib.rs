//! `election-sim`: a deterministic discrete-event network simulator for leader-election
//! protocols, with a fault model and an observer that computes every metric.
//!
//! # Example
//!
//! Two nodes of [`pingpong`] bounce a ball over the default network (1 ms constant latency)
//! until a 10 ms horizon; the observer counts what was sent. `examples/highest_alive.rs` at the
//! repository's root runs a small leader election through a crash and a partition.
//!
//! ```
//! use std::time::Duration;
//! use election_sim::pingpong::PingPong;
//! use election_sim::{Sim, SimConfig};
//!
//! let mut cfg = SimConfig::new(2, 7);
//! cfg.horizon = Duration::from_millis(10);
//! let report = Sim::new(cfg, |id| PingPong::new(id, 2)).unwrap().run();
//! // One throw at boot, then one at each catch: at 1, 2, ..., 10 ms (the horizon included).
//! assert_eq!(report.metrics.total.sent.iter().sum::<u64>(), 11);
//! ```
//!
//! # Determinism
//!
//! A trial is single-threaded. Events sit in one queue ordered by (time, insertion
//! sequence), so simultaneous events happen in the order they were scheduled. All randomness
//! comes from the trial seed through ChaCha8 streams: stream 1 for the network (latency, loss,
//! duplication), stream 2 for the protocols (`Io::rng`), stream 3 for fault selectors. Nothing
//! iterates over a hash map. The same [`SimConfig`] and protocol factory give the same event
//! sequence, and so the same trace and metrics, on every machine and every run.
//!
//! [`Sim::run_all`] runs several trials at once, sharing the run before the first fault
//! between those whose configurations differ only in their faults (a sweep's scenarios of one
//! protocol, size and seed); each report is exactly the one [`Sim::run`] gives, and the
//! queue's sequence numbers are laid out so that it can be (see the engine's docs).
//!
//! # Time
//!
//! Simulated time has nanosecond resolution ([`election_core::Time`]); metrics are reported in
//! milliseconds. All nodes boot at time zero, in id order, before any fault at time zero.
//!
//! # Network
//!
//! Every message draws a one-way latency from the configured [`Latency`] distribution (or its
//! link's override), is lost with probability `loss`, and is duplicated with probability
//! `duplicate`. With `fifo` a link never reorders; without it, latencies are independent. A
//! log-normal (every built-in network but `ideal`, and the `server` node's processing and disk
//! times) is drawn through a table of its quantiles ([`LogNormalTable`]): exact at 4,096
//! equal-probability edges and in both tails, within 1/4096 of its CDF in between.
//!
//! **Links going down and messages in flight.** A message is checked against the link state
//! twice: when it is sent (a message sent on a cut link is dropped at once) and when it would
//! be delivered (a message in flight when its link is cut is dropped on arrival, as if it were
//! still on the wire; a message sent before a heal that arrives after it is delivered only if
//! it passed the send check). Messages to a crashed node are dropped on arrival; messages a node
//! sent before crashing stay in flight and arrive normally. A message arriving at a node that
//! crashed and recovered meanwhile is delivered to the new incarnation.
//!
//! # Faults
//!
//! See [`FaultAction`] and [`Selector`]: crash, recover, pause (stop-the-world), partition,
//! one-way link cuts, stale connections (one-way cuts that end by themselves), isolate, cutting nodes off the shared resource, heal, loss changes, forced
//! suspicion and switching automatic failure detection off.
//!
//! # Workload
//!
//! See [`workload`]: every leader writes to a shared resource (or to a majority) every interval,
//! carrying its epoch as a fencing token, and a deposed leader may go on writing for a drawn
//! lag; the observer counts the writes taken from deposed leaders. Its randomness is stream 4,
//! so it changes none of the protocols' draws.
//!
//! # Metrics
//!
//! The protocols report only their [`Status`](election_core::Status). The [`Observer`]
//! computes every metric from status changes, message events and topology changes; its module
//! documentation defines each one.
//!
//! # End of a trial
//!
//! A trial ends at `horizon`, or earlier once every fault has fired and the same quorum leader
//! (see the observer) has led for `settle` and for the verdict's `hold` span since the later of
//! the start of its leadership and the last fault: a trial costs what its election costs, not
//! what an arbitrary horizon costs, and it never ends before its verdict is decided.
//!
//! These rules (the fault timeline, the wait for a leader, the reference instant, the end of a
//! trial, selector resolution, the topology after a fault) are written once, sans IO, in
//! [`trial`]; the engine and the live driver both call them.
mod config;
pub mod empirical;
mod engine;
pub mod fault;
mod links;
pub mod noise;
pub mod observer;
pub mod pingpong;
mod queue;
pub mod stream;
pub mod trial;
pub mod workload;

pub use config::{
    ConfigError, Latency, LinkLatency, LogNormalTable, NetConfig, NodeTime, Sampler, SimConfig,
};
pub use empirical::{Empirical, EmpiricalError, EmpiricalKind};
pub use engine::{Sim, TrialReport};
pub use fault::{
    group_of, Applied, Fault, FaultAction, NodeSet, Resolver, Selector, SyntaxError, ACTIONS,
    SELECTOR_SYNTAX, SET_SYNTAX,
};
pub use noise::{Bursts, Noise, Spikes};
pub use observer::{
    quorum_possible, DropReason, Links, Metrics, MsgCounts, MsgInfo, Observer, Outcome, TraceEvent,
    TraceKind, TraceSink,
};
pub use stream::Stream;
