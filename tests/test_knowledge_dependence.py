"""Conditional dependences as background knowledge: ``dependent a, b | c, d`` (Z does not d-separate a and b).

Oracles: every DAG on n ≤ 5 variables filtered by ``tests.oracles.satisfies_knowledge`` (which asks networkx's
``nx.is_d_separator``) for the whole pipeline — OPT, the credible set, its classes and the edge posteriors,
enumerating DAGs or classes — and, for the search's rows, every DAG of the table checked against each row.
The statements tested are ones the unconstrained optimum breaks (Z d-separates a and b in it), so that only the
search's rows can exclude it.
"""

from __future__ import annotations

import json
import math
import random

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

from bnilp import Knowledge, learn
from bnilp.cli import main
from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.graphs import d_connecting_arcs, d_separated
from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.ilp.knowledge_rows import dependence_row, touch_rows
from bnilp.knowledge import from_options, parse_knowledge, pruning_note
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import solve_table
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame, slow_after
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
from tests.test_knowledge_independence import _biting_statements as _biting_independences
from tests.test_knowledge_independence import _digraph
from tests.test_parentsets import full_table


class _FullTable:
    """The shape of :class:`bnilp.ilp.families._Data` over every parent set of n variables (``start``, ``pbool``)."""

    def __init__(self, n: int) -> None:
        rows = [(v, mask) for v in range(n) for mask in range(1 << n) if not mask >> v & 1]
        self.n = n
        self.pbool = np.array([[mask >> j & 1 for j in range(n)] for _, mask in rows], dtype=bool)
        self.start = np.searchsorted([v for v, _ in rows], np.arange(n + 1))
        self.index = {(v, frozenset(j for j in range(n) if mask >> j & 1)): k for k, (v, mask) in enumerate(rows)}


def _best_dag(everything, names: list[str]) -> dict:
    return max(all_dags(list(names)), key=lambda p: math.fsum(everything.families[v][p[v]] for v in names))


def _biting_dependences(rng: random.Random, everything, names: list[str]) -> list[tuple[str, str, tuple]]:
    """One or two dependences that the unconstrained best DAG breaks (its Z d-separates a and b)."""
    graph = _digraph(_best_dag(everything, names))
    out: list[tuple[str, str, tuple]] = []
    want = rng.randint(1, 2)
    for _ in range(200):
        a, b = rng.sample(names, 2)
        rest = [v for v in names if v not in (a, b)]
        z = tuple(rng.sample(rest, rng.randint(0, len(rest))))
        if nx.is_d_separator(graph, {a}, {b}, set(z)) and all({a, b} != {c, d} for c, d, _ in out):
            out.append((a, b, z))
            if len(out) == want:
                break
    return out


def _dependence_rows(result) -> int:
    """Rows the search added for the dependences, at integral and (separated) at LP points."""
    stats = result.solution.stats
    return sum((stats.get(phase) or {}).get("cuts", {}).get(kind, 0)
               for phase in ("phase1", "phase2") for kind in ("dependence", "dependence_sepa"))


def _check_seed(seed: int, n: int, with_other_knowledge: bool) -> None:
    rng, data, score_name, everything, statements = biting_instance(seed, n, 2900 + 100 * seed, _biting_dependences)
    k = Knowledge(dependent=statements)
    if with_other_knowledge:
        try:
            k = k.merged(random_knowledge(rng, data.names)).validated(data.names)
        except InputError:
            pass
    results = learn_against_oracle(data, score_name, everything, k)
    assert results
    graph = _digraph(_best_dag(everything, data.names))
    isolated = any(graph.degree(v) == 0 for a, b, _ in statements for v in (a, b))     # the touch rows cut it
    if not with_other_knowledge and not isolated:   # the best DAG breaks a statement: the lazy rows fired (other
        assert all(_dependence_rows(r) > 0 for r in results)    # knowledge may rule that DAG out by itself)


@pytest.mark.parametrize("seed", range(1, 6))     # seed 0 (~16 s) runs with the slow ones
def test_exact_under_conditional_dependences(seed: int) -> None:
    """Under one or two dependences the best DAG breaks, at BF 1, 20 and 150, enumerating DAGs and classes: the
    same OPT, credible DAGs, classes (sizes, PDAGs) and edge posteriors as filtering every DAG on 4 or 5 variables
    — half of the seeds with random other knowledge (arrows, adjacencies, ancestor relations, tiers) beside."""
    _check_seed(seed, 5 if seed % 3 == 0 else 4, with_other_knowledge=seed % 2 == 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, *range(6, 18)])
