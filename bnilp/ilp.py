"""Exact Bayesian-network structure learning by integer programming: OPT, then the credible set.

Model (Jaakkola et al., AISTATS 2010; Cussens, UAI 2011; Bartlett & Cussens, AIJ 2017):

- one binary ``x(i, Π)`` per candidate parent set Π of variable i, objective ``s(i, Π)``, maximize;
- convexity ``Σ_Π x(i, Π) = 1`` for every i;
- acyclicity by *cluster constraints*: for every cluster C (|C| ≥ 2)
  ``Σ_{i∈C} Σ_{Π∩C≠∅} x(i, Π) ≤ |C| − 1``, written in whichever of this form and the equivalent
  ``Σ_{i∈C} Σ_{Π∩C=∅} x(i, Π) ≥ 1`` has fewer nonzeros. All 2-clusters (the arrow constraints
  ``a(j→i) + a(i→j) ≤ 1`` written in family variables) are rows from the start; larger clusters are
  added lazily by a ``pyscipopt.Conshdlr``: ``conscheck``/``consenfolp``/``consenfops`` test the
  integral parent choice with a topological sort and cut off every cycle with the cluster cut of
  its strongly connected component; ``conssepalp`` separates cluster cuts from the fractional LP
  point with numpy heuristics over the support families: seeds are the SCCs of the arrow-weight
  digraph at several thresholds and each variable's heaviest two-way pair, improved by a best
  add/drop local search on the violation. GOBNILP's exact cluster sub-IP is not implemented:
  enforcement alone makes the model exact, the sub-IP would only strengthen the root bound.
- a sink-finding primal heuristic (``pyscipopt.Heur``) rounds the LP solution to a DAG; the same
  routine on the scores alone gives the starting solution; a user DAG can be a warm start.

The objective is shifted by each variable's best local score (coefficients ≤ 0, small magnitudes);
reported scores are always recomputed with ``math.fsum`` from the table.

Phase 1 proves OPT by branch-and-cut. Phase 2 lists every DAG G with s(G) ≥ OPT − ε in ONE further
branch-and-cut ("collect and exclude", as GOBNILP_dev in Liao et al., AAAI 2019): the objective limit
is OPT − ε − tol (tol = 1e-5·max(1, |shifted OPT| + ε)), ``conscheck`` rejects every candidate, and
``consenfolp``/``consenfops`` record each integral acyclic solution and add its global no-good
``Σ_i x(i, Π_i) ≤ n − 1`` (``CONSADDED``); presolving, restarts, symmetry handling, conflict
analysis, primal heuristics and dual reductions are off so that no DAG is lost. The solve ends
"infeasible" once every credible DAG has been excluded — the normal end. The phase-1 cluster cuts
start phase 2 as rows. Collected DAGs are filtered with their fsum scores against
OPT − ε − 1e-9·max(1, |OPT|): the tiny tolerance (the same as the tests' brute-force oracle) keeps
score-equivalent DAGs whose file scores differ by rounding — wine.BIC.3 (8 decimals) has 12 DAGs
at exactly OPT and 36 more at OPT − 1e-8, all listed at BF 1.

Measured (2 shared cores, PySCIPOpt 6.3 / SCIP 10; ``benchmarks/solve_table1.py``):

- SCIP's ``aggregation`` separator took 5 of 8 s of a 25-variable root and never cut: off;
  ``rapidlearning`` (a sub-SCIP that cannot see the handler) doubled wine phase 2: off;
  ``gomory`` off: wine.BIC.3 phase 1 1.3 → 0.2 s, phase 2 (BF 3) 4.4 → 1.4 s;
  hybrid cut selection with orthogonality 0 (cluster cuts overlap): 16 → 10 s on a dense root.
- sparse cluster rows: nltcs (8,929 families) phase 1 46 → 25 s, zoo 3.1 → 1.4 s.
- phase 2 without ``constraints/linear`` separation (rows are plain linear constraints there; their
  knapsack separation took 19 of 28 s of the nltcs root): wine 2.5 → 2.3 s, zoo 3.5 → 3.0 s.
- the sink-finding heuristic: same LPs and nodes with and without it on zoo, tic-tac-toe and a
  dense table (SCIP's own heuristics find the optimum first); kept for time-limited runs.
- arrow variables with branching priority (``ARROW_VARIABLES``): no gain on wine, asia, alarm or a
  dense 25-variable table, so off. Pseudocost-only branching: no gain.
- large-family instances stay slow: nltcs phase 1 ≈ 25–40 s (the LP with 8,929 columns dominates),
  adult (3,935 families, scores ≈ −2e5) does not close its 1 % root gap in 120 s; strong branching
  took 22 of 30 s there. GOBNILP needs 17–54 s for these.

Class enumeration (``enumerate_by="mecs"``, score-equivalent scores): phase 2 records one DAG per class
and excludes its whole Markov equivalence class by GOBNILP's kbestMEC no-good (:meth:`_Data.mec_row`),
written over adjacency and collider indicator variables linked to the families once
(``MEC_ROW_FORM``) and enforced on integral points only (``MEC_ROWS_IN_LP``). Measured on hepatitis
BF 20 (120 s, 2 cores): dense family rows in the LP 1,842 classes (12,639 DAGs counted in 400 s),
family rows lazily 2,355, indicator rows lazily 3,102 (18,522 DAGs); DAG enumeration lists 15,260 DAGs
in the same time. wine BF 20: 19.9 s for 101 classes against 21.1 s for their 3,449 DAGs.

SCIP's counting mode (``setParamsCountsols``) was not measured: it switches separation off by
default, has no binding to read the solutions back, and so needs this handler to record them anyway.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
from pyscipopt import (
    SCIP_HEURTIMING,
    SCIP_LPSOLSTAT,
    SCIP_PARAMSETTING,
    SCIP_RESULT,
    SCIP_STAGE,
    Conshdlr,
    Heur,
    Model,
    quicksum,
)
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from bnilp.errors import InputError
from bnilp.scorefile import ScoreTable

Parents = dict[str, frozenset[str]]

logger = logging.getLogger(__name__)

_INT_TOL = 0.5          # an integral value is read as 1 when above this
_CUT_TOL = 1e-6         # minimal violation of a separated cluster cut
_SUPPORT_TOL = 1e-7     # LP values below this are treated as 0 by the separator
_THRESHOLDS = (0.999, 0.5, 0.25, 1e-6)   # arrow-weight thresholds for the SCC separator

#: Extra SCIP parameters of phase 2 (enumeration must not lose solutions: no restarts, no dual
#: reductions, no conflict analysis; presolving and heuristics are switched off in ``solve``).
PHASE2_PARAMS: dict[str, Any] = {
    "presolving/maxrestarts": 0,
    "misc/allowstrongdualreds": False,
    "misc/allowweakdualreds": False,
    "conflict/enable": False,
    # Without presolving the rows stay "linear" constraints, whose knapsack separation took
    # 19 of 28 s of the nltcs root: rows not in the LP are still added by enforcement.
    "constraints/linear/sepafreq": -1,
}

#: Arrow variables a(j→i) = Σ_{Π∋j} x(i, Π) with a higher branching priority than the families.
ARROW_VARIABLES = False

#: Write each cluster constraint in its sparser equivalent form (see ``_Data.cluster_row``).
SPARSE_CLUSTERS = True

#: SCIP parameters of both phases (measured on wine.BIC.3 and random 25-variable tables).
SCIP_PARAMS: dict[str, Any] = {
    "misc/usesymmetry": 0,                   # symmetry detection does not see the cluster handler
    "limits/gap": 0.0,
    "limits/absgap": 0.0,
    "separating/aggregation/freq": -1,       # seconds per round, never a cut on BNSL
    "separating/rapidlearning/freq": -1,     # sub-SCIP without the cluster handler: 2x slower
    "separating/gomory/freq": -1,            # wine.BIC.3: phase 1 1.3 s -> 0.2 s, phase 2 4.4 -> 1.4 s
    "cutselection/hybrid/minorthoroot": 0.0,  # cluster cuts overlap: keep near-parallel ones
    "cutselection/hybrid/minortho": 0.0,
}


@dataclass
class Network:
    """A DAG: ``score`` is the fsum of its local scores; ``parents`` has every variable."""

    score: float
    parents: Parents


@dataclass
class SolveResult:
    """Outcome of :func:`solve`. ``networks`` are best first, each listed once, and all have
    score ≥ OPT − ε − 1e-9·max(1, |OPT|) (fsum scores; the tolerance only absorbs float noise)."""

    optimum: float | None
    bound: float
    gap: float
    status: str
    seconds: float
    epsilon: float
    complete: bool
    networks: list[Network]
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    enumerated: str = "dags"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (non-finite floats become ``None``)."""
        return {
            "optimum": _finite(self.optimum),
            "bound": _finite(self.bound),
            "gap": _finite(self.gap),
            "status": self.status,
            "seconds": self.seconds,
            "epsilon": self.epsilon,
            "complete": self.complete,
            "n_networks": len(self.networks),
            "networks": [{"score": net.score,
                          "parents": {v: sorted(ps) for v, ps in net.parents.items()}}
                         for net in self.networks],
            "stats": {k: _jsonable(v) for k, v in self.stats.items()},
            "message": self.message,
            "enumerate": self.enumerated,
        }


