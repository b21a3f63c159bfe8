//! Every integration test of `election-runner`, in one binary: each module below was its own
//! `crates/runner/tests/NAME.rs` binary, each linking the whole dependency closure again. One binary
//! per package links it once (issue #44); `cargo test -p election-runner --test it NAME` runs one
//! former file's tests (their paths are now `NAME::...`). `tests/flat_memory.rs` stays a binary
//! of its own: it measures the process's peak heap with a global allocator, which every other
//! test in this binary would disturb.
//!
//! `common` holds this package's own helpers; what the tests of several packages share
//! is in `election-testing` (`crates/testing`).

// The helpers and fixtures are `pub` for the sibling modules: the workspace's `unreachable_pub`
// is about library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod common;
mod damage;
mod disk;
mod empirical;
mod explore;
mod fault_properties;
mod lease;
mod lease_variants;
mod planned_handover;
mod readme_columns;
mod shared_run;
mod stale_connection;
mod stop_lag;
mod store;
mod timeline;
mod timing_multiplier;
mod verdicts;
mod voters;
