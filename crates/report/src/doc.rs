//! The report's document model: a page is data first — headings, paragraphs of inline spans,
//! typed tables, figures, lists, findings and notes — and two small renderers turn one
//! [`Document`] into Markdown ([`Document::to_markdown`]) and into HTML ([`Document::to_html`]).
//! A page writer decides *what* to say by building the document; neither renderer computes
//! anything, so the two formats cannot say different things. This is the shape of
//! [`crate::trace`] (one model, several renderers) applied to the pages.
//!
//! Built on it so far: the calibration page ([`crate::calibration`]), `COMPARE.md`
//! ([`crate::compare`]), `ADVICE.md` (`tune`) and the sweep's `REPORT.md` and `APPENDIX.md`
//! ([`crate::markdown`]). Still outside it: `index.html`, which renders those two pages'
//! Markdown (pulldown-cmark) rather than their documents, the explore report, and the sweep's
//! findings, which [`crate::findings`] still writes as Markdown sentences (ranked by
//! [`Severity`]) that the page reads into spans with [`spans`].

//! Escaping lives here and only here: text spans from the results or the configuration (a
//! scenario's `about`, a protocol spec) are [`Inline::Text`], which the Markdown renderer
//! backslash-escapes where they would be read as markup (`<`, `>`, `&`, and `|` inside a
//! table cell) and the HTML renderer entity-escapes. Code spans pick a backtick fence longer
//! than any run inside them.
//!
//! Markdown layout, kept byte-stable because committed pages are compared byte for byte: the
//! title is a level-1 heading; every block ends with a newline and blocks are separated by one
//! blank line; tables are GitHub pipe tables with a `|---|` separator row (`|---:|` for a
//! right-aligned column) and an empty cell as `| |` (an empty heading as `|  |`, a table without headings as `| | |`); a code block is a
//! backtick fence with its language; list items and findings are `- ` bullets,
//! nested items indented by two spaces.

use std::fmt::Write as _;

/// How severe a finding is; findings are listed most severe first (the order of the variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A safety violation: two leaders claimed the same epoch or term.
    Safety,
    /// Lost liveness: no quorum leader, or one still changing, at the end.
    Liveness,
    /// Damage: split brain, writes taken from deposed leaders.
    Damage,
    /// Failover time.
    Failover,
    /// Message cost and churn.
    Cost,
    /// A clean bill: what never happened.
    Clean,
}

impl Severity {
    /// The word a reader sees (and the HTML's `data-severity`).
    pub fn label(self) -> &'static str {
        match self {
            Severity::Safety => "safety",
            Severity::Liveness => "liveness",
            Severity::Damage => "damage",
            Severity::Failover => "failover",
            Severity::Cost => "cost",
            Severity::Clean => "clean",
        }
    }
}

/// A span of text within a paragraph, a cell, a list item or a finding.
#[derive(Clone, Debug, PartialEq)]
pub enum Inline {
    /// Plain text, escaped by the renderers.
    Text(String),
    /// A code span (a column name, a command, a value).
    Code(String),
    /// Emphasis (`*x*`, `<em>`).
    Emph(Vec<Inline>),
    /// Strong emphasis (`**x**`, `<strong>`).
    Strong(Vec<Inline>),
    /// A verdict word (`pass`, `good`, `fails`): strong in Markdown, so the plain text still
    /// reads, and coloured by its [`Tone`] in HTML.
    Verdict(Tone, String),
    /// A link: its text and target (a relative path, `#anchor` or URL).
    Link {
        /// What the reader sees.
        text: Vec<Inline>,
        /// Where it goes.
        href: String,
    },
}

/// How a verdict reads: its colour on the HTML page (class `verdict-<tone>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Passes, best, good, none.
    Good,
    /// Fair, rare, brief: worth a look.
    Fair,
    /// Fails, poor, damaging, lasting.
    Bad,
}

impl Tone {
    /// The CSS class suffix.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Good => "good",
            Tone::Fair => "fair",
            Tone::Bad => "bad",
        }
    }
}