#: how a class no-good is written: over the family variables (dense) or over adjacency/collider
#: indicator variables linked to the families once ("indicators", GOBNILP kbestMEC's form)
MEC_ROW_FORM = "indicators"
#: whether each class no-good enters the LP at once (True) or only enforces integral points (False)
MEC_ROWS_IN_LP = False

#: what phase 2 enumerates: every credible DAG, or one representative per credible Markov equivalence class
ENUMERATE_UNITS = ("dags", "mecs")

#: every status a solve can end in, with ``complete`` and the CLI's exit code (README, "Statuses")
STATUSES = {
    "optimal": "OPT proven; the credible set is complete (exit 0)",
    "infeasible": "the score table admits no DAG (exit 2, no result)",
    "time_limit": "the time limit stopped phase 1 or 2; OPT or the set is not proven (exit 3)",
    "memory_limit": "SCIP's memory limit stopped the search (exit 3)",
    "network_limit": "max_networks networks collected; there may be more (exit 3)",
    "interrupted": "SIGINT (Ctrl-C) or SIGTERM stopped the search; what was found is kept (exit 3)",
}


@dataclass
class _Signals:
    """SIGTERM seen during a solve, and the model to interrupt (SCIP itself catches SIGINT)."""

    received: bool = False
    model: Any = None


