//! The report end to end on a small synthetic sweep: every chart is written, the tables repeat
//! the summary's numbers exactly, the prose follows the data, the output is deterministic and
//! bad inputs are refused with errors that say what is wrong.

use crate::common;

use std::fs;
use std::path::Path;

use election_report::data::{CellKey, TrialRow};
use election_report::{render_report, ReportError, ReportOptions, Results};

/// Without PNGs: rasterising is the slow part of a debug build, and these tests read text.
fn text_only() -> ReportOptions {
    ReportOptions {
        png: false,
        ..ReportOptions::default()
    }
}

fn report_text(dir: &Path) -> String {
    fs::read_to_string(dir.join("REPORT.md")).unwrap()
}

fn appendix_text(dir: &Path) -> String {
    fs::read_to_string(dir.join("APPENDIX.md")).unwrap()
}

#[test]
fn every_chart_is_written_and_embedded() {
    let base = common::scratch("charts");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    let o = render_report(&results, &out, &ReportOptions::default(), None).unwrap();
    assert_eq!(o.charts.len(), 6);
    let md = report_text(&out);
    for c in &o.charts {
        for f in [Some(&c.svg), c.png.as_ref()].into_iter().flatten() {
            let p = out.join(f);
            let len = fs::metadata(&p).unwrap().len();
            assert!(len > 2000, "{} is only {len} bytes", p.display());
        }
        assert!(
            md.contains(c.svg.as_str()),
            "REPORT.md does not embed {}",
            c.svg
        );
        let png = fs::read(out.join(c.png.as_ref().unwrap())).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let svg = fs::read_to_string(out.join(&c.svg)).unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains(&c.title), "{} lacks its title", c.svg);
    }
    // Axis descriptions carry units; legends name every protocol.
    let svg = fs::read_to_string(out.join("charts/messages_vs_nodes.svg")).unwrap();
    for p in common::PROTOCOLS {
        assert!(svg.contains(&format!("\n{p}\n")), "legend lacks {p}");
    }
    // Failover against size: small multiples, a panel per protocol and scenario, no overlaid
    // bands, the axis named after its column.
    let svg = fs::read_to_string(out.join("charts/failover_vs_nodes.svg")).unwrap();
    assert!(svg.contains("failover_ms (ms)"));
    for p in common::PROTOCOLS {
        for sc in ["lc", "lcld"] {
            assert!(
                svg.contains(&format!("\n{p} · {sc}\n")),
                "no small panel of {p} in {sc}"
            );
        }
    }
    // The same colour for the same protocol in two charts.
    let raft = election_report::palette::protocol_colour("raft")
        .hex()
        .to_uppercase();
    for f in ["charts/messages_vs_nodes.svg", "charts/split_brain.svg"] {
        let s = fs::read_to_string(out.join(f)).unwrap().to_uppercase();
        assert!(s.contains(&raft), "{f} does not use raft's colour {raft}");
    }
    assert!(md.contains("_Traces were not generated"));
}

