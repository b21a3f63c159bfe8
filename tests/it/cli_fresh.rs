//! The command line as a new user meets it (issue 26): "did you mean" for mistyped names,
//! `report --focus-nodes` refusing a size the sweep lacks, the committed directories written
//! only on purpose, `--shard auto` under a scheduler's environment, and `merge` taking a
//! parent directory or a list file.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{bench_env, fails, ok};

/// Exit 2, and standard error's first line holds every needle.
#[track_caller]
fn usage(o: &Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    let first = err.lines().next().unwrap_or("");
    for n in needles {
        assert!(first.contains(n), "{n:?} not in the first line: {err}");
    }
    err
}

const SWEEP: &[&str] = &[
    "sweep",
    "--protocols",
    "bully,raft",
    "--nodes",
    "3,5",
    "--scenarios",
    "leader-crash,partition-leader-minority",
    "--seeds",
    "2",
    "--quiet",
    "--no-report",
];

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_mistyped_name_leads_with_the_closest_valid_one() {
    let d = tempfile::tempdir().unwrap();
    let run = |p: &str, s: &str, extra: &[&str]| {
        let mut args = vec!["run", "-p", p, "-n", "5", "-s", s];
        args.extend(extra);
        bench_env(&args, d.path(), &[])
    };
    let e = usage(
        &run("raft+prevote", "leader-crash", &[]),
        &["\"prevote\"", "did you mean \"pre_vote\"?"],
    );
    // The valid list is still there, after the suggestion.
    assert!(e.contains("valid options: timeout_ms, pre_vote"), "{e}");
    usage(
        &run("raf", "leader-crash", &[]),
        &["did you mean \"raft\"?"],
    );
    usage(
        &run("raft", "leader-crsh", &[]),
        &["\"leader-crsh\"", "did you mean \"leader-crash\"?"],
    );
    usage(
        &run("raft", "leader-crash", &["--set", "net.los=0.1"]),
        &["\"net.los\"", "did you mean \"net.loss\"?"],
    );
    usage(
        &run("raft", "leader-crash", &["--net", "lna"]),
        &["did you mean \"lan\"?"],
    );
    // Nothing close: the list, on one line, as before.
    let e = usage(
        &run("raft", "xyzzy", &[]),
        &["unknown scenario \"xyzzy\"; valid: all, "],
    );
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn report_focus_nodes_must_be_a_size_of_the_sweep() {
    let d = tempfile::tempdir().unwrap();
    let mut args = SWEEP.to_vec();
    args.extend(["--out", "r"]);
    ok(&bench_env(&args, d.path(), &[]));
    usage(
        &bench_env(
            &[
                "report",
                "--results",
                "r",
                "--out",
                "rep",
                "--focus-nodes",
                "7",
            ],
            d.path(),
            &[],
        ),
        &["--focus-nodes 7", "its sizes are 3, 5"],
    );
    assert!(
        !d.path().join("rep").exists(),
        "a refused report wrote files"
    );
    ok(&bench_env(
        &[
            "report",
            "--results",
            "r",
            "--out",
            "rep",
            "--focus-nodes",
            "3",
        ],
        d.path(),
        &[],
    ));
}

#[test]
fn explore_and_tune_write_the_committed_directories_only_on_purpose() {
    let d = tempfile::tempdir().unwrap();
    usage(
        &bench_env(&["explore", "--nodes", "3", "--quiet"], d.path(), &[]),
        &["results/explore", "--out DIR", "--force"],
    );
    assert!(!d.path().join("results").exists());
    usage(
        &bench_env(&["tune", "--protocols", "raft", "--quiet"], d.path(), &[]),
        &["reports/tune-default", "--name NAME", "--force"],
    );
    assert!(!d.path().join("reports").exists());
    // Elsewhere, or with --force, they run.
    ok(&bench_env(
        &[
            "explore",
            "--nodes",
            "3",
            "--seeds",
            "1",
            "--quiet",
            "--out",
            "mine",
            "--report-out",
            "mine-report",
        ],
        d.path(),
        &[],
    ));
    ok(&bench_env(
        &[
            "explore",
            "--nodes",
            "3",
            "--seeds",
            "1",
            "--quiet",
            "--force",
            "--no-report",
        ],
        d.path(),
        &[],
    ));
    assert!(d.path().join("results/explore/summary.csv").is_file());
}

/// Every other command that could write into a committed directory refuses without --force
/// (exit 2, naming the directory) and leaves it as it was: `sweep --out` of a directory named
/// like a committed one (its report would replace reports/default), `reference` with fewer seeds,
/// `calibrate --out reports/calibration` (measured live: never reproduced), `report` of other
/// results, and `live`, `trace` and `profile` pointed into one.
#[test]
fn every_writer_leaves_the_committed_directories_alone_without_force() {
    let d = tempfile::tempdir().unwrap();
    let committed = [
        "results/reference/manifest.json",
        "reports/reference/REFERENCE.md",
        "reports/calibration/README.md",
        "reports/default/REPORT.md",
        "results/default/summary.csv",
    ];
    for f in committed {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, f).unwrap();
    }
    let refused = |args: &[&str], needles: &[&str]| {
        usage(&bench_env(args, d.path(), &[]), needles);
    };
    // A sweep's report goes where `report --results DIR` puts it; only a results directory
    // named like a committed one, elsewhere, would reach a committed report.
    refused(
        &[
            "sweep",
            "--protocols",
            "raft",
            "--nodes",
            "3",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "2",
            "--out",
            "mine/default",
        ],
        &["reports/default", "--out DIR", "--force"],
    );
    refused(
        &["reference", "--seeds", "5", "--nodes", "3", "--quiet"],
        &["results/reference", "--results DIR", "--force"],
    );
    refused(
        &["reference", "--no-run", "--results", "results/mine"],
        &["reports/reference", "--force"],
    );
    refused(
        &["calibrate", "--trials", "2", "--out", "reports/calibration"],
        &["reports/calibration", "measured live", "--force"],
    );
    refused(
        &[
            "report",
            "--results",
            "results/mine",
            "--out",
            "reports/default",
        ],
        &["reports/default", "--out DIR", "--force"],
    );
    refused(
        &[
            "live",
            "-p",
            "bully",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--out",
            "results/default",
        ],
        &["results/default", "--out DIR"],
    );
    refused(
        &[
            "trace",
            "-p",
            "raft",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--out",
            "reports/default/t.svg",
        ],
        &["reports/default", "reports/traces/"],
    );
    refused(
        &[
            "profile",
            "--from-prometheus",
            "x.prom",
            "--out",
            "reports/default/p.toml",
        ],
        &["reports/default"],
    );
    for f in committed {
        assert_eq!(std::fs::read_to_string(d.path().join(f)).unwrap(), f);
    }
    let mut left: Vec<String> = Vec::new();
    for dir in ["results", "reports"] {
        for e in std::fs::read_dir(d.path().join(dir)).unwrap() {
            for f in std::fs::read_dir(e.unwrap().path()).unwrap() {
                left.push(f.unwrap().path().display().to_string());
            }
        }
    }
    assert_eq!(left.len(), committed.len(), "{left:?}");
    // Elsewhere it runs: a sweep's report beside its results' name, a trace's directory made.
    ok(&bench_env(
        &[
            "sweep",
            "--protocols",
            "raft",
            "--nodes",
            "3",
            "--scenarios",
            "leader-crash",
            "--seeds",
            "2",
            "--out",
            "results/mine",
            "--quiet",
        ],
        d.path(),
        &[],
    ));
    assert!(d.path().join("reports/mine/REPORT.md").is_file());
    assert_eq!(
        std::fs::read_to_string(d.path().join("reports/default/REPORT.md")).unwrap(),
        "reports/default/REPORT.md"
    );
    ok(&bench_env(
        &[
            "trace",
            "-p",
            "raft",
            "-n",
            "3",
            "-s",
            "leader-crash",
            "--out",
            "reports/traces/t.svg",
        ],
        d.path(),
        &[],
    ));
    assert!(d.path().join("reports/traces/t.svg").is_file());
}

