//! `validate`: the catalog of textbook results, one line a case.

use clap::Args;

use crate::error::CliError;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Fewer seeds per case (for CI).
    #[arg(long)]
    pub quick: bool,
    /// Only this case (repeatable) [default: every case].
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
}

/// `validate`: the selected cases (every case for no names), one aligned line each, then the
/// tally; exit 1 if any fails, 2 for an unknown case name.
pub fn run(a: ValidateArgs) -> Result<(), CliError> {
    let cases = election_runner::validate::select(&a.cases)?;
    validate_cases(&cases.into_iter().copied().collect::<Vec<_>>(), a.quick)
}

fn validate_cases(cases: &[election_runner::validate::Case], quick: bool) -> Result<(), CliError> {
    let outcomes = cases
        .iter()
        .map(|case| case.run(quick))
        .collect::<Result<Vec<_>, _>>()?;
    out_nonl!("{}", election_runner::validate::render(&outcomes));
    match outcomes.iter().filter(|o| !o.pass).count() {
        0 => Ok(()),
        failed => Err(CliError::Validate(failed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_published_figure_fails_with_exit_1() {
        let mut case = *election_runner::validate::select(&["bully-best-case".into()]).unwrap()[0];
        case.quick_seeds = 2;
        assert!(validate_cases(&[case], true).is_ok());
        case.published.value = || 7.0;
        let e = validate_cases(&[case], true).unwrap_err();
        assert!(matches!(e, CliError::Validate(1)), "{e}");
        assert_eq!(e.exit_code(), 1);
    }
}
