//! The runs beside a report: the gray sweep (`results/gray`) and the link-failure
//! exploration (`results/explore`), summarised in one guide line each so that the default
//! report's reader learns what partial connectivity does to each protocol without opening
//! them, and follows the link when it matters.
//!
//! Both lines are computed from the companions' own `summary.csv` (definitions in
//! `results/README.md`): for the gray sweep, the trials whose `outcome` is a liveness failure
//! (`outcome_no_leader` + `outcome_livelock` over `measured`), per protocol over every cell;
//! for the exploration, the failing share of the patterns that leave a quorum possible
//! (`covers_failing` over `covers_with_majority`: a class up to isomorphism counts its size) in
//! the directed family of the largest cluster explored, as the exploration's own report
//! computes it. A companion is summarised
//! only when both its `summary.csv` and its report page are there, and only in the reports of
//! other sweeps (not in the gray report, which CI regenerates before the exploration).
//!
//! The gray sweep also answers the questions users of leader election ask most (issue #31):
//! is a lease more available than its store, what does a planned restart cost against a
//! crash, what do a stale connection, mixed timer multipliers and a clock step do. Those lines
//! ([`asked_lines`]) quote the gray sweep's cells at its largest size, rounded as the report
//! rounds every statistic ([`shown`]), and leave out any line whose cells did not run.

use std::path::Path;

use crate::data::{Results, Stat, SummaryRow};
use crate::doc::{spans, Inline};
use crate::quote::shown;

/// One protocol's liveness over the gray sweep.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GrayLiveness {
    /// The protocol spec.
    pub protocol: String,
    /// Measured trials.
    pub measured: u64,
    /// Trials that ended without a settled quorum leader (`no-leader` or `livelock`).
    pub failed: u64,
    /// The first cell (scenario, size) with a failure, in file order.
    pub first: Option<(String, u32)>,
    /// Scenarios it ran.
    pub scenarios: Vec<String>,
}

/// One protocol's failing share over the exploration's directed patterns.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExploreShare {
    /// The protocol spec.
    pub protocol: String,
    /// The cluster size.
    pub nodes: u32,
    /// The pattern family (e.g. `5d-canonical`).
    pub family: String,
    /// Whether the family was sampled.
    pub sampled: bool,
    /// Patterns that leave a quorum possible.
    pub with_majority: u64,
    /// Of those, patterns with no working leader at the end.
    pub failing: u64,
}

fn read_rows(path: &Path) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    crate::liveness::read_rows(path).ok()
}

fn column(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h == name)
}

/// The gray sweep's liveness per protocol, in the order protocols first appear (`None` if the
/// file is missing or lacks a column).
pub(crate) fn gray_liveness(summary: &Path) -> Option<Vec<GrayLiveness>> {
    let (h, rows) = read_rows(summary)?;
    let h = &h;
    let [p, n, sc, measured, no_leader, livelock] = [
        "protocol",
        "nodes",
        "scenario",
        "measured",
        "outcome_no_leader",
        "outcome_livelock",
    ]
    .map(|c| column(h, c));
    let (p, n, sc, measured) = (p?, n?, sc?, measured?);
    let (no_leader, livelock) = (no_leader?, livelock?);
    let num = |r: &Vec<String>, i: usize| r.get(i).and_then(|v| v.parse::<u64>().ok());
    let mut out: Vec<GrayLiveness> = Vec::new();
    for r in &rows {
        let m = num(r, measured).unwrap_or(0);
        if m == 0 {
            continue;
        }
        let proto = r.get(p)?.to_string();
        let failed = num(r, no_leader).unwrap_or(0) + num(r, livelock).unwrap_or(0);
        let i = match out.iter().position(|g| g.protocol == proto) {
            Some(i) => i,
            None => {
                out.push(GrayLiveness {
                    protocol: proto,
                    measured: 0,
                    failed: 0,
                    first: None,
                    scenarios: Vec::new(),
                });
                out.len() - 1
            }
        };
        let g = &mut out[i];
        g.measured += m;
        g.failed += failed;
        let scenario = r.get(sc)?.to_string();
        if failed > 0 && g.first.is_none() {
            g.first = Some((scenario.clone(), r.get(n)?.parse().ok()?));
        }
        if !g.scenarios.contains(&scenario) {
            g.scenarios.push(scenario);
        }
    }
    Some(out)
}

