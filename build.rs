//! Records the git commit the binary is built from, for the results manifest
//! (`ELECTION_BENCH_GIT_COMMIT` in the environment overrides it).
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    println!("cargo:rerun-if-changed=.git/packed-refs");
    println!("cargo:rerun-if-env-changed=ELECTION_BENCH_GIT_COMMIT");
    let commit = std::env::var("ELECTION_BENCH_GIT_COMMIT").ok().or_else(|| {
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    });
    if let Some(c) = commit.filter(|c| !c.is_empty()) {
        println!("cargo:rustc-env=ELECTION_BENCH_GIT_COMMIT={c}");
    }
}
