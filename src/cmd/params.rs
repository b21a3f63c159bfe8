//! `params`: every parameter (its default and meaning) and the network profiles.

use election_runner::net::{format_latency, NetProfile, BUILTIN_NETS};
use election_runner::params::PARAMS;

use crate::error::CliError;

/// `params`: every parameter with its default and values, then the network profiles.
pub fn run() -> Result<(), CliError> {
    let width = PARAMS.iter().map(|d| d.key.len()).max().unwrap_or(0);
    out!("Parameters (TOML [params], --set key=value, protocol options bully+quorum):\n");
    for d in PARAMS {
        out!("{:width$}  {}", d.key, d.about);
        out!(
            "{:width$}  default: {}; values: {}",
            "",
            d.default,
            election_runner::params::values(d)
        );
    }
    out!("\nSystem specs (a protocol spec, NAME or raft+system=NAME; options on top win, e.g. etcd@3.4+pre_vote):\n");
    for sys in election_runner::systems::SYSTEMS {
        out!("{}  {}", sys.name, sys.about);
        for r in sys.rules {
            out!("  {} = {}  ({})", r.key, r.value, r.source);
        }
    }
    for b in election_runner::systems::BUNDLES {
        out!("{}  {} ({} with these options)", b.name, b.about, b.family);
        for r in b.rules {
            out!("  {} = {}  ({})", r.key, r.value, r.source);
        }
    }
    out!("\nNetwork profiles (--net, --nets):\n");
    for n in BUILTIN_NETS {
        let p = NetProfile::builtin(n).expect("built-in");
        out!(
            "{n:6}  latency {}, loss {}  ({})",
            format_latency(&p.net.latency),
            p.net.loss,
            p.about
        );
    }
    Ok(())
}
