//! `reports/reference/`: how close our Raft model is to the production libraries, from the
//! differential sweep `election-bench reference` runs into `results/reference/` (its pairs and
//! rules are defined once in [`election_runner::reference`]).
//!
//! # The test
//!
//! Every comparison is [`crate::compare`]'s: per cell (size, scenario) and metric, B − A with
//! a seeded two-sample bootstrap interval, significant when the interval excludes 0 and the
//! change is at least [`MIN_CHANGE`] of A. A pairing makes hundreds of such tests, so each
//! comparison's interval is Bonferroni-corrected: its level is `1 − ERROR / m` for its `m`
//! tests, which keeps the chance of even one false difference per comparison at about
//! [`ERROR`] (with [`RESAMPLES`] resamples the interval's ends are the extreme resamples:
//! conservative, never looser).
//!
//! # The verdict per difference
//!
//! A significant difference of the as-shipped pair (our model against the library as each
//! ships) is:
//! - **explained** when the same (cell, metric) is not significant in the matched pair (our
//!   model with the library's rules, the library without its driver's artefacts); it is
//!   attributed to every rule whose isolating pair shows a significant change of the same
//!   sign there (or to "the rules together" when none does alone);
//! - **explained by a mechanism** (pairings without a matched pair) when a named mechanism
//!   claims its metric, direction and scenario;
//! - **unexplained** otherwise. Every significant difference of the matched pair is
//!   unexplained too: a rule not yet modelled, or a bug.
//!
//! `election-bench reference` exits 1 when any difference is unexplained, so CI catches a
//! change that moves our model away from the libraries.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use election_runner::reference::{Pairing, Rule, PAIRINGS};

use crate::compare::{compare_results, Change, CompareOptions};
use crate::data::{fmt_num, CellKey, Results};
use crate::doc::{code, text, Align, Block, Cell, Document, Table};
use crate::error::ReportError;

/// The chance of one false difference per comparison (Bonferroni).
pub const ERROR: f64 = 0.05;
/// Bootstrap resamples per test.
pub const RESAMPLES: u32 = 4_000;
/// The smallest change counted, as a fraction of A's value.
pub const MIN_CHANGE: f64 = 0.05;

/// Which comparison of a pairing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pair {
    /// Our model against the library, as each ships.
    Shipped,
    /// Our model with the library's rules against the library without its artefacts.
    Matched,
    /// One rule alone.
    Isolating(&'static str),
}

/// One comparison of two specs of the reference results.
#[derive(Clone, Debug)]
pub struct Compared {
    /// Which comparison.
    pub pair: Pair,
    /// A's spec.
    pub a: String,
    /// B's spec.
    pub b: String,
    /// The Bonferroni-corrected level.
    pub level: f64,
    /// Every tested (cell, metric).
    pub changes: Vec<Change>,
}

impl Compared {
    /// The significant changes.
    pub fn significant(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.significant)
    }

    fn find(&self, key: &(u32, String, String, &'static str)) -> Option<&Change> {
        self.changes.iter().find(|c| &slot(c) == key)
    }
}

/// What a (cell, metric) is, without the protocol.
fn slot(c: &Change) -> (u32, String, String, &'static str) {
    (
        c.cell.nodes,
        c.cell.scenario.clone(),
        c.cell.net.clone(),
        c.metric.name(),
    )
}

