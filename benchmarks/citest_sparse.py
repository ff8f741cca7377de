"""Size of the all-discrete G² test on sparse tables: χ² reference against ``null="auto"``.

X, Y and the conditioning variables Z_1..Z_m are independent and uniform on 3 values, so X ⟂ Y | Z holds and
the multinomial model is exact; only the table's sparsity (N rows over 9·3^m cells) varies. The χ² reference of
G² over-rejects when cells hold few rows; ``null="auto"`` refers such a table (fewer than
``bnilp.citest.SPARSE_ROWS_PER_CELL`` rows a cell) to the permutation distribution within the strata, which is
exact under the null. Pearson's X² (scipy's ``chi2_contingency`` per stratum) is printed beside, as the
textbook alternative.

    OPENBLAS_NUM_THREADS=1 python benchmarks/citest_sparse.py [--reps 300] [--jobs 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from bnilp.citest import ci_test
from bnilp.data import from_dataframe

SETTINGS = ((100, 1), (200, 2), (1000, 3), (600, 2), (1000, 2), (1500, 2), (2000, 2), (4000, 2))


def _pearson_p(frame: pd.DataFrame, zs: list[str]) -> float:
    X, k = 0.0, 0
    for _, g in frame.groupby(zs):
        t = pd.crosstab(g["x"], g["y"]).values
        if min(t.shape) >= 2:
            s, _, dof, _ = stats.chi2_contingency(t, correction=False)
            X, k = X + s, k + dof
    return float(stats.chi2.sf(X, k)) if k else 1.0


def _one(seed: int, N: int, m: int, alpha: float) -> tuple[bool, bool, bool, str]:
    rng = np.random.default_rng(seed)
    zs = [f"z{i}" for i in range(m)]
    frame = pd.DataFrame(rng.integers(0, 3, (N, m + 2)), columns=["x", "y", *zs]).astype(str)
    data = from_dataframe(frame)
    chi = ci_test(data, "x", "y", zs, score="bic", alpha=alpha, null="chi2")
    auto = ci_test(data, "x", "y", zs, score="bic", alpha=alpha, seed=seed)
    return chi.dependent, auto.dependent, _pearson_p(frame, zs) <= alpha, auto.null


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    if args.reps < 1 or args.jobs < 1 or not 0 < args.alpha < 1:
        ap.error("--reps and --jobs must be at least 1 and --alpha between 0 and 1")
    se = (args.alpha * (1 - args.alpha) / args.reps) ** 0.5
    print(f"size at α = {args.alpha} over {args.reps} null data sets each (Monte Carlo SE {se:.3f})")
    print("| N | Z | rows a cell | G², χ² | G², auto | auto's reference | Pearson X², χ² | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for N, m in SETTINGS:
        t = time.perf_counter()
        out = Parallel(n_jobs=args.jobs)(delayed(_one)(s, N, m, args.alpha) for s in range(args.reps))
        chi, auto, pearson, used = (np.array(c) for c in zip(*out, strict=True))
        refs = ", ".join(f"{r} {np.mean(used == r):.0%}" for r in sorted(set(used)))
        print(f"| {N:,} | {m} ternary | {N / (9 * 3 ** m):.1f} | {chi.mean():.3f} | {auto.mean():.3f} | {refs} | "
              f"{pearson.mean():.3f} | {time.perf_counter() - t:.0f} |", flush=True)


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
