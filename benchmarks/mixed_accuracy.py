"""Accuracy of exact learning on simulated mixed data (Andrews, Ramsey & Cooper §6 design).

For each repetition: simulate data from a random DAG (:func:`bnilp.simulate.simulate`), score
and prune parent sets (:func:`bnilp.parentsets.score_parent_sets`), solve for the optimum
(:func:`bnilp.ilp.solve`) and print AP/AR/AHP/AHR/SHD of ``networks[0]`` against the truth
(:func:`bnilp.metrics.compare_graphs`), as DAGs and as CPDAGs, then the means.

    python benchmarks/mixed_accuracy.py --nodes 10 --samples 500 --reps 3 --score cg

Not a test: it needs the full pipeline (SCIP) and takes minutes at the seed's sizes (100 nodes).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402,F401  (sets the BLAS thread variables before numpy loads)
import numpy as np  # noqa: E402

from bnilp.data import from_dataframe  # noqa: E402
from bnilp.metrics import compare_graphs  # noqa: E402
from bnilp.scores import StructurePrior, make_score  # noqa: E402
from bnilp.simulate import simulate  # noqa: E402

KEYS = ("AP", "AR", "AHP", "AHR", "SHD")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--samples", type=int, default=500)
    ap.add_argument("--avg-degree", type=float, default=2.0)
    ap.add_argument("--max-degree", type=int, default=5)
    ap.add_argument("--nonlinear", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--score", default="cg")
    ap.add_argument("--prior", choices=["none", "binomial", "ebic"], default="binomial",
                    help="structure prior (the seed uses binomial, expected parents 1)")
    ap.add_argument("--epsilon", type=float, default=0.0)
    ap.add_argument("--palim", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    try:
        from bnilp.ilp import solve
        from bnilp.parentsets import score_parent_sets
    except ImportError as exc:
        print(f"the learning pipeline is not available: {exc}", file=sys.stderr)
        return 1

    rows = []
    for rep in range(args.reps):
        frame, truth = simulate(args.nodes, args.samples, args.avg_degree, args.max_degree,
                                nonlinear=args.nonlinear, seed=args.seed + rep)
        data = from_dataframe(frame, discrete=truth["discrete"])
        prior = StructurePrior(args.prior, data.n, 1.0, 0.5)
        score = make_score(args.score, data, prior=prior)
        t0 = time.perf_counter()
        table = score_parent_sets(score, epsilon=args.epsilon, palim=args.palim)
        result = solve(table, args.epsilon, time_limit=args.time_limit)
        seconds = time.perf_counter() - t0
        if not result.networks:
            print(f"rep {rep}: no network ({result.status})")
            continue
        learned = {v: sorted(ps) for v, ps in result.networks[0].parents.items()}
        dag = compare_graphs(learned, truth["parents"])
        cp = compare_graphs(learned, truth["parents"], cpdag=True)
        rows.append([dag[k] for k in KEYS] + [cp[k] for k in KEYS] + [seconds])
        print(f"rep {rep}: " + "  ".join(f"{k} {dag[k]:.3f}" for k in KEYS[:4])
              + f"  SHD {dag['SHD']}  | CPDAG SHD {cp['SHD']}  | {seconds:.1f} s"
              + ("" if result.complete else f"  [{result.status}: not proven]"))
    if rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(np.array(rows, dtype=float), axis=0)
        names = [*KEYS, *(f"cpdag_{k}" for k in KEYS), "seconds"]
        print("mean: " + "  ".join(f"{n} {v:.3f}" for n, v in zip(names, mean, strict=True)
                                   if not math.isnan(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
