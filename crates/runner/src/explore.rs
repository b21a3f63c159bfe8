//! `election-bench explore`: every link-failure pattern of a small cluster, applied at once to a
//! settled cluster, and the liveness verdict of every protocol on each.
//!
//! A **pattern** is a set of one-way links cut among the positions `1..=n` of a cluster (position
//! `n` is the quorum leader when the pattern is applied, positions `1..n-1` the other nodes in id
//! order; see [`crate::scenario::position`]); it is applied at the trial's fault instant and
//! lasts to the end. A **symmetric** pattern cuts links both ways (`n(n-1)/2` bits), a
//! **directed** one each way on its own (`n(n-1)` bits). The families explored:
//!
//! * every symmetric pattern for `n <= 5` (1024 at `n = 5`);
//! * the symmetric patterns at `n = 6` and `7` (2^15 and 2^21) up to isomorphism with the
//!   leader marked, for protocols whose behaviour does not depend on node ids: one
//!   representative per class of patterns equal up to a permutation of the followers (the
//!   smallest mask of its class), with its class's size as its **multiplicity** (544 and 5096
//!   classes: the rooted graphs on 6 and 7 vertices); for the others a uniform sample;
//! * every directed pattern for `n <= 4` (4096 at `n = 4`);
//! * the directed patterns at `n = 5` (2^20): for protocols whose behaviour does not depend on
//!   node ids ([`ProtocolKind::uses_ids`] false: Raft), one representative per class of patterns
//!   equal up to a permutation of the followers (the leader stays the leader), the smallest
//!   mask of its class; for the others (the bully's priorities, the ring's order, a Raft with
//!   learners, `raft.voters` below `n`, whose lowest ids vote), a uniform sample of patterns,
//!   reported as a sample.
//!
//! A protocol with a store (service endpoints: the lease, whose members talk only through its
//! store) sends nothing on the links among members, so cutting them would find nothing, true
//! by construction. It is explored on **store patterns** instead (`store-pattern-5d-…`,
//! families `5s-store-all`, `5d-store-all`): the links between each member and the store,
//! position `n + 1` (`n` bits symmetric, `2n` directed; every pattern up to `n = 5`, a sample
//! beyond). With a replicated store the store position is its first endpoint, and a member cut
//! from it moves to another. A store pattern is run when some member is linked both ways to the
//! store (the observer's quorum-connected for such a family).
//!
//! **Classes.** A class is an orbit of the group of follower permutations acting on the
//! masks. [`Family::classes`] enumerates them by orbit marking: the masks are visited in
//! increasing order and each one not yet marked is the smallest of a new class, whose images
//! under every permutation are then marked and counted (its multiplicity). That is exactly one
//! representative per class, the same as testing each mask against its canonical form
//! ([`Pattern::canonical`], kept for single patterns), at the cost of one bit a mask and
//! `classes × (n-1)!` images instead of `2^links × (n-1)!`. How many classes a family has is
//! known before any is enumerated, by Burnside's lemma ([`class_count`]: the mean over the
//! permutations of `2^cycles` of the permutation acting on the links), and the memory check
//! counts classes, not masks. Isomorphism is a symmetry only of a protocol that treats nodes
//! alike: the bully's priorities, the ring's order and a Raft with learners or fewer voters
//! than members tell isomorphic patterns apart, so for them a class would stand for patterns
//! it does not behave like, and they are sampled instead (as are Omni-Paxos, whose ballots
//! tie-break by id, and any cell with per-node timing: [`crate::protocol::Built::uses_ids`]).
//!
//! Only patterns that leave a node **quorum-connected** (the observer's definition: linked both
//! ways, directly, to enough others to make a majority with itself — what a quorum leader
//! needs) are run, so that `no-leader` and `livelock` are liveness failures, not correct
//! answers. Each is run with a few seeds; its **verdict** is
//! its worst outcome over them (`livelock` worst, then `no-leader`, `recovered-after`,
//! `stable`).
//!
//! Explore is a consumer of the runner like `sweep`: it builds one cell per protocol and size
//! and runs it with each pattern as its scenario (a custom scenario named `pattern-<n><s|d>-<hex
//! mask>`, which `run` and `trace` accept too: the replay command). Patterns run in parallel
//! (rayon) in chunks; each finished chunk is written to `<out>/chunks/` atomically, so a killed
//! run resumes where it stopped, and the final files are built from the chunks in a fixed order:
//! the same bytes whatever the thread count or interruptions. Each chunk's SHA-256 is written
//! beside it (`<chunk>.csv.sha256`) and `--resume` and [`merge`] refuse a chunk that no longer
//! has it ([`Error::Altered`]); `--resume` also runs a sample of the kept patterns again
//! ([`ExploreOptions::verify_sample`]), since whoever edits a chunk can recompute its hash.
//!
//! `--shard k/N` runs the chunks whose index (over every cell and family, in output order) is
//! `k - 1` modulo `N`, and writes only them and its manifest; [`merge`] collects every shard's
//! chunks into one directory and builds the files from them, checking each as `--resume` does:
//! exactly the files of the unsharded run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use election_core::{Rng, RngExt, SeedableRng};
use election_sim::Outcome;
use rayon::prelude::*;

use crate::error::{usage, Error, Result};
use crate::files::{csv_bytes, prepare_dir, read_csv, write_atomic, DirLock};
use crate::plan::Cell;
use crate::progress::Progress;
use crate::replay::{Flags, Replay};
use crate::scenario::{position, Custom, CustomFault, Scenario};
use crate::shard::Shard;

/// A set of cut one-way links among the positions of an `n`-node cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pattern {
    /// Cluster size.
    pub n: u32,
    /// Each link cut on its own (`true`) or both ways together.
    pub directed: bool,
    /// Bit `i` set: link `i` of [`Pattern::links`] is cut.
    pub mask: u64,
    /// A store pattern: its links are those between the members and the store (position
    /// `n + 1`), the only links a family with a store (the lease) sends on.
    pub store: bool,
}

/// The largest cluster a pattern can describe (a directed 8-node pattern has 56 bits).
pub const MAX_NODES: u32 = 8;

