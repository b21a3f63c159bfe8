//! What a user asks for — a TOML config file, CLI flags, or both — before it is checked:
//! [`SweepSpec`]. Flags override the file; [`SweepSpec::plan`](crate::plan) checks everything
//! and resolves names.
//!
//! ```toml
//! name = "loss"                      # results/<name>/
//! protocols = ["bully", "bully+quorum", "raft+pre_vote"]
//! nodes = [5, 9]
//! scenarios = ["leader-crash", "double-crash"]   # or ["all"]: the whole catalog
//! nets = ["lan", "metro"]
//! seeds = 200
//! first_seed = 0
//!
//! [params]                           # one value: fixed; a list: the sweep ranges over it
//! heartbeat_ms = 50
//! bully.t_elec_ms = 20               # dotted keys are the parameter names
//! "net.loss" = [0, 0.05, 0.1]
//! raft.timeout_ms = ["150-300", "300-600"]
//!
//! [[net]]                            # a custom network profile
//! name = "metro"
//! base = "lan"                       # start from a built-in profile (default lan)
//! latency = "lognormal:3:0.4"
//! loss = 0.01
//!
//! [[scenario]]                       # a custom scenario; times are offsets from the fault
//! name = "double-crash"              # instant fault_at_ms + U[0, fault_jitter_ms]
//! about = "the leader and then the next highest crash"
//! faults = [
//!   { at_ms = 0, action = "crash", node = "leader" },
//!   { at_ms = 400, jitter_ms = 50, action = "crash", node = "highest" },
//! ]
//! ```
//!
//! A distribution may be measured (`latency = "empirical:rtt.csv"`, see [`crate::empirical`]);
//! inside a config file its path is relative to the file's directory. The file is read through
//! [`crate::input`]: a regular file of at most 1 MiB; a syntax error names its line and column
//! and does not show the file's lines. A config written by `election-bench profile` also has a `[profile]` table ([`ProfileSource`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{usage, Error, Result};
use crate::params::toml_scalar;
use crate::scenario::{CustomFault, ScenarioDef};

/// A custom network profile as written.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetDef {
    /// Its name.
    pub name: String,
    /// The built-in profile it starts from (default `lan`).
    pub base: Option<String>,
    /// One line on what it stands for.
    pub about: Option<String>,
    /// Latency distribution (`lognormal:3:0.4`).
    pub latency: Option<String>,
    /// Loss probability.
    pub loss: Option<f64>,
    /// Duplication probability.
    pub duplicate: Option<f64>,
    /// FIFO links.
    pub fifo: Option<bool>,
    /// Per-link latency overrides (one direction each); absent from most configs.
    #[serde(default)]
    pub links: Vec<LinkDef>,
}

/// One link's latency, as written in a `[[net]]` profile's `links`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkDef {
    /// Sender's node id (1..=nodes).
    pub from: u32,
    /// Receiver's node id.
    pub to: u32,
    /// Its latency distribution, instead of the profile's.
    pub latency: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedScenario {
    name: String,
    #[serde(default)]
    about: String,
    faults: Vec<CustomFault>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    name: Option<String>,
    protocols: Option<Vec<String>>,
    nodes: Option<Vec<u32>>,
    scenarios: Option<Vec<String>>,
    nets: Option<Vec<String>>,
    seeds: Option<u64>,
    first_seed: Option<u64>,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    net: Vec<NetDef>,
    #[serde(default)]
    scenario: Vec<NamedScenario>,
    profile: Option<ProfileSource>,
}

