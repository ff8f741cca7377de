"""Identical columns (bnilp.twins): the credible DAGs and classes of a table with twins, counted from the table
with one column of each pair merged, are exactly those brute force and class enumeration list on the table
itself; the conditions that make it exact are checked on the table, and a pair that fails one is not used."""
from __future__ import annotations

import json
import math
from collections import Counter

import pandas as pd
import pytest
from click.testing import CliRunner

from bnilp import ilp
from bnilp.averaging import PRIORS
from bnilp.cli import main
from bnilp.mec import count_dags_in_mec, mec_key
from bnilp.report import probability_text
from bnilp.scorefile import ScoreTable
from bnilp.twins import class_groups, count_credible, expansions, reduce_twins, twin_pairs
from tests.conftest import slow_after
from tests.oracles import (
    brute_force_credible,
    classes_by_contraction,
    contract_twins,
    cpdag_class,
    markov_class,
    posteriors_by_listing,
)
from tests.test_symmetry import _table, _with_twins


def _brute_force_counts(table: ScoreTable, epsilon: float) -> tuple[int, int]:
    """(credible DAGs, their Markov equivalence classes) by listing every DAG the table admits."""
    _, credible = brute_force_credible(table, epsilon)
    return len(credible), len({mec_key(p) for _, p in credible})


CASES = [  # seed, columns, twin pairs (a copied into b), score, BF
    (1, 5, [(0, 3)], "bic", 20), (2, 5, [(1, 4)], "bic", 150), (3, 5, [(0, 2), (1, 4)], "bic", 20),
    (4, 5, [(2, 3)], "bic", 3), (5, 5, [(0, 4)], "bdeu", 20), (6, 5, [(0, 1), (2, 3)], "bic", 150),
    (7, 5, [(3, 4)], "bic", 1000), (8, 5, [(1, 2)], "bdeu", 150),
]


@pytest.mark.parametrize(("seed", "n", "twins", "score", "bf"), slow_after(CASES, quick=4))
def test_the_twin_reduction_counts_exactly_what_brute_force_lists(seed, n, twins, score, bf):
    """Random data with copied columns: count_credible's DAGs and classes (from the reduced table) equal brute
    force's on the whole table, and its optimum is the table's."""
    table = _table(_with_twins(seed, n, twins, N=80), score, bf)
    eps = math.log(bf)
    result = count_credible(table, eps)
    assert result.complete and result.status == "optimal"
    assert (result.dags, result.classes) == _brute_force_counts(table, eps)
    opt, _ = brute_force_credible(table, eps)
    assert result.optimum == pytest.approx(opt, abs=1e-9)


def test_the_reduction_is_used_where_the_columns_are_twins():
    """The quick cases above are not vacuous: there every copied pair meets the conditions, so the reduced table
    has fewer variables and lists fewer DAGs than the whole set holds. (In the others a twin's empty family is
    within ε of its twin singleton, or BDeu's scores differ in the last bits: the plain listing counts them.)"""
    for seed, n, twins, score, bf in CASES[:4]:
        table = _table(_with_twins(seed, n, twins, N=80), score, bf)
        pairs = twin_pairs(table, math.log(bf))
        names = table.variables
        assert sorted((p.kept, p.dropped) for p in pairs) == sorted((names[a], names[b]) for a, b in twins)
        result = count_credible(table, math.log(bf))
        assert len(reduce_twins(table, pairs).variables) == n - len(twins)
        assert result.reduced_dags < result.dags


@pytest.mark.parametrize(("seed", "n", "twins", "score", "bf"), slow_after(CASES, quick=4))
def test_arrow_posteriors_are_brute_forces(seed, n, twins, score, bf):
    """P(u → v) under the uniform prior over DAGs, from the reduced table's classes (each class weighted by
    exp(score − OPT) times its DAGs with the arrow, an arrow at a merged twin split evenly between the twins), equals
    the average over brute force's credible DAGs, weighted alike, to 1e-12 — every arrow, absent ones 0."""
    table = _table(_with_twins(seed, n, twins, N=80), score, bf)
    eps = math.log(bf)
    counted = count_credible(table, eps)
    opt, credible = brute_force_credible(table, eps)
    weights = [math.exp(s - opt) for s, _ in credible]
    expected: dict[tuple[str, str], float] = {}
    for w, (_, parents) in zip(weights, credible, strict=True):
        for v, ps in parents.items():
            for u in ps:
                expected[(u, v)] = expected.get((u, v), 0.0) + w / math.fsum(weights)
    for arrow in set(expected) | set(counted.arrows):
        assert counted.arrows.get(arrow, 0.0) == pytest.approx(expected.get(arrow, 0.0), abs=1e-12), arrow


@pytest.mark.parametrize("prior", ["dags", "mecs"])
@pytest.mark.parametrize(("seed", "n", "twins", "score", "bf"), slow_after(CASES, quick=4))
def test_class_and_cpdag_posteriors_are_brute_forces(seed, n, twins, score, bf, prior):
    """Under either prior, P(u → v) and P(u — v undirected in the CPDAG) counted class by class from the reduced
    table (the shares of each expanded class's DAGs, without listing them) equal brute force's credible DAGs grouped
    into their classes, to 1e-12 — every arrow and edge, absent ones 0."""
    table = _table(_with_twins(seed, n, twins, N=80), score, bf)
    eps = math.log(bf)
    arrows, undirected = count_credible(table, eps).posteriors[prior]
    want_arrows, want_undirected = posteriors_by_listing(brute_force_credible(table, eps)[1], prior)
    for arrow in set(want_arrows) | set(arrows):
        assert arrows.get(arrow, 0.0) == pytest.approx(want_arrows.get(arrow, 0.0), abs=1e-12), arrow
    for edge in set(want_undirected) | set(undirected):
        assert undirected.get(edge, 0.0) == pytest.approx(want_undirected.get(edge, 0.0), abs=1e-12), edge
    assert any(0 < p < 1 for p in undirected.values())      # the CPDAGs have undirected edges to count


#: CASES with their N, and one (N = 60) whose groups hold classes of different sizes (a scan of random tables)
GROUP_CASES = [(7, 5, [(0, 3)], "bic", 150, 60), *((*case, 80) for case in CASES)]


