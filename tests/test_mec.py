"""MEC keys, CPDAGs and class sizes against brute force over every DAG on 3–5 nodes."""

from __future__ import annotations

import collections
import importlib.util
import itertools
import math
import random
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from bnilp.errors import InputError
from bnilp.mec import (
    MAX_CLASS_LISTED,
    MEC,
    _class_cpdags,
    _count_amo,
    _count_amo_rooted,
    _parent_options,
    _phi,
    admitted_fractions,
    class_counts,
    count_admitted,
    count_dags_in_mec,
    cpdag,
    cpdag_edges,
    cpdag_edges_meek,
    dags_in_mec,
    directed_fractions,
    group_by_mec,
    mec_index,
    mec_key,
    network_items,
    rounding_slack,
    unequal_covered_families,
    v_structures,
)
from tests.oracles import all_dags, is_acyclic

KNOWN_CLASSES = {3: 11, 4: 185, 5: 8782}


def _frozen(pa):
    return tuple(sorted((v, tuple(sorted(p))) for v, p in pa.items()))


@pytest.fixture(scope="module", params=[3, 4, 5])
def classes(request):
    n = request.param
    nodes = [f"X{i}" for i in range(n)]
    groups = collections.defaultdict(list)
    for dag in all_dags(nodes):
        groups[mec_key(dag)].append(dag)
    return n, nodes, groups


def test_number_of_classes(classes):
    n, _, groups = classes
    assert len(groups) == KNOWN_CLASSES[n]
    assert sum(len(g) for g in groups.values()) == {3: 25, 4: 543, 5: 29281}[n]


def test_class_sizes_and_cpdags(classes):
    _, nodes, groups = classes
    for members in groups.values():
        directed, undirected = cpdag_edges(members[0])
        assert cpdag_edges_meek(members[0]) == (directed, undirected)
        assert count_dags_in_mec(members[0]) == len(members)
        assert count_dags_in_mec((directed, undirected)) == len(members)
        for dag in members[1:]:
            assert cpdag_edges(dag) == (directed, undirected)
        # an edge is undirected in the CPDAG iff its orientation varies within the class
        orientations = collections.defaultdict(set)
        for dag in members:
            for v, ps in dag.items():
                for p in ps:
                    orientations[frozenset((p, v))].add((p, v))
        varying = {e for e, o in orientations.items() if len(o) == 2}
        assert undirected == varying
        assert directed == {next(iter(o)) for e, o in orientations.items() if len(o) == 1}


def test_dags_in_mec_lists_the_class(classes):
    n, _, groups = classes
    if n == 5:
        sample = list(groups.values())[::7]
    else:
        sample = list(groups.values())
    for members in sample:
        listed = list(dags_in_mec(members[0]))
        assert len(listed) == len(members)
        assert {_frozen(d) for d in listed} == {_frozen(d) for d in members}


def test_cpdag_digraph_form():
    pa = {"a": frozenset(), "b": frozenset({"a"}), "c": frozenset({"b"}), "d": frozenset({"c", "e"}),
          "e": frozenset()}
    g = cpdag(pa)
    assert isinstance(g, nx.DiGraph)
    assert set(g.nodes) == set(pa)
    # c → d ← e is a v-structure; a — b — c stays undirected; c - d directed
    assert g.has_edge("a", "b") and g.has_edge("b", "a") and g["a"]["b"]["undirected"]
    assert g.has_edge("c", "d") and not g.has_edge("d", "c") and not g["c"]["d"]["undirected"]
    assert count_dags_in_mec(g) == 3
    assert v_structures(pa) == frozenset({("c", "d", "e")})
    # every form count_dags_in_mec takes, directed_fractions and class_counts take too (a review: the DiGraph
    # was unpacked as an edge-set pair, a ValueError)
    from bnilp.mec import class_counts, cpdag_edges, directed_fractions
    assert directed_fractions(g) == directed_fractions(pa) == directed_fractions(cpdag_edges(pa))
    assert class_counts(g) == (3, directed_fractions(pa))
    with pytest.raises(InputError, match="expected a DAG's parent map"):
        directed_fractions(42)


def _random_chordal(n: int, rng: random.Random) -> nx.Graph:
    """A connected chordal graph: each new vertex joins a clique of the current graph."""
    g = nx.Graph()
    g.add_node(0)
    for v in range(1, n):
        u = rng.randrange(v)
        clique = [u] + [w for w in g.neighbors(u) if rng.random() < 0.5]
        clique = [w for w in clique if all(g.has_edge(w, x) for x in clique if x != w)]
        g.add_edges_from((v, w) for w in clique)
    assert nx.is_chordal(g) and nx.is_connected(g)
    return g


def _amo_brute(g: nx.Graph) -> int:
    """AMOs of an undirected graph: orientations by a vertex order with no v-structure."""
    found = set()
    for order in itertools.permutations(g.nodes):
        pos = {v: i for i, v in enumerate(order)}
        edges = frozenset((u, v) if pos[u] < pos[v] else (v, u) for u, v in g.edges)
        pa = collections.defaultdict(set)
        for u, v in edges:
            pa[v].add(u)
        if any(not g.has_edge(a, b) for ps in pa.values() for a, b in itertools.combinations(ps, 2)):
            continue
        found.add(edges)
    return len(found)


@pytest.mark.parametrize("seed", range(12))
def test_count_random_chordal_components(seed):
    rng = random.Random(seed)
    g = _random_chordal(rng.choice([6, 7, 8]), rng)
    names = {v: f"v{v}" for v in g.nodes}
    und = {frozenset((names[u], names[v])) for u, v in g.edges}
    assert count_dags_in_mec((set(), und)) == _amo_brute(g)


#: the chordal-graph makers of ``benchmarks/edge_counts.py``, shared with the tests
_spec = importlib.util.spec_from_file_location(
    "edge_counts", Path(__file__).resolve().parents[1] / "benchmarks" / "edge_counts.py")
_edge_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_edge_bench)
_dense_chordal = _edge_bench.grown_chordal
_split_graph = _edge_bench.split_graph


@pytest.mark.parametrize("seed", range(40))
def test_clique_picking_equals_source_vertex_sum(seed):
    rng = random.Random(1000 + seed)
    n = rng.randrange(5, 15)
    g = _dense_chordal(n, rng.choice([0.3, 0.6, 0.9]), rng) if seed % 2 else _random_chordal(n, rng)
    adj = {f"v{u:02d}": {f"v{w:02d}" for w in g.neighbors(u)} for u in g.nodes}
    comp = frozenset(adj)
    assert _count_amo(comp, adj) == _count_amo_rooted(comp, adj)


def test_phi_prefix_free_permutations():
    k = frozenset("abc")
    assert _phi(k, []) == 6
    assert _phi(k, [frozenset("a")]) == 4
    assert _phi(k, [frozenset("a"), frozenset("ab")]) == 3  # bca, cab, cba
    assert _phi(k, [frozenset("a"), frozenset("b")]) == 2  # cab, cba
    assert _phi(k, [frozenset("ab"), frozenset("x")]) == 4  # sets outside K are ignored
    # brute force on 5 elements with a non-nested family
    family = [frozenset("a"), frozenset("bc"), frozenset("abd"), frozenset("cb")]
    k5 = frozenset("abcde")
    brute = sum(1 for perm in itertools.permutations(sorted(k5))
                if not any(frozenset(perm[:i]) in family for i in range(1, 5)))
    assert _phi(k5, family) == brute


def test_count_closed_forms_and_large_components():
    clique = {frozenset((f"n{i}", f"n{j}")) for i in range(9) for j in range(i)}
    assert count_dags_in_mec((set(), clique)) == math.factorial(9)
    path = {frozenset((f"n{i:02d}", f"n{i + 1:02d}")) for i in range(29)}
    assert count_dags_in_mec((set(), path)) == 30
    # two disjoint components multiply
    assert count_dags_in_mec((set(), clique | path)) == math.factorial(9) * 30
    # a dense chordal component on 60 nodes (neither clique nor tree) counts quickly, and as the source-vertex
    # sum of He, Jia & Yu (2015) counts it (exponential, a cross-check: 466,847,583,436,800 DAGs)
    g = _dense_chordal(60, 0.95, random.Random(60))
    und = {frozenset((f"v{u:02d}", f"v{v:02d}")) for u, v in g.edges}
    adj = {f"v{u:02d}": {f"v{w:02d}" for w in g.neighbors(u)} for u in g.nodes}
    assert count_dags_in_mec((set(), und)) == _count_amo_rooted(frozenset(adj), adj) == 466847583436800


@pytest.mark.parametrize("seed", range(20))
def test_chickering_equals_meek_on_random_dags(seed):
    rng = random.Random(seed)
    n = rng.choice([8, 10, 12])
    nodes = [f"v{i:02d}" for i in range(n)]
    rng.shuffle(nodes)
    density = rng.choice([0.2, 0.35, 0.5])
    pa = {v: frozenset(u for u in nodes[:i] if rng.random() < density) for i, v in enumerate(nodes)}
    assert cpdag_edges(pa) == cpdag_edges_meek(pa)
    directed, undirected = cpdag_edges(pa)
    if count_dags_in_mec(pa) <= 2000:
        members = list(dags_in_mec(pa))
        assert len(members) == count_dags_in_mec(pa)
        assert {mec_key(m) for m in members} == {mec_key(pa)}
        assert len({_frozen(m) for m in members}) == len(members)
        assert _frozen(pa) in {_frozen(m) for m in members}


def test_cycle_is_rejected():
    with pytest.raises(InputError, match="cycle"):
        cpdag_edges({"a": frozenset({"b"}), "b": frozenset({"a"})})


