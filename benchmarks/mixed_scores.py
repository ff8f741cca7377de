"""Families per second of the mixed-data scores on clgaussian.test (all parent sets up to size 2).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/mixed_scores.py [DATA] [MAX_PARENTS]`` (DATA defaults to
``mixed/clgaussian.test`` in the shared data folder, ``common.SHARED_DATA``). Each score starts with empty
caches (best of 3 runs), so set-level sharing (CG) is included as the parent-set walk would see it.
``--simulate N`` scores N simulated rows instead (seeded): six discrete columns of 3 states and six continuous
ones, each shifted by a discrete one and by the continuous one before it — large N, where the per-row work
shows. ``--scores cg,mvp`` runs only those.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
import pandas as pd
from common import SHARED_DATA

from bnilp.data import from_dataframe, load_data
from bnilp.scores import make_score

DEFAULT_DATA = SHARED_DATA / "mixed" / "clgaussian.test"
REPEATS = 3  # best of, fresh caches each time
SCORES = [("cg", {}), ("cgd", {}), ("mvp", {"degree": "log"}), ("mvp", {"degree": 1}), ("mml", {})]


def simulated(rows: int, seed: int = 0) -> pd.DataFrame:
    """Six discrete columns (3 states) and six continuous ones, c_j = 0.5·d_j + 0.5·c_(j−1) + N(0, 1)."""
    rng = np.random.default_rng(seed)
    cols = {f"d{j}": rng.integers(0, 3, rows) for j in range(6)}
    for j in range(6):
        cols[f"c{j}"] = rng.normal(size=rows) + 0.5 * cols[f"d{j}"] + 0.5 * cols.get(f"c{j - 1}", 0.0)
    return pd.DataFrame(cols)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="data file (default: %(default)s)")
    parser.add_argument("max_parents", nargs="?", type=int, default=2, help="largest parent set scored (2)")
    parser.add_argument("--simulate", type=int, default=None, metavar="N", help="score N simulated rows instead")
    parser.add_argument("--scores", default=None, help="comma-separated score names (default: all)")
    args = parser.parse_args()
    path, max_parents = args.data or str(DEFAULT_DATA), args.max_parents   # "" too: the default
    if args.simulate is not None and args.simulate < 2:
        parser.error("--simulate needs at least 2 rows")
    known = {name for name, _ in SCORES}
    if args.scores is not None and not set(args.scores.split(",")) <= known:
        parser.error(f"--scores: unknown {sorted(set(args.scores.split(',')) - known)} (known: {sorted(known)})")
    if args.simulate is not None:
        data, path = from_dataframe(simulated(args.simulate), discrete=[f"d{j}" for j in range(6)]), \
            f"simulated ({args.simulate:,} rows)"
    else:
        data = load_data(path)
    print(f"{path}: N={data.N}, n={data.n}, parent sets up to size {max_parents}")
    chosen = None if args.scores is None else set(args.scores.split(","))
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
    main()
