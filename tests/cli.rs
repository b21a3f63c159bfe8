//! End-to-end tests of the `election-bench` binary: every subcommand, every kind of bad input
//! and its exit code, and the promises about the results files — byte-identical whatever
//! `--jobs` is, a killed sweep resumed equals an uninterrupted one, shards merged equal the
//! unsharded sweep. Sweeps here are tiny (2 seeds, 3–5 nodes) so the suite stays fast in
//! debug builds.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_election-bench");

fn bench(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

#[track_caller]
fn fails(o: &Output, code: i32, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
}

/// A tiny sweep: 2 protocols × 2 sizes × 2 scenarios × 2 seeds.
const TINY: &[&str] = &[
    "sweep",
    "--protocols",
    "bully,raft+pre_vote",
    "--nodes",
    "3,5",
    "--scenarios",
    "leader-crash,partition-leader-minority",
    "--seeds",
    "2",
    "--quiet",
];

fn tiny(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args: Vec<&str> = TINY.to_vec();
    args.extend(["--out", out]);
    args.extend(extra);
    bench(&args, dir)
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["trials.csv", "summary.csv", "manifest.json"]
        .iter()
        .map(|f| {
            let p = dir.join(f);
            (
                f.to_string(),
                fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            )
        })
        .collect()
}

#[track_caller]
fn same_files(a: &Path, b: &Path) {
    for ((name, x), (_, y)) in files(a).into_iter().zip(files(b)) {
        assert!(
            x == y,
            "{name} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

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
        "store-cut-holder",
        "store-slow",
        "store-cut-slow-clock-within",
        "store-cut-slow-clock-beyond",
        "quorum-loss",
        "constrained-election",
        "chained",
        "bridge",
        "liveness-omission",
        "flaky-leader-link",
        "slow-leader",
        "amnesia-recover",
        "steady-noise",
    ] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} missing from:\n{out}"
        );
    }
    // 18 scenarios of `all` (14, and 4 on the lease store), then a heading for the 9 gray ones
    // and one for steady-noise (each with a blank line either side).
    assert_eq!(
        out.lines().filter(|l| !l.trim().is_empty()).count(),
        18 + 1 + 9 + 1 + 1
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
        for p in election_runner::protocol::PROTOCOLS {
            assert!(
                h.contains(&format!("{p} (+")),
                "{cmd} --help lacks {p}: {h}"
            );
        }
        assert!(
            h.contains("+pre_vote") && h.contains("+quorum"),
            "{cmd}: {h}"
        );
        for s in election_runner::scenario::BUILTINS {
            assert!(h.contains(s.name()), "{cmd} --help lacks {}", s.name());
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

#[test]
fn run_prints_a_summary_or_one_json_object_with_the_csv_columns() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(
        &[
            "run",
            "--protocol",
            "bully",
            "--nodes",
            "5",
            "--scenario",
            "leader-crash",
        ],
        d.path(),
    ));
    assert!(out.contains("converged") && out.contains("elect"), "{out}");
    // --trace: one readable line per event, in the trace's vocabulary, never a Debug struct.
    let traced = ok(&bench(
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--trace",
            "--trace-messages",
        ],
        d.path(),
    ));
    assert!(traced.contains(" ms  fault     crash node 5"), "{traced}");
    assert!(
        traced.contains("  send      ") && traced.contains(" → "),
        "{traced}"
    );
    assert!(traced.contains("  status    node "), "{traced}");
    for debug in ["NodeId(", "Some(", "Status {", "Fault("] {
        assert!(!traced.contains(debug), "{debug} in: {traced}");
    }
    let args = [
        "run",
        "--protocol",
        "raft+pre_vote",
        "--nodes",
        "5",
        "--scenario",
        "leader-crash",
        "--seed",
        "7",
        "--set",
        "net.loss=0.01",
        "--json",
    ];
    let out = ok(&bench(&args, d.path()));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, election_runner::results::trial_header(&[]));
    assert_eq!(v["protocol"], "raft+pre_vote");
    assert_eq!(v["seed"], 7);
    assert_eq!(v["converged"], true);
    // The same trial twice: the same object.
    assert_eq!(ok(&bench(&args, d.path())), out);
    // No files are written by `run`.
    assert!(listing(d.path()).is_empty());
}

/// A fixed `--set net.*` that overrides the profile is part of the network's name, in `run`'s
/// header, its JSON, the CSVs, the manifest and the report; a value equal to the profile's own,
/// or a varied one (its own column), is not.
#[test]
fn a_network_overridden_by_set_says_so_in_its_name() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-p", "raft", "-n", "3", "-s", "leader-crash"];
        args.extend(extra);
        ok(&bench(&args, d.path()))
    };
    let out = run(&["--set", "net.loss=0.05"]);
    let header = out.lines().next().unwrap();
    assert!(header.contains("| lan+net.loss=0.05 |"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(run(&["--set", "net.loss=0.050", "--json"]).trim()).unwrap();
    assert_eq!(v["net"], "lan+net.loss=0.05");
    let v: serde_json::Value =
        serde_json::from_str(run(&["--net", "lossy", "--set", "net.loss=0.05", "--json"]).trim())
            .unwrap();
    assert_eq!(v["net"], "lossy", "the profile's own loss is no override");
    let v: serde_json::Value = serde_json::from_str(run(&["--json"]).trim()).unwrap();
    assert_eq!(v["net"], "lan");
    // The name is not a profile: the error says how to write it.
    fails(
        &bench(
            &[
                "run",
                "-p",
                "raft",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--net",
                "lan+net.loss=0.05",
            ],
            d.path(),
        ),
        2,
        &["lan+net.loss=0.05", "--set net.loss=0.05"],
    );

    let net_column = |dir: &str, file: &str| -> Vec<String> {
        let text = fs::read_to_string(d.path().join(dir).join(file)).unwrap();
        let mut lines = text.lines();
        let col = lines
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "net")
            .unwrap();
        lines
            .map(|l| l.split(',').nth(col).unwrap().to_string())
            .collect()
    };
    let manifest = |dir: &str| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(d.path().join(dir).join("manifest.json")).unwrap())
            .unwrap()
    };
    // Fixed: in the name (and the report re-runs its traces from it).
    ok(&tiny(
        d.path(),
        "fixed",
        &["--name", "fixed", "--set", "net.latency=constant:2"],
    ));
    for file in ["trials.csv", "summary.csv"] {
        let nets = net_column("fixed", file);
        assert!(!nets.is_empty());
        assert!(
            nets.iter().all(|n| n == "lan+net.latency=constant:2"),
            "{file}: {nets:?}"
        );
    }
    let m = manifest("fixed");
    assert_eq!(m["config"]["nets"][0]["name"], "lan");
    assert_eq!(m["config"]["nets"][0]["net"], "lan+net.latency=constant:2");
    let report = fs::read_to_string(d.path().join("reports/fixed/REPORT.md")).unwrap();
    assert!(report.contains("`lan+net.latency=constant:2`"), "{report}");
    assert!(report.contains("traces/"), "{report}");
    assert!(
        !report.contains("failed:") && !report.contains("disagrees"),
        "{report}"
    );
    // Varied: its own column, not the name; and without `--set net.*`, lan stays lan.
    ok(&tiny(
        d.path(),
        "varied",
        &["--set", "net.loss=0,0.1", "--no-report"],
    ));
    ok(&tiny(d.path(), "plain", &["--no-report"]));
    for dir in ["varied", "plain"] {
        assert!(net_column(dir, "trials.csv").iter().all(|n| n == "lan"));
        assert!(manifest(dir)["config"]["nets"][0].get("net").is_none());
    }
}

