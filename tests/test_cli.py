"""The score / solve / learn commands: outputs, JSON contract, exit codes, one-line errors."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bnilp.cli import main
from bnilp.scorefile import read_jaakkola
from tests.conftest import random_discrete_frame

JSON_FIELDS = {"optimum", "bound", "gap", "optimum_proven", "status", "seconds", "epsilon", "complete", "n_networks",
               "n_mecs", "networks", "mecs", "edges", "prior"}


@pytest.fixture
def small_csv(tmp_path):
    path = tmp_path / "small.csv"
    random_discrete_frame(11, n=5, N=400).to_csv(path, index=False)
    return path


def run(runner: CliRunner, *args: str):
    return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_score_writes_file_and_sidecar(runner, small_csv, tmp_path) -> None:
    out = tmp_path / "s.scores"
    res = run(runner, "score", small_csv, "-o", out, "--bf", "20", "-q")
    assert res.exit_code == 0, res.output
    table = read_jaakkola(out)
    assert table.variables == ["V0", "V1", "V2", "V3", "V4"]
    meta = json.loads((tmp_path / "s.scores.json").read_text())
    assert meta["score"] == "bic" and meta["epsilon"] == pytest.approx(math.log(20)) and meta["N"] == 400
    assert meta["pruned"]["R1"] > 0 and meta["kept"] == table.n_parent_sets()


def test_scoring_into_a_file_prints_its_table_whole_and_no_blank_line_first(runner, small_csv, tmp_path,
                                                                            monkeypatch) -> None:
    """Not at a terminal the output is :data:`~bnilp.terminal.FILE_WIDTH` wide and no progress bar is drawn: at
    rich's 80 columns the scoring table's counts were cut to "1456…", and the transient bar left a blank line
    before it (found by a review). Every count of the sidecar's tallies is in the printed table."""
    monkeypatch.delenv("COLUMNS", raising=False)
    out = tmp_path / "s.scores"
    res = run(runner, "score", small_csv, "-o", out, "--no-prune")
    assert res.exit_code == 0, res.output
    assert not res.output.startswith("\n") and "…" not in res.output
    meta = json.loads((tmp_path / "s.scores.json").read_text())
    assert str(meta["scored"]) in res.output or f"{meta['scored']:,}" in res.output


def test_score_refuses_a_bf_that_no_pruning_would_use(runner, small_csv, tmp_path) -> None:
    """``--bf``/``--epsilon`` set what the pruning keeps; with ``--no-prune`` they were recorded in the sidecar and
    used by nothing (a review) — an option the command would ignore is refused, before any file is written."""
    for flag, value in (("--bf", "3"), ("--epsilon", "1")):
        res = run(runner, "score", small_csv, "-o", tmp_path / "s.scores", flag, value, "--no-prune", "--palim", "1")
        assert res.exit_code == 2 and not (tmp_path / "s.scores").exists()
        assert res.output.strip() == (f"bnilp: error: {flag} sets what the pruning keeps; with --no-prune every parent "
                                      "set up to --palim is kept and it would not apply (the BF of the credible set is "
                                      "solve's --bf)")


def test_the_bf_reads_back_as_given_and_an_overflowing_one_is_null_in_strict_json(runner, small_csv, tmp_path) -> None:
    """``bf`` is e^ε to 15 significant digits: exp(ln 20) = 19.999999999999996 is written 20.0, in the score
    file's sidecar and in the report; e^800 overflows a float and strict JSON has no infinity, so it is null."""
    scores, report = tmp_path / "s.scores", tmp_path / "r.json"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "20", "-q").exit_code == 0
    assert run(runner, "learn", small_csv, "--bf", "20", "--json", report, "-q").exit_code == 0
    assert json.loads((tmp_path / "s.scores.json").read_text())["bf"] == 20.0
    assert json.loads(report.read_text())["bf"] == 20.0
    huge = tmp_path / "huge.scores"
    assert run(runner, "score", small_csv, "-o", huge, "--epsilon", "800", "-q").exit_code == 0
    text = (tmp_path / "huge.scores.json").read_text()
    meta = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not strict JSON"))
    assert meta["bf"] is None and meta["epsilon"] == 800


def test_solve_and_learn_agree_and_follow_the_json_contract(runner, small_csv, tmp_path) -> None:
    scores, a, b = tmp_path / "s.scores", tmp_path / "a.json", tmp_path / "b.json"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "20", "-q").exit_code == 0
    assert run(runner, "solve", scores, "--bf", "20", "--json", a, "-q").exit_code == 0
    assert run(runner, "learn", small_csv, "--bf", "20", "--json", b, "-q").exit_code == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert JSON_FIELDS <= set(ra) and JSON_FIELDS <= set(rb)
    assert ra["optimum"] == rb["optimum"] and ra["n_networks"] == rb["n_networks"]
    assert ra["status"] == "optimal" and ra["complete"] is True and ra["gap"] == 0
    for net in ra["networks"]:
        assert set(net["parents"]) == {"V0", "V1", "V2", "V3", "V4"}
    assert [n["score"] for n in ra["networks"]] == sorted((n["score"] for n in ra["networks"]), reverse=True)
    assert all({"score", "n_dags", "posterior", "cpdag"} <= set(m) for m in ra["mecs"])
    assert all({"from", "to", "posterior"} <= set(e) and e["posterior"] > 0 for e in ra["edges"])


def test_learn_default_instance_writes_a_report(runner, tmp_path) -> None:
    report = tmp_path / "rep"
    res = run(runner, "learn", "--report", report, "--dot", tmp_path / "best.dot", "--graphml", tmp_path / "b.graphml")
    assert res.exit_code == 0, res.output
    assert "credible" in res.output.lower()
    for name in ("edges.csv", "mecs.csv", "networks.json", "heatmap.png", "averaged.png"):
        assert (report / name).exists(), name
    assert "->" in (tmp_path / "best.dot").read_text()


