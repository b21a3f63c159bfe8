//! The decision matrix: protocol by concern, the first thing `REPORT.md` shows.
//!
//! Each cell is one number (or a pass/fail) and a plain verdict, linked to the table that
//! holds the number; the verdicts are words of [`crate::doc::VERDICTS`], coloured by their tone on
//! the HTML page and bold in
//! Markdown. A concern appears only when the sweep has the scenarios that measure it; the
//! failover scenario is read off the scenarios' faults ([`ScenarioKind`], recorded in the
//! manifest). Numbers are quoted by [`crate::quote::shown`]: the same rounding the guide and
//! the findings use for the same quantity.
//!
//! | concern | scenarios | number | verdict |
//! |---|---|---|---|
//! | failover | the first of the report's failover scenarios the sweep has (`leader-crash`), else the first that crashes or pauses the leader without cutting links or bringing nodes back; focus size | p50 / p95 of `failover_ms` (and the share of trials with none) | absolute: p95 in detection windows (`detect_timeout_ms + detect_jitter_ms`, the longest a detector waits): `≤ 1 window`, `≤ 2 windows`, `> 2 windows`; relative, on p95 against the best: `best`, `good` (≤ 1.25×), `fair` (≤ 2×), `poor`, decided on intervals (below) |
//! | election messages | the same scenario at the largest size, and over every size | mean `msgs_election`; the least-squares exponent of its growth with n | the growth class: `O(1)`, `O(n)`, `O(n log n)`, `O(n²)` |
//! | steady messages per second | the same scenario at the largest size | `msgs_steady_per_s_mean`: what the cluster sends with no fault and no election (the steady window, defined in the observer) | against the best: `best`, `good` (≤ 2×), `fair` (≤ 10×), `poor`, on intervals |
//! | one leader per epoch | every cell | cells where two live leaders claimed one epoch (`same_epoch_leaders_max > 0`), the first failing seed | `pass`, `fails` |
//! | fenced writes | every scenario; focus size | worst mean `writes_stale`: a deposed leader's writes accepted despite fencing tokens, the first failing seed | `pass`, `fails` |
//! | damage, unfenced | the same | worst mean `writes_stale` + `writes_fenced`: what a resource without fencing takes | in proportion to it: `none`, `rare` (< 1 per trial), `few` (< 10), `damaging` |
//! | split brain under partition | the scenarios that cut links and reach the protocol; focus size | the worst: `split_brain_rate`, mean `split_brain_ms`, and its writes taken and refused | in proportion to the overlap: `none`, `brief` (< 1 ms), `short` (≤ 1 detection window), `lasting` |
//! | liveness | every cell | measured trials whose `outcome` is `no-leader` or `livelock` (no quorum leader that held ten election timeouts although a connected majority existed), the first failing seed | `pass`, `fails` |
//! | churn | the recovery and flapping scenarios (the guide's and chart 6's); focus size | mean `leader_changes` summed over them | against the best: `best`, `good` (≤ 1.5×), `fair` (≤ 3×), `poor`, on intervals |
//! | depends on | the protocol's family | service endpoints (a lease's store) | `a store: single point of failure`, `a lock store of K endpoints: a quorum of its own` (a replicated store), or `members only` |
//!
//! The grades *against the best* are decided on 95 % intervals, not on point values
//! ([`tie_values`]): the lowest value leads a group of the cells whose intervals overlap its
//! own, all graded by the leader's value; the lowest value left leads the next group. Two
//! protocols equal within their intervals are tied (978.9 and 979.1 messages a second are not
//! `best` and `good`), and ties do not chain: a cell is graded only by a leader its own
//! interval reaches, so one wide interval cannot lend `best` to a cell far from the best.
//!
//! A number summed or counted over several cells is in the appendix's by-protocol table
//! ([`crate::findings::BY_PROTOCOL`]) and links there. A cell with no measured trial reads `–`.

use crate::charts::Series;
use crate::companions::GrayLiveness;
use crate::data::{CellKey, SummaryRow, TrialRow};
use crate::doc::{code, link, text, verdict, Inline};
use crate::figures::{failover_scenarios, key_of, own_window, series_for};
use crate::findings::{by_protocol_target, churn_total, exercises, loglog_slope, Ctx};
use crate::quote::shown;
use election_runner::results::Stat;

/// What the legend of a column graded on intervals adds.
const TIES: &str = "; grades are decided on 95 % intervals: the lowest value and every cell whose interval overlaps its interval are tied and share its grade, then the lowest value left leads the next tie (a tie is with its leader only, never through a chain of overlapping cells)";

/// A concern of the matrix.
pub(crate) struct Column {
    /// Header text.
    pub title: String,
    /// What it measures and where, for the legend under the matrix.
    pub about: String,
    /// For a column graded against its best ([`Builder::ranked`]): per row, the 95 % interval
    /// of the graded value and the grade it got (what the consistency test reads).
    #[cfg_attr(not(test), allow(dead_code))]
    pub graded: Vec<Option<((f64, f64), &'static str)>>,
    /// Pairs of rows (better-graded first) whose intervals overlap but whose grades differ,
    /// because only the better one's interval reaches its group's leader ([`tie_values`]):
    /// the legend says they are tied ([`cross_grade_ties`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub ties: Vec<(usize, usize)>,
}

/// The pairs of ranked cells whose intervals overlap (widened to hold their values, as in
/// [`tie_values`]) but whose grades `words` differ, better-graded (lower value) first.
fn cross_grade_ties(
    cells: &[Option<(f64, (f64, f64))>],
    words: &[Option<&'static str>],
) -> Vec<(usize, usize)> {
    let span = |i: usize| cells[i].map(|(v, (lo, hi))| (lo.min(v), hi.max(v), v));
    let mut out = Vec::new();
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            let (Some(a), Some(b), Some(wa), Some(wb)) = (span(i), span(j), words[i], words[j])
            else {
                continue;
            };
            if wa != wb && a.0 <= b.1 && b.0 <= a.1 {
                out.push(if a.2 <= b.2 { (i, j) } else { (j, i) });
            }
        }
    }
    out
}

/// The value each ranked cell is graded by, so that no grade claims a difference its data
/// cannot show, and no grade is lent across a difference the data does show. Groups are
/// anchored on a leader: the lowest value not yet graded leads a group, every cell not yet
/// graded whose 95 % interval overlaps the *leader's* interval joins it, and every cell of the
/// group is graded by the leader's value; then the lowest remaining value leads the next
/// group. So the best cell and everything equal to it within the intervals share the best's
/// grade, and a cell is graded only by a leader whose interval its own overlaps: overlap is
/// not chained (a overlaps b, b overlaps c, a and c apart: c is not graded by a, however wide
/// b's interval). A cell that overlaps two leaders joins the first (lower) one. Grades never
/// invert values: a cell is then graded at least as well as any cell with a higher value. `None` cells
/// (not ranked) stay `None`. Each cell is `(value, (lo, hi))`, widened to hold its value; an
/// infinite value (a failover some trials never completed) ties only with other infinite ones.
pub(crate) fn tie_values(cells: &[Option<(f64, (f64, f64))>]) -> Vec<Option<f64>> {
    let mut order: Vec<usize> = (0..cells.len()).filter(|&i| cells[i].is_some()).collect();
    let at = |i: usize| cells[i].expect("ranked");
    let lo = |i: usize| at(i).1 .0.min(at(i).0);
    let hi = |i: usize| at(i).1 .1.max(at(i).0);
    let overlap = |a: usize, b: usize| lo(a) <= hi(b) && lo(b) <= hi(a);
    order.sort_by(|&a, &b| at(a).0.total_cmp(&at(b).0).then(lo(a).total_cmp(&lo(b))));
    let mut out: Vec<Option<f64>> = vec![None; cells.len()];
    for (k, &leader) in order.iter().enumerate() {
        if out[leader].is_some() {
            continue;
        }
        let value = at(leader).0;
        for &i in &order[k..] {
            if out[i].is_none() && overlap(leader, i) {
                out[i] = Some(value);
            }
        }
    }
    // Grades never invert values: a cell is graded at least as well as any cell with a higher
    // value (a wide interval can reach the best where a narrower, lower one does not).
    let mut best = f64::INFINITY;
    for &i in order.iter().rev() {
        if let Some(v) = out[i] {
            best = best.min(v);
            out[i] = Some(best);
        }
    }
    out
}

/// A column's cells before their verdicts: per series, the value ranked and the spans.
type Cells = Vec<Option<(f64, Vec<Inline>)>>;

/// One cell: its spans (linked number, then verdict words).
pub(crate) struct Cell {
    pub spans: Vec<Inline>,
}

/// The matrix: columns, then one row per protocol series, and what each row established
/// (for the answers above the matrix).
pub(crate) struct Matrix {
    pub columns: Vec<Column>,
    pub rows: Vec<(String, Vec<Option<Cell>>)>,
    pub facts: Vec<Facts>,
}

