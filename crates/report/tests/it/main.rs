//! Every integration test of `election-report`, in one binary: each module below was its own
//! `crates/report/tests/NAME.rs` binary, each linking the whole dependency closure again. One binary
//! per package links it once (issue #44); `cargo test -p election-report --test it NAME` runs one
//! former file's tests (their paths are now `NAME::...`).
//!
//! `common` holds this package's own helpers; what the tests of several packages share
//! is in `election-testing` (`crates/testing`).

// The helpers and fixtures are `pub` for the sibling modules: the workspace's `unreachable_pub`
// is about library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod asked;
mod charts_say;
mod common;
mod quoted_numbers;
mod real_sweep;
mod reality;
mod report;
mod timeline;
mod trace;
