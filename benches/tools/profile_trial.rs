//! One whole runner trial (`Cell::run`, as the `trial/...` benches of `benches/simulator.rs`
//! run it) as a plain program, for instruction-count profiles (`valgrind --tool=callgrind`):
//!
//! ```text
//! cargo build --release --example profile-trial
//! valgrind --tool=callgrind --toggle-collect='profile_trial::measured' \
//!     target/release/examples/profile-trial bully 101 leader-crash-lowest-detects 1 node.profile=ideal
//! ```
//!
//! Arguments: protocol spec, nodes, scenario, repetitions (default 1), then any number of
//! `key=value` parameters as `--set` takes them. Every repetition runs seed 1, the benches'
//! seed; the program prints the trial's messages (heartbeats included), so instructions per
//! message = callgrind's total / (messages × repetitions), and, outside callgrind, the median
//! wall-clock time of a repetition and the messages per second at that median (a rough figure
//! on a shared machine; the benches' criterion runs are the measurement).
//!
//! One trial runs first, outside `measured`, as criterion's warm-up does: it builds what a
//! process builds once and every later trial shares (the log-normal tables of
//! `election_sim::LogNormalTable`), which a sweep or a bench pays once, not per trial.

use std::process::ExitCode;
use std::time::Instant;

use election_runner::SweepSpec;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: profile-trial PROTOCOL NODES SCENARIO [REPS] [key=value]...");
        return ExitCode::from(2);
    }
    let Ok(nodes) = args[1].parse::<u32>() else {
        eprintln!("NODES: expected a number, got {:?}", args[1]);
        return ExitCode::from(2);
    };
    let (reps, sets) = match args.get(3).map(|s| s.parse::<u32>()) {
        Some(Ok(r)) => (r, &args[4..]),
        _ => (1, &args[3..]),
    };
    let mut spec = SweepSpec {
        protocols: Some(vec![args[0].clone()]),
        nodes: Some(vec![nodes]),
        scenarios: Some(vec![args[2].clone()]),
        seeds: Some(1),
        ..SweepSpec::default()
    };
    for kv in sets {
        if let Err(e) = spec.set(kv) {
            eprintln!("{kv}: {e}");
            return ExitCode::from(2);
        }
    }
    let cell = match spec.plan().and_then(|p| p.cells()) {
        Ok(mut cells) if cells.len() == 1 => cells.remove(0),
        Ok(cells) => {
            eprintln!("expected one cell, the arguments make {}", cells.len());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = cell.run(1, false) {
        eprintln!("{e}");
        return ExitCode::from(1);
    }
    match measured(&cell, reps) {
        Ok((messages, times)) => report(messages, reps, times),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// `reps` repetitions of the trial: its messages and each one's wall-clock time.
#[inline(never)]
fn measured(cell: &election_runner::Cell, reps: u32) -> Result<(u64, Vec<f64>), String> {
    let mut messages = 0;
    let mut times = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        let start = Instant::now();
        messages = cell
            .run(1, false)
            .map_err(|e| e.to_string())?
            .row
            .msgs_total;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok((messages, times))
}

fn report(messages: u64, reps: u32, mut times: Vec<f64>) -> ExitCode {
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    println!(
        "{messages} messages per trial, {reps} trial(s); median {:.3} ms per trial, {:.2} M messages/s",
        median * 1e3,
        messages as f64 / median.max(f64::MIN_POSITIVE) / 1e6
    );
    ExitCode::SUCCESS
}
