//! The Mermaid `sequenceDiagram` rendering: one arrow per message at its send instant (`->>`
//! delivered, `-x` lost), notes for role changes, faults, the reference instant, convergence
//! and idle gaps. Mermaid has no colours per arrow, so the category is in the text only where
//! the kind does not say it.

use std::fmt::Write as _;

use election_core::Time;

use super::{mark_label, ms, Fate, Model, TraceMeta};

/// Text Mermaid accepts in a message or note (it reserves `;` and `#`).
fn clean(s: &str) -> String {
    s.replace([';', '#'], " ").replace("->", "→")
}

enum Item {
    Msg(usize),
    Mark(usize),
    Note(String),
}

pub(super) fn render(model: &Model, meta: &TraceMeta) -> String {
    let n = model.nodes;
    let all = format!("N1,N{n}");
    let mut s = String::new();
    let _ = writeln!(s, "sequenceDiagram");
    let _ = writeln!(
        s,
        "    %% election-bench trace: {} · {} · n = {} · seed {} · net {}",
        clean(&meta.protocol),
        clean(&meta.scenario),
        n.saturating_sub(meta.services),
        meta.seed,
        clean(&meta.net)
    );
    if let Some((ok, stale, fenced)) = meta.writes {
        let _ = writeln!(
            s,
            "    %% writes taken after the first fault: {ok} ok, {stale} stale, {fenced} fenced"
        );
    }
    for i in 1..=n {
        let _ = writeln!(s, "    participant N{i} as {}", meta.lane_label(i, n));
    }
    // What was cut, visible in the rendered diagram.
    for c in &model.cut_notes {
        let _ = writeln!(s, "    Note over {all}: {}", clean(c));
    }
    // Everything in time order; at one instant: notes, then marks, then messages.
    let mut items: Vec<(Time, u8, usize, Item)> = Vec::new();
    for (i, m) in model.msgs.iter().enumerate() {
        items.push((m.sent, 2, i, Item::Msg(i)));
    }
    for (i, m) in model.marks.iter().enumerate() {
        if !mark_label(&m.kind).is_empty() {
            items.push((m.at, 1, i, Item::Mark(i)));
        }
    }
    for (i, note) in model.notes.iter().enumerate() {
        items.push((note.at, 0, i, Item::Note(clean(&note.text))));
    }
    if model.reference >= model.from && model.reference <= model.to {
        items.push((
            model.reference,
            0,
            usize::MAX - 1,
            Item::Note(format!(
                "t0 = {} ms: reference instant (first fault)",
                ms(model.reference)
            )),
        ));
    }
    if let Some(c) = model.converged_at {
        if c >= model.from && c <= model.to {
            let who = meta
                .leader
                .map(|l| format!("node {l} quorum leader"))
                .unwrap_or_else(|| "quorum leader".into());
            items.push((
                c,
                3,
                usize::MAX,
                Item::Note(format!(
                    "CONVERGED at {} ms: {who} (t0 + {:.3} ms)",
                    ms(c),
                    meta.elect_ms.unwrap_or(0.0)
                )),
            ));
        }
    }
    items.sort_by_key(|(t, pri, i, _)| (*t, *pri, *i));
    let mut last: Option<Time> = None;
    if model.from > Time::ZERO {
        let _ = writeln!(
            s,
            "    Note over {all}: window starts at {} ms",
            ms(model.from)
        );
        last = Some(model.from);
    }
    for (t, _, _, item) in &items {
        if let Some(l) = last {
            if let Some(h) = model.hidden.iter().find(|h| h.from > l && h.to < *t) {
                let _ = writeln!(
                    s,
                    "    Note over {all}: … {} heartbeat rounds ({} messages) not shown, {:.1} ms …",
                    h.rounds,
                    h.msgs,
                    (t.0 - l.0) as f64 / 1e6
                );
            } else if t.0 - l.0 > 5_000_000 {
                let _ = writeln!(
                    s,
                    "    Note over {all}: … {:.1} ms later, t = {} ms",
                    (t.0 - l.0) as f64 / 1e6,
                    ms(*t)
                );
            }
        }
        last = Some(*t);
        match item {
            Item::Msg(i) => {
                let m = &model.msgs[*i];
                let (arrow, suffix) = match m.fate {
                    Fate::Delivered(_) if m.duplicate => ("->>", " (duplicate)".to_string()),
                    Fate::Delivered(_) => ("->>", String::new()),
                    Fate::Dropped(_, why) => ("-x", format!(" (lost: {})", why.name())),
                    Fate::InFlight => ("--)", " (in flight at the end)".to_string()),
                };
                let _ = writeln!(
                    s,
                    "    N{}{arrow}N{}: {}{suffix}",
                    m.from,
                    m.to,
                    clean(m.kind)
                );
            }
            Item::Mark(i) => {
                let m = &model.marks[*i];
                let _ = writeln!(
                    s,
                    "    Note right of N{}: {}",
                    m.node,
                    clean(&mark_label(&m.kind))
                );
            }
            Item::Note(text) => {
                let _ = writeln!(s, "    Note over {all}: {text}");
            }
        }
    }
    s
}
