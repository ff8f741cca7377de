"""The Python API as a pandas/networkx user calls it: wrong types and values are an ``InputError`` naming the
API's parameter (never a traceback from deep inside, never a silent misreading), and a table cannot give the
credible set of an ε it was not pruned for."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bnilp.citest import ci_test
from bnilp.cli import main
from bnilp.data import from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.knowledge import Knowledge
from bnilp.parentsets import score_parent_sets
from bnilp.pipeline import learn, solve_table
from bnilp.proxy import proxy_search
from bnilp.report import print_report, write_report
from bnilp.scorefile import ScoreTable, read_jaakkola, write_jaakkola
from bnilp.scores import StructurePrior, make_score
from bnilp.simulate import sample_dag, simulate

ASIA = "instances/asia.csv"


@pytest.fixture(scope="module")
def asia():
    return load_data(ASIA)


def test_a_table_pruned_for_a_smaller_epsilon_is_refused_not_reported_complete(asia, tmp_path) -> None:
    """Sound pruning keeps the parent sets of the networks within the ε it was run for: solved for a larger
    ε the list lacked networks yet read ``complete`` (the command line refused it, the API did not) — also
    through a score file and its sidecar. An unpruned table serves any ε."""
    table = score_parent_sets(make_score("bic", asia), epsilon=math.log(3))
    with pytest.raises(InputError, match=r"epsilon=5: the table was pruned for epsilon=1\.09861 \(BF 3\)"):
        solve_table(table, epsilon=5.0)
    # the two ε as far as it takes to tell them apart (both read 1.09861, a review)
    with pytest.raises(InputError, match=r"^epsilon=1\.098612322: the table was pruned for epsilon=1\.098612289 "):
        solve_table(table, epsilon=math.log(3.0000001))
    write_jaakkola(table, tmp_path / "t.scores")
    with pytest.raises(InputError, match="the table was pruned for epsilon"):
        solve_table(read_jaakkola(tmp_path / "t.scores"), epsilon=5.0)
    for command in ("solve", "count"):      # the command line names the file
        res = CliRunner().invoke(main, [command, str(tmp_path / "t.scores"), "--bf", "3.0000001", "-q"])
        assert res.exit_code == 2 and res.output.startswith(f"bnilp: error: {tmp_path / 't.scores'}: the score file "
                                                            "was pruned for ε = 1.098612289 (BF 3); ε = 1.098612322")
    assert solve_table(table, epsilon=math.log(3)).complete
    whole = score_parent_sets(make_score("bic", asia), epsilon=math.log(3), palim=1, prune=False)
    assert solve_table(whole, epsilon=5.0).solution.status == "optimal"
    table.meta["epsilon"] = 800.0                  # e^800 overflows a float: the message says e^800.0, no OverflowError
    with pytest.raises(InputError, match=r"pruned for epsilon=800 \(BF e\^800\.0\)"):
        solve_table(table, epsilon=900.0)


def test_the_lower_level_search_refuses_a_table_pruned_for_a_smaller_epsilon(asia) -> None:
    """``bnilp.ilp.solve`` (README "Lower-level") took a table pruned for BF 3 at ε = 5 and called its short list
    complete (asia BDeu: 7,171 of 9,492 credible DAGs, ``complete`` True; a review): it refuses as ``solve_table``
    does. The table pruned for that ε serves it."""
    from bnilp.ilp import solve

    small = score_parent_sets(make_score("bic", asia), epsilon=math.log(3))
    with pytest.raises(InputError, match=r"^epsilon=5: the table was pruned for epsilon=1\.09861 \(BF 3\)"):
        solve(small, 5.0)
    assert solve(small, math.log(3)).complete


def test_a_table_that_records_no_epsilon_warns_through_the_api(asia) -> None:
    """A table that records no ε (a score file without its sidecar) solved at ε > 0 is complete only if it was
    pruned for at least that ε: the API put it in ``report["pruning_note"]`` alone, so a notebook showed a
    complete-looking result and nothing else (a review). It is a :class:`DataWarning` naming the caller's line
    too, from ``count_credible`` as well; at ε = 0 (any sound pruning keeps OPT's ties) nothing is said."""
    import warnings

    from bnilp.errors import DataWarning

    bare = score_parent_sets(make_score("bic", asia), epsilon=math.log(20))
    bare.meta = {}
    with pytest.warns(DataWarning, match=r"^nothing records the BF this score table was pruned for \(no sidecar\)") \
            as caught:
        result = solve_table(bare, epsilon=math.log(20))
    assert [w.filename for w in caught] == [__file__]
    assert result.report["pruning_note"] == str(caught[0].message)
    from bnilp.twins import count_credible

    with pytest.warns(DataWarning, match=r"^nothing records the BF") as caught:
        counted = count_credible(bare, math.log(20))
    assert [w.filename for w in caught] == [__file__] and counted.dags == result.report["n_networks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        assert "pruning_note" not in solve_table(bare, epsilon=0.0).report


def test_learn_can_keep_every_parent_set_as_the_command_line_can() -> None:
    """``bnilp learn --no-prune`` had no API form: ``learn(prune=False)`` read as a score setting ("score 'bic' takes
    no setting 'prune'"; a review). Unpruned, asia's 8 variables keep all 8·2⁷ parent sets, and the credible set is
    the pruned table's (sound pruning keeps every credible DAG's sets)."""
    pruned = learn(ASIA, bf=3)
    whole = learn(ASIA, bf=3, prune=False)
    def sets(result) -> int:
        return sum(map(len, result.table.families.values()))

    assert whole.table.meta["prune"] is False and sets(whole) == 8 * 2 ** 7 > sets(pruned)
    assert whole.report["optimum"] == pytest.approx(pruned.report["optimum"], abs=1e-9)
    assert (whole.report["n_networks"], whole.report["n_mecs"]) == (pruned.report["n_networks"],
                                                                    pruned.report["n_mecs"]) == (3, 1)
    assert [n.parents for n in whole.solution.networks] == [n.parents for n in pruned.solution.networks]
    with pytest.raises(InputError, match=r"^prune \(--no-prune\) must be True or False, got 'no'"):
        learn(ASIA, prune="no")


def test_the_documented_lower_level_helpers_refuse_what_they_cannot_mean(tmp_path) -> None:
    """``averaging.weights``, ``edge_posteriors``, ``mec.group_by_mec``, ``cpdag_edges`` and ``report.write_report``
    (README "Lower-level") took None as a NaN weight, parsed strings, returned P = 0.5 from one network and two
    weights, clipped unnormalised weights to 1 and read a string of variables as its letters, or raised KeyError /
    AttributeError deep inside (a review): each is an InputError naming what is wrong, and nothing is written."""
    from bnilp.averaging import edge_posteriors, weights
    from bnilp.mec import cpdag_edges, group_by_mec

    net = [{"score": -1.0, "parents": {"a": [], "b": ["a"]}}]
    cases = [
        (lambda: weights(None), r"^scores must be a sequence of real numbers, got NoneType"),
        (lambda: weights(["-1", "-2"]), r"^scores must be a sequence of real numbers"),
        (lambda: weights([math.nan, -1.0]), r"^scores: nan is not a finite number"),
        (lambda: edge_posteriors(net, [0.5, 0.5], ["a", "b"]), r"^1 networks but 2 weights"),
        (lambda: edge_posteriors(net, [3.0], ["a", "b"]), r"^weights must be ≥ 0 and sum to at most 1"),
        (lambda: edge_posteriors(net, [1.0], "ab"), r"^variables must be a sequence of names, not a string"),
        (lambda: edge_posteriors([{"score": 0, "parents": {"a": [], "b": ["z"]}}], [1.0], ["a", "b"]),
         r"^networks: network 1 names 'z', which is not one of variables"),
        (lambda: group_by_mec([{"a": [], "b": ["a"]}]), r"^networks: network 1 is no \(score, parents\) pair"),
        (lambda: cpdag_edges(None), r"^parents must map each variable to its parent names \(a dict\), got NoneType"),
        (lambda: write_report(tmp_path / "out", {}), r"without variables \(give variables=\)"),
    ]
    for call, words in cases:
        with pytest.raises(InputError, match=words):
            call()
    assert not (tmp_path / "out").exists()
    assert weights([]).size == 0 and weights([-1, -1]).tolist() == [0.5, 0.5]       # integers are reals
    assert edge_posteriors(net, weights([-1.0]), ["a", "b"]).loc["a", "b"] == 1.0


def test_wrong_types_are_input_errors_naming_the_parameter(asia, tmp_path) -> None:
    frame = pd.read_csv(ASIA)
    cases = [
        (lambda: learn(frame.to_numpy()), "data must be a file path, a pandas DataFrame or a bnilp Dataset"),
        (lambda: make_score(None, asia), "score must be a score name"),
        (lambda: make_score("bic", frame), "data must be a bnilp Dataset"),
        (lambda: solve_table(str(tmp_path / "x.scores")), "table must be a ScoreTable"),
        (lambda: ci_test(frame, "smoke", "lung"), "data must be a bnilp Dataset"),
        (lambda: learn(ASIA, max_networks=2.5), "max_networks (--max-networks) must be an integer ≥ 1, got 2.5"),
        (lambda: learn(ASIA, max_networks=True), "max_networks (--max-networks) must be an integer ≥ 1, got True"),
        (lambda: learn(ASIA, palim=1.5), "palim (--palim) must be an integer ≥ 0, got 1.5"),
        (lambda: learn(ASIA, time_limit=-1),
         "time_limit (--time-limit) must be a finite number of seconds ≥ 0, got -1"),
        (lambda: learn(ASIA, time_limit="5"),
         "time_limit (--time-limit) must be a finite number of seconds ≥ 0, got '5'"),
        (lambda: learn(ASIA, time_limit=math.nan),
         "time_limit (--time-limit) must be a finite number of seconds ≥ 0, got nan"),
        (lambda: make_score("bic", asia, prior="binomial"), "prior must be a StructurePrior, got str"),
        (lambda: make_score("bic", asia, prior=StructurePrior("ebic", 3)), "prior is for 3 variables, the data have 8"),
        (lambda: from_dataframe(frame, discrete=["z"]), "unknown variable 'z' in discrete/continuous"),
        (lambda: proxy_search(make_score("bic", asia), samples=5, seed=-1),
         "seed (--seed) must be an integer ≥ 0, got -1"),
        (lambda: simulate(5, 100, 1.0, seed=-1), "seed (--seed) must be an integer ≥ 0, got -1"),
        (lambda: sample_dag({"a": [], "b": ["a"]}, {"a": "discrete", "b": "discrete"}, 10, seed=-3), "seed must be"),
    ]
    for call, words in cases:
        with pytest.raises(InputError, match=None) as err:
            call()
        assert words in str(err.value), (words, str(err.value))


def test_duplicate_column_names_in_a_dataframe_are_named_not_a_crash() -> None:
    frame = pd.DataFrame([[1, 2, 3], [2, 3, 1], [1, 1, 1]], columns=["x", "x", "y"])
    with pytest.raises(InputError, match=r"duplicate column name 'x' \(columns 1 and 2\)"):
        from_dataframe(frame)
    frame.columns = [1, "1", 2]        # equal as strings, the names variables have
    with pytest.raises(InputError, match=r"duplicate column name '1' \(columns 1 and 2\)"):
        from_dataframe(frame)


def test_a_dataframes_column_labels_name_its_variables_as_strings() -> None:
    """As the README says: integer labels give the names '0', '1', … (a score file's names are strings too)."""
    frame = pd.DataFrame({0: [0, 1] * 20, 1: [0, 1] * 20, 2: [0, 0, 1, 1] * 10})
    assert from_dataframe(frame).names == ["0", "1", "2"]
    assert set(learn(frame, bf=3).best_graph().nodes) == {"0", "1", "2"}


def test_knowledge_of_the_wrong_shape_is_refused_and_an_int_is_no_file_descriptor(tmp_path) -> None:
    """An int was opened as a file descriptor and closed it (0: stdin); a string tier became a tier of its
    characters; a dict key that is no field, or a pair of three names, gave a bare TypeError/ValueError."""
    fd = os.open(tmp_path / "keep.txt", os.O_CREAT | os.O_RDWR)
    try:
        with pytest.raises(InputError, match="knowledge must be a Knowledge, a dict of its fields or a file path"):
            Knowledge.coerce(fd)
        os.fstat(fd)                                     # still open
    finally:
        os.close(fd)
    with pytest.raises(InputError, match="unknown field 'require'"):
        Knowledge.coerce({"require": [("a", "b")]})
    with pytest.raises(InputError, match="tiers is a list of lists of names"):
        Knowledge(tiers=["asia,smoke"])
    with pytest.raises(InputError, match=r"a pair is two names, got \('a', 'b', 'c'\)"):
        Knowledge(required=[("a", "b", "c")])


def test_indices_take_numpy_integers_but_not_bools_and_a_string_given_is_one_name(asia) -> None:
    result = learn(ASIA, bf=3)
    assert result.fit(network=np.int64(0))["network"]["rank"] == 1
    for bad in (True, 1.0):
        with pytest.raises(InputError, match="network="):
            result.fit(network=bad)
    with pytest.raises(InputError, match="mec=True"):
        result.model_string(mec=True)
    by_index = ci_test(asia, np.int64(2), np.int64(3), score="bic")
    assert (by_index.x, by_index.y) == ("smoke", "lung")
    assert ci_test(asia, "smoke", "dysp", given="lung", score="bic").given == ("lung",)


def test_report_writers_refuse_what_they_cannot_write_in_one_line(asia, tmp_path) -> None:
    result = learn(ASIA, bf=3)
    (tmp_path / "afile").write_text("")
    with pytest.raises(InputError, match="is a directory"):
        write_jaakkola(result.table, tmp_path)
    with pytest.raises(InputError, match="is a file"):
        write_report(tmp_path / "afile", result.report)
    with pytest.raises(InputError, match="variables lacks"):
        write_report(tmp_path / "rep", result.report, variables=["asia", "tub"])
    for call in (lambda: write_report(tmp_path / "rep", result), lambda: print_report(result)):
        with pytest.raises(InputError, match="result_json must be a result's report"):
            call()


def test_a_bf_reads_as_people_write_it_at_every_size() -> None:
    """``bf_text``: three significant digits below 1,000, a whole number below 10⁶ (once "1e+03"), scientific
    above, and e^ε where e^ε overflows a float."""
    from bnilp.scores.base import bf_text

    got = [bf_text(math.log(x)) for x in (2.718281828459045, 20, 150, 1000, 2500, 1e7)]
    assert got == ["2.72", "20", "150", "1000", "2500", "1.00e+07"]
    assert bf_text(800.0) == "e^800.0" and bf_text(1e300) == "e^1e+300"


@pytest.mark.parametrize(("call", "words"), [
    (lambda: learn(ASIA, bf=0), r"bf \(--bf\) must be a finite number ≥ 1, got 0"),
    (lambda: learn(ASIA, bf="20"), r"bf \(--bf\) must be a finite number ≥ 1, got '20'"),
    (lambda: learn(ASIA, bf=True), r"bf \(--bf\) must be a finite number ≥ 1, got True"),
    (lambda: learn(ASIA, bf=float("nan")), r"bf \(--bf\) must be a finite number"),
    (lambda: learn(ASIA, epsilon="1"), r"epsilon \(--epsilon\) must be a finite number ≥ 0, got '1'"),
    (lambda: learn(ASIA, score="bdeu", ess="1"), r"ess \(--ess\) must be a finite number ≥ 1e-100, got '1'"),
    (lambda: learn(ASIA, score="bdeu", ess=True), r"ess \(--ess\) must be a finite number"),
    (lambda: learn(ASIA, structure_prior="ebic", ebic_gamma=float("inf")), r"gamma \(--ebic-gamma\) must be a finite"),
    (lambda: learn(ASIA, structure_prior="ebic", ebic_gamma=float("nan")), r"gamma \(--ebic-gamma\) must be a finite"),
    (lambda: learn(ASIA, structure_prior="binomial", expected_parents="1"), r"expected_parents \(--expected-parents\)"),
    (lambda: learn(ASIA, penalty_discount="2"), r"penalty_discount \(--penalty-discount\) must be a finite number > 0"),
])
def test_numbers_are_finite_real_numbers_in_range_before_any_arithmetic(call, words) -> None:
    """``bf=0`` was a ``ValueError`` from ``math.log``, ``bf='20'`` and ``ess='1'`` a ``TypeError``, ``bf=True``
    was taken as BF 1 (README: ``True`` is not a number here), ``ebic_gamma=inf`` ended in "score 'bic' gave nan"
    after scoring: every such setting is an :class:`InputError` naming the parameter (and its flag)."""
    with pytest.raises(InputError, match=words):
        call()


def test_solve_table_checks_epsilon_and_the_scores_range() -> None:
    """``solve_table(t, epsilon='1')`` was a ``TypeError`` from a comparison; a table whose best scores sum past a
    float ended in ``OverflowError`` inside the search. Both are an :class:`InputError` naming the parameter."""
    table = read_jaakkola("scorefiles/zoo.BIC.20.scores")
    for eps in ("1", True, float("inf"), -1.0):
        with pytest.raises(InputError, match=r"epsilon \(--epsilon\) must be a finite number ≥ 0"):
            solve_table(table, epsilon=eps)
    huge = ScoreTable(["a", "b"], {"a": {frozenset(): -1e308}, "b": {frozenset(): -1e308}})
    with pytest.raises(InputError, match="table: the local scores are too large"):
        solve_table(huge)


def test_a_warm_start_the_table_cannot_hold_is_not_used_and_the_report_says_why(asia) -> None:
    """``solve_table(..., warm_start=...)`` with a parent set the table lacks raised an InputError from the solver
    (and, with any knowledge, was dropped as "does not satisfy the background knowledge"): a warm start is only a
    hint — not used, ``report["warm_start_note"]`` gives the true reason, the result is the one without it. A start
    that is no network of the table's variables (a name unknown or left out, a cycle) is an InputError, with
    knowledge too (it was dropped silently there)."""
    table = score_parent_sets(make_score("bic", asia), epsilon=0.0, palim=1)
    plain = solve_table(table)
    start = {v: frozenset() for v in table.variables}
    start["dysp"] = frozenset({"bronc", "either"})
    for knowledge in (None, Knowledge(forbidden=[("asia", "smoke")])):
        got = solve_table(table, warm_start=start, knowledge=knowledge)
        assert got.report["warm_start_note"] == ("warm start not used: the parent set ['bronc', 'either'] of 'dysp' "
                                                 "is not in the score table (larger than the palim (1))")
        assert got.solution.optimum == pytest.approx(plain.solution.optimum)
        # "whether one was given" (README): it read False for a start given but not used (a review)
        assert got.report["provenance"]["settings"]["warm_start"] is True
    best = plain.solution.networks[0].parents
    child = next(v for v in table.variables if best[v])
    against = solve_table(table, warm_start=best, knowledge=Knowledge(forbidden=[(next(iter(best[child])), child)]))
    assert against.report["warm_start_note"] == "warm start not used: it does not satisfy the background knowledge"
    assert against.report["provenance"]["settings"]["warm_start"] is True
    assert plain.report["provenance"]["settings"]["warm_start"] is False
    for bad, words in (({**start, "ghost": frozenset()}, "unknown \\['ghost'\\]"),
                       ({v: ps for v, ps in start.items() if v != "asia"}, "missing \\['asia'\\]"),
                       ({**start, "asia": frozenset({"tub"}), "tub": frozenset({"asia"})}, "directed cycle")):
        for knowledge in (None, Knowledge(forbidden=[("asia", "smoke")])):
            with pytest.raises(InputError, match=f"warm_start: .*{words}"):
                solve_table(table, warm_start=bad, knowledge=knowledge)


def test_network_indexes_the_listed_networks_and_says_so_under_class_enumeration(asia) -> None:
    """``fit(network=k)`` indexes ``solution.networks``: under class enumeration (BIC) one representative per
    class, fewer than the DAGs counted; an index past them names both counts and ``list_dags``, and the README's
    example (``network=1`` on ASIA BIC BF 20: 2 classes of 15 DAGs) runs."""
    result = learn(asia, score="bic", bf=20)
    assert result.report["enumerate"] == "mecs" and len(result.graphs()) == 2 and result.report["n_networks"] == 15
    fitted = result.fit(ASIA, network=1, method="bayes", ess=1.0)
    assert fitted["network"]["rank"] == 2
    with pytest.raises(InputError, match=r"2 class representatives .* of 15 DAGs.*list_dags=True"):
        result.fit(asia, network=2)
    for index in (1.0, True, "1"):     # an index, not a count: 1.0 read "indexes … 0..1" (a review)
        with pytest.raises(InputError, match=r"^network=.*: network is an index of the listed networks, an integer "
                                             r"\(0 = the best\)"):
            result.fit(asia, network=index)
    every = learn(asia, score="bic", bf=20, list_dags=True)          # as the message says: every DAG listed
    assert len(every.solution.networks) == len(every.graphs()) == every.report["n_networks"] == 15
    assert [{v: sorted(ps) for v, ps in n.parents.items()} for n in every.solution.networks] == \
        [n["parents"] for n in every.report["networks"]]
    assert every.fit(ASIA, network=14)["network"] == {"rank": 15, "score": every.solution.networks[14].score, "of": 15,
                                                      "optimum_proven": True, "limits": [],
                                                      "status": "optimal", "complete": True}


@pytest.mark.parametrize("call, words", [
    (lambda d: learn(d, score="bic", ess=1.0), "score 'bic' takes no setting 'ess'"),
    (lambda d: learn(d, score="bdeu", esss=1.0), "score 'bdeu' takes no setting 'esss'"),
    (lambda d: make_score("bic", d, bins=3), "score 'bic' takes no setting 'bins'"),
    (lambda d: learn(d, score="bic", score_time_limt=5), "takes no setting 'score_time_limt'"),
    (lambda d: learn(d, score="bic", jobs=2), "jobs: learn takes n_jobs"),      # solve_table's name, not a score's
    (lambda d: score_parent_sets(make_score("bic", d), epsilon="3"), "epsilon"),
    (lambda d: score_parent_sets(make_score("bic", d), time_limit="6"), "time_limit"),
    (lambda d: score_parent_sets("bic"), "score must be a score object"),
    (lambda d: ci_test(d, "smoke", "lung", score="bic", alpha="0.05"), "alpha"),
    (lambda d: ci_test(d, "smoke", "lung", score="bic", alpha=None), "alpha"),
    (lambda d: ci_test(d, "smoke", "lung", score="bic", given=1.5), "given"),
    # a score's own settings only: not the structure prior, nor a discount BDeu/MML refuse (both were listed)
    (lambda d: learn(d, score="bdeu", foo=1), r"score 'bdeu' takes no setting 'foo' \(its settings: ess\)$"),
    (lambda d: learn(d, score="bic", foo=1), r"score 'bic' takes no setting 'foo' \(its settings: penalty_discount\)$"),
    (lambda d: learn(d, score="bdeu", penalty_discount=2), r"takes no penalty_discount \(--penalty-discount\)"),
    (lambda d: learn(d, knowledge={"where": 5}), "knowledge: where maps statements to where they were written"),
])
def test_wrong_settings_and_types_are_input_errors_naming_the_parameter(asia, call, words) -> None:
    """A setting the score does not take, or a value of the wrong type, is an ``InputError`` naming the score and
    the parameter — never a ``TypeError``/``AttributeError`` traceback from deep inside."""
    with pytest.raises(InputError, match=words):
        call(asia)


def test_solve_table_refuses_a_warm_start_that_is_not_a_mapping(asia) -> None:
    """``warm_start`` is a mapping variable → parents; a list of pairs is an ``InputError`` naming it."""
    table = score_parent_sets(make_score("bic", asia), epsilon=math.log(20))
    with pytest.raises(InputError, match="warm_start must be a dict"):
        solve_table(table, warm_start=[("asia", [])])


@pytest.mark.parametrize("variables, families, words", [
    (["A"], {"A": {frozenset(): -1.0, frozenset({"Z"}): 0.0}}, "parent 'Z' of 'A' is not a declared variable"),
    (["A", "B"], {"A": {frozenset(): -1.0}}, "'B' has no parent sets"),
    (["A"], {"A": {frozenset(): "-1"}}, "must be a finite number"),
    (["A", "B"], {"A": {frozenset(): -1.0, frozenset({"A"}): 0.0}, "B": {frozenset(): -1.0}},
     "'A' is listed as its own parent"),
    (["A", "A"], {"A": {frozenset(): -1.0}}, "listed twice"),
    ([], {}, "no variables"),
])
def test_solve_table_checks_a_hand_built_table_as_the_reader_checks_a_file(variables, families, words) -> None:
    """``solve_table`` makes the score-file reader's checks of a hand-built ``ScoreTable`` (``check_table``): an
    ``InputError`` naming ``table`` — not a KeyError/TypeError, nor a self-parent set dropped in silence."""
    with pytest.raises(InputError, match=f"table: .*{words}"):
        solve_table(ScoreTable(variables, families))


def test_solve_table_raises_for_a_table_that_admits_no_dag() -> None:
    """A table whose every choice of parent sets has a cycle has no result: ``solve_table`` raises an
    ``InputError`` ("admits no DAG"), as the CLI exits 2 — never a LearnResult with ``complete`` True and zero
    posteriors; ``ilp.solve``'s own SolveResult for it is not ``complete`` (README: complete is "—")."""
    from bnilp.ilp import solve

    table = ScoreTable(["A", "B"], {"A": {frozenset({"B"}): -1.0}, "B": {frozenset({"A"}): -1.0}})
    with pytest.raises(InputError, match="admits no DAG"):
        solve_table(table)
    res = solve(table, 0.0)
    assert res.status == "infeasible" and res.complete is False


def test_mvp_degree_error_names_the_real_flag(tmp_path) -> None:
    """The MVP score's bad ``degree`` names the CLI's flag as it is spelled, ``--mvp-degree``."""
    frame = pd.DataFrame({"a": np.linspace(0, 1, 20), "b": np.r_[[0, 1] * 10]})
    with pytest.raises(InputError, match=r"degree \(--mvp-degree\)"):
        make_score("mvp", from_dataframe(frame, discrete=["b"]), degree="cubic")


@pytest.fixture(scope="module")
def asia_table(asia):
    return score_parent_sets(make_score("bic", asia), epsilon=math.log(3))


def _api_misuses(asia, asia_table, tmp_path):
    """(call, words of the one-line InputError) for each misuse a review found raising a TypeError/KeyError/
    ValueError from deep inside, or worse, silently read as something else."""
    from bnilp import averaging, export, ilp, mec
    from bnilp.metrics import compare_graphs
    from bnilp.proxy import greedy_search

    bic = make_score("bic", asia)
    parents = {v: () for v in asia.names}
    fitted = export.fit_parameters(asia, parents)
    return [
        # on/off flags: a string is not False (optimum_only="no" ran optimum-only, list_dags="no" listed every DAG)
        (lambda: learn(ASIA, optimum_only="no"), "optimum_only (--optimum-only) must be True or False, got 'no'"),
        (lambda: learn(ASIA, list_dags="no"), "list_dags (--list-dags) must be True or False"),
        (lambda: learn(ASIA, count_past_cap=1), "count_past_cap (--count-past-cap) must be True or False, got 1"),
        (lambda: solve_table(asia_table, epsilon=1.0, list_dags="False"),
         "list_dags (--list-dags) must be True or False"),
        (lambda: score_parent_sets(bic, epsilon=1.0, prune="False"), "prune must be True or False"),
        (lambda: ci_test(asia, "smoke", "lung", both_directions="no"), "both_directions must be True or False"),
        (lambda: compare_graphs(parents, parents, cpdag="x"), "cpdag must be True or False"),
        (lambda: ilp.solve(asia_table, 1.0, enumerate_ties="yes"), "enumerate_ties must be True or False"),
        # the data readers' flags too (drop_missing="no" dropped rows; no_header="no" read the names as data)
        (lambda: load_data(ASIA, drop_missing="no"), "drop_missing (--drop-missing) must be True or False, got 'no'"),
        (lambda: load_data(ASIA, no_header="no"), "no_header (--no-header) must be True or False"),
        (lambda: load_data(ASIA, integer_codes=1), "integer_codes must be True or False, got 1"),
        (lambda: from_dataframe(pd.read_csv(ASIA), drop_missing="no"), "drop_missing (--drop-missing) must be True"),
        (lambda: from_dataframe(pd.read_csv(ASIA), integer_codes="no"), "integer_codes must be True or False"),
        # numbers and their pairing, checked before anything is read
        (lambda: learn(ASIA, bf=20, epsilon=1.0), "give bf or epsilon, not both"),
        (lambda: learn(ASIA, optimum_only=True, bf="x"), "bf (--bf) must be a finite number ≥ 1, got 'x'"),
        (lambda: learn(ASIA, optimum_only=True, bf=0.5), "bf (--bf) must be a finite number ≥ 1, got 0.5"),
        (lambda: learn(ASIA, optimum_only=True, bf=20), "optimum_only returns one optimal network: it takes no BF > 1"),
        # what optimum_only or a DAG listing would ignore, refused as the command line refuses it (a review)
        (lambda: learn(ASIA, optimum_only=True, enumerate_by="mecs"), "enumerates nothing: drop enumerate_by"),
        (lambda: learn(ASIA, optimum_only=True, list_dags=True), "enumerates nothing: drop list_dags (--list-dags)"),
        (lambda: learn(ASIA, optimum_only=True, prior="mecs"), "enumerates nothing: drop prior='mecs'"),
        (lambda: solve_table(asia_table, epsilon=1.0, list_dags=True, enumerate_by="dags"),
         "list_dags (--list-dags) lists the DAGs of each equivalence class, but this run lists every DAG already"),
        (lambda: learn(ASIA, ebic_gamma="x"), "ebic_gamma (--ebic-gamma) must be a finite number"),
        (lambda: learn(ASIA, expected_parents=-1), "expected_parents (--expected-parents) must be a finite number"),
        (lambda: learn(ASIA, structure_prior="flat"), "structure_prior (--prior) must be one of none, binomial, ebic"),
        (lambda: ilp.solve(asia_table, "a"), "epsilon must be a finite number"),
        (lambda: ilp.solve(None, 1.0), "table must be a ScoreTable"),
        # paths, callbacks, score objects
        (lambda: load_data(None), "path must be a file path"),
        (lambda: load_data(pd.read_csv(ASIA)), "from_dataframe(df) reads a DataFrame"),
        (lambda: load_data(ASIA, fmt="xls"), "fmt (--format) must be one of auto, csv, dat, got 'xls'"),
        (lambda: load_data(ASIA, delimiter=5), "delimiter must be one character"),
        (lambda: load_data(ASIA, delimiter="ab"), "delimiter must be one character"),
        (lambda: load_data(ASIA, delimiter='"'), "delimiter must be one character other than a quote"),
        (lambda: read_jaakkola(None), "path must be a file path"),
        (lambda: write_jaakkola(asia_table, 123), "path must be a file path"),
        (lambda: write_jaakkola(None, tmp_path / "x.scores"), "table must be a ScoreTable"),
        (lambda: export.write_bif(fitted, None), "path must be a file path"),
        (lambda: solve_table(asia_table, epsilon=1.0, progress="bar"), "progress must be a function or None"),
        (lambda: score_parent_sets(bic, epsilon=1.0, progress=1), "progress must be a function or None"),
        (lambda: score_parent_sets(bic, epsilon=1.0, table_progress=2), "table_progress must be a function or None"),
        (lambda: greedy_search(bic, progress=1), "progress must be a function or None"),
        (lambda: greedy_search(None), "score must be a score object"),
        (lambda: proxy_search(pd.read_csv(ASIA)), "score must be a score object"),
        # fitted networks and graphs
        (lambda: export.fit_parameters(pd.read_csv(ASIA), parents), "dataset must be a bnilp Dataset"),
        (lambda: export.fit_parameters(asia, None), "'parents' must map each variable"),
        (lambda: export.json_text({"a": 1}), "fitted must be the dict fit_parameters"),
        (lambda: export.bif_text({}), "fitted must be the dict fit_parameters"),
        (lambda: export.model_string({"a": ["a"]}), "'a' is its own parent"),
        (lambda: export.model_string({"a": ["c"]}), "parent 'c' of 'a' is not a variable"),
        (lambda: export.parse_model_string("[a|b][b|c][c|a]"), "the directed part has a cycle"),
        (lambda: export.parse_model_string("[a|a]"), "node 'a' is among its own parents"),
        (lambda: export.parse_model_string(None), "text must be a model string"),
        (lambda: export.cpdag_parents(["a", "b"], [("a", "z")], []), "names a variable not in variables"),
        (lambda: mec.cpdag_edges({"a": ["b"], "b": ["a"]}), "directed cycle"),
        (lambda: mec.cpdag_edges({"a": ["c"]}), "parent 'c' is not a variable"),
        (lambda: mec.count_dags_in_mec(5), "expected a DAG's parent map"),
        (lambda: averaging.weights([1.0], 1.0, prior="x"), "prior must be one of"),
        # a string where names are expected is one name, or refused: never its letters
        (lambda: Knowledge(required=5), "required must be a list of pairs"),
        (lambda: Knowledge(tiers=5), "tiers is a list of lists of names"),
        (lambda: Knowledge(strict_tiers="x"), "strict_tiers is a set of tier indices"),
        # the dict form (numbered from 1) was turned by int() first: 1.5 and True made tier 1 strict, "12" tiers 1, 2
        (lambda: Knowledge.coerce({"tiers": [["asia"], ["lung"]], "strict_tiers": [1.5]}), "strict_tiers is a list of"),
        (lambda: Knowledge.coerce({"tiers": [["asia"], ["lung"]], "strict_tiers": [True]}), "strict_tiers is a list"),
        (lambda: Knowledge.coerce({"tiers": [["asia"], ["lung"]], "strict_tiers": "12"}), "strict_tiers is a list of"),
        (lambda: Knowledge.coerce({"tiers": [["asia"], ["lung"]], "strict_tiers": [None]}), "strict_tiers is a list"),
        (lambda: Knowledge.coerce({"tiers": [["asia"], ["lung"]], "strict_tiers": 5}), "strict_tiers is a list of"),
        # a lone label where a list is wanted (natural for a frame with integer labels) was a TypeError from a loop
        (lambda: from_dataframe(pd.DataFrame({0: [0, 1], 1: [1, 0]}), discrete=0),
         "discrete (--discrete) must be a list of names or one comma-separated string, got 0 (as a list: [0])"),
        (lambda: load_data(ASIA, continuous=1), "continuous (--continuous) must be a list of names"),
        (lambda: load_data(ASIA, discrete=True), "discrete (--discrete) must be a list of names"),
        (lambda: load_data(ASIA, missing=0), "missing (--missing) must be a list of names"),
        (lambda: score_parent_sets(bic, epsilon=1.0, rules=5), "rules must be a list of pruning rules"),
        (lambda: learn(ASIA, knowledge=""), "knowledge must be a non-empty file path"),
        (lambda: score_parent_sets(bic, epsilon=1.0, rules="R9"), r"unknown pruning rules \['R9'\]"),
        (lambda: solve_table(asia_table, epsilon=1.0, warm_start={**parents, "asia": 5}),
         "warm_start: the parents of 'asia' must be a list of names"),
        (lambda: greedy_search(bic, start=[("lung", "smoke")]), "start must be a dict of each variable"),
        (lambda: proxy_search(bic, refine=0, refine_samples=3), "refine=0 (--refine 0) runs none"),
        (lambda: greedy_search(bic, start={"lung": 5}), "start: the parents of 'lung' must be a list of names"),
    ]


def test_every_api_misuse_is_one_input_error_naming_the_parameter(asia, asia_table, tmp_path) -> None:
    """Wrong flags, paths, callbacks, objects and graphs are each an ``InputError`` whose message names the
    parameter — not a ``TypeError``/``KeyError``/``ValueError`` from inside, and never silently taken
    (a string flag turned a mode on; a string of names was split into letters; a cyclic model string parsed)."""
    for call, words in _api_misuses(asia, asia_table, tmp_path):
        with pytest.raises(InputError, match=words if "\\[" in words else re.escape(words)):
            call()


def test_a_string_is_one_name_where_a_list_is_expected(asia, asia_table) -> None:
    """``Knowledge(required="smoke->lung")`` is that one statement (it was split into letters: "expected
    'a -> b', got 's'"), and ``rules="R1"`` is the rule R1. So is a string where a network's parents are wanted:
    a warm start's, greedy search's start network's (a review: ``start={'lung': 'smoke'}`` was 'unknown variable
    s', and with one-letter names ``{'D': 'AB'}`` started from D ← {A, B}). (A network's own parent map — a
    JSON file, ``fit_parameters`` — refuses a string, as ``bnilp compare`` does: there it is a slip.)"""
    assert Knowledge(required="smoke->lung").required == (("smoke", "lung"),)
    table = score_parent_sets(make_score("bic", asia), epsilon=1.0, rules="R1")
    assert table.meta["rules"] == ["R1"]
    from bnilp.proxy import greedy_search

    bic = make_score("bic", asia)
    as_string, as_list = (greedy_search(bic, start={"lung": ps}) for ps in ("smoke", ["smoke"]))
    assert as_string.trajectory == as_list.trajectory and as_string.parents == as_list.parents
    start = {v: (("smoke",) if v == "lung" else ()) for v in asia.names}
    assert as_string.trajectory[0]["score"] == pytest.approx(sum(bic.local(asia.index(v), tuple(
        asia.index(p) for p in ps)) for v, ps in start.items()), rel=1e-12)
    empty = {v: [] for v in asia_table.variables}
    hinted = solve_table(asia_table, epsilon=0.0, warm_start={**empty, "lung": "smoke"})
    assert hinted.report["optimum"] == solve_table(asia_table, epsilon=0.0).report["optimum"]



def test_a_categorical_keeps_its_categories_order_and_a_fit_returns_plain_ints(asia) -> None:
    """An ordered categorical's states are its categories' order (they were sorted: hi before lo), its codes
    renumbered alike; ``fit(network=np.int64(0))`` reports a plain ``int`` rank."""
    levels = pd.Categorical(["lo", "hi", "mid", "lo"] * 25, categories=["lo", "mid", "hi"], ordered=True)
    data = from_dataframe(pd.DataFrame({"a": levels, "b": [0, 1] * 50}))
    assert data.levels[0] == ["lo", "mid", "hi"] and list(data.codes[:4, 0]) == [0, 2, 1, 0]
    rank = learn(ASIA, bf=3).fit(network=np.int64(0))["network"]["rank"]
    assert type(rank) is int and rank == 1


def test_best_graph_and_to_pgmpy_with_data_are_there_as_issue_14_named_them() -> None:
    """``res.best_graph()`` is a networkx DiGraph of every variable with the best network's arrows, and
    ``res.to_pgmpy(df)`` fits the given data (both named in issue 14, neither run by a test before)."""
    import networkx as nx

    result = learn(ASIA, bf=3)
    graph = result.best_graph()
    best = result.solution.networks[0].parents
    assert isinstance(graph, nx.DiGraph) and set(graph.nodes) == set(best)
    assert set(graph.edges) == {(p, v) for v, ps in best.items() for p in ps}
    pytest.importorskip("pgmpy")
    model = result.to_pgmpy(pd.read_csv(ASIA))
    assert model.check_model() and set(model.edges()) == set(graph.edges)


def test_every_setting_the_command_line_and_the_api_share_has_one_default() -> None:
    """A setting both the Python API and a command take has the same default in both — each is one named
    constant imported where needed (they were literals written twice: BIC's penalty discount, CGd's bins,
    MVP's degree, the priors' r and γ, ci-test's α/combine/correction/null, the proxy search's samples,
    in-degree, fit iterations and κ)."""
    import inspect

    import click

    from bnilp import citest, proxy
    from bnilp.cli import main
    from bnilp.scores.cg import ConditionalGaussianDiscretized
    from bnilp.scores.discrete import BIC, BDeu
    from bnilp.scores.mvp import MixedVariablePolynomial

    def cli_default(command: str, flag: str) -> object:
        cmd = main.get_command(click.Context(main), command)
        return next(p for p in cmd.params if flag in p.opts).default

    def api_default(func, name: str) -> object:
        return inspect.signature(func).parameters[name].default

    shared = [("--bins", ConditionalGaussianDiscretized.__init__, "bins"),
              ("--mvp-degree", MixedVariablePolynomial.__init__, "degree"),
              ("--penalty-discount", BIC.__init__, "penalty_discount"),
              ("--ess", BDeu.__init__, "ess"),
              ("--expected-parents", learn, "expected_parents"),
              ("--ebic-gamma", learn, "ebic_gamma")]
    rows = [(command, flag, func, name) for command in ("learn", "score", "citest", "proxy-search")
            for flag, func, name in shared]
    rows += [("learn", "--max-networks", learn, "max_networks"),
             ("citest", "--alpha", citest.ci_test, "alpha"),
             ("citest", "--combine", citest.ci_test, "combine"),
             ("citest", "--correction", citest.ci_test, "correction"),
             ("citest", "--null", citest.ci_test, "null"),
             ("citest", "--permutations", citest.ci_test, "permutations"),
             ("proxy-search", "--samples", proxy.proxy_search, "samples"),
             ("proxy-search", "--expected-in-degree", proxy.proxy_search, "expected_parents"),
             ("proxy-search", "--fit-iterations", proxy.proxy_search, "maxiter"),
             ("proxy-search", "--kappa", proxy.proxy_search, "kappa")]
    for command, flag, func, name in rows:
        assert cli_default(command, flag) == api_default(func, name), (command, flag, name)
    prior = StructurePrior()
    assert (prior.expected_parents, prior.gamma) == (api_default(learn, "expected_parents"),
                                                     api_default(learn, "ebic_gamma"))


def test_the_objects_a_user_holds_compare_print_briefly_and_cannot_be_corrupted(asia) -> None:
    """Found by a review of the API's objects:

    - ``==`` on a ``Dataset``, a ``LearnResult``, a ``SolveResult`` with classes past the cap (its
      ``ClassTail``) raised "truth value of an array is ambiguous" — copies (pickle, joblib) compare equal;
    - ``repr`` printed every network, the whole table and the data (4.4 MB for 10,000 networks) — now a line;
    - ``Knowledge.forbidden_arrows()`` handed out its cache: clearing it made the same (frozen) Knowledge allow
      the arrows it forbids in later solves — now a read-only view;
    - a ``CITestResult`` (frozen) could not be hashed and its lists could be changed — now tuples."""
    import copy
    import pickle

    from bnilp.knowledge import Knowledge

    capped = learn(asia, bf=1e4, max_networks=2, count_past_cap=True)
    assert capped.solution.unlisted is not None and len(capped.solution.unlisted) > 0
    for obj in (capped, capped.solution, capped.dataset, capped.table, capped.solution.unlisted):
        for twin in (copy.deepcopy(obj), pickle.loads(pickle.dumps(obj))):
            assert twin == obj
    assert capped.dataset != capped.dataset.columns(capped.dataset.names[:3])
    many = learn(asia, bf=1e6, enumerate_by="dags", max_networks=500)
    assert len(many.solution.networks) == 500
    for obj in (many, many.solution, many.table, many.dataset):
        assert len(repr(obj)) < 400, (type(obj).__name__, len(repr(obj)))
    assert "status='network_limit'" in repr(many) and "networks=500" in repr(many.solution)
    score = make_score("bdeu", asia, ess=2.0)           # the score's settings, not an address
    assert repr(score).startswith("BDeu('bdeu', penalty_discount=1.0, prior='none', ess=2.0; Dataset(")

    k = Knowledge(forbidden=[("smoke", "lung"), ("lung", "smoke")])
    arrows = k.forbidden_arrows()
    with pytest.raises(TypeError):
        arrows[("smoke", "lung")] = "edited"
    assert not k.allows({v: frozenset() for v in asia.names} | {"lung": frozenset({"smoke"})})
    assert pickle.loads(pickle.dumps(k)).forbidden_arrows() == arrows

    res = ci_test(asia, "smoke", "lung", score="bic")
    assert hash(res) == hash(copy.deepcopy(res)) and isinstance(res.notes, tuple)
    assert isinstance(res.directions, tuple) and json.loads(json.dumps(res.to_dict()))["directions"]


def test_numbers_at_the_edges_of_a_float_are_one_line_and_zero_has_no_sign(asia) -> None:
    """``learn(bf=10**400)`` raised OverflowError from the check itself; ``--epsilon=-0`` wrote
    ``"epsilon": -0.0``; a discrete-only score on six continuous columns named five and no "…"."""
    from bnilp.errors import check_real

    with pytest.raises(InputError, match="bf .* must be a finite number ≥ 1, got an integer of 401 digits"):
        learn(asia, bf=10 ** 400)
    assert math.copysign(1.0, check_real(-0.0, "epsilon", 0)) == 1.0
    assert math.copysign(1.0, learn(asia, epsilon=-0.0).report["epsilon"]) == 1.0
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 6)), columns=list("PQRSTU"))
    with pytest.raises(InputError, match=r"P, Q, R, S, T, … \(6 in all\) are continuous"):
        make_score("bic", from_dataframe(frame))