/// The verdict on one significant difference.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Gone in the matched pair; the rules that move it alone (empty: only together).
    Explained(Vec<&'static str>),
    /// Claimed by a named mechanism.
    Mechanism(&'static str),
    /// Neither.
    Unexplained,
}

/// One difference on the page.
#[derive(Clone, Debug)]
pub struct Difference {
    /// The comparison it comes from (as shipped or matched).
    pub pair: Pair,
    /// The change.
    pub change: Change,
    /// The verdict.
    pub verdict: Verdict,
}

/// A pairing's comparisons and verdicts.
#[derive(Clone, Debug)]
pub struct PairingResult {
    /// The pairing.
    pub pairing: &'static Pairing,
    /// As shipped, matched (if any), then one per rule.
    pub compared: Vec<Compared>,
    /// Every significant difference of the as-shipped and matched pairs, with its verdict.
    pub differences: Vec<Difference>,
}

impl PairingResult {
    /// Tests of the as-shipped pair.
    pub fn tests(&self) -> usize {
        self.compared[0].changes.len()
    }
    /// Significant differences as shipped.
    pub fn shipped(&self) -> usize {
        self.compared[0].significant().count()
    }
    /// Significant differences of the matched pair (`None` without one).
    pub fn matched(&self) -> Option<usize> {
        self.compared
            .iter()
            .find(|c| c.pair == Pair::Matched)
            .map(|c| c.significant().count())
    }
    /// Unexplained differences.
    pub fn unexplained(&self) -> usize {
        self.differences
            .iter()
            .filter(|d| d.verdict == Verdict::Unexplained)
            .count()
    }
}

/// Every pairing analysed.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The results directory.
    pub dir: PathBuf,
    /// The command that made the results.
    pub command: String,
    /// Per pairing, in [`PAIRINGS`] order.
    pub pairings: Vec<PairingResult>,
}

impl Analysis {
    /// Unexplained differences over every pairing.
    pub fn unexplained(&self) -> usize {
        self.pairings.iter().map(PairingResult::unexplained).sum()
    }
}

fn compare_specs(r: &Results, pair: Pair, a: &str, b: &str) -> Result<Compared, ReportError> {
    let (ra, rb) = (r.only_protocol(a), r.only_protocol(b));
    for (spec, side) in [(a, &ra), (b, &rb)] {
        if side.summary.is_empty() {
            return Err(ReportError::Usage(format!(
                "{}: no cells of `{spec}`; these results are not the reference sweep's (run `election-bench reference`)",
                r.dir.display()
            )));
        }
    }
    let mut opts = CompareOptions {
        resamples: 100,
        min_change: MIN_CHANGE,
        png: false,
        ignore: vec!["protocol".to_string()],
        ..CompareOptions::default()
    };
    // First count the tests (cheaply), then test at the corrected level.
    let m = compare_results(&ra, &rb, &opts)?.changes.len().max(1);
    opts.level = 1.0 - ERROR / m as f64;
    opts.resamples = RESAMPLES;
    let cmp = compare_results(&ra, &rb, &opts)?;
    Ok(Compared {
        pair,
        a: a.to_string(),
        b: b.to_string(),
        level: opts.level,
        changes: cmp.changes,
    })
}

fn sign(c: &Change) -> f64 {
    c.diff().signum()
}

/// Analyses the reference results in `dir`.
pub fn analyse(dir: &Path) -> Result<Analysis, ReportError> {
    let r = Results::load(dir)?;
    let mut pairings = Vec::new();
    for p in &PAIRINGS {
        let (m, l) = p.shipped();
        let mut compared = vec![compare_specs(&r, Pair::Shipped, &m, &l)?];
        if let Some((m, l)) = p.matched() {
            compared.push(compare_specs(&r, Pair::Matched, &m, &l)?);
        }
        for rule in p.rules {
            let (a, b) = p.isolating(rule);
            compared.push(compare_specs(&r, Pair::Isolating(rule.name), &a, &b)?);
        }
        let differences = verdicts(p, &compared);
        pairings.push(PairingResult {
            pairing: p,
            compared,
            differences,
        });
    }
    Ok(Analysis {
        dir: dir.to_path_buf(),
        command: r.manifest.command.clone(),
        pairings,
    })
}

