#!/usr/bin/env python3
"""Where a sweep's work goes: its messages by protocol spec, by cluster size and by cell
(benches/README.md, "The default sweep, spec by spec").

    benches/tools/sweep_profile.py [RESULTS_DIR] [TOP]

Reads RESULTS_DIR/trials.csv.gz (or trials.csv; default results/default) and counts every
message a trial sent, the protocol's (`msgs_total`, heartbeats included) and the workload's
(`msgs_workload`). A trial's cost follows its messages (each is a queue push and pop, a
latency draw and a handler; benches/README.md's callgrind tables), so the shares say which
part of the sweep the wall clock goes to. Prints per spec: trials, messages, share and
messages per trial; then per cluster size; then the TOP (default 10) cells. Deterministic:
the committed results give the same table on any machine. Only the Python 3 standard library.
"""
import csv, gzip, io, os, sys
from collections import Counter

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else 'results/default'
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    gz = os.path.join(root, 'trials.csv.gz')
    plain = os.path.join(root, 'trials.csv')
    if os.path.exists(plain):
        f = open(plain, newline='')
    elif os.path.exists(gz):
        f = io.TextIOWrapper(gzip.open(gz), newline='')
    else:
        sys.exit(f'{root}: no trials.csv or trials.csv.gz')
    msgs, trials = Counter(), Counter()
    by_nodes, by_cell, cell_trials = Counter(), Counter(), Counter()
    order = []
    for row in csv.DictReader(f):
        m = int(row['msgs_total']) + int(row['msgs_workload'] or 0)
        spec = row['protocol']
        if spec not in trials:
            order.append(spec)
        msgs[spec] += m
        trials[spec] += 1
        by_nodes[int(row['nodes'])] += m
        cell = (spec, int(row['nodes']), row['scenario'], row['net'])
        by_cell[cell] += m
        cell_trials[cell] += 1
    total = sum(msgs.values())
    if total == 0:
        sys.exit(f'{root}: no messages')
    print(f'{sum(trials.values()):,} trials, {total:,} messages ({root})\n')
    print('| spec | trials | messages | share | messages per trial |')
    print('| --- | ---: | ---: | ---: | ---: |')
    for spec in order:
        print(f'| `{spec}` | {trials[spec]:,} | {msgs[spec] / 1e6:.1f} M | '
              f'{100 * msgs[spec] / total:.1f} % | {msgs[spec] / trials[spec]:,.0f} |')
    print('\n| nodes | messages | share |')
    print('| ---: | ---: | ---: |')
    for n in sorted(by_nodes):
        print(f'| {n} | {by_nodes[n] / 1e6:.1f} M | {100 * by_nodes[n] / total:.1f} % |')
    print(f'\nThe {top} costliest cells:\n')
    print('| spec | nodes | scenario | net | messages | share | messages per trial |')
    print('| --- | ---: | --- | --- | ---: | ---: | ---: |')
    for (spec, n, scenario, net), m in by_cell.most_common(top):
        t = cell_trials[(spec, n, scenario, net)]
        print(f'| `{spec}` | {n} | `{scenario}` | {net} | {m / 1e6:.1f} M | '
              f'{100 * m / total:.1f} % | {m / t:,.0f} |')

if __name__ == '__main__':
    main()
