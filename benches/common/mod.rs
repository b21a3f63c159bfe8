//! What the benches share: building one trial from the runner's catalog (so scenario,
//! protocol-spec and network names mean exactly what they mean in `election-bench run`), and
//! criterion measurements whose unit is not wall-clock time.
#![allow(dead_code)] // each bench uses its own part

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;
use election_runner::{Cell, SweepSpec};

/// Register the embedded DejaVu Sans as plotters' `sans-serif`, the family criterion's
/// plots use. The workspace builds plotters with its `ab_glyph` text backend (for the report
/// crate), which has no system fonts: without this, criterion's HTML report panics with
/// `FontUnavailable`. Call it before running any benchmark.
pub fn register_fonts() {
    election_report::charts::register_fonts();
}

/// The runner's cell for one protocol spec, cluster size and scenario, on the runner's
/// default network profile and default parameters (`extra`: `key=value` overrides).
pub fn cell(protocol: &str, nodes: u32, scenario: &str, extra: &[&str]) -> Cell {
    let mut spec = SweepSpec {
        protocols: Some(vec![protocol.to_string()]),
        nodes: Some(vec![nodes]),
        scenarios: Some(vec![scenario.to_string()]),
        seeds: Some(1),
        ..SweepSpec::default()
    };
    for kv in extra {
        spec.set(kv).unwrap_or_else(|e| panic!("--set {kv}: {e}"));
    }
    let what = format!("{protocol} / {nodes} nodes / {scenario}");
    let plan = spec.plan().unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut cells = plan.cells().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(cells.len(), 1, "{what}: one cell");
    let cell = cells.remove(0);
    if let Some(why) = &cell.skipped {
        panic!("{what} is skipped by the runner: {why}");
    }
    cell
}

/// One trial's outcome, reduced to what the election benches measure.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Simulated failover time, ms: the runner's `elect_ms` (fault to the final agreed
    /// leader). A trial that never converges counts its whole observed window (fault to the
    /// end of the trial), a lower bound on its failover time.
    pub failover_ms: f64,
    /// Election messages: the runner's `msgs_election` (every category but heartbeats, from
    /// the fault to the final agreement).
    pub messages: u64,
    /// Whether the trial converged.
    pub converged: bool,
    /// Every message of the trial (heartbeats included, from boot to the end).
    pub total_messages: u64,
}

/// Run one trial of `cell` with `seed`.
pub fn outcome(cell: &Cell, seed: u64) -> Outcome {
    let run = cell
        .run(seed, false)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let m = &run.report.metrics;
    Outcome {
        failover_ms: m.elect_ms.unwrap_or(m.end_ms - m.reference_ms),
        messages: m.window.sent_election(),
        converged: m.converged,
        total_messages: m.total.sent_total(),
    }
}

/// A measurement whose value is the sum of what `iter_custom` reports for its iterations
/// (not a time: only `iter_custom` makes sense with it, `iter` would measure zero), so
/// criterion's estimates are per-trial means in the unit its formatter `F` prints.
pub struct Summed<F>(F);

/// Simulated milliseconds: the sum of the iterations' simulated failover times.
pub type SimulatedMs = Summed<SimulatedMsFormatter>;
/// The [`SimulatedMs`] measurement.
pub const SIMULATED_MS: SimulatedMs = Summed(SimulatedMsFormatter);

/// Messages: the sum of the iterations' message counts (an `f64`, so that the dither described
/// in `benches/elections.rs` can be added).
pub type Messages = Summed<MessagesFormatter>;
/// The [`Messages`] measurement.
pub const MESSAGES: Messages = Summed(MessagesFormatter);

impl<F: ValueFormatter> Measurement for Summed<F> {
    type Intermediate = ();
    type Value = f64;
    fn start(&self) {}
    fn end(&self, _: ()) -> f64 {
        0.0
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &self.0
    }
}

/// Prints simulated milliseconds.
pub struct SimulatedMsFormatter;

impl ValueFormatter for SimulatedMsFormatter {
    fn scale_values(&self, typical_ms: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical_ms < 1.0 {
            (1e3, "µs (sim)")
        } else if typical_ms < 1e4 {
            (1.0, "ms (sim)")
        } else {
            (1e-3, "s (sim)")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    /// Per-iteration elements over simulated time: elements per simulated second.
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let per = match *t {
            Throughput::Bits(x)
            | Throughput::Bytes(x)
            | Throughput::BytesDecimal(x)
            | Throughput::Elements(x)
            | Throughput::ElementsAndBytes { elements: x, .. } => x as f64,
        };
        values.iter_mut().for_each(|v| *v = per * 1e3 / *v);
        "elem/s (sim)"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ms"
    }
}

/// Prints message counts.
pub struct MessagesFormatter;

impl ValueFormatter for MessagesFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        if typical < 1e4 {
            "msgs"
        } else {
            values.iter_mut().for_each(|v| *v *= 1e-3);
            "k msgs"
        }
    }

    /// Per-iteration elements per message.
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let per = match *t {
            Throughput::Bits(x)
            | Throughput::Bytes(x)
            | Throughput::BytesDecimal(x)
            | Throughput::Elements(x)
            | Throughput::ElementsAndBytes { elements: x, .. } => x as f64,
        };
        values.iter_mut().for_each(|v| *v = per / *v);
        "elem/msg"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "msgs"
    }
}
