"""Model averaging against brute force: real BIC scores, every DAG on 4 nodes, several ε."""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest

from bnilp.averaging import (
    adjacency_posteriors,
    edge_posteriors,
    edge_table,
    mec_table,
    mec_weights,
    undirected_posteriors,
    weights,
)
from bnilp.errors import InputError
from bnilp.mec import group_by_mec, mec_index
from tests.oracles import all_dags

NODES = ["A", "B", "C", "D"]
EPSILONS = [math.log(3), math.log(20), math.log(150)]
HUGE = 1e9


def _dataset(n_rows: int = 200, seed: int = 7) -> np.ndarray:
    """Binary data from A → B → C ← D, A → C (plus noise), as an (N, 4) int array."""
    rng = np.random.default_rng(seed)
    a = rng.random(n_rows) < 0.4
    d = rng.random(n_rows) < 0.5
    b = np.where(a, rng.random(n_rows) < 0.8, rng.random(n_rows) < 0.25)
    c = rng.random(n_rows) < 0.15 + 0.35 * b + 0.3 * (d & ~a)
    return np.column_stack([a, b, c, d]).astype(int)


def _bic_table(data: np.ndarray) -> dict[str, dict[frozenset[str], float]]:
    """BIC local scores with plain loops: LL − ½ ln N · (r − 1) · q for binary variables."""
    n_rows = data.shape[0]
    table: dict[str, dict[frozenset[str], float]] = {}
    for i, child in enumerate(NODES):
        table[child] = {}
        others = [j for j in range(len(NODES)) if j != i]
        for k in range(len(others) + 1):
            for pset in itertools.combinations(others, k):
                counts: dict[tuple[int, ...], list[int]] = collections.defaultdict(lambda: [0, 0])
                for row in data:
                    counts[tuple(row[j] for j in pset)][row[i]] += 1
                ll = 0.0
                for n0, n1 in counts.values():
                    nj = n0 + n1
                    for nk in (n0, n1):
                        if nk:
                            ll += nk * math.log(nk / nj)
                df = 2 ** len(pset)
                table[child][frozenset(NODES[j] for j in pset)] = ll - 0.5 * math.log(n_rows) * df
    return table


@pytest.fixture(scope="module")
def scored():
    table = _bic_table(_dataset())
    nets = [(math.fsum(table[v][pa[v]] for v in NODES), pa) for pa in all_dags(NODES)]
    nets.sort(key=lambda sp: -sp[0])
    return nets


def _credible(nets, eps):
    opt = nets[0][0]
    return opt, [(s, p) for s, p in nets if s >= opt - eps - 1e-9]


def _brute_directed(nets, opt, per_net_weight=None):
    """P(u → v) by direct sums (no numpy)."""
    raw = per_net_weight or [math.exp(s - opt) for s, _ in nets]
    z = math.fsum(raw)
    return {(u, v): math.fsum(w for w, (_, pa) in zip(raw, nets, strict=True) if u in pa[v]) / z
            for u in NODES for v in NODES if u != v}


def _skel_vs(pa):
    skel = frozenset(frozenset((p, v)) for v, ps in pa.items() for p in ps)
    vs = frozenset((min(a, b), c, max(a, b)) for c, ps in pa.items() for a, b in itertools.combinations(ps, 2)
                   if frozenset((a, b)) not in skel)
    return skel, vs


def test_bic_is_score_equivalent(scored):
    by_class = collections.defaultdict(list)
    for s, pa in scored:
        by_class[_skel_vs(pa)].append(s)
    assert len(by_class) == 185
    for scores in by_class.values():
        assert max(scores) - min(scores) < 1e-9


@pytest.mark.parametrize("eps", EPSILONS + [HUGE])
def test_dag_prior_matches_brute_force(scored, eps):
    opt, nets = _credible(scored, eps)
    if eps == HUGE:
        assert len(nets) == 543
    else:
        assert 1 < len(nets) < 543
    w = weights([s for s, _ in nets], opt)
    assert w.shape == (len(nets),) and abs(w.sum() - 1) < 1e-12
    directed = edge_posteriors(nets, w, NODES)
    brute = _brute_directed(nets, opt)
    for (u, v), p in brute.items():
        assert directed.loc[u, v] == pytest.approx(p, abs=1e-9)
    mat = directed.to_numpy()
    assert np.all(np.diag(mat) == 0)
    adj = adjacency_posteriors(directed).to_numpy()
    assert np.all((mat >= 0) & (mat <= 1)) and np.all(adj <= 1 + 1e-12)
    np.testing.assert_allclose(adj, mat + mat.T, atol=1e-12)
    np.testing.assert_allclose(adj, adj.T)