def test_exact_under_conditional_dependences_more_seeds(seed: int) -> None:
    """The same on seed 0 (5 variables, the slowest of the six) and twelve more seeds."""
    _check_seed(seed, 5 if seed % 3 == 0 else 4, with_other_knowledge=seed % 2 == 1)


@pytest.mark.parametrize("seed", slow_after([0, 2, 1, 3], quick=2))    # seeds 1 and 3: 38–43 s on a slow CPU
def test_the_dependence_rows_hold_for_every_dag_that_satisfies_the_dependence(seed: int) -> None:
    """Soundness of the search's rows (a new row must never remove a valid DAG): for random parent choices A (one
    family a child from the table, cyclic ones too) in which Z d-separates a and b, the moral row of
    :func:`dependence_row`, Σ ≥ 1, holds for every DAG of the table that satisfies the dependence, and A puts 0 on
    it; each touch row (an arrow at a, an arrow at b) holds for every such DAG. The moral row is at least as
    strong as the no-good over A's families on W = An_A({a, b} ∪ Z): every DAG that no-good cuts, it cuts."""
    rng = random.Random(seed)
    n = 5 if seed % 2 else 4
    frame = random_discrete_frame(800 + seed, n=n, N=200)
    data = from_dataframe(frame, discrete=list(frame.columns))
    d = _Data(full_table(make_score("bic", data)))
    names = list(d.names)
    family = {(d.names[d.child[kk]], frozenset(d.names[p] for p in np.flatnonzero(d.pbool[kk]))): kk
              for kk in range(d.K)}
    dags = []
    for dag in all_dags(names):
        used = np.zeros(d.K)
        used[[family[(v, frozenset(ps))] for v, ps in dag.items()]] = 1
        dags.append((dag, used))
    size_of = d.pbool.sum(axis=1)
    rows_checked = 0
    for _ in range(400):
        if rows_checked == 15:
            break
        a, b = rng.sample(range(n), 2)
        z = rng.sample([v for v in range(n) if v not in (a, b)], rng.randint(0, n - 2))
        most = rng.choice([0, 1, 1, 2, n - 1])        # sparse choices: most random ones d-connect a and b
        choice = {v: rng.choice([kk for kk in range(d.K) if d.child[kk] == v and size_of[kk] <= most])
                  for v in range(n)}
        parents = {v: np.flatnonzero(d.pbool[kk]).tolist() for v, kk in choice.items()}
        if not d_separated(parents, a, b, z):
            continue
        fams = dependence_row(d, parents, a, b, z)
        assert not set(choice.values()) & set(fams)         # A breaks its row
        touch = touch_rows(d, [a, b])
        graph = _digraph(parents)
        w = set().union(*({v} | nx.ancestors(graph, v) for v in (a, b, *z)))     # W = An_A({a, b} ∪ Z)
        for dag, used in dags:
            if not nx.is_d_separator(_digraph(dag), {names[a]}, {names[b]}, {names[v] for v in z}):
                assert used[fams].sum() >= 1, (dag, parents)
                assert all(used[r].sum() >= 1 for r in touch)
            if all(set(dag[names[v]]) <= {names[p] for p in parents[v]} for v in w):
                assert used[fams].sum() == 0        # the no-good cuts this DAG: so does the moral row
        rows_checked += 1
    assert rows_checked == 15