#[test]
fn shard_auto_runs_the_schedulers_shard_and_merge_takes_their_parent_or_a_list() {
    let d = tempfile::tempdir().unwrap();
    let mut whole = SWEEP.to_vec();
    whole.extend(["--name", "w"]);
    ok(&bench_env(&whole, d.path(), &[]));
    // A Kubernetes Indexed Job of 3: indexes 0, 1, 2 are shards 1/3, 2/3, 3/3, each in its own
    // directory under results/w-shards/ from the same command line.
    let mut shard = whole.clone();
    shard.extend(["--shard", "auto", "--shard-count", "3"]);
    for i in ["0", "1", "2"] {
        let out = ok(&bench_env(&shard, d.path(), &[("JOB_COMPLETION_INDEX", i)]));
        let k = i.parse::<u32>().unwrap() + 1;
        assert!(out.contains(&format!("shard {k}/3")), "{out}");
        assert!(d
            .path()
            .join(format!("results/w-shards/{k}-of-3/manifest.json"))
            .is_file());
    }
    // The manifests' reproduce command leaves the shard flags out.
    let m =
        std::fs::read_to_string(d.path().join("results/w-shards/2-of-3/manifest.json")).unwrap();
    assert!(!m.contains("--shard-count"), "{m}");
    // Without --shard-count, Kubernetes' index is refused; outside a scheduler, auto is refused.
    let mut no_count = whole.clone();
    no_count.extend(["--shard", "auto"]);
    usage(
        &bench_env(&no_count, d.path(), &[("JOB_COMPLETION_INDEX", "0")]),
        &["--shard-count"],
    );
    usage(
        &bench_env(&no_count, d.path(), &[]),
        &["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"],
    );
    // Slurm's 1-based array of 3, task 2: shard 2/3.
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ];
    let mut s2 = whole.clone();
    s2.extend(["--shard", "auto", "--out", "slurm2"]);
    assert!(ok(&bench_env(&s2, d.path(), &slurm)).contains("shard 2/3"));
    assert_eq!(
        files(&d.path().join("slurm2")),
        files(&d.path().join("results/w-shards/2-of-3"))
    );

    // merge: the parent directory, or a list file, equals the unsharded sweep.
    ok(&bench_env(
        &["merge", "--out", "m1", "results/w-shards"],
        d.path(),
        &[],
    ));
    assert_eq!(
        files(&d.path().join("m1")),
        files(&d.path().join("results/w"))
    );
    std::fs::write(
        d.path().join("list.txt"),
        "results/w-shards/3-of-3\n\nresults/w-shards/1-of-3\nresults/w-shards/2-of-3\n",
    )
    .unwrap();
    ok(&bench_env(
        &["merge", "--out", "m2", "--list", "list.txt"],
        d.path(),
        &[],
    ));
    assert_eq!(
        files(&d.path().join("m2")),
        files(&d.path().join("results/w"))
    );
    // An incomplete set is refused before anything is written, naming what is missing.
    std::fs::write(d.path().join("short.txt"), "results/w-shards/1-of-3\n").unwrap();
    let o = bench_env(
        &["merge", "--out", "m3", "--list", "short.txt"],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing shard(s) 2/3, 3/3"));
    assert!(!d.path().join("m3/manifest.json").exists());
}