def test_total_seconds_covers_the_report_folder(runner, tmp_path, monkeypatch) -> None:
    """``total_seconds`` is the whole command (README): writing ``--report DIR`` (tens of seconds on a large set)
    was left out — 21 s of a 55-s command (a review). A report that takes 0.6 s shows in it."""
    import time

    import bnilp.cli.learn as cli_learn

    write = cli_learn.write_report

    def slow(*args, **kwargs):
        time.sleep(0.6)
        return write(*args, **kwargs)

    monkeypatch.setattr(cli_learn, "write_report", slow)
    t0 = time.perf_counter()
    res = run(runner, "learn", "--report", tmp_path / "rep", "--json", tmp_path / "r.json", "-q")
    took = time.perf_counter() - t0
    total = json.loads((tmp_path / "r.json").read_text())["total_seconds"]
    assert res.exit_code == 0 and 0.6 <= total <= took, (total, took)


def test_network_limit_is_reported_with_exit_3(runner, small_csv, tmp_path) -> None:
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["learn", str(small_csv), "--bf", "150", "--max-networks", "2", "--json", str(out),
                               "--enumerate", "dags"])
    assert res.exit_code == 3
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["status"] == "network_limit" and doc["n_networks"] == 2
    assert "incomplete" in res.output.lower() or "truncated" in res.output.lower()


def test_time_limit_on_a_larger_problem_is_honest(runner, shared_data, tmp_path) -> None:
    """23 variables (beyond the dynamic programme): branch-and-cut needs about half a minute, 2 s stop it."""
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["learn", str(shared_data / "liao2019_ebnsl" / "parkinsons.csv"), "--no-header",
                               "--discrete", "all", "--bf", "3", "--time-limit", "2", "--json", str(out), "-q"])
    doc = json.loads(out.read_text())
    assert res.exit_code == 3 and doc["complete"] is False and doc["status"] == "time_limit"


@pytest.mark.parametrize("args,pattern", [
    (["score", "/nonexistent.csv", "-o", "x.scores"], "no such file"),
    (["learn", "/nonexistent.csv"], "no such file"),
    (["solve", "/nonexistent.scores"], "no such file"),
    (["learn", "--bf", "0.5"], "--bf must be"),
    (["learn", "--epsilon", "-1"], "--epsilon must be"),
    (["learn", "--prior", "dags", "--prior", "mecs"], "conflicting"),
])
def test_bad_input_gives_one_line_and_exit_2(runner, args, pattern) -> None:
    res = runner.invoke(main, args)
    assert res.exit_code == 2, res.output
    assert pattern in res.output
    assert "Traceback" not in res.output


def test_malformed_score_file_names_the_line(runner, tmp_path) -> None:
    bad = tmp_path / "bad.scores"
    bad.write_text("2\nA 1\n-1.0 0\nB 2\n-2.0 0\n")
    res = runner.invoke(main, ["solve", str(bad)])
    assert res.exit_code == 2 and f"{bad}:5: file ends early" in res.output


def test_unknown_variable_and_duplicate_names(runner, tmp_path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n2,1\n1,1\n")
    res = runner.invoke(main, ["learn", str(data), "--discrete", "zz"])
    assert res.exit_code == 2 and "unknown variable 'zz'" in res.output
    dup = tmp_path / "dup.csv"
    dup.write_text("a,a\n1,2\n2,1\n")
    res = runner.invoke(main, ["score", str(dup), "-o", str(tmp_path / "x.scores")])
    assert res.exit_code == 2 and "duplicate column name 'a'" in res.output


def test_infeasible_score_file(runner, tmp_path) -> None:
    path = tmp_path / "cyc.scores"
    path.write_text("2\nA 1\n-1.0 1 B\nB 1\n-1.0 1 A\n")
    res = runner.invoke(main, ["solve", str(path)])
    assert res.exit_code == 2 and f"{path}: the score table admits no DAG" in res.output.replace("\n", "")
    assert res.output.count("no DAG") == 1      # said once, not "admits no DAG: the score table admits no DAG"


def test_solve_refuses_a_bf_larger_than_the_file_was_pruned_for(runner, small_csv, tmp_path) -> None:
    scores = tmp_path / "s.scores"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "3", "-q").exit_code == 0
    res = runner.invoke(main, ["solve", str(scores), "--bf", "20"])
    assert res.exit_code == 2 and "pruned for" in res.output


def test_constant_column_warns_and_leaves_the_network(runner, tmp_path) -> None:
    frame = random_discrete_frame(3, n=3, N=100)
    frame["K"] = 7
    path = tmp_path / "c.csv"
    frame.to_csv(path, index=False)
    res = run(runner, "score", path, "-o", tmp_path / "c.scores")
    assert res.exit_code == 0 and "'K' is constant" in res.output
    assert "K" not in read_jaakkola(tmp_path / "c.scores").variables


@pytest.mark.parametrize("score", ["cg", "cgd", "mvp", "mml"])
def test_learn_mixed_data_end_to_end(runner, shared_data, tmp_path, score) -> None:
    out, report = tmp_path / "r.json", tmp_path / "rep"
    args = ["learn", str(shared_data / "mixed" / "clgaussian.test"), "--score", score, "--bf", "20",
            "--json", str(out), "--report", str(report), "-q"]
    if score == "mvp":
        args += ["--mvp-degree", "1", "--palim", "2"]
    res = runner.invoke(main, args)
    # a palim that cut parent sets is a limit: reported in the JSON and by exit code 3
    assert res.exit_code == (3 if score == "mvp" else 0), res.output
    doc = json.loads(out.read_text())
    assert doc["complete"] and doc["n_networks"] >= 1 and doc["scoring"]["score"] == score
    assert doc["limits"] == (["palim"] if score == "mvp" else [])
    assert set(doc["networks"][0]["parents"]) == set("ABCDEFGH")
    assert (report / "edges.csv").exists()
    if score == "mvp":
        assert doc["exact_for_parent_sets_up_to"] == 2


