//! File plumbing shared by sweeps, merges and live runs: preparing an output directory without leaving
//! anything behind on failure, atomic writes, and CSV reading and writing with the one
//! dialect the results use (comma, `\n`, quotes only where needed).

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
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

/// The length of the file's complete lines: up to and including its last `\n` (0 if none).
/// Reads backwards from the end, so it costs one block for a well-formed file.
fn complete_len(f: &mut fs::File, path: &Path) -> Result<u64> {
    let len = f
        .metadata()
        .map_err(|e| Error::io("cannot read", path, e))?
        .len();
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))
            .and_then(|_| f.read_exact(chunk))
            .map_err(|e| Error::io("cannot read", path, e))?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            f.seek(SeekFrom::Start(0))
                .map_err(|e| Error::io("cannot read", path, e))?;
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// A CSV file read one record at a time, in constant memory (the results can be far larger
/// than what a sweep should hold). Like [`read_csv`], a trailing line without its newline is
/// ignored.
pub struct CsvStream {
    reader: csv::Reader<Box<dyn Read>>,
    record: csv::StringRecord,
    path: PathBuf,
    line: u64,
}

impl CsvStream {
    /// Open `path`; a `.gz` file is decompressed as it is read (it was written whole, so it
    /// has no cut-short line to drop; byte offsets are then offsets in the decompressed text).
    pub fn open(path: &Path) -> Result<CsvStream> {
        let mut f = fs::File::open(path).map_err(|e| Error::io("cannot read", path, e))?;
        let input: Box<dyn Read> = if is_gz(path) {
            Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(
                std::io::BufReader::new(f),
            )))
        } else {
            let len = complete_len(&mut f, path)?;
            Box::new(std::io::BufReader::new(f).take(len))
        };
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        Ok(CsvStream {
            reader,
            record: csv::StringRecord::new(),
            path: path.to_path_buf(),
            line: 0,
        })
    }

    /// The next record and the byte offset just past it, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<(&csv::StringRecord, u64)>> {
        match self.reader.read_record(&mut self.record) {
            Ok(true) => {
                self.line += 1;
                Ok(Some((&self.record, self.reader.position().byte())))
            }
            Ok(false) => Ok(None),
            Err(e) => Err(Error::Results(format!(
                "{} is not valid CSV: {e}",
                self.path.display()
            ))),
        }
    }

    /// The 1-based line number of the record last returned (records never span lines in
    /// the results' CSVs).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The results' trials file as committed: `trials.csv` compressed (see [`gzip_trials`]).
pub const TRIALS_GZ: &str = "trials.csv.gz";

fn is_gz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// The trials file of results directory `dir`: `trials.csv` when it is there (a sweep's
/// working copy), else `trials.csv.gz` when that is (a fresh clone of committed results), else
/// `trials.csv` (for the error message).
pub fn trials_file(dir: &Path) -> PathBuf {
    let raw = dir.join("trials.csv");
    let gz = dir.join(TRIALS_GZ);
    if !raw.exists() && gz.exists() {
        gz
    } else {
        raw
    }
}

/// Writes `dir/trials.csv.gz` from `dir/trials.csv` ([`compress_trials`]) and returns what the
/// manifest records about it ([`trials_record`]).
pub fn gzip_trials(dir: &Path) -> Result<crate::results::TrialsCsv> {
    let record = trials_record(dir)?;
    compress_trials(dir)?;
    Ok(record)
}

/// What the manifest records about `dir/trials.csv.gz`: the file, and the row count, byte
/// count and SHA-256 of the CSV it decompresses to (`dir/trials.csv`, read here), which a
/// reader checks with `gunzip -k trials.csv.gz && sha256sum trials.csv`.
pub fn trials_record(dir: &Path) -> Result<crate::results::TrialsCsv> {
    use sha2::Digest;
    let raw = dir.join("trials.csv");
    let mut f = fs::File::open(&raw).map_err(|e| Error::io("cannot read", &raw, e))?;
    let mut hash = sha2::Sha256::new();
    let (mut lines, mut bytes) = (0u64, 0u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let k = f
            .read(&mut buf)
            .map_err(|e| Error::io("cannot read", &raw, e))?;
        if k == 0 {
            break;
        }
        let chunk = &buf[..k];
        hash.update(chunk);
        lines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        bytes += k as u64;
    }
    let sha: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(crate::results::TrialsCsv {
        file: TRIALS_GZ.to_string(),
        of: "trials.csv".to_string(),
        rows: lines.saturating_sub(1),
        bytes,
        sha256: sha,
    })
}

