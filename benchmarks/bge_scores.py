"""BGe on continuous data: agreement with pygobnilp's BGe, scoring speed against CG, credible sets on gaussian.test.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bge_scores.py [--pygobnilp PATH/scoring.py]``.

1. ``--pygobnilp``: every family of ``pygobnilp/gaussian.dat`` (7 variables, 5,000 rows; bnlearn's
   ``gaussian.test``) scored by bnilp's BGe and by pygobnilp 1.0's ``scoring.BGe`` (``pip download pygobnilp``;
   its ``scoring.py`` is loaded from the path given — it is GPL and not a dependency), in raw units and
   standardised, under three priors (α_μ, α_w): the largest relative difference.
2. The parent-set walk (``score_parent_sets``, BF 20, the default palim where no rule bounds the size) of BGe
   and CG on simulated linear-Gaussian data (x_j = 0.5·x_{j−1} + 0.3·x_{j−3} + N(0, 1), stationary):
   seconds, families scored and kept, µs a family.
3. ``learn`` on gaussian.dat with BGe and with CG at BF 3, 20 and 150: OPT, the optimal network against the true
   one (structural Hamming distance of the CPDAGs), credible DAGs and classes, seconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import time

import numpy as np
import pandas as pd
from common import SHARED_DATA, run_script

from bnilp.data import from_dataframe, load_data
from bnilp.metrics import compare_graphs
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import learn
from bnilp.scores import make_score

GAUSSIAN = SHARED_DATA / "pygobnilp" / "gaussian.dat"
#: bnlearn's gaussian.test network
TRUE_NETWORK = {"A": [], "B": [], "E": [], "G": [], "C": ["A", "B"], "D": ["B"], "F": ["A", "D", "E", "G"]}
PRIORS = [(1.0, None), (2.5, 12), (0.1, 9)]


def against_pygobnilp(path: str) -> None:
    spec = importlib.util.spec_from_file_location("pygobnilp_scoring", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = load_data(GAUSSIAN, continuous="all")
    names, worst, families = list(data.names), 0.0, 0
    for standardize in (False, True):
        theirs_data = module.ContinuousData(str(GAUSSIAN), header=True, standardise=standardize)
        for alpha_mu, alpha_w in PRIORS:
            theirs = module.BGe(theirs_data, alpha_mu=alpha_mu, alpha_omega=alpha_w)
            ours = make_score("bge", data, alpha_mu=alpha_mu, alpha_w=alpha_w, standardize=standardize)
            for child in range(data.n):
                others = [j for j in range(data.n) if j != child]
                for k in range(data.n):
                    for parents in itertools.combinations(others, k):
                        a = ours.local(child, parents)
                        b = theirs.bge_score(names[child], [names[j] for j in parents])[0]
                        worst = max(worst, abs(a - b) / max(1.0, abs(b)))
                        families += 1
    print(f"pygobnilp's BGe on gaussian.dat: {families:,} families (raw and standardised, {len(PRIORS)} priors), "
          f"largest relative difference {worst:.2e}")


def simulated(n: int, rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.zeros((rows, n))
    for j in range(n):
        x[:, j] = rng.normal(size=rows) + (0.5 * x[:, j - 1] if j >= 1 else 0) + (0.3 * x[:, j - 3] if j >= 3 else 0)
    return pd.DataFrame(x, columns=[f"V{j}" for j in range(n)])


def walk_speed(sizes: list[tuple[int, int]]) -> None:
    print("\n| n | N | score | palim | scored | kept | s | µs a family |")
    print("|---|---|---|---|---|---|---|---|")
    for n, rows in sizes:
        data = from_dataframe(simulated(n, rows))
        for name in ("bge", "cg"):
            t0 = time.perf_counter()
            table = score_parent_sets(make_score(name, data), epsilon=math.log(20))
            seconds = time.perf_counter() - t0
            scored = table.meta["scored"]
            print(f"| {n} | {rows:,} | {name} | {table.meta.get('palim')} | {scored:,} | {table.n_parent_sets():,} | "
                  f"{seconds:.2f} | {seconds / scored * 1e6:.1f} |")


def gaussian_test() -> None:
    truth = {v: frozenset(ps) for v, ps in TRUE_NETWORK.items()}
    print("\n| score | BF | OPT | SHD of the best CPDAG to the truth's | DAGs | classes | s |")
    print("|---|---|---|---|---|---|---|")
    for name in ("bge", "cg"):
        for bf in (3, 20, 150):
            t0 = time.perf_counter()
            result = learn(GAUSSIAN, score=name, bf=bf)
            seconds = time.perf_counter() - t0
            best = result.solution.networks[0].parents
            distance = compare_graphs(best, truth, cpdag=True)["SHD"]
            print(f"| {name} | {bf} | {result.solution.optimum:.4f} | {distance} | {result.report['n_networks']:,} | "
                  f"{result.report['n_mecs']:,} | {seconds:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pygobnilp", help="pygobnilp 1.0's pygobnilp/scoring.py (from its source distribution)")
    parser.add_argument("--sizes", default="10:1000,20:1000,20:10000,30:1000",
                        help="n:N pairs of the simulated data for the walk (default %(default)s)")
    args = parser.parse_args()
    if args.pygobnilp:
        against_pygobnilp(args.pygobnilp)
    walk_speed([tuple(int(v) for v in pair.split(":")) for pair in args.sizes.split(",")])
    gaussian_test()


if __name__ == "__main__":
    run_script(main)