/// Every verdict word the report uses and its tone: the one list the matrix takes its words
/// from ([`verdict`]) and the HTML page colours them by ([`tone_of`]).
pub const VERDICTS: [(&str, Tone); 26] = [
    ("pass", Tone::Good),
    ("fails", Tone::Bad),
    ("best", Tone::Good),
    ("good", Tone::Good),
    ("fair", Tone::Fair),
    ("poor", Tone::Bad),
    ("none", Tone::Good),
    ("rare", Tone::Fair),
    ("few", Tone::Fair),
    ("damaging", Tone::Bad),
    ("brief", Tone::Fair),
    ("short", Tone::Fair),
    ("lasting", Tone::Bad),
    ("≤ 1 window", Tone::Good),
    ("≤ 2 windows", Tone::Fair),
    ("> 2 windows", Tone::Bad),
    ("unrecovered", Tone::Bad),
    ("O(1)", Tone::Good),
    ("O(n)", Tone::Good),
    ("O(n log n)", Tone::Fair),
    ("O(n²)", Tone::Bad),
    ("members only", Tone::Good),
    ("single point of failure", Tone::Bad),
    ("a quorum of its own", Tone::Fair),
    ("improved", Tone::Good),
    ("regressed", Tone::Bad),
];

/// The tone of a verdict word of [`VERDICTS`].
pub fn tone_of(word: &str) -> Option<Tone> {
    VERDICTS.iter().find(|v| v.0 == word).map(|v| v.1)
}

/// A verdict word of [`VERDICTS`], with its tone (a word not in the list is a bug: it reads
/// as fair).
pub fn verdict(word: &str) -> Inline {
    debug_assert!(tone_of(word).is_some(), "{word} is not in VERDICTS");
    Inline::Verdict(tone_of(word).unwrap_or(Tone::Fair), word.to_string())
}

/// Plain text.
pub fn text(s: impl Into<String>) -> Inline {
    Inline::Text(s.into())
}

/// A code span.
pub fn code(s: impl Into<String>) -> Inline {
    Inline::Code(s.into())
}

/// Strong emphasis around plain text.
pub fn strong(s: impl Into<String>) -> Inline {
    Inline::Strong(vec![text(s)])
}

/// Emphasis around plain text.
pub fn emph(s: impl Into<String>) -> Inline {
    Inline::Emph(vec![text(s)])
}

/// A link with plain text.
pub fn link(s: impl Into<String>, href: impl Into<String>) -> Inline {
    Inline::Link {
        text: vec![text(s)],
        href: href.into(),
    }
}

/// Prose written with the inline marks a page's sentences use — `` `code` ``, `**strong**`,
/// `*emphasis*` and `[links](target)` (a target without spaces or parentheses) — as typed
/// spans; anything else (other brackets, underscores, an unmatched mark) stays text. For sentences a page (or the runner, in its warnings and
/// mapping notes) writes with code spans in them; [`Document::to_markdown`] renders the spans
/// back to the same characters.
pub fn spans(s: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut plain_text = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let span = match c {
            '`' => {
                let run = rest.len() - rest.trim_start_matches('`').len();
                let fence = &rest[..run];
                rest[run..].find(fence).and_then(|end| {
                    let after = &rest[run + end + run..];
                    // A longer backtick run does not close a shorter fence.
                    (!after.starts_with('`')).then(|| {
                        let inner = &rest[run..run + end];
                        let inner = match inner.strip_prefix(' ').and_then(|x| x.strip_suffix(' '))
                        {
                            Some(x) if x.starts_with('`') || x.ends_with('`') => x,
                            _ => inner,
                        };
                        (code(inner), run + end + run)
                    })
                })
            }
            '*' if rest.starts_with("**") => rest[2..]
                .find("**")
                .filter(|&end| end > 0)
                .map(|end| (Inline::Strong(spans(&rest[2..2 + end])), 2 + end + 2)),
            '*' => rest[1..]
                .find('*')
                .filter(|&end| end > 0 && !rest[1..].starts_with(' '))
                .map(|end| (Inline::Emph(spans(&rest[1..1 + end])), 1 + end + 1)),
            '[' => rest.find(']').and_then(|close| {
                let target = rest[close + 1..].strip_prefix('(')?;
                let end = target.find(')')?;
                let href = &target[..end];
                (close > 1 && !href.is_empty() && !href.contains([' ', '(', '['])).then(|| {
                    (
                        Inline::Link {
                            text: spans(&rest[1..close]),
                            href: href.to_string(),
                        },
                        close + 2 + end + 1,
                    )
                })
            }),
            _ => None,
        };
        match span {
            Some((inline, len)) => {
                if !plain_text.is_empty() {
                    out.push(Inline::Text(std::mem::take(&mut plain_text)));
                }
                out.push(inline);
                rest = &rest[len..];
            }
            None => {
                plain_text.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !plain_text.is_empty() {
        out.push(Inline::Text(plain_text));
    }
    out
}

/// One table cell: its content, an optional numeric sort key (for the HTML page's sortable
/// tables; the Markdown has none) and an optional link around the whole content.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Cell {
    /// What the cell shows; empty renders as `–`.
    pub content: Vec<Inline>,
    /// The value the cell sorts by, when it is not its text.
    pub sort: Option<f64>,
    /// Where the cell links to (its evidence).
    pub link: Option<String>,
}

impl Cell {
    /// A cell of spans.
    pub fn new(content: Vec<Inline>) -> Cell {
        Cell {
            content,
            ..Cell::default()
        }
    }
    /// A cell of plain text.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::new(vec![text(s)])
    }
    /// This cell, sorting by `key`.
    pub fn sorted_by(mut self, key: f64) -> Cell {
        self.sort = Some(key);
        self
    }
    /// This cell, linking to `href`.
    pub fn linked(mut self, href: impl Into<String>) -> Cell {
        self.link = Some(href.into());
        self
    }
}

