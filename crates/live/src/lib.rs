//! `election-live`: live mode. The same protocol state machines the simulator drives, over
//! real UDP sockets on loopback with tokio, measured by the simulator's own observer.
//!
//! * [`run_trial`] runs one trial of any protocol whose messages implement
//!   [`election_core::Wire`]: one task per node with its own socket, the scenario's fault
//!   timeline applied in the driver (crash, recover, pause, partitions, one-way cuts, loss,
//!   added delay), metrics from real timestamps. See the [`driver`] module for how. Its
//!   configuration ([`LiveConfig`]) is the simulator's `SimConfig` plus the bind address, and
//!   the trial's rules (the fault timeline, the reference instant, the end of the trial, the
//!   selectors, the topology) are the simulator's own `election_sim::trial`, so a live trial
//!   decides what a simulated one does (`tests/it/conformance.rs` checks it).
//! * [`datagram`] is the authenticated envelope around each message: a version byte, the
//!   sender's and the receiver's ids, a sequence number and a length, and a tag under the
//!   trial's secret key (HMAC-SHA-256), all checked before the protocol's decoder runs: only the
//!   trial's own nodes can speak in it, and a replay is refused.
//! * [`run_live`] (`election-bench live`) runs trials of a protocol spec and a scenario from
//!   the runner's catalog and writes them as `trials.csv` / `summary.csv` rows with
//!   `mode = live` and a [`DATAGRAMS_REJECTED`] column.
//! * [`calibrate()`] (`election-bench calibrate`) measures the loopback, runs the same scenario
//!   live and simulated over a latency profile fitted to it, writes the measurements into
//!   [`CalibrateArgs::out`] (the CLI's default is a temporary directory; `--out
//!   reports/calibration --force` replaces the committed page) and returns what the comparison
//!   page says; the CLI has the report crate render it. This crate does not depend on the
//!   report (check: `cargo tree -p election-live -e normal -i election-report` finds no
//!   path).
//!
//! No protocol code changes for live mode: the protocols never knew what drives them.
pub mod calibrate;
pub mod datagram;
pub mod driver;
mod run;

pub use calibrate::{calibrate, CalibrateArgs, CalibrationOutcome};
pub use driver::{
    run_trial, run_trial_with, Health, Hooks, LiveConfig, LiveError, LiveReport, OnBound,
    OnSockets, Rejection,
};
pub use run::{
    live_config, live_trial, run_built, run_live, LiveArgs, LiveOutcome, RunError,
    DATAGRAMS_REJECTED, LOOPBACK,
};
