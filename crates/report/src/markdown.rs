//! `REPORT.md` and `APPENDIX.md`. The report opens with the decision matrix (protocol by
//! concern, [`crate::matrix`]) and the guide, then the findings most severe first, the charts,
//! the traces and a short method; the appendix holds the configuration, the metric definitions
//! and the summary tables, so the report itself reads in one screen. The output is a pure function of the results directory (no clock,
//! no absolute paths, no hash-map order), so identical results give a byte-identical report.
//!
//! Numbers in the tables are the summary file's own text, never reformatted.

use std::fmt::Write as _;

use crate::data::{CellKey, Results, Stat, SummaryRow};
use crate::figures::{series_for, ChartInfo};
use crate::findings::{self, Ctx};
use crate::matrix;
use crate::ReportOptions;

/// A trace embedded in the report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TraceDoc {
    pub heading: String,
    /// Relative path of the SVG.
    pub file: String,
    pub caption: String,
}

pub(crate) use crate::doc::anchor as slug;

pub(crate) fn chart_heading(c: &ChartInfo) -> String {
    format!("Chart {}: {}", c.number, c.title)
}

/// A link to a chart's section.
pub(crate) fn chart_link(c: &ChartInfo) -> String {
    format!(
        "[chart {}](REPORT.md#{})",
        c.number,
        slug(&chart_heading(c))
    )
}

fn table_heading(results: &Results, scenario: &str, net: &str) -> String {
    if results.nets().len() > 1 {
        format!("Table: {scenario}, net {net}")
    } else {
        format!("Table: {scenario}")
    }
}

fn row_label(results: &Results, key: &CellKey) -> String {
    let p = results.params_label(&key.params);
    if p.is_empty() {
        key.protocol.clone()
    } else {
        format!("{} ({p})", key.protocol)
    }
}

/// The link target of a scenario's summary table, in the appendix.
pub(crate) fn table_target(results: &Results, scenario: &str, net: &str) -> String {
    format!(
        "APPENDIX.md#{}",
        slug(&table_heading(results, scenario, net))
    )
}

/// A link to the summary table that holds a cell's row (the sentence around it names the
/// protocol, size and scenario).
pub(crate) fn table_link(results: &Results, r: &SummaryRow) -> String {
    format!(
        "[table]({})",
        table_target(results, &r.key.scenario, &r.key.net)
    )
}

