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
    /// Existing results cannot be resumed or merged (they belong to another configuration, or
    /// are damaged beyond a trailing partial cell).
    #[error("{0}")]
    Results(String),
}

impl Error {
    /// True for errors in what the user asked for (the CLI exits with 2), false for failures
    /// while carrying it out (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Usage(_) | Error::Toml { .. })
    }

    pub(crate) fn io(what: &str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            context: format!("{what} {}", path.display()),
            source,
        }
    }
}

/// The runner's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `Err(Error::Usage(..))` with a formatted message.
macro_rules! usage {
    ($($arg:tt)*) => { Err($crate::error::Error::Usage(format!($($arg)*))) };
}
pub(crate) use usage;