impl Pattern {
    /// The links a mask's bits stand for, in bit order: `(a, b)` positions, `a < b` for
    /// symmetric patterns (both directions), every ordered pair for directed ones.
    pub fn links(n: u32, directed: bool) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for a in 1..=n {
            for b in 1..=n {
                if a != b && (directed || a < b) {
                    v.push((a, b));
                }
            }
        }
        v
    }

    /// The links of a store pattern, in bit order: `(a, n + 1)` for every member `a`
    /// (symmetric: both directions), or `(a, n + 1)` then `(n + 1, a)` (directed).
    pub fn store_links(n: u32, directed: bool) -> Vec<(u32, u32)> {
        let s = n + 1;
        (1..=n)
            .flat_map(|a| {
                if directed {
                    vec![(a, s), (s, a)]
                } else {
                    vec![(a, s)]
                }
            })
            .collect()
    }

    /// This pattern's links, in bit order.
    pub fn own_links(&self) -> Vec<(u32, u32)> {
        if self.store {
            Pattern::store_links(self.n, self.directed)
        } else {
            Pattern::links(self.n, self.directed)
        }
    }

    /// How many patterns the family has (`2^links`).
    pub fn count(n: u32, directed: bool) -> u64 {
        1u64 << Pattern::links(n, directed).len()
    }

    /// How many member (`store` false) or store patterns there are.
    pub fn count_of(n: u32, directed: bool, store: bool) -> u64 {
        if store {
            1u64 << Pattern::store_links(n, directed).len()
        } else {
            Pattern::count(n, directed)
        }
    }

    /// How many positions it joins: the members, and the store for a store pattern.
    pub fn positions(&self) -> u32 {
        self.n + u32::from(self.store)
    }

    /// The scenario name: `pattern-5d-3f` (5 nodes, directed, mask 0x3f); a store pattern's
    /// is `store-pattern-5d-3f`.
    pub fn name(&self) -> String {
        format!(
            "{}pattern-{}{}-{:x}",
            if self.store { "store-" } else { "" },
            self.n,
            if self.directed { 'd' } else { 's' },
            self.mask
        )
    }

    /// The pattern a scenario name stands for, if it is one.
    pub fn parse(name: &str) -> Option<Pattern> {
        let (store, name) = match name.strip_prefix("store-") {
            Some(rest) => (true, rest),
            None => (false, name),
        };
        let rest = name.strip_prefix("pattern-")?;
        let (head, hex) = rest.split_once('-')?;
        let directed = match head.chars().last()? {
            'd' => true,
            's' => false,
            _ => return None,
        };
        let n: u32 = head[..head.len() - 1].parse().ok()?;
        if !(2..=MAX_NODES).contains(&n) {
            return None;
        }
        let mask = u64::from_str_radix(hex, 16).ok()?;
        (mask < Pattern::count_of(n, directed, store)).then_some(Pattern {
            n,
            directed,
            mask,
            store,
        })
    }

    /// Links cut.
    pub fn cuts(&self) -> u32 {
        self.mask.count_ones()
    }

    /// The one-way links cut, as `(from, to)` positions.
    pub fn cut_links(&self) -> Vec<(u32, u32)> {
        self.own_links()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.mask >> i & 1 == 1)
            .flat_map(|(_, (a, b))| {
                if self.directed {
                    vec![(a, b)]
                } else {
                    vec![(a, b), (b, a)]
                }
            })
            .collect()
    }

    /// `up[a][b]`: is the one-way link between positions `a` and `b` (0-based) up?
    fn up(&self) -> Vec<Vec<bool>> {
        let n = self.positions() as usize;
        let mut up = vec![vec![true; n]; n];
        for (a, b) in self.cut_links() {
            up[a as usize - 1][b as usize - 1] = false;
        }
        up
    }

    /// Can a quorum leader exist under the pattern: is some node linked both ways to enough
    /// others to make a majority with itself (the observer's *quorum-connected*,
    /// [`election_sim::quorum_possible`])? Only such patterns are run: under the others no
    /// leader is the correct answer.
    pub fn has_majority(&self) -> bool {
        let up = self.up();
        let n = self.n as usize;
        if self.store {
            // The observer's rule for a family with a store: a member linked both ways to it.
            return (0..n).any(|a| up[a][n] && up[n][a]);
        }
        election_sim::quorum_possible(n, n, |_| true, |a, b| up[a][b] && up[b][a])
    }

    /// The smallest mask of the pattern's class under permutations of the followers (positions
    /// `1..n-1`; the leader, position `n`, stays).
    pub fn canonical(&self) -> u64 {
        if self.store {
            // Store families run every pattern; no classes are formed.
            return self.mask;
        }
        canonical_with(self.mask, &perm_tables(self.n, self.directed))
    }

    /// The pattern as a scenario: the cut links go down at the fault instant, for good.
    pub fn scenario(&self) -> Scenario {
        let n = self.n;
        // The store is the first service endpoint (with a replicated store, its first
        // endpoint: the member then moves to another).
        let at = |k: u32| {
            if k == n + 1 {
                election_sim::Selector::Service(1)
            } else {
                position(k, n)
            }
        };
        let pairs = self
            .cut_links()
            .into_iter()
            .map(|(a, b)| (at(a), at(b)))
            .collect();
        let text = self
            .cut_links()
            .iter()
            .map(|(a, b)| {
                let name = |k: u32| {
                    if k == n + 1 {
                        "store".to_string()
                    } else {
                        k.to_string()
                    }
                };
                format!("{}->{}", name(*a), name(*b))
            })
            .collect::<Vec<_>>()
            .join(" ");
        Scenario::Custom(Custom {
            name: self.name(),
            about: format!(
                "explore pattern at {n} nodes (positions; {n} is the leader): cut {}",
                if text.is_empty() { "nothing" } else { &text }
            ),
            faults: vec![CustomFault {
                at_ms: 0.0,
                jitter_ms: 0.0,
                action: election_sim::FaultAction::Links { pairs, up: false },
                reference: false,
            }],
            source: serde_json::json!({ "pattern": self.name(), "cut": text }),
            exact_nodes: Some(n),
        })
    }
}

/// Does the cell's protocol depend on node ids ([`crate::protocol::Built::uses_ids`]: the bully, the
/// ring, a Raft with learners)? A skipped cell has no configuration: its family decides.
fn cell_uses_ids(cell: &Cell) -> bool {
    cell.built.as_ref().map_or(
        cell.protocol.kind.uses_ids(),
        crate::protocol::Built::uses_ids,
    )
}

/// For each permutation of the followers, where each link's bit goes.
fn perm_tables(n: u32, directed: bool) -> Vec<Vec<u8>> {
    let links = Pattern::links(n, directed);
    let index = |a: u32, b: u32| {
        let (a, b) = if directed || a < b { (a, b) } else { (b, a) };
        links.iter().position(|&l| l == (a, b)).expect("a link") as u8
    };
    let mut perm: Vec<u32> = (1..n).collect();
    let mut tables = Vec::new();
    loop {
        let map = |p: u32| if p == n { p } else { perm[p as usize - 1] };
        tables.push(links.iter().map(|&(a, b)| index(map(a), map(b))).collect());
        if !next_permutation(&mut perm) {
            return tables;
        }
    }
}

/// The smallest image of `mask` under the permutation `tables`.
fn canonical_with(mask: u64, tables: &[Vec<u8>]) -> u64 {
    tables.iter().map(|t| image(mask, t)).min().unwrap_or(mask)
}

/// The image of `mask` under one permutation table.
fn image(mask: u64, table: &[u8]) -> u64 {
    let mut m = 0u64;
    let mut rest = mask;
    while rest != 0 {
        let i = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        m |= 1 << table[i];
    }
    m
}

/// Every class of `bits`-bit masks under the permutation `tables` (the first the identity), as
/// (smallest mask, size of the class), in mask order: orbit marking (module docs).
fn orbits(bits: usize, tables: &[Vec<u8>]) -> Vec<(u64, u64)> {
    let total = 1u64 << bits;
    let mut seen = vec![0u64; (total as usize).div_ceil(64)];
    let mut out = Vec::new();
    for m in 0..total {
        if seen[(m / 64) as usize] >> (m % 64) & 1 == 1 {
            continue;
        }
        let mut size = 0u64;
        for t in tables {
            let i = image(m, t);
            let (w, b) = ((i / 64) as usize, i % 64);
            if seen[w] >> b & 1 == 0 {
                seen[w] |= 1 << b;
                size += 1;
            }
        }
        out.push((m, size));
    }
    out
}

/// How many classes the `n`-node patterns (`directed` or not) fall into under permutations of
/// the followers, by Burnside's lemma: the mean over the permutations of `2^c`, `c` the number
/// of cycles the permutation makes on the links. Exact, and computed without enumerating.
pub fn class_count(n: u32, directed: bool) -> u64 {
    let tables = perm_tables(n, directed);
    let sum: u128 = tables
        .iter()
        .map(|t| {
            let mut done = vec![false; t.len()];
            let mut cycles = 0u32;
            for start in 0..t.len() {
                if done[start] {
                    continue;
                }
                cycles += 1;
                let mut i = start;
                while !done[i] {
                    done[i] = true;
                    i = t[i] as usize;
                }
            }
            1u128 << cycles
        })
        .sum();
    (sum / tables.len() as u128) as u64
}

/// The next permutation in lexicographic order; `false` after the last.
fn next_permutation(v: &mut [u32]) -> bool {
    if v.len() < 2 {
        return false;
    }
    let mut i = v.len() - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = v.len() - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Which patterns of a size are explored, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family {
    /// Cluster size.
    pub n: u32,
    /// Directed or symmetric patterns.
    pub directed: bool,
    /// One representative per class under follower permutations (`canonical`), a uniform sample
    /// (`sample`), or every pattern (`all`).
    pub mode: Mode,
    /// Store patterns (the links between the members and the store).
    pub store: bool,
}

/// How a family's patterns are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every pattern.
    All,
    /// One pattern per class under permutations of the followers.
    Canonical,
    /// This many patterns drawn uniformly (without repeats).
    Sample(u64),
}

