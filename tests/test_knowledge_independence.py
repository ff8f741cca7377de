"""Conditional independences as background knowledge: ``independent a, b | c, d`` (Z d-separates a and b).

Oracles: networkx's d-separation test (``nx.is_d_separator``) for :func:`bnilp.graphs.d_connecting_arcs`, and
every DAG on n ≤ 5 variables filtered by ``tests.oracles.satisfies_knowledge`` (which asks networkx) for the
whole pipeline — OPT, the credible set, its classes and the edge posteriors, enumerating DAGs or classes.
The statements tested are ones the unconstrained optimum breaks with a and b not adjacent in it, so that only
the search's cuts (not the implied forbidden arrows) can exclude it.
"""

from __future__ import annotations

import json
import math
import random

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

from bnilp import Knowledge
from bnilp.cli import main
from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.graphs import d_connecting_arcs, d_separated
from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.ilp.knowledge_rows import short_trail_rows
from bnilp.knowledge import from_options, parse_knowledge
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame
from tests.oracles import all_dags
from tests.test_knowledge import (
    NAMES,
    biting_instance,
    check_against_oracle,
    learn_against_oracle,
    oracle,
    random_knowledge,
    refused_at_its_line,
)
from tests.test_parentsets import full_table


def _random_graph(rng: random.Random, n: int, acyclic: bool = True) -> dict[int, set[int]]:
    order = rng.sample(range(n), n)
    parents: dict[int, set[int]] = {v: set() for v in range(n)}
    for i in range(n):
        for j in range(n):
            if i != j and (i < j or not acyclic) and rng.random() < (0.35 if acyclic else 0.2):
                parents[order[j]].add(order[i])
    return parents


def _digraph(parents) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    graph.add_edges_from((p, v) for v, ps in parents.items() for p in ps)
    return graph


def test_d_separation_agrees_with_networkx_and_every_dag_holding_the_arcs_is_d_connected() -> None:
    """``d_separated`` is networkx's answer on random DAGs; where a and b are d-connected, the arrows returned
    form a DAG that d-connects them too — so every DAG holding them does (an active trail of a subgraph is one
    of the graph), which is what the search's cut Σ arc ≤ |E| − 1 rests on. On cyclic graphs (the search's
    integral points before the acyclicity handler) the arrows come from the graph, and where they form a DAG
    it d-connects a and b."""
    rng = random.Random(7)
    connected = 0
    for trial in range(1500):
        n = rng.randint(2, 8)
        acyclic = trial % 4 != 3
        parents = _random_graph(rng, n, acyclic)
        a, b = rng.sample(range(n), 2)
        z = set(rng.sample([v for v in range(n) if v not in (a, b)], rng.randint(0, n - 2)))
        arcs = d_connecting_arcs(parents, a, b, z)
        if acyclic:
            assert (arcs is None) == nx.is_d_separator(_digraph(parents), {a}, {b}, z)
            assert d_separated(parents, a, b, z) == (arcs is None)
        if arcs is None:
            continue
        connected += 1
        assert all(u in parents[w] for u, w in arcs)
        held = {v: {u for u, w in arcs if w == v} for v in range(n)}
        if nx.is_directed_acyclic_graph(_digraph(held)):
            assert not nx.is_d_separator(_digraph(held), {a}, {b}, z)
    assert connected > 300


def _biting_statements(rng: random.Random, everything, names: list[str]) -> list[tuple[str, str, tuple]]:
    """One or two independences that the unconstrained best DAG breaks, a and b not adjacent in it."""
    best = max(all_dags(list(names)), key=lambda p: math.fsum(everything.families[v][p[v]] for v in names))
    graph = _digraph(best)
    out: list[tuple[str, str, tuple]] = []
    want = rng.randint(1, 2)
    for _ in range(200):
        a, b = rng.sample(names, 2)
        rest = [v for v in names if v not in (a, b)]
        z = tuple(rng.sample(rest, rng.randint(0, len(rest))))
        if not graph.has_edge(a, b) and not graph.has_edge(b, a) and not nx.is_d_separator(graph, {a}, {b}, set(z)):
            out.append((a, b, z))
            if len(out) == want:
                break
    return out


