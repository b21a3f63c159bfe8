//! Regenerates the performance tables of `README.md` and `benches/README.md` from what the
//! benches measured, so that no figure is typed by hand: criterion's
//! `target/criterion/**/new/{benchmark.json,estimates.json}` (`cargo bench --bench simulator` and
//! `cargo bench --bench tune`), the peer comparisons' `target/peers/compare.jsonl`
//! (`benches/peers/compare.sh`: SimPy's and turmoil's rows) and the default sweep's timings,
//! `target/perf/sweep.jsonl` (`benches/tools/time_sweep.sh`).
//!
//! ```text
//! cargo bench --bench simulator -- --warm-up-time 1 --measurement-time 3
//! cargo bench --bench tune -- steady-noise-hour --warm-up-time 1 --measurement-time 5
//! benches/peers/compare.sh
//! benches/tools/time_sweep.sh
//! cargo run --release --example perf-table             # print the tables
//! cargo run --release --example perf-table -- --write  # rewrite them in both READMEs
//! ```
//!
//! With `--write`, the text between `<!-- perf-table:NAME -->` and `<!-- /perf-table:NAME -->`
//! in the READMEs is replaced (`headline` in `README.md`, `details` and `turmoil` in
//! `benches/README.md`).
//! Times are criterion's **median** per iteration, not its mean: the project's machine is
//! shared, and the median is the estimate least moved by another process taking the core
//! for a while. A benchmark or a file that is missing is reported as missing, not guessed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The targets of issue #18.
const ENGINE_TARGET: f64 = 25e6;
const BULLY_TARGET: f64 = 15e6;
const SCALING_SPREAD: f64 = 0.20;
const SIMPY_TARGET: f64 = 50.0;
/// The targets of issue #32 (ideal nodes: the `trial-ideal` benches).
const IDEAL_BULLY_TARGET: f64 = 10e6;
const IDEAL_TRIAL_TARGET: f64 = 8e6;
const SCALING_SPREAD_32: f64 = 0.30;
const SWEEP_TARGET_S: f64 = 45.0;

/// One benchmark's result.
#[derive(Clone, Debug)]
struct Bench {
    /// Median time per iteration, ns.
    median_ns: f64,
    /// Its 95 % confidence interval, ns.
    median_ci: (f64, f64),
    /// Elements (messages) per iteration, if the bench declared a throughput.
    elements: Option<u64>,
    /// When criterion wrote it.
    modified: std::time::SystemTime,
}

impl Bench {
    /// Messages per second at the median.
    fn rate(&self) -> Option<f64> {
        self.elements.map(|e| e as f64 / (self.median_ns * 1e-9))
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Every `new/` result under `dir`, by criterion's full id (`engine/ping-pong/2`).
fn load(dir: &Path, out: &mut BTreeMap<String, Bench>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        if p.file_name().is_some_and(|n| n == "new") {
            let (Some(b), Some(est)) = (
                read_json(&p.join("benchmark.json")),
                read_json(&p.join("estimates.json")),
            ) else {
                continue;
            };
            let Some(id) = b["full_id"].as_str() else {
                continue;
            };
            let m = &est["median"];
            let (Some(median), Some(lo), Some(hi)) = (
                m["point_estimate"].as_f64(),
                m["confidence_interval"]["lower_bound"].as_f64(),
                m["confidence_interval"]["upper_bound"].as_f64(),
            ) else {
                continue;
            };
            let modified = std::fs::metadata(p.join("estimates.json"))
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            out.insert(
                id.to_string(),
                Bench {
                    median_ns: median,
                    median_ci: (lo, hi),
                    elements: b["throughput"]["Elements"].as_u64(),
                    modified,
                },
            );
        } else {
            load(&p, out);
        }
    }
}

/// `id` split at `/` and `=`, numbers compared as numbers.
fn natural_key(id: &str) -> Vec<(String, u64)> {
    id.split(['/', '='])
        .map(|part| match part.parse::<u64>() {
            Ok(n) => (String::new(), n),
            Err(_) => (part.to_string(), 0),
        })
        .collect()
}

/// A duration in ns, with a unit that keeps 3 significant digits.
fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{} ms", sig3(ns / 1e6))
    } else if ns >= 1e3 {
        format!("{} µs", sig3(ns / 1e3))
    } else {
        format!("{} ns", sig3(ns))
    }
}

