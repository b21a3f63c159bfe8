//! A seeded generator of random fault timelines over the simulator's whole fault vocabulary
//! (every [`FaultAction`], every [`Selector`], every [`NodeSet`]), written out as a custom
//! scenario in the config syntax users write (`[[scenario]]`, `crates/runner/README.md`), so a
//! failing case is a config file and a seed that `election-bench run` replays as it is.
//!
//! A timeline is random faults at offsets in `[0, SPAN_MS]` after the scenario's fault instant,
//! then the **calm**: at one instant, after the last fault and the end of the last pause, every
//! fault that can be undone is: `heal` (links, stale connections, link loss and delay, the resource), the network's
//! loss back to the profile's (0 on `lan`), every failure detector on (a detector deadline
//! that passed while it was off goes off then), every node's speed and clock rate back to normal, and in half of the timelines every crashed node
//! recovered. What
//! is left after the calm is crashed nodes, clocks already jumped, and protocol state.

use election_core::{NodeId, Rng, RngExt, SeedableRng};
use election_sim::{FaultAction, NodeSet, Selector};

/// Random faults fall in `[0, SPAN_MS]` after the fault instant.
pub const SPAN_MS: f64 = 2500.0;

/// The name of the generated scenario.
pub const SCENARIO: &str = "props";

/// What the generator may produce.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Cluster size (members).
    pub n: u32,
    /// Service endpoints (1 for the lease's store): only then are `store` selectors drawn.
    pub services: u32,
    /// Whether `amnesia` may be drawn: a node that loses its stable storage is outside the
    /// crash-recovery model every protocol's safety claim assumes (see [`FaultAction::Amnesia`]).
    pub amnesia: bool,
}

/// A generated timeline: the random faults, then the calm.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// What it was drawn with.
    pub mix: Mix,
    /// The random faults, in time order: offset (ms) after the fault instant, action.
    pub random: Vec<(f64, FaultAction)>,
    /// The calm's offset.
    pub calm_ms: f64,
    /// The calm's actions, all at `calm_ms`.
    pub calm: Vec<FaultAction>,
}

impl Timeline {
    /// Every fault, random then calm, as (offset, action).
    pub fn faults(&self) -> Vec<(f64, FaultAction)> {
        self.random
            .iter()
            .cloned()
            .chain(self.calm.iter().map(|a| (self.calm_ms, a.clone())))
            .collect()
    }

    /// The timeline as a `[[scenario]]` table named [`SCENARIO`].
    pub fn toml(&self) -> String {
        let mut s = format!("[[scenario]]\nname = \"{SCENARIO}\"\nfaults = [\n");
        for (at, a) in self.faults() {
            s.push_str(&format!("  {{ at_ms = {at:?}, {} }},\n", action_toml(&a)));
        }
        s.push_str("]\n");
        s
    }
}

/// Round to a microsecond (or to 1e-6 of whatever unit), so that the TOML text is short and
/// parses back to the very same `f64`.
fn round(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// Draw a timeline from `seed`.
pub fn timeline(seed: u64, mix: Mix) -> Timeline {
    let mut rng = Rng::seed_from_u64(seed);
    let k = rng.random_range(1..=8);
    let mut times: Vec<f64> = (0..k)
        .map(|_| round(rng.random_range(0.0..SPAN_MS)))
        .collect();
    times.sort_by(f64::total_cmp);
    let random: Vec<(f64, FaultAction)> = times
        .into_iter()
        .map(|t| (t, action(&mut rng, mix)))
        .collect();
    let busy_until = random
        .iter()
        .map(|(t, a)| match a {
            FaultAction::Pause { ms, .. } | FaultAction::StaleConnection { ms, .. } => t + ms,
            _ => *t,
        })
        .fold(0.0, f64::max);
    let calm_ms = round(busy_until + 1.0);
    let mut calm = Vec::new();
    if rng.random_bool(0.5) {
        calm.extend((0..mix.n).map(|_| FaultAction::Recover(Selector::Random)));
        if mix.services > 0 {
            calm.push(FaultAction::Recover(Selector::Service(1)));
        }
    }
    calm.push(FaultAction::Heal);
    calm.push(FaultAction::SetLoss(0.0));
    calm.push(FaultAction::Detection {
        nodes: NodeSet::All,
        enabled: true,
    });
    let every = (1..=mix.n)
        .map(|i| Selector::Id(NodeId(i)))
        .chain((1..=mix.services).map(Selector::Service));
    for node in every {
        calm.push(FaultAction::Slow {
            node,
            factor: 1.0,
            ms: 0.0,
        });
        calm.push(FaultAction::ClockRate { node, ppm: 0.0 });
    }
    Timeline {
        mix,
        random,
        calm_ms,
        calm,
    }
}

/// What a selector is drawn for.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// A node action or a link pair: the store too, if there is one.
    Node,
    /// A node set's selector or a partition group: members only.
    Member,
}