/// How a column's cells are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Align {
    /// Text.
    #[default]
    Left,
    /// Numbers.
    Right,
}

/// A table: a header and rows of cells.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    /// Column headings.
    pub header: Vec<Vec<Inline>>,
    /// Per column; missing columns are [`Align::Left`].
    pub align: Vec<Align>,
    /// Rows, each as long as the header.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with plain-text column headings and no rows yet.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(|h| vec![text(h)]).collect(),
            align: Vec::new(),
            rows: Vec::new(),
        }
    }
    /// This table with its columns aligned so.
    pub fn aligned(mut self, align: impl IntoIterator<Item = Align>) -> Table {
        self.align = align.into_iter().collect();
        self
    }
    fn align(&self, col: usize) -> Align {
        self.align.get(col).copied().unwrap_or_default()
    }
}

/// An image with its alternative text and an optional caption.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The image, relative to the page.
    pub path: String,
    /// Alternative text.
    pub alt: String,
    /// Shown under the image.
    pub caption: Option<Vec<Inline>>,
}

/// A list item and the items nested under it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Item {
    /// The item.
    pub text: Vec<Inline>,
    /// Nested items, one level.
    pub items: Vec<Vec<Inline>>,
}

impl From<Vec<Inline>> for Item {
    fn from(text: Vec<Inline>) -> Item {
        Item {
            text,
            items: Vec::new(),
        }
    }
}

impl Block {
    /// A list of items without nested ones.
    pub fn list(items: Vec<Vec<Inline>>) -> Block {
        Block::List(items.into_iter().map(Item::from).collect())
    }
}

/// A finding: a severity, what was found, and links to the evidence it rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// How severe.
    pub severity: Severity,
    /// The statement.
    pub text: Vec<Inline>,
    /// Links to the tables, charts or traces it rests on, appended in parentheses.
    pub evidence: Vec<Inline>,
}

/// One block of a page.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A section heading (level 2 to 6; the title is the page's level 1). `anchor` is its
    /// GitHub anchor, which links to it use.
    Heading {
        /// 2 to 6.
        level: u8,
        /// The heading's spans.
        text: Vec<Inline>,
        /// Its anchor.
        anchor: String,
    },
    /// A paragraph.
    Paragraph(Vec<Inline>),
    /// A table.
    Table(Table),
    /// A figure.
    Figure(Figure),
    /// A bulleted list.
    List(Vec<Item>),
    /// Findings, in the order given (the page sorts them by severity).
    Findings(Vec<Finding>),
    /// An aside (a caveat, a pointer): a block quote.
    Note(Vec<Inline>),
    /// Lines to copy as they are (commands to reproduce a run), in a language (`sh`).
    Code {
        /// The fence's language tag.
        lang: String,
        /// The lines, without a final newline.
        text: String,
    },
}

/// A page: its title and blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The page's title (the level-1 heading).
    pub title: Vec<Inline>,
    /// Its content, in order.
    pub blocks: Vec<Block>,
}

