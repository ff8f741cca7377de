"""The side-road commands from the command line: ``simulate``, ``compare``, ``citest``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bnilp.cli import main
from bnilp.data import load_data
from bnilp.scorefile import read_jaakkola


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("bnilp: error:"), result.output
    return lines[0]


@pytest.fixture
def simulated(tmp_path):
    data, truth = tmp_path / "d.csv", tmp_path / "t.json"
    res = _run("simulate", "--nodes", "12", "--samples", "300", "--avg-degree", "2", "--seed", "4",
               "-o", str(data), "--truth", str(truth))
    assert res.exit_code == 0, res.output
    return data, truth, res


def test_simulate_writes_data_and_truth(simulated, tmp_path):
    data, truth_path, res = simulated
    truth = json.loads(truth_path.read_text())
    assert set(truth["parents"]) == {f"X{i}" for i in range(1, 13)}
    assert truth["n_edges"] == 12 and truth["settings"]["seed"] == 4
    assert f"--discrete {','.join(truth['discrete'])}" in res.output
    loaded = load_data(data)
    assert dict(zip(loaded.names, loaded.kinds, strict=True)) == truth["kinds"]
    assert loaded.N == 300
    # same seed, same files
    data2, truth2 = tmp_path / "d2.csv", tmp_path / "t2.json"
    again = _run("simulate", "--nodes", "12", "--samples", "300", "--avg-degree", "2", "--seed", "4",
                 "-o", str(data2), "--truth", str(truth2), "-q")
    assert again.exit_code == 0 and again.output == ""
    assert data2.read_text() == data.read_text()
    assert json.loads(truth2.read_text())["parents"] == truth["parents"]


@pytest.mark.parametrize("nodes, edges", [(1, 0), (2, 1), (3, 3), (12, 12)])
def test_simulate_without_avg_degree_takes_2_or_as_many_as_the_nodes_allow(tmp_path, nodes, edges):
    """``--avg-degree`` defaults to 2, or nodes − 1 where that is less: ``--nodes 1`` or ``2`` alone was an error
    (the default 2 exceeded nodes − 1). round(d·n/2) edges: 0, 1, 3 (complete on 3 nodes), 12."""
    data, truth = tmp_path / "d.csv", tmp_path / "t.json"
    res = _run("simulate", "--nodes", str(nodes), "--samples", "30", "--seed", "2", "-q", "-o", str(data),
               "--truth", str(truth))
    assert res.exit_code == 0, res.output
    got = json.loads(truth.read_text())
    assert got["n_edges"] == edges == sum(len(p) for p in got["parents"].values())
    assert got["settings"]["avg_degree"] == min(2, nodes - 1)


def test_simulate_nonlinear_and_options(tmp_path):
    data, truth = tmp_path / "n.csv", tmp_path / "n.json"
    res = _run("simulate", "--nodes", "8", "--samples", "100", "--avg-degree", "3", "--max-degree", "4",
               "--discrete-fraction", "0.25", "--categories", "3-4", "--nonlinear", "--link", "logistic",
               "--seed", "1", "-o", str(data), "--truth", str(truth))
    assert res.exit_code == 0, res.output
    t = json.loads(truth.read_text())
    assert t["settings"]["nonlinear"] and len(t["discrete"]) == 2 and t["settings"]["categories"] == [3, 4]
    assert t["settings"]["link"] == "logistic"
    assert pd.read_csv(data).shape == (100, 8)


@pytest.mark.parametrize("extra", [
    ["--samples", "50", "--avg-degree", "6", "--max-degree", "3"],
    ["--samples", "50", "--categories", "1-3"],
    ["--samples", "50", "--categories", "two-five"],
    ["--samples", "50", "--discrete-fraction", "2"],
    ["--samples", "1"],
    ["--samples", "50", "--max-degree", "-1"],
])
def test_simulate_bad_input(tmp_path, extra):
    args = ["simulate", "--nodes", "10", "--seed", "0", "-o", str(tmp_path / "d.csv"),
            "--truth", str(tmp_path / "t.json"), *extra]
    _one_line_error(_run(*args))
    assert not (tmp_path / "d.csv").exists()


def test_simulate_unknown_link_is_a_usage_error_naming_the_links(tmp_path):
    res = _run("simulate", "--nodes", "5", "--samples", "50", "--link", "probit",
               "-o", str(tmp_path / "d.csv"), "--truth", str(tmp_path / "t.json"))
    assert res.exit_code == 2 and "'bins', 'logistic'" in res.output
    assert not (tmp_path / "d.csv").exists()


def test_compare_truth_with_itself_and_with_a_result(simulated, tmp_path):
    _, truth_path, _ = simulated
    res = _run("compare", str(truth_path), str(truth_path), "--json")
    assert res.exit_code == 0, res.output
    m = json.loads(res.output)
    assert (m["AP"], m["AR"], m["AHP"], m["AHR"], m["SHD"], m["skeleton_F1"]) == (1, 1, 1, 1, 0, 1)
    # a solver-style result: the first network, with one true edge reversed and one dropped
    truth = json.loads(truth_path.read_text())
    parents = {v: list(p) for v, p in truth["parents"].items()}
    edges = [(p, c) for c, ps in parents.items() for p in ps]
    (p0, c0), (p1, c1) = edges[0], edges[1]
    parents[c0].remove(p0)
    parents[p0].append(c0)
    parents[c1].remove(p1)
    learned = tmp_path / "learned.json"
    learned.write_text(json.dumps({"networks": [{"score": -1.0, "parents": parents}]}))
    m = json.loads(_run("compare", str(learned), str(truth_path), "--json").output)
    n = truth["n_edges"]
    # one reversed + one missing: SHD 2, AP = (n−1)/(n−1), AR = (n−1)/n
    assert m["SHD"] == 2 and m["reversed"] == 1 and m["missing"] == 1
    assert m["AP"] == 1 and m["AR"] == pytest.approx((n - 1) / n)
    table = _run("compare", str(learned), str(truth_path))
    assert table.exit_code == 0 and "AHP" in table.output and "SHD" in table.output
    # the reversed edge is one adjacency with other marks, not two (mark_mismatch counts it too)
    assert "1 reversed, 0 with other marks" in " ".join(table.output.split()), table.output


def test_compare_edges_threshold_and_cpdag(tmp_path):
    true = tmp_path / "true.json"
    true.write_text(json.dumps({"parents": {"A": [], "B": ["A"], "C": ["B"]}}))
    result = tmp_path / "avg.json"
    result.write_text(json.dumps({
        "variables": ["A", "B", "C"],
        "networks": [{"score": 0.0, "parents": {"A": [], "B": ["A"], "C": ["B"]}}],
        "edges": [{"from": "A", "to": "B", "posterior": 0.8}, {"from": "B", "to": "C", "posterior": 0.45},
                  {"from": "C", "to": "B", "posterior": 0.45}],
    }))
    # A → B kept directed; B–C adjacent (0.9) but undecided → undirected: AHP 1/1, AHR 1/2, SHD 1
    m = json.loads(_run("compare", str(result), str(true), "--edges-threshold", "0.5", "--json").output)
    assert m["mode"] == "averaged" and m["edges_threshold"] == 0.5
    assert (m["AP"], m["AR"], m["AHP"], m["AHR"], m["SHD"]) == (1, 1, 1, 0.5, 1)
    # a chain against itself as CPDAGs: all undirected → arrowhead ratios undefined → null
    c = json.loads(_run("compare", str(result), str(true), "--cpdag", "--json").output)
    assert c["mode"] == "cpdag" and c["AHP"] is None and c["SHD"] == 0
    _one_line_error(_run("compare", str(result), str(true), "--cpdag", "--edges-threshold", "0.5"))
    _one_line_error(_run("compare", str(true), str(true), "--edges-threshold", "0.5"))


def test_compare_bad_input(tmp_path, simulated):
    _, truth_path, _ = simulated
    _one_line_error(_run("compare", str(tmp_path / "missing.json"), str(truth_path)))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "not valid JSON" in _one_line_error(_run("compare", str(bad), str(truth_path)))
    nokey = tmp_path / "nokey.json"
    nokey.write_text(json.dumps({"graph": {}}))
    _one_line_error(_run("compare", str(nokey), str(truth_path)))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"parents": {"X1": [], "Y": []}}))
    assert "different variables" in _one_line_error(_run("compare", str(other), str(truth_path)))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"parents": {"X1": ["Q"]}}))
    _one_line_error(_run("compare", str(unknown), str(truth_path)))


@pytest.fixture
def chain_csv(tmp_path):
    rng = np.random.default_rng(0)
    N = 800
    x = rng.integers(0, 3, N)
    z = np.where(rng.random(N) < 0.6, x, rng.integers(0, 3, N))
    y = np.where(rng.random(N) < 0.6, z, rng.integers(0, 3, N))
    path = tmp_path / "chain.csv"
    pd.DataFrame({"x": x, "y": y, "z": z}).to_csv(path, index=False)
    return path


def test_citest_json_and_table(chain_csv):
    res = _run("citest", str(chain_csv), "x", "y", "--score", "bic", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["dependent"] is True and out["given"] == [] and out["score"] == "bic"
    res = _run("citest", str(chain_csv), "x", "y", "--given", "z", "--score", "bic", "--alpha", "0.05",
               "--json")
    out = json.loads(res.output)
    assert out["dependent"] is False and out["given"] == ["z"] and out["df"] == 12 and out["alpha"] == 0.05
    table = _run("citest", str(chain_csv), "x", "y", "--given", "z", "--score", "bic")
    assert table.exit_code == 0 and "independent" in table.output


def test_citest_bic_ignores_a_continuous_column_outside_the_test(chain_csv, tmp_path):
    """``--score bic`` refused the whole file ("needs discrete data") for a continuous column not in the test,
    and its hint (--discrete) could not help: the test reads its own columns only, with the same result."""
    frame = pd.read_csv(chain_csv)
    frame["w"] = np.random.default_rng(1).normal(size=len(frame))
    wider = tmp_path / "wider.csv"
    frame.to_csv(wider, index=False)
    alone, beside = (json.loads(_run("citest", str(path), "x", "y", "--given", "z", "--score", "bic", "--json").output)
                     for path in (chain_csv, wider))
    assert beside["statistic"] == alone["statistic"] and beside["p_value"] == alone["p_value"]
    assert "needs discrete" in _one_line_error(_run("citest", str(wider), "x", "w", "--score", "bic"))


def test_citest_bad_input(chain_csv, tmp_path):
    assert "unknown variable" in _one_line_error(_run("citest", str(chain_csv), "x", "w", "--score", "bic"))
    _one_line_error(_run("citest", str(chain_csv), "x", "y", "--given", "q", "--score", "bic"))
    _one_line_error(_run("citest", str(tmp_path / "none.csv"), "x", "y", "--score", "bic"))
    _one_line_error(_run("citest", str(chain_csv), "x", "x", "--score", "bic"))
    _one_line_error(_run("citest", str(chain_csv), "x", "y", "--score", "bdeu"))
    _one_line_error(_run("citest", str(chain_csv), "x", "y", "--score", "bic", "--alpha", "0"))


@pytest.mark.skipif(importlib.util.find_spec("bnilp.scores.cg") is None, reason="CG score not written yet")
def test_citest_default_cg_on_simulated_mixed_data(simulated):
    data, truth_path, _ = simulated
    truth = json.loads(truth_path.read_text())
    child = next(c for c, ps in truth["parents"].items() if ps)
    res = _run("citest", str(data), child, truth["parents"][child][0], "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["score"] == "cg" and len(out["directions"]) == 1
    assert out["correction"] == "bartlett" and "bartlett" in out["directions"][0]
    plain = json.loads(_run("citest", str(data), child, truth["parents"][child][0], "--json",
                            "--correction", "none").output)
    assert plain["correction"] == "none" and plain["directions"][0]["bartlett"] == 1.0
    assert plain["statistic"] == out["statistic"]


@pytest.mark.skipif(importlib.util.find_spec("bnilp.scores.mvp") is None, reason="MVP score not written yet")
def test_citest_mvp_reports_both_directions(simulated):
    data, truth_path, _ = simulated
    truth = json.loads(truth_path.read_text())
    child = next(c for c, ps in truth["parents"].items() if ps)
    res = _run("citest", str(data), child, truth["parents"][child][0], "--score", "mvp", "--mvp-degree", "1")
    assert res.exit_code == 0, res.output
    assert res.output.count(child) >= 2 and "decision" in res.output


def test_citest_permutes_locally_where_a_discrete_variable_is_given_a_continuous_one(tmp_path):
    rng = np.random.default_rng(3)
    z = rng.standard_normal(400)
    path = tmp_path / "steps.csv"
    pd.DataFrame({"x": [f"a{v}" for v in np.digitize(z, [-0.4, 0.4])],
                  "y": [f"b{v}" for v in np.digitize(z + 0.3 * rng.standard_normal(400), [0.0])],
                  "z": z}).to_csv(path, index=False)
    res = _run("citest", str(path), "x", "y", "--given", "z", "--score", "cg", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["null"] == "local-permutation" and 1 <= out["permutations"] <= 199
    assert out["p_value"] >= 1 / 200 and out["chi2_p_value"] is not None
    chi = json.loads(_run("citest", str(path), "x", "y", "--given", "z", "--score", "cg", "--null", "chi2",
                          "--json").output)
    assert chi["null"] == "chi2" and chi["permutations"] == 0 and chi["chi2_p_value"] == out["chi2_p_value"]
    table = _run("citest", str(path), "x", "y", "--given", "z", "--score", "cg", "--seed", "4")
    assert table.exit_code == 0 and "local permutation of y" in table.output
    assert "--permutations" in _one_line_error(_run("citest", str(path), "x", "y", "--given", "z",
                                                    "--permutations", "0"))


def test_bad_options_and_files_are_refused_before_the_work_in_one_line_and_leave_no_file(chain_csv, tmp_path):
    """What the options and small files alone decide is checked before scoring or reading a score file: no
    traceback, one line naming the flag or file (and line), exit 2, and no --scores file left behind."""
    scores = tmp_path / "s.scores"
    bad_parents = tmp_path / "w.json"
    for doc in ('{"parents": ["x", "y"]}', '{"parents": {"x": 5}}', '{"parents": {"x": [1]}}'):
        bad_parents.write_text(doc)
        assert "w.json: 'parents' must map" in _one_line_error(
            _run("learn", str(chain_csv), "-q", "--scores", str(scores), "--warm-start", str(bad_parents)))
        assert not scores.exists()
    for flags, words in ((["--time-limit", "-1"], "--time-limit"), (["--max-networks", "0"], "--max-networks"),
                         (["--jobs", "-3"], "--jobs"), (["--json", f"{chain_csv}/r.json"], "--json:"),
                         (["--report", f"{chain_csv}/rep"], "--report:")):
        assert words in _one_line_error(_run("learn", str(chain_csv), "-q", "--scores", str(scores), *flags))
        assert not scores.exists()
    assert "-o:" in _one_line_error(_run("score", str(chain_csv), "-q", "-o", f"{chain_csv}/s.scores"))
    assert _run("learn", str(chain_csv), "-q", "--bf", "3", "--scores", str(scores)).exit_code == 0
    knowledge = tmp_path / "k.txt"
    knowledge.write_bytes(b"require x -> y\nforbid \xff -> z\n")
    assert "k.txt:2:8: the knowledge file is not UTF-8" in _one_line_error(
        _run("solve", str(scores), "-q", "--knowledge", str(knowledge)))
    for command, name, text in (("score", "latin1.csv", b"a,b\nx,y\ny,x\ncaf\xe9,x\n"),
                                ("solve", "latin1.scores", b"2\na 1\n-1.0 0\nb \xe9 1\n-1.0 0\n")):
        (tmp_path / name).write_bytes(text)   # Latin-1: a byte offset in the whole file was all the error said
        args = ["-o", str(tmp_path / "l.scores")] if command == "score" else []
        assert f"{name}:4:{4 if command == 'score' else 3}: not UTF-8 text (byte 0xe9" in _one_line_error(
            _run(command, str(tmp_path / name), "-q", *args))
    sidecar = tmp_path / "s.scores.json"
    for doc, words in (("[]", "a score-file sidecar is a JSON object"),
                       ('{"epsilon": "x"}', "'epsilon' must be a finite number"),
                       ('{"knowledge": 1}', "'knowledge' is not a knowledge record"),
                       ('{"epsilon": -1.0}', "'epsilon' must be ≥ 0, got -1.0"),   # was used as pruned for ε = −1
                       ('{"bf": 0.5}', "'bf' must be ≥ 1"), ('{"ess": 0}', "'ess' must be > 0"),
                       ('{"score_equivalent": "false"}', "'score_equivalent' must be true or false"),
                       ("{not json", "not a readable score-file sidecar")):
        sidecar.write_text(doc)
        assert "s.scores.json: " + words in _one_line_error(_run("solve", str(scores), "-q"))


def test_a_negative_seed_is_one_line_naming_the_flag(chain_csv, tmp_path):
    for args in (["simulate", "--nodes", "3", "--samples", "10", "-o", str(tmp_path / "d.csv"),
                  "--truth", str(tmp_path / "t.json")],
                 ["citest", str(chain_csv), "x", "y", "--score", "bic"],
                 ["proxy-search", str(chain_csv), "--samples", "10"]):
        assert "--seed must be ≥ 0" in _one_line_error(_run(*args, "--seed", "-1"))
    assert not (tmp_path / "d.csv").exists()


def test_names_bnlearn_cannot_hold_leave_the_export_whole_without_a_model_string(tmp_path):
    """A column named 'dose[mg]' or 'time:1' cannot go into a bnlearn model string ([ ] | : are its syntax);
    BIF and JSON exports are written all the same, the JSON's model_string null with a note saying why."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, 300)
    path = tmp_path / "d.csv"
    pd.DataFrame({"time:1": x, "dose[mg]": np.where(rng.random(300) < 0.8, x, 1 - x)}).to_csv(path, index=False)
    for out in ("n.bif", "n.json"):
        res = _run("learn", str(path), "-q", "--export", str(tmp_path / out))
        assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "n.json").read_text())
    assert doc["model_string"] is None and any("no model string" in note for note in doc["notes"])


