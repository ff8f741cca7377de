"""Markov equivalence classes (MECs) of DAGs: keys, CPDAGs, class sizes, grouping.

A network is a parent map ``parents: dict[str, frozenset[str]]`` (every variable a key).

Equivalence (Verma & Pearl 1990): two DAGs are Markov equivalent iff they have the same skeleton
and the same v-structures a → c ← b with a, b non-adjacent. :func:`mec_key` returns exactly that
pair, so ``mec_key(g) == mec_key(h)`` ⇔ g ≡ h.

CPDAG (essential graph; Chickering 1995, Meek 1995): start from the skeleton, orient the
v-structures, then close under Meek's rules

- R1: a → b — c, a, c non-adjacent            ⇒ b → c
- R2: a → c → b and a — b                     ⇒ a → b
- R3: a — c → b, a — d → b, c, d non-adjacent ⇒ a → b
- R4: a — b, a ~ c → d → b, a ~ d, c, b non-adjacent ⇒ a → b   (never fires from a DAG's
  v-structures alone; kept for the sub-problems of the counter below, which add background
  orientations — though in random checks, chordal components of 4–8 nodes rooted at every
  vertex and clique, it never fired there either)

until nothing changes (:func:`cpdag_edges_meek`). :func:`cpdag_edges` computes the same graph by
Chickering's (1995) edge labelling (compelled / reversible edges), which needs one topological
sort and one pass over the edges. The undirected edges are exactly the edges whose orientation
differs between members of the class (Meek 1995; both routes are checked against brute force).
Representation: :func:`cpdag_edges` gives ``(directed: set[(u, v)], undirected: set[frozenset])``;
:func:`cpdag` gives a ``networkx.DiGraph`` in which an undirected edge u — v is stored as both
u → v and v → u, every edge carrying the attribute ``undirected`` (bool).

Class size: the undirected part of a CPDAG is a disjoint union of chordal chain components and
the number of DAGs in the class is the product over components of their numbers of acyclic
moral orientations (AMOs) (Andersson, Madigan & Perlman 1997). Each component is counted by
Clique-Picking (Wienöbst, Bannach & Liśkiewicz 2021), polynomial in the component size: for a
clique tree T of the component G rooted anywhere,

    #AMO(G) = Σ_{v ∈ T} φ(K_v, FP(v, T)) · Π_{H ∈ C_G(K_v)} #AMO(H)

where K_v is the clique at tree node v, FP(v, T) the separators K_x ∩ K_y on the tree path from
the root to v, φ(K, FP) the number of permutations of K with no prefix (as a set) in FP, and
C_G(K) the chain components left after putting K first and closing under Meek's rules. Counts
are cached by a component's edge set; cliques count k! and trees k directly. The tests check it
against brute force and against the source-vertex sum of He, Jia & Yu (2015),
#AMO(G) = Σ_v Π_{C ∈ chain components of G^(v)} #AMO(C), which also drives :func:`dags_in_mec`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx
import numpy as np

from bnilp.compiled import njit
from bnilp.errors import InputError, UnsoundTableError
from bnilp.graphs import d_separated, dag_order

Parents = dict[str, frozenset[str]]
Edge = tuple[str, str]
MecKey = tuple[frozenset[frozenset[str]], frozenset[tuple[str, str, str]]]
CpdagEdges = tuple[set[Edge], set[frozenset[str]]]
FastKey = tuple[frozenset[Edge], frozenset[tuple[str, str, str]]]


def as_parents(parents: Mapping[str, Iterable[str]]) -> Parents:
    """A parent map with frozenset values (accepts lists, sets, tuples); no copy if it is one."""
    if type(parents) is dict and all(type(p) is frozenset for p in parents.values()):
        return parents
    try:
        return {v: frozenset(p) for v, p in parents.items()}
    except (AttributeError, TypeError):     # None, a list, a number among the parents: one error naming it (a review)
        raise InputError(f"parents must map each variable to its parent names (a dict), got "
                         f"{type(parents).__name__}" + (" with a value that is no collection of names"
                                                        if isinstance(parents, Mapping) else "")) from None


def network_items(networks: Iterable[Any]) -> list[tuple[float, Parents]]:
    """``[(score, parents), ...]`` from tuples, objects with ``.score``/``.parents``, or dicts.

    Dicts are the solver's JSON form ``{"score": s, "parents": {var: [..]}}``.
    """
    out: list[tuple[float, Parents]] = []
    shared: dict[tuple[str, ...], frozenset[str]] = {}     # equal parent lists: one frozenset
    for k, net in enumerate(networks):
        try:
            if isinstance(net, tuple):
                score, parents = net
            elif isinstance(net, Mapping):
                score, parents = net["score"], net["parents"]
            else:
                score, parents = net.score, net.parents
        except (KeyError, AttributeError, ValueError, TypeError):    # a KeyError 'score' deep inside (a review)
            raise InputError(f"networks: network {k + 1} is no (score, parents) pair, dict with 'score' and 'parents' "
                             f"or object with .score and .parents (got {type(net).__name__})") from None
        if type(parents) is dict and not all(type(p) is frozenset for p in parents.values()):
            # the solver's JSON form holds each distinct parent list once (SolveResult.to_dict): a frozenset
            # made per network and variable was 12 KB a DAG of 56 variables in the report's peak
            parents = {v: p if type(p) is frozenset else _shared_set(shared, p) for v, p in parents.items()}
        out.append((float(score), as_parents(parents)))
    return out


def _shared_set(shared: dict[tuple[str, ...], frozenset[str]], p: Iterable[str]) -> frozenset[str]:
    """``frozenset(p)``, made once for each distinct parent list ``p`` (keyed by its items, not its identity: a
    list refilled between networks was read as its first contents — a review)."""
    key = tuple(p)
    got = shared.get(key)
    if got is None:
        got = shared[key] = frozenset(key)
    return got


def skeleton(parents: Mapping[str, Iterable[str]]) -> frozenset[frozenset[str]]:
    """Unordered adjacent pairs."""
    return frozenset(frozenset((p, v)) for v, ps in parents.items() for p in ps)


def v_structures(parents: Mapping[str, Iterable[str]]) -> frozenset[tuple[str, str, str]]:
    """Every (a, c, b) with a → c ← b, a < b, a and b non-adjacent."""
    pa = as_parents(parents)
    out = set()
    for c, ps in pa.items():
        if len(ps) < 2:
            continue
        for a, b in itertools.combinations(sorted(ps), 2):
            if a not in pa[b] and b not in pa[a]:
                out.add((a, c, b))
    return frozenset(out)


def _fast_key(parents: Mapping[str, Iterable[str]]) -> FastKey:
    """Same information as :func:`mec_key` with ordered tuples for the skeleton (faster)."""
    skel = set()
    for c, ps in parents.items():
        for p in ps:
            skel.add((p, c) if p < c else (c, p))
    vs = []
    for c, ps in parents.items():
        if len(ps) > 1:
            for a, b in itertools.combinations(sorted(ps), 2):
                if (a, b) not in skel:
                    vs.append((a, c, b))
    return frozenset(skel), frozenset(vs)


def mec_key(parents: Mapping[str, Iterable[str]]) -> MecKey:
    """(skeleton, v-structures): equal keys ⇔ Markov equivalent (Verma & Pearl 1990)."""
    return skeleton(parents), v_structures(parents)


def _adjacency(nodes: Iterable[str], directed: Iterable[Edge],
               undirected: Iterable[frozenset[str]]) -> dict[str, set[str]]:
    adj: dict[str, set[str]] = {v: set() for v in nodes}
    for u, v in directed:
        adj[u].add(v)
        adj[v].add(u)
    for e in undirected:
        u, v = tuple(e)
        adj[u].add(v)
        adj[v].add(u)
    return adj


def _forced(x: str, y: str, directed: set[Edge], undirected: set[frozenset[str]],
            adj: dict[str, set[str]]) -> bool:
    """Whether one of Meek's rules R1–R4 orients the undirected edge x — y as x → y."""
    ax, ay = adj[x], adj[y]
    for a in ax:
        if (a, x) in directed and a not in ay:
            return True  # R1: a → x — y, a, y non-adjacent
    common = ax & ay
    into_y = [z for z in common if (z, y) in directed]
    for z in into_y:
        if (x, z) in directed:
            return True  # R2: x → z → y
    r3 = [c for c in into_y if frozenset((x, c)) in undirected]
    for c, d in itertools.combinations(r3, 2):
        if d not in adj[c]:
            return True  # R3: x — c → y, x — d → y, c, d non-adjacent
    for d in into_y:
        for c in ax & adj[d]:
            if (c, d) in directed and c not in ay and c != y:
                return True  # R4: x ~ c → d → y, x ~ d, c, y non-adjacent
    return False


def meek_closure(directed: set[Edge], undirected: set[frozenset[str]],
                 adj: dict[str, set[str]]) -> None:
    """Apply Meek's rules R1–R4 in place until no undirected edge can be oriented."""
    changed = True
    while changed:
        changed = False
        for e in list(undirected):
            if e not in undirected:
                continue
            x, y = tuple(e)
            for a, b in ((x, y), (y, x)):
                if _forced(a, b, directed, undirected, adj):
                    undirected.discard(e)
                    directed.add((a, b))
                    changed = True
                    break


def cpdag_edges(parents: Mapping[str, Iterable[str]]) -> CpdagEdges:
    """The CPDAG of a DAG as ``(directed {(u, v)}, undirected {frozenset({u, v})})``.

    Chickering's (1995) edge labelling: edges are visited by child in topological order and, for
    one child, by parent in reverse topological order; an edge is compelled (directed in the
    CPDAG) or reversible (undirected). Equal to the Meek closure of the v-structures.
    """
    pa = as_parents(parents)
    order = dag_order(pa)
    pos = {v: i for i, v in enumerate(order)}
    compelled: dict[Edge, bool] = {}
    for y in order:
        pa_y = pa[y]
        for x in sorted(pa_y, key=pos.__getitem__, reverse=True):
            if (x, y) in compelled:
                continue
            done = False
            for w in pa[x]:
                if compelled[(w, x)]:
                    if w not in pa_y:
                        for z in pa_y:
                            compelled[(z, y)] = True
                        done = True
                        break
                    compelled[(w, y)] = True
            if done:
                continue
            label = any(z != x and z not in pa[x] for z in pa_y)
            for z in pa_y:
                compelled.setdefault((z, y), label)
    directed = {e for e, c in compelled.items() if c}
    undirected = {frozenset(e) for e, c in compelled.items() if not c}
    return directed, undirected


def cpdag_edges_meek(parents: Mapping[str, Iterable[str]]) -> CpdagEdges:
    """The same CPDAG by orienting the v-structures and closing under Meek's rules (slower)."""
    pa = as_parents(parents)
    directed: set[Edge] = set()
    for a, c, b in v_structures(pa):
        directed.add((a, c))
        directed.add((b, c))
    undirected = {e for e in skeleton(pa) if not any((u, v) in directed for u, v in _pairs(e))}
    adj = _adjacency(pa, directed, undirected)
    meek_closure(directed, undirected, adj)
    return directed, undirected


def _pairs(e: frozenset[str]) -> tuple[Edge, Edge]:
    u, v = tuple(e)
    return (u, v), (v, u)


def cpdag(parents: Mapping[str, Iterable[str]]) -> nx.DiGraph:
    """The CPDAG as a DiGraph: u — v is stored as u → v and v → u; attribute ``undirected``."""
    directed, undirected = cpdag_edges(parents)
    g = nx.DiGraph()
    g.add_nodes_from(parents)
    g.add_edges_from(directed, undirected=False)
    for e in undirected:
        g.add_edges_from(_pairs(e), undirected=True)
    return g


def _undirected_part(obj: Any) -> tuple[list[str], set[frozenset[str]]]:
    """Nodes and undirected edges of a CPDAG given as parents, edge sets, a DiGraph or a MEC."""
    if isinstance(obj, MEC):
        return obj.nodes, obj.cpdag[1]
    if isinstance(obj, nx.DiGraph):
        und = {frozenset((u, v)) for u, v in obj.edges if obj.has_edge(v, u)}
        return list(obj.nodes), und
    if isinstance(obj, Mapping):
        _, und = cpdag_edges(obj)
        return list(obj), und
    try:
        _, und = obj
        und = {frozenset(e) for e in und}
    except (TypeError, ValueError):
        raise InputError(f"expected a DAG's parent map, a CPDAG as (directed, undirected) edge sets, a CPDAG DiGraph "
                         f"or a MEC, got {type(obj).__name__}") from None
    nodes = sorted({v for e in und for v in e})
    return nodes, und


