//! Liveness: the `outcome` of every trial (defined once in the simulator's observer), counted per
//! cell in a sweep's report, and the report of `election-bench explore` with its failing
//! link-failure patterns drawn as small graphs.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{write_chart, Chart, DrawResult, FONT};
use crate::data::{Results, Stat, SummaryRow};
use crate::doc::{code, link, spans, strong, text, Block, Cell, Document, Table};
use crate::error::ReportError;
use election_runner::explore::Pattern;
use election_runner::replay::Flags;

const OUTCOMES: [(Stat, &str); 5] = [
    (Stat::OutcomeStable, "stable"),
    (Stat::OutcomeRecoveredAfter, "recovered-after"),
    (Stat::OutcomeNoLeader, "no-leader"),
    (Stat::OutcomeLivelock, "livelock"),
    (Stat::OutcomeMinorityOnly, "minority-only"),
];

/// Each value once, in the order first seen.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn count(r: &SummaryRow, s: Stat) -> u64 {
    r.get(s).unwrap_or(0.0) as u64
}

/// The headline finding of the liveness section, for the findings list: which cells had a
/// liveness failure (`None` when none did).
pub(crate) fn headline(results: &Results) -> Option<String> {
    let failing: Vec<&SummaryRow> = results
        .summary
        .iter()
        .filter(|r| {
            r.ran() && count(r, Stat::OutcomeNoLeader) + count(r, Stat::OutcomeLivelock) > 0
        })
        .collect();
    if failing.is_empty() {
        return None;
    }
    let (nl, ll): (u64, u64) = failing.iter().fold((0, 0), |(a, b), r| {
        (
            a + count(r, Stat::OutcomeNoLeader),
            b + count(r, Stat::OutcomeLivelock),
        )
    });
    let protocols = distinct(failing.iter().map(|r| r.key.protocol.as_str()));
    Some(format!(
        "**Liveness failures in {} cells** ({}): {nl} trials ended without a quorum leader although one was possible (`no-leader`) and {ll} with quorum leadership forming and breaking without ever holding (`livelock`); each cell, its first failing seed and its replay command are in [the appendix](APPENDIX.md#f-liveness).",
        failing.len(),
        protocols.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
    ))
}

/// Which configurations keep or regain a quorum leader in which shapes: for every scenario in
/// which some cell had a liveness failure, the protocols (with their sizes) whose every measured
/// trial ended `stable` or `recovered-after`, and those with failures and how many (`None` when
/// no cell failed). A finding, so that a reader sees at once which configuration is the fix for
/// which shape.
pub(crate) fn by_shape(results: &Results) -> Option<String> {
    let rows: Vec<&SummaryRow> = results.summary.iter().filter(|r| r.ran()).collect();
    let scenarios = distinct(rows.iter().map(|r| r.key.scenario.as_str()));
    let fails = |r: &SummaryRow| count(r, Stat::OutcomeNoLeader) + count(r, Stat::OutcomeLivelock);
    let mut lines = Vec::new();
    for sc in scenarios {
        let cells: Vec<&&SummaryRow> = rows.iter().filter(|r| r.key.scenario == sc).collect();
        if cells.iter().all(|r| fails(r) == 0) {
            continue;
        }
        // Per protocol: the sizes where every trial recovered, and the failing cells.
        let protocols = distinct(cells.iter().map(|r| r.key.protocol.as_str()));
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for p in protocols {
            let mine: Vec<&&&SummaryRow> = cells.iter().filter(|r| r.key.protocol == p).collect();
            let sizes = |f: &dyn Fn(&SummaryRow) -> bool| {
                mine.iter()
                    .filter(|r| f(r))
                    .map(|r| r.key.nodes.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let recovered =
                |r: &SummaryRow| fails(r) == 0 && count(r, Stat::OutcomeMinorityOnly) == 0;
            let ok = sizes(&recovered);
            if mine.iter().all(|r| recovered(r)) {
                good.push(format!("`{p}` (every size run)"));
            } else if !ok.is_empty() {
                good.push(format!("`{p}` (n = {ok})"));
            }
            // A protocol's failing cells in one clause: their sizes and the counts summed.
            let failing: Vec<&&&SummaryRow> =
                mine.iter().copied().filter(|r| fails(r) > 0).collect();
            if !failing.is_empty() {
                let sum = |stat| failing.iter().map(|r| count(r, stat)).sum::<u64>();
                let measured: u64 = failing.iter().map(|r| r.measured()).sum();
                bad.push(format!(
                    "`{p}` at n = {}: {} `livelock`, {} `no-leader` of {measured}{}",
                    sizes(&|r| fails(r) > 0),
                    sum(Stat::OutcomeLivelock),
                    sum(Stat::OutcomeNoLeader),
                    if failing.len() > 1 { " in all" } else { "" }
                ));
            }
        }
        let good = if good.is_empty() {
            "none".to_string()
        } else {
            good.join(", ")
        };
        lines.push(format!(
            "  - `{sc}`: a quorum leader held or was regained in every trial under {good}; liveness failures under {}.",
            bad.join("; ")
        ));
    }
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "**Which configurations recover in which shapes** (every scenario with a liveness failure; counts in [the appendix](APPENDIX.md#f-liveness)):\n{}",
        lines.join("\n")
    ))
}

