//! Running a sweep: every cell's seeds in parallel on every core, rows appended to
//! `trials.csv` cell by cell in cell order, then `summary.csv`, `manifest.json` (with the
//! SHA-256 of `trials.csv`) and `trials.csv.gz` (the form results are committed in,
//! [`crate::files::compress_trials`]) written atomically, the last one while the caller renders
//! its report ([`run_sweep_then`]).
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
//! Each cell's rows are recorded with their SHA-256 as they are appended: `.trials.sha256`
//! ([`ROW_HASHES`]) gets one line per cell, `<byte offset just past the cell> <SHA-256 of its
//! rows>`, after the rows are flushed. `--resume` keeps only the cells whose bytes still have
//! the recorded hash, in order, and refuses the directory ([`Error::Altered`], naming the cell
//! and its lines) when a recorded cell's rows were edited; a cell written but not yet recorded
//! (the run was killed in between) is run again. The file goes with the marker when the sweep
//! finishes; from then on the manifest's SHA-256 of the whole `trials.csv` vouches for it.
//! Since a hash can be recomputed by whoever edits, `--resume` also runs a sample of the kept
//! trials again ([`SweepOptions::verify_sample`], as [`crate::verify::sweep`] does) and
//! refuses the directory when one gives another row.
//!
//! # Sharding
//!
//! `--shard k/N` (1-based `k`) runs the cells whose index `i` has `i mod N = k − 1`:
//! round-robin, so that expensive and cheap cells spread evenly over the shards. With
//! `--shard-by seeds` it runs every cell with the `k`-th block of its seeds instead
//! ([`crate::shard::seed_block`]), for sweeps of few cells and many seeds. Each shard writes the
//! three files for what it ran (its summary rows summarise its own trials), and its manifest
//! says which shard it is and, for seed blocks, which seeds it ran (`shard_by`, `seeds_run`);
//! [`merge`] joins the shards back into exactly the unsharded files (see [`crate::shard`]).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::error::{usage, Error, Result};
use crate::files::{
    csv_bytes, prepare_dir, read_csv, write_atomic, AtomicFile, CsvStream, DirLock,
};
use crate::plan::{Cell, SweepPlan};
use crate::progress::Progress;
use crate::results::{
    summary_header, summary_record, trial_header, CellKey, Manifest, SeedsRun, SummaryRow, TrialRow,
};
use crate::shard::{seed_block, Shard, ShardBy};

/// The marker holding the manifest of a sweep in progress.
pub const IN_PROGRESS: &str = ".in-progress.json";

/// Beside the `trials.csv` of a sweep under way: one line per complete cell, `<end offset>
/// <SHA-256 of the cell's rows>`, appended as the rows are (see the module docs).
pub const ROW_HASHES: &str = ".trials.sha256";

/// Kept trials `--resume` runs again by default ([`SweepOptions::verify_sample`]), drawn by
/// [`crate::verify::pick`] from [`RESUME_SAMPLE_SEED`]: the same ones every time.
pub const RESUME_SAMPLE: u64 = 8;

/// The seed of `--resume`'s sample.
pub const RESUME_SAMPLE_SEED: u64 = 0;

/// How to carry out a sweep (none of it changes the results).
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// The directory receiving the files.
    pub out: PathBuf,
    /// Worker threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// Run one slice of the sweep.
    pub shard: Option<Shard>,
    /// What a slice is: whole cells, or a block of every cell's seeds.
    pub shard_by: ShardBy,
    /// Continue an interrupted sweep in `out`.
    pub resume: bool,
    /// With `resume`: how many of the kept trials to run again and compare with their rows
    /// before continuing ([`RESUME_SAMPLE`] by default; 0 trusts the recorded hashes alone).
    pub verify_sample: u64,
    /// Overwrite results of a different configuration in `out` (without it, such results
    /// are refused).
    pub force: bool,
    /// Show progress on stderr.
    pub progress: bool,
    /// The command line that reproduces the sweep (recorded in the manifest).
    pub command: String,
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
pub fn manifest(plan: &SweepPlan, opts: &SweepOptions, cells: usize, trials: u64) -> Manifest {
    let config = plan.manifest_config();
    let (mut shard, mut shard_by, mut seeds_run) = (None, None, None);
    if let Some(s) = opts.shard {
        shard = Some(s.to_string());
        if opts.shard_by == ShardBy::Seeds {
            let (first, count) = seed_block(plan.first_seed, plan.seeds, s);
            shard_by = Some(ShardBy::Seeds.name().to_string());
            seeds_run = Some(SeedsRun { first, count });
        }
    }
    Manifest {
        tool: "election-bench".into(),
        // Nothing here changes with the commit that holds the results (a committed manifest
        // that named its commit would always be one behind): the version and a hash of the
        // inputs.
        version: env!("CARGO_PKG_VERSION").into(),
        config_sha256: Some(config_sha256(&config)),
        name: plan.name.clone(),
        command: opts.command.clone(),
        config,
        shard,
        shard_by,
        seeds_run,
        cells: cells as u64,
        trials,
        trials_csv: None,
    }
}

/// The SHA-256 (hex) of a resolved configuration as compact JSON, keys in the manifest's order:
/// the same inputs give the same hash on every machine and at every commit.
pub fn config_sha256(config: &Value) -> String {
    crate::empirical::sha256_hex(&serde_json::to_vec(config).expect("serializable"))
}

/// JSON as the results files hold it: pretty, with a final newline.
pub fn json_bytes(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).expect("serializable");
    s.push('\n');
    s.into_bytes()
}

