"""Families per second of the mixed-data scores on clgaussian.test (all parent sets up to size 2).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/mixed_scores.py [DATA] [MAX_PARENTS]`` (DATA defaults to
``mixed/clgaussian.test`` in the shared data folder, ``common.SHARED_DATA``). Each score starts with empty
caches (best of 3 runs), so set-level sharing (CG) is included as the parent-set walk would see it.
``--simulate N`` scores N simulated rows instead (seeded): six discrete columns of 3 states and six continuous
ones (``--width W``: W of each), each shifted by a discrete one and by the continuous one before it — large N,
where the per-row work shows. ``--scores cg,mvp`` runs only those.

``--whole-table`` times the whole parent-set walk instead (``score_parent_sets``, BF 20, ``--palim P`` if given)
with each of ``--jobs 1,2`` (default): seconds, the part spent on the table computed before the walks (CG/CGd's
set table: ℓ of every variable set once, :func:`bnilp.lattice.build_set_table`; MVP's family table: every
family once, by partition, :func:`bnilp.lattice.build_family_table`) and its size, and the ratio to one
process; the score tables must be equal.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
import pandas as pd
from common import SHARED_DATA, run_script

from bnilp.data import from_dataframe, load_data
from bnilp.scores import make_score

DEFAULT_DATA = SHARED_DATA / "mixed" / "clgaussian.test"
REPEATS = 3  # best of, fresh caches each time
SCORES = [("cg", {}), ("cgd", {}), ("mvp", {"degree": "log"}), ("mvp", {"degree": 1}), ("mml", {})]


def simulated(rows: int, seed: int = 0, width: int = 6) -> pd.DataFrame:
    """``width`` discrete columns (3 states) and as many continuous ones, c_j = 0.5·d_j + 0.5·c_(j−1) + N(0, 1)."""
    rng = np.random.default_rng(seed)
    cols = {f"d{j}": rng.integers(0, 3, rows) for j in range(width)}
    for j in range(width):
        cols[f"c{j}"] = rng.normal(size=rows) + 0.5 * cols[f"d{j}"] + 0.5 * cols.get(f"c{j - 1}", 0.0)
    return pd.DataFrame(cols)


def whole_tables(data, names: list[tuple[str, dict]], palim: int | None, jobs: list[int]) -> None:
    """The whole walk per score and ``--jobs`` value: seconds (best of 2), the table's part of that same run
    (the last run's part beside the best run's whole printed a part above its whole: a review), ratio to the
    first."""
    from bnilp.parentsets import score_parent_sets

    print(f"{'score':16s} {'jobs':>4s} {'seconds':>8s} {'table s':>9s} {'entries':>7s} {'families':>9s} {'ratio':>6s}")
    for name, settings in names:
        first, reference = None, None
        for n_jobs in jobs:
            best, table = math.inf, None
            for _ in range(2):
                start = time.perf_counter()
                run = score_parent_sets(make_score(name, data, **settings), epsilon=math.log(20), palim=palim,
                                        n_jobs=n_jobs)
                seconds = time.perf_counter() - start
                if seconds < best:
                    best, table = seconds, run
            if reference is None:
                first, reference = best, table.families
            elif table.families != reference:
                raise SystemExit(f"{name}: --jobs {n_jobs} gave other families than --jobs {jobs[0]}")
            counts = table.meta["counts"]
            built = counts.get("set_table") or counts.get("family_table") or {}
            entries = built.get("sets", built.get("families", 0))
            label = name + "".join(f" {k}={v}" for k, v in settings.items())
            print(f"{label:16s} {n_jobs:4d} {best:8.2f} {built.get('seconds', 0.0):9.2f} {entries:7d} "
                  f"{table.meta['scored']:9d} {first / best:5.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="data file (default: %(default)s)")
    parser.add_argument("max_parents", nargs="?", type=int, default=2, help="largest parent set scored (2)")
    parser.add_argument("--simulate", type=int, default=None, metavar="N", help="score N simulated rows instead")
    parser.add_argument("--scores", default=None, help="comma-separated score names (default: all)")
    parser.add_argument("--width", type=int, default=6, help="--simulate: discrete and continuous columns (6 each)")
    parser.add_argument("--whole-table", action="store_true", help="time the whole walk per --jobs value")
    parser.add_argument("--palim", type=int, default=None, help="--whole-table: the walk's palim")
    parser.add_argument("--jobs", default="1,2", help="--whole-table: comma-separated process counts (1,2)")
    args = parser.parse_args()
    path, max_parents = args.data or str(DEFAULT_DATA), args.max_parents   # "" too: the default
    if args.simulate is not None and args.simulate < 2:
        parser.error("--simulate needs at least 2 rows")
    known = {name for name, _ in SCORES}
    if args.scores is not None and not set(args.scores.split(",")) <= known:
        parser.error(f"--scores: unknown {sorted(set(args.scores.split(',')) - known)} (known: {sorted(known)})")
    if args.width < 1:
        parser.error("--width needs at least 1")
    if args.simulate is not None:
        data, path = from_dataframe(simulated(args.simulate, width=args.width),
                                    discrete=[f"d{j}" for j in range(args.width)]), \
            f"simulated ({args.simulate:,} rows, {2 * args.width} columns)"
    else:
        data = load_data(path)
    chosen = None if args.scores is None else set(args.scores.split(","))
    if args.whole_table:
        try:
            jobs = [int(j) for j in args.jobs.split(",")]
        except ValueError:
            parser.error(f"--jobs: comma-separated integers, got {args.jobs!r}")
        if min(jobs) < 1 or (args.palim is not None and args.palim < 0):
            parser.error("--jobs needs counts of at least 1 and --palim at least 0")
        print(f"{path}: N={data.N}, n={data.n}, whole walk, BF 20, palim {args.palim}")
        whole_tables(data, [(n, s) for n, s in SCORES if chosen is None or n in chosen], args.palim, jobs)
        return
    print(f"{path}: N={data.N}, n={data.n}, parent sets up to size {max_parents}")
    for name, settings in SCORES:
        if chosen is not None and name not in chosen:
            continue
        elapsed = math.inf
        for _ in range(REPEATS):
            score = make_score(name, data, **settings)
            families = 0
            start = time.perf_counter()
            for child in range(data.n):
                others = [j for j in range(data.n) if score.allowed_parent(child, j)]
                for size in range(max_parents + 1):
                    for parents in itertools.combinations(others, size):
                        score.local(child, parents)
                        families += 1
            elapsed = min(elapsed, time.perf_counter() - start)
        label = name + "".join(f" {k}={v}" for k, v in settings.items())
        print(f"{label:16s} {families:6d} families  {elapsed:8.3f} s  {families / elapsed:10.1f} families/s")


if __name__ == "__main__":
    run_script(main)
