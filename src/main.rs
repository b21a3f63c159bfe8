//! `election-bench`: the command-line front door of the workbench.
fn main() {
    println!("election-bench: the runner lands in its own issue");
}