fn verdicts(p: &'static Pairing, compared: &[Compared]) -> Vec<Difference> {
    let shipped = &compared[0];
    let matched = compared.iter().find(|c| c.pair == Pair::Matched);
    let isolating: Vec<(&'static Rule, &Compared)> = p
        .rules
        .iter()
        .filter_map(|r| {
            compared
                .iter()
                .find(|c| c.pair == Pair::Isolating(r.name))
                .map(|c| (r, c))
        })
        .collect();
    let mut out = Vec::new();
    for c in shipped.significant() {
        let key = slot(c);
        let verdict = if let Some(matched) = matched {
            let gone = matched.find(&key).is_none_or(|m| !m.significant);
            if gone {
                let rules = isolating
                    .iter()
                    .filter(|(_, iso)| {
                        iso.find(&key)
                            .is_some_and(|x| x.significant && sign(x) == sign(c))
                    })
                    .map(|(r, _)| r.name)
                    .collect();
                Verdict::Explained(rules)
            } else {
                // Still there with the rules matched: listed with the matched pair's
                // differences below, as unexplained.
                Verdict::Unexplained
            }
        } else {
            let scenario = c.cell.scenario.as_str();
            match p.mechanisms.iter().find(|m| {
                m.metrics.contains(&c.metric.name())
                    && f64::from(m.sign) == sign(c)
                    && m.scenarios.iter().any(|s| *s == "*" || *s == scenario)
            }) {
                Some(m) => Verdict::Mechanism(m.name),
                None => Verdict::Unexplained,
            }
        };
        out.push(Difference {
            pair: Pair::Shipped,
            change: c.clone(),
            verdict,
        });
    }
    if let Some(matched) = matched {
        for c in matched.significant() {
            // Already listed from the as-shipped pair when it was significant there too.
            let listed = out
                .iter()
                .any(|d| slot(&d.change) == slot(c) && d.verdict == Verdict::Unexplained);
            if !listed {
                out.push(Difference {
                    pair: Pair::Matched,
                    change: c.clone(),
                    verdict: Verdict::Unexplained,
                });
            }
        }
    }
    out
}

fn cell_name(k: &CellKey) -> String {
    format!("n={} {}", k.nodes, k.scenario)
}

fn interval(c: &Change) -> String {
    format!("[{}, {}]", fmt_num(c.lo), fmt_num(c.hi))
}

fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::Explained(rules) if rules.is_empty() => "explained: the rules together".into(),
        Verdict::Explained(rules) => format!("explained: {}", rules.join(", ")),
        Verdict::Mechanism(m) => format!("explained: {m}"),
        Verdict::Unexplained => "UNEXPLAINED".into(),
    }
}

