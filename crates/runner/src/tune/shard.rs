//! A shard of `tune` (`tune --shard k/N`): the searches of the protocols it owns, whole, in its
//! `manifest.json`, and [`merge`], which joins every shard's into the outcome the unsharded run
//! has. Tune shards by protocol because a protocol's search is sequential (each phase starts
//! from the last one's frontier) while protocols are independent.
//!
//! Every evaluated point is recorded with its raw measurements (the failover of every crash
//! trial included), and the advice is recomputed from them on merge by the same code the
//! unsharded run uses. Real numbers are written as Rust prints them (`{:?}`: the shortest
//! text that reads back to the same bits, `inf` for a trial that never recovered), so that the
//! merged page is the unsharded page byte for byte.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{finish, Advice, DiskCheck, Point, Ran, Search, SystemCheck, TuneOptions, TuneOutcome};
use crate::empirical::sha256_hex;
use crate::error::{Error, Result};
use crate::protocol::ProtocolSpec;
use crate::shard::Shard;

/// A real number, exactly.
fn real(x: f64) -> Value {
    Value::String(format!("{x:?}"))
}

/// The SHA-256 (hex) of a file's bytes.
fn file_sha256(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    Ok(sha256_hex(&bytes))
}

/// The SHA-256 of a shard's searches as compact JSON (object keys sorted, real numbers as the
/// text they are written as): recorded beside them when the shard is written and checked by
/// [`merge`], so that a shard edited or corrupted since is refused before anything is
/// computed from it. Whoever edits a shard can recompute this too: [`verify`] runs a sample of
/// its points again.
fn searches_sha256(searches: &Value) -> String {
    sha256_hex(&serde_json::to_vec(searches).expect("serializable"))
}

/// The options that decide what a tune computes (not where it writes or how many threads);
/// a `--config` by its path as given and the SHA-256 of its bytes when the shard ran.
fn options_json(o: &TuneOptions) -> Result<Value> {
    let config = match &o.config {
        Some((p, _)) => Some(json!({
            "path": p.display().to_string(),
            "sha256": file_sha256(p)?,
        })),
        None => None,
    };
    Ok(json!({
        "config": config,
        "name": o.name,
        "protocols": o.protocols,
        "nodes": o.nodes,
        "net": o.net,
        "set": o.set,
        "max_false_per_day": real(o.max_false_per_day),
        "max_p99_ms": real(o.max_p99_ms),
        "timeouts": [real(o.timeouts.0), real(o.timeouts.1)],
        "ratios": o.ratios.iter().map(|&r| real(r)).collect::<Vec<_>>(),
        "hours": o.hours,
        "max_hours": o.max_hours,
        "crash_trials": o.crash_trials,
        "rounds": o.rounds,
        "disk_hours": o.disk_hours,
        "first_seed": o.first_seed,
    }))
}

fn point_json(p: &Point) -> Value {
    json!({
        "timeout_ms": real(p.timeout_ms),
        "ratio": real(p.ratio),
        "phase": p.phase,
        "hours": real(p.hours),
        "false_elections": p.false_elections,
        "elections_started": p.elections_started,
        "leaderless_ms": real(p.leaderless_ms),
        "crash_trials": p.crash_trials,
        "failover_ms": p.failover_ms.iter().map(|&x| real(x)).collect::<Vec<_>>(),
        "budget_exceeded": p.budget_exceeded,
        "faults_skipped": p.faults_skipped,
        "unsettled_starts": p.unsettled_starts,
        "steady_runs": p.steady_runs,
        "crash_runs": p.crash_runs,
    })
}