/// What the matrix found for one protocol series: each property `Some(true)` if it passed,
/// `Some(false)` if it failed, `None` if the sweep does not measure it.
#[derive(Default)]
pub(crate) struct Facts {
    /// At most one leader per epoch in every cell.
    pub one_leader_per_epoch: Option<bool>,
    /// No deposed leader's write accepted despite fencing, in any scenario at the focus size.
    pub fenced_writes: Option<bool>,
    /// No split brain in any partition scenario that reaches it, at the focus size.
    pub no_split_brain: Option<bool>,
    /// No liveness failure in any cell.
    pub liveness: Option<bool>,
    /// Leadership comes from a store (a service endpoint), not from the members alone.
    pub store: bool,
    /// The failover cell at the focus size and its link target.
    pub failover: Option<(f64, String, String)>,
    /// The election-message cell at the largest size: (mean, quoted, link), and the growth.
    pub messages: Option<(f64, String, String)>,
    /// The growth exponent of election messages and its class.
    pub growth: Option<(f64, &'static str)>,
    /// Messages per second at the largest size, quoted.
    pub per_second: Option<String>,
    /// The fenced-writes failure: quoted mean, scenario, link.
    pub fenced_failure: Option<(String, String, String)>,
    /// Liveness failures and measured trials, over every cell of this sweep.
    pub liveness_failed: Option<(u64, u64)>,
    /// The split-brain cell of the worst partition scenario: (quoted rate, overlap and
    /// writes; its link; the scenario), when there was split brain.
    pub split: Option<(String, String, String)>,
    /// The worst mean of deposed leaders' writes a resource without fencing takes, when
    /// above zero: (quoted, scenario, link).
    pub unfenced: Option<(String, String, String)>,
    /// The detection window of a protocol at a time scale of its own
    /// ([`crate::figures::own_window`]): graded against it, not ranked.
    pub own_window: Option<f64>,
}

impl Facts {
    /// Every safety and liveness property measured passed.
    pub(crate) fn safe(&self) -> bool {
        self.safe_but_liveness() && self.liveness != Some(false)
    }

    /// Every safety property measured passed (liveness aside).
    pub(crate) fn safe_but_liveness(&self) -> bool {
        [
            self.one_leader_per_epoch,
            self.fenced_writes,
            self.no_split_brain,
        ]
        .iter()
        .all(|p| *p != Some(false))
    }
}

fn by_ratio(v: f64, best: f64, good: f64, fair: f64) -> &'static str {
    if v.is_infinite() {
        "poor" // e.g. a failover that some trials never completed
    } else if v <= best {
        "best"
    } else if best > 0.0 && v <= best * good {
        "good"
    } else if best > 0.0 && v <= best * fair {
        "fair"
    } else {
        "poor"
    }
}

/// The unfenced-damage grade of a mean count of deposed leaders' writes per trial, in
/// proportion to it: one write a trial is not graded like a hundred.
fn damage_verdict(writes: f64) -> &'static str {
    if writes == 0.0 {
        "none"
    } else if writes < 1.0 {
        "rare"
    } else if writes < 10.0 {
        "few"
    } else {
        "damaging"
    }
}

/// The split-brain grade of a mean overlap of leaders, ms, in proportion to the detection
/// window `window` (the longest a detector waits): under 1 ms `brief`, within one window
/// `short`, longer `lasting` (without a window, any overlap of 1 ms or more is `lasting`).
fn split_verdict(ms: f64, window: Option<f64>) -> &'static str {
    if ms == 0.0 {
        "none"
    } else if ms < 1.0 {
        "brief"
    } else if window.is_some_and(|w| ms <= w) {
        "short"
    } else {
        "lasting"
    }
}

/// The growth class of an exponent of n, as the matrix grades election cost.
pub(crate) fn growth_verdict(slope: f64) -> &'static str {
    if slope < 0.5 {
        "O(1)"
    } else if slope < 1.25 {
        "O(n)"
    } else if slope < 1.6 {
        "O(n log n)"
    } else {
        "O(n²)"
    }
}

/// The detection window of the sweep: `detect_timeout_ms + detect_jitter_ms` as resolved
/// (`manifest.json`'s `timing`), the longest a failure detector waits.
fn detection_window(c: &Ctx) -> Option<f64> {
    let t = &c.results.manifest.config["timing"];
    Some(t["detect_timeout_ms"].as_f64()? + t["detect_jitter_ms"].as_f64()?)
}

/// The scenario the failover column reads.
fn failover_scenario(c: &Ctx) -> Option<String> {
    let kinds = |s: &String| c.results.scenario_kind(s);
    failover_scenarios(c.results, c.opts)
        .into_iter()
        .find(|s| kinds(s).is_some_and(|k| k.takes_leader))
        .or_else(|| {
            c.results.scenarios().into_iter().find(|s| {
                kinds(s).is_some_and(|k| k.takes_leader && !k.cuts_links && !k.brings_back)
            })
        })
}

/// A cell's spans: a linked number, then more.
fn linked(number: String, target: String) -> Vec<Inline> {
    vec![link(number.as_str(), target.as_str())]
}

struct Builder<'a, 'b> {
    c: &'b Ctx<'a>,
    series: Vec<Series>,
    m: Matrix,
}

