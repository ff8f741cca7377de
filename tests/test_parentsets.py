"""Pruning soundness by brute force: no parent set used by a credible DAG is ever pruned.

For random data on 4–5 variables (several seeds, N from 30 to 5000, BIC and BDeu,
ε ∈ {0, ln 3, ln 20, ln 150}): score every parent set, enumerate every DAG, take the credible set
s(G) ≥ OPT − ε, and check that each parent set a credible DAG uses survived — with each rule alone
and with all rules together. Every rule must also fire somewhere.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from bnilp.data import from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.parentsets import ALL_RULES, score_parent_sets, walk_child
from bnilp.scorefile import ScoreTable
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame, slow_after
from tests.oracles import brute_force_credible

EPSILONS = [0.0, math.log(3), math.log(20), math.log(150)]
CASES = [(seed, n, N) for seed, (n, N) in enumerate([(4, 30), (5, 30), (4, 200), (5, 500), (4, 5000), (5, 5000)])]


def full_table(score) -> ScoreTable:
    names = score.data.names
    families = {}
    for child in range(score.data.n):
        others = [j for j in range(score.data.n) if j != child]
        families[names[child]] = {
            frozenset(names[p] for p in ps): score.local(child, ps)
            for k in range(len(others) + 1) for ps in itertools.combinations(others, k)
        }
    return ScoreTable(list(names), families)


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,n,N", slow_after(CASES, 4))
def test_every_credible_parent_set_survives(score_name: str, seed: int, n: int, N: int) -> None:
    frame = random_discrete_frame(100 + seed, n=n, N=N)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score(score_name, data)
    table = full_table(score)
    sound = set().union(*(score.pruning_rules(i) for i in range(n)))
    for eps in EPSILONS:
        _, credible = brute_force_credible(table, eps)
        used = {(v, ps) for _, parents in credible for v, ps in parents.items()}
        for rules in [*({r} for r in sorted(sound)), sound]:
            pruned = score_parent_sets(score, epsilon=eps, rules=rules)
            for v, ps in used:
                assert ps in pruned.families[v], (score_name, eps, sorted(rules), v, sorted(ps))
            for v in table.variables:
                for ps, s in pruned.families[v].items():
                    assert s == table.families[v][ps]


def test_a_one_state_column_keeps_every_credible_parent_set() -> None:
    """R3 bounds every proper superset by q_Π″ ≥ 2·q_Π; a one-state column (CGd's binned view of a continuous
    column whose equal-frequency bins collapse into one: 199 zeros and a 1) leaves q and the score unchanged, so
    a set with it ties with the set without it and is credible whenever that one is. R3 pruned it."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 200)
    c = np.zeros(200)
    c[-1] = 1.0
    data = from_dataframe(pd.DataFrame({"a": a, "b": a.copy(), "c": c}), discrete=["a", "b"], continuous=["c"])
    view = make_score("cgd", data).discrete_child_score()
    assert view.data.arities[2] == 1 and "R3" not in view.pruning_rules(0)
    table = full_table(view)
    for eps in (0.0, math.log(3)):
        _, credible = brute_force_credible(table, eps)
        pruned = score_parent_sets(view, epsilon=eps)
        for v, ps in {(v, ps) for _, parents in credible for v, ps in parents.items() if v != "c"}:
            assert ps in pruned.families[v], (eps, v, sorted(ps))


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed,N", [(0, 30), (1, 200)])
def test_declared_states_never_observed_count_in_r_and_pruning_stays_sound(tmp_path, score_name, seed, N) -> None:
    """A ``.dat`` arity line may declare states the data never shows: they count in r (as GOBNILP's scores
    count them), so the scores equal the counting oracle's with the declared arities, and every rule alone and
    together still keeps every parent set a credible DAG uses (brute force over all DAGs)."""
    from tests.oracles import family_counts

    frame = random_discrete_frame(300 + seed, n=4, N=N)
    observed = [int(frame[c].nunique()) for c in frame.columns]
    declared = [r + (1 if j % 2 == 0 else 0) for j, r in enumerate(observed)]    # V0 and V2 hold one state unseen
    codes = frame.apply(lambda col: col.astype("category").cat.codes)
    path = tmp_path / "d.dat"
    path.write_text(" ".join(frame.columns) + "\n" + " ".join(map(str, declared)) + "\n"
                    + "\n".join(" ".join(map(str, row)) for row in codes.itertuples(index=False)) + "\n")
    data = load_data(path)
    assert data.arities == declared and sum(" states declared in the arity line" in note for note in data.notes) == 2
    score = make_score(score_name, data)
    table = full_table(score)
    for v, family in table.families.items():
        child = data.index(v)
        for ps, s in family.items():
            cell = family_counts(data.codes, declared, child, tuple(sorted(data.index(p) for p in ps)))
            want = (cell["ll"] - 0.5 * math.log(N) * cell["q"] * (declared[child] - 1) if score_name == "bic"
                    else cell["bdeu"])        # BIC: LL − ½ ln N · q·(r − 1), r and q the declared arities
            assert s == pytest.approx(want, abs=1e-9)
    sound = set().union(*(score.pruning_rules(i) for i in range(data.n)))
    for eps in EPSILONS:
        _, credible = brute_force_credible(table, eps)
        used = {(v, ps) for _, parents in credible for v, ps in parents.items()}
        for rules in [*({r} for r in sorted(sound)), sound]:
            pruned = score_parent_sets(score, epsilon=eps, rules=rules)
            assert all(ps in pruned.families[v] for v, ps in used), (eps, sorted(rules))