def test_huge_epsilon_is_exact_posterior_over_all_dags(scored):
    opt = scored[0][0]
    _, nets = _credible(scored, HUGE)
    directed = edge_posteriors(nets, weights([s for s, _ in nets], opt), NODES)
    z = math.fsum(math.exp(s - opt) for s, _ in scored)
    for u in NODES:
        for v in NODES:
            if u != v:
                exact = math.fsum(math.exp(s - opt) for s, pa in scored if u in pa[v]) / z
                assert directed.loc[u, v] == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("eps", EPSILONS + [HUGE])
def test_mec_prior_matches_brute_force(scored, eps):
    opt, nets = _credible(scored, eps)
    mecs = group_by_mec(nets)
    ids = mec_index(mecs, len(nets))
    w = weights([s for s, _ in nets], opt, prior="mecs", mec_ids=ids)
    np.testing.assert_allclose(w, mec_weights(mecs, [s for s, _ in nets], opt, prior="mecs"))
    # brute force: each class once with exp(best − OPT), shared equally by the members present
    members = collections.defaultdict(list)
    for k, (_, pa) in enumerate(nets):
        members[_skel_vs(pa)].append(k)
    assert len(members) == len(mecs)
    raw = [0.0] * len(nets)
    for idx in members.values():
        best = max(nets[k][0] for k in idx)
        for k in idx:
            raw[k] = math.exp(best - opt) / len(idx)
    brute = _brute_directed(nets, opt, raw)
    directed = edge_posteriors(nets, w, NODES)
    for (u, v), p in brute.items():
        assert directed.loc[u, v] == pytest.approx(p, abs=1e-9)
    # P(u — v undirected in CPDAG): orientation varies among the members (all members present
    # only when ε is huge; otherwise use the CPDAG of the class)
    z = math.fsum(raw)
    und = undirected_posteriors(mecs, w, NODES)
    if eps == HUGE:
        for u, v in itertools.combinations(NODES, 2):
            total = 0.0
            for idx in members.values():
                orient = {(u in nets[k][1][v], v in nets[k][1][u]) for k in idx}
                if len(orient) > 1:
                    total += math.fsum(raw[k] for k in idx)
            assert und.loc[u, v] == pytest.approx(total / z, abs=1e-9)
            assert und.loc[v, u] == und.loc[u, v]
    adj = adjacency_posteriors(directed)
    assert np.all(und.to_numpy() <= adj.to_numpy() + 1e-12)
    # MEC prior with every class complete: uniform over classes of the posterior over DAGs per class
    table = mec_table(mecs, w, opt)
    assert list(table.columns) == ["score", "ln_bf", "bf", "n_dags", "posterior"]
    assert table["posterior"].sum() == pytest.approx(1.0)
    assert table["ln_bf"].iloc[0] == pytest.approx(0.0, abs=1e-9)
    assert np.all(table["ln_bf"].to_numpy() >= -1e-12) and np.all(table["ln_bf"] <= eps + 1e-9)
    np.testing.assert_allclose(table["bf"], np.exp(table["ln_bf"]))
    assert table["n_dags"].sum() == len(nets)
    # under the MEC prior, class posteriors are ∝ exp(score − OPT)
    expected = np.exp(table["score"] - opt)
    np.testing.assert_allclose(table["posterior"], expected / expected.sum(), atol=1e-12)


def test_mec_table_class_size_and_dag_prior(scored):
    opt, nets = _credible(scored, HUGE)
    mecs = group_by_mec(nets)
    w = weights([s for s, _ in nets], opt)
    table = mec_table(mecs, w, opt, class_size=True)
    assert (table["class_size"] == table["n_dags"]).all()
    # under the DAG prior, class posteriors are ∝ size · exp(score − OPT)
    expected = table["n_dags"] * np.exp(table["score"] - opt)
    np.testing.assert_allclose(table["posterior"], expected / expected.sum(), atol=1e-12)


