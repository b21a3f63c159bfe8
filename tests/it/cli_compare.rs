//! End-to-end tests of `compare`: a real change found with its sign, none between identical
//! runs, directories it cannot match, and `--ignore`.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Output;

use common::{bench, fails, ok};

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
    // In criterion's words: a slower failover regressed; the other way round it improved.
    let rows_saying = |out: &str, w: &str| {
        out.lines()
            .filter(|l| l.ends_with(&format!("  {w}")))
            .count()
    };
    assert!(
        rows_saying(&out, "regressed") == 2 && rows_saying(&out, "improved") == 0,
        "{out}"
    );
    assert!(out.contains(", 0 improved"), "{out}");
    let back = ok(&bench(&["compare", "b", "a", "--out", "faster"], d.path()));
    assert!(
        rows_saying(&back, "improved") == 2 && rows_saying(&back, "regressed") == 0,
        "{back}"
    );
    assert!(back.contains(": 0 regressed, "), "{back}");
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
