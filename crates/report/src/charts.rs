//! The comparison charts, drawn with plotters once per backend: SVG (text stays text, for the
//! markdown) and PNG (rasterised with the DejaVu Sans font compiled into the binary, so the
//! charts look the same on a machine without any system font).
//!
//! Every chart has the same frame: a bold title, a legend strip under it (one swatch per
//! series, never covering data), then one or more panels with axis descriptions that carry
//! units. Each protocol spec has one colour everywhere ([`crate::palette`]).

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::fmt_num;
use crate::error::ReportError;
use crate::palette::Rgb;

/// The font family every chart uses; registered from the embedded DejaVu Sans.
pub const FONT: &str = "sans-serif";

/// Registers the embedded DejaVu Sans with plotters as [`FONT`] (once per process). Every
/// plotters chart of the workspace goes through it — the report's, the calibration chart
/// (`election-live`) and criterion's plots in `cargo bench` — since plotters is built with its
/// `ab_glyph` text backend, which sees no system font.
pub fn register_fonts() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // The bytes are a fixed, valid TrueType file; registration cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// What drawing returns: plotters' errors, boxed.
pub type DrawResult = Result<(), Box<dyn Error>>;

/// A chart that can be drawn on any plotters backend; [`write_chart`] writes it as SVG and PNG.
pub trait Chart {
    /// Pixel size.
    fn size(&self) -> (u32, u32);
    /// Draw everything on `root` (already white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

/// Writes `dir/stem.svg` and, if asked, `dir/stem.png` (the embedded font registered first).
/// Returns the files written.
pub fn write_chart<C: Chart>(
    chart: &C,
    dir: &Path,
    stem: &str,
    png: bool,
) -> Result<Vec<PathBuf>, ReportError> {
    register_fonts();
    let err = |e: Box<dyn Error>| ReportError::Chart {
        chart: stem.to_string(),
        reason: e.to_string(),
    };
    let (w, h) = chart.size();
    let mut files = Vec::new();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.into()))?;
        chart.draw(&root).map_err(err)?;
        root.present().map_err(|e| err(e.into()))?;
    }
    let svg_path = dir.join(format!("{stem}.svg"));
    fs::write(&svg_path, svg).map_err(|e| ReportError::io(&svg_path, e))?;
    files.push(svg_path);
    if png {
        let mut buf = vec![255u8; (w as usize) * (h as usize) * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(e.into()))?;
            chart.draw(&root).map_err(err)?;
            root.present().map_err(|e| err(e.into()))?;
        }
        let png_path = dir.join(format!("{stem}.png"));
        let bytes = encode_png(&buf, w, h).map_err(|e| err(e.into()))?;
        fs::write(&png_path, bytes).map_err(|e| ReportError::io(&png_path, e))?;
        files.push(png_path);
    }
    Ok(files)
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}

pub(crate) fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// One series of a chart: a protocol spec, possibly with one combination of varied
/// parameters.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Series {
    pub protocol: String,
    pub params: Vec<String>,
    pub label: String,
    pub colour: Rgb,
}

/// Line width of the `k`-th series. Earlier series are drawn wider (and with larger markers),
/// so a later series that coincides with one stays visible inside it.
pub(crate) fn line_width(k: usize) -> u32 {
    [5, 4, 4, 3, 3, 3, 2][k.min(6)]
}

fn marker_size(k: usize) -> i32 {
    [8, 7, 7, 6, 6, 5, 5][k.min(6)]
}

