//! Sharding: one run (a sweep, an exploration, a tuning) split into `N` independent slices
//! for the array jobs of a batch scheduler, and joined back by `election-bench merge` into
//! exactly the files the unsharded run writes.
//!
//! What a slice is depends on the run; each is the run's own unit of work, dealt round-robin
//! (`unit i` goes to shard `i mod N + 1`) so that expensive and cheap units spread evenly:
//!
//! | run | unit | `merge` |
//! |---|---|---|
//! | `sweep` (`--shard-by cells`, the default) | a cell (all its seeds) | interleaves the cells back |
//! | `sweep --shard-by seeds` | a block of consecutive seeds of every cell ([`seed_block`]) | joins each cell's blocks in seed order |
//! | `explore` | a chunk of patterns (the unit of `--resume`) | collects the chunks, then builds the files from them |
//! | `tune` | a protocol (its search is sequential: each phase depends on the last) | joins the protocols in their order, then writes the page |
//!
//! Seed blocks are for a sweep of few cells and many seeds (a validation, one scenario at
//! 100,000 seeds): with more shards than cells, most cell shards would be empty.
//!
//! Every shard records `"shard": "k/N"` in its manifest; `merge` refuses an incomplete or mixed
//! set, naming the missing or foreign shard, before it writes anything.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{usage, Error, Result};

/// One slice of a sharded run: shard `k` of `n`, 1-based.
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
    /// The shard a batch scheduler's array task is (`--shard auto`), from its environment
    /// (`var` reads a variable; `count` is `--shard-count`):
    ///
    /// - a Kubernetes Indexed Job sets `JOB_COMPLETION_INDEX` (`0..completions`) and no count,
    ///   so `count` is required: index `i` is shard `i + 1` of `count`;
    /// - a Slurm job array sets `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_MIN`,
    ///   `SLURM_ARRAY_TASK_COUNT` and `SLURM_ARRAY_TASK_STEP` (`--array=0-7`, `1-8`, `0-14:2`):
    ///   task `id` is shard `(id - min) / step + 1` of the count (`count`, if given, must agree).
    ///
    /// Neither set, both set, or values out of range: a usage error naming the variables.
    pub fn from_env(var: impl Fn(&str) -> Option<String>, count: Option<u32>) -> Result<Shard> {
        let num = |name: &str| -> Result<Option<u64>> {
            match var(name) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    Error::Usage(format!("--shard auto: {name}={v:?} is not a whole number"))
                }),
            }
        };
        let k8s = num("JOB_COMPLETION_INDEX")?;
        let slurm = num("SLURM_ARRAY_TASK_ID")?;
        let shard = |k: u64, n: u64, from: &str| -> Result<Shard> {
            match (u32::try_from(k), u32::try_from(n)) {
                (Ok(k), Ok(n)) if n > 0 && (1..=n).contains(&k) => Ok(Shard { k, n }),
                _ => usage!("--shard auto: {from} gives shard {k} of {n}, not one of 1..={n}"),
            }
        };
        match (k8s, slurm) {
            (Some(_), Some(_)) => usage!(
                "--shard auto: both JOB_COMPLETION_INDEX and SLURM_ARRAY_TASK_ID are set; \
                 give --shard k/N"
            ),
            (Some(i), None) => {
                let Some(n) = count else {
                    return usage!(
                        "--shard auto: JOB_COMPLETION_INDEX={i} (a Kubernetes Indexed Job) needs \
                         --shard-count N, the Job's completions"
                    );
                };
                shard(
                    i + 1,
                    n.into(),
                    &format!("JOB_COMPLETION_INDEX={i} with --shard-count {n}"),
                )
            }
            (None, Some(id)) => {
                let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
                let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
                let n = match (num("SLURM_ARRAY_TASK_COUNT")?, count) {
                    (Some(c), Some(n)) if c != u64::from(n) => {
                        return usage!(
                            "--shard-count {n} disagrees with SLURM_ARRAY_TASK_COUNT={c}"
                        )
                    }
                    (Some(c), _) => c,
                    (None, Some(n)) => n.into(),
                    (None, None) => {
                        return usage!(
                            "--shard auto: SLURM_ARRAY_TASK_ID={id} without \
                             SLURM_ARRAY_TASK_COUNT; give --shard-count N"
                        )
                    }
                };
                let from = format!("SLURM_ARRAY_TASK_ID={id} (min {min}, step {step}, count {n})");
                if id < min || (id - min) % step != 0 {
                    return usage!("--shard auto: {from} is not a task of the array");
                }
                shard((id - min) / step + 1, n, &from)
            }
            (None, None) => usage!(
                "--shard auto: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor \
                 SLURM_ARRAY_TASK_ID (a Slurm job array) is set; give --shard k/N"
            ),
        }
    }

    /// A manifest's `"shard"` value, if it has a valid one.
    pub fn from_str_opt(s: Option<&str>) -> Option<Shard> {
        s.and_then(|s| s.parse().ok())
    }

    /// Does this shard run unit `index` (a cell, a chunk, a protocol: numbered from 0)?
    pub fn owns(&self, index: usize) -> bool {
        index % self.n as usize == (self.k - 1) as usize
    }
}

