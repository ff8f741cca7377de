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

``--local M`` (3 or 4) adds a last stage, ``+local-M``: when the stage before finds nothing, *local cuts* from
every M-variable subset S (:func:`local_cuts`) — the strongest rows over families restricted to S: the
projection of x onto S (each family of a member v counted at its parents within S) must lie in the convex
hull of the DAGs on S (25 for M = 3, 543 for M = 4), which holds every cluster, k-cluster and
characteristic-imset row on S; a point outside is cut off by a facet-like row found by a small LP. The stage
stops after ``--local-rounds`` LP rounds (default 15), its gap then an upper bound on the local closure's.

Each stage prints the bound's gap above OPT in nats next to ε = ln BF, the rows added and the seconds. A gap
below ε at the root is what the search can use: phase 2 prunes a node once its bound falls below OPT − ε.
"""

from __future__ import annotations

import argparse
import functools
import itertools
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

    def add(self, row: np.ndarray, rhs: float) -> None:
        """The row ``row · x ≤ rhs``."""
        self.rows.append(row)
        self.rhs.append(float(rhs))

    def solve(self) -> tuple[np.ndarray, float]:
        d = self.data
        a_ub = sp.csr_matrix(np.array(self.rows)) if self.rows else None
        res = linprog(-d.obj, A_ub=a_ub, b_ub=np.array(self.rhs) if self.rows else None, A_eq=self.eq,
                      b_eq=np.ones(d.n), bounds=(0, 1), method="highs")
        if res.status != 0:
            raise RuntimeError(f"the LP failed: {res.message}")
        return res.x, d.offset - res.fun


def cluster_row(d: _Data, cvec: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """C's k-cluster cut as a dense ≤ row: the search's own row (:meth:`_Data.cluster_row`, the sparser of
    Σ_{v∈C} Σ_{|W∩C|≥k} x ≤ |C| − k and Σ_{v∈C} Σ_{|W∩C|<k} x ≥ k, equivalent given the convexity rows)."""
    families, lhs, rhs = d.cluster_row(cvec, k)
    row = np.zeros(d.K)
    if rhs is not None:
        row[families] = 1.0
        return row, rhs
    row[families] = -1.0
    return row, -float(lhs)


@functools.cache
def dag_vertices(m: int) -> np.ndarray:
    """Every DAG on m labelled vertices as a 0/1 row over the coordinates (v, W), v < m, W ⊆ {0…m−1}∖{v} as a
    bit mask, in the order v·2^m + W (coordinates with v ∈ W stay 0): 25 rows for m = 3, 543 for m = 4."""
    choices = [[w for w in range(1 << m) if not w >> v & 1] for v in range(m)]
    rows = []
    for choice in itertools.product(*choices):
        left = (1 << m) - 1
        while left:                              # remove a vertex with no parent left, until none remain
            free = [v for v in range(m) if left >> v & 1 and not choice[v] & left]
            if not free:
                break
            left &= ~(1 << free[0])
        if not left:
            row = np.zeros(m << m)
            row[[v * (1 << m) + w for v, w in enumerate(choice)]] = 1.0
            rows.append(row)
    return np.array(rows)


def _projection_index(d: _Data, subset: tuple[int, ...]) -> np.ndarray:
    """For each family of a member of ``subset``, its coordinate (position of the child, parents within the
    subset as a mask) in :func:`dag_vertices`' order; −1 for the other families."""
    m = len(subset)
    pos = np.full(d.n, -1)
    pos[list(subset)] = np.arange(m)
    inside = d.pbool[:, list(subset)].astype(np.int64) @ (1 << np.arange(m))
    return np.where(pos[d.child] >= 0, pos[d.child] * (1 << m) + inside, -1)


def local_cuts(d: _Data, x: np.ndarray, m: int, max_cuts: int = 200,
               tol: float = 1e-5) -> list[tuple[np.ndarray, float]]:
    """Rows ``a · y_S(x) ≤ b`` cutting x off, most violated first, for subsets S of m variables.

    y_S(x)(v, W) = Σ {x(v, Π) : Π ∩ S = W} is a convex combination of DAGs on S whenever x is one of DAGs
    on all variables (a DAG's restriction to S is a DAG), so every row valid for the DAGs on S is valid for
    the search; as a row over the families, a(v, Π ∩ S) is family (v, Π)'s coefficient. For each S where y is
    fractional and the LP point links its members, max a·y − b s.t. a·g ≤ b for every DAG g on S, −1 ≤ a ≤ 1
    (HiGHS); a positive optimum is the cut (the local cuts of Applegate et al. 2001, over the DAG polytope
    of S)."""
    verts = dag_vertices(m)
    sup = np.flatnonzero(x > 1e-7)
    weight = np.zeros((d.n, d.n))
    for f in sup:
        weight[d.pbool[f], d.child[f]] += x[f]
    linked = (weight + weight.T) > 1e-6
    fractional = np.zeros(d.n, dtype=bool)
    fractional[d.child[sup[x[sup] < 1 - 1e-6]]] = True
    a_ub = np.hstack([verts, -np.ones((len(verts), 1))])
    found = []
    for subset in itertools.combinations(range(d.n), m):
        if fractional[list(subset)].sum() < 2 or linked[np.ix_(subset, subset)].sum(axis=1).min() == 0:
            continue
        index = _projection_index(d, subset)
        at = index[sup] >= 0
        y = np.zeros(m << m)
        np.add.at(y, index[sup][at], x[sup][at])
        if np.all((y < 1e-6) | (y > 1 - 1e-6)):
            continue
        res = linprog(-np.append(y, -1.0), A_ub=a_ub, b_ub=np.zeros(len(verts)),
                      bounds=[(-1, 1)] * (m << m) + [(None, None)], method="highs")
        if res.status == 0 and -res.fun > tol:
            a, b = res.x[:-1], res.x[-1]
            row = np.where(index >= 0, a[np.maximum(index, 0)], 0.0)
            found.append((-res.fun, row, b))
    found.sort(key=lambda t: -t[0])
    return [(row, b) for _, row, b in found[:max_cuts]]