/// Draws the `k`-th series' marker (a shape per series: circle, square, triangle, diamond,
/// inverted triangle, cross, ring, then again) at `at`.
pub(crate) fn draw_marker<DB, CT>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    k: usize,
    colour: RGBColor,
) -> DrawResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    CT: plotters::coord::CoordTranslate,
{
    let s = marker_size(k);
    let fill = colour.filled();
    let e = EmptyElement::at(at);
    match k % 7 {
        0 => area.draw(&(e + Circle::new((0, 0), s, fill)))?,
        1 => area.draw(&(e + Rectangle::new([(-s + 1, -s + 1), (s - 1, s - 1)], fill)))?,
        2 => area.draw(&(e + Polygon::new(vec![(0, -s), (s, s - 1), (-s, s - 1)], fill)))?,
        3 => area.draw(&(e + Polygon::new(vec![(0, -s), (s, 0), (0, s), (-s, 0)], fill)))?,
        4 => area.draw(&(e + Polygon::new(vec![(0, s), (s, -s + 1), (-s, -s + 1)], fill)))?,
        5 => area.draw(
            &(e + PathElement::new(vec![(-s, -s), (s, s)], colour.stroke_width(3))
                + PathElement::new(vec![(-s, s), (s, -s)], colour.stroke_width(3))),
        )?,
        _ => area.draw(&(e + Circle::new((0, 0), s, colour.stroke_width(3))))?,
    }
    Ok(())
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    /// A line with the series' marker.
    Line,
    /// A line alone (curves drawn without markers).
    Plain,
    Bar,
}

pub(crate) fn title_style(size: u32) -> TextStyle<'static> {
    // `FontDesc::style` would keep the regular face's data: ask for the bold face itself.
    FontDesc::new(FontFamily::Name(FONT), size as f64, FontStyle::Bold).color(&BLACK)
}

pub(crate) fn text_style(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// A panel's title style: [`PANEL_TITLE_PX`], or smaller (down to 12 px) until `title` fits
/// the panel's width, so a long protocol spec is never clipped.
fn panel_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> TextStyle<'static> {
    let room = area.dim_in_pixel().0.saturating_sub(16);
    let mut px = PANEL_TITLE_PX;
    while px > 12 {
        match area.estimate_text_size(title, &title_style(px)) {
            Ok((w, _)) if w > room => px -= 1,
            _ => break,
        }
    }
    title_style(px)
}

const TITLE_PX: u32 = 28;
const PANEL_TITLE_PX: u32 = 21;
const DESC_PX: u32 = 20;
const LABEL_PX: u32 = 17;
const LEGEND_PX: u32 = 18;

/// Draws the chart title and a legend strip; returns the area left for panels.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    series: &[(String, RGBColor)],
    swatch: Swatch,
) -> Result<DrawingArea<DB, Shift>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let (w, _) = root.dim_in_pixel();
    let body = root.margin(10, 10, 16, 16);
    let (title_area, body) = body.split_vertically(if subtitle.is_empty() { 40 } else { 66 });
    title_area.draw(&Text::new(title, (0, 0), title_style(TITLE_PX)))?;
    if !subtitle.is_empty() {
        title_area.draw(&Text::new(
            subtitle,
            (0, 36),
            text_style(LEGEND_PX).color(&RGBColor(80, 80, 80)),
        ))?;
    }
    // Lay the legend out in rows.
    let style = text_style(LEGEND_PX);
    let usable = w.saturating_sub(40) as i32;
    let mut rows: Vec<Vec<LegendItem<'_>>> = vec![Vec::new()];
    let mut x = 0;
    for (label, colour) in series {
        let (tw, _) = root.estimate_text_size(label, &style)?;
        let item = 34 + tw as i32 + 26;
        if x > 0 && x + item > usable {
            rows.push(Vec::new());
            x = 0;
        }
        let k = rows.iter().map(Vec::len).sum::<usize>();
        rows.last_mut().unwrap().push((x, label, *colour, k));
        x += item;
    }
    let row_h = 28;
    let legend_h = rows.len() as u32 * row_h as u32 + 8;
    let (legend, panels) = body.split_vertically(legend_h);
    draw_legend(&legend, &rows, row_h, swatch, &style)?;
    // A chart taller than a screen repeats its legend under the panels, so that a reader
    // scrolled to the bottom of the HTML page still sees which colour is which.
    let (_, h) = panels.dim_in_pixel();
    if h > TALL_CHART_PX && !series.is_empty() {
        let (panels, bottom) = panels.split_vertically(h - legend_h);
        draw_legend(&bottom.margin(4, 0, 0, 0), &rows, row_h, swatch, &style)?;
        return Ok(panels);
    }
    Ok(panels)
}

/// A chart taller than this (px, under its legend) repeats the legend at its foot.
const TALL_CHART_PX: u32 = 1600;

/// One legend item: its x, label, colour and series index (for the marker).
type LegendItem<'a> = (i32, &'a str, RGBColor, usize);

fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    rows: &[Vec<LegendItem<'_>>],
    row_h: i32,
    swatch: Swatch,
    style: &TextStyle,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for (r, row) in rows.iter().enumerate() {
        let y = r as i32 * row_h + 12;
        for &(x, label, colour, k) in row {
            match swatch {
                Swatch::Line => {
                    legend.draw(&PathElement::new(
                        vec![(x, y), (x + 28, y)],
                        colour.stroke_width(line_width(k)),
                    ))?;
                    draw_marker(legend, (x + 14, y), k, colour)?;
                }
                Swatch::Plain => {
                    legend.draw(&PathElement::new(
                        vec![(x, y), (x + 28, y)],
                        colour.stroke_width(line_width(k)),
                    ))?;
                }
                Swatch::Bar => {
                    legend.draw(&Rectangle::new(
                        [(x, y - 8), (x + 28, y + 8)],
                        colour.filled(),
                    ))?;
                }
            }
            legend.draw(&Text::new(
                label,
                (x + 34, y),
                style.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
    }
    Ok(())
}

/// Draws a centred note in an empty panel.
pub(crate) fn empty_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    note: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        title,
        (w as i32 / 2, 10),
        panel_title(area, title).pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    area.draw(&Text::new(
        note,
        (w as i32 / 2, h as i32 / 2),
        text_style(LABEL_PX)
            .color(&RGBColor(110, 110, 110))
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    Ok(())
}

/// A compact number for axis labels: `0.5`, `12`, `1500`, `25k`.
pub(crate) fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{}k", fmt_num((v / 1000.0 * 10.0).round() / 10.0))
    } else if a >= 100.0 {
        format!("{}", v.round())
    } else if a >= 1.0 {
        fmt_num((v * 10.0).round() / 10.0)
    } else {
        fmt_num((v * 1000.0).round() / 1000.0)
    }
}

/// 1-2-5 key points covering `[lo, hi]` (both > 0), for log axes.
pub(crate) fn log_key_points(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if v >= lo * 0.9999 && v <= hi * 1.0001 {
                out.push(v);
            }
        }
        decade *= 10.0;
    }
    out
}

/// A log-scaled x range around the swept sizes, with the sizes as labels.
pub(crate) fn size_axis(sizes: &[f64]) -> (f64, f64) {
    let lo = sizes.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = sizes.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        (lo * 0.8, hi * 1.25)
    } else {
        (lo * 0.92, hi * 1.08)
    }
}

/// One line of a line panel.
pub(crate) struct Line {
    pub colour: RGBColor,
    /// The series' index (its marker shape and line width).
    pub k: usize,
    pub points: Vec<(f64, f64)>,
    /// A shaded band `(x, lo, hi)` drawn under the line.
    pub band: Vec<(f64, f64, f64)>,
}

/// A reference curve drawn as a grey dashed line with a label at its end.
pub(crate) struct Guide {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A panel of lines over cluster size (log x), with a log or linear y axis.
pub(crate) struct LinePanel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_y: bool,
    pub lines: Vec<Line>,
    pub guides: Vec<Guide>,
    pub x_keys: Vec<f64>,
    pub empty_note: String,
    /// `Some(max)`: the (linear) y axis ends there, the same in every panel of a set of small
    /// multiples; `None`: at the panel's own largest value.
    pub y_max: Option<f64>,
}