def test_not_chordal_is_rejected():
    cycle = {frozenset(("a", "b")), frozenset(("b", "c")), frozenset(("c", "d")), frozenset(("d", "a"))}
    with pytest.raises(InputError, match="chordal"):
        count_dags_in_mec((set(), cycle))


def test_group_by_mec_best_first_and_duck_typing():
    nodes = ["a", "b", "c"]
    dags = list(all_dags(nodes))
    rng = random.Random(0)
    scored = []
    by_key = {}
    for d in dags:
        key = mec_key(d)
        by_key.setdefault(key, -rng.random() * 10)
        scored.append((by_key[key], d))

    class Net:
        def __init__(self, score, parents):
            self.score, self.parents = score, parents

    as_objects = [Net(s, d) for s, d in scored]
    as_dicts = [{"score": s, "parents": {v: sorted(p) for v, p in d.items()}} for s, d in scored]
    assert network_items(as_dicts) == network_items(scored) == network_items(as_objects)
    mecs = group_by_mec(as_objects)
    assert len(mecs) == 11
    assert all(isinstance(m, MEC) for m in mecs)
    assert [m.score for m in mecs] == sorted((m.score for m in mecs), reverse=True)
    assert sorted(i for m in mecs for i in m.members) == list(range(len(dags)))
    for m in mecs:
        assert m.n_dags == m.class_size == len(m.members) == count_dags_in_mec(m)
        assert {mec_key(dags[i]) for i in m.members} == {m.key}
        assert m.cpdag == cpdag_edges(dags[m.members[0]])
        assert set(m.cpdag_graph().nodes) == set(nodes)
    ids = mec_index(mecs, len(dags))
    assert all(i in mecs[ids[i]].members for i in range(len(dags)))
    assert all(is_acyclic(d) for m in mecs for d in dags_in_mec(m.cpdag, nodes))


def _random_dag(n: int, p: float, rng: random.Random) -> dict[str, frozenset[str]]:
    names = [f"v{i:02d}" for i in range(n)]
    order = names[:]
    rng.shuffle(order)
    return {v: frozenset(u for u in order[:order.index(v)] if rng.random() < p) for v in names}


def _consistent_extensions(dag: dict[str, frozenset[str]]) -> list[dict[str, frozenset[str]]]:
    """Every DAG with the skeleton and v-structures of ``dag``: orient the CPDAG's undirected edges in every
    way and keep the acyclic orientations with the same v-structures (independent of the counter)."""
    directed, undirected = cpdag_edges(dag)
    und = sorted(tuple(sorted(e)) for e in undirected)
    want = v_structures(dag)
    out = []
    for flips in itertools.product((False, True), repeat=len(und)):
        pa = {v: set() for v in dag}
        for u, v in directed:
            pa[v].add(u)
        for (a, b), flip in zip(und, flips, strict=True):
            u, v = (b, a) if flip else (a, b)
            pa[v].add(u)
        g = nx.DiGraph([(u, v) for v, ps in pa.items() for u in ps])
        g.add_nodes_from(pa)
        cand = {v: frozenset(ps) for v, ps in pa.items()}
        if nx.is_directed_acyclic_graph(g) and v_structures(cand) == want:
            out.append(cand)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_class_counts_and_edge_shares_equal_listing_every_consistent_extension(seed):
    rng = random.Random(4000 + seed)
    n = rng.randrange(4, 13)
    dag = _random_dag(n, rng.choice([0.2, 0.35, 0.6]), rng)
    if len(cpdag_edges(dag)[1]) > 16:          # keep the 2^k listing oracle fast
        dag = _random_dag(n, 0.15, rng)
    members = _consistent_extensions(dag)
    assert count_dags_in_mec(dag) == len(members)
    shares = directed_fractions(dag)
    for u, v in {(u, v) for m in members for v, ps in m.items() for u in ps}:
        assert shares[(u, v)] == pytest.approx(sum(u in m[v] for m in members) / len(members), abs=1e-12)
    assert all(p > 0 for p in shares.values())
    # one pass gives both, and a component shape read back from the run's cache gives the same again
    assert class_counts(dag) == (len(members), shares) == class_counts(cpdag_edges(dag))


def _tree_dag(n: int, rng: random.Random) -> dict[str, frozenset[str]]:
    """A random tree oriented away from a random root: no v-structures, so its class is the undirected tree."""
    names = [f"v{i:02d}" for i in range(n)]
    order = names[:]
    rng.shuffle(order)
    return {v: frozenset([rng.choice(order[:i])] if i else []) for i, v in enumerate(order)}


def _complete_dag(names: list[str]) -> dict[str, frozenset[str]]:
    return {v: frozenset(names[:i]) for i, v in enumerate(names)}


def _undirected_masks(dags: list[dict[str, frozenset[str]]]) -> tuple[list[str], np.ndarray]:
    """The node names and the compiled CPDAGs' undirected neighbour masks of ``dags`` (one node set)."""
    from bnilp.mec import _cpdag_masks

    names = sorted(dags[0])
    idx = {v: i for i, v in enumerate(names)}
    pm = np.array([[sum(1 << idx[u] for u in d[v]) for v in names] for d in dags], dtype=np.int64)
    return names, _cpdag_masks(pm)[1]


def _component_counts_of(dags: list[dict[str, frozenset[str]]]) -> list[tuple[int, bool, dict]]:
    """_component_counts on the compiled CPDAGs of ``dags``: per class (size, big, shares of its undirected
    edges both ways)."""
    from bnilp.mec import _component_counts

    names, und = _undirected_masks(dags)
    comps = _component_counts(und)
    bounds = comps.of_class()
    out = []
    for i in range(len(dags)):
        shares = {}
        for j in range(bounds[i], bounds[i + 1]):
            if comps.big[i]:
                break
            for r in range(comps.edge_start[j], comps.edge_start[j + 1]):
                u, v = (names[comps.nodes[j, x]] for x in (comps.edge_a[r], comps.edge_b[r]))
                shares[u, v] = comps.forward[r] / comps.total[j]
                shares[v, u] = (comps.total[j] - comps.forward[r]) / comps.total[j]
        out.append((int(comps.size[i]), bool(comps.big[i]), shares))
    return out


def _shape_kinds(dags: list[dict[str, frozenset[str]]]) -> collections.Counter:
    """How many chain components of the dags' classes are trees, cliques (k ≥ 3) and neither."""
    from bnilp.mec import _chain_component_shapes, _closed_form_counts

    _, _, shape = _chain_component_shapes(_undirected_masks(dags)[1])
    edge_start, *_, other = _closed_form_counts(shape)
    k = np.count_nonzero(shape, axis=1)
    e = np.diff(edge_start)
    return collections.Counter(np.where(other, "neither", np.where(e == k - 1, "tree", "clique")).tolist())


@pytest.mark.parametrize("seed", range(8))
def test_components_in_closed_form_equal_listing_every_consistent_extension(seed):
    """The compiled chain-component counts (trees: one AMO per root, a → b as often as a's side has nodes;
    cliques: k!, half each way; any other shape by the source-vertex recursion) give each class's size and
    each undirected edge's share as listing its consistent extensions does — on trees, cliques, trees and
    cliques side by side in one graph, and random DAGs whose components are neither."""
    rng = random.Random(9100 + seed)
    n = rng.randrange(5, 11)
    names = [f"v{i:02d}" for i in range(n)]
    k = rng.randrange(3, 6)
    clique = {**{v: frozenset() for v in names}, **_complete_dag(rng.sample(names, k))}
    tree = _tree_dag(n - k, rng)                # a clique on the first k names beside a tree on the rest
    rename = dict(zip(sorted(tree), names[k:], strict=True))
    both = {**_complete_dag(names[:k]), **{rename[v]: frozenset(rename[u] for u in ps) for v, ps in tree.items()}}
    dags = [_tree_dag(n, rng), clique, both]
    while len(dags) < 12:
        dag = _random_dag(n, rng.choice([0.3, 0.5]), rng)
        if len(cpdag_edges(dag)[1]) <= 14:
            dags.append(dag)
    kinds = _shape_kinds(dags)
    assert kinds["tree"] and kinds["clique"] and kinds["neither"]
    for dag, (size, big, shares) in zip(dags, _component_counts_of(dags), strict=True):
        members = _consistent_extensions(dag)
        assert not big and size == len(members)
        und = {(u, v) for e in cpdag_edges(dag)[1] for u, v in itertools.permutations(sorted(e))}
        assert set(shares) == und
        for u, v in und:
            assert shares[u, v] == pytest.approx(sum(u in m[v] for m in members) / len(members), abs=1e-12)


def test_a_clique_of_21_reaches_2_to_the_62_and_one_of_20_is_exact():
    """20! < 2^62 ≤ 21!: the class of a complete DAG on 20 nodes is counted exactly, with half its DAGs each
    way on every edge, and one on 21 nodes is flagged (its int64 count would overflow)."""
    names = [f"v{i:02d}" for i in range(21)]
    (size20, big20, shares20), = _component_counts_of([{**_complete_dag(names[:20]), names[20]: frozenset()}])
    assert (size20, big20) == (math.factorial(20), False) and set(shares20.values()) == {0.5}
    (_, big21, _), = _component_counts_of([_complete_dag(names)])
    assert big21


def test_count_admitted_when_a_compelled_family_is_missing():
    # a → c ← b is a class of one DAG; without {a, b} for c the table admits none of it
    collider = {"a": frozenset(), "b": frozenset(), "c": frozenset("ab")}
    every = {v: {frozenset(), frozenset("ab"), frozenset("a"), frozenset("b")} for v in "abc"}
    assert count_admitted(collider, every, list("abc")) == (1, True)
    assert count_admitted(collider, {**every, "c": {frozenset("a"), frozenset()}}, list("abc")) == (0, True)


