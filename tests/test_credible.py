"""The credible set end to end (data → pruned scores → ILP → MECs → posteriors) against brute force.

Oracle: every DAG on n ≤ 5 variables scored from the *unpruned* table (tests.oracles), its MECs
grouped by an independent Verma–Pearl key (skeleton + v-structures) written here, and posteriors
summed directly.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnilp.data import from_dataframe, load_data
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import learn, solve_table
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame
from tests.oracles import brute_force_credible, brute_force_networks, is_acyclic
from tests.test_parentsets import full_table


def vp_key(parents: dict[str, frozenset[str]]) -> tuple[frozenset, frozenset]:
    """Verma & Pearl: Markov equivalent ⇔ same skeleton and same v-structures a → c ← b, a, b not adjacent."""
    skeleton = frozenset(frozenset((a, c)) for c, ps in parents.items() for a in ps)
    vs = frozenset((a, c, b) for c, ps in parents.items() for a, b in itertools.combinations(sorted(ps), 2)
                   if frozenset((a, b)) not in skeleton)
    return skeleton, vs


def brute_posteriors(nets: list[tuple[float, dict]], variables: list[str]) -> dict[tuple[str, str], float]:
    opt = max(s for s, _ in nets)
    w = [math.exp(s - opt) for s, _ in nets]
    total = math.fsum(w)
    out = {}
    for u, v in itertools.permutations(variables, 2):
        out[u, v] = math.fsum(wi for wi, (_, p) in zip(w, nets, strict=True) if u in p[v]) / total
    return out


def as_key(parents: dict) -> tuple:
    return tuple(sorted((v, tuple(sorted(ps))) for v, ps in parents.items()))


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", [(0, 4, 50), (1, 5, 200), (2, 5, 1000), (3, 4, 3000)])
def test_credible_set_mecs_and_posteriors_equal_brute_force(score_name: str, seed: int, n: int, N: int) -> None:
    frame = random_discrete_frame(500 + seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score(score_name, data)
    everything = full_table(score)
    for bf in (3, 20, 150):
        eps = math.log(bf)
        opt, want = brute_force_credible(everything, eps)
        table = score_parent_sets(score, epsilon=eps)
        result = solve_table(table, epsilon=eps)
        got = result.solution
        assert got.complete and got.status == "optimal"
        assert got.optimum == pytest.approx(opt, abs=1e-9)
        assert {as_key(p) for _, p in want} == {as_key(net.parents) for net in got.networks}
        assert len(got.networks) == len(want)
        assert result.report["n_mecs"] == len({vp_key(p) for _, p in want})
        assert_posteriors_equal(result, brute_posteriors(want, data.names))


def assert_posteriors_equal(result, brute: dict) -> None:
    """bnilp's directed edge posteriors equal the brute-force ones to 1e-9."""
    ours = result.edge_posteriors()
    for (u, v), p in brute.items():
        assert ours.loc[u, v] == pytest.approx(p, abs=1e-9)


def test_huge_bf_gives_exact_posteriors_over_all_dags() -> None:
    frame = random_discrete_frame(42, n=4, N=80)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score("bdeu", data)
    table = score_parent_sets(score, prune=False)
    every = brute_force_networks(table)
    assert len(every) == 543
    spread = every[0][0] - every[-1][0]
    result = solve_table(table, epsilon=spread + 1.0)
    assert len(result.solution.networks) == 543 and result.complete
    assert_posteriors_equal(result, brute_posteriors(every, data.names))


def test_mec_prior_weights_each_class_once() -> None:
    frame = random_discrete_frame(9, n=4, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(150))
    result = solve_table(table, epsilon=math.log(150), prior="mecs")
    nets = [(n.score, n.parents) for n in result.solution.networks]
    classes: dict = {}
    for s, p in nets:
        classes.setdefault(vp_key(p), []).append((s, p))
    opt = max(s for s, _ in nets)
    class_w = {k: math.exp(max(s for s, _ in members) - opt) for k, members in classes.items()}
    total = math.fsum(class_w.values())
    for u, v in itertools.permutations(data.names, 2):
        want = math.fsum(class_w[k] / len(m) * sum(1 for _, p in m if u in p[v]) for k, m in classes.items()) / total
        assert result.edge_posteriors().loc[u, v] == pytest.approx(want, abs=1e-9)


