//! `empirical:FILE` values: reading a measured distribution from a file for any parameter that
//! takes a distribution (`net.latency`, a `[[net]]` profile's `latency`, `node.fsync_ms`,
//! `node.cpu_us`, `noise.*_ms`).
//!
//! The simulator holds the data ([`election_sim::Empirical`]), never the path: this module
//! reads the file, checks it line by line, hashes it, and hands over the numbers. The value's
//! canonical form is the text after `empirical:` as written, so `format_latency` gives back
//! what `parse_latency` read; the manifest records every file's SHA-256 next to it
//! ([`manifest_entries`]), so the configuration hash changes when a file's contents do.
//!
//! # Syntax
//!
//! * `empirical:PATH` — `PATH` holds either
//!   * **raw samples**, one number per line (a `ping` or `ioping` log reduced to its numbers),
//!     or
//!   * a **histogram**: a first line `le,count`, then `LE,COUNT` lines, `COUNT` the number of
//!     observations `<= LE` (cumulative, as Prometheus' `le` buckets), bounds increasing, and
//!     optionally a last `+Inf,COUNT` line with the total (without one, the last bucket holds
//!     every observation).
//! * `empirical:PATH#COLUMN` — `PATH` is a CSV file with a header line; the column named
//!   `COLUMN` holds one sample per row.
//!
//! Values are in the parameter's own unit: milliseconds, except `node.cpu_us` (microseconds).
//! Blank lines and lines starting with `#` are skipped everywhere. A file that is empty, holds
//! something that is not a number, a negative or non-finite value, bounds that do not increase
//! or counts that decrease is refused with its path and line number (and the number, when the
//! line held one; text that is not a number is never quoted). The file is read through
//! [`crate::input`]: a regular file of at most 16 MiB (about two million samples; a larger
//! measurement fits as a histogram); a FIFO, a device or a directory is refused by name.
//!
//! A relative `PATH` is relative to the working directory on the command line (`--set`), and
//! relative to the configuration file's directory inside a `--config` file (so a profile
//! written by `election-bench profile` works from anywhere); the canonical value then holds
//! the path joined to that directory. `PATH` cannot contain `#`, and (on the command line,
//! where `--set` splits values at commas) not `,` either.

use std::path::Path;
use std::sync::Arc;

use election_sim::{Empirical, EmpiricalKind, Latency};
use serde_json::{json, Value};

use crate::error::{usage, Result};
use crate::input::{self, Kind};

/// The prefix of an empirical value.
pub const PREFIX: &str = "empirical:";

/// The syntax, for error messages and `election-bench params`.
pub const SYNTAX: &str = "empirical:PATH (samples one per line, or a `le,count` histogram) | \
empirical:PATH#COLUMN (a CSV column)";

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Read `empirical:SPEC`'s `SPEC` (`PATH` or `PATH#COLUMN`) into a distribution.
pub fn load(spec: &str) -> Result<Latency> {
    let spec = spec.trim();
    let (path, column) = match spec.split_once('#') {
        Some((p, c)) => (p.trim(), Some(c.trim())),
        None => (spec, None),
    };
    if path.is_empty() {
        return usage!("{PREFIX}{spec}: no file named (syntax: {SYNTAX})");
    }
    if column == Some("") {
        return usage!("{PREFIX}{spec}: no column named after '#' (syntax: {SYNTAX})");
    }
    let file = Path::new(path);
    let bytes = input::read(file, Kind::Empirical)?;
    let sha = sha256_hex(&bytes);
    let text = input::text(file, Kind::Empirical, bytes)?;
    let e = match column {
        Some(c) => column_samples(path, &text, c)
            .and_then(|(lines, v)| build_samples(path, spec, &sha, &lines, &v))?,
        None => parse_plain(path, spec, &sha, &text)?,
    };
    Ok(Latency::Empirical(Arc::new(e)))
}

/// The lines worth reading: (1-based line number, trimmed text), skipping blanks and comments.
fn content(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn number(path: &str, line: usize, what: &str, raw: &str) -> Result<f64> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) => usage!("{path}: line {line}: {what} {v}: expected a finite number >= 0"),
        Err(_) => usage!("{path}: line {line}: {what} is not a number"),
    }
}

fn build_samples(
    path: &str,
    spec: &str,
    sha: &str,
    lines: &[usize],
    v: &[f64],
) -> Result<Empirical> {
    Empirical::from_samples(spec, sha, v).map_err(|e| {
        let at = lines
            .get(e.index)
            .map_or(String::new(), |l| format!("line {l}: "));
        crate::Error::Usage(format!("{path}: {at}{}: {}", e.value, e.reason))
    })
}