def test_scores_of_a_dat_file_with_unobserved_declared_states_equal_pygobnilps(shared_data) -> None:
    """pygobnilp's own score file for its ``alarm_100.dat`` (column Eight declared with 4 states, 3 seen): every
    parent set of size ≤ 2 both files hold has the same BIC score (Eight's families were ½·ln 100 per missing
    parameter apart while r was the observed states)."""
    from bnilp.scorefile import read_jaakkola

    theirs = read_jaakkola(shared_data / "pygobnilp" / "scores" / "alarm_100.BIC.palim10.pruned.jaa")
    ours = score_parent_sets(make_score("bic", load_data(shared_data / "pygobnilp" / "alarm_100.dat")), epsilon=0.0,
                             palim=2, prune=False)
    common = [(v, ps) for v, family in theirs.families.items() for ps in family if len(ps) <= 2]
    assert sum("Eight" in ps or v == "Eight" for v, ps in common) > 5
    for v, ps in common:
        assert ours.families[v][ps] == pytest.approx(theirs.families[v][ps], abs=1e-9), (v, sorted(ps))


def test_every_rule_fires() -> None:
    """Each rule of each score prunes somewhere on the soundness cases (so its soundness case is no vacuous
    pass), counted per score: a rule both scores have must fire for each."""
    fired: Counter = Counter()
    rules_of: dict[str, set[str]] = {}
    for score_name in ("bic", "bdeu"):
        for seed, n, N in CASES:
            frame = random_discrete_frame(100 + seed, n=n, N=N)
            data = from_dataframe(frame, discrete=list(frame.columns))
            score = make_score(score_name, data)
            rules_of[score_name] = set(score.pruning_rules(0))
            for eps in EPSILONS:
                for rule in sorted(score.pruning_rules(0)):
                    table = score_parent_sets(score, epsilon=eps, rules={rule})
                    fired[score_name, rule] += table.meta["pruned"][rule]
    assert set().union(*rules_of.values()) == ALL_RULES
    assert all(fired[name, rule] > 0 for name, rules in rules_of.items() for rule in rules), fired


def test_no_prune_keeps_everything_and_palim_caps() -> None:
    frame = random_discrete_frame(7, n=5, N=200)
    data = from_dataframe(frame, discrete=list(frame.columns))
    score = make_score("bic", data)
    table = score_parent_sets(score, prune=False)
    assert all(len(f) == 16 for f in table.families.values())
    capped = score_parent_sets(score, prune=False, palim=2)
    assert all(len(f) == 1 + 4 + 6 for f in capped.families.values())
    assert capped.meta["palim_reached"] and capped.meta["exact_for_parent_sets_up_to"] == 2


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_progress_reports_each_level_of_a_running_walk_then_its_end(n_jobs: int) -> None:
    """``progress`` gets a running walk's stats after each level it scored (``finished`` False: the size just
    scored, rising one by one from 1, the sets scored so far, the frontier the next level extends), then the child's
    final stats once (``finished`` True), whose counts are the table's: the last line of a child is its total."""
    frame = random_discrete_frame(11, n=6, N=300)
    data = from_dataframe(frame, discrete=list(frame.columns))
    calls: list[tuple] = []
    table = score_parent_sets(make_score("bdeu", data), epsilon=math.log(20), n_jobs=n_jobs,
                              progress=lambda st: calls.append((st.child, st.finished, st.level, st.frontier,
                                                                st.scored, st.kept)))
    for child in data.names:
        mine = [c for c in calls if c[0] == child]
        running, ends = [c for c in mine if not c[1]], [c for c in mine if c[1]]
        assert len(ends) == 1 and mine[-1] == ends[0]
        assert [c[2] for c in running] == list(range(1, len(running) + 1))
        assert all(c[3] > 0 for c in running)                   # a level follows each running report
        scored = [c[4] for c in mine]
        assert scored == sorted(scored) and scored[-1] == table.meta["per_variable"][child]["scored"]
        assert ends[0][5] == len(table.families[child])
    assert sum(not c[1] for c in calls) > 0