/// The exploration's failing share per protocol, in the directed family (`<n>d-…`) of the
/// largest size each protocol was explored at, counted in patterns (a class up to isomorphism
/// by its size), (`None` if the file is missing or malformed).
pub(crate) fn explore_shares(summary: &Path) -> Option<Vec<ExploreShare>> {
    let (h, rows) = read_rows(summary)?;
    let h = &h;
    // Counted in patterns: a class up to isomorphism by its size (`covers_*`).
    let [p, n, fam, sampled, with_majority, failing] = [
        "protocol",
        "nodes",
        "family",
        "sampled",
        "covers_with_majority",
        "covers_failing",
    ]
    .map(|c| column(h, c));
    let (p, n, fam, sampled) = (p?, n?, fam?, sampled?);
    let (with_majority, failing) = (with_majority?, failing?);
    let mut out: Vec<ExploreShare> = Vec::new();
    for r in &rows {
        let nodes: u32 = r.get(n)?.parse().ok()?;
        let family = r.get(fam)?.to_string();
        if !family.starts_with(&format!("{nodes}d")) {
            continue;
        }
        let num = |i: usize| r.get(i).and_then(|v| v.parse::<u64>().ok());
        let share = ExploreShare {
            protocol: r.get(p)?.to_string(),
            nodes,
            family,
            sampled: r.get(sampled)? == "true",
            with_majority: num(with_majority)?,
            failing: num(failing)?,
        };
        match out.iter().position(|s| s.protocol == share.protocol) {
            Some(i) if out[i].nodes < share.nodes => out[i] = share,
            Some(_) => {}
            None => out.push(share),
        }
    }
    Some(out)
}

/// The failing share in percent, one decimal, as the exploration's report prints it.
fn percent(failing: u64, of: u64) -> String {
    if of == 0 {
        return "–".to_string();
    }
    format!("{:.1} %", failing as f64 * 100.0 / of as f64)
}

/// The guide's line for the gray sweep, fewest failures first (ties keep file order).
pub(crate) fn gray_line(rows: &[GrayLiveness], page: &str) -> Vec<Inline> {
    let mut rows: Vec<&GrayLiveness> = rows.iter().collect();
    rows.sort_by_key(|g| g.failed * 1_000_000 / g.measured.max(1));
    let scenarios = rows.iter().map(|g| g.scenarios.len()).max().unwrap_or(0);
    let mut s = format!(
        "**Gray failures** (partial connectivity, slow and flaky leaders, lost disks: [the gray sweep]({page}), {scenarios} scenarios): trials that ended with no settled quorum leader although a majority was connected (`no-leader` or `livelock`):"
    );
    for (i, g) in rows.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { "; " });
        s.push_str(&format!("`{}` {} of {}", g.protocol, g.failed, g.measured));
        if let Some((sc, n)) = &g.first {
            s.push_str(&format!(", first in `{sc}` at n = {n}"));
        }
    }
    s.push('.');
    spans(&s)
}

/// The guide's line for the exploration, smallest failing share first (ties keep file order).
pub(crate) fn explore_line(rows: &[ExploreShare], page: &str) -> Vec<Inline> {
    let mut rows: Vec<&ExploreShare> = rows.iter().collect();
    rows.sort_by_key(|s| s.failing * 1_000_000 / s.with_majority.max(1));
    let mut s = format!(
        "**Every link-failure pattern** ([the exploration]({page}): one-way link cuts applied to a settled cluster and kept; of the patterns that leave a quorum possible, the share with no working leader at the end):"
    );
    for (i, e) in rows.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { "; " });
        s.push_str(&format!(
            "`{}` {} of {} at n = {} (`{}`{})",
            e.protocol,
            percent(e.failing, e.with_majority),
            e.with_majority,
            e.nodes,
            e.family,
            if e.sampled { ", a sample" } else { "" }
        ));
    }
    s.push_str(". A protocol with a store (the lease) is explored on the links between its members and the store, the only ones it uses.");
    spans(&s)
}

/// The cell of `results` for `protocol` at `nodes` under `scenario` (no varied parameter), if
/// it ran and measured something.
fn cell<'a>(
    results: &'a Results,
    protocol: &str,
    nodes: u32,
    scenario: &str,
) -> Option<&'a SummaryRow> {
    results.summary.iter().find(|r| {
        r.key.protocol == protocol
            && r.key.nodes == nodes
            && r.key.scenario == scenario
            && r.key.params.is_empty()
            && r.ran()
    })
}

/// `protocol`'s `stat` in `scenario` at `nodes`, as the report quotes it, with the spec.
fn quoted(
    results: &Results,
    protocol: &str,
    nodes: u32,
    scenario: &str,
    stat: Stat,
) -> Option<String> {
    let r = cell(results, protocol, nodes, scenario)?;
    r.get(stat)?;
    Some(format!("`{protocol}` {}", shown(results, r, stat)))
}