def test_compare_refuses_self_loops_and_cycles_and_keeps_a_threshold_met_up_to_rounding(tmp_path):
    """An edge from a variable to itself and a cyclic graph are one-line errors (they were scored: AP 2/3, and a
    3-cycle against its DAG); 0.7 + 0.2 reaches a threshold of 0.9 (in floats 0.8999999999999999); a JSON error
    names line and column."""
    true = tmp_path / "true.json"
    true.write_text(json.dumps({"parents": {"A": [], "B": ["A"], "C": ["B"]}}))
    loop = tmp_path / "loop.json"
    loop.write_text(json.dumps({"variables": ["A", "B", "C"], "edges": [
        {"from": "A", "to": "B", "posterior": 1.0}, {"from": "B", "to": "C", "posterior": 1.0},
        {"from": "C", "to": "C", "posterior": 1.0}]}))
    assert "to itself" in _one_line_error(_run("compare", str(loop), str(true), "--edges-threshold", "0.5"))
    cyclic = tmp_path / "cyclic.json"
    cyclic.write_text(json.dumps({"parents": {"A": ["C"], "B": ["A"], "C": ["B"]}}))
    assert "cycle" in _one_line_error(_run("compare", str(true), str(cyclic)))
    assert "cycle" in _one_line_error(_run("compare", str(cyclic), str(true)))
    twice = tmp_path / "twice.json"       # read as one edge, silently
    twice.write_text(json.dumps({"parents": {"A": [], "B": ["A", "A"], "C": ["B"]}}))
    assert "'A' is listed twice among the parents of 'B'" in _one_line_error(_run("compare", str(twice), str(true)))
    marked = tmp_path / "marked.json"     # a byte-order mark (Notepad's): "not valid JSON (Unexpected UTF-8 BOM)"
    marked.write_bytes(b"\xef\xbb\xbf" + true.read_bytes())
    same = _run("compare", str(marked), str(true), "--json")
    assert same.exit_code == 0 and json.loads(same.output)["SHD"] == 0, same.output
    keyed = tmp_path / "keyed.json"       # {"A": false} was read as the edge A → B (its key), SHD 0, exit 0
    keyed.write_text(json.dumps({"parents": {"A": [], "B": {"A": False}, "C": ["B"]}}))
    assert "parents of 'B' must be a list of variable names" in _one_line_error(_run("compare", str(keyed), str(true)))
    stringly = tmp_path / "stringly.json"  # "false" is a true string: the incomplete result's note was never said
    stringly.write_text(json.dumps({"parents": {"A": [], "B": ["A"], "C": ["B"]}, "complete": "false"}))
    assert "stringly.json: 'complete' must be true or false, got 'false'" in _one_line_error(
        _run("compare", str(stringly), str(true)))
    rounded = tmp_path / "rounded.json"
    rounded.write_text(json.dumps({"variables": ["A", "B", "C"], "edges": [
        {"from": "A", "to": "B", "posterior": 0.7}, {"from": "B", "to": "A", "posterior": 0.2},
        {"from": "B", "to": "C", "posterior": 1.0}]}))
    m = json.loads(_run("compare", str(rounded), str(true), "--edges-threshold", "0.9", "--json").output)
    assert m["AR"] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "parents": {,}\n}')
    assert f"{bad}:2:15:" in _one_line_error(_run("compare", str(bad), str(true)))


