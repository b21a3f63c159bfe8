//! A sweep's memory does not grow with its number of trials: it holds one window of cells
//! while they run and one cell while it summarizes, never every trial. Measured with a
//! counting allocator (heap bytes, not time): ten times the trials must not cost anywhere
//! near ten times the trial rows.
//!
//! The one test of this package outside `tests/it` (its own binary): it installs a counting
//! global allocator and reads the process's peak heap, which other tests running beside it in
//! the same process would move.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use election_runner::{run_sweep, SweepOptions, SweepSpec};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak heap growth (bytes) of a one-thread sweep of `cells` cells of `seeds` seeds each.
fn peak_of_sweep(cells: u32, seeds: u64) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let at: Vec<String> = (0..cells).map(|i| (1000 + i).to_string()).collect();
    let toml = format!(
        "protocols = [\"bully\"]\nnodes = [3]\nscenarios = [\"leader-crash\"]\nseeds = {seeds}\n\
         [params]\nfault_at_ms = [{}]\n",
        at.join(", ")
    );
    let plan = SweepSpec::from_toml(&toml).unwrap().plan().unwrap();
    let opts = SweepOptions {
        out: dir.path().join("r"),
        jobs: Some(1),
        shard: None,
        shard_by: Default::default(),
        resume: false,
        verify_sample: election_runner::sweep::RESUME_SAMPLE,
        force: false,
        progress: false,
        command: "test".into(),
    };
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let o = run_sweep(&plan, &opts).unwrap();
    assert_eq!(o.trials, cells as u64 * seeds);
    PEAK.load(Ordering::Relaxed) - base
}

#[test]
fn sweep_memory_is_flat_in_the_number_of_trials() {
    // Same cell size, 10x the cells: 300 vs 3000 trials. Holding every row until the end
    // (as sweeps once did, about 1.4 KB a trial) would add about 3.8 MB.
    let small = peak_of_sweep(6, 50);
    let large = peak_of_sweep(60, 50);
    let per_extra_trial = large.saturating_sub(small) as f64 / 2700.0;
    eprintln!("peak heap: {small} B for 300 trials, {large} B for 3000 ({per_extra_trial:.0} B per extra trial)");
    assert!(
        per_extra_trial < 200.0,
        "peak heap grew by {per_extra_trial:.0} B per extra trial ({small} B -> {large} B)"
    );
}
