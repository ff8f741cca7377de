"""A scoring time limit (``score_parent_sets(time_limit=…)``, ``--score-time-limit``): the walk deepens,
palim 1, 2, …, and what it returns when time runs out is exactly the walk with the palim of its last
finished depth — reported as such in the sidecar, the learn report and the exit code (3)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import bnilp.parentsets as parentsets
from bnilp.cli import EXIT_LIMIT, main
from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.knowledge import parse_knowledge
from bnilp.parentsets import score_parent_sets
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame
from tests.mixed_helpers import random_mixed


def discrete(seed: int, n: int, N: int):
    frame = random_discrete_frame(seed, n=n, N=N, max_arity=3)
    return from_dataframe(frame, discrete=list(frame.columns))


def deadline_after(monkeypatch, checks: int) -> None:
    """The deadline passes at its ``checks``-th look (a clock that does not depend on the machine)."""
    seen = {"n": 0}

    def passed(self) -> bool:
        seen["n"] += 1
        return seen["n"] >= checks

    monkeypatch.setattr(parentsets.Deadline, "passed", passed)


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_a_time_limited_walk_is_the_palim_walk_of_its_last_finished_depth(monkeypatch, score_name: str) -> None:
    data = discrete(3, 8, 300)
    eps = math.log(20)
    full = score_parent_sets(make_score(score_name, data), epsilon=eps)
    depths = set()
    for checks in (1, 4, 12, 40, 10_000):
        with monkeypatch.context() as m:
            deadline_after(m, checks)
            got = score_parent_sets(make_score(score_name, data), epsilon=eps, time_limit=5.0)
        meta = got.meta
        if not meta["score_time_limit_reached"]:          # every depth finished: the unlimited table
            assert got.families == full.families and meta["palim"] is None and not meta["palim_reached"]
            depths.add("all")
            continue
        d = meta["exact_for_parent_sets_up_to"]
        assert meta["palim_reached"] and meta["palim"] == d
        assert [p["palim"] for p in meta["deepening"]] == list(range(1, d + 2))
        assert [p["finished"] for p in meta["deepening"]] == [True] * d + [False]
        assert got.families == score_parent_sets(make_score(score_name, data), epsilon=eps, palim=d).families
        assert all(len(ps) <= d for fam in got.families.values() for ps in fam)
        depths.add(d)
    assert len(depths) >= 3 and "all" in depths       # stopped at several depths, and once not at all


def test_a_limit_before_the_first_depth_keeps_the_empty_sets(monkeypatch) -> None:
    data = discrete(4, 6, 200)
    deadline_after(monkeypatch, 1)
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(3), time_limit=1.0)
    assert got.meta["exact_for_parent_sets_up_to"] == 0 and got.meta["palim_reached"]
    assert all(set(fam) == {frozenset()} for fam in got.families.values())


def test_a_time_limit_that_is_not_reached_changes_nothing_but_the_record() -> None:
    data = discrete(5, 7, 400)
    full = score_parent_sets(make_score("bdeu", data), epsilon=math.log(3))
    got = score_parent_sets(make_score("bdeu", data), epsilon=math.log(3), time_limit=600.0)
    assert got.families == full.families
    assert not got.meta["score_time_limit_reached"] and not got.meta["palim_reached"] and got.meta["palim"] is None
    assert all(p["finished"] for p in got.meta["deepening"])
    assert tallies(got.meta) == tallies(full.meta)
    with pytest.raises(InputError, match=r"must be a finite number of seconds > 0, got 0\.0"):
        score_parent_sets(make_score("bic", data), time_limit=0.0)
    with pytest.raises(InputError, match=r"must be a finite number of seconds > 0, got -1"):
        score_parent_sets(make_score("bic", data), time_limit=-1)



def test_score_refuses_a_bad_limit_or_counts_mode_in_one_line_naming_the_flag(tmp_path) -> None:
    """``score --score-time-limit -1`` printed the data's type line before its error (checked once the data were
    read; learn, solve and count check first), and ``--counts subsets`` with a score it does not apply to was
    refused in the API's words alone (a review)."""
    from click.testing import CliRunner

    from bnilp.cli import main
    from bnilp.data import default_path

    out = tmp_path / "x.scores"
    res = CliRunner().invoke(main, ["score", str(default_path("asia.csv")), "-o", str(out), "--score-time-limit", "-1"])
    assert res.exit_code == 2 and res.output == ("bnilp: error: --score-time-limit must be a finite number of seconds "
                                                 "> 0, got -1.0\n") and not out.exists()
    mixed = tmp_path / "m.csv"
    mixed.write_text("a,b\n" + "".join(f"{i % 2},{i * 0.37 % 1}\n" for i in range(30)))
    res = CliRunner().invoke(main, ["score", str(mixed), "--score", "cg", "--counts", "subsets", "-q", "-o", str(out)])
    assert res.exit_code == 2 and "counts='subsets' (--counts subsets) does not apply here" in res.output