def test_default_palim_covers_every_set_on_small_data() -> None:
    from bnilp.parentsets import DEFAULT_FAMILY_BUDGET, default_palim

    assert default_palim(8) == 7
    n = 40
    k = default_palim(n)
    total = n * sum(math.comb(n - 1, i) for i in range(k + 1))
    assert total <= DEFAULT_FAMILY_BUDGET < total + n * math.comb(n - 1, k + 1)


def test_optimum_only_returns_one_optimal_network_with_timing(runner, small_csv, tmp_path, monkeypatch) -> None:
    """--optimum-only (solve and learn): OPT proven, one network, exit 0, per-part timing in stats (the
    dynamic programme's, or branch-and-cut's above ``DP_MAX_VARIABLES``); --bf 1 still lists every tied
    optimal network; a BF > 1 contradicts it."""
    scores, a, b, c = tmp_path / "s.scores", tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "1", "-q").exit_code == 0
    res = run(runner, "solve", scores, "--optimum-only", "--json", a, "-q")
    assert res.exit_code == 0, res.output
    assert run(runner, "solve", scores, "--bf", "1", "--json", b, "-q").exit_code == 0
    assert run(runner, "learn", small_csv, "--optimum-only", "--json", c, "-q").exit_code == 0
    ra, rb, rc = (json.loads(p.read_text()) for p in (a, b, c))
    assert ra["optimum_only"] is True and rb["optimum_only"] is False
    assert ra["status"] == "optimal" and ra["n_networks"] == 1 and ra["optimum"] == rb["optimum"] == rc["optimum"]
    assert rb["n_networks"] >= 1 and rb["complete"] is True
    assert ra["stats"]["phase1"]["method"] == "dynamic programming" and ra["stats"]["dp"]["seconds"] >= 0
    assert rb["stats"]["phase2"]["method"] == "peeling" and rb["stats"]["dp"]["families_kept"] >= 3
    assert rb["stats"]["phase2"]["seconds"] >= 0 and rb["stats"]["phase2"]["dags_listed"] == rb["n_networks"]
    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    assert run(runner, "solve", scores, "--optimum-only", "--json", a, "-q").exit_code == 0
    ra = json.loads(a.read_text())
    assert ra["stats"]["phase1"]["method"] == "branch-and-cut" and ra["optimum"] == rb["optimum"]
    timing = ra["stats"]["phase1"]["timing"]
    assert {"lp", "strong_branching_lp", "acyclic", "propagation", "heuristics", "solving"} <= set(timing)
    assert {"subip_seconds", "sepa_heuristic_seconds", "python_enforce_seconds"} <= set(ra["stats"]["phase1"])
    assert run(runner, "solve", scores, "--bf", "1", "--json", b, "-q").exit_code == 0
    assert "timing" in json.loads(b.read_text())["stats"]["phase2"]
    res = runner.invoke(main, ["solve", str(scores), "--optimum-only", "--bf", "3"])
    assert res.exit_code == 2 and "--optimum-only" in res.output
    for extra in (["--enumerate", "mecs"], ["--list-dags"]):   # nothing is enumerated: a contradiction, not ignored
        res = runner.invoke(main, ["solve", str(scores), "--optimum-only", *extra])
        assert res.exit_code == 2 and "--optimum-only" in res.output and extra[0] in res.output


def test_a_class_cap_says_the_posteriors_average_over_every_credible_class(runner, tmp_path) -> None:
    """--max-networks cuts the class list after peeling listed every class: exit 3, the JSON's
    posterior_classes and posterior_dags count every credible class and DAG, and the panel says so."""
    path = tmp_path / "five.csv"
    random_discrete_frame(3, n=5, N=60).to_csv(path, index=False)
    whole, capped = tmp_path / "whole.json", tmp_path / "capped.json"
    assert run(runner, "learn", path, "--bf", "1e6", "--json", whole, "-q").exit_code == 0
    res = run(runner, "learn", path, "--bf", "1e6", "--max-networks", "3", "--json", capped)
    every, doc = json.loads(whole.read_text()), json.loads(capped.read_text())
    assert res.exit_code == 3 and doc["status"] == "network_limit" and doc["n_mecs"] == 3 < every["n_mecs"]
    assert (doc["posterior_classes"], doc["posterior_dags"]) == (every["n_mecs"], every["n_networks"])
    assert "posteriors over" in res.output and f"all {every['n_mecs']} credible classes" in res.output
    assert "LIST CAPPED" in res.output and "INCOMPLETE" not in res.output      # every class counted
    flat = " ".join(res.output.split())
    assert f"credible DAGs {doc['n_networks']} in the listed classes" in flat      # not the whole set's count
    assert "credible MECs 3 listed" in flat and f"({every['n_networks']} DAGs)" in flat
    want = {(e["from"], e["to"]): e["posterior"] for e in every["edges"]}
    assert all(e["posterior"] == pytest.approx(want[e["from"], e["to"]], abs=1e-9) for e in doc["edges"])


