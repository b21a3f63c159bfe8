//! `trace`: one trial as a message-sequence chart (SVG, Mermaid) or JSON lines, streamed.

use std::path::PathBuf;

use clap::Args;
use election_report::{render_trace, ReportError, TraceFormat, TraceMeta};
use election_runner::Error;

use super::TrialArgs;
use crate::error::CliError;

#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(flatten)]
    pub trial: TrialArgs,
    /// Output format (default: from the --out extension, .svg, .mmd or .mermaid, .jsonl; else
    /// svg).
    #[arg(long, value_parser = ["svg", "mermaid", "jsonl"])]
    pub format: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The trace format `--format` names, or else the one `--out`'s extension names, or SVG.
fn trace_format(format: Option<&str>, out: Option<&std::path::Path>) -> Result<TraceFormat, Error> {
    let from_ext = || match out
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("mmd" | "mermaid") => "mermaid",
        Some("jsonl") => "jsonl",
        _ => "svg",
    };
    format
        .unwrap_or_else(from_ext)
        .parse()
        .map_err(|e: ReportError| Error::Usage(e.to_string()))
}

/// `trace`: one trial's chart in the format `--format` or `--out`'s extension names.
pub fn run(a: TraceArgs) -> Result<(), CliError> {
    let format = trace_format(a.format.as_deref(), a.out.as_deref())?;
    if let Some(path) = &a.out {
        super::dirs::refuse_committed(
            "trace",
            &[super::dirs::parent_of(path)],
            None,
            "a committed directory holds only what its command generates",
            "give --out in another directory, e.g. reports/traces/",
        )?;
    }
    let cell = a.trial.cell("trace")?;
    // `--out reports/traces/raft.svg`: the directory is made once the trial is known to be
    // valid, so bad input leaves nothing behind.
    if let Some(dir) = a.out.as_deref().map(super::dirs::parent_of) {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io {
                context: format!("cannot create {}", dir.display()),
                source: e,
            })?;
        }
    }
    if format == TraceFormat::Jsonl {
        return trace_jsonl(&a, &cell);
    }
    let t = cell.run(a.trial.seed, true)?;
    let meta = TraceMeta::from_metrics(
        &t.row.protocol,
        &t.row.scenario,
        &t.row.net,
        a.trial.seed,
        &t.report.metrics,
    );
    let meta = TraceMeta {
        services: cell.protocol.kind.services(&cell.resolved),
        ..meta
    };
    // The store of a lease trial is one more lane, after the members.
    let lanes = a.trial.cell.nodes + meta.services;
    let text = render_trace(&t.report.trace, lanes, &meta, format)?;
    match &a.out {
        Some(path) => {
            election_runner::files::write_atomic(path, text.as_bytes())?;
            out!("trace: {}", path.display());
        }
        None => out_nonl!("{text}"),
    }
    Ok(())
}

/// `trace --format jsonl`, written as the trial runs instead of buffered, so a trace of any
/// length takes no memory. The `meta` line comes first and carries the trial's outcome, so the
/// trial runs twice (it is deterministic): once for its metrics, once streaming its records.
/// The output is byte-identical to rendering the buffered trace.
fn trace_jsonl(a: &TraceArgs, cell: &election_runner::Cell) -> Result<(), CliError> {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let seed = a.trial.seed;
    let first = cell.run(seed, false)?;
    let meta = TraceMeta::from_metrics(
        &first.row.protocol,
        &first.row.scenario,
        &first.row.net,
        seed,
        &first.report.metrics,
    );
    let io_err = |what: &str, path: &std::path::Path, source| Error::Io {
        context: format!("{what} {}", path.display()),
        source,
    };
    // To a file: a temporary file in the same directory, renamed over the target at the end.
    let tmp = a.out.as_ref().map(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        p.with_file_name(format!(".{}.tmp", name.unwrap_or_default()))
    });
    let target: Box<dyn Write + Send> = match (&a.out, &tmp) {
        (Some(path), Some(tmp)) => {
            Box::new(std::fs::File::create(tmp).map_err(|e| io_err("cannot write", path, e))?)
        }
        _ => Box::new(std::io::stdout()),
    };
    // The writer and the first write error, shared with the sink.
    type Shared = Arc<
        Mutex<(
            std::io::BufWriter<Box<dyn Write + Send>>,
            std::io::Result<()>,
        )>,
    >;
    let out: Shared = Arc::new(Mutex::new((std::io::BufWriter::new(target), Ok(()))));
    let write = |out: &Shared, line: &str| {
        let mut g = out.lock().unwrap_or_else(|p| p.into_inner());
        if g.1.is_ok() {
            g.1 = g.0.write_all(line.as_bytes());
        }
    };
    write(
        &out,
        &election_report::jsonl_meta(a.trial.cell.nodes, &meta),
    );
    let sink = {
        let out = out.clone();
        election_sim::TraceSink::new(move |e| write(&out, &election_report::jsonl_event(e)))
    };
    let second = cell.run_streaming(seed, sink);
    let (mut w, status) = {
        let mut g = out.lock().unwrap_or_else(|p| p.into_inner());
        let w = std::mem::replace(&mut g.0, std::io::BufWriter::new(Box::new(std::io::sink())));
        (w, std::mem::replace(&mut g.1, Ok(())))
    };
    let written = status.and_then(|()| w.flush());
    let result = (|| -> Result<(), CliError> {
        let second = second?;
        if second.row != first.row {
            return Err(Error::Usage(
                "the trial did not repeat itself while streaming its trace (a determinism bug)"
                    .into(),
            )
            .into());
        }
        let path = a
            .out
            .as_deref()
            .unwrap_or(std::path::Path::new("standard output"));
        written.map_err(|e| io_err("cannot write", path, e))?;
        if let (Some(path), Some(tmp)) = (&a.out, &tmp) {
            drop(w);
            std::fs::rename(tmp, path).map_err(|e| io_err("cannot write", path, e))?;
            out!("trace: {}", path.display());
        }
        Ok(())
    })();
    if result.is_err() {
        if let Some(tmp) = &tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_format_follows_the_extension_unless_named() {
        use std::path::Path;
        let f = |fmt: Option<&str>, out: Option<&str>| trace_format(fmt, out.map(Path::new));
        assert_eq!(f(None, Some("x.mmd")).unwrap(), TraceFormat::Mermaid);
        assert_eq!(f(None, Some("x.MERMAID")).unwrap(), TraceFormat::Mermaid);
        assert_eq!(f(None, Some("x.jsonl")).unwrap(), TraceFormat::Jsonl);
        assert_eq!(f(None, Some("x.svg")).unwrap(), TraceFormat::Svg);
        assert_eq!(f(None, None).unwrap(), TraceFormat::Svg);
        assert_eq!(f(Some("svg"), Some("x.mmd")).unwrap(), TraceFormat::Svg);
        assert!(f(Some("png"), None).is_err());
    }
}
