//! Help text computed from the catalogs (protocols, scenarios, validate cases), so it cannot
//! fall out of date.

/// The protocols and their options, for `--protocol`'s help.
pub fn protocol_help() -> String {
    let opts: Vec<String> = election_runner::protocol::FAMILIES
        .iter()
        .map(|f| format!("{} (+{})", f.name, f.kind.options().join(", +")))
        .collect();
    let systems: Vec<&str> = election_runner::systems::SYSTEMS
        .iter()
        .map(|s| s.name)
        .collect();
    let bundles: Vec<String> = election_runner::systems::BUNDLES
        .iter()
        .map(|b| {
            let opts: Vec<String> = b
                .rules
                .iter()
                .map(|r| {
                    format!(
                        "{}={}",
                        r.key.split_once('.').map_or(r.key, |k| k.1),
                        r.value
                    )
                })
                .collect();
            format!("{} ({}+{})", b.name, b.family, opts.join("+"))
        })
        .collect();
    format!(
        "Protocol spec: a protocol plus +options, e.g. bully+quorum, raft+pre_vote+check_quorum, \
         raft+timeout_ms=300-600, raft+pre_vote+check_quorum+voters=5 (5 voters, the rest \
         learners), lease+store_nodes=3 (the lease's store a 3-endpoint Raft group), \
         lease+expiry=renew_time+cas=false+on_loss=exit (other lease libraries' rules). \
         Protocols and their options: {}. System specs (raft with a real system's rules and \
         timings, sources in `election-bench params`): {}; and {}",
        opts.join("; "),
        systems.join(", "),
        bundles.join(", ")
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

/// A value parser that takes any string (a spec, a custom scenario of `--config`) but offers
/// shell completion the known values: `completions` writes them into the script, `--help`
/// leaves them out (the help text lists them with their options).
#[derive(Clone, Debug)]
pub struct Candidates(Vec<&'static str>);

impl clap::builder::TypedValueParser for Candidates {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|v| clap::builder::PossibleValue::new(*v)),
        ))
    }
}

/// The protocol specs a shell completes: every family's base name, then the specs of the
/// default sweep and of `explore`, each once.
pub fn protocol_candidates() -> Candidates {
    let mut v: Vec<&'static str> = election_runner::protocol::FAMILIES
        .iter()
        .map(|f| f.name)
        .collect();
    for s in election_runner::plan::DEFAULT_PROTOCOLS
        .into_iter()
        .chain(election_runner::explore::DEFAULT_PROTOCOLS)
        .chain(election_runner::systems::SYSTEMS.iter().map(|s| s.name))
        .chain(election_runner::systems::BUNDLES.iter().map(|b| b.name))
    {
        if !v.contains(&s) {
            v.push(s);
        }
    }
    Candidates(v)
}

/// The scenario names a shell completes (`list`: with `all`, for `--scenarios`).
pub fn scenario_candidates(list: bool) -> Candidates {
    let names = election_runner::scenario::CATALOG.iter().map(|b| b.name);
    Candidates(
        if list { vec!["all"] } else { vec![] }
            .into_iter()
            .chain(names)
            .collect(),
    )
}

/// The built-in network profiles a shell completes.
pub fn net_candidates() -> Candidates {
    Candidates(election_runner::net::BUILTIN_NETS.to_vec())
}
