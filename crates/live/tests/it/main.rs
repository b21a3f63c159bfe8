//! Every integration test of `election-live`, in one binary: each module below was its own
//! `crates/live/tests/NAME.rs` binary, each linking the whole dependency closure again. One binary
//! per package links it once (issue #44); `cargo test -p election-live --test it NAME` runs one
//! former file's tests (their paths are now `NAME::...`).

// The helpers and fixtures are `pub` for the sibling modules: the workspace's `unreachable_pub`
// is about library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod calibrate;
mod conformance;
mod datagram;
mod forgery;
mod fuzz;
mod lease;
mod live;
mod run;