def test_count_admitted_counts_only_what_the_table_admits():
    # a — b — c is one class of 3 DAGs: a → b → c, a ← b ← c and a ← b → c
    chain = {"a": frozenset(), "b": frozenset("a"), "c": frozenset("b")}
    every = {v: {frozenset(), *(frozenset(u) for u in "abc" if u != v)} for v in "abc"}
    assert count_admitted(chain, every, list("abc")) == (3, True)
    lacking = {**every, "b": {frozenset(), frozenset("c")}}     # b may not have a as a parent
    admitted = [d for d in dags_in_mec(chain) if all(d[v] in lacking[v] for v in "abc")]
    assert count_admitted(chain, lacking, list("abc")) == (len(admitted), True) and len(admitted) == 2
    shares = admitted_fractions(chain, lacking, list("abc"))    # a ← b ← c and a ← b → c
    assert shares[("b", "a")] == 1.0 and shares[("c", "b")] == shares[("b", "c")] == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_cpdags_and_whole_class_admission_equal_the_python_ones(seed):
    """credible_classes' compiled route (v-structures + Meek closure on bit masks; every parent option
    of the class looked up in the table; a whole class's size and edge shares from its chain components
    counted by shape) against Chickering's labelling, _parent_options and class_counts, on random DAGs up
    to 13 nodes with tables that admit all options or miss a random one."""
    rng = random.Random(7000 + seed)
    for _ in range(60):
        n = rng.randrange(2, 14)
        dag = _random_dag(n, rng.choice([0.15, 0.3, 0.5, 0.8]), rng)
        nodes = sorted(dag)
        directed, und = cpdag_edges(dag)
        options = {}
        for v in nodes:
            nbrs = sorted(u for e in und if v in e for u in e if u != v)
            options[v] = set(_parent_options(frozenset(u for u, w in directed if w == v), nbrs,
                                             {x: {y for e in und if x in e for y in e if y != x} for x in nodes}))
        families = {v: set(opts) for v, opts in options.items()}
        if rng.random() < 0.5:                  # drop one option of one node: no longer the whole class
            v = rng.choice(nodes)
            families[v].discard(rng.choice(sorted(families[v], key=sorted)))
        (cp,), whole, (counts,) = _class_cpdags([(0.0, dag)], families, nodes)
        assert cp == (directed, und)
        assert bool(whole[0]) == all(options[v] <= families[v] for v in nodes)
        if whole[0]:
            assert count_admitted(dag, families, nodes) == (count_dags_in_mec(dag), True)
            assert counts == class_counts(cp)
        else:
            assert counts is None


def test_whole_class_admission_walks_the_cliques_of_a_neighbourhood_not_its_subsets():
    """A hub with 40 undirected neighbours (a star: 41 DAGs, one per root) has 41 parent options, not 2^40
    sub-masks to look at: admitted whole, and not once one leaf's option "hub" is missing. A node of a
    clique one larger than MAX_PARENT_OPTIONS allows has too many options: left to count_admitted, as
    _parent_options leaves it."""
    from bnilp.mec import MAX_PARENT_OPTIONS, _class_cpdags

    leaves = [f"l{i:02d}" for i in range(40)]
    nodes = ["hub", *leaves]
    star = {"hub": frozenset()} | {v: frozenset({"hub"}) for v in leaves}
    families = {"hub": {frozenset(), *(frozenset({v}) for v in leaves)}} | {v: {frozenset(), frozenset({"hub"})}
                                                                           for v in leaves}
    ((_, und),), whole, (counts,) = _class_cpdags([(0.0, star)], families, nodes)
    assert len(und) == 40 and whole[0] and counts[0] == count_dags_in_mec(star) == 41
    families["l07"] = {frozenset()}
    assert not _class_cpdags([(0.0, star)], families, nodes)[1][0]
    k = MAX_PARENT_OPTIONS.bit_length() - 1                     # a clique of k + 1: 2^k options each, the most
    assert 2 ** k == MAX_PARENT_OPTIONS
    for size, whole_expected in ((k + 1, True), (k + 2, False)):
        clique = {f"c{i:02d}": frozenset(f"c{j:02d}" for j in range(i)) for i in range(size)}
        every = {v: {frozenset(c) for k in range(size) for c in itertools.combinations(sorted(set(clique) - {v}), k)}
                 for v in clique}
        assert bool(_class_cpdags([(0.0, clique)], every, sorted(clique))[1][0]) == whole_expected


