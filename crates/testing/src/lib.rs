//! Test helpers that the integration tests of several packages share. Dev-only: no package
//! depends on it outside `[dev-dependencies]`, and it is never published.
//!
//! # Shape
//!
//! Each package has one integration-test binary, `tests/it/main.rs`, whose modules are its
//! former `tests/NAME.rs` files (issue #44). Helpers live at one of two levels:
//!
//! * here, what reads the simulator's output the same way whatever the protocol: the
//!   [`trace`] readers (who led when, how many messages of a kind were sent, which node
//!   entered the leader role) that the bully's and the ring's harnesses each had a copy of;
//! * in the package's own `tests/it/common.rs`, what belongs to that package: running its
//!   protocol with its config (`election-bully`, `election-ring`), the auditing Raft wrapper
//!   (`election-raft`), the toy protocol of the engine tests (`election-sim`), the synthetic
//!   results directory (`election-report`), sweep cells (`election-runner`) and the binary's
//!   command-line helpers (`election-bench`).
//!
//! proptest keeps a package's regression seeds in `tests/proptest-regressions/NAME.txt`: its
//! default (`SourceParallel`) walks up from `tests/it/NAME.rs` to the directory holding a
//! `main.rs`, `tests/it`, and writes beside that directory.
//!
//! This crate depends on `election-core` and `election-sim` only, so any package whose tests
//! run trials can use it without a cycle — except `election-sim` itself (and
//! `election-core`), whose tests keep their helpers at home.

pub mod trace;
