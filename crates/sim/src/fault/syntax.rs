//! The text form of faults, as a config file writes them: selectors (`leader`,
//! `kth_lowest:2`, ...) and node sets (`all`, `all_except:leader`, ...) with [`FromStr`] and
//! [`Display`], and a fault action as one flat table (`action = "pause", node = "leader",
//! ms = 600`) with serde, so a config deserializes straight into [`FaultAction`] and a manifest
//! records it back. The value ranges an action is refused for are
//! [`FaultAction::check_values`], the same rules [`SimConfig::validate`](crate::SimConfig::validate)
//! applies.

use std::fmt::{self, Display};
use std::str::FromStr;

use election_core::NodeId;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{FaultAction, NodeSet, Selector};
use crate::ConfigError;

/// The selector syntax, as error messages and the docs give it (`K` a whole number >= 1).
pub const SELECTOR_SYNTAX: &str =
    "leader | initial_leader | highest | lowest | random | last_crashed | rest | store | store:K | \
lowest_follower | highest_follower | kth_highest:K | kth_lowest:K | kth_lowest_follower:K | \
kth_highest_follower:K | initial_follower | kth_initial_follower:K | id:K";

/// The node-set syntax, as error messages and the docs give it.
pub const SET_SYNTAX: &str =
    "all | SELECTOR | all_except:SELECTOR | above:SELECTOR | below:SELECTOR";

/// The fault actions by the name a config gives them, as error messages and the docs list them.
pub const ACTIONS: &str = "crash, recover, pause, partition, cut_link, isolate, heal, set_loss, \
suspect, detection, cut_resource, clock_jump, clock_rate, links, link_loss, link_delay, slow, amnesia, \
stale_connection, handover";

/// Text that is not a selector, a node set or a fault action, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(pub String);

/// The lease store: the first service endpoint, `store` in the syntax.
const STORE: Selector = Selector::Service(1);

impl FromStr for Selector {
    type Err = SyntaxError;

    /// One of [`SELECTOR_SYNTAX`]; surrounding white space is ignored.
    fn from_str(s: &str) -> Result<Selector, SyntaxError> {
        let s = s.trim();
        let num = |v: &str| -> Result<u32, SyntaxError> {
            match v.trim().parse::<u32>() {
                Ok(k) if k >= 1 => Ok(k),
                _ => Err(SyntaxError(format!(
                    "selector {s:?}: {v:?} is not a whole number >= 1"
                ))),
            }
        };
        Ok(match s {
            "leader" => Selector::Leader,
            "highest" => Selector::Highest,
            "lowest" => Selector::Lowest,
            "random" => Selector::Random,
            "last_crashed" => Selector::LastCrashed,
            "initial_leader" => Selector::InitialLeader,
            "rest" => Selector::Rest,
            "store" => STORE,
            "lowest_follower" => Selector::KthLowestFollower(1),
            "highest_follower" => Selector::KthHighestFollower(1),
            "initial_follower" => Selector::KthInitialFollower(1),
            _ => match s.split_once(':') {
                Some(("kth_highest", k)) => Selector::KthHighest(num(k)?),
                Some(("kth_lowest", k)) => Selector::KthLowest(num(k)?),
                Some(("kth_lowest_follower", k)) => Selector::KthLowestFollower(num(k)?),
                Some(("kth_highest_follower", k)) => Selector::KthHighestFollower(num(k)?),
                Some(("kth_initial_follower", k)) => Selector::KthInitialFollower(num(k)?),
                Some(("id", k)) => Selector::Id(NodeId(num(k)?)),
                Some(("store", k)) => Selector::Service(num(k)?),
                _ => {
                    return Err(SyntaxError(format!(
                        "unknown node selector {s:?}; valid: {SELECTOR_SYNTAX}"
                    )))
                }
            },
        })
    }
}