@pytest.mark.parametrize(("seed", "n", "twins", "score", "bf", "rows"), slow_after(GROUP_CASES, quick=5))
def test_the_class_groups_are_brute_forces_classes_grouped_by_the_class_they_contract_to(seed, n, twins, score, bf,
                                                                                          rows):
    """class_groups — the class table of a counted set: one group per class K of the reduced table, best first —
    holds exactly brute force's credible classes whose DAGs contract to K (each twin pair merged into its kept
    twin, written out in the oracle): per group the same classes, DAGs, class sizes and score, and under either prior
    its posterior is the sum of its classes' (exp(score − OPT), times the class's DAGs under "dags"), to 1e-12."""
    table = _table(_with_twins(seed, n, twins, N=rows), score, bf)
    eps = math.log(bf)
    counted = count_credible(table, eps)
    opt, credible = brute_force_credible(table, eps)
    want = classes_by_contraction(credible, [(p.kept, p.dropped) for p in counted.pairs])
    assert len(counted.expansions) == counted.reduced_classes == len(want)
    for prior in PRIORS:
        total = math.fsum(math.exp(s - opt) * (size if prior == "dags" else 1)
                          for members in want.values() for s, size in members)
        groups = class_groups(counted, prior)
        assert [g["score"] for g in groups] == sorted((g["score"] for g in groups), reverse=True)
        assert groups[0]["ln_bf"] == 0.0        # OPT's group: not the merged table's rounding, e.g. 9.09e-13 (a review)
        for group, expansion in zip(groups, counted.expansions, strict=True):
            members = want[cpdag_class(*expansion.cpdag)]
            assert group["n_mecs"] == len(members) and group["n_dags"] == sum(size for _, size in members)
            assert group["class_sizes"] == sorted(map(list, Counter(size for _, size in members).items()))
            assert group["score"] == pytest.approx(members[0][0], abs=1e-9)
            assert group["ln_bf"] == pytest.approx(opt - members[0][0], abs=1e-9)
            assert group["posterior"] == pytest.approx(math.fsum(
                math.exp(s - opt) * (size if prior == "dags" else 1) for s, size in members) / total, abs=1e-12)
    assert not counted.pairs or any(len(members) > 1 for members in want.values())   # groups of several classes
    if rows == 60:
        assert any(len(g["class_sizes"]) > 1 for g in class_groups(counted))           # of several sizes


def test_posteriors_false_counts_the_same_without_the_class_shares():
    """count_credible(posteriors=False) — what ``bnilp count`` runs without ``--json`` — gives the same counts and
    arrows under the prior over DAGs, and no per-class posteriors; the expansions' two counts of classes (the
    distinct collider sets, and the classes grouped one by one for the shares) agree."""
    for seed, n, twins, score, bf in CASES[:4]:
        table = _table(_with_twins(seed, n, twins, N=80), score, bf)
        full, bare = count_credible(table, math.log(bf)), count_credible(table, math.log(bf), posteriors=False)
        assert (bare.dags, bare.classes, bare.arrows, bare.posteriors) == (full.dags, full.classes, full.arrows, {})
        assert [g["class_sizes"] for g in class_groups(bare)] == [[]] * len(bare.expansions)    # not counted
        assert [{k: g[k] for k in ("n_mecs", "n_dags", "posterior")} for g in class_groups(bare)] == [
            {k: g[k] for k in ("n_mecs", "n_dags", "posterior")} for g in class_groups(full)]
        assert full.posteriors["dags"][0] == full.arrows


def test_every_credible_dag_is_regular_where_the_conditions_hold():
    """The regularity lemma on brute force's credible DAGs: exactly one twin is the other's only parent, and no
    other child has both twins; and each credible DAG of the reduced table stands for its expansions."""
    for seed, n, twins, _score, bf in CASES[:4]:
        table = _table(_with_twins(seed, n, twins, N=80), "bic", bf)
        eps = math.log(bf)
        pairs = twin_pairs(table, eps)
        _, credible = brute_force_credible(table, eps)
        for _, parents in credible:
            for p in pairs:
                a, b = p.kept, p.dropped
                assert (parents[a] == {b}) != (parents[b] == {a})
                assert not any(a in ps and b in ps for ps in parents.values())
        _, reduced = brute_force_credible(reduce_twins(table, pairs), eps)
        assert sum(expansions(p, pairs) for _, p in reduced) == len(credible)


@pytest.mark.parametrize(("seed", "twins", "bf"), slow_after([(11, [(0, 5), (2, 6)], 20), (12, [(1, 6)], 150),
                                                             (13, [(0, 3), (4, 6)], 150)], quick=1))
def test_the_twin_reduction_agrees_with_class_enumeration_on_seven_variables(seed, twins, bf):
    """Seven variables (too many for brute force): the classes branch-and-cut lists on the whole table, and the
    DAGs they hold, are the ones counted from the reduced table."""
    table = _table(_with_twins(seed, 7, twins, N=120), "bic", bf)
    eps = math.log(bf)
    listed = ilp.solve(table, eps, enumerate_by="mecs", max_networks=10**6)
    assert listed.complete
    counted = count_credible(table, eps)
    assert counted.pairs and counted.complete
    assert counted.classes == len(listed.networks)
    assert counted.dags == sum(count_dags_in_mec(net.parents) for net in listed.networks)


def _perturbed(table: ScoreTable, child: str, parents: frozenset[str], score: float) -> ScoreTable:
    families = {c: dict(f) for c, f in table.families.items()}
    families[child][parents] = score
    return ScoreTable(list(table.variables), families, dict(table.meta))


def test_a_pair_that_fails_a_condition_is_left_as_it_is():
    """T1: a child's family with one twin scored apart from its image; T2: a twin's own family apart from the
    other's; T3: another family of a twin within ε of its twin singleton — each time the pair is not used, and the
    counts are the plain class listing's (the perturbed tables are not score-equivalent, so not brute force's)."""
    table = _table(_with_twins(1, 5, [(0, 3)], N=80), "bic", 20)
    eps = math.log(20)
    a, b = table.variables[0], table.variables[3]
    assert [(p.kept, p.dropped) for p in twin_pairs(table, eps)] == [(a, b)]
    child = next(c for c in table.variables if c not in (a, b)
                 and any(a in F and b not in F for F in table.families[c]))
    fam = next(F for F in table.families[child] if a in F and b not in F)
    other = next(F for F in table.families[a] if F != frozenset({b}))
    single = table.families[a][frozenset({b})]
    broken = [_perturbed(table, child, fam, table.families[child][fam] - 1e-9),
              _perturbed(table, a, other, table.families[a][other] - 1e-9),
              _perturbed(_perturbed(table, a, other, single - eps / 2), b, other, single - eps / 2)]
    for t in broken:
        assert twin_pairs(t, eps) == []
        result = count_credible(t, eps)
        listed = ilp.solve(t, eps, enumerate_by="mecs")
        assert result.classes == len(listed.networks) == result.reduced_classes
        assert result.dags == sum(count_dags_in_mec(net.parents) for net in listed.networks)


def test_class_counts_split_the_dag_count():
    """Summed over the classes of the reduced table, the DAGs expand_class counts are the expansions of every
    DAG of those classes (the per-class count and the closed form Π 2^(1 + |ch(kept)|) agree)."""
    from bnilp.mec import dags_in_mec
    from bnilp.twins import expand_class

    table = _table(_with_twins(3, 5, [(0, 2), (1, 4)], N=80), "bic", 150)
    eps = math.log(150)
    pairs = twin_pairs(table, eps)
    listed = ilp.solve(reduce_twins(table, pairs), eps, enumerate_by="mecs")
    sizes = Counter()
    for net in listed.networks:
        sizes["counted"] += expand_class(net.parents, pairs).dags
        sizes["closed form"] += sum(expansions(g, pairs) for g in dags_in_mec(net.parents))
    assert sizes["counted"] == sizes["closed form"] > 0


