//! `live`: a scenario over real UDP sockets, with the same protocol code.

use std::path::PathBuf;

use clap::Args;
use election_runner::results::fmt_ms;

use super::dirs::{fresh_dir, refuse_committed, scratch_dir};
use super::CellArgs;
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct LiveCliArgs {
    #[command(flatten)]
    pub cell: CellArgs,
    /// Trials to run (seeds first-seed, first-seed + 1, ...); each stops itself.
    #[arg(long, default_value_t = 5)]
    pub trials: u64,
    /// The first seed (fault instant, protocol randomness, loss draws).
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Where trials.csv and summary.csv go, rewritten as each trial finishes [default: a new
    /// directory per run under the system's temporary directory, printed].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Emulate this network profile's latency and loss on top of loopback.
    #[arg(long)]
    pub net: Option<String>,
    /// Address the nodes bind; loopback unless given explicitly.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Set a parameter: key=value (repeatable; see `election-bench params`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// `live`: the trials over real sockets, a line per trial as it finishes, then their summary.
pub fn run(a: LiveCliArgs) -> Result<(), CliError> {
    let mut args = election_live::LiveArgs::new(&a.cell.protocol, a.cell.nodes, &a.cell.scenario);
    args.trials = a.trials;
    args.first_seed = a.first_seed;
    if let Some(out) = &a.out {
        refuse_committed(
            "live",
            &[out],
            None,
            "its trials.csv and summary.csv would replace the committed files",
            "give another --out DIR, e.g. results/live",
        )?;
    }
    let fresh = a.out.is_none();
    args.out = match a.out {
        Some(out) => out,
        None => fresh_dir(&scratch_dir("live"))?,
    };
    args.net = a.net;
    args.bind = a.bind;
    args.params = election_runner::config::key_values(&a.set)?;
    // Said first, so a run stopped early still says where its finished trials are.
    eprintln!(
        "live: rows into {} as each trial finishes",
        args.out.display()
    );
    let out = election_live::run_live(&args, |row, report| {
        // A progress line: a write error here shows again, and ends the command, at the
        // summary.
        use std::io::Write as _;
        let h = &report.health;
        let _ = writeln!(
            std::io::stdout(),
            "seed {}: converged {} leader {} failover_ms {} split_brain {} datagrams_rejected {}",
            row.seed,
            row.converged,
            row.leader.map_or("-".into(), |l| l.to_string()),
            row.failover_ms.map_or("-".into(), fmt_ms),
            row.split_brain,
            h.rejected(),
        );
        // Something other than the trial's own nodes spoke to them (or a datagram was
        // mangled): said with the trial, not only summed at the end.
        if h.rejected() > 0 {
            let _ = writeln!(
                std::io::stdout(),
                "  seed {}: its nodes rejected {} datagrams ({}); first: {}",
                row.seed,
                h.rejected(),
                rejected_breakdown(h),
                h.notes.first().map_or("-", String::as_str),
            );
        }
    });
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            // A run refused before its first trial leaves no empty directory behind (a
            // directory with finished trials is kept: remove_dir only removes an empty one).
            if fresh {
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(e.into());
        }
    };
    print_live_summary(&args, &out)?;
    for f in &out.files {
        out!("wrote {}", f.display());
    }
    Ok(())
}

/// The end of `live`: what the trials add up to, in the words of `run`'s summary.
fn print_live_summary(
    args: &election_live::LiveArgs,
    out: &election_live::LiveOutcome,
) -> Result<(), CliError> {
    use election_runner::stats::percentile;
    let rows = &out.rows;
    let n = rows.len();
    let converged = rows.iter().filter(|r| r.converged).count();
    let mut failover: Vec<f64> = rows.iter().filter_map(|r| r.failover_ms).collect();
    failover.sort_by(f64::total_cmp);
    let ms = |p: f64| percentile(&failover, p).map_or("-".into(), |v| format!("{} ms", fmt_ms(v)));
    let split = rows.iter().filter(|r| r.split_brain).count();
    let stale: u64 = rows.iter().filter_map(|r| r.writes_stale).sum();
    let msgs: Vec<f64> = rows.iter().map(|r| r.msgs_election as f64).collect();
    out!(
        "summary          {} | {} nodes | {} | {n} live trials",
        args.protocol,
        args.nodes,
        args.scenario
    );
    out!("converged        {converged} of {n}");
    out!(
        "failover         p50 {}, p95 {} (over the {} trials with a quorum leader after the fault)",
        ms(0.5),
        ms(0.95),
        failover.len()
    );
    out!(
        "election msgs    mean {}",
        election_runner::stats::mean(&msgs).map_or("-".into(), |m| format!("{m:.1}"))
    );
    out!("split brain      {split} of {n} trials; {stale} stale writes in all");
    let touched = out
        .reports
        .iter()
        .filter(|r| r.health.rejected() > 0)
        .count();
    out!(
        "datagrams_rejected {} in {touched} of {n} trials ({})",
        out.health.rejected(),
        rejected_breakdown(&out.health)
    );
    Ok(())
}

/// The rejected datagrams by reason, in `Health`'s words.
fn rejected_breakdown(h: &election_live::Health) -> String {
    format!(
        "{} from non-members, {} impersonating another member, {} malformed, \
         {} failing authentication, {} replayed, {} undecodable",
        h.rejected_non_member,
        h.rejected_impersonation,
        h.rejected_frame,
        h.rejected_forged,
        h.rejected_replay,
        h.rejected_payload
    )
}
