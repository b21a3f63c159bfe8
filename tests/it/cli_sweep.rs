//! End-to-end tests of `sweep`: the three results files, byte-identical whatever `--jobs` is,
//! a killed sweep resumed equals an uninterrupted one, configs and their errors, and every kind
//! of bad input with its exit code. Sweeps here are tiny (2 seeds, 3–5 nodes) so the suite
//! stays fast in debug builds.

use crate::common;

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    bench, corrupt, fails, field, files, listing, ok, rehash, same_files, tiny, BIN, TINY,
};

#[test]
fn sweep_writes_the_three_files_to_results_name_by_default() {
    let d = tempfile::tempdir().unwrap();
    let mut args = TINY.to_vec();
    args.extend(["--name", "tiny", "--set", "net.loss=0,0.01"]);
    let out = ok(&bench(&args, d.path()));
    assert!(out.contains("16 cells"), "{out}");
    let dir = d.path().join("results/tiny");
    // trials.csv is the working copy; trials.csv.gz the form results are committed in.
    assert_eq!(
        listing(&dir),
        [
            "manifest.json",
            "summary.csv",
            "trials.csv",
            "trials.csv.gz"
        ]
    );
    let trials = fs::read_to_string(dir.join("trials.csv")).unwrap();
    let header = trials.lines().next().unwrap();
    assert!(header.starts_with("mode,protocol,nodes,scenario,net,seed,net.loss,converged,"));
    assert_eq!(trials.lines().count(), 1 + 16 * 2);
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert!(
        summary.starts_with("protocol,nodes,scenario,net,net.loss,trials,measured,converged_rate,")
    );
    assert_eq!(summary.lines().count(), 1 + 16);
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["tool"], "election-bench");
    assert_eq!(m["name"], "tiny");
    assert_eq!(m["cells"], 16);
    assert_eq!(m["trials"], 32);
    assert_eq!(
        m["config"]["varied"]["net.loss"],
        serde_json::json!(["0", "0.01"])
    );
    assert_eq!(m["config"]["nets"][0]["latency"], "lognormal:0.25:0.3");
    let cmd = m["command"].as_str().unwrap();
    assert!(cmd.starts_with("election-bench sweep --protocols") && !cmd.contains("--quiet"));
}

#[test]
fn results_are_byte_identical_whatever_jobs_is() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "j1", &["--jobs", "1"]));
    ok(&tiny(d.path(), "j2", &["--jobs", "2"]));
    same_files(&d.path().join("j1"), &d.path().join("j2"));
}

#[test]
fn a_sweep_cut_short_anywhere_and_resumed_equals_an_uninterrupted_one() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "full", &[]));
    let full = d.path().join("full");
    let trials = fs::read(full.join("trials.csv")).unwrap();
    let manifest = fs::read(full.join("manifest.json")).unwrap();
    let header_end = trials.iter().position(|&b| b == b'\n').unwrap() + 1;
    let row2_end = header_end
        + trials[header_end..]
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(1)
            .unwrap()
            .0
        + 1;
    // Cut points: empty file, mid-header, after the header, mid-row, after one cell (two
    // rows), mid-cell, one byte short of the end, complete.
    let cuts = [
        0,
        header_end / 2,
        header_end,
        header_end + 10,
        row2_end,
        row2_end + 40,
        trials.len() - 1,
        trials.len(),
    ];
    for (i, &cut) in cuts.iter().enumerate() {
        let name = format!("cut{i}");
        let dir = d.path().join(&name);
        fs::create_dir_all(&dir).unwrap();
        // What a killed sweep leaves: a partial trials.csv and the in-progress marker.
        fs::write(dir.join("trials.csv"), &trials[..cut]).unwrap();
        fs::write(dir.join(".in-progress.json"), &manifest).unwrap();
        ok(&tiny(d.path(), &name, &["--resume"]));
        same_files(&full, &dir);
        assert!(!dir.join(".in-progress.json").exists());
    }
}