/// How a sweep is split into shards (`--shard-by`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShardBy {
    /// Each shard runs whole cells (round-robin).
    #[default]
    Cells,
    /// Each shard runs every cell with one block of consecutive seeds ([`seed_block`]).
    Seeds,
}

impl ShardBy {
    /// As the CLI and the manifest name it.
    pub fn name(self) -> &'static str {
        match self {
            ShardBy::Cells => "cells",
            ShardBy::Seeds => "seeds",
        }
    }
}

impl FromStr for ShardBy {
    type Err = Error;
    fn from_str(s: &str) -> Result<ShardBy> {
        match s {
            "cells" => Ok(ShardBy::Cells),
            "seeds" => Ok(ShardBy::Seeds),
            _ => usage!("--shard-by {s:?}: expected cells or seeds"),
        }
    }
}

/// The seeds shard `s` runs when `count` seeds from `first` are split into `s.n` blocks:
/// `(first seed, count)`, the blocks consecutive and as even as can be (sizes differ by at
/// most one, the larger ones last). Every block holds at least one seed when `count >= n`.
pub fn seed_block(first: u64, count: u64, s: Shard) -> (u64, u64) {
    let n = u128::from(s.n);
    let at = |k: u128| (u128::from(count) * k / n) as u64;
    let lo = at(u128::from(s.k - 1));
    let hi = at(u128::from(s.k));
    (first + lo, hi - lo)
}

/// `--shard` and `--shard-count` as given on the command line: `k/N`, or `auto` with the
/// scheduler's environment ([`Shard::from_env`], read through `var`).
pub fn resolve(
    shard: Option<&str>,
    count: Option<u32>,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Shard>> {
    match shard {
        Some("auto") => Shard::from_env(var, count).map(Some),
        Some(s) => {
            if let Some(n) = count {
                return usage!("--shard-count {n} goes with --shard auto, not --shard {s}");
            }
            s.parse().map(Some)
        }
        None => match count {
            Some(n) => usage!("--shard-count {n} goes with --shard auto"),
            None => Ok(None),
        },
    }
}

/// Where a shard writes when the command names no `--out`: `<default>-shards/<k>-of-<N>`, so
/// that every task of an array runs the same command line, and `merge` takes the parent.
pub fn default_dir(default: &Path, s: Shard) -> PathBuf {
    let mut base = default.as_os_str().to_owned();
    base.push("-shards");
    PathBuf::from(base).join(format!("{}-of-{}", s.k, s.n))
}

/// The shards of a merge in order `1..=n`: every `k/N` present exactly once, all of one
/// `N`. `of` names each input (its directory) and its shard, as its manifest records it.
pub fn complete_set<T>(mut items: Vec<(Shard, PathBuf, T)>) -> Result<Vec<(Shard, PathBuf, T)>> {
    let Some(n) = items.first().map(|i| i.0.n) else {
        return usage!("merge: no shard directories given");
    };
    if let Some((s, d, _)) = items.iter().find(|i| i.0.n != n) {
        return Err(Error::Results(format!(
            "{} is shard {s} but {} belongs to a {n}-way split",
            d.display(),
            items[0].1.display()
        )));
    }
    items.sort_by_key(|i| i.0.k);
    for w in items.windows(2) {
        if w[0].0.k == w[1].0.k {
            return Err(Error::Results(format!(
                "{} and {} are both shard {}",
                w[0].1.display(),
                w[1].1.display(),
                w[0].0
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !items.iter().any(|i| i.0.k == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Results(format!(
            "merge: missing shard(s) {}",
            missing.join(", ")
        )));
    }
    Ok(items)
}

/// Refuse a merge into `out` when `out` is one of the `shards`, or already holds any of `held`
/// (the files the merge writes) without `force`.
pub fn check_merge_out(out: &Path, shards: &[PathBuf], force: bool, held: &[&str]) -> Result<()> {
    if shards.is_empty() {
        return usage!("merge: no shard directories given");
    }
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if let Some(s) = shards.iter().find(|s| same(out, s)) {
        return usage!(
            "merge --out {}: that is one of the shards being merged ({}); choose another --out",
            out.display(),
            s.display()
        );
    }
    let held: Vec<&str> = held
        .iter()
        .copied()
        .filter(|f| out.join(f).exists())
        .collect();
    if !held.is_empty() && !force {
        return usage!(
            "merge --out {} holds results already ({}); use --force to overwrite them, or \
             choose another --out",
            out.display(),
            held.join(", ")
        );
    }
    Ok(())
}

/// A shard's `manifest.json` and the shard it names (`"shard": "k/N"`); a directory without a
/// manifest, or whose manifest is not a shard's, is refused by name.
pub fn read_manifest(dir: &Path) -> Result<(Shard, serde_json::Value)> {
    let mp = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mp).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Results(format!(
                "{} has no manifest.json: not a finished shard",
                dir.display()
            ))
        } else {
            Error::io("cannot read", &mp, e)
        }
    })?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
    let Some(shard) = manifest.get("shard").and_then(serde_json::Value::as_str) else {
        return Err(Error::Results(format!(
            "{} is not a shard (its manifest has no \"shard\")",
            dir.display()
        )));
    };
    let shard: Shard = shard
        .parse()
        .map_err(|_| Error::Results(format!("{}: bad shard {shard:?}", mp.display())))?;
    Ok((shard, manifest))
}

/// The shards of one merge into `out`, read and checked before anything is written: `out` is
/// neither a shard nor holding results (`held`) without `force` ([`check_merge_out`]), every
/// directory is a finished shard ([`read_manifest`]), and the set is complete
/// ([`complete_set`]). In shard order, each with its directory and manifest.
pub fn read_set(
    out: &Path,
    shards: &[PathBuf],
    force: bool,
    held: &[&str],
) -> Result<Vec<(Shard, PathBuf, serde_json::Value)>> {
    check_merge_out(out, shards, force, held)?;
    let mut read = Vec::new();
    for dir in shards {
        let (shard, m) = read_manifest(dir)?;
        read.push((shard, dir.clone(), m));
    }
    complete_set(read)
}

/// What a shard directory holds, from its manifest: a sweep's (its config has a `mode`), an
/// exploration's (`"command": "explore"`) or a tuning's (`"command"` starting `election-bench
/// tune`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sweep --shard`.
    Sweep,
    /// `explore --shard`.
    Explore,
    /// `tune --shard`.
    Tune,
}