/// Writes `dir/trials.csv.gz` from `dir/trials.csv`, deterministically (compression level 6,
/// no file name and a zero time stamp in the gzip header, so the same CSV always gives the
/// same bytes), atomically (a temporary file renamed into place).
pub fn compress_trials(dir: &Path) -> Result<()> {
    let raw = dir.join("trials.csv");
    let gz = dir.join(TRIALS_GZ);
    let mut f = fs::File::open(&raw).map_err(|e| Error::io("cannot read", &raw, e))?;
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        // Level 6, not 9: it takes well under half level 9's time for a file about 4 % larger
        // (the default sweep's 44 MB).
        .write(Vec::new(), flate2::Compression::new(6));
    std::io::copy(&mut f, &mut enc).map_err(|e| Error::io("cannot compress", &raw, e))?;
    let out = enc
        .finish()
        .map_err(|e| Error::io("cannot compress", &raw, e))?;
    write_atomic(&gz, &out)
}

/// Check that the trials file of finished results directory `dir` (`trials.csv`, else
/// `trials.csv.gz` decompressed) is the one `manifest` records under `trials_csv`: its byte
/// count and SHA-256. A file edited after the sweep, or a manifest without the record, is
/// refused with both values, so that no reader certifies or publishes results the sweep did
/// not write.
pub fn verify_trials(dir: &Path, manifest: &crate::results::Manifest) -> Result<()> {
    use sha2::Digest;
    let mp = dir.join("manifest.json");
    let Some(crate::results::TrialsCsv {
        sha256: want_sha,
        bytes: want_bytes,
        ..
    }) = &manifest.trials_csv
    else {
        return Err(Error::Results(format!(
            "{}: no trials_csv.sha256 and trials_csv.bytes: not the manifest of a finished sweep",
            mp.display()
        )));
    };
    let path = trials_file(dir);
    let f = fs::File::open(&path).map_err(|e| Error::io("cannot read", &path, e))?;
    let mut input: Box<dyn Read> = if is_gz(&path) {
        Box::new(flate2::read::GzDecoder::new(std::io::BufReader::new(f)))
    } else {
        Box::new(f)
    };
    let mut hash = sha2::Sha256::new();
    let mut bytes = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let k = input
            .read(&mut buf)
            .map_err(|e| Error::io("cannot read", &path, e))?;
        if k == 0 {
            break;
        }
        hash.update(&buf[..k]);
        bytes += k as u64;
    }
    let sha: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if sha != *want_sha || bytes != *want_bytes {
        return Err(Error::Results(format!(
            "{} is not the file the sweep wrote: {bytes} bytes with SHA-256 {sha}, but {} \
             records {want_bytes} bytes with SHA-256 {want_sha} (results are generated, never \
             edited: rerun the sweep)",
            path.display(),
            mp.display()
        )));
    }
    Ok(())
}

/// Recreates `dir/trials.csv` from `dir/trials.csv.gz` when only the compressed file is there
/// (`--resume` appends to the plain file). Returns whether it did.
pub fn restore_trials_csv(dir: &Path) -> Result<bool> {
    let raw = dir.join("trials.csv");
    let gz = dir.join(TRIALS_GZ);
    if raw.exists() || !gz.exists() {
        return Ok(false);
    }
    let f = fs::File::open(&gz).map_err(|e| Error::io("cannot read", &gz, e))?;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::io::BufReader::new(f))
        .read_to_end(&mut text)
        .map_err(|e| Error::io("cannot decompress", &gz, e))?;
    write_atomic(&raw, &text)?;
    Ok(true)
}

