//! Prose that cannot contradict the tables (issue #30): on a real sweep of four protocols,
//! every number the report quotes inside a link to a summary table is a number of that table
//! rounded by the report's one rounding rule (never a number from another table, another
//! scenario or another rounding), every link lands on a table, and ties are said as ties.
//!
//! Set `ELECTION_BENCH_CHECK_REPORT=DIR` to check a generated report directory as well (for
//! instance a scratch regeneration of `reports/default`).

use crate::common;

use std::fs;
use std::path::Path;

use election_report::doc::anchor as slug;
use election_report::{render_report, ReportOptions};
use election_runner::SweepSpec;

/// The numbers of each `#### Table: ...` of the appendix, by anchor: every cell, interval
/// cells (`0–0.018845`) split into their bounds.
fn tables(appendix: &str) -> Vec<(String, Vec<f64>)> {
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in appendix.lines() {
        if let Some(h) = line.strip_prefix("#### ") {
            if h.starts_with("Table") {
                out.push((slug(h), Vec::new()));
                current = Some(out.len() - 1);
            } else {
                current = None;
            }
            continue;
        }
        if line.starts_with('#') {
            current = None;
            continue;
        }
        let Some(i) = current else { continue };
        if !line.starts_with('|') {
            continue;
        }
        for cell in line.split('|') {
            for part in cell.trim().split('–') {
                if let Ok(v) = part.trim().parse::<f64>() {
                    out[i].1.push(v);
                }
            }
        }
    }
    out
}

/// `[text](target)` links of a Markdown text (no nesting), in order.
fn links(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = md;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find("](") else { break };
        let text = &after[..close];
        if text.contains('[') {
            rest = &rest[open + 1..];
            continue;
        }
        let tail = &after[close + 2..];
        let Some(end) = tail.find(')') else { break };
        out.push((text.to_string(), tail[..end].to_string()));
        rest = &tail[end..];
    }
    out
}

/// A number quoted in prose: its value and how far a table value may be from it and still
/// round to it (half a unit of its last digit; a whole number with trailing zeros, like
/// 2500, is rounded to its last non-zero digit).
fn quoted(text: &str) -> Vec<(f64, f64, String)> {
    let mut out = Vec::new();
    // Code spans (scenario names, seeds) are names, not quoted statistics.
    let plain: String = text
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(" ");
    let chars: Vec<char> = plain.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // Part of a name (p95, n3): not a number.
        if i > 0 && chars[i - 1].is_alphabetic() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
            i += 1;
        }
        let tok: String = chars[start..i].iter().collect();
        let tok = tok.trim_end_matches('.');
        let before: String = chars[start.saturating_sub(4)..start].iter().collect();
        let next = chars.get(i).copied();
        // Sizes (n = 5), exponents (n^1.39) and ratios (2.4×) are not table values.
        if before.ends_with("n = ") || before.ends_with('^') || next == Some('×') {
            continue;
        }
        let Ok(mut v) = tok.parse::<f64>() else {
            continue;
        };
        let mut tol = match tok.split_once('.') {
            Some((_, d)) => 0.5 * 10f64.powi(-(d.len() as i32)),
            None => {
                let zeros = tok.len() - tok.trim_end_matches('0').len();
                let zeros = if v == 0.0 { 0 } else { zeros };
                0.5 * 10f64.powi(zeros as i32)
            }
        };
        if next == Some('%') {
            v /= 100.0;
            tol /= 100.0;
        }
        out.push((v, tol + 1e-9, tok.to_string()));
    }
    out
}

/// Every problem with the quoted numbers and links of `dir/REPORT.md` against
/// `dir/APPENDIX.md`.
fn problems(dir: &Path) -> Vec<String> {
    let report = fs::read_to_string(dir.join("REPORT.md")).unwrap();
    let appendix = fs::read_to_string(dir.join("APPENDIX.md")).unwrap();
    let tables = tables(&appendix);
    let mut bad = Vec::new();
    let mut checked = 0;
    for (text, target) in links(&report) {
        let Some(anchor) = target.strip_prefix("APPENDIX.md#table-") else {
            continue;
        };
        let anchor = format!("table-{anchor}");
        let Some((_, values)) = tables.iter().find(|(a, _)| *a == anchor) else {
            bad.push(format!("[{text}]({target}): no such table in APPENDIX.md"));
            continue;
        };
        for (q, tol, tok) in quoted(&text) {
            checked += 1;
            if !values.iter().any(|v| (v - q).abs() <= tol) {
                bad.push(format!(
                    "[{text}]({target}): {tok} is not a value of the table rounded (±{tol})"
                ));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} quoted numbers found in {}",
        dir.display()
    );
    bad
}

#[test]
fn every_quoted_number_is_in_the_table_it_links() {
    let base = common::scratch("quoted-numbers");
    let results = base.join("results");
    let spec = SweepSpec {
        name: Some("quoted".into()),
        protocols: Some(vec![
            "bully".into(),
            "raft".into(),
            "raft+pre_vote+check_quorum".into(),
            "lease".into(),
        ]),
        nodes: Some(vec![3, 5, 7]),
        scenarios: Some(vec![
            "leader-crash".into(),
            "partition-leader-minority".into(),
            "leader-recovers".into(),
            "leader-pause".into(),
        ]),
        seeds: Some(12),
        ..SweepSpec::default()
    };
    common::run_small_sweep(&spec, &results, "election-bench sweep --name quoted");
    let out = base.join("report");
    let opts = ReportOptions {
        png: false,
        ..ReportOptions::default()
    };
    render_report(&results, &out, &opts, None).unwrap();
    let bad = problems(&out);
    assert!(bad.is_empty(), "{}", bad.join("\n"));

    // Ties: a tie is said as one, naming every protocol in it.
    let md = fs::read_to_string(out.join("REPORT.md")).unwrap();
    for (i, _) in md.match_indices(" (tied: their 95 % intervals overlap)") {
        let before = &md[..i];
        assert!(
            before.ends_with('`'),
            "a tie after no protocol: {}",
            &before[i.saturating_sub(80)..]
        );
        let start = before.len().saturating_sub(200);
        assert!(
            before[start..].contains("` and `"),
            "a tie that names one protocol: {}",
            &before[start..]
        );
    }

    if let Ok(dir) = std::env::var("ELECTION_BENCH_CHECK_REPORT") {
        let bad = problems(Path::new(&dir));
        assert!(bad.is_empty(), "{dir}:\n{}", bad.join("\n"));
    }
}

#[test]
fn quoted_numbers_round_as_the_report_rounds() {
    let q =
        quoted("[p95 2500, 0.04 stale + 12.9 fenced writes, 98.1% of trials](x) `seed 7` n = 5");
    let got: Vec<(f64, f64)> = q.iter().map(|(v, t, _)| (*v, *t)).collect();
    let want = [(2500.0, 50.0), (0.04, 0.005), (12.9, 0.05), (0.981, 0.0005)];
    assert_eq!(got.len(), want.len(), "{q:?}");
    for ((v, t), (wv, wt)) in got.iter().zip(want) {
        assert!((v - wv).abs() < 1e-12 && (t - wt).abs() < 1e-6, "{v} ±{t}");
    }
    // A ratio is not a table value.
    assert!(quoted("2424× fewer").is_empty());
}