def test_count_past_cap_lists_on_past_the_cap_by_branch_and_cut(runner, tmp_path, monkeypatch) -> None:
    """--count-past-cap with branch-and-cut's phase 2 (the programme off): --max-networks 3 no longer stops
    the listing; exit 3 (network_limit), the best 3 classes in the table, the JSON's totals and edge posteriors
    those of the uncapped run, the panel saying over how many. Combinations it cannot serve exit 2 with one
    line naming their flags, before the data are scored (what the options and the score's name decide);
    --list-dags and background knowledge are served
    (test_count_past_cap_with_list_dags_counts_every_dag_as_peeling_does,
    test_classes_past_the_cap_under_knowledge_count_into_the_posteriors)."""
    path = tmp_path / "five.csv"
    random_discrete_frame(3, n=5, N=60).to_csv(path, index=False)
    whole, capped = tmp_path / "whole.json", tmp_path / "capped.json"
    assert run(runner, "learn", path, "--bf", "1e3", "--json", whole, "-q").exit_code == 0
    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    res = run(runner, "learn", path, "--bf", "1e3", "--max-networks", "3", "--count-past-cap", "--json", capped)
    every, doc = json.loads(whole.read_text()), json.loads(capped.read_text())
    assert res.exit_code == 3 and doc["status"] == "network_limit" and doc["n_mecs"] == 3 < every["n_mecs"]
    assert doc["stats"]["phase2"]["method"] == "branch-and-cut"
    assert (doc["posterior_classes"], doc["posterior_dags"]) == (every["n_mecs"], every["n_networks"])
    assert f"all {every['n_mecs']} credible classes" in res.output
    assert "LIST CAPPED" in res.output and "INCOMPLETE" not in res.output
    assert [m["cpdag"] for m in doc["mecs"]] == [m["cpdag"] for m in every["mecs"][:3]]
    want = {(e["from"], e["to"]): e["posterior"] for e in every["edges"]}
    assert all(e["posterior"] == pytest.approx(want[e["from"], e["to"]], abs=1e-9) for e in doc["edges"])
    for extra, flag, early in ((["--enumerate", "dags"], "--enumerate dags", True),
                               (["--optimum-only"], "--optimum-only", True),
                               (["--score", "mml"], "lists DAGs", True)):
        res = runner.invoke(main, ["learn", str(path), "--count-past-cap", *extra])
        assert res.exit_code == 2 and "--count-past-cap" in res.output and flag in res.output, res.output
        assert "Traceback" not in res.output and ("scored" not in res.output) == early, res.output


def test_solve_jobs_lists_the_same_set_on_two_processes(runner, small_csv, tmp_path, monkeypatch) -> None:
    """``solve --jobs 2`` with phase 2 by branch-and-cut split into cubes at once gives the JSON of ``--jobs 1``
    (classes, DAG counts, posteriors) and says how it listed; ``--jobs 0`` is bad input."""
    monkeypatch.setattr("bnilp.ilp.settings.DP_MAX_VARIABLES", 0)
    monkeypatch.setattr("bnilp.ilp.settings.PHASE2_SERIAL_SECONDS", 0.0)
    scores, one, two = tmp_path / "s.scores", tmp_path / "one.json", tmp_path / "two.json"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "150", "-q").exit_code == 0
    assert run(runner, "solve", scores, "--bf", "150", "--json", one, "-q").exit_code == 0
    res = run(runner, "solve", scores, "--bf", "150", "--jobs", "2", "--json", two, "-q")
    assert res.exit_code == 0, res.output
    r1, r2 = json.loads(one.read_text()), json.loads(two.read_text())
    assert r2["stats"]["phase2"]["method"] == "branch-and-cut in cubes" and r2["complete"] is True
    for key in ("optimum", "n_networks", "n_mecs"):
        assert r1[key] == r2[key]
    def classes(r):
        return sorted((json.dumps(m["cpdag"], sort_keys=True), m["n_dags"]) for m in r["mecs"])

    assert classes(r1) == classes(r2)
    p1 = {(e["from"], e["to"]): e["posterior"] for e in r1["edges"]}
    p2 = {(e["from"], e["to"]): e["posterior"] for e in r2["edges"]}
    assert p1.keys() == p2.keys() and all(p1[k] == pytest.approx(p2[k], abs=1e-12) for k in p1)
    bad = runner.invoke(main, ["solve", str(scores), "--jobs", "0"])
    assert bad.exit_code == 2 and "--jobs must be" in bad.output and "Traceback" not in bad.output


def test_names_with_markup_or_mathtext_are_shown_as_written_and_every_output_is_written(runner, tmp_path) -> None:
    """Column names that read as rich markup ("[/]", "[bold]x") or matplotlib mathtext ("$\\frac{$") once crashed
    the terminal report (exit 1, no JSON or DOT) or the report's pictures, or vanished from the output; now
    they print as written, and the JSON, DOT and report folder are all written (exit 0)."""
    frame = random_discrete_frame(4, n=4, N=300)
    names = ["[/]a", "[bold]x", "$\\frac{$", "cost $ per $"]
    data = tmp_path / "odd.csv"
    frame.set_axis(names, axis=1).to_csv(data, index=False)
    out, dot, rep = tmp_path / "r.json", tmp_path / "r.dot", tmp_path / "rep"
    res = run(runner, "learn", str(data), "--score", "bic", "--bf", "20", "--discrete", "all", "--json", str(out),
              "--dot", str(dot), "--report", str(rep))
    assert res.exit_code == 0, res.output
    assert "[/]a" in res.output and "[bold]x" in res.output and "$\\frac{$" in res.output
    assert set(json.loads(out.read_text())["variables"]) == set(names)
    assert dot.exists() and any(p.suffix == ".png" for p in rep.iterdir())


def test_a_closing_tag_in_a_name_or_path_is_printed_as_written(runner, tmp_path) -> None:
    """A column ``rate[/s]`` scored last made the progress line's markup fail (``MarkupError`` traceback, exit 1,
    no score file), and proxy-search's edge line likewise; ``[v2]`` in an output path vanished from "wrote …"."""
    frame = random_discrete_frame(3, n=3, N=200)
    data = tmp_path / "units.csv"
    frame.set_axis(["A", "B", "rate[/s]"], axis=1).to_csv(data, index=False)
    out = tmp_path / "net[v2].scores"
    res = run(runner, "score", str(data), "-o", str(out), "--discrete", "all")
    assert res.exit_code == 0 and out.exists(), res.output
    assert "rate[/s]" in res.output and f"wrote {out}" in res.output.replace("\n", "")
    res = run(runner, "proxy-search", str(data), "--method", "greedy", "--discrete", "all")
    assert res.exit_code == 0, res.output
    res = run(runner, "learn", str(data), "--discrete", "all", "--palim", "1", "--bf", "3")
    assert res.exit_code == 3 and "exact for parent sets of size ≤ 1 (palim)" in res.output, res.output
    assert res.output.count("exact for parent sets of size ≤ 1 (palim)") == 1, res.output   # the panel's row alone


