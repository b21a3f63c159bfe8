//! Run live trials as `election-bench live` would, before the CLI is wired:
//! `cargo run --release -p election-live --example live -- PROTOCOL NODES SCENARIO [TRIALS] [OUT]`.

use election_live::{run_live, LiveArgs};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 3 {
        eprintln!("usage: live PROTOCOL NODES SCENARIO [TRIALS] [OUT]");
        std::process::exit(2);
    }
    let mut args = LiveArgs::new(&a[0], a[1].parse().expect("NODES is a number"), &a[2]);
    if let Some(t) = a.get(3) {
        args.trials = t.parse().expect("TRIALS is a number");
    }
    if let Some(o) = a.get(4) {
        args.out = o.into();
    }
    let res = run_live(&args, |row, report| {
        println!(
            "seed {}: converged {} leader {} elect_ms {} split_brain {} rejected {}",
            row.seed,
            row.converged,
            row.leader.map_or("-".into(), |l| l.to_string()),
            row.elect_ms.map_or("-".into(), |e| format!("{e:.1}")),
            row.split_brain,
            report.health.rejected(),
        )
    });
    match res {
        Ok(out) => {
            for f in &out.files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(if e.is_usage() { 2 } else { 1 });
        }
    }
}