impl LinePanel {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let mut ys: Vec<f64> = Vec::new();
        for l in &self.lines {
            ys.extend(l.points.iter().map(|p| p.1));
            ys.extend(l.band.iter().flat_map(|b| [b.1, b.2]));
        }
        if self.log_y {
            ys.retain(|&y| y > 0.0);
        }
        if ys.is_empty() || self.x_keys.is_empty() {
            return empty_panel(area, &self.title, &self.empty_note);
        }
        let (x0, x1) = size_axis(&self.x_keys);
        let ymin = ys.iter().cloned().fold(f64::INFINITY, f64::min);
        let ymax = ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut chart = ChartBuilder::on(area);
        chart
            .caption(&self.title, panel_title(area, &self.title))
            .margin(12)
            .margin_right(28)
            .x_label_area_size(58)
            .y_label_area_size(84);
        let x_range = (x0..x1).log_scale().with_key_points(self.x_keys.clone());
        let x_fmt = |v: &f64| format!("{}", v.round());
        if self.log_y {
            let (lo, hi) = (ymin / 1.6, ymax * 1.6);
            let keys = log_key_points(lo, hi);
            let mut c = chart
                .build_cartesian_2d(x_range, (lo..hi).log_scale().with_key_points(keys.clone()))?;
            c.configure_mesh()
                .x_desc(&self.x_desc)
                .y_desc(&self.y_desc)
                .axis_desc_style(text_style(DESC_PX))
                .label_style(text_style(LABEL_PX))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&|v| compact(*v))
                .x_labels(self.x_keys.len())
                .y_labels(keys.len())
                .max_light_lines(2)
                .light_line_style(RGBColor(238, 238, 238))
                .bold_line_style(RGBColor(215, 215, 215))
                .draw()?;
            for g in &self.guides {
                let pts: Vec<(f64, f64)> = g
                    .points
                    .iter()
                    .cloned()
                    .filter(|&(_, y)| y >= lo && y <= hi)
                    .collect();
                if pts.len() < 2 {
                    continue;
                }
                let grey = RGBColor(120, 120, 120);
                c.draw_series(DashedLineSeries::new(
                    pts.clone(),
                    8,
                    6,
                    grey.stroke_width(2),
                ))?;
                let last = *pts.last().unwrap();
                c.draw_series(std::iter::once(
                    EmptyElement::at(last)
                        + Text::new(
                            g.label.clone(),
                            (-6, -6),
                            text_style(LABEL_PX)
                                .color(&grey)
                                .pos(Pos::new(HPos::Right, VPos::Bottom)),
                        ),
                ))?;
            }
            for l in &self.lines {
                let pts: Vec<(f64, f64)> = l.points.iter().cloned().filter(|p| p.1 > 0.0).collect();
                c.draw_series(LineSeries::new(
                    pts.clone(),
                    l.colour.stroke_width(line_width(l.k)),
                ))?;
                for p in pts {
                    draw_marker(c.plotting_area(), p, l.k, l.colour)?;
                }
            }
        } else {
            let ymax = self.y_max.unwrap_or(ymax);
            let hi = if ymax > 0.0 { ymax * 1.08 } else { 1.0 };
            let mut c = chart.build_cartesian_2d(x_range, 0f64..hi)?;
            c.configure_mesh()
                .x_desc(&self.x_desc)
                .y_desc(&self.y_desc)
                .axis_desc_style(text_style(DESC_PX))
                .label_style(text_style(LABEL_PX))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&|v| compact(*v))
                .x_labels(self.x_keys.len())
                .y_labels(8)
                .max_light_lines(2)
                .light_line_style(RGBColor(238, 238, 238))
                .bold_line_style(RGBColor(215, 215, 215))
                .draw()?;
            for l in &self.lines {
                if l.band.len() >= 2 {
                    let mut poly: Vec<(f64, f64)> = l.band.iter().map(|b| (b.0, b.2)).collect();
                    poly.extend(l.band.iter().rev().map(|b| (b.0, b.1)));
                    c.draw_series(std::iter::once(Polygon::new(poly, l.colour.mix(0.12))))?;
                    for edge in [
                        l.band.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>(),
                        l.band.iter().map(|b| (b.0, b.2)).collect::<Vec<_>>(),
                    ] {
                        c.draw_series(LineSeries::new(edge, l.colour.mix(0.45).stroke_width(1)))?;
                    }
                } else if let Some(b) = l.band.first() {
                    c.draw_series(std::iter::once(PathElement::new(
                        vec![(b.0, b.1), (b.0, b.2)],
                        l.colour.mix(0.6).stroke_width(2),
                    )))?;
                }
            }
            for l in &self.lines {
                c.draw_series(LineSeries::new(
                    l.points.clone(),
                    l.colour.stroke_width(line_width(l.k)),
                ))?;
                for &p in &l.points {
                    draw_marker(c.plotting_area(), p, l.k, l.colour)?;
                }
            }
        }
        Ok(())
    }
}