def test_edge_table(scored):
    opt, nets = _credible(scored, math.log(20))
    mecs = group_by_mec(nets)
    w = weights([s for s, _ in nets], opt)
    directed = edge_posteriors(nets, w, NODES)
    und = undirected_posteriors(mecs, w, NODES)
    df = edge_table(directed, und)
    assert list(df.columns) == ["from", "to", "directed_posterior", "adjacency_posterior",
                                "undirected_posterior"]
    assert (df["adjacency_posterior"] > 0).all()
    assert df["directed_posterior"].is_monotonic_decreasing
    for row in df.itertuples(index=False):
        assert row.directed_posterior == directed.loc[row[0], row[1]]
        rev = directed.loc[row[1], row[0]]
        assert row.adjacency_posterior == pytest.approx(row.directed_posterior + rev)


def test_weights_inputs():
    w = weights([-10.0, -11.0, -10.0], -10.0)
    np.testing.assert_allclose(w, np.array([1, math.exp(-1), 1]) / (2 + math.exp(-1)))
    # arbitrary class labels; class 5 has two members, class 2 one
    w = weights([-10.0, -10.0, -12.0], -10.0, prior="mecs", mec_ids=[5, 5, 2])
    raw = np.array([0.5, 0.5, math.exp(-2)])
    np.testing.assert_allclose(w, raw / raw.sum())
    # the optimum only shifts the exponent: huge offsets do not underflow
    np.testing.assert_allclose(weights([-1e6, -1e6 - 1], -1e6), weights([0.0, -1.0], 0.0))
    assert weights([], 0.0).size == 0
    with pytest.raises(InputError, match="prior must be one of"):
        weights([1.0], 1.0, prior="uniform")
    with pytest.raises(InputError, match="needs mec_ids"):
        weights([1.0], 1.0, prior="mecs")
    with pytest.raises(InputError, match="mec_ids has 1 entries for 2 networks"):
        weights([1.0, 2.0], 2.0, prior="mecs", mec_ids=[0])


def test_edge_posteriors_duck_types_and_shapes():
    nets = [{"score": -1.0, "parents": {"x": [], "y": ["x"], "z": ["x", "y"]}},
            {"score": -1.0, "parents": {"x": ["y"], "y": [], "z": []}}]
    w = weights([n["score"] for n in nets], -1.0)
    d = edge_posteriors(nets, w, ["x", "y", "z"])
    assert list(d.index) == list(d.columns) == ["x", "y", "z"]
    assert d.loc["x", "y"] == d.loc["y", "x"] == 0.5
    assert d.loc["x", "z"] == 0.5 and d.loc["z", "x"] == 0.0
    assert adjacency_posteriors(d).loc["x", "y"] == 1.0
    assert edge_posteriors([], np.zeros(0), ["x"]).shape == (1, 1)


def test_mec_prior_with_split_classes():
    """A score that is not score-equivalent (per-edge bonuses): classes are cut by ε and each class
    counts once with its best member, shared equally by the members present."""
    rng = np.random.default_rng(5)
    bonus = {(u, v): float(rng.uniform(-3, 3)) for u in NODES for v in NODES if u != v}
    nets = [(math.fsum(bonus[(p, v)] for v, ps in pa.items() for p in ps), pa) for pa in all_dags(NODES)]
    nets.sort(key=lambda sp: -sp[0])
    opt, cred = _credible(nets, math.log(20))
    mecs = group_by_mec(cred)
    assert any(m.n_dags < m.class_size for m in mecs)  # some classes are only partly credible
    assert any(len({round(cred[i][0], 9) for i in m.members}) > 1 for m in mecs)
    w = mec_weights(mecs, [s for s, _ in cred], opt, prior="mecs")
    members = collections.defaultdict(list)
    for k, (_, pa) in enumerate(cred):
        members[_skel_vs(pa)].append(k)
    raw = [0.0] * len(cred)
    for idx in members.values():
        best = max(cred[k][0] for k in idx)
        for k in idx:
            raw[k] = math.exp(best - opt) / len(idx)
    z = math.fsum(raw)
    np.testing.assert_allclose(w, np.array(raw) / z, atol=1e-12)
    directed = edge_posteriors(cred, w, NODES)
    for (u, v), p in _brute_directed(cred, opt, raw).items():
        assert directed.loc[u, v] == pytest.approx(p, abs=1e-9)
    table = mec_table(mecs, w, opt)
    expected = np.exp(table["score"] - opt)
    np.testing.assert_allclose(table["posterior"], expected / expected.sum(), atol=1e-12)


