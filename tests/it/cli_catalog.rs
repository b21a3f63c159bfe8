//! End-to-end tests of the binary's catalogs and its own surface: `scenarios`, `params`,
//! `--help` with examples and valid values, shell completions, and output to a closed pipe or a
//! full disk.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{bench, fails, ok, text, BIN};

#[test]
fn scenarios_lists_the_whole_catalog() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(&["scenarios"], d.path()));
    for name in [
        "cold-start",
        "leader-crash",
        "leader-crash-lowest-detects",
        "cascade-crash",
        "leader-recovers",
        "flapping-leader",
        "flapping-node",
        "partition-leader-minority",
        "partition-leader-majority",
        "asymmetric-leader-out",
        "asymmetric-follower",
        "leader-pause",
        "follower-isolation-rejoin",
        "lossy-leader-crash",
        "minority-crash",
        "store-cut-holder",
        "store-crash",
        "store-quorum-loss",
        "store-endpoint-vanish",
        "store-slow",
        "store-cut-slow-clock-within",
        "store-cut-slow-clock-beyond",
        "quorum-loss",
        "constrained-election",
        "chained",
        "bridge",
        "liveness-omission",
        "flaky-leader-link",
        "stale-connection",
        "clock-jump-follower",
        "mixed-multiplier",
        "slow-leader",
        "amnesia-recover",
        "planned-handover",
        "store-split",
        "steady-noise",
    ] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} missing from:\n{out}"
        );
    }
    // 21 scenarios of `all` (15, and 6 on the lease store), then a heading for the 15 gray ones
    // and one for steady-noise (each with a blank line either side).
    assert_eq!(
        out.lines().filter(|l| !l.trim().is_empty()).count(),
        21 + 1 + 15 + 1 + 1
    );
    assert!(out.contains("Gray failures (not part of `all`"));
}

/// `--help` shows examples and the valid values of `--protocol`, `--scenario`, `--format` and
/// `--net`, taken from the catalogs; a bad `--format` lists them too.
#[test]
fn help_shows_examples_and_valid_values() {
    let d = tempfile::tempdir().unwrap();
    let top = ok(&bench(&["--help"], d.path()));
    assert!(
        top.contains("Examples:") && top.contains("completions"),
        "{top}"
    );
    for cmd in ["run", "trace", "sweep", "live"] {
        let h = ok(&bench(&[cmd, "--help"], d.path()));
        assert!(h.contains("Example"), "{cmd}: {h}");
        for p in election_runner::protocol::family_names() {
            assert!(
                h.contains(&format!("{p} (+")),
                "{cmd} --help lacks {p}: {h}"
            );
        }
        assert!(
            h.contains("+pre_vote") && h.contains("+quorum"),
            "{cmd}: {h}"
        );
        for s in election_runner::scenario::CATALOG {
            assert!(h.contains(s.name), "{cmd} --help lacks {}", s.name);
        }
    }
    let h = ok(&bench(&["trace", "--help"], d.path()));
    assert!(h.contains("[possible values: svg, mermaid, jsonl]"), "{h}");
    for n in election_runner::net::BUILTIN_NETS {
        assert!(h.contains(n), "trace --help lacks net {n}");
    }
    fails(
        &bench(
            &[
                "trace",
                "-p",
                "raft",
                "-n",
                "5",
                "-s",
                "leader-crash",
                "--format",
                "png",
            ],
            d.path(),
        ),
        2,
        &["png", "svg, mermaid, jsonl"],
    );
}

/// `completions SHELL` prints a script that knows the subcommands and the closed value sets.
#[test]
fn shell_completions_are_generated() {
    let d = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef election-bench"),
        ("fish", "complete -c election-bench"),
    ] {
        let s = ok(&bench(&["completions", shell], d.path()));
        assert!(s.contains(marker), "{shell}: {s}");
        for sub in ["sweep", "trace", "calibrate", "completions"] {
            assert!(s.contains(sub), "{shell} completion lacks {sub}");
        }
        assert!(
            s.contains("mermaid"),
            "{shell} completion lacks --format's values"
        );
    }
    fails(&bench(&["completions", "tcsh"], d.path()), 2, &["tcsh"]);
}

/// The bash script, sourced in bash, completes what a user types after a subcommand: protocol
/// specs (base names and the default sweep's specs), scenario names, network profiles.
#[test]
fn bash_completes_protocol_specs_and_scenario_names() {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("election-bench.bash");
    std::fs::write(&script, ok(&bench(&["completions", "bash"], d.path()))).unwrap();
    let complete = |line: &[&str]| -> Vec<String> {
        // bash calls the function with the command, the word being completed and the one
        // before it, COMP_WORDS and COMP_CWORD set.
        let words: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
        let prog = format!(
            "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _election__bench election-bench '{}' '{}'; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            words.join(" "),
            line.len() - 1,
            line[line.len() - 1],
            line[line.len() - 2],
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &prog])
            .output()
            .expect("bash runs");
        text(&out.stdout).lines().map(str::to_string).collect()
    };
    let specs = complete(&["election-bench", "run", "-p", "raft+pre"]);
    assert!(
        specs.contains(&"raft+pre_vote".to_string())
            && specs.contains(&"raft+pre_vote+check_quorum".to_string()),
        "{specs:?}"
    );
    let bases = complete(&["election-bench", "sweep", "--protocols", ""]);
    for b in ["bully", "ring", "raft", "lease", "raftrs", "omnipaxos"] {
        assert!(bases.contains(&b.to_string()), "{b} not in {bases:?}");
    }
    let scenarios = complete(&[
        "election-bench",
        "trace",
        "--scenario",
        "partition-leader-m",
    ]);
    assert_eq!(
        scenarios,
        ["partition-leader-minority", "partition-leader-majority"]
    );
    let nets = complete(&["election-bench", "run", "--net", "w"]);
    assert_eq!(nets, ["wan"]);
    let all = complete(&["election-bench", "sweep", "--scenarios", "al"]);
    assert_eq!(all, ["all"]);
}

#[test]
fn params_lists_keys_and_profiles() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(&["params"], d.path()));
    for k in [
        "heartbeat_ms",
        "raft.timeout_ms",
        "bully.rejoin",
        "net.loss",
        "lan",
        "wan",
        "lossy",
    ] {
        assert!(out.contains(k), "{k}");
    }
}

/// `params | head -1`, `scenarios | head -1`: a reader that goes away ends the command
/// quietly with success (it used to panic with exit 101); a write that fails for another
/// reason (a full disk: /dev/full) exits 1 with a message, not a panic.
#[test]
fn closed_pipes_end_quietly_and_write_errors_exit_1() {
    let d = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 4] = [
        &["params"],
        &["scenarios"],
        &["completions", "bash"],
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--json",
        ],
    ];
    for args in commands {
        let mut child = Command::new(BIN)
            .args(args)
            .current_dir(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the first write.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if Path::new("/dev/full").exists() {
            let full = fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let o = Command::new(BIN)
                .args(args)
                .current_dir(d.path())
                .stdout(full)
                .output()
                .unwrap();
            fails(&o, 1, &["cannot write to standard output"]);
            assert!(!text(&o.stderr).contains("panicked"));
        }
    }
}