@contextmanager
def _sigterm_interrupts(sig: _Signals):
    """While solving, SIGTERM interrupts SCIP like Ctrl-C does (main thread only; Python runs the
    handler at the next callback into Python, which the cluster handler makes frequent)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        sig.received = True
        if sig.model is not None and sig.model.getStage() == SCIP_STAGE.SOLVING:
            sig.model.interruptSolve()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _early_stop(scip_status: str, sig: _Signals) -> tuple[str, str]:
    """(status, words) for a search that SCIP ended before it was done (not optimal, not infeasible)."""
    if sig.received or scip_status == "userinterrupt":
        return "interrupted", "interrupted (SIGINT/SIGTERM)"
    if scip_status == "memlimit":
        return "memory_limit", "memory limit reached"
    return "time_limit", "time limit reached"


def _tie_tol(opt: float) -> float:
    """Float noise allowed below OPT − ε (the tests' oracle uses the same): score-equivalent DAGs
    whose file scores differ only by rounding (e.g. 1e-8 in 8-decimal files) stay in the set."""
    return 1e-9 * max(1.0, abs(opt))


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _finite(float(value))
    return value


def to_digraph(parents: Parents) -> nx.DiGraph:
    """The network as a DiGraph: every variable a node, an edge parent → child per arrow."""
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    for child, ps in parents.items():
        graph.add_edges_from((p, child) for p in sorted(ps))
    return graph


class _Data:
    """Flattened families. Family k: child ``child[k]``, parents ``pbool[k]`` (bool row over
    variables), exact score ``score[k]``, shifted objective ``obj[k] = score[k] − best[child]``.
    Families of one child are contiguous (``start[i]:start[i+1]``) and sorted best first."""

    def __init__(self, table: ScoreTable):
        self.names = list(table.variables)
        self.n = n = len(self.names)
        index = {v: i for i, v in enumerate(self.names)}
        child, sets, scores, start = [], [], [], [0]
        for i, v in enumerate(self.names):
            for ps, s in table.sorted_family(v):
                child.append(i)
                sets.append(ps)
                scores.append(float(s))
            start.append(len(child))
        self.K = len(child)
        self.child = np.asarray(child, dtype=np.intp)
        self.sets: list[frozenset[str]] = sets
        self.score = np.asarray(scores, dtype=float)
        self.start = np.asarray(start, dtype=np.intp)
        self.pbool = np.zeros((self.K, n), dtype=bool)
        for k, ps in enumerate(sets):
            self.pbool[k, [index[p] for p in ps]] = True
        self.pmask = [sum(1 << index[p] for p in ps) for ps in sets]
        self.best = np.array([self.score[start[i]] if start[i + 1] > start[i] else -math.inf
                              for i in range(n)])
        self.offset = math.fsum(self.best) if n else 0.0
        self.obj = self.score - self.best[self.child] if self.K else np.zeros(0)

    def exact(self, choice: tuple[int, ...]) -> float:
        return math.fsum(self.score[k] for k in choice)

    def parents(self, choice: tuple[int, ...]) -> Parents:
        return {self.names[self.child[k]]: self.sets[k] for k in choice}

    def mec_row(self, choice: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
        """The no-good that excludes the whole Markov equivalence class of the DAG ``choice``.

        With adj_e = Σ_{Π∋u} x(v,Π) + Σ_{Π∋v} x(u,Π) (0/1 on DAGs: the 2-cluster rows) and
        col_(a,c,b) = Σ_{Π⊇{a,b}} x(c,Π), a DAG is in the class of M iff it has M's skeleton E and,
        on M's unshielded triples U, colliders exactly at M's v-structures V (Verma & Pearl 1990):

            Σ_{e∈E} (1 − adj_e) + Σ_{e∉E} adj_e + Σ_{t∈V} (1 − col_t) + Σ_{t∈U∖V} col_t ≥ 1

        excludes exactly the class (every term is 0 or 1 on a DAG, all are 0 only inside it) —
        GOBNILP's kbestMEC row written in the family variables. Family (c, Π) gets the coefficient
        |Π| − 2·|Π ∩ E(c)| + p(Π ∩ E(c)) − 2·p(Π ∩ Pa_M(c)), p(S) = the pairs of S non-adjacent in M.
        Returns (family indices, coefficients, right-hand side 1 − |E| − |V|)."""
        n = self.n
        pa = np.zeros((n, n), dtype=bool)               # pa[c, u]: u → c in M
        for k in choice:
            pa[self.child[k]] = self.pbool[k]
        adj = pa | pa.T
        nonadj = ~adj
        np.fill_diagonal(nonadj, False)
        p = self.pbool.astype(np.int64)
        inn = (self.pbool & adj[self.child]).astype(np.int64)      # Π ∩ neighbours of c in M
        inpa = (self.pbool & pa[self.child]).astype(np.int64)      # Π ∩ parents of c in M
        na = nonadj.astype(np.int64)
        pairs_nbrs = ((inn @ na) * inn).sum(axis=1) // 2
        pairs_pa = ((inpa @ na) * inpa).sum(axis=1) // 2
        coef = p.sum(axis=1) - 2 * inn.sum(axis=1) + pairs_nbrs - 2 * pairs_pa
        n_edges = int(adj.sum()) // 2
        n_vstructs = int(sum(((pa[c].astype(np.int64) @ na) * pa[c]).sum() // 2 for c in range(n)))
        fams = np.flatnonzero(coef)
        return fams, coef[fams].astype(float), float(1 - n_edges - n_vstructs)

    def class_indicators(self) -> tuple[dict[tuple[int, int], np.ndarray], dict[tuple[int, int, int], np.ndarray]]:
        """Families behind each adjacency indicator adj_{u,v} (u < v) and each collider indicator
        col_(a,c,b) = Σ_{Π⊇{a,b}} x(c,Π) (a < b) that some family can switch on."""
        pairs: dict[tuple[int, int], list[int]] = {}
        triples: dict[tuple[int, int, int], list[int]] = {}
        for k in range(self.K):
            c = int(self.child[k])
            ps = np.flatnonzero(self.pbool[k]).tolist()
            for u in ps:
                pairs.setdefault((min(u, c), max(u, c)), []).append(k)
            for i, a in enumerate(ps):
                for b in ps[i + 1:]:
                    triples.setdefault((a, c, b), []).append(k)
        return ({p: np.asarray(f, dtype=np.intp) for p, f in pairs.items()},
                {t: np.asarray(f, dtype=np.intp) for t, f in triples.items()})

    def mec_row_indicators(self, choice: tuple[int, ...], pairs: Any, triples: Any
                           ) -> tuple[list[tuple[str, Any]], float]:
        """:meth:`mec_row` over the indicators of :meth:`class_indicators`: [(("adj", p) | ("col", t), coef)] and
        the right-hand side — O(candidate pairs + triples) nonzeros instead of one per family."""
        n = self.n
        pa = np.zeros((n, n), dtype=bool)
        for k in choice:
            pa[self.child[k]] = self.pbool[k]
        adj = pa | pa.T
        terms: list[tuple[Any, float]] = [(("adj", p), -1.0 if adj[p] else 1.0) for p in pairs]
        n_edges = int(adj.sum()) // 2
        n_v = 0
        for c in range(n):
            nbrs = np.flatnonzero(adj[c]).tolist()
            for i, a in enumerate(nbrs):
                for b in nbrs[i + 1:]:
                    if adj[a, b]:
                        continue
                    if pa[c, a] and pa[c, b]:
                        terms.append((("col", (a, c, b)), -1.0))
                        n_v += 1
                    elif (a, c, b) in triples:
                        terms.append((("col", (a, c, b)), 1.0))
        return terms, float(1 - n_edges - n_v)

    def cluster_families(self, cvec: np.ndarray) -> np.ndarray:
        """Indices of families whose child is in C and whose parents meet C."""
        sel = cvec[self.child] & self.pbool[:, cvec].any(axis=1)
        return np.flatnonzero(sel)

    def cluster_row(self, cvec: np.ndarray) -> tuple[np.ndarray, float | None, float | None]:
        """The sparser of the two equivalent forms of C's cluster constraint (equivalent given
        the convexity rows): ``Σ_{i∈C} Σ_{Π∩C≠∅} x ≤ |C| − 1`` or ``Σ_{i∈C} Σ_{Π∩C=∅} x ≥ 1``.
        Returns (family indices, lhs, rhs) with ``None`` for an infinite side."""
        in_c = cvec[self.child]
        meets = in_c & self.pbool[:, cvec].any(axis=1)
        n_meets = int(meets.sum())
        if SPARSE_CLUSTERS and int(in_c.sum()) > n_meets and 2 * n_meets > int(in_c.sum()):
            return np.flatnonzero(in_c & ~meets), 1.0, None
        return np.flatnonzero(meets), None, float(cvec.sum() - 1)


def _cyclic_components(data: _Data, chosen: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components (size ≥ 2, as bool vectors) of the union of the chosen
    families' arrows; empty when that graph is a DAG."""
    n = data.n
    pm = [0] * n
    for k in chosen:
        pm[data.child[k]] |= data.pmask[k]
    remaining = (1 << n) - 1
    while True:
        sources = 0
        for i in range(n):
            if remaining >> i & 1 and not pm[i] & remaining:
                sources |= 1 << i
        if not sources:
            break
        remaining &= ~sources
    if not remaining:
        return []
    rows, cols = [], []
    for k in chosen:
        i = data.child[k]
        for j in np.flatnonzero(data.pbool[k]):
            rows.append(j)
            cols.append(i)
    adj = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    ncomp, labels = connected_components(adj, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=ncomp)
    return [labels == c for c in np.flatnonzero(sizes >= 2)]


