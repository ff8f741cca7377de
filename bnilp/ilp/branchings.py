"""Phases 1 and 2 on tables of at most one parent a variable that the forests do not serve: arrow knowledge.

With at most one parent per variable a DAG is a *branching*, and with a root node r joined to every variable
whose empty family is in the table, a spanning arborescence of r's graph: variable v's in-arc is u → v (the
family v | {u}) or r → v (v | ∅). Its score is

    s(G) = Σ_v b_v + Σ_{arcs a} w(a),   b_v = s(v | ∅) (or, where v has no empty family, its only family's score),
    w(u → v) = s(v | {u}) − b_v,  w(r → v) = 0,

so the best DAG is the maximum spanning arborescence (Chu & Liu 1965; Edmonds 1967) — exact for any table of
one-parent families, with any of its arrows missing: tiers, forbidden arrows and adjacencies, required arrows
(:func:`bnilp.knowledge.restrict_table` leaves the families that agree with them). :mod:`bnilp.ilp.forests` needs
every arrow held both ways (Kruskal on the skeleton); with arrows missing branch-and-cut alone did not prove OPT
in 200 s at 500 variables (a review), where the arborescence takes milliseconds.

Every other credible DAG or class comes from Lawler's (1972) partition of the solution space, best first, as in
:mod:`bnilp.ilp.forests`: a part fixes some *items* in (included) and some out (excluded); its best solution S
is an arborescence with the included items given a weight above every sum of scores (lexicographic weights
(number of included items, score): the arborescence holds them all iff the part is not empty); the rest of the
part are the parts lacking an item of S — its free items e_1 … e_k in a fixed order, e_1 … e_{i−1} included and
e_i excluded — and, for classes, the parts holding S and more.

- **DAGs** (:class:`DagLister`): an item is an arc (the root's arcs too); S has one in-arc per variable, so
  no DAG holds S and more: the k parts lacking an arc partition the part without S.
- **Classes** (:class:`ClassLister`): a branching has no v-structure, so its class is fixed by its skeleton, a
  forest (Verma & Pearl 1990), and the class is *admitted* when some rooting of each tree uses only arcs of the
  table (:func:`bnilp.mec.credible_classes` counts those rootings). An item is an undirected edge; the best of a
  part is the best admitted DAG whose skeleton holds the included edges and no excluded one. Its rootings score
  alike for a score-equivalent score (each arc's weight the same both ways, up to rounding: ``asymmetry``).
  The parts holding S and more: an admitted forest F ⊋ S of the part has every subforest that keeps each
  required parent's edge admitted (root a subforest's tree where the root of F's tree enters it; that vertex has
  its empty family, for a vertex without one keeps its required parent's edge in the same tree), so S + f is
  admitted and in the part for every extra edge f of F, hence w(f) ≤ 0 by S's optimality and
  W(F) ≤ W(S) + w(f): the best of "S and more, f_1 … f_{j−1} out, f_j in" is S + f_j, and those parts
  come lazily in edge order (heaviest first), skipping the f whose S + f is not admitted (nor is any forest
  holding S + f then). S + {a, b} (a, b in trees T_a ≠ T_b) is admitted iff the table has a → b and T_b can
  be rooted at b with arcs of the table, or the same with a and b swapped.

A part is solved only when the heap reaches it: it enters with an upper bound on its best from the LP duals of
its parent's arborescence (:func:`_arborescence`: the DAGs lacking S's arc into v weigh at most W(S) less the
least reduced weight of another arc into v), and where its best is not the heaviest left it waits under its
exact weight; a part whose bound falls below the floor (or the cap's last) is never solved. The forests' exchange
rule (one exchange from S, all of a forest's parts in O(m α)) has no counterpart for arborescences (the
intersection of two matroids), so a listed part costs the arborescences of the parts the heap reaches: 3,000
variables in five tiers, about 120 a class at 7 ms each (README, "branchings").
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from bnilp.compiled import njit
from bnilp.ilp.forests import (
    FREE,
    IN,
    OUT,
    _components,
    _extra_state,
    _missing_state,
    _Part,
    adjacency,
    one_parent_rows,
)


@dataclass
class BranchingArcs:
    """The arcs of a one-parent table: ``tail[a]`` (−1: the root, i.e. the empty family), ``head[a]``, the weight
    ``w[a]`` = s(head | {tail}) − ``base[head]`` (0 for a root arc) and the family ``fam[a]``; ``edge[a]`` the
    undirected edge u — v (u < v) of a parent arc (−1 for a root arc), and per edge ``eu``, ``ev``, ``ew`` (the
    heavier of its arcs; edges heaviest first) and whether the table holds u → v (``has_uv``) and v → u
    (``has_vu``). ``required``: edges in every DAG of the table (a variable without an empty family has one
    family, its required parent; :attr:`~bnilp.knowledge.Knowledge.required_adjacent`)."""

    n: int
    tail: np.ndarray
    head: np.ndarray
    w: np.ndarray
    fam: np.ndarray
    edge: np.ndarray
    base: np.ndarray
    eu: np.ndarray
    ev: np.ndarray
    ew: np.ndarray
    has_uv: np.ndarray
    has_vu: np.ndarray
    required: np.ndarray
    #: the largest |w(u → v) − w(v → u)| over arrows held both ways (rounding of a score-equivalent score)
    asymmetry: float

    @property
    def base_score(self) -> float:
        return float(np.sum(self.base))


def branching_arcs(data, required_adjacent: list[tuple[int, int]] | None = None) -> BranchingArcs | None:
    """The arcs of ``data`` (a :class:`~bnilp.ilp.families._Data`) when every family has at most one parent and
    every variable has its empty family or a single family (a required parent); None otherwise.
    ``required_adjacent``: variable index pairs that every DAG must join (None where there are none)."""
    rows = one_parent_rows(data)
    if rows is None:
        return None
    start, idx, sizes = rows
    n = data.n
    empty = np.full(n, -1, dtype=np.int64)
    count = np.bincount(np.asarray(data.child, dtype=np.int64), minlength=n)
    for k in np.flatnonzero(sizes == 0):
        empty[int(data.child[k])] = k
    if ((empty < 0) & (count != 1)).any():
        return None
    base = np.empty(n)
    for v in range(n):
        base[v] = data.score[empty[v]] if empty[v] >= 0 else data.score[int(data.start[v])]
    parent_of = {}
    for k in np.flatnonzero(sizes == 1):
        parent_of[(int(idx[start[k]]), int(data.child[k]))] = int(k)
    pairs = sorted({(min(p, c), max(p, c)) for p, c in parent_of})
    edge_id = {pair: i for i, pair in enumerate(pairs)}
    tails, heads, ws, fams, edges = [], [], [], [], []
    for v in range(n):
        if empty[v] >= 0:
            tails.append(-1), heads.append(v), ws.append(0.0), fams.append(int(empty[v])), edges.append(-1)
    ew = np.full(len(pairs), -np.inf)
    has_uv = np.zeros(len(pairs), dtype=np.bool_)
    has_vu = np.zeros(len(pairs), dtype=np.bool_)
    asymmetry = 0.0
    for (p, c), k in parent_of.items():
        e = edge_id[(min(p, c), max(p, c))]
        w = float(data.score[k] - base[c])
        tails.append(p), heads.append(c), ws.append(w), fams.append(k), edges.append(e)
        ew[e] = max(ew[e], w)
        if p < c:
            has_uv[e] = True
        else:
            has_vu[e] = True
        back = parent_of.get((c, p))
        if back is not None and empty[p] >= 0 and empty[c] >= 0:
            asymmetry = max(asymmetry, abs(w - float(data.score[back] - base[p])))
    required = np.zeros(len(pairs), dtype=np.bool_)
    for v in np.flatnonzero(empty < 0):
        k = int(data.start[v])
        required[edge_id[tuple(sorted((int(idx[start[k]]), int(v))))]] = True
    for a, b in required_adjacent or ():
        e = edge_id.get((min(a, b), max(a, b)))
        if e is None:
            return None             # no arrow of the table joins them: no DAG agrees (branch-and-cut says so)
        required[e] = True
    # edges heaviest first (then by their variables), as the extra edges are handed out in that order
    order = np.lexsort((np.array([p[1] for p in pairs], dtype=np.int64), np.array([p[0] for p in pairs],
                                                                                    dtype=np.int64), -ew))
    rank = np.empty(len(pairs), dtype=np.int64)
    rank[order] = np.arange(len(pairs))
    edge = np.array(edges, dtype=np.int64)
    edge[edge >= 0] = rank[edge[edge >= 0]]
    eu = np.array([p[0] for p in pairs], dtype=np.int64)[order] if pairs else np.zeros(0, dtype=np.int64)
    ev = np.array([p[1] for p in pairs], dtype=np.int64)[order] if pairs else np.zeros(0, dtype=np.int64)
    return BranchingArcs(n, np.array(tails, dtype=np.int64), np.array(heads, dtype=np.int64), np.array(ws),
                         np.array(fams, dtype=np.int64), edge, base, eu, ev, ew[order], has_uv[order],
                         has_vu[order], required[order], asymmetry)


@njit(cache=True)
def _find(uf: np.ndarray, x: int) -> int:
    r = x
    while uf[r] != r:
        r = uf[r]
    while uf[x] != r:
        uf[x], x = r, uf[x]
    return r


@njit(cache=True)
def _arborescence(nn: int, tail: np.ndarray, head: np.ndarray, wi: np.ndarray, wf: np.ndarray,
                  alive: np.ndarray, chosen: np.ndarray, rc_i: np.ndarray, rc_f: np.ndarray,
                  pair_i: np.ndarray, pair_f: np.ndarray) -> bool:
    """The maximum spanning arborescence of nodes 0 … nn − 1 rooted at 0 over the ``alive`` arcs, weights
    (``wi``, ``wf``) compared lexicographically (Chu & Liu 1965; Edmonds 1967): each node takes its heaviest
    in-arc; following them from node to node, a cycle is contracted into a new node whose in-arcs, entering it
    at v, weigh less by v's chosen arc (a potential per variable, raised by that arc's weight), and the walk
    goes on from it (Tarjan's 1977 order, each contraction scanning its variables' in-arcs); then unfolded from
    the top, the arc entering a contracted node going to the member it enters and the others keeping their
    cycle arcs. ``chosen[v]``: the arc into v (0: −1). False when no arborescence exists (a node no arc reaches).

    ``rc_i``, ``rc_f``: each alive arc's reduced weight rc(a) = μ(X) − w′(a), X the node that a enters when it
    is last between two nodes, w′(a) its weight then and μ(X) X's heaviest (each ≥ 0; dead arcs get (1, ∞)).
    They are the LP dual's (Edmonds 1967; the duals μ of the contracted node sets, e.g. Schrijver 2003,
    § 52.5): w(a) is the sum of μ over the node sets that a enters, less rc(a), and the optimum S the sum of
    every μ, while any arborescence T enters each of them at least once — so W(T) ≤ W(S) − Σ_{a ∈ T} rc(a)
    (the μ of a contracted set is ≤ 0 and is met once by S, so entering it more often only lowers W(T)), the
    bound :func:`_missing_parts` uses. ``pair_i``, ``pair_f``: for an arc between two variables contracted as a
    cycle of their own, that pair's μ (≤ 0; else 0): a T with neither arc between them enters the pair twice, so
    W(T) ≤ W(S) + μ − Σ_{a ∈ T} rc(a)."""
    m = len(tail)
    rc_i[:] = 1
    rc_f[:] = np.inf
    pair_i[:] = 0
    pair_f[:] = 0.0
    big = 2 * nn
    # the alive in-arcs of each variable
    start = np.zeros(nn + 1, dtype=np.int64)
    for a in range(m):
        if alive[a]:
            start[head[a] + 1] += 1
    for v in range(nn):
        start[v + 1] += start[v]
    arcs_in = np.empty(start[nn], dtype=np.int64)
    fill = start[:nn].copy()
    for a in range(m):
        if alive[a]:
            arcs_in[fill[head[a]]] = a
            fill[head[a]] += 1
    # each node's in-arcs from outside it: pool[at[x] : at[x] + n_in[x]] (a variable's first, then each
    # contracted node's, made from its members' as it is made)
    pool = np.empty(2 * start[nn] + 16, dtype=np.int64)
    pool[:start[nn]] = arcs_in
    used = start[nn]
    at = np.zeros(big, dtype=np.int64)
    n_in = np.zeros(big, dtype=np.int64)
    at[:nn] = start[:nn]
    n_in[:nn] = start[1:] - start[:nn]
    uf = np.arange(big)                          # each node's top node (compressed)
    up = np.full(big, -1, dtype=np.int64)        # the node it was contracted into
    kid = np.full(big, -1, dtype=np.int64)       # a contracted node's first member, then the members' next
    sib = np.full(big, -1, dtype=np.int64)
    first = np.full(big, -1, dtype=np.int64)     # the variables of a node, a linked list
    last = np.full(big, -1, dtype=np.int64)
    nxt = np.full(nn, -1, dtype=np.int64)
    for v in range(nn):
        first[v] = v
        last[v] = v
    sub_i = np.zeros(nn, dtype=wi.dtype)         # the potential of each variable
    sub_f = np.zeros(nn)
    best = np.full(big, -1, dtype=np.int64)
    mu_i = np.zeros(big, dtype=wi.dtype)
    mu_f = np.zeros(big)
    internal = np.zeros(m, dtype=np.bool_)
    pairs = np.zeros(2, dtype=np.int64)
    for v in range(1, nn):
        for j in range(start[v], start[v + 1]):
            a = arcs_in[j]
            if best[v] < 0 or wi[a] > mu_i[v] or (wi[a] == mu_i[v] and wf[a] > mu_f[v]):
                best[v], mu_i[v], mu_f[v] = a, wi[a], wf[a]
        if best[v] < 0:
            return False
    mark = np.zeros(big, dtype=np.int8)          # 0 not seen, 1 on the walk, 2 reaches the root
    mark[0] = 2
    path = np.empty(big, dtype=np.int64)
    made = nn
    for s in range(1, nn):
        x = _find(uf, s)
        if mark[x] != 0:
            continue
        depth = 0
        path[depth] = x
        depth += 1
        mark[x] = 1
        while True:
            y = _find(uf, tail[best[x]])
            if mark[y] == 2:
                for i in range(depth):
                    mark[path[i]] = 2
                break
            if mark[y] == 0:
                path[depth] = y
                depth += 1
                mark[y] = 1
                x = y
                continue
            # a cycle: the walk from y to x; contract it into node c
            c = made
            made += 1
            while True:
                depth -= 1
                z = path[depth]
                uf[z], up[z] = c, c
                sib[z], kid[c] = kid[c], z
                u = first[z]
                while u >= 0:
                    sub_i[u] += mu_i[z]
                    sub_f[u] += mu_f[z]
                    u = nxt[u]
                if first[c] < 0:
                    first[c], last[c] = first[z], last[z]
                else:
                    nxt[last[c]] = first[z]
                    last[c] = last[z]
                if z == y:
                    break
            # c's in-arcs: its members' that come from outside it (the others inside now, last between two
            # nodes just before), kept as c's own list
            need = used
            z = kid[c]
            while z >= 0:
                need += n_in[z]
                z = sib[z]
            if need > len(pool):
                grown = np.empty(max(need, 2 * len(pool)), dtype=np.int64)
                grown[:used] = pool[:used]
                pool = grown
            at[c] = used
            inner = 0
            z = kid[c]
            while z >= 0:
                for j in range(at[z], at[z] + n_in[z]):
                    a = pool[j]
                    u = head[a]
                    ai = wi[a] - sub_i[u]
                    af = wf[a] - sub_f[u]
                    if _find(uf, tail[a]) == c:
                        internal[a] = True
                        rc_i[a], rc_f[a] = -ai, -af
                        if inner < 2:
                            pairs[inner] = a
                        inner += 1
                        continue
                    pool[used] = a
                    used += 1
                    if best[c] < 0 or ai > mu_i[c] or (ai == mu_i[c] and af > mu_f[c]):
                        best[c], mu_i[c], mu_f[c] = a, ai, af
                z = sib[z]
            n_in[c] = used - at[c]
            if best[c] < 0:
                return False
            z = kid[c]
            if z < nn and sib[z] >= 0 and sib[z] < nn and sib[sib[z]] < 0:     # two variables, a cycle of their own
                for i in range(min(inner, 2)):
                    pair_i[pairs[i]], pair_f[pairs[i]] = mu_i[c], mu_f[c]
            path[depth] = c
            depth += 1
            mark[c] = 1
            x = c
    # the reduced weights of the arcs still between two nodes, against their top node's heaviest
    for v in range(1, nn):
        top = _find(uf, v)
        for j in range(start[v], start[v + 1]):
            a = arcs_in[j]
            if not internal[a]:
                rc_i[a] = mu_i[top] - (wi[a] - sub_i[v])
                rc_f[a] = mu_f[top] - (wf[a] - sub_f[v])
    # unfold from the top nodes
    chosen[:] = -1
    stack_node = np.empty(big, dtype=np.int64)
    stack_arc = np.empty(big, dtype=np.int64)
    top_n = 0
    for x in range(1, made):
        if up[x] < 0:
            stack_node[top_n], stack_arc[top_n] = x, best[x]
            top_n += 1
    while top_n > 0:
        top_n -= 1
        x, a = stack_node[top_n], stack_arc[top_n]
        if x < nn:
            chosen[x] = a
            continue
        y = head[a]                              # the member of x that a enters
        while up[y] != x:
            y = up[y]
        z = kid[x]
        while z >= 0:
            stack_node[top_n], stack_arc[top_n] = z, (a if z == y else best[z])
            top_n += 1
            z = sib[z]
    return True


@njit(cache=True)
def _best_part(state: np.ndarray, item: np.ndarray, required: np.ndarray, tail: np.ndarray, head: np.ndarray,
               w: np.ndarray, nn: int, classes: bool, chosen: np.ndarray, rc_i: np.ndarray,
               rc_f: np.ndarray, pair_i: np.ndarray, pair_f: np.ndarray) -> tuple[bool, float]:
    """The best arborescence of a part (``state`` per item: edges for ``classes``, else arcs; ``item[a]``: arc
    a's edge, −1 for a root arc) and its weight, with each arc's reduced weight (:func:`_arborescence`); False
    where the part holds none. An included edge, or an arc of a required edge, weighs 1 in the first place of the
    weights, so the arborescence holds them all iff any does (every DAG of the part then weighs as many in the
    first place); an included arc is its head's only in-arc."""
    m = len(tail)
    alive = np.ones(m, dtype=np.bool_)
    wi = np.zeros(m, dtype=np.int64)
    need = 0
    if classes:
        for e in range(len(state)):
            if state[e] == IN:
                need += 1
        for a in range(m):
            if item[a] >= 0:
                if state[item[a]] == OUT:
                    alive[a] = False
                elif state[item[a]] == IN:
                    wi[a] = 1
    else:
        need = int(np.count_nonzero(required))
        forced = np.full(nn, -1, dtype=np.int64)
        for a in range(m):
            if state[a] == OUT:
                alive[a] = False
            elif state[a] == IN:
                forced[head[a]] = a
            if item[a] >= 0 and required[item[a]]:
                wi[a] = 1
        for a in range(m):
            if forced[head[a]] >= 0 and forced[head[a]] != a:
                alive[a] = False
    if not _arborescence(nn, tail, head, wi, w, alive, chosen, rc_i, rc_f, pair_i, pair_f):
        return False, 0.0
    total = 0.0
    got = 0
    for v in range(1, nn):
        total += w[chosen[v]]
        got += wi[chosen[v]]
    return got == need, total


@njit(cache=True)
def _items(chosen: np.ndarray, item: np.ndarray, n_items: int, classes: bool) -> np.ndarray:
    """The items of an arborescence ``chosen``: its skeleton's edges (``classes``) or its arcs."""
    mask = np.zeros(n_items, dtype=np.bool_)
    for v in range(1, len(chosen)):
        a = chosen[v]
        if not classes:
            mask[a] = True
        elif item[a] >= 0:
            mask[item[a]] = True
    return mask


@njit(cache=True)
def _missing_parts(state: np.ndarray, mask: np.ndarray, chosen: np.ndarray, item: np.ndarray, by_head: np.ndarray,
                   head_start: np.ndarray, rc_i: np.ndarray, rc_f: np.ndarray, pair_i: np.ndarray,
                   pair_f: np.ndarray, weight: float, classes: bool, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The parts lacking a free item of the best solution ``mask`` (module docstring: e_1 … e_{i−1} included,
    e_i excluded), with an upper bound on each one's best that is at least ``floor``: their items e_i and bounds.

    Lacking e_i, a DAG T of the part gives the head v of S's arc on e_i another in-arc b (not an arc of e_i nor an
    excluded one), so W(T) ≤ W(S) − rc(b) (:func:`_arborescence`'s bound; T weighs as many in the first place as
    S, so b has rc_i(b) = 0): the bound is W(S) less the least such rc_f(b); a part with no such b is empty. For
    classes, where e_i's two variables were contracted as a cycle of their own, T holds neither arc between them
    and enters the pair twice: the pair's μ (``pair_f``, ≤ 0) is added (a part is empty where that costs the first
    place). ``by_head``/``head_start``: the arcs grouped by head node; ``chosen``: S's arc into each node."""
    items = []
    bounds = []
    for v in range(1, len(chosen)):
        a = chosen[v]
        e = a if not classes else item[a]
        if e < 0 or not mask[e] or state[e] != FREE:
            continue
        extra = 0.0
        if classes:
            if pair_i[a] < 0:
                continue
            extra = pair_f[a]
        least = np.inf
        for j in range(head_start[v], head_start[v + 1]):
            b = by_head[j]
            if b == a or rc_i[b] != 0:
                continue
            eb = b if not classes else item[b]
            if eb >= 0 and (eb == e or state[eb] == OUT):
                continue
            least = min(least, rc_f[b])
        if least < np.inf and weight - least + extra >= floor:
            items.append(e)
            bounds.append(weight - least + extra)
    return np.array(items, dtype=np.int64), np.array(bounds, dtype=np.float64)


