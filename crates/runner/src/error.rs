//! The runner's one error type. Bad input (a name that does not exist, a value out of range,
//! malformed TOML) is told apart from failures while running (a directory that cannot be
//! written), because the CLI exits with 2 for the first and 1 for the second.

use std::path::{Path, PathBuf};

/// Everything that can go wrong in the runner.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input names something that does not exist or holds a value out of range. The
    /// message names the field, the value and the valid choices.
    #[error("{0}")]
    Usage(String),
    /// A TOML configuration file could not be read as one; the message carries the line and
    /// column.
    #[error("{}: {message}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A file or directory could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the path.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A file the user named could not be read as its kind of input (not a regular file,
    /// over its size limit, not UTF-8, unreadable); see [`crate::input`]. Bad input: exit 2.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// Existing results cannot be resumed or merged (they belong to another configuration, or
    /// are damaged beyond a trailing partial cell).
    #[error("{0}")]
    Results(String),
    /// Recorded results differ from what was recorded when they were written (the SHA-256
    /// noted beside them) or from what re-running their trials gives: they were edited or
    /// corrupted after the run. `path` is the file, `detail` says where and what differs.
    #[error("{}: {detail}", path.display())]
    Altered {
        /// The file whose content differs.
        path: PathBuf,
        /// The line, trial or column that differs, with both values.
        detail: String,
    },
}

impl Error {
    /// True for errors in what the user asked for (the CLI exits with 2), false for failures
    /// while carrying it out (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_) | Error::Toml { .. } | Error::Input(_))
    }

    pub(crate) fn io(what: &str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            context: format!("{what} {}", path.display()),
            source,
        }
    }
}

/// The candidate closest to `name` by Jaro–Winkler similarity, if one is close enough to be
/// what was meant (`leader-crsh` → `leader-crash`, `net.los` → `net.loss`, `prevote` →
/// `pre_vote`), or one typo away (`lna` → `lan`); the first of equally close ones.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    const CLOSE: f64 = 0.8;
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let (a, b) = (name.to_lowercase(), c.to_lowercase());
        // One edit (a transposition counts as one) is always close, however short the name.
        let score = if strsim::damerau_levenshtein(&a, &b) <= 1 {
            1.0
        } else {
            strsim::jaro_winkler(&a, &b)
        };
        if score >= CLOSE && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The message for an unknown name: `head` (e.g. `unknown scenario "leader-crsh"`), then the
/// closest candidate when there is one, then `list` (the valid names), on a line of its own
/// after a suggestion so the suggestion leads.
pub fn unknown_name<'a>(
    head: &str,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    list: &str,
) -> String {
    match did_you_mean(name, candidates) {
        Some(s) => format!("{head}; did you mean {s:?}?\n  {list}"),
        None => format!("{head}; {list}"),
    }
}

/// The runner's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `Err(Error::Usage(..))` with a formatted message.
macro_rules! usage {
    ($($arg:tt)*) => { Err($crate::error::Error::Usage(format!($($arg)*))) };
}
pub(crate) use usage;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_gets_the_closest_name_and_a_far_one_none() {
        let scenarios = [
            "leader-crash",
            "leader-pause",
            "cold-start",
            "cascade-crash",
        ];
        assert_eq!(did_you_mean("leader-crsh", scenarios), Some("leader-crash"));
        assert_eq!(
            did_you_mean("Leader-Crash", scenarios),
            Some("leader-crash")
        );
        assert_eq!(did_you_mean("zzz", scenarios), None);
        assert_eq!(
            did_you_mean("lna", ["ideal", "lan", "dc", "wan"]),
            Some("lan")
        );
        assert_eq!(
            did_you_mean(
                "prevote",
                ["pre_vote", "check_quorum", "timeout_ms", "lagging"]
            ),
            Some("pre_vote")
        );
        assert_eq!(
            did_you_mean("net.los", ["net.latency", "net.loss", "net.fifo"]),
            Some("net.loss")
        );
    }

    #[test]
    fn the_suggestion_leads_and_the_list_follows() {
        let m = unknown_name(
            "unknown protocol \"raf\"",
            "raf",
            ["bully", "raft"],
            "valid: bully, raft",
        );
        assert_eq!(
            m,
            "unknown protocol \"raf\"; did you mean \"raft\"?\n  valid: bully, raft"
        );
        let m = unknown_name(
            "unknown protocol \"x\"",
            "x",
            ["bully", "raft"],
            "valid: bully, raft",
        );
        assert_eq!(m, "unknown protocol \"x\"; valid: bully, raft");
    }
}
