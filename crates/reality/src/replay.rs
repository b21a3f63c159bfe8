//! A finished run measured again from what it left on disk: `run.json`, `reality.csv` (each
//! trial's instants) and, per cluster, `logs/nN/members.csv`, `journal.csv` and the members'
//! logs. Nothing of the run's memory is needed, so a run's rows can be checked against its
//! evidence, and a committed corpus of real logs (the tests' fixtures) gives the same rows on
//! every machine.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use election_runner::results::{CellKey, TrialRow};

use crate::log::{parse_log, LogEvent, RaftId};
use crate::measure::{lost_terms, measure, Act, Failover, Window};
use crate::run::{verdict, Files, Load, TrialReport, JOURNAL, MANIFEST, MEMBERS, MODE, NET};
use crate::Error;

/// One trial measured again.
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    /// Its row.
    pub row: TrialRow,
    /// What the log says about its failover.
    pub failover: Failover,
    /// Its instants.
    pub window: Window,
    /// What the logs show for each lost term ([`crate::measure::lost_terms`]).
    pub lost_terms: String,
}

fn read(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })
}

fn bad(path: &Path, why: String) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
    }
}

/// The records of a CSV file with a header, as maps from column to field.
fn records(path: &Path) -> Result<Vec<BTreeMap<String, String>>, Error> {
    let text = read(path)?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r
        .headers()
        .map_err(|e| bad(path, e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    r.records()
        .map(|rec| {
            let rec = rec.map_err(|e| bad(path, e.to_string()))?;
            Ok(header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect())
        })
        .collect()
}

fn field<'a>(path: &Path, r: &'a BTreeMap<String, String>, k: &str) -> Result<&'a str, Error> {
    r.get(k)
        .map(String::as_str)
        .ok_or_else(|| bad(path, format!("no column {k}")))
}

fn num<T: std::str::FromStr>(
    path: &Path,
    r: &BTreeMap<String, String>,
    k: &str,
) -> Result<T, Error> {
    let v = field(path, r, k)?;
    v.parse()
        .map_err(|_| bad(path, format!("column {k} = {v:?} is not a number")))
}

/// One cluster's evidence.
struct ClusterLogs {
    ids: Vec<RaftId>,
    events: Vec<LogEvent>,
    journal: Vec<(i64, Act)>,
}

fn cluster_logs(dir: &Path) -> Result<ClusterLogs, Error> {
    let members_path = dir.join(MEMBERS);
    let mut ids = Vec::new();
    let mut events = Vec::new();
    for (i, m) in records(&members_path)?.iter().enumerate() {
        let hex = field(&members_path, m, "raft_id")?;
        let id = u64::from_str_radix(hex, 16)
            .map_err(|_| bad(&members_path, format!("raft_id {hex:?} is not hex")))?;
        ids.push(id);
        events.extend(parse_log(&read(&dir.join(format!("m{}.log", i + 1)))?));
    }
    let journal_path = dir.join(JOURNAL);
    let mut journal = Vec::new();
    for r in records(&journal_path)? {
        let t: i64 = num(&journal_path, &r, "unix_ms")?;
        let member = |s: &str| -> Result<usize, Error> {
            s.parse::<usize>()
                .ok()
                .and_then(|m| m.checked_sub(1))
                .filter(|&i| i < ids.len())
                .ok_or_else(|| {
                    bad(
                        &journal_path,
                        format!("member {s:?} is not one of 1..={}", ids.len()),
                    )
                })
        };
        let who = field(&journal_path, &r, "member")?;
        let act = match field(&journal_path, &r, "act")? {
            "heal" => Act::Heal,
            // The groups' members, space-separated, the groups joined by `|`.
            "partition" => Act::Partition(
                who.split('|')
                    .map(|g| g.split_whitespace().map(member).collect())
                    .collect::<Result<_, Error>>()?,
            ),
            "crash" => Act::Crash(member(who)?),
            "restart" => Act::Restart(member(who)?),
            "pause" => Act::Pause(member(who)?),
            "resume" => Act::Resume(member(who)?),
            other => return Err(bad(&journal_path, format!("unknown act {other:?}"))),
        };
        journal.push((t, act));
    }
    Ok(ClusterLogs {
        ids,
        events,
        journal,
    })
}

