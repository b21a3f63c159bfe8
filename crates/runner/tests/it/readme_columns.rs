//! The column tables of `results/README.md` are generated from the results types
//! ([`trial_columns_markdown`], [`summary_columns_markdown`]): this test fails when the
//! README's text between `<!-- columns:NAME -->` and `<!-- /columns:NAME -->` differs from
//! what the code generates, and with `UPDATE_README=1` writes the generated tables instead.

use election_runner::results::{summary_columns_markdown, trial_columns_markdown};

const NOTE: &str = "Generated from the column definitions in `crates/runner/src/results/` by \
`UPDATE_README=1 cargo test -p election-runner --test it readme_columns` (the test fails when this \
table and the code disagree).";

/// `text` with the section `name` replaced by `table`, or why it cannot be.
fn replace_section(text: &str, name: &str, table: &str) -> Result<String, String> {
    let open = format!("<!-- columns:{name} -->\n");
    let close = format!("<!-- /columns:{name} -->");
    let a = text
        .find(&open)
        .ok_or_else(|| format!("no {open:?} marker"))?
        + open.len();
    let b = a + text[a..]
        .find(&close)
        .ok_or_else(|| format!("no {close:?} marker after {open:?}"))?;
    Ok(format!("{}{NOTE}\n\n{table}{}", &text[..a], &text[b..]))
}

#[test]
fn results_readme_column_tables_are_generated_from_the_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut want = text.clone();
    for (name, table) in [
        ("trials", trial_columns_markdown()),
        ("summary", summary_columns_markdown()),
    ] {
        want = replace_section(&want, name, &table).unwrap();
    }
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    if let Some((i, (got, exp))) = text
        .lines()
        .zip(want.lines())
        .enumerate()
        .find(|(_, (g, w))| g != w)
    {
        panic!(
            "{} line {}: the column tables differ from the types (rerun with UPDATE_README=1):\n  README: {got}\n  types:  {exp}",
            path.display(),
            i + 1
        );
    }
    assert_eq!(text, want, "the column tables differ in length");
}

#[test]
fn a_missing_marker_is_named() {
    let e = replace_section("no markers", "trials", "| x |\n").unwrap_err();
    assert!(e.contains("columns:trials"), "{e}");
    let t = replace_section(
        "a\n<!-- columns:s -->\nold\n<!-- /columns:s -->\nb\n",
        "s",
        "| new |\n",
    )
    .unwrap();
    assert_eq!(
        t,
        format!("a\n<!-- columns:s -->\n{NOTE}\n\n| new |\n<!-- /columns:s -->\nb\n")
    );
}