def _choice(data: _Data, vals: np.ndarray) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """(families at 1, the parent choice if exactly one family per variable is at 1)."""
    chosen = np.flatnonzero(vals > _INT_TOL)
    counts = np.bincount(data.child[chosen], minlength=data.n)
    if data.n and np.all(counts == 1):
        return chosen, tuple(int(k) for k in chosen)
    return chosen, None


def _separate(data: _Data, x: np.ndarray, max_cuts: int = 50) -> list[np.ndarray]:
    """Violated cluster cuts (bool vectors over variables) for the fractional point ``x``.

    Seeds: the SCCs of the arrow-weight digraph at several thresholds and, for every variable,
    the pair with its heaviest two-way arrow weight. Each seed is improved by a best-move local
    search (add or drop one variable) on the violation ``Σ_{i∈C} Σ_{Π∩C≠∅} x − (|C| − 1)``,
    vectorised over the support families of ``x``."""
    n = data.n
    sup = np.flatnonzero(x > _SUPPORT_TOL)
    if not len(sup) or n < 2:
        return []
    xs, cs, ps = x[sup], data.child[sup], data.pbool[sup]
    pint = ps.astype(np.int32)
    is_child = cs[:, None] == np.arange(n)[None, :]          # (support, n)
    onehot = is_child * xs[:, None]
    weight = pint.T.astype(float) @ onehot                   # weight[j, i] = x-mass of arrow j -> i

    def improve(cvec: np.ndarray) -> tuple[float, np.ndarray]:
        size = int(cvec.sum())
        cnt = pint @ cvec.astype(np.int32)
        in_c = cvec[cs]
        value = float(xs[in_c & (cnt > 0)].sum()) - (size - 1)
        for _ in range(2 * n):
            add = xs @ (((cnt[:, None] + pint) > 0) & (in_c[:, None] | is_child)) - size
            add[cvec] = -np.inf
            if size > 2:
                drop = xs @ (((cnt[:, None] - pint) > 0) & (in_c[:, None] & ~is_child)) - (size - 2)
                drop[~cvec] = -np.inf
            else:
                drop = np.full(n, -np.inf)
            va, vd = int(np.argmax(add)), int(np.argmax(drop))
            if max(add[va], drop[vd]) <= value + 1e-9:
                break
            if add[va] >= drop[vd]:
                v, value, size = va, float(add[va]), size + 1
                cvec[v] = True
                cnt += pint[:, v]
            else:
                v, value, size = vd, float(drop[vd]), size - 1
                cvec[v] = False
                cnt -= pint[:, v]
            in_c = cvec[cs]
        return value, cvec

    seeds: list[np.ndarray] = []
    for thr in _THRESHOLDS:
        ncomp, labels = connected_components(csr_matrix(weight >= thr), directed=True, connection="strong")
        sizes = np.bincount(labels, minlength=ncomp)
        seeds.extend(labels == comp for comp in np.flatnonzero(sizes >= 2))
    two_way = np.minimum(weight, weight.T)
    np.fill_diagonal(two_way, 0.0)
    for i in np.flatnonzero(two_way.max(axis=1) > _SUPPORT_TOL):
        cvec = np.zeros(n, dtype=bool)
        cvec[[i, int(np.argmax(two_way[i]))]] = True
        seeds.append(cvec)
    seen: set[bytes] = set()
    found: dict[bytes, tuple[float, np.ndarray]] = {}
    for cvec in seeds:
        key = cvec.tobytes()
        if key in seen:
            continue
        seen.add(key)
        value, cvec = improve(cvec.copy())
        if value > _CUT_TOL:
            found.setdefault(cvec.tobytes(), (value, cvec))
    cuts = sorted(found.values(), key=lambda vc: -vc[0])
    return [c for _, c in cuts[:max_cuts]]