/// A shard's `manifest.json`: the command, the shard, the options and every search it ran.
pub(super) fn to_json(outcome: &TuneOutcome, shard: Shard) -> Result<Value> {
    let o = &outcome.options;
    // A search's index among the protocols as given (a spec as written, ` raft` included,
    // names the same protocol as its parsed form).
    let index = |name: &str| {
        o.protocols
            .iter()
            .position(|p| ProtocolSpec::parse(p).is_ok_and(|s| s.spec == name))
    };
    let searches: Vec<Value> = outcome
        .advice
        .iter()
        .map(|a| {
            json!({
                "index": index(&a.protocol),
                "protocol": a.protocol,
                "trials": a.trials,
                "unconfirmed": a.unconfirmed,
                "current": a.current,
                "noise": outcome.noise,
                "empirical": outcome.empirical,
                "points": a.points.iter().map(point_json).collect::<Vec<_>>(),
                "systems": a.systems.iter().map(|c| json!({
                    "spec": c.spec,
                    "point": point_json(&c.point),
                })).collect::<Vec<_>>(),
                "disks": a.disks.iter().map(|d| json!({
                    "disk": d.disk.name,
                    "point": point_json(&d.point),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({
        "tool": "election-bench",
        "version": env!("CARGO_PKG_VERSION"),
        "command": outcome.command(),
        "shard": shard.to_string(),
        "options": options_json(o)?,
        "searches_sha256": searches_sha256(&Value::Array(searches.clone())),
        "searches": searches,
    }))
}

/// Reads one shard's JSON, every error naming the file and the field.
struct Reader<'a> {
    path: &'a Path,
}

impl Reader<'_> {
    fn bad(&self, field: &str, v: &Value) -> Error {
        Error::Results(format!(
            "{}: {field} = {v}: not what a tune shard writes",
            self.path.display()
        ))
    }
    fn get<'v>(&self, v: &'v Value, field: &str) -> Result<&'v Value> {
        v.get(field)
            .ok_or_else(|| Error::Results(format!("{}: no field {field}", self.path.display())))
    }
    fn real(&self, v: &Value, field: &str) -> Result<f64> {
        let x = self.get(v, field)?;
        self.real_of(x, field)
    }
    fn real_of(&self, x: &Value, field: &str) -> Result<f64> {
        x.as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|f| !f.is_nan())
            .ok_or_else(|| self.bad(field, x))
    }
    fn count(&self, v: &Value, field: &str) -> Result<u64> {
        let x = self.get(v, field)?;
        x.as_u64().ok_or_else(|| self.bad(field, x))
    }
    fn text(&self, v: &Value, field: &str) -> Result<String> {
        let x = self.get(v, field)?;
        x.as_str()
            .map(String::from)
            .ok_or_else(|| self.bad(field, x))
    }
    fn array<'v>(&self, v: &'v Value, field: &str) -> Result<&'v Vec<Value>> {
        let x = self.get(v, field)?;
        x.as_array().ok_or_else(|| self.bad(field, x))
    }
    fn texts(&self, v: &Value, field: &str) -> Result<Vec<String>> {
        self.array(v, field)?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| self.bad(field, x))
            })
            .collect()
    }

    fn options(&self, v: &Value, out: &Path) -> Result<TuneOptions> {
        let mut o = TuneOptions::defaults(&self.text(v, "name")?);
        // The --config is read again, and must be the file the shards ran with.
        if let Some(c) = self.get(v, "config")?.as_object() {
            let path = PathBuf::from(self.text(&Value::Object(c.clone()), "path")?);
            let want = self.text(&Value::Object(c.clone()), "sha256")?;
            let got = file_sha256(&path)?;
            if got != want {
                return Err(Error::Results(format!(
                    "{}: the shards ran with --config {} of SHA-256 {want}, and it is now {got}; \
                     merge with the file they ran with",
                    self.path.display(),
                    path.display()
                )));
            }
            let spec = crate::SweepSpec::from_file(&path)?;
            o.config = Some((path, spec));
        }
        o.protocols = self.texts(v, "protocols")?;
        o.nodes =
            u32::try_from(self.count(v, "nodes")?).map_err(|_| self.bad("nodes", &v["nodes"]))?;
        o.net = self.text(v, "net")?;
        o.set = self.texts(v, "set")?;
        o.max_false_per_day = self.real(v, "max_false_per_day")?;
        o.max_p99_ms = self.real(v, "max_p99_ms")?;
        let t = self.array(v, "timeouts")?;
        if t.len() != 2 {
            return Err(self.bad("timeouts", &v["timeouts"]));
        }
        o.timeouts = (
            self.real_of(&t[0], "timeouts")?,
            self.real_of(&t[1], "timeouts")?,
        );
        o.ratios = self
            .array(v, "ratios")?
            .iter()
            .map(|x| self.real_of(x, "ratios"))
            .collect::<Result<_>>()?;
        o.hours = self.count(v, "hours")?;
        o.max_hours = self.count(v, "max_hours")?;
        o.crash_trials = self.count(v, "crash_trials")?;
        o.rounds = u32::try_from(self.count(v, "rounds")?)
            .map_err(|_| self.bad("rounds", &v["rounds"]))?;
        o.disk_hours = self.count(v, "disk_hours")?;
        o.first_seed = self.count(v, "first_seed")?;
        o.out = out.to_path_buf();
        o.progress = false;
        o.shard = None;
        o.validate()?;
        Ok(o)
    }

    fn point(&self, v: &Value, spec: &ProtocolSpec) -> Result<Point> {
        Ok(Point {
            protocol: spec.spec.clone(),
            kind: spec.kind,
            timeout_ms: self.real(v, "timeout_ms")?,
            ratio: self.real(v, "ratio")?,
            phase: self.text(v, "phase")?,
            hours: self.real(v, "hours")?,
            false_elections: self.count(v, "false_elections")?,
            elections_started: self.count(v, "elections_started")?,
            leaderless_ms: self.real(v, "leaderless_ms")?,
            crash_trials: self.count(v, "crash_trials")?,
            failover_ms: self
                .array(v, "failover_ms")?
                .iter()
                .map(|x| self.real_of(x, "failover_ms"))
                .collect::<Result<_>>()?,
            budget_exceeded: self.count(v, "budget_exceeded")?,
            faults_skipped: self.count(v, "faults_skipped")?,
            unsettled_starts: self.count(v, "unsettled_starts")?,
            steady_runs: self.count(v, "steady_runs")?,
            crash_runs: self.count(v, "crash_runs")?,
        })
    }
}

