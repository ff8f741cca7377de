"""How far each family of cuts closes the root LP gap: cluster cuts, then k-cluster cuts.

    OPENBLAS_NUM_THREADS=1 python benchmarks/root_gap.py FILE.jkl:BF … [--max-k 2] [--subip-time 20] [--heuristic-only]

For each Jaakkola score file, OPT (``ilp.solve`` at ε = 0, no listing), then the LP relaxation over the
family variables (convexity rows, 0 ≤ x ≤ 1; HiGHS through ``scipy.optimize.linprog``) tightened in
stages, each run until its separators find no violated cut:

1. ``heuristic``: the cluster cuts of the heuristic separator (``sepa_cluster._separate``);
2. ``exact``: and the exact cluster sub-IP (``sepa_subip.subip_clusters``) when the heuristic finds none —
   the cluster-cut closure, up to the sub-IP's time limit per call;
3. ``+2-heur``: and the heuristic k-cluster separator (``sepa_cluster.kcluster_cuts``, k = 2 … ``--max-k``);
4. ``+2-exact``: and the exact k-cluster sub-IP (``subip_clusters(k=…)``) when both heuristics find none.

``--heuristic-only`` skips the sub-IP stages (the exact closure takes soybean BF 3 over 1,000 s) and runs
instead one stage per k: ``heuristic``, ``+2-heur``, ``+3-heur``, … ``+K-heur`` (K = ``--max-k``).

Each stage prints the bound's gap above OPT in nats next to ε = ln BF, the rows added and the seconds. A gap
below ε at the root is what the search can use: phase 2 prunes a node once its bound falls below OPT − ε.
"""

from __future__ import annotations

import argparse
import math
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.optimize import linprog  # noqa: E402

from bnilp import ilp  # noqa: E402
from bnilp.ilp.families import _Data  # noqa: E402
from bnilp.ilp.sepa_cluster import _separate, kcluster_cuts  # noqa: E402
from bnilp.ilp.sepa_subip import subip_clusters  # noqa: E402
from bnilp.scorefile import read_jaakkola  # noqa: E402

MAX_ROUNDS = 400


class _Relaxation:
    """The LP over the family variables with the cut rows added so far."""

    def __init__(self, data: _Data):
        self.data = data
        self.eq = sp.csr_matrix((np.ones(data.K), (data.child, np.arange(data.K))), shape=(data.n, data.K))
        self.rows: list[np.ndarray] = []
        self.rhs: list[float] = []

    def add(self, cvec: np.ndarray, k: int) -> None:
        """C's k-cluster cut in its ≤ form: Σ_{v∈C} Σ_{|W∩C|≥k} x ≤ |C| − k."""
        d = self.data
        row = np.zeros(d.K)
        row[cvec[d.child] & (d.pbool[:, cvec].sum(axis=1) >= k)] = 1.0
        self.rows.append(row)
        self.rhs.append(float(cvec.sum() - k))

    def solve(self) -> tuple[np.ndarray, float]:
        d = self.data
        a_ub = sp.csr_matrix(np.array(self.rows)) if self.rows else None
        res = linprog(-d.obj, A_ub=a_ub, b_ub=np.array(self.rhs) if self.rows else None, A_eq=self.eq,
                      b_eq=np.ones(d.n), bounds=(0, 1), method="highs")
        if res.status != 0:
            raise RuntimeError(f"the LP failed: {res.message}")
        return res.x, d.offset - res.fun


def _stages(max_k: int, subip_time: float, exact_stages: bool = True):
    """(name, separators): each separator maps x to a list of (cvec, k); later ones run only when the
    earlier ones of the stage find nothing. Without ``exact_stages``: the heuristic separators only, one
    stage per k (``+k-heur`` adds the k-cluster heuristic to the stage before)."""
    def heur(d, x):
        return [(c, 1) for c in _separate(d, x)]

    def exact(d, x):
        return [(c, 1) for c in subip_clusters(d, x, time_limit=subip_time)]

    def kheur_of(ks):
        return lambda d, x: [(c, k) for k in ks for c in kcluster_cuts(d, x, k)]

    def kexact(d, x):
        return [(c, k) for k in range(2, max_k + 1) for c in subip_clusters(d, x, time_limit=subip_time, k=k)]

    if not exact_stages:
        return [("heuristic", [heur])] + [(f"+{k}-heur", [heur, kheur_of(range(2, k + 1))])
                                          for k in range(2, max_k + 1)]
    kheur = kheur_of(range(2, max_k + 1))
    return [("heuristic", [heur]), ("exact", [heur, exact]), (f"+{max_k}-heur", [heur, exact, kheur]),
            (f"+{max_k}-exact", [heur, exact, kheur, kexact])]


def stage_gaps(table, opt: float, max_k: int = 2, subip_time: float = 20.0, exact_stages: bool = True):
    """For each stage of :func:`_stages`, (name, the LP bound's gap above ``opt``, rows so far, seconds so far).
    Every cut is valid, so each gap is ≥ 0 (to LP tolerance) and no stage's gap exceeds the one before."""
    data = _Data(table)
    lp = _Relaxation(data)
    t0 = time.perf_counter()
    out = []
    for name, separators in _stages(max_k, subip_time, exact_stages):
        for _ in range(MAX_ROUNDS):
            x, bound = lp.solve()
            cuts = []
            for separate in separators:
                cuts = separate(data, x)
                if cuts:
                    break
            if not cuts:
                break
            for cvec, k in cuts:
                lp.add(cvec, k)
        out.append((name, bound - opt, len(lp.rows), time.perf_counter() - t0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="FILE.jkl:BF (a Jaakkola score file and the Bayes factor)")
    parser.add_argument("--max-k", type=int, default=2, help="the largest k of the k-cluster stages")
    parser.add_argument("--subip-time", type=float, default=20.0, help="seconds per sub-IP call")
    parser.add_argument("--heuristic-only", action="store_true",
                        help="no sub-IP stages; one stage per k of the k-cluster heuristic")
    args = parser.parse_args()
    print(f"{'file':28} {'n':>3} {'families':>8} {'eps':>5} {'stage':10} {'gap':>9} {'rows':>5} {'s':>7}")
    for spec in args.files:
        path, _, bf = spec.rpartition(":")
        table = read_jaakkola(path)
        opt = ilp.solve(table, 0.0, enumerate_ties=False).optimum
        if opt is None:
            raise SystemExit(f"{path}: OPT not found")
        n, families = len(table.variables), sum(len(f) for f in table.families.values())
        for name, gap, rows, seconds in stage_gaps(table, opt, args.max_k, args.subip_time,
                                                   not args.heuristic_only):
            print(f"{os.path.basename(path)[:28]:28} {n:>3} {families:>8} {math.log(float(bf)):>5.2f} {name:10} "
                  f"{gap:>9.3f} {rows:>5} {seconds:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