def _sink_dag(data: _Data, x: np.ndarray, usable: np.ndarray | None = None) -> tuple[int, ...] | None:
    """Round ``x`` to a DAG by sink finding: repeatedly make the variable whose best allowed
    family (parents among the variables not yet placed) has the largest x (then the best score)
    a sink. Only families in ``usable`` (default all) are used. Returns a parent choice (one
    family index per variable, in variable order) or None."""
    n, K = data.n, data.K
    if n == 0:
        return ()
    starts = data.start[:-1]
    inR = np.ones(n, dtype=bool)
    nbad = np.zeros(K, dtype=np.intp)
    pos_all = np.arange(K)
    choice = [-1] * n
    for _ in range(n):
        allowed = (nbad == 0) & inR[data.child]
        if usable is not None:
            allowed &= usable
        key = np.where(allowed, x, -np.inf)
        m = np.maximum.reduceat(key, starts)
        m[~inR] = -np.inf
        top = m.max()
        if not math.isfinite(top):
            return None
        cond = allowed & (key >= m[data.child] - 1e-9)
        first = np.minimum.reduceat(np.where(cond, pos_all, K), starts)
        cand = np.flatnonzero(inR & (m >= top - 1e-9))
        objs = data.obj[np.minimum(first[cand], K - 1)]
        i = int(cand[int(np.argmax(objs))])
        choice[i] = int(first[i])
        inR[i] = False
        nbad[data.pbool[:, i]] += 1
    return tuple(choice)


class _Acyclicity(Conshdlr):
    """Acyclicity of the parent choice (phase 1) or collect-and-exclude enumeration (phase 2)."""

    def __init__(self, data: _Data, xvars: list, enumerate_mode: bool, stats: dict,
                 on_record: Callable[[tuple[int, ...]], None] | None = None,
                 tick: Callable[[], None] | None = None, classes: bool = False):
        self.data = data
        self.classes = classes
        self.indicator_vars: dict = {}             # adj/col variables (MEC_ROW_FORM "indicators"), set by _build
        self.indicators: dict | None = None         # their transformed counterparts
        self.indicator_index: tuple = ()
        self.tick = tick
        self.xvars = xvars
        self.tvars: list | None = None
        self.enumerate_mode = enumerate_mode
        self.stats = stats
        self.on_record = on_record
        self.recorded: set[tuple[int, ...]] = set()
        self.clusters: dict[bytes, np.ndarray] = {}

    def _indicators(self) -> None:
        """Transformed adj/col variables, once the model is being solved."""
        if self.indicators is None and self.indicator_vars:
            self.indicators = {k: self.model.getTransformedVar(v) for k, v in self.indicator_vars.items()}

    def _tv(self) -> list:
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.xvars]
        return self.tvars

    def _lp_values(self) -> np.ndarray:
        return np.fromiter((v.getLPSol() for v in self._tv()), dtype=float, count=self.data.K)

    def _sol_values(self, sol) -> np.ndarray:
        get = self.model.getSolVal
        return np.fromiter((get(sol, v) for v in self._tv()), dtype=float, count=self.data.K)

    def _add_cluster_row(self, cvec: np.ndarray, kind: str) -> None:
        fams, lhs, rhs = self.data.cluster_row(cvec)
        model = self.model
        row = model.createEmptyRowUnspec(name=f"cluster{self.stats['cuts_total']}", lhs=lhs,
                                         rhs=rhs, local=False, removable=True)
        model.cacheRowExtensions(row)
        tv = self._tv()
        for k in fams:
            model.addVarToRow(row, tv[k], 1.0)
        model.flushRowExtensions(row)
        model.addCut(row, forcecut=kind != "sepa")
        model.addPoolCut(row)
        model.releaseRow(row)
        self._count(cvec, kind)

    def _add_cluster_cons(self, cvec: np.ndarray, kind: str) -> None:
        self.model.addCons(_cluster_expr(self._tv(), *self.data.cluster_row(cvec)),
                           name=f"clustercons{self.stats['cuts_total']}", removable=True)
        self._count(cvec, kind)

    def _count(self, cvec: np.ndarray, kind: str) -> None:
        self.clusters.setdefault(cvec.tobytes(), cvec.copy())
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        self.stats["cuts_total"] += 1

    def _record(self, choice: tuple[int, ...]) -> None:
        """Phase 2: store the DAG and exclude it (or, with ``classes``, its whole MEC) by a global no-good."""
        self.recorded.add(choice)
        tv = self._tv()
        if self.classes:
            t0 = time.perf_counter()
            self._indicators()
            if self.indicators is not None:
                terms, rhs = self.data.mec_row_indicators(choice, *self.indicator_index)
                tind = self.indicators
                expr = quicksum(c * tind[key] for key, c in terms)
                nnz = len(terms)
            else:
                fams, coef, rhs = self.data.mec_row(choice)
                expr = quicksum(c * tv[k] for k, c in zip(fams.tolist(), coef.tolist(), strict=True))
                nnz = int(fams.size)
            self.model.addCons(expr >= rhs, name=f"mecnogood{len(self.recorded)}", initial=MEC_ROWS_IN_LP,
                               removable=False)
            self.stats["mec_row_seconds"] = self.stats.get("mec_row_seconds", 0.0) + time.perf_counter() - t0
            self.stats["mec_row_nonzeros"] = self.stats.get("mec_row_nonzeros", 0) + nnz
            kind = "mec_nogood"
        else:
            self.model.addCons(quicksum(tv[k] for k in choice) <= self.data.n - 1,
                               name=f"nogood{len(self.recorded)}", removable=False)
            kind = "nogood"
        self.stats["cuts"][kind] = self.stats["cuts"].get(kind, 0) + 1
        if self.on_record is not None:
            self.on_record(choice)

    def _enforce(self, vals: np.ndarray, lp: bool, solinfeasible: bool) -> dict:
        t0 = time.perf_counter()
        try:
            chosen, choice = _choice(self.data, vals)
            comps = _cyclic_components(self.data, chosen)
            if comps:
                for cvec in comps:
                    if lp:
                        self._add_cluster_row(cvec, "enfolp")
                    else:
                        self._add_cluster_cons(cvec, "enfops")
                return {"result": SCIP_RESULT.SEPARATED if lp else SCIP_RESULT.CONSADDED}
            if not self.enumerate_mode:
                return {"result": SCIP_RESULT.FEASIBLE}
            if choice is None or choice in self.recorded:
                return {"result": SCIP_RESULT.INFEASIBLE}
            self._record(choice)
            return {"result": SCIP_RESULT.CONSADDED}
        finally:
            self.stats["python_enforce_seconds"] += time.perf_counter() - t0

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce(self._lp_values(), True, solinfeasible)

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce(self._sol_values(None), False, solinfeasible)

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        if self.enumerate_mode:
            return {"result": SCIP_RESULT.INFEASIBLE}
        chosen, _ = _choice(self.data, self._sol_values(solution))
        if _cyclic_components(self.data, chosen):
            return {"result": SCIP_RESULT.INFEASIBLE}
        return {"result": SCIP_RESULT.FEASIBLE}

    def conssepalp(self, constraints, nusefulconss):
        if self.tick is not None:
            self.tick()
        t0 = time.perf_counter()
        try:
            cuts = _separate(self.data, self._lp_values())
            for cvec in cuts:
                self._add_cluster_row(cvec, "sepa")
            self.stats["sepa_calls"] += 1
            return {"result": SCIP_RESULT.SEPARATED if cuts else SCIP_RESULT.DIDNOTFIND}
        finally:
            self.stats["python_sepa_seconds"] += time.perf_counter() - t0

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        vars_ = self.xvars if constraint is None or constraint.isOriginal() else self._tv()
        both = nlockspos + nlocksneg
        for v in vars_:
            self.model.addVarLocksType(v, locktype, both, both)