/// The sweep report's liveness section: headline findings for every cell that had a liveness
/// failure (with a seed, a replay command and a trace command), then outcome counts per cell.
pub(crate) fn section(d: &mut Document, results: &Results) {
    let rows: Vec<&SummaryRow> = results.summary.iter().filter(|r| r.ran()).collect();
    let failing: Vec<&&SummaryRow> = rows
        .iter()
        .filter(|r| count(r, Stat::OutcomeNoLeader) + count(r, Stat::OutcomeLivelock) > 0)
        .collect();
    if failing.is_empty() {
        d.paragraph(spans("No measured trial ended without a settled quorum leader while one was possible (`outcome` `no-leader` or `livelock`)."));
    } else {
        let mut head = vec![strong(format!(
            "{} of {} cells had a liveness failure",
            failing.len(),
            rows.len()
        ))];
        head.extend(spans(": some trial ended without a quorum leader although one was possible (`no-leader`) or with quorum leadership forming and breaking without ever holding (`livelock`). Each with its first such seed; the sweep's first `livelock` and first `no-leader` trial are drawn in "));
        head.push(link(
            "the report's traces",
            "REPORT.md#5-message-sequence-traces",
        ));
        head.push(text(":"));
        d.paragraph(head);
        let mut items = Vec::new();
        for r in &failing {
            let k = &r.key;
            let mut line = vec![
                strong(k.protocol.as_str()),
                text(format!(", n = {}, ", k.nodes)),
                code(k.scenario.as_str()),
                text(format!(
                    ": {} no-leader and {} livelock of {} trials; ",
                    count(r, Stat::OutcomeNoLeader),
                    count(r, Stat::OutcomeLivelock),
                    r.measured()
                )),
            ];
            let seed = results
                .trials_of(k)
                .into_iter()
                .find(|t| t.outcome.is_failure());
            if let Some(t) = seed {
                // The sweep's fixed and varied parameters, as a replay needs them.
                let sets = crate::findings::replay_params(results, r, None);
                let replay = |command| {
                    crate::findings::replay(results, k, command, Flags::Short, t.seed)
                        .sets(sets.iter().map(|(key, value)| (key, value)))
                };
                let svg = format!(
                    "{}-{}-{}.svg",
                    k.scenario,
                    k.protocol.replace('+', "_"),
                    t.seed
                );
                line.extend([
                    text(format!("seed {} ({}) — ", t.seed, t.outcome.name())),
                    code(replay("run").to_string()),
                    text(", trace: "),
                    code(replay("trace").arg("--out", svg).to_string()),
                ]);
            }
            items.push(line);
        }
        d.push(Block::list(items));
    }
    let mut t = Table::new([
        "protocol",
        "n",
        "scenario",
        "net",
        "measured",
        "stable",
        "recovered-after",
        "no-leader",
        "livelock",
        "minority-only",
        "most timeouts to recover",
    ]);
    for r in &rows {
        let k = &r.key;
        let mut row = vec![
            Cell::text(k.protocol.as_str()),
            Cell::text(k.nodes.to_string()),
            Cell::text(k.scenario.as_str()),
            Cell::text(k.net.as_str()),
            Cell::text(r.measured().to_string()),
        ];
        for (stat, _) in OUTCOMES {
            let v = count(r, stat).to_string();
            let failure = matches!(stat, Stat::OutcomeNoLeader | Stat::OutcomeLivelock);
            row.push(if failure && v != "0" {
                Cell::new(vec![strong(v)])
            } else {
                Cell::text(v)
            });
        }
        row.push(Cell::text(r.raw(Stat::RecoveredTimeoutsMax)));
        t.rows.push(row);
    }
    d.push(Block::Table(t));
}