def test_simulate_never_leaves_its_data_without_its_truth_and_prints_names_verbatim(tmp_path):
    """-o and --truth naming one file is refused (the truth replaced the data); a truth that cannot be written
    takes the data file with it; a name with rich markup in it is printed as it is."""
    same = tmp_path / "x.csv"
    assert "same file" in _one_line_error(_run("simulate", "--nodes", "3", "--samples", "20", "--seed", "1",
                                               "-o", str(same), "--truth", str(same)))
    assert not same.exists()
    data = tmp_path / "d.csv"
    blocked = tmp_path / "d.csv" / "t.json"          # its folder would be the data file, written first
    res = _run("simulate", "--nodes", "3", "--samples", "20", "--seed", "1", "-o", str(data), "--truth", str(blocked))
    assert res.exit_code == 2 and not data.exists()
    marked = tmp_path / "data[run1].csv"
    res = _run("simulate", "--nodes", "3", "--samples", "20", "--seed", "1", "-o", str(marked),
               "--truth", str(tmp_path / "t.json"))
    assert res.exit_code == 0 and f"wrote {marked}" in res.output.replace("\n", "")
    from bnilp.errors import InputError
    from bnilp.simulate import sample_dag

    with pytest.raises(InputError, match="n_samples must be an integer ≥ 3"):
        sample_dag({"A": []}, {"A": "continuous"}, 2)       # two rows standardise to ±1, read back as discrete
    with pytest.raises(InputError, match="'discrete' or 'continuous'"):
        sample_dag({"A": []}, {"A": "Discrete"}, 20)
    with pytest.raises(InputError, match="at least 2"):
        sample_dag({"A": []}, {"A": "discrete"}, 20, categories={"A": 1})
    assert len(sample_dag({"A": [], "B": ["A"]}, {"A": "continuous", "B": "discrete"}, 20, bins=np.int64(4))) == 20


@pytest.mark.skipif(not __import__("os").path.isdir("/dev/fd"), reason="names descriptors through /dev/fd")
def test_a_descriptor_that_leads_to_a_file_is_that_file_and_two_names_of_one_stream_are_one(tmp_path):
    """``-``, ``/dev/stdout`` and ``/dev/fd/1`` are one output; a descriptor redirected to a regular file (``--json
    /dev/stdout > r.dot --dot r.dot``, ``--json - >> DATA``) is that file, as its real path said before ``-`` was
    made a descriptor's name (a review of that change: the JSON went into the data file)."""
    import os

    from bnilp.cli.options import same_file_key

    assert same_file_key("-") == same_file_key("/dev/stdout") == same_file_key("/dev/fd/1")
    target = tmp_path / "r.dot"
    with open(target, "w") as handle:
        assert same_file_key(f"/dev/fd/{handle.fileno()}") == same_file_key(target)
    read, write = os.pipe()
    try:
        assert same_file_key(f"/dev/fd/{write}") == f"<descriptor {write}>" != same_file_key(target)
    finally:
        os.close(read)
        os.close(write)


def test_outputs_that_would_replace_an_input_or_each_other_are_refused_before_any_work(chain_csv, tmp_path):
    """An output path equal to the data, to another output, or to the sidecar ``PATH.json`` a score file
    brings is one line, exit 2, nothing written — the data was replaced by a score file, and a result JSON
    saved as a score file's sidecar made a palim-cut table read as complete."""
    scores = tmp_path / "s.scores"
    cases = (
        (("score", str(chain_csv), "-o", str(chain_csv)), "DATA and -o name the same file"),
        (("learn", str(chain_csv), "--scores", str(scores), "--json", f"{scores}.json"),
         "--json and --scores's sidecar name the same file"),
        (("learn", str(chain_csv), "--json", str(chain_csv)), "DATA and --json name the same file"),
        (("learn", str(chain_csv), "--json", str(tmp_path / "r"), "--dot", str(tmp_path / "r")),
         "--json and --dot name the same file"),
        # '-' is stdout as /dev/stdout is: both outputs went into it, one after the other (a review)
        (("learn", str(chain_csv), "--json", "/dev/stdout", "--dot", "-"), "--json and --dot name the same file"),
        (("learn", str(chain_csv), "--json", "-", "--graphml", "/dev/fd/1"), "--json and --graphml name the same"),
    )
    before = chain_csv.read_bytes()
    for args, words in cases:
        assert words in _one_line_error(_run(*args, "-q"))
    assert chain_csv.read_bytes() == before and not scores.exists() and not (tmp_path / "r").exists()
    (tmp_path / "d.scores.json").mkdir()
    assert "-o: " in _one_line_error(_run("score", str(chain_csv), "-q", "-o", str(tmp_path / "d.scores")))
    assert not (tmp_path / "d.scores").exists()