fn selector(rng: &mut Rng, mix: Mix, place: Place) -> Selector {
    let n = mix.n;
    let k = |rng: &mut Rng| rng.random_range(1..=n);
    // The k-th follower needs k + 1 nodes.
    let f = |rng: &mut Rng| rng.random_range(1..=(n - 1).max(1));
    let store = place == Place::Node && mix.services > 0;
    match rng.random_range(0..if store { 13 } else { 12 }) {
        0 => Selector::Leader,
        1 => Selector::Highest,
        2 => Selector::KthHighest(k(rng)),
        3 => Selector::Lowest,
        4 => Selector::KthLowest(k(rng)),
        5 => Selector::Random,
        6 => Selector::Id(NodeId(k(rng))),
        7 => Selector::LastCrashed,
        8 => Selector::KthLowestFollower(f(rng)),
        9 => Selector::KthHighestFollower(f(rng)),
        10 => Selector::InitialLeader,
        11 => Selector::KthInitialFollower(f(rng)),
        _ => Selector::Service(rng.random_range(1..=mix.services)),
    }
}

fn node_set(rng: &mut Rng, mix: Mix) -> NodeSet {
    match rng.random_range(0..5) {
        0 => NodeSet::All,
        1 => NodeSet::One(selector(rng, mix, Place::Node)),
        2 => NodeSet::AllExcept(selector(rng, mix, Place::Member)),
        3 => NodeSet::Above(selector(rng, mix, Place::Member)),
        _ => NodeSet::Below(selector(rng, mix, Place::Member)),
    }
}

/// One or two groups of one or two member selectors, and the `rest` group (which a partition
/// by dynamic selectors needs); an explicit id is named at most once.
fn groups(rng: &mut Rng, mix: Mix) -> Vec<Vec<Selector>> {
    let mut used = Vec::new();
    let mut groups: Vec<Vec<Selector>> = (0..rng.random_range(1..=2))
        .map(|_| {
            (0..rng.random_range(1..=2))
                .map(|_| match selector(rng, mix, Place::Member) {
                    Selector::Id(id) if used.contains(&id) => Selector::Random,
                    Selector::Id(id) => {
                        used.push(id);
                        Selector::Id(id)
                    }
                    s => s,
                })
                .collect()
        })
        .collect();
    groups.push(vec![Selector::Rest]);
    groups
}

fn action(rng: &mut Rng, mix: Mix) -> FaultAction {
    use FaultAction::*;
    let node = |rng: &mut Rng| selector(rng, mix, Place::Node);
    loop {
        return match rng.random_range(0..20) {
            0 => Crash(node(rng)),
            1 => Recover(node(rng)),
            2 => Pause {
                node: node(rng),
                ms: round(rng.random_range(0.0..600.0)),
            },
            3 => Partition(groups(rng, mix)),
            4 => CutLink {
                from: node_set(rng, mix),
                to: node_set(rng, mix),
            },
            5 => Isolate(node(rng)),
            6 => ResourceCut(node_set(rng, mix)),
            7 => Links {
                pairs: (0..rng.random_range(1..=4))
                    .map(|_| (node(rng), node(rng)))
                    .collect(),
                up: rng.random_bool(0.5),
            },
            8 => LinkLoss {
                from: node_set(rng, mix),
                to: node_set(rng, mix),
                loss: round(rng.random_range(0.0..=1.0)),
            },
            9 => LinkDelay {
                from: node_set(rng, mix),
                to: node_set(rng, mix),
                ms: round(rng.random_range(0.0..100.0)),
            },
            10 => Slow {
                node: node(rng),
                factor: round(rng.random_range(1.0..4.0)),
                ms: round(rng.random_range(0.0..10.0)),
            },
            11 if mix.amnesia => Amnesia(node(rng)),
            11 => continue,
            12 => Heal,
            13 => ClockJump {
                node: node(rng),
                ms: round(rng.random_range(-300.0..300.0)),
            },
            // Rates from 0.3 to 1.3 of real time: past the lease's 0.8 tolerance both ways.
            14 => ClockRate {
                node: node(rng),
                ppm: round(rng.random_range(-700_000.0..300_000.0)),
            },
            15 => SetLoss(round(rng.random_range(0.0..0.5))),
            16 => Suspect(node(rng)),
            18 => Handover(node(rng)),
            17 => StaleConnection {
                from: node_set(rng, mix),
                to: node_set(rng, mix),
                ms: round(rng.random_range(0.0..600.0)),
            },
            _ => Detection {
                nodes: node_set(rng, mix),
                enabled: rng.random_bool(0.5),
            },
        };
    }
}

