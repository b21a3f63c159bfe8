//! Where commands write: the committed directories and the guard that keeps a non-default run
//! out of them, and scratch directories for output nobody asked to keep.

use std::path::PathBuf;

use election_runner::Error;

/// The output directories committed to the repository (`.gitignore` lists the same ones; every
/// other directory under `results/` and `reports/` is ignored by git).
pub const COMMITTED_DIRS: [&str; 8] = [
    "results/default",
    "results/gray",
    "results/explore",
    "reports/default",
    "reports/gray",
    "reports/explore",
    "reports/tune-default",
    "reports/calibration",
];

/// The committed directory `dir` names (relative to the working directory, as the defaults
/// are), if it is one.
fn committed_dir(dir: &std::path::Path) -> Option<&'static str> {
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