def test_a_capped_dag_listing_under_the_class_prior_weighs_each_listed_dag_w_over_the_class_size():
    """``--enumerate dags --prior mecs`` cut by ``--max-networks``: a class of m(M) credible DAGs of which the cap
    listed fewer gave its listed ones all of W(M) (a review: 0.0537 where ``--list-dags`` gives 0.0486). Each listed
    DAG now weighs W(M)/m(M), m(M) the class's DAGs the table admits — the posterior conditioned on the listing —
    as ``--list-dags`` does; the class's ``n_dags`` is m(M)."""
    from bnilp.data import from_dataframe
    from bnilp.mec import count_dags_in_mec, cpdag_edges, mec_key
    from bnilp.pipeline import learn
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(2, n=5, N=60)
    data = from_dataframe(frame, discrete="all")
    whole = learn(data, bf=50, enumerate_by="dags", prior="mecs")
    cap = len(whole.solution.networks) // 3
    cut = learn(data, bf=50, enumerate_by="dags", prior="mecs", max_networks=cap)
    assert not cut.solution.complete and len(cut.solution.networks) == cap
    listed = collections.Counter(mec_key(net.parents) for net in cut.solution.networks)
    opt = cut.solution.optimum
    size, score = {}, {}
    for net in cut.solution.networks:
        size[mec_key(net.parents)] = count_dags_in_mec(cpdag_edges(net.parents))
        score[mec_key(net.parents)] = net.score
    assert any(listed[k] < size[k] for k in listed)         # a class the cap cut
    mass = {k: math.exp(score[k] - opt) * listed[k] / size[k] for k in listed}
    total = math.fsum(mass.values())
    by_score = sorted(((m["score"], m["posterior"], m["n_dags"]) for m in cut.report["mecs"]), reverse=True)
    want = sorted(((score[k], mass[k] / total, size[k]) for k in listed), reverse=True)
    assert len(by_score) == len(want)
    for (s1, p1, n1), (s2, p2, n2) in zip(by_score, want, strict=True):
        assert s1 == pytest.approx(s2, abs=1e-9) and p1 == pytest.approx(p2, rel=1e-9) and n1 == n2


def test_under_knowledge_an_edge_is_undirected_only_where_the_admitted_dags_disagree_on_it():
    """Under background knowledge a class stands for its DAGs that satisfy it (Meek 1995), so P(u — v undirected)
    sums the classes whose *admitted* DAGs orient u — v both ways — not the CPDAG's undirected edges (a mutation
    test: reading the CPDAG's passed every test). Oracle: every DAG on 4 nodes grouped by class, its admitted
    members listed, an edge undirected where they disagree; each class weighted 1/k for k classes."""
    from bnilp.knowledge import Knowledge
    from bnilp.mec import MEC
    from tests.oracles import markov_class, satisfies_knowledge

    nodes = ["a", "b", "c", "d"]
    classes: dict = {}
    for dag in all_dags(nodes):
        classes.setdefault(markov_class(dag), []).append(dag)
    rng = np.random.default_rng(5)
    checked = changed = 0
    for knowledge in (Knowledge(required=(("a", "b"),)), Knowledge(forbidden=(("c", "b"), ("d", "a"))),
                      Knowledge(tiers=(("a",), ("b", "c", "d")))):
        picked = [members for members in classes.values() if any(satisfies_knowledge(g, knowledge) for g in members)]
        picked = [picked[i] for i in rng.choice(len(picked), size=8, replace=False)]
        mecs, expected = [], np.zeros((4, 4))
        for members in picked:
            admitted = [g for g in members if satisfies_knowledge(g, knowledge)]
            mecs.append(MEC(score=0.0, members=[len(mecs)], representative=admitted[0], counted=len(admitted),
                            knowledge=knowledge))
            for i, u in enumerate(nodes):
                for j, v in enumerate(nodes):
                    ways = {u in g[v] for g in admitted if u in g[v] or v in g[u]}
                    if ways == {True, False}:
                        expected[i, j] += 1 / len(picked)
            changed += mecs[-1].cpdag[1] != mecs[-1].pdag[1]
        got = undirected_posteriors(mecs, [1 / len(mecs)] * len(mecs), nodes).to_numpy()
        np.testing.assert_allclose(got, expected, atol=1e-12)
        checked += 1
    assert checked == 3 and changed > 0        # the knowledge directed some CPDAG edge of the classes drawn
