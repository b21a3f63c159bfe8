//! Disk presets (issue #31): `node.disk = NAME` resolves `node.fsync_ms` to the log-normal
//! derived from the preset's cited figure (`crates/runner/src/disk.rs`); an explicit
//! `node.fsync_ms` wins; an unknown preset is refused naming `node.disk`, the value and the
//! valid names; and tune's disk curve runs each preset's distribution with a write load.

use election_runner::disk::{named, DISKS, ETCD_P99_MS};
use election_runner::net::NetProfile;
use election_runner::params::{canonical, lookup, ParamMap, Resolved};
use election_sim::Latency;

fn resolve(pairs: &[(&'static str, &str)]) -> Resolved {
    let mut m = ParamMap::new();
    for &(k, v) in pairs {
        m.insert(k, canonical(lookup(k).unwrap(), v).unwrap());
    }
    Resolved::resolve(&NetProfile::builtin("lan").unwrap(), &m).unwrap()
}

/// Each preset is the log-normal its source gives: etcd's 500 sequential IOPS (2 ms a write)
/// and 50 (20 ms), AWS io2's 500 µs average, gp3's single-digit milliseconds as a 10 ms p99,
/// and the two p99 lines (etcd's 10 ms, OpenShift's fio 20 ms) over etcd's 2 ms median.
#[test]
fn presets_resolve_to_their_cited_distributions() {
    let want = [
        ("aws-io2", 0.5, 0.5),
        ("etcd-ssd", 2.0, 0.5),
        ("aws-gp3", 3.12, 0.5),
        ("etcd-p99-limit", 2.0, 0.692),
        ("openshift-fio-limit", 2.0, 0.99),
        ("etcd-hdd", 20.0, 0.5),
    ];
    assert_eq!(DISKS.len(), want.len());
    for (name, median_ms, sigma) in want {
        let r = resolve(&[("node.disk", name)]);
        assert_eq!(
            r.node.fsync,
            Some(Latency::LogNormal { median_ms, sigma }),
            "{name}"
        );
        // Also on ideal nodes: the disk is named, so it is not ideal's constant 0.
        let r = resolve(&[("node.disk", name), ("node.profile", "ideal")]);
        assert_eq!(r.node.fsync, Some(Latency::LogNormal { median_ms, sigma }));
    }
    let p99 = |n: &str| named(n).unwrap().p99_ms();
    assert!((p99("etcd-p99-limit") - ETCD_P99_MS).abs() < 0.01);
    assert!((p99("aws-gp3") - 10.0).abs() < 0.05);
    assert!((p99("openshift-fio-limit") - 20.0).abs() < 0.05);
    assert!(p99("etcd-ssd") < ETCD_P99_MS && p99("etcd-hdd") > ETCD_P99_MS);
    // The server default is etcd-ssd, and unset stays the default.
    assert_eq!(
        resolve(&[]).node.fsync,
        resolve(&[("node.disk", "etcd-ssd")]).node.fsync
    );
}

#[test]
fn an_explicit_fsync_wins_over_the_preset() {
    let r = resolve(&[("node.disk", "etcd-hdd"), ("node.fsync_ms", "constant:3")]);
    assert_eq!(r.node.fsync, Some(Latency::Constant { ms: 3.0 }));
}

#[test]
fn an_unknown_preset_is_refused_by_name() {
    let e = canonical(lookup("node.disk").unwrap(), "nvme")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("node.disk = \"nvme\"") && e.contains("etcd-ssd") && e.contains("aws-io2"),
        "{e}"
    );
}

/// The disk curve's cells: the preset's fsync replaces any given, and without a workload
/// in `--set` the curve writes every 100 ms with majority commit (tune's own run writes
/// nothing); a workload given with `--set` is kept.
#[test]
fn the_disk_curve_runs_each_preset_with_a_write_load() {
    use election_runner::tune::{disk_params, TuneOptions};
    let mut o = TuneOptions::defaults("t");
    o.set = vec!["node.fsync_ms=constant:1".into()];
    let hdd = named("etcd-hdd").unwrap();
    let p = disk_params(&o, hdd);
    assert!(
        p.contains(&"node.fsync_ms=lognormal:20:0.5".to_string()),
        "{p:?}"
    );
    assert!(
        !p.contains(&"node.fsync_ms=constant:1".to_string()),
        "{p:?}"
    );
    assert!(p.contains(&"workload.interval_ms=100".to_string()), "{p:?}");
    assert!(p.contains(&"workload.commit=majority".to_string()), "{p:?}");
    assert!(!p.contains(&"workload.interval_ms=0".to_string()), "{p:?}");
    o.set = vec!["workload.interval_ms=10".into()];
    let p = disk_params(&o, hdd);
    assert!(p.contains(&"workload.interval_ms=10".to_string()), "{p:?}");
    assert!(
        !p.iter()
            .any(|a| a == "workload.interval_ms=100" || a == "workload.commit=majority"),
        "{p:?}"
    );
}
