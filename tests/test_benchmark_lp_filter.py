"""The reduced-cost filter of ``benchmarks/candidate_graph.py --lp``: the cluster LP bounds OPT, and LP + d_f
(d_f the family's reduced cost) bounds every DAG that uses family f, so the families it drops are in no
credible DAG (brute force over all DAGs, n ≤ 5)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bnilp.ilp.families import _Data
from tests.conftest import slow_after
from tests.oracles import brute_force_credible
from tests.test_ilp import EPSILONS, random_table

_spec = importlib.util.spec_from_file_location(
    "candidate_graph", Path(__file__).resolve().parents[1] / "benchmarks" / "candidate_graph.py")
candidate_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(candidate_graph)


def _kept(table, data, eps):
    opt, credible = brute_force_credible(table, eps)
    gap, keep = candidate_graph.credible_families(data, opt, eps)
    return gap, credible, keep


@pytest.mark.parametrize("n,seed", slow_after([(n, s) for n in (3, 4, 5) for s in range(5)], 11))
def test_the_reduced_cost_filter_keeps_every_family_of_every_credible_dag(n, seed):
    table = random_table(n, 700 * n + seed, keep=0.7, ties=seed == 3, pruned=seed == 2)
    data = _Data(table)
    index = {(data.child[k], data.sets[k]): k for k in range(data.K)}
    names = {v: i for i, v in enumerate(data.names)}
    for eps in EPSILONS:
        gap, credible, keep = _kept(table, data, eps)
        assert gap >= -1e-7
        for _, parents in credible:
            for v, ps in parents.items():
                assert keep[index[(names[v], frozenset(ps))]]


def test_the_reduced_cost_filter_is_not_vacuous():
    """At ε = 0 on random 5-variable tables it drops some family on most of them."""
    dropped = []
    for seed in range(5):
        table = random_table(5, 3500 + seed, keep=0.7)
        dropped.append(int((~_kept(table, _Data(table), 0.0)[2]).sum()))
    assert sum(d > 0 for d in dropped) >= 3, dropped
