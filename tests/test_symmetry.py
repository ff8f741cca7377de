"""Symmetries of the score table in phase 2 (bnilp.ilp.symmetry): identical columns give transpositions that
map the table to itself; the search finds about one class per orbit (lex-leader rows) and records the rest as
images — and lists exactly the classes it lists without them."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from pyscipopt import Model

from bnilp import ilp
from bnilp.data import from_dataframe
from bnilp.ilp import symmetry
from bnilp.ilp.families import _Data
from bnilp.mec import mec_key
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame, slow_after
from tests.oracles import brute_force_credible


def _with_twins(seed: int, n: int, twins: list[tuple[int, int]], N: int = 60) -> pd.DataFrame:
    """Random data on ``n`` columns where column b of each (a, b) in ``twins`` is a copy of column a."""
    frame = random_discrete_frame(seed, n=n, N=N)
    cols = list(frame.columns)
    for a, b in twins:
        frame[cols[b]] = frame[cols[a]]
    return frame


def _table(frame: pd.DataFrame, score: str, bf: float):
    return score_parent_sets(make_score(score, from_dataframe(frame, discrete=list(frame.columns))),
                             epsilon=math.log(bf))


def test_identical_columns_give_transpositions_that_map_the_table_to_itself():
    """Columns 1 ≡ 3 and 0 ≡ 4: exactly the pairs (1, 3) and (0, 4); each map is an involution that sends a
    family to the family with u and v exchanged, with the same score bit for bit. Random data: none."""
    table = _table(_with_twins(5, 6, [(1, 3), (0, 4)]), "bic", 20)
    data = _Data(table)
    sym = symmetry.table_transpositions(data)
    assert sorted(sym.pairs) == [(0, 4), (1, 3)]
    for (u, v), fmap in zip(sym.pairs, sym.maps, strict=True):
        assert np.array_equal(fmap[fmap], np.arange(data.K))
        assert np.array_equal(data.score[fmap], data.score)
        swap = {u: v, v: u}
        for k in range(data.K):
            image = int(fmap[k])
            assert data.child[image] == swap.get(int(data.child[k]), int(data.child[k]))
            assert sorted(swap.get(p, p) for p in np.flatnonzero(data.pbool[k])) == list(
                np.flatnonzero(data.pbool[image]))
    assert symmetry.table_transpositions(data, max_pairs=1).pairs == ((0, 4),)
    assert symmetry.table_transpositions(_Data(_table(random_discrete_frame(5, n=6, N=60), "bic", 20))).pairs == ()


def test_lex_leader_rows_admit_exactly_the_vectors_not_below_their_image():
    """add_lex_rows with the generators (0 1) and (2 3) on the adjacency indicators of 5 nodes: with every
    indicator fixed, the rows are feasible iff x ≥_lex σ(x) for each generator, in the global order of the
    pair keys — checked on every one of the 2^10 vectors."""
    keys = list(itertools.combinations(range(5), 2))
    pairs = {k: None for k in keys}
    sym = symmetry.TableSymmetry(((0, 1), (2, 3)), ())
    perms = [{0: 1, 1: 0}, {2: 3, 3: 2}]
    for bits in itertools.product((0, 1), repeat=len(keys)):
        x = dict(zip(keys, bits, strict=True))
        model = Model()
        model.hideOutput()
        ind = {("adj", k): model.addVar(lb=x[k], ub=x[k], vtype="B") for k in keys}
        symmetry.add_lex_rows(model, ind, sym, pairs)
        model.optimize()
        feasible = model.getStatus() == "optimal"
        images = [tuple(x[tuple(sorted((p.get(a, a), p.get(b, b))))] for a, b in keys) for p in perms]
        assert feasible == all(bits >= image for image in images), bits


@pytest.mark.parametrize(("seed", "n", "twins", "score", "bf"), slow_after([
    (1, 5, [(0, 2)], "bic", 150), (2, 5, [(1, 4)], "bdeu", 20), (3, 5, [(0, 1), (2, 3)], "bic", 1e3),
    (4, 6, [(2, 5)], "bdeu", 150), (5, 6, [(0, 3), (1, 4)], "bic", 150)], 3))
def test_class_enumeration_with_the_symmetry_lists_the_same_classes(monkeypatch, seed, n, twins, score, bf):
    """Branch-and-cut class enumeration (the programme off) on data with identical columns, on one process and
    in cubes on two: the same classes as without the symmetry and, for n = 5, as brute force over all DAGs —
    each once — with images recorded and lex rows added."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "FOREST_ENUMERATION", False)     # (a palim-1 table would take the forests)
    monkeypatch.setattr(ilp.settings, "BRANCHING_ENUMERATION", False)
    eps = math.log(bf)
    table = _table(_with_twins(seed, n, twins), score, bf)
    runs = {}
    for use, jobs in [(True, 1), (True, 2), (False, 1)]:
        monkeypatch.setattr(ilp.settings, "SYMMETRY", use)
        monkeypatch.setattr(ilp.settings, "PHASE2_SERIAL_SECONDS", 0.0 if jobs == 2 else 5.0)
        res = ilp.solve(table, eps, enumerate_by="mecs", jobs=jobs)
        assert res.complete
        keys = [mec_key(net.parents) for net in res.networks]
        assert len(keys) == len(set(keys))
        runs[use, jobs] = (set(keys), sorted(round(net.score, 9) for net in res.networks), res.stats)
    assert runs[True, 1][:2] == runs[False, 1][:2] == runs[True, 2][:2]
    stats = runs[True, 1][2]["phase2"]
    assert stats["symmetry"]["lex_rows"] > 0 and len(stats["symmetry"]["pairs"]) == len(twins)
    assert stats["cuts"].get("symmetry_image", 0) > 0
    assert "symmetry" not in runs[False, 1][2]["phase2"]
    if n == 5:
        _, expected = brute_force_credible(table, eps)
        assert runs[True, 1][0] == {mec_key(p) for _, p in expected}


def test_reports_with_and_without_the_symmetry_agree(monkeypatch):
    """solve_table's class report (both priors) is the same with and without the symmetry: classes, DAG counts,
    class, edge and adjacency posteriors."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    eps = math.log(150)
    table = _table(_with_twins(7, 6, [(1, 2), (3, 5)]), "bic", 150)
    for prior in ("dags", "mecs"):
        reports = []
        for use in (True, False):
            monkeypatch.setattr(ilp.settings, "SYMMETRY", use)
            reports.append(solve_table(table, epsilon=eps, enumerate_by="mecs", prior=prior).report)
        on, off = reports
        assert on["n_mecs"] == off["n_mecs"] and on["n_networks"] == off["n_networks"]
        rows = [sorted((str(m["cpdag"]), m["n_dags"], round(m["posterior"], 12)) for m in r["mecs"]) for r in reports]
        assert rows[0] == rows[1]
        for part, key in (("edges", ("from", "to")), ("adjacency", ("u", "v"))):
            a, b = ({tuple(e[k] for k in key): e["posterior"] for e in r[part]} for r in reports)
            assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], abs=1e-12) for k in a)