impl<'a> Builder<'a, '_> {
    fn row(&self, s: &Series, n: u32, sc: &str) -> Option<&'a SummaryRow> {
        let key: CellKey = key_of(s, n, sc, &self.c.net);
        self.c.results.cell(&key).filter(|r| r.ran())
    }

    fn link(&self, sc: &str) -> String {
        crate::markdown::table_target(self.c.results, sc, &self.c.net)
    }

    /// Adds a column whose cells are `(value to rank, spans)` per series, each followed by the
    /// verdict `verdict(value, best)` gives (the best is the lowest value of the column).
    fn column(
        &mut self,
        title: String,
        about: String,
        cells: Cells,
        verdict_of: impl Fn(f64, Option<f64>) -> Option<&'static str>,
    ) {
        if cells.iter().all(Option::is_none) {
            return;
        }
        // A row at a time scale of its own is not ranked: it neither sets the best nor gets a
        // relative verdict (`best` is `None` for it).
        let own: Vec<bool> = self
            .m
            .facts
            .iter()
            .map(|f| f.own_window.is_some())
            .collect();
        let best = cells
            .iter()
            .zip(&own)
            .filter(|(_, own)| !**own)
            .filter_map(|(c, _)| c.as_ref())
            .map(|c| c.0)
            .fold(f64::INFINITY, f64::min);
        self.m.columns.push(Column {
            title,
            about,
            graded: Vec::new(),
            ties: Vec::new(),
        });
        for ((row, cell), own) in self.m.rows.iter_mut().zip(cells).zip(own) {
            row.1.push(cell.map(|(v, mut spans)| {
                if let Some(word) = verdict_of(v, (!own).then_some(best)) {
                    spans.push(text(" "));
                    spans.push(verdict(word));
                }
                Cell { spans }
            }));
        }
    }

    /// The 95 % interval of `stat` ([`crate::quote::interval`]) of each series' cell of
    /// `sc` at size `n`, where `cells` has a cell; a cell ranked as infinite (some trials never
    /// recovered) gets `(inf, inf)`.
    fn intervals(&self, cells: &Cells, sc: &str, n: u32, stat: Stat) -> Vec<Option<(f64, f64)>> {
        self.series
            .iter()
            .zip(cells)
            .map(|(s, c)| {
                let v = c.as_ref()?.0;
                if v.is_infinite() {
                    return Some((v, v));
                }
                crate::quote::interval(self.c.results, self.row(s, n, sc)?, stat)
            })
            .collect()
    }

    /// Adds a column graded against its best on intervals: `intervals` holds each cell's 95 %
    /// interval, and a cell is graded by [`tie_values`] (its tie group's leader's value), so
    /// that cells equal within their intervals get one grade. Rows at a time scale of their
    /// own are neither ranked nor graded, as in [`Builder::column`].
    fn ranked(
        &mut self,
        title: String,
        about: String,
        cells: Cells,
        intervals: Vec<Option<(f64, f64)>>,
        verdict_of: impl Fn(f64, f64) -> &'static str,
    ) {
        if cells.iter().all(Option::is_none) {
            return;
        }
        let own: Vec<bool> = self
            .m
            .facts
            .iter()
            .map(|f| f.own_window.is_some())
            .collect();
        let ranked: Vec<Option<(f64, (f64, f64))>> = cells
            .iter()
            .zip(&intervals)
            .zip(&own)
            .map(|((c, i), own)| {
                let v = c.as_ref().filter(|_| !own)?.0;
                Some((v, i.unwrap_or((v, v))))
            })
            .collect();
        let best = ranked
            .iter()
            .flatten()
            .map(|c| c.0)
            .fold(f64::INFINITY, f64::min);
        let graded_by = tie_values(&ranked);
        let words: Vec<Option<&'static str>> = graded_by
            .iter()
            .map(|g| g.map(|g| verdict_of(g, best)))
            .collect();
        // Cells equal within their intervals but graded apart (the tie is not chained to the
        // better one's leader) are said to be tied in the legend, so the cells stay short.
        let ties = cross_grade_ties(&ranked, &words);
        let mut about = about;
        if !ties.is_empty() {
            let pairs: Vec<String> = ties
                .iter()
                .map(|&(a, b)| {
                    format!(
                        "`{}` ({}) and `{}` ({})",
                        self.m.rows[a].0,
                        words[a].unwrap_or("–"),
                        self.m.rows[b].0,
                        words[b].unwrap_or("–")
                    )
                })
                .collect();
            about.push_str(&format!(
                "; tied though graded apart (their intervals overlap, but only the first one's reaches the better grade: ties do not chain): {}",
                pairs.join("; ")
            ));
        }
        let mut graded = Vec::new();
        for (i, (row, cell)) in self.m.rows.iter_mut().zip(cells).enumerate() {
            let word = words[i];
            graded.push(word.and_then(|w| Some((ranked[i]?.1, w))));
            row.1.push(cell.map(|(_, mut spans)| {
                if let Some(word) = word {
                    spans.push(text(" "));
                    spans.push(verdict(word));
                }
                Cell { spans }
            }));
        }
        self.m.columns.push(Column {
            title,
            about,
            graded,
            ties,
        });
    }

    fn failover(&mut self) {
        let Some(sc) = failover_scenario(self.c) else {
            return;
        };
        let n = self.c.focus;
        let window = detection_window(self.c);
        let cells: Cells = self
            .series
            .iter()
            .map(|s| {
                let r = self.row(s, n, &sc)?;
                let p95 = r.get(Stat::FailoverP95)?;
                let own = own_window(self.c.results, &s.protocol);
                let window = own.or(window);
                let all = self.c.results.measured_trials_of(&r.key);
                let never = all.iter().filter(|t| t.failover_ms.is_none()).count();
                let mut spans = linked(
                    format!(
                        "{} / {} ms",
                        shown(self.c.results, r, Stat::FailoverP50),
                        shown(self.c.results, r, Stat::FailoverP95)
                    ),
                    self.link(&sc),
                );
                if never > 0 {
                    spans.push(text(format!(
                        "; {} of {} trials never recovered",
                        never,
                        all.len()
                    )));
                }
                if let Some(w) = own {
                    spans.push(text(format!(
                        " (its own window: {} ms)",
                        crate::data::fmt_sig(w)
                    )));
                }
                if let Some(w) = window {
                    let k = p95 / w;
                    let word = if never > 0 {
                        "unrecovered"
                    } else if k <= 1.0 {
                        "≤ 1 window"
                    } else if k <= 2.0 {
                        "≤ 2 windows"
                    } else {
                        "> 2 windows"
                    };
                    spans.push(text(" "));
                    spans.push(verdict(word));
                }
                // Unrecovered trials rank as infinitely slow.
                let rank = if never > 0 { f64::INFINITY } else { p95 };
                Some((rank, spans))
            })
            .collect::<Cells>();
        let intervals = self.intervals(&cells, &sc, n, Stat::FailoverP95);
        for (i, s) in self.series.iter().enumerate() {
            if let Some(r) = self.row(s, n, &sc) {
                if let Some(p95) = r.get(Stat::FailoverP95) {
                    self.m.facts[i].failover = Some((
                        p95,
                        format!(
                            "{} / {} ms",
                            shown(self.c.results, r, Stat::FailoverP50),
                            shown(self.c.results, r, Stat::FailoverP95)
                        ),
                        self.link(&sc),
                    ));
                }
            }
        }
        let abs = window.map_or(String::new(), |w| format!("absolute: p95 in detection windows of {} ms (`detect_timeout_ms + detect_jitter_ms`); ", crate::data::fmt_sig(w)));
        self.ranked(
            format!("failover p50 / p95 in {sc}, n = {n}"),
            format!("`failover_ms` in `{sc}`; {abs}relative: p95 against the best (good ≤ 1.25×, fair ≤ 2×){TIES}"),
            cells,
            intervals,
            |v, best| by_ratio(v, best, 1.25, 2.0),
        );
    }

    fn messages(&mut self) {
        let Some(sc) = failover_scenario(self.c) else {
            return;
        };
        let n = self.c.n_max;
        let sizes = self.c.results.sizes();
        let chart = self
            .c
            .charts
            .iter()
            .find(|ch| ch.number == 1 && ch.net == self.c.net)
            .map(|ch| {
                format!(
                    "REPORT.md#{}",
                    crate::markdown::slug(&crate::markdown::chart_heading(ch))
                )
            });
        let mut facts = Vec::new();
        let cells: Cells = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let r = self.row(s, n, &sc)?;
                r.get(Stat::MsgsMean)?;
                let mut spans = linked(shown(self.c.results, r, Stat::MsgsMean), self.link(&sc));
                let pts: Vec<(f64, f64)> = sizes
                    .iter()
                    .filter_map(|&k| Some((k as f64, self.row(s, k, &sc)?.get(Stat::MsgsMean)?)))
                    .collect();
                let slope = loglog_slope(&pts);
                facts.push((
                    i,
                    (
                        r.get(Stat::MsgsMean)?,
                        shown(self.c.results, r, Stat::MsgsMean),
                        self.link(&sc),
                    ),
                    slope.map(|k| (k, growth_verdict(k))),
                ));
                if let Some(k) = slope {
                    let exp = format!("∝ n^{k:.2}");
                    spans.push(text(", "));
                    // The chart draws the series at the sweep's time scale only.
                    match &chart {
                        Some(t) if own_window(self.c.results, &s.protocol).is_none() => {
                            spans.push(link(exp.as_str(), t.as_str()))
                        }
                        _ => spans.push(text(exp)),
                    }
                    spans.push(text(" "));
                    spans.push(verdict(growth_verdict(k)));
                }
                Some((0.0, spans))
            })
            .collect();
        self.column(
            format!("election messages, n = {n}"),
            format!("mean `msgs_election` per failover in `{sc}`, and the least-squares exponent of its growth over n = {}…{n}, graded O(1) (< 0.5), O(n) (< 1.25), O(n log n) (< 1.6) or O(n²)", sizes.first().copied().unwrap_or(n)),
            cells,
            |_, _| None,
        );
        for (i, m, g) in facts {
            self.m.facts[i].messages = Some(m);
            self.m.facts[i].growth = g;
        }
        // The other side of the message bill: what the cluster sends in steady state.
        let cells: Cells = self
            .series
            .iter()
            .map(|s| {
                let r = self.row(s, n, &sc)?;
                let v = r.get(Stat::SteadyRateMean)?;
                Some((
                    v,
                    linked(
                        shown(self.c.results, r, Stat::SteadyRateMean),
                        self.link(&sc),
                    ),
                ))
            })
            .collect::<Cells>();
        for (f, cell) in self.m.facts.iter_mut().zip(&cells) {
            f.per_second = cell.as_ref().and_then(|(_, spans)| match spans.first() {
                Some(Inline::Link { text, .. }) => Some(crate::doc::plain(text)),
                _ => None,
            });
        }
        let intervals = self.intervals(&cells, &sc, n, Stat::SteadyRateMean);
        self.ranked(
            format!("steady messages per second, n = {n}"),
            format!("`msgs_steady_per_s_mean` in `{sc}`: messages per second with no fault and no election (heartbeats, a lease's renewals and polls; `msgs_steady` in the window before the fault; good ≤ 2× the fewest, fair ≤ 10×){TIES}"),
            cells,
            intervals,
            |v, best| by_ratio(v, best, 2.0, 10.0),
        );
    }

    /// The first seed of the cell `r` whose trial `bad` selects.
    fn first_seed(&self, r: &SummaryRow, bad: impl Fn(&TrialRow) -> bool) -> Option<u64> {
        self.c
            .results
            .measured_trials_of(&r.key)
            .into_iter()
            .find(|t| bad(t))
            .map(|t| t.seed)
    }

    /// Safety: at most one leader per epoch, over every cell of the series.
    fn one_leader_per_epoch(&mut self) {
        let cells: Cells = self
            .series
            .iter()
            .map(|s| {
                let (ran, bad) = same_epoch_cells(self.c, s);
                if ran == 0 {
                    return None;
                }
                Some(match bad.first() {
                    None => (
                        0.0,
                        vec![
                            link("0 cells", by_protocol_target().as_str()),
                            text(" "),
                            verdict("pass"),
                        ],
                    ),
                    Some(r) => {
                        let seed = self
                            .first_seed(r, |t| t.same_epoch_leaders > 0)
                            .unwrap_or(0);
                        let mut spans = vec![verdict("fails"), text(": ")];
                        spans.push(link(
                            format!("{} cells", bad.len()).as_str(),
                            by_protocol_target().as_str(),
                        ));
                        spans.push(text("; first "));
                        spans.push(link(
                            format!("`{}` n = {}", r.key.scenario, r.key.nodes).as_str(),
                            self.link(&r.key.scenario).as_str(),
                        ));
                        spans.push(text(" seed "));
                        spans.push(code(seed.to_string()));
                        (bad.len() as f64, spans)
                    }
                })
            })
            .collect();
        for (f, c) in self.m.facts.iter_mut().zip(&cells) {
            f.one_leader_per_epoch = c.as_ref().map(|c| c.0 == 0.0);
        }
        self.column(
            "one leader per epoch".to_string(),
            "every cell: `same_epoch_leaders_max` = 0; else the cells that broke it, the first one and its first seed".to_string(),
            cells,
            |_, _| None,
        );
    }

    /// The worst scenario among `scenarios` at the focus size by `metric` of its row.
    fn worst(
        &self,
        s: &Series,
        scenarios: &[String],
        metric: impl Fn(&SummaryRow) -> Option<f64>,
    ) -> Option<(f64, &'a SummaryRow)> {
        let mut worst: Option<(f64, &'a SummaryRow)> = None;
        for sc in scenarios {
            let Some(r) = self.row(s, self.c.focus, sc) else {
                continue;
            };
            if let Some(v) = metric(r) {
                if worst.as_ref().is_none_or(|w| v > w.0) {
                    worst = Some((v, r));
                }
            }
        }
        worst
    }

    fn damage(&mut self) {
        let all = self.c.results.scenarios();
        let n = self.c.focus;
        let has_workload = self
            .c
            .results
            .trials
            .iter()
            .any(|t| t.writes_stale.is_some());
        if has_workload {
            // Safety with fencing: no deposed leader's write accepted.
            let worst_stale: Vec<(String, f64, &SummaryRow)> = self
                .series
                .iter()
                .filter_map(|s| {
                    let (v, r) = self.worst(s, &all, |r| r.get(Stat::WritesStaleMean))?;
                    Some((s.label.clone(), v, r))
                })
                .collect();
            let cells: Cells = self
                .series
                .iter()
                .map(|s| {
                    let (v, r) = self.worst(s, &all, |r| r.get(Stat::WritesStaleMean))?;
                    Some(if v == 0.0 {
                        (0.0, vec![verdict("pass")])
                    } else {
                        let seed = self
                            .first_seed(r, |t| t.writes_stale.unwrap_or(0) > 0)
                            .unwrap_or(0);
                        let mut spans = vec![verdict("fails"), text(": ")];
                        spans.push(link(
                            format!(
                                "{} per trial",
                                shown(self.c.results, r, Stat::WritesStaleMean)
                            )
                            .as_str(),
                            self.link(&r.key.scenario).as_str(),
                        ));
                        spans.push(text(format!(" in `{}`, seed ", r.key.scenario)));
                        spans.push(code(seed.to_string()));
                        (v, spans)
                    })
                })
                .collect();
            for (f, c) in self.m.facts.iter_mut().zip(&cells) {
                f.fenced_writes = c.as_ref().map(|c| c.0 == 0.0);
            }
            for (f, s) in self.m.facts.iter_mut().zip(&self.series) {
                let Some((v, r)) = worst_stale
                    .iter()
                    .find(|w| w.0 == s.label)
                    .map(|w| (w.1, w.2))
                else {
                    continue;
                };
                if v > 0.0 {
                    f.fenced_failure = Some((
                        shown(self.c.results, r, Stat::WritesStaleMean),
                        r.key.scenario.clone(),
                        crate::markdown::table_target(self.c.results, &r.key.scenario, &self.c.net),
                    ));
                }
            }
            self.column(
                format!("fenced writes, n = {n}"),
                "every scenario: `writes_stale` = 0 in every trial; else the worst mean and its first failing seed".to_string(),
                cells,
                |_, _| None,
            );
            // Per series, the worst scenario by what a resource without fencing takes.
            let worst: Vec<Option<(f64, &SummaryRow)>> = self
                .series
                .iter()
                .map(|s| {
                    self.worst(s, &all, |r| {
                        Some(
                            r.get(Stat::WritesStaleMean)?
                                + r.get(Stat::WritesFencedMean).unwrap_or(0.0),
                        )
                    })
                })
                .collect();
            let quoted = |r: &SummaryRow| {
                format!(
                    "{} + {} writes",
                    shown(self.c.results, r, Stat::WritesStaleMean),
                    shown(self.c.results, r, Stat::WritesFencedMean)
                )
            };
            let unfenced: Vec<Option<(String, String, String)>> = worst
                .iter()
                .map(|w| {
                    let (_, r) = w.filter(|(v, _)| *v > 0.0)?;
                    Some((
                        quoted(r),
                        r.key.scenario.clone(),
                        self.link(&r.key.scenario),
                    ))
                })
                .collect();
            for (f, u) in self.m.facts.iter_mut().zip(unfenced) {
                f.unfenced = u;
            }
            let cells: Cells = worst
                .iter()
                .map(|w| {
                    let (v, r) = (*w)?;
                    if v == 0.0 {
                        return Some((0.0, linked("0 writes".into(), self.link(&r.key.scenario))));
                    }
                    let mut spans = linked(quoted(r), self.link(&r.key.scenario));
                    spans.push(text(format!(" (`{}`)", r.key.scenario)));
                    Some((v, spans))
                })
                .collect();
            self.column(
                format!("damage, unfenced, n = {n}"),
                "worst mean `writes_stale` + `writes_fenced` per trial over every scenario: what a resource without fencing takes from deposed leaders (rare: < 1 a trial, few: < 10, damaging: 10 or more)".to_string(),
                cells,
                |v, _| Some(damage_verdict(v)),
            );
        }
        // Split brain under partition: rate, duration and damage of the worst.
        let parts: Vec<String> = all
            .iter()
            .filter(|sc| {
                self.c
                    .results
                    .scenario_kind(sc)
                    .is_some_and(|k| k.cuts_links)
            })
            .cloned()
            .collect();
        if parts.is_empty() {
            return;
        }
        let window = detection_window(self.c);
        // Each row's cell and the scenario it quotes.
        let rows: Vec<Option<(f64, Vec<Inline>, String)>> = self
            .series
            .iter()
            .map(|s| {
                let reached: Vec<String> = parts
                    .iter()
                    .filter(|sc| exercises(self.c, &s.protocol, sc))
                    .cloned()
                    .collect();
                // Worst by overlap (what a deposed leader can do while it lasts), then by rate.
                let (_, r) = self.worst(s, &reached, |r| {
                    Some(r.get(Stat::SplitMsMean).unwrap_or(0.0) * 1e6 + r.get(Stat::SplitRate)?)
                })?;
                let rate = r.get(Stat::SplitRate)?;
                if rate == 0.0 {
                    let mut spans = linked("0% of trials".into(), self.link(&r.key.scenario));
                    spans.extend([text(" "), verdict("none")]);
                    return Some((0.0, spans, r.key.scenario.clone()));
                }
                let ms = r.get(Stat::SplitMsMean).unwrap_or(0.0);
                let mut t = format!(
                    "{}, {} ms",
                    shown(self.c.results, r, Stat::SplitRate),
                    shown(self.c.results, r, Stat::SplitMsMean)
                );
                if r.get(Stat::WritesStaleMean).is_some() {
                    t.push_str(&format!(
                        ", {} + {} writes",
                        shown(self.c.results, r, Stat::WritesStaleMean),
                        shown(self.c.results, r, Stat::WritesFencedMean)
                    ));
                }
                let mut spans = linked(t, self.link(&r.key.scenario));
                spans.push(text(format!(" (`{}`)", r.key.scenario)));
                // Graded in the row's own detection window where it has one (a system spec
                // or `k8s-lease`), as the failover column is.
                let window = own_window(self.c.results, &s.protocol).or(window);
                spans.push(text(" "));
                spans.push(verdict(split_verdict(ms, window)));
                Some((ms.max(f64::MIN_POSITIVE), spans, r.key.scenario.clone()))
            })
            .collect();
        let cells: Cells = rows
            .iter()
            .map(|r| r.as_ref().map(|(ms, spans, _)| (*ms, spans.clone())))
            .collect();
        for (f, c) in self.m.facts.iter_mut().zip(&rows) {
            f.no_split_brain = c.as_ref().map(|c| c.0 == 0.0);
            if let Some((_, spans, sc)) = c.as_ref().filter(|c| c.0 > 0.0) {
                if let Some(Inline::Link { text, href }) = spans.first() {
                    f.split = Some((crate::doc::plain(text), href.clone(), sc.clone()));
                }
            }
        }
        let windows = window.map_or(String::new(), |w| {
            format!(
                ", short: ≤ 1 detection window ({} ms), lasting: longer",
                crate::data::fmt_sig(w)
            )
        });
        self.column(
            format!("split brain under partition, n = {n}"),
            format!("the worst partition scenario that reaches the protocol (the longest mean overlap, then the highest rate): `split_brain_rate`, mean `split_brain_ms`, and mean `writes_stale` + `writes_fenced` (brief: < 1 ms{windows}; a row at a time scale of its own against its own window)"),
            cells,
            |_, _| None,
        );
    }

    /// Liveness under every connected-majority scenario: trials that ended with a connected
    /// majority and no settled leader (`no-leader`) or with leadership still changing
    /// (`livelock`).
    fn liveness(&mut self, gray: &[GrayLiveness]) {
        let target = by_protocol_target();
        let cells: Cells = self
            .series
            .iter()
            .map(|s| {
                let (total, bad, first) = liveness_of(self.c, s);
                if total == 0 {
                    return None;
                }
                let beside = gray_cell(gray.iter().find(|g| g.protocol == s.protocol));
                Some(match first {
                    None => (
                        0.0,
                        vec![
                            link(format!("0 of {total} trials").as_str(), target.as_str()),
                            text(" "),
                            verdict("pass"),
                        ],
                    ),
                    Some((key, seed)) => (
                        bad as f64,
                        vec![
                            verdict("fails"),
                            text(": "),
                            link(format!("{bad} of {total} trials").as_str(), target.as_str()),
                            text("; first "),
                            link(
                                format!("`{}` n = {}", key.scenario, key.nodes).as_str(),
                                self.link(&key.scenario).as_str(),
                            ),
                            text(" seed "),
                            code(seed.to_string()),
                        ],
                    ),
                })
                .map(|(v, mut spans)| {
                    spans.extend(beside);
                    (v, spans)
                })
            })
            .collect();
        for ((f, c), s) in self.m.facts.iter_mut().zip(&cells).zip(&self.series) {
            f.liveness = c.as_ref().map(|c| c.0 == 0.0);
            let (total, bad, _) = liveness_of(self.c, s);
            f.liveness_failed = (total > 0).then_some((bad, total));
        }
        let also = if gray.is_empty() {
            ""
        } else {
            "; then the same count over the gray sweep (partial connectivity, slow and flaky leaders, lost disks), which is harder: the answers above read this sweep's"
        };
        self.column(
            "liveness".to_string(),
            format!("every cell: no trial's `outcome` is `no-leader` or `livelock` (a connected majority without a settled leader); else the count and the first failing cell and seed{also}"),
            cells,
            |_, _| None,
        );
    }

    fn churn(&mut self) {
        let back = crate::figures::leader_change_scenarios(self.c.results, self.c.opts);
        if back.is_empty() {
            return;
        }
        let n = self.c.focus;
        let target = by_protocol_target();
        let totals: Vec<Option<(f64, f64)>> =
            self.series.iter().map(|s| churn_total(self.c, s)).collect();
        let cells: Cells = totals
            .iter()
            .map(|t| {
                let (total, half) = (*t)?;
                Some((
                    total,
                    linked(crate::findings::churn_text(total, half), target.clone()),
                ))
            })
            .collect();
        let intervals = totals
            .iter()
            .map(|t| t.map(|(total, half)| (total - half, total + half)))
            .collect();
        let names: Vec<String> = back.iter().map(|s| format!("`{s}`")).collect();
        self.ranked(
            format!("leader changes in recovery and flapping scenarios, n = {n}"),
            format!(
                "mean `leader_changes` summed over {} (good ≤ 1.5× the fewest, fair ≤ 3×){TIES}",
                names.join(", ")
            ),
            cells,
            intervals,
            |v, best| by_ratio(v, best, 1.5, 3.0),
        );
    }

    /// What the protocol needs besides its members: a lease's single store is one endpoint
    /// whose loss stops every election; a replicated store (`lease.store_nodes` ≥ 2) needs a
    /// quorum of its own endpoints.
    fn depends_on(&mut self) {
        let cells: Cells = self
            .series
            .iter()
            .map(|s| {
                let services = election_runner::protocol::ProtocolSpec::parse(&s.protocol)
                    .map_or(0, |p| p.services());
                Some(if services > 1 {
                    (
                        1.0,
                        vec![
                            text(format!("a lock store of {services} endpoints: ")),
                            verdict("a quorum of its own"),
                        ],
                    )
                } else if services > 0 {
                    (
                        1.0,
                        vec![text("a lock store: "), verdict("single point of failure")],
                    )
                } else {
                    (0.0, vec![verdict("members only")])
                })
            })
            .collect();
        for (f, c) in self.m.facts.iter_mut().zip(&cells) {
            f.store = c.as_ref().is_some_and(|c| c.0 > 0.0);
        }
        self.column(
            "depends on".to_string(),
            "a lease is granted by a store (etcd, the Kubernetes API server): one endpoint (`lease`), or a Raft group of several (`lease.store_nodes`) that works while a majority of its endpoints do; while the store is unreachable or has lost its quorum nobody can acquire or renew (`store-crash`, `store-quorum-loss`)".to_string(),
            cells,
            |_, _| None,
        );
    }
}