def test_a_sidecar_written_for_another_score_file_is_refused(chain_csv, tmp_path):
    """The sidecar vouches for one file (ε, palim): with another file's text under its name — a table cut at
    palim 1 copied over an unlimited one — the SHA-256 it records no longer matches and solve refuses, where
    it reported the cut table's networks as complete (exit 0); a sidecar without the hash (older files) is
    held to its parent-set count, and a JSON that is no sidecar at all is refused too."""
    wide, narrow = tmp_path / "wide.scores", tmp_path / "narrow.scores"
    assert _run("score", str(chain_csv), "-q", "--bf", "20", "-o", str(wide)).exit_code == 0
    assert _run("score", str(chain_csv), "-q", "--bf", "20", "--palim", "1", "-o", str(narrow)).exit_code == 3
    assert narrow.read_text() != wide.read_text()
    assert _run("solve", str(wide), "-q", "--bf", "20").exit_code == 0
    wide.write_text(narrow.read_text())
    assert "wide.scores.json: written for another score file" in _one_line_error(
        _run("solve", str(wide), "-q", "--bf", "20"))
    sidecar = tmp_path / "wide.scores.json"
    meta = json.loads(sidecar.read_text())
    del meta["score_file_sha256"]
    sidecar.write_text(json.dumps(meta))
    assert "(n_parent_sets" in _one_line_error(_run("solve", str(wide), "-q", "--bf", "20"))
    sidecar.write_text(json.dumps({"epsilon": 3.0}))
    assert "not a score-file sidecar" in _one_line_error(_run("solve", str(wide), "-q", "--bf", "20"))


def test_options_that_would_be_ignored_or_fail_after_the_search_are_one_line_before_any_work(chain_csv, tmp_path):
    """Each of these was accepted and ignored, or refused only after scoring and search with the other outputs
    lost, or written over another output: now one line, exit 2, before any work and with no file written."""
    scores = tmp_path / "s.scores"
    assert _run("score", str(chain_csv), "-q", "--bf", "20", "-o", str(scores)).exit_code == 0
    sidecar = (tmp_path / "s.scores.json").read_text()
    knowledge = tmp_path / "k.txt"
    knowledge.write_text("forbid x -> y\n")
    labels = tmp_path / "cc.csv"
    labels.write_text("a,b\n" + "".join(("x\x01y" if i % 2 else "z") + f",{i % 3}\n" for i in range(40)))
    out = tmp_path / "out"
    cases = (
        (("learn", str(chain_csv), "--report", str(out), "--export", str(out / "networks.json")),
         "--report's networks.json and --export name the same file"),
        (("solve", str(scores), "--bf", "20", "--json", f"{scores}.json"), "SCORES's sidecar and --json"),
        (("score", str(chain_csv), "-o", str(knowledge), "--knowledge", str(knowledge)), "--knowledge and -o"),
        (("solve", str(scores), "--bf", "0.5", "--epsilon", "2.9"), "give --bf or --epsilon, not both"),
        (("proxy-search", str(chain_csv), "--method", "greedy", "--refine-samples", "7"),
         "--refine-samples applies to --method proxy only"),
        (("proxy-search", str(chain_csv), "--method", "greedy", "--expected-in-degree", "3", "--samples", "9"),
         "--samples, --expected-in-degree apply to --method proxy only"),
        (("proxy-search", str(chain_csv), "--prior", "mecs"), "proxy-search takes none|binomial|ebic"),
        (("citest", str(chain_csv), "x", "y", "--prior", "binomial"), "citest takes neither"),
        (("citest", str(chain_csv), "x", "y", "--penalty-discount", "2"), "citest takes neither"),
        (("learn", str(chain_csv), "--optimum-only", "--export", str(out / "m.bif"), "--export-network", "2"),
         "--optimum-only returns one network"),
        # options --optimum-only would ignore (they ran with no effect), and a report folder named '-' (stdout)
        (("learn", str(chain_csv), "--optimum-only", "--prior", "mecs"), "enumerates nothing: drop --prior mecs"),
        (("learn", str(chain_csv), "--optimum-only", "--max-networks", "5"), "enumerates nothing: drop --max-netw"),
        (("learn", str(chain_csv), "--report", "-"), "--report: -: names a stream, and this is a folder"),
        (("learn", str(chain_csv), "--parameters", "bayes", "--ess", "0", "--export", str(out / "m.bif"),
          "--json", str(out / "r.json")), "--ess must be a finite number ≥ 1e-100 for --parameters bayes"),
        # an ESS so small that α/(q·r) underflows: NaN rows in the BIF, a traceback writing the JSON (a review)
        (("learn", str(chain_csv), "--parameters", "bayes", "--ess", "5e-324", "--export", str(out / "m.bif"),
          "--json", str(out / "r.json")), "--ess must be a finite number ≥ 1e-100 for --parameters bayes"),
        (("learn", str(chain_csv), "--export", "-"), "an export cannot go to standard output"),
        (("learn", str(labels), "--export", str(out / "m.xmlbif"), "--json", str(out / "r.json")),
         "XMLBIF cannot hold the control character U+0001"),
        (("learn", str(chain_csv), "--json", str(tmp_path)), "--json: "),
        (("score", str(tmp_path), "-o", str(out / "x.scores")), "cannot be read"),
    )
    for args, words in cases:
        assert words in _one_line_error(_run(*args, *(() if args[0] == "citest" else ("-q",)))), args
    assert not out.exists() and (tmp_path / "s.scores.json").read_text() == sidecar
    assert knowledge.read_text() == "forbid x -> y\n"


def test_non_finite_time_limits_are_refused_before_scoring_naming_the_flag(chain_csv, tmp_path):
    """``--time-limit inf`` (or nan) passed the early check and failed only after scoring, with a message naming
    no flag: a limit must be a finite number of seconds > 0 (no limit is no flag), checked before any work — one
    line naming the flag, exit 2, no --scores file. ``--score-time-limit`` the same."""
    scores = tmp_path / "s.scores"
    for flag in ("--time-limit", "--score-time-limit"):
        for value in ("inf", "nan", "-inf"):
            line = _one_line_error(_run("learn", str(chain_csv), "-q", "--scores", str(scores), flag, value))
            assert f"{flag} must be a finite number of seconds > 0" in line, line
            assert not scores.exists()
    line = _one_line_error(_run("learn", str(chain_csv), "-q", "--prior", "ebic", "--ebic-gamma", "inf"))
    assert "--ebic-gamma" in line and "finite" in line


def test_what_the_score_and_the_columns_decide_is_refused_before_scoring(chain_csv, tmp_path):
    """``--enumerate mecs`` and ``--count-past-cap`` with a score that is not score-equivalent, ``--list-dags``
    where DAGs are enumerated (it would be ignored), and column names a score file cannot hold with
    ``--scores``/``-o`` were refused only after scoring (the score file already written): the score's name, its
    prior and the data's columns decide them, so they are one line, exit 2, before scoring, nothing written."""
    scores = tmp_path / "s.scores"
    for extra, words in ((["--score", "cgd", "--enumerate", "mecs"], "--enumerate mecs"),
                         (["--score", "cgd", "--count-past-cap"], "--count-past-cap"),
                         (["--score", "cgd", "--list-dags"], "--list-dags"),
                         (["--enumerate", "dags", "--list-dags"], "--list-dags")):
        assert words in _one_line_error(_run("learn", str(chain_csv), "-q", "--scores", str(scores), *extra)), extra
        assert not scores.exists()
    spaced = tmp_path / "spaced.csv"
    pd.read_csv(chain_csv).rename(columns={"x": "body mass"}).to_csv(spaced, index=False)
    for args, flag in ((("learn", str(spaced), "--scores", str(scores)), "--scores"),
                       (("score", str(spaced), "-o", str(scores)), "-o")):
        line = _one_line_error(_run(*args, "-q"))
        assert f"{flag}: variable name 'body mass' cannot be written to a score file" in line
        assert not scores.exists()
    res = _run("learn", str(spaced), "--bf", "1", "-q")          # no score file asked for: the names are fine
    assert res.exit_code == 0, res.output


def test_an_output_inside_another_output_is_refused_before_any_work(chain_csv, tmp_path):
    """``--json nest/r.json --dot nest`` wrote the JSON (making the folder nest) and then failed on the DOT
    file, exit 2 after the whole run with one output left: an output that is a folder of another is refused up
    front, one line naming both flags, nothing written. A file may go into ``--report DIR`` beside its files."""
    nest = tmp_path / "nest"
    for args in ((["--json", f"{nest}/r.json", "--dot", str(nest)]),
                 (["--dot", f"{nest}/sub/b.dot", "--graphml", str(nest)]),
                 (["--scores", str(nest), "--json", f"{nest}/r.json"])):
        line = _one_line_error(_run("learn", str(chain_csv), "-q", *args))
        assert "lies inside" in line and line.count("--") >= 2, line
        assert not nest.exists()
    rep = tmp_path / "rep"
    res = _run("learn", str(chain_csv), "-q", "--bf", "1", "--report", str(rep), "--json", str(rep / "r.json"))
    assert res.exit_code == 0, res.output
    assert (rep / "r.json").exists() and (rep / "edges.csv").exists()