/// The issue's command: `JOB_COMPLETION_INDEX=3 ... --shard auto --shard-count 8` runs shard
/// 4 of 8; a sweep of one cell and many seeds splits by seed blocks, and the eight blocks
/// merged are the unsharded sweep byte for byte.
#[test]
fn one_cell_split_by_seed_blocks_over_an_indexed_job_of_eight() {
    let d = tempfile::tempdir().unwrap();
    let one_cell = [
        "sweep",
        "--protocols",
        "raft",
        "--nodes",
        "3",
        "--scenarios",
        "leader-crash",
        "--seeds",
        "20",
        "--name",
        "one",
        "--quiet",
        "--no-report",
    ];
    ok(&bench_env(&one_cell, d.path(), &[]));
    let mut shard = one_cell.to_vec();
    shard.extend([
        "--shard",
        "auto",
        "--shard-count",
        "8",
        "--shard-by",
        "seeds",
    ]);
    for i in 0..8 {
        let i = i.to_string();
        let out = ok(&bench_env(
            &shard,
            d.path(),
            &[("JOB_COMPLETION_INDEX", &i)],
        ));
        if i == "3" {
            assert!(out.contains("shard 4/8"), "{out}");
            let m: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(d.path().join("results/one-shards/4-of-8/manifest.json"))
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(m["shard"], "4/8");
            assert_eq!(m["shard_by"], "seeds");
            // 20 seeds in 8 blocks: 2, 3, 2, 3, ...; the fourth is seeds 7..=9.
            assert_eq!(m["seeds_run"]["first"], 7);
            assert_eq!(m["seeds_run"]["count"], 3);
        }
    }
    ok(&bench_env(
        &["merge", "--out", "merged", "results/one-shards"],
        d.path(),
        &[],
    ));
    assert_eq!(
        files(&d.path().join("merged")),
        files(&d.path().join("results/one"))
    );
}

