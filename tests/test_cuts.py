"""Every cut family of bnilp.ilp is valid (never cuts off a DAG) and the exact separator is exact.

Oracles: brute-force DAG listing (tests/oracles.py) and, for the sub-IP, every cluster of a small
vertex set checked by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnilp import ilp
from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.ilp.sepa_subip import cluster_violation, subip_clusters
from bnilp.scorefile import ScoreTable
from tests.conftest import slow_after
from tests.oracles import brute_force_credible, brute_force_networks, dp_optimum
from tests.test_ilp import as_set, dense_table, random_table


@pytest.fixture(autouse=True)
def _branch_and_cut_on_every_family(monkeypatch):
    """The cuts act in branch-and-cut: prove OPT with it on the whole table (no dynamic programme and
    no family filter), so that each cut meets every family."""
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)


def _choice_vector(data: _Data, parents) -> np.ndarray:
    x = np.zeros(data.K)
    for k in range(data.K):
        v = data.names[data.child[k]]
        if parents[v] == data.sets[k]:
            x[k] = 1.0
    return x


def _random_point(data: _Data, rng: np.random.Generator, power: int) -> np.ndarray:
    """A random point of the convexity rows: uniform weights to the ``power`` (mass on few families), each
    variable's normalised to 1."""
    x = rng.random(data.K) ** power
    for i in range(data.n):
        block = slice(data.start[i], data.start[i + 1])
        x[block] /= x[block].sum()
    return x


@pytest.mark.parametrize("seed", range(8))
def test_set_packing_rows_never_cut_off_a_dag(seed):
    """Σ_{v∈C} Σ_{W⊇C∖{v}} x(v,W) ≤ 1 holds on every DAG the table admits (dense tables: big clusters)."""
    table = random_table(5, 7000 + seed, keep=0.9 if seed % 2 else 0.6)
    data = _Data(table)
    clusters = data.set_packing_clusters()
    if seed % 2:
        assert clusters, "a dense table must give set-packing clusters"
    rows = [data.set_packing_families(c) for c in clusters]
    for _, parents in brute_force_networks(table):
        x = _choice_vector(data, parents)
        assert all(x[r].sum() <= 1 for r in rows)


def test_set_packing_clusters_have_the_defining_property():
    table = random_table(6, 11, keep=0.9, max_size=4)
    data = _Data(table)
    clusters = data.set_packing_clusters()
    assert clusters and all(len(c) >= 3 for c in clusters) and len(set(clusters)) == len(clusters)
    for c in clusters:
        fams = set(data.set_packing_families(c).tolist())
        for v in c:
            others = {data.names[u] for u in c if u != v}
            have = [k for k in range(data.start[v], data.start[v + 1]) if others <= data.sets[k]]
            assert have and set(have) <= fams


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_subip_finds_the_most_violated_cluster(seed, k):
    """On random fractional points (convex combinations of parent choices, often cyclic) every cut
    the sub-IP returns is violated, and the best one is the most violated k-cluster of all 2^n."""
    rng = np.random.default_rng(seed)
    table = random_table(6, 8000 + seed, keep=0.5 if k == 1 else 0.8, max_size=3)
    data = _Data(table)
    x = np.zeros(data.K)
    for _ in range(3):
        w = rng.random()
        for i in range(data.n):
            x[rng.integers(data.start[i], data.start[i + 1])] += w
    for i in range(data.n):
        block = slice(data.start[i], data.start[i + 1])
        x[block] /= x[block].sum()
    best = max(cluster_violation(data, x, np.isin(np.arange(data.n), c), k)
               for size in range(k + 1, data.n + 1) for c in itertools.combinations(range(data.n), size))
    cuts = subip_clusters(data, x, time_limit=10.0, k=k)
    if best <= settings._CUT_TOL:
        assert cuts == []
        return
    viols = [cluster_violation(data, x, c, k) for c in cuts]
    assert all(v > settings._CUT_TOL for v in viols)
    assert max(viols) == pytest.approx(best, abs=1e-9)


def assert_brute_force_sets(table) -> None:
    """OPT and the credible sets at BF 1 and 20 equal brute force over every DAG."""
    for eps in (0.0, math.log(20)):
        opt, expected = brute_force_credible(table, eps)
        res = ilp.solve(table, eps)
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        assert as_set(n.parents for n in res.networks) == as_set(p for _, p in expected)

