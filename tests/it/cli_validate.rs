//! End-to-end tests of `validate`: every case passes quickly; cases are selected by name.

use crate::common;

use common::{bench, fails, ok};

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