def _independence_cuts(result) -> int:
    """Rows the search added for the independences: at integral points and (separated) at LP points, and, where
    ``settings.INDEPENDENCE_SHORT_TRAILS`` writes them, the trails of two arrows up front."""
    stats = result.solution.stats
    written = ("independence_rows", "independence_fixed") if settings.INDEPENDENCE_SHORT_TRAILS else ()
    return sum((stats.get(phase) or {}).get("cuts", {}).get(kind, 0) + (stats.get(phase) or {}).get(kind, 0)
               for phase in ("phase1", "phase2") for kind in ("independence", "independence_sepa") + written)


def _check_seed(seed: int, n: int, with_other_knowledge: bool) -> None:
    rng, data, score_name, everything, statements = biting_instance(seed, n, 900 + 100 * seed, _biting_statements)
    k = Knowledge(independent=statements)
    if with_other_knowledge:
        other = random_knowledge(rng, data.names)
        try:
            k = k.merged(other).validated(data.names)
        except InputError:
            pass
    for result in learn_against_oracle(data, score_name, everything, k):
        assert _independence_cuts(result) > 0       # the best DAG breaks a statement: the search's rows fired


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("sepafreq,short", [(1, True), (1, False), (0, False)],
                         ids=["separated", "separated-lazy-trails", "enforced-alone"])
def test_exact_under_conditional_independences(seed: int, sepafreq: int, short: bool, monkeypatch) -> None:
    """OPT, credible set, classes and posteriors equal the enumeration of every DAG that satisfies the
    independences (4 variables, BIC and BDeu, BF 1, 20, 150, DAGs and classes) — with the trails of two arrows
    written up front and the rows separated at LP points (default), with the short trails left to those rows, and
    with enforcement at integral points alone (without short trails the lazy rows must exclude the best DAG)."""
    monkeypatch.setattr(settings, "ANCESTRY_SEPAFREQ", sepafreq)
    monkeypatch.setattr(settings, "INDEPENDENCE_SHORT_TRAILS", short)
    _check_seed(seed, 4, with_other_knowledge=False)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), 2,
                                  pytest.param(3, marks=pytest.mark.slow)])   # 8–9 s each: the quick suite's guide
def test_the_short_trail_rows_hold_for_every_dag_that_satisfies_the_independence(seed: int) -> None:
    """Soundness of :func:`short_trail_rows` (a new row must never remove a valid DAG): over every DAG on 4 or 5
    variables whose families are all in the table, each DAG in which the given names d-separate a and b puts at
    most 1 on each row and uses no fixed family; and the rows bite — some DAG that breaks the independence puts 2
    on a row or uses a fixed family."""
    rng = random.Random(seed)
    n = 5 if seed % 2 else 4
    frame = random_discrete_frame(700 + seed, n=n, N=200)
    data = from_dataframe(frame, discrete=list(frame.columns))
    table = full_table(make_score("bic", data))
    d = _Data(table)
    names = list(d.names)
    family = {(d.names[d.child[kk]], frozenset(d.names[p] for p in np.flatnonzero(d.pbool[kk]))): kk
              for kk in range(d.K)}
    for _ in range(3):
        a, b = rng.sample(range(n), 2)
        z = rng.sample([v for v in range(n) if v not in (a, b)], rng.randint(0, n - 2))
        rows, fixed = short_trail_rows(d, a, b, z)
        assert rows or fixed.size
        bitten = 0
        for dag in all_dags(names):
            used = np.zeros(d.K)
            used[[family[(v, frozenset(ps))] for v, ps in dag.items()]] = 1
            broken = any(used[r].sum() > 1 for r in rows) or bool(used[fixed].any())
            if nx.is_d_separator(_digraph(dag), {names[a]}, {names[b]}, {names[v] for v in z}):
                assert not broken, (dag, a, b, z)
            else:
                bitten += broken
        assert bitten > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 15))