@pytest.mark.parametrize("seed", range(4))
def test_subip_and_set_packing_keep_the_search_exact(monkeypatch, seed):
    """With the sub-IP at every separation call of both phases and the set-packing rows, OPT and the credible sets
    still equal brute force (n = 5) and DP (n = 10)."""
    monkeypatch.setattr(settings, "SUBIP_MODE", "always")
    monkeypatch.setattr(settings, "SUBIP_DEPTH_FREQ", 1)
    monkeypatch.setattr(settings, "SUBIP_PHASE2", True)
    monkeypatch.setattr(settings, "SET_PACKING", True)
    table = random_table(5, 9000 + seed, keep=0.7, ties=seed == 0)
    assert_brute_force_sets(table)
    dense = dense_table(10, seed, candidates=7, max_size=2)
    res = ilp.solve(dense, enumerate_ties=False)
    assert res.optimum == pytest.approx(dp_optimum(dense), abs=1e-9)
    assert res.stats["phase1"]["subip_calls"] > 0


def test_auto_runs_the_subip_from_its_size_on_and_stays_exact(monkeypatch):
    """SUBIP_MODE "auto" reads as "always" from SUBIP_AUTO_MIN_VARIABLES variables up and "off" below,
    in phase 2 too only with SUBIP_PHASE2; the solve records the mode it ran and still gives the
    brute-force OPT and credible sets with the sub-IP called in both phases."""
    from bnilp.ilp.sepa_subip import subip_mode
    monkeypatch.setattr(settings, "SUBIP_MODE", "auto")
    monkeypatch.setattr(settings, "SUBIP_AUTO_MIN_VARIABLES", 5)
    monkeypatch.setattr(settings, "SUBIP_PHASE2", True)
    assert [subip_mode(n, False) for n in (4, 5, 40)] == ["off", "always", "always"]
    assert subip_mode(4, True) == "off" and subip_mode(5, True) == "always"
    monkeypatch.setattr(settings, "SUBIP_DEPTH_FREQ", 1)
    table = random_table(5, 9101, keep=0.8)       # 16 DAGs at BF 20: the sub-IP is called in both phases
    assert_brute_force_sets(table)
    res = ilp.solve(table, math.log(20))
    assert res.stats["phase1"]["subip_mode"] == res.stats["phase2"]["subip_mode"] == "always"
    assert res.stats["phase1"]["subip_calls"] > 0 and res.stats["phase2"]["subip_calls"] > 0
    monkeypatch.setattr(settings, "SUBIP_PHASE2", False)
    assert subip_mode(5, True) == "off" and subip_mode(5, False) == "always"
    assert_brute_force_sets(table)
    res = ilp.solve(table, math.log(20))
    assert res.stats["phase2"]["subip_mode"] == "off" and res.stats["phase2"]["subip_calls"] == 0
    monkeypatch.setattr(settings, "SUBIP_AUTO_MIN_VARIABLES", 6)
    res = ilp.solve(table, math.log(20))
    assert res.stats["phase1"]["subip_mode"] == "off" and res.stats["phase1"]["subip_calls"] == 0
    monkeypatch.setattr(settings, "SUBIP_MODE", "sometimes")
    with pytest.raises(ValueError, match="SUBIP_MODE"):
        subip_mode(5, False)


@pytest.mark.parametrize("seed", slow_after(range(6), 3))
def test_kcluster_rows_never_cut_off_a_dag(seed):
    """Σ_{v∈C} Σ_{|W∩C|≥k} x(v,W) ≤ |C| − k, in whichever form ``cluster_row`` writes it, holds on every DAG
    of a dense random table, for every cluster C and every 1 ≤ k < |C|."""
    table = random_table(5, 6600 + seed, keep=0.85, max_size=4)
    data = _Data(table)
    rows = []
    for size in range(2, data.n + 1):
        for c in itertools.combinations(range(data.n), size):
            cvec = np.isin(np.arange(data.n), c)
            rows += [data.cluster_row(cvec, k) for k in range(1, size)]
    for _, parents in brute_force_networks(table):
        x = _choice_vector(data, parents)
        for fams, lhs, rhs in rows:
            total = x[fams].sum()
            assert (lhs is None or total >= lhs - 1e-9) and (rhs is None or total <= rhs + 1e-9)


def test_the_kcluster_separator_finds_a_violated_triangle_that_every_cluster_cut_allows():
    """Each of a, b, c takes the other two as parents with weight ½ and no parents with ½: every cluster cut
    holds (pairs: ½ + ½ ≤ 1; the triple: 1.5 ≤ 2) but the 2-cluster cut on {a, b, c} is violated by ½."""
    from bnilp.ilp.sepa_cluster import _separate, kcluster_cuts
    from bnilp.scorefile import ScoreTable
    names = ["a", "b", "c", "d"]
    families = {v: {frozenset(): -1.0, frozenset(u for u in names[:3] if u != v): 0.0} if v != "d"
                else {frozenset(): 0.0} for v in names}
    data = _Data(ScoreTable(names, families))
    x = np.array([1.0 if v == "d" else 0.5 for v in data.child_names])     # a, b, c: two families each
    assert all(cluster_violation(data, x, np.isin(np.arange(4), c)) <= settings._CUT_TOL
               for size in range(2, 5) for c in itertools.combinations(range(4), size))
    assert _separate(data, x) == []
    cuts = kcluster_cuts(data, x, 2)
    assert [c.tolist() for c in cuts] == [[True, True, True, False]]
    assert cluster_violation(data, x, cuts[0], 2) == pytest.approx(0.5)


