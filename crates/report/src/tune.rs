//! The page `election-bench tune` writes: `ADVICE.md` (the answer first, then the assumptions,
//! the frontier and the real systems' settings) and `frontier.{svg,png}`, one panel per
//! protocol: p99 failover against false elections per day, every evaluated point, the
//! frontier joined and whiskered with its 95 % intervals, the limits dashed, the recommended
//! point ringed; and `disks.{svg,png}`: false elections per day against the fsync p99 of
//! each disk preset (`node.disk`) at each protocol's advised point, with etcd's 10 ms line.
//! Every number is read from the [`TuneOutcome`]; nothing is typed.

use std::path::{Path, PathBuf};

use election_runner::tune::{mapping, Advice, Agreement, Point, TuneOutcome, Verdict};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::charts::{draw_marker, rgb, text_style, title_style, write_chart, Chart, DrawResult};
use crate::data::fmt_sig;
use crate::doc::{code, spans, strong, text, Block, Cell, Document, Figure, Inline, Item, Table};
use crate::palette::protocol_colour;
use crate::ReportError;

/// Where a point with no false election sits on the log axis (per day), labelled `0`.
const ZERO_PER_DAY: f64 = 1e-3;

struct FrontierChart<'a> {
    outcome: &'a TuneOutcome,
}

fn per_day(p: &Point) -> Option<(f64, f64, f64)> {
    let fe = p.false_per_hour()? * 24.0;
    let (lo, hi) = p.false_per_hour_ci()?;
    Some((fe, lo * 24.0, hi * 24.0))
}

impl FrontierChart<'_> {
    /// Height of the legend's extra line, when some protocol has a current point.
    fn legend_extra(&self) -> u32 {
        if self.outcome.advice.iter().any(|a| a.current.is_some()) {
            20
        } else {
            0
        }
    }
}

impl Chart for FrontierChart<'_> {
    fn size(&self) -> (u32, u32) {
        let n = self.outcome.advice.len() as u32;
        (1200, 94 + self.legend_extra() + n.div_ceil(2) * 460)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let o = &self.outcome.options;
        let body = root.margin(10, 10, 16, 16);
        let (top, body) = body.split_vertically(84 + self.legend_extra());
        top.draw(&Text::new(
            "p99 failover against false elections per day",
            (0, 0),
            title_style(26),
        ))?;
        top.draw(&Text::new(
            format!(
                "{} nodes on {}, noise as in ADVICE.md. Grey: every evaluated point; colour: the frontier, with 95 % whiskers; ring: recommended.",
                o.nodes, o.net
            ),
            (0, 34),
            text_style(15),
        ))?;
        top.draw(&Text::new(
            format!(
                "Red dashes: the limits ({} false elections a day, p99 failover {} ms). No false election is plotted at the left edge (0); its whisker reaches the 95 % upper bound.",
                fmt_sig(o.max_false_per_day), fmt_sig(o.max_p99_ms)
            ),
            (0, 54),
            text_style(15),
        ))?;
        if self.legend_extra() > 0 {
            top.draw(&Text::new(
                "Square: the cluster's current settings (--config); no ring where the cluster contradicts the model (the page withholds that advice).",
                (0, 74),
                text_style(15),
            ))?;
        }
        let rows = (self.outcome.advice.len() as u32).div_ceil(2).max(1) as usize;
        let panels = body.split_evenly((rows, 2));
        let (mut xmax, mut ymin, mut ymax) = (o.max_false_per_day * 10.0, f64::MAX, o.max_p99_ms);
        for a in &self.outcome.advice {
            for p in a.points.iter().filter(|p| p.measured()) {
                if let Some((fe, _, hi)) = per_day(p) {
                    xmax = xmax.max(fe).max(hi);
                }
                if let Some(v) = p.failover(0.99).filter(|v| v.is_finite()) {
                    ymin = ymin.min(v);
                    ymax = ymax.max(v);
                }
                if let Some((lo, hi, _)) = p.p99_ci() {
                    if hi.is_finite() {
                        ymax = ymax.max(hi);
                    }
                    ymin = ymin.min(lo);
                }
            }
        }
        if ymin == f64::MAX {
            ymin = 1.0;
        }
        let (ylo, yhi) = (ymin / 1.5, ymax * 1.5);
        let (xlo, xhi) = (ZERO_PER_DAY * 0.7, xmax * 1.5);
        for (k, (a, area)) in self.outcome.advice.iter().zip(panels.iter()).enumerate() {
            let colour = rgb(protocol_colour(&a.protocol));
            let mut chart = ChartBuilder::on(area)
                .caption(&a.protocol, title_style(20))
                .margin(8)
                .x_label_area_size(44)
                .y_label_area_size(70)
                .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())?;
            chart
                .configure_mesh()
                .x_desc("false elections per day (leader changes in a healthy cluster)")
                .y_desc("p99 failover, ms")
                .label_style(text_style(13))
                .axis_desc_style(text_style(14))
                .x_label_formatter(&|v| {
                    if *v <= ZERO_PER_DAY * 1.01 {
                        "0".into()
                    } else {
                        fmt_sig(*v)
                    }
                })
                .y_label_formatter(&|v| fmt_sig(*v))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            let red = RGBColor(200, 30, 30);
            let dashed =
                |pts: Vec<(f64, f64)>| DashedLineSeries::new(pts, 8, 6, red.stroke_width(2));
            chart.draw_series(dashed(vec![
                (o.max_false_per_day, ylo),
                (o.max_false_per_day, yhi),
            ]))?;
            chart.draw_series(dashed(vec![(xlo, o.max_p99_ms), (xhi, o.max_p99_ms)]))?;
            let at = |p: &Point| -> Option<(f64, f64)> {
                let (fe, _, _) = per_day(p)?;
                let y = p.failover(0.99)?;
                Some((
                    fe.max(ZERO_PER_DAY),
                    if y.is_finite() { y } else { yhi / 1.01 },
                ))
            };
            let grey = RGBColor(170, 170, 170);
            for p in a.points.iter().filter(|p| p.measured()) {
                if let Some(xy) = at(p) {
                    chart.draw_series(std::iter::once(Circle::new(xy, 3, grey.filled())))?;
                }
            }
            let front: Vec<&Point> = a.frontier.iter().map(|&i| &a.points[i]).collect();
            chart.draw_series(LineSeries::new(
                front.iter().filter_map(|p| at(p)),
                colour.stroke_width(2),
            ))?;
            for p in &front {
                let Some((x, y)) = at(p) else { continue };
                let (_, lo, hi) = per_day(p).expect("measured");
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(lo.max(ZERO_PER_DAY), y), (hi.max(ZERO_PER_DAY), y)],
                    colour.stroke_width(1),
                )))?;
                if let Some((plo, phi, _)) = p.p99_ci() {
                    let phi = if phi.is_finite() { phi } else { yhi / 1.01 };
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, plo.max(ylo)), (x, phi)],
                        colour.stroke_width(1),
                    )))?;
                }
                draw_marker(chart.plotting_area(), (x, y), k, colour)?;
            }
            // No ring where the measured cluster contradicts the model: the page withholds
            // that recommendation.
            let chosen = a.chosen.filter(|_| contradicted(self.outcome, a).is_none());
            if let Some(xy) = chosen.and_then(|i| at(&a.points[i])) {
                chart.draw_series(std::iter::once(Circle::new(xy, 13, BLACK.stroke_width(3))))?;
            }
            if let Some(xy) = a.current.and_then(|i| at(&a.points[i])) {
                chart.draw_series(std::iter::once(
                    EmptyElement::at(xy)
                        + Rectangle::new([(-11, -11), (11, 11)], BLACK.stroke_width(2)),
                ))?;
            }
        }
        Ok(())
    }
}