/// `run` of a custom scenario measured from its second fault prints both instants, and its
/// JSON's times are measured from the second.
#[test]
fn run_says_which_fault_is_the_reference() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("c.toml"),
        r#"
[[scenario]]
name = "second-crash"
faults = [
  { at_ms = 0, action = "crash", node = "leader" },
  { at_ms = 2000, action = "crash", node = "leader", reference = true },
]
"#,
    )
    .unwrap();
    let args = [
        "run",
        "-p",
        "bully",
        "-n",
        "5",
        "-s",
        "second-crash",
        "--config",
        "c.toml",
    ];
    let out = ok(&bench(&args, d.path()));
    let line = |start: &str| -> f64 {
        let l = out
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{out}"));
        l.split_whitespace()
            .nth(start.split_whitespace().count())
            .unwrap()
            .parse()
            .unwrap()
    };
    let (first, reference) = (line("fault instant"), line("reference"));
    assert!((reference - first - 2000.0).abs() < 1e-3, "{out}");
    assert!(out.contains("faults[1]"), "{out}");
    // Node 5 crashed first, node 4 took over and is the leader at the reference.
    assert!(out.contains("leader then      node 4"), "{out}");
}

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
fn shards_merged_equal_the_unsharded_sweep() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "whole", &[]));
    for k in 1..=3 {
        ok(&tiny(
            d.path(),
            &format!("s{k}"),
            &["--shard", &format!("{k}/3")],
        ));
    }
    let m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.path().join("s2/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["shard"], "2/3");
    // Shards in any order.
    ok(&bench(
        &["merge", "--out", "merged", "s3", "s1", "s2"],
        d.path(),
    ));
    same_files(&d.path().join("whole"), &d.path().join("merged"));
    // A missing shard is an error naming it.
    let o = bench(&["merge", "--out", "bad", "s1", "s3"], d.path());
    fails(&o, 1, &["missing shard(s) 2/3"]);
    assert!(!d.path().join("bad").exists());
    let o = bench(&["merge", "--out", "bad", "whole"], d.path());
    fails(&o, 1, &["not a shard"]);
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
fn sweep_renders_the_report_and_report_rerenders_it_from_the_results() {
    let d = tempfile::tempdir().unwrap();
    let mut args = TINY.to_vec();
    args.extend(["--name", "tiny"]);
    let out = ok(&bench(&args, d.path()));
    assert!(out.contains("report: reports/tiny/REPORT.md"), "{out}");
    let report = d.path().join("reports/tiny");
    let md = fs::read_to_string(report.join("REPORT.md")).unwrap();
    assert!(md.contains("## 1. Decision matrix"), "{md}");
    assert!(md.contains("## 3. Findings"), "{md}");
    assert!(report.join("APPENDIX.md").is_file() && report.join("index.html").is_file());
    for chart in ["messages_vs_nodes", "failover_vs_nodes", "split_brain"] {
        for ext in ["svg", "png"] {
            let f = report.join(format!("charts/{chart}.{ext}"));
            assert!(
                fs::metadata(&f).map(|m| m.len() > 1000).unwrap_or(false),
                "{f:?}"
            );
        }
    }
    // `report` on the same results writes the same REPORT.md.
    let again = d.path().join("again");
    ok(&bench(
        &["report", "--results", "results/tiny", "--out", "again"],
        d.path(),
    ));
    assert_eq!(fs::read_to_string(again.join("REPORT.md")).unwrap(), md);
    // The committed form: only trials.csv.gz (trials.csv is not committed). The report reads
    // it transparently and says the same.
    fs::remove_file(d.path().join("results/tiny/trials.csv")).unwrap();
    ok(&bench(
        &["report", "--results", "results/tiny", "--out", "from-gz"],
        d.path(),
    ));
    assert_eq!(
        fs::read_to_string(d.path().join("from-gz/REPORT.md")).unwrap(),
        md
    );
    // --no-report writes results only.
    let mut args = TINY.to_vec();
    args.extend(["--name", "quiet", "--no-report"]);
    ok(&bench(&args, d.path()));
    assert!(!d.path().join("reports/quiet").exists());
}

/// The README's custom sweep, tiny: the varied parameter gets its own charts, sizes stay on
/// the x axis because they vary, no chart without data is drawn, and the `net.loss` that
/// `lossy-leader-crash` overrides is warned about before the sweep runs.
#[test]
fn charts_follow_the_sweep() {
    let d = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            "sweep",
            "--name",
            "loss",
            "--protocols",
            "bully+quorum,raft+pre_vote",
            "--nodes",
            "5,9",
            "--scenarios",
            "lossy-leader-crash",
            "--set",
            "net.loss=0,0.05,0.1",
            "--seeds",
            "4",
            "--quiet",
        ],
        d.path(),
    );
    ok(&o);
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: net.loss=0,0.05,0.1 is overridden in scenario lossy-leader-crash")
            && err.contains("fault_loss"),
        "{err}"
    );
    let charts = d.path().join("reports/loss/charts");
    let names = listing(&charts);
    for stem in [
        "vs-net-loss-lossy-leader-crash-n5",
        "vs-net-loss-lossy-leader-crash-n9",
        "messages_vs_nodes",
        "failover_vs_nodes",
    ] {
        assert!(names.contains(&format!("{stem}.svg")), "{stem}: {names:?}");
    }
    // No recovery or flapping scenario ran: no leader-changes chart, not an empty one.
    assert!(
        !names.iter().any(|n| n.starts_with("leader_changes")),
        "{names:?}"
    );
    let svg = fs::read_to_string(charts.join("vs-net-loss-lossy-leader-crash-n5.svg")).unwrap();
    for label in [
        "net.loss",
        "\n0.05\n",
        "bully+quorum",
        "raft+pre_vote",
        "failover_ms (ms)",
    ] {
        assert!(svg.contains(label), "{label} not in the chart");
    }
    let md = fs::read_to_string(d.path().join("reports/loss/REPORT.md")).unwrap();
    assert!(md.contains("charts/vs-net-loss-lossy-leader-crash-n5.svg"));

    // One size, and a raft-only parameter: no size axis, and bully is run and drawn once.
    let o = bench(
        &[
            "sweep",
            "--name",
            "rt",
            "--protocols",
            "bully,raft",
            "--nodes",
            "5",
            "--scenarios",
            "leader-crash",
            "--set",
            "raft.timeout_ms=150-300,300-600",
            "--seeds",
            "3",
            "--quiet",
        ],
        d.path(),
    );
    ok(&o);
    assert!(text(&o.stderr).is_empty(), "{}", text(&o.stderr));
    let trials = fs::read_to_string(d.path().join("results/rt/trials.csv")).unwrap();
    let bully = trials.lines().filter(|l| l.contains(",bully,")).count();
    let raft = trials.lines().filter(|l| l.contains(",raft,")).count();
    assert_eq!((bully, raft), (3, 6), "{trials}");
    let names = listing(&d.path().join("reports/rt/charts"));
    assert!(
        names.contains(&"vs-raft-timeout-ms-leader-crash-n5.svg".to_string()),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("_vs_nodes")), "{names:?}");
    let svg = fs::read_to_string(
        d.path()
            .join("reports/rt/charts/vs-raft-timeout-ms-leader-crash-n5.svg"),
    )
    .unwrap();
    assert!(svg.contains("\n300-600\n") && !svg.contains("\nbully\n"));
    let md = fs::read_to_string(d.path().join("reports/rt/REPORT.md")).unwrap();
    assert!(
        md.contains("does not apply to `bully`"),
        "report lacks the note"
    );
    let legend = fs::read_to_string(d.path().join("reports/rt/charts/failover_cdf.svg")).unwrap();
    assert_eq!(legend.matches("\nbully\n").count(), 1, "bully drawn twice");
}