/// GitHub's heading anchor: lowercase, spaces to hyphens, punctuation other than `-` and `_`
/// dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .chars()
        .flat_map(|c| c.to_lowercase())
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c)
            } else if c == ' ' {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The text a reader sees, without markup (for anchors and alt text).
pub fn plain(spans: &[Inline]) -> String {
    let mut s = String::new();
    for i in spans {
        match i {
            Inline::Text(t) | Inline::Code(t) | Inline::Verdict(_, t) => s.push_str(t),
            Inline::Emph(v) | Inline::Strong(v) | Inline::Link { text: v, .. } => {
                s.push_str(&plain(v))
            }
        }
    }
    s
}

impl Document {
    /// An empty page titled with plain text.
    pub fn new(title: impl Into<String>) -> Document {
        Document::titled(vec![text(title)])
    }
    /// An empty page with a title of spans.
    pub fn titled(title: Vec<Inline>) -> Document {
        Document {
            title,
            blocks: Vec::new(),
        }
    }
    /// Adds a heading at `level`, its anchor derived from its text.
    pub fn heading(&mut self, level: u8, spans: Vec<Inline>) {
        let anchor = anchor(&plain(&spans));
        self.blocks.push(Block::Heading {
            level,
            text: spans,
            anchor,
        });
    }
    /// Adds a paragraph.
    pub fn paragraph(&mut self, spans: Vec<Inline>) {
        self.blocks.push(Block::Paragraph(spans));
    }
    /// Adds any block.
    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }

    /// The page as Markdown (GitHub-flavoured: pipe tables).
    pub fn to_markdown(&self) -> String {
        let mut out = format!("# {}\n", markdown_spans(&self.title));
        for b in &self.blocks {
            out.push('\n');
            md_block(&mut out, b);
        }
        out
    }

    /// The page as one HTML document: the title, the blocks, and `style` as its stylesheet.
    pub fn to_html(&self, style: &str) -> String {
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>{style}</style>\n</head>\n<body>\n<h1 id=\"{a}\">{h}</h1>\n",
            t = html_esc(&plain(&self.title)),
            h = html_spans(&self.title),
            a = html_esc(&anchor(&plain(&self.title))),
        );
        for b in &self.blocks {
            html_block(&mut out, b);
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// Where Markdown text is written: table cells also escape `|`.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Flow,
    Cell,
}

/// Plain text as Markdown: `<` (unless a space or the end follows it), `>` and `&` (and `|`
/// in a table cell) backslash-escaped, so text from the data is never read as HTML, an entity
/// or a cell boundary (CommonMark
/// renders `\<` as `<`).
fn md_text(s: &str, ctx: Ctx) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // `<` before a space or at the end can open no tag or autolink (`rare: < 1`).
        let open = c == '<' && chars.peek().is_some_and(|n| !n.is_whitespace());
        if open || matches!(c, '>' | '&') || (c == '|' && ctx == Ctx::Cell) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span's fence: one backtick more than the longest run inside, padded with a space
/// when the content starts or ends with a backtick.
fn md_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Spans as Markdown outside a table (a title line that must match a file's first line).
pub fn markdown_spans(spans: &[Inline]) -> String {
    md_spans(spans, Ctx::Flow)
}

fn md_spans(spans: &[Inline], ctx: Ctx) -> String {
    let mut s = String::new();
    for i in spans {
        match i {
            Inline::Text(t) => s.push_str(&md_text(t, ctx)),
            Inline::Code(t) => {
                let c = md_code(t);
                s.push_str(&if ctx == Ctx::Cell {
                    c.replace('|', "\\|")
                } else {
                    c
                })
            }
            Inline::Emph(v) => {
                let _ = write!(s, "*{}*", md_spans(v, ctx));
            }
            Inline::Strong(v) => {
                let _ = write!(s, "**{}**", md_spans(v, ctx));
            }
            Inline::Verdict(_, t) => {
                let _ = write!(s, "**{}**", md_spans(&[text(t.as_str())], ctx));
            }
            Inline::Link { text, href } => {
                let _ = write!(s, "[{}]({})", md_spans(text, ctx), md_href(href));
            }
        }
    }
    s
}

/// A link target as Markdown: spaces and parentheses would end it, so they are
/// percent-encoded.
fn md_href(href: &str) -> String {
    href.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

fn md_cell(c: &Cell) -> String {
    let inner = md_spans(&c.content, Ctx::Cell);
    match &c.link {
        Some(h) => format!("[{inner}]({})", md_href(h)),
        None => inner,
    }
}

fn md_finding(f: &Finding) -> String {
    let mut s = md_spans(&f.text, Ctx::Flow);
    if !f.evidence.is_empty() {
        let ev: Vec<String> = f
            .evidence
            .iter()
            .map(|e| md_spans(std::slice::from_ref(e), Ctx::Flow))
            .collect();
        let _ = write!(s, " ({})", ev.join("; "));
    }
    s
}

fn md_block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, text, .. } => {
            let _ = writeln!(
                out,
                "{} {}",
                "#".repeat((*level).clamp(1, 6) as usize),
                md_spans(text, Ctx::Flow)
            );
        }
        Block::Paragraph(spans) => {
            let _ = writeln!(out, "{}", md_spans(spans, Ctx::Flow));
        }
        Block::Table(t) => {
            let head: Vec<String> = t.header.iter().map(|h| md_spans(h, Ctx::Cell)).collect();
            if head.iter().all(String::is_empty) {
                // A table without headings (a key-value list): Markdown still needs the line.
                let _ = writeln!(out, "|{}", " |".repeat(head.len()));
            } else {
                let _ = writeln!(out, "| {} |", head.join(" | "));
            }
            out.push('|');
            for i in 0..t.header.len() {
                out.push_str(match t.align(i) {
                    Align::Left => "---|",
                    Align::Right => "---:|",
                });
            }
            out.push('\n');
            for r in &t.rows {
                out.push('|');
                for c in r {
                    match md_cell(c) {
                        e if e.is_empty() => out.push_str(" |"),
                        c => {
                            let _ = write!(out, " {c} |");
                        }
                    }
                }
                out.push('\n');
            }
        }
        Block::Figure(f) => {
            let _ = writeln!(
                out,
                "![{}]({})",
                md_text(&f.alt, Ctx::Flow),
                md_href(&f.path)
            );
            if let Some(c) = &f.caption {
                let _ = writeln!(out, "\n{}", md_spans(c, Ctx::Flow));
            }
        }
        Block::List(items) => {
            for i in items {
                let _ = writeln!(out, "- {}", md_spans(&i.text, Ctx::Flow));
                for sub in &i.items {
                    let _ = writeln!(out, "  - {}", md_spans(sub, Ctx::Flow));
                }
            }
        }
        Block::Findings(fs) => {
            for f in fs {
                let _ = writeln!(out, "- {}", md_finding(f));
            }
        }
        Block::Note(spans) => {
            let _ = writeln!(out, "> {}", md_spans(spans, Ctx::Flow));
        }
        Block::Code { lang, text } => {
            // A fence longer than any backtick run at a line start inside.
            let longest = text
                .lines()
                .map(|l| l.len() - l.trim_start_matches('`').len())
                .max()
                .unwrap_or(0);
            let fence = "`".repeat(longest.max(2) + 1);
            let _ = writeln!(out, "{fence}{lang}\n{text}\n{fence}");
        }
    }
}