def test_a_warm_start_file_the_table_cannot_hold_is_a_hint_not_used(chain_csv, tmp_path):
    """A ``--warm-start`` JSON whose network the score table cannot hold (a parent set pruned, or past the palim)
    ended the run with exit 2 after scoring — or, with any knowledge, was dropped as "does not satisfy the
    background knowledge". A warm start is only a hint (README): the run goes on, and the JSON says it was not
    used with the true reason. A file that is no network of these variables — an unknown name, a variable left
    out, a directed cycle — is bad input, refused before scoring (no --scores file)."""
    start = tmp_path / "w.json"
    start.write_text(json.dumps({"parents": {"x": ["z"], "y": ["x", "z"], "z": []}}))   # y | x, z: pruned at BF 1
    scores, out = tmp_path / "s.scores", tmp_path / "r.json"
    cases = ((["--palim", "1"], 3, "larger than the palim (1)"),
             (["--bf", "1"], 0, "pruned"),
             (["--bf", "1", "--forbid", "y->x"], 0, "pruned"))
    for extra, code, why in cases:
        res = _run("learn", str(chain_csv), "-q", "--warm-start", str(start), "--json", str(out), *extra)
        assert res.exit_code == code, res.output
        doc = json.loads(out.read_text())
        info = doc["warm_start"]
        assert info["used"] is False and "['x', 'z'] of 'y' is not in the score table" in info["why"], info
        assert why in info["why"], info
        assert doc["warm_start_note"] == f"warm start not used: {info['why']}"
        assert "background knowledge" not in info["why"]
        assert doc["provenance"]["settings"]["warm_start"] is True      # given, not used (it read false: a review)
    for parents, words in (({"x": [], "y": ["x"], "w": []}, "unknown variable(s) 'w'"),
                           ({"x": [], "y": ["q"], "z": []}, "unknown variable(s) 'q'"),
                           ({"x": [], "y": ["x"]}, "no parents given for 'z'"),
                           ({"x": ["z"], "y": ["x"], "z": ["y"]}, "the network has a directed cycle"),
                           ({"x": [], "y": ["x", "x"], "z": []}, "'x' is listed twice among the parents of 'y'")):
        start.write_text(json.dumps({"parents": parents}))
        line = _one_line_error(_run("learn", str(chain_csv), "-q", "--warm-start", str(start),
                                    "--scores", str(scores)))
        assert f"w.json: {words}" in line, line
        assert not scores.exists()
    assert _run("score", str(chain_csv), "-q", "-o", str(scores)).exit_code == 0
    start.write_text(json.dumps({"parents": {"x": [], "y": ["x"], "w": []}}))
    assert "unknown variable(s) 'w': not among the score file's variables" in _one_line_error(
        _run("solve", str(scores), "-q", "--warm-start", str(start)))
    start.write_bytes(b"\xef\xbb\xbf" + json.dumps({"parents": {"x": [], "y": ["x"], "z": ["y"]}}).encode())
    res = _run("solve", str(scores), "-q", "--warm-start", str(start), "--json", str(out))    # a byte-order mark
    assert res.exit_code == 0, res.output           # read (its score given), though the DP needs no start
    info = json.loads(out.read_text())["warm_start"]
    assert info["source"] == str(start) and info["score"] <= json.loads(out.read_text())["optimum"], info


def test_a_finished_score_file_is_kept_when_the_run_ends_without_a_result(tmp_path):
    """``learn --scores`` writes the score file once scoring has finished: it is complete (as ``bnilp score``
    writes it), so a run that then ends without a result — here background knowledge no DAG satisfies, exit 2 —
    keeps it and its sidecar (README, Statuses and exit codes), while no other output (--json) is written."""
    scores, out = tmp_path / "k.scores", tmp_path / "k.json"
    res = _run("learn", "-q", "--palim", "0", "--no-prune", "--require", "asia~>tub", "--forbid", "asia->tub",
               "--scores", str(scores), "--json", str(out))
    assert "no DAG satisfies the background knowledge" in _one_line_error(res)
    assert not out.exists()
    table = read_jaakkola(scores)
    assert len(table.variables) == 8 and table.meta["palim"] == 0 and table.meta["knowledge"]["statements"]


def test_compare_of_a_capped_result_says_so_and_exits_3(tmp_path):
    """``compare`` on a LEARNED result that is incomplete (``solve --max-networks 1``: complete false) or limited
    reads its ``status``/``complete``/``limits``/``optimum_proven``, puts them in its JSON (``learned_status``,
    ``learned_complete``, ``learned_limits``) and a NOTE in its table, and exits 3 — never a silent 0 for metrics
    of a truncated list; a complete result still exits 0 with the fields filled in."""
    scores, capped, full = tmp_path / "a.scores", tmp_path / "capped.json", tmp_path / "full.json"
    assert _run("score", "instances/asia.csv", "-o", str(scores), "--bf", "20", "-q").exit_code == 0
    res = _run("solve", str(scores), "--bf", "20", "--max-networks", "1", "--enumerate", "dags", "--json",
               str(capped), "-q")
    assert res.exit_code == 3, res.output
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"parents": json.loads(capped.read_text())["networks"][0]["parents"]}))
    for extra in (("--edges-threshold", "0.5"), ()):
        res = _run("compare", str(capped), str(truth), "--json", *extra)
        assert res.exit_code == 3, res.output
        m = json.loads(res.output[:res.output.rindex("}") + 1])
        assert m["learned_status"] == "network_limit" and m["learned_complete"] is False
        assert m["learned_limits"] == [] and "incomplete" in m["learned_note"]
    table = _run("compare", str(capped), str(truth), "--edges-threshold", "0.5")
    assert table.exit_code == 3 and "NOTE" in table.output and "incomplete" in table.output
    assert _run("solve", str(scores), "--bf", "20", "--json", str(full), "-q").exit_code == 0
    res = _run("compare", str(full), str(truth), "--json", "--edges-threshold", "0.5")
    assert res.exit_code == 0, res.output
    m = json.loads(res.output)
    assert m["learned_status"] == "optimal" and m["learned_complete"] is True and m["learned_note"] is None


def test_compare_of_a_list_capped_over_a_counted_set_says_what_the_metrics_rest_on(tmp_path):
    """A class list capped where every credible class was still counted (peeling; ``--count-past-cap``): the
    posteriors and the proven optimum compare uses cover the whole set, so its NOTE says the list is capped and
    what the metrics rest on — not "the networks it found" — and the exit stays 3 (the learned run's limit)."""
    scores, capped = tmp_path / "a.scores", tmp_path / "capped.json"
    assert _run("score", "instances/asia.csv", "-o", str(scores), "--bf", "20", "-q").exit_code == 0
    res = _run("solve", str(scores), "--bf", "20", "--max-networks", "1", "--json", str(capped))
    assert res.exit_code == 3, res.output
    doc = json.loads(capped.read_text())
    assert doc["status"] == "network_limit" and doc["posterior_classes"] > doc["n_mecs"] == 1
    assert f"(top 1 of 1 listed, {doc['posterior_classes']} credible)" in res.output
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"parents": doc["networks"][0]["parents"]}))
    for extra in (("--edges-threshold", "0.5"), ()):
        res = _run("compare", str(capped), str(truth), "--json", *extra)
        assert res.exit_code == 3, res.output
        note = json.loads(res.output[:res.output.rindex("}") + 1])["learned_note"]
        assert note.startswith("the learned result's list is capped (the best 1 of ")
        assert f"posteriors over all {doc['posterior_classes']} credible classes" in note
        assert "networks it found" not in note


@pytest.mark.parametrize("args, flag", [
    (("score", "instances/asia.csv", "--bins", "5"), "--bins"),
    (("score", "instances/asia.csv", "--score", "bdeu", "--mvp-degree", "2"), "--mvp-degree"),
    (("score", "instances/asia.csv", "--ess", "7"), "--ess"),
    (("learn", "--ess", "7", "--export", "x.bif"), "--ess"),           # BIC exports ML parameters by default
    (("score", "instances/asia.csv", "--expected-parents", "3"), "--expected-parents"),
    (("score", "instances/asia.csv", "--prior", "binomial", "--ebic-gamma", "0.9"), "--ebic-gamma"),
    (("citest", "instances/asia.csv", "smoke", "lung", "--expected-parents", "2"), "--expected-parents"),
])
def test_a_score_setting_the_run_would_ignore_is_refused(tmp_path, args, flag) -> None:
    """A setting of another score or prior than the run's would silently not apply: one line naming it, exit 2,
    before any scoring and with no output file."""
    out = ("-o", str(tmp_path / "x.scores")) if args[0] == "score" else ()
    quiet = () if args[0] == "citest" else ("-q",)
    res = _run(*[a if a != "x.bif" else str(tmp_path / "x.bif") for a in args], *out, *quiet)
    assert _one_line_error(res).startswith(f"bnilp: error: {flag} is "), res.output
    assert "would ignore it" in res.output and not list(tmp_path.iterdir())


@pytest.mark.parametrize("args, says", [
    (("citest", "instances/asia.csv", "smoke", "lung", "--score", "bic", "--ess", "2"),
     "--ess is BDeu's (which citest does not take: its --score is one of bic, cg, cgd, mvp) setting"),
    (("score", "instances/asia.csv", "--ess", "2"), "--ess is BDeu's (--score bdeu) setting"),
    (("learn", "instances/asia.csv", "--ess", "2"), "--ess is BDeu's (--score bdeu) and --parameters bayes's setting"),
])
def test_the_refusal_of_an_ignored_ess_names_only_what_the_command_offers(tmp_path, args, says) -> None:
    """``--ess`` given where nothing would use it was refused for being "BDeu's (--score bdeu) and --parameters
    bayes's" in every command — ``citest`` offers neither (its --score has no bdeu), ``score`` no export (a review)."""
    out = ("-o", str(tmp_path / "x.scores")) if args[0] == "score" else ()
    res = _run(*args, *out)
    assert _one_line_error(res) == f"bnilp: error: {says}: this run would ignore it", res.output


