//! `run`: one trial, printed for a reader (or as one JSON object), with its event log on request.

use clap::Args;
use election_runner::plan::TrialRun;
use election_runner::results::fmt_ms;

use super::TrialArgs;
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub trial: TrialArgs,
    /// Print one JSON object whose keys are the trials.csv columns.
    #[arg(long)]
    pub json: bool,
    /// Also print every simulator event (status changes, faults; with --trace-messages, messages too).
    #[arg(long)]
    pub trace: bool,
    /// With --trace: include message sends, deliveries and drops.
    #[arg(long, requires = "trace")]
    pub trace_messages: bool,
}

/// `run`: one trial, in words or as one JSON object, then its event log if `--trace`.
pub fn run(a: RunArgs) -> Result<(), CliError> {
    let cell = a.trial.cell("run")?;
    let t = cell.run(a.trial.seed, a.trace)?;
    if a.json {
        out!("{}", t.row.to_json(&[]));
    } else {
        print_trial(&t)?;
    }
    if a.trace {
        use election_sim::TraceKind;
        for e in &t.report.trace {
            let message = matches!(
                e.what,
                TraceKind::Send(_) | TraceKind::Deliver(_) | TraceKind::Drop(..)
            );
            if a.trace_messages || !message {
                out!("{}", election_report::text_event(e));
            }
        }
    }
    Ok(())
}