def test_a_control_character_in_a_name_is_spelled_out_in_the_pictures(tmp_path) -> None:
    """No font has a glyph for U+0001: matplotlib warned on stderr for each picture of the report. The
    pictures spell it ``\\u0001``, so they are drawn with no warning."""
    import warnings

    from bnilp.report import summarise, write_report

    solved = {"optimum": -5.0, "epsilon": 0.0, "gap": math.inf, "complete": True, "status": "optimal",
              "n_networks": 1, "networks": [{"score": -5.0, "parents": {"a\x01": [], "b": ["a\x01"]}}], "message": ""}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_report(tmp_path, summarise(solved))
    assert (tmp_path / "heatmap.png").exists() and (tmp_path / "averaged.png").exists()


def test_a_bf_past_a_float_prints_the_scoring_summary(runner, small_csv, tmp_path) -> None:
    """``--epsilon 710`` makes BF = e^710, past a float (the sidecar's ``bf`` is null): the scoring summary
    formatted that None and crashed with a TypeError traceback (without -q). It prints ``BF e^710.0``."""
    res = run(runner, "score", small_csv, "-o", tmp_path / "s.scores", "--epsilon", "710")
    assert res.exit_code == 0, res.output
    assert "(BF e^710.0)" in res.output


def test_with_q_every_limit_is_said_before_exit_3(runner, tmp_path) -> None:
    """A run both incomplete (the network cap) and cut by a palim exited 3 after the ``incomplete`` line
    alone, so with -q the palim limit was never said: every limit gets its line on stderr, then exit 3."""
    out = tmp_path / "r.json"
    res = runner.invoke(main, ["learn", "-q", "--palim", "1", "--enumerate", "dags", "--max-networks", "2",
                               "--json", str(out)])
    assert res.exit_code == 3, res.output
    assert "bnilp: incomplete: network limit reached" in res.stderr
    assert "bnilp: limited: the credible set is exact only for parent sets of size ≤ 1 (palim)" in res.stderr
    doc = json.loads(out.read_text())
    assert doc["status"] == "network_limit" and doc["limits"] == ["palim"]


def test_scores_whose_totals_overflow_are_one_line_naming_the_file(runner, tmp_path) -> None:
    """Every score −1e308 is a finite number, but two of them sum past a float: the search ended in
    ``OverflowError: intermediate overflow in fsum``; a spread past 1e20 made SCIP refuse an infinite objective
    coefficient. The reader refuses such a file: one line naming it, exit 2."""
    huge = tmp_path / "huge.scores"
    huge.write_text("2\na 1\n-1e308 0\nb 1\n-1e308 0\n")
    res = run(runner, "solve", huge, "-q")
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert f"bnilp: error: {huge}: the local scores are too large" in res.output
    wide = tmp_path / "wide.scores"
    wide.write_text("2\na 2\n0 0\n-1e25 1 b\nb 2\n0 0\n-1e25 1 a\n")
    res = run(runner, "solve", wide, "-q", "--bf", "1")
    assert res.exit_code == 2 and f"bnilp: error: {wide}: the local scores spread too far" in res.output, res.output
    fine = tmp_path / "fine.scores"
    fine.write_text("2\na 2\n-1e300 0\n-1e300 1 b\nb 1\n-5e299 0\n")
    assert run(runner, "solve", fine, "-q", "--bf", "1").exit_code == 0


@pytest.mark.parametrize("stdout", ["/dev/stdout", "-"])
def test_json_to_stdout_appends_to_a_redirected_log_and_stdout_holds_the_json_alone(small_csv, tmp_path,
                                                                                    stdout) -> None:
    """``(echo before; bnilp learn … --json /dev/stdout; echo after) >> log`` left the log holding only the JSON:
    ``/dev/stdout`` resolved to the log file, which the output replaced ("after" went to the deleted file). Now the
    JSON is written into the open descriptor, after "before"; and the summary line goes to stderr, so that stdout
    holds the JSON alone (``| jq`` reads it). ``-`` is stdout too (it wrote a file named ``-``; a review)."""
    import subprocess
    import sys

    log = tmp_path / "log"
    command = (f"cd {tmp_path} && (echo before; {sys.executable} -m bnilp learn {small_csv} -q --bf 3 --json {stdout}; "
               f"echo after) >> {log}")
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "-").exists()
    lines = log.read_text().splitlines()
    assert lines[0] == "before" and lines[-1] == "after"
    report = json.loads("\n".join(lines[1:-1]))
    assert report["complete"] and f"networks {report['n_networks']}" in done.stderr


@pytest.mark.parametrize("flag, value, words", [
    ("--json", "", "--json: an empty path"),
    ("--dot", "", "--dot: an empty path"),
    ("--export", "{tmp}/adir.bif/", "--export: .*adir.bif/ ends in '/'"),
])
def test_an_empty_or_folder_output_path_is_refused_naming_its_flag(runner, small_csv, tmp_path, flag, value,
                                                                      words) -> None:
    """``--json ""`` was silently ignored (exit 0, no file) and ``--export adir.bif/`` wrote a file named adir.bif."""
    result = runner.invoke(main, ["learn", str(small_csv), "-q", flag, value.format(tmp=tmp_path)])
    assert result.exit_code == 2 and re.search(words, result.output)
    assert not (tmp_path / "adir.bif").exists()