def _with_half_clique(table: ScoreTable, clique: list[int]) -> ScoreTable:
    """``table`` with, for each member v of ``clique``, the families ``{}`` and ``clique ∖ {v}`` (−1 where new)."""
    names = table.variables
    families = {v: dict(table.families[v]) for v in names}
    for i in clique:
        families[names[i]].setdefault(frozenset(names[j] for j in clique if j != i), -1.0)
        families[names[i]].setdefault(frozenset(), -1.0)
    return ScoreTable(names, families)


@pytest.mark.parametrize("seed", range(10))
def test_the_kcluster_separator_reports_only_violated_cuts_and_finds_a_planted_one(seed):
    """On a random fractional point where k + 1 variables C take the other k as parents with weight ½ and no
    parents with ½ (a "½-clique": every cluster cut holds — each subset S of C has |S|·½ ≤ |S| − 1 — while the
    k-cluster cut on C, Σ_{v∈C} x(v, C ∖ {v}) ≤ |C| − k = 1, is violated by (k + 1)/2 − 1), the separator finds a
    violated k-cluster cut, for k = 2 (from a triple) and k ≥ 3 (grown from one), and every cut it returns is
    valid (|C| > k) and violated (checked against the row ``cluster_row`` writes)."""
    from bnilp.ilp.sepa_cluster import kcluster_cuts
    rng = np.random.default_rng(seed)
    base = random_table(6, 8100 + seed, keep=0.8, max_size=3)
    for k in (2, 3, 4, 5):
        clique = sorted(rng.choice(6, k + 1, replace=False).tolist())
        data = _Data(_with_half_clique(base, clique))
        x = _random_point(data, rng, 3)
        for i in clique:
            planted = frozenset(data.names[j] for j in clique if j != i)
            for fam in range(data.start[i], data.start[i + 1]):
                x[fam] = 0.5 if data.sets[fam] in (planted, frozenset()) else 0.0
        assert cluster_violation(data, x, np.isin(np.arange(data.n), clique), k) == pytest.approx((k + 1) / 2 - 1)
        cuts = kcluster_cuts(data, x, k, max_cuts=10**6)
        assert cuts, (k, clique)
        for cvec in cuts:
            assert cvec.sum() > k
            viol = cluster_violation(data, x, cvec, k)
            assert viol > settings._CUT_TOL
            fams, lhs, rhs = data.cluster_row(cvec, k)
            total = x[fams].sum()
            assert (rhs is not None and total - rhs == pytest.approx(viol)) or \
                   (lhs is not None and lhs - total == pytest.approx(viol))


@pytest.mark.parametrize("seed", slow_after(range(4), 2))
def test_kcluster_cuts_keep_the_search_exact(monkeypatch, seed):
    """With 2-, 3- and 4-cluster cuts separated at every call of both phases, OPT and the credible sets still
    equal brute force (n = 5), and OPT the programme's on dense tables (n = 10, 12) where they are cut."""
    monkeypatch.setattr(settings, "KCLUSTER_MODE", "always")
    monkeypatch.setattr(settings, "KCLUSTER_MAX_K", 4)
    table = random_table(5, 9300 + seed, keep=0.8, ties=seed == 0)
    assert_brute_force_sets(table)
    for n in (10, 12):
        dense = dense_table(n, seed, candidates=8, max_size=3)
        res = ilp.solve(dense, enumerate_ties=False)
        assert res.optimum == pytest.approx(dp_optimum(dense), abs=1e-9)
        assert res.stats["phase1"]["cuts"].get("kcluster", 0) > 0


def test_a_kcluster_cut_needs_k_below_the_cluster_size():
    """With |C| ≤ k the inequality is undefined (|C| < k would read 0 ≤ |C| − k < 0 and cut off every DAG):
    both the row and the violation refuse it."""
    data = _Data(random_table(5, 8200, keep=0.8, max_size=3))
    triple = np.isin(np.arange(data.n), [0, 1, 2])
    for k in (0, 3, 4):
        with pytest.raises(ValueError, match="1 <= k < |C|"):
            data.cluster_row(triple, k)
        with pytest.raises(ValueError, match="1 <= k < |C|"):
            cluster_violation(data, np.zeros(data.K), triple, k)


