//! Reading a traced [`TrialReport`]: the status changes and sends the simulator records when
//! [`SimConfig::trace`](election_sim::SimConfig::trace) is on, replayed into who led when and
//! what was sent.

use election_core::{Role, Status, Time};
use election_sim::{TraceKind, TrialReport};

/// Milliseconds as a simulator instant (rounded to the nanosecond).
pub fn at(ms: f64) -> Time {
    Time((ms * 1e6).round() as u64)
}

/// Messages of `kind` sent at or after `from`.
pub fn sent_since(report: &TrialReport, kind: &str, from: Time) -> usize {
    report
        .trace
        .iter()
        .filter(|e| e.at >= from && matches!(&e.what, TraceKind::Send(m) if m.kind == kind))
        .count()
}

/// Every node's status at instant `t` (after all events at `t`), replayed from the trace.
pub fn statuses_at(report: &TrialReport, t: Time) -> Vec<Option<Status>> {
    let mut st = vec![None; report.final_status.len()];
    for e in report.trace.iter().take_while(|e| e.at <= t) {
        if let TraceKind::Status { node, status } = &e.what {
            st[node.index()] = *status;
        }
    }
    st
}

/// The nodes (their ids) in the leader role at instant `t`.
pub fn leaders_at(report: &TrialReport, t: Time) -> Vec<u32> {
    statuses_at(report, t)
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_some_and(|s| s.role == Role::Leader))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Instants at or after `from` at which `node` entered the leader role.
pub fn became_leader(report: &TrialReport, node: u32, from: Time) -> Vec<Time> {
    report
        .trace
        .iter()
        .filter(|e| e.at >= from)
        .filter_map(|e| match &e.what {
            TraceKind::Status {
                node: who,
                status: Some(s),
            } if who.0 == node && s.role == Role::Leader => Some(e.at),
            _ => None,
        })
        .collect()
}

/// The most nodes in the leader role at once during `[from, to)`.
pub fn max_leaders_between(report: &TrialReport, from: Time, to: Time) -> usize {
    let mut st = statuses_at(report, from);
    let count = |st: &[Option<Status>]| {
        st.iter()
            .filter(|s| s.is_some_and(|s| s.role == Role::Leader))
            .count()
    };
    let mut max = count(&st);
    for e in report.trace.iter().filter(|e| e.at > from && e.at < to) {
        if let TraceKind::Status { node, status } = &e.what {
            st[node.index()] = *status;
            max = max.max(count(&st));
        }
    }
    max
}