/// A rate in per second, in M or k.
fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{} M", sig3(r / 1e6))
    } else if r >= 1e3 {
        format!("{} k", sig3(r / 1e3))
    } else {
        sig3(r)
    }
}

fn sig3(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A count with thousands separators.
fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "**missed**"
    }
}

/// The peer comparisons' rows: (n, model) -> msgs/s, plus SimPy's and turmoil's versions.
struct Peers {
    rows: BTreeMap<(u64, String), Value>,
    modified: std::time::SystemTime,
}

fn load_peers(path: &Path) -> Option<Peers> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).ok()?;
        let n = v["n"].as_u64()?;
        let model = v["model"].as_str()?.to_string();
        rows.insert((n, model), v);
    }
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(Peers { rows, modified })
}

impl Peers {
    fn sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.rows.keys().map(|k| k.0).collect();
        v.dedup();
        v
    }
    /// Whether any row is `model`'s.
    fn has(&self, model: &str) -> bool {
        self.rows.keys().any(|k| k.1 == model)
    }
    /// The day `model`'s rows were measured: their `date` (written by `compare.sh`), else the
    /// file's.
    fn date(&self, model: &str) -> String {
        self.rows
            .iter()
            .filter(|(k, _)| k.1 == model)
            .find_map(|(_, v)| v["date"].as_str().map(str::to_string))
            .unwrap_or_else(|| date(self.modified))
    }
    fn rate(&self, n: u64, model: &str) -> Option<f64> {
        self.field(n, model, "msgs_per_s")
    }
    fn field(&self, n: u64, model: &str, field: &str) -> Option<f64> {
        self.rows.get(&(n, model.to_string()))?[field].as_f64()
    }
    /// The lowest and highest ratio of election-bench to `style` over the sizes.
    fn ratios(&self, style: &str) -> Vec<(u64, f64)> {
        self.sizes()
            .into_iter()
            .filter_map(|n| Some((n, self.rate(n, "election-bench")? / self.rate(n, style)?)))
            .collect()
    }
}

fn date(t: std::time::SystemTime) -> String {
    // Days since the epoch to a civil date (proleptic Gregorian), without a date crate.
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {cpu}")
}

/// The default sweep's timed runs (`benches/tools/time_sweep.sh`): wall and CPU seconds each,
/// the machine's cores, the trials, and when they were written.
struct SweepRuns {
    runs: Vec<(f64, f64)>,
    cores: u64,
    trials: u64,
    modified: std::time::SystemTime,
}

fn load_sweep(path: &Path) -> Option<SweepRuns> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut runs = Vec::new();
    let (mut cores, mut trials) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).ok()?;
        runs.push((v["wall_s"].as_f64()?, v["cpu_s"].as_f64()?));
        cores = v["cores"].as_u64()?;
        trials = v["trials"].as_u64()?;
    }
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    (!runs.is_empty()).then_some(SweepRuns {
        runs,
        cores,
        trials,
        modified,
    })
}

struct Tables {
    benches: BTreeMap<String, Bench>,
    peers: Option<Peers>,
    sweep: Option<SweepRuns>,
}

impl Tables {
    fn get(&self, id: &str) -> Option<&Bench> {
        self.benches.get(id)
    }

    /// The day of the results, or the span of days when they come from runs on several.
    fn when(&self) -> String {
        let days: std::collections::BTreeSet<String> =
            self.benches.values().map(|b| date(b.modified)).collect();
        match (days.first(), days.last()) {
            (Some(a), Some(b)) if a != b => format!("{a} to {b} (results of several runs)"),
            (Some(a), _) => a.clone(),
            _ => "never".into(),
        }
    }

    /// The raft-scaling rows: (n, bench).
    fn scaling(&self) -> Vec<(u32, &Bench)> {
        let mut v: Vec<(u32, &Bench)> = self
            .benches
            .iter()
            .filter_map(|(id, b)| {
                let n = id.strip_prefix("raft-scaling/leader-crash/raft/")?;
                Some((n.parse().ok()?, b))
            })
            .collect();
        v.sort_by_key(|r| r.0);
        v
    }

