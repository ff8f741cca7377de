"""Class enumeration on tables of at most one parent a variable: the credible classes are forests.

With at most one parent per variable a DAG is a branching. It has no v-structure, so its Markov equivalence
class is fixed by its skeleton alone (Verma & Pearl 1990), a forest F, and holds ∏_T |T| DAGs, one root per
tree T. Where the table holds every arrow's family in both directions and the score is score-equivalent,

    s(G) = Σ_v s(v | ∅) + Σ_{u—v ∈ F} w(u, v),   w(u, v) = s(v | {u}) − s(v | ∅) = s(u | {v}) − s(u | ∅),

(score equivalence of u → v and v → u, each beside the other variable's empty set), so every DAG of the class
scores the same, and the credible classes are the forests of the candidate-edge graph with
W(F) ≥ OPT − ε − Σ_v s(v | ∅). They are listed best first by Lawler's (1972) partition of the solution space
(Murty 1968 for assignments): a part is the forests holding its *included* edges and none of its *excluded*
ones; its best forest S is Kruskal's (1956) greedy on the positive free edges once the included ones are
merged (a forest is an independent set of the graphic matroid, and greedy on the contraction by an independent
set is optimal: Edmonds 1971); every other forest of the part either lacks an edge of S — the first missing
one, e_i, in S's order: e_1 … e_{i−1} included, e_i excluded — or holds all of S and more edges, which then
join S's trees and all weigh ≤ 0 (a positive free edge outside S closes a cycle in S): the first of them in a
fixed order, f_j, included, f_1 … f_{j−1} excluded. Those children partition the part without S, so every
forest is the best of exactly one part, and a part is kept only when its best forest is credible (then it
holds one): the parts looked at are the credible forests times (|S| + the f's).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from bnilp.compiled import njit

FREE, IN, OUT = 0, 1, 2


@dataclass
class ForestEdges:
    """The candidate edges u — v (u < v), heaviest first: weight w(u, v), and the family indices of
    v | {u} and u | {v}; ``empty[v]``: the family v | ∅."""

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    fam_uv: np.ndarray
    fam_vu: np.ndarray
    empty: np.ndarray
    #: the largest |w(u, v) − w(v, u)| met (rounding of a score-equivalent score)
    asymmetry: float


def one_parent_rows(data) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The sparse parent rows (:meth:`~bnilp.ilp.families._Data.parent_csr`: ``start``, ``idx``) and each
    family's number of parents, when ``data`` has families and none of more than one parent; else None."""
    if data.K == 0:
        return None
    start, idx = data.parent_csr()
    sizes = np.diff(start)
    if sizes.max(initial=0) > 1:
        return None
    return start, idx, sizes


def forest_edges(data, tolerance: float) -> ForestEdges | None:
    """The candidate edges of ``data`` (a :class:`~bnilp.ilp.families._Data`) when its classes are forests
    scored by their edges (module docstring): every variable has the empty family, every other family one
    parent, each arrow's reverse is in the table, and w(u, v) and w(v, u) differ by at most ``tolerance``.
    None otherwise."""
    rows = one_parent_rows(data)
    if rows is None:
        return None
    start, idx, sizes = rows
    empty = np.full(data.n, -1, dtype=np.int64)
    one: dict[tuple[int, int], int] = {}
    for k in range(data.K):
        c = int(data.child[k])
        if sizes[k] == 0:
            empty[c] = k
        else:
            one[(int(idx[start[k]]), c)] = k
    if (empty < 0).any():
        return None
    us, vs, ws, fuv, fvu = [], [], [], [], []
    asymmetry = 0.0
    for (p, c), k in one.items():
        back = one.get((c, p))
        if back is None:
            return None
        if p < c:
            w_pc = float(data.score[k] - data.score[empty[c]])
            w_cp = float(data.score[back] - data.score[empty[p]])
            asymmetry = max(asymmetry, abs(w_pc - w_cp))
            us.append(p)
            vs.append(c)
            ws.append(max(w_pc, w_cp))
            fuv.append(k)
            fvu.append(back)
    if asymmetry > tolerance:
        return None
    w = np.asarray(ws, dtype=float)
    order = np.lexsort((np.asarray(vs), np.asarray(us), -w)) if len(w) else np.zeros(0, dtype=np.int64)
    return ForestEdges(np.asarray(us, dtype=np.int64)[order], np.asarray(vs, dtype=np.int64)[order], w[order],
                       np.asarray(fuv, dtype=np.int64)[order], np.asarray(fvu, dtype=np.int64)[order], empty,
                       asymmetry)