def test_learn_scores_on_a_dask_cluster_as_the_command_line_does() -> None:
    """``bnilp learn --scheduler`` had no counterpart in ``learn()``: ``scheduler=`` went to the score as a
    setting ("score 'bic' takes no setting 'scheduler'", a review's find). It scores on the cluster, with the
    same table and result as one process."""
    pytest.importorskip("distributed")
    one = learn(ASIA, bf=20)
    dask = learn(ASIA, bf=20, scheduler="local", n_jobs=2)
    assert dask.table.families == one.table.families
    assert dask.report["n_networks"] == one.report["n_networks"] and dask.report["optimum"] == one.report["optimum"]


def test_a_local_cluster_s_worker_threads_leave_the_caller_s_environment_as_it_was(monkeypatch) -> None:
    """``scheduler="local"`` with BIC runs its workers as threads of the caller's process: starting them set
    OPENBLAS/MKL/OMP_NUM_THREADS=1 in the caller's environment, for every program it started later (a review);
    a worker process of its own still takes one BLAS thread."""
    pytest.importorskip("distributed")
    from bnilp import lattice

    lattice.stop_local_cluster()                   # a cluster started earlier ran its workers' start already
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    learn(ASIA, bf=20, scheduler="local", n_jobs=2)
    lattice.stop_local_cluster()
    assert not {"OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"} & set(os.environ)