fn same_sweep(a: &Value, b: &Value) -> bool {
    ["name", "config", "shard", "shard_by"]
        .iter()
        .all(|k| a.get(k) == b.get(k))
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

/// `trials.csv` read one row at a time: every row parsed and checked against the observer's
/// invariants ([`TrialRow::validate`]); an error names the file, line, column and value.
struct TrialStream {
    csv: CsvStream,
    n_params: usize,
    /// The byte offset just past the header line.
    header_end: u64,
}

impl TrialStream {
    /// Open `path`, whose header must be `header`; `None` if the file does not even hold a
    /// complete header line.
    fn open(path: &Path, header: &[String], n_params: usize) -> Result<Option<TrialStream>> {
        let mut csv = CsvStream::open(path)?;
        let Some((first, header_end)) = csv.next_record()? else {
            return Ok(None);
        };
        if first.iter().ne(header.iter().map(String::as_str)) {
            return Err(Error::Results(format!(
                "{}: the header does not match this configuration's columns ({})",
                path.display(),
                header.join(",")
            )));
        }
        Ok(Some(TrialStream {
            csv,
            n_params,
            header_end,
        }))
    }

    /// The next row and the byte offset just past it.
    fn next(&mut self) -> Result<Option<(TrialRow, u64)>> {
        let n_params = self.n_params;
        let Some((rec, off)) = self.csv.next_record()? else {
            return Ok(None);
        };
        let fields: Vec<&str> = rec.iter().collect();
        let row = TrialRow::from_record(&fields, n_params)
            .map_err(|e| e.to_string())
            .and_then(|r| r.validate().map(|_| r));
        row.map(|r| Some((r, off))).map_err(|e| self.error(&e))
    }

    /// An error about the row last read.
    fn error(&self, what: &str) -> Error {
        Error::Results(format!(
            "{} line {}: {what}",
            self.csv.path().display(),
            self.csv.line()
        ))
    }
}

/// Walk `trials.csv` along the runnable `cells`, in order: every row must belong to the cell
/// and seed this configuration expects there, and hold valid values. `on_cell` gets each
/// complete cell's rows and their byte range in the file (one cell at a time: nothing more is
/// held). Returns the number of
/// complete cells and the byte offset just past the last one (past the header if none); a
/// trailing partial cell is not counted. `None`: not even a complete header line.
fn scan_trials(
    path: &Path,
    header: &[String],
    cells: &[&Cell],
    plan: &SweepPlan,
    mut on_cell: impl FnMut(&Cell, &[TrialRow], std::ops::Range<u64>),
) -> Result<Option<(usize, u64)>> {
    let varied = plan.varied_keys();
    let Some(mut rows) = TrialStream::open(path, header, varied.len())? else {
        return Ok(None);
    };
    let seeds = plan.seeds as usize;
    let mut buf: Vec<TrialRow> = Vec::with_capacity(seeds);
    let mut complete = 0;
    let mut offset = rows.header_end;
    for cell in cells.iter().filter(|c| c.skipped.is_none()) {
        let key = cell.key();
        buf.clear();
        let mut end = offset;
        while buf.len() < seeds {
            let Some((row, off)) = rows.next()? else {
                return Ok(Some((complete, offset))); // a partial cell: dropped, rerun
            };
            let seed = plan.first_seed + buf.len() as u64;
            if row.cell_key() != key || row.seed != seed {
                return Err(rows.error(&format!(
                    "the row is {} seed {}, but this configuration expects {} seed {seed} \
                     there; the file comes from another sweep (rerun without --resume, or use \
                     another --out)",
                    describe_key(&row),
                    row.seed,
                    cell.describe(&varied),
                )));
            }
            buf.push(row);
            end = off;
        }
        on_cell(cell, &buf, offset..end);
        complete += 1;
        offset = end;
    }
    if rows.next()?.is_some() {
        return Err(rows.error("more rows than this configuration has cells"));
    }
    Ok(Some((complete, offset)))
}

/// The manifest recorded in `dir` (`.in-progress.json` of a sweep under way or interrupted,
/// else `manifest.json` of a finished one), with its path.
fn recorded_manifest(dir: &Path) -> Result<Option<(PathBuf, Value)>> {
    for p in [dir.join(IN_PROGRESS), dir.join("manifest.json")] {
        if !p.exists() {
            continue;
        }
        let text = fs::read_to_string(&p).map_err(|e| Error::io("cannot read", &p, e))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", p.display())))?;
        return Ok(Some((p, v)));
    }
    Ok(None)
}

/// Run `plan` (the whole grid, or one shard of it) into `opts.out`.
///
/// The directory is locked for the whole run ([`DirLock`]). Results of a different
/// configuration already there are refused unless `opts.force`. Memory stays flat in the
/// number of trials: a window of cells is held while it runs, and the summary is computed
/// from `trials.csv` one cell at a time.
pub fn run_sweep(full: &SweepPlan, opts: &SweepOptions) -> Result<SweepOutcome> {
    let (outcome, (), compressed) = run_sweep_then(full, opts, |_| ())?;
    compressed?;
    Ok(outcome)
}

/// [`run_sweep`], then `then(&outcome)` (the CLI renders the report) while `trials.csv.gz` is
/// compressed on another thread: the compression is a serial step of a second or two at the
/// end of a large sweep, and the report, another, needs only `trials.csv` and the manifest.
/// Both are done when this returns, with `then`'s result and the compression's, so that a
/// caller can report both (the sweep's own errors come first, as `Err`).
///
/// `manifest.json` is written before the compressed copy (it records the CSV's hash, read from
/// `trials.csv`), the previous compressed copy is removed just before it, and
/// `.in-progress.json` stays until the new copy is in place: a sweep stopped in between leaves
/// complete results without their compressed copy, marked unfinished, and `--resume` with the
/// same arguments writes it (every cell is complete: nothing is simulated again).
pub fn run_sweep_then<R>(
    full: &SweepPlan,
    opts: &SweepOptions,
    then: impl FnOnce(&SweepOutcome) -> R,
) -> Result<(SweepOutcome, R, Result<()>)> {
    if opts.force && opts.resume {
        return usage!("--force and --resume exclude each other: --force starts over");
    }
    let all = full.cells()?;
    // What this run covers: every cell or this shard's, every seed or this shard's block.
    let by_seeds = opts.shard.filter(|_| opts.shard_by == ShardBy::Seeds);
    let block;
    let plan = match by_seeds {
        Some(s) => {
            if full.seeds < u64::from(s.n) {
                return usage!(
                    "--shard {s} --shard-by seeds: {} shards need at least {} seeds, and the \
                     sweep has {} (use --shard-by cells, or fewer shards)",
                    s.n,
                    s.n,
                    full.seeds
                );
            }
            let (first_seed, seeds) = seed_block(full.first_seed, full.seeds, s);
            block = SweepPlan {
                first_seed,
                seeds,
                ..full.clone()
            };
            &block
        }
        None => full,
    };
    let cells: Vec<&Cell> = all
        .iter()
        .filter(|c| by_seeds.is_some() || opts.shard.is_none_or(|s| s.owns(c.index)))
        .collect();
    let runnable = cells.iter().filter(|c| c.skipped.is_none()).count();
    let total_trials = crate::memory::check_trials(runnable as u64, plan.seeds, "cells")?;
    let varied = plan.varied_keys();
    let header = trial_header(&varied);
    let out = &opts.out;
    let trials_path = out.join("trials.csv");
    let marker = out.join(IN_PROGRESS);
    let expected = manifest(full, opts, cells.len(), total_trials);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| Error::Usage(format!("--jobs: {e}")))?;

    prepare_dir(out)?;
    let _lock = DirLock::acquire(out)?;

    let recorded = recorded_manifest(out)?;
    if let Some((path, old)) = &recorded {
        if !same_sweep(old, &expected.to_value()) && !opts.force {
            let what = if opts.resume {
                return Err(Error::Results(format!(
                    "{} was written by a different configuration than this one ({}); rerun \
                     without --resume and with --force to start over, or choose another --out",
                    out.display(),
                    path.display()
                )));
            } else if path.ends_with(IN_PROGRESS) {
                "an interrupted sweep"
            } else {
                "the results"
            };
            return usage!(
                "{} holds {what} of a different configuration ({}); use --force to overwrite \
                 them, or choose another --out",
                out.display(),
                path.display()
            );
        }
    }

    // Resume: keep the complete cells already written (from the compressed copy when that is
    // all there is).
    let mut done_cells = 0;
    let mut keep_bytes = 0;
    let mut kept_hashes: Vec<(u64, String)> = Vec::new();
    if opts.resume {
        if let Some((path, old)) = &recorded {
            // A finished sweep's trials are checked against the hash its manifest recorded
            // before they are kept: --resume would otherwise re-certify an edited file.
            if path.ends_with("manifest.json") {
                crate::files::verify_trials(out, &Manifest::from_value(old, path)?)?;
            }
            crate::files::restore_trials_csv(out)?;
        }
    }
    if opts.resume && trials_path.exists() {
        if recorded.is_none() {
            return Err(Error::Results(format!(
                "{}: no {IN_PROGRESS} or manifest.json says which sweep wrote it; rerun without --resume",
                trials_path.display()
            )));
        }
        let mut ranges = Vec::new();
        if let Some((complete, offset)) =
            scan_trials(&trials_path, &header, &cells, plan, |_, _, r| {
                ranges.push(r)
            })?
        {
            let hashes = cell_hashes(&trials_path, &ranges)?;
            // A finished sweep's file was checked whole against its manifest above; an
            // unfinished one's cells each against the hash recorded as they were appended.
            let finished = recorded
                .as_ref()
                .is_some_and(|(p, _)| p.ends_with("manifest.json"));
            done_cells = complete;
            if !finished {
                let recorded_hashes = read_row_hashes(&out.join(ROW_HASHES))?;
                done_cells = complete.min(recorded_hashes.len());
                let runnable_cells: Vec<&&Cell> =
                    cells.iter().filter(|c| c.skipped.is_none()).collect();
                for k in 0..done_cells {
                    let (end, want) = &recorded_hashes[k];
                    if *end != ranges[k].end || *want != hashes[k] {
                        let first_line = 2 + k as u64 * plan.seeds;
                        return Err(Error::Altered {
                            path: trials_path.clone(),
                            detail: format!(
                                "lines {first_line}-{} (cell {}): SHA-256 {} over bytes {}..{}, \
                                 but {ROW_HASHES} recorded {want} over bytes ..{end} when the \
                                 rows were appended: they were edited or damaged since (rerun \
                                 without --resume, or with --force, to start over)",
                                first_line + plan.seeds - 1,
                                runnable_cells[k].describe(&varied),
                                hashes[k],
                                ranges[k].start,
                                ranges[k].end,
                            ),
                        });
                    }
                }
            }
            // A hash can be recomputed by whoever edits: a sample of the kept trials is run
            // again and must give the very rows kept.
            let runnable_cells: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.skipped.is_none())
                .copied()
                .collect();
            let kept = done_cells as u64 * plan.seeds;
            let picks = crate::verify::pick(kept, opts.verify_sample, RESUME_SAMPLE_SEED);
            crate::verify::check_rows(&trials_path, plan, &runnable_cells, kept, &picks)?;
            let header_end = ranges.first().map_or(offset, |r| r.start);
            keep_bytes = ranges[..done_cells].last().map_or(header_end, |r| r.end);
            kept_hashes = ranges[..done_cells]
                .iter()
                .zip(hashes)
                .map(|(r, h)| (r.end, h))
                .collect();
        }
    }
    for stale in ["summary.csv", "manifest.json"] {
        let p = out.join(stale);
        if p.exists() {
            fs::remove_file(&p).map_err(|e| Error::io("cannot remove", &p, e))?;
        }
    }
    write_atomic(&marker, &expected.to_bytes())?;
    let mut written = 0;
    let r = run_cells(
        plan,
        opts,
        &pool,
        &cells[..],
        total_trials,
        done_cells,
        keep_bytes,
        &kept_hashes,
        &header,
        &mut written,
    );
    if let Err(e) = r {
        // Nothing worth resuming: leave the directory as if the sweep never started.
        if done_cells + written == 0 {
            let _ = fs::remove_file(&marker);
            let _ = fs::remove_file(&trials_path);
            let _ = fs::remove_file(out.join(ROW_HASHES));
        }
        return Err(e);
    }

    // Summaries from the file itself, one cell at a time.
    let mut stats: Vec<Vec<String>> = Vec::with_capacity(runnable);
    let complete = scan_trials(&trials_path, &header, &cells, plan, |c, rows, _| {
        stats.push(summary_record(&c.key(), rows, None))
    })?
    .map_or(0, |(complete, _)| complete);
    if complete != runnable {
        return Err(Error::Results(format!(
            "{}: {complete} complete cells after the sweep, expected {runnable}",
            trials_path.display()
        )));
    }
    let mut stats = stats.into_iter();
    let mut summary = vec![summary_header(&varied)];
    for c in &cells {
        summary.push(match &c.skipped {
            Some(why) => summary_record(&c.key(), &[], Some(why)),
            None => stats.next().expect("one per runnable cell"),
        });
    }
    write_atomic(&out.join("summary.csv"), &csv_bytes(&summary))?;
    let done = Manifest {
        trials_csv: Some(crate::files::trials_record(out)?),
        ..expected
    };
    // The old compressed copy goes before the new manifest is written: a manifest never sits
    // beside a copy it does not describe.
    let gz_path = out.join(crate::files::TRIALS_GZ);
    if gz_path.exists() {
        fs::remove_file(&gz_path).map_err(|e| Error::io("cannot remove", &gz_path, e))?;
    }
    write_atomic(&out.join("manifest.json"), &done.to_bytes())?;
    let outcome = SweepOutcome {
        out: out.clone(),
        cells: cells.len(),
        skipped: cells.len() - runnable,
        trials: total_trials,
        resumed_cells: done_cells,
    };
    let (r, compressed) = std::thread::scope(|s| {
        let gz = s.spawn(|| crate::files::compress_trials(out));
        let r = then(&outcome);
        let compressed = match gz.join() {
            Ok(result) => result,
            Err(_) => Err(Error::Results("the compressing thread panicked".into())),
        };
        (r, compressed)
    });
    let compressed = compressed
        .and_then(|()| fs::remove_file(&marker).map_err(|e| Error::io("cannot remove", &marker, e)))
        .and_then(|()| {
            let hashes = out.join(ROW_HASHES);
            fs::remove_file(&hashes).map_err(|e| Error::io("cannot remove", &hashes, e))
        })
        .map_err(|e| {
            let hint = format!(
                "{}: {} not finished (trials.csv, summary.csv and manifest.json are complete; \
                 rerunning the sweep with --resume writes it)",
                out.display(),
                crate::files::TRIALS_GZ
            );
            match e {
                Error::Io { context, source } => Error::Io {
                    context: format!("{hint}: {context}"),
                    source,
                },
                other => Error::Results(format!("{hint}: {other}")),
            }
        });
    Ok((outcome, r, compressed))
}