def _chain_components(nodes: Iterable[str], adj: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """Connected components of the undirected graph ``adj`` restricted to ``nodes``, ordered by their least
    name: the order does not depend on string hashing (it orders the product of the components' orientations,
    so the DAGs a class lists come in one order in every run, ``PYTHONHASHSEED`` whatever it is)."""
    todo = set(nodes)
    out = []
    for start in sorted(todo):
        if start not in todo:
            continue
        todo.discard(start)
        comp = {start}
        stack = [start]
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if y in todo:
                    todo.discard(y)
                    comp.add(y)
                    stack.append(y)
        out.append(frozenset(comp))
    return out


def _rooted(root: str, comp: frozenset[str],
            adj: Mapping[str, set[str]]) -> tuple[set[Edge], list[frozenset[str]]]:
    """Orient all edges at ``root`` outwards inside ``comp``, close under Meek's rules.

    Returns the directed edges and the chain components (size ≥ 2) that stay undirected.
    """
    sub = {v: adj[v] & comp for v in comp}
    directed = {(root, w) for w in sub[root]}
    undirected = {frozenset((u, v)) for u in comp for v in sub[u] if u < v and root not in (u, v)}
    meek_closure(directed, undirected, sub)
    return directed, _undirected_components(comp, undirected)


def _undirected_components(comp: frozenset[str], undirected: set[frozenset[str]]) -> list[frozenset[str]]:
    """Chain components (size ≥ 2) of ``comp`` formed by the edges still ``undirected``."""
    und_adj: dict[str, set[str]] = {v: set() for v in comp}
    for e in undirected:
        u, v = tuple(e)
        und_adj[u].add(v)
        und_adj[v].add(u)
    return [c for c in _chain_components(comp, und_adj) if len(c) > 1]


def _count_amo_rooted(comp: frozenset[str], adj: Mapping[str, set[str]],
                      memo: dict[frozenset[str], int] | None = None) -> int:
    """#AMO by the source-vertex sum of He, Jia & Yu (2015); not polynomial, kept as a cross-check."""
    memo = {} if memo is None else memo
    k = len(comp)
    if k <= 2:
        return math.factorial(k)
    if comp not in memo:
        result = 0
        for root in sorted(comp):
            _, comps = _rooted(root, comp, adj)
            prod = 1
            for c in comps:
                prod *= _count_amo_rooted(c, adj, memo)
            result += prod
        memo[comp] = result
    return memo[comp]


def _phi(clique: frozenset[str], forbidden: Iterable[frozenset[str]]) -> int:
    """Permutations of ``clique`` none of whose prefixes (as sets) is in ``forbidden``.

    f(X) = |X|! − Σ_{Y ∈ R, Y ⊊ X} f(Y)·|X∖Y|! counts the orderings of X whose first prefix in R
    is X itself; φ = |K|! − Σ_{Y ∈ R} f(Y)·|K∖Y|!.
    """
    sets = sorted({r for r in forbidden if r < clique}, key=len)
    first: dict[frozenset[str], int] = {}
    for x in sets:
        first[x] = math.factorial(len(x)) - sum(
            first[y] * math.factorial(len(x) - len(y)) for y in sets if y < x)
    return math.factorial(len(clique)) - sum(first[y] * math.factorial(len(clique) - len(y)) for y in sets)


def _clique_subproblems(clique: frozenset[str], comp: frozenset[str],
                        adj: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """Chain components left when ``clique`` comes first (in any order) and Meek's rules close."""
    return _clique_rooted(clique, comp, adj)[1]


def _clique_rooted(clique: frozenset[str], comp: frozenset[str],
                   adj: Mapping[str, set[str]]) -> tuple[set[Edge], list[frozenset[str]]]:
    """The edges with an end outside ``clique`` that Meek's rules orient when the clique comes first, and the
    chain components left. Neither depends on the order within the clique: its edges to the rest all point out,
    and a rule that orients an outside edge reads only those (R1: k → x — y, k ≁ y; R2–R4 need an edge at
    the outside vertex already oriented), so the clique's own edges are left out of what is returned."""
    sub = {v: adj[v] & comp for v in comp}
    order = sorted(clique)
    directed = {(a, b) for i, a in enumerate(order) for b in order[i + 1:]}
    directed |= {(k, w) for k in clique for w in sub[k] if w not in clique}
    undirected = {frozenset((u, v)) for u in comp for v in sub[u]
                  if u < v and not (u in clique or v in clique)}
    meek_closure(directed, undirected, sub)
    return {(a, b) for a, b in directed if not (a in clique and b in clique)}, _undirected_components(comp, undirected)


def _phi_before(clique: frozenset[str], forbidden: Iterable[frozenset[str]], a: str, b: str) -> int:
    """The permutations :func:`_phi` counts that put ``a`` before ``b`` (both in ``clique``).

    With f(X) of :func:`_phi` (orderings of X whose first prefix in R is X) and f_ab(X) those of them with a
    before b, an ordering of K whose first prefix in R is Y ⊊ K is one of Y's f(Y) followed by any of the
    |K∖Y|! orderings of the rest, so a precedes b in f_ab(Y)·|K∖Y|! of them when a, b ∈ Y, in f(Y)·|K∖Y|!
    when only a ∈ Y, in none when only b ∈ Y, and in f(Y)·|K∖Y|!/2 when neither is; the same split gives
    f_ab(X) = |X|!/2 − Σ_{Y ∈ R, Y ⊊ X} (…), and φ_ab = |K|!/2 − Σ_{Y ∈ R} (…).
    """
    sets = sorted({r for r in forbidden if r < clique}, key=len)
    first: dict[frozenset[str], int] = {}
    first_ab: dict[frozenset[str], int] = {}

    def before(y: frozenset[str], rest: int) -> int:
        """Orderings of a superset whose first prefix in R is y, with a before b; ``rest`` = |superset ∖ y|."""
        if a in y:
            return (first_ab[y] if b in y else first[y]) * math.factorial(rest)
        return 0 if b in y else first[y] * math.factorial(rest) // 2

    for x in sets:
        first[x] = math.factorial(len(x)) - sum(
            first[y] * math.factorial(len(x) - len(y)) for y in sets if y < x)
        if a in x and b in x:
            first_ab[x] = math.factorial(len(x)) // 2 - sum(before(y, len(x) - len(y)) for y in sets if y < x)
    return math.factorial(len(clique)) // 2 - sum(before(y, len(clique) - len(y)) for y in sets)


def _clique_tree(comp: frozenset[str], adj: Mapping[str, set[str]]) -> tuple[list[frozenset[str]], list[int],
                                                                             dict[int, list[frozenset[str]]]]:
    """Maximal cliques, a BFS order of a clique tree and, per clique, the separators on its root path."""
    g = nx.Graph()
    g.add_nodes_from(comp)
    g.add_edges_from((u, v) for u in comp for v in adj[u] & comp)
    cliques = sorted((frozenset(c) for c in nx.chordal_graph_cliques(g)), key=sorted)
    cg = nx.Graph()
    cg.add_nodes_from(range(len(cliques)))
    for i, j in itertools.combinations(range(len(cliques)), 2):
        w = len(cliques[i] & cliques[j])
        if w:
            cg.add_edge(i, j, weight=w)
    tree = nx.maximum_spanning_tree(cg)
    bfs = [0]
    path_seps: dict[int, list[frozenset[str]]] = {0: []}
    for x in bfs:
        for y in sorted(tree.neighbors(x)):
            if y not in path_seps:
                path_seps[y] = path_seps[x] + [cliques[x] & cliques[y]]
                bfs.append(y)
    return cliques, bfs, path_seps


_AMO_CACHE: dict[frozenset[frozenset[str]], int] = {}
_AMO_CACHE_LIMIT = 200_000


def _count_amo(comp: frozenset[str], adj: Mapping[str, set[str]]) -> int:
    """#AMO of the connected chordal graph induced by ``comp``: Clique-Picking (cached by edge set).

    #AMO(G) = Σ_{K_v, v in BFS order of a clique tree T} φ(K_v, FP(v, T)) · Π_{H ∈ C_G(K_v)} #AMO(H)
    (Wienöbst, Bannach & Liśkiewicz 2021).
    """
    k = len(comp)
    edges = frozenset(frozenset((u, v)) for u in comp for v in adj[u] & comp if u < v)
    if k <= 2 or len(edges) == k * (k - 1) // 2:
        return math.factorial(k)
    if len(edges) == k - 1:
        return k
    if edges in _AMO_CACHE:
        return _AMO_CACHE[edges]
    cliques, bfs, path_seps = _clique_tree(comp, adj)
    result = 0
    for x in bfs:
        prod = 1
        for h in _clique_subproblems(cliques[x], comp, adj):
            prod *= _count_amo(h, adj)
        result += _phi(cliques[x], path_seps[x]) * prod
    if len(_AMO_CACHE) >= _AMO_CACHE_LIMIT:
        _AMO_CACHE.clear()
    _AMO_CACHE[edges] = result
    return result


def _is_chordal(comp: frozenset[str], adj: Mapping[str, set[str]]) -> bool:
    """Maximum cardinality search + perfect-elimination check (Tarjan & Yannakakis 1984); a tree (a chain
    component is connected: |C| − 1 edges) is chordal at once — the search is O(|C|²), and the classes of a
    palim-1 table are forests of hundreds of nodes."""
    if sum(len(adj[v]) for v in comp) == 2 * (len(comp) - 1):
        return True
    weight = dict.fromkeys(comp, 0)
    pos: dict[str, int] = {}
    while weight:
        v = max(weight, key=weight.__getitem__)
        del weight[v]
        pos[v] = len(pos)
        for w in adj[v]:
            if w in weight:
                weight[w] += 1
    for v in comp:
        earlier = [w for w in adj[v] if w in pos and pos[w] < pos[v]]
        if len(earlier) > 1:
            u = max(earlier, key=pos.__getitem__)
            if any(w != u and w not in adj[u] for w in earlier):
                return False
    return True


def _components_checked(obj: Any) -> tuple[list[frozenset[str]], dict[str, set[str]]]:
    nodes, und = _undirected_part(obj)
    adj = _adjacency(nodes, (), und)
    comps = [c for c in _chain_components(nodes, adj) if len(c) > 1]
    for c in comps:
        if not _is_chordal(c, adj):
            raise InputError(f"chain component {sorted(c)} is not chordal: not a CPDAG")
    return comps, adj


def count_dags_in_mec(cpdag_or_dag: Any) -> int:
    """Number of DAGs in the Markov equivalence class.

    Accepts a DAG's parent map, a CPDAG as ``(directed, undirected)`` edge sets, a CPDAG
    DiGraph from :func:`cpdag` or a :class:`MEC`. Product over chain components of their AMO counts.
    """
    comps, adj = _components_checked(cpdag_or_dag)
    total = 1
    for c in comps:
        total *= _count_amo(c, adj)
    return total


#: a factor of :func:`_lazy_product` with at most this many items is kept after its first full pass
LAZY_PRODUCT_CACHE = 4_096


def _lazy_product(factors: Sequence[Callable[[], Iterator[Any]]]) -> Iterator[tuple[Any, ...]]:
    """``itertools.product`` of the iterators the ``factors`` make, in its order (the first factor slowest),
    without listing a factor before its first item is used: a chain component's orientations number up to
    (size)! and ``itertools.product`` lists every factor first (13 triangles on one centre: 221,184
    orientations, 0.5 GB before the first DAG). A factor is kept once it has been run through and held at most
    :data:`LAZY_PRODUCT_CACHE` items (then it is not made again for every prefix: 3 paths of 20 nodes, 11×
    slower without); a larger one is made again for every prefix, so memory stays bounded."""
    kept: dict[int, list[Any]] = {}

    def source(i: int) -> Iterator[Any]:
        if i in kept:
            yield from kept[i]
            return
        store: list[Any] | None = []
        for x in factors[i]():
            if store is not None:
                store.append(x)
                if len(store) > LAZY_PRODUCT_CACHE:
                    store = None
            yield x
        if store is not None:
            kept[i] = store

    def from_(i: int) -> Iterator[tuple[Any, ...]]:
        if i == len(factors):
            yield ()
            return
        for x in source(i):
            for tail in from_(i + 1):
                yield (x, *tail)

    return from_(0)


def _amos(comp: frozenset[str], adj: Mapping[str, set[str]]) -> Iterator[set[Edge]]:
    """Every acyclic moral orientation of the chordal component ``comp`` (once each), lazily."""
    if len(comp) == 1:
        yield set()
        return
    for root in sorted(comp):
        directed, comps = _rooted(root, comp, adj)
        for parts in _lazy_product([functools.partial(_amos, c, adj) for c in comps]):
            out = set(directed)
            for p in parts:
                out |= p
            yield out


def dags_in_mec(cpdag_or_dag: Any, nodes: Sequence[str] | None = None) -> Iterator[Parents]:
    """Every DAG of the class as a parent map (exponential: use for small classes).

    Accepts what :func:`count_dags_in_mec` accepts; ``nodes`` is needed for an edge-set CPDAG
    with isolated or only-directed nodes.
    """
    if isinstance(cpdag_or_dag, Mapping):
        directed, und = cpdag_edges(cpdag_or_dag)
        all_nodes = list(cpdag_or_dag)
    elif isinstance(cpdag_or_dag, nx.DiGraph):
        g = cpdag_or_dag
        und = {frozenset((u, v)) for u, v in g.edges if g.has_edge(v, u)}
        directed = {(u, v) for u, v in g.edges if not g.has_edge(v, u)}
        all_nodes = list(g.nodes)
    else:
        directed, und = cpdag_or_dag
        directed = set(directed)
        und = {frozenset(e) for e in und}
        all_nodes = list(nodes) if nodes is not None else sorted(
            {v for e in und for v in e} | {v for e in directed for v in e})
    comps, adj = _components_checked((directed, und))
    for parts in _lazy_product([functools.partial(_amos, c, adj) for c in comps]):
        pa: dict[str, set[str]] = {v: set() for v in all_nodes}
        for u, v in directed:
            pa[v].add(u)
        for p in parts:
            for u, v in p:
                pa[v].add(u)
        yield {v: frozenset(p) for v, p in pa.items()}


@dataclass
class MEC:
    """One Markov equivalence class found in a list of networks.

    ``score`` is the best member score, ``members`` indices into the input list (best first),
    ``representative`` the parent map of the best member. ``n_dags`` is the number of members
    present; ``key`` (:func:`mec_key`), ``cpdag`` = ``(directed, undirected)`` edge sets and
    ``class_size`` (the number of DAGs in the whole class) are computed on first use.

    Class enumeration (one representative per class) sets ``counted``, the number of the class's
    DAGs that the problem admits (counted, not listed; ``n_dags`` then returns it), and ``shares``,
    P(u → v) over those DAGs (:func:`directed_fractions` or :func:`admitted_fractions`).
    """

    score: float
    members: list[int]
    representative: Parents
    counted: int | None = None
    shares: dict[Edge, float] | None = None
    #: background knowledge (:class:`bnilp.knowledge.Knowledge`): the class is then only its DAGs that
    #: satisfy it (Meek 1995), ``class_size`` counts those and :attr:`pdag` orients what they agree on
    knowledge: Any = None

    @cached_property
    def key(self) -> MecKey:
        """:func:`mec_key` of the class (skeleton, v-structures)."""
        return mec_key(self.representative)

    @property
    def n_dags(self) -> int:
        """The class's DAGs: counted from its CPDAG (``counted``) or, when they were listed, the members."""
        return len(self.members) if self.counted is None else self.counted

    @property
    def nodes(self) -> list[str]:
        return list(self.representative)

    @cached_property
    def cpdag(self) -> CpdagEdges:
        return cpdag_edges(self.representative)

    @cached_property
    def class_size(self) -> int:
        if self.knowledge is not None:
            return self.knowledge_class[0]
        return count_dags_in_mec(self.cpdag)

    @cached_property
    def knowledge_class(self) -> tuple[int, dict[Edge, float]]:
        """:func:`knowledge_class` of this class under :attr:`knowledge`."""
        return knowledge_class(self.cpdag, self.nodes, self.knowledge)

    @property
    def pdag(self) -> CpdagEdges:
        """The CPDAG with the orientations every admitted DAG shares (the knowledge's PDAG: Meek's
        maximally oriented PDAG when the knowledge only fixes arrows); the CPDAG without knowledge."""
        if self.knowledge is None:
            return self.cpdag
        return pdag_from_shares(self.cpdag, self.knowledge_class[1])

    @cached_property
    def pdag_or_why(self) -> tuple[CpdagEdges, str | None]:
        """(:attr:`pdag`, None), or (the CPDAG, why) where the knowledge cannot be applied to the class without
        listing more than :data:`MAX_CLASS_LISTED` of its DAGs (ancestor statements; DAG enumeration, whose
        credible members are listed anyway, reports such a class with the CPDAG's undirected edges)."""
        try:
            return self.pdag, None
        except InputError as exc:
            return self.cpdag, f"{exc}; its undirected edges are the CPDAG's (the knowledge not applied to them)"

    def cpdag_graph(self) -> nx.DiGraph:
        """The CPDAG as a DiGraph (see :func:`cpdag`)."""
        directed, undirected = self.cpdag
        g = nx.DiGraph()
        g.add_nodes_from(self.nodes)
        g.add_edges_from(directed, undirected=False)
        for e in undirected:
            g.add_edges_from(_pairs(e), undirected=True)
        return g


def group_by_mec(networks: Iterable[Any]) -> list[MEC]:
    """Group networks by Markov equivalence, best class first (ties: first occurrence).

    ``networks``: ``(score, parents)`` tuples, objects with ``.score``/``.parents`` or dicts.
    """
    items = network_items(networks)
    groups: dict[FastKey, list[int]] = {}
    for i, (_, pa) in enumerate(items):
        groups.setdefault(_fast_key(pa), []).append(i)
    mecs = []
    for idx in groups.values():
        idx.sort(key=lambda i: (-items[i][0], i))
        first = items[idx[0]][1]
        mecs.append(MEC(score=items[idx[0]][0], members=idx, representative=first))
    mecs.sort(key=lambda m: (-m.score, m.members[0]))
    return mecs


def mec_index(mecs: Sequence[MEC], n_networks: int) -> list[int]:
    """Class number of every network (``-1`` for a network in no class)."""
    out = [-1] * n_networks
    for k, m in enumerate(mecs):
        for i in m.members:
            out[i] = k
    return out


def _count_amo_with_edge(comp: frozenset[str], adj: Mapping[str, set[str]], u: str, v: str,
                         memo: dict[tuple[frozenset[str], str, str], int]) -> int:
    """#AMOs of the chordal component ``comp`` that orient its edge u — v as u → v.

    Source-vertex recursion (He, Jia & Yu 2015): every AMO has exactly one source s, and the AMOs
    with source s are the products of AMOs of the chain components left after orienting all edges at
    s outwards and closing under Meek's rules. So

        #AMO(G; u → v) = Σ_s [u → v forced] · Π_C #AMO(C)
                       + Σ_s [u — v inside C_uv] · #AMO(C_uv; u → v) · Π_{C ≠ C_uv} #AMO(C)

    (a source that forces v → u contributes nothing). A clique gives k!/2, a tree the size of u's
    side of the edge (the source must lie there); counts are memoised by (component, u, v). One edge
    at a time: the class report uses :func:`_edge_counts`, all edges in one recursion; this stays as
    its cross-check in the tests.
    """
    k = len(comp)
    edges = sum(len(adj[x] & comp) for x in comp) // 2
    if edges == k * (k - 1) // 2:
        return math.factorial(k) // 2
    if edges == k - 1:
        return _side({x: adj[x] & comp for x in comp}, u, v)
    key = (comp, u, v)
    if key not in memo:
        total = 0
        for root in sorted(comp):
            directed, comps = _rooted(root, comp, adj)
            if (v, u) in directed:
                continue
            prod = 1
            inside = None
            for c in comps:
                if u in c and v in c:
                    inside = c
                else:
                    prod *= _count_amo(c, adj)
            if inside is not None:
                prod *= _count_amo_with_edge(inside, adj, u, v, memo)
            elif (u, v) not in directed:  # pragma: no cover - Meek closure orients or keeps every edge
                raise AssertionError(f"edge {u} — {v} lost in the closure")
            total += prod
        memo[key] = total
    return memo[key]


#: chain components up to this size get their edge counts from the source-vertex recursion (at most 2^6
#: subproblems), faster there than building a clique tree (1.8 against 2.6 ms a component of 4–8 nodes)
_ROOTED_MAX_NODES = 6


def _edge_counts(comp: frozenset[str], adj: Mapping[str, set[str]],
                 memo: dict[frozenset[str], dict[Edge, int]]) -> dict[Edge, int]:
    """#AMO(C; a → b) for every edge of the chordal component C = ``comp``, both orientations, by Clique-Picking
    (:func:`_count_amo`; Wienöbst, Bannach & Liśkiewicz 2021), polynomial as the count is. Each AMO is counted
    once, at the clique K of a clique tree whose (prefix-restricted) ordering comes first, in the term

        φ(K, FP) · Π_{H ∈ C_G(K)} #AMO(H);

    the term adds to #AMO(C; a → b): all of it for an edge the closure orients (:func:`_clique_rooted`: the
    same for every ordering of K), φ_ab(K, FP) · Π_H #AMO(H) for an edge of K (:func:`_phi_before`), and
    φ(K, FP) · #AMO(H; a → b) · Π_{H' ≠ H} #AMO(H') for an edge inside H (recursion, memoised by component).
    A clique gives k!/2 each way, a tree the size of a's side of the edge. ``comp`` must have an edge.
    :func:`_edge_counts_rooted` (He, Jia & Yu's source-vertex sum, exponential) is the tests' cross-check, and
    it counts components of at most :data:`_ROOTED_MAX_NODES` nodes, where it is the faster (no clique tree)."""
    if len(comp) <= _ROOTED_MAX_NODES:
        return _edge_counts_rooted(comp, adj, memo)
    sub, known = _edge_counts_known(comp, adj, memo)
    if known is not None:
        return known
    counts = {(a, b): 0 for a in comp for b in sub[a]}
    cliques, bfs, path_seps = _clique_tree(comp, adj)
    for x in bfs:
        clique, seps = cliques[x], path_seps[x]
        directed, comps = _clique_rooted(clique, comp, adj)
        inner = [_edge_counts(c, adj, memo) for c in comps]
        amos = [_amo_of(c) for c in inner]
        rest = math.prod(amos)
        phi = _phi(clique, seps)
        whole = phi * rest
        for e in directed:
            counts[e] += whole
        for a in clique:
            for b in sub[a] & clique:
                counts[a, b] += _phi_before(clique, seps, a, b) * rest
        for c, amo in zip(inner, amos, strict=True):
            share = phi * (rest // amo)
            for e, n in c.items():
                counts[e] += n * share
    memo[comp] = counts
    return counts


def _edge_counts_rooted(comp: frozenset[str], adj: Mapping[str, set[str]],
                        memo: dict[frozenset[str], dict[Edge, int]]) -> dict[Edge, int]:
    """:func:`_edge_counts` by the source-vertex recursion (the sum of :func:`_count_amo_with_edge` over all
    edges at once; exponential in the worst case, kept as a cross-check): for each
    source s, the edges the closure orients gain Π_D #AMO(D) over the chain components D left, and an
    edge inside D gains #AMO(D; a → b) · Π_{D' ≠ D} #AMO(D'), memoised by component, and #AMO(D) is
    #AMO(D; a → b) + #AMO(D; b → a) for any edge (:func:`_amo_of`). A clique gives k!/2 each way, a tree
    the size of a's side of the edge. ``comp`` must have an edge."""
    sub, known = _edge_counts_known(comp, adj, memo)
    if known is not None:
        return known
    counts = {(a, b): 0 for a in comp for b in sub[a]}
    for root in sorted(comp):
        directed, comps = _rooted(root, comp, adj)
        inner = [_edge_counts_rooted(c, adj, memo) for c in comps]
        amos = [_amo_of(x) for x in inner]
        whole = math.prod(amos)
        for e in directed:
            counts[e] += whole
        for x, amo in zip(inner, amos, strict=True):
            rest = whole // amo
            for e, c in x.items():
                counts[e] += c * rest
    memo[comp] = counts
    return counts


def _edge_counts_known(comp: frozenset[str], adj: Mapping[str, set[str]], memo: Mapping[frozenset[str], dict[Edge, int]]
                       ) -> tuple[dict[str, set[str]], dict[Edge, int] | None]:
    """(each node's neighbours within ``comp``, its edge counts where they need no recursion: a clique's k!/2
    each way, a tree's a-side sizes, or the memo's; else None)."""
    k = len(comp)
    sub = {x: adj[x] & comp for x in comp}
    n_edges = sum(map(len, sub.values())) // 2
    if n_edges == k * (k - 1) // 2:
        half = math.factorial(k) // 2
        return sub, {(a, b): half for a in comp for b in sub[a]}
    if n_edges == k - 1:
        return sub, _tree_sides(sub)
    return sub, memo.get(comp)


def _amo_of(counts: Mapping[Edge, int]) -> int:
    """#AMO of a component from its :func:`_edge_counts`: every AMO orients any one edge one way or the other."""
    a, b = next(iter(counts))
    return counts[a, b] + counts[b, a]


def _cpdag_of(obj: Any) -> CpdagEdges:
    """``(directed, undirected)`` edge sets of a DAG's parent map, a :class:`MEC`, an edge-set CPDAG or a CPDAG
    DiGraph (:func:`cpdag`: u — v as both arcs) — the forms :func:`count_dags_in_mec` takes."""
    if isinstance(obj, MEC):
        directed, und = obj.cpdag
    elif isinstance(obj, nx.DiGraph):
        directed = {(u, v) for u, v in obj.edges if not obj.has_edge(v, u)}
        und = {frozenset((u, v)) for u, v in obj.edges if obj.has_edge(v, u)}
    elif isinstance(obj, Mapping):
        directed, und = cpdag_edges(obj)
    else:
        try:
            directed, und = obj
        except (TypeError, ValueError):
            raise InputError(f"expected a DAG's parent map, a CPDAG as (directed, undirected) edge sets, a CPDAG "
                             f"DiGraph or a MEC, got {type(obj).__name__}") from None
    return set(directed), {frozenset(e) for e in und}


def _component_forward(comp: frozenset[str], adj: Mapping[str, set[str]],
                       edges: frozenset[frozenset[str]]) -> tuple[int, dict[Edge, int]]:
    """(#AMO(C), {(a, b): #AMO(C; a → b) for each edge a — b of C with a < b}), cached by C's edge set.

    A chain component's counts depend only on its own undirected graph, and the classes of one credible
    set share most of their components (an edge a — b alone, a triangle, a path), so the class report
    computes each shape once per run (bounded cache, like :func:`_count_amo`'s). ``edges``: C's edges."""
    hit = _SHARES_CACHE.get(edges)
    if hit is None:
        counts = _edge_counts(comp, adj, {})
        total = _amo_of(counts)
        hit = (total, {(a, b): counts[a, b] for a in sorted(comp) for b in sorted(adj[a] & comp) if a < b})
        if len(_SHARES_CACHE) >= _AMO_CACHE_LIMIT:
            _SHARES_CACHE.clear()
        _SHARES_CACHE[edges] = hit
    return hit


_SHARES_CACHE: dict[frozenset[frozenset[str]], tuple[int, dict[Edge, int]]] = {}


def directed_fractions(cpdag_or_dag: Any) -> dict[Edge, float]:
    """P(u → v) over the DAGs of the class, uniformly weighted, for every adjacent pair (u, v).

    A directed CPDAG edge has share 1; an undirected edge u — v inside chain component C has
    #AMO(C; u → v) / #AMO(C), since the components orient independently (Andersson, Madigan &
    Perlman 1997). Exact integer counts, no listing of the DAGs.
    """
    return class_counts(cpdag_or_dag)[1]


def class_counts(cpdag_or_dag: Any) -> tuple[int, dict[Edge, float]]:
    """(:func:`count_dags_in_mec`, :func:`directed_fractions`) in one pass over the chain components,
    each component's shape counted once per run (:func:`_component_forward`) and checked chordal once."""
    directed, und = _cpdag_of(cpdag_or_dag)
    nodes = sorted({v for e in und for v in e})
    adj = _adjacency(nodes, (), und)
    out: dict[Edge, float] = {(a, b): 1.0 for a, b in directed}
    size = 1
    for c in _chain_components(nodes, adj):
        edges = frozenset(frozenset((a, b)) for a in c for b in adj[a] if a < b)
        if edges not in _SHARES_CACHE and not _is_chordal(c, adj):
            raise InputError(f"chain component {sorted(c)} is not chordal: not a CPDAG")
        total, forward = _component_forward(c, adj, edges)
        size *= total
        for (a, b), k in forward.items():
            out[(a, b)] = k / total
            out[(b, a)] = (total - k) / total
    return size, out


#: a node with more possible parent sets than this inside its class is checked by listing the class
MAX_PARENT_OPTIONS = 4096


def _parent_options(fixed: frozenset[str], nbrs: Sequence[str],
                    adj: Mapping[str, set[str]]) -> list[frozenset[str]] | None:
    """Every parent set a node can have in a DAG of the class: its directed parents ``fixed`` plus a
    clique of its undirected neighbours ``nbrs`` (the parents inside a chain component form a clique,
    else a new v-structure appears). A superset of the sets that occur; ``None`` past
    :data:`MAX_PARENT_OPTIONS`."""
    cliques: list[frozenset[str]] = [frozenset()]
    for x in nbrs:
        grown = [c | {x} for c in cliques if all(y in adj[x] for y in c)]
        cliques += grown
        if len(cliques) > MAX_PARENT_OPTIONS:
            return None
    return [fixed | c for c in cliques]


#: a class is listed to apply background knowledge to its DAGs only up to this many DAGs (per chain
#: component when the knowledge decides orientations edge by edge, else the whole class)
MAX_CLASS_LISTED = 1_000_000


def count_admitted(cpdag_or_dag: Any, families: Mapping[str, Any], nodes: Sequence[str],
                   max_listed: int = 1_000_000, size: int | None = None) -> tuple[int, bool]:
    """(number of DAGs of the class whose every parent set is a key of ``families[node]``, exact).

    ``families`` maps each node to its admitted parent sets (a score table's families). Counted chain component
    by chain component (:func:`admitted_components`: a component whose every parent option is admitted by shape,
    another by listing) — ``exact`` is False (and the count 0) if a component that must be listed has more than
    ``max_listed`` orientations. ``size`` (the class's size, where the caller has it) is accepted and not needed.
    """
    try:
        return admitted_components(cpdag_or_dag, nodes, _in_table(families), max_listed)[0], True
    except ComponentTooLarge:
        return 0, False


def admitted_fractions(cpdag_or_dag: Any, families: Mapping[str, Any], nodes: Sequence[str]) -> dict[Edge, float]:
    """P(u → v) over the *admitted* DAGs of the class (:func:`admitted_components`, no cap): for classes that a
    palim or a foreign score file cuts, where :func:`directed_fractions` would count DAGs the problem excludes."""
    return admitted_components(cpdag_or_dag, nodes, _in_table(families), math.inf)[1]


def _in_table(families: Mapping[str, Any]) -> Callable[[str, frozenset[str]], bool]:
    return lambda v, ps: ps in families[v]


class ComponentTooLarge(Exception):
    """A chain component that must be listed has more orientations than allowed (``component``, ``size``)."""

    def __init__(self, component: frozenset[str], size: int):
        super().__init__(component, size)
        self.component, self.size = component, size


def admitted_components(cpdag_or_dag: Any, nodes: Sequence[str], admits: Callable[[str, frozenset[str]], bool],
                        max_listed: float = MAX_CLASS_LISTED, memo: dict[Any, Any] | None = None
                        ) -> tuple[int, dict[Edge, float]]:
    """(number of DAGs of the class whose every family (v, Π_v) ``admits``, P(u → v) over them), exactly.

    A DAG of the class is its CPDAG's directed edges plus one acyclic moral orientation (AMO) of each chain
    component, chosen independently (Andersson, Madigan & Perlman 1997), and v's parents are its directed
    parents and its parents inside its own component. A condition on families is therefore a condition on
    each component's orientation alone, and the admitted DAGs are a product:
        #admitted = [every node outside a component admits its one family] · Π_C #{AMOs of C whose every
        member's family is admitted},
    a share P(u → v) counted inside u — v's component (directed edges: 1). A component whose members admit
    every parent set they can take in the class (:func:`_parent_options`) is counted by shape
    (:func:`_component_forward`); another is listed — :class:`ComponentTooLarge` past ``max_listed``
    orientations. Listing the class whole instead multiplied the components: 21 separate pairs with one
    forbidden arrow are 2²¹ DAGs, 21 components of 2 (a review). The shares hold only orientations some admitted
    DAG has.

    ``memo``: a dict kept by the caller across classes counted under the same ``admits`` and ``max_listed`` — a
    component's count and shares depend only on its edges and its members' directed parents, and the classes of
    one listing share most of their components (the forests a listing of one-parent tables meets differ by an
    edge or two)."""
    directed, und = _cpdag_of(cpdag_or_dag)
    fixed: dict[str, set[str]] = {v: set() for v in nodes}
    for u, v in directed:
        fixed[v].add(u)
    comps, adj = _components_checked((directed, und))
    inside = set().union(*comps) if comps else set()
    if not all(admits(v, frozenset(fixed[v])) for v in nodes if v not in inside):
        return 0, {}
    total, shares = 1, {e: 1.0 for e in directed}
    keys = _component_keys(comps, und, fixed) if memo is not None else [None] * len(comps)
    for c, key in zip(comps, keys, strict=True):
        if memo is None:
            kept, local = _component_admitted(c, adj, fixed, admits, max_listed)
        else:
            if key not in memo:
                memo[key] = _component_admitted(c, adj, fixed, admits, max_listed)
            kept, local = memo[key]
        if not kept:
            return 0, {}
        total *= kept
        shares.update(local)
    return total, shares


def _component_keys(comps: Sequence[frozenset[str]], und: set[frozenset[str]], fixed: Mapping[str, set[str]]
                    ) -> list[tuple[frozenset[frozenset[str]], frozenset[tuple[str, frozenset[str]]]]]:
    """For each chain component, what its admitted orientations depend on: its undirected edges and its members'
    directed parents (:func:`admitted_components`' ``memo``)."""
    where = {v: i for i, c in enumerate(comps) for v in c}
    edges: list[list[frozenset[str]]] = [[] for _ in comps]
    for e in und:
        edges[where[next(iter(e))]].append(e)
    return [(frozenset(edges[i]), frozenset((v, frozenset(fixed[v])) for v in c if fixed[v]))
            for i, c in enumerate(comps)]


def _component_admitted(comp: frozenset[str], adj: Mapping[str, set[str]], fixed: Mapping[str, set[str]],
                        admits: Callable[[str, frozenset[str]], bool], max_listed: float
                        ) -> tuple[int, dict[Edge, float]]:
    """(#AMOs of the chain component ``comp`` whose members' families all pass ``admits``, P(a → b) over them):
    a tree by its rootings (:func:`_tree_admitted`, in O(|C|) look-ups), another by shape when every parent set a
    member can take passes, else by listing (:func:`admitted_components`)."""
    members = sorted(comp)
    if sum(len(adj[a]) for a in comp) == 2 * (len(comp) - 1):     # a tree: its AMOs are its rootings
        return _tree_admitted(members, adj, fixed, admits)
    options = [_parent_options(frozenset(fixed[v]), sorted(adj[v]), adj) for v in members]
    if all(o is not None and all(admits(v, ps) for ps in o) for v, o in zip(members, options, strict=True)):
        edges = frozenset(frozenset((a, b)) for a in comp for b in adj[a] if a < b)
        kept, forward = _component_forward(comp, adj, edges)
        local = {}
        for (a, b), k in forward.items():
            local.update({(a, b): k / kept} if k else {})
            local.update({(b, a): (kept - k) / kept} if kept - k else {})
        return kept, local
    size = _count_amo(comp, adj)
    if size > max_listed:
        raise ComponentTooLarge(comp, size)
    kept, counts = 0, {}
    for amo in _amos(comp, adj):
        pa = {v: set(fixed[v]) for v in members}
        for a, b in amo:
            pa[b].add(a)
        if all(admits(v, frozenset(pa[v])) for v in members):
            kept += 1
            for e in amo:
                counts[e] = counts.get(e, 0) + 1
    return kept, _shares(counts, kept)


def _tree_admitted(members: Sequence[str], adj: Mapping[str, set[str]], fixed: Mapping[str, set[str]],
                   admits: Callable[[str, frozenset[str]], bool]) -> tuple[int, dict[Edge, float]]:
    """:func:`_component_admitted` of a chain component that is a tree, in O(|C|) look-ups: its AMOs are its
    rootings (a node of two parents inside it would be a new v-structure), the root r taking its directed parents
    ``fixed[r]`` and every other node v those and its neighbour towards r. Rooted at r, an edge u — v points away
    from r; moving the root from u to a neighbour v turns that edge alone, so the number of edges whose family the
    table lacks follows from the first root's along a breadth-first order, and r is admitted iff that number is 0
    and ``fixed[r]`` is admitted. P(u → v) = (admitted roots on u's side) / (admitted roots), the sides summed up
    the same order. Listing the AMOs (each closed under Meek's rules) took 0.37 s a class over 1,000 variables in
    ten tiers (a review)."""
    root = members[0]
    parent, order = {root: root}, [root]
    for x in order:
        for y in adj[x]:
            if y not in parent:
                parent[y] = x
                order.append(y)

    def lacks(a: str, b: str) -> int:                   # 1 when the table lacks b's family under a → b
        return 0 if admits(b, frozenset(fixed[b] | {a})) else 1

    down = {c: lacks(parent[c], c) for c in order[1:]}     # each edge pointing away from ``root``
    bad = {root: sum(down.values())}
    for c in order[1:]:
        bad[c] = bad[parent[c]] - down[c] + lacks(c, parent[c])
    ok = {v: int(bad[v] == 0 and admits(v, frozenset(fixed[v]))) for v in order}
    kept = sum(ok.values())
    if not kept:
        return 0, {}
    below = dict(ok)                                    # admitted roots in each node's subtree (from ``root``)
    for c in reversed(order[1:]):
        below[parent[c]] += below[c]
    shares: dict[Edge, float] = {}
    for c in order[1:]:
        p = parent[c]
        if below[c]:
            shares[c, p] = below[c] / kept
        if kept - below[c]:
            shares[p, c] = (kept - below[c]) / kept
    return kept, shares


#: the least move of a covered reversal that says a table is not score-equivalent: GOBNILP's tolerance, above a
#: score file's rounding (four families written to 6 decimals move it by up to 2e-6)
EQUIVALENCE_SLACK = 1e-4


def rounding_slack(families: Mapping[str, Mapping[Any, float]]) -> float:
    """How far rounding can move a covered reversal of a table's scores written with few decimals: 2.5·10⁻ᵈ for
    the fewest decimals d ≤ 4 that write every score (the reversal changes two families' scores, each by at most
    ½·10⁻ᵈ from its true value, before and after: 2·10⁻ᵈ in all), else 0 (a file of more decimals is within
    :data:`EQUIVALENCE_SLACK`). Score files written with 2–4 decimals of BIC and BDeu were refused as not
    score-equivalent (a review)."""
    return rounding_slack_of(np.fromiter(itertools.chain.from_iterable(f.values() for f in families.values()),
                                         dtype=float))


def rounding_slack_of(scores: np.ndarray) -> float:
    """:func:`rounding_slack` of a table's family scores given as one array."""
    for d in range(5):
        if np.all(np.abs(scores - np.round(scores, d)) <= 1e-9 * np.maximum(1.0, np.abs(scores))):
            return 2.5 * 10.0 ** -d
    return 0.0


def unequal_covered_families(families: Mapping[str, Mapping[Any, float]], tolerance: float = EQUIVALENCE_SLACK
                             ) -> tuple[str, str, frozenset, float, float] | None:
    """A covered edge u → v, with Π the parents u and v share, that the table ``families`` scores differently
    reversed: s(u | Π) + s(v | Π ∪ {u}) against s(u | Π ∪ {v}) + s(v | Π), all four families in the table — as
    (u, v, Π, score before, score after) — else None. A covered reversal changes exactly these two families, and any
    two Markov equivalent DAGs are joined by covered reversals (Chickering 1995, Theorem 2), so a table with no such
    quadruple gives equivalent DAGs one score wherever the reversals between them stay in the table; one with such a
    quadruple is not score-equivalent (the DAGs of the four families' class differ by that move). Every quadruple
    the table holds is judged (a check of the first 1,000 classes' own reversals let a table through whose unequal
    families lay in a later class: a review, 100 DAGs 0.5 below OPT counted at BF 1), child by child and within a
    child parent by parent (variables in the table's order): up to :data:`MASK_MAX_VARIABLES` variables as bit masks,
    the look-ups of a child's families holding a parent at once (sorted masks; letter's 120,488 sets in about 0.3 s,
    where frozenset look-ups took 2 s), beyond in Python. A move within ``tolerance`` is rounding."""
    names = list(families)
    if len(names) > MASK_MAX_VARIABLES:
        return _unequal_covered_sets(families, tolerance)
    at = {v: i for i, v in enumerate(names)}
    masks, scores = [], []
    for v in names:
        fam = families[v]
        m = np.fromiter((sum(1 << at[p] for p in ps) for ps in fam), dtype=np.int64, count=len(fam))
        order = np.argsort(m, kind="stable")
        masks.append(m[order])
        scores.append(np.fromiter(fam.values(), dtype=float, count=len(fam))[order])

    def scored(i: int, keys: np.ndarray) -> np.ndarray:       # variable i's scores of the sets keys; NaN: not there
        pos = np.minimum(np.searchsorted(masks[i], keys), len(masks[i]) - 1)
        return np.where(masks[i][pos] == keys, scores[i][pos], np.nan)

    for vi, v in enumerate(names):
        for ui, u in enumerate(names):
            holds = ((masks[vi] >> ui) & 1).astype(bool)
            if ui == vi or not holds.any():
                continue
            shared = masks[vi][holds] & ~(1 << ui)
            before = scored(ui, shared) + scores[vi][holds]
            after = scored(ui, shared | (1 << vi)) + scored(vi, shared)
            moved = np.flatnonzero(np.abs(after - before) > tolerance)      # (NaN: a family not in the table)
            if moved.size:
                k = int(moved[0])
                return (u, v, frozenset(names[b] for b in range(len(names)) if int(shared[k]) >> b & 1),
                        float(before[k]), float(after[k]))
    return None


def _unequal_covered_sets(families: Mapping[str, Mapping[Any, float]], tolerance: float
                          ) -> tuple[str, str, frozenset, float, float] | None:
    """:func:`unequal_covered_families` on frozensets, for tables wider than a mask."""
    for v, fam_v in families.items():
        for pv, s_v in fam_v.items():
            for u in pv:
                shared = pv - {u}
                s_u, s_u_rev, s_v_rev = families[u].get(shared), families[u].get(shared | {v}), fam_v.get(shared)
                if s_u is None or s_u_rev is None or s_v_rev is None:
                    continue
                before, after = s_u + s_v, s_u_rev + s_v_rev
                if abs(after - before) > tolerance:
                    return u, v, frozenset(shared), before, after
    return None


def credible_classes(representatives: Iterable[Any], families: Mapping[str, Any], nodes: Sequence[str],
                     complete_classes: bool, max_listed: int = 1_000_000, knowledge: Any = None,
                     first: int = 1) -> list[MEC]:
    """One :class:`MEC` per representative (best first), with ``counted`` and ``shares`` set; errors name a
    class by its rank among all classes found, ``first`` for the first of these (past a cap: listed + 1).

    ``families[v]``: the parent sets the problem admits for v (a score table's families). With a
    score-equivalent score every DAG of a credible class is credible, so when the table was pruned
    soundly for at least this ε with no palim cut (``complete_classes``) every member must be admitted:
    a member that is not is a loud :class:`~bnilp.errors.UnsoundTableError` (an ``AssertionError``: pruning or
    score equivalence broken), never a silent miscount. Otherwise (a palim cut, a foreign score file) only
    the admitted DAGs are counted and averaged over (:func:`count_admitted`, :func:`admitted_fractions`).

    With ``knowledge`` a class is only its DAGs that satisfy it: counted and shared by
    :func:`knowledge_class` when the table is complete for them, else by listing the class and keeping
    the DAGs both the table and the knowledge admit.
    """
    out = []
    items = network_items(representatives)
    compiled = knowledge is None and 0 < len(nodes) <= MASK_MAX_VARIABLES and len(items) > 0
    if compiled:
        cpdags, whole, counts = _class_cpdags(items, families, nodes)
    # the classes share most of their chain components: each counted once under each filter (knowledge; the
    # table and knowledge), where the knowledge decides arrow by arrow (:func:`admitted_components`)
    memos = (component_memo(knowledge), component_memo(knowledge))
    for i, (score, parents) in enumerate(items):
        m = MEC(score=score, members=[i], representative=parents, knowledge=knowledge)
        if compiled:
            m.__dict__["cpdag"] = cpdags[i]     # the cached property, computed for all classes at once
        if knowledge is not None:
            if memos[0] is not None:
                count_knowledge_class(m, memos[0])
            if complete_classes:
                m.counted, m.shares = m.knowledge_class
            else:
                m.counted, m.shares = _list_admitted(m.cpdag, families, nodes, knowledge, max_listed, memos[1])
            out.append(m)
            continue
        branching = None if compiled else forest_class(parents, families)
        if branching is not None:                   # a forest whose every rooting the table admits
            m.__dict__["cpdag"], size, m.shares = branching
            m.counted = size
        elif compiled and counts[i] is not None:    # the table admits the whole class: counted by shape
            size, m.shares = counts[i]
            m.counted = size
        else:
            size, m.counted, m.shares = _counted_class(m.cpdag, compiled and bool(whole[i]), families, nodes,
                                                       complete_classes, max_listed, first + i)
        m.__dict__["class_size"] = size         # the cached property, counted with the shares
        out.append(m)
    return out


def component_memo(knowledge: Any) -> dict[Any, Any] | None:
    """A memo for :func:`admitted_components` over the classes of one report under ``knowledge`` — an empty dict
    where the knowledge decides arrow by arrow (the classes are then counted chain component by chain component),
    None where there is no knowledge or it holds ancestor statements (each class is listed whole)."""
    if knowledge is None or knowledge.required_ancestors or knowledge.forbidden_ancestors:
        return None
    return {}


def count_knowledge_class(m: MEC, memo: dict[Any, Any]) -> None:
    """Set ``m``'s cached :attr:`MEC.knowledge_class`, its components counted through ``memo``
    (:func:`component_memo`, one for all the classes of a report: they share most components); a class that cannot
    be counted is left to the property, which raises where its caller expects it."""
    with contextlib.suppress(InputError):
        m.__dict__["knowledge_class"] = knowledge_class(m.cpdag, m.nodes, m.knowledge, memo=memo)


def forest_class(parents: Mapping[str, Iterable[str]], families: Mapping[str, Any]
                 ) -> tuple[CpdagEdges, int, dict[Edge, float]] | None:
    """(CPDAG, size, P(u → v)) of the class of a DAG of at most one parent a node whose every rooting ``families``
    admits (each node's empty set, and each neighbour alone), in O(n); None for any other DAG or table.

    Such a DAG (a branching) has no v-structure, so its class is every DAG on its skeleton, a forest F, without
    one (Verma & Pearl 1990): one root per tree, ∏_T |T| DAGs, the CPDAG F undirected; u → v in the rootings with
    the root on u's side of u — v, P(u → v) = |T_u|/|T| (:func:`_tree_sides`). The general count
    (:func:`admitted_components`) gives the same at a few hundred times the cost past
    :data:`MASK_MAX_VARIABLES` (130 ms a class at 3,000 variables)."""
    nbrs: dict[str, list[str]] = {v: [] for v in parents}
    empty: frozenset[str] = frozenset()
    for v, ps in parents.items():
        ps = tuple(ps)
        if len(ps) > 1 or empty not in families[v]:
            return None
        if ps:
            (u,) = ps
            if frozenset((v,)) not in families[u] or frozenset(ps) not in families[v]:
                return None
            nbrs[v].append(u)
            nbrs[u].append(v)
    seen: set[str] = set()
    size, shares = 1, {}
    for root in parents:
        if root in seen or not nbrs[root]:
            continue
        tree, order = {root: nbrs[root]}, [root]
        seen.add(root)
        for x in order:
            for y in nbrs[x]:
                if y not in seen:
                    seen.add(y)
                    tree[y] = nbrs[y]
                    order.append(y)
        k = len(order)
        size *= k
        shares.update({e: side / k for e, side in _tree_sides(tree).items()})
    undirected = {frozenset((v, u)) for v, ps in parents.items() for u in ps}
    return (set(), undirected), size, shares


def _counted_class(cpdag: CpdagEdges, whole: bool, families: Mapping[str, Any], nodes: Sequence[str],
                   complete_classes: bool, max_listed: int, number: int) -> tuple[int, int, dict[Edge, float]]:
    """(class size, admitted DAGs, P(u → v) over them) of the class of ``cpdag`` (:func:`credible_classes`;
    ``whole``: the table is known to admit every member; ``number`` names the class in errors)."""
    size, shares = class_counts(cpdag)
    if whole:
        return size, size, shares
    try:
        admitted, admitted_shares = admitted_components(cpdag, nodes, _in_table(families), max_listed)
    except ComponentTooLarge as big:
        raise ValueError(f"class {number} has a chain component of {big.size} orientations, more than "
                         f"{max_listed}, and some of them use parent sets the score table lacks: cannot count its "
                         "admitted DAGs (enumerate by DAGs: --enumerate dags, enumerate_by='dags')") from None
    if admitted == size:
        return size, admitted, shares
    if complete_classes:
        raise UnsoundTableError(f"class {number} has {size} DAGs but the score table admits only {admitted}: "
                                "a parent set a credible DAG needs was pruned (unsound pruning, or a score "
                                "that is not score-equivalent); a score file whose scores were edited or made "
                                "elsewhere counts only the DAGs it admits when solved without its .json sidecar")
    return size, admitted, admitted_shares


@dataclass
class TailMass:
    """What the classes past the cap add to the posteriors (:func:`class_tail_mass`), unnormalised, relative
    to exp(``ref``): their total weight, Σ W(M)·P_M(u → v) and Σ W(M)·[u — v undirected in M's CPDAG] as
    matrices in the order of the variables, and their numbers of classes and admitted DAGs — of the tail's
    first ``classes`` (best first), ``uncounted`` more left out at a deadline."""

    ref: float
    mass: float
    directed: np.ndarray
    undirected: np.ndarray
    classes: int
    dags: int
    uncounted: int = 0

    def at(self, ref: float) -> float:
        """The total weight relative to exp(``ref``) instead."""
        return self.mass * math.exp(self.ref - ref)


#: bytes the chain-component tables of one chunk of :func:`class_tail_mass` may take (about 16·n² a class)
TAIL_CHUNK_BYTES = 1 << 30


def class_tail_mass(tail: Any, families: Mapping[str, Any], nodes: Sequence[str], ref: float, prior: str,
                    complete_classes: bool, max_listed: int = 1_000_000, chunk: int | None = None,
                    first: int = 1, deadline: float | None = None) -> TailMass:
    """Weights and edge shares of the classes in ``tail`` (:class:`bnilp.ilp.result.ClassTail`: one best DAG
    per class), summed without keeping the classes: W(M) = exp(s(M) − ref)·m(M) under the DAG prior (m(M)
    the admitted DAGs), exp(s(M) − ref) under the class prior, as :func:`bnilp.averaging.class_weights`.

    ``chunk`` classes at a time (by default as many as :data:`TAIL_CHUNK_BYTES` allows at 16·n² bytes a
    class — two int64 tables of components × n —, 200,000 at most: 17,458 at n = 62), in compiled code
    where the table admits the whole class (the CPDAGs, :func:`_cpdag_masks`; the chain components,
    :func:`_chain_component_shapes`): each component *shape*
    (its undirected graph on its nodes in ascending order) is counted once — #AMO and #AMO(a → b) by
    :func:`_component_forward` — and a class's size is the product over its components (Andersson,
    Madigan & Perlman 1997), its share of a → b 1 for a directed CPDAG edge and #AMO(C; a → b)/#AMO(C)
    inside component C. A class the table may not wholly admit is counted as :func:`credible_classes`
    counts it (:func:`_counted_class`, with the same checks; errors name it by its rank among all classes
    found, ``first`` for the tail's first: the classes listed + 1).

    ``deadline`` (a :func:`time.perf_counter` time; None: none): no chunk is begun past it, and the classes not
    reached are left out — the sums are then over the tail's best ``classes``, ``uncounted`` the rest."""
    if not 0 < len(nodes) <= MASK_MAX_VARIABLES:
        raise ValueError(f"class_tail_mass works on 1 to {MASK_MAX_VARIABLES} variables, not {len(nodes)}")
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    if chunk is None:       # (smaller under a deadline: it is looked at between chunks)
        chunk = max(1_000, min(200_000 if deadline is None else 20_000, TAIL_CHUNK_BYTES // (16 * n * n)))
    out = TailMass(ref, 0.0, np.zeros((n, n)), np.zeros((n, n)), len(tail), 0)
    fam_lists = [sorted(sum(1 << index[u] for u in ps) for ps in families[v]) for v in nodes]
    fstart = np.cumsum([0] + [len(f) for f in fam_lists]).astype(np.int64)
    fam = np.array([x for f in fam_lists for x in f], dtype=np.int64)
    set_mask = np.array([sum(1 << index[u] for u in ps) for ps in tail.sets], dtype=np.int64)
    child_at = np.array([index[c] for c in tail.children], dtype=np.int64)
    for lo in range(0, len(tail), chunk):
        if deadline is not None and time.perf_counter() > deadline:
            out.classes, out.uncounted = lo, len(tail) - lo
            break
        hi = min(len(tail), lo + chunk)
        choices = np.asarray(tail.choices[lo:hi], dtype=np.int64)
        pm = np.zeros((hi - lo, n), dtype=np.int64)
        pm[np.arange(hi - lo)[:, None], child_at[choices]] = set_mask[choices]
        dpa, und = _cpdag_masks(pm)
        whole = _whole_class_admitted(dpa, und, fam, fstart, MAX_PARENT_OPTIONS).astype(bool)
        scores = np.asarray(tail.scores[lo:hi], dtype=float)
        at = np.flatnonzero(whole)
        big = set(at[_add_whole_classes(out, dpa[at], und[at], scores[at], ref, prior)].tolist())
        for i in sorted(np.flatnonzero(~whole).tolist() + list(big)):     # in Python ints
            (score, parents), = tail.items(lo + i, lo + i + 1)
            cp = cpdag_edges(parents)
            _, admitted, shares = _counted_class(cp, i in big, families, nodes, complete_classes, max_listed,
                                                 first + lo + i)
            w = math.exp(score - ref) * (admitted if prior == "dags" else 1)
            out.mass += w
            out.dags += admitted
            for (u, v), p in shares.items():
                out.directed[index[u], index[v]] += w * p
            for e in cp[1]:
                a, b = (index[x] for x in e)
                out.undirected[a, b] += w
                out.undirected[b, a] += w
    return out


def knowledge_tail_mass(tail: Any, families: Mapping[str, Any], nodes: Sequence[str], ref: float, prior: str,
                        complete_classes: bool, knowledge: Any, first: int = 1, deadline: float | None = None,
                        step: int = 1_000) -> TailMass:
    """:func:`class_tail_mass` under background knowledge, where a class's DAGs are those it admits: each class
    past the cap is counted as a listed one is (:func:`credible_classes` with ``knowledge``: m(M) its admitted
    DAGs, P_M(u → v) their shares, its PDAG's undirected edges as :func:`bnilp.averaging.undirected_posteriors`
    reads them), ``step`` classes at a time, ``deadline`` looked at between steps — in Python, about a millisecond
    a class (:func:`credible_classes` under knowledge). W(M) = exp(s(M) − ref)·m(M) under the DAG prior,
    exp(s(M) − ref) under the class prior."""
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    out = TailMass(ref, 0.0, np.zeros((n, n)), np.zeros((n, n)), len(tail), 0)
    for lo in range(0, len(tail), step):
        if deadline is not None and time.perf_counter() > deadline:
            out.classes, out.uncounted = lo, len(tail) - lo
            break
        for m in credible_classes(tail.items(lo, min(len(tail), lo + step)), families, nodes,
                                  complete_classes=complete_classes, knowledge=knowledge, first=first + lo):
            w = math.exp(m.score - ref) * (m.n_dags if prior == "dags" else 1)
            out.mass += w
            out.dags += m.n_dags
            for (u, v), p in (m.shares or {}).items():
                out.directed[index[u], index[v]] += w * p
            for e in m.pdag_or_why[0][1]:
                a, b = (index[x] for x in e)
                out.undirected[a, b] += w
                out.undirected[b, a] += w
    return out


@dataclass
class _Components:
    """The chain components of m CPDAGs, counted (:func:`_component_counts`): component j belongs to class
    ``cls[j]`` (ascending) and has the nodes ``nodes[j, :k]`` (ascending; a node's local index is its rank);
    its edges a — b (local a < b) are ``edge_a[r]``, ``edge_b[r]`` for r in ``edge_start[j]:edge_start[j + 1]``,
    with ``forward[r]`` = #AMO(C; a → b) of its ``total[j]`` = #AMO(C); ``size[i]`` is class i's number of
    DAGs, ``big[i]`` True where that product reaches 2^62 (``size``, and the counts of its components, are
    then not exact)."""

    cls: np.ndarray
    nodes: np.ndarray
    total: np.ndarray
    edge_start: np.ndarray
    edge_a: np.ndarray
    edge_b: np.ndarray
    forward: np.ndarray
    size: np.ndarray
    big: np.ndarray

    def of_class(self) -> np.ndarray:
        """bounds[i]:bounds[i + 1] are class i's components."""
        return np.searchsorted(self.cls, np.arange(len(self.size) + 1))

    def edge_component(self) -> np.ndarray:
        """The component of each edge row."""
        return np.repeat(np.arange(len(self.cls)), np.diff(self.edge_start))


def _component_counts(und: np.ndarray) -> _Components:
    """Every chain component of the CPDAGs with undirected neighbour masks ``und`` (m, n), counted, and each
    class's size — the product over its components (Andersson, Madigan & Perlman 1997).

    Trees and cliques (nearly every component of a credible set: lung-cancer BF 3 has thousands of distinct
    trees) are counted in closed form in compiled code (:func:`_closed_form_counts`); every other shape
    once, by :func:`_shape_counts`."""
    m = len(und)
    cls, comp_nodes, shape = _chain_component_shapes(und)
    edge_start, edge_a, edge_b, forward, total, total_f, other = _closed_form_counts(shape)
    rows = np.flatnonzero(other)
    if len(rows):
        shapes, inv = _unique_rows(shape[rows])
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(shapes) + 1))
        for sid, row in enumerate(shapes):
            t, counts = _shape_counts(row)
            these = rows[order[bounds[sid]:bounds[sid + 1]]]
            lo, hi = edge_start[these[0]], edge_start[these[0] + 1]
            # _shape_counts keys each edge once, by its local names' string order
            k = [counts[a, b] if (a, b) in counts else t - counts[b, a]
                 for a, b in zip(edge_a[lo:hi].tolist(), edge_b[lo:hi].tolist(), strict=True)]
            fits = t < 2 ** 62                  # else its class is flagged big by total_f below
            forward[edge_start[these][:, None] + np.arange(hi - lo)] = k if fits else 0
            total[these] = t if fits else 0
            total_f[these] = float(t)
    size = np.ones(m, dtype=np.int64)
    exact = np.ones(m)                          # the same product in floats, to catch an overflow
    np.multiply.at(size, cls, total)
    np.multiply.at(exact, cls, total_f)
    return _Components(cls, comp_nodes, total, edge_start, edge_a, edge_b, forward, size, exact >= 2.0 ** 62)


def _add_whole_classes(out: TailMass, dpa: np.ndarray, und: np.ndarray, scores: np.ndarray, ref: float,
                       prior: str) -> np.ndarray:
    """:func:`class_tail_mass` for classes the table admits whole, given their CPDAG masks; returns the
    positions of those it left out, whose counts reach 2^62 (int64 would overflow: the caller counts them in
    Python ints, as :func:`credible_classes` does)."""
    m = len(scores)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    comps = _component_counts(und)
    if comps.big.any():
        fit = np.flatnonzero(~comps.big)
        _add_whole_classes(out, dpa[fit], und[fit], scores[fit], ref, prior)
        return np.flatnonzero(comps.big)
    size = comps.size
    w = np.exp(scores - ref) * (size if prior == "dags" else 1.0)
    out.mass += float(w.sum())
    out.dags += sum(size.tolist())              # Python ints: each size is < 2^62, their sum need not be
    _add_directed(dpa, w, out.directed)
    j = comps.edge_component()
    na, nb = comps.nodes[j, comps.edge_a], comps.nodes[j, comps.edge_b]
    wc = w[comps.cls[j]]
    total = comps.total[j]
    np.add.at(out.directed, (na, nb), wc * (comps.forward / total))
    np.add.at(out.directed, (nb, na), wc * ((total - comps.forward) / total))
    np.add.at(out.undirected, (na, nb), wc)
    np.add.at(out.undirected, (nb, na), wc)
    return np.zeros(0, dtype=np.int64)


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``a`` (in lexicographic order of the reversed columns) and each row's index
    among them (``np.unique(a, axis=0, return_inverse=True)``, by one lexsort: several times faster)."""
    if len(a) == 0:
        return a, np.zeros(0, dtype=np.int64)
    order = np.lexsort(a.T)
    b = a[order]
    new = np.ones(len(b), dtype=bool)
    new[1:] = (b[1:] != b[:-1]).any(axis=1)
    ids = np.cumsum(new) - 1
    inv = np.empty(len(a), dtype=np.int64)
    inv[order] = ids
    return b[new], inv


def _shape_counts(shape: np.ndarray) -> tuple[int, dict[tuple[int, int], int]]:
    """#AMO and #AMO(a → b) of a chain component given as local neighbour masks (``shape[a]``: the bits b of
    a's neighbours; zero rows pad it), one entry per edge, by :func:`_component_forward` (cached by shape;
    trees and cliques in closed form)."""
    k = int(np.count_nonzero(shape))
    names = [str(a) for a in range(k)]
    adj = {names[a]: {names[b] for b in range(k) if int(shape[a]) >> b & 1} for a in range(k)}
    comp = frozenset(names)
    edges = frozenset(frozenset((x, y)) for x in names for y in adj[x] if x < y)
    if edges not in _SHARES_CACHE and not _is_chordal(comp, adj):
        raise InputError("a chain component is not chordal: not a CPDAG")
    total, forward = _component_forward(comp, adj, edges)
    return total, {(int(a), int(b)): c for (a, b), c in forward.items()}


def _tree_sides(nbrs: Mapping[Any, Iterable[Any]]) -> dict[tuple[Any, Any], int]:
    """:func:`_side` of every edge of a tree, both ways, in one pass: rooted anywhere, the edge from p down to c
    leaves c's subtree (its size) on c's side and the rest on p's. O(k); an edge at a time was O(k²) — 25 s for
    1,872 classes of a 300-variable set (a review)."""
    nodes = list(nbrs)
    if not nodes:
        return {}
    root = nodes[0]
    parent = {root: None}
    order = [root]
    for x in order:                             # breadth first: each node after its parent
        for y in nbrs[x]:
            if y not in parent:
                parent[y] = x
                order.append(y)
    size = dict.fromkeys(order, 1)
    for x in reversed(order[1:]):
        size[parent[x]] += size[x]
    k = len(order)
    out: dict[tuple[Any, Any], int] = {}
    for x in order[1:]:
        out[x, parent[x]] = size[x]
        out[parent[x], x] = k - size[x]
    return out


def _side(nbrs: Mapping[Any, Iterable[Any]], a: Any, b: Any) -> int:
    """The number of nodes of a tree (``nbrs``: each node's neighbours) on a's side of its edge a — b."""
    seen = {a}
    stack = [a]
    while stack:
        x = stack.pop()
        for y in nbrs[x]:
            if y not in seen and not (x == a and y == b):
                seen.add(y)
                stack.append(y)
    return len(seen)


@njit(cache=True, nogil=True)
def _add_directed(dpa, w, out):
    """out[a, c] += w[i] for every directed CPDAG edge a → c of class i (``dpa[i, c]``: c's directed parents)."""
    m, n = dpa.shape
    one = np.int64(1)
    for i in range(m):
        for c in range(n):
            row = dpa[i, c]
            if row:
                for a in range(n):
                    if (row >> a) & one:
                        out[a, c] += w[i]


@njit(cache=True, nogil=True)
def _chain_component_shapes(und):
    """The chain components of each CPDAG (``und[i, v]``: v's undirected neighbours, bit masks): per component
    its class, its nodes in ascending order (padded with 0) and its shape — its nodes' neighbour masks in
    local indices (a node's local index is its rank in the component; padded with 0 rows)."""
    m, n = und.shape
    one = np.int64(1)
    found = np.zeros(m * (n // 2) + 1, dtype=np.int64)     # a component has ≥ 2 nodes
    owner = np.zeros(found.shape[0], dtype=np.int64)
    count = 0
    for i in range(m):
        seen = np.int64(0)
        for v in range(n):
            if und[i, v] and not (seen >> v) & one:
                found[count] = _component_mask(und[i], v)
                owner[count] = i
                seen |= found[count]
                count += 1
    nodes = np.zeros((count, n), dtype=np.int64)
    shape = np.zeros((count, n), dtype=np.int64)
    local = np.zeros(n, dtype=np.int64)
    for j in range(count):
        comp = found[j]
        k = 0
        for u in range(n):
            if (comp >> u) & one:
                local[u] = k
                nodes[j, k] = u
                k += 1
        for a in range(k):
            u = nodes[j, a]
            row = np.int64(0)
            for b in range(n):
                if (und[owner[j], u] >> b) & one:
                    row |= one << local[b]
            shape[j, a] = row
    return owner[:count].copy(), nodes, shape


@njit(cache=True, nogil=True)
def _component_mask(und_row, v):
    """The nodes reachable from v along undirected edges (``und_row[u]``: u's undirected neighbours)."""
    comp = np.int64(1) << v
    frontier = comp
    while frontier:
        nxt = np.int64(0)
        for u in range(und_row.shape[0]):
            if (frontier >> u) & np.int64(1):
                nxt |= und_row[u]
        frontier = nxt & ~comp
        comp |= nxt
    return comp


@njit(cache=True, nogil=True)
def _closed_form_counts(shape):
    """The edges of each chain component (``shape[j]``: local neighbour masks, :func:`_chain_component_shapes`),
    local a < b in ascending (a, b), and where the component is a tree or a clique its counts in closed form:
    a tree on k nodes has k AMOs, one per root (the source of the orientation), and orients a → b exactly when
    its root lies on a's side of the edge, so #AMO(a → b) = |a's side|; a clique has k! (every order) and k!/2
    each way (for k > 20 only the float total, whose class then reaches 2^62). Returns (edge_start, edge_a,
    edge_b, forward, total, total_f, other): ``other[j]`` marks a component neither tree nor clique, whose
    ``forward`` and ``total`` are left 0 for :func:`_component_counts` to fill."""
    c, n = shape.shape
    one = np.int64(1)
    n_edges = np.zeros(c, dtype=np.int64)
    k_of = np.zeros(c, dtype=np.int64)
    for j in range(c):
        deg = 0
        for a in range(n):
            if shape[j, a]:
                k_of[j] += 1
                deg += _popcount(shape[j, a])
        n_edges[j] = deg // 2
    edge_start = np.zeros(c + 1, dtype=np.int64)
    for j in range(c):
        edge_start[j + 1] = edge_start[j] + n_edges[j]
    e = edge_start[c]
    edge_a = np.zeros(e, dtype=np.int64)
    edge_b = np.zeros(e, dtype=np.int64)
    forward = np.zeros(e, dtype=np.int64)
    total = np.zeros(c, dtype=np.int64)
    total_f = np.zeros(c)
    other = np.zeros(c, dtype=np.bool_)
    for j in range(c):
        k = k_of[j]
        tree = n_edges[j] == k - 1
        clique = n_edges[j] == k * (k - 1) // 2
        if tree:
            total[j] = k
            total_f[j] = k
        elif clique:
            f = 1.0
            for x in range(2, k + 1):
                f *= x
            total_f[j] = f
            if k <= 20:
                t = np.int64(1)
                for x in range(2, k + 1):
                    t *= x
                total[j] = t
        else:
            other[j] = True
        r = edge_start[j]
        for a in range(k):
            for b in range(a + 1, k):
                if (shape[j, a] >> b) & one:
                    edge_a[r] = a
                    edge_b[r] = b
                    if tree:                        # a's side: what a reaches without b
                        forward[r] = _popcount(_component_mask(shape[j] & ~(one << b), a))
                    elif clique:
                        forward[r] = total[j] // 2
                    r += 1
    return edge_start, edge_a, edge_b, forward, total, total_f, other


@njit(cache=True, nogil=True)
def _popcount(x):
    """The number of set bits of a non-negative int64."""
    count = 0
    while x:
        x &= x - np.int64(1)
        count += 1
    return count


#: variable sets as int64 bit masks work up to this many variables: :func:`credible_classes` computes
#: CPDAGs and admission in compiled code, and peeling keys its classes (``_Data.class_words``), up to it
MASK_MAX_VARIABLES = 62


@njit(cache=True, nogil=True)
def _meek_orients(x, y, dpa, und, adj):
    """Whether Meek's R1–R4 orient the undirected edge x — y as x → y (bit masks: ``dpa[v]`` the
    directed parents of v, ``und[v]`` its undirected neighbours, ``adj[v]`` all its neighbours)."""
    one = np.int64(1)
    if dpa[x] & ~adj[y] & ~(one << y):
        return True                                     # R1: a → x — y, a, y non-adjacent
    into_y = dpa[y]
    if into_y == 0:
        return False                                    # R2–R4 need an arrow into y
    both = und[x] & into_y
    rest, z = into_y, 0                                 # every z with z → y, lowest first
    while rest:
        if rest & one:
            if (dpa[z] >> x) & one:
                return True                             # R2: x → z → y
            if (both >> z) & one and both & ~adj[z] & ~(one << z):
                return True                             # R3: x — z → y, x — d → y, z, d non-adjacent
            if (adj[x] >> z) & one and dpa[z] & adj[x] & ~adj[y] & ~(one << y):
                return True                             # R4: x ~ c → z → y, x ~ z, c, y non-adjacent
        rest >>= one
        z += 1
    return False


@njit(cache=True, nogil=True)
def _adjacency_and_colliders(par, adj, col):
    """From a DAG's parent masks ``par[v]``: ``adj[v]`` its neighbours and ``col[c]`` the parents of c that
    have a non-adjacent co-parent (the parents in a v-structure a → c ← b at c). Given the skeleton, c's
    v-structures are exactly the non-adjacent pairs inside ``col[c]``, and they determine ``col[c]``."""
    n = len(par)
    one = np.int64(1)
    adj[:] = 0
    for c in range(n):
        adj[c] |= par[c]
        for u in range(n):
            if (par[c] >> u) & one:
                adj[u] |= one << c
    for c in range(n):
        vc = np.int64(0)
        for a in range(n):
            if (par[c] >> a) & one and par[c] & ~adj[a] & ~(one << a):
                vc |= one << a
        col[c] = vc


@njit(cache=True, nogil=True)
def _cpdag_masks(pm):
    """CPDAGs of DAGs given as parent masks ``pm[i, v]``: (directed parent masks, undirected neighbour
    masks), each (m, n). The v-structures oriented, then Meek's rules closed (Meek 1995) — the same graph
    as :func:`cpdag_edges_meek` and :func:`cpdag_edges` (tested on random DAGs)."""
    m, n = pm.shape
    dpa = np.zeros((m, n), dtype=np.int64)
    und = np.zeros((m, n), dtype=np.int64)
    adj = np.zeros(n, dtype=np.int64)
    one = np.int64(1)
    for i in range(m):
        _adjacency_and_colliders(pm[i], adj, dpa[i])   # the v-structures' arrows are compelled
        for c in range(n):
            rest = pm[i, c] & ~dpa[i, c]
            und[i, c] |= rest
            for a in range(n):
                if (rest >> a) & one:
                    und[i, a] |= one << c
        changed = True
        while changed:
            changed = False
            for x in range(n):
                row = und[i, x]                         # x's undirected neighbours, lowest first
                y = 0
                while row:
                    if row & one and (und[i, x] >> y) & one and _meek_orients(x, y, dpa[i], und[i], adj):
                        und[i, x] &= ~(one << y)
                        und[i, y] &= ~(one << x)
                        dpa[i, y] |= one << x
                        changed = True
                    row >>= one
                    y += 1
    return dpa, und


@njit(cache=True, nogil=True)
def _has_mask(sorted_masks, lo, end, x):
    """Whether ``x`` is in the sorted ``sorted_masks[lo:end]`` (binary search)."""
    hi = end
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_masks[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < end and sorted_masks[lo] == x


@njit(cache=True, nogil=True)
def _whole_class_admitted(dpa, und, fam, fstart, max_options):
    """1 where every parent set a node can take in the class — its directed parents plus a clique of its
    undirected neighbours (:func:`_parent_options`) — is among its families (``fam[fstart[v]:fstart[v+1]]``,
    sorted masks), so the table admits the whole class; 0 where one is missing or a node has more than
    ``max_options`` such sets (:func:`count_admitted` then decides by listing)."""
    m, n = dpa.shape
    out = np.ones(m, dtype=np.int8)
    one = np.int64(1)
    clique = np.zeros(n + 1, dtype=np.int64)         # the clique at each depth of the search
    cand = np.zeros(n + 1, dtype=np.int64)           # the neighbours that may still extend it (above its last)
    for i in range(m):
        for v in range(n):
            if not _has_mask(fam, fstart[v], fstart[v + 1], dpa[i, v]):
                out[i] = 0
                break
            # the cliques of v's undirected neighbours, each once (lowest candidate first: the ones left
            # are above it), so the work is the number of cliques, not 2^degree
            options = 1
            d = 0
            clique[0], cand[0] = 0, und[i, v]
            while d >= 0 and out[i]:
                r = cand[d]
                if r == 0:
                    d -= 1
                    continue
                b = r & -r
                a = 0
                while not (b >> a) & one:
                    a += 1
                cand[d] = r ^ b
                s = clique[d] | b
                options += 1
                if options > max_options or not _has_mask(fam, fstart[v], fstart[v + 1], dpa[i, v] | s):
                    out[i] = 0
                    break
                d += 1
                clique[d], cand[d] = s, (r ^ b) & und[i, a]
            if out[i] == 0:
                break
    return out


def _class_cpdags(items: Sequence[tuple[float, Parents]], families: Mapping[str, Any], nodes: Sequence[str]
                  ) -> tuple[list[CpdagEdges], np.ndarray, list[tuple[int, dict[Edge, float]] | None]]:
    """Each DAG's CPDAG as edge sets, whether the table admits its whole class (in compiled code:
    :func:`_cpdag_masks`, :func:`_whole_class_admitted`), and for each class the table admits whole its
    :func:`class_counts` — from its chain components counted by shape (:func:`_component_counts`; None for
    the other classes, and where the count reaches 2^62: :func:`class_counts` then counts in Python ints)."""
    index = {v: i for i, v in enumerate(nodes)}
    mask_of: dict[frozenset[str], int] = {}

    def mask(ps: Iterable[str]) -> int:
        key = ps if isinstance(ps, frozenset) else frozenset(ps)
        got = mask_of.get(key)
        if got is None:
            got = mask_of[key] = sum(1 << index[u] for u in key)
        return got

    none: frozenset[str] = frozenset()
    pm = np.zeros((len(items), len(nodes)), dtype=np.int64)
    for j, v in enumerate(nodes):               # a column at a time: the distinct sets of v are few
        column = [pa.get(v, none) for _, pa in items]
        for ps in set(column):
            mask(ps)
        pm[:, j] = [mask_of[ps if isinstance(ps, frozenset) else frozenset(ps)] for ps in column]
    fam_lists = [sorted(mask(ps) for ps in families[v]) for v in nodes]
    fstart = np.cumsum([0] + [len(f) for f in fam_lists]).astype(np.int64)
    fam = np.array([x for f in fam_lists for x in f], dtype=np.int64)
    dpa, und = _cpdag_masks(pm)
    whole = _whole_class_admitted(dpa, und, fam, fstart, MAX_PARENT_OPTIONS)
    indices_of: dict[int, list[int]] = {}       # a mask's variables (the same masks recur across classes)

    def indices(row: int) -> list[int]:
        got = indices_of.get(row)
        if got is None:
            got = indices_of[row] = [j for j in range(len(nodes)) if row >> j & 1]
        return got

    # one edge object per pair of variables, shared by every class that has the edge: a class's edge sets
    # and shares then hold references only (hailfinder500 BF 3, 56 variables: about 60 edges a class)
    arrow = [[(u, v) for v in nodes] for u in nodes]
    link = [[frozenset((u, v)) for v in nodes] for u in nodes]
    out = []
    for i in range(len(items)):
        directed = {arrow[a][c] for c, row in enumerate(dpa[i].tolist()) if row for a in indices(row)}
        undirected = {link[a][c] for c, row in enumerate(und[i].tolist()) if row
                      for a in indices(row & ((1 << c) - 1))}
        out.append((directed, undirected))
    return out, whole, _whole_class_shares(out, und, whole, arrow)


def _whole_class_shares(cpdags: Sequence[CpdagEdges], und: np.ndarray, whole: np.ndarray,
                        arrow: Sequence[Sequence[Edge]]) -> list[tuple[int, dict[Edge, float]] | None]:
    """:func:`class_counts` of the classes with ``whole`` set, by :func:`_component_counts`: the same sizes
    and the same shares (1 for a directed edge, #AMO(C; a → b)/#AMO(C) inside component C). ``arrow[a][b]``
    is the edge (a, b) of variables a and b, shared by every class."""
    rows = np.flatnonzero(whole)
    counts: list[tuple[int, dict[Edge, float]] | None] = [None] * len(cpdags)
    if len(rows) == 0:
        return counts
    comps = _component_counts(und[rows])
    bounds = comps.of_class().tolist()
    j = comps.edge_component()
    total = np.maximum(comps.total[j], 1)      # 0 only in a class flagged big, skipped below
    forth = (comps.forward / total).tolist()
    back = ((total - comps.forward) / total).tolist()
    u_of, v_of = comps.nodes[j, comps.edge_a].tolist(), comps.nodes[j, comps.edge_b].tolist()
    edge_start, sizes, big = (a.tolist() for a in (comps.edge_start, comps.size, comps.big))
    for r, i in enumerate(rows.tolist()):
        if big[r]:
            continue
        shares: dict[Edge, float] = dict.fromkeys(cpdags[i][0], 1.0)
        for e in range(edge_start[bounds[r]], edge_start[bounds[r + 1]]):
            u, v = u_of[e], v_of[e]
            shares[arrow[u][v]] = forth[e]
            shares[arrow[v][u]] = back[e]
        counts[i] = (sizes[r], shares)
    return counts


def expand_classes(mecs: Sequence[MEC], families: Mapping[str, Mapping[frozenset[str], float]],
                   nodes: Sequence[str], knowledge: Any = None,
                   limit: int | None = None) -> list[tuple[float, Parents]]:
    """Every admitted DAG of every class (that satisfies ``knowledge``), scored from ``families``
    (``--list-dags``), best first; with ``limit`` only the best ``limit`` of them.

    Classes are expanded best first (a class's admitted DAGs share its score when the score is
    score-equivalent), each lazily (:func:`dags_in_mec`), and the expansion stops once ``limit`` DAGs are
    listed, so memory is bounded by ``limit``, not by the classes' sizes (hailfinder500 BF 3 counts 5 M DAGs
    in 300 s)."""
    out: list[tuple[float, Parents]] = []
    for m in sorted(mecs, key=lambda c: -c.score):
        if limit is not None and len(out) >= limit:
            break
        for dag in dags_in_mec(m.cpdag, nodes):
            if all(dag[v] in families[v] for v in nodes) and (knowledge is None or knowledge.allows(dag)):
                out.append((math.fsum(float(families[v][dag[v]]) for v in nodes), dag))
                if limit is not None and len(out) >= limit:
                    break
    out.sort(key=lambda t: -t[0])
    return out


def _class_too_large(size: int, what: str) -> Exception:
    return InputError(f"{what} has {size} DAGs, more than the {MAX_CLASS_LISTED} bnilp lists to apply background "
                      "knowledge (bnilp.mec.MAX_CLASS_LISTED): its size under the knowledge is not computed")


def _shares(counts: Mapping[Edge, int], total: int) -> dict[Edge, float]:
    return {e: k / total for e, k in counts.items()} if total else {}


def knowledge_class(cpdag_or_dag: Any, nodes: Sequence[str], knowledge: Any,
                    max_listed: int = MAX_CLASS_LISTED, memo: dict[Any, Any] | None = None
                    ) -> tuple[int, dict[Edge, float]]:
    """(number of DAGs of the class that satisfy ``knowledge``, P(u → v) over them), exactly.

    Skeleton statements (adjacencies) hold for all DAGs of a class or for none. When the knowledge
    says nothing about ancestors it decides each arrow on its own, so — the chain components orienting
    independently (Andersson, Madigan & Perlman 1997) — the admitted DAGs are the products of each
    component's admitted AMOs: #K = Π_C #{AMOs of C with no forbidden and no reversed required arrow},
    and a share is counted inside its component. This is the number of DAG extensions of Meek's
    maximally oriented PDAG (Meek 1995: orient the known arrows, close under R1–R4), computed here
    (:func:`admitted_components`) by shape for a component the knowledge leaves free, else by listing its AMOs
    (:data:`MAX_CLASS_LISTED` per component). Ancestor statements are
    not per-arrow: the class is listed whole (same guard) and each DAG checked with ``allows``. A conditional
    independence or dependence holds for every DAG of the class or for none (Verma & Pearl 1990): one DAG
    decides it. Past the guard an :class:`~bnilp.errors.InputError` says so — never a silent miscount. ``memo``: as
    :func:`admitted_components`', for classes counted under the same knowledge.
    """
    return _admitted_under(_cpdag_of(cpdag_or_dag), nodes, knowledge, None, max_listed, memo)


def _class_admits(cp: CpdagEdges, nodes: Sequence[str], knowledge: Any) -> bool:
    """The statements that hold for every DAG of the class or for none: the adjacencies (required, forbidden),
    the directed edges' arrows, and each conditional independence or dependence (Verma & Pearl 1990: one DAG
    decides it)."""
    directed, und = cp
    forbidden = knowledge.forbidden_arrows()
    required = set(knowledge.required)
    skeleton_ = {frozenset(e) for e in directed} | und
    if (any(e in forbidden or (e[1], e[0]) in required for e in directed)
            or any(frozenset(e) not in skeleton_ for e in (*knowledge.required_adjacent, *knowledge.required))
            or any(frozenset(e) in skeleton_ for e in knowledge.forbidden_adjacent)):
        return False
    if knowledge.independent or knowledge.dependent:
        one = next(dags_in_mec(cp, nodes))
        return (all(d_separated(one, a, b, z) for a, b, z in knowledge.independent)
                and not any(d_separated(one, a, b, z) for a, b, z in knowledge.dependent))
    return True


def _family_filter(knowledge: Any, families: Mapping[str, Any] | None = None
                   ) -> Callable[[str, frozenset[str]], bool]:
    """Whether a family (v, Π) passes ``knowledge``'s single-arrow statements (no forbidden parent, every
    required one: :meth:`~bnilp.knowledge.Knowledge.family_ok`) and, given ``families``, is in the table."""
    forbidden, required = knowledge.forbidden_arrows(), knowledge.required_parents()
    if families is None:
        return lambda v, ps: knowledge.family_ok(v, ps, forbidden, required)
    return lambda v, ps: ps in families[v] and knowledge.family_ok(v, ps, forbidden, required)


def _list_admitted(cpdag: Any, families: Mapping[str, Any], nodes: Sequence[str], knowledge: Any,
                   max_listed: int, memo: dict[Any, Any] | None = None) -> tuple[int, dict[Edge, float]]:
    """(count, shares) of the class's DAGs that both the table (``families``) and ``knowledge`` admit."""
    return _admitted_under(_cpdag_of(cpdag), nodes, knowledge, families, max_listed, memo)


def _admitted_under(cp: CpdagEdges, nodes: Sequence[str], knowledge: Any, families: Mapping[str, Any] | None,
                    max_listed: int, memo: dict[Any, Any] | None = None) -> tuple[int, dict[Edge, float]]:
    """:func:`knowledge_class` (``families`` None: every DAG of the class is in the problem) or
    :func:`_list_admitted`: chain component by chain component (:func:`admitted_components`) unless the knowledge
    holds ancestor statements, which are checked on the listed class."""
    if not _class_admits(cp, nodes, knowledge):
        return 0, {}
    if not (knowledge.required_ancestors or knowledge.forbidden_ancestors):
        try:
            return admitted_components(cp, nodes, _family_filter(knowledge, families), max_listed, memo)
        except ComponentTooLarge as big:
            raise _class_too_large(big.size, f"chain component {sorted(big.component)}") from None
    size = count_dags_in_mec(cp)
    if size > max_listed:
        raise _class_too_large(size, "a class")
    counts: dict[Edge, int] = {}
    total = 0
    for dag in dags_in_mec(cp, nodes):
        if (families is None or all(dag[v] in families[v] for v in nodes)) and knowledge.allows(dag):
            total += 1
            for c, ps in dag.items():
                for p in ps:
                    counts[(p, c)] = counts.get((p, c), 0) + 1
    return total, _shares(counts, total)


def pdag_from_shares(cpdag: Any, shares: Mapping[Edge, float]) -> CpdagEdges:
    """The CPDAG with every undirected edge that all counted DAGs orient one way (share 1) directed."""
    directed, und = _cpdag_of(cpdag)
    directed = set(directed)
    left = set()
    for e in und:
        u, v = sorted(e)
        if shares.get((u, v), 0.0) >= 1.0 - 1e-12:
            directed.add((u, v))
        elif shares.get((v, u), 0.0) >= 1.0 - 1e-12:
            directed.add((v, u))
        else:
            left.add(e)
    return directed, left