#[test]
fn a_killed_sweep_resumes_without_losing_or_repeating_anything() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--protocols",
        "bully,ring,raft",
        "--nodes",
        "3,5,7,9",
        "--scenarios",
        "leader-crash,leader-recovers",
        "--seeds",
        "20",
        "--jobs",
        "1",
        "--quiet",
    ];
    let mut full_args = args.to_vec();
    full_args.extend(["--out", "full"]);
    ok(&bench(&full_args, d.path()));
    let full_rows = fs::read_to_string(d.path().join("full/trials.csv"))
        .unwrap()
        .lines()
        .count();
    let mut cut_args = args.to_vec();
    cut_args.extend(["--out", "killed"]);
    let trials = d.path().join("killed/trials.csv");
    // Kill it (SIGKILL: no chance to clean up) after it has written some rows; if a run
    // finishes first on a fast machine, the resume below still has to reproduce it exactly.
    let mut killed_mid_run = false;
    for _ in 0..3 {
        let mut child = Command::new(BIN)
            .args(&cut_args)
            .current_dir(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let lines = fs::read_to_string(&trials)
                .map(|s| s.lines().count())
                .unwrap_or(0);
            if lines > 30 || child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let running = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let _ = child.wait();
        let rows = fs::read_to_string(&trials)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if running && rows < full_rows {
            killed_mid_run = true;
            assert!(d.path().join("killed/.in-progress.json").exists());
            assert!(!d.path().join("killed/summary.csv").exists());
            break;
        }
        let _ = fs::remove_dir_all(d.path().join("killed"));
    }
    if killed_mid_run {
        // Issue 47: a kept row edited in range (msgs_total + 1000) is refused by the SHA-256
        // recorded as the cell was appended, naming the cell's lines, and nothing is run.
        let forged = d.path().join("forged");
        fs::create_dir_all(&forged).unwrap();
        for f in ["trials.csv", ".in-progress.json", ".trials.sha256"] {
            fs::copy(d.path().join("killed").join(f), forged.join(f)).unwrap();
        }
        let text = fs::read_to_string(forged.join("trials.csv")).unwrap();
        let msgs: u64 = field(&text, 2, "msgs_total").parse().unwrap();
        corrupt(
            &forged.join("trials.csv"),
            2,
            "msgs_total",
            &(msgs + 1000).to_string(),
        );
        let mut forged_args = args.to_vec();
        forged_args.extend(["--out", "forged", "--resume"]);
        fails(
            &bench(&forged_args, d.path()),
            1,
            &["forged/trials.csv: lines 2-21", ".trials.sha256 recorded"],
        );
        assert!(!forged.join("summary.csv").exists());
    }
    let mut resume = cut_args.clone();
    resume.push("--resume");
    let out = ok(&bench(&resume, d.path()));
    if killed_mid_run {
        assert!(
            out.contains("kept from the interrupted run") || out.contains("cells ("),
            "{out}"
        );
    }
    same_files(&d.path().join("full"), &d.path().join("killed"));
}

#[test]
fn resume_refuses_results_of_another_configuration() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "r", &[]));
    let o = bench(
        &[
            "sweep",
            "--protocols",
            "ring",
            "--nodes",
            "3",
            "--seeds",
            "2",
            "--scenarios",
            "leader-crash",
            "--out",
            "r",
            "--resume",
            "--quiet",
        ],
        d.path(),
    );
    fails(&o, 1, &["different configuration"]);
    // The results it refused are untouched.
    assert!(d.path().join("r/manifest.json").exists());
}

