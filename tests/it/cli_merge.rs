//! End-to-end tests of `merge`: shards merged equal the unsharded sweep; merge refuses to
//! overwrite, checks values and recomputes the summary.

use crate::common;

use std::fs;

use common::{bench, corrupt, fails, ok, rehash, same_files, tiny};

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