impl Display for Selector {
    /// The selector in [`SELECTOR_SYNTAX`], its shortest spelling (`lowest_follower`, not
    /// `kth_lowest_follower:1`; `store`, not `store:1`). Outside the syntax, and so not read
    /// back: a zero `K`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Selector::Leader => f.write_str("leader"),
            Selector::Highest => f.write_str("highest"),
            Selector::KthHighest(k) => write!(f, "kth_highest:{k}"),
            Selector::Lowest => f.write_str("lowest"),
            Selector::KthLowest(k) => write!(f, "kth_lowest:{k}"),
            Selector::Random => f.write_str("random"),
            Selector::Id(id) => write!(f, "id:{}", id.0),
            Selector::LastCrashed => f.write_str("last_crashed"),
            Selector::KthLowestFollower(1) => f.write_str("lowest_follower"),
            Selector::KthLowestFollower(k) => write!(f, "kth_lowest_follower:{k}"),
            Selector::KthHighestFollower(1) => f.write_str("highest_follower"),
            Selector::KthHighestFollower(k) => write!(f, "kth_highest_follower:{k}"),
            Selector::InitialLeader => f.write_str("initial_leader"),
            Selector::KthInitialFollower(1) => f.write_str("initial_follower"),
            Selector::KthInitialFollower(k) => write!(f, "kth_initial_follower:{k}"),
            Selector::Rest => f.write_str("rest"),
            Selector::Service(1) => f.write_str("store"),
            Selector::Service(k) => write!(f, "store:{k}"),
        }
    }
}

impl FromStr for NodeSet {
    type Err = SyntaxError;

    /// One of [`SET_SYNTAX`].
    fn from_str(s: &str) -> Result<NodeSet, SyntaxError> {
        let s = s.trim();
        Ok(match s {
            "all" => NodeSet::All,
            _ => match s.split_once(':') {
                Some(("all_except", v)) => NodeSet::AllExcept(v.parse()?),
                Some(("above", v)) => NodeSet::Above(v.parse()?),
                Some(("below", v)) => NodeSet::Below(v.parse()?),
                _ => match s.parse() {
                    Ok(sel) => NodeSet::One(sel),
                    Err(_) => {
                        return Err(SyntaxError(format!(
                            "unknown node set {s:?}; valid: {SET_SYNTAX}"
                        )))
                    }
                },
            },
        })
    }
}

impl Display for NodeSet {
    /// The set in [`SET_SYNTAX`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeSet::All => f.write_str("all"),
            NodeSet::One(s) => write!(f, "{s}"),
            NodeSet::AllExcept(s) => write!(f, "all_except:{s}"),
            NodeSet::Above(s) => write!(f, "above:{s}"),
            NodeSet::Below(s) => write!(f, "below:{s}"),
        }
    }
}

/// Serde as text, through `Display` and `FromStr`.
macro_rules! serde_as_text {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
serde_as_text!(Selector);
serde_as_text!(NodeSet);

/// A fault action as a config writes it: one flat table, `action` naming the variant and the
/// other keys its fields. Every key is here, in this order, so a manifest writes every action
/// the same way (a key the action does not use is `null`).
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    action: String,
    node: Option<Selector>,
    nodes: Option<NodeSet>,
    from: Option<NodeSet>,
    to: Option<NodeSet>,
    groups: Option<Vec<Vec<Selector>>>,
    ms: Option<f64>,
    loss: Option<f64>,
    enabled: Option<bool>,
    ppm: Option<f64>,
    pairs: Option<Vec<[Selector; 2]>>,
    up: Option<bool>,
    factor: Option<f64>,
}