def test_learn_takes_the_scoring_limits_and_counts_of_the_command_line() -> None:
    """``--score-time-limit`` and ``--counts`` had no counterpart in ``learn()`` either: ``score_time_limit``
    stops the scoring walk (the result then exact for the sizes scored, said in ``limits`` as the command line
    says it), ``counts`` chooses how the walk counts (same table either way); bad values name the parameter."""
    stopped = learn(ASIA, bf=20, score_time_limit=1e-9)
    assert {"palim", "score_time_limit"} <= set(stopped.limits) and stopped.table.meta["score_time_limit_reached"]
    families = learn(ASIA, bf=20, counts="families")
    assert families.table.meta["counts"]["mode"] == "families"
    assert families.table.families == learn(ASIA, bf=20).table.families
    # one wording for both (−1 was told "≥ 0", which 0 is not: a review)
    for bad, words in ((-1, r"a finite number of seconds > 0, got -1"), (0, r"a finite number of seconds > 0, got 0")):
        with pytest.raises(InputError, match=rf"^score_time_limit \(--score-time-limit\) must be {words}"):
            learn(ASIA, score_time_limit=bad)
    with pytest.raises(InputError, match=r"^counts \(--counts\) must be one of auto, subsets, families, got 'x'"):
        learn(ASIA, counts="x")


