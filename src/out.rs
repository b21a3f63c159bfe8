//! Writing to standard output without panicking: a closed pipe or a full disk becomes
//! [`CliError::Stdout`](crate::error::CliError::Stdout) instead of exit 101.

/// `println!` that returns a write error ([`CliError::Stdout`]) instead of panicking (exit
/// 101) on a closed pipe or a full disk.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err($crate::error::CliError::Stdout)?
    }};
}

/// `print!`, likewise.
macro_rules! out_nonl {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err($crate::error::CliError::Stdout)?
    }};
}