/// One failing pattern to draw.
#[derive(Clone, Debug)]
struct Drawn {
    protocol: String,
    pattern: Pattern,
    verdict: String,
    seed: String,
}

/// Small graphs of link-failure patterns: one panel each, nodes on a circle (the leader, position
/// `n`, filled), a grey line for a link up both ways, a red arrow for a link up one way only (the
/// direction that still works), nothing for a link cut both ways.
struct Graphs {
    items: Vec<Drawn>,
}

const PANEL: (u32, u32) = (230, 250);
const COLS: usize = 4;

impl Chart for Graphs {
    fn size(&self) -> (u32, u32) {
        let rows = self.items.len().div_ceil(COLS).max(1) as u32;
        (PANEL.0 * COLS as u32, PANEL.1 * rows)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        for (i, d) in self.items.iter().enumerate() {
            let x0 = (i % COLS) as i32 * PANEL.0 as i32;
            let y0 = (i / COLS) as i32 * PANEL.1 as i32;
            draw_pattern(root, (x0, y0), d)?;
        }
        Ok(())
    }
}

#[allow(clippy::needless_range_loop)] // positions index the link matrix and the layout alike
fn draw_pattern<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    d: &Drawn,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let p = &d.pattern;
    let n = p.n as usize;
    let title = TextStyle::from((FONT, 13).into_font().style(FontStyle::Bold)).color(&BLACK);
    let small = TextStyle::from((FONT, 11).into_font()).color(&BLACK);
    root.draw(&Text::new(
        format!("{} · {}", d.protocol, d.verdict),
        (x0 + 8, y0 + 6),
        title,
    ))?;
    root.draw(&Text::new(
        format!("{} · seed {}", p.name(), d.seed),
        (x0 + 8, y0 + 24),
        small.clone(),
    ))?;
    let (cx, cy, rad) = (x0 as f64 + 115.0, y0 as f64 + 140.0, 75.0);
    // Position k at angle: the leader (n) on top, the others clockwise in order.
    // A store pattern's store (position n + 1) sits in the middle of the members.
    let at = |k: usize| {
        if k == n + 1 {
            return (cx as i32, cy as i32);
        }
        let a =
            -std::f64::consts::FRAC_PI_2 + 2.0 * std::f64::consts::PI * (k % n) as f64 / n as f64;
        ((cx + rad * a.cos()) as i32, (cy + rad * a.sin()) as i32)
    };
    let positions = p.positions() as usize;
    let mut up = vec![vec![true; positions]; positions];
    for (a, b) in p.cut_links() {
        up[a as usize - 1][b as usize - 1] = false;
    }
    let red = RGBColor(200, 40, 40);
    for a in 0..positions {
        for b in a + 1..positions {
            if p.store && b != n {
                // A store pattern's members talk only through the store: no member links.
                continue;
            }
            let (ab, ba) = (up[a][b], up[b][a]);
            let (pa, pb) = (at(a + 1), at(b + 1));
            if ab && ba {
                root.draw(&PathElement::new(
                    vec![pa, pb],
                    RGBColor(120, 120, 120).stroke_width(2),
                ))?;
            } else if ab || ba {
                let (from, to) = if ab { (pa, pb) } else { (pb, pa) };
                arrow(root, from, to, red)?;
            }
        }
    }
    for k in 1..=positions {
        let c = at(k);
        let leader = k == n;
        root.draw(&Circle::new(c, 13, ShapeStyle::from(&WHITE).filled()))?;
        if leader {
            root.draw(&Circle::new(
                c,
                13,
                ShapeStyle::from(&RGBColor(40, 90, 170)).filled(),
            ))?;
        }
        root.draw(&Circle::new(c, 13, BLACK.stroke_width(2)))?;
        let label = TextStyle::from((FONT, 13).into_font().style(FontStyle::Bold))
            .color(if leader { &WHITE } else { &BLACK })
            .pos(Pos::new(HPos::Center, VPos::Center));
        let name = if k == n + 1 {
            "S".to_string()
        } else {
            k.to_string()
        };
        root.draw(&Text::new(name, c, label))?;
    }
    Ok(())
}