@pytest.mark.parametrize("seed", range(3))
def test_classes_counted_together_by_shape_equal_class_counts_one_by_one(seed):
    """Many classes in one call (credible_classes' listed route): each class's size and edge shares from the
    chain components of all of them, counted once per shape, equal class_counts of its CPDAG alone —
    including classes with no undirected edge and classes whose DAGs are all orientations of a clique."""
    rng = random.Random(9100 + seed)
    n = 10
    dags = [_random_dag(n, rng.choice([0.0, 0.15, 0.3, 0.5, 1.0]), rng) for _ in range(80)]
    nodes = sorted(dags[0])
    families: dict[str, set[frozenset[str]]] = {v: set() for v in nodes}
    for dag in dags:
        directed, und = cpdag_edges(dag)
        adj = {x: {y for e in und if x in e for y in e if y != x} for x in nodes}
        for v in nodes:
            nbrs = sorted(adj[v])
            families[v] |= set(_parent_options(frozenset(u for u, w in directed if w == v), nbrs, adj))
    cps, whole, counts = _class_cpdags([(0.0, dag) for dag in dags], families, nodes)
    assert whole.all()
    assert any(not cp[1] for cp in cps) and any(len(cp[1]) == n * (n - 1) // 2 for cp in cps)
    for cp, got in zip(cps, counts, strict=True):
        assert got == class_counts(cp)


def _tail_of(dags: list[dict[str, frozenset[str]]], scores: list[float]):
    """A :class:`bnilp.ilp.result.ClassTail` holding these DAGs (families indexed in order of appearance)."""
    from bnilp.ilp.result import ClassTail

    names = sorted(dags[0])
    index: dict[tuple[str, frozenset[str]], int] = {}
    rows = [[index.setdefault((v, dag[v]), len(index)) for v in names] for dag in dags]
    keys = list(index)
    return ClassTail(np.array(scores), np.array(rows, dtype=np.int32), [ps for _, ps in keys], [v for v, _ in keys])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prior", ["dags", "mecs"])
def test_a_tail_of_classes_adds_what_each_class_would_add_alone(seed, prior):
    """class_tail_mass (compiled CPDAGs and chain components, each component shape counted once, trees in
    closed form) equals the sum over the classes counted one by one by credible_classes — with every parent
    set admitted (whole classes) and with only the DAGs' own sets (classes counted over what is admitted)."""
    from bnilp.mec import _chain_component_shapes, _cpdag_masks, class_tail_mass, credible_classes

    rng = random.Random(seed)
    n = 8
    dags = [_random_dag(n, rng.choice((0.25, 0.4, 0.6)), rng) for _ in range(60)]
    scores = [-rng.random() * 5 for _ in dags]
    names = sorted(dags[0])
    own: dict[str, dict[frozenset[str], float]] = {v: {} for v in names}
    for dag in dags:
        for v in names:
            own[v][dag[v]] = 0.0
    every = {v: {frozenset(c): 0.0 for k in range(n) for c in itertools.combinations([u for u in names if u != v], k)}
             for v in names}
    tail = _tail_of(dags, scores)
    idx = {v: i for i, v in enumerate(names)}
    pm = np.array([[sum(1 << idx[u] for u in dag[v]) for v in names] for dag in dags], dtype=np.int64)
    _, und = _cpdag_masks(pm)
    _, _, shape = _chain_component_shapes(und)
    edges = [sum(bin(int(x)).count("1") for x in row) // 2 for row in shape]
    sizes = [int(np.count_nonzero(row)) for row in shape]
    assert any(e == k - 1 for e, k in zip(edges, sizes, strict=True))        # trees and other components
    assert any(e > k - 1 for e, k in zip(edges, sizes, strict=True))
    for families in (every, own):
        got = class_tail_mass(tail, families, names, max(scores), prior, complete_classes=False, chunk=17)
        mecs = credible_classes(list(zip(scores, dags, strict=True)), families, names, complete_classes=False)
        w = [math.exp(m.score - max(scores)) * (m.counted if prior == "dags" else 1) for m in mecs]
        want_d = np.zeros((n, n))
        want_u = np.zeros((n, n))
        for m, wm in zip(mecs, w, strict=True):
            for (u, v), p in m.shares.items():
                want_d[idx[u], idx[v]] += wm * p
            for e in m.cpdag[1]:
                a, b = (idx[x] for x in e)
                want_u[a, b] += wm
                want_u[b, a] += wm
        assert got.classes == len(dags) and got.dags == sum(m.counted for m in mecs)
        assert got.mass == pytest.approx(sum(w), rel=1e-12)
        np.testing.assert_allclose(got.directed, want_d, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got.undirected, want_u, rtol=1e-12, atol=1e-15)


def test_a_tail_counted_to_a_deadline_is_its_best_chunks_and_says_how_many_are_left(monkeypatch):
    """Past ``deadline`` no chunk of the tail is begun: the sums are exactly those of the tail's first chunks
    (its best classes: the tail is ranked) and ``uncounted`` the rest — a 10-s time limit on a flat table of 12
    variables found 4.2 M classes, then counted them for 260 s past the limit."""
    import bnilp.mec as mec
    from bnilp.mec import class_tail_mass

    rng = random.Random(3)
    dags = [_random_dag(7, 0.4, rng) for _ in range(50)]
    scores = sorted((-rng.random() * 5 for _ in dags), reverse=True)
    names = sorted(dags[0])
    families = {v: {frozenset(c): 0.0 for k in range(7) for c in itertools.combinations([u for u in names if u != v],
                                                                                        k)} for v in names}
    whole = class_tail_mass(_tail_of(dags, scores), families, names, 0.0, "dags", True, chunk=20)
    assert whole.classes == 50 and whole.uncounted == 0
    clock = iter([0.0, 0.0, 5.0])                  # the deadline (1.0) passes after two chunks
    monkeypatch.setattr(mec.time, "perf_counter", lambda: next(clock))
    got = class_tail_mass(_tail_of(dags, scores), families, names, 0.0, "dags", True, chunk=20, deadline=1.0)
    monkeypatch.undo()
    first = class_tail_mass(_tail_of(dags[:40], scores[:40]), families, names, 0.0, "dags", True, chunk=20)
    assert (got.classes, got.uncounted, got.dags) == (40, 10, first.dags) and got.mass == first.mass
    np.testing.assert_array_equal(got.directed, first.directed)
    np.testing.assert_array_equal(got.undirected, first.undirected)
    none = class_tail_mass(_tail_of(dags, scores), families, names, 0.0, "dags", True, deadline=0.0)
    assert (none.classes, none.uncounted, none.dags, none.mass) == (0, 50, 0, 0.0)


def test_a_search_stopped_by_its_time_limit_counts_its_tail_for_a_bounded_time(monkeypatch):
    """A search stopped by its time limit (or interrupted) counts the classes past the cap until a quarter of
    the limit more, at least TAIL_COUNT_SECONDS; a finished one counts them all. End to end (solve_table, class
    enumeration by peeling, the classes past the cap counted), a deadline already past leaves the tail out and
    the report says over how many classes the posteriors average and how many were not counted."""
    import time

    import bnilp.pipeline as pipeline
    from bnilp.ilp import settings
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import ScoreTable

    now = time.perf_counter()
    assert pipeline._tail_deadline("optimal", 10) is None and pipeline._tail_deadline("network_limit", None) is None
    assert pipeline._tail_deadline("time_limit", 1000) - now == pytest.approx(250, abs=5)
    assert pipeline._tail_deadline("time_limit", 10) - now == pytest.approx(settings.TAIL_COUNT_SECONDS, abs=5)
    assert pipeline._tail_deadline("interrupted", None) - now == pytest.approx(settings.TAIL_COUNT_SECONDS, abs=5)
    names = [f"v{i}" for i in range(5)]
    flat = ScoreTable(names, {v: {frozenset(c): 0.0 for k in range(3) for c in
                                  itertools.combinations([u for u in names if u != v], k)} for v in names})
    full = solve_table(flat, epsilon=1.0, max_networks=100, enumerate_by="mecs").report
    assert full["classes_uncounted"] == 0 and full["posterior_classes"] > 100
    monkeypatch.setattr(pipeline, "_tail_deadline", lambda status, time_limit: 0.0)
    cut = solve_table(flat, epsilon=1.0, max_networks=100, enumerate_by="mecs").report
    assert cut["classes_uncounted"] == full["posterior_classes"] - 100 and cut["posterior_classes"] == 100
    assert (f"over the best 100 of the {full['posterior_classes']:,} credible classes (the other "
            f"{cut['classes_uncounted']:,} not counted in the time left after the network_limit)") in cut["listed"]
    import io

    from rich.console import Console

    from bnilp.report import print_report

    panel = Console(file=io.StringIO(), width=300)
    print_report(cut, panel)
    said = panel.file.getvalue()        # not "all 100 credible classes": the panel says what was left out
    assert (f"posteriors over   the best 100 of the {full['posterior_classes']} credible classes (" in said
            and f"; {cut['classes_uncounted']} not counted); the best 100 listed" in said)   # why: the JSON's listed
    assert f"top 20 of 100 listed, {full['posterior_classes']} credible found" in said
    # --list-dags counts the tail's DAGs, under background knowledge by listing them: bounded alike (a review)
    from bnilp.knowledge import Knowledge

    for knowledge in (None, Knowledge(forbidden=[("v0", "v1")])):
        listed = solve_table(flat, epsilon=1.0, max_networks=100, enumerate_by="mecs", list_dags=True,
                             knowledge=knowledge).report
        assert listed["classes_uncounted"] > 0 and listed["n_dags_counted_exact"] is False
        panel = Console(file=io.StringIO(), width=300)       # posteriors over the DAGs listed: no class count
        print_report(listed, panel)                           # that adds the uncounted to the listed (a review)
        said = panel.file.getvalue()
        assert "posteriors over" not in said and f"(top 20 of {listed['n_mecs']})" in said
    # a search stopped by its time limit: the message does not say the cap's classes were "kept" (a review: "the
    # best 2000 of them kept" beside 66 classes holding the 2,000 DAGs listed)
    monkeypatch.undo()
    monkeypatch.setattr(settings, "TAIL_COUNT_SECONDS", 0.0)
    names8 = [f"v{i}" for i in range(8)]
    flat8 = ScoreTable(names8, {v: {frozenset(c): 0.0 for k in range(3) for c in
                                    itertools.combinations([u for u in names8 if u != v], k)} for v in names8})
    stopped = solve_table(flat8, epsilon=1.0, max_networks=200, enumerate_by="mecs", list_dags=True,
                          time_limit=0.2).report
    assert stopped["status"] == "time_limit" and "of them kept" not in stopped["message"]
    assert " credible classes found" in stopped["message"] and "DAG listing stopped at 200 DAGs" in stopped["message"]
    # the classes the DAGs were counted in: those a deadline left uncounted are not among them (a review: "of at
    # least 2,137,810 counted in 1,045,712 credible classes found" where 556,709 were not counted)
    left = stopped["classes_uncounted"]
    if left:
        assert (f" credible classes found (the other {left:,} not counted in the time left after the time limit)"
                in stopped["message"]), stopped["message"]


def test_a_tail_s_dag_total_past_2_63_is_exact():
    """Each class of the tail holds fewer than 2^62 DAGs, but their total can pass 2^63: 12 classes of 30
    variables whose CPDAGs are cliques of 11, 11, 4 and 4 nodes (11!² · 4!² ≈ 9.2e17 DAGs each) hold
    ≈ 1.1e19, counted exactly (Python ints), as count_dags_in_mec counts them one by one."""
    from bnilp.mec import class_tail_mass

    rng = random.Random(5)
    names = [f"x{i:02d}" for i in range(30)]
    families: dict[str, dict[frozenset[str], float]] = {v: {} for v in names}
    dags = []
    for _ in range(12):
        order = rng.sample(names, len(names))
        dag, start = {}, 0
        for size in (11, 11, 4, 4):
            group = order[start:start + size]
            start += size
            for i, v in enumerate(group):
                dag[v] = frozenset(group[:i])
                mates = [u for u in group if u != v]
                families[v].update({frozenset(c): 0.0 for k in range(size) for c in itertools.combinations(mates, k)})
        dags.append(dag)
    got = class_tail_mass(_tail_of(dags, [0.0] * len(dags)), families, names, 0.0, "dags", complete_classes=True)
    want = sum(count_dags_in_mec(dag) for dag in dags)
    assert want > 2 ** 63 and got.dags == want and got.classes == len(dags)


def test_unique_rows_are_numpys_unique_rows():
    from bnilp.mec import _unique_rows

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, size=(500, 4))
    rows, inv = _unique_rows(a)
    want, want_inv = np.unique(a, axis=0, return_inverse=True)
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, want.tolist()))
    np.testing.assert_array_equal(rows[inv], a)
    assert len(_unique_rows(a[:0])[0]) == 0


def _orientation_counts_brute(g: nx.Graph) -> dict[tuple[str, str], int]:
    """#AMO(G; a → b) for every edge by listing the AMOs: orientations by a vertex order, no v-structure."""
    found = set()
    for order in itertools.permutations(sorted(g.nodes)):
        pos = {v: i for i, v in enumerate(order)}
        edges = frozenset((u, v) if pos[u] < pos[v] else (v, u) for u, v in g.edges)
        pa = collections.defaultdict(set)
        for u, v in edges:
            pa[v].add(u)
        if not any(not g.has_edge(a, b) for ps in pa.values() for a, b in itertools.combinations(ps, 2)):
            found.add(edges)
    counts = collections.Counter(e for amo in found for e in amo)
    return {(f"v{u:02d}", f"v{v:02d}"): counts[u, v] for a, b in g.edges for u, v in ((a, b), (b, a))}


def test_phi_before_counts_the_prefix_free_permutations_with_a_first():
    """_phi_before(K, R, a, b) is the number of permutations of K with no prefix (as a set) in R and a before b
    (brute force over the 120 orderings of 5 elements, nested and non-nested families, every ordered pair)."""
    from bnilp.mec import _phi_before

    k5 = frozenset("abcde")
    for family in ([], [frozenset("a")], [frozenset("a"), frozenset("ab"), frozenset("abc")],
                   [frozenset("a"), frozenset("bc"), frozenset("abd"), frozenset("cb")], [frozenset("cde")]):
        for a, b in itertools.permutations(sorted(k5), 2):
            brute = sum(1 for perm in itertools.permutations(sorted(k5))
                        if not any(frozenset(perm[:i]) in family for i in range(1, 5))
                        and perm.index(a) < perm.index(b))
            assert _phi_before(k5, family, a, b) == brute, (family, a, b)