/// Run the runnable `cells` after the first `done_cells` and append their rows to
/// `trials.csv` (cut to `keep_bytes` first, or started afresh when 0), counting the cells
/// written in `written`. [`ROW_HASHES`] is rewritten with `kept_hashes` (the kept cells') and
/// gets each new cell's line once its rows are flushed.
#[allow(clippy::too_many_arguments)]
fn run_cells(
    plan: &SweepPlan,
    opts: &SweepOptions,
    pool: &rayon::ThreadPool,
    cells: &[&Cell],
    total_trials: u64,
    done_cells: usize,
    keep_bytes: u64,
    kept_hashes: &[(u64, String)],
    header: &[String],
    written: &mut usize,
) -> Result<()> {
    let trials_path = opts.out.join("trials.csv");
    let hashes_path = opts.out.join(ROW_HASHES);
    let kept: String = kept_hashes
        .iter()
        .map(|(end, h)| format!("{end} {h}\n"))
        .collect();
    write_atomic(&hashes_path, kept.as_bytes())?;
    let mut hashes_file = OpenOptions::new()
        .append(true)
        .open(&hashes_path)
        .map_err(|e| Error::io("cannot open", &hashes_path, e))?;
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
        f.write_all(&csv_bytes([header]))
            .map_err(|e| Error::io("cannot write", &trials_path, e))?;
        f
    };
    let mut end = file
        .metadata()
        .map_err(|e| Error::io("cannot read", &trials_path, e))?
        .len();

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
    // Windows of consecutive cells big enough to keep every thread busy; only one window's
    // rows are held at a time. With several scenarios, a window runs on to the end of its
    // protocol and size (the cell order's outer two keys) when that stays within 16 windows'
    // worth of trials, so that the scenarios of one protocol, size, network and parameters
    // share each seed's run before the fault ([`Cell::run_all`]).
    let window_trials = (256 * threads as u64).max(plan.seeds);
    let same_block = |a: &Cell, b: &Cell| a.protocol.spec == b.protocol.spec && a.nodes == b.nodes;
    let shares = plan.scenarios.len() > 1;
    let mut i = 0;
    while i < todo.len() {
        let mut j = i;
        let mut n = 0;
        while j < todo.len()
            && (n < window_trials
                || j == i
                || (shares
                    && same_block(todo[j - 1], todo[j])
                    && n + plan.seeds <= 16 * window_trials))
        {
            n += plan.seeds;
            j += 1;
        }
        let window = &todo[i..j];
        // The window's families: cells that differ only in their scenario, each run seed by
        // seed as one task.
        let mut families: Vec<Vec<usize>> = Vec::new();
        for (c, cell) in window.iter().enumerate() {
            let family = families.iter_mut().find(|f| {
                let first = window[f[0]];
                same_block(first, cell)
                    && first.net_name == cell.net_name
                    && first.values == cell.values
            });
            match family {
                Some(f) => f.push(c),
                None => families.push(vec![c]),
            }
        }
        let tasks: Vec<(usize, u64)> = (0..families.len())
            .flat_map(|f| plan.seed_range().map(move |s| (f, s)))
            .collect();
        let runs: Vec<Vec<Result<TrialRow>>> = pool.install(|| {
            tasks
                .par_iter()
                .map(|&(f, s)| {
                    let cells: Vec<&Cell> = families[f].iter().map(|&c| window[c]).collect();
                    Cell::run_all(&cells, s)
                        .into_iter()
                        .map(|r| r.map(|r| r.row))
                        .collect()
                })
                .collect()
        });
        // Back in cell order, each cell's trials in seed order (the tasks are family by
        // family, seeds ascending); the first error in that order is the one reported.
        let mut by_cell: Vec<Vec<Result<TrialRow>>> = window.iter().map(|_| Vec::new()).collect();
        for (&(f, _), rows) in tasks.iter().zip(runs) {
            for (&c, row) in families[f].iter().zip(rows) {
                by_cell[c].push(row);
            }
        }
        let rows: Vec<TrialRow> = by_cell.into_iter().flatten().collect::<Result<Vec<_>>>()?;
        for chunk in rows.chunks(plan.seeds as usize) {
            let bytes = crate::results::write_trials(chunk);
            file.write_all(&bytes)
                .and_then(|_| file.flush())
                .map_err(|e| Error::io("cannot write", &trials_path, e))?;
            end += bytes.len() as u64;
            let line = format!("{end} {}\n", crate::empirical::sha256_hex(&bytes));
            hashes_file
                .write_all(line.as_bytes())
                .and_then(|_| hashes_file.flush())
                .map_err(|e| Error::io("cannot write", &hashes_path, e))?;
            *written += 1;
            progress.advance(plan.seeds);
        }
        i = j;
    }
    file.sync_all()
        .map_err(|e| Error::io("cannot sync", &trials_path, e))?;
    drop(file);
    progress.finish();
    Ok(())
}

