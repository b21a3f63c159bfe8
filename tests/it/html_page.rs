//! The HTML report page in a real browser: a small sweep, its report, and `index.html` opened
//! in headless Chromium, which must render the decision matrix, decode every chart and trace,
//! and make every table sortable and filterable (the page's script records what it did on
//! `<body>`; Chromium's `--dump-dom` prints the DOM after the page's load event).
//!
//! A second test renders the committed default sweep's page (`results/default`, the real
//! eleven-column matrix) into a temporary directory and opens it at 1400 px wide with a probe
//! script added: no row of the decision matrix may be taller than [`MAX_ROW_LINES`] lines, the
//! matrix may not be wider than the window, and the contents bar must be `position: sticky`
//! and still at the top of the window after the page scrolled past the matrix. The probe
//! writes what it measured onto `<body>`, read back with `--dump-dom`; a screenshot of the
//! page's top at 1400 px (contents bar, first screen, the whole matrix) goes to
//! `target/tmp/html_page_matrix_1400.png` for a person to look at.
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

/// Runs Chromium headless on `page` with `extra` flags (a window size, `--dump-dom`,
/// `--screenshot=…`) and returns what it printed. The output goes to a file (a pipe would
/// fill and stall the browser); Chromium and its helper processes run in a process group of
/// their own, killed by its id if they have not finished within a minute.
fn chromium_run(chromium: &Path, page: &Path, dir: &Path, extra: &[String]) -> String {
    use std::os::unix::process::CommandExt;
    let out = dir.join("chromium-out.txt");
    let profile = tempfile::tempdir_in(dir).unwrap();
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
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(std::fs::File::create(&out).unwrap())
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
    std::fs::read_to_string(&out).unwrap()
}

/// The DOM of `page` after its load event.
fn dump_dom(chromium: &Path, page: &Path, dir: &Path) -> String {
    chromium_run(chromium, page, dir, &["--dump-dom".to_string()])
}

fn attr(dom: &str, name: &str) -> Option<u32> {
    attr_str(dom, name)?.parse().ok()
}

fn attr_str<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
    dom[at..].split('"').next()
}

/// What to do when no browser is found.
const NO_BROWSER: &str = "no Chromium found (chromium, chromium-browser, google-chrome or \
     google-chrome-stable on PATH, or ELECTION_BENCH_CHROMIUM naming one): install one (Debian: \
     apt-get install chromium) to check the HTML page in a browser";

/// The browser, or `None` after saying why the check does not run (a failure when
/// `ELECTION_BENCH_REQUIRE_BROWSER=1`).
fn browser_or_skip() -> Option<PathBuf> {
    let found = browser();
    if found.is_none() {
        let required = std::env::var("ELECTION_BENCH_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "ELECTION_BENCH_REQUIRE_BROWSER=1 and {NO_BROWSER}"
        );
        eprintln!("the browser check did not run: {NO_BROWSER}");
    }
    found
}