/// False elections per day against the disk's fsync p99, one line per protocol: the advised
/// point's steady hours on each disk preset ([`election_runner::tune::DiskCheck`]).
struct DiskChart<'a> {
    outcome: &'a TuneOutcome,
}

impl Chart for DiskChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1200, 720)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let o = &self.outcome.options;
        let body = root.margin(10, 10, 16, 16);
        let (top, body) = body.split_vertically(84);
        top.draw(&Text::new(
            "false elections per day against the disk's fsync p99",
            (0, 0),
            title_style(26),
        ))?;
        top.draw(&Text::new(
            format!(
                "Each protocol's advised point, {} steady-noise hours per disk preset (node.disk), the same seeds for every disk; writes as in ADVICE.md. Whiskers: 95 % intervals.",
                o.disk_hours
            ),
            (0, 34),
            text_style(15),
        ))?;
        top.draw(&Text::new(
            format!(
                "Red dashes: etcd's line (WAL fsync p99 under {} ms, vertical) and the limit of {} false elections a day. No false election is plotted at the bottom edge (0).",
                fmt_sig(election_runner::disk::ETCD_P99_MS),
                fmt_sig(o.max_false_per_day)
            ),
            (0, 54),
            text_style(15),
        ))?;
        let disks = &election_runner::disk::DISKS;
        let (mut xlo, mut xhi) = (
            election_runner::disk::ETCD_P99_MS,
            election_runner::disk::ETCD_P99_MS,
        );
        for d in disks {
            xlo = xlo.min(d.p99_ms());
            xhi = xhi.max(d.p99_ms());
        }
        let (xlo, xhi) = (xlo / 1.5, xhi * 1.5);
        // One tick per preset's p99 (and etcd's line), each named: presets with the same p99
        // share a tick and a label.
        let mut ticks: Vec<(f64, Vec<&str>)> = Vec::new();
        for d in disks {
            let p = d.p99_ms();
            match ticks.iter_mut().find(|t| (t.0 / p - 1.0).abs() < 0.01) {
                Some(t) => t.1.push(d.name),
                None => ticks.push((p, vec![d.name])),
            }
        }
        ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut keys: Vec<f64> = ticks.iter().map(|t| t.0).collect();
        if !keys
            .iter()
            .any(|k| (k / election_runner::disk::ETCD_P99_MS - 1.0).abs() < 0.01)
        {
            keys.push(election_runner::disk::ETCD_P99_MS);
        }
        let mut ymax = o.max_false_per_day * 10.0;
        for a in &self.outcome.advice {
            for c in &a.disks {
                if let Some((fe, _, hi)) = per_day(&c.point) {
                    ymax = ymax.max(fe).max(hi);
                }
            }
        }
        let (ylo, yhi) = (ZERO_PER_DAY * 0.7, ymax * 1.5);
        let mut chart = ChartBuilder::on(&body)
            .margin(8)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (xlo..xhi).log_scale().with_key_points(keys),
                (ylo..yhi).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("fsync p99 of the disk preset, ms")
            .y_desc("false elections per day")
            .label_style(text_style(13))
            .axis_desc_style(text_style(14))
            .x_label_formatter(&|v| fmt_sig(*v))
            .y_label_formatter(&|v| {
                if *v <= ZERO_PER_DAY * 1.01 {
                    "0".into()
                } else {
                    fmt_sig(*v)
                }
            })
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let red = RGBColor(200, 30, 30);
        let dashed = |pts: Vec<(f64, f64)>| DashedLineSeries::new(pts, 8, 6, red.stroke_width(2));
        let etcd = election_runner::disk::ETCD_P99_MS;
        chart.draw_series(dashed(vec![(etcd, ylo), (etcd, yhi)]))?;
        chart.draw_series(dashed(vec![
            (xlo, o.max_false_per_day),
            (xhi, o.max_false_per_day),
        ]))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("etcd: p99 < {} ms", fmt_sig(etcd)),
            (etcd * 1.05, yhi / 1.6),
            text_style(14),
        )))?;
        // The presets' names, staggered in height so that neighbours do not overlap.
        for (k, (p99, names)) in ticks.iter().enumerate() {
            let y = ZERO_PER_DAY * 3.0 * 2.2f64.powi(k as i32 % 3);
            chart.draw_series(std::iter::once(Text::new(
                names.join(" / "),
                (p99 * 1.04, y),
                text_style(13),
            )))?;
        }
        for (k, a) in self.outcome.advice.iter().enumerate() {
            if a.disks.is_empty() {
                continue;
            }
            let colour = rgb(protocol_colour(&a.protocol));
            let at = |c: &election_runner::tune::DiskCheck| {
                per_day(&c.point).map(|(fe, lo, hi)| {
                    (
                        c.disk.p99_ms(),
                        fe.max(ZERO_PER_DAY),
                        lo.max(ZERO_PER_DAY),
                        hi.max(ZERO_PER_DAY),
                    )
                })
            };
            let pts: Vec<_> = a.disks.iter().filter_map(at).collect();
            let mut line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
            line.sort_by(|x, y| x.0.total_cmp(&y.0));
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))?
                .label(a.protocol.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            for &(x, y, lo, hi) in &pts {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    colour.stroke_width(1),
                )))?;
                draw_marker(chart.plotting_area(), (x, y), k, colour)?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(text_style(14))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        Ok(())
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.is_infinite() => "never (some trials)".into(),
        Some(x) => format!("{} ms", fmt_sig(x)),
    }
}