/// The SHA-256 (hex) of each byte range of the file at `path`.
fn cell_hashes(path: &Path, ranges: &[std::ops::Range<u64>]) -> Result<Vec<String>> {
    use sha2::Digest;
    use std::io::{Read, Seek, SeekFrom};
    let mut f = fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        f.seek(SeekFrom::Start(r.start))
            .map_err(|e| Error::io("cannot read", path, e))?;
        let mut hash = sha2::Sha256::new();
        let mut left = r.end - r.start;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            f.read_exact(&mut buf[..n])
                .map_err(|e| Error::io("cannot read", path, e))?;
            hash.update(&buf[..n]);
            left -= n as u64;
        }
        out.push(hash.finalize().iter().map(|b| format!("{b:02x}")).collect());
    }
    Ok(out)
}

/// The cells recorded in [`ROW_HASHES`] at `path`: `(end offset, SHA-256)` per complete line
/// (a trailing line without its newline is a write the run did not finish, and is left out;
/// none at all without the file). A complete line that does not parse is refused.
fn read_row_hashes(path: &Path) -> Result<Vec<(u64, String)>> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("cannot read", path, e)),
    };
    let complete = text.rfind('\n').map_or("", |i| &text[..i]);
    complete
        .split('\n')
        .filter(|_| !complete.is_empty())
        .enumerate()
        .map(|(i, line)| {
            line.split_once(' ')
                .and_then(|(end, h)| {
                    let ok = h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit());
                    Some((end.parse().ok()?, h.to_string())).filter(|_| ok)
                })
                .ok_or_else(|| Error::Altered {
                    path: path.to_path_buf(),
                    detail: format!(
                        "line {}: {line:?} is not `<end offset> <SHA-256>` (rerun without \
                         --resume, or with --force, to start over)",
                        i + 1
                    ),
                })
        })
        .collect()
}

/// What a merge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Cells in the merged results.
    pub cells: usize,
    /// Trials in the merged results.
    pub trials: u64,
}

/// One finished shard (or a finished sweep, read as its own single shard), as `merge` reads it.
struct ShardFiles {
    k: u32,
    manifest: Value,
    summary: Vec<csv::StringRecord>,
    dir: PathBuf,
    /// The seeds each of its cells ran: the sweep's, or its block of them.
    first_seed: u64,
    seeds: u64,
}

impl ShardFiles {
    fn new(k: u32, manifest: Value, summary: Vec<csv::StringRecord>, dir: &Path) -> Result<Self> {
        let mp = dir.join("manifest.json");
        let frame = MergeFrame::of(&manifest, &mp)?;
        let (first_seed, seeds) = match manifest.get("seeds_run") {
            None => (frame.first_seed, frame.seeds),
            Some(r) => {
                let first = r.get("first").and_then(Value::as_u64);
                let count = r.get("count").and_then(Value::as_u64);
                // Exactly this shard's block of the sweep's seeds (blocks that overlap, or
                // leave a gap, would merge into a plausible trials.csv with seeds twice or
                // missing).
                let want = Shard::from_str_opt(manifest.get("shard").and_then(Value::as_str))
                    .map(|s| seed_block(frame.first_seed, frame.seeds, s));
                match (first, count, want) {
                    (Some(f), Some(c), Some(w)) if (f, c) == w && c > 0 => (f, c),
                    _ => {
                        return Err(Error::Results(format!(
                            "{}: seeds_run {r} is not this shard's block of the sweep's seeds{}",
                            mp.display(),
                            want.map_or(String::new(), |(f, c)| format!(
                                " (seeds {f} to {})",
                                f + (c.max(1) - 1)
                            ))
                        )))
                    }
                }
            }
        };
        Ok(ShardFiles {
            k,
            manifest,
            summary,
            dir: dir.to_path_buf(),
            first_seed,
            seeds,
        })
    }
}