#[test]
fn report_refuses_a_missing_or_foreign_results_directory() {
    let d = tempfile::tempdir().unwrap();
    fails(
        &bench(&["report", "--results", "nowhere"], d.path()),
        2,
        &["nowhere", "does not exist"],
    );
    let foreign = d.path().join("foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("trials.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("summary.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("manifest.json"), "{}").unwrap();
    let o = bench(&["report", "--results", "foreign"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn trace_is_the_same_for_the_same_seed_in_every_format() {
    let d = tempfile::tempdir().unwrap();
    let args = |fmt: &'static str| {
        [
            "trace",
            "-p",
            "bully",
            "-n",
            "4",
            "-s",
            "leader-crash",
            "--seed",
            "1",
            "--format",
            fmt,
        ]
    };
    let mermaid = ok(&bench(&args("mermaid"), d.path()));
    assert!(mermaid.starts_with("sequenceDiagram"), "{mermaid}");
    assert!(mermaid.contains("COORDINATOR"), "{mermaid}");
    assert_eq!(ok(&bench(&args("mermaid"), d.path())), mermaid);
    let jsonl = ok(&bench(&args("jsonl"), d.path()));
    assert!(jsonl
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    let o = bench(
        &[
            "trace",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--out",
            "t.svg",
        ],
        d.path(),
    );
    ok(&o);
    let svg = fs::read_to_string(d.path().join("t.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..80]
    );
    fails(&bench(&args("png"), d.path()), 2, &["svg, mermaid, jsonl"]);
}

#[test]
fn live_runs_a_bounded_trial_over_loopback_and_writes_live_rows() {
    let d = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = ok(&bench(
        &[
            "live",
            "-p",
            "raft",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--trials",
            "1",
            "--out",
            "live",
        ],
        d.path(),
    ));
    assert!(out.contains("seed 0: converged true"), "{out}");
    // A summary at the end.
    for line in [
        "summary          raft | 3 nodes | leader-crash | 1 live trials",
        "converged        1 of 1",
        "failover         p50 ",
    ] {
        assert!(out.contains(line), "{line:?} not in: {out}");
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    // Without --out: nothing in the working directory (results/ is tracked), the rows go
    // into a new directory per run under the temporary directory, and the output says where.
    let tmp = tempfile::tempdir().unwrap();
    let live_run = || {
        Command::new(BIN)
            .args([
                "live",
                "-p",
                "bully",
                "-n",
                "3",
                "-s",
                "leader-crash",
                "--trials",
                "1",
            ])
            .current_dir(d.path())
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap()
    };
    let printed = ok(&live_run());
    assert_eq!(
        listing(d.path()),
        ["live"],
        "live wrote into the working directory"
    );
    let runs = || listing(&tmp.path().join("election-bench/live"));
    assert_eq!(runs().len(), 1, "{printed}");
    let rows = tmp
        .path()
        .join("election-bench/live")
        .join(&runs()[0])
        .join("trials.csv");
    assert!(rows.exists(), "{printed}");
    assert!(
        printed.contains(&format!("wrote {}", rows.display())),
        "{printed}"
    );
    // A second run leaves the first one's files alone.
    let first = fs::read(&rows).unwrap();
    ok(&live_run());
    assert_eq!(runs().len(), 2, "{:?}", runs());
    assert_eq!(fs::read(&rows).unwrap(), first);
    let trials = fs::read_to_string(d.path().join("live/trials.csv")).unwrap();
    assert!(trials
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("live,raft,3,leader-crash,"));
    fails(
        &bench(
            &["live", "-p", "paxos", "-n", "3", "-s", "leader-crash"],
            d.path(),
        ),
        2,
        &["paxos", "bully, ring, raft"],
    );
}

/// Issue #12: a fault that finds no target is never silent. With no wait for a leader, a
/// crash of the leader at 0 ms finds none: `run` says so in plain words, every row carries
/// `faults_skipped`, the summary keeps those trials out of the statistics, and the report
/// flags the cell with seeds and a replay command instead of presenting it as a failover.
#[test]
fn faults_that_did_not_apply_are_counted_said_and_flagged() {
    let d = tempfile::tempdir().unwrap();
    let no_wait = [
        "--set",
        "fault_at_ms=0",
        "--set",
        "fault_jitter_ms=0",
        "--set",
        "fault_wait_ms=0",
    ];
    let mut args = vec!["run", "-p", "raft", "-n", "5", "-s", "leader-crash"];
    args.extend(no_wait);
    let out = ok(&bench(&args, d.path()));
    assert!(
        out.contains("FAULTS SKIPPED   1 of the scenario's actions (1 faults"),
        "{out}"
    );
    assert!(
        out.contains("SKIPPED: crash: no node matched Leader"),
        "{out}"
    );
    args.push("--json");
    let json: serde_json::Value = serde_json::from_str(&ok(&bench(&args, d.path()))).unwrap();
    assert_eq!(json["faults_skipped"], 1);

    // The default wait: the same fault waits for the first leader and applies.
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--set",
            "fault_at_ms=0",
            "--set",
            "fault_jitter_ms=0",
        ],
        d.path(),
    ));
    assert!(out.contains("waiting for a quorum leader"), "{out}");
    assert!(!out.contains("SKIPPED"), "{out}");

    let mut args = vec![
        "sweep",
        "--name",
        "skips",
        "--protocols",
        "raft",
        "--nodes",
        "5",
        "--scenarios",
        "leader-crash",
        "--seeds",
        "3",
        "--quiet",
    ];
    args.extend(no_wait);
    ok(&bench(&args, d.path()));
    let trials = fs::read_to_string(d.path().join("results/skips/trials.csv")).unwrap();
    let header: Vec<&str> = trials.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "faults_skipped").unwrap();
    for line in trials.lines().skip(1) {
        assert_eq!(line.split(',').nth(col), Some("1"), "{line}");
    }
    let summary = fs::read_to_string(d.path().join("results/skips/summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(get("trials"), "3");
    assert_eq!(get("measured"), "0");
    assert_eq!(get("faults_skipped_trials"), "3");
    assert_eq!(get("elect_ms_p50"), "");
    let md = fs::read_to_string(d.path().join("reports/skips/REPORT.md")).unwrap();
    assert!(md.contains("**Faults that did not apply**"), "{md}");
    assert!(md.contains("no trial measured the scenario"), "{md}");
    // A trace of the first such trial, linked from the finding and drawn in the report.
    let trace = "traces/leader-crash-raft-n5-seed0.svg";
    assert!(
        md.contains(&format!("trace: [leader-crash-raft-n5-seed0.svg]({trace})")),
        "{md}"
    );
    assert!(d.path().join("reports/skips").join(trace).is_file());
    assert!(
        md.contains("election-bench run --protocol raft --nodes 5 --scenario leader-crash --net lan --seed 0 --set fault_at_ms=0"),
        "{md}"
    );
}

/// A fault instant at or past the horizon is a usage error naming the field and the value.
#[test]
fn a_fault_instant_past_the_horizon_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            "run",
            "-p",
            "bully",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--set",
            "fault_at_ms=25000",
        ],
        d.path(),
    );
    fails(&o, 2, &["fault_at_ms", "25050", "horizon_ms"]);
}

/// `validate --quick`: every case of the catalog passes, one line each, and the tally says so.
#[test]
fn validate_quick_passes_every_case() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&bench(&["validate", "--quick"], dir.path()));
    let lines: Vec<&str> = out.lines().collect();
    // The rule and a blank line, three lines a case (result and name, published, measured),
    // the tally.
    let cases = (lines.len() - 3) / 3;
    assert!(cases >= 15, "{out}");
    assert!(lines[0].contains("overlaps the tolerance band"), "{out}");
    assert!(
        (0..cases).all(|i| lines[2 + 3 * i].starts_with("PASS  ")),
        "{out}"
    );
    assert_eq!(lines[2 + 3 * cases], format!("{cases} passed, 0 failed"));
    for name in [
        "bully-worst-case",
        "chang-roberts-average",
        "raft-split-vote-20ms",
    ] {
        assert!(out.contains(name), "{name}: {out}");
    }
}