def test_an_unknown_kcluster_mode_is_an_error_naming_the_setting(monkeypatch):
    monkeypatch.setattr(settings, "KCLUSTER_MODE", "sometimes")
    with pytest.raises(ValueError, match="KCLUSTER_MODE"):
        ilp.solve(dense_table(8, 0, candidates=6), enumerate_ties=False)


@pytest.mark.parametrize("seed", range(6))
def test_fourb_cuts_never_cut_off_a_dag(seed):
    """Every 4B row (all quadruples) holds on every DAG of a dense random table."""
    from bnilp.ilp.sepa_fourb import fourb_families
    table = random_table(5, 6000 + seed, keep=0.8)
    data = _Data(table)
    quads = [(a, b, c, d) for a, b in itertools.combinations(range(5), 2)
             for c, d in itertools.combinations([v for v in range(5) if v not in (a, b)], 2)]
    rows = [fourb_families(data, *q) for q in quads]
    for _, parents in brute_force_networks(table):
        x = _choice_vector(data, parents)
        assert all(x[r].sum() <= 2 for r in rows)


@pytest.mark.parametrize("seed", range(6))
def test_fourb_separator_reports_exactly_the_violated_quadruples(seed):
    """fourb_cuts' tensor evaluation agrees with summing each row over its families."""
    from bnilp.ilp.sepa_fourb import fourb_cuts, fourb_families
    data = _Data(random_table(6, 6100 + seed, keep=0.7, max_size=4))
    x = _random_point(data, np.random.default_rng(seed), 4)
    found = set(fourb_cuts(data, x, max_cuts=10**6))
    expected = set()
    for a, b in itertools.combinations(range(6), 2):
        for c, d in itertools.combinations([v for v in range(6) if v not in (a, b)], 2):
            if x[fourb_families(data, a, b, c, d)].sum() > 2 + settings._CUT_TOL:
                expected.add((a, b, c, d))
    assert found == expected