@pytest.mark.parametrize("seed", range(24))
def test_edge_counts_by_clique_picking_equal_listing_the_amos_and_the_source_vertex_sum(seed, monkeypatch):
    """_edge_counts (Clique-Picking, here at every size: no small component handed to the source-vertex
    recursion) gives #AMO(C; a → b) for every edge as listing every AMO does (n ≤ 8) and as the source-vertex
    recursion does (n ≤ 14): random chordal graphs, dense ones and split graphs."""
    from bnilp import mec
    from bnilp.mec import _edge_counts, _edge_counts_rooted

    monkeypatch.setattr(mec, "_ROOTED_MAX_NODES", 0)

    rng = random.Random(3000 + seed)
    n = rng.randrange(4, 9) if seed < 12 else rng.randrange(9, 15)
    shape = seed % 3
    g = (_random_chordal(n, rng) if shape == 0 else _dense_chordal(n, rng.choice([0.6, 0.9]), rng) if shape == 1
         else _split_graph(max(3, n // 2), n - max(3, n // 2), rng))
    adj = {f"v{u:02d}": {f"v{w:02d}" for w in g.neighbors(u)} for u in g.nodes}
    comp = frozenset(adj)
    counts = _edge_counts(comp, adj, {})
    assert counts == _edge_counts_rooted(comp, adj, {})
    if n <= 8:
        assert counts == _orientation_counts_brute(g)


def test_edge_counts_of_dense_components_are_polynomial():
    """K_16 less the edge u — v (the source-vertex recursion took 215 s on it; Clique-Picking well under a second),
    in closed form: an AMO is a vertex order with no w after both u and v (no u → w ← v), so u or v is last; the
    2·(k−1)! such orders give distinct AMOs except that "… u v" and "… v u" give the same, so there are
    2·(k−1)! − (k−2)!; an edge u — w (w ≠ v) is oriented u → w only with v last and u before w, in (k−1)!/2 of
    them, and an edge between two others each way in half of them. And a split graph on 50 vertices: each edge's
    two counts sum to the class size."""
    from bnilp.mec import _edge_counts

    k = 16
    g = nx.complete_graph(k)
    g.remove_edge(0, 1)
    adj = {f"v{u:02d}": {f"v{w:02d}" for w in g.neighbors(u)} for u in g.nodes}
    counts = _edge_counts(frozenset(adj), adj, {})
    total = 2 * math.factorial(k - 1) - math.factorial(k - 2)
    for (a, b), n in counts.items():
        ends = {a, b} & {"v00", "v01"}
        at_u = math.factorial(k - 1) // 2
        assert n == (total // 2 if not ends else at_u if a in ends else total - at_u), (a, b)
    assert _count_amo(frozenset(adj), adj) == total
    split = _split_graph(30, 20, random.Random(7))
    adj = {f"v{u:02d}": {f"v{w:02d}" for w in split.neighbors(u)} for u in split.nodes}
    counts = _edge_counts(frozenset(adj), adj, {})
    total = _count_amo(frozenset(adj), adj)
    assert all(counts[a, b] + counts[b, a] == total for a, b in counts)


@pytest.mark.parametrize("seed", range(6))
def test_all_edge_counts_in_one_recursion_equal_the_counts_edge_by_edge(seed):
    """_edge_counts (every edge of a chain component at once) gives #AMO(C; a → b) as the per-edge
    recursion does, and #AMO(C; a → b) + #AMO(C; b → a) = #AMO(C), on the chain components of the CPDAGs
    of random DAGs (trees, cliques and other chordal graphs)."""
    from bnilp.mec import _adjacency, _chain_components, _count_amo_with_edge, _edge_counts

    rng = random.Random(seed)
    seen = 0
    for _ in range(30):
        directed, und = cpdag_edges(_random_dag(9, rng.choice((0.3, 0.5, 0.7)), rng))
        nodes = sorted({v for e in und for v in e})
        adj = _adjacency(nodes, (), und)
        for comp in _chain_components(nodes, adj):
            counts = _edge_counts(comp, adj, {})
            total = _count_amo(comp, adj)
            memo: dict = {}
            for a in comp:
                for b in adj[a] & comp:
                    assert counts[a, b] == _count_amo_with_edge(comp, adj, a, b, memo)
                    assert counts[a, b] + counts[b, a] == total
                    seen += 1
    assert seen > 50


# -- classes past 2^62 DAGs, and listing a vast class lazily ------------------------------------------------


def _five_cliques() -> tuple[dict, dict, list[str]]:
    """A DAG whose class is five disjoint complete 8-node components (8!^5 ≈ 1.07e23 DAGs, past int64), and a
    table admitting every parent set inside each group."""
    groups = [[f"g{g}_{i}" for i in range(8)] for g in range(5)]
    dag, fam = {}, {}
    for gr in groups:
        for i, v in enumerate(gr):
            dag[v] = frozenset(gr[:i])
            mates = [u for u in gr if u != v]
            fam[v] = {frozenset(c): 0.0 for k in range(8) for c in itertools.combinations(mates, k)}
    return dag, fam, sorted(dag)


def test_a_tail_class_of_more_than_2_to_62_dags_is_counted_exactly_beside_small_ones() -> None:
    """Classes past the cap are summed in int64 where their counts fit; one of 8!^5 DAGs used to stop the report
    (ValueError) though ``credible_classes`` counts it exactly in Python ints: now it goes that way too. The
    empty graph beside it (one DAG) keeps the compiled path; the counts, weights and shares add up."""
    from bnilp.averaging import class_weights, mec_table
    from bnilp.ilp.result import ClassTail
    from bnilp.mec import class_tail_mass, credible_classes

    dag, fam, names = _five_cliques()
    empty = {v: frozenset() for v in names}
    big = math.factorial(8) ** 5
    mecs = credible_classes([(0.0, dag)], fam, names, complete_classes=True)
    assert mecs[0].counted == big
    assert mec_table(mecs, class_weights(mecs, 0.0, "dags"))["n_dags"].tolist() == [big]   # no int64 overflow
    index: dict = {}
    rows = [[index.setdefault((v, g[v]), len(index)) for v in names] for g in (dag, empty)]
    keys = list(index)
    tail = ClassTail(np.array([0.0, -1.0]), np.array(rows, dtype=np.int32), [ps for _, ps in keys],
                     [v for v, _ in keys])
    got = class_tail_mass(tail, fam, names, 0.0, "dags", complete_classes=True)
    assert got.dags == big + 1
    assert got.mass == pytest.approx(big + math.exp(-1.0), rel=1e-12)
    a, b = names.index("g0_0"), names.index("g0_1")
    assert got.directed[a, b] == pytest.approx(big / 2, rel=1e-12)        # inside a complete component: ½ each way
    assert got.undirected[a, b] == pytest.approx(big, rel=1e-12)


def test_listing_a_vast_class_makes_its_first_dags_without_listing_a_component_first(monkeypatch) -> None:
    """13 triangles on one centre: one chain component of 221,184 orientations. The first DAGs of the class (what
    ``--list-dags`` with a limit, or ``count_admitted``'s guard, needs) come after a handful of orientations are
    made, not after every orientation of the component was held in a list (0.5 GB before the first DAG)."""
    import bnilp.mec as mec

    dag = {"c": frozenset()}
    for i in range(13):
        dag[f"a{i:02d}"] = frozenset({"c"})
        dag[f"b{i:02d}"] = frozenset({"c", f"a{i:02d}"})
    made = [0]
    inner = mec._amos

    def counted(comp, adj):
        for orientation in inner(comp, adj):
            made[0] += 1
            yield orientation

    monkeypatch.setattr(mec, "_amos", counted)
    first = list(itertools.islice(dags_in_mec(dag), 10))
    assert len(first) == 10 and len({frozenset(d.items()) for d in first}) == 10
    assert made[0] < 200


@pytest.mark.slow       # 5–9 s: the quick suite is at its 15-minute bound
def test_a_class_lists_its_dags_in_one_order_whatever_the_string_hash_seed(tmp_path) -> None:
    """The DAGs of a class came in an order set by string hashing (its chain components were taken from a
    set), so ``--list-dags`` listed exactly tied DAGs in another order from run to run — and under
    ``--max-networks``, another set of them, with other posteriors. Three interpreters with different
    ``PYTHONHASHSEED`` now list the same DAGs in the same order, capped or not."""
    import json
    import os
    import subprocess
    import sys

    from bnilp.simulate import sample_dag

    parents = {"a": [], "b": ["a"], "c": ["b"], "e": [], "f": ["e"], "g": ["f"], "h": [], "i": ["h"]}
    frame = sample_dag(parents, dict.fromkeys(parents, "discrete"), 1000, seed=3)   # 3 chain components
    csv = tmp_path / "d.csv"
    frame.to_csv(csv, index=False)
    script = ("import bnilp, json, sys\n"
              "out = []\n"
              "for cap in (None, 11):\n"
              "    r = bnilp.learn(sys.argv[1], bf=150, list_dags=True,\n"
              "                    **({} if cap is None else {'max_networks': cap}))\n"
              "    out.append([[sorted((v, sorted(p)) for v, p in n.parents.items()) for n in r.solution.networks],\n"
              "                sorted((e['from'], e['to'], round(e['posterior'], 12)) for e in r.report['edges'])])\n"
              "print(json.dumps(out))\n")
    seen = set()
    for seed in ("0", "1", "2"):
        run = subprocess.run([sys.executable, "-c", script, str(csv)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr
        seen.add(run.stdout)
    listed = json.loads(seen.pop())[0][0]
    assert not seen and len(listed) > 11        # the cap falls inside the list: which 11 are kept matters


@pytest.mark.parametrize("score, equivalent", [("bic", True), ("bdeu", True), ("mml", False)])
def test_a_covered_reversal_changes_the_score_only_where_the_score_is_not_equivalent(score, equivalent) -> None:
    """Every family on 4 variables scored by BIC and BDeu (score-equivalent): no covered-edge reversal moves a DAG's
    score, so the check that guards ``--enumerate mecs`` on a table of unknown equivalence never refuses a
    score-equivalent table; MML (not score-equivalent) shows it on some pair of families."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(5, n=4, N=120)
    table = score_parent_sets(make_score(score, from_dataframe(frame, discrete=list(frame.columns))), epsilon=0.0,
                              prune=False)
    assert (unequal_covered_families(table.families) is None) is equivalent
    # the mask look-ups and the frozenset ones (tables wider than a mask) judge alike, and what they name is a move
    from bnilp.mec import _unequal_covered_sets

    for seed in range(3):
        families = {v: dict(f) for v, f in table.families.items()}
        if seed:        # one family moved by 0.01: a table that is not score-equivalent any more
            v = sorted(families)[seed]
            ps = sorted(families[v], key=len)[-1]
            families[v][ps] -= 0.01
        found, by_sets = unequal_covered_families(families), _unequal_covered_sets(families, 1e-4)
        assert (found is None) is (by_sets is None) is (equivalent and not seed)
        for got in (found, by_sets):
            if got is not None:
                u, w, shared, before, after = got
                assert before == pytest.approx(families[u][shared] + families[w][shared | {u}])
                assert after == pytest.approx(families[u][shared | {w}] + families[w][shared])
                assert abs(after - before) > 1e-4


def test_classes_asked_of_a_table_that_is_not_score_equivalent_are_refused_where_nothing_said_so() -> None:
    """``--enumerate mecs`` on a file without a sidecar assumes score equivalence: here A → B (−2) and B → A (−3.5)
    are one class, and both were counted as credible at BF 1, each edge at 0.5 (a review; brute force: A → B
    alone). The covered reversal shows it: an error, as where the sidecar says the score is not equivalent; with
    DAG enumeration the answer is brute force's."""
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import parse_jaakkola

    table = parse_jaakkola("2\nA 2\n-1 0\n-0.5 1 B\nB 2\n-3 0\n-1 1 A\n")
    assert table.meta == {}
    with pytest.raises(InputError, match=r"not: reversing the covered edge B → A \(both with parents \{\}\) moves "
                                         r"a DAG's score by \+1\.5"):
        solve_table(table, epsilon=0.0, enumerate_by="mecs")
    dags = solve_table(table, epsilon=0.0, enumerate_by="dags")
    assert [n.parents for n in dags.solution.networks] == [{"A": frozenset(), "B": frozenset({"A"})}]



def test_a_table_unequal_only_in_a_late_class_is_refused_not_miscounted() -> None:
    """Five variables, every family scored 0 but a ← {b, c, d, e} (−0.5): not score-equivalent, and the unequal
    family lies in the complete DAGs' class, past the first 1,000 of the 8,632 tied classes that the check used to
    read — 28,838 DAGs were counted at BF 1 with exit 0, 100 of them 0.5 below OPT (a review). Every quadruple of
    families is judged now: refused, naming the reversal. DAG enumeration gives the closed form: all 29,281 DAGs on
    5 labelled nodes but the 543 in which a is a sink under the other four (any DAG on those four)."""
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import parse_jaakkola

    names = "abcde"
    lines = ["5"]
    for v in names:
        others = [u for u in names if u != v]
        sets = [c for k in range(5) for c in itertools.combinations(others, k)]
        lines.append(f"{v} {len(sets)}")
        lines += [f"{-0.5 if v == 'a' and len(c) == 4 else 0} {len(c)} {' '.join(c)}".rstrip() for c in sets]
    table = parse_jaakkola("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"not: reversing the covered edge [b-e] → a \(both with parents "
                                         r"\{[b-e, ]+\}\) moves a DAG's score by \+0\.5"):
        solve_table(table, epsilon=0.0, enumerate_by="mecs")
    dags = solve_table(table, epsilon=0.0, enumerate_by="dags")
    assert len(dags.solution.networks) == 29_281 - 543 and dags.solution.complete


def test_a_claim_of_equivalence_read_unvouched_stays_unvouched_when_the_table_is_written_again(tmp_path) -> None:
    """A PSS header's ``score_type=BIC`` is a claim nothing checked; writing the table again (Jaakkola or PSS) put a
    hash on its new sidecar, which then vouched for it: B → A (−19) was listed with A → B (−15) as one class, two
    DAGs credible at BF 1 (a review; brute force: one). The new sidecar says ``record_unvouched`` and the covered
    reversal refuses the classes through any number of rewrites; the message names what chose classes."""
    from bnilp.pipeline import equivalence_vouched, solve_table
    from bnilp.scorefile import read_score_file, write_score_file

    source = tmp_path / "neq.pss"
    source.write_text("META score_type=BIC\nVAR A\n-5 B\n-10\nVAR B\n-9 A\n-10\n")
    table = read_score_file(source)
    for name in ("once.scores", "twice.pss", "thrice.scores"):
        write_score_file(table, tmp_path / name)
        table = read_score_file(tmp_path / name)
        assert table.meta["record_unvouched"] is True and not equivalence_vouched(table.meta)
        with pytest.raises(InputError, match=r"^class enumeration \(auto: .*not: reversing the covered edge B → A"):
            solve_table(table, epsilon=0.0)
        assert len(solve_table(table, epsilon=0.0, enumerate_by="dags").solution.networks) == 1


@pytest.mark.parametrize("decimals", [2, 3, 4, None])
def test_a_score_equivalent_table_written_with_few_decimals_is_not_refused_as_not_equivalent(decimals) -> None:
    """Rounding four families to d decimals moves a covered reversal by up to 2·10⁻ᵈ: BIC score files written with
    2–4 decimals and no sidecar were refused under ``enumerate_by="mecs"`` as not score-equivalent (a review:
    zoo, hepatitis, wine). The slack follows the decimals the table is written with (:func:`rounding_slack`); MML,
    not score-equivalent, is still refused at 4 decimals."""
    from bnilp.data import from_dataframe
    from bnilp.parentsets import score_parent_sets
    from bnilp.pipeline import solve_table
    from bnilp.scorefile import ScoreTable
    from bnilp.scores import make_score
    from tests.conftest import random_discrete_frame

    frame = random_discrete_frame(11, n=5, N=400)
    data = from_dataframe(frame, discrete=list(frame.columns))

    def written(score: str) -> ScoreTable:
        table = score_parent_sets(make_score(score, data), epsilon=math.log(150))
        families = {v: {ps: (s if decimals is None else round(s, decimals)) for ps, s in f.items()}
                    for v, f in table.families.items()}
        return ScoreTable(list(table.variables), families)          # no meta: equivalence unknown, assumed

    bic = written("bic")
    assert rounding_slack(bic.families) == (0.0 if decimals is None else 2.5 * 10.0 ** -decimals)
    assert solve_table(bic, epsilon=math.log(150), enumerate_by="mecs").complete
    if decimals in (4, None):
        with pytest.raises(InputError, match="needs a score-equivalent table, and this one is not"):
            solve_table(written("mml"), epsilon=math.log(150), enumerate_by="mecs")


def test_network_items_makes_one_frozenset_per_shared_parent_list_and_reads_fresh_lists_right() -> None:
    """The solver's JSON form (``SolveResult.to_dict``) holds each distinct parent list once; ``network_items``
    made a frozenset per network and variable from it (12 KB a DAG of 56 variables in the report's peak). Now
    equal lists give one shared frozenset — and networks made on the fly, whose lists are dropped as they go or
    refilled in place, are still read as their own parents."""
    a, b, empty = ["u"], ["u", "v"], []
    shared = [{"score": -1.0 * i, "parents": {"u": empty, "v": a, "w": b}} for i in range(50)]
    items = network_items(shared)
    assert all(p == {"u": frozenset(), "v": frozenset("u"), "w": frozenset("uv")} for _, p in items)
    assert len({id(p["w"]) for _, p in items}) == 1

    rng = np.random.default_rng(3)
    fresh = [{"u": [], "v": sorted(rng.choice(["u", "w"], size=int(rng.integers(0, 3)), replace=False).tolist()),
              "w": sorted(rng.choice(["u"], size=int(rng.integers(0, 2)), replace=False).tolist())}
             for _ in range(300)]

    def on_the_fly():               # a new dict of new lists for each network, dropped after it is read
        for i, ps in enumerate(fresh):
            yield {"score": -float(i), "parents": {v: list(p) for v, p in ps.items()}}

    assert [p for _, p in network_items(on_the_fly())] == [{v: frozenset(p) for v, p in ps.items()} for ps in fresh]

    def refilled():                 # one list refilled for each network (a review: read as its first contents)
        buf: list[str] = []
        for score, parents_of_b in ((-1.0, []), (-2.0, ["a"])):
            buf[:] = parents_of_b
            yield score, {"a": [], "b": buf}

    assert [p["b"] for _, p in network_items(refilled())] == [frozenset(), frozenset("a")]
    assert len(group_by_mec(refilled())) == 2


def test_a_tree_s_sides_are_counted_in_one_pass_as_edge_by_edge() -> None:
    """A tree component's edge counts #AMO(a → b) are the sizes of a's side of a — b (the root lies there). They
    were one search of the tree an edge (O(k²): 25 s for 1,872 classes of a 300-variable set, a review); one pass
    of subtree sizes gives the same, on random trees of 1–60 nodes against the edge-by-edge search."""
    from bnilp.mec import _side, _tree_sides

    rng = np.random.default_rng(5)
    for k in list(range(1, 12)) + [30, 60]:
        for _ in range(5):
            labels = [f"n{i}" for i in rng.permutation(k)]
            nbrs: dict = {x: set() for x in labels}
            for i in range(1, k):
                j = int(rng.integers(0, i))
                nbrs[labels[i]].add(labels[j])
                nbrs[labels[j]].add(labels[i])
            assert _tree_sides(nbrs) == {(a, b): _side(nbrs, a, b) for a in nbrs for b in nbrs[a]}


@pytest.mark.parametrize("seed", range(6))
def test_admitted_dags_under_knowledge_and_a_partial_table_are_counted_component_by_component(seed):
    """A class's DAGs that a table missing some parent sets and random background knowledge (arrows, adjacencies,
    tiers; sometimes an ancestor statement, which lists the class) both admit: count and P(u → v) equal to
    listing every consistent extension and keeping those whose every family is in the table and that satisfy
    the knowledge as the oracle reads it, on random classes of 2–9 nodes (few v-structures: large chain
    components); and without a table (knowledge_class) the same with every family in."""
    from bnilp import Knowledge
    from bnilp.mec import _list_admitted, knowledge_class
    from tests.oracles import satisfies_knowledge

    rng = random.Random(9300 + seed)
    checked = 0
    for _ in range(60):
        n = rng.randrange(2, 10)
        dag = _random_dag(n, rng.choice([0.3, 0.5, 0.8]), rng)
        if len(cpdag_edges(dag)[1]) > 14:        # the oracle tries 2^(undirected edges) orientations
            continue
        nodes = sorted(dag)
        members = _consistent_extensions(dag)
        families = {v: {m[v] for m in members} for v in nodes}
        for v in nodes:                          # the table lacks some of the parent sets the class uses
            for ps in sorted(families[v], key=sorted):
                if len(families[v]) > 1 and rng.random() < 0.15:
                    families[v].discard(ps)
        pairs = [(a, b) for a in nodes for b in nodes if a != b]
        statements = {field: tuple(rng.sample(pairs, rng.choice([0, 0, 1, 2])))
                      for field in ("forbidden", "required", "forbidden_adjacent", "required_adjacent")}
        if rng.random() < 0.2:
            statements["forbidden_ancestors"] = (rng.choice(pairs),)
        order = nodes[:]
        rng.shuffle(order)
        tiers = (tuple(order[:n // 2]), tuple(order[n // 2:])) if rng.random() < 0.3 else ()
        try:
            k = Knowledge(**statements, tiers=tiers)
        except InputError:
            continue
        for table in (families, None):
            kept = [m for m in members
                    if (table is None or all(m[v] in table[v] for v in nodes)) and satisfies_knowledge(m, k)]
            want = {(p, c): sum(p in m[c] for m in kept) / len(kept) for c in nodes for p in nodes
                    if any(p in m[c] for m in kept)}
            got = (knowledge_class(dag, nodes, k) if table is None
                   else _list_admitted(dag, table, nodes, k, MAX_CLASS_LISTED))
            assert got[0] == len(kept)
            assert got[1] == pytest.approx(want, abs=1e-12)
            checked += bool(kept)
    assert checked >= 15, checked


def test_a_partial_table_with_knowledge_counts_separate_pairs_without_listing_their_product():
    """21 separate pairs x_i — y_i (one class of 2^21 DAGs, 2 a component), a table without y_0's parent x_0 and
    a forbidden arrow x_1 → y_1: 2^19 admitted DAGs, counted per component (listing the class was refused past
    MAX_CLASS_LISTED = 10^6 DAGs), x_0 and x_1 each the child in every one."""
    from bnilp import Knowledge
    from bnilp.mec import _list_admitted

    dag = {}
    for i in range(21):
        dag[f"x{i:02d}"], dag[f"y{i:02d}"] = frozenset(), frozenset({f"x{i:02d}"})
    nodes = sorted(dag)
    families = {v: {frozenset(), frozenset({("y" if v[0] == "x" else "x") + v[1:]})} for v in nodes}
    families["y00"] = {frozenset()}
    count, shares = _list_admitted(dag, families, nodes, Knowledge(forbidden=(("x01", "y01"),)), MAX_CLASS_LISTED)
    assert count == 2 ** 19 > MAX_CLASS_LISTED / 2
    assert shares[("y00", "x00")] == shares[("y01", "x01")] == 1.0 and shares[("x02", "y02")] == 0.5
    assert ("x00", "y00") not in shares


def test_a_cut_component_too_large_to_list_is_an_error_naming_it_and_a_whole_one_is_counted_by_shape():
    """A class of a 4-clique (24 orientations) beside a separate pair: with one of the clique's parent sets
    missing from the table its component must be listed, refused past ``max_listed`` = 5 with the component's
    size named; with the pair's parent set missing instead the clique is counted by shape (24, no listing) and
    the pair listed (1 of 2)."""
    from bnilp.mec import credible_classes

    clique = {"a": frozenset(), "b": frozenset("a"), "c": frozenset("ab"), "d": frozenset("abc")}
    dag = {**clique, "x": frozenset(), "y": frozenset("x")}
    nodes = sorted(dag)
    families = {v: {frozenset(s) for r in range(4) for s in itertools.combinations(sorted(set("abcd") - {v}), r)}
                for v in "abcd"} | {"x": {frozenset(), frozenset("y")}, "y": {frozenset(), frozenset("x")}}
    cut_clique = {**families, "d": families["d"] - {frozenset("abc")}}
    with pytest.raises(ValueError, match="class 1 has a chain component of 24 orientations, more than 5"):
        credible_classes([(0.0, dag)], cut_clique, nodes, complete_classes=False, max_listed=5)
    cut_pair = {**families, "y": {frozenset()}}
    (m,) = credible_classes([(0.0, dag)], cut_pair, nodes, complete_classes=False, max_listed=5)
    assert (m.class_size, m.counted) == (48, 24)
    assert m.shares[("y", "x")] == 1.0 and m.shares[("a", "b")] == 0.5


def test_the_chordality_check_agrees_with_networkx_on_trees_and_cyclic_graphs() -> None:
    """``_is_chordal`` takes a connected component of |C| − 1 edges (a tree) as chordal at once and searches the
    others: on 300 random connected graphs of 3–8 nodes (trees, and trees with extra edges) it agrees with
    networkx."""
    from bnilp.mec import _is_chordal

    rng = random.Random(4)
    trees = 0
    for _ in range(300):
        k = rng.randint(3, 8)
        names = [f"n{i}" for i in range(k)]
        g = nx.Graph([(names[i], names[rng.randrange(i)]) for i in range(1, k)])     # a random tree
        for _ in range(rng.choice([0, 0, 1, 2, 3])):
            a, b = rng.sample(names, 2)
            g.add_edge(a, b)
        trees += g.number_of_edges() == k - 1
        adj = {v: set(g[v]) for v in g}
        assert _is_chordal(frozenset(names), adj) == nx.is_chordal(g)
    assert 50 < trees < 300


def _random_branching(rng: random.Random, n: int) -> dict[str, frozenset[str]]:
    """A random DAG of at most one parent a node on n nodes (a forest, each tree rooted somewhere)."""
    names = [f"v{i}" for i in range(n)]
    parents = {v: frozenset() for v in names}
    for i in range(1, n):
        if rng.random() < 0.8:                 # attach to an earlier node, then re-root by relabelling below
            parents[names[i]] = frozenset({names[rng.randrange(i)]})
    order = names[:]
    rng.shuffle(order)
    relabel = dict(zip(names, order, strict=True))
    return {relabel[v]: frozenset(relabel[p] for p in ps) for v, ps in parents.items()}


def _rooting_families(parents: dict[str, frozenset[str]]) -> dict[str, dict[frozenset[str], float]]:
    """Each node's empty set and each neighbour alone: every rooting of the forest admitted."""
    fams = {v: {frozenset(): 0.0} for v in parents}
    for v, ps in parents.items():
        for u in ps:
            fams[v][frozenset({u})] = 0.0
            fams[u][frozenset({v})] = 0.0
    return fams


@pytest.mark.parametrize("seed", range(6))
def test_a_forest_class_is_counted_in_closed_form_as_the_general_count_does(seed) -> None:
    """:func:`forest_class` (∏ |T| rootings, P(u → v) = |T_u|/|T|) against :func:`class_counts` and
    :func:`admitted_components` on random branchings of 1–90 nodes; None where the table misses a rooting's
    family or the DAG is no branching, which the general count then handles."""
    from bnilp.mec import _in_table, admitted_components, forest_class

    rng = random.Random(seed)
    for _ in range(25):
        n = rng.randint(1, 90)
        dag = _random_branching(rng, n)
        fams = _rooting_families(dag)
        got = forest_class(dag, fams)
        assert got is not None
        size, shares = class_counts(dag)
        assert got[0] == cpdag_edges(dag) and got[1] == size
        assert got[2].keys() == shares.keys() and all(math.isclose(got[2][e], shares[e]) for e in shares)
        edges = [(u, v) for v, ps in dag.items() for u in ps]
        if edges:                              # a rooting's family missing: not this shortcut's to count
            u, v = rng.choice(edges)
            del fams[u][frozenset({v})]
            assert forest_class(dag, fams) is None
            assert admitted_components(dag, list(dag), _in_table(fams))[0] < size
        lone = rng.choice(list(dag))
        fams = _rooting_families(dag)
        del fams[lone][frozenset()]
        assert forest_class(dag, fams) is None
    collider = {"a": frozenset(), "b": frozenset(), "c": frozenset({"a", "b"})}
    assert forest_class(collider, {"a": {frozenset(): 0.0}, "b": {frozenset(): 0.0},
                                   "c": {frozenset({"a", "b"}): 0.0, frozenset(): 0.0}}) is None


def test_credible_classes_of_wide_forests_match_the_general_count(monkeypatch) -> None:
    """Past the compiled masks (62 variables) a branching's class takes the closed form: the same CPDAG, size,
    admitted count and shares as the general count, on random 70–120-node forests, complete or not."""
    import bnilp.mec as mec

    rng = random.Random(7)
    dags = [_random_branching(rng, rng.randint(70, 120)) for _ in range(6)]
    for dag in dags:
        fams = _rooting_families(dag)
        nodes = sorted(dag)
        for complete in (True, False):
            fast = mec.credible_classes([(0.0, dag)], fams, nodes, complete)[0]
            with monkeypatch.context() as m:
                m.setattr(mec, "forest_class", lambda parents, families: None)
                slow = mec.credible_classes([(0.0, dag)], fams, nodes, complete)[0]
            assert (fast.cpdag, fast.class_size, fast.counted) == (slow.cpdag, slow.class_size, slow.counted)
            assert fast.shares.keys() == slow.shares.keys()
            assert all(math.isclose(fast.shares[e], slow.shares[e]) for e in slow.shares)


@pytest.mark.parametrize("seed", range(5))
def test_a_tree_components_admitted_rootings_are_counted_without_listing_them(seed) -> None:
    """A chain component that is a tree is counted by rerooting (``_tree_admitted``): the admitted DAGs and the
    shares over them equal brute force over every DAG of the class (:func:`dags_in_mec`), on random forests with
    and without two common directed parents, the table missing random families (a rooting's, a root's)."""
    from bnilp.mec import _in_table, admitted_components

    rng = random.Random(seed)
    for _ in range(30):
        dag = _random_branching(rng, rng.randint(2, 7))
        if rng.random() < 0.5:                  # x, y → every node: each tree a chain component with those parents
            dag = {v: ps | {"x", "y"} for v, ps in dag.items()} | {"x": frozenset(), "y": frozenset()}
        nodes = sorted(dag)
        members = list(dags_in_mec(dag, nodes))
        fams = {v: set() for v in nodes}
        for g in members:
            for v, ps in g.items():
                fams[v].add(frozenset(ps))
        table = {v: {ps: 0.0 for ps in sets if rng.random() < 0.8 or v in "xy"} for v, sets in fams.items()}
        admitted = [g for g in members if all(frozenset(g[v]) in table[v] for v in nodes)]
        got, shares = admitted_components(cpdag_edges(dag), nodes, _in_table(table))
        assert got == len(admitted)
        arrows = collections.Counter((u, v) for g in admitted for v, ps in g.items() for u in ps)
        assert shares.keys() == arrows.keys()
        assert all(math.isclose(shares[e], arrows[e] / len(admitted)) for e in arrows)


@pytest.mark.parametrize("seed", range(4))
def test_classes_counted_through_one_memo_equal_each_class_counted_alone(seed) -> None:
    """Under background knowledge ``credible_classes`` counts each chain component once per filter (the knowledge;
    the table and the knowledge) over all the classes it is given — a listing's classes share most components
    (a one-parent listing's forests differ by an edge or two): on random forests and denser DAGs over 9 nodes,
    each the last one with an edge moved, under one knowledge and a table lacking random families, every class's
    counts, shares and PDAG equal its own counted alone (no memo) and brute force over its DAGs, and the memo
    spares components."""
    from bnilp import Knowledge, mec
    from tests.oracles import satisfies_knowledge

    rng = random.Random(4400 + seed)
    names = [f"v{i}" for i in range(9)]
    order = rng.sample(names, 9)                        # the tiers' order: thirds of it, arrows drawn along it
    sizes = [0, 1] if seed % 2 else [0, 1, 1, 2]        # forests, or denser

    def drawn(v: str) -> frozenset[str]:
        older = order[:order.index(v)]
        return frozenset(rng.sample(older, min(len(older), rng.choice(sizes))))

    dags = [{v: drawn(v) for v in names}]
    while len(dags) < 40:                               # a neighbour of the last: one node's parents redrawn
        v = rng.choice(names)
        dags.append({**dags[-1], v: drawn(v)})
    keys = {mec_key(d) for d in dags}
    dags = [d for i, d in enumerate(dags) if mec_key(d) not in {mec_key(e) for e in dags[:i]}]
    assert len(dags) == len(keys)
    members = {i: _consistent_extensions(d) for i, d in enumerate(dags)}
    fams = {v: {m[v] for ms in members.values() for m in ms} for v in names}
    table = {v: {ps: 0.0 for ps in sorted(sets, key=sorted) if not ps or rng.random() < 0.85}
             for v, sets in fams.items()}
    k = Knowledge(tiers=(tuple(order[:3]), tuple(order[3:6]), tuple(order[6:])), forbidden=((order[7], order[6]),))
    calls = collections.Counter()
    real = mec._component_admitted

    def counted(*args):
        calls["components"] += 1
        return real(*args)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(mec, "_component_admitted", counted)
        together = mec.credible_classes([(0.0, d) for d in dags], table, names, False, knowledge=k)
        once = calls["components"]
        alone = [mec.credible_classes([(0.0, d)], table, names, False, knowledge=k)[0] for d in dags]
    assert once < calls["components"] - once        # the memo spared some components
    # a DAG listing's report (``summarise``) counts its classes through one memo too: class sizes as brute force
    from bnilp.report import summarise
    listed = [(0.0, g) for i in members for g in members[i] if satisfies_knowledge(g, k)]
    report = summarise({"networks": listed, "optimum": 0.0}, knowledge=k, variables=names)
    want = {i: sum(satisfies_knowledge(g, k) for g in members[i]) for i in members}
    assert sorted(c["class_size"] for c in report["mecs"]) == sorted(w for w in want.values() if w)
    for i, (a, b) in enumerate(zip(together, alone, strict=True)):
        assert (a.counted, a.shares, a.class_size, a.pdag) == (b.counted, b.shares, b.class_size, b.pdag)
        for in_table, size, shares in ((True, a.counted, a.shares), (False, *a.knowledge_class)):
            kept = [g for g in members[i]
                    if (not in_table or all(g[v] in table[v] for v in names)) and satisfies_knowledge(g, k)]
            assert size == len(kept)
            arrows = collections.Counter((u, v) for g in kept for v, ps in g.items() for u in ps)
            assert shares.keys() == arrows.keys()
            assert all(math.isclose(shares[e], arrows[e] / len(kept)) for e in arrows)



def test_a_memo_tells_apart_one_component_under_other_directed_parents() -> None:
    """The chain a — b — c alone, and under x → {a, b, c} ← y (colliders at each: the chain stays undirected
    with two compelled parents a node): the same undirected edges, other families — the table lacks c's family
    {x, y, b}, so the second class keeps only the rooting at c (1 DAG of 3) where the first keeps all 3."""
    from bnilp import Knowledge, mec

    alone = {"a": frozenset(), "b": frozenset("a"), "c": frozenset("b"), "x": frozenset(), "y": frozenset()}
    under = {v: ps | {"x", "y"} if v in "abc" else ps for v, ps in alone.items()}
    names = sorted(alone)
    table = {v: {ps: 0.0 for g in (alone, under) for ps in (g[v], g[v] - set("abc"), g[v] | set("abc") - {v})}
             for v in names}
    for v in "abc":                                   # every rooting's families, less c's {x, y, b}
        table[v].update({ps | frozenset(w) - {v}: 0.0 for ps in (frozenset(), frozenset("xy")) for w in "abc"})
    del table["c"][frozenset({"x", "y", "b"})]
    k = Knowledge(tiers=(("x", "y"), ("a", "b", "c")))
    got = mec.credible_classes([(0.0, alone), (0.0, under)], table, names, False, knowledge=k)
    assert [m.counted for m in got] == [3, 1]
    assert [m.class_size for m in got] == [3, 3]


@pytest.mark.parametrize(("directed", "undirected", "oriented"), [
    ({("a", "b")}, {("b", "c")}, ("b", "c")),                                           # R1: a → b — c, a ≁ c
    ({("a", "c"), ("c", "b")}, {("a", "b")}, ("a", "b")),                               # R2: a → c → b, a — b
    ({("c", "b"), ("d", "b")}, {("a", "b"), ("a", "c"), ("a", "d")}, ("a", "b")),       # R3: a — c → b, a — d → b
    ({("c", "d"), ("d", "y")}, {("x", "y"), ("x", "c"), ("x", "d")}, ("x", "y")),       # R4: x ~ c → d → y, x ~ d
])
def test_meek_closure_orients_each_rules_textbook_edge_and_nothing_else(directed, undirected, oriented):
    """Meek (1995), rules R1–R4, each in the configuration that defines it: the closure orients exactly that edge.
    R4 never fires from a DAG's v-structures (nor in the counter's rooted sub-problems, by random checks), so only
    this test would notice it gone (a mutation test)."""
    from bnilp.mec import _adjacency, meek_closure

    nodes = sorted({x for e in (*directed, *undirected) for x in e})
    und = {frozenset(e) for e in undirected}
    arrows = set(directed)
    meek_closure(arrows, und, _adjacency(nodes, arrows, und))
    assert arrows == set(directed) | {oriented}
    assert und == {frozenset(e) for e in undirected} - {frozenset(oriented)}
