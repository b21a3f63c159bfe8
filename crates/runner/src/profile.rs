//! `election-bench profile --from-prometheus FILE...`: a configuration for *your* cluster,
//! built from Prometheus text-format scrapes of a running etcd cluster — a network profile
//! whose one-way latency is the cluster's measured peer round trip halved, a node profile whose
//! stable-storage latency is its measured WAL fsync, the cluster size it runs, its current
//! heartbeat and election timeout, and the leader changes it was seen to make — ready for
//! `run`, `sweep` and `tune --config`.
//!
//! # What it reads
//!
//! | metric (etcd) | kind | becomes |
//! |---|---|---|
//! | `etcd_network_peer_round_trip_time_seconds` | histogram per peer (`To` label) | `net.latency` of the `[[net]]` profile: every member's buckets for every peer, summed, bounds halved (one way = RTT / 2) and in ms: `net_latency_ms.csv`; and, when every member was scraped, each directed link's own latency (`links`: member A's histogram to B, halved, for the link A → B: `link_A_B_ms.csv`; node ids are the etcd member ids in sorted order); its `To` labels tell members apart, but only confirmed peers count (below) |
//! | `etcd_disk_wal_fsync_duration_seconds` | histogram | `node.fsync_ms`: every member's buckets summed, in ms: `wal_fsync_ms.csv`. A Raft node's vote and term must be durable before it answers (the simulator's `persist`), which is what the WAL fsync is |
//! | `etcd_disk_backend_commit_duration_seconds` | histogram | written as `backend_commit_ms.csv` and summarised in the config's comments, not used: bbolt commits run off the Raft path (apply), so they delay no election message. Use it with `--set` if your nodes stall on it |
//! | `etcd_server_leader_changes_seen_total` | counter | the observed leader-change rate (`[profile]`: `leader_changes` over `span_s`) that `tune` compares with the simulated one |
//! | `etcd_network_known_peers`, `etcd_network_active_peers` (`Local`, `Remote`), `etcd_server_id` | gauges | membership: the member's own id, and the peers it knows (etcd 3.6) or is connected to, when the value is above 0 |
//! | `etcd_server_version` (`server_version`) | gauge | the rule set of the config's `protocols`: `etcd@3.4` for 3.4 and older, `etcd@3.5` from 3.5 on (the oldest version when members differ); `[profile]`: `server_version` |
//! | `etcd_server_heartbeat_send_failures_total` | counter | `[profile]`: `heartbeat_send_failures`, its increase over each member's scrapes, summed: etcd's sign of a starved leader, reported beside the leader changes (the noise model does not reproduce it) |
//!
//! Everything else in a scrape is ignored. The cluster's current timing is not in its metrics:
//! `--heartbeat-interval` and `--election-timeout` take it (etcd's flags, in ms); without them
//! the profile records etcd's defaults, 100 and 1000 ms, and says so (`settings_from`).
//!
//! # Scrapes, members and time
//!
//! `--from-prometheus` takes files, or directories whose `*.prom` files are read in name order.
//! Each is read through [`crate::input`]: a regular file of at most 32 MiB (a FIFO, a device or
//! a directory named `*.prom` is refused by name); errors name the file and line, never quote
//! it.
//! A file is Prometheus' text exposition format: a member's `/metrics` as `curl` returns it,
//! or several members' series from Prometheus' `/federate` endpoint. Its samples are grouped
//! into one **member scrape** per `instance` label (one group when there is none). A member is
//! named by its `instance` label, or else by its peer set (the `To` labels of its round-trip
//! histogram: each member of a cluster has a different one).
//!
//! **Members come from what the scrapes say about membership, not from peer labels**: etcd keeps
//! a removed member's round-trip series until it restarts, so a `To` label alone proves
//! nothing. A peer id is a member when it is a scraped member's own id (its `Local` label or
//! `etcd_server_id`, or else the one id of the cluster missing from its `To` labels), when a
//! member's `etcd_network_known_peers` or `etcd_network_active_peers` holds it above 0, or when
//! its round trips grew between the first and the latest scrape of one member (etcd probes every
//! peer every few seconds). The cluster size is the number of such ids, plus any scraped member
//! whose own id is unknown; the round trips of peers not confirmed are left out of the latency
//! and counted in the summary. One scrape of one member without those gauges confirms no peer,
//! and is refused, saying what would.
//!
//! etcd's histograms and counters are per process and cumulative since it started. So: of
//! several scrapes of one member, the **latest** gives its histograms (all it observed), and
//! different members' histograms are **summed** bucket by bucket (their bounds must agree).
//! Leader changes are counted per member, not summed (every member sees the same change): for
//! each member with two or more scrapes with a time, the counter's increase (a decrease is a
//! restart, after which the new value counts) over the time between its first and last scrape;
//! the member with the longest such span gives the rate (ties: the one that saw more changes).
//!
//! A scrape's time is the timestamp of its `etcd_server_leader_changes_seen_total` sample (ms
//! since 1970, as `/federate` writes it), or else a comment line `# scraped_at_ms MS` anywhere
//! in the file. Without times there is no observed rate; the profile says why, and `tune`
//! says that it cannot compare. A plain `curl` scrape gets its time so:
//!
//! ```sh
//! { echo "# scraped_at_ms $(date +%s%3N)"; curl -s http://m1:2379/metrics; } > m1-t0.prom
//! ```
//!
//! # What is assumed
//!
//! * The simulator draws every message's latency independently from its link's distribution
//!   (the pooled one where a link has none): correlation in time (a congested minute) is
//!   averaged away, and a round trip is taken as symmetric (each direction half of it).
//! * A histogram says nothing inside a bucket: draws are uniform between its bounds, and
//!   observations above the largest finite bound are drawn at that bound (a lower bound on the
//!   tail; the config's comments count them).
//! * `noise.profile = none`: the measured distributions carry the cluster's own tails (a slow
//!   fsync is a stall), and nothing in these metrics measures GC pauses or CPU starvation. When
//!   the cluster changes leader more often than this model does, `tune` says so.
//! * The profile's protocol is the system spec of the members' etcd version
//!   (`etcd_server_version`): `etcd@3.4` (CheckQuorum, no PreVote, time in ticks) or `etcd@3.5`
//!   (PreVote too), [`crate::systems`]. Without a version in the scrapes it is our Raft with
//!   etcd 3.5's defaults, `raft+pre_vote+check_quorum` (counting milliseconds), and the
//!   summary says so.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use election_sim::Empirical;

use crate::config::{ProfileSource, ScrapeSource};
use crate::error::{usage, Error, Result};

/// One sample of a text-format exposition.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The metric name (`..._bucket` included).
    pub name: String,
    /// Labels in the order written.
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
    /// The sample's timestamp, ms since 1970.
    pub timestamp_ms: Option<i64>,
    /// Its line (1-based).
    pub line: usize,
}

impl Sample {
    /// The value of label `name`.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A parsed scrape: its samples, and its `# scraped_at_ms` time if it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct Exposition {
    /// Every sample, in file order.
    pub samples: Vec<Sample>,
    /// The `# scraped_at_ms MS` comment's time.
    pub scraped_at_ms: Option<i64>,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn prom_float(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => {
            // Rust also reads "inf" and "infinity"; the format does not write them.
            if s.chars()
                .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            {
                None
            } else {
                s.parse().ok()
            }
        }
    }
}

/// Parse Prometheus' text exposition format (version 0.0.4): `# HELP` / `# TYPE` and other
/// comments are skipped (but `# scraped_at_ms MS` is read); every other non-blank line is
/// `name[{label="value",...}] value [timestamp_ms]`. An error names the file, the line and
/// what was wrong.
pub fn parse_exposition(path: &str, text: &str) -> Result<Exposition> {
    let mut samples = Vec::new();
    let mut scraped_at_ms = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(c) = l.strip_prefix('#') {
            let mut w = c.split_whitespace();
            if w.next() == Some("scraped_at_ms") {
                match w.next().unwrap_or("").parse::<i64>() {
                    Ok(t) if w.next().is_none() => scraped_at_ms = Some(t),
                    _ => {
                        return usage!(
                            "{path}: line {line}: `# scraped_at_ms`: expected one whole number of ms since 1970"
                        )
                    }
                }
            }
            continue;
        }
        samples.push(parse_line(path, line, l)?);
    }
    Ok(Exposition {
        samples,
        scraped_at_ms,
    })
}

