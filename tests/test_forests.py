"""Class enumeration on tables of at most one parent a variable (:mod:`bnilp.ilp.forests`): the credible classes
are forests, listed heaviest first by Lawler's partition — against every forest of small graphs, every DAG of
small tables, and the solver's own phases with the forests switched off."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.ilp.families import _Data
from bnilp.ilp.forests import ForestEdges, ForestLister, forest_edges, representative
from bnilp.knowledge import Knowledge, restrict_table
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scorefile import ScoreTable
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame, signal_once_listed, tied_forests
from tests.oracles import brute_force_credible, is_acyclic
from tests.test_credible import brute_posteriors, vp_key
from tests.test_parentsets import full_table


def _edges(n: int, pairs: list[tuple[int, int]], w: list[float]) -> ForestEdges:
    order = np.lexsort((np.array([b for _, b in pairs]), np.array([a for a, _ in pairs]), -np.array(w)))
    ids = np.arange(len(pairs))
    return ForestEdges(np.array([a for a, _ in pairs])[order], np.array([b for _, b in pairs])[order],
                       np.array(w)[order], ids[order], ids[order], np.arange(n), 0.0)


def _all_forests(n: int, pairs: list[tuple[int, int]], w: list[float]) -> list[tuple[float, frozenset]]:
    """Every edge subset without a cycle (a forest), by brute force."""
    out = []
    for k in range(min(len(pairs), n - 1) + 1):
        for subset in itertools.combinations(range(len(pairs)), k):
            tree = list(range(n))           # each node's tree, relabelled as edges join them
            ok = True
            for e in subset:
                a, b = tree[pairs[e][0]], tree[pairs[e][1]]
                if a == b:
                    ok = False
                    break
                tree = [b if t == a else t for t in tree]
            if ok:
                out.append((math.fsum(w[e] for e in subset), frozenset(pairs[e] for e in subset)))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_the_lister_gives_every_forest_above_the_floor_once_heaviest_first(seed) -> None:
    """Lawler's partition (module docstring) on random graphs of 3–6 nodes with weights of both signs: the
    forests listed are exactly those of the brute-force list weighing at least the floor, each once, in
    non-increasing weight."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    pairs = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.7]
    w = [float(x) for x in rng.normal(0.2, 1.0, size=len(pairs))]
    everything = _all_forests(n, pairs, w)
    weights = sorted((x for x, _ in everything), reverse=True)
    floor = weights[min(len(weights) - 1, int(rng.integers(0, len(weights))))] - 1e-12
    want = sorted((x, sorted(f)) for x, f in everything if x >= floor)
    lister = ForestLister(_edges(n, pairs, w), n, floor)
    edges = lister.edges
    got, last = [], math.inf
    while not lister.done:
        x, chosen = lister.next_forest()
        assert x <= last + 1e-12
        last = x
        got.append((x, sorted((int(edges.u[e]), int(edges.v[e])) for e in np.flatnonzero(chosen))))
    assert len({tuple(f) for _, f in got}) == len(got)
    assert [f for _, f in sorted(got)] == [f for _, f in want]
    assert [x for x, _ in sorted(got)] == pytest.approx([x for x, _ in want], abs=1e-12)


