"""Sink-finding primal heuristic: the rounding routine and its SCIP plugin (as GOBNILP's heur_sinks.c)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from pyscipopt import SCIP_LPSOLSTAT, SCIP_RESULT, Heur

from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.ilp.heur_orders import climb_orders
from bnilp.ilp.heur_windows import window_search
from bnilp.ilp.settings import _INT_TOL

if TYPE_CHECKING:
    from bnilp.ilp.cons_acyclic import _Acyclicity


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


class _SinkHeur(Heur):
    """Rounds the LP solution to a DAG (sink finding) and offers it to SCIP."""

    def __init__(self, hdlr: _Acyclicity, stats: dict, tick: Callable[[], None]):
        self.hdlr = hdlr
        self.stats = stats
        self.tick = tick
        self.climbed: set[tuple[int, ...]] = set()     # roundings already improved by the local search
        self.windowed: set[tuple[int, ...]] = set()    # ... and by window search
        self.t_start = time.perf_counter()

    def _climb_allowed(self, choice: tuple[int, ...]) -> bool:
        """Whether the local search improves this rounding: on, not seen before, and within its time share."""
        if not settings.SINK_ORDER_SEARCH or choice in self.climbed:
            return False
        spent = self.stats["order_search_seconds"]
        return spent <= settings.SINK_ORDER_SEARCH_SHARE * (time.perf_counter() - self.t_start) + 1.0

    def _window_allowed(self, choice: tuple[int, ...]) -> bool:
        """Whether window search improves this rounding: on, a table large enough, phase 1 running
        :data:`settings.WINDOW_SEARCH_AFTER` seconds, not seen before, and within its time share — which
        shrinks with every search that did not beat the incumbent (once OPT is found, all of them)."""
        if (not settings.WINDOW_SEARCH or self.hdlr.data.n < settings.WINDOW_SEARCH_MIN_VARIABLES
                or choice in self.windowed):
            return False
        elapsed = time.perf_counter() - self.t_start
        share = settings.WINDOW_SEARCH_SHARE / (1 + self.stats["window_search_misses"])
        return elapsed >= settings.WINDOW_SEARCH_AFTER and self.stats["window_search_seconds"] <= share * elapsed

    def _improve(self, choice: tuple[int, ...], usable: np.ndarray,
                 incumbent: float) -> tuple[tuple[int, ...], float]:
        """(choice, value): the rounding after the local searches that are allowed on it (insertion moves, then
        windows), and its value in the shifted objective; ``incumbent``: SCIP's best value so far (−inf when
        none)."""
        data = self.hdlr.data
        if self._climb_allowed(choice):
            t1 = time.perf_counter()
            self.climbed.add(choice)
            choice, _ = climb_orders(data, choice, usable)
            self.stats["order_search_seconds"] += time.perf_counter() - t1
        if self._window_allowed(choice):
            t1 = time.perf_counter()
            self.windowed.add(choice)
            better, order = window_search(data, choice, settings.WINDOW_SEARCH_SIZE, usable)
            self.stats["window_search_calls"] += 1
            self.stats["window_search_improved"] += order is not None
            value = math.fsum(data.obj[k] for k in better)
            self.stats["window_search_misses"] += value <= incumbent + 1e-9
            self.stats["window_search_seconds"] += time.perf_counter() - t1
            return better, value
        return choice, math.fsum(data.obj[k] for k in choice)

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
        if choice is not None:
            choice, value = self._improve(choice, usable,
                                          model.getPrimalbound() if model.getNSols() else -math.inf)
        self.stats["python_heur_seconds"] += time.perf_counter() - t0
        if choice is None:
            return {"result": SCIP_RESULT.DIDNOTFIND}
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