impl Family {
    /// `5d-canonical`, `5d-sample`, `4d-all`, `5s-all`; store families `5s-store-all`,
    /// `5d-store-all`.
    pub fn name(&self) -> String {
        format!(
            "{}{}-{}{}",
            self.n,
            if self.directed { 'd' } else { 's' },
            if self.store { "store-" } else { "" },
            match self.mode {
                Mode::All => "all",
                Mode::Canonical => "canonical",
                Mode::Sample(_) => "sample",
            }
        )
    }

    /// The patterns, in mask order.
    pub fn patterns(&self) -> Vec<Pattern> {
        self.classes().into_iter().map(|(p, _)| p).collect()
    }

    /// The patterns, in mask order, each with its **multiplicity**: how many patterns of the
    /// family it stands for (its class's size for a canonical family, else 1).
    pub fn classes(&self) -> Vec<(Pattern, u64)> {
        let total = Pattern::count_of(self.n, self.directed, self.store);
        let p = |mask| Pattern {
            n: self.n,
            directed: self.directed,
            mask,
            store: self.store,
        };
        match self.mode {
            Mode::All => (0..total).map(|m| (p(m), 1)).collect(),
            Mode::Canonical => {
                let tables = perm_tables(self.n, self.directed);
                orbits(Pattern::links(self.n, self.directed).len(), &tables)
                    .into_iter()
                    .map(|(m, k)| (p(m), k))
                    .collect()
            }
            Mode::Sample(k) => {
                // A fixed stream, so the sample is the same on every run and machine.
                let mut rng = Rng::seed_from_u64(0x0065_7870_6c6f_7265);
                let mut picked = std::collections::BTreeSet::new();
                while (picked.len() as u64) < k.min(total) {
                    picked.insert(rng.random_range(0..total));
                }
                picked.into_iter().map(|m| (p(m), 1)).collect()
            }
        }
    }

    /// How many patterns [`Family::classes`] returns, known without enumerating them
    /// ([`class_count`] for a canonical family).
    pub fn count(&self) -> u64 {
        let total = Pattern::count_of(self.n, self.directed, self.store);
        match self.mode {
            Mode::All => total,
            Mode::Canonical => class_count(self.n, self.directed),
            Mode::Sample(k) => k.min(total),
        }
    }
}

/// The families explored for each protocol at size `n`, as the module docs list them; for a
/// protocol with a store (`store`), the store families instead. A sample that would draw every
/// pattern of its family (`--sample` at least the family's size) is the whole family, `all`.
pub fn families(n: u32, uses_ids: bool, sample: u64, store: bool) -> Vec<Family> {
    let sampled = |directed: bool, store: bool| {
        if sample >= Pattern::count_of(n, directed, store) {
            Mode::All
        } else {
            Mode::Sample(sample)
        }
    };
    if store {
        // n links symmetric, 2n directed: every pattern up to 2^10 (n = 5), a sample beyond.
        return vec![
            Family {
                n,
                directed: false,
                mode: Mode::All,
                store: true,
            },
            Family {
                n,
                directed: true,
                mode: if n <= 5 {
                    Mode::All
                } else {
                    sampled(true, true)
                },
                store: true,
            },
        ];
    }
    let mut f = vec![Family {
        n,
        directed: false,
        mode: if n <= 5 {
            Mode::All
        } else if uses_ids {
            sampled(false, false)
        } else {
            Mode::Canonical
        },
        store: false,
    }];
    if n <= 4 {
        f.push(Family {
            n,
            directed: true,
            mode: Mode::All,
            store: false,
        });
    } else if n == 5 {
        f.push(Family {
            n,
            directed: true,
            mode: if uses_ids {
                sampled(true, false)
            } else {
                Mode::Canonical
            },
            store: false,
        });
    }
    f
}

/// Does the cell's protocol run a store (service endpoints)? Its patterns are then the links
/// between the members and the store.
fn cell_has_store(cell: &Cell) -> bool {
    cell.protocol.kind.services(&cell.resolved) > 0
}

/// What to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// One cell per protocol and size (any scenario: explore replaces it with each pattern).
    pub cells: Vec<Cell>,
    /// The `--set` parameters the cells were built with ([`cells`]), recorded in the manifest
    /// so that [`merge`] rebuilds the same cells.
    pub set: Vec<String>,
    /// Seeds per pattern, `0..seeds`.
    pub seeds: u64,
    /// Patterns drawn for a sampled family: directed at 5 nodes and symmetric from 6 for a
    /// protocol whose behaviour depends on ids, directed store patterns from 6.
    pub sample: u64,
    /// Run one slice of the chunks (and write no final files: [`merge`] builds them).
    pub shard: Option<Shard>,
    /// Output directory.
    pub out: PathBuf,
    /// Keep finished chunks of an earlier run (otherwise they are recomputed).
    pub resume: bool,
    /// With `resume`: how many kept patterns to run again (drawn from
    /// [`crate::sweep::RESUME_SAMPLE_SEED`]) and compare with their rows before they are used;
    /// 0 trusts the chunks' recorded SHA-256 (and the replay of every failing verdict) alone.
    pub verify_sample: u64,
    /// Progress on stderr.
    pub progress: bool,
    /// Threads (`None`: one per core).
    pub jobs: Option<usize>,
}

/// The protocols `explore` runs by default.
pub const DEFAULT_PROTOCOLS: [&str; 5] = [
    "bully",
    "ring",
    "raft",
    "raft+pre_vote+check_quorum",
    "lease",
];

/// The parameters `explore` fixes before the caller's `--set`s: no workload (a verdict on
/// leadership needs no writes). A pattern lasts to the end, so a trial that never settles
/// runs to the default horizon, 60 of the longest election timeouts after the fault: a 10 s
/// horizon (30 timeouts) once called 352 of the Raft patterns at n = 4 and 5 livelocks that
/// settle later.
pub const EXPLORE_PARAMS: [&str; 1] = ["workload.interval_ms=0"];

/// One cell per protocol spec and size, on the `lan` profile with [`EXPLORE_PARAMS`] and then
/// `set`, ready for [`explore`].
pub fn cells(protocols: &[String], nodes: &[u32], set: &[String]) -> Result<Vec<Cell>> {
    for &n in nodes {
        if !(2..=MAX_NODES).contains(&n) {
            return usage!(
                "--nodes {n}: explore enumerates link patterns of 2 to {MAX_NODES} nodes"
            );
        }
    }
    let mut spec = crate::SweepSpec {
        name: Some("explore".into()),
        protocols: Some(protocols.to_vec()),
        nodes: Some(nodes.to_vec()),
        scenarios: Some(vec!["leader-crash".into()]),
        seeds: Some(1),
        ..Default::default()
    };
    spec.set_all(&crate::config::over_defaults(&EXPLORE_PARAMS, set))?;
    spec.plan()?.cells()
}

/// Patterns per chunk (a chunk is the unit of resumption).
const CHUNK: usize = 2048;

/// The per-pattern result columns.
pub const PATTERN_COLUMNS: [&str; 14] = [
    "protocol",
    "nodes",
    "family",
    "pattern",
    "cuts",
    "stable",
    "recovered_after",
    "no_leader",
    "livelock",
    "minority_only",
    "verdict",
    "seed",
    "stranded",
    "multiplicity",
];

/// The summary columns: per protocol and family, patterns counted by verdict.
pub const SUMMARY_COLUMNS: [&str; 16] = [
    "protocol",
    "nodes",
    "family",
    "sampled",
    "patterns",
    "with_majority",
    "seeds",
    "stable",
    "recovered_after",
    "no_leader",
    "livelock",
    "minority_only",
    "with_stranded",
    "covers",
    "covers_with_majority",
    "covers_failing",
];

/// A pattern's verdict: its worst outcome over the seeds.
fn worst(outcomes: &[Outcome]) -> Outcome {
    let rank = |o: &Outcome| match o {
        Outcome::Stable => 0,
        Outcome::RecoveredAfter => 1,
        Outcome::MinorityOnly => 2,
        Outcome::NoLeader => 3,
        Outcome::Livelock => 4,
    };
    *outcomes
        .iter()
        .max_by_key(|o| rank(o))
        .unwrap_or(&Outcome::Stable)
}