/// `explore --shard k/N` runs its share of the chunks; `merge` collects them and builds the
/// files: the unsharded exploration's, byte for byte, and `report` renders its page.
#[test]
fn explore_shards_merge_into_the_unsharded_exploration() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        "explore",
        "--protocols",
        "raft,bully",
        "--nodes",
        "3",
        "--seeds",
        "1",
        "--sample",
        "10",
        "--quiet",
        "--no-report",
    ];
    let mut whole = base.to_vec();
    whole.extend(["--out", "whole"]);
    ok(&bench_env(&whole, d.path(), &[]));
    for k in 1..=3 {
        let (s, out) = (format!("{k}/3"), format!("shards/{k}"));
        let mut a = base.to_vec();
        a.extend(["--shard", &s, "--out", &out]);
        let o = ok(&bench_env(&a, d.path(), &[]));
        assert!(o.contains(&format!("explore shard {k}/3")), "{o}");
        assert!(!d.path().join(&out).join("patterns.csv").exists());
    }
    let o = bench_env(
        &["merge", "--out", "bad", "shards/1", "shards/3"],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing shard(s) 2/3"));
    ok(&bench_env(
        &["merge", "--out", "merged", "--quiet", "shards"],
        d.path(),
        &[],
    ));
    assert_eq!(
        files(&d.path().join("merged")),
        files(&d.path().join("whole"))
    );
    ok(&bench_env(
        &["report", "--results", "merged", "--out", "page"],
        d.path(),
        &[],
    ));
    let md = std::fs::read_to_string(d.path().join("page/REPORT.md")).unwrap();
    assert!(md.contains("| raft | 3 |"), "{md}");

    // Issue 47: a shard's failing pattern made `stable` (counts consistent) with its chunk's
    // hash recomputed passes every check of the chunk, but not the merged patterns run again.
    let (chunk, text) = std::fs::read_dir(d.path().join("shards"))
        .unwrap()
        .flat_map(|s| std::fs::read_dir(s.unwrap().path().join("chunks")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap()))
        .find(|(_, t)| t.contains(",livelock,") || t.contains(",no-leader,"))
        .expect("3-node patterns include liveness failures");
    let forged: String = text
        .lines()
        .map(|l| {
            let mut f: Vec<String> = l.split(',').map(String::from).collect();
            if matches!(f[10].as_str(), "livelock" | "no-leader") {
                f[5] = "1".into(); // the seeds: --seeds 1
                for c in &mut f[6..10] {
                    *c = "0".into();
                }
                f[10] = "stable".into();
                f[11] = "0".into();
            }
            f.join(",") + "\n"
        })
        .collect();
    std::fs::write(&chunk, &forged).unwrap();
    let digest = crate::common::sha256_hex(forged.as_bytes());
    let mut hash = chunk.clone().into_os_string();
    hash.push(".sha256");
    std::fs::write(hash, format!("{digest}\n")).unwrap();
    let merge = |sample: &str| {
        bench_env(
            &[
                "merge",
                "--out",
                "merged",
                "--force",
                "--quiet",
                "--verify-sample",
                sample,
                "shards",
            ],
            d.path(),
            &[],
        )
    };
    let o = merge("1000");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("merged/patterns.csv: line ")
            && err.contains("column stable = \"1\" recorded"),
        "{err}"
    );
    // Without the sample, only the hashes: the forgery passes (what the sample is for).
    ok(&bench_env(
        &[
            "merge",
            "--out",
            "merged",
            "--force",
            "--quiet",
            "--verify-sample",
            "0",
            "shards",
        ],
        d.path(),
        &[],
    ));
}