/// Join the shards of one tuning (`tune --shard k/N`, every `k` once, in any order) into the
/// outcome of the unsharded run, writing into `out`: each protocol's advice is recomputed from
/// its shard's points, and the protocols are taken in the order given. The caller writes it
/// ([`TuneOutcome::write`]) and renders its page.
pub fn merge(out: &Path, shards: &[PathBuf], force: bool) -> Result<TuneOutcome> {
    let set = crate::shard::read_set(
        out,
        shards,
        force,
        &["manifest.json", "points.csv", "ADVICE.md"],
    )?;
    let (_, base_dir, base) = &set[0];
    let base_path = base_dir.join("manifest.json");
    let r = Reader { path: &base_path };
    let o = r.options(r.get(base, "options")?, out)?;
    let specs: Vec<ProtocolSpec> = o
        .protocols
        .iter()
        .map(|s| ProtocolSpec::parse(s))
        .collect::<Result<_>>()?;
    let mut searched: Vec<Option<(Advice, Ran)>> = vec![None; specs.len()];
    for (shard, dir, m) in &set {
        let path = dir.join("manifest.json");
        let r = Reader { path: &path };
        if m.get("options") != base.get("options") {
            return Err(Error::Results(format!(
                "{} and {} are shards of different tunings (their options differ)",
                base_dir.display(),
                dir.display()
            )));
        }
        let recorded = r.text(m, "searches_sha256")?;
        let actual = searches_sha256(r.get(m, "searches")?);
        if recorded != actual {
            return Err(Error::Results(format!(
                "{}: its searches hash to SHA-256 {actual}, and the shard recorded {recorded} \
                 when it wrote them: the file was edited or corrupted since; run the shard again",
                path.display()
            )));
        }
        let mut have = BTreeSet::new();
        for s in r.array(m, "searches")? {
            let i = r.count(s, "index")? as usize;
            let protocol = r.text(s, "protocol")?;
            if specs.get(i).is_none_or(|sp| sp.spec != protocol) || !shard.owns(i) {
                return Err(Error::Results(format!(
                    "{}: search {i} ({protocol}) is not one shard {shard} runs",
                    path.display()
                )));
            }
            have.insert(i);
            let spec = &specs[i];
            let points = r
                .array(s, "points")?
                .iter()
                .map(|p| r.point(p, spec))
                .collect::<Result<Vec<_>>>()?;
            let current = match r.get(s, "current")? {
                Value::Null => None,
                v => Some(
                    v.as_u64()
                        .map(|i| i as usize)
                        .filter(|&i| i < points.len())
                        .ok_or_else(|| r.bad("current", v))?,
                ),
            };
            let empirical = r
                .array(s, "empirical")?
                .iter()
                .map(|e| match e.as_array().map(Vec::as_slice) {
                    Some([Value::String(k), v]) => Ok((k.clone(), v.clone())),
                    _ => Err(r.bad("empirical", e)),
                })
                .collect::<Result<Vec<_>>>()?;
            let search = Search {
                o: &o,
                spec,
                points,
                cells: Vec::new(),
                seen: BTreeSet::new(),
                trials: r.count(s, "trials")?,
                current,
            };
            let mut a = search.advice();
            a.systems = r
                .array(s, "systems")?
                .iter()
                .map(|c| {
                    let spec = ProtocolSpec::parse(&r.text(c, "spec")?)
                        .map_err(|_| r.bad("systems.spec", c))?;
                    Ok(SystemCheck {
                        point: r.point(r.get(c, "point")?, &spec)?,
                        spec: spec.spec,
                    })
                })
                .collect::<Result<_>>()?;
            a.disks = r
                .array(s, "disks")?
                .iter()
                .map(|d| {
                    let disk = crate::disk::named(&r.text(d, "disk")?)
                        .ok_or_else(|| r.bad("disks.disk", d))?;
                    Ok(DiskCheck {
                        disk,
                        point: r.point(r.get(d, "point")?, spec)?,
                    })
                })
                .collect::<Result<_>>()?;
            a.unconfirmed = match r.get(s, "unconfirmed")? {
                Value::Null => None,
                v => Some(
                    v.as_str()
                        .ok_or_else(|| r.bad("unconfirmed", v))?
                        .to_string(),
                ),
            };
            let ran = Ran {
                noise: r.text(s, "noise")?,
                empirical,
            };
            searched[i] = Some((a, ran));
        }
        let owned: BTreeSet<usize> = (0..specs.len()).filter(|&i| shard.owns(i)).collect();
        if have != owned {
            return Err(Error::Results(format!(
                "{}: shard {shard} holds the searches of protocols {have:?}, not {owned:?}",
                path.display()
            )));
        }
    }
    let mut advice = Vec::new();
    let mut ran = Ran::default();
    for (a, r) in searched.into_iter().flatten() {
        if ran.noise.is_empty() {
            ran = r;
        }
        advice.push(a);
    }
    Ok(finish(o, advice, ran))
}