def test_the_moral_graph_separates_where_bayes_ball_does_on_any_directed_graph() -> None:
    """:func:`dependence_row` rests on Z separating a and b in the moral graph of the ancestral set exactly where
    Bayes-ball (``d_connecting_arcs``) d-separates them — for DAGs (Lauritzen et al. 1990) and for the cyclic
    parent choices the search meets (Spirtes 1995): on 20,000 random directed graphs, cyclic ones included, a
    separated pair gets its row (no AssertionError), and the choice puts 0 on it."""
    rng = random.Random(11)
    separated = cyclic = 0
    for _ in range(20000):
        n = rng.randint(3, 6)
        parents = {v: [u for u in range(n) if u != v and rng.random() < rng.choice([0.15, 0.3, 0.45])]
                   for v in range(n)}
        a, b = rng.sample(range(n), 2)
        z = rng.sample([v for v in range(n) if v not in (a, b)], rng.randint(0, n - 2))
        if d_connecting_arcs(parents, a, b, z) is not None:
            continue
        d = _FullTable(n)
        fams = dependence_row(d, parents, a, b, z)
        assert not set(fams) & {d.index[(v, frozenset(ps))] for v, ps in parents.items()}
        separated += 1
        cyclic += not nx.is_directed_acyclic_graph(_digraph(parents))
    assert separated > 3000 and cyclic > 500


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_a_table_pruned_without_the_dependence_says_so_and_one_scored_under_it_is_exact() -> None:
    """A dependence holds in supergraphs, not subgraphs, so pruning's swap of a set for a subset may break it:
    a table pruned without it carries the knowledge note; scoring under it walks every child without pruning (the
    sidecar's ``knowledge_unpruned``) and the result is the oracle's, by one process and by the split search."""
    rng = random.Random(5)
    frame = random_discrete_frame(2905, n=5, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score("bic", data)
    everything = full_table(score)
    k = Knowledge(dependent=_biting_dependences(rng, everything, data.names))
    assert k.dependent
    eps = math.log(20)
    foreign = score_parent_sets(score, epsilon=eps)
    assert pruning_note(foreign, k) is not None
    table = score_parent_sets(score, epsilon=eps, knowledge=k)
    assert set(table.meta["knowledge_unpruned"]) == set(data.names)
    assert pruning_note(table, k) is None
    opt, want, classes = oracle(everything, k, eps)
    for jobs in (1, 2):
        result = solve_table(table, epsilon=eps, knowledge=k, enumerate_by="dags", jobs=jobs)
        assert "knowledge_note" not in result.report
        check_against_oracle(result, opt, want, classes, data.names)


def test_one_statement_in_a_file_a_flag_and_python() -> None:
    """``dependent a, b | c, d`` in a file, ``--dependent 'a,b|c,d'`` and ``Knowledge(dependent=[(a, b, [c, d])])``
    (or the string) are one statement; ``to_dict`` and ``statements`` give it back; it forbids no arrow; a DAG
    breaks it exactly when Z d-separates a and b."""
    k = parse_knowledge("dependent smoke, xray | lung  # a comment\ndependent asia, dysp\n", "k.txt")
    assert k.dependent == (("smoke", "xray", ("lung",)), ("asia", "dysp", ()))
    assert k == Knowledge(dependent=[("xray", "smoke", ["lung"]), "dysp, asia"])
    assert k != Knowledge(independent=[("xray", "smoke", ["lung"]), "dysp, asia"])
    assert from_options(dependent=["smoke,xray|lung", "asia , dysp"]) == k
    assert parse_knowledge("\n".join(k.statements())) == k and Knowledge.coerce(k.to_dict()) == k
    assert k.to_dict()["dependent"] == [["smoke", "xray", ["lung"]], ["asia", "dysp", []]]
    assert not k.forbidden_arrows()
    empty = {v: frozenset() for v in NAMES}
    chain = empty | {"lung": frozenset({"smoke"}), "either": frozenset({"lung"}), "bronc": frozenset({"smoke"}),
                     "xray": frozenset({"either", "bronc"}), "tub": frozenset({"asia"}), "dysp": frozenset({"tub"})}
    assert k.allows(chain)                          # smoke → bronc → xray avoids the given lung
    assert k.violations(chain | {"xray": frozenset({"either"})}) == ["dependent smoke, xray | lung"]
    assert k.violations(empty) == ["dependent smoke, xray | lung", "dependent asia, dysp"]
    collider = empty | {"either": frozenset({"lung", "tub"})}
    assert Knowledge(dependent=[("lung", "tub", ["either"])]).allows(collider)     # a collider given: d-connected
    assert not Knowledge(dependent=[("lung", "tub", [])]).allows(collider)


@pytest.mark.parametrize("text,words", [
    ("dependent smoke, cancer | lung", "unknown variable 'cancer'"),
    ("dependent smoke, smoke", "dependent on itself"),
    ("dependent smoke, lung | smoke, bronc", "is given 'smoke' itself"),
    ("dependent smoke | lung", "expected 'dependent a, b | c, d'"),
    ("dependent smoke, lung |", "expected 'dependent a, b | c, d'"),
    ("independent lung, smoke | bronc, tub\ndependent smoke, lung | tub, bronc",
     r"contradicts 'independent lung, smoke \| bronc, tub' \(\S*k\.txt:1\)"),
    ("forbid asia -- tub\nforbid asia -- smoke\nforbid asia -- lung\nforbid asia -- bronc\nforbid asia -- either\n"
     "forbid asia -- xray\nforbid asia -- dysp\ndependent dysp, asia | xray", "every arrow at asia is forbidden"),
    ("tier! asia, tub, smoke, lung, bronc, either, xray, dysp\ndependent dysp, asia", "every arrow at dysp"),
    # a review's find: asia can only be a root and may not reach smoke, so nothing is an ancestor of both; the
    # search could only learn it by cutting DAGs one by one
    ("tier asia\ntier tub, smoke, lung, bronc, either, xray, dysp\nforbid asia ~> smoke\ndependent asia, smoke",
     "no variable that can be an ancestor of both asia and smoke"),
    ("forbid asia ~> smoke\nforbid smoke ~> asia\nforbid tub ~> asia\nforbid lung ~> asia\nforbid bronc ~> asia\n"
     "forbid either ~> asia\nforbid xray ~> asia\nforbid dysp ~> asia\ndependent smoke, asia",
     "no variable that can be an ancestor of both smoke and asia"),
])
def test_errors_name_the_statements_line(tmp_path, text: str, words: str) -> None:
    refused_at_its_line(tmp_path, text, words)


def test_a_dependence_only_some_arrows_forbid_is_not_refused() -> None:
    """Only a variable with every arrow forbidden is refused, and, given nothing, a pair no variable can be an
    ancestor of: one arrow left, or one possible common ancestor, or a given name, makes the dependence possible."""
    others = [v for v in NAMES if v not in ("asia", "tub")]
    Knowledge(forbidden_adjacent=[("asia", v) for v in others], dependent=[("asia", "dysp", ())]).validated(NAMES)
    Knowledge(independent=[("asia", "dysp", ["tub"])], dependent=[("asia", "dysp", ())]).validated(NAMES)
    tiers = [["asia"], [v for v in NAMES if v != "asia"]]          # asia a root: it may still reach smoke
    Knowledge(tiers=tiers, dependent=[("asia", "smoke", ())]).validated(NAMES)
    Knowledge(tiers=tiers, forbidden_ancestors=[("asia", "smoke")], dependent=[("tub", "smoke", ())]).validated(NAMES)
    Knowledge(tiers=tiers, forbidden_ancestors=[("asia", "smoke")],      # given either, a collider may join them
              dependent=[("asia", "smoke", ("either",))]).validated(NAMES)


def test_an_unsatisfiable_dependence_left_to_the_search_is_the_no_dag_error() -> None:
    """A dependence the forbidden arrows rule out less plainly (a's only neighbour allowed is b and b's other
    arrows are forbidden, so a — b is a component of its own, apart from c given d) is reported as no DAG
    satisfying the knowledge, as other contradictions left to the search are (given nothing, the up-front check
    refuses it: no common ancestor is possible)."""
    frame = random_discrete_frame(2911, n=4, N=200)
    data = from_dataframe(frame, discrete=list(frame.columns))
    a, b, c, d = data.names
    apart = [(a, c), (a, d), (b, c), (b, d)]
    with pytest.raises(InputError, match="no variable that can be an ancestor of both"):
        Knowledge(forbidden_adjacent=apart, dependent=[(a, c, ())]).validated(data.names)
    k = Knowledge(forbidden_adjacent=apart, dependent=[(a, c, (d,))])
    with pytest.raises(InputError, match="no DAG satisfies"):
        learn(data, score="bic", bf=3, knowledge=k)


def test_cli_learns_under_a_dependence_and_a_score_file_carries_it_to_solve(tmp_path) -> None:
    """On the bundled ASIA data the best networks leave asia and smoke d-separated (marginally);
    ``--dependent 'asia,smoke'`` gives networks that d-connect them, the JSON lists the statement, the score file's
    sidecar records it and ``solve`` applies it (the same OPT)."""
    runner = CliRunner()
    free, held = tmp_path / "free.json", tmp_path / "held.json"
    assert runner.invoke(main, ["learn", "--bf", "3", "-q", "--json", str(free)]).exit_code == 0
    free_report = json.loads(free.read_text())
    assert all(d_separated({v: set(ps) for v, ps in net["parents"].items()}, "asia", "smoke")
               for net in free_report["networks"])
    res = runner.invoke(main, ["learn", "--bf", "3", "-q", "--json", str(held), "--dependent", "asia,smoke"])
    assert res.exit_code == 0, res.output
    report = json.loads(held.read_text())
    assert report["knowledge"]["statements"] == ["dependent asia, smoke"]
    assert report["optimum"] < free_report["optimum"]
    for net in report["networks"]:
        assert not d_separated({v: set(ps) for v, ps in net["parents"].items()}, "asia", "smoke")
    scores, solved = tmp_path / "asia.scores", tmp_path / "solved.json"
    res = runner.invoke(main, ["score", "instances/asia.csv", "-o", str(scores), "--bf", "3", "-q",
                               "--dependent", "asia,smoke"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "asia.scores.json").read_text())["knowledge"]["dependent"] == [
        ["asia", "smoke", []]]
    res = runner.invoke(main, ["solve", str(scores), "--bf", "3", "-q", "--json", str(solved)])
    assert res.exit_code == 0, res.output
    assert json.loads(solved.read_text())["optimum"] == pytest.approx(report["optimum"], abs=1e-6)
    res = runner.invoke(main, ["score", "instances/asia.csv", "-o", str(scores), "--bf", "3",
                               "--dependent", "asia,smoke"])
    assert res.exit_code == 0 and "walked without pruning (required knowledge): all 8 variables" in res.output
    res = runner.invoke(main, ["learn", "--bf", "3", "-q", "--dependent", "asia,smoke|asia"])
    assert res.exit_code == 2 and "is given 'asia' itself" in res.output


@pytest.mark.slow        # ~15 s and ~7 s
@pytest.mark.parametrize("kind", ["dependent", "independent"])
def test_phase_one_in_bands_is_exact_and_meets_each_outcome(kind: str, monkeypatch) -> None:
    """Under knowledge rows, phase 1 first searches the families whose best DAG (the programme's, without the
    knowledge) lies within a band below OPT (``search._optimum_in_bands``): on data whose optimum the statements
    break, the bands meet each outcome — no DAG of the knowledge in the band (widened), its optimum below the
    level (one more round), the optimum — and OPT, the credible DAGs and classes are the oracle's, as with the
    bands off (``KNOWLEDGE_BAND_NATS`` 0: the whole table)."""
    outcomes: set[str] = set()
    eps = math.log(20)
    biting = {"dependent": _biting_dependences, "independent": _biting_independences}[kind]
    for seed in {"dependent": (15, 19, 31, 39), "independent": (22, 32)}[kind]:
        rng = random.Random(seed)
        frame = random_discrete_frame(5000 + seed, n=5, N=rng.choice([300, 1000, 3000]))
        data = from_dataframe(frame, discrete=list(frame.columns))
        everything = full_table(make_score("bic", data))
        k = Knowledge(**{kind: biting(rng, everything, data.names)})
        opt, want, classes = oracle(everything, k, eps)
        result = learn(data, score="bic", bf=20, knowledge=k, enumerate_by="dags")
        check_against_oracle(result, opt, want, classes, data.names)
        outcomes |= {r["outcome"] for r in result.solution.stats["phase1"]["bands"]}
        with monkeypatch.context() as m:
            m.setattr(settings, "KNOWLEDGE_BAND_NATS", 0.0)
            whole = learn(data, score="bic", bf=20, knowledge=k, enumerate_by="dags")
        assert "bands" not in whole.solution.stats["phase1"]
        check_against_oracle(whole, opt, want, classes, data.names)
    assert outcomes >= ({"no DAG", "below the level", "optimal"} if kind == "dependent"
                        else {"below the level", "optimal"})


def test_a_band_stopped_by_the_time_limit_reports_a_true_upper_bound(monkeypatch) -> None:
    """A band round that a limit stops (SCIP made to stop before its first node) reports status ``time_limit`` and an
    upper bound that is at least OPT under the knowledge (the oracle's) and at most the programme's OPT (an upper
    bound too: the knowledge only removes DAGs) — never the band's own bound, which knows nothing of the families
    left out."""
    from bnilp.ilp import search

    rng = random.Random(19)
    frame = random_discrete_frame(5019, n=5, N=rng.choice([300, 1000, 3000]))
    data = from_dataframe(frame, discrete=list(frame.columns))
    everything = full_table(make_score("bic", data))
    k = Knowledge(dependent=_biting_dependences(rng, everything, data.names))
    opt, _, _ = oracle(everything, k, 0.0)

    optimize = search._optimize

    def stopped(model, run, stats):         # SCIP stops before its first node: status nodelimit, read as a limit
        model.setParam("limits/totalnodes", 0)
        return optimize(model, run, stats)

    monkeypatch.setattr(search, "_optimize", stopped)
    result = learn(data, score="bic", bf=1, knowledge=k, enumerate_by="dags")
    got = result.solution
    assert got.status == "time_limit" and not got.complete
    ceiling = got.stats["dp"]["optimum"]            # its float sum: within 5e-10·|OPT| (search._dp_margin)
    assert opt - 1e-9 <= got.bound <= ceiling + 1e-9 * abs(ceiling)
    assert all(k.allows(net.parents) for net in got.networks)