/// What an exploration found: the summary and the failing patterns, smallest first.
#[derive(Debug, Default)]
pub struct ExploreOutcome {
    /// `summary.csv` rows.
    pub summary: Vec<Vec<String>>,
    /// Trials run in this invocation (not counting resumed chunks).
    pub trials_run: u64,
}

/// Run the exploration and write `patterns.csv`, `summary.csv` and `failing.csv` into `out`.
pub fn explore(opts: &ExploreOptions) -> Result<ExploreOutcome> {
    if opts.seeds == 0 {
        return usage!("--seeds 0: each pattern needs at least one seed");
    }
    for c in &opts.cells {
        if c.nodes > MAX_NODES || c.nodes < 2 {
            return usage!(
                "--nodes {}: explore enumerates link patterns of 2 to {MAX_NODES} nodes",
                c.nodes
            );
        }
    }
    crate::memory::check_seeds(opts.seeds)?;
    check_size(opts)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| Error::Usage(format!("--jobs: cannot start the threads: {e}")))?;
    pool.install(|| explore_in_pool(opts))
}

/// Bytes an enumerated pattern holds in its family's list (the pattern and its multiplicity)
/// and, if it is run, in the list of those run.
const PATTERN_BYTES: u64 = 2 * (24 + 8);

/// Bytes a run pattern's row holds until the files are written: 14 strings in `patterns.csv`
/// (each a `String` and its heap text), the row's vector, and its share of the files' bytes.
const ROW_BYTES: u64 = 14 * (24 + 16) + 24 + 96;

/// The share of a family's patterns that leave a node quorum-connected (and so are run and
/// hold a row), in percent. Not known before enumerating; measured, it is 41 % (`4d-all`) to
/// 97 % (`5s-all`) in the committed exploration, so 60 % keeps the estimate within 1.4× above
/// and 0.65× below what the rows take.
const RUN_SHARE_PERCENT: u64 = 60;

/// Bytes the exploration is estimated to hold at its peak, before anything is enumerated:
/// every family's patterns ([`PATTERN_BYTES`] each, counting classes, not masks, for a
/// canonical family: [`Family::count`]) and the rows of the share of them that is run
/// ([`ROW_BYTES`], [`RUN_SHARE_PERCENT`]), plus the largest canonical family's marks (one bit a
/// mask, held while its classes are enumerated), plus one trial's memory per thread. A test
/// (`crates/runner/tests/flat_memory.rs`) holds it within 2× of the measured peak.
pub fn estimate_bytes(opts: &ExploreOptions) -> u64 {
    let (held, _, marks) = held_patterns(opts);
    let threads = opts.jobs.unwrap_or_else(rayon::current_num_threads).max(1) as u64;
    let trial = opts
        .cells
        .iter()
        .map(|c| crate::memory::Estimate::new(c.nodes, &c.resolved, false).total())
        .max()
        .unwrap_or(0);
    let per = PATTERN_BYTES + ROW_BYTES * RUN_SHARE_PERCENT / 100;
    held.saturating_mul(per)
        .saturating_add(marks)
        .saturating_add(threads.saturating_mul(trial))
}

/// The patterns every family holds, the largest family (`(nodes, patterns)`), and the bytes of
/// the largest canonical family's marks.
fn held_patterns(opts: &ExploreOptions) -> (u64, (u32, u64), u64) {
    let mut held = 0u64;
    let mut largest = (0u32, 0u64);
    let mut marks = 0u64;
    for cell in &opts.cells {
        for fam in families(
            cell.nodes,
            cell_uses_ids(cell),
            opts.sample,
            cell_has_store(cell),
        ) {
            let n = fam.count();
            if fam.mode == Mode::Canonical {
                marks = marks.max(Pattern::count_of(fam.n, fam.directed, fam.store) / 8);
            }
            held = held.saturating_add(n);
            if n > largest.1 {
                largest = (cell.nodes, n);
            }
        }
    }
    (held, largest, marks)
}

/// Estimate the enumeration before allocating it ([`estimate_bytes`]), and each pattern with a
/// majority runs `seeds` trials. Refused by name (`--nodes`, `--sample`, `--seeds`) beyond
/// [`crate::memory::MEMORY_LIMIT`] or [`crate::memory::MAX_TRIALS`] (a `--sample` of 10^8 of the
/// 2^28 symmetric 8-node patterns). An 8-node family without ids is 79,264 classes, enumerated
/// from 2^28 marks (32 MiB) in seconds, and runs.
fn check_size(opts: &ExploreOptions) -> Result<()> {
    use crate::memory::{human, MEMORY_LIMIT};
    let (held, (nodes, n), _) = held_patterns(opts);
    let bytes = estimate_bytes(opts);
    if bytes > MEMORY_LIMIT {
        return usage!(
            "--nodes {nodes}: {n} link patterns in one family ({held} in all), about {} to \
             enumerate and hold with their rows; the limit is {} (a protocol that treats nodes \
             alike is explored up to isomorphism from 6 nodes: 5096 classes at 7 nodes; one \
             that uses ids is sampled, --sample)",
            human(bytes),
            human(MEMORY_LIMIT)
        );
    }
    crate::memory::check_trials(held, opts.seeds, "patterns")?;
    Ok(())
}

/// What `<out>/manifest.json` records about the exploration that wrote the chunks: the
/// protocols, sizes, seeds and sample, and the SHA-256 of every cell's fully resolved
/// configuration (every parameter, `--set` included), so that `--resume` keeps only chunks
/// this very configuration computed.
pub fn manifest(opts: &ExploreOptions) -> serde_json::Value {
    let mut protocols: Vec<&str> = Vec::new();
    let mut nodes: Vec<u32> = Vec::new();
    for c in &opts.cells {
        if !protocols.contains(&c.protocol.spec.as_str()) {
            protocols.push(&c.protocol.spec);
        }
        if !nodes.contains(&c.nodes) {
            nodes.push(c.nodes);
        }
    }
    // The cells' Debug form holds every resolved parameter, in a fixed order (no maps). The
    // hash is a cache key for `--resume`: it moves whenever a cell's configuration or its
    // types change (a parameter added to any family), which costs only a rerun of the chunks.
    let cells = crate::empirical::sha256_hex(format!("{:?}", opts.cells).as_bytes());
    serde_json::json!({
        "tool": "election-bench",
        "version": env!("CARGO_PKG_VERSION"),
        "command": "explore",
        "config": {
            "protocols": protocols,
            "nodes": nodes,
            "seeds": opts.seeds,
            "sample": opts.sample,
            "set": opts.set,
            "patterns_per_chunk": CHUNK,
            "cells_sha256": cells,
        },
    })
}

/// One cell and family's patterns, in output order.
struct Job<'a> {
    cell: &'a Cell,
    fam: Family,
    /// Patterns in the family (those run and those without a quorum-connected node).
    n_all: u64,
    /// The patterns the family's rows stand for (the sum of their multiplicities).
    covers: u64,
    /// The patterns run: those leaving a node quorum-connected.
    run: Vec<Pattern>,
    /// Each run pattern's multiplicity ([`Family::classes`]).
    mult: Vec<u64>,
    /// The index of its first chunk among all the exploration's chunks.
    first_chunk: usize,
}

/// One chunk of a job: its global index (what a shard owns), its file name, patterns and their
/// multiplicities.
struct Chunk<'a> {
    index: usize,
    file: String,
    patterns: &'a [Pattern],
    mult: &'a [u64],
}

impl<'a> Job<'a> {
    fn chunks(&self) -> impl Iterator<Item = Chunk<'_>> {
        self.run
            .chunks(CHUNK)
            .zip(self.mult.chunks(CHUNK))
            .enumerate()
            .map(|(k, (patterns, mult))| Chunk {
                index: self.first_chunk + k,
                file: format!(
                    "{}-{}-{k:04}.csv",
                    self.cell.protocol.spec.replace(['+', '='], "_"),
                    self.fam.name()
                ),
                patterns,
                mult,
            })
    }
}

