#!/usr/bin/env python3
"""The bully `leader-crash` workload as a SimPy model: the peer election-bench is measured against.

This is the kind of simulation the SimPy tutorials for the bully algorithm build, written
with care but in the library's usual style:

* every node is a SimPy process blocked on its own `simpy.Store` inbox;
* every message in flight is its own process (`yield env.timeout(latency)`, then `put`);
* every timer is a process that sleeps and then posts a timer event to the inbox, a
  per-(node, timer) generation counter voiding timers that were re-armed or cancelled.

The protocol is the workbench's bully with its default options (crates/bully: eager rejoin,
no quorum, no epoch), the same timing (heartbeat 50 ms, suspicion after 150-300 ms,
t_elec 20 ms, t_coord 40 ms) and the same trial shape as the simulator: all nodes boot at 0 in
id order, the leader crashes at `--fault-ms` + U[0, `--fault-jitter-ms`], and the trial ends
once one leader has been agreed by every live node for `--settle-ms` after the crash (or at
`--horizon-ms`). The defaults are the runner's: the `lan` profile (log-normal latency, median
0.25 ms, sigma 0.3), fault at 1000 + U[0, 50] ms, settle 600 ms, horizon 20 s.

`--style lean` replaces the per-message and per-timer processes with plain timeout events and
callbacks, the fastest way to use SimPy's event queue short of leaving it; it is reported too
so the ratio is not only against the tutorial idiom.

Prints one JSON object: trials, messages sent, events, wall seconds, messages per second.
"""

import argparse
import json
import math
import random
import sys
import time

import simpy

ELECTION, OK, COORDINATOR, HEARTBEAT = "ELECTION", "OK", "COORDINATOR", "HEARTBEAT"
DETECT, ELECT, COORD, HB = 0, 1, 2, 3
FOLLOWER, ELECTING, WAITING, LEADER = "follower", "electing", "waiting", "leader"


class Net:
    """The network and the observer: latency, crash state, message counts, agreement."""

    def __init__(self, env, args, rng):
        self.env = env
        self.args = args
        self.rng = rng
        self.nodes = []
        self.sent = 0
        self.delivered = 0
        self.agreed = None
        self.agreed_since = 0.0
        self.fault_done = False
        self.fault_at = args.fault_ms
        self.lat_const = args.latency_ms if args.latency == "constant" else None
        self.mu = math.log(args.median_ms) if args.latency == "lognormal" else 0.0

    def latency(self):
        if self.lat_const is not None:
            return self.lat_const
        return self.rng.lognormvariate(self.mu, self.args.sigma)

    def send(self, src, dst, kind):
        self.sent += 1
        lat = self.latency()
        if self.args.style == "tutorial":
            self.env.process(self._carry(src, dst, kind, lat))
        else:
            ev = self.env.timeout(lat, (src, dst, kind))
            ev.callbacks.append(self._arrive)

    def _carry(self, src, dst, kind, lat):
        yield self.env.timeout(lat)
        node = self.nodes[dst - 1]
        if node.alive:
            self.delivered += 1
            node.inbox.put(("msg", src, kind))

    def _arrive(self, ev):
        src, dst, kind = ev.value
        node = self.nodes[dst - 1]
        if node.alive:
            self.delivered += 1
            before = (node.mode, node.leader)
            node.on_message(src, kind)
            if (node.mode, node.leader) != before:
                self.status_changed()

    def status_changed(self):
        """Recompute the agreed leader (every live node names L, and L leads). Called only
        when some node's role or leader changed, as the simulator's observer does."""
        live = [nd for nd in self.nodes if nd.alive]
        agreed = None
        if live:
            cand = live[0].leader
            if (cand is not None and self.nodes[cand - 1].alive
                    and self.nodes[cand - 1].mode == LEADER
                    and all(nd.leader == cand for nd in live)):
                agreed = cand
        if agreed != self.agreed:
            self.agreed = agreed
            self.agreed_since = self.env.now

    def deadline(self):
        if self.fault_done and self.agreed is not None:
            since = max(self.agreed_since, self.fault_at)
            return min(since + self.args.settle_ms, self.args.horizon_ms)
        return self.args.horizon_ms


