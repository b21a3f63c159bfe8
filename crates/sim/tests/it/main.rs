//! Every integration test of `election-sim`, in one binary: each module below was its own
//! `crates/sim/tests/NAME.rs` binary, each linking the whole dependency closure again. One binary
//! per package links it once (issue #44); `cargo test -p election-sim --test it NAME` runs one
//! former file's tests (their paths are now `NAME::...`).
//!
//! `common` holds this package's own helpers: the toy protocol of the engine tests.
//! (`election-testing`, the helpers the other packages' tests share, depends on this crate, so
//! these tests cannot use it without a cycle.)

// The helpers and fixtures are `pub` for the sibling modules: the workspace's `unreachable_pub`
// is about library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod common;
mod engine;
mod extremes;
mod gray;
mod node_time;
mod properties;
mod run_all;
