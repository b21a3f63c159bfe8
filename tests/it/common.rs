//! What the end-to-end tests of the binary share: running it, checking its exit code and
//! output, the tiny sweep most tests start from, and reading or tampering with results files.
//! Each `tests/it/cli_*.rs` uses a part of it.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_election-bench");

pub fn bench(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

/// The Kubernetes and Slurm array variables `--shard auto` reads: a test removes those of its
/// own environment.
pub const SCHEDULER_VARS: [&str; 5] = [
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_STEP",
];

/// [`bench`] under a batch scheduler's environment: `env` set, and none of the Kubernetes or
/// Slurm array variables of the test's own environment.
pub fn bench_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(cwd);
    for v in SCHEDULER_VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c.output().expect("the binary runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

#[track_caller]
pub fn fails(o: &Output, code: i32, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
}

/// A tiny sweep: 2 protocols × 2 sizes × 2 scenarios × 2 seeds.
pub const TINY: &[&str] = &[
    "sweep",
    "--protocols",
    "bully,raft+pre_vote",
    "--nodes",
    "3,5",
    "--scenarios",
    "leader-crash,partition-leader-minority",
    "--seeds",
    "2",
    "--quiet",
];

pub fn tiny(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args: Vec<&str> = TINY.to_vec();
    args.extend(["--out", out]);
    args.extend(extra);
    bench(&args, dir)
}

pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["trials.csv", "summary.csv", "manifest.json"]
        .iter()
        .map(|f| {
            let p = dir.join(f);
            (
                f.to_string(),
                fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            )
        })
        .collect()
}

#[track_caller]
pub fn same_files(a: &Path, b: &Path) {
    for ((name, x), (_, y)) in files(a).into_iter().zip(files(b)) {
        assert!(
            x == y,
            "{name} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `path` with field `column` of line `line` (1-based; the header is 1) set to `value`.
pub fn corrupt(path: &Path, line: usize, column: &str, value: &str) {
    fs::write(
        path,
        replaced(&fs::read_to_string(path).unwrap(), line, column, value),
    )
    .unwrap();
}

/// The field `column` of line `line` (1-based; line 1 is the header) of a CSV text.
pub fn field<'a>(text: &'a str, line: usize, column: &str) -> &'a str {
    let mut lines = text.lines();
    let col = lines
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == column)
        .unwrap();
    text.lines()
        .nth(line - 1)
        .unwrap()
        .split(',')
        .nth(col)
        .unwrap()
}

/// A CSV text with the field `column` of line `line` (1-based) set to `value`.
fn replaced(text: &str, line: usize, column: &str, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let col = lines[0].split(',').position(|c| c == column).unwrap();
    let mut cells: Vec<&str> = lines[line - 1].split(',').collect();
    cells[col] = value;
    lines[line - 1] = cells.join(",");
    lines.join("\n") + "\n"
}

/// Record `dir/trials.csv`'s current byte count and SHA-256 in `dir/manifest.json`, as a
/// forger who knew the format would.
pub fn rehash(dir: &Path) {
    let t = fs::read(dir.join("trials.csv")).unwrap();
    let sha = sha256_hex(&t);
    let mp = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&mp).unwrap()).unwrap();
    m["trials_csv"]["sha256"] = sha.into();
    m["trials_csv"]["bytes"] = (t.len() as u64).into();
    fs::write(&mp, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Sets `flag` to `value`: replaces the value the command gives, or appends the flag.
pub fn set(args: &mut Vec<String>, flag: &str, value: &str) {
    match args.iter().position(|a| a == flag) {
        Some(i) => args[i + 1] = value.to_string(),
        None => args.extend([flag.to_string(), value.to_string()]),
    }
}

/// The same command (its words after `election-bench`) with a budget a debug build runs in
/// seconds, every other flag kept: for the README's commands (`tests/it/readme_examples.rs`) and
/// the `--help` examples (`tests/it/help_examples.rs`), run in scratch directories (so `--force`
/// where a smaller budget into a default directory would otherwise be refused).
pub fn smaller(mut args: Vec<String>) -> Vec<String> {
    let has = |args: &[String], f: &str| args.iter().any(|a| a == f);
    match args[0].as_str() {
        "sweep" => {
            set(&mut args, "--seeds", "2");
            if !has(&args, "--nodes") {
                set(&mut args, "--nodes", "3");
            }
        }
        "explore" => {
            set(&mut args, "--nodes", "3");
            set(&mut args, "--seeds", "1");
            // Other options than the defaults into the default (here scratch) directories.
            args.push("--force".into());
        }
        "tune" => {
            if !has(&args, "--protocols") {
                set(&mut args, "--protocols", "raft");
            }
            set(&mut args, "--hours", "1");
            set(&mut args, "--max-hours", "1");
            set(&mut args, "--crash-trials", "20");
            set(&mut args, "--rounds", "0");
            set(&mut args, "--ratios", "5");
            set(&mut args, "--disk-hours", "1");
            // One simulated minute for each "hour" of steady noise.
            args.extend(["--set".into(), "steady_ms=60000".into()]);
            if !has(&args, "--name") && !has(&args, "--out") {
                args.push("--force".into());
            }
        }
        "live" => set(&mut args, "--trials", "1"),
        "calibrate" => {
            set(&mut args, "--protocol", "bully");
            set(&mut args, "--trials", "2");
            set(&mut args, "--sim-trials", "5");
        }
        "validate" => {
            set(&mut args, "--case", "bully-best-case");
        }
        "reference" => {
            // Too few seeds for any test: the page says so, nothing is unexplained. Other
            // options than the defaults into the default (here scratch) directories.
            set(&mut args, "--seeds", "2");
            set(&mut args, "--nodes", "3");
            args.push("--force".into());
        }
        _ => {}
    }
    args
}

/// The SHA-256 of `bytes` in hex, as the tool records it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
