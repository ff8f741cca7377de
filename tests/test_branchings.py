"""Tables of at most one parent a variable with arrows held one way (tiers, forbidden or required arrows, required
adjacencies): OPT by the maximum spanning arborescence and the credible DAGs or classes listed heaviest first
(:mod:`bnilp.ilp.branchings`) — against every choice of in-arcs of small graphs, every DAG of small tables under
random knowledge, and the solver's other phases with the branchings switched off."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.ilp import settings
from bnilp.ilp.branchings import BranchingLister, _arborescence, _rootable, best_branching, branching_arcs
from bnilp.ilp.families import _Data
from bnilp.knowledge import Knowledge, restrict_table
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scorefile import ScoreTable
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame, signal_once_listed, slow_after
from tests.oracles import brute_force_networks, is_acyclic, satisfies_knowledge
from tests.test_credible import brute_posteriors, vp_key
from tests.test_forests import _random_forest_table


@pytest.fixture
def no_programme(monkeypatch):
    """The branchings serve where the dynamic programme does not run (past 22 variables): off for these small
    tables, so that they take them."""
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)


def _reaches_root(parent: dict[int, int], nn: int) -> bool:
    for v in range(1, nn):
        x, steps = v, 0
        while x != 0 and steps <= nn:
            x, steps = parent[x], steps + 1
        if x != 0:
            return False
    return True


@pytest.mark.parametrize("seed", range(4))
def test_the_arborescence_is_the_best_choice_of_in_arcs_that_reaches_the_root(seed) -> None:
    """Chu–Liu/Edmonds with lexicographic weights (count of marked arcs, score) on random graphs of 2–6 nodes with
    dead arcs, ties and negative weights: the arborescence it gives is one (every node's chosen arc enters it and
    is alive, every node reaches the root) and weighs as much as the best of every choice of one in-arc a node;
    where no choice reaches the root it says so. Its reduced weights are 0 on it, never negative, and every
    arborescence T as heavy in the first place weighs at most W(S) − Σ_{a ∈ T} rc(a) (the lazy parts' bound), and
    at most that plus a pair's μ where T holds neither arc between two variables contracted as a cycle of their own."""
    rng = np.random.default_rng(seed)
    pairs_met = [0]
    for _ in range(400):
        nn = int(rng.integers(2, 7))
        arcs = [(a, b) for a in range(nn) for b in range(1, nn) if a != b and rng.random() < 0.7]
        if not arcs:
            continue
        tail = np.array([a for a, _ in arcs], dtype=np.int64)
        head = np.array([b for _, b in arcs], dtype=np.int64)
        wi = (rng.integers(0, 2, len(arcs)) * (rng.random() < 0.5)).astype(np.int64)
        wf = np.round(rng.normal(size=len(arcs)), 1)
        alive = rng.random(len(arcs)) < 0.9
        chosen = np.full(nn, -1, dtype=np.int64)
        rc_i, rc_f = np.empty(len(arcs), dtype=np.int64), np.empty(len(arcs))
        pair_i, pair_f = np.empty(len(arcs), dtype=np.int64), np.empty(len(arcs))
        ok = _arborescence(nn, tail, head, wi, wf, alive, chosen, rc_i, rc_f, pair_i, pair_f)
        every = []
        for combo in itertools.product(*([k for k in range(len(arcs)) if head[k] == v and alive[k]]
                                         for v in range(1, nn))):
            if _reaches_root({int(head[k]): int(tail[k]) for k in combo}, nn):
                every.append(list(combo))
        assert ok == bool(every)
        if not ok:
            continue
        best = max((int(wi[c].sum()), round(float(wf[c].sum()), 9)) for c in every)
        combo = [int(chosen[v]) for v in range(1, nn)]
        assert all(head[k] == v and alive[k] for v, k in zip(range(1, nn), combo, strict=True))
        assert _reaches_root({int(head[k]): int(tail[k]) for k in combo}, nn)
        assert (int(wi[combo].sum()), round(float(wf[combo].sum()), 9)) == best
        # the reduced weights: 0 on the arborescence, lexicographically ≥ 0 on every alive arc, and the bound
        assert (rc_i[combo] == 0).all() and np.allclose(rc_f[combo], 0.0, atol=1e-12)
        live = np.flatnonzero(alive)
        assert ((rc_i[live] > 0) | ((rc_i[live] == 0) & (rc_f[live] >= -1e-12))).all()
        paired = np.flatnonzero((pair_i != 0) | (pair_f != 0))
        assert ((pair_i[paired] < 0) | ((pair_i[paired] == 0) & (pair_f[paired] <= 0))).all()
        for c in every:
            if int(wi[c].sum()) == best[0]:
                assert rc_i[c].sum() == 0 and wf[c].sum() <= wf[combo].sum() - rc_f[c].sum() + 1e-9
                # lacking both arcs between a pair's two variables, T enters the pair twice
                for k in paired:
                    if not any({int(tail[x]), int(head[x])} == {int(tail[k]), int(head[k])} for x in c):
                        assert pair_i[k] == 0
                        assert wf[c].sum() <= wf[combo].sum() - rc_f[c].sum() + pair_f[k] + 1e-9
                        pairs_met[0] += 1
    assert pairs_met[0] > 100


def test_a_vertex_is_rootable_when_every_edge_away_from_it_is_an_arc_of_the_table() -> None:
    """On random forests with each edge held one way or both: the rerooting count says x is rootable exactly
    when pointing x's tree away from x uses only arcs the table holds (checked by walking the tree from x)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        pairs = [(int(rng.integers(0, v)), v) for v in range(1, n) if rng.random() < 0.8]
        eu = np.array([a for a, _ in pairs], dtype=np.int64)
        ev = np.array([b for _, b in pairs], dtype=np.int64)
        way = rng.integers(0, 3, len(pairs))           # 0: u → v only, 1: v → u only, 2: both
        has_uv, has_vu = way != 1, way != 0
        got = _rootable(np.ones(len(pairs), dtype=np.bool_), eu, ev, has_uv, has_vu, n)
        adj: dict[int, list[tuple[int, bool]]] = {x: [] for x in range(n)}
        for (a, b), uv, vu in zip(pairs, has_uv, has_vu, strict=True):
            adj[a].append((b, bool(uv)))
            adj[b].append((a, bool(vu)))
        for x in range(n):
            ok, seen, stack = True, {x}, [x]
            while stack:
                a = stack.pop()
                for b, held in adj[a]:
                    if b not in seen:
                        seen.add(b)
                        stack.append(b)
                        ok &= held
            assert got[x] == ok


def _random_knowledge(rng, names: list[str]) -> Knowledge:
    """Tiers (sometimes a strict first tier), forbidden and required arrows and a required adjacency, at random."""
    kw: dict = {}
    n = len(names)
    if rng.random() < 0.6:
        order = [str(x) for x in rng.permutation(names)]
        cut = sorted(int(c) for c in rng.choice(range(1, n), size=min(2, n - 1), replace=False))
        kw["tiers"] = [t for t in (order[:cut[0]], order[cut[0]:cut[-1]], order[cut[-1]:]) if t]
        if rng.random() < 0.3:
            kw["strict_tiers"] = {0}
    if rng.random() < 0.5:
        kw["forbidden"] = [tuple(str(x) for x in rng.choice(names, 2, replace=False))
                           for _ in range(rng.integers(1, 4))]
    if rng.random() < 0.4:
        kw["required"] = [tuple(str(x) for x in rng.choice(names, 2, replace=False))]
    if rng.random() < 0.3:
        kw["required_adjacent"] = [tuple(str(x) for x in rng.choice(names, 2, replace=False))]
    return Knowledge(**kw)


def _dag_key(parents) -> tuple:
    return tuple(sorted((c, tuple(sorted(ps))) for c, ps in parents.items()))


def _skeleton(parents) -> frozenset:
    return frozenset(frozenset((p, c)) for c, ps in parents.items() for p in ps)


@pytest.mark.parametrize("seed", slow_after(range(3), 2))     # seed 2: 5.6 s
def test_the_lister_gives_every_dag_and_class_the_knowledge_admits_best_first(seed) -> None:
    """Score-equivalent one-parent tables on 3–6 variables cut by random knowledge: the lister's DAGs are every
    DAG of the table that satisfies the knowledge within ε of OPT (brute force), and its classes every skeleton
    of those — each once, heaviest first, the first one OPT; where no DAG satisfies the knowledge it lists none."""
    rng = np.random.default_rng(100 + seed)
    checked = 0
    for trial in range(120):
        table = _random_forest_table(int(rng.integers(3, 7)), 1000 * seed + trial, density=rng.uniform(0.5, 1.0))
        k = _random_knowledge(rng, table.variables)
        try:
            cut = restrict_table(table, k)
        except InputError:          # a variable left without a family: no DAG, said before any search
            continue
        data = _Data(cut)
        arcs = branching_arcs(data, [(data.names.index(a), data.names.index(b)) for a, b in k.required_adjacent])
        nets = [(s, p) for s, p in brute_force_networks(cut) if satisfies_knowledge(p, k)]
        if arcs is None:            # a required adjacency no arrow of the table makes
            assert not nets
            continue
        if not nets:
            assert best_branching(arcs) is None
            continue
        opt = nets[0][0]
        assert best_branching(arcs)[0] + arcs.base_score == pytest.approx(opt, abs=1e-9)
        for eps, classes in itertools.product((0.0, 1.0, 3.0), (False, True)):
            lister = BranchingLister(arcs, classes, opt - eps - 1e-7 - arcs.base_score)
            got = []
            while (nxt := lister.next_solution()) is not None:
                parents = data.parents(tuple(int(x) for x in nxt[1]))
                assert satisfies_knowledge(parents, k) and is_acyclic(parents)
                assert nxt[0] + arcs.base_score == pytest.approx(math.fsum(cut.families[v][parents[v]]
                                                                           for v in cut.variables), abs=1e-9)
                got.append((nxt[0], parents))
            weights = [w for w, _ in got]
            assert weights == sorted(weights, reverse=True)
            assert weights[0] + arcs.base_score == pytest.approx(opt, abs=1e-9)
            key = _skeleton if classes else _dag_key
            keys = [key(p) for _, p in got]
            assert len(keys) == len(set(keys))
            assert set(keys) == {key(p) for s, p in nets if s >= opt - eps - 1e-9}
            checked += 1
    assert checked > 150


def _palim1_frame_table(seed: int, n: int, N: int, score_name: str, eps: float):
    frame = random_discrete_frame(seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    return data, score_parent_sets(make_score(score_name, data), epsilon=eps, palim=1)


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", [(0, 5, 80), (1, 6, 300), (2, 6, 60)])
def test_classes_and_dags_under_arrow_knowledge_equal_the_other_phases_and_brute_force(score_name, seed, n, N,
                                                                                       monkeypatch, no_programme):
    """palim-1 tables of data cut by tiers and by a required arrow: both phases by the branchings (the programme
    switched off), and the classes (with their DAG counts and both priors' posteriors) and the DAGs the same as
    with the branchings switched off (the programme and peeling) and as brute force over every DAG that satisfies
    the knowledge."""
    rng = np.random.default_rng(seed)
    for bf in (3, 150):
        eps = math.log(bf)
        data, table = _palim1_frame_table(940 + seed, n, N, score_name, eps)
        names = list(table.variables)
        perm = [str(x) for x in rng.permutation(names)]
        arrow = min((next(iter(ps)), c) for c in names for ps in table.families[c] if ps)   # one the table holds
        for k in (Knowledge(tiers=[perm[:2], perm[2:4], perm[4:]]), Knowledge(required=[arrow])):
            cut = restrict_table(table, k)
            nets = [(s, p) for s, p in brute_force_networks(cut) if satisfies_knowledge(p, k)]
            opt = nets[0][0]
            want = [(s, p) for s, p in nets if s >= opt - eps - 1e-9]
            for unit, prior in (("mecs", "dags"), ("mecs", "mecs"), ("dags", "dags")):
                result = solve_table(cut, epsilon=eps, prior=prior, enumerate_by=unit, knowledge=k)
                got = result.solution
                assert got.stats["phase1"]["method"] == got.stats["phase2"]["method"] == "branchings"
                assert got.complete and got.status == "optimal" and got.optimum == pytest.approx(opt, abs=1e-9)
                key = vp_key if unit == "mecs" else _dag_key
                assert {key(x.parents) for x in got.networks} == {key(p) for _, p in want}
                assert result.report["n_networks"] == len(want)
                if prior == "dags":
                    ours = result.edge_posteriors()
                    for (u, v), p in brute_posteriors(want, data.names).items():
                        assert ours.loc[u, v] == pytest.approx(p, abs=1e-9)
                with monkeypatch.context() as m:
                    m.setattr(settings, "BRANCHING_ENUMERATION", False)
                    m.setattr(settings, "DP_MAX_VARIABLES", 22)
                    other = solve_table(cut, epsilon=eps, prior=prior, enumerate_by=unit, knowledge=k)
                assert other.solution.stats["phase2"]["method"] != "branchings"
                assert sorted(key(x.parents) for x in other.solution.networks) == sorted(key(x.parents)
                                                                                         for x in got.networks)
                assert result.report["n_networks"] == other.report["n_networks"]
                assert np.allclose(result.edge_posteriors().to_numpy(), other.edge_posteriors().to_numpy(), atol=1e-9)


def test_on_a_table_the_forests_serve_the_branchings_give_the_forests_classes(monkeypatch, no_programme) -> None:
    """Every arrow held both ways: the forests list the classes; with them switched off the branchings list the
    same classes in the same order of score, with the same counts."""
    table = _random_forest_table(7, 21)
    forests = solve_table(table, epsilon=2.5, enumerate_by="mecs")
    monkeypatch.setattr(settings, "FOREST_ENUMERATION", False)
    arbs = solve_table(table, epsilon=2.5, enumerate_by="mecs")
    assert forests.solution.stats["phase2"]["method"] == "forests"
    assert arbs.solution.stats["phase2"]["method"] == "branchings"
    assert [vp_key(x.parents) for x in arbs.solution.networks] == [vp_key(x.parents) for x in forests.solution.networks]
    assert [x.score for x in arbs.solution.networks] == pytest.approx([x.score for x in forests.solution.networks])
    assert arbs.report["n_networks"] == forests.report["n_networks"] and arbs.report["n_mecs"] > 10


def test_knowledge_the_arcs_cannot_say_and_asymmetric_classes_keep_the_other_phases(no_programme) -> None:
    """An ancestor relation or an independence needs branch-and-cut's rows, and classes need a score-equivalent
    table: those leave a one-parent table to the other phases (the DAGs of an asymmetric one stay with the
    branchings, which need no symmetry)."""
    table = _random_forest_table(5, 11)
    for k in (Knowledge(tiers=[["x0", "x1"], ["x2", "x3", "x4"]], required_ancestors=[("x0", "x4")]),
              Knowledge(tiers=[["x0", "x1"], ["x2", "x3", "x4"]], independent=["x0, x4 | x2"])):
        res = solve_table(restrict_table(table, k), epsilon=1.5, enumerate_by="mecs", knowledge=k)
        assert res.solution.stats["phase2"]["method"] != "branchings"
    skew = ScoreTable(table.variables, {**table.families, "x0": {ps: s + (0.1 if ps else 0.0)
                                                                   for ps, s in table.families["x0"].items()}})
    cut = restrict_table(skew, Knowledge(forbidden=[("x0", "x1")]))
    assert branching_arcs(_Data(cut)).asymmetry == pytest.approx(0.1)
    res = solve_table(cut, epsilon=1.5, enumerate_by="dags")
    assert res.solution.stats["phase2"]["method"] == "branchings"
    opt, = {s for s, _ in brute_force_networks(cut)[:1]}
    assert {_dag_key(x.parents) for x in res.solution.networks} == {
        _dag_key(p) for s, p in brute_force_networks(cut) if s >= opt - 1.5 - 1e-9}
    # a DAG's weight is exact: the listing stops at the credible ones, not n·asymmetry below them (a review)
    assert res.solution.stats["phase2"]["networks_found"] == len(res.solution.networks)


def _tiered_wide(n: int, seed: int) -> tuple[ScoreTable, Knowledge]:
    table = _random_forest_table(n, seed)
    k = Knowledge(tiers=[table.variables[:n // 2], table.variables[n // 2:]])
    return restrict_table(table, k), k


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_the_cap_keeps_the_best_and_a_time_limit_or_a_signal_stops_with_what_was_listed(no_programme) -> None:
    """12 and 40 variables in two tiers, every pair a candidate: a cap keeps the best classes (the message says they are
    the top ones, as the complete list's first); a time limit and SIGTERM stop a vast listing with OPT proven and
    the classes listed so far, incomplete, the message naming the branchings; a DAG listing the cap cuts through
    tied DAGs says the tie is among networks."""
    table, k = _tiered_wide(12, 4)
    whole = solve_table(table, epsilon=2.0, enumerate_by="mecs", knowledge=k)
    assert whole.solution.complete and whole.report["n_mecs"] > 8
    capped = solve_table(table, epsilon=2.0, enumerate_by="mecs", knowledge=k, max_networks=8)
    assert capped.solution.status == "network_limit" and "these are the top 8" in capped.solution.message
    assert [vp_key(x.parents) for x in capped.solution.networks] == [vp_key(x.parents)
                                                                      for x in whole.solution.networks[:8]]
    big, k = _tiered_wide(40, 5)
    timed = solve_table(big, epsilon=8.0, enumerate_by="mecs", knowledge=k, time_limit=1.0, max_networks=10**6)
    assert timed.solution.status == "time_limit" and not timed.solution.complete
    assert timed.solution.stats["phase2"]["method"] == "branchings" and len(timed.solution.networks) > 1
    every_tied = ScoreTable(big.variables, {v: {ps: 0.0 for ps in f} for v, f in big.families.items()})
    tied = solve_table(every_tied, epsilon=0.0, enumerate_by="dags", knowledge=k, max_networks=50)
    assert tied.solution.stats["phase2"]["tie_at_cap"] and "the next network scores the same" in tied.solution.message
    progress, sent = signal_once_listed(5)
    stopped = solve_table(big, epsilon=8.0, enumerate_by="dags", knowledge=k, max_networks=10**6, progress=progress)
    assert sent and stopped.solution.status == "interrupted" and "branchings" in stopped.solution.message
    assert 5 <= len(stopped.solution.networks) < 10**6


def test_the_branchings_never_build_the_dense_family_matrix(monkeypatch, no_programme) -> None:
    """The arcs are read from the sparse rows: with the dense matrix's room check set to refuse it, a tiered
    palim-1 table is still listed."""
    from bnilp import memory
    from bnilp.ilp import families

    table, k = _tiered_wide(10, 6)
    roomy = solve_table(table, epsilon=2.0, enumerate_by="mecs", knowledge=k)
    monkeypatch.setattr(memory, "free_memory", lambda: 1)
    monkeypatch.setattr(families, "DENSE_CHECK_BYTES", 0)
    tight = solve_table(table, epsilon=2.0, enumerate_by="mecs", knowledge=k)
    assert tight.solution.stats["phase2"]["method"] == "branchings" and tight.solution.complete
    assert [vp_key(x.parents) for x in tight.solution.networks] == [vp_key(x.parents)
                                                                     for x in roomy.solution.networks]


def test_a_warm_start_the_branchings_never_take_is_said_unused(no_programme) -> None:
    table, k = _tiered_wide(6, 7)
    start = solve_table(table, epsilon=0.0, optimum_only=True, knowledge=k).solution.networks[0].parents
    res = solve_table(table, epsilon=1.0, enumerate_by="mecs", knowledge=k, warm_start=start)
    assert res.solution.stats["warm_start_used"] is False
    assert "the maximum spanning arborescence (Edmonds) is OPT's DAG" in res.report["warm_start_note"]


def test_where_the_programme_runs_peeling_lists_the_dags_and_past_it_the_branchings() -> None:
    """A DAG costs the branchings n arborescences, peeling much less: to 22 variables (the programme's range) a
    one-parent table keeps the programme and peeling, past it the branchings list — DAGs without knowledge too
    (the forests list only classes)."""
    small = _random_forest_table(8, 30)
    assert solve_table(small, epsilon=1.0, enumerate_by="dags").solution.stats["phase2"]["method"] == "peeling"
    wide = _random_forest_table(30, 31, density=0.2)
    res = solve_table(wide, epsilon=0.2, enumerate_by="dags")
    assert res.solution.stats["phase1"]["method"] == res.solution.stats["phase2"]["method"] == "branchings"
    assert res.solution.complete and len(res.solution.networks) > 1