class _SinkHeur(Heur):
    """Rounds the LP solution to a DAG (sink finding) and offers it to SCIP."""

    def __init__(self, hdlr: _Acyclicity, stats: dict, tick: Callable[[], None]):
        self.hdlr = hdlr
        self.stats = stats
        self.tick = tick

    def heurexec(self, heurtiming, nodeinfeasible):
        model = self.model
        self.tick()
        if model.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        t0 = time.perf_counter()
        data = self.hdlr.data
        usable = np.fromiter((v.getUbGlobal() > _INT_TOL for v in self.hdlr._tv()), dtype=bool,
                             count=data.K)
        choice = _sink_dag(data, self.hdlr._lp_values(), usable)
        self.stats["python_heur_seconds"] += time.perf_counter() - t0
        if choice is None:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        value = math.fsum(data.obj[k] for k in choice)
        if model.getNSols() and value <= model.getPrimalbound() + 1e-9:     # shifted objective
            return {"result": SCIP_RESULT.DIDNOTFIND}
        sol = model.createSol(self)
        tv = self.hdlr._tv()
        for k in choice:
            model.setSolVal(sol, tv[k], 1.0)
        if model.trySol(sol, printreason=False):
            self.stats["heur_solutions"] += 1
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}


def _new_stats() -> dict[str, Any]:
    return {"cuts": {}, "cuts_total": 0, "sepa_calls": 0, "python_sepa_seconds": 0.0,
            "python_enforce_seconds": 0.0, "python_heur_seconds": 0.0, "heur_solutions": 0}


def _cluster_expr(vars_: list, fams: np.ndarray, lhs: float | None, rhs: float | None):
    expr = quicksum(vars_[k] for k in fams)
    return expr >= lhs if lhs is not None else expr <= rhs


def _build(data: _Data, stats: dict, enumerate_mode: bool, verbose: bool,
           on_record: Callable[[tuple[int, ...]], None] | None = None,
           clusters: list[np.ndarray] | None = None,
           tick: Callable[[], None] | None = None, classes: bool = False) -> tuple[Model, list, _Acyclicity]:
    """The family-variable model with convexity rows, all 2-cluster rows and the handler."""
    model = Model("bnilp")
    model.hideOutput(not verbose)
    xvars = [model.addVar(name=f"x{k}", vtype="B", obj=float(data.obj[k])) for k in range(data.K)]
    model.setMaximize()
    for i in range(data.n):
        model.addCons(quicksum(xvars[k] for k in range(data.start[i], data.start[i + 1])) == 1,
                      name=f"convex_{i}")
    pair = np.zeros(data.n, dtype=bool)
    for i in range(data.n):
        for j in range(i + 1, data.n):
            pair[:] = False
            pair[[i, j]] = True
            fams = data.cluster_families(pair)
            if len(set(data.child[fams].tolist())) == 2:
                model.addCons(_cluster_expr(xvars, *data.cluster_row(pair)), name=f"pair_{i}_{j}")
    if ARROW_VARIABLES:
        for i in range(data.n):
            block = np.arange(data.start[i], data.start[i + 1])
            for j in np.flatnonzero(data.pbool[block].any(axis=0)):
                arrow = model.addVar(name=f"a_{j}_{i}", vtype="B", obj=0.0)
                model.chgVarBranchPriority(arrow, 10)
                model.addCons(arrow == quicksum(xvars[k] for k in block[data.pbool[block, j]]),
                              name=f"arrow_{j}_{i}")
    for c, cvec in enumerate(clusters or []):
        model.addCons(_cluster_expr(xvars, *data.cluster_row(cvec)), name=f"phase1cut{c}",
                      removable=True)
    hdlr = _Acyclicity(data, xvars, enumerate_mode, stats, on_record, tick, classes)
    if classes and MEC_ROW_FORM == "indicators":
        pairs, triples = data.class_indicators()
        ind = {}
        for key, fams in [(("adj", p), f) for p, f in pairs.items()] + [(("col", t), f) for t, f in triples.items()]:
            var = model.addVar(name=f"{key[0]}_{'_'.join(map(str, key[1]))}", vtype="C", lb=0.0, ub=1.0, obj=0.0)
            model.addCons(var == quicksum(xvars[k] for k in fams.tolist()), name=f"def_{var.name}")
            ind[key] = var
        hdlr.indicator_vars = ind
        hdlr.indicator_index = (pairs, triples)
    model.includeConshdlr(hdlr, "acyclic", "acyclicity of the parent choice by cluster cuts",
                          sepapriority=100, enfopriority=-2_000_000, chckpriority=-2_000_000,
                          sepafreq=1, propfreq=-1, eagerfreq=-1, maxprerounds=0, needscons=True)
    cons = model.createCons(hdlr, "acyclic", initial=False, separate=True, enforce=True, check=True,
                            propagate=False, local=False, modifiable=False, dynamic=False,
                            removable=False, stickingatnode=False)
    model.addPyCons(cons)
    for name, value in SCIP_PARAMS.items():
        model.setParam(name, value)
    return model, xvars, hdlr


