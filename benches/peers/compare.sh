#!/usr/bin/env bash
# Peer comparison: election-bench's simulator against a SimPy model of the same workload.
#
# Runs the bully `leader-crash` scenario (runner defaults: `lan` profile, 50 ms heartbeats,
# suspicion after 150-300 ms, t_elec 20 ms, fault at ~1 s, 600 ms settle window) at each
# cluster size, first through election-bench (`cargo run --release --example peer-bully`), then
# through benches/peers/bully_simpy.py with the parameters the Rust side printed, and prints
# simulated messages per wall-clock second for both and their ratio. Both sides run one trial
# after another on one core. The rows are kept in target/peers/compare.jsonl, which
# `cargo run --release --example perf-table` reads.
#
#   benches/peers/compare.sh                  # n = 5 25 101
#   NODES="5 101" SECONDS_PER_RUN=3 benches/peers/compare.sh
#
# Needs python3 (3.8+) with venv and network access to PyPI the first time: SimPy is installed
# into benches/peers/.venv (gitignored). Not run in CI.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nodes="${NODES:-5 25 101}"
secs="${SECONDS_PER_RUN:-2}"     # each side runs trials for about this long per size
simpy_trials="${SIMPY_TRIALS:-}" # SimPy trials per size (default: about SECONDS_PER_RUN of work)
venv="$here/.venv"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "creating $venv and installing simpy" >&2
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import simpy' 2>/dev/null; then
    "$venv/bin/pip" install --quiet 'simpy>=4,<5'
fi

echo "building the Rust side (cargo build --release --example peer-bully)" >&2
(cd "$root" && cargo build --quiet --release --example peer-bully)
target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
rust_bin="$target_dir/release/examples/peer-bully"

results="$(mktemp)"
trap 'rm -f "$results"' EXIT

for n in $nodes; do
    echo "n = $n: election-bench (at least $secs s)" >&2
    rust_json="$("$rust_bin" "$n" 10 "$secs")"
    echo "$rust_json" >>"$results"
    # The SimPy model gets exactly the workload parameters the Rust side reports.
    mapfile -t args < <(echo "$rust_json" | "$venv/bin/python" -c 'import json,sys; print("\n".join(json.load(sys.stdin)["simpy_args"]))')
    st="$simpy_trials"
    if [[ -z "$st" ]]; then
        # About SECONDS_PER_RUN of tutorial-style SimPy work, at ~40k messages per second.
        per_trial="$(echo "$rust_json" | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["messages_per_trial"])')"
        st="$("$venv/bin/python" -c "print(max(5, int(40000 * $secs / $per_trial)))")"
    fi
    for style in tutorial lean; do
        echo "n = $n: SimPy, $style style ($st trials)" >&2
        "$venv/bin/python" "$here/bully_simpy.py" "${args[@]}" --trials "$st" --style "$style" >>"$results"
    done
done

# Keep the rows for the performance tables (`cargo run --release --example perf-table`).
mkdir -p "$target_dir/peers"
cp "$results" "$target_dir/peers/compare.jsonl"
echo "rows saved to $target_dir/peers/compare.jsonl" >&2

"$venv/bin/python" - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by_n = {}
for r in rows:
    by_n.setdefault(r["n"], {})[r["model"]] = r
print()
print("bully leader-crash, simulated messages per wall-clock second (one core)")
print(f'{"n":>5} | {"msgs/trial rust":>15} | {"msgs/trial simpy":>16} | {"election-bench":>14} | {"SimPy tutorial":>14} | {"SimPy lean":>11} | {"ratio (tutorial)":>16} | {"ratio (lean)":>12}')
print("-" * 130)
for n in sorted(by_n):
    r = by_n[n]
    rust, tut, lean = r["election-bench"], r["simpy-tutorial"], r["simpy-lean"]
    print(f'{n:>5} | {rust["messages_per_trial"]:>15.0f} | {tut["messages_per_trial"]:>16.0f} | '
          f'{rust["msgs_per_s"]:>14,.0f} | {tut["msgs_per_s"]:>14,.0f} | {lean["msgs_per_s"]:>11,.0f} | '
          f'{rust["msgs_per_s"] / tut["msgs_per_s"]:>15,.0f}x | {rust["msgs_per_s"] / lean["msgs_per_s"]:>11,.0f}x')
any_row = next(iter(by_n.values()))["simpy-tutorial"]
print(f'\nSimPy {any_row["simpy"]} on Python {any_row["python"]}; target: election-bench >= 50x the lean style')
EOF