def test_fourb_cuts_keep_the_search_exact(monkeypatch):
    """4B rows (separated where the cluster separators find nothing) enter branch-and-cut's LP — on a
    6-variable table with ties, in its phase 2 — and change no answer: the credible sets equal brute force
    (n = 5) and the programme's own listing (n = 6: peeling, no LP), the optimum the programme's."""
    def fourb_rows(res) -> int:
        return sum(res.stats.get(phase, {}).get("cuts", {}).get("fourb", 0) for phase in ("phase1", "phase2"))

    monkeypatch.setattr(settings, "FOURB", True)     # branch-and-cut alone in this file: the rows meet every family
    rows = 0
    for seed in range(3):
        table = random_table(5, 6200 + seed, keep=0.8, ties=seed == 0)
        opt, expected = brute_force_credible(table, math.log(20))
        res = ilp.solve(table, math.log(20))
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        assert as_set(n.parents for n in res.networks) == as_set(p for _, p in expected)
        rows += fourb_rows(res)
    table = random_table(6, 6200, keep=0.8, ties=True)
    res = ilp.solve(table, math.log(20))
    rows += fourb_rows(res)
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 6)       # the programme proves OPT and peels the set
    monkeypatch.setattr(settings, "FOURB", False)
    oracle = ilp.solve(table, math.log(20))
    assert oracle.stats["phase2"]["method"] == "peeling"
    assert res.optimum == pytest.approx(oracle.optimum, abs=1e-9) == pytest.approx(dp_optimum(table), abs=1e-9)
    assert as_set(n.parents for n in res.networks) == as_set(n.parents for n in oracle.networks)
    assert rows > 0, "no 4B row entered the LP: the test would prove nothing"
    monkeypatch.setattr(settings, "FOURB", True)
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    dense = dense_table(12, 1, candidates=8, max_size=3)
    assert ilp.solve(dense, enumerate_ties=False).optimum == pytest.approx(dp_optimum(dense), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_branch_enumeration_gives_the_same_credible_sets(monkeypatch, seed):
    """Phase 2 by branching to fully fixed leaves (no no-goods) lists exactly the brute-force credible
    set, the same as collect-and-exclude, ties included."""
    table = random_table(5, 5000 + seed, keep=0.7, ties=seed % 2 == 0)
    for eps in (0.0, math.log(3), math.log(150)):
        opt, expected = brute_force_credible(table, eps)
        got = {}
        for mode in settings.ENUMERATION_MODES:
            monkeypatch.setattr(settings, "ENUMERATION", mode)
            res = ilp.solve(table, eps)
            assert res.status == "optimal" and res.complete
            assert res.optimum == pytest.approx(opt, abs=1e-9)
            got[mode] = as_set(n.parents for n in res.networks)
        assert got["branch"] == got["nogoods"] == as_set(p for _, p in expected)


@pytest.mark.slow   # 28 s on this 2-core machine: keeps the README test command well under 15 minutes
def test_lazy_nogoods_list_the_same_dags_and_classes_as_nogood_constraints(monkeypatch):
    """Phase 2 with the recorded DAGs and classes kept in a hash set, their no-goods cut into the LP only
    when a point they exclude turns up (``NOGOODS = "lazy"``), lists exactly the brute-force credible DAGs
    and one DAG of each of their classes, the same as with every no-good a constraint of the model; and the
    look-up does its work: some integral point of a recorded DAG or class is met again and cut off."""
    from bnilp.mec import mec_key
    recuts = 0
    for seed, eps in itertools.product(range(6), (0.0, math.log(3), math.log(20), math.log(150))):
        table = random_table(5, 5100 + seed, keep=0.7, ties=seed % 2 == 0)
        opt, expected = brute_force_credible(table, eps)
        want = {"dags": as_set(p for _, p in expected), "mecs": {mec_key(p) for _, p in expected}}
        for mode in settings.NOGOODS_MODES:
            monkeypatch.setattr(settings, "NOGOODS", mode)
            for unit in settings.ENUMERATE_UNITS:
                res = ilp.solve(table, eps, enumerate_by=unit)
                assert res.status == "optimal" and res.complete
                assert res.optimum == pytest.approx(opt, abs=1e-9)
                got = [mec_key(n.parents) for n in res.networks] if unit == "mecs" else None
                if got is not None:
                    assert len(got) == len(set(got)) and set(got) == want["mecs"]
                else:
                    assert as_set(n.parents for n in res.networks) == want["dags"]
                if mode == "lazy":
                    recuts += res.stats["phase2"]["cuts"].get("nogood_recut", 0)
    assert recuts > 0, "the lazy no-goods must meet a recorded DAG or class again on these tables"


def test_branch_enumeration_honours_the_network_limit(monkeypatch):
    monkeypatch.setattr(settings, "ENUMERATION", "branch")
    table = random_table(4, 9, keep=0.8)
    res = ilp.solve(table, 1e6, max_networks=5)
    assert res.status == "network_limit" and not res.complete and len(res.networks) == 5


@pytest.mark.parametrize("seed", slow_after(range(12), 6))
def test_ancestor_propagation_never_forbids_a_dag_of_the_node(seed):
    """At random nodes (random families removed, some children fixed to one family) every family that
    :func:`ancestor_fixings` forbids is used by no DAG the node still admits, and it reports an empty
    node exactly when the node admits no DAG. Oracle: every DAG of the table (brute force, n = 5)."""
    from bnilp.ilp.prop_ancestors import ancestor_fixings
    rng = np.random.default_rng(seed)
    table = random_table(5, 7100 + seed, keep=0.8)
    data = _Data(table)
    dags = [_choice_vector(data, parents) > 0.5 for _, parents in brute_force_networks(table)]
    fired = 0
    for _ in range(40):
        allowed = rng.random(data.K) < 0.85
        for i in rng.choice(data.n, size=int(rng.integers(1, 4)), replace=False):
            block = np.arange(data.start[i], data.start[i + 1])
            allowed[block] = False
            allowed[rng.choice(block)] = True                     # child i fixed to one family
        at_node = [x for x in dags if not (x & ~allowed).any()]
        fix = ancestor_fixings(data, allowed)
        if fix is None:
            assert not at_node
            continue
        assert set(fix.tolist()) <= set(np.flatnonzero(allowed).tolist())
        assert not any(x[fix].any() for x in at_node)
        fired += len(fix)
    assert fired > 0, "the propagator must fire on these nodes"


@pytest.mark.parametrize("seed", slow_after(range(4), 1))     # 5 s a seed
def test_ancestor_propagation_keeps_the_search_exact(monkeypatch, seed):
    """With the propagator at every node, OPT and the credible sets (both enumeration modes) equal brute
    force (n = 5) and OPT equals DP (n = 10); the propagator fixed families on the way."""
    monkeypatch.setattr(settings, "ANCESTOR_PROPAGATION", True)
    table = random_table(5, 7200 + seed, keep=0.7, ties=seed % 2 == 0)
    for mode in settings.ENUMERATION_MODES:
        monkeypatch.setattr(settings, "ENUMERATION", mode)
        for eps in (0.0, math.log(3), math.log(150)):
            opt, expected = brute_force_credible(table, eps)
            res = ilp.solve(table, eps)
            assert res.status == "optimal" and res.complete
            assert res.optimum == pytest.approx(opt, abs=1e-9)
            assert as_set(n.parents for n in res.networks) == as_set(p for _, p in expected)
    dense = dense_table(10, seed, candidates=7, max_size=2)
    res = ilp.solve(dense, math.log(3))
    assert res.optimum == pytest.approx(dp_optimum(dense), abs=1e-9)
    assert res.stats["phase2"]["prop_fixings"] > 0


@pytest.mark.parametrize("switch,value", [("ARROW_VARIABLES", True), ("SKIP_INTEGRAL_SEPA", True),
                                          ("NOGOODS_IN_LP", False), ("SUBIP_MODE", "fallback"),
                                          ("SINK_HEUR_TIMING", "duringlploop"), ("NOGOOD_POOL", True),
                                          ("NOGOODS", "constraints")])
def test_search_switches_keep_the_credible_sets(monkeypatch, switch, value):
    """Each measured-but-off switch of bnilp.ilp.settings still gives the brute-force OPT and sets."""
    monkeypatch.setattr(settings, switch, value)
    for seed in range(2):
        table = random_table(5, 4000 + seed, keep=0.7, ties=seed == 0)
        assert_brute_force_sets(table)


def test_the_subip_fallback_alone_separates_and_keeps_the_credible_sets(monkeypatch):
    """SUBIP_MODE "fallback" calls the sub-IP only where the heuristic separator found nothing — which on small
    tables it never does (the switch's case above never reached it): with the heuristic finding nothing at all,
    the fallback does every separation, and OPT and the credible sets are still brute force's."""
    from bnilp.ilp import sepa_cluster

    monkeypatch.setattr(settings, "SUBIP_MODE", "fallback")
    monkeypatch.setattr(settings, "SUBIP_PHASE2", True)
    monkeypatch.setattr(settings, "SUBIP_DEPTH_FREQ", 1)
    monkeypatch.setattr(sepa_cluster, "_separate", lambda data, x, max_cuts=50: [])
    rows = 0
    for seed in range(2):
        table = random_table(5, 4000 + seed, keep=0.7, ties=seed == 0)
        assert_brute_force_sets(table)
        res = ilp.solve(table, math.log(20))      # phase 1 solves at an integral root; phase 2 separates
        assert res.stats["phase2"]["subip_mode"] == "fallback" and res.stats["phase2"]["subip_calls"] > 0
        rows += res.stats["phase2"]["cuts"].get("subip", 0)
    assert rows > 0, "the sub-IP added no cut: the fallback was never needed"


def _violation(data: _Data, x: np.ndarray, members: np.ndarray, k: int) -> float:
    """Σ_{v∈C} Σ_{|Π∩C|≥k} x(v, Π) − (|C| − k), family by family."""
    fams = [f for f in range(data.K) if members[data.child[f]]
            and sum(bool(members[p]) for p in np.flatnonzero(data.pbool[f])) >= k]
    return math.fsum(x[fams]) - (int(members.sum()) - k)


@pytest.mark.parametrize("seed", range(6))
def test_a_local_search_move_is_valued_at_the_violation_of_the_moved_cluster(seed):
    """The separator's move values (sums over the support's arrows) are the k-cluster violation
    Σ_{v∈C'} Σ_{|Π∩C'|≥k} x(v, Π) − (|C'| − k) of C' = C ∪ {v} (v ∉ C) and C' = C ∖ {v} (v ∈ C, |C| > k + 1),
    summed here family by family from the definition, on random points, clusters and k."""
    from bnilp.ilp.sepa_cluster import _move_values, _SupportArrows

    rng = np.random.default_rng(seed)
    for trial in range(40):
        n = int(rng.integers(2, 9))
        data = _Data(random_table(n, 8700 + 50 * seed + trial, keep=0.8, max_size=4))
        x = _random_point(data, rng, 3)
        x[x < 0.05] = 0.0
        sup = np.flatnonzero(x > settings._SUPPORT_TOL)
        k = int(rng.integers(1, 4))
        cvec = rng.random(n) < 0.5
        cnt = np.array([sum(bool(cvec[p]) for p in np.flatnonzero(data.pbool[f])) for f in sup])
        add, drop = _move_values(_SupportArrows.of(data, x, sup), cvec, cnt, k)

        for v in range(n):
            moved = cvec.copy()
            moved[v] = not cvec[v]
            if cvec[v] and cvec.sum() <= k + 1:
                assert drop[v] == -math.inf
            else:
                assert (drop if cvec[v] else add)[v] == pytest.approx(_violation(data, x, moved, k), abs=1e-12)
            assert (add if cvec[v] else drop)[v] == -math.inf


@pytest.mark.parametrize("seed", range(4))
def test_strong_components_are_networkx_s_on_random_digraphs(seed):
    """The separator's and the cycle check's SCCs (compiled Kosaraju over an arc list) are exactly networkx's
    (Tarjan's) components with two or more vertices, of every thresholded graph {arcs of weight ≥ t} and of the
    unweighted graph, self-loops, repeated arcs and empty graphs included."""
    import networkx as nx

    from bnilp.ilp.sepa_cluster import strong_components

    rng = np.random.default_rng(seed)
    thresholds = (0.999, 0.5, 0.25, 1e-6)
    for _ in range(50):
        n = int(rng.integers(1, 40))
        m = int(rng.integers(0, 3 * n + 1))
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        weight = rng.choice([0.0, 1e-7, 0.25, 0.3, 0.5, 0.7, 0.999, 1.0], m)
        got = strong_components(n, src, dst, weight, thresholds) + strong_components(n, src, dst)
        for graph, t in enumerate((*thresholds, -np.inf)):
            g = nx.DiGraph()
            g.add_nodes_from(range(n))
            g.add_edges_from((int(a), int(b)) for a, b, w in zip(src, dst, weight, strict=True) if w >= t)
            want = sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) >= 2)
            assert [np.flatnonzero(c).tolist() for c in got[graph]] == want