    /// Spread of the raft-scaling rates: (lowest, highest, highest / lowest - 1).
    fn scaling_spread(&self) -> Option<(f64, f64, f64)> {
        let rates: Vec<f64> = self.scaling().iter().filter_map(|r| r.1.rate()).collect();
        let lo = rates.iter().copied().reduce(f64::min)?;
        let hi = rates.iter().copied().reduce(f64::max)?;
        Some((lo, hi, hi / lo - 1.0))
    }

    /// The `trial-ideal/*` benches' rates: (id, messages/s).
    fn ideal_rates(&self) -> Vec<(&str, f64)> {
        self.benches
            .iter()
            .filter(|(id, _)| id.starts_with("trial-ideal/"))
            .filter_map(|(id, b)| Some((id.as_str(), b.rate()?)))
            .collect()
    }

    /// A headline row for one trial bench `id` against a messages/s `target`.
    fn trial_row(&self, id: &str, label: &str, target: f64) -> String {
        match self.get(id) {
            Some(b) => {
                let r = b.rate().unwrap_or(0.0);
                format!(
                    "| {label} | **{}/s** ({} per trial, {} messages) | {} |\n",
                    rate(r).replace(" M", " M msgs"),
                    time(b.median_ns),
                    count(b.elements.unwrap_or(0)),
                    met(r >= target)
                )
            }
            None => format!("| {label} | not measured | |\n"),
        }
    }

    /// A headline row for the raft-scaling spread against `spread_target`; `label` names the
    /// sizes as `{first}` and `{last}`.
    fn scaling_row(&self, label: &str, spread_target: f64) -> String {
        let scaling = self.scaling();
        match (self.scaling_spread(), scaling.first(), scaling.last()) {
            (Some((lo, hi, spread)), Some(first), Some(last)) => format!(
                "| {} | {}/s to {}/s: highest {:.0} % above lowest | {} |\n",
                label
                    .replace("{first}", &first.0.to_string())
                    .replace("{last}", &last.0.to_string()),
                rate(lo).replace(" M", " M msgs"),
                rate(hi).replace(" M", " M msgs"),
                spread * 100.0,
                met(spread <= spread_target)
            ),
            _ => format!(
                "| {} | not measured | |\n",
                label.replace("{first}", "5").replace("{last}", "1001")
            ),
        }
    }