/// `validate --case`: only the named cases; an unknown name is bad input listing the valid ones.
#[test]
fn validate_selects_cases_and_rejects_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&bench(
        &[
            "validate",
            "--quick",
            "--case",
            "etcd-3-2-down",
            "--case",
            "bully-best-case",
        ],
        dir.path(),
    ));
    assert_eq!(out.lines().count(), 2 + 2 * 3 + 1, "{out}");
    assert!(out.contains("bully-best-case") && out.contains("etcd-3-2-down"));
    assert!(out.ends_with("2 passed, 0 failed\n"), "{out}");
    let o = bench(&["validate", "--case", "nope"], dir.path());
    fails(
        &o,
        2,
        &["nope", "bully-best-case", "rejoin-prevote-keeps-leader"],
    );
}

/// `path` with field `column` of line `line` (1-based; the header is 1) set to `value`.
fn corrupt(path: &Path, line: usize, column: &str, value: &str) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let col = lines[0].split(',').position(|c| c == column).unwrap();
    let mut cells: Vec<&str> = lines[line - 1].split(',').collect();
    cells[col] = value;
    lines[line - 1] = cells.join(",");
    fs::write(path, lines.join("\n") + "\n").unwrap();
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

/// Record `dir/trials.csv`'s current byte count and SHA-256 in `dir/manifest.json`, as a
/// forger who knew the format would.
fn rehash(dir: &Path) {
    use sha2::Digest;
    let t = fs::read(dir.join("trials.csv")).unwrap();
    let sha: String = sha2::Sha256::digest(&t)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mp = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&mp).unwrap()).unwrap();
    m["trials_csv"]["sha256"] = sha.into();
    m["trials_csv"]["bytes"] = (t.len() as u64).into();
    fs::write(&mp, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Results are checked against what the sweep recorded wherever a finished directory is read:
/// an edited `trials.csv` is refused by `merge`, `report`, `compare` and `--resume` (which
/// would otherwise re-certify it with a new hash), and a `summary.csv` edited within every
/// range is refused by `report` and `compare`, which recompute it from the trials.
#[test]
fn recorded_hashes_and_the_summary_are_checked_wherever_results_are_read() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "good", &["--no-report"]));
    ok(&tiny(d.path(), "s1", &["--no-report", "--shard", "1/2"]));
    ok(&tiny(d.path(), "s2", &["--no-report", "--shard", "2/2"]));
    let copy = |from: &str, name: &str| {
        let dir = d.path().join(name);
        fs::create_dir_all(&dir).unwrap();
        for f in [
            "trials.csv",
            "trials.csv.gz",
            "summary.csv",
            "manifest.json",
        ] {
            fs::copy(d.path().join(from).join(f), dir.join(f)).unwrap();
        }
        dir
    };
    let hash_msg = ["trials.csv is not the file the sweep wrote", "SHA-256"];
    // An edited trial value (a plausible one: another election time).
    let edited = copy("good", "edited");
    let t = fs::read_to_string(edited.join("trials.csv")).unwrap();
    let line = t.lines().position(|l| l.contains(",true,")).unwrap() + 1;
    corrupt(&edited.join("trials.csv"), line, "elect_ms", "1");
    fails(
        &bench(&["report", "--results", "edited", "--out", "rep"], d.path()),
        1,
        &hash_msg,
    );
    assert!(!d.path().join("rep").exists());
    fails(
        &bench(&["compare", "good", "edited", "--out", "cmp"], d.path()),
        1,
        &hash_msg,
    );
    let before = fs::read(edited.join("manifest.json")).unwrap();
    fails(
        &tiny(d.path(), "edited", &["--no-report", "--resume"]),
        1,
        &hash_msg,
    );
    assert!(fs::read(edited.join("manifest.json")).unwrap() == before);
    // Only the compressed copy, as committed: decompressed and checked the same way.
    let gz_only = copy("good", "gz-only");
    fs::remove_file(gz_only.join("trials.csv")).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(gz_only.join("manifest.json")).unwrap()).unwrap();
    m["trials_csv"]["sha256"] = "0".repeat(64).into();
    fs::write(gz_only.join("manifest.json"), m.to_string()).unwrap();
    fails(
        &bench(
            &["report", "--results", "gz-only", "--out", "rep"],
            d.path(),
        ),
        1,
        &["trials.csv.gz is not the file the sweep wrote"],
    );
    // A shard whose trials no longer match its manifest.
    let s1 = copy("s1", "s1-edited");
    corrupt(&s1.join("trials.csv"), line.min(3), "msgs_total", "7");
    fails(
        &bench(&["merge", "--out", "m", "s1-edited", "s2"], d.path()),
        1,
        &hash_msg,
    );
    // A statistic edited within its range: the trials give another value.
    let summary = copy("good", "summary");
    corrupt(&summary.join("summary.csv"), 2, "msgs_election_mean", "1");
    fails(
        &bench(
            &["report", "--results", "summary", "--out", "rep"],
            d.path(),
        ),
        1,
        &[
            "summary.csv line 2",
            "msgs_election_mean",
            "the cell's trials give",
        ],
    );
    fails(
        &bench(&["compare", "good", "summary", "--out", "cmp"], d.path()),
        1,
        &["summary.csv line 2"],
    );
    // Untouched results still pass everywhere.
    ok(&bench(
        &["report", "--results", "good", "--out", "rep"],
        d.path(),
    ));
    ok(&bench(
        &["compare", "good", "good", "--out", "cmp"],
        d.path(),
    ));
}