/// The three questions a design review brings, answered from the matrix's facts, as Markdown
/// bullets (each claim linked to the table that holds its number): a small control plane on
/// the report's network at the focus size, a cluster of the largest size, and a service that
/// already runs a lock store (etcd, Kubernetes). Empty without a failover column.
pub(crate) fn answers(c: &Ctx, m: &Matrix) -> Vec<String> {
    let labels: Vec<&String> = m.rows.iter().map(|r| &r.0).collect();
    let rows: Vec<(&String, &Facts)> = labels.into_iter().zip(&m.facts).collect();
    let names = |v: &[&(&String, &Facts)]| {
        crate::findings::names(&v.iter().map(|r| r.0.to_string()).collect::<Vec<_>>())
    };
    let failover = |f: &Facts| {
        f.failover
            .as_ref()
            .map(|(_, t, l)| format!("failover p50 / p95 [{t}]({l})"))
            .unwrap_or_default()
    };
    // Sorted by p95, fastest first.
    let mut out = Vec::new();
    if rows.iter().all(|r| r.1.failover.is_none()) {
        return out;
    }
    // Safe without a store, fastest p95 first (ties: every one within the best's 1.25×, the
    // matrix's "good").
    let candidate = |f: &Facts| !f.store && f.failover.is_some() && f.own_window.is_none();
    let mut safe: Vec<&(&String, &Facts)> = rows
        .iter()
        .filter(|r| r.1.safe() && candidate(r.1))
        .collect();
    // None passes every column: those that pass every safety column, each with its liveness
    // failures said (a rare liveness failure is a cost to weigh; a safety failure is not).
    let relaxed = safe.is_empty();
    if relaxed {
        safe = rows
            .iter()
            .filter(|r| r.1.safe_but_liveness() && candidate(r.1))
            .collect();
    }
    safe.sort_by(|a, b| {
        let p = |f: &Facts| f.failover.as_ref().map_or(f64::INFINITY, |x| x.0);
        p(a.1).total_cmp(&p(b.1))
    });
    // The property columns this sweep measured: a sweep with no partition scenario or no
    // workload claims nothing about split brain or fenced writes.
    let measured = |p: fn(&Facts) -> Option<bool>| m.facts.iter().any(|f| p(f).is_some());
    let properties = [
        ("one leader per epoch", measured(|f| f.one_leader_per_epoch)),
        ("fenced writes", measured(|f| f.fenced_writes)),
        (
            "split brain under partition",
            measured(|f| f.no_split_brain),
        ),
        ("liveness", measured(|f| f.liveness)),
    ]
    .iter()
    .filter(|p| p.1)
    .map(|p| p.0)
    .collect::<Vec<_>>();
    let safety = properties
        .iter()
        .filter(|p| **p != "liveness")
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let properties = properties.join(", ");
    let small = if !safe.is_empty() {
        let failovers: Vec<String> = safe
            .iter()
            .map(|r| {
                let (_, t, l) = r.1.failover.as_ref().expect("filtered");
                if safe.len() == 1 {
                    format!("[{t}]({l})")
                } else {
                    format!("`{}` [{t}]({l})", r.0)
                }
            })
            .collect();
        let (columns, liveness) = if relaxed {
            let fails: Vec<String> = safe
                .iter()
                .filter_map(|r| {
                    let (bad, total) = r.1.liveness_failed.filter(|x| x.0 > 0)?;
                    Some(format!("`{}` {bad} of {total}", r.0))
                })
                .collect();
            (
                safety.as_str(),
                format!(
                    "; none passes liveness too: trials without a settled leader although a majority was connected, {} (the matrix names the first seed)",
                    fails.join(", ")
                ),
            )
        } else {
            (properties.as_str(), String::new())
        };
        format!(
            "{} — {} every {} column ({columns}) without a store; failover p50 / p95 {}{liveness}.",
            names(&safe),
            if safe.len() == 1 {
                "the only protocol that passes"
            } else {
                "the protocols that pass"
            },
            if relaxed { "safety" } else { "property" },
            failovers.join(", ")
        )
    } else {
        format!(
            "no protocol of this sweep passes every property column ({properties}) without a store: read the failing seeds in the matrix before choosing."
        )
    };
    // The systems as deployed come first where the sweep ran them: a reviewer deploys a
    // system; the algorithm rows are the textbook baseline.
    let systems = systems_answers(c, &rows);
    out.push(match &systems.deployed {
        Some(d) => format!(
            "**A {}-node control plane on `{}`**: as deployed (system specs: the real system's rules and default timings, graded against their own detection window, not ranked) — {d}. In our model, at this sweep's time scale: {small}",
            c.focus, c.net
        ),
        None => format!("**A {}-node control plane on `{}`**: {small}", c.focus, c.net),
    });
    // The largest size: of the safe ones, the cheapest election.
    let mut cheap: Vec<&(&String, &Facts)> = safe
        .iter()
        .copied()
        .filter(|r| r.1.messages.is_some())
        .collect();
    cheap.sort_by(|a, b| {
        let v = |f: &Facts| f.messages.as_ref().map_or(f64::INFINITY, |x| x.0);
        v(a.1).total_cmp(&v(b.1))
    });
    // (Only when the sweep has sizes beyond the control plane's: else it would answer the same question twice.)
    if let Some(best) = cheap.first().filter(|_| c.n_max > c.focus) {
        let (_, q, l) = best.1.messages.as_ref().expect("filtered");
        let growth = best
            .1
            .growth
            .map(|(k, class)| format!(", growing ∝ n^{k:.2} ({class})"))
            .unwrap_or_default();
        let per_second = best
            .1
            .per_second
            .as_ref()
            .map(|p| format!(", [{p} messages per second]({l}) in steady state"))
            .unwrap_or_default();
        let deployed = systems.messages.as_ref().map_or(String::new(), |m| {
            format!("as deployed, {m}; in our model, ")
        });
        let mut text = format!(
            "**A {}-node cluster**: {deployed}of those, `{}` elects with the fewest messages at n = {}: [{q} per failover]({l}){growth}{per_second}.",
            c.n_max, best.0, c.n_max
        );
        let cheapest = rows
            .iter()
            .filter(|r| r.1.messages.is_some() && r.1.own_window.is_none())
            .min_by(|a, b| {
                let v = |f: &Facts| f.messages.as_ref().map_or(f64::INFINITY, |x| x.0);
                v(a.1).total_cmp(&v(b.1))
            });
        if let Some(ch) = cheapest.filter(|ch| ch.0 != best.0) {
            let (_, q, l) = ch.1.messages.as_ref().expect("filtered");
            text.push_str(&format!(
                " `{}` elects with fewer ([{q}]({l})){}.",
                ch.0,
                if ch.1.store {
                    " but needs a store"
                } else {
                    " but fails a safety or liveness column"
                }
            ));
        }
        text.push_str(&learners_sentence(c, best.0));
        out.push(text);
    }
    out.extend(systems.differences);
    // A store already run: the store protocols.
    let stores: Vec<&(&String, &Facts)> = rows.iter().filter(|r| r.1.store).collect();
    if !stores.is_empty() {
        let parts: Vec<String> = stores
            .iter()
            .map(|r| {
                let fenced = match (&r.1.fenced_failure, r.1.fenced_writes) {
                    (Some((q, sc, l)), _) => format!(
                        "; keep fencing at the resource: a deposed holder's writes got through in `{sc}` ([{q} per trial]({l}))"
                    ),
                    (None, Some(true)) => "; no deposed holder's write got through fencing".to_string(),
                    _ => String::new(),
                };
                let split = match (&r.1.split, r.1.no_split_brain) {
                    (Some((q, l, sc)), _) => {
                        format!("; split brain under partition [{q}]({l}) (`{sc}`)")
                    }
                    (None, Some(true)) => "; no split brain under partition".to_string(),
                    _ => String::new(),
                };
                let liveness = match r.1.liveness_failed {
                    Some((0, of)) => format!("; liveness pass ({of} trials)"),
                    Some((k, of)) => format!(
                        "; liveness fails in {k} of {of} trials (the matrix names the first seed)"
                    ),
                    None => String::new(),
                };
                format!(
                    "`{}`: {}{fenced}{split}{liveness}{}",
                    r.0,
                    failover(r.1),
                    vanished_endpoint(c, r.0)
                )
            })
            .collect();
        out.push(format!(
            "**A service that already runs etcd or Kubernetes**: {}, whose store is already run and whose election is one compare-and-swap. {}. The lease is as available as its store (`store-crash`, `store-quorum-loss`){}.",
            names(&stores),
            parts.join("; "),
            {
                let scaled = c.results.manifest.config["timing"]["lease"].as_str();
                let own: Vec<&str> = stores
                    .iter()
                    .filter(|r| r.1.own_window.is_some())
                    .map(|r| r.0.as_str())
                    .collect();
                match (scaled, own.is_empty()) {
                    (Some(t), true) => format!("; timings here: {t}; client-go's defaults are 15 s / 10 s / 2 s (`k8s-lease`), and failover scales with them"),
                    (Some(t), false) => format!(
                        "; `lease` runs client-go's timings divided by {k} ({t}), `{}` runs them as shipped (15 s / 10 s / 2 s) with every scenario time {k}× too, so its row is graded against its own detection window and not ranked against the others",
                        own.join("`, `"),
                        k = election_runner::params::K8S_TIME_SCALE
                    ),
                    (None, _) => String::new(),
                }
            }
        ));
    }
    out
}

