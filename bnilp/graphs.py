"""Shared graph helpers: a parent map as a ``networkx.DiGraph``, its directed cycle, its topological order
(of a DAG, or of a CPDAG's directed part).

A *parent map* gives each variable the names of its parents; its graph has an edge p → v for each parent p
of v. The helpers live here once, light (networkx only), so that the metrics, the exports, the simulator,
the CLI and the search all read a network the same way and name a cycle with the same words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx as nx

from bnilp.errors import InputError

#: a parent map: each variable → the names of its parents
ParentMap = Mapping[str, Iterable[str]]


def parent_lists(parents: object, what: str) -> dict[str, list[str]]:
    """A parent map a caller gave (each variable → its parents: a list, tuple or set of names) with its names as
    strings and each variable's parents as a list. A string where the parents are wanted is *one* name, never its
    letters (as the API reads a string everywhere a list of names is wanted); a map that is no dict, or parents
    that are no collection of names, is an :class:`InputError` naming ``what``."""
    if not isinstance(parents, Mapping):
        raise InputError(f"{what} must be a dict of each variable → its parents, got {type(parents).__name__}")
    out: dict[str, list[str]] = {}
    for child, ps in parents.items():
        if isinstance(ps, str):
            ps = [ps]
        elif isinstance(ps, (bytes, Mapping)) or not isinstance(ps, Iterable):
            raise InputError(f"{what}: the parents of {child!r} must be a list of names, got {ps!r}")
        out[str(child)] = [str(p) for p in ps]
    return out


def to_digraph(parents: ParentMap, nodes: Iterable[str] | None = None) -> nx.DiGraph:
    """The network as a DiGraph: every variable a node (``nodes`` first, in their order, then the parent
    map's keys), an edge parent → child per arrow (by child, parents sorted)."""
    graph = nx.DiGraph()
    if nodes is not None:
        graph.add_nodes_from(nodes)
    graph.add_nodes_from(parents)
    for child, ps in parents.items():
        graph.add_edges_from((p, child) for p in sorted(ps))
    return graph


def directed_cycle(parents: ParentMap) -> list[str] | None:
    """The nodes of one directed cycle of the parent map's graph, in the cycle's order (``[a, b]`` for
    a → b → a), or ``None`` when the graph is a DAG."""
    graph = to_digraph(parents)
    if nx.is_directed_acyclic_graph(graph):
        return None
    return [u for u, _ in nx.find_cycle(graph)]


def cycle_text(cycle: list[str]) -> str:
    """A cycle as the words the messages use: ``a → b → a``."""
    return " → ".join([*cycle, cycle[0]])


def check_acyclic(parents: ParentMap, what: str, why: str = "") -> None:
    """An :class:`InputError` when the parent map has a directed cycle, naming it::

        {what}: the network has a directed cycle (a → b → a)[; {why}]
    """
    cycle = directed_cycle(parents)
    if cycle is not None:
        raise InputError(f"{what}: the network has a directed cycle ({cycle_text(cycle)})"
                         + (f"; {why}" if why else ""))


def dag_order(parents: ParentMap) -> list:
    """A topological order of a DAG's parent map (parents before children), fast and without networkx, for
    the search's inner loops: Kahn (1962) with a stack seeded by the roots in sorted order, so one map gives
    one order. Every parent must be a key. Raises InputError on an unknown parent or a cycle."""
    indeg = {v: 0 for v in parents}
    children: dict = {v: [] for v in parents}
    try:
        for v, ps in parents.items():
            for p in ps:
                children[p].append(v)
                indeg[v] += 1
    except KeyError as exc:
        raise InputError(f"parents: parent {exc.args[0]!r} is not a variable (a key) of the parent map") from None
    stack = sorted((v for v, d in indeg.items() if d == 0), reverse=True)
    order = []
    while stack:
        v = stack.pop()
        order.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                stack.append(c)
    if len(order) != len(indeg):
        raise InputError("parents: the parent map has a directed cycle")
    return order


def topological_order(parents: ParentMap, order: Iterable[str] | None = None) -> list[str]:
    """A topological order of the directed part of ``parents`` (u → v where u is a parent of v and v is
    not a parent of u: a CPDAG's undirected edge u — v is both ways round and orders nothing); ties are
    broken by ``order`` (default: the keys' order). Kahn (1962) with a lexicographic queue."""
    names = list(order) if order is not None else list(parents)
    rank = {v: i for i, v in enumerate(names)}
    for v in parents:
        rank.setdefault(v, len(rank))
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    graph.add_edges_from((p, v) for v, ps in parents.items() for p in ps if v not in set(parents.get(p, ())))
    try:
        return list(nx.lexicographical_topological_sort(graph, key=lambda v: rank[v]))
    except nx.NetworkXUnfeasible:
        raise InputError(f"parents: the directed part has a cycle ({cycle_text([u for u, _ in nx.find_cycle(graph)])})"
                         ) from None


def d_connecting_arcs(parents: Mapping, a, b, given: Iterable = (), ancestral: Iterable | None = None
                      ) -> list[tuple] | None:
    """Arrows (u, v), u → v, of the graph of ``parents`` (any hashable nodes; cyclic or not) that make ``a`` and
    ``b`` d-connected given ``given``: the arrows of one active trail between them, and for each collider on it
    outside ``given`` the arrows of a directed path from it into ``given``. None when ``given`` d-separates them.

    The trail is found by the reachability search over (node, direction) of Shachter (1998, "Bayes-ball") as
    Koller & Friedman (2009, Algorithm 3.1) write it: a node reached from a child (going up) passes on to its
    parents and children unless it is in ``given``; a node reached from a parent (going down) passes on to its
    children unless it is in ``given``, and to its parents when it is in ``given`` or an ancestor of a member
    (an active collider). Breadth first, so the trail is a shortest one.

    Invariant (what a cut over these arrows rests on): every DAG that holds all the returned arrows d-connects
    ``a`` and ``b`` given ``given`` — the trail's colliders and non-colliders are fixed by its own arrows, a
    non-collider is outside ``given`` by name, and each collider outside ``given`` is an ancestor of a member by
    the directed path returned with it (a trail that visits a node twice is active exactly when some path is,
    Koller & Friedman 2009, Theorem 3.4).

    ``ancestral``: the nodes to take for ``given`` and its ancestors, where more is known than the graph shows
    (background knowledge's required ancestor relations); the colliders' paths are then those the graph holds,
    and the invariant holds for the DAGs in which every node of ``ancestral`` is an ancestor of ``given`` or in
    it. Default: ``given`` and its ancestors in the graph."""
    given = set(given)
    children: dict = {}
    for v, ps in parents.items():
        for p in ps:
            children.setdefault(p, []).append(v)
    known = ancestral is not None
    ancestral = set(given) | (set(ancestral) if known else set())
    stack = [] if known else list(given)      # given and its ancestors in the graph
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in ancestral:
                ancestral.add(p)
                stack.append(p)
    up, down = 0, 1
    start = (a, up)
    came: dict = {start: None}      # state → (previous state, arrow)
    queue = [start]
    end = None
    for state in queue:             # the list grows as it is read: breadth first
        v, way = state
        if v == b and v != a:
            end = state
            break
        steps = []
        if way == up and v not in given:
            steps += [((p, up), (p, v)) for p in sorted(parents.get(v, ()), key=repr)]
            steps += [((c, down), (v, c)) for c in sorted(children.get(v, ()), key=repr)]
        elif way == down:
            if v not in given:
                steps += [((c, down), (v, c)) for c in sorted(children.get(v, ()), key=repr)]
            if v in ancestral:
                steps += [((p, up), (p, v)) for p in sorted(parents.get(v, ()), key=repr)]
        for nxt, arrow in steps:
            if nxt not in came:
                came[nxt] = (state, arrow)
                queue.append(nxt)
    if end is None:
        return None
    arcs: list[tuple] = []
    state = end
    while came[state] is not None:
        prev, arrow = came[state]
        arcs.append(arrow)
        if prev[1] == down and state[1] == up and prev[0] not in given:     # an active collider outside given
            arcs += _path_into(prev[0], given, children, strict=not known)
        state = prev
    return list(dict.fromkeys(arcs))


def _path_into(v, targets: set, children: Mapping, strict: bool = True) -> list[tuple]:
    """The arrows of a shortest directed path from ``v`` to a member of ``targets`` (one exists when ``strict``;
    else none where there is none)."""
    came = {v: None}
    queue = [v]
    for u in queue:
        if u in targets:
            path = []
            while came[u] is not None:
                path.append((came[u], u))
                u = came[u]
            return path
        for c in sorted(children.get(u, ()), key=repr):
            if c not in came:
                came[c] = u
                queue.append(c)
    if strict:
        raise AssertionError(f"{v!r} is not an ancestor of the conditioning set")
    return []


def d_separated(parents: Mapping, a, b, given: Iterable = ()) -> bool:
    """Whether ``given`` d-separates ``a`` and ``b`` in the DAG of ``parents`` (Pearl 1988)."""
    return d_connecting_arcs(parents, a, b, given) is None