fn print_trial(t: &TrialRun) -> Result<(), CliError> {
    let r = &t.row;
    let m = &t.report.metrics;
    let opt = |x: Option<f64>| x.map(|v| format!("{} ms", fmt_ms(v))).unwrap_or("-".into());
    out!(
        "{} | {} nodes | {} | {} | seed {}",
        r.protocol,
        r.nodes,
        r.scenario,
        r.net,
        r.seed
    );
    // A scenario with a reference fault is measured from that fault, not the first.
    let measured = match t.sim.reference_fault {
        None => " (every time below is measured from it)",
        Some(_) => "",
    };
    match (t.drawn_fault_ms, t.fault_instant_ms) {
        (None, _) => out!("fault instant    none: times are measured from boot at 0 ms"),
        (Some(drawn), Some(f)) if f > drawn => out!(
            "fault instant    {} ms{measured}: drawn {} ms, \
             then {} ms waiting for a quorum leader",
            fmt_ms(f),
            fmt_ms(drawn),
            fmt_ms(f - drawn)
        ),
        (Some(_), Some(f)) => out!("fault instant    {} ms{measured}", fmt_ms(f)),
        (Some(drawn), None) => out!(
            "fault instant    NONE: drawn {} ms, but no fault fired; times are measured from {} ms",
            fmt_ms(drawn),
            fmt_ms(m.reference_ms)
        ),
    }
    if let (Some(k), Some(_)) = (t.sim.reference_fault, t.fault_instant_ms) {
        out!(
            "reference        {} ms: when the scenario's reference fault, faults[{k}], fired \
             (every time below is measured from it)",
            fmt_ms(m.reference_ms)
        );
    }
    if let Some(l) = t.leader_at_fault {
        out!("leader then      node {l}");
    }
    if r.faults_skipped > 0 {
        out!(
            "FAULTS SKIPPED   {} of the scenario's actions ({} faults, and any raft.lagging) did \
             not apply, the reasons in the fault log below: this trial did not undergo {} as \
             described, and its times do not measure it",
            r.faults_skipped,
            t.sim.faults.len(),
            r.scenario
        );
    }
    if r.budget_exceeded {
        out!(
            "BUDGET EXCEEDED  the trial used up its work budget of {} (events + messages) and was stopped at {} ms; raise work_budget to run it to the end",
            t.sim.budget,
            fmt_ms(m.end_ms)
        );
    }
    match (r.converged, r.leader) {
        (true, Some(l)) => out!("converged        yes: node {l} is the quorum leader"),
        _ if r.budget_exceeded => {
            out!("converged        NO: stopped by the work budget before the trial could end")
        }
        _ => out!("converged        NO: no quorum leader at the end of the trial"),
    }
    out!(
        "outcome          {}{}",
        r.outcome.name(),
        match (r.outcome, r.recovered_timeouts) {
            (election_sim::Outcome::RecoveredAfter, Some(k)) => {
                format!(" after {k} election timeout(s)")
            }
            (election_sim::Outcome::NoLeader, _) => {
                " (a quorum leader was possible and none was won: a liveness failure)".to_string()
            }
            (election_sim::Outcome::Livelock, _) => {
                " (quorum leadership formed after the last fault but never held the hold span: a liveness failure)".to_string()
            }
            (election_sim::Outcome::MinorityOnly, _) => {
                " (no member reaches a majority at the end: no quorum leader possible)".to_string()
            }
            _ => String::new(),
        }
    );
    out!("detect           {}", opt(r.detect_ms));
    out!(
        "failover         {}",
        match r.failover_ms {
            Some(0.0) => "0 ms: a quorum leader right after the fault".to_string(),
            Some(v) => format!("{} ms (the first quorum leader after the fault)", fmt_ms(v)),
            None => "-: no quorum leader after the fault".to_string(),
        }
    );
    out!(
        "elect            {} (the final quorum leader, followed by every member that reaches it)",
        opt(r.elect_ms)
    );
    out!(
        "unavailable      {} ms without a quorum leader",
        fmt_ms(r.unavailable_ms)
    );
    out!(
        "stranded         {} node-ms (members without a leader they reach); {} at the end",
        fmt_ms(r.stranded_node_ms),
        r.stranded_nodes
    );
    out!(
        "split brain      {} (most acting leaders at once: {}; {} ms with several; minority leader {} ms; paused leader {} ms)",
        if r.split_brain { "YES" } else { "no" },
        r.max_leaders,
        fmt_ms(r.split_brain_ms),
        fmt_ms(r.minority_leader_ms),
        fmt_ms(r.paused_leader_ms)
    );
    match (r.writes_ok, r.writes_stale, r.writes_fenced) {
        (Some(ok), Some(stale), Some(fenced)) => {
            let w = &t.sim.workload;
            let lag = if w.stop_lag.is_zero() {
                String::new()
            } else {
                format!(
                    ", deposed leaders write on for {}",
                    election_runner::net::format_latency(&w.stop_lag)
                )
            };
            out!(
                "writes           {ok} ok, {stale} STALE (taken from a deposed leader), {fenced} fenced; \
                 stale window {} ms, no write taken for {} ms (every {} ms, fencing {}, commit at the {}{lag})",
                fmt_ms(r.stale_window_ms.unwrap_or(0.0)),
                fmt_ms(r.write_unavailable_ms.unwrap_or(0.0)),
                fmt_ms(w.interval.map_or(0.0, |d| d.as_secs_f64() * 1e3)),
                w.fencing.name(),
                w.commit.name()
            );
        }
        _ => out!("writes           - (no workload: workload.interval_ms = 0)"),
    }
    out!(
        "elections        {} started, {} leader changes, {} same-epoch leaders",
        r.elections_started,
        r.leader_changes,
        r.same_epoch_leaders
    );
    out!(
        "messages         election window: {} (election {}, reply {}, leader {}) + heartbeat {}",
        r.msgs_election,
        r.msgs_election_req,
        r.msgs_reply,
        r.msgs_leader,
        r.msgs_heartbeat
    );
    // `msgs_total` counts the protocol's messages only; the workload's are beside it, never
    // in it (results/README.md), so they are printed after it as an addition, not a part.
    out!(
        "                 whole trial: {} protocol messages, {} bytes",
        r.msgs_total,
        r.bytes_total
    );
    if r.msgs_workload > 0 {
        out!(
            "                 + workload: {} messages (writes and acknowledgements; in neither count above)",
            r.msgs_workload
        );
    }
    out!(
        "trial ended at   {} ms ({} events)",
        fmt_ms(m.end_ms),
        t.report.events
    );
    if !m.fault_log.is_empty() {
        out!("faults:");
        for (at, applied) in &m.fault_log {
            let at = fmt_ms(at.as_millis_f64());
            match applied {
                election_sim::Applied::Skipped(why) => out!("  {at:>10} ms  SKIPPED: {why}"),
                other => out!("  {at:>10} ms  {}", election_report::text_fault(other)),
            }
        }
    }
    Ok(())
}