fn day(p: &Point) -> String {
    match per_day(p) {
        None => "-".into(),
        Some((fe, lo, hi)) => format!("{} ({}–{})", fmt_sig(fe), fmt_sig(lo), fmt_sig(hi)),
    }
}

fn p99(p: &Point) -> String {
    match (p.failover(0.99), p.p99_ci()) {
        (Some(v), Some((lo, hi, open))) => format!(
            "{} ({}–{}{})",
            ms(Some(v)),
            fmt_sig(lo),
            if hi.is_finite() {
                fmt_sig(hi)
            } else {
                "∞".into()
            },
            if open { ", open above" } else { "" }
        ),
        _ => "-".into(),
    }
}

fn settings(p: &Point) -> String {
    election_runner::tune::point_params(p.kind, p.timeout_ms, p.ratio)
        .into_iter()
        .map(|(k, v)| format!("`{k}={v}`"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn point_line(p: &Point) -> String {
    format!(
        "T = {} ms, ratio {} ({}): p99 failover {}, {} false elections a day",
        fmt_sig(p.timeout_ms),
        fmt_sig(p.ratio),
        settings(p),
        ms(p.failover(0.99)),
        per_day(p).map_or("-".into(), |d| fmt_sig(d.0))
    )
}

/// The measured cluster contradicts the model at its current settings (see
/// [`cluster_section`]): no recommendation is drawn from that model.
fn contradicted(outcome: &TuneOutcome, a: &Advice) -> Option<Agreement> {
    outcome
        .agreement(a)
        .map(|c| c.3)
        .filter(|c| *c != Agreement::Consistent)
}

/// The measured point of `a` closest to both limits among those whose 95 % intervals still
/// reach within both (the lower bound of its false-election rate and of its p99 under the
/// limits): with one, "no setting meets both" is **not shown with this budget** (more hours
/// or trials could show it either way); with none, every evaluated point **fails**, each by
/// a whole interval.
fn not_shown(a: &Advice, lim: (f64, f64)) -> Option<&Point> {
    a.points
        .iter()
        .filter(|p| p.measured())
        .filter(|p| match (p.false_per_hour_ci(), p.p99_ci()) {
            (Some((fe_lo, _)), Some((p99_lo, _, _))) => fe_lo <= lim.0 && p99_lo <= lim.1,
            _ => false,
        })
        .min_by(|x, y| {
            x.distance(lim.0, lim.1)
                .total_cmp(&y.distance(lim.0, lim.1))
        })
}

/// The answer table's row for one protocol.
fn answer(a: &Advice, outcome: &TuneOutcome) -> Vec<Vec<Cell>> {
    let o = &outcome.options;
    let lim = (o.max_false_per_hour(), o.max_p99_ms);
    let row = |cells: Vec<Vec<Inline>>| cells.into_iter().map(Cell::new).collect();
    if let Some(c) = contradicted(outcome, a) {
        return vec![row(vec![
            vec![text(&a.protocol)],
            vec![
                strong("withheld"),
                text(format!(
                    ": at the cluster's current settings the model {} (see below)",
                    match c {
                        Agreement::ModelTooQuiet =>
                            "holds fewer elections than the cluster was seen to",
                        _ => "holds more elections than the cluster was seen to",
                    }
                )),
            ],
            vec![],
            vec![],
            vec![],
            vec![],
        ])];
    }
    match a.chosen {
        Some(i) => {
            let p = &a.points[i];
            let verdict = |q: &Point| match q.verdict(lim.0, lim.1) {
                Verdict::Meets => "meets both limits (95 % upper bounds)",
                Verdict::Likely => {
                    "not shown with this budget: meets them on the estimates, but a 95 % interval straddles a limit"
                }
                Verdict::Fails => "fails",
            };
            let settings = |m: &mapping::Mapping| {
                let mut real = vec![text(format!("{}: ", m.system))];
                for (j, x) in m.settings.iter().enumerate() {
                    if j > 0 {
                        real.push(text(", "));
                    }
                    real.extend([code(&x.name), text(format!(" {}", x.value))]);
                }
                real
            };
            let timing = format!(
                "T = {} ms, ratio {}",
                fmt_sig(p.timeout_ms),
                fmt_sig(p.ratio)
            );
            // A system whose rules were measured at this point gets a row of its own with its
            // own verdict (issue #45: no row pairs one system's verdict with another's
            // settings); the tuned model's row keeps the mappings without a rule set.
            let maps = mapping::map(p.kind, p.timeout_ms, p.ratio);
            let measured =
                |m: &mapping::Mapping| m.rule_set.and_then(|spec| a.system(spec)).is_some();
            let mut real = Vec::new();
            for m in maps.iter().filter(|m| !measured(m)) {
                if !real.is_empty() {
                    real.push(text("; "));
                }
                real.extend(settings(m));
            }
            if maps.iter().any(measured) {
                if !real.is_empty() {
                    real.push(text("; "));
                }
                real.push(text("each system measured under its own rules: its own row"));
            }
            let mut rows = vec![row(vec![
                vec![text(&a.protocol)],
                vec![text(timing.clone())],
                vec![text(p99(p))],
                vec![text(day(p))],
                vec![text(verdict(p))],
                real,
            ])];
            for m in maps.iter().filter(|m| measured(m)) {
                let c = a
                    .system(m.rule_set.expect("measured"))
                    .expect("measured");
                rows.push(row(vec![
                    vec![text(format!("{} as {} ", a.protocol, m.system)), code(&c.spec)],
                    vec![text(format!(
                        "its settings: T = {} ms, ratio {}, under its rules",
                        fmt_sig(c.point.timeout_ms),
                        fmt_sig(c.point.ratio)
                    ))],
                    vec![text(p99(&c.point))],
                    vec![text(day(&c.point))],
                    vec![text(verdict(&c.point))],
                    settings(m),
                ]));
            }
            rows
        }
        None => vec![row(vec![
            vec![text(&a.protocol)],
            vec![
                strong("none"),
                text(": no evaluated setting meets both limits"),
            ],
            vec![],
            vec![],
            match not_shown(a, lim) {
                Some(p) => vec![text(format!(
                    "not shown with this budget: at T = {} ms, ratio {} the 95 % intervals straddle the limits",
                    fmt_sig(p.timeout_ms),
                    fmt_sig(p.ratio)
                ))],
                None => vec![
                    strong("fails"),
                    text(": every evaluated point is over a limit by its whole 95 % interval"),
                ],
            },
            vec![],
        ])],
    }
}

/// "Your cluster against the model": at the profiled cluster's current settings, the simulated
/// false elections next to the leader changes it was seen to make, each with its 95 %
/// interval, and what it means when they disagree. Nothing without a `--config` profile.
fn cluster_section(d: &mut Document, outcome: &TuneOutcome) {
    let o = &outcome.options;
    let Some(p) = o.profile() else {
        return;
    };
    d.heading(2, vec![text("Your cluster against the model")]);
    let Some((ob, olo, ohi)) = outcome.observed() else {
        d.paragraph(spans(&format!(
            "The profile observed no leader-change rate ({}), so the model cannot be checked against the cluster: the advice below assumes that the noise model (`{}`) describes it.",
            p.no_rate.as_deref().unwrap_or("no time span"),
            outcome.noise
        )));
        return;
    };
    d.paragraph(spans(&format!(
        "At the cluster's current settings (heartbeat {} ms, election timeout {} ms: T = {} ms, ratio {}), the simulation's false elections against the leader changes the cluster was seen to make ({} in {} h, `etcd_server_leader_changes_seen_total`), per hour, each with its exact 95 % Poisson interval:",
        fmt_sig(p.heartbeat_ms),
        fmt_sig(p.election_timeout_ms),
        fmt_sig(p.election_timeout_ms),
        fmt_sig(p.election_timeout_ms / p.heartbeat_ms),
        p.leader_changes,
        fmt_sig(p.span_s / 3600.0)
    )));
    let mut t = Table::new([
        "protocol",
        "simulated per hour (95 % interval)",
        "steady hours simulated",
        "observed per hour (95 % interval)",
        "verdict",
    ]);
    for a in &outcome.advice {
        let Some((fe, lo, hi, c)) = outcome.agreement(a) else {
            continue;
        };
        let cur = &a.points[a.current.expect("an agreement has a current point")];
        t.rows.push(vec![
            Cell::text(&a.protocol),
            Cell::text(format!("{} ({}–{})", fmt_sig(fe), fmt_sig(lo), fmt_sig(hi))).sorted_by(fe),
            Cell::text(fmt_sig(cur.hours)).sorted_by(cur.hours),
            Cell::text(format!(
                "{} ({}–{})",
                fmt_sig(ob),
                fmt_sig(olo),
                fmt_sig(ohi)
            ))
            .sorted_by(ob),
            Cell::new(match c {
                Agreement::Consistent => vec![text("consistent: the intervals overlap")],
                Agreement::ModelTooQuiet => vec![
                    strong("disagree"),
                    text(": the cluster changes leader more often"),
                ],
                Agreement::ModelTooNoisy => vec![
                    strong("disagree"),
                    text(": the model changes leader more often"),
                ],
            }),
        ]);
    }
    d.push(Block::Table(t));
    let mut said = [false; 2];
    for a in &outcome.advice {
        match contradicted(outcome, a) {
            Some(Agreement::ModelTooQuiet) if !said[0] => {
                said[0] = true;
                d.paragraph(spans(&format!(
                    "**The noise model does not describe this cluster: it changes leader more often than the model does.** The measured network and disks (and the noise: {}) explain fewer elections than the cluster holds, so something the profile does not measure causes the rest: GC or stop-the-world pauses, CPU starvation or throttling, member restarts, network partitions or a leader moved on purpose (`etcdctl move-leader`). A recommendation from this model would promise a quiet cluster the real one is not, so none is given (the frontier below is what the model says, for reference). Find the cause, or add it as noise (`--set noise.pause_per_hour=... --set noise.pause_ms=empirical:FILE`), and tune again until the two agree.",
                    outcome.noise
                )));
            }
            Some(Agreement::ModelTooNoisy) if !said[1] => {
                said[1] = true;
                d.paragraph(spans(&format!(
                    "**The noise model does not describe this cluster: the model changes leader more often than the cluster does.** Its noise ({}) or its distributions are heavier than what the cluster lives with, so its advice would be too cautious (longer timeouts than needed); none is given. Lower the noise (`--set noise.*`) until the two agree.",
                    outcome.noise
                )));
            }
            _ => {}
        }
    }
    if !said[0] && !said[1] {
        d.paragraph(vec![text("The intervals overlap: these measurements cannot tell the model from the cluster, and the advice above rests on the model.")]);
    }
}

/// Writes `ADVICE.md`, `frontier.{svg,png}` and, when the disk curve ran,
/// `disks.{svg,png}` into `dir`; returns the page's path.
pub fn render_tune(outcome: &TuneOutcome, dir: &Path) -> Result<PathBuf, ReportError> {
    write_chart(&FrontierChart { outcome }, dir, "frontier", true)?;
    if outcome.advice.iter().any(|a| !a.disks.is_empty()) {
        write_chart(&DiskChart { outcome }, dir, "disks", true)?;
    }
    let path = dir.join("ADVICE.md");
    std::fs::write(&path, document(outcome).to_markdown())
        .map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}

/// "Is my disk good enough?": the disk curve's chart and table (nothing when it did not run).
fn disk_section(d: &mut Document, outcome: &TuneOutcome) {
    let o = &outcome.options;
    let with: Vec<&Advice> = outcome
        .advice
        .iter()
        .filter(|a| !a.disks.is_empty())
        .collect();
    if with.is_empty() {
        return;
    }
    let etcd = election_runner::disk::ETCD_P99_MS;
    d.heading(2, vec![text("Is my disk good enough?")]);
    let workload = if o.set.iter().any(|a| {
        a.split('=')
            .next()
            .is_some_and(|k| k.trim().starts_with("workload."))
    }) {
        "the workload given with `--set`".to_string()
    } else {
        format!(
            "a write every 100 ms, each a log entry the leader and a majority make durable ({})",
            election_runner::tune::DISK_WORKLOAD
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    d.paragraph(spans(&format!(
        "Each protocol's advised point (above) again, {} steady-noise hours on each disk preset (`node.disk`: its `node.fsync_ms` replaces the run's), the same seeds for every disk so that a difference comes from the disk, under the same noise and with {workload}: without writes a healthy cluster writes nothing to disk and no disk could cause an election. etcd's guidance is a WAL fsync p99 under {} ms (`etcd_disk_wal_fsync_duration_seconds`). Every preset is a log-normal derived from a published figure; the sources and the rules are in `crates/runner/src/disk.rs`. A node waiting for its disk handles nothing else (`node.fsync_ms`), so where a protocol writes on its heartbeat path a slow disk delays heartbeats like a pause; the bully and the ring write nothing durable there (an epoch or incarnation only at an election or a boot), and the lease's store makes each renewal durable on the same disk. `--disk-hours 0` skips this part.",
        o.disk_hours,
        fmt_sig(etcd)
    )));
    d.push(Block::Figure(Figure {
        path: "disks.png".into(),
        alt: "false elections per day against the disk's fsync p99".into(),
        caption: None,
    }));
    let mut header = vec!["disk".to_string(), "fsync".into(), "p99".into()];
    header.extend(
        with.iter()
            .map(|a| format!("{}: false elections a day (95 % interval)", a.protocol)),
    );
    let mut t = Table::new(header);
    for (j, disk) in election_runner::disk::DISKS.iter().enumerate() {
        let p99 = disk.p99_ms();
        let mut row = vec![
            Cell::new(vec![code(disk.name)]),
            Cell::new(vec![code(disk.fsync())]),
            // A preset built on etcd's 10 ms sits on the line (its rounded sigma puts it a
            // hair either side): within 1 % it is "at" the line.
            Cell::text(format!(
                "{} ms{}",
                fmt_sig(p99),
                if p99 > etcd * 1.01 {
                    ", over etcd's line"
                } else if p99 >= etcd * 0.99 {
                    ", at etcd's line"
                } else {
                    ""
                }
            ))
            .sorted_by(p99),
        ];
        for a in &with {
            let c = a.disks.get(j).filter(|c| c.disk.name == disk.name);
            row.push(match c {
                Some(c) => {
                    Cell::text(day(&c.point)).sorted_by(per_day(&c.point).map_or(f64::NAN, |x| x.0))
                }
                None => Cell::text("-"),
            });
        }
        t.rows.push(row);
    }
    d.push(Block::Table(t));
    let quiet: Vec<String> = with
        .iter()
        .filter(|a| a.disks.iter().all(|c| c.point.false_elections == 0))
        .map(|a| {
            let p = &a.disks[0].point;
            let worst = election_runner::disk::DISKS
                .iter()
                .map(|x| x.p99_ms())
                .fold(0.0, f64::max);
            format!(
                "{} (T = {} ms: the slowest preset's p99, {} ms, is {} % of it)",
                a.protocol,
                fmt_sig(p.timeout_ms),
                fmt_sig(worst),
                fmt_sig(100.0 * worst / p.timeout_ms)
            )
        })
        .collect();
    if !quiet.is_empty() {
        // With no event in `h` hours the 95 % upper bound is poisson_ci(0).1 / h an hour: the
        // hours it takes for that bound to reach the limit are what the section would need to
        // tell a preset that meets the limit from one that does not.
        let none_hi = election_runner::tune::poisson_ci(0).1;
        let per_day = |h: u64| none_hi * 24.0 / h as f64;
        let need = (none_hi * 24.0 / o.max_false_per_day).ceil() as u64;
        let enough = if per_day(o.disk_hours) <= o.max_false_per_day {
            format!(
                "{} hours are enough to show the limit of {} a day",
                o.disk_hours,
                fmt_sig(o.max_false_per_day)
            )
        } else {
            format!(
                "that bound, {} a day, is above the limit of {} a day, so this section cannot tell a preset that meets the limit from one that does not; with no false election that takes {need} hours a preset (`--disk-hours {need}`)",
                fmt_sig(per_day(o.disk_hours)),
                fmt_sig(o.max_false_per_day)
            )
        };
        d.paragraph(spans(&format!(
            "No preset caused a false election in {} hours at the advised timing of {}: at these timeouts the disk is not what decides within what {} hours can show (the 95 % upper bound in the table; {enough}). A disk whose writes stall for a large part of the timeout is `noise.stall_*`, not a preset.",
            o.disk_hours,
            quiet.join("; "),
            o.disk_hours
        )));
    }
    let timing: Vec<String> = with
        .iter()
        .map(|a| {
            let p = &a.disks[0].point;
            format!(
                "{} at T = {} ms, ratio {}",
                a.protocol,
                fmt_sig(p.timeout_ms),
                fmt_sig(p.ratio)
            )
        })
        .collect();
    d.paragraph(spans(&format!(
        "Timings: {}. Sources of the presets: {}.",
        timing.join("; "),
        election_runner::disk::DISKS
            .iter()
            .map(|x| format!("`{}`: {}", x.name, x.source))
            .collect::<Vec<_>>()
            .join("; ")
    )));
}

/// The advice page as a document.
pub(crate) fn document(outcome: &TuneOutcome) -> Document {
    let o = &outcome.options;
    let lim = (o.max_false_per_hour(), o.max_p99_ms);
    let mut d = Document::new(format!("Timeout advice: {}", o.name));
    d.paragraph(vec![
        text("Generated by "),
        code("election-bench tune"),
        text("; reproduce with "),
        code(outcome.command()),
        text(". The limits: at most "),
        strong(fmt_sig(o.max_false_per_day)),
        text(" false elections a day and a p99 failover under "),
        strong(format!("{} ms", fmt_sig(o.max_p99_ms))),
        text(format!(", at {} nodes on the ", o.nodes)),
        code(&o.net),
        text(" network. Every evaluated point is in "),
        Inline::Link {
            text: vec![code("points.csv")],
            href: "points.csv".into(),
        },
        text("; how it was searched is in "),
        Inline::Link {
            text: vec![code("manifest.json")],
            href: "manifest.json".into(),
        },
        text("."),
    ]);
    d.heading(2, vec![text("The answer")]);
    let mut t = Table::new([
        "protocol",
        "recommended timing",
        "p99 failover (95 % interval)",
        "false elections a day (95 % interval)",
        "verdict",
        "real settings",
    ]);
    for a in &outcome.advice {
        t.rows.extend(answer(a, outcome));
    }
    d.push(Block::Table(t));
    cluster_section(&mut d, outcome);
    for a in outcome
        .advice
        .iter()
        .filter(|a| a.chosen.is_none() && contradicted(outcome, a).is_none())
    {
        d.paragraph(vec![
            strong(format!("{}: no setting met both limits.", a.protocol)),
            text(" The closest evaluated points (the larger of each estimate over its limit, smallest first):"),
        ]);
        d.push(Block::list(
            a.closest
                .iter()
                .map(|&i| spans(&point_line(&a.points[i])))
                .collect(),
        ));
        let (fq, qf) = a.best_each;
        d.paragraph(spans(&format!(
            "The two limits pull apart: {}; {}. Relax one limit, lower the noise, or look at another protocol.",
            fq.map_or(
                "no evaluated point was shown (95 % upper bound) to meet the false-election limit".into(),
                |i| format!(
                    "the fastest point shown (95 % upper bound) to meet the false-election limit is {}",
                    point_line(&a.points[i])
                )
            ),
            qf.map_or(
                "no evaluated point's p99 meets the failover limit".into(),
                |i| format!(
                    "the quietest point whose p99 meets the failover limit is {}",
                    point_line(&a.points[i])
                )
            )
        )));
    }
    if !outcome.warnings.is_empty() {
        d.paragraph(vec![strong("What this budget can and cannot show:")]);
        d.push(Block::list(
            outcome.warnings.iter().map(|w| spans(w)).collect(),
        ));
    }
    d.heading(2, vec![text("What was measured, and under what")]);
    let mut measured: Vec<Vec<Inline>> = Vec::new();
    if let Some(p) = o.profile() {
        measured.push(spans(&format!(
            "**Cluster profile** (`--config {}`): {}. Written by `{}`.",
            o.config
                .as_ref()
                .map_or(String::new(), |(c, _)| c.display().to_string()),
            p.describe(),
            p.command
        )));
    } else if let Some((c, _)) = &o.config {
        measured.push(vec![
            strong("Configuration"),
            text(": "),
            code(format!("--config {}", c.display())),
            text("."),
        ]);
    }
    for (k, e) in &outcome.empirical {
        let unit = if k == "node.cpu_us" { "µs" } else { "ms" };
        measured.push(vec![
            Inline::Strong(vec![text("Measured "), code(k)]),
            text(": "),
            code(format!("empirical:{}", e["source"].as_str().unwrap_or(""))),
            text(" (sha256 "),
            code(e["sha256"].as_str().unwrap_or("")),
            text(format!(
                "), a {} of {} observations, median {} {unit}, p99 {} {unit}, drawn by inverse CDF{}.",
                e["kind"].as_str().unwrap_or(""),
                fmt_sig(e["observations"].as_f64().unwrap_or(f64::NAN)),
                fmt_sig(e["p50"].as_f64().unwrap_or(f64::NAN)),
                fmt_sig(e["p99"].as_f64().unwrap_or(f64::NAN)),
                match e["overflow"].as_f64() {
                    Some(x) if x > 0.0 =>
                        format!("; {x} observations above the largest bucket are drawn at it"),
                    _ => String::new(),
                }
            )),
        ]);
    }
    measured.push(spans("**A point** is a timeout `T` and a ratio `k` = `T` / the leader's heartbeat (the holder's renewal for lease), set as the protocol's own parameters (the *settings* column of `points.csv`; the rule is in `crates/runner/src/tune.rs`). Raft draws its election timeout in [T, 2T]; the bully and the ring suspect the leader after U[T, 2T]; a lease lasts T with a renew deadline of 2T/3."));
    measured.push(spans("**False elections**: `steady-noise` trials, a healthy cluster for an hour each under the noise below; every entry into the leader role there is an election nobody needed. Rates carry the exact Poisson 95 % interval."));
    measured.push(spans(&format!("**Failover**: `leader-crash` under the same noise, {} trials per point; p50/p95/p99 of `failover_ms` (results/README.md), with the distribution-free 95 % interval of the p99. A trial that never regained a leader counts as infinitely slow.", o.crash_trials)));
    measured.push(spans(&format!(
        "**Noise and node** (fixed for every point and protocol, the same instants for each): {}.",
        {
            let fixed = o.fixed_params();
            let v: Vec<String> = fixed.iter().map(|d| format!("`{d}`")).collect();
            let mut notes = Vec::new();
            if outcome.noise.contains("lognormal:") {
                notes.push("`lognormal:M:S` is a median of M ms with S the deviation of its logarithm: a heavy tail, in which the rare longest bursts cause most false elections");
            }
            if fixed.iter().any(|d| d == "noise.profile=busy") {
                notes.push("the `busy` profile is illustrative: set `noise.*` from your own measurements");
            }
            let node = fixed
                .iter()
                .rev()
                .find_map(|d| d.strip_prefix("node.profile="))
                .unwrap_or("server");
            format!(
                "{}: {}{}; node time and clocks as `node.profile = {node}` (`election-bench params`)",
                v.join(", "),
                outcome.noise,
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join("; "))
                }
            )
        }
    )));
    measured.push(spans(&format!(
        "**Search**: timeouts {}–{} ms on a 9-value log grid × ratios {}, then {} refinement rounds around the frontier, {} steady hours per point, confirmed points up to {} hours each and {} in all per protocol; when confirmation leaves no point within the limits, up to {} bisections between the largest timeout fast enough but too noisy and the smallest larger one quiet enough (phase `bisect-K` in `points.csv`, unless confirmed since). {} trials in all. The budget is simulated work, so the same command gives the same bytes everywhere.",
        fmt_sig(o.timeouts.0),
        fmt_sig(o.timeouts.1),
        o.ratios.iter().map(|r| fmt_sig(*r)).collect::<Vec<_>>().join(", "),
        o.rounds,
        o.hours,
        o.max_hours,
        election_runner::tune::CONFIRM_BUDGET * o.max_hours,
        o.rounds,
        outcome.trials
    )));
    d.push(Block::list(measured));
    d.heading(2, vec![text("The frontier")]);
    d.push(Block::Figure(Figure {
        path: "frontier.png".into(),
        alt: "p99 failover against false elections per day".into(),
        caption: None,
    }));
    d.paragraph(vec![text(
        "The points no other point of the same protocol beats on both; faster first.",
    )]);
    let mut t = Table::new([
        "protocol",
        "T",
        "ratio",
        "p50",
        "p95",
        "p99 (95 % interval)",
        "false elections a day (95 % interval)",
        "leaderless ms per hour",
        "steady hours",
        "verdict",
    ]);
    for a in &outcome.advice {
        for &i in &a.frontier {
            let p = &a.points[i];
            let mut verdict = vec![text(p.verdict(lim.0, lim.1).name())];
            if a.chosen == Some(i) && contradicted(outcome, a).is_none() {
                verdict.extend([text(", "), strong("recommended")]);
            } else if a.current == Some(i) {
                verdict.push(text(", the cluster's current settings"));
            }
            let key = |v: Option<f64>| v.unwrap_or(f64::NAN);
            t.rows.push(vec![
                Cell::text(&a.protocol),
                Cell::text(format!("{} ms", fmt_sig(p.timeout_ms))).sorted_by(p.timeout_ms),
                Cell::text(fmt_sig(p.ratio)).sorted_by(p.ratio),
                Cell::text(ms(p.failover(0.5))).sorted_by(key(p.failover(0.5))),
                Cell::text(ms(p.failover(0.95))).sorted_by(key(p.failover(0.95))),
                Cell::text(p99(p)).sorted_by(key(p.failover(0.99))),
                Cell::text(day(p)).sorted_by(key(per_day(p).map(|d| d.0))),
                Cell::text(if p.hours > 0.0 {
                    fmt_sig(p.leaderless_ms / p.hours)
                } else {
                    "-".into()
                }),
                Cell::text(fmt_sig(p.hours)).sorted_by(p.hours),
                Cell::new(verdict),
            ]);
        }
    }
    d.push(Block::Table(t));
    let unmeasured: u64 = outcome
        .advice
        .iter()
        .flat_map(|a| &a.points)
        .filter(|p| !p.measured())
        .count() as u64;
    if unmeasured > 0 {
        d.paragraph(spans(&format!(
            "{unmeasured} evaluated points are left off the frontier because some of their trials are not measurements (stopped by the work budget, or a fault that found no leader): see the `budget_exceeded` and `faults_skipped` columns of `points.csv`."
        )));
    }
    disk_section(&mut d, outcome);
    d.heading(2, vec![text("Real systems' settings")]);
    d.paragraph(spans("The recommended point of each protocol (or, when none meets the limits, its closest point) as each system spells it. The rules and their sources are in `crates/runner/src/tune/mapping.rs`."));
    for a in &outcome.advice {
        if contradicted(outcome, a).is_some() {
            continue;
        }
        let Some(i) = a.chosen.or(a.closest.first().copied()) else {
            continue;
        };
        let p = &a.points[i];
        d.heading(
            3,
            vec![text(format!(
                "{} at T = {} ms, ratio {}",
                a.protocol,
                fmt_sig(p.timeout_ms),
                fmt_sig(p.ratio)
            ))],
        );
        let mut items = Vec::new();
        for m in mapping::map(p.kind, p.timeout_ms, p.ratio) {
            let mut line = vec![strong(m.system), text(": ")];
            for (j, x) in m.settings.iter().enumerate() {
                if j > 0 {
                    line.push(text(", "));
                }
                line.extend([code(&x.name), text(" = "), code(&x.value)]);
            }
            if let Err(e) = &m.valid {
                line.push(text(" — "));
                line.push(strong("not accepted as is"));
                line.push(text(": "));
                line.extend(spans(&e.to_string()));
            }
            let mut sub: Vec<Vec<Inline>> = m.notes.iter().map(|n| spans(n)).collect();
            if let Some(c) = m.rule_set.and_then(|spec| a.system(spec)) {
                let q = &c.point;
                sub.push(spans(&format!(
                    "under its settings (T = {} ms, ratio {}) and its rules (`{}`), on the same seeds: p50 failover {}, p99 {}, false elections a day {}; tuned as `{}`: p50 {}, p99 {}, {} a day",
                    fmt_sig(q.timeout_ms),
                    fmt_sig(q.ratio),
                    c.spec,
                    ms(q.failover(0.5)),
                    p99(q),
                    day(q),
                    a.protocol,
                    ms(p.failover(0.5)),
                    p99(p),
                    day(p)
                )));
            }
            sub.push(vec![text(format!("source: {}", m.source))]);
            items.push(Item {
                text: line,
                items: sub,
            });
        }
        d.push(Block::List(items));
    }
    d.paragraph(spans("The simulated network and nodes set the scale: a point tuned on `lan` (0.25 ms one way) is not a point for a WAN. Tune on the profile your cluster has (`--net`, or a fitted one from `election-bench calibrate`), with the noise your nodes show."));
    d
}
