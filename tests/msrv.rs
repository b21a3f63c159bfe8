//! The declared minimum Rust version is the real one: no locked dependency needs a newer
//! compiler, and the README states the same version. (The toolchain itself cannot be swapped
//! here; this checks every locked package's own `rust-version` against ours.)

use std::process::Command;

fn version(v: &str) -> Vec<u32> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

#[test]
fn the_declared_rust_version_covers_every_locked_dependency_and_the_readme() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
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