/// What a vanished store endpoint cost the lease row `label` at the control-plane size, when
/// the sweep ran `store-endpoint-vanish` for it (a replicated store): the mean time without a
/// leader, and the connection rule that decides it.
fn vanished_endpoint(c: &Ctx, label: &str) -> String {
    let sc = "store-endpoint-vanish";
    let series = series_for(c.results, &c.net);
    let Some(s) = series.iter().find(|s| s.label == label) else {
        return String::new();
    };
    let Some(r) = c
        .results
        .cell(&key_of(s, c.focus, sc, &c.net))
        .filter(|r| r.ran() && r.get(Stat::UnavailableMean).is_some())
    else {
        return String::new();
    };
    let l = crate::markdown::table_target(c.results, sc, &c.net);
    format!(
        "; when the store endpoint every member uses vanishes silently (`{sc}`, an API server whose node disappears), [{} ms]({l}) without a leader on average, for a client gives up its connection only after `lease.reconnect_ms`",
        shown(c.results, r, Stat::UnavailableMean)
    )
}

/// The system a row's spec names (`etcd@3.5`, `raft+system=etcd@3.5`), if any.
fn system_of(spec: &str) -> Option<&'static election_runner::systems::System> {
    let p = election_runner::protocol::ProtocolSpec::parse(spec).ok()?;
    election_runner::systems::named(p.options.get("raft.system")?)
}