/// A panel of lines over the values of one varied parameter, linear y from 0. The x axis is
/// numeric when every value is a number (`net.loss` 0, 0.05, 0.1: distances are honest) and
/// categorical otherwise (`raft.timeout_ms` 150-300, 300-600: one slot per value, in sweep
/// order); either way each point's x is its position on that axis ([`ParamAxis::x`]).
pub(crate) struct ParamPanel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub axis: ParamAxis,
    pub lines: Vec<Line>,
    /// `Some(max)`: the y axis ends there (a rate in percent ends at 100).
    pub y_max: Option<f64>,
}

/// The x axis of a [`ParamPanel`]: the parameter's values, in sweep order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ParamAxis {
    pub values: Vec<String>,
    /// Each value as a number, when all are numbers.
    pub numeric: Option<Vec<f64>>,
}

impl ParamAxis {
    pub(crate) fn new(values: Vec<String>) -> ParamAxis {
        let numeric: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
        ParamAxis {
            values,
            numeric: numeric.filter(|n| n.iter().all(|x| x.is_finite())),
        }
    }

    /// The x position of `value`, if it is one of the axis' values.
    pub(crate) fn x(&self, value: &str) -> Option<f64> {
        let i = self.values.iter().position(|v| v == value)?;
        Some(match &self.numeric {
            Some(n) => n[i],
            None => i as f64,
        })
    }

    fn range(&self) -> (f64, f64) {
        match &self.numeric {
            Some(n) => {
                let lo = n.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = n.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let pad = if hi > lo {
                    (hi - lo) * 0.06
                } else {
                    lo.abs().max(1.0) * 0.5
                };
                (lo - pad, hi + pad)
            }
            None => (-0.4, self.values.len() as f64 - 0.6),
        }
    }

    fn keys(&self) -> Vec<f64> {
        match &self.numeric {
            Some(n) => n.clone(),
            None => (0..self.values.len()).map(|i| i as f64).collect(),
        }
    }

    fn label(&self, x: f64) -> String {
        let keys = self.keys();
        keys.iter()
            .position(|k| (k - x).abs() <= 1e-9 * k.abs().max(1.0))
            .map(|i| self.values[i].clone())
            .unwrap_or_default()
    }
}

/// A linear f64 axis whose ticks are exactly the given values (plotters' `with_key_points`
/// keeps a plain f64 range's "no default formatting", which the mesh cannot label).
struct KeyAxis {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl plotters::coord::ranged1d::Ranged for KeyAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl ParamPanel {
    /// Whether any line has a point: a panel without is not drawn.
    pub(crate) fn has_data(&self) -> bool {
        self.lines.iter().any(|l| !l.points.is_empty())
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let ymax = self
            .lines
            .iter()
            .flat_map(|l| {
                l.points
                    .iter()
                    .map(|p| p.1)
                    .chain(l.band.iter().map(|b| b.2))
            })
            .fold(0.0f64, f64::max);
        let hi = match self.y_max {
            Some(m) => m,
            None if ymax > 0.0 => ymax * 1.08,
            None => 1.0,
        };
        let (x0, x1) = self.axis.range();
        let mut chart = ChartBuilder::on(area);
        chart
            .caption(&self.title, panel_title(area, &self.title))
            .margin(12)
            .margin_right(28)
            .x_label_area_size(58)
            .y_label_area_size(84);
        let keys = self.axis.keys();
        let x_axis = KeyAxis {
            lo: x0,
            hi: x1,
            keys: keys.clone(),
        };
        let mut c = chart.build_cartesian_2d(x_axis, 0f64..hi)?;
        let x_fmt = |v: &f64| self.axis.label(*v);
        c.configure_mesh()
            .x_desc(&self.x_desc)
            .y_desc(&self.y_desc)
            .axis_desc_style(text_style(DESC_PX))
            .label_style(text_style(LABEL_PX))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|v| compact(*v))
            .x_labels(keys.len())
            .y_labels(8)
            .max_light_lines(2)
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()?;
        for l in &self.lines {
            if l.band.len() >= 2 {
                let mut poly: Vec<(f64, f64)> = l.band.iter().map(|b| (b.0, b.2)).collect();
                poly.extend(l.band.iter().rev().map(|b| (b.0, b.1)));
                c.draw_series(std::iter::once(Polygon::new(poly, l.colour.mix(0.12))))?;
            }
            // Every band point also gets a whisker, so a band of one point still shows.
            for b in &l.band {
                c.draw_series(std::iter::once(PathElement::new(
                    vec![(b.0, b.1), (b.0, b.2)],
                    l.colour.mix(0.6).stroke_width(2),
                )))?;
            }
        }
        for l in &self.lines {
            c.draw_series(LineSeries::new(
                l.points.clone(),
                l.colour.stroke_width(line_width(l.k)),
            ))?;
            for &p in &l.points {
                draw_marker(c.plotting_area(), p, l.k, l.colour)?;
            }
        }
        Ok(())
    }
}