def _stages(max_k: int, subip_time: float, exact_stages: bool = True, local: int = 0):
    """(name, separators): each separator maps x to a list of rows (row, rhs); later ones run only when the
    earlier ones of the stage find nothing. Without ``exact_stages``: the heuristic separators only, one
    stage per k (``+k-heur`` adds the k-cluster heuristic to the stage before). ``local`` = M adds a stage
    with :func:`local_cuts` on M-variable subsets last."""
    def heur(d, x):
        return [cluster_row(d, c, 1) for c in _separate(d, x)]

    def exact(d, x):
        return [cluster_row(d, c, 1) for c in subip_clusters(d, x, time_limit=subip_time)]

    def kheur_of(ks):
        return lambda d, x: [cluster_row(d, c, k) for k in ks for c in kcluster_cuts(d, x, k)]

    def kexact(d, x):
        return [cluster_row(d, c, k) for k in range(2, max_k + 1)
                for c in subip_clusters(d, x, time_limit=subip_time, k=k)]

    if not exact_stages:
        stages = [("heuristic", [heur])] + [(f"+{k}-heur", [heur, kheur_of(range(2, k + 1))])
                                            for k in range(2, max_k + 1)]
    else:
        kheur = kheur_of(range(2, max_k + 1))
        stages = [("heuristic", [heur]), ("exact", [heur, exact]), (f"+{max_k}-heur", [heur, exact, kheur]),
                  (f"+{max_k}-exact", [heur, exact, kheur, kexact])]
    if local:
        stages.append((f"+local-{local}", [*stages[-1][1], lambda d, x: local_cuts(d, x, local)]))
    return stages


def stage_gaps(table, opt: float, max_k: int = 2, subip_time: float = 20.0, exact_stages: bool = True,
               local: int = 0, local_rounds: int = 15):
    """For each stage of :func:`_stages`, (name, the LP bound's gap above ``opt``, rows so far, seconds so far).
    Every cut is valid, so each gap is ≥ 0 (to LP tolerance) and no stage's gap exceeds the one before."""
    data = _Data(table)
    lp = _Relaxation(data)
    t0 = time.perf_counter()
    out = []
    for name, separators in _stages(max_k, subip_time, exact_stages, local):
        for _ in range(local_rounds if name.startswith("+local") else MAX_ROUNDS):
            x, bound = lp.solve()
            cuts = []
            for separate in separators:
                cuts = separate(data, x)
                if cuts:
                    break
            if not cuts:
                break
            for row, rhs in cuts:
                lp.add(row, rhs)
        out.append((name, bound - opt, len(lp.rows), time.perf_counter() - t0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="FILE.jkl:BF (a Jaakkola score file and the Bayes factor)")
    parser.add_argument("--max-k", type=int, default=2, help="the largest k of the k-cluster stages")
    parser.add_argument("--subip-time", type=float, default=20.0, help="seconds per sub-IP call")
    parser.add_argument("--heuristic-only", action="store_true",
                        help="no sub-IP stages; one stage per k of the k-cluster heuristic")
    parser.add_argument("--local", type=int, choices=(3, 4), default=0,
                        help="a last stage of local cuts on every subset of this many variables")
    parser.add_argument("--local-rounds", type=int, default=15,
                        help="LP rounds of the local stage (a round: about a minute on 36 variables)")
    args = parser.parse_args()
    for spec in args.files:         # "FILE" alone read as the path '' (a review)
        path, colon, bf = spec.rpartition(":")
        try:
            ok = bool(colon and path) and float(bf) >= 1
        except ValueError:
            ok = False
        if not ok:
            parser.error(f"{spec!r}: expected FILE:BF (a Jaakkola score file and a Bayes factor ≥ 1)")
    print(f"{'file':28} {'n':>3} {'families':>8} {'eps':>5} {'stage':10} {'gap':>9} {'rows':>5} {'s':>7}")
    for spec in args.files:
        path, _, bf = spec.rpartition(":")
        table = read_jaakkola(path)
        opt = ilp.solve(table, 0.0, enumerate_ties=False).optimum
        if opt is None:
            raise SystemExit(f"{path}: OPT not found")
        n, families = len(table.variables), sum(len(f) for f in table.families.values())
        for name, gap, rows, seconds in stage_gaps(table, opt, args.max_k, args.subip_time,
                                                   not args.heuristic_only, args.local, args.local_rounds):
            print(f"{os.path.basename(path)[:28]:28} {n:>3} {families:>8} {math.log(float(bf)):>5.2f} {name:10} "
                  f"{gap:>9.3f} {rows:>5} {seconds:>7.1f}", flush=True)


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