/// Every table cell of a cell that ran equals the summary file's text.
#[test]
fn report_numbers_equal_the_summary_csv() {
    let base = common::scratch("numbers");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    let md = appendix_text(&out);
    let summary = fs::read_to_string(results.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut checked = 0;
    for line in lines {
        let v: Vec<&str> = line.split(',').collect();
        if !v[col("skipped")].is_empty() {
            let row = md
                .lines()
                .find(|l| {
                    l.starts_with(&format!("| `{}` | {} |", v[0], v[1])) && l.contains("skipped")
                })
                .expect("skipped row in the report");
            assert!(row.contains(v[col("skipped")]));
            continue;
        }
        // Find the scenario's table, then the row.
        let table_start = md
            .find(&format!("#### Table: {}\n", v[col("scenario")]))
            .expect("table per scenario");
        let row = md[table_start..]
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` | {} |", v[0], v[1])))
            .expect("row per cell");
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | protocol | n | trials | converged | elect p50 | elect p95 | elect p99 | elect max |
        //   (after trials: measured)
        //   msgs mean | msgs p95 | split rate | CI | split ms | minority | unavailable |
        //   leader changes | detect p50 | same-epoch |
        let expect = [
            ("trials", 3),
            ("measured", 4),
            ("converged_rate", 5),
            ("elect_ms_p50", 6),
            ("elect_ms_p95", 7),
            ("elect_ms_p99", 8),
            ("elect_ms_max", 9),
            ("msgs_election_mean", 10),
            ("msgs_election_p95", 11),
            ("split_brain_rate", 12),
            ("split_brain_ms_mean", 14),
            ("minority_leader_ms_mean", 15),
            ("unavailable_ms_mean", 16),
            ("leader_changes_mean", 17),
            ("detect_ms_p50", 18),
            ("same_epoch_leaders_max", 19),
        ];
        for (name, i) in expect {
            let want = v[col(name)];
            let want = if want.is_empty() { "–" } else { want };
            assert_eq!(cells[i], want, "{name} of {line}");
        }
        assert_eq!(
            cells[13],
            format!(
                "{}–{}",
                v[col("split_brain_ci_lo")],
                v[col("split_brain_ci_hi")]
            )
        );
        checked += 1;
    }
    assert_eq!(checked, 4 * 5 * 3);
}

/// The guide (section 2) and the findings (section 3) of the report in `dir`, then the
/// appendix's further findings (section D).
fn findings(dir: &Path) -> String {
    let md = report_text(dir);
    let a = md.find("## 2. Protocol-choice guide").unwrap();
    let b = md.find("## 4. Charts").unwrap();
    let app = appendix_text(dir);
    let c = app.find("## D. More findings").unwrap();
    let d = app.find("## E. Summary tables").unwrap();
    format!("{}{}", &md[a..b], &app[c..d])
}

#[test]
fn findings_are_computed_from_the_data() {
    let base = common::scratch("findings");
    let opts = text_only();
    let trials = common::trials();
    let r1 = common::write_results(&base.join("r1"), &trials);
    render_report(&r1, &base.join("o1"), &opts, None).unwrap();
    let before = findings(&base.join("o1"));
    // Bully's lowest-detects cost at n = 7 is 1.5 n² + seed % 3 (mean 74.5); raft's is 2(n-1) +
    // seed % 4 (mean 13.5).
    assert!(
        before.contains("At n = 7 in `leader-crash-lowest-detects`, `bully` sent 5.5× the election messages of `raft`"),
        "{before}"
    );
    assert!(before.contains("`raft+pre_vote+check_quorum` never had two acting leaders at once"));
    assert!(before
        .contains("No trial of any protocol ever had two live leaders claiming the same epoch"));
    // The guide names the only protocol without split brain in the partition scenario.
    assert!(
        before.contains("choose `raft+pre_vote+check_quorum` — split-brain rate 0"),
        "{before}"
    );

    // Change the data: raft+pre_vote+check_quorum now splits too, and bully sends 10× more.
    let mut changed = trials.clone();
    for t in &mut changed {
        if t.protocol == "raft+pre_vote+check_quorum"
            && t.scenario == "partition-leader-minority"
            && t.seed == 1
        {
            t.split_brain = true;
            t.split_brain_ms = 40.0;
        }
        if t.protocol == "bully" && t.scenario == "leader-crash-lowest-detects" {
            t.msgs_election *= 10;
        }
        if t.protocol == "raft" && t.scenario == "leader-crash" && t.nodes == 5 && t.seed == 2 {
            t.same_epoch = 1;
        }
    }
    let r2 = common::write_results(&base.join("r2"), &changed);
    render_report(&r2, &base.join("o2"), &opts, None).unwrap();
    let after = findings(&base.join("o2"));
    assert_ne!(before, after);
    assert!(
        after.contains("`bully` sent 54.8× the election messages of `raft`"),
        "{after}"
    );
    assert!(
        after.contains("In `partition-leader-minority` at n = 5, every protocol had split brain"),
        "{after}"
    );
    // The anomaly comes first among the findings, with its seed and the replay command.
    let first = after[after.find("## 3. Findings").unwrap()..]
        .lines()
        .find(|l| l.starts_with("- "))
        .unwrap();
    assert!(
        first.starts_with("- **Safety violation**: two live leaders claimed the same epoch or term in 1 cells, for `raft`."),
        "{first}"
    );
    assert!(
        first.contains("(seeds 2; replay: `election-bench trace --protocol raft --nodes 5 --scenario leader-crash"),
        "{first}"
    );
    assert!(
        after.contains("no protocol of this sweep avoided split brain"),
        "{after}"
    );
}

#[test]
fn identical_results_give_identical_output() {
    let base = common::scratch("determinism");
    let results = common::write_results(&base.join("results"), &common::trials());
    let opts = ReportOptions::default();
    let a = render_report(&results, &base.join("a"), &opts, None).unwrap();
    render_report(&results, &base.join("b"), &opts, None).unwrap();
    assert_eq!(report_text(&base.join("a")), report_text(&base.join("b")));
    for f in &a.files {
        let rel = f.strip_prefix(base.join("a")).unwrap();
        assert_eq!(
            fs::read(f).unwrap(),
            fs::read(base.join("b").join(rel)).unwrap(),
            "{} differs between runs",
            rel.display()
        );
    }
    // No absolute paths leak into the report.
    assert!(!report_text(&base.join("a")).contains(base.to_str().unwrap()));
}

#[test]
fn traces_are_embedded_when_a_tracer_is_given() {
    let base = common::scratch("traces");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    let tracer = common::tracer;
    let o = render_report(&results, &out, &text_only(), Some(&tracer)).unwrap();
    let md = report_text(&out);
    let (timelines, traces): (Vec<_>, Vec<_>) = o
        .files
        .iter()
        .filter(|f| f.strip_prefix(&out).unwrap().starts_with("traces"))
        .partition(|f| f.to_string_lossy().ends_with("-timeline.svg"));
    // One representative leader-crash trial per protocol, the worst split brain, and the first
    // liveness failure (the fixture's trials that do not converge are `no-leader`; none is a
    // livelock).
    assert_eq!(traces.len(), common::PROTOCOLS.len() + 2, "{traces:?}");
    // The worst and the failing ones are also drawn over time, next to their traces.
    assert_eq!(timelines.len(), 2, "{timelines:?}");
    for t in &timelines {
        let rel = t.strip_prefix(&out).unwrap().to_string_lossy().to_string();
        let trace = rel.replace("-timeline.svg", ".svg");
        let (at_trace, at_timeline) = (md.find(&trace), md.find(&rel));
        assert!(
            at_trace.is_some() && at_trace < at_timeline,
            "{rel} is not embedded after its trace"
        );
    }
    let no_leader = common::trials()
        .into_iter()
        .find(|t| !t.converged && t.nodes <= text_only().max_trace_nodes)
        .unwrap();
    // The worst and failing trials are in REPORT.md; the representative ones in the appendix.
    let appendix = fs::read_to_string(out.join("APPENDIX.md")).unwrap();
    for t in &traces {
        let rel = t.strip_prefix(&out).unwrap().to_string_lossy().to_string();
        assert!(
            md.contains(&rel) || appendix.contains(&rel),
            "{rel} is embedded nowhere"
        );
        assert!(
            fs::read_to_string(t).unwrap().contains("CONVERGED")
                || rel.contains("partition")
                || rel.contains(&no_leader.scenario)
        );
    }
    assert!(md.contains("Worst split brain of `partition-leader-minority`"));
    assert!(md.contains(&format!(
        "Liveness failure (`no-leader`): `{}` — `{}`, n = {}",
        no_leader.protocol, no_leader.scenario, no_leader.nodes
    )));
    assert!(!md.contains("Liveness failure (`livelock`)"));
    // The synthetic numbers are not what the real protocols do: the report says so.
    assert!(!o.warnings.is_empty());
    assert!(md.contains("disagrees with trials.csv"));
}

#[test]
fn a_missing_results_directory_is_named() {
    let base = common::scratch("missing");
    let err = render_report(&base.join("nope"), &base.join("out"), &text_only(), None).unwrap_err();
    assert!(matches!(err, ReportError::MissingResults(_)));
    assert!(err.to_string().contains("nope"));
    assert!(err.to_string().contains("does not exist"));
}

#[test]
fn a_file_of_another_schema_names_the_missing_column() {
    let base = common::scratch("schema");
    let results = common::write_results(&base.join("results"), &common::trials());
    let s = fs::read_to_string(results.join("summary.csv")).unwrap();
    fs::write(
        results.join("summary.csv"),
        s.replacen("split_brain_rate", "splitbrain", 1),
    )
    .unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(
        matches!(&err, ReportError::Schema { column, .. } if column == "split_brain_rate"),
        "{err}"
    );
    assert!(err
        .to_string()
        .contains("missing column `split_brain_rate`"));

    fs::write(results.join("summary.csv"), s).unwrap();
    fs::write(results.join("trials.csv"), "a,b,c\n1,2,3\n").unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(err.to_string().contains("trials.csv"), "{err}");
    assert!(err.to_string().contains("missing column `mode`"), "{err}");
}

#[test]
fn a_bad_cell_names_line_column_and_value() {
    let base = common::scratch("badcell");
    let results = common::write_results(&base.join("results"), &common::trials());
    let t = fs::read_to_string(results.join("trials.csv")).unwrap();
    let mut lines: Vec<String> = t.lines().map(String::from).collect();
    lines[3] = lines[3].replacen(",true,", ",maybe,", 1);
    // A second bad row further down: the rows are parsed in parallel, and the error must
    // still be the first bad line's.
    let last = lines.len() - 1;
    assert!(last > 3, "the fixture has rows after line 4");
    let before = lines[last].clone();
    lines[last] = lines[last].replacen(",true,", ",never,", 1);
    lines[last] = lines[last].replacen(",false,", ",never,", 1);
    assert_ne!(lines[last], before, "the last row has a boolean to spoil");
    fs::write(results.join("trials.csv"), lines.join("\n")).unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("line 4") && msg.contains("`converged`") && msg.contains("\"maybe\""),
        "{msg}"
    );
}

