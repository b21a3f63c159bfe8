//! Every example in `--help` (the top level's and each subcommand's `Examples:`) runs as
//! printed: each line goes to `sh` in one scratch directory, in help order (the top level
//! first, then the subcommands as `election-bench --help` lists them), with the built binary
//! first on `PATH`, `HOME` and `TMPDIR` in the scratch directory, so a line that needs an
//! earlier one's output (`merge` after the shard sweeps, `report --results results/loss`)
//! finds it where that line put it. Only the budgets shrink, as for the README's commands
//! (`common::smaller`: seeds, trials, hours, sizes; `live` and `calibrate` run one and two
//! live trials over loopback), since the tests run a debug build; every flag an example gives
//! is kept. A `--shard auto` example without its scheduler's variable on the line runs in the
//! Slurm job array its comment names (task 0 of `--array=0-7`). A line that is not the tool
//! must be one of `OTHER_COMMANDS`, so a new kind of example cannot slip past unrun.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{smaller, BIN};

/// `--help` lines that are not the tool and are not run here, with the reason.
const NOT_RUN: [(&str, &str); 6] = [
    (
        "cargo run --example synthetic-etcd-scrape -- examples/etcd/scrapes",
        "regenerates committed files; tests/it/profile.rs checks they are what it writes",
    ),
    ("election-bench reality", REALITY),
    (
        "election-bench reality --nodes 3,5 --faults kill --trials 40 --out results/reality-40",
        REALITY,
    ),
    (
        "election-bench reality --faults partition --trials 5 --out results/reality-partition",
        REALITY,
    ),
    (
        "election-bench reality --nodes 3,5 --trials 3:kill=40,3:pause=20,3:partition=15,5:kill=40",
        REALITY,
    ),
    (
        "election-bench reality --timing 50/500 --pre-vote --trials 5",
        REALITY,
    ),
];

/// Why `reality`'s examples are not run here.
const REALITY: &str = "runs a real etcd cluster for minutes (etcd is not installed by the \
tests); crates/reality's tests cover its parser, mapping and proxy on a corpus of real logs";

/// Commands other than the tool that examples may run (as printed, through `sh`).
const OTHER_COMMANDS: [&str; 2] = ["mkdir", "find"];

/// The example lines of a help text: the indented lines after `Examples:` or `Example:` up to
/// a blank line, continuations joined, comments kept apart.
fn examples(help: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in help.lines() {
        if line.starts_with("Examples:") || line.starts_with("Example:") {
            inside = true;
            continue;
        }
        if line.trim().is_empty() {
            inside = false;
            continue;
        }
        if !inside || !line.starts_with("  ") || line.trim_start().starts_with('#') {
            continue;
        }
        let (code, comment) = match line.find(" #") {
            Some(i) => (&line[..i], line[i + 2..].trim()),
            None => (line, ""),
        };
        let code = code.trim();
        match code.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head.trim_end());
                pending.push(' ');
            }
            None => {
                pending.push_str(code);
                out.push((std::mem::take(&mut pending), comment.to_string()));
            }
        }
    }
    out
}

fn help(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `election-bench --help` lists, in its order.
fn subcommands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// `line` for `sh` with the tool's budget shrunk: words re-quoted, `|` and `>` left as
/// operators, `~` left for the shell.
fn shell_line(line: &str) -> String {
    let words = shlex::split(line).unwrap_or_else(|| panic!("cannot split {line:?}"));
    let mut out: Vec<String> = Vec::new();
    let mut rest = &words[..];
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|w| w == "|" || w == ">")
            .unwrap_or(rest.len());
        let (segment, tail) = rest.split_at(end);
        let tool = segment.iter().position(|w| w == "election-bench");
        let segment: Vec<String> = match tool {
            Some(i) => {
                let mut s = segment[..=i].to_vec();
                s.extend(smaller(segment[i + 1..].to_vec()));
                s
            }
            None => segment.to_vec(),
        };
        for (k, w) in segment.into_iter().enumerate() {
            // `VAR=value` before the tool is an assignment only when left unquoted.
            let assignment = tool.is_some_and(|i| k < i)
                && w.split_once('=').is_some_and(|(n, v)| {
                    n.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                        && v.chars().all(|c| c.is_ascii_alphanumeric())
                });
            out.push(match w.strip_prefix("~/") {
                _ if assignment => w,
                Some(rest) => format!("~/{}", shlex::try_quote(rest).unwrap()),
                None => shlex::try_quote(&w).unwrap().into_owned(),
            });
        }
        if let Some((op, t)) = tail.split_first() {
            out.push(op.clone());
            rest = t;
        } else {
            rest = tail;
        }
    }
    out.join(" ")
}

