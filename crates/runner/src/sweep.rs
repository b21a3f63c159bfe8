//! Running a sweep: every cell's seeds in parallel on every core, rows appended to
//! `trials.csv` cell by cell in cell order, then `summary.csv` and `manifest.json` written
//! atomically.
//!
//! # Determinism
//!
//! A trial depends only on its cell and seed. Cells are computed in windows of consecutive
//! cells (all their trials in parallel), and a window's rows are written in cell order, then
//! seed order, so the bytes of every file are the same whatever `--jobs` is.
//!
//! # Crash safety and `--resume`
//!
//! Each cell's rows go to `trials.csv` in one write as soon as its window completes. At the
//! start of a sweep, `.in-progress.json` records the manifest it will write; `--resume` checks
//! that the existing `trials.csv` belongs to the same configuration (header, marker, and every
//! row's cell and seed), drops a trailing partial cell or line, and continues with the next
//! cell. The summary and manifest are computed from `trials.csv` itself at the end, so a
//! resumed sweep writes exactly the files an uninterrupted one would.
//!
//! # Sharding
//!
//! `--shard k/N` (1-based `k`) runs the cells whose index `i` has `i mod N = k − 1`:
//! round-robin, so that expensive and cheap cells spread evenly over the shards. Each shard
//! writes the three files for its own cells, and its manifest says which shard it is;
//! [`merge`] interleaves the shards back into exactly the unsharded files.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::error::{usage, Error, Result};
use crate::files::{csv_bytes, prepare_dir, read_csv, write_atomic};
use crate::plan::{Cell, SweepPlan};
use crate::progress::Progress;
use crate::results::{summary_header, summary_record, trial_header, TrialRow};

/// The marker holding the manifest of a sweep in progress.
pub const IN_PROGRESS: &str = ".in-progress.json";

/// One slice of a sharded sweep: shard `k` of `n`, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `1..=n`.
    pub k: u32,
    /// Number of shards.
    pub n: u32,
}

impl FromStr for Shard {
    type Err = Error;
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            Error::Usage(format!(
                "--shard {s:?}: expected k/N with 1 <= k <= N (e.g. 1/4 ... 4/4)"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// Does this shard run cell `index`?
    pub fn owns(&self, index: usize) -> bool {
        index % self.n as usize == (self.k - 1) as usize
    }
}

/// How to carry out a sweep (none of it changes the results).
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// The directory receiving the files.
    pub out: PathBuf,
    /// Worker threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// Run one slice of the cells.
    pub shard: Option<Shard>,
    /// Continue an interrupted sweep in `out`.
    pub resume: bool,
    /// Show progress on stderr.
    pub progress: bool,
    /// The command line that reproduces the sweep (recorded in the manifest).
    pub command: String,
    /// The git commit the tool was built from, if known.
    pub git_commit: Option<String>,
}

/// What a sweep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOutcome {
    /// Where the files are.
    pub out: PathBuf,
    /// Cells in this run (this shard's, if sharded), skipped ones included.
    pub cells: usize,
    /// Of which skipped.
    pub skipped: usize,
    /// Trials in the results.
    pub trials: u64,
    /// Cells found complete and kept by `--resume`.
    pub resumed_cells: usize,
}

/// The manifest of a sweep (or shard) of `cells` cells and `trials` trials.
pub fn manifest(plan: &SweepPlan, opts: &SweepOptions, cells: usize, trials: u64) -> Value {
    let mut m = Map::new();
    m.insert("tool".into(), "election-bench".into());
    m.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    m.insert(
        "git_commit".into(),
        opts.git_commit.clone().map_or(Value::Null, Value::String),
    );
    m.insert("name".into(), plan.name.clone().into());
    m.insert("command".into(), opts.command.clone().into());
    m.insert("config".into(), plan.manifest_config());
    if let Some(s) = opts.shard {
        m.insert("shard".into(), s.to_string().into());
    }
    m.insert("cells".into(), cells.into());
    m.insert("trials".into(), trials.into());
    Value::Object(m)
}