#[test]
fn an_empty_sweep_is_refused() {
    let base = common::scratch("empty");
    let results = base.join("results");
    fs::create_dir_all(&results).unwrap();
    common::write_results(&results, &[]);
    // write_results adds one skipped cell: nothing ran.
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(matches!(err, ReportError::EmptySweep { .. }), "{err}");
    assert!(
        err.to_string().contains("partition needs at least 3 nodes"),
        "{err}"
    );

    fs::write(
        results.join("summary.csv"),
        format!("{}\n", common::summary_header()),
    )
    .unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(err.to_string().contains("no cells"), "{err}");
}

#[test]
fn a_manifest_from_another_tool_is_refused() {
    let base = common::scratch("manifest");
    let results = common::write_results(&base.join("results"), &common::trials());
    fs::write(results.join("manifest.json"), r#"{"tool":"other"}"#).unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(matches!(err, ReportError::Manifest { .. }), "{err}");
    fs::remove_file(results.join("manifest.json")).unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(matches!(err, ReportError::MissingFile(_)), "{err}");
}

/// A sweep that varies a Raft parameter: every row is in the tables, Raft gets one series per
/// value, and protocols the parameter does not apply to keep a single series.
#[test]
fn a_varied_parameter_gives_one_series_per_value() {
    let base = common::scratch("varied");
    let results = common::write_results(&base.join("results"), &common::trials());
    common::vary(&results, "raft.timeout_ms", &["150-300", "300-600"]);
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    let md = appendix_text(&out);
    for p in common::PROTOCOLS {
        for v in ["150-300", "300-600"] {
            for n in common::SIZES {
                let row = format!("| `{p} (raft.timeout_ms={v})` | {n} |");
                assert!(md.contains(&row), "no table row {row}");
            }
        }
    }
    let cdf = fs::read_to_string(out.join("charts/failover_cdf.svg")).unwrap();
    assert!(cdf.contains("\nraft (raft.timeout_ms=300-600)\n"));
    assert!(cdf.contains("\nbully\n"), "bully should keep one series");
    assert!(!cdf.contains("bully (raft.timeout_ms"));
    assert!(md.contains("| `raft.timeout_ms` |") || md.contains("raft.timeout_ms"));
}

/// Rewrite one cell of `file` (line `line`, 1-based, the header is 1; column by name).
fn set_cell(results: &Path, file: &str, line: usize, column: &str, value: &str) {
    let p = results.join(file);
    let text = fs::read_to_string(&p).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let col = lines[0].split(',').position(|c| c == column).unwrap();
    let mut cells: Vec<&str> = lines[line - 1].split(',').collect();
    cells[col] = value;
    lines[line - 1] = cells.join(",");
    fs::write(&p, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_summary_that_contradicts_the_manifest_or_its_trials_is_refused() {
    let base = common::scratch("inconsistent");
    let fresh = || {
        let r = base.join("results");
        let _ = fs::remove_dir_all(&r);
        common::write_results(&r, &common::trials())
    };
    let results = fresh();
    let mp = results.join("manifest.json");
    let m = fs::read_to_string(&mp).unwrap();
    let cells: serde_json::Value = serde_json::from_str(&m).unwrap();
    let n = cells["cells"].as_u64().unwrap();
    fs::write(
        &mp,
        m.replace(&format!("\"cells\":{n}"), &format!("\"cells\":{}", n + 1)),
    )
    .unwrap();
    let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
    assert!(matches!(err, ReportError::Inconsistent { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("{} cells", n + 1)) && msg.contains(&format!("has {n}")),
        "{msg}"
    );

    // A cell claiming one trial fewer than trials.csv holds: the totals disagree.
    let results = fresh();
    set_cell(&results, "summary.csv", 2, "trials", "1");
    let msg = render_report(&results, &base.join("out"), &text_only(), None)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("summary.csv counts"), "{msg}");
}

#[test]
fn statistics_out_of_range_name_file_line_column_and_value() {
    let base = common::scratch("ranges");
    for (column, value, says) in [
        ("converged_rate", "1.5", "rate above 1"),
        ("split_brain_ci_lo", "-0.1", "negative"),
        ("split_brain_ci_hi", "0", "below split_brain_rate"),
        ("elect_ms_p5", "1000000", "above elect_ms_p50"),
        ("msgs_election_p99", "1000000", "above msgs_election_max"),
        ("unavailable_ms_mean", "-3", "negative"),
        ("msgs_election_max", "", "empty"),
    ] {
        let results = base.join(column);
        common::write_results(&results, &common::trials());
        // Line 2: the first cell, which ran and has some split brain or not; make its rate
        // positive so an upper bound of 0 is below it.
        if column == "split_brain_ci_hi" {
            set_cell(&results, "summary.csv", 2, "split_brain_rate", "0.5");
            set_cell(&results, "summary.csv", 2, "split_brain_ci_lo", "0.1");
        }
        set_cell(&results, "summary.csv", 2, column, value);
        let err = render_report(&results, &base.join("out"), &text_only(), None).unwrap_err();
        assert!(matches!(err, ReportError::OutOfRange { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("summary.csv, line 2")
                && msg.contains(&format!("`{column}`"))
                && msg.contains(&format!("{value:?}"))
                && msg.contains(says),
            "{column}: {msg}"
        );
    }
}

/// The decision matrix comes first, its concerns read off the scenarios' faults; the at-a-glance
/// table never calls an outage a failover.
#[test]
fn the_matrix_comes_first_and_an_outage_is_not_a_failover() {
    let base = common::scratch("matrix");
    let results = common::write_results(&base.join("results"), &common::trials());
    let out = base.join("report");
    render_report(&results, &out, &text_only(), None).unwrap();
    let md = report_text(&out);
    let first = md.lines().find(|l| l.starts_with("## ")).unwrap();
    assert_eq!(first, "## 1. Decision matrix");
    let header = md
        .lines()
        .find(|l| l.starts_with("| protocol |"))
        .expect("the matrix");
    // The fixture has no workload and no steady window: the fenced-writes, damage and steady
    // traffic columns are left out rather than shown empty; split brain under partition and
    // the safety properties stay.
    assert_eq!(
        header,
        "| protocol | failover p50 / p95 in leader-crash, n = 5 | election messages, n = 7 | one leader per epoch | split brain under partition, n = 5 | liveness | leader changes in recovery and flapping scenarios, n = 5 | depends on |"
    );
    for p in common::PROTOCOLS {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| `{p}` |")))
            .unwrap_or_else(|| panic!("no matrix row for {p}"));
        // Every cell links the appendix table it rests on.
        assert!(row.contains("](APPENDIX.md#table-"), "{row}");
    }
    let appendix = appendix_text(&out);
    let row = appendix
        .lines()
        .find(|l| l.starts_with("| `partition-leader-minority` |"))
        .expect("at-a-glance row");
    assert!(row.contains("no failover: an outage"), "{row}");
    let row = appendix
        .lines()
        .find(|l| l.starts_with("| `leader-crash` |"))
        .expect("at-a-glance row");
    assert!(!row.contains("no failover"), "{row}");
}

#[test]
fn the_liveness_section_counts_outcomes_and_names_each_failing_cell() {
    let base = common::scratch("liveness");
    let trials = common::trials();
    let results = common::write_results(&base.join("results"), &trials);
    render_report(&results, &base.join("out"), &text_only(), None).unwrap();
    let md = report_text(&base.join("out"));
    let appendix = appendix_text(&base.join("out"));
    let section = &appendix[appendix.find("## F. Liveness").expect("a liveness section")..];
    // A headline among the findings.
    let findings = &md[md.find("## 3. Findings").unwrap()..md.find("## 4.").unwrap()];
    assert!(findings.contains("**Liveness failures in "), "{findings}");
    // Every cell with a trial that did not converge has no-leader trials (the fixture's
    // outcome): each is a headline with its first such seed and a replay command.
    let failing: Vec<&common::Trial> = trials.iter().filter(|t| !t.converged).collect();
    assert!(!failing.is_empty());
    for t in failing {
        let first = trials
            .iter()
            .filter(|u| {
                u.protocol == t.protocol
                    && u.nodes == t.nodes
                    && u.scenario == t.scenario
                    && !u.converged
            })
            .map(|u| u.seed)
            .min()
            .unwrap();
        let cmd = format!(
            "`election-bench run -p {} -n {} -s {} --net lan --seed {first}`",
            t.protocol, t.nodes, t.scenario
        );
        assert!(section.contains(&cmd), "{cmd}\n{section}");
    }
    // The table has one row per cell that ran, with counts that add up to its trials.
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| protocol"))
        .collect();
    assert!(!rows.is_empty());
    for r in rows {
        let f: Vec<&str> = r.split('|').map(str::trim).collect();
        let measured: u64 = f[5].parse().unwrap();
        let sum: u64 = f[6..11]
            .iter()
            .map(|v| v.trim_matches('*').parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, measured, "{r}");
    }
}

#[test]
fn the_explore_report_draws_the_smallest_failing_patterns() {
    use election_runner::explore::{self, ExploreOptions};
    let base = common::scratch("explore");
    let results = base.join("results");
    explore::explore(&ExploreOptions {
        cells: explore::cells(&["raft".into()], &[3], &[]).unwrap(),
        set: Vec::new(),
        shard: None,
        seeds: 1,
        sample: 10,
        out: results.clone(),
        resume: false,
        verify_sample: election_runner::sweep::RESUME_SAMPLE,
        progress: false,
        jobs: Some(2),
    })
    .unwrap();
    let out = base.join("report");
    let r = election_report::render_explore(&results, &out, 3, true).unwrap();
    let md = fs::read_to_string(&r.report).unwrap();
    assert!(
        md.contains("| raft | 3 | 3d-all | 64 | 64 | 37 | 1 |"),
        "{md}"
    );
    let failing = fs::read_to_string(results.join("failing.csv")).unwrap();
    let first = failing
        .lines()
        .nth(1)
        .expect("raft has failing 3-node patterns");
    let pattern = first.split(',').nth(3).unwrap();
    assert!(
        md.contains(&format!("`{pattern}`")),
        "the smallest failing pattern is listed"
    );
    for ext in ["svg", "png"] {
        let f = out.join(format!("charts/failing-raft.{ext}"));
        assert!(fs::metadata(&f).unwrap().len() > 1000, "{f:?}");
    }
    assert!(md.contains("![raft: smallest failing patterns](charts/failing-raft.svg)"));
    // A rerun leaves no graph of an earlier run behind.
    let stale = out.join("charts/failing-gone.svg");
    fs::write(&stale, "<svg/>").unwrap();
    election_report::render_explore(&results, &out, 3, true).unwrap();
    assert!(!stale.exists());
    // A count that is not a number is refused by name, never read as 0.
    let sp = results.join("summary.csv");
    let text = fs::read_to_string(&sp).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "no_leader").unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut f: Vec<&str> = lines[1].split(',').collect();
    f[col] = "many";
    lines[1] = f.join(",");
    fs::write(&sp, lines.join("\n") + "\n").unwrap();
    let e = election_report::render_explore(&results, &out, 3, true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("summary.csv")
            && e.contains("line 2")
            && e.contains("`no_leader`")
            && e.contains("\"many\""),
        "{e}"
    );
}

/// `report --baseline DIR`: the report opens with what changed from the baseline, each change
/// with its bootstrap interval, in REPORT.md and index.html, and lists the rest in the
/// appendix; against itself nothing changed.
#[test]
fn a_baseline_puts_the_changes_in_the_page() {
    let base = common::scratch("baseline");
    let before = common::write_results(&base.join("before"), &common::trials());
    let mut slower = common::trials();
    for t in &mut slower {
        if t.protocol == "raft" && t.scenario == "leader-crash" {
            t.elect_ms += 150.0;
            t.unavailable_ms = t.elect_ms;
        }
    }
    let after = common::write_results(&base.join("after"), &slower);
    let out = base.join("report");
    let opts = ReportOptions {
        baseline: Some(before.clone()),
        ..text_only()
    };
    let o = render_report(&after, &out, &opts, None).unwrap();
    assert!(o.files.contains(&out.join("charts/baseline_changes.svg")));
    let md = report_text(&out);
    let section = md
        .split("## Changes against the baseline")
        .nth(1)
        .expect("REPORT.md has no baseline section")
        .split("\n## ")
        .next()
        .unwrap();
    assert!(
        md.find("## Changes against the baseline") < md.find("## 1. Decision matrix"),
        "the changes come first"
    );
    // The three raft leader-crash cells got 150 ms slower: failover and unavailability, each
    // with its interval, and nothing else changed.
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 6, "{section}");
    for n in common::SIZES {
        for metric in ["failover_ms_p50", "unavailable_ms_mean"] {
            let row = rows
                .iter()
                .find(|r| r.contains(&format!("n={n} ")) && r.contains(metric))
                .unwrap_or_else(|| panic!("no {metric} row for n = {n}: {section}"));
            assert!(
                row.contains("`raft ") && row.contains("leader-crash"),
                "{row}"
            );
            assert!(row.contains("| +150 |"), "{row}");
            assert!(row.contains("[+"), "the interval excludes 0: {row}");
        }
    }
    assert!(section.contains("baseline_changes.svg"));
    let page = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("Changes against the baseline"));
    assert!(page.contains("failover_ms_p50"));
    let appendix = appendix_text(&out);
    assert!(appendix.contains("## Changes against the baseline: no significant change"));
    assert!(section.contains("(APPENDIX.md#changes-against-the-baseline-no-significant-change)"));

    // Against itself: no change, and the same report otherwise.
    let same = base.join("same");
    let opts = ReportOptions {
        baseline: Some(after.clone()),
        ..text_only()
    };
    render_report(&after, &same, &opts, None).unwrap();
    let md = report_text(&same);
    assert!(md.contains("No cell changed significantly"));
    // Without a baseline the report has no trace of one.
    let plain = base.join("plain");
    render_report(&after, &plain, &text_only(), None).unwrap();
    let md = report_text(&plain);
    assert!(!md.contains("baseline"));
    assert!(!plain.join("charts/baseline_changes.svg").exists());
    assert_eq!(
        md,
        report_text(&same).replace(
            &report_text(&same)
                .split("## 1. Decision matrix")
                .next()
                .unwrap()
                .split("## Changes against the baseline")
                .nth(1)
                .map(|s| format!("## Changes against the baseline{s}"))
                .unwrap(),
            ""
        ),
        "the baseline section is the only difference"
    );
    // A missing baseline is refused with its path.
    let opts = ReportOptions {
        baseline: Some(base.join("nowhere")),
        ..text_only()
    };
    let e = render_report(&after, &base.join("x"), &opts, None).unwrap_err();
    assert!(e.to_string().contains("nowhere"), "{e}");
}

/// A sweep that ran each scenario at one size (a different one per scenario) has nothing to
/// draw against cluster size: no scaling charts, though the sweep as a whole has three sizes.
#[test]
fn one_size_per_scenario_draws_no_chart_against_size() {
    let base = common::scratch("one-size");
    let trials: Vec<common::Trial> = common::trials()
        .into_iter()
        .filter(|t| match t.scenario.as_str() {
            "leader-crash" => t.nodes == 3,
            "leader-crash-lowest-detects" => t.nodes == 5,
            _ => t.nodes == 7,
        })
        .collect();
    let results = common::write_results(&base.join("results"), &trials);
    let out = base.join("report");
    let o = render_report(&results, &out, &text_only(), None).unwrap();
    let names: Vec<&str> = o.charts.iter().map(|c| c.svg.as_str()).collect();
    assert!(!names.iter().any(|n| n.contains("_vs_nodes")), "{names:?}");
    assert!(!names.is_empty());
}

/// A cell's trials come from an index built once; it must hand out exactly the rows a scan
/// of every trial finds, in file order, and a copy restricted to one protocol must index its
/// own rows (not the original's positions).
#[test]
fn a_cells_trials_are_the_rows_a_scan_finds() {
    let dir = common::scratch("trials-index");
    // Interleave the cells' rows, so that no cell's trials are contiguous in the file.
    let mut trials = common::trials();
    trials.sort_by_key(|t| (t.seed, t.nodes));
    let results = Results::load(&common::write_results(&dir, &trials)).unwrap();
    let scan = |r: &Results, key: &CellKey| -> Vec<u64> {
        r.trials
            .iter()
            .filter(|t| &t.key == key)
            .map(|t| t.seed)
            .collect()
    };
    let seeds = |rows: Vec<&TrialRow>| rows.iter().map(|t| t.seed).collect::<Vec<_>>();
    let mut nonempty = 0;
    for row in &results.summary {
        let got = seeds(results.trials_of(&row.key));
        assert_eq!(got, scan(&results, &row.key), "{:?}", row.key);
        nonempty += usize::from(!got.is_empty());
    }
    assert!(nonempty >= 12, "only {nonempty} cells with trials");
    let raft = results.only_protocol("raft");
    assert!(raft.summary.iter().all(|r| r.key.protocol == "raft"));
    assert!(!raft.trials.is_empty() && raft.trials.iter().all(|t| t.key.protocol == "raft"));
    for row in &raft.summary {
        assert_eq!(seeds(raft.trials_of(&row.key)), scan(&raft, &row.key));
        assert_eq!(seeds(raft.trials_of(&row.key)), scan(&results, &row.key));
    }
    let bully_key = &results
        .summary
        .iter()
        .find(|r| r.key.protocol == "bully")
        .unwrap()
        .key;
    assert!(raft.trials_of(bully_key).is_empty());
}
