//! The one error type of the crate: every variant names the file, the field and the value
//! that was wrong, so the CLI can print it as it is.

use std::path::PathBuf;

/// Why a report or a trace could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The results directory does not exist.
    #[error("results directory {} does not exist (run `election-bench sweep` first, or pass --results DIR)", .0.display())]
    MissingResults(PathBuf),
    /// One of the files a sweep writes is missing.
    #[error("{} is missing: a sweep writes trials.csv, summary.csv and manifest.json together", .0.display())]
    MissingFile(PathBuf),
    /// A CSV file lacks a column of the results schema (a file from another tool or another
    /// version of this one).
    #[error("{}: not an election-bench results file of this schema: missing column `{column}` (header was: {header})", .path.display())]
    Schema {
        /// The file.
        path: PathBuf,
        /// The first required column that is missing.
        column: String,
        /// The header as found.
        header: String,
    },
    /// A cell could not be read.
    #[error("{}, line {line}, column `{column}`: cannot read {value:?}: {reason}", .path.display())]
    Value {
        /// The file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: u64,
        /// The column.
        column: String,
        /// The cell as written.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// A statistic of `summary.csv` is out of its range or contradicts another.
    #[error("{}, line {line}, column `{column}`: {value:?} {reason}", .path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: u64,
        /// The column.
        column: String,
        /// The cell as written.
        value: String,
        /// The rule it breaks.
        reason: String,
    },
    /// The CSV itself is malformed (unbalanced quotes, ragged rows, ...).
    #[error("{}: malformed CSV: {reason}", .path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// `manifest.json` is unreadable or not an election-bench manifest.
    #[error("{}: {reason}", .path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The files disagree with each other (different varied parameters, a summary cell with no
    /// trials, ...).
    #[error("{}: {reason}", .path.display())]
    Inconsistent {
        /// The results directory.
        path: PathBuf,
        /// What disagrees.
        reason: String,
    },
    /// The sweep ran no trial at all.
    #[error("{}: the sweep is empty: {reason}", .path.display())]
    EmptySweep {
        /// The results directory.
        path: PathBuf,
        /// Why nothing can be reported.
        reason: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A chart could not be drawn.
    #[error("drawing chart {chart}: {reason}")]
    Chart {
        /// The chart's file stem.
        chart: String,
        /// The drawing backend's message.
        reason: String,
    },
    /// Two results directories have no cell in common (`compare`).
    #[error("no cell was run in both {} and {}{detail}", .a.display(), .b.display())]
    NoCommonCells {
        /// Side A.
        a: PathBuf,
        /// Side B.
        b: PathBuf,
        /// What each contains, and which `--ignore COLUMN` would match cells, if any.
        detail: String,
    },
    /// Two results directories cannot be compared (`compare`).
    #[error("cannot compare {} with {}: {reason}", .a.display(), .b.display())]
    Mismatch {
        /// Side A.
        a: PathBuf,
        /// Side B.
        b: PathBuf,
        /// Why.
        reason: String,
    },
    /// The output directory holds something that would be overwritten.
    #[error("output directory {} {reason}; pass --force to overwrite it, or --out another directory", .path.display())]
    OutputExists {
        /// The directory.
        path: PathBuf,
        /// What it holds.
        reason: String,
    },
    /// An option is out of its range.
    #[error("{0}")]
    Usage(String),
    /// A trace could not be produced or rendered.
    #[error("trace: {0}")]
    Trace(String),
}

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.into(),
            source,
        }
    }
}
