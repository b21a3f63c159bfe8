#!/usr/bin/env python3
"""A callgrind profile of one trial, its self cost sorted into components (benches/README.md,
"Instructions per trial, component by component").

    benches/tools/callgrind_components.py callgrind.out [COMPONENT]

Each cost line of the profile is (source file, enclosing symbol, line). Inlined code counts
where its source is (a std helper inlined into BinaryHeap::pop is the queue's); lines of
crates/sim/src/engine.rs count by the engine function or block that holds them (node time,
workload, the rest of the engine), lines of crates/sim/src/observer.rs by theirs (`record` is
trace plumbing). Prints each component's instructions and share of the total; with COMPONENT,
also the 15 (file, symbol) pairs that cost it most. Only the Python 3 standard library.
"""
import os, re, sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def parse(path):
    names = {'fl': {}, 'fn': {}}
    cost = defaultdict(int)
    fl = fi = fn = None
    last = 0
    skip_next = False
    for raw in open(path):
        line = raw.rstrip('\n')
        if not line:
            continue
        m = re.match(r'^(fl|fi|fe|fn|cfl|cfi|cfn|ob|cob)=(?:\((\d+)\))?\s*(.*)$', line)
        if m:
            kind, ident, name = m.groups()
            table = 'fn' if kind in ('fn', 'cfn') else ('fl' if kind in ('fl', 'fi', 'fe', 'cfl', 'cfi') else None)
            if table:
                if ident is not None:
                    if name:
                        names[table][ident] = name
                    name = names[table].get(ident, name)
            if kind == 'fl':
                fl = fi = name
            elif kind in ('fi', 'fe'):
                fi = name
            elif kind == 'fn':
                fn = name
                fi = fl
            continue
        if line.startswith('calls='):
            skip_next = True
            continue
        if line[0] in '0123456789+-*':
            parts = line.split()
            pos = parts[0]
            if pos.startswith('+'):
                ln = last + int(pos[1:])
            elif pos.startswith('-'):
                ln = last - int(pos[1:])
            elif pos == '*':
                ln = last
            else:
                ln = int(pos)
            last = ln
            if skip_next:
                skip_next = False
                continue
            if len(parts) > 1:
                cost[(fi, fn, ln)] += int(parts[1])
    return cost

ENGINE = os.path.join(ROOT, 'crates/sim/src/engine.rs')

def engine_map(src):
    """Line -> engine component, from the source's function spans and a few marked blocks."""
    lines = open(src).read().split('\n')
    comp = {}
    cur = 'engine'
    node_fns = {'local', 'timer_instant', 'drain_inbox', 'slowed'}
    work_fns = {'write', 'workload_delivery', 'leads'}
    block = None
    for i, t in enumerate(lines, 1):
        m = re.match(r'    (?:pub(?:\(crate\))? )?fn (\w+)', t)
        if m:
            name = m.group(1)
            cur = 'node time' if name in node_fns else ('workload' if name in work_fns else 'engine')
            block = None
        # Marked blocks inside shared functions.
        if 'Event::WorkloadStart =>' in t or 'Event::Write { node, generation } =>' in t \
           or 'Event::WriteArrive(tag) =>' in t or 'Event::AckRequest { write, to } =>' in t \
           or 'Event::Ack { write, from } =>' in t or 'if self.workload_started {' in t:
            block = ('workload', t.index(t.lstrip()[0]))
        elif 'Event::NodeFree(node) =>' in t or 'if let Some(cpu) = &self.cpu' in t \
             or 'let idle = work == Work::Timer' in t or 'if let (false, Some(cpu)) = (idle, &self.cpu)' in t \
             or 'if st.proto.is_some() && (st.paused || st.busy_until > now' in t \
             or 'Event::Resume { node, pause } =>' in t:
            block = ('node time', t.index(t.lstrip()[0]))
        elif block and t.strip() and (len(t) - len(t.lstrip())) <= block[1] and not t.lstrip().startswith(('}', ')', '.', '&&', '|')):
            if not ('if st.proto.is_some()' in lines[i-2] ):
                block = None
        comp[i] = block[0] if block else cur
    return comp

def classify(fi, fn, ln, emap):
    f = fi or ''
    g = fn or ''
    if re.search(r'malloc|\bfree\b|cfree|realloc|memalign|__rust_alloc|__rust_dealloc|__rust_realloc|__rdl_|raw_vec::finish_grow|RawVec.*grow|do_reserve_and_handle', g):
        return 'allocation'
    if 'crates/sim/src/queue.rs' in f or 'binary_heap' in f or 'BinaryHeap' in g or 'EventQueue' in g:
        return 'queue'
    # A sort not inlined into its caller: on a trial's path, the calendar queue's bucket sorts,
    # and the bully's sort of its election candidates (about 1 % of a bully n = 101 trial,
    # counted here too: this per-line profile does not follow calls).
    if g.startswith('core::slice::sort::'):
        return 'queue'
    # glibc's memcpy/memset (under sysdeps/, which the next rule would take for libm): the
    # engine moving events and action buffers.
    if re.search(r'memcpy|memmove|memset', g):
        return 'engine'
    if re.search(r'crates/(bully|ring|raft|lease|raftrs|omnipaxos)/', f):
        return 'protocol'
    if re.search(r'rand_chacha|rand_core|rand_distr|/rand-|e_exp|w_exp|e_log|sysdeps|crates/sim/src/config.rs', f) or re.search(r'Normal|LogNormal|sample_ns|chacha|^exp|__ieee754|^log', g):
        return 'random draws'
    if f.endswith('crates/sim/src/observer.rs'):
        return OMAP.get(ln, 'observer')
    if 'crates/sim/src/observer' in f:
        return 'observer'
    if 'crates/sim/src/workload' in f:
        return 'workload'
    if f.endswith('crates/sim/src/engine.rs'):
        return emap.get(ln, 'engine')
    if 'crates/sim/src/' in f or 'crates/core/' in f:
        return 'engine'
    if re.search(r'election_(bully|ring|raft|lease)::', g) and 'Sim<' not in g:
        return 'protocol'
    if 'Observer' in g:
        return 'observer'
    if 'crates/runner' in f or 'election_runner' in g:
        return 'runner (setup, metrics row)'
    if 'Sim<' in g or 'election_sim' in g:
        return 'engine'
    return 'other'

def observer_map(src):
    lines = open(src).read().split('\n')
    comp = {}
    cur = 'observer'
    for i, t in enumerate(lines, 1):
        m = re.match(r'    (?:pub(?:\(crate\))? )?fn (\w+)', t)
        if m:
            cur = 'trace plumbing' if m.group(1) in ('record', 'stream_trace') else 'observer'
        comp[i] = cur
    return comp

OMAP = observer_map(os.path.join(ROOT, 'crates/sim/src/observer.rs'))

def main():
    cost = parse(sys.argv[1])
    emap = engine_map(ENGINE)
    total = sum(cost.values())
    per = defaultdict(int)
    other = defaultdict(int)
    for (fi, fn, ln), c in cost.items():
        k = classify(fi, fn, ln, emap)
        per[k] += c
        if len(sys.argv) > 2 and k == sys.argv[2]:
            other[(fi, fn)] += c
    print(f'total {total:,}')
    for k, v in sorted(per.items(), key=lambda x: -x[1]):
        print(f'{k:32s} {v:>13,} {100*v/total:5.1f} %')
    for (fi, fn), c in sorted(other.items(), key=lambda x: -x[1])[:15]:
        print(f'   {c:>12,} {str(fi)[-45:]} :: {str(fn)[:80]}')

if __name__ == '__main__':
    main()
