//! File plumbing shared by sweeps, merges and live runs: preparing an output directory without leaving
//! anything behind on failure, atomic writes, and CSV reading and writing with the one
//! dialect the results use (comma, `\n`, quotes only where needed).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Create `dir` (and missing parents) and check that files can be written in it. On failure
/// nothing this call created is left behind.
pub fn prepare_dir(dir: &Path) -> Result<()> {
    // The outermost ancestor that does not exist yet: everything this call creates is under it.
    let mut first_new: Option<PathBuf> = None;
    let mut p = Some(dir);
    while let Some(d) = p {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        first_new = Some(d.to_path_buf());
        p = d.parent();
    }
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Io {
            context: format!("cannot write results to {}", dir.display()),
            source: std::io::Error::other("it exists and is not a directory"),
        });
    }
    let cleanup = || {
        if let Some(d) = &first_new {
            let _ = fs::remove_dir_all(d);
        }
    };
    if let Err(e) = fs::create_dir_all(dir) {
        cleanup();
        return Err(Error::io("cannot create the output directory", dir, e));
    }
    let probe = dir.join(".election-bench-write-test");
    let r = fs::File::create(&probe).and_then(|mut f| f.write_all(b"ok"));
    let _ = fs::remove_file(&probe);
    if let Err(e) = r {
        cleanup();
        return Err(Error::io("cannot write in the output directory", dir, e));
    }
    Ok(())
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let r = (|| -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = r {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io("cannot write", path, e));
    }
    Ok(())
}

/// A CSV writer over `w` in the results' dialect.
pub fn csv_writer<W: Write>(w: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(w)
}

/// Records as CSV bytes.
pub fn csv_bytes<I, R>(records: I) -> Vec<u8>
where
    I: IntoIterator<Item = R>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut w = csv_writer(Vec::new());
    for r in records {
        w.write_record(r).expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}

/// A CSV file's records, each with the byte offset just past it. A trailing line without its
/// newline (a write cut short) is ignored.
pub fn read_csv(path: &Path) -> Result<Vec<(csv::StringRecord, u64)>> {
    let mut bytes = fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => bytes.truncate(i + 1),
        None => bytes.clear(),
    }
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let mut out = Vec::new();
    let mut rec = csv::StringRecord::new();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => out.push((rec.clone(), r.position().byte())),
            Ok(false) => break,
            Err(e) => {
                return Err(Error::Results(format!(
                    "{} is not valid CSV: {e}",
                    path.display()
                )))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_short_last_line_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.csv");
        fs::write(&p, "a,b\n1,2\n3,").unwrap();
        let recs = read_csv(&p).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].1, 8);
    }

    #[test]
    fn a_directory_under_a_file_fails_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        fs::write(&f, "x").unwrap();
        assert!(prepare_dir(&f.join("sub")).is_err());
        assert!(prepare_dir(&f).is_err());
        let ok = d.path().join("a/b/c");
        prepare_dir(&ok).unwrap();
        assert!(ok.is_dir());
        assert_eq!(fs::read_dir(&ok).unwrap().count(), 0);
    }
}