#[test]
fn unknown_names_are_usage_errors_listing_the_valid_ones() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "-p", "bully", "-n", "3", "-s", "leader-crash"];
        a.extend(extra);
        bench(&a, d.path())
    };
    fails(
        &bench(
            &["run", "-p", "paxos", "-n", "3", "-s", "leader-crash"],
            d.path(),
        ),
        2,
        &["unknown protocol \"paxos\"", "bully, ring, raft"],
    );
    fails(
        &bench(
            &["run", "-p", "bully+fast", "-n", "3", "-s", "leader-crash"],
            d.path(),
        ),
        2,
        &["unknown bully option \"fast\"", "quorum", "epoch", "rejoin"],
    );
    fails(
        &bench(&["run", "-p", "bully", "-n", "3", "-s", "meteor"], d.path()),
        2,
        &[
            "unknown scenario \"meteor\"",
            "cold-start",
            "lossy-leader-crash",
        ],
    );
    fails(
        &run(&["--net", "moon"]),
        2,
        &["unknown net profile \"moon\"", "lan, dc, wan"],
    );
    fails(
        &run(&["--set", "speed=3"]),
        2,
        &["unknown parameter \"speed\"", "heartbeat_ms"],
    );
    fails(&run(&["--set", "bully.rejoin=lazy"]), 2, &["eager, defer"]);
    fails(
        &run(&["--set", "net.loss=0,0.1"]),
        2,
        &["use sweep to vary it"],
    );
    fails(&bench(&["sweep", "--bogus"], d.path()), 2, &["--bogus"]);
    fails(
        &bench(
            &[
                "run",
                "-p",
                "bully",
                "-n",
                "2",
                "-s",
                "partition-leader-minority",
            ],
            d.path(),
        ),
        2,
        &["at least 3 nodes"],
    );
    assert!(listing(d.path()).is_empty(), "bad input writes nothing");
}

#[test]
fn a_size_a_scenario_cannot_use_is_skipped_with_its_reason() {
    let d = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            "sweep",
            "--protocols",
            "raft",
            "--nodes",
            "2,3",
            "--scenarios",
            "partition-leader-majority",
            "--seeds",
            "2",
            "--out",
            "o",
            "--quiet",
        ],
        d.path(),
    );
    assert!(ok(&o).contains("1 skipped"));
    let summary = fs::read_to_string(d.path().join("o/summary.csv")).unwrap();
    let row2 = summary.lines().nth(1).unwrap();
    assert!(
        row2.starts_with("raft,2,partition-leader-majority,lan,0,"),
        "{row2}"
    );
    assert!(row2.ends_with("needs at least 3 nodes: a partition with a minority side of floor((n-1)/2) >= 1 nodes needs at least 3"), "{row2}");
    let trials = fs::read_to_string(d.path().join("o/trials.csv")).unwrap();
    assert_eq!(trials.lines().count(), 1 + 2);
}

#[test]
fn malformed_toml_is_reported_with_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("bad.toml"),
        "name = \"x\"\nnodes = [3, 5\nseeds = 2\n",
    )
    .unwrap();
    let o = bench(&["sweep", "--config", "bad.toml"], d.path());
    fails(&o, 2, &["bad.toml", "line 3", "column"]);
    fs::write(d.path().join("typo.toml"), "name = \"x\"\nseedz = 2\n").unwrap();
    fails(
        &bench(&["sweep", "--config", "typo.toml"], d.path()),
        2,
        &["line 2", "seedz"],
    );
    // A config that is missing or unreadable is bad input too.
    fails(
        &bench(&["sweep", "--config", "missing.toml"], d.path()),
        2,
        &["--config missing.toml", "cannot read"],
    );
    fs::create_dir(d.path().join("dir.toml")).unwrap();
    fails(
        &bench(
            &[
                "run",
                "-p",
                "bully",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--config",
                "dir.toml",
            ],
            d.path(),
        ),
        2,
        &["--config dir.toml"],
    );
    // One key twice: TOML's own error, or two spellings of one parameter.
    fs::write(
        d.path().join("twice.toml"),
        "[params]\nbully.t_elec_ms = 20\n\"bully.t_elec_ms\" = 30\n",
    )
    .unwrap();
    fails(
        &bench(&["sweep", "--config", "twice.toml"], d.path()),
        2,
        &["bully.t_elec_ms is given twice"],
    );
    fs::write(
        d.path().join("all.toml"),
        "[[scenario]]\nname = \"all\"\nfaults = [ { at_ms = 0, action = \"crash\", node = \"leader\" } ]\n",
    )
    .unwrap();
    fails(
        &bench(&["scenarios", "--config", "all.toml"], d.path()),
        2,
        &["scenario \"all\""],
    );
}

