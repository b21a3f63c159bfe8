//! `index.html`: the report and its appendix as one self-contained page that works offline.
//!
//! The page is a *rendering* of the two Markdown documents, not a third writer: the Markdown is
//! parsed with `pulldown-cmark` and turned into HTML with these changes, so the page can never
//! say something the Markdown does not:
//!
//! * headings get GitHub's anchors ([`crate::doc::anchor`]), and links between the two
//!   documents (`REPORT.md#x`, `APPENDIX.md#x`) become links within the page;
//! * every image (charts and message-sequence traces) is inlined as a `data:` URI, and links to
//!   trace files point at the inlined trace, so nothing outside the file is needed;
//! * raw HTML in the Markdown (which the report never writes, so it can only come from the
//!   data, such as a custom scenario's `about`) is escaped and shown as text;
//! * a verdict word of the matrix (`**pass**`, `**poor**`; [`crate::doc::VERDICTS`]) gets its
//!   tone's class, so the page colours it;
//! * a small script makes every table sortable (click a header) and filterable (type in the
//!   box above it), and records on `<body>` how many images decoded and how many tables it
//!   enhanced (`data-images-loaded`, `data-images-total`, `data-tables`), which the browser
//!   test reads;
//! * the decision matrix (the first table under `1. Decision matrix`) is compact, so that its
//!   eleven columns read at 1400 px with no row more than three lines tall
//!   ([`compact_matrix`]; the browser test measures it): a cell shows its linked numbers and
//!   its verdict words; the rest of it — where the number was measured, the first failing
//!   seed, parenthesised notes — is kept in the cell but hidden (`<span class="more">`),
//!   shown on hover (the cell's `title` holds its full text) and for the whole table by the
//!   checkbox above it (CSS only, no script needed). The table may use more width than the
//!   prose (up to 1600 px), in a smaller font; a short linked number and a verdict never
//!   break, a protocol name breaks only after a `+`; and the columns share the width by what
//!   their shown text needs to fit in three lines ([`Need`], a `<colgroup>` with
//!   `table-layout: fixed`), not by their longest text as the browser would.
//!
//! Above the page, a contents bar stays at the top while the page scrolls
//! (`position: sticky`): every level-2 heading of the report and of the appendix, in order.
//! Table headers stick just below it, and anchors scroll to just below it.
//!
//! Like the Markdown, the page is a pure function of the results: byte-identical for identical
//! inputs.

use std::fs;
use std::path::Path;

use base64::Engine as _;
use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::doc::html_esc as esc;
use crate::error::ReportError;
use crate::markdown::slug;