def _palim1_brute(score, eps: float):
    everything = full_table(score)
    ones = ScoreTable(list(everything.variables),
                      {v: {ps: s for ps, s in f.items() if len(ps) <= 1} for v, f in everything.families.items()})
    return brute_force_credible(ones, eps)


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", [(0, 4, 60), (1, 5, 200), (2, 6, 500), (3, 6, 40)])
def test_forest_classes_equal_every_dag_of_at_most_one_parent(score_name, seed, n, N, monkeypatch) -> None:
    """A palim-1 table of a score-equivalent score: the classes the forests give are the credible classes of
    every DAG with at most one parent a variable (brute force), each with all its DAGs counted, the edge
    posteriors over them (prior dags) and the classes' under prior mecs as with the forests switched off."""
    frame = random_discrete_frame(900 + seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score(score_name, data)
    for bf in (1, 3, 20, 150):
        eps = math.log(bf)
        opt, want = _palim1_brute(score, eps)
        table = score_parent_sets(score, epsilon=eps, palim=1)
        for prior in ("dags", "mecs"):
            result = solve_table(table, epsilon=eps, prior=prior, enumerate_by="mecs")
            got = result.solution
            assert got.stats["phase2"]["method"] == "forests" and got.stats["phase1"]["method"] == "forests"
            assert got.complete and got.status == "optimal"
            assert got.optimum == pytest.approx(opt, abs=1e-9)
            classes: dict = {}
            for _, p in want:
                classes.setdefault(vp_key(p), []).append(p)
            assert {vp_key(net.parents) for net in got.networks} == set(classes)
            for net, m in zip(got.networks, result.report["mecs"], strict=True):
                assert m["n_dags"] == len(classes[vp_key(net.parents)])
            if prior == "dags":
                ours = result.edge_posteriors()
                for (u, v), p in brute_posteriors(want, data.names).items():
                    assert ours.loc[u, v] == pytest.approx(p, abs=1e-9)
            with monkeypatch.context() as m:
                m.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
                m.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
                other = solve_table(table, epsilon=eps, prior=prior, enumerate_by="mecs")
            assert other.solution.stats["phase2"]["method"] != "forests"
            assert [vp_key(x.parents) for x in other.solution.networks] == [vp_key(x.parents) for x in got.networks]
            assert result.report["n_networks"] == other.report["n_networks"]
            theirs = other.edge_posteriors()
            assert np.allclose(result.edge_posteriors().to_numpy(), theirs.to_numpy(), atol=1e-9)


def _random_forest_table(n: int, seed: int, density: float = 1.0) -> ScoreTable:
    """Scores s(v | ∅) random and s(v | {u}) = s(v | ∅) + w(u, v) with w symmetric: a score-equivalent
    palim-1 table, no data."""
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(n)]
    base = rng.normal(-100, 5, size=n)
    fams = {v: {frozenset(): float(base[i])} for i, v in enumerate(names)}
    for i, j in itertools.combinations(range(n), 2):
        if rng.random() < density:
            w = float(rng.normal(0.0, 1.0))
            fams[names[j]][frozenset({names[i]})] = float(base[j] + w)
            fams[names[i]][frozenset({names[j]})] = float(base[i] + w)
    return ScoreTable(names, fams, meta={"score": "bic", "prune": False})


def test_the_cap_keeps_the_best_classes_and_counting_past_it_counts_them_all() -> None:
    """Listed heaviest first, a list the cap cuts is the best ``max_networks`` classes (the message says so);
    with ``count_past_cap`` every credible class is counted, as without the cap."""
    table = _random_forest_table(6, 3)
    eps = 2.0
    whole = solve_table(table, epsilon=eps, enumerate_by="mecs")
    assert whole.solution.complete and whole.report["n_mecs"] > 5
    capped = solve_table(table, epsilon=eps, enumerate_by="mecs", max_networks=5)
    assert capped.solution.status == "network_limit" and not capped.solution.complete
    assert "these are the top 5" in capped.solution.message
    assert [vp_key(x.parents) for x in capped.solution.networks] == [vp_key(x.parents)
                                                                      for x in whole.solution.networks[:5]]
    assert capped.report["posterior_classes"] == 5       # without counting past the cap: over the classes listed
    assert capped.report["posterior_dags"] == sum(m["n_dags"] for m in capped.report["mecs"])
    counted = solve_table(table, epsilon=eps, enumerate_by="mecs", max_networks=5, count_past_cap=True)
    assert counted.report["posterior_classes"] == whole.report["n_mecs"]
    assert counted.report["posterior_dags"] == whole.report["n_networks"]
    assert f"the best 5 of {whole.report['n_mecs']} credible classes" in counted.solution.message