/// What every shard's manifest says about the sweep they split.
struct MergeFrame {
    mode: String,
    first_seed: u64,
    seeds: u64,
    varied: Vec<String>,
}

impl MergeFrame {
    fn of(m: &Value, path: &Path) -> Result<MergeFrame> {
        let bad = |what: &str| {
            Error::Results(format!(
                "{}: the manifest's config has no valid {what}",
                path.display()
            ))
        };
        let config = m.get("config").ok_or_else(|| bad("config"))?;
        let mode = config
            .get("mode")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("mode"))?
            .to_string();
        let seeds = config.get("seeds").ok_or_else(|| bad("seeds"))?;
        let first_seed = seeds
            .get("first")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("seeds.first"))?;
        let count = seeds
            .get("count")
            .and_then(Value::as_u64)
            .filter(|&c| c > 0 && first_seed.checked_add(c - 1).is_some())
            .ok_or_else(|| bad("seeds.count"))?;
        let varied = config
            .get("varied")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("varied"))?
            .keys()
            .cloned()
            .collect();
        Ok(MergeFrame {
            mode,
            first_seed,
            seeds: count,
            varied,
        })
    }
}

/// Walk the shards' cells in the unsharded order (`by`: each cell from one shard in turn, or
/// each cell from every shard, its seed blocks in order): check every summary row's cell
/// against its trials (cell, seeds, values), recompute its statistics and require the shard's
/// to be the same, and hand each whole cell's trial rows to `out` (one cell at a time). Returns
/// the `summary.csv` records of the whole cells (header first) and the number of trials.
fn merge_pass(
    loaded: &[ShardFiles],
    frame: &MergeFrame,
    by: ShardBy,
    mut out: impl FnMut(&[TrialRow]) -> Result<()>,
) -> Result<(Vec<Vec<String>>, u64)> {
    let n = loaded.len();
    let varied: Vec<&str> = frame.varied.iter().map(String::as_str).collect();
    let np = varied.len();
    let sum_header = summary_header(&varied);
    let trial_hdr = trial_header(&varied);
    let mut streams = Vec::new();
    for shard in loaded {
        let sp = shard.dir.join("summary.csv");
        if shard
            .summary
            .first()
            .map(|h| h.iter().ne(sum_header.iter()))
            != Some(false)
        {
            return Err(Error::Results(format!(
                "{}: the header does not match the manifest's columns ({})",
                sp.display(),
                sum_header.join(",")
            )));
        }
        let tp = crate::files::trials_file(&shard.dir);
        let Some(stream) = TrialStream::open(&tp, &trial_hdr, np)? else {
            return Err(Error::Results(format!(
                "{}: empty trials.csv (no header line)",
                tp.display()
            )));
        };
        streams.push(stream);
    }
    let total_cells: usize = match by {
        ShardBy::Cells => loaded.iter().map(|s| s.summary.len() - 1).sum(),
        ShardBy::Seeds => {
            let cells = loaded[0].summary.len() - 1;
            if let Some(s) = loaded.iter().find(|s| s.summary.len() - 1 != cells) {
                return Err(Error::Results(format!(
                    "{}: shard {}/{n} has {} cells, shard 1/{n} {cells}; every seed block \
                     holds every cell",
                    s.dir.display(),
                    s.k,
                    s.summary.len() - 1
                )));
            }
            cells
        }
    };
    let mut summary_out = vec![sum_header.clone()];
    let mut total_trials = 0u64;
    let mut rows: Vec<TrialRow> = Vec::new();
    for i in 0..total_cells {
        let parts: Vec<(usize, usize)> = match by {
            ShardBy::Cells => vec![(i % n, 1 + i / n)],
            ShardBy::Seeds => (0..n).map(|s| (s, 1 + i)).collect(),
        };
        rows.clear();
        let mut cell: Option<(CellKey, Option<String>)> = None;
        for (s, local) in parts {
            let shard = &loaded[s];
            let sp = shard.dir.join("summary.csv");
            let Some(rec) = shard.summary.get(local) else {
                return Err(Error::Results(format!(
                    "{}: shard {}/{n} has too few cells for a {total_cells}-cell sweep",
                    shard.dir.display(),
                    shard.k
                )));
            };
            let line = local + 1;
            let bad = |col: &str, why: &str| {
                Error::Results(format!(
                    "{} line {line}: column {col} = {:?}: {why}",
                    sp.display(),
                    rec.get(sum_header.iter().position(|c| c == col).unwrap_or(0))
                        .unwrap_or("")
                ))
            };
            let fields: Vec<&str> = rec.iter().collect();
            let row = SummaryRow::from_record(&fields, np)
                .map_err(|e| Error::Results(format!("{} line {line}: {e}", sp.display())))?;
            let key = CellKey {
                mode: frame.mode.clone(),
                protocol: row.key.protocol,
                nodes: row.key.nodes,
                scenario: row.key.scenario,
                net: row.key.net,
                params: row.key.params,
            };
            let skipped = (!row.skipped.is_empty()).then_some(row.skipped);
            if let Some((k0, s0)) = &cell {
                if *k0 != key || *s0 != skipped {
                    return Err(Error::Results(format!(
                        "{} line {line}: the cell is {}, but shard 1/{n} has {} there: seed \
                         blocks of different sweeps",
                        sp.display(),
                        describe_cell_key(&key),
                        describe_cell_key(k0)
                    )));
                }
            }
            let t = row.stats.trials;
            let want = if skipped.is_some() { 0 } else { shard.seeds };
            if t != want {
                return Err(bad(
                    "trials",
                    &format!(
                        "expected {want} ({})",
                        if skipped.is_some() {
                            "a skipped cell"
                        } else if by == ShardBy::Seeds {
                            "the shard's seeds_run.count"
                        } else {
                            "the manifest's seeds.count"
                        }
                    ),
                ));
            }
            let from = rows.len();
            let stream = &mut streams[s];
            for j in 0..t {
                let Some((row, _)) = stream.next()? else {
                    return Err(Error::Results(format!(
                        "{}: trials.csv ends before the cell of {} line {line}",
                        shard.dir.display(),
                        sp.display()
                    )));
                };
                let seed = shard.first_seed + j;
                if row.cell_key() != key || row.seed != seed {
                    return Err(stream.error(&format!(
                        "the row is {} seed {}, but {} line {line} expects {} seed {seed} there",
                        describe_key(&row),
                        row.seed,
                        sp.display(),
                        describe_cell_key(&key),
                    )));
                }
                rows.push(row);
            }
            let recomputed = summary_record(&key, &rows[from..], skipped.as_deref());
            if let Some(c) = (0..recomputed.len()).find(|&c| recomputed[c] != rec[c]) {
                return Err(bad(
                    &sum_header[c],
                    &format!("the cell's trials give {:?}", recomputed[c]),
                ));
            }
            cell.get_or_insert((key, skipped));
        }
        let (key, skipped) = cell.expect("every cell has a part");
        let whole = if skipped.is_some() { 0 } else { frame.seeds };
        if rows.len() as u64 != whole {
            return Err(Error::Results(format!(
                "{}: {} trials of {} after joining its shards, expected {whole}",
                loaded[0].dir.display(),
                rows.len(),
                describe_cell_key(&key)
            )));
        }
        out(&rows)?;
        total_trials += rows.len() as u64;
        summary_out.push(summary_record(&key, &rows, skipped.as_deref()));
    }
    for (stream, shard) in streams.iter_mut().zip(loaded) {
        if stream.next()?.is_some() {
            return Err(stream.error(&format!(
                "more rows than {} counts",
                shard.dir.join("summary.csv").display()
            )));
        }
    }
    Ok((summary_out, total_trials))
}

