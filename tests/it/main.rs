//! Every integration test of `election-bench`, in one binary: each module below was its own
//! `tests/NAME.rs` binary, each linking the whole dependency closure again. One binary
//! per package links it once (issue #44); `cargo test -p election-bench --test it NAME` runs one
//! former file's tests (their paths are now `NAME::...`).
//!
//! `common` holds this package's own helpers; what the tests of several packages share
//! is in `election-testing` (`crates/testing`).

// The helpers and fixtures are `pub` for the sibling modules: the workspace's `unreachable_pub`
// is about library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod cli_catalog;
mod cli_compare;
mod cli_fresh;
mod cli_live;
mod cli_merge;
mod cli_report;
mod cli_run;
mod cli_sweep;
mod cli_trace;
mod cli_tune;
mod cli_validate;
mod committed_report;
mod common;
mod configs;
mod help_examples;
mod html_page;
mod msrv;
mod profile;
mod readme_examples;
mod replay_commands;