def _validate_warm_start(table: ScoreTable, warm_start: Parents) -> Parents:
    ws = {v: frozenset(p) for v, p in warm_start.items()}
    missing = [v for v in table.variables if v not in ws]
    extra = [v for v in ws if v not in table.families]
    if missing or extra:
        raise InputError(f"warm start: variables missing {missing[:5]} / unknown {extra[:5]}")
    for v, ps in ws.items():
        if ps not in table.families[v]:
            raise InputError(f"warm start: parent set {sorted(ps)} of {v!r} is not in the score table")
    if not nx.is_directed_acyclic_graph(to_digraph(ws)):
        raise InputError("warm start: the network has a directed cycle")
    return ws


def solve(table: ScoreTable, epsilon: float = 0.0, *, time_limit: float | None = None,
          max_networks: int = 150_000, warm_start: Parents | None = None,
          enumerate_ties: bool = True, progress: Callable[[dict], None] | None = None,
          verbose: bool = False, enumerate_by: str = "dags") -> SolveResult:
    """Prove OPT (phase 1), then list every DAG with score ≥ OPT − ε (phase 2).

    Phase 2 runs when ``epsilon > 0``, or when ``epsilon == 0`` and ``enumerate_ties``.
    ``time_limit`` (seconds) covers both phases; ``max_networks`` caps the credible set.
    ``enumerate_by="mecs"`` lists one representative DAG per credible Markov equivalence class instead,
    excluding each class found by :meth:`_Data.mec_row` (valid for score-equivalent scores only: every
    DAG of a class then has its representative's score); ``max_networks`` then caps classes.
    ``complete`` is True only when the returned list is provably the whole credible set; ``status`` is
    one of :data:`STATUSES` (SIGINT or SIGTERM during the search: ``interrupted``, with what was found)."""
    sig = _Signals()
    with _sigterm_interrupts(sig):
        return _solve(table, epsilon, time_limit, max_networks, warm_start, enumerate_ties, progress, verbose, sig,
                      enumerate_by)


