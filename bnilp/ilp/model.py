"""Model building: family variables, convexity rows, the 2-cluster rows and the plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyscipopt import SCIP_PROPTIMING, Model, quicksum

from bnilp.ilp import settings
from bnilp.ilp.cons_acyclic import _Acyclicity, _cluster_expr
from bnilp.ilp.families import _Data
from bnilp.ilp.knowledge_rows import add_knowledge
from bnilp.ilp.prop_ancestors import _AncestorProp


def _new_stats() -> dict[str, Any]:
    return {"cuts": {}, "cuts_total": 0, "sepa_calls": 0, "python_sepa_seconds": 0.0,
            "python_enforce_seconds": 0.0, "python_heur_seconds": 0.0, "order_search_seconds": 0.0, "heur_solutions": 0,
            "window_search_seconds": 0.0, "window_search_calls": 0, "window_search_improved": 0,
            "window_search_misses": 0,
            "sepa_heuristic_seconds": 0.0, "subip_seconds": 0.0, "subip_calls": 0}


def _mutual_pairs(data: _Data) -> list[tuple[int, int]]:
    """The pairs i < j (in that order) whose 2-cluster row is not implied: some family of i holds j and some
    family of j holds i — the pairs whose cluster families have both children (:meth:`_Data.cluster_families`).
    Found from each variable's candidate parents, O(K·n); every pair was tried before, O(n²·K·n): 20 s of 22 to
    build the model of 1,200 variables in 400 triangles (a review)."""
    cand = data.candidate_parents()
    return [(int(i), int(j)) for i, j in np.argwhere(np.triu(cand & cand.T, 1))]


def _build(data: _Data, stats: dict, enumerate_mode: bool, verbose: bool,
           on_record: Callable[[tuple[int, ...]], None] | None = None,
           clusters: list[tuple[np.ndarray, int]] | None = None,
           tick: Callable[[], None] | None = None, classes: bool = False,
           fixings: list[tuple[np.ndarray, int]] | None = None) -> tuple[Model, list, _Acyclicity]:
    """The family-variable model with convexity rows, all 2-cluster rows and the handler; ``fixings``
    (families, value) add Σ_{k ∈ families} x_k = value (a cube of :mod:`bnilp.ilp.cubes`)."""
    model = Model("bnilp")
    model.hideOutput(not verbose)
    model.setParam("misc/catchctrlc", False)        # the search's handler stops it (bnilp.ilp.search)
    xvars = [model.addVar(name=f"x{k}", vtype="B", obj=float(data.obj[k])) for k in range(data.K)]
    model.setMaximize()
    for i in range(data.n):
        model.addCons(quicksum(xvars[k] for k in range(data.start[i], data.start[i + 1])) == 1,
                      name=f"convex_{i}")
    pair = np.zeros(data.n, dtype=bool)
    for i, j in _mutual_pairs(data):
        pair[:] = False
        pair[[i, j]] = True
        model.addCons(_cluster_expr(xvars, *data.cluster_row(pair)), name=f"pair_{i}_{j}")
    packing = data.set_packing_clusters() if settings.SET_PACKING else []
    for cluster in packing:
        fams = data.set_packing_families(cluster)
        model.addCons(quicksum(xvars[k] for k in fams) <= 1, name=f"setpack_{'_'.join(map(str, cluster))}")
    stats["set_packing_rows"] = len(packing)
    if settings.ARROW_VARIABLES:
        cand = data.candidate_parents()
        for i in range(data.n):
            block = np.arange(data.start[i], data.start[i + 1])
            for j in np.flatnonzero(cand[i]):
                arrow = model.addVar(name=f"a_{j}_{i}", vtype="B", obj=0.0)
                model.chgVarBranchPriority(arrow, 10)
                model.addCons(arrow == quicksum(xvars[k] for k in block[data.pbool[block, j]]),
                              name=f"arrow_{j}_{i}")
    for c, (cvec, k) in enumerate(clusters or []):
        model.addCons(_cluster_expr(xvars, *data.cluster_row(cvec, k)), name=f"phase1cut{c}",
                      removable=True)
    for c, (fams, value) in enumerate(fixings or []):
        model.addCons(quicksum(xvars[k] for k in fams.tolist()) == value, name=f"cube{c}")
    hdlr = _Acyclicity(data, xvars, enumerate_mode, stats, on_record, tick, classes)
    if classes and settings.MEC_ROW_FORM == "indicators":
        pairs, triples = data.class_indicators()
        ind = {}
        for key, fams in [(("adj", p), f) for p, f in pairs.items()] + [(("col", t), f) for t, f in triples.items()]:
            branch = key[0] in settings.MEC_BRANCH_PRIORITY
            var = model.addVar(name=f"{key[0]}_{'_'.join(map(str, key[1]))}", vtype="B" if branch else "C",
                               lb=0.0, ub=1.0, obj=0.0)
            if branch:
                model.chgVarBranchPriority(var, settings.MEC_BRANCH_PRIORITY[key[0]])
            model.addCons(var == quicksum(xvars[k] for k in fams.tolist()), name=f"def_{var.name}")
            ind[key] = var
        hdlr.indicator_vars = ind
        hdlr.indicator_index = (pairs, triples)
    model.includeConshdlr(hdlr, "acyclic", "acyclicity of the parent choice by cluster cuts",
                          sepapriority=settings.ACYCLIC_SEPAPRIORITY, enfopriority=settings.ACYCLIC_ENFOPRIORITY,
                          chckpriority=settings.ACYCLIC_CHECKPRIORITY, sepafreq=settings.ACYCLIC_SEPAFREQ,
                          propfreq=-1, eagerfreq=-1, maxprerounds=0, needscons=True)
    cons = model.createCons(hdlr, "acyclic", initial=False, separate=True, enforce=True, check=True,
                            propagate=False, local=False, modifiable=False, dynamic=False,
                            removable=False, stickingatnode=False)
    model.addPyCons(cons)
    add_knowledge(model, xvars, data, stats)
    if settings.ANCESTOR_PROPAGATION:
        model.includeProp(_AncestorProp(data, xvars, stats), "ancestors",
                          "ancestor closure of the certain arrows; fixes families that close a cycle",
                          presolpriority=0, presolmaxrounds=0, proptiming=SCIP_PROPTIMING.BEFORELP,
                          priority=settings.ANCESTOR_PROP_PRIORITY, freq=settings.ANCESTOR_PROP_FREQ,
                          delay=False)
    for name, value in settings.SCIP_PARAMS.items():
        model.setParam(name, value)
    return model, xvars, hdlr