/// Where a configuration written by `election-bench profile` came from (its `[profile]`
/// table): the scrapes, their hashes and time span, the cluster's current settings and the
/// leader changes it was seen to make. Sweeps, `run` and `tune` carry it into their manifests
/// and pages; `tune` compares its observed leader-change rate with the simulated one.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileSource {
    /// The command that wrote the configuration.
    pub command: String,
    /// Every scrape read, in the order given.
    pub scrapes: Vec<ScrapeSource>,
    /// Members seen (distinct peer sets of `etcd_network_peer_round_trip_time_seconds`).
    pub members_scraped: u32,
    /// The cluster's current heartbeat interval, ms.
    pub heartbeat_ms: f64,
    /// The cluster's current election timeout, ms.
    pub election_timeout_ms: f64,
    /// Where those two came from: `flags` or `etcd defaults`.
    pub settings_from: String,
    /// The span over which leader changes were counted, seconds (0: not observed).
    pub span_s: f64,
    /// The first and last scrape instants of that span, ms since 1970 (0 when not observed).
    pub span_from_ms: i64,
    /// See `span_from_ms`.
    pub span_to_ms: i64,
    /// Leader changes seen over the span (`etcd_server_leader_changes_seen_total`'s increase).
    pub leader_changes: u64,
    /// Why no leader-change rate was observed, when none was.
    pub no_rate: Option<String>,
    /// The etcd version the members report (`etcd_server_version`'s `server_version` label;
    /// the oldest, when they differ), which chose the profile's rule set; absent when no
    /// scrape has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// Heartbeats the members failed to send over the span
    /// (`etcd_server_heartbeat_send_failures_total`'s increase, summed over members): etcd's
    /// own evidence of a starved leader (a slow disk or CPU), beside the leader changes;
    /// absent when the scrapes do not have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_send_failures: Option<u64>,
}

/// One scrape file a profile was built from.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScrapeSource {
    /// The file as named on the command line.
    pub file: String,
    /// Its SHA-256.
    pub sha256: String,
}

impl ProfileSource {
    /// The observed leader changes per hour and their exact 95 % Poisson interval, when a
    /// span was observed.
    pub fn observed_per_hour(&self) -> Option<(f64, f64, f64)> {
        (self.span_s > 0.0).then(|| {
            let h = self.span_s / 3600.0;
            let (lo, hi) = crate::tune::poisson_ci(self.leader_changes);
            (self.leader_changes as f64 / h, lo / h, hi / h)
        })
    }

    /// The profile as the manifests record it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("serializable")
    }

    /// One line naming the source, for a method section: files, hashes and span.
    pub fn describe(&self) -> String {
        let files = self
            .scrapes
            .iter()
            .map(|s| {
                format!(
                    "`{}` (sha256 `{}`)",
                    s.file,
                    &s.sha256[..s.sha256.len().min(12)]
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let span = if self.span_s > 0.0 {
            format!(
                "{} leader changes over {} h, scraped from {} to {} ms since 1970",
                self.leader_changes,
                crate::results::fmt_ms(self.span_s / 3600.0),
                self.span_from_ms,
                self.span_to_ms
            )
        } else {
            format!(
                "no leader-change rate observed ({})",
                self.no_rate.as_deref().unwrap_or("no time span")
            )
        };
        format!(
            "profile of {} member(s) from {}; {span}; current heartbeat {} ms, election timeout {} ms ({})",
            self.members_scraped,
            files,
            crate::results::fmt_ms(self.heartbeat_ms),
            crate::results::fmt_ms(self.election_timeout_ms),
            self.settings_from
        )
    }
}

/// A sweep (or a single run) as asked for, before checking.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepSpec {
    /// Sweep name.
    pub name: Option<String>,
    /// Protocol specs.
    pub protocols: Option<Vec<String>>,
    /// Cluster sizes.
    pub nodes: Option<Vec<u32>>,
    /// Scenario names (`all`: the catalog).
    pub scenarios: Option<Vec<String>>,
    /// Network profile names.
    pub nets: Option<Vec<String>>,
    /// Number of seeds per cell.
    pub seeds: Option<u64>,
    /// The first seed; cells run seeds `first_seed .. first_seed + seeds`.
    pub first_seed: Option<u64>,
    /// Parameters in the order given: key and raw values (one value: fixed; several: varied).
    pub params: Vec<(String, Vec<String>)>,
    /// Custom network profiles.
    pub custom_nets: Vec<NetDef>,
    /// Custom scenarios, by name.
    pub custom_scenarios: BTreeMap<String, ScenarioDef>,
    /// Where a profile configuration came from (`[profile]`; see [`ProfileSource`]).
    pub profile: Option<ProfileSource>,
}

/// A scenario or network profile name from a configuration: not empty, at most 64
/// characters, and only letters, digits and `. _ + = : -`. A name is a CSV cell, a command-line
/// argument, part of a file name and a table cell and heading in the report; anything else (a
/// `|` cuts a table row, `<` starts HTML, `""` cannot be named on the command line) is refused
/// rather than escaped in every one of them.
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || "._+=:-".contains(c);
    if name.is_empty() || name.len() > 64 || !name.chars().all(ok) {
        return usage!(
            "{what} name {name:?}: a name is 1 to 64 letters, digits and . _ + = : - (it is a \
             CSV cell, a command-line argument and part of file names and report tables)"
        );
    }
    Ok(())
}

