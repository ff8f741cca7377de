"""bnilp.ilp against independent oracles: brute-force DAG enumeration (n ≤ 5) and DP (n ≤ 12)."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from bnilp import ilp
from bnilp.errors import InputError
from bnilp.ilp import SolveResult, solve, to_digraph
from bnilp.scorefile import ScoreTable, read_jaakkola
from tests.oracles import brute_force_credible, brute_force_networks, dp_optimum, is_acyclic

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EPSILONS = (0.0, math.log(3), math.log(20), math.log(150))


def random_table(n: int, seed: int, *, keep: float = 0.5, max_size: int | None = None,
                 ties: bool = False, pruned: bool = False, empty: bool = True) -> ScoreTable:
    """A random table: a random subset of each variable's parent sets (∅ always, unless
    ``empty`` is False). ``ties``: scores are multiples of 1/4 (exact sums, many equal networks);
    ``pruned``: keep a set only if it beats all its kept subsets (as pruning would)."""
    rng = random.Random(seed)
    names = [f"V{i}" for i in range(n)]
    families: dict[str, dict[frozenset[str], float]] = {}
    for v in names:
        others = [u for u in names if u != v]
        limit = len(others) if max_size is None else max_size
        fam: dict[frozenset[str], float] = {}
        for size in range(limit + 1):
            for ps in itertools.combinations(others, size):
                if size == 0 and empty or size > 0 and rng.random() < keep:
                    base = -10.0 * (1 + size) * rng.random() - size
                    fam[frozenset(ps)] = rng.randint(-40, 0) / 4 if ties else base
        if pruned:
            fam = {ps: s for ps, s in fam.items()
                   if all(s > t for qs, t in fam.items() if qs < ps)}
        if not fam:
            fam[frozenset(rng.sample(others, 1))] = -1.0
        families[v] = fam
    return ScoreTable(variables=names, families=families)


def dense_table(n: int, seed: int, candidates: int = 12, max_size: int = 3) -> ScoreTable:
    """A hard table: symmetric pairwise gains make most cycles attractive (large root gap)."""
    rng = random.Random(seed)
    names = [f"V{i}" for i in range(n)]
    gain = {}
    for i in range(n):
        for j in range(i + 1, n):
            gain[i, j] = gain[j, i] = rng.uniform(0, 6)
    families = {}
    for i, v in enumerate(names):
        others = rng.sample([j for j in range(n) if j != i], candidates)
        families[v] = {frozenset(names[j] for j in ps):
                       sum(gain[i, j] for j in ps) - 1.5 * size - 0.2 * size * size + rng.random()
                       for size in range(max_size + 1) for ps in itertools.combinations(others, size)}
    return ScoreTable(variables=names, families=families)


def as_set(networks) -> set[tuple[tuple[str, frozenset[str]], ...]]:
    return {tuple(sorted(p.items())) for p in networks}


@pytest.fixture(params=["dp", "dp-filter", "branch-and-cut"])
def optimum_by(request, monkeypatch) -> str:
    """Run the test by each route: OPT by dynamic programming and the credible set by peeling (the default
    up to ``DP_MAX_VARIABLES``); OPT by dynamic programming and phase 2 by branch-and-cut on the kept
    families (``DP_ENUMERATION = False``); both phases by branch-and-cut on every family
    (``DP_MAX_VARIABLES = 0``)."""
    if request.param == "branch-and-cut":
        monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    if request.param == "dp-filter":
        monkeypatch.setattr(ilp.settings, "DP_ENUMERATION", False)
    return request.param


def check_result(table: ScoreTable, res: SolveResult, epsilon: float) -> None:
    """Invariants every result must satisfy, whatever its status."""
    keys = []
    for net in res.networks:
        assert set(net.parents) == set(table.variables)
        assert is_acyclic(net.parents)
        for v, ps in net.parents.items():
            assert ps in table.families[v]
        assert net.score == table.network_score(net.parents)
        keys.append(tuple(sorted(net.parents.items())))
    assert len(keys) == len(set(keys)), "a network was listed twice"
    scores = [net.score for net in res.networks]
    assert scores == sorted(scores, reverse=True)
    if res.optimum is not None and res.networks:
        assert res.networks[0].score == res.optimum
        assert all(s >= res.optimum - epsilon - 1e-9 * max(1.0, abs(res.optimum)) for s in scores)
        assert res.bound >= res.optimum - 1e-6 * max(1.0, abs(res.optimum))
    json.dumps(res.to_dict())


CASES = [(n, seed, kind) for n in (3, 4, 5) for seed in range(6)
         for kind in ("plain", "ties", "pruned")]


@pytest.mark.parametrize("n,seed,kind", CASES)
def test_credible_sets_match_brute_force(n, seed, kind, optimum_by):
    keep = {3: 0.8, 4: 0.5, 5: 0.3}[n]
    table = random_table(n, 1000 * n + seed, keep=keep, ties=kind == "ties", pruned=kind == "pruned")
    for eps in EPSILONS:
        res = solve(table, eps)
        opt, expected = brute_force_credible(table, eps)
        check_result(table, res, eps)
        assert res.status == "optimal" and res.complete
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        assert as_set(net.parents for net in res.networks) == as_set(p for _, p in expected), eps


@pytest.mark.parametrize("n,seed", [(3, 1), (3, 2), (4, 3), (4, 4)])
def test_huge_epsilon_lists_every_admitted_dag(n, seed, optimum_by):
    table = random_table(n, seed, keep=0.6)
    res = solve(table, 1e6)
    _, expected = brute_force_credible(table, 1e6)
    check_result(table, res, 1e6)
    assert res.complete
    assert as_set(net.parents for net in res.networks) == as_set(p for _, p in expected)


def test_full_tables_on_four_variables_give_all_543_dags():
    table = random_table(4, 7, keep=1.0)
    res = solve(table, 1e6)
    assert len(res.networks) == 543 and res.complete


@pytest.mark.parametrize("n,seed", [(n, s) for n in range(8, 13) for s in range(2)])
def test_optimum_matches_dynamic_programming(n, seed, optimum_by):
    table = random_table(n, 77 * n + seed, keep=0.08, max_size=3, pruned=seed == 1)
    res = solve(table, 0.0, enumerate_ties=False)
    check_result(table, res, 0.0)
    assert res.status == "optimal"
    assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-9)
    assert len(res.networks) == 1 and not res.complete


def test_ties_are_all_listed_at_epsilon_zero():
    table = random_table(4, 11, keep=0.7, ties=True)
    opt, expected = brute_force_credible(table, 0.0)
    res = solve(table, 0.0)
    assert res.complete and len(res.networks) == len(expected)
    assert all(net.score == opt for net in res.networks)


def test_infeasible_table():
    table = ScoreTable(variables=["A", "B", "C"], families={
        "A": {frozenset({"B"}): -1.0},
        "B": {frozenset({"A"}): -2.0, frozenset({"C", "A"}): -3.0},
        "C": {frozenset(): -1.0},
    })
    for eps in (0.0, 1.0):
        res = solve(table, eps)
        assert res.status == "infeasible" and res.networks == [] and res.optimum is None
        json.dumps(res.to_dict())
    empty = ScoreTable(variables=["A", "B"], families={"A": {}, "B": {frozenset(): 0.0}})
    assert solve(empty).status == "infeasible"


def test_no_empty_parent_set_but_feasible():
    table = ScoreTable(variables=["A", "B", "C"], families={
        "A": {frozenset({"B"}): -1.0, frozenset({"C"}): -4.0},
        "B": {frozenset({"A"}): -2.0, frozenset(): -5.0},
        "C": {frozenset({"A"}): -1.0, frozenset(): -3.0},
    })
    for eps in EPSILONS:
        opt, expected = brute_force_credible(table, eps)
        res = solve(table, eps)
        check_result(table, res, eps)
        assert res.optimum == pytest.approx(opt)
        assert as_set(n.parents for n in res.networks) == as_set(p for _, p in expected)


@pytest.mark.parametrize("seed", range(4))
def test_warm_start_never_changes_the_optimum(seed):
    table = random_table(9, 500 + seed, keep=0.1, max_size=3)
    rng = random.Random(seed)
    order = list(table.variables)
    rng.shuffle(order)
    warm = {}
    for pos, v in enumerate(order):
        allowed = [ps for ps in table.families[v] if ps <= set(order[:pos])]
        warm[v] = rng.choice(allowed)
    res = solve(table, 0.0, warm_start=warm, enumerate_ties=False)
    assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-9)
    res_opt = solve(table, 0.0, warm_start=res.networks[0].parents, enumerate_ties=False)
    assert res_opt.optimum == pytest.approx(res.optimum, abs=1e-9)


def test_invalid_warm_start_is_rejected():
    table = random_table(3, 5, keep=1.0)
    cyclic = {"V0": frozenset({"V1"}), "V1": frozenset({"V0"}), "V2": frozenset()}
    with pytest.raises(InputError, match="cycle"):
        solve(table, warm_start=cyclic)
    table.families["V0"].pop(frozenset({"V1", "V2"}), None)
    with pytest.raises(InputError, match="not in the score table"):
        solve(table, warm_start={"V0": frozenset({"V1", "V2"}), "V1": frozenset(), "V2": frozenset()})
    with pytest.raises(InputError, match=r"variables missing 2 \(V1, V2\), unknown none: it must give every"):
        solve(table, warm_start={"V0": frozenset()})
    many = random_table(8, 8, keep=0.3)
    with pytest.raises(InputError, match=r"missing 7 \(V1, V2, V3, V4, V5, …\), unknown 1 \(W\)"):
        solve(many, warm_start={"V0": frozenset(), "W": frozenset()})


def test_time_limit_returns_valid_dag_and_honest_gap():
    solve(dense_table(6, 0, candidates=4), 1.0)     # the process's first solve pays one-off start-up costs
    table = dense_table(25, 0)
    res = solve(table, 1.0, time_limit=0.5)
    assert res.status == "time_limit" and not res.complete
    assert "time limit" in res.message
    assert len(res.networks) == 1
    check_result(table, res, math.inf)
    assert res.bound >= res.optimum
    assert res.gap == pytest.approx(abs(res.bound - res.optimum) / abs(res.optimum))
    assert res.seconds < 0.5 + 10      # stopped near its limit (a loaded machine overruns by seconds, not minutes)


@pytest.mark.parametrize("limit", [1e20, 1.1e20, 1e300])
def test_a_time_limit_past_scips_range_is_no_limit(monkeypatch, limit):
    """SCIP takes ``limits/time`` up to 1e20 (its infinity); a longer limit is none — it stopped the search with
    SCIP's "invalid value" and a traceback (a review's find), in both phases of branch-and-cut."""
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "DP_ENUMERATION", False)
    table = random_table(5, 14)
    res = solve(table, 2.0, time_limit=limit)
    assert res.status == "optimal" and res.complete
    check_result(table, res, 2.0)


def test_time_limit_in_phase_two_keeps_the_proven_optimum(monkeypatch):
    monkeypatch.setattr(ilp.settings, "DP_ENUMERATION", False)     # branch-and-cut's phase 2 (peeling: test_ilp_dp)
    table = random_table(5, 13, keep=1.0)
    opt, _ = brute_force_credible(table, 0.0)
    res = solve(table, 1e6, time_limit=1.5)
    assert res.status == "time_limit" and not res.complete
    assert res.optimum == pytest.approx(opt, abs=1e-9)
    assert 0 < len(res.networks) < 29281 and "incomplete" in res.message
    check_result(table, res, 1e6)


@pytest.mark.parametrize("seed", range(3))
def test_enforcement_alone_is_exact(monkeypatch, seed, optimum_by):
    """Without LP separation every cycle must still be cut off by consenfolp/consenfops."""
    monkeypatch.setattr(ilp.sepa_cluster, "_separate", lambda data, x, max_cuts=50: [])
    table = random_table(5, 3000 + seed, keep=0.6, ties=seed == 0)
    for eps in (0.0, math.log(20)):
        opt, expected = brute_force_credible(table, eps)
        res = solve(table, eps)
        assert res.optimum == pytest.approx(opt, abs=1e-9)
        assert as_set(n.parents for n in res.networks) == as_set(p for _, p in expected)
    dense = dense_table(10, seed, candidates=7, max_size=2)
    assert solve(dense, enumerate_ties=False).optimum == pytest.approx(dp_optimum(dense), abs=1e-9)


def test_network_limit_truncates():
    table = random_table(4, 9, keep=0.8)
    res = solve(table, 1e6, max_networks=5)
    assert res.status == "network_limit" and not res.complete
    assert len(res.networks) == 5 and "limit" in res.message
    check_result(table, res, 1e6)


def test_epsilon_zero_without_ties_and_progress():
    table = random_table(5, 21, keep=0.4)
    seen = []
    res = solve(table, math.log(20), progress=seen.append)
    assert seen and {"phase", "networks", "elapsed"} <= set(seen[0])
    assert seen[-1]["networks"] == len(res.networks)
    one = solve(table, 0.0, enumerate_ties=False)
    assert len(one.networks) == 1 and one.status == "optimal" and not one.complete
    assert one.optimum == res.optimum


def test_bad_arguments():
    table = random_table(3, 1)
    with pytest.raises(InputError):
        solve(table, -1.0)
    with pytest.raises(InputError):
        solve(table, 1.0, max_networks=0)


def test_to_digraph():
    graph = to_digraph({"A": frozenset(), "B": frozenset({"A"}), "C": frozenset({"A", "B"})})
    assert set(graph.nodes) == {"A", "B", "C"}
    assert set(graph.edges) == {("A", "B"), ("A", "C"), ("B", "C")}


def test_empty_table():
    res = solve(ScoreTable(variables=[], families={}), 1.0)
    assert res.status == "optimal" and res.complete and res.networks[0].parents == {}


def test_single_variable():
    table = ScoreTable(variables=["A"], families={"A": {frozenset(): -2.5}})
    res = solve(table, 1.0)
    assert res.optimum == -2.5 and res.complete and len(res.networks) == 1


@pytest.mark.skipif(not (DATA / "liao2019_ebnsl" / "scores" / "wine.BIC.3").exists(),
                    reason="shared data not available")
def test_wine_bic_bf3_has_308_networks(optimum_by):
    # Liao et al. (AAAI 2019) Table 1: wine, BIC, BF 3 -> 308 networks; OPT the oracle programme's (KNOWN).
    table = read_jaakkola(DATA / "liao2019_ebnsl" / "scores" / "wine.BIC.3")
    res = solve(table, math.log(3))
    assert res.optimum == pytest.approx(-1258.4459086098502, abs=1e-6)
    assert res.status == "optimal" and res.complete
    assert len(res.networks) == 308
    check_result(table, res, math.log(3))


@pytest.mark.skipif(not (DATA / "pygobnilp" / "scores" / "asia_10000.dat.3.jkl").exists(),
                    reason="shared data not available")
def test_asia_matches_dynamic_programming():
    table = read_jaakkola(DATA / "pygobnilp" / "scores" / "asia_10000.dat.3.jkl")
    res = solve(table, 0.0)
    assert res.optimum == pytest.approx(dp_optimum(table), abs=1e-6)
    check_result(table, res, 0.0)
    assert res.complete


SCOREFILES = Path(__file__).resolve().parents[1] / "scorefiles"
# BIC optima (no palim) of the score files here — the oracle programme's (tests.oracles.dp_optimum, written
# apart from bnilp: test_the_known_optima_are_the_oracle_programmes) — and Liao et al. (AAAI 2019) Table 1
# credible-set sizes at BF 3.
KNOWN = [("tic-tac-toe", -9396.375857561688, 192), ("wine", -1258.4459086098502, 308),
         ("voting", -4642.631029711634, 27), ("zoo", -612.261239327658, 49)]


@pytest.mark.slow     # 23 s for the four
@pytest.mark.parametrize("name,opt,n_bf3", KNOWN)
def test_the_known_optima_are_the_oracle_programmes(name, opt, n_bf3):
    path = SCOREFILES / f"{name}.BIC.20.scores"
    if not path.exists():
        pytest.skip(f"{path.name} not generated yet")
    assert dp_optimum(read_jaakkola(path)) == pytest.approx(opt, abs=1e-6)


@pytest.mark.parametrize("name,opt,n_bf3", KNOWN)
def test_known_bic_optima_and_table1_counts(name, opt, n_bf3, optimum_by):
    path = SCOREFILES / f"{name}.BIC.20.scores"
    if not path.exists():
        pytest.skip(f"{path.name} not generated yet")
    table = read_jaakkola(path)
    res = solve(table, math.log(3), time_limit=120)
    assert res.status == "optimal"
    assert res.optimum == pytest.approx(opt, abs=1e-6)
    assert len(res.networks) == n_bf3
    check_result(table, res, math.log(3))


BF20 = [pytest.param("voting", 441, id="voting"),
        pytest.param("wine", 3449, id="wine", marks=pytest.mark.slow),
        pytest.param("zoo", 1111, id="zoo", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name,n_bf20", BF20)
def test_table1_counts_at_bf20(name, n_bf20):
    path = SCOREFILES / f"{name}.BIC.20.scores"
    if not path.exists():
        pytest.skip(f"{path.name} not generated yet")
    table = read_jaakkola(path)
    res = solve(table, math.log(20), time_limit=600)
    assert res.status == "optimal" and res.complete
    assert len(res.networks) == n_bf20
    check_result(table, res, math.log(20))


@pytest.mark.parametrize("nogoods,form,in_lp,branch", [
    ("lazy", "indicators", False, None), ("lazy", "indicators", False, {}), ("lazy", "families", False, None),
    ("constraints", "indicators", False, None), ("constraints", "indicators", False, {}),
    ("constraints", "indicators", False, {"adj": 10}), ("constraints", "indicators", True, None),
    ("constraints", "families", False, None), ("constraints", "families", True, None)])
def test_class_no_goods_find_exactly_the_classes_with_a_credible_dag(monkeypatch, nogoods, form, in_lp, branch,
                                                                     optimum_by):
    """On any table (score-equivalent or not) class enumeration returns one DAG of every class that holds
    a DAG with s ≥ OPT − ε, each once: a class is excluded only after one of its credible DAGs is found.
    Both written forms of the kbestMEC row, cut in on demand (``NOGOODS = "lazy"``, default) or as constraints
    in the LP or enforced on integral points, with the indicators branched on (default), continuous ({}) or
    only adjacencies binary, must agree with DAG listing."""
    from bnilp.mec import mec_key
    monkeypatch.setattr(ilp.settings, "NOGOODS", nogoods)
    monkeypatch.setattr(ilp.settings, "MEC_ROW_FORM", form)
    monkeypatch.setattr(ilp.settings, "MEC_ROWS_IN_LP", in_lp)
    if branch is not None:
        monkeypatch.setattr(ilp.settings, "MEC_BRANCH_PRIORITY", branch)
    for seed in range(4):
        table = random_table(5, 300 + seed, keep=0.4, ties=seed % 2 == 1, pruned=True)
        for eps in EPSILONS:
            dags = solve(table, eps)
            classes = solve(table, eps, enumerate_by="mecs")
            assert classes.complete and classes.enumerated == "mecs"
            keys = [mec_key(n.parents) for n in classes.networks]
            assert len(keys) == len(set(keys))
            assert set(keys) == {mec_key(n.parents) for n in dags.networks}
            assert all(n.score >= dags.optimum - eps - 1e-9 for n in classes.networks)


@pytest.mark.parametrize("nogoods", ["lazy", "constraints"])
def test_a_class_straddling_the_threshold_by_less_than_the_objective_limits_tolerance_is_listed(monkeypatch,
                                                                                                 nogoods):
    """Phase 2's objective limit is looser (1e-5) than the tie tolerance, so branch-and-cut can meet a DAG
    a few 1e-6 below OPT − ε. Class enumeration recorded its class and cut the whole class off — and then
    dropped that DAG as not credible, so a credible member met later never was: a class missing (60 of 61
    here). A DAG below the threshold is now cut off alone. ε puts one member of a class 3e-6 below it."""
    from bnilp.mec import mec_key
    monkeypatch.setattr(ilp.settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(ilp.settings, "NOGOODS", nogoods)
    table = random_table(4, 50_001, keep=0.5)
    nets = brute_force_networks(table)
    opt = nets[0][0]
    eps = 21.103106214323276
    members = [s for s, p in nets if mec_key(p) == mec_key(min(nets, key=lambda sp: abs(sp[0] - (opt - eps)))[1])]
    assert min(members) < opt - eps - 1e-6 and max(members) > opt - eps     # the class straddles the threshold
    _, credible = brute_force_credible(table, eps)
    classes = solve(table, eps, enumerate_by="mecs")
    assert classes.complete and {mec_key(n.parents) for n in classes.networks} == {mec_key(p) for _, p in credible}
    assert classes.stats["phase2"]["cuts"].get("below_threshold", 0) >= 1


@pytest.mark.parametrize("seed", range(3))
def test_a_dag_inside_the_tie_tolerance_is_listed_on_every_route_when_opt_is_large(seed, optimum_by):
    """The set is every DAG with s ≥ OPT − ε − 1e-9·|OPT| (the float noise allowed, the oracle's too). That
    tolerance grows with |OPT| (10⁶-row data give OPT ≈ −10⁷): a DAG 0.5·tolerance below OPT − ε is listed by
    peeling and by branch-and-cut alike, whose objective limit is on OPT shifted near 0."""
    table = random_table(4, 300 + seed, keep=0.6)
    v0 = table.variables[0]
    table.families[v0] = {ps: s - 1e8 for ps, s in table.families[v0].items()}     # every DAG −1e8
    nets = brute_force_credible(table, 1e6)[1]
    opt = nets[0][0]
    tol = 1e-9 * max(1.0, abs(opt))
    below = next(s for s, _ in nets if s < opt - 1.0)
    eps = opt - below - 0.5 * tol
    res = solve(table, eps)
    check_result(table, res, eps)
    want = as_set(p for _, p in brute_force_credible(table, eps)[1])
    assert as_set(net.parents for net in res.networks) == want and res.complete
    assert any(net.score == below for net in res.networks)