def test_count_credible_refuses_what_class_enumeration_refuses():
    """A score that is not score-equivalent, an ε beyond the table's pruning, a negative ε and background knowledge
    are refused naming the parameter (the count would not be the credible set's), and so are a time limit or a
    switch that is no such thing."""
    from bnilp.errors import InputError

    table = _table(_with_twins(1, 5, [(0, 3)], N=80), "bic", 20)
    not_equivalent = ScoreTable(list(table.variables), table.families, {**table.meta, "score_equivalent": False})
    with pytest.raises(InputError, match="score-equivalent"):
        count_credible(not_equivalent, math.log(20))
    with pytest.raises(InputError, match="pruned for"):
        count_credible(table, math.log(1000))
    with pytest.raises(InputError, match="epsilon"):
        count_credible(table, -1.0)
    # the limits and switches are checked before any arithmetic on them (a review: "3" a TypeError, −1 taken)
    for setting, value in (("time_limit", "3"), ("time_limit", -1), ("posteriors", "no")):
        with pytest.raises(InputError, match=f"^{setting}"):
            count_credible(table, math.log(20), **{setting: value})
    with pytest.raises(InputError, match="^counted must be what count_credible returns"):
        class_groups(5)
    with_knowledge = ScoreTable(list(table.variables), table.families, {**table.meta, "knowledge": {"statements": []}})
    with pytest.raises(InputError, match="background knowledge"):
        count_credible(with_knowledge, math.log(20))


def test_a_time_limit_leaves_lower_bounds_marked_incomplete():
    """The time limit covers the listing of R's classes and their expansions: a limit that ends the listing leaves
    status time_limit, not complete, and counts no larger than the whole set's; expansion stops between classes
    once past the deadline (none expanded when it has passed, every class without one)."""
    import time

    from bnilp.twins import expand_classes

    table = _table(_with_twins(3, 5, [(0, 2), (1, 4)], N=80), "bic", 150)
    eps = math.log(150)
    whole = count_credible(table, eps)
    cut = count_credible(table, eps, time_limit=1e-6)
    assert (cut.complete, cut.status) == (False, "time_limit")
    assert cut.dags <= whole.dags and cut.classes <= whole.classes
    pairs = twin_pairs(table, eps)
    reps = [net.parents for net in ilp.solve(reduce_twins(table, pairs), eps, enumerate_by="mecs").networks]
    assert expand_classes(reps, pairs, deadline=time.perf_counter() - 1) == ([], "time_limit")
    done, short = expand_classes(reps, pairs)
    assert short is None and len(done) == len(reps)
    assert (sum(e.dags for e in done), sum(e.classes for e in done)) == (whole.dags, whole.classes)


def test_a_listing_cut_by_the_time_limit_still_counts_the_classes_it_listed(monkeypatch):
    """The listing of R's classes gets LISTING_SHARE of the time limit, so that the classes it listed before the limit
    cut it (OPT proven) are counted: lower bounds equal to expanding exactly those classes, status time_limit, not
    complete. (These small tables list at once, so the search's result is cut to its first classes here, and the time
    it was given is recorded.)"""
    import dataclasses

    import bnilp.twins as twins
    from bnilp.twins import expand_classes

    real, given = ilp.solve, []

    def cut_after_three(*args, **kwargs):
        given.append(kwargs["time_limit"])
        whole = real(*args, **kwargs)
        return dataclasses.replace(whole, networks=whole.networks[:3], status="time_limit", complete=False,
                                   message="time limit: listing stopped")

    table = _table(_with_twins(11, 7, [(0, 5), (2, 6)], N=120), "bic", 20)
    eps = math.log(20)
    pairs = twin_pairs(table, eps)
    first = [net.parents for net in real(reduce_twins(table, pairs), eps, enumerate_by="mecs").networks[:3]]
    monkeypatch.setattr(ilp, "solve", cut_after_three)
    cut = count_credible(table, eps, time_limit=100.0)
    assert 0 < given[0] <= 100.0 * twins.LISTING_SHARE
    expected, _ = expand_classes(first, pairs)
    assert (cut.complete, cut.status, cut.expanded, cut.reduced_classes) == (False, "time_limit", 3, 3)
    assert (cut.dags, cut.classes) == (sum(e.dags for e in expected), sum(e.classes for e in expected)) > (0, 0)
    # the listing's words are the merged table's: said so beside the full counts (a review)
    assert cut.message == ("in the table with twins merged: time limit: listing stopped: the 3 classes listed are "
                           "counted")


def test_a_listing_that_overruns_its_share_still_has_its_classes_counted(monkeypatch):
    """Where the listing runs past the whole time limit (solve's start-up on a limit of a fraction of a second), the
    counting still gets its share, (1 − LISTING_SHARE) of the limit, after it: the 4 classes listed whole are counted,
    complete (a review: exit 3 with none counted); and the classes listed but not expanded are not counted past the
    deadline either (a review: 8 s past a 1-s limit on 100,000 classes)."""
    import time

    import bnilp.twins as twins

    real = ilp.solve

    def slow_listing(*args, **kwargs):
        whole = real(*args, **kwargs)
        time.sleep(0.3)
        return whole

    table = _table(_with_twins(11, 7, [(0, 5), (2, 6)], N=120), "bic", 20)
    eps = math.log(20)
    whole = count_credible(table, eps)
    monkeypatch.setattr(ilp, "solve", slow_listing)
    cut = count_credible(table, eps, time_limit=0.2)
    assert (cut.complete, cut.dags, cut.classes) == (True, whole.dags, whole.classes)
    listed = [net.parents for net in real(reduce_twins(table, twin_pairs(table, eps)), eps,
                                          enumerate_by="mecs").networks]
    assert twins._listed_dags(listed, None) == sum(count_dags_in_mec(p) for p in listed) > 0
    assert twins._listed_dags(listed, time.perf_counter() - 1) == 0


def test_a_palim_the_walk_never_reached_is_no_palim(tmp_path):
    """A score file made with a palim that cut nothing (its sidecar: palim_reached false) is counted as the same file
    without it (a review: refused as "exact only for parent sets of up to 6"), and learn/solve's twins note names it."""
    from bnilp.cli import main
    from bnilp.scorefile import read_score_file
    from bnilp.twins import mergeable_pairs

    csv = tmp_path / "twins.csv"
    _with_twins(11, 7, [(0, 5), (2, 6)], N=120).to_csv(csv, index=False)
    out = tmp_path / "p6.scores"
    res = CliRunner().invoke(main, ["score", str(csv), "--bf", "20", "--palim", "6", "-o", str(out), "-q"],
                             catch_exceptions=False)
    assert res.exit_code == 0
    table = read_score_file(out)
    assert table.meta["palim"] == 6 and table.meta["palim_reached"] is False
    plain = _score_file(tmp_path, 20)
    assert (count_credible(table, math.log(20)).dags == count_credible(read_score_file(plain), math.log(20)).dags)
    assert mergeable_pairs(table, math.log(20)) != []
    # one the palim did cut is refused, by the command line in its own words (its file, not count_credible: a review)
    cut = tmp_path / "p1.scores"
    assert CliRunner().invoke(main, ["score", str(csv), "--bf", "20", "--palim", "1", "-o", str(cut), "-q"]
                              ).exit_code == 3
    res = CliRunner().invoke(main, ["count", str(cut), "--bf", "20"])
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1] == (
        f"bnilp: error: bnilp count counts whole classes: {cut} is exact only for parent sets of up to 1 (a palim), "
        "so a credible class can hold DAGs it lacks (learn and solve count the DAGs a table admits)")