/// The size the question lines quote: the gray sweep's largest.
fn asked_size(gray: &Results) -> Option<u32> {
    gray.sizes().into_iter().max()
}

/// The guide's answers to the questions users ask most (issue #31), computed from the gray
/// sweep (`gray`, its page at `page`) and, for the cost of a crash that a planned hand-over is
/// compared with, this report's own `leader-crash` (`own`). Each line is there only when the
/// cells it quotes ran; every number is a summary statistic as the report rounds it
/// ([`shown`]), with its 95 % interval where it has one.
pub(crate) fn asked_lines(gray: &Results, own: &Results, page: &str) -> Vec<Vec<Inline>> {
    let Some(n) = asked_size(gray) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let protocols = gray.protocols();
    let list = |scenario: &str, stat: Stat| -> Vec<String> {
        protocols
            .iter()
            .filter_map(|p| quoted(gray, p, n, scenario, stat))
            .collect()
    };
    let at = format!("[gray sweep]({page}), n = {n}");
    // A lease is as available as its store.
    let lost = list("store-quorum-loss", Stat::UnavailableMean);
    let crash = list("store-crash", Stat::UnavailableMean);
    let vanish = list("store-endpoint-vanish", Stat::UnavailableMean);
    if !lost.is_empty() && !crash.is_empty() {
        let vanish = if vanish.is_empty() {
            String::new()
        } else {
            format!(
                "; the endpoint every member uses vanishes silently, as an API server whose node disappears (`store-endpoint-vanish`) {}, for a client leaves that endpoint only after `lease.reconnect_ms` (0 for the scaled `lease`; 45 s for Kubernetes' clients, `k8s-lease`: client-go's HTTP/2 health check)",
                vanish.join(", ")
            )
        };
        out.push(spans(&format!(
            "**A lease is as available as its store** ({at}, mean ms without a quorum leader): store quorum lost (`store-quorum-loss`) {}; one store endpoint down (`store-crash`) {}{vanish} (`+store_nodes=3`: the store a 3-endpoint Raft group).",
            lost.join(", "),
            crash.join(", ")
        )));
    }
    // A planned restart against a crash: each protocol's pair.
    let pairs: Vec<String> = protocols
        .iter()
        .filter_map(|p| {
            let planned = cell(gray, p, n, "planned-handover")?;
            let crashed = cell(own, p, n, "leader-crash")?;
            Some(format!(
                "`{p}` {} ({})",
                shown(gray, planned, Stat::WriteUnavailableMean),
                shown(own, crashed, Stat::WriteUnavailableMean)
            ))
        })
        .collect();
    if !pairs.is_empty() {
        out.push(spans(&format!(
            "**A planned restart** (`planned-handover`: the leader hands over, then stops; {at}, mean ms without a write taken, a crash's (`leader-crash`, this report) in parentheses): {}.",
            pairs.join(", ")
        )));
    }
    // A half-dead connection, mixed timings, clock steps.
    let stale = list("stale-connection", Stat::FailoverP50);
    let mixed = list("mixed-multiplier", Stat::FailoverP50);
    let mut parts = Vec::new();
    if !stale.is_empty() {
        parts.push(format!(
            "stale connections until a keep-alive (`stale-connection`) {}",
            stale.join(", ")
        ));
    }
    if !mixed.is_empty() {
        parts.push(format!(
            "half the nodes on 5× timers (`mixed-multiplier`, Consul's `raft_multiplier`) {}",
            mixed.join(", ")
        ));
    }
    if !parts.is_empty() {
        out.push(spans(&format!(
            "**Transport and timing** ({at}, failover p50 ms after the leader is lost): {}.",
            parts.join("; ")
        )));
    }
    let jump = list("clock-jump-follower", Stat::SplitRate);
    if jump.len() > 1 {
        out.push(spans(&format!(
            "**A clock step** (`clock-jump-follower`, {at}, trials with two leaders at once): {} (`+expiry=renew_time` reads the holder's clock, as some lease libraries do). A leader that keeps writing after its loss: `leader.stop_lag_ms`; a slow disk: `tune`'s disk curve.",
            jump.join(", ")
        )));
    }
    out
}