fn describe_cell_key(k: &CellKey) -> String {
    let mut s = format!(
        "{} / {} nodes / {} / {}",
        k.protocol, k.nodes, k.scenario, k.net
    );
    for v in &k.params {
        s.push_str(&format!(" / {v}"));
    }
    s
}

/// Check a finished results directory (a sweep's or a merge's) before a reader trusts it:
/// `trials.csv` is the file `manifest.json` records (bytes and SHA-256,
/// [`crate::files::verify_trials`]), every trial row is in its cell and seed and holds
/// valid values, `summary.csv` is exactly what those trials give, and the manifest's cell
/// and trial counts are theirs. Streams the rows (memory is flat in the number of trials).
pub fn verify_finished(dir: &Path) -> Result<()> {
    let mp = dir.join("manifest.json");
    let text = fs::read_to_string(&mp).map_err(|e| Error::io("cannot read", &mp, e))?;
    let manifest: Value = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
    let typed = Manifest::parse(&text, &mp)?;
    crate::files::verify_trials(dir, &typed)?;
    let summary = read_summary(dir)?;
    let mut frame = MergeFrame::of(&manifest, &mp)?;
    let files = [ShardFiles::new(1, manifest, summary, dir)?];
    // A seed-block shard is checked as the sweep of its own seeds.
    (frame.first_seed, frame.seeds) = (files[0].first_seed, files[0].seeds);
    let (_, trials) = merge_pass(&files, &frame, ShardBy::Cells, |_| Ok(()))?;
    let cells = files[0].summary.len() as u64 - 1;
    if typed.cells != cells || typed.trials != trials {
        return Err(Error::Results(format!(
            "{}: the manifest's cells and trials counts are not summary.csv's {cells} cells \
             and {trials} trials",
            mp.display()
        )));
    }
    Ok(())
}

/// Join the finished shards in `shards` (every `k/N` of one sweep, in any order) into `out`:
/// exactly the files the unsharded sweep writes. Every trial row is checked (its cell, its
/// seed and its values, as `--resume` checks them) and `summary.csv` is recomputed from the
/// merged trials; a shard whose summary disagrees with its trials is refused. The rows are
/// streamed (memory is flat in the number of trials), and `out` is locked while written.
///
/// `out` may not be one of the shards; if it holds results (or an interrupted sweep), they
/// are overwritten only with `force`, as `sweep` does.
pub fn merge(out: &Path, shards: &[PathBuf], force: bool) -> Result<MergeOutcome> {
    let set = crate::shard::read_set(
        out,
        shards,
        force,
        &[
            "manifest.json",
            "summary.csv",
            "trials.csv",
            crate::files::TRIALS_GZ,
            IN_PROGRESS,
        ],
    )?;
    let mut loaded = Vec::new();
    let mut typed = Vec::new();
    for (shard, dir, manifest) in set {
        let m = Manifest::from_value(&manifest, &dir.join("manifest.json"))?;
        crate::files::verify_trials(&dir, &m)?;
        let summary = read_summary(&dir)?;
        if m.cells != summary.len() as u64 - 1 {
            return Err(Error::Results(format!(
                "{}: summary.csv has {} cells but the manifest says {}",
                dir.display(),
                summary.len() - 1,
                m.cells
            )));
        }
        loaded.push(ShardFiles::new(shard.k, manifest, summary, &dir)?);
        typed.push(m);
    }
    let base = &loaded[0];
    let strip = |m: &Value| {
        let mut m = m.clone();
        if let Some(o) = m.as_object_mut() {
            for k in ["shard", "cells", "trials", "trials_csv", "seeds_run"] {
                o.shift_remove(k);
            }
        }
        m
    };
    for s in &loaded[1..] {
        if strip(&s.manifest) != strip(&base.manifest) {
            return Err(Error::Results(format!(
                "{} and {} are shards of different sweeps (or split differently)",
                base.dir.display(),
                s.dir.display()
            )));
        }
    }
    let by = match base.manifest.get("shard_by").and_then(Value::as_str) {
        None => ShardBy::Cells,
        Some(s) => s.parse().map_err(|_| {
            Error::Results(format!(
                "{}: shard_by {s:?} is neither cells nor seeds",
                base.dir.join("manifest.json").display()
            ))
        })?,
    };
    let frame = MergeFrame::of(&base.manifest, &base.dir.join("manifest.json"))?;
    // Check everything before writing anything.
    let (summary_out, total_trials) = merge_pass(&loaded, &frame, by, |_| Ok(()))?;
    for (i, s) in loaded.iter().enumerate() {
        let mine = s.summary[1..]
            .iter()
            .filter(|r| r.get(r.len() - 1) == Some(""))
            .count() as u64
            * s.seeds;
        if typed[i].trials != mine {
            return Err(Error::Results(format!(
                "{}: the manifest's trials count is not the {mine} trials of its cells",
                s.dir.display()
            )));
        }
    }
    let total_cells = summary_out.len() - 1;
    prepare_dir(out)?;
    let _lock = DirLock::acquire(out)?;
    let varied: Vec<&str> = frame.varied.iter().map(String::as_str).collect();
    let mut trials = AtomicFile::create(&out.join("trials.csv"))?;
    trials.write(&csv_bytes([trial_header(&varied)]))?;
    merge_pass(&loaded, &frame, by, |rows| {
        trials.write(&crate::results::write_trials(rows))
    })?;
    trials.commit()?;
    write_atomic(&out.join("summary.csv"), &csv_bytes(&summary_out))?;
    // The unsharded sweep's manifest: the shards' without what names a shard.
    let merged = Manifest {
        shard: None,
        shard_by: None,
        seeds_run: None,
        cells: total_cells as u64,
        trials: total_trials,
        trials_csv: Some(crate::files::gzip_trials(out)?),
        ..typed[0].clone()
    };
    write_atomic(&out.join("manifest.json"), &merged.to_bytes())?;
    Ok(MergeOutcome {
        cells: total_cells,
        trials: total_trials,
    })
}