def test_the_listing_reports_its_progress_to_the_callback():
    """count_credible(progress=f) hands f the search's progress while R's classes are listed (``bnilp count`` shows
    it on stderr): the last report is the listing's end, with the classes it found."""
    table = _table(_with_twins(11, 7, [(0, 5), (2, 6)], N=120), "bic", 20)
    seen: list[dict] = []
    counted = count_credible(table, math.log(20), progress=seen.append)
    assert seen and seen[-1]["phase"] == "done" and seen[-1]["networks"] == counted.reduced_classes


def test_a_class_past_the_expansion_caps_stops_the_count_with_count_limit(monkeypatch):
    """A class of R with more attachments to vary than MAX_VARIED_ATTACHMENTS is not expanded: the count stops there
    with status count_limit (a status of the list, exit 3), not complete, its message naming the cap; the classes
    before it stay counted."""
    import bnilp.twins as twins
    from bnilp.statuses import STATUSES

    table = _table(_with_twins(3, 5, [(0, 2), (1, 4)], N=80), "bic", 150)
    eps = math.log(150)
    monkeypatch.setattr(twins, "MAX_VARIED_ATTACHMENTS", 0)
    cut = count_credible(table, eps)
    assert (cut.complete, cut.status) == (False, "count_limit") and "count_limit" in STATUSES
    assert "MAX_VARIED_ATTACHMENTS" in cut.message and cut.expanded < cut.reduced_classes


def test_nothing_is_counted_where_the_optimum_is_not_proven(monkeypatch):
    """Where a limit stops phase 1, the one network left is the best found, which need not be credible: no count is
    given from it (zero, optimum None, the message says why), rather than a 'lower bound' that is not one. (Phase 1
    proves these small tables' OPT at once, so the search's result is given a gap here.)"""
    import dataclasses

    real = ilp.solve

    def unproven(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), gap=1.0, status="time_limit", complete=False)

    monkeypatch.setattr(ilp, "solve", unproven)
    table = _table(_with_twins(11, 7, [(0, 5), (2, 6)], N=120), "bic", 20)
    cut = count_credible(table, math.log(20))
    assert (cut.dags, cut.classes, cut.optimum, cut.complete, cut.status) == (0, 0, None, False, "time_limit")
    assert "OPT not proven" in cut.message