impl Panel for ParamPanel {
    fn draw_panel<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        self.draw(area)
    }
}

/// Cumulative distributions over a linear x axis.
pub(crate) struct CdfPanel {
    pub title: String,
    pub x_desc: String,
    /// Per series: colour, sorted values, and the number of trials (the denominator, so that
    /// trials that never converged keep the curve below 100%).
    pub curves: Vec<(RGBColor, Vec<f64>, usize)>,
    pub empty_note: String,
}

impl CdfPanel {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let xmax = self
            .curves
            .iter()
            .flat_map(|c| c.1.iter().cloned())
            .fold(f64::NEG_INFINITY, f64::max);
        let xmin = self
            .curves
            .iter()
            .flat_map(|c| c.1.iter().cloned())
            .fold(f64::INFINITY, f64::min);
        if !xmax.is_finite() {
            return empty_panel(area, &self.title, &self.empty_note);
        }
        // Start the axis near the fastest trial (at zero when that is not far from it), so
        // the curves use the width; each curve starts at its own first value.
        let span = (xmax - xmin).max(xmax * 0.05).max(1.0);
        let xmin = if xmin < span {
            0.0
        } else {
            (xmin - span * 0.08).max(0.0)
        };
        let xmax = xmax + span * 0.06;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, panel_title(area, &self.title))
            .margin(12)
            .margin_right(30)
            .x_label_area_size(58)
            .y_label_area_size(84)
            .build_cartesian_2d(xmin..xmax, 0f64..1.0)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_desc)
            .y_desc("trials converged within x (%)")
            .axis_desc_style(text_style(DESC_PX))
            .label_style(text_style(LABEL_PX))
            .x_label_formatter(&|v| compact(*v))
            .y_label_formatter(&|v| format!("{}", (v * 100.0).round()))
            .x_labels(10)
            .y_labels(11)
            .max_light_lines(2)
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()?;
        for (k, (colour, values, total)) in self.curves.iter().enumerate() {
            if values.is_empty() || *total == 0 {
                continue;
            }
            let mut pts = Vec::with_capacity(2 * values.len() + 1);
            for (i, &v) in values.iter().enumerate() {
                pts.push((v, i as f64 / *total as f64));
                pts.push((v, (i + 1) as f64 / *total as f64));
            }
            let last = pts.last().unwrap().1;
            pts.push((xmax, last));
            chart.draw_series(LineSeries::new(pts, colour.stroke_width(line_width(k))))?;
        }
        Ok(())
    }
}

/// One bar of a horizontal grouped bar panel.
#[derive(Clone, Debug)]
pub(crate) struct Bar {
    pub value: f64,
    pub whisker: Option<(f64, f64)>,
    pub text: String,
}

/// Horizontal grouped bars: one group per category (top to bottom in the given order), one
/// bar per series inside a group.
pub(crate) struct BarPanel {
    pub title: String,
    pub x_desc: String,
    pub categories: Vec<String>,
    pub colours: Vec<RGBColor>,
    /// Each series' label, printed on every bar of the series (beside it, or inside it where
    /// the panel has no room to its right), so no bar needs the legend's colours to be read.
    pub labels: Vec<String>,
    /// `bars[category][series]`.
    pub bars: Vec<Vec<Option<Bar>>>,
    pub x_max: Option<f64>,
    pub empty_note: String,
}