def test_the_interface_issues_named_is_there_as_named(runner, small_csv, tmp_path) -> None:
    """Names the issues gave that no test ran: the sidecar's ``data``, ``arities`` and ``ess`` (issue 2),
    ``--prior binomial --prior mecs`` and ``--penalty-discount`` on a run that succeeds (issues 4, 5), the JSON's
    ``enumerate_reason`` (issue 11), ``--missing`` on the command line (issue 15)."""
    out = tmp_path / "s.scores"
    assert run(runner, "score", small_csv, "--score", "bdeu", "--ess", "2", "--bf", "3", "-o", out, "-q").exit_code == 0
    meta = json.loads(out.with_name("s.scores.json").read_text())
    assert meta["data"].endswith("small.csv") and meta["ess"] == 2
    assert set(meta["arities"]) == set(read_jaakkola(out).variables) and all(r >= 2 for r in meta["arities"].values())
    report = tmp_path / "r.json"
    done = run(runner, "learn", small_csv, "--bf", "3", "--prior", "binomial", "--prior", "mecs",
               "--penalty-discount", "2", "--json", report, "-q")
    assert done.exit_code == 0, done.output
    doc = json.loads(report.read_text())
    assert doc["prior"] == "mecs" and doc["enumerate"] == "mecs" and "score-equivalent" in doc["enumerate_reason"]
    holes = tmp_path / "holes.csv"
    holes.write_text(small_csv.read_text().replace("\n1,", "\n?,", 1))
    stray = run(runner, "learn", holes, "--bf", "3", "-q")
    assert stray.exit_code == 2 and "holds numbers" in stray.output and "'?'" in stray.output   # a stray token
    given = run(runner, "learn", holes, "--bf", "3", "--missing", "?", "-q")
    assert given.exit_code == 2 and "missing value '?'" in given.output   # now read as missing: still an error


@pytest.mark.parametrize("prior, words", [((), "parent sets: bic, ε"),
                                          (("--prior", "binomial", "--expected-parents", "0.5"),
                                           "parent sets: bic, binomial prior (r = 0.5), ε"),
                                          (("--prior", "ebic"), "parent sets: bic, EBIC prior (γ = 0.5), ε")])
def test_the_scoring_table_names_the_structure_prior_with_the_score(runner, small_csv, tmp_path, prior, words):
    """A structure prior is part of the score (``scores.md``: its identity in headers and reports): the table
    said ``parent sets: bic`` under either prior, and nothing else on screen named it (a review)."""
    res = run(runner, "score", small_csv, "--bf", "3", *prior, "-o", tmp_path / "s.scores")
    assert res.exit_code == 0 and words in res.output, res.output


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_that_cannot_be_written_leaves_none_of_the_others(runner, small_csv, tmp_path) -> None:
    """``--json a.json --report rep --dot /dev/full`` wrote the JSON (saying ``complete``) and the whole report,
    then failed on the DOT; a full disk or a size limit part-way through did the same (a review's find). A
    command's outputs are now all written or none: one line, exit 2, no file and no folder made."""
    scores = tmp_path / "s.scores"
    assert run(runner, "score", small_csv, "-o", scores, "--bf", "20", "-q").exit_code == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run(runner, "solve", scores, "--bf", "20", "-q", "--json", tmp_path / "a.json", "--report",
              tmp_path / "out" / "rep", "--dot", "/dev/full")
    assert res.exit_code == 2 and "bnilp: error: /dev/full: cannot be written (No space left on device)" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    # the summary is printed once the outputs are in place: none before the error (it read as a success)
    assert "complete" not in res.output and res.output.strip().splitlines() == [
        "bnilp: error: /dev/full: cannot be written (No space left on device)"]
    # nor the export's line (a review: "exported network 1 of … to o.bif", then the error, and no o.bif)
    res = run(runner, "learn", small_csv, "--bf", "20", "--export", tmp_path / "o.bif", "--dot", "/dev/full")
    assert res.exit_code == 2 and "exported" not in res.output, res.output
    assert res.output.strip().splitlines()[-1] == "bnilp: error: /dev/full: cannot be written (No space left on device)"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    res = run(runner, "learn", small_csv, "--bf", "20", "--export", tmp_path / "o [1].bif")
    assert res.exit_code == 0 and f"with ml parameters to {tmp_path / 'o [1].bif'}" in res.output


def _piped_into_true(command: list, pipe: str = "|") -> subprocess.CompletedProcess:
    """``command | true`` (``|&``: stderr too): the reader closes the pipe before bnilp writes; bnilp's exit code."""
    line = " ".join(shlex.quote(str(a)) for a in command)
    return subprocess.run(["bash", "-c", f"{line} {pipe} true; exit ${{PIPESTATUS[0]}}"], capture_output=True,
                          text=True, timeout=300)


def test_a_reader_that_closes_an_output_written_to_stdout_ends_the_run_quietly(small_csv, tmp_path) -> None:
    """``--json - | head`` said ``bnilp: error: -: cannot be written (Broken pipe)`` and exit 2, the bad-input code
    (a review's find): the output was not delivered, so the run ends quietly with exit 1, and the command's other
    outputs are not written (a set is written all or none)."""
    rep = tmp_path / "rep"
    done = _piped_into_true([sys.executable, "-m", "bnilp", "learn", small_csv, "--bf", "3", "--report", rep,
                             "--json", "-"])
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "cannot be written" not in done.stderr
    assert not rep.exists()