/// The kind of the first shard in `shards` ([`Kind`]); `merge` checks that the others agree as
/// it reads them.
pub fn kind(dir: &Path) -> Result<Kind> {
    let (_, m) = read_manifest(dir)?;
    let command = m.get("command").and_then(serde_json::Value::as_str);
    if command == Some("explore") {
        Ok(Kind::Explore)
    } else if command.is_some_and(|c| c.starts_with("election-bench tune")) {
        Ok(Kind::Tune)
    } else if m.pointer("/config/mode").is_some() {
        Ok(Kind::Sweep)
    } else {
        Err(Error::Results(format!(
            "{}: a shard of neither a sweep, an exploration nor a tuning",
            dir.join("manifest.json").display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_blocks_cover_the_range_once_in_order() {
        for count in [1u64, 7, 8, 100, 1001] {
            for n in 1..=9u32 {
                if u64::from(n) > count {
                    continue;
                }
                let mut next = 5;
                for k in 1..=n {
                    let (first, c) = seed_block(5, count, Shard { k, n });
                    assert_eq!(first, next, "count {count} n {n} k {k}");
                    assert!(c >= count / u64::from(n) && c <= count.div_ceil(u64::from(n)));
                    next += c;
                }
                assert_eq!(next, 5 + count);
            }
        }
    }

    #[test]
    fn resolve_reads_flags_and_refuses_a_count_without_auto() {
        let none = |_: &str| None;
        assert_eq!(resolve(None, None, none).unwrap(), None);
        assert_eq!(
            resolve(Some("2/4"), None, none).unwrap(),
            Some(Shard { k: 2, n: 4 })
        );
        assert!(resolve(Some("2/4"), Some(4), none).is_err());
        assert!(resolve(None, Some(4), none).is_err());
        let k8s = |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| "3".to_string());
        assert_eq!(
            resolve(Some("auto"), Some(8), k8s).unwrap(),
            Some(Shard { k: 4, n: 8 })
        );
    }

    #[test]
    fn default_dirs_sit_beside_the_unsharded_one() {
        assert_eq!(
            default_dir(Path::new("results/explore"), Shard { k: 2, n: 3 }),
            Path::new("results/explore-shards/2-of-3")
        );
    }

    #[test]
    fn a_merge_set_must_be_complete_and_of_one_split() {
        let s = |k, n| (Shard { k, n }, PathBuf::from(format!("d{k}")), ());
        assert_eq!(
            complete_set(vec![s(2, 2), s(1, 2)])
                .unwrap()
                .iter()
                .map(|i| i.0.k)
                .collect::<Vec<_>>(),
            vec![1, 2]
        );
        let e = complete_set(vec![s(1, 3), s(3, 3)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing shard(s) 2/3"), "{e}");
        assert!(complete_set(vec![s(1, 2), s(1, 2)]).is_err());
        assert!(complete_set(vec![s(1, 2), s(2, 3)]).is_err());
    }
}