impl SweepSpec {
    /// The spec of a command's `--config`: the file's, or the default sweep's without one.
    pub fn from_config(config: Option<&Path>) -> Result<SweepSpec> {
        config.map_or_else(|| Ok(SweepSpec::default()), SweepSpec::from_file)
    }

    /// Read a TOML config file. Syntax errors carry the line and column.
    pub fn from_file(path: &Path) -> Result<SweepSpec> {
        // A config that cannot be read is bad input (exit 2), like a malformed one; it is read
        // through the one bounded reader (a regular file of at most 1 MiB).
        let text = crate::input::read_text(path, crate::input::Kind::Config)
            .map_err(|e| Error::Usage(format!("--config {e}")))?;
        let mut spec = SweepSpec::from_toml(&text).map_err(|e| match e {
            Error::Toml { message, .. } => Error::Toml {
                path: path.to_path_buf(),
                message,
            },
            Error::Usage(m) => Error::Usage(format!("{}: {m}", path.display())),
            other => other,
        })?;
        // `empirical:PATH` inside a config is relative to the config's own directory.
        let dir = path.parent().unwrap_or(Path::new(""));
        for (_, values) in &mut spec.params {
            for v in values.iter_mut() {
                *v = crate::empirical::relative_to(v, dir);
            }
        }
        for n in &mut spec.custom_nets {
            if let Some(l) = &mut n.latency {
                *l = crate::empirical::relative_to(l, dir);
            }
            for link in &mut n.links {
                link.latency = crate::empirical::relative_to(&link.latency, dir);
            }
        }
        Ok(spec)
    }

    /// Parse a TOML config.
    pub fn from_toml(text: &str) -> Result<SweepSpec> {
        Self::from_toml_unchecked(text).and_then(|s| {
            for name in s.custom_scenarios.keys() {
                check_name("scenario", name)?;
            }
            for n in &s.custom_nets {
                check_name("net profile", &n.name)?;
            }
            Ok(s)
        })
    }

    fn from_toml_unchecked(text: &str) -> Result<SweepSpec> {
        let toml_err = |e: toml::de::Error| Error::Toml {
            path: "<config>".into(),
            message: toml_message(text, &e),
        };
        let file: FileConfig = toml::from_str(text).map_err(toml_err)?;
        let mut params = Vec::new();
        flatten_params("", &file.params, &mut params)?;
        let mut custom_scenarios = BTreeMap::new();
        for s in file.scenario {
            if s.name == "all" {
                return usage!(
                    "scenario \"all\": that name means the whole catalog in scenario lists; \
                     choose another"
                );
            }
            let def = ScenarioDef {
                about: s.about,
                faults: s.faults,
            };
            if custom_scenarios.insert(s.name.clone(), def).is_some() {
                return usage!("scenario {:?} is defined twice", s.name);
            }
        }
        let mut names: Vec<&str> = file.net.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return usage!("net profile {:?} is defined twice", w[0]);
        }
        Ok(SweepSpec {
            name: file.name,
            protocols: file.protocols,
            nodes: file.nodes,
            scenarios: file.scenarios,
            nets: file.nets,
            seeds: file.seeds,
            first_seed: file.first_seed,
            params,
            custom_nets: file.net,
            custom_scenarios,
            profile: file.profile,
        })
    }

    /// Apply `--set key=value` / `--set key=v1,v2,...`: replaces whatever the file said
    /// about that key.
    pub fn set(&mut self, assignment: &str) -> Result<()> {
        let Some((key, values)) = split_assignment(assignment) else {
            return usage!(
                "--set {assignment:?}: expected key=value (or key=v1,v2,... to vary it)"
            );
        };
        let key = key.to_string();
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return usage!("--set {assignment:?}: empty value");
        }
        self.params.retain(|(k, _)| *k != key);
        self.params.push((key, values));
        Ok(())
    }

    /// Apply every `--set` of one command line: each replaces what the file said about its
    /// key, but a key given twice on the command line is an error (which one was meant?).
    pub fn set_all(&mut self, assignments: &[String]) -> Result<()> {
        let key = assignment_key;
        for (i, a) in assignments.iter().enumerate() {
            if let Some(first) = assignments[..i].iter().find(|b| key(b) == key(a)) {
                return usage!("--set {} is given twice ({first:?} and {a:?})", key(a));
            }
            self.set(a)?;
        }
        Ok(())
    }
}

