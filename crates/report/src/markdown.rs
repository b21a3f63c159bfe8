//! `REPORT.md` and `APPENDIX.md`. The report opens with the decision matrix (protocol by
//! concern, [`crate::matrix`]) and the guide, then the findings most severe first, the charts,
//! the traces and a short method; the appendix holds the configuration, the metric definitions
//! and the summary tables, so the report itself reads in one screen. Both pages are built as
//! [`Document`]s and rendered by its Markdown renderer; the appendix's glossary is generated
//! from the results' definitions (`election_runner::results`), never retyped. Findings and the
//! guide come from [`crate::findings`] as Markdown sentences, read into spans (links included)
//! by [`crate::doc::spans`]. The output is a pure function of the results directory (no clock,
//! no absolute paths, no hash-map order), so identical results give a byte-identical report.
//!
//! Numbers in the tables are the summary file's own text, never reformatted.

use crate::data::{CellKey, Results, Stat, SummaryRow};
use crate::doc::{
    code, link, spans, strong, text, Align, Block, Cell, Document, Figure, Inline, Item, Table,
};
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
    /// Relative path of the trial's timeline (leaders, quorum, writes over time), drawn for
    /// the worst and the failing trials.
    pub timeline: Option<String>,
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

/// Appendix B: the glossary, generated from the results' definitions
/// (`election_runner::results`: the terms, the `trials.csv` metric columns, the `summary.csv`
/// statistics), which follow the simulator's observer.
fn glossary(d: &mut Document) {
    use election_runner::results::{Stat as SummaryStat, TERMS, TRIAL_METRIC_DEFS};
    let table = |head: &str, rows: Vec<(Vec<Inline>, &str)>| {
        let mut t = Table::new([head, "definition"]);
        t.rows = rows
            .into_iter()
            .map(|(name, def)| vec![Cell::new(name), Cell::new(spans(def))])
            .collect();
        Block::Table(t)
    };
    d.heading(2, vec![text("B. Metrics")]);
    d.paragraph(spans("Defined once, in the simulator's observer, and computed identically for every protocol; the definitions below are those of `results/README.md`, generated from the same source."));
    d.heading(4, vec![text("Terms")]);
    d.push(table(
        "term",
        TERMS
            .iter()
            .map(|t| (spans(t.name), t.definition))
            .collect(),
    ));
    d.heading(4, vec![code("trials.csv"), text(": one row per trial")]);
    d.push(table(
        "column",
        TRIAL_METRIC_DEFS
            .iter()
            .map(|c| (vec![code(c.name)], c.definition))
            .collect(),
    ));
    d.heading(4, vec![code("summary.csv"), text(": one row per cell")]);
    d.push(table(
        "column",
        SummaryStat::groups()
            .into_iter()
            .map(|(group, def)| {
                let names = group.iter().map(|c| vec![code(c.column())]);
                (joined(names, ", "), def)
            })
            .collect(),
    ));
}

/// Span runs joined by a separator.
fn joined(parts: impl IntoIterator<Item = Vec<Inline>>, sep: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(text(sep));
        }
        out.extend(p);
    }
    out
}

/// A table cell of text from the results or the configuration; an empty one shows `–`.
fn text_cell(s: &str) -> Cell {
    Cell::text(if s.is_empty() { "–" } else { s })
}

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

/// A chart or trace: its heading, its caption (Markdown prose), then the image.
fn figure(d: &mut Document, heading: &str, caption: &str, path: &str, alt: &str) {
    d.heading(3, vec![text(heading)]);
    d.paragraph(spans(caption));
    d.push(Block::Figure(Figure {
        path: path.to_string(),
        alt: alt.to_string(),
        caption: None,
    }));
}

/// Names as code spans, comma-separated.
fn code_list(v: &[String]) -> Vec<Inline> {
    joined(v.iter().map(|p| vec![code(p.as_str())]), ", ")
}

/// What the runs beside a report contribute to its guide.
pub(crate) struct Beside<'a> {
    /// The reference page's `closeness.csv`.
    pub(crate) closeness: &'a [crate::reference::Closeness],
    /// The gray sweep's and the exploration's guide lines ([`crate::companions`]).
    pub(crate) companions: &'a [Vec<crate::doc::Inline>],
    /// The gray sweep's liveness per protocol, for the matrix's liveness column.
    pub(crate) gray: &'a [crate::companions::GrayLiveness],
}