@pytest.mark.parametrize("command", ["score", "learn"])
@pytest.mark.parametrize("args, says", [
    (("--score", "cg", "--mvp-degree", "2"), "bnilp: error: --mvp-degree is MVP's"),
    (("--score", "bic", "--bf", "3"), "score 'bic' needs discrete data, but c is continuous"),
])
def test_an_error_after_the_data_are_read_is_still_the_one_line_under_q(tmp_path, command, args, says) -> None:
    """The data's warnings are shown even with ``-q`` (an identifier column here), but a setting the score refuses
    or data it cannot score ended the run with those warnings above the error: two or three lines where the
    contract wants one (an option fuzz). The score is built before the data's warnings are printed."""
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": [f"p{i}" for i in range(60)], "a": rng.integers(0, 2, 60), "b": rng.integers(0, 3, 60),
                  "c": rng.normal(size=60)}).to_csv(tmp_path / "d.csv", index=False)
    out = ("-o", str(tmp_path / "x.scores")) if command == "score" else ()
    assert says in _one_line_error(_run(command, str(tmp_path / "d.csv"), "-q", *args, *out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]
    fine = _run(command, str(tmp_path / "d.csv"), "-q", "--score", "cg", "--palim", "1", *out)
    assert "column 'id' has a distinct value on every one of its 60 rows" in fine.output      # the warning stays


def test_the_settings_a_run_uses_are_taken(tmp_path) -> None:
    for args in (("--score", "bdeu", "--ess", "2"), ("--prior", "binomial", "--expected-parents", "2"),
                 ("--prior", "ebic", "--ebic-gamma", "0.9"), ("--score", "cgd", "--bins", "4")):
        assert _run("score", "instances/asia.csv", "-o", str(tmp_path / "x.scores"), "-q", *args).exit_code == 0
    res = _run("learn", "--ess", "7", "--parameters", "bayes", "--export", str(tmp_path / "x.bif"), "-q")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("args, words", [
    (("learn", "--foo"), ("No such option", "--foo")),   # click before 8.4 words it "No such option: --foo"
    (("learn", "--bf", "abc"), "Invalid value for '--bf': 'abc' is not a valid float"),
    (("proxy-search", "instances/asia.csv", "--samples", "abc"), "Invalid value for '--samples'"),
    (("score",), "Missing argument 'DATA'"),
    (("nosuch",), "No such command 'nosuch'"),
    (("proxy-search", "instances/asia.csv", "--refine", "0", "--refine-samples", "5"), "--refine 0 runs none"),
])
def test_click_s_usage_errors_are_one_line_too(args, words) -> None:
    """An unknown option, a value of the wrong type, a missing argument: the same one line and exit 2 as every
    other bad input (click printed its usage block and a hint over four lines)."""
    line = _one_line_error(_run(*args))
    assert all(part in line for part in ((words,) if isinstance(words, str) else words)), line


def test_bnilp_alone_shows_its_help() -> None:
    res = _run()
    assert res.exit_code == 2 and "Usage:" in res.output and "learn" in res.output


def test_a_score_file_without_its_sidecar_says_what_its_completeness_rests_on(chain_csv, tmp_path):
    """Nothing records the BF a score file without a sidecar (GOBNILP's, pygobnilp's) was pruned for, so a credible
    set listed from it at BF > 1 is complete only if the file was pruned for at least that BF: the warning is on
    stderr with -q too, and the JSON carries it as ``pruning_note``; with the sidecar (BF ≥ the one asked) there
    is no note."""
    scores = tmp_path / "chain.scores"
    assert _run("score", str(chain_csv), "-o", str(scores), "--bf", "20", "-q").exit_code == 0
    with_sidecar = tmp_path / "with.json"
    assert _run("solve", str(scores), "--bf", "20", "-q", "--json", str(with_sidecar)).exit_code == 0
    assert "pruning_note" not in json.loads(with_sidecar.read_text())
    (tmp_path / "chain.scores.json").unlink()
    out = tmp_path / "without.json"
    result = _run("solve", str(scores), "--bf", "20", "-q", "--json", str(out))
    assert result.exit_code == 0
    assert result.stderr.count("nothing records the BF this score table was pruned for") == 1   # once, one line
    assert "bnilp: warning: nothing records the BF this score table was pruned for" in result.stderr
    counted = _run("count", str(scores), "--bf", "20", "-q", "--json", str(tmp_path / "count.json"))
    assert counted.exit_code == 0 and counted.stderr.count("nothing records the BF") == 1   # not the DataWarning too
    assert "at least BF 20" in json.loads((tmp_path / "count.json").read_text())["pruning_note"]    # as solve's JSON
    assert "at least BF 20" in json.loads(out.read_text())["pruning_note"]


def test_every_option_says_what_it_takes() -> None:
    """Options that take a file, a folder, a range or a degree showed click's ``TEXT``: each names its kind now, and
    a number's help states the range the command enforces."""
    from bnilp.cli import COMMANDS

    for command in COMMANDS:
        shown = _run(command, "--help").output
        assert " TEXT " not in shown, (command, [line for line in shown.splitlines() if " TEXT " in line])
    assert "--report DIR" in _run("learn", "--help").output and "-o, --output FILE" in _run("score", "--help").output
    stated = {  # the ranges each command enforces (an InputError naming the flag), stated in its help too
        "citest": ["Significance level, in (0, 1)", "equal-frequency bins (≥ 2)"],
        "score": ["sample size (> 0; the BDeu score needs ≥ 1e-100)", "r, in (0, n − 1)", "γ (≥ 0)", "MVP; > 0)",
                  "BF ≥ 1)", "--bf; ≥ 0)", "an integer ≥ 1"],
        "proxy-search": ["random DAGs; ≥ 2)", "posterior sd (≥ 0)", "training DAGs (> 0)"],
        "simulate": ["Average degree, in [0, nodes − 1]", "discrete, in [0, 1]"],
        "compare": ["at this threshold, in (0, 1]"]}
    for command, words in stated.items():
        shown = " ".join(_run(command, "--help").output.split())
        for said in words:
            assert said in shown, (command, said)


def test_citest_help_offers_only_what_citest_takes(tmp_path) -> None:
    """``citest --help`` listed bdeu and mml among --score's choices and showed --ess, --prior, --expected-parents,
    --ebic-gamma and --penalty-discount with defaults, though citest refuses all of them; they are refused still
    (with their reasons) but are no longer offered. Its --null help states the sparse all-discrete case."""
    shown = _run("citest", "--help").output
    assert "[bic|cg|cgd|mvp]" in shown
    for flag in ("--ess", "--prior", "--expected-parents", "--ebic-gamma", "--penalty-discount"):
        assert flag not in shown, flag
    assert "every variable is discrete" in " ".join(shown.split())
    data = tmp_path / "d.csv"
    pd.DataFrame({"x": [0, 1] * 30, "y": [0, 0, 1] * 20}).to_csv(data, index=False)
    assert "citest takes neither" in _one_line_error(_run("citest", str(data), "x", "y", "--prior", "binomial"))
    assert "bdeu" in _one_line_error(_run("citest", str(data), "x", "y", "--score", "bdeu"))


def test_help_lists_only_the_choices_a_command_takes_and_says_where_auto_permutes(tmp_path) -> None:
    """``score --help`` and ``proxy-search --help`` offered ``--prior [none|binomial|ebic|dags|mecs]``, and both
    refuse dags and mecs (no credible set to average over): they list the structure priors only, and still refuse
    the others with the reason. ``citest --null auto`` permutes sparse all-discrete cells only for the scores whose
    test is a multinomial G² (BIC, CG, CGd; MVP's is not): its help said every score (a review)."""
    data = tmp_path / "d.csv"
    pd.DataFrame({"x": [0, 1] * 30, "y": [0, 0, 1] * 20}).to_csv(data, index=False)
    for command, args in (("score", ("-o", str(tmp_path / "o.scores"))), ("proxy-search", ())):
        shown = _run(command, "--help").output
        assert "--prior [none|binomial|ebic] " in shown and "mecs" not in shown, command
        said = _one_line_error(_run(command, str(data), *args, "--prior", "mecs"))
        assert "averaging prior of learn/solve" in said, command
    assert "--prior [none|binomial|ebic|dags|mecs]" in _run("learn", "--help").output
    assert "all-discreteG²(--scorebic,cg,cgd" in "".join(_run("citest", "--help").output.split())


def test_a_warm_start_the_dynamic_programme_never_takes_is_said_unused(tmp_path, monkeypatch) -> None:
    """Up to 22 variables the dynamic programme proves OPT and branch-and-cut, which alone takes a start, never
    runs: the JSON said nothing (as if used). Now ``used`` is false with why, the start's score and gap stay;
    with branch-and-cut it is used. ``-q`` no longer prints the start's score line."""
    from bnilp.ilp import settings

    monkeypatch.setattr(settings, "FOREST_ENUMERATION", False)      # (its table has at most one parent a variable)
    monkeypatch.setattr(settings, "BRANCHING_ENUMERATION", False)
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, 400)
    pd.DataFrame({"a": a, "b": (a + (rng.random(400) < 0.2)) % 2, "c": rng.integers(0, 2, 400)}).to_csv(
        data, index=False)
    out = tmp_path / "r.json"
    res = _run("learn", str(data), "-q", "--warm-start", "greedy", "--json", str(out))
    assert res.exit_code == 0 and "warm start from greedy search" not in res.output, res.output
    info = json.loads(out.read_text())["warm_start"]
    assert info["used"] is False and "dynamic programme proved OPT" in info["why"], info
    assert info["gap_to_optimum"] >= -1e-9
    monkeypatch.setattr(settings, "DP_MAX_VARIABLES", 0)
    monkeypatch.setattr(settings, "DP_LARGE_TABLE_MAX_VARIABLES", 0, raising=False)
    assert _run("learn", str(data), "-q", "--warm-start", "greedy", "--json", str(out)).exit_code == 0
    doc = json.loads(out.read_text())
    assert "used" not in doc["warm_start"] and doc["stats"]["phase1"]["method"] == "branch-and-cut", doc["warm_start"]


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_a_simulation_whose_truth_cannot_be_written_leaves_what_was_at_its_data_path(tmp_path):
    """The data were written first and, when the truth failed, removed by name: a file that was there before
    was lost, a symbolic link, a FIFO or ``/dev/null`` itself (as root) deleted (a review's find). The two
    outputs are now one set (:func:`bnilp.scorefile.output_set`): neither is written, the path keeps what it had."""
    import os

    old = tmp_path / "old.csv"
    old.write_text("OLD\n")
    target = tmp_path / "target.csv"
    target.write_text("TARGET\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    for out in (old, link):
        line = _one_line_error(_run("simulate", "--nodes", "4", "--samples", "50", "--seed", "1", "-o", str(out),
                                    "--truth", "/dev/full", "-q"))
        assert "/dev/full: cannot be written (No space left on device)" in line
    assert old.read_text() == "OLD\n" and os.path.islink(link) and target.read_text() == "TARGET\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "old.csv", "target.csv"]


def test_compare_refuses_a_learned_result_whose_limits_or_status_it_cannot_read_and_names_both_files(
        tmp_path, simulated):
    """A learned result with ``"limits": "palim"`` (a string) or an unknown status was read as having no limit:
    the comparison exited 0 without its note (a review; ``complete`` and ``optimum_proven`` were checked already).
    Both are refused naming the file; graphs with different variables name both files."""
    data, truth_path, _ = simulated
    learned = tmp_path / "l.json"
    res = _run("learn", str(data), "--score", "cg", "--bf", "3", "--palim", "1", "-q", "--json", str(learned))
    assert res.exit_code == 3, res.output
    doc = json.loads(learned.read_text())
    assert _run("compare", str(learned), str(truth_path)).exit_code == 3
    for key, value, says in (("limits", "palim", "'limits' must be a list of names, got 'palim'"),
                             ("limits", {"palim": 1}, "'limits' must be a list of names"),
                             ("status", "bogus", "'status' must be one of optimal, ")):
        bad = tmp_path / f"bad_{key}.json"
        bad.write_text(json.dumps({**doc, key: value}))
        line = _one_line_error(_run("compare", str(bad), str(truth_path)))
        assert str(bad) in line and says in line, line
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"parents": {"X1": [], "Y": []}}))
    line = _one_line_error(_run("compare", str(other), str(truth_path)))
    assert f"{other} (LEARNED) and {truth_path} (TRUE): the learned and true graphs have different variables" in line