/// `merge --out` never overwrites results by accident: a directory holding results is refused
/// unless `--force` (as `sweep` does), one of the shards being merged always, and nothing is
/// touched.
#[test]
fn merge_refuses_to_overwrite_results_or_its_inputs() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "other", &["--no-report"]));
    ok(&tiny(d.path(), "s1", &["--no-report", "--shard", "1/2"]));
    ok(&tiny(d.path(), "s2", &["--no-report", "--shard", "2/2"]));
    let before = fs::read(d.path().join("other/manifest.json")).unwrap();
    fails(
        &bench(&["merge", "--out", "other", "s1", "s2"], d.path()),
        2,
        &["holds results already", "--force"],
    );
    assert_eq!(
        fs::read(d.path().join("other/manifest.json")).unwrap(),
        before
    );
    let s1 = fs::read(d.path().join("s1/manifest.json")).unwrap();
    for out in ["s1", "./s2"] {
        for force in [false, true] {
            let mut args = vec!["merge", "--out", out, "s1", "s2"];
            if force {
                args.push("--force");
            }
            fails(&bench(&args, d.path()), 2, &["one of the shards"]);
        }
    }
    assert!(fs::read(d.path().join("s1/manifest.json")).unwrap() == s1);
    // Forced: overwritten with the merge (which equals the unsharded sweep it was).
    fs::write(d.path().join("other/summary.csv"), "stale\n").unwrap();
    ok(&bench(
        &["merge", "--out", "other", "s1", "s2", "--force"],
        d.path(),
    ));
    assert!(fs::read(d.path().join("other/summary.csv")).unwrap() != b"stale\n");
}

#[test]
fn merge_checks_values_and_recomputes_the_summary() {
    let d = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        ok(&tiny(
            d.path(),
            &format!("s{k}"),
            &["--shard", &format!("{k}/2")],
        ));
    }
    let copy = |name: &str| {
        let dir = d.path().join(name);
        fs::create_dir_all(&dir).unwrap();
        for f in ["trials.csv", "summary.csv", "manifest.json"] {
            fs::copy(d.path().join("s1").join(f), dir.join(f)).unwrap();
        }
        dir
    };
    // A flipped boolean in a trial row (with the manifest's hash updated to match, so the
    // row check itself is what refuses it).
    let bad = copy("bad1");
    corrupt(&bad.join("trials.csv"), 2, "split_brain", "true");
    rehash(&bad);
    fails(
        &bench(&["merge", "--out", "m", "bad1", "s2"], d.path()),
        1,
        &["bad1/trials.csv line 2", "column split_brain = \"true\""],
    );
    assert!(!d.path().join("m").exists());
    // A statistic that does not follow from the shard's trials.
    let bad = copy("bad2");
    corrupt(&bad.join("summary.csv"), 2, "elect_ms_mean", "1");
    fails(
        &bench(&["merge", "--out", "m", "s2", "bad2"], d.path()),
        1,
        &[
            "bad2/summary.csv line 2",
            "column elect_ms_mean = \"1\"",
            "the cell's trials give",
        ],
    );
    assert!(!d.path().join("m").exists());
    // A valid trial value that the shard's summary did not count: refused, not copied.
    let bad = copy("bad3");
    let t = fs::read_to_string(bad.join("trials.csv")).unwrap();
    let mut lines: Vec<&str> = t.lines().collect();
    let extra = lines[1].to_string();
    lines.push(&extra);
    fs::write(bad.join("trials.csv"), lines.join("\n") + "\n").unwrap();
    rehash(&bad);
    fails(
        &bench(&["merge", "--out", "m", "s2", "bad3"], d.path()),
        1,
        &["bad3/trials.csv line"],
    );
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

#[test]
fn report_refuses_a_summary_out_of_range_or_inconsistent() {
    let d = tempfile::tempdir().unwrap();
    ok(&tiny(d.path(), "r", &["--no-report"]));
    let dir = d.path().join("r");
    let summary = fs::read(dir.join("summary.csv")).unwrap();
    corrupt(&dir.join("summary.csv"), 2, "split_brain_rate", "1.2");
    fails(
        &bench(&["report", "--results", "r", "--out", "rep"], d.path()),
        2,
        &[
            "summary.csv, line 2",
            "`split_brain_rate`",
            "\"1.2\"",
            "above 1",
        ],
    );
    fs::write(dir.join("summary.csv"), &summary).unwrap();
    let m = fs::read_to_string(dir.join("manifest.json")).unwrap();
    fs::write(
        dir.join("manifest.json"),
        m.replace("\"trials\": 16", "\"trials\": 17"),
    )
    .unwrap();
    fails(
        &bench(&["report", "--results", "r", "--out", "rep"], d.path()),
        2,
        &["manifest.json says 17 trials"],
    );
}

