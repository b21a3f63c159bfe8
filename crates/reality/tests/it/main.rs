//! Every integration test of `election-reality`, in one binary (the repository's layout:
//! `cargo test -p election-reality --test it NAME` runs one module). None needs etcd: they read
//! the corpus of real etcd 3.4.23 logs under `fixtures/` (see `fixtures/README.md`), or run
//! the stand-in member (`standin`).

// The helpers are `pub` for the sibling modules: the workspace's `unreachable_pub` is about
// library APIs, which a test binary has none of.
#![allow(unreachable_pub)]

mod common;
mod log;
mod measure;
mod standin;