def test_an_error_quoting_a_carriage_return_stays_one_line(tmp_path) -> None:
    """A knowledge statement holding a raw CR was quoted as it was: the terminal overwrote the start of the error
    line with its end (a review). Every error line is written with such characters escaped."""
    data = tmp_path / "d.csv"
    data.write_text("X3,X4\n0,1\n1,0\n1,1\n0,0\n")
    knowledge = tmp_path / "k.txt"
    knowledge.write_bytes(b"require X\r3 -> X4\n")
    line = _one_line_error(_run("score", str(data), "--knowledge", str(knowledge), "-o", str(tmp_path / "o.scores")))
    assert "\r" not in line and "'require X\\r3 -> X4'" in line
    from bnilp.terminal import one_line

    assert one_line("a\rb\nc\x1b[2Jd\u2028e\tf") == "a\\rb\\nc\\x1b[2Jd\\u2028e\tf" and one_line("plain") == "plain"


def test_a_table_whose_sidecar_hides_its_knowledge_is_refused_naming_the_file(tmp_path) -> None:
    """A score file scored under ``--require`` whose sidecar lost its knowledge record reads as soundly pruned, and
    its classes cannot all be counted: the error (exit 2) did not say which file (a review)."""
    from bnilp.data import default_path

    scores = tmp_path / "k.scores"
    res = _run("score", str(default_path("asia.csv")), "--require", "lung->smoke", "--bf", "3", "-q",
               "-o", str(scores))
    assert res.exit_code == 0, res.output
    sidecar = tmp_path / "k.scores.json"
    doc = json.loads(sidecar.read_text())
    doc.pop("knowledge")
    sidecar.write_text(json.dumps(doc))
    line = _one_line_error(_run("solve", str(scores), "--bf", "3", "-q"))
    assert line.startswith(f"bnilp: error: {scores}: class 1 has") and "admits only" in line


def test_settings_a_run_would_ignore_are_refused_naming_their_flags(tmp_path):
    """--permutations and --seed with citest --null chi2 (no permutation to make), --penalty-discount with BDeu (no
    penalty): one line naming the flag, exit 2 (they were taken and ignored, or refused in the API's words); a
    file whose names line is numbers points to load_data's no_header (API) and --no-header."""
    for extra, flags in ((["--permutations", "5"], "--permutations is"), (["--seed", "3"], "--seed is"),
                         (["--permutations", "5", "--seed", "3"], "--permutations and --seed are")):
        out = _run("citest", "instances/asia.csv", "smoke", "lung", "--score", "bic", "--null", "chi2", *extra)
        assert out.exit_code == 2 and _one_line_error(out).startswith(
            f"bnilp: error: {flags} the permutation null's setting (--null auto or local-permutation)")
    # --null auto that refers the test to χ² ignored them too, without a word (a review); where it permutes (a
    # discrete tested variable given a continuous one) they are taken; --combine with a one-direction score is refused
    out = _run("citest", "instances/asia.csv", "smoke", "lung", "--score", "bic", "--null", "auto",
               "--permutations", "5", "--seed", "1")
    assert out.exit_code == 2 and _one_line_error(out).startswith(
        "bnilp: error: --permutations and --seed: --null auto refers this test to χ²")
    mixed = tmp_path / "mixed.csv"
    rng = np.random.default_rng(0)
    z = rng.normal(size=120)
    mixed.write_text("d,e,z\n" + "".join(f"{int(v > 0)},{int(v + rng.normal() > 0)},{v}\n" for v in z))
    res = _run("citest", str(mixed), "d", "e", "--given", "z", "--permutations", "20", "--seed", "1", "--json")
    assert res.exit_code == 0 and json.loads(res.output)["permutations"] >= 1, res.output
    out = _run("citest", "instances/asia.csv", "smoke", "lung", "--score", "bic", "--combine", "either")
    assert out.exit_code == 2 and "--combine joins the two directions" in _one_line_error(out)
    out = _run("learn", "instances/asia.csv", "--score", "bdeu", "--penalty-discount", "2", "-q")
    assert out.exit_code == 2 and "--penalty-discount is the penalised scores' (--score bic, cg, cgd, mvp) setting" \
        in _one_line_error(out)
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("0,1,1\n1,0,1\n0,0,1\n")
    out = _run("learn", str(numbers), "-q")
    assert out.exit_code == 2 and "read it with load_data(..., no_header=True) (--no-header)" in _one_line_error(out)


@pytest.mark.parametrize("suffix", [".scores", ".pss"])
def test_a_score_file_given_as_data_is_named_one(tmp_path, suffix) -> None:
    """``learn`` or ``score`` on a score file said only that its line 2 had the wrong number of fields (a review);
    the line now says it is a score file, which ``solve`` reads. A data file that fails to read is not called one."""
    scores = tmp_path / f"asia{suffix}"
    assert _run("score", "bnilp/instances/asia.csv", "-q", "-o", str(scores)).exit_code == 0
    for command in ("learn", "score"):
        args = [command, str(scores), "-q"] + (["-o", str(tmp_path / "x.scores")] if command == "score" else [])
        line = _one_line_error(_run(*args))
        assert line.endswith(f"({scores} is a score file, not data: `bnilp solve` reads it)"), line
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2,3\n")
    assert _one_line_error(_run("learn", str(bad), "-q")) == f"bnilp: error: {bad}:2: expected 2 fields, found 3"