/// JSON as the results files hold it: pretty, with a final newline.
pub fn json_bytes(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).expect("serializable");
    s.push('\n');
    s.into_bytes()
}

fn same_sweep(a: &Value, b: &Value) -> bool {
    ["name", "config", "shard"]
        .iter()
        .all(|k| a.get(k) == b.get(k))
}

/// Group `rows` (in file order) by the runnable cells of `cells`, checking every row's cell
/// and seed. Returns the complete cells' row counts consumed and the byte offset after the
/// last complete cell; a trailing partial cell is not counted. Rows that belong to no cell in
/// order are an error.
fn match_rows(
    cells: &[&Cell],
    plan: &SweepPlan,
    rows: &[(TrialRow, u64)],
    file: &Path,
) -> Result<(usize, u64)> {
    let seeds = plan.seeds as usize;
    let mut pos = 0;
    let mut complete = 0;
    let mut offset = None;
    for cell in cells.iter().filter(|c| c.skipped.is_none()) {
        if pos == rows.len() {
            break;
        }
        let key = cell.key();
        let avail = (rows.len() - pos).min(seeds);
        for (j, (row, _)) in rows[pos..pos + avail].iter().enumerate() {
            let seed = plan.first_seed + j as u64;
            if row.cell_key() != key || row.seed != seed {
                return Err(Error::Results(format!(
                    "{}: row {} is {} seed {}, but this configuration expects {} seed {seed} there; \
                     the file comes from another sweep (rerun without --resume, or use another --out)",
                    file.display(),
                    pos + j + 2,
                    describe_key(row),
                    row.seed,
                    cell.describe(&plan.varied_keys()),
                )));
            }
        }
        if avail < seeds {
            break; // a partial cell: dropped, rerun
        }
        pos += seeds;
        complete += 1;
        offset = Some(rows[pos - 1].1);
    }
    if pos + seeds <= rows.len() {
        return Err(Error::Results(format!(
            "{}: more rows than this configuration has cells",
            file.display()
        )));
    }
    Ok((complete, offset.unwrap_or(0)))
}

fn describe_key(r: &TrialRow) -> String {
    let mut s = format!(
        "{} / {} nodes / {} / {}",
        r.protocol, r.nodes, r.scenario, r.net
    );
    for v in &r.params {
        s.push_str(&format!(" / {v}"));
    }
    s
}