/// Every (cell, family, patterns) job of an exploration, in output order.
fn jobs(opts: &ExploreOptions) -> Vec<Job<'_>> {
    let mut jobs = Vec::new();
    let mut first_chunk = 0;
    for cell in &opts.cells {
        for fam in families(
            cell.nodes,
            cell_uses_ids(cell),
            opts.sample,
            cell_has_store(cell),
        ) {
            let all = fam.classes();
            let (run, mult): (Vec<Pattern>, Vec<u64>) = all
                .iter()
                .copied()
                .filter(|(p, _)| p.has_majority())
                .unzip();
            let chunks = run.len().div_ceil(CHUNK);
            jobs.push(Job {
                cell,
                fam,
                n_all: all.len() as u64,
                covers: all.iter().map(|(_, k)| k).sum(),
                run,
                mult,
                first_chunk,
            });
            first_chunk += chunks;
        }
    }
    jobs
}

/// The files an exploration's results directory holds (what `merge --out` may not overwrite
/// without `--force`).
const FILES: [&str; 5] = [
    "manifest.json",
    "patterns.csv",
    "summary.csv",
    "failing.csv",
    "chunks",
];

/// The exploration the manifest `m` (read from `mp`) describes, resuming into `out`: its
/// cells rebuilt from the protocols, sizes and `--set` it records, which must hash as the
/// recorded cells do.
fn options_of(mp: &Path, m: &serde_json::Value, out: &Path) -> Result<ExploreOptions> {
    let config = m.get("config").cloned().unwrap_or_default();
    let bad = |what: &str| Error::Results(format!("{}: no valid config.{what}", mp.display()));
    let strings = |key: &str| -> Result<Vec<String>> {
        config
            .get(key)
            .and_then(serde_json::Value::as_array)
            .and_then(|a| a.iter().map(|v| v.as_str().map(String::from)).collect())
            .ok_or_else(|| bad(key))
    };
    let protocols = strings("protocols")?;
    let set_params = strings("set")?;
    let nodes: Vec<u32> = config
        .get("nodes")
        .and_then(serde_json::Value::as_array)
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .ok_or_else(|| bad("nodes"))?;
    let num = |key: &str| {
        config
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| bad(key))
    };
    let opts = ExploreOptions {
        cells: cells(&protocols, &nodes, &set_params)?,
        set: set_params,
        seeds: num("seeds")?,
        sample: num("sample")?,
        out: out.to_path_buf(),
        resume: true,
        // `merge` runs its own sample of the merged rows (and `verify` its own).
        verify_sample: 0,
        progress: false,
        jobs: None,
        shard: None,
    };
    if manifest(&opts).get("config") != Some(&config) {
        return Err(Error::Results(format!(
            "{}: the recorded cells do not hash as this build's cells do (another version, or \
             parameters whose defaults changed); rerun the exploration with this build",
            mp.display()
        )));
    }
    Ok(opts)
}

/// The exploration recorded in `dir/manifest.json`, resuming into `out`.
pub fn options_from_manifest(dir: &Path, out: &Path) -> Result<ExploreOptions> {
    let mp = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mp).map_err(|e| Error::io("cannot read", &mp, e))?;
    let m: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{}: not valid JSON: {e}", mp.display())))?;
    if let Some(sh) = m.get("shard") {
        return Err(Error::Results(format!(
            "{}: shard {sh} of an exploration; verify the merged results (`merge`)",
            mp.display()
        )));
    }
    options_of(&mp, &m, out)
}

/// One row of `patterns.csv`: the cell (an index into [`ExploreOptions::cells`]), family and
/// pattern it was run with.
#[derive(Clone, Debug)]
pub struct PatternAt {
    cell: usize,
    fam: Family,
    pattern: Pattern,
    mult: u64,
}

/// Every row of the exploration's `patterns.csv`, in order.
pub fn pattern_index(opts: &ExploreOptions) -> Vec<PatternAt> {
    jobs(opts)
        .iter()
        .flat_map(|j| {
            let cell = opts
                .cells
                .iter()
                .position(|c| std::ptr::eq(c, j.cell))
                .expect("a job's cell is one of the options'");
            j.run
                .iter()
                .zip(&j.mult)
                .map(move |(&pattern, &mult)| PatternAt {
                    cell,
                    fam: j.fam,
                    pattern,
                    mult,
                })
        })
        .collect()
}

/// The `patterns.csv` row of `at`, run again (the pattern with every seed).
pub fn rerun_pattern(opts: &ExploreOptions, at: &PatternAt) -> Result<Vec<String>> {
    let rows = run_chunk(
        &opts.cells[at.cell],
        &at.fam,
        &[at.pattern],
        &[at.mult],
        opts.seeds,
    )?;
    Ok(rows.into_iter().next().unwrap_or_default())
}

/// Join the shards of one exploration (`explore --shard k/N`, every `k` once, in any order)
/// into `out`: their chunks are collected into `out/chunks` (each from the shard that owns
/// it; a missing one is refused by name) and the files are built from them as `--resume`
/// builds them, each chunk checked and every failing verdict replayed: the unsharded run's
/// files, byte for byte. The cells are rebuilt from the shards' manifest (protocols, sizes,
/// `--set`) and must hash as the shards' did.
pub fn merge(
    out: &Path,
    shards: &[PathBuf],
    force: bool,
    progress: bool,
    jobs_n: Option<usize>,
) -> Result<(ExploreOptions, ExploreOutcome)> {
    let set = crate::shard::read_set(out, shards, force, &FILES)?;
    let (_, base_dir, base) = &set[0];
    for (_, dir, m) in &set[1..] {
        if m.get("config") != base.get("config") || m.get("command") != base.get("command") {
            return Err(Error::Results(format!(
                "{} and {} are shards of different explorations",
                base_dir.display(),
                dir.display()
            )));
        }
    }
    let mut opts = options_of(&base_dir.join("manifest.json"), base, out)?;
    opts.progress = progress;
    opts.jobs = jobs_n;
    prepare_dir(out)?;
    // The manifest first: the build below resumes from the chunks this manifest describes.
    write_atomic(
        &out.join("manifest.json"),
        &crate::sweep::json_bytes(&manifest(&opts)),
    )?;
    let chunks_dir = out.join("chunks");
    if chunks_dir.exists() {
        std::fs::remove_dir_all(&chunks_dir)
            .map_err(|e| Error::io("cannot remove", &chunks_dir, e))?;
    }
    prepare_dir(&chunks_dir)?;
    for job in jobs(&opts) {
        for c in job.chunks() {
            let (sh, dir, _) = &set[c.index % set.len()];
            let from = dir.join("chunks").join(&c.file);
            if !from.is_file() {
                return Err(Error::Results(format!(
                    "{}: missing, and shard {sh} owns it (did that shard finish?)",
                    from.display()
                )));
            }
            let to = chunks_dir.join(&c.file);
            // The chunk's hash travels with it and is checked when the files are built.
            let from_hash = chunk_hash_path(&from);
            if !from_hash.is_file() {
                return Err(Error::Results(format!(
                    "{}: missing, so {} cannot be checked (shard {sh} wrote the chunk but not \
                     its hash: rerun that shard with --resume)",
                    from_hash.display(),
                    from.display()
                )));
            }
            std::fs::copy(&from, &to).map_err(|e| Error::io("cannot copy", &from, e))?;
            std::fs::copy(&from_hash, chunk_hash_path(&to))
                .map_err(|e| Error::io("cannot copy", &from_hash, e))?;
        }
    }
    // A merge leaves no chunk unowned: the final files come from the copied chunks only.
    let o = explore(&opts)?;
    if o.trials_run > 0 {
        return Err(Error::Results(format!(
            "merge: {} trials had to be run, so some chunk was missing from the shards",
            o.trials_run
        )));
    }
    Ok((opts, o))
}