/// A red arrow from `a` to `b`, stopping at the target node's rim.
fn arrow<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    colour: RGBColor,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / len, dy / len);
    let tip = (
        (b.0 as f64 - ux * 15.0) as i32,
        (b.1 as f64 - uy * 15.0) as i32,
    );
    let start = (
        (a.0 as f64 + ux * 15.0) as i32,
        (a.1 as f64 + uy * 15.0) as i32,
    );
    root.draw(&PathElement::new(vec![start, tip], colour.stroke_width(2)))?;
    let (px, py) = (-uy, ux);
    let base = (tip.0 as f64 - ux * 10.0, tip.1 as f64 - uy * 10.0);
    let head = vec![
        tip,
        ((base.0 + px * 5.0) as i32, (base.1 + py * 5.0) as i32),
        ((base.0 - px * 5.0) as i32, (base.1 - py * 5.0) as i32),
    ];
    root.draw(&Polygon::new(head, colour.filled()))?;
    Ok(())
}

/// What [`render_explore`] wrote.
#[derive(Debug)]
pub struct ExploreReport {
    /// `REPORT.md`.
    pub report: PathBuf,
    /// Every file written (the report and the graphs).
    pub files: Vec<PathBuf>,
}

/// A CSV file's header and rows, as text (an error names the file).
pub(crate) fn read_rows(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), ReportError> {
    let text = fs::read_to_string(path).map_err(|e| ReportError::io(path, e))?;
    let mut rdr = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header = rdr
        .headers()
        .map_err(|e| ReportError::io(path, std::io::Error::other(e)))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for r in rdr.records() {
        let r = r.map_err(|e| ReportError::io(path, std::io::Error::other(e)))?;
        rows.push(r.iter().map(str::to_string).collect());
    }
    Ok((header, rows))
}

