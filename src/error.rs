//! The CLI's one error type and its exit codes (2 bad input, 1 failure while running, 130 a
//! `reality` run stopped by Ctrl-C or SIGTERM, after it killed its members).

use election_report::ReportError;
use election_runner::Error;

/// Any error of the CLI, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Standard output could not be written (a full disk; a closed pipe ends quietly).
    #[error("cannot write to standard output: {0}")]
    Stdout(std::io::Error),
    #[error(transparent)]
    Runner(#[from] Error),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Live(#[from] election_live::RunError),
    #[error(transparent)]
    Reality(#[from] election_reality::Error),
    #[error("{0} validate case(s) failed")]
    Validate(usize),
    #[error("{0} difference(s) between our Raft and the libraries are unexplained ({page})", page = .1.display())]
    Reference(usize, std::path::PathBuf),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        // An interrupted run ends as a shell ends a command stopped by SIGINT (128 + 2).
        if matches!(
            self,
            CliError::Reality(election_reality::Error::Interrupted)
        ) {
            return 130;
        }
        let usage = match self {
            CliError::Runner(e) => e.is_usage(),
            // Reading a results directory that is missing, empty or of another schema is bad
            // input; failing to write or draw is a runtime failure.
            CliError::Report(e) => !matches!(
                e,
                ReportError::Io { .. } | ReportError::Chart { .. } | ReportError::Trace(_)
            ),
            CliError::Live(e) => e.is_usage(),
            CliError::Reality(e) => e.is_usage(),
            CliError::Validate(_) | CliError::Reference(..) | CliError::Stdout(_) => false,
        };
        if usage {
            2
        } else {
            1
        }
    }
}

/// Whether `e` is, or was caused by, writing to a pipe whose reader has gone (`params | head
/// -1`): the output was not wanted any more, so the command ends quietly and successfully.
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        cur = err.source();
    }
    false
}