impl Analysis {
    /// The page.
    pub fn document(&self) -> Document {
        let mut d = Document::new("How close is our Raft to the libraries?");
        d.paragraph(vec![
            text("Our model (`crates/raft`) against the production libraries run in the same simulator, under the same faults, seeds, network and node time: tikv's raft-rs (`crates/raftrs`) and Omni-Paxos (`crates/omnipaxos`). Made by "),
            code(&self.command),
            text(format!(
                " (the pairings and rules: `crates/runner/src/reference.rs`). Each comparison tests every (size, scenario, metric) with `compare`'s bootstrap, Bonferroni-corrected per comparison (at most a {} % chance of one false difference in it), counting changes of at least {} %.",
                fmt_num(ERROR * 100.0),
                fmt_num(MIN_CHANGE * 100.0)
            )),
        ]);
        let mut t = Table::new([
            "pairing",
            "model",
            "library",
            "tests",
            "differences as shipped",
            "with the rule set matched",
            "unexplained",
        ])
        .aligned([
            Align::Left,
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ]);
        for pr in &self.pairings {
            t.rows.push(vec![
                Cell::text(pr.pairing.title),
                Cell::new(vec![code(pr.pairing.model)]),
                Cell::new(vec![code(pr.pairing.library)]),
                Cell::text(pr.tests().to_string()),
                Cell::text(pr.shipped().to_string()),
                Cell::text(
                    pr.matched()
                        .map_or("no matched rule set".into(), |m| m.to_string()),
                ),
                Cell::text(pr.unexplained().to_string()),
            ]);
        }
        d.push(Block::Table(t));
        for pr in &self.pairings {
            d.heading(2, vec![text(pr.pairing.title)]);
            let (m, l) = pr.pairing.shipped();
            let mut intro = vec![
                text("As shipped: "),
                code(m),
                text(" against "),
                code(l),
                text(format!(
                    ": {} of {} tests differ.",
                    pr.shipped(),
                    pr.tests()
                )),
            ];
            if let (Some((mm, ml)), Some(n)) = (pr.pairing.matched(), pr.matched()) {
                intro.extend([
                    text(" With the rules matched, "),
                    code(mm),
                    text(" against "),
                    code(ml),
                    text(format!(": {n} differ.")),
                ]);
            }
            d.paragraph(intro);
            if !pr.pairing.rules.is_empty() {
                let mut rt = Table::new(["rule", "option", "side", "what differs", "moves alone"])
                    .aligned([
                        Align::Left,
                        Align::Left,
                        Align::Left,
                        Align::Left,
                        Align::Right,
                    ]);
                for r in pr.pairing.rules {
                    let iso = pr
                        .compared
                        .iter()
                        .find(|c| c.pair == Pair::Isolating(r.name));
                    rt.rows.push(vec![
                        Cell::text(r.name),
                        Cell::new(vec![code(r.option)]),
                        Cell::text(match r.side {
                            election_runner::reference::Side::Model => "our model",
                            election_runner::reference::Side::Library => "the library",
                        }),
                        Cell::text(r.sentence),
                        Cell::text(iso.map_or(0, |c| c.significant().count()).to_string()),
                    ]);
                }
                d.push(Block::Table(rt));
            }
            if !pr.pairing.mechanisms.is_empty() {
                let mut mt = Table::new(["mechanism", "what differs", "explains"]);
                for m in pr.pairing.mechanisms {
                    mt.rows.push(vec![
                        Cell::text(m.name),
                        Cell::text(m.sentence),
                        Cell::text(format!(
                            "{} {} in {}",
                            m.metrics.join(", "),
                            if m.sign > 0 { "higher" } else { "lower" },
                            m.scenarios.join(", ")
                        )),
                    ]);
                }
                d.push(Block::Table(mt));
            }
            if pr.differences.is_empty() {
                d.paragraph(vec![text("No significant difference.")]);
                continue;
            }
            let mut dt = Table::new([
                "pair",
                "cell",
                "metric",
                "model",
                "library",
                "interval of the difference",
                "verdict",
            ])
            .aligned([
                Align::Left,
                Align::Left,
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
            ]);
            for diff in &pr.differences {
                let c = &diff.change;
                dt.rows.push(vec![
                    Cell::text(match diff.pair {
                        Pair::Shipped => "as shipped",
                        Pair::Matched => "matched",
                        Pair::Isolating(_) => "one rule",
                    }),
                    Cell::text(cell_name(&c.cell)),
                    Cell::new(vec![code(c.metric.name())]),
                    Cell::text(fmt_num(c.a)).sorted_by(c.a),
                    Cell::text(fmt_num(c.b)).sorted_by(c.b),
                    Cell::text(interval(c)),
                    Cell::text(verdict_text(&diff.verdict)),
                ]);
            }
            d.push(Block::Table(dt));
        }
        d
    }

