//! The one reader of files a user names: `--config FILE`, `empirical:FILE` (in `--set` or in a
//! config), `profile --from-prometheus FILE|DIR` and `merge --list FILE`. Every such file goes through [`read`] (or
//! [`read_text`]), which bounds the time and memory one input can take, however it is named:
//!
//! * **Regular files only.** The path's file type is checked before the file is opened, so a
//!   FIFO (opening one for reading blocks until a writer comes), a device (`/dev/zero` never
//!   ends), a socket or a directory is refused by name. The file is then opened non-blocking
//!   and its type checked again on the open handle, so a path swapped for a FIFO in between
//!   cannot block either.
//! * **A size limit per kind of input** ([`Kind::limit`]), checked against the file's size
//!   before anything is read, and again while reading: at most `limit + 1` bytes are ever
//!   read (`Read::take`), so a file that grows while it is read, or a file system that
//!   reports a wrong size, is still refused without reading past the limit.
//!
//! | kind | limit | why that much |
//! | --- | --- | --- |
//! | a configuration (`--config`) | 1 MiB | a profile written by `election-bench profile` is a few KiB; a config with hundreds of custom scenarios is well under 1 MiB |
//! | a measured distribution (`empirical:`) | 16 MiB | about two million samples of a `ping` log; a larger measurement fits as a `le,count` histogram |
//! | a Prometheus scrape (`--from-prometheus`) | 32 MiB | an etcd member's `/metrics` is a few hundred KiB; a `/federate` dump of a large fleet a few MiB |
//! | a list of shard directories (`merge --list`) | 4 MiB | some 40,000 paths of 100 characters, more shards than any array job runs |
//!
//! `merge --list -` reads standard input, a stream by design: [`read_stream`] bounds it the
//! same way.
//!
//! Errors ([`InputError`]) name the file, the kind of input and what is wrong with it (its
//! type, its size against the limit, the first line that is not UTF-8), and never quote the
//! file's content: a mistyped path to a secret must not print the secret. The parsers that read
//! the text follow the same rule: they name the line and the field, not the text.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a file is read as; each kind has its own size limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A TOML configuration (`--config`).
    Config,
    /// A measured distribution (`empirical:FILE`).
    Empirical,
    /// A Prometheus text-format scrape (`profile --from-prometheus`).
    Scrape,
    /// A list of shard directories, one a line (`merge --list`).
    List,
}

impl Kind {
    /// The largest file of this kind that is read, in bytes (see the module docs).
    pub const fn limit(self) -> u64 {
        match self {
            Kind::Config => 1 << 20,
            Kind::Empirical => 16 << 20,
            Kind::Scrape => 32 << 20,
            Kind::List => 4 << 20,
        }
    }

    /// How errors name the kind of input.
    pub const fn what(self) -> &'static str {
        match self {
            Kind::Config => "configuration",
            Kind::Empirical => "measured distribution (empirical:)",
            Kind::Scrape => "Prometheus scrape",
            Kind::List => "list of shard directories",
        }
    }
}

/// Why a file was not read. Every variant's message names the file and the kind of input;
/// none quotes the file's content.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The path is not a regular file (a directory, FIFO, device or socket).
    #[error("{}: is {file_type}, not a regular file (a {} is read from a regular file only)", path.display(), kind.what())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: Kind,
        /// What it is instead (`a directory`, `a FIFO (named pipe)`, ...).
        file_type: &'static str,
    },
    /// The file is larger than its kind's limit.
    #[error("{}: {} is larger than the limit of {} for a {}", path.display(), size_text(.size), size_text(&kind.limit()), kind.what())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: Kind,
        /// Its size as reported, or `limit + 1` when it grew past the limit while read.
        size: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{}: line {line}: the {} is not UTF-8 text", path.display(), kind.what())]
    NotText {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: Kind,
        /// The first line (1-based) with a byte sequence that is not UTF-8.
        line: usize,
    },
    /// The file could not be inspected, opened or read.
    #[error("{}: cannot read the {}: {source}", path.display(), kind.what())]
    Io {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: Kind,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what())
    }
}

/// `bytes` as people read sizes: `2.0 GiB (2147483648 bytes)`, or `512 bytes`.
fn size_text(bytes: &u64) -> String {
    let bytes = *bytes;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} ({bytes} bytes)", crate::memory::human(bytes))
    }
}