fn explore_in_pool(opts: &ExploreOptions) -> Result<ExploreOutcome> {
    prepare_dir(&opts.out)?;
    let _lock = DirLock::acquire(&opts.out)?;
    let chunks_dir = opts.out.join("chunks");
    let manifest_path = opts.out.join("manifest.json");
    let mut expected = manifest(opts);
    if let Some(sh) = opts.shard {
        expected["shard"] = sh.to_string().into();
    }
    if opts.resume {
        let recorded: Option<serde_json::Value> = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => serde_json::from_str(&text).ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("cannot read", &manifest_path, e)),
        };
        match recorded {
            Some(r)
                if r.get("config") == expected.get("config")
                    && r.get("shard") == expected.get("shard") => {}
            Some(_) => {
                return Err(Error::Results(format!(
                    "{} was written by another exploration than this one (other protocols, \
                     sizes, seeds, sample, parameters or shard, per {}); rerun without \
                     --resume to start over, or choose another --out",
                    opts.out.display(),
                    manifest_path.display()
                )))
            }
            None if chunks_dir.exists() => {
                return Err(Error::Results(format!(
                    "{}: no readable manifest.json says which exploration wrote its chunks; \
                     rerun without --resume",
                    opts.out.display()
                )))
            }
            None => {}
        }
    } else if chunks_dir.exists() {
        // Starting over: no chunk of an earlier exploration may survive to be resumed later
        // under this one's manifest.
        std::fs::remove_dir_all(&chunks_dir)
            .map_err(|e| Error::io("cannot remove", &chunks_dir, e))?;
    }
    write_atomic(&manifest_path, &crate::sweep::json_bytes(&expected))?;
    prepare_dir(&chunks_dir)?;
    let jobs = jobs(opts);
    let owned = |g: usize| opts.shard.is_none_or(|s| s.owns(g));
    let total: u64 = jobs
        .iter()
        .flat_map(|j| j.chunks())
        .filter(|c| owned(c.index))
        .map(|c| c.patterns.len() as u64 * opts.seeds)
        .sum();
    let threads = rayon::current_num_threads();
    let mut progress = Progress::new(opts.progress, "explore", total, 0, threads);
    let mut out = ExploreOutcome::default();
    let mut pattern_rows: Vec<Vec<String>> = Vec::new();
    // Rows kept from an earlier run: their chunk file and line, what they were run with, and
    // their index in `pattern_rows`.
    let mut kept_rows: Vec<(PathBuf, usize, &Cell, Family, Pattern, u64, usize)> = Vec::new();
    for job in &jobs {
        let (cell, fam, run) = (job.cell, &job.fam, &job.run);
        let mut counts = [0u64; 5];
        let mut with_stranded = 0u64;
        let mut covers_failing = 0u64;
        for c in job.chunks() {
            if !owned(c.index) {
                continue;
            }
            let chunk = c.patterns;
            let file = chunks_dir.join(&c.file);
            let kept = if opts.resume {
                read_chunk(&file, cell, fam, chunk, c.mult, opts.seeds)?
            } else {
                None
            };
            let rows = match kept {
                Some(rows) => {
                    for (k, (p, m)) in chunk.iter().zip(c.mult).enumerate() {
                        let at = pattern_rows.len() + k;
                        kept_rows.push((file.clone(), k + 1, cell, *fam, *p, *m, at));
                    }
                    rows
                }
                None => {
                    let rows = run_chunk(cell, fam, chunk, c.mult, opts.seeds)?;
                    out.trials_run += chunk.len() as u64 * opts.seeds;
                    write_chunk(&file, &csv_bytes(rows.iter()))?;
                    rows
                }
            };
            progress.advance(chunk.len() as u64 * opts.seeds);
            for r in rows {
                let verdict = Outcome::from_name(&r[10]).ok_or_else(|| {
                    Error::Usage(format!("{}: bad verdict {:?}", file.display(), r[10]))
                })?;
                counts[Outcome::ALL
                    .iter()
                    .position(|&o| o == verdict)
                    .expect("listed")] += 1;
                if matches!(verdict, Outcome::Stable | Outcome::RecoveredAfter) && r[12] != "0" {
                    with_stranded += 1;
                }
                if verdict.is_failure() {
                    // The chunk's rows were checked (read_chunk) or just computed.
                    covers_failing += r[13].parse::<u64>().unwrap_or(1);
                }
                pattern_rows.push(r);
            }
        }
        let mut s = vec![
            cell.protocol.spec.clone(),
            cell.nodes.to_string(),
            fam.name(),
            matches!(fam.mode, Mode::Sample(_)).to_string(),
            job.n_all.to_string(),
            run.len().to_string(),
            opts.seeds.to_string(),
        ];
        s.extend(counts.iter().map(u64::to_string));
        s.push(with_stranded.to_string());
        s.push(job.covers.to_string());
        s.push(job.mult.iter().sum::<u64>().to_string());
        s.push(covers_failing.to_string());
        out.summary.push(s);
    }
    progress.finish();
    // A chunk's hash can be recomputed by whoever edits it: a sample of the kept rows is run
    // again and must give the very rows kept.
    let picks = crate::verify::pick(
        kept_rows.len() as u64,
        opts.verify_sample,
        crate::sweep::RESUME_SAMPLE_SEED,
    );
    let header: Vec<String> = PATTERN_COLUMNS.iter().map(|s| s.to_string()).collect();
    for i in picks {
        let (file, line, cell, fam, p, m, at) = &kept_rows[i as usize];
        let rerun = run_chunk(cell, fam, &[*p], &[*m], opts.seeds)?;
        let rerun = rerun.first().cloned().unwrap_or_default();
        if let Some(diff) = crate::verify::first_difference(&header, &pattern_rows[*at], &rerun) {
            return Err(Error::Altered {
                path: file.clone(),
                detail: format!(
                    "line {line} ({} nodes {} pattern {}, seeds 0..{}): {diff} (rerun without \
                     --resume)",
                    cell.protocol.spec,
                    cell.nodes,
                    p.name(),
                    opts.seeds
                ),
            });
        }
    }
    if opts.shard.is_some() {
        // One shard's chunks: `merge` builds the files from every shard's.
        out.summary.clear();
        return Ok(out);
    }
    let header = |cols: &[&str]| cols.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    write_atomic(
        &opts.out.join("patterns.csv"),
        &csv_bytes(std::iter::once(&header(&PATTERN_COLUMNS)).chain(pattern_rows.iter())),
    )?;
    write_atomic(
        &opts.out.join("summary.csv"),
        &csv_bytes(std::iter::once(&header(&SUMMARY_COLUMNS)).chain(out.summary.iter())),
    )?;
    // The failing patterns, smallest first (fewest cuts, then family and mask), per protocol.
    let mut failing: Vec<&Vec<String>> = pattern_rows
        .iter()
        .filter(|r| Outcome::from_name(&r[10]).is_some_and(Outcome::is_failure))
        .collect();
    failing.sort_by_key(|r| {
        (
            r[0].clone(),
            r[4].parse::<u32>().unwrap_or(u32::MAX),
            r[1].parse::<u32>().unwrap_or(0),
            r[2].clone(),
            r[3].clone(),
        )
    });
    // The trial as explore ran it: its own parameters (the horizon, no workload), then the
    // caller's --set.
    let replay_sets: Vec<(String, String)> =
        crate::config::over_defaults(&EXPLORE_PARAMS, &opts.set)
            .iter()
            .filter_map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
    let mut fail_rows = vec![header(&[
        "protocol",
        "nodes",
        "family",
        "pattern",
        "cuts",
        "verdict",
        "seed",
        "cut",
        "replay",
        "multiplicity",
    ])];
    for r in failing {
        let Some(p) = Pattern::parse(&r[3]) else {
            continue;
        };
        // The first seed that shows the verdict.
        let seed = &r[11];
        let cut = p
            .cut_links()
            .iter()
            .map(|(a, b)| format!("{a}->{b}"))
            .collect::<Vec<_>>()
            .join(" ");
        fail_rows.push(vec![
            r[0].clone(),
            r[1].clone(),
            r[2].clone(),
            r[3].clone(),
            r[4].clone(),
            r[10].clone(),
            seed.to_string(),
            cut,
            Replay::new("run", Flags::Short, &r[0], &r[1], &r[3])
                .arg("--seed", seed)
                .sets(replay_sets.iter().map(|(k, v)| (k, v)))
                .to_string(),
            r[13].clone(),
        ]);
    }
    write_atomic(&opts.out.join("failing.csv"), &csv_bytes(fail_rows.iter()))?;
    Ok(out)
}