/// Text as HTML: the four characters that could open markup or end an attribute.
pub(crate) fn html_esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_spans(spans: &[Inline]) -> String {
    let mut s = String::new();
    for i in spans {
        match i {
            Inline::Text(t) => s.push_str(&html_esc(t)),
            Inline::Code(t) => {
                let _ = write!(s, "<code>{}</code>", html_esc(t));
            }
            Inline::Emph(v) => {
                let _ = write!(s, "<em>{}</em>", html_spans(v));
            }
            Inline::Strong(v) => {
                let _ = write!(s, "<strong>{}</strong>", html_spans(v));
            }
            Inline::Verdict(tone, t) => {
                let _ = write!(
                    s,
                    "<strong class=\"verdict verdict-{}\">{}</strong>",
                    tone.class(),
                    html_esc(t)
                );
            }
            Inline::Link { text, href } => {
                let _ = write!(s, "<a href=\"{}\">{}</a>", html_esc(href), html_spans(text));
            }
        }
    }
    s
}

fn html_align(a: Align) -> &'static str {
    match a {
        Align::Left => "",
        Align::Right => " style=\"text-align: right\"",
    }
}

fn html_cell(c: &Cell, align: Align) -> String {
    let inner = html_spans(&c.content);
    let inner = match &c.link {
        Some(h) => format!("<a href=\"{}\">{inner}</a>", html_esc(h)),
        None => inner,
    };
    let a = html_align(align);
    match c.sort {
        Some(k) => format!("<td{a} data-sort=\"{k}\">{inner}</td>"),
        None => format!("<td{a}>{inner}</td>"),
    }
}