def _score_file(tmp_path, bf: float):
    """A score file (with its sidecar) of 7 columns, two of them copies: ``bnilp score`` on the CSV."""
    from bnilp.cli import main

    csv = tmp_path / "twins.csv"
    _with_twins(11, 7, [(0, 5), (2, 6)], N=120).to_csv(csv, index=False)
    out = tmp_path / "twins.scores"
    res = CliRunner().invoke(main, ["score", str(csv), "--bf", str(bf), "-o", str(out), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def test_bnilp_count_prints_and_writes_what_count_credible_counts(tmp_path):
    """``bnilp count FILE --bf B --json OUT``: exit 0, the JSON's counts, twins and reduced table are
    count_credible's on the file, and the console line says them; with a time limit that ends the listing, exit 3,
    ``complete`` false and status time_limit in the JSON."""
    from bnilp.cli import main
    from bnilp.scorefile import read_score_file

    path = _score_file(tmp_path, 20)
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "20", "--json", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    counted = count_credible(read_score_file(path), math.log(20))
    assert (report["n_dags"], report["n_mecs"], report["complete"], report["status"]) == (
        counted.dags, counted.classes, True, "optimal")
    assert report["twins"] == [{"kept": p.kept, "merged": p.dropped} for p in counted.pairs] != []
    assert report["reduced"] == {"variables": 5, "n_dags": counted.reduced_dags, "n_mecs": counted.reduced_classes,
                                 "n_mecs_counted": counted.reduced_classes}
    assert report["bf"] == 20 and report["optimum"] == pytest.approx(counted.optimum)
    assert report["prior"] == "dags"
    assert {(e["from"], e["to"]): e["posterior"] for e in report["edges"]} == pytest.approx(
        {arrow: p for arrow, p in counted.arrows.items() if p > 0})
    for pair in report["adjacency"]:
        u, v = pair["u"], pair["v"]
        either = counted.arrows.get((u, v), 0) + counted.arrows.get((v, u), 0)
        assert pair["posterior"] == pytest.approx(min(1.0, either))
    assert f"credible DAGs {counted.dags:,}  classes {counted.classes:,}" in res.output
    assert f"merged table they contract to (top {min(20, counted.reduced_classes)} of {counted.reduced_classes})" \
        in res.output
    want = class_groups(counted)
    assert len(report["groups"]) == len(want) == counted.reduced_classes
    for got, expected in zip(report["groups"], want, strict=True):
        assert {k: v for k, v in got.items() if k not in ("cpdag", "score", "ln_bf", "posterior")} == {
            k: v for k, v in expected.items() if k not in ("score", "ln_bf", "posterior")}
        for k in ("score", "ln_bf", "posterior"):
            assert got[k] == pytest.approx(expected[k], rel=1e-12, abs=1e-12), k
    assert sum(g["n_mecs"] for g in report["groups"]) == counted.classes
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "20", "--time-limit", "1e-6", "--json", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 3
    report = json.loads(out.read_text())
    assert (report["complete"], report["status"]) == (False, "time_limit")
    assert "≥" in res.output
    assert report["groups"] == [] and "0 of the" in report["message"]      # cut before the first class expanded
    quiet = CliRunner().invoke(main, ["count", str(path), "--bf", "20", "--time-limit", "1e-6", "-q"])
    # -q: nothing but why it exits 3, as solve and learn say it (it exited 3 silently; a review)
    assert quiet.exit_code == 3 and quiet.output.splitlines() == [f"bnilp: incomplete: {report['message']}"]


def _slow_expansions(monkeypatch) -> None:
    """Each class of the merged table takes 0.2 s more to expand, so that a time limit of a few seconds falls while the
    classes are counted (after the listing, which these small tables finish at once)."""
    import time

    import bnilp.twins

    expand = bnilp.twins.expand_class

    def slow_expand(*args, **kwargs):
        time.sleep(0.2)
        return expand(*args, **kwargs)

    monkeypatch.setattr(bnilp.twins, "expand_class", slow_expand)


def test_a_count_cut_between_classes_gives_the_groups_it_counted(tmp_path, monkeypatch):
    """A time limit that falls while the merged table's classes are expanded: exit 3, the JSON's groups are the
    classes counted (as many as ``n_mecs_counted``, adding up to the counts given), and the console's table says the
    set is NOT complete."""
    from bnilp.cli import main

    path = _score_file(tmp_path, 150)
    _slow_expansions(monkeypatch)
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--time-limit", "2", "--json", str(out)],
                             catch_exceptions=False)
    report = json.loads(out.read_text())
    assert res.exit_code == 3 and (report["complete"], report["status"]) == (False, "time_limit")
    assert 0 < len(report["groups"]) == report["reduced"]["n_mecs_counted"] < report["reduced"]["n_mecs"]
    assert sum(g["n_mecs"] for g in report["groups"]) == report["n_mecs"]
    assert sum(g["n_dags"] for g in report["groups"]) == report["n_dags"]
    assert "NOT complete" in res.output


@pytest.mark.parametrize("prior", ["dags", "mecs"])
def test_bnilp_count_gives_the_edge_posteriors_solve_gives_by_listing_every_class(tmp_path, prior):
    """``bnilp count --prior P --json`` and ``bnilp solve --enumerate mecs --prior P --json`` on one score file with
    mergeable twins: the same arrows, adjacencies and undirected-in-the-CPDAG posteriors, the one counted
    from the merged table, the other averaged over every class listed."""
    from bnilp.cli import main

    path = _score_file(tmp_path, 150)
    counted, listed = tmp_path / "count.json", tmp_path / "solve.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--prior", prior, "--json", str(counted)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["solve", str(path), "--bf", "150", "--enumerate", "mecs", "--prior", prior,
                                    "--json", str(listed), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    got, want = json.loads(counted.read_text()), json.loads(listed.read_text())
    assert got["prior"] == prior and len(got["twins"]) >= 1 and got["n_mecs"] == want["n_mecs"]
    edges = {(e["from"], e["to"]): e["posterior"] for e in got["edges"]}
    assert edges == pytest.approx({(e["from"], e["to"]): e["posterior"] for e in want["edges"]}, abs=1e-12)
    for field in ("posterior", "undirected_posterior"):
        assert {(e["u"], e["v"]): e[field] for e in got["adjacency"]} == pytest.approx(
            {(e["u"], e["v"]): e[field] for e in want["adjacency"]}, abs=1e-12), field
    assert any(0 < e["undirected_posterior"] < 1 for e in got["adjacency"])
    # the class table by groups: solve's classes, grouped by the class their DAGs contract to (the oracle's map)
    pairs = [(t["kept"], t["merged"]) for t in got["twins"]]
    listed: dict[tuple, list[dict]] = {}
    for m in want["mecs"]:
        parents = {v: frozenset(ps) for v, ps in want["networks"][m["members"][0]]["parents"].items()}
        listed.setdefault(markov_class(contract_twins(parents, pairs)), []).append(m)
    assert len(got["groups"]) == len(listed) == got["reduced"]["n_mecs"]
    for group in got["groups"]:
        members = listed[cpdag_class(map(tuple, group["cpdag"]["directed"]), group["cpdag"]["undirected"])]
        assert (group["n_mecs"], group["n_dags"]) == (len(members), sum(m["n_dags"] for m in members))
        assert group["class_sizes"] == sorted(map(list, Counter(m["class_size"] for m in members).items()))
        assert group["posterior"] == pytest.approx(math.fsum(m["posterior"] for m in members), abs=1e-12)
        assert group["score"] == pytest.approx(members[0]["score"], abs=1e-9)
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--prior", prior], catch_exceptions=False)
    assert res.exit_code == 0 and f"posterior ({prior})" in res.output     # the console's table weighs by it too
    assert probability_text(got["groups"][0]["posterior"]) in res.output     # as learn's class table shows it


def test_bnilp_count_report_writes_the_class_table_edges_and_pictures(tmp_path, monkeypatch):
    """``bnilp count FILE --report DIR``: edges.csv holds the JSON's edge posteriors, groups.csv its groups (one row
    each, their classes and DAGs and smallest and largest class), count.json the JSON itself, with averaged.dot and
    the two pictures; a count cut short marks every row of both tables ``incomplete``; a --json inside the report's
    files is refused before the work, in one line, nothing written."""

    import pandas as pd

    from bnilp.cli import main
    from bnilp.report import COUNT_REPORT_FILES

    path = _score_file(tmp_path, 150)
    folder, out = tmp_path / "report", tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--report", str(folder), "--json", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in folder.iterdir()) == sorted(COUNT_REPORT_FILES)
    report = json.loads(out.read_text())
    assert json.loads((folder / "count.json").read_text()) == report
    groups = pd.read_csv(folder / "groups.csv")
    assert list(groups["n_mecs"]) == [g["n_mecs"] for g in report["groups"]] and groups["n_mecs"].sum() == \
        report["n_mecs"]
    assert list(groups["smallest_class"]) == [g["class_sizes"][0][0] for g in report["groups"]]
    assert list(groups["largest_class"]) == [g["class_sizes"][-1][0] for g in report["groups"]]
    edges = pd.read_csv(folder / "edges.csv")
    assert {(u, v): p for u, v, p in zip(edges["from"], edges["to"], edges["directed_posterior"], strict=True)
            if p > 0} == pytest.approx({(e["from"], e["to"]): e["posterior"] for e in report["edges"]})
    assert "incomplete" not in groups and "incomplete" not in edges
    _slow_expansions(monkeypatch)
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--time-limit", "2", "--report", str(folder)],
                             catch_exceptions=False)
    assert res.exit_code == 3
    groups, edges = pd.read_csv(folder / "groups.csv"), pd.read_csv(folder / "edges.csv")
    assert len(groups) > 0 and set(groups["incomplete"]) == {"time_limit"} == set(edges["incomplete"])
    fresh = tmp_path / "fresh"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--report", str(fresh), "--json",
                                    str(fresh / "count.json")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and not fresh.exists()


def test_bnilp_count_writes_its_json_and_report_together_or_neither(tmp_path, monkeypatch):
    """A report that fails half-way (its last picture) leaves no report folder and no --json file: the two are one
    result (a review: the JSON stayed without the report); write_count_report refuses a JSON without its variables
    (a count's JSON from before they were written) in one line naming count_json."""
    import bnilp.report
    from bnilp.cli import main
    from bnilp.errors import InputError, OutputError

    path = _score_file(tmp_path, 20)

    def fail(*args, **kwargs):
        raise OutputError("no space left (simulated)")

    monkeypatch.setattr(bnilp.report, "plot_averaged", fail)
    folder, out = tmp_path / "report", tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "20", "--report", str(folder), "--json", str(out)])
    assert res.exit_code == 2 and "no space left" in res.output and "Traceback" not in res.output
    assert not out.exists() and not folder.exists()
    with pytest.raises(InputError, match="count_json"):
        bnilp.report.write_count_report(tmp_path / "old", {"n_dags": 1, "edges": []})


