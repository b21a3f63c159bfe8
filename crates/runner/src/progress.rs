//! Sweep progress on stderr: an indicatif bar with rate and ETA on a terminal, plain lines
//! every few seconds otherwise (CI logs, batch jobs), nothing when switched off.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a plain progress line is printed.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    tty: bool,
    plain: bool,
    name: String,
    /// What runs (`sweep`, `tune`) and what is counted (`trials`).
    what: String,
    unit: String,
    total: u64,
    done: u64,
    start_done: u64,
    start: Instant,
    last_line: Instant,
}

fn hms(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Progress {
    pub(crate) fn new(on: bool, name: &str, total: u64, done: u64, threads: usize) -> Progress {
        Progress::with(on, "sweep", name, "trials", total, done, threads)
    }

    /// Progress of `what` (`tune`) named `name`, counting `unit`s.
    pub(crate) fn labelled(
        on: bool,
        what: &str,
        name: &str,
        unit: &str,
        total: u64,
        threads: usize,
    ) -> Progress {
        Progress::with(on, what, name, unit, total, 0, threads)
    }

    fn with(
        on: bool,
        what: &str,
        name: &str,
        unit: &str,
        total: u64,
        done: u64,
        threads: usize,
    ) -> Progress {
        let tty = on && std::io::stderr().is_terminal();
        let bar = tty.then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    &format!("{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} {{rate}} ETA {{eta}}"),
                )
                .expect("valid template")
                .with_key(
                    "rate",
                    |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", s.per_sec());
                    },
                ),
            );
            b.set_prefix(format!("{what} {name}"));
            b.set_position(done);
            b.reset_eta();
            b
        });
        let plain = on && !tty;
        if plain {
            eprintln!(
                "{what} {name}: {total} {unit} on {threads} threads{}",
                if done > 0 {
                    format!(", {done} already done")
                } else {
                    String::new()
                }
            );
        }
        let now = Instant::now();
        Progress {
            bar,
            tty,
            plain,
            name: name.to_string(),
            what: what.to_string(),
            unit: unit.to_string(),
            total,
            done,
            start_done: done,
            start: now,
            last_line: now,
        }
    }

    pub(crate) fn advance(&mut self, n: u64) {
        self.done += n;
        if let Some(b) = &self.bar {
            b.set_position(self.done);
        }
        if self.plain && self.last_line.elapsed() >= PLAIN_EVERY {
            self.last_line = Instant::now();
            self.line();
        }
    }

    fn line(&self) {
        let el = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = (self.done - self.start_done) as f64 / el;
        let left = self.total.saturating_sub(self.done);
        let eta = if rate > 0.0 {
            hms(Duration::from_secs_f64(left as f64 / rate))
        } else {
            "?".into()
        };
        eprintln!(
            "{} {}: {}/{} {} ({:.1}%), {:.0} {}/s, ETA {eta}",
            self.what,
            self.name,
            self.done,
            self.total,
            self.unit,
            100.0 * self.done as f64 / self.total.max(1) as f64,
            rate,
            self.unit
        );
    }

    pub(crate) fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if self.plain || self.tty {
            let el = self.start.elapsed();
            eprintln!(
                "{} {}: {} {} done in {} ({:.0} {}/s)",
                self.what,
                self.name,
                self.total,
                self.unit,
                hms(el),
                (self.done - self.start_done) as f64 / el.as_secs_f64().max(1e-9),
                self.unit
            );
        }
    }
}