/// The explore page's findings: per protocol, over every family and size it ran, the share of
/// patterns (among those where a quorum leader is possible) under which it kept or regained a
/// quorum leader, how many of those left members stranded, and how many ended in each kind of
/// liveness failure (or that it had none). `c` holds the summary's column
/// indices: protocol, nodes, patterns run, stable, recovered-after, with stranded, no-leader,
/// livelock.
/// `weighted`: the family, `covers_with_majority` and `covers_failing` columns.
fn explore_findings(
    summary: &[Vec<String>],
    c: [usize; 8],
    weighted: Option<(usize, usize, usize)>,
) -> String {
    let [cp, cn, cmaj, cst, crec, cstr, cnl, cll] = c;
    let num = |r: &Vec<String>, i: usize| r[i].parse::<u64>().unwrap_or(0);
    let protocols = distinct(summary.iter().map(|r| r[cp].as_str()));
    let mut s = String::from("## Findings\n\n");
    let pct = |a: u64, b: u64| {
        if b == 0 {
            "0 %".to_string()
        } else {
            format!("{:.1} %", 100.0 * a as f64 / b as f64)
        }
    };
    for p in &protocols {
        let rows: Vec<&Vec<String>> = summary.iter().filter(|r| r[cp] == *p).collect();
        let sum = |i: usize| rows.iter().map(|r| num(r, i)).sum::<u64>();
        let (run, ok, stranded, nl, ll) = (
            sum(cmaj),
            sum(cst) + sum(crec),
            sum(cstr),
            sum(cnl),
            sum(cll),
        );
        let sizes: Vec<&str> = {
            let mut v: Vec<&str> = rows.iter().map(|r| r[cn].as_str()).collect();
            v.dedup();
            v
        };
        let _ = write!(
            s,
            "- **{p}** (n = {}): kept or regained a quorum leader under {ok} of {run} patterns run ({})",
            sizes.join(", "),
            pct(ok, run)
        );
        if stranded > 0 {
            let _ = write!(
                s,
                ", {stranded} of them with members stranded from it in some seed"
            );
        }
        if nl + ll == 0 {
            s.push_str("; no liveness failure.");
        } else {
            let _ = write!(
                s,
                "; failed under {} ({}): `livelock` {ll} (quorum leadership forming and breaking to the end), `no-leader` {nl} (no quorum leader won at the end).",
                nl + ll,
                pct(nl + ll, run)
            );
        }
        // A class of isomorphic patterns counts once above; counted in patterns, each class
        // stands for its multiplicity.
        if let Some((_, cmw, cfw)) =
            weighted.filter(|(cf, _, _)| rows.iter().any(|r| r[*cf].ends_with("-canonical")))
        {
            let (mw, fw) = (sum(cmw), sum(cfw));
            let _ = write!(
                s,
                " Above, a class of isomorphic patterns counts once; counted in patterns, each class by its size, {fw} of the {mw} that leave a quorum possible failed ({}).",
                pct(fw, mw)
            );
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The report of `election-bench explore`: `out_dir/REPORT.md` with the outcome counts per
/// protocol and family and, per protocol, its smallest failing patterns (at most `per_protocol`)
/// drawn as small graphs in `out_dir/charts/failing-<protocol>.svg` (and `.png`).
pub fn render_explore(
    results_dir: &Path,
    out_dir: &Path,
    per_protocol: usize,
    png: bool,
) -> Result<ExploreReport, ReportError> {
    let (sh, summary) = read_rows(&results_dir.join("summary.csv"))?;
    let (fh, failing) = read_rows(&results_dir.join("failing.csv"))?;
    let col = |h: &[String], name: &str| -> Result<usize, ReportError> {
        h.iter().position(|c| c == name).ok_or_else(|| {
            ReportError::io(
                results_dir.join("summary.csv"),
                std::io::Error::other(format!("no column {name}")),
            )
        })
    };
    let charts = out_dir.join("charts");
    fs::create_dir_all(&charts).map_err(|e| ReportError::io(&charts, e))?;
    // Graphs of an earlier run for a protocol that no longer fails would be left behind.
    for entry in fs::read_dir(&charts).map_err(|e| ReportError::io(&charts, e))? {
        let path = entry.map_err(|e| ReportError::io(&charts, e))?.path();
        let stale = path
            .file_name()
            .and_then(|f| f.to_str())
            .is_some_and(|f| f.starts_with("failing-"));
        if stale {
            fs::remove_file(&path).map_err(|e| ReportError::io(&path, e))?;
        }
    }
    let mut files = Vec::new();
    let mut s = String::new();
    s.push_str("# Exploring link failures\n\n");
    let _ = write!(
        s,
        "Generated by `election-bench explore` from `{}/` (definitions in `results/README.md`). ",
        results_dir.display()
    );
    s.push_str("Each pattern is a set of one-way links cut among the positions of a settled cluster — position *n* is the leader when the pattern is applied, positions 1..n−1 the other nodes in id order — applied at the fault instant and kept to the end. Only patterns that leave some node **quorum-connected** (linked both ways, directly, to enough others to make a majority with itself: what a quorum leader needs) are run, so `no-leader` (no quorum leader formed after the fault) and `livelock` (quorum leadership formed but never held ten election timeouts) are liveness failures. A **quorum leader** is a leader that a majority of the members name over links up both ways: it commits and serves, even while members that cannot reach it are **stranded** (counted apart: a working cluster with stranded members is not a liveness failure, but their clients are stuck). A pattern's verdict is its worst outcome over its seeds. Directed 5-node patterns, and symmetric 6- and 7-node ones, are one per class up to a permutation of the followers (isomorphism with the leader marked; the class's smallest mask stands for it, its size is its **multiplicity**) for the protocols whose behaviour does not depend on ids (Raft, raft-rs), and a uniform **sample** for those whose ids matter (the bully's priorities, the ring's order, Omni-Paxos's ballot tie-breaks, a Raft with learners or per-node timing). A protocol with a store (the lease, whose members talk only through it) is explored on **store patterns** instead: the links between each member and the store (drawn in the middle, `S`), every symmetric and every directed one; cuts among members would change nothing for it.\n\n");
    s.push_str("## Verdicts per protocol\n\n`stable` and `recovered-after` count patterns (or classes) under which a quorum leader held (or was regained) to the end in every seed; the next column says how many of those left members stranded in some seed. `no-leader` and `livelock` are the patterns without a working leader at the end. `covers` is how many patterns the rows stand for (a canonical family's classes stand for every pattern), and the failing share counts each class by its size: of the patterns (not classes) that leave a quorum possible.\n\n| protocol | n | family | patterns | covers | quorum possible | seeds | stable | recovered-after | of which with stranded members | no-leader | livelock | failing share |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let (cp, cn, cf, cs, cpat, cmaj, cseeds) = (
        col(&sh, "protocol")?,
        col(&sh, "nodes")?,
        col(&sh, "family")?,
        col(&sh, "sampled")?,
        col(&sh, "patterns")?,
        col(&sh, "with_majority")?,
        col(&sh, "seeds")?,
    );
    let (cst, crec, cnl, cll, cstr) = (
        col(&sh, "stable")?,
        col(&sh, "recovered_after")?,
        col(&sh, "no_leader")?,
        col(&sh, "livelock")?,
        col(&sh, "with_stranded")?,
    );
    let (ccov, ccovm, ccovf) = (
        col(&sh, "covers")?,
        col(&sh, "covers_with_majority")?,
        col(&sh, "covers_failing")?,
    );
    // One CSV policy for every reader: a count that is not a whole number is an error naming
    // the file, line, column and value (never read as 0).
    for (j, r) in summary.iter().enumerate() {
        for c in [
            cn, cpat, cmaj, cseeds, cst, crec, cnl, cll, cstr, ccov, ccovm, ccovf,
        ] {
            if r[c].parse::<u64>().is_err() {
                return Err(ReportError::Value {
                    path: results_dir.join("summary.csv"),
                    // The header is line 1 and no field spans lines.
                    line: j as u64 + 2,
                    column: sh[c].clone(),
                    value: r[c].clone(),
                    reason: "expected a whole number".into(),
                });
            }
        }
    }
    for r in &summary {
        let num = |i: usize| r[i].parse::<f64>().unwrap_or(0.0);
        let share = if num(ccovm) > 0.0 {
            num(ccovf) / num(ccovm)
        } else {
            0.0
        };
        let family = if r[cs] == "true" {
            format!("{} (sample)", r[cf])
        } else {
            r[cf].clone()
        };
        let bold = |v: &str| {
            if v != "0" {
                format!("**{v}**")
            } else {
                v.to_string()
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} % of {} |",
            r[cp],
            r[cn],
            family,
            r[cpat],
            r[ccov],
            r[cmaj],
            r[cseeds],
            r[cst],
            r[crec],
            r[cstr],
            bold(&r[cnl]),
            bold(&r[cll]),
            100.0 * share,
            r[ccovm]
        );
    }
    s.push('\n');
    s.push_str(&explore_findings(
        &summary,
        [cp, cn, cmaj, cst, crec, cstr, cnl, cll],
        Some((cf, ccovm, ccovf)),
    ));
    let (fp, fpat, fver, fseed, fcut, fcuts, freplay, fmult) = (
        col(&fh, "protocol")?,
        col(&fh, "pattern")?,
        col(&fh, "verdict")?,
        col(&fh, "seed")?,
        col(&fh, "cut")?,
        col(&fh, "cuts")?,
        col(&fh, "replay")?,
        col(&fh, "multiplicity")?,
    );
    let protocols = distinct(summary.iter().map(|r| r[cp].as_str()));
    s.push_str("## Smallest failing patterns\n\nPer protocol, the failing patterns with the fewest cut links (`failing.csv` lists them all, smallest first). In the graphs the leader is the filled node; a grey line is a link up both ways, a red arrow a link that works only in the arrow's direction, and no line a link cut both ways.\n\n");
    for proto in &protocols {
        let rows: Vec<&Vec<String>> = failing.iter().filter(|r| &r[fp] == proto).collect();
        let _ = writeln!(s, "### {proto}\n");
        if rows.is_empty() {
            s.push_str("No failing pattern.\n\n");
            continue;
        }
        let shown: Vec<&&Vec<String>> = rows.iter().take(per_protocol).collect();
        let items: Vec<Drawn> = shown
            .iter()
            .filter_map(|r| {
                Some(Drawn {
                    protocol: proto.to_string(),
                    pattern: Pattern::parse(&r[fpat])?,
                    verdict: r[fver].clone(),
                    seed: r[fseed].clone(),
                })
            })
            .collect();
        let stem = format!("failing-{}", proto.replace(['+', '='], "_"));
        files.extend(write_chart(&Graphs { items }, &charts, &stem, png)?);
        let _ = writeln!(
            s,
            "{} failing patterns in all.\n\n![{proto}: smallest failing patterns](charts/{stem}.svg)\n",
            rows.len()
        );
        s.push_str("| pattern | cuts | links cut (from->to, positions) | verdict | patterns in its class | replay |\n|---|---|---|---|---|---|\n");
        for r in shown {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | `{}` |",
                r[fpat], r[fcuts], r[fcut], r[fver], r[fmult], r[freplay]
            );
        }
        s.push('\n');
    }
    fs::create_dir_all(out_dir).map_err(|e| ReportError::io(out_dir, e))?;
    let report = out_dir.join("REPORT.md");
    fs::write(&report, s).map_err(|e| ReportError::io(&report, e))?;
    files.push(report.clone());
    Ok(ExploreReport { report, files })
}
