//! The default guide's answers to the questions users ask (issue #31), computed from a real
//! gray sweep beside the report: each line is there when its cells ran, names every protocol
//! that ran them, and quotes each cell's own mean from `summary.csv` (rounded as the report
//! rounds a value with its interval: never further than the interval's precision).

use crate::common;

use std::fs;

use election_report::{load_results, render_report, ReportOptions};
use election_runner::SweepSpec;

fn sweep(name: &str, protocols: &[&str], scenarios: &[&str], dir: &std::path::Path) {
    let spec = SweepSpec {
        name: Some(name.into()),
        protocols: Some(protocols.iter().map(|s| s.to_string()).collect()),
        nodes: Some(vec![3]),
        scenarios: Some(scenarios.iter().map(|s| s.to_string()).collect()),
        seeds: Some(3),
        ..SweepSpec::default()
    };
    common::run_small_sweep(&spec, dir, &format!("election-bench sweep --name {name}"));
}

#[test]
fn the_guide_answers_from_the_gray_sweep() {
    let base = common::scratch("asked");
    let protocols = ["raft+pre_vote+check_quorum", "lease", "lease+store_nodes=3"];
    sweep(
        "gray",
        &protocols,
        &[
            "store-quorum-loss",
            "store-crash",
            "planned-handover",
            "stale-connection",
        ],
        &base.join("results/gray"),
    );
    sweep(
        "default",
        &protocols,
        &["leader-crash"],
        &base.join("results/default"),
    );
    let opts = ReportOptions {
        png: false,
        ..ReportOptions::default()
    };
    let (gray, default) = (base.join("results/gray"), base.join("results/default"));
    render_report(&gray, &base.join("reports/gray"), &opts, None).unwrap();
    render_report(&default, &base.join("reports/default"), &opts, None).unwrap();
    let md = fs::read_to_string(base.join("reports/default/REPORT.md")).unwrap();
    let line = |start: &str| {
        md.lines()
            .find(|l| l.contains(start))
            .unwrap_or_else(|| panic!("no line with {start:?} in the guide"))
            .to_string()
    };
    let g = load_results(&gray).unwrap();
    let mean = |p: &str, sc: &str, stat| {
        let r = g
            .summary
            .iter()
            .find(|r| r.key.protocol == p && r.key.scenario == sc)
            .unwrap();
        r.get(stat).unwrap()
    };
    // The number quoted right after `` `p` `` in `line`, close to `want`.
    let quotes = |line: &str, p: &str, want: f64| {
        let at = line
            .find(&format!("`{p}` "))
            .unwrap_or_else(|| panic!("{p} not quoted: {line}"));
        let rest = &line[at + p.len() + 3..];
        let num: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let got: f64 = num.parse().unwrap_or_else(|_| panic!("{p}: {rest}"));
        // Rounded to the interval's precision, never coarser than the value's leading digit.
        let unit = 10f64.powf(want.abs().max(1.0).log10().floor());
        assert!(
            (got - want).abs() <= unit / 2.0 + 1e-9,
            "{p}: quoted {got}, summary {want}: {line}"
        );
    };
    use election_runner::results::Stat;
    let store = line("A lease is as available as its store");
    for p in ["lease", "lease+store_nodes=3"] {
        for sc in ["store-quorum-loss", "store-crash"] {
            let part = if sc == "store-crash" {
                &store[store.find("`store-crash`").unwrap()..]
            } else {
                &store[..store.find("`store-crash`").unwrap()]
            };
            quotes(part, p, mean(p, sc, Stat::UnavailableMean));
        }
    }
    assert!(!store.contains("`raft+pre_vote+check_quorum`"), "{store}");
    let planned = line("A planned restart");
    for p in protocols {
        // `p` planned (crash): the number right after the name is the planned one.
        quotes(
            &planned,
            p,
            mean(p, "planned-handover", Stat::WriteUnavailableMean),
        );
    }
    let transport = line("Transport and timing");
    assert!(
        transport.contains("`raft+pre_vote+check_quorum`"),
        "{transport}"
    );
    // The gray report does not summarise itself.
    let own = fs::read_to_string(base.join("reports/gray/REPORT.md")).unwrap();
    assert!(!own.contains("A lease is as available as its store"));
}