def tallies(meta: dict) -> tuple:
    """What a sidecar says the walk did (sets scored, kept, each rule's firings, overall and by variable), without
    its timings."""
    per = {v: {k: x for k, x in rec.items() if k != "seconds"} for v, rec in meta["per_variable"].items()}
    return meta["scored"], meta["kept"], meta["pruned"], per


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
@pytest.mark.parametrize("seed", range(3))
def test_a_palim_that_cuts_nothing_records_the_prunings_of_the_walk_without_it(score_name: str, seed: int) -> None:
    """The last pass of a deepening (or any palim) that leaves no set unscored stopped before generating the next
    level, whose candidates the count-free rules all prune: the walk without a palim generates and prunes them, so
    its tallies (R2's above all) were larger — zoo under BIC: R2 21,905 without a limit, 6,535 with one not
    reached (a review). They are counted now, and the record is the unlimited walk's."""
    data = discrete(20 + seed, 9, 60)
    eps = math.log(3)
    full = score_parent_sets(make_score(score_name, data), epsilon=eps)
    deepest = max(len(ps) for fam in full.families.values() for ps in fam)
    for palim in range(deepest, 9):
        capped = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=palim)
        if not capped.meta["palim_reached"]:
            assert capped.families == full.families and tallies(capped.meta) == tallies(full.meta), palim
    deepened = score_parent_sets(make_score(score_name, data), epsilon=eps, time_limit=600.0)
    assert not deepened.meta["score_time_limit_reached"] and tallies(deepened.meta) == tallies(full.meta)


def test_a_default_palim_caps_the_deepening_and_is_recorded_as_without_a_limit() -> None:
    """Mixed data under CG (only R1 applies, so a default palim is used; on 6 variables it is n − 1): the
    deepened run records the same palim, default flag and sets as the run without a time limit."""
    data = random_mixed(np.random.default_rng(2), "dcdcdc", 150)
    ref = score_parent_sets(make_score("cg", data), epsilon=math.log(3))
    got = score_parent_sets(make_score("cg", data), epsilon=math.log(3), time_limit=600.0)
    assert got.families == ref.families
    for key in ("palim", "palim_default", "palim_reached", "exact_for_parent_sets_up_to"):
        assert got.meta[key] == ref.meta[key], key


def test_the_palim_asked_for_caps_the_deepening() -> None:
    data = discrete(6, 7, 400)
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(20), palim=2, time_limit=600.0)
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(20), palim=2)
    assert got.families == ref.families and [p["palim"] for p in got.meta["deepening"]] == [1, 2]
    assert got.meta["palim_reached"] == ref.meta["palim_reached"] and not got.meta["score_time_limit_reached"]


def test_the_command_line_reports_a_scoring_time_limit_and_exits_3(monkeypatch, tmp_path) -> None:
    frame = random_discrete_frame(7, n=8, N=300, max_arity=3)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "s.scores"
    deadline_after(monkeypatch, 12)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(out), "--bf", "20", "--score-time-limit", "30"])
    assert res.exit_code == EXIT_LIMIT, res.output
    meta = json.loads((tmp_path / "s.scores.json").read_text())
    d = meta["exact_for_parent_sets_up_to"]
    assert meta["score_time_limit_reached"] and meta["score_time_limit"] == 30.0 and d >= 1
    assert "scoring time limit (30 s)" in res.output
    assert f"exact only for parent sets of size ≤ {d} (the scoring time limit)" in res.output
    report = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["learn", str(path), "--bf", "20", "--score-time-limit", "30", "-q",
                                    "--json", str(report)])
    assert res.exit_code == EXIT_LIMIT, res.output
    doc = json.loads(report.read_text())
    assert {"palim", "score_time_limit"} <= set(doc["limits"]) and doc["scoring"]["score_time_limit_reached"]
    assert "(the scoring time limit)" in res.output


def test_a_palim_that_cuts_the_walk_exits_3_from_score_too(tmp_path) -> None:
    frame = random_discrete_frame(8, n=6, N=500, max_arity=3)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(tmp_path / "s.scores"), "-q", "--palim", "1"])
    meta = json.loads((tmp_path / "s.scores.json").read_text())
    assert meta["palim_reached"] and res.exit_code == EXIT_LIMIT
    assert "exact only for parent sets of size ≤ 1 (palim)" in res.output


@pytest.mark.parametrize("score_name", ["bic", "bdeu"])
def test_a_palim_is_reported_as_reached_exactly_when_it_left_sets_unscored(score_name: str) -> None:
    """``palim_reached`` (hence exit 3 and "exact only for sets ≤ K") holds iff the walk without the palim
    scores more sets — a candidate beyond K that the count-free rules would prune does not count."""
    data = discrete(9, 9, 500)
    eps = math.log(3)
    full = score_parent_sets(make_score(score_name, data), epsilon=eps)
    seen = set()
    for k in range(0, 9):
        cut = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=k)
        more = cut.meta["scored"] < full.meta["scored"]
        assert cut.meta["palim_reached"] == more, k
        seen.add(more)
    assert seen == {True, False}


