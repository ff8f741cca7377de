"""Report files and terminal output from a brute-force credible set (4 variables)."""

from __future__ import annotations

import io
import json
import math
import random
import re

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from bnilp.averaging import edge_posteriors, weights
from bnilp.mec import group_by_mec, mec_index
from bnilp.report import print_report, result_json, summarise, write_dot, write_graphml, write_report
from bnilp.scorefile import ScoreTable
from tests.oracles import all_dags, brute_force_credible

NODES = ["A", "B", "C", "D"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _table(seed: int = 1) -> ScoreTable:
    """Score-equivalent scores: a network's score depends only on its MEC (random per class)."""
    rng = random.Random(seed)
    families = {v: {} for v in NODES}
    # local scores: additive per edge, so the equivalent DAGs of a class are not forced to tie;
    # that is fine here: the report does not assume score equivalence
    bonus = {(u, v): rng.uniform(-3, 3) for u in NODES for v in NODES if u != v}
    for dag in all_dags(NODES):
        for v, ps in dag.items():
            families[v][ps] = math.fsum(bonus[(p, v)] for p in ps) - 0.5 * len(ps)
    return ScoreTable(variables=list(NODES), families=families)


def _solver_dict(eps: float, complete: bool = True) -> dict:
    opt, nets = brute_force_credible(_table(), eps)
    return {
        "optimum": opt, "bound": opt, "gap": 0.0, "status": "optimal" if complete else "timelimit",
        "seconds": 0.5, "epsilon": eps, "complete": complete, "n_networks": len(nets),
        "networks": [{"score": s, "parents": {v: sorted(p) for v, p in pa.items()}} for s, pa in nets],
        "stats": {}, "message": "" if complete else "time limit reached after 0.5 s",
    }


@pytest.fixture(scope="module", params=["dags", "mecs"])
def report(request):
    solved = _solver_dict(math.log(20))
    mecs = group_by_mec(solved["networks"])
    scores = [n["score"] for n in solved["networks"]]
    ids = mec_index(mecs, len(scores)) if request.param == "mecs" else None
    w = weights(scores, solved["optimum"], request.param, ids)
    return solved, mecs, w, result_json(solved, mecs, w, NODES, request.param)


def test_result_json_contract(report):
    solved, mecs, w, r = report
    for key in solved:
        assert key in r
    assert r["n_mecs"] == len(mecs) == len(r["mecs"])
    assert r["prior"] in ("dags", "mecs")
    json.loads(json.dumps(r))
    for m in r["mecs"]:
        assert set(m) >= {"score", "ln_bf", "n_dags", "posterior", "cpdag", "members"}
        assert set(m["cpdag"]) == {"directed", "undirected"}
        assert m["ln_bf"] >= -1e-12 and m["n_dags"] == len(m["members"])
    assert sum(m["posterior"] for m in r["mecs"]) == pytest.approx(1.0)
    assert sorted(i for m in r["mecs"] for i in m["members"]) == list(range(len(solved["networks"])))
    direct = edge_posteriors(solved["networks"], w, NODES)
    assert r["edges"] and all(set(e) == {"from", "to", "posterior"} for e in r["edges"])
    assert [e["posterior"] for e in r["edges"]] == sorted((e["posterior"] for e in r["edges"]), reverse=True)
    assert len(r["edges"]) == int((direct.to_numpy() > 0).sum())
    for e in r["edges"]:
        assert e["posterior"] == pytest.approx(direct.loc[e["from"], e["to"]], abs=1e-12)
    for a in r["adjacency"]:
        assert {"u", "v", "posterior"} <= set(a)
        p = direct.loc[a["u"], a["v"]] + direct.loc[a["v"], a["u"]]
        assert a["posterior"] == pytest.approx(p, abs=1e-12) and 0 < a["posterior"] <= 1 + 1e-12
        assert 0 <= a["undirected_posterior"] <= a["posterior"] + 1e-12


def test_summarise_matches_manual(report):
    solved, _, _, r = report
    assert summarise(solved, prior=r["prior"]) == r


def test_terminal_report_complete(report):
    *_, r = report
    console = Console(record=True, width=120)
    print_report(r, console)
    text = console.export_text()
    assert "incomplete" not in text.lower() and "truncated" not in text.lower()
    assert "Occam's window" in text
    assert ("uniform over DAGs" if r["prior"] == "dags" else "uniform over MECs") in text
    assert str(r["n_networks"]) in text and str(r["n_mecs"]) in text
    assert "20" in text  # the Bayes factor exp(ε)
    # a table is as wide as its title: "Directed edge posteriors P(u →" / "v) (top 14 of 14)" was cut mid-formula
    assert re.search(r"Directed edge posteriors P\(u → v\) \(top \d+ of \d+\)", text)
    assert re.search(r"Adjacency posteriors P\(u — v\) \(top \d+ of \d+\)", text)


def test_terminal_report_incomplete():
    solved = _solver_dict(math.log(150), complete=False)
    r = summarise(solved)
    console = Console(record=True, width=120)
    print_report(r, console)
    text = " ".join(console.export_text().lower().split())
    assert "incomplete" in text and "truncated" in text and "complete no (truncated)" in text
    assert "timelimit" in text and "time limit reached" in text


@pytest.mark.parametrize("width", [40, 80])
def test_a_narrow_terminal_folds_the_report_s_figures_instead_of_cutting_them(report, width):
    """Every table of the terminal report folds its cells onto more lines where the width is short
    (:func:`bnilp.terminal.lossless`): at 40 columns the classes' scores and posteriors showed as "-1…" and "0.…"
    (found by a review)."""
    *_, r = report
    console = Console(record=True, width=width)
    print_report(r, console)
    assert "…" not in console.export_text()


def test_names_that_would_split_a_parent_list_are_quoted_in_it(report):
    """The terminal's network lines join parents with ", ": a name holding a comma (or the arrow, ∅, quotes, or
    spaces at an end) is quoted there, so "温度 ← a b, x,y" can no longer be read as three parents (a review)."""
    import copy

    *_, r = report
    renamed = copy.deepcopy(r)
    names = {"A": "x,y", "B": "a b", "C": " c", "D": "温度"}
    best = renamed["networks"][0]
    best["parents"] = {names[v]: [names[u] for u in ps] for v, ps in best["parents"].items()}
    console = Console(record=True, width=120)
    print_report(renamed, console)
    text = console.export_text()
    lines = [line.strip() for line in text.splitlines() if "←" in line]
    assert len(lines) == 4
    assert "'x,y' ←" in text and "' c' ←" in text and "a b ←" in text and "温度 ←" in text
    assert all("x,y" not in line or "'x,y'" in line for line in lines)


def test_output_to_a_file_is_wide_unless_columns_says_otherwise(monkeypatch):
    """:func:`bnilp.terminal.plain_console` not at a terminal: :data:`~bnilp.terminal.FILE_WIDTH` columns
    (rich's default there is 80); ``COLUMNS`` and an explicit width still decide."""
    from bnilp.terminal import FILE_WIDTH, plain_console

    monkeypatch.delenv("COLUMNS", raising=False)
    assert plain_console(file=io.StringIO()).width == FILE_WIDTH
    assert plain_console(file=io.StringIO(), width=50).width == 50
    monkeypatch.setenv("COLUMNS", "70")
    assert plain_console(file=io.StringIO()).width == 70


def test_write_report_files(tmp_path, report):
    solved, _, _, r = report
    out = tmp_path / "rep"
    written = write_report(out, r, solved["networks"], NODES)
    for name in ("edges.csv", "mecs.csv", "networks.json", "best_cpdag.dot", "averaged.dot", "heatmap.png",
                 "averaged.png", "best_network.dot", "best_network.graphml"):
        assert (out / name).is_file() and written[name] == out / name
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left behind
    edges = pd.read_csv(out / "edges.csv")
    assert list(edges.columns[:4]) == ["from", "to", "directed_posterior", "adjacency_posterior"]
    assert (edges["adjacency_posterior"] > 0).all()
    assert len(edges) == 2 * len(r["adjacency"])
    mecs = pd.read_csv(out / "mecs.csv")
    assert len(mecs) == r["n_mecs"] and mecs["posterior"].sum() == pytest.approx(1.0)
    assert json.loads((out / "networks.json").read_text()) == json.loads(json.dumps(r))
    averaged = (out / "averaged.dot").read_text()
    for e in r["edges"]:
        assert re.search(rf'"{e["from"]}" -> "{e["to"]}" \[label="{e["posterior"]:.2f}", penwidth=', averaged)
    best = (out / "best_cpdag.dot").read_text()
    cp = r["mecs"][0]["cpdag"]
    for u, v in cp["directed"]:
        assert f'"{u}" -> "{v}";' in best
    for u, v in cp["undirected"]:
        assert f'"{u}" -> "{v}" [dir=none];' in best
    for name in ("heatmap.png", "averaged.png"):
        data = (out / name).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 2000


def test_a_report_of_a_set_cut_short_says_so_in_every_file(tmp_path, monkeypatch):
    """A review's find: a time-limited run's report folder said it was cut short only in ``networks.json`` — the
    heatmap was titled as a complete run's, and the CSV and DOT files, whose posteriors cover only the networks
    found, carried no mark. Now the pictures' titles and the DOT label say INCOMPLETE and why, and both CSV files
    have an ``incomplete`` column holding why on every row; a complete report has none of it."""
    from matplotlib.axes import Axes

    titles: list[str] = []
    set_title = Axes.set_title
    monkeypatch.setattr(Axes, "set_title", lambda self, text, *a, **k: (titles.append(text),
                                                                        set_title(self, text, *a, **k))[1])
    for complete in (False, True):
        solved = _solver_dict(math.log(150), complete=complete)
        r = summarise(solved)
        r["status"] = "optimal" if complete else "time_limit"      # as SolveResult words it
        out = tmp_path / f"rep{complete}"
        titles.clear()
        write_report(out, r, solved["networks"], NODES)
        edges, mecs = pd.read_csv(out / "edges.csv"), pd.read_csv(out / "mecs.csv")
        dot = (out / "averaged.dot").read_text()
        if complete:
            assert "incomplete" not in edges and "incomplete" not in mecs and "INCOMPLETE" not in dot
            assert len(titles) == 2 and not any("INCOMPLETE" in t for t in titles)
        else:
            assert (edges["incomplete"] == "time_limit").all() and (mecs["incomplete"] == "time_limit").all()
            assert 'label="P(u -> v) — INCOMPLETE (time_limit): the networks found so far"' in dot
            assert len(titles) == 2 and all("INCOMPLETE (time_limit)" in t for t in titles)


def test_write_dot_and_graphml(tmp_path):
    pa = {"x y": frozenset(), 'q"uote': frozenset({"x y"}), "z": frozenset({"x y", 'q"uote'})}
    write_dot(pa, tmp_path / "n.dot")
    text = (tmp_path / "n.dot").read_text()
    assert text.startswith("digraph") and text.count("->") == 3
    assert '"x y" -> "q\\"uote";' in text
    write_graphml(pa, tmp_path / "n.graphml")
    g = nx.read_graphml(tmp_path / "n.graphml")
    assert set(g.edges) == {("x y", 'q"uote'), ("x y", "z"), ('q"uote', "z")}


def test_graphml_spells_out_names_xml_cannot_hold_and_keeps_them_exactly(tmp_path):
    """XML 1.0 cannot hold a control character even escaped: such a name's node id spells it ``\\u0001``
    (a clash with another name gets ``_2``), its ``name`` data holds it JSON-encoded, the graph's ``renamed``
    data lists the change, and the file reads back; a carriage return stays exact."""
    pa = {"p\x01": frozenset(), "p\\u0001": frozenset({"p\x01"}), "c\rr": frozenset({"p\x01"})}
    write_graphml(pa, tmp_path / "n.graphml")
    g = nx.read_graphml(tmp_path / "n.graphml")
    assert set(g.edges) == {("p\\u0001_2", "p\\u0001"), ("p\\u0001_2", "c\rr")}
    assert json.loads(g.nodes["p\\u0001_2"]["name"]) == "p\x01" and "name" not in g.nodes["c\rr"]
    assert g.graph["renamed"] == '"p\\u0001" -> "p\\\\u0001_2"'


def test_empty_and_single_network(tmp_path):
    solved = {"optimum": -5.0, "epsilon": 0.0, "gap": math.inf, "complete": True, "status": "optimal", "n_networks": 1,
              "networks": [{"score": -5.0, "parents": {"a": [], "b": ["a"]}}], "message": ""}
    r = summarise(solved)
    assert r["n_mecs"] == 1 and r["mecs"][0]["posterior"] == 1.0
    assert r["edges"] == [{"from": "a", "to": "b", "posterior": 1.0}]
    write_report(tmp_path, r)
    assert (tmp_path / "heatmap.png").read_bytes()[:8] == PNG_MAGIC
    assert "Infinity" not in (tmp_path / "networks.json").read_text()
    empty = summarise({"optimum": None, "epsilon": math.inf, "complete": False, "status": "infeasible",
                       "networks": [], "message": "no DAG"}, variables=["a", "b"])
    assert empty["n_mecs"] == 0 and empty["edges"] == [] and empty["adjacency"] == []
    write_report(tmp_path / "empty", empty)
    assert json.loads((tmp_path / "empty" / "networks.json").read_text())["epsilon"] is None
    console = Console(record=True, width=100)
    print_report(empty, console)
    assert "INCOMPLETE" in console.export_text()
    np.testing.assert_equal(pd.read_csv(tmp_path / "edges.csv")["directed_posterior"].tolist(), [1.0, 0.0])


def test_edges_csv_adjacency_is_clipped_to_one_as_in_the_json(tmp_path):
    """edges.csv's adjacency_posterior is P(u → v) + P(v → u) clipped to [0, 1], as the JSON's (a float sum of
    shares may pass 1 by rounding: 0.5000000000000001 twice)."""
    solved = {"optimum": -5.0, "epsilon": 1.0, "gap": 0.0, "complete": True, "status": "optimal", "n_networks": 2,
              "networks": [{"score": -5.0, "parents": {"a": [], "b": ["a"]}},
                           {"score": -5.0, "parents": {"a": ["b"], "b": []}}], "message": ""}
    r = summarise(solved)
    r["edges"] = [{"from": "a", "to": "b", "posterior": 0.5000000000000001},
                  {"from": "b", "to": "a", "posterior": 0.5000000000000001}]
    assert 0.5000000000000001 + 0.5000000000000001 > 1.0
    write_report(tmp_path, r)
    edges = pd.read_csv(tmp_path / "edges.csv")
    assert edges["adjacency_posterior"].tolist() == [1.0, 1.0]


def test_report_json_text_parses_to_the_report_with_one_list_element_a_line():
    """``--json`` text: the same value as ``json.dumps(report, indent=1)`` once parsed (nested lists, empty
    containers, strings with newlines, None), each element of a top-level list on a line of its own."""
    from bnilp.report import report_json_text

    report = {"optimum": -1.5, "empty": [], "none": None, "text": "a\nb \"c\"",
              "networks": [{"score": -1.5, "parents": {"A": [], "B": ["A"]}}, {"score": -2.0, "parents": {}}],
              "stats": {"phase1": {"nodes": 3, "cuts": {"sepa": 2}}, "list": [1, [2, 3]]}, "edges": [1, 2.5]}
    text = report_json_text(report)
    assert json.loads(text) == json.loads(json.dumps(report, indent=1)) == report
    lines = text.splitlines()
    for element in report["networks"]:
        assert f"  {json.dumps(element, separators=(', ', ': '))}" in {line.rstrip(",") for line in lines}
    assert text.endswith("}\n")


def test_a_class_too_large_to_check_ancestors_on_has_a_null_size_not_a_lost_report() -> None:
    """With an ancestor statement a class's size under the knowledge is counted by listing it (a million DAGs
    at most). A credible set of one DAG whose class has 2^21 (21 separate reversible edges) lost its whole
    report to that column; now the column is null and says why."""
    from bnilp.knowledge import Knowledge

    parents: dict[str, list[str]] = {}
    for i in range(21):
        parents[f"a{i:02d}"], parents[f"b{i:02d}"] = [], [f"a{i:02d}"]
    doc = {"networks": [{"score": -1.0, "parents": parents}], "optimum": -1.0}
    got = summarise(doc, prior="dags", knowledge=Knowledge(required_ancestors=[("a00", "b00")]))
    mec = got["mecs"][0]
    assert mec["n_dags"] == 1 and mec["class_size"] is None and "pdag" not in mec
    assert "2097152 DAGs, more than the 1000000" in mec["class_size_note"]
    assert got["edges"] and got["mecs"][0]["posterior"] == 1.0


def test_mecs_csv_leaves_the_bf_empty_where_e_to_the_ln_bf_overflows(tmp_path) -> None:
    """``mecs.csv`` wrote e^700 (1.01e304) for a class 800 nats below the optimum, a wrong finite number; its
    ``bf`` is now empty there, as the JSON's null, and its ``ln_bf`` says 800."""
    doc = {"networks": [{"score": 0.0, "parents": {"a": [], "b": ["a"]}},
                        {"score": -800.0, "parents": {"a": [], "b": []}}], "optimum": 0.0, "epsilon": 900.0}
    write_report(tmp_path, summarise(doc))
    table = pd.read_csv(tmp_path / "mecs.csv")
    assert table["ln_bf"].tolist() == [0.0, 800.0]
    assert table["bf"].iloc[0] == 1.0 and math.isnan(table["bf"].iloc[1])


def test_names_are_printed_as_written_no_emoji_codes_and_no_doubled_backslash(tmp_path, capsys) -> None:
    """A column named ``:warning:`` printed as ⚠ (rich's emoji codes, on even without markup) and one named ``x\\``
    as ``x\\\\`` in the tables (``rich.markup.escape`` doubles a trailing backslash) — in learn's report, score's
    table, the type line and citest's table. Every terminal line now shows the names as the JSON has them."""
    from click.testing import CliRunner

    from bnilp.cli import main
    from tests.conftest import random_discrete_frame

    names = ["x\\", ":warning:", "ok"]
    csv = tmp_path / "d.csv"
    random_discrete_frame(seed=1, n=3, N=200).set_axis(names, axis=1).to_csv(csv, index=False)
    runner = CliRunner()
    runs = {"learn": ["learn", str(csv)], "score": ["score", str(csv), "-o", str(tmp_path / "d.scores")],
            "citest": ["citest", str(csv), "x\\", ":warning:", "--score", "bic"]}
    for what, args in runs.items():
        res = runner.invoke(main, args, env={"COLUMNS": "200"})
        assert res.exit_code == 0, (what, res.output)
        shown = res.output
        assert "⚠" not in shown and ":warning:" in shown, (what, shown)
        assert "x\\\\" not in shown and re.search(r"(^|[ │])x\\( |$|,)", shown, re.M), (what, shown)
    from bnilp import learn

    capsys.readouterr()
    print_report(learn(csv, bf=3).report)           # the API's report, printed on its own console
    shown = capsys.readouterr().out
    assert "⚠" not in shown and ":warning: ← x\\" in shown and "x\\\\" not in shown, shown


def test_the_averaged_picture_shows_every_label_whole_and_missing_glyphs_warn_nobody(tmp_path, monkeypatch) -> None:
    """averaged.png clipped node labels at the axes (``smoking_status`` drawn as ``smoking_stat``: networkx clips
    labels, so ``bbox_inches="tight"`` made no room); each label's whole extent is now inside the saved
    picture. A character no font has (here U+10FFFD, private use) is drawn as a box without matplotlib's
    "Glyph … missing from font" warning, which reached stderr under ``-q``."""
    import warnings

    from bnilp import report

    names = ["smoking_status_long_name", "lung_cancer_stage", "x\U0010fffd", "dyspnoea_level"]
    res = {"variables": names, "edges": [{"from": names[0], "to": names[1], "posterior": 0.9},
                                         {"from": names[2], "to": names[3], "posterior": 0.6}]}
    saved = []
    original = report._save_figure

    def keep(fig, path):
        saved.append(fig)
        original(fig, path)

    monkeypatch.setattr(report, "_save_figure", keep)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report.plot_averaged(res, tmp_path / "averaged.png")
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = saved[0]
    renderer = FigureCanvasAgg(fig).get_renderer()
    with warnings.catch_warnings():                # measuring draws the box again
        warnings.simplefilter("ignore")
        whole = fig.get_tightbbox(renderer)
    labels = [t for t in fig.axes[0].texts if t.get_text() in names]
    assert len(labels) == len(names)
    for t in labels:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            box = t.get_window_extent(renderer).transformed(fig.dpi_scale_trans.inverted())
        assert (box.x0 >= whole.x0 - 1e-6 and box.x1 <= whole.x1 + 1e-6
                and box.y0 >= whole.y0 - 1e-6 and box.y1 <= whole.y1 + 1e-6), (t.get_text(), box, whole)


def _simulated_bic_table(seed: int, rows: int, prune: bool = True):
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score
    from bnilp.simulate import simulate

    frame, _ = simulate(4, rows, 1.5, discrete_fraction=1.0, categories=(2, 3), seed=seed)
    score = make_score("bic", from_dataframe(frame, discrete=list(frame.columns)))
    return score_parent_sets(score, epsilon=math.log(150)) if prune else score_parent_sets(score, prune=False)


def test_mecs_csv_and_the_model_string_describe_the_class_under_the_knowledge(tmp_path) -> None:
    """A review's find: under background knowledge a class is its DAGs that satisfy it (the JSON's ``pdag``,
    ``class_size``, ``best_cpdag.dot``), but ``mecs.csv`` counted the edges of the plain CPDAG — X1 — X3
    undirected in a class of one DAG whose X1 → X3 is required — and ``model_string(mec=…)`` wrote the CPDAG,
    X3 a parent of X1 against the required arrow."""
    from bnilp.knowledge import Knowledge
    from bnilp.pipeline import solve_table

    table = _simulated_bic_table(31, 80, prune=False)
    result = solve_table(table, epsilon=math.log(20), knowledge=Knowledge(required=(("X1", "X3"),)))
    classes = result.report["mecs"]
    assert any(m["pdag"] != m["cpdag"] for m in classes)            # the knowledge orients something
    write_report(tmp_path / "rep", result.report)
    rows = pd.read_csv(tmp_path / "rep" / "mecs.csv")
    assert list(rows["n_directed"]) == [len(m["pdag"]["directed"]) for m in classes]
    assert list(rows["n_undirected"]) == [len(m["pdag"]["undirected"]) for m in classes]
    for k, m in enumerate(classes):
        parents = dict(p.split("|") if "|" in p else (p, "") for p in re.findall(r"\[([^]]*)\]",
                                                                               result.model_string(mec=k)))
        assert "X3" not in parents["X1"].split(":")                  # never X3 → X1
        undirected = {frozenset(e) for e in m["pdag"]["undirected"]}
        for u, v in m["pdag"]["directed"]:
            assert u in parents[v].split(":") and v not in parents[u].split(":")
        for u, v in map(tuple, undirected):
            assert u in parents[v].split(":") and v in parents[u].split(":")


def test_a_cap_inside_a_class_gives_each_listed_dag_its_class_share_under_the_mecs_prior() -> None:
    """averaging.md: under the uniform prior over classes a class M weighs W(M) = exp(s(M) − OPT) and its m(M)
    DAGs share it equally. With ``list_dags`` and a cap that stops inside a class, the listed DAGs of that class
    shared all of W(M) among themselves (a review: 0.2326 for a class listed 2 of 4, where W(M)/m(M) a DAG gives
    0.1316); each now carries W(M)/m(M), m(M) the class's counted DAGs, averaged over the DAGs listed — as
    ``prior="dags"`` averages over them too."""
    from bnilp.pipeline import solve_table

    table = _simulated_bic_table(1, 60)
    result = solve_table(table, epsilon=math.log(150), prior="mecs", enumerate_by="mecs", list_dags=True,
                         max_networks=5)
    classes = result.report["mecs"]
    listed = [len(m["members"]) for m in classes]
    assert sum(listed) == 5 and any(k < m["class_size"] for k, m in zip(listed, classes, strict=True))
    opt = result.report["optimum"]
    mass = [k / m["class_size"] * math.exp(m["score"] - opt) for k, m in zip(listed, classes, strict=True)]
    for m, w in zip(classes, mass, strict=True):
        assert m["posterior"] == pytest.approx(w / sum(mass), rel=1e-12)
    # without the cap every class is listed whole: the same posteriors as weighting the counted classes
    whole = solve_table(table, epsilon=math.log(150), prior="mecs", enumerate_by="mecs", list_dags=True)
    counted = solve_table(table, epsilon=math.log(150), prior="mecs", enumerate_by="mecs")
    assert whole.complete and len(whole.report["mecs"]) == len(counted.report["mecs"])
    for a, b in zip(whole.report["mecs"], counted.report["mecs"], strict=True):
        assert a["posterior"] == pytest.approx(b["posterior"], rel=1e-12)


def test_report_files_mark_a_capped_list_and_a_limited_set_for_what_they_are(tmp_path) -> None:
    """A review's finds. (1) A class list capped by the network cap whose posteriors still cover every credible
    class (the rest counted): the files said INCOMPLETE "the networks found so far" on posteriors that are the
    whole set's — now only the class table, which is cut, says so. (2) A run whose set is complete for a
    restricted problem (palim 1, exit 3, ``complete`` true) had no mark in any file — now a ``limited`` column and
    a LIMITED label/title naming the limit."""
    from bnilp.pipeline import learn, solve_table

    asia = "bnilp/instances/asia.csv"
    table = learn(asia, bf=60).table
    capped = solve_table(table, epsilon=math.log(60), max_networks=3)
    whole = solve_table(table, epsilon=math.log(60))
    assert not capped.complete and capped.report["posterior_classes"] == whole.report["n_mecs"] > 3
    write_report(tmp_path / "capped", capped.report)
    edges = pd.read_csv(tmp_path / "capped" / "edges.csv")
    classes = pd.read_csv(tmp_path / "capped" / "mecs.csv")
    assert "incomplete" not in edges and "limited" not in edges
    want = {(e["from"], e["to"]): e["posterior"] for e in whole.report["edges"]}
    assert {(u, v): p for u, v, p in zip(edges["from"], edges["to"], edges["directed_posterior"], strict=True)
            if p > 0} == pytest.approx({k: p for k, p in want.items() if p > 0}, rel=1e-9)
    assert (classes["incomplete"] == "network_limit").all() and len(classes) == 3
    assert "label=" not in (tmp_path / "capped" / "averaged.dot").read_text().split("\n")[1]

    limited = learn(asia, bf=20, palim=1)
    assert limited.complete and limited.report["limits"] == ["palim"]
    write_report(tmp_path / "palim", limited.report)
    for name in ("edges.csv", "mecs.csv"):
        frame = pd.read_csv(tmp_path / "palim" / name)
        assert "incomplete" not in frame and (frame["limited"] == "palim").all()
    dot = (tmp_path / "palim" / "averaged.dot").read_text()
    assert 'label="P(u -> v) — LIMITED: exact for parent sets of size ≤ 1 (palim)"' in dot


@pytest.mark.parametrize("cut, why", [(dict(bf=20, enumerate_by="dags", max_networks=2), "network_limit"),
                                      (dict(optimum_only=True), "not every credible network listed")])
def test_a_report_both_cut_short_and_limited_names_each_in_its_place(tmp_path, cut, why) -> None:
    """A run cut short (a cap, or one optimal network asked for) of a restricted problem (palim 1): the files said
    ``incomplete`` = palim with no ``limited`` column and no word of the cap (a review) — the terminal and the JSON
    said network_limit and palim. Now ``incomplete`` names what cut the listing and ``limited`` the problem's
    limits, in both CSV files and the label."""
    from bnilp.pipeline import learn

    res = learn("bnilp/instances/asia.csv", palim=1, **cut)
    assert not res.complete and res.report["limits"] == ["palim"]
    write_report(tmp_path / "r", res.report)
    for name in ("edges.csv", "mecs.csv"):
        frame = pd.read_csv(tmp_path / "r" / name)
        assert (frame["incomplete"] == why).all() and (frame["limited"] == "palim").all()
    label = (tmp_path / "r" / "averaged.dot").read_text().split("\n")[1]
    assert (f"INCOMPLETE ({why}): the networks found so far — LIMITED: exact for parent sets of size ≤ 1 (palim)"
            in label)


def test_the_panel_says_every_dag_was_listed_with_list_dags() -> None:
    """With ``list_dags`` the panel said "equivalence classes (one DAG each)" over 44 listed DAGs (a review)."""
    from bnilp.pipeline import learn

    for list_dags, words in ((True, "equivalence classes (every DAG listed)"),
                             (False, "equivalence classes (one DAG each)")):
        out = io.StringIO()
        print_report(learn("bnilp/instances/asia.csv", bf=60, list_dags=list_dags).report,
                     Console(file=out, width=160))
        assert words in out.getvalue()


def _panel(report: dict) -> str:
    out = io.StringIO()
    print_report(report, Console(file=out, width=200))
    return out.getvalue()


def test_the_panel_says_what_was_listed_beside_what_was_counted_and_an_unproven_optimum_only_run() -> None:
    """A review of the terminal against the JSON: a capped list showed "credible DAGs 5" where 15 were counted and
    said so below; a class list cut by a time limit past its cap titled its table "top 20 of 50" over 18,496
    classes found; an ``optimum_only`` run stopped before OPT was proven said "complete: optimum only"."""
    import copy

    from bnilp.pipeline import learn

    asia = "bnilp/instances/asia.csv"
    assert "credible DAGs     5 listed, of the 15 counted" in _panel(learn(asia, list_dags=True, max_networks=5).report)
    assert ("credible DAGs     5 listed (not every credible DAG: see below)"
            in _panel(learn(asia, enumerate_by="dags", max_networks=5).report))
    capped = learn(asia, bf=60, max_networks=3, count_past_cap=True).report
    assert "(top 3 of 3 listed, 9 credible)" in _panel(capped)
    stopped = copy.deepcopy(capped)     # the same list as a time limit leaves it: the classes past it only found
    stopped.update(status="time_limit")
    assert "(top 3 of 3 listed, 9 credible found)" in _panel(stopped)
    unproven = copy.deepcopy(learn(asia, optimum_only=True).report)
    unproven.update(status="time_limit", optimum_proven=False, gap=0.01)
    assert "complete          NO: optimum only asked, and OPT not proven" in _panel(unproven)


def test_the_panel_says_a_class_restricted_by_the_table_was_counted_by_listing_it() -> None:
    """The panel said "(counted from the classes' CPDAGs)" for every class list (a review): on a table that does not
    keep every DAG of a class (here one parent set removed, nothing recorded about its pruning) the count is of the
    DAGs whose parent sets the table holds, by listing each class — the JSON's ``counted`` says so, and so must the
    panel. The class of the chain a — b — c with the collider-free orientations: a table without c ← {b} keeps
    the DAGs of that class that do not use it."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.pipeline import solve_table
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame
    from tests.oracles import all_dags

    frame = random_discrete_frame(11, n=3, N=200)
    table = score_parent_sets(make_score("bic", from_dataframe(frame, discrete=list(frame.columns))),
                              epsilon=math.log(20), prune=False)
    whole = solve_table(table, epsilon=math.log(20), enumerate_by="mecs").report
    assert whole["counted"].startswith("every DAG") and "(counted from the classes' CPDAGs)" in _panel(whole)
    child, parents = next((c, p) for c, fam in table.families.items() for p in fam if len(p) == 1)
    del table.families[child][parents]
    table.meta.pop("epsilon", None)
    table.meta["score_equivalent"] = True
    cut = solve_table(table, epsilon=math.log(20), enumerate_by="mecs").report
    admitted = [d for d in all_dags(table.variables) if all(frozenset(d[v]) in table.families[v] for v in d)]
    assert cut["counted"].startswith("the DAGs of each class whose parent sets are all in the score table")
    assert "(counted by listing each class: only DAGs whose parent sets the score table holds)" in _panel(cut)
    assert "CPDAGs" not in _panel(cut) and cut["n_networks"] <= len(admitted)


@pytest.mark.parametrize("width", [30, 40, 44, 80])
def test_a_narrow_terminal_shows_every_column_of_the_scoring_table(width):
    """At fewer than 45 columns rich drew some of the scoring table's eleven columns 0 wide — their figures (asia's
    109 scored, 108 pruned by R1) simply missing, no "…" (a review). Every column now holds at least one character
    and loses its padding where borders and padding would not leave it one: each column shows figures."""
    from bnilp.cli.score import print_scoring_summary
    from bnilp.data import default_path, load_data
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score

    table = score_parent_sets(make_score("bic", load_data(default_path("asia.csv"))), epsilon=3.0)
    console = Console(record=True, width=width)
    print_scoring_summary(table, console)
    body = [line.split("│")[1:-1] for line in console.export_text().splitlines() if line.startswith("│")]
    assert body and all(len(cells) == 11 for cells in body)
    assert all(any(cells[c].strip() for cells in body) for c in range(11))
    assert "…" not in console.export_text()


def test_the_panel_says_a_cut_lists_classes_found() -> None:
    """A search stopped by its time limit said "credible DAGs … listed (not every credible DAG: see below)" but
    "credible MECs 2487" plainly, of 4,977 (a review): the classes of a list that is not complete are the ones
    found, as its DAGs are; a complete list's row is the number alone."""
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import read_jaakkola

    report = solve_table(read_jaakkola("scorefiles/zoo.BIC.20.scores"), epsilon=math.log(20)).report

    def row(r) -> str:
        panel = Console(file=io.StringIO(), width=200)
        print_report(r, panel)
        return next(line for line in panel.file.getvalue().splitlines() if "credible MECs" in line)

    assert row(report).split("credible MECs")[1].strip(" │") == str(report["n_mecs"])
    cut = dict(report, complete=False, status="time_limit")
    assert row(cut).split("credible MECs")[1].strip(" │") == f"{report['n_mecs']} found (not complete)"


