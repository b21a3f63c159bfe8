//! The SVG message-sequence chart. Hand-written SVG (not plotters): lifelines, arrows with
//! category-coloured arrowheads, marks and spans need exact placement, and the text stays
//! text, so the chart is searchable and sharp at any zoom.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use election_core::{MsgCategory, Role, Time};

use super::{mark_label, ms, Fate, Hidden, MarkKind, Model, Msg, TraceMeta};
use crate::palette::{category_colour, Rgb};

const LEFT: f64 = 104.0;
const NOTES_W: f64 = 420.0;
const MIN_WIDTH: f64 = 1330.0;
const ROW: f64 = 22.0;
const GAP_EXTRA: f64 = 16.0;
const HIDDEN_EXTRA: f64 = 30.0;
/// Idle stretches longer than this get a marked break.
const GAP_NS: u64 = super::BURST_GAP_NS;
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn f(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// Maps instants to y coordinates on the compressed time axis.
struct YAxis {
    rows: Vec<(Time, f64)>,
    /// (y of the break, idle time, collapsed heartbeats in it)
    gaps: Vec<(f64, u64, Option<Hidden>)>,
}

impl YAxis {
    fn new(instants: &[Time], top: f64, hidden: &[Hidden]) -> YAxis {
        let mut rows = Vec::with_capacity(instants.len());
        let mut gaps = Vec::new();
        let mut y = top;
        for (i, &t) in instants.iter().enumerate() {
            if i > 0 {
                let prev = instants[i - 1];
                let dt = t.0 - prev.0;
                let h = hidden.iter().find(|h| h.from > prev && h.to < t).copied();
                if h.is_some() {
                    gaps.push((y + (ROW + HIDDEN_EXTRA) / 2.0, dt, h));
                    y += ROW + HIDDEN_EXTRA;
                } else if dt > GAP_NS {
                    gaps.push((y + (ROW + GAP_EXTRA) / 2.0, dt, None));
                    y += ROW + GAP_EXTRA;
                } else {
                    y += ROW;
                }
            }
            rows.push((t, y));
        }
        YAxis { rows, gaps }
    }

    fn y(&self, t: Time) -> f64 {
        match self.rows.binary_search_by_key(&t, |r| r.0) {
            Ok(i) => self.rows[i].1,
            Err(0) => self.rows.first().map_or(0.0, |r| r.1),
            Err(i) if i >= self.rows.len() => self.rows.last().map_or(0.0, |r| r.1),
            Err(i) => {
                let (t0, y0) = self.rows[i - 1];
                let (t1, y1) = self.rows[i];
                y0 + (y1 - y0) * (t.0 - t0.0) as f64 / (t1.0 - t0.0) as f64
            }
        }
    }

    fn bottom(&self) -> f64 {
        self.rows.last().map_or(0.0, |r| r.1)
    }
}

fn cat_name(c: MsgCategory) -> &'static str {
    c.name()
}