/// The parser's error at its line and column, without the excerpt of the file the parser's
/// own message shows: a file named by mistake (`--config /etc/shadow`) must not be printed.
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().trim_end().replace('\n', "; ");
    let Some(span) = e.span() else {
        return what;
    };
    let before = &text.as_bytes()[..span.start.min(text.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = 1 + String::from_utf8_lossy(&before[start..]).chars().count();
    format!("line {line}, column {column}: {what}")
}

/// A `key=value` assignment split at its first `=`, the key and the value trimmed: the one
/// reading of `--set` (a sweep's, which may vary the value, and the live driver's).
fn split_assignment(a: &str) -> Option<(&str, &str)> {
    a.split_once('=').map(|(k, v)| (k.trim(), v.trim()))
}

/// The key of a `key=value` assignment (the whole text, trimmed, if it has no `=`).
pub fn assignment_key(a: &str) -> &str {
    split_assignment(a).map_or(a.trim(), |(k, _)| k)
}

/// `--set key=value` assignments of one value each (the live driver's, which varies nothing),
/// read as [`SweepSpec::set`] reads them.
pub fn key_values(set: &[String]) -> Result<Vec<(String, String)>> {
    set.iter()
        .map(|s| {
            split_assignment(s)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| Error::Usage(format!("--set {s:?}: expected key=value")))
        })
        .collect()
}

/// A command's own `key=value` defaults that `set` does not override, then `set`: what goes to
/// [`SweepSpec::set_all`] for `explore` and `tune`.
pub fn over_defaults(defaults: &[&str], set: &[String]) -> Vec<String> {
    defaults
        .iter()
        .filter(|d| !set.iter().any(|s| assignment_key(s) == assignment_key(d)))
        .map(|s| s.to_string())
        .chain(set.iter().cloned())
        .collect()
}

/// TOML refuses a key given twice in one table, but `bully.t_elec_ms` (a dotted key) and
/// `"bully.t_elec_ms"` (one quoted key) are different TOML keys naming one parameter.
fn push_param(out: &mut Vec<(String, Vec<String>)>, key: String, vals: Vec<String>) -> Result<()> {
    if out.iter().any(|(k, _)| *k == key) {
        return usage!("[params]: parameter {key} is given twice");
    }
    out.push((key, vals));
    Ok(())
}