#[test]
fn a_key_or_spec_given_twice_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    fails(
        &bench(
            &[
                "sweep",
                "--set",
                "net.loss=0.1",
                "--set",
                "net.loss=0.2",
                "--out",
                "x",
            ],
            d.path(),
        ),
        2,
        &["--set net.loss is given twice"],
    );
    fails(
        &bench(
            &[
                "run",
                "-p",
                "bully",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--set",
                "heartbeat_ms=40",
                "--set",
                "heartbeat_ms=60",
            ],
            d.path(),
        ),
        2,
        &["--set heartbeat_ms is given twice"],
    );
    fails(
        &bench(
            &[
                "sweep",
                "--protocols",
                "raft+pre_vote+check_quorum,raft+check_quorum+pre_vote",
                "--out",
                "x",
            ],
            d.path(),
        ),
        2,
        &["same protocol with the same options"],
    );
    assert!(!d.path().join("x").exists());
}

#[test]
fn a_config_file_sets_params_custom_scenarios_and_nets() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("c.toml"),
        r#"
name = "custom"
protocols = ["bully+rejoin=defer", "raft"]
nodes = [4]
scenarios = ["double-crash"]
nets = ["metro"]
seeds = 2
[params]
heartbeat_ms = 40
raft.timeout_ms = ["150-300", "300-600"]
[[net]]
name = "metro"
latency = "uniform:1:3"
[[scenario]]
name = "double-crash"
about = "the leader, then the next highest"
faults = [
  { at_ms = 0, action = "crash", node = "leader" },
  { at_ms = 400, jitter_ms = 50, action = "crash", node = "highest" },
]
"#,
    )
    .unwrap();
    ok(&bench(
        &["sweep", "--config", "c.toml", "--quiet"],
        d.path(),
    ));
    let s = fs::read_to_string(d.path().join("results/custom/summary.csv")).unwrap();
    assert!(
        s.starts_with("protocol,nodes,scenario,net,raft.timeout_ms,trials,"),
        "{s}"
    );
    // raft.timeout_ms is raft's: the bully spec runs once, its column empty.
    assert!(
        s.contains("bully+rejoin=defer,4,double-crash,metro,,2,"),
        "{s}"
    );
    assert!(
        !s.contains("bully+rejoin=defer,4,double-crash,metro,150-300"),
        "{s}"
    );
    let listed = ok(&bench(&["scenarios", "--config", "c.toml"], d.path()));
    assert!(listed.contains("double-crash") && listed.contains("the leader, then"));
    // Flags override the file.
    ok(&bench(
        &[
            "sweep", "--config", "c.toml", "--nodes", "3", "--out", "o2", "--quiet",
        ],
        d.path(),
    ));
    let s = fs::read_to_string(d.path().join("o2/summary.csv")).unwrap();
    assert!(s.contains("raft,3,double-crash"), "{s}");
    // Empty lists are errors.
    fs::write(d.path().join("e.toml"), "protocols = []\n").unwrap();
    fails(
        &bench(&["sweep", "--config", "e.toml"], d.path()),
        2,
        &["protocol list is empty"],
    );
    fs::write(d.path().join("e2.toml"), "[params]\n\"net.loss\" = []\n").unwrap();
    fails(
        &bench(&["sweep", "--config", "e2.toml"], d.path()),
        2,
        &["empty"],
    );
}

#[test]
fn bad_sweep_options_are_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    for shard in ["0/2", "3/2", "1/0", "x"] {
        fails(&tiny(d.path(), "o", &["--shard", shard]), 2, &["--shard"]);
    }
    let sweep = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "--protocols",
            "raft",
            "--scenarios",
            "cold-start",
            "--out",
            "o",
        ];
        a.extend(extra);
        bench(&a, d.path())
    };
    fails(&sweep(&["--seeds", "0"]), 2, &["seeds = 0"]);
    fails(&sweep(&["--nodes", "0"]), 2, &["nodes = 0"]);
    fails(
        &sweep(&["--nodes", "3", "--seeds", "1", "--jobs", "0"]),
        2,
        &["--jobs"],
    );
    fails(
        &tiny(d.path(), "o", &["--set", "heartbeat_ms=500"]),
        2,
        &["invalid", "heartbeat"],
    );
    assert!(listing(d.path()).is_empty(), "bad options write nothing");
}

