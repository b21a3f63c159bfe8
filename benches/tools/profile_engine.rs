//! The engine ping-pong of `benches/simulator.rs` (`engine/ping-pong/<n>`) as a plain program,
//! for instruction-count profiles (`valgrind --tool=callgrind`), which criterion's harness
//! makes hard to attribute per message:
//!
//! ```text
//! cargo build --release --example profile-engine
//! valgrind --tool=callgrind target/release/examples/profile-engine 2 10
//! ```
//!
//! Arguments: nodes (default 2) and repetitions (default 1); it prints the delivered messages,
//! so instructions per message = callgrind's total / delivered.

use election_sim::pingpong::bench_trial;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args
        .next()
        .map_or(2, |s| s.parse().expect("NODES: a number"));
    let reps: u32 = args
        .next()
        .map_or(1, |s| s.parse().expect("REPS: a number"));
    let mut delivered = 0;
    for _ in 0..reps {
        // Exactly the bench's trial.
        delivered += bench_trial(n);
    }
    println!("{delivered} messages delivered");
}
