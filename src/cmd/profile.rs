//! `profile`: a run/sweep/tune config for an etcd cluster from its Prometheus scrapes.

use std::path::PathBuf;

use clap::Args;
use election_runner::results::fmt_ms;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// Prometheus text-format scrapes of the cluster's members (`curl http://MEMBER:2379/metrics`,
    /// or Prometheus' /federate), one or more per member, or directories of *.prom files;
    /// times from sample timestamps or a `# scraped_at_ms MS` line. Each a regular file of at
    /// most 32 MiB.
    #[arg(long = "from-prometheus", value_name = "FILE", num_args = 1.., required = true)]
    pub from_prometheus: Vec<PathBuf>,
    /// The cluster's current --heartbeat-interval, ms [default: etcd's, 100].
    #[arg(long)]
    pub heartbeat_interval: Option<f64>,
    /// The cluster's current --election-timeout, ms [default: etcd's, 1000].
    #[arg(long)]
    pub election_timeout: Option<f64>,
    /// The cluster's --pre-vote, when set [default: its etcd version's: off in 3.4, on from
    /// 3.5].
    #[arg(long, value_name = "BOOL")]
    pub pre_vote: Option<bool>,
    /// The profile's name (its network profile's too).
    #[arg(long, default_value = "etcd-profile")]
    pub name: String,
    /// The config to write; the distribution files go next to it [default:
    /// profiles/<name>/profile.toml].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Read the scrapes, write the profile and its distribution files, and say what was found.
pub fn run(a: ProfileArgs) -> Result<(), CliError> {
    use election_runner::profile;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| profile::default_out(&a.name));
    let mut command = String::from("election-bench profile --from-prometheus");
    for f in &a.from_prometheus {
        command.push_str(&format!(" {}", f.display()));
    }
    if let Some(h) = a.heartbeat_interval {
        command.push_str(&format!(" --heartbeat-interval {h}"));
    }
    if let Some(e) = a.election_timeout {
        command.push_str(&format!(" --election-timeout {e}"));
    }
    if let Some(p) = a.pre_vote {
        command.push_str(&format!(" --pre-vote {p}"));
    }
    command.push_str(&format!(" --name {} --out {}", a.name, out.display()));
    super::dirs::refuse_committed(
        "profile",
        &[super::dirs::parent_of(&out)],
        None,
        "a committed directory holds only what its command generates",
        "leave out --out (profiles/<name>/profile.toml) or give another FILE",
    )?;
    let p = profile::profile(&profile::ProfileOptions {
        files: a.from_prometheus.clone(),
        out,
        name: a.name.clone(),
        heartbeat_ms: a.heartbeat_interval,
        election_timeout_ms: a.election_timeout,
        pre_vote: a.pre_vote,
        command,
    })?;
    out!("{}", p.source.describe());
    out!("cluster size     {} nodes", p.nodes);
    for l in &p.summary {
        out!("{l}");
    }
    match p.source.observed_per_hour() {
        Some((r, lo, hi)) => out!(
            "leader changes   {} in {} h: {:.3} an hour (95 % interval {:.3}-{:.3})",
            p.source.leader_changes,
            fmt_ms(p.source.span_s / 3600.0),
            r,
            lo,
            hi
        ),
        None => out!(
            "leader changes   not observed: {}",
            p.source.no_rate.as_deref().unwrap_or("no time span")
        ),
    }
    out!(
        "profile: {} (use with run, sweep or tune --config)",
        p.config.display()
    );
    Ok(())
}