/// `run --json` of one trial, parsed.
fn run_json(
    dir: &Path,
    protocol: &str,
    n: &str,
    scenario: &str,
    sets: &[&str],
) -> serde_json::Value {
    let mut args = vec!["run", "-p", protocol, "-n", n, "-s", scenario, "--json"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = ok(&bench(&args, dir));
    serde_json::from_str(out.trim()).expect("one JSON object")
}

/// Latencies and timings near the end of the 64-bit nanosecond clock (this binary is a debug
/// build, so an overflow would panic): a latency past the horizon means the message never
/// arrives; a millisecond parameter too large to be an instant is refused by name.
#[test]
fn extreme_latencies_and_timings_give_a_sane_row_or_a_named_error() {
    let d = tempfile::tempdir().unwrap();
    for p in ["bully", "ring", "raft"] {
        // 1e15 ms saturates the clock: nothing is ever delivered, so nobody can converge
        // (raft cannot even win a vote) and the trial runs to its horizon.
        let v = run_json(
            d.path(),
            p,
            "5",
            "leader-crash",
            &["net.latency=constant:1e15"],
        );
        assert_eq!(v["converged"], false, "{p}: {v}");
        assert_eq!(v["leader"], serde_json::Value::Null, "{p}: {v}");
        assert_eq!(v["end_ms"], 20000, "{p}: {v}");
        // A heavy tail with reordering: some draws land far past the horizon.
        let v = run_json(
            d.path(),
            p,
            "5",
            "leader-crash",
            &["net.latency=pareto:1:0.2", "net.fifo=false"],
        );
        let end = v["end_ms"].as_f64().unwrap();
        assert!(end > 1000.0 && end <= 20000.0, "{p}: {v}");
        fails(
            &bench(
                &[
                    "run",
                    "-p",
                    p,
                    "-n",
                    "5",
                    "-s",
                    "leader-crash",
                    "--set",
                    "detect_jitter_ms=2e13",
                ],
                d.path(),
            ),
            2,
            &["detect_jitter_ms = 2e13", "at most 1e12"],
        );
    }
    fails(
        &bench(
            &[
                "run",
                "-p",
                "raft",
                "-n",
                "5",
                "-s",
                "leader-crash",
                "--set",
                "raft.timeout_ms=150-1e300",
            ],
            d.path(),
        ),
        2,
        &["raft.timeout_ms", "1e12"],
    );
}

/// A trial that uses up its work budget ends with a row that says so (and never counts as
/// converged); the default budget leaves normal trials alone. `run` says it in plain words.
#[test]
fn a_trial_out_of_work_budget_says_so_in_its_row_and_the_summary() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(d.path(), "bully", "5", "leader-crash", &[]);
    assert_eq!(v["budget_exceeded"], false, "{v}");
    assert_eq!(v["converged"], true, "{v}");
    let v = run_json(d.path(), "bully", "5", "leader-crash", &["work_budget=50"]);
    assert_eq!(v["budget_exceeded"], true, "{v}");
    assert_eq!(v["converged"], false, "{v}");
    assert!(v["end_ms"].as_f64().unwrap() < 1000.0, "{v}");
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "raft",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--set",
            "work_budget=50",
        ],
        d.path(),
    ));
    assert!(
        out.contains("BUDGET EXCEEDED") && out.contains("work budget of 50"),
        "{out}"
    );
    let out = ok(&bench(
        &["run", "-p", "raft", "-n", "5", "-s", "leader-crash"],
        d.path(),
    ));
    assert!(!out.contains("BUDGET"), "{out}");
    // A sweep: each trial's column, and the per-cell count in summary.csv.
    ok(&bench(
        &[
            "sweep",
            "--protocols",
            "bully",
            "--nodes",
            "3",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "2",
            "--quiet",
            "--out",
            "tight",
            "--no-report",
            "--set",
            "work_budget=50",
        ],
        d.path(),
    ));
    let trials = fs::read_to_string(d.path().join("tight/trials.csv")).unwrap();
    let header: Vec<&str> = trials.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "budget_exceeded").unwrap();
    assert_eq!(header[col + 1], "end_ms");
    for line in trials.lines().skip(1) {
        assert_eq!(line.split(',').nth(col), Some("true"), "{line}");
    }
    let summary = fs::read_to_string(d.path().join("tight/summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "budget_exceeded").unwrap();
    assert_eq!(header[col + 1], "outcome_stable");
    assert_eq!(header.last(), Some(&"skipped"));
    let row: Vec<&str> = summary.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[col], "2", "{summary}");
    // A trial cut short measures nothing: the cell has no statistics.
    let get = |name: &str| row[header.iter().position(|c| *c == name).unwrap()];
    assert_eq!(get("measured"), "0");
    assert_eq!(get("converged_rate"), "");
}

/// Sizes and parameters whose trial could not fit in memory are refused before anything is
/// allocated, naming the parameter and the estimate.
#[test]
fn a_trial_too_big_for_memory_is_refused_with_its_estimate() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-p", "bully", "-s", "flapping-leader"];
        args.extend(extra);
        bench(&args, d.path())
    };
    fails(
        &run(&["-n", "100000"]),
        2,
        &["nodes = 100000", "GiB", "limit is 4.0 GiB"],
    );
    fails(
        &run(&["-n", "5", "--set", "flaps=1000000000"]),
        2,
        &["flaps = 1000000000", "GiB", "limit is 4.0 GiB"],
    );
    fails(
        &run(&["-n", "5", "--set", "flaps=1e9"]),
        2,
        &["flaps", "whole number"],
    );
    fails(
        &bench(
            &[
                "sweep",
                "--protocols",
                "raft",
                "--nodes",
                "3,100000",
                "--scenarios",
                "leader-crash",
                "--seeds",
                "1",
                "--quiet",
                "--out",
                "big",
            ],
            d.path(),
        ),
        2,
        &["nodes = 100000"],
    );
    assert!(!d.path().join("big/trials.csv").exists());
}

/// `trace --format jsonl` streams its records as the trial runs: its output (to standard
/// output or to a file) is byte-for-byte the buffered trace rendered as JSON lines.
#[test]
fn trace_jsonl_streams_exactly_the_buffered_trace() {
    use election_report::{render_trace, TraceFormat, TraceMeta};
    let d = tempfile::tempdir().unwrap();
    let mut spec = election_runner::SweepSpec {
        protocols: Some(vec!["raft+pre_vote".into()]),
        nodes: Some(vec![5]),
        scenarios: Some(vec!["flapping-leader".into()]),
        seeds: Some(1),
        first_seed: Some(3),
        ..Default::default()
    };
    spec.set("net.loss=0.05").unwrap();
    let cell = spec.plan().unwrap().cells().unwrap().swap_remove(0);
    let t = cell.run(3, true).unwrap();
    let meta = TraceMeta::from_metrics(
        "raft+pre_vote",
        "flapping-leader",
        // The fixed --set net.loss overrides the profile: the network's name says so.
        "lan+net.loss=0.05",
        3,
        &t.report.metrics,
    );
    let want = render_trace(&t.report.trace, 5, &meta, TraceFormat::Jsonl).unwrap();
    assert!(want.lines().count() > 100);
    let args = [
        "trace",
        "-p",
        "raft+pre_vote",
        "-n",
        "5",
        "-s",
        "flapping-leader",
        "--seed",
        "3",
        "--set",
        "net.loss=0.05",
        "--format",
        "jsonl",
    ];
    assert_eq!(ok(&bench(&args, d.path())), want);
    let mut to_file = args.to_vec();
    to_file.extend(["--out", "t.jsonl"]);
    let said = ok(&bench(&to_file, d.path()));
    assert!(said.contains("t.jsonl"), "{said}");
    assert_eq!(fs::read_to_string(d.path().join("t.jsonl")).unwrap(), want);
    assert_eq!(
        listing(d.path()),
        vec!["t.jsonl".to_string()],
        "no temporary file left"
    );
}

/// A small real sweep for `compare`: bully and raft, 3 nodes, `leader-crash`, 30 seeds, Raft's
/// election timeout fixed at `timeout`.
fn timeout_sweep(dir: &Path, out: &str, timeout: &str, extra: &[&str]) -> Output {
    let set = format!("raft.timeout_ms={timeout}");
    let mut args = vec![
        "sweep",
        "--protocols",
        "bully,raft",
        "--nodes",
        "3",
        "--scenarios",
        "leader-crash",
        "--seeds",
        "30",
        "--set",
        &set,
        "--out",
        out,
        "--no-report",
        "--quiet",
    ];
    args.extend(extra);
    bench(&args, dir)
}