pub(super) fn render(model: &Model, meta: &TraceMeta) -> String {
    let n = model.nodes as usize;
    let lane = (1100.0 / n as f64).clamp(100.0, 150.0);
    let lanes_end = LEFT + lane * n as f64;
    let width = (lanes_end + NOTES_W).max(MIN_WIDTH);
    let x_of = |node: u32| LEFT + lane * (node as f64 - 0.5);

    // Header lines.
    let mut header = vec![format!(
        "{} · {} · n = {} · seed {}",
        meta.protocol,
        meta.scenario,
        model.nodes.saturating_sub(meta.services),
        meta.seed
    )];
    let mut sub = format!(
        "net {} · reference instant (first fault) {} ms",
        meta.net,
        ms(model.reference)
    );
    match (meta.elect_ms, meta.leader) {
        (Some(e), Some(l)) => {
            let _ = write!(sub, " · converged {} ms later on node {l}", fmt3(e));
        }
        (Some(e), None) => {
            let _ = write!(sub, " · converged {} ms later", fmt3(e));
        }
        _ => sub.push_str(" · never converged"),
    }
    if let Some(sb) = meta.split_brain_ms {
        let _ = write!(sub, " · split brain {} ms", fmt3(sb));
    }
    if let Some((ok, stale, fenced)) = meta.writes {
        let _ = write!(
            sub,
            " · writes taken {ok} ok, {stale} STALE (marked), {fenced} fenced (marked)"
        );
    }
    header.push(sub);
    let cut = model.cut_notes.clone();
    let header_h = 16.0 + 24.0 + 20.0 + 18.0 * cut.len() as f64 + 34.0;
    let node_box_top = header_h + 6.0;
    let node_box_h = if model.from > Time::ZERO { 46.0 } else { 30.0 };
    let rows_top = node_box_top + node_box_h + 36.0;

    let instants = model.instants();
    let ax = YAxis::new(&instants, rows_top, &model.hidden);
    let bottom = ax.bottom() + 20.0;
    let height = bottom + node_box_h + 24.0;

    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">"#,
        w = f(width),
        h = f(height)
    );
    s.push('\n');
    s.push_str("<style>.t{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.m{font-size:10.5px}.l{font-size:10.5px}.tl{font-size:9.5px;fill:#888}.h{font-size:13px;font-weight:bold}</style>\n<defs>\n");
    for c in MsgCategory::ALL {
        let col = category_colour(c);
        let _ = writeln!(
            s,
            r#"<marker id="ah-{}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{}"/></marker>"#,
            cat_name(c),
            col.hex()
        );
    }
    s.push_str("</defs>\n");
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{}" height="{}" fill="#fff"/>"##,
        f(width),
        f(height)
    );

    // Title, subtitle, cut notes, legend.
    let _ = writeln!(
        s,
        r#"<text x="16" y="28" font-size="17" font-weight="bold">{}</text>"#,
        esc(&header[0])
    );
    let _ = writeln!(
        s,
        r##"<text x="16" y="50" font-size="12.5" fill="#333">{}</text>"##,
        esc(&header[1])
    );
    let mut y = 50.0;
    for c in &cut {
        y += 18.0;
        let _ = writeln!(
            s,
            r##"<text x="16" y="{}" font-size="12.5" font-style="italic" fill="#a00">{}</text>"##,
            f(y),
            esc(c)
        );
    }
    legend(&mut s, 16.0, y + 26.0);

    // Link-fault shading and walls.
    let spans = link_fault_spans(model);
    for (start, end, walls, label) in &spans {
        let (y0, y1) = (ax.y(*start), ax.y(*end));
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fbe3e3" opacity="0.7"><title>{}</title></rect>"##,
            f(LEFT),
            f(y0),
            f(lane * n as f64),
            f((y1 - y0).max(2.0)),
            esc(label)
        );
        for &(a, _) in walls {
            let x = LEFT + lane * a as f64;
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#c62828" stroke-width="3" stroke-dasharray="7 4"/>"##,
                f(y0),
                f(y1),
                x = f(x)
            );
        }
    }

    // Node boxes, top and bottom.
    for i in 1..=model.nodes {
        let x = x_of(i);
        let init = &model.initial[i as usize - 1];
        // A service endpoint (the lease store) reports no leadership status of its own.
        let service = i + meta.services > model.nodes;
        let sub = if model.from > Time::ZERO {
            Some(if init.crashed {
                "crashed".to_string()
            } else if service {
                "service".to_string()
            } else {
                init.status
                    .map(|st| super::status_label(&st))
                    .unwrap_or_else(|| "down".into())
            })
        } else {
            None
        };
        let label = meta.lane_label(i, model.nodes);
        node_box(
            &mut s,
            x,
            node_box_top,
            node_box_h,
            lane,
            &label,
            sub.as_deref(),
        );
        node_box(&mut s, x, bottom + 4.0, 30.0, lane, &label, None);
    }

    let top = node_box_top + node_box_h;
    // Leadership: a gold band behind the lifeline for as long as the node believes it leads,
    // so two bands side by side are a split brain.
    for &(node, a, b) in &model.leading {
        let y0 = if a <= model.from { top } else { ax.y(a) };
        let y1 = if b >= model.to { bottom + 4.0 } else { ax.y(b) };
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="10" height="{}" fill="#f9a825" opacity="0.45"><title>node {node} leads from {} ms to {} ms</title></rect>"##,
            f(x_of(node) - 5.0),
            f(y0),
            f((y1 - y0).max(2.0)),
            ms(a),
            ms(b)
        );
    }

    // Lifelines: solid while up, dotted while crashed, a grey bar while paused.
    for i in 1..=model.nodes {
        let x = f(x_of(i));
        let mut cursor = top;
        let mut downs: Vec<(f64, f64)> = model
            .down
            .iter()
            .filter(|d| d.0 == i)
            .map(|d| {
                let end = if d.2 >= model.to {
                    bottom + 4.0
                } else {
                    ax.y(d.2)
                };
                (ax.y(d.1), end)
            })
            .collect();
        downs.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (a, b) in downs {
            let a = if (a - rows_top).abs() < 0.01 && model.initial[i as usize - 1].crashed {
                top
            } else {
                a
            };
            if a > cursor {
                let _ = writeln!(
                    s,
                    r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#555" stroke-width="1.5"/>"##,
                    f(cursor),
                    f(a)
                );
            }
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#bbb" stroke-width="1.5" stroke-dasharray="2 4"/>"##,
                f(a),
                f(b)
            );
            cursor = b;
        }
        if bottom + 4.0 > cursor {
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#555" stroke-width="1.5"/>"##,
                f(cursor),
                f(bottom + 4.0)
            );
        }
    }
    for &(node, a, b) in &model.paused {
        let (y0, y1) = (ax.y(a), ax.y(b));
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="12" height="{}" fill="#9e9e9e" opacity="0.55"><title>node {node} paused {} ms to {} ms</title></rect>"##,
            f(x_of(node) - 6.0),
            f(y0),
            f((y1 - y0).max(2.0)),
            ms(a),
            ms(b)
        );
    }

    // Time axis: one label per row, breaks for idle gaps.
    for &(t, y) in &ax.rows {
        let _ = writeln!(
            s,
            r#"<text class="tl" x="{}" y="{}" text-anchor="end">{}</text>"#,
            f(LEFT - 10.0),
            f(y + 3.5),
            ms(t)
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="end" font-size="10.5" fill="#666">time (ms)</text>"##,
        f(LEFT - 10.0),
        f(rows_top - 16.0)
    );
    for &(y, dt, hidden) in &ax.gaps {
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#ccc" stroke-width="1" stroke-dasharray="1 5"/>"##,
            f(LEFT - 6.0),
            f(lanes_end),
            y = f(y)
        );
        if let Some(h) = hidden {
            let _ = writeln!(
                s,
                r##"<text class="t" x="{}" y="{}" text-anchor="middle" font-size="11" font-style="italic" fill="#777">⋯ {} heartbeat rounds ({} messages) not drawn ⋯</text>"##,
                f((LEFT + lanes_end) / 2.0),
                f(y + 4.0),
                h.rounds,
                h.msgs
            );
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" font-size="9.5" font-style="italic" fill="#999">⋯ {} ms ⋯</text>"##,
            f(LEFT - 10.0),
            f(y + 3.0),
            fmt1(dt as f64 / 1e6)
        );
    }

    // Reference instant and convergence.
    let mut notes: Vec<(Time, String, &str)> = Vec::new();
    if model.reference >= model.from && model.reference <= model.to {
        let y = ax.y(model.reference);
        hline(&mut s, y, lanes_end, "#c62828");
        notes.push((
            model.reference,
            "t0: reference instant (first fault)".into(),
            "#c62828",
        ));
    }
    if let Some(c) = model.converged_at {
        if c >= model.from && c <= model.to {
            let y = ax.y(c);
            hline(&mut s, y, lanes_end, "#2e7d32");
            let who = meta
                .leader
                .map(|l| format!("node {l} quorum leader"))
                .unwrap_or_else(|| "quorum leader".into());
            notes.push((
                c,
                format!(
                    "CONVERGED: {who}, t0 + {} ms",
                    fmt3(meta.elect_ms.unwrap_or(0.0))
                ),
                "#2e7d32",
            ));
        }
    }
    for note in &model.notes {
        notes.push((note.at, note.text.clone(), "#6a1b9a"));
    }
    notes.sort_by_key(|n| n.0);
    let mut last_y = f64::NEG_INFINITY;
    for (t, text, colour) in &notes {
        let y = (ax.y(*t) + 4.0).max(last_y + 13.0);
        last_y = y;
        let _ = writeln!(
            s,
            r#"<text class="t" x="{}" y="{}" font-size="11.5" font-weight="bold" fill="{colour}">{}</text>"#,
            f(lanes_end + 14.0),
            f(y),
            esc(text)
        );
    }

    // Messages.
    for m in &model.msgs {
        arrow(&mut s, m, &ax, x_of(m.from), x_of(m.to), lane);
    }
    // Text last, on top of every line, each placed where it collides with no earlier text:
    // role marks first (they matter most), then the grouped message labels, then the rest.
    let mut placer = Placer::default();
    let mut merged: BTreeMap<(Time, u32), Vec<&MarkKind>> = BTreeMap::new();
    for m in &model.marks {
        merged.entry((m.at, m.node)).or_default().push(&m.kind);
    }
    for ((t, node), kinds) in &merged {
        let texts: Vec<String> = kinds
            .iter()
            .map(|k| mark_label(k))
            .filter(|l| !l.is_empty())
            .collect();
        if texts.is_empty() {
            continue;
        }
        let glyph = kinds.iter().map(|k| glyph_rank(k)).min().unwrap_or(9);
        let (x, y) = (x_of(*node), ax.y(*t));
        draw_glyph(&mut s, glyph, x, y);
        let text = texts.join(" · ");
        let (tx, ty, anchor) = placer.place(
            &text,
            &[
                (x + 9.0, y + 3.8, "start"),
                (x - 9.0, y + 3.8, "end"),
                (x + 9.0, y + 14.5, "start"),
                (x - 9.0, y + 14.5, "end"),
                (x + 9.0, y - 7.0, "start"),
            ],
        );
        let _ = writeln!(
            s,
            r#"<text class="t m" x="{}" y="{}" text-anchor="{anchor}" fill="{}">{}</text>"#,
            f(tx),
            f(ty),
            glyph_colour(glyph),
            esc(&text)
        );
    }
    for l in labels(&model.msgs, &ax, &x_of, lane) {
        let (x, y, anchor) = placer.place(&l.text, &l.candidates);
        text_at(&mut s, x, y, anchor, l.colour, &l.text);
    }
    s.push_str("</svg>\n");
    s
}

