"""The order-based local search of the sink heuristic (bnilp.ilp.heur_orders) against brute force."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from bnilp import ilp
from bnilp.ilp.families import _Data
from bnilp.ilp.heur_orders import climb_orders, topological_order
from bnilp.ilp.heur_windows import window_search
from bnilp.scorefile import ScoreTable
from tests.oracles import dp_optimum, is_acyclic
from tests.test_ilp import random_table


def _order_score(data: _Data, order: list[int], usable: np.ndarray) -> float:
    """Brute force: each variable's best usable family with every parent before it in ``order``."""
    before: set[int] = set()
    total = 0.0
    for v in order:
        best = max((data.score[k] for k in range(data.start[v], data.start[v + 1])
                    if usable[k] and set(np.flatnonzero(data.pbool[k]).tolist()) <= before), default=-math.inf)
        total += best
        before.add(v)
    return total


def _random_dag_choice(data: _Data, rng: random.Random, usable: np.ndarray) -> tuple[int, ...] | None:
    """A random usable parent choice consistent with a random order (None if some variable has none)."""
    order = list(range(data.n))
    rng.shuffle(order)
    pos = {v: i for i, v in enumerate(order)}
    choice = []
    for v in range(data.n):
        ok = [k for k in range(data.start[v], data.start[v + 1])
              if usable[k] and all(pos[u] < pos[v] for u in np.flatnonzero(data.pbool[k]))]
        if not ok:
            return None
        choice.append(rng.choice(ok))
    return tuple(choice)


def _parents(data: _Data, choice: tuple[int, ...]) -> dict[str, frozenset[str]]:
    return {data.names[v]: data.sets[k] for v, k in enumerate(choice)}


@pytest.mark.parametrize("seed", range(40))
def test_order_search_returns_a_dag_never_worse_and_a_local_optimum(seed):
    """From a random DAG the search returns a DAG of usable families, scoring at least as much; when it
    moved, the DAG is the best one consistent with its final order (the order's score, by brute force)
    and no single insertion move improves that order."""
    rng = random.Random(seed)
    n = 3 + seed % 6
    data = _Data(random_table(n, 500 + seed, keep=0.5))
    usable = np.array([rng.random() < 0.8 or not data.sets[k] for k in range(data.K)])   # ∅ always usable
    start = _random_dag_choice(data, rng, usable)
    assert start is not None
    out, climbed = climb_orders(data, start, usable)
    assert all(data.child[k] == v and usable[k] for v, k in enumerate(out))
    assert is_acyclic(_parents(data, out))
    s_in, s_out = (math.fsum(data.score[k] for k in c) for c in (start, out))
    assert s_out >= s_in
    assert s_out <= _order_score(data, topological_order(data, out), usable) + 1e-9
    if climbed is not None:
        order = climbed
        assert s_out > s_in
        assert s_out == pytest.approx(_order_score(data, order, usable))
        for i in range(n):
            for j in range(n):
                moved = order[:i] + order[i + 1:]
                moved.insert(j, order[i])
                assert _order_score(data, moved, usable) <= s_out + 1e-6


def test_one_insertion_move_reverses_an_arrow_and_reaches_the_optimum():
    """A ← B scores 5 more than A alone, B ← A only 1 more than B alone: from the DAG A → B (order A, B)
    moving B first gives B → A, the optimum (DP), 4 nats better."""
    table = ScoreTable(["A", "B"], {"A": {frozenset(): -10.0, frozenset({"B"}): -5.0},
                                    "B": {frozenset(): -10.0, frozenset({"A"}): -9.0}})
    data = _Data(table)
    fam = {(int(v), s): k for k, (v, s) in enumerate(zip(data.child, data.sets, strict=True))}
    start = (fam[0, frozenset()], fam[1, frozenset({"A"})])
    out, order = climb_orders(data, start)
    assert order == [1, 0]
    assert _parents(data, out) == {"A": frozenset({"B"}), "B": frozenset()}
    assert math.fsum(data.score[k] for k in out) == dp_optimum(table) == -15.0


def _windows_of_three(data: _Data, choice: tuple[int, ...], usable: np.ndarray | None = None):
    return window_search(data, choice, 3, usable)


@pytest.mark.parametrize("search", [climb_orders, _windows_of_three], ids=["insertions", "windows"])
def test_order_search_rejects_cycles_and_keeps_unusable_choices(search):
    """A cyclic choice, or one using a family outside ``usable``, comes back unchanged (insertion moves and
    window search alike)."""
    table = random_table(3, 5, keep=1.0)
    data = _Data(table)
    fam = {(v, frozenset(s)): k for k, (v, s) in enumerate(zip(data.child.tolist(), data.sets, strict=True))}
    n0, n1, n2 = data.names
    cyclic = (fam[0, frozenset({n1})], fam[1, frozenset({n2})], fam[2, frozenset({n0})])
    assert topological_order(data, cyclic) is None
    assert search(data, cyclic) == (cyclic, None)
    empty = tuple(fam[v, frozenset()] for v in range(3))
    usable = np.ones(data.K, dtype=bool)
    usable[empty[0]] = False
    assert search(data, empty, usable) == (empty, None)


@pytest.mark.parametrize("seed", [4, 7, 8, 11, 14, 16])
def test_branch_and_cut_with_order_search_stays_exact(monkeypatch, seed):
    """Phase 1 by branch-and-cut (programme off) with the local search on: OPT equals DP's, on hard
    random tables of 8–9 variables — those of seeds 0–39 on which SCIP calls the sink heuristic, so the search
    runs (on the others the LP's roundings never reach it: the test was plain branch-and-cut there)."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "SINK_ORDER_SEARCH", True)
    table = random_table(7 + seed % 3, 4200 + seed, keep=0.3, max_size=3)
    res = ilp.solve(table, 0.0, enumerate_ties=False)
    assert res.stats["phase1"]["order_search_seconds"] > 0, "the order search never ran"
    assert res.status == "optimal"
    assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-9)
    assert is_acyclic(res.networks[0].parents)