fn parse_plain(path: &str, spec: &str, sha: &str, text: &str) -> Result<Empirical> {
    let mut lines = content(text).peekable();
    let Some(&(_, first)) = lines.peek() else {
        return usage!("{path}: no samples (the file is empty, or holds only comments)");
    };
    let header: Vec<String> = first
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    if header == ["le", "count"] {
        lines.next();
        return parse_histogram(path, spec, sha, lines);
    }
    let mut nums = Vec::new();
    let mut at = Vec::new();
    for (line, l) in lines {
        if l.contains(',') {
            return usage!(
                "{path}: line {line}: a comma: a sample file holds one number per line (a CSV \
                 file needs {PREFIX}{path}#COLUMN; a histogram starts with the line `le,count`)"
            );
        }
        nums.push(number(path, line, "sample", l)?);
        at.push(line);
    }
    build_samples(path, spec, sha, &at, &nums)
}

fn parse_histogram<'a>(
    path: &str,
    spec: &str,
    sha: &str,
    lines: impl Iterator<Item = (usize, &'a str)>,
) -> Result<Empirical> {
    let mut buckets = Vec::new();
    let mut at = Vec::new();
    let mut total: Option<(usize, f64)> = None;
    for (line, l) in lines {
        if let Some((inf_line, _)) = total {
            return usage!(
                "{path}: line {line}: a bucket after the +Inf bucket (line {inf_line}), which must be last"
            );
        }
        let Some((le, count)) = l.split_once(',') else {
            return usage!("{path}: line {line}: expected LE,COUNT (one comma)");
        };
        let count = number(path, line, "count", count)?;
        let le = le.trim();
        if le.eq_ignore_ascii_case("+inf") || le.eq_ignore_ascii_case("inf") {
            total = Some((line, count));
            continue;
        }
        buckets.push((number(path, line, "bucket bound", le)?, count));
        at.push(line);
    }
    if buckets.is_empty() {
        return usage!("{path}: a histogram needs at least one finite bucket after `le,count`");
    }
    let (total_line, total) = total.unwrap_or((at[at.len() - 1], buckets[buckets.len() - 1].1));
    Empirical::from_buckets(spec, sha, &buckets, total).map_err(|e| {
        let line = at.get(e.index).copied().unwrap_or(total_line);
        crate::Error::Usage(format!("{path}: line {line}: {}: {}", e.value, e.reason))
    })
}

/// The samples of column `column` of a CSV file with a header: (line numbers, values).
fn column_samples(path: &str, text: &str, column: &str) -> Result<(Vec<usize>, Vec<f64>)> {
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| crate::Error::Usage(format!("{path}: {e}")))?
        .clone();
    let Some(k) = headers.iter().position(|h| h == column) else {
        return usage!(
            "{path}: no column {column:?} in the header (its {} columns are named otherwise)",
            headers.len()
        );
    };
    let (mut at, mut v) = (Vec::new(), Vec::new());
    for r in rdr.records() {
        let r = r.map_err(|e| crate::Error::Usage(format!("{path}: {e}")))?;
        let line = r.position().map_or(0, |p| p.line() as usize);
        let raw = r.get(k).unwrap_or("");
        v.push(number(path, line, &format!("column {column}"), raw)?);
        at.push(line);
    }
    if v.is_empty() {
        return usage!("{path}: column {column:?} holds no samples");
    }
    Ok((at, v))
}

/// `value` with a relative `empirical:` path made relative to `dir` (a configuration file's
/// directory); any other value unchanged.
pub fn relative_to(value: &str, dir: &Path) -> String {
    let t = value.trim();
    let Some(spec) = t.strip_prefix(PREFIX) else {
        return value.to_string();
    };
    let spec = spec.trim();
    if Path::new(spec).is_absolute() || dir.as_os_str().is_empty() {
        return value.to_string();
    }
    format!("{PREFIX}{}", dir.join(spec).display())
}

/// What the manifest records about each empirical distribution among `values` (raw parameter
/// values; the others are ignored), by source, each once: the file, its SHA-256, the kind of
/// data and its size, and the mean, median and p99 as drawn. Empty when none is empirical, so
/// that a configuration without one hashes as before.
pub fn manifest_entries<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Value> {
    let mut seen = std::collections::BTreeMap::new();
    for v in values {
        let Some(spec) = v.trim().strip_prefix(PREFIX) else {
            continue;
        };
        if seen.contains_key(spec.trim()) {
            continue;
        }
        // The plan has parsed every value already; one that fails now (a file removed
        // meanwhile) is recorded as such rather than dropped.
        let entry = match load(spec) {
            Ok(Latency::Empirical(e)) => describe(&e),
            Ok(_) => continue,
            Err(err) => json!({ "source": spec.trim(), "error": err.to_string() }),
        };
        seen.insert(spec.trim().to_string(), entry);
    }
    seen.into_values().collect()
}