fn fmt3(v: f64) -> String {
    format!("{v:.3}")
}

fn fmt1(v: f64) -> String {
    format!("{v:.1}")
}

fn hline(s: &mut String, y: f64, lanes_end: f64, colour: &str) {
    let _ = writeln!(
        s,
        r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
        f(LEFT - 4.0),
        f(lanes_end + 8.0),
        y = f(y)
    );
}

fn node_box(s: &mut String, x: f64, y: f64, h: f64, lane: f64, label: &str, sub: Option<&str>) {
    let w = (lane - 14.0).min(110.0);
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="{}" height="{}" rx="5" fill="#eef2f7" stroke="#456"/>"##,
        f(x - w / 2.0),
        f(y),
        f(w),
        f(h)
    );
    let _ = writeln!(
        s,
        r#"<text class="h" x="{}" y="{}" text-anchor="middle">{label}</text>"#,
        f(x),
        f(y + 19.0)
    );
    if let Some(sub) = sub {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" font-size="10" fill="#444">{}</text>"##,
            f(x),
            f(y + 36.0),
            esc(sub)
        );
    }
}

fn legend(s: &mut String, x0: f64, y: f64) {
    let mut x = x0;
    for c in MsgCategory::ALL {
        let col = category_colour(c).hex();
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{col}" stroke-width="2" marker-end="url(#ah-{})"/>"#,
            f(x),
            f(x + 30.0),
            cat_name(c),
            y = f(y)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-size="11.5">{}</text>"#,
            f(x + 36.0),
            f(y + 4.0),
            c.name()
        );
        x += 36.0 + 8.0 * c.name().len() as f64 + 22.0;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#777" stroke-width="1.5" stroke-dasharray="4 3"/>"##,
        f(x),
        f(x + 26.0),
        y = f(y)
    );
    cross(s, x + 30.0, y, "#c62828");
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="11.5">lost</text>"#,
        f(x + 40.0),
        f(y + 4.0)
    );
    x += 90.0;
    for (g, text) in [
        (2, "leader"),
        (3, "candidate"),
        (0, "crash"),
        (1, "recover/boot"),
        (6, "follower"),
    ] {
        draw_glyph(s, g, x, y);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-size="11.5">{text}</text>"#,
            f(x + 10.0),
            f(y + 4.0)
        );
        x += 18.0 + 7.5 * text.len() as f64 + 14.0;
    }
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="10" height="16" fill="#f9a825" opacity="0.45"/><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#555" stroke-width="1.5"/>"##,
        f(x),
        f(y - 8.0),
        f(x + 5.0),
        f(y - 8.0),
        f(x + 5.0),
        f(y + 8.0)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="11.5">leading</text>"#,
        f(x + 16.0),
        f(y + 4.0)
    );
    x += 84.0;
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="26" height="12" fill="#fbe3e3"/><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#c62828" stroke-width="3" stroke-dasharray="7 4"/>"##,
        f(x),
        f(y - 6.0),
        f(x + 13.0),
        f(y - 8.0),
        f(x + 13.0),
        f(y + 8.0)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-size="11.5">partition / link fault</text>"#,
        f(x + 32.0),
        f(y + 4.0)
    );
}