#[test]
fn an_output_directory_that_cannot_be_written_fails_cleanly() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("file"), "not a directory").unwrap();
    let o = tiny(d.path(), "file/results", &[]);
    fails(
        &o,
        1,
        &["cannot create the output directory", "file/results"],
    );
    let o = tiny(d.path(), "file", &[]);
    fails(&o, 1, &["not a directory"]);
    assert_eq!(listing(d.path()), ["file"]);
    assert_eq!(
        fs::read_to_string(d.path().join("file")).unwrap(),
        "not a directory"
    );
}

#[test]
fn resume_refuses_rows_with_impossible_values_naming_line_column_and_value() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "full", &[]));
    let full = d.path().join("full");
    let manifest = fs::read(full.join("manifest.json")).unwrap();
    let converged_row = fs::read_to_string(full.join("trials.csv"))
        .unwrap()
        .lines()
        .position(|l| l.contains(",true,"))
        .unwrap()
        + 1;
    for (i, (column, value)) in [
        ("elect_ms", "NaN"),
        ("unavailable_ms", "-4"),
        ("leader", "9"),
        ("converged", "false"),
        ("split_brain", "true"),
        ("msgs_total", "1.5"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = d.path().join(format!("c{i}"));
        fs::create_dir_all(&dir).unwrap();
        fs::copy(full.join("trials.csv"), dir.join("trials.csv")).unwrap();
        fs::write(dir.join(".in-progress.json"), &manifest).unwrap();
        corrupt(&dir.join("trials.csv"), converged_row, column, value);
        let o = tiny(d.path(), &format!("c{i}"), &["--resume"]);
        fails(
            &o,
            1,
            &[
                &format!("trials.csv line {converged_row}"),
                &format!("column {column} = {value:?}"),
            ],
        );
        // Nothing was overwritten, and the lock is gone.
        assert!(!dir.join("summary.csv").exists() && !dir.join(".lock").exists());
    }
}

#[test]
fn a_locked_directory_refuses_a_second_sweep_naming_the_holder() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("busy");
    fs::create_dir_all(&dir).unwrap();
    // The lock of a live process on this host: this test's own.
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "somewhere".into());
    let me = std::process::id();
    fs::write(
        dir.join(".lock"),
        format!("pid={me}\nhost={host}\nstarted=1700000000\n"),
    )
    .unwrap();
    let o = tiny(d.path(), "busy", &[]);
    fails(
        &o,
        2,
        &[
            "in use by another sweep",
            &format!("process {me} on {host}"),
            ".lock",
        ],
    );
    assert_eq!(
        listing(&dir),
        vec![".lock".to_string()],
        "nothing was written"
    );
    // Merging into it is refused the same way.
    ok(&tiny(d.path(), "s1", &["--shard", "1/1"]));
    fails(
        &bench(&["merge", "--out", "busy", "s1"], d.path()),
        2,
        &[&format!("process {me}")],
    );
    // A lock left by a process that is gone (killed) does not block.
    fs::write(
        dir.join(".lock"),
        format!("pid={}\nhost={host}\nstarted=0\n", (1u32 << 22) + 7),
    )
    .unwrap();
    ok(&tiny(d.path(), "busy", &[]));
    assert!(!dir.join(".lock").exists());
}

#[test]
fn results_of_another_configuration_are_overwritten_only_with_force() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "r", &[]));
    let before = files(&d.path().join("r"));
    let other = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "--protocols",
            "ring",
            "--nodes",
            "3",
            "--seeds",
            "2",
            "--scenarios",
            "leader-crash",
            "--out",
            "r",
            "--quiet",
            "--no-report",
        ];
        a.extend(extra);
        bench(&a, d.path())
    };
    fails(&other(&[]), 2, &["different configuration", "--force"]);
    assert!(
        files(&d.path().join("r")) == before,
        "the results were touched"
    );
    // The same configuration again is fine (it rewrites the same bytes).
    ok(&tiny(d.path(), "r", &["--no-report"]));
    assert!(files(&d.path().join("r")) == before);
    fails(&other(&["--force", "--resume"]), 2, &["--force"]);
    ok(&other(&["--force"]));
    let m = fs::read_to_string(d.path().join("r/manifest.json")).unwrap();
    assert!(m.contains("\"ring\"") && !m.contains("--force"), "{m}");
}