impl FaultAction {
    /// The action's name in a config (one of [`ACTIONS`]).
    pub fn name(&self) -> &'static str {
        use FaultAction::*;
        match self {
            Crash(_) => "crash",
            Recover(_) => "recover",
            Pause { .. } => "pause",
            Partition(_) => "partition",
            CutLink { .. } => "cut_link",
            StaleConnection { .. } => "stale_connection",
            Isolate(_) => "isolate",
            ResourceCut(_) => "cut_resource",
            Links { .. } => "links",
            LinkLoss { .. } => "link_loss",
            LinkDelay { .. } => "link_delay",
            Slow { .. } => "slow",
            Amnesia(_) => "amnesia",
            Heal => "heal",
            ClockJump { .. } => "clock_jump",
            ClockRate { .. } => "clock_rate",
            SetLoss(_) => "set_loss",
            Suspect(_) => "suspect",
            Handover(_) => "handover",
            Detection { .. } => "detection",
        }
    }

    /// The checks on the action's values that do not depend on the cluster (a probability in
    /// [0, 1], a finite pause, ...), naming the field (`ms`, `loss`, ...) as a config writes it
    /// and the value. [`SimConfig::validate`](crate::SimConfig::validate) adds the selectors'
    /// checks against the cluster size.
    pub fn check_values(&self) -> Result<(), ConfigError> {
        let probability = |loss: f64| {
            if (0.0..=1.0).contains(&loss) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    "loss",
                    loss,
                    "must be a probability in [0, 1]",
                ))
            }
        };
        match *self {
            FaultAction::Pause { ms, .. } if !(ms.is_finite() && ms >= 0.0) => Err(
                ConfigError::new("ms", ms, "a pause lasts a finite time >= 0"),
            ),
            FaultAction::SetLoss(loss) | FaultAction::LinkLoss { loss, .. } => probability(loss),
            FaultAction::StaleConnection { ms, .. }
                if !(ms.is_finite() && (0.0..=1e12).contains(&ms)) =>
            {
                Err(ConfigError::new(
                    "ms",
                    ms,
                    "a keep-alive timeout is a finite number of ms in [0, 1e12]",
                ))
            }
            FaultAction::LinkDelay { ms, .. } if !(ms.is_finite() && (0.0..=1e9).contains(&ms)) => {
                Err(ConfigError::new(
                    "ms",
                    ms,
                    "an extra latency is a finite number of ms in [0, 1e9]",
                ))
            }
            FaultAction::Slow { factor, ms, .. } => {
                if !(factor.is_finite() && (1.0..=1e6).contains(&factor)) {
                    return Err(ConfigError::new(
                        "factor",
                        factor,
                        "a slow-down factor is a finite number in [1, 1e6]",
                    ));
                }
                if !(ms.is_finite() && (0.0..=1e12).contains(&ms)) {
                    return Err(ConfigError::new(
                        "ms",
                        ms,
                        "the extra time per input is a finite number of ms in [0, 1e12]",
                    ));
                }
                Ok(())
            }
            FaultAction::ClockJump { ms, .. } if !(ms.is_finite() && ms.abs() <= 1e12) => {
                Err(ConfigError::new(
                    "ms",
                    ms,
                    "a clock jump is a finite number of ms, at most 1e12 either way",
                ))
            }
            FaultAction::ClockRate { ppm, .. }
                if !(ppm.is_finite() && ppm > -1_000_000.0 && ppm <= 1_000_000.0) =>
            {
                Err(ConfigError::new(
                    "ppm",
                    ppm,
                    "a clock rate error is above -1000000 ppm and at most 1000000 ppm (the clock \
                     runs forward, at most twice as fast)",
                ))
            }
            _ => Ok(()),
        }
    }

    fn from_table(t: Table) -> Result<FaultAction, SyntaxError> {
        use FaultAction::*;
        let action = t.action.as_str();
        let need = |field: &str| SyntaxError(format!("action {action:?} needs `{field}`"));
        let node = || t.node.ok_or_else(|| need("node"));
        let set = |v: Option<NodeSet>, field: &str| v.ok_or_else(|| need(field));
        let ms = || t.ms.ok_or_else(|| need("ms"));
        let loss = || t.loss.ok_or_else(|| need("loss"));
        let a =
            match action {
                "crash" => Crash(node()?),
                "recover" => Recover(node()?),
                "isolate" => Isolate(node()?),
                "suspect" => Suspect(node()?),
                "handover" => Handover(node()?),
                "amnesia" => Amnesia(node()?),
                "pause" => Pause {
                    node: node()?,
                    ms: ms()?,
                },
                "heal" => Heal,
                "set_loss" => SetLoss(loss()?),
                "detection" => Detection {
                    nodes: set(t.nodes, "nodes")?,
                    enabled: t.enabled.ok_or_else(|| need("enabled"))?,
                },
                "cut_resource" => ResourceCut(set(t.nodes, "nodes")?),
                "clock_jump" => ClockJump {
                    node: node()?,
                    ms: ms()?,
                },
                "clock_rate" => ClockRate {
                    node: node()?,
                    ppm: t.ppm.ok_or_else(|| need("ppm"))?,
                },
                "links" => Links {
                    pairs: (t.pairs.as_ref().ok_or_else(|| need("pairs"))?)
                        .iter()
                        .map(|&[a, b]| (a, b))
                        .collect(),
                    up: t.up.ok_or_else(|| need("up"))?,
                },
                "link_loss" => LinkLoss {
                    from: set(t.from, "from")?,
                    to: set(t.to, "to")?,
                    loss: loss()?,
                },
                "link_delay" => LinkDelay {
                    from: set(t.from, "from")?,
                    to: set(t.to, "to")?,
                    ms: ms()?,
                },
                // A slow node's knob left out is neutral: factor 1, no extra time per input.
                "slow" if t.factor.is_none() && t.ms.is_none() => return Err(SyntaxError(
                    "action \"slow\" needs `factor` (in [1, 1e6]) or `ms` (in [0, 1e12]), or both"
                        .into(),
                )),
                "slow" => Slow {
                    node: node()?,
                    factor: t.factor.unwrap_or(1.0),
                    ms: t.ms.unwrap_or(0.0),
                },
                "cut_link" => CutLink {
                    from: set(t.from, "from")?,
                    to: set(t.to, "to")?,
                },
                "stale_connection" => StaleConnection {
                    from: set(t.from, "from")?,
                    to: set(t.to, "to")?,
                    ms: ms()?,
                },
                "partition" => Partition(t.groups.clone().ok_or_else(|| need("groups"))?),
                other => {
                    return Err(SyntaxError(format!(
                        "unknown action {other:?}; valid: {ACTIONS}"
                    )))
                }
            };
        a.check_values().map_err(|e| {
            SyntaxError(format!(
                "action {action:?}: `{}` = {}: {}",
                e.field, e.value, e.reason
            ))
        })?;
        Ok(a)
    }

    fn to_table(&self) -> Table {
        use FaultAction::*;
        let mut t = Table {
            action: self.name().to_string(),
            ..Table::default()
        };
        match self.clone() {
            Crash(s) | Recover(s) | Isolate(s) | Suspect(s) | Handover(s) | Amnesia(s) => {
                t.node = Some(s)
            }
            Pause { node, ms } | ClockJump { node, ms } => (t.node, t.ms) = (Some(node), Some(ms)),
            Heal => {}
            SetLoss(p) => t.loss = Some(p),
            Detection { nodes, enabled } => (t.nodes, t.enabled) = (Some(nodes), Some(enabled)),
            ResourceCut(nodes) => t.nodes = Some(nodes),
            ClockRate { node, ppm } => (t.node, t.ppm) = (Some(node), Some(ppm)),
            Links { pairs, up } => {
                t.pairs = Some(pairs.iter().map(|&(a, b)| [a, b]).collect());
                t.up = Some(up);
            }
            LinkLoss { from, to, loss } => {
                (t.from, t.to, t.loss) = (Some(from), Some(to), Some(loss));
            }
            LinkDelay { from, to, ms } | StaleConnection { from, to, ms } => {
                (t.from, t.to, t.ms) = (Some(from), Some(to), Some(ms));
            }
            Slow { node, factor, ms } => {
                (t.node, t.factor, t.ms) = (Some(node), Some(factor), Some(ms));
            }
            CutLink { from, to } => (t.from, t.to) = (Some(from), Some(to)),
            Partition(groups) => t.groups = Some(groups),
        }
        t
    }
}