    /// `README.md`'s table: each target of issues #18 and #32 with its figure.
    fn headline(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Generated by `cargo run --release --example perf-table -- --write` from `cargo bench \
             --bench simulator`, `cargo bench --bench tune` (criterion medians), \
             `benches/peers/compare.sh` and `benches/tools/time_sweep.sh`, run on {} ({}).\n",
            self.when(),
            machine()
        );
        s.push_str("| target | measured | verdict |\n| --- | --- | --- |\n");
        let engine: Vec<String> = [2, 64]
            .iter()
            .filter_map(|n| {
                let b = self.get(&format!("engine/ping-pong/{n}"))?;
                Some(format!(
                    "**{}/s** ({n} nodes)",
                    rate(b.rate()?).replace(" M", " M msgs")
                ))
            })
            .collect();
        let engine_ok = [2, 64].iter().all(|n| {
            self.get(&format!("engine/ping-pong/{n}"))
                .and_then(Bench::rate)
                .is_some_and(|r| r >= ENGINE_TARGET)
        });
        let _ = writeln!(
            s,
            "| engine ping-pong ≥ 25 M delivered messages/s on one core (`engine/ping-pong`) | {} | {} |",
            if engine.is_empty() { "not measured".into() } else { engine.join(", ") },
            met(engine_ok && !engine.is_empty())
        );
        s.push_str(&self.trial_row(
            "trial/leader-crash-lowest-detects/bully/101",
            "bully `leader-crash-lowest-detects` at n = 101 ≥ 15 M simulated messages/s",
            BULLY_TARGET,
        ));
        s.push_str(&self.scaling_row(
            "raft trial cost ∝ messages, n = {first} to {last} (messages/s flat within 20 %, `raft-scaling`)",
            SCALING_SPREAD,
        ));
        s.push_str(&self.trial_row(
            "trial-ideal/leader-crash-lowest-detects/bully/101",
            "bully `leader-crash-lowest-detects` at n = 101 with ideal nodes ≥ 10 M simulated messages/s (issue #32, `trial-ideal`)",
            IDEAL_BULLY_TARGET,
        ));
        let ideal = self.ideal_rates();
        match (
            ideal.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
            ideal.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
        ) {
            (Some(&(lo_id, lo)), Some(&(hi_id, hi))) => {
                let at_target = ideal.iter().filter(|r| r.1 >= IDEAL_TRIAL_TARGET).count();
                let _ = writeln!(
                    s,
                    "| every `trial-ideal/*` bench ≥ 8 M simulated messages/s (issue #32) | {at_target} of {} at or above; lowest **{}/s** (`{lo_id}`), highest {}/s (`{hi_id}`) | {} |",
                    ideal.len(),
                    rate(lo).replace(" M", " M msgs"),
                    rate(hi).replace(" M", " M msgs"),
                    met(at_target == ideal.len())
                );
            }
            _ => s.push_str(
                "| every `trial-ideal/*` bench ≥ 8 M simulated messages/s (issue #32) | not measured | |\n",
            ),
        }
        s.push_str(&self.scaling_row(
            "raft `leader-crash` messages/s flat within 30 % from n = {first} to {last} (issue #32, `raft-scaling`)",
            SCALING_SPREAD_32,
        ));
        let hours: Vec<(&str, &Bench)> = self
            .benches
            .iter()
            .filter_map(|(id, b)| {
                let rest = id.strip_prefix("tune/steady-noise-hour/")?;
                Some((rest.strip_suffix("/n=5")?, b))
            })
            .collect();
        if hours.is_empty() {
            s.push_str(
                "| an hour of simulated steady state at n = 5 costs under a second (issue #17; `tune/steady-noise-hour`) | not measured (run `cargo bench --bench tune`) | |\n",
            );
        } else {
            let slowest = hours.iter().map(|h| h.1.median_ns).fold(0.0, f64::max);
            let _ = writeln!(
                s,
                "| an hour of simulated steady state at n = 5 under the `busy` noise costs under a second (issue #17; `tune/steady-noise-hour`) | {} | {} |",
                hours
                    .iter()
                    .map(|(p, b)| format!("{p} {}", time(b.median_ns)))
                    .collect::<Vec<_>>()
                    .join(", "),
                met(slowest < 1e9)
            );
        }
        match &self.sweep {
            Some(sw) => {
                let mut walls: Vec<f64> = sw.runs.iter().map(|r| r.0).collect();
                walls.sort_by(f64::total_cmp);
                let median = walls[walls.len() / 2];
                let cpu = sw.runs.iter().map(|r| r.1).sum::<f64>() / sw.runs.len() as f64;
                let _ = writeln!(
                    s,
                    "| the default sweep (`cargo run --release -- sweep`: every trial, the charts and the report) under 45 s wall on 2 cores (issue #32; `benches/tools/time_sweep.sh`, {}) | **{median:.1} s** wall, the median of {} runs ({}), {cpu:.0} s of CPU on average; {} trials on {} cores | {} |",
                    date(sw.modified),
                    sw.runs.len(),
                    walls
                        .iter()
                        .map(|w| format!("{w:.1} s"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    count(sw.trials),
                    sw.cores,
                    met(median < SWEEP_TARGET_S)
                );
            }
            None => s.push_str(
                "| the default sweep under 45 s wall on 2 cores (issue #32) | not measured (run `benches/tools/time_sweep.sh`) | |\n",
            ),
        }
        match self.peers.as_ref().filter(|p| p.has("simpy-lean")) {
            Some(p) => {
                let lean = p.ratios("simpy-lean");
                let tutorial = p.ratios("simpy-tutorial");
                let fmt = |v: &[(u64, f64)]| {
                    v.iter()
                        .map(|(n, r)| format!("{r:.0} × (n = {n})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let ok = !lean.is_empty() && lean.iter().all(|r| r.1 >= SIMPY_TARGET);
                let _ = writeln!(
                    s,
                    "| full bully `leader-crash` trials ≥ 50 × the lean SimPy model (issues #18 and #32; `benches/peers/compare.sh`, {}) | lean: {}; tutorial style: {} | {} |",
                    p.date("simpy-lean"),
                    fmt(&lean),
                    fmt(&tutorial),
                    met(ok)
                );
            }
            None => s.push_str(
                "| full trials ≥ 50 × the lean SimPy model | not measured (run `benches/peers/compare.sh`) | |\n",
            ),
        }
        s
    }

    /// `benches/README.md`'s tables: every `simulator` and `tune` benchmark.
    fn details(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Generated by `cargo run --release --example perf-table -- --write` from criterion's \
             results of {} on {}. Time: criterion's median per iteration \
             [95 % interval]; rate: messages (the trial's every message, heartbeats included) \
             per second at the median.\n",
            self.when(),
            machine()
        );
        s.push_str("| benchmark | time | [95 % interval] | messages | messages/s |\n");
        s.push_str("| --- | ---: | ---: | ---: | ---: |\n");
        // Sizes in numeric order: `raft/5` before `raft/25` before `raft/1001`.
        let mut ids: Vec<&String> = self.benches.keys().collect();
        ids.sort_by_key(|id| natural_key(id));
        for id in ids {
            let b = &self.benches[id];
            let _ = writeln!(
                s,
                "| `{id}` | {} | [{}, {}] | {} | {} |",
                time(b.median_ns),
                time(b.median_ci.0),
                time(b.median_ci.1),
                b.elements.map_or("".into(), count),
                b.rate().map_or("".into(), |r| format!("{}/s", rate(r))),
            );
        }
        let scaling = self.scaling();
        if let (Some((_, _, spread)), Some(first)) = (self.scaling_spread(), scaling.first()) {
            let base = first.1.rate().unwrap_or(1.0);
            let _ = writeln!(
                s,
                "\nRaft `leader-crash` from {} to {} nodes (`raft-scaling`): the highest rate is \
                 {:.0} % above the lowest (targets: flat within 20 %, issue #18; within 30 %, issue #32).\n",
                first.0,
                scaling.last().map_or(0, |r| r.0),
                spread * 100.0
            );
            s.push_str("| n | trial | messages | messages/s | vs n = 5 |\n| ---: | ---: | ---: | ---: | ---: |\n");
            for (n, b) in &scaling {
                let r = b.rate().unwrap_or(0.0);
                let _ = writeln!(
                    s,
                    "| {n} | {} | {} | {}/s | {:.2} |",
                    time(b.median_ns),
                    count(b.elements.unwrap_or(0)),
                    rate(r),
                    r / base
                );
            }
        }
        if let Some(p) = self.peers.as_ref().filter(|p| p.has("simpy-lean")) {
            let _ = writeln!(
                s,
                "\nPeer comparison (`benches/peers/compare.sh`, {}; bully `leader-crash`, \
                 simulated messages per wall-clock second on one core):\n",
                p.date("simpy-lean")
            );
            s.push_str("| n | election-bench | SimPy tutorial | SimPy lean | ratio (tutorial) | ratio (lean) |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for n in p.sizes() {
                let (Some(r), Some(t), Some(l)) = (
                    p.rate(n, "election-bench"),
                    p.rate(n, "simpy-tutorial"),
                    p.rate(n, "simpy-lean"),
                ) else {
                    continue;
                };
                let _ = writeln!(
                    s,
                    "| {n} | {}/s | {}/s | {}/s | {:.0} × | {:.0} × |",
                    rate(r),
                    rate(t),
                    rate(l),
                    r / t,
                    r / l
                );
            }
            if let Some(v) = p.rows.values().find(|v| v["simpy"].is_string()) {
                let _ = writeln!(
                    s,
                    "\nSimPy {} on Python {}.",
                    v["simpy"].as_str().unwrap_or("?"),
                    v["python"].as_str().unwrap_or("?")
                );
            }
        }
        s
    }

    /// `benches/README.md`'s turmoil table (`PEERS=turmoil benches/peers/compare.sh`): raft-rs
    /// `leader-crash` through election-bench's `raftrs` family and through the turmoil peer.
    fn turmoil(&self) -> String {
        let mut s = String::new();
        let Some(p) = self
            .peers
            .as_ref()
            .filter(|p| p.has("turmoil") && p.has("election-bench-raftrs"))
        else {
            s.push_str(
                "turmoil peer: not measured (run `PEERS=turmoil benches/peers/compare.sh`)\n",
            );
            return s;
        };
        let version = p
            .rows
            .iter()
            .find(|(k, _)| k.1 == "turmoil")
            .and_then(|(_, v)| v["turmoil"].as_str())
            .unwrap_or("?");
        let _ = writeln!(
            s,
            "Generated by `cargo run --release --example perf-table -- --write` from \
             `PEERS=turmoil benches/peers/compare.sh` ({}, on {}): raftrs (raft-rs 0.7) \
             `leader-crash`, simulated messages and trials per wall-clock second on one core; \
             turmoil {version}.\n",
            p.date("turmoil"),
            machine()
        );
        s.push_str("| n | messages / trial (election-bench, turmoil) | election-bench raftrs | turmoil | ratio | trials/s (election-bench, turmoil) | converged (election-bench, turmoil) |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for n in p.sizes() {
            let eb = |f: &str| p.field(n, "election-bench-raftrs", f);
            let tu = |f: &str| p.field(n, "turmoil", f);
            let (Some(r), Some(t), Some(er), Some(et), Some(em), Some(tm)) = (
                eb("msgs_per_s"),
                tu("msgs_per_s"),
                eb("trials_per_s"),
                tu("trials_per_s"),
                eb("messages_per_trial"),
                tu("messages_per_trial"),
            ) else {
                continue;
            };
            let conv = |f: &dyn Fn(&str) -> Option<f64>| {
                format!(
                    "{} of {}",
                    count(f("converged").unwrap_or(0.0) as u64),
                    count(f("trials").unwrap_or(0.0) as u64)
                )
            };
            let _ = writeln!(
                s,
                "| {n} | {em:.0}, {tm:.0} | {}/s | {}/s | {:.0} × | {}, {} | {}; {} |",
                rate(r),
                rate(t),
                r / t,
                sig3(er),
                sig3(et),
                conv(&eb),
                conv(&tu)
            );
        }
        s
    }
}

/// Replace the text between `<!-- perf-table:NAME -->` and `<!-- /perf-table:NAME -->`.
fn splice(path: &Path, name: &str, body: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let open = format!("<!-- perf-table:{name} -->");
    let close = format!("<!-- /perf-table:{name} -->");
    let (Some(a), Some(b)) = (text.find(&open), text.find(&close)) else {
        return Err(format!("{}: no {open} ... {close} markers", path.display()));
    };
    let new = format!("{}{open}\n{body}{}", &text[..a], &text[b..]);
    std::fs::write(path, new).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write = args.iter().any(|a| a == "--write");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let mut benches = BTreeMap::new();
    for group in [
        "engine",
        "trial_leader-crash",
        "trial_leader-crash-lowest-detects",
        "trial-ideal_leader-crash",
        "trial-ideal_leader-crash-lowest-detects",
        "raft-scaling_leader-crash",
        "node-time",
        "tune",
    ] {
        load(&target.join("criterion").join(group), &mut benches);
    }
    let tables = Tables {
        benches,
        peers: load_peers(&target.join("peers").join("compare.jsonl")),
        sweep: load_sweep(&target.join("perf").join("sweep.jsonl")),
    };
    let headline = tables.headline();
    let details = tables.details();
    let turmoil = tables.turmoil();
    if write {
        for (file, name, body) in [
            ("README.md", "headline", &headline),
            ("benches/README.md", "details", &details),
            ("benches/README.md", "turmoil", &turmoil),
        ] {
            if let Err(e) = splice(&root.join(file), name, body) {
                eprintln!("perf-table: {e}");
                std::process::exit(1);
            }
            eprintln!("perf-table: rewrote {file} ({name})");
        }
    } else {
        println!("{headline}\n{details}\n{turmoil}");
    }
}