@pytest.mark.parametrize("pipe", ["|", "|&"])
def test_a_reader_of_the_terminal_output_that_leaves_costs_no_file(small_csv, tmp_path, pipe) -> None:
    """``bnilp learn … --report rep | less`` with the pager quit before the run ended (or ``| head``) lost ``rep``
    and ended with exit 1: the panel's ``BrokenPipeError`` was raised inside the set of outputs, which was then
    discarded (a review's find). What is printed after the reader left is dropped; the files are written and the
    run ends with its own exit code (here 3: the palim is a limit) — with stderr in the same pipe too (``|&``)."""
    rep, report = tmp_path / "rep", tmp_path / "r.json"
    done = _piped_into_true([sys.executable, "-m", "bnilp", "learn", small_csv, "--bf", "3", "--palim", "1",
                             "--report", rep, "--json", report], pipe)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and (rep / "networks.json").exists()
    assert json.loads(report.read_text())["limits"] == ["palim"]


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_a_terminal_output_on_a_full_disk_costs_no_file_and_says_so_once(small_csv, tmp_path) -> None:
    """``bnilp learn … > log`` with the log's disk full (``> /dev/full``) ended in a traceback from the panel, exit 1,
    and lost the JSON (on another disk). What is printed there is now dropped, said once on stderr."""
    report = tmp_path / "r.json"
    line = " ".join(shlex.quote(str(a)) for a in [sys.executable, "-m", "bnilp", "learn", small_csv, "--bf", "3",
                                                  "--json", report])
    done = subprocess.run(["bash", "-c", f"{line} > /dev/full"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and report.exists(), done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("bnilp: warning: stdout cannot be written (No space left on device)") == 1


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/wchan"), reason="needs Linux's /proc wchan")
def test_ctrl_c_ends_a_run_whose_fifo_output_has_no_reader(small_csv, tmp_path) -> None:
    """``--json FIFO`` with nobody reading the FIFO blocked in ``open`` for ever, and Ctrl-C could not end it:
    the outputs' handler only notes a signal until every output is written whole. Nothing is written while the
    FIFO waits for its reader, so a signal there ends the run: ``bnilp: interrupted``, exit 130, and the rest of
    the set (the report) is not written."""
    import os
    import signal
    import subprocess
    import sys
    import time

    fifo, rep = tmp_path / "fifo", tmp_path / "rep"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "bnilp", "learn", str(small_csv), "-q", "--bf", "3", "--json",
                             str(fifo), "--report", str(rep)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            with open(f"/proc/{proc.pid}/wchan") as wchan:      # the kernel's wait for a FIFO's other end
                if "partner" in wchan.read():
                    break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before it opened the FIFO"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "bnilp: interrupted" in err and "Traceback" not in err
    assert not rep.exists()


def test_a_file_size_limit_is_one_line_and_leaves_neither_score_file_nor_sidecar(small_csv, tmp_path) -> None:
    """Under ``ulimit -f`` (EFBIG: Python ignores SIGXFSZ) or on a full disk, ``score -o`` ended in an
    ``OSError`` traceback, exit 1 (a review's find): now one line naming the file, exit 2, nothing left."""
    import resource
    import subprocess
    import sys

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, resource.RLIM_INFINITY))

    out = tmp_path / "big.scores"
    proc = subprocess.run([sys.executable, "-m", "bnilp", "score", str(small_csv), "-o", str(out), "-q"],
                          preexec_fn=small_files, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"bnilp: error: {out}: cannot be written (File too large)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.csv"]


def test_a_run_logged_to_a_file_says_where_it_is_now_and_then(runner, small_csv, monkeypatch) -> None:
    """``bnilp learn big.csv > log 2>&1`` printed nothing between the types inferred and the report, however long
    scoring and the search ran: the bar and the status line show only at a terminal. Not at one, a line now and
    then (every ``LOG_PROGRESS_SECONDS``; 0 here, so every call) says where the run is."""
    from bnilp import terminal

    monkeypatch.setattr(terminal, "LOG_PROGRESS_SECONDS", 0.0)
    res = run(runner, "learn", small_csv, "--bf", "3")
    assert res.exit_code == 0, res.output
    assert re.search(r"^\[\d+ s\] scoring: 1 of 5 variables walked, the last \S+: kept \d+ of \d+$", res.output, re.M)
    assert "scoring: 5 of 5 variables walked" in res.output
    assert re.search(r"^\[\d+ s\] search, [^:]+: \d+ networks$", res.output, re.M), res.output
    assert "] scoring" not in run(runner, "learn", small_csv, "--bf", "3", "-q").output


def test_a_logged_run_says_how_far_a_long_walk_has_gone(runner, small_csv, monkeypatch) -> None:
    """One variable's walk can take minutes (sensors: 2²⁴ parent sets of one child, 26 minutes) and the log said
    nothing until it ended: now a line after each level of parent sets scored names the child, the size, the sets
    scored so far and the sets the next level extends."""
    from bnilp import terminal

    monkeypatch.setattr(terminal, "LOG_PROGRESS_SECONDS", 0.0)
    res = run(runner, "score", small_csv, "-o", "-")
    assert res.exit_code == 0, res.output
    assert re.search(r"^\[\d+ s\] scoring: 0 of 5 variables walked; \S+: parent sets of size 1 scored "
                     r"\([\d,]+ sets, [\d,]+ to extend\), \d+ s$", res.output, re.M), res.output
    assert "scoring: 5 of 5 variables walked, the last" in res.output


def test_a_logged_deepening_scoring_counts_the_variables_of_each_pass(runner, small_csv, tmp_path, monkeypatch) -> None:
    """Under ``--score-time-limit`` each deeper pass walks every variable again: the log's line counted them all
    ("148 variables walked" on 37)."""
    from bnilp import terminal

    monkeypatch.setattr(terminal, "LOG_PROGRESS_SECONDS", 0.0)
    res = run(runner, "score", small_csv, "-o", tmp_path / "s.scores", "--score-time-limit", "120")
    assert res.exit_code == 0, res.output
    counts = [int(k) for k in re.findall(r"scoring, pass \d+: (\d+) of 5 variables walked", res.output)]
    assert counts and max(counts) == 5 and "scoring, pass 2: 1 of 5" in res.output, res.output
    # a running walk's line names its own pass: the first line of pass 2 is one (a review saw it say pass 1, 5 of 5)
    assert re.search(r"scoring, pass 2: 0 of 5 variables walked; \S+: parent sets of size 1", res.output), res.output
    assert "5 of 5 variables walked;" not in res.output, res.output