/// A results directory's `summary.csv` records, refused when it has none.
fn read_summary(dir: &Path) -> Result<Vec<csv::StringRecord>> {
    let summary: Vec<csv::StringRecord> = read_csv(&dir.join("summary.csv"))?
        .into_iter()
        .map(|r| r.0)
        .collect();
    if summary.is_empty() {
        return Err(Error::Results(format!(
            "{}: empty summary.csv",
            dir.display()
        )));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_auto_maps_the_schedulers_task_variables() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let sh = |k, n| Shard { k, n };
        // Kubernetes: the 0-based completion index, the count from --shard-count.
        let k8s = env(&[("JOB_COMPLETION_INDEX", "3")]);
        assert_eq!(Shard::from_env(k8s, Some(8)).unwrap(), sh(4, 8));
        let e = Shard::from_env(k8s, None).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("--shard-count"),
            "{e}"
        );
        let e = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "8")]), Some(8)).unwrap_err();
        assert!(e.to_string().contains("shard 9 of 8"), "{e}");
        let e = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "x")]), Some(8)).unwrap_err();
        assert!(e.to_string().contains("JOB_COMPLETION_INDEX=\"x\""), "{e}");
        // Slurm: --array=0-7, 1-8 and 0-14:2 all number their tasks 1..=8.
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(Shard::from_env(slurm, None).unwrap(), sh(1, 8));
        assert_eq!(Shard::from_env(slurm, Some(8)).unwrap(), sh(1, 8));
        assert!(Shard::from_env(slurm, Some(4)).is_err());
        let one_based = env(&[
            ("SLURM_ARRAY_TASK_ID", "8"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(Shard::from_env(one_based, None).unwrap(), sh(8, 8));
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "6"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ]);
        assert_eq!(Shard::from_env(stepped, None).unwrap(), sh(4, 8));
        // Nothing set, or both: refused, naming the variables.
        let e = Shard::from_env(env(&[]), Some(8)).unwrap_err();
        assert!(e.to_string().contains("SLURM_ARRAY_TASK_ID"), "{e}");
        let both = env(&[("JOB_COMPLETION_INDEX", "1"), ("SLURM_ARRAY_TASK_ID", "1")]);
        assert!(Shard::from_env(both, Some(8)).is_err());
    }

    fn tiny_plan() -> SweepPlan {
        crate::SweepSpec::from_toml(
            "protocols = [\"bully\"]\nnodes = [3]\nscenarios = [\"leader-crash\"]\nseeds = 2\n",
        )
        .unwrap()
        .plan()
        .unwrap()
    }

    fn opts(out: &Path) -> SweepOptions {
        SweepOptions {
            out: out.to_path_buf(),
            jobs: Some(1),
            shard: None,
            shard_by: Default::default(),
            resume: false,
            verify_sample: RESUME_SAMPLE,
            force: false,
            progress: false,
            command: "test".into(),
        }
    }

    #[test]
    fn a_sweep_that_fails_before_any_cell_leaves_no_marker_and_no_lock() {
        let d = tempfile::tempdir().unwrap();
        // trials.csv cannot be created: a directory has its name.
        fs::create_dir(d.path().join("trials.csv")).unwrap();
        let e = run_sweep(&tiny_plan(), &opts(d.path())).unwrap_err();
        assert!(e.to_string().contains("trials.csv"), "{e}");
        let mut left: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["trials.csv".to_string()]);
    }

    #[test]
    fn a_finished_sweep_leaves_its_three_files_only() {
        let d = tempfile::tempdir().unwrap();
        let o = run_sweep(&tiny_plan(), &opts(d.path())).unwrap();
        assert_eq!(o.trials, 2);
        let mut left: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "manifest.json",
                "summary.csv",
                "trials.csv",
                "trials.csv.gz"
            ]
        );
    }

    /// A sweep stopped after its manifest but before its compressed copy (the report was
    /// rendering) is still marked unfinished, and `--resume` writes the copy without running a
    /// cell again; the finished directory holds no marker.
    #[test]
    fn a_sweep_stopped_while_compressing_is_finished_by_resume() {
        let d = tempfile::tempdir().unwrap();
        let (_, seen, compressed) = run_sweep_then(&tiny_plan(), &opts(d.path()), |_| {
            // While `then` runs the marker is still there; the manifest is complete.
            (
                d.path().join(IN_PROGRESS).exists(),
                d.path().join("manifest.json").exists(),
                fs::read(d.path().join(ROW_HASHES)).unwrap(),
            )
        })
        .unwrap();
        let (marker, manifest_written, row_hashes) = seen;
        assert_eq!((marker, manifest_written), (true, true));
        assert!(!d.path().join(ROW_HASHES).exists());
        compressed.unwrap();
        assert!(!d.path().join(IN_PROGRESS).exists());
        let gz = fs::read(d.path().join("trials.csv.gz")).unwrap();
        let manifest = fs::read(d.path().join("manifest.json")).unwrap();
        // The state a kill during the compression leaves.
        fs::remove_file(d.path().join("trials.csv.gz")).unwrap();
        fs::write(d.path().join(IN_PROGRESS), &manifest).unwrap();
        fs::write(d.path().join(ROW_HASHES), &row_hashes).unwrap();
        let mut o = opts(d.path());
        o.resume = true;
        let out = run_sweep(&tiny_plan(), &o).unwrap();
        assert_eq!(out.resumed_cells, out.cells - out.skipped);
        assert_eq!(fs::read(d.path().join("trials.csv.gz")).unwrap(), gz);
        assert_eq!(fs::read(d.path().join("manifest.json")).unwrap(), manifest);
        assert!(!d.path().join(IN_PROGRESS).exists());
    }

    /// Issue 47: the rows of an interrupted sweep are kept by `--resume` only with the SHA-256
    /// recorded as they were appended; a row edited within range (`msgs_total` + 1000) is
    /// refused naming its cell's lines, and the untouched rows are kept.
    #[test]
    fn resume_refuses_an_edited_row_of_an_interrupted_sweep() {
        let d = tempfile::tempdir().unwrap();
        let plan = crate::SweepSpec::from_toml(
            "protocols = [\"bully\"]\nnodes = [3, 4]\nscenarios = [\"leader-crash\"]\nseeds = 2\n",
        )
        .unwrap()
        .plan()
        .unwrap();
        // What a SIGKILL after the last cell leaves: trials.csv, the marker, the row hashes.
        let (_, killed, compressed) = run_sweep_then(&plan, &opts(d.path()), |_| {
            [IN_PROGRESS, ROW_HASHES, "trials.csv"].map(|f| fs::read(d.path().join(f)).unwrap())
        })
        .unwrap();
        compressed.unwrap();
        let restore = |trials: &[u8]| {
            for f in ["summary.csv", "manifest.json", "trials.csv.gz"] {
                let _ = fs::remove_file(d.path().join(f));
            }
            fs::write(d.path().join(IN_PROGRESS), &killed[0]).unwrap();
            fs::write(d.path().join(ROW_HASHES), &killed[1]).unwrap();
            fs::write(d.path().join("trials.csv"), trials).unwrap();
        };
        let text = String::from_utf8(killed[2].clone()).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let col = lines[0].split(',').position(|c| c == "msgs_total").unwrap();
        // Line 4: the second cell's first row.
        let mut f: Vec<String> = lines[3].split(',').map(String::from).collect();
        f[col] = (f[col].parse::<u64>().unwrap() + 1000).to_string();
        lines[3] = f.join(",");
        restore((lines.join("\n") + "\n").as_bytes());
        let mut o = opts(d.path());
        o.resume = true;
        let e = run_sweep(&plan, &o).unwrap_err();
        assert!(matches!(e, Error::Altered { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("trials.csv: lines 4-5 (cell bully") && e.contains(ROW_HASHES),
            "{e}"
        );
        // The same edit with its cell's hash recomputed, as a forger who knew the scheme would:
        // the kept trials run again (the default sample covers all four) give other rows.
        let edited = lines.join("\n") + "\n";
        let first_end: usize = String::from_utf8(killed[1].clone())
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let forged_hashes = format!(
            "{}\n{} {}\n",
            String::from_utf8(killed[1].clone())
                .unwrap()
                .lines()
                .next()
                .unwrap(),
            edited.len(),
            crate::empirical::sha256_hex(&edited.as_bytes()[first_end..])
        );
        restore(edited.as_bytes());
        fs::write(d.path().join(ROW_HASHES), forged_hashes).unwrap();
        let e = run_sweep(&plan, &o).unwrap_err();
        assert!(matches!(e, Error::Altered { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("trials.csv: line 4 (bully / 4 nodes") && e.contains("column msgs_total"),
            "{e}"
        );
        // Untouched, every cell is kept.
        restore(&killed[2]);
        assert_eq!(run_sweep(&plan, &o).unwrap().resumed_cells, 2);
        // A cell whose line was never recorded (killed in between) is run again.
        restore(&killed[2]);
        let first_line = killed[1].split(|&b| b == b'\n').next().unwrap().to_vec();
        fs::write(
            d.path().join(ROW_HASHES),
            [first_line, b"\n".to_vec()].concat(),
        )
        .unwrap();
        assert_eq!(run_sweep(&plan, &o).unwrap().resumed_cells, 1);
    }

    /// `trials.csv.gz` decompresses to exactly `trials.csv`, whose SHA-256 and row count the
    /// manifest records; the same sweep writes the same compressed bytes; and a directory that
    /// holds only the compressed file (a fresh clone of committed results) resumes.
    #[test]
    fn the_compressed_trials_are_the_csv_checked_by_the_manifest() {
        use sha2::Digest;
        use std::io::Read;
        let d = tempfile::tempdir().unwrap();
        run_sweep(&tiny_plan(), &opts(d.path())).unwrap();
        let raw = fs::read(d.path().join("trials.csv")).unwrap();
        let gz = fs::read(d.path().join("trials.csv.gz")).unwrap();
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut text)
            .unwrap();
        assert_eq!(text, raw);
        let m: Value =
            serde_json::from_slice(&fs::read(d.path().join("manifest.json")).unwrap()).unwrap();
        let sha: String = sha2::Sha256::digest(&raw)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(m["trials_csv"]["sha256"], sha.as_str());
        assert_eq!(m["trials_csv"]["rows"], 2);
        assert_eq!(m["trials_csv"]["file"], "trials.csv.gz");
        // Deterministic: another directory, the same bytes.
        let e = tempfile::tempdir().unwrap();
        run_sweep(&tiny_plan(), &opts(e.path())).unwrap();
        assert_eq!(fs::read(e.path().join("trials.csv.gz")).unwrap(), gz);
        // Only the compressed file left: --resume restores the CSV and keeps every cell.
        fs::remove_file(d.path().join("trials.csv")).unwrap();
        let mut o = opts(d.path());
        o.resume = true;
        let out = run_sweep(&tiny_plan(), &o).unwrap();
        assert_eq!(out.resumed_cells, 1);
        assert_eq!(fs::read(d.path().join("trials.csv")).unwrap(), raw);
        // And a reader streams rows from the compressed file alone.
        fs::remove_file(d.path().join("trials.csv")).unwrap();
        let p = crate::files::trials_file(d.path());
        assert!(p.ends_with("trials.csv.gz"));
        let mut st = CsvStream::open(&p).unwrap();
        let mut n = 0;
        while st.next_record().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 3, "header and two rows");
    }

    /// A sweep of few cells and many seeds split by seed blocks: each shard is the sweep of
    /// its block (checked as such), and the merged files are the unsharded ones byte for byte;
    /// blocks of a cell split are refused with them, and so is an incomplete set.
    #[test]
    fn seed_block_shards_merge_into_the_unsharded_sweep() {
        let plan = crate::SweepSpec::from_toml(
            "protocols = [\"bully\", \"ring\"]\nnodes = [3]\nscenarios = [\"leader-crash\"]\nseeds = 7\nfirst_seed = 3\n",
        )
        .unwrap()
        .plan()
        .unwrap();
        let root = tempfile::tempdir().unwrap();
        let whole = root.path().join("whole");
        run_sweep(&plan, &opts(&whole)).unwrap();
        let mut dirs = Vec::new();
        for k in 1..=3 {
            let d = root.path().join(format!("s{k}"));
            let mut o = opts(&d);
            o.shard = Some(Shard { k, n: 3 });
            o.shard_by = ShardBy::Seeds;
            let out = run_sweep(&plan, &o).unwrap();
            assert_eq!(out.cells, 2, "every cell in every block");
            assert_eq!(out.trials, 2 * seed_block(3, 7, Shard { k, n: 3 }).1);
            verify_finished(&d).unwrap();
            dirs.push(d);
        }
        let merged = root.path().join("merged");
        let e = merge(&merged, &dirs[..2], false).unwrap_err().to_string();
        assert!(e.contains("missing shard(s) 3/3"), "{e}");
        let m = merge(&merged, &dirs, false).unwrap();
        assert_eq!((m.cells, m.trials), (2, 14));
        for f in [
            "trials.csv",
            "trials.csv.gz",
            "summary.csv",
            "manifest.json",
        ] {
            assert_eq!(
                fs::read(merged.join(f)).unwrap(),
                fs::read(whole.join(f)).unwrap(),
                "{f}"
            );
        }
        // A seed block that claims other seeds than its shard's is refused, naming them.
        let mp = dirs[1].join("manifest.json");
        let good = fs::read(&mp).unwrap();
        let mut m: Value = serde_json::from_slice(&good).unwrap();
        m["seeds_run"]["first"] = 4.into();
        fs::write(&mp, json_bytes(&m)).unwrap();
        let e = merge(&root.path().join("m0"), &dirs, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not this shard's block") && e.contains("seeds 5 to 6"),
            "{e}"
        );
        fs::write(&mp, good).unwrap();
        // A cell shard is not a seed block: the set is refused.
        let c = root.path().join("c1");
        let mut o = opts(&c);
        o.shard = Some(Shard { k: 1, n: 3 });
        run_sweep(&plan, &o).unwrap();
        let mixed = vec![c, dirs[1].clone(), dirs[2].clone()];
        let e = merge(&root.path().join("m2"), &mixed, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("split differently"), "{e}");
        // More shards than seeds: refused by name.
        let mut o = opts(&root.path().join("many"));
        o.shard = Some(Shard { k: 1, n: 8 });
        o.shard_by = ShardBy::Seeds;
        let e = run_sweep(&plan, &o).unwrap_err().to_string();
        assert!(e.contains("at least 8 seeds"), "{e}");
    }

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