/// A table cell holding text from the results or the configuration (a scenario's `about`, a
/// skip reason): a `|` would cut the row, and `<`, `>` and `&` would be read as HTML or an
/// entity, so each is backslash-escaped (CommonMark renders `\<` as `<`).
fn cell(s: &str) -> String {
    if s.is_empty() {
        return "–".to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '<' | '>' | '&') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

const METRICS: [(&str, &str); 28] = [
    ("reference instant (t0)", "The instant the scenario's first fault fired, or zero for a cold start. A fault drawn for an instant with no quorum leader waits for one (at most `fault_wait_ms`), and the whole fault timeline shifts with it. Every duration is measured from t0 and only what happens at or after it counts (except `same_epoch_leaders`, checked over the whole trial)."),
    ("`faults_skipped`", "Fault actions of the scenario that did not apply in a trial: a selector found no node when the action fired (no leader to crash), the timeline gave up waiting for a leader, or the trial ended first. Such a trial did not undergo the scenario as described."),
    ("`measured`, `faults_skipped_trials`", "Per cell: the trials in which every fault applied, over which every statistic is computed, and the trials in which some fault did not apply, which no statistic includes."),
    ("reach, quorum-connected", "A member reaches another when the links between them are up both ways (for the lease, whose members talk only to the store: when both reach a live store). A member is quorum-connected when it reaches a majority of the n members, itself included (the lease: when it reaches the store)."),
    ("quorum leader", "A live, unpaused member L in the leader role that more than n/2 members (L included) name as their leader, each reaching L; for the lease, the holder the store's record names, while it reaches the store (it can renew). At most one at a time: the cluster's working leader, which commits and serves even while members that cannot reach it are stranded."),
    ("stranded member, `stranded_node_ms`, `stranded_nodes`", "A live member that does not name-and-reach the quorum leader (every live member when there is none): its clients have no leader to reach through it. `stranded_node_ms` sums, over members, the time each was stranded after t0 (node-milliseconds); `stranded_nodes` counts them at the end."),
    ("`converged`", "Whether there is a quorum leader at the end of the trial. For a majority protocol whose majority is gone, not converging is the right answer."),
    ("`detect_ms`", "t0 to the first moment any node leaves the follower role."),
    ("`elect_ms`", "t0 to the start of the final interval in which the same quorum leader is followed by every live member that reaches it (zero if it began before t0); empty when there is none at the end. It includes the time the last reachable members take to hear of the leader; failover is `failover_ms`."),
    ("`unavailable_ms`", "Total time from t0 to the end of the trial without a quorum leader."),
    ("`split_brain`, `split_brain_ms`, `max_leaders`", "Whether, and for how long in total, two or more acting leaders (live nodes in the leader role that are not paused) existed at the same instant after t0; the most at once."),
    ("`paused_leader_ms`", "Total time after t0 during which a paused node still believed it led (apart from `split_brain_ms`: a frozen node cannot act on its belief until it resumes)."),
    ("`failover_ms`", "t0 to the first instant at or after t0 with a quorum leader (0 when there was one right after the fault; empty if there never was one). The one meaning of failover in every table, chart and sentence."),
    ("`writes_ok`, `writes_stale`, `writes_fenced`", "The workload: every node that believes it leads, and is not paused, writes to a shared resource outside the cluster every `workload.interval_ms`, carrying its epoch as a fencing token. A write taken after t0 is *stale* if its writer had been deposed (another node elected after it, with a higher epoch or, without epochs, later); *fenced* if the resource refused it for a token lower than the highest it took. Fencing changes no node's behaviour, so stale + fenced is what an unfenced resource would have taken from deposed leaders."),
    ("`stale_window_ms`, `write_unavailable_ms`", "The time during which a deposed leader's writes were being taken, and the time from t0 during which no write was taken at all, each at the workload interval's resolution (the union of one interval after each taken write)."),
    ("`minority_leader_ms`", "Total time after t0 during which a live member in the leader role is not quorum-connected: a stranded leader that still believes it leads. Part of `split_brain_ms` whenever there is also a quorum leader."),
    ("`outcome`", "The trial's liveness verdict, from what holds at the end: `minority-only` (no member quorum-connected: none is the right answer), `stable` (the quorum leader at t0 is the one at the end, held through the settle window, and no other member led a quorum in between), `recovered-after` (quorum leadership moved and held through the settle window; `recovered_timeouts` says after how many election timeouts), `livelock` (not settled, and a quorum leader was won during the last settle window: still changing), `no-leader` (none won during the last settle window although one was possible)."),
    ("`same_epoch_leaders`", "How many times a node took (or kept, under a new epoch) the leader role while another live leader claimed the same epoch or term: a safety violation for protocols with terms."),
    ("`leader_changes`", "Entries into the leader role at or after t0."),
    ("`elections_started`", "Entries into the candidate role at or after t0, plus epoch increases of a node that stays a candidate (a Raft candidate retrying after a split vote)."),
    ("`msgs_election`", "Election traffic (every message category but heartbeats: election requests, replies, leader announcements) sent from t0 to the instant `elect_ms` ends (to the end of the trial if there is no such instant)."),
    ("`msgs_total`, `bytes_total`", "Every message (and its encoded payload size) sent over the whole trial, heartbeats included."),
    ("`msgs_election_req`, `msgs_reply`, `msgs_leader`, `msgs_heartbeat`", "Messages sent in the election window, by category: election requests (bully ELECTION, ring ELECTION, Raft RequestVote and PreVote), replies (bully OK, votes, ring acks), leader announcements (COORDINATOR, ELECTED), heartbeats and their acknowledgements."),
    ("`*_mean`, `*_p5` … `*_p99`, `*_max`", "Per cell over its trials; `elect_ms` statistics over the trials that have one only. Percentiles by linear interpolation between closest ranks (R type 7, numpy's default)."),
    ("`converged_rate`, `split_brain_rate`", "Share of the cell's trials (0 to 1)."),
    ("`split_brain_ci_lo`, `split_brain_ci_hi`", "95% Wilson score interval of the split-brain rate (z = 1.959964)."),
    ("`same_epoch_leaders_max`", "The largest `same_epoch_leaders` of any trial in the cell."),
    ("`budget_exceeded`", "A trial that used up its work budget (`work_budget`: events processed plus messages sent, 100000 × nodes, at most 20 million, by default) was stopped there and never counts as converged; in `summary.csv`, how many of the cell's trials were."),
];

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            if m.is_empty() {
                out.push((prefix.to_string(), "none".into()));
            }
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let items: Vec<String> = a.iter().map(scalar).collect();
            let text = if items.len() > 16 {
                format!(
                    "{} values: {}, …, {}",
                    items.len(),
                    items[..8].join(", "),
                    items[items.len() - 2..].join(", ")
                )
            } else {
                format!("[{}]", items.join(", "))
            };
            out.push((prefix.to_string(), text));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        _ => out.push((prefix.to_string(), scalar(v))),
    }
}