/// The algorithm row with a system row's PreVote and CheckQuorum: `raft` with those options,
/// our textbook rules at the workbench's time scale.
fn algorithm_of(pre_vote: bool, check_quorum: bool) -> String {
    let mut spec = "raft".to_string();
    for (on, option) in [(pre_vote, "pre_vote"), (check_quorum, "check_quorum")] {
        if on {
            spec.push('+');
            spec.push_str(option);
        }
    }
    spec
}

/// The first screen's answers in systems as deployed: one line naming each system row of the
/// sweep with its settings (its own timing, as the manifest records it), failover, split
/// brain under partition with what a resource then needs, and liveness; then, where the
/// algorithm row with the same rules got another verdict, one line that says so and links the
/// reference page. Nothing when the sweep ran no system spec.
/// What the system rows answer: the control plane's clause (each system's settings,
/// failover, split brain, fencing and liveness), the largest size's election cost, and the
/// line on where model and system differ.
#[derive(Default)]
struct SystemAnswers {
    deployed: Option<String>,
    messages: Option<String>,
    differences: Option<String>,
}

fn systems_answers(c: &Ctx, rows: &[(&String, &Facts)]) -> SystemAnswers {
    let systems: Vec<&(&String, &Facts)> =
        rows.iter().filter(|r| system_of(r.0).is_some()).collect();
    if systems.is_empty() {
        return SystemAnswers::default();
    }
    let timing = &c.results.manifest.config["timing"];
    let mut parts = Vec::new();
    let mut differences: Vec<(String, Vec<String>)> = Vec::new();
    for (label, f) in &systems {
        let own = &timing["specs"][label.as_str()];
        let t = if own.is_null() { timing } else { own };
        let ms = |k: &str| t[k].as_f64().map(crate::data::fmt_sig);
        // The row's effective rules: the spec's own options over the system's defaults
        // (`etcd@3.4+pre_vote` is a what-if with PreVote on).
        let effective = election_runner::protocol::ProtocolSpec::parse(label)
            .ok()
            .and_then(|p| election_runner::systems::with_defaults(&p.options));
        let on = |k: &str| {
            effective
                .as_ref()
                .and_then(|m| m.get(k))
                .is_some_and(|v| v == "true")
        };
        let settings = format!(
            "heartbeat {} ms, election timeout {} ms, PreVote {}, CheckQuorum {}",
            ms("heartbeat_ms").unwrap_or_else(|| "–".into()),
            ms("detect_timeout_ms").unwrap_or_else(|| "–".into()),
            if on("raft.pre_vote") { "on" } else { "off" },
            if on("raft.check_quorum") { "on" } else { "off" },
        );
        let mut line = format!("`{label}` ({settings})");
        if let Some((_, t, l)) = &f.failover {
            line.push_str(&format!(": failover p50 / p95 [{t}]({l})"));
        }
        let lingering = lingering(c, label);
        match (&f.split, f.no_split_brain) {
            (Some((t, l, _)), _) => line.push_str(&format!(
                "; split brain under partition [{t}]({l}){lingering}"
            )),
            (None, Some(true)) => line.push_str("; no split brain under partition"),
            _ => {}
        }
        match &f.unfenced {
            Some((q, sc, l)) => line.push_str(&format!(
                "; **a resource it guards needs fencing**: without it, deposed leaders' writes were taken ([{q} per trial]({l}) in `{sc}`)"
            )),
            None if f.fenced_writes.is_some() => {
                line.push_str("; no deposed leader's write was taken, fenced or not")
            }
            None => {}
        }
        line.push_str(match f.liveness {
            Some(true) => "; liveness pass",
            Some(false) => "; liveness **fails** (the matrix names the first seed)",
            None => "",
        });
        parts.push(line);
        let algorithm = algorithm_of(on("raft.pre_vote"), on("raft.check_quorum"));
        if let Some((_, a)) = rows.iter().find(|r| *r.0 == algorithm) {
            let mut differ = Vec::new();
            if a.no_split_brain != f.no_split_brain {
                differ.push("split brain under partition");
            }
            if a.unfenced.is_some() != f.unfenced.is_some() {
                differ.push("whether a resource needs fencing");
            }
            if a.liveness != f.liveness {
                differ.push("liveness");
            }
            if !differ.is_empty() {
                let on = match differ.split_last() {
                    Some((last, [])) => last.to_string(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                };
                // One clause per textbook row, naming each system it differs from.
                match differences.iter_mut().find(|(a, _)| *a == algorithm) {
                    Some((_, v)) => v.push(format!("from `{label}` on {on}")),
                    None => differences
                        .push((algorithm.clone(), vec![format!("from `{label}` on {on}")])),
                }
            }
        }
    }
    let messages: Vec<String> = systems
        .iter()
        .filter_map(|(label, f)| {
            let (_, q, l) = f.messages.as_ref()?;
            let growth = f
                .growth
                .map(|(_, class)| format!(" ({class})"))
                .unwrap_or_default();
            Some(format!("`{label}` [{q} per failover]({l}){growth}"))
        })
        .collect();
    SystemAnswers {
        deployed: Some(parts.join("; ")),
        messages: (!messages.is_empty() && c.n_max > c.focus).then(|| {
            format!(
                "the systems elect with {} at n = {}",
                messages.join(", "),
                c.n_max
            )
        }),
        differences: (!differences.is_empty()).then(|| {
            let clauses: Vec<String> = differences
                .iter()
                .map(|(a, v)| format!("`{a}` differs {}", v.join(", ")))
                .collect();
            format!(
                "**Model and system differ**: {} (the textbook row: our rules with the same PreVote and CheckQuorum, at this sweep's time scale; the system's: its rules and timings as deployed, among them CheckQuorum once per election timeout and, for etcd, time in whole ticks). Choose on the system's row; the [reference page](../reference/REFERENCE.md) compares our Raft with the libraries rule by rule.",
                clauses.join("; ")
            )
        }),
    }
}

/// How long a deposed leader kept leading cut off in a minority (`partition-leader-minority`,
/// mean `minority_leader_ms` at the focus size) in the row `label`, as a clause with its link
/// and in the row's own election timeouts; empty without that cell.
fn lingering(c: &Ctx, label: &str) -> String {
    let sc = "partition-leader-minority";
    let Some(s) = series_for(c.results, &c.net)
        .into_iter()
        .find(|s| s.label == label)
    else {
        return String::new();
    };
    let Some(r) = c
        .results
        .cell(&key_of(&s, c.focus, sc, &c.net))
        .filter(|r| r.ran())
    else {
        return String::new();
    };
    let Some(ms) = r.get(Stat::MinorityMsMean).filter(|&v| v > 0.0) else {
        return String::new();
    };
    let own = &c.results.manifest.config["timing"]["specs"][label];
    let timeout = own["detect_timeout_ms"]
        .as_f64()
        .or_else(|| c.results.manifest.config["timing"]["detect_timeout_ms"].as_f64());
    let in_timeouts = timeout.map_or(String::new(), |t| {
        format!(", {} election timeouts", crate::data::fmt_sig(ms / t))
    });
    format!(
        ": a deposed leader cut off in a minority leads on for [{} ms]({}) on average (`{sc}`{in_timeouts})",
        shown(c.results, r, Stat::MinorityMsMean),
        crate::markdown::table_target(c.results, sc, &c.net)
    )
}

/// `K` of a spec's `+voters=K` option, if it has one.
fn voters_option(spec: &str) -> Option<u32> {
    spec.split('+')
        .find_map(|o| o.strip_prefix("voters="))
        .and_then(|k| k.parse().ok())
}

/// The spec without its `+voters=K` option.
fn every_member_voting(spec: &str) -> String {
    spec.split('+')
        .filter(|o| !o.starts_with("voters="))
        .collect::<Vec<_>>()
        .join("+")
}

/// The 51-node answer's last sentence: when the cheapest protocol at the largest size runs
/// with learners (`+voters=K`, K below that size), what that buys and costs (its failover
/// there against the same protocol with every member voting, when the sweep ran it); else
/// whether the sweep modelled learners at all.
fn learners_sentence(c: &Ctx, best: &str) -> String {
    let n = c.n_max;
    let Some(k) = voters_option(best).filter(|&k| k < n) else {
        return " Every member here is a voter: a few voters with many non-voting members (learners) is modelled by `raft+voters=K`, which this sweep did not run at this size.".to_string();
    };
    let Some(sc) = failover_scenario(c) else {
        return String::new();
    };
    let series = series_for(c.results, &c.net);
    let failover = |label: &str| {
        let s = series.iter().find(|s| s.label == label)?;
        let r = c
            .results
            .cell(&key_of(s, n, &sc, &c.net))
            .filter(|r| r.ran())?;
        r.get(Stat::FailoverP50)?;
        Some(format!(
            "{} / {} ms",
            shown(c.results, r, Stat::FailoverP50),
            shown(c.results, r, Stat::FailoverP95)
        ))
    };
    let l = crate::markdown::table_target(c.results, &sc, &c.net);
    let mut out = format!(
        " Only its {k} voters campaign and vote; the other {} members are learners, which follow the leader but never campaign or vote, so an election costs the same at any size. The price: the cluster survives {} voter failures, not the {} that {n} voting members would.",
        n - k,
        (k - 1) / 2,
        (n - 1) / 2
    );
    // The price, measured: `minority-crash` takes down as many members as `n` voters survive.
    let crash = "minority-crash";
    let converged = |label: &str| {
        let s = series.iter().find(|s| s.label == label)?;
        let r = c
            .results
            .cell(&key_of(s, n, crash, &c.net))
            .filter(|r| r.ran())?;
        r.get(Stat::ConvergedRate)?;
        Some(shown(c.results, r, Stat::ConvergedRate))
    };
    if let Some(mine) = converged(best) {
        let l = crate::markdown::table_target(c.results, crash, &c.net);
        out.push_str(&format!(
            " Measured in `{crash}` at n = {n} ({} members down, the leader among them): [{mine}]({l}) of its trials end with a quorum leader",
            (n - 1) / 2
        ));
        let all = every_member_voting(best);
        match converged(&all) {
            Some(g) => out.push_str(&format!(", against [{g}]({l}) for `{all}`.")),
            None => out.push('.'),
        }
    }
    if let Some(f) = failover(best) {
        out.push_str(&format!(" Its failover p50 / p95 at n = {n}: [{f}]({l})"));
        let all = every_member_voting(best);
        match failover(&all) {
            Some(g) => out.push_str(&format!(
                ", against [{g}]({l}) for `{all}` with all {n} voting (the first of fewer timeouts fires later)."
            )),
            None => out.push('.'),
        }
    }
    out
}

/// How many cells of series `s` ran on the report's network, and those where two live
/// leaders claimed one epoch (`same_epoch_leaders_max` > 0), in file order.
pub(crate) fn same_epoch_cells<'a>(c: &Ctx<'a>, s: &Series) -> (usize, Vec<&'a SummaryRow>) {
    let mine: Vec<&SummaryRow> = c
        .results
        .summary
        .iter()
        .filter(|r| {
            r.ran()
                && r.key.protocol == s.protocol
                && r.key.params == s.params
                && r.key.net == c.net
        })
        .collect();
    let bad = mine
        .iter()
        .copied()
        .filter(|r| r.get(Stat::SameEpochMax).is_some_and(|v| v > 0.0))
        .collect();
    (mine.len(), bad)
}

