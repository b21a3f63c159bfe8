//! Which etcd this is, and which of the simulator's system specs predicts it.
//!
//! `etcd --version` prints `etcd Version: 3.4.23` on its first line (then the Git SHA and the Go
//! version). The specs are `crates/runner/src/systems.rs`' `etcd@3.4` (CheckQuorum, no PreVote)
//! and `etcd@3.5` (PreVote on by default); a version with no spec of its own is refused, naming
//! the nearest, which `--system` can then choose on purpose.

use crate::Error;

/// An etcd release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EtcdVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
}

impl std::fmt::Display for EtcdVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version in `etcd --version`'s output.
pub fn parse_version_output(text: &str) -> Result<EtcdVersion, Error> {
    let bad = || {
        Error::Version(format!(
            "no `etcd Version: X.Y.Z` line in {:?}",
            text.trim()
        ))
    };
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("etcd Version:"))
        .ok_or_else(bad)?;
    let v = line.trim();
    // A pre-release or build suffix (`3.6.0-rc.1`) is not part of the number.
    let core = v.split(['-', '+']).next().unwrap_or(v);
    let parts: Vec<u32> = core
        .split('.')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    match parts.as_slice() {
        [major, minor, patch] => Ok(EtcdVersion {
            major: *major,
            minor: *minor,
            patch: *patch,
        }),
        _ => Err(bad()),
    }
}

/// The system specs a real etcd can be compared with, by minor version.
pub const SPECS: [((u32, u32), &str); 2] = [((3, 4), "etcd@3.4"), ((3, 5), "etcd@3.5")];

/// The system spec of `v`, or an error naming the nearest spec.
pub fn system_for(v: EtcdVersion) -> Result<&'static str, Error> {
    if let Some((_, spec)) = SPECS.iter().find(|(mm, _)| *mm == (v.major, v.minor)) {
        return Ok(spec);
    }
    let nearest = SPECS
        .iter()
        .min_by_key(|((ma, mi), _)| {
            (i64::from(v.major) - i64::from(*ma)).abs() * 100
                + (i64::from(v.minor) - i64::from(*mi)).abs()
        })
        .map(|(_, s)| *s)
        .unwrap_or("etcd@3.5");
    Err(Error::Version(format!(
        "etcd {v} has no system spec of its own (there are {}); the nearest is {nearest}: \
         pass --system {nearest} to compare against it anyway",
        SPECS.map(|(_, s)| s).join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_debians_etcd_and_chooses_its_spec() {
        let out = "etcd Version: 3.4.23\nGit SHA: Not provided (use ./build instead of go build)\nGo Version: go1.19.8\nGo OS/Arch: linux/amd64\n";
        let v = parse_version_output(out).unwrap();
        assert_eq!(v.to_string(), "3.4.23");
        assert_eq!(system_for(v).unwrap(), "etcd@3.4");
        let v35 = parse_version_output("etcd Version: 3.5.17\n").unwrap();
        assert_eq!(system_for(v35).unwrap(), "etcd@3.5");
        let e = system_for(parse_version_output("etcd Version: 3.6.0-rc.1").unwrap());
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("3.6.0") && e.contains("nearest is etcd@3.5"),
            "{e}"
        );
        let e = system_for(parse_version_output("etcd Version: 3.3.27").unwrap());
        assert!(e.unwrap_err().to_string().contains("nearest is etcd@3.4"));
        assert!(parse_version_output("etcdctl version: 3.4.23").is_err());
    }
}