/// Where a recorded point was evaluated, which decides the cells it ran on.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// The protocol's own search.
    Search,
    /// A system's rule set at the advised point ([`SystemCheck`]).
    System(&'a str),
    /// A disk preset at the advised point ([`DiskCheck`]).
    Disk(&'static crate::disk::Disk),
}

/// Runs `sample` of `outcome`'s recorded points again — drawn by `seed` among every search,
/// rule-set and disk point, in the order the page lists them — on the seeds they ran
/// ([`Point::steady_runs`] and [`Point::crash_runs`] from the first seed), and compares every
/// recorded field. A tuning is deterministic, so a point that differs was not computed from
/// its shard's options: the error names it and its first differing field. Returns the points
/// checked.
///
/// This is what makes a merge of tune shards trustworthy: the advice is recomputed from the
/// shards' points, and [`searches_sha256`] catches edits only by someone who did not
/// recompute it.
pub fn verify(outcome: &TuneOutcome, sample: u64, seed: u64) -> Result<u64> {
    use super::{evaluate, point_cell, point_cell_with, Job};
    use crate::progress::Progress;
    let o = &outcome.options;
    let mut all: Vec<(&str, Source, &Point)> = Vec::new();
    for a in &outcome.advice {
        all.extend(
            a.points
                .iter()
                .map(|p| (a.protocol.as_str(), Source::Search, p)),
        );
        all.extend(
            a.systems
                .iter()
                .map(|c| (a.protocol.as_str(), Source::System(&c.spec), &c.point)),
        );
        all.extend(
            a.disks
                .iter()
                .map(|d| (a.protocol.as_str(), Source::Disk(d.disk), &d.point)),
        );
    }
    let picks = crate::verify::pick(all.len() as u64, sample, seed);
    for &i in &picks {
        let (protocol, source, p) = all[i as usize];
        let spec = ProtocolSpec::parse(match source {
            Source::System(s) => s,
            Source::Search | Source::Disk(_) => protocol,
        })?;
        let (t, k) = (p.timeout_ms, p.ratio);
        let cells = match source {
            Source::Disk(disk) => {
                let steady =
                    point_cell_with(o, &spec, t, k, "steady-noise", super::disk_params(o, disk))?;
                (steady.clone(), steady)
            }
            Source::Search | Source::System(_) => (
                point_cell(o, &spec, t, k, "steady-noise")?,
                point_cell(o, &spec, t, k, "leader-crash")?,
            ),
        };
        let mut rerun = [Point::unmeasured(&p.protocol, p.kind, t, k, &p.phase)];
        let jobs: Vec<Job> = (0..p.steady_runs)
            .map(|s| Job::Steady(0, o.first_seed + s))
            .chain((0..p.crash_runs).map(|s| Job::Crash(0, o.first_seed + s)))
            .collect();
        let mut progress = Progress::labelled(false, "merge", protocol, "hours", 0, 1);
        evaluate(&[cells], &mut rerun, &jobs, &mut progress)?;
        let (want, got) = (point_json(p), point_json(&rerun[0]));
        if want != got {
            let field = want
                .as_object()
                .and_then(|w| w.iter().find(|(k, v)| got.get(k.as_str()) != Some(v)))
                .map_or_else(
                    || "its fields".to_string(),
                    |(k, v)| format!("{k} = {v} where a re-run gives {}", got[k.as_str()]),
                );
            let at = match source {
                Source::Search => String::new(),
                Source::System(s) => format!(" under {s}'s rules"),
                Source::Disk(d) => format!(" on the {} disk", d.name),
            };
            return Err(Error::Results(format!(
                "tune point {} at timeout {t} ms, ratio {k}{at} ({}): the shard records {field}; \
                 the shard was not computed from the options it records (edited, or written by \
                 other code)",
                p.protocol, p.phase
            )));
        }
    }
    Ok(picks.len() as u64)
}