def test_a_report_folder_holds_one_runs_report(tmp_path):
    """A folder reused by ``count --report`` after ``learn --report`` (or the reverse) kept the other run's files
    beside the new ones, nothing saying which run each came from (a review: networks.json and mecs.csv of BF 20
    beside count.json of BF 3): the files a report does not write are removed once it is in place, a file of the
    user's own in the folder stays, and an input among those files is refused before the work."""
    from bnilp.cli import main
    from bnilp.report import COUNT_REPORT_FILES, REPORT_FILES

    path = _score_file(tmp_path, 150)
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    solve, count = ["solve", str(path), "--bf", "20"], ["count", str(path), "--bf", "20"]
    runs = [(solve, REPORT_FILES), (count, COUNT_REPORT_FILES), (solve, REPORT_FILES)]
    for args, files in runs:
        res = CliRunner().invoke(main, [*args, "-q", "--report", str(folder)], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert sorted(p.name for p in folder.iterdir()) == sorted({*files, "notes.txt"})
    data = folder / "groups.csv"            # learn's data, a name count's report writes: learn's report removes it
    _with_twins(11, 7, [(0, 5)], N=60).to_csv(data, index=False)
    res = CliRunner().invoke(main, ["learn", str(data), "-q", "--report", str(folder)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "groups.csv is DATA" in res.output and data.exists()
    scores = folder / "count"               # an output of the same run, written before the report: its sidecar
    data = data.rename(tmp_path / "data.csv")
    res = CliRunner().invoke(main, ["learn", str(data), "-q", "--scores", str(scores), "--report", str(folder)])
    assert res.exit_code == 2 and "count.json is --scores's sidecar" in res.output, res.output
    assert not scores.exists()


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_bnilp_count_says_a_signal_that_came_after_its_listing(tmp_path, monkeypatch, signum):
    """A Ctrl-C or SIGTERM once the listing had nothing left to stop (its classes being ranked): ``count`` wrote its
    whole result and exited 0 with nothing of the signal, where ``solve`` says it (a review). Now the message, the
    JSON's and the stderr line say it; the counts are the same as without it."""
    import os
    import signal

    from bnilp.cli import main
    from bnilp.ilp import classbest

    monkeypatch.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
    monkeypatch.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
    path = _score_file(tmp_path, 150)
    quiet = tmp_path / "quiet.json"
    assert CliRunner().invoke(main, ["count", str(path), "--bf", "150", "-q", "--json", str(quiet)]).exit_code == 0
    ranked = classbest.BestPerClass.ranked
    sent = []

    def ranked_under_a_signal(self):
        sent.append(os.getpid())
        os.kill(os.getpid(), getattr(signal, signum))
        return ranked(self)

    monkeypatch.setattr(classbest.BestPerClass, "ranked", ranked_under_a_signal)
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "-q", "--json", str(out)])
    assert sent and res.exit_code == 0, res.output
    assert "a SIGINT/SIGTERM came after the search had ended: the result written is whole" in res.output
    got, before = json.loads(out.read_text()), json.loads(quiet.read_text())
    assert got["complete"] and "SIGINT/SIGTERM came after the search" in got["message"] and not before["message"]
    assert (got["n_dags"], got["n_mecs"]) == (before["n_dags"], before["n_mecs"])


def test_a_signal_after_the_listing_is_still_said_when_the_counting_then_meets_its_time_limit(tmp_path, monkeypatch):
    """The signal's note was replaced by the time limit's when the counting, after a listing a signal came too late to
    stop, ran out of time: the JSON said only the limit (a session's note). Both are said now; the exit is 3."""
    import os
    import signal

    import bnilp.twins
    from bnilp.cli import main
    from bnilp.ilp import classbest

    monkeypatch.setattr("bnilp.ilp.settings.FOREST_ENUMERATION", False)
    monkeypatch.setattr("bnilp.ilp.settings.BRANCHING_ENUMERATION", False)
    path = _score_file(tmp_path, 150)
    ranked, expand = classbest.BestPerClass.ranked, bnilp.twins.expand_classes

    def ranked_under_a_signal(self):
        os.kill(os.getpid(), signal.SIGTERM)
        return ranked(self)

    def expand_past_the_deadline(representatives, pairs, deadline=None, *args, **kwargs):
        return expand(representatives, pairs, 0.0, *args, **kwargs)       # the deadline already passed

    monkeypatch.setattr(classbest.BestPerClass, "ranked", ranked_under_a_signal)
    monkeypatch.setattr(bnilp.twins, "expand_classes", expand_past_the_deadline)
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "-q", "--time-limit", "60", "--json", str(out)])
    assert res.exit_code == 3, res.output
    got = json.loads(out.read_text())
    assert not got["complete"] and got["status"] == "time_limit"
    assert "time limit" in got["message"] and "SIGINT/SIGTERM came after the search" in got["message"]


@pytest.mark.parametrize(("args", "message"), [
    (["--bf", "0.5"], "--bf must be"), (["--bf", "150"], "pruned for"), (["--time-limit", "0"], "--time-limit"),
    (["--max-networks", "0"], "--max-networks"), (["--bf", "3", "--epsilon", "1"], "not both"),
    (["--jobs", "0"], "--jobs"),
])
def test_bnilp_count_refuses_bad_options_in_one_line_and_writes_nothing(tmp_path, args, message):
    from bnilp.cli import main

    path = _score_file(tmp_path, 20)
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(path), *args, "--json", str(out)])
    assert res.exit_code == 2
    assert message in res.output and len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.slow
