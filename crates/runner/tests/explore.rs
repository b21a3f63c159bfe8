//! `explore` end to end on 3 nodes: the files, their determinism across thread counts and a
//! resumed run, and that a failing pattern replays to the same verdict by its scenario name.

use election_runner::explore::{self, ExploreOptions, Pattern};
use election_runner::SweepSpec;

fn opts(dir: &std::path::Path, jobs: usize, resume: bool) -> ExploreOptions {
    ExploreOptions {
        cells: explore::cells(&["raft".into(), "bully".into()], &[3], &[]).unwrap(),
        seeds: 2,
        sample: 10,
        out: dir.to_path_buf(),
        resume,
        progress: false,
        jobs: Some(jobs),
    }
}

#[test]
fn explore_three_nodes_is_deterministic_resumable_and_replayable() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let o = explore::explore(&opts(a.path(), 1, false)).unwrap();
    explore::explore(&opts(b.path(), 2, false)).unwrap();
    let read = |d: &std::path::Path, f: &str| std::fs::read(d.join(f)).unwrap();
    for f in ["patterns.csv", "summary.csv", "failing.csv"] {
        assert_eq!(
            read(a.path(), f),
            read(b.path(), f),
            "{f}: threads change nothing"
        );
    }
    // Summary: 3 nodes, symmetric (8 patterns) and directed (64), per protocol.
    assert_eq!(o.summary.len(), 4);
    for r in &o.summary {
        let patterns: u64 = r[4].parse().unwrap();
        let run: u64 = r[5].parse().unwrap();
        let by_verdict: u64 = r[7..12].iter().map(|v| v.parse::<u64>().unwrap()).sum();
        assert_eq!(patterns, if r[2] == "3s-all" { 8 } else { 64 });
        assert_eq!(by_verdict, run, "every pattern run has one verdict");
        // Cutting nothing leaves a majority; cutting every link does not.
        assert!(run < patterns && run > 0);
        assert_eq!(
            r[11], "0",
            "a pattern with a connected majority is never minority-only"
        );
    }
    assert_eq!(o.trials_run, 2 * 2 * (7 + 37));
    // A resumed run keeps every chunk and writes the same bytes.
    let again = explore::explore(&opts(a.path(), 2, true)).unwrap();
    assert_eq!(again.trials_run, 0);
    assert_eq!(
        read(a.path(), "patterns.csv"),
        read(b.path(), "patterns.csv")
    );
    // A damaged chunk is recomputed, not trusted.
    let chunk = std::fs::read_dir(a.path().join("chunks"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&chunk, "garbage\n").unwrap();
    let fixed = explore::explore(&opts(a.path(), 2, true)).unwrap();
    assert!(fixed.trials_run > 0);
    assert_eq!(
        read(a.path(), "patterns.csv"),
        read(b.path(), "patterns.csv")
    );
    // Every failing row replays by name to the verdict it records.
    let failing = String::from_utf8(read(a.path(), "failing.csv")).unwrap();
    let mut rows = failing.lines().skip(1).peekable();
    assert!(
        rows.peek().is_some(),
        "3-node patterns include liveness failures"
    );
    for line in rows.take(5) {
        let f: Vec<&str> = line.split(',').collect();
        let (proto, pattern, verdict, seed) = (f[0], f[3], f[5], f[6]);
        assert!(Pattern::parse(pattern).is_some());
        let plan = SweepSpec::from_toml(&format!(
            "protocols=[\"{proto}\"]\nnodes=[3]\nscenarios=[\"{pattern}\"]\nseeds=1\n\
             [params]\nhorizon_ms=10000\n\"workload.interval_ms\"=0"
        ))
        .unwrap()
        .plan()
        .unwrap();
        let run = plan.cells().unwrap()[0]
            .run(seed.parse().unwrap(), false)
            .unwrap();
        assert_eq!(run.row.outcome.name(), verdict, "{line}");
        assert!(run.row.outcome.is_failure());
    }
}

#[test]
fn a_pattern_refuses_another_cluster_size() {
    let plan = SweepSpec::from_toml(
        "protocols=[\"raft\"]\nnodes=[5]\nscenarios=[\"pattern-3d-21\"]\nseeds=1",
    )
    .unwrap()
    .plan()
    .unwrap();
    let cell = &plan.cells().unwrap()[0];
    assert!(cell.skipped.as_deref().unwrap().contains("exactly 3 nodes"));
}
