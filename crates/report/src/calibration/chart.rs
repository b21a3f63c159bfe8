//! The calibration chart: one panel per protocol, the empirical distribution functions of
//! simulated and live failover times, with each median marked. Drawn once as SVG and once as
//! PNG, with the DejaVu Sans font compiled in (no system font needed).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::charts::{DrawResult, FONT};
use crate::error::ReportError;

const SIM: RGBColor = RGBColor(31, 119, 180);
const LIVE: RGBColor = RGBColor(214, 39, 40);

/// One panel: a protocol's two samples (ms), each sorted ascending.
#[derive(Clone, Debug)]
pub(crate) struct Panel {
    pub(crate) title: String,
    pub(crate) sim: Vec<f64>,
    pub(crate) live: Vec<f64>,
}

pub(crate) struct Chart {
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) panels: Vec<Panel>,
}

fn median(sorted: &[f64]) -> Option<f64> {
    election_runner::stats::percentile(sorted, 0.5)
}

fn ecdf(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut pts = Vec::with_capacity(2 * sorted.len());
    for (i, &x) in sorted.iter().enumerate() {
        pts.push((x, i as f64 / n));
        pts.push((x, (i + 1) as f64 / n));
    }
    pts
}

impl Chart {
    /// Write `dir/stem.svg` and `dir/stem.png`, with the report's font and PNG setup.
    pub(crate) fn write(&self, dir: &Path, stem: &str) -> Result<Vec<PathBuf>, ReportError> {
        crate::charts::write_chart(self, dir, stem, true)
    }
}

impl crate::charts::Chart for Chart {
    fn size(&self) -> (u32, u32) {
        (420 * self.panels.len().max(1) as u32, 460)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (w, _) = self.size();
        let (head, body) = root.split_vertically(78);
        head.draw(&Text::new(
            self.title.clone(),
            (16, 10),
            (FONT, 22).into_font().style(FontStyle::Bold),
        ))?;
        // Legend strip under the title, never over data.
        let y = 52;
        for (i, (label, colour)) in [
            ("simulated (fitted loopback latency)", SIM),
            ("live (UDP on loopback)", LIVE),
        ]
        .into_iter()
        .enumerate()
        {
            let x = 16 + i as i32 * (w as i32 / 2).min(360);
            head.draw(&PathElement::new(
                vec![(x, y), (x + 28, y)],
                colour.stroke_width(3),
            ))?;
            head.draw(&Text::new(label, (x + 36, y - 9), (FONT, 16).into_font()))?;
        }
        let areas = body.split_evenly((1, self.panels.len().max(1)));
        let all = self.panels.iter().flat_map(|p| p.sim.iter().chain(&p.live));
        let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
        let (lo, hi) = if lo.is_finite() && hi > lo {
            let pad = (hi - lo) * 0.05;
            ((lo - pad).max(0.0), hi + pad)
        } else {
            (0.0, 1.0)
        };
        for (area, panel) in areas.iter().zip(&self.panels) {
            let mut chart = ChartBuilder::on(area)
                .caption(&panel.title, (FONT, 17).into_font().style(FontStyle::Bold))
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(52)
                .build_cartesian_2d(lo..hi, 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_desc(self.x_label.as_str())
                .y_desc("fraction of trials ≤ x")
                .x_labels(6)
                .y_labels(6)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.1}"))
                .label_style((FONT, 13).into_font())
                .axis_desc_style((FONT, 14).into_font())
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            for (sample, colour) in [(&panel.sim, SIM), (&panel.live, LIVE)] {
                if sample.is_empty() {
                    continue;
                }
                chart.draw_series(LineSeries::new(ecdf(sample), colour.stroke_width(2)))?;
                if let Some(m) = median(sample) {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(m, 0.0), (m, 0.5)],
                        colour.mix(0.7).stroke_width(1),
                    )))?;
                    chart.draw_series(std::iter::once(Circle::new(
                        (m, 0.5),
                        4,
                        colour.filled(),
                    )))?;
                }
            }
        }
        Ok(())
    }
}