pub(crate) fn write_report(
    results: &Results,
    opts: &ReportOptions,
    charts: &[ChartInfo],
    traces: &[TraceDoc],
    trace_note: &str,
    baseline: Option<(&crate::compare::Comparison, &str)>,
    beside: Beside<'_>,
) -> Documents {
    let Beside {
        closeness,
        companions,
        gray,
    } = beside;
    let m = &results.manifest;
    let ctx = Ctx::new(results, opts, charts);
    let nets = results.nets();
    let mut d = Document::titled(vec![
        text("Leader-election design review: "),
        code(m.name.as_str()),
    ]);
    d.paragraph(spans(&format!(
        "Generated by `election-bench report` from `results/{}/` ({} {}{}): {} trials in {} cells. Every number and sentence is computed from those files; regenerate rather than edit. Numbers are rounded to what their 95% interval supports.",
        m.name,
        m.tool,
        m.version,
        m.config_sha256
            .as_deref()
            .map(|c| format!(", configuration `{}`", &c[..c.len().min(12)]))
            .unwrap_or_default(),
        results.trials.len(),
        results.summary.len(),
    )));
    d.paragraph(spans("**Contents:** [Decision matrix](#1-decision-matrix) · [Guide](#2-protocol-choice-guide) · [Findings](#3-findings) · [Charts](#4-charts) · [Traces](#5-message-sequence-traces) · [Method](#6-method) · [Appendix: configuration, metrics, tables](APPENDIX.md) · [HTML page](index.html)"));

    // What changed since the baseline, first, as criterion shows a run against the last one.
    if let Some((cmp, chart)) = baseline {
        cmp.baseline_section(&mut d, chart);
    }

    // 1. The decision matrix.
    d.heading(2, vec![text("1. Decision matrix")]);
    let mx = matrix::matrix(&ctx, gray);
    if mx.columns.is_empty() {
        d.paragraph(vec![text("The sweep has none of the scenarios the matrix compares (a leader crash, a partition, a recovery).")]);
    } else {
        d.paragraph(spans(&format!(
            "Protocol by concern{}; each number links the table that holds it. Safety and liveness columns are properties (pass, or fails with the first failing seed); the other verdicts are absolute where the legend gives a threshold, else relative to the protocols of this sweep.",
            if nets.len() > 1 {
                format!(", network `{}`", ctx.net)
            } else {
                String::new()
            }
        )));
        let mut t = Table::new(
            std::iter::once("protocol").chain(mx.columns.iter().map(|c| c.title.as_str())),
        );
        t.header = std::iter::once(vec![text("protocol")])
            .chain(mx.columns.iter().map(|c| spans(&c.title)))
            .collect();
        for (label, cells) in &mx.rows {
            let mut row = vec![Cell::new(vec![code(label.as_str())])];
            row.extend(cells.iter().map(|c| match c {
                Some(c) => Cell::new(c.spans.clone()),
                None => Cell::text("–"),
            }));
            t.rows.push(row);
        }
        let answers = matrix::answers(&ctx, &mx);
        if !answers.is_empty() {
            d.paragraph(vec![
                strong("Which protocol?"),
                text(" From this sweep, each claim linked to the table that holds its number:"),
            ]);
            d.push(Block::List(answers.iter().map(|a| item(a)).collect()));
        }
        d.push(Block::Table(t));
        d.push(Block::list(
            mx.columns
                .iter()
                .map(|c| {
                    let mut line = vec![Inline::Emph(spans(&c.title)), text(": ")];
                    line.extend(spans(&c.about));
                    line.push(text("."));
                    line
                })
                .collect(),
        ));
    }

    // 2. Guide.
    d.heading(2, vec![text("2. Protocol-choice guide")]);
    d.paragraph(vec![text(
        "Which protocol under which constraint, according to this sweep:",
    )]);
    let guide = findings::guide(&ctx);
    if guide.is_empty() {
        d.paragraph(vec![text("The sweep does not contain the scenarios the guide compares (leader crashes, partitions, recoveries).")]);
    } else {
        d.push(Block::List(guide.iter().map(|g| item(g)).collect()));
    }
    d.paragraph(crate::reference::guide_line(
        closeness,
        "../reference/REFERENCE.md",
    ));
    for line in companions {
        d.paragraph(line.clone());
    }
    if let Some(line) = crate::cluster::cluster_line(results) {
        d.paragraph(line);
    }

    // 3. Findings, most severe first.
    d.heading(2, vec![text("3. Findings")]);
    d.paragraph(spans(&format!(
        "Most severe first: anomalies (with seeds and replay commands), then damage and split brain, failover time, cost and churn{}. Each points at the table or chart it rests on.",
        if nets.len() > 1 {
            format!("; network profile `{}`", ctx.net)
        } else {
            String::new()
        }
    )));
    let (main, appendix_findings) = findings::findings(&ctx);
    let listed: Vec<Item> = findings::skipped_faults(&ctx)
        .iter()
        .chain(&main)
        .map(|f| item(f))
        .collect();
    if !listed.is_empty() {
        d.push(Block::List(listed));
    }

    // 4. Charts.
    d.heading(2, vec![text("4. Charts")]);
    d.paragraph(vec![text(
        "Each protocol keeps one colour in every chart; PNG copies sit next to the SVGs.",
    )]);
    let own: Vec<String> = results
        .protocols()
        .into_iter()
        .filter(|p| crate::figures::own_window(results, p).is_some())
        .collect();
    if !own.is_empty() {
        let mut p = code_list(&own);
        p.push(text(format!(
            " runs at a time scale of its own (every scenario time {}×): the charts share axes, so it is left out of them; its numbers are in the matrix and the tables.",
            election_runner::params::K8S_TIME_SCALE
        )));
        d.paragraph(p);
    }
    for c in charts {
        figure(&mut d, &chart_heading(c), &c.caption, &c.svg, &c.title);
    }

    // 5. Traces.
    d.heading(2, vec![text("5. Message-sequence traces")]);
    d.paragraph(vec![text("A lifeline per node (time runs down; idle stretches compressed), an arrow per message coloured by category, ✕ for lost messages, marks for role changes and crashes, walls for partitions, a red line at the fault and a green one at convergence.")]);
    if traces.iter().any(|t| t.timeline.is_some()) {
        d.paragraph(spans("The worst and failing trials also have a timeline below their chart: which node leads and with which epoch, when the cluster has a quorum leader (its gaps after the fault add up to the trial's `unavailable_ms`), and each write of the workload (ok, stale, fenced), with crashes, pauses and link faults shaded."));
    }
    if !trace_note.is_empty() {
        d.paragraph(spans(trace_note));
    }
    // The worst and failing trials stay here; the representative (median) trials of every
    // protocol go to the appendix, keeping this body to one read.
    let (worst, representative): (Vec<&TraceDoc>, Vec<&TraceDoc>) =
        traces.iter().partition(|t| t.timeline.is_some());
    if !representative.is_empty() {
        d.paragraph(vec![
            text(format!(
                "The representative (median) trials, {} traces, are drawn in the ",
                representative.len()
            )),
            link("appendix", "APPENDIX.md#g-representative-traces"),
            text("."),
        ]);
    }
    for t in worst {
        figure(&mut d, &t.heading, &t.caption, &t.file, &t.heading);
        if let Some(tl) = &t.timeline {
            d.push(Block::Figure(Figure {
                path: tl.clone(),
                alt: format!("Timeline: {}", t.heading),
                caption: None,
            }));
        }
    }

    // 6. Method.
    d.heading(2, vec![text("6. Method")]);
    let ran = results.summary.iter().filter(|r| r.ran()).count();
    let skipped: Vec<&SummaryRow> = results.summary.iter().filter(|r| !r.ran()).collect();
    d.paragraph(vec![text(format!(
        "Each trial runs one protocol on an n-node cluster in the deterministic simulator, applies one scenario's faults, and measures the outcome with the simulator's observer, the same code for every protocol. A cell is one (protocol, n, scenario, network{}) combination, run over many seeds.",
        if results.param_keys.is_empty() {
            String::new()
        } else {
            format!(", {}", results.param_keys.join(", "))
        }
    ))]);
    let mut t = Table::new(["", ""]);
    let mut row =
        |what: &str, value: Vec<Inline>| t.rows.push(vec![Cell::text(what), Cell::new(value)]);
    row("protocols", code_list(&results.protocols()));
    let sizes: Vec<String> = results.sizes().iter().map(u32::to_string).collect();
    row("cluster sizes n", vec![text(sizes.join(", "))]);
    row("scenarios", code_list(&results.scenarios()));
    row("network profiles", code_list(&nets));
    if !results.param_keys.is_empty() {
        row("varied parameters", code_list(&results.param_keys));
    }
    row(
        "cells",
        vec![text(format!(
            "{} ({} ran, {} skipped)",
            results.summary.len(),
            ran,
            skipped.len()
        ))],
    );
    row("trials", vec![text(results.trials.len().to_string())]);
    for (what, value) in measured_sources(&results.manifest.config) {
        row(&what, spans(&value));
    }
    row("focus size", vec![text(format!("n = {}", ctx.focus))]);
    d.push(Block::Table(t));
    if !skipped.is_empty() {
        // One line per reason, with the sizes and protocols it covers.
        let mut reasons: Vec<(String, Vec<u32>, Vec<String>)> = Vec::new();
        for r in &skipped {
            let why = r.skipped.clone();
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
        // Reasons that differ only in the scenario named first, over the same sizes and
        // protocols, share one line: "a, b and c: each acts on …".
        struct Merged {
            names: Vec<String>,
            rest: String,
            sizes: Vec<u32>,
            protos: Vec<String>,
        }
        let mut merged: Vec<Merged> = Vec::new();
        for (why, mut sizes, protos) in reasons {
            sizes.sort_unstable();
            let (first, rest) = why.split_once(' ').unwrap_or((why.as_str(), ""));
            match merged.iter_mut().find(|m| {
                m.rest == rest && m.sizes == sizes && m.protos == protos && !rest.is_empty()
            }) {
                Some(m) => m.names.push(first.to_string()),
                None => merged.push(Merged {
                    names: vec![first.to_string()],
                    rest: rest.to_string(),
                    sizes,
                    protos,
                }),
            }
        }
        let mut reasons: Vec<(String, Vec<u32>, Vec<String>)> = merged
            .into_iter()
            .map(
                |Merged {
                     names,
                     rest,
                     sizes,
                     protos,
                 }| {
                    let why = if names.len() == 1 {
                        format!("{} {rest}", names[0])
                    } else {
                        format!("{}: each {rest}", names.join(", "))
                    };
                    (why, sizes, protos)
                },
            )
            .collect();
        let lines: Vec<Vec<Inline>> = reasons
            .iter_mut()
            .map(|(why, sizes, protos)| {
                sizes.sort_unstable();
                let at = if *sizes == all_sizes {
                    "every size".to_string()
                } else {
                    let v: Vec<String> = sizes.iter().map(u32::to_string).collect();
                    format!("n = {}", v.join(", "))
                };
                let mut line = vec![text(format!("{why} ({at}; "))];
                if protos.len() > 3 {
                    line.push(text(format!("{} protocols", protos.len())));
                } else {
                    line.extend(code_list(protos));
                }
                line.push(text(")"));
                line
            })
            .collect();
        let mut p = vec![text("Skipped cells: ")];
        p.extend(joined(lines, "; "));
        p.push(text("."));
        d.paragraph(p);
    }
    d.paragraph(vec![text("Reproduce (the simulator is deterministic: the same commands give byte-identical results and report):")]);
    d.push(Block::Code {
        lang: "sh".into(),
        text: format!(
            "{}\nelection-bench report --results results/{1} --out reports/{1}",
            m.command, m.name
        ),
    });
    d.paragraph(vec![
        text("The resolved configuration, the definition of every metric and every summary table are in the "),
        link("appendix", "APPENDIX.md"),
        text("."),
    ]);

    Documents {
        report: d.to_markdown(),
        // Every section of the old writer ended with a blank line, the last one too: the page
        // keeps it, so a regenerated appendix is byte-identical.
        appendix: {
            let representative: Vec<&TraceDoc> =
                traces.iter().filter(|t| t.timeline.is_none()).collect();
            let mut a = appendix(results, &ctx, &appendix_findings, &representative);
            if let Some((cmp, _)) = baseline {
                cmp.baseline_appendix(&mut a);
            }
            a.to_markdown() + "\n"
        },
    }
}

/// `APPENDIX.md` as a document: the configuration, the glossary, the at-a-glance table, the
/// split-brain lists (`split_lists`, findings with their evidence links), the summary tables
/// and the liveness section.
fn appendix(
    results: &Results,
    ctx: &Ctx,
    split_lists: &[String],
    representative: &[&TraceDoc],
) -> Document {
    let m = &results.manifest;
    let mut d = Document::titled(vec![
        text("Appendix to the design review: "),
        code(m.name.as_str()),
    ]);
    d.paragraph(vec![
        text("The evidence behind "),
        link("REPORT.md", "REPORT.md"),
        text(": the resolved configuration, the metric definitions, the at-a-glance table, where split brain happened, and one summary table per scenario, straight from "),
        code("summary.csv"),
        text("."),
    ]);
    let contents = [
        ("Configuration", "#a-configuration"),
        ("Metrics", "#b-metrics"),
        ("At a glance", "#c-at-a-glance"),
        ("More findings", "#d-more-findings"),
        ("Summary tables", "#e-summary-tables"),
        ("Liveness", "#f-liveness"),
        ("Representative traces", "#g-representative-traces"),
    ];
    let contents = &contents[..if representative.is_empty() { 6 } else { 7 }];
    let mut line = vec![strong("Contents:"), text(" ")];
    line.extend(joined(
        contents.iter().map(|(t, h)| vec![link(*t, *h)]),
        " · ",
    ));
    d.paragraph(line);
    d.heading(2, vec![text("A. Configuration")]);
    d.paragraph(spans("As resolved by the sweep (`manifest.json`): network profiles with their latency distributions, the timing table, seeds, and every parameter."));
    let key_value = |rows: Vec<(String, String)>| {
        let mut t = Table::new(["key", "value"]);
        t.rows = rows
            .into_iter()
            .map(|(a, b)| vec![Cell::new(vec![code(a)]), text_cell(&b)])
            .collect();
        Block::Table(t)
    };
    let mut general = Vec::new();
    match &m.config {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                if let Some((cols, rows)) = records(v) {
                    d.heading(4, vec![code(k.as_str())]);
                    let mut t = Table::new(cols);
                    t.rows = rows
                        .iter()
                        .map(|r| r.iter().map(|c| text_cell(c)).collect())
                        .collect();
                    d.push(Block::Table(t));
                } else if v.is_object() && v.as_object().is_some_and(|o| !o.is_empty()) {
                    let mut rows = Vec::new();
                    flatten("", v, &mut rows);
                    d.heading(4, vec![code(k.as_str())]);
                    d.push(key_value(rows));
                } else {
                    flatten(k, v, &mut general);
                }
            }
        }
        // A manifest's configuration is an object; anything else is listed as one setting.
        other => flatten("config", other, &mut general),
    }
    if !general.is_empty() {
        d.heading(4, vec![text("Other settings")]);
        d.push(key_value(general));
    }
    glossary(&mut d);
    d.heading(2, vec![text("C. At a glance")]);
    at_a_glance(&mut d, ctx);
    by_protocol(&mut d, ctx);
    d.heading(2, vec![text("D. More findings")]);
    if split_lists.is_empty() {
        d.paragraph(vec![text("None beyond the report's.")]);
    } else {
        d.push(Block::List(split_lists.iter().map(|f| item(f)).collect()));
    }
    d.heading(2, vec![text("E. Summary tables")]);
    d.paragraph(spans("One table per scenario, straight from `summary.csv` (values as written there; – is an empty cell). Times in ms, rates as shares of trials."));
    for net in &results.nets() {
        for sc in &results.scenarios() {
            table(&mut d, results, sc, net);
        }
    }
    d.heading(2, vec![text("F. Liveness")]);
    d.paragraph(vec![
        text("Each trial's "),
        code("outcome"),
        text(", as "),
        link("B. Metrics", "#b-metrics"),
        text(" defines it: "),
        code("stable"),
        text(", "),
        code("recovered-after"),
        text(", "),
        code("no-leader"),
        text(", "),
        code("livelock"),
        text(" (these two are liveness failures) or "),
        code("minority-only"),
        text(". Counts of measured trials per cell."),
    ]);
    crate::liveness::section(&mut d, results);
    if !representative.is_empty() {
        d.heading(2, vec![text("G. Representative traces")]);
        d.paragraph(vec![text("For each protocol, the trial whose failover is closest to its cell's median, as a message-sequence chart (read as REPORT.md's section 5 says).")]);
        for t in representative {
            figure(&mut d, &t.heading, &t.caption, &t.file, &t.heading);
        }
    }
    d
}