impl BarPanel {
    /// Height in pixels this panel needs to stay legible.
    pub(crate) fn height(&self) -> u32 {
        let per_group = (self.colours.len().max(1) as u32 * 17 + 22).max(60);
        150 + per_group * self.categories.len().max(1) as u32
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let m = self.categories.len();
        let any = self.bars.iter().flatten().any(Option::is_some);
        if m == 0 || !any {
            return empty_panel(area, &self.title, &self.empty_note);
        }
        let data_max = self
            .bars
            .iter()
            .flatten()
            .flatten()
            .map(|b| b.whisker.map_or(b.value, |w| w.1.max(b.value)))
            .fold(0.0, f64::max);
        let x_max = self
            .x_max
            .unwrap_or(if data_max > 0.0 { data_max * 1.18 } else { 1.0 });
        let label_w = {
            let style = text_style(LABEL_PX);
            let mut w = 60;
            for c in &self.categories {
                w = w.max(area.estimate_text_size(c, &style)?.0 + 24);
            }
            w
        };
        let mut builder = ChartBuilder::on(area);
        if !self.title.is_empty() {
            builder.caption(&self.title, panel_title(area, &self.title));
        }
        let mut chart = builder
            .margin(12)
            .margin_right(36)
            .x_label_area_size(58)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0f64..x_max, 0f64..m as f64)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_desc)
            .axis_desc_style(text_style(DESC_PX))
            .label_style(text_style(LABEL_PX))
            .x_label_formatter(&|v| compact(*v))
            .y_labels(0)
            .x_labels(8)
            .disable_y_mesh()
            .max_light_lines(1)
            .light_line_style(RGBColor(242, 242, 242))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()?;
        // Category names, centred on their group, right-aligned against the axis. Category 0
        // is drawn at the top.
        let (ax, ay) = area.get_base_pixel();
        for (ci, name) in self.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, (m - 1 - ci) as f64 + 0.5));
            area.draw(&Text::new(
                name.clone(),
                (px - ax - 10, py - ay),
                text_style(LABEL_PX).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        let k = self.colours.len().max(1);
        let h = 0.84 / k as f64;
        for (ci, group) in self.bars.iter().enumerate() {
            let base = (m - 1 - ci) as f64;
            // Separator between groups.
            if ci > 0 {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, base + 1.0), (x_max, base + 1.0)],
                    RGBColor(200, 200, 200).stroke_width(1),
                )))?;
            }
            for (si, bar) in group.iter().enumerate() {
                let Some(bar) = bar else { continue };
                let top = base + 0.92 - si as f64 * h;
                let bottom = top - h * 0.86;
                let yc = (top + bottom) / 2.0;
                let colour = self.colours[si];
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, bottom), (bar.value.max(0.0), top)],
                    colour.filled(),
                )))?;
                let mut text_x = bar.value.max(0.0);
                if let Some((lo, hi)) = bar.whisker {
                    let dark = RGBColor(70, 70, 70);
                    let cap = h * 0.3;
                    chart.draw_series([
                        PathElement::new(vec![(lo, yc), (hi, yc)], dark.stroke_width(1)),
                        PathElement::new(
                            vec![(lo, yc - cap), (lo, yc + cap)],
                            dark.stroke_width(2),
                        ),
                        PathElement::new(
                            vec![(hi, yc - cap), (hi, yc + cap)],
                            dark.stroke_width(2),
                        ),
                    ])?;
                    text_x = text_x.max(hi);
                }
                let text = bar_label(self.labels.get(si).map(String::as_str), &bar.text);
                if !text.is_empty() {
                    let style = text_style(14).color(&RGBColor(50, 50, 50));
                    let (tw, _) = area.estimate_text_size(&text, &style)?;
                    let right = chart.plotting_area().get_pixel_range().0.end;
                    let (px, _) = chart.backend_coord(&(text_x, yc));
                    let (bx, _) = chart.backend_coord(&(bar.value.max(0.0), yc));
                    let (x0, _) = chart.backend_coord(&(0.0, yc));
                    if px + 6 + tw as i32 <= right || bx - x0 < tw as i32 + 12 {
                        chart.draw_series(std::iter::once(
                            EmptyElement::at((text_x, yc))
                                + Text::new(
                                    text,
                                    (6, 0),
                                    style.pos(Pos::new(HPos::Left, VPos::Center)),
                                ),
                        ))?;
                    } else {
                        // No room right of the bar: inside it, at its end (before its
                        // whisker, where that leaves room), in white (black on a light colour).
                        let mut end = bar.value.max(0.0);
                        if let Some((lo, _)) = bar.whisker.filter(|w| w.0 < end) {
                            let (lx, _) = chart.backend_coord(&(lo, yc));
                            if lx - x0 >= tw as i32 + 12 {
                                end = lo;
                            }
                        }
                        let luma =
                            colour.0 as u32 * 299 + colour.1 as u32 * 587 + colour.2 as u32 * 114;
                        let ink = if luma > 130_000 { BLACK } else { WHITE };
                        chart.draw_series(std::iter::once(
                            EmptyElement::at((end, yc))
                                + Text::new(
                                    text,
                                    (-6, 0),
                                    text_style(14)
                                        .color(&ink)
                                        .pos(Pos::new(HPos::Right, VPos::Center)),
                                ),
                        ))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a bar of `value`, quoted `quoted` by the text's formatter ([`crate::quote::shown`]),
/// says beside it: the quote, except for a bar of exactly zero, which draws nothing and so
/// reads `none` — the word the matrix gives a zero (`0% of trials` **none**), so "nothing
/// happened" never looks like "too small to see" (`bully · 0.03 ms` still quotes its number).
pub(crate) fn bar_text(value: f64, quoted: String) -> String {
    if value == 0.0 {
        "none".to_string()
    } else {
        quoted
    }
}

/// The text beside a bar: its series' label, then its value (`raft+pre_vote · 96%`).
pub(crate) fn bar_label(series: Option<&str>, value: &str) -> String {
    match (series.filter(|s| !s.is_empty()), value.is_empty()) {
        (Some(s), false) => format!("{s} · {value}"),
        (Some(s), true) => s.to_string(),
        (None, _) => value.to_string(),
    }
}

/// Panels laid side by side under one frame.
pub(crate) struct PanelChart<P> {
    pub title: String,
    pub subtitle: String,
    pub legend: Vec<(String, RGBColor)>,
    pub swatch: Swatch,
    pub panels: Vec<P>,
    pub size: (u32, u32),
    /// Panels side by side, at most; more wrap into rows.
    pub cols: usize,
}

/// Something a [`PanelChart`] can lay out.
pub(crate) trait Panel {
    fn draw_panel<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

impl Panel for LinePanel {
    fn draw_panel<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        self.draw(area)
    }
}
impl Panel for CdfPanel {
    fn draw_panel<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        self.draw(area)
    }
}
impl Panel for BarPanel {
    fn draw_panel<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        self.draw(area)
    }
}

