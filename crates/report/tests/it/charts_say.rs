//! Issue #48, "the grades, columns and charts say what they measure", for the charts: a series
//! measured at one cluster size is never drawn as a line against size (the caption says what
//! was left out), every bar names its series, a chart's numbers round as the text's, and a
//! sequence chart starts shortly before the fault.

use crate::common;

use std::fs;

use election_report::{render_report, render_trace, ReportOptions, TraceFormat, TraceMeta};

fn text_only() -> ReportOptions {
    ReportOptions {
        png: false,
        ..ReportOptions::default()
    }
}

/// The synthetic trials with every protocol but the first kept at one size only.
fn one_size_but(keep_all: Option<&str>) -> Vec<common::Trial> {
    common::trials()
        .into_iter()
        .filter(|t| {
            if Some(t.protocol.as_str()) == keep_all {
                return true;
            }
            let k = common::PROTOCOLS
                .iter()
                .position(|p| *p == t.protocol)
                .unwrap();
            t.nodes == common::SIZES[k % common::SIZES.len()]
        })
        .collect()
}

#[test]
fn a_series_at_one_size_is_not_drawn_against_size() {
    let base = common::scratch("charts-say-one-size");
    let results = common::write_results(&base.join("results"), &one_size_but(Some("bully")));
    let out = base.join("report");
    let o = render_report(&results, &out, &text_only(), None).unwrap();
    let fail = o
        .charts
        .iter()
        .find(|c| c.stem == "failover_vs_nodes")
        .expect("bully ran every size: its panels are drawn");
    let svg = fs::read_to_string(out.join(&fail.svg)).unwrap();
    assert!(svg.contains("bully · "), "bully's panels are missing");
    for p in ["ring", "raft"] {
        assert!(
            !svg.contains(&format!("\n{p} · ")),
            "{p} ran one size but has a panel against size"
        );
    }
    assert!(
        fail.caption
            .contains("Left out, each protocol and scenario measured at one cluster size only"),
        "{}",
        fail.caption
    );
    assert!(
        fail.caption.contains("`ring · leader-crash (n = 5)`"),
        "{}",
        fail.caption
    );
}

#[test]
fn a_sweep_with_no_series_at_two_sizes_draws_no_chart_against_size() {
    let base = common::scratch("charts-say-no-size");
    let results = common::write_results(&base.join("results"), &one_size_but(None));
    let out = base.join("report");
    let o = render_report(&results, &out, &text_only(), None).unwrap();
    for stem in ["failover_vs_nodes", "messages_vs_nodes"] {
        assert!(
            o.charts.iter().all(|c| c.stem != stem),
            "{stem} drawn with one size per series"
        );
        assert!(!out.join(format!("charts/{stem}.svg")).exists());
    }
    let cdf = o.charts.iter().find(|c| c.stem == "failover_cdf").unwrap();
    assert!(
        cdf.caption.contains(
            "No chart of election messages or failover time against cluster size is drawn"
        ),
        "{}",
        cdf.caption
    );
}

/// How often `\n{label} · ` (a bar's label) occurs in an SVG.
fn bar_labels(svg: &str, label: &str) -> usize {
    svg.matches(&format!("\n{label} · ")).count()
}

#[test]
fn every_bar_names_its_series() {
    let base = common::scratch("charts-say-bars");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    // Every protocol ran every scenario at n = 5: one bar each per scenario.
    let unavail = fs::read_to_string(out.join("charts/unavailability.svg")).unwrap();
    for p in common::PROTOCOLS {
        assert_eq!(
            bar_labels(&unavail, p),
            common::SCENARIOS.len(),
            "unavailability: {p}'s bars are not all labelled"
        );
    }
    // Split brain: one scenario split, two panels (rate, duration) without a workload.
    let split = fs::read_to_string(out.join("charts/split_brain.svg")).unwrap();
    for p in common::PROTOCOLS {
        assert_eq!(
            bar_labels(&split, p),
            2,
            "split brain: {p}'s bars are not all labelled"
        );
    }
    let changes = fs::read_to_string(out.join("charts/leader_changes.svg")).unwrap();
    for p in common::PROTOCOLS {
        assert!(
            bar_labels(&changes, p) > 0,
            "leader changes: {p} unlabelled"
        );
    }
}

