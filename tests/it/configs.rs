//! The example TOML configs in `examples/configs/` load, plan and run: each one is swept with
//! two seeds per cell into a temporary directory, every planned cell gets its rows, nothing is
//! warned about, and the README points at every file.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_election-bench");

fn configs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
    let mut v: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_config_runs() {
    let configs = configs();
    assert!(configs.len() >= 4, "{configs:?}");
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let d = tempfile::tempdir().unwrap();
    for c in &configs {
        let name = c.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            readme.contains(&format!("examples/configs/{name}")),
            "README.md does not mention examples/configs/{name}"
        );
        // The config parses as a sweep on its own.
        let text = fs::read_to_string(c).unwrap();
        let plan = election_runner::SweepSpec::from_toml(&text)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .plan()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let cells = plan.cells().unwrap();
        assert!(plan.warnings().is_empty(), "{name}: {:?}", plan.warnings());
        let out = d.path().join(&name);
        let o = Command::new(BIN)
            .args(["sweep", "--config"])
            .arg(c)
            .args(["--seeds", "2", "--no-report", "--quiet", "--out"])
            .arg(&out)
            .current_dir(d.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        assert!(err.is_empty(), "{name} warned: {err}");
        let ran = cells.iter().filter(|c| c.skipped.is_none()).count();
        let rows = fs::read_to_string(out.join("trials.csv"))
            .unwrap()
            .lines()
            .count()
            - 1;
        assert_eq!(rows, ran * 2, "{name}: {rows} rows for {ran} cells");
    }
}