const STYLE: &str = r#"
:root { --nav: 34px; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1.5em 4em; color: #1b1f24; }
h1, h2, h3, h4 { line-height: 1.2; } h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
[id] { scroll-margin-top: calc(var(--nav) + 8px); }
.verdict { padding: 0 .3em; border-radius: 3px; white-space: nowrap; } .verdict-good { background: #dafbe1; color: #116329; } .verdict-fair { background: #fff8c5; color: #7d4e00; } .verdict-bad { background: #ffebe9; color: #a40e26; }
code { background: #f2f4f6; padding: 0 .25em; border-radius: 3px; font-size: 90%; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; }
table { border-collapse: collapse; margin: .4em 0 1.2em; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: .25em .5em; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; position: sticky; top: var(--nav); z-index: 1; }
th.sorted-asc::after { content: " ▲"; } th.sorted-desc::after { content: " ▼"; }
tr:nth-child(even) td { background: #fafbfc; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
input.filter { margin: .3em 0; padding: .2em .4em; width: 22em; font: inherit; }
.doc-nav { position: sticky; top: 0; z-index: 2; box-sizing: border-box; height: var(--nav); line-height: calc(var(--nav) - 1px); background: #fff; border-bottom: 1px solid #d0d7de; font-size: 12.5px; white-space: nowrap; overflow-x: auto; overflow-y: hidden; }
.doc-nav, .matrix-wrap { width: min(1600px, calc(100vw - 2em)); margin-left: calc(50% - min(800px, 50vw - 1em)); }
.doc-nav a { margin-right: .6em; } .doc-nav b { margin-right: .3em; } .doc-nav .sep { color: #8c959f; margin-right: .6em; }
.matrix-wrap table { font-size: 12px; line-height: 1.35; width: 100%; table-layout: fixed; }
.matrix-wrap th { font-weight: 600; }
.matrix-wrap td { padding: .2em .35em; } .matrix-wrap .nw { white-space: nowrap; }
.matrix-wrap .more { display: none; }
.matrix-wrap:has(input.matrix-full:checked) .more { display: inline; }
.matrix-toggle { font-size: 13px; margin-left: 1em; }
section.appendix { border-top: 4px double #d0d7de; margin-top: 3em; }
"#;

const SCRIPT: &str = r#"
(function () {
  function value(td) {
    var t = td.textContent.trim();
    var m = t.replace(/[, ]/g, '').match(/^[-+]?\d*\.?\d+/);
    return m ? parseFloat(m[0]) : t.toLowerCase();
  }
  var tables = document.querySelectorAll('table');
  tables.forEach(function (table) {
    var body = table.tBodies[0];
    if (!body) return;
    var input = document.createElement('input');
    input.className = 'filter';
    input.placeholder = 'filter rows…';
    input.addEventListener('input', function () {
      var q = input.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        r.style.display = r.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
      });
    });
    table.parentNode.insertBefore(input, table);
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = !th.classList.contains('sorted-asc');
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
        th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = value(a.cells[col]), y = value(b.cells[col]);
          var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.setAttribute('data-tables', String(tables.length));
  function count() {
    var imgs = document.querySelectorAll('img');
    var ok = 0;
    imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
    document.body.setAttribute('data-images-total', String(imgs.length));
    document.body.setAttribute('data-images-loaded', String(ok));
  }
  count();
  window.addEventListener('load', count);
})();
"#;

/// The anchor of an inlined trace (links to `traces/<file>` point at it).
fn trace_anchor(file: &str) -> String {
    format!("trace-{}", slug(&file.replace(['.', '/'], "-")))
}

/// A link target of the Markdown, as a target within the page.
fn page_link(dest: &str) -> String {
    for doc in ["REPORT.md", "APPENDIX.md"] {
        if let Some(rest) = dest.strip_prefix(doc) {
            return match rest.strip_prefix('#') {
                Some(anchor) => format!("#{anchor}"),
                None if doc == "REPORT.md" => "#report".to_string(),
                None => "#appendix".to_string(),
            };
        }
    }
    if dest == "index.html" {
        return "#report".to_string();
    }
    if let Some(file) = dest.strip_prefix("traces/") {
        return format!("#{}", trace_anchor(file));
    }
    dest.to_string()
}

fn data_uri(out_dir: &Path, rel: &str) -> Result<String, ReportError> {
    let path = out_dir.join(rel);
    let bytes = fs::read(&path).map_err(|e| ReportError::io(&path, e))?;
    let mime = if rel.ends_with(".svg") {
        "image/svg+xml"
    } else if rel.ends_with(".png") {
        "image/png"
    } else {
        "application/octet-stream"
    };
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// One Markdown document as HTML, images inlined from `out_dir`.
fn render(md: &str, out_dir: &Path) -> Result<String, ReportError> {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events: Vec<Event> = Parser::new_ext(md, opts).collect();
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    let mut i = 0;
    while i < events.len() {
        match &events[i] {
            Event::Start(Tag::Heading {
                level,
                classes,
                attrs,
                ..
            }) => {
                // The heading's text, for its anchor.
                let mut text = String::new();
                let mut j = i + 1;
                while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        text.push_str(t);
                    }
                    j += 1;
                }
                out.push(Event::Start(Tag::Heading {
                    level: *level,
                    id: Some(CowStr::from(slug(&text))),
                    classes: classes.clone(),
                    attrs: attrs.clone(),
                }));
            }
            // A verdict word (`**pass**`, `**poor**`) is coloured by its tone.
            Event::Start(Tag::Strong)
                if matches!(
                    (events.get(i + 1), events.get(i + 2)),
                    (Some(Event::Text(t)), Some(Event::End(TagEnd::Strong)))
                        if crate::doc::tone_of(t).is_some()
                ) =>
            {
                let Some(Event::Text(t)) = events.get(i + 1) else {
                    unreachable!("matched above")
                };
                let tone = crate::doc::tone_of(t).expect("matched above");
                out.push(Event::Html(CowStr::from(format!(
                    "<strong class=\"verdict verdict-{}\">{}</strong>",
                    tone.class(),
                    esc(t)
                ))));
                i += 3;
                continue;
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => out.push(Event::Start(Tag::Link {
                link_type: *link_type,
                dest_url: CowStr::from(page_link(dest_url)),
                title: title.clone(),
                id: id.clone(),
            })),
            Event::Start(Tag::Image {
                dest_url, title, ..
            }) => {
                // Alt text is the image's inner text; emit the tag ourselves.
                let mut alt = String::new();
                let mut j = i + 1;
                while j < events.len() && !matches!(events[j], Event::End(TagEnd::Image)) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        alt.push_str(t);
                    }
                    j += 1;
                }
                let id = dest_url
                    .strip_prefix("traces/")
                    .map(|f| format!(" id=\"{}\"", trace_anchor(f)))
                    .unwrap_or_default();
                let src = data_uri(out_dir, dest_url)?;
                out.push(Event::Html(CowStr::from(format!(
                    "<img{id} src=\"{src}\" alt=\"{}\" title=\"{}\" loading=\"eager\">",
                    esc(&alt),
                    esc(title)
                ))));
                i = j + 1;
                continue;
            }
            // The report's Markdown holds no HTML of its own: any that appears came from the
            // data (a scenario's `about`, say) and is shown as text, never run.
            Event::Html(t) | Event::InlineHtml(t) => out.push(Event::Text(t.clone())),
            e => out.push(e.clone()),
        }
        i += 1;
    }
    let mut s = String::new();
    html::push_html(&mut s, compact_matrix(out).into_iter());
    Ok(s)
}

/// The longest linked number of the matrix kept on one line, in characters.
const NOWRAP_CHARS: usize = 20;

/// The anchor of the decision matrix's heading: the first table under it is the matrix.
const MATRIX: &str = "1-decision-matrix";

/// A verdict word as the first pass writes it.
fn is_verdict(e: &Event) -> bool {
    matches!(e, Event::Html(h) if h.starts_with("<strong class=\"verdict"))
}

/// The text an event shows, unescaped (for a cell's `title`).
fn shown_text(e: &Event) -> String {
    match e {
        Event::Text(t) | Event::Code(t) => t.to_string(),
        Event::Html(h) if is_verdict(e) => {
            let inner = h.split_once('>').map_or("", |x| x.1);
            let inner = inner.strip_suffix("</strong>").unwrap_or(inner);
            inner
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        }
        _ => String::new(),
    }
}

/// A protocol name as code that may break after each `+`.
fn breakable_code(t: &str) -> Event<'static> {
    let parts: Vec<String> = t.split('+').map(esc).collect();
    Event::Html(CowStr::from(format!(
        "<code>{}</code>",
        parts.join("+<wbr>")
    )))
}

/// One cell of the matrix, compacted. The cell's inline events are cut into tokens — a
/// link (whole), a verdict word, a run of plain text (glue), anything else (a code span,
/// other emphasis) — and a token is *key* when it is a verdict or a link whose text does not
/// start with a code span (the number, not a place: `[300 per trial](…)` is key, ``first
/// [`leader-recovers` n = 3](…)`` is not). Key tokens show; glue shows when the next token
/// is key and it holds no parenthesis (`: `, `, `, `; gray sweep: `); everything else, and
/// everything inside parentheses, goes into `<span class="more">`. A cell with no key token
/// shows whole. The cell's full text becomes the `title` of a span around it.
fn compact_cell<'a>(cell: Vec<Event<'a>>) -> (Vec<Event<'a>>, Need) {
    // Tokens: (events, kind) with kind 0 glue, 1 key, 2 aside.
    let mut tokens: Vec<(Vec<Event<'a>>, u8)> = Vec::new();
    let mut i = 0;
    while i < cell.len() {
        match &cell[i] {
            Event::Start(tag) => {
                let mut depth = 0;
                let mut j = i;
                loop {
                    match &cell[j] {
                        Event::Start(_) => depth += 1,
                        Event::End(_) => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 || j + 1 == cell.len() {
                        break;
                    }
                    j += 1;
                }
                let key = matches!(tag, Tag::Link { .. })
                    && !matches!(cell.get(i + 1), Some(Event::Code(_)));
                tokens.push((cell[i..=j].to_vec(), if key { 1 } else { 2 }));
                i = j + 1;
            }
            e if is_verdict(e) => {
                tokens.push((vec![e.clone()], 1));
                i += 1;
            }
            e @ Event::Text(_) => {
                tokens.push((vec![e.clone()], 0));
                i += 1;
            }
            e => {
                tokens.push((vec![e.clone()], 2));
                i += 1;
            }
        }
    }
    if !tokens.iter().any(|t| t.1 == 1) {
        let need = Need::of(tokens.iter().map(|t| (t, true)));
        return (cell, need);
    }
    let mut depth = 0i32;
    let mut shown = Vec::with_capacity(tokens.len());
    for (k, (events, kind)) in tokens.iter().enumerate() {
        let text: String = events.iter().map(shown_text).collect();
        let inside = depth > 0;
        let has_paren = *kind == 0 && (text.contains('(') || text.contains(')'));
        if *kind == 0 {
            depth += text.matches('(').count() as i32 - text.matches(')').count() as i32;
        }
        let show = !inside
            && !has_paren
            && match kind {
                1 => true,
                0 => tokens.get(k + 1).is_some_and(|t| t.1 == 1),
                _ => false,
            };
        shown.push(show);
    }
    let need = Need::of(tokens.iter().zip(shown.iter().copied()));
    let hides = shown.iter().any(|s| !*s);
    let mut out = Vec::with_capacity(cell.len() + 8);
    if hides {
        let title: String = cell.iter().map(shown_text).collect();
        out.push(Event::Html(CowStr::from(format!(
            "<span class=\"cell\" title=\"{}\">",
            esc(title.trim())
        ))));
    }
    let mut open = false;
    for ((events, kind), show) in tokens.into_iter().zip(shown) {
        if !show && !open {
            out.push(Event::Html(CowStr::from("<span class=\"more\">")));
            open = true;
        } else if show && open {
            // What was hidden may have held the only space between two shown tokens.
            out.push(Event::Html(CowStr::from("</span> ")));
            open = false;
        }
        // A short number keeps to one line (`13 of 19600 trials`, `0.04 per trial`).
        let text: String = events.iter().map(shown_text).collect();
        let short = show
            && kind == 1
            && !events.iter().any(is_verdict)
            && text.chars().count() <= NOWRAP_CHARS;
        if short {
            out.push(Event::Html(CowStr::from("<span class=\"nw\">")));
        }
        out.extend(events);
        if short {
            out.push(Event::Html(CowStr::from("</span>")));
        }
    }
    if open {
        out.push(Event::Html(CowStr::from("</span>")));
    }
    if hides {
        out.push(Event::Html(CowStr::from("</span>")));
    }
    (out, need)
}

/// What a compacted cell needs of its column's width: the pieces it shows that do not break
/// (a short linked number, a verdict, else a word), in characters.
#[derive(Clone, Default)]
struct Need {
    pieces: Vec<usize>,
}

impl Need {
    /// The need of the shown tokens of a cell (`(token, shown)`).
    fn of<'t, 'a: 't>(tokens: impl Iterator<Item = (&'t (Vec<Event<'a>>, u8), bool)>) -> Need {
        let mut need = Need::default();
        for ((events, kind), show) in tokens {
            if !show {
                continue;
            }
            let text: String = events.iter().map(shown_text).collect();
            let n = text.chars().count();
            if events.iter().any(is_verdict) {
                // A verdict's padding is about two characters.
                need.pieces.push(n + 2);
            } else if *kind == 1 && n <= NOWRAP_CHARS {
                need.pieces.push(n);
            } else {
                need.pieces
                    .extend(text.split_whitespace().map(|w| w.chars().count()));
            }
        }
        need
    }

    /// The narrowest width, in characters, at which the pieces laid out greedily (a space
    /// between two) take at most [`CELL_LINES`] lines.
    fn width(&self) -> usize {
        let lines = |w: usize| {
            let (mut n, mut at) = (1, 0);
            for &p in &self.pieces {
                if at > 0 && at + 1 + p > w {
                    n += 1;
                    at = 0;
                }
                at += if at > 0 { 1 + p } else { p };
            }
            n
        };
        let mut w = self.pieces.iter().copied().max().unwrap_or(0);
        while lines(w) > CELL_LINES {
            w += 1;
        }
        w
    }
}

/// The lines a matrix cell should take at most, which the column widths aim at.
const CELL_LINES: usize = 3;

/// The `<colgroup>` of the matrix: each column's share of the width in proportion to what its
/// widest cell needs ([`Need::width`]), the protocol names' longest piece between `+`s and the
/// header's longest word or a quarter of it (the table is laid out with `table-layout: fixed`, so the widths are
/// the page's, not the browser's guess from the longest text).
fn colgroup(needs: &[usize]) -> String {
    let total: usize = needs.iter().sum::<usize>().max(1);
    let cols: String = needs
        .iter()
        .map(|n| {
            format!(
                "<col style=\"width: {:.1}%\">",
                *n as f64 * 100.0 / total as f64
            )
        })
        .collect();
    format!("<colgroup>{cols}</colgroup>")
}

/// The decision matrix made compact (see the module docs): the first table after the
/// heading [`MATRIX`] is wrapped in `<div class="matrix-wrap">` with the checkbox that shows
/// its cells in full, each body cell goes through [`compact_cell`], and the protocol column's
/// names may break after a `+`. Every other event passes unchanged.
fn compact_matrix(events: Vec<Event<'_>>) -> Vec<Event<'_>> {
    let mut out = Vec::with_capacity(events.len());
    let mut under_matrix = false;
    let mut in_table = false;
    let mut in_head = false;
    let mut col = 0;
    let mut cell: Option<Vec<Event>> = None;
    // Per column, the width its cells need, and where the `<colgroup>` goes.
    let mut needs: Vec<usize> = Vec::new();
    let mut colgroup_at = 0;
    for e in events {
        match &e {
            Event::Start(Tag::Heading { id, .. }) => {
                under_matrix = id.as_deref() == Some(MATRIX);
            }
            Event::Start(Tag::Table(_)) if under_matrix => {
                under_matrix = false;
                in_table = true;
                out.push(Event::Html(CowStr::from(
                    "<div class=\"matrix-wrap\">\n<label class=\"matrix-toggle\"><input type=\"checkbox\" class=\"matrix-full\"> show every cell in full (where each number was measured, the first failing seed)</label>\n",
                )));
            }
            Event::End(TagEnd::Table) if in_table => {
                in_table = false;
                out.insert(colgroup_at, Event::Html(CowStr::from(colgroup(&needs))));
                out.push(e);
                out.push(Event::Html(CowStr::from("</div>\n")));
                continue;
            }
            Event::Start(Tag::TableHead) if in_table => {
                in_head = true;
                col = 0;
                colgroup_at = out.len();
            }
            Event::End(TagEnd::TableHead) if in_table => in_head = false,
            Event::Start(Tag::TableRow) if in_table => col = 0,
            Event::Start(Tag::TableCell) if in_table => {
                out.push(e);
                cell = Some(Vec::new());
                continue;
            }
            Event::End(TagEnd::TableCell) if in_table => {
                let c = cell.take().unwrap_or_default();
                let text: String = c.iter().map(shown_text).collect();
                let need = if col == 0 && !in_head {
                    // A protocol name breaks after its `+`s; code is about a fifth wider.
                    let piece = text.split('+').map(|p| p.chars().count() + 1).max();
                    out.extend(c.into_iter().map(|x| match x {
                        Event::Code(t) => breakable_code(&t),
                        x => x,
                    }));
                    piece.unwrap_or(0) * 6 / 5
                } else if in_head {
                    // A header wraps, to about four lines; its longest word (bold, so
                    // wider) must fit.
                    out.extend(c);
                    let word = text.split_whitespace().map(|w| w.chars().count()).max();
                    (word.unwrap_or(0) * 13 / 10 + 1).max(text.chars().count().div_ceil(4))
                } else {
                    let (events, need) = compact_cell(c);
                    out.extend(events);
                    need.width()
                };
                if needs.len() <= col {
                    needs.resize(col + 1, 0);
                }
                needs[col] = needs[col].max(need);
                col += 1;
                out.push(e);
                continue;
            }
            _ => {}
        }
        match cell.as_mut() {
            Some(c) => c.push(e),
            None => out.push(e),
        }
    }
    out
}

/// The level-2 headings of a Markdown document: (anchor, text without its `1. ` or `A. `).
fn sections(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut text: Option<String> = None;
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Event::Start(Tag::Heading {
                level: pulldown_cmark::HeadingLevel::H2,
                ..
            }) => text = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(s) = text.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(t) = text.take() {
                    let short = match t.split_once(". ") {
                        Some((n, rest))
                            if n.len() <= 2 && n.chars().all(|c| c.is_ascii_alphanumeric()) =>
                        {
                            rest.to_string()
                        }
                        _ => t.clone(),
                    };
                    out.push((slug(&t), short));
                }
            }
            _ => {}
        }
    }
    out
}

/// The contents bar: the report's sections, then the appendix's.
fn contents_bar(report: &str, appendix: &str) -> String {
    let links = |md: &str| {
        sections(md)
            .iter()
            .map(|(a, t)| format!("<a href=\"#{}\">{}</a>", esc(a), esc(t)))
            .collect::<Vec<_>>()
            .join("")
    };
    format!(
        "<nav class=\"doc-nav\"><b><a href=\"#report\">Report</a></b>{}<span class=\"sep\">|</span><b><a href=\"#appendix\">Appendix</a></b>{}</nav>",
        links(report),
        links(appendix)
    )
}

/// The page: `report` then `appendix` (both Markdown), with charts and traces read from
/// `out_dir` and inlined.
pub(crate) fn write_page(
    title: &str,
    report: &str,
    appendix: &str,
    out_dir: &Path,
) -> Result<String, ReportError> {
    let body = render(report, out_dir)?;
    let app = render(appendix, out_dir)?;
    let nav = contents_bar(report, appendix);
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{nav}\n<main id=\"report\">\n{body}</main>\n<section id=\"appendix\" class=\"appendix\">\n{app}</section>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        esc(title)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_words_are_coloured_by_their_tone() {
        let h = render(
            "**pass** and **poor**, but **a finding**",
            &std::env::temp_dir(),
        )
        .unwrap();
        assert!(
            h.contains(r#"<strong class="verdict verdict-good">pass</strong>"#),
            "{h}"
        );
        assert!(
            h.contains(r#"<strong class="verdict verdict-bad">poor</strong>"#),
            "{h}"
        );
        assert!(h.contains("<strong>a finding</strong>"), "{h}");
    }

    #[test]
    fn the_matrix_shows_numbers_and_verdicts_and_keeps_the_rest_a_click_away() {
        let md = "## 1. Decision matrix\n\n| protocol | fenced | damage | liveness |\n|---|---|---|---|\n\
            | `raft+pre_vote` | **fails**: [0.04 per trial](APPENDIX.md#t) in `partition-leader-minority`, seed `1` \
            | [0.04 + 133 writes](APPENDIX.md#t) (`partition-leader-minority`) **damaging** \
            | [0 of 9 trials](APPENDIX.md#p) **pass**; gray sweep: **fails**: [3 of 9 trials](../gray/REPORT.md); first [`chained` n = 3](APPENDIX.md#c) seed `4` |\n\
            \n## 2. Guide\n\n| a | b |\n|---|---|\n| `x+y` | **fails**: [1](A.md) in `s` |\n";
        let h = render(md, &std::env::temp_dir()).unwrap();
        let (matrix, rest) = h.split_once("</div>").expect("the matrix is wrapped");
        assert!(matrix.contains("<div class=\"matrix-wrap\">"), "{h}");
        assert!(matrix.contains("class=\"matrix-full\""), "{h}");
        assert!(matrix.contains("<code>raft+<wbr>pre_vote</code>"), "{h}");
        // The number and the verdict show; where and the seed are kept, hidden.
        assert!(
            matrix.contains(r##"<strong class="verdict verdict-bad">fails</strong>: <span class="nw"><a href="#t">0.04 per trial</a></span><span class="more"> in <code>partition-leader-minority</code>, seed <code>1</code></span>"##),
            "{h}"
        );
        assert!(
            matrix.contains(r##"<span class="nw"><a href="#t">0.04 + 133 writes</a></span><span class="more"> (<code>partition-leader-minority</code>) </span> <strong class="verdict verdict-bad">damaging</strong>"##),
            "{h}"
        );
        // A label before a verdict shows; a link to a place (code first) is hidden.
        assert!(
            matrix.contains(r##"<strong class="verdict verdict-good">pass</strong>; gray sweep: <strong class="verdict verdict-bad">fails</strong>: <span class="nw"><a href="../gray/REPORT.md">3 of 9 trials</a></span><span class="more">; first <a href="#c"><code>chained</code> n = 3</a> seed <code>4</code></span>"##),
            "{h}"
        );
        // Columns share the width by what their cells need: liveness most, protocol least.
        let widths: Vec<f64> = matrix
            .split("<col style=\"width: ")
            .skip(1)
            .map(|w| w.split('%').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(widths.len(), 4, "{h}");
        assert!(
            (widths.iter().sum::<f64>() - 100.0).abs() < 0.5,
            "{widths:?}"
        );
        assert!(widths[3] > widths[1] && widths[1] > widths[0], "{widths:?}");
        // The full text is the cell's title.
        assert!(
            matrix.contains(
                r##"title="fails: 0.04 per trial in partition-leader-minority, seed 1""##
            ),
            "{h}"
        );
        // Another table is left whole.
        assert!(!rest.contains("class=\"more\""), "{rest}");
        assert!(rest.contains("<code>x+y</code>"), "{rest}");
    }

    #[test]
    fn a_cell_needs_the_narrowest_width_that_fits_three_lines() {
        let need = |pieces: &[usize]| {
            Need {
                pieces: pieces.to_vec(),
            }
            .width()
        };
        // Its longest piece, when that already fits.
        assert_eq!(need(&[12, 10, 4]), 12);
        // Six pieces of 5 in three lines: two a line, with a space between.
        assert_eq!(need(&[5; 6]), 11);
        assert_eq!(need(&[]), 0);
    }

    #[test]
    fn the_contents_bar_lists_both_documents_sections() {
        let nav = contents_bar(
            "# R\n\n## 1. Decision matrix\n\n### 1.1 no\n\n## 2. Protocol-choice guide\n",
            "# A\n\n## A. Configuration\n\n## E. Summary tables\n",
        );
        assert_eq!(
            nav,
            "<nav class=\"doc-nav\"><b><a href=\"#report\">Report</a></b>\
             <a href=\"#1-decision-matrix\">Decision matrix</a>\
             <a href=\"#2-protocol-choice-guide\">Protocol-choice guide</a>\
             <span class=\"sep\">|</span><b><a href=\"#appendix\">Appendix</a></b>\
             <a href=\"#a-configuration\">Configuration</a>\
             <a href=\"#e-summary-tables\">Summary tables</a></nav>"
        );
        assert!(STYLE.contains(".doc-nav { position: sticky; top: 0;"));
    }

    #[test]
    fn links_between_documents_become_page_anchors() {
        assert_eq!(
            page_link("APPENDIX.md#table-leader-crash"),
            "#table-leader-crash"
        );
        assert_eq!(page_link("REPORT.md#chart-1-x"), "#chart-1-x");
        assert_eq!(page_link("APPENDIX.md"), "#appendix");
        assert_eq!(page_link("traces/a-b.svg"), "#trace-a-b-svg");
        assert_eq!(page_link("https://example.org/x"), "https://example.org/x");
    }

    #[test]
    fn headings_get_github_anchors_and_images_are_inlined() {
        let dir = std::env::temp_dir().join(format!("eb-html-{}", std::process::id()));
        fs::create_dir_all(dir.join("traces")).unwrap();
        fs::write(
            dir.join("traces/t.svg"),
            "<svg xmlns='http://www.w3.org/2000/svg'/>",
        )
        .unwrap();
        let md = "## 1. Decision matrix\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nsee [t](traces/t.svg)\n\n![Trace `x`](traces/t.svg)\n";
        let html = render(md, &dir).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert!(html.contains("<h2 id=\"1-decision-matrix\">"), "{html}");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("href=\"#trace-t-svg\""), "{html}");
        assert!(
            html.contains("<img id=\"trace-t-svg\" src=\"data:image/svg+xml;base64,"),
            "{html}"
        );
        assert!(html.contains("alt=\"Trace x\""), "{html}");
    }
}