fn parse_line(path: &str, line: usize, l: &str) -> Result<Sample> {
    // The line itself is never quoted: a file named by mistake must not be printed.
    let bad = |what: String| -> Result<Sample> { usage!("{path}: line {line}: {what}") };
    let mut chars = l.char_indices().peekable();
    match chars.peek() {
        Some(&(_, c)) if is_name_start(c) => {}
        _ => return bad("expected a metric name".into()),
    }
    let mut end = l.len();
    for (i, c) in chars.by_ref() {
        if !is_name_char(c) {
            end = i;
            break;
        }
    }
    let name = l[..end].to_string();
    let mut rest = &l[end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        let mut r = r;
        loop {
            r = r.trim_start();
            if let Some(after) = r.strip_prefix('}') {
                rest = after;
                break;
            }
            let key_end = r.find(|c: char| !is_name_char(c)).unwrap_or(r.len());
            if key_end == 0 {
                return bad("expected a label name or '}'".into());
            }
            let key = r[..key_end].to_string();
            r = r[key_end..].trim_start();
            let Some(after_eq) = r.strip_prefix('=') else {
                return bad(format!("expected '=' after label {key}"));
            };
            let Some(mut v) = after_eq.trim_start().strip_prefix('"') else {
                return bad(format!("expected a quoted value for label {key}"));
            };
            let mut value = String::new();
            loop {
                let mut it = v.chars();
                match it.next() {
                    None => return bad(format!("label {key}'s value is not closed")),
                    Some('"') => {
                        v = it.as_str();
                        break;
                    }
                    Some('\\') => {
                        match it.next() {
                            Some('n') => value.push('\n'),
                            Some('\\') => value.push('\\'),
                            Some('"') => value.push('"'),
                            _ => return bad(format!("a bad escape in label {key}'s value")),
                        }
                        v = it.as_str();
                    }
                    Some(c) => {
                        value.push(c);
                        v = it.as_str();
                    }
                }
            }
            labels.push((key, value));
            r = v.trim_start();
            if let Some(after) = r.strip_prefix(',') {
                r = after;
            } else if !r.starts_with('}') {
                return bad("expected ',' or '}' after a label".into());
            }
        }
    }
    // A label given twice, found by sorting once: a check per label was quadratic in a line's
    // labels (a 32 MiB line holds millions).
    let mut keys: Vec<&str> = labels.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        return bad(format!("label {} is given twice", w[0]));
    }
    let mut fields = rest.split_whitespace();
    let Some(v) = fields.next() else {
        return bad(format!("no value for {name}"));
    };
    let Some(value) = prom_float(v) else {
        return bad(format!("the value of {name} is not a number"));
    };
    let timestamp_ms = match fields.next() {
        None => None,
        Some(t) => match t.parse::<i64>() {
            Ok(t) => Some(t),
            Err(_) => {
                return bad(format!(
                    "the timestamp of {name} is not a whole number of ms"
                ))
            }
        },
    };
    if fields.next().is_some() {
        return bad(format!(
            "{name}: more after the value and timestamp (expected `name{{labels}} value [timestamp_ms]`)"
        ));
    }
    Ok(Sample {
        name,
        labels,
        value,
        timestamp_ms,
        line,
    })
}

/// The peer round-trip histogram.
pub const PEER_RTT: &str = "etcd_network_peer_round_trip_time_seconds";
/// The WAL fsync histogram.
pub const WAL_FSYNC: &str = "etcd_disk_wal_fsync_duration_seconds";
/// The backend commit histogram.
pub const BACKEND_COMMIT: &str = "etcd_disk_backend_commit_duration_seconds";
/// The leader-change counter.
pub const LEADER_CHANGES: &str = "etcd_server_leader_changes_seen_total";
/// The peers a member knows (etcd 3.6: 1 per member of its configuration, `Local`/`Remote`).
pub const KNOWN_PEERS: &str = "etcd_network_known_peers";
/// The peers a member is connected to (etcd 3.4 and later, `Local`/`Remote`).
pub const ACTIVE_PEERS: &str = "etcd_network_active_peers";
/// The member's own id (`server_id` label, value 1).
pub const SERVER_ID: &str = "etcd_server_id";
/// etcd's version gauge (`server_version` label), which chooses the profile's rule set.
pub const SERVER_VERSION: &str = "etcd_server_version";
/// Heartbeats a leader failed to send (etcd's `etcdserver/raft.go` counts one each time a
/// heartbeat could not be sent on time): the starvation that precedes false elections.
pub const HEARTBEAT_FAILURES: &str = "etcd_server_heartbeat_send_failures_total";

/// A cumulative histogram: finite `(le, count)` buckets by bound, and the `+Inf` count.
///
/// Built in time linear in its buckets (issue 47: a sorted insert per bucket took minutes at
/// 100,000 buckets): samples are appended as read, with their lines, and sorted and checked
/// for a bound given twice once, when the scrape is complete ([`Hist::check`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hist {
    /// Finite buckets, ascending bound (once checked; in file order before).
    pub buckets: Vec<(f64, f64)>,
    /// The `+Inf` bucket (every observation).
    pub total: f64,
    /// The line of each bucket, while read (emptied by the check).
    lines: Vec<usize>,
    /// The line of the `+Inf` bucket, while read.
    total_line: Option<usize>,
}

impl Hist {
    fn insert(&mut self, path: &str, s: &Sample) -> Result<()> {
        let Some(le) = s.label("le") else {
            return usage!("{path}: line {}: {} without an le label", s.line, s.name);
        };
        let Some(bound) = prom_float(le) else {
            return usage!(
                "{path}: line {}: {}'s le label is not a number",
                s.line,
                s.name
            );
        };
        if !(s.value.is_finite() && s.value >= 0.0) {
            return usage!(
                "{path}: line {}: bucket count {}: expected a finite number >= 0",
                s.line,
                s.value
            );
        }
        if bound == f64::INFINITY {
            if let Some(first) = self.total_line {
                return usage!(
                    "{path}: line {}: bucket le=+Inf is given twice (first on line {first})",
                    s.line
                );
            }
            self.total = s.value;
            self.total_line = Some(s.line);
        } else if bound.is_finite() && bound >= 0.0 {
            self.buckets.push((bound, s.value));
            self.lines.push(s.line);
        } else {
            return usage!(
                "{path}: line {}: bucket bound le={le}: expected >= 0",
                s.line
            );
        }
        Ok(())
    }

    /// Sort the buckets read by bound (once: O(k log k) for k buckets), refuse a bound given
    /// twice, naming `path` and both lines; then cumulative counts must not decrease, nor
    /// exceed the `+Inf` bucket (when there is one).
    fn check(&mut self, path: &str, what: &str) -> Result<()> {
        if !self.lines.is_empty() {
            let mut order: Vec<usize> = (0..self.buckets.len()).collect();
            // Stable: of two equal bounds, the one read first comes first.
            order.sort_by(|&a, &b| self.buckets[a].0.total_cmp(&self.buckets[b].0));
            for w in order.windows(2) {
                if self.buckets[w[0]].0 == self.buckets[w[1]].0 {
                    return usage!(
                        "{path}: line {}: bucket le={} is given twice (first on line {})",
                        self.lines[w[1]],
                        self.buckets[w[1]].0,
                        self.lines[w[0]]
                    );
                }
            }
            self.buckets = order.iter().map(|&i| self.buckets[i]).collect();
            self.lines = Vec::new();
        }
        self.total_line = None;
        let mut prev = (0.0, 0.0);
        for &(le, c) in &self.buckets {
            if c < prev.1 {
                return usage!(
                    "{what}: bucket le={le} counts {c}, fewer than le={} ({}): cumulative counts must not decrease",
                    prev.0,
                    prev.1
                );
            }
            prev = (le, c);
        }
        if self.total > 0.0 && self.total < prev.1 {
            return usage!(
                "{what}: bucket le=+Inf counts {}, fewer than le={} ({})",
                self.total,
                prev.0,
                prev.1
            );
        }
        if self.total == 0.0 && prev.1 > 0.0 {
            return usage!("{what}: no le=\"+Inf\" bucket (the count of every observation)");
        }
        Ok(())
    }