def test_exact_under_conditional_independences_with_other_knowledge(seed: int) -> None:
    """The same on 4 and 5 variables, half of the seeds with random other knowledge (arrows, adjacencies,
    ancestor relations, tiers) beside the independences."""
    _check_seed(seed, 5 if seed % 3 == 0 else 4, with_other_knowledge=seed % 2 == 1)


def test_a_foreign_table_and_two_jobs_are_exact_under_independences() -> None:
    """An independence holds in every subgraph of a DAG that satisfies it, so a table pruned without it stays
    exact (no knowledge note); and the split search (``jobs=2``) lists what one process lists."""
    rng = random.Random(3)
    frame = random_discrete_frame(903, n=5, N=500)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score("bdeu", data)
    everything = full_table(score)
    k = Knowledge(independent=_biting_statements(rng, everything, data.names))
    eps = math.log(20)
    opt, want, classes = oracle(everything, k, eps)
    table = score_parent_sets(score, epsilon=eps)
    result = solve_table(table, epsilon=eps, knowledge=k, enumerate_by="dags")
    assert "knowledge_note" not in result.report
    check_against_oracle(result, opt, want, classes, data.names)
    split = solve_table(table, epsilon=eps, knowledge=k, enumerate_by="dags", jobs=2)
    check_against_oracle(split, opt, want, classes, data.names)


def test_one_statement_in_a_file_a_flag_and_python() -> None:
    """``independent a, b | c, d`` in a file, ``--independent 'a,b|c,d'`` and ``Knowledge(independent=[(a, b,
    [c, d])])`` (or the string) are one statement; the order of a and b and of the given names does not count;
    ``to_dict`` and ``statements`` give it back; a DAG breaks it exactly when Z does not d-separate a and b."""
    k = parse_knowledge("independent smoke, xray | lung, either  # a comment\nindependent asia, dysp\n", "k.txt")
    assert k.independent == (("smoke", "xray", ("lung", "either")), ("asia", "dysp", ()))
    assert k == Knowledge(independent=[("xray", "smoke", ["either", "lung"]), "dysp, asia"])
    assert from_options(independent=["smoke,xray|lung,either", "asia , dysp"]) == k
    assert parse_knowledge("\n".join(k.statements())) == k and Knowledge.coerce(k.to_dict()) == k
    assert k.to_dict()["independent"] == [["smoke", "xray", ["lung", "either"]], ["asia", "dysp", []]]
    forbidden = k.forbidden_arrows()
    assert {("smoke", "xray"), ("xray", "smoke"), ("asia", "dysp"), ("dysp", "asia")} <= set(forbidden)
    chain = {v: frozenset() for v in NAMES} | {"lung": frozenset({"smoke"}), "either": frozenset({"lung"}),
                                               "xray": frozenset({"either"})}
    assert k.allows(chain)
    assert k.allows(chain | {"either": frozenset({"lung", "tub"}), "tub": frozenset({"smoke"})})  # either given
    assert k.violations(chain | {"bronc": frozenset({"smoke"}), "xray": frozenset({"either", "bronc"})}) == [
        "independent smoke, xray | lung, either"]     # smoke → bronc → xray avoids the given names
    assert not Knowledge(independent=[("lung", "tub", ["either"])]).allows(
        chain | {"either": frozenset({"lung", "tub"})})                      # a collider given: d-connected
    assert Knowledge(independent=[("lung", "tub", [])]).allows(chain | {"either": frozenset({"lung", "tub"})})