def test_a_posterior_is_never_shown_as_0_or_1_when_it_is_not() -> None:
    """The tables list nonzero posteriors only, so a printed 0.0000 or a 1.0000 read as certain misleads: a
    review's asia at BF 1e6 printed P(asia — dysp undirected) = 4.18e-6 as 0.0000 and P(either — dysp) =
    0.99998940 as 1.0000. Such values read <0.0001 and >0.9999 (<0.01, >0.99 at two decimals: the pictures);
    exact 0 and 1, and every other value, as rounded."""
    from bnilp.report import probability_text

    assert [probability_text(p) for p in (0.0, 4.18e-6, 4.9e-5, 5e-5, 0.5, 0.99994, 0.9999894, 1.0)] == \
        ["0.0000", "<0.0001", "<0.0001", "0.0001", "0.5000", "0.9999", ">0.9999", "1.0000"]
    assert [probability_text(p, 2) for p in (0.001, 0.996, 1.0)] == ["<0.01", ">0.99", "1.00"]
    result = {"enumerate": "mecs", "n_networks": 1, "n_mecs": 1, "optimum": -2.5, "status": "optimal",
              "complete": True, "networks": [{"score": -2.5, "parents": {"a": [], "b": ["a"]}}],
              "edges": [{"from": "a", "to": "b", "posterior": 0.9999894}],
              "adjacency": [{"u": "a", "v": "b", "posterior": 0.9999894, "undirected_posterior": 4.18e-6}],
              "mecs": [{"score": -2.5, "ln_bf": 0.5, "n_dags": 1, "class_size": 1, "posterior": 0.9999894}]}
    out = io.StringIO()
    print_report(result, Console(file=out, width=200))
    text = out.getvalue()
    assert ">0.9999" in text and "<0.0001" in text
    assert "1.0000" not in text and "0.0000" not in text


