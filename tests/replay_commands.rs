//! Every replay command the committed reports print (`election-bench run ...`,
//! `election-bench trace ...` in backticks in reports/*/*.md) runs as printed, with the binary
//! `cargo install --path .` installs: a reader who copies one from a finding gets its trial.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_election-bench");

/// The `election-bench run|trace ...` spans in backticks of `text`.
fn replay_commands(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("election-bench run ") || s.starts_with("election-bench trace "))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_replay_command_in_the_committed_reports_runs() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut commands = Vec::new();
    for dir in std::fs::read_dir(&reports).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "md") {
                commands.extend(replay_commands(&std::fs::read_to_string(&f).unwrap()));
            }
        }
    }
    commands.sort();
    commands.dedup();
    assert!(
        commands.len() >= 20,
        "only {} replay commands",
        commands.len()
    );
    let tmp = tempfile::tempdir().unwrap();
    for c in &commands {
        let args = shlex::split(c).unwrap_or_else(|| panic!("cannot split {c:?}"));
        let out = Command::new(BIN)
            .args(&args[1..])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{c:?} failed with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn replay_commands_are_the_backticked_ones() {
    let md = "see `election-bench run -p raft -n 5 -s leader-crash --seed 3`, not `run -p x` or `election-bench sweep`; `election-bench trace -p ring -n 3 -s cold-start`";
    assert_eq!(
        replay_commands(md),
        [
            "election-bench run -p raft -n 5 -s leader-crash --seed 3",
            "election-bench trace -p ring -n 3 -s cold-start"
        ]
    );
}
