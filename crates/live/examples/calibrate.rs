//! Run the calibration as `election-bench calibrate` would, before the CLI is wired:
//! `cargo run --release -p election-live --example calibrate -- [TRIALS] [PROTOCOL...]`.

use election_live::{calibrate, CalibrateArgs};

fn main() {
    let mut args = CalibrateArgs::default();
    let mut it = std::env::args().skip(1);
    if let Some(t) = it.next() {
        args.trials = t.parse().expect("TRIALS is a number");
    }
    let protocols: Vec<String> = it.collect();
    if !protocols.is_empty() {
        args.protocols = protocols;
    }
    match calibrate(&args, |line| eprintln!("{line}")) {
        Ok(out) => {
            for f in &out.files {
                println!("{}", f.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(if e.is_usage() { 2 } else { 1 });
        }
    }
}