def test_classes_past_the_cap_count_for_their_compact_row_in_the_memory_guard(monkeypatch):
    """count_past_cap: with 64 GiB free, no floor, 10 GiB for each of the 4 classes reported in full and 1 GiB
    for each class past the cap (kept compact), the 29th class found is the first one too many (4·10 + 24·1
    = 64); the guard stops branch-and-cut there with status ``memory_limit``, the best 4 listed and the rest
    counted, every one of them a distinct credible class."""
    from bnilp.ilp import search
    from bnilp.mec import mec_key
    gib = 1 << 30
    table = random_table(5, 9101, keep=0.9)
    eps = math.log(1e6)
    _, expected = brute_force_credible(table, eps)
    want = {mec_key(p) for _, p in expected}
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_SHARE", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_BYTES", 0)
    ten_gib = (10 * gib, 0, 0, None)
    monkeypatch.setattr(settings, "ENUMERATION_REPORT_BYTES", {"dags": ten_gib, "mecs": ten_gib})
    monkeypatch.setattr(settings, "ENUMERATION_TAIL_BYTES", gib)
    monkeypatch.setattr(search, "free_memory", lambda: 64 * gib)
    res = ilp.solve(table, eps, enumerate_by="mecs", max_networks=4, count_past_cap=True)
    assert res.status == "memory_limit" and res.optimum_proven and res.unlisted is not None
    found = [n.parents for n in res.networks] + [p for _, p in res.unlisted.items(0, len(res.unlisted))]
    keys = [mec_key(p) for p in found]
    assert len(res.networks) == 4 and len(keys) == 29 < len(want) and set(keys) <= want and len(set(keys)) == 29
    assert res.stats["phase2"]["memory_stop"]["needed_bytes"] == 65 * gib