/// The file beside a chunk that records its SHA-256 (`<chunk>.csv.sha256`, the hex digest and
/// a newline), written when the chunk is.
fn chunk_hash_path(chunk: &Path) -> PathBuf {
    let mut name = chunk.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    chunk.with_file_name(name)
}

/// Write a chunk, then its SHA-256 beside it (each atomically). A run killed in between leaves
/// a chunk without its hash, which `--resume` runs again.
fn write_chunk(file: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(file, bytes)?;
    let hash = format!("{}\n", crate::empirical::sha256_hex(bytes));
    write_atomic(&chunk_hash_path(file), hash.as_bytes())
}

/// Whether the chunk at `path` is the one that was written: `Ok(false)` when no hash was
/// recorded for it (the run stopped between the two writes, or an older build wrote it: it is
/// run again), an [`Error::Altered`] when its content no longer has the recorded SHA-256.
fn check_chunk_hash(path: &Path) -> Result<bool> {
    let hash_path = chunk_hash_path(path);
    let want = match std::fs::read_to_string(&hash_path) {
        Ok(text) => text.trim().to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io("cannot read", &hash_path, e)),
    };
    let bytes = std::fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    let got = crate::empirical::sha256_hex(&bytes);
    if got != want {
        return Err(Error::Altered {
            path: path.to_path_buf(),
            detail: format!(
                "SHA-256 {got}, but {} recorded {want} when the chunk was written: the chunk \
                 was edited or damaged since (rerun without --resume)",
                hash_path.display()
            ),
        });
    }
    Ok(true)
}

/// A finished chunk's rows, if its file exists. Every row must be the one this cell, family and
/// chunk would write: its protocol, size, family, pattern and cut count in order, outcome
/// counts that add up to the seeds, the worst of them as the verdict and a seed showing it;
/// and a failing verdict is replayed (its pattern and seed run once more) before it is
/// believed. Anything else is refused naming the file and line: a chunk is written whole
/// (atomically), so a row that does not check was edited, or written by other code. First of
/// all the file must have the SHA-256 recorded when it was written ([`check_chunk_hash`]);
/// without a recorded hash the chunk is run again.
fn read_chunk(
    path: &Path,
    cell: &Cell,
    fam: &Family,
    chunk: &[Pattern],
    mult: &[u64],
    seeds: u64,
) -> Result<Option<Vec<Vec<String>>>> {
    if !path.exists() || !check_chunk_hash(path)? {
        return Ok(None);
    }
    let recs = read_csv(path)?;
    if recs.len() != chunk.len() {
        return Err(Error::Results(format!(
            "{}: {} rows, but this chunk has {} patterns",
            path.display(),
            recs.len(),
            chunk.len()
        )));
    }
    let mut rows = Vec::with_capacity(recs.len());
    for (i, (((rec, _), p), m)) in recs.iter().zip(chunk).zip(mult).enumerate() {
        let r: Vec<String> = rec.iter().map(str::to_string).collect();
        let bad = |why: String| {
            Error::Results(format!(
                "{} line {}: {why} (rerun without --resume)",
                path.display(),
                i + 1
            ))
        };
        if r.len() != PATTERN_COLUMNS.len() {
            return Err(bad(format!(
                "{} fields, expected {}",
                r.len(),
                PATTERN_COLUMNS.len()
            )));
        }
        let want = [
            cell.protocol.spec.clone(),
            cell.nodes.to_string(),
            fam.name(),
            p.name(),
            p.cuts().to_string(),
        ];
        if let Some(c) = (0..want.len()).find(|&c| r[c] != want[c]) {
            return Err(bad(format!(
                "column {} = {:?}, expected {:?}",
                PATTERN_COLUMNS[c], r[c], want[c]
            )));
        }
        let mut counts = [0u64; 5];
        for (k, o) in Outcome::ALL.iter().enumerate() {
            let col = 5 + k;
            counts[k] = r[col].parse().map_err(|_| {
                bad(format!(
                    "column {} = {:?} is not a count ({})",
                    PATTERN_COLUMNS[col],
                    r[col],
                    o.name()
                ))
            })?;
        }
        if counts.iter().try_fold(0u64, |a, &c| a.checked_add(c)) != Some(seeds) {
            return Err(bad(format!(
                "the outcome counts do not add up to {seeds} seeds"
            )));
        }
        let outcomes: Vec<Outcome> = Outcome::ALL
            .iter()
            .zip(counts)
            .filter(|(_, c)| *c > 0)
            .map(|(o, _)| *o)
            .collect();
        let verdict = worst(&outcomes);
        if r[10] != verdict.name() {
            return Err(bad(format!(
                "verdict {:?}, but the counts make it {:?}",
                r[10],
                verdict.name()
            )));
        }
        let seed: u64 = r[11]
            .parse()
            .ok()
            .filter(|&s| s < seeds)
            .ok_or_else(|| bad(format!("seed {:?} is not one of 0..{seeds}", r[11])))?;
        if !r[12].parse::<u64>().is_ok_and(|k| k <= seeds) {
            return Err(bad(format!(
                "column stranded = {:?} is not a count of at most {seeds} seeds",
                r[12]
            )));
        }
        if r[13] != m.to_string() {
            return Err(bad(format!(
                "column multiplicity = {:?}, expected {m} (the size of the pattern's class)",
                r[13]
            )));
        }
        if verdict.is_failure() {
            let mut c = cell.clone();
            c.scenario = Arc::new(p.scenario());
            c.skipped = None;
            let replayed = c.run(seed, false)?.row.outcome;
            if replayed != verdict {
                return Err(bad(format!(
                    "verdict {:?} with seed {seed}, but replaying it gives {:?}",
                    verdict.name(),
                    replayed.name()
                )));
            }
        }
        rows.push(r);
    }
    Ok(Some(rows))
}

