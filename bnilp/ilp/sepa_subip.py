"""Exact cluster separation by a sub-IP over the support of the LP point (as GOBNILP's subip_cuts.c).

:func:`subip_clusters` is a plain function (testable on its own); the acyclicity handler calls it
from ``conssepalp`` at the depths :data:`~bnilp.ilp.settings.SUBIP_DEPTH_FREQ` allows."""

from __future__ import annotations

import numpy as np
from pyscipopt import SCIP_PARAMSETTING, Model, quicksum

from bnilp.ilp import settings
from bnilp.ilp.families import _Data, check_kcluster
from bnilp.ilp.settings import _CUT_TOL, _SUPPORT_TOL


def cluster_violation(data: _Data, x: np.ndarray, cvec: np.ndarray, k: int = 1) -> float:
    """Violation of C's k-cluster cut at ``x``: ``Σ_{v∈C} Σ_{|W∩C|≥k} x(v,W) − (|C| − k)`` (k = 1: the
    cluster cut); needs 1 ≤ k < |C|, as :meth:`~bnilp.ilp.families._Data.cluster_row`."""
    check_kcluster(cvec, k)
    sel = cvec[data.child] & (data.pbool[:, cvec].sum(axis=1) >= k)
    return float(x[sel].sum()) - (int(cvec.sum()) - k)


def subip_mode(n: int, enumerating: bool) -> str:
    """The sub-IP's mode (one of :data:`~bnilp.ilp.settings.SUBIP_MODES` but "auto") for a table of ``n``
    variables in phase 1 or, with ``enumerating``, phase 2: ``SUBIP_MODE``, "auto" read as "always" from
    ``SUBIP_AUTO_MIN_VARIABLES`` variables up and "off" below, and "off" in phase 2 unless ``SUBIP_PHASE2``."""
    mode = settings.SUBIP_MODE
    if mode not in settings.SUBIP_MODES:
        raise ValueError(f"SUBIP_MODE must be one of {settings.SUBIP_MODES}, not {mode!r}")
    if mode == "auto":
        mode = "always" if n >= settings.SUBIP_AUTO_MIN_VARIABLES else "off"
    return "off" if enumerating and not settings.SUBIP_PHASE2 else mode


def _candidates(data: _Data, sup: np.ndarray) -> np.ndarray:
    """Vertices that can belong to a violated cluster: in a violated C every member v has
    Σ_{W∩C≠∅} x(v,W) > 0 (each member contributes ≤ 1 by convexity, and the total exceeds
    |C| − 1), so v is the child of a support family with a parent in C. Iterated to a fixpoint."""
    cand = np.zeros(data.n, dtype=bool)
    cand[data.child[sup]] = True
    while True:
        live = sup[cand[data.child[sup]] & data.pbool[sup][:, cand].any(axis=1)]
        new = np.zeros(data.n, dtype=bool)
        new[data.child[live]] = True
        new &= cand
        if np.array_equal(new, cand):
            return cand
        cand = new


def subip_clusters(data: _Data, x: np.ndarray, time_limit: float = settings.SUBIP_TIME_LIMIT,
                   max_cuts: int = settings.SUBIP_MAX_CUTS, stats: dict | None = None, k: int = 1) -> list[np.ndarray]:
    """Violated (k-)cluster cuts for ``x`` found by a sub-IP (Bartlett & Cussens, AIJ 2017, §5;
    GOBNILP ``subip_cuts.c``; k ≥ 2 generalises it to the k-cluster cuts of
    :func:`bnilp.ilp.sepa_cluster.kcluster_cuts`).

    Over the support families f (x*_f > 0, child c_f, parents W_f restricted to candidate vertices,
    |W_f| ≥ k), binaries y_v (v in the cluster) and z_f (family f counts), maximise

        Σ_f x*_f z_f − Σ_v y_v + k   s.t.  z_f ≤ y_{c_f},  k·z_f ≤ Σ_{u∈W_f} y_u,  Σ_v y_v ≥ k + 1

    with objective limit ``_CUT_TOL``: every feasible solution is a cluster C = {v : y_v = 1} whose cut
    ``Σ_{v∈C} Σ_{|W∩C|≥k} x(v,W) ≤ |C| − k`` is violated by at least its objective value, and the optimum
    is the most violated cluster. Every stored solution becomes a cut (violation re-checked exactly
    with :func:`cluster_violation`), most violated first, at most ``max_cuts``. ``time_limit`` stops the
    sub-SCIP (the cuts found so far are still returned; an exhausted search only means none is missed)."""
    sup = np.flatnonzero((x > _SUPPORT_TOL) & (data.pbool.sum(axis=1) >= k))
    if len(sup) < 2:
        return []
    if k == 1:
        cand = _candidates(data, sup)
    else:       # up to k − 1 members may contribute nothing themselves and still be parents of others
        cand = data.pbool[sup].any(axis=0)
        cand[data.child[sup]] = True
    if cand.sum() < k + 1:
        return []
    keep = sup[cand[data.child[sup]] & (data.pbool[sup][:, cand].sum(axis=1) >= k)]
    verts = np.flatnonzero(cand)
    sub = Model("cluster_subip")
    sub.hideOutput(True)
    sub.setParam("misc/catchctrlc", False)          # a Ctrl-C stops the whole search, not this sub-IP
    y = {int(v): sub.addVar(name=f"y{v}", vtype="B", obj=-1.0) for v in verts}
    z = [sub.addVar(name=f"z{f}", vtype="B", obj=float(x[f])) for f in keep]
    sub.addVar(name="one", vtype="B", obj=float(k), lb=1.0, ub=1.0)
    for zf, f in zip(z, keep.tolist(), strict=True):
        sub.addCons(zf <= y[int(data.child[f])])
        sub.addCons(k * zf <= quicksum(y[int(u)] for u in np.flatnonzero(data.pbool[f] & cand)))
    sub.addCons(quicksum(y.values()) >= k + 1)
    sub.setMaximize()
    sub.setObjlimit(_CUT_TOL)
    sub.setHeuristics(SCIP_PARAMSETTING.OFF)
    sub.setSeparating(SCIP_PARAMSETTING.OFF)
    for name, value in settings.SUBIP_PARAMS.items():
        sub.setParam(name, value)
    sub.setParam("limits/time", max(time_limit, 1e-3))
    sub.optimize()
    if stats is not None:
        stats["subip_nodes"] = stats.get("subip_nodes", 0) + sub.getNTotalNodes()
    found: dict[bytes, tuple[float, np.ndarray]] = {}
    for sol in sub.getSols():
        cvec = np.zeros(data.n, dtype=bool)
        for v, var in y.items():
            if sub.getSolVal(sol, var) > 0.5:
                cvec[v] = True
        viol = cluster_violation(data, x, cvec, k)
        if viol > _CUT_TOL:
            found.setdefault(cvec.tobytes(), (viol, cvec))
    sub.freeProb()
    cuts = sorted(found.values(), key=lambda vc: -vc[0])
    return [c for _, c in cuts[:max_cuts]]