@njit(cache=True)
def _find(parent: np.ndarray, x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def _best_forest(state: np.ndarray, eu: np.ndarray, ev: np.ndarray, ew: np.ndarray, n: int,
                 chosen: np.ndarray) -> float:
    """The heaviest forest holding the included edges and no excluded one (Kruskal on the positive free
    edges after merging the included ones); its edges marked in ``chosen``, its weight returned."""
    parent = np.arange(n)
    total = 0.0
    chosen[:] = False
    for e in range(len(state)):
        if state[e] == IN:
            a, b = _find(parent, eu[e]), _find(parent, ev[e])
            parent[a] = b
            total += ew[e]
            chosen[e] = True
    for e in range(len(state)):
        if state[e] == FREE and ew[e] > 0.0:
            a, b = _find(parent, eu[e]), _find(parent, ev[e])
            if a != b:
                parent[a] = b
                total += ew[e]
                chosen[e] = True
    return total


@njit(cache=True)
def _components(chosen: np.ndarray, eu: np.ndarray, ev: np.ndarray, n: int) -> np.ndarray:
    """Union-find roots of the forest ``chosen``, fully compressed: ``roots[x]`` names x's tree."""
    parent = np.arange(n)
    for e in range(len(chosen)):
        if chosen[e]:
            a, b = _find(parent, eu[e]), _find(parent, ev[e])
            parent[a] = b
    for x in range(n):
        parent[x] = _find(parent, x)
    return parent


@njit(cache=True)
def adjacency(chosen: np.ndarray, eu: np.ndarray, ev: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The forest ``chosen`` (a mask over the edges ``eu`` — ``ev``) as adjacency lists: x's neighbours are
    ``nbr[deg[x]:deg[x + 1]]``, each joined to x by the edge ``via[j]``."""
    deg = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(chosen)):
        if chosen[e]:
            deg[eu[e] + 1] += 1
            deg[ev[e] + 1] += 1
    for x in range(n):
        deg[x + 1] += deg[x]
    nbr = np.empty(deg[n], dtype=np.int64)
    via = np.empty(deg[n], dtype=np.int64)
    fill = deg[:n].copy()
    for e in range(len(chosen)):
        if chosen[e]:
            nbr[fill[eu[e]]], via[fill[eu[e]]] = ev[e], e
            fill[eu[e]] += 1
            nbr[fill[ev[e]]], via[fill[ev[e]]] = eu[e], e
            fill[ev[e]] += 1
    return deg, nbr, via


@njit(cache=True)
def _missing_children(state: np.ndarray, chosen: np.ndarray, eu: np.ndarray, ev: np.ndarray, ew: np.ndarray,
                      n: int, floor: float, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """The parts of Lawler's partition that lack an edge of the best forest ``chosen`` (weighing ``weight``;
    module docstring: e_1 … e_{i−1} included, e_i excluded) whose best forest weighs at least ``floor``: their
    edges e_i and best weights, at most n − 1 of them.

    Such a part's best forest is S − e_i + f, f the heaviest free positive edge outside S that joins the two sides
    of S − e_i, or S − e_i where there is none (its weight W − w(e_i) + max(0, w(f))): the best independent set of
    a matroid avoiding one element of a best one differs from it by one exchange (the replacement-edge lemma for
    spanning trees, e.g. Tarjan 1982; a forest of positive edges is a spanning tree of the graph with a vertex
    joined to every variable by an edge of weight 0, so f is that edge where no positive one joins the sides;
    a free positive edge from one side to another tree of S cannot exist, as S would take it), and the part's
    included edges (contracted) and excluded ones (deleted) leave a matroid. Each tree edge's f is found by
    path labelling: the non-tree edges heaviest first (``eu``, ``ev``, ``ew`` are in that order), each labelling
    the unlabelled edges of its tree path, which union-find jumps over once labelled — O(m α(n)) a forest, where a
    Kruskal pass per edge of S (as before) cost O(n·m)."""
    m = len(state)
    # S rooted: each tree's first variable its root; up_edge[x] is the edge from x to its parent
    deg, nbr, via = adjacency(chosen, eu, ev, n)
    parent = np.full(n, -1, dtype=np.int64)
    up_edge = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    tree = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    for r in range(n):
        if tree[r] >= 0:
            continue
        tree[r] = r
        stack[0] = r
        top = 1
        while top > 0:
            top -= 1
            a = stack[top]
            for j in range(deg[a], deg[a + 1]):
                b = nbr[j]
                if tree[b] < 0:
                    tree[b], parent[b], up_edge[b], depth[b] = r, a, via[j], depth[a] + 1
                    stack[top] = b
                    top += 1
    # path labelling: jump[x] is x while x's edge to its parent is unlabelled (or x is a root)
    label = np.full(m, -np.inf)
    jump = np.arange(n)
    for f in range(m):
        if chosen[f] or state[f] != FREE or not ew[f] > 0.0 or tree[eu[f]] != tree[ev[f]]:
            continue
        x, y = _find(jump, eu[f]), _find(jump, ev[f])
        while x != y:
            if depth[x] < depth[y]:
                x, y = y, x
            label[up_edge[x]] = ew[f]
            jump[x] = parent[x]
            x = _find(jump, x)
    edges = []
    weights = []
    for e in range(m):
        if chosen[e] and state[e] == FREE:
            w = weight - ew[e] + max(0.0, label[e])
            if w >= floor:
                edges.append(e)
                weights.append(w)
    return np.array(edges, dtype=np.int64), np.array(weights, dtype=np.float64)


@njit(cache=True)
def _next_extra(state: np.ndarray, roots: np.ndarray, eu: np.ndarray, ev: np.ndarray, after: int) -> int:
    """The first free edge past ``after`` that joins two trees of the best forest (``roots``: its trees) — the
    next part holding the whole best forest and more (module docstring: f_j); −1 when there is none. In edge
    order, so heaviest first: such a part's best forest is the best forest plus f_j."""
    for e in range(after + 1, len(state)):
        if state[e] == FREE and roots[eu[e]] != roots[ev[e]]:
            return e
    return -1


@njit(cache=True)
def _missing_state(state: np.ndarray, chosen: np.ndarray, edge: int) -> np.ndarray:
    """The part lacking ``edge`` of the best forest ``chosen``: the earlier free edges of it included, ``edge``
    excluded."""
    child = state.copy()
    for e in range(edge):
        if chosen[e] and state[e] == FREE:
            child[e] = IN
    child[edge] = OUT
    return child


@njit(cache=True)
def _extra_state(state: np.ndarray, chosen: np.ndarray, roots: np.ndarray, edge: int, eu: np.ndarray,
                 ev: np.ndarray) -> np.ndarray:
    """The part holding the best forest ``chosen`` (trees ``roots``) and the extra ``edge``: the forest included,
    the earlier free edges joining two of its trees excluded, ``edge`` included."""
    child = state.copy()
    for e in range(len(state)):
        if chosen[e]:
            child[e] = IN
        elif e < edge and state[e] == FREE and roots[eu[e]] != roots[ev[e]]:
            child[e] = OUT
    child[edge] = IN
    return child


def heaviest_forest(edges: ForestEdges, n: int) -> tuple[float, np.ndarray]:
    """The heaviest forest of ``edges`` (Kruskal on the positive edges): its weight and edge mask."""
    chosen = np.zeros(len(edges.w), dtype=np.bool_)
    return _best_forest(np.zeros(len(edges.w), dtype=np.int8), edges.u, edges.v, edges.w, n, chosen), chosen


@dataclass
class _Part:
    """A part of the partition whose best forest was listed: its state and best forest as bits, the weight, the
    parts lacking an edge of it (edges and weights, heaviest first) and how many of those are in the heap or
    gone, and the last extra edge handed out (the parts holding all of it and more come lazily, in edge order).
    :class:`~bnilp.ilp.branchings.BranchingLister` keeps bounds on the missing parts' weights in their place."""

    included: np.ndarray
    excluded: np.ndarray
    best: np.ndarray
    weight: float
    missing: np.ndarray
    missing_weights: np.ndarray
    next_missing: int = 0
    last_extra: int = -1


class ForestLister:
    """The forests of ``edges`` weighing at least ``floor``, heaviest first (ties in the order their parts were
    made): :meth:`next_forest` gives the next one's weight and edge mask, None when there is none left.

    Each listed part keeps its state as bits (:class:`_Part`, m/2.7 bytes for m candidate edges) and its at most
    n − 1 parts lacking an edge of its forest; the heap holds, per listed part, only its next such part and its
    next extra-edge part (the extra edges' parts come in edge order, which is their weight order), so it grows with
    the forests listed, not with the parts looked at (every extra edge a part: m heap entries a forest before)."""

    def __init__(self, edges: ForestEdges, n: int, floor: float):
        self.edges, self.n, self.floor = edges, n, floor
        self.parts = 0
        self._m = len(edges.w)
        best, _ = heaviest_forest(edges, n)
        self._listed: list[_Part] = []
        #: (−weight, order made, listed part, 0 = lacking its missing[k] / 1 = its extra edge k, k)
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._made = 0
        if best >= floor:
            self._heap.append((-best, 0, -1, 0, -1))

    @property
    def done(self) -> bool:
        return not self._heap

    def _push(self, weight: float, part: int, kind: int, k: int) -> None:
        self._made += 1
        self.parts += 1
        heapq.heappush(self._heap, (-weight, self._made, part, kind, k))

    def _push_missing(self, index: int) -> None:
        part = self._listed[index]
        k = part.next_missing
        if k < len(part.missing):
            part.next_missing += 1
            self._push(float(part.missing_weights[k]), index, 0, k)

    def _push_extra(self, index: int, state: np.ndarray, roots: np.ndarray) -> None:
        part = self._listed[index]
        e = self.edges
        nxt = _next_extra(state, roots, e.u, e.v, part.last_extra)
        if nxt >= 0 and part.weight + e.w[nxt] >= self.floor:
            part.last_extra = nxt
            self._push(part.weight + float(e.w[nxt]), index, 1, nxt)

    def _state(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        part, m = self._listed[index], self._m
        state = (np.unpackbits(part.included, count=m).astype(np.int8) * IN
                 + np.unpackbits(part.excluded, count=m).astype(np.int8) * OUT)
        return state, np.unpackbits(part.best, count=m).astype(np.bool_)

    def next_forest(self) -> tuple[float, np.ndarray] | None:
        if not self._heap:
            return None
        e = self.edges
        _, _, parent, kind, k = heapq.heappop(self._heap)
        if parent < 0:
            state = np.zeros(self._m, dtype=np.int8)
        else:
            parent_state, parent_best = self._state(parent)
            if kind == 0:
                state = _missing_state(parent_state, parent_best, int(self._listed[parent].missing[k]))
                self._push_missing(parent)
            else:
                roots = _components(parent_best, e.u, e.v, self.n)
                state = _extra_state(parent_state, parent_best, roots, k, e.u, e.v)
                self._push_extra(parent, parent_state, roots)
        chosen = np.zeros(self._m, dtype=np.bool_)
        weight = _best_forest(state, e.u, e.v, e.w, self.n, chosen)
        missing, weights = _missing_children(state, chosen, e.u, e.v, e.w, self.n, self.floor, weight)
        order = np.lexsort((missing, -weights))
        self._listed.append(_Part(np.packbits(state == IN), np.packbits(state == OUT), np.packbits(chosen), weight,
                                  missing[order], weights[order]))
        here = len(self._listed) - 1
        self._push_missing(here)
        self._push_extra(here, state, _components(chosen, e.u, e.v, self.n))
        return weight, chosen


def representative(edges: ForestEdges, chosen: np.ndarray, n: int) -> np.ndarray:
    """A DAG of the forest's class as family indices, one per variable: each tree rooted at its smallest
    variable (the empty family), every other variable's parent its neighbour towards the root."""
    adj: list[list[int]] = [[] for _ in range(n)]
    fam: dict[tuple[int, int], int] = {}
    for e in np.flatnonzero(chosen):
        a, b = int(edges.u[e]), int(edges.v[e])
        adj[a].append(b)
        adj[b].append(a)
        fam[(a, b)] = int(edges.fam_uv[e])      # b | {a}
        fam[(b, a)] = int(edges.fam_vu[e])      # a | {b}
    row = np.full(n, -1, dtype=np.int64)
    for r in range(n):
        if row[r] >= 0:
            continue
        row[r] = edges.empty[r]
        stack = [r]
        while stack:
            a = stack.pop()
            for b in adj[a]:
                if row[b] < 0:
                    row[b] = fam[(a, b)]
                    stack.append(b)
    return row