    /// `differences.csv`: every difference on the page, one row each.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "pairing,pair,model,library,nodes,scenario,net,metric,model_value,library_value,diff_lo,diff_hi,level,verdict\n",
        );
        for pr in &self.pairings {
            for diff in &pr.differences {
                let c = &diff.change;
                let cmp = pr
                    .compared
                    .iter()
                    .find(|x| x.pair == diff.pair)
                    .expect("a difference comes from a comparison");
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(pr.pairing.title),
                    match diff.pair {
                        Pair::Shipped => "shipped",
                        Pair::Matched => "matched",
                        Pair::Isolating(_) => "isolating",
                    },
                    csv_field(&cmp.a),
                    csv_field(&cmp.b),
                    c.cell.nodes,
                    c.cell.scenario,
                    c.cell.net,
                    c.metric.name(),
                    fmt_num(c.a),
                    fmt_num(c.b),
                    fmt_num(c.lo),
                    fmt_num(c.hi),
                    cmp.level,
                    csv_field(&verdict_text(&diff.verdict)),
                );
            }
        }
        s
    }

    /// `closeness.csv`: one row per pairing, for the default report's guide.
    pub fn closeness_csv(&self) -> String {
        let mut s = String::from(
            "model,library,tests,differences_shipped,differences_matched,unexplained\n",
        );
        for pr in &self.pairings {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                pr.pairing.model,
                pr.pairing.library,
                pr.tests(),
                pr.shipped(),
                pr.matched().map_or(String::new(), |m| m.to_string()),
                pr.unexplained()
            );
        }
        s
    }
}

/// One row of `closeness.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Closeness {
    /// Our model's spec.
    pub model: String,
    /// The library's spec.
    pub library: String,
    /// Tests of the as-shipped pair.
    pub tests: usize,
    /// Significant differences as shipped.
    pub shipped: usize,
    /// Significant differences with the rules matched (`None`: no matched rule set).
    pub matched: Option<usize>,
    /// Unexplained differences.
    pub unexplained: usize,
}

impl Closeness {
    /// The rows of a `closeness.csv` (malformed rows are skipped).
    pub fn parse(csv: &str) -> Vec<Closeness> {
        csv.lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                if f.len() != 6 {
                    return None;
                }
                Some(Closeness {
                    model: f[0].to_string(),
                    library: f[1].to_string(),
                    tests: f[2].parse().ok()?,
                    shipped: f[3].parse().ok()?,
                    matched: f[4].parse().ok(),
                    unexplained: f[5].parse().ok()?,
                })
            })
            .collect()
    }
}

