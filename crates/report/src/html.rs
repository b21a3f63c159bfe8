//! `index.html`: the report and its appendix as one self-contained page that works offline.
//!
//! The page is a *rendering* of the two Markdown documents, not a third writer: the Markdown is
//! parsed with `pulldown-cmark` and turned into HTML with five changes, so the page can never
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
//!   test reads.
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
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 1.5em 4em; color: #1b1f24; }
h1, h2, h3, h4 { line-height: 1.2; } h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
.verdict { padding: 0 .3em; border-radius: 3px; white-space: nowrap; } .verdict-good { background: #dafbe1; color: #116329; } .verdict-fair { background: #fff8c5; color: #7d4e00; } .verdict-bad { background: #ffebe9; color: #a40e26; }
code { background: #f2f4f6; padding: 0 .25em; border-radius: 3px; font-size: 90%; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; }
table { border-collapse: collapse; margin: .4em 0 1.2em; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: .25em .5em; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; position: sticky; top: 0; }
th.sorted-asc::after { content: " ▲"; } th.sorted-desc::after { content: " ▼"; }
tr:nth-child(even) td { background: #fafbfc; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
input.filter { margin: .3em 0; padding: .2em .4em; width: 22em; font: inherit; }
.doc-nav { position: sticky; top: 0; background: #fff; padding: .4em 0; border-bottom: 1px solid #d0d7de; z-index: 2; }
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
    html::push_html(&mut s, out.into_iter());
    Ok(s)
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
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav class=\"doc-nav\"><a href=\"#report\">Report</a> · <a href=\"#1-decision-matrix\">Decision matrix</a> · <a href=\"#appendix\">Appendix</a> · <a href=\"#e-summary-tables\">Summary tables</a></nav>\n<main id=\"report\">\n{body}</main>\n<section id=\"appendix\" class=\"appendix\">\n{app}</section>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
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