def test_a_logged_parallel_cg_scoring_says_how_far_its_set_table_has_got(runner, tmp_path, monkeypatch) -> None:
    """CG on several processes computes ℓ of the variable sets first (the set table; minutes on large data), then
    walks on look-ups: the log says how far the table has got, and under ``--score-time-limit`` each pass's table
    lines name that pass (the pass begins with its table, before any of its walks)."""
    import numpy as np
    import pandas as pd

    from bnilp import terminal
    from tests.mixed_helpers import random_mixed

    data = random_mixed(np.random.default_rng(3), "dcdcd", 300)
    path = tmp_path / "mixed.csv"
    pd.DataFrame({nm: data.codes[:, j] if data.kinds[j] == "discrete" else data.values[:, j]
                  for j, nm in enumerate(data.names)}).to_csv(path, index=False)
    monkeypatch.setattr(terminal, "LOG_PROGRESS_SECONDS", 0.0)
    res = run(runner, "score", path, "--score", "cg", "--jobs", "2", "-o", tmp_path / "s.scores",
              "--score-time-limit", "120")
    assert res.exit_code == 0, res.output
    lines = re.findall(r"^\[\d+ s\] scoring, pass (\d+): set table: ([\d,]+) of ([\d,]+) variable sets, \d+ s$",
                       res.output, re.M)
    assert lines and lines[-1][1] == lines[-1][2], res.output
    # a table each pass: pass p (palim p) adds the sets of size p + 1, the last the one set of all n variables
    assert {p for p, _, _ in lines} == {str(k) for k in range(1, data.n)}, res.output
    assert [t for p, _, t in lines if p == str(data.n - 1)] == ["1"], res.output
    assert "scoring, pass 2: 1 of 5" in res.output and "6 of 5" not in res.output, res.output


def test_a_score_file_written_to_stdout_is_said_to_have_no_sidecar(small_csv) -> None:
    """``bnilp score d.csv -o -`` said "wrote - (11 parent sets) and -.json": a stream has no sidecar."""
    done = subprocess.run([sys.executable, "-m", "bnilp", "score", str(small_csv), "-o", "-"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("5\n"), done.stderr
    assert re.search(r"wrote - \(\d+ parent sets\) no sidecar", done.stderr) and "-.json" not in done.stderr


@pytest.mark.slow     # 4.5-8 s: the quick suite keeps under the README's ~15 minutes
def test_a_cut_or_knowledge_scored_file_on_a_stream_warns_that_its_reader_will_not_know(small_csv) -> None:
    """``score --palim 1 -o - | solve /dev/stdin`` took the cut table for complete, exit 0 (a review): no sidecar can
    go with a stream, and neither GOBNILP's Jaakkola reader nor pygobnilp's takes a comment line that could carry
    the cut. The writer says what its reader will not know, with ``-q`` too; a table with nothing to lose, or
    ``/dev/null``, gets no such line."""
    def score(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bnilp", "score", str(small_csv), "-q", *args],
                              capture_output=True, text=True, timeout=300)

    both = score("--palim", "1", "--require", "V0->V1", "-o", "-")
    assert both.returncode == 3 and both.stdout.startswith("5\n")
    assert ("bnilp: warning: - has no sidecar (a stream): its reader will not know that it is exact only for parent "
            "sets of size ≤ 1 and that it was scored under background knowledge") in both.stderr
    assert "warning" not in score("-o", "-").stderr and "warning" not in score("--palim", "1", "-o", "/dev/null").stderr


@pytest.mark.parametrize("quiet", [(), ("-q",)])
def test_learn_with_its_score_file_on_stdout_keeps_stdout_for_that_file_alone(small_csv, quiet) -> None:
    """``learn --scores -``: the result's panel (or, with ``-q``, its summary line) followed the score file on stdout,
    so ``| bnilp solve /dev/stdin`` read "unexpected 'optimum' after the last of 5 variable sections" (a review).
    The report goes to stderr, as with ``--json -``; stdout is the file ``-o`` would have written."""
    from bnilp.scorefile import parse_jaakkola

    done = subprocess.run([sys.executable, "-m", "bnilp", "learn", str(small_csv), "--bf", "3", "--scores", "-",
                           *quiet], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    table = parse_jaakkola(done.stdout)
    assert len(table.variables) == 5 and ("status optimal networks" if quiet else "Note: posteriors are") in done.stderr


def test_the_scoring_table_of_wide_data_shows_the_heaviest_walks_and_says_where_the_rest_are(tmp_path) -> None:
    """Past ``SCORING_TABLE_ROWS`` variables the table lists the variables that scored the most sets, in file
    order, and its caption says how many of how many and where every row is (the sidecar's per_variable)."""
    from bnilp.cli.score import SCORING_TABLE_ROWS

    n = SCORING_TABLE_ROWS + 5
    frame = random_discrete_frame(4, n=n, N=60, max_arity=4)       # walks of many lengths (R2 by arity)
    frame.to_csv(tmp_path / "w.csv", index=False)
    out = tmp_path / "w.scores"
    res = CliRunner().invoke(main, ["score", str(tmp_path / "w.csv"), "--score", "bic", "--palim", "2", "-o", str(out)])
    assert res.exit_code in (0, 3), res.output
    per = json.loads((tmp_path / "w.scores.json").read_text())["per_variable"]
    heavy = sorted(per, key=lambda v: -per[v]["scored"])[:SCORING_TABLE_ROWS]
    rows = [line.split("│")[1].strip() for line in res.stderr.splitlines() if line.startswith("│ ")]
    assert rows == [v for v in per if v in heavy] and rows != list(per)[:SCORING_TABLE_ROWS]
    caption = " ".join(res.stderr.split())
    assert f"the {SCORING_TABLE_ROWS} of {n} variables that scored the most sets" in caption
    assert "per_variable" in caption
