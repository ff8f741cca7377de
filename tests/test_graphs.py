"""The shared graph helpers (``bnilp.graphs``): one way to read a parent map, one way to name its cycle."""

from __future__ import annotations

import json
import re

import networkx as nx
import numpy as np
import pytest

from bnilp import graphs, ilp, metrics, pipeline, proxy
from bnilp.cli import main
from bnilp.data import from_dataframe
from bnilp.errors import InputError
from bnilp.export import fit_parameters
from bnilp.parentsets import score_parent_sets
from bnilp.scores import make_score
from bnilp.scores.base import TIE_RTOL, tie_tolerance
from bnilp.simulate import sample_dag
from tests.conftest import random_discrete_frame

CYCLE = {"a": ["c"], "b": ["a"], "c": ["b"]}      # a → b → c → a


def _names_the_cycle(message: str) -> bool:
    """The message says "the network has a directed cycle (x → y → z → x)" with the three variables."""
    found = re.search(r"the network has a directed cycle \(([^)]*)\)", message)
    if not found:
        return False
    walk = found.group(1).split(" → ")
    return len(walk) == 4 and walk[0] == walk[-1] and set(walk) == {"a", "b", "c"}


def test_every_route_that_refuses_a_cycle_names_it_in_the_same_words(tmp_path, runner) -> None:
    """A cyclic network given to any part of the package — the metrics, a fit, the simulator, a warm start
    (library and CLI), the greedy search's start — is refused with one message that names the cycle: six
    places had six wordings, some with no cycle named ("parents: the graph has a cycle")."""
    frame = random_discrete_frame(seed=3, n=3, N=200).set_axis(["a", "b", "c"], axis=1)
    data = from_dataframe(frame)
    score = make_score("bic", data)
    table = score_parent_sets(score, epsilon=0.0)
    routes = {
        "metrics": lambda: metrics.compare_graphs(CYCLE, {v: [] for v in CYCLE}),
        "fit": lambda: fit_parameters(data, CYCLE),
        "simulate": lambda: sample_dag(CYCLE, dict.fromkeys(CYCLE, "discrete"), 50, seed=1),
        "ilp warm start": lambda: ilp.solve(table, warm_start=CYCLE),
        "learn warm start": lambda: pipeline.solve_table(table, warm_start=CYCLE),
        "greedy start": lambda: proxy.greedy_search(score, start=CYCLE),
    }
    for route, call in routes.items():
        with pytest.raises(InputError) as caught:
            call()
        assert _names_the_cycle(str(caught.value)), (route, str(caught.value))
    csv, start = tmp_path / "d.csv", tmp_path / "w.json"
    frame.to_csv(csv, index=False)
    start.write_text(json.dumps({"parents": CYCLE}))
    res = runner.invoke(main, ["learn", str(csv), "-q", "--warm-start", str(start)])
    assert res.exit_code == 2 and _names_the_cycle(res.output), res.output


def test_directed_cycle_finds_a_cycle_exactly_when_networkx_says_the_graph_is_no_dag() -> None:
    """On random parent maps (5 nodes, each arrow with probability 0.3, loops excluded) ``directed_cycle``
    is None exactly for DAGs, and otherwise a closed walk along the map's arrows."""
    rng = np.random.default_rng(0)
    names = list("vwxyz")
    seen = {True: 0, False: 0}
    for _ in range(300):
        pa = {v: [p for p in names if p != v and rng.random() < 0.3] for v in names}
        cycle = graphs.directed_cycle(pa)
        dag = nx.is_directed_acyclic_graph(nx.DiGraph([(p, v) for v, ps in pa.items() for p in ps]))
        seen[dag] += 1
        assert (cycle is None) == dag
        if cycle is not None:
            assert all(cycle[k] in pa[cycle[(k + 1) % len(cycle)]] for k in range(len(cycle)))
    assert min(seen.values()) > 20, seen


def test_to_digraph_keeps_every_variable_and_the_greedy_result_uses_it() -> None:
    """Isolated variables are nodes; ``nodes`` fixes the node order; a search result's ``to_networkx`` is the
    same graph as ``ilp.to_digraph`` of its parents (it was written twice)."""
    g = graphs.to_digraph({"y": ["x"], "z": []}, nodes=["z", "x", "y"])
    assert list(g.nodes) == ["z", "x", "y"] and sorted(g.edges) == [("x", "y")]
    assert ilp.to_digraph is graphs.to_digraph
    frame = random_discrete_frame(seed=5, n=4, N=300)
    found = proxy.greedy_search(make_score("bic", from_dataframe(frame)), seed=0)
    ours = found.to_networkx()
    assert nx.utils.graphs_equal(ours, graphs.to_digraph(found.parents))
    assert list(ours.nodes) == list(frame.columns)


def test_topological_order_orders_the_directed_part_and_breaks_ties_by_the_given_order() -> None:
    """u → v puts u first; an undirected edge (each the other's parent, a CPDAG's u — v) orders nothing; ties by
    ``order``; a cycle in the directed part is an InputError naming it."""
    assert graphs.topological_order({"a": [], "b": ["a"], "c": []}, order=["c", "b", "a"]) == ["c", "a", "b"]
    assert graphs.topological_order({"a": ["b"], "b": ["a"], "c": ["a", "b"]}) == ["a", "b", "c"]
    with pytest.raises(InputError, match=r"directed part has a cycle \(. → . → . → .\)"):
        graphs.topological_order(CYCLE)


def test_dag_order_puts_parents_first_and_rejects_cycles_and_strangers() -> None:
    """The search's fast order (``dag_order``, no networkx): on random DAGs every parent comes before its child
    and the order is a permutation of the keys; a cycle or a parent that is not a key is an
    InputError."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        perm = [f"v{i}" for i in rng.permutation(n)]
        parents = {v: [u for u in perm[:i] if rng.random() < 0.4] for i, v in enumerate(perm)}
        order = graphs.dag_order(parents)
        pos = {v: i for i, v in enumerate(order)}
        assert sorted(order) == sorted(parents)
        assert all(pos[p] < pos[v] for v, ps in parents.items() for p in ps)
    with pytest.raises(InputError, match="directed cycle"):
        graphs.dag_order(CYCLE)
    with pytest.raises(InputError, match="'z' is not a variable"):
        graphs.dag_order({"a": ["z"]})


def test_the_tie_tolerance_is_relative_beyond_one_and_absolute_below() -> None:
    """TIE_RTOL·max(1, |x|), for scalars and arrays: the one tolerance the search, the dynamic programme, the
    cube split, the pruning rules and the proxy search compare log-scores with."""
    assert tie_tolerance(0.5) == TIE_RTOL and tie_tolerance(-0.5) == TIE_RTOL
    assert tie_tolerance(-2e4) == pytest.approx(2e4 * TIE_RTOL)
    assert np.allclose(tie_tolerance(np.array([0.0, -10.0, 1e6])), TIE_RTOL * np.array([1.0, 10.0, 1e6]))