/// Read `trials.csv`: its header must be `header`; returns each row with the byte offset
/// after it, or `None` if the file does not even hold a complete header line.
fn read_trials(
    path: &Path,
    header: &[String],
    n_params: usize,
) -> Result<Option<Vec<(TrialRow, u64)>>> {
    let recs = read_csv(path)?;
    let Some((first, _)) = recs.first() else {
        return Ok(None);
    };
    if first.iter().ne(header.iter().map(String::as_str)) {
        return Err(Error::Results(format!(
            "{}: the header does not match this configuration's columns ({})",
            path.display(),
            header.join(",")
        )));
    }
    recs[1..]
        .iter()
        .enumerate()
        .map(|(i, (rec, off))| {
            let fields: Vec<&str> = rec.iter().collect();
            TrialRow::from_record(&fields, n_params)
                .map(|r| (r, *off))
                .map_err(|e| Error::Results(format!("{} line {}: {e}", path.display(), i + 2)))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The offset just past the header line of `trials.csv`.
fn header_len(header: &[String]) -> u64 {
    csv_bytes([header]).len() as u64
}

/// Run `plan` (the whole grid, or one shard of it) into `opts.out`.
pub fn run_sweep(plan: &SweepPlan, opts: &SweepOptions) -> Result<SweepOutcome> {
    let all = plan.cells()?;
    let cells: Vec<&Cell> = all
        .iter()
        .filter(|c| opts.shard.is_none_or(|s| s.owns(c.index)))
        .collect();
    let runnable = cells.iter().filter(|c| c.skipped.is_none()).count();
    let total_trials = runnable as u64 * plan.seeds;
    let varied = plan.varied_keys();
    let header = trial_header(&varied);
    let out = &opts.out;
    let trials_path = out.join("trials.csv");
    let marker = out.join(IN_PROGRESS);
    let expected = manifest(plan, opts, cells.len(), total_trials);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| Error::Usage(format!("--jobs: {e}")))?;

    prepare_dir(out)?;

    // Resume: keep the complete cells already written.
    let mut done_cells = 0;
    let mut keep_bytes = 0;
    if opts.resume && trials_path.exists() {
        let recorded = [marker.clone(), out.join("manifest.json")]
            .into_iter()
            .find(|p| p.exists());
        let Some(recorded) = recorded else {
            return Err(Error::Results(format!(
                "{}: no {IN_PROGRESS} or manifest.json says which sweep wrote it; rerun without --resume",
                trials_path.display()
            )));
        };
        let text =
            fs::read_to_string(&recorded).map_err(|e| Error::io("cannot read", &recorded, e))?;
        let old: Value = serde_json::from_str(&text)
            .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", recorded.display())))?;
        if !same_sweep(&old, &expected) {
            return Err(Error::Results(format!(
                "{} was written by a different configuration than this one; rerun without \
                 --resume to start over, or choose another --out",
                out.display()
            )));
        }
        if let Some(rows) = read_trials(&trials_path, &header, varied.len())? {
            let (complete, offset) = match_rows(&cells, plan, &rows, &trials_path)?;
            done_cells = complete;
            keep_bytes = if complete == 0 {
                header_len(&header)
            } else {
                offset
            };
        }
    }
    for stale in ["summary.csv", "manifest.json"] {
        let p = out.join(stale);
        if p.exists() {
            fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
        }
    }
    write_atomic(&marker, &json_bytes(&expected))?;
    let mut file = if keep_bytes > 0 {
        let f = OpenOptions::new()
            .write(true)
            .open(&trials_path)
            .map_err(|e| Error::io("cannot open", &trials_path, e))?;
        f.set_len(keep_bytes)
            .map_err(|e| Error::io("cannot truncate", &trials_path, e))?;
        drop(f);
        OpenOptions::new()
            .append(true)
            .open(&trials_path)
            .map_err(|e| Error::io("cannot open", &trials_path, e))?
    } else {
        let mut f = fs::File::create(&trials_path)
            .map_err(|e| Error::io("cannot create", &trials_path, e))?;
        f.write_all(&csv_bytes([&header]))
            .map_err(|e| Error::io("cannot write", &trials_path, e))?;
        f
    };

    let todo: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.skipped.is_none())
        .skip(done_cells)
        .copied()
        .collect();
    let threads = pool.current_num_threads();
    let mut progress = Progress::new(
        opts.progress,
        &plan.name,
        total_trials,
        done_cells as u64 * plan.seeds,
        threads,
    );
    // Windows of consecutive cells big enough to keep every thread busy.
    let window_trials = (256 * threads as u64).max(plan.seeds);
    let mut i = 0;
    while i < todo.len() {
        let mut j = i;
        let mut n = 0;
        while j < todo.len() && (n < window_trials || j == i) {
            n += plan.seeds;
            j += 1;
        }
        let window = &todo[i..j];
        let tasks: Vec<(usize, u64)> = (0..window.len())
            .flat_map(|c| plan.seed_range().map(move |s| (c, s)))
            .collect();
        let rows: Vec<TrialRow> = pool.install(|| {
            tasks
                .par_iter()
                .map(|&(c, s)| window[c].run(s, false).map(|r| r.row))
                .collect::<Result<Vec<_>>>()
        })?;
        for chunk in rows.chunks(plan.seeds as usize) {
            let bytes = csv_bytes(chunk.iter().map(TrialRow::to_record));
            file.write_all(&bytes)
                .and_then(|_| file.flush())
                .map_err(|e| Error::io("cannot write", &trials_path, e))?;
            progress.advance(plan.seeds);
        }
        i = j;
    }
    file.sync_all()
        .map_err(|e| Error::io("cannot sync", &trials_path, e))?;
    drop(file);
    progress.finish();

    // Summaries from the file itself.
    let rows = read_trials(&trials_path, &header, varied.len())?.unwrap_or_default();
    let (complete, _) = match_rows(&cells, plan, &rows, &trials_path)?;
    if complete != runnable {
        return Err(Error::Results(format!(
            "{}: {complete} complete cells after the sweep, expected {runnable}",
            trials_path.display()
        )));
    }
    let mut summary = vec![summary_header(&varied)];
    let mut pos = 0;
    for c in &cells {
        let rec = match &c.skipped {
            Some(why) => summary_record(&c.key(), &[], Some(why)),
            None => {
                let seeds = plan.seeds as usize;
                let chunk: Vec<TrialRow> = rows[pos..pos + seeds]
                    .iter()
                    .map(|(r, _)| r.clone())
                    .collect();
                pos += seeds;
                summary_record(&c.key(), &chunk, None)
            }
        };
        summary.push(rec);
    }
    write_atomic(&out.join("summary.csv"), &csv_bytes(&summary))?;
    write_atomic(&out.join("manifest.json"), &json_bytes(&expected))?;
    fs::remove_file(&marker).map_err(|e| Error::io("cannot remove", &marker, e))?;
    Ok(SweepOutcome {
        out: out.clone(),
        cells: cells.len(),
        skipped: cells.len() - runnable,
        trials: total_trials,
        resumed_cells: done_cells,
    })
}

/// What a merge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Cells in the merged results.
    pub cells: usize,
    /// Trials in the merged results.
    pub trials: u64,
}