    /// Add `other` bucket by bucket (the bounds must be the same).
    fn add(&mut self, other: &Hist, what: &str) -> Result<()> {
        if other.buckets.is_empty() && other.total == 0.0 {
            return Ok(()); // a member without this metric adds nothing
        }
        if self.buckets.is_empty() && self.total == 0.0 {
            *self = other.clone();
            return Ok(());
        }
        let differ = (self.buckets.len() != other.buckets.len())
            .then_some(self.buckets.len().min(other.buckets.len()))
            .or_else(|| (self.buckets.iter().zip(&other.buckets)).position(|(a, b)| a.0 != b.0));
        if let Some(i) = differ {
            let le = |h: &Hist| {
                h.buckets
                    .get(i)
                    .map_or("none".to_string(), |b| b.0.to_string())
            };
            return usage!(
                "{what}: the bucket bounds differ between scrapes ({} and {} buckets; bucket {} is le={} in one and le={} in the other); histograms can only be summed over the same buckets",
                self.buckets.len(),
                other.buckets.len(),
                i + 1,
                le(self),
                le(other)
            );
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            a.1 += b.1;
        }
        self.total += other.total;
        Ok(())
    }

    /// The same histogram with every bound multiplied by `k`.
    fn scaled(&self, k: f64) -> Hist {
        Hist {
            buckets: self
                .buckets
                .iter()
                .map(|&(b, c)| (sig9(b * k), c))
                .collect(),
            total: self.total,
            ..Hist::default()
        }
    }

    /// The `le,count` file `empirical:` reads, after a comment header.
    fn file_text(&self, header: &str) -> String {
        let mut s = String::new();
        for l in header.lines() {
            let _ = writeln!(s, "# {l}");
        }
        s.push_str("le,count\n");
        for &(b, c) in &self.buckets {
            let _ = writeln!(s, "{b},{c}");
        }
        let _ = writeln!(s, "+Inf,{}", self.total);
        s
    }
}

/// `v` rounded to 9 significant digits (a bound in seconds times 500 prints as the decimal it
/// stands for, not `0.05000000000000001`).
fn sig9(v: f64) -> f64 {
    format!("{v:.8e}").parse().unwrap_or(v)
}

/// One member's metrics in one file.
#[derive(Clone, Debug, Default)]
struct MemberScrape {
    file: usize,
    instance: Option<String>,
    rtt: BTreeMap<String, Hist>,
    fsync: Hist,
    backend: Hist,
    leader_changes: Option<f64>,
    /// `etcd_server_version`'s `server_version`.
    version: Option<String>,
    /// `etcd_server_heartbeat_send_failures_total`.
    heartbeat_failures: Option<f64>,
    time_ms: Option<i64>,
    /// The member's own etcd id: the `Local` label of its peer gauges, or `etcd_server_id`.
    local: Option<String>,
    /// `etcd_network_known_peers`' remotes with a value above 0 (etcd 3.6), when scraped.
    known: Option<BTreeSet<String>>,
    /// `etcd_network_active_peers`' remotes with a value above 0 (connected now).
    active: BTreeSet<String>,
}

impl MemberScrape {
    fn key(&self) -> Option<String> {
        match (&self.instance, &self.local) {
            (Some(i), _) => Some(format!("instance {i}")),
            _ if !self.rtt.is_empty() => Some(format!(
                "peers {}",
                self.rtt.keys().cloned().collect::<Vec<_>>().join(",")
            )),
            // A freshly restarted member has no round trips yet; its own id still names it.
            (None, Some(id)) => Some(format!("member {id}")),
            (None, None) => None,
        }
    }
}

/// What `profile` is asked.
#[derive(Clone, Debug)]
pub struct ProfileOptions {
    /// The scrape files, in order (a directory: its `*.prom` files, by name).
    pub files: Vec<PathBuf>,
    /// The configuration to write; the distribution files go next to it.
    pub out: PathBuf,
    /// The profile's (and its network's) name.
    pub name: String,
    /// `--heartbeat-interval`, ms.
    pub heartbeat_ms: Option<f64>,
    /// `--election-timeout`, ms.
    pub election_timeout_ms: Option<f64>,
    /// `--pre-vote`, when given: the cluster's own flag, over its version's default.
    pub pre_vote: Option<bool>,
    /// The command line, recorded in `[profile]`.
    pub command: String,
}

/// What `profile` wrote.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The configuration's path.
    pub config: PathBuf,
    /// The distribution files written next to it.
    pub files: Vec<PathBuf>,
    /// The source as recorded in `[profile]`.
    pub source: ProfileSource,
    /// Cluster size.
    pub nodes: u32,
    /// One line per distribution: name, median, p99.
    pub summary: Vec<String>,
}

/// etcd's default `--heartbeat-interval`, ms (`server/embed/config.go`, `TickMs`).
pub const ETCD_HEARTBEAT_MS: f64 = 100.0;
/// etcd's default `--election-timeout`, ms (`server/embed/config.go`, `ElectionMs`).
pub const ETCD_ELECTION_MS: f64 = 1000.0;

