//! Checking recorded results by re-running a sample of their trials.
//!
//! A trial depends only on its cell and seed, so a recorded row can be checked by running it
//! again: [`sweep`] (a sweep's or the reference sweep's `trials.csv`, or its committed
//! `trials.csv.gz`) and [`explore`] (an exploration's `patterns.csv`, each row a pattern run
//! with every seed) re-run `sample` rows chosen by [`pick`] from a seed, and compare them
//! field by field with what is recorded. The first row that differs is an [`Error::Altered`]
//! naming the file, the line, the trial (protocol, nodes, scenario or pattern, seed), the
//! column and both values. The SHA-256 a file is recorded with stops an edit made without
//! recomputing it; a re-run sample also catches one made by someone who did.

use std::path::Path;

use election_core::{Rng, RngExt, SeedableRng};

use crate::error::{Error, Result};
use crate::files::CsvStream;
use crate::plan::{Cell, SweepPlan};
use crate::results::Manifest;

/// What a check compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// Rows re-run and found identical.
    pub rows: u64,
    /// Rows in the file.
    pub of: u64,
    /// Trials run to re-run them.
    pub trials: u64,
}

/// `k` distinct indices out of `0..total` (all of them when `k >= total`), in ascending
/// order, drawn from `seed`: the same sample every time.
pub fn pick(total: u64, k: u64, seed: u64) -> Vec<u64> {
    if k >= total {
        return (0..total).collect();
    }
    let mut rng = Rng::seed_from_u64(seed);
    let mut picked = std::collections::BTreeSet::new();
    // Floyd's algorithm: k draws, each adds one index.
    for j in total - k..total {
        let t = rng.random_range(0..=j);
        if !picked.insert(t) {
            picked.insert(j);
        }
    }
    picked.into_iter().collect()
}

/// The recorded row `recorded` against the re-run `rerun` (both with `header`'s columns):
/// `None` when they are the same, else the first differing column and both values.
pub(crate) fn first_difference(
    header: &[String],
    recorded: &[String],
    rerun: &[String],
) -> Option<String> {
    if recorded.len() != rerun.len() {
        return Some(format!(
            "{} fields recorded, the re-run has {}",
            recorded.len(),
            rerun.len()
        ));
    }
    (0..recorded.len())
        .find(|&c| recorded[c] != rerun[c])
        .map(|c| {
            format!(
                "column {} = {:?} recorded, the re-run gives {:?}",
                header.get(c).map_or("?", String::as_str),
                recorded[c],
                rerun[c]
            )
        })
}

/// Fields of a CSV line as written (one record).
fn fields(bytes: &[u8]) -> Vec<String> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes)
        .records()
        .next()
        .and_then(|r| r.ok())
        .map(|r| r.iter().map(String::from).collect())
        .unwrap_or_default()
}

/// Re-run `sample` trials (chosen by [`pick`] from `seed`) of the finished sweep in `dir`,
/// whose configuration `plan` is (the CLI rebuilds it from the manifest's command), and
/// compare each with its recorded row. First the whole `trials.csv` (or `trials.csv.gz`) is
/// checked against the SHA-256 its manifest records, and the plan against the manifest's
/// `config_sha256`.
pub fn sweep(dir: &Path, plan: &SweepPlan, sample: u64, seed: u64) -> Result<Checked> {
    let mp = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mp).map_err(|e| Error::io("cannot read", &mp, e))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
    let manifest = Manifest::from_value(&value, &mp)?;
    if let Some(s) = &manifest.shard {
        return Err(Error::Results(format!(
            "{}: shard {s} of a sweep; verify the merged results (`merge`)",
            mp.display()
        )));
    }
    let want = crate::sweep::config_sha256(&plan.manifest_config());
    if manifest.config_sha256.as_deref() != Some(want.as_str()) {
        return Err(Error::Altered {
            path: mp,
            detail: format!(
                "config_sha256 {:?}, but its command {:?} builds a configuration hashing to {want} \
                 (the manifest was edited, or the parameters' defaults changed since: rerun the \
                 command)",
                manifest.config_sha256.as_deref().unwrap_or(""),
                manifest.command
            ),
        });
    }
    crate::files::verify_trials(dir, &manifest)?;
    let cells = plan.cells()?;
    let runnable: Vec<&Cell> = cells.iter().filter(|c| c.skipped.is_none()).collect();
    let total = runnable.len() as u64 * plan.seeds;
    let picks = pick(total, sample, seed);
    check_rows(
        &crate::files::trials_file(dir),
        plan,
        &runnable,
        total,
        &picks,
    )?;
    Ok(Checked {
        rows: picks.len() as u64,
        of: total,
        trials: picks.len() as u64,
    })
}