@pytest.mark.parametrize("unit", ["dags", "mecs"])
def test_phase2_stops_when_the_free_memory_would_not_hold_the_report(monkeypatch, tmp_path, unit):
    """Phase 2 watches the free memory: once it falls below the floor plus what the report of the networks
    (or classes) recorded so far will need, the search stops with status ``memory_limit`` — incomplete,
    exit 3 on the command line, what it found kept and every one of them credible — instead of the
    out-of-memory killer ending the run with nothing. Stand-in for a machine running short: 64 GiB free,
    10 GiB needed per network and no floor, so the seventh network recorded is one too many."""
    import json

    from click.testing import CliRunner

    from bnilp.cli import EXIT_LIMIT, main
    from bnilp.ilp import search
    from bnilp.mec import mec_key
    from bnilp.scorefile import write_jaakkola
    gib = 1 << 30
    table = random_table(5, 9101, keep=0.9)
    eps = math.log(1e6)
    _, expected = brute_force_credible(table, eps)
    want = {mec_key(p) for _, p in expected} if unit == "mecs" else as_set(p for _, p in expected)
    assert len(want) > 7
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_SHARE", 0.0)
    monkeypatch.setattr(settings, "ENUMERATION_MEMORY_FLOOR_BYTES", 0)
    ten_gib = (10 * gib, 0, 0, None)
    monkeypatch.setattr(settings, "ENUMERATION_REPORT_BYTES", {"dags": ten_gib, "mecs": ten_gib})
    monkeypatch.setattr(search, "free_memory", lambda: 64 * gib)
    res = ilp.solve(table, eps, enumerate_by=unit)
    assert res.status == "memory_limit" and not res.complete and res.optimum_proven
    got = [mec_key(n.parents) for n in res.networks] if unit == "mecs" else as_set(n.parents for n in res.networks)
    assert 7 <= len(got) < len(want) and set(got) <= want and len(set(got)) == len(got)
    stop = res.stats["phase2"]["memory_stop"]
    assert stop["free_bytes"] == 64 * gib < stop["needed_bytes"]
    assert "free memory low" in res.message and "incomplete" in res.message
    path, out = tmp_path / "t.scores", tmp_path / "r.json"
    table.meta["score_equivalent"] = True   # assumed: random scores, counted as classes (the equivalence check off)
    write_jaakkola(table, path)
    cli = CliRunner().invoke(main, ["solve", str(path), "--bf", "1e6", "--enumerate", unit, "--json", str(out)])
    doc = json.loads(out.read_text())
    assert cli.exit_code == EXIT_LIMIT == 3 and doc["status"] == "memory_limit" and doc["complete"] is False
    assert "free memory low" in cli.output