def test_the_counts_are_the_same_when_the_reduced_table_is_listed_on_two_processes(monkeypatch, tmp_path):
    """count_credible(jobs=2) lists R's classes in cubes on two worker processes (forced here on a small table: no
    programme, no serial start) and counts what one process counts; ``bnilp count --jobs 2`` writes the same JSON
    counts as without it."""
    from bnilp.cli import main
    from bnilp.scorefile import read_score_file

    path = _score_file(tmp_path, 150)
    table, eps = read_score_file(path), math.log(150)
    one = count_credible(table, eps)
    for name, value in (("DP_MAX_VARIABLES", 0), ("PHASE2_SERIAL_SECONDS", 0.0), ("PHASE2_CUBES_MIN_SECONDS", 0.0)):
        monkeypatch.setattr(ilp.settings, name, value)
    real, methods = ilp.solve, []

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        methods.append(result.stats["phase2"].get("method"))
        return result

    monkeypatch.setattr(ilp, "solve", spy)
    two = count_credible(table, eps, jobs=2)
    assert methods == ["branch-and-cut in cubes"] and one.reduced_classes > 50
    assert (two.dags, two.classes, two.reduced_classes, two.complete) == (one.dags, one.classes,
                                                                          one.reduced_classes, True)
    assert two.arrows == pytest.approx(one.arrows)
    outs = [tmp_path / f"count{jobs}.json" for jobs in (1, 2)]
    for jobs, out in zip((1, 2), outs, strict=True):
        res = CliRunner().invoke(main, ["count", str(path), "--bf", "150", "--jobs", str(jobs), "--json", str(out)],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
    first, second = (json.loads(out.read_text()) for out in outs)
    assert {k: v for k, v in first.items() if k != "seconds"} == {k: v for k, v in second.items() if k != "seconds"}


@pytest.mark.parametrize(("seed", "twins", "bf"), [(11, [(0, 5), (2, 6)], 20), (13, [(0, 3), (4, 6)], 150)])
def test_both_ways_of_counting_distinct_collider_sets_agree(monkeypatch, seed, twins, bf):
    """expand_class compares the triple sets' D(α) pairwise on small tables and sorts (α, D) rows past
    PAIRWISE_ENTRIES: the same classes either way — and as the classes grouped one by one for the posteriors, whose
    attachment rows taken one at a time (SHARE_ENTRIES) give the same posteriors."""
    import bnilp.twins as tw

    table = _table(_with_twins(seed, 7, twins, N=120), "bic", bf)
    eps = math.log(bf)
    pairwise = count_credible(table, eps, posteriors=False)
    grouped = count_credible(table, eps)
    monkeypatch.setattr(tw, "PAIRWISE_ENTRIES", 0)
    sorted_rows = count_credible(table, eps, posteriors=False)
    assert (sorted_rows.dags, sorted_rows.classes) == (pairwise.dags, pairwise.classes) == (grouped.dags,
                                                                                            grouped.classes)
    assert pairwise.classes > pairwise.reduced_classes
    monkeypatch.setattr(tw, "SHARE_ENTRIES", 1)
    row_by_row = count_credible(table, eps)
    for prior in ("dags", "mecs"):
        for got, want in zip(row_by_row.posteriors[prior], grouped.posteriors[prior], strict=True):
            assert got == pytest.approx(want, abs=1e-12)


def test_bnilp_count_refuses_a_score_file_that_is_not_score_equivalent(tmp_path):
    """An MVP score file (Markov equivalent DAGs score apart, so a class is no unit of the credible set): one line
    naming bnilp count and the score, exit 2, no JSON."""
    import numpy as np
    import pandas as pd

    from bnilp.cli import main

    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = x + rng.normal(size=200)
    csv = tmp_path / "mixed.csv"
    pd.DataFrame({"x": x, "y": y, "z": (y > 0).astype(int)}).to_csv(csv, index=False)
    scores = tmp_path / "mixed.scores"
    res = CliRunner().invoke(main, ["score", str(csv), "--score", "mvp", "--bf", "20", "-o", str(scores), "-q"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "count.json"
    res = CliRunner().invoke(main, ["count", str(scores), "--bf", "20", "--json", str(out)])
    assert res.exit_code == 2 and not out.exists()
    assert "bnilp count counts equivalence classes" in res.output and "mvp is not" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_a_class_the_table_does_not_hold_whole_is_a_loud_error_and_a_palim_is_refused():
    """Counting expands whole classes, so every DAG of a credible class must be in the table (sound pruning keeps
    them): with one member's parent set deleted the count raises UnsoundTableError naming the class, as the class
    listing does; a table cut by a palim is refused up front (learn/solve count what such a table admits)."""
    from bnilp.errors import InputError, UnsoundTableError
    from bnilp.mec import dags_in_mec

    table = _table(_with_twins(11, 7, [(0, 5), (2, 6)], N=120), "bic", 20)
    eps = math.log(20)
    pairs = twin_pairs(table, eps)
    dropped = {p.dropped for p in pairs}
    listed = ilp.solve(reduce_twins(table, pairs), eps, enumerate_by="mecs").networks
    rep = next(net.parents for net in listed if count_dags_in_mec(net.parents) > 1)
    other = next(g for g in dags_in_mec(rep) if g != rep)
    child = next(v for v in other if other[v] != rep[v] and v not in {p.kept for p in pairs})
    families = {c: dict(f) for c, f in table.families.items()}
    del families[child][other[child]]
    assert not other[child] & dropped
    with pytest.raises(UnsoundTableError, match="class .* of the merged table"):
        count_credible(ScoreTable(list(table.variables), families, dict(table.meta)), eps)
    with pytest.raises(InputError, match="palim"):
        count_credible(ScoreTable(list(table.variables), table.families,
                                  {**table.meta, "palim": 1, "palim_reached": True}), eps)


def test_a_table_scored_under_knowledge_whose_sidecar_is_gone_is_refused_naming_the_file_and_the_likely_cause(
        tmp_path):
    """A table scored with a forbidden arrow, its sidecar removed: no twin pair merges, yet the refusal said "class 1
    of the merged table … unsound pruning" and named no file (a review). It names the file, says no merge, and
    gives background knowledge as a likely cause and ``solve --enumerate mecs`` as what counts such a table."""
    from bnilp.data import default_path, load_data
    from bnilp.knowledge import Knowledge
    from bnilp.parentsets import score_parent_sets
    from bnilp.scorefile import write_jaakkola
    from bnilp.scores import make_score

    table = score_parent_sets(make_score("bic", load_data(default_path("asia.csv"))), epsilon=math.log(20),
                              knowledge=Knowledge(forbidden=[("smoke", "lung")]))
    path = tmp_path / "k.scores"
    write_jaakkola(table, path, sidecar=False)
    res = CliRunner().invoke(main, ["count", str(path), "--bf", "20", "-q"])
    assert res.exit_code == 2 and f"bnilp: error: {path}: class " in res.output, res.output
    assert "merged" not in res.output and "background knowledge" in res.output
    assert "solve --enumerate mecs" in res.output


def test_solve_and_learn_say_that_bnilp_count_counts_a_set_with_mergeable_twins(tmp_path):
    """Where twin pairs merge exactly (what count_credible would merge), ``bnilp solve`` and ``bnilp learn`` say so
    with their result (before the report), with the ``bnilp count`` command that counts the set (the JSON's
    ``twins_note``); not with --optimum-only (nothing is listed), not under background knowledge (count refuses it),
    not where no pair merges, and not where the search fails (its error stays the one line: a table of mirrored
    twins that admits no DAG). mergeable_pairs is twin_pairs where count_credible accepts the table, none
    elsewhere."""
    from bnilp.cli import main
    from bnilp.scorefile import read_score_file
    from bnilp.twins import mergeable_pairs

    path = _score_file(tmp_path, 20)
    table, eps = read_score_file(path), math.log(20)
    pairs = twin_pairs(table, eps)
    assert mergeable_pairs(table, eps) == pairs != []
    merged = ", ".join(f"{p.dropped} into {p.kept}" for p in pairs)
    out = tmp_path / "solve.json"
    res = CliRunner().invoke(main, ["solve", str(path), "--bf", "20", "--json", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    note = json.loads(out.read_text())["twins_note"]
    assert f"({merged}; bnilp.twins)" in note and f"`bnilp count {path} --bf 20`" in note
    assert "note: identical columns merge exactly" in res.output
    assert res.output.index("note: identical columns") < res.output.index("OPT (best score)")
    res = CliRunner().invoke(main, ["learn", str(tmp_path / "twins.csv"), "--bf", "20", "--json", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0 and "(save it with --scores FILE)" in json.loads(out.read_text())["twins_note"]
    saved = tmp_path / "saved.scores"
    res = CliRunner().invoke(main, ["learn", str(tmp_path / "twins.csv"), "--bf", "20", "--scores", str(saved),
                                    "--json", str(out)], catch_exceptions=False)
    assert res.exit_code == 0 and f"`bnilp count {saved} --bf 20`" in json.loads(out.read_text())["twins_note"]
    spaced = tmp_path / "my twins.scores"      # the command it names runs as written (a review: the path unquoted)
    res = CliRunner().invoke(main, ["learn", str(tmp_path / "twins.csv"), "--bf", "20", "--scores", str(spaced),
                                    "--json", str(out)], catch_exceptions=False)
    assert res.exit_code == 0 and f"`bnilp count '{spaced}' --bf 20`" in json.loads(out.read_text())["twins_note"]
    res = CliRunner().invoke(main, ["solve", str(path), "--bf", "20", "--prior", "mecs", "--json", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0 and f"`bnilp count {path} --bf 20 --prior mecs`" in json.loads(out.read_text())[
        "twins_note"]
    for args in (["--optimum-only"], ["--bf", "20", "--forbid", f"{pairs[0].kept}->{pairs[0].dropped}"]):
        res = CliRunner().invoke(main, ["solve", str(path), *args, "--json", str(out)], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert "twins_note" not in json.loads(out.read_text()) and "identical columns merge" not in res.output
    with_palim = ScoreTable(list(table.variables), table.families, {**table.meta, "palim": 1, "palim_reached": True})
    assert mergeable_pairs(with_palim, eps) == [] and mergeable_pairs(table, eps, knowledge=object()) == []
    not_equivalent = ScoreTable(list(table.variables), table.families,
                                {**table.meta, "score": "mvp", "score_equivalent": False})
    assert mergeable_pairs(not_equivalent, eps) == []
    single = _table(_with_twins(3, 5, [], N=80), "bic", 20)
    assert mergeable_pairs(single, eps) == []
    cyclic = tmp_path / "cyc.scores"
    cyclic.write_text("2\nA 1\n-1.0 1 B\nB 1\n-1.0 1 A\n")
    assert mergeable_pairs(read_score_file(cyclic), 0.0) != []
    res = CliRunner().invoke(main, ["solve", str(cyclic)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "admits no DAG" in res.output


def test_count_credible_checks_the_score_equivalence_it_assumes():
    """A table that records nothing of its score is assumed score-equivalent, as class enumeration assumes it — and
    checked as class enumeration checks it (a covered-edge reversal of a listed representative that moves the
    score): ``count_credible`` skipped the check (a review: an MVP file without a sidecar counted 28 DAGs in 7
    classes, exit 0, where 7 DAGs are credible). MML here; the same table scored by BIC is counted."""
    from bnilp.data import from_dataframe
    from bnilp.errors import InputError
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(11, n=5, N=400)
    data = from_dataframe(frame, discrete=list(frame.columns))

    def bare(score: str) -> ScoreTable:             # no meta: equivalence unknown, assumed
        table = score_parent_sets(make_score(score, data), epsilon=math.log(150))
        return ScoreTable(list(table.variables), table.families)

    with pytest.raises(InputError, match=r"^count_credible \(bnilp count\) needs a score-equivalent table, and this "
                                         r"one is not: reversing the covered edge"):
        count_credible(bare("mml"), math.log(150))
    assert count_credible(bare("bic"), math.log(150)).complete


def test_a_rounded_table_whose_classes_straddle_the_line_is_refused_not_miscounted() -> None:
    """A hub with four children and a recoded copy of it (a twin), BIC scores rounded to 6 decimals and no record
    vouching score equivalence: the merged table's credible class holds DAGs at OPT and at OPT − 1e-6, below the
    line at BF 1 (the tie tolerance is 9.5e-7), and the classes built of those below it were counted — 36 classes
    and 320 DAGs where class enumeration finds 24 and a DAG-by-DAG count 144 in 24 classes (a review). The count
    refuses, naming DAG enumeration; the exact table (its sidecar's record) still counts as class enumeration does."""
    import numpy as np

    from bnilp.data import from_dataframe
    from bnilp.errors import InputError
    from bnilp.parentsets import score_parent_sets
    from bnilp.pipeline import solve_table
    from bnilp.scores import make_score

    rng = np.random.default_rng(8)
    h = rng.integers(0, 3, 300)
    cols = [h]
    for i in range(4):
        x = np.where(rng.random(300) < 0.6, h % 2, rng.integers(0, 2, 300))
        if i and rng.random() < 0.7:
            x = np.where(rng.random(300) < 0.3, cols[-1] % 2, x)
        cols.append(x)
    cols.append((h + 1) % 3)
    data = from_dataframe(pd.DataFrame(np.stack(cols, 1), columns=list("habcdt")), discrete="all")
    exact = score_parent_sets(make_score("bic", data), epsilon=math.log(20))
    rounded = ScoreTable(list(exact.variables), {v: {ps: round(s, 6) for ps, s in fam.items()}
                                                 for v, fam in exact.families.items()})
    assert twin_pairs(rounded, 0.0)
    with pytest.raises(InputError, match=r"^count_credible \(bnilp count\): a class of the merged table straddles "
                                         r"the credible line .*bnilp solve --enumerate dags\)$"):
        count_credible(rounded, 0.0)
    by_dags = solve_table(rounded, epsilon=0.0, enumerate_by="dags").report
    assert (by_dags["n_networks"], by_dags["n_mecs"]) == (144, 24)
    counted, classes = count_credible(exact, 0.0), solve_table(exact, epsilon=0.0, enumerate_by="mecs").report
    assert (counted.dags, counted.classes) == (classes["n_networks"], classes["n_mecs"])


def test_a_table_that_admits_no_dag_is_bad_input_to_the_count_as_to_the_search(tmp_path) -> None:
    """Two (or three) variables each needing the other as a parent: ``solve`` says the table admits no DAG (exit
    2), while ``count`` wrote a JSON of 0 DAGs, status ``infeasible``, exit 3 — "OPT not proven" (a review). The
    count raises the search's ``NoDagError``; the command says it in one line naming the file, nothing written."""
    from bnilp.errors import NoDagError
    from bnilp.scorefile import read_jaakkola

    for text in ("2\na 1\n-1 1 b\nb 1\n-1 1 a\n", "3\na 1\n-1 1 b\nb 1\n-1 1 c\nc 1\n-1 1 a\n"):
        path, out = tmp_path / "cycle.jkl", tmp_path / "o.json"
        path.write_text(text)
        with pytest.raises(NoDagError, match=r"^table: the score table admits no DAG"):
            count_credible(read_jaakkola(str(path)), 0.0)
        res = CliRunner().invoke(main, ["count", str(path), "--json", str(out)])
        assert res.exit_code == 2 and not out.exists()
        assert res.output == f"bnilp: error: {path}: the score table admits no DAG (some variable lacks the empty " \
                             "parent set and every choice of the candidate parent sets makes a cycle)\n"


@pytest.mark.parametrize("epsilon", [math.nan, -20.0, "1", None])
def test_twin_pairs_refuses_an_epsilon_it_cannot_compare(epsilon) -> None:
    """At ε = 10 the two variables below are no twins (their margin is 9), yet at NaN — every comparison with the
    margin false — and at −20 ``twin_pairs`` and ``mergeable_pairs`` merged them, and a string or None was a
    TypeError (a review): an InputError naming ``epsilon``, as ``count_credible`` gives."""
    from bnilp.errors import InputError
    from bnilp.twins import mergeable_pairs

    table = ScoreTable(["a", "b"], {"a": {frozenset("b"): -1.0, frozenset(): -10.0},
                                    "b": {frozenset("a"): -1.0, frozenset(): -10.0}})
    assert twin_pairs(table, 10.0) == [] and twin_pairs(table, 1.0)
    for call in (twin_pairs, mergeable_pairs):
        with pytest.raises(InputError, match=r"^epsilon"):
            call(table, epsilon)
    with pytest.raises(InputError, match=r"^table must be a ScoreTable"):
        twin_pairs({"a": {}}, 1.0)