/// The `compare.csv` rows as maps from column to value.
fn compare_rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn compare_finds_a_real_change_with_its_sign_and_none_between_identical_runs() {
    let d = tempfile::tempdir().unwrap();
    ok(&timeout_sweep(d.path(), "a", "150-300", &[]));
    ok(&timeout_sweep(d.path(), "a2", "150-300", &[]));
    ok(&timeout_sweep(d.path(), "b", "300-600", &[]));

    // Two runs of one configuration: nothing changed.
    let out = ok(&bench(&["compare", "a", "a2", "--out", "same"], d.path()));
    assert!(
        out.contains("2 common cells (0 only in A, 0 only in B), 12 tests"),
        "{out}"
    );
    assert!(
        out.contains(", 0 significant") && out.contains("no significant change"),
        "{out}"
    );
    let rows = compare_rows(&d.path().join("same/compare.csv"));
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r["significant"] == "false" && r["diff"] == "0"));

    // Doubling Raft's election timeout slows Raft's failover, and only Raft's.
    let out = ok(&bench(&["compare", "a", "b", "--out", "slower"], d.path()));
    let rows = compare_rows(&d.path().join("slower/compare.csv"));
    let row = |p: &str, m: &str| {
        rows.iter()
            .find(|r| r["protocol"] == p && r["metric"] == m)
            .unwrap_or_else(|| panic!("no {p} {m} in {rows:?}"))
    };
    let raft = row("raft", "failover_ms_p50");
    assert_eq!(raft["significant"], "true", "{raft:?}");
    let lo: f64 = raft["ci_lo"].parse().unwrap();
    let diff: f64 = raft["diff"].parse().unwrap();
    assert!(lo > 0.0 && diff >= lo, "{raft:?}");
    assert!(row("raft", "unavailable_ms_mean")["significant"] == "true");
    for r in rows.iter().filter(|r| r["protocol"] == "bully") {
        assert_eq!(r["significant"], "false", "{r:?}");
    }
    // Significant changes come first, and the table says so.
    assert_eq!(rows[0]["significant"], "true");
    assert!(out.contains("raft n=3 leader-crash lan"), "{out}");
    // A's value is summary.csv's column of the same name.
    let summary = fs::read_to_string(d.path().join("a/summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "failover_ms_p50").unwrap();
    let raft_line = summary.lines().find(|l| l.starts_with("raft,")).unwrap();
    assert_eq!(raft_line.split(',').nth(col).unwrap(), raft["a"]);
    let md = fs::read_to_string(d.path().join("slower/COMPARE.md")).unwrap();
    assert!(md.starts_with("# Comparison: `a` → `b`"), "{md}");
    assert!(md.contains("charts/changes.png"));
    for ext in ["svg", "png"] {
        let f = d.path().join(format!("slower/charts/changes.{ext}"));
        assert!(
            fs::metadata(&f).map(|m| m.len() > 1000).unwrap_or(false),
            "{f:?}"
        );
    }
    // A threshold above the change: no longer significant.
    let out = ok(&bench(
        &[
            "compare",
            "a",
            "b",
            "--out",
            "strict",
            "--min-change",
            "500",
        ],
        d.path(),
    ));
    assert!(out.contains("no significant change"), "{out}");

    // Byte-identical on every run, into the same directory or another.
    ok(&bench(&["compare", "a", "b", "--out", "again"], d.path()));
    ok(&bench(&["compare", "a", "b", "--out", "slower"], d.path()));
    for f in [
        "COMPARE.md",
        "compare.csv",
        "charts/changes.svg",
        "charts/changes.png",
    ] {
        let x = fs::read(d.path().join("slower").join(f)).unwrap();
        assert_eq!(x, fs::read(d.path().join("again").join(f)).unwrap(), "{f}");
    }
    // Another comparison is not written over one without --force.
    fails(
        &bench(&["compare", "a", "a2", "--out", "slower"], d.path()),
        2,
        &[
            "slower",
            "holds the comparison of other directories",
            "--force",
        ],
    );
    ok(&bench(
        &["compare", "a", "a2", "--out", "slower", "--force"],
        d.path(),
    ));
}

#[test]
fn compare_refuses_directories_it_cannot_match() {
    let d = tempfile::tempdir().unwrap();
    ok(&timeout_sweep(d.path(), "a", "150-300", &[]));
    // No common cell: another protocol at another size.
    ok(&bench(
        &[
            "sweep",
            "--protocols",
            "ring",
            "--nodes",
            "5",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "5",
            "--out",
            "ring",
            "--no-report",
            "--quiet",
        ],
        d.path(),
    ));
    fails(
        &bench(&["compare", "a", "ring", "--out", "x"], d.path()),
        2,
        &[
            "no cell was run in both a and ring",
            "protocols [bully, raft], sizes [3]",
            "protocols [ring], sizes [5]",
        ],
    );
    assert!(!d.path().join("x").exists());
    // A missing directory, named.
    fails(
        &bench(&["compare", "a", "nowhere"], d.path()),
        2,
        &["nowhere", "does not exist"],
    );
    // Different varied parameters: cells cannot be matched.
    ok(&bench(
        &[
            "sweep",
            "--protocols",
            "raft",
            "--nodes",
            "3",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "5",
            "--set",
            "raft.timeout_ms=150-300,300-600",
            "--out",
            "varied",
            "--no-report",
            "--quiet",
        ],
        d.path(),
    ));
    fails(
        &bench(&["compare", "a", "varied"], d.path()),
        2,
        &["a varies []", "varied varies [raft.timeout_ms]"],
    );
    // Another schema: a file of another tool.
    let foreign = d.path().join("foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("trials.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("summary.csv"), "a,b\n1,2\n").unwrap();
    fs::write(foreign.join("manifest.json"), "{}").unwrap();
    fails(
        &bench(&["compare", "a", "foreign"], d.path()),
        2,
        &["foreign"],
    );
    // Options out of range.
    fails(
        &bench(&["compare", "a", "a", "--level", "1.5"], d.path()),
        2,
        &["level = 1.5"],
    );
    fails(
        &bench(
            &["compare", "a", "a", "--resamples", "5000000000"],
            d.path(),
        ),
        2,
        &["--resamples"],
    );
    fails(
        &bench(&["compare", "a", "a", "--resamples", "2000000"], d.path()),
        2,
        &["resamples = 2000000"],
    );
    // The flag is in percent: the message says so, naming the flag (it used to describe
    // the library's fraction, `min_change`).
    for v in ["-1", "NaN", "inf"] {
        fails(
            &bench(
                &["compare", "a", "a", &format!("--min-change={v}")],
                d.path(),
            ),
            2,
            &[&format!("--min-change {v}"), "percentage"],
        );
    }
}

#[test]
fn compare_ignores_the_column_that_names_the_change_when_asked() {
    let d = tempfile::tempdir().unwrap();
    let one = |spec: &str, out: &str| {
        ok(&bench(
            &[
                "sweep",
                "--protocols",
                spec,
                "--nodes",
                "3",
                "--scenarios",
                "leader-crash",
                "--seeds",
                "30",
                "--out",
                out,
                "--no-report",
                "--quiet",
            ],
            d.path(),
        ))
    };
    one("raft", "plain");
    one("raft+timeout_ms=300-600", "slow");
    // The spec names the change, so no cell matches; the message says what would.
    fails(
        &bench(&["compare", "plain", "slow"], d.path()),
        2,
        &["no cell was run in both", "--ignore protocol"],
    );
    let out = ok(&bench(
        &[
            "compare", "plain", "slow", "--ignore", "protocol", "--out", "c",
        ],
        d.path(),
    ));
    assert!(
        out.contains("raft n=3 leader-crash lan [B: protocol=raft+timeout_ms=300-600]"),
        "{out}"
    );
    let rows = compare_rows(&d.path().join("c/compare.csv"));
    let f = rows
        .iter()
        .find(|r| r["metric"] == "failover_ms_p50")
        .unwrap();
    assert_eq!(f["protocol_b"], "raft+timeout_ms=300-600");
    assert_eq!(f["significant"], "true", "{f:?}");
    assert!(f["ci_lo"].parse::<f64>().unwrap() > 0.0, "{f:?}");
    // A column that varies within a side cannot be ignored; an unknown one is named.
    one("bully,raft", "two");
    fails(
        &bench(
            &["compare", "two", "plain", "--ignore", "protocol"],
            d.path(),
        ),
        2,
        &["would become one cell"],
    );
    fails(
        &bench(
            &["compare", "plain", "slow", "--ignore", "colour"],
            d.path(),
        ),
        2,
        &["--ignore colour", "protocol, nodes, scenario, net"],
    );
}

/// Issue #15's first "done when": a lease trial runs from the CLI, the store scenarios are
/// refused for a protocol without a store only by skipping, and a bad lease timing names its
/// field.
#[test]
fn run_lease_leader_crash_and_its_errors() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(&bench(
        &[
            "run",
            "-p",
            "lease",
            "-n",
            "5",
            "-s",
            "leader-crash",
            "--json",
        ],
        d.path(),
    ));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["protocol"], "lease");
    assert_eq!(v["converged"], true);
    assert_eq!(v["split_brain"], false);
    let f = v["failover_ms"].as_f64().unwrap();
    assert!((100.0..300.0).contains(&f), "{f}");
    fails(
        &bench(
            &[
                "run",
                "-p",
                "lease+renew_deadline_ms=200",
                "-n",
                "5",
                "-s",
                "leader-crash",
            ],
            d.path(),
        ),
        2,
        &["lease.duration_ms", "lease.renew_deadline_ms"],
    );
}