@pytest.mark.parametrize("seed", range(4))
def test_a_posterior_is_exactly_one_when_every_credible_dag_holds_the_pair(seed):
    """P(u → v), P(u — v) and P(u — v undirected) are 1 exactly where every credible DAG (class) holds the pair,
    and below 1 elsewhere: the weighted sums, added in another order than their total, came to 0.9999999999999999
    (a review: smoke — lung, adjacent in both of ASIA's classes; a required arrow), which the tables print as
    ">0.9999" — a claim that something was missed. Both enumerations, both priors, the DAG listing as the oracle;
    and ``bnilp count``'s posteriors (:func:`bnilp.twins.certain_pairs`) the same way."""
    from bnilp.pipeline import learn
    from bnilp.twins import certain_pairs, count_credible
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(seed, n=5, N=150)
    listed = learn(frame, bf=20, enumerate_by="dags")
    nets = [n.parents for n in listed.solution.networks]
    names = list(frame.columns)
    arrow_all = {(u, v) for u in names for v in names if all(u in ps[v] for ps in nets)}
    adjacent_all = {frozenset((u, v)) for u in names for v in names if u != v
                    and all(u in ps[v] or v in ps[u] for ps in nets)}
    undirected_all = {frozenset(e) for e in set.intersection(*(set(map(frozenset, m["cpdag"]["undirected"]))
                                                               for m in listed.report["mecs"]))}
    assert adjacent_all, "the instance must have a pair every DAG holds"
    for enumerate_by in ("dags", "mecs"):
        for prior in ("dags", "mecs"):
            report = learn(frame, bf=20, enumerate_by=enumerate_by, prior=prior).report
            for e in report["edges"]:
                assert (e["posterior"] == 1.0) is ((e["from"], e["to"]) in arrow_all), (enumerate_by, prior, e)
            for a in report["adjacency"]:
                pair = frozenset((a["u"], a["v"]))
                assert (a["posterior"] == 1.0) is (pair in adjacent_all), (enumerate_by, prior, a)
                assert (a["undirected_posterior"] == 1.0) is (pair in undirected_all), (enumerate_by, prior, a)
    counted = count_credible(listed.table, math.log(20))
    arrows, adjacent, undirected = certain_pairs(counted, names)
    at = {v: i for i, v in enumerate(names)}
    assert {(u, v) for u in names for v in names if arrows[at[u], at[v]]} == arrow_all
    assert {frozenset((u, v)) for u in names for v in names if adjacent[at[u], at[v]]} == adjacent_all
    assert {frozenset((u, v)) for u in names for v in names if undirected[at[u], at[v]]} == undirected_all


def test_edges_csv_of_a_report_without_adjacency_takes_it_from_the_arrows(tmp_path):
    """``write_report`` takes any mapping with ``variables`` and ``edges`` (an older JSON, a hand-made one); its
    ``edges.csv`` took the adjacency from the JSON's ``adjacency`` only and came out empty without one (a review)."""
    write_report(tmp_path / "r", {"variables": ["a", "b"], "networks": [], "mecs": [],
                                   "edges": [{"from": "a", "to": "b", "posterior": 0.7}]})
    rows = pd.read_csv(tmp_path / "r" / "edges.csv")
    assert rows[["from", "to", "directed_posterior", "adjacency_posterior"]].values.tolist() == [
        ["a", "b", 0.7, 0.7], ["b", "a", 0.0, 0.7]]