class Node:
    """One bully node (default options), as in crates/bully/src/node.rs."""

    def __init__(self, env, net, ident, n):
        self.env = env
        self.net = net
        self.id = ident
        self.n = n
        self.alive = True
        self.mode = FOLLOWER
        self.leader = None
        self.gen = [0, 0, 0, 0]
        if net.args.style == "tutorial":
            self.inbox = simpy.Store(env)
            env.process(self.run())

    # -- plumbing -------------------------------------------------------------------------
    def run(self):
        while True:
            item = yield self.inbox.get()
            if not self.alive:
                continue
            before = (self.mode, self.leader)
            if item[0] == "msg":
                self.on_message(item[1], item[2])
            else:
                _, timer, gen = item
                if gen != self.gen[timer]:
                    continue
                self.on_timer(timer)
            if (self.mode, self.leader) != before:
                self.net.status_changed()

    def set_timer(self, timer, after):
        self.gen[timer] += 1
        gen = self.gen[timer]
        if self.net.args.style == "tutorial":
            self.env.process(self._timer(timer, gen, after))
        else:
            ev = self.env.timeout(after, (timer, gen))
            ev.callbacks.append(self._fire)

    def _timer(self, timer, gen, after):
        yield self.env.timeout(after)
        if self.alive and gen == self.gen[timer]:
            self.inbox.put(("timer", timer, gen))

    def _fire(self, ev):
        timer, gen = ev.value
        if self.alive and gen == self.gen[timer]:
            before = (self.mode, self.leader)
            self.on_timer(timer)
            if (self.mode, self.leader) != before:
                self.net.status_changed()

    def cancel_all(self):
        for t in (DETECT, ELECT, COORD, HB):
            self.gen[t] += 1

    def send_many(self, ids, kind):
        for j in ids:
            self.net.send(self.id, j, kind)

    # -- the algorithm --------------------------------------------------------------------
    def start(self):
        self.leader = None
        self.start_election()

    def start_election(self):
        self.cancel_all()
        self.mode = ELECTING
        self.leader = None
        self.send_many(range(self.id + 1, self.n + 1), ELECTION)
        if self.id == self.n:
            self.declare()
        else:
            self.set_timer(ELECT, self.net.args.t_elec_ms)

    def declare(self):
        self.cancel_all()
        self.mode = LEADER
        self.leader = self.id
        self.send_many(range(1, self.id), COORDINATOR)
        self.set_timer(HB, self.net.args.heartbeat_ms)

    def follow(self, leader):
        if self.mode != FOLLOWER:
            self.cancel_all()
        self.mode = FOLLOWER
        self.leader = leader
        a = self.net.args
        self.set_timer(DETECT, self.net.rng.uniform(a.detect_ms, a.detect_ms + a.jitter_ms))

    def lower_claims(self, frm):
        if self.mode == FOLLOWER and self.leader == frm:
            self.follow(frm)
        elif self.mode in (ELECTING, WAITING):
            pass
        else:
            self.start_election()

    def on_message(self, frm, kind):
        if kind == ELECTION:
            if frm < self.id:
                self.net.send(self.id, frm, OK)
                if self.mode == LEADER:
                    self.net.send(self.id, frm, COORDINATOR)
                elif self.mode == FOLLOWER:
                    self.start_election()
        elif kind == OK:
            if frm > self.id and self.mode == ELECTING:
                self.mode = WAITING
                self.gen[ELECT] += 1
                self.set_timer(COORD, self.net.args.t_coord_ms)
        elif kind == COORDINATOR:
            if frm > self.id:
                self.follow(frm)
            else:
                self.lower_claims(frm)
        elif kind == HEARTBEAT:
            if self.mode == FOLLOWER and self.leader == frm:
                self.follow(frm)
            elif frm > self.id:
                keep = self.mode == FOLLOWER and self.leader is not None and self.leader > frm
                if not keep:
                    self.follow(frm)
            else:
                self.lower_claims(frm)

    def on_timer(self, timer):
        if timer == DETECT and self.mode == FOLLOWER:
            self.start_election()
        elif timer == ELECT and self.mode == ELECTING:
            self.declare()
        elif timer == COORD and self.mode == WAITING:
            self.start_election()
        elif timer == HB and self.mode == LEADER:
            self.send_many((j for j in range(1, self.n + 1) if j != self.id), HEARTBEAT)
            self.set_timer(HB, self.net.args.heartbeat_ms)


def crash_leader(env, net, at):
    yield env.timeout(at)
    victim = net.agreed
    if victim is None:  # no agreed leader: the highest live leader, as the simulator does
        leaders = [nd.id for nd in net.nodes if nd.alive and nd.mode == LEADER]
        victim = max(leaders) if leaders else None
    if victim is not None:
        node = net.nodes[victim - 1]
        node.alive = False
        node.cancel_all()
        node.leader = None
    net.fault_done = True
    net.status_changed()


def trial(args, seed):
    rng = random.Random(seed)
    env = simpy.Environment()
    net = Net(env, args, rng)
    net.nodes = [Node(env, net, i, args.n) for i in range(1, args.n + 1)]
    for nd in net.nodes:  # boot at time zero, in id order
        nd.start()
        net.status_changed()
    fault_at = args.fault_ms + (rng.uniform(0.0, args.fault_jitter_ms) if args.fault_jitter_ms else 0.0)
    net.fault_at = fault_at
    env.process(crash_leader(env, net, fault_at))
    events = 0
    while True:
        nxt = env.peek()
        if nxt == math.inf or nxt > net.deadline():
            break
        env.step()
        events += 1
    return net, events


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--style", choices=["tutorial", "lean"], default="tutorial")
    p.add_argument("--latency", choices=["constant", "lognormal"], default="lognormal")
    p.add_argument("--latency-ms", type=float, default=1.0)
    p.add_argument("--median-ms", type=float, default=0.25)
    p.add_argument("--sigma", type=float, default=0.3)
    p.add_argument("--heartbeat-ms", type=float, default=50.0)
    p.add_argument("--detect-ms", type=float, default=150.0)
    p.add_argument("--jitter-ms", type=float, default=150.0)
    p.add_argument("--t-elec-ms", type=float, default=20.0)
    p.add_argument("--t-coord-ms", type=float, default=40.0)
    p.add_argument("--fault-ms", type=float, default=1000.0)
    p.add_argument("--fault-jitter-ms", type=float, default=50.0)
    p.add_argument("--settle-ms", type=float, default=600.0)
    p.add_argument("--horizon-ms", type=float, default=20000.0)
    args = p.parse_args()

    sent = delivered = events = converged = 0
    wall = 0.0
    for k in range(args.trials):
        t = time.perf_counter()
        net, ev = trial(args, args.seed + k)
        wall += time.perf_counter() - t
        sent += net.sent
        delivered += net.delivered
        events += ev
        converged += net.agreed is not None
    json.dump(
        {
            "model": f"simpy-{args.style}",
            "simpy": simpy.__version__,
            "python": sys.version.split()[0],
            "n": args.n,
            "trials": args.trials,
            "messages": sent,
            "delivered": delivered,
            "events": events,
            "messages_per_trial": sent / args.trials,
            "converged": converged,
            "wall_s": wall,
            "msgs_per_s": sent / wall,
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