/// Re-run the rows `picks` (ascending indices over the `runnable` cells' trials, cell by cell,
/// seeds in order, `total` in all) of the trials file at `path`, whose header must be the
/// plan's, and compare each with its recorded row.
pub(crate) fn check_rows(
    path: &Path,
    plan: &SweepPlan,
    runnable: &[&Cell],
    total: u64,
    picks: &[u64],
) -> Result<()> {
    let path = path.to_path_buf();
    let varied = plan.varied_keys();
    let header = crate::results::trial_header(&varied);
    let mut csv = CsvStream::open(&path)?;
    match csv.next_record()? {
        Some((h, _)) if h.iter().eq(header.iter().map(String::as_str)) => {}
        _ => {
            return Err(Error::Altered {
                path,
                detail: format!("line 1: the header is not {}", header.join(",")),
            })
        }
    }
    let mut next = 0u64;
    for &i in picks {
        let recorded = loop {
            let Some((rec, _)) = csv.next_record()? else {
                return Err(Error::Altered {
                    path,
                    detail: format!("ends before line {} of {}", i + 2, total + 1),
                });
            };
            let here = next;
            next += 1;
            if here == i {
                break rec.iter().map(String::from).collect::<Vec<_>>();
            }
        };
        let cell = runnable[(i / plan.seeds) as usize];
        let trial_seed = plan.first_seed + i % plan.seeds;
        let row = cell.run(trial_seed, false)?.row;
        let rerun = fields(&crate::results::write_trials([&row]));
        if let Some(diff) = first_difference(&header, &recorded, &rerun) {
            return Err(Error::Altered {
                path,
                detail: format!(
                    "line {} ({} seed {trial_seed}): {diff}",
                    i + 2,
                    cell.describe(&varied)
                ),
            });
        }
    }
    Ok(())
}

/// Re-run `sample` rows of the exploration in `dir` (its `patterns.csv`; chosen by [`pick`]
/// from `seed`), each pattern with every seed, and compare each with its recorded row. The
/// exploration is rebuilt from its manifest, whose cells must hash as this build's do.
pub fn explore(dir: &Path, sample: u64, seed: u64) -> Result<Checked> {
    let opts = crate::explore::options_from_manifest(dir, dir)?;
    let rows = crate::explore::pattern_index(&opts);
    let picks = pick(rows.len() as u64, sample, seed);
    let path = dir.join("patterns.csv");
    let mut csv = CsvStream::open(&path)?;
    let header: Vec<String> = match csv.next_record()? {
        Some((h, _)) => h.iter().map(String::from).collect(),
        None => {
            return Err(Error::Altered {
                path,
                detail: "empty, no header".into(),
            })
        }
    };
    let mut next = 0u64;
    for &i in &picks {
        let recorded = loop {
            let Some((rec, _)) = csv.next_record()? else {
                return Err(Error::Altered {
                    path,
                    detail: format!("ends before line {} of {}", i + 2, rows.len() + 1),
                });
            };
            let here = next;
            next += 1;
            if here == i {
                break rec.iter().map(String::from).collect::<Vec<_>>();
            }
        };
        let rerun = crate::explore::rerun_pattern(&opts, &rows[i as usize])?;
        if let Some(diff) = first_difference(&header, &recorded, &rerun) {
            return Err(Error::Altered {
                path,
                detail: format!(
                    "line {} ({} nodes {} pattern {}, seeds 0..{}): {diff}",
                    i + 2,
                    rerun[0],
                    rerun[1],
                    rerun[3],
                    opts.seeds
                ),
            });
        }
    }
    Ok(Checked {
        rows: picks.len() as u64,
        of: rows.len() as u64,
        trials: picks.len() as u64 * opts.seeds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_fixed_distinct_and_sorted() {
        let a = pick(1000, 16, 7);
        assert_eq!(a, pick(1000, 16, 7));
        assert_eq!(a.len(), 16);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a[15] < 1000);
        assert_ne!(a, pick(1000, 16, 8));
        assert_eq!(pick(3, 16, 7), vec![0, 1, 2]);
        assert!(pick(10, 0, 7).is_empty());
    }
}
