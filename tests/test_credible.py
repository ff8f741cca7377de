"""The credible set end to end (data → pruned scores → ILP → MECs → posteriors) against brute force.

Oracle: every DAG on n ≤ 5 variables scored from the *unpruned* table (tests.oracles), its MECs
grouped by an independent Verma–Pearl key (skeleton + v-structures) written here, and posteriors
summed directly.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bnilp.cli import main
from bnilp.data import from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.mec import credible_classes, dags_in_mec, mec_key
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import learn, solve_table
from bnilp.scorefile import ScoreTable, write_jaakkola
from bnilp.scores import StructurePrior, make_score
from tests.conftest import random_discrete_frame, signal_once_listed, slow_after, tied_forests
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
@pytest.mark.parametrize("seed,n,N", slow_after([(0, 4, 50), (1, 5, 200), (2, 5, 1000), (3, 4, 3000)], 2))
def test_credible_set_mecs_and_posteriors_equal_brute_force(score_name: str, seed: int, n: int, N: int) -> None:
    frame = random_discrete_frame(500 + seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score(score_name, data)
    everything = full_table(score)
    for bf in (3, 20, 150):
        eps = math.log(bf)
        opt, want = brute_force_credible(everything, eps)
        table = score_parent_sets(score, epsilon=eps)
        result = solve_table(table, epsilon=eps, enumerate_by="dags")
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
    result = solve_table(table, epsilon=spread + 1.0, enumerate_by="dags")
    assert len(result.solution.networks) == 543 and result.complete
    assert_posteriors_equal(result, brute_posteriors(every, data.names))
    # one representative per class (185 classes of DAGs on 4 nodes), every DAG counted, same posteriors
    classes = solve_table(table, epsilon=spread + 1.0, enumerate_by="mecs")
    assert classes.report["n_mecs"] == len(classes.solution.networks) == 185
    assert classes.report["n_networks"] == 543 and classes.complete
    assert_posteriors_equal(classes, brute_posteriors(every, data.names))


def test_mec_prior_weights_each_class_once() -> None:
    frame = random_discrete_frame(9, n=4, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(150))
    result = solve_table(table, epsilon=math.log(150), prior="mecs", enumerate_by="dags")
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


#: Rows whose credible set the slow tests check in class mode only (one representative per class, DAGs
#: counted from the CPDAGs — the default for BIC; 149 s): listing wine's 26,197 DAGs one by one took about
#: 1,400 s in the last CI run on the 2-core machine (2,767 s for the slow tests, of which zoo BF 150 1,166 s
#: and the other rows 161 s). Both modes are compared DAG for DAG on the other rows.
CLASS_MODE_ONLY = {("wine", 150)}
#: Rows marked ``long`` (not run by CI, ``pytest -m long``): zoo BF 150 takes ~19 minutes in either mode
#: (1,166 s listing its 21,683 DAGs, 1,100 s in class mode, on the 2-core machine), which alone would put
#: ``.ci/run`` over its 30-minute budget. Here its DAGs are listed and grouped (no class comparison).
LONG = {("zoo", 150)}


def _table1_row(shared_data, name: str, bf: int, compare_classes: bool = True) -> None:
    data = load_data(shared_data / "liao2019_ebnsl" / f"{name}.csv", no_header=True)
    slack = PAPER_SLACK.get((name, bf), 0.0)
    eps = math.log(bf)
    n_dags, _ = TABLE1[name, bf]
    if (name, bf) in CLASS_MODE_ONLY:
        _table1_row_by_classes(data, eps, slack, n_dags)
        return
    result = learn(data, score="bic", epsilon=eps + slack, enumerate_by="dags")
    assert result.complete, (result.solution.status, result.solution.message, result.solution.stats)
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
    if not compare_classes:
        return
    # class enumeration on the same score table: the same classes, each with its DAGs counted
    classes = solve_table(result.table, epsilon=eps + slack, enumerate_by="mecs")
    assert classes.complete and classes.report["enumerate"] == "mecs"
    assert classes.report["n_networks"] == len(result.solution.networks)
    assert {vp_key(n.parents) for n in classes.solution.networks} == {vp_key(n.parents)
                                                                      for n in result.solution.networks}
    by_key = {vp_key(n.parents): m["n_dags"] for n, m in zip(classes.solution.networks, classes.report["mecs"],
                                                               strict=True)}
    for m in result.report["mecs"]:
        assert by_key[vp_key(result.solution.networks[m["members"][0]].parents)] == m["n_dags"]


def _table1_row_by_classes(data, eps: float, slack: float, n_dags: int) -> None:
    """The paper's DAG count as the sum of the credible classes' DAG counts (BIC is score-equivalent:
    every DAG of a class has its representative's score); each class is distinct and whole."""
    result = learn(data, score="bic", epsilon=eps + slack, enumerate_by="mecs")
    assert result.complete and result.report["enumerate"] == "mecs", (result.solution.status,
                                                                       result.solution.message)
    nets, mecs = result.solution.networks, result.report["mecs"]
    opt = result.solution.optimum
    assert all(net.score >= opt - eps - slack - 1e-9 for net in nets)
    assert len({vp_key(net.parents) for net in nets}) == len(nets) == result.report["n_mecs"]
    assert all(m["n_dags"] == m["class_size"] for m in mecs)
    assert sum(m["n_dags"] for m in mecs) == result.report["n_networks"] == n_dags
    exact = sum(m["n_dags"] for net, m in zip(nets, mecs, strict=True) if net.score >= opt - eps)
    assert exact <= n_dags


@pytest.mark.parametrize("name,bf", FAST)
def test_table1_dag_counts(shared_data, name: str, bf: int) -> None:
    _table1_row(shared_data, name, bf)


@pytest.mark.slow
@pytest.mark.parametrize("name,bf", [pytest.param(*key, marks=pytest.mark.long) if key in LONG else key
                                     for key in SLOW])
def test_table1_dag_counts_slow(shared_data, name: str, bf: int) -> None:
    _table1_row(shared_data, name, bf, compare_classes=(name, bf) not in LONG)


def test_score_equivalent_classes_share_one_score(shared_data) -> None:
    data = load_data(shared_data / "liao2019_ebnsl" / "tic-tac-toe.csv", no_header=True)
    result = learn(data, score="bic", bf=3, enumerate_by="dags")
    for mec in result.report["mecs"]:
        members = [result.solution.networks[i].score for i in mec["members"]]
        assert np.ptp(members) < 1e-6


@pytest.mark.parametrize("prior", ["dags", "mecs"])
@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", slow_after([(0, 4, 50), (1, 5, 200), (2, 5, 1000), (4, 5, 80)], 2))
def test_class_enumeration_equals_brute_force(score_name: str, seed: int, n: int, N: int, prior: str) -> None:
    """One representative per credible class, DAGs counted from the CPDAG: the same classes, the same
    DAG count per class and the same edge posteriors (both priors) as enumerating every DAG."""
    frame = random_discrete_frame(500 + seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score(score_name, data)
    everything = full_table(score)
    for bf in (1, 3, 20, 150):
        eps = math.log(bf)
        opt, want = brute_force_credible(everything, eps)
        table = score_parent_sets(score, epsilon=eps)
        result = solve_table(table, epsilon=eps, prior=prior, enumerate_by="mecs")
        got = result.solution
        assert got.complete and got.status == "optimal" and result.report["enumerate"] == "mecs"
        assert got.optimum == pytest.approx(opt, abs=1e-9)
        classes: dict = {}
        for s, p in want:
            classes.setdefault(vp_key(p), []).append((s, p))
        assert [vp_key(net.parents) for net in got.networks] == list(dict.fromkeys(vp_key(net.parents)
                                                                                    for net in got.networks))
        assert {vp_key(net.parents) for net in got.networks} == set(classes)
        for net, m in zip(got.networks, result.report["mecs"], strict=True):
            assert m["n_dags"] == m["class_size"] == len(classes[vp_key(net.parents)])
        assert result.report["n_networks"] == len(want) and result.report["n_mecs"] == len(classes)
        listed = solve_table(table, epsilon=eps, prior=prior, enumerate_by="dags")
        ours, theirs = result.edge_posteriors(), listed.edge_posteriors()
        for u, v in itertools.permutations(data.names, 2):
            assert ours.loc[u, v] == pytest.approx(theirs.loc[u, v], abs=1e-9)
        if prior == "dags":
            assert_posteriors_equal(result, brute_posteriors(want, data.names))
        und = {(a["u"], a["v"]): a["undirected_posterior"] for a in result.report["adjacency"]}
        assert und == pytest.approx({(a["u"], a["v"]): a["undirected_posterior"]
                                     for a in listed.report["adjacency"]}, abs=1e-9)


def test_list_dags_lists_every_dag_of_every_class() -> None:
    frame = random_discrete_frame(77, n=5, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    table = score_parent_sets(make_score("bic", data), epsilon=math.log(20))
    listed = solve_table(table, epsilon=math.log(20), enumerate_by="dags")
    expanded = solve_table(table, epsilon=math.log(20), enumerate_by="mecs", list_dags=True)
    assert expanded.report["listed"] == "all DAGs"
    assert {as_key(n["parents"]) for n in expanded.report["networks"]} == {as_key(n.parents)
                                                                           for n in listed.solution.networks}
    assert expanded.report["n_networks"] == len(listed.solution.networks)
    classes = solve_table(table, epsilon=math.log(20), enumerate_by="mecs").report
    # the mecs-mode fields that say what the posteriors average over are there too, and mean the same
    assert (expanded.report["posterior_classes"], expanded.report["posterior_dags"]) == (
        classes["posterior_classes"], classes["posterior_dags"]) == (classes["n_mecs"], len(listed.solution.networks))


def test_list_dags_stops_at_max_networks_and_says_so(tmp_path) -> None:
    """Listing the DAGs of the counted classes is capped by max_networks (classes can hold millions of
    DAGs): the best max_networks DAGs are listed, the result is incomplete (status network_limit) and the
    command line exits 3 with its JSON saying how many were counted."""
    import json

    from click.testing import CliRunner

    from bnilp.cli import main
    from bnilp.scorefile import write_jaakkola

    frame = random_discrete_frame(77, n=5, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(20)
    table = score_parent_sets(make_score("bic", data), epsilon=eps)
    every = solve_table(table, epsilon=eps, enumerate_by="dags")
    total = len(every.solution.networks)
    classes = solve_table(table, epsilon=eps, enumerate_by="mecs").report["n_mecs"]
    cap = classes     # max_networks caps classes too: this many lets the class search finish
    assert cap < total
    capped = solve_table(table, epsilon=eps, enumerate_by="mecs", list_dags=True, max_networks=cap)
    assert capped.report["n_networks"] == cap and capped.report["n_dags_counted"] == total
    assert capped.report["posterior_dags"] == cap and capped.report["posterior_classes"] == capped.report["n_mecs"]
    # the classes those DAGs are counted in: all of them (n_mecs, the classes of the DAGs listed, was "1 found" of 7)
    assert capped.report["n_mecs_counted"] == classes > capped.report["n_mecs"]
    assert f"credible MECs     {capped.report['n_mecs']} holding the DAGs listed, of the {classes} counted" in \
        _panel_text(capped.report)
    assert capped.solution.status == "network_limit" and not capped.complete
    best = sorted((n.score for n in every.solution.networks), reverse=True)[:cap]
    assert [n["score"] for n in capped.report["networks"]] == pytest.approx(best, abs=1e-9)
    assert "--max-networks" in capped.report["listed"]
    # a class the cap cuts keeps its count: n_dags is m(M), the DAGs the table admits, not those listed (a review)
    sizes = {tuple(sorted(map(tuple, (m["cpdag"]["directed"])))) + tuple(sorted(map(tuple, m["cpdag"]["undirected"]))):
             m["n_dags"] for m in solve_table(table, epsilon=eps, enumerate_by="mecs").report["mecs"]}
    cut = [m for m in capped.report["mecs"] if len(m["members"]) < m["n_dags"]]
    assert cut and all(m["n_dags"] == sizes[tuple(sorted(map(tuple, m["cpdag"]["directed"])))
                                            + tuple(sorted(map(tuple, m["cpdag"]["undirected"])))]
                       for m in capped.report["mecs"])
    whole = solve_table(table, epsilon=eps, enumerate_by="mecs", list_dags=True, max_networks=total)
    assert whole.complete and whole.report["listed"] == "all DAGs" and whole.report["n_networks"] == total

    path = tmp_path / "t.scores"
    write_jaakkola(table, path)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["solve", str(path), "--bf", "20", "--enumerate", "mecs", "--list-dags",
                                    "--max-networks", str(cap), "--json", str(out), "-q"])
    assert res.exit_code == 3, res.output
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["status"] == "network_limit" and doc["n_dags_counted"] == total
    assert len(doc["networks"]) == cap and doc["n_mecs_counted"] == classes


def _panel_text(report) -> str:
    import io

    from rich.console import Console

    from bnilp.report import print_report

    out = io.StringIO()
    print_report(report, Console(file=out, width=200))
    return out.getvalue()


def test_auto_enumerates_classes_only_for_score_equivalent_scores() -> None:
    frame = random_discrete_frame(5, n=4, N=200)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(3)
    table = score_parent_sets(make_score("bdeu", data), epsilon=eps)
    assert table.meta["score_equivalent"] is True
    assert solve_table(table, epsilon=eps).report["enumerate"] == "mecs"
    rng = np.random.default_rng(0)
    x = rng.standard_normal(300)
    mixed = from_dataframe(pd.DataFrame({"x": x, "y": [f"s{v}" for v in np.digitize(x + rng.standard_normal(300),
                                                                                      [-0.5, 0.5])],
                                         "z": x + rng.standard_normal(300)}))
    table = score_parent_sets(make_score("mvp", mixed), epsilon=eps, palim=2)
    assert table.meta["score_equivalent"] is False
    assert solve_table(table, epsilon=eps).report["enumerate"] == "dags"
    with pytest.raises(InputError, match="score-equivalent"):
        solve_table(table, epsilon=eps, enumerate_by="mecs")


def test_in_degree_priors_keep_score_equivalence() -> None:
    """Every structure prior is a function of in-degrees, and a class's DAGs share the in-degree multiset."""
    frame = random_discrete_frame(6, n=5, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    names = data.names
    rng = np.random.default_rng(1)
    for kind in ("none", "binomial", "ebic"):
        score = make_score("bic", data, prior=StructurePrior(kind, data.n))
        assert score.score_equivalent
        for _ in range(20):
            order = list(rng.permutation(names))
            dag = {v: frozenset(u for u in order[:order.index(v)] if rng.random() < 0.5) for v in names}
            totals = {round(math.fsum(score.local(names.index(v), tuple(sorted(names.index(p) for p in ps)))
                                      for v, ps in member.items()), 6) for member in dags_in_mec(dag)}
            assert len(totals) == 1


def test_a_structure_prior_on_one_variable_is_zero() -> None:
    """With one variable the empty family is the only one (π(0) = 1, ln π = 0): the binomial prior's
    p = r/(n − 1) divided by zero before."""
    for kind in ("none", "binomial", "ebic"):
        prior = StructurePrior(kind, 1, expected_parents=0.5)
        assert prior.log_prior(0) == 0.0
    frame = random_discrete_frame(6, n=1, N=50)
    data = from_dataframe(frame, discrete=list(frame.columns))
    plain = make_score("bic", data).local(0, ())
    assert make_score("bic", data, prior=StructurePrior("binomial", 1, expected_parents=0.5)).local(0, ()) == plain


def test_the_binomial_prior_s_default_works_on_one_and_two_variables(tmp_path) -> None:
    """The default r = 1 is p = r/(n − 1) = 1 on two variables (ln(1 − p) = −∞): ``learn(structure_prior=
    "binomial")`` and ``--prior binomial`` were refused with their own default, and on one variable the refusal
    named the empty range (0, 0). Left out, r is 1 from three variables and (n − 1)/2 = ½ on two, where p = ½
    makes a → b, b → a and no edge equally likely a priori: the posterior is the likelihood's alone, as with no
    prior; one variable takes any r > 0 (no parent to have)."""
    for n, r in ((1, 1.0), (2, 0.5), (3, 1.0), (5, 1.0)):
        assert StructurePrior("binomial", n).expected_parents == r
    frame = random_discrete_frame(11, n=2, N=80)
    ab = learn(frame, score="bic", bf=1e9, structure_prior="binomial")
    plain = learn(frame, score="bic", bf=1e9)
    assert ab.report["n_networks"] == plain.report["n_networks"] == 3
    # each DAG's score moved by the same 2·ln ½: the same Bayes factors, so the same posteriors
    by_edge = {(e["from"], e["to"]): e["posterior"] for e in plain.report["edges"]}
    assert {(e["from"], e["to"]): pytest.approx(e["posterior"]) for e in ab.report["edges"]} == by_edge
    assert ab.report["scoring"]["expected_parents"] == 0.5
    one = learn(random_discrete_frame(12, n=1, N=30), score="bic", structure_prior="binomial")
    assert one.report["n_networks"] == 1
    with pytest.raises(InputError, match=r"must lie in \(0, n−1\) = \(0, 1\), got 1.0"):
        learn(frame, score="bic", structure_prior="binomial", expected_parents=1.0)
    frame.to_csv(tmp_path / "two.csv", index=False)
    out = CliRunner().invoke(main, ["learn", str(tmp_path / "two.csv"), "--discrete", "all", "--prior", "binomial",
                                    "--json", str(tmp_path / "o.json")])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "o.json").read_text())["scoring"]["expected_parents"] == 0.5


def _table_lacking_a_class_member():
    """(table, families without one parent set a credible DAG needs, ε, that DAG's class representative)."""
    frame = random_discrete_frame(11, n=4, N=400)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(20)
    table = score_parent_sets(make_score("bic", data), epsilon=eps)
    result = solve_table(table, epsilon=eps, enumerate_by="mecs")
    big = max(result.report["mecs"], key=lambda m: m["class_size"])
    assert big["class_size"] > 1
    rep = result.solution.networks[result.report["mecs"].index(big)]
    other = next(d for d in dags_in_mec(rep.parents) if d != rep.parents)
    v = next(v for v in other if other[v] != rep.parents[v])
    families = {u: dict(fams) for u, fams in table.families.items()}
    del families[v][other[v]]                       # a parent set a credible DAG needs
    return table, families, eps, rep


def test_a_class_the_table_cannot_hold_whole_is_loud_unless_a_palim_explains_it() -> None:
    table, families, _, rep = _table_lacking_a_class_member()
    with pytest.raises(AssertionError, match="admits only"):
        credible_classes([rep], families, table.variables, complete_classes=True)
    (cls,) = credible_classes([rep], families, table.variables, complete_classes=False)
    assert cls.counted < cls.class_size
    # every admitted DAG has the class's edge count, so the shares add up to it
    n_edges = sum(map(len, rep.parents.values()))
    assert sum(cls.shares.values()) == pytest.approx(n_edges, abs=1e-9)


def test_a_class_past_the_cap_that_the_table_cannot_hold_is_named_by_its_rank() -> None:
    """Counted past ``max_networks`` (``count_past_cap``), a class lacking a member's parent set is as loud as a
    listed one, and the error names it by its rank among all the classes (3 here), not by its place past the
    cap (it said "class 1")."""
    frame = random_discrete_frame(29, n=4, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(20)
    table = score_parent_sets(make_score("bic", data), epsilon=eps)
    whole = solve_table(table, epsilon=eps, enumerate_by="mecs")
    assert [m["class_size"] for m in whole.report["mecs"]] == [4, 3, 4, 4]
    members = [list(dags_in_mec(n.parents)) for n in whole.solution.networks]
    used = {(v, ps) for dags in members[:2] for dag in dags for v, ps in dag.items()}
    used |= set(whole.solution.networks[2].parents.items())     # the class's representative stays findable
    v, ps = next((v, ps) for dag in members[2] for v, ps in dag.items() if (v, ps) not in used)
    families = {u: dict(fams) for u, fams in table.families.items()}
    del families[v][ps]
    with pytest.raises(AssertionError, match="^class 3 has 4 DAGs but the score table admits only"):
        solve_table(ScoreTable(table.variables, families, dict(table.meta)), epsilon=eps, enumerate_by="mecs",
                    max_networks=2, count_past_cap=True)


def test_an_edited_score_file_under_its_sidecar_is_one_line_not_a_traceback(tmp_path) -> None:
    """The same table written back with its sidecar (which says: pruned soundly for this ε) — what a user who
    edits a score file, or writes a sidecar for a foreign one, hands ``solve``: one line, exit 2, no JSON; and
    without the sidecar the file is foreign and its classes are counted over the DAGs it admits (exit 0)."""
    table, families, eps, _ = _table_lacking_a_class_member()
    edited = tmp_path / "edited.scores"
    write_jaakkola(ScoreTable(table.variables, families, dict(table.meta)), edited)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["solve", str(edited), "--epsilon", str(eps), "-q", "--json", str(out)])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and "admits only" in lines[0] and "Traceback" not in res.output
    assert not out.exists()
    (tmp_path / "edited.scores.json").unlink()
    res = CliRunner().invoke(main, ["solve", str(edited), "--epsilon", str(eps), "--enumerate", "mecs", "-q",
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "parent sets are all in the score table" in json.loads(out.read_text())["counted"]


def test_an_unproven_best_so_far_dag_has_its_class_counted_over_what_the_table_admits(monkeypatch) -> None:
    """Sound pruning keeps the parent sets of every *credible* DAG only. When a limit stops phase 1,
    the best DAG found so far need not be credible, so its class may hold DAGs whose parent sets were
    pruned (rightly: a subset beats them by more than ε). Its class is then counted over the DAGs the
    table admits and said so — not asserted complete (found on sensors at BF 3, time limit)."""
    import bnilp.pipeline as pipeline
    from bnilp.ilp.result import Network, SolveResult

    frame = random_discrete_frame(5, n=4, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(3)
    table = score_parent_sets(make_score("bic", data), epsilon=eps)
    admitted = brute_force_networks(table)
    opt = admitted[0][0]

    def cut_by_pruning(parents) -> bool:
        return any(any(d[v] not in table.families[v] for v in d) for d in dags_in_mec(parents))

    score, dag = next((s, d) for s, d in admitted if s < opt - eps and cut_by_pruning(d))
    stopped = SolveResult(optimum=score, bound=opt, gap=(opt - score) / abs(score), status="time_limit",
                          seconds=1.0, epsilon=eps, complete=False, networks=[Network(score, dag)],
                          enumerated="mecs")
    assert not stopped.optimum_proven
    monkeypatch.setattr(pipeline, "solve", lambda *a, **kw: stopped)
    result = solve_table(table, epsilon=eps, enumerate_by="mecs")
    (cls,) = result.report["mecs"]
    members = list(dags_in_mec(dag))
    assert cls["n_dags"] == sum(all(d[v] in table.families[v] for v in d) for d in members) < len(members)
    assert "OPT not proven" in result.report["counted"]
    assert result.report["status"] == "time_limit" and not result.report["complete"]


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
@pytest.mark.parametrize("prior", ["dags", "mecs"])
def test_a_class_cap_after_complete_peeling_still_averages_over_every_credible_class(prior):
    """Peeling lists every credible DAG before the cap keeps the best 10 classes: the class table lists 10,
    but the class, edge, adjacency and CPDAG-undirected posteriors are those of the uncapped report (all
    7,783 classes of this table at ε = 10⁶), and the report says over how many classes and DAGs."""
    from tests.test_ilp import random_table

    table = random_table(5, 8, keep=0.9)
    table.meta["score_equivalent"] = True   # assumed: random scores, counted as classes (the equivalence check off)
    whole = solve_table(table, epsilon=1e6, enumerate_by="mecs", prior=prior)
    capped = solve_table(table, epsilon=1e6, enumerate_by="mecs", prior=prior, max_networks=10)
    assert whole.solution.complete and capped.solution.status == "network_limit"
    _, dags = brute_force_credible(table, 1e6)          # every DAG the table admits, grouped by Verma & Pearl
    assert whole.report["n_mecs"] == len({vp_key(parents) for _, parents in dags}) == 7783
    assert "posteriors over all 7,783 credible classes" in capped.report["listed"]
    _assert_best_listed_all_averaged(capped.report, whole.report, 10)


def _assert_best_listed_all_averaged(capped: dict, whole: dict, k: int) -> None:
    """``capped`` lists the best ``k`` classes of ``whole`` and averages over all of them: the same class
    rows and posteriors, the same edge, adjacency and CPDAG-undirected posteriors, the same totals."""
    assert capped["n_mecs"] == k < whole["n_mecs"]
    assert capped["posterior_classes"] == whole["posterior_classes"] == whole["n_mecs"]
    assert capped["posterior_dags"] == whole["posterior_dags"] == whole["n_networks"]
    for mine, theirs in zip(capped["mecs"], whole["mecs"][:k], strict=True):
        assert mine["cpdag"] == theirs["cpdag"] and mine["posterior"] == pytest.approx(theirs["posterior"], rel=1e-9)
        assert mine["n_dags"] == theirs["n_dags"] and mine["score"] == pytest.approx(theirs["score"], abs=1e-9)
    edge = {(e["from"], e["to"]): e["posterior"] for e in whole["edges"]}
    assert {(e["from"], e["to"]) for e in capped["edges"]} == set(edge)
    assert all(e["posterior"] == pytest.approx(edge[e["from"], e["to"]], abs=1e-12) for e in capped["edges"])
    adj = {(a["u"], a["v"]): (a["posterior"], a["undirected_posterior"]) for a in whole["adjacency"]}
    assert {(a["u"], a["v"]) for a in capped["adjacency"]} == set(adj)
    for a in capped["adjacency"]:
        assert (a["posterior"], a["undirected_posterior"]) == pytest.approx(adj[a["u"], a["v"]], abs=1e-12)
    assert sum(m["posterior"] for m in capped["mecs"]) < 1 - 1e-6


@pytest.mark.parametrize("prior", ["dags", "mecs"])
@pytest.mark.parametrize(("seed", "n", "score", "bf"), [(3, 5, "bic", 20), (2, 6, "bic", 1e3), (3, 5, "bdeu", 20)])
def test_branch_and_cut_counting_past_the_cap_averages_over_every_credible_class(monkeypatch, prior, seed, n,
                                                                                 score, bf):
    """``count_past_cap``: branch-and-cut (the programme off) lists on past the cap of 5 classes, so the report
    is the one peeling gives uncapped — the same best 5 classes, every class and DAG in the totals and in the
    posteriors (both priors) — with status network_limit and the number of classes in the message. Without
    it the cap stops the listing ("there may be more"). Score-equivalent tables (BIC, BDeu on random data), so
    that any DAG of a class represents it."""
    from bnilp.ilp import settings

    frame = random_discrete_frame(seed, n=n, N=40 if n == 5 else 60)
    eps = math.log(bf)
    table = score_parent_sets(make_score(score, from_dataframe(frame, discrete=list(frame.columns))), epsilon=eps)
    whole = solve_table(table, epsilon=eps, enumerate_by="mecs", prior=prior)
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    counted = solve_table(table, epsilon=eps, enumerate_by="mecs", prior=prior, max_networks=5, count_past_cap=True)
    stopped = solve_table(table, epsilon=eps, enumerate_by="mecs", prior=prior, max_networks=5)
    assert whole.solution.complete and whole.solution.stats["phase2"]["method"] == "peeling"
    assert counted.solution.stats["phase2"]["method"] == "branch-and-cut"
    assert counted.solution.status == "network_limit" and not counted.solution.complete
    total = whole.report["n_mecs"]
    assert f"the best 5 of {total} credible classes" in counted.solution.message
    assert f"posteriors over all {total:,} credible classes" in counted.report["listed"]
    _assert_best_listed_all_averaged(counted.report, whole.report, 5)
    assert stopped.solution.status == "network_limit" and "there may be more" in stopped.solution.message
    assert stopped.report["posterior_classes"] == 5


def test_counting_past_the_cap_stopped_early_averages_over_the_classes_found(monkeypatch):
    """A signal stops branch-and-cut past the cap: status interrupted, the best 5 of the classes found
    listed, the totals and posteriors over every class found (more than 5, fewer than all), and the report
    says "found"."""
    from bnilp.ilp import settings
    from tests.test_ilp import random_table

    table = random_table(5, 8, keep=0.9)
    table.meta["score_equivalent"] = True   # assumed: random scores, counted as classes (the equivalence check off)
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    progress, sent = signal_once_listed(40)
    res = solve_table(table, epsilon=1e6, enumerate_by="mecs", max_networks=5, count_past_cap=True,
                      progress=progress)
    assert sent and res.solution.status == "interrupted" and not res.solution.complete
    found = res.report["posterior_classes"]
    assert res.report["n_mecs"] == 5 and sent[0] <= found < 7783
    assert f"only {found} classes within epsilon were found, the best 5 of them kept" in res.solution.message
    assert f"over all {found:,} credible classes found" in res.report["listed"]
    assert res.report["posterior_dags"] > res.report["n_networks"]
    assert sum(m["posterior"] for m in res.report["mecs"]) < 1


def test_peeling_stopped_early_averages_over_the_classes_found_past_the_cap(monkeypatch):
    """Peeling (9 variables, 10⁸ tied forests; the forests' own lister switched off) stopped by a signal with
    more classes found than the cap of 10: the best 10 listed, the totals and posteriors over every class found,
    and the report says "found"."""
    monkeypatch.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
    monkeypatch.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
    progress, sent = signal_once_listed(50)
    res = solve_table(tied_forests(9), epsilon=0.0, enumerate_by="mecs", max_networks=10, progress=progress)
    assert sent and res.solution.status == "interrupted" and res.solution.stats["phase2"]["method"] == "peeling"
    found = res.report["posterior_classes"]
    assert res.report["n_mecs"] == 10 and sent[0] <= found == res.solution.stats["phase2"]["classes_found"]
    assert f"over all {found:,} credible classes found" in res.report["listed"]
    assert res.report["posterior_dags"] > res.report["n_networks"]


@pytest.mark.parametrize("max_networks", [150_000, 3])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_once_the_listing_is_over_is_said_and_the_whole_result_kept(monkeypatch, tmp_path, max_networks,
                                                                             signum):
    """A SIGTERM or Ctrl-C while peeling's classes are ranked (the listing over, nothing left to stop): the result is
    the whole set — the same classes as without the signal, the status its own (optimal, or network_limit at a cap
    of 3) — and the message and ``stats["signal_after_search"]`` say a signal came (SIGTERM was dropped unsaid, and a
    Ctrl-C raised where nothing caught it: exit 130, nothing written — two reviews)."""
    from bnilp.ilp import classbest

    monkeypatch.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
    monkeypatch.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
    table = learn("bnilp/instances/asia.csv", bf=60).table
    quiet = solve_table(table, epsilon=math.log(60), max_networks=max_networks)
    ranked = classbest.BestPerClass.ranked
    sent = []

    def ranked_under_a_signal(self):
        sent.append(os.getpid())
        os.kill(os.getpid(), signum)
        return ranked(self)

    monkeypatch.setattr(classbest.BestPerClass, "ranked", ranked_under_a_signal)
    try:
        res = solve_table(table, epsilon=math.log(60), max_networks=max_networks)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C while ranking escaped the search")
    assert sent and res.solution.stats["phase2"]["method"] == "peeling"
    assert res.solution.status == quiet.solution.status == ("optimal" if max_networks > 3 else "network_limit")
    assert [m["n_dags"] for m in res.report["mecs"]] == [m["n_dags"] for m in quiet.report["mecs"]]
    assert res.report["posterior_classes"] == quiet.report["posterior_classes"]
    assert res.solution.stats["signal_after_search"] and "signal_after_search" not in quiet.solution.stats
    assert "a SIGINT/SIGTERM came after the search had ended" in res.solution.message
    assert "SIGINT/SIGTERM" not in (quiet.solution.message or "")
    write_jaakkola(table, tmp_path / "asia.scores")     # the command line says it on stderr, -q too
    done = CliRunner().invoke(main, ["solve", str(tmp_path / "asia.scores"), "--bf", "60", "-q",  # (no escape: 130)
                                     "--max-networks", str(max_networks), "--json", str(tmp_path / "r.json")])
    assert done.exit_code == (0 if max_networks > 3 else 3), done.output
    assert "a SIGINT/SIGTERM came after the search had ended" in done.output
    assert json.loads((tmp_path / "r.json").read_text())["complete"] == (max_networks > 3)


def test_list_dags_capped_below_the_classes_says_the_cap_is_on_dags() -> None:
    """A cap below the number of classes also cuts the class search (max_networks caps classes there), whose words
    "the best 3 of 9 credible classes" read as 3 classes kept beside 3 DAGs listed (a review: "the best 2000 of
    14225 credible classes" where 340 classes held the 2,000 DAGs). The message now says the cap is on DAGs, of
    the DAGs and classes counted."""
    from bnilp.pipeline import learn

    table = learn("bnilp/instances/asia.csv", bf=60).table
    whole = solve_table(table, epsilon=math.log(60))
    capped = solve_table(table, epsilon=math.log(60), list_dags=True, max_networks=3)
    n, m = whole.report["n_networks"], whole.report["n_mecs"]
    assert m > 3 and capped.solution.status == "network_limit" and capped.report["n_networks"] == 3
    assert capped.solution.message == (f"network limit reached; DAG listing stopped at 3 DAGs (--max-networks) of "
                                       f"the {n} counted in {m} credible classes")



def test_list_dags_capped_while_branch_and_cut_lists_classes_says_the_class_search_stopped(monkeypatch) -> None:
    """Branch-and-cut counts no class past the cap: the DAGs are counted over the classes it kept, and the message
    says the class search stopped there (it said "the best 3 of the 4 found kept", classes the user did not cap)."""
    from bnilp.ilp import settings
    from bnilp.pipeline import learn

    table = learn("bnilp/instances/asia.csv", bf=60).table
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    capped = solve_table(table, epsilon=math.log(60), list_dags=True, max_networks=3)
    assert capped.solution.status == "network_limit" and capped.solution.unlisted is None
    counted = capped.report["n_dags_counted"]
    assert capped.solution.message == ("network limit reached: the class search stopped at 3 classes (--max-networks "
                                       "caps them too), so the DAGs are counted over those; DAG listing stopped at 3 "
                                       f"DAGs (--max-networks) of at least {counted} counted")


@pytest.mark.parametrize("palim, bf", [(None, 60), (1, 400)])
def test_count_past_cap_with_list_dags_counts_every_dag_as_peeling_does(monkeypatch, tmp_path, palim, bf) -> None:
    """With count_past_cap (it was refused with list_dags) branch-and-cut — or the forests on a palim-1 table — lists
    on past the cap, so the best K DAGs come from the best K classes and every DAG is counted: the same networks,
    edge posteriors, status and message as peeling's (the dynamic programme's, which lists every class), the total
    exact where the capped class search said "at least"; on the command line too."""
    from bnilp.ilp import settings
    from bnilp.pipeline import learn

    table = learn("bnilp/instances/asia.csv", bf=bf, palim=palim).table
    eps = math.log(bf)
    for cap in (3, 10, 40):
        monkeypatch.setattr(settings, "FOREST_ENUMERATION", False)     # (a palim-1 table goes to the forests)
        peeled = solve_table(table, epsilon=eps, list_dags=True, max_networks=cap)
        assert peeled.solution.stats["phase2"]["method"] == "peeling"
        monkeypatch.undo()
        monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
        counted = solve_table(table, epsilon=eps, list_dags=True, max_networks=cap, count_past_cap=True)
        capped = solve_table(table, epsilon=eps, list_dags=True, max_networks=cap)
        monkeypatch.undo()
        assert counted.solution.stats["phase2"]["method"] == ("forests" if palim else "branch-and-cut")
        assert counted.solution.status == peeled.solution.status == "network_limit"
        assert counted.solution.message == peeled.solution.message, (cap, counted.solution.message)
        assert [(n.score, n.parents) for n in counted.solution.networks] == \
            [(n.score, n.parents) for n in peeled.solution.networks]
        assert counted.report["edges"] == peeled.report["edges"] and counted.report["listed"] == peeled.report["listed"]
        whole = solve_table(table, epsilon=eps)
        total = sum(m["n_dags"] for m in whole.report["mecs"])
        assert f"of the {total} counted" in counted.solution.message
        if "class search stopped" in capped.solution.message:       # the capped search's total, a lower bound
            assert f"at least {capped.report['n_dags_counted']} counted" in capped.solution.message
    write_jaakkola(table, tmp_path / "asia.scores")
    done = CliRunner().invoke(main, ["solve", str(tmp_path / "asia.scores"), "--bf", str(bf), "-q", "--list-dags",
                                     "--count-past-cap", "--max-networks", "3"])
    assert done.exit_code == 3 and f"of the {total} counted" in done.output, done.output


@pytest.mark.parametrize("knowledge", [
    {"forbidden": [["smoke", "lung"]]}, {"required": [["smoke", "lung"]]},
    {"tiers": [["asia", "smoke"], ["tub", "lung", "bronc"], ["either", "xray", "dysp"]]},
    {"required_ancestors": [["smoke", "dysp"]]}, {"independent": ["asia,smoke|lung"]}])
@pytest.mark.parametrize("prior", ["dags", "mecs"])
def test_classes_past_the_cap_under_knowledge_count_into_the_posteriors(monkeypatch, knowledge, prior) -> None:
    """Under background knowledge the classes past the cap are counted as the listed ones are (their admitted DAGs,
    the shares of their arrows, their PDAGs: :func:`bnilp.mec.knowledge_tail_mass`), so the class and edge
    posteriors of a capped run are the uncapped run's — where peeling lists the set (knowledge that restricts the
    table), and with count_past_cap by branch-and-cut (any knowledge; it was refused). Before, peeling's capped
    posteriors averaged over the best K classes alone, while its message counted them all."""
    from bnilp.ilp import settings
    from bnilp.pipeline import learn

    table = learn("bnilp/instances/asia.csv", bf=400).table
    eps = math.log(400)
    whole = solve_table(table, epsilon=eps, knowledge=knowledge, prior=prior)
    want = {(e["from"], e["to"]): e for e in whole.report["edges"]}
    n_classes, n_dags = whole.report["n_mecs"], whole.report["n_networks"]
    assert n_classes > 3
    runs = []
    for cap in (1, 3):
        peeled = solve_table(table, epsilon=eps, knowledge=knowledge, prior=prior, max_networks=cap)
        if peeled.solution.stats["phase2"]["method"] == "peeling":    # (ancestors, independences: their own rows)
            runs.append((cap, peeled))
        monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
        runs.append((cap, solve_table(table, epsilon=eps, knowledge=knowledge, prior=prior, max_networks=cap,
                                      count_past_cap=True)))
        monkeypatch.undo()
    assert len(runs) >= 2
    for cap, res in runs:
        rep = res.report
        assert res.solution.status == "network_limit" and rep["n_mecs"] == cap
        assert (rep["posterior_classes"], rep["posterior_dags"]) == (n_classes, n_dags)
        assert f"class and edge posteriors over all {n_classes} credible classes" in rep["listed"]
        for got, full in zip(rep["mecs"], whole.report["mecs"], strict=False):
            assert got["n_dags"] == full["n_dags"] and got["posterior"] == pytest.approx(full["posterior"], abs=1e-9)
        assert {(e["from"], e["to"]) for e in rep["edges"]} == set(want)
        for e in rep["edges"]:
            full = want[e["from"], e["to"]]
            for key in ("posterior", "adjacency_posterior", "undirected_posterior"):
                assert (e.get(key) or 0.0) == pytest.approx(full.get(key) or 0.0, abs=1e-9), (key, e)


def test_counting_past_the_cap_under_knowledge_is_bounded_and_says_what_it_left_out(monkeypatch) -> None:
    """Under knowledge each class past the cap is counted in Python (about 0.1–1 ms a class): a review's completed
    search on 20 variables spent 55 s counting 401,978 of them, and a Ctrl-C there lost the whole result. Counting
    stops after TAIL_COUNT_SECONDS (here 0) whatever the status: the posteriors average over the classes counted,
    ``classes_uncounted`` and ``listed`` say how many were left out and why — with --list-dags the message counts
    the DAGs in the classes counted only."""
    from bnilp.ilp import settings
    from bnilp.pipeline import learn

    table = learn("bnilp/instances/asia.csv", bf=400).table
    eps, knowledge = math.log(400), {"forbidden": [["smoke", "lung"]]}
    whole = solve_table(table, epsilon=eps, knowledge=knowledge)
    n = whole.report["n_mecs"]
    monkeypatch.setattr(settings, "TAIL_COUNT_SECONDS", 0.0)
    cut = solve_table(table, epsilon=eps, knowledge=knowledge, max_networks=3)
    assert cut.solution.status == "network_limit" and cut.solution.stats["phase2"]["method"] == "peeling"
    assert cut.report["classes_uncounted"] == n - 3 and cut.report["posterior_classes"] == 3
    assert cut.report["listed"].endswith(f"over the best 3 of the {n} credible classes (the other {n - 3} not counted: "
                                         "under background knowledge the classes past the cap are counted one by "
                                         "one, within the time limit and for at most 0 s)")
    dags = solve_table(table, epsilon=eps, knowledge=knowledge, max_networks=3, list_dags=True)
    assert dags.report["classes_uncounted"] > 0 and dags.report["n_dags_counted_exact"] is False
    assert f"counted in 3 of the {n} credible classes (the other {n - 3} not counted: " in dags.solution.message
    # a search that ended within the user's time limit counts them until that limit (a second at least), never
    # past TAIL_COUNT_SECONDS; one stopped by a limit or a signal keeps its own deadline (_tail_deadline)
    import time

    from bnilp.pipeline import _knowledge_tail_deadline

    monkeypatch.setattr(settings, "TAIL_COUNT_SECONDS", 60.0)
    now = time.perf_counter()
    assert _knowledge_tail_deadline(None, None) - now == pytest.approx(60, abs=1)
    assert _knowledge_tail_deadline(None, now + 30) - now == pytest.approx(30, abs=1e-6)
    assert _knowledge_tail_deadline(None, now + 1e6) - now == pytest.approx(60, abs=1)
    assert _knowledge_tail_deadline(None, now - 5) - now == pytest.approx(1, abs=1)
    assert _knowledge_tail_deadline(now + 7, now + 30) == now + 7


def test_list_dags_whose_kept_classes_hold_exactly_the_cap_says_the_class_search_stopped(monkeypatch) -> None:
    """Where the classes the capped search kept hold exactly the cap of DAGs, nothing is cut from the listing, and
    the search's own words ("the best 1 of the 2 found kept") stood (a review): they say the class search stopped."""
    import numpy as np
    import pandas as pd

    from bnilp.ilp import settings
    from bnilp.pipeline import learn

    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 2000), rng.integers(0, 2, 2000)
    c = (a ^ b) ^ (rng.random(2000) < 0.05)           # a → c ← b: a class of one DAG
    table = learn(pd.DataFrame({"a": a, "b": b, "c": c}).astype(str), bf=1e6).table
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    capped = solve_table(table, epsilon=math.log(1e6), list_dags=True, max_networks=1)
    assert capped.solution.status == "network_limit" and capped.report["n_dags_counted"] == 1
    assert capped.solution.message == ("network limit reached: the class search stopped at 1 classes (--max-networks "
                                       "caps them too), so the DAGs are counted over those")


def test_count_past_cap_needs_class_enumeration():
    """Each combination it cannot serve is refused before any search, naming the parameters (list_dags and
    knowledge were two: served since, :func:`test_count_past_cap_with_list_dags_counts_every_dag_as_peeling_does`,
    :func:`test_classes_past_the_cap_under_knowledge_count_into_the_posteriors`)."""
    from tests.test_ilp import random_table

    table = random_table(5, 11, keep=0.7)
    for kw, words in (({"enumerate_by": "dags"}, "lists DAGs"), ({"enumerate_by": "dags", "list_dags": True}, "DAGs")):
        with pytest.raises(InputError, match=words):
            solve_table(table, epsilon=1.0, count_past_cap=True, **({"enumerate_by": "mecs"} | kw))


def test_counted_classes_share_one_edge_object_per_pair_of_variables() -> None:
    """Memory: the classes' CPDAG edge sets and edge shares hold references to one object per pair of
    variables (an arrow tuple, an undirected frozenset), not a copy per class — a class report over
    150,000 classes of 56 variables holds millions of edges."""
    frame = random_discrete_frame(11, n=5, N=100)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(1e4)
    table = score_parent_sets(make_score("bic", data), epsilon=eps)
    result = solve_table(table, epsilon=eps, enumerate_by="mecs")
    mecs = credible_classes(result.solution.networks, table.families, table.variables, complete_classes=True)
    arrows: dict = {}
    links: dict = {}
    for m in mecs:
        directed, undirected = m.cpdag
        for e in directed | set(m.shares):
            assert arrows.setdefault(e, e) is e
        for e in undirected:
            assert links.setdefault(e, e) is e
    assert len(mecs) > 100 and len(arrows) > 5 and links


def _credible_classes(table: ScoreTable, eps: float) -> set:
    return {mec_key(p) for _, p in brute_force_credible(table, eps)[1]}


def _scaled(table: ScoreTable, scale: float) -> ScoreTable:
    return ScoreTable(list(table.variables),
                      {v: {ps: s * scale for ps, s in f.items()} for v, f in table.families.items()})


@pytest.mark.parametrize("scale", [100.0, 1000.1, 1e6])
def test_branch_and_cut_lists_every_dag_tied_at_opt_whatever_the_scale_of_the_scores(monkeypatch, scale) -> None:
    """Scores that are all multiples of one number (a table scaled by 100, a rounded score file) let SCIP scale
    the objective to integers and then ask each solution to beat the objective limit by a whole unit: with
    ε = 0 phase 2 cut the root and the second DAG tied at OPT was lost, the result saying complete.
    Phase 2 keeps the objective as it is (``misc/scaleobj`` off)."""
    from tests.test_ilp import random_table

    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    table = _scaled(random_table(4, 5002, keep=0.6, ties=True), scale)
    _, credible = brute_force_credible(table, 0.0)
    assert len(credible) == 2
    result = solve_table(table, epsilon=0.0, enumerate_by="dags")
    assert result.complete
    assert {as_key(n.parents) for n in result.solution.networks} == {as_key(p) for _, p in credible}


def _nearly_equivalent_bic(seed: int) -> ScoreTable:
    """BIC on random data, one variable's scores shifted by −1e8 (so the tie tolerance is about 0.1) and every
    family's score moved by up to 0.02: Markov equivalent DAGs score apart by float-noise-sized amounts."""
    import random

    frame = random_discrete_frame(900 + seed, n=4, N=100)
    base = full_table(make_score("bic", from_dataframe(frame, discrete=list(frame.columns))))
    rng = random.Random(seed)
    return ScoreTable(list(base.variables), {
        v: {ps: s - (1e8 if v == base.variables[0] else 0.0) + rng.uniform(0, 0.02)
            for ps, s in base.families[v].items()} for v in base.variables})


@pytest.mark.parametrize("route", ["programme", "branch-and-cut"])
def test_a_class_is_credible_by_its_best_member_even_when_its_fixed_dag_is_not(monkeypatch, route) -> None:
    """A class stands for its DAG fixed by the CPDAG (canonical) when the two score within the tie tolerance —
    but where the class's members straddle OPT − ε, the fixed DAG may fall below it: the class was dropped,
    the result saying complete. The fixed DAG now stands only where it is not below both the DAG found and the
    threshold."""
    if route == "branch-and-cut":
        monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    checked = 0
    for seed in range(2):
        table = _nearly_equivalent_bic(seed)
        nets = brute_force_networks(table)
        opt = nets[0][0]
        tol = 1e-9 * abs(opt)
        groups: dict = {}
        for s, p in nets:
            groups.setdefault(mec_key(p), []).append(s)
        for scores in [ss for ss in groups.values() if len(ss) > 1 and opt - max(ss) > 2 * tol][:3]:
            eps = opt - tol - (max(scores) + min(scores)) / 2      # the threshold between the class's members
            result = solve_table(table, epsilon=eps, enumerate_by="mecs")
            assert result.complete
            assert {mec_key(n.parents) for n in result.solution.networks} == _credible_classes(table, eps)
            checked += 1
    assert checked == 6


def test_a_rounded_table_assumed_equivalent_lists_the_same_dag_for_a_class_on_every_path(monkeypatch,
                                                                                          shared_data) -> None:
    """A score file written with 4 decimals and no sidecar is only assumed score-equivalent, its check allowing the
    rounding (2.5·10⁻⁴). Its members of a class differ by up to that, more than the tie tolerance, and the class kept
    the DAG the search had found: peeling and branch-and-cut listed different DAGs for one class of wine at BF 3,
    1e-4 apart, and the posteriors moved with them (a review). Each class now stands for the DAG its CPDAG fixes,
    whichever path listed it."""
    from bnilp.ilp.classbest import _mcs_extensions
    from bnilp.mec import _cpdag_masks

    data = load_data(shared_data / "liao2019_ebnsl" / "wine.csv", no_header=True, discrete="all")
    scored = score_parent_sets(make_score("bdeu", data), epsilon=math.log(3))
    table = ScoreTable(list(scored.variables), {v: {ps: round(s, 4) for ps, s in scored.families[v].items()}
                                                for v in scored.variables})
    assert not table.meta
    peeled = solve_table(table, epsilon=math.log(3), enumerate_by="mecs")
    for key, value in (("DP_MAX_VARIABLES", 0), ("FOREST_ENUMERATION", False), ("BRANCHING_ENUMERATION", False)):
        monkeypatch.setattr(f"bnilp.ilp.settings.{key}", value)
    searched = solve_table(table, epsilon=math.log(3), enumerate_by="mecs")
    assert (peeled.report["stats"]["phase2"]["method"], searched.report["stats"]["phase2"]["method"]) == \
        ("peeling", "branch-and-cut")
    assert [n.parents for n in peeled.solution.networks] == [n.parents for n in searched.solution.networks]
    assert [n.score for n in peeled.solution.networks] == [n.score for n in searched.solution.networks]
    names = table.variables
    for net in peeled.solution.networks:           # each the DAG its class fixes
        masks = np.array([[sum(1 << names.index(u) for u in net.parents[v]) for v in names]], dtype=np.int64)
        fixed = _mcs_extensions(*_cpdag_masks(masks))[0]
        assert {v: frozenset(names[j] for j in range(len(names)) if int(fixed[i]) >> j & 1)
                for i, v in enumerate(names)} == net.parents


def test_a_class_recorded_below_a_raised_opt_is_judged_by_its_best_member(monkeypatch) -> None:
    """Phase 1 by branch-and-cut may prove a DAG a hair below the true OPT (within SCIP's tolerance); phase 2
    records a class by the member it meets above *that* threshold and cuts the whole class off. When a better
    DAG raises OPT, the member met may fall below the final threshold while another member stays above it: the
    class was filtered out. Such a class is now judged by its best admitted member. Table: two identical
    columns, one's scores scaled by 1 + 5e-13 (no exact symmetry, so the symmetry rows stay off)."""
    from bnilp.ilp import solve

    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    monkeypatch.setattr("bnilp.ilp.settings.SYMMETRY", False)
    short = checked = 0
    for seed in range(2):
        frame = random_discrete_frame(1200 + seed, n=4, N=80)
        frame["V2"] = frame["V0"]
        base = full_table(make_score("bic", from_dataframe(frame, discrete=list(frame.columns))))
        table = ScoreTable(list(base.variables), {
            v: {ps: s * (1 + 5e-13) if v == "V2" else s for ps, s in base.families[v].items()}
            for v in base.variables})
        nets = brute_force_networks(table)
        opt = nets[0][0]
        gap = opt - solve(table, 0.0, enumerate_ties=False).optimum
        if gap <= 0:
            continue
        short += 1
        groups: dict = {}
        for s, p in nets:
            groups.setdefault(mec_key(p), []).append(s)
        for scores in groups.values():
            top = sorted(set(scores))
            if len(top) < 2 or opt - top[-1] < 1e-6 or top[-2] < top[-1] - gap:
                continue
            if checked == 12:
                break
            eps = opt - 1e-9 * abs(opt) - top[-1]         # the threshold at the class's best member
            result = solve_table(table, epsilon=eps, enumerate_by="mecs")
            assert result.complete
            assert {mec_key(n.parents) for n in result.solution.networks} == _credible_classes(table, eps)
            checked += 1
    assert short and checked == 12


def test_an_image_class_is_judged_by_its_best_member_not_by_the_mapped_dag(monkeypatch) -> None:
    """Two pairs of twins, (V0 V1)(V2 V3), a table score-equivalent and symmetric up to one family raised by
    5e-13 relative (members of a class then differ by ~2.5e-12, inside the symmetry's tolerance), and ε putting
    OPT − ε between a class's best member and the DAG the symmetry maps a found DAG to: the image's class is
    credible through another member, and the lex-leader rows keep the search from it. It was skipped (its mapped
    DAG below the threshold) and the set called complete with 9 of the 11 classes (found by a review); each image
    is now judged by its class's best member. Branch-and-cut forced, with and without the symmetry: brute force's
    classes both ways."""
    import random

    from bnilp.ilp import settings

    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    names = ["V0", "V1", "V2", "V3"]
    swaps = [("V0", "V1"), ("V2", "V3")]

    def image(t):
        for a, b in swaps:
            t = frozenset(b if x == a else a if x == b else x for x in t)
        return t

    def orbit(t):
        seen, todo = {t}, [t]
        while todo:
            u = todo.pop()
            for a, b in swaps:
                w = frozenset(b if x == a else a if x == b else x for x in u)
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    rng = random.Random(7)
    g: dict = {}
    for k in range(len(names) + 1):
        for t in map(frozenset, itertools.combinations(names, k)):
            if t not in g:
                value = -rng.uniform(0, 6) * k - rng.uniform(0, 2) * k * k
                g.update(dict.fromkeys(orbit(t), value))
    assert all(g[image(t)] == x for t, x in g.items())
    families = {v: {frozenset(p): g[frozenset(p) | {v}] - g[frozenset(p)] - 5.0
                    for k in range(len(names)) for p in itertools.combinations([u for u in names if u != v], k)}
                for v in names}
    best = max(families["V0"], key=families["V0"].get)
    families["V0"][best] += 5e-13 * abs(families["V0"][best])
    table = ScoreTable(names, families)
    eps = 2.2513346075400413
    want = _credible_classes(table, eps)
    assert len(want) == 11
    for symmetric in (False, True):
        monkeypatch.setattr(settings, "SYMMETRY", symmetric)
        result = solve_table(table, epsilon=eps, enumerate_by="mecs")
        assert bool(result.solution.stats["phase2"].get("symmetry")) == symmetric
        assert result.complete and {mec_key(n.parents) for n in result.solution.networks} == want


@pytest.mark.slow
def test_symmetry_keeps_a_credible_class_whose_mirror_image_is_just_below_the_threshold(monkeypatch) -> None:
    """The lex-leader rows keep the search from a class C whose mirror image C′ under a pair of identical
    columns leads its orbit; C is then recorded as the image of C′. The symmetry is accepted within a relative
    tolerance, so C′ can lie just below OPT − ε while C lies above: C′'s DAG was cut as below the threshold and
    C never recorded. A DAG met below the threshold now has its credible images recorded too. Table: exactly
    score-equivalent (families are differences of one set function), the set function symmetric under
    (V0 V2) up to 3e-12."""
    import random

    monkeypatch.setattr("bnilp.ilp.settings.DP_ENUMERATION", False)
    names = ["V0", "V1", "V2", "V3"]
    swap = {"V0": "V2", "V2": "V0"}

    def mirror(s):
        return frozenset(swap.get(x, x) for x in s)

    checked = 0
    for seed in range(2):
        rng = random.Random(seed)
        g: dict = {}
        for k in range(5):
            for s in map(frozenset, itertools.combinations(names, k)):
                if s not in g:
                    g[s] = g[mirror(s)] = -rng.uniform(0, 30) * k
        g = {s: x + 3e-12 * rng.random() for s, x in g.items()}
        table = ScoreTable(names, {v: {frozenset(p): g[frozenset(p) | {v}] - g[frozenset(p)] - 10.0
                                       for k in range(4) for p in itertools.combinations(
                                           [u for u in names if u != v], k)} for v in names})
        nets = brute_force_networks(table)
        opt = nets[0][0]
        top: dict = {}
        one: dict = {}
        for s, p in nets:
            top[mec_key(p)] = max(top.get(mec_key(p), -math.inf), s)
            one.setdefault(mec_key(p), p)
        for key, p in one.items():
            image = mec_key({swap.get(c, c): mirror(ps) for c, ps in p.items()})
            if image == key or top[key] <= top[image] or opt - top[key] < 1e-6:
                continue
            eps = opt - 1e-9 * abs(opt) - (top[key] + top[image]) / 2
            want = _credible_classes(table, eps)
            if key not in want or image in want:
                continue
            result = solve_table(table, epsilon=eps, enumerate_by="mecs")
            assert result.solution.stats["phase2"].get("symmetry")
            assert result.complete and {mec_key(n.parents) for n in result.solution.networks} == want
            checked += 1
    assert checked >= 4


def test_a_class_met_well_below_the_threshold_is_cut_off_whole_and_the_set_stays_exact(monkeypatch) -> None:
    """SCIP's objective limit lies a little below OPT − ε (1e-5 of the shifted OPT), so phase 2 meets DAGs just
    below the threshold. Within the tie tolerance of it only the DAG is cut (its class may straddle it: float
    noise); further below, a score-equivalent class lies wholly below, and its whole class is cut — before, such a
    class was met DAG by DAG (hailfinder100 BF 150: 90,419 DAGs, not complete in 10 minutes; now 63 s). Only where
    the table's record says the score is score-equivalent (a table that says nothing keeps the DAG-only cut,
    ``test_a_class_straddling_the_threshold_…`` in test_ilp). BIC tables scaled by 1e6 widen the band so that
    classes fall in it: the classes listed still equal brute force."""
    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    fired = 0
    for seed in range(3):
        frame = random_discrete_frame(300 + seed, n=4, N=60)
        scaled = _scaled(full_table(make_score("bic", from_dataframe(frame, discrete=list(frame.columns)))), 1e6)
        table = ScoreTable(list(scaled.variables), scaled.families, {"score": "bic"})   # as its sidecar says
        nets = brute_force_networks(table)
        opt = nets[0][0]
        for k in (3, 10, 30):                  # ε just above the k-th distinct class score below OPT
            tops = sorted({round(s, 3) for s, _ in nets}, reverse=True)
            if len(tops) <= k:
                continue
            eps = opt - tops[k] - 1.0
            result = solve_table(table, epsilon=eps, enumerate_by="mecs")
            assert result.complete
            assert {mec_key(n.parents) for n in result.solution.networks} == _credible_classes(table, eps)
            fired += result.solution.stats["phase2"]["cuts"].get("below_threshold_class", 0)
    assert fired


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_a_class_of_more_dags_than_a_float_holds_is_weighed_in_logs() -> None:
    """400 separate triangles whose every family but the empty one costs nothing more than its size: the optimum
    is the complete triangles, one class of 6⁴⁰⁰ ≈ 1.8·10³¹¹ DAGs — past a float. Its weight under the DAG prior
    was ``float(m(M))``, an OverflowError traceback (a review); so was a listed DAG's W(M)/m(M) under
    ``--list-dags --prior mecs``. Weights are now in logs: the class holds all the mass, each triangle's edge is
    directed either way in half of its DAGs, and the count stays the exact integer. (Building the model tried every
    pair of the 1,200 variables for a 2-cluster row — 20 s; and the class words held every triple — 206 GiB.)"""
    names = [f"x{i}" for i in range(1200)]
    families = {}
    for t in range(400):
        tri = names[3 * t:3 * t + 3]
        for v in tri:
            others = [u for u in tri if u != v]
            families[v] = {frozenset(): -2.0, frozenset(others[:1]): -1.0, frozenset(others[1:]): -1.0,
                           frozenset(others): 0.0}
    table = ScoreTable(names, families)
    whole = solve_table(table, epsilon=0.0, enumerate_by="mecs")
    assert whole.complete and whole.report["n_mecs"] == 1 and whole.report["n_networks"] == 6 ** 400
    assert whole.report["mecs"][0]["n_dags"] == 6 ** 400 and whole.report["mecs"][0]["posterior"] == 1.0
    assert {e["posterior"] for e in whole.report["edges"]} == {0.5} and len(whole.report["edges"]) == 2400
    listed = solve_table(table, epsilon=0.0, enumerate_by="mecs", list_dags=True, prior="mecs", max_networks=50)
    assert listed.report["n_networks"] == 50 and listed.report["mecs"][0]["n_dags"] == 6 ** 400
    assert math.isclose(listed.report["mecs"][0]["posterior"], 1.0)
    assert all(0.0 <= e["posterior"] <= 1.0 for e in listed.report["edges"])