/// Run every pattern of a chunk with every seed, in parallel; one row per pattern, in order
/// (the pattern columns, then the first seed showing the verdict, then how many seeds ended
/// with a quorum leader and members stranded from it).
fn run_chunk(
    cell: &Cell,
    fam: &Family,
    chunk: &[Pattern],
    mult: &[u64],
    seeds: u64,
) -> Result<Vec<Vec<String>>> {
    chunk
        .par_iter()
        .zip(mult)
        .map(|(p, m)| {
            let mut c = cell.clone();
            c.scenario = Arc::new(p.scenario());
            c.skipped = None;
            let mut outcomes = Vec::with_capacity(seeds as usize);
            let mut stranded = 0u64;
            for seed in 0..seeds {
                let run = c.run(seed, false)?;
                outcomes.push(run.row.outcome);
                if run.row.converged && run.row.stranded_nodes > 0 {
                    stranded += 1;
                }
            }
            let verdict = worst(&outcomes);
            let first = outcomes.iter().position(|&o| o == verdict).unwrap_or(0);
            let mut r = vec![
                cell.protocol.spec.clone(),
                cell.nodes.to_string(),
                fam.name(),
                p.name(),
                p.cuts().to_string(),
            ];
            r.extend(
                Outcome::ALL
                    .iter()
                    .map(|o| outcomes.iter().filter(|x| *x == o).count().to_string()),
            );
            r.push(verdict.name().to_string());
            r.push(first.to_string());
            r.push(stranded.to_string());
            r.push(m.to_string());
            Ok(r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_sizes_are_the_issue_counts() {
        assert_eq!(Pattern::count(5, false), 1024);
        assert_eq!(Pattern::count(4, true), 4096);
        assert_eq!(Pattern::count(5, true), 1 << 20);
        assert_eq!(Pattern::links(3, false), vec![(1, 2), (1, 3), (2, 3)]);
    }

    #[test]
    fn names_round_trip_and_refuse_nonsense() {
        let p = Pattern {
            n: 5,
            directed: true,
            mask: 0x3f,
            store: false,
        };
        assert_eq!(p.name(), "pattern-5d-3f");
        assert_eq!(Pattern::parse("pattern-5d-3f"), Some(p));
        assert_eq!(Pattern::parse("pattern-3s-8"), None, "3 links: mask < 8");
        assert_eq!(Pattern::parse("pattern-5x-1"), None);
        assert_eq!(Pattern::parse("leader-crash"), None);
    }

    #[test]
    fn majority_is_a_node_linked_both_ways_to_a_majority() {
        // 3 nodes, symmetric: bits (1,2) (1,3) (2,3). Cutting 1-2 and 2-3 leaves 1-3: a majority.
        let p = |mask, directed| Pattern {
            n: 3,
            directed,
            mask,
            store: false,
        };
        assert!(p(0b101, false).has_majority());
        assert!(!p(0b111, false).has_majority());
        // 5 nodes in a chain 1-2-3-4-5: connected, but nobody is linked to two others and
        // itself... except 2, 3 and 4, each with two neighbours: a majority of 3.
        let chain = |n: u32, keep: &[(u32, u32)]| {
            let links = Pattern::links(n, false);
            let mask = links
                .iter()
                .enumerate()
                .filter(|(_, l)| !keep.contains(l))
                .fold(0u64, |m, (i, _)| m | 1 << i);
            Pattern {
                n,
                directed: false,
                mask,
                store: false,
            }
        };
        assert!(chain(5, &[(1, 2), (2, 3), (3, 4), (4, 5)]).has_majority());
        // A 7-node chain is connected, and no node reaches four: no quorum leader possible,
        // although the old transitive reading called it a connected majority.
        assert!(!chain(7, &[(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7)]).has_majority());
        // Directed 3 nodes: bits 1->2 1->3 2->1 2->3 3->1 3->2. Cutting 1->2 and 3->2 only
        // one way each still leaves 1-3 both ways.
        assert!(p(0b100001, true).has_majority());
        // Cutting one direction of every pair leaves no pair up both ways.
        assert!(!p(0b110001 | 0b000100, true).has_majority());
    }

    #[test]
    fn canonical_classes_fix_the_leader() {
        // 3 nodes, symmetric: cutting 1-3 or 2-3 (a follower from the leader) is one class;
        // cutting 1-2 (between the followers) is another.
        let c = |mask| {
            Pattern {
                n: 3,
                directed: false,
                mask,
                store: false,
            }
            .canonical()
        };
        assert_eq!(c(0b010), c(0b100));
        assert_ne!(c(0b001), c(0b010));
        // Burnside: the directed 4-node patterns up to the 6 permutations of 3 followers.
        let fam = Family {
            n: 4,
            directed: true,
            mode: Mode::Canonical,
            store: false,
        };
        let classes = fam.patterns().len();
        assert!(classes * 6 >= 4096 && classes < 4096, "{classes}");
        // Each class representative is its own canonical form, and every pattern maps to one.
        let reps: std::collections::BTreeSet<u64> = fam.patterns().iter().map(|p| p.mask).collect();
        for m in 0..4096 {
            let p = Pattern {
                n: 4,
                directed: true,
                mask: m,
                store: false,
            };
            assert!(reps.contains(&p.canonical()));
        }
    }

    /// The classes of symmetric patterns with the leader marked are the rooted graphs: 6, 20,
    /// 90, 544, 5096 and 79264 on 3 to 8 vertices (OEIS A000666). Burnside's count, the enumeration
    /// and the sum of the multiplicities agree for every family up to n = 7 symmetric and
    /// n = 5 directed, and every pattern's canonical form is exactly one representative.
    #[test]
    fn classes_are_the_rooted_graphs_and_every_pattern_has_exactly_one() {
        for (n, rooted) in [(3, 6), (4, 20), (5, 90), (6, 544), (7, 5096), (8, 79264)] {
            assert_eq!(class_count(n, false), rooted, "n = {n}");
        }
        for (n, directed) in [
            (3, false),
            (4, false),
            (5, false),
            (6, false),
            (7, false),
            (3, true),
            (4, true),
            (5, true),
        ] {
            let fam = Family {
                n,
                directed,
                mode: Mode::Canonical,
                store: false,
            };
            let classes = fam.classes();
            assert_eq!(classes.len() as u64, fam.count(), "n = {n} {directed}");
            assert_eq!(
                classes.iter().map(|(_, k)| k).sum::<u64>(),
                Pattern::count(n, directed),
                "n = {n} {directed}: the classes partition the patterns"
            );
            if n <= 4 {
                // Each pattern's canonical form is one representative, and each class has as
                // many members as its multiplicity says.
                let mut members = std::collections::BTreeMap::new();
                for m in 0..Pattern::count(n, directed) {
                    let p = Pattern {
                        n,
                        directed,
                        mask: m,
                        store: false,
                    };
                    *members.entry(p.canonical()).or_insert(0u64) += 1;
                }
                let by_rep: std::collections::BTreeMap<u64, u64> =
                    classes.iter().map(|(p, k)| (p.mask, *k)).collect();
                assert_eq!(members, by_rep, "n = {n} {directed}");
            }
        }
    }

    /// From 6 nodes the symmetric patterns are classes for a protocol that treats nodes alike
    /// and a sample for one that uses ids; directed patterns stop at 5.
    #[test]
    fn six_and_seven_nodes_are_classes_or_a_sample() {
        for n in [6, 7] {
            let alike = families(n, false, 4096, false);
            assert_eq!(alike.len(), 1);
            assert_eq!(alike[0].mode, Mode::Canonical);
            assert!(!alike[0].directed);
            assert_eq!(alike[0].name(), format!("{n}s-canonical"));
            let ids = families(n, true, 4096, false);
            assert_eq!(ids.len(), 1);
            assert_eq!(ids[0].mode, Mode::Sample(4096));
            assert_eq!(ids[0].count(), 4096);
        }
        assert_eq!(families(7, false, 4096, false)[0].count(), 5096);
        // A sample as large as its family is the family: 6 members' directed store patterns
        // are 2^12.
        let store = families(6, false, 4096, true);
        assert_eq!(store[1].mode, Mode::All);
        assert_eq!(store[1].name(), "6d-store-all");
        assert_eq!(families(6, false, 4095, true)[1].mode, Mode::Sample(4095));
        assert_eq!(families(5, true, 1 << 20, false)[1].mode, Mode::All);
    }

    /// A store pattern cuts links between members and the store (position n + 1) only; it is
    /// run when some member is linked both ways to the store; its name round-trips.
    #[test]
    fn store_patterns_cut_member_store_links() {
        assert_eq!(Pattern::store_links(3, false), vec![(1, 4), (2, 4), (3, 4)]);
        assert_eq!(Pattern::count_of(5, true, true), 1 << 10);
        let p = |mask, directed| Pattern {
            n: 3,
            directed,
            mask,
            store: true,
        };
        assert!(
            p(0b011, false).has_majority(),
            "member 3 still reaches the store"
        );
        assert!(!p(0b111, false).has_majority(), "nobody reaches the store");
        // Directed: 1->S S->1 2->S S->2 3->S S->3; one direction of each member cut.
        assert!(!p(0b010110, true).has_majority());
        assert!(p(0b000110, true).has_majority());
        assert_eq!(p(0b101, false).name(), "store-pattern-3s-5");
        assert_eq!(Pattern::parse("store-pattern-3s-5"), Some(p(0b101, false)));
        assert_eq!(
            Pattern::parse("store-pattern-3s-8"),
            None,
            "3 links: mask < 8"
        );
        assert_eq!(p(0b001, false).cut_links(), vec![(1, 4), (4, 1)]);
        let fams = families(5, false, 10, true);
        assert!(fams.iter().all(|f| f.store));
        assert_eq!(fams[1].patterns().len(), 1024);
    }

    #[test]
    fn samples_are_fixed_and_distinct() {
        let fam = Family {
            n: 5,
            directed: true,
            mode: Mode::Sample(100),
            store: false,
        };
        let a = fam.patterns();
        assert_eq!(a.len(), 100);
        assert_eq!(a, fam.patterns());
    }

    #[test]
    fn the_verdict_is_the_worst_outcome() {
        use Outcome::*;
        assert_eq!(worst(&[Stable, RecoveredAfter]), RecoveredAfter);
        assert_eq!(worst(&[Livelock, NoLeader, Stable]), Livelock);
        assert_eq!(worst(&[Stable]), Stable);
    }
}
