"""Does the candidate-parent graph of a score file fall apart? (issue 10: the SCC split)

GOBNILP splits a problem into the strongly connected components of the candidate-parent graph
(u → v when u is in some candidate parent set of v): a DAG is then one DAG per component, and OPT
the sum of the components' optima. This prints the component sizes of each score file, to see
where the split could pay.

With ``--lp EPS`` it also asks whether the graph falls apart once the parent sets that no DAG within EPS
of OPT can use are dropped (the credible set would then be a product of the components' sets): OPT by
the search, the cluster LP (convexity rows and the cluster cuts that ``bnilp.ilp.sepa_cluster`` finds,
added until it finds none; x ≥ 0, so x ≤ 1 is implied) solved by HiGHS, and each family's reduced cost
d ≤ 0. Any DAG x with family f satisfies s(x) ≤ y·b + d_f = LP + d_f (weak duality over valid rows), so
LP + d_f < OPT − EPS rules f out of every credible DAG. Prints LP − OPT (the relaxation's gap: the
separation is heuristic, so the true cluster LP may be tighter), the sets kept, and the components of the
graph of the kept sets.

    python benchmarks/candidate_graph.py scorefiles/*.scores /tmp/t1tables/*.jkl
    python benchmarks/candidate_graph.py --lp 3.0 FILE…      # EPS = ln BF (here BF 20)
"""

from __future__ import annotations

import argparse

import networkx as nx
import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, vstack

from bnilp.graphs import to_digraph
from bnilp.ilp import solve
from bnilp.ilp.families import _Data
from bnilp.ilp.sepa_cluster import _separate
from bnilp.scorefile import read_jaakkola


def candidate_graph(data: _Data, keep: np.ndarray | None = None) -> nx.DiGraph:
    """The candidate-parent graph of a score table's families (those with ``keep``, by family index)."""
    union: dict[str, set[str]] = {v: set() for v in data.names}
    for k in range(data.K) if keep is None else np.flatnonzero(keep):
        union[data.names[data.child[k]]].update(data.sets[k])
    return to_digraph({v: sorted(ps) for v, ps in union.items()})


def cluster_lp(data: _Data, max_rounds: int = 1000) -> tuple[float, np.ndarray]:
    """The cluster LP's bound on Σ ``data.obj`` (a DAG's score less ``data.offset``) and the families'
    reduced costs d ≤ 0, cuts added until the separation finds none."""
    eq = csr_matrix((np.ones(data.K), (data.child, np.arange(data.K))), shape=(data.n, data.K))
    rows: list[csr_matrix] = []
    rhs: list[float] = []
    for _ in range(max_rounds):
        res = linprog(-data.obj, A_ub=vstack(rows) if rows else None, b_ub=np.array(rhs) if rows else None,
                      A_eq=eq, b_eq=np.ones(data.n), bounds=(0, None), method="highs")
        if res.status != 0:
            raise RuntimeError(f"the cluster LP: {res.message}")
        cuts = _separate(data, res.x)
        if not cuts:
            break
        for cvec in cuts:
            fam = data.cluster_families(cvec)
            rows.append(csr_matrix((np.ones(fam.size), (np.zeros(fam.size, dtype=int), fam)), shape=(1, data.K)))
            rhs.append(float(cvec.sum() - 1))
    return -res.fun, -res.lower.marginals


def credible_families(data: _Data, optimum: float, epsilon: float) -> tuple[float, np.ndarray]:
    """The cluster LP's bound less OPT (``optimum``, a DAG score), and which families some DAG within
    ``epsilon`` of OPT may use: those with LP + d_f ≥ OPT − ε (less 1e-6 of OPT − ``data.offset``)."""
    lp, reduced = cluster_lp(data)
    opt = optimum - data.offset
    return lp - opt, lp + reduced >= opt - epsilon - 1e-6 * max(1.0, abs(opt))


def _sizes(graph: nx.DiGraph) -> tuple[int, str]:
    sizes = sorted((len(c) for c in nx.strongly_connected_components(graph)), reverse=True)
    return len(sizes), ", ".join(map(str, sizes[:4])) + (", …" if len(sizes) > 4 else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--lp", type=float, default=None, metavar="EPS")
    args = parser.parse_args()
    head = f"{'score file':<30} {'n':>4} {'sets':>8} {'SCCs':>5}  {'sizes':<14}"
    if args.lp is not None:
        head += f" {'LP - OPT':>9} {'kept':>7} {'SCCs':>5}  sizes"
    print(head)
    for path in args.files:
        table = read_jaakkola(path)
        data = _Data(table)
        count, shown = _sizes(candidate_graph(data))
        name = path.rsplit("/", 1)[-1]
        line = f"{name:<30} {data.n:>4} {data.K:>8} {count:>5}  {shown:<14}"
        if args.lp is not None:
            gap, keep = credible_families(data, solve(table, 0.0, max_networks=1).optimum, args.lp)
            count, shown = _sizes(candidate_graph(data, keep))
            line += f" {gap:>9.3f} {int(keep.sum()):>7} {count:>5}  {shown}"
        print(line, flush=True)


if __name__ == "__main__":
    from common import run_script  # here: the tests load this script without its folder

    run_script(main)