/// A list item from a finding's Markdown: its sentence, then its nested `  - ` lines.
fn item(f: &str) -> Item {
    let mut lines = f.split("\n  - ");
    Item {
        text: spans(lines.next().unwrap_or_default()),
        items: lines.map(spans).collect(),
    }
}

fn at_a_glance(d: &mut Document, ctx: &Ctx) {
    let results = ctx.results;
    let series = series_for(results, &ctx.net);
    let mut rows = Vec::new();
    for sc in results.scenarios() {
        // A series at a time scale of its own (`k8s-lease`) is not ranked, as in the
        // matrix: its `ranked` is false.
        let cells: Vec<(String, &SummaryRow, bool)> = series
            .iter()
            .filter_map(|se| {
                let key = crate::figures::key_of(se, ctx.focus, &sc, &ctx.net);
                let ranked = crate::figures::own_window(results, &se.protocol).is_none();
                results
                    .cell(&key)
                    .filter(|r| r.ran())
                    .map(|r| (se.label.clone(), r, ranked))
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let best = |stat: Stat| -> Cell {
            cells
                .iter()
                .filter(|c| c.2)
                .filter_map(|(l, r, _)| r.get(stat).map(|v| (l, r, v)))
                .min_by(|a, b| a.2.total_cmp(&b.2))
                .map(|(l, r, _)| {
                    Cell::new(vec![code(l.as_str()), text(format!(" {}", r.raw(stat)))])
                })
                .unwrap_or_else(|| Cell::text("–"))
        };
        let no_split: Vec<Vec<Inline>> = cells
            .iter()
            .filter(|(_, r, _)| r.get(Stat::SplitRate) == Some(0.0))
            .map(|(l, _, _)| vec![code(l.as_str())])
            .collect();
        // A failover only where a fault takes the leader; an outage is not a failover.
        let kind = results.scenario_kind(&sc).unwrap_or_default();
        let failover = if kind.takes_leader {
            best(Stat::FailoverP50)
        } else if kind.cuts_links {
            Cell::text("no failover: an outage")
        } else {
            Cell::text("no failover")
        };
        let never_split = if no_split.is_empty() {
            Cell::text("none")
        } else if no_split.len() == cells.len() {
            Cell::text("all")
        } else {
            Cell::new(joined(no_split, ", "))
        };
        rows.push(vec![
            Cell::new(vec![code(sc.as_str())]),
            failover,
            best(Stat::MsgsMean),
            never_split,
            best(Stat::UnavailableMean),
        ]);
    }
    if rows.is_empty() {
        return;
    }
    d.paragraph(vec![
        text(format!(
        "At n = {}, the best protocol per scenario on each measure (lowest value, as written in ",
        ctx.focus
    )),
        code("summary.csv"),
        text("). Failover time is shown only where a fault crashes or pauses the leader. A protocol run at a time scale of its own (the matrix's unranked rows) is left out of the fastest, fewest and least columns."),
    ]);
    let mut t = Table::new(Vec::<String>::new());
    t.header = [
        "scenario",
        "fastest median failover (`failover_ms_p50`, ms)",
        "fewest election messages (`msgs_election_mean`)",
        "never split-brained",
        "least unavailable (`unavailable_ms_mean`, ms)",
    ]
    .into_iter()
    .map(spans)
    .collect();
    t.rows = rows;
    d.push(Block::Table(t));
}

/// The numbers of the matrix and the guide that sum or count over several cells, one row per
/// protocol series, each as the matrix reads it (its link target,
/// [`findings::by_protocol_target`]).
fn by_protocol(d: &mut Document, ctx: &Ctx) {
    let results = ctx.results;
    let series = series_for(results, &ctx.net);
    let churn = crate::figures::leader_change_scenarios(results, ctx.opts);
    d.heading(4, vec![text(findings::BY_PROTOCOL)]);
    let mut about = vec![text(format!(
        "Per protocol on `{}`: measured trials over every cell and those whose ",
        ctx.net
    ))];
    about.extend([
        code("outcome"),
        text(" is a liveness failure; the cells where two live leaders claimed one epoch ("),
        code("same_epoch_leaders_max"),
        text(" > 0)"),
    ]);
    if !churn.is_empty() {
        about.push(text(format!(
            "; the mean leader changes summed over {} at n = {}",
            churn.join(", "),
            ctx.focus
        )));
    }
    about.push(text(". Values unrounded, as in the summary tables."));
    d.paragraph(about);
    let mut t = Table::new([
        "protocol",
        "trials",
        "liveness failures",
        "cells with same-epoch leaders",
        "leader changes, summed",
    ]);
    for s in &series {
        let (total, bad, _) = matrix::liveness_of(ctx, s);
        let same_epoch = matrix::same_epoch_cells(ctx, s).1.len();
        let churn_sum = findings::churn_total(ctx, s)
            .map_or("–".to_string(), |(v, _)| crate::data::fmt_num(v));
        t.rows.push(vec![
            Cell::new(vec![code(s.label.as_str())]),
            Cell::text(total.to_string()),
            Cell::text(bad.to_string()),
            Cell::text(same_epoch.to_string()),
            Cell::text(churn_sum),
        ]);
    }
    d.push(Block::Table(t));
}

/// Columns of the summary tables: header and statistic.
const TABLE_COLS: [(&str, Stat); 25] = [
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
    ("failover p95", Stat::FailoverP95),
    ("msgs total mean", Stat::MsgsTotalMean),
    ("steady msgs/s", Stat::SteadyRateMean),
    ("stale writes mean", Stat::WritesStaleMean),
    ("stale rate", Stat::StaleRate),
    ("stale window ms mean", Stat::StaleWindowMean),
    ("fenced mean", Stat::WritesFencedMean),
];

fn table(d: &mut Document, results: &Results, scenario: &str, net: &str) {
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
    d.heading(4, vec![text(table_heading(results, scenario, net))]);
    let mut t = Table::new(
        ["protocol", "n"]
            .into_iter()
            .chain(TABLE_COLS.iter().map(|(h, _)| *h)),
    )
    .aligned(
        std::iter::once(Align::Left).chain(std::iter::repeat_n(Align::Right, TABLE_COLS.len() + 1)),
    );
    for r in rows {
        let mut row = vec![
            Cell::new(vec![code(row_label(results, &r.key))]),
            Cell::text(r.key.nodes.to_string()),
        ];
        if !r.skipped.is_empty() {
            row.push(Cell::text(r.raw(Stat::Trials)));
            row.push(Cell::text(format!("skipped: {}", r.skipped)));
            row.extend((2..TABLE_COLS.len()).map(|_| Cell::text("")));
        } else {
            for (_, st) in TABLE_COLS {
                row.push(if st == Stat::SplitCiLo {
                    let (lo, hi) = (r.raw(Stat::SplitCiLo), r.raw(Stat::SplitCiHi));
                    if lo.is_empty() && hi.is_empty() {
                        Cell::text("–")
                    } else {
                        let dash = |v: &str| if v.is_empty() { "–" } else { v }.to_string();
                        Cell::text(format!("{}–{}", dash(lo), dash(hi)))
                    }
                } else {
                    text_cell(r.raw(st))
                });
            }
        }
        t.rows.push(row);
    }
    d.push(Block::Table(t));
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

    /// The glossary is the results' definitions, every one of them, each rendered back to
    /// its own text (nothing in a definition is read as markup it is not).
    #[test]
    fn the_glossary_is_every_definition_of_the_results() {
        use election_runner::results::{Stat as SummaryStat, TERMS, TRIAL_METRIC_DEFS};
        let mut d = Document::new("T");
        glossary(&mut d);
        let md = d.to_markdown();
        for t in TERMS {
            assert!(md.contains(&format!("| {} | {} |\n", t.name, t.definition)));
        }
        for c in TRIAL_METRIC_DEFS {
            assert!(md.contains(&format!("| `{}` | {} |\n", c.name, c.definition)));
        }
        for s in SummaryStat::ALL {
            let row = md
                .lines()
                .find(|l| l.contains(&format!("`{}`", s.column())) && l.contains(s.definition()));
            assert!(row.is_some(), "{} is not in the glossary", s.column());
        }
    }
}