/// A series' liveness over every cell of the report's network: measured trials, those that
/// failed, and the first failing cell and seed.
pub(crate) fn liveness_of(c: &Ctx, s: &Series) -> (u64, u64, Option<(CellKey, u64)>) {
    let (mut total, mut bad) = (0u64, 0u64);
    let mut first = None;
    for sc in c.results.scenarios() {
        for n in c.results.sizes() {
            let key = key_of(s, n, &sc, &c.net);
            for t in c.results.measured_trials_of(&key) {
                total += 1;
                if t.outcome.is_failure() {
                    bad += 1;
                    first.get_or_insert_with(|| (key.clone(), t.seed));
                }
            }
        }
    }
    (total, bad, first)
}

/// The liveness column's second half: the gray sweep's count for the protocol, linked to its
/// page, with its own verdict; nothing if the gray sweep did not run it.
fn gray_cell(g: Option<&GrayLiveness>) -> Vec<Inline> {
    let Some(g) = g.filter(|g| g.measured > 0) else {
        return Vec::new();
    };
    let count = format!("{} of {} trials", g.failed, g.measured);
    let mut spans = vec![text("; gray sweep: ")];
    if g.failed == 0 {
        spans.extend([
            link(count.as_str(), "../gray/REPORT.md"),
            text(" "),
            verdict("pass"),
        ]);
    } else {
        spans.extend([
            verdict("fails"),
            text(": "),
            link(count.as_str(), "../gray/REPORT.md"),
        ]);
        if let Some((sc, n)) = &g.first {
            spans.push(text(format!("; first `{sc}` n = {n}")));
        }
    }
    spans
}

