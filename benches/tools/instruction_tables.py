#!/usr/bin/env python3
"""The instruction-count tables of benches/README.md ("Instructions per trial, component by
component"), generated: every trial of the `trial/*` and `raft-scaling/*` benches run once
under callgrind with ideal nodes, its instructions per message, its self cost sorted into
components (callgrind_components.py) for the five profiled trials, and, outside callgrind, the
median wall time of repetitions of the same trial.

    cargo build --release --example profile-trial
    benches/tools/instruction_tables.py            # prints both tables
    benches/tools/instruction_tables.py --write    # and writes them into benches/README.md

Needs valgrind and Python 3 (standard library only). About 2 minutes on 2 cores. Instruction
counts do not depend on the machine's load; the wall-time column does (the criterion table is
the measurement of time).
"""
import os, re, subprocess, sys, tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import callgrind_components as cc  # noqa: E402

EXE = os.path.join(ROOT, 'target/release/examples/profile-trial')
README = os.path.join(ROOT, 'benches/README.md')

# (protocol, nodes, scenario): the trials of every `trial/*` and `raft-scaling/*` bench.
TRIALS = [(p, n, 'leader-crash') for p in ('bully', 'ring', 'raft', 'lease') for n in (5, 25, 101)]
TRIALS += [('bully', n, 'leader-crash-lowest-detects') for n in (5, 25, 101)]
TRIALS += [('raft', n, 'leader-crash') for n in (251, 501, 1001)]
# The five trials whose components are shown, with ideal nodes and then with the default
# `server` nodes (what a sweep runs: node time on).
PROFILED = [('bully', 101, 'leader-crash-lowest-detects'), ('raft', 5, 'leader-crash'),
            ('raft', 101, 'leader-crash'), ('raft', 1001, 'leader-crash'),
            ('lease', 101, 'leader-crash')]
PROFILES = {'ideal': 'node.profile=ideal', 'server': 'node.profile=server'}
COLUMNS = ['queue', 'engine', 'random draws', 'protocol', 'observer', 'node time',
           'workload', 'trace plumbing', 'allocation']


def run(args):
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'{" ".join(args)}: exit {out.returncode}\n{out.stderr}')
    return out.stdout


def messages_of(stdout):
    m = re.match(r'(\d+) messages per trial, \d+ trial\(s\); median ([0-9.]+) ms', stdout)
    if not m:
        sys.exit(f'profile-trial printed {stdout!r}')
    return int(m.group(1)), float(m.group(2))


def profile(tmp, p, n, s, nodes='ideal'):
    out = os.path.join(tmp, f'{p}-{n}-{s}-{nodes}.out')
    stdout = run(['valgrind', '--tool=callgrind', '--toggle-collect=profile_trial::measured',
                  f'--callgrind-out-file={out}', EXE, p, str(n), s, '1', PROFILES[nodes]])
    msgs, _ = messages_of(stdout)
    cost = cc.parse(out)
    emap = cc.engine_map(cc.ENGINE)
    per = defaultdict(int)
    for (fi, fn, ln), c in cost.items():
        per[cc.classify(fi, fn, ln, emap)] += c
    return msgs, sum(cost.values()), per


def wall(p, n, s, msgs):
    reps = 200 if msgs < 2_000 else 50 if msgs < 20_000 else 10
    _, median_ms = messages_of(run([EXE, p, str(n), s, str(reps), PROFILES['ideal']]))
    return median_ms


def fmt_time(ms):
    return f'{ms * 1000:.0f} µs' if ms < 1 else f'{ms:.2f} ms'


def fmt_count(x):
    return f'{x / 1e6:.1f} M' if x >= 1e6 else f'{x / 1e3:.0f} k'


def name(p, n, s, nodes=None):
    return f'{p} `{s}`, n = {n}' + (f', {nodes} nodes' if nodes else '')


def tables():
    if not os.path.exists(EXE):
        sys.exit(f'{EXE} is missing: cargo build --release --example profile-trial')
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in TRIALS:
            results[t, 'ideal'] = profile(tmp, *t)
            print(f'{name(*t)}: {results[t, "ideal"][1]:,} instructions', file=sys.stderr)
        for t in PROFILED:
            results[t, 'server'] = profile(tmp, *t, 'server')
    comp = ['| trial (seed 1) | messages | instructions (per message) | '
            + ' | '.join(COLUMNS) + ' | rest |',
            '|---|---:|---:|' + '---:|' * (len(COLUMNS) + 1)]
    for nodes in PROFILES:
        for t in PROFILED:
            comp.append(component_row(t, nodes, *results[t, nodes]))
    per_msg = ['| trial (seed 1, ideal nodes) | messages | instructions per message | '
               'median wall time | messages/s at that median |',
               '|---|---:|---:|---:|---:|']
    for t in TRIALS:
        msgs, total, _ = results[t, 'ideal']
        ms = wall(*t, msgs)
        per_msg.append(f'| {name(*t)} | {msgs:,} | {total / msgs:,.0f} | {fmt_time(ms)} | '
                       f'{msgs / ms / 1e3:.2f} M/s |')
    return '\n'.join(comp), '\n'.join(per_msg)


def component_row(t, nodes, msgs, total, per):
    """One row of the component table: trial `t` with `nodes` nodes."""
    shares = [100 * per.get(c, 0) / total for c in COLUMNS]
    rest = 100 - sum(shares)
    return (f'| {name(*t, nodes)} | {msgs:,} | {fmt_count(total)} ({total / msgs:,.0f}) | '
            + ' | '.join(f'{x:.1f} %' for x in shares) + f' | {rest:.1f} % |')


def replace(text, marker, body):
    start, end = f'<!-- {marker} -->', f'<!-- /{marker} -->'
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        sys.exit(f'{README}: no {start} ... {end} block')
    return text[:i + len(start)] + '\n' + body + '\n' + text[j:]


def main():
    comp, per_msg = tables()
    print(comp + '\n\n' + per_msg)
    if '--write' in sys.argv[1:]:
        text = open(README).read()
        text = replace(text, 'instructions:components', comp)
        text = replace(text, 'instructions:per-message', per_msg)
        tmp = README + '.tmp'
        with open(tmp, 'w') as f:
            f.write(text)
        os.replace(tmp, README)
        print(f'wrote both tables into {README}', file=sys.stderr)


if __name__ == '__main__':
    main()