def test_what_reading_the_data_noticed_is_a_warning_a_notebook_shows(tmp_path) -> None:
    """Through the API an identifier column, a constant column left out and twin columns were only in the result
    (``dataset.warnings``, ``report["scoring"]``): a notebook showed nothing (a review). Each is a
    ``DataWarning`` naming the caller's line; the command line prints its own lines instead, once."""
    import warnings

    from bnilp.errors import DataWarning

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 60), "b": rng.integers(0, 3, 60)})
    frame["id"], frame["k"], frame["a2"] = [f"p{i}" for i in range(60)], "x", frame["a"].map({0: "lo", 1: "hi"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = learn(frame, palim=1)
    texts = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    assert len(texts) == 3 and {w.filename for w in caught if issubclass(w.category, DataWarning)} == {__file__}
    assert "column 'id' has a distinct value on every one" in texts[0] and "column 'k' is constant" in texts[1]
    assert "columns 'a', 'a2' are one-to-one recodings" in texts[2]
    # and kept in the result where the README says: the identifier as text, the constant and twins by name
    scoring = res.report["scoring"]
    assert res.dataset.warnings == scoring["warnings"] and "column 'id'" in scoring["warnings"][0]
    assert res.dataset.dropped == scoring["dropped_constant"] == ["k"]
    assert res.dataset.twins == scoring["twin_columns"] == [["a", "a2"]]
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(DataWarning, match="column 'k' is constant"):
        load_data(path)
    proc = subprocess.run([sys.executable, "-m", "bnilp", "score", str(path), "--palim", "1", "-o",
                           str(tmp_path / "d.scores")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3 and "DataWarning" not in proc.stderr, proc.stderr      # 3: the palim
    assert proc.stderr.count("column 'k' is constant") == 1


def test_a_result_cut_by_a_limit_says_so_in_its_repr_and_its_panel_and_dir_lists_learn(shared_data) -> None:
    """``LearnResult(status='optimal', complete=True, …)`` and the panel's "complete yes" over a run cut by its
    palim gave no sign that the set is exact only for smaller parent sets (a review); ``dir(bnilp)`` listed
    ``Any`` and no ``learn`` (tab completion)."""
    import io

    from rich.console import Console

    import bnilp

    data = shared_data / "pygobnilp" / "discrete.dat"
    result = learn(data, palim=1)
    assert result.limits == ["palim"] and repr(result).endswith(", limits=['palim'])")
    out = io.StringIO()
    print_report(result.report, Console(file=out, width=100))
    assert "limited           exact for parent sets of size ≤ 1 (palim)" in out.getvalue()
    assert "limits=" not in repr(learn(data))
    timed = {"limits": ["palim", "score_time_limit"], "exact_for_parent_sets_up_to": 2,
             "scoring": {"score_time_limit_reached": True, "palim_reached": True}}
    out = io.StringIO()
    print_report(timed, Console(file=out, width=100))
    assert "limited           exact for parent sets of size ≤ 2 (the scoring time limit) " in out.getvalue()
    assert "score_time_limit" not in out.getvalue()
    assert {"Knowledge", "LearnResult", "learn", "solve_table"} <= set(dir(bnilp)) and "Any" not in dir(bnilp)
    # help(bnilp) lists what __all__ holds: LearnResult was missing (a review)
    import pydoc
    assert "class LearnResult(" in pydoc.render_doc(bnilp, renderer=pydoc.plaintext)


@pytest.mark.parametrize("package, nth", [("numba", 20), ("pandas", 30)])
def test_an_interrupt_during_the_first_calls_imports_leaves_the_session_usable(tmp_path, shared_data, package: str,
                                                                              nth: int) -> None:
    """The first ``bnilp.learn`` imports the numerical stack; a Ctrl-C in the middle of it (a notebook's kernel
    interrupt) left numba or pandas half imported and every later call failed ("module 'numba' has no attribute
    'core'", "numpy._core.multiarray failed to import") until a restart (a review). The interrupt is held off
    until the import is over, then raised: the call is interrupted and the next one works. Here the interrupt
    is sent from inside the ``nth`` import of ``package``."""
    script = tmp_path / "first_call.py"
    script.write_text(
        "import builtins, signal, sys\n"
        "import bnilp\n"
        "real, seen = builtins.__import__, []\n"
        "def counting(name, *args, **kwargs):\n"
        f"    if name.startswith({package!r}):\n"
        "        seen.append(name)\n"
        f"        if len(seen) == {nth}:\n"
        "            signal.raise_signal(signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = counting\n"
        "try:\n"
        "    bnilp.learn(sys.argv[1])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', len(seen) >= 20)\n"
        "builtins.__import__ = real\n"
        "print(bnilp.learn(sys.argv[1]).report['optimum'])\n")
    proc = subprocess.run([sys.executable, str(script), str(shared_data / "pygobnilp" / "discrete.dat")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "interrupted True"
    assert math.isclose(float(proc.stdout.splitlines()[1]), learn(shared_data / "pygobnilp" / "discrete.dat")
                        .report["optimum"])


def test_numpy_scalars_give_the_plain_values_results_and_json() -> None:
    """A fuzz of the API (a review): ``seed=np.int64(1)`` and ``maxiter=np.int64(20)`` were kept as NumPy integers
    in a proxy result, ``alpha=np.float64(0.05)`` made a CI test's verdict a ``numpy.bool``, so ``json.dumps`` of
    their ``to_dict()`` failed; ``ebic_gamma=np.float32(0.5)`` made the penalty float32 arithmetic (another
    optimum). Each is now the plain value's result."""
    from bnilp.proxy import greedy_search

    numpy_seeded = json.loads(json.dumps(greedy_search(make_score("bic", load_data(ASIA)), seed=np.int64(1))
                                         .to_dict()))
    plain = greedy_search(make_score("bic", load_data(ASIA)), seed=1).to_dict()
    assert numpy_seeded["seed"] == 1 and numpy_seeded["parents"] == plain["parents"]
    assert numpy_seeded["score"] == plain["score"]
    frame = simulate(4, 200, 1.5, seed=1)[0]
    data = from_dataframe(frame, discrete=["X2", "X3"])
    got = ci_test(data, "X1", "X2", ["X3"], alpha=np.float64(0.05)).to_dict()
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(ci_test(data, "X1", "X2", ["X3"], alpha=0.05)
                                                                .to_dict()))
    assert (learn(ASIA, bf=3, palim=1, structure_prior="ebic", ebic_gamma=np.float32(0.5)).report["optimum"]
            == learn(ASIA, bf=3, palim=1, structure_prior="ebic", ebic_gamma=0.5).report["optimum"])


@pytest.mark.parametrize("call, says", [
    (lambda: learn(ASIA, prior=pd.Series(["dags"])), r"prior \(--prior\) must be one of dags, mecs"),
    (lambda: learn(ASIA, enumerate_by=pd.Series(["auto"])), r"enumerate_by \(--enumerate\) must be one of"),
    (lambda: learn(ASIA, structure_prior=pd.Series(["none"])), r"structure_prior \(--prior\) must be one of"),
    (lambda: learn(ASIA, scheduler=pd.Series(["local"])), r"scheduler \(--scheduler\) must be a Dask scheduler"),
    (lambda: learn(ASIA, counts=pd.Series(["auto"])), r"counts \(--counts\) must be one of"),
    (lambda: learn(ASIA, bf=3).fit(method=False), r"method"),
    (lambda: learn(ASIA, bf=3).fit(method=""), r"method"),
    (lambda: Knowledge(tiers=False), r"tiers is a list of lists of names, got False"),
    (lambda: Knowledge(tiers=0), r"tiers is a list of lists of names, got 0"),
])
def test_values_of_the_wrong_kind_are_refused_naming_the_parameter(call, says) -> None:
    """A fuzz of the API (a review): a pandas Series given for a choice raised pandas' bare "truth value of a
    Series is ambiguous"; ``method=False`` or ``''`` ran as the default; ``tiers=False`` or ``0`` as no tiers."""
    with pytest.raises(InputError, match=says):
        call()


def test_write_jaakkola_s_sidecar_is_true_or_false_and_ci_test_s_variables_are_names_or_indices(tmp_path) -> None:
    table = score_parent_sets(make_score("bic", load_data(ASIA)), epsilon=1.0)
    for value in (0, "", None, "no"):
        with pytest.raises(InputError, match="sidecar must be true or false|sidecar"):
            write_jaakkola(table, tmp_path / "t.scores", sidecar=value)
    assert not (tmp_path / "t.scores").exists()
    data = load_data(ASIA)
    for x in (None, 1.0, [0]):
        with pytest.raises(InputError, match=r"^x must be a column name or index, got"):
            ci_test(data, x, "tub", [])


def test_sizes_past_any_memory_are_a_limit_not_an_overflow() -> None:
    """``simulate(1e300, …)`` raised ``OverflowError`` and ``sample_dag`` with 10³⁰ rows NumPy's "Maximum allowed
    dimension exceeded" (a review): both are the memory limit they are."""
    from bnilp.errors import LimitError

    with pytest.raises(LimitError, match="simulating 50 rows of"):
        simulate(1e300, 50, 1.5)
    with pytest.raises(LimitError, match="simulating 1000000000000000000000000000000 rows of 1 nodes"):
        sample_dag({"a": []}, {"a": "discrete"}, 10**30)
    with pytest.raises(InputError, match="asks for more than"):
        sample_dag({"a": []}, {"a": "continuous"}, 50, bins=10**30)


def test_a_structure_prior_s_setting_with_another_prior_is_refused() -> None:
    """``learn(ebic_gamma=2)`` or ``expected_parents=2`` under ``structure_prior="none"`` ran with the setting
    ignored (a review); the command line refused ``--ebic-gamma`` without ``--prior ebic`` already."""
    with pytest.raises(InputError, match=r"ebic_gamma is a setting of structure_prior='ebic'"):
        learn(ASIA, bf=3, ebic_gamma=2.0)
    with pytest.raises(InputError, match=r"expected_parents is a setting of structure_prior='binomial'"):
        learn(ASIA, bf=3, structure_prior="ebic", expected_parents=2.0)
    assert learn(ASIA, bf=3, structure_prior="ebic", ebic_gamma=2.0).complete
    # a setting's documented default stays taken under any prior, as before expected_parents=None meant "default"
    # (a review: expected_parents=1.0 with structure_prior="none" was accepted, then refused)
    assert learn(ASIA, bf=3, structure_prior="none", expected_parents=1.0, ebic_gamma=0.5).complete


def test_tiers_from_a_generator_are_kept_and_a_dask_cluster_object_is_a_scheduler() -> None:
    """A generator of tiers was read once by the type check and then found empty: the knowledge was lost without a
    word; a Dask cluster object, which ``distributed.Client`` takes, was refused by the scheduler's new type check
    (a review of the fixes)."""
    assert Knowledge(tiers=(t for t in [["asia", "smoke"], ["tub"]])).tiers == (("asia", "smoke"), ("tub",))
    assert Knowledge(tiers=iter([["a"], ["b"]]), strict_tiers=[0]).tiers == (("a",), ("b",))
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        assert learn(ASIA, bf=3, scheduler=cluster, n_jobs=2).report["n_networks"] == learn(ASIA, bf=3).report[
            "n_networks"]


def test_categories_past_the_memory_are_a_limit() -> None:
    """2³¹ − 1 categories asked 16 GiB a row of the draw: a bare MemoryError (a review of the size checks)."""
    from bnilp.errors import LimitError

    with pytest.raises(LimitError, match="simulating 50 rows of 1 nodes needs about"):
        sample_dag({"a": []}, {"a": "discrete"}, 50, categories={"a": 2**31 - 1})
    with pytest.raises(LimitError, match="simulating 50 rows of 3 nodes"):
        simulate(3, 50, 1.0, categories=(2, 2**31 - 1))


def test_every_count_takes_a_whole_float_as_its_integer_and_refuses_a_fraction() -> None:
    """A count read from a JSON or YAML configuration arrives as ``2.0``: ``simulate(4.0, …)`` took it while
    ``learn(palim=2.0)`` refused it (an API fuzz). Every count now goes through one check
    (:func:`bnilp.errors.check_count`): a whole real number is its integer, with the same result; a fraction,
    NaN, ∞, a bool or a string is refused naming the parameter."""
    from bnilp.proxy import greedy_search

    frame = simulate(4.0, 60.0, 1.0, seed=3.0)[0]
    assert frame.equals(simulate(4, 60, 1.0, seed=3)[0])
    as_float = learn(ASIA, bf=3.0, palim=2.0, max_networks=50.0, n_jobs=1.0)
    as_int = learn(ASIA, bf=3, palim=2, max_networks=50, n_jobs=1)
    assert as_float.report["optimum"] == as_int.report["optimum"]
    assert as_float.report["n_networks"] == as_int.report["n_networks"]
    score = make_score("bic", load_data(ASIA))
    assert (proxy_search(score, samples=8.0, refine=1.0, seed=1, maxiter=20.0).to_dict()["parents"]
            == proxy_search(score, samples=8, refine=1, seed=1, maxiter=20).to_dict()["parents"])
    assert greedy_search(score, seed=2.0).to_dict()["seed"] == 2
    mixed = from_dataframe(frame, discrete=["X2"])
    assert make_score("cgd", mixed, bins=4.0).bins == 4
    assert (ci_test(mixed, "X1", "X3", null="local-permutation", permutations=9.0, seed=1).to_dict()
            == ci_test(mixed, "X1", "X3", null="local-permutation", permutations=9, seed=1).to_dict())
    for bad in (2.5, float("nan"), float("inf"), True, "2", np.float32(1.5)):
        with pytest.raises(InputError, match=r"^palim \(--palim\) must be an integer ≥ 0, got "):
            learn(ASIA, palim=bad)
        with pytest.raises(InputError, match=r"^n_nodes \(--nodes\) must be an integer ≥ 1, got "):
            simulate(bad, 60, 1.0)