/// A selector in the config syntax.
pub fn selector_toml(s: Selector) -> String {
    match s {
        Selector::Leader => "leader".into(),
        Selector::Highest => "highest".into(),
        Selector::KthHighest(k) => format!("kth_highest:{k}"),
        Selector::Lowest => "lowest".into(),
        Selector::KthLowest(k) => format!("kth_lowest:{k}"),
        Selector::Random => "random".into(),
        Selector::Id(id) => format!("id:{}", id.0),
        Selector::LastCrashed => "last_crashed".into(),
        Selector::KthLowestFollower(k) => format!("kth_lowest_follower:{k}"),
        Selector::KthHighestFollower(k) => format!("kth_highest_follower:{k}"),
        Selector::InitialLeader => "initial_leader".into(),
        Selector::KthInitialFollower(k) => format!("kth_initial_follower:{k}"),
        Selector::Rest => "rest".into(),
        Selector::Service(1) => "store".into(),
        Selector::Service(k) => format!("store:{k}"),
    }
}

/// A node set in the config syntax.
pub fn set_toml(s: NodeSet) -> String {
    match s {
        NodeSet::All => "all".into(),
        NodeSet::One(x) => selector_toml(x),
        NodeSet::AllExcept(x) => format!("all_except:{}", selector_toml(x)),
        NodeSet::Above(x) => format!("above:{}", selector_toml(x)),
        NodeSet::Below(x) => format!("below:{}", selector_toml(x)),
    }
}

/// An action's fields in the config syntax (what follows `at_ms` in a fault's inline table).
pub fn action_toml(a: &FaultAction) -> String {
    use FaultAction::*;
    let q = |s: String| format!("{s:?}");
    let sel = |s: &Selector| q(selector_toml(*s));
    let set = |s: &NodeSet| q(set_toml(*s));
    match a {
        Crash(s) => format!("action = \"crash\", node = {}", sel(s)),
        Recover(s) => format!("action = \"recover\", node = {}", sel(s)),
        Isolate(s) => format!("action = \"isolate\", node = {}", sel(s)),
        Suspect(s) => format!("action = \"suspect\", node = {}", sel(s)),
        Handover(s) => format!("action = \"handover\", node = {}", sel(s)),
        Amnesia(s) => format!("action = \"amnesia\", node = {}", sel(s)),
        Pause { node, ms } => format!("action = \"pause\", node = {}, ms = {ms:?}", sel(node)),
        Partition(groups) => {
            let groups: Vec<String> = groups
                .iter()
                .map(|g| {
                    let g: Vec<String> = g.iter().map(sel).collect();
                    format!("[{}]", g.join(", "))
                })
                .collect();
            format!("action = \"partition\", groups = [{}]", groups.join(", "))
        }
        CutLink { from, to } => format!(
            "action = \"cut_link\", from = {}, to = {}",
            set(from),
            set(to)
        ),
        StaleConnection { from, to, ms } => format!(
            "action = \"stale_connection\", from = {}, to = {}, ms = {ms:?}",
            set(from),
            set(to)
        ),
        ResourceCut(nodes) => format!("action = \"cut_resource\", nodes = {}", set(nodes)),
        Links { pairs, up } => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(a, b)| format!("[{}, {}]", sel(a), sel(b)))
                .collect();
            format!(
                "action = \"links\", pairs = [{}], up = {up}",
                pairs.join(", ")
            )
        }
        LinkLoss { from, to, loss } => format!(
            "action = \"link_loss\", from = {}, to = {}, loss = {loss:?}",
            set(from),
            set(to)
        ),
        LinkDelay { from, to, ms } => format!(
            "action = \"link_delay\", from = {}, to = {}, ms = {ms:?}",
            set(from),
            set(to)
        ),
        Slow { node, factor, ms } => format!(
            "action = \"slow\", node = {}, factor = {factor:?}, ms = {ms:?}",
            sel(node)
        ),
        Heal => "action = \"heal\"".into(),
        ClockJump { node, ms } => {
            format!("action = \"clock_jump\", node = {}, ms = {ms:?}", sel(node))
        }
        ClockRate { node, ppm } => {
            format!(
                "action = \"clock_rate\", node = {}, ppm = {ppm:?}",
                sel(node)
            )
        }
        SetLoss(p) => format!("action = \"set_loss\", loss = {p:?}"),
        Detection { nodes, enabled } => format!(
            "action = \"detection\", nodes = {}, enabled = {enabled}",
            set(nodes)
        ),
    }
}