fn cross(s: &mut String, x: f64, y: f64, colour: &str) {
    let d = 4.5;
    let _ = writeln!(
        s,
        r#"<path d="M{},{} L{},{} M{},{} L{},{}" stroke="{colour}" stroke-width="2.2"/>"#,
        f(x - d),
        f(y - d),
        f(x + d),
        f(y + d),
        f(x - d),
        f(y + d),
        f(x + d),
        f(y - d)
    );
}

/// Drawing priority of a mark: lower wins when several share an instant and a node.
fn glyph_rank(k: &MarkKind) -> u8 {
    match k {
        MarkKind::Crash => 0,
        MarkKind::Recover | MarkKind::Boot => 1,
        MarkKind::Status(st) if st.role == Role::Leader => 2,
        MarkKind::Status(st) if st.role == Role::Candidate => 3,
        MarkKind::Pause(_) | MarkKind::Resume => 4,
        MarkKind::Suspect | MarkKind::InvalidDestination(..) | MarkKind::Write(..) => 5,
        MarkKind::Status(_) => 6,
        MarkKind::Timer(_) | MarkKind::DetectorSuppressed => 7,
    }
}

fn glyph_colour(g: u8) -> &'static str {
    match g {
        0 => "#c62828",
        1 => "#2e7d32",
        2 => "#8d6e00",
        3 => "#b26a00",
        4 => "#616161",
        5 => "#6a1b9a",
        6 => "#546e7a",
        _ => "#8a8a8a",
    }
}