@njit(cache=True)
def _rootable(mask: np.ndarray, eu: np.ndarray, ev: np.ndarray, has_uv: np.ndarray, has_vu: np.ndarray,
              n: int) -> np.ndarray:
    """Per variable x, whether x's tree in the forest ``mask`` can be rooted at x with arcs of the table
    (every edge pointed away from x held that way): the number of edges pointing the wrong way, counted from
    one root of each tree and moved along each edge (rerooting), is 0."""
    deg, nbr, edge_of = adjacency(mask, eu, ev, n)
    down = np.empty(deg[n], dtype=np.bool_)     # the table holds the arc from this end to the neighbour
    up = np.empty(deg[n], dtype=np.bool_)       # and the one back
    for x in range(n):
        for j in range(deg[x], deg[x + 1]):
            e = edge_of[j]
            down[j], up[j] = (has_uv[e], has_vu[e]) if x == eu[e] else (has_vu[e], has_uv[e])
    bad = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    via = np.full(n, -1, dtype=np.int64)
    par = np.full(n, -1, dtype=np.int64)
    for r in range(n):
        if bad[r] >= 0:
            continue
        # the tree from r in order of visit; via[b]: the slot of b in its parent's list (that edge's arcs)
        order[0] = r
        bad[r] = 0
        size = 1
        i = 0
        count = 0
        while i < size:
            a = order[i]
            i += 1
            for j in range(deg[a], deg[a + 1]):
                b = nbr[j]
                if bad[b] < 0 and b != r:
                    bad[b] = 0
                    via[b] = j
                    par[b] = a
                    order[size] = b
                    size += 1
                    if not down[j]:
                        count += 1
        bad[r] = count
        for i in range(1, size):
            b = order[i]
            j = via[b]
            bad[b] = bad[par[b]] - (0 if down[j] else 1) + (0 if up[j] else 1)
    return bad == 0


