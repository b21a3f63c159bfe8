#!/usr/bin/env bash
# Sharding on a real Slurm (issue #49): start a one-machine Slurm — munged, slurmctld and
# slurmd from Debian's `slurm-wlm` and `munge`, configured in a scratch directory — submit a
# sweep, an exploration and a tuning as job arrays whose tasks run `--shard auto` (each task
# reads SLURM_ARRAY_TASK_ID / _MIN / _STEP / _COUNT), join each set of shards with `merge`, and
# check that every merged file is byte for byte what the same command writes unsharded.
# Every daemon it starts is stopped by its PID on exit; nothing outside the scratch directory is
# written.
#
#   benches/tools/slurm_shards.sh              # about 40 s on 2 cores (after the build)
#   SHARDS=8 benches/tools/slurm_shards.sh
#
# Needs root (the daemons run as root here) and `apt-get install slurm-wlm munge`; the script
# installs them when they are missing. `.ci/run` runs it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
shards="${SHARDS:-4}"

if [ "$(id -u)" != 0 ]; then
    echo "slurm_shards.sh runs slurmctld, slurmd and munged as root: run it as root" >&2
    exit 2
fi
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1 ||
    ! command -v python3 >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge python3 >/dev/null
fi
(cd "$root" && cargo build --quiet --release)
bin="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/election-bench"

scratch="$(mktemp -d)"
pids=()
jobs=()
cleanup() {
    # Tasks still running (a failure above) are cancelled before their daemons stop.
    if [ "${#jobs[@]}" -gt 0 ]; then
        scancel "${jobs[@]}" 2>/dev/null || true
        sleep 1
    fi
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$p" 2>/dev/null || true
    done
    rm -rf "$scratch"
}
trap cleanup EXIT

# munge: its own key, socket and files in the scratch directory.
mkdir -p "$scratch/munge"
dd if=/dev/urandom of="$scratch/munge/munge.key" bs=1024 count=1 status=none
chmod 755 "$scratch/munge"
chmod 400 "$scratch/munge/munge.key"
socket="$scratch/munge/munge.socket"
munged --force --foreground --socket="$socket" --key-file="$scratch/munge/munge.key" \
    --log-file="$scratch/munge/munged.log" --pid-file="$scratch/munge/munged.pid" \
    --seed-file="$scratch/munge/munged.seed" &
pids+=($!)

# slurm: one node, this machine, with its cores; ports chosen free.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host="$(hostname -s)"
cores="$(nproc)"
mkdir -p "$scratch/slurm/state" "$scratch/slurm/spool" "$scratch/jobs"
conf="$scratch/slurm/slurm.conf"
cat >"$conf" <<EOF
ClusterName=election-bench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$socket
CryptoType=crypto/munge
StateSaveLocation=$scratch/slurm/state
SlurmdSpoolDir=$scratch/slurm/spool
SlurmctldPidFile=$scratch/slurm/slurmctld.pid
SlurmdPidFile=$scratch/slurm/slurmd.pid
SlurmctldLogFile=$scratch/slurm/slurmctld.log
SlurmdLogFile=$scratch/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cores State=UNKNOWN
PartitionName=all Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"
slurmctld -D -i -f "$conf" >"$scratch/slurm/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$conf" -N "$host" >"$scratch/slurm/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    if [[ "$(sinfo -h -o '%T' 2>/dev/null || true)" =~ ^(idle|mixed|allocated)$ ]]; then
        break
    fi
    sleep 0.2
done
if ! [[ "$(sinfo -h -o '%T' 2>/dev/null || true)" =~ ^(idle|mixed|allocated)$ ]]; then
    echo "slurm did not come up:" >&2
    tail -20 "$scratch/slurm/slurmctld.log" "$scratch/slurm/slurmd.log" >&2 || true
    exit 1
fi
echo "slurm $(sinfo -V | cut -d' ' -f2) up: node $host, $cores CPUs, munge at $socket"

# The work: each command's shards go to shards/<command>/<task id>, merged into OUT; the same
# command unsharded writes OUT in another directory, and the two OUTs must be the same bytes.
work="$scratch/work"
mkdir -p "$work"
sweep_args=(sweep --name slurm --nodes 3,5,7 --seeds 20 --no-report --out sweep)
explore_args=(explore --nodes 3,4 --seeds 2 --no-report --out explore)
# (tune shards by protocol: at most one task per protocol.)
tune_args=(tune --protocols raft,lease,bully,ring --nodes 3 --hours 1 --max-hours 2 --crash-trials 50 --rounds 1 --disk-hours 0 --out tune)

# One job array per command, `shards` tasks of one CPU each; wait for all of them.
submit() { # submit NAME TASKS ARGS...: an array whose tasks run `election-bench ARGS --shard auto`
    local name="$1" tasks="$2"
    shift 2
    # ARGS end with `--out OUT`; each task writes its shard to shards/NAME/<task id> instead,
    # and its exit status to jobs/NAME-<task id>.rc.
    local args=("${@:1:$#-2}")
    sbatch --parsable --array="0-$((tasks - 1))" --cpus-per-task=1 --job-name="$name" \
        --chdir="$work" --output="$scratch/jobs/$name-%a.out" \
        --wrap="'$bin' ${args[*]} --shard auto --jobs 1 --quiet --out shards/$name/\$SLURM_ARRAY_TASK_ID; echo \$? > '$scratch/jobs/$name-'\$SLURM_ARRAY_TASK_ID.rc"
}
started=$(date +%s)
tune_tasks=$((shards < 4 ? shards : 4))
jobs+=("$(submit sweep "$shards" "${sweep_args[@]}")")
jobs+=("$(submit explore "$shards" "${explore_args[@]}")")
jobs+=("$(submit tune "$tune_tasks" "${tune_args[@]}")")
echo "submitted job arrays ${jobs[*]} ($shards tasks each)"
# Until squeue (answering) lists none of them; at most 15 minutes.
for _ in $(seq 900); do
    if queued="$(squeue -h -j "$(IFS=,; echo "${jobs[*]}")" 2>/dev/null)" && [ -z "$queued" ]; then
        break
    fi
    sleep 1
done
echo "every task finished in $(($(date +%s) - started)) s"
failed=0
for name in sweep explore tune; do
    want=$shards
    [ "$name" = tune ] && want=$tune_tasks
    for id in $(seq 0 $((want - 1))); do
        rc="$(cat "$scratch/jobs/$name-$id.rc" 2>/dev/null || echo "none")"
        if [ "$rc" != 0 ]; then
            echo "--- $name task $id: exit $rc" >&2
            cat "$scratch/jobs/$name-$id.out" >&2 || true
            failed=1
        fi
    done
done
if [ "$failed" = 1 ]; then
    echo "a task failed or did not run (its output is above)" >&2
    exit 1
fi
cat "$scratch"/jobs/*.out

# Join, then run each command unsharded into another directory and compare byte for byte.
for name in sweep explore tune; do
    (cd "$work" && "$bin" merge --out "$name" --quiet "shards/$name")
done
one="$scratch/one"
mkdir -p "$one"
for args in sweep_args explore_args tune_args; do
    declare -n a="$args"
    (cd "$one" && "$bin" "${a[@]}" --quiet)
done
status=0
for name in sweep explore tune; do
    if diff -r -q -x chunks "$work/$name" "$one/$name"; then
        echo "$name: the merge of $shards Slurm array tasks = the unsharded run, byte for byte ($(find "$one/$name" -type f | wc -l) files)"
    else
        status=1
    fi
done
exit "$status"