#[test]
fn the_html_page_renders_the_matrix_charts_and_tables_in_a_browser() {
    let Some(chromium) = browser_or_skip() else {
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
    // (A protocol name in the matrix may break after its `+`s: `<wbr>`.)
    let table = table.replace("<wbr>", "");
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

/// The tallest a row of the decision matrix may be at 1400 px, in lines of its text. Before
/// the matrix was compacted, rows of the default sweep were 6 to 10 lines tall.
const MAX_ROW_LINES: f64 = 4.0;

/// What the probe measures once the page has loaded, written onto `<body>`: the matrix's
/// rows (`data-probe-rows`), the tallest body row in lines of its text
/// (`data-probe-row-lines`, tenths) and the header's (`data-probe-head-lines`), how far the
/// matrix reaches past the window's edges (`data-probe-overflow`, px), the contents bar's
/// computed `position` and its top after the window scrolled to the matrix's last row
/// (`data-probe-nav-top`, px). Then it scrolls back to the top: headless Chromium's
/// `--screenshot` of a scrolled window comes out blank, so the screenshot is of the page's
/// top (the first screen and the whole matrix) and the bar's stickiness is measured, not
/// pictured.
const PROBE: &str = r#"<script>
window.addEventListener('load', function () {
  var b = document.body, wrap = document.querySelector('.matrix-wrap');
  var nav = document.querySelector('nav.doc-nav');
  if (!wrap || !nav) { b.setAttribute('data-probe', 'missing'); return; }
  var table = wrap.querySelector('table');
  var rows = table.tBodies[0].rows, worst = 0;
  var line = parseFloat(getComputedStyle(rows[0].cells[1]).lineHeight);
  for (var i = 0; i < rows.length; i++) {
    worst = Math.max(worst, rows[i].getBoundingClientRect().height / line);
  }
  var head = table.tHead.rows[0].getBoundingClientRect().height / line;
  b.setAttribute('data-probe-rows', String(rows.length));
  b.setAttribute('data-probe-row-lines', String(Math.round(worst * 10)));
  b.setAttribute('data-probe-head-lines', String(Math.round(head * 10)));
  var box = table.getBoundingClientRect();
  b.setAttribute('data-probe-overflow', String(Math.round(Math.max(0, box.right - window.innerWidth, -box.left))));
  b.setAttribute('data-probe-nav-position', getComputedStyle(nav).position);
  var last = rows[rows.length - 1].getBoundingClientRect();
  window.scrollTo(0, window.scrollY + last.bottom - window.innerHeight + 40);
  b.setAttribute('data-probe-scrolled', String(Math.round(window.scrollY)));
  b.setAttribute('data-probe-nav-top', String(Math.round(nav.getBoundingClientRect().top)));
  window.scrollTo(0, 0);
  b.setAttribute('data-probe', 'ran');
});
</script>
"#;

#[test]
fn the_default_matrix_is_compact_and_the_contents_bar_sticks_at_1400_px() {
    let Some(chromium) = browser_or_skip() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    // The committed page's companions (the gray sweep's liveness beside the default's, the
    // exploration's line) are read when their pages sit beside the report: copies of those.
    let report = tmp.path().join("reports/default");
    for companion in ["gray", "explore"] {
        let dir = tmp.path().join("reports").join(companion);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            root.join("reports").join(companion).join("REPORT.md"),
            dir.join("REPORT.md"),
        )
        .unwrap();
    }
    run(&[
        "report",
        "--results",
        root.join("results/default").to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let probed = report.join("probed.html");
    let at = html.rfind("</body>").expect("</body>");
    std::fs::write(&probed, format!("{}{PROBE}{}", &html[..at], &html[at..])).unwrap();

    // A picture of it for a person, taken first so that a failure below leaves one: the
    // page's top 2400 px at 1400 px wide (contents bar, first screen, the whole matrix).
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_page_matrix_1400.png");
    let _ = std::fs::remove_file(&shot);
    chromium_run(
        &chromium,
        &probed,
        tmp.path(),
        &[
            "--window-size=1400,2400".to_string(),
            format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).expect("no screenshot");
    assert_eq!(&png[1..4], b"PNG", "the screenshot is not a PNG");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(width, 1400, "the screenshot is {width} px wide");
    eprintln!("screenshot: {}", shot.display());

    let size = "--window-size=1400,900".to_string();
    let dom = chromium_run(
        &chromium,
        &probed,
        tmp.path(),
        &[size.clone(), "--dump-dom".to_string()],
    );
    assert_eq!(
        attr_str(&dom, "data-probe"),
        Some("ran"),
        "the probe did not run (no matrix or no contents bar?)"
    );
    let rows = attr(&dom, "data-probe-rows").unwrap();
    assert!(rows >= 10, "the default matrix has only {rows} rows");
    let row_lines = attr(&dom, "data-probe-row-lines").unwrap() as f64 / 10.0;
    let head_lines = attr(&dom, "data-probe-head-lines").unwrap() as f64 / 10.0;
    eprintln!(
        "matrix at 1400 px: {rows} rows, the tallest {row_lines} lines, header {head_lines} lines"
    );
    assert!(
        row_lines <= MAX_ROW_LINES,
        "a matrix row is {row_lines} lines tall at 1400 px (at most {MAX_ROW_LINES})"
    );
    assert!(
        head_lines <= 7.0,
        "the matrix header is {head_lines} lines tall at 1400 px"
    );
    let overflow = attr(&dom, "data-probe-overflow").unwrap();
    assert!(
        overflow == 0,
        "the matrix reaches {overflow} px past a 1400 px window"
    );
    assert_eq!(
        attr_str(&dom, "data-probe-nav-position"),
        Some("sticky"),
        "the contents bar is not sticky"
    );
    let scrolled = attr(&dom, "data-probe-scrolled").unwrap();
    assert!(scrolled > 500, "the window scrolled only {scrolled} px");
    assert_eq!(
        attr(&dom, "data-probe-nav-top"),
        Some(0),
        "after scrolling {scrolled} px the contents bar is not at the top"
    );
    // The contents bar lists the report's and the appendix's sections.
    for anchor in ["#1-decision-matrix", "#4-charts", "#e-summary-tables"] {
        assert!(
            dom.contains(&format!("<a href=\"{anchor}\">")),
            "the contents bar lacks {anchor}"
        );
    }
}
