"""Class enumeration on palim-1 tables: forests (Lawler's partition, :mod:`bnilp.ilp.forests`) against the
solver's other phases (the programme and peeling up to 22 variables, branch-and-cut beyond), same table.

    OPENBLAS_NUM_THREADS=1 python benchmarks/forests.py [--nodes 30,60,100] [--samples 200] [--bf 3]
        [--cap 2000] [--time-limit 120]

Data: ``bnilp.simulate`` (binary variables, average degree 2, seed 1), BIC scored with palim 1 at the BF. Prints
per size: classes listed and seconds of the search (both phases) by forests and by the other phases, their ratio,
and whether both listed the same classes (as CPDAG skeletons: with one parent a variable a class is its skeleton).
The ratio is of the search seconds where both listed the same classes' number (both finished, or both stopped at
``--cap``); where a search stopped at ``--time-limit`` the seconds are the limit's, and the ratio is of classes
listed per search second instead (marked "classes/s").
"""

from __future__ import annotations

import argparse
import math
import time

from bnilp.data import from_dataframe
from bnilp.ilp import settings
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score
from bnilp.simulate import simulate


def _run(table, eps: float, cap: int, limit: float, forests: bool):
    settings.FOREST_ENUMERATION = forests
    t0 = time.perf_counter()
    result = solve_table(table, epsilon=eps, enumerate_by="mecs", max_networks=cap, time_limit=limit)
    seconds = time.perf_counter() - t0
    sol = result.solution
    skeletons = [frozenset(frozenset((p, c)) for c, ps in net.parents.items() for p in ps) for net in sol.networks]
    return sol, sol.stats["phase1"]["seconds"] + sol.stats["phase2"].get("seconds", 0.0), seconds, skeletons


def speed_ratio(fast, fast_search: float, slow, slow_search: float) -> str:
    """How many times faster forests were: the search seconds' ratio where both did the same work (the same
    number of classes listed, none stopped by the time limit), else the ratio of classes listed per second (two
    runs cut at the limit compared the limit with itself: "1×", a review)."""
    same_work = len(fast.networks) == len(slow.networks) and "time_limit" not in (fast.status, slow.status)
    if same_work:
        ratio, unit = slow_search / max(fast_search, 1e-9), ""
    else:
        ratio = (len(fast.networks) / max(fast_search, 1e-9)) / max(len(slow.networks) / max(slow_search, 1e-9),
                                                                   1e-9)
        unit = " classes/s"
    return (f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}") + "×" + unit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="30,60,100")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--bf", type=float, default=3.0)
    ap.add_argument("--cap", type=int, default=2000)
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    try:
        nodes = [int(x) for x in args.nodes.split(",")]
    except ValueError:
        ap.error(f"--nodes: comma-separated variable counts, not {args.nodes!r}")
    for name, value, least in (("--samples", args.samples, 1), ("--cap", args.cap, 1), ("--bf", args.bf, 1)):
        if value < least:
            ap.error(f"{name} must be at least {least}, not {value:g}")
    eps = math.log(args.bf)
    print("| variables | families | forests: classes, status | search s | with the report s | other phases: classes, "
          "status | search s | with the report s | search ratio | same classes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in nodes:
        frame, _ = simulate(n, args.samples, 2.0, max_degree=5, discrete_fraction=1.0, categories=(2, 2), seed=1)
        data = from_dataframe(frame, discrete=list(frame.columns))
        table = score_parent_sets(make_score("bic", data), epsilon=eps, palim=1)
        k = sum(len(f) for f in table.families.values())
        fast, fast_search, fast_all, fast_sk = _run(table, eps, args.cap, args.time_limit, True)
        slow, slow_search, slow_all, slow_sk = _run(table, eps, args.cap, args.time_limit, False)
        same = set(fast_sk) == set(slow_sk) if fast.complete and slow.complete else "— (a list incomplete)"
        print(f"| {n} | {k} | {len(fast.networks)}, {fast.status} | {fast_search:.2f} | {fast_all:.2f} | "
              f"{len(slow.networks)}, {slow.status} | {slow_search:.2f} | {slow_all:.2f} | "
              f"{speed_ratio(fast, fast_search, slow, slow_search)} | {same} |", flush=True)
    settings.FOREST_ENUMERATION = True


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