@pytest.mark.filterwarnings("ignore::bnilp.errors.DataWarning")        # twin columns at 20 rows: no matter here
@pytest.mark.parametrize("score_name", ["bic", pytest.param("bdeu", marks=pytest.mark.slow)])     # bdeu: 5.4 s
def test_each_walk_says_its_palim_was_reached_exactly_when_one_more_size_scores_a_set(score_name: str) -> None:
    """Per child, on wide data whose many candidates are looked at a growing slice at a time (one frontier row,
    then two, four, … until a survivor): ``palim_reached`` holds iff the walk with the palim one higher scores
    more sets for that child, and a walk whose palim cut nothing tallies the same prunings as the higher one."""
    seen = set()
    for seed, n, N in ((3, 40, 20), (4, 30, 60)):
        data = discrete(seed, n, N)
        eps = math.log(3)
        for k in (1, 2, 3):
            cut = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=k).meta["per_variable"]
            more = score_parent_sets(make_score(score_name, data), epsilon=eps, palim=k + 1).meta["per_variable"]
            reached = {v: st["palim_reached"] for v, st in cut.items()}
            assert reached == {v: more[v]["scored"] > st["scored"] for v, st in cut.items()}, (seed, k)
            assert all(cut[v]["pruned"] == more[v]["pruned"] for v in cut if not reached[v]), (seed, k)
            seen |= set(reached.values())
    assert seen == ({True, False} if score_name == "bic" else {True})   # BDeu's walks here all pass size 3


def test_the_palim_of_required_knowledge_is_kept_when_deepening() -> None:
    """Required knowledge on more than 16 variables walks the children it touches without pruning, up to a
    default palim; a time limit that is not reached gives that run, not a deeper one."""
    frame = random_discrete_frame(10, n=17, N=120, max_arity=2)
    data = from_dataframe(frame, discrete=list(frame.columns))
    names = list(frame.columns)
    k = parse_knowledge(f"require {names[0]} -- {names[1]}\n")
    ref = score_parent_sets(make_score("bic", data), epsilon=math.log(3), knowledge=k)
    got = score_parent_sets(make_score("bic", data), epsilon=math.log(3), knowledge=k, time_limit=600.0)
    assert ref.meta["knowledge_palim"] is not None and ref.meta["palim_reached"]
    assert got.families == ref.families and not got.meta["score_time_limit_reached"]
    for key in ("palim", "palim_reached", "exact_for_parent_sets_up_to", "knowledge_palim"):
        assert got.meta[key] == ref.meta[key], key


def test_a_deeper_pass_that_cannot_run_ends_the_deepening_without_blaming_the_clock(monkeypatch, tmp_path) -> None:
    """``counts='subsets'`` whose table no longer fits a deeper pass is an input error without a time limit;
    under one, the last finished pass is kept (exact for its palim, exit 3) and the record names the refusal,
    not the time limit, which was far from reached."""
    import bnilp.lattice as lattice
    monkeypatch.setattr(lattice, "SUBSET_TABLE_MAX_SUBSETS", 100)    # the real 4 M, reached on small data
    frame = random_discrete_frame(3, n=8, N=2000, max_arity=3)
    data = from_dataframe(frame, discrete=list(frame.columns))
    eps = math.log(20)
    with pytest.raises(InputError, match="subsets"):
        score_parent_sets(make_score("bdeu", data), epsilon=eps, counts="subsets")
    got = score_parent_sets(make_score("bdeu", data), epsilon=eps, counts="subsets", time_limit=600.0)
    meta = got.meta
    d = meta["exact_for_parent_sets_up_to"]
    assert not meta["score_time_limit_reached"] and not meta["score_memory_limit_reached"]
    assert meta["palim_reached"] and "subsets" in meta["score_deeper_pass_refused"]
    assert meta["deepening"][-1]["palim"] == d + 1 and not meta["deepening"][-1]["finished"]
    assert got.families == score_parent_sets(make_score("bdeu", data), epsilon=eps, palim=d).families
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    res = CliRunner().invoke(main, ["score", str(path), "-o", str(tmp_path / "s.scores"), "--bf", "20",
                                    "--score", "bdeu", "--counts", "subsets", "--score-time-limit", "600"])
    assert res.exit_code == EXIT_LIMIT, res.output
    assert "scoring time limit" not in res.output and "could not run" in res.output
    assert "scoring stopped deepening" in res.output


def test_the_default_palim_is_said_once_however_many_passes_deepen_to_it(caplog) -> None:
    """Unpruned on 18 variables a default palim (5) applies; under a scoring time limit each deepening pass said
    "no pruning rule bounds the parent-set size … using palim 5" again, and the pass at depth 0 once more (a
    review: three lines for one run). Said once; the passes are still all made."""
    import logging

    data = discrete(5, 18, 60)
    with caplog.at_level(logging.WARNING, logger="bnilp.parentsets"):
        table = score_parent_sets(make_score("bic", data), prune=False, time_limit=600.0)
    said = [r for r in caplog.records if "no pruning rule bounds the parent-set size" in r.getMessage()]
    assert len(said) == 1 and "using palim 5" in said[0].getMessage()
    assert [p["palim"] for p in table.meta["deepening"]] == [1, 2, 3, 4, 5]      # the last one reaches palim 5
