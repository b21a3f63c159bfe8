#!/usr/bin/env bash
# Peer comparison: election-bench's simulator against other simulators running the same workload.
#
# simpy: the bully `leader-crash` scenario (runner defaults: `lan` profile, 50 ms heartbeats,
#   suspicion after 150-300 ms, t_elec 20 ms, fault at ~1 s, 600 ms settle window) at each
#   cluster size, first through election-bench (`cargo run --release --example peer-bully`), then
#   through benches/peers/bully_simpy.py with the parameters the Rust side printed.
# turmoil: the `raftrs` family's `leader-crash` (raft-rs 0.7) at each size in TURMOIL_NODES,
#   first through election-bench (`cargo run --release --example peer-raftrs`), then through
#   benches/peers/turmoil (its own crate: raft-rs on tokio hosts in turmoil's simulated network)
#   with the parameters the Rust side printed.
#
# Both sides run one trial after another on one core, and the script prints simulated messages
# per wall-clock second for both and their ratio. The rows are kept in
# target/peers/compare.jsonl (rows of a peer not run this time are kept from the last run), which
# `cargo run --release --example perf-table` reads.
#
#   benches/peers/compare.sh                  # both peers: SimPy at n = 5 25 101, turmoil at 5 25
#   PEERS=turmoil benches/peers/compare.sh    # only the turmoil peer: no SimPy, no venv
#   NODES="5 101" SECONDS_PER_RUN=3 benches/peers/compare.sh
#
# The SimPy peer needs python3 (3.8+) with venv and network access to PyPI the first time: SimPy
# is installed into benches/peers/.venv (gitignored). The turmoil peer needs cargo (and the
# crates registry the first time) and python3 for the JSON. Not run in CI.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
peers="${PEERS:-simpy turmoil}"
nodes="${NODES:-5 25 101}"
turmoil_nodes="${TURMOIL_NODES:-5 25}"
secs="${SECONDS_PER_RUN:-2}"     # each side runs trials for about this long per size
simpy_trials="${SIMPY_TRIALS:-}" # SimPy trials per size (default: about SECONDS_PER_RUN of work)
venv="$here/.venv"
py=python3

want() { [[ " $peers " == *" $1 "* ]]; }
for p in $peers; do
    [[ "$p" == simpy || "$p" == turmoil ]] || { echo "PEERS: unknown peer '$p' (simpy, turmoil)" >&2; exit 2; }
done

if want simpy; then
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "creating $venv and installing simpy" >&2
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import simpy' 2>/dev/null; then
        "$venv/bin/pip" install --quiet 'simpy>=4,<5'
    fi
    py="$venv/bin/python"
fi
if ! command -v cargo >/dev/null; then
    # Both comparisons build election-bench's side with cargo.
    echo "cargo not found: it builds election-bench's side of every comparison" >&2
    exit 1
fi

target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    "$py" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
json_field() { "$py" -c "import json,sys; v = json.load(sys.stdin)[\"$1\"]; print(\"\n\".join(v) if isinstance(v, list) else v)"; }

results="$(mktemp)"
trap 'rm -f "$results"' EXIT

if want simpy; then
    echo "building the Rust side (cargo build --release --example peer-bully)" >&2
    (cd "$root" && cargo build --quiet --release --example peer-bully)
    rust_bin="$target_dir/release/examples/peer-bully"
    for n in $nodes; do
        echo "n = $n: election-bench (at least $secs s)" >&2
        rust_json="$("$rust_bin" "$n" 10 "$secs")"
        echo "$rust_json" >>"$results"
        # The SimPy model gets exactly the workload parameters the Rust side reports.
        mapfile -t args < <(echo "$rust_json" | json_field simpy_args)
        st="$simpy_trials"
        if [[ -z "$st" ]]; then
            # About SECONDS_PER_RUN of tutorial-style SimPy work, at ~40k messages per second.
            per_trial="$(echo "$rust_json" | json_field messages_per_trial)"
            st="$("$py" -c "print(max(5, int(40000 * $secs / $per_trial)))")"
        fi
        for style in tutorial lean; do
            echo "n = $n: SimPy, $style style ($st trials)" >&2
            "$py" "$here/bully_simpy.py" "${args[@]}" --trials "$st" --style "$style" >>"$results"
        done
    done
fi

if want turmoil; then
    echo "building the Rust side (cargo build --release --example peer-raftrs)" >&2
    (cd "$root" && cargo build --quiet --release --example peer-raftrs)
    echo "building the turmoil peer (cargo build --release in benches/peers/turmoil)" >&2
    (cd "$here/turmoil" && cargo build --quiet --release --locked)
    turmoil_target="$(cd "$here/turmoil" && cargo metadata --format-version 1 --no-deps |
        "$py" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    raftrs_bin="$target_dir/release/examples/peer-raftrs"
    turmoil_bin="$turmoil_target/release/turmoil-peer"
    for n in $turmoil_nodes; do
        echo "n = $n: election-bench raftrs (at least $secs s)" >&2
        rust_json="$("$raftrs_bin" "$n" 10 "$secs")"
        echo "$rust_json" >>"$results"
        # The turmoil peer gets exactly the workload parameters the Rust side reports.
        mapfile -t args < <(echo "$rust_json" | json_field turmoil_args)
        echo "n = $n: turmoil (at least $secs s)" >&2
        "$turmoil_bin" "$n" 5 "$secs" "${args[@]}" >>"$results"
    done
