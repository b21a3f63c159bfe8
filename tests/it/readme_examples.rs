//! Every command in README.md's `sh` blocks runs as written: each `cargo run --release -- ARGS`
//! line (continuations joined, comments dropped) runs as `election-bench ARGS` in one scratch
//! directory, in README order, so a command that needs an earlier one's output (`report
//! --results results/loss`, `compare results/before results/after`) finds it exactly where the
//! README's earlier command put it. Only the budgets shrink (seeds, trials, hours, sizes; see
//! `smaller`), since the tests run a debug build; every flag the README gives is kept. Any other
//! line must be one of the few non-tool commands the README shows (`cargo build`, `mkdir -p`,
//! ...), so a new kind of example cannot slip past unrun.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::smaller;

const BIN: &str = env!("CARGO_BIN_EXE_election-bench");
const RUN: &str = "cargo run --release --";

/// The lines of the README's ```sh blocks, continuations joined and comments dropped.
fn sh_lines(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = t == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        // A comment starts at a `#` after whitespace (no README command has one otherwise).
        let code = match t.find(" #") {
            Some(i) => &t[..i],
            None if t.starts_with('#') => "",
            None => t,
        }
        .trim_end();
        match code.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head.trim_end());
                pending.push(' ');
            }
            None => {
                pending.push_str(code);
                let whole = std::mem::take(&mut pending).trim().to_string();
                if !whole.is_empty() {
                    out.push(whole);
                }
            }
        }
    }
    out
}

/// The README's lines that are not the tool, and what may follow them.
const OTHER_COMMANDS: [&str; 12] = [
    // Regenerates committed files; tests/it/profile.rs checks they are what it writes.
    "cargo run --example synthetic-etcd-scrape -- examples/etcd/scrapes",
    // A real etcd cluster for minutes (etcd is not installed by the tests); crates/reality's
    // tests cover its parser, mapping and proxy on a corpus of real logs.
    "sudo apt-get install etcd-server",
    "election-bench reality",
    "election-bench reality --nodes 3,5 --faults kill,pause,partition --trials 20 --out results/reality-20",
    "election-bench reality --nodes 3,5 --trials 3:kill=40,3:pause=20,3:partition=15,5:kill=40 --out results/reality-run",
    // The page and the comparison of that real run (crates/report/tests/it/reality.rs runs
    // both on the fixture corpus and the committed run).
    "election-bench report --results results/reality-run",
    "election-bench sweep --name etcd-prediction --protocols etcd@3.4 --nodes 3,5 --scenarios leader-crash,leader-pause,partition-leader-minority --nets ideal --seeds 1000",
    "election-bench compare results/etcd-prediction results/reality-run",
    "cargo test --workspace",
    "cargo build --release",
    "cargo install --path .",
    "mkdir -p ~/.local/share/bash-completion/completions",
];

#[test]
fn every_readme_command_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = sh_lines(&readme);
    let tool: Vec<&String> = lines.iter().filter(|l| l.starts_with(RUN)).collect();
    assert!(tool.len() >= 20, "only {} tool commands found", tool.len());
    for l in &lines {
        assert!(
            l.starts_with(RUN) || OTHER_COMMANDS.contains(&l.as_str()),
            "README.md shows {l:?}, which this test does not know how to run: \
             add it here (or make it a `{RUN}` command)"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("examples"), dir.path().join("examples")).unwrap();
    // `live` and `calibrate` write under the system's temporary directory: here, the scratch one.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut ran = Vec::new();
    for l in tool {
        let mut args = shlex::split(&l[RUN.len()..])
            .unwrap_or_else(|| panic!("README.md: cannot split {l:?} into words"));
        // `> FILE`: the output is checked here instead of written into the home directory.
        let redirected = match args.iter().position(|a| a == ">") {
            Some(i) => {
                args.truncate(i);
                true
            }
            None => false,
        };
        let args = smaller(args);
        // The README shows some commands twice (the main job at the top and in the list).
        if ran.contains(&args) {
            continue;
        }
        let start = std::time::Instant::now();
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README.md's {l:?} (run as election-bench {}) failed with {}:\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!(
            "{:6.1} s  election-bench {}",
            start.elapsed().as_secs_f64(),
            args.join(" ")
        );
        if redirected {
            assert!(!out.stdout.is_empty(), "{l:?} printed nothing");
        }
        ran.push(args);
    }
    // The outputs the README promises exist where it says.
    for f in [
        "results/default/summary.csv",
        "reports/default/REPORT.md",
        "reports/loss/REPORT.md",
        "reports/compare-before-vs-after/COMPARE.md",
        "reports/compare-before-vs-lossy/COMPARE.md",
        "reports/traces/raft.svg",
        "tmp/election-bench/calibration/README.md",
        "results/explore/summary.csv",
        "reports/tune-default/ADVICE.md",
        "reports/tune-etcd-dc/ADVICE.md",
        "profiles/etcd-example/profile.toml",
        "reports/tune-etcd-example/ADVICE.md",
        "reports/reference/REFERENCE.md",
    ] {
        assert!(
            dir.path().join(f).is_file(),
            "no {f} after the README's commands"
        );
    }
    // Nothing lands in the working directory itself (a trace there once did): only the
    // output directories the README names, and the scratch ones of this test.
    let mut top: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["examples", "profiles", "reports", "results", "tmp"]);
    for c in [
        "sweep",
        "scenarios",
        "params",
        "run",
        "trace",
        "report",
        "compare",
        "live",
        "calibrate",
        "completions",
        "validate",
        "explore",
        "tune",
        "profile",
        "reference",
    ] {
        assert!(
            ran.iter().any(|r| r[0] == c),
            "README.md has no `{c}` example"
        );
    }
}

#[test]
fn the_line_reader_joins_continuations_and_drops_comments() {
    let text = "x\n```sh\ncargo run --release -- a \\\n    b   # note\n# only a comment\nc # d\n```\n```\nnot sh\n```\n";
    assert_eq!(sh_lines(text), ["cargo run --release -- a b", "c"]);
}