#[test]
fn every_help_example_runs_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let top = help(&["--help"]);
    let mut lines = examples(&top);
    for c in subcommands(&top) {
        lines.extend(examples(&help(&[&c, "--help"])));
    }
    assert!(lines.len() >= 40, "only {} examples found", lines.len());
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("examples"), dir.path().join("examples")).unwrap();
    for d in ["home", "tmp"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut ran: Vec<String> = Vec::new();
    for (line, comment) in &lines {
        if let Some((_, why)) = NOT_RUN.iter().find(|(l, _)| l == line) {
            eprintln!("not run ({why}): {line}");
            continue;
        }
        let first = line
            .split_whitespace()
            .find(|w| !w.contains('='))
            .unwrap_or("");
        assert!(
            first == "election-bench" || OTHER_COMMANDS.contains(&first),
            "--help shows {line:?}, which this test does not know how to run: add it here"
        );
        let sh = shell_line(line);
        // The help shows some commands twice (the top level's and the subcommand's).
        if ran.contains(&sh) {
            continue;
        }
        let mut c = Command::new("sh");
        c.args(["-c", &sh])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", dir.path().join("home"))
            .env("TMPDIR", dir.path().join("tmp"));
        for v in common::SCHEDULER_VARS {
            c.env_remove(v);
        }
        if line.contains("--shard auto") && !line.contains("JOB_COMPLETION_INDEX") {
            assert!(comment.contains("Slurm"), "{line:?}: which scheduler?");
            c.envs([
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "8"),
                ("SLURM_ARRAY_TASK_STEP", "1"),
            ]);
        }
        let start = std::time::Instant::now();
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "--help's {line:?} (run as {sh:?}) failed with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{:6.1} s  {sh}", start.elapsed().as_secs_f64());
        ran.push(sh);
    }
    // What the examples say they write is where they say.
    for f in [
        "reports/traces/raft.svg",
        "reports/traces/bully.mmd",
        "results/listed/manifest.json",
        "reports/mine/REPORT.md",
        "reports/tune-stalls/ADVICE.md",
        "reports/reference-quick/REFERENCE.md",
        "home/.local/share/bash-completion/completions/election-bench",
        "home/.zfunc/_election-bench",
    ] {
        assert!(dir.path().join(f).is_file(), "no {f} after the examples");
    }
}

#[test]
fn the_example_reader_joins_continuations_and_keeps_comments_apart() {
    let text = "About\n\nExamples:\n  election-bench a \\\n      --b c   # note\n      # only a comment\n  mkdir -p ~/x\n\nMore text\n  not an example\n";
    assert_eq!(
        examples(text),
        [
            ("election-bench a --b c".to_string(), "note".to_string()),
            ("mkdir -p ~/x".to_string(), String::new())
        ]
    );
    for l in [
        "election-bench params | grep -A1 '^raft\\.'",
        "find shards -name manifest.json -printf '%h\\n' > list.txt",
    ] {
        assert_eq!(shlex::split(&shell_line(l)), shlex::split(l));
    }
    let redirected = shell_line("election-bench completions bash > ~/.a/b");
    assert!(redirected.ends_with(" > ~/.a/b"), "{redirected}");
}
