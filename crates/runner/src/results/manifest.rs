//! `manifest.json` of a sweep (or of one shard of it): one typed [`Manifest`], written by the
//! sweep and the merge and read by `--resume`, `merge`, the check of finished results and the
//! report, through serde both ways. Field order is the file's key order, so the JSON text is
//! the same whether a manifest is built or read back and written again.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// A sweep's `manifest.json` (`results/README.md` describes every field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `election-bench`.
    pub tool: String,
    /// The tool's version.
    pub version: String,
    /// The SHA-256 of the resolved configuration as compact JSON (absent from manifests
    /// written before it replaced the git commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// The sweep's name.
    pub name: String,
    /// The command line that reproduces the sweep.
    pub command: String,
    /// The full resolved configuration.
    pub config: Value,
    /// `k/N` for one shard of a sharded sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// `seeds` when the shard holds a block of every cell's seeds (absent: whole cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_by: Option<String>,
    /// The block of seeds a `shard_by = seeds` shard ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds_run: Option<SeedsRun>,
    /// Number of cells (`summary.csv` rows).
    pub cells: u64,
    /// Number of trials (`trials.csv` rows).
    pub trials: u64,
    /// What the sweep wrote as `trials.csv` (absent while a sweep is under way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_csv: Option<TrialsCsv>,
}

/// The seeds one seed-block shard ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedsRun {
    /// The first seed.
    pub first: u64,
    /// How many.
    pub count: u64,
}

/// The record of `trials.csv` in the manifest: the compressed file the results are committed
/// in, and the row count, byte length and SHA-256 of the plain CSV.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialsCsv {
    /// The compressed file (`trials.csv.gz`).
    pub file: String,
    /// The file it compresses (`trials.csv`).
    pub of: String,
    /// Trial rows (lines but the header).
    pub rows: u64,
    /// Bytes of the plain CSV.
    pub bytes: u64,
    /// SHA-256 (hex) of the plain CSV.
    pub sha256: String,
}

impl Manifest {
    /// The manifest as the results files hold it: pretty JSON with a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut s = serde_json::to_string_pretty(self).expect("a manifest serializes");
        s.push('\n');
        s.into_bytes()
    }

    /// The manifest as a JSON value (keys in the file's order).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a manifest serializes")
    }

    /// Read a manifest from its JSON text; the error (without the file) names the line and
    /// the field as written (`"cells": "many"`) and what was expected.
    pub fn from_json(text: &str) -> std::result::Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| {
            let at = text
                .lines()
                .nth(e.line().saturating_sub(1))
                .map(|l| l.trim().trim_end_matches(','))
                .filter(|l| e.line() > 0 && !l.is_empty())
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            format!("not an election-bench manifest{at}: {e}")
        })?;
        if m.tool != "election-bench" {
            return Err(format!("written by {:?}, not by election-bench", m.tool));
        }
        Ok(m)
    }

    /// Read `text`, the manifest at `path`: [`Manifest::from_json`], the error naming the file.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        Manifest::from_json(text)
            .map_err(|reason| Error::Results(format!("{}: {reason}", path.display())))
    }

    /// Read the manifest file at `path`.
    pub fn read(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
        Manifest::parse(&text, path)
    }

    /// The manifest in `v`, read from `path` (for messages).
    pub fn from_value(v: &Value, path: &Path) -> Result<Manifest> {
        Manifest::parse(
            &serde_json::to_string_pretty(v).expect("a JSON value serializes"),
            path,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
  "tool": "election-bench",
  "version": "0.1.0",
  "config_sha256": "ab12",
  "name": "default",
  "command": "election-bench sweep",
  "config": {
    "mode": "sim",
    "seeds": {
      "first": 0,
      "count": 200
    },
    "loss": 0.05
  },
  "shard": "2/3",
  "shard_by": "seeds",
  "seeds_run": {
    "first": 67,
    "count": 67
  },
  "cells": 812,
  "trials": 54404,
  "trials_csv": {
    "file": "trials.csv.gz",
    "of": "trials.csv",
    "rows": 54404,
    "bytes": 10427364,
    "sha256": "7cf0"
  }
}
"#;

    #[test]
    fn a_manifest_reads_and_writes_back_byte_for_byte() {
        let m = Manifest::parse(TEXT, Path::new("m.json")).unwrap();
        assert_eq!(m.cells, 812);
        assert_eq!(
            m.seeds_run,
            Some(SeedsRun {
                first: 67,
                count: 67
            })
        );
        assert_eq!(m.trials_csv.as_ref().unwrap().rows, 54404);
        assert_eq!(String::from_utf8(m.to_bytes()).unwrap(), TEXT);
        // Without the optional fields: they are left out, not written as null.
        let plain = Manifest {
            shard: None,
            shard_by: None,
            seeds_run: None,
            trials_csv: None,
            config_sha256: None,
            ..m.clone()
        };
        let text = String::from_utf8(plain.to_bytes()).unwrap();
        assert!(!text.contains("null") && !text.contains("shard"), "{text}");
        assert_eq!(Manifest::parse(&text, Path::new("m.json")).unwrap(), plain);
        assert_eq!(
            Manifest::from_value(&m.to_value(), Path::new("m.json")).unwrap(),
            m
        );
    }

    #[test]
    fn a_bad_field_is_named_with_its_value() {
        for (from, to, want) in [
            (
                "\"cells\": 812",
                "\"cells\": \"many\"",
                "\"cells\": \"many\"",
            ),
            ("\"trials\": 54404", "\"trials\": -3", "\"trials\": -3"),
            ("\"rows\": 54404", "\"rows\": 1.5", "\"rows\": 1.5"),
            ("\"cells\": 812,\n", "", "missing field `cells`"),
        ] {
            let text = TEXT.replacen(from, to, 1);
            let e = Manifest::parse(&text, Path::new("dir/manifest.json"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("dir/manifest.json") && e.contains(want), "{e}");
        }
        let other = TEXT.replace("\"election-bench\"", "\"other\"");
        let e = Manifest::parse(&other, Path::new("m.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"other\""), "{e}");
    }
}
