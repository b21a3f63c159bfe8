//! Where commands write: the committed directories and the guard that keeps a non-default run
//! out of them, and scratch directories for output nobody asked to keep.

use std::path::PathBuf;

use election_runner::Error;

/// The output directories committed to the repository (`.gitignore` lists the same ones; every
/// other directory under `results/` and `reports/` is ignored by git).
pub const COMMITTED_DIRS: [&str; 12] = [
    "results/default",
    "results/gray",
    "results/explore",
    "results/reference",
    "results/reality",
    "reports/default",
    "reports/gray",
    "reports/explore",
    "reports/reference",
    "reports/tune-default",
    "reports/calibration",
    "reports/reality",
];

/// The committed directory `dir` names (relative to the working directory, as the defaults
/// are), if it is one.
pub fn committed_dir(dir: &std::path::Path) -> Option<&'static str> {
    let clean: PathBuf = dir
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    COMMITTED_DIRS
        .into_iter()
        .find(|c| clean == std::path::Path::new(c))
}

/// Refuses (exit 2) a run whose options are not the committed run's from writing into a
/// committed directory, unless `--force`: the committed output is regenerated only on purpose.
pub fn guard_committed(
    command: &str,
    dirs: &[&std::path::Path],
    same_as_committed: bool,
    force: bool,
    elsewhere: &str,
) -> Result<(), Error> {
    if same_as_committed || force {
        return Ok(());
    }
    match dirs.iter().find_map(|d| committed_dir(d)) {
        Some(c) => Err(Error::Usage(format!(
            "{command} with options other than the defaults would overwrite the committed {c}: \
             {elsewhere}, or --force to replace the committed output"
        ))),
        None => Ok(()),
    }
}

/// Refuses (exit 2) any write into a committed directory, for output that no rerun reproduces
/// byte for byte (`calibrate`'s live measurements) or that no command's defaults put there
/// (`live`, `trace`, `profile` given such a path): `what` says why, `elsewhere` what to do
/// instead. `force`: `Some(true)` allows it, `None` when the command has no `--force` (its
/// output never belongs in a committed directory).
pub fn refuse_committed(
    command: &str,
    dirs: &[&std::path::Path],
    force: Option<bool>,
    what: &str,
    elsewhere: &str,
) -> Result<(), Error> {
    match dirs.iter().find_map(|d| committed_dir(d)) {
        Some(_) if force == Some(true) => Ok(()),
        Some(c) => Err(Error::Usage(format!(
            "{command} would write into the committed {c} ({what}): {elsewhere}{}",
            if force.is_some() {
                ", or --force to replace the committed output"
            } else {
                ""
            }
        ))),
        None => Ok(()),
    }
}

/// The directory a file is written into, for [`refuse_committed`] (`trace --out FILE`).
pub fn parent_of(file: &std::path::Path) -> &std::path::Path {
    file.parent().unwrap_or(std::path::Path::new(""))
}

/// A directory for output nobody asked to keep: under the system's temporary directory, so
/// `live` and `calibrate` never write into the repository's tracked `results/` or `reports/`
/// unless `--out` says so.
pub fn scratch_dir(what: &str) -> PathBuf {
    std::env::temp_dir().join("election-bench").join(what)
}

/// A new directory under `parent`, named for the time and the process (`run-<unix seconds>-<pid>`,
/// with `-2`, `-3`, ... if taken), so no run overwrites another's files.
pub fn fresh_dir(parent: &std::path::Path) -> Result<PathBuf, Error> {
    let io = |p: &std::path::Path, e| Error::Io {
        context: format!("cannot create {}", p.display()),
        source: e,
    };
    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("run-{secs}-{}", std::process::id());
    for i in 1u32.. {
        let name = if i == 1 {
            base.clone()
        } else {
            format!("{base}-{i}")
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&dir, e)),
        }
    }
    unreachable!("some name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard protects exactly what git tracks: the `.gitignore` allow-list under
    /// `results/` and `reports/`.
    #[test]
    fn the_committed_dirs_are_the_gitignore_allow_list() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let ignore = std::fs::read_to_string(root.join(".gitignore")).unwrap();
        let mut allowed: Vec<&str> = ignore
            .lines()
            .filter_map(|l| l.strip_prefix("!/")?.strip_suffix('/'))
            .filter(|d| d.starts_with("results/") || d.starts_with("reports/"))
            .collect();
        allowed.sort_unstable();
        let mut ours = COMMITTED_DIRS.to_vec();
        ours.sort_unstable();
        assert_eq!(ours, allowed);
    }

    #[test]
    fn a_committed_dir_is_refused_only_without_force() {
        let p = std::path::Path::new("./reports/calibration");
        assert_eq!(committed_dir(p), Some("reports/calibration"));
        assert_eq!(committed_dir(std::path::Path::new("reports/mine")), None);
        let e = refuse_committed("calibrate", &[p], Some(false), "live", "give --out DIR");
        let e = e.unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().contains("reports/calibration"), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        assert!(refuse_committed("calibrate", &[p], Some(true), "live", "x").is_ok());
        let e = refuse_committed("live", &[p], None, "live rows", "give another --out");
        assert!(!e.unwrap_err().to_string().contains("--force"));
        let svg = std::path::Path::new("reports/default/x.svg");
        assert_eq!(committed_dir(parent_of(svg)), Some("reports/default"));
    }
}
