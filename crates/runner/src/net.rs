//! Network profiles: named latency distributions and loss rates, and the one-line latency
//! syntax (`lognormal:0.25:0.3`, or a measured `empirical:FILE`, see [`crate::empirical`]) used
//! by `net.latency`, TOML configs and the manifest.
//!
//! | profile | one-way latency | median RTT | p99 one-way | loss | what it stands for |
//! |---|---|---|---|---|---|
//! | `ideal` | constant 1 ms | 2 ms | 1 ms | 0 | the textbook model: exact message counts and timings |
//! | `lan` | log-normal, median 0.25 ms, σ 0.3 | 0.5 ms | 0.5 ms | 0 | one switched LAN / one rack |
//! | `dc` | log-normal, median 1 ms, σ 0.5 | 2 ms | 3.2 ms | 0 | across a data centre or availability zones |
//! | `wan` | log-normal, median 25 ms, σ 0.35 | 50 ms | 57 ms | 0 | across regions |
//! | `lossy` | as `lan` | 0.5 ms | 0.5 ms | 5 % | a LAN dropping one message in twenty |
//!
//! Every profile is FIFO per link and duplicates nothing. Note that the default `bully.t_elec_ms`
//! and `ring.t_hop_ms` (20 ms) are below the `wan` round trip: on `wan`, raise them (e.g.
//! `--set bully.t_elec_ms=150 --set ring.t_hop_ms=150`) unless the point is to show what a
//! too-short timeout does.
//!
//! # The network's name
//!
//! A cell's network is named, in the `net` column of `trials.csv` and `summary.csv`, in
//! `run`'s header, in the report and in the manifest, by [`net_name`]: the profile's name,
//! followed by `+KEY=VALUE` for every `net.*` parameter fixed for the sweep (`--set key=value`,
//! `[params]`) whose value differs from the profile's own, in key order — `lan`,
//! `lan+net.loss=0.05`, `wan+net.fifo=false+net.latency=constant:30`. A varied `net.*`
//! parameter has its own column and is not repeated in the name. `+` never occurs in a
//! profile's name (custom profiles may not use it) nor in a canonical value, so
//! [`profile_of`] reads the profile back.

use election_sim::{Latency, NetConfig};
use serde_json::{json, Value};

use crate::error::{usage, Result};

/// A named network model.
#[derive(Clone, Debug, PartialEq)]
pub struct NetProfile {
    /// The profile's name (`lan`, or a name from a config file).
    pub name: String,
    /// One line on what it stands for.
    pub about: String,
    /// The network model; `net.*` parameters override its fields.
    pub net: NetConfig,
}

/// The names of the built-in profiles, in catalog order.
pub const BUILTIN_NETS: [&str; 5] = ["ideal", "lan", "dc", "wan", "lossy"];

impl NetProfile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<NetProfile> {
        let lan = Latency::LogNormal {
            median_ms: 0.25,
            sigma: 0.3,
        };
        let (latency, loss, about) = match name {
            "ideal" => (
                Latency::Constant { ms: 1.0 },
                0.0,
                "constant 1 ms, reliable: the textbook model",
            ),
            "lan" => (lan, 0.0, "one LAN: log-normal, median 0.25 ms one way"),
            "dc" => (
                Latency::LogNormal {
                    median_ms: 1.0,
                    sigma: 0.5,
                },
                0.0,
                "a data centre across zones: log-normal, median 1 ms one way",
            ),
            "wan" => (
                Latency::LogNormal {
                    median_ms: 25.0,
                    sigma: 0.35,
                },
                0.0,
                "across regions: log-normal, median 25 ms one way",
            ),
            "lossy" => (lan, 0.05, "the lan profile losing 5% of messages"),
            _ => return None,
        };
        Some(NetProfile {
            name: name.to_string(),
            about: about.to_string(),
            net: NetConfig {
                latency,
                loss,
                duplicate: 0.0,
                fifo: true,
                links: Vec::new(),
            },
        })
    }

    /// The profile as it appears in the manifest.
    pub fn to_json(&self) -> Value {
        let mut j = json!({
            "name": self.name,
            "about": self.about,
            "latency": format_latency(&self.net.latency),
            "latency_mean_ms": self.net.latency.mean_ms(),
            "loss": self.net.loss,
            "duplicate": self.net.duplicate,
            "fifo": self.net.fifo,
        });
        // Only a profile with per-link overrides has the key (the others hash as before).
        if !self.net.links.is_empty() {
            j["links"] = json!(self
                .net
                .links
                .iter()
                .map(|l| json!({
                    "from": l.from.0,
                    "to": l.to.0,
                    "latency": format_latency(&l.latency),
                }))
                .collect::<Vec<_>>());
        }
        j
    }
}