/// `tune --shard k/N` searches its protocols; `merge` recomputes every protocol's advice from
/// the shards' points and writes the unsharded run's page, CSV and manifest byte for byte.
/// A shard a protocol at most.
#[test]
fn tune_shards_merge_into_the_unsharded_page() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let base = [
        "tune",
        "--protocols",
        "raft,lease,bully",
        "--nodes",
        "3",
        "--hours",
        "1",
        "--max-hours",
        "2",
        "--crash-trials",
        "10",
        "--rounds",
        "1",
        "--timeouts",
        "100-200",
        "--ratios",
        "5",
        "--set",
        "steady_ms=60000",
        "--quiet",
    ];
    let mut whole = base.to_vec();
    whole.extend(["--out", "t"]);
    ok(&bench_env(&whole, a.path(), &[]));
    for k in 1..=2 {
        let (s, out) = (format!("{k}/2"), format!("s{k}"));
        let mut args = base.to_vec();
        args.extend(["--shard", &s, "--out", &out]);
        let o = ok(&bench_env(&args, b.path(), &[]));
        assert!(o.contains(&format!("tune shard {k}/2")), "{o}");
        assert!(!b.path().join(&out).join("ADVICE.md").exists());
    }
    ok(&bench_env(
        &["merge", "--out", "t", "s2", "s1"],
        b.path(),
        &[],
    ));
    let (x, y) = (files(&a.path().join("t")), files(&b.path().join("t")));
    assert_eq!(
        x.iter().map(|f| &f.0).collect::<Vec<_>>(),
        y.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, p), (_, q)) in x.iter().zip(&y) {
        assert!(p == q, "{name} differs between the run and the merge");
    }
    // A shard edited after it was written is refused before anything is written: by the
    // SHA-256 it recorded of its searches, and, once a forger recomputes that, by running its
    // points again (a sample larger than the shard runs every point).
    let m = b.path().join("s1/manifest.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
    let fe = &mut v["searches"][0]["points"][0]["false_elections"];
    *fe = (fe.as_u64().unwrap() + 1).into();
    std::fs::write(&m, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let merge = ["merge", "--out", "u", "s2", "s1", "--verify-sample", "1000"];
    fails(
        &bench_env(&merge, b.path(), &[]),
        1,
        &["s1/manifest.json", "edited or corrupted"],
    );
    let searches = serde_json::to_vec(&v["searches"]).unwrap();
    v["searches_sha256"] = crate::common::sha256_hex(&searches).into();
    std::fs::write(&m, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    fails(
        &bench_env(&merge, b.path(), &[]),
        1,
        &["false_elections = ", "merge refused"],
    );
    assert!(
        !b.path().join("u").exists(),
        "a refused merge wrote its output"
    );
    let mut four = base.to_vec();
    four.extend(["--shard", "4/4", "--out", "s4"]);
    usage(
        &bench_env(&four, b.path(), &[]),
        &["--shard 4/4", "3 protocol(s) make at most 3 shard(s)"],
    );
}
