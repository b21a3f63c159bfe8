//! The declared minimum Rust version is the real one: no locked dependency needs a newer
//! compiler, and the README states the same version. (The toolchain itself cannot be swapped
//! here; this checks every locked package's own `rust-version` against ours.)
//!
//! Only the packages built for this host are checked (`cargo metadata --filter-platform
//! <host>`): they are exactly the ones `cargo test` has just downloaded, so the check runs
//! offline on a fresh machine with an empty cargo home. Without the filter, cargo would need
//! every locked package, the Windows-only ones too, which a Linux build never downloads.

use std::process::Command;

fn version(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The host triple, from `rustc -vV` (the compiler cargo builds the tests with).
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .unwrap_or_else(|e| panic!("{rustc} -vV: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or_else(|| panic!("{rustc} -vV names no host:\n{text}"))
        .trim()
        .to_string()
}

#[test]
fn the_declared_rust_version_covers_every_locked_dependency_and_the_readme() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = host_triple();
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours = packages
        .iter()
        .find(|p| p["name"] == "election-bench")
        .and_then(|p| p["rust_version"].as_str())
        .expect("election-bench declares rust-version")
        .to_string();
    // Every workspace member declares the same minimum (inherited from the workspace).
    for id in meta["workspace_members"].as_array().unwrap() {
        let p = packages.iter().find(|p| p["id"] == *id).unwrap();
        assert_eq!(
            p["rust_version"].as_str(),
            Some(ours.as_str()),
            "{} must inherit rust-version",
            p["name"]
        );
    }
    let too_new: Vec<String> = packages
        .iter()
        .filter_map(|p| {
            let v = p["rust_version"].as_str()?;
            (version(v) > version(&ours))
                .then(|| format!("{} {} needs {v}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        too_new.is_empty(),
        "rust-version {ours} is below what the lock needs: {too_new:?}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust toolchain ({ours} or newer)")),
        "README.md must state the minimum Rust version {ours}"
    );
}
