//! `election-runner`: the scenario catalog, parameter sweeps, and the results files of
//! election-bench.
//!
//! The pieces, in the order a sweep uses them:
//!
//! * [`params`] — every timing, protocol, network and scenario knob under one name, the fair
//!   timing defaults, and [`Resolved`](params::Resolved), a cell's typed parameters;
//! * [`net`] — network profiles (`ideal`, `lan`, `dc`, `wan`, `lossy`) and the latency syntax;
//! * [`input`] — the one reader of files a user names (configs, `empirical:` files, scrapes):
//!   regular files only, a size limit per kind;
//! * [`empirical`] — `empirical:FILE` distributions read from measurements;
//! * [`profile`] — a configuration built from an etcd cluster's Prometheus metrics;
//! * [`protocol`] — protocol specs (`raft+pre_vote`) and building a protocol's configuration;
//! * [`scenario`] — the scenario catalog and custom scenarios;
//! * [`config`] — a sweep as asked for (TOML file and CLI flags), [`SweepSpec`];
//! * [`plan`] — a checked sweep, [`SweepPlan`], its grid of [`Cell`]s and one trial of a cell;
//! * [`sweep`] — running a sweep in parallel with resume and sharding, and merging shards;
//! * [`shard`] — what a shard of a sweep, an exploration or a tuning is, and `--shard auto`;
//! * [`results`] and [`stats`] — the typed results schema (trial rows, summary rows with their
//!   column definitions, the manifest), written and read through the same types, and the
//!   statistics;
//! * [`reference`] — the differential sweep of our Raft against the production libraries;
//! * [`validate`] — textbook results measured through the same path (`election-bench validate`);
//! * [`verify`] — recorded results checked by running a sample of their trials again
//!   (`election-bench verify`, and the sample `--resume` and `merge` run).
//!
//! The files a sweep writes (`trials.csv`, `summary.csv`, `manifest.json`) follow
//! `results/README.md`, which documents every column.
pub mod config;
pub mod disk;
pub mod empirical;
pub mod error;
pub mod explore;
pub mod files;
pub mod input;
pub mod memory;
pub mod net;
pub mod params;
pub mod plan;
pub mod profile;
mod progress;
pub mod protocol;
pub mod reference;
pub mod replay;
pub mod results;
pub mod scenario;
pub mod shard;
pub mod stats;
pub mod sweep;
pub mod systems;
pub mod tune;
pub mod validate;
pub mod verify;

pub use config::SweepSpec;
pub use error::{Error, Result};
pub use plan::{Cell, SweepPlan, TrialRun};
pub use shard::{Shard, ShardBy};
pub use sweep::{merge, run_sweep, MergeOutcome, SweepOptions, SweepOutcome};