/// The gray sweep's liveness per protocol beside a report of `results_dir` written to
/// `out_dir`, for the matrix's liveness column: there when the gray sweep's summary and page
/// are ([`guide_lines`]'s condition), never in the gray sweep's or the exploration's own
/// report.
pub(crate) fn gray_beside(results_dir: &Path, out_dir: &Path) -> Vec<GrayLiveness> {
    let own = results_dir.file_name().and_then(|s| s.to_str());
    let (Some(results), Some(reports)) = (results_dir.parent(), out_dir.parent()) else {
        return Vec::new();
    };
    if matches!(own, Some("gray" | "explore")) || !reports.join("gray/REPORT.md").is_file() {
        return Vec::new();
    }
    gray_liveness(&results.join("gray/summary.csv")).unwrap_or_default()
}

/// The companion lines for a report of `results_dir` written to `out_dir`: the gray sweep's
/// and the exploration's, each if its summary and its report page are there; none for the
/// gray sweep's or the exploration's own report.
pub(crate) fn guide_lines(this: &Results, results_dir: &Path, out_dir: &Path) -> Vec<Vec<Inline>> {
    let own = results_dir.file_name().and_then(|s| s.to_str());
    let (Some(results), Some(reports)) = (results_dir.parent(), out_dir.parent()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if matches!(own, Some("gray" | "explore")) {
        return out;
    }
    if reports.join("gray/REPORT.md").is_file() {
        if let Some(rows) = gray_liveness(&results.join("gray/summary.csv")) {
            if !rows.is_empty() {
                out.push(gray_line(&rows, "../gray/REPORT.md"));
            }
        }
    }
    if reports.join("gray/REPORT.md").is_file() {
        if let Ok(gray) = Results::load(&results.join("gray")) {
            out.extend(asked_lines(&gray, this, "../gray/REPORT.md"));
        }
    }
    if reports.join("explore/REPORT.md").is_file() {
        if let Some(rows) = explore_shares(&results.join("explore/summary.csv")) {
            if !rows.is_empty() {
                out.push(explore_line(&rows, "../explore/REPORT.md"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tmp(name: &str, body: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("election-companions-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("summary.csv");
        fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn gray_liveness_sums_failures_per_protocol_and_skips_unmeasured_cells() {
        let p = tmp(
            "gray",
            "protocol,nodes,scenario,net,trials,measured,outcome_stable,outcome_no_leader,outcome_livelock\n\
             raft,3,quorum-loss,lan,0,0,,,\n\
             raft,5,quorum-loss,lan,50,50,40,6,4\n\
             raft,5,chained,lan,50,50,49,0,1\n\
             lease,5,quorum-loss,lan,50,50,50,0,0\n",
        );
        let g = gray_liveness(&p).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].measured, g[0].failed), (100, 11));
        assert_eq!(g[0].first, Some(("quorum-loss".to_string(), 5)));
        assert_eq!(g[0].scenarios, vec!["quorum-loss", "chained"]);
        assert_eq!(
            (g[1].measured, g[1].failed, g[1].first.clone()),
            (50, 0, None)
        );
        let line = crate::doc::plain(&gray_line(&g, "x"));
        // Fewest failures first.
        assert!(
            line.find("lease 0 of 50").unwrap() < line.find("raft 11 of 100").unwrap(),
            "{line}"
        );
    }

    #[test]
    fn explore_takes_the_directed_family_of_the_largest_size() {
        let p = tmp(
            "explore",
            "protocol,nodes,family,sampled,patterns,with_majority,seeds,stable,recovered_after,no_leader,livelock,minority_only,with_stranded,covers,covers_with_majority,covers_failing\n\
             raft,3,3d-all,false,64,37,3,16,14,1,6,0,24,64,37,7\n\
             raft,5,5s-all,false,1024,998,3,120,342,2,534,0,206,1024,998,536\n\
             raft,5,5d-canonical,false,45960,30381,3,2809,9852,1998,15722,0,11925,1048576,700000,400000\n\
             bully,5,5d-sample,true,4096,2697,3,539,147,1422,589,0,669,4096,2697,2011\n",
        );
        let e = explore_shares(&p).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (
                e[0].nodes,
                e[0].family.as_str(),
                e[0].failing,
                e[0].with_majority
            ),
            (5, "5d-canonical", 400000, 700000)
        );
        let line = crate::doc::plain(&explore_line(&e, "x"));
        assert!(line.contains("raft 57.1 % of 700000 at n = 5"), "{line}");
        assert!(
            line.contains("bully 74.6 % of 2697 at n = 5 (5d-sample, a sample)"),
            "{line}"
        );
    }

    #[test]
    fn a_missing_or_malformed_summary_gives_nothing() {
        assert!(gray_liveness(Path::new("/nonexistent/summary.csv")).is_none());
        let p = tmp("bad", "protocol,nodes\nraft,5\n");
        assert!(explore_shares(&p).is_none());
        assert!(gray_liveness(&p).is_none());
    }
}