def test_a_time_limit_stops_a_vast_forest_listing_and_says_so() -> None:
    """40 variables, every pair a candidate, ε = 6: far more credible forests than a second lists; the search
    stops at its limit with OPT proven and the classes found, incomplete."""
    table = _random_forest_table(40, 5)
    result = solve_table(table, epsilon=6.0, enumerate_by="mecs", time_limit=1.0, max_networks=10**6)
    got = result.solution
    assert got.status == "time_limit" and not got.complete
    assert got.stats["phase2"]["method"] == "forests" and got.stats["phase2"]["forests"] > 1000


def test_a_table_whose_classes_are_not_forests_keeps_the_other_phases() -> None:
    """The forests apply only where each arrow's reverse is held and scored alike and every family has at most
    one parent: a forbidden arrow (its reverse kept), a family of two parents, a required arrow (no empty set),
    or scores that are not symmetric leave the table to the programme or branch-and-cut — with the same classes
    as brute force (the last one is not score-equivalent, so its classes are refused)."""
    table = _random_forest_table(5, 11)
    assert forest_edges(_Data(table), 1e-9) is not None
    forbid = restrict_table(table, Knowledge(forbidden=[("x0", "x1")]))
    assert forest_edges(_Data(forbid), 1e-9) is None
    require = restrict_table(table, Knowledge(required=[("x0", "x1")]))
    assert forest_edges(_Data(require), 1e-9) is None
    two = ScoreTable(table.variables, {**table.families, "x0": {**table.families["x0"],
                                                                   frozenset({"x1", "x2"}): -50.0}})
    assert forest_edges(_Data(two), 1e-9) is None
    skew = ScoreTable(table.variables, {**table.families, "x0": {ps: s + (0.1 if ps else 0.0)
                                                                   for ps, s in table.families["x0"].items()}})
    assert forest_edges(_Data(skew), 1e-9) is None
    with pytest.raises(InputError, match="needs a score-equivalent table"):     # and classes are refused there
        solve_table(skew, epsilon=1.5, enumerate_by="mecs")
    for t in (forbid, two):
        opt, want = brute_force_credible(t, 1.5)
        result = solve_table(t, epsilon=1.5, enumerate_by="mecs")
        assert result.solution.stats["phase2"]["method"] != "forests"
        assert {vp_key(x.parents) for x in result.solution.networks} == {vp_key(p) for _, p in want}


def test_a_forests_representative_is_one_of_its_dags() -> None:
    """Each tree rooted at its smallest variable: an acyclic DAG of at most one parent a variable whose
    skeleton is the forest."""
    table = _random_forest_table(7, 2)
    data = _Data(table)
    edges = forest_edges(data, 1e-9)
    lister = ForestLister(edges, data.n, -math.inf)
    for _ in range(30):
        _, chosen = lister.next_forest()
        row = representative(edges, chosen, data.n)
        parents = data.parents(tuple(int(k) for k in row))
        assert is_acyclic(parents) and all(len(ps) <= 1 for ps in parents.values())
        skeleton = {frozenset((p, c)) for c, ps in parents.items() for p in ps}
        assert skeleton == {frozenset((data.names[edges.u[e]], data.names[edges.v[e]]))
                            for e in np.flatnonzero(chosen)}


def test_a_signal_stops_the_forests_with_the_classes_they_listed() -> None:
    """9 variables whose every forest ties (10⁸ DAGs in millions of classes), no cap: SIGINT during the listing
    stops it with OPT proven, status interrupted, the classes listed so far (each of score 0) and the message
    naming the forests."""
    progress, sent = signal_once_listed(50)
    res = solve_table(tied_forests(9), epsilon=0.0, enumerate_by="mecs", max_networks=10**6, progress=progress)
    got = res.solution
    assert sent and got.status == "interrupted" and not got.complete and got.stats["phase2"]["method"] == "forests"
    assert got.optimum == 0.0 and 50 <= len(got.networks) < 10**6 and "forests" in got.message
    assert all(net.score == 0.0 for net in got.networks)


