"""What the dynamic programme of the search costs (``bnilp.ilp.dp.solve_dp``): seconds for OPT alone and
for OPT with the family filter (best DAG through each parent set), its best-parent table entries and
memory, the parent sets it expects to scan per pass (those outside its tables, :func:`bnilp.ilp.dp.scan_steps`),
on score files and on dense random tables (every variable may take every other as a parent,
the worst case for the tables).

    OPENBLAS_NUM_THREADS=1 python benchmarks/dp_cost.py [--random 20,22,24] [FILES...]

Peak RSS is the process's so far (``ru_maxrss``), so list inputs from small to large. The first call
of a process also loads the compiled kernels (about 0.5 s), so a warm-up runs first.
"""

from __future__ import annotations

import argparse
import itertools
import random
import resource
import time

from bnilp.ilp.dp import plan_tables, solve_dp
from bnilp.ilp.families import _Data
from bnilp.memory import free_memory
from bnilp.scorefile import ScoreTable, read_jaakkola


def dense_random_table(n: int, per_child: int = 30, seed: int = 0) -> ScoreTable:
    """``per_child`` random parent sets of size ≤ 3 per child drawn from all other variables, plus the
    empty set (scores: bigger sets score higher on average, so the optimum has edges)."""
    rng = random.Random(seed)
    names = [f"V{i}" for i in range(n)]
    families = {}
    for v in names:
        others = [u for u in names if u != v]
        fam = {frozenset(): -100.0 * (1 + rng.random())}
        # every other variable appears in some set, so C_v is all of them
        for i, u in enumerate(others):
            fam.setdefault(frozenset((u,)), -100.0 + 3 * rng.random())
            if i < per_child:
                extra = rng.sample([w for w in others if w != u], rng.randint(1, 2))
                fam.setdefault(frozenset((u, *extra)), -100.0 + 6 * rng.random())
        families[v] = fam
    return ScoreTable(variables=names, families=families, meta={})


def measure(name: str, table: ScoreTable) -> None:
    data = _Data(table)
    plan = plan_tables(data)
    need, free = plan.bytes(data.n), free_memory()
    if free is not None and need > 0.8 * free:       # a row that says so, not a run lost to an allocation (a review)
        print(f"{name:28} {data.n:>3} {data.K:>9,} {plan.entries:>14,} {plan.scan_steps:>11.3g} "
              f"{need / 2**30:>8.2f}   not run: the programme's tables need {need / 2**30:,.1f} GiB, "
              f"{free / 2**30:,.1f} GiB free")
        return
    t0 = time.perf_counter()
    solve_dp(data)
    t_opt = time.perf_counter() - t0
    t0 = time.perf_counter()
    solve_dp(data, containing=True)
    t_all = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{name:28} {data.n:>3} {data.K:>9,} {plan.entries:>14,} {plan.scan_steps:>11.3g} "
          f"{plan.bytes(data.n) / 2**30:>8.2f} {t_opt:>8.2f} {t_all:>9.2f} {plan.seconds(data.n):>9.1f} {rss:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--random", default="", help="comma-separated numbers of variables")
    args = parser.parse_args()
    solve_dp(_Data(dense_random_table(4)), containing=True)          # load the compiled kernels
    print(f"{'input':28} {'n':>3} {'families':>9} {'table entries':>14} {'scans/pass':>11} {'GiB':>8} {'OPT s':>8} "
          f"{'filter s':>9} {'est. s':>9} {'RSS GiB':>8}")
    for n in itertools.chain.from_iterable([int(x)] for x in args.random.split(",") if x):
        measure(f"dense random n={n}", dense_random_table(n))
    for path in args.files:
        measure(path.rsplit("/", 1)[-1], read_jaakkola(path))


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
