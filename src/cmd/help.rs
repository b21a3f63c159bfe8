//! Help text computed from the catalogs (protocols, scenarios, validate cases), so it cannot
//! fall out of date.

/// The protocols and their options, for `--protocol`'s help.
pub fn protocol_help() -> String {
    let opts: Vec<String> = election_runner::protocol::FAMILIES
        .iter()
        .map(|f| format!("{} (+{})", f.name, f.kind.options().join(", +")))
        .collect();
    format!(
        "Protocol spec: a protocol plus +options, e.g. bully+quorum, raft+pre_vote+check_quorum, \
         raft+timeout_ms=300-600, raft+pre_vote+check_quorum+voters=5 (5 voters, the rest \
         learners), lease+store_nodes=3 (the lease's store a 3-endpoint Raft group), \
         lease+expiry=renew_time+cas=false+on_loss=exit (other lease libraries' rules). \
         Protocols and their options: {}",
        opts.join("; ")
    )
}

/// `validate --help`'s end: the PASS rule, every case and examples.
pub fn validate_help() -> String {
    let cases = election_runner::validate::CASES;
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut s = format!("{}\n\nCases:\n", election_runner::validate::PASS_RULE);
    for c in cases {
        s.push_str(&format!("  {:width$}  {}\n", c.name, c.claim));
    }
    s.push_str(
        "\nExamples:
  election-bench validate --quick                       # every case, fewer seeds (CI)
  election-bench validate --case chang-roberts-worst --case etcd-3-1-down",
    );
    s
}

/// The built-in scenarios, for `--scenario`'s help.
pub fn scenario_help(list: bool) -> String {
    let names: Vec<&str> = election_runner::scenario::CATALOG
        .iter()
        .map(|b| b.name)
        .collect();
    format!(
        "{}: {}{}, or a custom scenario of --config (see `election-bench scenarios`)",
        if list {
            "Scenario names, or all"
        } else {
            "Scenario name"
        },
        if list { "all, " } else { "" },
        names.join(", ")
    )
}

/// The network profiles, for `--net`'s help (`list`: `--nets`'s).
pub fn net_help(list: bool) -> String {
    let names = election_runner::net::BUILTIN_NETS.join(", ");
    if list {
        format!("Network profiles: {names}, or custom ones of --config [default: lan]")
    } else {
        format!(
            "Network profile: {names}, or a custom one of --config (see `election-bench params`) [default: the --config's only net, else lan]"
        )
    }
}