fn html_block(out: &mut String, b: &Block) {
    match b {
        Block::Heading {
            level,
            text,
            anchor,
        } => {
            let l = (*level).clamp(1, 6);
            let _ = writeln!(
                out,
                "<h{l} id=\"{}\">{}</h{l}>",
                html_esc(anchor),
                html_spans(text)
            );
        }
        Block::Paragraph(spans) => {
            let _ = writeln!(out, "<p>{}</p>", html_spans(spans));
        }
        Block::Table(t) => {
            out.push_str("<table>\n<thead>\n<tr>");
            for (i, h) in t.header.iter().enumerate() {
                let _ = write!(out, "<th{}>{}</th>", html_align(t.align(i)), html_spans(h));
            }
            out.push_str("</tr>\n</thead>\n<tbody>\n");
            for r in &t.rows {
                out.push_str("<tr>");
                for (i, c) in r.iter().enumerate() {
                    out.push_str(&html_cell(c, t.align(i)));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n");
        }
        Block::Figure(f) => {
            let _ = write!(
                out,
                "<figure><img src=\"{}\" alt=\"{}\">",
                html_esc(&f.path),
                html_esc(&f.alt)
            );
            if let Some(c) = &f.caption {
                let _ = write!(out, "<figcaption>{}</figcaption>", html_spans(c));
            }
            out.push_str("</figure>\n");
        }
        Block::List(items) => {
            out.push_str("<ul>\n");
            for i in items {
                out.push_str("<li>");
                out.push_str(&html_spans(&i.text));
                if !i.items.is_empty() {
                    out.push_str("<ul>");
                    for sub in &i.items {
                        let _ = write!(out, "<li>{}</li>", html_spans(sub));
                    }
                    out.push_str("</ul>");
                }
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        Block::Findings(fs) => {
            out.push_str("<ul class=\"findings\">\n");
            for f in fs {
                let mut body = html_spans(&f.text);
                if !f.evidence.is_empty() {
                    let ev: Vec<String> = f
                        .evidence
                        .iter()
                        .map(|e| html_spans(std::slice::from_ref(e)))
                        .collect();
                    let _ = write!(body, " ({})", ev.join("; "));
                }
                let _ = writeln!(
                    out,
                    "<li class=\"finding\" data-severity=\"{}\">{body}</li>",
                    f.severity.label()
                );
            }
            out.push_str("</ul>\n");
        }
        Block::Note(spans) => {
            let _ = writeln!(out, "<blockquote><p>{}</p></blockquote>", html_spans(spans));
        }
        Block::Code { lang, text } => {
            let _ = writeln!(
                out,
                "<pre><code class=\"language-{}\">{}</code></pre>",
                html_esc(lang),
                html_esc(text)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(blocks: Vec<Block>) -> Document {
        Document {
            title: vec![text("T")],
            blocks,
        }
    }

    #[test]
    fn markdown_blocks_are_separated_by_one_blank_line() {
        let mut d = Document::new("A & B");
        d.heading(2, vec![text("Loopback latency")]);
        d.paragraph(vec![text("one "), code("two"), text(" "), strong("three")]);
        assert_eq!(
            d.to_markdown(),
            "# A \\& B\n\n## Loopback latency\n\none `two` **three**\n"
        );
        assert_eq!(
            d.blocks[0],
            Block::Heading {
                level: 2,
                text: vec![text("Loopback latency")],
                anchor: "loopback-latency".into()
            }
        );
    }

    #[test]
    fn text_from_the_data_is_escaped_once_per_format() {
        let spans = vec![text("a <b> & c | d")];
        let d = doc(vec![Block::Paragraph(spans.clone())]);
        assert!(d.to_markdown().ends_with("\na \\<b\\> \\& c | d\n"));
        assert!(d.to_html("").contains("<p>a &lt;b&gt; &amp; c | d</p>"));
        // In a table cell the pipe would end the cell.
        let mut t = Table::new(["h|h", "e"]);
        t.rows.push(vec![Cell::new(spans), Cell::default()]);
        let md = doc(vec![Block::Table(t.clone())]).to_markdown();
        assert!(
            md.contains("| h\\|h | e |\n|---|---|\n| a \\<b\\> \\& c \\| d | |\n"),
            "{md}"
        );
        let html = doc(vec![Block::Table(t)]).to_html("");
        assert!(html.contains("<th>h|h</th>"), "{html}");
        assert!(
            html.contains("<td>a &lt;b&gt; &amp; c | d</td><td></td>"),
            "{html}"
        );
    }

    #[test]
    fn code_spans_fence_past_their_backticks() {
        let d = doc(vec![Block::Paragraph(vec![
            code("a`b"),
            text(" "),
            code("`x"),
        ])]);
        assert!(
            d.to_markdown().ends_with("\n``a`b`` `` `x ``\n"),
            "{}",
            d.to_markdown()
        );
        assert!(d.to_html("").contains("<code>a`b</code> <code>`x</code>"));
        let d = doc(vec![Block::Paragraph(vec![code("<t>")])]);
        assert!(d.to_markdown().ends_with("\n`<t>`\n"));
        assert!(d.to_html("").contains("<code>&lt;t&gt;</code>"));
    }

    #[test]
    fn links_in_text_and_cells_render_in_both_formats() {
        let mut t = Table::new(["protocol", "p50"]);
        t.rows.push(vec![
            Cell::new(vec![code("raft")]),
            Cell::text("12.5 ms")
                .sorted_by(12.5)
                .linked("APPENDIX.md#table-leader-crash"),
        ]);
        let d = doc(vec![
            Block::Paragraph(vec![
                text("see "),
                link("the chart", "charts/a b.svg"),
                text(" and "),
                Inline::Link {
                    text: vec![code("x\"y")],
                    href: "#q\"".into(),
                },
            ]),
            Block::Table(t),
        ]);
        let md = d.to_markdown();
        assert!(
            md.contains("see [the chart](charts/a%20b.svg) and [`x\"y`](#q\")"),
            "{md}"
        );
        assert!(
            md.contains("| `raft` | [12.5 ms](APPENDIX.md#table-leader-crash) |"),
            "{md}"
        );
        let html = d.to_html("");
        assert!(
            html.contains("<a href=\"charts/a b.svg\">the chart</a>"),
            "{html}"
        );
        assert!(html.contains("<a href=\"#q&quot;\"><code>x&quot;y</code></a>"));
        assert!(html.contains(
            "<td data-sort=\"12.5\"><a href=\"APPENDIX.md#table-leader-crash\">12.5 ms</a></td>"
        ));
    }

    #[test]
    fn tables_have_one_row_per_data_row_in_both_formats() {
        let mut t = Table::new(["a", "b", "c"]);
        for i in 0..4 {
            t.rows
                .push((0..3).map(|j| Cell::text(format!("{i}{j}"))).collect());
        }
        let d = doc(vec![Block::Table(t)]);
        let md = d.to_markdown();
        let lines: Vec<&str> = md.lines().skip(2).collect();
        assert_eq!(lines.len(), 6, "{md}");
        assert_eq!(lines[0], "| a | b | c |");
        assert_eq!(lines[1], "|---|---|---|");
        assert_eq!(lines[5], "| 30 | 31 | 32 |");
        let html = d.to_html("");
        assert_eq!(html.matches("<tr>").count(), 5);
        assert_eq!(html.matches("<td>").count(), 12);
        assert!(html.contains("<tr><td>20</td><td>21</td><td>22</td></tr>"));
    }

    #[test]
    fn right_aligned_columns_in_both_formats() {
        let mut t = Table::new(["cell", "A"]).aligned([Align::Left, Align::Right]);
        t.rows.push(vec![Cell::text("x"), Cell::text("1.5")]);
        let d = doc(vec![Block::Table(t)]);
        assert!(d
            .to_markdown()
            .contains("| cell | A |\n|---|---:|\n| x | 1.5 |\n"));
        let html = d.to_html("");
        assert!(html.contains("<th>cell</th><th style=\"text-align: right\">A</th>"));
        assert!(html.contains("<td>x</td><td style=\"text-align: right\">1.5</td>"));
    }

    #[test]
    fn prose_marks_become_spans_and_render_back() {
        assert_eq!(
            spans("a `b` **c `d`** *e* [f] x_y 2 * 3"),
            vec![
                text("a "),
                code("b"),
                text(" "),
                Inline::Strong(vec![text("c "), code("d")]),
                text(" "),
                emph("e"),
                text(" [f] x_y 2 * 3"),
            ]
        );
        for s in [
            "the `busy` profile: set `noise.*` from **your** measurements",
            "an unmatched ` stays, and so does **this",
            "``a`b`` and `` `x ``",
            "`lognormal:M:S` is a median of M ms (*heavy* tail)",
        ] {
            let d = doc(vec![Block::Paragraph(spans(s))]);
            assert_eq!(d.to_markdown(), format!("# T\n\n{s}\n"));
        }
    }

    #[test]
    fn code_blocks_headerless_tables_and_a_lone_less_than() {
        let mut t = Table::new(["", ""]);
        t.rows.push(vec![Cell::text("trials"), Cell::text("3")]);
        let d = doc(vec![
            Block::Paragraph(vec![text("rare: < 1, but <b> and a<")]),
            Block::Table(t),
            Block::Code {
                lang: "sh".into(),
                text: "a 'b' <c>\n```".into(),
            },
        ]);
        assert_eq!(
            d.to_markdown(),
            "# T\n\nrare: < 1, but \\<b\\> and a<\n\n| | |\n|---|---|\n| trials | 3 |\n\n````sh\na 'b' <c>\n```\n````\n"
        );
        let html = d.to_html("");
        assert!(html.contains("<pre><code class=\"language-sh\">a 'b' &lt;c&gt;\n```</code></pre>"));
    }

    #[test]
    fn links_become_spans_and_render_back() {
        assert_eq!(
            spans("see [the `x` table](APPENDIX.md#table-x) and U[0, j] (ms)"),
            vec![
                text("see "),
                Inline::Link {
                    text: vec![text("the "), code("x"), text(" table")],
                    href: "APPENDIX.md#table-x".into(),
                },
                text(" and U[0, j] (ms)"),
            ]
        );
        for s in [
            "a finding ([table](APPENDIX.md#table-leader-crash); [chart 4](REPORT.md#chart-4))",
            "`[w, w + interval)` stays code, [] and [a](b c) stay text",
        ] {
            let d = doc(vec![Block::Paragraph(spans(s))]);
            assert_eq!(d.to_markdown(), format!("# T\n\n{s}\n"));
        }
    }

    #[test]
    fn a_title_of_spans() {
        let d = Document::titled(vec![
            text("Comparison: "),
            code("a"),
            text(" → "),
            code("b"),
        ]);
        assert_eq!(d.to_markdown(), "# Comparison: `a` → `b`\n");
        assert!(d.to_html("").contains("<title>Comparison: a → b</title>"));
        assert!(d.to_html("").contains(
            "<h1 id=\"comparison-a--b\">Comparison: <code>a</code> → <code>b</code></h1>"
        ));
    }

    #[test]
    fn findings_carry_severity_and_evidence() {
        let f = Finding {
            severity: Severity::Safety,
            text: vec![strong("Safety violation"), text(": two leaders")],
            evidence: vec![link("table", "#t"), link("trace", "traces/x.svg")],
        };
        let d = doc(vec![Block::Findings(vec![f])]);
        assert!(d.to_markdown().ends_with(
            "\n- **Safety violation**: two leaders ([table](#t); [trace](traces/x.svg))\n"
        ));
        assert!(d.to_html("").contains(
            "<li class=\"finding\" data-severity=\"safety\"><strong>Safety violation</strong>: two leaders (<a href=\"#t\">table</a>; <a href=\"traces/x.svg\">trace</a>)</li>"
        ));
        assert!(Severity::Safety < Severity::Liveness && Severity::Cost < Severity::Clean);
    }

    #[test]
    fn figures_lists_and_notes() {
        let d = doc(vec![
            Block::Figure(Figure {
                path: "failover.png".into(),
                alt: "failover <times>".into(),
                caption: Some(vec![emph("sim vs live")]),
            }),
            Block::List(vec![
                vec![text("one")].into(),
                Item {
                    text: vec![code("two")],
                    items: vec![vec![text("2a")], vec![text("2b")]],
                },
            ]),
            Block::Note(vec![text("careful")]),
        ]);
        assert_eq!(
            d.to_markdown(),
            "# T\n\n![failover \\<times\\>](failover.png)\n\n*sim vs live*\n\n- one\n- `two`\n  - 2a\n  - 2b\n\n> careful\n"
        );
        let html = d.to_html("body{}");
        assert!(html.contains("<style>body{}</style>"));
        assert!(html.contains(
            "<figure><img src=\"failover.png\" alt=\"failover &lt;times&gt;\"><figcaption><em>sim vs live</em></figcaption></figure>"
        ));
        assert!(html.contains(
            "<ul>\n<li>one</li>\n<li><code>two</code><ul><li>2a</li><li>2b</li></ul></li>\n</ul>"
        ));
        assert!(html.contains("<blockquote><p>careful</p></blockquote>"));
    }
}