def test_collected_networks_are_valid_and_unique(shared_data) -> None:
    data = load_data(shared_data / "liao2019_ebnsl" / "voting.csv", no_header=True)
    result = learn(data, score="bic", bf=20)
    table = result.table
    keys = set()
    for net in result.solution.networks:
        assert is_acyclic(net.parents)
        assert all(net.parents[v] in table.families[v] for v in table.variables)
        assert net.score >= result.solution.optimum - math.log(20) - 1e-9
        keys.add(as_key(net.parents))
    assert len(keys) == len(result.solution.networks)
    scores = [net.score for net in result.solution.networks]
    assert scores == sorted(scores, reverse=True)


# Liao et al. (AAAI 2019) Table 1, BIC: (data, BF) -> (|G| DAGs, |M| MECs as printed).
TABLE1 = {
    ("tic-tac-toe", 3): (192, 64), ("tic-tac-toe", 20): (192, 64), ("tic-tac-toe", 150): (544, 160),
    ("voting", 3): (27, 2), ("voting", 20): (441, 33), ("voting", 150): (2222, 170),
    ("wine", 3): (308, 51), ("wine", 20): (3449, 576), ("wine", 150): (26197, 4497),
    ("zoo", 3): (49, 13), ("zoo", 20): (1111, 270), ("zoo", 150): (21683, 5392),
}
FAST = [("tic-tac-toe", 3), ("tic-tac-toe", 20), ("voting", 3), ("voting", 20), ("wine", 3), ("zoo", 3)]
SLOW = [k for k in TABLE1 if k not in FAST]


#: GOBNILP's collection in the seed keeps networks up to ~1e-4 beyond OPT − ln BF (its objective-limit
#: tolerance): wine BF 150 has 26,153 DAGs with s ≥ OPT − ln 150 exactly and 26,197 (the paper's number)
#: with s ≥ OPT − ln 150 − 1e-4 (measured; see README). The BF 3 and BF 20 rows need no slack.
PAPER_SLACK = {("wine", 150): 1e-4, ("zoo", 150): 1e-4}


def _table1_row(shared_data, name: str, bf: int) -> None:
    data = load_data(shared_data / "liao2019_ebnsl" / f"{name}.csv", no_header=True)
    slack = PAPER_SLACK.get((name, bf), 0.0)
    eps = math.log(bf)
    result = learn(data, score="bic", epsilon=eps + slack)
    n_dags, _ = TABLE1[name, bf]
    assert result.complete
    opt = result.solution.optimum
    within = [n for n in result.solution.networks if n.score >= opt - eps - slack - 1e-9]
    assert len(within) == n_dags
    exact = [n for n in result.solution.networks if n.score >= opt - eps]
    assert len(exact) <= n_dags
    # MECs: our grouping must equal an independent Verma–Pearl grouping of the same DAGs; the
    # paper's |M| is not always reproducible (see README: tic-tac-toe's 192 DAGs all share one
    # score and form 8 complete classes of 24 DAGs, not 64).
    assert result.report["n_mecs"] == len({vp_key(n.parents) for n in result.solution.networks})
    assert all(m["n_dags"] <= m["class_size"] for m in result.report["mecs"])


@pytest.mark.parametrize("name,bf", FAST)
def test_table1_dag_counts(shared_data, name: str, bf: int) -> None:
    _table1_row(shared_data, name, bf)


@pytest.mark.slow
@pytest.mark.parametrize("name,bf", SLOW)
def test_table1_dag_counts_slow(shared_data, name: str, bf: int) -> None:
    _table1_row(shared_data, name, bf)


def test_score_equivalent_classes_share_one_score(shared_data) -> None:
    data = load_data(shared_data / "liao2019_ebnsl" / "tic-tac-toe.csv", no_header=True)
    result = learn(data, score="bic", bf=3)
    for mec in result.report["mecs"]:
        members = [result.solution.networks[i].score for i in mec["members"]]
        assert np.ptp(members) < 1e-6