/// Every input the second hardening pass found unbounded is refused by name with exit 2 and
/// no panic, before anything is allocated or run: seeds a cell cannot hold (2^64 − 1 was a
/// capacity-overflow panic, 2^32 an abort allocating 64 GB), in `sweep` and `explore`; an
/// exploration of 8 nodes sampling 10^8 of their 2^28 patterns (> 4 GB before any progress
/// line; without ids, 8 nodes are 79,264 classes and run);
/// 100,000 threads; an unspecified live bind address. `run --seed 2^64 − 1` runs.
#[test]
fn unbounded_inputs_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let quick = Duration::from_secs(20);
    for seeds in ["18446744073709551615", "4294967296", "100000000"] {
        let start = Instant::now();
        let o = bench(
            &[
                "sweep",
                "--protocols",
                "bully",
                "--nodes",
                "3",
                "--seeds",
                seeds,
                "--out",
                "s",
            ],
            d.path(),
        );
        fails(&o, 2, &[&format!("seeds = {seeds}"), "GiB"]);
        assert!(start.elapsed() < quick);
        let o = bench(
            &[
                "explore",
                "--nodes",
                "3",
                "--seeds",
                seeds,
                "--out",
                "e",
                "--no-report",
            ],
            d.path(),
        );
        fails(&o, 2, &[&format!("seeds = {seeds}")]);
    }
    // slow_factor's cap and the workload's floor are listed by `params`.
    let params = ok(&bench(&["params"], d.path()));
    assert!(
        params.contains("a whole number from 1 to 1000000"),
        "{params}"
    );
    assert!(
        params.contains("0 (no workload) or milliseconds >= 0.1"),
        "{params}"
    );
    let start = Instant::now();
    let o = bench(
        // 8 nodes: the bully's and the ring's sample of 10^8 symmetric patterns (of 2^28).
        &[
            "explore",
            "--nodes",
            "8",
            "--sample",
            "100000000",
            "--out",
            "e",
            "--no-report",
        ],
        d.path(),
    );
    fails(&o, 2, &["--nodes 8", "GiB"]);
    assert!(start.elapsed() < quick);
    for cmd in [
        &["sweep", "--out", "j"][..],
        &["explore", "--out", "j", "--no-report"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--jobs", "100000"]);
        fails(
            &bench(&args, d.path()),
            2,
            &["--jobs 100000", "at most 1024"],
        );
    }
    for ip in ["0.0.0.0", "::"] {
        let o = bench(
            &[
                "live",
                "-p",
                "bully",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--bind",
                ip,
                "--out",
                "l",
            ],
            d.path(),
        );
        fails(&o, 2, &["bind", ip]);
    }
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--seed",
            "18446744073709551615",
            "--json",
        ],
        d.path(),
    ));
    assert!(
        out.contains("\"seed\":\"18446744073709551615\"") || out.contains("18446744073709551615"),
        "{out}"
    );
}

