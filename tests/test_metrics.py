"""bnilp.metrics: AP/AR/AHP/AHR/SHD/skeleton F1 on hand-made graphs (values derived by hand); graphs read from
Tetrad's text format."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from bnilp.errors import InputError
from bnilp.metrics import (
    compare_graphs,
    compare_marked,
    dag_graph,
    parents_of_result,
    parse_tetrad_graph,
    read_graph_or_json,
    tetrad_graph_text,
    thresholded_graph,
)
from bnilp.simulate import simulate


def test_hand_example_extra_and_reversed():
    # true:    A → B → C,  D isolated
    # learned: A → B ← C,  A → D
    # adjacencies: true {AB, BC}, learned {AB, BC, AD}: TP 2, FP 1 (AD), FN 0 → AP 2/3, AR 1
    # arrowheads: true {(A,B), (B,C)}, learned {(A,B), (C,B), (A,D)}: correct {(A,B)} → AHP 1/3
    # true arrowheads in found adjacencies: AB and BC are both found → 2 → AHR 1/2 (= AHR_all)
    # SHD: 0 missing + 1 extra + 1 reversed (BC) = 2; skeleton F1 = 2·2/(2·2 + 1 + 0) = 0.8
    true = {"A": [], "B": ["A"], "C": ["B"], "D": []}
    learned = {"A": [], "B": ["A", "C"], "C": [], "D": ["A"]}
    m = compare_graphs(learned, true)
    assert m["AP"] == pytest.approx(2 / 3)
    assert m["AR"] == pytest.approx(1.0)
    assert m["AHP"] == pytest.approx(1 / 3)
    assert m["AHR"] == pytest.approx(1 / 2)
    assert m["AHR_all"] == pytest.approx(1 / 2)
    assert m["SHD"] == 2
    assert (m["missing"], m["extra"], m["reversed"]) == (0, 1, 1)
    assert m["skeleton_F1"] == pytest.approx(0.8)
    assert m["mode"] == "dag"


def test_hand_example_ahr_counts_found_adjacencies_only():
    # true:    A → B ← C → D
    # learned: A → B → C        (C–D missing)
    # adjacencies: true {AB, BC, CD}, learned {AB, BC}: TP 2, FP 0, FN 1 → AP 1, AR 2/3
    # arrowheads: true {(A,B), (C,B), (C,D)}, learned {(A,B), (B,C)}: correct 1 → AHP 1/2
    # true arrowheads in found adjacencies: (A,B), (C,B) → AHR 1/2; over all true ones AHR_all 1/3
    # SHD: 1 missing + 0 extra + 1 reversed = 2; F1 = 4/(4 + 0 + 1) = 0.8
    true = {"A": [], "B": ["A", "C"], "C": [], "D": ["C"]}
    learned = {"A": [], "B": ["A"], "C": ["B"], "D": []}
    m = compare_graphs(learned, true)
    assert (m["AP"], m["AR"]) == (pytest.approx(1.0), pytest.approx(2 / 3))
    assert m["AHP"] == pytest.approx(1 / 2)
    assert m["AHR"] == pytest.approx(1 / 2)
    assert m["AHR_all"] == pytest.approx(1 / 3)
    assert m["SHD"] == 2
    assert m["skeleton_F1"] == pytest.approx(0.8)
    assert m["arrowheads"] == {"correct": 1, "predicted": 2, "true": 3, "true_in_found_adjacencies": 2}


def test_a_networkx_graph_is_compared_as_its_parent_map():
    """``compare_graphs`` refused the ``nx.DiGraph`` that ``LearnResult.best_graph()`` returns ("'parents' must map
    each variable…"; a review): a DiGraph is read as its nodes' predecessors, isolated nodes included, in both modes."""
    import networkx as nx

    learned = {"a": [], "b": ["a"], "c": ["b"], "d": []}
    true = {"a": ["b"], "b": [], "c": ["a", "b"], "d": []}
    g = nx.DiGraph([("a", "b"), ("b", "c")])
    g.add_node("d")
    for cpdag in (False, True):
        assert compare_graphs(g, true, cpdag=cpdag) == compare_graphs(learned, true, cpdag=cpdag)
        assert compare_graphs(g, g, cpdag=cpdag)["SHD"] == 0
    assert compare_graphs(g, true)["n_variables"] == 4


def test_cpdag_mode_collider_vs_chain():
    # true: A → C ← B (a v-structure: both edges compelled in the CPDAG)
    # learned: A → C → B (a chain: its CPDAG is A — C — B, no arrowheads)
    # CPDAG: adjacencies equal (AP = AR = 1); learned has no arrowheads → AHP undefined (NaN);
    # true arrowheads (A,C), (B,C) are in found adjacencies, none predicted → AHR 0;
    # SHD = 2 (both common adjacencies carry different marks), nothing "reversed".
    true = {"A": [], "B": [], "C": ["A", "B"]}
    learned = {"A": [], "B": ["C"], "C": ["A"]}
    m = compare_graphs(learned, true, cpdag=True)
    assert m["mode"] == "cpdag"
    assert (m["AP"], m["AR"]) == (1.0, 1.0)
    assert math.isnan(m["AHP"])
    assert m["AHR"] == 0.0
    assert (m["SHD"], m["reversed"], m["mark_mismatch"]) == (2, 0, 2)
    # as DAGs: arrowheads true {(A,C), (B,C)}, learned {(A,C), (C,B)} → AHP = AHR = 1/2, SHD 1
    d = compare_graphs(learned, true)
    assert (d["AHP"], d["AHR"], d["SHD"], d["reversed"]) == (0.5, 0.5, 1, 1)


def test_cpdag_mode_equivalent_dags_are_perfect():
    # A → B → C and A ← B ← C are Markov equivalent: CPDAG A — B — C for both
    m = compare_graphs({"A": [], "B": ["A"], "C": ["B"]}, {"A": ["B"], "B": ["C"], "C": []}, cpdag=True)
    assert (m["AP"], m["AR"], m["SHD"]) == (1.0, 1.0, 0)
    assert math.isnan(m["AHP"]) and math.isnan(m["AHR"])
    # as DAGs the same pair has both edges reversed: SHD 2, AHP = AHR = 0
    d = compare_graphs({"A": [], "B": ["A"], "C": ["B"]}, {"A": ["B"], "B": ["C"], "C": []})
    assert (d["SHD"], d["AHP"], d["AHR"]) == (2, 0.0, 0.0)


def test_identical_and_empty_graphs():
    g = {"A": [], "B": ["A"], "C": ["A", "B"]}
    m = compare_graphs(g, g)
    assert (m["AP"], m["AR"], m["AHP"], m["AHR"], m["skeleton_F1"], m["SHD"]) == (1, 1, 1, 1, 1, 0)
    empty = {"A": [], "B": [], "C": []}
    e = compare_graphs(empty, empty)
    assert e["SHD"] == 0 and all(math.isnan(e[k]) for k in ("AP", "AR", "AHP", "AHR", "skeleton_F1"))
    # nothing learned against g: AP undefined, AR 0, SHD = 3 missing
    n = compare_graphs(empty, g)
    assert math.isnan(n["AP"]) and n["AR"] == 0.0 and n["SHD"] == 3


def test_shd_is_symmetric_and_matches_counts_on_random_dags():
    for seed in range(5):
        _, t1 = simulate(12, 20, 2.0, 5, seed=seed)
        _, t2 = simulate(12, 20, 2.0, 5, seed=seed + 100)
        a, b = compare_graphs(t1["parents"], t2["parents"]), compare_graphs(t2["parents"], t1["parents"])
        assert a["SHD"] == b["SHD"] == a["missing"] + a["extra"] + a["reversed"]
        assert a["AP"] == pytest.approx(b["AR"])
        assert a["skeleton_F1"] == pytest.approx(2 * a["AP"] * a["AR"] / (a["AP"] + a["AR"]))


def test_bad_graphs_raise_input_error():
    with pytest.raises(InputError, match="different variables"):
        compare_graphs({"A": [], "B": []}, {"A": [], "C": []})
    with pytest.raises(InputError, match="not a variable"):
        compare_graphs({"A": ["Z"], "B": []}, {"A": [], "B": []})
    with pytest.raises(InputError, match="its own parent"):
        compare_graphs({"A": ["A"], "B": []}, {"A": [], "B": []})
    with pytest.raises(InputError, match="each other's parents"):
        compare_graphs({"A": ["B"], "B": ["A"]}, {"A": [], "B": []})
    with pytest.raises(InputError, match="cycle"):
        compare_graphs({"A": ["C"], "B": ["A"], "C": ["B"]}, {"A": [], "B": [], "C": []}, cpdag=True)
    with pytest.raises(InputError, match="list"):
        compare_graphs({"A": "B", "B": []}, {"A": [], "B": []})


def test_thresholded_graph():
    # A–B: 0.9 + 0.05 ≥ 0.5 and p(A→B) = 0.9 ≥ 0.5 > 0.05 → A → B
    # B–C: 0.3 + 0.3 = 0.6 ≥ 0.5 but neither direction reaches 0.5 → undirected B — C
    # C–D: 0.2 < 0.5 → absent
    edges = [{"from": "A", "to": "B", "posterior": 0.9}, {"from": "B", "to": "A", "posterior": 0.05},
             {"from": "B", "to": "C", "posterior": 0.3}, {"from": "C", "to": "B", "posterior": 0.3},
             {"from": "C", "to": "D", "posterior": 0.2}]
    g = thresholded_graph(edges, "ABCD", 0.5)
    assert g.adjacencies == {frozenset("AB"), frozenset("BC")}
    assert g.arrowheads == {("A", "B")}
    with pytest.raises(InputError):
        thresholded_graph(edges, "ABC", 0.5)
    with pytest.raises(InputError):
        thresholded_graph(edges, "ABCD", 1.5)
    with pytest.raises(InputError):
        thresholded_graph([{"from": "A", "to": "B"}], "AB", 0.5)
    with pytest.raises(InputError, match="repeats"):
        thresholded_graph(edges[:1] * 2, "AB", 0.5)


def test_a_tiny_threshold_is_not_read_as_zero():
    """The rounding allowed is relative to T: at T = 1e-10 a posterior of 0.9 is an arrow and one of 1e-12, a
    hundred times below T, is no edge (an absolute 1e-9 read every pair as present and no arrow as directed)."""
    edges = [{"from": "a", "to": "b", "posterior": 0.9}, {"from": "b", "to": "c", "posterior": 1e-12}]
    g = thresholded_graph(edges, "abc", 1e-10)
    assert g.adjacencies == {frozenset("ab")} and g.arrowheads == {("a", "b")}
    assert thresholded_graph(edges, "abc", 1e-12 * (1 + 1e-10)).adjacencies == {frozenset("ab"), frozenset("bc")}
    assert thresholded_graph(edges, "abc", 1e-12 * (1 + 1e-8)).adjacencies == {frozenset("ab")}


def test_parents_of_result():
    assert parents_of_result({"parents": {"A": ["B"], "B": []}}, "x") == {"A": ["B"], "B": []}
    net = {"networks": [{"score": -1.0, "parents": {"A": [], "B": ["A"]}}, {"score": -2.0, "parents": {}}]}
    assert parents_of_result(net, "x") == {"A": [], "B": ["A"]}
    for bad in ({"networks": []}, {"foo": 1}, [1, 2], {"parents": [1]}):
        with pytest.raises(InputError):
            parents_of_result(bad, "x")


def _tetrad_text(nodes, edges, sep=";") -> str:
    lines = ["Graph Nodes:", sep.join(nodes), "", "Graph Edges:"]
    lines += [f"{i}. {a} {mark} {b}" for i, (a, mark, b) in enumerate(edges, start=1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(5))
def test_a_tetrad_text_graph_reads_as_the_dag_it_writes(tmp_path, seed) -> None:
    """A random DAG written in Tetrad's text format (``;`` or the older ``,`` between names, arrows either way,
    an attributes section after the edges) reads back as its parents; compared with itself it is perfect."""
    rng = np.random.default_rng(seed)
    nodes = [f"X{i}" for i in range(1, 8)]
    order = list(rng.permutation(nodes))
    edges = [(order[i], order[j]) for i in range(7) for j in range(i + 1, 7) if rng.random() < 0.35]
    written = [(a, "-->", b) if rng.random() < 0.5 else (b, "<--", a) for a, b in edges]
    text = _tetrad_text(nodes, written, sep=";" if seed % 2 else ",") + "\nGraph Attributes:\nBIC: -1.0\n"
    (tmp_path / "g.txt").write_text(text)
    obj = read_graph_or_json(tmp_path / "g.txt", "graph")
    assert obj == {"parents": {v: sorted(a for a, b in edges if b == v) for v in nodes}}
    graph = dag_graph(obj["parents"])
    assert compare_marked(graph, graph)["SHD"] == 0


def test_a_tetrad_cpdag_is_compared_as_it_stands_and_only_as_a_cpdag(runner, tmp_path) -> None:
    """fGES's output (undirected edges): with --cpdag its marks are compared as given — against the CPDAG of the
    DAG a → b → c, whose edges are both reversible; without --cpdag it is refused, exit 2, one line."""
    from bnilp.cli import main

    (tmp_path / "dag.json").write_text('{"parents": {"a": [], "b": ["a"], "c": ["b"]}}')
    (tmp_path / "cpdag.txt").write_text(_tetrad_text(["a", "b", "c"], [("a", "---", "b"), ("c", "---", "b")]))
    done = runner.invoke(main, ["compare", str(tmp_path / "dag.json"), str(tmp_path / "cpdag.txt"), "--cpdag",
                                "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["SHD"] == 0
    (tmp_path / "collider.txt").write_text(_tetrad_text(["a", "b", "c"], [("a", "-->", "b"), ("c", "-->", "b")]))
    done = runner.invoke(main, ["compare", str(tmp_path / "dag.json"), str(tmp_path / "collider.txt"), "--cpdag",
                                "--json"])
    assert json.loads(done.output)["SHD"] == 2       # two undirected edges against two arrows: marks differ
    done = runner.invoke(main, ["compare", str(tmp_path / "dag.json"), str(tmp_path / "cpdag.txt")])
    assert done.exit_code == 2 and "cpdag.txt (TRUE) has undirected edges" in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_an_empty_undirected_list_is_a_dag_in_either_mode(runner, tmp_path) -> None:
    """``"undirected": []`` beside ``parents`` is a DAG's (README): with --cpdag it is compared as its CPDAG, as
    the same DAG without the key — a → b → c against itself is SHD 0 with no arrowheads (it was compared as it
    stood: SHD 2, arrowhead recall 0)."""
    from bnilp.cli import main

    chain = {"a": [], "b": ["a"], "c": ["b"]}
    (tmp_path / "dag.json").write_text(json.dumps({"parents": chain}))
    (tmp_path / "keyed.json").write_text(json.dumps({"parents": chain, "undirected": []}))
    for flags in ([], ["--cpdag"]):
        plain = runner.invoke(main, ["compare", str(tmp_path / "dag.json"), str(tmp_path / "dag.json"), "--json",
                                     *flags])
        keyed = runner.invoke(main, ["compare", str(tmp_path / "dag.json"), str(tmp_path / "keyed.json"), "--json",
                                     *flags])
        assert plain.exit_code == keyed.exit_code == 0, keyed.output
        assert json.loads(keyed.output) == json.loads(plain.output)
        assert json.loads(keyed.output)["SHD"] == 0
    assert json.loads(keyed.output)["arrowheads"]["true"] == 0      # a chain's CPDAG has no arrowhead


@pytest.mark.parametrize("edges,pattern", [
    ([("a", "<->", "b")], r"g.txt:5: edge mark '<->': only directed"),
    ([("a", "o-o", "b")], r"g.txt:5: edge mark 'o-o'"),
    ([("a", "-->", "q")], r"g.txt:5: node 'q' is not in the Graph Nodes: line"),
    ([("a", "-->", "a")], r"g.txt:5: an edge from 'a' to itself"),
    ([("a", "-->", "b"), ("b", "-->", "a")], r"g.txt:6: a second edge between 'b' and 'a'"),
    ([("a", "->", "b")], r"g.txt:5: expected an edge 'N. A --> B', found '1. a -> b'"),
])
def test_a_malformed_tetrad_graph_names_its_line(tmp_path, edges, pattern) -> None:
    (tmp_path / "g.txt").write_text(_tetrad_text(["a", "b"], edges))
    with pytest.raises(InputError, match=pattern):
        read_graph_or_json(tmp_path / "g.txt", "graph")


def test_the_shared_tetrad_truth_graphs_read_as_the_dags_their_readme_counts(shared_data) -> None:
    """graph20_1.txt and graph20_2.txt: 37 and 44 edges (the data README), acyclic, over X1…X20."""
    for name, count in (("graph20_1.txt", 37), ("graph20_2.txt", 44)):
        obj = read_graph_or_json(shared_data / "mixed" / name, "truth")
        assert set(obj) == {"parents"} and sorted(obj["parents"]) == sorted(f"X{i}" for i in range(1, 21))
        assert len(dag_graph(obj["parents"]).arrowheads) == count


@pytest.mark.parametrize("kind", ["tetrad", "json"])
def test_a_graph_given_through_a_pipe_is_read_once(tmp_path, kind) -> None:
    """compare's files may be pipes (``<(zcat truth.txt.gz)``): the text is read once and told apart there — read
    again for JSON after the Tetrad check, a pipe would give nothing the second time."""
    import os
    import threading

    text = (_tetrad_text(["a", "b"], [("a", "-->", "b")]) if kind == "tetrad"
            else '{"parents": {"a": [], "b": ["a"]}}')
    fifo = tmp_path / "graph"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    try:
        assert read_graph_or_json(fifo, "truth") == {"parents": {"a": [], "b": ["a"]}}
    finally:
        writer.join(timeout=10)


def test_what_tetrad_writes_around_a_graph_is_read_as_tetrad_reads_it(tmp_path) -> None:
    """Lines above ``Graph Nodes:`` (causal-cmd's), latent ``(L)`` and selection ``[S]`` nodes (named L and S), a
    bootstrap's null edge (``...``: no edge) with its probabilities, and ``1.A --> B`` without a space (a review)."""
    text = ("causal-cmd: fges\nScore: sem-bic\n\nGraph Nodes:\nA;B;(L);[S]\n\nGraph Edges:\n"
            "1. L --> A\n2.L --> B\n3. A ... S [no edge]:1.0000;\n4. B --> S [B-->S]:0.7;[no edge]:0.3;\n")
    (tmp_path / "g.txt").write_text(text)
    assert read_graph_or_json(tmp_path / "g.txt", "graph") == {"parents": {"A": ["L"], "B": ["L"], "L": [],
                                                                           "S": ["B"]}}


def test_a_variable_mismatch_says_how_many_names_it_leaves_out():
    """The error listed at most 5 names of each side and left the rest out unsaid (a review: 3 of ASIA's 8)."""
    with pytest.raises(InputError, match=r"only in the learned graph: a, b, c, d, e, … \(8 in all\); only in the "
                                         r"true graph: x, y, z\)"):
        compare_graphs({v: [] for v in "abcdefgh"}, {v: [] for v in "xyz"})


def test_the_tetrad_writer_writes_tetrads_own_file_byte_for_byte(shared_data) -> None:
    """graph20_1.txt, written by Tetrad with its edges in sorted order: read, then written by
    :func:`tetrad_graph_text`, it is the same bytes (node line, blank lines, numbering, edge order). graph20_2.txt
    holds its edges in the order Tetrad's graph had them: the same lines, sorted."""
    path = shared_data / "mixed" / "graph20_1.txt"
    assert tetrad_graph_text(read_graph_or_json(path, "truth")["parents"]) == path.read_text()
    path = shared_data / "mixed" / "graph20_2.txt"
    ours, theirs = tetrad_graph_text(read_graph_or_json(path, "truth")["parents"]), path.read_text()
    assert ours.split("\n")[:4] == theirs.split("\n")[:4]
    edge = lambda line: line.split(". ", 1)[1]      # noqa: E731
    assert sorted(map(edge, ours.split("\n")[4:-2])) == sorted(map(edge, theirs.split("\n")[4:-2]))


@pytest.mark.parametrize("seed", range(5))
def test_a_written_tetrad_graph_reads_back_as_the_graph_given(seed) -> None:
    """Random DAGs with some of their edges made undirected (a CPDAG's reversible edges, written ``---``)."""
    rng = np.random.default_rng(seed)
    nodes = [f"V{i}" for i in rng.permutation(9)]
    arcs = [(nodes[i], nodes[j]) for i in range(9) for j in range(i + 1, 9) if rng.random() < 0.3]
    loose = {frozenset(a) for a in arcs if rng.random() < 0.3}
    parents = {v: [u for u, w in arcs if w == v and frozenset((u, w)) not in loose] for v in nodes}
    text = tetrad_graph_text(parents, [tuple(e) for e in loose])
    back = parse_tetrad_graph(text, "g")
    assert back == (nodes, {(u, w) for u, w in arcs if frozenset((u, w)) not in loose}, loose)


@pytest.mark.parametrize("name", ["a b", "a;b", "a,b", "(L)", "[S]", "()", "[]", "", "x\ty", "Nodes:", "a:"])
def test_a_name_tetrads_format_cannot_hold_is_refused_naming_it(name) -> None:
    with pytest.raises(InputError, match=r"cannot be written in Tetrad's text format"):
        tetrad_graph_text({name: [], "b": [name]})


def test_the_tetrad_writer_checks_its_graph() -> None:
    with pytest.raises(InputError, match=r"parents: parent 'z' of 'a' is not a variable of the graph"):
        tetrad_graph_text({"a": ["z"]})
    with pytest.raises(InputError, match=r"undirected: \('a', 'q'\) is not a pair of two of the graph's variables"):
        tetrad_graph_text({"a": [], "b": []}, [("a", "q")])
    for undirected in ([("b", "a")], [("a", "a")], [("a", "c"), ("c", "a")], ["ac"]):
        with pytest.raises(InputError, match=r"undirected: .* is not a pair of two of the graph's variables with no"):
            tetrad_graph_text({"a": [], "b": ["a"], "c": [], "ac": []}, undirected)
    with pytest.raises(InputError, match=r"parents: 'b' and 'a' are each other's parents"):
        tetrad_graph_text({"a": ["b"], "b": ["a"]})
    with pytest.raises(InputError, match=r"parents: parent 'x y' of 'a' is not a variable"):
        tetrad_graph_text({"a": ["x y"]})
    with pytest.raises(InputError, match=r"a graph with no variables"):
        tetrad_graph_text({})


def test_learn_and_solve_write_the_best_network_for_tetrad(runner, tmp_path) -> None:
    """``--tetrad FILE``: the best network, which ``compare`` reads back at SHD 0 against the run's own JSON; a
    variable the format cannot hold is one line naming it and the flag, exit 2, before any scoring, no file."""
    from bnilp.cli import main

    done = runner.invoke(main, ["learn", "--bf", "3", "-q", "--tetrad", str(tmp_path / "g.txt"),
                                "--json", str(tmp_path / "r.json"), "--scores", str(tmp_path / "s.scores")])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "r.json").read_text())
    back = read_graph_or_json(tmp_path / "g.txt", "graph")["parents"]
    assert back == {v: sorted(ps) for v, ps in report["networks"][0]["parents"].items()}
    same = runner.invoke(main, ["compare", str(tmp_path / "r.json"), str(tmp_path / "g.txt"), "--json"])
    assert same.exit_code == 0 and json.loads(same.output)["SHD"] == 0
    done = runner.invoke(main, ["solve", str(tmp_path / "s.scores"), "-q", "--tetrad", str(tmp_path / "h.txt")])
    assert done.exit_code == 0 and (tmp_path / "h.txt").read_text() == (tmp_path / "g.txt").read_text()
    (tmp_path / "d.csv").write_text("age group,y\n" + "".join(f"{i % 2},{i % 3 // 2}\n" for i in range(40)))
    bad = runner.invoke(main, ["learn", str(tmp_path / "d.csv"), "--tetrad", str(tmp_path / "b.txt"),
                               "--json", str(tmp_path / "b.json")])
    assert bad.exit_code == 2 and not (tmp_path / "b.txt").exists() and not (tmp_path / "b.json").exists()
    assert bad.output.strip().splitlines()[-1].startswith("bnilp: error: --tetrad: variable 'age group' cannot")
    assert "scored" not in bad.output
