//! "Your cluster against the model" in a sweep's report: when the sweep ran from a cluster
//! profile (`election-bench profile`, recorded under `config.profile` in `manifest.json`) and
//! measured `steady-noise`, the simulated false elections beside the leader changes the
//! cluster was seen to make, per hour, each with its exact 95 % Poisson interval — the check
//! `tune --config` makes at the cluster's current settings, here at the settings the sweep ran.
//!
//! Simulated hours: each measured `steady-noise` trial runs the resolved `steady_ms` parameter
//! past its reference instant and never ends early (the scenario's definition), so a cell's
//! hours are its measured trials times `steady_ms`; its false elections are their
//! `leader_changes` (entries into the leader role at or after the reference instant: the cold
//! start's election is not one). Observed: the profile's `leader_changes` over `span_s`.

use election_runner::tune::{poisson_ci, Agreement};

use crate::data::{fmt_sig, Results};
use crate::doc::{spans, Inline};

const HOUR_MS: f64 = 3_600_000.0;

/// A resolved parameter of the manifest as written: its value, else its default.
fn param<'a>(results: &'a Results, key: &str) -> Option<&'a str> {
    let p = &results.manifest.config["params"][key];
    p["value"].as_str().or_else(|| p["default"].as_str())
}

/// The guide's line, or `None` without a profile, an observed rate or a `steady-noise` cell.
pub(crate) fn cluster_line(results: &Results) -> Option<Vec<Inline>> {
    let p = &results.manifest.config["profile"];
    let (changes, span_s) = (p["leader_changes"].as_u64()?, p["span_s"].as_f64()?);
    if span_s <= 0.0 {
        return None;
    }
    let steady_ms: f64 = param(results, "steady_ms")?.parse().ok()?;
    let span_h = span_s / 3600.0;
    let (olo, ohi) = poisson_ci(changes);
    let observed = (changes as f64 / span_h, olo / span_h, ohi / span_h);
    let mut cells = Vec::new();
    for r in results
        .summary
        .iter()
        .filter(|r| r.key.scenario == "steady-noise")
    {
        let trials = results.measured_trials_of(&r.key);
        if trials.is_empty() {
            continue;
        }
        let hours = trials.len() as f64 * steady_ms / HOUR_MS;
        let k: u64 = trials.iter().map(|t| u64::from(t.leader_changes)).sum();
        let (lo, hi) = poisson_ci(k);
        let (lo, hi) = (lo / hours, hi / hours);
        let verdict = match Agreement::of((lo, hi), (observed.1, observed.2)) {
            Agreement::Consistent => "consistent: the intervals overlap".to_string(),
            Agreement::ModelTooQuiet => format!(
                "**disagree**: the cluster changes leader more often; what causes its elections is not in this model (`{}` noise), so this sweep's other numbers describe a calmer cluster than yours",
                param(results, "noise.profile").unwrap_or("its")
            ),
            Agreement::ModelTooNoisy => {
                "**disagree**: the model changes leader more often than the cluster".to_string()
            }
        };
        cells.push(format!(
            "`{}` at n = {}: {} in {} simulated hours, {} an hour ({}–{}): {verdict}",
            r.key.protocol,
            r.key.nodes,
            k,
            fmt_sig(hours),
            fmt_sig(k as f64 / hours),
            fmt_sig(lo),
            fmt_sig(hi),
        ));
    }
    if cells.is_empty() {
        return None;
    }
    Some(spans(&format!(
        "**Your cluster against the model** (the profile's `etcd_server_leader_changes_seen_total`: {changes} leader changes in {} h, {} an hour, 95 % interval {}–{}; simulated: `leader_changes` in `steady-noise`, each with its exact 95 % Poisson interval): {}.",
        fmt_sig(span_h),
        fmt_sig(observed.0),
        fmt_sig(observed.1),
        fmt_sig(observed.2),
        cells.join("; ")
    )))
}
