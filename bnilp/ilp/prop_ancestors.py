"""Ancestor-closure propagation (GOBNILP's arrow propagator, ``../shared/docs/ilp.md``): at a node,
close the arrows that are already certain transitively and forbid every family that would close a
cycle with them. The algorithm is the plain function :func:`ancestor_fixings`; :class:`_AncestorProp`
is the SCIP propagator that reads the node's bounds, calls it and fixes what it returns.

Arrows are not variables here: an arrow j → i is *certain* at a node when every family of i still
allowed (upper bound 1) contains j — in particular when one family of i is fixed to 1. Working on the
families directly gives the same fixings as GOBNILP's propagator on a(j→i) with the linking rows
a(j→i) + Σ_{W∌j} x(i, W) = 1, without the extra variables. Off by default
(:data:`bnilp.ilp.settings.ANCESTOR_PROPAGATION`): measured with ``benchmarks/search_ab.py`` it saved
no node in either phase on the Table 1 score files (README, "Search techniques"). It does not run
inside probing (diving heuristics), which would call it hundreds of times per tree node.
"""

from __future__ import annotations

import time

import numpy as np
from pyscipopt import SCIP_RESULT, Prop

from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _INT_TOL


def certain_arrows(data: _Data, allowed: np.ndarray) -> np.ndarray | None:
    """``A[i, j]``: j is a parent of i in every allowed family of i (None if a child has none left)."""
    arrows = np.zeros((data.n, data.n), dtype=bool)
    for i in range(data.n):
        block = slice(data.start[i], data.start[i + 1])
        rows = data.pbool[block][allowed[block]]
        if not len(rows):
            return None
        arrows[i] = rows.all(axis=0)
    return arrows


def ancestor_closure(arrows: np.ndarray) -> np.ndarray:
    """``R[i, j]``: j is a proper ancestor of i through the arrows ``arrows[i, j]`` (j → i); a True
    diagonal means a directed cycle. Warshall's algorithm on boolean rows (n numpy steps)."""
    reach = arrows.copy()
    for k in range(reach.shape[0]):
        reach |= reach[:, k:k + 1] & reach[k:k + 1, :]
    return reach


def ancestor_fixings(data: _Data, allowed: np.ndarray) -> np.ndarray | None:
    """Families that no DAG of the node can use, given ``allowed`` (bool per family: upper bound 1).

    Invariant (soundness): if j is an ancestor of i through certain arrows (every DAG of the node has
    them), a family of i that contains j adds j → i and closes the cycle i ⇝ j → i, so no DAG of the
    node uses it. Forbidding such families can leave a child fewer families, which makes more arrows
    certain: repeat until nothing changes (a fixed point; each round removes a family, so at most K).

    Returns the indices of the families to fix to 0 (a subset of ``allowed``), or None when the node
    holds no DAG at all (a child with no allowed family, or a cycle of certain arrows).
    """
    allowed = np.asarray(allowed, dtype=bool)
    left = allowed.copy()
    while True:
        arrows = certain_arrows(data, left)
        if arrows is None:
            return None
        reach = ancestor_closure(arrows)
        if reach.diagonal().any():
            return None
        # family k of child i closes a cycle iff it holds a parent j with i ⇝ j, i.e. reach[j, i]
        descendants = reach.T                       # descendants[i, j] = reach[j, i]
        idx = np.flatnonzero(left)
        bad = (data.pbool[idx] & descendants[data.child[idx]]).any(axis=1)
        if not bad.any():
            return np.flatnonzero(allowed & ~left)
        left[idx[bad]] = False


class _AncestorProp(Prop):
    """SCIP propagator around :func:`ancestor_fixings`: reads the node's local bounds (a family with
    lower bound 1 is its child's only allowed one), fixes the returned families' upper bounds to 0
    (local to the node), or cuts the node off."""

    def __init__(self, data: _Data, xvars: list, stats: dict):
        self.data, self.xvars, self.stats = data, xvars, stats
        self.tvars: list | None = None
        for key in ("prop_calls", "prop_fixings", "prop_cutoffs"):
            stats.setdefault(key, 0)
        stats.setdefault("prop_seconds", 0.0)

    def _allowed(self) -> np.ndarray:
        if self.tvars is None:
            self.tvars = [self.model.getTransformedVar(v) for v in self.xvars]
        K = self.data.K
        ub = np.fromiter((v.getUbLocal() for v in self.tvars), dtype=float, count=K)
        lb = np.fromiter((v.getLbLocal() for v in self.tvars), dtype=float, count=K)
        allowed = ub > _INT_TOL
        chosen = np.flatnonzero(lb > _INT_TOL)
        if len(chosen):
            only = np.zeros(K, dtype=bool)
            only[chosen] = True
            fixed_child = np.zeros(self.data.n, dtype=bool)
            fixed_child[self.data.child[chosen]] = True
            allowed &= ~fixed_child[self.data.child] | only
        return allowed

    def propexec(self, proptiming):
        if self.model.inProbing():       # diving heuristics probe hundreds of nodes per tree node
            return {"result": SCIP_RESULT.DIDNOTRUN}
        t0 = time.perf_counter()
        self.stats["prop_calls"] += 1
        try:
            fix = ancestor_fixings(self.data, self._allowed())
            if fix is None:
                self.stats["prop_cutoffs"] += 1
                return {"result": SCIP_RESULT.CUTOFF}
            if not len(fix):
                return {"result": SCIP_RESULT.DIDNOTFIND}
            for k in fix.tolist():
                infeasible, _ = self.model.tightenVarUb(self.tvars[k], 0.0)
                if infeasible:
                    self.stats["prop_cutoffs"] += 1
                    return {"result": SCIP_RESULT.CUTOFF}
            self.stats["prop_fixings"] += len(fix)
            return {"result": SCIP_RESULT.REDUCEDDOM}
        finally:
            self.stats["prop_seconds"] += time.perf_counter() - t0