@pytest.mark.parametrize("score_name", ["cg", "bic"])
def test_progress_reports_a_table_computed_ahead_of_the_walks_then_the_walks(score_name: str) -> None:
    """A parallel walk that computes a table first (CG: ℓ of every variable set the walks ask for, once across the
    processes; BIC here: the subset table's counts) tells ``progress`` how far the table has got (a
    :class:`~bnilp.parentsets.TableProgress` after each task: ``done`` rising to ``total``, ``finished`` False)
    before any walk's stats (both in the order they came, to ``table_progress`` and ``progress``; a caller's
    ``progress`` alone gets walks' stats only, as the test above pins); the set table's total is the number of
    sets it holds."""
    from bnilp.parentsets import TableProgress, WalkStats
    from tests.mixed_helpers import random_mixed

    if score_name == "cg":
        data = random_mixed(__import__("numpy").random.default_rng(2), "dcdcdc", 300)
        kw = {}
    else:
        frame = random_discrete_frame(11, n=6, N=300)
        data = from_dataframe(frame, discrete=list(frame.columns))
        kw = {"counts": "subsets"}
    calls: list = []
    table = score_parent_sets(make_score(score_name, data), epsilon=math.log(20), n_jobs=2, progress=calls.append,
                              table_progress=calls.append, **kw)
    tables = [c for c in calls if isinstance(c, TableProgress)]
    first_walk = next(i for i, c in enumerate(calls) if isinstance(c, WalkStats))
    assert tables and calls[:len(tables)] == tables and first_walk == len(tables)
    assert [t.done for t in tables] == sorted({t.done for t in tables}) and tables[-1].done == tables[-1].total
    assert not any(t.finished for t in tables)
    if score_name == "cg":
        assert tables[-1].total == table.meta["counts"]["set_table"]["sets"] == 1 << data.n
        assert {t.unit for t in tables} == {"variable sets"}
    else:
        assert {(t.table, t.unit) for t in tables} == {("subset table", "parts")}


def test_epsilon_zero_keeps_optimal_ties() -> None:
    """Two identical columns: X|{Y} and X|{Z} tie exactly; both must be kept at ε = 0."""
    frame = random_discrete_frame(8, n=3, N=300)
    frame["V3"] = frame["V1"]
    data = from_dataframe(frame, discrete=list(frame.columns))
    table = score_parent_sets(make_score("bic", data), epsilon=0.0)
    fam = table.families["V0"]
    assert frozenset({"V1"}) in fam and frozenset({"V3"}) in fam
    assert fam[frozenset({"V1"})] == fam[frozenset({"V3"})]


def test_wine_bf3_keeps_the_gobnilp_sets(shared_data) -> None:
    """eBNSL's file (R1 only, palim 8) vs our rules: every set it keeps within ε we keep too.

    One set of the reference file sits 1.03e-4 beyond ε = ln 3 (s(0|{4,13}) − s(0|{13}) = −1.09872
    < −ln 3): GOBNILP keeps it by its own tolerance; no DAG within BF 3 can use it.
    """
    from bnilp.scorefile import read_jaakkola

    data = load_data(shared_data / "liao2019_ebnsl" / "wine.csv", no_header=True)
    ours = score_parent_sets(make_score("bic", data), epsilon=math.log(3))
    ref = read_jaakkola(shared_data / "liao2019_ebnsl" / "scores" / "wine.BIC.3")
    missing = [(v, ps) for v in ref.variables for ps in ref.families[v] if ps not in ours.families[v]]
    assert missing == [("0", frozenset({"4", "13"}))]
    gap = ref.families["0"][frozenset({"4", "13"})] - ref.families["0"][frozenset({"13"})]
    assert gap < -math.log(3)
    assert ours.meta["scored"] < 0.5 * 99386  # R1-only with eBNSL's palim scores 99,386 sets