/// The network's name for a profile under the sweep's fixed parameters (see the module docs):
/// `profile` alone, or followed by `+KEY=VALUE` for each fixed `net.*` parameter (key order)
/// whose canonical value differs from the profile's own.
pub fn net_name(profile: &NetProfile, fixed: &crate::params::ParamMap) -> String {
    let p = &profile.net;
    let mut name = profile.name.clone();
    for (key, value) in fixed
        .range("net."..)
        .take_while(|(k, _)| k.starts_with("net."))
    {
        let own = match *key {
            "net.latency" => format_latency(&p.latency),
            "net.loss" => format!("{}", p.loss),
            "net.duplicate" => format!("{}", p.duplicate),
            "net.fifo" => p.fifo.to_string(),
            _ => continue,
        };
        if *value != own {
            name.push_str(&format!("+{key}={value}"));
        }
    }
    name
}

/// The profile a network name ([`net_name`]) starts from: `lan` for `lan+net.loss=0.05`.
pub fn profile_of(net: &str) -> &str {
    net.split_once('+').map_or(net, |(profile, _)| profile)
}

/// The latency syntax, for error messages.
pub const LATENCY_SYNTAX: &str = "constant:MS | uniform:MIN_MS:MAX_MS | normal:MEAN_MS:SD_MS | \
exponential:MEAN_MS | lognormal:MEDIAN_MS:SIGMA | pareto:SCALE_MS:SHAPE | empirical:PATH | \
empirical:PATH#COLUMN";

/// Parse `kind:a[:b]` into a latency distribution, checking its parameters; `empirical:PATH`
/// reads the file ([`crate::empirical`]).
pub fn parse_latency(s: &str) -> Result<Latency> {
    if let Some(spec) = s.trim().strip_prefix(crate::empirical::PREFIX) {
        return crate::empirical::load(spec);
    }
    let mut parts = s.trim().split(':');
    let kind = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let nums: Vec<&str> = parts.map(str::trim).collect();
    let mut vals = Vec::with_capacity(nums.len());
    for n in &nums {
        match n.parse::<f64>() {
            Ok(v) if v.is_finite() => vals.push(v),
            _ => return usage!("latency {s:?}: {n:?} is not a number (syntax: {LATENCY_SYNTAX})"),
        }
    }
    let want = match kind.as_str() {
        "constant" | "exponential" => 1,
        "uniform" | "normal" | "lognormal" | "pareto" => 2,
        _ => {
            return usage!(
                "latency {s:?}: unknown distribution {kind:?}; valid: constant, uniform, normal, \
                 exponential, lognormal, pareto, empirical (syntax: {LATENCY_SYNTAX})"
            )
        }
    };
    if vals.len() != want {
        return usage!(
            "latency {s:?}: {kind} takes {want} number(s), got {} (syntax: {LATENCY_SYNTAX})",
            vals.len()
        );
    }
    let l = match kind.as_str() {
        "constant" => Latency::Constant { ms: vals[0] },
        "exponential" => Latency::Exponential { mean_ms: vals[0] },
        "uniform" => Latency::Uniform {
            min_ms: vals[0],
            max_ms: vals[1],
        },
        "normal" => Latency::Normal {
            mean_ms: vals[0],
            sd_ms: vals[1],
        },
        "lognormal" => Latency::LogNormal {
            median_ms: vals[0],
            sigma: vals[1],
        },
        _ => Latency::Pareto {
            scale_ms: vals[0],
            shape: vals[1],
        },
    };
    // Let the simulator's own validation judge the numbers.
    let mut probe = election_sim::SimConfig::new(1, 0);
    probe.net.latency = l.clone();
    if let Err(e) = probe.validate() {
        // The probe holds the distribution as net.latency: name its own parameter instead
        // (the caller names the setting, which may be node.fsync_ms or noise.pause_ms).
        let field = e.field.strip_prefix("net.latency.").unwrap_or(&e.field);
        return usage!("latency {s:?}: invalid {field} = {}: {}", e.value, e.reason);
    }
    Ok(l)
}