/// A list of records (an array of objects, or an object of objects) as a table: a first
/// column naming the record (its key, or its index), then one column per field in order of
/// first appearance. `None` for anything else.
fn records(v: &serde_json::Value) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    use serde_json::Value;
    let entries: Vec<(String, &serde_json::Map<String, Value>)> = match v {
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (i.to_string(), x.as_object().unwrap()))
            .collect(),
        Value::Object(o) if !o.is_empty() && o.values().all(Value::is_object) => o
            .iter()
            .map(|(k, x)| (format!("`{k}`"), x.as_object().unwrap()))
            .collect(),
        _ => return None,
    };
    let mut cols: Vec<String> = Vec::new();
    for (_, o) in &entries {
        for k in o.keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    let rows = entries
        .iter()
        .map(|(name, o)| {
            let mut r = vec![name.clone()];
            for c in &cols {
                r.push(match o.get(c) {
                    None => String::new(),
                    Some(x) => {
                        let mut flat = Vec::new();
                        flatten("", x, &mut flat);
                        flat.into_iter()
                            .map(|(k, v)| {
                                if k.is_empty() {
                                    v
                                } else {
                                    format!("{k} = {v}")
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("; ")
                    }
                });
            }
            r
        })
        .collect();
    let mut header = vec![String::new()];
    header.extend(cols);
    Some((header, rows))
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// Writes the whole report.
/// The two documents of a report: `REPORT.md` (one screen to decide, then the evidence) and
/// `APPENDIX.md` (the configuration, the metric definitions and every table).
pub(crate) struct Documents {
    pub report: String,
    pub appendix: String,
}

fn code_list(v: &[String]) -> String {
    v.iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn write_report(
    results: &Results,
    opts: &ReportOptions,
    charts: &[ChartInfo],
    traces: &[TraceDoc],
    trace_note: &str,
) -> Documents {
    let m = &results.manifest;
    let ctx = Ctx::new(results, opts, charts);
    let nets = results.nets();
    let mut s = String::new();
    let _ = writeln!(s, "# Leader-election design review: `{}`\n", m.name);
    let _ = writeln!(
        s,
        "Generated by `election-bench report` from `results/{}/` ({} {}{}): {} trials in {} cells. Every number and sentence is computed from those files; regenerate rather than edit. Numbers are rounded to what their 95% interval supports.\n",
        m.name,
        m.tool,
        m.version,
        m.config_sha256
            .as_deref()
            .map(|c| format!(", configuration `{}`", &c[..c.len().min(12)]))
            .unwrap_or_default(),
        results.trials.len(),
        results.summary.len(),
    );
    s.push_str("**Contents:** [Decision matrix](#1-decision-matrix) · [Guide](#2-protocol-choice-guide) · [Findings](#3-findings) · [Charts](#4-charts) · [Traces](#5-message-sequence-traces) · [Method](#6-method) · [Appendix: configuration, metrics, tables](APPENDIX.md) · [HTML page](index.html)\n\n");

    // 1. The decision matrix.
    s.push_str("## 1. Decision matrix\n\n");
    let mx = matrix::matrix(&ctx);
    if mx.columns.is_empty() {
        s.push_str("The sweep has none of the scenarios the matrix compares (a leader crash, a partition, a recovery).\n\n");
    } else {
        let _ = writeln!(
            s,
            "Protocol by concern{}; each number links its evidence. Verdicts compare the protocols of this sweep with each other.\n",
            if nets.len() > 1 {
                format!(", network `{}`", ctx.net)
            } else {
                String::new()
            }
        );
        s.push_str("| protocol |");
        for c in &mx.columns {
            let _ = write!(s, " {} |", c.title);
        }
        s.push_str("\n|---|");
        for _ in &mx.columns {
            s.push_str("---|");
        }
        s.push('\n');
        for (label, cells) in &mx.rows {
            let _ = write!(s, "| `{label}` |");
            for c in cells {
                match c {
                    Some(c) => {
                        let _ = write!(s, " [{}]({}) **{}** |", c.text, c.link, c.verdict);
                    }
                    None => s.push_str(" – |"),
                }
            }
            s.push('\n');
        }
        s.push('\n');
        for c in &mx.columns {
            let _ = writeln!(s, "- *{}*: {}.", c.title, c.about);
        }
        s.push('\n');
    }

    // 2. Guide.
    s.push_str("## 2. Protocol-choice guide\n\nWhich protocol under which constraint, according to this sweep:\n\n");
    let guide = findings::guide(&ctx);
    if guide.is_empty() {
        s.push_str("The sweep does not contain the scenarios the guide compares (leader crashes, partitions, recoveries).\n");
    }
    for g in guide {
        let _ = writeln!(s, "- {g}");
    }
    s.push('\n');

    // 3. Findings, most severe first.
    s.push_str("## 3. Findings\n\n");
    let _ = writeln!(
        s,
        "Most severe first: anomalies (with seeds and replay commands), then damage and split brain, failover time, cost and churn{}. Each points at the table or chart it rests on.\n",
        if nets.len() > 1 {
            format!("; network profile `{}`", ctx.net)
        } else {
            String::new()
        }
    );
    let (main, appendix_findings) = findings::findings(&ctx);
    for f in findings::skipped_faults(&ctx) {
        let _ = writeln!(s, "- {f}");
    }
    for f in main {
        let _ = writeln!(s, "- {f}");
    }
    s.push('\n');

    // 4. Charts.
    s.push_str("## 4. Charts\n\nEach protocol keeps one colour in every chart; PNG copies sit next to the SVGs.\n\n");
    for c in charts {
        let _ = writeln!(s, "### {}\n", chart_heading(c));
        let _ = writeln!(s, "{}\n", c.caption);
        let _ = writeln!(s, "![{}]({})\n", c.title, c.svg);
    }

    // 5. Traces.
    s.push_str("## 5. Message-sequence traces\n\n");
    s.push_str("A lifeline per node (time runs down; idle stretches compressed), an arrow per message coloured by category, ✕ for lost messages, marks for role changes and crashes, walls for partitions, a red line at the fault and a green one at convergence.\n\n");
    if !trace_note.is_empty() {
        let _ = writeln!(s, "{trace_note}\n");
    }
    for t in traces {
        let _ = writeln!(
            s,
            "### {}\n\n{}\n\n![{}]({})\n",
            t.heading, t.caption, t.heading, t.file
        );
    }

    // 6. Method.
    s.push_str("## 6. Method\n\n");
    let ran = results.summary.iter().filter(|r| r.ran()).count();
    let skipped: Vec<&SummaryRow> = results.summary.iter().filter(|r| !r.ran()).collect();
    let _ = writeln!(
        s,
        "Each trial runs one protocol on an n-node cluster in the deterministic simulator, applies one scenario's faults, and measures the outcome with the simulator's observer, the same code for every protocol. A cell is one (protocol, n, scenario, network{}) combination, run over many seeds.\n",
        if results.param_keys.is_empty() {
            String::new()
        } else {
            format!(", {}", results.param_keys.join(", "))
        }
    );
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| protocols | {} |", code_list(&results.protocols()));
    let sizes: Vec<String> = results.sizes().iter().map(u32::to_string).collect();
    let _ = writeln!(s, "| cluster sizes n | {} |", sizes.join(", "));
    let _ = writeln!(s, "| scenarios | {} |", code_list(&results.scenarios()));
    let _ = writeln!(s, "| network profiles | {} |", code_list(&nets));
    if !results.param_keys.is_empty() {
        let _ = writeln!(
            s,
            "| varied parameters | {} |",
            code_list(&results.param_keys)
        );
    }
    let _ = writeln!(
        s,
        "| cells | {} ({} ran, {} skipped) |",
        results.summary.len(),
        ran,
        skipped.len()
    );
    let _ = writeln!(s, "| trials | {} |", results.trials.len());
    for (what, text) in measured_sources(&results.manifest.config) {
        let _ = writeln!(s, "| {what} | {text} |");
    }
    let _ = writeln!(s, "| focus size | n = {} |\n", ctx.focus);
    if !skipped.is_empty() {
        // One line per reason, with the sizes and protocols it covers.
        let mut reasons: Vec<(String, Vec<u32>, Vec<String>)> = Vec::new();
        for r in &skipped {
            let why = cell(&r.skipped);
            let at = match reasons.iter().position(|(w, _, _)| *w == why) {
                Some(i) => i,
                None => {
                    reasons.push((why, Vec::new(), Vec::new()));
                    reasons.len() - 1
                }
            };
            let (_, sizes, protos) = &mut reasons[at];
            if !sizes.contains(&r.key.nodes) {
                sizes.push(r.key.nodes);
            }
            if !protos.contains(&r.key.protocol) {
                protos.push(r.key.protocol.clone());
            }
        }
        let all_sizes = results.sizes();
        let lines: Vec<String> = reasons
            .iter_mut()
            .map(|(why, sizes, protos)| {
                sizes.sort_unstable();
                let at = if *sizes == all_sizes {
                    "every size".to_string()
                } else {
                    let v: Vec<String> = sizes.iter().map(u32::to_string).collect();
                    format!("n = {}", v.join(", "))
                };
                let who = if protos.len() > 3 {
                    format!("{} protocols", protos.len())
                } else {
                    code_list(protos)
                };
                format!("{why} ({at}; {who})")
            })
            .collect();
        let _ = writeln!(s, "Skipped cells: {}.\n", lines.join("; "));
    }
    s.push_str("Reproduce (the simulator is deterministic: the same commands give byte-identical results and report):\n\n```sh\n");
    let _ = writeln!(s, "{}", m.command);
    let _ = writeln!(
        s,
        "election-bench report --results results/{0} --out reports/{0}",
        m.name
    );
    s.push_str("```\n\nThe resolved configuration, the definition of every metric and every summary table are in the [appendix](APPENDIX.md).\n");

    Documents {
        report: s,
        appendix: appendix(results, &ctx, &appendix_findings),
    }
}

fn appendix(results: &Results, ctx: &Ctx, split_lists: &[String]) -> String {
    let m = &results.manifest;
    let mut s = String::new();
    let _ = writeln!(s, "# Appendix to the design review: `{}`\n", m.name);
    s.push_str("The evidence behind [REPORT.md](REPORT.md): the resolved configuration, the metric definitions, the at-a-glance table, where split brain happened, and one summary table per scenario, straight from `summary.csv`.\n\n");
    s.push_str("**Contents:** [Configuration](#a-configuration) · [Metrics](#b-metrics) · [At a glance](#c-at-a-glance) · [Split brain by scenario](#d-split-brain-by-scenario-and-stranded-leaders) · [Summary tables](#e-summary-tables) · [Liveness](#f-liveness)\n\n");
    s.push_str("## A. Configuration\n\nAs resolved by the sweep (`manifest.json`): network profiles with their latency distributions, the timing table, seeds, and every parameter.\n\n");
    if let serde_json::Value::Object(map) = &m.config {
        let mut general = Vec::new();
        for (k, v) in map {
            if let Some((cols, rows)) = records(v) {
                let _ = writeln!(s, "#### `{k}`\n");
                let _ = writeln!(s, "| {} |", cols.join(" | "));
                let _ = writeln!(s, "|{}", "---|".repeat(cols.len()));
                for r in rows {
                    let _ = writeln!(
                        s,
                        "| {} |",
                        r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                }
                s.push('\n');
            } else if v.is_object() && v.as_object().is_some_and(|o| !o.is_empty()) {
                let mut rows = Vec::new();
                flatten("", v, &mut rows);
                let _ = writeln!(s, "#### `{k}`\n\n| key | value |\n|---|---|");
                for (a, b) in rows {
                    let _ = writeln!(s, "| `{a}` | {} |", cell(&b));
                }
                s.push('\n');
            } else {
                flatten(k, v, &mut general);
            }
        }
        if !general.is_empty() {
            s.push_str("#### Other settings\n\n| key | value |\n|---|---|\n");
            for (a, b) in general {
                let _ = writeln!(s, "| `{a}` | {} |", cell(&b));
            }
            s.push('\n');
        }
    } else {
        let _ = writeln!(s, "```json\n{}\n```\n", m.config);
    }
    s.push_str("## B. Metrics\n\nDefined once, in the simulator's observer, and computed identically for every protocol:\n\n| metric | definition |\n|---|---|\n");
    for (k, v) in METRICS {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    s.push('\n');
    s.push_str("## C. At a glance\n\n");
    at_a_glance(&mut s, ctx);
    s.push_str("## D. Split brain by scenario, and stranded leaders\n\n");
    if split_lists.is_empty() {
        let _ = writeln!(s, "No scenario had split brain at n = {}.\n", ctx.focus);
    }
    for f in split_lists {
        let _ = writeln!(s, "- {f}");
    }
    s.push('\n');
    s.push_str("## E. Summary tables\n\nOne table per scenario, straight from `summary.csv` (values as written there; – is an empty cell). Times in ms, rates as shares of trials.\n\n");
    for net in &results.nets() {
        for sc in &results.scenarios() {
            table(&mut s, results, sc, net);
        }
    }

    s.push_str("## F. Liveness\n\nEach trial's `outcome` (defined in `results/README.md`): `stable` (the quorum leader held throughout), `recovered-after` (quorum leadership moved and settled again), `no-leader` (no quorum leader at the end although one was possible), `livelock` (quorum leadership still changing at the end), `minority-only` (no member reaches a majority: no quorum leader possible). Counts of measured trials per cell.\n\n");
    s.push_str(&crate::liveness::section(results));
    s
}

fn at_a_glance(s: &mut String, ctx: &Ctx) {
    let results = ctx.results;
    let series = series_for(results, &ctx.net);
    let mut rows = Vec::new();
    for sc in results.scenarios() {
        let cells: Vec<(String, &SummaryRow)> = series
            .iter()
            .filter_map(|se| {
                let key = crate::figures::key_of(se, ctx.focus, &sc, &ctx.net);
                results
                    .cell(&key)
                    .filter(|r| r.ran())
                    .map(|r| (se.label.clone(), r))
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let best = |stat: Stat| -> String {
            cells
                .iter()
                .filter_map(|(l, r)| r.get(stat).map(|v| (l, r, v)))
                .min_by(|a, b| a.2.total_cmp(&b.2))
                .map(|(l, r, _)| format!("`{l}` {}", r.raw(stat)))
                .unwrap_or_else(|| "–".into())
        };
        let no_split: Vec<String> = cells
            .iter()
            .filter(|(_, r)| r.get(Stat::SplitRate) == Some(0.0))
            .map(|(l, _)| format!("`{l}`"))
            .collect();
        // A failover only where a fault takes the leader; an outage is not a failover.
        let kind = results.scenario_kind(&sc).unwrap_or_default();
        let failover = if kind.takes_leader {
            best(Stat::FailoverP50)
        } else if kind.cuts_links {
            "no failover: an outage".to_string()
        } else {
            "no failover".to_string()
        };
        rows.push(format!(
            "| `{sc}` | {} | {} | {} | {} |",
            failover,
            best(Stat::MsgsMean),
            if no_split.is_empty() {
                "none".to_string()
            } else if no_split.len() == cells.len() {
                "all".to_string()
            } else {
                no_split.join(", ")
            },
            best(Stat::UnavailableMean)
        ));
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "At n = {}, the best protocol per scenario on each measure (lowest value, as written in `summary.csv`). Failover time is shown only where a fault crashes or pauses the leader.\n\n| scenario | fastest median failover (`failover_ms_p50`, ms) | fewest election messages (`msgs_election_mean`) | never split-brained | least unavailable (`unavailable_ms_mean`, ms) |\n|---|---|---|---|---|",
        ctx.focus
    );
    for r in rows {
        let _ = writeln!(s, "{r}");
    }
    s.push('\n');
}

/// Columns of the summary tables: header and statistic.
const TABLE_COLS: [(&str, Stat); 20] = [
    ("trials", Stat::Trials),
    ("measured", Stat::Measured),
    ("converged", Stat::ConvergedRate),
    ("elect p50", Stat::ElectP50),
    ("elect p95", Stat::ElectP95),
    ("elect p99", Stat::ElectP99),
    ("elect max", Stat::ElectMax),
    ("msgs mean", Stat::MsgsMean),
    ("msgs p95", Stat::MsgsP95),
    ("split-brain rate", Stat::SplitRate),
    ("95% CI", Stat::SplitCiLo),
    ("split ms mean", Stat::SplitMsMean),
    ("minority-leader ms mean", Stat::MinorityMsMean),
    ("unavailable ms mean", Stat::UnavailableMean),
    ("leader changes mean", Stat::LeaderChangesMean),
    ("detect p50", Stat::DetectP50),
    ("same-epoch max", Stat::SameEpochMax),
    ("failover p50", Stat::FailoverP50),
    ("stale writes mean", Stat::WritesStaleMean),
    ("fenced mean", Stat::WritesFencedMean),
];

fn table(s: &mut String, results: &Results, scenario: &str, net: &str) {
    // Every row of the scenario, protocols in legend order, then parameter combinations in
    // the sweep's order, then cluster size.
    let protocols = results.protocols();
    let mut combos: Vec<&Vec<String>> = Vec::new();
    for r in &results.summary {
        if !combos.contains(&&r.key.params) {
            combos.push(&r.key.params);
        }
    }
    let mut rows: Vec<&SummaryRow> = results
        .summary
        .iter()
        .filter(|r| r.key.scenario == scenario && r.key.net == net)
        .collect();
    rows.sort_by_key(|r| {
        (
            protocols.iter().position(|p| *p == r.key.protocol),
            combos.iter().position(|c| **c == r.key.params),
            r.key.nodes,
        )
    });
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "#### {}\n", table_heading(results, scenario, net));
    s.push_str("| protocol | n |");
    for (h, _) in TABLE_COLS {
        let _ = write!(s, " {h} |");
    }
    s.push_str("\n|---|---:|");
    for _ in TABLE_COLS {
        s.push_str("---:|");
    }
    s.push('\n');
    for r in rows {
        let _ = write!(s, "| `{}` | {} |", row_label(results, &r.key), r.key.nodes);
        if !r.skipped.is_empty() {
            let _ = write!(
                s,
                " {} | skipped: {} |",
                r.raw(Stat::Trials),
                cell(&r.skipped)
            );
            for _ in 2..TABLE_COLS.len() {
                s.push_str(" |");
            }
            s.push('\n');
            continue;
        }
        for (_, st) in TABLE_COLS {
            if st == Stat::SplitCiLo {
                let (lo, hi) = (r.raw(Stat::SplitCiLo), r.raw(Stat::SplitCiHi));
                if lo.is_empty() && hi.is_empty() {
                    s.push_str(" – |");
                } else {
                    let _ = write!(s, " {}–{} |", cell(lo), cell(hi));
                }
            } else {
                let _ = write!(s, " {} |", cell(r.raw(st)));
            }
        }
        s.push('\n');
    }
    s.push('\n');
}

/// The method table's rows on where the configuration's measurements came from: a profile's
/// source (`election-bench profile`: its scrapes, their hashes and time span) and every
/// `empirical:` file with its hash. None for a configuration without them.
pub(crate) fn measured_sources(config: &serde_json::Value) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let p = &config["profile"];
    if p.is_object() {
        let scrapes: Vec<String> = p["scrapes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|sc| {
                format!(
                    "`{}` (sha256 `{}`)",
                    sc["file"].as_str().unwrap_or("?"),
                    sc["sha256"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let span = match p["span_s"].as_f64() {
            Some(sp) if sp > 0.0 => format!(
                "{} leader changes seen over {} h (scrapes from {} to {} ms since 1970)",
                p["leader_changes"],
                crate::data::fmt_sig(sp / 3600.0),
                p["span_from_ms"],
                p["span_to_ms"]
            ),
            _ => format!(
                "no leader-change rate observed ({})",
                p["no_rate"].as_str().unwrap_or("no time span")
            ),
        };
        rows.push((
            "cluster profile".to_string(),
            format!(
                "written by `{}` from {} member(s): {}; {span}; current heartbeat {} ms, election timeout {} ms ({})",
                p["command"].as_str().unwrap_or("?"),
                p["members_scraped"],
                scrapes.join(", "),
                p["heartbeat_ms"],
                p["election_timeout_ms"],
                p["settings_from"].as_str().unwrap_or("?")
            ),
        ));
    }
    for e in config["empirical"].as_array().into_iter().flatten() {
        rows.push((
            "measured distribution".to_string(),
            format!(
                "`empirical:{}` (sha256 `{}`): a {} of {} observations, median {}, p99 {}",
                e["source"].as_str().unwrap_or("?"),
                e["sha256"].as_str().unwrap_or("?"),
                e["kind"].as_str().unwrap_or("?"),
                crate::data::fmt_sig(e["observations"].as_f64().unwrap_or(f64::NAN)),
                crate::data::fmt_sig(e["p50"].as_f64().unwrap_or(f64::NAN)),
                crate::data::fmt_sig(e["p99"].as_f64().unwrap_or(f64::NAN)),
            ),
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_slugs() {
        assert_eq!(slug("Table: leader-crash"), "table-leader-crash");
        assert_eq!(
            slug("Chart 4: Split brain by scenario at n = 5"),
            "chart-4-split-brain-by-scenario-at-n--5"
        );
        assert_eq!(slug("1. Method"), "1-method");
    }
}