@pytest.mark.parametrize("text,words", [
    ("independent smoke, cancer | lung", "unknown variable 'cancer'"),
    ("independent smoke, lung | cancer", "unknown variable 'cancer'"),
    ("independent smoke, smoke", "independent of itself"),
    ("independent smoke, lung | smoke, bronc", "is given 'smoke' itself"),
    ("independent smoke | lung", "expected 'independent a, b | c, d'"),
    ("independent smoke, lung, tub", "expected 'independent a, b | c, d'"),
    ("independent smoke, lung |", "expected 'independent a, b | c, d'"),
    ("require smoke -> lung\nindependent lung, smoke | bronc", "contradicts independent lung, smoke | bronc"),
    ("require smoke -- lung\nindependent lung, smoke", "contradicts independent lung, smoke"),
    ("independent smoke, lung | bronc | tub", "expected 'independent a, b | c, d'"),
    ("independent smoke, lung | bronc\nindependent smoke, lung | bronc, cancer", "unknown variable 'cancer'"),
    ("independent smoke, lung | bronc\nindependent smoke, lung | bronc, bronc, cancer", "'bronc' is given twice"),
    # a review's find: no DAG satisfies these, and the search could only learn it by cutting paths one by one
    ("independent tub, lung\nrequire tub ~> lung", "tub an ancestor of lung"),
    ("require smoke ~> tub\nrequire smoke -> lung\nindependent tub, lung", "smoke an ancestor of both"),
    ("require tub -> either\nrequire lung -> either\nrequire either -> xray\nindependent tub, lung | xray",
     "contradicts the required arrows .*: they make an active trail between tub and lung given xray"),
    # a second review's find: the collider reaches the given name by a required ancestor relation
    ("require tub -> either\nrequire lung -> either\nrequire either ~> dysp\nindependent tub, lung | dysp",
     r"contradicts the required arrows .* \(and ancestor relations\): they make an active trail"),
])
def test_errors_name_the_statements_line(tmp_path, text: str, words: str) -> None:
    refused_at_its_line(tmp_path, text, words)


def test_required_arrows_that_leave_an_independence_possible_are_not_refused() -> None:
    """The contradiction checks refuse only what every DAG with the required arrows breaks: a collider whose
    descendants are not required to reach the given names, or a path through them, is allowed."""
    Knowledge(required=[("tub", "either"), ("lung", "either")], independent=[("tub", "lung", ["dysp"])]).validated(
        NAMES)
    Knowledge(required=[("tub", "either"), ("either", "lung")], independent=[("tub", "lung", ["either"])]).validated(
        NAMES)
    Knowledge(required_ancestors=[("tub", "lung")], independent=[("tub", "lung", ["either"])]).validated(NAMES)
    Knowledge(required=[("tub", "either"), ("lung", "either")], required_ancestors=[("either", "xray")],
              independent=[("tub", "lung", ["dysp"])]).validated(NAMES)
    with pytest.raises(InputError, match="an empty name among the given names"):     # as the file refuses 'c,,d'
        Knowledge(independent=[("tub", "lung", "either,,dysp")])


def test_cli_learns_under_an_independence_and_a_score_file_carries_it_to_solve(tmp_path) -> None:
    """On the bundled ASIA data the best network makes tub and lung dependent given either (a collider);
    ``--independent 'tub,lung|either'`` gives a network that does not, the JSON lists the statement, the score
    file's sidecar records it and ``solve`` applies it (the same OPT)."""
    runner = CliRunner()
    free, held = tmp_path / "free.json", tmp_path / "held.json"
    assert runner.invoke(main, ["learn", "--bf", "3", "-q", "--json", str(free)]).exit_code == 0
    res = runner.invoke(main, ["learn", "--bf", "3", "-q", "--json", str(held), "--independent", "tub,lung|either"])
    assert res.exit_code == 0, res.output
    free_report, report = json.loads(free.read_text()), json.loads(held.read_text())
    assert report["knowledge"]["statements"] == ["independent tub, lung | either"]
    assert report["optimum"] < free_report["optimum"]
    for net in report["networks"]:
        assert d_separated({v: set(ps) for v, ps in net["parents"].items()}, "tub", "lung", {"either"})
    scores, solved = tmp_path / "asia.scores", tmp_path / "solved.json"
    res = runner.invoke(main, ["score", "instances/asia.csv", "-o", str(scores), "--bf", "3", "-q",
                               "--independent", "tub,lung|either"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "asia.scores.json").read_text())["knowledge"]["independent"] == [
        ["tub", "lung", ["either"]]]
    res = runner.invoke(main, ["solve", str(scores), "--bf", "3", "-q", "--json", str(solved)])
    assert res.exit_code == 0, res.output
    assert json.loads(solved.read_text())["optimum"] == pytest.approx(report["optimum"], abs=1e-6)