/// A file written in pieces and published atomically: it is written to a temporary file in
/// the same directory, which [`AtomicFile::commit`] syncs and renames over the target;
/// dropped without a commit (an error on the way), the temporary file is removed.
pub struct AtomicFile {
    file: Option<std::io::BufWriter<fs::File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    /// Start writing `path`.
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.tmp"));
        let f = fs::File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
        Ok(AtomicFile {
            file: Some(std::io::BufWriter::new(f)),
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// Append `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let f = self.file.as_mut().expect("not committed");
        f.write_all(bytes)
            .map_err(|e| Error::io("cannot write", &self.path, e))
    }

    /// Sync and rename over the target.
    pub fn commit(mut self) -> Result<()> {
        let f = self.file.take().expect("not committed");
        let r = f
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .and_then(|_| fs::rename(&self.tmp, &self.path));
        r.map_err(|e| Error::io("cannot write", &self.path, e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() || self.tmp.exists() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// The lock file of a results directory.
pub const LOCK: &str = ".lock";

/// This machine's name, as the lock file records it.
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Is the process `pid` of this machine gone? Only answerable where `/proc` exists; `false`
/// (assume it runs) otherwise.
fn process_gone(pid: u32) -> bool {
    Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Exclusive use of a results directory by one sweep or merge: `<dir>/.lock`, created with
/// `create_new` and holding `pid=`, `host=` and `started=` (Unix seconds) lines, removed when
/// the lock is dropped (on success and on every error path). A lock left by a process that
/// was killed is taken over when it names this host and `/proc/<pid>` does not exist; a lock
/// from another host is never taken over (delete it by hand once that sweep is gone).
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
}

impl DirLock {
    /// Lock `dir` (which must exist). Another live holder is a usage error naming it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK);
        let host = host_name();
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let body = format!(
            "pid={}\nhost={host}\nstarted={started}\n",
            std::process::id()
        );
        for attempt in 0..2 {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let lock = DirLock { path: path.clone() };
                    f.write_all(body.as_bytes())
                        .and_then(|_| f.sync_all())
                        .map_err(|e| Error::io("cannot write", &path, e))?;
                    return Ok(lock);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = fs::read_to_string(&path).unwrap_or_default();
                    let field = |k: &str| {
                        text.lines()
                            .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
                            .map(str::to_string)
                    };
                    let pid = field("pid").and_then(|p| p.parse::<u32>().ok());
                    let holder_host = field("host");
                    let stale = attempt == 0
                        && holder_host.as_deref() == Some(host.as_str())
                        && pid.is_some_and(|p| p != std::process::id() && process_gone(p));
                    if stale {
                        let _ = fs::remove_file(&path);
                        continue;
                    }
                    return Err(Error::Usage(format!(
                        "{} is in use by another sweep or merge (process {} on {}, started at \
                         {} s since 1970, per {}); wait for it to finish, or delete {} if that \
                         process is gone",
                        dir.display(),
                        pid.map_or("?".into(), |p| p.to_string()),
                        holder_host.as_deref().unwrap_or("?"),
                        field("started").as_deref().unwrap_or("?"),
                        path.display(),
                        path.display(),
                    )));
                }
                Err(e) => return Err(Error::io("cannot create", &path, e)),
            }
        }
        Err(Error::Usage(format!(
            "{}: cannot take the lock",
            path.display()
        )))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
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
    fn streams_read_what_read_csv_reads() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.csv");
        fs::write(&p, "a,b\n1,\"x,y\"\n3,").unwrap();
        let mut s = CsvStream::open(&p).unwrap();
        let mut got = Vec::new();
        while let Some((r, off)) = s.next_record().unwrap() {
            got.push((r.clone(), off, s.line()));
        }
        let want = read_csv(&p).unwrap();
        assert_eq!(got.len(), 2);
        for ((r, off, _), (w, woff)) in got.iter().zip(&want) {
            assert_eq!((r, off), (w, woff));
        }
        assert_eq!(got[1].2, 2);
        fs::write(&p, "").unwrap();
        assert!(CsvStream::open(&p)
            .unwrap()
            .next_record()
            .unwrap()
            .is_none());
    }

    #[test]
    fn atomic_files_appear_only_on_commit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.csv");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write(b"half").unwrap();
        drop(f);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
        let mut f = AtomicFile::create(&p).unwrap();
        f.write(b"whole\n").unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "whole\n");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_lock_excludes_a_second_holder_and_goes_with_the_first() {
        let d = tempfile::tempdir().unwrap();
        let lock = DirLock::acquire(d.path()).unwrap();
        let text = fs::read_to_string(d.path().join(LOCK)).unwrap();
        assert!(
            text.contains(&format!("pid={}", std::process::id())),
            "{text}"
        );
        let e = DirLock::acquire(d.path()).unwrap_err();
        assert!(e.is_usage());
        let m = e.to_string();
        assert!(
            m.contains(&format!("process {}", std::process::id())),
            "{m}"
        );
        drop(lock);
        assert!(!d.path().join(LOCK).exists());
        // A lock left by a dead process of this host is taken over; one from another host
        // is not.
        let dead = (1u32 << 22) + 12345; // above Linux's pid_max
        if Path::new("/proc/self").exists() {
            fs::write(
                d.path().join(LOCK),
                format!("pid={dead}\nhost={}\nstarted=0\n", host_name()),
            )
            .unwrap();
            drop(DirLock::acquire(d.path()).unwrap());
        }
        fs::write(
            d.path().join(LOCK),
            format!("pid={dead}\nhost=elsewhere.example\nstarted=0\n"),
        )
        .unwrap();
        let m = DirLock::acquire(d.path()).unwrap_err().to_string();
        assert!(m.contains("elsewhere.example"), "{m}");
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