fi

# Keep the rows for the performance tables (`cargo run --release --example perf-table`): this
# run's rows replace the last run's rows of the same peers; the other peer's rows stay.
mkdir -p "$target_dir/peers"
"$py" - "$results" "$target_dir/peers/compare.jsonl" "$peers" <<'EOF'
import datetime, json, os, sys
new_path, keep_path, peers = sys.argv[1], sys.argv[2], sys.argv[3].split()
family = {"simpy": {"election-bench", "simpy-tutorial", "simpy-lean"},
          "turmoil": {"election-bench-raftrs", "turmoil"}}
rerun = set().union(*(family[p] for p in peers)) if peers else set()
old = []
if os.path.exists(keep_path):
    old = [l for l in open(keep_path) if l.strip() and json.loads(l)["model"] not in rerun]
# Each new row names the day it was measured (perf-table prints it).
day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
new = [json.dumps({**json.loads(l), "date": day}) + "\n" for l in open(new_path) if l.strip()]
with open(keep_path, "w") as f:
    f.writelines(old + new)
EOF
echo "rows saved to $target_dir/peers/compare.jsonl" >&2

"$py" - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by_n = {}
for r in rows:
    by_n.setdefault(r["n"], {})[r["model"]] = r
simpy = {n: r for n, r in by_n.items() if "simpy-tutorial" in r}
if simpy:
    print()
    print("bully leader-crash, simulated messages per wall-clock second (one core)")
    print(f'{"n":>5} | {"msgs/trial rust":>15} | {"msgs/trial simpy":>16} | {"election-bench":>14} | {"SimPy tutorial":>14} | {"SimPy lean":>11} | {"ratio (tutorial)":>16} | {"ratio (lean)":>12}')
    print("-" * 130)
    for n in sorted(simpy):
        r = simpy[n]
        rust, tut, lean = r["election-bench"], r["simpy-tutorial"], r["simpy-lean"]
        print(f'{n:>5} | {rust["messages_per_trial"]:>15.0f} | {tut["messages_per_trial"]:>16.0f} | '
              f'{rust["msgs_per_s"]:>14,.0f} | {tut["msgs_per_s"]:>14,.0f} | {lean["msgs_per_s"]:>11,.0f} | '
              f'{rust["msgs_per_s"] / tut["msgs_per_s"]:>15,.0f}x | {rust["msgs_per_s"] / lean["msgs_per_s"]:>11,.0f}x')
    any_row = next(iter(simpy.values()))["simpy-tutorial"]
    print(f'\nSimPy {any_row["simpy"]} on Python {any_row["python"]}; target: election-bench >= 50x the lean style')
turmoil = {n: r for n, r in by_n.items() if "turmoil" in r and "election-bench-raftrs" in r}
if turmoil:
    print()
    print("raftrs (raft-rs 0.7) leader-crash, simulated messages and trials per wall-clock second (one core)")
    print(f'{"n":>5} | {"msgs/trial eb":>13} | {"msgs/trial turmoil":>18} | {"election-bench raftrs":>21} | {"turmoil":>10} | {"ratio":>7} | {"trials/s eb":>11} | {"trials/s turmoil":>16} | {"converged eb / turmoil":>22}')
    print("-" * 150)
    for n in sorted(turmoil):
        eb, tu = turmoil[n]["election-bench-raftrs"], turmoil[n]["turmoil"]
        print(f'{n:>5} | {eb["messages_per_trial"]:>13.0f} | {tu["messages_per_trial"]:>18.0f} | '
              f'{eb["msgs_per_s"]:>21,.0f} | {tu["msgs_per_s"]:>10,.0f} | {eb["msgs_per_s"] / tu["msgs_per_s"]:>6,.0f}x | '
              f'{eb["trials_per_s"]:>11,.1f} | {tu["trials_per_s"]:>16,.2f} | '
              f'{str(eb["converged"]) + "/" + str(eb["trials"]) + " / " + str(tu["converged"]) + "/" + str(tu["trials"]):>22}')
    any_row = next(iter(turmoil.values()))["turmoil"]
    tp = any_row["params"]
    print(f'\nturmoil {any_row["turmoil"]} ({tp["turmoil_tick_us"]:.0f} us steps, {tp["latency_us"]:.0f} us latency); both sides raft-rs 0.7')
EOF