fn draw_glyph(s: &mut String, g: u8, x: f64, y: f64) {
    match g {
        0 => cross(s, x, y, "#c62828"),
        1 => {
            let _ = writeln!(
                s,
                r##"<path d="M{},{} L{},{} L{},{} z" fill="#2e7d32"/>"##,
                f(x - 5.5),
                f(y + 4.5),
                f(x + 5.5),
                f(y + 4.5),
                f(x),
                f(y - 5.5)
            );
        }
        2 => {
            let _ = writeln!(
                s,
                r##"<rect x="{}" y="{}" width="11" height="11" fill="#f9a825" stroke="#5d4300" stroke-width="1.2"/>"##,
                f(x - 5.5),
                f(y - 5.5)
            );
        }
        3 => {
            let _ = writeln!(
                s,
                r##"<path d="M{},{} L{},{} L{},{} L{},{} z" fill="#fff" stroke="#b26a00" stroke-width="1.8"/>"##,
                f(x),
                f(y - 6.0),
                f(x + 6.0),
                f(y),
                f(x),
                f(y + 6.0),
                f(x - 6.0),
                f(y)
            );
        }
        4 => {
            let _ = writeln!(
                s,
                r##"<rect x="{}" y="{}" width="9" height="9" fill="#757575"/>"##,
                f(x - 4.5),
                f(y - 4.5)
            );
        }
        5 => {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="4.5" fill="#6a1b9a"/>"##,
                f(x),
                f(y)
            );
        }
        6 => {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="3.5" fill="#546e7a"/>"##,
                f(x),
                f(y)
            );
        }
        _ => {
            let _ = writeln!(
                s,
                r##"<circle cx="{}" cy="{}" r="3.5" fill="#fff" stroke="#8a8a8a" stroke-width="1.2"/>"##,
                f(x),
                f(y)
            );
        }
    }
}