/// Text from a configuration reaches the report as text: a scenario's or a network's `about`
/// holding `<script>`, `<img onerror>` and `|` is escaped in `index.html` (it used to run) and
/// in the Markdown tables (a `|` cut the row). Names, which are also CSV cells, command-line
/// arguments and file names, are refused unless plain: `""`, `a|b`, `<script>`.
#[test]
fn config_text_is_escaped_and_names_are_plain() {
    let d = tempfile::tempdir().unwrap();
    let config = |scenario: &str, at_ms: &str| {
        format!(
            "name = \"evil\"\nprotocols = [\"bully\"]\nnodes = [3]\nscenarios = [{scenario:?}]\n\
             nets = [\"metro\"]\nseeds = 2\n\n[[net]]\nname = \"metro\"\nbase = \"lan\"\n\
             about = \"net | <img src=x onerror=alert(2)> & more\"\n\n[[scenario]]\n\
             name = {scenario:?}\nabout = \"about | <script>alert(1)</script> <img src=x onerror=alert(1)>\"\n\
             faults = [ {{ at_ms = {at_ms}, action = \"crash\", node = \"leader\" }} ]\n"
        )
    };
    fs::write(d.path().join("evil.toml"), config("double", "0")).unwrap();
    ok(&bench(
        &[
            "sweep",
            "--config",
            "evil.toml",
            "--out",
            "r",
            "--no-report",
            "--quiet",
        ],
        d.path(),
    ));
    ok(&bench(
        &["report", "--results", "r", "--out", "rep"],
        d.path(),
    ));
    let html = fs::read_to_string(d.path().join("rep/index.html")).unwrap();
    for bad in ["<script>alert", "<img src=x", "onerror=alert(1)>"] {
        assert!(!html.contains(bad), "{bad} in index.html");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let appendix = fs::read_to_string(d.path().join("rep/APPENDIX.md")).unwrap();
    let row = appendix
        .lines()
        .find(|l| l.contains("| double |"))
        .expect("the scenario's row");
    let header = appendix
        .lines()
        .take_while(|l| *l != row)
        .filter(|l| l.starts_with('|'))
        .last()
        .unwrap();
    let cells = |l: &str| l.replace("\\|", "").matches('|').count();
    assert!(row.contains("about \\| \\<script\\>"), "{row}");
    assert_eq!(cells(row), cells(header), "{row}");
    for (name, needle) in [("", "\"\""), ("a|b", "a|b"), ("<script>", "<script>")] {
        fs::write(d.path().join("bad.toml"), config(name, "0")).unwrap();
        let o = bench(&["sweep", "--config", "bad.toml", "--out", "b"], d.path());
        fails(&o, 2, &["scenario name", needle]);
    }
    for at in ["-1", "-1e300"] {
        fs::write(d.path().join("bad.toml"), config("double", at)).unwrap();
        let o = bench(&["sweep", "--config", "bad.toml", "--out", "b"], d.path());
        fails(&o, 2, &["faults[0]: at_ms", ">= 0"]);
    }
}

/// Issue 47: `verify` re-runs recorded trials and compares them with their rows: it passes on an
/// untouched sweep (its `trials.csv` or, as committed, only `trials.csv.gz`), refuses an edited
/// row by the manifest's SHA-256, and, when the editor recomputed that too, names the first
/// edited row, its trial, column and both values.
#[test]
fn verify_reruns_recorded_trials_and_names_the_first_edited_row() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "v", &["--no-report"]));
    let dir = d.path().join("v");
    let o = ok(&bench(&["verify", "v", "--sample", "100"], d.path()));
    assert!(o.contains("16 of 16 rows of trials.csv run again"), "{o}");
    let trials = fs::read(dir.join("trials.csv")).unwrap();
    fs::remove_file(dir.join("trials.csv")).unwrap();
    let o = ok(&bench(
        &["verify", "v", "--sample", "3", "--seed", "5"],
        d.path(),
    ));
    assert!(o.contains("3 of 16 rows of trials.csv.gz run again"), "{o}");
    fs::write(dir.join("trials.csv"), &trials).unwrap();
    let text = String::from_utf8(trials.clone()).unwrap();
    let msgs = |line: usize| -> u64 { field(&text, line, "msgs_total").parse().unwrap() };
    for line in [9, 5] {
        corrupt(
            &dir.join("trials.csv"),
            line,
            "msgs_total",
            &(msgs(line) + 1000).to_string(),
        );
    }
    fails(
        &bench(&["verify", "v", "--sample", "100"], d.path()),
        1,
        &["is not the file the sweep wrote"],
    );
    rehash(&dir);
    let want = format!(
        "column msgs_total = \"{}\" recorded, the re-run gives \"{}\"",
        msgs(5) + 1000,
        msgs(5)
    );
    fails(
        &bench(&["verify", "v", "--sample", "100"], d.path()),
        1,
        &["v/trials.csv: line 5 (bully", &want],
    );
}