impl<P: Panel> Chart for PanelChart<P> {
    fn size(&self) -> (u32, u32) {
        self.size
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let body = frame(root, &self.title, &self.subtitle, &self.legend, self.swatch)?;
        let cols = self.panels.len().clamp(1, self.cols.max(1));
        let rows = self.panels.len().div_ceil(cols).max(1);
        let areas = body.split_evenly((rows, cols));
        for (p, a) in self.panels.iter().zip(areas.iter()) {
            p.draw_panel(a)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_axis_is_numeric_only_when_every_value_is_a_number() {
        let loss = ParamAxis::new(vec!["0".into(), "0.05".into(), "0.1".into()]);
        assert_eq!(loss.x("0.05"), Some(0.05));
        assert_eq!(loss.label(0.1), "0.1");
        let range = ParamAxis::new(vec!["150-300".into(), "300-600".into()]);
        assert_eq!(range.numeric, None);
        assert_eq!(range.x("300-600"), Some(1.0));
        assert_eq!(range.x("1-2"), None);
        assert_eq!(range.label(0.0), "150-300");
        assert_eq!(range.label(0.5), "");
    }

    #[test]
    fn log_keys_are_1_2_5() {
        assert_eq!(
            log_key_points(3.0, 120.0),
            vec![5.0, 10.0, 20.0, 50.0, 100.0]
        );
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact(0.5), "0.5");
        assert_eq!(compact(12.34), "12.3");
        assert_eq!(compact(1500.0), "1500");
        assert_eq!(compact(25_000.0), "25k");
    }
}