/// The default report guide's line on how close our model is to each library (`page`: the
/// reference page, relative to the report).
pub fn guide_line(rows: &[Closeness], page: &str) -> Vec<crate::doc::Inline> {
    use crate::doc::{link, strong};
    let mut out = vec![strong("How close our Raft is to the libraries")];
    if rows.is_empty() {
        out.push(text(": not measured beside this report (`election-bench reference` runs it against tikv's raft-rs and Omni-Paxos)."));
        return out;
    }
    out.push(text(" ("));
    out.push(link("reference page", page));
    out.push(text("; significant differences of the tests, as shipped → with our Raft on the library's rules):"));
    for (i, r) in rows.iter().enumerate() {
        out.push(text(if i == 0 { " " } else { "; " }));
        out.push(code(r.library.as_str()));
        out.push(text(" against "));
        out.push(code(r.model.as_str()));
        out.push(text(format!(" {} of {}", r.shipped, r.tests)));
        match r.matched {
            Some(m) => out.push(text(format!(" → {m}"))),
            None => out.push(text(", each for a named mechanism if not unexplained")),
        }
    }
    let unexplained: usize = rows.iter().map(|r| r.unexplained).sum();
    out.push(text(format!("; {unexplained} unexplained.")));
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `REFERENCE.md`, `differences.csv` and `closeness.csv` into `out`; returns the
/// analysis (whose [`Analysis::unexplained`] decides the command's exit code).
pub fn write(results: &Path, out: &Path) -> Result<(Analysis, Vec<PathBuf>), ReportError> {
    let a = analyse(results)?;
    fs::create_dir_all(out).map_err(|e| ReportError::io(out, e))?;
    let mut files = Vec::new();
    let by_name: HashMap<&str, String> = HashMap::from([
        ("REFERENCE.md", a.document().to_markdown()),
        ("differences.csv", a.csv()),
        ("closeness.csv", a.closeness_csv()),
    ]);
    for name in ["REFERENCE.md", "differences.csv", "closeness.csv"] {
        let p = out.join(name);
        election_runner::files::write_atomic(&p, by_name[name].as_bytes())
            .map_err(|e| ReportError::Usage(format!("{}: {e}", p.display())))?;
        files.push(p);
    }
    Ok((a, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Metric;

    fn change(
        protocol: &str,
        nodes: u32,
        scenario: &str,
        metric: Metric,
        a: f64,
        b: f64,
        sig: bool,
    ) -> Change {
        let cell = CellKey {
            protocol: protocol.into(),
            nodes,
            scenario: scenario.into(),
            net: "lan".into(),
            params: Vec::new(),
        };
        let d = b - a;
        Change {
            cell: cell.clone(),
            cell_b: cell,
            label: String::new(),
            metric,
            n_a: 100,
            n_b: 100,
            a,
            b,
            lo: d - 1.0,
            hi: d + 1.0,
            significant: sig,
        }
    }

    fn compared(pair: Pair, changes: Vec<Change>) -> Compared {
        Compared {
            pair,
            a: String::new(),
            b: String::new(),
            level: 0.99,
            changes,
        }
    }

    #[test]
    fn a_difference_gone_with_the_rules_matched_is_explained_by_the_rules_that_move_it() {
        let p = &PAIRINGS[0];
        let f = Metric::FailoverP50;
        let shipped = compared(
            Pair::Shipped,
            vec![
                change("raft", 3, "leader-crash", f, 180.0, 160.0, true),
                change("raft", 5, "bridge", f, 400.0, 600.0, true),
                change("raft", 7, "bridge", f, 400.0, 410.0, false),
            ],
        );
        let matched = compared(
            Pair::Matched,
            vec![
                change("m", 3, "leader-crash", f, 180.0, 178.0, false),
                change("m", 5, "bridge", f, 400.0, 600.0, true),
                change("m", 7, "bridge", f, 400.0, 300.0, true),
            ],
        );
        let mut all = vec![shipped, matched];
        for r in p.rules {
            // Only the tick rule moves leader-crash, in the same direction.
            let moves = r.name == "whole ticks";
            all.push(compared(
                Pair::Isolating(r.name),
                vec![change("x", 3, "leader-crash", f, 180.0, 165.0, moves)],
            ));
        }
        let v = verdicts(p, &all);
        assert_eq!(v.len(), 3, "{v:?}");
        assert_eq!(v[0].verdict, Verdict::Explained(vec!["whole ticks"]));
        // Still there with the rules matched: unexplained, listed once.
        assert_eq!(
            (v[1].pair.clone(), v[1].verdict.clone()),
            (Pair::Shipped, Verdict::Unexplained)
        );
        // Only in the matched pair: unexplained too.
        assert_eq!(
            (v[2].pair.clone(), v[2].verdict.clone()),
            (Pair::Matched, Verdict::Unexplained)
        );
    }

    #[test]
    fn a_mechanism_explains_only_its_metrics_direction_and_scenarios() {
        let p = &PAIRINGS[2];
        let f = Metric::FailoverP50;
        let all = vec![compared(
            Pair::Shipped,
            vec![
                change("raft", 5, "leader-crash", f, 160.0, 330.0, true),
                // A metric no mechanism claims in that scenario (split brain in a cold start).
                change(
                    "raft",
                    5,
                    "cold-start",
                    Metric::SplitBrainRate,
                    0.0,
                    0.5,
                    true,
                ),
                change("raft", 5, "cold-start", f, 160.0, 330.0, true),
                change("raft", 5, "leader-crash", f, 330.0, 160.0, true),
            ],
        )];
        let v: Vec<Verdict> = verdicts(p, &all).into_iter().map(|d| d.verdict).collect();
        assert_eq!(
            v,
            vec![
                Verdict::Mechanism("heartbeat rounds"),
                Verdict::Unexplained,
                Verdict::Unexplained,
                Verdict::Unexplained
            ]
        );
    }
}
