//! `election-live`: live mode. The same protocol state machines the simulator drives, over
//! real UDP sockets on loopback with tokio, measured by the simulator's own observer.
//!
//! * [`run_trial`] runs one trial of any protocol whose messages implement
//!   [`election_core::Wire`]: one task per node with its own socket, the scenario's fault
//!   timeline applied in the driver (crash, recover, pause, partitions, one-way cuts, loss,
//!   added delay), metrics from real timestamps. See the [`driver`] module for how.
//! * [`datagram`] is the framing around each message: a version byte, the sender's id and a
//!   length, all checked before the protocol's decoder runs.
//!
//! No protocol code changes for live mode: the protocols never knew what drives them.
#![warn(missing_docs, unreachable_pub)]

pub mod datagram;
mod delay;
pub mod driver;

pub use driver::{
    run_trial, run_trial_with, FaultsAt, Health, Hooks, LiveConfig, LiveError, LiveReport,
    Rejection,
};