#[test]
fn a_bar_prints_the_number_the_text_prints() {
    let base = common::scratch("charts-say-rounding");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    let md = fs::read_to_string(out.join("REPORT.md")).unwrap();
    let split = fs::read_to_string(out.join("charts/split_brain.svg")).unwrap();
    let unavail = fs::read_to_string(out.join("charts/unavailability.svg")).unwrap();
    // The guide's availability line: "`raft` ([250 ms on average](…)), at the price of split
    // brain in [33.3% of trials, 500 ms on average](…); `bully` (…"
    let line = md
        .lines()
        .find(|l| l.contains("are unavailable least: "))
        .expect("no availability line in REPORT.md");
    let (_, list) = line.split_once("are unavailable least: ").unwrap();
    let mut checked = 0;
    for item in list.split("; ") {
        let protocol = item.split('`').nth(1).unwrap();
        let between = |a: &str, b: &str| {
            item.split_once(a)
                .and_then(|(_, r)| r.split_once(b))
                .map(|(v, _)| v.to_string())
        };
        let down = between("([", " ms on average").unwrap();
        assert!(
            unavail.contains(&format!("\n{protocol} · {down} ms\n")),
            "the text says {protocol} is unavailable {down} ms; the chart does not"
        );
        checked += 1;
        if let Some(rate) = between("split brain in [", " of trials, ") {
            let ms = between(" of trials, ", " ms on average").unwrap();
            assert!(
                split.contains(&format!("\n{protocol} · {rate}\n")),
                "the text says {protocol} split in {rate} of trials; the chart does not"
            );
            assert!(
                split.contains(&format!("\n{protocol} · {ms} ms\n")),
                "the text says {protocol} split for {ms} ms; the chart does not"
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "too few quoted numbers checked: {checked}");
}

#[test]
fn a_real_trace_starts_within_a_detection_window_before_the_fault() {
    let t = common::run_traced("raft", 5, "leader-crash", 11);
    let meta = TraceMeta::from_metrics("raft", "leader-crash", "lan", 11, &t.metrics);
    let mm = render_trace(&t.events, 5, &meta, TraceFormat::Mermaid).unwrap();
    let note = mm
        .lines()
        .find(|l| l.contains("boot election and steady state, 0 ms to"))
        .unwrap_or_else(|| panic!("no boot-election note:\n{mm}"));
    let lead: f64 = note
        .split("the chart starts ")
        .nth(1)
        .and_then(|r| r.split(" ms before t0").next())
        .unwrap()
        .parse()
        .unwrap();
    // The default detection window: detect_timeout_ms 150 + detect_jitter_ms 150.
    assert!(lead > 0.0 && lead <= 300.0, "starts {lead} ms before t0");
    assert!(
        mm.contains("CONVERGED"),
        "the election after the fault is cut"
    );
}

/// A bar of exactly zero draws nothing, so its label says what the text says of a zero:
/// `none` (the matrix's word for `0% of trials`), never a bare `· 0%` or `· 0 ms` beside the
/// axis that reads like a bar too short to see; a non-zero bar keeps its number.
#[test]
fn a_zero_bar_reads_none() {
    let base = common::scratch("charts-say-zero");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    let split = fs::read_to_string(out.join("charts/split_brain.svg")).unwrap();
    // PreVote+CheckQuorum never split: its rate bar and its duration bar are both zero.
    assert_eq!(
        split
            .matches("\nraft+pre_vote+check_quorum · none\n")
            .count(),
        2,
        "the zero split bars do not read none"
    );
    // Raft split in a third of the trials: its bars quote their numbers.
    assert!(
        split.contains("\nraft · 33.3%\n"),
        "raft's rate bar lost its number"
    );
    let unavail = fs::read_to_string(out.join("charts/unavailability.svg")).unwrap();
    for (chart, svg) in [("split brain", &split), ("unavailability", &unavail)] {
        for zero in [" · 0%\n", " · 0 ms\n", " · 0\n"] {
            assert!(
                !svg.contains(zero),
                "{chart}: a zero bar reads {:?}",
                zero.trim()
            );
        }
    }
    // The text gives the same zero the same word.
    let md = fs::read_to_string(out.join("REPORT.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| `raft+pre_vote+check_quorum` |"))
        .expect("no matrix row for raft+pre_vote+check_quorum");
    assert!(row.contains("0% of trials"), "{row}");
    assert!(row.contains("**none**"), "{row}");
}