def test_a_warm_start_the_forests_never_take_is_said_unused() -> None:
    """Kruskal's heaviest forest is OPT's class, so a warm start goes unused, and the result says why."""
    table = _random_forest_table(6, 4)
    best = solve_table(table, epsilon=0.0, optimum_only=True)
    start = best.solution.networks[0].parents
    res = solve_table(table, epsilon=1.0, enumerate_by="mecs", warm_start=start)
    assert res.solution.stats["warm_start_used"] is False
    assert "the heaviest forest (Kruskal) is OPT's class" in res.report["warm_start_note"]


def test_a_forbidden_adjacency_keeps_the_forests_and_their_classes(monkeypatch) -> None:
    """Forbidding an adjacency removes both arrows, so each arrow's reverse is still held: the forests apply,
    with the classes, counts and posteriors of the other phases under the same knowledge."""
    table = restrict_table(_random_forest_table(6, 8), Knowledge(forbidden_adjacent=[("x0", "x1"), ("x2", "x5")]))
    assert forest_edges(_Data(table), 1e-9) is not None
    res = solve_table(table, epsilon=2.0, enumerate_by="mecs")
    with monkeypatch.context() as m:
        m.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
        m.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
        other = solve_table(table, epsilon=2.0, enumerate_by="mecs")
    assert res.solution.stats["phase2"]["method"] == "forests" != other.solution.stats["phase2"]["method"]
    assert {vp_key(x.parents) for x in res.solution.networks} == {vp_key(x.parents) for x in other.solution.networks}
    assert res.report["n_networks"] == other.report["n_networks"] and res.report["n_mecs"] > 10
    assert np.allclose(res.edge_posteriors().to_numpy(), other.edge_posteriors().to_numpy(), atol=1e-9)


def test_a_listing_that_ends_as_its_clock_runs_out_is_complete() -> None:
    """The limits were looked at before whether the lister had anything left: a two-variable table listed whole
    under a time limit already spent read ``time_limit``, incomplete (a review); it is complete, as the other
    phases say."""
    table = ScoreTable(["a", "b"], {"a": {frozenset(): -10.0, frozenset({"b"}): -5.0},
                                    "b": {frozenset(): -10.0, frozenset({"a"}): -5.0}})
    res = solve_table(table, epsilon=math.log(3), enumerate_by="mecs", time_limit=1e-9)
    assert res.solution.status == "optimal" and res.solution.complete
    assert res.solution.stats["phase2"]["method"] == "forests" and res.report["n_mecs"] == 1


def test_the_memory_guard_reserves_what_a_wide_class_report_takes() -> None:
    """The guard reserved at most 30 KB a class (measured up to 56 variables); a forest's class of 300 variables
    took 305 KB in the report (23,199 of them: 7.6 GB against 0.7 GB reserved). Past the compiled masks' 62
    variables the per-variable and per-edge sum stands alone; below, the cap as before."""
    from bnilp.ilp.search import report_bytes

    assert report_bytes("mecs", 56, 55) == 30_000
    assert report_bytes("mecs", 300, 299) >= 305_000


def _kruskal_per_edge(state, chosen, eu, ev, ew, n, floor):
    """The parts lacking an edge of the best forest by a Kruskal pass each (the lister's first way, O(n·m))."""
    from bnilp.ilp.forests import FREE, IN, OUT, _best_forest

    edges, weights = [], []
    child = state.copy()
    for e in range(len(state)):
        if chosen[e] and state[e] == FREE:
            child[e] = OUT
            w = _best_forest(child, eu, ev, ew, n, np.zeros(len(state), dtype=np.bool_))
            if w >= floor:
                edges.append(e)
                weights.append(w)
            child[e] = IN
    return dict(zip(edges, weights, strict=True))


