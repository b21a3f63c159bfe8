//! `election-reality`: a real etcd cluster on this machine through the simulator's faults,
//! measured in the simulator's terms, so its rows sit beside the prediction of the matching
//! system spec (`etcd@3.4`, `etcd@3.5` in `crates/runner/src/systems.rs`).
//!
//! How it fits:
//!
//! * [`version`] reads `etcd --version` and picks the system spec;
//! * [`cluster`] starts the members (loopback, free ports, a temporary data directory, a log
//!   file each), injects the faults as signals to their process groups and kills every one of
//!   them on drop, on error and on Ctrl-C;
//! * [`proxy`] stands in front of each member's peer port and cuts the links a partition
//!   cuts, knowing each connection's sender from etcd's `X-Server-From` header;
//! * [`status`] asks a member who leads at which term (`/v3/maintenance/status`), which is how
//!   the run knows the cluster is healthy before a fault and settled after it;
//! * [`log`] reads the members' zap JSON logs into election events with their timestamps;
//! * [`measure`] feeds those events and the injector's journal to the simulator's own observer,
//!   so every column is computed by the code that computes it for a simulated trial;
//! * [`replay`] measures a finished run again from its files alone;
//! * [`run`] is the experiment: per cluster size, per fault, K trials, each written as a
//!   `mode = real` row of `trials.csv` (and its failover details and the machine's load into
//!   `reality.csv`) as soon as it is measured.

pub mod cluster;
pub mod log;
pub mod measure;
pub mod proxy;
pub mod replay;
pub mod run;
pub mod status;
pub mod version;

pub use cluster::{install_interrupt_handler, interrupted, Cluster, ClusterConfig};
pub use measure::{measure, Act, Failover, Measured, Verdict, Window};
pub use run::{run, Fault, RealityArgs, RealityOutcome, TrialReport};
pub use version::{parse_version_output, system_for, EtcdVersion};

use std::path::PathBuf;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What was asked for is invalid (the message names the option and the value).
    #[error("{0}")]
    Usage(String),
    /// etcd's version could not be read, or has no system spec.
    #[error("{0}")]
    Version(String),
    /// A process could not be started, signalled or asked, or died by itself.
    #[error("{0}")]
    Process(String),
    /// The runner refused the cell (its message).
    #[error(transparent)]
    Runner(#[from] election_runner::Error),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Ctrl-C or SIGTERM: every member was killed, the finished trials are written.
    #[error("interrupted: every etcd member this run started was killed")]
    Interrupted,
}

impl Error {
    /// True for errors in what the user asked for (exit status 2).
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Usage(_) | Error::Version(_) => true,
            Error::Runner(e) => e.is_usage(),
            _ => false,
        }
    }
}
