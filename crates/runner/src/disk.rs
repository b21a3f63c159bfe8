//! Disk presets: `node.disk = NAME` picks `node.fsync_ms` (the stable-storage write latency,
//! a log-normal distribution) from a published figure, so "is my disk good enough?" can be
//! asked without measuring one first. An explicit `node.fsync_ms` wins over the preset.
//!
//! Every preset is log-normal (`lognormal:MEDIAN:SIGMA`, ms) and derived from a cited figure
//! by one of two rules, said per preset:
//!
//! * **two figures** (a typical write and a 99th percentile): the median is the typical
//!   write and `SIGMA = ln(p99 / median) / z₀.₉₉`, `z₀.₉₉ = 2.3263`, so the 99th percentile is
//!   the cited one;
//! * **one figure**: `SIGMA` = 0.5, the shape of the `server` default (`lognormal:2:0.5`),
//!   which no source gives; the figure sets the median (a typical or average write) or,
//!   when it is an upper bound on every write ("single-digit milliseconds"), the 99th
//!   percentile: `MEDIAN = p99 / e^(2.3263 × 0.5)`. The tail of such a preset is the model's
//!   assumption, not the source's; `tune`'s disk curve shows what the tail does.
//!
//! etcd's own line is a 99th percentile of `etcd_disk_wal_fsync_duration_seconds` under
//! 10 ms ([`ETCD_P99_MS`]). The presets, by their p99 ([`Disk::p99_ms`]):
//!
//! | preset | distribution | p99 | source and rule |
//! |---|---|---|---|
//! | `aws-io2` | `lognormal:0.5:0.5` | 1.6 ms | AWS EBS user guide, "Amazon EBS optimization": io2 Block Express volumes "deliver an average latency of under 500 microseconds for 16KiB I/O operations"; one figure, taken as the median (the mean is then 0.57 ms: the slow side) |
//! | `etcd-ssd` | `lognormal:2:0.5` | 6.4 ms | etcd op-guide "Hardware recommendations" (Disks): "500 sequential IOPS (e.g., a typical local SSD ...)" for heavily loaded clusters, 1 / 500 s = 2 ms a write (OpenShift's "Recommended etcd practices": "sequential 500 IOPS of 8000 bytes (2 ms)"); one figure, the median. It is the `server` default |
//! | `aws-gp3` | `lognormal:3.12:0.5` | 10 ms | AWS EBS user guide, "General Purpose SSD volumes": gp3 volumes "deliver single-digit millisecond latency"; one figure, an upper bound, taken as the p99 (10 ms) |
//! | `etcd-p99-limit` | `lognormal:2:0.692` | 10 ms | a disk exactly at etcd's line: the `etcd-ssd` median and a p99 of 10 ms (etcd's guidance that `wal_fsync_duration_seconds` p99 stay under 10 ms, as quoted by Red Hat's "How to use 'fio' to check etcd disk performance in OpenShift" and by etcd maintainers, etcd-io/etcd discussion 17305); two figures |
//! | `openshift-fio-limit` | `lognormal:2:0.99` | 20 ms | the disk OpenShift's fio check still passes: "99th percentile of the fsync is within the recommended threshold: - 20 ms" (OpenShift 4 docs, etcd, "Effects of disk latency on etcd"), with the `etcd-ssd` median; two figures |
//! | `etcd-hdd` | `lognormal:20:0.5` | 64 ms | etcd op-guide "Hardware recommendations": "Typically 50 sequential IOPS (e.g., a 7200 RPM disk) is required", 1 / 50 s = 20 ms a write; one figure, the median |
//!
//! (`p99` is `MEDIAN × e^(2.3263 × SIGMA)`, rounded; [`Disk::p99_ms`] computes it.)

use election_sim::Latency;

/// The 99th percentile of a WAL fsync etcd's guidance asks to stay under, ms.
pub const ETCD_P99_MS: f64 = 10.0;

/// The standard normal's 0.99 quantile.
pub const Z99: f64 = 2.326_347_874_040_841;

/// One disk preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Disk {
    /// Its name, the value of `node.disk`.
    pub name: &'static str,
    /// The median write, ms.
    pub median_ms: f64,
    /// The log-normal's sigma.
    pub sigma: f64,
    /// Where the figure comes from and how the distribution follows from it.
    pub source: &'static str,
}

impl Disk {
    /// The `node.fsync_ms` value it stands for (`lognormal:MEDIAN:SIGMA`).
    pub fn fsync(&self) -> String {
        format!("lognormal:{}:{}", self.median_ms, self.sigma)
    }

    /// The distribution.
    pub fn latency(&self) -> Latency {
        Latency::LogNormal {
            median_ms: self.median_ms,
            sigma: self.sigma,
        }
    }

    /// Its 99th percentile, ms.
    pub fn p99_ms(&self) -> f64 {
        self.median_ms * (Z99 * self.sigma).exp()
    }
}