/// The canonical one-line form of a latency distribution (`parse_latency` reads it back).
pub fn format_latency(l: &Latency) -> String {
    match *l {
        Latency::Constant { ms } => format!("constant:{ms}"),
        Latency::Uniform { min_ms, max_ms } => format!("uniform:{min_ms}:{max_ms}"),
        Latency::Normal { mean_ms, sd_ms } => format!("normal:{mean_ms}:{sd_ms}"),
        Latency::Exponential { mean_ms } => format!("exponential:{mean_ms}"),
        Latency::LogNormal { median_ms, sigma } => format!("lognormal:{median_ms}:{sigma}"),
        Latency::Pareto { scale_ms, shape } => format!("pareto:{scale_ms}:{shape}"),
        // The file as named; the manifest records its hash beside it.
        Latency::Empirical(ref e) => format!("{}{}", crate::empirical::PREFIX, e.source()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_round_trips() {
        for s in [
            "constant:1",
            "uniform:0.5:2",
            "normal:1:0.2",
            "exponential:3",
            "lognormal:0.25:0.3",
            "pareto:0.5:2.5",
        ] {
            assert_eq!(format_latency(&parse_latency(s).unwrap()), s);
        }
    }

    #[test]
    fn empirical_latency_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("rtt.txt");
        std::fs::write(&f, "0.4\n0.5\n0.9\n").unwrap();
        let s = format!("empirical:{}", f.display());
        let l = parse_latency(&format!("  {s} ")).unwrap();
        assert_eq!(format_latency(&l), s);
        assert_eq!(parse_latency(&format_latency(&l)).unwrap(), l);
        // The mean of what is drawn (linear between order statistics), not the samples' 0.6.
        assert!((l.mean_ms() - 0.575).abs() < 1e-12);
    }

    #[test]
    fn bad_latency_is_explained() {
        let e = parse_latency("gamma:1").unwrap_err().to_string();
        assert!(e.contains("lognormal"), "{e}");
        let e = parse_latency("uniform:1").unwrap_err().to_string();
        assert!(e.contains("takes 2"), "{e}");
        let e = parse_latency("uniform:3:1").unwrap_err().to_string();
        assert!(e.contains("max_ms"), "{e}");
    }

    #[test]
    fn the_name_says_which_parameters_override_the_profile() {
        use crate::params::{canonical, lookup, ParamMap};
        let set = |pairs: &[(&str, &str)]| -> ParamMap {
            pairs
                .iter()
                .map(|(k, v)| {
                    let d = lookup(k).unwrap();
                    (d.key, canonical(d, v).unwrap())
                })
                .collect()
        };
        let lan = NetProfile::builtin("lan").unwrap();
        let lossy = NetProfile::builtin("lossy").unwrap();
        assert_eq!(net_name(&lan, &ParamMap::new()), "lan");
        assert_eq!(net_name(&lan, &set(&[("heartbeat_ms", "40")])), "lan");
        assert_eq!(
            net_name(&lan, &set(&[("net.loss", "0.050")])),
            "lan+net.loss=0.05"
        );
        // A value equal to the profile's own is no override.
        assert_eq!(net_name(&lossy, &set(&[("net.loss", "0.05")])), "lossy");
        assert_eq!(net_name(&lan, &set(&[("net.loss", "-0")])), "lan");
        assert_eq!(
            net_name(&lan, &set(&[("net.latency", "lognormal:0.25:0.3")])),
            "lan"
        );
        let all = set(&[
            ("net.loss", "0.1"),
            ("net.latency", "constant:2.0"),
            ("net.fifo", "false"),
            ("net.duplicate", "0.01"),
            ("workload.fencing", "off"),
        ]);
        let name = net_name(&lan, &all);
        assert_eq!(
            name,
            "lan+net.duplicate=0.01+net.fifo=false+net.latency=constant:2+net.loss=0.1"
        );
        assert_eq!(profile_of(&name), "lan");
        assert_eq!(profile_of("lan"), "lan");
    }

    #[test]
    fn every_builtin_exists() {
        for n in BUILTIN_NETS {
            assert_eq!(NetProfile::builtin(n).unwrap().name, n);
        }
        assert!(NetProfile::builtin("mars").is_none());
    }
}