/// One empirical distribution as the manifest records it.
pub fn describe(e: &Empirical) -> Value {
    let (kind, size) = match e.kind() {
        EmpiricalKind::Samples(n) => ("samples", json!(n)),
        EmpiricalKind::Histogram { count, .. } => ("histogram", json!(count)),
    };
    json!({
        "source": e.source(),
        "sha256": e.sha256(),
        "kind": kind,
        "observations": size,
        "overflow": e.overflow(),
        "mean": e.mean_ms(),
        "p50": e.quantile(0.5),
        "p99": e.quantile(0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn err(spec: &str) -> String {
        load(spec).unwrap_err().to_string()
    }

    #[test]
    fn the_three_forms_read() {
        let d = tempfile::tempdir().unwrap();
        let s = write(d.path(), "s.txt", "# ping, ms\n1\n\n3\n2\n");
        let Latency::Empirical(e) = load(&s).unwrap() else {
            panic!()
        };
        assert_eq!((e.quantile(0.0), e.quantile(0.5)), (1.0, 2.0));
        assert_eq!(e.source(), s);
        assert_eq!(e.sha256().len(), 64);
        let h = write(d.path(), "h.csv", "le,count\n1,5\n2,10\n+Inf,10\n");
        let Latency::Empirical(e) = load(&h).unwrap() else {
            panic!()
        };
        assert!((e.quantile(0.25) - 0.5).abs() < 1e-12);
        let c = write(d.path(), "c.csv", "host,rtt_ms\na,4\nb,2\n");
        let Latency::Empirical(e) = load(&format!("{c}#rtt_ms")).unwrap() else {
            panic!()
        };
        assert_eq!((e.quantile(0.0), e.mean_ms()), (2.0, 3.0));
    }

    #[test]
    fn bad_files_are_refused_with_line_and_value() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", "1\n\n-2\n");
        let e = err(&p);
        assert!(e.contains("line 3") && e.contains("-2"), "{e}");
        let p = write(d.path(), "b", "1\nfast\n");
        let e = err(&p);
        assert!(
            e.contains("line 2") && e.contains("sample is not a number"),
            "{e}"
        );
        assert!(!e.contains("fast"), "the file's text is never quoted: {e}");
        let p = write(d.path(), "c", "# nothing\n\n");
        assert!(err(&p).contains("no samples"));
        let p = write(d.path(), "d", "le,count\n1,5\n2,3\n");
        let e = err(&p);
        assert!(
            e.contains("line 3") && e.contains("must not decrease"),
            "{e}"
        );
        let p = write(d.path(), "e", "le,count\n2,5\n1,6\n");
        let e = err(&p);
        assert!(e.contains("line 3") && e.contains("increase"), "{e}");
        let p = write(d.path(), "f", "le,count\n1,5\n+Inf,4\n");
        let e = err(&p);
        assert!(e.contains("line 3") && e.contains("below"), "{e}");
        let p = write(d.path(), "g", "secret_host,y\n1,a\n");
        let e = err(&format!("{p}#y"));
        assert!(
            e.contains("line 2") && e.contains("column y is not a number"),
            "{e}"
        );
        let e = err(&format!("{p}#z"));
        assert!(
            e.contains("no column \"z\"") && !e.contains("secret_host"),
            "{e}"
        );
        assert!(err("/nonexistent/file").contains("cannot read"));
    }

    /// Issue 47: an error quoted the first line of whatever file it was given.
    #[test]
    fn no_error_quotes_the_file() {
        let d = tempfile::tempdir().unwrap();
        for text in [
            "root:$6$secret:19000:0:99999:7:::\n",
            "le,count\nroot:$6$secret\n",
            "le,count\n1,5\nroot,$6$secret\n",
            "1\nroot,secret\n",
        ] {
            let p = write(d.path(), "shadow", text);
            let e = err(&p);
            assert!(e.contains("shadow: line "), "{e}");
            assert!(
                !e.contains("root") && !e.contains("secret"),
                "{text:?}: {e}"
            );
        }
    }

    /// Issue 47: `empirical:/dev/zero` grew without bound; a FIFO hung.
    #[test]
    fn devices_fifos_directories_and_huge_files_are_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let fifo = crate::input::tests::mkfifo(d.path(), "pipe");
        let big = crate::input::tests::huge(d.path(), "big");
        for (p, why) in [
            ("/dev/zero".to_string(), "is a character device"),
            (fifo.display().to_string(), "is a FIFO (named pipe)"),
            (d.path().display().to_string(), "is a directory"),
            (
                big.display().to_string(),
                "larger than the limit of 16.0 MiB",
            ),
        ] {
            let e = load(&p).unwrap_err();
            assert!(e.is_usage(), "{e}");
            let e = e.to_string();
            assert!(e.starts_with(&format!("{p}: ")) && e.contains(why), "{e}");
        }
    }

    #[test]
    fn relative_paths_follow_the_config_file() {
        let d = Path::new("profiles/etcd");
        assert_eq!(
            relative_to("empirical:fsync.csv", d),
            "empirical:profiles/etcd/fsync.csv"
        );
        assert_eq!(relative_to("empirical:/abs/x", d), "empirical:/abs/x");
        assert_eq!(relative_to("lognormal:1:1", d), "lognormal:1:1");
        assert_eq!(relative_to("empirical:x", Path::new("")), "empirical:x");
    }
}