/// Which [`Selector`] variant, by an exhaustive match: a new variant fails to compile here
/// until the generator and this list know it.
pub fn selector_variant(s: Selector) -> &'static str {
    match s {
        Selector::Leader => "Leader",
        Selector::Highest => "Highest",
        Selector::KthHighest(_) => "KthHighest",
        Selector::Lowest => "Lowest",
        Selector::KthLowest(_) => "KthLowest",
        Selector::Random => "Random",
        Selector::Id(_) => "Id",
        Selector::LastCrashed => "LastCrashed",
        Selector::KthLowestFollower(_) => "KthLowestFollower",
        Selector::KthHighestFollower(_) => "KthHighestFollower",
        Selector::InitialLeader => "InitialLeader",
        Selector::KthInitialFollower(_) => "KthInitialFollower",
        Selector::Rest => "Rest",
        Selector::Service(_) => "Service",
    }
}

/// Every [`Selector`] variant's name, as [`selector_variant`] gives it.
pub const SELECTOR_VARIANTS: [&str; 14] = [
    "Leader",
    "Highest",
    "KthHighest",
    "Lowest",
    "KthLowest",
    "Random",
    "Id",
    "LastCrashed",
    "KthLowestFollower",
    "KthHighestFollower",
    "InitialLeader",
    "KthInitialFollower",
    "Rest",
    "Service",
];

/// Which [`NodeSet`] variant (exhaustive, as [`selector_variant`]).
pub fn set_variant(s: NodeSet) -> &'static str {
    match s {
        NodeSet::One(_) => "One",
        NodeSet::All => "All",
        NodeSet::AllExcept(_) => "AllExcept",
        NodeSet::Above(_) => "Above",
        NodeSet::Below(_) => "Below",
    }
}

/// Every [`NodeSet`] variant's name.
pub const SET_VARIANTS: [&str; 5] = ["One", "All", "AllExcept", "Above", "Below"];

/// Which [`FaultAction`] variant (exhaustive, as [`selector_variant`]), with the node sets it
/// names.
pub fn action_variant(a: &FaultAction) -> (&'static str, Vec<NodeSet>) {
    use FaultAction::*;
    match a {
        Crash(_) => ("Crash", vec![]),
        Recover(_) => ("Recover", vec![]),
        Pause { .. } => ("Pause", vec![]),
        Partition(_) => ("Partition", vec![]),
        CutLink { from, to } => ("CutLink", vec![*from, *to]),
        StaleConnection { from, to, .. } => ("StaleConnection", vec![*from, *to]),
        Isolate(_) => ("Isolate", vec![]),
        ResourceCut(s) => ("ResourceCut", vec![*s]),
        Links { .. } => ("Links", vec![]),
        LinkLoss { from, to, .. } => ("LinkLoss", vec![*from, *to]),
        LinkDelay { from, to, .. } => ("LinkDelay", vec![*from, *to]),
        Slow { .. } => ("Slow", vec![]),
        Amnesia(_) => ("Amnesia", vec![]),
        Heal => ("Heal", vec![]),
        ClockJump { .. } => ("ClockJump", vec![]),
        ClockRate { .. } => ("ClockRate", vec![]),
        SetLoss(_) => ("SetLoss", vec![]),
        Suspect(_) => ("Suspect", vec![]),
        Handover(_) => ("Handover", vec![]),
        Detection { nodes, .. } => ("Detection", vec![*nodes]),
    }
}

/// Every [`FaultAction`] variant's name.
pub const ACTION_VARIANTS: [&str; 20] = [
    "Crash",
    "Recover",
    "Pause",
    "Partition",
    "CutLink",
    "StaleConnection",
    "Isolate",
    "ResourceCut",
    "Links",
    "LinkLoss",
    "LinkDelay",
    "Slow",
    "Amnesia",
    "Heal",
    "ClockJump",
    "ClockRate",
    "SetLoss",
    "Suspect",
    "Handover",
    "Detection",
];
