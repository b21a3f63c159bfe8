//! The HTML report page in a real browser: a small sweep, its report, and `index.html` opened
//! in headless Chromium, which must render the decision matrix, decode every chart and trace,
//! and make every table sortable and filterable (the page's script records what it did on
//! `<body>`; Chromium's `--dump-dom` prints the DOM after the page's load event).
//!
//! Chromium comes from the system packages, so whether the test can run is known only when it
//! runs: it looks for `chromium`, `chromium-browser`, `google-chrome` or
//! `google-chrome-stable` on `PATH`, or `ELECTION_BENCH_CHROMIUM`. Found, the page is checked.
//! Not found, the test fails when `ELECTION_BENCH_REQUIRE_BROWSER=1` (`.ci/run` installs
//! Debian's `chromium` and sets it), and otherwise returns without checking the page, printing
//! what to install (`cargo test --test it html_page -- --nocapture` shows it). The page itself is
//! also checked by the report crate's tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_election-bench");

fn browser() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("ELECTION_BENCH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn run(args: &[&str]) {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "election-bench {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs Chromium headless on `page` and returns the DOM after load. The DOM goes to a file
/// (a pipe would fill and stall the browser); Chromium and its helper processes run in a
/// process group of their own, killed by its id if they have not finished within a minute.
fn dump_dom(chromium: &Path, page: &Path, dir: &Path) -> String {
    use std::os::unix::process::CommandExt;
    let dom = dir.join("dom.html");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdout(std::fs::File::create(&dom).unwrap())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&dom).unwrap()
}

fn attr(dom: &str, name: &str) -> Option<u32> {
    let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
    dom[at..].split('"').next()?.parse().ok()
}

/// What to do when no browser is found.
const NO_BROWSER: &str = "no Chromium found (chromium, chromium-browser, google-chrome or \
     google-chrome-stable on PATH, or ELECTION_BENCH_CHROMIUM naming one): install one (Debian: \
     apt-get install chromium) to check the HTML page in a browser";

#[test]
fn the_html_page_renders_the_matrix_charts_and_tables_in_a_browser() {
    let Some(chromium) = browser() else {
        let required = std::env::var("ELECTION_BENCH_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "ELECTION_BENCH_REQUIRE_BROWSER=1 and {NO_BROWSER}"
        );
        eprintln!("the browser check did not run: {NO_BROWSER}");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let report = tmp.path().join("report");
    run(&[
        "sweep",
        "--name",
        "html",
        "--protocols",
        "bully,raft+pre_vote+check_quorum",
        "--nodes",
        "3,5",
        "--scenarios",
        "leader-crash,partition-leader-minority,leader-recovers",
        "--seeds",
        "8",
        "--out",
        results.to_str().unwrap(),
        "--no-report",
        "--quiet",
    ]);
    run(&[
        "report",
        "--results",
        results.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    let page = report.join("index.html");
    assert!(page.is_file(), "report wrote no index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("src=\"charts/"), "a chart is not inlined");
    assert!(!html.contains("src=\"traces/"), "a trace is not inlined");

    let dom = dump_dom(&chromium, &page, tmp.path());
    // The decision matrix rendered as a table under its heading, with a row per protocol.
    let m = dom
        .find("id=\"1-decision-matrix\"")
        .expect("matrix heading in the DOM");
    let table = &dom[m..dom[m..]
        .find("</table>")
        .map(|e| m + e)
        .expect("matrix table")];
    for p in ["bully", "raft+pre_vote+check_quorum"] {
        assert!(
            table.contains(&format!("<code>{p}</code>")),
            "matrix lacks {p}"
        );
    }
    assert!(
        table.contains("failover p50 / p95"),
        "matrix lacks failover"
    );
    // Every image decoded: the charts and the traces.
    let total = attr(&dom, "data-images-total").expect("the page script ran");
    let loaded = attr(&dom, "data-images-loaded").unwrap();
    assert!(total >= 6, "only {total} images on the page");
    assert_eq!(loaded, total, "{loaded} of {total} images decoded");
    // Every table got its filter box.
    let tables = attr(&dom, "data-tables").unwrap();
    assert!(tables > 5, "{tables} tables");
    assert_eq!(
        dom.matches("class=\"filter\"").count() as u32,
        tables,
        "a table without a filter"
    );
}
