//! Every replay command the committed reports print (`election-bench run ...`,
//! `election-bench trace ...` in backticks in the committed reports/*/*.md) runs as printed,
//! with the binary `cargo install --path .` installs: a reader who copies one from a finding
//! gets its trial. The replays of a `--config` sweep run from any directory.

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

/// The committed report directories: the `.gitignore` allow-list under `reports/` (every other
/// directory there is a user's own run, which the tests never read).
fn committed_report_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    let ignore = std::fs::read_to_string(root.join(".gitignore")).unwrap();
    ignore
        .lines()
        .filter_map(|l| l.strip_prefix("!/")?.strip_suffix('/'))
        .filter(|d| d.starts_with("reports/"))
        .map(|d| root.join(d))
        .collect()
}

/// Runs `command` (a replay, as printed) in `dir`; its stderr if it fails.
fn run_in(command: &str, dir: &Path) -> Result<(), String> {
    let args = shlex::split(command).unwrap_or_else(|| panic!("cannot split {command:?}"));
    let out = Command::new(BIN)
        .args(&args[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} in {} failed with {}:\n{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The replay commands in the Markdown files of `dir`.
fn replays_in(dir: &Path) -> Vec<String> {
    let mut commands = Vec::new();
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "md") {
            commands.extend(replay_commands(&std::fs::read_to_string(&f).unwrap()));
        }
    }
    commands
}

#[test]
fn every_replay_command_in_the_committed_reports_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = committed_report_dirs(root);
    assert!(dirs.len() >= 5, "the allow-list names only {dirs:?}");
    let mut commands = Vec::new();
    for dir in dirs {
        // A committed directory a checkout may lack (none today) has nothing to replay.
        if !dir.is_dir() {
            continue;
        }
        commands.extend(replays_in(&dir));
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
        run_in(c, tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A sweep run with `--config cfg/x.toml` (relative, with an `empirical:` file beside it)
/// prints replay commands that name both by absolute path: they run from the directory the
/// sweep ran in and from any other.
#[test]
fn the_replays_of_a_config_sweep_run_from_any_directory() {
    let here = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let cfg = here.path().join("cfg");
    std::fs::create_dir(&cfg).unwrap();
    std::fs::write(cfg.join("fsync.csv"), "1.5\n2\n3.5\n").unwrap();
    std::fs::write(
        cfg.join("x.toml"),
        "name = \"cfgrun\"\nprotocols = [\"raft\"]\nnodes = [3]\nscenarios = [\"leader-crash\"]\n\
         seeds = 2\n[params]\n\"node.fsync_ms\" = \"empirical:fsync.csv\"\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["sweep", "--config", "cfg/x.toml", "--quiet"])
        .current_dir(here.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commands = replays_in(&here.path().join("reports/cfgrun"));
    assert!(!commands.is_empty(), "the report prints no replay command");
    for c in &commands {
        assert!(
            c.contains("--config /"),
            "{c:?} names its config relatively"
        );
        assert!(
            !c.contains("empirical:cfg/"),
            "{c:?} names a file relatively"
        );
        run_in(c, here.path()).unwrap_or_else(|e| panic!("{e}"));
        run_in(c, elsewhere.path()).unwrap_or_else(|e| panic!("{e}"));
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
