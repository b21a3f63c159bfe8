#!/usr/bin/env bash
# The default sweep's wall-clock time as a new user meets it: `election-bench sweep` (every
# trial, results/default, the charts and reports/default) run RUNS times, one after another, in a
# scratch directory holding copies of the companion results the report's guide reads
# (results/gray, results/explore, reports/reference), exactly as `.ci/run` regenerates them.
# Each run's wall-clock and CPU seconds go to target/perf/sweep.jsonl, which
# `cargo run --release --example perf-table` reads for issue #32's "default sweep under 45 s"
# row. Not a test: nothing here passes or fails.
#
#   benches/tools/time_sweep.sh            # 3 runs, about 2.5 minutes on 2 cores
#   RUNS=5 benches/tools/time_sweep.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
runs="${RUNS:-3}"
(cd "$root" && cargo build --quiet --release)
target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target_dir/release/election-bench"
out_dir="$target_dir/perf"
mkdir -p "$out_dir"
out="$out_dir/sweep.jsonl"
: >"$out"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cores="$(nproc)"
for i in $(seq "$runs"); do
    rm -rf "$scratch/run"
    mkdir -p "$scratch/run/results" "$scratch/run/reports"
    cp -r "$root/results/gray" "$root/results/explore" "$scratch/run/results/"
    cp -r "$root/reports/reference" "$scratch/run/reports/"
    # bash's `time`: wall, user and system seconds of the whole command.
    TIMEFORMAT='%R %U %S'
    { time (cd "$scratch/run" && "$bin" sweep --quiet >/dev/null); } 2>"$scratch/time"
    read -r wall user sys <"$scratch/time"
    trials="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trials"])' \
        "$scratch/run/results/default/manifest.json")"
    printf '{"run": %d, "wall_s": %s, "cpu_s": %s, "cores": %d, "trials": %s}\n' \
        "$i" "$wall" "$(python3 -c "print(round($user + $sys, 2))")" "$cores" "$trials" | tee -a "$out"
done
echo "wrote $out" >&2