/// What a non-regular file is, for the error.
fn type_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Open `path` for reading without blocking on a FIFO that appeared after the type check.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// Read the regular file `path` as `kind`: its type and size checked first, at most
/// `kind.limit()` bytes read (see the module docs).
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        kind,
        source,
    };
    let check = |m: &std::fs::Metadata| -> Result<(), InputError> {
        if !m.file_type().is_file() {
            return Err(InputError::NotRegular {
                path: path.to_path_buf(),
                kind,
                file_type: type_name(m.file_type()),
            });
        }
        if m.len() > kind.limit() {
            return Err(InputError::TooLarge {
                path: path.to_path_buf(),
                kind,
                size: m.len(),
            });
        }
        Ok(())
    };
    // The path's type before opening it: opening a FIFO for reading waits for a writer.
    check(&std::fs::metadata(path).map_err(io)?)?;
    let f = open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    check(&meta)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > kind.limit() {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            kind,
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// At most `kind.limit()` bytes of the stream `r` (standard input), named `path` in errors, as
/// text: a longer stream is refused after `limit + 1` bytes, without reading the rest.
pub fn read_stream(r: impl Read, path: &Path, kind: Kind) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    r.take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            kind,
            source,
        })?;
    if bytes.len() as u64 > kind.limit() {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            kind,
            size: bytes.len() as u64,
        });
    }
    text(path, kind, bytes)
}

/// UTF-8 `bytes` read from `path` as text, or the line of the first byte that is not.
pub fn text(path: &Path, kind: Kind, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..bad].iter().filter(|&&b| b == b'\n').count();
        InputError::NotText {
            path: path.to_path_buf(),
            kind,
            line,
        }
    })
}

/// [`read`], then [`text`].
pub fn read_text(path: &Path, kind: Kind) -> Result<String, InputError> {
    read(path, kind).and_then(|b| text(path, kind, b))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A FIFO at `dir/name`, for the tests of every entry point.
    pub(crate) fn mkfifo(dir: &Path, name: &str) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let p = dir.join(name);
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        p
    }

    /// A sparse file of 2 GiB at `dir/name`: no disk space used, and never read.
    pub(crate) fn huge(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::File::create(&p).unwrap().set_len(2 << 30).unwrap();
        p
    }

    #[test]
    fn regular_files_within_the_limit_are_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.toml");
        std::fs::write(&p, "seeds = 2\n").unwrap();
        assert_eq!(read_text(&p, Kind::Config).unwrap(), "seeds = 2\n");
        // Exactly at the limit is still read.
        std::fs::write(&p, vec![b'#'; Kind::Config.limit() as usize]).unwrap();
        assert_eq!(
            read(&p, Kind::Config).unwrap().len() as u64,
            Kind::Config.limit()
        );
    }

    #[test]
    fn devices_fifos_directories_and_huge_files_are_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let cases = [
            (PathBuf::from("/dev/zero"), "a character device"),
            (mkfifo(d.path(), "pipe"), "a FIFO (named pipe)"),
            (d.path().to_path_buf(), "a directory"),
            (huge(d.path(), "big"), "2.0 GiB (2147483648 bytes)"),
        ];
        for kind in [Kind::Config, Kind::Empirical, Kind::Scrape, Kind::List] {
            for (p, why) in &cases {
                let e = read(p, kind).unwrap_err().to_string();
                assert!(e.starts_with(&format!("{}: ", p.display())), "{e}");
                assert!(e.contains(why) && e.contains(kind.what()), "{e}");
            }
        }
        let e = read(&cases[3].0, Kind::Empirical).unwrap_err().to_string();
        assert!(e.contains("limit of 16.0 MiB"), "{e}");
    }

    #[test]
    fn a_file_past_the_limit_is_refused_and_not_utf8_names_the_line_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.toml");
        std::fs::write(&p, vec![b'#'; Kind::Config.limit() as usize + 1]).unwrap();
        assert!(matches!(
            read(&p, Kind::Config),
            Err(InputError::TooLarge { size, .. }) if size == Kind::Config.limit() + 1
        ));
        std::fs::write(&p, b"secret = 1\nsecret\xff\n").unwrap();
        let e = read_text(&p, Kind::Config).unwrap_err().to_string();
        assert!(e.contains("line 2") && !e.contains("secret"), "{e}");
        // An endless stream is cut one byte past the limit.
        let e = read_stream(std::io::repeat(b'x'), Path::new("-"), Kind::List).unwrap_err();
        assert!(
            matches!(e, InputError::TooLarge { size, .. } if size == Kind::List.limit() + 1),
            "{e}"
        );
        assert_eq!(
            read_stream(&b"a\nb\n"[..], Path::new("-"), Kind::List).unwrap(),
            "a\nb\n"
        );
        let e = read(&d.path().join("missing"), Kind::Scrape)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("missing: cannot read the Prometheus scrape"),
            "{e}"
        );
    }
}