/// The decision matrix of the report's network at its focus size.
pub(crate) fn matrix(c: &Ctx, gray: &[GrayLiveness]) -> Matrix {
    let series = series_for(c.results, &c.net);
    let rows = series
        .iter()
        .map(|s| (s.label.clone(), Vec::new()))
        .collect();
    let facts = series
        .iter()
        .map(|s| Facts {
            own_window: own_window(c.results, &s.protocol),
            ..Facts::default()
        })
        .collect();
    let mut b = Builder {
        c,
        series,
        m: Matrix {
            columns: Vec::new(),
            rows,
            facts,
        },
    };
    b.failover();
    b.messages();
    b.one_leader_per_epoch();
    b.damage();
    b.liveness(gray);
    b.churn();
    b.depends_on();
    b.m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_by_ratio() {
        assert_eq!(by_ratio(10.0, 10.0, 1.25, 2.0), "best");
        assert_eq!(by_ratio(12.0, 10.0, 1.25, 2.0), "good");
        assert_eq!(by_ratio(19.0, 10.0, 1.25, 2.0), "fair");
        assert_eq!(by_ratio(21.0, 10.0, 1.25, 2.0), "poor");
        // A best of zero makes every other value poor, never good.
        assert_eq!(by_ratio(1.0, 0.0, 1.25, 2.0), "poor");
    }

    #[test]
    fn overlapping_intervals_tie_with_their_leader() {
        let c = |v: f64, lo: f64, hi: f64| Some((v, (lo, hi)));
        // 978.9 and 979.1 overlap: one grade; 2000 stands apart; a row not ranked stays so.
        let t = tie_values(&[
            c(979.1, 975.0, 983.0),
            c(978.9, 974.0, 982.0),
            None,
            c(2000.0, 1990.0, 2010.0),
        ]);
        assert_eq!(t, vec![Some(978.9), Some(978.9), None, Some(2000.0)]);
        // Unrecovered cells tie only with each other.
        let inf = f64::INFINITY;
        let t = tie_values(&[c(inf, inf, inf), c(100.0, 90.0, 1e9), c(inf, inf, inf)]);
        assert_eq!(t, vec![Some(inf), Some(100.0), Some(inf)]);
    }

    /// Ties do not chain: a overlaps b, b overlaps c, a and c are apart, so c leads a group of
    /// its own (the old rule graded all three by a).
    #[test]
    fn ties_do_not_chain_across_cells_that_do_not_overlap() {
        let c = |v: f64, lo: f64, hi: f64| Some((v, (lo, hi)));
        let t = tie_values(&[c(10.0, 9.0, 11.5), c(12.0, 11.0, 13.0), c(14.0, 12.5, 15.0)]);
        assert_eq!(t, vec![Some(10.0), Some(10.0), Some(14.0)]);
        // One wide interval (5–60) overlaps both the best (10) and a cell five times it (50):
        // it shares the best's grade, but the far cell keeps its own value, whatever the order.
        let cells = [c(50.0, 45.0, 55.0), c(30.0, 5.0, 60.0), c(10.0, 9.5, 10.5)];
        let t = tie_values(&cells);
        assert_eq!(t, vec![Some(50.0), Some(10.0), Some(10.0)]);
        assert_eq!(
            by_ratio(t[0].unwrap(), 10.0, 1.25, 2.0),
            "poor",
            "a cell 5x the best is not lent the best's grade"
        );
        // Grades never invert values: L = 10 [9, 11], a = 12 [11.5, 12.5] (apart from L) and
        // b = 13 [10, 16] (reaching L): b shares L's grade, and so does a, lower than b.
        let t = tie_values(&[c(10.0, 9.0, 11.0), c(12.0, 11.5, 12.5), c(13.0, 10.0, 16.0)]);
        assert_eq!(t, vec![Some(10.0), Some(10.0), Some(10.0)]);
        for cells in [
            &cells[..],
            &[c(1.0, 0.5, 9.0), c(2.0, 1.9, 2.1), c(3.0, 2.95, 3.05)],
        ] {
            let t = tie_values(cells);
            for (i, a) in cells.iter().enumerate() {
                for (j, b) in cells.iter().enumerate() {
                    if a.unwrap().0 < b.unwrap().0 {
                        assert!(t[i] <= t[j], "{cells:?}: {t:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn damage_and_split_grades_follow_the_amount() {
        assert_eq!(damage_verdict(0.0), "none");
        assert_eq!(damage_verdict(0.4), "rare");
        assert_eq!(damage_verdict(1.0), "few");
        assert_eq!(damage_verdict(158.0), "damaging");
        assert_eq!(split_verdict(0.0, Some(300.0)), "none");
        assert_eq!(split_verdict(0.5, Some(300.0)), "brief");
        assert_eq!(split_verdict(129.0, Some(300.0)), "short");
        assert_eq!(split_verdict(1334.0, Some(300.0)), "lasting");
        assert_eq!(split_verdict(129.0, None), "lasting");
    }

    /// On the committed sweeps, every pair of cells of a ranked column whose 95 % intervals
    /// overlap has one grade, or the legend says they are tied (ties do not chain, so a cell
    /// can overlap one graded by a leader its own interval does not reach).
    #[test]
    fn committed_matrices_grade_equal_cells_alike() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let opts = crate::ReportOptions::default();
        let mut pairs = 0;
        for dir in ["default", "gray"] {
            let results = crate::data::Results::load(&root.join(dir)).unwrap();
            let c = Ctx::new(&results, &opts, &[]);
            let m = matrix(&c, &[]);
            let ranked: Vec<&Column> = m.columns.iter().filter(|c| !c.graded.is_empty()).collect();
            assert!(ranked.len() >= 2, "{dir}: ranked columns missing");
            for col in ranked {
                let g: Vec<(usize, _)> = col
                    .graded
                    .iter()
                    .enumerate()
                    .filter_map(|(i, g)| Some((i, (*g)?)))
                    .collect();
                for (k, &(i, a)) in g.iter().enumerate() {
                    for &(j, b) in &g[k + 1..] {
                        let ((alo, ahi), (blo, bhi)) = (a.0, b.0);
                        if alo <= bhi && blo <= ahi {
                            pairs += 1;
                            // Equal grades, or said to be tied in the legend.
                            let said = col.ties.contains(&(i, j)) || col.ties.contains(&(j, i));
                            if said {
                                let (x, y) = (&m.rows[i].0, &m.rows[j].0);
                                assert!(
                                    col.about.contains(&format!("`{x}`"))
                                        && col.about.contains(&format!("`{y}`"))
                                        && col.about.contains("tied though graded apart"),
                                    "{dir}, {}: the tie of {x} and {y} is not in the legend",
                                    col.title
                                );
                            }
                            assert!(
                                a.1 == b.1 || said,
                                "{dir}, {}: {:?} and {:?} overlap but are graded apart",
                                col.title,
                                a,
                                b
                            );
                        }
                    }
                }
            }
        }
        assert!(pairs > 0, "no overlapping pair: the test checks nothing");
    }

    #[test]
    fn growth_separates_linear_from_quadratic() {
        assert_eq!(growth_verdict(0.04), "O(1)");
        assert_eq!(growth_verdict(1.17), "O(n)");
        assert_eq!(growth_verdict(1.42), "O(n log n)");
        assert_eq!(growth_verdict(2.26), "O(n²)");
    }
}