def test_compare_checks_a_json_graph_s_undirected_edges_and_posteriors(tmp_path):
    """A JSON graph's ``undirected`` list was taken unread (a review): ``null`` was a traceback, a one-name entry a
    traceback, ``[["a", "zz"]]`` an extra adjacency to a node the graph lacks (AP 0.75, exit 0); an empty list
    was refused as "undirected edges". And ``--edges-threshold`` read ``"0.8"`` and ``true`` as posteriors and
    took P(a → b) + P(b → a) = 1.8. Each is now one line naming the file, exit 2 — an empty list is a DAG's."""
    truth = tmp_path / "t.json"
    truth.write_text(json.dumps({"parents": {"a": [], "b": ["a"], "c": ["b"], "d": ["b", "c"], "e": []}}))
    base = {"parents": {"a": [], "b": [], "c": ["b"], "d": ["b", "c"], "e": []}}
    for undirected, words in ((None, "'undirected' must be a list of [u, v] pairs of variables"),
                              (5, "'undirected' must be a list of [u, v] pairs of variables"),
                              ("ab", "'undirected' must be a list of [u, v] pairs of variables"),
                              ([["a"]], "undirected edge 0 must be a pair [u, v] of variables, got ['a']"),
                              ([["a", "b", "c"]],
                               "undirected edge 0 must be a pair [u, v] of variables, got ['a', 'b', 'c']"),
                              ([["a", "zz"]], "undirected edge 0 names 'zz', which is not a variable of the graph"),
                              ([["a", "a"]], "undirected edge 0 joins 'a' to itself"),
                              ([["a", "b"], ["b", "a"]], "undirected edge 1 repeats 'b' — 'a'")):
        learned = tmp_path / "u.json"
        learned.write_text(json.dumps({**base, "undirected": undirected}))
        assert _one_line_error(_run("compare", str(learned), str(truth), "--cpdag")) == \
            f"bnilp: error: {learned}: {words}"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({**json.loads(truth.read_text()), "undirected": []}))
    res = _run("compare", str(empty), str(truth), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["SHD"] == 0, res.output
    arrow = {"from": "a", "to": "b"}
    for edges, words in (([{**arrow, "posterior": "0.8"}], "entry 0 needs a numeric 'posterior', got '0.8'"),
                         ([{**arrow, "posterior": True}], "entry 0 needs a numeric 'posterior', got True"),
                         ([{**arrow, "posterior": 0.9}, {"from": "b", "to": "a", "posterior": 0.9}],
                          "the posteriors of a → b and b → a add up to 1.8, more than 1")):
        learned = tmp_path / "w.json"
        learned.write_text(json.dumps({"variables": list("abcde"), "edges": edges}))
        assert words in _one_line_error(_run("compare", str(learned), str(truth), "--edges-threshold", "0.5"))


def test_compare_of_one_optimal_network_averages_nothing_and_a_limit_status_is_incomplete(tmp_path):
    """An ``--optimum-only`` result is the whole answer to "the best DAG", but its posteriors are one of the tied
    optimal networks' (a review: 1 of 4 tied optima compared at ``--edges-threshold`` with exit 0, SHD 2 where the
    credible set gives 4): with ``--edges-threshold`` it gets a NOTE and exit 3, as the DAG comparison does not.
    A ``status`` of a limit is incomplete whatever ``complete`` says (``time_limit`` with no ``complete`` read as
    complete, exit 0)."""
    data, one = tmp_path / "s.csv", tmp_path / "one.json"
    assert _run("simulate", "--nodes", "5", "--samples", "300", "--discrete-fraction", "1", "--seed", "4", "-o",
                str(data), "--truth", str(tmp_path / "t.json"), "-q").exit_code == 0
    assert _run("learn", str(data), "--discrete", "all", "--score", "bic", "--optimum-only", "--json", str(one),
                "-q").exit_code == 0
    truth = str(tmp_path / "t.json")
    assert _run("compare", str(one), truth).exit_code == 0
    res = _run("compare", str(one), truth, "--edges-threshold", "0.5", "--json")
    assert res.exit_code == 3, res.output
    assert "one optimal network (optimum_only)" in json.loads(res.output[:res.output.rindex("}") + 1])["learned_note"]
    stopped = tmp_path / "stopped.json"
    stopped.write_text(json.dumps({"parents": json.loads(Path(truth).read_text())["parents"], "status": "time_limit"}))
    res = _run("compare", str(stopped), truth)
    assert res.exit_code == 3 and "incomplete (status time_limit)" in res.output


def test_citest_refuses_an_empty_name_in_given(chain_csv):
    """``--given ''`` and ``--given ,`` tested x ⟂ y with no conditioning set, exit 0 (a review): a slip in a script,
    not a request — one line, exit 2; leaving ``--given`` out conditions on nothing."""
    for given in ("", ",", "z,", "z,,x"):
        line = _one_line_error(_run("citest", str(chain_csv), "x", "y", "--given", given, "--score", "bic"))
        assert line == (f"bnilp: error: --given {given!r}: an empty variable name (leave --given out to condition "
                        "on nothing)")


def test_the_best_networks_files_say_when_opt_is_not_proven_or_the_problem_limited(tmp_path, monkeypatch):
    """After a limit in phase 1 the best network is the best DAG found, and under a palim it is optimal only for
    the sets scored: ``--dot``, ``--graphml``, ``--tetrad`` and the report's ``best_network.*``/``best_cpdag.dot``
    were bare graphs called the best network either way (the export, the averaged graph and the pictures said it;
    a review). Each says it now — a proven OPT of an unlimited problem stays unlabelled."""
    import networkx as nx

    from bnilp import pipeline
    from bnilp.ilp.result import Network, SolveResult
    from bnilp.metrics import parse_tetrad_graph

    whole, cut = tmp_path / "whole.scores", tmp_path / "cut.scores"
    assert _run("score", "instances/asia.csv", "-o", str(whole), "-q").exit_code == 0
    assert _run("score", "instances/asia.csv", "--palim", "1", "-o", str(cut), "-q").exit_code == 3

    def files(scores: Path, tag: str) -> list[str]:
        out = {k: tmp_path / f"{tag}.{k}" for k in ("dot", "graphml", "txt")}
        res = _run("solve", str(scores), "--dot", str(out["dot"]), "--graphml", str(out["graphml"]), "--tetrad",
                   str(out["txt"]), "--report", str(tmp_path / tag), "-q")
        assert res.exit_code in (0, 3), res.output
        assert parse_tetrad_graph(out["txt"].read_text(), "t")[0] == load_data("instances/asia.csv").names   # read
        texts = [p.read_text() for p in (*out.values(), tmp_path / tag / "best_network.dot",
                                         tmp_path / tag / "best_cpdag.dot", tmp_path / tag / "best_network.graphml")]
        return texts + [nx.parse_graphml(texts[k]).graph.get("caveat", "") for k in (1, 5)]   # (XML escapes ≤)

    assert not any("OPT NOT proven" in t or "LIMITED" in t or "caveat" in t for t in files(whole, "whole"))
    limited = "LIMITED: exact for parent sets of size ≤ 1 (palim)"
    assert [limited in t for t in files(cut, "cut")] == [True, False, True, True, True, False, True, True]
    best = read_jaakkola(str(whole))
    proven = pipeline.solve(best, 0.0)
    stopped = SolveResult(optimum=proven.optimum, bound=proven.optimum + 5.0, gap=5.0 / abs(proven.optimum),
                          status="time_limit", seconds=1.0, epsilon=0.0, complete=False,
                          networks=[Network(proven.optimum, proven.networks[0].parents)], enumerated="mecs")
    monkeypatch.setattr(pipeline, "solve", lambda *a, **kw: stopped)
    texts = files(whole, "stopped")
    assert all("the best network found: OPT NOT proven (time_limit)" in t for t in texts)     # no ≤ in it
    assert 'labelloc=t' in texts[0] and 'attr.name="caveat"' in texts[1] and "\nGraph Attributes:\nbnilp: " in texts[2]


@pytest.mark.parametrize("command, priors, names", [
    ("count", ["mecs", "dags"], "dags, mecs"),
    ("solve", ["dags", "mecs"], "dags, mecs"),
])
def test_conflicting_priors_name_the_kind_that_conflicts(command, priors, names):
    """``count --prior mecs --prior dags`` said "at most one of none, binomial, ebic and one of dags, mecs", naming
    structure priors ``count`` does not take (a review): the message names the kind given twice."""
    args = [command, "scorefiles/zoo.BIC.20.scores", "--bf", "3"] + [a for p in priors for a in ("--prior", p)]
    line = _one_line_error(_run(*args))
    assert line.endswith(f"at most one of {names}") and "binomial" not in line
