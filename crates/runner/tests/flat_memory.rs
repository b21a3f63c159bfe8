//! A sweep's memory does not grow with its number of trials: it holds one window of cells
//! while they run and one cell while it summarizes, never every trial. Measured with a
//! counting allocator (heap bytes, not time): ten times the trials must not cost anywhere
//! near ten times the trial rows.
//!
//! Also: explore's memory estimate, made before anything is enumerated, is within 2× of the
//! peak it measures.
//!
//! The one test binary of this package outside `tests/it` (its own binary): it installs a
//! counting global allocator and reads the process's peak heap, which other tests running
//! beside it in the same process would move; its tests take turns ([`ONE_AT_A_TIME`]).

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

/// Each test holds it while it measures: two measurements at once would add up.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// explore's estimate against its measured peak, for a run whose held patterns dominate (a
/// family of 4096 patterns) and a smaller one of two protocols and sizes: the estimate may be
/// generous, never more than twice the peak, and never below half of it.
#[test]
fn the_explore_estimate_is_within_twice_the_measured_peak() {
    use election_runner::explore::{cells, estimate_bytes, explore, ExploreOptions};
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (protocols, nodes, seeds) in [
        (vec!["raft".to_string()], vec![4], 1),
        (vec!["bully".to_string(), "raft".to_string()], vec![3, 4], 2),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let opts = ExploreOptions {
            cells: cells(&protocols, &nodes, &[]).unwrap(),
            set: Vec::new(),
            seeds,
            sample: 4096,
            shard: None,
            out: dir.path().join("e"),
            resume: false,
            verify_sample: 0,
            progress: false,
            jobs: Some(1),
        };
        let estimate = estimate_bytes(&opts);
        explore(&opts).unwrap();
        let peak = (PEAK.load(Ordering::Relaxed) - base) as f64;
        let ratio = estimate as f64 / peak;
        eprintln!(
            "{protocols:?} n = {nodes:?}: estimate {estimate} B, peak {peak} B, ratio {ratio:.2}"
        );
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{protocols:?} n = {nodes:?}: estimate {estimate} B against a peak of {peak} B ({ratio:.2}x)"
        );
    }
}