/// The scrape files named: a file as is; a directory, every `*.prom` entry in it, by name.
/// Each is read through [`crate::input`], which refuses what is not a regular file (a FIFO
/// named `x.prom` is refused by name, not skipped).
pub fn scrape_files(named: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in named {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Error::io("cannot list scrape directory", p, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "prom"))
                .collect();
            if v.is_empty() {
                return usage!(
                    "--from-prometheus {}: no *.prom file in this directory",
                    p.display()
                );
            }
            v.sort();
            out.extend(v);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The scrape files' sources, the member scrapes read from them, and the files left out: a
/// member with no round-trip histogram and nothing else that names it (a member freshly
/// restarted has no `To` series until it first probes its peers) cannot be told apart from
/// the others, so its scrape is set aside and the profile says so.
#[allow(clippy::type_complexity)]
fn read_member_scrapes(
    files: &[PathBuf],
) -> Result<(Vec<ScrapeSource>, Vec<MemberScrape>, Vec<String>)> {
    let mut sources = Vec::new();
    let mut scrapes: Vec<MemberScrape> = Vec::new();
    let mut left_out = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let path = f.display().to_string();
        let bytes = crate::input::read(f, crate::input::Kind::Scrape)?;
        sources.push(ScrapeSource {
            file: path.clone(),
            sha256: crate::empirical::sha256_hex(&bytes),
        });
        let text = crate::input::text(f, crate::input::Kind::Scrape, bytes)?;
        let exp = parse_exposition(&path, &text)?;
        let mut groups: BTreeMap<Option<String>, MemberScrape> = BTreeMap::new();
        for s in &exp.samples {
            let instance = s.label("instance").map(str::to_string);
            let g = groups
                .entry(instance.clone())
                .or_insert_with(|| MemberScrape {
                    file: fi,
                    instance,
                    time_ms: exp.scraped_at_ms,
                    ..Default::default()
                });
            let hist = |base: &str| s.name.strip_suffix("_bucket") == Some(base);
            if hist(PEER_RTT) {
                let Some(to) = s.label("To") else {
                    return usage!(
                        "{path}: line {}: {PEER_RTT}_bucket without a To label",
                        s.line
                    );
                };
                g.rtt.entry(to.to_string()).or_default().insert(&path, s)?;
            } else if hist(WAL_FSYNC) {
                g.fsync.insert(&path, s)?;
            } else if hist(BACKEND_COMMIT) {
                g.backend.insert(&path, s)?;
            } else if s.name == KNOWN_PEERS || s.name == ACTIVE_PEERS || s.name == SERVER_ID {
                let (local, remote) = if s.name == SERVER_ID {
                    (s.label("server_id"), None)
                } else {
                    let (Some(l), Some(r)) = (s.label("Local"), s.label("Remote")) else {
                        return usage!(
                            "{path}: line {}: {} without its Local and Remote labels",
                            s.line,
                            s.name
                        );
                    };
                    (Some(l), Some(r))
                };
                let Some(local) = local.filter(|_| s.value > 0.0 || remote.is_some()) else {
                    continue;
                };
                match &g.local {
                    Some(l) if l != local => {
                        return usage!(
                            "{path}: line {}: {} names member {local}, but this member is {l}",
                            s.line,
                            s.name
                        );
                    }
                    _ => g.local = Some(local.to_string()),
                }
                if s.name == KNOWN_PEERS {
                    let known = g.known.get_or_insert_with(BTreeSet::new);
                    if s.value > 0.0 {
                        known.extend(remote.map(str::to_string));
                    }
                } else if s.name == ACTIVE_PEERS && s.value > 0.0 {
                    g.active.extend(remote.map(str::to_string));
                }
            } else if s.name == SERVER_VERSION {
                g.version = s.label("server_version").map(str::to_string);
            } else if s.name == HEARTBEAT_FAILURES {
                if !(s.value.is_finite() && s.value >= 0.0) {
                    return usage!(
                        "{path}: line {}: {HEARTBEAT_FAILURES} = {}: a counter is a finite number >= 0",
                        s.line,
                        s.value
                    );
                }
                g.heartbeat_failures = Some(s.value);
            } else if s.name == LEADER_CHANGES {
                if g.leader_changes.is_some() {
                    return usage!(
                        "{path}: line {}: {LEADER_CHANGES} is given twice for one member",
                        s.line
                    );
                }
                if !(s.value.is_finite() && s.value >= 0.0) {
                    return usage!(
                        "{path}: line {}: {LEADER_CHANGES} = {}: a counter is a finite number >= 0",
                        s.line,
                        s.value
                    );
                }
                g.leader_changes = Some(s.value);
                if s.timestamp_ms.is_some() {
                    g.time_ms = s.timestamp_ms;
                }
            }
        }
        let before = scrapes.len();
        for g in groups.into_values() {
            let who = g
                .instance
                .as_ref()
                .map_or(String::new(), |i| format!("{{instance=\"{i}\"}}"));
            let mut g = g;
            for (to, h) in &mut g.rtt {
                h.check(&path, &format!("{path}: {PEER_RTT}{who} To=\"{to}\""))?;
            }
            g.fsync.check(&path, &format!("{path}: {WAL_FSYNC}{who}"))?;
            g.backend
                .check(&path, &format!("{path}: {BACKEND_COMMIT}{who}"))?;
            let empty = |h: &Hist| h.buckets.is_empty() && h.total == 0.0;
            if g.rtt.is_empty()
                && empty(&g.fsync)
                && empty(&g.backend)
                && g.leader_changes.is_none()
            {
                // Another target's series in a /federate dump: not an etcd member.
                continue;
            }
            if g.key().is_none() {
                left_out.push(path.clone());
                continue;
            }
            scrapes.push(g);
        }
        if scrapes.len() == before && left_out.last() != Some(&path) {
            return usage!(
                "{path}: no etcd member's samples (none of {PEER_RTT}, {WAL_FSYNC}, {BACKEND_COMMIT}, {LEADER_CHANGES})"
            );
        }
    }
    if scrapes.is_empty() {
        if let Some(path) = left_out.first() {
            return usage!(
                "{path}: no {PEER_RTT} histogram, no instance label and no etcd_server_id: cannot tell which member this is (is it an etcd member's /metrics, of a cluster of 2 or more?)"
            );
        }
    }
    Ok((sources, scrapes, left_out))
}

/// A counter's increase over a member's timed scrapes (a decrease is a restart: the counter
/// began again from zero), with the first and last instants; `None` with fewer than two.
fn counter_increase(
    scrapes: &[&MemberScrape],
    value: impl Fn(&MemberScrape) -> Option<f64>,
) -> Option<(f64, i64, i64)> {
    let mut timed: Vec<(i64, f64)> = scrapes
        .iter()
        .filter_map(|s| Some((s.time_ms?, value(s)?)))
        .collect();
    timed.sort_by_key(|t| t.0);
    if timed.len() < 2 {
        return None;
    }
    let mut inc = 0.0;
    for w in timed.windows(2) {
        inc += if w[1].1 >= w[0].1 {
            w[1].1 - w[0].1
        } else {
            w[1].1
        };
    }
    Some((inc, timed[0].0, timed[timed.len() - 1].0))
}

/// The heartbeats the members failed to send, summed over every member's timed scrapes;
/// `None` when no member has two timed scrapes with the counter.
fn heartbeat_send_failures(members: &BTreeMap<String, Vec<&MemberScrape>>) -> Option<u64> {
    let incs: Vec<f64> = members
        .values()
        .filter_map(|v| Some(counter_increase(v, |s| s.heartbeat_failures)?.0))
        .collect();
    (!incs.is_empty()).then(|| incs.iter().sum::<f64>().round() as u64)
}