fn flatten_params(
    prefix: &str,
    table: &toml::Table,
    out: &mut Vec<(String, Vec<String>)>,
) -> Result<()> {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten_params(&key, t, out)?,
            toml::Value::Array(items) => {
                let vals = items
                    .iter()
                    .map(|x| toml_scalar(&key, x))
                    .collect::<Result<Vec<_>>>()?;
                push_param(out, key, vals)?;
            }
            scalar => {
                let v = toml_scalar(&key, scalar)?;
                push_param(out, key, vec![v])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_config_parses() {
        let s = SweepSpec::from_toml(
            r#"
name = "x"
protocols = ["bully", "raft+pre_vote"]
nodes = [3, 5]
seeds = 4
[params]
heartbeat_ms = 40
bully.t_elec_ms = 25
"net.loss" = [0, 0.1]
[[net]]
name = "metro"
latency = "lognormal:3:0.4"
[[scenario]]
name = "double"
faults = [ { at_ms = 0, action = "crash", node = "leader" } ]
"#,
        )
        .unwrap();
        assert_eq!(s.name.as_deref(), Some("x"));
        assert_eq!(s.seeds, Some(4));
        assert!(s
            .params
            .contains(&("bully.t_elec_ms".to_string(), vec!["25".to_string()])));
        assert!(s.params.contains(&(
            "net.loss".to_string(),
            vec!["0".to_string(), "0.1".to_string()]
        )));
        assert_eq!(s.custom_nets[0].name, "metro");
        assert_eq!(s.custom_scenarios["double"].faults.len(), 1);
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = SweepSpec::from_toml("name = \"x\"\nnodes = [3,\n").unwrap_err();
        assert!(e.is_usage());
        let m = e.to_string();
        assert!(m.contains("line") && m.contains("column"), "{m}");
        let e = SweepSpec::from_toml("nodez = [3]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nodez") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn a_key_given_twice_is_an_error() {
        let e = SweepSpec::from_toml("[params]\nbully.t_elec_ms = 20\n\"bully.t_elec_ms\" = 25\n")
            .unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("bully.t_elec_ms is given twice"),
            "{e}"
        );
        // Plain TOML duplicates are the parser's error, with the line.
        let e = SweepSpec::from_toml("seeds = 2\nseeds = 3\n").unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("line 2"), "{e}");
        let mut s = SweepSpec::from_toml("[params]\nheartbeat_ms = 40\n").unwrap();
        // --set overrides the file, once.
        s.set_all(&["heartbeat_ms=30".into(), "net.loss=0,0.1".into()])
            .unwrap();
        assert!(s
            .params
            .contains(&("heartbeat_ms".into(), vec!["30".into()])));
        let e = s
            .set_all(&["net.loss=0.1".into(), " net.loss = 0.2".into()])
            .unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(
            e.to_string().contains("--set net.loss is given twice"),
            "{e}"
        );
    }

    #[test]
    fn a_custom_scenario_may_not_be_called_all() {
        let e = SweepSpec::from_toml(
            "[[scenario]]\nname = \"all\"\nfaults = [ { at_ms = 0, action = \"crash\", node = \"leader\" } ]\n",
        )
        .unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("scenario \"all\""),
            "{e}"
        );
    }

    /// Issue 47: the parser's excerpt showed the file; only the line and column are named.
    #[test]
    fn a_syntax_error_does_not_quote_the_file() {
        let e = SweepSpec::from_toml("seeds = 2\nroot:$6$secret:19000\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2, column "), "{e}");
        assert!(!e.contains("root") && !e.contains("secret"), "{e}");
    }

    /// Issue 47: `--config` read a FIFO, a device or a file of any size as it came.
    #[test]
    fn devices_fifos_directories_and_huge_files_are_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let fifo = crate::input::tests::mkfifo(d.path(), "pipe.toml");
        let big = crate::input::tests::huge(d.path(), "big.toml");
        for (p, why) in [
            (Path::new("/dev/zero"), "is a character device"),
            (fifo.as_path(), "is a FIFO (named pipe)"),
            (d.path(), "is a directory"),
            (big.as_path(), "larger than the limit of 1.0 MiB"),
        ] {
            let e = SweepSpec::from_file(p).unwrap_err();
            assert!(e.is_usage(), "{e}");
            let e = e.to_string();
            assert!(
                e.starts_with(&format!("--config {}: ", p.display())) && e.contains(why),
                "{e}"
            );
        }
    }

    #[test]
    fn an_unreadable_config_is_bad_input() {
        let e = SweepSpec::from_file(Path::new("/nonexistent/sweep.toml")).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(
            e.to_string().contains("--config /nonexistent/sweep.toml"),
            "{e}"
        );
    }

    #[test]
    fn set_replaces_and_varies() {
        let mut s = SweepSpec::default();
        s.set("net.loss=0,0.1").unwrap();
        s.set("net.loss=0.2").unwrap();
        assert_eq!(s.params, vec![("net.loss".into(), vec!["0.2".into()])]);
        assert!(s.set("net.loss").is_err());
        assert!(s.set("net.loss=0,,1").is_err());
    }
}
