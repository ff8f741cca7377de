"""Phase 2 on several processes (``bnilp.ilp.cubes``): classes (or DAGs) listed per wall second, ``jobs`` 1 vs more.

For each score file and each ``--jobs`` value: ``ilp.solve(table, ln BF, enumerate_by=..., jobs=J,
time_limit=T)`` (no network cap), then the status, what was listed, phase 1 and phase 2 wall seconds, the
listing rate (networks per wall second of phase 2, the serial start included) and its ratio to the first
``--jobs`` value, and for split runs the cubes: how many, how many held something, and the longest cube's
seconds over the mean of the non-empty ones (balance). With a time limit the rates compare runs that
listed different numbers of networks; where a run is complete, its wall time is the figure, and "same"
says whether every complete run listed the same classes (class words) or DAGs as the first complete one.

``--simulate 4,8`` adds, for each complete split run, the makespan that the cubes' own seconds would give on
m workers — greedy list scheduling in the run's hand-out order (``stats.phase2.order``), each cube starting
when a worker frees up — next to the measured split and the bound max(Σ seconds / m, longest cube). A model,
not a measurement: it assumes a cube takes as long beside m − 1 others as it did here (no memory-bandwidth or
start-up costs), which is what this 2-core machine cannot show; and it is given only for runs whose cubes were
not split while running (``--steal off``: a split cube's other side exists only from the split on).
``--steal S`` sets ``PHASE2_STEAL_SECONDS`` (``off``: never split a running cube).

    OPENBLAS_NUM_THREADS=1 python benchmarks/phase2_jobs.py FILE.jkl[:BF] ... [--bf 20] [--jobs 1,2]
                                                         [--time-limit 300] [--enumerate mecs|dags]
                                                         [--simulate 4,8] [--steal 5|off]
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import time

import numpy as np

from bnilp import ilp
from bnilp.ilp.families import _Data
from bnilp.scorefile import read_jaakkola


def _phase2_seconds(res) -> float:
    return res.stats.get("phase2_serial", {}).get("seconds", 0.0) + res.stats.get("phase2", {}).get("seconds", 0.0)


def _listed(data: _Data, res, classes: bool) -> set:
    """The listed networks as class words (``classes``) or as parent maps."""
    if not classes:
        return {tuple(sorted((v, tuple(sorted(p))) for v, p in n.parents.items())) for n in res.networks}
    index = {v: i for i, v in enumerate(data.names)}
    rows = []
    for net in res.networks:
        row = []
        for v in data.names:
            i = index[v]
            block = data.sets[data.start[i]:data.start[i + 1]]
            row.append(int(data.start[i]) + block.index(frozenset(net.parents[v])))
        rows.append(row)
    return {w.tobytes() for w in data.class_words(np.asarray(rows, dtype=np.int64))}


def list_schedule(seconds: list[float], workers: int) -> float:
    """When the last of ``seconds`` (cube times, in hand-out order) ends with ``workers`` taking the next
    cube as they free up."""
    free = [0.0] * workers
    for t in seconds:
        heapq.heappush(free, heapq.heappop(free) + t)
    return max(free)


def _simulated(res, workers: list[int]) -> str:
    p2 = res.stats.get("phase2", {})
    by_cube = {c["cube"]: c["seconds"] for c in p2.get("per_cube", [])}
    order = [i for i in p2.get("order", sorted(by_cube)) if i in by_cube]
    seconds = [by_cube[i] for i in order]
    parts = [f"m={m}: {list_schedule(seconds, m):.1f} s (bound {max(sum(seconds) / m, max(seconds)):.1f})"
             for m in workers]
    return (f"    split measured {p2.get('seconds', math.nan):.1f} s; cubes' seconds {sum(seconds):.1f} in all, "
            f"longest {max(seconds):.1f}; simulated " + ", ".join(parts))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="score files, each optionally FILE:BF")
    parser.add_argument("--bf", type=float, default=20.0)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--enumerate", choices=("dags", "mecs"), default="mecs")
    parser.add_argument("--simulate", default="", help="worker counts m to simulate the split on, e.g. 4,8")
    parser.add_argument("--steal", default=None, help="PHASE2_STEAL_SECONDS, or off")
    args = parser.parse_args(argv)
    simulate = [int(m) for m in args.simulate.split(",") if m]
    if args.steal is not None:
        ilp.settings.PHASE2_STEAL_SECONDS = None if args.steal == "off" else float(args.steal)
    jobs = [int(j) for j in args.jobs.split(",")]
    print(f"{'file':28} {'jobs':>4} {'status':11} {'listed':>9} {'p1 s':>7} {'p2 s':>7} {'per s':>8} "
          f"{'ratio':>6} {'cubes':>5} {'held':>4} {'max/mean':>8} {'same':>4}", flush=True)
    for spec in args.files:
        path, _, bf = spec.partition(":")
        bf_value = float(bf) if bf else args.bf
        table = read_jaakkola(path)
        name = f"{os.path.basename(path)} BF {bf_value:g}"
        base = None
        first: set | None = None
        data = _Data(table)
        for j in jobs:
            t0 = time.perf_counter()
            res = ilp.solve(table, math.log(bf_value), time_limit=args.time_limit, enumerate_by=args.enumerate,
                            jobs=j, max_networks=10 ** 9)
            wall = time.perf_counter() - t0
            p2 = _phase2_seconds(res)
            rate = len(res.networks) / p2 if p2 > 0 else math.nan
            base = rate if base is None else base
            per_cube = res.stats.get("phase2", {}).get("per_cube", [])
            held = [c["seconds"] for c in per_cube if c["found"] > 0]
            balance = max(held) / (sum(held) / len(held)) if held else math.nan
            same = "—"
            if res.complete:
                listed = _listed(data, res, args.enumerate == "mecs")
                first = listed if first is None else first
                same = "yes" if listed == first else "NO"
            p1 = res.stats['phase1'].get('seconds', 0)
            print(f"{name:28} {j:>4} {res.status:11} {len(res.networks):>9,} {p1:>7.1f} "
                  f"{p2:>7.1f} {rate:>8.1f} {rate / base:>6.2f} {len(per_cube):>5} {len(held):>4} {balance:>8.2f} "
                  f"{same:>4}   (wall {wall:.1f} s)", flush=True)
            splits = res.stats.get("phase2", {}).get("splits", 0)
            if splits:
                print(f"    {splits} cube(s) split while running", flush=True)
            if simulate and res.complete and per_cube and not splits:
                print(_simulated(res, [j] + simulate), flush=True)


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
