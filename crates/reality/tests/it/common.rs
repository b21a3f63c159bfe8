//! The fixture corpus: where it is and how to read it.

use std::path::PathBuf;

/// A fixture run's directory (`fixtures/NAME`).
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name)
}

/// Three members, 100/1000 ms, etcd 3.4 defaults: three kills, then three pauses.
pub const KILL_PAUSE: &str = "etcd-3.4.23-n3-kill-pause";

/// Three members with `--pre-vote`: two kills.
pub const PRE_VOTE: &str = "etcd-3.4.23-n3-pre-vote-kill";

/// Three members: the leader cut off from the other two both ways for 10 s, twice.
pub const PARTITION: &str = "etcd-3.4.23-n3-partition";

/// A fixture member's log text.
pub fn log_text(run: &str, member: u32) -> String {
    std::fs::read_to_string(fixture(run).join(format!("logs/n3/m{member}.log"))).unwrap()
}

/// The fixture's raft ids (hex, from its members.csv), by member.
pub const KILL_PAUSE_IDS: [u64; 3] = [0x56a276743918c5d8, 0xc3da0d31b8b36174, 0xfa188d307044974f];