def test_an_unknown_nogoods_mode_is_an_error_naming_the_setting(monkeypatch):
    monkeypatch.setattr(settings, "NOGOODS", "sometimes")
    with pytest.raises(ValueError, match="NOGOODS must be one of"):
        ilp.solve(random_table(4, 9, keep=0.8), math.log(20))


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_class_no_good_is_the_keyed_one_term_for_term(seed):
    """The class no-good built in compiled code over indicator positions (``mec_row_positions``, phase 2's
    path) has the same terms, in the same order, and the same right-hand side as ``mec_row_indicators`` over
    the indicators' keys, on every DAG of random tables (the keyed form is what the brute-force class tests
    check; it still serves past 62 variables)."""
    table = random_table(5, 9300 + seed, keep=0.8 if seed % 2 else 0.5)
    data = _Data(table)
    pairs, triples = data.class_indicators()
    keys = [("adj", p) for p in pairs] + [("col", t) for t in triples]
    positions = data.indicator_positions(pairs, triples)
    index = {(data.names[data.child[k]], data.sets[k]): k for k in range(data.K)}
    dags = [p for _, p in brute_force_networks(table)]
    assert len(dags) > 50
    for parents in dags:
        choice = tuple(sorted(index[v, parents[v]] for v in data.names))
        terms, rhs = data.mec_row_indicators(choice, pairs, triples)
        pos, coef, rhs_c = data.mec_row_positions(choice, positions)
        assert [keys[i] for i in pos.tolist()] == [key for key, _ in terms]
        assert coef.tolist() == [c for _, c in terms] and rhs_c == rhs


@pytest.mark.parametrize("mode", ["lazy", "constraints", "branch"])
def test_enumeration_records_no_point_a_higher_priority_handler_found_infeasible(monkeypatch, mode):
    """SCIP calls the acyclicity handler after a handler enforcing before it said INFEASIBLE (``solinfeasible``;
    the linear handler on a pseudo-solution that breaks a row outside the LP, e.g. a required adjacency): such
    an acyclic integral point is no credible DAG, so phase 2 answers INFEASIBLE and records nothing, whatever
    the recording mode."""
    from pyscipopt import SCIP_RESULT

    from bnilp.ilp.cons_acyclic import _Acyclicity

    monkeypatch.setattr(settings, "NOGOODS", "lazy" if mode == "lazy" else "constraints")
    monkeypatch.setattr(settings, "ENUMERATION", "branch" if mode == "branch" else "nogoods")
    data = _Data(random_table(3, 1))
    recorded = []
    hdlr = _Acyclicity(data, [], enumerate_mode=True, stats={"python_enforce_seconds": 0.0, "cuts": {}},
                       on_record=recorded.append)
    empty = {v: frozenset() for v in data.names}
    point = _choice_vector(data, empty)
    for lp in (True, False):
        assert hdlr._enforce(point, lp, solinfeasible=True) == {"result": SCIP_RESULT.INFEASIBLE}
    assert recorded == [] and not hdlr.recorded and len(hdlr.recorded_table) == 0


def test_the_family_arrays_dense_and_sparse_rows_agree() -> None:
    """``_Data``'s dense K × n parent matrix and its CSR rows (built together from the parent sets, in each
    family's variable order) name the same parents, the masks too, on a table with empty, single and wide sets
    and variables whose names sort otherwise than their order."""
    rng = np.random.default_rng(5)
    names = [f"z{i}" if i % 2 else f"a{i}" for i in range(9)]
    families = {}
    for v in names:
        others = [u for u in names if u != v]
        sets = {frozenset()} | {frozenset(rng.choice(others, int(rng.integers(1, 5)), replace=False)) for _ in range(6)}
        families[v] = {ps: -float(rng.random()) - len(ps) for ps in sets}
    data = _Data(ScoreTable(names, families))
    start, idx = data.parent_csr()
    fam, par = np.nonzero(data.pbool)
    assert np.array_equal(start, np.searchsorted(fam, np.arange(data.K + 1))) and np.array_equal(idx, par)
    index = {v: i for i, v in enumerate(names)}
    assert all({names[j] for j in idx[start[k]:start[k + 1]]} == set(data.sets[k]) for k in range(data.K))
    assert data.pmask == [sum(1 << index[p] for p in ps) for ps in data.sets]