/// Join the finished shards in `shards` (every `k/N` of one sweep, in any order) into `out`:
/// exactly the files the unsharded sweep writes.
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<MergeOutcome> {
    if shards.is_empty() {
        return usage!("merge: no shard directories given");
    }
    struct ShardFiles {
        k: u32,
        manifest: Value,
        summary: Vec<csv::StringRecord>,
        trials: Vec<csv::StringRecord>,
        dir: PathBuf,
    }
    let mut loaded = Vec::new();
    let mut n_shards = None;
    for dir in shards {
        let mp = dir.join("manifest.json");
        let text = fs::read_to_string(&mp).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::Results(format!(
                    "{} has no manifest.json: not a finished shard",
                    dir.display()
                ))
            } else {
                Error::io("cannot read", &mp, e)
            }
        })?;
        let manifest: Value = serde_json::from_str(&text)
            .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
        let Some(shard) = manifest.get("shard").and_then(Value::as_str) else {
            return Err(Error::Results(format!(
                "{} is not a shard (its manifest has no \"shard\")",
                dir.display()
            )));
        };
        let shard: Shard = shard
            .parse()
            .map_err(|_| Error::Results(format!("{}: bad shard {shard:?}", mp.display())))?;
        if *n_shards.get_or_insert(shard.n) != shard.n {
            return Err(Error::Results(format!(
                "{} is shard {shard} but another directory belongs to a {}-way split",
                dir.display(),
                n_shards.unwrap_or(0)
            )));
        }
        let summary = read_csv(&dir.join("summary.csv"))?
            .into_iter()
            .map(|r| r.0)
            .collect();
        let trials = read_csv(&dir.join("trials.csv"))?
            .into_iter()
            .map(|r| r.0)
            .collect();
        loaded.push(ShardFiles {
            k: shard.k,
            manifest,
            summary,
            trials,
            dir: dir.clone(),
        });
    }
    let n = n_shards.unwrap_or(1);
    loaded.sort_by_key(|s| s.k);
    for w in loaded.windows(2) {
        if w[0].k == w[1].k {
            return Err(Error::Results(format!(
                "{} and {} are both shard {}/{n}",
                w[0].dir.display(),
                w[1].dir.display(),
                w[0].k
            )));
        }
    }
    let have: Vec<u32> = loaded.iter().map(|s| s.k).collect();
    let missing: Vec<String> = (1..=n)
        .filter(|k| !have.contains(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Results(format!(
            "merge: missing shard(s) {}",
            missing.join(", ")
        )));
    }
    let base = &loaded[0];
    for s in &loaded[1..] {
        let strip = |m: &Value| {
            let mut m = m.clone();
            if let Some(o) = m.as_object_mut() {
                for k in ["shard", "cells", "trials"] {
                    o.shift_remove(k);
                }
            }
            m
        };
        if strip(&s.manifest) != strip(&base.manifest) {
            return Err(Error::Results(format!(
                "{} and {} are shards of different sweeps",
                base.dir.display(),
                s.dir.display()
            )));
        }
        if s.summary.first() != base.summary.first() || s.trials.first() != base.trials.first() {
            return Err(Error::Results(format!(
                "{} and {} have different CSV headers",
                base.dir.display(),
                s.dir.display()
            )));
        }
    }
    let (Some(sum_header), Some(trial_hdr)) = (base.summary.first(), base.trials.first()) else {
        return Err(Error::Results(format!(
            "{}: empty summary.csv or trials.csv",
            base.dir.display()
        )));
    };
    let trials_col = sum_header
        .iter()
        .position(|c| c == "trials")
        .ok_or_else(|| Error::Results("summary.csv has no trials column".into()))?;
    let total_cells: usize = loaded.iter().map(|s| s.summary.len() - 1).sum();
    let mut summary_out = vec![sum_header.clone()];
    let mut trials_out = vec![trial_hdr.clone()];
    let mut next_trial = vec![1usize; loaded.len()];
    let mut total_trials = 0u64;
    for i in 0..total_cells {
        let s = i % n as usize;
        let local = 1 + i / n as usize;
        let shard = &loaded[s];
        let Some(rec) = shard.summary.get(local) else {
            return Err(Error::Results(format!(
                "{}: shard {}/{n} has too few cells for a {total_cells}-cell sweep",
                shard.dir.display(),
                shard.k
            )));
        };
        let t: usize = rec
            .get(trials_col)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Error::Results(format!("{}: bad trials count", shard.dir.display())))?;
        let from = next_trial[s];
        if from + t > shard.trials.len() {
            return Err(Error::Results(format!(
                "{}: trials.csv has fewer rows than summary.csv counts",
                shard.dir.display()
            )));
        }
        trials_out.extend(shard.trials[from..from + t].iter().cloned());
        next_trial[s] = from + t;
        total_trials += t as u64;
        summary_out.push(rec.clone());
    }
    for (s, shard) in loaded.iter().enumerate() {
        if next_trial[s] != shard.trials.len() {
            return Err(Error::Results(format!(
                "{}: trials.csv has more rows than summary.csv counts",
                shard.dir.display()
            )));
        }
    }
    let mut m = Map::new();
    for (k, v) in base.manifest.as_object().into_iter().flatten() {
        match k.as_str() {
            "shard" => {}
            "cells" => {
                m.insert(k.clone(), total_cells.into());
            }
            "trials" => {
                m.insert(k.clone(), total_trials.into());
            }
            _ => {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    prepare_dir(out)?;
    write_atomic(&out.join("trials.csv"), &csv_bytes(&trials_out))?;
    write_atomic(&out.join("summary.csv"), &csv_bytes(&summary_out))?;
    write_atomic(&out.join("manifest.json"), &json_bytes(&Value::Object(m)))?;
    Ok(MergeOutcome {
        cells: total_cells,
        trials: total_trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition() {
        assert_eq!("2/3".parse::<Shard>().unwrap(), Shard { k: 2, n: 3 });
        for bad in ["0/3", "4/3", "1/0", "x/2", "1", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (1..=3).map(|k| Shard { k, n: 3 }).collect();
        for i in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1);
        }
    }
}