def _solve(table: ScoreTable, epsilon: float, time_limit: float | None, max_networks: int,
           warm_start: Parents | None, enumerate_ties: bool, progress: Callable[[dict], None] | None,
           verbose: bool, sig: _Signals, enumerate_by: str) -> SolveResult:
    if enumerate_by not in ENUMERATE_UNITS:
        raise InputError(f"enumerate_by must be one of {', '.join(ENUMERATE_UNITS)}, got {enumerate_by!r}")
    classes = enumerate_by == "mecs"
    if epsilon < 0 or not math.isfinite(epsilon):
        raise InputError(f"epsilon must be a finite number ≥ 0, got {epsilon}")
    if max_networks < 1:
        raise InputError(f"max_networks must be ≥ 1, got {max_networks}")
    t_start = time.perf_counter()
    deadline = None if time_limit is None else t_start + max(0.0, float(time_limit))
    ws = _validate_warm_start(table, warm_start) if warm_start is not None else None
    data = _Data(table)
    stats1 = _new_stats()
    last_tick = [0.0]

    def elapsed() -> float:
        return time.perf_counter() - t_start

    def report(phase: str, networks: int, force: bool = False, **extra: Any) -> None:
        if progress is None:
            return
        now = time.perf_counter()
        if force or now - last_tick[0] >= 0.25:
            last_tick[0] = now
            progress({"phase": phase, "networks": networks, "elapsed": now - t_start, **extra})

    def remaining() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.perf_counter())

    def finish(**kw: Any) -> SolveResult:
        res = SolveResult(seconds=elapsed(), epsilon=float(epsilon), enumerated=enumerate_by, **kw)
        report("done", len(res.networks), force=True, status=res.status)
        logger.info("bnilp.ilp: %s, OPT %s, %d networks in %.2f s", res.status, res.optimum,
                    len(res.networks), res.seconds)
        return res

    if any(data.start[i + 1] == data.start[i] for i in range(data.n)):
        return finish(optimum=None, bound=-math.inf, gap=math.inf, status="infeasible", complete=True,
                      networks=[], stats={"phase1": stats1},
                      message="a variable has no candidate parent set: no DAG exists")

    if data.n == 0:
        return finish(optimum=0.0, bound=0.0, gap=0.0, status="optimal", complete=True,
                      networks=[Network(0.0, {})], stats={"phase1": stats1})

    # ---- phase 1 -------------------------------------------------------------------------
    report("optimize", 0, force=True)
    def tick1() -> None:
        report("optimize", 0)

    model, xvars, hdlr = _build(data, stats1, False, verbose, tick=tick1)
    model.includeHeur(_SinkHeur(hdlr, stats1, tick1), "sinkfind",
                      "sink-finding LP rounding", "S", priority=1000, freq=1, freqofs=0, maxdepth=-1,
                      timingmask=SCIP_HEURTIMING.AFTERLPNODE)
    starts = []
    if ws is not None:
        starts.append(tuple(data.start[i] + [ps for ps, _ in table.sorted_family(v)].index(ws[v])
                            for i, v in enumerate(data.names)))
    greedy = _sink_dag(data, np.zeros(data.K))
    if greedy is not None:
        starts.append(greedy)
    for choice in starts:
        sol = model.createSol()
        for k in choice:
            model.setSolVal(sol, xvars[k], 1.0)
        model.addSol(sol)
    rem = remaining()
    if rem is not None:
        model.setParam("limits/time", max(rem, 1e-3))
    t1 = time.perf_counter()
    sig.model = model
    model.optimize()
    sig.model = None
    stats1["seconds"] = time.perf_counter() - t1
    status1 = model.getStatus()
    stats1.update(scip_status=status1, nodes=model.getNTotalNodes(), lp_iterations=model.getNLPIterations(),
                  lps=model.getNLPs(), solutions_found=model.getNSolsFound(),
                  n_families=data.K, n_variables=data.n)
    stats: dict[str, Any] = {"phase1": stats1}
    # Σ_i best_i is always an upper bound (SCIP reports its infinity before the first LP).
    dual = min(model.getDualbound(), 0.0) + data.offset if status1 != "infeasible" else -math.inf
    best_choice: tuple[int, ...] | None = None
    if model.getNSols():
        _, best_choice = _choice(data, np.array([model.getSolVal(model.getBestSol(), v) for v in xvars]))
    if status1 == "optimal" and best_choice is None:
        raise RuntimeError("SCIP reported optimal but its best solution is not a parent choice")
    if status1 == "infeasible":
        return finish(optimum=None, bound=-math.inf, gap=math.inf, status="infeasible", complete=True,
                      networks=[], stats=stats, message="the score table admits no DAG")
    if status1 != "optimal":
        status, why = _early_stop(status1, sig)
        if best_choice is None:
            return finish(optimum=None, bound=dual, gap=math.inf, status=status, complete=False,
                          networks=[], stats=stats,
                          message=f"{why} in phase 1 before any DAG was found "
                                  f"(upper bound {dual:.6f}); optimality not proven")
        opt = data.exact(best_choice)
        gap = abs(dual - opt) / max(abs(opt), 1e-12)
        return finish(optimum=opt, bound=dual, gap=gap, status=status, complete=False,
                      networks=[Network(opt, data.parents(best_choice))], stats=stats,
                      message=f"{why} in phase 1: best DAG {opt:.6f}, upper bound "
                              f"{dual:.6f}, gap {gap:.3g}; optimality not proven")
    assert best_choice is not None
    opt = data.exact(best_choice)
    opt_shift = math.fsum(data.obj[k] for k in best_choice)
    phase1_clusters = list(hdlr.clusters.values())
    del model, hdlr
    if epsilon == 0 and not enumerate_ties:
        return finish(optimum=opt, bound=max(dual, opt), gap=0.0, status="optimal", complete=False,
                      networks=[Network(opt, data.parents(best_choice))], stats=stats,
                      message="optimal network found; other optimal networks (ties) were not listed")

    # ---- phase 2 -------------------------------------------------------------------------
    stats2 = _new_stats()
    stats["phase2"] = stats2
    credible: dict[tuple[int, ...], float] = {}
    threshold = [opt - epsilon - _tie_tol(opt)]
    limit_hit = [False]

    def on_record(choice: tuple[int, ...]) -> None:
        s = data.exact(choice)
        if s >= threshold[0]:
            credible[choice] = s
            if len(credible) >= max_networks:
                limit_hit[0] = True
                model2.interruptSolve()
        report("enumerate", len(credible))

    report("enumerate", 0, force=True)
    model2, _, hdlr2 = _build(data, stats2, True, verbose, on_record, phase1_clusters,
                              tick=lambda: report("enumerate", len(credible)), classes=classes)
    tol = 1e-5 * max(1.0, abs(opt_shift) + epsilon)
    model2.setObjlimit(opt_shift - epsilon - tol)
    model2.setPresolve(SCIP_PARAMSETTING.OFF)
    model2.setHeuristics(SCIP_PARAMSETTING.OFF)
    for name, value in PHASE2_PARAMS.items():
        model2.setParam(name, value)
    rem = remaining()
    stopped = None          # (status, words) when phase 2 ended before proving the set complete
    if sig.received:
        stopped = _early_stop("userinterrupt", sig)
    elif rem is not None and rem <= 0:
        stopped = _early_stop("timelimit", sig)
    else:
        if rem is not None:
            model2.setParam("limits/time", max(rem, 1e-3))
        t2 = time.perf_counter()
        sig.model = model2
        model2.optimize()
        sig.model = None
        stats2["seconds"] = time.perf_counter() - t2
        status2 = model2.getStatus()
        stats2.update(scip_status=status2, nodes=model2.getNTotalNodes(),
                      lp_iterations=model2.getNLPIterations(), lps=model2.getNLPs(),
                      collected=len(hdlr2.recorded))
        if not limit_hit[0] and status2 != "infeasible":
            stopped = _early_stop(status2, sig)
    best = max(credible.values(), default=opt)
    if best > opt:          # SCIP's tolerance may have picked a DAG a hair below the true OPT
        opt = best
        threshold[0] = opt - epsilon - _tie_tol(opt)
    items = sorted(((s, c) for c, s in credible.items() if s >= threshold[0]), key=lambda sc: (-sc[0], sc[1]))
    if not items:
        items = [(data.exact(best_choice), best_choice)]
    networks = [Network(s, data.parents(c)) for s, c in items[:max_networks]]
    n_found = len(networks)
    if limit_hit[0]:
        return finish(optimum=opt, bound=max(dual, opt), gap=0.0, status="network_limit", complete=False,
                      networks=networks, stats=stats,
                      message=f"network limit reached: stopped after {n_found} credible "
                              f"{'classes' if classes else 'networks'} "
                              f"(there may be more; the list is not the top {n_found})")
    if stopped is not None:
        return finish(optimum=opt, bound=max(dual, opt), gap=0.0, status=stopped[0], complete=False,
                      networks=networks, stats=stats,
                      message=f"{stopped[1]} while listing credible networks (SCIP: "
                              f"{stats2.get('scip_status', 'not started')}): OPT is proven, "
                              f"but only {n_found} networks within epsilon were found (incomplete)")
    return finish(optimum=opt, bound=max(dual, opt), gap=0.0, status="optimal", complete=True,
                  networks=networks, stats=stats)