/// `tune` on a tiny budget (minute-long steady windows): the page, the chart, every point in
/// the CSV, the same bytes on a rerun; contradictory limits answered as such; bad input named.
#[test]
fn tune_writes_its_advice_and_says_when_limits_contradict() {
    let dir = tempfile::tempdir().unwrap();
    let args = |out: &str, p99: &str| -> Vec<String> {
        [
            "tune",
            "--protocols",
            "raft,lease",
            "--nodes",
            "3",
            "--hours",
            "2",
            "--max-hours",
            "4",
            "--crash-trials",
            "30",
            "--rounds",
            "1",
            "--timeouts",
            "60-240",
            "--ratios",
            "5",
            "--set",
            "steady_ms=60000",
            "--set",
            "noise.pause_per_hour=7",
            "--max-p99-ms",
            p99,
            "--quiet",
            "--out",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |out: &str, p99: &str| {
        let a = args(out, p99);
        bench(
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            dir.path(),
        )
    };
    let out = ok(&run("t1", "2000"));
    assert!(
        out.contains("tune:") && out.contains("raft") && out.contains("lease"),
        "{out}"
    );
    let advice = fs::read_to_string(dir.path().join("t1/ADVICE.md")).unwrap();
    assert!(advice.starts_with("# Timeout advice"), "{advice}");
    for needle in [
        "## The answer",
        "## The frontier",
        "etcd",
        "hashicorp/raft",
        "Consul",
        "client-go",
        "cannot show the limit",
        // The noise as the trials ran it, the user's rate over the busy profile's.
        "GC pauses 7 an hour per node, each `lognormal:5:1` ms long; disk stalls 12 an hour",
    ] {
        assert!(advice.contains(needle), "{needle:?} not in ADVICE.md");
    }
    let png = fs::read(dir.path().join("t1/frontier.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let csv = fs::read_to_string(dir.path().join("t1/points.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("protocol,timeout_ms,ratio,settings"));
    // Every grid timeout of both protocols, plus refinements.
    assert!(rows.len() > 1 + 2 * 9, "{}", rows.len());
    assert!(rows
        .iter()
        .any(|r| r.contains(",true,") && r.starts_with("raft,")));
    // Deterministic: a rerun gives the same bytes.
    ok(&run("t2", "2000"));
    for f in ["points.csv", "ADVICE.md", "frontier.svg"] {
        let a = fs::read(dir.path().join("t1").join(f)).unwrap();
        let b = fs::read(dir.path().join("t2").join(f)).unwrap();
        // The page names its own output directory in the reproduce command.
        let norm = |v: Vec<u8>| text(&v).replace("--out t2", "--out t1");
        assert_eq!(norm(a), norm(b), "{f} differs between reruns");
    }
    // No timing fails over within 1 ms: the page says no setting meets both limits.
    ok(&run("t3", "1"));
    let advice = fs::read_to_string(dir.path().join("t3/ADVICE.md")).unwrap();
    assert!(advice.contains("no setting met both limits"), "{advice}");
    assert!(advice.contains("The closest evaluated points"), "{advice}");
    assert!(
        advice.contains("no evaluated point's p99 meets the failover limit"),
        "{advice}"
    );
    // Bad input: named, exit 2, nothing written.
    fails(
        &bench(&["tune", "--ratios", "1", "--out", "bad"], dir.path()),
        2,
        &["--ratios 1"],
    );
    fails(
        &bench(
            &["tune", "--set", "raft.timeout_ms=100-200", "--out", "bad"],
            dir.path(),
        ),
        2,
        &["raft.timeout_ms", "tune sets"],
    );
    fails(
        &bench(
            &[
                "tune",
                "--protocols",
                "raft+timeout_ms=100-200",
                "--out",
                "bad",
            ],
            dir.path(),
        ),
        2,
        &["raft+timeout_ms=100-200", "drop the option"],
    );
    fails(
        &bench(&["tune", "--timeouts", "500", "--out", "bad"], dir.path()),
        2,
        &["--timeouts"],
    );
    assert!(!dir.path().join("bad").exists());
}

/// Every input the second hardening pass found unbounded is refused by name with exit 2 and
/// no panic, before anything is allocated or run: seeds a cell cannot hold (2^64 − 1 was a
/// capacity-overflow panic, 2^32 an abort allocating 64 GB), in `sweep` and `explore`; an
/// exploration of 8 nodes (2^28 patterns a protocol, > 4 GB before any progress line);
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
        &["explore", "--nodes", "8", "--out", "e", "--no-report"],
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