/// Measure every trial of the run in `dir` again, in `reality.csv`'s order.
pub fn replay_dir(dir: &Path) -> Result<Vec<Replayed>, Error> {
    let manifest_path = dir.join(MANIFEST);
    let manifest: serde_json::Value = serde_json::from_str(&read(&manifest_path)?)
        .map_err(|e| bad(&manifest_path, e.to_string()))?;
    let protocol = manifest["protocol"]
        .as_str()
        .ok_or_else(|| bad(&manifest_path, "no protocol".into()))?
        .to_string();
    let election_ms = manifest["election_ms"]
        .as_u64()
        .ok_or_else(|| bad(&manifest_path, "no election_ms".into()))?;
    let trials_path = dir.join("reality.csv");
    let mut clusters: BTreeMap<u32, ClusterLogs> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records(&trials_path)? {
        let nodes: u32 = num(&trials_path, &r, "nodes")?;
        let c = match clusters.entry(nodes) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(cluster_logs(&dir.join("logs").join(format!("n{nodes}")))?)
            }
        };
        let window = Window {
            origin_ms: num(&trials_path, &r, "origin_unix_ms")?,
            t0_ms: num(&trials_path, &r, "t0_unix_ms")?,
            calm_ms: num(&trials_path, &r, "calm_unix_ms")?,
            end_ms: num(&trials_path, &r, "end_unix_ms")?,
        };
        let m = measure(&c.ids, &c.events, &c.journal, window, verdict(election_ms));
        let key = CellKey {
            mode: MODE.into(),
            protocol: protocol.clone(),
            nodes,
            scenario: field(&trials_path, &r, "scenario")?.to_string(),
            net: NET.into(),
            params: Vec::new(),
        };
        let seed: u64 = num(&trials_path, &r, "seed")?;
        out.push(Replayed {
            row: TrialRow::from_metrics(&key, seed, &m.metrics),
            lost_terms: lost_terms(&c.ids, &c.events, &c.journal, window, &m.failover),
            failover: m.failover,
            window,
        });
    }
    Ok(out)
}

/// Measure the run in `dir` again ([`replay_dir`]) and write its files anew with this build:
/// `trials.csv`, `summary.csv`, `reality.csv` (the target, load and note of each trial kept
/// from the old one, every measured column recomputed) and `manifest.json`, into `out`
/// (`dir` itself to bring an older run up to date; `run.json` and the logs are copied when
/// `out` is another directory). Returns the files written.
pub fn rewrite(dir: &Path, out: &Path) -> Result<Vec<std::path::PathBuf>, Error> {
    let replayed = replay_dir(dir)?;
    let trials_path = dir.join("reality.csv");
    let old = records(&trials_path)?;
    let manifest_path = dir.join(MANIFEST);
    let run: serde_json::Value = serde_json::from_str(&read(&manifest_path)?)
        .map_err(|e| bad(&manifest_path, e.to_string()))?;
    let mut trials = Vec::new();
    for (r, o) in replayed.into_iter().zip(&old) {
        let load = ["load1", "load5", "load15"].map(|k| o.get(k).and_then(|v| v.parse().ok()));
        trials.push(TrialReport {
            row: r.row,
            failover: r.failover,
            load: Load(match load {
                [Some(a), Some(b), Some(c)] => Some([a, b, c]),
                _ => None,
            }),
            window: r.window,
            target: num(&trials_path, o, "target")?,
            lost_terms: r.lost_terms,
            note: o.get("note").cloned().unwrap_or_default(),
        });
    }
    let io = |path: &Path, e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    if out != dir {
        fs::create_dir_all(out).map_err(|e| io(out, e))?;
        fs::copy(&manifest_path, out.join(MANIFEST)).map_err(|e| io(&manifest_path, e))?;
        copy_tree(&dir.join("logs"), &out.join("logs")).map_err(|e| io(&dir.join("logs"), e))?;
    }
    let files = Files {
        out: out.to_path_buf(),
    };
    files.write_all(&trials, &run)
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        } else {
            fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}