/// The median of a log-normal with shape `sigma` whose 99th percentile is `p99_ms`.
pub fn median_for_p99(p99_ms: f64, sigma: f64) -> f64 {
    p99_ms / (Z99 * sigma).exp()
}

/// The shape of a log-normal with median `median_ms` whose 99th percentile is `p99_ms`.
pub fn sigma_for_p99(median_ms: f64, p99_ms: f64) -> f64 {
    (p99_ms / median_ms).ln() / Z99
}

/// Every preset, by p99 (see the module docs for each source and rule). The numbers are the
/// rules' results rounded to three significant digits; `tests` recompute them.
pub const DISKS: [Disk; 6] = [
    Disk {
        name: "aws-io2",
        median_ms: 0.5,
        sigma: 0.5,
        source: "AWS EBS user guide, Amazon EBS optimization: io2 Block Express, average latency under 500 µs for 16 KiB I/O; the average as the median, sigma 0.5",
    },
    Disk {
        name: "etcd-ssd",
        median_ms: 2.0,
        sigma: 0.5,
        source: "etcd op-guide, Hardware recommendations: 500 sequential IOPS (a typical local SSD) = 2 ms a write; the median, sigma 0.5 (the server default)",
    },
    Disk {
        name: "aws-gp3",
        median_ms: 3.12,
        sigma: 0.5,
        source: "AWS EBS user guide, General Purpose SSD volumes: gp3 delivers single-digit millisecond latency; 10 ms as the p99, sigma 0.5",
    },
    Disk {
        name: "etcd-p99-limit",
        median_ms: 2.0,
        sigma: 0.692,
        source: "etcd's guidance, WAL fsync p99 under 10 ms (Red Hat KB 6970109, etcd-io/etcd discussion 17305), with the etcd-ssd median of 2 ms",
    },
    Disk {
        name: "openshift-fio-limit",
        median_ms: 2.0,
        sigma: 0.99,
        source: "OpenShift docs, Effects of disk latency on etcd: fio's fsync p99 within the 20 ms threshold, with the etcd-ssd median of 2 ms",
    },
    Disk {
        name: "etcd-hdd",
        median_ms: 20.0,
        sigma: 0.5,
        source: "etcd op-guide, Hardware recommendations: 50 sequential IOPS required (a 7200 RPM disk) = 20 ms a write; the median, sigma 0.5",
    },
];

/// The preset names, in [`DISKS`] order: `node.disk`'s valid values.
pub const DISK_NAMES: &[&str] = &[
    "aws-io2",
    "etcd-ssd",
    "aws-gp3",
    "etcd-p99-limit",
    "openshift-fio-limit",
    "etcd-hdd",
];

/// The preset named `name`.
pub fn named(name: &str) -> Option<&'static Disk> {
    DISKS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig3(v: f64) -> f64 {
        crate::tune::sig3(v)
    }

    #[test]
    fn names_match_the_table() {
        let names: Vec<&str> = DISKS.iter().map(|d| d.name).collect();
        assert_eq!(names, DISK_NAMES);
        // By p99, as documented.
        assert!(DISKS.windows(2).all(|w| w[0].p99_ms() <= w[1].p99_ms()));
    }

    /// Each preset is its rule applied to its cited figure.
    #[test]
    fn presets_follow_their_rules() {
        let d = |n| named(n).unwrap();
        // One figure, the median.
        assert_eq!((d("aws-io2").median_ms, d("aws-io2").sigma), (0.5, 0.5));
        assert_eq!(
            (d("etcd-ssd").median_ms, d("etcd-ssd").sigma),
            (1000.0 / 500.0, 0.5)
        );
        assert_eq!(
            (d("etcd-hdd").median_ms, d("etcd-hdd").sigma),
            (1000.0 / 50.0, 0.5)
        );
        // One figure, an upper bound taken as the p99.
        assert_eq!(d("aws-gp3").median_ms, sig3(median_for_p99(10.0, 0.5)));
        // Two figures.
        assert_eq!(
            d("etcd-p99-limit").sigma,
            sig3(sigma_for_p99(2.0, ETCD_P99_MS))
        );
        assert_eq!(
            d("openshift-fio-limit").sigma,
            sig3(sigma_for_p99(2.0, 20.0))
        );
        let p99 = |n| (d(n).p99_ms() * 10.0).round() / 10.0;
        assert_eq!(p99("aws-io2"), 1.6);
        assert_eq!(p99("etcd-ssd"), 6.4);
        assert_eq!(p99("aws-gp3"), 10.0);
        assert_eq!(p99("etcd-p99-limit"), 10.0);
        assert_eq!(p99("openshift-fio-limit"), 20.0);
        assert_eq!(p99("etcd-hdd"), 64.0);
    }
}