fn arrow(s: &mut String, m: &Msg, ax: &YAxis, x1: f64, x2: f64, lane: f64) {
    let col = category_colour(m.category);
    let width = if m.category == MsgCategory::Heartbeat {
        1.0
    } else {
        1.6
    };
    let y1 = ax.y(m.sent);
    let dir = if x2 >= x1 { 1.0 } else { -1.0 };
    let title = format!(
        "{} {} → {} sent {} ms{}",
        m.kind,
        m.from,
        m.to,
        ms(m.sent),
        match m.fate {
            Fate::Delivered(t) => format!(
                ", delivered {} ms{}",
                ms(t),
                if m.duplicate { " (duplicate)" } else { "" }
            ),
            Fate::Dropped(t, why) => format!(", lost at {} ms ({})", ms(t), why.name()),
            Fate::InFlight => ", still in flight at the end".into(),
        }
    );
    match m.fate {
        Fate::Delivered(t) => {
            let y2 = ax.y(t);
            let _ = writeln!(
                s,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{width}" marker-end="url(#ah-{})"><title>{}</title></line>"#,
                f(x1),
                f(y1),
                f(x2 - dir * 2.0),
                f(y2),
                col.hex(),
                cat_name(m.category),
                esc(&title)
            );
        }
        Fate::Dropped(t, _) => {
            let y2 = ax.y(t);
            // Lost at the send instant (link down): a stub; lost later: most of the way.
            let frac = if t == m.sent { 0.35 } else { 0.85 };
            let xe = x1 + (x2 - x1) * frac;
            let ye = y2;
            let _ = writeln!(
                s,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{width}" stroke-dasharray="4 3"><title>{}</title></line>"#,
                f(x1),
                f(y1),
                f(xe),
                f(ye),
                col.hex(),
                esc(&title)
            );
            cross(s, xe, ye, "#c62828");
        }
        Fate::InFlight => {
            let xe = x1 + dir * lane * 0.5;
            let _ = writeln!(
                s,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{width}" stroke-dasharray="2 3"><title>{}</title></line>"#,
                f(x1),
                f(y1),
                f(xe),
                f(ax.bottom()),
                col.hex(),
                esc(&title)
            );
        }
    }
}

fn label_colour(c: MsgCategory) -> Rgb {
    if c == MsgCategory::Heartbeat {
        Rgb(0x80, 0x80, 0x80)
    } else {
        category_colour(c).darken(0.15)
    }
}

/// A message label and where it may go, best first.
struct LabelReq {
    text: String,
    colour: Rgb,
    candidates: Vec<(f64, f64, &'static str)>,
}

/// Places text boxes so that none overlaps an earlier one (the first free candidate wins; if
/// none is free, the first).
#[derive(Default)]
struct Placer {
    boxes: Vec<(f64, f64, f64, f64)>,
}

impl Placer {
    fn bbox(text: &str, x: f64, y: f64, anchor: &str) -> (f64, f64, f64, f64) {
        let w = 6.3 * text.chars().count() as f64;
        let x0 = match anchor {
            "start" => x,
            "end" => x - w,
            _ => x - w / 2.0,
        };
        (x0, x0 + w, y - 9.0, y + 2.5)
    }

    fn place(
        &mut self,
        text: &str,
        candidates: &[(f64, f64, &'static str)],
    ) -> (f64, f64, &'static str) {
        let free = |b: &(f64, f64, f64, f64), boxes: &[(f64, f64, f64, f64)]| {
            boxes
                .iter()
                .all(|o| b.1 <= o.0 || b.0 >= o.1 || b.3 <= o.2 || b.2 >= o.3)
        };
        let chosen = candidates
            .iter()
            .copied()
            .find(|&(x, y, a)| free(&Self::bbox(text, x, y, a), &self.boxes))
            .unwrap_or(candidates[0]);
        self.boxes
            .push(Self::bbox(text, chosen.0, chosen.1, chosen.2));
        chosen
    }
}

/// One label per broadcast (same sender, instant and kind), half a lane out on the side most
/// of its arrows go; one per fan-in (same receiver, delivery instant and kind), half a lane
/// out on the side most arrive from; else one per arrow at its middle. Messages still in
/// flight when the trial ends get no label.
fn labels(msgs: &[Msg], ax: &YAxis, x_of: &dyn Fn(u32) -> f64, lane: f64) -> Vec<LabelReq> {
    let mut out = Vec::new();
    let mut fan_out: BTreeMap<(Time, u32, &str), Vec<usize>> = BTreeMap::new();
    let mut fan_in: BTreeMap<(Time, u32, &str), Vec<usize>> = BTreeMap::new();
    for (i, m) in msgs.iter().enumerate() {
        if m.fate == Fate::InFlight {
            continue;
        }
        fan_out.entry((m.sent, m.from, m.kind)).or_default().push(i);
        if let Fate::Delivered(t) = m.fate {
            fan_in.entry((t, m.to, m.kind)).or_default().push(i);
        }
    }
    let mut done: Vec<bool> = msgs.iter().map(|m| m.fate == Fate::InFlight).collect();
    for ((t, from, kind), idx) in &fan_out {
        if idx.len() < 2 {
            continue;
        }
        let m = &msgs[idx[0]];
        let right = idx.iter().filter(|&&i| msgs[i].to > *from).count() * 2 >= idx.len();
        let dir = if right { 1.0 } else { -1.0 };
        let lost = idx
            .iter()
            .filter(|&&i| matches!(msgs[i].fate, Fate::Dropped(..)))
            .count();
        let text = if lost > 0 {
            format!("{kind} ×{} ({lost} lost)", idx.len())
        } else {
            format!("{kind} ×{}", idx.len())
        };
        let (x, y) = (x_of(*from), ax.y(*t));
        out.push(LabelReq {
            text,
            colour: label_colour(m.category),
            candidates: vec![
                (x + dir * lane * 0.5, y - 5.0, "middle"),
                (x + dir * lane * 0.5, y - 16.0, "middle"),
                (x - dir * lane * 0.5, y - 5.0, "middle"),
                (x + dir * lane * 1.2, y - 5.0, "middle"),
            ],
        });
        for &i in idx {
            done[i] = true;
        }
    }
    for ((t, to, kind), idx) in &fan_in {
        let idx: Vec<usize> = idx.iter().copied().filter(|&i| !done[i]).collect();
        if idx.len() < 2 {
            continue;
        }
        let m = &msgs[idx[0]];
        let from_left = idx.iter().filter(|&&i| msgs[i].from < *to).count() * 2 >= idx.len();
        let dir = if from_left { -1.0 } else { 1.0 };
        let (x, y) = (x_of(*to), ax.y(*t));
        out.push(LabelReq {
            text: format!("{kind} ×{}", idx.len()),
            colour: label_colour(m.category),
            candidates: vec![
                (x + dir * lane * 0.5, y - 6.0, "middle"),
                (x + dir * lane * 0.5, y - 17.0, "middle"),
                (x + dir * lane * 1.1, y - 6.0, "middle"),
                (x - dir * lane * 0.5, y - 6.0, "middle"),
            ],
        });
        for &i in &idx {
            done[i] = true;
        }
    }
    for (i, m) in msgs.iter().enumerate() {
        if done[i] {
            continue;
        }
        let (x1, x2) = (x_of(m.from), x_of(m.to));
        let y1 = ax.y(m.sent);
        let (xm, ym, text) = match m.fate {
            Fate::Delivered(t) => ((x1 + x2) / 2.0, (y1 + ax.y(t)) / 2.0, m.kind.to_string()),
            Fate::Dropped(t, why) => {
                let frac = if t == m.sent { 0.18 } else { 0.45 };
                (
                    x1 + (x2 - x1) * frac,
                    y1 + (ax.y(t) - y1) * frac,
                    format!("{} (lost: {})", m.kind, why.name()),
                )
            }
            Fate::InFlight => continue,
        };
        out.push(LabelReq {
            text,
            colour: label_colour(m.category),
            candidates: vec![
                (xm, ym - 4.0, "middle"),
                (xm, ym - 14.0, "middle"),
                (xm, ym + 10.0, "middle"),
            ],
        });
    }
    out
}

fn text_at(s: &mut String, x: f64, y: f64, anchor: &str, colour: Rgb, text: &str) {
    let _ = writeln!(
        s,
        r#"<text class="t l" x="{}" y="{}" text-anchor="{anchor}" fill="{}">{}</text>"#,
        f(x),
        f(y),
        colour.hex(),
        esc(text)
    );
}

/// Link faults as `(start, end, walls, label)`, each lasting until the next heal.
/// A link fault drawn as a shaded span: start, end, walls between lanes, label.
type Span = (Time, Time, Vec<(u32, u32)>, String);

fn link_fault_spans(model: &Model) -> Vec<Span> {
    let mut out = Vec::new();
    let mut open: Vec<Span> = model
        .active_at_start
        .iter()
        .map(|n| (model.from, model.from, n.walls.clone(), n.text.clone()))
        .collect();
    for note in &model.notes {
        if note.heal {
            for (start, _, walls, label) in open.drain(..) {
                out.push((start, note.at, walls, label));
            }
        } else if note.link_fault {
            open.push((note.at, note.at, note.walls.clone(), note.text.clone()));
        }
    }
    for (start, _, walls, label) in open {
        out.push((start, model.to, walls, label));
    }
    out
}