impl Serialize for FaultAction {
    /// As a config writes it: `action` and every field key (`null` where the action has no
    /// such field), selectors and sets in their syntax.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_table().serialize(s)
    }
}

impl<'de> Deserialize<'de> for FaultAction {
    /// From a config's flat table: an unknown action, key, selector or set, a missing field
    /// and an out-of-range value are refused, the message naming the field and the value.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FaultAction, D::Error> {
        FaultAction::from_table(Table::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every selector of [`SELECTOR_SYNTAX`] (`K` = 1, 3 and 40) reads into a selector that
    /// writes back as the same selector, and every spelling's shortest form is what it writes.
    #[test]
    fn every_selector_and_set_of_the_syntax_round_trips() {
        let mut selectors = Vec::new();
        for written in SELECTOR_SYNTAX.split('|').map(str::trim) {
            for k in ["1", "3", "40"] {
                let text = written.replace('K', k);
                let sel: Selector = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
                let shown = sel.to_string();
                assert_eq!(shown.parse::<Selector>(), Ok(sel), "{text}");
                // Only the k = 1 spellings of the follower selectors and of `store:K` have a
                // shorter name.
                if !text.ends_with("_follower:1") && text != "store:1" {
                    assert_eq!(shown, text);
                }
                selectors.push(sel);
            }
        }
        assert_eq!(
            "kth_lowest_follower:1".parse(),
            Ok(Selector::KthLowestFollower(1))
        );
        assert_eq!(
            Selector::KthLowestFollower(1).to_string(),
            "lowest_follower"
        );
        assert_eq!(Selector::Service(1).to_string(), "store");
        assert_eq!(Selector::Service(3).to_string(), "store:3");
        assert_eq!("store:3".parse::<Selector>(), Ok(Selector::Service(3)));
        assert_eq!("store:1".parse::<Selector>(), Ok(Selector::Service(1)));
        assert!("store:0".parse::<Selector>().is_err());
        for written in SET_SYNTAX.split('|').map(str::trim) {
            for sel in &selectors {
                let text = written.replace("SELECTOR", &sel.to_string());
                let set: NodeSet = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(set.to_string(), text);
                assert_eq!(set.to_string().parse::<NodeSet>(), Ok(set));
                if written == "all" {
                    assert_eq!(set, NodeSet::All);
                } else {
                    assert_eq!(set.selector(), Some(*sel), "{text}");
                }
            }
        }
    }

    /// What is not in the syntax is refused, and the message says what is.
    #[test]
    fn text_outside_the_syntax_is_refused_naming_the_valid_forms() {
        for (text, says) in [
            ("boss", "lowest_follower"),
            ("kth_lowest:0", ">= 1"),
            ("id:x", "whole number"),
            ("kth_highest:-1", ">= 1"),
            ("", "valid:"),
        ] {
            let e = text.parse::<Selector>().unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = "some".parse::<NodeSet>().unwrap_err().to_string();
        assert!(e.contains(SET_SYNTAX), "{e}");
        let e = "above:boss".parse::<NodeSet>().unwrap_err().to_string();
        assert!(e.contains("unknown node selector \"boss\""), "{e}");
    }

    fn action(fields: &str) -> Result<FaultAction, String> {
        #[derive(Deserialize)]
        struct One {
            f: FaultAction,
        }
        toml::from_str::<One>(&format!("f = {{ {fields} }}"))
            .map(|o| o.f)
            .map_err(|e| e.to_string())
    }

    /// A fault action reads from its table, writes back to one that reads as the same action,
    /// and the written table has every key (`null` where unused), in one order.
    #[test]
    fn actions_read_from_their_table_and_write_back() {
        let a = action(r#"action = "link_loss", from = "all", to = "kth_lowest:2", loss = 0.5"#)
            .unwrap();
        assert_eq!(
            a,
            FaultAction::LinkLoss {
                from: NodeSet::All,
                to: NodeSet::One(Selector::KthLowest(2)),
                loss: 0.5
            }
        );
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct One {
            f: FaultAction,
        }
        let written = toml::to_string(&One { f: a.clone() }).unwrap();
        assert_eq!(toml::from_str::<One>(&written).unwrap().f, a, "{written}");
        let slow = action(r#"action = "slow", node = "store", ms = 5"#).unwrap();
        assert_eq!(
            slow,
            FaultAction::Slow {
                node: STORE,
                factor: 1.0,
                ms: 5.0
            }
        );
        assert_eq!(slow.name(), "slow");
        let stale = action(r#"action = "stale_connection", from = "leader", to = "all", ms = 750"#)
            .unwrap();
        assert_eq!(
            stale,
            FaultAction::StaleConnection {
                from: NodeSet::One(Selector::Leader),
                to: NodeSet::All,
                ms: 750.0
            }
        );
        let written = toml::to_string(&One { f: stale.clone() }).unwrap();
        assert_eq!(
            toml::from_str::<One>(&written).unwrap().f,
            stale,
            "{written}"
        );
        assert_eq!(stale.lasts(), std::time::Duration::from_millis(750));
        for (fields, says) in [
            (
                r#"action = "stale_connection", from = "leader", to = "all""#,
                "action \"stale_connection\" needs `ms`",
            ),
            (
                r#"action = "stale_connection", from = "leader", to = "all", ms = -5"#,
                "`ms` = -5",
            ),
            (r#"action = "crash""#, "action \"crash\" needs `node`"),
            (r#"action = "pause", node = "leader", ms = -1"#, "`ms` = -1"),
            (
                r#"action = "clock_rate", node = "leader", ppm = 2e6"#,
                "`ppm` = 2000000",
            ),
            (r#"action = "crash", node = "leader", bogus = 1"#, "bogus"),
            (r#"action = "explode""#, ACTIONS),
        ] {
            let e = action(fields).unwrap_err();
            assert!(e.contains(says), "{fields}: {e}");
        }
    }
}