@pytest.mark.parametrize("seed", range(4))
def test_a_parts_best_forest_is_one_exchange_from_its_parents(seed) -> None:
    """The parts lacking an edge e of a part's best forest S weigh W − w(e) + max(0, w(f)), f the heaviest free
    edge that joins S − e's two sides (found for every e by path labelling): the same parts and weights as a
    Kruskal pass per edge, on random graphs with included and excluded edges, weights of both signs and ties."""
    from bnilp.ilp.forests import FREE, IN, OUT, _best_forest, _find, _missing_children

    rng = np.random.default_rng(seed)
    for trial in range(400):
        n = int(rng.integers(2, 12))
        pairs = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.6] or [(0, 1)]
        w = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], len(pairs)) if trial % 2 else rng.normal(0.5, 1.0, len(pairs))
        e = _edges(n, pairs, list(w))
        state = rng.choice([FREE, FREE, IN, OUT], len(pairs)).astype(np.int8)
        roots = np.arange(n)
        for k in range(len(pairs)):              # the included edges must be a forest
            if state[k] == IN:
                a, b = _find(roots, e.u[k]), _find(roots, e.v[k])
                state[k] = FREE if a == b else IN
                roots[a] = b
        chosen = np.zeros(len(pairs), dtype=np.bool_)
        best = _best_forest(state, e.u, e.v, e.w, n, chosen)
        floor = best - float(rng.uniform(0.0, 4.0))
        want = _kruskal_per_edge(state, chosen, e.u, e.v, e.w, n, floor)
        got_e, got_w = _missing_children(state, chosen, e.u, e.v, e.w, n, floor - 1e-9, best)
        got = dict(zip(got_e.tolist(), got_w.tolist(), strict=True))
        assert set(want) <= set(got), trial
        assert all(math.isclose(got[k], want[k], abs_tol=1e-9) for k in want), trial
        assert all(got[k] < floor + 1e-9 for k in set(got) - set(want)), trial     # only within the margin


def test_the_forests_never_build_the_dense_family_matrix(monkeypatch) -> None:
    """The forests read the families' sparse rows only: with the free memory too small for the dense K × n matrix
    (``_Data.pbool``) a forest table is still listed, complete and the same as with room, while the other phases
    on the same table are refused with ``memory_limit`` before any work (exit 3 from the CLI)."""
    from bnilp import memory
    from bnilp.errors import LimitError
    from bnilp.ilp import families, settings

    table = _random_forest_table(7, 2)
    roomy = solve_table(table, epsilon=2.0, enumerate_by="mecs")
    monkeypatch.setattr(memory, "free_memory", lambda: 1)
    monkeypatch.setattr(families, "DENSE_CHECK_BYTES", 0)
    tight = solve_table(table, epsilon=2.0, enumerate_by="mecs")
    assert tight.solution.stats["phase2"]["method"] == "forests" and tight.solution.complete
    assert [vp_key(x.parents) for x in tight.solution.networks] == [vp_key(x.parents)
                                                                     for x in roomy.solution.networks]
    monkeypatch.setattr(settings, "FOREST_ENUMERATION", False)
    monkeypatch.setattr(settings, "BRANCHING_ENUMERATION", False)
    with pytest.raises(LimitError, match="memory_limit: the score table's"):
        solve_table(table, epsilon=2.0, enumerate_by="mecs")


def test_a_cap_that_cuts_through_tied_classes_says_the_choice_among_them_is_the_listings() -> None:
    """Listed best first, a capped list is the top K; where the class past the cap scores as the last one kept,
    which tied classes are kept is the listing's order (a last bit of a heap key chose them), and the message and
    ``stats.phase2.tie_at_cap`` say so — not where the cap falls between different scores."""
    tied = solve_table(tied_forests(5), epsilon=0.0, enumerate_by="mecs", max_networks=10)
    assert tied.solution.status == "network_limit" and tied.solution.stats["phase2"]["tie_at_cap"] is True
    assert "the next class scores the same as the last kept" in tied.solution.message
    table = _random_forest_table(6, 3)
    whole = solve_table(table, epsilon=2.0, enumerate_by="mecs").solution.networks
    assert whole[4].score > whole[5].score + 1e-6           # the cap below falls between two scores
    capped = solve_table(table, epsilon=2.0, enumerate_by="mecs", max_networks=5).solution
    assert capped.stats["phase2"]["tie_at_cap"] is False and "scores the same" not in capped.message