@njit(cache=True)
def _next_class_extra(state: np.ndarray, roots: np.ndarray, rootable: np.ndarray, eu: np.ndarray, ev: np.ndarray,
                      has_uv: np.ndarray, has_vu: np.ndarray, after: int) -> int:
    """The first free edge past ``after`` joining two trees of the best forest (``roots``) that keeps it admitted
    (module docstring); −1 when there is none."""
    for e in range(after + 1, len(state)):
        if state[e] == FREE and roots[eu[e]] != roots[ev[e]] and (
                (has_uv[e] and rootable[ev[e]]) or (has_vu[e] and rootable[eu[e]])):
            return e
    return -1


@dataclass
class _Solved:
    """A part's best arborescence: its weight, each node's arc and every arc's reduced weight."""

    weight: float
    chosen: np.ndarray
    rc_i: np.ndarray
    rc_f: np.ndarray
    pair_i: np.ndarray
    pair_f: np.ndarray


MISSING, EXTRA, WEIGHED = 0, 1, 2


class BranchingLister:
    """The DAGs (``classes`` False) or the admitted classes (``classes`` True) of a one-parent table
    (:func:`branching_arcs`) whose weight — score less ``arcs.base_score`` — is at least ``floor``, heaviest
    first (module docstring): :meth:`next_solution` gives the next one's weight and a DAG of it (a family index
    per variable), None when there is none left. OPT is the first one's.

    A part enters the heap with an upper bound on its best (:func:`_missing_parts`; an extra edge's part, W + w(f))
    and is solved only when the heap reaches it: where its best is still the heaviest in the heap it is listed,
    else it waits under its exact weight (its state kept in bits) — so a part whose bound falls below the floor,
    or below the cap's last class, costs no arborescence."""

    def __init__(self, arcs: BranchingArcs, classes: bool, floor: float):
        self.arcs, self.classes, self.floor = arcs, classes, floor
        self.parts = 0
        #: arborescences solved
        self.solved = 0
        self._nn = arcs.n + 1
        self._tail = arcs.tail + 1          # the root is node 0, variable v node v + 1
        self._head = arcs.head + 1
        self._by_head = np.argsort(self._head, kind="stable")
        self._head_start = np.searchsorted(self._head[self._by_head], np.arange(self._nn + 1))
        self._m = len(arcs.ew) if classes else len(arcs.tail)
        self._listed: list[_Part] = []
        #: (−key, order made, listed part (−1: the whole space), MISSING / EXTRA / WEIGHED, k)
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._waiting: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._made = 0
        self._push(np.inf, -1, MISSING, -1)

    @property
    def done(self) -> bool:
        return not self._heap

    def _root_state(self) -> np.ndarray:
        state = np.zeros(self._m, dtype=np.int8)
        if self.classes:
            state[self.arcs.required] = IN
        return state

    def _solve(self, state: np.ndarray) -> _Solved | None:
        a = self.arcs
        chosen = np.full(self._nn, -1, dtype=np.int64)
        rc_i, pair_i = np.empty(len(a.tail), dtype=np.int64), np.empty(len(a.tail), dtype=np.int64)
        rc_f, pair_f = np.empty(len(a.tail)), np.empty(len(a.tail))
        self.solved += 1
        ok, weight = _best_part(state, a.edge, a.required, self._tail, self._head, a.w, self._nn, self.classes,
                                chosen, rc_i, rc_f, pair_i, pair_f)
        return _Solved(weight, chosen, rc_i, rc_f, pair_i, pair_f) if ok else None

    def _push(self, key: float, part: int, kind: int, k: int) -> int:
        self._made += 1
        self.parts += 1
        heapq.heappush(self._heap, (-key, self._made, part, kind, k))
        return self._made

    def _push_missing(self, index: int) -> None:
        part = self._listed[index]
        k = part.next_missing
        if k < len(part.missing):
            part.next_missing += 1
            self._push(float(part.missing_weights[k]), index, MISSING, k)

    def _push_extra(self, index: int, state: np.ndarray, best: np.ndarray) -> None:
        a = self.arcs
        part = self._listed[index]
        roots = _components(best, a.eu, a.ev, a.n)
        rootable = _rootable(best, a.eu, a.ev, a.has_uv, a.has_vu, a.n)
        nxt = _next_class_extra(state, roots, rootable, a.eu, a.ev, a.has_uv, a.has_vu, part.last_extra)
        if nxt >= 0 and part.weight + a.ew[nxt] >= self.floor:
            part.last_extra = nxt
            self._push(part.weight + float(a.ew[nxt]), index, EXTRA, nxt)

    def _unpack(self, included: np.ndarray, excluded: np.ndarray) -> np.ndarray:
        m = self._m
        return (np.unpackbits(included, count=m).astype(np.int8) * IN
                + np.unpackbits(excluded, count=m).astype(np.int8) * OUT)

    def _child(self, parent: int, kind: int, k: int) -> np.ndarray:
        """The state of a part the heap reached, its parent's next sibling handed out."""
        a = self.arcs
        if parent < 0:
            return self._root_state()
        part = self._listed[parent]
        parent_state = self._unpack(part.included, part.excluded)
        parent_best = np.unpackbits(part.best, count=self._m).astype(np.bool_)
        if kind == MISSING:
            self._push_missing(parent)
            return _missing_state(parent_state, parent_best, int(part.missing[k]))
        self._push_extra(parent, parent_state, parent_best)
        return _extra_state(parent_state, parent_best, _components(parent_best, a.eu, a.ev, a.n), k, a.eu, a.ev)

    def next_solution(self) -> tuple[float, np.ndarray] | None:
        a = self.arcs
        while self._heap:
            _, made, parent, kind, k = heapq.heappop(self._heap)
            if kind == WEIGHED:
                state = self._unpack(*self._waiting.pop(made))
            else:
                state = self._child(parent, kind, k)
            got = self._solve(state)
            if got is None or got.weight < self.floor:
                continue
            if kind != WEIGHED and self._heap and got.weight < -self._heap[0][0]:
                # not the heaviest any more: wait under its exact weight
                key = self._push(got.weight, parent, WEIGHED, -1)
                self._waiting[key] = (np.packbits(state == IN), np.packbits(state == OUT))
                continue
            mask = _items(got.chosen, a.edge, self._m, self.classes)
            missing, bounds = _missing_parts(state, mask, got.chosen, a.edge, self._by_head, self._head_start,
                                             got.rc_i, got.rc_f, got.pair_i, got.pair_f, got.weight, self.classes,
                                             self.floor)
            order = np.lexsort((missing, -bounds))
            self._listed.append(_Part(np.packbits(state == IN), np.packbits(state == OUT), np.packbits(mask),
                                      got.weight, missing[order], bounds[order]))
            here = len(self._listed) - 1
            self._push_missing(here)
            if self.classes:
                self._push_extra(here, state, mask)
            return got.weight, a.fam[got.chosen[1:]]
        return None


def best_branching(arcs: BranchingArcs) -> tuple[float, np.ndarray] | None:
    """The best DAG of a one-parent table, the maximum spanning arborescence holding the required edges: its
    weight (score less ``arcs.base_score``) and family index per variable; None where the table has no DAG."""
    state = np.zeros(len(arcs.ew), dtype=np.int8)
    state[arcs.required] = IN
    chosen = np.full(arcs.n + 1, -1, dtype=np.int64)
    rc_i, pair_i = np.empty(len(arcs.tail), dtype=np.int64), np.empty(len(arcs.tail), dtype=np.int64)
    rc_f, pair_f = np.empty(len(arcs.tail)), np.empty(len(arcs.tail))
    ok, weight = _best_part(state, arcs.edge, arcs.required, arcs.tail + 1, arcs.head + 1, arcs.w, arcs.n + 1, True,
                            chosen, rc_i, rc_f, pair_i, pair_f)
    return (weight, arcs.fam[chosen[1:]]) if ok else None
