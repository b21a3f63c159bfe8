//! Re-running one trial of a sweep with tracing on, through `election-runner`: the
//! [`TrialTracer`] the CLI hands to [`render_report`](crate::render_report).
//!
//! A trial is fixed by its cell and its seed, so running it again gives the same event log and
//! the same metrics as the sweep did (the report checks the metrics against `trials.csv` and
//! warns if they differ). The cell is rebuilt from a base [`SweepSpec`]: the spec the sweep ran
//! with ([`RunnerTracer::new`], at the end of `sweep`), or one read back from the sweep's
//! `manifest.json` ([`RunnerTracer::from_manifest`]: its fixed parameters, custom network
//! profiles and custom scenarios).

use std::path::Path;

use election_runner::config::NetDef;
use election_runner::net::{profile_of, NetProfile};
use election_runner::scenario::{Scenario, ScenarioDef};
use election_runner::SweepSpec;
use serde_json::Value;

use crate::data::Results;
use crate::error::ReportError;
use crate::{TracedTrial, TrialId, TrialTracer};

/// Runs single trials of a sweep again with tracing on.
#[derive(Clone, Debug)]
pub struct RunnerTracer {
    base: SweepSpec,
}

impl RunnerTracer {
    /// Trials are cells of `base` (its fixed parameters, custom nets and scenarios), narrowed
    /// to the trial's protocol, size, scenario, net, varied values and seed.
    pub fn new(base: SweepSpec) -> RunnerTracer {
        RunnerTracer { base }
    }

    /// The base spec read back from `results_dir/manifest.json`.
    pub fn from_manifest(results_dir: &Path) -> Result<RunnerTracer, ReportError> {
        let results = Results::load(results_dir)?;
        let path = results_dir.join("manifest.json");
        let bad = |reason: String| ReportError::Manifest {
            path: path.clone(),
            reason,
        };
        let config = &results.manifest.config;
        let mut spec = SweepSpec::default();
        if let Some(Value::Object(params)) = config.get("params") {
            for (key, p) in params {
                match p.get("value") {
                    None | Some(Value::Null) => {}
                    Some(Value::String(v)) => spec.params.push((key.clone(), vec![v.clone()])),
                    Some(other) => spec.params.push((key.clone(), vec![other.to_string()])),
                }
            }
        }
        if let Some(Value::Array(nets)) = config.get("nets") {
            for n in nets {
                let name = n.get("name").and_then(Value::as_str).unwrap_or_default();
                if name.is_empty() || NetProfile::builtin(name).is_some() {
                    continue;
                }
                spec.custom_nets.push(NetDef {
                    name: name.to_string(),
                    base: None,
                    about: n.get("about").and_then(Value::as_str).map(str::to_string),
                    latency: n.get("latency").and_then(Value::as_str).map(str::to_string),
                    loss: n.get("loss").and_then(Value::as_f64),
                    duplicate: n.get("duplicate").and_then(Value::as_f64),
                    fifo: n.get("fifo").and_then(Value::as_bool),
                    links: n
                        .get("links")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|l| {
                            Some(election_runner::config::LinkDef {
                                from: u32::try_from(l.get("from")?.as_u64()?).ok()?,
                                to: u32::try_from(l.get("to")?.as_u64()?).ok()?,
                                latency: l.get("latency")?.as_str()?.to_string(),
                            })
                        })
                        .collect(),
                });
            }
        }
        if let Some(Value::Array(scenarios)) = config.get("scenarios") {
            for s in scenarios {
                let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
                let Some(source) = s.get("custom") else {
                    continue;
                };
                if Scenario::builtin(name).is_some() {
                    continue;
                }
                let def: ScenarioDef = serde_json::from_value(source.clone())
                    .map_err(|e| bad(format!("custom scenario {name:?}: {e}")))?;
                spec.custom_scenarios.insert(name.to_string(), def);
            }
        }
        Ok(RunnerTracer { base: spec })
    }

    fn spec_for(&self, id: &TrialId) -> Result<SweepSpec, String> {
        // The net column names the profile and the fixed `net.*` parameters overriding it,
        // which the base spec already holds.
        let mut spec =
            self.base
                .clone()
                .one_cell(&id.protocol, id.nodes, &id.scenario, profile_of(&id.net));
        spec.first_seed = Some(id.seed);
        for (k, v) in &id.params {
            if !v.is_empty() {
                spec.set(&format!("{k}={v}")).map_err(|e| e.to_string())?;
            }
        }
        Ok(spec)
    }
}

impl TrialTracer for RunnerTracer {
    fn trace_trial(&self, id: &TrialId) -> Result<TracedTrial, String> {
        let plan = self.spec_for(id)?.plan().map_err(|e| e.to_string())?;
        let cell = plan
            .runnable_cell(|_, why| format!("{id} is skipped: {why}"))
            .map_err(|e| e.to_string())?;
        let run = cell.run(id.seed, true).map_err(|e| e.to_string())?;
        Ok(TracedTrial {
            events: run.report.trace,
            metrics: run.report.metrics,
        })
    }
}
