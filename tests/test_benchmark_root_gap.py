"""``benchmarks/root_gap.py``: every stage's LP bound stays above OPT (the cluster and k-cluster cuts it adds are
valid) and no stage loosens the one before; where triangles pay, the k-cluster stages cut below the cluster
closure."""

from __future__ import annotations

import importlib.util
import itertools
import random
from pathlib import Path

import numpy as np

from bnilp.ilp.families import _Data
from bnilp.scorefile import ScoreTable
from tests.oracles import all_dags, dp_optimum
from tests.test_ilp import dense_table, random_table

_spec = importlib.util.spec_from_file_location(
    "root_gap", Path(__file__).resolve().parents[1] / "benchmarks" / "root_gap.py")
root_gap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root_gap)


def triangle_table(n: int, seed: int) -> ScoreTable:
    """Every parent set of ≤ 2 variables, scored so that taking two parents pays far more than one (3 + noise
    against 1 + noise): each triangle's members want the other two as parents, which no DAG allows them all."""
    rng = random.Random(seed)
    names = [f"V{i}" for i in range(n)]
    families = {}
    for v in names:
        others = [u for u in names if u != v]
        fam = {frozenset(): 0.0}
        fam.update({frozenset([u]): 1.0 + rng.random() for u in others})
        fam.update({frozenset(p): 3.0 + rng.random() for p in itertools.combinations(others, 2)})
        families[v] = fam
    return ScoreTable(names, families)


def _gaps(table):
    stages = root_gap.stage_gaps(table, dp_optimum(table), max_k=3, subip_time=10.0)
    assert [s[0] for s in stages] == ["heuristic", "exact", "+3-heur", "+3-exact"]
    return [gap for _, gap, _, _ in stages]


def test_each_stage_bounds_opt_and_tightens_the_one_before():
    tables = [dense_table(9, seed, candidates=7, max_size=3) for seed in range(3)]
    tables += [triangle_table(n, seed) for n in (3, 5) for seed in range(2)]
    for table in tables:
        gaps = _gaps(table)
        assert all(g >= -1e-6 for g in gaps)
        assert all(b <= a + 1e-6 for a, b in zip(gaps[:-1], gaps[1:], strict=True))


def test_the_k_cluster_rows_close_a_gap_the_cluster_closure_leaves():
    """Where two parents pay three times one, the exact cluster closure stays 0.29–0.51 above OPT on four and five
    variables (a half-weight point taking both others as parents within triangles satisfies every cluster cut)
    and the k-cluster rows close it."""
    for n, seed in itertools.product((4, 5), range(2)):
        gaps = _gaps(triangle_table(n, seed))
        assert gaps[1] > 0.2 and abs(gaps[2]) < 1e-6


def test_the_heuristic_only_stages_run_one_k_at_a_time_and_bound_opt():
    """``--heuristic-only``: one stage per k up to ``max_k``, each above OPT and no looser than the one before —
    with k up to 5 on five and six variables, where a separator that returned clusters of k or fewer members
    (rows reading 0 ≤ |C| − k < 0) made the LP infeasible."""
    tables = [triangle_table(n, seed) for n in (5, 6) for seed in range(2)]
    tables += [dense_table(8, seed, candidates=7, max_size=4) for seed in range(2)]
    for table in tables:
        stages = root_gap.stage_gaps(table, dp_optimum(table), max_k=5, exact_stages=False)
        assert [s[0] for s in stages] == ["heuristic", "+2-heur", "+3-heur", "+4-heur", "+5-heur"]
        gaps = [gap for _, gap, _, _ in stages]
        assert all(g >= -1e-6 for g in gaps)
        assert all(b <= a + 1e-6 for a, b in zip(gaps[:-1], gaps[1:], strict=True))


def _dag_points(table: ScoreTable, data) -> np.ndarray:
    """Every DAG the table admits as a 0/1 vector over ``data``'s families (brute force)."""
    fam = {(data.names[int(v)], ps): k for k, (v, ps) in enumerate(zip(data.child, data.sets, strict=True))}
    points = []
    for dag in all_dags(list(table.variables)):
        if all((v, ps) in fam for v, ps in dag.items()):
            p = np.zeros(data.K)
            p[[fam[v, ps] for v, ps in dag.items()]] = 1.0
            points.append(p)
    return np.array(points)


def test_local_cuts_never_cut_off_a_dag():
    """Local cuts on 3- and 4-variable subsets, separated at random fractional points (each child a random
    distribution over its families) of full tables on 4 and 5 variables: every row holds at every DAG
    (brute force), and the separator fires."""
    fired = 0
    for n, seed in itertools.product((4, 5), range(3)):
        table = random_table(n, 60 + seed, keep=1.0)
        data = _Data(table)
        dags = _dag_points(table, data)
        rng = np.random.default_rng(seed)
        for _ in range(3):
            x = rng.dirichlet(np.full(data.K, 0.3))
            for v in range(n):
                sl = slice(data.start[v], data.start[v + 1])
                x[sl] /= x[sl].sum()
            for m in (3, 4):
                for row, rhs in root_gap.local_cuts(data, x, m):
                    fired += 1
                    assert row @ x > rhs
                    assert (dags @ row <= rhs + 1e-7).all()
    assert fired > 0


def test_the_local_stage_bounds_opt_after_the_others():
    """The ``+local-4`` stage comes last, bounds OPT (DP) and is no looser than the stage before."""
    for table in [dense_table(7, seed, candidates=5, max_size=2) for seed in range(2)] + [triangle_table(5, 0)]:
        stages = root_gap.stage_gaps(table, dp_optimum(table), max_k=2, exact_stages=False, local=4)
        assert [s[0] for s in stages] == ["heuristic", "+2-heur", "+local-4"]
        gaps = [g for _, g, _, _ in stages]
        assert gaps[-1] >= -1e-6 and gaps[-1] <= gaps[-2] + 1e-6