def test_unbounded_walk_needs_palim() -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"x{j}": rng.integers(0, 2, 50) for j in range(19)})
    data = from_dataframe(frame, discrete=list(frame.columns))
    with pytest.raises(InputError, match="palim"):
        walk_child(make_score("bic", data), 0, rules=set())


def test_pruning_keeps_every_family_the_search_counts_within_its_rounding_tolerance() -> None:
    """The search lists DAGs down to OPT − ε − 1e-9·|OPT| (rounding); the rules' own slack was 1e-9·|s| of one
    family, smaller by up to a factor n. Here ε sits 0.3e-9·|OPT| short of the gap a → b costs: both DAGs of the
    class {a → b, b → a} lie in between, b's set {a} was pruned and a's {b} kept, and class counting stopped with
    "class 2 has 2 DAGs but the table admits only 1" (a review). The walk now prunes for ε + 1e-9·S, S ≥ |OPT|
    (:func:`bnilp.parentsets.search_scale`): the pruned table gives the unpruned one's set."""
    import numpy as np
    import pandas as pd

    from bnilp.parentsets import search_scale
    from bnilp.pipeline import learn

    rng = np.random.default_rng(0)
    a, c = rng.integers(0, 60, 20_000), rng.integers(0, 60, 20_000)
    b = (rng.random(20_000) < 0.5 + 0.1 * (a % 2)).astype(int)
    data = from_dataframe(pd.DataFrame({"a": a, "b": b, "c": c}), discrete="all")
    score = make_score("bic", data)
    empty = sum(score.local(i, ()) for i in range(3))
    assert search_scale(score, [0, 1, 2]) == pytest.approx(-empty, rel=1e-15)
    epsilon = score.local(1, ()) - score.local(1, (0,)) - 0.3e-9 * abs(empty)
    table = score_parent_sets(score, epsilon=epsilon)
    assert frozenset({"a"}) in table.families["b"] and frozenset({"b"}) in table.families["a"]
    whole = learn(data, score="bic", epsilon=epsilon, prune=False, list_dags=True)
    pruned = learn(data, score="bic", epsilon=epsilon, list_dags=True)
    assert len(whole.solution.networks) == len(pruned.solution.networks) == 3
    assert pruned.report["n_mecs"] == whole.report["n_mecs"] == 2


@pytest.mark.parametrize("kind", ["discrete", "near-deterministic continuous"])
def test_no_dag_within_the_search_s_rounding_band_loses_a_family_to_pruning(kind: str) -> None:
    """Soundness at the line itself: for ε at a DAG's gap below OPT less 0.1, 0.5 and 0.9 of the search's rounding
    tolerance 1e-9·|OPT|, every DAG the brute force counts (down to OPT − ε − 1e-9·|OPT|) has every family in the
    pruned table — on discrete data, and on continuous data whose best families total more than the empty graph's
    |score| (densities of near-deterministic children: the walk's second pass runs)."""
    import numpy as np
    import pandas as pd

    from bnilp.parentsets import search_scale
    from tests.oracles import brute_force_networks

    rng = np.random.default_rng(4)
    if kind == "discrete":
        frame, name = random_discrete_frame(7, n=4, N=3000), "bic"
        data = from_dataframe(frame, discrete=list(frame.columns))
    else:
        x = rng.normal(size=400)
        frame = pd.DataFrame({"x": x, "y": x + 1e-4 * rng.normal(size=400), "z": x - 2e-4 * rng.normal(size=400),
                              "w": rng.normal(size=400)})
        data, name = from_dataframe(frame, continuous="all"), "cg"
    score = make_score(name, data)
    whole = score_parent_sets(score, epsilon=0.0, prune=False)
    if kind != "discrete":          # the case the second pass is for
        assert sum(max(f.values()) for f in whole.families.values()) > search_scale(score, list(range(data.n)))
    networks = brute_force_networks(whole)
    opt = networks[0][0]
    band = 1e-9 * max(1.0, abs(opt))
    for gap in sorted({opt - s for s, _ in networks if 2 * band < opt - s < 30})[:6]:
        for share in (0.1, 0.5, 0.9):
            epsilon = gap - share * band
            table = score_parent_sets(score, epsilon=epsilon)
            for s, parents in networks:
                if s >= opt - epsilon - band:
                    assert all(frozenset(ps) in table.families[v] for v, ps in parents.items()), (gap, share)