/// The rule set of the members' etcd version: `etcd@3.4` for 3.4 and older (PreVote off by
/// default: etcd 3.4 `embed/config.go` NewConfig), `etcd@3.5` from 3.5 on (PreVote on by
/// default), both counting time in ticks ([`crate::systems`]); with no version scraped, our
/// Raft with etcd 3.5's defaults (`raft+pre_vote+check_quorum`, counting milliseconds), as
/// before versions were read. Returns the spec, the version it read (the oldest, when the
/// members differ: a rolling upgrade runs the old rules until it ends) and a line for the
/// summary.
///
/// `pre_vote`, the cluster's `--pre-vote` when given, wins over the version's default: the
/// spec then carries it as an option (`etcd@3.4+pre_vote`, `etcd@3.5+pre_vote=false`).
fn rule_set(
    members: &BTreeMap<String, Vec<&MemberScrape>>,
    pre_vote: Option<bool>,
) -> (String, Option<String>, String) {
    let parse = |v: &str| -> Option<(u32, u32)> {
        let mut it = v.trim_start_matches('v').split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    let mut versions: Vec<(u32, u32, String)> = members
        .values()
        .flatten()
        .filter_map(|s| {
            let v = s.version.as_deref()?;
            let (a, b) = parse(v)?;
            Some((a, b, v.to_string()))
        })
        .collect();
    versions.sort();
    versions.dedup();
    let Some((major, minor, oldest)) = versions.first().cloned() else {
        let spec = if pre_vote == Some(false) {
            "raft+check_quorum"
        } else {
            "raft+pre_vote+check_quorum"
        };
        return (
            spec.to_string(),
            None,
            format!("no {SERVER_VERSION} in the scrapes: our Raft with etcd's CheckQuorum and {} PreVote, {spec}; scrape etcd_server_version to run the system's own rule set", if pre_vote == Some(false) { "without (--pre-vote false)" } else { "etcd 3.5's default" }),
        );
    };
    let (system, default_pre_vote) = if (major, minor) <= (3, 4) {
        ("etcd@3.4", false)
    } else {
        ("etcd@3.5", true)
    };
    let spec = match pre_vote {
        Some(true) if !default_pre_vote => format!("{system}+pre_vote"),
        Some(false) if default_pre_vote => format!("{system}+pre_vote=false"),
        _ => system.to_string(),
    };
    let flag = match pre_vote {
        Some(p) if p != default_pre_vote => {
            format!(" with --pre-vote {p} (its default: {default_pre_vote})")
        }
        _ => String::new(),
    };

    let mixed = if versions.len() > 1 {
        let all: Vec<&str> = versions.iter().map(|v| v.2.as_str()).collect();
        format!(
            " (members run {}: a rolling upgrade keeps the oldest's rules until it ends)",
            all.join(", ")
        )
    } else {
        String::new()
    };
    let line =
        format!("etcd {oldest}{mixed}{flag}: the rule set {spec} (crates/runner/src/systems.rs)");
    (spec, Some(oldest.clone()), line)
}

/// The observed leader changes: (changes, span ms, from, to), or why there are none.
fn leader_change_rate(
    members: &BTreeMap<String, Vec<&MemberScrape>>,
) -> std::result::Result<(u64, i64, i64, i64), String> {
    let mut best: Option<(i64, u64, i64, i64)> = None;
    for scrapes in members.values() {
        let Some((inc, from, to)) = counter_increase(scrapes, |s| s.leader_changes) else {
            continue;
        };
        let cand = (to - from, inc.round() as u64, from, to);
        if best.is_none_or(|b| (cand.0, cand.1) > (b.0, b.1)) {
            best = Some(cand);
        }
    }
    match best {
        Some((span, k, from, to)) if span > 0 => Ok((k, span, from, to)),
        Some(_) => Err("every member's timed scrapes were taken at the same instant".into()),
        None => Err(format!(
            "no member has two scrapes with a time ({LEADER_CHANGES} with a sample timestamp, or a `# scraped_at_ms` line)"
        )),
    }
}

/// Build the profile (see the module docs) and write it: the configuration at `o.out` and
/// the distribution files next to it, each atomically.
pub fn profile(o: &ProfileOptions) -> Result<Profile> {
    if o.files.is_empty() {
        return usage!("--from-prometheus: give at least one scrape file");
    }
    crate::config::check_name("profile", &o.name)?;
    if crate::net::BUILTIN_NETS.contains(&o.name.as_str()) {
        return usage!(
            "--name {}: a built-in network profile has that name",
            o.name
        );
    }
    for (flag, v) in [
        ("--heartbeat-interval", o.heartbeat_ms),
        ("--election-timeout", o.election_timeout_ms),
    ] {
        if let Some(v) = v {
            if !(v.is_finite() && (1.0..=1e7).contains(&v)) {
                return usage!("{flag} {v}: expected whole milliseconds from 1 (as etcd's flag)");
            }
        }
    }
    let heartbeat_ms = o.heartbeat_ms.unwrap_or(ETCD_HEARTBEAT_MS);
    let election_ms = o.election_timeout_ms.unwrap_or(ETCD_ELECTION_MS);
    if election_ms < 5.0 * heartbeat_ms {
        return usage!(
            "--election-timeout {election_ms}: etcd refuses an election timeout under 5 heartbeat intervals ({} ms)",
            5.0 * heartbeat_ms
        );
    }
    let settings_from = match (o.heartbeat_ms, o.election_timeout_ms) {
        (Some(_), Some(_)) => "flags",
        (None, None) => "etcd defaults (no --heartbeat-interval or --election-timeout given)",
        _ => "flags, and etcd's default for the one not given",
    }
    .to_string();

    let (sources, scrapes, left_out) = read_member_scrapes(&scrape_files(&o.files)?)?;
    let mut members: BTreeMap<String, Vec<&MemberScrape>> = BTreeMap::new();
    for s in &scrapes {
        members
            .entry(s.key().expect("checked"))
            .or_default()
            .push(s);
    }
    // The latest scrape of each member holds everything it observed.
    let latest = |v: &Vec<&MemberScrape>| -> MemberScrape {
        let mut v = v.clone();
        v.sort_by_key(|s| (s.time_ms.unwrap_or(i64::MIN), s.file));
        (*v[v.len() - 1]).clone()
    };
    let (mut rtt, mut fsync, mut backend) = (Hist::default(), Hist::default(), Hist::default());
    let membership = membership(&members);
    let mut latest_all: Vec<MemberScrape> = members.values().map(latest).collect();
    for m in &mut latest_all {
        // A removed member's round-trip series stays in etcd's metrics until it restarts: only
        // the peers the scrapes confirm as members count, for the latency as for the size.
        m.rtt.retain(|to, _| membership.confirmed.contains(to));
    }
    for m in &latest_all {
        let file = &sources[m.file].file;
        for (to, h) in &m.rtt {
            rtt.add(h, &format!("{file}: {PEER_RTT}{{To=\"{to}\"}}"))?;
        }
        fsync.add(&m.fsync, &format!("{file}: {WAL_FSYNC}"))?;
        backend.add(&m.backend, &format!("{file}: {BACKEND_COMMIT}"))?;
    }
    if rtt.total <= 0.0 && !membership.unconfirmed.is_empty() {
        return usage!(
            "{PEER_RTT}: none of the {} peers named by its To labels is confirmed as a current member. etcd keeps a removed member's series until it restarts, so a peer counts only when the scrapes say it is a member: {MEMBERSHIP_EVIDENCE}",
            membership.unconfirmed.len()
        );
    }
    if rtt.total <= 0.0 {
        return usage!(
            "{PEER_RTT}: no observations in any scrape (the cluster needs 2 or more members that have exchanged messages)"
        );
    }
    let nodes = membership.size as u32;
    let per_link = link_histograms(&latest_all, &membership);
    let rate = leader_change_rate(&members);
    let (protocol, version, rule_line) = rule_set(&members, o.pre_vote);
    let (leader_changes, span_ms, from, to, no_rate) = match &rate {
        Ok((k, span, from, to)) => (*k, *span, *from, *to, None),
        Err(why) => (0, 0, 0, 0, Some(why.clone())),
    };
    let source = ProfileSource {
        command: o.command.clone(),
        scrapes: sources,
        members_scraped: members.len() as u32,
        heartbeat_ms,
        election_timeout_ms: election_ms,
        settings_from,
        span_s: span_ms as f64 / 1000.0,
        span_from_ms: from,
        span_to_ms: to,
        leader_changes,
        no_rate,
        server_version: version,
        heartbeat_send_failures: heartbeat_send_failures(&members),
    };

    let dir = o.out.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut written = Vec::new();
    let mut summary = Vec::new();
    for path in &left_out {
        summary.push(format!(
            "{path}: left out: no {PEER_RTT} histogram yet (a member freshly restarted has none until it first probes its peers), and no instance label or etcd_server_id to say which member it is; the profile uses the other {} scrape(s)",
            scrapes.len()
        ));
    }
    if !membership.unconfirmed.is_empty() {
        let k = membership.unconfirmed.len();
        let some: Vec<&str> = membership
            .unconfirmed
            .iter()
            .take(5)
            .map(String::as_str)
            .collect();
        summary.push(format!(
            "ignored {k} peer id(s) of {PEER_RTT}'s To labels that no scrape confirms as a member (a removed member's series stays until etcd restarts): {}{}",
            some.join(", "),
            if k > some.len() { ", ..." } else { "" }
        ));
    }
    let mut write_hist = |file: &str, h: &Hist, header: &str| -> Result<Option<Empirical>> {
        if h.total <= 0.0 {
            return Ok(None);
        }
        let text = h.file_text(header);
        let path = dir.join(file);
        let sha = crate::empirical::sha256_hex(text.as_bytes());
        let e = Empirical::from_buckets(file, sha, &h.buckets, h.total)
            .map_err(|e| Error::Usage(format!("{file}: {e}")))?;
        crate::files::write_atomic(&path, text.as_bytes())?;
        written.push(path);
        summary.push(format!(
            "{file}: {} observations, median {} ms, p99 {} ms{}",
            h.total,
            crate::results::fmt_ms(e.quantile(0.5)),
            crate::results::fmt_ms(e.quantile(0.99)),
            if e.overflow() > 0.0 {
                format!(", {} above the largest bucket (drawn at it)", e.overflow())
            } else {
                String::new()
            }
        ));
        Ok(Some(e))
    };
    if !dir.as_os_str().is_empty() {
        crate::files::prepare_dir(&dir)?;
    }
    let n_members = members.len();
    let lat = write_hist(
        "net_latency_ms.csv",
        &rtt.scaled(500.0),
        &format!(
            "One-way message latency, ms: {PEER_RTT} halved (RTT / 2),\nsummed over {n_members} member(s)' histograms for every peer. Written by election-bench profile."
        ),
    )?
    .expect("observations checked");
    let fs = write_hist(
        "wal_fsync_ms.csv",
        &fsync.scaled(1000.0),
        &format!("WAL fsync latency, ms: {WAL_FSYNC},\nsummed over {n_members} member(s). Written by election-bench profile."),
    )?;
    let bc = write_hist(
        "backend_commit_ms.csv",
        &backend.scaled(1000.0),
        &format!("Backend (bbolt) commit latency, ms: {BACKEND_COMMIT},\nsummed over {n_members} member(s); not used by the profile (off the Raft path). Written by election-bench profile."),
    )?;
    let mut links = Vec::new();
    let link_note = match per_link {
        Ok((ids, hists)) => {
            for ((from, to), h) in &hists {
                let file = format!("link_{from}_{to}_ms.csv");
                let (a, b) = (&ids[*from as usize - 1], &ids[*to as usize - 1]);
                let e = write_hist(
                    &file,
                    &h.scaled(500.0),
                    &format!(
                        "One-way latency from node {from} (etcd member {a}) to node {to} (member {b}), ms:\n{PEER_RTT}{{To=\"{b}\"}} of member {a}, halved. Written by election-bench profile."
                    ),
                )?;
                if let Some(e) = e {
                    links.push((*from, *to, e));
                }
            }
            ids.iter()
                .enumerate()
                .map(|(i, id)| format!("node {} = etcd member {id}", i + 1))
                .collect::<Vec<_>>()
                .join(", ")
        }
        Err(why) => format!("no per-link latencies: {why}"),
    };
    summary.push(rule_line);
    if let Some(k) = source.heartbeat_send_failures {
        summary.push(format!(
            "{HEARTBEAT_FAILURES}: {k} heartbeats not sent on time over the scrapes, summed over members (etcd's sign of a starved leader: a slow disk or CPU; the profile's noise model does not reproduce it)"
        ));
    }
    let toml = config_text(
        o,
        &protocol,
        &source,
        nodes,
        &lat,
        fs.as_ref(),
        bc.as_ref(),
        &summary,
        &links,
        &link_note,
    );
    crate::files::write_atomic(&o.out, toml.as_bytes())?;
    Ok(Profile {
        config: o.out.clone(),
        files: written,
        source,
        nodes,
        summary,
    })
}

/// Per directed link, the round-trip histogram its sender measured: node ids are the etcd
/// member ids in sorted order (1-based). Every member of the cluster must have been scraped,
/// with its own id known ([`Membership`]); otherwise why not.
#[allow(clippy::type_complexity)]
fn link_histograms(
    latest: &[MemberScrape],
    membership: &Membership,
) -> std::result::Result<(Vec<String>, BTreeMap<(u32, u32), Hist>), String> {
    let ids: Vec<String> = membership.confirmed.iter().cloned().collect();
    let index: BTreeMap<&str, u32> = (ids.iter().enumerate())
        .map(|(i, id)| (id.as_str(), i as u32 + 1))
        .collect();
    let node = |id: &str| index.get(id).copied();
    let owns: BTreeSet<&String> = membership.own.iter().flatten().collect();
    if membership.own.iter().any(Option::is_none) || owns.len() != ids.len() {
        return Err(format!(
            "{} member scrape(s) for a cluster of {} members: per-peer latency needs a scrape of every member, to tell whose histogram is whose",
            latest.len(),
            membership.size
        ));
    }
    let mut out = BTreeMap::new();
    for (m, own) in latest.iter().zip(&membership.own) {
        let from = node(own.as_deref().expect("checked")).expect("a member");
        for (to, h) in &m.rtt {
            out.insert((from, node(to).expect("a confirmed member")), h.clone());
        }
    }
    Ok((ids, out))
}

/// Where a peer's membership may come from, for the error when none is confirmed.
const MEMBERSHIP_EVIDENCE: &str = "a scraped member's own id (scrape every member, or include etcd_server_id), a peer in etcd_network_known_peers or etcd_network_active_peers, or a peer whose round trips grew between two scrapes of one member (etcd probes every peer every few seconds)";

/// The cluster's members as the scrapes say (issue 47: counting every `To` label made 200
/// removed members' stale series a cluster of 203).
#[derive(Debug, Default)]
struct Membership {
    /// The etcd ids confirmed as current members.
    confirmed: BTreeSet<String>,
    /// Each scraped member's own id, in the members' order, when known.
    own: Vec<Option<String>>,
    /// Peer ids named only by round-trip `To` labels.
    unconfirmed: BTreeSet<String>,
    /// The cluster size: the confirmed ids, plus the scraped members whose id is unknown.
    size: usize,
}

/// Which peers are members (see the module docs): evidence, not labels. A peer id is confirmed
/// by `etcd_network_known_peers` or `etcd_network_active_peers` above 0, by being a scraped
/// member's own id (`Local`, `etcd_server_id`, or the one id of the cluster missing from that
/// member's `To` labels), or by round trips that grew between the first and the latest scrape
/// of one member.
fn membership(members: &BTreeMap<String, Vec<&MemberScrape>>) -> Membership {
    let sorted: Vec<Vec<&MemberScrape>> = members
        .values()
        .map(|v| {
            let mut v = v.clone();
            v.sort_by_key(|s| (s.time_ms.unwrap_or(i64::MIN), s.file));
            v
        })
        .collect();
    let labels: BTreeSet<&String> = sorted
        .iter()
        .flat_map(|v| v[v.len() - 1].rtt.keys())
        .collect();
    let mut evidence: BTreeSet<String> = BTreeSet::new();
    for v in &sorted {
        let (first, last) = (v[0], v[v.len() - 1]);
        evidence.extend(last.known.iter().flatten().cloned());
        evidence.extend(last.active.iter().cloned());
        evidence.extend(last.local.iter().cloned());
        if v.len() >= 2 {
            for (to, h) in &last.rtt {
                // Grown, or reset by a restart (after which every series is current).
                if first.rtt.get(to).is_none_or(|f| f.total != h.total) {
                    evidence.insert(to.clone());
                }
            }
        }
    }
    let own: Vec<Option<String>> = sorted
        .iter()
        .map(|v| {
            let last = v[v.len() - 1];
            if let Some(l) = &last.local {
                return Some(l.clone());
            }
            // The ids of the cluster missing from this member's peers: its own, when there is
            // one; else the one of them confirmed otherwise. Each search stops at a second
            // candidate.
            let missing = |of: &mut dyn Iterator<Item = &String>| {
                let mut c = of.filter(|id| !last.rtt.contains_key(*id));
                match (c.next(), c.next()) {
                    (Some(id), None) => Some(id.clone()),
                    _ => None,
                }
            };
            if labels.len() == last.rtt.len() + 1 {
                missing(&mut labels.iter().copied())
            } else {
                missing(&mut evidence.iter().filter(|id| labels.contains(id)))
            }
        })
        .collect();
    let mut confirmed = evidence;
    confirmed.extend(own.iter().flatten().cloned());
    let unconfirmed = labels
        .into_iter()
        .filter(|id| !confirmed.contains(*id))
        .cloned()
        .collect();
    let size = confirmed.len() + own.iter().filter(|o| o.is_none()).count();
    Membership {
        confirmed,
        own,
        unconfirmed,
        size,
    }
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[allow(clippy::too_many_arguments)]
fn config_text(
    o: &ProfileOptions,
    protocol: &str,
    src: &ProfileSource,
    nodes: u32,
    lat: &Empirical,
    fsync: Option<&Empirical>,
    backend: Option<&Empirical>,
    summary: &[String],
    links: &[(u32, u32, Empirical)],
    link_note: &str,
) -> String {
    let f = crate::results::fmt_ms;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# A profile of an etcd cluster, written by `election-bench profile` from Prometheus scrapes\n# (crates/runner/src/profile.rs documents every metric read and every assumption).\n# Use it with `election-bench run|sweep|tune --config {}`. The empirical: files are\n# relative to this file's directory.\n#",
        o.out.display()
    );
    for l in summary {
        let _ = writeln!(s, "# {l}");
    }
    if fsync.is_none() {
        let _ = writeln!(
            s,
            "# No {WAL_FSYNC} observations: node.fsync_ms keeps the server default."
        );
    }
    let _ = writeln!(s, "\nname = {}", toml_str(&o.name));
    let _ = writeln!(
        s,
        "# The rule set of the members' etcd version ({}): etcd runs CheckQuorum always and\n# PreVote by default since 3.5; etcd@3.4 and etcd@3.5 count time in ticks as etcd does.\nprotocols = [{}]",
        src.server_version.as_deref().unwrap_or("not scraped: etcd 3.5's defaults, in our model"),
        toml_str(protocol)
    );
    let _ = writeln!(s, "nodes = [{nodes}]");
    let _ = writeln!(s, "nets = [{}]", toml_str(&o.name));
    s.push_str("scenarios = [\"leader-crash\", \"steady-noise\"]\nseeds = 20\n\n");
    let (hb, el) = (src.heartbeat_ms, src.election_timeout_ms);
    let _ = writeln!(
        s,
        "# The cluster's current timing ({}): etcd draws each election timeout in\n# [E, 2E), as raft.timeout_ms = E-2E.\n[params]",
        src.settings_from
    );
    let _ = writeln!(s, "heartbeat_ms = {}", f(hb));
    let _ = writeln!(s, "detect_timeout_ms = {}", f(el));
    let _ = writeln!(s, "detect_jitter_ms = {}", f(el));
    let _ = writeln!(s, "\"raft.timeout_ms\" = \"{}-{}\"", f(el), f(2.0 * el));
    if let Some(e) = fsync {
        let _ = writeln!(
            s,
            "\"node.fsync_ms\" = {}",
            toml_str(&format!("empirical:{}", e.source()))
        );
    }
    s.push_str("# The measured distributions carry the cluster's own tails; nothing in these metrics\n# measures GC pauses or CPU starvation, so no extra noise is added.\n\"noise.profile\" = \"none\"\n");
    if let Some(b) = backend {
        let _ = writeln!(
            s,
            "# Unused: \"node.fsync_ms\" = {} would model a node that also waits for bbolt.",
            toml_str(&format!("empirical:{}", b.source()))
        );
    }
    let _ = writeln!(s, "\n[[net]]\nname = {}", toml_str(&o.name));
    let _ = writeln!(
        s,
        "about = {}",
        toml_str(&format!(
            "measured: one-way latency = etcd peer RTT / 2 (median {} ms, p99 {} ms)",
            f(lat.quantile(0.5)),
            f(lat.quantile(0.99))
        ))
    );
    let _ = writeln!(
        s,
        "latency = {}",
        toml_str(&format!("empirical:{}", lat.source()))
    );
    s.push_str("loss = 0\n");
    let _ = writeln!(
        s,
        "# Each link's own latency, from the round trips its sender measured to that peer\n# ({link_note})."
    );
    if links.is_empty() {
        s.push_str("links = []\n");
    } else {
        s.push_str("links = [\n");
        for (from, to, e) in links {
            let _ = writeln!(
                s,
                "  {{ from = {from}, to = {to}, latency = {} }},",
                toml_str(&format!("empirical:{}", e.source()))
            );
        }
        s.push_str("]\n");
    }
    s.push_str("\n# Where this profile came from; read by run, sweep, tune and the report. Do not edit.\n[profile]\n");
    let _ = writeln!(s, "command = {}", toml_str(&src.command));
    let _ = writeln!(s, "members_scraped = {}", src.members_scraped);
    let _ = writeln!(s, "heartbeat_ms = {}", f(hb));
    let _ = writeln!(s, "election_timeout_ms = {}", f(el));
    let _ = writeln!(s, "settings_from = {}", toml_str(&src.settings_from));
    let _ = writeln!(s, "span_s = {}", f(src.span_s));
    let _ = writeln!(s, "span_from_ms = {}", src.span_from_ms);
    let _ = writeln!(s, "span_to_ms = {}", src.span_to_ms);
    let _ = writeln!(s, "leader_changes = {}", src.leader_changes);
    if let Some(why) = &src.no_rate {
        let _ = writeln!(s, "no_rate = {}", toml_str(why));
    }
    if let Some(v) = &src.server_version {
        let _ = writeln!(s, "server_version = {}", toml_str(v));
    }
    if let Some(k) = src.heartbeat_send_failures {
        let _ = writeln!(s, "heartbeat_send_failures = {k}");
    }
    s.push_str("scrapes = [\n");
    for sc in &src.scrapes {
        let _ = writeln!(
            s,
            "  {{ file = {}, sha256 = {} }},",
            toml_str(&sc.file),
            toml_str(&sc.sha256)
        );
    }
    s.push_str("]\n");
    s
}

/// `election-bench profile`'s default output path for `name`.
pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from(format!("profiles/{name}/profile.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_parses() {
        let t = "# HELP x y\n# TYPE x histogram\n# scraped_at_ms 1000\nx_bucket{To=\"a\",le=\"0.1\"} 3\nx_bucket{To=\"a\",le=\"+Inf\"} 4 1700000000000\nup 1\nesc{l=\"a\\\"b\\\\c\\n\",} 2e-3\n";
        let e = parse_exposition("f", t).unwrap();
        // Decreasing cumulative counts are refused naming the file, the metric and the bucket.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.prom");
        std::fs::write(
            &f,
            format!("{WAL_FSYNC}_bucket{{le=\"0.001\"}} 5\n{WAL_FSYNC}_bucket{{le=\"0.002\"}} 4\n{WAL_FSYNC}_bucket{{le=\"+Inf\"}} 5\n"),
        )
        .unwrap();
        let err = profile(&ProfileOptions {
            files: vec![f],
            out: d.path().join("p.toml"),
            name: "x".into(),
            heartbeat_ms: None,
            election_timeout_ms: None,
            pre_vote: None,
            command: String::new(),
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("s.prom") && err.contains(WAL_FSYNC) && err.contains("le=0.002 counts 4"),
            "{err}"
        );
        assert_eq!(e.scraped_at_ms, Some(1000));
        assert_eq!(e.samples.len(), 4);
        assert_eq!(e.samples[0].label("le"), Some("0.1"));
        assert_eq!(e.samples[1].value, 4.0);
        assert_eq!(e.samples[1].timestamp_ms, Some(1_700_000_000_000));
        assert_eq!(e.samples[2].labels, vec![]);
        assert_eq!(e.samples[3].label("l"), Some("a\"b\\c\n"));
        assert_eq!(e.samples[3].value, 0.002);
    }

    /// Two `/federate` dumps of a two-member cluster: members told apart by `instance`, times
    /// from sample timestamps, a restart between dumps (the counter went down), and the rate
    /// from the member with the longest span.
    #[test]
    fn federate_dumps_combine_per_member() {
        let d = tempfile::tempdir().unwrap();
        let dump = |t: i64, a_changes: u32, b_changes: u32, b_t: i64| {
            let mut s = String::new();
            for (inst, to, changes, at) in [
                ("a:2379", "bb", a_changes, t),
                ("b:2379", "aa", b_changes, b_t),
            ] {
                for (le, c) in [("0.001", 10), ("0.002", 30), ("+Inf", 40)] {
                    s.push_str(&format!(
                        "{PEER_RTT}_bucket{{instance=\"{inst}\",To=\"{to}\",le=\"{le}\"}} {c} {at}\n"
                    ));
                }
                s.push_str(&format!(
                    "{LEADER_CHANGES}{{instance=\"{inst}\"}} {changes} {at}\n"
                ));
            }
            // Another target's series in the same dump (not an etcd member): ignored.
            s.push_str(&format!("up{{instance=\"node-exporter:9100\"}} 1 {t}\n"));
            s
        };
        let f1 = d.path().join("t1.prom");
        let f2 = d.path().join("t2.prom");
        // a: 5 -> 9 over 2 h; b restarted: 7 -> 2 (2 after the restart) over 1 h.
        std::fs::write(&f1, dump(0, 5, 7, 3_600_000)).unwrap();
        std::fs::write(&f2, dump(7_200_000, 9, 2, 7_200_000)).unwrap();
        let o = ProfileOptions {
            files: vec![f1.clone(), f2],
            out: d.path().join("p/profile.toml"),
            name: "two".into(),
            heartbeat_ms: None,
            election_timeout_ms: None,
            pre_vote: None,
            command: "test".into(),
        };
        let p = profile(&o).unwrap();
        assert_eq!((p.nodes, p.source.members_scraped), (2, 2));
        assert_eq!((p.source.leader_changes, p.source.span_s), (4, 7200.0));
        assert_eq!(
            (p.source.heartbeat_ms, p.source.election_timeout_ms),
            (100.0, 1000.0)
        );
        assert!(p.source.settings_from.starts_with("etcd defaults"));
        // Latest scrape of each member, summed: 80 round trips, halved into ms.
        let net = std::fs::read_to_string(d.path().join("p/net_latency_ms.csv")).unwrap();
        assert!(net.ends_with("le,count\n0.5,20\n1,60\n+Inf,80\n"), "{net}");
        // One scrape: no rate, and why.
        let o = ProfileOptions {
            files: vec![f1],
            ..o
        };
        let p = profile(&o).unwrap();
        assert_eq!(p.source.observed_per_hour(), None);
        assert!(p
            .source
            .no_rate
            .unwrap()
            .contains("two scrapes with a time"));
    }

    #[test]
    fn bad_lines_are_named() {
        for (t, want) in [
            ("x{a=\"1\"\n", "line 1"),
            ("ok 1\nx 1 2 3\n", "line 2"),
            ("x fast\n", "the value of x is not a number"),
            ("x{a=1} 2\n", "quoted value"),
            ("x 1 1.5\n", "timestamp"),
            ("9x 1\n", "metric name"),
            ("x{a=\"1\",b=\"2\",a=\"3\"} 1\n", "label a is given twice"),
            ("# scraped_at_ms soon\n", "scraped_at_ms"),
        ] {
            let e = parse_exposition("scrape.prom", t).unwrap_err().to_string();
            assert!(e.contains("scrape.prom") && e.contains(want), "{t:?}: {e}");
        }
        // Issue 47: no error quotes the file.
        for t in [
            "root:$6$secret:19000\n",
            "root $6$secret\n",
            "root{a=\"$6$secret\"} 1 2 3\n",
            "# scraped_at_ms $6$secret\n",
        ] {
            let e = parse_exposition("shadow", t).unwrap_err().to_string();
            assert!(e.starts_with("shadow: line 1: "), "{e}");
            assert!(!e.contains("$6$") && !e.contains("secret"), "{t:?}: {e}");
        }
    }

    fn options(files: Vec<PathBuf>, out: PathBuf) -> ProfileOptions {
        ProfileOptions {
            files,
            out,
            name: "x".into(),
            heartbeat_ms: None,
            election_timeout_ms: None,
            pre_vote: None,
            command: String::new(),
        }
    }

    /// Issue 47: `--from-prometheus` read a FIFO, a device or a file of any size as it came.
    #[test]
    fn devices_fifos_directories_and_huge_files_are_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p/profile.toml");
        let fifo = crate::input::tests::mkfifo(d.path(), "pipe.prom");
        let big = crate::input::tests::huge(d.path(), "big.prom");
        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        // A directory of scrapes is read; a FIFO inside it is refused by name, not skipped.
        let with_fifo = d.path().join("scrapes");
        std::fs::create_dir(&with_fifo).unwrap();
        crate::input::tests::mkfifo(&with_fifo, "m1.prom");
        for (p, why) in [
            (
                PathBuf::from("/dev/zero"),
                "is a character device".to_string(),
            ),
            (fifo.clone(), "is a FIFO (named pipe)".into()),
            (big.clone(), "larger than the limit of 32.0 MiB".into()),
            (empty.clone(), "no *.prom file in this directory".into()),
            (
                with_fifo.clone(),
                format!("{}: is a FIFO", with_fifo.join("m1.prom").display()),
            ),
        ] {
            let e = profile(&options(vec![p.clone()], out.clone())).unwrap_err();
            assert!(e.is_usage(), "{e}");
            let e = e.to_string();
            assert!(
                e.contains(&p.display().to_string()) && e.contains(&why),
                "{e}"
            );
        }
        assert!(!out.exists());
    }

    /// One member's scrape: round trips to `peers` (count `n` each) and to 200 removed
    /// members (a constant 7 each), and `extra` lines.
    fn member(peers: &[&str], n: u32, extra: &str) -> String {
        let mut s = String::new();
        let stale: Vec<String> = (0..200).map(|i| format!("dead{i:03}")).collect();
        for to in peers
            .iter()
            .copied()
            .chain(stale.iter().map(String::as_str))
        {
            let c = if to.starts_with("dead") { 7 } else { n };
            for le in ["0.001", "+Inf"] {
                s.push_str(&format!(
                    "{PEER_RTT}_bucket{{To=\"{to}\",le=\"{le}\"}} {c}\n"
                ));
            }
        }
        s + extra
    }

    /// Issue 47: every `To` label counted as a member, so 200 removed members' series (etcd
    /// keeps them until it restarts) made a 3-node cluster 203 nodes, exit 0.
    #[test]
    fn stale_peer_labels_are_not_members() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, text: String| {
            let p = d.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let out = d.path().join("p/profile.toml");
        // Every member scraped once: their own ids are the ids missing from their peers.
        let all = vec![
            write("a.prom", member(&["bb", "cc"], 10, "")),
            write("b.prom", member(&["aa", "cc"], 10, "")),
            write("c.prom", member(&["aa", "bb"], 10, "")),
        ];
        let p = profile(&options(all, out.clone())).unwrap();
        assert_eq!(p.nodes, 3);
        assert!(
            p.summary[0].starts_with("ignored 200 peer id(s)"),
            "{:?}",
            p.summary
        );
        // The pooled latency holds the 6 current links' 60 round trips, no stale one; every
        // directed link has its file.
        let net = std::fs::read_to_string(d.path().join("p/net_latency_ms.csv")).unwrap();
        assert!(net.ends_with("le,count\n0.5,60\n+Inf,60\n"), "{net}");
        assert!(d.path().join("p/link_3_2_ms.csv").exists());
        // One member, once: nothing says which of its 202 peers are members.
        let one = write("one.prom", member(&["bb", "cc"], 10, ""));
        let e = profile(&options(vec![one.clone()], out.clone()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("none of the 202 peers") && e.contains("etcd_network_known_peers"),
            "{e}"
        );
        // Twice: the current peers' round trips grew, the removed ones' did not.
        let again = write("one-later.prom", member(&["bb", "cc"], 30, ""));
        let p = profile(&options(vec![one.clone(), again], out.clone())).unwrap();
        assert_eq!(p.nodes, 3);
        // Once, with etcd 3.6's known peers (a removed one at 0) or 3.4's active peers.
        for metric in [KNOWN_PEERS, ACTIVE_PEERS] {
            let gauges = format!(
                "{metric}{{Local=\"aa\",Remote=\"bb\"}} 1\n{metric}{{Local=\"aa\",Remote=\"cc\"}} 1\n{metric}{{Local=\"aa\",Remote=\"dead000\"}} 0\n"
            );
            let f = write("known.prom", member(&["bb", "cc"], 10, &gauges));
            let p = profile(&options(vec![f], out.clone())).unwrap();
            assert_eq!(p.nodes, 3, "{metric}");
        }
    }

    /// Issue 47: a sorted insert per bucket made `profile` quadratic in buckets. Buckets given
    /// in any order come out sorted, a bound given twice is named with both lines.
    #[test]
    fn histograms_are_sorted_once_and_duplicates_named() {
        let k = 20_000;
        let mut t = String::new();
        for i in (1..=k).rev() {
            t.push_str(&format!(
                "{WAL_FSYNC}_bucket{{le=\"{}\"}} {i}\n",
                i as f64 / 1e6
            ));
        }
        t.push_str(&format!("{WAL_FSYNC}_bucket{{le=\"+Inf\"}} {k}\n"));
        let exp = parse_exposition("f", &t).unwrap();
        let mut h = Hist::default();
        for s in &exp.samples {
            h.insert("f", s).unwrap();
        }
        h.check("f", "f").unwrap();
        assert_eq!(h.buckets.len(), k);
        assert_eq!(
            (h.buckets[0], h.buckets[k - 1]),
            ((1e-6, 1.0), (0.02, k as f64))
        );
        assert!(h
            .buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        let t = format!(
            "{WAL_FSYNC}_bucket{{le=\"0.2\"}} 1\n{WAL_FSYNC}_bucket{{le=\"0.1\"}} 1\n{WAL_FSYNC}_bucket{{le=\"0.2\"}} 2\n"
        );
        let mut h = Hist::default();
        for s in &parse_exposition("f", &t).unwrap().samples {
            h.insert("f", s).unwrap();
        }
        let e = h.check("f", "f").unwrap_err().to_string();
        assert!(
            e.contains("line 3: bucket le=0.2 is given twice (first on line 1)"),
            "{e}"
        );
    }
}
